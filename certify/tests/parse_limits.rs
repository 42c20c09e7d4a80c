//! The rule parser's nesting bound: input nested past `MAX_NESTING` is a parse error with a
//! span (never a stack overflow), and `&&` / `||` chains of any length parse and evaluate.

use certify::rules::parse::{parse_term, MAX_NESTING};
use certify::rules::{parse_source, prove_source, Options};

fn nested(open: &str, inner: &str, close: &str, n: usize) -> String {
    format!("{}{inner}{}", open.repeat(n), close.repeat(n))
}

#[test]
fn deeply_nested_operator_terms_are_a_parse_error_not_a_crash() {
    let text = nested("coalesce(", "8:1", ")", 10_000);
    let e = parse_term(&text).unwrap_err();
    assert!(e.expected.contains("levels of nesting"), "{e}");
    assert!(e.span.start < 2_000, "the span points into the input: {e}");
    // Within the bound, the same shape parses.
    assert!(parse_term(&nested("coalesce(", "8:1", ")", MAX_NESTING - 3)).is_ok());
}

fn rule_with_condition(cond: &str) -> String {
    format!("rule r forall a : int where 1 <= a <= 4, {cond} S[a:1] == S[a:1]")
}

#[test]
fn deep_parentheses_negations_and_bangs_in_conditions_are_parse_errors() {
    for cond in [
        format!("a <= {}", nested("(", "8", ")", 100_000)),
        format!("a <= {}8", "-".repeat(100_000)),
        format!("{}a <= 8", "!".repeat(100_000)),
        format!("a <= {}", nested("pow2(", "1", ")", 10_000)),
    ] {
        let e = parse_source("deep", &rule_with_condition(&cond)).unwrap_err();
        assert!(e.to_string().contains("levels of nesting"), "{e}");
    }
}

#[test]
fn long_arithmetic_chains_count_as_nesting() {
    let long = vec!["1"; 10_000].join(" + ");
    let e = parse_source("chain", &rule_with_condition(&format!("a <= {long}"))).unwrap_err();
    assert!(e.to_string().contains("levels of nesting"), "{e}");
    let short = ["1"; 8].join(" + ");
    assert!(parse_source("chain", &rule_with_condition(&format!("a <= {short}"))).is_ok());
}

#[test]
fn long_and_or_chains_parse_and_keep_their_meaning() {
    let opts = Options {
        use_smt: false,
        ..Options::default()
    };
    // 20 000 true conjuncts: the rule holds (and is proved) as with one.
    let all = vec!["1 <= a"; 20_000].join(" && ");
    let r = prove_source("and", &rule_with_condition(&all), &opts).unwrap();
    assert_eq!(r[0].word(), "PROVED", "{}", r[0].line());
    // One false conjunct at the end makes the condition unsatisfiable: nothing to prove over.
    let last_false = format!("{all} && a > 4");
    let r = prove_source("and", &rule_with_condition(&last_false), &opts).unwrap();
    assert_ne!(r[0].word(), "PROVED", "{}", r[0].line());
    // A disjunction whose only true member is the last.
    let any = format!("{} || a >= 1", vec!["a > 4"; 20_000].join(" || "));
    let r = prove_source("or", &rule_with_condition(&any), &opts).unwrap();
    assert_eq!(r[0].word(), "PROVED", "{}", r[0].line());
}

#[test]
fn non_ascii_literals_are_parse_errors_not_panics() {
    for text in [
        "coalesce(é)",
        "coalesce(\u{1F600}[4:1])",
        "é",
        "compose(8:1, é)",
    ] {
        // The rule parser reads the literal; layout's parser judges it later. Neither panics.
        let _ = parse_term(text);
    }
}
