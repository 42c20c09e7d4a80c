//! Slicing a rectangular region (paper appendix E).
//!
//! For a region `[b_k, b_k + n_k)` in each dim of `L`'s shape, find `L'` over shape `n` with
//! `L'(y) = L(b + y)`. Dims are independent, so each grouped block is handled on its own: its
//! iters `(e_1..e_m)` (slowest first) are mixed-radix digits, `b` has digits `d_j`. Sufficient
//! constructions, tried in order:
//! - **greedy peel**: from the fastest digit leftwards, a digit with `d_j = 0` and `e_j | n` is
//!   enumerated whole: keep its iter, `n /= e_j`. If `n` reaches 1, the kept iters are the block.
//! - **no-wrap**: at the pivot `p` (rightmost unpeeled digit), `d_p + n <= e_p`: one iter
//!   `(n, s_p)` followed by the peeled iters.
//! - **one-wrap midpoint**: `n` even, `d_p + n/2 = e_p`, and the left digit has room
//!   (`d_{p-1} + 1 < e_{p-1}`): two chunks of `n/2`, the second one carry further, so
//!   `(2, s_{p-1} - d_p*s_p), (n/2, s_p)` followed by the peeled iters (the step must lie on
//!   one axis).
//!
//! In every case the block's value at `b` joins the offset. Otherwise the region is not a layout
//! of these forms and the answer says so ([`LayoutError::NotASlice`]).
//!
//! Worked example (a test checks it): `S[(4,4,4,4):(64,4,16,1)]` over `[16,16]`, region rows
//! `[2,3)`, cols `[6,10)`. Row block `(4:64, 4:4)`: `n = 1`, offset `2*4 = 8`. Column block
//! `(4:16, 4:1)`: `6` has digits `(1,2)`; nothing peels; the pivot `4:1` wraps (`2+4 > 4`), but
//! `2 + 2 = 4` and `1 + 1 < 4`, so `(2, 16 - 2*1), (2, 1)` with offset `16 + 2`:
//! `S[(2,2):(14,1)] + 26` over `[1,4]` (addresses 26, 27, 40, 41).

use std::collections::BTreeMap;

use super::{group, AxeLayout, Iter};
use crate::arith;
use crate::axis::Axis;
use crate::error::{LayoutError, Result};

/// `L` restricted to `region` (one half-open `(begin, end)` per dim of `shape`), as a layout
/// over the region's shape `end - begin`.
///
/// ```
/// use layout::{axe, notation::axe::{parse, print}};
/// let s = axe::slice(&parse("S[(8,8):(8,1)]")?, &[64], &[(5, 8)])?;
/// assert_eq!(print(&s), "S[3:1] + 5");
/// # Ok::<(), layout::LayoutError>(())
/// ```
pub fn slice(l: &AxeLayout, shape: &[i64], region: &[(i64, i64)]) -> Result<AxeLayout> {
    check_region(shape, region)?;
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
    fn two_wraps_are_not_of_this_form() {
        let e = sl("S[(4,4):(1,4)]", &[16], &[(3, 9)]).unwrap_err();
        assert!(matches!(e, LayoutError::NotASlice { .. }), "{e}");
        assert!(e.to_string().contains("dimension 0"), "{e}");
    }

    #[test]
    fn bad_regions_are_errors() {
        assert!(sl("S[8:1]", &[8], &[(3, 3)]).is_err());
        assert!(sl("S[8:1]", &[8], &[(0, 9)]).is_err());
        assert!(sl("S[8:1]", &[8], &[(0, 2), (0, 1)]).is_err());
    }
}
