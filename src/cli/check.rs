//! `laycert check CERT.json`: re-verifies a certificate from scratch. First line `valid` (exit
//! 0) or `invalid: <why>` (exit 1); an unreadable file is bad input (exit 2).

use serde_json::json;

use super::{BadInput, Report};

/// Runs `check`.
pub fn run(path: &str, as_json: bool) -> Result<Report, BadInput> {
    let text = std::fs::read_to_string(path).map_err(|e| BadInput {
        message: format!("error: certificate {path:?}: cannot read: {e}"),
    })?;
    // Rule, explanation and movement certificates carry a `kind`; equivalence certificates do not.
    let kind = serde_json::from_str::<serde_json::Value>(&text)
        .ok()
        .and_then(|v| v.get("kind").and_then(|k| k.as_str()).map(str::to_string));
    match kind.as_deref() {
        Some("rule") => {
            return Ok(other_kind(
                certify::rules::certificate::check(&text)
                    .map(|c| format!("rule {}: {}", c.name, c.verdict)),
                as_json,
            ))
        }
        Some("movement") => {
            return Ok(other_kind(
                certify::movement::check(&text).map(|c| {
                    format!(
                        "data movement {}: dst[{}](x) == src[{}](x) over {:?} ({})",
                        c.verdict,
                        c.dst,
                        c.src,
                        c.shape,
                        c.deciders
                            .iter()
                            .map(|(d, v)| format!("{d}: {v}"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                }),
                as_json,
            ))
        }
        Some("explanation") => {
            return Ok(other_kind(
                certify::rules::explain::check(&text).map(|c| {
                    format!(
                        "explanation: {} == {} ({} steps)",
                        c.start,
                        c.end(),
                        c.steps.len()
                    )
                }),
                as_json,
            ))
        }
        _ => {}
    }
    let result = certify::certificate::check(&text);
    let (first, code, claim) = match &result {
        Ok(c) => (
            "valid".to_string(),
            0,
            Some(format!(
                "{} ({} == {})",
                c.verdict,
                c.claim.left.lines().next().unwrap_or(""),
                c.claim.right.lines().next().unwrap_or("")
            )),
        ),
        Err(e) => (format!("invalid: {e}"), 1, None),
    };
    let mut report = if as_json {
        Report::json(json!({ "valid": result.is_ok(), "message": first, "claim": claim }))
    } else {
        Report::ok([Some(first), claim].into_iter().flatten().collect())
    };
    report.code = code;
    Ok(report)
}

/// The report for a rule or explanation certificate.
fn other_kind(result: Result<String, String>, as_json: bool) -> Report {
    let (first, claim, code) = match &result {
        Ok(what) => ("valid".to_string(), Some(what.clone()), 0),
        Err(e) => (format!("invalid: {e}"), None, 1),
    };
    let mut report = if as_json {
        Report::json(json!({ "valid": result.is_ok(), "message": first, "claim": claim }))
    } else {
        Report::ok([Some(first), claim].into_iter().flatten().collect())
    };
    report.code = code;
    report
}
