//! Validating a compiler's log of concrete rewrites (`laycert validate PAIRS.jsonl`, Python
//! `laycert.validate`): each JSON line `{"before": L, "after": L, "relation": "equal"}`
//! (optional `"name"`, an identifier, and `"shape"`, the claim's logical domain as a list of
//! extents) becomes a rule without parameters, proved or refuted by [`prove_rule`].
//!
//! Consecutive lines where one line's `before` is the previous line's `after` form a CHAIN:
//! every line of it is decided over the chain's one domain (a `"shape"` its lines name, which
//! must agree, else the domain [`crate::domain::resolve`] gives for the chain's first and last
//! terms), so the chain proves its end-to-end claim (spec certify.md 1b). A chain whose ends
//! share no reading without a shape (a rank-2 CuTe layout against an Axe one) leaves its lines
//! UNKNOWN, naming the fix; the other chains are decided.
//!
//! ```
//! use certify::rules::{validate::validate, Options};
//! let log = r#"{"before": "(4,8):(1,4)", "after": "32:1"}
//! {"before": "32:1", "after": "(4,8):(8,1)", "shape": [4, 8]}"#;
//! let reports = validate("log.jsonl", log, &Options::default()).unwrap();
//! assert_eq!(reports[0].word(), "PROVED");
//! assert_eq!(reports[1].word(), "REFUTED");
//! ```

use std::collections::BTreeSet;

use super::{parse_source, prove_rule, unknown_report, Options, RuleReport};

/// A log that cannot be validated: a line that is not a pair, a pair that does not parse as a
/// rule, or a chain without one domain. The message names `file:line`.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct ValidateError {
    /// `file:line: why`, or a rule parse error rendered with its caret.
    pub message: String,
}

/// One line of a log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pair {
    /// 1-based line number in the log.
    pub line: usize,
    /// The rule name (`line{N}` unless the line names one).
    pub name: String,
    /// The term before the rewrite.
    pub before: String,
    /// The term after it.
    pub after: String,
    /// `==` (equal maps) or `===` (identical values).
    pub op: &'static str,
    /// The claim's logical domain, when the line names one.
    pub shape: Option<Vec<i64>>,
}

/// Proves every line of the log `text` (named `path` in messages), each over its chain's domain.
pub fn validate(path: &str, text: &str, opts: &Options) -> Result<Vec<RuleReport>, ValidateError> {
    let pairs = read_log(path, text)?;
    let mut reports = Vec::new();
    for chain in chains(&pairs) {
        // A chain without one domain is undecided (UNKNOWN, naming the fix), not the log.
        let domain = chain_domain(path, chain)?;
        for p in chain {
            let rule_text = format!("rule {}\n  {}\n  {} {}\n", p.name, p.before, p.op, p.after);
            let file = parse_source(&format!("{path}:{}", p.line), &rule_text).map_err(|e| {
                // Point into the user's field when the error lies in it.
                let before_at = format!("rule {}\n  ", p.name).len();
                let after_at = before_at + p.before.len() + format!("\n  {} ", p.op).len();
                let within = |k: &str, at: usize, t: &str| {
                    let span = e.error.span.clone();
                    (span.start >= at && span.end <= at + t.len()).then(|| {
                        let mut inner = (*e.error).clone();
                        inner.span = span.start - at..span.end - at;
                        format!("field {k:?}: {}", inner.render(t))
                    })
                };
                let why = within("before", before_at, &p.before)
                    .or_else(|| within("after", after_at, &p.after))
                    .unwrap_or_else(|| format!("the rule built from this line: {}", e.error));
                ValidateError {
                    message: format!("{path}:{}: {why}", p.line),
                }
            })?;
            let [rule] = file.rules.as_slice() else {
                return Err(ValidateError {
                    message: format!(
                        "{path}:{}: the pair reads as {} rules, not one",
                        p.line,
                        file.rules.len()
                    ),
                });
            };
            reports.push(match &domain {
                Ok(domain) => prove_rule(
                    rule,
                    &Options {
                        domain: domain.clone(),
                        ..opts.clone()
                    },
                ),
                Err(why) => unknown_report(rule, why.clone(), None),
            });
        }
    }
    Ok(reports)
}

/// The pairs of a log, skipping blank lines.
pub fn read_log(path: &str, text: &str) -> Result<Vec<Pair>, ValidateError> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(n, l)| pair(path, n + 1, l))
        .collect()
}

fn pair(path: &str, line: usize, text: &str) -> Result<Pair, ValidateError> {
    let bad = |why: String| ValidateError {
        message: format!("{path}:{line}: {why}"),
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
        // The term alone, so an error points into the user's text, not into the rule built
        // from it.
        super::parse::parse_term(t).map_err(|e| bad(format!("field {k:?}: {}", e.render(t))))?;
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
pub fn chains(pairs: &[Pair]) -> Vec<&[Pair]> {
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
/// agree, else the log is bad input), else, for a chain of two or more lines, the one
/// `certify::domain::resolve` gives for its first and last terms; a single line without a
/// shape resolves its own. `Ok(Err(why))`: the chain's ends share no reading without a shape
/// (its lines are then UNKNOWN, and `why` names the fix).
pub fn chain_domain(
    path: &str,
    chain: &[Pair],
) -> Result<Result<Option<Vec<i64>>, String>, ValidateError> {
    let named: BTreeSet<&Vec<i64>> = chain.iter().filter_map(|p| p.shape.as_ref()).collect();
    let lines = || {
        format!(
            "{path}:{}-{}",
            chain.first().map_or(0, |p| p.line),
            chain.last().map_or(0, |p| p.line)
        )
    };
    match named.len() {
        0 => {}
        1 => return Ok(Ok(named.into_iter().next().cloned())),
        _ => {
            return Err(ValidateError {
                message: format!(
                    "{}: the lines of one chain name different shapes {named:?}",
                    lines()
                ),
            })
        }
    }
    if chain.len() < 2 {
        return Ok(Ok(None));
    }
    let value = |text: &str| -> Option<layout::Layout> {
        let t = super::parse::parse_term(text).ok()?;
        super::eval::term(&t, &super::eval::Assignment::new()).ok()
    };
    // Undefined ends: each line resolves its own domain (an undefined side refutes it anyway).
    let (Some(a), Some(b)) = (
        value(&chain[0].before),
        value(&chain[chain.len() - 1].after),
    ) else {
        return Ok(Ok(None));
    };
    Ok(crate::domain::resolve_pair(&a, &b, None)
        .map(|d| Some(d.shape))
        .map_err(|e| {
            let why = match e {
                crate::domain::NoDomain::Ambiguous { why, .. } => why,
                other => other.to_string(),
            };
            format!(
                "the domain of the chain {} (its first and last terms): {why}; give its lines a \"shape\"",
                lines()
            )
        }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::Verdict;

    fn words(log: &str) -> Vec<&'static str> {
        validate("t.jsonl", log, &Options::default())
            .unwrap()
            .iter()
            .map(|r| r.word())
            .collect()
    }

    #[test]
    fn validate_proves_equal_pairs_and_refutes_unequal_ones() {
        let log = "{\"before\": \"(4,8):(1,4)\", \"after\": \"32:1\"}\n\n\
                   {\"before\": \"(2,2):(1,2)\", \"after\": \"(2,2):(2,1)\", \"name\": \"swap\"}";
        assert_eq!(words(log), ["PROVED", "REFUTED"]);
        let r = validate("t.jsonl", log, &Options::default()).unwrap();
        assert_eq!(r[0].name, "line1");
        assert_eq!(r[1].name, "swap");
    }

    #[test]
    fn chain_lines_share_the_named_domain() {
        // Over the flat index 32 each line holds; over the chain's shape (4,8) the second does
        // not (CuTe reads (4,8) colexicographically: 32:1 is (4,8):(1,4), not (4,8):(8,1)).
        let unchained = "{\"before\": \"(4,8):(1,4)\", \"after\": \"32:1\"}";
        assert_eq!(words(unchained), ["PROVED"]);
        let chain = "{\"before\": \"(4,8):(1,4)\", \"after\": \"32:1\"}\n\
                     {\"before\": \"32:1\", \"after\": \"(4,8):(8,1)\", \"shape\": [4, 8]}";
        assert_eq!(words(chain), ["PROVED", "REFUTED"]);
    }

    #[test]
    fn a_chain_without_one_domain_is_unknown_and_the_others_are_decided() {
        // S[(3,3):(3,1)] against (3,3):(1,3): equal over the flat 9, not over (3,3).
        let log = "{\"before\": \"S[(3,3):(3,1)]\", \"after\": \"9:1\"}\n\
                   {\"before\": \"9:1\", \"after\": \"(3,3):(1,3)\"}\n\
                   {\"before\": \"(2,2):(1,2)\", \"after\": \"(2,2):(2,1)\"}";
        assert_eq!(words(log), ["UNKNOWN", "UNKNOWN", "REFUTED"]);
        let r = validate("t.jsonl", log, &Options::default()).unwrap();
        let Verdict::Unknown(why) = &r[0].verdict else {
            panic!("{:?}", r[0].verdict)
        };
        assert!(
            why.contains("t.jsonl:1-2") && why.contains("\"shape\""),
            "{why}"
        );
        // Named, the chain is decided: over (3,3) the first line fails (S reads it row-major,
        // 9:1 colexicographically), over 9 both hold.
        let named = |s: &str| log.replacen("\"}\n", &format!("\", \"shape\": {s}}}\n"), 2);
        assert_eq!(words(&named("[3, 3]")), ["REFUTED", "PROVED", "REFUTED"]);
        assert_eq!(words(&named("[9]")), ["PROVED", "PROVED", "REFUTED"]);
    }

    #[test]
    fn chains_split_where_before_is_not_the_previous_after() {
        let pairs = read_log(
            "t",
            "{\"before\": \"a\", \"after\": \"b\"}\n{\"before\": \"b\", \"after\": \"c\"}\n\
             {\"before\": \"x\", \"after\": \"y\"}",
        )
        .unwrap();
        let lens: Vec<usize> = chains(&pairs).iter().map(|c| c.len()).collect();
        assert_eq!(lens, [2, 1]);
    }

    #[test]
    fn bad_lines_name_file_and_line() {
        let e = read_log("t.jsonl", "\n{\"before\": \"4:1\"}").unwrap_err();
        assert_eq!(e.message, "t.jsonl:2: missing string field \"after\"");
        let e = read_log("t.jsonl", "nope").unwrap_err();
        assert!(
            e.message.starts_with("t.jsonl:1: not JSON"),
            "{}",
            e.message
        );
        let e = read_log(
            "t",
            "{\"before\": \"4:1\", \"after\": \"4:1\", \"name\": \"1x\"}",
        )
        .unwrap_err();
        assert!(e.message.contains("not an identifier"), "{}", e.message);
        let two = "{\"before\": \"4:1\", \"after\": \"4:1\", \"shape\": [4]}\n\
                   {\"before\": \"4:1\", \"after\": \"4:1\", \"shape\": [2, 2]}";
        let e = validate("t", two, &Options::default()).unwrap_err();
        assert!(e.message.contains("different shapes"), "{}", e.message);
    }
}
