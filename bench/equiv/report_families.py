#!/usr/bin/env python3
"""Joins laycert's family timings with the peers' into bench/equiv/families.md.

Usage: python3 bench/equiv/report_families.py [LAYCERT_JSON] [PEERS_JSON] [OUT_MD]
(defaults: bench/equiv/laycert_families.json, bench/equiv/peers_families.json,
bench/equiv/families.md). Run by run_families.sh.
"""

import json
import platform
import sys


def fmt(s):
    if s is None:
        return "n/a"
    if s < 1e-3:
        return f"{s * 1e6:.1f} us"
    if s < 1:
        return f"{s * 1e3:.2f} ms"
    if s < 1e5:
        return f"{s:.1f} s"
    return f"{s / 86400:.0f} days"


def ratio(x):
    return f"{x:,.0f}x" if x >= 10 else f"{x:.1f}x"


def main():
    lay = json.load(open(sys.argv[1] if len(sys.argv) > 1 else "bench/equiv/laycert_families.json"))
    peers = json.load(open(sys.argv[2] if len(sys.argv) > 2 else "bench/equiv/peers_families.json"))
    out = sys.argv[3] if len(sys.argv) > 3 else "bench/equiv/families.md"
    by_name = {c["name"]: c for c in peers["cases"]}
    lines = [
        "| family | pair | indices | normal form: equal / mutant | (with forms) | z3: equal / mutant "
        "| islpy `is_equal`: equal / mutant | pycute enumeration (equal) | islpy / normal form |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    worst = {}
    nf_all, unknown = [], []
    for r in lay:
        p = by_name[r["name"]]
        nf = [r[k]["normal_form"]["seconds"] for k in ("right", "mutant")]
        wf = [r[k]["normal_form"]["with_forms"] for k in ("right", "mutant")]
        z3 = [r[k]["smt"] for k in ("right", "mutant")]
        for k in ("right", "mutant"):
            if r[k]["normal_form"]["verdict"] != r[k]["expected"]:
                unknown.append(f"{r['name']} {k}: normal form {r[k]['normal_form']['verdict']}")
        isl = [p[k].get("islpy", {}).get("seconds") for k in ("right", "mutant")]
        pyc = p["right"].get("pycute")
        nf_all += nf
        cells = []
        if r["right"]["normal_form"]["verdict"] == "proved" and all(isl):
            rs = [i / n for i, n in zip(isl, nf) if n]
            worst[r["family"]] = min(worst.get(r["family"], 1e300), min(rs))
            cells.append(f"{ratio(min(rs))} .. {ratio(max(rs))}")
        else:
            cells.append("n/a")
        nf_cell = " / ".join(
            fmt(s) if r[k]["normal_form"]["verdict"] == r[k]["expected"] else f"{r[k]['normal_form']['verdict']}"
            for s, k in zip(nf, ("right", "mutant"))
        )
        z3_cell = " / ".join(f"{z['verdict']} {fmt(z['seconds'])}" for z in z3)
        pyc_cell = "n/a" if not pyc else fmt(pyc["seconds"]) + (" (extrapolated)" if pyc["extrapolated"] else "")
        lines.append(
            f"| {r['family']} | {r['name']} | {r['size']:,} | {nf_cell} | {' / '.join(fmt(s) for s in wf)} "
            f"| {z3_cell} | {' / '.join(fmt(s) for s in isl)} | {pyc_cell} | {cells[0]} |"
        )
    nf_all.sort()
    head = [
        "# Equivalence families against peers",
        "",
        f"Measured by `bench/equiv/run_families.sh` on one machine ({platform.machine()}, shared), one run. "
        "laycert: medians of batched runs of `normal_form::decide` on prebuilt forward forms (and, "
        "in parentheses, including building both forward forms); z3 once per pair at the default "
        "resource limit. islpy: median of 5 runs of `Map(A).is_equal(Map(B))`, construction "
        "included. pycute: `A(i) == B(i)` over every index, run on the first 2^16 and scaled. "
        f"Peers: islpy {peers['versions']['islpy']}.",
        "",
        "Each row: an equal pair (two spellings of one map) and a one-stride mutant. Families: "
        "(a) powers of two, (b) mixed radix and odd extents, (c) stride-0 and size-1 modes, "
        "(d) overlapping and holed, (e) swizzled (the F2 form and z3; islpy n/a), (f) Axe with "
        "replicas and offsets, (g) deep hierarchical spellings.",
        "",
    ]
    summary = [
        "",
        f"Normal form, all {len(nf_all)} decisions: median {fmt(nf_all[len(nf_all) // 2])}, "
        f"slowest {fmt(nf_all[-1])}.",
        "Slowest islpy / normal-form ratio per family: "
        + ", ".join(f"({f}) {ratio(v)}" for f, v in sorted(worst.items()))
        + ".",
        "Normal-form answers other than expected: " + ("; ".join(unknown) if unknown else "none") + ".",
    ]
    with open(out, "w") as f:
        f.write("\n".join(head + lines + summary) + "\n")
    print("\n".join(summary))


if __name__ == "__main__":
    main()
