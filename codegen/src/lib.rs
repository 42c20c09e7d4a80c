//! # codegen — thin, translation-validated kernels
//!
//! Will hold the CUDA C++ emitter with its NVRTC/`cudarc` runner and the Trainium NKI emitter
//! with a reference interpreter. Emitters only print layouts and loops that `solver` planned and
//! `certify` proved; every emitted index expression is checked against the layout semantics
//! before the text is returned. Nothing lives here yet: the GPU-kernel issue builds it.
#![warn(missing_docs)]
