//! Decomposition search: is a layout `tile(atom, C)`, `Sw o tile(atom, C)`, or an aligned
//! `slice(atom, region)` for an atom of a library? The search runs in the e-graph
//! ([`egraph::decompose`], which this module re-exports): candidates proposed by Axe's
//! `tile_of` and by aligned regions are added as terms, unioned with the layout only once
//! certify proves them equivalent, and the cheapest is extracted by a cost model (tilings
//! before slices, fewer iters in `C`, the larger atom for a tiling and the smaller for a slice,
//! then the name).
//!
//! ```
//! use layout::Layout;
//! use solver::decompose::find_tilings;
//! // Four SM80 16x8 accumulator tiles, 2x2 over warps: a 32x16 tile of 128 threads.
//! let l = Layout::parse("S[(2,2,8,2,4,2):(64@tx,2@reg,4@tx,32@tx,1@tx,1@reg)]", None)?;
//! let atom = Layout::parse("((4,8),(2,2)):((32,1),(16,8)) -> (16,8)", None)?;
//! let found = find_tilings(&l, &[32, 16], &[("SM80_C".to_string(), atom)])?;
//! assert_eq!(found[0].to_string(), "tile(SM80_C, S[(2,2):(2@tx,1@tx)] over [2, 2])");
//! # Ok::<(), layout::LayoutError>(())
//! ```

pub use egraph::decompose::{decompose, find_tilings, Decomposition, Tiling};
