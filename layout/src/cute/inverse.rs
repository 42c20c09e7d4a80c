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
    // A stride on an extent-1 mode never contributes (audit 27: `(1,4):(-5,1)` was refused).
    if let Some(&(_, d)) = modes.iter().find(|m| m.1 < 0 && m.0 > 1) {
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
    let e = match cutlass_left_inverse(l) {
        Ok(li) => return Ok(li),
        Err(e) => e,
    };
    match searched_left_inverse(l) {
        Search::Found(li) => Ok(li),
        Search::NotTried => Err(e),
        Search::NoneFound => Err(LayoutError::invalid(
            format!("left inverse of {l}"),
            match e {
                LayoutError::Invalid { why, .. } => why,
                other => other.to_string(),
            } + "; nor did a search of the layouts of size cosize to twice cosize (cosize up to \
                 2^16) find one",
        )),
    }
}

/// What CUTLASS's construction is, in its refusals.
const NOT_CUTLASS_FORM: &str = "CUTLASS's construction (a mixed radix of the sorted strides)";

/// The outcome of [`searched_left_inverse`].
enum Search {
    /// A left inverse, checked by evaluation.
    Found(CuteLayout),
    /// L is not injective, reaches a negative offset, or is past the search's limits.
    NotTried,
    /// L is injective and within the limits, and no layout searched reads it back.
    NoneFound,
}

/// Most images [`searched_left_inverse`] searches: offsets of L (its cosize) and the work of
/// checking candidate shapes (cosize times shapes tried).
const SEARCH_COSIZE: i64 = 1 << 16;
const SEARCH_WORK: i64 = 1 << 24;

/// A left inverse of an injective `l` whose modes interleave (or whose strides are not
/// multiples of each other), where CUTLASS's mixed radix has none: the first layout of size
/// `cosize(l)` up to twice that, over the ordered factorizations of each size (smallest size
/// first, then fewest modes), whose strides solve `Li(l(i)) = i` for every `i` (a linear system
/// in the strides; unknowns that no image offset determines are 0), checked by evaluation before
/// it is returned ([`Search`] says when there is none; a larger size might have one).
/// `(2,2):(2,3)` (offsets 0, 2, 3, 5) gives `(2, 3):(1, 1)`.
fn searched_left_inverse(l: &CuteLayout) -> Search {
    let n = l.size();
    // An injective layout of more elements has a larger cosize.
    if n > SEARCH_COSIZE {
        return Search::NotTried;
    }
    let mut image = Vec::with_capacity(n.max(0) as usize);
    let mut top = 0i64;
    for i in 0..n {
        let Ok(y) = l.eval_index(i) else {
            return Search::NotTried;
        };
        if !(0..SEARCH_COSIZE).contains(&y) {
            return Search::NotTried;
        }
        top = top.max(y);
        image.push((y, i));
    }
    let cosize = top + 1;
    let mut seen = vec![false; cosize as usize];
    for &(y, _) in &image {
        if std::mem::replace(&mut seen[y as usize], true) {
            return Search::NotTried;
        }
    }
    // Sizes from cosize up (a larger domain only adds offsets L never reaches), fewest modes
    // first within a size.
    let mut work = 0i64;
    for size in cosize.max(2)..=2 * cosize.max(2) {
        let divisors: Vec<i64> = (2..=size / 2).filter(|d| size % d == 0).collect();
        for modes in 1..=size.ilog2() as usize {
            let mut found = None;
            factorizations(size, modes, &divisors, &mut Vec::new(), &mut |shape| {
                work += image.len() as i64;
                found = strides_reading_back(shape, &image).map(|st| (shape.to_vec(), st));
                found.is_none() && work <= SEARCH_WORK
            });
            if let Some((shape, strides)) = found {
                let li = coalesce(&from_modes(
                    &shape.into_iter().zip(strides).collect::<Vec<_>>(),
                ));
                let reads_back = image.iter().all(|&(y, i)| li.eval_index(y).ok() == Some(i));
                return if reads_back {
                    Search::Found(li)
                } else {
                    Search::NoneFound
                };
            }
            if work > SEARCH_WORK {
                return Search::NotTried;
            }
        }
    }
    Search::NoneFound
}

/// Calls `f` with every ordered factorization of `n` into `k` factors of at least 2 (each a
/// divisor of `divisors`' number), until `f` returns false; false when stopped.
fn factorizations(
    n: i64,
    k: usize,
    divisors: &[i64],
    prefix: &mut Vec<i64>,
    f: &mut impl FnMut(&[i64]) -> bool,
) -> bool {
    if k == 1 {
        if n < 2 {
            return true;
        }
        prefix.push(n);
        let go = f(prefix);
        prefix.pop();
        return go;
    }
    for &d in divisors.iter().take_while(|&&d| d <= n / 2) {
        if n % d == 0 {
            prefix.push(d);
            let go = factorizations(n / d, k - 1, divisors, prefix, f);
            prefix.pop();
            if !go {
                return false;
            }
        }
    }
    true
}

/// Integer strides `t` with `sum_k t_k digit_k(y) = i` for every `(y, i)` of `image`, the digits
/// of `y` in the column-major mixed radix `shape`; undetermined strides are 0. Exact rational
/// elimination (i128), `None` when the system has no integer solution of that kind.
fn strides_reading_back(shape: &[i64], image: &[(i64, i64)]) -> Option<Vec<i64>> {
    let k = shape.len();
    // Rows of the reduced system: (pivot column, coefficients, right-hand side), each row's
    // pivot coefficient nonzero and every other row's entry in that column zero.
    let mut rows: Vec<(usize, Vec<i128>, i128)> = Vec::new();
    for &(y, i) in image {
        let mut a: Vec<i128> = Vec::with_capacity(k);
        let mut rest = y;
        for &s in shape {
            a.push((rest % s) as i128);
            rest /= s;
        }
        let mut b = i as i128;
        for (p, r, rb) in &rows {
            let f = a[*p];
            if f != 0 {
                let g = r[*p];
                for c in 0..k {
                    a[c] = a[c].checked_mul(g)?.checked_sub(f.checked_mul(r[c])?)?;
                }
                b = b.checked_mul(g)?.checked_sub(f.checked_mul(*rb)?)?;
            }
        }
        let Some(p) = a.iter().position(|&x| x != 0) else {
            if b != 0 {
                return None;
            }
            continue;
        };
        let g = a
            .iter()
            .fold(b.unsigned_abs(), |g, &x| gcd(g, x.unsigned_abs())) as i128;
        if g > 1 {
            a.iter_mut().for_each(|x| *x /= g);
            b /= g;
        }
        for (_, r, rb) in rows.iter_mut() {
            let f = r[p];
            if f != 0 {
                for c in 0..k {
                    r[c] = r[c].checked_mul(a[p])?.checked_sub(f.checked_mul(a[c])?)?;
                }
                *rb = rb.checked_mul(a[p])?.checked_sub(f.checked_mul(b)?)?;
            }
        }
        rows.push((p, a, b));
    }
    // Back-substitution with the free strides 0: each row has exactly one pivot among the
    // determined columns after full reduction, plus free columns set to 0.
    let mut t = vec![0i64; k];
    for (p, r, rb) in &rows {
        if rb % r[*p] != 0 {
            return None;
        }
        t[*p] = i64::try_from(rb / r[*p]).ok()?;
    }
    Some(t)
}

fn gcd(a: u128, b: u128) -> u128 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// CUTLASS's mixed-radix construction alone (see [`left_inverse`], which searches another form
/// where this one refuses an injective layout).
pub fn cutlass_left_inverse(l: &CuteLayout) -> Result<CuteLayout> {
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
                interleaving(l, &format!("{NOT_CUTLASS_FORM} has no left inverse"))
            )));
        }
        if d1 % d0 != 0 {
            return Err(bad(format!(
                "the mode {s1}:{d1} does not start at a multiple of the stride {d0} below it, and {NOT_CUTLASS_FORM} has no left inverse then"
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
    fn interleaved_injective_layouts_get_a_searched_left_inverse() {
        // (2,2):(2,3) reaches 0, 2, 3, 5: injective; CUTLASS's mixed radix has no left inverse
        // for it, a layout of another form does.
        for (t, want) in [
            ("(2,2):(2,3)", "(2, 3):(1, 1)"),
            ("(2,2):(2,5)", "(2, 4):(0, 1)"),
            ("(2,2):(3,5)", ""),
            ("(3,2):(2,3)", ""),
            ("(2,3):(3,2)", ""),
        ] {
            let a = l(t);
            match left_inverse(&a) {
                Ok(li) => {
                    if !want.is_empty() {
                        assert_eq!(li.to_string(), want, "{t}");
                    }
                    for i in 0..a.size() {
                        let y = a.eval_index(i).unwrap();
                        assert_eq!(li.eval_index(y).unwrap(), i, "{t} at {i}");
                    }
                }
                Err(e) => assert!(want.is_empty(), "{t}: {e}"),
            }
        }
        // Not injective: refused, naming the repeated offset.
        let e = left_inverse(&l("(2,2):(1,1)")).unwrap_err().to_string();
        assert!(
            e.contains("both reach the offset 1, so the layout is not injective"),
            "{e}"
        );
        // Past the search's reach (cosize above 2^16): refused truthfully.
        let e = left_inverse(&l("(512,512):(1,3)")).unwrap_err().to_string();
        assert!(e.contains("prove-property injective"), "{e}");
    }

    /// Every injective layout of small random modes: `left_inverse` undoes it on its domain
    /// whenever it answers, and answers whenever CUTLASS's form or the search has one (checked
    /// here by evaluation only).
    #[test]
    fn left_inverse_undoes_every_small_injective_layout_it_answers() {
        let (mut answered, mut refused) = (0, Vec::new());
        for s0 in 1..=4i64 {
            for s1 in 1..=4i64 {
                for d0 in 0..=7i64 {
                    for d1 in 0..=7i64 {
                        let a = l(&format!("({s0},{s1}):({d0},{d1})"));
                        let ys: Vec<i64> =
                            (0..a.size()).map(|i| a.eval_index(i).unwrap()).collect();
                        let mut u = ys.clone();
                        u.sort_unstable();
                        u.dedup();
                        let injective = u.len() == ys.len();
                        match left_inverse(&a) {
                            Ok(li) => {
                                assert!(injective, "{a}");
                                answered += 1;
                                for (i, &y) in ys.iter().enumerate() {
                                    assert_eq!(li.eval_index(y).unwrap(), i as i64, "{a} -> {li}");
                                }
                            }
                            Err(e) => {
                                if injective {
                                    refused.push(a.to_string());
                                }
                                assert!(
                                    !injective || e.to_string().contains("injective"),
                                    "{a}: {e}"
                                );
                            }
                        }
                    }
                }
            }
        }
        // The search is not complete (no size or form is guaranteed); it must stay rare.
        assert!(
            answered > 100 && refused.len() * 20 < answered,
            "{answered} {refused:?}"
        );
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
        // A negative stride on an extent-1 mode never contributes: the CuTe DSL 4.8.1 and
        // pycute answer 4:1 (audit 27). A contributing negative stride is still refused.
        for t in ["(1,4):(-5,1)", "(4,1):(1,-5)", "(4,(1,2)):(1,(-3,4))"] {
            let a = l(t);
            let r = right_inverse(&a).unwrap();
            assert_eq!(
                r.to_string(),
                if t.contains("(1,(") { "8:1" } else { "4:1" }
            );
            for j in 0..r.size() {
                assert_eq!(a.eval_index(r.eval_index(j).unwrap()).unwrap(), j, "{t}");
            }
        }
        assert!(right_inverse(&l("(2,4):(-1,2)")).is_err());
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
        // (2,2):(2,5) reaches 0, 2, 5, 7: injective, read back by the searched (2, 4):(0, 1).
        assert!(left_inverse(&l("(2,2):(2,5)")).is_ok());
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
