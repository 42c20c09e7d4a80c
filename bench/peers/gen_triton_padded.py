#!/usr/bin/env python3
"""Test data for laycert's `#ttg.padded_shared` import, from Triton 3.9's Gluon.

Each case: a padded shared layout as MLIR prints it (`#ttg.padded_shared<[32:+4] {order = [1,
0], shape = [64, 64]}>` for identity layouts built by `PaddedSharedLayout.with_identity_for`,
`{offset = [[..]], block = []}` for a random permutation of the offset bits), its
interval/padding pairs, the offset bases Gluon holds (offset bit -> tensor element) and the
tensor shape. Triton has no CPU conversion of the padding itself (its linear layout is only the
offset part), so the test computes each element's padded address from these bases and pairs by
the documented rule (`PaddedSharedLayout`'s docstring: after every `interval` elements,
`padding` elements are inserted; paddings of several intervals add up).

Usage: python3 bench/peers/gen_triton_padded.py [OUT]   (default tests/data/triton/padded.jsonl)
"""

import json
import os
import random
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_triton_layouts import builder, write_cases  # noqa: E402

SEED = 20261124


def text_of(b, layout, shape):
    ty = str(b.get_shared_mem_desc_ty(b.get_float_ty(), shape, layout._to_ir(b), shape))
    m = re.fullmatch(r"!ttg\.memdesc<[^,]*, (#ttg\.padded_shared<.*>), #ttg\.shared_memory, mutable>", ty)
    if not m:
        raise RuntimeError(f"unexpected type text {ty!r}")
    return m.group(1)


def main():
    import triton.experimental.gluon.language as ttgl

    out_path = sys.argv[1] if len(sys.argv) > 1 else "tests/data/triton/padded.jsonl"
    rng = random.Random(SEED)
    _ctx, b = builder()
    lines = []
    for i in range(60):
        rank = rng.choice([1, 2, 2, 2, 3])
        shape = [1 << rng.randint(0 if rank > 1 else 1, 6 if rank < 3 else 3) for _ in range(rank)]
        total = sum(s.bit_length() - 1 for s in shape)
        pairs = sorted({(1 << rng.randint(0, max(0, total)), 1 << rng.randint(0, 4))
                        for _ in range(rng.randint(1, 2))})
        pairs = [list(p) for p in dict(pairs).items()]  # one padding per interval
        order = list(range(rank))
        rng.shuffle(order)
        if i % 3 == 2:
            bits = [(d, j) for d in range(rank) for j in range(shape[d].bit_length() - 1)]
            rng.shuffle(bits)
            bases = [[(1 << j) if dd == d else 0 for dd in range(rank)] for d, j in bits]
            layout = ttgl.PaddedSharedLayout(pairs, bases, [], shape)
        else:
            layout = ttgl.PaddedSharedLayout.with_identity_for(pairs, shape, order)
        case = {"attr": text_of(b, layout, shape), "pairs": pairs,
                "offset": [list(x) for x in layout.offset_bases], "shape": shape}
        lines.append(json.dumps(case, separators=(", ", ": ")))
    write_cases(out_path, lines)


if __name__ == "__main__":
    main()
