//! Real layout strings: each pasted exactly as found in a public source (a CUTLASS header or
//! doc, a Triton lit test, TVM docs, the CuTe DSL docs), with where it was found. They test
//! that laycert reads what users paste; `corpus/tests/real_layouts.rs` parses and evaluates
//! every one of `real/layouts.toml` and checks it against pycute, the CuTe DSL or Gluon where
//! `tests/data/real/oracle.jsonl` has an oracle value. `real/pending.toml` holds strings of
//! notations not read yet; loading does not parse them.
//!
//! ```toml
//! [[real]]
//! text = "(_3,(2,4)):(236,(26,1))"
//! repo = "NVIDIA/cutlass"
//! path = "media/docs/cute/02_layout_algebra.md"
//! commit = "082a375c14ba07be4d666243779266f9d8722bd9"
//! context = "composition by a tiler, the printed result"
//! ```
//!
//! `shape` gives the tensor shape a Triton attribute is used with in its source; `expect =
//! "error"` marks a string the source's own tool rejects too (a typo in a doc), which laycert
//! must refuse with an error rather than read.

use crate::entry::Entry;
use crate::error::CorpusError;

/// One real layout string.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RealLayout {
    /// The text, exactly as found.
    pub text: String,
    /// The file it is in, relative to the corpus root.
    pub file: String,
    /// The GitHub repository (`owner/name`).
    pub repo: String,
    /// The path in the repository.
    pub path: String,
    /// The commit read, where known.
    pub commit: Option<String>,
    /// Where in the file, in words (a line, a section).
    pub context: Option<String>,
    /// The tensor shape a Triton attribute is used with.
    pub shape: Option<Vec<i64>>,
    /// Whether the text must be refused (`expect = "error"`).
    pub expect_error: bool,
}

impl RealLayout {
    /// Reads a `[[real]]` entry; the text is not parsed here (pending notations stay loadable).
    pub fn read(e: &mut Entry) -> Result<RealLayout, CorpusError> {
        let text = e.str("text")?;
        let repo = e.str("repo")?;
        let path = e.str("path")?;
        let commit = e.opt_str("commit")?;
        let context = e.opt_str("context")?;
        let shape = e.opt_ints("shape")?;
        let expect_error = match e.opt_str("expect")?.as_deref() {
            None => false,
            Some("error") => true,
            Some(other) => {
                return Err(e.error("expect", format!("{other:?}: the only value is \"error\"")))
            }
        };
        e.finish_with(&[])?;
        Ok(RealLayout {
            text,
            file: e.file().to_string(),
            repo,
            path,
            commit,
            context,
            shape,
            expect_error,
        })
    }
}
