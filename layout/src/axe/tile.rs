//! Tiling (Kronecker product; paper appendix C).
//!
//! Inner `B` over shape `SB` and outer `A` over shape `SA` of the same rank `r`. The tile has
//! shape `SA_k*SB_k` per dim; coordinate `i_k = x_k*SB_k + y_k` maps to
//! `f(i) = f_A(x) ⊙ span(B) + f_B(y)`, where `span(B)` is B's axis-wise span (see
//! [`super::span()`]) and `⊙` multiplies axis by axis, so the copies of B never overlap.
//! Construction: group both by their shapes; for each dim `k` append A's block `k` with every
//! stride `s@a` scaled to `s*span_a(B)@a`, then B's block `k`. `R = scaled(R_A) ∪ R_B` and
//! `O = O_A ⊙ span(B) + O_B`.
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
    let b = group(inner, inner_shape)?;
    let a = group(outer, outer_shape)?;
    let spans = span_vector(inner)?;
    let mut shard = Vec::new();
    for k in 0..inner_shape.len() {
        shard.extend(scale_iters(a.block(k), &spans)?);
        shard.extend(b.block(k).iter().cloned());
    }
    let mut replica = scale_iters(outer.replica(), &spans)?;
    replica.extend(inner.replica().iter().cloned());
    let mut offset = scale_offset(outer.offset(), &spans)?;
    add_offset(&mut offset, inner.offset())?;
    AxeLayout::new(shard, replica, offset)
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
    use crate::notation::axe::{parse, print};

    fn canon(l: &AxeLayout) -> String {
        print(&canonicalize(l).unwrap().layout)
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
