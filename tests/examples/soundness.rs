//! The soundness campaign's in-process driver (bench/soundness/README.md): reads the JSONL
//! cases the Python reference generated, asks laycert's libraries, and compares. A verdict
//! that contradicts the reference, a panic, or a case past its time limit is a failure;
//! `unknown` and errors on input the reference calls invalid are counted, not failures.
//!
//! Usage: soundness MODE CASES.jsonl RESULTS.jsonl [SMT_EVERY]
//! MODE: equiv | rules | expr | validate | certs | malformed.
//! RESULTS gets one line per case: `{"id", "fam", "outcome", "detail", "ms", ...}`; outcomes
//! `agree`, `unknown`, `error`, `cex` (a counterexample the Python pass confirms),
//! `simplified` (an output the Python pass values), and the failures `FALSE_EQUAL`,
//! `FALSE_DIFFER`, `FALSE_PROVED`, `FALSE_REFUTED`, `FALSE_VALID`, `PANIC`, `SLOW`.
//! The summary (per family and outcome) goes to stdout; exit 1 on any failure.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Instant;

use certify::rules::{prove_source, Options, Verdict};
use certify::{equivalent, Policy};
use layout::Layout;
use serde_json::{json, Value};

const CORPUS_RULES: &[(&str, &str)] = &[
    ("axe.rules", include_str!("../../corpus/rules/axe.rules")),
    ("cute.rules", include_str!("../../corpus/rules/cute.rules")),
    (
        "swizzle.rules",
        include_str!("../../corpus/rules/swizzle.rules"),
    ),
    ("f2.rules", include_str!("../../corpus/rules/f2.rules")),
];

/// What one case came to.
struct Outcome {
    word: &'static str,
    detail: String,
    extra: Value,
}

fn out(word: &'static str, detail: impl Into<String>) -> Outcome {
    Outcome {
        word,
        detail: detail.into(),
        extra: Value::Null,
    }
}

fn is_failure(w: &str) -> bool {
    w.starts_with("FALSE_") || w == "PANIC" || w == "SLOW"
}

fn shape_of(v: &Value, key: &str) -> Option<Vec<i64>> {
    v.get(key)?
        .as_array()?
        .iter()
        .map(|x| x.as_i64())
        .collect::<Option<Vec<_>>>()
}

fn parse(text: &str, shape: Option<&[i64]>) -> Result<Layout, String> {
    Layout::parse(text, shape).map_err(|e| e.to_string())
}

/// `equiv A B` and `equiv B A` over the case's shape (or none): a verdict must match the
/// reference's truth; a counterexample goes to the Python pass for confirmation.
fn equiv_case(v: &Value, swap: bool, smt: bool, big_limit: bool) -> Outcome {
    let (mut a, mut b) = (v["a"].as_str().unwrap_or(""), v["b"].as_str().unwrap_or(""));
    if swap {
        std::mem::swap(&mut a, &mut b);
    }
    let shape = shape_of(v, "shape");
    let parse_shape = shape.clone().or_else(|| shape_of(v, "domain"));
    let truth = v["truth"].as_str().unwrap_or("");
    let (la, lb) = match (
        parse(a, parse_shape.as_deref()),
        parse(b, parse_shape.as_deref()),
    ) {
        (Ok(x), Ok(y)) => (x, y),
        (Err(e), _) | (_, Err(e)) => return out("error", format!("parse: {e}")),
    };
    let policy = Policy {
        exhaustive_limit: if big_limit { 1 << 22 } else { 1 << 26 },
        use_smt: smt,
        ..Policy::default()
    };
    match equivalent(&la, &lb, shape.as_deref(), &policy) {
        Err(e) => out("error", e.to_string()),
        Ok(r) => match (r.verdict(), truth) {
            ("unknown", _) => out("unknown", ""),
            (_, "invalid") => out(
                "AMBIGUOUS_VERDICT",
                format!("{} over {:?}", r.verdict(), r.shape),
            ),
            ("equivalent", "equal") => out("agree", ""),
            ("equivalent", _) => out(
                "FALSE_EQUAL",
                format!("laycert: equivalent over {:?}; reference: {truth}", r.shape),
            ),
            ("not equivalent", "equal") => out(
                "FALSE_DIFFER",
                format!(
                    "laycert: not equivalent over {:?} at {:?}; reference: equal",
                    r.shape,
                    r.counterexample.as_ref().map(|c| c.coord.clone())
                ),
            ),
            ("not equivalent", _) => {
                let c = r.counterexample.as_ref().map(|c| c.coord.clone());
                Outcome {
                    word: "cex",
                    detail: String::new(),
                    extra: json!({"a": a, "b": b, "shape": r.shape, "coord": c}),
                }
            }
            (w, _) => out("error", format!("verdict {w}")),
        },
    }
}

fn rule_case(v: &Value) -> Outcome {
    let text = v["rule"].as_str().unwrap_or("");
    let truth = v["truth"].as_str().unwrap_or("");
    let reports = match prove_source("case.rules", text, &Options::default()) {
        Ok(r) => r,
        Err(e) => return out("error", e.render()),
    };
    let Some(r) = reports.first() else {
        return out("error", "no rule");
    };
    let method = r.method.clone().unwrap_or_default();
    match (&r.verdict, truth) {
        (Verdict::Unknown(why), _) => out("unknown", why.clone()),
        (Verdict::Proved, "true") => out("agree", method),
        (Verdict::Proved, _) => out(
            "FALSE_PROVED",
            format!("{method}; reference: false at {}", v["witness"]),
        ),
        (Verdict::Refuted(_), "true") => out("FALSE_REFUTED", r.line()),
        (Verdict::Refuted(x), _) => Outcome {
            word: "cex",
            detail: method,
            extra: json!({"params": x.params, "coord": x.coordinate, "line": r.line(),
                "lhs": x.lhs_value, "rhs": x.rhs_value}),
        },
    }
}

fn validate_case(v: &Value) -> Outcome {
    let (before, after) = (
        v["before"].as_str().unwrap_or(""),
        v["after"].as_str().unwrap_or(""),
    );
    let truth = v["truth"].as_str().unwrap_or("");
    // What `laycert validate` proves for the line (src/cli/prove.rs): a rule without
    // parameters, decided over the line's "shape" when it names one.
    let text = format!("rule line\n  {before}\n  == {after}\n");
    let opts = Options {
        domain: shape_of(v, "shape"),
        ..Options::default()
    };
    let reports = match prove_source("pairs", &text, &opts) {
        Ok(r) => r,
        Err(e) => return out("error", e.render()),
    };
    match (&reports[0].verdict, truth) {
        (Verdict::Unknown(w), _) => out("unknown", w.clone()),
        (_, "invalid") => out("AMBIGUOUS_VERDICT", reports[0].line()),
        (Verdict::Proved, "equal") | (Verdict::Refuted(_), "differ") => out("agree", ""),
        (Verdict::Proved, _) => out(
            "FALSE_PROVED",
            format!("reference: {truth} over {}", v["domain"]),
        ),
        (Verdict::Refuted(_), _) => out("FALSE_REFUTED", reports[0].line()),
    }
}

fn expr_case(v: &Value, rules: &[egraph::ProvedRule]) -> Outcome {
    let sat = egraph::Saturation::default();
    let a = v["a"].as_str().unwrap_or("");
    if v["kind"] == "simplify" {
        return match egraph::simplify(a, rules, &sat) {
            Err(e) => out("error", e),
            Ok(s) => {
                let check = certify::rules::explain::check(&s.certificate.to_json());
                if let Err(e) = check {
                    return out(
                        "FALSE_VALID",
                        format!("simplify's own certificate fails: {e}"),
                    );
                }
                Outcome {
                    word: "simplified",
                    detail: String::new(),
                    extra: json!({"input": a, "best": s.best}),
                }
            }
        };
    }
    let b = v["b"].as_str().unwrap_or("");
    let truth = v["truth"].as_str().unwrap_or("");
    match egraph::join(a, b, rules, &sat) {
        Err(e) => out("error", e),
        Ok(egraph::Joined::Proved(_)) => match truth {
            "equal" => out("agree", "equal"),
            "invalid" => out("AMBIGUOUS_VERDICT", "equal"),
            _ => out(
                "FALSE_EQUAL",
                format!("equiv-expr: equal; reference: {truth} over {}", v["domain"]),
            ),
        },
        Ok(_) => out("unknown", "not joined"),
    }
}

/// A certificate that re-verifies counts as valid only when it records a proof.
fn proof(proved: bool) -> Result<(), String> {
    if proved {
        Ok(())
    } else {
        Err("re-verifies, but records no proof".into())
    }
}

fn cert_case(v: &Value) -> Outcome {
    let text = v["cert"].as_str().unwrap_or("");
    let ok_if_valid = v["ok_if_valid"].as_bool().unwrap_or(false);
    let kind = serde_json::from_str::<Value>(text)
        .ok()
        .and_then(|x| x.get("kind").and_then(|k| k.as_str()).map(str::to_string));
    // `valid` as `laycert check` says it: the certificate re-verifies AND records a proof (a
    // re-verified UNKNOWN or REFUTED certificate is reported as such, never as valid).
    let valid = match kind.as_deref() {
        Some("rule") => {
            certify::rules::certificate::check(text).and_then(|c| proof(c.verdict == "PROVED"))
        }
        Some("explanation") => certify::rules::explain::check(text).map(|_| ()),
        Some("movement") => {
            certify::movement::check(text).and_then(|c| proof(c.verdict == "proved"))
        }
        _ => certify::certificate::check(text)
            .map_err(|e| e.to_string())
            .and_then(|c| proof(c.verdict == "equivalent")),
    };
    match valid {
        Ok(()) if ok_if_valid => out("agree", "valid"),
        Ok(()) => out("FALSE_VALID", v["why"].as_str().unwrap_or("").to_string()),
        Err(_) => out("agree", "invalid"),
    }
}

fn malformed_case(v: &Value, rules: &[egraph::ProvedRule]) -> Outcome {
    let text = v["text"].as_str().unwrap_or("");
    let shape = shape_of(v, "shape");
    match v["target"].as_str().unwrap_or("") {
        "layout" => match Layout::parse(text, shape.as_deref()) {
            Err(e) => {
                let m = e.to_string();
                if m.len() > 1 << 20 {
                    return out("FALSE_HUGE_MESSAGE", format!("{} bytes", m.len()));
                }
                out("error", "")
            }
            Ok(l) => {
                let policy = Policy {
                    exhaustive_limit: 1 << 20,
                    use_smt: false,
                    ..Policy::default()
                };
                match equivalent(&l, &l, shape.as_deref(), &policy) {
                    Ok(r) if r.verdict() == "not equivalent" => {
                        out("FALSE_DIFFER", "a layout is not equivalent to itself")
                    }
                    Ok(r) => out("agree", r.verdict()),
                    Err(_) => out("error", "equiv"),
                }
            }
        },
        "expr" => match egraph::simplify(text, rules, &egraph::Saturation::default()) {
            Err(_) => out("error", ""),
            Ok(_) => out("agree", "simplified"),
        },
        _ => match prove_source("m.rules", text, &Options::default()) {
            Err(_) => out("error", ""),
            Ok(_) => out("agree", "proved/refuted/unknown"),
        },
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 4 {
        eprintln!("usage: soundness MODE CASES.jsonl RESULTS.jsonl [SMT_EVERY]");
        std::process::exit(2);
    }
    let (mode, input, output) = (&args[1], &args[2], &args[3]);
    let smt_every: usize = args.get(4).and_then(|s| s.parse().ok()).unwrap_or(50);
    let limit_ms: u128 = match mode.as_str() {
        "equiv" | "validate" | "certs" => 30_000,
        _ => 120_000,
    };
    std::panic::set_hook(Box::new(|_| {}));
    let rules = if matches!(mode.as_str(), "expr" | "malformed") {
        egraph::load_rules_lazy(
            &CORPUS_RULES
                .iter()
                .map(|(n, t)| (n.to_string(), t.to_string()))
                .collect::<Vec<_>>(),
        )
        .expect("corpus rules parse")
        .0
    } else {
        Vec::new()
    };
    let reader = BufReader::new(std::fs::File::open(input).expect("cases file"));
    let mut w = BufWriter::new(std::fs::File::create(output).expect("results file"));
    let mut summary: BTreeMap<(String, String), u64> = BTreeMap::new();
    let mut failures = 0u64;
    let mut n = 0usize;
    let t0 = Instant::now();
    for line in reader.lines() {
        let line = line.expect("read");
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(&line).expect("case JSON");
        let fam = v["fam"].as_str().unwrap_or("?").to_string();
        let runs: Vec<(&str, bool)> = if mode == "equiv" {
            vec![("ab", false), ("ba", true)]
        } else {
            vec![("", false)]
        };
        for (dir, swap) in runs {
            n += 1;
            let t = Instant::now();
            // z3 on every SMT_EVERY-th case (every 4*SMT_EVERY-th of the 2^20..2^32 family,
            // where one query takes seconds)
            let every = if fam == "large" {
                4 * smt_every
            } else {
                smt_every
            };
            let smt = n % every == 0;
            let res = catch_unwind(AssertUnwindSafe(|| match mode.as_str() {
                "equiv" => equiv_case(&v, swap, smt, fam == "large"),
                "rules" => rule_case(&v),
                "validate" => validate_case(&v),
                "expr" => expr_case(&v, &rules),
                "certs" => cert_case(&v),
                _ => malformed_case(&v, &rules),
            }));
            let ms = t.elapsed().as_millis();
            let mut o = match res {
                Ok(o) => o,
                Err(p) => {
                    let msg = p
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_default();
                    out("PANIC", msg)
                }
            };
            if ms > limit_ms && !is_failure(o.word) {
                o = out(
                    "SLOW",
                    format!("{ms} ms (limit {limit_ms}); outcome {}", o.word),
                );
            }
            if is_failure(o.word) || o.word == "AMBIGUOUS_VERDICT" {
                failures += u64::from(is_failure(o.word));
            }
            *summary
                .entry((fam.clone(), o.word.to_string()))
                .or_default() += 1;
            let mut rec = json!({"id": v["id"], "fam": fam, "dir": dir, "outcome": o.word,
                "detail": o.detail, "ms": ms as u64, "smt": smt});
            if !o.extra.is_null() {
                rec["extra"] = o.extra;
            }
            if is_failure(o.word) || o.word == "AMBIGUOUS_VERDICT" {
                rec["case"] = v.clone();
            }
            writeln!(w, "{rec}").expect("write");
            if mode != "equiv" {
                w.flush().expect("flush"); // slow modes: progress visible as it goes
            }
        }
    }
    w.flush().expect("flush");
    println!(
        "{mode}: {n} cases in {:.1}s, {failures} failures",
        t0.elapsed().as_secs_f64()
    );
    for ((fam, word), k) in &summary {
        println!("  {fam:<24} {word:<18} {k}");
    }
    std::process::exit(i32::from(failures > 0));
}
