//! `laycert prove FILE...` and `laycert validate PAIRS.jsonl`: bounded proofs of rewrite rules
//! and of concrete (before, after, relation) pairs logged by a compiler. One line per rule
//! (`PROVED name (method, N instances, time)`, `REFUTED name: ...`, `UNKNOWN name: why`), then a
//! summary with rules per second; `--json` one object; `--junit` JUnit XML; `--cert-dir` one
//! certificate per rule. Exit 1 on REFUTED, else 3 on UNKNOWN (0 with `--allow-unknown`), 2 on
//! bad input (a rule file that does not parse or type-check, with a caret at `file:line:col`;
//! a file with no rule or pair; `--max-instances` above [`MAX_INSTANCES_LIMIT`]).

use std::time::Instant;

use certify::rules::certificate::RuleCertificate;
use certify::rules::prove::MAX_INSTANCES_LIMIT;
use certify::rules::{Options, RuleReport, Verdict};
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
    super::input::read_bounded(path, what, super::input::MAX_FILE_BYTES)
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
            // `file:line:col: error: ...`, as compilers print it.
            message: e.render(),
        })?;
        if reports.is_empty() {
            return Err(nothing(f, "rules"));
        }
        groups.push((f.clone(), reports));
    }
    finish(groups, out, &opts, t, as_json)
}

/// Runs `validate` ([`certify::rules::validate`]): each JSON line `{"before": L, "after": L,
/// "relation": "equal"}` becomes a rule without parameters; chains of lines are decided over
/// one domain.
pub fn validate(path: &str, out: &Outputs, as_json: bool) -> Result<Report, BadInput> {
    let opts = options(out)?;
    let t = Instant::now();
    let text = read(path, "pairs file")?;
    let reports = certify::rules::validate::validate(path, &text, &opts).map_err(|e| BadInput {
        message: format!("error: {e}"),
    })?;
    if reports.is_empty() {
        return Err(nothing(path, "pairs"));
    }
    finish(vec![(path.to_string(), reports)], out, &opts, t, as_json)
}

/// A file with nothing to decide: refused, as a CI step that checks nothing must not pass.
fn nothing(path: &str, what: &str) -> BadInput {
    BadInput {
        message: format!("error: {path}: no {what} in the file; an empty file proves nothing"),
    }
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
