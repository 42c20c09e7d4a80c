//! z3 with a resource limit on every query.
//!
//! We link the system libz3 (Debian's 4.8.12) through the `z3` crate 0.22, whose pre-generated
//! bindings need no libclang; the crate's build script detects the library's version. A
//! resource limit (`rlimit`, deterministic, unlike a wall-clock timeout) bounds every query:
//! hitting it is `Unknown`, never a hang.
//!
//! Encoding without division: a strided form's logical index `x` is decomposed by one bounded
//! digit variable per digit (`0 <= d_i < e_i`, `x == sum_i d_i * P_i` with `P_i` the product
//! of the faster extents), so a point is `base + sum_i d_i * s_i`: additions and
//! multiplications by constants only, which z3 bit-blasts to adders, where `bvudiv`/`bvurem`
//! by non-powers of two were out of reach. The bit width is chosen by interval analysis: wide
//! enough for the index range, every partial sum of every axis and the swizzle's bits, plus a
//! sign bit, so no term wraps. Example: `(1021020):(1)` against `(3,5,7,11,13,17,4):(..)`
//! needs 23 bits.

use z3::ast::BV;
use z3::{Params, SatResult, Solver};

use crate::decider::{Counterexample, Outcome};
use crate::forward::{Forward, ForwardKind};

/// The outcome of a bounded query.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// A model exists.
    Sat,
    /// No model exists.
    Unsat,
    /// z3 stopped without an answer; the reason it gave.
    Unknown(String),
}

/// A fresh solver whose every `check` stops after `rlimit` resource units.
pub fn limited_solver(rlimit: u32) -> Solver {
    let s = Solver::new();
    let mut p = Params::new();
    p.set_u32("rlimit", rlimit);
    s.set_params(&p);
    s
}

/// Runs the query.
pub fn check(s: &Solver) -> Verdict {
    match s.check() {
        SatResult::Sat => Verdict::Sat,
        SatResult::Unsat => Verdict::Unsat,
        SatResult::Unknown => Verdict::Unknown(
            s.get_reason_unknown()
                .unwrap_or_else(|| "no reason given".into()),
        ),
    }
}

/// The linked z3's version, e.g. `4.8.12.0`.
pub fn z3_version() -> String {
    z3::full_version().to_string()
}

/// Default resource limit of one equivalence query.
pub const DEFAULT_RLIMIT: u32 = 20_000_000;

/// The SMT-LIB2 text of the query "some logical index maps differently", and z3's answer.
/// Both forms must be strided (see [`ForwardKind`]) over the same axes.
pub fn decide(a: &Forward, b: &Forward, rlimit: u32) -> (Outcome, Option<String>) {
    // A fresh z3 context per query: z3's thread-local context keeps state across queries
    // (interned terms, the random seed's progress), so a second query in one process could
    // return another model and a certificate made or checked after other queries would not
    // re-check byte for byte. In its own context the same query always gives the same model.
    z3::with_z3_config(&z3::Config::new(), || decide_in_context(a, b, rlimit))
}

fn decide_in_context(a: &Forward, b: &Forward, rlimit: u32) -> (Outcome, Option<String>) {
    assert_eq!(a.axes, b.axes, "forms are widened to common axes first");
    let n = a.size();
    if n != b.size() {
        return (
            Outcome::Unknown {
                reason: format!("the sides have {n} and {} logical indices", b.size()),
            },
            None,
        );
    }
    let (Some(ea), Some(eb)) = (Encodable::of(a), Encodable::of(b)) else {
        return (
            Outcome::Unknown {
                reason: "a side has no strided form (enumerated table); no BV encoding".into(),
            },
            None,
        );
    };
    if ea.replica_shape != eb.replica_shape {
        // Sets t_A + R_A and t_B + R_B of different shapes differ at every index.
        return (refuted(a, b, 0), None);
    }
    if (ea.replicated || eb.replicated) && (ea.swizzle.is_some() || eb.swizzle.is_some()) {
        return (
            Outcome::Unknown {
                reason: "replicas under a swizzle are not encoded".into(),
            },
            None,
        );
    }
    // Over a common refinement of the two digit lists both sides share one set of digit
    // variables (splitting a digit is exact), so z3 need not relate two decompositions of x.
    let (mut ea, mut eb) = (ea, eb);
    if let Some(r) = crate::canonical::refine(&ea.digits, &eb.digits) {
        ea.digits = r.iter().map(|(e, s, _)| (*e, s.clone())).collect();
        eb.digits = r.into_iter().map(|(e, _, s)| (e, s)).collect();
    }
    let Some(width) = width_for(&[&ea, &eb], n) else {
        return (
            Outcome::Unknown {
                reason: "the values exceed 63 bits; no BV encoding".into(),
            },
            None,
        );
    };
    let s = limited_solver(rlimit);
    let x = BV::new_const("x", width);
    s.assert(x.bvult(BV::from_u64(n as u64, width)));
    let shared = ea
        .digits
        .iter()
        .map(|d| d.0)
        .eq(eb.digits.iter().map(|d| d.0));
    let pa = ea.encode(&s, &x, "a", width);
    let pb = eb.encode(&s, &x, if shared { "a" } else { "b" }, width);
    let differs: Vec<z3::ast::Bool> = pa.iter().zip(&pb).map(|(u, v)| u.eq(v).not()).collect();
    s.assert(z3::ast::Bool::or(&differs));
    let query = canonical_smt2(&s.to_smt2());
    let outcome = match check(&s) {
        Verdict::Unsat => Outcome::Proved {
            evidence: format!(
                "z3 {}: unsat (no index below {n} maps differently)",
                z3_version()
            ),
        },
        Verdict::Sat => {
            let m = s.get_model().expect("sat has a model");
            let xv = m.eval(&x, true).and_then(|v| v.as_u64()).map(|v| v as i64);
            match xv {
                Some(xv) if a.points(xv) != b.points(xv) => refuted(a, b, xv),
                other => Outcome::Unknown {
                    reason: format!("z3's model {other:?} does not re-evaluate as a difference"),
                },
            }
        }
        Verdict::Unknown(why) => Outcome::Unknown {
            reason: format!("z3: {why}"),
        },
    };
    (outcome, Some(query))
}

/// z3 names its let-bound subterms by internal ids (`?x33`, `$x45`) that vary between runs;
/// renaming them in order of first appearance makes the exported query deterministic.
pub fn canonical_smt2(text: &str) -> String {
    let mut names: Vec<String> = Vec::new();
    let mut out = String::with_capacity(text.len());
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if (b[i] == b'?' || b[i] == b'$') && i + 1 < b.len() && b[i + 1] == b'x' {
            let mut j = i + 2;
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            if j > i + 2 {
                let name = &text[i..j];
                let k = names.iter().position(|n| n == name).unwrap_or_else(|| {
                    names.push(name.to_string());
                    names.len() - 1
                });
                out.push(b[i] as char);
                out.push_str(&format!("t{k}"));
                i = j;
                continue;
            }
        }
        let c = text[i..].chars().next().expect("in bounds");
        out.push(c);
        i += c.len_utf8();
    }
    out
}

fn refuted(a: &Forward, b: &Forward, x: i64) -> Outcome {
    Outcome::Refuted {
        counterexample: Counterexample {
            index: x,
            coord: layout::shape::unflatten_row_major(&a.shape, x).unwrap_or_default(),
            left: a.points(x),
            right: b.points(x),
            explanation: None,
        },
    }
}

/// A strided form ready to encode: digits, base (offset + smallest replica), swizzle.
pub(crate) struct Encodable<'f> {
    digits: std::borrow::Cow<'f, [(i64, Vec<i64>)]>,
    base: Vec<i64>,
    swizzle: Option<(usize, layout::Swizzle)>,
    replica_shape: Vec<Vec<i64>>,
    replicated: bool,
}

impl<'f> Encodable<'f> {
    pub(crate) fn of(f: &'f Forward) -> Option<Self> {
        let ForwardKind::Strided {
            digits,
            replicas,
            offset,
            swizzle,
            ..
        } = &f.kind
        else {
            return None;
        };
        let min = &replicas[0];
        Some(Encodable {
            digits: std::borrow::Cow::Borrowed(digits),
            base: offset.iter().zip(min).map(|(o, r)| o + r).collect(),
            swizzle: *swizzle,
            replica_shape: replicas
                .iter()
                .map(|p| p.iter().zip(min).map(|(x, y)| x - y).collect())
                .collect(),
            replicated: replicas.len() > 1,
        })
    }

    /// The largest magnitude the encoding of this form handles: the index bound is given
    /// separately; every partial sum of every axis, and the swizzle's highest bit.
    fn magnitude(&self) -> Option<i64> {
        let mut m: i64 = 0;
        for (a, &b) in self.base.iter().enumerate() {
            let mut reach = b.checked_abs()?;
            for (e, s) in self.digits.iter() {
                reach = reach.checked_add((e - 1).checked_mul(s[a].checked_abs()?)?)?;
            }
            m = m.max(reach);
        }
        if let Some((_, sw)) = self.swizzle {
            m = m.max(sw.source_mask()).max(sw.dest_mask());
        }
        Some(m)
    }

    /// One BV term per axis, `sw(base + sum_i d_i * s_i)`, with digit variables `d_i`
    /// (named `{tag}_d{i}`) bounded by their extents and tied to `x` by `x == sum d_i * P_i`
    /// (asserted on `solver`). `width` comes from [`width_for`], so nothing wraps.
    pub(crate) fn encode(&self, solver: &Solver, x: &BV, tag: &str, width: u32) -> Vec<BV> {
        let k = |v: i64| BV::from_i64(v, width);
        let mut out: Vec<BV> = self.base.iter().map(|&v| k(v)).collect();
        let mut index = k(0);
        let mut place = 1i64;
        for (i, (e, s)) in self.digits.iter().enumerate().rev() {
            if *e == 1 {
                continue;
            }
            let digit = BV::new_const(format!("{tag}_d{i}"), width);
            solver.assert(digit.bvult(k(*e)));
            index = index.bvadd(digit.bvmul(k(place)));
            for (o, &sv) in out.iter_mut().zip(s) {
                if sv != 0 {
                    *o = o.bvadd(digit.bvmul(k(sv)));
                }
            }
            place = place.saturating_mul(*e);
        }
        solver.assert(x.eq(&index));
        if let Some((i, sw)) = self.swizzle {
            let v = out[i].clone();
            let moved = v.bvand(k(sw.source_mask()));
            let shifted = if sw.shift() >= 0 {
                moved.bvlshr(k(sw.shift() as i64))
            } else {
                moved.bvshl(k(-(sw.shift() as i64)))
            };
            // The semantics leave negative values unswizzled (`Forward::points`).
            out[i] = v.bvslt(k(0)).ite(&v, &v.bvxor(shifted));
        }
        out
    }
}

/// The bit width that holds every value of the forms' encodings (indices below `n`, partial
/// sums, swizzle bits) as a signed number, with a spare bit; `None` beyond 64 bits.
pub(crate) fn width_for(forms: &[&Encodable], n: i64) -> Option<u32> {
    let mut m = n;
    for f in forms {
        m = m.max(f.magnitude()?);
    }
    let bits = 64 - m.leading_zeros() + 2;
    (bits <= 64).then_some(bits.max(8))
}

#[cfg(test)]
mod tests {
    use super::*;
    use z3::ast::BV;

    #[test]
    fn bit_vector_query_is_solved_with_a_model() {
        let s = limited_solver(5_000_000);
        let x = BV::new_const("x", 32);
        s.assert(x.bvmul(BV::from_u64(3, 32)).eq(BV::from_u64(7, 32)));
        assert_eq!(check(&s), Verdict::Sat);
        let v = s
            .get_model()
            .unwrap()
            .eval(&x, true)
            .unwrap()
            .as_u64()
            .unwrap();
        assert_eq!(v.wrapping_mul(3) & 0xffff_ffff, 7);
        // And a refutation: x*2 is even, never 7.
        let u = limited_solver(5_000_000);
        u.assert(x.bvmul(BV::from_u64(2, 32)).eq(BV::from_u64(7, 32)));
        assert_eq!(check(&u), Verdict::Unsat);
    }

    #[test]
    fn hard_query_stops_at_its_resource_limit() {
        // Factoring a 64-bit semiprime into two 32-bit factors is far beyond 1000 units.
        let s = limited_solver(1000);
        let (a, b) = (BV::new_const("a", 64), BV::new_const("b", 64));
        s.assert(a.bvmul(&b).eq(BV::from_u64(0xffff_fffb_ffff_fff5, 64)));
        for v in [&a, &b] {
            s.assert(v.bvugt(BV::from_u64(1, 64)));
            s.assert(v.bvult(BV::from_u64(1 << 32, 64)));
        }
        match check(&s) {
            Verdict::Unknown(why) => assert!(why.contains("resource"), "{why}"),
            other => panic!("expected the resource limit to stop the query, got {other:?}"),
        }
    }

    #[test]
    fn linked_z3_reports_its_version() {
        assert!(z3_version().starts_with("4."), "{}", z3_version());
    }
}
