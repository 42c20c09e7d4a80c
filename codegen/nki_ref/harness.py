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

TOLERANCE = {"bfloat16": 2.0**-7, "float16": 2.0**-9, "float32": 2.0**-18}


def header(path):
    with open(path, encoding="utf-8") as f:
        first = f.readline()
    prefix = "# laycert-nki:"
    if not first.startswith(prefix):
        raise ValueError(f"{path}: the first line must start with {prefix!r}")
    fields = dict(item.split("=", 1) for item in first[len(prefix):].split())
    return fields


def dtype(name):
    return {"bf16": _core.bfloat16, "f16": _core.float16, "f32": _core.float32}[name]


def inputs_and_reference(h, rng):
    kind = h["kind"]
    dt = dtype(h.get("dtype", "f32"))

    def rand(*shape):
        return dt.round(rng.uniform(-1.0, 1.0, size=shape)).astype(np.float64)

    if kind == "gemm":
        m, n, k = int(h["m"]), int(h["n"]), int(h["k"])
        a, b = rand(k, m), rand(k, n)
        return [a, b], a.T @ b, dt
    if kind == "softmax":
        r, c = int(h["rows"]), int(h["cols"])
        x = rand(r, c) * 4.0
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return [x], e / e.sum(axis=1, keepdims=True), dt
    if kind == "mha":
        hh, s, d = int(h["heads"]), int(h["seq"]), int(h["dim"])
        q, k, v = rand(hh, d, s), rand(hh, d, s), rand(hh, s, d)
        scores = np.einsum("hdq,hdk->hqk", q, k) / np.sqrt(d)
        p = np.exp(scores - scores.max(axis=2, keepdims=True))
        p /= p.sum(axis=2, keepdims=True)
        return [q, k, v], np.einsum("hqk,hkd->hqd", p, v), dt
    raise ValueError(f"unknown kind {kind!r}")


def main(argv):
    if len(argv) != 2:
        print("error: usage: harness.py KERNEL.py")
        return 2
    path = argv[1]
    try:
        h = header(path)
        spec = importlib.util.spec_from_file_location("laycert_kernel", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        kernel = getattr(module, h["entry"])
        args, ref, dt = inputs_and_reference(h, np.random.default_rng(int(h.get("seed", "0"))))
    except nki.NkiRuleError as e:
        print(f"rule violated: {e}")
        return 2
    except Exception as e:  # bad input: the file is not a runnable laycert kernel
        print(f"error: {type(e).__name__}: {e}")
        return 2
    hbm = [_core.Tensor(a.shape, dt, _core.shared_hbm, values=a, name=f"in{i}") for i, a in enumerate(args)]
    try:
        out = kernel(*hbm)
    except nki.NkiRuleError as e:
        print(f"rule violated: {e}")
        return 2
    except Exception as e:
        print(f"error: the kernel raised {type(e).__name__}: {e}")
        return 2
    view = _core.as_view(out, "the kernel's result")
    if view.shape != ref.shape:
        print(f"mismatch: result shape {view.shape}, expected {ref.shape}")
        return 1
    if not view.tensor.written[view.index].all():
        print("mismatch: the kernel left cells of its result unwritten")
        return 1
    got = view.tensor.values[view.index].astype(np.float64)
    scale = max(1.0, float(np.abs(ref).max()))
    err = float(np.abs(got - ref).max())
    tol = TOLERANCE[dt.name] * scale
    figures = {
        "max_abs_error": err,
        "tolerance": tol,
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
    if not err <= tol:
        print(f"mismatch: max |kernel - numpy| = {err:.3g} > tolerance {tol:.3g}")
        print(json.dumps(figures, sort_keys=True))
        return 1
    print(f"match: max |kernel - numpy| = {err:.3g} <= tolerance {tol:.3g}")
    print(json.dumps(figures, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
