#!/usr/bin/env python3
"""Conformance vectors from pycute (pip package nvidia-cutlass), the CuTe reference oracle.

Writes tests/data/pycute/<op>.jsonl: one JSON object per case with the inputs as pycute's str()
text and either "out" (pycute's str() of the result) or "error" (the exception class name).
Deterministic: fixed seed, no clock. Run from the repository root:

    python3 bench/peers/gen_pycute_vectors.py [--cases 2000]
"""
import argparse
import json
import os
import random

import pycute as cute

EXTENTS = [1, 2, 2, 3, 4, 4, 5, 6, 8]
MAX_SIZE = 1024


def random_shape(rng, depth=0):
    """A random IntTuple of extents: a leaf, or a tuple of 1-3 sub-shapes (nesting <= 2)."""
    if depth >= 2 or rng.random() < 0.45:
        return rng.choice(EXTENTS)
    return tuple(random_shape(rng, depth + 1) for _ in range(rng.randint(1, 3)))


def leaves(t):
    return [t] if isinstance(t, int) else [x for s in t for x in leaves(s)]


def rebuild(t, values):
    """A tuple congruent to t, its leaves taken from the iterator `values`."""
    if isinstance(t, int):
        return next(values)
    return tuple(rebuild(s, values) for s in t)


def random_layout(rng, style=None, max_size=MAX_SIZE):
    """Compact strides over a permuted leaf order (injective, often coalescible),
    scaled/gapped variants of that, or arbitrary small strides."""
    while True:
        shape = random_shape(rng)
        if cute.product(shape) <= max_size:
            break
    flat = leaves(shape)
    kind = style or rng.choice(["compact", "compact", "gapped", "random"])
    if kind == "random":
        strides = [rng.choice([0, 1, 1, 2, 3, 4, 6, 8, 12, 16]) for _ in flat]
    else:
        order = list(range(len(flat)))
        rng.shuffle(order)
        strides = [0] * len(flat)
        acc = rng.choice([1, 1, 1, 2]) if kind == "gapped" else 1
        for k in order:
            strides[k] = acc
            acc *= flat[k]
            if kind == "gapped" and rng.random() < 0.3:
                acc *= rng.choice([2, 3])
    return cute.Layout(shape, rebuild(shape, iter(strides)))


def run(fn):
    try:
        return {"out": str(fn())}
    except Exception as e:  # pycute signals a violated condition by an exception
        return {"error": type(e).__name__}


def small_tiler(rng, a):
    """A tiler for divide/product: usually a compact or gapped layout with small size."""
    return random_layout(rng, rng.choice(["compact", "gapped", "random"]), max_size=64)


def cases(op, rng):
    if op == "coalesce":
        a = random_layout(rng)
        if rng.random() < 0.3 and isinstance(a.shape, tuple):
            profile = tuple(1 for _ in range(rng.randint(1, len(a.shape))))
            return {"a": str(a), "profile": str(profile), **run(lambda: cute.coalesce(a, profile))}
        return {"a": str(a), **run(lambda: cute.coalesce(a))}
    if op == "composition":
        a = random_layout(rng)
        b = random_layout(rng, max_size=64)
        return {"a": str(a), "b": str(b), **run(lambda: cute.composition(a, b))}
    if op == "complement":
        a = random_layout(rng)
        m = rng.randint(1, 2 * max(1, cute.cosize(a)))
        return {"a": str(a), "m": m, **run(lambda: cute.complement(a, m))}
    if op in ("logical_divide", "zipped_divide", "tiled_divide", "logical_product"):
        a = random_layout(rng)
        b = small_tiler(rng, a)
        fn = getattr(cute, op)
        return {"a": str(a), "b": str(b), **run(lambda: fn(a, b))}
    if op in ("right_inverse", "left_inverse"):
        a = random_layout(rng)
        fn = getattr(cute, op)
        return {"a": str(a), **run(lambda: fn(a))}
    raise ValueError(op)


OPS = ["coalesce", "composition", "complement", "logical_divide", "zipped_divide",
       "tiled_divide", "logical_product", "right_inverse", "left_inverse"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=2000)
    ap.add_argument("--out", default="tests/data/pycute")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for i, op in enumerate(OPS):
        rng = random.Random(20240 + i)
        with open(os.path.join(args.out, f"{op}.jsonl"), "w") as f:
            for _ in range(args.cases):
                f.write(json.dumps(cases(op, rng)) + "\n")


if __name__ == "__main__":
    main()
