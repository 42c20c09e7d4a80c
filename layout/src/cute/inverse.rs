//! Inverses: `right_inverse(L) = R` with `L(R(i)) == i` on R's domain, and
//! `left_inverse(L) = Li` with `Li(L(i)) == i` on L's domain (L injective).
//!
//! Right inverse: starting from offset step `current = 1`, repeatedly find the first flat mode
//! (in order, extent > 1) whose stride is `current`; it contributes the mode
//! `extent : index-stride` (its stride in the compact column-major index space of L's shape), and
//! `current` becomes `extent * stride`. Stop when no mode matches; coalesce. Stride-0 modes never
//! match, so they are skipped rather than ending the walk.
//! Left inverse (CUTLASS's construction): L's coalesced modes `s_k:d_k` sorted by stride, read
//! as the mixed radix `(d_0, d_1/d_0, .., d_n/d_{n-1}, s_n)` with strides `(0, i_0, .., i_n)`.
//! It is a left inverse exactly when every stride is a multiple of the one below it and at
//! least where that mode ends; otherwise no layout of this form is one (another may be:
//! `(2,4):(0,1)` reads `(2,2):(2,5)` back) and the error says why
//! (CUTLASS answers anyway, with a layout that fails `Li(L(i)) == i`). On offsets L never
//! produces, CUTLASS's choice differs from the right inverse of `(L, complement(L))` that
//! pycute returns: `left_inverse(4:2)` is `(2, 4):(0, 1)` here and in CUTLASS, `(2, 4):(4, 1)`
//! in pycute; both are left inverses.
//! Example: `right_inverse((4,3):(3,1)) = (3, 4):(4, 1)`; `left_inverse((4,3):(3,1)) = (3, 4):(4, 1)`.

use super::coalesce::{coalesce, from_modes};
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

/// `Li` with `Li(L(i)) == i`, for injective L, as CUTLASS builds it: L's coalesced modes
/// `s_k:d_k` sorted by stride, read as the mixed radix `(d_0, d_1/d_0, .., d_n/d_{n-1}, s_n)`
/// with strides `(0, i_0, .., i_n)` (`i_k` the mode's index stride). It is a left inverse
/// exactly when each stride is a multiple of the one below it and at least where that mode
/// ends; otherwise the error says why (CUTLASS answers anyway, with a layout that fails
/// `Li(L(i)) == i`). `left_inverse((4,3):(3,1)) = (3, 4):(4, 1)`;
/// `left_inverse(4:2) = (2, 4):(0, 1)`; `left_inverse((2,2):(1,3)) = (3, 2):(1, 2)`.
pub fn left_inverse(l: &CuteLayout) -> Result<CuteLayout> {
    let bad = |why: String| LayoutError::invalid(format!("left inverse of {l}"), why);
    let mut modes: Vec<(i64, i64, i64)> = Vec::new();
    let mut index_stride = 1i64;
    for (s, d) in coalesce(l).flat_modes() {
        if s > 1 {
            if d == 0 {
                return Err(bad(format!(
                    "the mode {s}:{d} repeats offsets, so the layout is not injective"
                )));
            }
            if d < 0 {
                return Err(bad(format!("stride {d} is negative")));
            }
            modes.push((d, s, index_stride));
        }
        index_stride = index_stride.saturating_mul(s);
    }
    modes.sort_unstable();
    for w in modes.windows(2) {
        let ((d0, s0, _), (d1, s1, _)) = (w[0], w[1]);
        if d1 < s0.saturating_mul(d0) {
            return Err(bad(format!(
                "the mode {s1}:{d1} starts below {}, where the mode {s0}:{d0} ends: {}",
                s0.saturating_mul(d0),
                interleaving(l, "CUTLASS's construction (a mixed radix of the sorted strides) has no left inverse")
            )));
        }
        if d1 % d0 != 0 {
            return Err(bad(format!(
                "the mode {s1}:{d1} does not start at a multiple of the stride {d0} below it, and CUTLASS's construction (a mixed radix of the sorted strides) has no left inverse then"
            )));
        }
    }
    let mut out = Vec::with_capacity(modes.len() + 1);
    let (mut below, mut prev_index) = (1i64, 0i64);
    for &(d, _, i) in &modes {
        out.push((d / below, prev_index));
        below = d;
        prev_index = i;
    }
    if let Some(&(_, s, i)) = modes.last() {
        out.push((s, i));
    }
    let out: Vec<(i64, i64)> = out.into_iter().filter(|m| m.0 > 1).collect();
    Ok(coalesce(&from_modes(&out)))
}

/// Most indices [`interleaving`] enumerates to say whether interleaved modes repeat an offset.
const ENUMERATED: i64 = 1 << 16;

/// What interleaved modes (one starts inside the span of another) mean for `l`: a repeated
/// offset when enumeration finds one (then `l` is not injective), else that `l` is injective
/// and `what` follows from the interleaving alone. Interleaved modes need not overlap:
/// `(2,2):(2,3)` reaches 0, 2, 3, 5.
pub(crate) fn interleaving(l: &CuteLayout, what: &str) -> String {
    if l.size() <= ENUMERATED {
        let mut seen = std::collections::HashMap::new();
        for i in 0..l.size() {
            let Ok(x) = l.eval_index(i) else { break };
            if let Some(j) = seen.insert(x, i) {
                return format!(
                    "the indices {j} and {i} both reach the offset {x}, so the layout is not injective"
                );
            }
        }
        if seen.len() as i64 == l.size() {
            return format!(
                "the modes interleave (the layout is injective, but {what} for interleaved modes)"
            );
        }
    }
    format!("the modes interleave, and {what} for interleaved modes (whether the layout is injective: `laycert prove-property injective`)")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notation::cute::parse_layout;

    fn l(t: &str) -> CuteLayout {
        parse_layout(t).unwrap()
    }

    #[test]
    fn interleaved_modes_are_refused_truthfully() {
        // (2,2):(2,3) reaches 0, 2, 3, 5: injective, and a left inverse exists ((2,3):(1,1)),
        // but not of CUTLASS's form; the error must not call it non-injective.
        let e = left_inverse(&l("(2,2):(2,3)")).unwrap_err().to_string();
        assert!(e.contains("the layout is injective"), "{e}");
        let e = left_inverse(&l("(2,2):(1,1)")).unwrap_err().to_string();
        assert!(
            e.contains("both reach the offset 1, so the layout is not injective"),
            "{e}"
        );
        let e = left_inverse(&l("(512,512):(1,3)")).unwrap_err().to_string();
        assert!(e.contains("prove-property injective"), "{e}");
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

    /// CUTLASS's left inverses (the CuTe DSL 4.8.1's answers), each checked on L's image.
    #[test]
    fn left_inverse_is_cutlass_mixed_radix_and_undoes_the_layout() {
        for (t, want) in [
            ("4:2", "(2, 4):(0, 1)"),
            ("(3,2):(2,18)", "(2, 9, 2):(0, 1, 3)"),
            ("((8,6,4),3):((144,4,1),24)", "(4, 6, 6, 8):(48, 8, 192, 1)"),
            ("(2,2):(1,3)", "(3, 2):(1, 2)"),
        ] {
            let a = l(t);
            let li = left_inverse(&a).unwrap();
            assert_eq!(li.to_string(), want, "{t}");
            for i in 0..a.size() {
                assert_eq!(
                    li.eval_index(a.eval_index(i).unwrap()).unwrap(),
                    i,
                    "{t} at {i}"
                );
            }
        }
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
