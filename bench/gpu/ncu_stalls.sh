#!/usr/bin/env bash
# Issue 24: where an sm80 kernel's warps stall, and the clocks it runs at (device; gemm.py beside
# this script). For each KERNEL.cu: Nsight Compute's full set on the first launch of laycert_gemm
# (details page, and the SASS page with per-instruction warp-state samples), then a 60-rep timed
# run with nvidia-smi sampling SM clock, power and temperature every 100 ms.
#   bash ncu_stalls.sh OUTDIR KERNEL.cu ...
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$1; shift
mkdir -p "$out"
for k in "$@"; do
  n=$(basename "$k" .cu)
  ncu --clock-control none -k laycert_gemm -c 1 --set full --import-source no -f -o "$out/$n" \
    python3 "$here/gemm.py" --no-triton --reps 1 --warmup 0 "$k" > "$out/$n.ncu.log" 2>&1
  ncu -i "$out/$n.ncu-rep" --page details > "$out/$n.details.txt" 2>&1
  ncu -i "$out/$n.ncu-rep" --page source --csv --print-source sass > "$out/$n.sass.csv" 2>&1
  nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
    --format=csv -lms 100 > "$out/$n.smi.csv" 2>&1 &
  smi=$!
  python3 "$here/gemm.py" --no-triton --reps 60 "$k" > "$out/$n.time.txt" 2>&1
  kill $smi
done
