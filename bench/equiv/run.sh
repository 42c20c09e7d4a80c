#!/usr/bin/env bash
# Equivalence deciders vs peers, one run on this machine; writes bench/equiv/results.md.
# Needs: pip install nvidia-cutlass tensor-layouts islpy
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo bench -p certify --bench deciders
python3 bench/peers/bench_equiv.py bench/equiv/peers.json
python3 bench/equiv/report.py target/criterion bench/equiv/peers.json bench/equiv/results.md
