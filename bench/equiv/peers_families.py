#!/usr/bin/env python3
"""Peers on the equivalence families (bench/equiv/families.json), timed on this machine.

- islpy `is_equal` on the two ISL maps (construction included), median of 5 runs; every
  family but the swizzled one (XOR is not written as an affine map here).
- pycute and tensor-layouts: enumeration `A(i) == B(i)` over every index where the layouts are
  CuTe (single axis, no replicas or offsets), run on the first 2^16 indices and scaled to the
  whole domain (marked extrapolated above 2^16).

Each verdict is checked: the equal pair must be equal, the mutant not (for enumerations on the
first 2^16 indices the mutant's difference may lie beyond them; then only the time is kept).

Usage: python3 bench/equiv/peers_families.py [FAMILIES_JSON] [OUT_JSON]
"""

import json
import statistics
import sys
import time

PREFIX = 1 << 16


def timed(fn, repeat):
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def isl_case(left, right):
    import islpy as isl

    def run():
        ctx = isl.Context()
        return isl.Map(left, context=ctx).is_equal(isl.Map(right, context=ctx))

    return timed(run, 5)


def parse_cute(text):
    shape, stride = text.split(":")
    shp = tuple(int(v) for v in shape.strip("()").split(","))
    std = tuple(int(v) for v in stride.strip("()").split(","))
    return shp, std


def enum_case(module, left, right, size):
    (sa, da), (sb, db) = parse_cute(left), parse_cute(right)
    if module == "pycute":
        import pycute

        la, lb = pycute.Layout((sa,), (da,)), pycute.Layout((sb,), (db,))
    else:
        import tensor_layouts as tl

        la, lb = tl.Layout((sa,), (da,)), tl.Layout((sb,), (db,))
    m = min(size, PREFIX)
    secs, same = timed(lambda: all(la(i) == lb(i) for i in range(m)), 3)
    return secs * size / m, same, size > m


def main():
    fam = sys.argv[1] if len(sys.argv) > 1 else "bench/equiv/families.json"
    out = sys.argv[2] if len(sys.argv) > 2 else "bench/equiv/peers_families.json"
    import islpy

    cases = json.load(open(fam))
    rows = []
    for c in cases:
        row = {"name": c["name"], "family": c["family"], "size": c["size"]}
        for key, want in (("right", True), ("mutant", False)):
            r = {}
            if c["left"]["isl"] and c[key]["isl"]:
                secs, eq = isl_case(c["left"]["isl"], c[key]["isl"])
                assert eq == want, (c["name"], key, "islpy", eq)
                r["islpy"] = {"seconds": secs}
            if c["left"]["cute"] and c[key]["cute"]:
                for mod in ("pycute", "tensor_layouts"):
                    secs, same, extra = enum_case(mod, c["left"]["cute"], c[key]["cute"], c["size"])
                    if want:
                        assert same, (c["name"], key, mod)
                    r[mod] = {"seconds": secs, "extrapolated": extra}
            row[key] = r
        print(json.dumps(row), flush=True)
        rows.append(row)
    with open(out, "w") as f:
        json.dump({"versions": {"islpy": islpy.__version__}, "cases": rows}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
