#!/bin/bash
# Runs the GPU measurements of bench/gpu/README.md on the device machine, from the repo root:
# the ten layout pairs (correctness + bandwidth vs. D2D copy), the unswizzled baselines, and
# Nsight Compute's shared-memory counters for the swizzled and unswizzled f32/f16 transposes.
# Needs gpu-carry/laycert and gpu-carry/libz3.so.4 (see README.md). Logs go to $OUT when set.
set -u
OUT=${OUT:-/tmp/laycert-gpu}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=$PWD/gpu-carry:${LD_LIBRARY_PATH:-}
L=$PWD/gpu-carry/laycert
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
PAIRS=${PAIRS:-bench/gpu/pairs.txt}
pairs() { grep -v '^#' "$PAIRS"; }

echo "### ten pairs (swizzled plans)"
pairs | while IFS='|' read -r n s d sh dt; do
  printf '%-32s ' "$n"
  "$L" gpu bench --src "$s" --dst "$d" --shape "$sh" --dtype "$dt" >"$OUT/$n.txt" 2>&1
  echo "rc=$? $(head -2 "$OUT/$n.txt" | cut -c1-150 | tr '\n' ' ')"
done

echo "### unswizzled baselines"
for dt in f32 f16; do
  printf '%-32s ' "transpose-$dt-noswizzle"
  "$L" gpu bench --src "(8192,8192):(8192,1)" --dst "(8192,8192):(1,8192)" --shape 8192,8192 \
    --dtype $dt --no-swizzle >"$OUT/transpose-$dt-noswizzle.txt" 2>&1
  echo "rc=$? $(head -2 "$OUT/transpose-$dt-noswizzle.txt" | cut -c1-150 | tr '\n' ' ')"
done

NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
M=l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed_op_shared_st.sum
echo "### Nsight Compute ($NCU)"
for dt in f32 f16 i8; do
  for sw in "" "--no-swizzle"; do
    tag="ncu-$dt${sw:+-noswizzle}"
    "$NCU" --clock-control none -k laycert_copy -c 1 --metrics $M \
      "$L" gpu bench --src "(8192,8192):(8192,1)" --dst "(8192,8192):(1,8192)" --shape 8192,8192 \
      --dtype $dt $sw --warmup 0 --reps 1 >"$OUT/$tag.txt" 2>&1
    echo "== $tag rc=$?"
    grep -E "predicted shared|l1tex__|smsp__" "$OUT/$tag.txt" | sed 's/  */ /g'
  done
done

# The scalar baseline: one 4-byte word per lane (--vector 1) through a 32x32 f32 tile
# (--tile-bytes 128); unswizzled, each warp's column walk hits one bank: 32 wavefronts per
# instruction predicted. The same plan with the chosen swizzle: 1.
echo "### scalar f32 transpose (32-way baseline)"
for sw in "" "--no-swizzle"; do
  tag="ncu-f32-scalar${sw:+-noswizzle}"
  "$NCU" --clock-control none -k laycert_copy -c 1 --metrics $M \
    "$L" gpu bench --src "(8192,8192):(8192,1)" --dst "(8192,8192):(1,8192)" --shape 8192,8192 \
    --dtype f32 --tile-bytes 128 --vector 1 $sw --warmup 0 --reps 1 >"$OUT/$tag.txt" 2>&1
  echo "== $tag rc=$?"
  grep -E "predicted shared|l1tex__|smsp__" "$OUT/$tag.txt" | sed 's/  */ /g'
  "$L" gpu bench --src "(8192,8192):(8192,1)" --dst "(8192,8192):(1,8192)" --shape 8192,8192 \
    --dtype f32 --tile-bytes 128 --vector 1 $sw >"$OUT/bench-f32-scalar${sw:+-noswizzle}.txt" 2>&1
  echo "bench rc=$? $(head -2 "$OUT/bench-f32-scalar${sw:+-noswizzle}.txt" | cut -c1-150 | tr '\n' ' ')"
done
