//! Errors of loading the corpus. Each names the file, and where it applies the entry (its
//! table and name) and the field, so a malformed file is fixed without a debugger.

use thiserror::Error;

/// A corpus file that cannot be loaded, and exactly where.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum CorpusError {
    /// The file cannot be read.
    #[error("{file}: cannot read: {why}")]
    Io {
        /// The path.
        file: String,
        /// The operating system's reason.
        why: String,
    },
    /// The file is not TOML.
    #[error("{file}: not valid TOML: {why}")]
    Toml {
        /// The file, relative to the corpus root.
        file: String,
        /// The TOML parser's message (with its line and column).
        why: String,
    },
    /// Something wrong at the top level of a file (an unknown table).
    #[error("{file}: {why}")]
    File {
        /// The file, relative to the corpus root.
        file: String,
        /// What is wrong.
        why: String,
    },
    /// A field of one entry is missing, mistyped or invalid.
    #[error("{file}: {entry}: field `{field}`: {why}")]
    Field {
        /// The file, relative to the corpus root.
        file: String,
        /// The entry: its table and position, and its name when it has one
        /// (`[[claim]] #3 "sm80-c-vs-mmav2"`).
        entry: String,
        /// The field.
        field: String,
        /// What is wrong with it.
        why: String,
    },
}
