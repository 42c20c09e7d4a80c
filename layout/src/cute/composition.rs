//! Composition `R = A ∘ B`, `R(c) = A(B(c))`, with R congruent to B.
//!
//! A is read as a function on all non-negative integers: its coalesced flat modes
//! `(s_0:d_0)..(s_{n-1}:d_{n-1})`, the last mode unbounded (CuTe's convention; as CUTLASS
//! does, A's last flat mode is kept for that even when its extent is 1, so `1:1 ∘ 4:1 = 4:1`
//! and `(4,1):(1,8) ∘ 2:4 = 2:8`, where pycute gives `4:0` and `2:4`). Each leaf `s:d`
//! of B walks A's modes: `d` steps over whole modes while it is a multiple of their extents, then
//! takes `min(s_k / d, rest)` steps inside one. Two conditions make the result a layout:
//!
//! - **stride divisibility**: at each mode `k < n-1`, the remaining stride divides `s_k` or is a
//!   multiple of it;
//! - **shape divisibility**: when B's leaf runs past mode `k`, the steps taken there divide
//!   what remains of B's extent.
//!
//! Either failing is an error naming it. A stride-0 leaf gives `s:0`; negative B strides are
//! refused (they would index A below 0).
//!
//! A B with several leaves is composed leaf by leaf (CuTe's `A ∘ (B0, B1) = (A ∘ B0, A ∘ B1)`),
//! which is `A(B(c))` only when the leaves' offsets add inside A without carrying across one of
//! A's modes. That is the third condition, **no carry between B's modes**, checked on every
//! coordinate of B up to 2^20 of them (above that, on every combination of each leaf at 0, 1,
//! its middle and its last value, where a carry shows first). pycute answers by mode regardless:
//! `(2,28):(1,1536) ∘ ((2,6),4):((1,1),16)` gives `A(1) + A(1) = 2` at index 3, where
//! `A(B(3)) = A(2) = 1536`; here it is refused.
//! Example: `(6,2):(8,2) ∘ (4,3):(3,1) = ((2, 2), 3):((24, 2), 8)`; `(4,6,8):(2,3,5) ∘ 6:3` is
//! rejected (stride 3 neither divides nor is a multiple of 4).

use super::coalesce::{coalesce, from_modes};
use super::{CuteLayout, IntTuple};
use crate::arith;
use crate::error::{LayoutError, Result};
use crate::swizzle::SwizzledLayout;

/// `A ∘ B` (see the module doc). `(10,2):(16,4) ∘ 4:5 = (2, 2):(80, 4)`.
pub fn composition(a: &CuteLayout, b: &CuteLayout) -> Result<CuteLayout> {
    let a_modes = extension_modes(a);
    let (shape, stride) = compose_tree(a, &a_modes, b.shape(), b.stride())?;
    let r = CuteLayout::new(shape, stride)?;
    check_no_carry(a, b, &r)?;
    Ok(r)
}

/// Largest B whose every coordinate the no-carry check evaluates.
const CARRY_CHECK_ALL: i64 = 1 << 20;

/// The third condition: the by-mode result equals `A(B(c))` (see the module doc).
fn check_no_carry(a: &CuteLayout, b: &CuteLayout, r: &CuteLayout) -> Result<()> {
    let modes = b.flat_modes();
    if modes.iter().filter(|(s, _)| *s > 1).count() < 2 {
        return Ok(());
    }
    let probe = |i: i64| -> Result<Option<i64>> {
        let (got, want) = (r.eval_index(i)?, eval_extended(a, b.eval_index(i)?)?);
        Ok((got != want).then_some(i))
    };
    let bad = if b.size() <= CARRY_CHECK_ALL {
        (0..b.size()).map(probe).find_map(|x| x.transpose())
    } else {
        // Each leaf at 0, 1, its middle and its last value (colexicographic index). A leaf of
        // stride 0 adds nothing to B(i), nor its mode to the result: it stays at 0. The walk
        // takes every combination, so their number is bounded (audit 27: 26 modes of extent 2
        // took 2^26 probes and a minute; 62 modes never ended).
        let picks_of = |wide: bool| -> Vec<Vec<i64>> {
            modes
                .iter()
                .map(|&(s, d)| {
                    let mut v = match (d, wide) {
                        (0, _) => vec![0],
                        (_, true) => vec![0, 1.min(s - 1), s / 2, s - 1],
                        (_, false) => vec![0, s - 1],
                    };
                    v.sort_unstable();
                    v.dedup();
                    v
                })
                .collect()
        };
        let fits = |p: &[Vec<i64>]| {
            p.iter()
                .try_fold(1i64, |acc, v| acc.checked_mul(v.len() as i64))
                .is_some_and(|n| n <= CARRY_CHECK_ALL)
        };
        // Fewer values per leaf (its first and last) where every four would be too many.
        let picks = [true, false]
            .into_iter()
            .map(picks_of)
            .find(|p| fits(p))
            .ok_or_else(|| {
                LayoutError::invalid(
                    format!("composition {a} ∘ {b}"),
                    format!(
                        "checking that B's {} modes never carry between A's modes takes more \
                         than {CARRY_CHECK_ALL} evaluations (each leaf at its first and last \
                         value): coalesce B first",
                        modes.len()
                    ),
                )
            })?;
        let mut found = None;
        let mut digits = vec![0usize; modes.len()];
        'walk: loop {
            let mut index = 0i64;
            for k in (0..modes.len()).rev() {
                index = index * modes[k].0 + picks[k][digits[k]];
            }
            if let Some(x) = probe(index).transpose() {
                found = Some(x);
                break;
            }
            for k in 0..modes.len() {
                digits[k] += 1;
                if digits[k] < picks[k].len() {
                    continue 'walk;
                }
                digits[k] = 0;
            }
            break;
        }
        found
    };
    match bad.transpose()? {
        None => Ok(()),
        Some(i) => Err(LayoutError::invalid(
            format!("composition {a} ∘ {b}"),
            format!(
                "no carry between B's modes fails: at index {i}, B's leaves add to {} where A's modes carry, so A(B(i)) = {} but composing mode by mode gives {}",
                b.eval_index(i)?,
                eval_extended(a, b.eval_index(i)?)?,
                r.eval_index(i)?
            ),
        )),
    }
}

/// `(Sw ∘ L) ∘ B = Sw ∘ (L ∘ B)`: the swizzle stays outermost.
/// `(Sw<3,3,3> o (8,64):(64,1)) ∘ (8,8):(1,8) = Sw<3,3,3> o (8, 8):(64, 1)`.
pub fn composition_swizzled(a: &SwizzledLayout, b: &CuteLayout) -> Result<SwizzledLayout> {
    SwizzledLayout::with_offset(*a.swizzle(), a.offset(), composition(a.layout(), b)?)
}

/// The modes A is read with beyond its domain, as CUTLASS reads it: all flat modes but the last
/// coalesced, then the last flat mode as it is, unbounded, even when its extent is 1 (the CuTe
/// DSL gives `1:1 ∘ 4:1 = 4:1` and reads `(4,1):(1,8)` at 12 as `0 + 3*8 = 24`; pycute
/// coalesces A first, reading `1:1` as `1:0` and `(4,1):(1,8)` as `4:1`).
fn extension_modes(a: &CuteLayout) -> Vec<(i64, i64)> {
    let flat = a.flat_modes();
    match flat.split_last() {
        Some((&(1, d), prefix)) => {
            let mut modes: Vec<(i64, i64)> = coalesce(&from_modes(prefix))
                .flat_modes()
                .into_iter()
                .filter(|m| m.0 > 1)
                .collect();
            // A last mode continuing the one before it reads the same way as that one
            // unbounded: merge them, so the walk sees one mode.
            match modes.last() {
                Some(&(ps, pd)) if ps.checked_mul(pd) == Some(d) => {}
                _ => modes.push((1, d)),
            }
            modes
        }
        _ => coalesce(a).flat_modes(),
    }
}

/// `A(i)` for any `i >= 0`: the function composition extends, CUTLASS's convention of reading
/// A coalesced with its last flat mode unbounded (see `extension_modes`; `1:1` extends to
/// `i -> i`).
/// For `(4,2):(1,10)`, `eval_extended(9) = 1 + 2*10 = 21`.
pub fn eval_extended(a: &CuteLayout, i: i64) -> Result<i64> {
    if i < 0 {
        return Err(LayoutError::invalid(
            format!("index {i} of {a}"),
            "indices are non-negative",
        ));
    }
    let modes = extension_modes(a);
    let mut rest = i;
    let mut out = 0i64;
    for (k, (s, d)) in modes.iter().enumerate() {
        let c = if k + 1 == modes.len() { rest } else { rest % s };
        out = arith::add(
            out,
            arith::mul(c, *d, "extended offset")?,
            "extended offset",
        )?;
        rest /= s;
    }
    Ok(out)
}

fn compose_tree(
    a: &CuteLayout,
    a_modes: &[(i64, i64)],
    shape: &IntTuple,
    stride: &IntTuple,
) -> Result<(IntTuple, IntTuple)> {
    match (shape, stride) {
        (IntTuple::Int(s), IntTuple::Int(d)) => {
            let leaf = from_modes(&compose_leaf(a, a_modes, *s, *d)?);
            Ok((leaf.shape, leaf.stride))
        }
        (IntTuple::Tuple(ss), IntTuple::Tuple(ds)) => {
            let mut shapes = Vec::with_capacity(ss.len());
            let mut strides = Vec::with_capacity(ss.len());
            for (s, d) in ss.iter().zip(ds) {
                let (s, d) = compose_tree(a, a_modes, s, d)?;
                shapes.push(s);
                strides.push(d);
            }
            Ok((IntTuple::Tuple(shapes), IntTuple::Tuple(strides)))
        }
        _ => Err(LayoutError::invalid(
            "composition",
            "the right operand's shape and stride are not congruent",
        )),
    }
}

/// The modes of `A ∘ (s:d)` for one leaf of B.
///
/// A leaf of extent 1 only ever reads `A(0)`, so no divisibility condition can fail it and its
/// stride is never used; it is printed as CUTLASS prints it: `d` divided through A's modes but
/// the last, times the last mode's stride. A positive quotient below 1 counts as 1
/// (`((5,),(6,4)):((1,),(1,2)) ∘ 1:1 = 1:2`, `(4,6):(2,3) ∘ 1:2 = 1:3`); a negative `d` is
/// divided rounding down, so it stays negative (the CuTe DSL 4.8.1:
/// `(4,6):(2,3) ∘ 1:-3 = 1:-3`, `(4,6,5):(2,3,7) ∘ 1:-30 = 1:-14`).
fn compose_leaf(a: &CuteLayout, a_modes: &[(i64, i64)], s: i64, d: i64) -> Result<Vec<(i64, i64)>> {
    if s == 1 && d != 0 {
        if let Some((&(_, d_last), inner)) = a_modes.split_last() {
            let rest = inner.iter().fold(d, |r, &(sk, _)| {
                if r > 0 {
                    (r / sk).max(1)
                } else {
                    r.div_euclid(sk.max(1))
                }
            });
            let stride = rest.checked_mul(d_last).unwrap_or(0);
            return Ok(vec![(1, stride)]);
        }
    }
    match compose_leaf_walk(a, a_modes, s, d) {
        Err(_) if s == 1 => Ok(vec![(1, 0)]),
        r => r,
    }
}

/// The walk of one leaf over A's modes (see the module doc).
fn compose_leaf_walk(
    a: &CuteLayout,
    a_modes: &[(i64, i64)],
    s: i64,
    d: i64,
) -> Result<Vec<(i64, i64)>> {
    if d == 0 {
        return Ok(vec![(s, 0)]);
    }
    if d < 0 {
        return Err(LayoutError::invalid(
            format!("composition {a} ∘ {s}:{d}"),
            "a negative stride on the right would index the left layout below 0",
        ));
    }
    let Some((&(_, d_last), inner)) = a_modes.split_last() else {
        return Ok(vec![(s, 0)]);
    };
    let (mut rest_s, mut rest_d) = (s, d);
    let mut out = Vec::new();
    for &(sk, dk) in inner {
        // Every remaining step stays inside this mode: no divisibility is needed (CUTLASS:
        // `(3,4):(16,12) ∘ 2:2 = 2:32`).
        if rest_d < sk && (rest_s - 1).checked_mul(rest_d).is_some_and(|x| x < sk) {
            out.push((rest_s, arith::mul(rest_d, dk, "composition stride")?));
            return Ok(out);
        }
        if sk % rest_d != 0 && rest_d % sk != 0 {
            return Err(LayoutError::invalid(
                format!("composition {a} ∘ {s}:{d}"),
                format!(
                    "stride divisibility fails: the remaining stride {rest_d} neither divides nor is a multiple of the mode extent {sk}"
                ),
            ));
        }
        let take = (sk / rest_d).max(1).min(rest_s);
        if rest_s % take != 0 {
            return Err(LayoutError::invalid(
                format!("composition {a} ∘ {s}:{d}"),
                format!(
                    "shape divisibility fails: {take} steps fit in the mode of extent {sk} but they do not divide the remaining extent {rest_s}"
                ),
            ));
        }
        if take > 1 {
            out.push((take, arith::mul(rest_d, dk, "composition stride")?));
        }
        rest_s /= take;
        rest_d = rest_d / sk + i64::from(rest_d % sk != 0);
    }
    if rest_s > 1 || out.is_empty() {
        out.push((rest_s, arith::mul(rest_d, d_last, "composition stride")?));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notation::cute::{parse_layout, parse_swizzled};

    fn l(t: &str) -> CuteLayout {
        parse_layout(t).unwrap()
    }

    fn comp(a: &str, b: &str) -> Result<String> {
        composition(&l(a), &l(b)).map(|r| r.to_string())
    }

    fn assert_pointwise(a: &str, b: &str) {
        let (a, b) = (l(a), l(b));
        let r = composition(&a, &b).unwrap();
        for i in 0..b.size() {
            let inner = b.eval_index(i).unwrap();
            assert_eq!(r.eval_index(i).unwrap(), eval_extended(&a, inner).unwrap());
        }
    }

    #[test]
    fn composition_spec_vectors() {
        assert_eq!(
            comp("(6,2):(8,2)", "(4,3):(3,1)").unwrap(),
            "((2, 2), 3):((24, 2), 8)"
        );
        assert_eq!(comp("(10,2):(16,4)", "4:5").unwrap(), "(2, 2):(80, 4)");
        assert_eq!(comp("(4,8):(1,4)", "(2,4):(1,2)").unwrap(), "(2, 4):(1, 2)");
        for (a, b) in [
            ("(6,2):(8,2)", "(4,3):(3,1)"),
            ("(10,2):(16,4)", "4:5"),
            ("(4,8):(1,4)", "(2,4):(1,2)"),
        ] {
            assert_pointwise(a, b);
        }
    }

    /// The CuTe DSL 4.8.1 answers `(2, 2):(24, 1)`, which reads A(6) as 1 where
    /// `(4,8):(8,1)` at 6 is `2*8 + 1 = 17`.
    #[test]
    fn composition_rejects_stride_divisibility_violation() {
        let e = comp("(4,8):(8,1)", "4:3").unwrap_err().to_string();
        assert!(e.contains("stride divisibility"), "{e}");
        let (a, dsl) = (l("(4,8):(8,1)"), l("(2,2):(24,1)"));
        assert_eq!(eval_extended(&a, 6).unwrap(), 17);
        assert_eq!(dsl.eval_index(2).unwrap(), 1);
    }

    /// CUTLASS answers where every step of B stays inside one mode of A, with no divisibility
    /// (`(3,4):(16,12) ∘ 2:2 = 2:32`, the CuTe DSL's answer), and reads an A ending in an
    /// extent-1 mode along that mode's stride (`1:1 ∘ 4:1 = 4:1`; pycute gives `4:0`).
    #[test]
    fn composition_follows_cutlass_inside_one_mode_and_past_an_extent_one_tail() {
        assert_eq!(comp("(3,4):(16,12)", "2:2").unwrap(), "2:32");
        assert_pointwise("(3,4):(16,12)", "2:2");
        assert_eq!(comp("(5,3):(7,1)", "2:3").unwrap(), "2:21");
        assert_eq!(comp("1:1", "4:1").unwrap(), "4:1");
        assert_eq!(comp("(2,2,1):(2,4,4)", "4:12").unwrap(), "4:12");
        assert_eq!(eval_extended(&l("(4,1):(1,8)"), 12).unwrap(), 24);
    }

    /// A negative stride on an extent-1 leaf of B is printed as the CuTe DSL 4.8.1 prints it
    /// (divided through A's inner modes rounding down), not as 0.
    #[test]
    fn composition_keeps_a_negative_stride_of_an_extent_one_leaf_as_the_dsl() {
        for (a, b, dsl) in [
            ("4:1", "(4,1):(1,-3)", "(4, 1):(1, -3)"),
            ("(4,6):(2,3)", "(4,1):(1,-3)", "(4, 1):(2, -3)"),
            ("(4,6):(2,3)", "(4,1):(1,-8)", "(4, 1):(2, -6)"),
            ("(4,6):(2,3)", "(4,1):(1,-100)", "(4, 1):(2, -75)"),
            ("(4,6,5):(2,3,7)", "(4,1):(1,-30)", "(4, 1):(2, -14)"),
            ("(4,6,5):(2,3,7)", "(4,1):(1,-1)", "(4, 1):(2, -7)"),
            ("(1,6,5):(2,3,7)", "(4,1):(1,-5)", "(4, 1):(3, -7)"),
        ] {
            assert_eq!(comp(a, b).unwrap(), dsl, "{a} o {b}");
            assert_pointwise(a, b);
        }
    }

    #[test]
    fn composition_rejects_shape_divisibility_violation() {
        let e = comp("(5,3):(7,1)", "7:1").unwrap_err().to_string();
        assert!(e.contains("shape divisibility"), "{e}");
    }

    /// CUTLASS issue 3177: `(4,6,8):(2,3,5) ∘ 6:3`. By the definition, A at B's indices
    /// 0,3,..,15 gives offsets 0,6,7,8,9,15, which no layout of size 6 produces; `(2,3):(6,3)`
    /// gives 0,6,3,9,6,12. The stride condition fails at the first mode (3 vs extent 4).
    #[test]
    fn composition_issue_3177_trap_is_rejected_by_stride_divisibility() {
        let (a, b) = (l("(4,6,8):(2,3,5)"), l("6:3"));
        let wanted: Vec<i64> = (0..6)
            .map(|i| eval_extended(&a, b.eval_index(i).unwrap()).unwrap())
            .collect();
        assert_eq!(wanted, [0, 6, 7, 8, 9, 15]);
        let wrong = l("(2,3):(6,3)");
        let got: Vec<i64> = (0..6).map(|i| wrong.eval_index(i).unwrap()).collect();
        assert_ne!(got, wanted);
        let e = composition(&a, &b).unwrap_err().to_string();
        assert!(e.contains("stride divisibility"), "{e}");
    }

    #[test]
    fn composition_with_stride_zero_leaf_is_constant() {
        assert_eq!(comp("(4,6):(1,4)", "(3,2):(0,1)").unwrap(), "(3, 2):(0, 1)");
    }

    /// Audit 27: the no-carry check walked every combination of four values per leaf, 2^26
    /// probes for 26 modes of extent 2 (a minute), 4^62 for 62; stride-0 leaves are fixed at
    /// 0 and wide B's take two values per leaf, bounded by `CARRY_CHECK_ALL`.
    #[test]
    fn the_no_carry_check_of_many_modes_is_bounded() {
        let modes = |n: usize, stride: &dyn Fn(usize) -> i64| {
            let e: Vec<String> = (0..n).map(|_| "2".to_string()).collect();
            let s: Vec<String> = (0..n).map(|k| stride(k).to_string()).collect();
            format!("({}):({})", e.join(","), s.join(","))
        };
        let zeros = modes(62, &|_| 0);
        assert_eq!(comp("2:1", &zeros).unwrap(), zeros.replace(',', ", "));
        // 30 contiguous modes: two values per leaf, 2^30 > 2^20 combinations: refused by name.
        let wide = modes(30, &|k| 1 << k);
        let e = comp("1073741824:1", &wide).unwrap_err().to_string();
        assert!(e.contains("coalesce B first"), "{e}");
        // 12 modes of extent 4: 4^12 too many, 2^12 taken; the result is A∘B.
        let e: Vec<String> = (0..12).map(|_| "4".to_string()).collect();
        let s: Vec<String> = (0..12).map(|k| (1i64 << (2 * k)).to_string()).collect();
        let b = format!("({}):({})", e.join(","), s.join(","));
        assert!(comp("16777216:1", &b).is_ok());
    }

    #[test]
    fn composition_swizzled_keeps_the_swizzle_outermost() {
        let a = parse_swizzled("Sw<3,3,3> o (8,64):(64,1)").unwrap();
        let b = l("(8,8):(1,8)");
        let r = composition_swizzled(&a, &b).unwrap();
        assert_eq!(r.to_string(), "Sw<3,3,3> o (8, 8):(64, 1)");
        for i in 0..b.size() {
            assert_eq!(
                r.eval_index(i).unwrap(),
                a.eval_index(b.eval_index(i).unwrap()).unwrap()
            );
        }
    }

    #[test]
    fn eval_extended_continues_the_last_mode() {
        assert_eq!(eval_extended(&l("(4,2):(1,10)"), 9).unwrap(), 21);
        assert_eq!(eval_extended(&l("(4,2):(1,10)"), 5).unwrap(), 11);
    }
}
