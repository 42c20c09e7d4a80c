//! [`PlanError`]: why a plan could not be made, naming the input and the reason.

use layout::LayoutError;

/// Why planning failed.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// A layout could not be parsed or evaluated.
    #[error(transparent)]
    Layout(#[from] LayoutError),
    /// An unknown element type.
    #[error("dtype {0:?}: expected f32, f16, bf16, f8 or i8")]
    Dtype(String),
    /// The tensor shape does not suit the plan.
    #[error("shape {shape:?}: {why}")]
    Shape {
        /// The shape given.
        shape: Vec<i64>,
        /// What is wrong with it.
        why: String,
    },
    /// A global layout outside what the copy planner handles.
    #[error("{which} layout {layout}: {why}")]
    Unsupported {
        /// `source` or `destination`.
        which: &'static str,
        /// The layout's text.
        layout: String,
        /// Why it is refused.
        why: String,
    },
    /// An option out of range.
    #[error("option {what}: {why}")]
    Option {
        /// Which option.
        what: &'static str,
        /// What is wrong.
        why: String,
    },
    /// A claim about the plan was not proved.
    #[error("the plan is not certified: {claim}: {why}")]
    Certify {
        /// The claim.
        claim: String,
        /// The verdict or the failure.
        why: String,
    },
    /// Checked arithmetic overflowed.
    #[error("arithmetic overflow in {0}")]
    Overflow(&'static str),
}
