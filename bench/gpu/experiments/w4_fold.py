#!/usr/bin/env python3
"""Issue 24, session 19 probe: the W4A16 K-group kernel with fewer ALU instructions per W word.

Usage: python3 w4_fold.py EMITTED.cu OUT.cu MODE   (MODE: pairs, fold or pairs+fold)
EMITTED is a K-group kernel with the byte dequantization (`laycert gen gemm --weights int4
... --packing sequential --dequant bytes`, the default at M = 16 before session 19; `pairs` here
is what `--packing interleaved`, now the default, emits). Correct products (w4a16.py checks them), not
validated by codegen: probes.
  pairs: W packed with each word's nibbles in the order k' + (0, 8, 16, 24, 1, 9, 17, 25)
    (`#define LC_W_PACK 1`, which w4a16.py packs for), so the nibble pair (p, p + 4) is the
    byte p of the default packing (consecutive k): the byte schedule runs unchanged with the
    nibble-pair dequantization (one lop3 and an exact sub or fma per register, 13
    instructions per word instead of 17) and A stays in k order (no interleave).
  fold: no scale multiply per B register: each superblock (128 k, inside one scale group)
    accumulates into fresh f32 registers, then acc += s * partial with the scale of the
    accumulator's column (two shuffles of the B lanes' scales per W vector): per superblock
    and thread 16 FFMA, 8 SHFL and 8 conversions instead of 64 mul.f16x2. Rounding differs from
    the kernel's (q * s is not rounded to f16; the sum is scaled in f32).
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sm80_probe import PAIRS_DQ  # noqa: E402

src, dst, mode = sys.argv[1:4]
t = open(src).read()


def sub(old, new):
    global t
    assert old in t, old
    t = t.replace(old, new, 1)


assert "#define LC_KGROUP 1\n" in t and "#define LC_DQ_PAIRS 0\n" in t, "a K-group kernel with --dequant bytes"
assert "#define LC_GROUP " in t
modes = mode.split("+")
assert set(modes) <= {"pairs", "fold"}, mode

if "pairs" in modes:
    sub("#define LC_DQ_PAIRS 0\n", "#define LC_DQ_PAIRS 0\n#define LC_W_PACK 1\n")
    # the nibble-pair lc_dq in place of the byte one (the byte p of the default packing is
    # the pair (p, p + 4) of the LC_W_PACK 1 packing)
    i = t.index("#define LC_DQ_SHIFT 4\n")
    j = t.index("#endif", i)
    mul = '    asm("mul.rn.f16x2 %0, %1, %2;" : "=r"(r) : "r"(r), "r"(s2));\n'
    assert mul in PAIRS_DQ
    t = t[:i] + "#define LC_DQ_SHIFT 8\n" + PAIRS_DQ.replace(mul, "    LC_DQ_SCALE\n") + "\n" + t[j:]
else:
    sub('    asm("sub.rn.f16x2 %0, %1, %2;" : "=r"(r) : "r"(x), "r"(LC_DQ_SUB));\n'
        '    asm("mul.rn.f16x2 %0, %1, %2;" : "=r"(r) : "r"(r), "r"(s2));\n',
        '    asm("sub.rn.f16x2 %0, %1, %2;" : "=r"(r) : "r"(x), "r"(LC_DQ_SUB));\n    LC_DQ_SCALE\n')

if "fold" in modes:
    scale = "(void)s2;"
    sub("""    unsigned af[LC_A_GROUPS][4];
    LC_W4_SCHEDULE
}""", """    unsigned af[LC_A_GROUPS][4];
    float acc[LC_ACC];
#pragma unroll
    for (int i = 0; i < LC_ACC; ++i) acc[i] = 0.0f;
    LC_W4_SCHEDULE
    // acc_out += s * acc: accumulator v of vector j is column 2 (lane % 4) + v % 2 of the
    // vector's 8, whose W row (and scale) lane 4 (2 (lane % 4) + v % 2) holds.
    const int lane = threadIdx.x % 32;
#pragma unroll
    for (int j = 0; j < LC_WV; ++j) {
        const unsigned se = __shfl_sync(0xFFFFFFFFu, s1[j], (lane % 4) * 8);
        const unsigned so = __shfl_sync(0xFFFFFFFFu, s1[j], (lane % 4) * 8 + 4);
        float fe, fo;
        asm("cvt.f32.f16 %0, %1;" : "=f"(fe) : "h"((unsigned short)se));
        asm("cvt.f32.f16 %0, %1;" : "=f"(fo) : "h"((unsigned short)so));
        acc_out[4 * j + 0] = fmaf(fe, acc[4 * j + 0], acc_out[4 * j + 0]);
        acc_out[4 * j + 1] = fmaf(fo, acc[4 * j + 1], acc_out[4 * j + 1]);
        acc_out[4 * j + 2] = fmaf(fe, acc[4 * j + 2], acc_out[4 * j + 2]);
        acc_out[4 * j + 3] = fmaf(fo, acc[4 * j + 3], acc_out[4 * j + 3]);
    }
}""")
    sub("float (&acc)[LC_ACC]) {\n    unsigned sv[LC_WV];", "float (&acc_out)[LC_ACC]) {\n    unsigned sv[LC_WV];")
    assert re.search(r"#define LC_ACC 16\n", t)
else:
    scale = 'asm("mul.rn.f16x2 %0, %1, %2;" : "=r"(r) : "r"(r), "r"(s2));'
t = t.replace("LC_DQ_SCALE", scale)
open(dst, "w").write(t)
print(f"wrote {dst} ({mode})")
