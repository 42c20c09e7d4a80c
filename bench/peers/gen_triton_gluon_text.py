#!/usr/bin/env python3
"""Differential-test data for laycert's reading of Gluon constructor text: each case is a Gluon
layout written as Python source (keyword form: the dataclass's own repr, with a `ttgl.` prefix;
positional form: every field in order), the tensor shape, and the bases Triton 3.9 converts
that layout to at that shape.

Layouts come from the generators of `gen_triton_fit.py` (blocked, nvidia_mma v2/v3, dot_op,
slice, swizzled_shared, nvmma_shared) and `gen_triton_amd.py` (amd_mfma, amd_wmma, their dot_op
and slice, linear), at the tile shape and one larger.

Usage: python3 bench/peers/gen_triton_gluon_text.py [OUT]  (default tests/data/triton/gluon_text.jsonl)
Checked with triton 3.9.0.
"""

import dataclasses
import json
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_triton_amd as amd  # noqa: E402
import gen_triton_fit as fit  # noqa: E402
from gen_triton_layouts import builder, write_cases  # noqa: E402

SEED = 20261124


def positional(layout):
    """`Class(v1, v2, ...)` with every field in order (nested layouts positional too)."""
    def text(v):
        if dataclasses.is_dataclass(v):
            return positional(v)
        if isinstance(v, (list, tuple)):
            return "[" + ", ".join(text(x) for x in v) + "]"
        return repr(v)
    vals = [text(getattr(layout, f.name)) for f in dataclasses.fields(layout)]
    return f"{type(layout).__name__}({', '.join(vals)})"


def makers():
    out = []
    for rank in (1, 2, 3):
        out.append(("blocked", lambda r, rank=rank: fit.blocked(rank, r)))
        out.append(("swizzled_shared", lambda r, rank=rank: fit.swizzled(rank, r)))
    for rank in (2, 3):
        out.append(("nvidia_mma", lambda r, rank=rank: fit.mma2(rank, r)))
        out.append(("dot_op", lambda r, rank=rank: fit.dot(r, "mma2", rank)))
        out.append(("dot_op", lambda r, rank=rank: fit.dot(r, "blocked", rank)))
        out.append(("slice", lambda r, rank=rank: fit.slice_of(r, "blocked", rank)))
        out.append(("nvmma_shared", lambda r, rank=rank: fit.nvmma(rank, r)))
        out.append(("amd_mfma", lambda r, rank=rank: amd.mfma(rank, r)))
        out.append(("amd_wmma", lambda r, rank=rank: amd.wmma(rank, r)))
        out.append(("dot_op", lambda r, rank=rank: amd.dot("mfma", rank, r)))
        out.append(("slice", lambda r, rank=rank: amd.slice_of("wmma", rank, r)))
        out.append(("linear", lambda r, rank=rank: amd.linear(rank, r)))
    out.append(("nvidia_mma", lambda r: fit.mma3(r)))
    out.append(("slice", lambda r: fit.slice_of(r, "dot", 2)))
    return out


def main():
    out_path = sys.argv[1] if len(sys.argv) > 1 else "tests/data/triton/gluon_text.jsonl"
    rng = random.Random(SEED)
    _ctx, b = builder()
    lines = []
    for kind, make in makers():
        for _ in range(8):
            layout, tile = make(rng)
            shapes = [tile] if kind == "linear" else [tile, [t * 2 for t in tile]]
            for shape in shapes:
                ll = b.to_linear_layout(layout._to_ir(b), shape)
                case = {"kind": kind, "keyword": "ttgl." + repr(layout),
                        "positional": positional(layout), "shape": shape}
                if hasattr(ll, "offset_bases"):
                    case["offset"] = ll.offset_bases
                else:
                    case["register"] = ll.reg_bases
                    case["lane"] = ll.lane_bases
                    case["warp"] = ll.warp_bases
                case["block"] = ll.block_bases
                lines.append(json.dumps(case, separators=(", ", ": ")))
    write_cases(out_path, lines)


if __name__ == "__main__":
    main()
