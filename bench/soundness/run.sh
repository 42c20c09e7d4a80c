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
  full) GEN=55; CLI=2; SMT=500; WORKERS=2 ;;
  *) echo "unknown scale $SCALE" >&2; exit 2 ;;
esac
OUT="${OUT:-target/soundness/$SCALE}"
DATA="$OUT/data"; RES="$OUT/results"
rm -rf "$OUT"; mkdir -p "$DATA" "$RES"
export CARGO_BUILD_JOBS="${CARGO_BUILD_JOBS:-2}"
T0=$(date +%s)
# one invocation: building the two packages apart re-resolves features and rebuilds the crates
cargo build --release --quiet -p laycert -p tests --bin laycert --example soundness
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

echo "== CLI pass and in-process driver (three processes side by side)"
# the CLI pass writes certs.jsonl (tampered certificates) for the driver's certs mode
python3 bench/soundness/cli_pass.py "$LAYCERT" "$DATA" "$RES" "$CLI" "$SEED" > "$RES/cli.log" 2>&1 &
CLI_PID=$!
drive() {  # the driver under a memory limit too (8 GiB of address space)
  local rc=0
  prlimit --as=$((8 << 30)) "$DRIVER" "$1" "$DATA/$1.jsonl" "$RES/$1.jsonl" "$SMT" \
    > "$RES/$1.summary.txt" 2>&1 || rc=$?
  head -1 "$RES/$1.summary.txt"
  if [ "$rc" -gt 1 ]; then  # an abort (memory, stack) is a failure of the case after the last line
    echo "{\"id\": \"driver_$1\", \"fam\": \"driver_$1\", \"outcome\": \"CRASH\", \"detail\": \"driver exit $rc after $(wc -l < "$RES/$1.jsonl") cases\"}" \
      > "$RES/$1_crash.jsonl"
  fi
}
drive equiv &
EQ_PID=$!
for mode in rules validate expr malformed; do drive "$mode"; done
wait "$EQ_PID"
wait "$CLI_PID" || true
tail -3 "$RES/cli.log"
drive certs
T4=$(date +%s)
T3=$T2

echo "== reference confirmation and tally"
set +e
python3 bench/soundness/confirm.py "$DATA" "$RES" | tee "$RES/table.txt"
STATUS=${PIPESTATUS[0]}
set -e
T5=$(date +%s)
echo "times: build $((T1 - T0))s, generate $((T2 - T1))s, CLI pass + driver $((T4 - T3))s, confirm $((T5 - T4))s, total $((T5 - T0))s" \
  | tee "$RES/times.txt"
exit "$STATUS"
