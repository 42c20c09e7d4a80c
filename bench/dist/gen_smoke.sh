#!/bin/sh
# Emits the NCCL programs of the 12 plans of smoke_claims.txt (1-D to 3-D meshes, extents 3
# and 6, uneven, partial, maximal, interleaved _StridedShard) and runs them on the CPU with bench/dist/cpu_check.sh.
# Needs target/release/laycert.
set -e
B=${LAYCERT:-target/release/laycert}
out=$(mktemp -d)
i=0
while read -r mesh shape from to; do
  i=$((i + 1))
  from=$(echo "$from" | sed 's/maximal_device/maximal device/')  # `{maximal_device=2}` -> `{maximal device=2}`
  "$B" dist gen --mesh "$mesh" --shape "$shape" --dtype f32 --from "$from" --to "$to" -o "$out/p$i.cu" >/dev/null
done < "$(dirname "$0")/smoke_claims.txt"
"$(dirname "$0")/cpu_check.sh" "$out"/*.cu
rm -rf "$out"
