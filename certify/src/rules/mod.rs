//! # Rewrite rules proved in CI (spec certify.md §4)
//!
//! A rule file holds named rules over layout terms with symbolic integers, symbolic axes, side
//! conditions and bounds:
//!
//! ```text
//! rule merge_same_axis  forall e1 e2 s : int, a : axis
//!   where 1 <= e1 <= 8, 1 <= e2 <= 8, -8 <= s <= 8
//!   S[(e1,e2):((e2*s)@a, s@a)] == S[(e1*e2):(s@a)]
//! ```
//!
//! [`prove_source`] proves every rule for every parameter assignment within its bounds
//! ([`prove`]: exhaustive over the grid when small, z3 over symbolic parameters in the strided
//! fragment) and reports PROVED / REFUTED (a counterexample re-evaluated by the semantics) /
//! UNKNOWN (why).
//!
//! ```
//! use certify::rules::{prove_source, Options};
//! let text = "rule coalesce_2d forall a b : int where 1 <= a <= 4, 1 <= b <= 4
//!                (a,b):(1,a) == (a*b):1
//!             rule wrong forall a b : int where 1 <= a <= 4, 2 <= b <= 4
//!                (a,b):(1,a) == (a*b):2";
//! let reports = prove_source("example.rules", text, &Options::default()).unwrap();
//! assert_eq!(reports[0].word(), "PROVED");
//! assert_eq!(reports[1].word(), "REFUTED");
//! ```

pub mod certificate;
pub mod crosscheck;
pub mod eval;
pub mod explain;
pub mod literal;
pub mod merged_form;
pub mod ops;
pub mod parse;
pub mod prove;
pub mod symbolic;
pub mod syntax;
pub mod validate;

pub use prove::{prove_rule, unknown_report, Options, Refutation, RuleReport, Verdict};
pub use syntax::{Rule, RuleFile};

use layout::ParseError;
use rayon::prelude::*;

/// A rule file that does not parse: its name, text and the error (render with
/// [`RuleFileError::render`]).
#[derive(Debug, Clone, thiserror::Error)]
#[error("{name}: {error}")]
pub struct RuleFileError {
    /// The file's name.
    pub name: String,
    /// The parse error, with its byte span.
    pub error: Box<ParseError>,
    /// The file's text.
    pub text: Box<str>,
}

impl RuleFileError {
    /// The error as `file:line:col: error: ...` (as compilers print it, for editors), with the
    /// offending line and a caret under the span.
    pub fn render(&self) -> String {
        self.render_as("error: ")
    }

    /// The error as `file:line:col: ...` with the line and caret, for a caller that prefixes
    /// its own `error: ` (the Python package's messages all start so).
    pub fn render_located(&self) -> String {
        self.render_as("")
    }

    fn render_as(&self, severity: &str) -> String {
        let start = self.error.span.start.min(self.text.len());
        let line_start = self.text[..start].rfind('\n').map_or(0, |i| i + 1);
        let line_end = self.text[start..]
            .find('\n')
            .map_or(self.text.len(), |i| start + i);
        let line_no = self.text[..start].matches('\n').count() + 1;
        let col = self.text[line_start..start].chars().count() + 1;
        let mut e = (*self.error).clone();
        e.span = (start - line_start)..(self.error.span.end.min(line_end).max(start) - line_start);
        format!(
            "{}:{line_no}:{col}: {severity}{}",
            self.name,
            e.render(&self.text[line_start..line_end])
        )
    }
}

/// Parses a rule file.
pub fn parse_source(name: &str, text: &str) -> Result<RuleFile, RuleFileError> {
    parse::parse_file(text).map_err(|error| RuleFileError {
        name: name.to_string(),
        error: Box::new(error),
        text: text.into(),
    })
}

/// Parses and proves every rule of a file, in file order (rules run in parallel).
pub fn prove_source(
    name: &str,
    text: &str,
    options: &Options,
) -> Result<Vec<RuleReport>, RuleFileError> {
    let file = parse_source(name, text)?;
    Ok(file
        .rules
        .par_iter()
        .map(|r| prove_rule(r, options))
        .collect())
}
