#!/usr/bin/env python3
"""Test data for `#ttg.generic_linear`: the attribute text Triton itself prints.

Triton 3.9 prints a distributed linear layout whose bases are not a permutation of unit vectors
(after dropping zero bases) as `#ttg.generic_linear<{register = .., lane = .., warp = ..,
block = ..}>` (`#ttg.linear` requires the permutation; the generic form's verifier lets
register, lane and block bases move in one dim only). For random (fixed seed) layouts of rank
1 to 3 with XOR-combined bases, Gluon builds the layout and MLIR prints it; the case keeps the
bases it was built from, which is what the attribute denotes. (Gluon's `to_linear_layout`
cannot convert these: it wraps its result in a `#ttg.linear` and aborts.) One JSON line per
case:
    {"attr": "#ttg.generic_linear<{...}>", "shape": [..], "register": .., "lane": ..,
     "warp": .., "block": ..}

Usage: python3 bench/peers/gen_triton_generic_linear.py [OUT]
       (default tests/data/triton/generic_linear.jsonl). Checked with triton 3.9.0.
"""

import json
import random
import sys

from gen_triton_layouts import attr_text, builder, in_child, write_cases

SEED = 20261126


def random_layout(rng):
    """Bases over `rank` dims: each dim's bits XOR-mixed among themselves (Triton's verifier
    lets register, lane and block bases move in one dim only), permuted, split into register,
    lane (5) and warp (whose bases may also mix dims); maybe a zero register basis."""
    import triton.experimental.gluon.language as ttgl

    rank = rng.choice([1, 2, 2, 3])
    logs = [rng.randint(1, 4) for _ in range(rank)]
    while sum(logs) < 7:
        logs[rng.randrange(rank)] += 1
    per_dim = []
    for d in range(rank):
        vals = [1 << k for k in range(logs[d])]
        for _ in range(rng.randint(0, 2) if len(vals) > 1 else 0):
            i, j = rng.sample(range(len(vals)), 2)
            vals[i] ^= vals[j]
        per_dim += [[v if e == d else 0 for e in range(rank)] for v in vals]
    rng.shuffle(per_dim)
    lanes, warps = per_dim[:5], per_dim[5 : 5 + rng.randint(0, 2)]
    regs = per_dim[5 + len(warps) :]
    if warps and rank > 1 and rng.random() < 0.5:
        other = rng.choice(lanes + regs)
        warps[0] = [x ^ y for x, y in zip(warps[0], other)]
    if rng.random() < 0.3:
        regs.insert(rng.randrange(len(regs) + 1), [0] * rank)
    shape = [1 << x for x in logs]
    layout = ttgl.DistributedLinearLayout(
        reg_bases=regs, lane_bases=lanes, warp_bases=warps, block_bases=[], shape=shape
    )
    return layout, shape


def printed(b, layout, shape):
    """MLIR's print of the attribute, from a forked child, or None where Triton's verifier
    aborts the process."""
    text, _why = in_child(lambda _: attr_text(b, layout, shape), None, quiet=True)
    return text


def main():
    out_path = sys.argv[1] if len(sys.argv) > 1 else "tests/data/triton/generic_linear.jsonl"
    rng = random.Random(SEED)
    _ctx, b = builder()
    lines = []
    for _ in range(400):
        if len(lines) == 60:
            break
        layout, shape = random_layout(rng)
        text = printed(b, layout, shape)
        if text is None or "generic_linear" not in text:
            continue  # refused by Triton's verifier, or the mix stayed a permutation
        case = {"attr": text, "shape": shape, "register": layout.reg_bases,
                "lane": layout.lane_bases, "warp": layout.warp_bases, "block": []}
        lines.append(json.dumps(case, separators=(", ", ": ")))
    write_cases(out_path, lines)


if __name__ == "__main__":
    main()
