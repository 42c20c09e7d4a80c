//! Grouping a layout by a logical shape (paper appendix B).
//!
//! Split `(e, s@a)` with `e = e'*e''` into `(e', e''*s@a), (e'', s@a)`: the row-major digit
//! `x = x'*e'' + x''` contributes `x*s = x'*(e''*s) + x''*s`, so the map is unchanged; fuse (D1)
//! is the converse. A layout groups by a shape `S` when its iters, fused and split but never
//! reordered, fall into consecutive blocks whose extent products are `S_0, S_1, ...`. We fuse
//! everything D1 allows (the normalized shard of [`super::canonicalize()`]) and then split at each
//! boundary `S_0*...*S_d`: a boundary inside an iter must be a multiple of the iters before it
//! and divide the iters up to and including it, otherwise no grouping exists. The result has
//! the fewest iters of all groupings.
//!
//! Several shapes group at once by their minimal common refinement: the union of their
//! boundaries, which must form a divisor chain. Worked example (a test checks it): `S[30:1]` by
//! `[6,5]` (boundary 6) and `[2,15]` (boundary 2): boundaries `2 | 6 | 30` give the refinement
//! `[2,3,5]` and the layout `S[(2,3,5):(15,5,1)]`; `[3,4]` and `[2,6]` have boundaries 2 and 3,
//! and 3 is not a multiple of 2, so they have no common refinement.

use std::ops::Range;

use super::canonicalize::normalize_shard;
use super::{AxeLayout, Iter};
use crate::arith;
use crate::error::{LayoutError, Result};
use crate::notation;
use crate::shape;

/// A layout grouped by a shape: same map, iters split so that `blocks[d]` covers dim `d`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Grouped {
    /// The grouped layout (same map; replica and offset unchanged).
    pub layout: AxeLayout,
    /// The shape it is grouped by.
    pub shape: Vec<i64>,
    /// For each dim, the range of shard iters whose extents multiply to that dim.
    pub blocks: Vec<Range<usize>>,
}

impl Grouped {
    /// The iters of dim `d`'s block.
    pub fn block(&self, d: usize) -> &[Iter] {
        &self.layout.shard()[self.blocks[d].clone()]
    }
}

/// A layout grouped by several shapes at once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupedMany {
    /// The layout grouped by the shapes' common refinement.
    pub grouped: Grouped,
    /// For each input shape, for each of its dims, the range of shard iters of that dim.
    pub blocks: Vec<Vec<Range<usize>>>,
}

/// Groups `l` by `shape`.
///
/// ```
/// use layout::{axe, notation::axe::{parse, print}};
/// let g = axe::group(&parse("S[(4,6):(6,1)]")?, &[8, 3])?;
/// assert_eq!(print(&g.layout), "S[(8,3):(3,1)]");
/// let g = axe::group(&parse("S[(4,6):(1,4)]")?, &[8, 3])?;
/// assert_eq!(print(&g.layout), "S[(4,2,3):(1,12,4)]");
/// assert_eq!(g.blocks, [0..2, 2..3]);
/// # Ok::<(), layout::LayoutError>(())
/// ```
pub fn group(l: &AxeLayout, shape: &[i64]) -> Result<Grouped> {
    l.check_shape(shape)?;
    let cuts = boundaries(shape)?;
    let shard = split_at(&normalize_shard(l.shard())?, &cuts, |cut, why| {
        let dim = cuts_dim(shape, cut);
        LayoutError::NotGroupable {
            shape: shape.to_vec(),
            why: format!("dimension {dim} ends at index {cut}, {why}"),
        }
    })?;
    let blocks = block_ranges(&shard, shape)?;
    Ok(Grouped {
        layout: AxeLayout::new(shard, l.replica().to_vec(), l.offset().clone())?,
        shape: shape.to_vec(),
        blocks,
    })
}

/// Groups `l` by every shape in `shapes` at once (their [`common_refinement`]).
///
/// ```
/// use layout::{axe, notation::axe::{parse, print}};
/// let g = axe::group_many(&parse("S[30:1]")?, &[vec![6, 5], vec![2, 15]])?;
/// assert_eq!(print(&g.grouped.layout), "S[(2,3,5):(15,5,1)]");
/// assert_eq!(g.blocks, [vec![0..2, 2..3], vec![0..1, 1..3]]);
/// # Ok::<(), layout::LayoutError>(())
/// ```
pub fn group_many(l: &AxeLayout, shapes: &[Vec<i64>]) -> Result<GroupedMany> {
    let refined = common_refinement(shapes)?;
    let grouped = group(l, &refined)?;
    let blocks = shapes
        .iter()
        .map(|s| block_ranges(grouped.layout.shard(), s))
        .collect::<Result<_>>()?;
    Ok(GroupedMany { grouped, blocks })
}

/// The minimal common refinement of shapes of one size: the sorted union of their boundaries
/// `S_0*...*S_d`, which must form a divisor chain.
///
/// ```
/// use layout::axe;
/// assert_eq!(axe::common_refinement(&[vec![6, 5], vec![2, 15]])?, [2, 3, 5]);
/// let e = axe::common_refinement(&[vec![3, 4], vec![2, 6]]).unwrap_err().to_string();
/// assert!(e.contains("boundary 3"), "{e}");
/// # Ok::<(), layout::LayoutError>(())
/// ```
pub fn common_refinement(shapes: &[Vec<i64>]) -> Result<Vec<i64>> {
    let Some(first) = shapes.first() else {
        return Err(LayoutError::invalid(
            "shapes",
            "at least one shape is needed",
        ));
    };
    let size = shape::size_of(first)?;
    let mut cuts: Vec<(i64, usize, usize)> = Vec::new(); // (boundary, shape, dim)
    for (i, s) in shapes.iter().enumerate() {
        if shape::size_of(s)? != size {
            return Err(LayoutError::NotGroupable {
                shape: s.clone(),
                why: format!("its size differs from the size {size} of {first:?}"),
            });
        }
        let mut p = 1i64;
        for (d, &e) in s.iter().enumerate() {
            p = arith::mul(p, e, "shape boundary")?;
            cuts.push((p, i, d));
        }
    }
    cuts.sort();
    let mut refined = Vec::new();
    let mut prev = (1i64, None::<(usize, usize)>);
    for (cut, i, d) in cuts {
        if cut == prev.0 {
            continue;
        }
        if cut % prev.0 != 0 {
            let (pi, pd) = prev.1.expect("boundary 1 divides everything");
            return Err(LayoutError::NotGroupable {
                shape: shapes[i].clone(),
                why: format!(
                    "its boundary {cut} (after dimension {d}) is not a multiple of the \
                     boundary {} (after dimension {pd} of {:?}): the shapes have no common \
                     refinement",
                    prev.0, shapes[pi]
                ),
            });
        }
        refined.push(cut / prev.0);
        prev = (cut, Some((i, d)));
    }
    Ok(refined)
}

/// The distinct boundaries `S_0*...*S_d` strictly between 1 and the size.
fn boundaries(shape: &[i64]) -> Result<Vec<i64>> {
    let mut out: Vec<i64> = Vec::new();
    let mut p = 1i64;
    for &e in shape {
        p = arith::mul(p, e, "shape boundary")?;
        if p > 1 && out.last() != Some(&p) {
            out.push(p);
        }
    }
    Ok(out)
}

/// The first dim whose boundary is `cut`.
fn cuts_dim(shape: &[i64], cut: i64) -> usize {
    let mut p = 1i64;
    shape
        .iter()
        .position(|&e| {
            p = p.saturating_mul(e);
            p == cut
        })
        .unwrap_or(0)
}

/// Splits iters (no unit extents) so that each cut falls between two iters.
fn split_at(
    shard: &[Iter],
    cuts: &[i64],
    fail: impl Fn(i64, String) -> LayoutError,
) -> Result<Vec<Iter>> {
    let mut out = Vec::new();
    let mut before = 1i64; // product of the extents already emitted
    let mut cuts = cuts.iter().copied().peekable();
    for it in shard {
        let mut cur = it.clone();
        let end = arith::mul(before, cur.extent, "grouping")?;
        while let Some(&cut) = cuts.peek() {
            if cut >= end {
                break;
            }
            cuts.next();
            if cut % before != 0 || cur.extent % (cut / before) != 0 {
                return Err(fail(
                    cut,
                    format!(
                        "inside iter {}:{}@{} which starts at index {before}; {cut} is not \
                         {before} times a divisor of {}",
                        cur.extent, cur.stride, cur.axis, cur.extent
                    ),
                ));
            }
            let outer = cut / before;
            let inner = cur.extent / outer;
            out.push(Iter::new(
                outer,
                arith::mul(cur.stride, inner, "iter split")?,
                cur.axis.clone(),
            ));
            before = cut;
            cur = Iter::new(inner, cur.stride, cur.axis);
        }
        before = arith::mul(before, cur.extent, "grouping")?;
        out.push(cur);
        if cuts.peek() == Some(&before) {
            cuts.next();
        }
    }
    Ok(out)
}

/// The iter range of each dim of `shape`, when every boundary falls between iters.
fn block_ranges(shard: &[Iter], shape: &[i64]) -> Result<Vec<Range<usize>>> {
    let mut ranges = Vec::with_capacity(shape.len());
    let (mut start, mut i, mut p, mut q) = (0usize, 0usize, 1i64, 1i64);
    for &e in shape {
        p = arith::mul(p, e, "shape boundary")?;
        while q < p && i < shard.len() {
            q = arith::mul(q, shard[i].extent, "grouping")?;
            i += 1;
        }
        if q != p {
            return Err(LayoutError::NotGroupable {
                shape: shape.to_vec(),
                why: format!(
                    "boundary {p} falls inside an iter of {}",
                    notation::axe::print(&AxeLayout::from_shard(shard.to_vec())?)
                ),
            });
        }
        ranges.push(start..i);
        start = i;
    }
    Ok(ranges)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notation::axe::{parse, print};

    #[test]
    fn group_by_two_shapes_uses_the_common_refinement() {
        let g = group_many(&parse("S[30:1]").unwrap(), &[vec![6, 5], vec![2, 15]]).unwrap();
        assert_eq!(print(&g.grouped.layout), "S[(2,3,5):(15,5,1)]");
        assert_eq!(g.grouped.shape, [2, 3, 5]);
    }

    #[test]
    fn incompatible_shapes_name_the_boundary() {
        let e = group_many(&parse("S[12:1]").unwrap(), &[vec![3, 4], vec![2, 6]])
            .unwrap_err()
            .to_string();
        assert!(e.contains("boundary 3") && e.contains("boundary 2"), "{e}");
    }

    #[test]
    fn ungroupable_layout_names_the_dimension() {
        let e = group(&parse("S[(2,3):(1,2)]").unwrap(), &[3, 2])
            .unwrap_err()
            .to_string();
        assert!(e.contains("dimension 0 ends at index 3"), "{e}");
    }

    #[test]
    fn unit_dims_get_empty_blocks() {
        let g = group(&parse("S[(2,1,3):(3,7,1)]").unwrap(), &[1, 6, 1]).unwrap();
        assert_eq!(print(&g.layout), "S[6:1]");
        assert_eq!(g.blocks, [0..0, 0..1, 1..1]);
    }

    #[test]
    fn wrong_size_is_a_shape_error() {
        assert!(group(&parse("S[6:1]").unwrap(), &[4]).is_err());
        assert!(group(&parse("S[6:1]").unwrap(), &[0, 6]).is_err());
    }
}
