//! Compile, run, check and time an emitted copy kernel through `cudarc` (NVRTC + driver API,
//! both loaded dynamically).
//!
//! The libraries are PROBED first (dlopen of libcuda and libnvrtc): cudarc panics when one is
//! missing, so their absence becomes [`CodegenError::NoCudaDevice`] / [`CodegenError::NoNvrtc`],
//! values the callers print as `SKIP`. A run fills the source with random never-zero elements,
//! poisons the destination, launches once and compares EVERY byte of the destination buffer
//! with a CPU reference (holes of the destination layout must stay poisoned); then it times the
//! kernel and a device-to-device copy of the same bytes with timing-enabled CUDA events (median
//! of `reps` runs after `warmup` runs).

use std::sync::Arc;

use cudarc::driver::{sys, CudaContext, CudaStream, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::{compile_ptx_with_opts, CompileOptions, Ptx};
use serde::Serialize;
use solver::CopyPlan;

use crate::copy_kernel::CopyKernel;
use crate::error::CodegenError;

/// The byte every destination element is poisoned with; source elements never contain it in
/// their first byte.
pub const POISON: u8 = 0xA5;

/// Timing options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BenchOptions {
    /// Untimed launches first.
    pub warmup: usize,
    /// Timed launches (the median is reported).
    pub reps: usize,
    /// Seed of the random source data.
    pub seed: u64,
}

impl Default for BenchOptions {
    fn default() -> Self {
        BenchOptions {
            warmup: 10,
            reps: 50,
            seed: 0x01a7_ce27,
        }
    }
}

/// What a run measured.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BenchReport {
    /// The GPU's name.
    pub device: String,
    /// Logical elements moved.
    pub elements: i64,
    /// Bytes read plus bytes written by one kernel run.
    pub bytes_moved: i64,
    /// Destination bytes that differ from the CPU reference (0 = correct).
    pub mismatches: u64,
    /// Median kernel time, milliseconds.
    pub kernel_ms: f64,
    /// Median device-to-device copy time of the same bytes, milliseconds.
    pub d2d_ms: f64,
    /// Kernel bandwidth, GB/s (read + write).
    pub kernel_gbps: f64,
    /// Device-to-device copy bandwidth, GB/s (read + write).
    pub d2d_gbps: f64,
    /// `kernel_gbps / d2d_gbps`.
    pub ratio: f64,
    /// Registers per thread of the kernel.
    pub registers: i32,
}

/// Is libnvrtc loadable? (dlopen only; nothing else is touched.)
pub fn probe_nvrtc() -> Result<(), CodegenError> {
    // SAFETY: only tries to dlopen the library by its candidate names.
    if unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        Ok(())
    } else {
        Err(CodegenError::NoNvrtc("libnvrtc could not be loaded".into()))
    }
}

/// Is there a CUDA driver with at least one device? Probes libcuda and libnvrtc first.
pub fn probe_device() -> Result<(), CodegenError> {
    // SAFETY: only tries to dlopen the library by its candidate names.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return Err(CodegenError::NoCudaDevice(
            "libcuda.so.1 could not be loaded".into(),
        ));
    }
    probe_nvrtc().map_err(|e| CodegenError::NoCudaDevice(e.to_string()))?;
    match CudaContext::device_count() {
        Ok(n) if n > 0 => Ok(()),
        Ok(_) => Err(CodegenError::NoCudaDevice(
            "the driver reports 0 devices".into(),
        )),
        Err(e) => Err(CodegenError::NoCudaDevice(format!(
            "cuInit/cuDeviceGetCount: {e}"
        ))),
    }
}

/// Compiles the kernel to PTX for `compute_90` (the H100's virtual architecture).
pub fn compile(kernel: &CopyKernel) -> Result<Ptx, CodegenError> {
    probe_nvrtc()?;
    let opts = CompileOptions {
        arch: Some("compute_90"),
        name: Some(format!("{}.cu", kernel.name)),
        ..Default::default()
    };
    compile_ptx_with_opts(&kernel.source, opts).map_err(|e| CodegenError::Compile(format!("{e:?}")))
}

fn driver<T>(what: &str, r: Result<T, cudarc::driver::DriverError>) -> Result<T, CodegenError> {
    r.map_err(|e| CodegenError::Driver(format!("{what}: {e}")))
}

/// xorshift64*: deterministic random source data.
fn next(state: &mut u64) -> u64 {
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    state.wrapping_mul(0x2545_f491_4f6c_dd1d)
}

/// Random elements, never zero and never starting with the poison byte.
pub fn random_elements(n: usize, bytes: usize, seed: u64) -> Vec<u8> {
    let mut state = seed | 1;
    let mut out = vec![0u8; n * bytes];
    for el in out.chunks_mut(bytes) {
        let r = next(&mut state).to_le_bytes();
        el.copy_from_slice(&r[..bytes]);
        el[0] = 1 + el[0] % (POISON - 1);
    }
    out
}

/// The destination buffer the copy must produce: `dst(x) <- src(x)` for every logical `x`,
/// everything else poisoned. Offsets come from per-dimension tables of the certified
/// per-dimension forms.
pub fn reference(plan: &CopyPlan, src: &[u8]) -> Result<Vec<u8>, CodegenError> {
    let b = plan.dtype.bytes() as usize;
    let cos = plan.dst.cosize()? as usize;
    let mut out = vec![POISON; cos * b];
    let shape = &plan.shape;
    let tables = |l: &solver::Separable| -> Result<Vec<Vec<usize>>, CodegenError> {
        (0..shape.len())
            .map(|d| (0..shape[d]).map(|x| Ok(l.term(d, x)? as usize)).collect())
            .collect()
    };
    let (ts, td) = (tables(&plan.src)?, tables(&plan.dst)?);
    let z = if shape.len() == 3 {
        shape[2] as usize
    } else {
        1
    };
    for i in 0..shape[0] as usize {
        for j in 0..shape[1] as usize {
            for l in 0..z {
                let (mut so, mut dof) = (ts[0][i] + ts[1][j], td[0][i] + td[1][j]);
                if shape.len() == 3 {
                    so += ts[2][l];
                    dof += td[2][l];
                }
                out[dof * b..dof * b + b].copy_from_slice(&src[so * b..so * b + b]);
            }
        }
    }
    Ok(out)
}

fn median_ms(
    stream: &Arc<CudaStream>,
    ctx: &Arc<CudaContext>,
    opts: &BenchOptions,
    mut run: impl FnMut() -> Result<(), CodegenError>,
) -> Result<f64, CodegenError> {
    for _ in 0..opts.warmup {
        run()?;
    }
    let flags = Some(sys::CUevent_flags::CU_EVENT_DEFAULT);
    let mut times = Vec::with_capacity(opts.reps);
    for _ in 0..opts.reps.max(1) {
        let start = driver("event", ctx.new_event(flags))?;
        let end = driver("event", ctx.new_event(flags))?;
        driver("record", start.record(stream))?;
        run()?;
        driver("record", end.record(stream))?;
        driver("synchronize", end.synchronize())?;
        times.push(f64::from(driver("elapsed", start.elapsed_ms(&end))?));
    }
    times.sort_by(f64::total_cmp);
    Ok(times[times.len() / 2])
}

/// Compiles, runs once and checks every destination byte, then times kernel and D2D copy.
pub fn bench(
    plan: &CopyPlan,
    kernel: &CopyKernel,
    opts: &BenchOptions,
) -> Result<BenchReport, CodegenError> {
    probe_device()?;
    let ptx = compile(kernel)?;
    let ctx = driver("context", CudaContext::new(0))?;
    // SAFETY: no buffer is shared between streams here; all work runs on one stream.
    unsafe { ctx.disable_event_tracking() };
    let stream = ctx.default_stream();
    let module = driver("load module", ctx.load_module(ptx))?;
    let func = driver("load function", module.load_function(&kernel.name))?;
    let registers = driver("registers", func.num_regs())?;
    let b = plan.dtype.bytes() as usize;
    let elements = plan.shape.iter().product::<i64>();
    let src_len = plan.src.cosize()? as usize;
    let dst_len = plan.dst.cosize()? as usize;
    let host_src = random_elements(src_len, b, opts.seed);
    let expected = reference(plan, &host_src)?;
    let d_src = driver("upload", stream.clone_htod(&host_src))?;
    let mut d_dst = driver("alloc", stream.clone_htod(&vec![POISON; dst_len * b]))?;
    let cfg = LaunchConfig {
        grid_dim: (kernel.grid[0], kernel.grid[1], kernel.grid[2]),
        block_dim: (kernel.threads, 1, 1),
        shared_mem_bytes: 0,
    };
    let launch = |dst: &mut cudarc::driver::CudaSlice<u8>| -> Result<(), CodegenError> {
        let mut args = stream.launch_builder(&func);
        args.arg(&d_src).arg(dst);
        // SAFETY: the kernel reads `src` and writes `dst` only at offsets the validated
        // expressions give, all inside the buffers' cosizes.
        driver("launch", unsafe { args.launch(cfg) }).map(|_| ())
    };
    launch(&mut d_dst)?;
    driver("synchronize", stream.synchronize())?;
    let got = driver("download", stream.clone_dtoh(&d_dst))?;
    let mismatches = got.iter().zip(&expected).filter(|(a, b)| a != b).count() as u64;
    let kernel_ms = median_ms(&stream, &ctx, opts, || launch(&mut d_dst))?;
    let d2d_len = (elements as usize * b).min(src_len * b);
    let mut d_copy = driver("alloc", stream.alloc_zeros::<u8>(d2d_len))?;
    let src_view = d_src.slice(0..d2d_len);
    let d2d_ms = median_ms(&stream, &ctx, opts, || {
        driver("memcpy", stream.memcpy_dtod(&src_view, &mut d_copy))
    })?;
    let bytes_moved = 2 * elements * b as i64;
    let gbps = |ms: f64, bytes: f64| bytes / (ms * 1e-3) / 1e9;
    let kernel_gbps = gbps(kernel_ms, bytes_moved as f64);
    let d2d_gbps = gbps(d2d_ms, 2.0 * d2d_len as f64);
    Ok(BenchReport {
        device: driver("name", ctx.name())?,
        elements,
        bytes_moved,
        mismatches,
        kernel_ms,
        d2d_ms,
        kernel_gbps,
        d2d_gbps,
        ratio: kernel_gbps / d2d_gbps,
        registers,
    })
}
