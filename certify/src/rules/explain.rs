//! Explanation certificates: a chain of terms from `start` to `end`, each step either a FOLD
//! (two subterms that `layout`'s algebra evaluates to the identical value), an application of
//! a named rule at one position with a substitution of its parameters (layouts as their text,
//! integers in decimal, axes by name), or a DECIDE step (the two whole terms' values proved
//! equal over the chain's domain by certify's deciders, cross-checked by the semantics, as
//! `laycert equiv` decides: [`decide`] writes it where saturation does not join two concrete
//! terms). The e-graph (egraph crate) writes them; [`check`] trusts none of it: it re-proves every rule named, and for each step re-finds the rewritten
//! position, re-instantiates the rule with the substitution (read per parameter sort), re-checks
//! the substitution lies in the bounded domain the rule was proved for and the rule's side
//! conditions hold there (egg records neither), and decides the equality of the two rewritten
//! subterms with certify's deciders, and of the two whole terms when the rewrite sits inside a
//! context (a `==` rule relates maps, and an operator of the context may be defined on one
//! side's notation only). Integer, shape and region arguments are compared by value.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use layout::Layout;

use super::eval::{self, Assignment, Bound};
use super::literal::{is_parametric, match_literal, Ranges};
use super::parse::{parse_term, print_term};
use super::prove::{in_domain, prove_rule, Options, Verdict};
use super::syntax::{Arg, CallArg, IntExpr, Piece, Rule, Sort, Term};
use crate::claim::{equivalent, Policy};
use crate::domain::resolve;

/// The format version this build writes and checks.
pub const VERSION: u32 = 1;

/// The name of a step whose two whole terms certify's deciders prove equal ([`decide`]).
pub const DECIDE: &str = "decide";

/// One step of an explanation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// The rule's name, `fold`, or `decide` ([`DECIDE`]).
    pub rule: String,
    /// `forward` (lhs to rhs) or `backward`; for folds, `forward` when the step's result is
    /// a literal (informative only: a fold is checked by evaluating both sides).
    pub direction: String,
    /// The rule's parameters at this step: name -> layout text, integer in decimal, or axis.
    pub subst: BTreeMap<String, String>,
    /// The whole term after the step.
    pub term: String,
}

/// An explanation certificate.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExplanationCertificate {
    /// Format version.
    pub version: u32,
    /// Always `explanation`.
    pub kind: String,
    /// Every rule a step names: name -> rule text.
    pub rules: BTreeMap<String, String>,
    /// The first term.
    pub start: String,
    /// The steps, in order.
    pub steps: Vec<Step>,
    /// The claim's logical domain when it was named (`--shape`, or a checked prefix kept by
    /// `simplify`); absent: the domain `certify::domain::resolve` gives for `start` and the
    /// end term. Every step is decided over this one domain, so the chain proves `start ==
    /// end` over it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shape: Option<Vec<i64>>,
    /// SHA-256 over the other fields.
    pub seal: String,
}

impl ExplanationCertificate {
    /// A sealed certificate.
    pub fn new(rules: BTreeMap<String, String>, start: String, steps: Vec<Step>) -> Self {
        let mut c = ExplanationCertificate {
            version: VERSION,
            kind: "explanation".into(),
            rules,
            start,
            steps,
            shape: None,
            seal: String::new(),
        };
        c.seal = c.compute_seal();
        c
    }

    /// The same certificate over a named domain (re-sealed).
    pub fn with_shape(mut self, shape: Option<Vec<i64>>) -> Self {
        self.shape = shape;
        self.seal = self.compute_seal();
        self
    }

    /// SHA-256 over all fields but the seal.
    pub fn compute_seal(&self) -> String {
        let mut unsealed = self.clone();
        unsealed.seal = String::new();
        let text = serde_json::to_string(&unsealed).expect("serializable");
        format!("{:x}", Sha256::digest(text.as_bytes()))
    }

    /// The last term.
    pub fn end(&self) -> &str {
        self.steps.last().map_or(&self.start, |s| &s.term)
    }

    /// Pretty JSON text.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("serializable")
    }
}

/// Two concrete terms are the same: same operators, literals equal as layout values, and
/// integer, shape and region arguments equal BY VALUE (`4*2` is `8`).
pub fn same_term(a: &Term, b: &Term) -> bool {
    match (a, b) {
        (Term::Lit { .. }, Term::Lit { .. }) => {
            let e = Assignment::new();
            match (eval::term(a, &e), eval::term(b, &e)) {
                (Ok(x), Ok(y)) => x == y,
                _ => false,
            }
        }
        (Term::Var { name: x, .. }, Term::Var { name: y, .. }) => x == y,
        (
            Term::Op {
                name: f, args: xs, ..
            },
            Term::Op {
                name: g, args: ys, ..
            },
        ) => {
            f == g
                && xs.len() == ys.len()
                && xs.iter().zip(ys).all(|(x, y)| match (x, y) {
                    (Arg::Term(x), Arg::Term(y)) => same_term(x, y),
                    (x, y) => same_arg_value(x, y),
                })
        }
        _ => false,
    }
}

/// The value of a concrete integer, shape or region argument (`None`: a term argument, or an
/// expression that does not evaluate).
fn arg_value(a: &Arg) -> Option<Vec<i64>> {
    let e = Assignment::new();
    let int = |x: &IntExpr| eval::int(x, &e).ok();
    match a {
        Arg::Term(_) => None,
        Arg::Int(x) => Some(vec![int(x)?]),
        Arg::Shape(xs) => xs.iter().map(int).collect(),
        Arg::Region(rs) => rs.iter().flat_map(|(b, e)| [b, e]).map(int).collect(),
    }
}

/// Two non-term arguments are the same: same kind and length, and equal values (or the same
/// text when neither evaluates).
fn same_arg_value(x: &Arg, y: &Arg) -> bool {
    let same_kind = match (x, y) {
        (Arg::Int(_), Arg::Int(_)) => true,
        (Arg::Shape(a), Arg::Shape(b)) => a.len() == b.len(),
        (Arg::Region(a), Arg::Region(b)) => a.len() == b.len(),
        _ => false,
    };
    same_kind
        && match (arg_value(x), arg_value(y)) {
            (Some(v), Some(w)) => v == w,
            (None, None) => x == y,
            _ => false,
        }
}

/// Where two terms differ: the pairs of differing subterms from the roots down to the
/// innermost position that contains every difference (empty if the terms are the same).
pub fn rewrite_path<'t>(a: &'t Term, b: &'t Term) -> Vec<(&'t Term, &'t Term)> {
    if same_term(a, b) {
        return Vec::new();
    }
    let mut path = vec![(a, b)];
    if let (
        Term::Op {
            name: f, args: xs, ..
        },
        Term::Op {
            name: g, args: ys, ..
        },
    ) = (a, b)
    {
        if f == g && xs.len() == ys.len() {
            let differing: Vec<(&Term, &Term)> = xs
                .iter()
                .zip(ys)
                .filter_map(|(x, y)| match (x, y) {
                    (Arg::Term(x), Arg::Term(y)) if !same_term(x, y) => Some((x, y)),
                    _ => None,
                })
                .collect();
            let others_same = xs.iter().zip(ys).all(|(x, y)| match (x, y) {
                (Arg::Term(_), Arg::Term(_)) => true,
                (x, y) => same_arg_value(x, y),
            });
            if differing.len() == 1 && others_same {
                path.extend(rewrite_path(differing[0].0, differing[0].1));
            }
        }
    }
    path
}

/// Matches a rule side against a concrete term, extending `subst` (parameter -> value text):
/// layout parameters bind at literals, integer parameters at integer, shape and region
/// positions (by value). A composite integer expression of the pattern is compared by value
/// when its parameters are bound by then, and otherwise left to the checker, which
/// re-instantiates the rule. A literal with parameter holes matches only when its holes'
/// parameters are bound by then (see [`match_side`]).
pub fn match_pattern(p: &Term, t: &Term, subst: &mut BTreeMap<String, String>) -> bool {
    match_side(p, t, subst, &Ranges::new())
}

/// [`match_pattern`], where a literal with parameter holes (`(a,b):(1,a)`) also binds its
/// unbound integer and axis parameters, searched within `ranges` (see
/// [`super::literal::match_literal`]). Not trusted: the checker re-instantiates the rule.
pub fn match_side(
    p: &Term,
    t: &Term,
    subst: &mut BTreeMap<String, String>,
    ranges: &Ranges,
) -> bool {
    match (p, t) {
        (Term::Var { name, .. }, t) => {
            let Ok(v) = eval::term(t, &Assignment::new()) else {
                return false;
            };
            if !matches!(t, Term::Lit { .. }) {
                return false;
            }
            let text = v.print();
            match subst.get(name) {
                Some(prev) => Layout::parse(prev, None).ok() == Some(v),
                None => {
                    subst.insert(name.clone(), text);
                    true
                }
            }
        }
        (Term::Lit { pieces, .. }, Term::Lit { .. }) if is_parametric(pieces) => {
            let Ok(value) = eval::term(t, &Assignment::new()) else {
                return false;
            };
            let mut a = Assignment::new();
            for (name, text) in subst.iter() {
                let b = match ranges.get(name).and_then(|r| r.first()) {
                    Some(Bound::Axis(_)) => Bound::Axis(text.clone()),
                    Some(_) => match text.parse() {
                        Ok(v) => Bound::Int(v),
                        Err(_) => return false,
                    },
                    None => match (text.parse(), Layout::parse(text, None)) {
                        (Ok(v), _) => Bound::Int(v),
                        (_, Ok(l)) => Bound::Layout(l),
                        _ => Bound::Axis(text.clone()),
                    },
                };
                a.insert(name.clone(), b);
            }
            match match_literal(pieces, &value, &a, ranges) {
                Some(found) => {
                    for (name, b) in found {
                        subst.entry(name).or_insert_with(|| b.text());
                    }
                    true
                }
                None => false,
            }
        }
        (Term::Lit { .. }, Term::Lit { .. }) => same_term(p, t),
        (
            Term::Op {
                name: f, args: xs, ..
            },
            Term::Op {
                name: g, args: ys, ..
            },
        ) => {
            f == g
                && xs.len() == ys.len()
                && xs.iter().zip(ys).all(|(x, y)| match (x, y) {
                    (Arg::Term(x), Arg::Term(y)) => match_side(x, y, subst, ranges),
                    (x, y) => match_int_args(x, y, subst),
                })
        }
        _ => false,
    }
}

/// Matches the integer expressions of a pattern's non-term argument against a concrete one.
fn match_int_args(p: &Arg, t: &Arg, subst: &mut BTreeMap<String, String>) -> bool {
    let pairs: Vec<(&IntExpr, &IntExpr)> = match (p, t) {
        (Arg::Int(x), Arg::Int(y)) => vec![(x, y)],
        (Arg::Shape(xs), Arg::Shape(ys)) if xs.len() == ys.len() => xs.iter().zip(ys).collect(),
        (Arg::Region(xs), Arg::Region(ys)) if xs.len() == ys.len() => xs
            .iter()
            .zip(ys)
            .flat_map(|((a, b), (c, d))| [(a, c), (b, d)])
            .collect(),
        _ => return false,
    };
    pairs.into_iter().all(|(x, y)| {
        let Ok(v) = eval::int(y, &Assignment::new()) else {
            return false;
        };
        match x {
            IntExpr::Param(name) => match subst.get(name) {
                Some(prev) => prev.parse::<i64>() == Ok(v),
                None => {
                    subst.insert(name.clone(), v.to_string());
                    true
                }
            },
            other => {
                let a: Assignment = subst
                    .iter()
                    .filter_map(|(k, s)| Some((k.clone(), Bound::Int(s.parse().ok()?))))
                    .collect();
                eval::int(other, &a).map_or(true, |w| w == v)
            }
        }
    })
}

/// A rule side with its parameters replaced by their values at the assignment `a`: layout
/// parameters by literals, integer parameters (in integer, shape and region arguments, and in
/// the holes of layout literals) by numbers, axis parameters by their names.
pub fn instantiate(p: &Term, a: &Assignment) -> Result<Term, String> {
    Ok(match p {
        Term::Var { name, .. } => match a.get(name) {
            Some(Bound::Layout(l)) => {
                let text = l.print();
                parse_term(&text).map_err(|e| format!("{name} = {text:?}: {e}"))?
            }
            _ => return Err(format!("the substitution has no layout for {name}")),
        },
        Term::Lit { pieces, .. } if pieces.iter().all(|x| matches!(x, Piece::Text(_))) => p.clone(),
        Term::Lit { pieces, text, .. } => {
            let filled = eval::fill(pieces, a).map_err(|e| format!("{text}: {e}"))?;
            parse_term(&filled).map_err(|e| format!("{text} = {filled:?}: {e}"))?
        }
        Term::Op { name, args, span } => Term::Op {
            name: name.clone(),
            args: args
                .iter()
                .map(|x| {
                    let int = |e: &IntExpr| instantiate_int(e, a);
                    Ok(match x {
                        Arg::Term(t) => Arg::Term(instantiate(t, a)?),
                        Arg::Int(e) => Arg::Int(int(e)?),
                        Arg::Shape(es) => Arg::Shape(es.iter().map(int).collect::<Result<_, _>>()?),
                        Arg::Region(rs) => Arg::Region(
                            rs.iter()
                                .map(|(b, e)| Ok((int(b)?, int(e)?)))
                                .collect::<Result<_, String>>()?,
                        ),
                    })
                })
                .collect::<Result<_, String>>()?,
            span: span.clone(),
        },
    })
}

/// An integer expression with its parameters replaced by their values.
fn instantiate_int(e: &IntExpr, a: &Assignment) -> Result<IntExpr, String> {
    Ok(match e {
        IntExpr::Num(v) => IntExpr::Num(*v),
        IntExpr::Param(p) => match a.get(p) {
            Some(Bound::Int(v)) => IntExpr::Num(*v),
            _ => return Err(format!("the substitution has no integer for {p}")),
        },
        IntExpr::Neg(x) => IntExpr::Neg(Box::new(instantiate_int(x, a)?)),
        IntExpr::Bin(op, x, y) => IntExpr::Bin(
            *op,
            Box::new(instantiate_int(x, a)?),
            Box::new(instantiate_int(y, a)?),
        ),
        IntExpr::Call(f, arg) => IntExpr::Call(
            f.clone(),
            Box::new(match arg.as_ref() {
                CallArg::Term(t) => CallArg::Term(instantiate(t, a)?),
                CallArg::Int(x) => CallArg::Int(instantiate_int(x, a)?),
            }),
        ),
    })
}

/// The value of one parameter from its substitution text, read per its sort and checked
/// against the domain the rule was proved for (integer bounds are among the conditions,
/// checked afterwards).
fn bound(sort: &Sort, name: &str, text: &str) -> Result<Bound, String> {
    match sort {
        Sort::Int => text
            .trim()
            .parse::<i64>()
            .map(Bound::Int)
            .map_err(|e| format!("{name} = {text:?}: not an integer: {e}")),
        Sort::Axis(axes) if axes.iter().any(|x| x == text) => Ok(Bound::Axis(text.to_string())),
        Sort::Axis(_) => Err(format!(
            "{name} = {text:?} lies outside the domain the rule was proved for"
        )),
        layout_sort => {
            let l = Layout::parse(text, None).map_err(|e| format!("{name} = {text:?}: {e}"))?;
            if !in_domain(layout_sort, &l) {
                return Err(format!(
                    "{name} = {} lies outside the domain the rule was proved for",
                    l.print()
                ));
            }
            Ok(Bound::Layout(l))
        }
    }
}

/// Whether two concrete terms denote the same map over `shape` (absent: the domain
/// `certify::domain::resolve` gives for the two values). Both undefined counts as the same.
pub fn equal_by_decider(a: &Term, b: &Term, shape: Option<&[i64]>) -> Result<(), String> {
    let e = Assignment::new();
    match (eval::term(a, &e), eval::term(b, &e)) {
        (Err(_), Err(_)) => Ok(()),
        (Ok(_), Err(err)) | (Err(err), Ok(_)) => Err(format!("one side is undefined: {err}")),
        (Ok(x), Ok(y)) => {
            let policy = Policy {
                use_smt: false,
                ..Policy::default()
            };
            let r = equivalent(&x, &y, shape, &policy).map_err(|e| e.to_string())?;
            if r.verdict() == "equivalent" {
                Ok(())
            } else {
                Err(format!(
                    "{} and {} are {} over {}",
                    x.print(),
                    y.print(),
                    r.verdict(),
                    r.domain.describe()
                ))
            }
        }
    }
}

/// Whether two concrete terms are both defined and their values equal over `shape`, by
/// certify's three deciders and the semantics' cross-check ([`equivalent`] with the default
/// policy, as `laycert equiv` decides): the check of a [`DECIDE`] step.
fn decided_equal(a: &Term, b: &Term, shape: &[i64]) -> Result<(), String> {
    let e = Assignment::new();
    let (x, y) = match (eval::term(a, &e), eval::term(b, &e)) {
        (Ok(x), Ok(y)) => (x, y),
        (Err(err), _) | (_, Err(err)) => return Err(format!("a side is undefined: {err}")),
    };
    let r = equivalent(&x, &y, Some(shape), &Policy::default()).map_err(|e| e.to_string())?;
    match r.verdict() {
        "equivalent" => Ok(()),
        v => Err(format!(
            "{} and {} are {v} over {}",
            x.print(),
            y.print(),
            r.domain.describe()
        )),
    }
}

/// The claim `start == end` between two concrete terms, decided over their values.
#[derive(Clone, Debug)]
pub struct Decision {
    /// The deciders' report over the claim's domain ([`claim_domain`]): `equivalent` only when
    /// a decider proved it and the cross-check agreed; a counterexample only when the semantics
    /// confirmed it.
    pub report: crate::claim::Report,
    /// When equal: the certificate `start` -> `end` by one [`DECIDE`] step, over the named
    /// shape if one was given, which [`check`] re-decides from the terms.
    pub certificate: Option<ExplanationCertificate>,
}

/// Decides `start == end` (concrete terms, as [`parse_term`] reads them) over `shape` (absent:
/// the domain `certify::domain::resolve` gives for their values) by the values' maps: the
/// answer for two terms that saturation does not join. `Err` when a term does not parse or is
/// undefined, or the shape does not fit them.
pub fn decide(start: &str, end: &str, shape: Option<&[i64]>) -> Result<Decision, String> {
    // Both terms defined, and the shape fits them, as a certificate's chain requires.
    claim_domain(start, end, shape)?;
    let (a, b) = (term_value("start", start)?, term_value("end", end)?);
    // Over the same domain (`equivalent` resolves it as `claim_domain` does), and the report
    // says where it came from.
    let report = equivalent(&a, &b, shape, &Policy::default()).map_err(|e| e.to_string())?;
    let certificate = (report.verdict() == "equivalent").then(|| {
        let step = Step {
            rule: DECIDE.into(),
            direction: "forward".into(),
            subst: BTreeMap::new(),
            term: end.to_string(),
        };
        ExplanationCertificate::new(BTreeMap::new(), start.to_string(), vec![step])
            .with_shape(shape.map(<[i64]>::to_vec))
    });
    Ok(Decision {
        report,
        certificate,
    })
}

/// The domain a chain is decided over: the certificate's named shape, else the one
/// `certify::domain::resolve` gives for the values of its first and last terms (both must be
/// defined: a chain between undefined terms proves nothing).
pub fn chain_domain(c: &ExplanationCertificate) -> Result<Vec<i64>, String> {
    claim_domain(&c.start, c.end(), c.shape.as_deref())
}

/// The domain of the claim `start == end` over `shape` (absent: the one
/// `certify::domain::resolve` gives): both terms must be defined, and a named shape must fit
/// them (extents at least 1, the layouts' size), as `equiv` requires of its `--shape`.
pub fn claim_domain(start: &str, end: &str, shape: Option<&[i64]>) -> Result<Vec<i64>, String> {
    let (a, b) = (term_value("start", start)?, term_value("end", end)?);
    let d = resolve(&a, &b, shape).map_err(|err| err.to_string())?;
    // The shape fits both sides exactly as `equiv` requires (the same forward forms).
    crate::claim::forms(&a, &b, &d.shape).map_err(|err| err.to_string())?;
    Ok(d.shape)
}

/// The value of the concrete term `text` (the `what` term of a claim: `start`, `end`), or why
/// it is undefined.
pub fn term_value(what: &str, text: &str) -> Result<Layout, String> {
    let t = parse_term(text).map_err(|err| format!("{what}: {err}"))?;
    eval::term(&t, &Assignment::new())
        .map_err(|err| format!("the {what} term {text} is undefined: {err}"))
}

/// Checks one rule step: `before` -> `after` by `rule` in `direction` with `subst`.
pub fn check_rule_step(
    rule: &Rule,
    direction: &str,
    subst: &BTreeMap<String, String>,
    before: &Term,
    after: &Term,
) -> Result<(), String> {
    let (from, to) = match direction {
        "forward" => (&rule.lhs, &rule.rhs),
        "backward" => (&rule.rhs, &rule.lhs),
        other => return Err(format!("direction {other:?}")),
    };
    let mut a = Assignment::new();
    for p in &rule.params {
        let text = subst
            .get(&p.name)
            .ok_or_else(|| format!("the substitution has no value for {}", p.name))?;
        a.insert(p.name.clone(), bound(&p.sort, &p.name, text)?);
    }
    if let Some(extra) = subst.keys().find(|k| !a.contains_key(*k)) {
        return Err(format!(
            "the substitution binds {extra}, not a parameter of the rule"
        ));
    }
    for (i, c) in rule.conds.iter().enumerate() {
        if !eval::cond(c, &a) {
            return Err(format!("side condition {} does not hold", i + 1));
        }
    }
    let (lhs, rhs) = (instantiate(from, &a)?, instantiate(to, &a)?);
    let path = rewrite_path(before, after);
    let Some(&(x, y)) = path.last() else {
        return Err("the step changes nothing".into());
    };
    // The rule's instance must be what changed: some pair on the path from the root to the
    // innermost difference.
    match path
        .iter()
        .find(|(x, y)| same_term(&lhs, x) && same_term(&rhs, y))
    {
        // The instance, over its own domain (the one the rule was proved over); the whole
        // terms are compared over the chain's domain by `valid_prefix`.
        Some((x, y)) => equal_by_decider(x, y, None),
        None => Err(format!(
            "the rule instantiated with the substitution gives {} -> {}, but the step rewrites {} -> {}",
            print_term(&lhs),
            print_term(&rhs),
            print_term(x),
            print_term(y)
        )),
    }
}

/// A fold step: at some position on the path of differences, both subterms evaluate (by
/// `layout`'s algebra) to the identical value; or the two terms are the same up to the values
/// of their integer, shape and region arguments (a fold of integer expressions).
fn check_fold(before: &Term, after: &Term) -> Result<(), String> {
    let path = rewrite_path(before, after);
    if path.is_empty() && before != after {
        return Ok(());
    }
    let e = Assignment::new();
    let mut why = "the fold changes nothing".to_string();
    for (x, y) in path.iter().rev() {
        match (eval::term(x, &e), eval::term(y, &e)) {
            (Ok(v), Ok(w)) if v == w => return Ok(()),
            (Ok(v), Ok(w)) => {
                why = format!(
                    "{} evaluates to {}, {} to {}",
                    print_term(x),
                    v.print(),
                    print_term(y),
                    w.print()
                )
            }
            (Err(err), _) | (_, Err(err)) => why = format!("a side is undefined: {err}"),
        }
    }
    Err(why)
}

/// Re-checks an explanation certificate (see the module doc).
pub fn check(text: &str) -> Result<ExplanationCertificate, String> {
    let c: ExplanationCertificate =
        serde_json::from_str(text).map_err(|e| format!("not an explanation certificate: {e}"))?;
    if c.version != VERSION || c.kind != "explanation" {
        return Err(format!("kind {:?} version {}", c.kind, c.version));
    }
    if c.seal != c.compute_seal() {
        return Err("the seal does not match the contents (edited after it was written)".into());
    }
    if let Some(Err(why)) = certificate_rules(&c).into_values().find(Result::is_err) {
        return Err(why);
    }
    match valid_prefix(&c) {
        (_, None) => Ok(c),
        (_, Some(why)) => Err(why),
    }
}

/// Every rule the certificate lists, parsed from its text and proved (or why not).
fn certificate_rules(c: &ExplanationCertificate) -> BTreeMap<&str, Result<Rule, String>> {
    c.rules
        .iter()
        .map(|(name, text)| {
            let rule = super::parse_source(name, text)
                .map_err(|e| e.to_string())
                .and_then(|file| match file.rules.as_slice() {
                    [rule] if &rule.name == name => Ok(rule.clone()),
                    [rule] => Err(format!("rule {name}: the text names {}", rule.name)),
                    more => Err(format!("rule {name}: the text holds {} rules", more.len())),
                })
                .and_then(|rule| proved_cached(&rule).map(|()| rule));
            (name.as_str(), rule)
        })
        .collect()
}

/// Whether certify proves `rule` (by its text), proved once per process: the prover is
/// deterministic, so a second proof of the same text would give the same verdict. The
/// e-graph's rules (`egraph::ProvedRule`) share this cache, so a rule proved on its first
/// match is not proved again when the explanation certificate it produced is checked.
///
/// `Err` names the rule and the prover's verdict line when it is not PROVED.
pub fn proved_cached(rule: &Rule) -> Result<(), String> {
    static PROOFS: std::sync::OnceLock<std::sync::Mutex<BTreeMap<String, Result<(), String>>>> =
        std::sync::OnceLock::new();
    let cache = PROOFS.get_or_init(Default::default);
    if let Some(r) = cache.lock().ok().and_then(|m| m.get(&rule.text).cloned()) {
        return r;
    }
    let report = prove_rule(rule, &Options::default());
    let r = if report.verdict == Verdict::Proved {
        Ok(())
    } else {
        Err(format!(
            "rule {} is not proved: {}",
            rule.name,
            report.line()
        ))
    };
    if let Ok(mut m) = cache.lock() {
        m.insert(rule.text.clone(), r.clone());
    }
    r
}

/// How many steps of `c` (seal aside) check, from the first on, and why the next one fails
/// (`None`: all do). Every rule a step names is parsed from the certificate and proved; every
/// step's two whole terms are decided equal over the chain's one domain ([`chain_domain`]),
/// so the checked prefix proves `start == (its last term)` over that domain.
pub fn valid_prefix(c: &ExplanationCertificate) -> (usize, Option<String>) {
    if c.steps.is_empty() {
        // `start == start` holds by reflexivity, but over a NAMED shape only where that shape
        // fits the term (which must then be defined), as `equiv` requires of its `--shape`.
        if c.shape.is_some() {
            if let Err(why) = chain_domain(c) {
                return (0, Some(format!("the chain's domain: {why}")));
            }
        }
        return (0, None);
    }
    let rules = certificate_rules(c);
    let domain = match chain_domain(c) {
        Ok(d) => d,
        Err(why) => return (0, Some(format!("the chain's domain: {why}"))),
    };
    let mut cur = match parse_term(&c.start) {
        Ok(t) => t,
        Err(e) => return (0, Some(format!("start: {e}"))),
    };
    for (i, s) in c.steps.iter().enumerate() {
        let r = parse_term(&s.term)
            .map_err(|e| e.to_string())
            .and_then(|next| {
                if s.rule == DECIDE {
                    decided_equal(&cur, &next, &domain)
                        .map_err(|e| format!("over the chain's domain: {e}"))?;
                    return Ok(next);
                }
                if s.rule == "fold" {
                    check_fold(&cur, &next)?;
                } else {
                    let rule = rules
                        .get(s.rule.as_str())
                        .ok_or_else(|| format!("rule {} is not in the certificate", s.rule))?
                        .as_ref()
                        .map_err(Clone::clone)?;
                    check_rule_step(rule, &s.direction, &s.subst, &cur, &next)?;
                }
                equal_by_decider(&cur, &next, Some(&domain))
                    .map_err(|e| format!("over the chain's domain: {e}"))?;
                Ok(next)
            });
        match r {
            Ok(next) => cur = next,
            Err(e) => {
                return (
                    i,
                    Some(format!("step {} ({} {}): {e}", i + 1, s.rule, s.direction)),
                )
            }
        }
    }
    (c.steps.len(), None)
}
