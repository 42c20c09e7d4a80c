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
//! # The domain of a claim
//!
//! Every claim is decided over ONE logical domain, defined once in [`domain`] (spec
//! certify.md 1b): a shape whose N-D coordinates both sides are evaluated at, each side reading
//! a coordinate in its own notation's order (CuTe colexicographic, Axe/TIRx and Triton
//! row-major). A named shape is used as given; otherwise [`domain::resolve`] picks it from the
//! two sides by rules that do not depend on which side is written first (a fixed TV/linear
//! domain; equal natural domains; the only natural domain of rank >= 2; the flat index when both
//! sides read alike), and an ambiguous pair is an error asking for `--shape`. The same
//! definition serves [`equivalent`], refinement ([`property::refines`]), every step of an
//! explanation chain ([`rules::explain::valid_prefix`]: each step's whole terms are decided over
//! the chain's one domain, so a checked chain proves `start == end` over it), and rule
//! instances. `tests/domain.rs` checks its symmetry as a property against a tiny independent
//! evaluator.
//!
//! # The trusted base
//!
//! A PROVED, `equivalent` or `valid` depends on these modules and nothing else (line counts by
//! `wc -l` on 2026-11-24, doc comments and unit tests included):
//!
//! | module | lines | what it is trusted for |
//! |---|---|---|
//! | `layout::{layout, axe, cute, linear, swizzle, shape}` | 1664 | evaluation of each notation (the semantics) |
//! | `layout::{relation, axis}` | 962 | the one relation semantics: a point is the sum of its parts per resolved axis; TV and linear layouts read backwards, input by input |
//! | `layout::{notation, triton}` | 2512 | reading the text a claim names |
//! | [`domain`] | 254 | which coordinates a claim is about |
//! | [`claim`] | 436 | the policy (deciders must agree), counterexample confirmation |
//! | [`recheck`] | 525 | the semantic cross-check of a proof |
//! | [`forward`], [`exhaustive`], [`normal_form`], [`canonical`], [`smt`] | 2225 | the deciders and their encodings |
//! | [`rules::eval`], [`rules::prove`], [`rules::symbolic`], [`rules::crosscheck`] | 2486 | rule instances, concrete and symbolic, and the re-check of z3 proofs |
//! | [`certificate`], [`rules::certificate`], [`rules::explain`], [`movement`] | 1806 | the checkers |
//!
//! What `laycert check` re-derives, per certificate kind, and by which path:
//! - **equivalence** ([`certificate::check`]): re-runs the deciders named (same path: catches
//!   edits) AND re-evaluates an `equivalent` claim by `layout`'s semantics alone
//!   ([`recheck::semantic_recheck`], no forward form, no conversion): every coordinate of a domain
//!   of at most 2^16 points, else its corners, edges and a seeded sample. A counterexample is
//!   re-evaluated by the semantics too.
//! - **rule** ([`rules::certificate::check`]): re-proves the rule from its text (same prover);
//!   a z3 PROVED is cross-checked on boundary and sampled instances by the concrete path.
//! - **explanation** ([`rules::explain::check`]): re-proves every rule named, re-matches each
//!   step, and decides each step's terms by the deciders over the chain's domain.
//! - **movement** ([`movement::check`]): re-decides the parts (per-piece equivalences,
//!   injectivity, the grid bijection, the tile stage by enumeration and F2 ranks) and, up to 2^22
//!   elements, re-runs the whole-kernel simulation, a path that shares no code with the parts.
//!
//! `check` answers `valid` only for a certificate that records a proof and re-verifies;
//! a re-verified UNKNOWN or REFUTED certificate is reported as such (exit 3 / 4).
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
pub mod dist;
pub mod domain;
pub mod exhaustive;
pub mod forward;
pub mod movement;
pub mod normal_form;
pub mod property;
pub mod recheck;
pub mod smt;
pub mod synthesis;
pub mod tensore;

pub use claim::{equivalent, Policy, Report};
pub use decider::{Counterexample, DeciderKind, Explanation, Outcome};
pub mod rules;
