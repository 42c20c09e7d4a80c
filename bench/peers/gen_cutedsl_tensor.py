#!/usr/bin/env python3
"""Test data for laycert's reading of the CuTe DSL's print of a tensor (nvidia-cutlass-dsl,
checked with 4.8.1): `print(tensor)` inside a `@cute.jit` function, traced on the CPU.

Each case (one JSON line of tests/data/cutedsl/tensor_print.jsonl): "text", the DSL's print
(`tensor<ptr<f32, rmem, align<32>> o (4,(2,4)):(2,(1,8))>`, a swizzled
`tensor<ptr<f16, smem, align<16>> o S<3,4,3> o 0 o (8,64):(64,1)>`, or a coordinate tensor
`tensor<(0,0) o (8,4):(1@0,1@1)>`), "kind" (plain, swizzled, identity), and "values": the
DSL's own evaluation of the tensor's layout at every linear index 0, 1, .. (an offset, or a
coordinate tuple for a coordinate tensor). Deterministic (fixed seed).

Usage: python3 bench/peers/gen_cutedsl_tensor.py [OUT]
"""
import contextlib
import io
import json
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import cutlass  # noqa: E402
import cutlass.cute as cute  # noqa: E402
from gen_cutedsl_vectors import dsl  # noqa: E402
from gen_pycute_vectors import random_layout  # noqa: E402

SEED = 20261202
PTRS = [(cutlass.Float16, cute.AddressSpace.smem, 16), (cutlass.Float32, cute.AddressSpace.gmem, 16),
        (cutlass.Int8, cute.AddressSpace.gmem, 8), (cutlass.BFloat16, cute.AddressSpace.smem, 128)]


def plan(rng):
    cases = []
    for _ in range(60):
        cases.append(("plain", random_layout(rng), rng.randrange(len(PTRS) + 1), None))
    for _ in range(30):
        b, m = rng.randint(1, 3), rng.randint(0, 4)
        s = rng.choice([b, b + 1, -b]) if rng.random() < 0.3 else b
        cases.append(("swizzled", random_layout(rng, "compact"), rng.randrange(len(PTRS)),
                      (b, m, s)))
    for _ in range(20):
        shape = tuple(rng.choice([1, 2, 3, 4, 8]) for _ in range(rng.randint(1, 3)))
        cases.append(("identity", shape, None, None))
    return cases


def main():
    out_path = sys.argv[1] if len(sys.argv) > 1 else "tests/data/cutedsl/tensor_print.jsonl"
    cases = plan(random.Random(SEED))
    out = []

    def run_all():
        """Plain Python (the DSL rewrites only the @cute.jit function's own control flow)."""
        for kind, layout, ptr, sw in cases:
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf):
                if kind == "identity":
                    t = cute.make_identity_tensor(layout)
                    n = 1
                    for d in layout:
                        n *= d
                    values = [list(t[i]) for i in range(n)]
                    print(t)
                else:
                    l = dsl(layout)
                    if sw is not None:
                        l = cute.make_composed_layout(cute.make_swizzle(*sw), 0, l)
                    if ptr == len(PTRS):
                        t = cute.make_rmem_tensor(l, cutlass.Float32)
                    else:
                        dtype, space, align = PTRS[ptr]
                        p = cute.make_ptr(dtype, 0, space, assumed_align=align)
                        t = cute.make_tensor(p, l)
                    values = [int(l(i)) for i in range(cute.size(l))]
                    print(t)
            out.append({"kind": kind, "text": buf.getvalue().strip(), "values": values})

    @cute.jit
    def traced():
        run_all()

    traced()
    os.makedirs(os.path.dirname(out_path), exist_ok=True)
    with open(out_path, "w") as f:
        for c in out:
            f.write(json.dumps(c, separators=(", ", ": ")) + "\n")
    print(f"wrote {len(out)} cases to {out_path}")


if __name__ == "__main__":
    main()
