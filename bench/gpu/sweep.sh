#!/bin/bash
# Tile-size / thread-count sweep of the 8192x8192 transposes (run from the repo root on the
# device; needs gpu-carry/ as in README.md).
set -u
export LD_LIBRARY_PATH=$PWD/gpu-carry:${LD_LIBRARY_PATH:-}
L=$PWD/gpu-carry/laycert
for dt in f32 f16 bf16; do
  for tb in ${TILES:-128 256}; do
    for th in ${THREADS:-128 256 512 1024}; do
      r=$("$L" gpu bench --src "(8192,8192):(8192,1)" --dst "(8192,8192):(1,8192)" --shape 8192,8192 \
        --dtype $dt --tile-bytes $tb --threads $th --reps 30 2>&1 | head -2 | tr '\n' ' ')
      echo "$dt tile_bytes=$tb threads=$th: $(echo "$r" | grep -o 'correct\|MISMATCH\|error.*' | head -1) $(echo "$r" | grep -o 'ratio [0-9.]*%')"
    done
  done
done
