//! # certify — claims, deciders, certificates
//!
//! The second half of laycert's trusted base. It will hold claims about layouts (equivalence,
//! injectivity, refinement), three independent deciders (normal form, z3 QF_BV, exhaustive),
//! versioned certificates and the checker that re-verifies them (spec certify.md). For now it
//! holds the SMT foundation: a z3 solver that always carries a resource limit, so a query
//! returns `unknown` instead of hanging.
//!
//! ```
//! use certify::smt::{limited_solver, Verdict};
//! use z3::ast::BV;
//!
//! // Is there an 8-bit x with 3*x == 7? Yes: x = 173, as 3*173 = 519 = 2*256 + 7.
//! let s = limited_solver(1_000_000);
//! let x = BV::new_const("x", 8);
//! s.assert(&x.bvmul(&BV::from_u64(3, 8)).eq(&BV::from_u64(7, 8)));
//! assert_eq!(certify::smt::check(&s), Verdict::Sat);
//! let m = s.get_model().unwrap();
//! assert_eq!(m.eval(&x, true).unwrap().as_u64(), Some(173));
//! ```
#![warn(missing_docs)]

pub mod smt;
