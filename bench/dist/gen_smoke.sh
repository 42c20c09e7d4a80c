#!/bin/sh
# Emits the NCCL programs of 10 plans (1-D to 3-D meshes, extents 3 and 6, uneven, partial,
# maximal) and runs them on the CPU with bench/dist/cpu_check.sh. Needs target/release/laycert.
set -e
B=${LAYCERT:-target/release/laycert}
out=$(mktemp -d)
i=0
while read -r mesh shape from to; do
  i=$((i + 1))
  from=$(echo "$from" | tr _ ' ')  # `{maximal_device=2}` -> `{maximal device=2}`
  "$B" dist gen --mesh "$mesh" --shape "$shape" --dtype f32 --from "$from" --to "$to" -o "$out/p$i.cu" >/dev/null
done <<'CASES'
a=3 7,5 [Shard(0)] [Shard(1)]
a=6 5,11 [Partial(sum)] [Shard(1)]
a=2,b=3 13,7 [Shard(0),Shard(1)] [Shard(1),Shard(0)]
a=2,b=3 13,7 [Partial(sum),Shard(0)] [Shard(0),Replicate()]
a=2,b=2 5,3 [Shard(0),Shard(0)] [Replicate(),Partial(sum)]
a=2,b=2,c=2 6,5,4 [Shard(0),Shard(1),Shard(2)] [Shard(2),Replicate(),Shard(0)]
a=4 8,8 [Shard(0)] [Shard(1)]
a=4 8,8 {maximal_device=2} [Shard(1)]
a=2,b=4 8,8 [Partial(sum),Replicate()] [Replicate(),Replicate()]
a=2,b=4 12,12 [Shard(0),Replicate()] [Replicate(),Shard(1)]
CASES
"$(dirname "$0")/cpu_check.sh" "$out"/*.cu
rm -rf "$out"
