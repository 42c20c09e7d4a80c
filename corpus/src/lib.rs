//! # corpus — the data laycert verifies
//!
//! Will hold, as data files embedded in the binary, real layouts and hardware atoms (each with
//! its source named), claims with expected verdicts, rewrite-rule files and tile programs, plus
//! the loader that reports malformed entries by file, entry and field. The corpus issue fills it.
#![warn(missing_docs)]
