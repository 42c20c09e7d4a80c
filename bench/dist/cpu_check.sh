#!/bin/sh
# Runs emitted NCCL programs on the CPU (no GPU, no NCCL): CUDA calls stubbed by host memory,
# kernel launches by loops over every thread, a one-rank fake NCCL; LAYCERT_EMULATE=1 runs every
# rank's pack/unpack kernels and the collectives' emulation, then the program's own check.
# Usage: bench/dist/cpu_check.sh PROGRAM.cu...   (g++ and gcc needed)
set -e
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
gcc -shared -fPIC -o "$tmp/libnccl.so.2" "$here/cpu_stub/fakenccl.c"
for f in "$@"; do
  sed -E 's/([A-Za-z_]+)<<<([^,]+), ([^>]+)>>>\(([^;]*)\);/LAUNCH(\2, \3, \1(\4));/g' "$f" > "$tmp/p.cpp"
  g++ -O1 -std=c++17 -I"$here/cpu_stub" "$tmp/p.cpp" -o "$tmp/p" -ldl
  printf '%s: ' "$f"; LD_LIBRARY_PATH="$tmp" LAYCERT_EMULATE=1 "$tmp/p" | tail -1
done
rm -rf "$tmp"
