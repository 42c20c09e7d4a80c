"""Expression chains for `simplify`, `equiv-expr` and `validate`, valued by the reference.

An expression is a CuTe or Axe literal, `coalesce(E)` or `compose(E, F)`. Its value is a
layout (ref.py's tuples): coalesce and composition build the representation with pycute, and
the generator keeps a case only when that representation equals the definition pointwise
(`coalesce(L)(i) == L(i)`, `compose(A, B)(i) == A(B(i))` on every index of B), so the
reference never trusts pycute's algebra where it departs from the definition (cute.md).
"""

import json
import random
import re

import ref
import gen as G


def R(seed, *tags):
    return random.Random("-".join(map(str, (seed,) + tags)))


def cute_fn(l):
    return ref.pycute.Layout(l[1], l[2])


def value(e):
    """e: ('lit', layout) | ('coalesce', e) | ('compose', e, f). Returns a layout or None."""
    if e[0] == "lit":
        return e[1]
    if e[0] == "coalesce":
        v = value(e[1])
        if v is None or v[0] != "cute":
            return None
        c = ref.pycute.coalesce(cute_fn(v))
        L, C = cute_fn(v), c
        if any(L(i) != C(i) for i in range(ref.size(v))):
            return None
        return ("cute", c.shape, c.stride)
    if e[0] == "to_cute":
        # an exact conversion keeps the map over the Axe side's own domain, its flat index:
        # ONE top-level mode whose sub-modes are the Axe iters reversed, so the CuTe layout's
        # natural domain is that flat index too (laycert's `convert --to cute` form)
        v = value(e[1])
        if v is None or v[0] != "axe" or v[2] or any(x != 0 for x in v[3].values()) \
                or any(a != "m" for _, _, a in v[1]):
            return None
        D = list(reversed(v[1]))
        if len(D) == 1:
            return ("cute", D[0][0], D[0][1])
        return ("cute", (tuple(e for e, _, _ in D),), (tuple(s for _, s, _ in D),))
    if e[0] == "compose":
        a, b = value(e[1]), value(e[2])
        if a is None or b is None or a[0] != "cute" or b[0] != "cute":
            return None
        try:
            c = ref.pycute.composition(cute_fn(a), cute_fn(b))
        except Exception:  # noqa: BLE001
            return None
        A, B = cute_fn(a), cute_fn(b)
        n = ref.size(b)
        if ref.prod(ref.flat_shape(c.shape)) != n:
            return None
        for i in range(n):
            j = B(i)
            if not 0 <= j < ref.size(a) or A(j) != c(i):
                return None
        return ("cute", c.shape, c.stride)
    return None


def show(e):
    if e[0] == "lit":
        return ref.text(e[1])
    if e[0] in ("coalesce", "to_cute"):
        return f"{e[0]}({show(e[1])})"
    return f"compose({show(e[1])}, {show(e[2])})"


def parse_expr(s):
    """Reads an expression of the forms above (laycert's simplify output included)."""
    s = s.strip()
    m = re.fullmatch(r"(coalesce|to_cute)\((.*)\)", s)
    if m:
        inner = parse_expr(m.group(2))
        return None if inner is None else (m.group(1), inner)
    m = re.fullmatch(r"compose\((.*)\)", s)
    if m:
        body, depth = m.group(1), 0
        for i, ch in enumerate(body):
            depth += ch in "([<"
            depth -= ch in ")]>"
            if ch == "," and depth == 0:
                a, b = parse_expr(body[:i]), parse_expr(body[i + 1:])
                return None if a is None or b is None else ("compose", a, b)
        return None
    lit = ref.parse_any(s)
    return None if lit is None else ("lit", lit)


def rand_cute(rng, max_size=64):
    sh, st = G.rand_cute_flat(rng, max_size=max_size)
    st = [abs(x) for x in st]
    return G.cute_from_flat(sh, st, rng)


def rand_expr(rng, depth=0):
    c = rng.random()
    if depth >= 2 or c < 0.3:
        if rng.random() < 0.8:
            return ("lit", rand_cute(rng))
        # a coalescable/mergeable literal
        a, b = rng.randint(1, 6), rng.randint(1, 6)
        return ("lit", ("cute", (a, b), (1, a)))
    if c < 0.55:
        return ("coalesce", rand_expr(rng, depth + 1))
    a = rand_expr(rng, depth + 1)
    va = value(a)
    if va is None or va[0] != "cute":
        return a
    n = ref.size(va)
    divs = [d for d in range(1, n + 1) if n % d == 0]
    d = rng.choice(divs)
    k = rng.choice([x for x in divs if d * x <= n and (n // x) >= d] or [1])
    b = ("lit", ("cute", d, k) if rng.random() < 0.6 else ("cute", (d, n // d // k if n // d // k >= 1 else 1), (k, d * k)))
    return ("compose", a, b)


def expr_cases(seed, count, start):
    out = []
    for i in range(count):
        rng = R(seed, "ex", i)
        e = rand_expr(rng)
        v = value(e)
        if v is None:
            continue
        cid = f"ex{start + i}"
        if rng.random() < 0.15:
            # an Axe literal against its CuTe conversion (inside convert_to_cute_preserves_map's
            # domain), both orders: exercises the domain every step of the chain is decided over
            e1, e2 = rng.randint(1, 4), rng.randint(1, 4)
            x = ("lit", ("axe", [(e1, rng.randint(0, 4), "m"), (e2, rng.randint(0, 4), "m")], [], {}))
            pair = [x, ("to_cute", x)]
            if rng.random() < 0.5:
                pair.reverse()
            va, vb = value(pair[0]), value(pair[1])
            dom = ref.resolve(va, vb, None)
            truth = "invalid" if dom is None else ("equal" if ref.equal_over(va, vb, dom)[0] else "differ")
            out.append({"id": cid, "fam": "equiv_expr_convert", "kind": "equiv_expr", "a": show(pair[0]),
                        "b": show(pair[1]), "truth": truth, "domain": dom})
            continue
        if rng.random() < 0.4:
            out.append({"id": cid, "fam": "simplify", "kind": "simplify", "a": show(e)})
            continue
        c = rng.random()
        fsh, fst = ref.flat_shape(v[1]), ref.flat_shape(v[2])
        if c < 0.3:
            b = v
        elif c < 0.55:
            b = G.cute_to_axe_rev(fsh, fst)  # equal over the flat index only
        elif c < 0.7:
            b = G.cute_to_axe_same(fsh, fst)
        elif c < 0.85:
            co = ref.pycute.coalesce(cute_fn(v))
            b = ("cute", co.shape, co.stride)
        else:
            b = G.cute_from_flat(*G.mutate_flat(fsh, fst, rng), rng)
        dom = ref.resolve(v, b, None)
        if dom is None:
            truth = "invalid"
        else:
            truth = "equal" if ref.equal_over(v, b, dom)[0] else "differ"
        out.append({"id": cid, "fam": "equiv_expr", "kind": "equiv_expr", "a": show(e),
                    "b": ref.text(b), "truth": truth, "domain": dom})
    return out


def validate_cases(seed, count, start):
    out = []
    for i in range(count):
        rng = R(seed, "va", i)
        sh, st = G.rand_cute_flat(rng, rank=rng.randint(1, 3), max_size=64)
        a = G.cute_from_flat(sh, st, rng)
        c = rng.random()
        if c < 0.3:
            b = G.cute_to_axe_rev(sh, st)
        elif c < 0.5:
            b = G.cute_to_axe_same(sh, st)
        elif c < 0.7:
            b = G.cute_from_flat(*G.split_mode(sh, st, rng), rng)
        else:
            b = G.cute_from_flat(*G.mutate_flat(sh, st, rng), rng)
        shape = None
        if rng.random() < 0.3:
            shape = G.factorizations(ref.size(a), rng)
        dom = ref.resolve(a, b, shape)
        if dom is None:
            truth = "invalid"
        else:
            truth = "equal" if ref.equal_over(a, b, dom)[0] else "differ"
        rec = {"id": f"va{start + i}", "fam": "validate" + ("_shape" if shape else ""),
               "before": ref.text(a), "after": ref.text(b), "truth": truth, "domain": dom}
        if shape:
            rec["shape"] = shape
        out.append(rec)
    return out


def check_simplified(inp, best):
    """Post-check of simplify: the output's value equals the input's (None: cannot judge)."""
    e1, e2 = parse_expr(inp), parse_expr(best)
    if e1 is None or e2 is None:
        return None
    v1, v2 = value(e1), value(e2)
    if v1 is None or v2 is None:
        return None
    dom = ref.resolve(v1, v2, None)
    if dom is None:
        return "invalid"
    return "equal" if ref.equal_over(v1, v2, dom)[0] else "differ"


if __name__ == "__main__":
    for r in expr_cases(1, 10, 0):
        print(json.dumps(r))
