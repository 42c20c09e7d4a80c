//! `laycert simplify EXPR` and `laycert equiv-expr E1 E2`: the e-graph over the corpus rules
//! (a rule's rewrites fire only once `certify` PROVES it, which happens on its first match
//! inside its domain, so start-up proves nothing), with an explanation certificate that
//! `laycert check` re-verifies.

use serde_json::json;

use super::{BadInput, Report};

/// The rule files compiled into the binary (`corpus/rules/*.rules`).
pub const CORPUS_RULES: &[(&str, &str)] = &[
    (
        "corpus/rules/axe.rules",
        include_str!("../../corpus/rules/axe.rules"),
    ),
    (
        "corpus/rules/cute.rules",
        include_str!("../../corpus/rules/cute.rules"),
    ),
    (
        "corpus/rules/swizzle.rules",
        include_str!("../../corpus/rules/swizzle.rules"),
    ),
    (
        "corpus/rules/f2.rules",
        include_str!("../../corpus/rules/f2.rules"),
    ),
];

/// The rules that can become rewrites (each proved by certify on its first match), and the
/// others with why they are left out.
fn rules(files: &[String]) -> Result<(Vec<egraph::ProvedRule>, Vec<String>), BadInput> {
    let sources: Vec<(String, String)> = if files.is_empty() {
        CORPUS_RULES
            .iter()
            .map(|(n, t)| (n.to_string(), t.to_string()))
            .collect()
    } else {
        files
            .iter()
            .map(|f| {
                super::input::read_bounded(f, "rule file", super::input::MAX_FILE_BYTES)
                    .map(|t| (f.clone(), t))
            })
            .collect::<Result<_, _>>()?
    };
    egraph::load_rules_lazy(&sources).map_err(|e| BadInput {
        // `file:line:col: error: ...`, as compilers print it.
        message: e.render(),
    })
}

fn write_cert(path: Option<&str>, text: &str) -> Result<(), BadInput> {
    if let Some(p) = path {
        std::fs::write(p, text).map_err(|e| BadInput {
            message: format!("error: certificate {p:?}: {e}"),
        })?;
    }
    Ok(())
}

/// Runs `simplify`.
pub fn simplify(
    expr: &str,
    rule_files: &[String],
    cert: Option<&str>,
    as_json: bool,
) -> Result<Report, BadInput> {
    // An undefined term has no simplest form: refused as equiv-expr refuses it.
    egraph::check_defined(expr).map_err(|e| BadInput {
        message: format!("error: the term: {e}"),
    })?;
    let (rules, left_out) = rules(rule_files)?;
    let out =
        egraph::simplify(expr, &rules, &egraph::Saturation::default()).map_err(|e| BadInput {
            message: format!("error: {e}"),
        })?;
    write_cert(cert, &out.certificate.to_json())?;
    let proved = rules
        .iter()
        .filter(|r| r.proof_state() == Some(true))
        .count();
    Ok(if as_json {
        Report::json(json!({
            "input": expr, "simplified": out.best, "cost": out.cost, "input_cost": out.input_cost,
            "steps": out.certificate.steps.len(), "rules": rules.len(), "proved": proved,
            "left_out": left_out, "rejected": out.rejected,
        }))
    } else {
        let mut lines = vec![
            out.best.clone(),
            format!(
                "cost {} (input {}), {} steps; {} rules, {} proved on first match",
                out.cost,
                out.input_cost,
                out.certificate.steps.len(),
                rules.len(),
                proved
            ),
        ];
        lines.extend(
            out.rejected
                .map(|why| format!("checker: {why}; kept the checked prefix")),
        );
        Report::ok(lines)
    })
}

/// Runs `equiv-expr`: exit 0 when saturation joins them with an explanation certify's checker
/// accepts, or else when certify's deciders prove their folded values equal over the claim's
/// domain (a one-step `decide` certificate); 1 when the deciders refute it with a counterexample
/// the semantics confirm; 3 otherwise (which proves nothing).
pub fn equiv_expr(
    a: &str,
    b: &str,
    rule_files: &[String],
    cert: Option<&str>,
    shape: Option<&str>,
    as_json: bool,
) -> Result<Report, BadInput> {
    let shape = super::input::shape(shape)?;
    egraph::claim_domain(a, b, shape.as_deref()).map_err(|e| BadInput {
        message: format!("error: the claim: {e}"),
    })?;
    let (rules, _) = rules(rule_files)?;
    let out = egraph::join_over(a, b, shape.clone(), &rules, &egraph::Saturation::default())
        .map_err(|e| BadInput {
            message: format!("error: {e}"),
        })?;
    if let egraph::Joined::Proved(c) = &out {
        write_cert(cert, &c.to_json())?;
        let domain = certify::rules::explain::chain_domain(c).ok();
        let word = format!("equal ({} steps)", c.steps.len());
        let over = domain.as_ref().map(|d| {
            let d: Vec<String> = d.iter().map(i64::to_string).collect();
            format!("({})", d.join(","))
        });
        let mut r = if as_json {
            Report::json(json!({
                "equal": true, "verdict": "equal", "by": "saturation", "message": word,
                "domain": over,
            }))
        } else {
            Report::ok(
                std::iter::once(word)
                    .chain(over.map(|d| format!("logical shape: {d} (every step decided over it)")))
                    .collect(),
            )
        };
        r.code = 0;
        return Ok(r);
    }
    // Saturation proves nothing here: decide the two values' maps as `equiv` does.
    let decided = egraph::decide_values(a, b, shape.as_deref()).map_err(|e| BadInput {
        message: format!("error: the claim: {e}"),
    })?;
    let d = &decided.report;
    let saturation = match &out {
        egraph::Joined::Rejected(why) => {
            format!("saturation joined them, but the checker rejects the explanation: {why}")
        }
        _ => "saturation did not join them".to_string(),
    };
    let (verdict, word, code) = match (d.verdict(), &decided.certificate) {
        ("equivalent", Some(c)) => {
            write_cert(cert, &c.to_json())?;
            (
                "equal",
                format!("equal (by the deciders over their values; {saturation})"),
                0,
            )
        }
        ("not equivalent", _) => (
            "not equal",
            format!("not equal (by the deciders over their values; {saturation})"),
            super::equiv::REFUTED,
        ),
        _ => (
            "unknown",
            format!("unknown ({saturation}, nor did the deciders decide their values)"),
            super::equiv::UNKNOWN,
        ),
    };
    let mut r = if as_json {
        let shape: Vec<String> = d.shape.iter().map(i64::to_string).collect();
        Report::json(json!({
            "equal": verdict == "equal", "verdict": verdict, "by": "deciders", "message": word,
            "domain": format!("({})", shape.join(",")),
            "decision": super::equiv::json_value(d),
        }))
    } else {
        // The decision as `equiv` prints it, under this command's own first line.
        Report::ok(
            std::iter::once(word)
                .chain(super::equiv::lines(d).into_iter().skip(1))
                .collect(),
        )
    };
    r.code = code;
    Ok(r)
}
