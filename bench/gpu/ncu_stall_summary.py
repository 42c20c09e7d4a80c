#!/usr/bin/env python3
"""Issue 24: the warp-state samples of an `ncu --page source --csv --print-source sass` export
(bench/gpu/ncu_stalls.sh writes one per kernel): each stall reason's share of all samples, and
the TOP instructions by samples with their main reasons.

  python3 ncu_stall_summary.py KERNEL.sass.csv [TOP]
"""
import csv
import sys


def main():
    path = sys.argv[1]
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 12
    rows = list(csv.reader(open(path)))
    head = next(r for r in rows if "Address" in r and "Source" in r)
    data = rows[rows.index(head) + 1:]
    idx = {n: i for i, n in enumerate(head)}
    reasons = [n for n in head if n.startswith("stall_") and "Not Issued" not in n]
    num = lambda r, n: int(r[idx[n]] or 0) if r[idx[n]] not in ("", "-") else 0  # noqa: E731
    total = sum(num(r, "Warp Stall Sampling (All Samples)") for r in data)
    print(f"{path}: {total} warp-state samples")
    sums = {s: sum(num(r, s) for r in data) for s in reasons}
    for s, v in sorted(sums.items(), key=lambda x: -x[1]):
        if v:
            print(f"  {s[6:]:18s} {v:9d} {100 * v / total:5.1f}%")
    print(f"top {top} instructions by samples:")
    ranked = sorted(data, key=lambda r: -num(r, "Warp Stall Sampling (All Samples)"))[:top]
    for r in ranked:
        n = num(r, "Warp Stall Sampling (All Samples)")
        main_reasons = sorted(((num(r, s), s[6:]) for s in reasons), reverse=True)[:2]
        why = ", ".join(f"{s} {v}" for v, s in main_reasons if v)
        print(f"  {r[idx['Source']].strip()[:60]:60s} {n:7d} ({100 * n / total:4.1f}%) {why}")


if __name__ == "__main__":
    main()
