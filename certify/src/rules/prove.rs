//! Bounded proof of one rule: every parameter assignment within the rule's bounds that meets its
//! conditions is an INSTANCE, and the rule holds at an instance when both sides are undefined,
//! or both are defined and related as claimed (`==`: the certify deciders say equivalent;
//! `===`: identical printed values). One side defined and the other not is a refutation.
//!
//! Methods: `exhaustive` enumerates the parameter grid when it has at most
//! [`Options::max_instances`] points (in parallel; each instance decided by certify's normal
//! form and exhaustive deciders); otherwise, for rules in the strided fragment (both sides
//! literals of strided Axe/CuTe layouts), `z3` proves the rule over symbolic parameters
//! (see [`super::symbolic`]) and corner instances are re-checked concretely.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use rayon::prelude::*;
use sha2::{Digest, Sha256};

use layout::axe::{AxeLayout, Iter};
use layout::axis::format_point;
use layout::{CuteLayout, Layout, LayoutError};

use super::eval::{self, show_assignment, Assignment, Bound};
use super::symbolic;
use super::syntax::{Cond, IntExpr, Relation, Rule, Sort};
use crate::claim::{equivalent, semantic_points, Policy};

/// Limits of a proof run.
#[derive(Clone, Debug)]
pub struct Options {
    /// Largest parameter grid enumerated exhaustively.
    pub max_instances: u64,
    /// Largest domain of one instance's layouts (exhaustive decider).
    pub exhaustive_limit: i64,
    /// z3 resource limit per query.
    pub rlimit: u32,
    /// Try z3 over symbolic parameters when the grid is too large.
    pub use_smt: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            max_instances: 200_000,
            exhaustive_limit: 1 << 16,
            rlimit: 50_000_000,
            use_smt: true,
        }
    }
}

/// A refuted instance, re-evaluated by the semantics.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refutation {
    /// The parameters, `name=value, ...`.
    pub params: String,
    /// The left side's value (or `undefined: why`).
    pub lhs_value: String,
    /// The right side's value (or `undefined: why`).
    pub rhs_value: String,
    /// The logical coordinate where the maps differ, when both are defined.
    pub coordinate: Option<Vec<i64>>,
    /// The left side's points there (or what differs).
    pub lhs: String,
    /// The right side's points there.
    pub rhs: String,
}

impl Refutation {
    /// One line: `params ..., coordinate ..., lhs -> .., rhs -> ..`.
    pub fn line(&self) -> String {
        let at = match &self.coordinate {
            Some(c) => format!(", coordinate {c:?}"),
            None => String::new(),
        };
        let params = if self.params.is_empty() {
            "(none)"
        } else {
            &self.params
        };
        format!(
            "params {params}{at}, lhs {} -> {}, rhs {} -> {}",
            one_line(&self.lhs_value),
            self.lhs,
            one_line(&self.rhs_value),
            self.rhs
        )
    }
}

/// The decision of one instance.
#[derive(Clone, Debug)]
pub enum Instance {
    /// The rule holds here; `defined` says whether the sides were defined.
    Holds {
        /// Both sides defined (false: both undefined).
        defined: bool,
    },
    /// The rule fails here.
    Differs(Box<Refutation>),
    /// No decider could answer.
    Unknown(String),
}

/// Decides the rule at one assignment (conditions assumed to hold).
pub fn check_instance(rule: &Rule, order: &[String], a: &Assignment, opts: &Options) -> Instance {
    let params = show_assignment(order, a);
    let undefined = |e: &LayoutError| format!("undefined ({e})");
    let (l, r) = (eval::term(&rule.lhs, a), eval::term(&rule.rhs, a));
    let (x, y) = match (l, r) {
        (Err(_), Err(_)) => return Instance::Holds { defined: false },
        (Ok(x), Err(e)) => {
            return differs(
                params,
                x.print(),
                undefined(&e),
                None,
                "defined",
                "undefined",
            )
        }
        (Err(e), Ok(y)) => {
            return differs(
                params,
                undefined(&e),
                y.print(),
                None,
                "undefined",
                "defined",
            )
        }
        (Ok(x), Ok(y)) => (x, y),
    };
    match rule.relation {
        Relation::Identical if x == y => Instance::Holds { defined: true },
        Relation::Identical => differs(params, x.print(), y.print(), None, "this value", "another"),
        Relation::SameMap => same_map(params, &x, &y, opts),
    }
}

fn differs(
    params: String,
    lhs_value: String,
    rhs_value: String,
    coordinate: Option<Vec<i64>>,
    lhs: &str,
    rhs: &str,
) -> Instance {
    Instance::Differs(Box::new(Refutation {
        params,
        lhs_value,
        rhs_value,
        coordinate,
        lhs: lhs.into(),
        rhs: rhs.into(),
    }))
}

/// The logical shape two layouts are compared over: the left side's logical shape (Axe: the
/// flat index; CuTe: its top-level modes; TV and linear: their fixed domain), when the sizes
/// agree.
pub fn comparison_shape(x: &Layout, y: &Layout) -> Option<Vec<i64>> {
    let fixed = |l: &Layout| matches!(l, Layout::Tv(_) | Layout::Linear(_));
    if fixed(y) && !fixed(x) {
        return None;
    }
    (x.domain_size() == y.domain_size()).then(|| crate::forward::default_logical_shape(x))
}

fn same_map(params: String, x: &Layout, y: &Layout, opts: &Options) -> Instance {
    let Some(shape) = comparison_shape(x, y) else {
        let what = |l: &Layout| format!("domain {:?}", l.default_shape());
        return differs(params, x.print(), y.print(), None, &what(x), &what(y));
    };
    let policy = Policy {
        exhaustive_limit: opts.exhaustive_limit,
        rlimit: opts.rlimit,
        use_smt: false,
    };
    match equivalent(x, y, Some(&shape), &policy) {
        Err(e) => Instance::Unknown(format!("{params}: {e}")),
        Ok(r) if r.verdict() == "equivalent" => Instance::Holds { defined: true },
        Ok(r) => match r.counterexample {
            Some(c) => {
                let pts = |l: &Layout| match semantic_points(l, &shape, &c.coord) {
                    Ok(p) => show_points(&p),
                    Err(e) => format!("undefined ({e})"),
                };
                differs(
                    params,
                    x.print(),
                    y.print(),
                    Some(c.coord.clone()),
                    &pts(x),
                    &pts(y),
                )
            }
            None => Instance::Unknown(format!(
                "{params}: no decider answered for domain {}",
                x.domain_size()
            )),
        },
    }
}

/// A set of points as `{m:5}` or `[{..}, {..}]`.
pub fn show_points(p: &BTreeSet<layout::Point>) -> String {
    let v: Vec<String> = p.iter().map(format_point).collect();
    if v.len() == 1 {
        v[0].clone()
    } else {
        format!("[{}]", v.join(", "))
    }
}

/// A rule's verdict.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Holds at every instance.
    Proved,
    /// Fails at this instance.
    Refuted(Box<Refutation>),
    /// Undecided, and why.
    Unknown(String),
}

/// The outcome of proving one rule.
#[derive(Clone, Debug)]
pub struct RuleReport {
    /// The rule's name.
    pub name: String,
    /// The rule's source text.
    pub text: String,
    /// The verdict.
    pub verdict: Verdict,
    /// `exhaustive` or `z3` (absent when no method applied).
    pub method: Option<String>,
    /// Instances covered (grid points meeting the conditions; for z3, the grid's size).
    pub instances: u128,
    /// Instances where both sides were defined (exhaustive only).
    pub defined: u64,
    /// SHA-256 over the decided instances (exhaustive), or over the SMT queries (z3).
    pub digest: String,
    /// The SMT-LIB2 queries z3 answered.
    pub smt_queries: Vec<String>,
    /// Wall time in microseconds.
    pub micros: u128,
}

impl RuleReport {
    /// `PROVED`, `REFUTED` or `UNKNOWN`.
    pub fn word(&self) -> &'static str {
        match self.verdict {
            Verdict::Proved => "PROVED",
            Verdict::Refuted(_) => "REFUTED",
            Verdict::Unknown(_) => "UNKNOWN",
        }
    }

    /// The one-line summary `laycert prove` prints.
    pub fn line(&self) -> String {
        let secs = self.micros as f64 / 1e6;
        match &self.verdict {
            Verdict::Proved => format!(
                "PROVED {} ({}, {} instances, {secs:.3}s)",
                self.name,
                self.method.as_deref().unwrap_or("?"),
                self.instances
            ),
            Verdict::Refuted(r) => format!("REFUTED {}: {}", self.name, r.line()),
            Verdict::Unknown(why) => format!("UNKNOWN {}: {why}", self.name),
        }
    }
}

/// The finite domain of each parameter, in declaration order.
pub fn domains(rule: &Rule) -> Result<Vec<(String, Vec<Bound>)>, String> {
    let mut known = BTreeMap::new();
    // Bounds may use other parameters: settle them in rounds.
    for _ in 0..rule.params.len() {
        for p in rule.params.iter().filter(|p| p.sort == Sort::Int) {
            if let Ok(b) = bounds_in(&p.name, &rule.conds, &known) {
                known.insert(p.name.clone(), b);
            }
        }
    }
    rule.params
        .iter()
        .map(|p| {
            let vals = match &p.sort {
                Sort::Int => {
                    let (lo, hi) = bounds_in(&p.name, &rule.conds, &known)?;
                    let n = (hi as i128) - (lo as i128) + 1;
                    if n > 1 << 24 {
                        return Ok((p.name.clone(), Vec::new()));
                    }
                    (lo..=hi).map(Bound::Int).collect()
                }
                Sort::Axis(axes) => axes.iter().cloned().map(Bound::Axis).collect(),
                Sort::Cute {
                    rank,
                    extent,
                    stride,
                } => flat_grid(*rank, *extent, 0, *stride)
                    .into_iter()
                    .filter_map(|(s, d)| CuteLayout::from_flat(&s, &d).ok())
                    .map(|c| Bound::Layout(Layout::Cute(c)))
                    .collect(),
                Sort::Axe {
                    rank,
                    extent,
                    stride,
                } => flat_grid(*rank, *extent, -*stride, *stride)
                    .into_iter()
                    .filter_map(|(s, d)| {
                        let iters = s.iter().zip(&d).map(|(&e, &v)| Iter::on_m(e, v)).collect();
                        AxeLayout::from_shard(iters).ok()
                    })
                    .map(|x| Bound::Layout(Layout::Axe(x)))
                    .collect(),
            };
            Ok((p.name.clone(), vals))
        })
        .collect()
}

/// Whether a layout lies in a layout sort's bounded domain (the values the rule was proved
/// for): rewrites may only apply a rule there.
pub fn in_domain(sort: &Sort, l: &Layout) -> bool {
    match (sort, l) {
        (
            Sort::Cute {
                rank,
                extent,
                stride,
            },
            Layout::Cute(c),
        ) => {
            let modes = c.flat_modes();
            let flat = CuteLayout::from_flat(
                &modes.iter().map(|m| m.0).collect::<Vec<_>>(),
                &modes.iter().map(|m| m.1).collect::<Vec<_>>(),
            );
            flat.as_ref() == Ok(c)
                && (1..=*rank as usize).contains(&modes.len())
                && modes
                    .iter()
                    .all(|&(e, d)| (1..=*extent).contains(&e) && (0..=*stride).contains(&d))
        }
        (
            Sort::Axe {
                rank,
                extent,
                stride,
            },
            Layout::Axe(x),
        ) => {
            x.replica().is_empty()
                && x.offset().values().all(|&v| v == 0)
                && (1..=*rank as usize).contains(&x.shard().len())
                && x.shard().iter().all(|i| {
                    i.axis.as_str() == "m"
                        && (1..=*extent).contains(&i.extent)
                        && (-*stride..=*stride).contains(&i.stride)
                })
        }
        _ => false,
    }
}

/// Every flat (shape, stride) of rank `1..=rank`, extents `1..=extent`, strides `lo..=hi`.
fn flat_grid(rank: u32, extent: i64, lo: i64, hi: i64) -> Vec<(Vec<i64>, Vec<i64>)> {
    let mut out = Vec::new();
    for r in 1..=rank as usize {
        let mut cur: Vec<(Vec<i64>, Vec<i64>)> = vec![(vec![], vec![])];
        for _ in 0..r {
            let mut next = Vec::new();
            for (s, d) in &cur {
                for e in 1..=extent {
                    for v in lo..=hi {
                        let (mut s, mut d) = (s.clone(), d.clone());
                        s.push(e);
                        d.push(v);
                        next.push((s, d));
                    }
                }
            }
            cur = next;
        }
        out.extend(cur);
    }
    out
}

/// `lo <= p <= hi` from the rule's top-level comparison conditions (constants on the other
/// side).
pub fn bounds(p: &str, conds: &[Cond]) -> Result<(i64, i64), String> {
    bounds_in(p, conds, &BTreeMap::new())
}

/// Like [`bounds`], where the other side may use parameters whose ranges `known` holds (its
/// extreme value over those ranges is the bound).
pub fn bounds_in(
    p: &str,
    conds: &[Cond],
    known: &BTreeMap<String, (i64, i64)>,
) -> Result<(i64, i64), String> {
    use super::syntax::CmpOp::*;
    let (mut lo, mut hi): (Option<i64>, Option<i64>) = (None, None);
    for c in conds {
        let Cond::Cmp(es, ops) = c else { continue };
        for (i, op) in ops.iter().enumerate() {
            let (l, r) = (&es[i], &es[i + 1]);
            let is_p = |e: &IntExpr| matches!(e, IntExpr::Param(n) if n == p);
            let (other, op, param_left) = if is_p(l) {
                (r, *op, true)
            } else if is_p(r) {
                (l, *op, false)
            } else {
                continue;
            };
            let Some((klo, khi)) = eval::interval(other, known) else {
                continue;
            };
            // Normalize to "p OP k".
            let op = if param_left {
                op
            } else {
                match op {
                    Lt => Gt,
                    Le => Ge,
                    Gt => Lt,
                    Ge => Le,
                    o => o,
                }
            };
            let tighten_lo = |v: i64, lo: &mut Option<i64>| *lo = Some(lo.map_or(v, |x| x.max(v)));
            let tighten_hi = |v: i64, hi: &mut Option<i64>| *hi = Some(hi.map_or(v, |x| x.min(v)));
            match op {
                Ge => tighten_lo(klo, &mut lo),
                Gt => tighten_lo(klo.saturating_add(1), &mut lo),
                Le => tighten_hi(khi, &mut hi),
                Lt => tighten_hi(khi.saturating_sub(1), &mut hi),
                Eq => {
                    tighten_lo(klo, &mut lo);
                    tighten_hi(khi, &mut hi);
                }
                Ne => {}
            }
        }
    }
    match (lo, hi) {
        (Some(l), Some(h)) if l <= h => Ok((l, h)),
        (Some(l), Some(h)) => Err(format!("parameter {p} has an empty range {l}..={h}")),
        _ => Err(format!(
            "parameter {p} has no bounds: add `lo <= {p} <= hi` to the where clause"
        )),
    }
}

/// Proves one rule (see the module doc).
pub fn prove_rule(rule: &Rule, opts: &Options) -> RuleReport {
    let t = Instant::now();
    let mut report = RuleReport {
        name: rule.name.clone(),
        text: rule.text.clone(),
        verdict: Verdict::Unknown(String::new()),
        method: None,
        instances: 0,
        defined: 0,
        digest: String::new(),
        smt_queries: Vec::new(),
        micros: 0,
    };
    let order: Vec<String> = rule.params.iter().map(|p| p.name.clone()).collect();
    match domains(rule) {
        Err(why) => report.verdict = Verdict::Unknown(why),
        Ok(doms) => {
            let grid = doms.iter().fold(1u128, |acc, (_, d)| {
                acc.saturating_mul(d.len().max(1) as u128)
            });
            let empty_domain = doms.iter().any(|(_, d)| d.is_empty());
            if !empty_domain && grid <= opts.max_instances as u128 {
                exhaustive(rule, &order, &doms, grid as u64, opts, &mut report);
            } else if opts.use_smt {
                symbolic::prove(rule, &order, grid, opts, &mut report);
            } else {
                report.verdict = Verdict::Unknown(format!(
                    "the parameter grid has {grid} points (limit {}) and z3 is off",
                    opts.max_instances
                ));
            }
        }
    }
    report.micros = t.elapsed().as_micros();
    report
}

/// The assignment at grid index `i` (first parameter slowest).
pub fn assignment_at(doms: &[(String, Vec<Bound>)], mut i: u64) -> Assignment {
    let mut a = Assignment::new();
    for (name, vals) in doms.iter().rev() {
        let n = vals.len() as u64;
        a.insert(name.clone(), vals[(i % n) as usize].clone());
        i /= n;
    }
    a
}

fn exhaustive(
    rule: &Rule,
    order: &[String],
    doms: &[(String, Vec<Bound>)],
    grid: u64,
    opts: &Options,
    report: &mut RuleReport,
) {
    let results: Vec<(u64, Instance)> = (0..grid)
        .into_par_iter()
        .filter_map(|i| {
            let a = assignment_at(doms, i);
            if !rule.conds.iter().all(|c| eval::cond(c, &a)) {
                return None;
            }
            Some((i, check_instance(rule, order, &a, opts)))
        })
        .collect();
    report.method = Some("exhaustive".into());
    report.instances = results.len() as u128;
    let mut h = Sha256::new();
    let mut unknown = None;
    for (i, r) in &results {
        match r {
            Instance::Differs(refutation) => {
                report.verdict = Verdict::Refuted(refutation.clone());
                return;
            }
            Instance::Unknown(why) if unknown.is_none() => unknown = Some(why.clone()),
            Instance::Holds { defined } => {
                report.defined += u64::from(*defined);
                h.update(format!("{i}:{defined}\n"));
            }
            Instance::Unknown(_) => {}
        }
    }
    report.digest = format!("{:x}", h.finalize());
    report.verdict = if let Some(why) = unknown {
        Verdict::Unknown(format!("an instance is undecided: {why}"))
    } else if results.is_empty() {
        Verdict::Unknown("no parameter assignment meets the conditions (vacuous)".into())
    } else if report.defined == 0 {
        Verdict::Unknown(format!(
            "both sides are undefined at all {} instances (vacuous)",
            results.len()
        ))
    } else {
        Verdict::Proved
    };
}

/// A value's text on one line (linear layouts print over several lines).
fn one_line(text: &str) -> String {
    text.split('\n')
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}
