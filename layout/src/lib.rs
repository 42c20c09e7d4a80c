//! # layout — laycert's layout model
//!
//! The value types, exact semantics and text notations of every layout formalism laycert
//! reasons about. This crate is part of laycert's TRUSTED BASE: the evaluation functions here are
//! the single source of truth that every decider is checked against, so they are kept small and
//! obvious.
//!
//! - [`axe`]: Axe layouts `(D, R, O)` over named axes, evaluating to SETS of physical points;
//!   [`axis`]: axes, aliases and per-target relations (a data file).
//! - [`cute`]: CuTe hierarchical layouts (colexicographic) and thread-value layouts.
//! - [`swizzle`]: CuTe `Sw<B,M,S>`, TIRx and Triton swizzle parameters, swizzled layouts.
//! - [`linear`]: F2 linear layouts with named in/out dims; [`triton`]: Triton attributes.
//! - [`bank`]: shared-memory bank conflicts (wavefronts per warp instruction).
//! - [`swizzle_opt`]: optimal swizzled shared-memory layouts for a (write, read) pair.
//! - [`shuffle`]: warp-shuffle conversion plans between distributed layouts, and their simulator.
//! - [`mesh`]: device meshes and distributed layouts (DTensor, JAX, HLO shardings).
//! - [`notation`]: parse and print for all of them; [`Layout`]: any of them, one `eval`.
//! - [`convert`]: exact conversions between formalisms, refusing with a reason.
//!
//! ```
//! use layout::{Layout, axis::format_point};
//!
//! // The Axe paper's tensor-core tile, evaluated at logical (2,9) of an 8x16 tile.
//! let l = Layout::parse(
//!     "S[(8,2,4,2):(4@laneid,1@warpid,1@laneid,1@reg)] + R[2:4@warpid] + 5@warpid", None)?;
//! let points: Vec<String> = l.eval(Some(&[8, 16]), &[2, 9])?.iter().map(format_point).collect();
//! assert_eq!(points, ["{laneid:8, reg:1, warpid:6}", "{laneid:8, reg:1, warpid:10}"]);
//!
//! // CuTe text round-trips exactly as pycute prints it.
//! let c = Layout::parse("(4,(2,4)):(2,(1,8))", None)?;
//! assert_eq!(c.print(), "(4, (2, 4)):(2, (1, 8))");
//! # Ok::<(), layout::LayoutError>(())
//! ```
#![warn(missing_docs)]

pub mod arith;
pub mod axe;
pub mod axis;
pub mod bank;
pub mod convert;

pub mod cute;
pub mod error;
pub mod f2;
pub mod facts;

#[allow(clippy::module_inception)]
pub mod layout;
pub mod linear;
pub mod mesh;
pub mod notation;
pub mod relation;
pub mod shape;
pub mod shuffle;
pub mod swizzle;
pub mod swizzle_opt;
pub mod trainium;
pub mod triton;

pub use axe::{AxeLayout, Iter};
pub use axis::{Axis, AxisRegistry, Point};
pub use cute::{CuteLayout, IntTuple, TvLayout};
pub use error::{LayoutError, ParseError, Result};
pub use layout::Layout;
pub use linear::LinearLayout;
pub use swizzle::{Swizzle, SwizzledLayout, TirxSwizzle, TritonSwizzle};
