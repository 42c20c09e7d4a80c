"""The soundness campaign's reference semantics: written from the specs, sharing no code with
laycert (it never imports or runs it).

A layout is held as a small Python value (never parsed from laycert's output, except by the
tiny readers at the end, which read what the generators themselves wrote or laycert printed):

    ("cute", shape, stride)              CuTe, evaluated by pycute (nvidia-cutlass)
    ("swz", b, m, s, shape, stride)      Sw<b,m,s> o CuTe, pycute's Swizzle
    ("axe", D, R, O)                     Axe: D, R lists of (extent, stride, axis), O {axis: int}
    ("linear", ins, outs)                F2 linear: ins [(name, bases)], outs [(name, size)]
    ("tv", shape, stride, tile)          CuTe TV: (thread, value) -> column-major tile index

Meaning (spec certify.md 1, 1b; axe.md 2; cute.md 1, 3, 4; linear.md 1): a relation between the
logical coordinates of ONE domain shape and physical points. CuTe and swizzled CuTe read an N-D
coordinate colexicographically (first dim fastest), Axe row-major; TV and linear layouts have a
FIXED domain (tile / out-dims). Points are put in one vocabulary: axis aliases resolved,
tx = laneid + 32*warpid and warpid = wwid + 4*wgid substituted, zero components dropped. Linear
in-dims name axes (offset = m, lane = laneid, register = reg, warp = warpid, block = cta); two
in-dims that name ONE axis ADD on it, as two Axe iters on one axis do (layout/src/relation.rs's
definition: a point is the sum of its parts per resolved axis).
"""

import itertools
import random

import pycute

I64_MAX = (1 << 63) - 1
I64_MIN = -(1 << 63)

ALIASES = {
    "lane": "laneid", "warp": "warpid", "register": "reg", "value": "reg", "V": "reg",
    "thread": "tx", "T": "tx", "threadIdx": "tx", "warpgroup": "wgid", "gpu": "gpuid",
    "device": "gpuid", "pid": "gpuid", "block": "cta", "memory": "m", "offset": "m",
}
IN_DIM_AXIS = {"offset": "m", "lane": "laneid", "warp": "warpid", "register": "reg", "block": "cta"}


def canon_axis(a):
    return ALIASES.get(a, a)


FUSED = {"laneid": ("tx", 1), "warpid": ("tx", 32), "wwid": ("tx", 32), "wgid": ("tx", 128)}


def canon_terms(a):
    """An axis as (canonical axis, factor): aliases resolved, then the cuda relations
    tx = laneid + 32*warpid, warpid = wwid + 4*wgid substituted (they are linear)."""
    a = canon_axis(a)
    return FUSED.get(a, (a, 1))


def norm_point(p):
    """{axis: value} -> sorted tuple of (axis, value), the common vocabulary."""
    q = {}
    for a, v in p.items():
        c, f = canon_terms(a)
        q[c] = q.get(c, 0) + f * v
    return tuple(sorted((a, v) for a, v in q.items() if v != 0))


# ---------------------------------------------------------------- coordinates

def prod(xs):
    r = 1
    for x in xs:
        r *= x
    return r


def flat_shape(t):
    return [t] if isinstance(t, int) else [y for x in t for y in flat_shape(x)]


def top_shape(shape):
    return [shape] if isinstance(shape, int) else [prod(flat_shape(x)) for x in shape]


def rowmajor(shape, c):
    f = 0
    for s, x in zip(shape, c):
        f = f * s + x
    return f


def colex(shape, c):
    f, m = 0, 1
    for s, x in zip(shape, c):
        f += x * m
        m *= s
    return f


def unflatten_rowmajor(shape, f):
    c = []
    for s in reversed(shape):
        c.append(f % s)
        f //= s
    return list(reversed(c))


def unflatten_colex(shape, f):
    c = []
    for s in shape:
        c.append(f % s)
        f //= s
    return c


def coords(shape):
    return itertools.product(*[range(s) for s in shape])


# ---------------------------------------------------------------- layouts

def size(l):
    k = l[0]
    if k == "cute":
        return prod(flat_shape(l[1]))
    if k == "swz":
        return prod(flat_shape(l[4]))
    if k == "axe":
        return prod(e for e, _, _ in l[1])
    if k == "linear":
        return prod(s for _, s in l[2])
    if k == "tv":
        return prod(l[3])
    raise ValueError(k)


def natural(l):
    """(shape, order, fixed): order 'colex' or 'rowmajor'."""
    k = l[0]
    if k == "cute":
        return top_shape(l[1]), "colex", False
    if k == "swz":
        return top_shape(l[4]), "colex", False
    if k == "axe":
        return [size(l)], "rowmajor", False
    if k == "linear":
        return [s for _, s in l[2]], "rowmajor", True
    if k == "tv":
        return list(l[3]), "rowmajor", True
    raise ValueError(k)


def resolve(a, b, given):
    """The claim's domain (common.md): a shape, or None when not comparable/ambiguous.

    Sides read in different orders (CuTe colex against row-major) share a reading only of
    equal natural domains, or of flat ones (at most one extent above 1): otherwise the verdict
    depends on the shape and the claim is ambiguous (keeps `equivalent` transitive)."""
    (na, oa, fa), (nb, ob, fb) = natural(a), natural(b)
    if given is not None:
        given = list(given)
        if prod(given) != size(a) or prod(given) != size(b):
            return None
        if (fa and given != na) or (fb and given != nb):
            return None
        return given

    def flat(n):
        return sum(1 for e in n if e != 1) <= 1

    alike = oa == ob or na == nb or (flat(na) and flat(nb))
    if fa and fb:
        return na if na == nb else None
    if fa:
        return na if prod(na) == size(b) and alike else None
    if fb:
        return nb if prod(nb) == size(a) and alike else None
    if size(a) != size(b):
        return None
    if na == nb:
        return na
    if not alike:
        return None
    ra, rb = len(na) >= 2, len(nb) >= 2
    if oa == ob and ra != rb:
        return na if ra else nb
    return [size(a)]


def pycute_layout(shape, stride):
    return pycute.Layout(shape, stride)


class Evaluator:
    """Points of one layout over one domain shape, by the semantics."""

    def __init__(self, l, shape):
        self.l, self.shape = l, list(shape)
        k = l[0]
        if k in ("cute", "swz"):
            lay = pycute_layout(l[1], l[2]) if k == "cute" else pycute_layout(l[4], l[5])
            self.f = lay
            self.sw = swizzle_fn(l[1], l[2], l[3]) if k == "swz" else None
        elif k in ("linear", "tv"):
            self.table = relation_table(l)
        elif k == "axe":
            self.form = AxeForm(l)

    def at(self, c):
        k = self.l[0]
        if k in ("cute", "swz"):
            v = self.f(colex(self.shape, c))
            if self.sw is not None:
                v = self.sw(v)
            return frozenset([(("m", v),) if v else ()])
        if k == "axe":
            return self.form.points(rowmajor(self.shape, c))
        return self.table.get(tuple(c), frozenset())


def swizzle_fn(b, m, s):
    """Sw<b,m,s> (cute.md 3): o ^ ((o & yyy) >> s), a left shift for s < 0."""
    yyy = ((1 << b) - 1) << (m + max(0, s))

    def sw(o):
        t = o & yyy
        return o ^ (t >> s if s >= 0 else t << -s)
    return sw


class AxeForm:
    """An Axe layout with every iter, replica and offset in canonical axes (norm_point's
    substitution, applied once per layout instead of once per point)."""

    def __init__(self, l):
        _, D, R, O = l
        self.ext = [e for e, _, _ in D]
        self.D = [(canon_terms(a), s) for _, s, a in D]
        base = {}
        for a, v in O.items():
            c, f = canon_terms(a)
            base[c] = base.get(c, 0) + f * v
        self.base = base
        reps = [{}]
        for e, s, a in R:
            c, f = canon_terms(a)
            reps = [dict(r, **{c: r.get(c, 0) + f * s * k}) for r in reps for k in range(e)]
        self.reps = reps

    def points(self, x):
        p = dict(self.base)
        for e, ((c, f), s) in zip(reversed(self.ext), reversed(self.D)):
            x, d = divmod(x, e)
            p[c] = p.get(c, 0) + f * s * d
        out = set()
        for r in self.reps:
            q = dict(p)
            for c, v in r.items():
                q[c] = q.get(c, 0) + v
            out.add(tuple(sorted((a, v) for a, v in q.items() if v != 0)))
        return frozenset(out)


def axe_points(l, x):
    return AxeForm(l).points(x)


def relation_table(l):
    """Linear or TV: logical coordinate -> set of points (read backwards from hardware)."""
    table = {}
    if l[0] == "linear":
        _, ins, outs = l
        names = [canon_axis(IN_DIM_AXIS.get(n, n)) for n, _ in ins]
        nout = len(outs)
        for xs in itertools.product(*[range(1 << len(b)) for _, b in ins]):
            out = [0] * nout
            for (n, bases), x in zip(ins, xs):
                for k, bv in enumerate(bases):
                    if x >> k & 1:
                        out = [o ^ v for o, v in zip(out, bv)]
            parts = {}
            for a, x in zip(names, xs):  # in-dims naming one axis add on it
                parts[a] = parts.get(a, 0) + x
            p = norm_point(parts)
            table.setdefault(tuple(out), set()).add(p)
    else:
        _, shape, stride, tile = l
        lay = pycute_layout(shape, stride)
        th, va = top_shape(shape)
        for t in range(th):
            for v in range(va):
                idx = lay(t + th * v)
                cell = unflatten_colex(tile, idx)
                table.setdefault(tuple(cell), set()).add(norm_point({"tx": t, "reg": v}))
    return {k: frozenset(v) for k, v in table.items()}


def equal_over(a, b, shape, limit=1 << 14):
    """True/False by evaluating every coordinate, with the first differing coordinate."""
    if prod(shape) > limit:
        raise ValueError("domain too large for full evaluation")
    ea, eb = Evaluator(a, shape), Evaluator(b, shape)
    for c in coords(shape):
        if ea.at(c) != eb.at(c):
            return False, list(c)
    return True, None


def differs_at(a, b, shape, c):
    return Evaluator(a, shape).at(c) != Evaluator(b, shape).at(c)


def sample_coords(shape, rng, n):
    """Boundary coordinates (every corner of small rank) and random ones."""
    out = []
    for corner in itertools.product(*[(0, s - 1) for s in shape[:6]]):
        out.append(list(corner) + [0] * (len(shape) - len(corner)))
    for _ in range(n):
        out.append([rng.randrange(s) for s in shape])
    return out


# ---------------------------------------------------------------- printing (laycert's input text)

def tup(t):
    return str(t) if isinstance(t, int) else "(" + ",".join(tup(x) for x in t) + ")"


def term(s, a):
    return f"{s}" if a == "m" else f"{s}@{a}"


def text(l):
    k = l[0]
    if k == "cute":
        return f"{tup(l[1])}:{tup(l[2])}"
    if k == "swz":
        return f"Sw<{l[1]},{l[2]},{l[3]}> o {tup(l[4])}:{tup(l[5])}"
    if k == "axe":
        _, D, R, O = l

        def part(tag, its):
            if len(its) == 1:
                e, s, a = its[0]
                return f"{tag}[{e}:{term(s, a)}]"
            return (f"{tag}[(" + ",".join(str(e) for e, _, _ in its) + "):("
                    + ",".join(term(s, a) for _, s, a in its) + ")]")

        out = part("S", D)
        if R:
            out += " + " + part("R", R)
        for a in sorted(O):
            if O[a] != 0:
                out += " + " + term(O[a], a)
        return out
    if k == "linear":
        _, ins, outs = l
        body = ", ".join(f"{n}=[" + ",".join("[" + ",".join(map(str, b)) + "]" for b in bases) + "]"
                         for n, bases in ins)
        return "#ttg.linear<{" + body + "}>"
    if k == "tv":
        return f"{tup(l[1])}:{tup(l[2])} -> {tup(tuple(l[3]))}"
    raise ValueError(k)


def parse_tuple(s):
    """A CuTe IntTuple as laycert or pycute prints it: '(4, (2, 3))' or '8'."""
    s = s.strip()
    v = eval(s, {"__builtins__": {}}, {})  # digits, commas, parens and minus signs only
    return v


def parse_cute(s):
    """'(4,(2,3)):(2,(1,8))' -> ('cute', shape, stride); None when not plain CuTe."""
    import re
    if not re.fullmatch(r"[\d\s,():\-]+", s) or s.count(":") != 1:
        return None
    sh, st = s.split(":")
    try:
        return ("cute", parse_tuple(sh), parse_tuple(st))
    except Exception:
        return None


def parse_axe(s):
    """The Axe text this module prints (and laycert prints): S[..] + R[..] + offsets."""
    import re
    s = s.strip()
    m = re.fullmatch(r"S\[([^\]]*)\](.*)", s)
    if not m:
        return None

    def iters(body):
        if ":" not in body:
            return None
        ex, st = body.split(":", 1)
        ex, st = ex.strip(), st.strip()
        if ex.startswith("("):
            ex, st = ex[1:-1].split(","), st[1:-1].split(",")
        else:
            ex, st = [ex], [st]
        if len(ex) != len(st):
            return None
        out = []
        for e, t in zip(ex, st):
            t = t.strip()
            a = "m"
            if "@" in t:
                t, a = t.split("@")
            out.append((int(e), int(t), a.strip()))
        return out

    D = iters(m.group(1))
    if D is None:
        return None
    R, O = [], {}
    rest = m.group(2).strip()
    for piece in [p.strip() for p in re.split(r"\+(?![^\[]*\])", rest) if p.strip()]:
        if piece.startswith("R["):
            R = iters(piece[2:-1])
            if R is None:
                return None
        else:
            a = "m"
            if "@" in piece:
                piece, a = piece.split("@")
            O[a.strip()] = O.get(a.strip(), 0) + int(piece)
    return ("axe", D, R, O)


def parse_any(s):
    s = s.strip()
    if s.startswith("S["):
        try:
            return parse_axe(s)
        except Exception:
            return None
    if s.startswith("Sw<"):
        import re
        m = re.fullmatch(r"Sw<(-?\d+),(-?\d+),(-?\d+)> o (.*)", s)
        if not m:
            return None
        c = parse_cute(m.group(4))
        if c is None:
            return None
        return ("swz", int(m.group(1)), int(m.group(2)), int(m.group(3)), c[1], c[2])
    return parse_cute(s)


def rng_for(seed, *tags):
    return random.Random(hash((seed,) + tags) & 0xFFFFFFFF)


def parse_linear(s, shape):
    """`#ttg.linear<{register=[[0,1]], lane=[..]}>` (as this module prints it) over `shape`."""
    import json
    import re
    m = re.fullmatch(r"#ttg\.linear<\{(.*)\}>", s.strip(), re.S)
    if not m or shape is None:
        return None
    body = re.sub(r"(\w+)\s*=", r'"\1":', m.group(1))
    try:
        d = json.loads("{" + body + "}")
    except ValueError:
        return None
    ins = list(d.items())
    if all(name in TRITON_INS for name, _ in ins):
        ins = triton_fit(ins, shape)
        if ins is None:
            return None
    return ("linear", ins, [(f"dim{i}", n) for i, n in enumerate(shape)])


TRITON_INS = ("register", "lane", "warp", "block")


def triton_fit(ins, shape):
    """Triton's fit of a linear encoding (in-dims register/lane/warp/block) to a tensor shape,
    from its documented behaviour (Gluon's to_linear_layout is the oracle in
    bench/peers/gen_triton_linear_fit.py): each dim's own size is the smallest power of two
    above its largest basis value; a dim the bases do not reach gains register bases
    (own, 2*own, ... below the shape), dims in the order the register bases first move them,
    then the rest from the last dim down; a dim they overrun loses one basis per halving,
    largest first: register bases removed, others zeroed in that dim. None where that cut is
    not "every basis at or past the shape" (values not distinct powers of two)."""
    rank = len(shape)
    d = {name: [list(b) for b in bases] for name, bases in ins}
    allb = [b for _, bases in ins for b in bases]
    if any(len(b) != rank for b in allb):
        return None
    own = []
    for j in range(rank):
        top = max([b[j] for b in allb] + [0])
        own.append(1 << top.bit_length() if top else 1)
    order = []
    for b in d.get("register", []):
        nz = [j for j in range(rank) if b[j] != 0]
        if nz and nz[0] not in order:
            order.append(nz[0])
    order += [j for j in reversed(range(rank)) if j not in order]
    drop = set()
    for j in range(rank):
        if own[j] <= shape[j]:
            continue
        vals = sorted(b[j] for b in allb if b[j] != 0)
        if any(v & (v - 1) for v in vals) or len(set(vals)) != len(vals):
            return None
        past = [v for v in vals if v >= shape[j]]
        if len(past) != (own[j] // shape[j]).bit_length() - 1:
            return None
        for name, bases in d.items():
            for k, b in enumerate(bases):
                if b[j] >= shape[j]:
                    if name == "register":
                        drop.add(k)
                    else:
                        b[j] = 0
    regs = [b for k, b in enumerate(d.get("register", [])) if k not in drop]
    for j in order:
        size = own[j]
        while size < shape[j]:
            regs.append([size if i == j else 0 for i in range(rank)])
            size *= 2
    out = []
    if "register" in d or regs:
        out.append(("register", regs))
    out += [(name, bases) for name, bases in d.items() if name != "register"]
    return out


def parse_layout(s, shape=None):
    """Any text the campaign generated: CuTe, swizzled CuTe, Axe, TV, `#ttg.linear`."""
    import re
    s = s.strip()
    if s.startswith("#ttg.linear"):
        return parse_linear(s, shape)
    m = re.fullmatch(r"(.*):(.*) -> \((.*)\)", s)
    if m:
        c = parse_cute(f"{m.group(1)}:{m.group(2)}")
        tile = [int(x) for x in m.group(3).split(",") if x.strip()]
        return None if c is None else ("tv", c[1], c[2], tile)
    return parse_any(s)
