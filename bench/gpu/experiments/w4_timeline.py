#!/usr/bin/env python3
"""Issue 24, session 18: where a W4A16 K-group kernel's time goes across the GPU. Each CTA's
thread 0 records %globaltimer when the CTA starts and after its last store (a barrier first), and
its SM; after a cold run (the 256 MiB flush of w4a16.py first) the CTA start spread, the CTA
durations and the end spread are printed next to the CUDA-event time of the run. Timing only:
the probe's products are not checked (w4a16.py checks the unmodified kernel).

  python3 w4_timeline.py KERNEL.cu [RUNS]      (device; w4a16.py beside it)
"""
import ctypes
import os
import statistics
import sys


START = "    const unsigned ring = base + (unsigned)(w * LC_A_SLOTS) * LC_A_SB_BYTES;\n"
END = "    (void)ws;\n    (void)counters;\n}\n#else"
TL = """__device__ unsigned long long lc_tl[8192 * 3];
__device__ __forceinline__ unsigned long long lc_now() {
    unsigned long long x;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(x));
    return x;
}
#ifdef LAYCERT_HOST_LAUNCHER
extern "C" int laycert_timeline(unsigned long long* out, int n) {
    return (int)cudaMemcpyFromSymbol(out, lc_tl, sizeof(unsigned long long) * 3 * n);
}
#endif
"""


def probe(src, dst):
    t = open(src).read()
    assert START in t and END in t, "not a K-group W4A16 kernel"
    k = t.index("#if LC_KGROUP\n// The K-group CTA")
    t = t[:k] + TL + t[k:]
    t = t.replace(START, START + """    if (t == 0) {
        unsigned sm;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
        lc_tl[3 * b] = lc_now();
        lc_tl[3 * b + 2] = sm;
    }
""", 1)
    t = t.replace(END, """    __syncthreads();
    if (t == 0) lc_tl[3 * b + 1] = lc_now();
""" + END, 1)
    open(dst, "w").write(t)


def main():
    import torch
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import w4a16
    src = sys.argv[1]
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    dst = os.path.splitext(src)[0] + "_tl.cu"
    probe(src, dst)
    so, rc, info = w4a16.compile_one(dst)
    if rc:
        sys.exit(f"compile failed\n{info}")
    d = w4a16.problem(dst)
    M, N, K, G = d["LC_M"], d["LC_N"], d["LC_K"], d["LC_GROUP"]
    q = torch.randint(-8, 8, (N, K), dtype=torch.int8, device="cuda")
    scales = (torch.rand(N, K // G, device="cuda") * 0.02 + 0.005).half()
    wp = w4a16.pack_int4(q)
    A = torch.randn(M, K, device="cuda", dtype=torch.float16)
    C = torch.empty(M, N, device="cuda", dtype=torch.float16)
    lib = ctypes.CDLL(so)
    lib.laycert_w4a16_grid.restype = ctypes.c_int
    grid = lib.laycert_w4a16_grid()
    stream = torch.cuda.current_stream().cuda_stream
    scratch = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")

    def ours():
        lib.laycert_w4a16_launch(ctypes.c_void_p(A.data_ptr()), ctypes.c_void_p(wp.data_ptr()),
                                 ctypes.c_void_p(scales.data_ptr()), ctypes.c_void_p(C.data_ptr()),
                                 ctypes.c_void_p(stream))
    for _ in range(5):
        ours()
    torch.cuda.synchronize()
    print(f"{os.path.basename(src)}: {M}x{N}x{K}, grid {grid}; ptxas {info}")
    for r in range(runs):
        scratch.fill_(1)
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        ours()
        e.record()
        e.synchronize()
        buf = (ctypes.c_ulonglong * (3 * grid))()
        lib.laycert_timeline(buf, grid)
        st = [buf[3 * i] for i in range(grid)]
        en = [buf[3 * i + 1] for i in range(grid)]
        t0 = min(st)
        dur = sorted((en[i] - st[i]) / 1e3 for i in range(grid))
        starts = sorted((x - t0) / 1e3 for x in st)
        ends = sorted((x - t0) / 1e3 for x in en)
        sms = len({buf[3 * i + 2] for i in range(grid)})
        q4 = lambda v: f"{v[0]:.2f} / {v[len(v) // 4]:.2f} / {statistics.median(v):.2f} / {v[3 * len(v) // 4]:.2f} / {v[-1]:.2f}"  # noqa: E731
        print(f"run {r}: event {s.elapsed_time(e) * 1e3:.2f} us; first start to last end {ends[-1]:.2f} us on {sms} SMs\n"
              f"  CTA start (us after the first; min/q1/med/q3/max) {q4(starts)}\n"
              f"  CTA duration                                 {q4(dur)}\n"
              f"  CTA end                                      {q4(ends)}", flush=True)


if __name__ == "__main__":
    main()
