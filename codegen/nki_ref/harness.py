"""Runs a laycert-emitted NKI kernel on the reference interpreter against NumPy.

usage: python3 harness.py KERNEL.py   (the interpreter's `nki` package must be importable)

The kernel's first line names what it computes: `# laycert-nki: kind=gemm m=M n=N k=K
dtype=bf16 entry=NAME` (kinds gemm, softmax rows/cols, mha heads/seq/dim). Inputs are seeded
uniform values in [-1, 1], rounded to the kernel's dtype; the reference is computed from the
same rounded inputs in float64. Prints `match`, `mismatch` or `rule violated: <rule>: ...`
first, then one JSON line of figures. Exit 0 match, 1 mismatch, 2 rule violated or bad input.
"""

import importlib.util
import json
import sys

import numpy as np

import nki
from nki import _core, isa

# The relative error allowed for rounding to the result's dtype: twice the unit roundoff for
# bfloat16 (2^-8), four times for float16 (2^-11), 64 times for float32 (2^-24).
RTOL = {"bfloat16": 2.0**-7, "float16": 2.0**-9, "float32": 2.0**-18}
# The unit roundoff of float32: PSUM, the statistics and every intermediate the kernels keep.
F32 = 2.0**-24


def header(path):
    with open(path, encoding="utf-8") as f:
        first = f.readline()
    prefix = "# laycert-nki:"
    if not first.startswith(prefix):
        raise ValueError(f"{path}: the first line must start with {prefix!r}")
    fields = {}
    for item in first[len(prefix):].split():
        key, eq, value = item.partition("=")
        if not eq:
            raise ValueError(f"{path}: header field {item!r} is not key=value")
        if key in fields:
            raise ValueError(f"{path}: header field {key}= is given twice")
        fields[key] = value
    return fields


def dtype(name):
    types = {"bf16": _core.bfloat16, "f16": _core.float16, "f32": _core.float32}
    if name not in types:
        raise ValueError(f"header dtype={name}: expected one of {', '.join(types)}")
    return types[name]


def inputs_and_reference(h, rng):
    """The inputs, the float64 reference, the dtype, and a function of the interpreter's figures
    giving each result element's error bound (what `tolerance` below adds to the rounding of the
    result itself)."""
    kind = h["kind"]
    dt = dtype(h.get("dtype", "f32"))

    def rand(*shape):
        return dt.round(rng.uniform(-1.0, 1.0, size=shape)).astype(np.float64)

    if kind == "gemm":
        m, n, k = int(h["m"]), int(h["n"]), int(h["k"])
        a, b = rand(k, m), rand(k, n)
        magnitude = np.abs(a).T @ np.abs(b)

        def bound(stats):
            # Products of dtype inputs are exact; each nc_matmul sums at most 128 of them in
            # float64 and adds that to a float32 PSUM cell, one rounding of a partial sum no
            # larger than sum_k |a_ki b_kj| per matmul the cell has summed.
            return F32 * (max(1, stats["max_accumulation"]) + 1) * magnitude

        return [a, b], a.T @ b, dt, bound
    if kind == "softmax":
        r, c = int(h["rows"]), int(h["cols"])
        x = rand(r, c) * 4.0
        e = np.exp(x - x.max(axis=1, keepdims=True))
        ref = e / e.sum(axis=1, keepdims=True)

        def bound(stats):
            # Relative: the exponentials, a sum of c positive float32 terms, a reciprocal and a
            # product, each float32.
            return F32 * (c + 16) * ref

        return [x], ref, dt, bound
    if kind == "mha":
        hh, s, d = int(h["heads"]), int(h["seq"]), int(h["dim"])
        q, k, v = rand(hh, d, s), rand(hh, d, s), rand(hh, s, d)
        scale = 1.0 / np.sqrt(d)
        scores = np.einsum("hdq,hdk->hqk", q, k) * scale
        p = np.exp(scores - scores.max(axis=2, keepdims=True))
        p /= p.sum(axis=2, keepdims=True)
        ref = np.einsum("hqk,hkd->hqd", p, v)
        pv = np.einsum("hqk,hkd->hqd", p, np.abs(v))
        # The float32 scores' error, scaled into the exponent: relative error of p per row.
        qk = np.einsum("hdq,hdk->hqk", np.abs(q), np.abs(k)).max(axis=2, keepdims=True) * scale
        tiles = -(-s // 128)

        def bound(stats):
            # p is rounded to the dtype before P @ V (RTOL of it), every other step is float32:
            # the scores (d products), the exponent, the running max, sum and rescaling per key
            # tile, and the PSUM accumulation of P @ V.
            steps = max(1, stats["max_accumulation"]) + 8 * tiles + 64
            return (RTOL[dt.name] + F32 * steps * (1.0 + (d + 2) * qk)) * pv

        return [q, k, v], ref, dt, bound
    raise ValueError(f"unknown kind {kind!r}")


def json_number(x):
    """`x`, or its name when it is not finite (JSON has no NaN or infinity)."""
    return x if np.isfinite(x) else str(x)


def run(argv, say):
    """The verdict goes through `say` (the real stdout); see `main`."""
    if len(argv) != 2:
        say("error: usage: harness.py KERNEL.py")
        return 2
    path = argv[1]
    try:
        h = header(path)
        spec = importlib.util.spec_from_file_location("laycert_kernel", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        kernel = getattr(module, h["entry"])
        args, ref, dt, bound = inputs_and_reference(h, np.random.default_rng(int(h.get("seed", "0"))))
    except nki.NkiRuleError as e:
        say(f"rule violated: {e}")
        return 2
    except Exception as e:  # bad input: the file is not a runnable laycert kernel
        say(f"error: {type(e).__name__}: {e}")
        return 2
    hbm = [_core.Tensor(a.shape, dt, _core.shared_hbm, values=a, name=f"in{i}") for i, a in enumerate(args)]
    try:
        out = kernel(*hbm)
    except nki.NkiRuleError as e:
        say(f"rule violated: {e}")
        return 2
    except Exception as e:
        say(f"error: the kernel raised {type(e).__name__}: {e}")
        return 2
    view = _core.as_view(out, "the kernel's result")
    if view.shape != ref.shape:
        say(f"mismatch: result shape {view.shape}, expected {ref.shape}")
        return 1
    if not view.tensor.written[view.index].all():
        say("mismatch: the kernel left cells of its result unwritten")
        return 1
    got = view.tensor.values[view.index].astype(np.float64)
    # Element by element: the rounding of the result to its dtype, plus the bound of what the
    # kernel computed in float32 before it (a single threshold set by the largest element let a
    # GEMM that skipped one k pass).
    tol = RTOL[dt.name] * np.abs(ref) + bound(isa.STATS)
    diff = np.abs(got - ref)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(diff == 0, 0.0, diff / tol)
    ratio = np.where(np.isnan(got), np.inf, ratio)
    worst = np.unravel_index(int(np.argmax(ratio)), ratio.shape)
    err = float(np.max(np.where(np.isnan(diff), np.inf, diff)))
    at_tol, worst_ratio = float(tol[worst]), float(ratio[worst])
    where = list(int(i) for i in worst)
    figures = {
        "max_abs_error": json_number(err),
        "worst_ratio": json_number(worst_ratio),
        "worst_index": where,
        "tolerance": json_number(at_tol),
        "nc_matmul": isa.STATS["nc_matmul"],
        "matmul_fill": (isa.STATS["matmul_volume"] / (isa.STATS["nc_matmul"] * 128 * 128 * 512))
        if isa.STATS["nc_matmul"]
        else None,
        "nc_transpose": isa.STATS["nc_transpose"],
        "dma_bytes": isa.STATS["dma_bytes"],
        "peak_sbuf_bytes_per_partition": _core.MEMORY.peak["sbuf"],
        "peak_psum_bytes_per_partition": _core.MEMORY.peak["psum"],
        "target": _core.target(),
    }
    at = f"at {where}: |{got[worst]:.6g} - {ref[worst]:.6g}|"
    if not worst_ratio <= 1.0:
        bad = int(np.count_nonzero(~(ratio <= 1.0)))
        say(
            f"mismatch: {bad} of {ratio.size} elements outside the tolerance; worst {at} = "
            f"{diff[worst]:.3g} > {at_tol:.3g}"
        )
        say(json.dumps(figures, sort_keys=True))
        return 1
    say(f"match: every element within its tolerance; worst {at} = {diff[worst]:.3g} <= {at_tol:.3g}")
    say(json.dumps(figures, sort_keys=True))
    return 0


def main(argv):
    """Runs the kernel against NumPy. The verdict is the first line of stdout; anything the
    kernel prints goes to stderr, so a kernel that prints is judged like one that does not."""
    real, sys.stdout = sys.stdout, sys.stderr
    try:
        return run(argv, lambda *a, **k: print(*a, file=real, **k))
    finally:
        sys.stdout = real


if __name__ == "__main__":
    sys.exit(main(sys.argv))
