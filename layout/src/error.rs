//! Error values of the layout model. Every failure on user input is one of these, never a panic.

use std::ops::Range;

/// A parse failure: where (byte span into the input), what was expected, and what was found.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{notation} notation: expected {expected}, found {found} at bytes {}..{}", span.start, span.end)]
pub struct ParseError {
    /// Which notation was being read (`Axe`, `CuTe`, `linear`, `Triton attribute`, ...).
    pub notation: &'static str,
    /// Byte range of the offending text in the input.
    pub span: Range<usize>,
    /// What the parser expected at that position.
    pub expected: String,
    /// What it found there (quoted text, or `end of input`).
    pub found: String,
}

impl ParseError {
    /// Renders the error with the input line and a caret under the span, for terminals (no
    /// `error: ` prefix: the caller, which knows the context, adds it once).
    pub fn render(&self, input: &str) -> String {
        let start = self.span.start.min(input.len());
        let end = self.span.end.clamp(start, input.len());
        let width = input[start..end].chars().count().max(1);
        let pad = input[..start].chars().count();
        format!(
            "{self}\n  {input}\n  {}{}",
            " ".repeat(pad),
            "^".repeat(width)
        )
    }
}

/// Any error of the layout model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LayoutError {
    /// Text that is not valid in its notation.
    #[error(transparent)]
    Parse(#[from] ParseError),
    /// A checked i64 operation overflowed; names the operation.
    #[error("integer overflow in {op}")]
    Overflow {
        /// The operation that overflowed.
        op: &'static str,
    },
    /// A value that breaks an invariant of its type (extent 0, incongruent shape and stride, ...).
    #[error("invalid {what}: {why}")]
    Invalid {
        /// The object that is invalid.
        what: String,
        /// Why it is invalid.
        why: String,
    },
    /// A logical shape that the layout does not admit.
    #[error("shape {shape:?} does not fit: {why}")]
    Shape {
        /// The offending shape.
        shape: Vec<i64>,
        /// Why it does not fit.
        why: String,
    },
    /// A coordinate outside its domain.
    #[error("coordinate {coord:?} is outside the domain: {why}")]
    Coordinate {
        /// The offending coordinate.
        coord: Vec<i64>,
        /// Which component is out of range and why.
        why: String,
    },
    /// A conversion between formalisms that cannot be exact for this layout.
    #[error("not representable as {target}: {reason}")]
    NotRepresentable {
        /// The formalism converted to.
        target: &'static str,
        /// Why this layout has no exact form there.
        reason: String,
    },
    /// A layout that does not group by a shape (or shapes with no common refinement).
    #[error("no grouping by {shape:?}: {why}")]
    NotGroupable {
        /// The shape asked for.
        shape: Vec<i64>,
        /// Which dimension or boundary fails, and why.
        why: String,
    },
    /// A layout that is not a tile of the given inner (or outer) layout.
    #[error("not a tile: {reason}")]
    NotATile {
        /// Which block and iter fail, and why.
        reason: String,
    },
    /// A layout that is not the direct sum of the given summand and any other layout.
    #[error("not a direct sum: {reason}")]
    NotADirectSum {
        /// Which block and iter fail, and why.
        reason: String,
    },
    /// A region whose restriction is no layout over the region's shape (the first value that
    /// rules every layout out).
    #[error("not a layout of this form: {reason}")]
    NotASlice {
        /// Which dimension or element fails, and why.
        reason: String,
    },
    /// A question an operation could not decide within its limits: neither a yes nor a no.
    #[error("undecided: {reason}")]
    Undecided {
        /// Which limit was reached, and what was tried before.
        reason: String,
    },
}

impl LayoutError {
    /// Shorthand for [`LayoutError::Invalid`].
    pub fn invalid(what: impl Into<String>, why: impl Into<String>) -> Self {
        LayoutError::Invalid {
            what: what.into(),
            why: why.into(),
        }
    }

    /// Shorthand for [`LayoutError::NotRepresentable`].
    pub fn not_representable(target: &'static str, reason: impl Into<String>) -> Self {
        LayoutError::NotRepresentable {
            target,
            reason: reason.into(),
        }
    }
}

/// Result alias of the layout model.
pub type Result<T, E = LayoutError> = std::result::Result<T, E>;
