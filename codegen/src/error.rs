//! [`CodegenError`]: why a kernel was not emitted or not run.

use layout::LayoutError;
use solver::PlanError;

/// Why emission, validation or a run failed.
#[derive(Debug, thiserror::Error)]
pub enum CodegenError {
    /// The plan could not be made.
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// A layout could not be evaluated.
    #[error(transparent)]
    Layout(#[from] LayoutError),
    /// An emitted expression is not in the C subset the validator reads.
    #[error("emitted expression {text:?}: {why}")]
    Expr {
        /// The expression.
        text: String,
        /// What went wrong at which position.
        why: String,
    },
    /// Translation validation found an emitted expression that disagrees with the layouts.
    #[error("translation validation failed: {0}")]
    Validation(String),
    /// No CUDA driver or no device: a value, not a failure of the kernel.
    #[error("no CUDA device: {0}")]
    NoCudaDevice(String),
    /// libnvrtc is missing, so nothing can be compiled here.
    #[error("no NVRTC: {0}")]
    NoNvrtc(String),
    /// NVRTC rejected the kernel.
    #[error("NVRTC compile failed: {0}")]
    Compile(String),
    /// A CUDA driver call failed.
    #[error("CUDA driver: {0}")]
    Driver(String),
    /// A GEMM problem or plan the emitter cannot serve (names what and why).
    #[error("gemm: {0}")]
    Gemm(String),
    /// The run would hold more than its backend's limit (names the limit).
    #[error("too large: {0}")]
    TooLarge(String),
    /// Checked arithmetic overflowed.
    #[error("arithmetic overflow in {0}")]
    Overflow(&'static str),
}
