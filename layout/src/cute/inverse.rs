//! Inverses: `right_inverse(L) = R` with `L(R(i)) == i` on R's domain, and
//! `left_inverse(L) = Li` with `Li(L(i)) == i` on L's domain (L injective).
//!
//! Right inverse: starting from offset step `current = 1`, repeatedly find the first flat mode
//! (in order, extent > 1) whose stride is `current`; it contributes the mode
//! `extent : index-stride` (its stride in the compact column-major index space of L's shape), and
//! `current` becomes `extent * stride`. Stop when no mode matches; coalesce. Stride-0 modes never
//! match, so they are skipped rather than ending the walk.
//! Left inverse: the right inverse of `(L, complement(L))`, a bijection onto an interval when L
//! is injective without holes between its modes (the exact complement exists); otherwise there
//! is no left inverse layout and the error says why.
//! Example: `right_inverse((4,3):(3,1)) = (3, 4):(4, 1)`; `left_inverse((4,3):(3,1)) = (3, 4):(4, 1)`.

use super::coalesce::{coalesce, from_modes};
use super::complement::exact_complement;
use super::hierarchy::make_layout;
use super::CuteLayout;
use crate::error::{LayoutError, Result};

/// `R` with `L(R(i)) == i` (see the module doc). `right_inverse((4,3):(3,1)) = (3, 4):(4, 1)`.
pub fn right_inverse(l: &CuteLayout) -> Result<CuteLayout> {
    let modes = l.flat_modes();
    if let Some(&(_, d)) = modes.iter().find(|m| m.1 < 0) {
        return Err(LayoutError::invalid(
            format!("right inverse of {l}"),
            format!("stride {d} is negative; inverses here are of non-negative layouts"),
        ));
    }
    let mut index_stride = Vec::with_capacity(modes.len());
    let mut acc = 1i64;
    for &(s, _) in &modes {
        index_stride.push(acc);
        acc *= s;
    }
    let mut current = 1i64;
    let mut out = Vec::new();
    while let Some(k) = modes.iter().position(|&(s, d)| s > 1 && d == current) {
        out.push((modes[k].0, index_stride[k]));
        match modes[k].0.checked_mul(current) {
            Some(next) => current = next,
            None => break,
        }
    }
    Ok(coalesce(&from_modes(&out)))
}

/// `Li` with `Li(L(i)) == i`, for injective L. `left_inverse((4,3):(3,1)) = (3, 4):(4, 1)`.
pub fn left_inverse(l: &CuteLayout) -> Result<CuteLayout> {
    if let Some(&(s, d)) = l.flat_modes().iter().find(|m| m.0 > 1 && m.1 == 0) {
        return Err(LayoutError::invalid(
            format!("left inverse of {l}"),
            format!("the mode {s}:{d} repeats offsets, so the layout is not injective"),
        ));
    }
    right_inverse(&make_layout(&[l.clone(), exact_complement(l, 1)?])?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notation::cute::parse_layout;

    fn l(t: &str) -> CuteLayout {
        parse_layout(t).unwrap()
    }

    #[test]
    fn left_inverse_spec_vector() {
        let a = l("(4,3):(3,1)");
        let li = left_inverse(&a).unwrap();
        assert_eq!(li.to_string(), "(3, 4):(4, 1)");
        for i in 0..a.size() {
            assert_eq!(li.eval_index(a.eval_index(i).unwrap()).unwrap(), i);
        }
    }

    #[test]
    fn right_inverse_undoes_the_layout_on_its_domain() {
        let a = l("(4,3):(3,1)");
        let r = right_inverse(&a).unwrap();
        assert_eq!(r.to_string(), "(3, 4):(4, 1)");
        assert_eq!(right_inverse(&l("(2,4):(0,1)")).unwrap().to_string(), "4:2");
        assert_eq!(right_inverse(&l("4:2")).unwrap().to_string(), "1:0");
    }

    #[test]
    fn left_inverse_refuses_non_injective_layouts() {
        assert!(left_inverse(&l("(2,4):(0,1)")).is_err());
        assert!(left_inverse(&l("(2,2):(1,1)")).is_err());
        assert!(left_inverse(&l("(2,2):(2,5)")).is_err());
    }
}

/// The kernel of `L`: a layout `K` over L's index space whose every value is an index `L` sends
/// to 0, built from L's stride-0 flat modes with their compact column-major index strides
/// (CuTe's `nullspace`). `size(K) * size(filter(L)) == size(L)`, where `filter` keeps the modes
/// of extent > 1 and non-zero stride; no stride-0 mode gives `1:0`.
/// `nullspace((2,4,3):(0,1,0)) = (2, 3):(1, 8)`.
pub fn nullspace(l: &CuteLayout) -> Result<CuteLayout> {
    let modes = l.flat_modes();
    let mut index_stride = 1i64;
    let (mut shape, mut stride) = (Vec::new(), Vec::new());
    for &(s, d) in &modes {
        if d == 0 {
            shape.push(s);
            stride.push(index_stride);
        }
        index_stride = crate::arith::mul(index_stride, s, "nullspace index stride")?;
    }
    if shape.is_empty() {
        return CuteLayout::from_flat(&[1], &[0]);
    }
    CuteLayout::from_flat(&shape, &stride)
}

#[cfg(test)]
mod nullspace_tests {
    use super::*;
    use crate::notation::cute::parse_layout;
    use proptest::prelude::*;

    #[test]
    fn nullspace_vectors() {
        let k = |t: &str| nullspace(&parse_layout(t).unwrap()).unwrap().to_string();
        assert_eq!(k("(2,4,3):(0,1,0)"), "(2, 3):(1, 8)");
        assert_eq!(k("(4,8):(1,4)"), "1:0");
        // A TV layout's value broadcast: 4 threads hold the same 8 values.
        assert_eq!(k("((4,8),8):((0,1),8)"), "4:1");
    }

    proptest! {
        #[test]
        fn nullspace_is_the_kernel(modes in prop::collection::vec((1i64..5, 0i64..4), 1..5)) {
            let (s, d): (Vec<i64>, Vec<i64>) = modes.into_iter().unzip();
            let l = CuteLayout::from_flat(&s, &d).unwrap();
            let k = nullspace(&l).unwrap();
            for i in 0..k.size() {
                prop_assert_eq!(l.eval_index(k.eval_index(i).unwrap()).unwrap(), 0);
            }
            let kept: i64 = s.iter().zip(&d).filter(|(e, st)| **e > 1 && **st != 0).map(|(e, _)| e).product();
            prop_assert_eq!(k.size() * kept, l.size());
            // Distinct kernel indices (K is injective into L's index space).
            let mut img: Vec<i64> = (0..k.size()).map(|i| k.eval_index(i).unwrap()).collect();
            img.sort_unstable();
            img.dedup();
            prop_assert_eq!(img.len() as i64, k.size());
        }
    }
}
