//! `gen_copy`: a planned, certified copy kernel (the CLI's `gen copy`). Synthesis (`synth`)
//! and the other generators (`gen_gemm`, `gen_nki`) join here as they land in the crates.

use codegen::emit_copy;
use pyo3::prelude::*;
use solver::{plan_copy, CopyOptions, Dtype};

use crate::equiv::Certificate;
use crate::errors::error;
use crate::layout_py::{shape_arg, LayoutArg};

/// A copy kernel: its CUDA C++ `source`, entry point `name`, `grid` and `threads`, the
/// plan's `shared` layout, the certificate `digest`, and the movement `certificate`
/// (`check()` re-decides `dst[D(x)] == src[S(x)]`).
#[pyclass(module = "laycert", frozen, get_all)]
pub struct CopyKernel {
    /// CUDA C++ source.
    pub source: String,
    /// Entry point.
    pub name: String,
    /// Grid dimensions.
    pub grid: [u32; 3],
    /// Threads per CTA.
    pub threads: u32,
    /// The shared-memory layout chosen.
    pub shared: String,
    /// `sha256:...` of the plan's certificate.
    pub digest: String,
    /// The data-movement certificate, when the plan carries one.
    pub certificate: Option<Py<Certificate>>,
}

#[pymethods]
impl CopyKernel {
    fn __str__(&self) -> String {
        self.source.clone()
    }

    fn __repr__(&self) -> String {
        format!(
            "<laycert.CopyKernel {} grid={:?} threads={}>",
            self.name, self.grid, self.threads
        )
    }
}

/// Plans, certifies and emits a copy from `src` to `dst` (layouts over `shape`) of `dtype`
/// elements (`f32`, `f16`, `bf16`, ...), as `laycert gen copy` does.
#[pyfunction]
#[pyo3(signature = (src, dst, shape, dtype, swizzle=true, tile_bytes=None, threads=None, vector=None))]
#[allow(clippy::too_many_arguments)]
pub fn gen_copy(
    py: Python<'_>,
    src: LayoutArg,
    dst: LayoutArg,
    shape: &Bound<'_, PyAny>,
    dtype: &str,
    swizzle: bool,
    tile_bytes: Option<i64>,
    threads: Option<i64>,
    vector: Option<i64>,
) -> PyResult<CopyKernel> {
    let shape = shape_arg(Some(shape))?.unwrap_or_default();
    let src = src.get(Some(&shape), "src")?;
    let dst = dst.get(Some(&shape), "dst")?;
    let dtype = Dtype::parse(dtype).map_err(|e| error(format!("error: dtype: {e}")))?;
    let d = CopyOptions::default();
    let mut opts = CopyOptions {
        tile_bytes: tile_bytes.unwrap_or(d.tile_bytes),
        threads: threads.unwrap_or(d.threads),
        vector,
        ..d
    };
    if !swizzle {
        opts = opts.without_swizzle();
    }
    let (plan, kernel) = py
        .detach(|| {
            let plan = plan_copy(&src, &dst, &shape, dtype, &opts)
                .map_err(|e| format!("error: the copy plan: {e}"))?;
            let kernel = emit_copy(&plan).map_err(|e| format!("error: the kernel: {e}"))?;
            Ok::<_, String>((plan, kernel))
        })
        .map_err(error)?;
    let certificate = match &plan.certificate.movement {
        Some(c) => Some(Py::new(py, Certificate::of(c.to_json()))?),
        None => None,
    };
    Ok(CopyKernel {
        source: kernel.source,
        name: kernel.name,
        grid: kernel.grid,
        threads: kernel.threads,
        shared: plan.smem.layout.to_string(),
        digest: format!("sha256:{}", plan.certificate.digest),
        certificate,
    })
}
