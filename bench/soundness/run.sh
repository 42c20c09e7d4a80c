#!/usr/bin/env bash
# laycert's standing soundness campaign (bench/soundness/README.md).
#   bench/soundness/run.sh [--scale quick|full] [--seed N] [--out DIR]
# quick: ~2*10^4 cases in a few minutes; full: >= 10^6 cases.
# Exit 1 when any case contradicts the reference, panics, or runs past its limit.
set -euo pipefail
cd "$(dirname "$0")/../.."
SCALE=quick
SEED=20261124
OUT=""
while [ $# -gt 0 ]; do
  case "$1" in
    --scale) SCALE="$2"; shift 2 ;;
    --seed) SEED="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    *) echo "usage: $0 [--scale quick|full] [--seed N] [--out DIR]" >&2; exit 2 ;;
  esac
done
case "$SCALE" in
  # GEN: generator scale (equivalence families x GEN); CLI: CLI-pass scale; SMT: z3 on every
  # SMT-th in-process equivalence case; WORKERS: generator processes
  quick) GEN=1; CLI=0.3; SMT=50; WORKERS=2 ;;
  full) GEN=50; CLI=2; SMT=500; WORKERS=2 ;;
  *) echo "unknown scale $SCALE" >&2; exit 2 ;;
esac
OUT="${OUT:-target/soundness/$SCALE}"
DATA="$OUT/data"; RES="$OUT/results"
rm -rf "$OUT"; mkdir -p "$DATA" "$RES"
export CARGO_BUILD_JOBS="${CARGO_BUILD_JOBS:-2}"
T0=$(date +%s)
cargo build --release --quiet --bin laycert -p laycert
cargo build --release --quiet -p tests --example soundness
LAYCERT=target/release/laycert
DRIVER=target/release/examples/soundness
T1=$(date +%s)

echo "== generating (scale $SCALE, seed $SEED, $WORKERS workers)"
for w in $(seq 0 $((WORKERS - 1))); do
  python3 bench/soundness/gen.py "$DATA/w$w" "$GEN" "$SEED" "$w" "$WORKERS" 2> "$DATA/gen.$w.log" &
done
wait
for f in equiv rules expr validate malformed; do
  cat "$DATA"/w*/"$f".*.jsonl > "$DATA/$f.jsonl"
done
rm -rf "$DATA"/w*
T2=$(date +%s)

echo "== CLI pass: certificates written and tampered, malformed input per command, exit codes"
python3 bench/soundness/cli_pass.py "$LAYCERT" "$DATA" "$RES" "$CLI" "$SEED"
T3=$(date +%s)

echo "== in-process driver"
# the driver under a memory limit too (8 GiB of address space)
for mode in equiv rules validate expr malformed certs; do
  prlimit --as=$((8 << 30)) "$DRIVER" "$mode" "$DATA/$mode.jsonl" "$RES/$mode.jsonl" "$SMT" \
    > "$RES/$mode.summary.txt" || true
  head -1 "$RES/$mode.summary.txt"
done
T4=$(date +%s)

echo "== reference confirmation and tally"
set +e
python3 bench/soundness/confirm.py "$DATA" "$RES" | tee "$RES/table.txt"
STATUS=${PIPESTATUS[0]}
set -e
T5=$(date +%s)
echo "times: build $((T1 - T0))s, generate $((T2 - T1))s, CLI pass $((T3 - T2))s, driver $((T4 - T3))s, confirm $((T5 - T4))s, total $((T5 - T0))s" \
  | tee "$RES/times.txt"
exit "$STATUS"
