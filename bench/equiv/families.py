#!/usr/bin/env python3
"""The equivalence benchmark's families, written once as data for every tool.

Each case is a pair (left, right) of the SAME map spelled differently, and a one-stride mutant
of the right side. A layout is its forward form: row-major digits `(extent, stride per axis)`
over the flat logical index, replica generators, an offset (axes m and n), and optionally a CuTe
swizzle on m. From that one description this script writes, per layout,
- `axe`: laycert's text (Axe `S[...] + R[...] + O`, or swizzled CuTe for family e),
- `cute`: CuTe text when the layout is a single-axis one without replicas or offsets (pycute
  and tensor-layouts read it; CuTe is colexicographic, so the digits are listed fastest first),
- `isl`: an ISL map `{ [x] -> [m, n] : exists digits ... }` (islpy), except for swizzles.

Families: (a) powers of two, (b) mixed radix and odd extents, (c) stride-0 and size-1 modes,
(d) overlapping and holed layouts, (e) swizzled, (f) Axe with replicas and offsets, (g) deep
hierarchical spellings of one map. Sizes 2^10 .. 2^30 and beyond.

Usage: python3 bench/equiv/families.py [OUT_JSON]   (default bench/equiv/families.json)
"""

import json
import sys


def lay(digits, reps=(), off=(0, 0), swizzle=None):
    return {"digits": [list(d) for d in digits], "reps": [list(r) for r in reps],
            "off": list(off), "swizzle": swizzle}


def split(digits, i, k):
    """Splits digit i (extent e, stride s) into (k, (e/k)*s), (e/k, s): the same map."""
    e, s = digits[i]
    assert e % k == 0
    inner = e // k
    return digits[:i] + [(k, tuple(v * inner for v in s)), (inner, s)] + digits[i + 1:]


def mutate(digits, i):
    e, s = digits[i]
    return digits[:i] + [(e, (s[0] + 1, s[1]))] + digits[i + 1:]


def axis_text(v):
    parts = [f"{x}@{a}" for x, a in zip(v, ("m", "n")) if x != 0]
    return "+".join(parts) if parts else "0@m"


def iters(ds):
    """Axe iters; every digit of these families strides along one axis (checked)."""
    ext, st = [], []
    for e, s in ds:
        nz = [(x, a) for x, a in zip(s, ("m", "n")) if x != 0]
        assert len(nz) <= 1, "families use one axis per digit"
        ext.append(str(e))
        st.append(f"{nz[0][0]}@{nz[0][1]}" if nz else "0@m")
    return f"({','.join(ext)}):({','.join(st)})"


def axe_text(l):
    if l["swizzle"]:
        assert not l["reps"] and l["off"] == [0, 0]
        ds = l["digits"]
        shape = ",".join(str(e) for e, _ in reversed(ds))
        stride = ",".join(str(s[0]) for _, s in reversed(ds))
        b, m, s = l["swizzle"]
        return f"Sw<{b},{m},{s}> o (({shape})):(({stride}))"
    t = f"S[{iters(l['digits'])}]"
    if l["reps"]:
        t += f" + R[{iters(l['reps'])}]"
    if l["off"] != [0, 0]:
        t += " + " + " + ".join(f"{x}@{a}" for x, a in zip(l["off"], ("m", "n")) if x != 0)
    return t


def cute_text(l):
    ds = l["digits"]
    if l["reps"] or l["off"] != [0, 0] or l["swizzle"] or any(s[1] != 0 for _, s in ds):
        return None
    shape = ",".join(str(e) for e, _ in reversed(ds))
    stride = ",".join(str(s[0]) for _, s in reversed(ds))
    return f"(({shape})):(({stride}))"


def isl_text(l):
    if l["swizzle"]:
        return None
    ds, rs = l["digits"], l["reps"]
    d = [f"d{i}" for i in range(len(ds))]
    r = [f"r{j}" for j in range(len(rs))]
    place, places = 1, []
    for e, _ in reversed(ds):
        places.append(place)
        place *= e
    places.reverse()
    cons = [f"0 <= {v} < {e}" for v, (e, _) in zip(d, ds)]
    cons += [f"0 <= {v} < {e}" for v, (e, _) in zip(r, rs)]
    cons.append("x = " + (" + ".join(f"{p}*{v}" for p, v in zip(places, d)) or "0"))
    for a, name in ((0, "m"), (1, "n")):
        expr = str(l["off"][a])
        for v, (_, st) in list(zip(d, ds)) + list(zip(r, rs)):
            if st[a] > 0:
                expr += f" + {st[a]}*{v}"
            elif st[a] < 0:
                expr += f" - {-st[a]}*{v}"
        cons.append(f"{name} = {expr}")
    ex = ", ".join(d + r)
    body = " and ".join(cons)
    return f"{{ [x] -> [m, n] : exists ({ex} : {body}) }}" if ex else f"{{ [x] -> [m, n] : {body} }}"


def case(family, name, left, right, mutant):
    size = 1
    for e, _ in left["digits"]:
        size *= e
    out = {"family": family, "name": name, "size": size}
    for key, l in (("left", left), ("right", right), ("mutant", mutant)):
        out[key] = {"axe": axe_text(l), "cute": cute_text(l), "isl": isl_text(l)}
    return out


def row_major(extents):
    """Compact row-major digits over axis m."""
    ds, s = [], 1
    for e in reversed(extents):
        ds.append((e, (s, 0)))
        s *= e
    return list(reversed(ds))


def cases():
    out = []
    # (a) powers of two: (2^a, 2^b) row-major vs its inner mode split.
    for k in (10, 20, 30, 40):
        a, b = k // 2, k - k // 2
        left = row_major([1 << a, 1 << b])
        right = split(left, 1, 1 << (b // 2))
        out.append(case("a", f"2^{k} row-major", lay(left), lay(right), lay(mutate(right, 1))))
    # (b) mixed radix and odd extents.
    odd = [3, 5, 7, 11, 13, 17, 4]
    left = [(1021020, (1, 0))]
    out.append(case("b", "3*5*7*11*13*17*4 compact", lay(left), lay(row_major(odd)),
                    lay(mutate(row_major(odd), 3))))
    left = row_major([30000, 30000])
    right = split(left, 1, 100)
    out.append(case("b", "30000^2 regrouped", lay(left), lay(right), lay(mutate(right, 2))))
    left = [(1000003, (1, 0))]
    right = [(1000003, (1, 0)), (1, (5, 0))]
    out.append(case("b", "1000003 (prime)", lay(left), lay(right),
                    lay([(1000003, (2, 0))])))
    left = row_major([3 ** 19])
    right = row_major([3] * 19)
    out.append(case("b", "3^19 as 19 digits", lay(left), lay(right), lay(mutate(right, 9))))
    # (c) stride-0 and size-1 modes (broadcasts).
    for k in (10, 20, 30):
        n = 1 << (k // 2)
        left = [(n, (0, 0)), (n, (1, 0))]
        right = [(n // 4, (0, 0)), (1, (7, 0)), (4, (0, 0)), (n, (1, 0)), (1, (3, 0))]
        mut = [(n // 4, (0, 0)), (4, (1, 0)), (n, (1, 0))]
        out.append(case("c", f"2^{k} broadcast rows", lay(left), lay(right), lay(mut)))
    # (d) overlapping (stride smaller than the inner span) and holed layouts.
    for k in (10, 20, 30):
        a, b = k // 2, k - k // 2
        left = [(1 << a, ((1 << b) // 2, 0)), (1 << b, (1, 0))]  # rows overlap by half
        right = split(left, 1, 4)
        out.append(case("d", f"2^{k} overlapping rows", lay(left), lay(right),
                        lay(mutate(right, 0))))
        left = [(1 << a, ((1 << b) + 3, 0)), (1 << b, (1, 0))]  # padded rows: holes
        right = split(left, 0, 2)
        out.append(case("d", f"2^{k} padded rows", lay(left), lay(right), lay(mutate(right, 2))))
    # (e) swizzled: the same Sw<3,4,3> over two spellings of the row-major tile.
    for k in (10, 20, 30):
        a, b = k // 2, k - k // 2
        left = row_major([1 << a, 1 << b])
        right = split(left, 0, 2)
        out.append(case("e", f"2^{k} Sw<3,4,3>", lay(left, swizzle=(3, 4, 3)),
                        lay(right, swizzle=(3, 4, 3)), lay(mutate(right, 2), swizzle=(3, 4, 3))))
    # (f) Axe with replicas and offsets, two axes.
    for k in (10, 20, 30):
        a, b = k // 2, k - k // 2
        left = [(1 << a, (0, 1)), (1 << b, (1, 0))]
        reps = [(2, (1 << b, 0)), (2, (1 << (b + 1), 0))]
        right = split(left, 1, 8)
        out.append(case("f", f"2^{k} replicas + offset",
                        lay(left, reps=reps, off=(5, 2)),
                        lay(right, reps=[(4, (1 << b, 0))], off=(5, 2)),
                        lay(mutate(right, 1), reps=[(4, (1 << b, 0))], off=(5, 2))))
    # (g) deep hierarchical spellings: 2^k and 3*2^k fully split into 2s.
    for k in (20, 30, 40):
        left = [(1 << k, (1, 0))]
        right = row_major([2] * k)
        out.append(case("g", f"2^{k} as {k} digits", lay(left), lay(right), lay(mutate(right, k // 2))))
    left = [(3 << 20, (1, 0))]
    right = row_major([3] + [2] * 20)
    out.append(case("g", "3*2^20 as 21 digits", lay(left), lay(right), lay(mutate(right, 10))))
    return out


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "bench/equiv/families.json"
    with open(path, "w") as f:
        json.dump(cases(), f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
