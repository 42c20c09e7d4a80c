//! # codegen — thin, translation-validated kernels
//!
//! Emitters only print what `solver` planned and `certify` proved, and every index expression
//! they print is parsed back and checked against the layout semantics before the text is
//! returned ([`validate`]). Today: the CUDA C++ layout-to-layout copy kernel ([`emit_copy`])
//! and its NVRTC/`cudarc` runner ([`runner`]), which reports "no CUDA device" as a value when the
//! driver or a GPU is missing. For AWS Trainium, [`nki`] emits NKI Python (tiled GEMM, row
//! softmax, flash-style attention) from TensorE dispatches certify has proved, and runs it on a
//! reference interpreter of the documented NKI rules (`codegen/nki_ref`) against NumPy.
//! [`gemm`] emits GEMM kernels from synthesized plans: sm90 (TMA + wgmma), sm80 (cp.async +
//! ldmatrix + mma.sync) and W4A16 (int4 weights), each index expression validated against the
//! plan's layouts and instruction models from the corpus. [`nccl`] emits the CUDA C++ NCCL
//! program of a certified redistribution plan, and [`nccl_run`] runs such a plan through
//! cudarc (NVRTC kernels, NCCL loaded dynamically) or on host memory.
//!
//! ```
//! use codegen::emit_copy;
//! use layout::Layout;
//! use solver::{plan_copy, CopyOptions, Dtype};
//!
//! let src = Layout::parse("(64,64):(64,1)", None)?;
//! let dst = Layout::parse("(64,64):(1,64)", None)?;
//! let plan = plan_copy(&src, &dst, &[64, 64], Dtype::F16, &CopyOptions::default())?;
//! let kernel = emit_copy(&plan)?;
//! assert!(kernel.source.contains("laycert_copy"));
//! assert!(kernel.source.contains(&plan.certificate.digest));
//! assert_eq!(kernel.validation.cells, 64 * 64);
//! # Ok::<(), codegen::CodegenError>(())
//! ```
#![warn(missing_docs)]

pub mod c_expr;
pub mod copy_kernel;
pub mod error;
pub mod gemm;
pub mod nccl;
pub mod nccl_run;
pub mod nki;
pub mod runner;
pub mod validate;

pub use copy_kernel::{emit_copy, CopyKernel, PhaseText};
pub use error::CodegenError;
pub use runner::{bench, compile, probe_device, probe_nvrtc, BenchOptions, BenchReport};
pub use validate::Validation;
