#!/usr/bin/env python3
"""Conformance vectors from the CuTe DSL (pip package nvidia-cutlass-dsl, checked with 4.8.1):
CUTLASS's own layout algebra, run on the CPU while a `@cute.jit` function is traced.

Writes tests/data/cutedsl/<op>.jsonl: one JSON object per case with the operands as laycert's
CLI takes them ("args", the words after `laycert cute`), the DSL call ("call") and either "out"
(the DSL's print of the result, e.g. `(2,4):(0,1)`) or "error" (the DSL's message, first line).
Operands are random layouts of the pycute generator (`gen_pycute_vectors.py`), tilers are
layouts, shapes or tuples of layouts, and complement cotargets are integers, shapes or layouts.
`divide_skip` (its own file) holds the four divides by tuple tilers with `_` entries;
`composition_neg` and `logical_divide_neg` right operands with extent-1 leaves of negative stride.
Deterministic: fixed seed, no clock. Run from the repository root (no GPU needed):

    python3 bench/peers/gen_cutedsl_vectors.py [--cases 600] [--out tests/data/cutedsl] [--ops a,b]

The DSL's process dies (SIGFPE) on some inputs, mostly products of an A whose modes overlap:
those run one per child process, others in batches that are halved when their child dies; a
case whose child dies alone is recorded with "error": "crash: ...".
"""
import argparse
import json
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import cutlass.cute as cute  # noqa: E402
from gen_pycute_vectors import leaves, random_layout  # noqa: E402


def text(t):
    """pycute's spelling of an IntTuple, which laycert parses."""
    if isinstance(t, int):
        return str(t)
    return "(" + ", ".join(text(x) for x in t) + ("," if len(t) == 1 else "") + ")"


def ltext(layout):
    return f"{text(layout.shape)}:{text(layout.stride)}"


def dsl(layout):
    return cute.make_layout(layout.shape, stride=layout.stride)


def size(t):
    n = 1
    for x in leaves(t):
        n *= x
    return n


def shape_tiler(rng, a):
    """A tuple of extents, one per top mode of A (at most its rank)."""
    modes = a.shape if isinstance(a.shape, tuple) else (a.shape,)
    k = rng.randint(1, len(modes))
    return tuple(rng.choice([1, 2, 2, 3, 4]) for _ in range(k))


def layout_tuple_tiler(rng, a):
    modes = a.shape if isinstance(a.shape, tuple) else (a.shape,)
    k = rng.randint(1, min(3, len(modes)))
    return tuple(random_layout(rng, rng.choice(["compact", "gapped", "random"]), max_size=16) for _ in range(k))


def tiler_arg(rng, a):
    """(laycert text, DSL value thunk, kind) of a random tiler: a layout, a shape or a tuple of layouts."""
    kind = rng.choice(["layout", "layout", "shape", "tuple"])
    if kind == "layout":
        b = random_layout(rng, rng.choice(["compact", "gapped", "random"]), max_size=64)
        return ltext(b), lambda: dsl(b), "layout"
    if kind == "shape":
        s = shape_tiler(rng, a)
        return text(s), lambda: s, "shape"
    ts = layout_tuple_tiler(rng, a)
    t = "(" + ", ".join(ltext(x) for x in ts) + ("," if len(ts) == 1 else "") + ")"
    return t, lambda: tuple(dsl(x) for x in ts), "tuple"


def skip_text(t):
    """laycert's spelling of a tiler with `_` (None in the DSL) and extents."""
    if t is None:
        return "_"
    if isinstance(t, int):
        return str(t)
    return "(" + ", ".join(skip_text(x) for x in t) + ")"


def skip_case(rng):
    """A divide by a tuple tiler with `_` entries (`divide_skip`): A has 2 or 3 top modes, many
    of them of rank 2 (CUTLASS's zip2_by splits a mode `_` leaves whole, and needs a pair);
    each tiler entry is `_`, an extent, or for a tuple mode a nested tuple of those."""
    from pycute import make_layout

    modes = []
    for _ in range(rng.choice([2, 2, 3])):
        if rng.random() < 0.5:
            modes.append(make_layout(random_layout(rng, max_size=8), random_layout(rng, max_size=8)))
        else:
            modes.append(random_layout(rng, max_size=24))
    a = make_layout(*modes)
    k = rng.randint(2, len(modes))
    tiler = []
    for m in modes[:k]:
        r = rng.random()
        if r < 0.5:
            tiler.append(None)
        elif isinstance(m.shape, tuple) and len(m.shape) >= 2 and r < 0.7:
            tiler.append(tuple(rng.choice([None, 1, 2, 3]) for _ in m.shape))
        else:
            tiler.append(rng.choice([1, 2, 3, 4]))
    if all(x is not None for x in tiler):
        tiler[rng.randrange(k)] = None
    tiler = tuple(tiler)
    op = rng.choice(["logical_divide", "zipped_divide", "tiled_divide", "flat_divide"])
    fn = getattr(cute, op)
    return (["divide", ltext(a), skip_text(tiler), op.split("_")[0]], f"{op}/skip",
            lambda: fn(dsl(a), tiler))


def case(op, rng):
    """(args for `laycert cute`, call description, thunk computing the DSL's answer)."""
    if op == "divide_skip":
        return skip_case(rng)
    a = random_layout(rng)
    A = lambda: dsl(a)  # noqa: E731 - built inside the traced function
    if op == "coalesce":
        return ["coalesce", ltext(a)], "coalesce", lambda: cute.coalesce(A())
    if op in ("composition_neg", "logical_divide_neg"):
        # A right operand with extent-1 leaves of negative stride (they only ever read A(0);
        # CUTLASS prints their stride divided through A's modes, keeping its sign).
        b = random_layout(rng, rng.choice(["compact", "gapped"]), max_size=16)
        shape = b.shape if isinstance(b.shape, tuple) else (b.shape,)
        stride = b.stride if isinstance(b.stride, tuple) else (b.stride,)
        k = rng.randint(0, len(shape))
        neg = -rng.choice([1, 2, 3, 4, 5, 7, 8, 12, 16, 30, 64, 100])
        b = type(b)(shape[:k] + (1,) + shape[k:], stride[:k] + (neg,) + stride[k:])
        if op == "composition_neg":
            return (["compose", ltext(a), ltext(b)], "composition/layout",
                    lambda: cute.composition(dsl(a), dsl(b)))
        return (["divide", ltext(a), ltext(b), "logical"], "logical_divide/layout",
                lambda: cute.logical_divide(dsl(a), dsl(b)))
    if op == "composition":
        t, v, kind = tiler_arg(rng, a)
        if kind == "layout" and rng.random() < 0.2:
            # A small left operand: CUTLASS extends its last mode (1:1 o 4:1 = 4:1).
            a = random_layout(rng, max_size=4)
        return ["compose", ltext(a), t], f"composition/{kind}", lambda: cute.composition(dsl(a), v())
    if op == "complement":
        cos = max(1, cosize(a))
        kind = rng.choice(["int", "int", "shape", "layout"])
        if kind == "int":
            m = rng.randint(1, 2 * cos)
            return ["complement", ltext(a), str(m)], "complement/int", lambda: cute.complement(A(), m)
        if kind == "shape":
            s = tuple(rng.choice([1, 2, 3, 4, 8]) for _ in range(rng.randint(1, 3)))
            return ["complement", ltext(a), text(s)], "complement/shape", lambda: cute.complement(A(), s)
        b = random_layout(rng, "compact", max_size=2 * cos)
        return ["complement", ltext(a), ltext(b)], "complement/layout", lambda: cute.complement(A(), dsl(b))
    if op in ("left_inverse", "right_inverse"):
        fn = getattr(cute, op)
        return [op.replace("_", "-"), ltext(a)], op, lambda: fn(A())
    if op.endswith("_divide") or op.endswith("_product"):
        t, v, kind = tiler_arg(rng, a)
        if op.endswith("_product"):
            if kind == "shape":
                t, v, kind = tiler_arg(rng, a)
            if kind == "shape":
                b = random_layout(rng, "compact", max_size=16)
                t, v, kind = ltext(b), lambda: dsl(b), "layout"
        fn = getattr(cute, op)
        word = "divide" if op.endswith("_divide") else "product"
        flavour = op.split("_")[0]
        return [word, ltext(a), t, flavour], f"{op}/{kind}", lambda: fn(A(), v())
    raise ValueError(op)


def cosize(a):
    return sum((s - 1) * d for s, d in zip(leaves(a.shape), leaves(a.stride))) + 1


OPS = ["coalesce", "composition", "complement", "left_inverse", "right_inverse",
       "logical_divide", "zipped_divide", "tiled_divide", "flat_divide",
       "logical_product", "zipped_product", "tiled_product", "blocked_product", "raked_product",
       "divide_skip", "composition_neg", "logical_divide_neg"]

RESULTS = []


def run_slice(items):
    for args, call, thunk in items:
        rec = {"args": args, "call": call}
        try:
            rec["out"] = str(thunk())
        except BaseException as e:  # noqa: BLE001 - the DSL reports refusals as exceptions
            msg = str(e).strip().splitlines()
            rec["error"] = type(e).__name__ + (": " + msg[0][:200] if msg else "")
        RESULTS.append(rec)


def plan(op, n):
    rng = random.Random(20261124 + OPS.index(op))
    return [case(op, rng) for _ in range(n)]


def child(op, n, indices):
    """Runs the cases `indices` of op inside one traced function; prints them as JSON lines."""
    every = plan(op, n)
    items = [every[i] for i in indices]

    @cute.jit
    def traced():
        run_slice(items)

    traced()
    for r in RESULTS:
        print(json.dumps(r))


def run(op, n, indices):
    """The cases `indices` in a child process; a batch whose child dies (the DSL's C++ aborts
    on some inputs with SIGFPE) is halved until the dying case is alone, recorded as a crash."""
    import subprocess

    if not indices:
        return []
    proc = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--child", op, str(n),
         ",".join(map(str, indices))],
        capture_output=True, text=True, check=False,
    )
    if proc.returncode == 0:
        return [json.loads(x) for x in proc.stdout.splitlines() if x.startswith("{")]
    if len(indices) == 1:
        args, call, _ = plan(op, n)[indices[0]]
        return [{"args": args, "call": call, "error": f"crash: the DSL process died ({proc.returncode})"}]
    mid = len(indices) // 2
    return run(op, n, indices[:mid]) + run(op, n, indices[mid:])


def overlaps(layout):
    """Whether A's modes overlap (no complement exists): the DSL tends to die on these in
    products, so they run one per process instead of being found by halving."""
    modes = sorted((d, s) for s, d in zip(leaves(layout.shape), leaves(layout.stride))
                   if s != 1 and d != 0)
    current = 1
    for d, s in modes:
        if d < current:
            return True
        current = s * d
    return False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=600)
    ap.add_argument("--out", default="tests/data/cutedsl")
    ap.add_argument("--ops", default=",".join(OPS))
    ap.add_argument("--child", nargs=3)
    args = ap.parse_args()
    if args.child:
        op, n, indices = args.child
        child(op, int(n), [int(i) for i in indices.split(",")])
        return
    os.makedirs(args.out, exist_ok=True)
    total = errors = 0
    for op in args.ops.split(","):
        n = args.cases
        risky = set()
        if op.endswith("_product"):
            rng = random.Random(20261124 + OPS.index(op))
            for i in range(n):
                state = rng.getstate()
                a = random_layout(rng)
                rng.setstate(state)
                case(op, rng)
                if overlaps(a):
                    risky.add(i)
        safe = [i for i in range(n) if i not in risky]
        got = run(op, n, safe)
        for i in sorted(risky):
            got += run(op, n, [i])
        by_index = dict(zip(safe + sorted(risky), got))
        recs = [by_index[i] for i in range(n)]
        with open(os.path.join(args.out, f"{op}.jsonl"), "w") as f:
            for r in recs:
                f.write(json.dumps(r) + "\n")
        total += len(recs)
        errors += sum(1 for r in recs if "error" in r)
        print(f"{op}: {len(recs)} cases ({len(risky)} run alone)", flush=True)
    print(f"wrote {total} cases ({errors} refused by the DSL) to {args.out}")


if __name__ == "__main__":
    main()
