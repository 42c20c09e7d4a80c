#!/usr/bin/env python3
"""Issue 24, session 16 probe: the K-group W4A16 kernel with A permuted in registers.

Usage: python3 w4_kgroup.py EMITTED.cu OUT.cu
EMITTED is a K-group kernel with nibble pairs (`laycert gen gemm --weights int4 ... --kwarps K
--dequant pairs`). The probe stages A in k order (the kernel's bytes staging) and permutes the
fragments after ldmatrix instead: the natural fragments of k-steps 2u and 2u + 1 become the mma's
by prmt (low halves, high halves), 8 per two k-steps. Correct products (w4a16.py checks them),
not validated by codegen: a probe. Session 16 measured it no faster than bytes at M = 16
(bench/gpu/results/probes-2026-11-25-s16.txt, run 5).

Runs 1-5 of that file ran the K-group body as an experiment spliced after an emitted split-K
kernel (bench/gpu/experiments/w4_kgroup_body.cu at commit d20965a); the landed kernel with the
same shape is `laycert gen gemm --weights int4 --kwarps WK --cwarps WN --aslots SLOTS`
(the same instruction counts; 19.0-19.2 us against 19.1-19.3 at 16x8192x8192).
"""
import sys

src, dst = sys.argv[1:3]
t = open(src).read()


def sub(old, new):
    global t
    assert old in t, old
    t = t.replace(old, new, 1)


assert "#define LC_KGROUP 1\n" in t and "#define LC_DQ_PAIRS 1\n" in t, "a K-group kernel with --dequant pairs"
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
