#!/usr/bin/env python3
"""Re-derives the reference's truth of the checked-in slice cases (tests/data/soundness) whose
families depend on a definition that changed: `to_cute` of an Axe layout keeps ONE top-level
mode (its natural domain is the Axe side's flat index, where the two maps agree), linear
in-dims that name one axis add on it, and a `#ttg.linear` with Triton's in-dims is fitted to
the tensor shape as Triton fits it. Run after changing such a definition in ref.py/exprs.py:

    python3 bench/soundness/retruth.py tests/data/soundness/slice.jsonl tests/data/soundness/known_bugs.jsonl
"""

import json
import sys

import ref


def retruth(c):
    fam = c["fam"]
    if fam == "equiv_expr_convert":  # S vs to_cute(S): one flat map over the flat index
        c["truth"] = "equal"
        a = c["a"] if c["a"].startswith("S[") else c["b"]
        n = 1
        for e, _, _ in ref.parse_any(a)[1]:
            n *= e
        c["domain"] = [n]
    elif fam == "rule_convert_to_cute":
        c["truth"] = "true"
        c.pop("witness", None)
    elif fam in ("linear_alias_indims", "linear", "triton_blocked") and c.get("kind") == "equiv":
        # `#ttg.linear` on a tensor shape is fitted as Triton fits it (ref.triton_fit).
        shape = c["shape"]
        la = ref.parse_layout(c.get("a_ref", c["a"]), shape)
        lb = ref.parse_layout(c["b"], shape)
        if la is None or lb is None:
            c["truth"] = "invalid"
            c.pop("witness", None)
            return c
        eq, w = ref.equal_over(la, lb, shape)
        c["truth"] = "equal" if eq else "differ"
        if w is None:
            c.pop("witness", None)
        else:
            c["witness"] = w
    return c


for path in sys.argv[1:]:
    cases = [retruth(json.loads(line)) for line in open(path) if line.strip()]
    with open(path, "w") as f:
        for c in cases:
            f.write(json.dumps(c) + "\n")
