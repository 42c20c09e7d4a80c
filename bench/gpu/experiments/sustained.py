#!/usr/bin/env python3
"""Issue 24: an sm80 kernel and cuBLAS each run alone, back to back for SECONDS, while
nvidia-smi samples SM clock, power and the clock-event reasons every 50 ms: TFLOP/s per
second-long window, and the clocks the GPU held. Shows whether the device's power cap, not the
kernel's schedule, sets a figure.  (device; gemm.py beside it)
  python3 sustained.py KERNEL.cu [SECONDS]
"""
import ctypes, os, subprocess, sys, time
import torch
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gemm  # noqa: E402

path = sys.argv[1]
secs = float(sys.argv[2]) if len(sys.argv) > 2 else 3.0
d, dt, _ = gemm.problem(path)
M, N, K = d["LC_M"], d["LC_N"], d["LC_K"]
dtype = torch.bfloat16 if dt == "bf16" else torch.float16
A = torch.randn(M, K, device="cuda", dtype=dtype)
B = torch.randn(N, K, device="cuda", dtype=dtype)
C = torch.empty(M, N, device="cuda", dtype=dtype)
so, rc, log = gemm.compile_one(path)
if rc:
    sys.exit(f"{path}: compile failed\n{log}")
lib = ctypes.CDLL(so)
stream = torch.cuda.current_stream().cuda_stream


def launch(a, b, c):
    lib.laycert_gemm_launch(ctypes.c_void_p(a.data_ptr()), ctypes.c_void_p(b.data_ptr()),
                            ctypes.c_void_p(c.data_ptr()), ctypes.c_void_p(stream))


print(subprocess.run(["nvidia-smi", "--query-gpu=power.limit,power.default_limit,power.max_limit,clocks.max.sm",
                      "--format=csv"], capture_output=True, text=True).stdout, flush=True)


def window(name, fn):
    smi = subprocess.Popen(["nvidia-smi", "--query-gpu=clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active",
                            "--format=csv,noheader,nounits", "-lms", "50"], stdout=subprocess.PIPE, text=True)
    time.sleep(0.3)
    t_end = time.time() + secs
    per = []
    while time.time() < t_end:
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(20):
            fn()
        e.record()
        e.synchronize()
        per.append(2.0 * M * N * K * 20 / (s.elapsed_time(e) * 1e-3) / 1e12)
    smi.terminate()
    samples = [l.split(", ") for l in smi.communicate()[0].splitlines() if l.strip()]
    busy = [x for x in samples if int(x[0]) > 500]
    clk = sorted(int(x[0]) for x in busy) or [0]
    pw = sorted(float(x[1]) for x in busy) or [0.0]
    reasons = sorted({x[3] for x in busy})
    print(f"{name:8s} TFLOP/s first {per[0]:6.1f} median {sorted(per)[len(per)//2]:6.1f} last {per[-1]:6.1f} "
          f"({len(per)} windows of 20) | SM MHz median {clk[len(clk)//2]} min {clk[0]} | W median {pw[len(pw)//2]:.0f} "
          f"max {pw[-1]:.0f} | reasons {' '.join(reasons)}", flush=True)
    time.sleep(1.0)


for rnd in range(2):
    window("laycert", lambda: launch(A, B, C))
    window("cuBLAS", lambda: torch.matmul(A, B.t()))
