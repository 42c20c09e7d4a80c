#!/usr/bin/env python3
"""Differential-test data for text pasted from Triton 3.9 that laycert reads whole: each case is
the exact text Triton prints (or a user writes for an older Gluon), the tensor shape, and the
bases Triton 3.9 converts that layout to at that shape.

Kinds:
- "tensor_type": a whole TTGIR tensor type, `tensor<128x64xf16, #ttg.blocked<{..}>>`, as MLIR
  prints a value's type (blocked, nvidia_mma v2/v3, dot_op, slice; shapes at and above the
  tile); laycert takes the shape from the type.
- "shared_linear": `#ttg.shared_linear<{offset = [..], block = [..]}, alignment = N>` as MLIR
  prints it inside a memdesc type; bases are invertible (Triton requires a surjective layout).
- "gluon_old": Triton 3.3 to 3.5's BlockedLayout with its CTA fields (`ctas_per_cga`,
  `cta_split_num`, `cta_order`), keyword (all fields, or some) and the 7-argument positional
  form, each for one CTA; the bases are Triton 3.9's for the same layout (its BlockedLayout no
  longer has these fields).

Usage: python3 bench/peers/gen_triton_pasted.py [OUT]  (default tests/data/triton/pasted.jsonl)
Checked with triton 3.9.0.
"""

import json
import os
import random
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_triton_fit as fit  # noqa: E402
from gen_triton_layouts import builder, write_cases  # noqa: E402

SEED = 20261126


def bases_of(ll):
    if hasattr(ll, "offset_bases"):
        return {"offset": ll.offset_bases, "block": ll.block_bases}
    return {"register": ll.reg_bases, "lane": ll.lane_bases, "warp": ll.warp_bases,
            "block": ll.block_bases}


def tensor_types(b, rng):
    elems = [("f16", b.get_half_ty), ("bf16", b.get_bf16_ty), ("f32", b.get_float_ty),
             ("i8", b.get_int8_ty), ("i32", b.get_int32_ty)]
    makers = []
    for rank in (1, 2, 3):
        makers.append(lambda rank=rank: fit.blocked(rank, rng))
    for rank in (2, 3):
        makers.append(lambda rank=rank: fit.mma2(rank, rng))
        makers.append(lambda rank=rank: fit.dot(rng, "mma2", rank))
        makers.append(lambda rank=rank: fit.slice_of(rng, "blocked", rank))
    makers.append(lambda: fit.mma3(rng))
    out = []
    for make in makers:
        for _ in range(6):
            layout, tile = make()
            for shape in (tile, [t * 2 for t in tile]):
                _name, ty = rng.choice(elems)
                text = str(b.get_distributed_ty(ty(), shape, layout._to_ir(b)))
                ll = b.to_linear_layout(layout._to_ir(b), shape)
                out.append({"kind": "tensor_type", "text": text, "shape": shape, **bases_of(ll)})
    return out


def invertible_bases(logs, rng):
    """Bases of an invertible F2 map onto a tensor of shape 2^logs: the unit bases, shuffled,
    each XOR-ed with some earlier ones (row operations keep the map invertible)."""
    rank = len(logs)
    units = [[(1 << j) if d == dim else 0 for d in range(rank)]
             for dim in range(rank) for j in range(logs[dim])]
    rng.shuffle(units)
    out = []
    for u in units:
        v = list(u)
        for w in out:
            if rng.random() < 0.25:
                v = [x ^ y for x, y in zip(v, w)]
        out.append(v)
    return out


def shared_linears(b, rng):
    import triton.experimental.gluon.language as ttgl

    out = []
    for _ in range(60):
        rank = rng.randint(1, 3)
        logs = [rng.randint(0, 4) for _ in range(rank)]
        if sum(logs) == 0:
            logs[0] = 1
        bases = invertible_bases(logs, rng)
        nblock = rng.choice([0, 0, 1, 2]) if len(bases) > 2 else 0
        offset, block = bases[:len(bases) - nblock], bases[len(bases) - nblock:]
        layout = ttgl.SharedLinearLayout(offset, block, rng.choice([4, 16, 128, 1024]))
        shape = [1 << x for x in logs]
        ty = str(b.get_shared_mem_desc_ty(b.get_half_ty(), shape, layout._to_ir(b), shape))
        m = re.search(r"(#ttg\.shared_linear<.*>), #ttg\.shared_memory", ty)
        if not m:
            raise RuntimeError(f"unexpected type text {ty!r}")
        ll = b.to_linear_layout(layout._to_ir(b), shape)
        out.append({"kind": "shared_linear", "text": m.group(1), "shape": shape, **bases_of(ll)})
    return out


def gluon_old(b, rng):
    out = []
    for rank in (1, 2, 3):
        for _ in range(10):
            layout, tile = fit.blocked(rank, rng)
            spt, tpw, wpc, order = (layout.size_per_thread, layout.threads_per_warp,
                                    layout.warps_per_cta, layout.order)
            ones = [1] * rank
            rev = list(reversed(range(rank)))
            cta_order = list(range(rank))
            rng.shuffle(cta_order)
            head = (f"size_per_thread={spt}, threads_per_warp={tpw}, warps_per_cta={wpc}, "
                    f"order={order}")
            texts = [
                f"ttgl.BlockedLayout({head}, ctas_per_cga={ones}, cta_split_num={ones}, "
                f"cta_order={rev})",
                f"ttgl.BlockedLayout({spt}, {tpw}, {wpc}, {order}, {ones}, {ones}, {cta_order})",
                f"BlockedLayout({head}, cta_order={cta_order})",
                f"gl.BlockedLayout({spt}, {tpw}, {wpc}, {order}, {ones})",
            ]
            for shape in (tile, [t * 2 for t in tile]):
                ll = b.to_linear_layout(layout._to_ir(b), shape)
                for text in texts:
                    out.append({"kind": "gluon_old", "text": text, "shape": shape, **bases_of(ll)})
    return out


def audit(b):
    """The strings of the session-24 audit, with Triton 3.9's bases (the audit elided some
    bases; these are complete)."""
    import triton.experimental.gluon.language as ttgl

    blocked = ttgl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])
    shared = ttgl.SharedLinearLayout([[0, 1], [0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], [], 16)
    cases = [
        ("tensor_type", "tensor<128x64xf16, #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp "
         "= [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>>", blocked, [128, 64]),
        ("shared_linear", "#ttg.shared_linear<{offset = [[0, 1], [0, 2], [0, 4], [1, 0], [2, 0], "
         "[4, 0]]}, alignment = 16>", shared, [8, 8]),
        ("gluon_old", "ttgl.BlockedLayout(size_per_thread=[1, 8], threads_per_warp=[4, 8], "
         "warps_per_cta=[4, 1], order=[1, 0], ctas_per_cga=[1, 1], cta_split_num=[1, 1], "
         "cta_order=[1, 0])", blocked, [128, 64]),
        ("gluon_old", "ttgl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0], [1, 1], [1, 1], [1, 0])",
         blocked, [128, 64]),
    ]
    return [{"kind": k, "text": t, "shape": shape,
             **bases_of(b.to_linear_layout(layout._to_ir(b), shape))}
            for k, t, layout, shape in cases]


def main():
    out_path = sys.argv[1] if len(sys.argv) > 1 else "tests/data/triton/pasted.jsonl"
    rng = random.Random(SEED)
    _ctx, b = builder()
    cases = audit(b) + tensor_types(b, rng) + shared_linears(b, rng) + gluon_old(b, rng)
    write_cases(out_path, [json.dumps(c, separators=(", ", ": ")) for c in cases])


if __name__ == "__main__":
    main()
