//! # Synthesis of thread-value and shared-memory layouts for tile programs (Hexcute)
//!
//! A tile program ([`Program`]: text form or [`ProgramBuilder`]) names global views with given
//! layouts, shared tensors whose layouts may be given or synthesized, and register tensors whose
//! thread-value layouts are always synthesized, and the operations over them (copy, mma, cast,
//! rearrange, elementwise, reduce). [`synthesize`] follows the Hexcute paper's algorithm 1, each
//! step its own module:
//!
//! 1. [`graph`]: the petgraph DAG, split at shared memory into components;
//! 2. [`anchor`]: anchors: an mma tiles its accumulator with the target's fastest atom
//!    ([`instr`], corpus/data/atoms/instructions.toml) over a warp arrangement; a component with
//!    no mma is anchored at its widest copy, coalesced;
//! 3. [`propagate`]: every constraint with exactly one unknown layout is solved by layout
//!    algebra (`f = g o q^-1 o p`, figure 12); a conflict becomes an explicit `rearrange`
//!    through shared memory and is reported;
//! 4. [`plan`]: depth-first search with backtracking over the anchors' atoms and arrangements;
//!    per choice, the instruction options of every operation are checked on the layouts;
//! 5. [`smem`]: shared layouts from the alignment constraints (unit-stride orders), then the
//!    swizzle (CuTe `Sw<B,M,S>` candidates, and on sm90 the canonical GMMA/TMA atoms),
//!    every access scored by the bank model;
//! 6. [`cost`]: the final choice is an integer program (good_lp, pure-Rust microlp) over the
//!    documented cost model;
//! 7. the plan's claims ([`certify::synthesis`]) are checked before the plan is returned; the
//!    certificate is what `laycert check` re-decides.
//!
//! Infeasible programs get [`SynthError::Infeasible`], naming the constraint and the tensors,
//! only where that is a proof ([`obstruction`]: a condition every plan meets fails, or no
//! instruction of the target can do the operation at all). Where the search finds no plan
//! without such a proof, the answer is [`SynthError::NotFound`]: the search is not every plan.
//! A one-copy program (a global view, a register or shared tile, one copy each way) goes through
//! the same path, so the copy planner can later be expressed as synthesis.
//!
//! Where the e-graph and z3 are not used, and why: every constraint here is over concrete tile
//! sizes, so each is decided by evaluation over the tile (exact and fast) rather than by search
//! over equal forms; the search space (atoms x arrangements x swizzles x instructions) is small
//! and enumerated, and the integer program picks among the feasible points.
//!
//! ```
//! use solver::synth::{synthesize, Program, Target};
//! let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"),
//!     "/../corpus/data/programs/gemm_f16_sm80.tile")).unwrap();
//! let plan = synthesize(&Program::parse(&text)?, Target::Sm80)?;
//! assert!(plan.chosen.iter().any(|o| o.instruction.starts_with("ldmatrix")));
//! assert!(certify::synthesis::check(&plan.certificate.to_json()).is_ok());
//! # Ok::<(), solver::synth::SynthError>(())
//! ```

pub mod anchor;
pub mod check;
pub mod cost;
pub mod graph;
pub mod instr;
pub mod obstruction;
pub mod plan;
pub mod program;
pub mod propagate;
pub mod smem;

pub use check::check_certificate;
pub use instr::Target;
pub use plan::{synthesize, synthesize_allocated, Plan};
pub use program::{Elem, Program, ProgramBuilder, SynthError};
