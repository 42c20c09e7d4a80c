#!/usr/bin/env python3
"""Peers deciding the same equivalences as `certify/benches/deciders.rs`, timed on this machine.

Pair with a domain of 2^k (k in 10, 16, 20, 24, 30), as in the Rust bench:
    A = (2^a, 2^b):(2^b, 1)      B = (2^a, (2^c, 2^(b-c))):(2^b, (1, 2^c))
with a = k // 2, b = k - a, c = b // 2. They are equivalent, so an enumeration runs to the end.

- pycute (CUTLASS's reference, `pip install nvidia-cutlass`): `A(i) == B(i)` for every index.
- tensor-layouts (`pip install tensor-layouts`): `functionally_equal(A, B)`.
- islpy (`pip install islpy`): both layouts as ISL maps {[i, j] -> [o]} (the hierarchical mode
  with existential digits), `A.is_equal(B)`, construction included.

Enumerations are run in full up to 2^20 indices. Above that they are timed on the first 2^20
indices and scaled linearly (marked "extrapolated"): 2^30 Python calls would take hours.
Writes JSON to bench/equiv/peers.json (or argv[1]).
"""

import json
import statistics
import sys
import time

SIZES = [10, 16, 20, 24, 30]
FULL_LIMIT = 1 << 20


def dims(k):
    a = k // 2
    b = k - a
    return a, b, b // 2


def timed(fn, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        ok = fn()
        times.append(time.perf_counter() - t)
        assert ok, "the pair is equivalent; the peer said no"
    return statistics.median(times)


def enumeration(make_a, make_b, k, call):
    """(seconds, extrapolated?) for comparing every index, or the first 2^20 scaled."""
    la, lb = make_a(), make_b()
    n = 1 << k
    m = min(n, FULL_LIMIT)
    repeat = 5 if m <= 1 << 16 else 1
    t = timed(lambda: call(la, lb, m), repeat)
    return t * (n / m), n > m


def pycute_case(k):
    import pycute

    a, b, c = dims(k)
    make_a = lambda: pycute.Layout((1 << a, 1 << b), (1 << b, 1))
    make_b = lambda: pycute.Layout(
        (1 << a, (1 << c, 1 << (b - c))), (1 << b, (1, 1 << c))
    )
    return enumeration(make_a, make_b, k, lambda x, y, m: all(x(i) == y(i) for i in range(m)))


def tensor_layouts_case(k):
    import tensor_layouts as tl
    from tensor_layouts.analysis import functionally_equal

    a, b, c = dims(k)
    make_a = lambda: tl.Layout((1 << a, 1 << b), (1 << b, 1))
    make_b = lambda: tl.Layout((1 << a, (1 << c, 1 << (b - c))), (1 << b, (1, 1 << c)))

    def call(x, y, m):
        if m == 1 << k:
            return functionally_equal(x, y)
        # The same loop functionally_equal runs, on the first m indices.
        return all(x(i) == y(i) for i in range(m))

    return enumeration(make_a, make_b, k, call)


def islpy_case(k):
    import islpy as isl

    a, b, c = dims(k)

    def run():
        ctx = isl.Context()
        ma = isl.Map(
            f"{{ [i, j] -> [o] : 0 <= i < {1 << a} and 0 <= j < {1 << b} and o = {1 << b}*i + j }}",
            context=ctx,
        )
        mb = isl.Map(
            f"{{ [i, j] -> [o] : exists (j0, j1 : j = j0 + {1 << c}*j1 and 0 <= j0 < {1 << c} "
            f"and 0 <= j1 < {1 << (b - c)} and 0 <= i < {1 << a} "
            f"and o = {1 << b}*i + j0 + {1 << c}*j1) }}",
            context=ctx,
        )
        return ma.is_equal(mb)

    return timed(run, 20), False


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "bench/equiv/peers.json"
    import islpy
    import pycute  # noqa: F401
    import tensor_layouts

    results = {"versions": {"islpy": islpy.__version__}, "sizes": {}}
    try:
        from importlib.metadata import version

        results["versions"]["nvidia-cutlass"] = version("nvidia-cutlass")
        results["versions"]["tensor-layouts"] = version("tensor-layouts")
    except Exception:  # pragma: no cover - metadata is optional
        pass
    for k in SIZES:
        row = {}
        for name, case in [
            ("pycute", pycute_case),
            ("tensor_layouts", tensor_layouts_case),
            ("islpy", islpy_case),
        ]:
            secs, extrapolated = case(k)
            row[name] = {"seconds": secs, "extrapolated": extrapolated}
            print(f"2^{k} {name}: {secs:.6f} s{' (extrapolated)' if extrapolated else ''}", flush=True)
        results["sizes"][str(k)] = row
    with open(out, "w") as f:
        json.dump(results, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
