#!/usr/bin/env python3
"""The campaign's CLI-level pass and certificate tampering (families d, e and exit codes).

Usage: cli_pass.py LAYCERT DATADIR OUTDIR SCALE SEED

1. (d) certificates: laycert writes certificates (equiv --cert, prove --cert-dir,
   simplify --cert, equiv-expr --cert); each is tampered many ways and RE-SEALED (the digest /
   seal recomputed as laycert computes it, SHA-256 over the compact JSON with the field
   blanked), so only a re-check can catch the edit. Every tampered certificate carries
   `ok_if_valid`: whether `valid` would be a true answer, decided by the reference (the stated
   verdict is definite and true of the stated claim, every counterexample in it confirmed).
   They go to certs.jsonl for the in-process driver; a sample also runs `laycert check`.
2. (e) malformed and adversarial input for every command, each process under a memory limit
   (prlimit --as) and a time limit: exit code 0-3 only, never a panic (101), abort (134),
   signal or timeout, output under 1 MB.
3. Exit codes and first lines of `equiv` on a sample of the equivalence cases, and `validate`
   (with and without a "shape" field) in batches.

This harness runs laycert; the reference (ref.py, exprs.py) never does.
"""

import copy
import hashlib
import json
import os
import random
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ref  # noqa: E402
import exprs  # noqa: E402
import gen as G  # noqa: E402

MEM_LIMIT = 4 << 30
TIME_LIMIT = 60
OUT_LIMIT = 1 << 20


def run(laycert, args, timeout=TIME_LIMIT, stdin=None):
    args = [a.replace("\x00", "") for a in args]  # argv cannot hold NUL bytes
    t = time.time()
    try:
        p = subprocess.run(["prlimit", f"--as={MEM_LIMIT}", laycert] + args, capture_output=True,
                           timeout=timeout, input=stdin)
        rc, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        rc, out, err = "timeout", e.stdout or b"", e.stderr or b""
    return rc, out, err, time.time() - t


def seal_of(obj, field):
    blank = copy.deepcopy(obj)
    blank[field] = ""
    text = json.dumps(blank, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def reseal(obj):
    field = "seal" if obj.get("kind") in ("rule", "explanation") else "digest"
    if field in obj:
        obj[field] = seal_of(obj, field)
    return obj


# ---------------------------------------------------------------- judging a tampered claim

def equiv_claim_ok(c):
    """Would `valid` be true for this equivalence certificate? None: cannot judge."""
    try:
        return equiv_claim_ok_inner(c)
    except (AttributeError, TypeError, KeyError, ValueError) as e:
        return False, f"malformed certificate ({e})"


def equiv_claim_ok_inner(c):
    verdict = c.get("verdict")
    if verdict not in ("equivalent", "not equivalent"):
        return False, f"verdict {verdict!r} is not a definite answer"
    claim = c.get("claim", {})
    a, b = ref.parse_any(str(claim.get("left", ""))), ref.parse_any(str(claim.get("right", "")))
    shape = claim.get("shape")
    if a is None or b is None or not isinstance(shape, list):
        return None, "claim not readable by the reference"
    try:
        dom = ref.resolve(a, b, shape)
        if dom is None or ref.prod(dom) > ref.prod([1 << 14]):
            return None, "domain"
        eq, _ = ref.equal_over(a, b, dom)
    except Exception as e:  # noqa: BLE001
        return None, f"reference: {e}"
    if (verdict == "equivalent") != eq:
        return False, f"stated {verdict}, reference {'equal' if eq else 'differ'} over {dom}"
    cexs = [c.get("counterexample")] + [e.get("outcome", {}).get("counterexample") for e in c.get("evidence", [])]
    for x in cexs:
        if x is None:
            continue
        co = x.get("coord")
        if not isinstance(co, list) or len(co) != len(dom) or any(not isinstance(v, int) or not 0 <= v < s for v, s in zip(co, dom)):
            return False, f"counterexample {co} outside the domain"
        if not ref.differs_at(a, b, dom, co):
            return False, f"counterexample {co} not confirmed by the reference"
    for e in c.get("evidence", []):
        v = e.get("outcome", {}).get("verdict")
        if v == "proved" and not eq or v == "refuted" and eq:
            return False, f"evidence {e.get('decider')} says {v}"
    return True, ""


def tamper_values(obj, rng):
    """Edits one leaf: an integer +-1/negated, a string with one digit changed."""
    paths = []

    def walk(x, p):
        if isinstance(x, dict):
            for k, v in x.items():
                if k not in ("digest", "seal"):
                    walk(v, p + [k])
        elif isinstance(x, list):
            for i, v in enumerate(x):
                walk(v, p + [i])
        else:
            paths.append(p)
    walk(obj, [])
    if not paths:
        return obj, "nothing"
    p = rng.choice(paths)
    parent = obj
    for k in p[:-1]:
        parent = parent[k]
    v = parent[p[-1]]
    if isinstance(v, bool):
        parent[p[-1]] = not v
    elif isinstance(v, int):
        parent[p[-1]] = rng.choice([v + 1, v - 1, -v, 0, v * 2])
    elif isinstance(v, str):
        digits = [i for i, ch in enumerate(v) if ch.isdigit()]
        if digits:
            i = rng.choice(digits)
            parent[p[-1]] = v[:i] + str((int(v[i]) + rng.randint(1, 9)) % 10) + v[i + 1:]
        else:
            parent[p[-1]] = v + "x"
    elif v is None:
        parent[p[-1]] = 0
    return obj, "edit " + "/".join(map(str, p))


def tamper_equiv(c, rng):
    c = copy.deepcopy(c)
    r = rng.random()
    if r < 0.2:
        c["verdict"] = rng.choice(["equivalent", "not equivalent", "unknown"])
        why = f"verdict -> {c['verdict']}"
    elif r < 0.3:
        c["claim"]["left"], c["claim"]["right"] = c["claim"]["right"], c["claim"]["left"]
        why = "swap sides"
    elif r < 0.4:
        n = ref.prod(c["claim"]["shape"])
        c["claim"]["shape"] = G.factorizations(n, rng)
        why = "shape -> " + str(c["claim"]["shape"])
    elif r < 0.5 and c.get("evidence"):
        c["evidence"] = c["evidence"][:rng.randrange(len(c["evidence"]))]
        why = "drop evidence"
    elif r < 0.55:
        c["verdict"] = "unknown"
        c["counterexample"] = None
        for e in c.get("evidence", []):
            e["outcome"] = {"verdict": "unknown", "reason": "tampered"}
        why = "everything unknown"
    else:
        c, why = tamper_values(c, rng)
    return reseal(c), why


def tamper_generic(c, rng, kind):
    c = copy.deepcopy(c)
    r = rng.random()
    if kind == "rule" and r < 0.3:
        c["verdict"] = rng.choice(["PROVED", "REFUTED", "UNKNOWN"])
        why = f"verdict -> {c['verdict']}"
    elif kind == "explanation" and r < 0.25 and c.get("steps"):
        c["steps"] = c["steps"][:-1] if rng.random() < 0.5 else c["steps"][1:]
        why = "drop a step"
    else:
        c, why = tamper_values(c, rng)
    return reseal(c), why


def rule_ok(c, truths):
    t = truths.get(c.get("rule"))
    v = c.get("verdict")
    if v not in ("PROVED", "REFUTED"):
        return False, f"verdict {v!r} is not a definite answer"
    if t is None:
        return None, "rule text unknown to the reference"
    if (v == "PROVED") != (t == "true"):
        return False, f"stated {v}, reference {t}"
    return True, ""


def explanation_ok(c):
    try:
        return explanation_ok_inner(c)
    except (AttributeError, TypeError, KeyError, ValueError, RecursionError) as e:
        return False, f"malformed certificate ({e})"


def explanation_ok_inner(c):
    steps = c.get("steps") or []
    end = steps[-1].get("term") if steps and isinstance(steps[-1], dict) else c.get("start")
    t = exprs.check_simplified(str(c.get("start")), str(end))
    if t is None:
        return None, "terms not readable by the reference"
    if t != "equal":
        return False, f"start and end: reference {t}"
    return True, ""


def make_certs(laycert, data, outdir, scale, seed):
    rng = random.Random(f"{seed}-certs")
    tmp = tempfile.mkdtemp()
    originals = []
    equiv = [json.loads(x) for x in open(os.path.join(data, "equiv.jsonl"))]
    pool = [e for e in equiv if e.get("shape") and not e["a"].startswith("#") and not e["b"].startswith("#")
            and e["fam"] != "large"]
    rng.shuffle(pool)
    # certificate checks re-decide with z3 (~0.1-1 s each on a busy machine): bounded
    n_orig = min(20, max(10, int(40 * scale)))
    for e in pool[:n_orig]:
        f = os.path.join(tmp, "c.json")
        rc, out, err, _ = run(laycert, ["equiv", e["a"], e["b"], "--shape", ",".join(map(str, e["shape"])), "--cert", f])
        if rc in (0, 1) and os.path.exists(f):
            originals.append(("equiv", json.load(open(f))))
            os.remove(f)
    rules = [json.loads(x) for x in open(os.path.join(data, "rules.jsonl"))]
    truths = {r["rule"].split("\n", 1)[0]: r["truth"] for r in rules}
    # exhaustive-path rules, and two z3-path ones (laycert answers UNKNOWN for some of those:
    # a certificate of an UNKNOWN verdict must not check as `valid`)
    small_rules = [r for r in rules if r["path"] == "exhaustive"][:5]
    # always one rule laycert answers UNKNOWN today (true by construction over (a,b), each side
    # reading the coordinate in its own order; z3 path): its certificate claims nothing
    fixed = ("rule cert_unknown_nd forall a b : int where 1 <= a <= 4096, 1 <= b <= 4096\n"
             "  (a,b):(1,a) == S[(a,b):(1,a)]\n")
    small_rules = small_rules + [{"rule": fixed, "truth": "true"}]
    rules = rules + [{"rule": fixed, "truth": "true"}]
    if small_rules:
        rf = os.path.join(tmp, "r.rules")
        open(rf, "w").write("\n".join(r["rule"] for r in small_rules))
        cd = os.path.join(tmp, "rc")
        run(laycert, ["prove", rf, "--cert-dir", cd], timeout=600)
        for fn in sorted(os.listdir(cd)) if os.path.isdir(cd) else []:
            originals.append(("rule", json.load(open(os.path.join(cd, fn)))))
    rule_truth = {}
    for r in rules:
        rule_truth[r["rule"].strip()] = r["truth"]
    ex = [json.loads(x) for x in open(os.path.join(data, "expr.jsonl"))]
    for e in ex[: min(10, max(5, int(15 * scale)))]:
        f = os.path.join(tmp, "e.json")
        args = ["simplify", e["a"], "--cert", f] if e["kind"] == "simplify" else ["equiv-expr", e["a"], e["b"], "--cert", f]
        rc, out, err, _ = run(laycert, args)
        if os.path.exists(f):
            originals.append(("explanation", json.load(open(f))))
            os.remove(f)
    per = 40 if scale < 1 else 12
    cases = []
    for k, (kind, c) in enumerate(originals):
        # control: the untampered certificate, re-sealed -- must stay valid if its claim is true
        variants = [(reseal(copy.deepcopy(c)), "control (re-sealed, unchanged)")]
        z3_rule = kind == "rule" and "z3" in str(c.get("method"))
        for _ in range(3 if z3_rule else per):
            if kind == "equiv":
                variants.append(tamper_equiv(c, rng))
            else:
                variants.append(tamper_generic(c, rng, kind))
        for j, (v, why) in enumerate(variants):
            if kind == "equiv":
                ok, reason = equiv_claim_ok(v)
            elif kind == "rule":
                ok, reason = rule_ok(v, {**{kk.strip(): vv for kk, vv in rule_truth.items()}, **{v.get("rule", "").strip(): rule_truth.get(v.get("rule", "").strip())}})
            else:
                ok, reason = explanation_ok(v)
            cases.append({"id": f"ct{k}_{j}", "fam": f"cert_{kind}", "cert": json.dumps(v, indent=2, ensure_ascii=False),
                          "ok_if_valid": bool(ok), "judged": ok is not None, "why": f"{why}: {reason}",
                          "control": j == 0})
    with open(os.path.join(outdir, "certs.jsonl"), "w") as f:
        for c in cases:
            f.write(json.dumps(c) + "\n")
    return cases


# ---------------------------------------------------------------- malformed input, every command

BASE_ARGS = [
    ["show", "{L}"], ["eval", "{L}", "--coord", "1"], ["eval", "{L}", "--shape", "8,16", "--coord", "2,9"],
    ["convert", "{L}", "--to", "axe"], ["convert", "{L}", "--to", "linear"], ["convert", "{L}", "--to", "cute"],
    ["equiv", "{L}", "{L2}"], ["equiv", "{L}", "{L2}", "--shape", "{S}"], ["prove-property", "bijective", "{L}"],
    ["prove-property", "injective", "{L}", "--shape", "{S}"],
    ["canon", "{L}"], ["group", "{L}", "--shape", "{S}"], ["tile", "{L}", "{L2}", "--inner-shape", "{S}", "--outer-shape", "{S}"],
    ["tile-of", "{L}", "--shape", "{S}", "--inner", "{L2}", "--inner-shape", "{S}"],
    ["slice", "{L}", "--shape", "{S}", "--region", "{REG}"], ["direct-sum", "{L}", "{L2}", "--shapes", "{S}/{S}"],
    ["cute", "coalesce", "{L}"], ["cute", "compose", "{L}", "{L2}"], ["cute", "complement", "{L}", "{N}"],
    ["cute", "divide", "{L}", "{L2}"], ["cute", "product", "{L}", "{L2}", "blocked"], ["cute", "left-inverse", "{L}"],
    ["cute", "right-inverse", "{L}"], ["cute", "recast", "{L}", "{N}", "{N}"],
    ["draw", "{L}", "-o", "{TMP}/d.svg"], ["linear", "compose", "{L}", "{L2}"], ["linear", "invert-and-compose", "{L}", "{L2}"],
    ["linear", "from", "{L}", "--shape", "{S}"],
    ["bank-conflicts", "--regs", "{L}", "--smem", "{L2}", "--dtype", "f16"],
    ["swizzle", "--write", "{L}", "--read", "{L2}", "--dtype", "f16"], ["shuffle", "{L}", "{L2}", "--shape", "{S}", "--dtype", "f16"],
    ["simplify", "{E}"], ["equiv-expr", "{E}", "{E2}"], ["decompose", "{L}", "--shape", "{S}"],
    ["gen", "copy", "--src", "{L}", "--dst", "{L2}", "--shape", "{S}", "--dtype", "f32", "-o", "{TMP}/k.cu"],
    ["check", "{TMP}/cert.json"], ["prove", "{TMP}/r.rules"], ["validate", "{TMP}/p.jsonl"], ["verify", "{TMP}/v.toml"],
]
SHAPES = ["16,16", "8,16", "4", "0", "-1,4", "9223372036854775807", "4294967296,4294967296", "1,1,1,1,1,1,1,1,1", ",", "", "a,b", "65536,65536"]
REGIONS = ["2:6,4:12", "0:0", "5:2", "-1:3", "0:9223372036854775807", "x"]
HUGE = ["(" * 60000 + "1" + ")" * 60000, "S[(" + ",".join(["2"] * 80) + "):(" + ",".join(["1"] * 80) + ")]",
        "(1048576,1048576,1048576):(1,1048576,0)", "S[(4294967296,4294967296):(1,4294967296)]",
        "#ttg.linear<{register=[" + ",".join(["[1]"] * 64) + "]}>", "Sw<62,62,62> o 8:1", "Sw<3,4,-70> o 8:1",
        "S[8:9223372036854775807] + R[8:9223372036854775807]", "x" * 120000,
        "#ttg.blocked<{sizePerThread=[1073741824,1], threadsPerWarp=[32,1], warpsPerCTA=[1,1], order=[1,0]}>",
        "(65536,65536):(1,65536)", "S[(65536,65536):(65536,1)]", "(2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2):(1,2,4,8,16,32,64,128,256,512,1024,2048,4096,8192,16384,32768,65536,131072,262144,524288,1048576,2097152,4194304,8388608,16777216,33554432,67108864,134217728,268435456,536870912)"]
HUGE_EXPR = ["coalesce(" * 1000 + "8:1" + ")" * 1000, "complement(4:2, 9223372036854775807)", "swizzle_map(62, 0, 62, 64)",
             "compose(" * 300 + "8:1" + ", 8:1)" * 300, "logical_divide((65536,65536):(1,65536), 4:2)"]


def malformed_cli(laycert, outdir, scale, seed):
    rng = random.Random(f"{seed}-cli")
    tmp = tempfile.mkdtemp()
    results = []
    # files the file-reading commands get
    open(os.path.join(tmp, "cert.json"), "w").write("{}")
    open(os.path.join(tmp, "r.rules"), "w").write("rule r forall a : int where 1 <= a <= 4 S[a:1] == S[a:1]\n")
    open(os.path.join(tmp, "p.jsonl"), "w").write('{"before": "(4,5):(1,4)", "after": "20:1"}\n')
    open(os.path.join(tmp, "v.toml"), "w").write("[[claim]]\nname='x'\nkind='equivalent'\n")
    n_each = max(3, int(8 * scale))
    layouts = G.SEEDS_TEXT + ["(4,8):(1,4)", "S[(8,4):(1,8)]"]
    jobs = []
    for base in BASE_ARGS:
        for i in range(n_each + 2):
            def fill(tok):
                if tok == "{L}":
                    return G.mutate_text(rng.choice(layouts), rng) if i >= 2 else rng.choice(layouts)
                if tok == "{L2}":
                    return rng.choice(layouts)
                if tok in ("{E}", "{E2}"):
                    return G.mutate_text(rng.choice(G.SEEDS_EXPR), rng) if i >= 1 else rng.choice(G.SEEDS_EXPR)
                tok = tok.replace("{TMP}", tmp).replace("{S}", rng.choice(SHAPES)).replace("{REG}", rng.choice(REGIONS))
                return tok.replace("{N}", rng.choice(["24", "0", "-3", "9223372036854775807", "16"]))
            jobs.append(("mutated", [fill(t) for t in base]))
            if base[0] in ("check", "prove", "validate", "verify"):
                break
        for h in HUGE[: 3 + int(scale)] if "{L}" in base else []:
            jobs.append(("huge", [h if t == "{L}" else t.replace("{TMP}", tmp).replace("{S}", "16,16").replace("{REG}", "0:2").replace("{N}", "24").replace("{L2}", "(4,8):(1,4)").replace("{E2}", "8:1") for t in base]))
    for h in HUGE_EXPR:
        jobs.append(("huge", ["simplify", h]))
        jobs.append(("huge", ["equiv-expr", h, "8:1"]))
    # file commands with adversarial files
    for i in range(max(10, int(30 * scale))):
        f = os.path.join(tmp, f"adv{i}")
        kind = rng.choice(["rules", "cert", "pairs", "toml"])
        txt = rng.choice([G.mutate_text(rng.choice(G.SEEDS_RULE), rng), "{" * 100000, '{"version":1,"claim":' * 1000,
                          json.dumps({"before": "(4,5):(1,4)" * 1000, "after": "20:1"}), "\x00\xff" * 100,
                          "[[claim]]\n" * 10000, "rule r forall A : cute(64, 64, 64) coalesce(A) == A\n",
                          "rule r forall a b c d e f : int where 1 <= a <= 100, 1 <= b <= 100, 1 <= c <= 100, 1 <= d <= 100, 1 <= e <= 100, 1 <= f <= 100 S[(a,b,c):(1,1,1)] == S[(a,b,c):(d,e,f)]\n", G.mutate_text('{"version": 1, "kind": "rule", "name": "x", "rule": "rule x S[4:1] == S[4:1]", "verdict": "PROVED"}', rng)])
        open(f, "w", encoding="utf-8", errors="replace").write(txt)
        cmd = {"rules": ["prove", f], "cert": ["check", f], "pairs": ["validate", f], "toml": ["verify", f]}[kind]
        jobs.append(("file", cmd))
    for k, (fam, args) in enumerate(jobs):
        rc, out, err, secs = run(laycert, args)
        bad = None
        if rc == "timeout":
            bad = "SLOW"
        elif rc not in (0, 1, 2, 3):
            bad = "PANIC" if rc == 101 else "CRASH"
        elif len(out) + len(err) > OUT_LIMIT:
            bad = "FALSE_HUGE_OUTPUT"
        elif b"panicked" in err:
            bad = "PANIC"
        results.append({"id": f"cli{k}", "fam": f"cli_{fam}_{args[0]}", "outcome": bad or "agree", "rc": rc,
                        "secs": round(secs, 3), "args": [a[:200] for a in args] if bad else None,
                        "stderr": err[-400:].decode(errors="replace") if bad else None})
    return results


# ---------------------------------------------------------------- exit codes of equiv; validate

def equiv_cli(laycert, data, scale, seed):
    rng = random.Random(f"{seed}-eqcli")
    cases = [json.loads(x) for x in open(os.path.join(data, "equiv.jsonl"))]
    cases = [c for c in cases if c["fam"] != "large"]
    rng.shuffle(cases)
    out = []
    for c in cases[: min(150, max(50, int(150 * scale)))]:
        args = ["equiv", c["a"], c["b"]]
        if c.get("shape"):
            args += ["--shape", ",".join(map(str, c["shape"]))]
        elif c["a"].startswith("#") or c["b"].startswith("#"):
            continue
        rc, o, err, secs = run(laycert, args)
        first = o.decode(errors="replace").split("\n", 1)[0]
        want = {0: "equivalent", 1: "not equivalent", 3: "unknown"}.get(rc)
        if rc == "timeout":
            w = "SLOW"
        elif rc not in (0, 1, 2, 3):
            w = "PANIC"
        elif want is not None and first != want:
            w = "FALSE_EXIT_CODE"
        elif rc == 0 and c["truth"] != "equal":
            w = "FALSE_EQUAL" if c["truth"] == "differ" else "AMBIGUOUS_VERDICT"
        elif rc == 1 and c["truth"] != "differ":
            w = "FALSE_DIFFER" if c["truth"] == "equal" else "AMBIGUOUS_VERDICT"
        else:
            w = "agree" if rc in (0, 1) else ("unknown" if rc == 3 else "error")
        out.append({"id": c["id"] + "_cli", "fam": "cli_equiv_" + c["fam"], "outcome": w, "rc": rc,
                    "args": args if w not in ("agree", "unknown", "error") else None, "first": first})
    return out


def validate_cli(laycert, data, scale):
    cases = [json.loads(x) for x in open(os.path.join(data, "validate.jsonl"))][:2000]
    tmp = tempfile.mkdtemp()
    out = []
    for start in range(0, len(cases), 200):
        batch = cases[start:start + 200]
        f = os.path.join(tmp, "p.jsonl")
        with open(f, "w") as fh:
            for i, c in enumerate(batch):
                rec = {"name": f"v{i}", "before": c["before"], "after": c["after"], "relation": "equal"}
                if "shape" in c:
                    rec["shape"] = c["shape"]
                fh.write(json.dumps(rec) + "\n")
        rc, o, err, secs = run(laycert, ["--json", "validate", f], timeout=600)
        try:
            rep = json.loads(o)
        except Exception:  # noqa: BLE001
            out.append({"id": f"valbatch{start}", "fam": "cli_validate", "outcome": "PANIC" if rc == 101 else "error",
                        "rc": rc, "stderr": err[-300:].decode(errors="replace")})
            continue
        by = {r["name"]: r for r in rep.get("rules", [])}
        for i, c in enumerate(batch):
            r = by.get(f"v{i}")
            v = r and r.get("verdict")
            if v == "UNKNOWN" or v is None:
                w = "unknown"
            elif c["truth"] == "invalid":
                w = "AMBIGUOUS_VERDICT"
            elif (v == "PROVED") == (c["truth"] == "equal"):
                w = "agree"
            else:
                w = "FALSE_PROVED" if v == "PROVED" else "FALSE_REFUTED"
            out.append({"id": c["id"] + "_cli", "fam": "cli_" + c["fam"], "outcome": w,
                        "case": c if w.startswith("FALSE") else None})
    return out


def main():
    laycert, data, outdir, scale, seed = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), int(sys.argv[5])
    os.makedirs(outdir, exist_ok=True)
    t = time.time()
    certs = make_certs(laycert, data, data, scale, seed)
    sys.stderr.write(f"certificates: {len(certs)} tampered/control cases in {time.time() - t:.0f}s\n")
    res = []
    # a sample of the tampered certificates through `laycert check` itself
    rng = random.Random(f"{seed}-chk")
    sample = rng.sample(certs, min(len(certs), 60))
    tmp = tempfile.mkdtemp()
    for c in sample:
        f = os.path.join(tmp, "t.json")
        open(f, "w").write(c["cert"])
        rc, o, err, secs = run(laycert, ["check", f])
        first = o.decode(errors="replace").split("\n", 1)[0]
        valid = rc == 0 and first == "valid"
        # check's exit codes: 0 valid, 1 invalid, 2 unreadable, 3 unknown and 4 refuted (a
        # certificate that re-verifies but records no proof)
        if rc not in (0, 1, 2, 3, 4):
            w = "PANIC" if rc == 101 else ("SLOW" if rc == "timeout" else "CRASH")
        elif valid and not c["ok_if_valid"]:
            w = "FALSE_VALID"
        elif (rc == 0) != (first == "valid"):
            w = "FALSE_EXIT_CODE"
        else:
            w = "agree"
        res.append({"id": c["id"] + "_cli", "fam": "cli_check_" + c["fam"], "outcome": w, "rc": rc,
                    "why": c["why"] if w != "agree" else None})
    t = time.time()
    res += malformed_cli(laycert, outdir, scale, seed)
    sys.stderr.write(f"malformed CLI: done in {time.time() - t:.0f}s\n")
    res += equiv_cli(laycert, data, scale, seed)
    res += validate_cli(laycert, data, scale)
    with open(os.path.join(outdir, "cli.jsonl"), "w") as f:
        for r in res:
            f.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()
