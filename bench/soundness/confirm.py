#!/usr/bin/env python3
"""Second half of the comparison: the reference confirms what laycert answered in-process
(each counterexample at its coordinate, each simplify output by value), then tallies every
result file into one table per family and outcome, with the smallest case of each failure.

Usage: confirm.py DATADIR RESULTSDIR  -> RESULTSDIR/summary.json, table on stdout; exit 1 on
any failure.
"""

import collections
import glob
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ref  # noqa: E402
import exprs  # noqa: E402

FAIL = ("FALSE_", "PANIC", "SLOW", "CRASH")


def is_failure(w):
    return any(w.startswith(f) for f in FAIL)


def confirm_equiv(r, case):
    x = r.get("extra") or {}
    coord, shape = x.get("coord"), x.get("shape")
    if coord is None:
        return "FALSE_CEX_MISSING", "not equivalent without a counterexample"
    ta, tb = x["a"], x["b"]
    if case and case.get("a_ref"):
        ta = case["a_ref"] if ta == case["a"] else ta
        tb = case["a_ref"] if tb == case["a"] else tb
    a, b = ref.parse_layout(ta, shape), ref.parse_layout(tb, shape)
    if a is None or b is None:
        return "cex_unjudged", "reference cannot read a side"
    if ref.differs_at(a, b, shape, coord):
        dom = case.get("domain") if case else None
        return ("cex_confirmed" if dom is None or dom == shape else "cex_confirmed_other_domain"), ""
    return "FALSE_CEX", f"at {coord} over {shape} the reference finds both sides equal"


def confirm_rule(r):
    x = r.get("extra") or {}
    if x.get("coord") is None:
        return "cex_undefined_side", x.get("line", "")
    a, b = ref.parse_layout(x.get("lhs", "")), ref.parse_layout(x.get("rhs", ""))
    if a is None or b is None:
        return "cex_unjudged", "reference cannot read a side"
    dom = ref.resolve(a, b, None) or ref.natural(a)[0]
    if len(dom) != len(x["coord"]):
        return "cex_unjudged", f"coordinate {x['coord']} vs domain {dom}"
    if ref.differs_at(a, b, dom, x["coord"]):
        return "cex_confirmed", ""
    return "FALSE_CEX", x.get("line", "")


def main():
    data, res = sys.argv[1], sys.argv[2]
    cases, unjudged = {}, set()
    for f in glob.glob(os.path.join(data, "*.jsonl")):
        for line in open(f):
            c = json.loads(line)
            if os.path.basename(f).startswith("certs"):
                if not c.get("judged", True):
                    unjudged.add(c["id"])
                continue
            cases[c.get("id")] = c
    table = collections.Counter()
    failures = collections.defaultdict(list)
    for f in sorted(glob.glob(os.path.join(res, "*.jsonl"))):
        mode = os.path.basename(f).split(".")[0]
        for line in open(f):
            r = json.loads(line)
            w = r["outcome"]
            detail = r.get("detail") or r.get("why") or ""
            case = cases.get(r["id"])
            if w == "FALSE_VALID" and r["id"] in unjudged:
                w = "valid_unjudged"  # the reference could not read the tampered claim
            if w == "cex" and mode == "equiv":
                w, detail = confirm_equiv(r, case)
            elif w == "cex" and mode == "rules":
                w, detail = confirm_rule(r)
            elif w == "simplified":
                x = r["extra"]
                t = exprs.check_simplified(x["input"], x["best"])
                w = {"equal": "agree", "differ": "FALSE_EQUAL", "invalid": "AMBIGUOUS_VERDICT",
                     None: "simplified_unjudged"}[t]
                detail = f"simplify {x['input']} -> {x['best']}"
            table[(mode, r["fam"], w)] += 1
            if is_failure(w) or w == "AMBIGUOUS_VERDICT":
                rec = {"id": r["id"], "dir": r.get("dir"), "detail": detail,
                       "case": r.get("case") or case or {k: r.get(k) for k in ("args", "why", "stderr")}}
                failures[(mode, r["fam"], w)].append(rec)
    total = sum(table.values())
    nfail = sum(v for (m, f, w), v in table.items() if is_failure(w))
    print(f"{total} cases, {nfail} failures")
    fams = collections.defaultdict(collections.Counter)
    for (m, f, w), v in table.items():
        fams[(m, f)][w] += v
    for (m, f), c in sorted(fams.items()):
        print(f"  {m:<10} {f:<28} {sum(c.values()):>8}  " + ", ".join(f"{w} {v}" for w, v in sorted(c.items())))
    smallest = {}
    for k, recs in failures.items():
        recs.sort(key=lambda r: len(json.dumps(r["case"])))
        smallest["/".join(k)] = {"count": len(recs), "smallest": recs[:3]}
    json.dump({"total": total, "failures": nfail,
               "table": [[m, f, w, v] for (m, f, w), v in sorted(table.items())],
               "failing": smallest}, open(os.path.join(res, "summary.json"), "w"), indent=1)
    for k, v in sorted(smallest.items()):
        s = v["smallest"][0]
        c = s["case"]
        what = {kk: c.get(kk) for kk in ("a", "b", "shape", "rule", "before", "after", "args", "why") if c.get(kk)}
        print(f"FAIL {k}: {v['count']}; e.g. {json.dumps(what)[:400]} -- {str(s['detail'])[:200]}")
    sys.exit(1 if nfail else 0)


if __name__ == "__main__":
    main()
