#!/usr/bin/env bash
# The swizzle acceptance run: 1,000 random (write, read) pairs of distributed layouts; for each,
# the optimizer's predicted wavefronts must equal the simulator's count, and its total must not
# exceed the best CuTe Sw<B,M,S> candidate's (row- and column-major bases) by the simulator.
# Prints one summary line; results.txt keeps the last recorded run.
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo test --release -p layout --test bank_swizzle -- --ignored --nocapture 2>&1 \
  | grep -E '^seed=|test result'
