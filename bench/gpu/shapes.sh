#!/bin/bash
# Issue 15's GPU table: every pair of shapes.txt and pairs.txt with the default plan, then the
# VARIANTS (extra `gpu bench` options, separated by ';') on the pairs named in SWEEP, ROUNDS times
# (ONLY_SWEEP=1 skips the default runs). One line per run:
# name | options | correct? | kernel GB/s | D2D GB/s | ratio | plan. Full outputs go to $OUT.
# Needs gpu-carry/laycert (or LAYCERT=path) and gpu-carry/libz3.so.4 (README.md). Run from the
# repo root. SWEEP may also name the shapes of odd_pitches.txt.
set -u
OUT=${OUT:-/tmp/laycert-gpu}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=$PWD/gpu-carry:${LD_LIBRARY_PATH:-}
L=${LAYCERT:-$PWD/gpu-carry/laycert}
D=${D:-gpu-carry}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
one() { # name opts src dst shape dtype
  local tag="$1${2:+_$(echo "$2" | tr -d ' -')}"
  "$L" gpu bench --src "$3" --dst "$4" --shape "$5" --dtype "$6" $2 >"$OUT/$tag.txt" 2>&1
  local rc=$?
  local ok=$(head -1 "$OUT/$tag.txt" | cut -d: -f1)
  local line2=$(sed -n 2p "$OUT/$tag.txt")
  local kg=$(echo "$line2" | grep -o 'ms = [0-9.]* GB/s' | head -1 | grep -o '[0-9.]* GB' | cut -d' ' -f1)
  local dg=$(echo "$line2" | grep -o 'ms = [0-9.]* GB/s' | tail -1 | grep -o '[0-9.]* GB' | cut -d' ' -f1)
  local ratio=$(echo "$line2" | grep -o 'ratio [0-9.]*%' | cut -d' ' -f2)
  local plan=$(sed -n 3p "$OUT/$tag.txt" | sed 's/^plan: //' | cut -c1-110)
  printf '%s | %s | rc=%s %s | %s | %s | %s | %s\n' "$1" "${2:--}" "$rc" "$ok" "$kg" "$dg" "$ratio" "$plan"
}
if [ -z "${ONLY_SWEEP:-}" ]; then
  cat $D/shapes.txt $D/pairs.txt | grep -v '^#' | while IFS='|' read -r n s d sh dt; do
    one "$n" "" "$s" "$d" "$sh" "$dt"
  done
fi
# ROUNDS repeats the sweep (every variant once per round, interleaved), to see the run-to-run spread.
for round in $(seq 1 "${ROUNDS:-1}"); do
  for n in ${SWEEP:-}; do
    line=$(cat $D/shapes.txt $D/pairs.txt $D/odd_pitches.txt 2>/dev/null | grep "^$n|")
    IFS='|' read -r n s d sh dt <<<"$line"
    IFS=';' read -ra vs <<<"${VARIANTS:---tile-bytes 128;--threads 512;--tile-bytes 128 --threads 128}"
    for v in "${vs[@]}"; do
      one "$n" "$v" "$s" "$d" "$sh" "$dt"
    done
  done
done
