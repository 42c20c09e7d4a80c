//! Bounded proof of one rule: every parameter assignment within the rule's bounds that meets its
//! conditions is an INSTANCE, and the rule holds at an instance when both sides are undefined,
//! or both are defined and related as claimed (`==`: the certify deciders say equivalent over
//! the claim domain, [`claim_domain`]; `===`: identical printed values). One side defined and
//! the other not is a refutation.
//!
//! Methods: `exhaustive` enumerates the parameter grid when it has at most
//! [`Options::max_instances`] points (in parallel batches; each instance decided by certify's
//! normal form and exhaustive deciders; a deterministic work budget bounds the whole run);
//! otherwise, for rules in the strided fragment (both sides literals of strided Axe/CuTe
//! layouts), `z3` proves the rule over symbolic parameters (see [`super::symbolic`]) and the
//! proof stands only after the concrete re-check of [`super::crosscheck`] decided at least one
//! instance and refuted none.

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

/// The largest `max_instances` a run accepts (`laycert prove --max-instances` above it is bad
/// input): 2^24 parameter assignments.
pub const MAX_INSTANCES_LIMIT: u64 = 1 << 24;

/// Work units one instance costs besides the logical indices it enumerates (parsing, the
/// forward forms, the normal form).
pub const INSTANCE_COST: u64 = 256;

/// Limits of a proof run.
#[derive(Clone, Debug)]
pub struct Options {
    /// Largest parameter grid enumerated exhaustively (at most [`MAX_INSTANCES_LIMIT`]; more
    /// is clamped).
    pub max_instances: u64,
    /// Largest domain of one instance's layouts (exhaustive decider).
    pub exhaustive_limit: i64,
    /// z3 resource limit per query.
    pub rlimit: u32,
    /// Try z3 over symbolic parameters when the grid is too large.
    pub use_smt: bool,
    /// Re-check every z3 proof concretely at boundary and random instances (a proof whose
    /// re-check decided nothing is UNKNOWN). Off only where a test compares z3's own answer
    /// with the exhaustive path.
    pub cross_check: bool,
    /// Deterministic work budget of one rule, in work units (an instance costs
    /// [`INSTANCE_COST`] plus the logical indices it enumerates, a condition test 1): when it is
    /// spent the rule is UNKNOWN, never a hang.
    pub work_budget: u64,
    /// The claim's logical domain when the claim names one (`validate`'s `"shape"`); absent:
    /// the one [`crate::domain::resolve_pair`] gives for each instance's two values.
    pub domain: Option<Vec<i64>>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            max_instances: 200_000,
            exhaustive_limit: 1 << 16,
            rlimit: 50_000_000,
            use_smt: true,
            cross_check: true,
            work_budget: 1 << 33,
            domain: None,
        }
    }
}

impl Options {
    /// The grid limit actually used: `max_instances`, at most [`MAX_INSTANCES_LIMIT`].
    pub fn grid_limit(&self) -> u64 {
        self.max_instances.min(MAX_INSTANCES_LIMIT)
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
    decide_instance(rule, order, a, opts).0
}

/// [`check_instance`] and the work it cost: [`INSTANCE_COST`] plus the logical indices the
/// deciders may enumerate (the domain size, at most the exhaustive limit).
pub fn decide_instance(
    rule: &Rule,
    order: &[String],
    a: &Assignment,
    opts: &Options,
) -> (Instance, u64) {
    let params = show_assignment(order, a);
    let undefined = |e: &LayoutError| format!("undefined ({e})");
    let (l, r) = (eval::term(&rule.lhs, a), eval::term(&rule.rhs, a));
    let (x, y) = match (l, r) {
        (Err(_), Err(_)) => return (Instance::Holds { defined: false }, INSTANCE_COST),
        (Ok(x), Err(e)) => {
            let d = differs(
                params,
                x.print(),
                undefined(&e),
                None,
                "defined",
                "undefined",
            );
            return (d, INSTANCE_COST);
        }
        (Err(e), Ok(y)) => {
            let d = differs(
                params,
                undefined(&e),
                y.print(),
                None,
                "undefined",
                "defined",
            );
            return (d, INSTANCE_COST);
        }
        (Ok(x), Ok(y)) => (x, y),
    };
    let cost = INSTANCE_COST
        + x.domain_size().clamp(0, opts.exhaustive_limit.max(0)) as u64
        + y.domain_size().clamp(0, opts.exhaustive_limit.max(0)) as u64;
    let decision = match rule.relation {
        Relation::Identical if x == y => Instance::Holds { defined: true },
        Relation::Identical => differs(params, x.print(), y.print(), None, "this value", "another"),
        Relation::SameMap => same_map(params, &x, &y, opts),
    };
    (decision, cost)
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

pub use crate::domain::NoDomain;

/// The domain two layouts are compared over when the claim names none: the one definition of
/// spec certify.md 1b, [`crate::domain::resolve_pair`].
pub fn claim_domain(x: &Layout, y: &Layout) -> Result<Vec<i64>, NoDomain> {
    crate::domain::resolve_pair(x, y, None).map(|d| d.shape)
}

/// The shape two layouts are compared over ([`claim_domain`]), when they have one.
pub fn comparison_shape(x: &Layout, y: &Layout) -> Option<Vec<i64>> {
    claim_domain(x, y).ok()
}

fn same_map(params: String, x: &Layout, y: &Layout, opts: &Options) -> Instance {
    let domain = crate::domain::resolve_pair(x, y, opts.domain.as_deref()).map(|d| d.shape);
    let shape = match domain {
        Ok(s) => s,
        Err(NoDomain::NotComparable(why)) => {
            return differs(
                params,
                x.print(),
                y.print(),
                None,
                &why,
                "(no common domain)",
            )
        }
        Err(NoDomain::Ambiguous(why)) => return Instance::Unknown(format!("{params}: {why}")),
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

/// A refutation at `coord` of the claim domain of `x` and `y`, when the semantics evaluate
/// both sides there and they differ (a z3 model's coordinate, re-evaluated).
pub fn refutation_at(
    params: String,
    x: &Layout,
    y: &Layout,
    coord: &[i64],
) -> Option<Box<Refutation>> {
    let shape = claim_domain(x, y).ok()?;
    let (px, py) = (
        semantic_points(x, &shape, coord).ok()?,
        semantic_points(y, &shape, coord).ok()?,
    );
    (px != py).then(|| {
        Box::new(Refutation {
            params,
            lhs_value: x.print(),
            rhs_value: y.print(),
            coordinate: Some(coord.to_vec()),
            lhs: show_points(&px),
            rhs: show_points(&py),
        })
    })
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
    /// `exhaustive` or `z3 ...` (absent when no method applied).
    pub method: Option<String>,
    /// Parameter assignments in the box the bounds span (every parameter over its range).
    pub grid: u128,
    /// Assignments of the box that meet the conditions (the instances), when counted: the
    /// exhaustive path counts them; the z3 path knows them only when the conditions are the
    /// box itself.
    pub instances: Option<u128>,
    /// Instances where both sides were defined (exhaustive only).
    pub defined: u64,
    /// Instances decided concretely after a z3 proof (boundaries, then a seeded random sample).
    pub rechecked: u64,
    /// Of [`RuleReport::rechecked`], the boundary instances.
    pub rechecked_boundary: u64,
    /// Work units spent.
    pub work: u64,
    /// SHA-256 over the decided instances (exhaustive), or over the SMT queries and the
    /// re-checked instances (z3).
    pub digest: String,
    /// The SMT-LIB2 queries z3 answered.
    pub smt_queries: Vec<String>,
    /// Wall time in microseconds.
    pub micros: u128,
    /// The logical domain the claim named ([`Options::domain`]), when it named one.
    pub domain: Option<Vec<i64>>,
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

    /// The counts, as the summary line says them: `224 instances of 288 in the box` or
    /// `box of 1000000 assignments, instances not counted, 41 re-checked concretely (9
    /// boundary, 32 random)`.
    pub fn counts(&self) -> String {
        let instances = match self.instances {
            Some(n) => format!("{n} instances of {} in the box", self.grid),
            None => format!(
                "box of {} assignments, instances meeting the conditions not counted",
                self.grid
            ),
        };
        if self.method.as_deref().is_some_and(|m| m.starts_with("z3")) {
            format!(
                "{instances}, {} re-checked concretely ({} boundary, {} random)",
                self.rechecked,
                self.rechecked_boundary,
                self.rechecked - self.rechecked_boundary
            )
        } else {
            instances
        }
    }

    /// The one-line summary `laycert prove` prints.
    pub fn line(&self) -> String {
        let secs = self.micros as f64 / 1e6;
        match &self.verdict {
            Verdict::Proved => format!(
                "PROVED {} ({}, {}, {secs:.3}s)",
                self.name,
                self.method.as_deref().unwrap_or("?"),
                self.counts()
            ),
            Verdict::Refuted(r) => format!("REFUTED {}: {}", self.name, r.line()),
            Verdict::Unknown(why) => format!("UNKNOWN {}: {why}", self.name),
        }
    }
}

/// The values one parameter ranges over.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Values {
    /// The integers `lo..=hi`.
    Ints(i64, i64),
    /// These values.
    List(Vec<Bound>),
}

impl Values {
    /// How many values.
    pub fn len(&self) -> u128 {
        match self {
            Values::Ints(lo, hi) => (*hi as i128 - *lo as i128 + 1).max(0) as u128,
            Values::List(v) => v.len() as u128,
        }
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The `i`-th value (`i < len`).
    pub fn get(&self, i: u128) -> Bound {
        match self {
            Values::Ints(lo, _) => Bound::Int((*lo as i128 + i as i128) as i64),
            Values::List(v) => v[i as usize].clone(),
        }
    }
}

/// The integer parameters' ranges `lo..=hi`, from the conditions (bounds may use parameters
/// settled before: their extreme values bound).
pub fn int_box(rule: &Rule) -> Result<BTreeMap<String, (i64, i64)>, String> {
    let mut known = BTreeMap::new();
    for _ in 0..rule.params.len() {
        for p in rule.params.iter().filter(|p| p.sort == Sort::Int) {
            if let Ok(b) = bounds_in(&p.name, &rule.conds, &known) {
                known.insert(p.name.clone(), b);
            }
        }
    }
    for p in rule.params.iter().filter(|p| p.sort == Sort::Int) {
        known.insert(p.name.clone(), bounds_in(&p.name, &rule.conds, &known)?);
    }
    Ok(known)
}

/// The finite domain of each parameter, in declaration order. Layout sorts whose grids exceed
/// `limit` values are an error (they are enumerated, never encoded).
pub fn domains(rule: &Rule, limit: u64) -> Result<Vec<(String, Values)>, String> {
    let ints = int_box(rule)?;
    rule.params
        .iter()
        .map(|p| {
            let vals = match &p.sort {
                Sort::Int => {
                    let (lo, hi) = ints[&p.name];
                    Values::Ints(lo, hi)
                }
                Sort::Axis(axes) => Values::List(axes.iter().cloned().map(Bound::Axis).collect()),
                Sort::Cute {
                    rank,
                    extent,
                    stride,
                } => Values::List(
                    flat_grid(&p.name, *rank, *extent, 0, *stride, limit)?
                        .into_iter()
                        .filter_map(|(s, d)| CuteLayout::from_flat(&s, &d).ok())
                        .map(|c| Bound::Layout(Layout::Cute(c)))
                        .collect(),
                ),
                Sort::Axe {
                    rank,
                    extent,
                    stride,
                } => Values::List(
                    flat_grid(
                        &p.name,
                        *rank,
                        *extent,
                        stride.saturating_neg(),
                        *stride,
                        limit,
                    )?
                    .into_iter()
                    .filter_map(|(s, d)| {
                        let iters = s.iter().zip(&d).map(|(&e, &v)| Iter::on_m(e, v)).collect();
                        AxeLayout::from_shard(iters).ok()
                    })
                    .map(|x| Bound::Layout(Layout::Axe(x)))
                    .collect(),
                ),
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

/// A flat layout's extents and strides.
type FlatLayout = (Vec<i64>, Vec<i64>);

/// Every flat (shape, stride) of rank `1..=rank`, extents `1..=extent`, strides `lo..=hi`; an
/// error when there are more than `limit`.
fn flat_grid(
    name: &str,
    rank: u32,
    extent: i64,
    lo: i64,
    hi: i64,
    limit: u64,
) -> Result<Vec<FlatLayout>, String> {
    let per_mode =
        (extent.max(0) as u128).saturating_mul((hi as i128 - lo as i128 + 1).max(0) as u128);
    let count = (1..=rank).fold(0u128, |acc, r| {
        acc.saturating_add(per_mode.saturating_pow(r))
    });
    if count > limit as u128 {
        return Err(format!(
            "layout parameter {name} ranges over {count} layouts (limit {limit})"
        ));
    }
    let mut out = Vec::new();
    for r in 1..=rank as usize {
        let mut cur: Vec<FlatLayout> = vec![(vec![], vec![])];
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
    Ok(out)
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

/// Whether the conditions say exactly that every parameter lies in its box (each is a
/// comparison chain of one parameter with integer constants), so the box's assignments are
/// all instances.
pub fn conditions_are_the_box(rule: &Rule) -> bool {
    rule.conds.iter().all(|c| match c {
        Cond::Cmp(es, ops) => {
            let params = es.iter().filter(|e| matches!(e, IntExpr::Param(_))).count();
            params == 1
                && es.iter().all(|e| {
                    matches!(e, IntExpr::Param(_))
                        || eval::interval(e, &BTreeMap::new()).is_some_and(|(a, b)| a == b)
                })
                && ops.iter().all(|o| *o != super::syntax::CmpOp::Ne)
        }
        _ => false,
    })
}

/// Proves one rule (see the module doc).
pub fn prove_rule(rule: &Rule, opts: &Options) -> RuleReport {
    let t = Instant::now();
    let mut report = RuleReport {
        name: rule.name.clone(),
        text: rule.text.clone(),
        verdict: Verdict::Unknown(String::new()),
        method: None,
        grid: 0,
        instances: None,
        defined: 0,
        rechecked: 0,
        rechecked_boundary: 0,
        work: 0,
        digest: String::new(),
        smt_queries: Vec::new(),
        micros: 0,
        domain: opts.domain.clone(),
    };
    let order: Vec<String> = rule.params.iter().map(|p| p.name.clone()).collect();
    let limit = opts.grid_limit();
    match domains(rule, limit) {
        Err(why) => report.verdict = Verdict::Unknown(why),
        Ok(doms) => {
            let grid = doms
                .iter()
                .fold(1u128, |acc, (_, d)| acc.saturating_mul(d.len()));
            report.grid = grid;
            if grid == 0 {
                report.verdict = Verdict::Unknown("a parameter has no values (vacuous)".into());
            } else if grid <= limit as u128 {
                exhaustive(rule, &order, &doms, grid as u64, opts, &mut report);
            } else if opts.use_smt {
                symbolic::prove(rule, &order, grid, opts, &mut report);
            } else {
                report.verdict = Verdict::Unknown(format!(
                    "the parameter grid has {grid} points (limit {limit}) and z3 is off"
                ));
            }
        }
    }
    report.micros = t.elapsed().as_micros();
    report
}

/// The assignment at grid index `i` (first parameter slowest).
pub fn assignment_at(doms: &[(String, Values)], mut i: u128) -> Assignment {
    let mut a = Assignment::new();
    for (name, vals) in doms.iter().rev() {
        let n = vals.len().max(1);
        a.insert(name.clone(), vals.get(i % n));
        i /= n;
    }
    a
}

/// Grid points decided per parallel batch (the work budget is settled in grid order after
/// each batch, so the verdict does not depend on scheduling).
const BATCH: u64 = 4096;

fn exhaustive(
    rule: &Rule,
    order: &[String],
    doms: &[(String, Values)],
    grid: u64,
    opts: &Options,
    report: &mut RuleReport,
) {
    report.method = Some("exhaustive".into());
    let mut h = Sha256::new();
    let mut unknown = None;
    let mut refuted = None;
    let (mut met, mut spent) = (0u64, 0u64);
    let mut start = 0;
    'batches: while start < grid {
        let end = (start + BATCH).min(grid);
        let results: Vec<(u64, Option<(Instance, u64)>)> = (start..end)
            .into_par_iter()
            .map(|i| {
                let a = assignment_at(doms, i as u128);
                if !rule.conds.iter().all(|c| eval::cond(c, &a)) {
                    return (i, None);
                }
                (i, Some(decide_instance(rule, order, &a, opts)))
            })
            .collect();
        for (i, r) in results {
            let Some((r, cost)) = r else {
                spent = spent.saturating_add(1);
                continue;
            };
            spent = spent.saturating_add(cost);
            if spent > opts.work_budget {
                report.work = spent;
                report.instances = None;
                report.verdict = Verdict::Unknown(format!(
                    "the work budget ({} units) ran out at grid point {i} of {grid}",
                    opts.work_budget
                ));
                return;
            }
            met += 1;
            match r {
                Instance::Differs(refutation) => {
                    refuted = Some(refutation);
                    break 'batches;
                }
                Instance::Unknown(why) => {
                    if unknown.is_none() {
                        unknown = Some(why);
                    }
                }
                Instance::Holds { defined } => {
                    report.defined += u64::from(defined);
                    h.update(format!("{i}:{defined}\n"));
                }
            }
        }
        start = end;
    }
    report.work = spent;
    if let Some(r) = refuted {
        report.verdict = Verdict::Refuted(r);
        return;
    }
    report.instances = Some(met as u128);
    report.digest = format!("{:x}", h.finalize());
    report.verdict = if let Some(why) = unknown {
        Verdict::Unknown(format!("an instance is undecided: {why}"))
    } else if met == 0 {
        Verdict::Unknown("no parameter assignment meets the conditions (vacuous)".into())
    } else if report.defined == 0 {
        Verdict::Unknown(format!(
            "both sides are undefined at all {met} instances (vacuous)"
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
