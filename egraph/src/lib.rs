//! # egraph — layout terms in an e-graph
//!
//! An egg [`language::LayoutExpr`] of layout terms: every operator of the rule language (the
//! Axe, CuTe, swizzle and F2 algebras, `complement(L, M)`, `tile(A, [..], B, [..])`,
//! `slice(L, [..], [(b, e), ..])`, ...) over concrete layout leaves, named library atoms,
//! and an integer sort (numbers, the rules' arithmetic, shapes and regions). Constant folding
//! through the [`fold::Fold`] analysis evaluates concrete subterms (`layout`'s algebra, checked
//! integer arithmetic); rewrites are generated only from rules `certify` PROVED
//! ([`rewrites`]), with layout and integer parameters, whose side conditions are re-evaluated
//! at every match. [`simplify`] extracts the cheapest equivalent form (cost: the number of
//! modes); [`equivalent`] proves two expressions equal by saturation, and [`decide_values`]
//! decides two concrete expressions by their folded values where saturation does not join
//! them. They return an explanation certificate (`certify::rules::explain`) whose steps name
//! a rule and its substitution, a fold, or the deciders' verdict; `certify` re-checks it
//! without trusting this crate.
//! [`decompose`] searches `tile(atom, C)`, `Sw o tile(atom, C)` and slice forms of a layout
//! over an atom library in the e-graph.
//!
//! ```
//! use egraph::{load_rules, simplify, Saturation};
//! let rules = load_rules(&[("r".into(), "rule coalesce_idem forall L : cute(2, 4, 4)
//!     coalesce(coalesce(L)) === coalesce(L)
//!   rule swizzle_zero forall L : cute(2, 4, 4), m s : int where 0 <= m <= 2, 1 <= s <= 2, m < s
//!     swizzle(0, m, s, L) == L".into())]).unwrap();
//! assert_eq!(rules.0.len(), 2);
//! let out = simplify("coalesce(compose((4,8):(1,4), (2,4):(1,2)))", &rules.0, &Saturation::default()).unwrap();
//! assert_eq!(out.best, "8:1");
//! assert!(certify::rules::explain::check(&out.certificate.to_json()).is_ok());
//! // An integer-parameter rule: Sw<0,1,2> moves no bit, so the swizzle goes.
//! let sat = Saturation::default();
//! let out = simplify("swizzle(0, 1, 1 + 1, (4,2):(2,1))", &rules.0, &sat).unwrap();
//! assert_eq!(out.best, "(4, 2):(2, 1)");
//! assert!(certify::rules::explain::check(&out.certificate.to_json()).is_ok());
//! ```
#![warn(missing_docs)]

pub mod decompose;
pub mod fold;
pub mod language;
pub mod rewrites;

use std::collections::BTreeMap;

use certify::rules::explain::{
    chain_domain, match_side, rewrite_path, valid_prefix, ExplanationCertificate, Step,
};
use certify::rules::literal::ranges;
use certify::rules::parse::parse_term;
use certify::rules::syntax::Term;
use certify::rules::{parse_source, prove_rule, Options};
use egg::{Extractor, FlatTerm, RecExpr, Runner};
use rayon::prelude::*;

use fold::{Fold, ModeCost};
use language::{parse_expr, print_expr, LayoutExpr};
pub use rewrites::ProvedRule;

/// The most nodes (operators, leaves, integers) an input expression of [`simplify`] or
/// [`join`] may have. The explanation's length and the checker's work per step both grow with
/// the term, so the work is bounded by the input's size; larger input is an error naming it.
pub const MAX_INPUT_NODES: usize = 128;

/// The deepest an input expression of [`simplify`] or [`join`] may nest (a leaf is depth 1).
pub const MAX_INPUT_DEPTH: usize = 32;

/// Saturation limits: deterministic work counts, no wall-clock limit (the same input gives
/// the same answer on any machine). With [`MAX_INPUT_NODES`] they bound every run.
#[derive(Clone, Debug)]
pub struct Saturation {
    /// Most iterations.
    pub iter_limit: usize,
    /// Most e-nodes.
    pub node_limit: usize,
}

impl Default for Saturation {
    fn default() -> Self {
        Saturation {
            iter_limit: 8,
            node_limit: 4_000,
        }
    }
}

/// Parses and proves rule files (name, text); returns the PROVED rules and, for the others,
/// why they are left out. A rule that could never become a rewrite (see [`rewrites`]) is left
/// out before it is proved; the others are proved in parallel.
pub fn load_rules(
    files: &[(String, String)],
) -> Result<(Vec<ProvedRule>, Vec<String>), certify::rules::RuleFileError> {
    let (usable, mut left) = usable_rules(files)?;
    let reports: Vec<_> = usable
        .par_iter()
        .map(|r| prove_rule(r, &Options::default()))
        .collect();
    let (proved, unproved) = rewrites::proved(&usable, &reports);
    left.extend(unproved);
    Ok((proved, left))
}

/// Parses rule files (name, text) for proving on first use: every rule that can become a
/// rewrite, each proved by certify the first time a match inside its domain needs it (see
/// [`ProvedRule`]); the others with why they are left out. Saturation then proves only the
/// rules it uses.
pub fn load_rules_lazy(
    files: &[(String, String)],
) -> Result<(Vec<ProvedRule>, Vec<String>), certify::rules::RuleFileError> {
    let (usable, left) = usable_rules(files)?;
    Ok((usable.into_iter().map(ProvedRule::lazy).collect(), left))
}

/// The parsed rules that can become rewrites, and why each other one cannot.
fn usable_rules(
    files: &[(String, String)],
) -> Result<(Vec<certify::rules::syntax::Rule>, Vec<String>), certify::rules::RuleFileError> {
    let mut usable = Vec::new();
    let mut left = Vec::new();
    for (name, text) in files {
        for r in parse_source(name, text)?.rules {
            match rewrites::unusable(&r) {
                Some(why) => left.push(why),
                None => usable.push(r),
            }
        }
    }
    Ok((usable, left))
}

/// The result of [`simplify`].
#[derive(Clone, Debug)]
pub struct Simplified {
    /// The cheapest equivalent expression found.
    pub best: String,
    /// Its cost.
    pub cost: usize,
    /// The input's cost.
    pub input_cost: usize,
    /// Input to `best`, step by step; checked by certify before it is returned.
    pub certificate: ExplanationCertificate,
    /// When the e-graph's cheapest form failed the check: which, and why (`best` is then the
    /// cheapest term of the checked prefix).
    pub rejected: Option<String>,
}

fn runner(
    rules: &[ProvedRule],
    sat: &Saturation,
) -> (
    Runner<LayoutExpr, Fold>,
    Vec<egg::Rewrite<LayoutExpr, Fold>>,
) {
    let (rws, _) = rewrites::rewrites(rules);
    let r = Runner::default()
        .with_explanations_enabled()
        .with_iter_limit(sat.iter_limit)
        .with_node_limit(sat.node_limit)
        // No wall-clock limit: the same input gives the same result on any machine (and a
        // rule's proof on its first match takes the time it takes).
        .with_time_limit(std::time::Duration::from_secs(u64::from(u32::MAX)));
    (r, rws)
}

/// Parses an expression over concrete layouts only: a name that is no layout is an error here
/// (atoms have values only in a decomposition's library).
fn parse_concrete(text: &str) -> Result<RecExpr<LayoutExpr>, String> {
    let e = parse_expr(text)?;
    match e.as_ref().iter().find_map(|n| match n {
        LayoutExpr::Atom(a) => Some(a.0.clone()),
        _ => None,
    }) {
        Some(name) => Err(match name.parse::<language::Leaf>() {
            Err(why) => format!("{name} is no layout: {why}"),
            Ok(_) => format!("{name} is no layout"),
        }),
        None => within_input_limits(e),
    }
}

/// The expression itself when it is within [`MAX_INPUT_NODES`] and [`MAX_INPUT_DEPTH`].
fn within_input_limits(e: RecExpr<LayoutExpr>) -> Result<RecExpr<LayoutExpr>, String> {
    use egg::Language;
    let nodes = e.as_ref().len();
    if nodes > MAX_INPUT_NODES {
        return Err(format!(
            "the expression has {nodes} nodes; simplify and equiv-expr take at most {MAX_INPUT_NODES}"
        ));
    }
    // Children come before their parents in a RecExpr.
    let mut depth: Vec<usize> = Vec::with_capacity(nodes);
    for n in e.as_ref() {
        let d = 1 + n
            .children()
            .iter()
            .map(|c| depth[usize::from(*c)])
            .max()
            .unwrap_or(0);
        if d > MAX_INPUT_DEPTH {
            return Err(format!(
                "the expression nests deeper than {MAX_INPUT_DEPTH} levels; simplify and equiv-expr take at most {MAX_INPUT_DEPTH}"
            ));
        }
        depth.push(d);
    }
    Ok(e)
}

/// The cheapest expression equivalent to `expr` under the proved rules and folding.
pub fn simplify(expr: &str, rules: &[ProvedRule], sat: &Saturation) -> Result<Simplified, String> {
    let start = parse_concrete(expr)?;
    let (r, rws) = runner(rules, sat);
    let mut run = r.with_expr(&start).run(&rws);
    let root = run.roots[0];
    let ext = Extractor::new(&run.egraph, ModeCost);
    let (cost, best) = ext.find_best(root);
    let input_cost = egg::CostFunction::cost_rec(&mut ModeCost, &start);
    let certificate = certificate(&mut run, &start, &best, rules)?;
    // The e-graph is not trusted (egg records no conditions, and congruence may carry a
    // same-map merge into an operator defined on one notation only): the answer is what
    // certify's checker accepts. When a step fails, the cheapest term of the checked prefix
    // is the answer instead.
    let (ok, why) = valid_prefix(&certificate);
    let Some(why) = why else {
        return Ok(Simplified {
            best: print_expr(&best),
            cost,
            input_cost,
            certificate,
            rejected: None,
        });
    };
    let mut keep = (0usize, input_cost);
    for (i, s) in certificate.steps[..ok].iter().enumerate() {
        let c = egg::CostFunction::cost_rec(&mut ModeCost, &parse_expr(&s.term)?);
        if c < keep.1 {
            keep = (i + 1, c);
        }
    }
    let steps = certificate.steps[..keep.0].to_vec();
    let used = certificate
        .rules
        .iter()
        .filter(|(name, _)| steps.iter().any(|s| &s.rule == *name))
        .map(|(n, t)| (n.clone(), t.clone()))
        .collect();
    // The prefix was checked over the whole chain's domain: the kept claim names it.
    let kept = ExplanationCertificate::new(used, certificate.start.clone(), steps)
        .with_shape(chain_domain(&certificate).ok());
    Ok(Simplified {
        best: kept.end().to_string(),
        cost: keep.1,
        input_cost,
        rejected: Some(format!(
            "the e-graph's cheapest form {} fails the check at {why}",
            print_expr(&best)
        )),
        certificate: kept,
    })
}

/// What saturation says of two expressions.
#[derive(Clone, Debug)]
pub enum Joined {
    /// Joined, with an explanation certify's checker accepts.
    Proved(ExplanationCertificate),
    /// Saturation did not join them (which proves nothing either way).
    NotJoined,
    /// Joined, but the explanation fails the checker (why): nothing is proved.
    Rejected(String),
}

/// Proves `a` and `b` equal by saturation (module doc); the explanation is checked by
/// certify before it counts.
pub fn join(a: &str, b: &str, rules: &[ProvedRule], sat: &Saturation) -> Result<Joined, String> {
    join_over(a, b, None, rules, sat)
}

/// The domain of the claim `a == b` over `shape` (see
/// `certify::rules::explain::claim_domain`): an error when a side is undefined or the shape does
/// not fit them, so a claim that names an impossible domain is refused before saturation.
pub fn claim_domain(a: &str, b: &str, shape: Option<&[i64]>) -> Result<Vec<i64>, String> {
    let (ea, eb) = (parse_concrete(a)?, parse_concrete(b)?);
    certify::rules::explain::claim_domain(&print_expr(&ea), &print_expr(&eb), shape)
}

/// `Ok` when the concrete expression `expr` has a value; else why not (an operator outside its
/// domain): a term [`simplify`] cannot start from.
pub fn check_defined(expr: &str) -> Result<(), String> {
    let e = parse_concrete(expr)?;
    certify::rules::explain::term_value("start", &print_expr(&e)).map(|_| ())
}

/// [`join`] over a named logical domain (`None`: the one `certify::domain::resolve` gives for
/// the two values); the certificate records it and every step is decided over it.
pub fn join_over(
    a: &str,
    b: &str,
    shape: Option<Vec<i64>>,
    rules: &[ProvedRule],
    sat: &Saturation,
) -> Result<Joined, String> {
    let (ea, eb) = (parse_concrete(a)?, parse_concrete(b)?);
    let (r, rws) = runner(rules, sat);
    let mut run = r.with_expr(&ea).with_expr(&eb).run(&rws);
    if run.egraph.find(run.roots[0]) != run.egraph.find(run.roots[1]) {
        return Ok(Joined::NotJoined);
    }
    let c = certificate(&mut run, &ea, &eb, rules)?.with_shape(shape);
    Ok(match valid_prefix(&c) {
        (_, None) => Joined::Proved(c),
        (_, Some(why)) => Joined::Rejected(why),
    })
}

/// Decides `a == b` over `shape` (absent: the domain `certify::domain::resolve` gives for
/// their values) by their folded values, with certify's deciders and cross-check
/// (`certify::rules::explain::decide`): the answer where saturation does not join two concrete
/// expressions, equal with a one-step `decide` certificate, or not equal with a counterexample
/// the semantics confirmed, or undecided.
pub fn decide_values(
    a: &str,
    b: &str,
    shape: Option<&[i64]>,
) -> Result<certify::rules::explain::Decision, String> {
    let (ea, eb) = (parse_concrete(a)?, parse_concrete(b)?);
    certify::rules::explain::decide(&print_expr(&ea), &print_expr(&eb), shape)
}

/// [`join`] as an option: the checked certificate, or `None` when saturation did not join
/// them or the checker rejected the explanation (neither proves anything).
pub fn equivalent(
    a: &str,
    b: &str,
    rules: &[ProvedRule],
    sat: &Saturation,
) -> Result<Option<ExplanationCertificate>, String> {
    Ok(match join(a, b, rules, sat)? {
        Joined::Proved(c) => Some(c),
        Joined::NotJoined | Joined::Rejected(_) => None,
    })
}

fn annotation(t: &FlatTerm<LayoutExpr>) -> Option<String> {
    t.forward_rule
        .or(t.backward_rule)
        .map(|s| s.to_string())
        .or_else(|| t.children.iter().find_map(annotation))
}

fn term(e: &RecExpr<LayoutExpr>) -> Result<Term, String> {
    let text = print_expr(e);
    parse_term(&text).map_err(|e| e.render(&text))
}

/// The explanation of `from` = `to` as a certificate.
fn certificate(
    run: &mut Runner<LayoutExpr, Fold>,
    from: &RecExpr<LayoutExpr>,
    to: &RecExpr<LayoutExpr>,
    rules: &[ProvedRule],
) -> Result<ExplanationCertificate, String> {
    let mut expl = run.explain_equivalence(from, to);
    let flat = expl.make_flat_explanation().clone();
    let by_name: BTreeMap<&str, &ProvedRule> =
        rules.iter().map(|r| (r.rule.name.as_str(), r)).collect();
    let mut used = BTreeMap::new();
    let mut steps = Vec::new();
    let mut prev = term(&flat[0].get_recexpr())?;
    let mut prev_text = print_expr(&flat[0].get_recexpr());
    for ft in flat.iter().skip(1) {
        // egg may justify a step between two e-nodes that print the same (a rule's concrete
        // instance added beside the matched term): the certificate has nothing to check there.
        let text = print_expr(&ft.get_recexpr());
        if text == prev_text {
            continue;
        }
        prev_text = text;
        let next = term(&ft.get_recexpr())?;
        let name = annotation(ft).unwrap_or_default();
        let path = rewrite_path(&prev, &next);
        let step = if name == "fold" {
            let backward = matches!(path.last(), Some((Term::Lit { .. }, _)));
            Step {
                rule: "fold".into(),
                direction: if backward { "backward" } else { "forward" }.into(),
                subst: BTreeMap::new(),
                term: print_expr(&ft.get_recexpr()),
            }
        } else {
            let base = name.trim_end_matches("<=");
            let pr = by_name
                .get(base)
                .ok_or_else(|| format!("the explanation names an unknown rule {name:?}"))?;
            if pr.proof_state() != Some(true) {
                return Err(format!("the explanation uses {base}, which is not proved"));
            }
            used.insert(base.to_string(), pr.rule.text.clone());
            let r = &pr.rule;
            let ranges = ranges(r);
            let mut found = None;
            'dirs: for (dir, f, t) in [("forward", &r.lhs, &r.rhs), ("backward", &r.rhs, &r.lhs)] {
                for (x, y) in &path {
                    let mut s = BTreeMap::new();
                    if match_side(f, x, &mut s, &ranges) && match_side(t, y, &mut s, &ranges) {
                        found = Some((dir, s));
                        break 'dirs;
                    }
                }
            }
            let (dir, subst) = found.unwrap_or(("forward", BTreeMap::new()));
            Step {
                rule: base.to_string(),
                direction: dir.into(),
                subst,
                term: print_expr(&ft.get_recexpr()),
            }
        };
        steps.push(step);
        prev = next;
    }
    Ok(ExplanationCertificate::new(used, print_expr(from), steps))
}
