//! Axis-wise span (paper Lemma C.1): how many consecutive coordinates a layout can touch on one
//! axis, `span_a(L) = 1 + sum over the iters of D and R on axis a of (e-1)*|s|`; an axis with no
//! iter has span 1. Tiling scales the outer layout by the inner layout's span vector so that the
//! copies of the inner layout do not overlap.
//!
//! Example: `span_m(S[(8,6):(8,1)]) = 1 + 7*8 + 5*1 = 62`, and
//! `span_F(S[(8,8,8):(64@F,1@P,1@F)]) = 1 + 7*64 + 7*1 = 456` (the `P` iter is on another axis).

use std::collections::BTreeMap;

use super::AxeLayout;
use crate::arith;
use crate::axis::Axis;
use crate::error::{LayoutError, Result};

/// `span_a(L)`, with checked arithmetic.
///
/// ```
/// use layout::{axe, Axis};
/// let l = layout::notation::axe::parse("S[(8,8,8):(64@F,1@P,1@F)]")?;
/// assert_eq!(axe::span(&l, &Axis::new("F")?)?, 456);
/// assert_eq!(axe::span(&l, &Axis::new("P")?)?, 8);
/// assert_eq!(axe::span(&l, &Axis::new("m")?)?, 1);
/// # Ok::<(), layout::LayoutError>(())
/// ```
pub fn span(l: &AxeLayout, axis: &Axis) -> Result<i64> {
    l.iters()
        .filter(|it| &it.axis == axis)
        .try_fold(1i64, |acc, it| {
            let abs = it
                .stride
                .checked_abs()
                .ok_or(LayoutError::Overflow { op: "span" })?;
            arith::add(acc, arith::mul(it.extent - 1, abs, "span")?, "span")
        })
}

/// The span of every axis the layout mentions (axes absent from the map have span 1).
///
/// ```
/// use layout::axe;
/// let l = layout::notation::axe::parse("S[(8,6):(8,1)]")?;
/// let v = axe::span_vector(&l)?;
/// assert_eq!(v.values().copied().collect::<Vec<_>>(), [62]);
/// # Ok::<(), layout::LayoutError>(())
/// ```
pub fn span_vector(l: &AxeLayout) -> Result<BTreeMap<Axis, i64>> {
    l.axes()
        .into_iter()
        .map(|a| Ok((a.clone(), span(l, &a)?)))
        .collect()
}

/// The span of `axis` in a span vector (1 for an absent axis).
pub(crate) fn span_at(spans: &BTreeMap<Axis, i64>, axis: &Axis) -> i64 {
    spans.get(axis).copied().unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notation::axe::parse;

    #[test]
    fn span_matches_the_spec_vectors() {
        let l = parse("S[(8,6):(8,1)]").unwrap();
        assert_eq!(span(&l, &Axis::m()).unwrap(), 62);
        let l = parse("S[(8,8,8):(64@F,1@P,1@F)]").unwrap();
        assert_eq!(span(&l, &Axis::new("F").unwrap()).unwrap(), 456);
    }

    #[test]
    fn span_counts_replicas_and_absent_axes() {
        let l = parse("S[4:-2] + R[3:5@laneid]").unwrap();
        assert_eq!(span(&l, &Axis::m()).unwrap(), 7);
        assert_eq!(span(&l, &Axis::new("laneid").unwrap()).unwrap(), 11);
        assert_eq!(span(&l, &Axis::new("warpid").unwrap()).unwrap(), 1);
    }

    #[test]
    fn extreme_strides_are_errors_not_panics() {
        let l = AxeLayout::from_shard(vec![crate::axe::Iter::on_m(2, i64::MIN)]);
        assert!(l.is_err());
        let l = AxeLayout::from_shard(vec![crate::axe::Iter::on_m(2, i64::MAX)]);
        assert!(
            l.is_err(),
            "span 1 + (2-1)*MAX overflows, so new refuses it"
        );
    }
}
