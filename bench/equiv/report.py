#!/usr/bin/env python3
"""Joins the Rust deciders' criterion medians with the peers' times into bench/equiv/results.md.

Usage: python3 bench/equiv/report.py [CRITERION_DIR] [PEERS_JSON] [OUT_MD]
(defaults: target/criterion, bench/equiv/peers.json, bench/equiv/results.md). Run by run.sh.
"""

import json
import os
import platform
import sys

SIZES = [10, 16, 20, 24, 30]


def median_seconds(crit, group, k):
    path = os.path.join(crit, group, str(k), "new", "estimates.json")
    with open(path) as f:
        return json.load(f)["median"]["point_estimate"] / 1e9


def fmt(s):
    if s < 1e-3:
        return f"{s * 1e6:.1f} us"
    if s < 1:
        return f"{s * 1e3:.2f} ms"
    return f"{s:.1f} s"


def ratio(x):
    return f"{x:,.0f}x" if x >= 10 else f"{x:.1f}x"


def main():
    crit = sys.argv[1] if len(sys.argv) > 1 else "target/criterion"
    peers_path = sys.argv[2] if len(sys.argv) > 2 else "bench/equiv/peers.json"
    out = sys.argv[3] if len(sys.argv) > 3 else "bench/equiv/results.md"
    with open(peers_path) as f:
        peers = json.load(f)
    lines = [
        "| domain | laycert normal form | laycert z3 | laycert exhaustive (coords/s) "
        "| pycute enumeration | tensor-layouts `functionally_equal` | islpy `is_equal` "
        "| pycute / exhaustive | pycute / normal form | islpy / normal form |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for k in SIZES:
        nf = median_seconds(crit, "normal_form", k)
        z3 = median_seconds(crit, "smt", k)
        ex = median_seconds(crit, "exhaustive", k)
        row = peers["sizes"][str(k)]
        mark = lambda p: " (extrapolated)" if row[p]["extrapolated"] else ""
        py, tl, isl = (row[p]["seconds"] for p in ("pycute", "tensor_layouts", "islpy"))
        lines.append(
            f"| 2^{k} | {fmt(nf)} | {fmt(z3)} | {fmt(ex)} ({(1 << k) / ex / 1e6:,.0f} M) "
            f"| {fmt(py)}{mark('pycute')} | {fmt(tl)}{mark('tensor_layouts')} | {fmt(isl)} "
            f"| {ratio(py / ex)} | {ratio(py / nf)} | {ratio(isl / nf)} |"
        )
    versions = ", ".join(f"{k} {v}" for k, v in sorted(peers.get("versions", {}).items()))
    text = (
        "# Equivalence deciders against peers\n\n"
        f"Measured by `bench/equiv/run.sh` on one machine ({platform.machine()}, "
        f"{os.cpu_count()} cores), one run; laycert times are criterion medians, peers' are "
        f"medians of repeated runs (one run above 2^16). Peers: {versions}.\n"
        "Pair: `(2^a, 2^b):(2^b, 1)` against its split form `(2^a, (2^c, 2^(b-c))):(2^b, (1, "
        "2^c))`, equivalent, so enumerations run to the end. Enumerations above 2^20 indices "
        "are timed on the first 2^20 and scaled (marked).\n\n" + "\n".join(lines) + "\n"
    )
    with open(out, "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
