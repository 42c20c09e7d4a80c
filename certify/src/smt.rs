//! z3 with a resource limit on every query.
//!
//! We link the system libz3 (Debian's 4.8.12) through the `z3` crate 0.22, whose pre-generated
//! bindings need no libclang; the crate's build script detects the library's version. A
//! resource limit (`rlimit`, deterministic, unlike a wall-clock timeout) bounds every query:
//! hitting it is `Unknown`, never a hang.

use z3::{Params, SatResult, Solver};

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
