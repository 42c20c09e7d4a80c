//! # solver — search and synthesis
//!
//! The untrusted search side of laycert: it proposes, and `certify` checks before anything is
//! used. Today it plans layout-to-layout copy kernels ([`plan_copy`]): the CTA tile, the
//! register TV layouts of the global load and store (vectors as wide as the layouts'
//! contiguity allows), and the shared-memory layout between them with the swizzle that
//! minimizes bank-conflict wavefronts ([`smem`], scored with [`layout::bank::wavefronts`]),
//! every plan certified ([`certificate`]).
//!
//! ```
//! use layout::Layout;
//! use solver::{plan_copy, CopyOptions, Dtype};
//!
//! // Transpose a 256x256 f32 matrix: row-major to column-major.
//! let src = Layout::parse("(256,256):(256,1)", None)?;
//! let dst = Layout::parse("(256,256):(1,256)", None)?;
//! let plan = plan_copy(&src, &dst, &[256, 256], Dtype::F32, &CopyOptions::default())?;
//! assert_eq!(plan.tile_dims, [1, 0]); // the tile's first axis is the source's unit stride
//! assert_eq!(plan.grid, [4, 4, 1]); // 64x64 tiles
//! assert!(plan.certificate.claims.iter().all(|c| c.verdict == "proved" || c.verdict == "checked"));
//! // Without a swizzle the column-wise shared loads conflict 16 ways; the swizzle leaves 2.
//! let opts = CopyOptions::default().without_swizzle();
//! let flat = plan_copy(&src, &dst, &[256, 256], Dtype::F32, &opts)?;
//! assert_eq!(flat.smem.loads.per_instruction(), 16.0);
//! assert_eq!(plan.smem.loads.per_instruction(), 2.0);
//! # Ok::<(), solver::PlanError>(())
//! ```
#![warn(missing_docs)]

pub mod certificate;
pub mod copy;
pub mod decompose;
pub mod dist;
pub mod dtype;
pub mod error;
pub mod nki_gemm;
pub mod phase;
pub mod separable;
pub mod smem;
pub mod synth;
pub mod tensore;

pub use certificate::{CheckedClaim, PlanCertificate};
pub use copy::{plan_copy, CopyOptions, CopyPlan};
pub use dtype::Dtype;
pub use error::PlanError;
pub use phase::{Along, Phase};
pub use separable::Separable;
pub use smem::{SmemChoice, Traffic};
