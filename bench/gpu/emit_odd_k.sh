#!/bin/sh
# K not a multiple of 8 (rows no 16-byte load can read): the kernels `gen gemm` emits for them
# (A and B staged through registers; --target sm90 runs this sm80-path kernel), with the
# 16-byte cp.async kernel of the nearest multiple of 8 as the control, for bench/gpu/gemm.py.
# Usage (here): LAYCERT=target/release/laycert sh bench/gpu/emit_odd_k.sh gpu-carry/oddk
# Device:       cd gpu-carry && python3 gemm.py --no-triton --reps 20 --json OUT.json oddk/*.cu
set -e
L=${LAYCERT:-target/release/laycert}
D=${1:-gpu-carry/oddk}
mkdir -p "$D"
while read -r m n k t; do
  [ -z "$m" ] && continue
  for dt in bf16 f16; do
    $L gen gemm --m "$m" --n "$n" --k "$k" --dtype $dt --target sm90 -o "$D/${t}_${m}x${n}x${k}_$dt.cu" | head -3
  done
done <<'X'
4096 4096 4096 control
4096 4096 4100 k4
4096 4096 4098 k2
4096 4096 4097 k1
8192 8192 8191 k1
1000 1000 999 k1
5120 3584 4095 k1
16 8192 8191 k1
1 8192 8190 k2
X
# The same path with 16-byte cp.async at K = 4096 (the staged kernels' own control).
for dt in bf16 f16; do
  $L gen gemm --m 4096 --n 4096 --k 4096 --dtype $dt --target sm80 --smem-limit 232448 -o "$D/control80_4096x4096x4096_$dt.cu" | head -1
done
