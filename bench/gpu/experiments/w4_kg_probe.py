#!/usr/bin/env python3
"""Issue 24, session 19: what each part of the W4A16 K-group kernel costs, on the default
kernel of the interleaved packing (`laycert gen gemm --weights int4 ...`: nibble pairs over k
in order). Timing only: every mode but `none` computes wrong products on purpose (w4a16.py
reports them WRONG; the unmodified kernel is checked beside them).

Usage: python3 w4_kg_probe.py EMITTED.cu OUT.cu MODE[+MODE...]
  none      the kernel unchanged (a control built by the same script)
  nodq      B register = W word + piece (no lop3, sub/fma or mul)
  nomul     the dequantization without the scale's mul.f16x2
  nomma     the mma.sync replaced by one XOR into d0
  noA       no cp.async of A (the ring's waits and barriers kept)
  nobar     no named barrier per superblock (each thread waits for its own copies only)
  noreduce  no K-warp reduction: each K-warp 0 thread stores its accumulators as C
  wonly     noA + nobar + nodq + nomma
  noscale   the scale is 1.0 (no scale loads; the mul kept)
  keepload  with nomul: the scale loads kept alive (an empty asm reads them)
  addr      CORRECT: fewer address instructions per superblock: A's chunks from one pointer
            (the other chunks of a thread are whole rows further: immediate offsets) and 4
            shared offsets kept in registers; W's 4 vectors and their scales from vector 0's
            pointers (the rows 32 apart: constant offsets); the scale duplicated by the
            HMUL2's .H0_H0 operand (mov.b32 {s, s}) instead of shift + or
  ssmem     CORRECT: the scales from shared memory: each K-group copies its 8 groups' scales
            of the tile's 128 rows by cp.async with its first A superblock, and each superblock
            reads its 4 (ld.shared.u16) after the group barrier, instead of 4 global 2-byte
            loads per superblock issued with W (group 128, 8 superblocks per K-warp)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sm80_probe import replace_function, resolve_dq  # noqa: E402

src, dst, mode = sys.argv[1:4]
t = open(src).read()
assert "#define LC_KGROUP 1\n" in t, "a K-group kernel"
t = resolve_dq(t)
modes = set(mode.split("+"))
if "wonly" in modes:
    modes |= {"noA", "nobar", "nodq", "nomma"}
assert modes <= {"none", "nodq", "nomul", "nomma", "noA", "nobar", "noreduce", "wonly", "noscale",
                 "keepload", "ssmem", "addr"}, mode


def sub(old, new):
    global t
    assert old in t, old
    t = t.replace(old, new, 1)


if "nodq" in modes:
    t = replace_function(t, "__device__ __forceinline__ unsigned lc_dq(",
                         "__device__ __forceinline__ unsigned lc_dq(unsigned word, unsigned sh, int p, unsigned s2) {\n"
                         "    return word + (unsigned)p;  // PROBE: no dequantization\n}\n")
elif "nomul" in modes:
    sub('    asm("mul.rn.f16x2 %0, %1, %2;" : "=r"(r) : "r"(r), "r"(s2));\n', "")
if "nomma" in modes:
    t = replace_function(t, "__device__ __forceinline__ void lc_mma(",
                         "__device__ __forceinline__ void lc_mma(float& d0, float& d1, float& d2, float& d3, unsigned a0,\n"
                         "    unsigned a1, unsigned a2, unsigned a3, unsigned b0, unsigned b1) {\n"
                         "    d0 = __int_as_float(__float_as_int(d0) ^ a0 ^ b0 ^ b1);  // PROBE: no mma\n}\n")
if "noA" in modes:
    sub("                    lc_cp_async16(slot + 2u * (unsigned)lc_swz_a(LC_A_SLIN(r, k)),",
        "                    if (0) lc_cp_async16(slot + 2u * (unsigned)lc_swz_a(LC_A_SLIN(r, k)),")
if "nobar" in modes:
    sub("""                if (LC_GROUP_THREADS == 32)
                    __syncwarp();
                else
                    lc_named_barrier(1 + w, LC_GROUP_THREADS);""", "                __syncwarp();")
if "noreduce" in modes:
    i = t.index("    // The K-warps' partials in shared memory (over the rings), summed in K-warp order.")
    j = t.index("    (void)ws;\n    (void)counters;\n}", i)
    t = t[:i] + """    // PROBE: no reduction; K-warp 0 stores its own partial as C.
    if (w == 0) {
#pragma unroll
        for (int v = 0; v < LC_ACC; v += 2) {
            const int r = LC_C_ROW(tc, v);
            const long long c = (long long)n0 + LC_C_COL(tc, v);
            if (LC_C_GUARD(r, c)) lc_store_c2(C, LC_C_GOFF(r, c), acc[v], acc[v + 1]);
        }
    }
""" + t[j:]
if "noscale" in modes:
    sub("        sv[j] = p.s[j][LC_S_GOFF(0, g)];", "        sv[j] = 0x3C00u;  // PROBE: scale 1.0")
if "keepload" in modes:
    sub("    unsigned af[LC_A_GROUPS][4];\n    LC_W4_SCHEDULE",
        "    unsigned af[LC_A_GROUPS][4];\n#pragma unroll\n    for (int j = 0; j < LC_WV; ++j) asm volatile(\"\" ::\"r\"(sv[j]));\n    LC_W4_SCHEDULE")
if "addr" in modes:
    import re
    assert "#define LC_K 8192\n" in t and "#define LC_N 8192\n" in t
    assert "(((j) * 32) / 32) * 32)" in t  # vector j is 32 rows further
    sub("        wv[j] = lc_ldg_stream(p.w[j] + sb * LC_W_SB_WORDS);",
        "        wv[j] = lc_ldg_stream(p.w[0] + sb * LC_W_SB_WORDS + j * (32 / 8 * LC_K));  // PROBE")
    sub("        sv[j] = p.s[j][LC_S_GOFF(0, g)];", "        sv[j] = p.s[0][LC_S_GOFF(0, g) + j * 32 * (LC_K / LC_GROUP)];  // PROBE")
    sub("        sv[j] = s1[j] | (s1[j] << 16);",
        '        asm("mov.b32 %0, {%1, %1};" : "=r"(sv[j]) : "h"((unsigned short)s1[j]));  // PROBE')
    old = t[t.index("    // A in k order: chunks 0 .. 16 M - 1 (the rows < M)."):t.index("    auto interleave = [&](int) {};")]
    t = t.replace(old, """    // PROBE: A in k order from one pointer (chunk i of this thread is i * GT / 16 rows further)
    static_assert(LC_GROUP_THREADS % 16 == 0, "");
    constexpr int LC_AI = (LC_M * 16 + LC_GROUP_THREADS - 1) / LC_GROUP_THREADS;
    const lc_elem* a_src = A + LC_A_GOFF((long long)LC_KG_A_ROW(p), (long long)(k0 + LC_KG_A_K(p)));
    unsigned a_dst[LC_AI];
#pragma unroll
    for (int i = 0; i < LC_AI; ++i) {
        const int c = i * LC_GROUP_THREADS + p;
        a_dst[i] = 2u * (unsigned)lc_swz_a(LC_A_SLIN(LC_KG_A_ROW(c), LC_KG_A_K(c)));
    }
    auto stage = [&](int sb) {
        if (sb < LC_SB) {
            const unsigned slot = ring + (unsigned)(sb % LC_A_SLOTS) * LC_A_SB_BYTES;
#pragma unroll
            for (int i = 0; i < LC_AI; ++i)
                if (i * LC_GROUP_THREADS + p < LC_M * 16)
                    lc_cp_async16(slot + a_dst[i], a_src + sb * 128 + (long long)(i * LC_GROUP_THREADS / 16) * LC_K, 16u);
        }
        lc_cp_commit();
    };
""")
if "ssmem" in modes:
    assert "#define LC_GROUP 128\n" in t and "#define LC_SB 8\n" in t
    import re
    smem = int(re.search(r"#define LC_SMEM_BYTES (\d+)", t).group(1))
    t = t.replace(f"#define LC_SMEM_BYTES {smem}\n", f"#define LC_SMEM_BYTES {smem + 16384}\n", 1)
    sub("        sv[j] = p.s[j][LC_S_GOFF(0, g)];", "        (void)g;  // PROBE: scales from shared memory")
    sub("""#pragma unroll
    for (int s = 0; s + 1 < LC_A_SLOTS; ++s) stage(s);""", """    // PROBE: this K-group's scales (groups 8 w .. 8 w + 7 of the tile's rows) into shared
    // memory, with the first A superblock's copies (the same commit group).
    const unsigned lc_sc = base + (unsigned)(LC_KWARPS * LC_A_SLOTS) * LC_A_SB_BYTES + (unsigned)w * (LC_BN * 16);
    for (int c = p; c < LC_BN; c += LC_GROUP_THREADS)
        lc_cp_async16(lc_sc + 16u * (unsigned)c, S + LC_S_GOFF((long long)(n0 + c), (long long)(8 * w)), 16u);
#pragma unroll
    for (int s = 0; s + 1 < LC_A_SLOTS; ++s) stage(s);""")
    sub("""                lc_superblock(wb[i], sb_s[i], ring""", """                unsigned lc_s1[LC_WV];
#pragma unroll
                for (int j = 0; j < LC_WV; ++j) {
                    unsigned short h;
                    asm volatile("ld.shared.u16 %0, [%1];" : "=h"(h) : "r"(lc_sc + 16u * (unsigned)LC_S_N(tc, j) + 2u * (unsigned)sb));
                    lc_s1[j] = h;
                }
                lc_superblock(wb[i], lc_s1, ring""")
open(dst, "w").write(t)
print(f"wrote {dst} ({mode})")
