#!/usr/bin/env python3
"""Issue 24, session 16 experiment: write a W4A16 kernel without split-K across CTAs from an
emitted one.

Usage: [KG_APERM=1] python3 w4_kgroup.py EMITTED.cu OUT.cu WN WK SLOTS
Keeps the emitted kernel up to its "A cluster-wide barrier" helper (the plan's macros, swizzle,
dequantization, W addressing and LC_W4_SCHEDULE), drops its kernel and launcher, and appends
the K-group body (w4_kgroup_body.cu) with KG_WN column warps x KG_WK K-warps and KG_SLOTS A
superblocks per ring. With a --dequant pairs kernel A is interleaved in the ring (as landed in
codegen), or with KG_APERM=1 staged in k order and permuted in registers after ldmatrix. The
result runs under w4a16.py (same entry point and launcher signature), which checks every output
element. The landed kernel (codegen's #if LC_KGROUP) is this body with the plan's printed maps.
"""
import os
import sys

src, dst, wn, wk, slots = sys.argv[1:6]
text = open(src).read()
cut = text.index("// A cluster-wide barrier")
here = os.path.dirname(os.path.abspath(__file__))
body = open(os.path.join(here, "w4_kgroup_body.cu")).read()
aperm = os.environ.get("KG_APERM") == "1"
if aperm:
    # A staged in k order, permuted in registers after ldmatrix (LC_DQ_PAIRS kernels): the
    # natural fragments of k-steps 2u and 2u + 1 become the mma's by prmt (low halves, high halves).
    old = "#define LC_LDSM_A(g) lc_ldsm_x4(af[g], sa + a_lo[g])"
    assert old in text
    new = ("__device__ __forceinline__ void kg_aperm(unsigned (&a)[4], unsigned (&b)[4]) {\n"
           "#pragma unroll\n    for (int i = 0; i < 4; ++i) {\n"
           "        const unsigned lo = __byte_perm(a[i], b[i], 0x5410u), hi = __byte_perm(a[i], b[i], 0x7632u);\n"
           "        a[i] = lo;\n        b[i] = hi;\n    }\n}\n"
           "#define LC_LDSM_A(g) do { if ((g) % 2 == 0) { lc_ldsm_x4(af[g], sa + a_lo[g]); "
           "lc_ldsm_x4(af[(g) | 1], sa + a_lo[(g) | 1]); kg_aperm(af[g], af[(g) | 1]); } } while (0)")
    text = text.replace(old, new)
    cut = text.index("// A cluster-wide barrier")
defs = f"#define KG_APERM {int(aperm)}\n#define KG_WN {int(wn)}\n#define KG_WK {int(wk)}\n#define KG_SLOTS {int(slots)}\n"
open(dst, "w").write(text[:cut] + defs + body)
