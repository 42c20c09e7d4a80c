//! The generators: `gen_copy` (a planned, certified copy kernel: `laycert gen copy`), `synth`
//! (thread-value and shared layouts of a tile program: `laycert synth`) and `gen_gemm` (a GEMM
//! kernel from a synthesized plan: `laycert gen gemm`).

use codegen::emit_copy;
use pyo3::prelude::*;
use solver::{plan_copy, CopyOptions, Dtype};

use crate::equiv::Certificate;
use crate::errors::{error, InfeasibleError, UnknownError};
use crate::layout_py::{shape_arg, LayoutArg};
use layout::error::bounded_message;

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
        threads,
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

/// A synthesized plan: the `program` and `target`, one `instructions` entry per operation
/// (`"copy -> a_s: ldmatrix..."`), the `layouts` of every register (thread-value layout) and
/// shared tensor, the integer program's `cost`, and the synthesis `certificate` (`check()`
/// re-decides every claim of the plan).
#[pyclass(module = "laycert", frozen, get_all)]
pub struct SynthPlan {
    /// The program's name.
    pub program: String,
    /// `sm80` or `sm90`.
    pub target: String,
    /// One line per operation: kind, output, instruction.
    pub instructions: Vec<String>,
    /// Tensor name -> its synthesized layout (TV layouts of registers, shared layouts).
    pub layouts: std::collections::BTreeMap<String, String>,
    /// The cost model's total.
    pub cost: f64,
    /// `sha256:...` of the certificate.
    pub digest: String,
    /// The synthesis certificate.
    pub certificate: Py<Certificate>,
}

#[pymethods]
impl SynthPlan {
    fn __repr__(&self) -> String {
        format!(
            "<laycert.SynthPlan {} for {}: {} operations, cost {}>",
            self.program,
            self.target,
            self.instructions.len(),
            self.cost
        )
    }

    fn __str__(&self) -> String {
        self.instructions.join("\n")
    }
}

/// Synthesizes and certifies the layouts of a tile program (its text form, one operation per
/// line) for `target` (`sm80` or `sm90`), as `laycert synth` does. An infeasible program raises
/// `InfeasibleError` (a proof), a search that found no plan without a proof `UnknownError`,
/// each with the constraint and tensors named.
#[pyfunction]
#[pyo3(signature = (program, target="sm80"))]
pub fn synth(py: Python<'_>, program: &str, target: &str) -> PyResult<SynthPlan> {
    use solver::synth::{synthesize, Program, Target};
    let t = Target::parse(target)
        .ok_or_else(|| error(format!("error: target {target:?}: expected sm80 or sm90")))?;
    let parsed = Program::parse(program).map_err(|e| error(format!("error: {e}")))?;
    let plan = py.detach(|| synthesize(&parsed, t)).map_err(|e| {
        let text = bounded_message(&format!("error: {e}"));
        match e {
            solver::synth::SynthError::Infeasible { .. } => InfeasibleError::new_err(text),
            solver::synth::SynthError::NotFound { .. } => UnknownError::new_err(text),
            _ => error(text),
        }
    })?;
    let p = &plan.program;
    let mut instructions = Vec::new();
    for (i, op) in p.ops.iter().enumerate() {
        instructions.push(format!(
            "{} -> {}: {}",
            op.kind.name(),
            p.tensors[op.output].name,
            plan.chosen
                .get(i)
                .map(|o| o.instruction.as_str())
                .unwrap_or("-")
        ));
    }
    let mut layouts = std::collections::BTreeMap::new();
    for (i, t) in p.tensors.iter().enumerate() {
        if let Some(tv) = &plan.tv[i] {
            if let Ok(l) = tv.to_layout() {
                layouts.insert(t.name.clone(), l.to_string());
            }
        } else if t.scope.name() == "shared" {
            if let Some(l) = &plan.memory[i] {
                layouts.insert(t.name.clone(), codegen::gemm::validate::show(l));
            }
        }
    }
    Ok(SynthPlan {
        program: p.name.clone(),
        target: t.name().to_string(),
        instructions,
        layouts,
        cost: plan.cost,
        digest: format!("sha256:{}", plan.certificate.digest),
        certificate: Py::new(py, Certificate::of(plan.certificate.to_json()))?,
    })
}

/// A GEMM kernel (`C = A B^T`, A, B, C row-major): its CUDA C++ `source`, `entry` point, the CTA
/// configuration as a dict, the synthesized `plan` (one line per operation), what translation
/// validation covered, and the plan's synthesis `certificate`.
#[pyclass(module = "laycert", frozen, get_all)]
pub struct GemmKernel {
    /// CUDA C++ source.
    pub source: String,
    /// Entry point.
    pub entry: String,
    /// The path that serves the problem, `sm80` or `sm90` (an sm90 problem whose K is not a
    /// multiple of 8 runs the sm80 path; `note` says why).
    pub target: String,
    /// Why `target` is not the one asked for, or `None`.
    pub note: Option<String>,
    /// `{"bm": .., "bn": .., "bk": .., "stages": .., "consumers": .., "cluster": .., "splits": ..}`.
    pub config: std::collections::BTreeMap<String, i64>,
    /// Threads per CTA.
    pub threads: i64,
    /// Dynamic shared memory per CTA, bytes.
    pub smem_bytes: i64,
    /// The synthesized plan, one line per operation.
    pub plan: Vec<String>,
    /// Validation counts (accumulator cells, global offsets, guard points, ...).
    pub validation: std::collections::BTreeMap<String, u64>,
    /// `sha256:...` of the certificate.
    pub digest: String,
    /// The synthesis certificate of the CTA's tile program.
    pub certificate: Py<Certificate>,
}

#[pymethods]
impl GemmKernel {
    fn __str__(&self) -> String {
        self.source.clone()
    }

    fn __repr__(&self) -> String {
        format!(
            "<laycert.GemmKernel {} tile {}x{}x{} threads={}>",
            self.entry,
            self.config.get("bm").unwrap_or(&0),
            self.config.get("bn").unwrap_or(&0),
            self.config.get("bk").unwrap_or(&0),
            self.threads
        )
    }
}

/// Emits a GEMM `C[m,n] = A[m,k] B[n,k]^T` (`dtype` `f16` or `bf16` operands, f32 accumulation)
/// for `target` (`sm90`: TMA + wgmma; `sm80`: cp.async + ldmatrix + mma.sync) from a
/// synthesized, certified plan, every index expression validated, as `laycert gen gemm` does.
#[pyfunction]
#[pyo3(signature = (m, n, k, dtype="bf16", target="sm90"))]
pub fn gen_gemm(
    py: Python<'_>,
    m: i64,
    n: i64,
    k: i64,
    dtype: &str,
    target: &str,
) -> PyResult<GemmKernel> {
    use codegen::gemm::{emit_gemm, GemmDtype, GemmSpec, GemmTarget};
    let dt = GemmDtype::parse(dtype)
        .ok_or_else(|| error(format!("error: dtype {dtype:?}: expected f16 or bf16")))?;
    let tg = GemmTarget::parse(target)
        .ok_or_else(|| error(format!("error: target {target:?}: expected sm80 or sm90")))?;
    let spec = GemmSpec {
        m,
        n,
        k,
        dtype: dt,
        target: tg,
        smem_limit: None,
    };
    let kern = py
        .detach(|| emit_gemm(&spec))
        .map_err(|e| error(format!("error: {e}")))?;
    let c = kern.config;
    let config = [
        ("bm", c.bm),
        ("bn", c.bn),
        ("bk", c.bk),
        ("stages", c.stages),
        ("consumers", c.consumers),
        ("cluster", c.cluster),
        ("group_m", c.group_m),
        ("splits", c.splits),
    ]
    .into_iter()
    .map(|(a, b)| (a.to_string(), b))
    .collect();
    let v = serde_json::to_value(&kern.validation).map_err(|e| error(format!("error: {e}")))?;
    let validation = v
        .as_object()
        .map(|o| {
            o.iter()
                .filter_map(|(k, x)| x.as_u64().map(|x| (k.clone(), x)))
                .collect()
        })
        .unwrap_or_default();
    Ok(GemmKernel {
        source: kern.source,
        entry: kern.entry.to_string(),
        target: kern.spec.target.name().to_string(),
        note: kern.note.clone(),
        config,
        threads: kern.threads,
        smem_bytes: kern.smem_bytes,
        plan: kern.plan_summary,
        validation,
        digest: format!("sha256:{}", kern.digest),
        certificate: Py::new(py, Certificate::of(kern.certificate_json))?,
    })
}
