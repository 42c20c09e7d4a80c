//! Distributed movement claims: does a redistribution plan take a tensor from a source mesh
//! layout to a target mesh layout, every element to every place the target names, each partial
//! sum reduced exactly once? (spec/distributed.md section 4.)
//!
//! [`certify_plan`] decides the claim by executing the plan on every simulated rank with real
//! buffers ([`simulate`]) whose cells carry the global element and the set of addends they hold,
//! starting from the source layout's buffers (built from `layout::mesh`'s semantics, the trusted
//! base) and comparing every place of the target against it. A refutation names the device, the
//! element and what the device holds instead. The decision is exact for the given sizes; it is
//! not symbolic over the rank (its cost grows with the mesh and the tensor: [`simulate::MAX_CELLS`]).
//!
//! Worked vector (spec section 6): mesh `gpuid=4`, (8,8), `[Shard(0)] -> [Shard(1)]` by one
//! all-to-all (split buffer dim 1, concatenate dim 0): rank 2 ends with columns 4..6 of all rows.

pub mod plan;
pub mod quotient;
pub mod simulate;

use std::collections::BTreeMap;

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
    /// SHA-256 of every rank's final buffer (element ids, counts, masks) of the simulated claim.
    pub digest: String,
    /// The block size per dim the claim was decided on (all 1: at full size); see [`quotient`].
    pub quotient: Vec<i64>,
}

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

/// Each rank's buffer under layout `l` (padded local shape, the block at the origin).
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
            let bl = l.block(r);
            let bit = 1u64 << l.addend_of(r);
            for_each_in_block(&bl, |x| {
                let lc: Vec<i64> = x.iter().zip(&bl).map(|(v, (lo, _))| v - lo).collect();
                b.cells[flat_of(&local, &lc) as usize] = Cell {
                    elem: flat_of(&l.shape, x) as u32,
                    count: 1,
                    mask: bit,
                };
            });
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

/// Checks final buffers against the target: every place of every target value holds that
/// element with all of the source's addends exactly once; for a target partial in `sum`, the
/// places of one value together hold them exactly once. Returns the places checked.
pub fn check_final(
    source: &MeshLayout,
    target: &MeshLayout,
    bufs: &[Buffer],
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
    // (element, coordinates off the partial axes) -> (terms, addend set, first rank).
    type Group = (Vec<i64>, Vec<i64>);
    let mut groups: BTreeMap<Group, (u64, u64, i64)> = BTreeMap::new();
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
        if b.shape != local {
            // Name the device's first target element: it cannot be at its target address.
            let bl = target.block(r);
            let first: Option<Vec<i64>> = bl
                .iter()
                .all(|(lo, hi)| lo < hi)
                .then(|| bl.iter().map(|b| b.0).collect());
            return Err(ce(
                r,
                first.as_deref(),
                format!(
                    "buffer shape {:?}; the target's local shape is {local:?}",
                    b.shape
                ),
            ));
        }
        let bl = target.block(r);
        let c = mesh.coords(r);
        let mut bad: Option<DistCounterexample> = None;
        for_each_in_block(&bl, |x| {
            if bad.is_some() {
                return;
            }
            checked += 1;
            let lc: Vec<i64> = x.iter().zip(&bl).map(|(v, (lo, _))| v - lo).collect();
            let cell = b.cells[flat_of(&local, &lc) as usize];
            let want = flat_of(&target.shape, x) as u32;
            let at = format!("local {lc:?}");
            if sum_partial {
                if cell.elem != EMPTY && cell.elem != want {
                    bad = Some(ce(
                        r,
                        Some(x),
                        format!(
                            "{at} holds element {:?}",
                            coords_of(&target.shape, cell.elem as i64)
                        ),
                    ));
                    return;
                }
                let key: Vec<i64> = (0..mesh.ndim())
                    .map(|a| {
                        if target.partial.contains_key(&a) {
                            -1
                        } else {
                            c[a]
                        }
                    })
                    .collect();
                let e = groups.entry((x.to_vec(), key)).or_insert((0, 0, r));
                // count == addends and every bit set means each addend exactly once.
                e.0 += cell.count as u64;
                e.1 |= cell.mask;
                return;
            }
            if cell.elem == EMPTY {
                bad = Some(ce(r, Some(x), format!("{at} holds padding or zero")));
            } else if cell.elem != want {
                bad = Some(ce(
                    r,
                    Some(x),
                    format!(
                        "{at} holds element {:?}",
                        coords_of(&target.shape, cell.elem as i64)
                    ),
                ));
            } else if cell.count as i64 != n_add || cell.mask != full {
                bad = Some(ce(
                    r,
                    Some(x),
                    format!(
                        "{at} holds {} addend(s) (set {:#x}) of {n_add}: a partial sum reduced {}",
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
        if let Some(b) = bad {
            return Err(b);
        }
    }
    for ((x, _), (count, mask, r)) in groups {
        if count as i64 != n_add || mask != full {
            return Err(ce(r, Some(&x), format!("the target's addends of this value hold {count} term(s) (set {mask:#x}) of {n_add}")));
        }
    }
    Ok(checked)
}

/// Decides the claim "`plan` takes `source` to `target`" by simulation and returns its
/// certificate, or a counterexample naming a device and an element. The claim is decided on the
/// quotient by the largest block size `q` that divides every block boundary of source and target
/// when the plan is, entry by entry, the inflation of its deflation by `q` ([`quotient`]); else
/// (or when the quotient does not certify) at full size.
pub fn certify_plan(
    source: &MeshLayout,
    target: &MeshLayout,
    plan: &Plan,
) -> Result<DistCertificate, DistError> {
    certify_plan_with(source, target, plan, None)
}

/// [`certify_plan`] with a block-size hint from whoever made the plan (the planner knows its
/// intermediate layouts): the quotient is taken by the gcd of the hint and the claim's own block
/// size. The hint is untrusted: the inflation check decides whether the quotient applies.
pub fn certify_plan_with(
    source: &MeshLayout,
    target: &MeshLayout,
    plan: &Plan,
    hint: Option<&[i64]>,
) -> Result<DistCertificate, DistError> {
    let nd = source.shape.len();
    let mut q: Vec<i64> = vec![1; nd];
    if target.shape == source.shape && source.maximal.is_none() && target.maximal.is_none() {
        q = source.shape.clone();
        for l in [source, target] {
            for r in 0..l.mesh.size() {
                for (d, (lo, hi)) in l.block(r).into_iter().enumerate() {
                    q[d] = quotient::gcd(quotient::gcd(q[d], lo), hi);
                }
            }
            for (d, e) in l.local_shape().into_iter().enumerate() {
                q[d] = quotient::gcd(q[d], e);
            }
        }
    }
    if let Some(h) = hint.filter(|h| h.len() == nd) {
        q.iter_mut()
            .zip(h)
            .for_each(|(q, h)| *q = quotient::gcd(*q, *h));
    }
    if q.iter().any(|&x| x > 1) {
        if let Some((s, t, p)) = quotient_claim(source, target, plan, &q) {
            // Every step executed on the quotient: the full buffers are the inflation of the
            // small ones, so the verdict carries over (a wrong place names its block's first
            // element). A step that does not execute on the quotient (a piece that splits a
            // block) is re-decided at full size.
            match certify_full(&s, &t, &p) {
                Ok(mut cert) => {
                    cert.source = source.clone();
                    cert.target = target.clone();
                    cert.plan = plan.clone();
                    cert.quotient = q;
                    return Ok(cert);
                }
                Err(DistError::Refuted(mut c)) if c.element.is_some() => {
                    if let Some(x) = c.element.as_mut() {
                        x.iter_mut().zip(&q).for_each(|(v, q)| *v *= q);
                    }
                    c.message = format!("{} (decided on blocks of {q:?}: the element is its block's first; element ids in the text are of the quotient)", c.message);
                    return Err(DistError::Refuted(c));
                }
                Err(_) => {}
            }
        }
    }
    certify_full(source, target, plan)
}

/// The claim on the quotient by `q`, when source, target and plan are its inflations.
fn quotient_claim(
    source: &MeshLayout,
    target: &MeshLayout,
    plan: &Plan,
    q: &[i64],
) -> Option<(MeshLayout, MeshLayout, Plan)> {
    let shrink = |l: &MeshLayout| -> Option<MeshLayout> {
        let shape: Vec<i64> = l.shape.iter().zip(q).map(|(s, q)| s / q).collect();
        let small = MeshLayout::new(
            l.mesh.clone(),
            shape,
            l.dims.clone(),
            l.partial.clone(),
            l.maximal,
        )
        .ok()?;
        let scaled: Vec<i64> = small
            .local_shape()
            .iter()
            .zip(q)
            .map(|(x, q)| x * q)
            .collect();
        if scaled != l.local_shape() {
            return None;
        }
        for r in 0..l.mesh.size() {
            let big: Vec<(i64, i64)> = small
                .block(r)
                .iter()
                .zip(q)
                .map(|((lo, hi), q)| (lo * q, hi * q))
                .collect();
            if big != l.block(r) {
                return None;
            }
        }
        Some(small)
    };
    let (s, t) = (shrink(source)?, shrink(target)?);
    let small = quotient::deflate(plan, q)?;
    (quotient::inflate(&small, q) == *plan).then_some((s, t, small))
}

fn certify_full(
    source: &MeshLayout,
    target: &MeshLayout,
    plan: &Plan,
) -> Result<DistCertificate, DistError> {
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
    if !target.partial.is_empty()
        && target.partial.values().any(|&o| o != ReduceOp::Sum)
        && !source.partial.is_empty()
    {
        return Err(DistError::Unknown(
            "a partial target other than sum from a partial source".into(),
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
    let start = initial_buffers(source)?;
    let end = simulate::run(plan, start).map_err(|e| {
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
    })?;
    let checked = check_final(source, target, &end).map_err(DistError::Refuted)?;
    let mut h = Sha256::new();
    for b in &end {
        for c in &b.cells {
            h.update(c.elem.to_le_bytes());
            h.update(c.count.to_le_bytes());
            h.update(c.mask.to_le_bytes());
        }
    }
    let digest: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
    Ok(DistCertificate {
        version: 1,
        source: source.clone(),
        target: target.clone(),
        plan: plan.clone(),
        ranks: source.mesh.size(),
        places_checked: checked,
        digest,
        quotient: vec![1; source.shape.len()],
    })
}

/// Re-checks a certificate from scratch: re-validates both layouts, re-runs the plan, compares
/// the verdict and the digest.
pub fn check_certificate(c: &DistCertificate) -> Result<(), DistError> {
    let relayout = |l: &MeshLayout| {
        MeshLayout::new(
            l.mesh.clone(),
            l.shape.clone(),
            l.dims.clone(),
            l.partial.clone(),
            l.maximal,
        )
        .map_err(|e| DistError::Unknown(format!("certificate layout: {e}")))
    };
    let (s, t) = (relayout(&c.source)?, relayout(&c.target)?);
    let again = certify_plan(&s, &t, &c.plan)?;
    if again.digest != c.digest || again.places_checked != c.places_checked {
        return Err(DistError::Unknown(
            "certificate evidence does not match a re-run (tampered?)".into(),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
