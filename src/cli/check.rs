//! `laycert check CERT.json`: re-verifies a certificate from scratch. First line `valid` (exit
//! 0) or `invalid: <why>` (exit 1); an unreadable file is bad input (exit 2).

use serde_json::json;

use super::{BadInput, Report};

/// Runs `check`.
pub fn run(path: &str, as_json: bool) -> Result<Report, BadInput> {
    let text = std::fs::read_to_string(path).map_err(|e| BadInput {
        message: format!("error: certificate {path:?}: cannot read: {e}"),
    })?;
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
