#!/usr/bin/env python3
"""The atom catalog of issue 16, as data, and the oracle vectors that check it.

Facts come from three places, none of whose code is copied:
  - tensor-layouts 0.3.2 (pip `tensor-layouts`): the (thread, value) -> offset layouts of its
    NVIDIA MMA/copy atoms (atoms_nv), Intel XMX/AMX atoms (atoms_xe, atoms_amx) and AMD atoms
    that Gluon cannot build; each written as a CuTe TV layout with its tile;
  - Triton 3.9 Gluon: AMD MFMA/WMMA accumulators (AMDMFMALayout / AMDWMMALayout, one warp) and
    their operands (DotOperandLayout), written as `#ttg.linear` attributes with the tile shape;
  - the CuTe DSL 4.8.1 (pip `nvidia-cutlass-dsl`): Blackwell TMEM load/store (tcgen05.ld/st)
    TV layouts, which tensor-layouts does not have (gen_atoms_cutedsl.py prints them).

Writes corpus/data/atoms/{sm61_sm75_mma,sm80_sm90_mma_ext,sm90_gmma_ext,sm100_umma,sm120_mma,
copy_ext,amd_mfma,amd_wmma,intel_xmx}.toml and tests/data/atoms/tensor_layouts.jsonl: for every
atom taken from tensor-layouts, its size and a hash of tensor-layouts' OWN evaluation of the
layout at every flat (thread, value) index (see `digest`), which corpus/tests/atom_oracles.rs
recomputes from laycert's evaluation of the stored text. Atoms already in the hand-written files
(sm80_mma.toml, copy.toml) are not repeated; their oracle records are still written.

Deterministic. Run from the repository root:  python3 bench/peers/gen_atoms.py
"""
import json
import math
import os
import re
import sys

from tensor_layouts.atoms import CopyAtom, MMAAtom
import tensor_layouts.atoms_amd as tl_amd
import tensor_layouts.atoms_amx as tl_amx
import tensor_layouts.atoms_nv as tl_nv
import tensor_layouts.atoms_xe as tl_xe

ATOMS = "corpus/data/atoms"
ORACLE = "tests/data/atoms/tensor_layouts.jsonl"
P = (1 << 61) - 1


def digest(values):
    """h = fold (h * 1000003 + v + 1) mod 2^61-1, from 0: the same in the Rust test."""
    h = 0
    for v in values:
        h = (h * 1000003 + v + 1) % P
    return h


def text(t):
    if isinstance(t, int):
        return str(t)
    return "(" + ",".join(text(x) for x in t) + ")"


def size(t):
    return t if isinstance(t, int) else math.prod(size(x) for x in t)


def atoms_of(module):
    seen = {}
    for v in vars(module).values():
        items = v if isinstance(v, (list, tuple)) else [v]
        for x in items:
            if isinstance(x, (MMAAtom, CopyAtom)):
                seen.setdefault(x.name, x)
    return seen


def existing_names():
    names = set()
    for f in ("sm80_mma.toml", "copy.toml", "sm90_gmma.toml", "axe.toml", "sm90_smem.toml",
              "triton.toml"):
        with open(os.path.join(ATOMS, f)) as fh:
            names |= set(re.findall(r'^name = "([^"]+)"', fh.read(), re.M))
    return names


def flat(t):
    return [t] if isinstance(t, int) else [x for y in t for x in flat(y)]


def values(layout, step=1):
    """tensor-layouts' layout at flat indices 0, step, 2*step, ...: its own evaluation for small
    layouts; for large ones the colexicographic sum over its (shape, stride), which is the
    definition (checked equal to its evaluation on the first 4096 indices)."""
    n = size(layout.shape)
    if n <= 4096:
        return [layout(i) for i in range(0, n, step)]
    shape, stride = flat(layout.shape), flat(layout.stride)
    if isinstance(layout.shape, int):
        shape, stride = [layout.shape], [layout.stride]
    out = []
    for i in range(0, n, step):
        r, v = i, 0
        for s, d in zip(shape, stride):
            v += (r % s) * d
            r //= s
        out.append(v)
    assert all(layout(i) == out[i // step] for i in range(0, min(n, 4096), step))
    return out


def step_of(layout):
    """The Rust test evaluates every step-th flat index: at most 65536 points per layout."""
    return -(-size(layout.shape) // 65536)


def tv_text(layout, tile):
    return f"{text(layout.shape)}:{text(layout.stride)} -> {text(tile)}"


def family(name):
    if name.startswith(("SM61", "SM70", "SM75_16x8", "SM75_8x8")):
        return "sm61_sm75_mma"
    if name.startswith(("SM80_", "SM89_", "SM90_16x8")) and "CP_ASYNC" not in name:
        return "sm80_sm90_mma_ext"
    if name.startswith("SM90_64"):
        return "sm90_gmma_ext"
    if name.startswith("SM100"):
        return "sm100_umma"
    if name.startswith("SM120"):
        return "sm120_mma"
    return "copy_ext"


HEADERS = {
    "sm61_sm75_mma": "Pascal dp4a/dp2a (SM61), Volta mma.sync m8n8k4 (SM70, quad-pair), Turing "
    "mma.sync (SM75)",
    "sm80_sm90_mma_ext": "Ampere/Ada/Hopper mma.sync beyond sm80_mma.toml: f32/bf16/tf32/int/"
    "binary/fp8/f64/complex",
    "sm90_gmma_ext": "Hopper wgmma (GMMA) atoms by instruction: A and B from shared memory "
    "(one descriptor for the warpgroup: thread mode 128:0), C/D in registers",
    "sm100_umma": "Blackwell tcgen05.mma (UMMA) atoms: one thread issues, A/B in smem, D in "
    "tensor memory; thread mode 1:0",
    "sm120_mma": "Blackwell GeForce (SM120) mma.sync fp8, dense and sparse",
    "copy_ext": "Copy atoms beyond copy.toml (bits): shuffles, cp.async, the missing ldmatrix/"
    "stmatrix halves",
    "intel_xmx": "Intel Xe DPAS (XMX) and AMX tile atoms",
    "amd_mfma": "AMD CDNA MFMA atoms (64-lane wavefront)",
    "amd_wmma": "AMD RDNA WMMA atoms (32-lane wave)",
}

NV_SOURCES = [
    ("SM61", "include/cute/atom/mma_traits_sm61.hpp"),
    ("SM70", "include/cute/atom/mma_traits_sm70.hpp"),
    ("SM75_U", "include/cute/atom/copy_traits_sm75.hpp"),
    ("SM75", "include/cute/atom/mma_traits_sm75.hpp"),
    ("SM80_CP", "include/cute/atom/copy_traits_sm80.hpp"),
    ("SM80", "include/cute/atom/mma_traits_sm80.hpp"),
    ("SM89", "include/cute/atom/mma_traits_sm89.hpp"),
    ("SM90_U", "include/cute/atom/copy_traits_sm90.hpp"),
    ("SM90_64", "include/cute/atom/mma_traits_sm90_gmma.hpp"),
    ("SM90", "include/cute/atom/mma_traits_sm90.hpp"),
    ("SM100", "include/cute/atom/mma_traits_sm100.hpp"),
    ("SM120", "include/cute/atom/mma_traits_sm120.hpp"),
    ("SM50", "include/cute/atom/copy_traits_sm50.hpp"),
]


def nv_source(name, what):
    hdr = next(h for p, h in NV_SOURCES if name.startswith(p))
    return f"tensor-layouts 0.3.2 atoms_nv.{name} (after CUTLASS {hdr}, {what})"


def entry(name, source, layout, note=None, shape=None, key="layout"):
    out = ["[[atom]]", f'name = "{name}"', f'source = "{source}"', f'{key} = "{layout}"']
    if shape is not None:
        out.append(f"shape = [{', '.join(map(str, shape))}]")
    if note:
        out.append(f'note = "{note}"')
    return "\n".join(out)


def mma_tiles(a):
    m, n, k = a.shape_mnk
    return {"A": (a.a_layout, (m, k)), "B": (a.b_layout, (n, k)), "C": (a.c_layout, (m, n))}


def fit_tile(layout, tile):
    """tensor-layouts' tile, or a 1-D tile of the cosize where its offsets leave it (the CDNA
    4x4x4 MFMA's 16 blocks)."""
    vals = values(layout)
    if max(vals) < math.prod(tile):
        return tile, None
    return (max(vals) + 1,), f"offsets exceed the {tile[0]}x{tile[1]} tile: a 1-D tile"


def write(files, fam, block):
    files.setdefault(fam, []).append(block)


def tl_atoms(files, oracle, existing, module, fam_of, src_of):
    for name, a in sorted(atoms_of(module).items()):
        if isinstance(a, MMAAtom):
            parts = [(op, lay, tile, "layout") for op, (lay, tile) in mma_tiles(a).items()]
            thr = f"thr_id {a.thr_id}" if a.thr_id is not None else None
        else:
            parts = []
            for op, lay in (("src", a.src_layout_bits), ("dst", a.dst_layout_bits)):
                parts.append((op, lay, (max(values(lay)) + 1,), "bits"))
            thr = None
        for op, lay, tile, key in parts:
            full = f"{name}.{op}"
            if key == "layout":
                tile, why = fit_tile(lay, tile)
            else:
                why = None
            st = step_of(lay)
            oracle.append({"atom": full, "size": size(lay.shape), "step": st,
                           "digest": digest(values(lay, st)), "first": values(lay)[:8],
                           "tile": list(tile)})
            if full in existing:
                continue
            what = {"A": "ALayout", "B": "BLayout", "C": "CLayout", "src": "SrcLayout (bits)",
                    "dst": "DstLayout (bits)"}[op]
            note = "; ".join(x for x in (a.ptx, thr, why) if x).replace('"', "'")
            write(files, fam_of(name), entry(full, src_of(name, what), tv_text(lay, tile), note,
                                             key=key))


def main():
    files = {}
    oracle = []
    existing = existing_names()
    tl_atoms(files, oracle, existing, tl_nv, family, nv_source)
    xe_src = lambda n, w: f"tensor-layouts 0.3.2 atoms_xe.{n} ({w}; Intel Xe DPAS)"  # noqa: E731
    amx_src = lambda n, w: f"tensor-layouts 0.3.2 atoms_amx.{n} ({w}; Intel AMX tile)"  # noqa
    tl_atoms(files, oracle, existing, tl_xe, lambda n: "intel_xmx", xe_src)
    tl_atoms(files, oracle, existing, tl_amx, lambda n: "intel_xmx", amx_src)
    import gen_atoms_amd  # Gluon-derived AMD atoms (falls back to tensor-layouts facts)

    gen_atoms_amd.run(files, oracle, existing, tl_amd, entry, tv_text, fit_tile, values, digest,
                      size, mma_tiles, step_of)
    for fam, blocks in sorted(files.items()):
        head = ("# GENERATED by bench/peers/gen_atoms.py; edit that script, not this file.\n"
                f"# {HEADERS[fam]}.\n# A is (M,K), B is (N,K), C is (M,N), each flattened "
                "column-major; copy atoms index bits.\n")
        with open(os.path.join(ATOMS, fam + ".toml"), "w") as f:
            f.write(head + "\n" + "\n\n".join(blocks) + "\n")
        print(f"{fam}: {len(blocks)} atoms")
    os.makedirs(os.path.dirname(ORACLE), exist_ok=True)
    with open(ORACLE, "w") as f:
        for r in sorted(oracle, key=lambda r: r["atom"]):
            f.write(json.dumps(r, separators=(",", ":")) + "\n")
    print(f"{len(oracle)} tensor-layouts oracle records")
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    main()
