//! Slicing a rectangular region (paper appendix E).
//!
//! For a region `[b_k, b_k + n_k)` in each dim of `L`'s shape, find `L'` over shape `n` with
//! `L'(y) = L(b + y)`. When `L` groups by the shape, dims are independent, so each grouped block
//! is handled on its own: its iters `(e_1..e_m)` (slowest first) are mixed-radix digits, `b` has
//! digits `d_j`. Sufficient constructions, tried in order:
//! - **greedy peel**: from the fastest digit leftwards, a digit with `d_j = 0` and `e_j | n` is
//!   enumerated whole: keep its iter, `n /= e_j`. If `n` reaches 1, the kept iters are the block.
//! - **no-wrap**: at the pivot `p` (rightmost unpeeled digit), `d_p + n <= e_p`: one iter
//!   `(n, s_p)` followed by the peeled iters.
//! - **one-wrap midpoint**: `n` even, `d_p + n/2 = e_p`, and the left digit has room
//!   (`d_{p-1} + 1 < e_{p-1}`): two chunks of `n/2`, the second one carry further, so
//!   `(2, s_{p-1} - d_p*s_p), (n/2, s_p)` followed by the peeled iters (the step must lie on
//!   one axis).
//!
//! In every case the block's value at `b` joins the offset.
//!
//! When `L` does not group by the shape, or a block fits none of these forms, the region's own
//! values decide: its shard points in row-major order over `n` go to [`shard_of`], which finds a
//! shard with exactly those values or proves that none exists. A replica only translates each
//! element's set, so `L'` keeps `L`'s replica and no other replica could do better (two finite
//! sets differ by at most one translation). A "no" ([`LayoutError::NotASlice`]) therefore means
//! that no Axe layout over `n` has the region's map. This decision enumerates the region, so a
//! region of more than [`MAX_SLICE_POINTS`] elements that the constructions do not cover is
//! [`LayoutError::Undecided`], never a "no".
//!
//! Every answer is checked by plain evaluation before it is returned: `L'(y)` and `L(b + y)` have
//! equal shard points (offsets included) at every `y`, and `L'` has `L`'s replica. A region of
//! more than [`MAX_SLICE_POINTS`] elements (only the constructions answer those; both sides are
//! then sums over dims) is checked along each dim's line through `b`, up to that many elements.
//!
//! Worked example (a test checks it): `S[(4,4,4,4):(64,4,16,1)]` over `[16,16]`, region rows
//! `[2,3)`, cols `[6,10)`. Row block `(4:64, 4:4)`: `n = 1`, offset `2*4 = 8`. Column block
//! `(4:16, 4:1)`: `6` has digits `(1,2)`; nothing peels; the pivot `4:1` wraps (`2+4 > 4`), but
//! `2 + 2 = 4` and `1 + 1 < 4`, so `(2, 16 - 2*1), (2, 1)` with offset `16 + 2`:
//! `S[(2,2):(14,1)] + 26` over `[1,4]` (addresses 26, 27, 40, 41). And one the constructions do
//! not cover: `S[(6,2):(5,5)]` over `[12]`, region `[5,9)`, has the values `15, 15, 20, 20`,
//! the layout `S[(2,2):(5,0)] + 15`.

use std::collections::BTreeMap;

use super::shard_of::{shard_of, Recognized};
use super::{group, AxeLayout, Iter};
use crate::arith;
use crate::axis::{Axis, Point};
use crate::error::{LayoutError, Result};
use crate::notation::axe::print;
use crate::shape;

/// Largest region (in elements) that [`slice()`] decides, and checks, element by element: 2^20.
pub const MAX_SLICE_POINTS: i64 = 1 << 20;

/// `L` restricted to `region` (one half-open `(begin, end)` per dim of `shape`), as a layout
/// over the region's shape `end - begin`. [`LayoutError::NotASlice`] when no layout has that
/// map; [`LayoutError::Undecided`] past [`MAX_SLICE_POINTS`] where the constructions fail.
///
/// ```
/// use layout::{axe, notation::axe::{parse, print}};
/// let s = axe::slice(&parse("S[(8,8):(8,1)]")?, &[64], &[(5, 8)])?;
/// assert_eq!(print(&s), "S[3:1] + 5");
/// let s = axe::slice(&parse("S[(6,2):(5,5)]")?, &[12], &[(5, 9)])?;
/// assert_eq!(print(&s), "S[(2,2):(5,0)] + 15");
/// # Ok::<(), layout::LayoutError>(())
/// ```
pub fn slice(l: &AxeLayout, shape: &[i64], region: &[(i64, i64)]) -> Result<AxeLayout> {
    check_region(shape, region)?;
    l.check_shape(shape)?;
    let sliced = match by_blocks(l, shape, region) {
        Err(e @ (LayoutError::NotGroupable { .. } | LayoutError::NotASlice { .. })) => {
            by_values(l, shape, region, &e)?
        }
        r => r?,
    };
    check_slice(l, shape, region, &sliced)?;
    Ok(sliced)
}

/// The constructions of the module doc, block by block of `L` grouped by `shape`.
fn by_blocks(l: &AxeLayout, shape: &[i64], region: &[(i64, i64)]) -> Result<AxeLayout> {
    let g = group(l, shape)?;
    let mut shard = Vec::new();
    let mut offset = l.offset().clone();
    for (k, &(b, end)) in region.iter().enumerate() {
        let (iters, origin) = slice_block(k, g.block(k), b, end - b)?;
        shard.extend(iters);
        for (a, v) in origin {
            let slot = offset.entry(a).or_insert(0);
            *slot = arith::add(*slot, v, "slice offset")?;
        }
    }
    AxeLayout::new(shard, l.replica().to_vec(), offset)
}

/// The region's values decide: its shard points, row-major over the region's shape, are a
/// shard ([`shard_of`]) or no layout has them. `constructions` is why the blocks did not answer.
fn by_values(
    l: &AxeLayout,
    shape: &[i64],
    region: &[(i64, i64)],
    constructions: &LayoutError,
) -> Result<AxeLayout> {
    let sub = sizes(region);
    let count = shape::size_of(&sub)?;
    if count > MAX_SLICE_POINTS {
        return Err(LayoutError::Undecided {
            reason: format!(
                "slice: {constructions}; deciding from the region's values enumerates its \
                 {count} elements, past the limit {MAX_SLICE_POINTS}"
            ),
        });
    }
    let axes: Vec<Axis> = l.axes().into_iter().collect();
    let point = |y: i64| -> Result<Point> { l.shard_point(index_in(shape, region, &sub, y)?) };
    let values = |y: i64| -> Result<Vec<i64>> {
        let p = point(y)?;
        Ok(axes
            .iter()
            .map(|a| p.get(a).copied().unwrap_or(0))
            .collect())
    };
    match shard_of(&axes, count, values)? {
        Recognized::Shard(d) => AxeLayout::new(d, l.replica().to_vec(), point(0)?),
        Recognized::NotAShard(why) => Err(LayoutError::NotASlice {
            reason: format!(
                "no layout over {sub:?} has the region's values (indices row-major over \
                 {sub:?}): {why}"
            ),
        }),
    }
}

/// Checks `s(y) = l(b + y)` by plain evaluation: equal shard points (zero coordinates aside) and
/// the same replica. Every `y` up to [`MAX_SLICE_POINTS`] elements; past it, each dim's line
/// through `b` (both sides are then sums over dims), up to that many elements each.
fn check_slice(l: &AxeLayout, shape: &[i64], region: &[(i64, i64)], s: &AxeLayout) -> Result<()> {
    let wrong = |why: String| {
        LayoutError::invalid(
            "slice",
            format!("internal error: the answer {} {why}; refused", print(s)),
        )
    };
    if s.replica() != l.replica() {
        return Err(wrong("changed the replica".into()));
    }
    let sub = sizes(region);
    let count = shape::size_of(&sub)?;
    let ys: Vec<i64> = if count <= MAX_SLICE_POINTS {
        (0..count).collect()
    } else {
        let mut ys = Vec::new();
        let mut step = count;
        for &n in &sub {
            step /= n;
            ys.extend((0..n.min(MAX_SLICE_POINTS)).map(|i| i * step));
        }
        ys
    };
    for y in ys {
        let want = nonzero(l.shard_point(index_in(shape, region, &sub, y)?)?);
        let got = nonzero(s.shard_point(y)?);
        if got != want {
            return Err(wrong(format!(
                "gives {got:?} at region index {y}, where the layout gives {want:?}"
            )));
        }
    }
    Ok(())
}

/// The extents `end - begin` of the region.
fn sizes(region: &[(i64, i64)]) -> Vec<i64> {
    region.iter().map(|(b, e)| e - b).collect()
}

/// `L`'s flat index of the region's row-major index `y` (the coordinate `b + y`).
fn index_in(shape: &[i64], region: &[(i64, i64)], sub: &[i64], y: i64) -> Result<i64> {
    let c: Vec<i64> = shape::unflatten_row_major(sub, y)?
        .iter()
        .zip(region)
        .map(|(y, (b, _))| y + b)
        .collect();
    shape::flatten_row_major(shape, &c)
}

fn nonzero(p: Point) -> Point {
    p.into_iter().filter(|(_, v)| *v != 0).collect()
}

/// A slice of a swizzled layout `Sw o L`: `L` is sliced as above (through its Axe form) and the
/// region's starting address becomes the offset under the swizzle, `Sw o o o L'`, which CuTe
/// writes for a sliced swizzled tensor. The swizzle is not moved: it acts on the address.
///
/// ```
/// use layout::axe::slice_swizzled;
/// use layout::notation::cute::parse_swizzled;
/// let s = parse_swizzled("Sw<3,3,3> o (8,64):(64,1)")?;
/// let rows = slice_swizzled(&s, &[8, 64], &[(2, 4), (0, 64)])?;
/// assert_eq!(rows.to_string(), "Sw<3,3,3> o 128 o (2, 64):(64, 1)");
/// # Ok::<(), layout::LayoutError>(())
/// ```
pub fn slice_swizzled(
    s: &crate::swizzle::SwizzledLayout,
    shape: &[i64],
    region: &[(i64, i64)],
) -> Result<crate::swizzle::SwizzledLayout> {
    check_region(shape, region)?;
    let a = crate::convert::cute_to_axe(s.layout(), Some(shape))?;
    let sliced = slice(&a, shape, region)?;
    let start = sliced.offset().get(&Axis::m()).copied().unwrap_or(0);
    let plain = AxeLayout::new(sliced.shard().to_vec(), Vec::new(), BTreeMap::new())?;
    let sub: Vec<i64> = region.iter().map(|(b, e)| e - b).collect();
    let inner = crate::convert::axe_to_cute(&plain, Some(&sub))?;
    crate::swizzle::SwizzledLayout::with_offset(
        *s.swizzle(),
        arith::add(s.offset(), start, "slice offset")?,
        inner,
    )
}

fn check_region(shape: &[i64], region: &[(i64, i64)]) -> Result<()> {
    if region.len() != shape.len() {
        return Err(LayoutError::invalid(
            "region",
            format!(
                "it has {} dims but the shape {shape:?} has {}",
                region.len(),
                shape.len()
            ),
        ));
    }
    for (k, (&(b, e), &n)) in region.iter().zip(shape).enumerate() {
        if !(0 <= b && b < e && e <= n) {
            return Err(LayoutError::invalid(
                "region",
                format!("dim {k} is [{b}, {e}), not a non-empty part of [0, {n})"),
            ));
        }
    }
    Ok(())
}

/// One block: the iters over `[0, n)` and the block's value at `b`.
fn slice_block(
    k: usize,
    block: &[Iter],
    b: i64,
    n: i64,
) -> Result<(Vec<Iter>, BTreeMap<Axis, i64>)> {
    let digits = digits_of(block, b);
    let mut origin = BTreeMap::new();
    for (it, &d) in block.iter().zip(&digits) {
        let slot = origin.entry(it.axis.clone()).or_insert(0);
        *slot = arith::add(
            *slot,
            arith::mul(d, it.stride, "slice offset")?,
            "slice offset",
        )?;
    }
    let (mut rest, mut peeled, mut p) = (n, Vec::new(), block.len());
    while rest > 1 && p > 0 && digits[p - 1] == 0 && rest % block[p - 1].extent == 0 {
        p -= 1;
        rest /= block[p].extent;
        peeled.push(block[p].clone());
    }
    peeled.reverse();
    if rest == 1 {
        return Ok((peeled, origin));
    }
    let fail = |why: String| LayoutError::NotASlice {
        reason: format!("dimension {k}, region [{b}, {}): {why}", b + n),
    };
    let Some(pivot) = p.checked_sub(1) else {
        return Err(fail("the region runs past the block".into()));
    };
    let (piv, d) = (&block[pivot], digits[pivot]);
    let mut out = Vec::new();
    if d + rest <= piv.extent {
        out.push(Iter::new(rest, piv.stride, piv.axis.clone()));
    } else if let Some(step) = one_wrap_step(block, &digits, pivot, rest)? {
        out.push(step);
        out.push(Iter::new(rest / 2, piv.stride, piv.axis.clone()));
    } else {
        return Err(fail(format!(
            "after peeling, {rest} steps of iter {}:{}@{} from digit {d} wrap, and neither \
             no-wrap ({d} + {rest} <= {}) nor the one-wrap midpoint ({d} + {rest}/2 = {}, room \
             in the digit to its left, one axis) holds",
            piv.extent, piv.stride, piv.axis, piv.extent, piv.extent
        )));
    }
    out.extend(peeled);
    Ok((out, origin))
}

/// The chunk step `(2, s_{p-1} - d_p*s_p)` when the midpoint form applies.
fn one_wrap_step(block: &[Iter], digits: &[i64], p: usize, n: i64) -> Result<Option<Iter>> {
    let (piv, d) = (&block[p], digits[p]);
    if n % 2 != 0 || d + n / 2 != piv.extent || p == 0 || digits[p - 1] + 1 >= block[p - 1].extent {
        return Ok(None);
    }
    let left = &block[p - 1];
    let back = arith::mul(d, piv.stride, "slice step")?;
    let step = if left.axis == piv.axis || back == 0 {
        Iter::new(
            2,
            arith::sub(left.stride, back, "slice step")?,
            left.axis.clone(),
        )
    } else if left.stride == 0 {
        Iter::new(2, arith::sub(0, back, "slice step")?, piv.axis.clone())
    } else {
        return Ok(None);
    };
    Ok(Some(step))
}

/// Row-major digits of `x` in the block's extents.
fn digits_of(block: &[Iter], x: i64) -> Vec<i64> {
    let mut rest = x;
    let mut digits: Vec<i64> = block
        .iter()
        .rev()
        .map(|it| {
            let d = rest % it.extent;
            rest /= it.extent;
            d
        })
        .collect();
    digits.reverse();
    digits
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notation::axe::{parse, print};

    fn sl(l: &str, shape: &[i64], region: &[(i64, i64)]) -> Result<String> {
        slice(&parse(l).unwrap(), shape, region).map(|s| print(&s))
    }

    #[test]
    fn slice_matches_the_spec_vectors() {
        assert_eq!(
            sl("S[(8,8):(8,1)]", &[64], &[(5, 8)]).unwrap(),
            "S[3:1] + 5"
        );
        assert_eq!(
            sl("S[(4,4,4,4):(64,4,16,1)]", &[16, 16], &[(2, 3), (6, 10)]).unwrap(),
            "S[(2,2):(14,1)] + 26"
        );
        assert_eq!(
            sl("S[(2,8,3,8):(192,8,64,1)]", &[16, 24], &[(2, 6), (4, 12)]).unwrap(),
            "S[(4,2,4):(8,60,1)] + 20"
        );
    }

    #[test]
    fn whole_region_peels_everything() {
        assert_eq!(
            sl("S[(4,3):(1,4)] + R[2:1@laneid]", &[4, 3], &[(0, 4), (0, 3)]).unwrap(),
            "S[(4,3):(1,4)] + R[2:1@laneid]"
        );
    }

    #[test]
    fn regions_the_constructions_miss_are_decided_by_their_values() {
        // S[(2,3):(5,1)] does not group by [3,2]: its values row-major are 0, 1, 2, 5, 6, 7,
        // so (1,1) is index 3, offset 5.
        assert_eq!(
            sl("S[(2,3):(5,1)]", &[3, 2], &[(1, 2), (1, 2)]).unwrap(),
            "S[():()] + 5"
        );
        assert_eq!(
            sl("S[(2,3):(5,1)]", &[3, 2], &[(0, 3), (0, 2)]).unwrap(),
            "S[(2,3):(5,1)]"
        );
        // Indices 5..9 of S[(6,2):(5,5)] are 15, 15, 20, 20 (the module doc's example).
        assert_eq!(
            sl("S[(6,2):(5,5)]", &[12], &[(5, 9)]).unwrap(),
            "S[(2,2):(5,0)] + 15"
        );
        // Replica, offset and other axes stay.
        let l = "S[(2,3):(5,1@laneid)] + R[2:7] + 1@warpid";
        assert_eq!(sl(l, &[3, 2], &[(0, 3), (0, 2)]).unwrap(), l);
    }

    #[test]
    fn a_region_no_layout_has_is_no_with_the_failing_index() {
        // Rows 0..2 of S[(2,3):(5,1)] over [3,2]: 0, 1, 2, 5 (a run of 3 in 4 elements).
        let e = sl("S[(2,3):(5,1)]", &[3, 2], &[(0, 2), (0, 2)]).unwrap_err();
        assert!(matches!(e, LayoutError::NotASlice { .. }), "{e}");
        assert!(e.to_string().contains("3 does not divide the 4"), "{e}");
        // Indices 3..9 of S[(4,4):(1,4)] wrap twice: 12, 1, 5, 9, 13, 2.
        let e = sl("S[(4,4):(1,4)]", &[16], &[(3, 9)]).unwrap_err();
        assert!(matches!(e, LayoutError::NotASlice { .. }), "{e}");
        assert!(
            e.to_string().contains("index 3 lies -3@m from index 0"),
            "{e}"
        );
    }

    #[test]
    fn a_large_region_the_constructions_miss_is_undecided_not_no() {
        let big = MAX_SLICE_POINTS;
        let l = format!("S[(2,3,{big}):({},{big},1)]", 5 * big);
        let e = sl(&l, &[3, 2 * big], &[(0, 3), (0, 2 * big)]).unwrap_err();
        assert!(matches!(e, LayoutError::Undecided { .. }), "{e}");
        assert!(e.to_string().contains("past the limit"), "{e}");
        // The constructions still answer large regions of layouts that group.
        let s = sl(&l, &[2, 3 * big], &[(1, 2), (0, 3 * big)]).unwrap();
        assert_eq!(s, format!("S[3145728:1] + {}", 5 * big));
    }

    #[test]
    fn bad_regions_are_errors() {
        assert!(sl("S[8:1]", &[8], &[(3, 3)]).is_err());
        assert!(sl("S[8:1]", &[8], &[(0, 9)]).is_err());
        assert!(sl("S[8:1]", &[8], &[(0, 2), (0, 1)]).is_err());
    }
}
