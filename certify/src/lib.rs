//! # certify
#![warn(missing_docs)]
