//! # certify — claims, deciders, certificates
//!
//! The second half of laycert's trusted base (spec certify.md). A claim about layouts in any
//! notations is decided by independent deciders over one [`forward`] form (logical index ->
//! set of physical points over shared axes): [`exhaustive`] enumeration and [`smt`] (z3 over
//! bit-vectors, every query under a resource limit). A counterexample is shown only after
//! both layouts are re-evaluated at it by `layout`'s semantics and differ. [`rules`] proves
//! rewrite rules (rule files) for every parameter value within their bounds, and checks the
//! e-graph's explanation certificates.
//!
//! ```
//! use certify::{equivalent, Policy};
//! use layout::Layout;
//!
//! // Triton's MMAv2 fragment on 16x8 and CuTe's SM80 16x8 C atom are the same map.
//! let mma = Layout::parse(
//!     "#ttg.linear<{register = [[0, 1], [8, 0]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = [], block = []}>",
//!     Some(&[16, 8]))?;
//! let cute = Layout::parse("((4,8),(2,2)):((32,1),(16,8)) -> (16,8)", None)?;
//! let report = equivalent(&mma, &cute, None, &Policy::default())?;
//! assert_eq!(report.verdict(), "equivalent");
//!
//! // A mutated stride is caught, with a counterexample.
//! let bad = Layout::parse("((4,8),(2,2)):((32,1),(16,4)) -> (16,8)", None)?;
//! let report = equivalent(&mma, &bad, None, &Policy::default())?;
//! assert_eq!(report.verdict(), "not equivalent");
//! # Ok::<(), layout::LayoutError>(())
//! ```
#![warn(missing_docs)]

pub mod canonical;
pub mod certificate;
pub mod claim;
pub mod decider;
pub mod exhaustive;
pub mod forward;
pub mod movement;
pub mod normal_form;
pub mod property;
pub mod smt;

pub use claim::{equivalent, Policy, Report};
pub use decider::{Counterexample, DeciderKind, Explanation, Outcome};
pub mod rules;
