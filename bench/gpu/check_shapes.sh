#!/bin/sh
# Correctness sweep of `gpu bench gemm` on ragged and small shapes, each run once under
# compute-sanitizer's memcheck when it is installed (out-of-bounds accesses fail the run), the
# products checked against cuBLAS by the runner. Device command (gpu-carry holds the laycert
# binary and libz3.so.4, see README.md):
#   LD_LIBRARY_PATH=gpu-carry L=gpu-carry/laycert sh bench/gpu/check_shapes.sh
# Prints one `== ARGS` block per shape with the runner's verdict lines and its exit code.
# W4A16 kernels are not run by `gpu bench gemm` (bench/gpu/w4a16.py runs them).
L=${L:-target/release/laycert}
CS="compute-sanitizer --tool memcheck --print-limit 3 --error-exitcode 99"
$CS --version >/dev/null 2>&1 || CS=""
nvidia-smi -L
fails=0
while read -r a; do
  [ -z "$a" ] && continue
  echo "== $a"
  timeout 120 $CS $L gpu bench gemm $a --warmup 0 --reps 1 >/tmp/check_shapes.txt 2>&1
  rc=$?
  grep -i -E "error|mismatch|fail|cells|correct|invalid|=====|SKIP|wrong|nan" /tmp/check_shapes.txt | head -6
  echo "rc=$rc"
  [ $rc -ne 0 ] && fails=$((fails + 1))
done <<'X'
--m 65 --n 129 --k 4104
--m 65 --n 129 --k 4104 --dtype f16
--m 1 --n 1 --k 4104
--m 100 --n 300 --k 2056
--m 1000 --n 1000 --k 1000
--m 1 --n 1 --k 8
--m 17 --n 33 --k 8
--m 4097 --n 1 --k 8
--m 300 --n 700 --k 200 --dtype f16
--m 8 --n 8 --k 65536
--m 129 --n 257 --k 72
--m 2049 --n 3 --k 136
--m 1000 --n 1000 --k 1000 --cluster 2 --bk 32
--m 1000 --n 1000 --k 1000 --target sm80
--m 1 --n 1 --k 8 --target sm80
--m 17 --n 33 --k 8 --target sm80 --dtype f16
--m 129 --n 257 --k 72 --target sm80
--m 1 --n 4097 --k 1000 --target sm80
--m 333 --n 77 --k 1032 --target sm80 --no-swizzle --warpgroups 1
--m 1000 --n 1000 --k 999
--m 1000 --n 1000 --k 999 --target sm80 --dtype f16
--m 7 --n 13 --k 17 --dtype f16
--m 1 --n 1 --k 1
--m 129 --n 257 --k 1002 --target sm80
--m 300 --n 8 --k 4100 --target sm80 --dtype f16
--m 65 --n 129 --k 4097
--m 1 --n 4097 --k 999 --target sm80 --no-swizzle
--m 260 --n 520 --k 200 --target sm80
--m 4000 --n 1000 --k 4104 --target sm80
--m 64 --n 64 --k 64
--m 3 --n 100 --k 1002 --target sm80
X
echo "shapes failed: $fails"
