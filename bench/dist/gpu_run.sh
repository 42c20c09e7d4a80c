#!/bin/sh
# `laycert dist run` on the lent GPU for the claims of smoke_claims.txt and two large ones (1-D to 3-D meshes,
# extents 3 and 6, uneven, partial, maximal): every rank's buffers on GPU 0, the NCCL program's
# kernels through NVRTC, a one-rank NCCL all-reduce through cudarc (NVLS off).
#   here:   cargo build --release && mkdir -p gpu-carry/dist && cp target/release/laycert \
#           /lib/x86_64-linux-gnu/libz3.so.4 gpu-carry/dist/
#   device (carry gpu-carry/dist): sh bench/dist/gpu_run.sh gpu-carry/dist
set -e
D=${1:-gpu-carry/dist}
# cudarc looks for libnccl.so; the pip wheel ships libnccl.so.2.
NCCL_DIR=$(python3 -c "import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], 'lib'))" 2>/dev/null || true)
LINKS=$(mktemp -d)
[ -n "$NCCL_DIR" ] && ln -sf "$NCCL_DIR/libnccl.so.2" "$LINKS/libnccl.so"
export LD_LIBRARY_PATH="$D:$LINKS:$NCCL_DIR:$LD_LIBRARY_PATH"
fail=0
while read -r mesh shape from to; do
  from=$(echo "$from" | sed 's/maximal_device/maximal device/')
  echo "== $mesh $shape $from -> $to"
  "$D/laycert" dist run --mesh "$mesh" --shape "$shape" --dtype f32 --from "$from" --to "$to" || fail=1
done <<CASES
$(cat "$(dirname "$0")/smoke_claims.txt")
a=8 4096,4096 [Shard(0)] [Shard(1)]
a=2,b=4 1000,999 [Partial(sum),Shard(1)] [Shard(1),Shard(0)]
CASES
rm -rf "$LINKS"
exit $fail
