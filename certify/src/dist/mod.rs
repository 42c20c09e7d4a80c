//! Distributed movement claims: does a redistribution plan take a tensor from a source mesh
//! layout to a target mesh layout, every element to every place the target names, each partial
//! sum reduced exactly once? (spec/distributed.md section 4.)
//!
//! [`certify_plan`] decides the claim by three executions of the collective semantics that share
//! no code beyond validating group lists:
//! - [`symbolic`] holds one symbolic buffer for every device at once (pieces whose elements are
//!   affine in the mesh coordinates), so its decision and its evidence do not grow with the
//!   device count. It reads layouts whose shards are affine (even cuts, or one uneven cut per
//!   dim read on the padded extent) and plans of collectives over one mesh axis, local tables
//!   that are affine runs on every device, zeroing off coordinate 0 of one axis, and a final
//!   send-recv read by what lands on each receiver (receiver classes, each a box of mesh
//!   coordinates on which what lands is affine); it certifies or says it does not apply,
//!   never refutes.
//! - [`boxes`] holds each rank's buffer as disjoint boxes of cells (a box carries the element at
//!   its corner and its addends), so its cost is the number of boxes, not of cells: large or
//!   uneven tensors on 1024 devices are decided in milliseconds, and send-recv plans and
//!   interleaved shards too. It decides every claim the symbolic decider does not, with a
//!   counterexample, and re-decides every symbolic certification on at most
//!   [`symbolic::SYMBOLIC_RECHECK_RANKS`] devices (the verdicts and the places must agree).
//! - [`simulate`] holds real cells; it re-decides every claim of at most [`RECHECK_CELLS`] cells
//!   and must agree exactly (verdict, places, counterexample).
//!
//! [`check_certificate`] re-runs the decision and compares the evidence, then re-decides a
//! symbolic certificate on boxes and any certificate on cells wherever they can hold it. A
//! refutation names the device, the element and what the device holds instead.
//!
//! Worked vector (spec section 6): mesh `gpuid=4`, (8,8), `[Shard(0)] -> [Shard(1)]` by one
//! all-to-all (split buffer dim 1, concatenate dim 0): rank 2 ends with columns 4..6 of all rows.

pub mod boxes;
pub mod plan;
pub mod simulate;
pub mod symbolic;

use std::collections::{BTreeMap, BTreeSet};

use layout::mesh::{MeshLayout, ReduceOp};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

pub use plan::{Message, Plan, Step};
use simulate::{Buffer, Cell, EMPTY};

/// A refutation: the device, the element and what is wrong there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DistCounterexample {
    /// The device (rank).
    pub rank: i64,
    /// Its mesh coordinates.
    pub coords: Vec<i64>,
    /// The global element (tensor coordinate) concerned, when one is.
    pub element: Option<Vec<i64>>,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for DistCounterexample {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "device {} {:?}", self.rank, self.coords)?;
        if let Some(e) = &self.element {
            write!(f, ", element {e:?}")?;
        }
        write!(f, ": {}", self.message)
    }
}

/// The certificate of a checked plan: the claim, the plan and the evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DistCertificate {
    /// Format version.
    pub version: u32,
    /// Source layout.
    pub source: MeshLayout,
    /// Target layout.
    pub target: MeshLayout,
    /// The plan.
    pub plan: Plan,
    /// Ranks simulated.
    pub ranks: i64,
    /// Target places checked.
    pub places_checked: i64,
    /// SHA-256 of every rank's final buffer as the decider held it (boxes or cells).
    pub digest: String,
    /// `boxes` ([`boxes`]) or `cells` ([`simulate`], when the boxes exceeded their limits).
    pub decided_on: String,
    /// The cell simulator re-decided the claim and agreed.
    pub cells_rechecked: bool,
    /// A symbolic decision ([`symbolic`]) that the box decider re-decided and agreed with.
    #[serde(default)]
    pub boxes_rechecked: bool,
}

impl DistCertificate {
    /// The line `check` prints for it: `dist plan: N steps over R ranks, P places re-checked
    /// (decided on ...)`.
    pub fn summary(&self) -> String {
        format!(
            "dist plan: {} steps over {} ranks, {} places re-checked (decided on {})",
            self.plan.steps.len(),
            self.ranks,
            self.places_checked,
            self.decided_on
        )
    }
}

/// Claims whose source and target buffers hold at most this many cells (over all ranks) are
/// decided twice, on boxes and cell by cell, and the two verdicts must be equal (2^18).
pub const RECHECK_CELLS: i64 = 1 << 18;

/// Symbolic certifications whose collectives have at most this many member pairs (the sum over
/// groups of the group size squared: what every member of an all-to-all or all-gather receives,
/// one box from each, costs the box decider at least that) are re-decided on boxes (2^20). A
/// 1-D mesh of 4096 ranks has 2^24 pairs per collective: seconds and gigabytes on boxes.
pub const SYMBOLIC_RECHECK_PAIRS: i64 = 1 << 20;

/// Why a plan was not certified.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DistError {
    /// The plan does not meet the claim (or does not execute).
    #[error("refuted: {0}")]
    Refuted(DistCounterexample),
    /// The claim is outside what the checker decides (sizes, more than 64 addends).
    #[error("unknown: {0}")]
    Unknown(String),
}

impl DistError {
    /// Why a certificate does not re-check, worded for `invalid: ...` (`laycert check` and
    /// `dist check --plan CERT` say it alike).
    pub fn why_invalid(&self) -> String {
        match self {
            DistError::Refuted(r) => format!("the plan is refuted: {r}"),
            DistError::Unknown(r) => r.clone(),
        }
    }
}

fn coords_of(shape: &[i64], mut flat: i64) -> Vec<i64> {
    let mut c = vec![0; shape.len()];
    for d in (0..shape.len()).rev() {
        c[d] = flat % shape[d];
        flat /= shape[d];
    }
    c
}

fn flat_of(shape: &[i64], c: &[i64]) -> i64 {
    shape.iter().zip(c).fold(0, |a, (s, x)| a * s + x)
}

/// Each rank's buffer under layout `l` (padded local shape, each of its pieces at its local
/// corner: one block at the origin for a boxed layout).
pub fn initial_buffers(l: &MeshLayout) -> Result<Vec<Buffer>, DistError> {
    let total: i64 = l.shape.iter().product();
    if total >= EMPTY as i64 {
        return Err(DistError::Unknown(format!(
            "{total} elements; the simulator holds < 2^32"
        )));
    }
    if l.addends() > 64 {
        return Err(DistError::Unknown(format!(
            "{} addends per value; the simulator tracks at most 64",
            l.addends()
        )));
    }
    let local = l.local_shape();
    let per: i64 = local.iter().product();
    if per.saturating_mul(l.mesh.size()) > simulate::MAX_CELLS {
        return Err(DistError::Unknown(format!(
            "{} ranks x {per} cells exceed the simulator's {} cells",
            l.mesh.size(),
            simulate::MAX_CELLS
        )));
    }
    Ok((0..l.mesh.size())
        .map(|r| {
            let mut b = Buffer::pad(&local);
            let bit = 1u64 << l.addend_of(r);
            for (bl, at) in l.pieces(r) {
                for_each_in_block(&bl, |x| {
                    let lc: Vec<i64> = (0..x.len()).map(|d| x[d] - bl[d].0 + at[d]).collect();
                    b.cells[flat_of(&local, &lc) as usize] = Cell {
                        elem: flat_of(&l.shape, x) as u32,
                        count: 1,
                        mask: bit,
                    };
                });
            }
            b
        })
        .collect())
}

fn for_each_in_block(bl: &[(i64, i64)], mut f: impl FnMut(&[i64])) {
    if bl.iter().any(|(lo, hi)| hi <= lo) {
        return;
    }
    let mut x: Vec<i64> = bl.iter().map(|b| b.0).collect();
    loop {
        f(&x);
        let mut d = bl.len();
        loop {
            if d == 0 {
                return;
            }
            d -= 1;
            x[d] += 1;
            if x[d] < bl[d].1 {
                break;
            }
            x[d] = bl[d].0;
        }
    }
}

/// Whether reducing an addend more than once leaves the value right: every reduction of the
/// plan (and the source's partial, if any) is one idempotent op, max or min.
pub fn duplicates_harmless(source: &MeshLayout, plan: &Plan) -> bool {
    let mut ops: BTreeSet<ReduceOp> = source.partial.values().copied().collect();
    for s in &plan.steps {
        if let Step::AllReduce { op, .. } | Step::ReduceScatter { op, .. } = s {
            ops.insert(*op);
        }
    }
    ops.len() == 1
        && ops
            .iter()
            .all(|&o| matches!(o, ReduceOp::Max | ReduceOp::Min))
}

/// Checks final buffers against the target: every place of every target value holds that
/// element with all of the source's addends exactly once (at least once when
/// [`duplicates_harmless`]); for a target partial in `sum`, the places of one value together
/// hold them exactly once. Returns the places checked.
pub fn check_final(
    source: &MeshLayout,
    target: &MeshLayout,
    bufs: &[Buffer],
    dup_ok: bool,
) -> Result<i64, DistCounterexample> {
    let mesh = &target.mesh;
    let n_add = source.addends();
    let full: u64 = if n_add >= 64 {
        u64::MAX
    } else {
        (1u64 << n_add) - 1
    };
    let local = target.local_shape();
    let sum_partial =
        !target.partial.is_empty() && target.partial.values().all(|&o| o == ReduceOp::Sum);
    let ce = |r: i64, x: Option<&[i64]>, m: String| DistCounterexample {
        rank: r,
        coords: mesh.coords(r),
        element: x.map(|x| x.to_vec()),
        message: m,
    };
    // (element id, group) -> (terms, addend set, first rank).
    let mut groups: BTreeMap<(u32, i64), (u64, u64, i64)> = BTreeMap::new();
    let mut checked = 0i64;
    if bufs.len() as i64 != mesh.size() {
        return Err(ce(
            0,
            None,
            format!("{} buffers for {} ranks", bufs.len(), mesh.size()),
        ));
    }
    for r in 0..mesh.size() {
        let b = &bufs[r as usize];
        let pieces = target.pieces(r);
        if b.shape != local {
            // Name the device's first target element: it cannot be at its target address.
            let first: Option<Vec<i64>> = pieces
                .first()
                .map(|(bl, _)| bl.iter().map(|b| b.0).collect());
            return Err(ce(
                r,
                first.as_deref(),
                format!(
                    "buffer shape {:?}; the target's local shape is {local:?}",
                    b.shape
                ),
            ));
        }
        // The mesh position with the partial coordinates zeroed names the group of addend
        // places (positions are in the order of the coordinates off the partial axes).
        let key = target.addend_group(r);
        let mut bad: Option<DistCounterexample> = None;
        for (bl, at) in &pieces {
            for_each_in_block(bl, |x| {
                if bad.is_some() {
                    return;
                }
                checked += 1;
                let lc: Vec<i64> = (0..x.len()).map(|d| x[d] - bl[d].0 + at[d]).collect();
                let cell = b.cells[flat_of(&local, &lc) as usize];
                let want = flat_of(&target.shape, x) as u32;
                // Formatted only for a counterexample (this loop visits every place).
                let at = || format!("local {lc:?}");
                let holds = || {
                    let e = coords_of(&target.shape, cell.elem as i64);
                    ce(r, Some(x), format!("{} holds element {e:?}", at()))
                };
                if sum_partial {
                    if cell.elem != EMPTY && cell.elem != want {
                        bad = Some(holds());
                        return;
                    }
                    let e = groups.entry((want, key)).or_insert((0, 0, r));
                    // count == addends and every bit set means each addend exactly once.
                    e.0 += cell.count as u64;
                    e.1 |= cell.mask;
                    return;
                }
                if cell.elem == EMPTY {
                    bad = Some(ce(r, Some(x), format!("{} holds padding or zero", at())));
                } else if cell.elem != want {
                    bad = Some(holds());
                } else if (!dup_ok && cell.count as i64 != n_add) || cell.mask != full {
                    bad = Some(ce(
                        r,
                        Some(x),
                        format!(
                        "{} holds {} addend(s) (set {:#x}) of {n_add}: a partial sum reduced {}",
                        at(),
                        cell.count,
                        cell.mask,
                        if (cell.count as i64) > n_add {
                            "more than once"
                        } else {
                            "incompletely"
                        }
                    ),
                    ));
                }
            });
        }
        if let Some(b) = bad {
            return Err(b);
        }
    }
    for ((x, _), (count, mask, r)) in groups {
        if count as i64 != n_add || mask != full {
            let x = coords_of(&target.shape, x as i64);
            return Err(ce(r, Some(&x), format!("the target's addends of this value hold {count} term(s) (set {mask:#x}) of {n_add}")));
        }
    }
    Ok(checked)
}

/// Decides the claim "`plan` takes `source` to `target`" and returns its certificate, or a
/// counterexample naming a device and an element. Decided on boxes ([`boxes`]); re-decided cell
/// by cell when the claim holds at most [`RECHECK_CELLS`] cells (the two must agree exactly, else
/// `Unknown`), or instead of the boxes when a plan's tables scatter cells past the boxes' limits.
pub fn certify_plan(
    source: &MeshLayout,
    target: &MeshLayout,
    plan: &Plan,
) -> Result<DistCertificate, DistError> {
    claim_fits(source, target, plan)?;
    if let Ok(sym) = symbolic::decide(source, target, plan) {
        return certify_symbolic(source, target, plan, sym);
    }
    let on_boxes = decide_on_boxes(source, target, plan);
    if let Err(DistError::Unknown(why)) = on_boxes {
        return decide_on_cells(source, target, plan).map_err(|e| match e {
            DistError::Unknown(w) if w == why => DistError::Unknown(w),
            DistError::Unknown(w) => DistError::Unknown(format!("{why}; {w}")),
            e => e,
        });
    }
    if cells(source).max(cells(target)) > RECHECK_CELLS {
        return on_boxes;
    }
    match (on_boxes, decide_on_cells(source, target, plan)) {
        // More addends than the cell simulator tracks: the boxes decide alone.
        (b, Err(DistError::Unknown(_))) => b,
        (Ok(mut c), Ok(k)) if c.places_checked == k.places_checked => {
            c.cells_rechecked = true;
            Ok(c)
        }
        (Err(DistError::Refuted(a)), Err(DistError::Refuted(b))) if a == b => {
            Err(DistError::Refuted(a))
        }
        (b, c) => Err(DistError::Unknown(format!(
            "the box decider and the cell simulator disagree (a laycert bug): {} / {}",
            verdict_text(&b),
            verdict_text(&c)
        ))),
    }
}

/// A symbolic certification, re-decided on boxes (on at most
/// [`symbolic::SYMBOLIC_RECHECK_RANKS`] devices and [`SYMBOLIC_RECHECK_PAIRS`] member pairs)
/// and on cells (at most [`RECHECK_CELLS`] cells): each must agree where it decides.
fn certify_symbolic(
    source: &MeshLayout,
    target: &MeshLayout,
    plan: &Plan,
    sym: symbolic::Symbolic,
) -> Result<DistCertificate, DistError> {
    let mut c = certificate(source, target, plan, sym.places, sym.digest, "symbolic");
    if source.mesh.size() <= symbolic::SYMBOLIC_RECHECK_RANKS
        && member_pairs(plan) <= SYMBOLIC_RECHECK_PAIRS
    {
        let b = decide_on_boxes(source, target, plan);
        c.boxes_rechecked = confirms(b, sym.places, "the box decider")?;
    }
    if cells(source).max(cells(target)) <= RECHECK_CELLS {
        let k = decide_on_cells(source, target, plan);
        c.cells_rechecked = confirms(k, sym.places, "the cell simulator")?;
    }
    Ok(c)
}

/// The member pairs of the plan's collectives: the sum over their groups of the size squared.
fn member_pairs(plan: &Plan) -> i64 {
    let pairs = |groups: &[Vec<i64>]| {
        groups.iter().fold(0i64, |a, g| {
            a.saturating_add((g.len() as i64).saturating_mul(g.len() as i64))
        })
    };
    plan.steps.iter().fold(0i64, |a, s| {
        a.saturating_add(match s {
            Step::AllGather { groups, .. }
            | Step::ReduceScatter { groups, .. }
            | Step::AllReduce { groups, .. }
            | Step::AllToAll { groups, .. }
            | Step::Broadcast { groups, .. } => pairs(groups),
            Step::SendRecv { .. } | Step::Local { .. } | Step::Zero { .. } => 0,
        })
    })
}

/// Whether another decider's verdict confirms a certification of `places` places: `true` when
/// it certifies the same places, `false` when it cannot decide (its limits), an `Unknown`
/// naming the disagreement otherwise (a laycert bug).
fn confirms(
    other: Result<DistCertificate, DistError>,
    places: i64,
    by: &str,
) -> Result<bool, DistError> {
    match other {
        Ok(o) if o.places_checked == places => Ok(true),
        Err(DistError::Unknown(_)) => Ok(false),
        other => Err(DistError::Unknown(format!(
            "certified with {places} places, but {by} says {} (a laycert bug)",
            verdict_text(&other)
        ))),
    }
}

fn verdict_text(r: &Result<DistCertificate, DistError>) -> String {
    match r {
        Ok(c) => format!("certified, {} places", c.places_checked),
        Err(e) => e.to_string(),
    }
}

/// Cells of a layout's buffers over all ranks (saturating).
fn cells(l: &MeshLayout) -> i64 {
    l.local_shape()
        .iter()
        .fold(1i64, |a, &e| a.saturating_mul(e))
        .saturating_mul(l.mesh.size())
}

/// What both deciders require of a claim before running the plan.
fn claim_fits(source: &MeshLayout, target: &MeshLayout, plan: &Plan) -> Result<(), DistError> {
    if source.mesh.size() != target.mesh.size() || plan.ranks != source.mesh.size() {
        return Err(DistError::Unknown(format!(
            "source, target and plan rank counts differ ({}, {}, {})",
            source.mesh.size(),
            target.mesh.size(),
            plan.ranks
        )));
    }
    if source.shape != target.shape {
        return Err(DistError::Unknown("source and target shapes differ".into()));
    }
    let ops = |l: &MeshLayout| l.partial.values().copied().collect::<BTreeSet<ReduceOp>>();
    if ops(source).len() > 1 || ops(target).len() > 1 {
        return Err(DistError::Unknown(
            "a layout partial in several reductions (the addend model takes one)".into(),
        ));
    }
    // A partial target from a partial source is decided in sum only: the addend model counts
    // a target's places as a sum does, and a sum of values reduced by max, min or avg is not
    // the source's value in general.
    let not_sum = |l: &MeshLayout| l.partial.values().any(|&o| o != ReduceOp::Sum);
    if !target.partial.is_empty()
        && !source.partial.is_empty()
        && (not_sum(source) || not_sum(target))
    {
        return Err(DistError::Unknown(
            "a partial target from a partial source, other than sum to sum".into(),
        ));
    }
    if let Some(op) = source.partial.values().next() {
        for (k, s) in plan.steps.iter().enumerate() {
            if let Step::AllReduce { op: o, .. } | Step::ReduceScatter { op: o, .. } = s {
                if o != op {
                    return Err(DistError::Refuted(DistCounterexample {
                        rank: 0,
                        coords: source.mesh.coords(0),
                        element: None,
                        message: format!(
                            "step {k} reduces by {} but the source is partial in {}",
                            o.name(),
                            op.name()
                        ),
                    }));
                }
            }
        }
    }
    Ok(())
}

/// A step that does not execute, as a refutation.
fn not_executed(source: &MeshLayout, plan: &Plan, e: simulate::SimError) -> DistError {
    if e.limit {
        return DistError::Unknown(format!("step {}: {}", e.step, e.message));
    }
    let r = e.rank.unwrap_or(0);
    DistError::Refuted(DistCounterexample {
        rank: r,
        coords: source.mesh.coords(r.clamp(0, source.mesh.size() - 1)),
        element: None,
        message: format!(
            "step {} ({}) does not execute: {}",
            e.step,
            plan.steps[e.step].name(),
            e.message
        ),
    })
}

/// A SHA-256 in hex.
pub(crate) fn hex(h: Sha256) -> String {
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

fn certificate(
    source: &MeshLayout,
    target: &MeshLayout,
    plan: &Plan,
    places_checked: i64,
    digest: String,
    decided_on: &str,
) -> DistCertificate {
    DistCertificate {
        version: 2,
        source: source.clone(),
        target: target.clone(),
        plan: plan.clone(),
        ranks: source.mesh.size(),
        places_checked,
        digest,
        decided_on: decided_on.into(),
        cells_rechecked: false,
        boxes_rechecked: false,
    }
}

/// The claim decided on boxes ([`boxes`]).
fn decide_on_boxes(
    source: &MeshLayout,
    target: &MeshLayout,
    plan: &Plan,
) -> Result<DistCertificate, DistError> {
    claim_fits(source, target, plan)?;
    let start = boxes::initial(source);
    let end = boxes::run(plan, start, &source.shape).map_err(|e| match e {
        boxes::Stop::Step(e) => not_executed(source, plan, e),
        boxes::Stop::Limit(w) => DistError::Unknown(w),
    })?;
    let checked = boxes::check_final(source, target, &end, duplicates_harmless(source, plan))?;
    let mut h = Sha256::new();
    for b in &end {
        h.update((b.shape.len() as u64).to_le_bytes());
        b.shape.iter().for_each(|x| h.update(x.to_le_bytes()));
        h.update((b.pieces.len() as u64).to_le_bytes());
        for p in b.pieces.iter() {
            for v in [&p.lo, &p.len, &p.elem] {
                v.iter().for_each(|x| h.update(x.to_le_bytes()));
            }
            h.update(p.count.to_le_bytes());
            h.update((p.addends.0.len() as u64).to_le_bytes());
            for (lo, hi) in p.addends.0.iter() {
                h.update(lo.to_le_bytes());
                h.update(hi.to_le_bytes());
            }
        }
    }
    Ok(certificate(source, target, plan, checked, hex(h), "boxes"))
}

/// The claim decided cell by cell ([`simulate`]).
fn decide_on_cells(
    source: &MeshLayout,
    target: &MeshLayout,
    plan: &Plan,
) -> Result<DistCertificate, DistError> {
    claim_fits(source, target, plan)?;
    let start = initial_buffers(source)?;
    let end = simulate::run(plan, start).map_err(|e| not_executed(source, plan, e))?;
    let checked = check_final(source, target, &end, duplicates_harmless(source, plan))
        .map_err(DistError::Refuted)?;
    let mut h = Sha256::new();
    for b in &end {
        for c in &b.cells {
            h.update(c.elem.to_le_bytes());
            h.update(c.count.to_le_bytes());
            h.update(c.mask.to_le_bytes());
        }
    }
    Ok(certificate(source, target, plan, checked, hex(h), "cells"))
}

/// The claim decided by the box decider alone (`decided_on: boxes`), whatever the symbolic
/// decider says: the reference the symbolic decider is tested against.
pub fn certify_on_boxes(
    source: &MeshLayout,
    target: &MeshLayout,
    plan: &Plan,
) -> Result<DistCertificate, DistError> {
    decide_on_boxes(source, target, plan)
}

/// The claim decided by the cell simulator alone (what `laycert dist sim` runs): a certificate
/// with `decided_on: cells`, or its refutation, or `Unknown` past [`simulate::MAX_CELLS`].
pub fn simulate_plan(
    source: &MeshLayout,
    target: &MeshLayout,
    plan: &Plan,
) -> Result<DistCertificate, DistError> {
    decide_on_cells(source, target, plan)
}

/// Re-checks a certificate from scratch: re-validates both layouts, re-decides the claim,
/// compares the verdict and the digest, and re-runs the cell simulator on a claim it can hold.
pub fn check_certificate(c: &DistCertificate) -> Result<(), DistError> {
    let relayout = |l: &MeshLayout| {
        let bad =
            |e: layout::mesh::MeshError| DistError::Unknown(format!("certificate layout: {e}"));
        let mut again = MeshLayout::new(
            l.mesh.clone(),
            l.shape.clone(),
            l.dims.clone(),
            l.partial.clone(),
            l.maximal,
        )
        .map_err(bad)?;
        for (&d, list) in &l.strided {
            again = again.with_strided(d, list.clone()).map_err(bad)?;
        }
        Ok::<MeshLayout, DistError>(again)
    };
    let (s, t) = (relayout(&c.source)?, relayout(&c.target)?);
    let again = certify_plan(&s, &t, &c.plan)?;
    if again.digest != c.digest
        || again.places_checked != c.places_checked
        || again.decided_on != c.decided_on
        || again.ranks != c.ranks
        || again.version != c.version
        || again.cells_rechecked != c.cells_rechecked
        || again.boxes_rechecked != c.boxes_rechecked
    {
        return Err(DistError::Unknown(
            "certificate evidence does not match a re-run (tampered?)".into(),
        ));
    }
    if again.decided_on == "symbolic" && !again.boxes_rechecked {
        let b = decide_on_boxes(&s, &t, &c.plan);
        confirms(b, c.places_checked, "the box decider")?;
    }
    if !again.cells_rechecked && again.decided_on != "cells" {
        let k = decide_on_cells(&s, &t, &c.plan);
        confirms(k, c.places_checked, "the cell simulator")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
