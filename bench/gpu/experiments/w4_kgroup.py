#!/usr/bin/env python3
"""Issue 24, session 16 probe: the K-group W4A16 kernel with A permuted in registers.

Usage: python3 w4_kgroup.py EMITTED.cu OUT.cu [aperm|regstage|direct|direct_all]
EMITTED is a K-group kernel with nibble pairs (`laycert gen gemm --weights int4 ... --kwarps K
--dequant pairs`). Correct products (w4a16.py checks them), not validated by codegen: probes.
  aperm (default): A staged in k order (the kernel's bytes staging), the fragments permuted after
    ldmatrix: the natural fragments of k-steps 2u and 2u + 1 become the mma's by prmt (low
    halves, high halves), 8 per two k-steps. Session 16 measured it no faster than bytes at
    M = 16 (bench/gpu/results/probes-2026-11-25-s16.txt, run 5).
  regstage: A's chunk pairs through registers instead of cp.async + the in-ring interleave:
    loaded (ld.global) one superblock ahead, interleaved by prmt and stored after the current
    superblock's mma, so shared memory sees only the stores.

Runs 1-5 of that file ran the K-group body as an experiment spliced after an emitted split-K
kernel (bench/gpu/experiments/w4_kgroup_body.cu at commit d20965a); the landed kernel with the
same shape is `laycert gen gemm --weights int4 --kwarps WK --cwarps WN --aslots SLOTS`
(the same instruction counts; 19.0-19.2 us against 19.1-19.3 at 16x8192x8192).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sm80_probe import resolve_dq  # noqa: E402

src, dst = sys.argv[1:3]
mode = sys.argv[3] if len(sys.argv) > 3 else "aperm"
t = open(src).read()


def sub(old, new):
    global t
    assert old in t, old
    t = t.replace(old, new, 1)


assert "#define LC_KGROUP 1\n" in t and "#define LC_DQ_PAIRS 1\n" in t, "a K-group kernel with --dequant pairs"
if mode == "regstage":
    t = resolve_dq(t)
    i = t.index("    // A in the mma's k order: a thread copies chunk pairs")
    j = t.index("#pragma unroll\n    for (int s = 0; s + 1 < LC_A_SLOTS; ++s) stage(s);", i)
    t = t[:i] + """    // PROBE (regstage): A's chunk pairs through registers, one superblock ahead.
    constexpr int RS_N = (LC_M * 8 + LC_GROUP_THREADS - 1) / LC_GROUP_THREADS;
    lc_v4 rs_lo[RS_N], rs_hi[RS_N];
    auto fetch = [&](int sb) {
        if (sb < LC_SB) {
#pragma unroll
            for (int i = 0; i < RS_N; ++i) {
                const int x = i * LC_GROUP_THREADS + p;
                if (x < LC_M * 8) {
                    const int r = LC_A_PR_ROW(x), k = LC_A_PR_K(x);
                    rs_lo[i] = lc_ldg_stream((const unsigned*)(A + LC_A_GOFF((long long)r, (long long)(k0 + sb * 128 + k))));
                    rs_hi[i] = lc_ldg_stream((const unsigned*)(A + LC_A_GOFF((long long)r, (long long)(k0 + sb * 128 + k + 16))));
                }
            }
        }
    };
    auto store = [&](int sb) {
        if (sb < LC_SB) {
            const unsigned slot = ring + (unsigned)(sb % LC_A_SLOTS) * LC_A_SB_BYTES;
#pragma unroll
            for (int i = 0; i < RS_N; ++i) {
                const int x = i * LC_GROUP_THREADS + p;
                if (x < LC_M * 8) {
                    const int r = LC_A_PR_ROW(x), k = LC_A_PR_K(x);
                    lc_st_shared_v4(slot + 2u * (unsigned)lc_swz_a(LC_A_SLIN(r, k)), lc_a_prmt(rs_lo[i], rs_hi[i], LC_A_PRMT_LO));
                    lc_st_shared_v4(slot + 2u * (unsigned)lc_swz_a(LC_A_SLIN(r, k + 16)), lc_a_prmt(rs_lo[i], rs_hi[i], LC_A_PRMT_HI));
                }
            }
        }
    };
    fetch(0);
    store(0);
""" + t[j + len("#pragma unroll\n    for (int s = 0; s + 1 < LC_A_SLOTS; ++s) stage(s);"):]
    sub("""                lc_cp_wait<LC_A_SLOTS - 2>();
                interleave(sb);
""", """                fetch(sb + 1);
""")
    sub("""                stage(sb + LC_A_SLOTS - 1);
                lc_superblock(wb[i], sb_s[i], ring + (unsigned)(sb % LC_A_SLOTS) * LC_A_SB_BYTES, a_lo, acc);
""", """                lc_superblock(wb[i], sb_s[i], ring + (unsigned)(sb % LC_A_SLOTS) * LC_A_SB_BYTES, a_lo, acc);
                store(sb + 1);
""")
    open(dst, "w").write(t)
    sys.exit(0)
if mode in ("direct", "direct_all"):
    # A's fragments straight from global memory (L1-cached 16-byte loads), no ring, no barrier:
    # lane (r = lane / 4, q = lane % 4) holds real k [32 q, 32 q + 32) of the superblock, k-step
    # g its k 4 g .. 4 g + 3 (a0/a1: words 2 g of rows r, r + 8; a2/a3: words 2 g + 1). Timing
    # only: the W words keep the TensorRT-LLM packing, so the products are WRONG (the packing that
    # makes it right puts k 2i, 2i + 1 at nibbles i, i + 4 of a word, Marlin's order).
    t = resolve_dq(t)
    sub("#define LC_LDSM_A(g) lc_ldsm_x4(af[g], sa + a_lo[g])",
        "__device__ __forceinline__ lc_v4 kg_lda(const lc_elem* p, bool ok) {\n"
        "    lc_v4 v = {0u, 0u, 0u, 0u};\n"
        "    if (ok) asm(\"ld.global.nc.v4.b32 {%0, %1, %2, %3}, [%4];\" : \"=r\"(v.x), \"=r\"(v.y), \"=r\"(v.z), \"=r\"(v.w) : \"l\"(p));\n"
        "    return v;\n}\n"
        "#define KG_LDA2(g) do { const lc_v4 lo = kg_lda(ap + (g) / 2 * 8, ok0), hi = kg_lda(ap + 8 * LC_K + (g) / 2 * 8, ok1); "
        "af[g][0] = lo.x; af[g][1] = hi.x; af[g][2] = lo.y; af[g][3] = hi.y; "
        "af[((g) + 1) % LC_A_GROUPS][0] = lo.z; af[((g) + 1) % LC_A_GROUPS][1] = hi.z; "
        "af[((g) + 1) % LC_A_GROUPS][2] = lo.w; af[((g) + 1) % LC_A_GROUPS][3] = hi.w; } while (0)\n"
        + ("#define LC_LDSM_A(g) do { if ((g) == 0) { KG_LDA2(0); KG_LDA2(2); KG_LDA2(4); KG_LDA2(6); } } while (0)"
           if mode == "direct_all" else
           "#define LC_LDSM_A(g) do { if ((g) % 2 == 0) KG_LDA2(g); } while (0)"))
    sub("unsigned sa, const unsigned (&a_lo)[LC_A_GROUPS],",
        "const lc_elem* ap, bool ok0, bool ok1, const unsigned (&a_lo)[LC_A_GROUPS],")
    sub("#pragma unroll\n    for (int s = 0; s + 1 < LC_A_SLOTS; ++s) stage(s);\n",
        "    const int kg_lane = t % 32;\n"
        "    const lc_elem* kg_ap = A + (long long)(kg_lane / 4) * LC_K + k0 + (kg_lane % 4) * 32;\n"
        "    const bool kg_ok0 = kg_lane / 4 < LC_M, kg_ok1 = kg_lane / 4 + 8 < LC_M;\n")
    sub("""                lc_cp_wait<LC_A_SLOTS - 2>();
                interleave(sb);
                if (LC_GROUP_THREADS == 32)
                    __syncwarp();
                else
                    lc_named_barrier(1 + w, LC_GROUP_THREADS);
                stage(sb + LC_A_SLOTS - 1);
                lc_superblock(wb[i], sb_s[i], ring + (unsigned)(sb % LC_A_SLOTS) * LC_A_SB_BYTES, a_lo, acc);
""", """                lc_superblock(wb[i], sb_s[i], kg_ap + sb * 128, kg_ok0, kg_ok1, a_lo, acc);
""")
    open(dst, "w").write(t)
    sys.exit(0)
sub("#define LC_LDSM_A(g) lc_ldsm_x4(af[g], sa + a_lo[g])",
    "__device__ __forceinline__ void kg_aperm(unsigned (&a)[4], unsigned (&b)[4]) {\n"
    "#pragma unroll\n    for (int i = 0; i < 4; ++i) {\n"
    "        const unsigned lo = __byte_perm(a[i], b[i], 0x5410u), hi = __byte_perm(a[i], b[i], 0x7632u);\n"
    "        a[i] = lo;\n        b[i] = hi;\n    }\n}\n"
    "// PROBE: A staged in k order; k-steps 2u and 2u + 1 permuted into the mma's order here.\n"
    "#define LC_LDSM_A(g) do { if ((g) % 2 == 0) { lc_ldsm_x4(af[g], sa + a_lo[g]); "
    "lc_ldsm_x4(af[(g) | 1], sa + a_lo[(g) | 1]); kg_aperm(af[g], af[(g) | 1]); } } while (0)")
sub("#if LC_DQ_PAIRS\n    // A in the mma's k order: a thread copies chunk pairs",
    "#if 0  // PROBE: the bytes staging (A in k order)\n    // A in the mma's k order: a thread copies chunk pairs")
open(dst, "w").write(t)
