//! NKI (AWS Trainium) kernels: emitters for a tiled GEMM ([`emit_gemm`]), a row softmax
//! ([`emit_softmax`]) and flash-style multi-head attention ([`emit_mha`]), their cost
//! figures ([`cost`]), and [`run()`], which executes a kernel on laycert's reference interpreter
//! (`codegen/nki_ref`, a NumPy implementation of exactly the `nki.language` / `nki.isa` subset
//! these kernels use, embedded in the binary) and compares it with NumPy.
//!
//! The emitted files use only the public NKI API (`import nki`, `nki.language as nl`,
//! `nki.isa as nisa`; `nl.ndarray(..., buffer=nl.sbuf|nl.psum|nl.shared_hbm)`,
//! `nisa.dma_copy`, `nisa.nc_matmul`, `nl.affine_range`, ...). The interpreter checks the
//! rules of the NKI documentation; it validates against the documented ISA, not hardware.

pub mod cost;

/// The first line of every emitted kernel starts with this, then `kind=KIND`, the sizes,
/// `dtype=` and `entry=` (`nki run` reads it back to refuse sizes the generator refuses).
pub const HEADER: &str = "# laycert-nki:";

/// The header line: `# laycert-nki: kind=KIND SIZES dtype=DTYPE entry=ENTRY`.
pub fn header(kind: &str, sizes: &str, dtype: &str, entry: &str) -> String {
    format!("{HEADER} kind={kind} {sizes} dtype={dtype} entry={entry}")
}
pub mod gemm;
pub mod mha;
pub mod py;
pub mod run;
pub mod softmax;

pub use cost::{CostReport, Figures};
pub use gemm::emit_gemm;
pub use mha::{emit_mha, MhaKernel, MhaSpec};
pub use run::{run, run_within, KernelSizes, RunOutcome, DEFAULT_TIMEOUT, MAX_INTERPRETER_BYTES};
pub use softmax::emit_softmax;

/// Why an NKI kernel cannot be emitted or run.
#[derive(Debug, thiserror::Error)]
pub enum NkiError {
    /// A documented hardware rule the request cannot meet, named first.
    #[error("{rule}: {why}")]
    Rule {
        /// The rule.
        rule: &'static str,
        /// Why.
        why: String,
    },
    /// The planner refused.
    #[error("{0}")]
    Refused(#[from] solver::tensore::Refusal),
    /// Bad input.
    #[error("{0}")]
    Input(String),
    /// Python or NumPy is missing, or the interpreter could not be started.
    #[error("{0}")]
    NoPython(String),
    /// The run passed its wall-clock limit (seconds); the interpreter was killed.
    #[error("the kernel ran past the {0} s limit; the interpreter was killed")]
    Timeout(f64),
}

impl NkiError {
    /// The rule's name, when a rule refused the request.
    pub fn rule(&self) -> Option<&'static str> {
        match self {
            NkiError::Rule { rule, .. } => Some(rule),
            NkiError::Refused(r) => r.rule(),
            _ => None,
        }
    }
}

/// Bytes of an element of the named dtype (`bf16`, `f16`, `f32`).
pub fn dtype_bytes(dtype: &str) -> Result<i64, NkiError> {
    match dtype {
        "bf16" | "f16" => Ok(2),
        "f32" => Ok(4),
        other => Err(NkiError::Input(format!(
            "dtype {other:?}: expected bf16, f16 or f32"
        ))),
    }
}

/// `total` cut into tiles of `size`: runs `(first start, count, size)` of equal tiles, the
/// full tiles then the tail (`tile_runs(300, 128) == [(0, 2, 128), (256, 1, 44)]`).
pub fn tile_runs(total: i64, size: i64) -> Vec<(i64, i64, i64)> {
    let full = total / size;
    let mut runs = Vec::new();
    if full > 0 {
        runs.push((0, full, size));
    }
    if total % size > 0 {
        runs.push((full * size, 1, total % size));
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tile_runs_cut_full_tiles_then_the_tail() {
        assert_eq!(tile_runs(300, 128), [(0, 2, 128), (256, 1, 44)]);
        assert_eq!(tile_runs(512, 512), [(0, 1, 512)]);
        assert_eq!(tile_runs(5, 128), [(0, 1, 5)]);
    }
}
