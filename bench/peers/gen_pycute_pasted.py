#!/usr/bin/env python3
"""Differential-test data for CuTe layouts as the tools print them, evaluated by pycute
(pip package nvidia-cutlass), the CuTe reference: every case is one exact printed text and the
offsets pycute's layout gives at every flat (colexicographic) index.

Printed forms (their layout is the same pycute object):
- C++ `print`: `Sw<B,M,S> o _off o (_8,64):(_-64,_1)` (static values `_N`, negatives `_-N`);
- the CuTe DSL: `S<B,M,S> o off o (8,64):(-64,1)` and its MLIR type
  `!cute.composed_layout<"...">`, `!cute.layout<"...">`;
- C++ `print(tensor)`: the pointer first, `smem_ptr[16b](0x7f0000000400) o Sw<..> o _off o L`,
  `gmem_ptr[16b](0x7f0000000000) o L`.
Swizzled layouts have strides of both signs and an offset that keeps every offset they reach
non-negative (the smallest is exactly 0 in half the cases); a case whose smallest offset is -1
is listed with "error" (CuTe swizzles addresses, which are never negative).

Usage: python3 bench/peers/gen_pycute_pasted.py [OUT]  (default tests/data/pycute/pasted.jsonl)
Deterministic: fixed seed. Checked with nvidia-cutlass 4.2 (pycute).
"""
import json
import random
import sys

import pycute as cute

SEED = 20261126


def random_shape(rng, depth=0):
    if depth >= 2 or rng.random() < 0.5:
        return rng.choice([1, 2, 3, 4, 8])
    return tuple(random_shape(rng, depth + 1) for _ in range(rng.randint(1, 3)))


def rebuild(t, values):
    if isinstance(t, int):
        return next(values)
    return tuple(rebuild(s, values) for s in t)


def leaves(t):
    return [t] if isinstance(t, int) else [x for s in t for x in leaves(s)]


def text(t, rng, static, dsl):
    """A tuple as C++ CuTe (static values `_N`, no spaces) or the DSL prints it."""
    if isinstance(t, int):
        return (f"_{t}" if static and rng.random() < 0.7 else str(t))
    inner = ",".join(text(x, rng, static, dsl) for x in t)
    return f"({inner})"


def layout_text(shape, stride, rng, static, dsl):
    return f"{text(shape, rng, static, dsl)}:{text(stride, rng, static, dsl)}"


def random_layout(rng):
    while True:
        shape = random_shape(rng)
        if 2 <= cute.product(shape) <= 512:
            break
    strides = [rng.choice([-64, -16, -8, -5, -2, -1, 0, 1, 2, 4, 8, 16, 32]) for _ in leaves(shape)]
    return shape, rebuild(shape, iter(strides))


def smallest(shape, stride):
    return sum((e - 1) * d for e, d in zip(leaves(shape), leaves(stride)) if d < 0)


# The strings a hostile audit found refused (session 24), each with the pycute object it means:
# (text, swizzle (bits, base, shift) or None, offset, shape, stride).
AUDIT = [
    ("S<3,4,3> o 0 o (8,64):(64,1)", (3, 4, 3), 0, (8, 64), (64, 1)),
    ("S<3,3,3> o 0 o (8,64):(64,1)", (3, 3, 3), 0, (8, 64), (64, 1)),
    ("S<2,4,3> o 0 o ((8,2),(32,1)):((32,256),(1,0))", (2, 4, 3), 0, ((8, 2), (32, 1)),
     ((32, 256), (1, 0))),
    ("S<3,4,3> o 0 o ((8,16),(64,4)):((64,512),(1,8192))", (3, 4, 3), 0, ((8, 16), (64, 4)),
     ((64, 512), (1, 8192))),
    ('!cute.layout<"(4,8):(8,1)">', None, 0, (4, 8), (8, 1)),
    ('!cute.composed_layout<"S<3,4,3> o 0 o (8,64):(64,1)">', (3, 4, 3), 0, (8, 64), (64, 1)),
    ("gmem_ptr[16b](0x7f0000000000) o (128,64):(64,_1)", None, 0, (128, 64), (64, 1)),
    ("smem_ptr[16b](0x7f00) o Sw<3,4,3> o _0 o (8,64):(64,_1)", (3, 4, 3), 0, (8, 64), (64, 1)),
    ("smem_ptr[16b](0x7f0000000400) o Sw<3,4,3> o _0 o (_8,_64):(_64,_1)", (3, 4, 3), 0, (8, 64),
     (64, 1)),
    ("Sw<3,3,3> o 511 o (8,64):(-64,-1)", (3, 3, 3), 511, (8, 64), (-64, -1)),
    ("Sw<1,2,3> o (4,1,32):(1,-5,4)", (1, 2, 3), 0, (4, 1, 32), (1, -5, 4)),
]


def main():
    out_path = sys.argv[1] if len(sys.argv) > 1 else "tests/data/pycute/pasted.jsonl"
    rng = random.Random(SEED)
    lines = []
    for t, sw, offset, shape, stride in AUDIT:
        plain = cute.Layout(shape, stride)
        f = plain if sw is None else cute.ComposedLayout(cute.Swizzle(*sw), offset, plain)
        lines.append(json.dumps({"text": t, "values": [f(i) for i in range(cute.size(plain))]}))
    lines.append(json.dumps({"text": "Sw<3,3,3> o 510 o (8,64):(-64,-1)",
                             "error": "the smallest is -1"}))
    for _ in range(120):
        shape, stride = random_layout(rng)
        plain = cute.Layout(shape, stride)
        bits = rng.randint(1, 3)
        base = rng.randint(0, 4)
        shift = rng.choice([1, -1]) * rng.randint(bits, bits + 3)
        sw = cute.Swizzle(bits, base, shift)
        low = -smallest(shape, stride)
        offset = low + (0 if rng.random() < 0.5 else rng.randint(1, 300))
        composed = cute.ComposedLayout(sw, offset, plain)
        values = [composed(i) for i in range(cute.size(plain))]
        if min(plain(i) + offset for i in range(cute.size(plain))) < 0:
            raise RuntimeError("the offset must keep every address non-negative")
        cpp = f"Sw<{bits},{base},{shift}> o {'_' if rng.random() < 0.5 else ''}{offset} o " + \
            layout_text(shape, stride, rng, True, False)
        dsl = f"S<{bits},{base},{shift}> o {offset} o " + layout_text(shape, stride, rng, False, True)
        for t in (cpp, dsl, f'!cute.composed_layout<"{dsl}">',
                  f"smem_ptr[16b](0x7f0000000400) o {cpp}"):
            lines.append(json.dumps({"text": t, "values": values}))
        if low > 0:
            bad = f"Sw<{bits},{base},{shift}> o {low - 1} o " + \
                layout_text(shape, stride, rng, True, False)
            lines.append(json.dumps({"text": bad, "error": "the smallest is -1"}))
        values = [plain(i) for i in range(cute.size(plain))]
        for t in (f"gmem_ptr[16b](0x7f0000000000) o {layout_text(shape, stride, rng, True, False)}",
                  f'!cute.layout<"{layout_text(shape, stride, rng, False, True)}">',
                  f"ptr[32b](0x7ffd5e0c1a20) o {layout_text(shape, stride, rng, True, False)}"):
            lines.append(json.dumps({"text": t, "values": values}))
    with open(out_path, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {len(lines)} cases to {out_path}")


if __name__ == "__main__":
    main()
