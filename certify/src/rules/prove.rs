//! Bounded proof of one rule: every parameter assignment within the rule's bounds that meets its
//! conditions is an INSTANCE, and the rule holds at an instance when both sides are undefined,
//! or both are defined and related as claimed (`==`: the certify deciders say equivalent over
//! the claim domain, [`claim_domain`]; `===`: identical printed values). One side defined and
//! the other not is a refutation.
//!
//! Methods: `exhaustive` enumerates the parameter grid when it has at most
//! [`Options::max_instances`] points (in parallel batches; each instance decided by certify's
//! normal form and exhaustive deciders; a deterministic work budget, [`Options::work_budget`]
//! in the units of [`instance_cost`], bounds the attempt); otherwise, or when that budget is
//! spent, for rules in the strided fragment (both sides literals of strided Axe/CuTe
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
use super::syntax::{Cond, IntExpr, Over, Relation, Rule, Sort};
use crate::claim::{equivalent, semantic_points, Policy};

/// The largest `max_instances` a run accepts (`laycert prove --max-instances` above it is bad
/// input): 2^24 parameter assignments.
pub const MAX_INSTANCES_LIMIT: u64 = 1 << 24;

/// Work units one instance costs besides what it enumerates (parsing, the forward forms, the
/// normal form). One unit is about the cost of one logical index the deciders enumerate (about
/// half a microsecond in a release build); a small instance costs some 15 microseconds.
pub const INSTANCE_COST: u64 = 32;

/// Work units per replica vector of an Axe side: its point set is built, sorted and compared
/// once per instance, some four logical indices' worth per vector.
pub const REPLICA_COST: u64 = 4;

/// Work units per input of a TV or linear side: its forward table and the cross-check list
/// every input, some two logical indices' worth each.
pub const TABLE_COST: u64 = 2;

/// The default work budget of one rule: 2^25 units, some 8 to 17 seconds of one core in a
/// release build whatever the work is made of (large domains, replicas, tables, operators that
/// enumerate, many small instances).
pub const WORK_BUDGET: u64 = 1 << 25;

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
    /// Deterministic work budget of one rule's exhaustive attempt and of a z3 proof's concrete
    /// re-check, in work units ([`instance_cost`]; a grid point's condition test costs 1 plus
    /// the operators it applies): when it is spent the exhaustive attempt stops (z3 is tried
    /// next, where the rule is in its fragment), never a hang.
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
            work_budget: WORK_BUDGET,
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

/// Both sides of a rule evaluated at one assignment, and the work units evaluating them cost
/// (the operators that enumerate values, [`super::ops::cost`]).
#[derive(Clone, Debug)]
pub struct Evaluated {
    /// The left side, or why it is undefined.
    pub lhs: Result<Layout, LayoutError>,
    /// The right side, or why it is undefined.
    pub rhs: Result<Layout, LayoutError>,
    /// Work units spent evaluating them.
    pub work: u64,
}

/// Evaluates both sides at `a`.
pub fn evaluate(rule: &Rule, a: &Assignment) -> Evaluated {
    let mut work = 0;
    let lhs = eval::term_costed(&rule.lhs, a, &mut work);
    let rhs = eval::term_costed(&rule.rhs, a, &mut work);
    Evaluated { lhs, rhs, work }
}

/// Work units the deciders may spend on one side of a `==` claim: its logical indices (at
/// most the exhaustive limit: past it they sample), an Axe side's replica vectors
/// ([`REPLICA_COST`] each), and a TV or linear side's inputs, which its forward table and the
/// cross-check read backwards list ([`TABLE_COST`] each, at most
/// [`crate::forward::MAX_TABLE`] inputs).
pub fn side_cost(l: &Layout, exhaustive_limit: i64) -> u64 {
    let clamp = |n: i64, limit: i64| n.clamp(0, limit.max(0)) as u64;
    let indices = clamp(l.domain_size(), exhaustive_limit);
    match l {
        Layout::Axe(x) => indices.saturating_add(
            REPLICA_COST.saturating_mul(clamp(x.replica_count(), layout::axe::MAX_REPLICA_POINTS)),
        ),
        Layout::Tv(_) | Layout::Linear(_) => indices
            .max(TABLE_COST.saturating_mul(clamp(l.domain_size(), crate::forward::MAX_TABLE))),
        _ => indices,
    }
}

/// Work units one instance costs: [`INSTANCE_COST`], its evaluation, and (for `==` with both
/// sides defined) each side's [`side_cost`].
pub fn instance_cost(rule: &Rule, ev: &Evaluated, opts: &Options) -> u64 {
    let sides = match (&ev.lhs, &ev.rhs, &rule.relation) {
        (Ok(x), Ok(y), Relation::SameMap) => {
            side_cost(x, opts.exhaustive_limit).saturating_add(side_cost(y, opts.exhaustive_limit))
        }
        _ => 0,
    };
    INSTANCE_COST.saturating_add(ev.work).saturating_add(sides)
}

/// [`check_instance`] and the work it cost ([`instance_cost`]).
pub fn decide_instance(
    rule: &Rule,
    order: &[String],
    a: &Assignment,
    opts: &Options,
) -> (Instance, u64) {
    let ev = evaluate(rule, a);
    let cost = instance_cost(rule, &ev, opts);
    (decide_evaluated(rule, order, a, ev, opts), cost)
}

/// Decides the rule at `a` from its sides' values there.
pub fn decide_evaluated(
    rule: &Rule,
    order: &[String],
    a: &Assignment,
    ev: Evaluated,
    opts: &Options,
) -> Instance {
    let params = show_assignment(order, a);
    let undefined = |e: &LayoutError| format!("undefined ({e})");
    let (x, y) = match (ev.lhs, ev.rhs) {
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
        Relation::SameMap => same_map(params, &x, &y, rule.over, opts),
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

pub use crate::domain::NoDomain;

/// The domain two layouts are compared over when the claim names none: the one definition of
/// spec certify.md 1b, [`crate::domain::resolve_pair`].
pub fn claim_domain(x: &Layout, y: &Layout) -> Result<Vec<i64>, NoDomain> {
    claim_domain_over(x, y, None)
}

/// The domain a rule's two values are compared over: the natural domain of the side its
/// `over` clause names ([`Over`]), else [`claim_domain`]'s; the shape is then checked as a
/// given one (a fixed side must have it).
pub fn claim_domain_over(x: &Layout, y: &Layout, over: Option<Over>) -> Result<Vec<i64>, NoDomain> {
    rule_domain(x, y, over, None)
}

/// [`claim_domain_over`], with a shape the claim names itself (`validate`'s `"shape"`) first.
fn rule_domain(
    x: &Layout,
    y: &Layout,
    over: Option<Over>,
    given: Option<&[i64]>,
) -> Result<Vec<i64>, NoDomain> {
    // Sides that cannot be compared at all (different sizes) stay so whatever side is named.
    if let (Some(_), None, Err(e @ NoDomain::NotComparable(_))) =
        (over, given, crate::domain::resolve_pair(x, y, None))
    {
        return Err(e);
    }
    let side = over.map(|o| match o {
        Over::Lhs => crate::domain::natural(x).shape,
        Over::Rhs => crate::domain::natural(y).shape,
    });
    crate::domain::resolve_pair(x, y, given.or(side.as_deref())).map(|d| d.shape)
}

/// The shape two layouts are compared over ([`claim_domain`]), when they have one.
pub fn comparison_shape(x: &Layout, y: &Layout) -> Option<Vec<i64>> {
    claim_domain(x, y).ok()
}

/// `"params: "` before a message about an instance, nothing for a rule without parameters.
fn at(params: &str) -> String {
    if params.is_empty() {
        String::new()
    } else {
        format!("{params}: ")
    }
}

fn same_map(
    params: String,
    x: &Layout,
    y: &Layout,
    over: Option<Over>,
    opts: &Options,
) -> Instance {
    let shape = match rule_domain(x, y, over, opts.domain.as_deref()) {
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
        Err(NoDomain::Ambiguous { why, .. }) => {
            return Instance::Unknown(format!(
                "{}{why}; name it with `over lhs` or `over rhs` after the rule's sides (a log line: \"shape\")",
                at(&params)
            ))
        }
    };
    let policy = Policy {
        exhaustive_limit: opts.exhaustive_limit,
        rlimit: opts.rlimit,
        use_smt: false,
    };
    match equivalent(x, y, Some(&shape), &policy) {
        Err(e) => Instance::Unknown(format!("{}{e}", at(&params))),
        Ok(r) if r.verdict() == "equivalent" => Instance::Holds { defined: true },
        Ok(r) => match r.counterexample {
            Some(c) => {
                let pts = |l: &Layout| match semantic_points(l, &shape, &c.coord) {
                    Ok(p) => show_points(&p),
                    Err(e) => format!("undefined ({e})"),
                };
                // The points as they were compared: a 64-lane wavefront's lanes and warps apart.
                let apart = crate::claim::wavefront_axes(x, y).ok().flatten();
                let (sx, sy) = apart.as_ref().map_or((x, y), |(a, b)| (a, b));
                differs(
                    params,
                    x.print(),
                    y.print(),
                    Some(c.coord.clone()),
                    &pts(sx),
                    &pts(sy),
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
    over: Option<Over>,
    coord: &[i64],
) -> Option<Box<Refutation>> {
    let shape = claim_domain_over(x, y, over).ok()?;
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

/// The report of a rule left undecided before any instance was tried, and why (a `validate`
/// chain without one domain).
pub fn unknown_report(rule: &Rule, why: String, domain: Option<Vec<i64>>) -> RuleReport {
    RuleReport {
        name: rule.name.clone(),
        text: rule.text.clone(),
        verdict: Verdict::Unknown(why),
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
        domain,
    }
}

/// Proves one rule (see the module doc).
pub fn prove_rule(rule: &Rule, opts: &Options) -> RuleReport {
    let t = Instant::now();
    let mut report = unknown_report(rule, String::new(), opts.domain.clone());
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
                let spent = exhaustive(rule, &order, &doms, grid as u64, opts, &mut report);
                if spent && opts.use_smt {
                    // The budget is spent, not the rule: z3 may still prove it, and its answer
                    // says why the grid was not enumerated.
                    let Verdict::Unknown(why) = report.verdict.clone() else {
                        unreachable!("a spent budget is UNKNOWN")
                    };
                    let work = std::mem::take(&mut report.work);
                    report.method = None;
                    report.defined = 0;
                    symbolic::prove(rule, &order, grid, &why, opts, &mut report);
                    report.work = report.work.saturating_add(work);
                    if report.method.is_none() {
                        report.method = Some("exhaustive".into());
                    }
                    if let Verdict::Unknown(w) = &report.verdict {
                        if !w.starts_with(&why) {
                            report.verdict = Verdict::Unknown(format!("{why}; {w}"));
                        }
                    }
                }
            } else if opts.use_smt {
                let why = format!("the parameter grid has {grid} points (limit {limit})");
                symbolic::prove(rule, &order, grid, &why, opts, &mut report);
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

/// Most grid points per parallel batch, and the fewest: the first batch is the smallest, each
/// grows at most fourfold, and a batch is sized to fit the budget left even if each of its
/// instances costs as much as the heaviest so far, so that little is evaluated past the budget
/// (which is settled in grid order: the verdict does not depend on the batches).
const BATCH: u64 = 4096;
const MIN_BATCH: u64 = 8;

/// Why the exhaustive attempt stopped at grid point `at` of `grid`.
fn budget_spent(budget: u64, at: u64, grid: u64) -> String {
    format!("the work budget ({budget} units) ran out at grid point {at} of {grid}")
}

/// One grid point after its conditions and sides were evaluated: its index, the assignment
/// and sides where the conditions hold, and its cost.
type Point = (u64, Option<(Assignment, Evaluated)>, u64);

/// Returns whether the work budget ran out (the verdict then says so).
fn exhaustive(
    rule: &Rule,
    order: &[String],
    doms: &[(String, Values)],
    grid: u64,
    opts: &Options,
    report: &mut RuleReport,
) -> bool {
    report.method = Some("exhaustive".into());
    let mut h = Sha256::new();
    let mut unknown = None;
    let mut refuted = None;
    let mut out_of_budget = None;
    let (mut met, mut spent, mut heaviest) = (0u64, 0u64, 1u64);
    let (mut start, mut batch) = (0u64, MIN_BATCH);
    while start < grid && refuted.is_none() && out_of_budget.is_none() {
        let end = (start + batch).min(grid);
        // Conditions and sides, in parallel; their costs are settled in grid order below, and
        // only the instances the budget covers are decided.
        let points: Vec<Point> = (start..end)
            .into_par_iter()
            .map(|i| {
                let a = assignment_at(doms, i as u128);
                let mut work = 1;
                if !rule
                    .conds
                    .iter()
                    .all(|c| eval::cond_costed(c, &a, &mut work))
                {
                    return (i, None, work);
                }
                let ev = evaluate(rule, &a);
                let cost = work.saturating_add(instance_cost(rule, &ev, opts));
                (i, Some((a, ev)), cost)
            })
            .collect();
        let mut covered = points.len();
        for (k, (i, _, cost)) in points.iter().enumerate() {
            if spent.saturating_add(*cost) > opts.work_budget {
                out_of_budget = Some(budget_spent(opts.work_budget, *i, grid));
                covered = k;
                break;
            }
            spent += cost;
            heaviest = heaviest.max(*cost);
        }
        let decided: Vec<(u64, Option<Instance>)> = points
            .into_iter()
            .take(covered)
            .collect::<Vec<_>>()
            .into_par_iter()
            .map(|(i, p, _)| {
                (
                    i,
                    p.map(|(a, ev)| decide_evaluated(rule, order, &a, ev, opts)),
                )
            })
            .collect();
        for (i, r) in decided {
            let Some(r) = r else { continue };
            met += 1;
            match r {
                Instance::Differs(refutation) => {
                    refuted = Some(refutation);
                    break;
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
        batch = ((opts.work_budget - spent) / heaviest).clamp(MIN_BATCH, (4 * batch).min(BATCH));
    }
    report.work = spent;
    if let Some(r) = refuted {
        report.verdict = Verdict::Refuted(r);
        return false;
    }
    if let Some(why) = out_of_budget {
        report.verdict = Verdict::Unknown(why);
        return true;
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
    false
}

/// A value's text on one line (linear layouts print over several lines).
fn one_line(text: &str) -> String {
    text.split('\n')
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}
