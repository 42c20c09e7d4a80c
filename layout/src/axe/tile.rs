//! Tiling (Kronecker product; paper appendix C).
//!
//! Inner `B` over shape `SB` and outer `A` over shape `SA` of the same rank `r`. The tile has
//! shape `SA_k*SB_k` per dim; coordinate `i_k = x_k*SB_k + y_k` maps to
//! `f(i) = f_A(x) ⊙ span(B) + f_B(y)`, where `span(B)` is B's axis-wise span (see
//! [`super::span()`]) and `⊙` multiplies axis by axis, so the copies of B never overlap.
//! Construction: group both by their shapes; for each dim `k` append A's block `k` with every
//! stride `s@a` scaled to `s*span_a(B)@a`, then B's block `k`. `R = scaled(R_A) ∪ R_B` and
//! `O = O_A ⊙ span(B) + O_B`. Where a factor does not group by its shape, only the boundaries
//! the interleaving uses are needed: parts of extent 1 drop out and adjacent parts of one factor
//! stay together (`runs`), so outer `S[(4,3):(6,5)]` over `[3,4,1]` tiles inner `[1,1,2]`.
//!
//! Worked example (a test checks it): inner `S[(2,4):(1,2)]` (shape `[2,4]`, span 8) tiled by
//! outer `S[(8,8):(8,1)]` (shape `[8,8]`) gives blocks `(8:64, 2:1)` and `(8:8, 4:2)`, i.e.
//! `S[(8,2,8,4):(64,1,8,2)]`, canonically `S[(8,2,32):(64,1,2)]` over shape `[16,32]`.

use std::collections::BTreeMap;

use super::span::{span_at, span_vector};
use super::{group, AxeLayout, Iter};
use crate::arith;
use crate::axis::Axis;
use crate::error::{LayoutError, Result};

/// `tile(inner, outer)` over shapes `inner_shape` and `outer_shape` (same rank); the result's
/// shape is `outer_shape[k] * inner_shape[k]` per dim ([`tile_shape`]).
///
/// ```
/// use layout::{axe, notation::axe::{parse, print}};
/// let t = axe::tile(&parse("S[(2,4):(1,2)]")?, &parse("S[(8,8):(8,1)]")?, &[2, 4], &[8, 8])?;
/// assert_eq!(print(&t), "S[(8,2,8,4):(64,1,8,2)]");
/// assert_eq!(print(&axe::canonicalize(&t)?.layout), "S[(8,2,32):(64,1,2)]");
/// # Ok::<(), layout::LayoutError>(())
/// ```
pub fn tile(
    inner: &AxeLayout,
    outer: &AxeLayout,
    inner_shape: &[i64],
    outer_shape: &[i64],
) -> Result<AxeLayout> {
    same_rank(inner_shape, outer_shape)?;
    let spans = span_vector(inner)?;
    let shard = interleave(outer, inner, outer_shape, inner_shape, &|it| {
        scale_iters(it, &spans)
    })?;
    let mut replica = scale_iters(outer.replica(), &spans)?;
    replica.extend(inner.replica().iter().cloned());
    let mut offset = scale_offset(outer.offset(), &spans)?;
    add_offset(&mut offset, inner.offset())?;
    AxeLayout::new(shard, replica, offset)
}

/// The shard of a tile or a direct sum: for each dim, the slower factor's block (through
/// `slow_map`: the span scaling of a tile) then the faster factor's. Where a factor does not
/// group by its shape, by the [`runs`] only.
pub(crate) fn interleave(
    slow: &AxeLayout,
    fast: &AxeLayout,
    slow_shape: &[i64],
    fast_shape: &[i64],
    slow_map: &dyn Fn(&[Iter]) -> Result<Vec<Iter>>,
) -> Result<Vec<Iter>> {
    let mut shard = Vec::new();
    match (group(fast, fast_shape), group(slow, slow_shape)) {
        (Ok(b), Ok(a)) => {
            for k in 0..fast_shape.len() {
                shard.extend(slow_map(a.block(k))?);
                shard.extend(b.block(k).iter().cloned());
            }
        }
        (b, a) => {
            // Only the digit boundaries the interleaving uses need a grouping: parts of extent
            // 1 drop out and adjacent parts of one factor stay together ([`runs`]).
            let first = b.err().or(a.err()).expect("one grouping failed");
            let runs = runs(fast_shape, slow_shape);
            let (Ok(b), Ok(a)) = (
                group(fast, &run_shape(&runs, true)),
                group(slow, &run_shape(&runs, false)),
            ) else {
                return Err(first);
            };
            for (is_fast, j) in run_slots(&runs) {
                if is_fast {
                    shard.extend(b.block(j).iter().cloned());
                } else {
                    shard.extend(slow_map(a.block(j))?);
                }
            }
            // A factor of size 1 keeps its extent-1 iters (they reach only 0).
            if !runs.iter().any(|r| !r.0) {
                shard.splice(0..0, slow_map(a.block(0))?);
            }
            if !runs.iter().any(|r| r.0) {
                shard.extend(b.block(0).iter().cloned());
            }
        }
    }
    Ok(shard)
}

/// The digits of a tile's flat index in order (dim 0's outer part, its inner part, dim 1's outer
/// part, ...) with parts of extent 1 dropped and adjacent parts of one factor merged: `(inner?,
/// extent)` per run. Grouping each factor by its runs is all the interleaving needs: outer
/// `[3,4,1]` with inner `[1,1,2]` is one outer run of 12 and one inner run of 2, which
/// `S[(4,3):(6,5)]` groups though it does not group by `[3,4,1]`.
pub(crate) fn runs(inner_shape: &[i64], outer_shape: &[i64]) -> Vec<(bool, i64)> {
    let mut out: Vec<(bool, i64)> = Vec::new();
    for (&a, &b) in outer_shape.iter().zip(inner_shape) {
        for (is_inner, n) in [(false, a), (true, b)] {
            if n == 1 {
                continue;
            }
            match out.last_mut() {
                Some(last) if last.0 == is_inner => last.1 = last.1.saturating_mul(n),
                _ => out.push((is_inner, n)),
            }
        }
    }
    out
}

/// Each run as `(inner?, its index among its factor's runs)`, in order.
pub(crate) fn run_slots(runs: &[(bool, i64)]) -> Vec<(bool, usize)> {
    let (mut outer, mut inner) = (0, 0);
    runs.iter()
        .map(|&(is_inner, _)| {
            let slot = if is_inner { &mut inner } else { &mut outer };
            *slot += 1;
            (is_inner, *slot - 1)
        })
        .collect()
}

/// The extents of one factor's runs (`[1]` when it has none: size 1).
pub(crate) fn run_shape(runs: &[(bool, i64)], inner: bool) -> Vec<i64> {
    let v: Vec<i64> = runs.iter().filter(|r| r.0 == inner).map(|r| r.1).collect();
    if v.is_empty() {
        vec![1]
    } else {
        v
    }
}

/// The tiled shape `outer_shape[k] * inner_shape[k]`.
pub fn tile_shape(inner_shape: &[i64], outer_shape: &[i64]) -> Result<Vec<i64>> {
    same_rank(inner_shape, outer_shape)?;
    inner_shape
        .iter()
        .zip(outer_shape)
        .map(|(&b, &a)| arith::mul(a, b, "tile shape"))
        .collect()
}

pub(crate) fn same_rank(inner_shape: &[i64], outer_shape: &[i64]) -> Result<()> {
    if inner_shape.len() != outer_shape.len() {
        return Err(LayoutError::Shape {
            shape: outer_shape.to_vec(),
            why: format!(
                "its rank {} differs from the inner shape {inner_shape:?}'s rank {}",
                outer_shape.len(),
                inner_shape.len()
            ),
        });
    }
    Ok(())
}

/// Every stride `s@a` scaled to `s*span_a@a`.
pub(crate) fn scale_iters(iters: &[Iter], spans: &BTreeMap<Axis, i64>) -> Result<Vec<Iter>> {
    iters
        .iter()
        .map(|it| {
            let s = arith::mul(it.stride, span_at(spans, &it.axis), "span scaling")?;
            Ok(Iter::new(it.extent, s, it.axis.clone()))
        })
        .collect()
}

/// Every offset `o@a` scaled to `o*span_a@a`.
pub(crate) fn scale_offset(
    offset: &BTreeMap<Axis, i64>,
    spans: &BTreeMap<Axis, i64>,
) -> Result<BTreeMap<Axis, i64>> {
    offset
        .iter()
        .map(|(a, &o)| Ok((a.clone(), arith::mul(o, span_at(spans, a), "span scaling")?)))
        .collect()
}

/// `acc += other`, axis by axis.
pub(crate) fn add_offset(acc: &mut BTreeMap<Axis, i64>, other: &BTreeMap<Axis, i64>) -> Result<()> {
    for (a, &o) in other {
        let slot = acc.entry(a.clone()).or_insert(0);
        *slot = arith::add(*slot, o, "offset sum")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::axe::canonicalize;
    use crate::axis::Point;
    use crate::notation::axe::{parse, print};
    use std::collections::BTreeSet;

    fn canon(l: &AxeLayout) -> String {
        print(&canonicalize(l).unwrap().layout)
    }

    /// Audit 28: outer `S[(4,3):(6,5@warpid)]` does not group by its shape `[3,4,1]`, but the
    /// inner `[1,1,2]` only adds a last digit, so the tile's map (its definition, evaluated
    /// here coordinate by coordinate) is the layout `S[(4,3,2):(6,10@warpid,1@warpid)]`; and
    /// tile-of recovers either factor from it.
    #[test]
    fn a_tile_needs_only_the_boundaries_its_interleaving_uses() {
        let (b, a) = (
            parse("S[2:1@warpid]").unwrap(),
            parse("S[(4,3):(6,5@warpid)]").unwrap(),
        );
        let t = tile(&b, &a, &[1, 1, 2], &[3, 4, 1]).unwrap();
        assert_eq!(print(&t), "S[(4,3,2):(6,10@warpid,1@warpid)]");
        let span_w = 2; // span_warpid(B)
        for x in 0..12 {
            for y in 0..2 {
                let want: BTreeSet<Point> = a
                    .eval_flat(x)
                    .unwrap()
                    .into_iter()
                    .flat_map(|pa| {
                        b.eval_flat(y).unwrap().into_iter().map(move |pb| {
                            let mut p = pa.clone();
                            // span(B) is 2 on warpid and 1 on every other axis.
                            for (axis, v) in p.iter_mut() {
                                if axis.to_string() == "warpid" {
                                    *v *= span_w;
                                }
                            }
                            for (k, v) in pb {
                                *p.entry(k).or_insert(0) += v;
                            }
                            p.retain(|_, v| *v != 0);
                            p
                        })
                    })
                    .collect();
                let got: BTreeSet<Point> = t
                    .eval_flat(2 * x + y)
                    .unwrap()
                    .into_iter()
                    .map(|mut p| {
                        p.retain(|_, v| *v != 0);
                        p
                    })
                    .collect();
                assert_eq!(got, want, "x {x} y {y}");
            }
        }
        let c = crate::axe::tile_of(&t, &[3, 4, 2], &b, &[1, 1, 2]).unwrap();
        assert_eq!(canon(&c), canon(&a));
        let d = crate::axe::tile_of_given_outer(&t, &[3, 4, 2], &a, &[3, 4, 1]).unwrap();
        assert_eq!(canon(&d), canon(&b));
        // Parts that need a boundary the outer does not have are still refused.
        assert!(tile(&b, &a, &[2, 1, 1], &[3, 4, 1]).is_err());
    }

    #[test]
    fn tile_matches_the_spec_vectors() {
        let t = tile(
            &parse("S[(2,4):(1,2)]").unwrap(),
            &parse("S[(8,8):(8,1)]").unwrap(),
            &[2, 4],
            &[8, 8],
        )
        .unwrap();
        assert_eq!(canon(&t), "S[(8,2,32):(64,1,2)]");
        let t = tile(
            &parse("S[(8,1,4,2):(4@laneid,2,1@laneid,1)]").unwrap(),
            &parse("S[(8,8):(8,1)]").unwrap(),
            &[8, 8],
            &[8, 8],
        )
        .unwrap();
        let expect = parse("S[(8,8,1,8,4,2):(16,4@laneid,2,2,1@laneid,1)]").unwrap();
        assert_eq!(canon(&t), canon(&expect));
    }

    #[test]
    fn tile_scales_outer_replica_and_offset() {
        let t = tile(
            &parse("S[2:1] + R[2:2@laneid] + 1@laneid").unwrap(),
            &parse("S[3:1] + R[2:1@laneid] + 1 + 2@laneid").unwrap(),
            &[2],
            &[3],
        )
        .unwrap();
        // span(B) = {m: 2, laneid: 3}.
        assert_eq!(
            print(&t),
            "S[(3,2):(2,1)] + R[(2,2):(3@laneid,2@laneid)] + 7@laneid + 2"
        );
    }

    #[test]
    fn tile_rejects_rank_mismatch() {
        let e = tile(
            &parse("S[4:1]").unwrap(),
            &parse("S[4:1]").unwrap(),
            &[4],
            &[2, 2],
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("rank"), "{e}");
    }
}
