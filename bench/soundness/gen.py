#!/usr/bin/env python3
"""Generates the soundness campaign's cases (JSONL), each with its truth decided by the
reference (ref.py), which shares no code with laycert.

Usage: gen.py OUTDIR SCALE SEED [WORKER NWORKERS]
SCALE multiplies every family's count (quick: 1, full: see run.sh).

Files (one JSON object per line):
  equiv.jsonl    {"id","fam","a","b","shape"|null,"truth":"equal"|"differ"|"invalid","witness"?}
  rules.jsonl    {"id","fam","rule": text, "truth": "true"|"false", "path": "exhaustive"|"z3"}
  expr.jsonl     {"id","fam","kind":"simplify"|"equiv_expr","a","b"?, "truth"?}
  validate.jsonl {"id","fam","before","after","shape"?,"truth"}
  malformed.jsonl {"id","fam","target":"layout"|"rule"|"expr"|"shape_layout","text","shape"?}
"""

import json
import math
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ref  # noqa: E402
import exprs  # noqa: E402

SMALL_LIMIT = 4096


def R(seed, *tags):
    return random.Random("-".join(map(str, (seed,) + tags)))


# ---------------------------------------------------------------- random layouts

EXT = [1, 2, 2, 3, 4, 4, 5, 6, 8]
STR = [0, 1, 1, 2, 3, 4, 8, -1, -2, -3, 5, 16]


def rand_cute_flat(rng, rank=None, max_size=256):
    while True:
        n = rank or rng.randint(1, 4)
        sh = [rng.choice(EXT) for _ in range(n)]
        if ref.prod(sh) <= max_size:
            break
    st = [rng.choice(STR) for _ in range(n)]
    return sh, st


def nest(sh, st, rng):
    """Groups adjacent flat modes into nested tuples at random (the same flat modes)."""
    if len(sh) == 1:
        return sh[0], st[0]
    out_sh, out_st, i = [], [], 0
    while i < len(sh):
        k = rng.randint(1, len(sh) - i)
        if k == 1:
            out_sh.append(sh[i])
            out_st.append(st[i])
        else:
            out_sh.append(tuple(sh[i:i + k]))
            out_st.append(tuple(st[i:i + k]))
        i += k
    if len(out_sh) == 1:  # no 1-tuples: "(4):(5)" reads differently across tools
        return out_sh[0], out_st[0]
    return tuple(out_sh), tuple(out_st)


def cute_from_flat(sh, st, rng):
    s, d = nest(sh, st, rng)
    return ("cute", s, d)


def flat_modes(l):
    return ref.flat_shape(l[1]), ref.flat_shape(l[2])


def factorizations(n, rng, rank=None):
    """A random ordered factorization of n (any rank up to 4)."""
    primes, m, p = [], n, 2
    while m > 1 and p * p <= m:
        while m % p == 0:
            primes.append(p)
            m //= p
        p += 1
    if m > 1:
        primes.append(m)
    k = rank or rng.randint(1, 4)
    dims = [1] * k
    for q in primes:
        dims[rng.randrange(k)] *= q
    return dims


def mutate_flat(sh, st, rng):
    sh, st = list(sh), list(st)
    i = rng.randrange(len(sh))
    r = rng.random()
    if r < 0.35:
        st[i] += rng.choice([-1, 1, 2])
    elif r < 0.5:
        st[i] = 0 if st[i] != 0 else 1
    elif r < 0.6:
        st[i] = -st[i] if st[i] != 0 else -1
    elif r < 0.8 and len(sh) > 1:
        j = rng.randrange(len(sh))
        st[i], st[j] = st[j], st[i]
    elif len(sh) > 1:
        j = rng.randrange(len(sh))
        sh[i], sh[j] = sh[j], sh[i]
        st[i], st[j] = st[j], st[i]
    else:
        st[i] += 1
    return sh, st


def split_mode(sh, st, rng, colex=True):
    """Splits one flat mode e:d into (e1,e2):(d, e1*d) (colex) -- the same map."""
    cands = [i for i, e in enumerate(sh) if any(e % f == 0 for f in range(2, e))]
    if not cands:
        return sh, st
    i = rng.choice(cands)
    e = sh[i]
    f = rng.choice([f for f in range(2, e) if e % f == 0])
    sh = sh[:i] + [f, e // f] + sh[i + 1:]
    st = st[:i] + [st[i], st[i] * f] + st[i + 1:]
    return sh, st


def cute_to_axe_rev(sh, st):
    """CuTe flat modes read colex over [size] == Axe iters reversed, row-major."""
    return ("axe", [(e, d, "m") for e, d in zip(reversed(sh), reversed(st))], [], {})


def cute_to_axe_same(sh, st):
    return ("axe", [(e, d, "m") for e, d in zip(sh, st)], [], {})


AXES = ["m", "m", "laneid", "warpid", "reg", "tx"]


def rand_axe(rng, max_size=256, replicas=True):
    while True:
        n = rng.randint(1, 4)
        D = [(rng.choice(EXT), rng.choice(STR), rng.choice(AXES)) for _ in range(n)]
        if ref.prod(e for e, _, _ in D) <= max_size:
            break
    Rr = []
    if replicas and rng.random() < 0.4:
        Rr = [(rng.choice([2, 2, 3, 4]), rng.choice([1, 2, 4, 8, -1, 0, 32]), rng.choice(AXES))
              for _ in range(rng.randint(1, 2))]
    O = {}
    if rng.random() < 0.4:
        O[rng.choice(AXES)] = rng.choice([1, 3, 5, -2, 32])
    return ("axe", D, Rr, O)


ALIAS_OF = {"laneid": "lane", "warpid": "warp", "reg": "register", "tx": "thread", "m": "memory"}


def axe_variant(l, rng):
    """A transform of an Axe layout: map-preserving or a near miss (the reference decides)."""
    _, D, Rr, O = l
    D, Rr, O = list(D), list(Rr), dict(O)
    r = rng.random()
    if r < 0.15:  # split an iter (same map)
        i = rng.randrange(len(D))
        e, s, a = D[i]
        fs = [f for f in range(2, e) if e % f == 0]
        if fs:
            f = rng.choice(fs)
            D[i:i + 1] = [(f, (e // f) * s, a), (e // f, s, a)]
    elif r < 0.3:  # alias rename (same map)
        i = rng.randrange(len(D))
        e, s, a = D[i]
        D[i] = (e, s, ALIAS_OF.get(a, a))
    elif r < 0.4:  # tx into laneid/warpid (same map when the stride is 1 and extent 32k)
        D = [(e, s, "tx") if a in ("laneid",) else (e, s, a) for e, s, a in D]
    elif r < 0.5 and Rr:  # replica: permute, negative stride to offset (C1)
        i = rng.randrange(len(Rr))
        e, s, a = Rr[i]
        if rng.random() < 0.5:
            Rr[i] = (e, -s, a)
            O[a] = O.get(a, 0) + (e - 1) * s
        else:
            rng.shuffle(Rr)
    elif r < 0.58:  # replica C2 merge
        e1, s = rng.choice([2, 3, 4]), rng.choice([1, 2, 4])
        k, e2 = rng.randint(1, e1), rng.choice([2, 3])
        a = rng.choice(["m", "laneid"])
        Rr = Rr + [(e1, s, a), (e2, k * s, a)]
        l2 = ("axe", D, list(l[2]) + [(e1 + k * (e2 - 1), s, a)], O)
        return ("axe", D, Rr, O), l2
    elif r < 0.65:  # stride-0 iter on another axis (same map: zero components drop)
        i = rng.randrange(len(D))
        e, s, a = D[i]
        if s == 0:
            D[i] = (e, 0, rng.choice(AXES))
        else:
            D[i] = (e, s + rng.choice([-1, 1]), a)
    else:  # near miss
        i = rng.randrange(len(D))
        e, s, a = D[i]
        c = rng.random()
        if c < 0.4:
            D[i] = (e, s + rng.choice([-1, 1, 2]), a)
        elif c < 0.6:
            D[i] = (e, s, rng.choice(AXES))
        elif c < 0.8 and len(D) > 1:
            j = rng.randrange(len(D))
            D[i], D[j] = D[j], D[i]
        else:
            O[a] = O.get(a, 0) + rng.choice([-1, 1])
    return l, ("axe", D, Rr, O)


# ---------------------------------------------------------------- equivalence families

def decide(a, b, shape, rng):
    """Truth over the resolved domain (small: every coordinate)."""
    dom = ref.resolve(a, b, shape)
    if dom is None:
        return None, None, "invalid"
    if ref.prod(dom) <= SMALL_LIMIT:
        eq, w = ref.equal_over(a, b, dom)
        return dom, w, "equal" if eq else "differ"
    raise ValueError("large domain in a small family")


def as_read(l, shape):
    """The layout its text stands for: a `#ttg.linear` with Triton's in-dims on a tensor shape
    is fitted to it as Triton fits it (ref.triton_fit); None where that fit is undefined."""
    if l[0] == "linear" and shape is not None:
        return ref.parse_linear(ref.text(l), shape)
    return l


def emit_equiv(out, cid, fam, a, b, shape, rng, swap=True):
    ra, rb = as_read(a, shape), as_read(b, shape)
    if ra is None or rb is None:
        # Triton's fit is undefined for this text at this shape: laycert must refuse it.
        dom, w, truth = None, None, "invalid"
    else:
        dom, w, truth = decide(ra, rb, shape, rng)
    rec = {"id": cid, "fam": fam, "a": ref.text(a), "b": ref.text(b), "shape": shape,
           "truth": truth, "domain": dom}
    if w is not None:
        rec["witness"] = w
    out.write(json.dumps(rec) + "\n")
    return 1


def shape_choice(a, b, rng, allow_none=True):
    n = ref.size(a)
    na, nb = ref.natural(a)[0], ref.natural(b)[0]
    c = rng.random()
    if c < 0.3:
        return na
    if c < 0.5:
        return [n]
    if c < 0.7:
        return factorizations(n, rng)
    if c < 0.8:
        return nb if ref.prod(nb) == n else [n]
    return None if allow_none else na


def fam_cute_cute(out, seed, count, start):
    k = 0
    for i in range(count):
        rng = R(seed, "cc", i)
        sh, st = rand_cute_flat(rng)
        a = cute_from_flat(sh, st, rng)
        c = rng.random()
        if c < 0.2:
            b = cute_from_flat(sh, st, rng)  # regroup
        elif c < 0.35:
            b = cute_from_flat(*split_mode(sh, st, rng), rng)
        elif c < 0.45:
            co = ref.pycute.coalesce(ref.pycute.Layout(a[1], a[2]))
            b = ("cute", co.shape, co.stride)
        else:
            b = cute_from_flat(*mutate_flat(sh, st, rng), rng)
        shape = shape_choice(a, b, rng, allow_none=False)
        k += emit_equiv(out, f"cc{start + i}", "cute_cute", a, b, shape, rng)
    return k


def fam_cute_axe(out, seed, count, start):
    k = 0
    for i in range(count):
        rng = R(seed, "ca", i)
        sh, st = rand_cute_flat(rng)
        a = cute_from_flat(sh, st, rng)
        c = rng.random()
        if c < 0.35:
            b = cute_to_axe_rev(sh, st)
        elif c < 0.55:
            b = cute_to_axe_same(sh, st)
        elif c < 0.7:
            b = cute_to_axe_rev(*split_mode(sh, st, rng))
        else:
            b = cute_to_axe_rev(*mutate_flat(sh, st, rng))
        if rng.random() < 0.5:
            a, b = b, a
        shape = shape_choice(a, b, rng, allow_none=False)
        k += emit_equiv(out, f"ca{start + i}", "cute_axe", a, b, shape, rng)
    return k


def fam_axe_axe(out, seed, count, start):
    k = 0
    for i in range(count):
        rng = R(seed, "aa", i)
        a = rand_axe(rng)
        a, b = axe_variant(a, rng)
        n = ref.size(a)
        shape = [n] if rng.random() < 0.5 else factorizations(n, rng)
        if ref.size(b) != n:
            continue
        k += emit_equiv(out, f"aa{start + i}", "axe_axe", a, b, shape, rng)
    return k


def fam_alias(out, seed, count, start):
    """Aliased axes: thread ids split into laneid/warpid/wgid, and alias spellings."""
    k = 0
    for i in range(count):
        rng = R(seed, "al", i)
        w = rng.choice([1, 2, 4, 8])
        lanes = 32
        tx = ("axe", [(w * lanes, 1, "tx")], [], {})
        if rng.random() < 0.5:
            parts = [(w, 1, rng.choice(["warpid", "warp"])), (lanes, 1, rng.choice(["laneid", "lane"]))]
        else:
            parts = [(w, 32, rng.choice(["tx", "thread", "T"])), (lanes, 1, "laneid")]
        if w >= 4 and rng.random() < 0.3:
            parts = [(w // 4, 1, "wgid"), (4, 1, "wwid"), (lanes, 1, "laneid")]
        b = ("axe", parts, [], {})
        if rng.random() < 0.4:  # near miss
            j = rng.randrange(len(parts))
            e, s, a = parts[j]
            parts = list(parts)
            parts[j] = (e, s * 2 if rng.random() < 0.5 else s, "reg" if rng.random() < 0.5 else a)
            b = ("axe", parts, [], {})
        n = w * lanes
        shape = [n] if rng.random() < 0.5 else [w, lanes]
        a2 = tx
        if rng.random() < 0.3:  # CuTe TV view of the same threads: value 1
            a2 = ("tv", (n, 1), (1, 0), [n])
            shape = [n]
        if rng.random() < 0.5:
            a2, b = b, a2
        k += emit_equiv(out, f"al{start + i}", "alias", a2, b, shape, rng)
    return k


def fam_swizzle(out, seed, count, start):
    k = 0
    for i in range(count):
        rng = R(seed, "sw", i)
        bb, mm = rng.randint(0, 3), rng.randint(0, 3)
        ss = rng.choice([x for x in range(-4, 5) if abs(x) >= bb] or [bb])
        n_bits = rng.randint(3, 8)
        n = 1 << n_bits
        if rng.random() < 0.6:
            rows = 1 << rng.randint(0, n_bits)
            base = ("cute", (rows, n // rows), (n // rows, 1)) if rows > 1 else ("cute", n, 1)
        else:
            sh, st = [n], [1]
            sh, st = split_mode(sh, st, rng)
            base = cute_from_flat(sh, st, rng)
        a = ("swz", bb, mm, ss, base[1], base[2])
        c = rng.random()
        if c < 0.3:  # regroup the base (same map over the flat index)
            fsh, fst = flat_modes(base)
            nb = cute_from_flat(*split_mode(fsh, fst, rng), rng)
            b = ("swz", bb, mm, ss, nb[1], nb[2])
        elif c < 0.55:  # other swizzle parameters
            b2, s2 = bb + rng.choice([0, 1]), ss + rng.choice([-1, 0, 1])
            if abs(s2) < b2:
                s2 = b2
            b = ("swz", b2, mm + rng.choice([0, 1]), s2, base[1], base[2])
        elif c < 0.8:  # the F2 linear memory layout of the same map (offset -> logical)
            b = swizzle_as_linear(a)
            if b is None:
                continue
        else:
            b = ("swz", 0, 0, 0, base[1], base[2])
        shape = ref.natural(b)[0] if b[0] == "linear" else shape_choice(a, b, rng, allow_none=False)
        k += emit_equiv(out, f"sw{start + i}", "swizzle", a, b, shape, rng)
    return k


def swizzle_as_linear(a):
    """Sw o L as `#ttg.linear<{offset=..}>` over L's natural shape, when it is a bijection."""
    shape = ref.natural(a)[0]
    n = ref.prod(shape)
    if n & (n - 1) or any(s & (s - 1) for s in shape):
        return None
    ev = ref.Evaluator(a, shape)
    inv = {}
    for c in ref.coords(shape):
        (pt,) = ev.at(c)
        off = dict(pt).get("m", 0)
        inv[off] = list(c)
    if sorted(inv) != list(range(n)):
        return None
    bases = [inv[1 << k] for k in range(n.bit_length() - 1)]
    outs = [(f"dim{d}", s) for d, s in enumerate(shape)]
    return ("linear", [("offset", bases)], outs)


def fam_linear(out, seed, count, start):
    """Random F2 linear layouts against mutants, Axe sum-forms and aliased in-dims."""
    k = 0
    for i in range(count):
        rng = R(seed, "li", i)
        outs = [rng.randint(1, 3) for _ in range(rng.randint(1, 2))]
        total = sum(outs)
        nin = rng.randint(max(1, total - 1), total + 1)
        names = rng.sample(["register", "lane", "warp", "block"], rng.randint(1, 3))
        ins = [[] for _ in names]

        def rb():
            return [rng.randrange(1 << o) for o in outs]

        for j in range(nin):
            ins[rng.randrange(len(names))].append(rb())
        a = ("linear", [(nm, b) for nm, b in zip(names, ins)], [(f"dim{d}", 1 << o) for d, o in enumerate(outs)])
        c = rng.random()
        if c < 0.3:  # mutate one basis bit
            ins2 = [list(map(list, b)) for b in ins]
            cand = [(x, y) for x in range(len(ins2)) for y in range(len(ins2[x]))]
            if not cand:
                continue
            x, y = rng.choice(cand)
            d = rng.randrange(len(outs))
            ins2[x][y][d] ^= 1 << rng.randrange(outs[d])
            b = ("linear", [(nm, bb) for nm, bb in zip(names, ins2)], a[2])
        elif c < 0.45:  # swap two bases within a dim (same relation only if equal)
            ins2 = [list(map(list, bb)) for bb in ins]
            x = rng.randrange(len(ins2))
            if len(ins2[x]) < 2:
                continue
            p, q = rng.sample(range(len(ins2[x])), 2)
            ins2[x][p], ins2[x][q] = ins2[x][q], ins2[x][p]
            b = ("linear", [(nm, bb) for nm, bb in zip(names, ins2)], a[2])
        elif c < 0.6:  # rename an in-dim to its alias spelling (same relation)
            al = {"register": "reg", "lane": "laneid", "warp": "warpid", "block": "cta"}
            b = ("linear", [(al[nm] if rng.random() < 0.5 else nm, bb) for nm, bb in zip(names, ins)], a[2])
        elif c < 0.8:  # aliased in-dims: register AND reg (two inputs) vs the Axe sum-form
            e1, e2 = rng.randint(1, 2), rng.randint(1, 2)
            o = e1 + e2
            ra = [[1 << j] for j in range(e1)]
            rr = [[1 << (e1 + j)] for j in range(e2)]
            a = ("linear", [("register", ra), ("reg", rr)], [("dim0", 1 << o)])
            # Axe over x = (reg digits slow, register digits fast): reg-value + register-value
            b = ("axe", [(1 << e2, 1, "reg"), (1 << e1, 1, "reg")], [], {})
            if rng.random() < 0.5:
                a, b = b, a
            k += emit_equiv(out, f"li{start + i}", "linear_alias_indims", a, b, [1 << o], rng)
            continue
        else:  # the relation as a table compared with a fresh random layout of the same dims
            b = ("linear", [(nm, [rb() for _ in bb]) for nm, bb in zip(names, ins)], a[2])
        shape = [s for _, s in a[2]]
        k += emit_equiv(out, f"li{start + i}", "linear", a, b, shape, rng)
    return k


def fam_natural(out, seed, count, start):
    """No shape given and the natural shapes differ: exercises the claim-domain definition."""
    k = 0
    for i in range(count):
        rng = R(seed, "na", i)
        sh, st = rand_cute_flat(rng, rank=rng.randint(2, 3), max_size=128)
        a = cute_from_flat(sh, st, rng)
        c = rng.random()
        if c < 0.4:
            b = cute_to_axe_rev(sh, st) if rng.random() < 0.5 else cute_to_axe_same(sh, st)
        elif c < 0.7:
            b = cute_from_flat(*split_mode(sh, st, rng), rng)
        else:
            co = ref.pycute.coalesce(ref.pycute.Layout(a[1], a[2]))
            b = ("cute", co.shape, co.stride)
        if rng.random() < 0.5:
            a, b = b, a
        k += emit_equiv(out, f"na{start + i}", "natural_shapes", a, b, None, rng)
    return k


def fam_large(out, seed, count, start):
    """2^20..2^32 domains: equal by construction (checked at boundary + random coordinates),
    near misses with a reference-evaluated differing coordinate."""
    k = 0
    for i in range(count):
        rng = R(seed, "lg", i)
        target = rng.randint(20, 32)
        sh = []
        while ref.prod(sh) < (1 << target) // 8 or not sh:
            sh.append(rng.choice([2, 3, 4, 5, 7, 8, 16, 32, 64, 100, 128, 256, 1024]))
        if ref.prod(sh) > (1 << 32) or len(sh) > 8:
            continue
        st = []
        acc = 1
        for e in sh:
            st.append(rng.choice([acc, acc, -acc, 0, acc * rng.choice([1, 2, 3])]))
            acc *= e
        a = cute_from_flat(sh, st, rng)
        c = rng.random()
        if c < 0.25:
            b, eq = cute_from_flat(*split_mode(sh, st, rng), rng), True
        elif c < 0.45:
            b, eq = cute_to_axe_rev(sh, st), True
        elif c < 0.55:
            co = ref.pycute.coalesce(ref.pycute.Layout(a[1], a[2]))
            b, eq = ("cute", co.shape, co.stride), True
        else:
            b, eq = cute_to_axe_rev(*mutate_flat(sh, st, rng)), None
        if rng.random() < 0.3:
            a, b = b, a
        n = ref.size(a)
        # [n] or a CuTe side's own shape: other N-D shapes take laycert's table path, which
        # costs ~10 s per 2^20 indices (the campaign would not finish)
        shape = [n] if rng.random() < 0.6 or a[0] != "cute" else ref.natural(a)[0]
        if eq and "axe" in (a[0], b[0]) and len(shape) > 1:
            # CuTe reads an N-D coordinate colex, Axe row-major: equal only over [n] then
            eq = None
        dom = ref.resolve(a, b, shape)
        if dom is None:
            continue
        samples = ref.sample_coords(dom, rng, 48)
        ea, eb = ref.Evaluator(a, dom), ref.Evaluator(b, dom)
        w = next((cc for cc in samples if ea.at(cc) != eb.at(cc)), None)
        if eq:
            if w is not None:
                raise SystemExit(f"generator bug: constructed equal pair differs at {w}: {a} {b}")
            truth = "equal"
        elif w is not None:
            truth = "differ"
        else:
            continue  # truth unknown to the reference: no case
        rec = {"id": f"lg{start + i}", "fam": "large", "a": ref.text(a), "b": ref.text(b),
               "shape": shape, "truth": truth, "domain": dom, "log2": round(math.log2(n), 1)}
        if w is not None:
            rec["witness"] = w
        out.write(json.dumps(rec) + "\n")
        k += 1
    return k


def fam_triton(out, seed, count, start):
    """Triton attributes converted by Gluon (the oracle) against #ttg.linear text and mutants."""
    try:
        from triton._C.libtriton import gluon_ir, ir
        import triton.experimental.gluon.language as ttgl
    except Exception as e:  # noqa: BLE001
        sys.stderr.write(f"triton unavailable ({e}); triton family skipped\n")
        return 0
    ctx = ir.context()
    ir.load_dialects(ctx)
    bld = gluon_ir.GluonOpBuilder(ctx)
    k = 0
    for i in range(count):
        rng = R(seed, "tr", i)
        rank = rng.randint(1, 2)
        spt = [1 << rng.randint(0, 2) for _ in range(rank)]
        tpw = [1] * rank
        for _ in range(5):
            tpw[rng.randrange(rank)] *= 2
        wpc = [1] * rank
        for _ in range(rng.randint(0, 2)):
            wpc[rng.randrange(rank)] *= 2
        order = list(range(rank))
        rng.shuffle(order)
        shape = [spt[d] * tpw[d] * wpc[d] * (1 << rng.randint(0, 1)) for d in range(rank)]
        if rng.random() < 0.3:
            shape = [max(1, s // 2) for s in shape]
        if ref.prod(shape) > SMALL_LIMIT:
            continue
        L = ttgl.BlockedLayout(size_per_thread=spt, threads_per_warp=tpw, warps_per_cta=wpc, order=order)
        ll = bld.to_linear_layout(L._to_ir(bld), shape)
        ins = [("register", [list(b) for b in ll.reg_bases]), ("lane", [list(b) for b in ll.lane_bases]),
               ("warp", [list(b) for b in ll.warp_bases]), ("block", [list(b) for b in ll.block_bases])]
        lin = ("linear", ins, [(f"dim{d}", s) for d, s in enumerate(shape)])
        attr = ("#ttg.blocked<{sizePerThread = [%s], threadsPerWarp = [%s], warpsPerCTA = [%s], order = [%s]}>"
                % tuple(", ".join(map(str, v)) for v in (spt, tpw, wpc, order)))
        b = lin
        if rng.random() < 0.5:
            ins2 = [(n, [list(x) for x in bs]) for n, bs in ins]
            cand = [(x, y) for x in range(4) for y in range(len(ins2[x][1]))]
            x, y = rng.choice(cand)
            d = rng.randrange(rank)
            if shape[d] > 1:
                ins2[x][1][y][d] ^= 1 << rng.randrange(shape[d].bit_length() - 1)
            b = ("linear", ins2, lin[2])
        dom, w, truth = decide(lin, b, shape, rng)
        rec = {"id": f"tr{start + i}", "fam": "triton_blocked", "a": attr, "b": ref.text(b),
               "shape": shape, "truth": truth, "domain": dom, "a_ref": ref.text(lin)}
        if w is not None:
            rec["witness"] = w
        out.write(json.dumps(rec) + "\n")
        k += 1
    return k


# ---------------------------------------------------------------- rules

def rule_cases(seed, count, start):
    """Rules with a truth the reference decides: small bounds (exhaustive path) by evaluating
    every instance; large bounds (z3 path) by construction, a false one with a refuting
    instance the reference evaluates."""
    out = []
    for i in range(count):
        rng = R(seed, "ru", i)
        big = rng.random() < 0.25
        t = rng.choice(["merge", "merge_miss", "cute_axe", "cute_axe_nd", "cute_coalesce",
                        "overflow", "cute_axe_interior", "convert_to_cute", "axe_offsets"])
        if t == "convert_to_cute":
            big = False
        hi = rng.choice([4096, 2048, 1000]) if big else rng.randint(2, 7)
        name = f"r{start + i}_{t}"
        out.append(make_rule(name, t, hi, big, rng))
    return [r for r in out if r is not None]


def make_rule(name, t, hi, big, rng):
    ax = rng.choice(["m", "laneid", "reg"])
    if t == "merge":
        sl = rng.choice([4, 8]) if not big else 4096
        text = (f"rule {name} forall e1 e2 s : int, a : axis{{{ax}}}\n"
                f"  where 1 <= e1 <= {hi}, 1 <= e2 <= {hi}, -{sl} <= s <= {sl}\n"
                f"  S[(e1,e2):((e2*s)@a, s@a)] == S[(e1*e2):(s@a)]\n")
        inst = lambda p: (("axe", [(p["e1"], p["e2"] * p["s"], ax), (p["e2"], p["s"], ax)], [], {}),
                          ("axe", [(p["e1"] * p["e2"], p["s"], ax)], [], {}))
        params = {"e1": (1, hi), "e2": (1, hi), "s": (-sl, sl)}
        known = True
    elif t == "merge_miss":
        kk = rng.choice([-1, 1, 2])
        sl = rng.choice([4, 8]) if not big else 4096
        text = (f"rule {name} forall e1 e2 s : int, a : axis{{{ax}}}\n"
                f"  where 1 <= e1 <= {hi}, 1 <= e2 <= {hi}, -{sl} <= s <= {sl}\n"
                f"  S[(e1,e2):((e2*s + {kk})@a, s@a)] == S[(e1*e2):(s@a)]\n")
        inst = lambda p: (("axe", [(p["e1"], p["e2"] * p["s"] + kk, ax), (p["e2"], p["s"], ax)], [], {}),
                          ("axe", [(p["e1"] * p["e2"], p["s"], ax)], [], {}))
        params = {"e1": (1, hi), "e2": (1, hi), "s": (-sl, sl)}
        known = None
    elif t == "cute_axe":  # CuTe (a,b) read colex vs Axe flat row-major: false unless a or b is 1
        text = (f"rule {name} forall a b : int where 1 <= a <= {hi}, 1 <= b <= {hi}\n"
                f"  (a,b):(1,a) == S[(a*b):1] over lhs\n")
        inst = lambda p: (("cute", (p["a"], p["b"]), (1, p["a"])), ("axe", [(p["a"] * p["b"], 1, "m")], [], {}))
        params = {"a": (1, hi), "b": (1, hi)}
        known = None
    elif t == "cute_axe_nd":  # true over the CuTe side's shape, read by each in its own order
        if rng.random() < 0.5:
            text = (f"rule {name} forall a b : int where 1 <= a <= {hi}, 1 <= b <= {hi}\n"
                    f"  (a,b):(1,a) == S[(a,b):(1,a)] over lhs\n")
            inst = lambda p: (("cute", (p["a"], p["b"]), (1, p["a"])), ("axe", [(p["a"], 1, "m"), (p["b"], p["a"], "m")], [], {}))
        else:
            text = (f"rule {name} forall a b : int where 1 <= a <= {hi}, 1 <= b <= {hi}\n"
                    f"  (a,b):(b,1) == S[(a*b):1] over lhs\n")
            inst = lambda p: (("cute", (p["a"], p["b"]), (p["b"], 1)), ("axe", [(p["a"] * p["b"], 1, "m")], [], {}))
        params = {"a": (1, hi), "b": (1, hi)}
        known = True
    elif t == "cute_coalesce":
        kk = rng.choice([0, 0, 1])
        text = (f"rule {name} forall a b : int where 1 <= a <= {hi}, 1 <= b <= {hi}\n"
                f"  (a,b):(1,a+{kk}) == (a*b):1\n")
        inst = lambda p: (("cute", (p["a"], p["b"]), (1, p["a"] + kk)), ("cute", p["a"] * p["b"], 1))
        params = {"a": (1, hi), "b": (1, hi)}
        known = True if kk == 0 else None
    elif t == "convert_to_cute":  # the corpus rule convert_to_cute_preserves_map, both orders
        sw = rng.random() < 0.5
        sides = ["S[(e1,e2):(s1,s2)]", "to_cute(S[(e1,e2):(s1,s2)])"]
        if sw:
            sides.reverse()
        text = (f"rule {name} forall e1 e2 s1 s2 : int\n"
                f"  where 1 <= e1 <= {hi}, 1 <= e2 <= {hi}, 0 <= s1 <= 4, 0 <= s2 <= 4\n"
                f"  {sides[0]} == {sides[1]}\n")

        def inst(p):
            ax = ("axe", [(p["e1"], p["s1"], "m"), (p["e2"], p["s2"], "m")], [], {})
            # the flat-preserving conversion: ONE top-level mode (natural domain: the flat index)
            cu = ("cute", ((p["e2"], p["e1"]),), ((p["s2"], p["s1"]),))
            return (cu, ax) if sw else (ax, cu)
        params = {"e1": (1, hi), "e2": (1, hi), "s1": (0, 4), "s2": (0, 4)}
        known = None
    elif t == "axe_offsets":  # offset holes on two axes: '+' separates offsets (axe.md 3)
        # (laneid and warpid are related to tx in the axis registry: outside z3's fragment)
        a2 = rng.choice(["F", "P"] if big else ["F", "laneid", "warpid"])
        lo = rng.choice([0, -3])
        chi = 100_000 if big else 6
        form = rng.choice(["swap", "sum", "neg"])
        lhs = f"S[e:1] + {'-c' if form == 'neg' else 'c'} + d@{a2}"
        rhs = {"swap": f"S[e:1] + d@{a2} + {'c'}",
               "sum": f"S[e:1] + (c+d)@{a2}",
               "neg": f"S[e:1] + (0-c) + d@{a2}"}[form]
        text = (f"rule {name} forall e c d : int\n"
                f"  where 1 <= e <= 4, {lo} <= c <= {chi}, 1 <= d <= 3\n"
                f"  {lhs} == {rhs}\n")
        sign = -1 if form == "neg" else 1

        def inst(p):
            left = ("axe", [(p["e"], 1, "m")], [], {"m": sign * p["c"], a2: p["d"]})
            right = {"sum": {a2: p["c"] + p["d"]}}.get(form, {"m": sign * p["c"], a2: p["d"]})
            return left, ("axe", [(p["e"], 1, "m")], [], right)
        params = {"e": (1, 4), "c": (lo, chi), "d": (1, 3)}
        known = form != "sum"
    elif t == "cute_axe_interior":  # differs only at an interior instance a == K (corners agree)
        K = rng.randint(2, max(2, hi - 1))
        text = (f"rule {name} forall a b : int where 1 <= a <= {hi}, 1 <= b <= {hi}, a == 1 || b == 1 || a == {K}\n"
                f"  (a,b):(1,a) == S[(a*b):1] over lhs\n")
        inst = lambda p: (("cute", (p["a"], p["b"]), (1, p["a"])), ("axe", [(p["a"] * p["b"], 1, "m")], [], {}))
        params = {"a": (1, hi), "b": (1, hi)}
        cond = lambda p: p["a"] == 1 or p["b"] == 1 or p["a"] == K
        return finish_rule(name, t, text, inst, params, big, rng, None, cond)
    else:  # overflow inside the interior of a parameter range: lhs undefined, rhs defined
        s_hi = 1 << 31
        text = (f"rule {name} forall s : int where 0 <= s <= {s_hi}\n"
                f"  S[1:(((s - 1) * s * ({s_hi} - s) * ({s_hi - 1} - s))@{ax})] == S[1:(0@{ax})]\n")

        def inst(p):
            s = p["s"]
            v = (s - 1) * s * (s_hi - s) * (s_hi - 1 - s)
            for part in [(s - 1) * s, (s - 1) * s * (s_hi - s), v]:
                if not ref.I64_MIN <= part <= ref.I64_MAX:
                    return None, ("axe", [(1, 0, ax)], [], {})
            return ("axe", [(1, v, ax)], [], {}), ("axe", [(1, 0, ax)], [], {})
        params = {"s": (0, s_hi)}
        return finish_rule(name, t, text, inst, params, True, rng, None, None, witness={"s": 3})
    if not big and t in ("merge", "merge_miss"):
        pass
    return finish_rule(name, t, text, inst, params, big, rng, known, None)


def instance_truth(inst, p, over=None):
    """Whether one instance holds over its claim domain: the natural domain of the side the
    rule's `over` clause names ('lhs' or 'rhs'), else the one `ref.resolve` gives."""
    a, b = inst(p)
    if a is None or b is None:
        return (a is None) == (b is None)
    named = None
    if over is not None:
        named = ref.natural(a if over == "lhs" else b)[0]
        if ref.size(a) != ref.size(b):
            return False
    dom = ref.resolve(a, b, named)
    if dom is None:
        return False
    if ref.prod(dom) <= SMALL_LIMIT:
        return ref.equal_over(a, b, dom)[0]
    rng = random.Random(str(p))
    ea, eb = ref.Evaluator(a, dom), ref.Evaluator(b, dom)
    return all(ea.at(c) == eb.at(c) for c in ref.sample_coords(dom, rng, 64))


def finish_rule(name, t, text, inst, params, big, rng, known, cond, witness=None):
    names = list(params)
    last = text.rstrip().rsplit(" ", 2)
    over = last[-1] if len(last) == 3 and last[-2] == "over" else None
    truth_of = lambda p: instance_truth(inst, p, over)
    grid = ref.prod(hi - lo + 1 for lo, hi in params.values())
    path = "exhaustive" if grid <= 200_000 else "z3"
    ok = lambda p: cond is None or cond(p)
    if witness is not None:
        truth = truth_of(witness)
        return {"fam": f"rule_{t}", "rule": text, "name": name, "truth": "true" if truth else "false",
                "path": path, "witness": witness}
    if path == "exhaustive":
        truth, wit = True, None
        import itertools
        for vals in itertools.product(*[range(lo, hi + 1) for lo, hi in params.values()]):
            p = dict(zip(names, vals))
            if ok(p) and not truth_of(p):
                truth, wit = False, p
                break
        return {"fam": f"rule_{t}", "rule": text, "name": name, "truth": "true" if truth else "false",
                "path": path, "witness": wit}
    # z3 path: true by construction (spot-checked), or a refuting instance found by the reference
    tries = []
    for _ in range(40):
        tries.append({n: rng.randint(lo, min(hi, lo + 8)) for n, (lo, hi) in params.items()})
        tries.append({n: rng.randint(lo, hi) if ref.prod([hi - lo]) < 64 else rng.randint(lo, min(hi, 64))
                      for n, (lo, hi) in params.items()})
    if t == "cute_axe_interior":
        K = int(text.split("a == ")[-1].split("\n")[0])
        tries = [{"a": K, "b": 2}] + tries
    for p in tries:
        if ok(p) and not truth_of(p):
            return {"fam": f"rule_{t}", "rule": text, "name": name, "truth": "false", "path": path, "witness": p}
    if known:
        return {"fam": f"rule_{t}", "rule": text, "name": name, "truth": "true", "path": path, "witness": None}
    return None


# ---------------------------------------------------------------- malformed input

SEEDS_TEXT = [
    "S[(8,2,4,2):(4@laneid,1@warpid,1@laneid,1@reg)] + R[2:4@warpid] + 5@warpid",
    "(4,(2,4)):(2,(1,8))", "Sw<3,4,3> o (8,64):(64,1)", "((4,8),(2,2)):((32,1),(16,8)) -> (16,8)",
    "#ttg.linear<{register=[[0,1],[1,0]], lane=[[0,2],[0,4],[0,8],[2,0],[4,0]], warp=[[8,0]]}>",
    "#ttg.blocked<{sizePerThread=[2,2], threadsPerWarp=[4,8], warpsPerCTA=[2,1], order=[1,0]}>",
    "#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [1, 1], instrShape = [16, 8]}>",
    "#ttg.slice<{dim = 0, parent = #ttg.blocked<{sizePerThread=[1,4], threadsPerWarp=[8,4], warpsPerCTA=[1,1], order=[1,0]}>}>",
    "#ttg.swizzled_shared<{vec = 2, perPhase = 2, maxPhase = 4, order = [1, 0]}>",
    "- register=1 -> (0, 1)\n  register=2 -> (1, 0)\nwhere out dims are: [dim0 (size 2), dim1 (size 2)]",
]
SEEDS_EXPR = ["coalesce(compose((4,8):(1,4), (2,4):(1,2)))", "S[(2,3):(3,1)]",
              "f2_compose(swizzle_map(1, 0, 2, 6), swizzle_map(1, 0, 1 + 1, 6))",
              "complement(4:2, 24)", "logical_divide((4,2,3):(2,1,8), 4:2)",
              "tile(S[(2,4):(1,2)], [2,4], S[(8,8):(8,1)], [8,8])", "slice(S[16:1], [4,4], [(0,2),(1,3)])"]
SEEDS_RULE = ["rule axe_d1_merge  forall e1 e2 s : int, a : axis\n  where 1 <= e1 <= 6, 1 <= e2 <= 6, -4 <= s <= 4\n  S[(e1,e2):((e2*s)@a, s@a)] == S[(e1*e2):(s@a)]\n",
              "rule cute_compose_associative  forall A : cute(2, 3, 4), B C : cute(1, 4, 3)\n  where cosize(C) <= size(B), defined(compose(A, B)), defined(compose(A, compose(B, C)))\n  compose(compose(A, B), C) == compose(A, compose(B, C))\n"]
NASTY = ["9223372036854775807", "9223372036854775808", "-9223372036854775808", "99999999999999999999999",
         "0", "-1", "4294967296", "65536", "((((", "))))", "@", ":", ",,", "", " ", "\u00e9", "\x00", "1e9",
         "(", ")", "[", "]", "<", ">", "S[", "R[", "Sw<", "o", "->", "#ttg.", "=", "{", "}", "2^62", "pow2(62)",
         "cute(9, 9, 9)", "4611686018427387904", "size(A)", "*", "%", "/"]


def mutate_text(s, rng):
    s = list(s)
    for _ in range(rng.randint(1, 4)):
        r = rng.random()
        pos = rng.randint(0, len(s))
        if r < 0.3 and s:
            del s[min(pos, len(s) - 1)]
        elif r < 0.6:
            s[pos:pos] = list(rng.choice(NASTY))
        elif r < 0.8 and s:
            s[min(pos, len(s) - 1)] = rng.choice("0123456789(),:@[]<>-+ xSRo")
        else:
            s = s[:pos]
    return "".join(s)


def malformed_cases(seed, count, start):
    out = []
    # the pathological sizes (deep nesting, megabyte inputs, huge rule grids) run in the CLI
    # pass, one process each under a memory and time limit (cli_pass.py)
    huge = [
        ("layout", "(1048576,1048576,1048576):(1,1048576,0)", None),
        ("layout", "S[(4294967296,4294967296):(1,4294967296)]", None),
        ("layout", "#ttg.linear<{register=[" + ",".join(["[1]"] * 64) + "]}>", None),
        ("layout", "Sw<62,62,62> o 8:1", None), ("layout", "Sw<3,4,-70> o 8:1", None),
        ("layout", "S[8:9223372036854775807] + R[8:9223372036854775807]", None),
        ("expr", "complement(4:2, 9223372036854775807)", None),
        ("expr", "swizzle_map(62, 0, 62, 64)", None),
    ]
    for t, txt, sh in huge:
        out.append({"fam": "malformed_huge", "target": t, "text": txt, "shape": sh})
    for i in range(count):
        rng = R(seed, "mf", i)
        c = rng.random()
        if c < 0.55:
            t, base = "layout", rng.choice(SEEDS_TEXT)
        elif c < 0.85:
            t, base = "expr", rng.choice(SEEDS_EXPR)
        else:
            t, base = "rule", rng.choice(SEEDS_RULE)
        shape = rng.choice([None, [16, 16], [16, 8], [64], [0], [-4, 2], [1 << 31, 1 << 31]])
        out.append({"fam": f"malformed_{t}", "target": t, "text": mutate_text(base, rng), "shape": shape})
    return out


# ---------------------------------------------------------------- main

def main():
    outdir, scale, seed = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
    worker, nworkers = (int(sys.argv[4]), int(sys.argv[5])) if len(sys.argv) > 5 else (0, 1)
    os.makedirs(outdir, exist_ok=True)
    n = lambda base: int(base * scale)

    def part(base, cap=None):
        # rules and expressions cost seconds each in laycert (z3, saturation): capped scale
        total = n(base) if cap is None else int(base * min(scale, cap))
        per = (total + nworkers - 1) // nworkers
        return per, worker * per

    sfx = f".{worker}" if nworkers > 1 else ""
    counts = {}
    with open(os.path.join(outdir, f"equiv{sfx}.jsonl"), "w") as f:
        for name, fn, base in [("cute_cute", fam_cute_cute, 2000), ("cute_axe", fam_cute_axe, 2000),
                               ("axe_axe", fam_axe_axe, 2000), ("alias", fam_alias, 300),
                               ("swizzle", fam_swizzle, 800), ("linear", fam_linear, 800),
                               ("natural", fam_natural, 500), ("large", fam_large, 400),
                               ("triton", fam_triton, 150)]:
            per, st = part(base)
            counts[name] = fn(f, seed, per, st)
    with open(os.path.join(outdir, f"rules{sfx}.jsonl"), "w") as f:
        per, st = part(60, cap=1.5)
        for i, r in enumerate(rule_cases(seed, per, st)):
            r["id"] = f"ru{st + i}"
            f.write(json.dumps(r) + "\n")
    with open(os.path.join(outdir, f"expr{sfx}.jsonl"), "w") as f:
        per, st = part(150, cap=20)
        for r in exprs.expr_cases(seed, per, st):
            f.write(json.dumps(r) + "\n")
    with open(os.path.join(outdir, f"validate{sfx}.jsonl"), "w") as f:
        per, st = part(300)
        for r in exprs.validate_cases(seed, per, st):
            f.write(json.dumps(r) + "\n")
    with open(os.path.join(outdir, f"malformed{sfx}.jsonl"), "w") as f:
        per, st = part(1200)
        for i, r in enumerate(malformed_cases(seed, per, st) if worker == 0 else malformed_cases(seed, per, st)[8:]):
            r["id"] = f"mf{worker}_{i}"
            f.write(json.dumps(r) + "\n")
    sys.stderr.write(f"worker {worker}: {counts}\n")
    sys.stderr.flush()
    sys.stdout.flush()
    os._exit(0)  # skips nanobind's leak report at interpreter exit (triton)


if __name__ == "__main__":
    main()
