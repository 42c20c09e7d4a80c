#!/usr/bin/env python3
"""Differential-test data for laycert's reading of TVM data-layout strings (`"NCHW16c"`), generated
by TVM itself.

For each case TVM (apache-tvm 0.27, `tvm.s_tir.sbijective_layout`, formerly
`tvm.tir.bijective_layout`) builds the bijective layout from `src` to `dst`, gives the shape of
the transformed buffer (`forward_shape`) and the transformed index of source coordinates
(`forward_index`). The offset of a source coordinate is its transformed index flattened row-major
over TVM's transformed shape.

Fields (one JSON line per case):
- "src", "dst": the layout strings ("src" is "" for a layout alone: laycert reads
  `layout("NCHW16c")` as the map from its primal axes, in order, and this script gives TVM that
  primal layout as the source);
- "shape": the source buffer's shape (a subordinate axis's extent is its factor);
- "tvm_error": TVM's message where it refuses the layouts or the pair, else null;
- "tvm_shape": `forward_shape`, or null where TVM refuses;
- "padded": whether `tvm_shape` holds more elements than the source (TVM pads a primal axis
  whose extent is no multiple of the new factor);
- "offsets": the offset of every source coordinate in row-major order (shapes of at most 4096
  elements); else "points": [[coord, offset], ..], the corners and 256 sampled coordinates
  (neither field where TVM refuses or pads);
- "strided": on shapes of at most 2^17 elements, whether the offset function over the row-major
  flat index is a strided map (an Axe shard; the scan of `gen_tvm_index_map.is_strided` over TVM's
  offset of every coordinate), else null: re-splitting
  a primal axis by a factor that does not divide the old one (`NCHW2c` -> `NCHW3c`) is none;
- "kind": the family the case was drawn from.

Usage: python3 bench/peers/gen_tvm_data_layout.py [OUT]  (default tests/data/tvm/data_layout.jsonl)
Checked with apache-tvm 0.27.0.post1 (`pip install apache-tvm`).
"""

import itertools
import json
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_tvm_index_map import is_strided  # noqa: E402

SEED = 20261127
CASES = 400
FULL = 4096
SCANNED = 1 << 17


def primal_of(layout):
    return "".join(ch for ch in layout if ch.isupper())


def random_layout(rng, letters, factors):
    """A valid layout over `letters`: a permutation, with subordinate axes for some letters
    placed anywhere after a random point."""
    axes = list(letters)
    rng.shuffle(axes)
    for letter in letters:
        if rng.random() < 0.4:
            pos = rng.randint(0, len(axes))
            axes.insert(pos, f"{rng.choice(factors)}{letter.lower()}")
    return "".join(axes)


def invalid_layout(rng):
    return rng.choice(
        [
            "NC4HW",
            "NCHWc",
            "NCHW0c",
            "NCHW4c2c",
            "NCH16w",
            "NCHW16x",
            "NCC",
            "NC_HW",
            "nchw",
            "NCHW4",
        ]
    )


def source_shape(rng, src, extents):
    shape = []
    for ax in split_axes(src):
        if ax[-1].islower():
            shape.append(int(ax[:-1]))
        else:
            shape.append(extents[ax])
    return shape


def split_axes(layout):
    axes, factor = [], ""
    for ch in layout:
        if ch.isdigit():
            factor += ch
        else:
            axes.append(factor + ch)
            factor = ""
    return axes


def flat(idx, shape):
    off = 0
    for i, s in zip(idx, shape):
        off = off * s + i
    return off


def main():
    from tvm import s_tir

    out = sys.argv[1] if len(sys.argv) > 1 else "tests/data/tvm/data_layout.jsonl"
    rng = random.Random(SEED)
    rows = []
    named = [
        ("NCHW", "NCHW16c", [2, 32, 3, 3]),
        ("NCHW", "NCHW4c", [1, 12, 2, 5]),
        ("NCHW", "NHWC", [2, 3, 4, 5]),
        ("NCHW16c", "NCHW", [2, 2, 3, 3, 16]),
        ("NCHW16c", "NCHW4c", [1, 2, 2, 2, 16]),
        ("NCHW2c", "NCHW3c", [2, 3, 2, 2, 2]),
        ("OIHW", "OIHW4i16o", [32, 8, 3, 3]),
        ("", "OIHW4i16o", [32, 8, 3, 3]),
        ("", "NCHW16c", [2, 32, 3, 3]),
        ("NCHW", "NCHW16c", [2, 20, 3, 3]),
        ("NCHW", "NCHW3c", [2, 7, 4, 4]),
        ("NCHW", "N16cCHW", [2, 32, 2, 2]),
    ]
    for src, dst, shape in named:
        rows.append(case(s_tir, src, dst, shape, "named"))
    while len(rows) < CASES:
        n = rng.randint(1, 5)
        letters = rng.sample("NCHWDOIK", n)
        factors = [1, 2, 3, 4, 5, 8, 16]
        kind = rng.choice(["pair", "pair", "alone", "invalid", "mismatch"])
        if kind == "invalid":
            src, dst = "NCHW", invalid_layout(rng)
        elif kind == "mismatch":
            src = random_layout(rng, letters, factors)
            dst = random_layout(rng, letters[:-1] or ["X"], factors)
        else:
            src = "" if kind == "alone" else random_layout(rng, letters, factors)
            dst = random_layout(rng, letters, factors)
        prim = src if src else primal_of(dst) or "N"
        # Drawn again until the source has at most SCANNED elements (so "strided" is known).
        while True:
            extents = {}
            for letter in letters:
                # Mostly multiples of the factors in play, sometimes not (TVM pads).
                base = rng.choice([1, 2, 3, 4, 6, 8, 12, 16, 32, 48])
                extents[letter] = base if rng.random() < 0.8 else rng.choice([5, 7, 9, 10, 20])
            try:
                shape = source_shape(rng, prim, extents)
            except KeyError:
                shape = [2] * len(split_axes(prim))
            size = 1
            for e in shape:
                size *= e
            if size <= SCANNED:
                break
        rows.append(case(s_tir, src, dst, shape, kind))
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    with open(out, "w") as f:
        for r in rows:
            f.write(json.dumps(r, sort_keys=True) + "\n")
    print(f"{len(rows)} cases -> {out}", file=sys.stderr)


def case(s_tir, src, dst, shape, kind, rng=random.Random(SEED)):
    row = {"src": src, "dst": dst, "shape": shape, "kind": kind, "tvm_error": None}
    prim = src if src else primal_of(dst)
    try:
        b = s_tir.sbijective_layout(prim, dst)
        if b is None:
            raise ValueError("sbijective_layout gave None (an undefined layout)")
        tvm_shape = [int(x) for x in b.forward_shape(shape)]
    except Exception as e:  # noqa: BLE001 - TVM raises its own error types
        row["tvm_error"] = str(e).strip().splitlines()[-1][:200]
        row["tvm_shape"] = None
        return row
    row["tvm_shape"] = tvm_shape
    size = 1
    for s in shape:
        size *= s
    phys = 1
    for s in tvm_shape:
        phys *= s
    row["padded"] = phys != size
    row["strided"] = None
    if not row["padded"] and size <= SCANNED:
        offsets = [
            flat([int(x) for x in b.forward_index(list(idx))], tvm_shape)
            for idx in itertools.product(*[range(s) for s in shape])
        ]
        row["strided"] = is_strided(offsets)
        if size <= FULL:
            row["offsets"] = offsets
    if not row["padded"] and size > FULL:
        corners = itertools.product(*[(0, s - 1) for s in shape])
        sampled = ([rng.randrange(s) for s in shape] for _ in range(256))
        row["points"] = [
            [list(idx), flat([int(x) for x in b.forward_index(list(idx))], tvm_shape)]
            for idx in itertools.chain(corners, sampled)
        ]
    return row


if __name__ == "__main__":
    main()
