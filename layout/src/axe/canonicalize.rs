//! Canonical form of an Axe layout (paper appendix A).
//!
//! The shard `D` is rewritten until none applies:
//! - **D0** delete an iter of extent 1;
//! - **D1** merge adjacent `(e1, s1@a), (e2, s2@a)` with `s1 = e2*s2` into `(e1*e2, s2@a)`;
//! - stride-0 iters carry no axis information and all move to axis `m`, so `(4, 0@laneid)` and
//!   `(4, 0@m)` normalize alike.
//!
//! The replica `R` is rewritten per axis until none applies:
//! - **C0** delete an iter of extent 1 (and one of stride 0: it only adds the point 0);
//! - **C1** a negative stride `(e, s<0)` becomes `(e, -s)` and the offset moves by `(e-1)*s`;
//! - **C2** `(e1, s), (e2, k*s)` with `1 <= k <= e1` touch or overlap: they become
//!   `(e1 + k*(e2-1), s)`;
//!
//! then `R` is sorted by (axis, stride). The gap condition (GC) on an axis, strides ascending,
//! is `s_{i+1} > sum_{j<=i} (e_j-1)*s_j`. Normalized `D` is unique for a map (A.8); under GC the
//! replica is unique too (A.12), so two layouts whose canonical forms satisfy GC are equal iff
//! the forms are equal. Where GC fails, structural comparison is not a proof; [`Canonical`]
//! reports GC per axis rather than assuming it.
//!
//! Worked example: `S[(3,4,5,2):(20,5,1,60)] + R[(2,3):(-3,1)]`: D1 merges `(4,5):(5,1)` to
//! `20:1`, then `(3,20):(20,1)` to `60:1`, giving `S[(60,2):(1,60)]`; C1 flips `(2,-3)` to
//! `(2,3)` with offset `-3`; C2 absorbs `(2,3)` into `(3,1)` (k = 3 <= 3) giving `(6,1)`:
//! `S[(60,2):(1,60)] + R[6:1] + -3`, and GC holds on `m`.

use std::collections::BTreeMap;

use super::{AxeLayout, Iter};
use crate::arith;
use crate::axis::{Axis, AxisRegistry};
use crate::error::Result;

/// A canonical layout and the gap condition per replica axis.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Canonical {
    /// The canonical layout (same map as the input).
    pub layout: AxeLayout,
    /// For every axis of the canonical replica: does GC hold there?
    pub gap_condition: BTreeMap<Axis, bool>,
}

impl Canonical {
    /// True when GC holds on every axis, so that equal maps have equal canonical forms.
    pub fn gc_holds(&self) -> bool {
        self.gap_condition.values().all(|&ok| ok)
    }
}

/// Canonical form of `l` (no registry: axis names are taken as written).
///
/// ```
/// use layout::{axe, notation::axe::{parse, print}};
/// let c = axe::canonicalize(&parse("S[(8,2,3,6):(6,24,6,1)]")?)?;
/// assert_eq!(print(&c.layout), "S[(8,2,18):(6,24,1)]");
/// assert!(c.gc_holds());
/// # Ok::<(), layout::LayoutError>(())
/// ```
pub fn canonicalize(l: &AxeLayout) -> Result<Canonical> {
    let shard = normalize_shard(l.shard())?;
    let mut offset = l.offset().clone();
    let mut by_axis: BTreeMap<Axis, Vec<(i64, i64)>> = BTreeMap::new();
    for it in l.replica() {
        if it.extent == 1 || it.stride == 0 {
            continue; // C0
        }
        let mut stride = it.stride;
        if stride < 0 {
            // C1: {0, s, .., (e-1)s} = (e-1)s + {0, -s, .., (e-1)(-s)}.
            let o = offset.entry(it.axis.clone()).or_insert(0);
            *o = arith::add(
                *o,
                arith::mul(it.extent - 1, stride, "C1 offset")?,
                "C1 offset",
            )?;
            stride = -stride;
        }
        by_axis
            .entry(it.axis.clone())
            .or_default()
            .push((stride, it.extent));
    }
    let mut replica = Vec::new();
    let mut gap_condition = BTreeMap::new();
    for (axis, iters) in by_axis {
        let iters = absorb_multiples(iters)?;
        gap_condition.insert(axis.clone(), gap_condition_holds(&iters));
        replica.extend(
            iters
                .into_iter()
                .map(|(s, e)| Iter::new(e, s, axis.clone())),
        );
    }
    Ok(Canonical {
        layout: AxeLayout::new(shard, replica, offset)?,
        gap_condition,
    })
}

/// Canonical form after resolving axis aliases with `reg` and, when `target` is given, fusing
/// axes by that target's relations (see [`super::fuse`]).
///
/// ```
/// use layout::{axe, AxisRegistry, notation::axe::{parse, print}};
/// let l = parse("S[(2,2,8,4):(2@warpid,1@warpid,4@lane,1@lane)]")?;
/// let c = axe::canonicalize_on(&l, &AxisRegistry::builtin(), Some("cuda"))?;
/// assert_eq!(print(&c.layout), "S[128:1@tx]");
/// # Ok::<(), layout::LayoutError>(())
/// ```
pub fn canonicalize_on(
    l: &AxeLayout,
    reg: &AxisRegistry,
    target: Option<&str>,
) -> Result<Canonical> {
    let resolved = super::fuse::resolve_aliases(l, reg)?;
    match target {
        Some(t) => canonicalize(&super::fuse::fuse_axes(&resolved, reg, t)?),
        None => canonicalize(&resolved),
    }
}

/// D0, stride-0 normalization and D1 to a fixpoint (a stack: a merge only changes the top).
pub(crate) fn normalize_shard(shard: &[Iter]) -> Result<Vec<Iter>> {
    let mut out: Vec<Iter> = Vec::with_capacity(shard.len());
    for it in shard.iter().filter(|it| it.extent != 1) {
        let mut cur = if it.stride == 0 {
            Iter::on_m(it.extent, 0)
        } else {
            it.clone()
        };
        while let Some(prev) = out.last() {
            let chained = prev.axis == cur.axis
                && arith::mul(cur.extent, cur.stride, "D1 chain").ok() == Some(prev.stride);
            if !chained {
                break;
            }
            let extent = arith::mul(prev.extent, cur.extent, "D1 merge")?;
            cur = Iter::new(extent, cur.stride, cur.axis);
            out.pop();
        }
        out.push(cur);
    }
    Ok(out)
}

/// C2 to a fixpoint on one axis's `(stride > 0, extent > 1)` list; returns it sorted by stride.
fn absorb_multiples(mut iters: Vec<(i64, i64)>) -> Result<Vec<(i64, i64)>> {
    loop {
        iters.sort();
        let pair = (0..iters.len())
            .flat_map(|i| (0..iters.len()).map(move |j| (i, j)))
            .find(|&(i, j)| {
                let ((s1, e1), (s2, _)) = (iters[i], iters[j]);
                i != j && s2 % s1 == 0 && s2 / s1 <= e1
            });
        let Some((i, j)) = pair else {
            return Ok(iters);
        };
        let ((s, e1), (s2, e2)) = (iters[i], iters[j]);
        let grown = arith::add(e1, arith::mul(s2 / s, e2 - 1, "C2 absorb")?, "C2 absorb")?;
        iters[i] = (s, grown);
        iters.remove(j);
    }
}

/// GC on one axis: `s_{i+1} > sum_{j<=i} (e_j-1)*s_j`, strides ascending.
fn gap_condition_holds(sorted: &[(i64, i64)]) -> bool {
    let mut reach: i64 = 0;
    for &(s, e) in sorted {
        if s <= reach {
            return false;
        }
        // Bounded by the layout's span, which `AxeLayout::new` checked fits in i64.
        reach = reach.saturating_add((e - 1).saturating_mul(s));
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notation::axe::{parse, print};

    fn canon(text: &str) -> String {
        print(&canonicalize(&parse(text).unwrap()).unwrap().layout)
    }

    #[test]
    fn canonical_forms_match_the_tirx_vectors() {
        assert_eq!(canon("S[(8,8,8,4,2):(512,64,8,2,1)]"), "S[4096:1]");
        assert_eq!(canon("S[(8,2,3,6):(6,24,6,1)]"), "S[(8,2,18):(6,24,1)]");
        assert_eq!(canon("S[(3,4,5,2):(20,5,1,60)]"), "S[(60,2):(1,60)]");
        assert_eq!(
            canon("S[(8,4,8):(4@laneid,1@laneid,8)]"),
            "S[(32,8):(1@laneid,8)]"
        );
    }

    #[test]
    fn replica_orders_canonicalize_alike() {
        let a = canonicalize(&parse("S[1:1] + R[(8,4):(4@laneid,1@laneid)] + 2@warpid").unwrap())
            .unwrap();
        let b = canonicalize(&parse("S[1:1] + R[(4,8):(1@laneid,4@laneid)] + 2@warpid").unwrap())
            .unwrap();
        assert_eq!(a, b);
        assert_eq!(print(&a.layout), "S[():()] + R[32:1@laneid] + 2@warpid");
    }

    #[test]
    fn module_example_holds() {
        let c =
            canonicalize(&parse("S[(3,4,5,2):(20,5,1,60)] + R[(2,3):(-3,1)]").unwrap()).unwrap();
        assert_eq!(print(&c.layout), "S[(60,2):(1,60)] + R[6:1] + -3");
        assert!(c.gc_holds());
    }

    #[test]
    fn zero_strides_lose_their_axis() {
        assert_eq!(canon("S[(4,2,3):(0@laneid,0,1)]"), "S[(8,3):(0,1)]");
        assert_eq!(canon("S[2:1] + R[4:0@warpid]"), "S[2:1]");
    }

    #[test]
    fn c2_absorbs_every_multiple_up_to_the_extent() {
        // k = 2 <= 3: {0,1,2} + {0,2,4} = [0,7).
        assert_eq!(canon("S[1:1] + R[(3,3):(1,2)]"), "S[():()] + R[7:1]");
        // k = 4 > 3: a gap remains, GC holds.
        let c = canonicalize(&parse("S[1:1] + R[(3,3):(1,4)]").unwrap()).unwrap();
        assert_eq!(print(&c.layout), "S[():()] + R[(3,3):(1,4)]");
        assert!(c.gc_holds());
    }

    #[test]
    fn gap_condition_is_reported_not_assumed() {
        // {0,2,4} + {0,3}: stride 3 <= (3-1)*2, no C2 (3 is not a multiple of 2).
        let c = canonicalize(&parse("S[2:1] + R[(3,2):(2,3)]").unwrap()).unwrap();
        assert_eq!(c.gap_condition, [(Axis::m(), false)].into());
        assert!(!c.gc_holds());
    }

    #[test]
    fn aliases_and_axis_fusion_give_tx() {
        let l = parse("S[(2,2,8,4):(2@warpid,1@warpid,4@lane,1@laneid)]").unwrap();
        let c = canonicalize_on(&l, AxisRegistry::builtin(), Some("cuda")).unwrap();
        assert_eq!(print(&c.layout), "S[128:1@tx]");
        let c = canonicalize_on(&l, AxisRegistry::builtin(), None).unwrap();
        assert_eq!(
            print(&c.layout),
            "S[(4,32):(1@warpid,1@laneid)]",
            "without a target only aliases resolve"
        );
    }
}
