//! `laycert prove FILE...` and `laycert validate PAIRS.jsonl`: bounded proofs of rewrite rules
//! and of concrete (before, after, relation) pairs logged by a compiler. One line per rule
//! (`PROVED name (method, N instances, time)`, `REFUTED name: ...`, `UNKNOWN name: why`), then a
//! summary with rules per second; `--json` one object; `--junit` JUnit XML; `--cert-dir` one
//! certificate per rule. Exit 1 on REFUTED, else 3 on UNKNOWN (0 with `--allow-unknown`), 2 on
//! bad input (a rule file that does not parse or type-check, with a caret at `file:line:col`;
//! `--max-instances` above [`MAX_INSTANCES_LIMIT`]).

use std::time::Instant;

use certify::rules::certificate::RuleCertificate;
use certify::rules::prove::MAX_INSTANCES_LIMIT;
use certify::rules::{prove_rule, Options, RuleReport, Verdict};
use serde_json::json;

use super::{BadInput, Report};

/// What to write besides the report.
pub struct Outputs<'a> {
    /// JUnit XML file.
    pub junit: Option<&'a str>,
    /// Directory for one certificate per rule.
    pub cert_dir: Option<&'a str>,
    /// Exit 0 rather than 3 when a rule is UNKNOWN (and JUnit marks it skipped, not failed).
    pub allow_unknown: bool,
    /// Largest parameter grid enumerated.
    pub max_instances: Option<u64>,
}

fn read(path: &str, what: &str) -> Result<String, BadInput> {
    std::fs::read_to_string(path).map_err(|e| BadInput {
        message: format!("error: {what} {path:?}: cannot read: {e}"),
    })
}

fn options(out: &Outputs) -> Result<Options, BadInput> {
    let mut o = Options::default();
    if let Some(m) = out.max_instances {
        if m > MAX_INSTANCES_LIMIT {
            return Err(BadInput {
                message: format!(
                    "error: --max-instances {m} is above the maximum {MAX_INSTANCES_LIMIT} (2^24)"
                ),
            });
        }
        o.max_instances = m;
    }
    Ok(o)
}

/// Runs `prove`.
pub fn run(files: &[String], out: &Outputs, as_json: bool) -> Result<Report, BadInput> {
    let opts = options(out)?;
    let t = Instant::now();
    let mut groups = Vec::new();
    for f in files {
        let text = read(f, "rule file")?;
        let reports = certify::rules::prove_source(f, &text, &opts).map_err(|e| BadInput {
            message: format!("error: {}", e.render()),
        })?;
        groups.push((f.clone(), reports));
    }
    finish(groups, out, &opts, t, as_json)
}

/// Runs `validate`: each JSON line `{"before": L, "after": L, "relation": "equal"}` (optional
/// `"name"`, an identifier, and `"shape"`, the claim's logical domain as a list of extents)
/// becomes a rule without parameters and is proved or refuted. Consecutive lines where one
/// line's `before` is the previous line's `after` form a CHAIN: every line of it is decided over
/// the chain's one domain (a `"shape"` given on its lines, which must agree, else the domain of
/// the chain's first and last terms), so the chain proves its end-to-end claim.
pub fn validate(path: &str, out: &Outputs, as_json: bool) -> Result<Report, BadInput> {
    let opts = options(out)?;
    let t = Instant::now();
    let text = read(path, "pairs file")?;
    let mut pairs = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        pairs.push(pair(path, n + 1, line)?);
    }
    let mut reports = Vec::new();
    for chain in chains(&pairs) {
        let domain = chain_domain(path, chain)?;
        for p in chain {
            let rule_text = format!("rule {}\n  {}\n  {} {}\n", p.name, p.before, p.op, p.after);
            let file = certify::rules::parse_source(&format!("{path}:{}", p.line), &rule_text)
                .map_err(|e| BadInput {
                    message: format!("error: {}", e.render()),
                })?;
            let [rule] = file.rules.as_slice() else {
                return Err(BadInput {
                    message: format!(
                        "error: {path}:{}: the pair reads as {} rules, not one",
                        p.line,
                        file.rules.len()
                    ),
                });
            };
            let opts = Options {
                domain: domain.clone(),
                ..opts.clone()
            };
            reports.push(prove_rule(rule, &opts));
        }
    }
    finish(vec![(path.to_string(), reports)], out, &opts, t, as_json)
}

/// One line of a `validate` log.
struct Pair {
    line: usize,
    name: String,
    before: String,
    after: String,
    op: &'static str,
    shape: Option<Vec<i64>>,
}

fn pair(path: &str, line: usize, text: &str) -> Result<Pair, BadInput> {
    let bad = |why: String| BadInput {
        message: format!("error: {path}:{line}: {why}"),
    };
    let v: serde_json::Value =
        serde_json::from_str(text).map_err(|e| bad(format!("not JSON: {e}")))?;
    let field = |k: &str| {
        v.get(k)
            .and_then(|x| x.as_str())
            .map(str::to_string)
            .ok_or_else(|| bad(format!("missing string field {k:?}")))
    };
    let (before, after) = (field("before")?, field("after")?);
    for (k, t) in [("before", &before), ("after", &after)] {
        if t.contains(['\n', '\r']) {
            return Err(bad(format!("field {k:?} spans lines: a term is one line")));
        }
    }
    let op = match v
        .get("relation")
        .and_then(|x| x.as_str())
        .unwrap_or("equal")
    {
        "equal" | "equivalent" => "==",
        "identical" => "===",
        other => {
            return Err(bad(format!(
                "relation {other:?}: expected \"equal\" or \"identical\""
            )))
        }
    };
    let name = match v.get("name") {
        None => format!("line{line}"),
        Some(x) => {
            let n = x
                .as_str()
                .ok_or_else(|| bad("field \"name\" is not a string".into()))?;
            let mut chars = n.chars();
            let ident = chars
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !ident || n.len() > 128 {
                return Err(bad(format!(
                    "name {n:?} is not an identifier (letters, digits, _; at most 128)"
                )));
            }
            n.to_string()
        }
    };
    let shape = match v.get("shape") {
        None => None,
        Some(x) => Some(
            x.as_array()
                .filter(|a| !a.is_empty() && a.len() <= 16)
                .and_then(|a| a.iter().map(|e| e.as_i64().filter(|&e| e >= 1)).collect())
                .ok_or_else(|| {
                    bad(format!(
                        "shape {x}: expected a list of 1 to 16 extents >= 1, e.g. [4, 8]"
                    ))
                })?,
        ),
    };
    Ok(Pair {
        line,
        name,
        before,
        after,
        op,
        shape,
    })
}

/// Splits the log into maximal chains of consecutive lines, each `before` the previous `after`.
fn chains(pairs: &[Pair]) -> Vec<&[Pair]> {
    let mut out = Vec::new();
    let mut start = 0;
    for i in 1..=pairs.len() {
        if i == pairs.len() || pairs[i].before.trim() != pairs[i - 1].after.trim() {
            out.push(&pairs[start..i]);
            start = i;
        }
    }
    out
}

/// The domain every line of a chain is decided over: the shape its lines name (they must
/// agree), else, for a chain of two or more lines, the one `certify::domain::resolve` gives for
/// its first and last terms; a single line without a shape resolves its own.
fn chain_domain(path: &str, chain: &[Pair]) -> Result<Option<Vec<i64>>, BadInput> {
    let named: std::collections::BTreeSet<&Vec<i64>> =
        chain.iter().filter_map(|p| p.shape.as_ref()).collect();
    let lines = || {
        format!(
            "{path}:{}-{}",
            chain.first().map_or(0, |p| p.line),
            chain.last().map_or(0, |p| p.line)
        )
    };
    match named.len() {
        0 => {}
        1 => return Ok(named.into_iter().next().cloned()),
        _ => {
            return Err(BadInput {
                message: format!(
                    "error: {}: the lines of one chain name different shapes {named:?}",
                    lines()
                ),
            })
        }
    }
    if chain.len() < 2 {
        return Ok(None);
    }
    let value = |text: &str| -> Option<layout::Layout> {
        let t = certify::rules::parse::parse_term(text).ok()?;
        certify::rules::eval::term(&t, &certify::rules::eval::Assignment::new()).ok()
    };
    // Undefined ends: each line resolves its own domain (an undefined side refutes it anyway).
    let (Some(a), Some(b)) = (
        value(&chain[0].before),
        value(&chain[chain.len() - 1].after),
    ) else {
        return Ok(None);
    };
    certify::domain::resolve(&a, &b, None)
        .map(|d| Some(d.shape))
        .map_err(|e| BadInput {
            message: format!(
                "error: {}: the chain's domain: {e}; give \"shape\"",
                lines()
            ),
        })
}

fn finish(
    groups: Vec<(String, Vec<RuleReport>)>,
    out: &Outputs,
    opts: &Options,
    t: Instant,
    as_json: bool,
) -> Result<Report, BadInput> {
    let secs = t.elapsed().as_secs_f64();
    let all: Vec<&RuleReport> = groups.iter().flat_map(|(_, r)| r).collect();
    let count = |w: &str| all.iter().filter(|r| r.word() == w).count();
    let (proved, refuted, unknown) = (count("PROVED"), count("REFUTED"), count("UNKNOWN"));
    if let Some(dir) = out.cert_dir {
        std::fs::create_dir_all(dir).map_err(|e| BadInput {
            message: format!("error: cert dir {dir:?}: {e}"),
        })?;
        for r in &all {
            let path = std::path::Path::new(dir).join(format!("{}.cert.json", r.name));
            std::fs::write(&path, RuleCertificate::of(r, opts).to_json()).map_err(|e| {
                BadInput {
                    message: format!("error: {}: {e}", path.display()),
                }
            })?;
        }
    }
    if let Some(path) = out.junit {
        std::fs::write(path, junit(&groups, out.allow_unknown)).map_err(|e| BadInput {
            message: format!("error: junit {path:?}: {e}"),
        })?;
    }
    let rate = all.len() as f64 / secs.max(1e-9);
    let summary = format!(
        "{} rules: {proved} proved, {refuted} refuted, {unknown} unknown in {secs:.2}s ({rate:.1} rules/s)",
        all.len()
    );
    let mut report = if as_json {
        let rules: Vec<serde_json::Value> = all.iter().map(|r| rule_json(r)).collect();
        Report::json(json!({
            "rules": rules,
            "proved": proved, "refuted": refuted, "unknown": unknown,
            "seconds": secs, "rules_per_second": rate,
        }))
    } else {
        let mut lines: Vec<String> = all.iter().map(|r| r.line()).collect();
        lines.push(summary);
        Report::ok(lines)
    };
    report.code = if refuted > 0 {
        1
    } else if unknown > 0 && !out.allow_unknown {
        3
    } else {
        0
    };
    Ok(report)
}

fn rule_json(r: &RuleReport) -> serde_json::Value {
    let mut v = json!({
        "name": r.name, "verdict": r.word(), "method": r.method,
        "grid": r.grid.to_string(),
        "instances": r.instances.map(|n| n.to_string()),
        "rechecked": r.rechecked,
        "rechecked_boundary": r.rechecked_boundary,
        "work": r.work,
        "seconds": r.micros as f64 / 1e6,
    });
    match &r.verdict {
        Verdict::Proved => {}
        Verdict::Refuted(x) => {
            v["counterexample"] = json!({
                "params": x.params, "coordinate": x.coordinate,
                "lhs_value": x.lhs_value, "rhs_value": x.rhs_value,
                "lhs": x.lhs, "rhs": x.rhs,
            })
        }
        Verdict::Unknown(why) => v["reason"] = json!(why),
    }
    v
}

fn xml(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// JUnit XML: one test suite per file, one test case per rule. REFUTED is a failure; UNKNOWN
/// is a failure too, or skipped when unknowns are allowed.
fn junit(groups: &[(String, Vec<RuleReport>)], allow_unknown: bool) -> String {
    let mut s = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n");
    for (file, reports) in groups {
        let refuted = reports.iter().filter(|r| r.word() == "REFUTED").count();
        let unknown = reports.iter().filter(|r| r.word() == "UNKNOWN").count();
        let (fails, skips) = if allow_unknown {
            (refuted, unknown)
        } else {
            (refuted + unknown, 0)
        };
        s += &format!(
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{fails}\" skipped=\"{skips}\">\n",
            xml(file),
            reports.len()
        );
        for r in reports {
            s += &format!(
                "    <testcase name=\"{}\" classname=\"{}\" time=\"{:.6}\">",
                xml(&r.name),
                xml(file),
                r.micros as f64 / 1e6
            );
            match &r.verdict {
                Verdict::Proved => {}
                Verdict::Refuted(x) => {
                    s += &format!("<failure message=\"REFUTED\">{}</failure>", xml(&x.line()))
                }
                Verdict::Unknown(why) if allow_unknown => {
                    s += &format!("<skipped message=\"{}\"/>", xml(why))
                }
                Verdict::Unknown(why) => {
                    s += &format!("<failure message=\"UNKNOWN\">{}</failure>", xml(why))
                }
            }
            s += "</testcase>\n";
        }
        s += "  </testsuite>\n";
    }
    s + "</testsuites>\n"
}
