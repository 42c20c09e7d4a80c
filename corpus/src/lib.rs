//! # corpus — the data laycert verifies
//!
//! Real layouts and hardware atoms (each with its source named: a CUTLASS traits file, a PTX
//! ISA section, a Triton test, a paper figure), claims with expected verdicts, and the specs'
//! worked vectors, as TOML files under `corpus/data` compiled into the binary ([`embedded`]).
//! Loading checks every entry: required fields, no unknown ones, layout texts that parse,
//! `atom:` references that resolve, unique names; a malformed entry is a [`CorpusError`]
//! naming file, entry and field.
//!
//! - [`atom::Atom`]: `[[atom]]` entries (`atoms/*.toml`);
//! - [`claim::Claim`]: `[[claim]]` entries (`claims/*.toml`), decided by `laycert verify`;
//! - [`vector::Vector`]: `[[vector]]` entries (`spec/vectors.toml`);
//! - [`real::RealLayout`]: `[[real]]` entries (`real/*.toml`), layout strings as found.
//!
//! ```
//! use corpus::Corpus;
//!
//! let corpus = Corpus::embedded()?;
//! let a = corpus.atom("SM80_16x8x16_F16F16F16F16_TN.A").expect("in the corpus");
//! assert_eq!(a.layout, "((4,8),(2,2,2)):((32,1),(16,8,128)) -> (16,16)");
//! assert!(a.source.contains("mma_traits_sm80.hpp"));
//! assert!(corpus.claims.len() >= 150);
//!
//! // A malformed file names the file, the entry and the field.
//! let bad = "[[atom]]\nname = \"x\"\nsource = \"s\"\nlayout = \"(4,2):(1\"\n";
//! let err = Corpus::from_texts(&[("bad.toml".into(), bad.into())], &[]).unwrap_err();
//! assert!(err.to_string().starts_with("bad.toml: [[atom]] #1 \"x\": field `layout`:"));
//! # Ok::<(), corpus::CorpusError>(())
//! ```
#![warn(missing_docs)]

pub mod atom;
pub mod claim;
pub mod embedded;
pub mod entry;
pub mod error;
pub mod load;
pub mod real;
pub mod vector;

pub use atom::Atom;
pub use claim::{Claim, ClaimKind, Operand};
pub use error::CorpusError;
pub use load::Corpus;
pub use load::{read_text, read_text_at_most, MAX_FILE_BYTES};
pub use vector::Vector;
