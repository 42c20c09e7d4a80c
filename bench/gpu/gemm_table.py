#!/usr/bin/env python3
"""Renders a bench/gpu/gemm.py JSON file as the markdown table of bench/gpu/README.md."""
import json
import sys

d = json.load(open(sys.argv[1]))
print(f"device: {d['device']}\n")
print("| M x N x K | dtype | CTA config | correct (max err) | laycert TFLOP/s | cuBLAS | laycert/cuBLAS | Triton | laycert/Triton |")
print("| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: |")
rows = [r for r in d["rows"] if "error" not in r]
rows.sort(key=lambda r: (r["M"] < 1000, -r["M"], r["N"], r["K"], r["dtype"]))
worst = min(rows, key=lambda r: r["vs_cublas"])
for r in rows:
    ok = "yes" if r["bad"] == 0 else f"NO ({r['bad']})"
    tri = f"{r['triton_tflops']:.1f}" if r.get("triton_tflops") else "-"
    vt = f"{100 * r['vs_triton']:.1f}%" if r.get("vs_triton") else "-"
    print(f"| {r['M']}x{r['N']}x{r['K']} | {r['dtype']} | {r['variant']} | {ok} ({r['max_rel_err']:.1e}) | "
          f"{r['tflops']:.1f} | {r['cublas_tflops']:.1f} | {100 * r['vs_cublas']:.1f}% | {tri} | {vt} |")
print(f"\n{len(rows)} kernels, {sum(r['bad'] == 0 for r in rows)} correct; lowest ratio to cuBLAS "
      f"{100 * worst['vs_cublas']:.1f}% ({worst['M']}x{worst['N']}x{worst['K']} {worst['dtype']}).")
