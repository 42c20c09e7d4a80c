#!/usr/bin/env python3
"""Issue 24's W4A16 benchmark: laycert's int4-weight kernels next to cuBLAS f16 with f16
weights (torch.matmul(A, Wdeq.t())), in ONE process.

Each kernel file is what `laycert gen gemm --weights int4 ... -o FILE` wrote; its
`#define LC_M/N/K/GROUP` say the problem. Per kernel:
  - q: random signed int4 in [-8, 7] (N, K); scales: random f16 (N, K / GROUP) in [0.005, 0.025);
    Wdeq = q.half() * scales (repeated over each group of K), the f16 product rounded once,
    exactly what the kernel computes in registers;
  - W packed as the kernel expects (codegen::gemm::w4a16; the kernel's `#define LC_W_PACK`):
    nibble offset of (n, k) = (k%2)*S0 + 32*((k//2)%2) + 512*((k//4)%2) + S3*((k//8)%4)
    + 8*((k//32)%4) + 1024*(k//128) + 64*(n%8) + 8*K*(n//8), with (S0, S3) = (1, 2) for
    LC_W_PACK 0 (sequential) and (4, 1) for LC_W_PACK 1 (TensorRT-LLM's interleave, the
    default: a word's nibbles 0..7 hold k' + 0, 8, 16, 24, 1, 9, 17, 25); nibble i of a 32-bit
    little-endian word = bits 4i..4i+3 (so byte b holds nibbles 2b (low) and 2b+1 (high)); q
    stored as its two's-complement low 4 bits;
  - A: random normal f16 (M, K); C poisoned with NaN, the kernel run twice (the split-K
    counters must reset), every element of both outputs compared with the f32 reference
    A.float() @ Wdeq.float().T (TF32 off):
        |C - ref| <= tol * (|ref| + rms(ref)),  tol = 2^-10
    (cuBLAS's f16 result is held to the same test and reported);
  - times: medians of CUDA-event timed runs after warm-up, with L2 flushed (a 256 MiB write)
    before every timed run ("cold", the main figure: the int4 weights, 32 MiB at 8192^2, would
    otherwise stay in the 50 MiB L2) and without ("hot").
Output: one line per kernel, then a JSON list (--json FILE).

Usage: python3 bench/gpu/w4a16.py [--reps 50] [--json out.json] KERNEL.cu ...
"""
import argparse
import ctypes
import json
import os
import re
import statistics
import subprocess
from concurrent.futures import ThreadPoolExecutor

import torch


def problem(path):
    text = open(path).read()
    return {k: int(v) for k, v in re.findall(r"#define (LC_[A-Z_]+) (\d+)", text)}


def compile_one(path):
    so = os.path.splitext(path)[0] + ".so"
    cmd = ["nvcc", "-O3", "-std=c++17", "-gencode", "arch=compute_90a,code=sm_90a", "-DLAYCERT_HOST_LAUNCHER",
           "-Xptxas=-v", "-Xcompiler", "-fPIC", "-shared", "-o", so, path]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return so, r.returncode, (r.stderr or "")[-3000:]
    info = [l.strip() for l in r.stderr.splitlines() if "registers" in l or "spill" in l]
    return so, 0, " | ".join(info[-4:])


def pack_int4(q, pack=0):
    """q: (N, K) int8 in [-8, 7] -> uint8 bytes of the packed layout (N*K/2 bytes).
    pack 1 (a kernel's `#define LC_W_PACK 1`): inside each word the nibbles are k0-major
    (nibble 4 k0 + k3 instead of k0 + 2 k3: word nibbles k' + 0, 8, 16, 24, 1, 9, 17, 25)."""
    N, K = q.shape
    nib = (q.to(torch.int16) & 0xF).to(torch.uint8)
    # view dims (nb, n0, ks, kb, k3, k2, k1, k0); k = k0 + 2k1 + 4k2 + 8k3 + 32kb + 128ks
    v = nib.view(N // 8, 8, K // 128, 4, 4, 2, 2, 2)
    # offset order, slowest first: nb, ks, k2, n0, k1, kb, k3, k0 (pack 1: ..., kb, k0, k3)
    order = (0, 2, 5, 1, 6, 3, 4, 7) if pack == 0 else (0, 2, 5, 1, 6, 3, 7, 4)
    flat = v.permute(*order).contiguous().view(-1)
    return (flat[0::2] | (flat[1::2] << 4)).contiguous()


def median_ms(fn, warmup, reps, flush=None):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        if flush is not None:
            flush()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e))
    return statistics.median(times)


def check(c, ref, tol):
    c = c.float()
    rms = ref.pow(2).mean().sqrt()
    bad = (~((c - ref).abs() <= tol * (ref.abs() + rms))).sum().item()
    err = ((c - ref).abs() / (ref.abs() + rms)).max().item()
    return bad, err


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kernels", nargs="+")
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--json")
    a = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
    dev = torch.cuda.get_device_name(0)
    print(f"device {dev}; torch {torch.__version__}; CUDA {torch.version.cuda}", flush=True)
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 4) as ex:
        built = list(ex.map(compile_one, a.kernels))
    scratch = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    flush = lambda: scratch.fill_(1)  # noqa: E731
    clean_src = torch.ones(64 << 20, dtype=torch.int32, device="cuda")
    flush_clean = lambda: clean_src.sum()  # noqa: E731
    rows = []
    torch.manual_seed(0)
    tol = 2.0 ** -10
    for path, (so, rc, info) in zip(a.kernels, built):
        name = os.path.basename(path)
        if rc != 0:
            print(f"{name}: COMPILE FAILED\n{info}", flush=True)
            rows.append({"kernel": name, "error": "compile", "log": info})
            continue
        print(f"{name}: ptxas {info}", flush=True)
        d = problem(path)
        M, N, K, G = d["LC_M"], d["LC_N"], d["LC_K"], d["LC_GROUP"]
        q = torch.randint(-8, 8, (N, K), dtype=torch.int8, device="cuda")
        scales = (torch.rand(N, K // G, device="cuda") * 0.02 + 0.005).half()
        wdeq = q.half() * scales.repeat_interleave(G, dim=1)
        wp = pack_int4(q, d.get("LC_W_PACK", 0))
        assert wp.numel() == N * K // 2
        A = torch.randn(M, K, device="cuda", dtype=torch.float16)
        C = torch.full((M, N), float("nan"), device="cuda", dtype=torch.float16)
        lib = ctypes.CDLL(so)
        lib.laycert_w4a16_launch.restype = ctypes.c_int
        lib.laycert_w4a16_grid.restype = ctypes.c_int
        stream = torch.cuda.current_stream().cuda_stream

        def ours():
            r = lib.laycert_w4a16_launch(ctypes.c_void_p(A.data_ptr()), ctypes.c_void_p(wp.data_ptr()),
                                         ctypes.c_void_p(scales.data_ptr()), ctypes.c_void_p(C.data_ptr()),
                                         ctypes.c_void_p(stream))
            if r:
                raise RuntimeError(f"launch returned {r}")
        ref = A.float() @ wdeq.float().t()
        try:
            ours()
            torch.cuda.synchronize()
            bad1, err1 = check(C, ref, tol)
            C.fill_(float("nan"))
            ours()
            torch.cuda.synchronize()
        except Exception as e:  # noqa: BLE001
            print(f"{name}: LAUNCH FAILED {e}", flush=True)
            rows.append({"kernel": name, "error": str(e)})
            continue
        bad2, err2 = check(C, ref, tol)
        bad, maxerr = bad1 + bad2, max(err1, err2)
        cub = torch.matmul(A, wdeq.t())
        cbad, cerr = check(cub, ref, tol)
        t_cold = median_ms(ours, a.warmup, a.reps, flush)
        t_hot = median_ms(ours, a.warmup, a.reps)
        c_cold = median_ms(lambda: torch.matmul(A, wdeq.t(), out=cub), a.warmup, a.reps, flush)
        c_hot = median_ms(lambda: torch.matmul(A, wdeq.t(), out=cub), a.warmup, a.reps)
        t_clean = median_ms(ours, a.warmup, a.reps, flush_clean)
        c_clean = median_ms(lambda: torch.matmul(A, wdeq.t(), out=cub), a.warmup, a.reps, flush_clean)
        wbytes = N * K // 2 + N * (K // G) * 2 + M * K * 2 + M * N * 2
        cbytes = N * K * 2 + M * K * 2 + M * N * 2
        gbs = lambda b, t: b / (t * 1e-3) / 1e9  # noqa: E731
        row = {"kernel": name, "M": M, "N": N, "K": K, "group": G, "grid": lib.laycert_w4a16_grid(),
               "splits": d.get("LC_SPLITS"), "bn": d.get("LC_BN"), "bad": bad, "max_rel_err": maxerr,
               "cublas_bad": cbad, "cublas_max_rel_err": cerr, "tol": tol,
               "us_cold": t_cold * 1e3, "us_hot": t_hot * 1e3, "cublas_us_cold": c_cold * 1e3,
               "cublas_us_hot": c_hot * 1e3, "speedup_cold": c_cold / t_cold, "speedup_hot": c_hot / t_hot,
               "us_clean": t_clean * 1e3, "cublas_us_clean": c_clean * 1e3, "speedup_clean": c_clean / t_clean,
               "gbs_cold": gbs(wbytes, t_cold), "cublas_gbs_cold": gbs(cbytes, c_cold)}
        rows.append(row)
        verdict = "CORRECT" if bad == 0 else f"WRONG ({bad} elements)"
        print(f"W4A16 {M}x{N}x{K} g{G} [bn {row['bn']}, splits {row['splits']}, grid {row['grid']}]: {verdict} "
              f"err {maxerr:.2e} (cuBLAS {cerr:.2e}, tol {tol:.1e}); cold {row['us_cold']:.1f} us "
              f"({row['gbs_cold']:.0f} GB/s) vs cuBLAS f16 {row['cublas_us_cold']:.1f} us "
              f"({row['cublas_gbs_cold']:.0f} GB/s): {row['speedup_cold']:.2f}x; hot {row['us_hot']:.1f} us vs "
              f"{row['cublas_us_hot']:.1f} us: {row['speedup_hot']:.2f}x; clean {row['us_clean']:.1f} us vs "
              f"{row['cublas_us_clean']:.1f} us: {row['speedup_clean']:.2f}x", flush=True)
        del q, scales, wdeq, wp, A, C, cub, ref
        torch.cuda.empty_cache()
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"device": dev, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
