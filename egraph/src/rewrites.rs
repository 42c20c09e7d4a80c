//! Rewrites generated from PROVED rules only (proved up front, or on the first match that
//! needs the proof). A rule becomes a rewrite when its parameters are
//! layouts or integers (the e-graph has no axis sort) and its sides are terms of the e-graph
//! language whose layout literals hold no parameter; each direction whose source is not a bare
//! variable and binds every parameter is used. The condition of every rewrite re-evaluates the
//! rule's own side conditions at the match, after checking each matched layout lies in the
//! bounded domain the rule was proved for and reading each integer parameter from its e-class's
//! folded value.
//!
//! In a source pattern an integer parameter is a variable (`complement(?L, ?M)`); a composite
//! integer expression (`[size(X)]`, `[e1*e2/g]`) becomes a fresh variable whose e-class's
//! value the condition compares with the expression evaluated at the match. In a target
//! pattern integer expressions are nodes, which folding evaluates.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::sync::{Arc, OnceLock};

use certify::rules::eval::{self, cond, Assignment, Bound};
use certify::rules::ops::Value;
use certify::rules::prove::in_domain;
use certify::rules::syntax::{IntExpr, Rule, Sort, Term};
use certify::rules::{prove_rule, Options, RuleReport, Verdict};
use egg::{ConditionalApplier, ENodeOrVar, Id, Pattern, PatternAst, RecExpr, Rewrite, Subst, Var};

use crate::fold::Fold;
use crate::language::{add_term, Builder, LayoutExpr, Leaf};

/// A rule the e-graph may use: PROVED up front ([`proved`]), or proved on its first match
/// ([`ProvedRule::lazy`]): its rewrites fire only once certify proves it, so an unproved rule
/// never rewrites anything, and a rule that never matches costs no proof.
#[derive(Clone, Debug)]
pub struct ProvedRule {
    /// The rule.
    pub rule: Arc<Rule>,
    proof: Arc<OnceLock<bool>>,
}

impl ProvedRule {
    /// A rule to prove on its first match.
    pub fn lazy(rule: Rule) -> Self {
        ProvedRule {
            rule: Arc::new(rule),
            proof: Arc::new(OnceLock::new()),
        }
    }

    /// Whether certify proves the rule (proving it now, once, if it was not yet).
    pub fn is_proved(&self) -> bool {
        proved_once(&self.rule, &self.proof)
    }

    /// `Some(verdict)` once the rule was proved or refuted, `None` before.
    pub fn proof_state(&self) -> Option<bool> {
        self.proof.get().copied()
    }
}

/// Whether certify proves `rule`, proving it on the first call.
fn proved_once(rule: &Rule, proof: &OnceLock<bool>) -> bool {
    *proof.get_or_init(|| prove_rule(rule, &Options::default()).verdict == Verdict::Proved)
}

/// Keeps the rules a report PROVED; the others are returned with the reason they are left out.
pub fn proved(rules: &[Rule], reports: &[RuleReport]) -> (Vec<ProvedRule>, Vec<String>) {
    let mut keep = Vec::new();
    let mut left = Vec::new();
    for (r, rep) in rules.iter().zip(reports) {
        if rep.verdict == Verdict::Proved && rep.name == r.name {
            keep.push(ProvedRule {
                rule: Arc::new(r.clone()),
                proof: Arc::new(OnceLock::from(true)),
            });
        } else {
            left.push(format!("{}: {}", r.name, rep.word()));
        }
    }
    (keep, left)
}

/// Builds pattern nodes; as a source (`holes`), composite integer expressions become fresh
/// variables, recorded with their expression.
struct PatternBuilder {
    holes: Option<RefCell<Holes>>,
}

type Node = ENodeOrVar<LayoutExpr>;

fn var(name: &str) -> Result<Node, String> {
    format!("?{name}")
        .parse::<Var>()
        .map(ENodeOrVar::Var)
        .map_err(|e| e.to_string())
}

impl Builder<Node> for PatternBuilder {
    fn leaf(&self, text: &str) -> Result<Node, String> {
        text.parse::<Leaf>()
            .map(|l| ENodeOrVar::ENode(LayoutExpr::Leaf(l)))
            .map_err(|_| format!("the literal {text} holds a parameter or is no layout"))
    }
    fn var(&self, name: &str) -> Result<Node, String> {
        var(name)
    }
    fn node(&self, n: LayoutExpr) -> Result<Node, String> {
        Ok(ENodeOrVar::ENode(n))
    }
    fn int_hole(&self, e: &IntExpr) -> Option<Result<Node, String>> {
        let holes = self.holes.as_ref()?;
        match e {
            IntExpr::Num(_) | IntExpr::Param(_) => None,
            IntExpr::Neg(x) if matches!(**x, IntExpr::Num(_)) => None,
            composite => {
                let mut h = holes.borrow_mut();
                let name = format!("__int{}", h.len());
                h.push((name.clone(), composite.clone()));
                Some(var(&name))
            }
        }
    }
}

/// Fresh pattern variables standing for composite integer expressions.
type Holes = Vec<(String, IntExpr)>;

/// A rule side as a source pattern (with its checked integer holes) and as a target pattern.
fn patterns(t: &Term) -> Result<(Pattern<LayoutExpr>, Holes, Pattern<LayoutExpr>), String> {
    let source = PatternBuilder {
        holes: Some(RefCell::new(Vec::new())),
    };
    let mut ast: PatternAst<LayoutExpr> = RecExpr::default();
    add_term(t, &mut ast, &source)?;
    let holes = source.holes.map(RefCell::into_inner).unwrap_or_default();
    let mut target: PatternAst<LayoutExpr> = RecExpr::default();
    add_term(t, &mut target, &PatternBuilder { holes: None })?;
    Ok((Pattern::new(ast), holes, Pattern::new(target)))
}

/// The side condition of a rewrite: domain membership, the values of composite integer
/// positions, and the rule's conditions at the match.
#[derive(Clone, Debug)]
pub struct RuleCondition {
    rule: Arc<Rule>,
    holes: Holes,
    proof: Arc<OnceLock<bool>>,
}

impl RuleCondition {
    /// The condition of `rule` (a source pattern without composite integer positions; the
    /// rule is proved on the first match that needs it).
    pub fn new(rule: Arc<Rule>) -> Self {
        RuleCondition {
            rule,
            holes: Vec::new(),
            proof: Arc::new(OnceLock::new()),
        }
    }

    /// The assignment of the matched values (`value` gives the folded value of a pattern
    /// variable), if every layout is concrete and in its domain, every integer is concrete,
    /// every composite integer position holds its expression's value, and every condition
    /// holds.
    pub fn assignment(&self, value: &dyn Fn(&str) -> Option<Value>) -> Option<Assignment> {
        let mut a = Assignment::new();
        for p in &self.rule.params {
            let b = match (&p.sort, value(&p.name)?) {
                (Sort::Int, Value::Int(i)) => Bound::Int(i),
                (s, Value::Layout(l)) if s.is_layout() && in_domain(s, &l) => Bound::Layout(l),
                _ => return None,
            };
            a.insert(p.name.clone(), b);
        }
        for (name, e) in &self.holes {
            match value(name)? {
                Value::Int(v) if eval::int(e, &a).ok() == Some(v) => {}
                _ => return None,
            }
        }
        self.rule.conds.iter().all(|c| cond(c, &a)).then_some(a)
    }
}

impl egg::Condition<LayoutExpr, Fold> for RuleCondition {
    fn check(&self, egraph: &mut egg::EGraph<LayoutExpr, Fold>, _: Id, subst: &Subst) -> bool {
        let matched = self
            .assignment(&|name| {
                let v: Var = format!("?{name}").parse().ok()?;
                egraph[*subst.get(v)?].data.clone()
            })
            .is_some();
        // Only a match inside the domain with its conditions holding needs the proof.
        matched && proved_once(&self.rule, &self.proof)
    }
}

/// Why a rule cannot become a rewrite, if it cannot (checked before proving it).
pub fn unusable(r: &Rule) -> Option<String> {
    match rewrites_of(&ProvedRule::lazy(r.clone())) {
        Ok(rws) if rws.is_empty() => Some(format!(
            "{}: no direction binds every parameter from a pattern",
            r.name
        )),
        Ok(_) => None,
        Err(e) => Some(e),
    }
}

fn rewrites_of(pr: &ProvedRule) -> Result<Vec<Rewrite<LayoutExpr, Fold>>, String> {
    let r = &pr.rule;
    if let Some(p) = r.params.iter().find(|p| matches!(p.sort, Sort::Axis(_))) {
        return Err(format!(
            "{}: parameter {} is an axis (the e-graph has no axis sort)",
            r.name, p.name
        ));
    }
    let (ls, lh, lt) = patterns(&r.lhs).map_err(|e| format!("{}: {e}", r.name))?;
    let (rs, rh, rt) = patterns(&r.rhs).map_err(|e| format!("{}: {e}", r.name))?;
    let params: BTreeSet<String> = r.params.iter().map(|p| format!("?{}", p.name)).collect();
    let mut out = Vec::new();
    let dirs = [
        (r.name.clone(), &r.lhs, ls, lh, rt),
        (format!("{}<=", r.name), &r.rhs, rs, rh, lt),
    ];
    for (name, from, searcher, holes, applier) in dirs {
        let bound: BTreeSet<String> = searcher.vars().iter().map(|v| v.to_string()).collect();
        if matches!(from, Term::Var { .. }) || !params.is_subset(&bound) {
            continue;
        }
        let applier = ConditionalApplier {
            condition: RuleCondition {
                rule: r.clone(),
                holes,
                proof: pr.proof.clone(),
            },
            applier,
        };
        out.push(
            Rewrite::new(name.clone(), searcher, applier).map_err(|e| format!("{name}: {e}"))?,
        );
    }
    Ok(out)
}

/// The rewrites of the proved rules (name `rule` forward, `rule<=` backward), and the rules
/// left out with the reason.
pub fn rewrites(rules: &[ProvedRule]) -> (Vec<Rewrite<LayoutExpr, Fold>>, Vec<String>) {
    let mut out = Vec::new();
    let mut left = Vec::new();
    for pr in rules {
        match rewrites_of(pr) {
            Ok(rws) if rws.is_empty() => left.extend(unusable(&pr.rule)),
            Ok(rws) => out.extend(rws),
            Err(e) => left.push(e),
        }
    }
    (out, left)
}
