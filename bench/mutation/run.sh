#!/usr/bin/env bash
# The full-scale mutation campaign (issue 6): 100,000 equivalent pairs across notations, each
# with a mutant; z3 on every 10th pair. Writes bench/mutation/results.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
PAIRS="${1:-100000}"
SMT_EVERY="${2:-10}"
cargo build --release -p certify --example mutation_campaign
./target/release/examples/mutation_campaign "$PAIRS" "$SMT_EVERY" | tee bench/mutation/results.md
