//! # solver — search and synthesis
//!
//! Will hold the untrusted search side of laycert: tile/slice/swizzle decompositions, the
//! tile-program constraint graph (petgraph), thread-value layout synthesis and shared-memory
//! layout and swizzle synthesis, each result handed to `certify` as an obligation before use.
//! Nothing lives here yet: the synthesis and codegen issues build it.
#![warn(missing_docs)]
