//! CuTe hierarchical layouts (NVIDIA CUTLASS) and thread-value (TV) layouts.
//!
//! A layout is a pair of congruent [`IntTuple`]s, shape and stride. An index is turned into a
//! coordinate COLEXICOGRAPHICALLY (first mode fastest): for flat modes `(s_0..s_{n-1})`,
//! `c_0 = i mod s_0`, `c_1 = (i / s_0) mod s_1`, ...; nested modes recurse. The layout maps
//! `L(i) = sum_k c_k * d_k` over the flattened modes.
//!
//! Worked example (a test checks it): `(4, (2, 4)):(2, (1, 8))` at index 13: flattened shape
//! (4,2,4), colex digits (1,1,1), offset `1*2 + 1*1 + 1*8 = 11`.
//!
//! A TV layout is a rank-2 layout `(thread, value) -> flat index` into a tile whose index is
//! itself column-major (`m + M*n` for an M x N tile).
//!
//! The layout algebra (one operation per file, each body mirroring its definition in
//! `spec/cute.md` section 2): [`coalesce`](coalesce()), [`composition`](composition()),
//! [`complement`](complement()), the divides and products, the inverses, the hierarchical
//! helpers of [`hierarchy`], and [`recast`](recast()) between element widths.

use std::fmt;

pub mod cli;
pub mod coalesce;
pub mod complement;
pub mod composition;
pub mod divide;
pub mod hierarchy;
pub mod inverse;
pub mod product;
pub mod recast;
pub mod tiler;

pub use cli::cli_op;
pub use coalesce::{coalesce, coalesce_by_mode};
pub use complement::{complement, complement_shape};
pub use composition::{composition, composition_swizzled, eval_extended};
pub use divide::{flat_divide, logical_divide, tiled_divide, zipped_divide};
pub use hierarchy::{append, flatten, make_layout, pad_rank, select, zip};
pub use inverse::{cutlass_left_inverse, left_inverse, nullspace, right_inverse};
pub use product::{blocked_product, logical_product, raked_product, tiled_product, zipped_product};
pub use recast::{recast, recast_swizzled};
pub use tiler::{
    composition_by, flat_divide_by, logical_divide_by, logical_product_by, parse_tiler,
    tiled_divide_by, tiled_product_by, zipped_divide_by, zipped_product_by, Tiler,
};

use crate::arith;
use crate::error::{LayoutError, Result};
use crate::shape;

/// An integer or a tuple of IntTuples.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum IntTuple {
    /// A leaf.
    Int(i64),
    /// A (possibly empty) tuple.
    Tuple(Vec<IntTuple>),
}

impl IntTuple {
    /// A tuple of leaves.
    pub fn flat(values: &[i64]) -> IntTuple {
        IntTuple::Tuple(values.iter().map(|&v| IntTuple::Int(v)).collect())
    }

    /// The leaves in order (depth-first).
    pub fn leaves(&self) -> Vec<i64> {
        let mut out = Vec::new();
        self.collect_leaves(&mut out);
        out
    }

    fn collect_leaves(&self, out: &mut Vec<i64>) {
        match self {
            IntTuple::Int(v) => out.push(*v),
            IntTuple::Tuple(items) => items.iter().for_each(|t| t.collect_leaves(out)),
        }
    }

    /// Number of top-level modes (1 for a leaf).
    pub fn rank(&self) -> usize {
        match self {
            IntTuple::Int(_) => 1,
            IntTuple::Tuple(items) => items.len(),
        }
    }

    /// The top-level modes (a leaf is its own single mode).
    pub fn modes(&self) -> Vec<IntTuple> {
        match self {
            IntTuple::Int(_) => vec![self.clone()],
            IntTuple::Tuple(items) => items.clone(),
        }
    }

    /// True when `other` has the same tree structure.
    pub fn congruent(&self, other: &IntTuple) -> bool {
        match (self, other) {
            (IntTuple::Int(_), IntTuple::Int(_)) => true,
            (IntTuple::Tuple(a), IntTuple::Tuple(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.congruent(y))
            }
            _ => false,
        }
    }
}

impl fmt::Display for IntTuple {
    /// pycute's text: `(4, (2, 4))`, a 1-tuple as `(8,)`, a leaf as `8`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IntTuple::Int(v) => write!(f, "{v}"),
            IntTuple::Tuple(items) => {
                f.write_str("(")?;
                for (i, t) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{t}")?;
                }
                if items.len() == 1 {
                    f.write_str(",")?;
                }
                f.write_str(")")
            }
        }
    }
}

/// A CuTe layout `shape:stride`. Construct with [`CuteLayout::new`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CuteLayout {
    shape: IntTuple,
    stride: IntTuple,
}

impl CuteLayout {
    /// Checks congruence, extents >= 1, and that every offset fits in i64.
    pub fn new(shape: IntTuple, stride: IntTuple) -> Result<CuteLayout> {
        if !shape.congruent(&stride) {
            return Err(LayoutError::invalid(
                format!("CuTe layout {shape}:{stride}"),
                "shape and stride are not congruent (same nesting and lengths)",
            ));
        }
        let extents = shape.leaves();
        if let Some(i) = extents.iter().position(|&e| e < 1) {
            return Err(LayoutError::invalid(
                format!("CuTe layout {shape}:{stride}"),
                format!("shape leaf {i} is {}, below 1", extents[i]),
            ));
        }
        arith::product(extents.iter().copied(), "CuTe size")?;
        let mut reach = 0i64;
        for (e, d) in extents.iter().zip(stride.leaves()) {
            let term = arith::mul(
                e - 1,
                d.checked_abs()
                    .ok_or(LayoutError::Overflow { op: "stride" })?,
                "CuTe offset",
            )?;
            reach = arith::add(reach, term, "CuTe offset")?;
        }
        Ok(CuteLayout { shape, stride })
    }

    /// Flat layout from leaf lists, e.g. `from_flat(&[4,2], &[2,1])` is `(4,2):(2,1)`.
    pub fn from_flat(shape: &[i64], stride: &[i64]) -> Result<CuteLayout> {
        if shape.len() != stride.len() {
            return Err(LayoutError::invalid(
                "CuTe layout",
                "shape and stride lengths differ",
            ));
        }
        if shape.len() == 1 {
            return CuteLayout::new(IntTuple::Int(shape[0]), IntTuple::Int(stride[0]));
        }
        CuteLayout::new(IntTuple::flat(shape), IntTuple::flat(stride))
    }

    /// The shape.
    pub fn shape(&self) -> &IntTuple {
        &self.shape
    }

    /// The stride.
    pub fn stride(&self) -> &IntTuple {
        &self.stride
    }

    /// `prod(shape)`.
    pub fn size(&self) -> i64 {
        self.shape.leaves().iter().product()
    }

    /// Number of top-level modes.
    pub fn rank(&self) -> usize {
        self.shape.rank()
    }

    /// The flattened modes `(extent, stride)`, first mode first.
    pub fn flat_modes(&self) -> Vec<(i64, i64)> {
        self.shape
            .leaves()
            .into_iter()
            .zip(self.stride.leaves())
            .collect()
    }

    /// Top-level modes as layouts.
    pub fn modes(&self) -> Vec<CuteLayout> {
        self.shape
            .modes()
            .into_iter()
            .zip(self.stride.modes())
            .map(|(s, d)| CuteLayout {
                shape: s,
                stride: d,
            })
            .collect()
    }

    /// Sizes of the top-level modes (the natural logical shape).
    pub fn top_shape(&self) -> Vec<i64> {
        self.modes().iter().map(CuteLayout::size).collect()
    }

    /// `L(i)` for a flat colexicographic index.
    pub fn eval_index(&self, i: i64) -> Result<i64> {
        shape::check_index(i, self.size())?;
        let mut rest = i;
        let mut out = 0i64;
        for (e, d) in self.flat_modes() {
            out += (rest % e) * d;
            rest /= e;
        }
        Ok(out)
    }

    /// `L(i)` for every flat index `i` of the domain, in order: the same values as
    /// [`CuteLayout::eval_index`], computed with one odometer instead of one division chain per
    /// point. `(2,3):(3,1).eval_all() == [0, 3, 1, 4, 2, 5]`.
    pub fn eval_all(&self) -> Vec<i64> {
        let modes = self.flat_modes();
        let mut digits = vec![0i64; modes.len()];
        let mut out = Vec::with_capacity(self.size().max(0) as usize);
        let mut cur = 0i64;
        for _ in 0..self.size() {
            out.push(cur);
            for (k, &(e, d)) in modes.iter().enumerate() {
                digits[k] += 1;
                cur += d;
                if digits[k] < e {
                    break;
                }
                cur -= d * e;
                digits[k] = 0;
            }
        }
        out
    }

    /// `L(c)` for a coordinate over `logical_shape` (column-major flattening, CuTe's order).
    pub fn eval(&self, logical_shape: &[i64], coord: &[i64]) -> Result<i64> {
        self.check_shape(logical_shape)?;
        self.eval_index(shape::flatten_col_major(logical_shape, coord)?)
    }

    /// Checks that `prod(shape) == size()`.
    pub fn check_shape(&self, logical_shape: &[i64]) -> Result<()> {
        shape::check_admits(logical_shape, self.size())
    }

    /// `cosize = max L(i) + 1` over the domain (CuTe's `L(size-1)+1` for non-negative strides).
    pub fn cosize(&self) -> i64 {
        1 + self
            .flat_modes()
            .iter()
            .map(|(e, d)| (e - 1) * d.max(&0))
            .sum::<i64>()
    }
}

impl fmt::Display for CuteLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.shape, self.stride)
    }
}

/// A thread-value layout: `(thread, value) -> index` into a column-major tile.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TvLayout {
    layout: CuteLayout,
    tile: Vec<i64>,
}

impl TvLayout {
    /// Checks rank 2 and that every image lies inside the tile.
    pub fn new(layout: CuteLayout, tile: Vec<i64>) -> Result<TvLayout> {
        if layout.rank() != 2 {
            return Err(LayoutError::invalid(
                format!("TV layout {layout}"),
                format!(
                    "it has {} top-level modes; a TV layout has two, (thread, value)",
                    layout.rank()
                ),
            ));
        }
        let cells = shape::size_of(&tile)?;
        if layout.flat_modes().iter().any(|&(_, d)| d < 0) {
            return Err(LayoutError::invalid(
                format!("TV layout {layout}"),
                "a stride is negative",
            ));
        }
        if layout.cosize() > cells {
            return Err(LayoutError::invalid(
                format!("TV layout {layout}"),
                format!(
                    "it reaches index {} but the tile {tile:?} has {cells} cells",
                    layout.cosize() - 1
                ),
            ));
        }
        Ok(TvLayout { layout, tile })
    }

    /// The underlying `(thread, value) -> index` layout.
    pub fn layout(&self) -> &CuteLayout {
        &self.layout
    }

    /// The tile shape.
    pub fn tile(&self) -> &[i64] {
        &self.tile
    }

    /// Number of threads (size of mode 0).
    pub fn threads(&self) -> i64 {
        self.layout.modes()[0].size()
    }

    /// Number of values per thread (size of mode 1).
    pub fn values(&self) -> i64 {
        self.layout.modes()[1].size()
    }

    /// The column-major tile index every `(thread, value)` holds, thread-major
    /// (`index = thread * values + value`): [`TvLayout::eval`] flattened, for all points at once.
    pub fn eval_all(&self) -> Vec<i64> {
        let modes = self.layout.modes();
        let (t, v) = (modes[0].eval_all(), modes[1].eval_all());
        t.iter()
            .flat_map(|&a| v.iter().map(move |&b| a + b))
            .collect()
    }

    /// The tile coordinate that `(thread, value)` holds.
    pub fn eval(&self, thread: i64, value: i64) -> Result<Vec<i64>> {
        let modes = self.layout.modes();
        let t = modes[0].eval_index(thread)?;
        let v = modes[1].eval_index(value)?;
        shape::unflatten_col_major(&self.tile, t + v)
    }
}

impl fmt::Display for TvLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} -> {}", self.layout, IntTuple::flat(&self.tile))
    }
}

#[cfg(test)]
mod eval_all_tests {
    use super::*;

    #[test]
    fn eval_all_agrees_with_eval_index_everywhere() {
        for (sh, st) in [
            (vec![2, 3], vec![3, 1]),
            (vec![4, 8, 2, 2], vec![32, 1, 16, 8]),
            (vec![3, 1, 5], vec![0, 7, 2]),
            (vec![7], vec![1]),
        ] {
            let l = CuteLayout::from_flat(&sh, &st).unwrap();
            let all = l.eval_all();
            assert_eq!(all.len() as i64, l.size());
            for (i, &o) in all.iter().enumerate() {
                assert_eq!(o, l.eval_index(i as i64).unwrap(), "{l} at {i}");
            }
        }
        assert_eq!(
            CuteLayout::from_flat(&[2, 3], &[3, 1]).unwrap().eval_all(),
            [0, 3, 1, 4, 2, 5]
        );
    }

    #[test]
    fn tv_eval_all_agrees_with_eval() {
        let tv = TvLayout::new(
            CuteLayout::new(
                IntTuple::Tuple(vec![IntTuple::flat(&[4, 8]), IntTuple::flat(&[2, 2])]),
                IntTuple::Tuple(vec![IntTuple::flat(&[32, 1]), IntTuple::flat(&[16, 8])]),
            )
            .unwrap(),
            vec![16, 8],
        )
        .unwrap();
        let all = tv.eval_all();
        for t in 0..32 {
            for v in 0..4 {
                let c = tv.eval(t, v).unwrap();
                assert_eq!(all[(t * 4 + v) as usize], c[0] + 16 * c[1]);
            }
        }
    }
}
