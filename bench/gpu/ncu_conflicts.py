#!/usr/bin/env python3
"""Issue 24: Nsight Compute's shared-memory counters against synthesis's bank-model prediction.

For each sm80 kernel file (`laycert gen gemm --target sm80 [--no-swizzle] -o F`), the header's
`// predicted: copy -> X: I instructions, W shared wavefronts (ideal W0)` lines are per
tile-program instance: one CTA k-block for the main loop's copies (a_s, b_s by cp.async; a, b
by ldmatrix), one CTA tile for the epilogue's (h_s by st.shared, o by ld.shared). Totals =
per-instance x k-blocks x CTAs (main loop) or x CTAs (epilogue). The kernel is profiled once
under `ncu --clock-control none` (first launch of laycert_gemm in bench/gpu/gemm.py) and the
ldmatrix / st.shared / ld.shared wavefronts are compared with the prediction.

Usage (device): python3 ncu_conflicts.py KERNEL.cu ...   (gemm.py beside it)
"""
import csv
import io
import math
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def available():
    out = subprocess.run(["ncu", "--query-metrics"], capture_output=True, text=True).stdout
    return {l.split()[0] for l in out.splitlines() if l and not l.startswith(("-", " ", "Device"))}


def pick(names):
    want = {}
    for op in ("ldsm", "ld", "st", "ldgsts"):
        for base in (f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}",
                     f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{op}",
                     f"smsp__sass_inst_executed_op_shared_{op}",
                     f"smsp__inst_executed_op_{op}"):
            if base in names:
                want[base] = base + ".sum"
    return want


def predicted(path):
    text = open(path).read()
    d = {k: int(v) for k, v in re.findall(r"#define (LC_[A-Z_]+) (\d+)", text)}
    per = {m.group(1): (int(m.group(2)), int(m.group(3)), int(m.group(4)))
           for m in re.finditer(r"// predicted: copy -> (\w+): (\d+) instructions, (\d+) shared wavefronts \(ideal (\d+)\)", text)}
    ctas = math.ceil(d["LC_M"] / d["LC_BM"]) * math.ceil(d["LC_N"] / d["LC_BN"])
    kb = math.ceil(d["LC_K"] / d["LC_BK"])
    # LC_PIPELINED (session 17): LC_PRELOAD's groups are loaded once more per CTA than there are
    # k-blocks (before the loop, and after every k-block's LC_ADVANCE, the last one's reading a
    # stage no k-block fills); counted as that fraction of an operand's per-k-block ldmatrix
    # (every group of an operand is one ldmatrix.x4 with the same bank pattern up to the XOR).
    extra = {"a": 0.0, "b": 0.0}
    m = re.search(r"#define LC_PRELOAD \\\n(.*?)/\* end of LC_PRELOAD \*/", text, re.S)
    if m:
        for op in ("a", "b"):
            n = len(re.findall(rf"LC_LDSM_{op.upper()}\(\d+\)", m.group(1)))
            extra[op] = n / d[f"LC_{op.upper()}_GROUPS"]
    tot = {}
    for name, (ins, w, ideal) in per.items():
        mult = ctas * (kb + extra.get(name, 0.0) if name in ("a_s", "b_s", "a", "b") else 1)
        tot[name] = (round(ins * mult), round(w * mult), round(ideal * mult))
    return tot


def main():
    names = available()
    metrics = pick(names)
    print("metrics:", ", ".join(sorted(metrics.values())), flush=True)
    for path in sys.argv[1:]:
        tot = predicted(path)
        cmd = ["ncu", "--clock-control", "none", "-k", "laycert_gemm", "-c", "1", "--csv", "--page", "raw",
               "--metrics", ",".join(metrics.values()), sys.executable, os.path.join(HERE, "gemm.py"),
               "--no-triton", "--reps", "1", "--warmup", "0", path]
        r = subprocess.run(cmd, capture_output=True, text=True)
        rows = [l for l in r.stdout.splitlines() if l.startswith('"')]
        got = {}
        if len(rows) >= 2:
            rd = list(csv.reader(io.StringIO("\n".join(rows))))
            head, units, vals = rd[0], rd[1], rd[-1]
            for h, v in zip(head, vals):
                if h in metrics.values():
                    try:
                        got[h] = float(v.replace(",", ""))
                    except ValueError:
                        pass
        else:
            print(r.stdout[-2000:], r.stderr[-2000:])
        name = os.path.basename(path)
        ld = sum(tot[n][1] for n in ("a", "b") if n in tot)
        ld_ideal = sum(tot[n][2] for n in ("a", "b") if n in tot)
        print(f"{name}: predicted ldmatrix wavefronts {ld} (ideal {ld_ideal}, conflicts {ld - ld_ideal}); "
              f"st.shared {tot.get('h_s', (0, 0, 0))[1]}; ld.shared {tot.get('o', (0, 0, 0))[1]}; "
              f"cp.async {tot.get('a_s', (0,0,0))[1] + tot.get('b_s', (0,0,0))[1]}", flush=True)
        for k in sorted(got):
            print(f"  ncu {k} = {got[k]:.0f}", flush=True)


if __name__ == "__main__":
    main()
