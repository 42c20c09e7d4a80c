//! # tests — cross-crate integration and conformance suites
//!
//! The suites live in `tests/tests/*.rs`; their data (peer-generated vectors from pycute,
//! Triton, tensor-layouts) in `tests/data/` with the generator scripts beside it.
#![warn(missing_docs)]
