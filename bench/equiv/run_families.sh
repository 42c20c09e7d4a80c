#!/usr/bin/env bash
# Equivalence families (a)-(g) vs islpy and pycute, one run on this machine; writes
# bench/equiv/families.md. Needs: pip install islpy nvidia-cutlass tensor-layouts
set -euo pipefail
cd "$(dirname "$0")/../.."
python3 bench/equiv/families.py bench/equiv/families.json
cargo run --release -p certify --example equiv_families -- bench/equiv/families.json \
  > bench/equiv/laycert_families.json
python3 bench/equiv/peers_families.py bench/equiv/families.json bench/equiv/peers_families.json
python3 bench/equiv/report_families.py
