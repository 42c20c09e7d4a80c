//! `laycert equiv A B`: first line `equivalent`, `not equivalent` or `unknown`; then the
//! evidence (deciders and their times) or the counterexample (the logical coordinate and both
//! sides' physical points). Exit 0 / 1 / 3 (unknown); 2 on bad input.

use serde_json::json;

use certify::certificate::certify_equivalence;
use certify::{equivalent, Outcome, Policy, Report as Decision};

use super::{input, BadInput, Report};

/// Exit status when the claim is refuted.
pub const REFUTED: u8 = 1;
/// Exit status when no decider reached a verdict.
pub const UNKNOWN: u8 = 3;

/// Runs `equiv`.
pub fn run(
    a: &str,
    b: &str,
    shape: Option<&str>,
    cert: Option<&str>,
    as_json: bool,
) -> Result<Report, BadInput> {
    // A TTGIR tensor type gives its shape to both sides, as `--shape` would.
    let shape = input::shape(shape)?
        .or_else(|| input::tensor_type_shape(a))
        .or_else(|| input::tensor_type_shape(b));
    // `--axes` (global) is applied to both by input::layout.
    let la = input::layout(a, shape.as_deref())?;
    let lb = input::layout(b, shape.as_deref())?;
    // Triton attributes take --shape as their tensor shape; TV/linear fix their logical side.
    let logical = shape.as_deref().filter(|_| {
        !matches!(la, layout::Layout::Tv(_) | layout::Layout::Linear(_))
            || !matches!(lb, layout::Layout::Tv(_) | layout::Layout::Linear(_))
    });
    let d = equivalent(&la, &lb, logical, &Policy::default())
        .map_err(|e| input::render(&e, "the claim", a))?;
    if let Some(path) = cert {
        let c = certify_equivalence(&la, &lb, &d);
        let text = serde_json::to_string_pretty(&c).expect("certificates serialize");
        std::fs::write(path, text + "\n").map_err(|e| BadInput {
            message: format!("error: --cert {path:?}: cannot write: {e}"),
        })?;
    }
    let code = match d.verdict() {
        "equivalent" => 0,
        "not equivalent" => REFUTED,
        _ => UNKNOWN,
    };
    let mut report = if as_json {
        json_report(&d)
    } else {
        Report::ok(lines(&d))
    };
    report.code = code;
    Ok(report)
}

fn point(d: &Decision, p: &[i64]) -> String {
    let parts: Vec<String> = d
        .axes
        .iter()
        .zip(p)
        .map(|(a, v)| format!("{a}:{v}"))
        .collect();
    format!("{{{}}}", parts.join(", "))
}

/// The point set, summarized past [`super::SUMMARY_POINTS`] points.
fn points(d: &Decision, ps: &[Vec<i64>]) -> String {
    let parts: Vec<String> = ps
        .iter()
        .take(super::SUMMARY_POINTS + 1)
        .map(|p| point(d, p))
        .collect();
    if ps.len() <= super::SUMMARY_POINTS {
        return format!("{{{}}}", parts.join(", "));
    }
    format!(
        "{} points, first {}: {{{}}}",
        ps.len(),
        super::SUMMARY_POINTS,
        parts[..super::SUMMARY_POINTS].join(", ")
    )
}

/// The counterexample as JSON, each side's points cut at half of [`super::MAX_FULL_POINTS`]
/// (`left_count` / `right_count` give the sizes).
fn counterexample_json(c: &certify::decider::Counterexample) -> serde_json::Value {
    let cap = super::MAX_FULL_POINTS / 2;
    json!({
        "index": c.index,
        "coord": c.coord,
        "left": &c.left[..c.left.len().min(cap)],
        "right": &c.right[..c.right.len().min(cap)],
        "left_count": c.left.len(),
        "right_count": c.right.len(),
        "truncated": c.left.len() > cap || c.right.len() > cap,
    })
}

fn run_line(d: &Decision) -> String {
    let runs: Vec<String> = d
        .runs
        .iter()
        .map(|r| {
            let why = match &r.outcome {
                Outcome::Unknown { reason } => format!(": {reason}"),
                _ => String::new(),
            };
            format!(
                "{} {} in {} us{why}",
                r.decider.name(),
                r.outcome.word(),
                r.micros
            )
        })
        .collect();
    format!("deciders: {}", runs.join("; "))
}

/// The report's lines: the verdict, the domain, the counterexample or the evidence, the
/// cross-check (also `equiv-expr`'s, after its own first line).
pub fn lines(d: &Decision) -> Vec<String> {
    let mut out = vec![d.verdict().to_string()];
    let shape: Vec<String> = d.shape.iter().map(i64::to_string).collect();
    out.push(format!("logical shape: ({})", shape.join(",")));
    out.push(format!("domain: {}", d.domain.describe()));
    if let Some(c) = &d.counterexample {
        let coord: Vec<String> = c.coord.iter().map(i64::to_string).collect();
        out.push(format!("counterexample at logical ({}):", coord.join(",")));
        out.push(format!("  left:  {}", points(d, &c.left)));
        out.push(format!("  right: {}", points(d, &c.right)));
        if let Some(e) = &c.explanation {
            out.push(format!("  {}", e.line()));
        }
    }
    out.push(run_line(d));
    for r in &d.runs {
        if let Outcome::Proved { evidence } = &r.outcome {
            out.push(format!("  {}: {evidence}", r.decider.name()));
        }
    }
    if let Some(why) = &d.unconfirmed {
        out.push(format!("unconfirmed: {why}"));
    }
    if let Some(n) = d.rechecked {
        out.push(format!(
            "cross-check: the trusted semantics agree at {n} coordinates{}",
            if (n as i64) < d.shape.iter().product::<i64>() {
                " (the domain's corners and edges and a seeded sample)"
            } else {
                " (every coordinate)"
            }
        ));
    }
    out
}

/// A decider's outcome as JSON, its counterexample cut like [`counterexample_json`].
fn outcome_json(o: &Outcome) -> serde_json::Value {
    let mut v = json!(o);
    if let (Outcome::Refuted { counterexample }, Some(m)) = (o, v.as_object_mut()) {
        m.insert("counterexample".into(), counterexample_json(counterexample));
    }
    v
}

fn json_report(d: &Decision) -> Report {
    Report::json(json_value(d))
}

/// The report as one JSON object (also `equiv-expr`'s `decision`).
pub fn json_value(d: &Decision) -> serde_json::Value {
    json!({
        "verdict": d.verdict(),
        "shape": d.shape,
        "domain": d.domain.describe(),
        "axes": d.axes.iter().map(|a| a.to_string()).collect::<Vec<_>>(),
        "counterexample": d.counterexample.as_ref().map(counterexample_json),
        "rechecked": d.rechecked,
        "unconfirmed": d.unconfirmed,
        "deciders": d.runs.iter().map(|r| json!({
            "decider": r.decider.name(),
            "outcome": outcome_json(&r.outcome),
            "micros": r.micros,
        })).collect::<Vec<_>>(),
    })
}
