//! `laycert check CERT.json`: re-verifies a certificate from scratch. First line:
//! - `valid` (exit 0): the certificate records a PROOF (equivalent, PROVED, a proved movement,
//!   an explanation) and its evidence re-verifies;
//! - `invalid: <why>` (exit 1): it does not re-verify (edited, or a decider now disagrees);
//! - `unknown` (exit 3) or `refuted` (exit 4): it re-verifies, but what it records is no proof;
//! - an unreadable file, one that is not a JSON object, or one that names a key twice in one
//!   object, is bad input (exit 2).

use serde_json::json;

use super::{BadInput, Report};

/// Runs `check`.
pub fn run(path: &str, kernel: Option<&str>, as_json: bool) -> Result<Report, BadInput> {
    let text = super::input::read_bounded(path, "certificate", super::input::MAX_FILE_BYTES)?;
    let kernel = kernel
        .map(|k| {
            super::input::read_bounded(k, "kernel", super::input::MAX_FILE_BYTES)
                .map(|text| (k, text))
        })
        .transpose()?;
    // Every certificate is one JSON object: anything else is bad input, not an invalid
    // certificate (a truncated file, nesting past the parser's depth, a number out of range).
    let value = serde_json::from_str::<serde_json::Value>(&text).map_err(|e| BadInput {
        message: format!("certificate {path:?}: not JSON: {e}"),
    })?;
    if !value.is_object() {
        return Err(BadInput {
            message: format!("certificate {path:?}: a certificate is a JSON object"),
        });
    }
    if let Some(key) = certify::certificate::repeated_key(&text) {
        return Err(BadInput {
            message: format!(
                "certificate {path:?}: `{key}` is given twice in one object (a certificate says \
                 one thing in one place)"
            ),
        });
    }
    // Rule, explanation and movement certificates carry a `kind`; equivalence certificates do not.
    let kind = value.get("kind").and_then(|k| k.as_str());
    if kernel.is_some() && kind != Some("synthesis") {
        return Err(BadInput {
            message: format!(
                "--kernel: binds a kernel to its synthesis certificate (`gen gemm --cert`); \
                 {path:?} is a {} certificate",
                kind.unwrap_or("equivalence")
            ),
        });
    }
    // A distributed plan's certificate (`dist plan --cert`): its claim re-decided from its own
    // layouts, its evidence (digest, places, decider) compared, and the other deciders re-run.
    if ["source", "target", "plan"]
        .iter()
        .all(|k| value.get(k).is_some())
    {
        return Ok(other_kind(dist_certificate(&text), as_json));
    }
    match kind {
        Some("rule") => {
            return Ok(other_kind(
                certify::rules::certificate::check(&text).map(|c| {
                    (
                        recorded(&c.verdict),
                        format!("rule {}: {}", c.name, c.verdict),
                    )
                }),
                as_json,
            ))
        }
        Some("movement") => {
            return Ok(other_kind(
                certify::movement::check(&text).map(|c| {
                    let verdict = recorded(&c.verdict);
                    let what = format!(
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
                    );
                    (verdict, what)
                }),
                as_json,
            ))
        }
        Some("synthesis") => {
            return Ok(other_kind(
                solver::synth::check_certificate(&text).and_then(|c| {
                    let mut what = format!(
                        "synthesis plan {} for {}: {} claims over {} tensors and {} operations re-decided",
                        c.program,
                        c.target,
                        c.claims.len(),
                        c.tensors.len(),
                        c.ops.len()
                    );
                    if let Some(b) = &c.kernel {
                        what += &format!(
                            "\nbound to a {} kernel of M x N x K = {} x {} x {}",
                            b.problem, b.m, b.n, b.k
                        );
                        match &kernel {
                            Some((file, ktext)) => {
                                codegen::gemm::reemitted(&c, ktext).map_err(|e| format!("kernel {file:?}: {e}"))?;
                                what += &format!(
                                    "; {file} is that kernel's text ({} constants, SHA-256 {})",
                                    b.defines.len(),
                                    b.text_sha256
                                );
                            }
                            None => what += " (`--kernel FILE` checks a kernel file is its text)",
                        }
                    } else if let Some((file, _)) = &kernel {
                        return Err(format!(
                            "kernel {file:?}: the certificate binds no kernel (a plan's \
                             certificate, as `synth --cert` writes; `gen gemm --cert` writes a \
                             kernel's)"
                        ));
                    }
                    Ok((Recorded::Proof, what))
                }),
                as_json,
            ))
        }
        Some("tensore-dispatch" | "tensore-dispatches") => {
            return Ok(other_kind(
                certify::tensore::check_any(&text)
                    .map(|certs| {
                        let what: Vec<String> = certs
                            .iter()
                            .map(|c| c.summary())
                            .collect();
                        (Recorded::Proof, what.join("\n"))
                    })
                    .map_err(|e| e.to_string()),
                as_json,
            ))
        }
        Some("explanation") => {
            return Ok(other_kind(
                certify::rules::explain::check(&text).map(|c| {
                    (
                        Recorded::Proof,
                        format!(
                            "explanation: {} == {} ({} steps)",
                            c.start,
                            c.end(),
                            c.steps.len()
                        ),
                    )
                }),
                as_json,
            ))
        }
        _ => {}
    }
    let result = certify::certificate::check(&text)
        .map(|c| {
            (
                recorded(&c.verdict),
                format!(
                    "{} ({} == {}) over {:?}, {}",
                    c.verdict,
                    c.claim.left.lines().next().unwrap_or(""),
                    c.claim.right.lines().next().unwrap_or(""),
                    c.claim.shape,
                    c.claim.coordinates
                ),
            )
        })
        .map_err(|e| e.to_string());
    Ok(other_kind(result, as_json))
}

/// What a certificate that re-verifies records.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Recorded {
    Proof,
    Unknown,
    Refuted,
}

/// Reads a recorded verdict: only a proof's words count as a proof.
fn recorded(verdict: &str) -> Recorded {
    match verdict.to_ascii_lowercase().as_str() {
        "equivalent" | "proved" => Recorded::Proof,
        "not equivalent" | "refuted" => Recorded::Refuted,
        _ => Recorded::Unknown,
    }
}

/// The report of a check: `valid` only for a re-verified proof.
/// Re-checks a distributed plan's certificate ([`certify::dist::check_certificate`]).
fn dist_certificate(text: &str) -> Result<(Recorded, String), String> {
    let c: certify::dist::DistCertificate = serde_json::from_str(text)
        .map_err(|e| format!("not a distributed plan's certificate: {e}"))?;
    certify::dist::check_certificate(&c).map_err(|e| e.why_invalid())?;
    Ok((Recorded::Proof, c.summary()))
}

fn other_kind(result: Result<(Recorded, String), String>, as_json: bool) -> Report {
    let (first, claim, code) = match &result {
        Ok((Recorded::Proof, what)) => ("valid".to_string(), Some(what.clone()), 0),
        Ok((Recorded::Unknown, what)) => (
            "unknown: the certificate re-verifies, but it records no proof".to_string(),
            Some(what.clone()),
            3,
        ),
        Ok((Recorded::Refuted, what)) => (
            "refuted: the certificate re-verifies a refutation, not a proof".to_string(),
            Some(what.clone()),
            4,
        ),
        Err(e) => (format!("invalid: {e}"), None, 1),
    };
    let valid = matches!(result, Ok((Recorded::Proof, _)));
    let mut report = if as_json {
        Report::json(json!({ "valid": valid, "message": first, "claim": claim }))
    } else {
        Report::ok([Some(first), claim].into_iter().flatten().collect())
    };
    report.code = code;
    report
}
