#!/usr/bin/env python3
"""Issue 24's GEMM benchmark: laycert's emitted kernels next to cuBLAS (torch.matmul) and the
Triton baseline (bench/gpu/gemm_triton.py, best of five configurations), in ONE process.

Each kernel file is what `laycert gen gemm ... -o FILE` wrote; its `#define LC_M/N/K` and the
header's dtype say the problem. The kernels are compiled in parallel with nvcc (sm_90a, the
host launcher enabled), run once on random normal data and compared element by element with
an f32 reference (A.float() @ B.float().T, TF32 off):
    |C - ref| <= tol * (|ref| + rms(ref)),  tol = 2^-7 for bf16, 2^-10 for f16
(cuBLAS's own result is held to the same test and reported). Times are medians of CUDA-event
timed runs after warm-up, the three kernels interleaved rep by rep. Output: one line per kernel, then a JSON list (--json FILE).

Usage: python3 bench/gpu/gemm.py [--reps 20] [--json out.json] KERNEL.cu ...
"""
import argparse
import ctypes
import json
import os
import re
import statistics
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def problem(path):
    text = open(path).read()
    d = {k: int(v) for k, v in re.findall(r"#define (LC_[A-Z_]+) (\d+)", text)}
    dtype = "bf16" if "bf16 operands" in text else "f16"
    variant = "{}x{}x{} st{} wg{} cl{} g{} sk{}".format(d["LC_BM"], d["LC_BN"], d["LC_BK"], d["LC_STAGES"],
                                                     d["LC_CONSUMERS"], d["LC_CLUSTER"], d["LC_GROUP_M"],
                                                     d.get("LC_SPLITS", 1))
    return d, dtype, variant


def compile_one(path):
    """PATH or PATH@-DNAME=V,-DNAME2=V: extra nvcc flags for an experiment."""
    path, _, extra = path.partition("@")
    so = os.path.splitext(path)[0] + (extra.replace(",", "").replace("=", "").replace("-D", "_") if extra else "") + ".so"
    cmd = ["nvcc", "-O3", "-std=c++17", "-gencode", "arch=compute_90a,code=sm_90a", "-DLAYCERT_HOST_LAUNCHER", "-Xptxas=-v",
           "-Xcompiler", "-fPIC", "-shared", "-o", so, path, "-lcuda"] + [f for f in extra.split(",") if f]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return so, r.returncode, (r.stderr or "")[-3000:]
    info = [l.strip() for l in r.stderr.splitlines()
            if "arning" in l or "Performance" in l or "spill" in l or "registers" in l]
    return so, 0, " | ".join(info[-6:])


def median_ms(fn, warmup, reps):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e))
    return statistics.median(times)


def interleaved_ms(fns, warmup, reps):
    """Median CUDA-event time of each function, the functions timed in turn within each rep."""
    for _ in range(warmup):
        for fn in fns:
            fn()
    torch.cuda.synchronize()
    times = [[] for _ in fns]
    for _ in range(reps):
        for j, fn in enumerate(fns):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            fn()
            e.record()
            e.synchronize()
            times[j].append(s.elapsed_time(e))
    return [statistics.median(t) for t in times]


def check(c, ref, tol):
    c = c.float()
    rms = ref.pow(2).mean().sqrt()
    # NaN (the output is poisoned with NaN first) and inf fail: count what is NOT within tolerance.
    bad = (~((c - ref).abs() <= tol * (ref.abs() + rms))).sum().item()
    err = ((c - ref).abs() / (ref.abs() + rms)).max().item()
    return bad, err


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kernels", nargs="+")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--json")
    ap.add_argument("--no-triton", action="store_true")
    a = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    dev = torch.cuda.get_device_name(0)
    print(f"device {dev}; torch {torch.__version__}; CUDA {torch.version.cuda}", flush=True)
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 4) as ex:
        built = list(ex.map(compile_one, a.kernels))
    triton_mod = None
    if not a.no_triton:
        try:
            import triton
            import gemm_triton as triton_mod
            print(f"triton {triton.__version__}", flush=True)
        except Exception as e:  # noqa: BLE001
            print(f"SKIP triton: {e}")
    rows = []
    torch.manual_seed(0)
    for spec, (so, rc, err) in zip(a.kernels, built):
        path, _, extra = spec.partition("@")
        d, dtype, variant = problem(path)
        variant = variant + (" " + extra if extra else "")
        M, N, K = d["LC_M"], d["LC_N"], d["LC_K"]
        name = os.path.basename(path) + (("@" + extra) if extra else "")
        if rc != 0:
            print(f"{name}: COMPILE FAILED\n{err}", flush=True)
            rows.append({"kernel": name, "error": "compile", "log": err})
            continue
        print(f"{name}: ptxas {err}", flush=True)
        tdt = torch.bfloat16 if dtype == "bf16" else torch.float16
        tol = 2.0 ** -7 if dtype == "bf16" else 2.0 ** -10
        A = torch.randn(M, K, device="cuda", dtype=tdt)
        B = torch.randn(N, K, device="cuda", dtype=tdt)
        C = torch.full((M, N), float("nan"), device="cuda", dtype=tdt)
        lib = ctypes.CDLL(so)
        lib.laycert_gemm_launch.restype = ctypes.c_int
        stream = torch.cuda.current_stream().cuda_stream

        def ours():
            r = lib.laycert_gemm_launch(ctypes.c_void_p(A.data_ptr()), ctypes.c_void_p(B.data_ptr()),
                                        ctypes.c_void_p(C.data_ptr()), ctypes.c_void_p(stream))
            if r:
                raise RuntimeError(f"launch returned {r}")
        lib.laycert_gemm_grid.restype = ctypes.c_int
        try:
            ours()
            torch.cuda.synchronize()
        except Exception as e:  # noqa: BLE001
            print(f"{name}: LAUNCH FAILED {e}", flush=True)
            rows.append({"kernel": name, "error": str(e)})
            continue
        grid = lib.laycert_gemm_grid()
        ref = A.float() @ B.float().t()
        bad, maxerr = check(C, ref, tol)
        cub = torch.matmul(A, B.t())
        cbad, cerr = check(cub, ref, tol)
        del ref
        if "LC_PROFILE" in extra:
            lib.laycert_gemm_profile(None, 1)
            ours()
            torch.cuda.synchronize()
            buf = (ctypes.c_ulonglong * (4096 * 8))()
            lib.laycert_gemm_profile(buf, 0)
            n = grid
            tot = [sum(buf[i * 8 + j] for i in range(n)) / max(1, n) for j in range(5)]
            print(f"  profile (mean cycles per CTA, one run): total {tot[3]:.0f}; consumer-0 waits on full "
                  f"{100 * tot[0] / tot[3]:.1f}%, in wgmma waits {100 * tot[1] / tot[3]:.1f}%, epilogue "
                  f"{100 * tot[2] / tot[3]:.1f}%; producer waits on empty {100 * tot[4] / tot[3]:.1f}%", flush=True)
        # The best Triton configuration first (a short run each), then the three kernels timed
        # INTERLEAVED (ours, cuBLAS, Triton, ours, ...), so clock and power drift hit all alike.
        triton_run, best_cfg = None, None
        if triton_mod is not None:
            Ct = torch.empty(M, N, device="cuda", dtype=tdt)
            best = None
            for cfg in triton_mod.CONFIGS:
                try:
                    fn = triton_mod.launcher(A, B, Ct, cfg)
                    t = median_ms(fn, 2, 5)
                except Exception as e:  # noqa: BLE001
                    print(f"  triton config {cfg}: {type(e).__name__}", flush=True)
                    continue
                if best is None or t < best:
                    best, triton_run, best_cfg = t, fn, cfg
        fns = [ours, lambda: torch.matmul(A, B.t(), out=cub)] + ([triton_run] if triton_run else [])
        meds = interleaved_ms(fns, a.warmup, a.reps)
        t_ours, t_cublas = meds[0], meds[1]
        t_triton = meds[2] if triton_run else None
        fl = 2.0 * M * N * K
        tf = lambda t: fl / (t * 1e-3) / 1e12 if t else None  # noqa: E731
        row = {"kernel": name, "M": M, "N": N, "K": K, "dtype": dtype, "variant": variant,
               "bad": bad, "max_rel_err": maxerr, "cublas_bad": cbad, "cublas_max_rel_err": cerr,
               "ms": t_ours, "cublas_ms": t_cublas, "triton_ms": t_triton,
               "tflops": tf(t_ours), "cublas_tflops": tf(t_cublas), "triton_tflops": tf(t_triton),
               "vs_cublas": t_cublas / t_ours, "grid": grid, "vs_triton": (t_triton / t_ours) if t_triton else None,
               "triton_config": best_cfg}
        rows.append(row)
        verdict = "CORRECT" if bad == 0 else f"WRONG ({bad} elements)"
        tri = f"triton {row['triton_tflops']:.1f} ({100 * row['vs_triton']:.1f}%)" if t_triton else "triton -"
        print(f"{M}x{N}x{K} {dtype} [{variant}, grid {grid}]: {verdict} err {maxerr:.2e} (cuBLAS {cerr:.2e}); "
              f"laycert {row['tflops']:.1f} TFLOP/s, cuBLAS {row['cublas_tflops']:.1f} "
              f"({100 * row['vs_cublas']:.1f}%), {tri}", flush=True)
        del A, B, C, cub
        torch.cuda.empty_cache()
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"device": dev, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
