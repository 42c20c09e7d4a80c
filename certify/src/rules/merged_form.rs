//! The merged form of a strided literal with symbolic extents and strides: a proof, by
//! polynomial identities, that two literals of a rule map every flat index to the same point
//! wherever both are defined, for the identities bit-vector solvers find hard (merging modes
//! multiplies two parameters, and z3 must then reason about products of bit-vectors).
//!
//! A strided side reads a flat index `x` as digits `x = sum_i d_i * P_i`, `0 <= d_i < e_i`,
//! fastest iter first (`P_0 = 1`, `P_{i+1} = P_i * e_i`; an Axe literal reads row-major, so
//! its last iter is the fastest; a CuTe literal colexicographically, its first leaf the
//! fastest), and maps it to the point `offset + sum_i d_i * s_i` per axis. Two rewrites keep
//! that map at every instance where the literal is defined:
//!
//! - an iter of extent `1` has digit 0 always: drop it (only where the extent is the
//!   constant 1, the same at every instance);
//! - a fast iter `(e_f, s_f)` followed by a slower one `(e_g, s_g)` on the same axis with
//!   `s_g = e_f * s_f` reads the digits `d_f + e_f * d_g`, which range over `0 .. e_f * e_g`
//!   exactly once, and adds `d_f * s_f + d_g * e_f * s_f = (d_f + e_f * d_g) * s_f`: merge them
//!   into `(e_f * e_g, s_f)`.
//!
//! Extents, strides and offsets are polynomials in the rule's integer parameters with integer
//! coefficients, and `s_g = e_f * s_f` is asked of the polynomials, so it holds at EVERY
//! instance; at an instance where the literal is defined its values are the polynomials'
//! exact values (the semantics' arithmetic is checked, never wrapped). So two literals with
//! the same merged form (iters: extents, strides and axes; offsets per axis) relate every flat
//! index to the same point wherever both are defined. That both are defined at the same
//! instances is asked separately (of z3), as is the rest of the rule.
//!
//! Example: `S[(4,e):(e*s, s)]` reads `(e, s)` then `(4, e*s)`, fastest first; `e*s = e * s`,
//! so they merge into `(4*e, s)`: the merged form of `S[(4*e):s]`.

use std::collections::BTreeMap;

use super::syntax::IntExpr;

/// A polynomial over the integer parameters: monomial (parameter, power) list, sorted, to its
/// nonzero coefficient. Absent: zero.
pub type Poly = BTreeMap<Vec<(String, u32)>, i128>;

/// An iter of a merged form: extent, stride, axis.
pub type MergedIter = (Poly, Poly, String);

/// A literal's merged form: its iters fastest first, and its offset per axis (nonzero only).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MergedForm {
    /// Iters, fastest first, none of constant extent 1, no two adjacent ones mergeable.
    pub iters: Vec<MergedIter>,
    /// Each axis's offset (the sum of the offsets written on it), where it is not zero.
    pub offsets: BTreeMap<String, Poly>,
}

fn constant(c: i128) -> Poly {
    if c == 0 {
        Poly::new()
    } else {
        [(Vec::new(), c)].into()
    }
}

fn add(a: &Poly, b: &Poly) -> Option<Poly> {
    let mut out = a.clone();
    for (m, c) in b {
        let v = out.get(m).copied().unwrap_or(0).checked_add(*c)?;
        if v == 0 {
            out.remove(m);
        } else {
            out.insert(m.clone(), v);
        }
    }
    Some(out)
}

fn neg(a: &Poly) -> Option<Poly> {
    a.iter()
        .map(|(m, c)| Some((m.clone(), c.checked_neg()?)))
        .collect()
}

fn mul(a: &Poly, b: &Poly) -> Option<Poly> {
    let mut out = Poly::new();
    for (ma, ca) in a {
        for (mb, cb) in b {
            let mut powers: BTreeMap<String, u32> = BTreeMap::new();
            for (p, k) in ma.iter().chain(mb) {
                let e = powers.entry(p.clone()).or_insert(0);
                *e = e.checked_add(*k)?;
            }
            let term: Poly = [(powers.into_iter().collect(), ca.checked_mul(*cb)?)].into();
            out = add(&out, &term)?;
        }
    }
    Some(out)
}

/// The polynomial an integer expression is, when it is one (`+ - *`, negation, numbers and
/// parameters; `/`, `%` and functions are not), without coefficient overflow.
pub fn poly(e: &IntExpr) -> Option<Poly> {
    match e {
        IntExpr::Num(v) => Some(constant(i128::from(*v))),
        IntExpr::Param(p) => Some([(vec![(p.clone(), 1)], 1)].into()),
        IntExpr::Neg(x) => neg(&poly(x)?),
        IntExpr::Bin(op, x, y) => {
            let (x, y) = (poly(x)?, poly(y)?);
            match op {
                '+' => add(&x, &y),
                '-' => add(&x, &neg(&y)?),
                '*' => mul(&x, &y),
                _ => None,
            }
        }
        IntExpr::Call(..) => None,
    }
}

/// The merged form of a literal with these `(extent, stride, axis)` iters in written order
/// (`fastest_first`: CuTe's colexicographic order; else Axe's row-major, last iter fastest)
/// and these `(value, axis)` offsets; `None` when an extent, stride or offset is no
/// polynomial.
pub fn merged_form(
    iters: &[(IntExpr, IntExpr, String)],
    fastest_first: bool,
    offsets: &[(IntExpr, String)],
) -> Option<MergedForm> {
    let one = constant(1);
    let mut order: Vec<&(IntExpr, IntExpr, String)> = iters.iter().collect();
    if !fastest_first {
        order.reverse();
    }
    let mut out: Vec<MergedIter> = Vec::new();
    for (e, s, axis) in order {
        let (e, s) = (poly(e)?, poly(s)?);
        if e == one {
            continue;
        }
        match out.last_mut() {
            Some((ef, sf, a)) if a == axis && s == mul(ef, sf)? => *ef = mul(ef, &e)?,
            _ => out.push((e, s, axis.clone())),
        }
    }
    let mut by_axis: BTreeMap<String, Poly> = BTreeMap::new();
    for (v, axis) in offsets {
        let sum = add(by_axis.get(axis).unwrap_or(&Poly::new()), &poly(v)?)?;
        by_axis.insert(axis.clone(), sum);
    }
    by_axis.retain(|_, p| !p.is_empty());
    Some(MergedForm {
        iters: out,
        offsets: by_axis,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::parse_source;
    use crate::rules::syntax::{Arg, Term};

    /// An integer expression over `a b e s` as the rule parser reads it (an operator's integer
    /// argument).
    fn int(text: &str) -> IntExpr {
        let rule = format!(
            "rule r forall a b e s : int where 0 <= a <= 1, 0 <= b <= 1, 0 <= e <= 1, 0 <= s <= 1
  complement(4:1, {text}) == 4:1"
        );
        match parse_source("t", &rule).unwrap().rules.remove(0).lhs {
            Term::Op { mut args, .. } => match args.pop() {
                Some(Arg::Int(e)) => e,
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        }
    }

    fn form(iters: &[(&str, &str, &str)], fastest_first: bool) -> MergedForm {
        let iters: Vec<_> = iters
            .iter()
            .map(|(e, s, a)| (int(e), int(s), a.to_string()))
            .collect();
        merged_form(&iters, fastest_first, &[]).unwrap()
    }

    #[test]
    fn a_merge_identity_has_one_merged_form() {
        let p = |e: IntExpr| poly(&e).unwrap();
        // S[(4,e):(e*s, s)] (row-major) and S[(4*e):s].
        let a = form(&[("4", "e*s", "m"), ("e", "s", "m")], false);
        let b = form(&[("4*e", "s", "m")], false);
        assert_eq!(a, b);
        assert_eq!(a.iters, vec![(p(int("4*e")), p(int("s")), "m".into())]);
        // The CuTe reading: (e,4):(s, e*s) colexicographically.
        assert_eq!(form(&[("e", "s", "m"), ("4", "e*s", "m")], true), b);
        // An extent-1 iter drops out, then the neighbours merge: (a, 1, b):(1, 7, a).
        let c = form(&[("a", "1", "m"), ("1", "7", "m"), ("b", "a", "m")], true);
        assert_eq!(c, form(&[("a*b", "1", "m")], true));
    }

    #[test]
    fn near_misses_do_not_merge() {
        // Off by one, the wrong order, another axis, a different extent.
        let merged = form(&[("4*e", "s", "m")], false);
        for f in [
            form(&[("4", "(e+1)*s", "m"), ("e", "s", "m")], false),
            form(&[("4", "e*s", "m"), ("e", "s", "m")], true),
            form(&[("4", "e*s", "laneid"), ("e", "s", "m")], false),
            form(&[("4", "e*s", "m"), ("e+1", "s", "m")], false),
        ] {
            assert_ne!(f, merged, "{f:?}");
            assert_eq!(f.iters.len(), 2, "{f:?}");
        }
        // Division is no polynomial: no form, so no claim.
        let iters = [(int("e/2"), int("1"), "m".to_string())];
        assert!(merged_form(&iters, true, &[]).is_none());
    }

    /// Extents and strides over the parameters `a` and `b`, written as rule text.
    fn operand() -> impl proptest::strategy::Strategy<Value = String> {
        proptest::sample::select(vec![
            "1", "2", "3", "a", "b", "a*b", "2*a", "a+1", "b-a", "-1",
        ])
        .prop_map(str::to_string)
    }

    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        /// Soundness against the semantics: an Axe literal and a second one made from it by
        /// splitting iters `(e*f):s` into `(e,f):(f*s, s)`, inserting extent-1 iters and
        /// perturbing a stride or extent (so that some pairs are false); wherever the merged
        /// forms agree, both literals, parsed by `layout` at every instance with `a, b` in
        /// -2..=3, map every flat index to the same points, or are undefined.
        #[test]
        fn equal_merged_forms_mean_equal_maps(
            iters in proptest::collection::vec((operand(), operand()), 1..4),
            ops in proptest::collection::vec((0usize..4, operand(), 0u8..4), 0..3),
        ) {
            let text = |it: &[(String, String)]| {
                let e: Vec<String> = it.iter().map(|x| format!("({})", x.0)).collect();
                let s: Vec<String> = it.iter().map(|x| format!("({})", x.1)).collect();
                format!("S[({}):({})]", e.join(","), s.join(","))
            };
            let mut other = iters.clone();
            for (at, f, kind) in ops {
                let at = at % other.len();
                let (e, s) = other[at].clone();
                match kind {
                    // Split (e*f):s into (e, f):(f*s, s), row-major: slow first.
                    0 => {
                        other[at] = (format!("({e})*({f})"), s.clone());
                        other.splice(at..=at, [(e, format!("({f})*({s})")), (f, s)]);
                    }
                    1 => other.insert(at, ("1".into(), f)),
                    2 => other[at].1 = format!("({s})+({f})"),
                    _ => other[at].0 = format!("({e})*({f})"),
                }
            }
            let (l, r) = (text(&iters), text(&other));
            let rule = format!("rule r forall a b : int where -2 <= a <= 3, -2 <= b <= 3\n  {l} == {r}");
            // (A literal with no parameter that is never defined does not parse.)
            let Ok(file) = parse_source("p", &rule) else { return Ok(()) };
            let lits = |t: &Term| match t {
                Term::Lit { pieces, .. } => pieces.clone(),
                _ => unreachable!(),
            };
            let (lp, rp) = (lits(&file.rules[0].lhs), lits(&file.rules[0].rhs));
            let sym = |x: &[(String, String)]| -> Option<MergedForm> {
                let its: Vec<_> = x.iter().map(|(e, s)| (int(e), int(s), "m".to_string())).collect();
                merged_form(&its, false, &[])
            };
            let (Some(fl), Some(fr)) = (sym(&iters), sym(&other)) else { return Ok(()) };
            if fl != fr {
                return Ok(());
            }
            for a in -2..=3i64 {
                for b in -2..=3i64 {
                    let asg: crate::rules::eval::Assignment = [
                        ("a".to_string(), crate::rules::eval::Bound::Int(a)),
                        ("b".to_string(), crate::rules::eval::Bound::Int(b)),
                    ].into();
                    let value = |p: &[crate::rules::syntax::Piece]| {
                        crate::rules::eval::fill(p, &asg).ok()
                            .and_then(|t| layout::Layout::parse(&t, None).ok())
                    };
                    let (Some(x), Some(y)) = (value(&lp), value(&rp)) else { continue };
                    prop_assert_eq!(x.domain_size(), y.domain_size(), "{} vs {} at a={}, b={}", l, r, a, b);
                    let n = x.domain_size();
                    for i in 0..n.min(512) {
                        prop_assert_eq!(
                            x.eval(Some(&[n]), &[i]).unwrap(),
                            y.eval(Some(&[n]), &[i]).unwrap(),
                            "{} vs {} at a={}, b={}, index {}", l, r, a, b, i
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn polynomials_are_exact_and_canonical() {
        let p = |t: &str| poly(&int(t)).unwrap();
        assert_eq!(p("(a+b)*(a-b)"), p("a*a - b*b"));
        assert_eq!(p("e*s*4"), p("4*(s*e)"));
        assert_eq!(p("a - a"), Poly::new());
        assert_ne!(p("2*a"), p("a + 1"));
        // A coefficient past i128 is no polynomial here, never a wrapped one.
        let max = || Box::new(IntExpr::Num(i64::MAX));
        let square = IntExpr::Bin('*', max(), max());
        assert!(poly(&square).is_some());
        assert!(poly(&IntExpr::Bin('*', Box::new(square), max())).is_none());
    }
}
