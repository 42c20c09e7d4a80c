//! Real layout strings: each pasted exactly as found in a public source (a CUTLASS header or
//! doc, a Triton lit test, TVM docs, the CuTe DSL docs), with where it was found. They test
//! that laycert reads what users paste; `corpus/tests/real_layouts.rs` parses and evaluates
//! every one of `real/layouts.toml` and checks it against pycute or Triton 3.9 (Gluon) where
//! `tests/data/real/oracle.jsonl` has an oracle value (every CuTe and Triton string has one).
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
//!
//! A Triton string that names its parent by alias (`parent = #blocked1`) carries `defs`: the
//! `#name = ...` lines of the same source file that it needs, copied exactly. They resolve
//! through the code path of `laycert --mlir FILE` ([`layout::triton::aliases::Aliases`]):
//!
//! ```
//! use corpus::real::RealLayout;
//!
//! let r = RealLayout {
//!     text: "#ttg.slice<{dim = 1, parent = #blocked1}>".into(),
//!     defs: Some("#blocked1 = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], \
//!                 warpsPerCTA = [4, 1], order = [0, 1]}>".into()),
//!     shape: Some(vec![64]),
//!     ..RealLayout::default()
//! };
//! assert!(r.resolved().unwrap().contains("parent = #ttg.blocked<{sizePerThread = [1, 1]"));
//! // In-dims: 4 warps of 32 lanes, one register; each of the 64 elements is held twice.
//! assert_eq!(r.parse().unwrap().domain_size(), 128);
//! ```

use layout::triton::aliases::Aliases;
use layout::Layout;

use crate::entry::Entry;
use crate::error::CorpusError;

/// One real layout string.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
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
    /// The alias definitions (`#name = ...` lines of the same file) the text refers to.
    pub defs: Option<String>,
    /// Whether the text must be refused (`expect = "error"`).
    pub expect_error: bool,
}

impl RealLayout {
    /// Reads a `[[real]]` entry; the text is not parsed here (`corpus/tests/real_layouts.rs` parses
    /// every one, and checks that the strings marked `expect = "error"` are refused).
    pub fn read(e: &mut Entry) -> Result<RealLayout, CorpusError> {
        let text = e.str("text")?;
        let repo = e.str("repo")?;
        let path = e.str("path")?;
        let commit = e.opt_str("commit")?;
        let context = e.opt_str("context")?;
        let shape = e.opt_ints("shape")?;
        let defs = e.opt_str("defs")?;
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
            defs,
            expect_error,
        })
    }

    /// The text with every alias of [`RealLayout::defs`] replaced by its definition, as
    /// `laycert --mlir` replaces them; the text itself when it has no `defs`.
    pub fn resolved(&self) -> layout::Result<String> {
        match &self.defs {
            Some(defs) => Aliases::parse(defs)?.expand(&self.text),
            None => Ok(self.text.clone()),
        }
    }

    /// The layout the text denotes (its aliases resolved) on its `shape`.
    pub fn parse(&self) -> layout::Result<Layout> {
        Layout::parse(&self.resolved()?, self.shape.as_deref())
    }
}
