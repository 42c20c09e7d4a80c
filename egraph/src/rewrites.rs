//! Rewrites generated from PROVED rules only (proved up front, or on the first match that
//! needs the proof). A rule becomes a rewrite when its sides are terms of the e-graph
//! language; each direction whose source is not a bare variable and binds every
//! parameter is used (layout and integer parameters at pattern variables, integer and axis
//! parameters also inside the source's layout literals). The condition of every rewrite re-evaluates the
//! rule's own side conditions at the match, after checking each matched layout lies in the
//! bounded domain the rule was proved for and reading each integer parameter from its e-class's
//! folded value.
//!
//! In a source pattern an integer parameter is a variable (`complement(?L, ?M)`); a composite
//! integer expression (`[size(X)]`, `[e1*e2/g]`) becomes a fresh variable whose e-class's
//! value the condition compares with the expression evaluated at the match. In a target
//! pattern integer expressions are nodes, which folding evaluates.
//!
//! A layout literal with parameter holes (`(a,b):(d, a*d)`, `size(L):1`) in a source becomes a
//! fresh variable too, whose e-class's folded layout the condition matches against the literal
//! ([`certify::rules::literal::match_literal`]: the hole values found are confirmed by
//! instantiating the literal), consistently with the parameters bound elsewhere. Such a
//! direction (or one whose target holds such a literal) uses [`LiteralApplier`]: it
//! instantiates both sides at the match's full assignment into concrete terms and unions them,
//! recording the rule's name for the explanation.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::sync::{Arc, OnceLock};

use certify::rules::eval::{self, cond, Assignment, Bound};
use certify::rules::explain::instantiate;
use certify::rules::literal::{hole_params, is_parametric, match_literal, ranges, Ranges};
use certify::rules::ops::Value;
use certify::rules::prove::in_domain;
use certify::rules::syntax::{Arg, IntExpr, Piece, Rule, Sort, Term};
use certify::rules::{RuleReport, Verdict};
use egg::{
    Applier, ConditionalApplier, ENodeOrVar, Id, Pattern, PatternAst, RecExpr, Rewrite,
    SearchMatches, Searcher, Subst, Symbol, Var,
};

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

/// Whether certify proves `rule`, proving it on the first call (through certify's process-wide
/// cache by rule text, which the explanation checker reads too).
fn proved_once(rule: &Rule, proof: &OnceLock<bool>) -> bool {
    *proof.get_or_init(|| certify::rules::explain::proved_cached(rule).is_ok())
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

/// Builds pattern nodes; as a source (`holes`), composite integer expressions and literals with
/// parameter holes become fresh variables, recorded with their expression or pieces; as a
/// target, a literal with holes is an error (no pattern builds it).
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
                let name = format!("__int{}", h.ints.len());
                h.ints.push((name.clone(), composite.clone()));
                Some(var(&name))
            }
        }
    }
    fn lit_hole(&self, pieces: &[Piece]) -> Option<Result<Node, String>> {
        if !is_parametric(pieces) {
            return None;
        }
        let Some(holes) = self.holes.as_ref() else {
            return Some(Err("a target literal holds a parameter".into()));
        };
        let mut h = holes.borrow_mut();
        let name = format!("__lit{}", h.lits.len());
        h.lits.push((name.clone(), pieces.to_vec()));
        Some(var(&name))
    }
}

/// Fresh pattern variables of a source: composite integer expressions, and literals with
/// parameter holes (in the order matching reads them).
#[derive(Clone, Debug, Default)]
struct Holes {
    ints: Vec<(String, IntExpr)>,
    lits: Vec<(String, Vec<Piece>)>,
}

/// A rule side as a source pattern (with its checked holes) and as a target pattern (`None`
/// when a literal of it holds a parameter).
type Patterns = (Pattern<LayoutExpr>, Holes, Option<Pattern<LayoutExpr>>);

fn patterns(t: &Term) -> Result<Patterns, String> {
    let source = PatternBuilder {
        holes: Some(RefCell::new(Holes::default())),
    };
    let mut ast: PatternAst<LayoutExpr> = RecExpr::default();
    add_term(t, &mut ast, &source)?;
    let holes = source.holes.map(RefCell::into_inner).unwrap_or_default();
    let mut target: PatternAst<LayoutExpr> = RecExpr::default();
    let target = add_term(t, &mut target, &PatternBuilder { holes: None })
        .ok()
        .map(|_| Pattern::new(target));
    Ok((Pattern::new(ast), holes, target))
}

/// The side condition of a rewrite: domain membership, the values of composite integer
/// positions, and the rule's conditions at the match.
#[derive(Clone, Debug)]
pub struct RuleCondition {
    rule: Arc<Rule>,
    holes: Holes,
    ranges: Arc<Ranges>,
    proof: Arc<OnceLock<bool>>,
}

impl RuleCondition {
    /// The condition of `rule` (a source pattern without composite integer positions or
    /// literals with holes; the rule is proved on the first match that needs it).
    pub fn new(rule: Arc<Rule>) -> Self {
        RuleCondition {
            ranges: Arc::new(ranges(&rule)),
            rule,
            holes: Holes::default(),
            proof: Arc::new(OnceLock::new()),
        }
    }

    /// The assignment of the matched values (`value` gives the folded value of a pattern
    /// variable), if every layout is concrete and in its domain, every integer is concrete,
    /// every literal with holes matches its layout consistently with the other bindings,
    /// every parameter is bound, every composite integer position holds its expression's
    /// value, and every condition holds.
    pub fn assignment(&self, value: &dyn Fn(&str) -> Option<Value>) -> Option<Assignment> {
        let mut a = Assignment::new();
        for p in &self.rule.params {
            // A parameter without a variable is bound by a literal below.
            let Some(v) = value(&p.name) else { continue };
            let b = match (&p.sort, v) {
                (Sort::Int, Value::Int(i)) => Bound::Int(i),
                (s, Value::Layout(l)) if s.is_layout() && in_domain(s, &l) => Bound::Layout(l),
                _ => return None,
            };
            a.insert(p.name.clone(), b);
        }
        for (name, pieces) in &self.holes.lits {
            let Value::Layout(l) = value(name)? else {
                return None;
            };
            a = match_literal(pieces, &l, &a, &self.ranges)?;
        }
        if self.rule.params.iter().any(|p| !a.contains_key(&p.name)) {
            return None;
        }
        for (name, e) in &self.holes.ints {
            match value(name)? {
                Value::Int(v) if eval::int(e, &a).ok() == Some(v) => {}
                _ => return None,
            }
        }
        self.rule.conds.iter().all(|c| cond(c, &a)).then_some(a)
    }

    /// The assignment at a match (see [`RuleCondition::assignment`]).
    fn at(&self, egraph: &egg::EGraph<LayoutExpr, Fold>, subst: &Subst) -> Option<Assignment> {
        self.assignment(&|name| {
            let v: Var = format!("?{name}").parse().ok()?;
            egraph[*subst.get(v)?].data.clone()
        })
    }
}

impl egg::Condition<LayoutExpr, Fold> for RuleCondition {
    fn check(&self, egraph: &mut egg::EGraph<LayoutExpr, Fold>, _: Id, subst: &Subst) -> bool {
        let matched = self.at(egraph, subst).is_some();
        // Only a match inside the domain with its conditions holding needs the proof.
        matched && proved_once(&self.rule, &self.proof)
    }
}

/// The applier of a direction with a literal with parameter holes: at each match whose
/// [`RuleCondition`] holds (the rule proved), the rule's two sides instantiated at the match's
/// assignment, as concrete terms, are added and unioned under the rule's name.
#[derive(Clone, Debug)]
pub struct LiteralApplier {
    condition: RuleCondition,
    from: Term,
    to: Term,
}

/// A rule side instantiated at `a` as a concrete pattern (integer arguments evaluated).
fn concrete(t: &Term, a: &Assignment) -> Option<PatternAst<LayoutExpr>> {
    let t = evaluated(&instantiate(t, a).ok()?)?;
    let mut out: PatternAst<LayoutExpr> = RecExpr::default();
    add_term(&t, &mut out, &PatternBuilder { holes: None }).ok()?;
    Some(out)
}

/// A concrete term with its integer, shape and region arguments replaced by their values.
fn evaluated(t: &Term) -> Option<Term> {
    let Term::Op { name, args, span } = t else {
        return Some(t.clone());
    };
    let num = |e: &IntExpr| eval::int(e, &Assignment::new()).ok().map(IntExpr::Num);
    let args = args
        .iter()
        .map(|x| {
            Some(match x {
                Arg::Term(t) => Arg::Term(evaluated(t)?),
                Arg::Int(e) => Arg::Int(num(e)?),
                Arg::Shape(es) => Arg::Shape(es.iter().map(num).collect::<Option<_>>()?),
                Arg::Region(rs) => Arg::Region(
                    rs.iter()
                        .map(|(b, e)| Some((num(b)?, num(e)?)))
                        .collect::<Option<_>>()?,
                ),
            })
        })
        .collect::<Option<_>>()?;
    Some(Term::Op {
        name: name.clone(),
        args,
        span: span.clone(),
    })
}

impl Applier<LayoutExpr, Fold> for LiteralApplier {
    fn apply_one(
        &self,
        egraph: &mut egg::EGraph<LayoutExpr, Fold>,
        _eclass: Id,
        subst: &Subst,
        _searcher_ast: Option<&PatternAst<LayoutExpr>>,
        rule_name: Symbol,
    ) -> Vec<Id> {
        let Some(a) = self.condition.at(egraph, subst) else {
            return Vec::new();
        };
        if !proved_once(&self.condition.rule, &self.condition.proof) {
            return Vec::new();
        }
        let (Some(from), Some(to)) = (concrete(&self.from, &a), concrete(&self.to, &a)) else {
            return Vec::new();
        };
        match egraph.union_instantiations(&from, &to, &Subst::default(), rule_name) {
            (id, true) => vec![id],
            (_, false) => Vec::new(),
        }
    }
}

/// The searcher of a direction whose source is a bare literal with parameter holes
/// (`S[(e1,e2):(e2*s, s)]`): every e-class whose folded layout the literal matches, with the
/// rule's condition holding there.
#[derive(Clone, Debug)]
pub struct LiteralSearcher {
    var: Var,
    condition: RuleCondition,
}

impl Searcher<LayoutExpr, Fold> for LiteralSearcher {
    fn search_eclass_with_limit(
        &self,
        egraph: &egg::EGraph<LayoutExpr, Fold>,
        eclass: Id,
        limit: usize,
    ) -> Option<SearchMatches<'_, LayoutExpr>> {
        if limit == 0 || !matches!(egraph[eclass].data, Some(Value::Layout(_))) {
            return None;
        }
        let mut subst = Subst::default();
        subst.insert(self.var, eclass);
        self.condition.at(egraph, &subst)?;
        Some(SearchMatches {
            eclass,
            substs: vec![subst],
            ast: None,
        })
    }

    fn vars(&self) -> Vec<Var> {
        vec![self.var]
    }
}

/// Why a rule cannot become a rewrite, if it cannot (checked before proving it).
pub fn unusable(r: &Rule) -> Option<String> {
    match rewrites_of(&ProvedRule::lazy(r.clone())) {
        Ok(rws) if rws.is_empty() => Some(
            match r.params.iter().find(|p| matches!(p.sort, Sort::Axis(_))) {
                Some(p) => format!(
                    "{}: no direction binds every parameter from a pattern (axis {} only \
                     in a target)",
                    r.name, p.name
                ),
                None => format!(
                    "{}: no direction binds every parameter from a pattern (one used only in a \
                     composite integer such as n*m is not bound, and a bare literal source \
                     rewrites only to a literal)",
                    r.name
                ),
            },
        ),
        Ok(_) => None,
        Err(e) => Some(e),
    }
}

/// The parameters a source binds: its pattern variables, and the integer and axis
/// parameters in the holes of its literals.
fn binds(searcher: &Pattern<LayoutExpr>, holes: &Holes, r: &Rule) -> BTreeSet<String> {
    let mut out: BTreeSet<String> = searcher
        .vars()
        .iter()
        .map(|v| v.to_string().trim_start_matches('?').to_string())
        .collect();
    for (_, pieces) in &holes.lits {
        for n in hole_params(pieces) {
            let sort = r.params.iter().find(|p| p.name == n).map(|p| &p.sort);
            if matches!(sort, Some(Sort::Int | Sort::Axis(_))) {
                out.insert(n);
            }
        }
    }
    out
}

fn rewrites_of(pr: &ProvedRule) -> Result<Vec<Rewrite<LayoutExpr, Fold>>, String> {
    let r = &pr.rule;
    let (ls, lh, lt) = patterns(&r.lhs).map_err(|e| format!("{}: {e}", r.name))?;
    let (rs, rh, rt) = patterns(&r.rhs).map_err(|e| format!("{}: {e}", r.name))?;
    let params: BTreeSet<String> = r.params.iter().map(|p| p.name.clone()).collect();
    let ranges = Arc::new(ranges(r));
    let mut out = Vec::new();
    let dirs = [
        (r.name.clone(), &r.lhs, &r.rhs, ls, lh, rt),
        (format!("{}<=", r.name), &r.rhs, &r.lhs, rs, rh, lt),
    ];
    for (name, from, to, searcher, holes, target) in dirs {
        if matches!(from, Term::Var { .. }) || !params.is_subset(&binds(&searcher, &holes, r)) {
            continue;
        }
        let condition = RuleCondition {
            rule: r.clone(),
            holes,
            ranges: ranges.clone(),
            proof: pr.proof.clone(),
        };
        let literal = LiteralApplier {
            condition: condition.clone(),
            from: from.clone(),
            to: to.clone(),
        };
        let bare = searcher.ast.as_ref().len() == 1;
        // A bare literal source rewrites only to a literal: expanding every matching leaf into
        // an operator term (`m:n` into `complement(n:1, n*m)`) would grow every e-graph and
        // never make a term cheaper.
        if bare && !matches!(to, Term::Lit { .. }) {
            continue;
        }
        let rw = match target {
            // A bare literal source: searched class by class (a pattern variable would match
            // every class without its value).
            _ if bare => match searcher.vars().first() {
                Some(&var) => {
                    Rewrite::new(name.clone(), LiteralSearcher { var, condition }, literal)
                }
                None => continue,
            },
            Some(applier) if condition.holes.lits.is_empty() => Rewrite::new(
                name.clone(),
                searcher,
                ConditionalApplier { condition, applier },
            ),
            _ => Rewrite::new(name.clone(), searcher, literal),
        };
        out.push(rw.map_err(|e| format!("{name}: {e}"))?);
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
