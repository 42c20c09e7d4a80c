//! Rewrites generated from PROVED rules only. A rule becomes a rewrite when its parameters are
//! all layouts and its sides are terms of the e-graph language; each direction whose source is
//! not a bare variable and binds every variable of its target is used. The condition of every
//! rewrite re-evaluates the rule's own side conditions at the match, after checking each
//! matched value lies in the bounded domain the rule was proved for.

use std::collections::BTreeSet;
use std::sync::Arc;

use certify::rules::eval::{cond, Assignment, Bound};
use certify::rules::prove::in_domain;
use certify::rules::syntax::{Rule, Term};
use certify::rules::{RuleReport, Verdict};
use egg::{ConditionalApplier, ENodeOrVar, Id, Pattern, PatternAst, RecExpr, Rewrite, Subst, Var};

use crate::fold::Fold;
use crate::language::{add_term, make_op, LayoutExpr, Leaf};

/// A rule the e-graph may use.
#[derive(Clone, Debug)]
pub struct ProvedRule {
    /// The rule.
    pub rule: Arc<Rule>,
}

/// Keeps the rules a report PROVED; the others are returned with the reason they are left out.
pub fn proved(rules: &[Rule], reports: &[RuleReport]) -> (Vec<ProvedRule>, Vec<String>) {
    let mut keep = Vec::new();
    let mut left = Vec::new();
    for (r, rep) in rules.iter().zip(reports) {
        if rep.verdict == Verdict::Proved && rep.name == r.name {
            keep.push(ProvedRule {
                rule: Arc::new(r.clone()),
            });
        } else {
            left.push(format!("{}: {}", r.name, rep.word()));
        }
    }
    (keep, left)
}

fn pattern(t: &Term) -> Result<Pattern<LayoutExpr>, String> {
    let mut ast: PatternAst<LayoutExpr> = RecExpr::default();
    add_term(
        t,
        &mut ast,
        &|s| {
            s.parse::<Leaf>()
                .map(|l| ENodeOrVar::ENode(LayoutExpr::Leaf(l)))
                .map_err(|_| format!("literal {s} has parameters or is not a leaf"))
        },
        &|name, ids| make_op(name, ids).map(ENodeOrVar::ENode),
        &|v| {
            format!("?{v}")
                .parse::<Var>()
                .map(ENodeOrVar::Var)
                .map_err(|e| e.to_string())
        },
    )?;
    Ok(Pattern::new(ast))
}

fn vars(t: &Term, out: &mut BTreeSet<String>) {
    match t {
        Term::Var { name, .. } => {
            out.insert(name.clone());
        }
        Term::Op { args, .. } => args.iter().for_each(|a| {
            if let certify::rules::syntax::Arg::Term(t) = a {
                vars(t, out)
            }
        }),
        Term::Lit { .. } => {}
    }
}

/// The side condition of a rewrite: domain membership and the rule's conditions at the match.
#[derive(Clone, Debug)]
pub struct RuleCondition {
    rule: Arc<Rule>,
}

impl RuleCondition {
    /// The condition of `rule`.
    pub fn new(rule: Arc<Rule>) -> Self {
        RuleCondition { rule }
    }

    /// The assignment of the matched values, if every one is concrete and in its domain and
    /// every condition holds.
    pub fn assignment(&self, value: &dyn Fn(&str) -> Option<layout::Layout>) -> Option<Assignment> {
        let mut a = Assignment::new();
        for p in &self.rule.params {
            let l = value(&p.name)?;
            if !in_domain(&p.sort, &l) {
                return None;
            }
            a.insert(p.name.clone(), Bound::Layout(l));
        }
        self.rule.conds.iter().all(|c| cond(c, &a)).then_some(a)
    }
}

impl egg::Condition<LayoutExpr, Fold> for RuleCondition {
    fn check(&self, egraph: &mut egg::EGraph<LayoutExpr, Fold>, _: Id, subst: &Subst) -> bool {
        self.assignment(&|name| {
            let v: Var = format!("?{name}").parse().ok()?;
            egraph[*subst.get(v)?].data.clone()
        })
        .is_some()
    }
}

/// The rewrites of the proved rules (name `rule` forward, `rule<=` backward), and the rules
/// left out with the reason.
pub fn rewrites(rules: &[ProvedRule]) -> (Vec<Rewrite<LayoutExpr, Fold>>, Vec<String>) {
    let mut out = Vec::new();
    let mut left = Vec::new();
    for pr in rules {
        let r = &pr.rule;
        if let Some(p) = r.params.iter().find(|p| !p.sort.is_layout()) {
            left.push(format!("{}: parameter {} is not a layout", r.name, p.name));
            continue;
        }
        let (lp, rp) = match (pattern(&r.lhs), pattern(&r.rhs)) {
            (Ok(l), Ok(r)) => (l, r),
            (Err(e), _) | (_, Err(e)) => {
                left.push(format!("{}: {e}", r.name));
                continue;
            }
        };
        let (mut lv, mut rv) = (BTreeSet::new(), BTreeSet::new());
        vars(&r.lhs, &mut lv);
        vars(&r.rhs, &mut rv);
        let dirs = [
            (
                r.name.clone(),
                &r.lhs,
                lp.clone(),
                rp.clone(),
                rv.is_subset(&lv),
            ),
            (format!("{}<=", r.name), &r.rhs, rp, lp, lv.is_subset(&rv)),
        ];
        for (name, from, searcher, applier, binds) in dirs {
            if matches!(from, Term::Var { .. }) || !binds {
                continue;
            }
            let applier = ConditionalApplier {
                condition: RuleCondition { rule: r.clone() },
                applier,
            };
            match Rewrite::new(name.clone(), searcher, applier) {
                Ok(rw) => out.push(rw),
                Err(e) => left.push(format!("{name}: {e}")),
            }
        }
    }
    (out, left)
}
