#!/bin/sh
# The sm80 path on ragged shapes: full-tile cp.async addressing (LC_FAST_ADDR) on the operand
# tiles and k-blocks inside the problem (LC_FULL_A / LC_FULL_B), guarded loads at the edges;
# beside each kernel its control with LC_FAST_ADDR set to 0 (every load guarded, which is what
# `gen gemm` emitted for these shapes before session 30), for bench/gpu/gemm.py.
# Usage (here): LAYCERT=target/release/laycert sh bench/gpu/emit_ragged80.sh gpu-carry/r80
# Device:       cd gpu-carry && python3 gemm.py --no-triton --reps 20 --json OUT.json r80/*.cu
set -e
L=${LAYCERT:-target/release/laycert}
D=${1:-gpu-carry/r80}
mkdir -p "$D"
while read -r m n k target; do
  [ -z "$m" ] && continue
  f="$D/fast_${target}_${m}x${n}x${k}_bf16.cu"
  $L gen gemm --m "$m" --n "$n" --k "$k" --dtype bf16 --target "$target" -o "$f" | head -1
  if grep -q '^#define LC_FAST_ADDR 1$' "$f"; then
    sed 's/^#define LC_FAST_ADDR 1$/#define LC_FAST_ADDR 0/' "$f" >"$D/guarded_${target}_${m}x${n}x${k}_bf16.cu"
  fi
done <<'X'
4096 4096 4096 sm80
1000 1000 1000 sm80
4000 4096 4096 sm80
4096 4096 4104 sm80
4000 4000 4000 sm80
16 4096 4096 sm80
4096 4096 4100 sm90
4096 4096 4098 sm90
1 8192 8190 sm90
X
