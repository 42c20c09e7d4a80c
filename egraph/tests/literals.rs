//! Rules with parameters inside layout literals (`(a,(b,c)):(d1,(d2,d3))`, `size(L):1`,
//! `S[(e1,e2,e3):(s1,s2,s3)]`) rewrite: their literals are matched by value, their certificates
//! check, and a literal that cannot be instantiated consistently with the match does not fire.

use std::collections::BTreeMap;

use certify::rules::explain::{check, ExplanationCertificate};
use egraph::{equivalent, load_rules_lazy, ProvedRule, Saturation};

fn corpus() -> Vec<ProvedRule> {
    let files = [
        (
            "cute".into(),
            include_str!("../../corpus/rules/cute.rules").into(),
        ),
        (
            "axe".into(),
            include_str!("../../corpus/rules/axe.rules").into(),
        ),
        (
            "swizzle".into(),
            include_str!("../../corpus/rules/swizzle.rules").into(),
        ),
    ];
    load_rules_lazy(&files).unwrap().0
}

/// Joins `a` and `b`, checks the certificate, and returns it.
fn joined(a: &str, b: &str, rules: &[ProvedRule]) -> ExplanationCertificate {
    let c = equivalent(a, b, rules, &Saturation::default())
        .unwrap()
        .unwrap_or_else(|| panic!("{a} and {b} not joined"));
    check(&c.to_json()).unwrap_or_else(|why| panic!("{why}\n{}", c.to_json()));
    c
}

/// The substitution of the first step using `rule`.
fn subst_of(c: &ExplanationCertificate, rule: &str) -> BTreeMap<String, String> {
    let step = c.steps.iter().find(|s| s.rule == rule);
    step.unwrap_or_else(|| panic!("{rule} unused:\n{}", c.to_json()))
        .subst
        .clone()
}

/// Whether `rule` alone fires (in either direction) on saturating `expr`.
fn fires(rule: &str, expr: &str, rules: &[ProvedRule]) -> bool {
    let only: Vec<ProvedRule> = rules
        .iter()
        .filter(|r| r.rule.name == rule)
        .cloned()
        .collect();
    assert_eq!(only.len(), 1, "{rule}");
    let (rws, _) = egraph::rewrites::rewrites(&only);
    let start = egraph::language::parse_expr(expr).unwrap();
    let run = egg::Runner::<_, egraph::fold::Fold>::default()
        .with_iter_limit(3)
        .with_expr(&start)
        .run(&rws);
    let names = [
        egg::Symbol::from(rule),
        egg::Symbol::from(format!("{rule}<=")),
    ];
    run.iterations
        .iter()
        .any(|i| names.iter().any(|n| i.applied.contains_key(n)))
}

#[test]
fn a_nested_cute_literal_binds_its_six_integers() {
    let rules = corpus();
    let c = joined(
        "flatten((2,(3,2)):(3,(1,2)))",
        "(2,(3,2)):(3,(1,2))",
        &rules,
    );
    let s = subst_of(&c, "cute_flatten_preserves_map");
    let got: Vec<&str> = ["a", "b", "c", "d1", "d2", "d3"]
        .iter()
        .map(|n| s[*n].as_str())
        .collect();
    assert_eq!(got, ["2", "3", "2", "3", "1", "2"]);
}

#[test]
fn an_axe_literal_rule_joins_canonicalize_with_its_argument() {
    let rules = corpus();
    let c = joined(
        "canonicalize(S[(2,3,1):(3,1,2)])",
        "S[(2,3,1):(3,1,2)]",
        &rules,
    );
    let s = subst_of(&c, "axe_canonicalize_preserves_map");
    assert_eq!((s["e2"].as_str(), s["s3"].as_str()), ("3", "2"));
}

#[test]
fn tampering_a_literal_integer_of_the_substitution_is_rejected() {
    let rules = corpus();
    let c = joined(
        "flatten((2,(3,2)):(3,(1,2)))",
        "(2,(3,2)):(3,(1,2))",
        &rules,
    );
    let mut steps = c.steps.clone();
    let step = steps
        .iter_mut()
        .find(|s| s.rule == "cute_flatten_preserves_map")
        .unwrap();
    step.subst.insert("d3".into(), "3".into());
    let forged = ExplanationCertificate::new(c.rules.clone(), c.start.clone(), steps);
    let why = check(&forged.to_json()).unwrap_err();
    assert!(why.contains("cute_flatten_preserves_map"), "{why}");
}

#[test]
fn a_literal_fires_only_where_it_instantiates_consistently() {
    let rules = corpus();
    // size(L):1 must agree with L bound by the other argument (compose folds to 4:1, which
    // the rule joins with L).
    let right_identity = "cute_compose_right_identity";
    let only: Vec<ProvedRule> = rules
        .iter()
        .filter(|r| r.rule.name == right_identity)
        .cloned()
        .collect();
    let c = joined("compose((2,2):(1,2), 4:1)", "(2,2):(1,2)", &only);
    assert_eq!(subst_of(&c, right_identity)["L"], "(2, 2):(1, 2)");
    assert!(fires(right_identity, "compose((2,2):(1,2), 4:1)", &rules));
    assert!(!fires(right_identity, "compose((2,2):(1,2), 2:1)", &rules));
    assert!(!fires(right_identity, "compose((2,2):(1,2), 4:2)", &rules));
}

#[test]
fn a_bare_literal_source_with_an_axis_parameter_rewrites() {
    let rules = corpus();
    for (axis, merged, split) in [
        ("m", "S[6:1]", "S[(2,3):(3,1)]"),
        ("laneid", "S[6:1@laneid]", "S[(2,3):(3@laneid,1@laneid)]"),
    ] {
        let c = joined(split, merged, &rules);
        let s = subst_of(&c, "axe_d1_merge");
        assert_eq!(s["a"], axis, "{}", c.to_json());
        assert_eq!((s["e1"].as_str(), s["e2"].as_str()), ("2", "3"));
    }
    // (e1,e2):(e2*s, s) needs the outer stride e2*s: 3*1, not 4.
    assert!(!fires("axe_d1_merge", "S[(2,3):(4,1)]", &rules));
    assert!(fires("axe_d1_merge", "S[(2,3):(3,1)]", &rules));
}
