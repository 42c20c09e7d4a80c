#!/usr/bin/env python3
"""Issue 24 experiments on the sm80 GEMM: variants of an EMITTED kernel, to find what limits it.
They are probes, not kernels laycert emits (their text is not translation-validated; `noload`
and `k0` compute wrong products on purpose), timed with bench/gpu/gemm.py next to cuBLAS.

  python3 sm80_probe.py KERNEL.cu OUT.cu noload   # no cp.async after the prologue: the ring's
                                                  # first stages are multiplied over and over
                                                  # (the in-SM ceiling of this mainloop)
  python3 sm80_probe.py KERNEL.cu OUT.cu k0       # every k-block loads k-block 0 (L2 hits, no DRAM)
  python3 sm80_probe.py KERNEL.cu OUT.cu nobarrier  # noload, and no cp.async wait or barrier in
                                                  # the k-loop
  python3 sm80_probe.py KERNEL.cu OUT.cu onestage # noload + nobarrier, every k-block reading stage 0
  python3 sm80_probe.py KERNEL.cu OUT.cu racy     # loads kept, the k-loop's __syncthreads removed
                                                  # (each thread waits for its own cp.async only):
                                                  # the speed of a pipeline without CTA barriers
  python3 sm80_probe.py KERNEL.cu OUT.cu advance  # CUTLASS's multistage order: the barrier and
                                                  # the next block's first fragments issued before
                                                  # the last k-step's mma
  python3 sm80_probe.py KERNEL.cu OUT.cu tail     # the same, after the last k-step's mma
  python3 sm80_probe.py KERNEL.cu OUT.cu ws       # warp-specialized: one more warp issues every
                                                  # cp.async (playing the plan's 256 copy threads)
                                                  # into the ring with mbarrier completion; the 8
                                                  # multiplying warps wait per stage (sm_80 PTX:
                                                  # mbarrier.test_wait, cp.async.mbarrier.arrive)
  python3 sm80_probe.py KERNEL.cu OUT.cu spread     # (session 14) the same loads, spread: each ldmatrix
                                                  # that the schedule issues in a burst between two
                                                  # k-steps' mma goes one at a time between the mma of
                                                  # the k-step before (the first k-step's own groups
                                                  # stay ahead of it); combine with noload as
                                                  # "spread+noload"
  python3 sm80_probe.py KERNEL.cu OUT.cu ws4      # the same with a producer WARPGROUP (128 threads)
                                                  # and setmaxnreg (sm_90a): producers 40
                                                  # registers, multiplying warps 232
  python3 sm80_probe.py KERNEL.cu OUT.cu addr     # (session 17) full tiles: cp.async and ldmatrix
                                                  # addresses from one base per operand plus
                                                  # constants (no per-chunk guard or 64-bit address,
                                                  # no 32 ldmatrix offset registers); addr+ws4
  python3 sm80_probe.py KERNEL.cu OUT.cu cpspread   # (session 18) full tiles, pipelined: the
                                                  # next stage's cp.async chunks one at a time
                                                  # between the mma of the k-step that issued
                                                  # them in a burst (LC_NEXT_STAGE), the commit
                                                  # before LC_ADVANCE; cpspread2: over every mma
                                                  # before LC_ADVANCE
W4A16:
  python3 sm80_probe.py W4A16.cu OUT.cu smemring D  # W through a per-thread cp.async ring of D
                                                    # superblocks in shared memory (each thread
                                                    # reads back only what it copied: no barrier),
                                                    # D - 1 superblocks in flight without
                                                    # holding registers; scales in a register ring
  python3 sm80_probe.py W4A16.cu OUT.cu prefetch P  # prefetch.global.L2 of W superblock sb + P
  python3 sm80_probe.py W4A16.cu OUT.cu nomul       # dequantization without the scale's mul.f16x2
  python3 sm80_probe.py W4A16.cu OUT.cu noreduce    # each split stores its partial straight into C
                                                    # (no workspace, counter or final sum)
  python3 sm80_probe.py W4A16.cu OUT.cu noA         # no cp.async of A into shared memory (session 14)
  python3 sm80_probe.py W4A16.cu OUT.cu nodq        # B register = W word + byte index (no prmt, lop3,
                                                    # sub or mul: the dequantization's cost)
  python3 sm80_probe.py W4A16.cu OUT.cu nomma       # the mma.sync replaced by one XOR into d0 (the
                                                    # tensor pipe's cost)
  python3 sm80_probe.py W4A16.cu OUT.cu pairs       # TIMING ONLY: the dequantization of nibble pairs
                                                    # (i, i + 4) (one lop3 each, word >> 8 for i >= 2,
                                                    # an exact fma by 1/16 for odd i): 13 instructions
                                                    # per word instead of 17
  python3 sm80_probe.py W4A16.cu OUT.cu wonly       # noA + nodq + nomma: what is left is the W stream,
                                                    # the partial tile's store and the reduction
  python3 sm80_probe.py W4A16.cu OUT.cu relacq      # (session 15) the split counter as one
                                                    # atom.acq_rel.gpu instead of two membar.sc
                                                    # fences around atomicAdd (landed in the body)
  python3 sm80_probe.py W4A16.cu OUT.cu kwN         # (session 15) N warps per 32 columns over
                                                    # alternate superblocks, summed in shared
                                                    # memory (kw2+relacq, kw2+pairs, ...)
  python3 sm80_probe.py KERNEL.cu OUT.cu lean[A]    # (session 15, sm80) each k-step's ldmatrix
                                                    # just before its mma (A: after A mma of the
                                                    # k-step before); "+noload" as for spread
  The W4A16 probes edit the branch of the body's `#if LC_DQ_PAIRS` blocks the kernel compiles.
  python3 sm80_probe.py W4A16.cu OUT.cu scaleafter  # B = q exactly (no mul.f16x2), each
                                                    # superblock's mma into zeroed f32 registers,
                                                    # then acc += that * scale of the accumulator's
                                                    # column (group = 128 only). TIMING ONLY: its
                                                    # products fail the check (not debugged, as the
                                                    # time saved was 3%)
"""
import re
import sys

NEXT = "        if (nk < kblocks)"
LOAD = "lc_load_stage(A, B, base + (nk % LC_STAGES) * LC_STAGE_BYTES, m0, n0, nk * LC_BK, t)"


def schedule_lines(t):
    start = t.index("#define LC_SCHEDULE \\\n")
    end = t.index("    /* end of LC_SCHEDULE */")
    lines = [l.strip().rstrip("\\").strip() for l in t[start:end].splitlines()[1:]]
    return start, end, [l for l in lines if l]


def mma_runs(lines):
    """The schedule's k-steps: runs of consecutive LC_MMA lines, as lists of line indices."""
    steps, run = [], None
    for i, l in enumerate(lines):
        if l.startswith("LC_MMA"):
            if run is None:
                run = []
                steps.append(run)
            run.append(i)
        else:
            run = None
    return steps


def loads_of(mmas):
    """A predicate: is this line an LC_LDSM of a group one of these LC_MMA lines reads?"""
    ga = {int(re.findall(r"-?\d+", l)[1]) for l in mmas}
    gb = {int(re.findall(r"-?\d+", l)[3]) for l in mmas}

    def used(l):
        g = int(l[10:-2]) if l.startswith("LC_LDSM") else None
        return (l.startswith("LC_LDSM_A") and g in ga) or (l.startswith("LC_LDSM_B") and g in gb)

    return used


def multistage(t, before):
    start, end, lines = schedule_lines(t)
    steps = mma_runs(lines)
    step0 = loads_of([lines[i] for i in steps[0]])

    head = lines[: steps[0][0]]
    pre = [l for l in head if step0(l)]
    keep = [l for l in head if not step0(l)]
    rest = lines[steps[0][0]:]
    last = steps[-1][0] - steps[0][0]
    if before:
        # Only sound when the last k-step reads none of the groups `pre` reloads.
        body = keep + rest[:last] + ["LC_ADVANCE();"] + pre + rest[last:]
    else:
        body = keep + rest + ["LC_ADVANCE();"] + pre
    macro = lambda name, ls: f"#define {name} \\\n" + "".join(f"    {l} \\\n" for l in ls)
    t = t[:start] + macro("LC_PRELOAD", pre) + "    /* */\n" + macro("LC_SCHEDULE", body) + t[end:]
    loop = t[t.index("    for (int kb = 0; kb < kblocks; ++kb) {"):t.index("    lc_cp_wait<0>();\n    __syncthreads();\n\n    // Epilogue")]
    t = t.replace(loop, """    lc_cp_wait<LC_STAGES - 2>();
    __syncthreads();
    unsigned sa = base, sb = base + LC_A_STAGE_BYTES;
    LC_PRELOAD
    for (int kb = 0; kb < kblocks; ++kb) {
        const int nk = kb + LC_STAGES - 1;
        LC_SCHEDULE
    }
""")
    adv = ("#define LC_ADVANCE() do { lc_cp_wait<LC_STAGES - 2>(); __syncthreads(); "
           "sa = base + ((kb + 1) % LC_STAGES) * LC_STAGE_BYTES; sb = sa + LC_A_STAGE_BYTES; } while (0)\n")
    return t.replace("#define LC_LDSM_A(g)", adv + "#define LC_LDSM_A(g)", 1)


def prefetch(t, p):
    helper = """
__device__ __forceinline__ void lc_prefetch_w(const lc_wptr& p, int sb) {
#pragma unroll
    for (int j = 0; j < LC_WV; ++j)
        asm volatile("prefetch.global.L2 [%0];" ::"l"(p.w[j] + sb * LC_W_SB_WORDS));
}
"""
    t = t.replace("// The 16-byte W vectors and the group scales", helper + "// The 16-byte W vectors and the group scales", 1)
    first = """        if (i < LC_SB) lc_load_w(wp, wb[i], sb_s[i], k0, i);
"""
    t = t.replace(first, first + f"""#pragma unroll
    for (int i = LC_W_DEPTH - 1; i < {p}; ++i)
        if (i < LC_SB) lc_prefetch_w(wp, i);
""", 1)
    return t.replace("                if (next < LC_SB)\n", f"                if (sb + {p} < LC_SB) lc_prefetch_w(wp, sb + {p});\n                if (next < LC_SB)\n", 1)


def scale_after(t):
    assert "#define LC_GROUP 128\n" in t, "scaleafter: group 128 only (one scale per superblock)"
    rep = [
        ('    asm("mul.rn.f16x2 %0, %1, %2;" : "=r"(r) : "r"(r), "r"(s2));\n', ""),
        ("    const lc_elem* s[LC_WV];\n", "    const lc_elem* s[LC_ACC / 2];\n"),
        ("""        const long long ns = (long long)n0 + LC_S_N(t, j);
        p.s[j] = S + LC_S_GOFF(ns, 0);
    }""", """    }
#pragma unroll
    for (int u = 0; u < LC_ACC / 2; ++u)  // accumulator value v = u / 2 * 4 + u % 2 (and v + 2)
        p.s[u] = S + LC_S_GOFF((long long)n0 + LC_C_COL(t, u / 2 * 4 + u % 2), 0);"""),
        ("unsigned (&sv)[LC_WV], int k0, int sb)", "unsigned (&sv)[LC_ACC / 2], int k0, int sb)"),
        ("        sv[j] = p.s[j][LC_S_GOFF(0, g)];\n    }", """    }
#pragma unroll
    for (int u = 0; u < LC_ACC / 2; ++u) sv[u] = p.s[u][LC_S_GOFF(0, g)];"""),
        ("const unsigned (&s1)[LC_WV],\n", "const unsigned (&s1)[LC_ACC / 2],\n"),
        ("                                              float (&acc)[LC_ACC]) {\n    unsigned sv[LC_WV];",
         "                                              float (&out)[LC_ACC]) {\n    const unsigned sv[LC_WV] = {};"),
        ("        sv[j] = s1[j] | (s1[j] << 16);\n", ""),
        ("""    unsigned af[LC_A_GROUPS][4];
    LC_W4_SCHEDULE
}""", """    unsigned af[LC_A_GROUPS][4];
    float acc[LC_ACC];
#pragma unroll
    for (int v = 0; v < LC_ACC; ++v) acc[v] = 0.0f;
    LC_W4_SCHEDULE
#pragma unroll
    for (int v = 0; v < LC_ACC; ++v) {
        const unsigned short h = (unsigned short)s1[v / 4 * 2 + v % 2];
        float s;
        asm("cvt.f32.f16 %0, %1;" : "=f"(s) : "h"(h));
        out[v] = fmaf(acc[v], s, out[v]);
    }
}"""),
        ("    unsigned sb_s[LC_W_DEPTH][LC_WV];", "    unsigned sb_s[LC_W_DEPTH][LC_ACC / 2];"),
    ]
    for a, b in rep:
        assert a in t, a
        t = t.replace(a, b, 1)
    return t


SMEMRING = """    // PROBE smemring: W through a per-thread cp.async ring of @RD@ superblocks in shared memory.
    const lc_wptr wp = lc_w_bases(W, S, n0, k0, t);
    const unsigned ring = base + LC_SB * LC_A_SB_BYTES;
    for (int sb = 0; sb < LC_SB; ++sb) {
#pragma unroll
        for (int j = 0; j < LC_A_CHUNKS; ++j) {
            const int r = LC_A_CP_ROW(t, j);
            const int k = LC_A_CP_K(t, j);
            const long long gr = r;
            const int gk = k0 + sb * 128 + k;
            const bool in = LC_A_GUARD(gr, gk);
            const lc_elem* src = in ? A + LC_A_GOFF(gr, gk) : A;
            lc_cp_async16(base + sb * LC_A_SB_BYTES + 2u * (unsigned)lc_swz_a(LC_A_SLIN(r, k)), src,
                          in ? 16u : 0u);
        }
    }
    lc_cp_commit();
    unsigned sring[@RD@][LC_WV];
#pragma unroll
    for (int i = 0; i + 1 < @RD@; ++i) {
        if (i < LC_SB) lc_ring_w(wp, ring, i, k0, i, t, sring[i]);
        lc_cp_commit();
    }
    unsigned a_lo[LC_A_GROUPS];
#pragma unroll
    for (int g = 0; g < LC_A_GROUPS; ++g) {
        const int r = LC_A_LDSM_ROW(t, g);
        const int k = LC_A_LDSM_K(t, g);
        a_lo[g] = 2u * (unsigned)lc_swz_a(LC_A_SLIN(r, k));
    }
    float acc[LC_ACC];
#pragma unroll
    for (int i = 0; i < LC_ACC; ++i) acc[i] = 0.0f;
    lc_cp_wait<@RD@ - 1>();
    __syncthreads();
#pragma unroll 1
    for (int sb0 = 0; sb0 < LC_SB; sb0 += @RD@) {
#pragma unroll
        for (int i = 0; i < @RD@; ++i) {
            const int sb = sb0 + i;
            if (sb < LC_SB) {
                const int next = sb + @RD@ - 1;
                if (next < LC_SB) lc_ring_w(wp, ring, (i + @RD@ - 1) % @RD@, k0, next, t, sring[(i + @RD@ - 1) % @RD@]);
                lc_cp_commit();
                lc_cp_wait<@RD@ - 1>();
                lc_v4 wv[LC_WV];
#pragma unroll
                for (int j = 0; j < LC_WV; ++j)
                    wv[j] = lc_ring_ld(ring + 16u * (unsigned)((i * LC_WV + j) * LC_THREADS + t));
                lc_superblock(wv, sring[i], base + sb * LC_A_SB_BYTES, a_lo, acc);
            }
        }
    }

"""

RING_HELPERS = """
// PROBE smemring helpers: W vectors of superblock sb into ring slot `slot` (thread-private),
// its scales into registers.
__device__ __forceinline__ void lc_ring_w(const lc_wptr& p, unsigned ring, int slot, int k0, int sb,
                                          int t, unsigned (&sv)[LC_WV]) {
    const int g = (k0 + sb * 128) / LC_GROUP;
#pragma unroll
    for (int j = 0; j < LC_WV; ++j) {
        lc_cp_async16(ring + 16u * (unsigned)((slot * LC_WV + j) * LC_THREADS + t),
                      p.w[j] + sb * LC_W_SB_WORDS, 16u);
        sv[j] = p.s[j][LC_S_GOFF(0, g)];
    }
}
__device__ __forceinline__ lc_v4 lc_ring_ld(unsigned addr) {
    lc_v4 v;
    asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "r"(addr)
                 : "memory");
    return v;
}
"""


def smemring(t, d):
    i = t.index("    // The weight stream starts first")
    j = t.index("#if LC_CLUSTER_REDUCE\n    // This split's partial tile")
    t = t[:i] + SMEMRING.replace("@RD@", str(d)) + t[j:]
    m = re.search(r"#define LC_SMEM_BYTES (\d+)\n", t)
    extra = d * int(re.search(r"#define LC_WV (\d+)", t).group(1)) * int(re.search(r"#define LC_THREADS (\d+)", t).group(1)) * 16
    t = t.replace(m.group(0), f"#define LC_SMEM_BYTES {int(m.group(1)) + extra}\n", 1)
    k = t.index("// One superblock: the plan's schedule")
    return t[:k] + RING_HELPERS + t[k:]


WS_HELPERS = r"""
__device__ __forceinline__ void lc_mb_init(unsigned a, unsigned n) {
    asm volatile("mbarrier.init.shared.b64 [%0], %1;" ::"r"(a), "r"(n) : "memory");
}
__device__ __forceinline__ void lc_mb_wait(unsigned a, unsigned parity) {
    asm volatile("{\n.reg .pred P1;\nLAB_WAIT:\n"
                 "mbarrier.test_wait.parity.shared.b64 P1, [%0], %1;\n"
                 "@!P1 bra LAB_WAIT;\n}\n" ::"r"(a), "r"(parity) : "memory");
}
__device__ __forceinline__ void lc_mb_arrive(unsigned a) {
    unsigned long long state;
    asm volatile("mbarrier.arrive.shared.b64 %0, [%1];" : "=l"(state) : "r"(a) : "memory");
    (void)state;
}
__device__ __forceinline__ void lc_cp_arrive(unsigned a) {
    asm volatile("cp.async.mbarrier.arrive.noinc.shared.b64 [%0];" ::"r"(a) : "memory");
}
"""


def warp_specialized(t, producers=32):
    head = ("extern \"C\" __global__ void __maxnreg__(224)" if producers == 32
            else "extern \"C\" __global__ void __launch_bounds__(LC_THREADS + 128, 1)")
    rep = [
        ("extern \"C\" __global__ void __launch_bounds__(LC_THREADS, 1)", WS_HELPERS + head),
        ("laycert_gemm<<<LC_GRID, LC_THREADS, LC_SMEM_BYTES",
         f"laycert_gemm<<<LC_GRID, LC_THREADS + {producers}, LC_SMEM_BYTES"),
    ]
    for a, b in rep:
        assert a in t, a
        t = t.replace(a, b, 1)
    # the mainloop: from the prologue's first cp.async to the epilogue's barrier
    i = t.index("#pragma unroll\n    for (int s = 0; s < LC_STAGES - 1; ++s) {")
    j = t.index("    lc_cp_wait<0>();\n    __syncthreads();\n\n    // Epilogue")
    loop = """    __shared__ __align__(8) unsigned long long lc_full[LC_STAGES], lc_empty[LC_STAGES];
    const unsigned full0 = lc_smem_addr(lc_full), empty0 = lc_smem_addr(lc_empty);
    if (t == 0)
        for (int s = 0; s < LC_STAGES; ++s) {
            lc_mb_init(full0 + 8 * s, PRODUCERS);
            lc_mb_init(empty0 + 8 * s, LC_THREADS / 32);
        }
    __syncthreads();
    SETMAXNREG
    if (t >= LC_THREADS) {
        // The producer warp(s): every cp.async of every k-block, as the plan's LC_THREADS threads.
        const int lane = t - LC_THREADS;
        for (int kb = 0; kb < kblocks; ++kb) {
            const int s = kb % LC_STAGES;
            if (kb >= LC_STAGES) lc_mb_wait(empty0 + 8 * s, (kb / LC_STAGES - 1) & 1);
            for (int vt = lane; vt < LC_THREADS; vt += PRODUCERS)
                lc_load_stage(A, B, base + s * LC_STAGE_BYTES, m0, n0, kb * LC_BK, vt);
            lc_cp_arrive(full0 + 8 * s);
        }
        lc_cp_wait<0>();
        return;
    }
    for (int kb = 0; kb < kblocks; ++kb) {
        const int s = kb % LC_STAGES;
        lc_mb_wait(full0 + 8 * s, (kb / LC_STAGES) & 1);
        const unsigned sa = base + s * LC_STAGE_BYTES;
        const unsigned sb = sa + LC_A_STAGE_BYTES;
        LC_SCHEDULE
        __syncwarp();
        if (t % 32 == 0) lc_mb_arrive(empty0 + 8 * s);
    }
    asm volatile("bar.sync 1, %0;" ::"n"(LC_THREADS) : "memory");
"""
    smr = ("" if producers == 32 else
           """if (t >= LC_THREADS) asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
    else asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");""")
    loop = loop.replace("PRODUCERS", str(producers)).replace("SETMAXNREG", smr)
    t = t[:i] + loop + t[j + len("    lc_cp_wait<0>();\n    __syncthreads();\n"):]
    # the epilogue's remaining barrier: the consumers only
    k = t.index("    // Epilogue")
    t = t[:k] + t[k:].replace("    __syncthreads();\n", '    asm volatile("bar.sync 1, %0;" ::"n"(LC_THREADS) : "memory");\n', 1)
    # no cp.async from the multiplying warps
    nxt = t.index("#define LC_NEXT_STAGE()")
    end = t.index("while (0)", nxt) + len("while (0)")
    t = t[:nxt] + "#define LC_NEXT_STAGE() do { } while (0)" + t[end:]
    return t


def spread(t):
    start, end, lines = schedule_lines(t)
    runs = mma_runs(lines)
    blocks = [[lines[i] for i in r] for r in runs]
    # gaps[i]: the non-mma lines before k-step i (the last one after the last k-step)
    bounds = [-1] + [i for r in runs for i in (r[0], r[-1])] + [len(lines)]
    gaps = [lines[bounds[2 * g] + 1:bounds[2 * g + 1]] for g in range(len(runs) + 1)]
    used_by_first = loads_of(blocks[0])

    head = [l for l in gaps[0] if used_by_first(l) or not l.startswith("LC_LDSM")]
    into = [[l for l in gaps[0] if not used_by_first(l) and l.startswith("LC_LDSM")]]
    # gap i + 1 (between block i and block i + 1): its loads go into block i, the rest stays
    for g in gaps[1:]:
        into[-1] += [l for l in g if l.startswith("LC_LDSM")]
        into.append([])
    keep = [[l for l in g if not l.startswith("LC_LDSM")] for g in gaps[1:]]
    body = list(head)
    for i, b in enumerate(blocks):
        loads = into[i]
        every = max(1, len(b) // max(1, len(loads))) if loads else len(b) + 1
        out = []
        for n, l in enumerate(b):
            out.append(l)
            if loads and (n + 1) % every == 0:
                out.append(loads.pop(0))
        out += loads
        body += out + (keep[i] if i < len(keep) else [])
    assert sorted(body) == sorted(lines), "spread must only reorder"
    macro = "#define LC_SCHEDULE \\\n" + "".join(f"    {l} \\\n" for l in body)
    return t[:start] + macro + t[end:]


def lean(t, ahead):
    """(session 15) Each k-step's ldmatrix groups issued right before the k-step that first reads
    them (B's k32 groups at their first k-step), so at most one k-step's A fragments and one
    k32 group of B are live beside the accumulators (the mma_ceiling.cu order). With
    ahead < run length, the next k-step's loads go after `ahead` mma of the current one."""
    start, end, lines = schedule_lines(t)
    blocks = []  # k-steps: runs of mma split where the B half (br, the k16 inside a k32 group) changes
    for r in mma_runs(lines):
        for i in r:
            br = re.findall(r"-?\d+", lines[i])[4]
            if i == r[0] or br != last:
                blocks.append([])
            blocks[-1].append(lines[i])
            last = br
    others = [l for l in lines if not l.startswith("LC_LDSM") and not l.startswith("LC_MMA")]
    loads = [l for l in lines if l.startswith("LC_LDSM")]
    issued, per = set(), []
    for b in blocks:
        used = loads_of(b)
        mine = [l for l in loads if used(l) and l not in issued]
        issued.update(mine)
        per.append(mine)
    assert issued == set(loads), "every load is read by some k-step"
    body = list(per[0])
    for i, b in enumerate(blocks):
        nxt = per[i + 1] if i + 1 < len(blocks) else []
        body += b[:ahead] + nxt + b[ahead:]
        if i == 0:
            body += others  # LC_NEXT_STAGE after the first k-step, as the emitted order
    assert sorted(body) == sorted(lines), "lean must only reorder"
    macro = "#define LC_SCHEDULE \\\n" + "".join(f"    {l} \\\n" for l in body)
    return t[:start] + macro + t[end:]


def relacq(t):
    """(session 15) The split's arrival as one atom.add.acq_rel.gpu by thread 0 after the barrier
    (CUTLASS's generic barrier: red.release after __syncthreads), no membar.sc fences."""
    old = """        __threadfence();
        lc_last = atomicAdd(&counters[tile], 1u) == (unsigned)(LC_SPLITS - 1);
        __threadfence();
"""
    assert old in t
    return t.replace(old, """        unsigned lc_old;
        asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;" : "=r"(lc_old) : "l"(counters + tile) : "memory");
        lc_last = lc_old == (unsigned)(LC_SPLITS - 1);
""", 1)


PAIRS_DQ = r"""__device__ __forceinline__ unsigned lc_dq(unsigned word, unsigned sh8, int b, unsigned s2) {
    // PROBE (timing only): nibbles (i, i + 4) of word (b = 0, 1) or of word >> 8 (b = 2, 3).
    const unsigned w = b < 2 ? word : sh8;
    unsigned x, r;
    if (b % 2 == 0) {
        asm("lop3.b32 %0, %1, %2, %3, 0x6A;" : "=r"(x) : "r"(w), "r"(0x000F000Fu), "r"(0x64086408u));
        asm("sub.rn.f16x2 %0, %1, %2;" : "=r"(r) : "r"(x), "r"(0x64086408u));
    } else {
        asm("lop3.b32 %0, %1, %2, %3, 0x6A;" : "=r"(x) : "r"(w), "r"(0x00F000F0u), "r"(0x64806480u));
        asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(r) : "r"(x), "r"(0x2C002C00u), "r"(0xD480D480u));
    }
    asm("mul.rn.f16x2 %0, %1, %2;" : "=r"(r) : "r"(r), "r"(s2));
    return r;
}
"""


def pairs(t):
    """TIMING ONLY: nibble pairs (i, i + 4) dequantized with one lop3 each (session 14; the
    correct kernel is `laycert gen gemm ... --weights int4 --dequant pairs` since session 15)."""
    if "#define LC_DQ_SHIFT 4" in t:  # the session-15 body: its byte scheme shifts by a define
        t = t.replace("#define LC_DQ_SHIFT 4", "#define LC_DQ_SHIFT 8", 1)
        return replace_function(t, "__device__ __forceinline__ unsigned lc_dq(", PAIRS_DQ)
    t = replace_function(t, "__device__ __forceinline__ unsigned lc_dq(", PAIRS_DQ)
    sh = "wh[j] = {wv[j].x >> 4, wv[j].y >> 4, wv[j].z >> 4, wv[j].w >> 4};"
    assert sh in t
    t = t.replace(sh, sh.replace(">> 4", ">> 8"), 1)
    return t


def kwarps(t, kw):
    """(session 15) KW warps per 32 columns, each taking every KW-th superblock of the CTA's
    K-range (emit with --splits 8 / KW to keep 16 warps per SM); the KW partial tiles are summed
    in shared memory (group 0 + 1 + ..., fixed order) before the split-K tail, which only group 0
    runs. Correct products (not validated: a probe)."""
    def sub(old, new):
        nonlocal t
        assert old in t, old
        t = t.replace(old, new, 1)
    threads = int(re.search(r"#define LC_THREADS (\d+)", t).group(1))
    ctas = int(re.search(r"#define LC_MIN_CTAS (\d+)", t).group(1))
    sub(f"#define LC_THREADS {threads}\n", f"#define LC_THREADS {threads * kw}\n#define LC_T0 {threads}\n#define LC_KW {kw}\n")
    # 128 registers per thread: 512 / (threads * kw) CTAs per SM
    sub(f"#define LC_MIN_CTAS {ctas}\n", f"#define LC_MIN_CTAS {max(1, 512 // (threads * kw))}\n")
    sub("    const int t = threadIdx.x;\n", "    const int t = threadIdx.x % LC_T0;\n    const int q = threadIdx.x / LC_T0;\n")
    sub("        if (i < LC_SB) lc_load_w(wp, wb[i], sb_s[i], k0, i);",
        "        if (i < LC_SB / LC_KW) lc_load_w(wp, wb[i], sb_s[i], k0, i * LC_KW + q);")
    sub("    for (int sb = 0; sb < LC_SB; ++sb) {\n#pragma unroll\n        for (int j = 0; j < LC_A_CHUNKS; ++j) {",
        "    for (int sb = q; sb < LC_SB; sb += LC_KW) {\n#pragma unroll\n        for (int j = 0; j < LC_A_CHUNKS; ++j) {")
    sub("    for (int sb0 = 0; sb0 < LC_SB; sb0 += LC_W_DEPTH) {", "    for (int sb0 = 0; sb0 < LC_SB / LC_KW; sb0 += LC_W_DEPTH) {")
    sub("            if (sb < LC_SB) {", "            if (sb < LC_SB / LC_KW) {")
    sub("                if (next < LC_SB)", "                if (next < LC_SB / LC_KW)")
    sub("sb_s[(i + LC_W_DEPTH - 1) % LC_W_DEPTH], k0, next);", "sb_s[(i + LC_W_DEPTH - 1) % LC_W_DEPTH], k0, next * LC_KW + q);")
    sub("lc_superblock(wb[i], sb_s[i], base + sb * LC_A_SB_BYTES, a_lo, acc);",
        "lc_superblock(wb[i], sb_s[i], base + (sb * LC_KW + q) * LC_A_SB_BYTES, a_lo, acc);")
    red = """
    // PROBE: the KW groups' partial tiles summed in shared memory (over A's staging), in group order.
    __syncthreads();
    if (q > 0) {
#pragma unroll
        for (int v = 0; v < LC_ACC; ++v)
            asm volatile("st.shared.f32 [%0], %1;" ::"r"(base + 4u * (unsigned)(((q - 1) * LC_ACC + v) * LC_T0 + t)), "f"(acc[v]) : "memory");
    }
    __syncthreads();
    if (q == 0) {
        for (int qq = 1; qq < LC_KW; ++qq) {
#pragma unroll
            for (int v = 0; v < LC_ACC; ++v) {
                float x;
                asm volatile("ld.shared.f32 %0, [%1];" : "=f"(x) : "r"(base + 4u * (unsigned)(((qq - 1) * LC_ACC + v) * LC_T0 + t)) : "memory");
                acc[v] += x;
            }
        }
    }
"""
    sub("\n#if LC_CLUSTER_REDUCE\n    // This split's partial tile (all 16 rows)", red + "\n#if LC_CLUSTER_REDUCE\n    // This split's partial tile (all 16 rows)")
    # cluster path: only group 0 writes its partial and stores C
    sub("""    __syncthreads();  // every warp's last ldmatrix of a_s is done
#pragma unroll
    for (int v = 0; v < LC_ACC; v += 2) {""", """    __syncthreads();  // every warp's last ldmatrix of a_s is done
#pragma unroll
    for (int v = 0; v < (q == 0 ? LC_ACC : 0); v += 2) {""")
    sub("        if (LC_C_GUARD(r, c)) {\n            float x = 0.0f, y = 0.0f;", "        if (q == 0 && LC_C_GUARD(r, c)) {\n            float x = 0.0f, y = 0.0f;")
    # workspace path
    sub("""        const long long p = split;
        if (LC_C_GUARD(r, c)) {""", """        const long long p = split;
        if (q == 0 && LC_C_GUARD(r, c)) {""")
    sub("    if (t == 0) {\n", "    if (threadIdx.x == 0) {\n")
    sub("    if (!lc_last) return;\n", "    if (!lc_last || q != 0) return;\n")
    return t


def resolve_dq(t):
    """(session 15) The W4A16 body's `#if LC_DQ_PAIRS` blocks resolved by the kernel's own define,
    so the probes below edit the dequantization and staging the kernel compiles (not the
    inactive branch). (session 16) Likewise `#if LC_KGROUP` (the K-group kernel, which comes
    first in the body: without this the split-K probes' first-occurrence edits landed in it)."""
    for name in ("LC_KGROUP", "LC_DQ_PAIRS", "LC_A_KPERM"):
        t = resolve_flag(t, name)
    return t


def resolve_flag(t, name):
    """`#if NAME` / `#if !NAME` blocks (with their `#else`) resolved by the kernel's
    `#define NAME 0|1`; every other conditional's directives kept as they are."""
    m = re.search(rf"#define {name} (\d)", t)
    if not m:
        return t
    on = m.group(1) == "1"
    # keep: one entry per open conditional, True/False for a NAME branch kept/dropped,
    # None for any other conditional (its directives are kept as they are)
    out, keep = [], [True]
    for line in t.split("\n"):
        s = line.split("//")[0].strip()
        visible = all(k is not False for k in keep)
        if s in (f"#if {name}", f"#if !{name}"):
            keep.append(on if s == f"#if {name}" else not on)
            continue
        if s.startswith("#if"):
            keep.append(None)
        elif s in ("#else", "#endif") and len(keep) > 1 and keep[-1] is not None:
            if s == "#else":
                keep[-1] = not keep[-1]
            else:
                keep.pop()
            continue
        elif s == "#endif" and len(keep) > 1:
            keep.pop()
        if visible:
            out.append(line)
    return "\n".join(out)


def replace_function(t, head, text):
    """The device function whose definition starts with `head` (up to its closing brace at the
    start of a line), replaced by `text`."""
    i = t.index(head)
    j = t.index("\n}\n", i) + 3
    return t[:i] + text + t[j:]


def _macro2(t, name):
    """The emitted two-argument macro `name` as a Python function (C integer division)."""
    m = re.search(r"#define " + name + r"\((\w+), (\w+)\) (.*)", t)
    a, b, body = m.groups()
    return eval(f"lambda {a}, {b}: {body.replace('/', '//')}")


def _swz(t, op):
    m = re.search(r"int lc_swz_" + op + r"\(int o\) \{ return (.*); \}", t)
    return eval("lambda o: " + m.group(1))


def _chain(name, arg, vals):
    body = str(vals[-1])
    for i in range(len(vals) - 2, -1, -1):
        body = f"(({arg}) == {i} ? {vals[i]} : {body})"
    return f"#define {name}({arg}) {body}\n"


def addr(t):
    """(session 17) sm80, full tiles only (M, N, K multiples of the tile): the cp.async and
    ldmatrix addresses from one base per operand. Chunk j of a stage is chunk 0 plus constant
    global and shared offsets; ldmatrix group g reads (lane's group-0 address XOR X_g) + D_g
    (the swizzle's XOR bits and the row blocks). No per-chunk guard, no 32 offset registers.
    The constants are computed here from the emitted macros and checked on every thread."""
    d = {k: int(v) for k, v in re.findall(r"#define (LC_[A-Z_0-9]+) (\d+)\n", t)}
    assert d["LC_M"] % d["LC_BM"] == 0 and d["LC_N"] % d["LC_BN"] == 0 and d["LC_K"] % d["LC_BK"] == 0
    nt = d["LC_THREADS"]
    defs = ""
    for op in "ab":
        OP = op.upper()
        swz = _swz(t, op)
        slin = _macro2(t, f"LC_{OP}_SLIN")
        goff = _macro2(t, f"LC_{OP}_GOFF")
        row, kk = _macro2(t, f"LC_{OP}_LDSM_ROW"), _macro2(t, f"LC_{OP}_LDSM_K")
        lo = lambda th, g: 2 * swz(slin(row(th, g), kk(th, g)))
        xs, ds = [], []
        for g in range(d[f"LC_{OP}_GROUPS"]):
            for x in (0, 16, 32, 48, 64, 80, 96, 112):
                dd = {lo(th, g) - (lo(th, 0) ^ x) for th in range(nt)}
                if len(dd) == 1:
                    xs.append(x)
                    ds.append(dd.pop())
                    break
            else:
                raise SystemExit(f"{OP} group {g}: no XOR + offset form")
        defs += _chain(f"LC_P{OP}_X", "g", xs) + _chain(f"LC_P{OP}_D", "g", ds)
        crow, ck = _macro2(t, f"LC_{OP}_CP_ROW"), _macro2(t, f"LC_{OP}_CP_K")
        sd, gd = [], []
        for j in range(d[f"LC_{OP}_CHUNKS"]):
            s = {2 * swz(slin(crow(th, j), ck(th, j))) - 2 * swz(slin(crow(th, 0), ck(th, 0))) for th in range(nt)}
            g = {goff(crow(th, j), ck(th, j)) - goff(crow(th, 0), ck(th, 0)) for th in range(nt)}
            assert len(s) == 1 and len(g) == 1, (OP, j)
            sd.append(s.pop())
            gd.append(g.pop())
        defs += _chain(f"LC_P{OP}_SD", "j", sd) + _chain(f"LC_P{OP}_GD", "j", gd)
    old_ld = "#define LC_LDSM_A(g) lc_ldsm_x4(af[g], sa + a_lo[g])\n#define LC_LDSM_B(g) lc_ldsm_x4(bf[g], sb + b_lo[g])\n"
    assert old_ld in t
    t = t.replace(old_ld, defs +
                  "#define LC_LDSM_A(g) lc_ldsm_x4(af[g], ((sa + a_lo0) ^ LC_PA_X(g)) + LC_PA_D(g))\n"
                  "#define LC_LDSM_B(g) lc_ldsm_x4(bf[g], ((sb + b_lo0) ^ LC_PB_X(g)) + LC_PB_D(g))\n", 1)
    t = replace_function(t, "__device__ __forceinline__ void lc_load_stage(", """__device__ __forceinline__ void lc_load_stage(const lc_elem* __restrict__ A,
                                              const lc_elem* __restrict__ B, unsigned stage,
                                              int m0, int n0, int k0, int t) {
    // PROBE (addr): full tiles, chunk j = chunk 0 + constants.
    const long long ar = (long long)m0 + LC_A_CP_ROW(t, 0), br = (long long)n0 + LC_B_CP_ROW(t, 0);
    const int ak = LC_A_CP_K(t, 0), bk = LC_B_CP_K(t, 0);
    const lc_elem* a = A + LC_A_GOFF(ar, ak) + k0;
    const lc_elem* b = B + LC_B_GOFF(br, bk) + k0;
    const unsigned sa = stage + 2u * (unsigned)lc_swz_a(LC_A_SLIN(LC_A_CP_ROW(t, 0), LC_A_CP_K(t, 0)));
    const unsigned sb = stage + LC_A_STAGE_BYTES + 2u * (unsigned)lc_swz_b(LC_B_SLIN(LC_B_CP_ROW(t, 0), LC_B_CP_K(t, 0)));
#pragma unroll
    for (int j = 0; j < LC_A_CHUNKS; ++j) lc_cp_async16(sa + LC_PA_SD(j), a + LC_PA_GD(j), 16u);
#pragma unroll
    for (int j = 0; j < LC_B_CHUNKS; ++j) lc_cp_async16(sb + LC_PB_SD(j), b + LC_PB_GD(j), 16u);
}
""")
    old = t[t.index("    unsigned a_lo[LC_A_GROUPS], b_lo[LC_B_GROUPS];"):t.index("    float acc[LC_ACC];")]
    t = t.replace(old, """    // PROBE (addr): group 0's offsets; group g is (x ^ LC_PA_X(g)) + LC_PA_D(g).
    const unsigned a_lo0 = 2u * (unsigned)lc_swz_a(LC_A_SLIN(LC_A_LDSM_ROW(t, 0), LC_A_LDSM_K(t, 0)));
    const unsigned b_lo0 = 2u * (unsigned)lc_swz_b(LC_B_SLIN(LC_B_LDSM_ROW(t, 0), LC_B_LDSM_K(t, 0)));

""", 1)
    return t


def cpspread(t, whole):
    """(session 18) The emitted full-tile pipelined kernel with its LC_NEXT_STAGE() burst (12
    cp.async per thread at 128x256x64) issued one chunk at a time between mma lines: from
    LC_NEXT_STAGE() to LC_ADVANCE() (whole=False) or from the first mma to LC_ADVANCE()
    (whole=True); the commit right before LC_ADVANCE() (its wait counts this block's group)."""
    assert "#define LC_FAST_ADDR 1" in t and "#define LC_PIPELINED 1" in t
    d = {k: int(v) for k, v in re.findall(r"#define (LC_[A-Z_0-9]+) (\d+)\n", t)}
    na, nb = d["LC_A_CHUNKS"], d["LC_B_CHUNKS"]
    chunk = """// PROBE (cpspread): the k-block's cp.async bases once (LC_CP_BASES, first schedule line), then
// chunk j of lc_load_stage's fast path (A's chunks, then B's) as one cp.async.
#define LC_CP_BASES \\
    const bool lc_ld = nk < kblocks; \\
    const lc_elem* lc_ga = A + LC_A_GOFF((long long)m0 + LC_A_CP_ROW(t, 0), LC_A_CP_K(t, 0)) + nk * LC_BK; \\
    const lc_elem* lc_gb = B + LC_B_GOFF((long long)n0 + LC_B_CP_ROW(t, 0), LC_B_CP_K(t, 0)) + nk * LC_BK; \\
    const unsigned lc_st = base + (nk % LC_STAGES) * LC_STAGE_BYTES; \\
    const unsigned lc_sa = lc_st + 2u * (unsigned)lc_swz_a(LC_A_SLIN(LC_A_CP_ROW(t, 0), LC_A_CP_K(t, 0))); \\
    const unsigned lc_sb = lc_st + LC_A_STAGE_BYTES + 2u * (unsigned)lc_swz_b(LC_B_SLIN(LC_B_CP_ROW(t, 0), LC_B_CP_K(t, 0)));
#define LC_CPX(j) do { if (lc_ld) { if ((j) < LC_A_CHUNKS) lc_cp_async16(lc_sa + (LC_A_CP_SD(j)), lc_ga + (LC_A_CP_GD(j)), 16u); \\
    else lc_cp_async16(lc_sb + (LC_B_CP_SD((j) - LC_A_CHUNKS)), lc_gb + (LC_B_CP_GD((j) - LC_A_CHUNKS)), 16u); } } while (0)
"""
    k = t.index('extern "C" __global__')
    t = t[:k] + chunk + t[k:]
    a = t.index("#define LC_SCHEDULE \\\n")
    b = t.index("/* end of LC_SCHEDULE */", a)
    lines = t[a:b].split("\n")
    head, body = lines[0], lines[1:]
    ns = next(i for i, l in enumerate(body) if "LC_NEXT_STAGE();" in l)
    adv = next(i for i, l in enumerate(body) if "LC_ADVANCE();" in l)
    start = next(i for i, l in enumerate(body) if "LC_MMA(" in l) if whole else ns
    mmas = [i for i in range(start, adv) if "LC_MMA(" in body[i]]
    n = na + nb
    at = {mmas[(c * len(mmas)) // n]: c for c in range(n)}
    out = []
    for i, l in enumerate(body):
        if i == ns:
            continue
        if i == adv:
            out.append("    lc_cp_commit(); \\")
        out.append(l)
        if i in at:
            out.append(f"    LC_CPX({at[i]}); \\")
    return t[:a] + "\n".join([head, "    LC_CP_BASES \\"] + out) + t[b:]


def main():
    src, dst, mode = sys.argv[1:4]
    t = resolve_dq(open(src).read())
    if mode.startswith("lean"):
        # lean, lean16, lean+noload, lean16+noload
        name = mode.split("+")[0]
        t = lean(t, int(name[4:]) if name[4:] else 10**6)
        if mode.endswith("+noload"):
            t = t.replace(NEXT + "  ", "        if (nk < LC_STAGES)", 1)
    elif mode.startswith("kw"):
        # kw2, kw4, kw2+relacq, kw2+relacq+pairs ...
        parts = mode.split("+")
        t = kwarps(t, int(parts[0][2:]))
        if "relacq" in parts:
            t = relacq(t)
        if "pairs" in parts:
            t = pairs(t)
    elif mode.startswith("relacq"):
        t = relacq(t)
        if mode == "relacq+pairs":
            t = pairs(t)
    elif mode.startswith("spread"):
        t = spread(t)
        if mode == "spread+noload":
            t = t.replace(NEXT + "  ", "        if (nk < LC_STAGES)", 1)
    elif mode == "noload":
        assert NEXT in t
        t = t.replace(NEXT + "  ", "        if (nk < LC_STAGES)", 1)
    elif mode in ("nobarrier", "onestage"):
        assert NEXT in t
        t = t.replace(NEXT + "  ", "        if (nk < LC_STAGES)", 1)
        loop = "        lc_cp_wait<LC_STAGES - 2>();\n        __syncthreads();\n        const unsigned sa"
        assert loop in t
        t = t.replace(loop, "        const unsigned sa", 1)
        if mode == "onestage":
            t = t.replace("const unsigned sa = base + (kb % LC_STAGES) * LC_STAGE_BYTES;", "const unsigned sa = base;", 1)
    elif mode == "racy":
        loop = "        lc_cp_wait<LC_STAGES - 2>();\n        __syncthreads();\n        const unsigned sa"
        assert loop in t
        t = t.replace(loop, "        lc_cp_wait<LC_STAGES - 2>();\n        const unsigned sa", 1)
    elif mode == "k0":
        assert LOAD in t
        t = t.replace(LOAD, LOAD.replace("nk * LC_BK", "0"), 1)
    elif mode in ("advance", "tail"):
        t = multistage(t, mode == "advance")
    elif mode == "nomul":
        mul = '    asm("mul.rn.f16x2 %0, %1, %2;" : "=r"(r) : "r"(r), "r"(s2));\n'
        assert mul in t
        t = t.replace(mul, "", 1)
    elif mode == "noreduce":
        head = "    // This split's partial tile (rows < M) into the workspace."
        tail = "    if (t == 0) counters[tile] = 0u;\n#endif\n}" if "0u;\n#endif\n}" in t else "    if (t == 0) counters[tile] = 0u;\n}"
        i, j = t.index(head), t.index(tail)
        t = t[:i] + """    // PROBE: the partial straight into C (wrong for splits > 1).
#pragma unroll
    for (int v = 0; v < LC_ACC; v += 2) {
        const int r = LC_C_ROW(t, v);
        const long long c = (long long)n0 + LC_C_COL(t, v);
        if (LC_C_GUARD(r, c)) {
            unsigned h;
            asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(h) : "f"(acc[v + 1]), "f"(acc[v]));
            *reinterpret_cast<unsigned*>(C + LC_C_GOFF(r, c)) = h;
        }
    }
#endif
}""" + t[j + len(tail):]
    elif mode == "pairs":
        t = pairs(t)
    elif mode in ("noA", "nodq", "nomma", "wonly"):
        if mode in ("noA", "wonly"):
            loop = "    for (int sb = 0; sb < LC_SB; ++sb) {\n#pragma unroll\n        for (int j = 0; j < LC_A_CHUNKS; ++j) {"
            assert loop in t
            t = t.replace(loop, loop.replace("sb < LC_SB", "sb < 0"), 1)
        if mode in ("nodq", "wonly"):
            t = replace_function(t, "__device__ __forceinline__ unsigned lc_dq(",
                                 "__device__ __forceinline__ unsigned lc_dq(unsigned word, unsigned sh4, int b, unsigned s2) {\n"
                                 "    return word + (unsigned)b;  // PROBE: no dequantization\n}\n")
        if mode in ("nomma", "wonly"):
            t = replace_function(t, "__device__ __forceinline__ void lc_mma(",
                                 "__device__ __forceinline__ void lc_mma(float& d0, float& d1, float& d2, float& d3, unsigned a0,\n"
                                 "    unsigned a1, unsigned a2, unsigned a3, unsigned b0, unsigned b1) {\n"
                                 "    d0 = __int_as_float(__float_as_int(d0) ^ a0 ^ b0 ^ b1);  // PROBE: no mma\n}\n")
    elif mode == "ws":
        t = warp_specialized(t)
    elif mode == "ws4":
        t = warp_specialized(t, 128)
    elif mode == "addr":
        t = addr(t)
    elif mode in ("cpspread", "cpspread2"):
        t = cpspread(t, mode == "cpspread2")
    elif mode == "addr+ws4":
        t = warp_specialized(addr(t), 128)
    elif mode == "scaleafter":
        t = scale_after(t)
    elif mode == "smemring":
        t = smemring(t, int(sys.argv[4]))
    elif mode == "prefetch":
        t = prefetch(t, int(sys.argv[4]))
    else:
        sys.exit(f"unknown mode {mode}")
    open(dst, "w").write(t)


if __name__ == "__main__":
    main()
