//! The exceptions: `LaycertError` and its subclasses, each carrying the message the CLI prints
//! on stderr (parse errors with the input line and a caret under the bad span), bounded as the
//! CLI bounds it ([`layout::error::bounded_message`]: lines of at most 1,000 characters, the
//! window around the caret kept, at most 60 lines), so a 3 MB bad input is no 3 MB message.

use layout::error::bounded_message;
use layout::LayoutError;
use pyo3::prelude::*;
use pyo3::{create_exception, exceptions::PyException};

create_exception!(
    laycert,
    LaycertError,
    PyException,
    "Base class of laycert's errors; str(e) is the message the CLI prints."
);
create_exception!(
    laycert,
    ParseError,
    LaycertError,
    "Text that is not valid in its notation; the message points at the bad span with a caret."
);
create_exception!(
    laycert,
    AlgebraError,
    LaycertError,
    "An algebraic \"no\": not a tile, not a slice of this form, not a direct sum, not groupable."
);
create_exception!(
    laycert,
    RuleFileError,
    LaycertError,
    "A rule file or a validate log that does not parse (file:line:col and a caret)."
);

create_exception!(
    laycert,
    InfeasibleError,
    LaycertError,
    "A proof that no plan exists (`synth`'s `infeasible`, the CLI's exit 1): the constraint, tensors and line named."
);
create_exception!(
    laycert,
    UnknownError,
    LaycertError,
    "A search that found no plan without proving none exists (`synth`'s `unknown`, the CLI's exit 3)."
);

/// Adds the exception classes to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("LaycertError", py.get_type::<LaycertError>())?;
    m.add("ParseError", py.get_type::<ParseError>())?;
    m.add("AlgebraError", py.get_type::<AlgebraError>())?;
    m.add("RuleFileError", py.get_type::<RuleFileError>())?;
    m.add("InfeasibleError", py.get_type::<InfeasibleError>())?;
    m.add("UnknownError", py.get_type::<UnknownError>())?;
    Ok(())
}

/// Renders `e`, caused by the text `input` of the argument named `what`, as the CLI does
/// (`src/cli/input.rs`): a parse error with its caret, anything else as `error: what: ...`.
pub fn render(e: &LayoutError, what: &str, input: &str) -> PyErr {
    match e {
        LayoutError::Parse(p) => ParseError::new_err(bounded_message(&format!(
            "error: {}\n  (in {what})",
            p.render(input)
        ))),
        LayoutError::NotATile { .. }
        | LayoutError::NotADirectSum { .. }
        | LayoutError::NotASlice { .. }
        | LayoutError::NotGroupable { .. } => {
            AlgebraError::new_err(bounded_message(&e.to_string()))
        }
        other => LaycertError::new_err(bounded_message(&format!("error: {what}: {other}"))),
    }
}

/// A plain error message (already rendered), bounded as the CLI bounds it.
pub fn error(message: impl Into<String>) -> PyErr {
    LaycertError::new_err(bounded_message(&message.into()))
}

/// A rule-file error message, bounded as the CLI bounds it.
pub fn rule_file_error(message: &str) -> PyErr {
    RuleFileError::new_err(bounded_message(message))
}
