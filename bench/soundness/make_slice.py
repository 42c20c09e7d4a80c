#!/usr/bin/env python3
"""Writes the cargo-test slice (tests/data/soundness/slice.jsonl) and the open-bug cases
(known_bugs.jsonl) from a campaign run: a few hundred cases across the families, each with
the reference's truth; a case the run found laycert contradicting goes to known_bugs with
its bug named (by family), so the slice passes today and the lead moves the cases back once
the fix merges.

Usage: make_slice.py DATADIR RESULTSDIR OUTDIR
"""

import collections
import json
import os
import random
import sys

PER_FAMILY = {"equiv_expr": 15, "equiv_expr_convert": 10, "cute_cute": 60, "cute_axe": 60, "axe_axe": 60, "alias": 20, "swizzle": 40, "linear": 30,
              "triton_blocked": 20, "large": 15, "natural_shapes": 20, "linear_alias_indims": 6}
BUGS = {
    "linear_alias_indims": "linear in-dims that alias one axis (register + reg) are added into one "
                           "axis instead of staying two inputs",
    "natural_shapes": "claim domain: with no shape, laycert compares over the LEFT side's natural "
                      "shape (equiv A B and equiv B A differ); certify::domain pending",
    "rule_overflow": "z3 rule path drops instances where exactly one side is undefined (overflow)",
    "rule_cute_axe_interior": "z3 rule path compares CuTe and Axe at one flat index",
    "rule_cute_axe": "z3 rule path compares CuTe and Axe at one flat index",
    "rule_cute_axe_nd": "z3 rule path compares CuTe and Axe at one flat index",
    "rule_convert_to_cute": "claim domain on the exhaustive rule path: compared over the LEFT side's "
                            "natural shape (to_cute's rank-2 result makes S == to_cute(S) false over it)",
    "equiv_expr_convert": "equiv-expr steps decided over the left term's default shape "
                          "(S == to_cute(S) is equal over [n], not over to_cute's (e2,e1))",
    "cert_unknown": "laycert check says valid for a certificate whose verdict is UNKNOWN",
    "validate_shape": "validate ignores the pairs file's \"shape\" field",
}


def main():
    data, res, out = sys.argv[1:4]
    rng = random.Random(20261124)
    failing = set()
    for f in os.listdir(res):
        if not f.endswith(".jsonl"):
            continue
        for line in open(os.path.join(res, f)):
            r = json.loads(line)
            if r["outcome"].startswith("FALSE") or r["outcome"] in ("PANIC", "SLOW", "AMBIGUOUS_VERDICT"):
                failing.add(r["id"])
    by_fam = collections.defaultdict(list)
    for line in open(os.path.join(data, "equiv.jsonl")):
        c = json.loads(line)
        if c["fam"] == "large" and c.get("log2", 99) > 22:
            continue
        by_fam[c["fam"]].append(dict(c, kind="equiv"))
    for line in open(os.path.join(data, "rules.jsonl")):
        c = json.loads(line)
        if c["path"] == "exhaustive" or c["id"] in failing:
            by_fam[c["fam"]].append(dict(c, kind="rule"))
    for line in open(os.path.join(data, "expr.jsonl")):
        c = json.loads(line)
        if c["kind"] == "equiv_expr":
            by_fam[c["fam"]].append(c)
    certs = os.path.join(data, "certs.jsonl")
    for line in open(certs) if os.path.exists(certs) else []:
        c = json.loads(line)
        # the controls: untampered certificates (a rule certificate of an UNKNOWN verdict)
        if c["control"] and "UNKNOWN" in c["cert"]:
            by_fam["cert_unknown"].append(dict(c, kind="cert"))
    for line in open(os.path.join(data, "validate.jsonl")):
        c = json.loads(line)
        by_fam[c["fam"]].append(dict(c, kind="validate"))
    slice_, bugs = [], []
    for fam, cases in sorted(by_fam.items()):
        rng.shuffle(cases)
        bad = [c for c in cases if c["id"] in failing or fam == "cert_unknown"]
        good = [c for c in cases if c not in bad]
        want = PER_FAMILY.get(fam, 10 if fam.startswith("rule") else 25)
        slice_ += good[:want]
        for c in bad[:6]:
            bugs.append(dict(c, bug=BUGS.get(fam, "see bench/soundness/results.md")))
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "slice.jsonl"), "w") as f:
        for c in slice_:
            f.write(json.dumps(c) + "\n")
    with open(os.path.join(out, "known_bugs.jsonl"), "w") as f:
        for c in bugs:
            f.write(json.dumps(c) + "\n")
    print(f"slice: {len(slice_)} cases, known bugs: {len(bugs)}")


if __name__ == "__main__":
    main()
