//! Axe layouts: `L = (D, R, O)` over named physical axes (the Axe paper; TVM TIRx `tirx/layout`).
//!
//! - An *iter* `(e, s@a)` has extent `e >= 1`, an integer stride `s` (0 and negative allowed) and
//!   an axis `a`; it maps `x in [0, e)` to `x*s` on axis `a`.
//! - The *shard* `D` is an ordered list of iters; the logical index `x in [0, E)`, `E = prod e_i`,
//!   is split into ROW-MAJOR digits (leftmost iter slowest): `x_i = floor(x / P_i) mod e_i` with
//!   `P_i = prod_{j>i} e_j`, and `D(x) = sum_i x_i * s_i @ a_i`.
//! - The *replica* `R` is a multiset of iters independent of `x`:
//!   `Rset = { sum_t r_t*s_t@a_t | 0 <= r_t < e_t }` (`{0}` when empty).
//! - The *offset* `O` gives one integer per axis.
//! - `L(x) = { D(x) + r + O | r in Rset }`, a SET of physical coordinates.
//!
//! Worked example (a test checks it): `S[(8,2,4,2):(4@laneid,1@warpid,1@laneid,1@reg)] +
//! R[2:4@warpid] + 5@warpid` at logical (2,9) of shape (8,16): flat index 41, digits (2,1,0,1),
//! image `{ {laneid:8, reg:1, warpid:6}, {laneid:8, reg:1, warpid:10} }`.

pub mod canonicalize;
pub mod direct_sum;
pub mod fuse;
pub mod group;
pub mod shard_of;
pub mod slice;
pub mod span;
pub mod tile;
pub mod tile_of;

pub use canonicalize::{canonicalize, canonicalize_on, Canonical};
pub use direct_sum::{direct_sum, first_summand, second_summand};
pub use fuse::{fuse_axes, resolve_aliases};
pub use group::{common_refinement, group, group_many, Grouped, GroupedMany};
pub use shard_of::{shard_of, Recognized};
pub use slice::{slice, slice_swizzled, MAX_SLICE_POINTS};
pub use span::{span, span_vector};
pub use tile::tile;
pub use tile_of::{tile_of, tile_of_given_outer};

use std::collections::{BTreeMap, BTreeSet};

use crate::arith;
use crate::axis::{Axis, Point};
use crate::error::{LayoutError, Result};
use crate::shape;

/// Largest replica set `eval` enumerates (more is an error value, not a hang): 2^16, so one
/// evaluation stays within a few megabytes and milliseconds.
pub const MAX_REPLICA_POINTS: i64 = 1 << 16;

/// One iter `(extent, stride@axis)`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Iter {
    /// Extent `e >= 1`.
    pub extent: i64,
    /// Stride `s` (may be 0 or negative).
    pub stride: i64,
    /// The physical axis.
    pub axis: Axis,
}

impl Iter {
    /// `(extent, stride@axis)`.
    pub fn new(extent: i64, stride: i64, axis: Axis) -> Iter {
        Iter {
            extent,
            stride,
            axis,
        }
    }

    /// `(extent, stride@m)`.
    pub fn on_m(extent: i64, stride: i64) -> Iter {
        Iter::new(extent, stride, Axis::m())
    }
}

/// An Axe layout `(D, R, O)`. Construct with [`AxeLayout::new`], which checks the invariants
/// (extents >= 1, sizes and every reachable coordinate fit in i64, no zero offsets stored).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct AxeLayout {
    shard: Vec<Iter>,
    replica: Vec<Iter>,
    offset: BTreeMap<Axis, i64>,
}

impl AxeLayout {
    /// Builds and validates a layout. Zero offsets are dropped (absent axes are 0).
    pub fn new(shard: Vec<Iter>, replica: Vec<Iter>, offset: BTreeMap<Axis, i64>) -> Result<Self> {
        for (part, iters) in [("shard", &shard), ("replica", &replica)] {
            if let Some((i, it)) = iters.iter().enumerate().find(|(_, it)| it.extent < 1) {
                return Err(LayoutError::invalid(
                    format!("{part} iter {i}"),
                    format!("extent {} is below 1", it.extent),
                ));
            }
        }
        arith::product(shard.iter().map(|it| it.extent), "shard size")?;
        arith::product(replica.iter().map(|it| it.extent), "replica size")?;
        let offset: BTreeMap<Axis, i64> = offset.into_iter().filter(|(_, v)| *v != 0).collect();
        let layout = AxeLayout {
            shard,
            replica,
            offset,
        };
        // Every coordinate the layout can produce is bounded by offset + span: check it fits
        // (the span itself included, so `span` below cannot overflow).
        for axis in layout.axes() {
            let reach = layout
                .iters()
                .filter(|it| it.axis == axis)
                .try_fold(1i64, |acc, it| {
                    let abs = it
                        .stride
                        .checked_abs()
                        .ok_or(LayoutError::Overflow { op: "stride" })?;
                    arith::add(acc, arith::mul(it.extent - 1, abs, "span")?, "span")
                })?;
            let o = layout.offset.get(&axis).copied().unwrap_or(0);
            arith::add(
                reach,
                o.checked_abs()
                    .ok_or(LayoutError::Overflow { op: "offset" })?,
                "span",
            )?;
        }
        Ok(layout)
    }

    /// A layout with only a shard.
    pub fn from_shard(shard: Vec<Iter>) -> Result<Self> {
        Self::new(shard, Vec::new(), BTreeMap::new())
    }

    /// The shard `D` (ordered).
    pub fn shard(&self) -> &[Iter] {
        &self.shard
    }

    /// The replica `R` (a multiset, kept in written order).
    pub fn replica(&self) -> &[Iter] {
        &self.replica
    }

    /// The offset `O` (non-zero entries only).
    pub fn offset(&self) -> &BTreeMap<Axis, i64> {
        &self.offset
    }

    /// Iters of `D` then `R`.
    pub fn iters(&self) -> impl Iterator<Item = &Iter> {
        self.shard.iter().chain(self.replica.iter())
    }

    /// Size of the logical domain, `E = prod e_i` over `D`.
    pub fn size(&self) -> i64 {
        self.shard.iter().map(|it| it.extent).product()
    }

    /// Number of replica vectors, `prod e_t` over `R` (as a multiset; points may repeat).
    pub fn replica_count(&self) -> i64 {
        self.replica.iter().map(|it| it.extent).product()
    }

    /// Every axis the layout mentions (in D, R or O).
    pub fn axes(&self) -> BTreeSet<Axis> {
        self.iters()
            .map(|it| it.axis.clone())
            .chain(self.offset.keys().cloned())
            .collect()
    }

    /// `span_a(L) = 1 + sum over iters of D and R on `a` of (e-1)*|s|` (1 for an absent axis).
    pub fn span(&self, axis: &Axis) -> i64 {
        1 + self
            .iters()
            .filter(|it| &it.axis == axis)
            .map(|it| (it.extent - 1) * it.stride.abs())
            .sum::<i64>()
    }

    /// A point with every axis of the layout at 0.
    fn zero_point(&self) -> Point {
        self.axes().into_iter().map(|a| (a, 0)).collect()
    }

    /// `D(x) + O` over every axis of the layout.
    pub fn shard_point(&self, x: i64) -> Result<Point> {
        shape::check_index(x, self.size())?;
        let mut p = self.zero_point();
        for (a, o) in &self.offset {
            p.insert(a.clone(), *o);
        }
        let mut rest = x;
        for it in self.shard.iter().rev() {
            let digit = rest % it.extent;
            rest /= it.extent;
            // In range by construction (`new` bounded every reachable coordinate).
            *p.get_mut(&it.axis).expect("axis present") += digit * it.stride;
        }
        Ok(p)
    }

    /// The replica vectors `Rset` as a set of points over the layout's axes.
    pub fn replica_set(&self) -> Result<BTreeSet<Point>> {
        let count = self.replica_count();
        if count > MAX_REPLICA_POINTS {
            return Err(LayoutError::invalid(
                "replica",
                format!(
                    "{count} replica vectors exceed the enumeration limit {MAX_REPLICA_POINTS}"
                ),
            ));
        }
        let mut set = BTreeSet::new();
        for r in 0..count {
            let mut p = self.zero_point();
            let mut rest = r;
            for it in self.replica.iter().rev() {
                let digit = rest % it.extent;
                rest /= it.extent;
                *p.get_mut(&it.axis).expect("axis present") += digit * it.stride;
            }
            set.insert(p);
        }
        Ok(set)
    }

    /// `L(x)` for a flat (row-major) logical index. Without replicas `Rset = {0}` and the
    /// image is `{D(x) + O}`, built without the replica set; with them, callers evaluating many
    /// indices should compute [`AxeLayout::replica_set`] once and use
    /// [`AxeLayout::eval_flat_with`].
    pub fn eval_flat(&self, x: i64) -> Result<BTreeSet<Point>> {
        if self.replica.is_empty() {
            return Ok([self.shard_point(x)?].into());
        }
        self.eval_flat_with(x, &self.replica_set()?)
    }

    /// `L(x)` given `replicas`, which must be [`AxeLayout::replica_set`]: `D(x) + O + r` for
    /// every `r` in it.
    pub fn eval_flat_with(&self, x: i64, replicas: &BTreeSet<Point>) -> Result<BTreeSet<Point>> {
        let base = self.shard_point(x)?;
        Ok(replicas
            .iter()
            .map(|r| {
                let mut p = base.clone();
                for (a, v) in r {
                    *p.get_mut(a).expect("axis present") += v;
                }
                p
            })
            .collect())
    }

    /// `L(c)` for a coordinate of an admitted logical shape (row-major flattening).
    pub fn eval(&self, logical_shape: &[i64], coord: &[i64]) -> Result<BTreeSet<Point>> {
        self.check_shape(logical_shape)?;
        self.eval_flat(shape::flatten_row_major(logical_shape, coord)?)
    }

    /// Checks that `prod(shape) == size()`.
    pub fn check_shape(&self, logical_shape: &[i64]) -> Result<()> {
        shape::check_admits(logical_shape, self.size())
    }

    /// True when every iter of D and R and every offset is on axis `m` (a plain memory layout).
    pub fn is_single_axis(&self) -> Option<Axis> {
        let axes = self.axes();
        (axes.len() <= 1).then(|| axes.into_iter().next().unwrap_or_else(Axis::m))
    }
}
