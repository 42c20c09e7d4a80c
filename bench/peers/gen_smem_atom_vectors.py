#!/usr/bin/env python3
"""pycute's evaluation of the Hopper GMMA smem atoms, as 16-bit element offsets.

For every atom of corpus/data/atoms/sm90_smem.toml, the CUTLASS form `Sw<B,4,3> o L` (L indexes
bits; the swizzle acts on the BYTE address, as CUTLASS's smem_ptr_flag composition does) is
evaluated with pycute's Layout and Swizzle: bit offset o = L(c), stored at bit
8*Sw(o // 8) + o % 8. For each element coordinate of the 16-bit view (the unit-stride mode of L
divided by 16), in colexicographic index order, the element offset (bit offset / 16) is written.
Output: tests/data/pycute/sm90_smem_atoms.json (or argv[1]). Checked with nvidia-cutlass 4.2.
"""

import json
import re
import sys
import tomllib

import pycute


def parse(text):
    m = re.fullmatch(r"Sw<(\d+),(\d+),(\d+)> o \((\d+),(\d+)\):\((\d+),(\d+)\)", text)
    b, mm, s, e0, e1, d0, d1 = map(int, m.groups())
    return pycute.Swizzle(b, mm, s), pycute.Layout((e0, e1), (d0, d1))


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "tests/data/pycute/sm90_smem_atoms.json"
    with open("corpus/data/atoms/sm90_smem.toml", "rb") as f:
        atoms = tomllib.load(f)["atom"]
    result = {}
    for atom in atoms:
        sw, lay = parse(atom["cutlass"])
        unit = list(lay.stride).index(1)
        shape = list(lay.shape)
        shape[unit] //= 16
        offsets = []
        for i in range(shape[0] * shape[1]):
            c = [i % shape[0], i // shape[0]]  # colexicographic
            c[unit] *= 16
            o = lay(c[0], c[1])
            bit = 8 * sw(o // 8) + o % 8
            assert bit % 16 == 0, (atom["name"], c, bit)
            offsets.append(bit // 16)
        result[atom["name"]] = {"shape": shape, "offsets": offsets}
    with open(out, "w") as f:
        json.dump(result, f, sort_keys=True)
        f.write("\n")
    print(f"wrote {len(result)} atoms to {out}")


if __name__ == "__main__":
    main()
