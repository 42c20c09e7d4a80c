//! Compile, run, check and time an emitted GEMM through `cudarc` (NVRTC for `sm_90a`, the
//! driver API, cuBLAS: all loaded dynamically; a missing driver or device is
//! [`CodegenError::NoCudaDevice`], a value the CLI prints as `SKIP`).
//!
//! Inputs are exact multiples of 1/64 in [-1, 1) (representable in f16 and bf16), C is poisoned
//! with NaN first. The reference is cuBLAS (`cublasGemmEx`, f32 compute, the same C = A B^T,
//! written as f32: the products of these inputs are exact in f32, and a 16-bit C would add its
//! own rounding and, at some shapes, cuBLAS's reduced-precision split-K reductions) when
//! libcublas loads, compared on EVERY element with
//! `|C - ref| <= tol (|ref| + rms(ref))` (tol = 2^-7 for bf16, 2^-10 for f16; NaN fails);
//! without libcublas, an f64 CPU reference on every edge cell (first/last row and column) and
//! 4096 random cells, same test. Timing: CUDA events, medians of `reps` runs after `warmup`,
//! laycert and cuBLAS interleaved.

use std::sync::Arc;

use cudarc::driver::{
    sys, CudaContext, CudaSlice, CudaStream, DevicePtr, DeviceRepr, LaunchConfig, PushKernelArg,
};
use cudarc::nvrtc::{compile_ptx_with_opts, CompileOptions, Ptx};
use serde::Serialize;

use super::{ceil_div, GemmDtype, GemmKernel, GemmTarget};
use crate::error::CodegenError;
use crate::runner::{probe_device, probe_nvrtc};

/// Timing options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GemmBenchOptions {
    /// Untimed runs first.
    pub warmup: usize,
    /// Timed runs (medians reported).
    pub reps: usize,
    /// Seed of the inputs.
    pub seed: u64,
}

impl Default for GemmBenchOptions {
    fn default() -> Self {
        GemmBenchOptions {
            warmup: 5,
            reps: 20,
            seed: 0x6e33_1a7c,
        }
    }
}

/// What a run measured.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GemmReport {
    /// The GPU.
    pub device: String,
    /// `cuBLAS with an f32 C (every element)` or `CPU f64 (N sampled cells)`.
    pub reference: String,
    /// Cells compared.
    pub checked: u64,
    /// Cells outside the tolerance (NaN included).
    pub bad: u64,
    /// Largest `|C - ref| / (|ref| + rms)`.
    pub max_rel_err: f64,
    /// The tolerance.
    pub tolerance: f64,
    /// Median kernel time, ms.
    pub ms: f64,
    /// TFLOP/s.
    pub tflops: f64,
    /// cuBLAS median, ms (when cuBLAS loaded).
    pub cublas_ms: Option<f64>,
    /// cuBLAS TFLOP/s.
    pub cublas_tflops: Option<f64>,
    /// cuBLAS time / laycert time.
    pub vs_cublas: Option<f64>,
    /// CTAs launched.
    pub grid: i64,
    /// Registers per thread.
    pub registers: i32,
}

/// The opaque 128-byte `CUtensorMap`, passed by value as a `__grid_constant__` parameter.
#[repr(C, align(64))]
#[derive(Clone, Copy)]
struct TensorMap([u64; 16]);

// SAFETY: plain bytes with the layout and alignment the kernel's `lc_tensor_map` declares.
unsafe impl DeviceRepr for TensorMap {}

fn driver<T>(what: &str, r: Result<T, cudarc::driver::DriverError>) -> Result<T, CodegenError> {
    r.map_err(|e| CodegenError::Driver(format!("{what}: {e}")))
}

/// Compiles the kernel: `sm_90a` for the sm90 path (wgmma, setmaxnreg and TMA multicast need
/// the `a` target), `compute_80` PTX for the sm80 path (the driver JITs it for the GPU).
pub fn compile(kernel: &GemmKernel) -> Result<Ptx, CodegenError> {
    probe_nvrtc()?;
    let opts = CompileOptions {
        arch: Some(match kernel.spec.target {
            GemmTarget::Sm90 => "sm_90a",
            GemmTarget::Sm80 => "compute_80",
        }),
        options: vec!["-std=c++17".into()],
        name: Some("laycert_gemm.cu".into()),
        ..Default::default()
    };
    compile_ptx_with_opts(&kernel.source, opts).map_err(|e| CodegenError::Compile(format!("{e:?}")))
}

fn next(state: &mut u64) -> u64 {
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    state.wrapping_mul(0x2545_f491_4f6c_dd1d)
}

/// Exact f16 / bf16 bits of `k / 64` for `-64 <= k < 64`.
fn bits(k: i64, dtype: GemmDtype) -> u16 {
    let v = k as f32 / 64.0;
    match dtype {
        GemmDtype::Bf16 => (v.to_bits() >> 16) as u16,
        GemmDtype::F16 => {
            if k == 0 {
                return 0;
            }
            let b = v.to_bits();
            let sign = ((b >> 16) & 0x8000) as u16;
            let exp = ((b >> 23) & 0xff) as i32 - 127 + 15;
            let mant = ((b >> 13) & 0x3ff) as u16;
            sign | ((exp as u16) << 10) | mant
        }
    }
}

fn value(b: u16, dtype: GemmDtype) -> f64 {
    match dtype {
        GemmDtype::Bf16 => f64::from(f32::from_bits(u32::from(b) << 16)),
        GemmDtype::F16 => {
            let sign = if b & 0x8000 != 0 { -1.0 } else { 1.0 };
            let exp = i32::from((b >> 10) & 0x1f);
            let mant = f64::from(b & 0x3ff);
            match exp {
                0 => sign * mant * 2f64.powi(-24),
                31 => f64::NAN,
                _ => sign * (1.0 + mant / 1024.0) * 2f64.powi(exp - 15),
            }
        }
    }
}

fn encode(
    dtype: GemmDtype,
    ptr: sys::CUdeviceptr,
    rows: i64,
    k: i64,
    box_rows: i64,
    box_k: i64,
) -> Result<TensorMap, CodegenError> {
    let mut map = sys::CUtensorMap { opaque: [0; 16] };
    let dims = [k as u64, rows as u64];
    let strides = [(k * 2) as u64];
    let boxes = [box_k as u32, box_rows as u32];
    let estr = [1u32, 1];
    let swizzle = if box_k * 2 == 128 {
        sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_128B
    } else {
        sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_64B
    };
    let dt = match dtype {
        GemmDtype::F16 => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
        GemmDtype::Bf16 => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
    };
    // SAFETY: every array has the rank's length; `ptr` is a live device allocation of
    // rows x k elements.
    let r = unsafe {
        sys::cuTensorMapEncodeTiled(
            &mut map,
            dt,
            2,
            ptr as *mut std::ffi::c_void,
            dims.as_ptr(),
            strides.as_ptr(),
            boxes.as_ptr(),
            estr.as_ptr(),
            sys::CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
            swizzle,
            sys::CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
            sys::CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
        )
    };
    if r != sys::CUresult::CUDA_SUCCESS {
        return Err(CodegenError::Driver(format!(
            "cuTensorMapEncodeTiled: {r:?}"
        )));
    }
    Ok(TensorMap(map.opaque))
}

fn medians(
    stream: &Arc<CudaStream>,
    ctx: &Arc<CudaContext>,
    o: &GemmBenchOptions,
    runs: &mut [&mut dyn FnMut() -> Result<(), CodegenError>],
) -> Result<Vec<f64>, CodegenError> {
    for _ in 0..o.warmup {
        for r in runs.iter_mut() {
            r()?;
        }
    }
    let flags = Some(sys::CUevent_flags::CU_EVENT_DEFAULT);
    let mut times = vec![Vec::new(); runs.len()];
    for _ in 0..o.reps.max(1) {
        for (j, r) in runs.iter_mut().enumerate() {
            let start = driver("event", ctx.new_event(flags))?;
            let end = driver("event", ctx.new_event(flags))?;
            driver("record", start.record(stream))?;
            r()?;
            driver("record", end.record(stream))?;
            driver("synchronize", end.synchronize())?;
            times[j].push(f64::from(driver("elapsed", start.elapsed_ms(&end))?));
        }
    }
    Ok(times
        .into_iter()
        .map(|mut t| {
            t.sort_by(f64::total_cmp);
            t[t.len() / 2]
        })
        .collect())
}

/// Runs `cublasGemmEx` for C = A B^T (row-major) into `out`: C in the operand type (`u16`,
/// what the timing compares) or in f32 (`f32`, the reference: no rounding of C, and none of
/// the reduced-precision reductions cuBLAS may use for a 16-bit C).
#[allow(clippy::too_many_arguments)]
fn cublas_gemm<T: DeviceRepr>(
    blas: &cudarc::cublas::CudaBlas,
    stream: &Arc<CudaStream>,
    dtype: GemmDtype,
    (m, n, k): (i64, i64, i64),
    a: &CudaSlice<u16>,
    b: &CudaSlice<u16>,
    out: &mut CudaSlice<T>,
) -> Result<(), CodegenError> {
    use cudarc::cublas::sys as cb;
    let ty = match dtype {
        GemmDtype::F16 => cb::cudaDataType::CUDA_R_16F,
        GemmDtype::Bf16 => cb::cudaDataType::CUDA_R_16BF,
    };
    let c_ty = if std::mem::size_of::<T>() == 4 {
        cb::cudaDataType::CUDA_R_32F
    } else {
        ty
    };
    let (alpha, beta) = (1.0f32, 0.0f32);
    let (pa, _ga) = a.device_ptr(stream);
    let (pb, _gb) = b.device_ptr(stream);
    let (pc, _gc) = out.device_ptr(stream);
    // SAFETY: column-major view: C^T (n x m, ldc n) = B^T-as-stored (op T of the k x n matrix,
    // ld k) times A-as-stored (k x m, ld k); all buffers hold the extents given.
    let r = unsafe {
        cb::cublasGemmEx(
            *blas.handle(),
            cb::cublasOperation_t::CUBLAS_OP_T,
            cb::cublasOperation_t::CUBLAS_OP_N,
            n as i32,
            m as i32,
            k as i32,
            &alpha as *const f32 as *const std::ffi::c_void,
            pb as *const std::ffi::c_void,
            ty,
            k as i32,
            pa as *const std::ffi::c_void,
            ty,
            k as i32,
            &beta as *const f32 as *const std::ffi::c_void,
            pc as *mut std::ffi::c_void,
            c_ty,
            n as i32,
            cb::cublasComputeType_t::CUBLAS_COMPUTE_32F,
            cb::cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
        )
    };
    if r != cb::cublasStatus_t::CUBLAS_STATUS_SUCCESS {
        return Err(CodegenError::Driver(format!("cublasGemmEx: {r:?}")));
    }
    Ok(())
}

/// Compiles, runs once, checks against cuBLAS (or a sampled CPU reference), then times.
pub fn bench_gemm(kernel: &GemmKernel, o: &GemmBenchOptions) -> Result<GemmReport, CodegenError> {
    probe_device()?;
    let (m, n, k) = (kernel.spec.m, kernel.spec.n, kernel.spec.k);
    let dtype = kernel.spec.dtype;
    let c = kernel.config;
    let ptx = compile(kernel)?;
    let ctx = driver("context", CudaContext::new(0))?;
    // SAFETY: all work runs on one stream.
    unsafe { ctx.disable_event_tracking() };
    let stream = ctx.default_stream();
    let module = driver("load module", ctx.load_module(ptx))?;
    let func = driver("load function", module.load_function(kernel.entry))?;
    driver(
        "shared memory",
        func.set_attribute(
            sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            kernel.smem_bytes as i32,
        ),
    )?;
    let registers = driver("registers", func.num_regs())?;
    let sms = i64::from(driver(
        "SM count",
        ctx.attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT),
    )?);
    let items = c.tiles(&kernel.spec) / c.cluster * c.splits;
    if c.splits > 1 && items > sms {
        return Err(CodegenError::Gemm(format!(
            "split-K needs its {items} work items co-resident; this GPU has {sms} SMs"
        )));
    }
    let sm80 = kernel.spec.target == GemmTarget::Sm80;
    let grid = if sm80 {
        ceil_div(m, c.bm) * ceil_div(n, c.bn)
    } else {
        kernel.grid(sms / c.cluster)
    };

    let mut state = o.seed | 1;
    let mut gen = |len: i64| -> Vec<u16> {
        (0..len)
            .map(|_| bits((next(&mut state) % 128) as i64 - 64, dtype))
            .collect()
    };
    let host_a = gen(m * k);
    let host_b = gen(n * k);
    let nan: u16 = match dtype {
        GemmDtype::Bf16 => 0x7fc0,
        GemmDtype::F16 => 0x7e00,
    };
    let d_a = driver("upload", stream.clone_htod(&host_a))?;
    let d_b = driver("upload", stream.clone_htod(&host_b))?;
    let mut d_c = driver("alloc", stream.clone_htod(&vec![nan; (m * n) as usize]))?;
    let ws_len = c.workspace_floats(&kernel.spec).max(4) as usize;
    let d_ws = driver("alloc", stream.alloc_zeros::<f32>(ws_len))?;
    let d_counters = driver(
        "alloc",
        stream.alloc_zeros::<u32>(c.tiles(&kernel.spec).max(1) as usize),
    )?;
    let (pa, _ga) = d_a.device_ptr(&stream);
    let (pb, _gb) = d_b.device_ptr(&stream);
    let (tma, tmb) = if sm80 {
        (TensorMap([0; 16]), TensorMap([0; 16]))
    } else {
        (
            encode(dtype, pa, m, k, c.bm, c.bk)?,
            encode(dtype, pb, n, k, c.bn / c.cluster, c.bk)?,
        )
    };
    drop((_ga, _gb));
    let cfg = LaunchConfig {
        grid_dim: (grid as u32, 1, 1),
        block_dim: (kernel.threads as u32, 1, 1),
        shared_mem_bytes: kernel.smem_bytes as u32,
    };
    let mut epoch = 0u32;
    let mut launch = |out: &mut CudaSlice<u16>| -> Result<(), CodegenError> {
        epoch += 1;
        let mut args = stream.launch_builder(&func);
        if sm80 {
            // laycert_gemm(const lc_elem* A, const lc_elem* B, lc_elem* C)
            args.arg(&d_a).arg(&d_b).arg(out);
        } else {
            args.arg(out)
                .arg(&tma)
                .arg(&tmb)
                .arg(&d_ws)
                .arg(&d_counters)
                .arg(&epoch);
        }
        // SAFETY: the kernel reads A and B through the tensor maps (bounds-checked by TMA),
        // writes C only inside (M, N) (validated guard and offsets) and the workspace inside
        // its validated extent.
        driver("launch", unsafe { args.launch(cfg) }).map(|_| ())
    };
    launch(&mut d_c)?;
    driver("synchronize", stream.synchronize())?;
    let got = driver("download", stream.clone_dtoh(&d_c))?;

    let tol = match dtype {
        GemmDtype::Bf16 => 2f64.powi(-7),
        GemmDtype::F16 => 2f64.powi(-10),
    };
    // SAFETY: dlopen probe only.
    let blas = if unsafe { cudarc::cublas::sys::is_culib_present() } {
        cudarc::cublas::CudaBlas::new(stream.clone()).ok()
    } else {
        None
    };
    let (reference, cells, refs): (String, Vec<usize>, Vec<f64>) = match &blas {
        Some(blas) => {
            let mut d_ref = driver("alloc", stream.alloc_zeros::<f32>((m * n) as usize))?;
            cublas_gemm(blas, &stream, dtype, (m, n, k), &d_a, &d_b, &mut d_ref)?;
            let r = driver("download", stream.clone_dtoh(&d_ref))?;
            (
                "cuBLAS with an f32 C (every element)".into(),
                (0..(m * n) as usize).collect(),
                r.iter().map(|&x| f64::from(x)).collect(),
            )
        }
        None => {
            let mut cells: Vec<usize> = Vec::new();
            for col in 0..n {
                cells.push(col as usize);
                cells.push(((m - 1) * n + col) as usize);
            }
            for row in 0..m {
                cells.push((row * n) as usize);
                cells.push((row * n + n - 1) as usize);
            }
            let mut s = o.seed ^ 0x5eed;
            for _ in 0..4096 {
                cells.push((next(&mut s) % (m * n) as u64) as usize);
            }
            cells.sort_unstable();
            cells.dedup();
            let refs = cells
                .iter()
                .map(|&cell| {
                    let (row, col) = (cell as i64 / n, cell as i64 % n);
                    (0..k)
                        .map(|x| {
                            value(host_a[(row * k + x) as usize], dtype)
                                * value(host_b[(col * k + x) as usize], dtype)
                        })
                        .sum::<f64>()
                })
                .collect();
            (
                format!("CPU f64 ({} sampled cells)", cells.len()),
                cells,
                refs,
            )
        }
    };
    let rms = (refs.iter().map(|r| r * r).sum::<f64>() / refs.len().max(1) as f64).sqrt();
    let (mut bad, mut max_rel_err) = (0u64, 0f64);
    for (j, &cell) in cells.iter().enumerate() {
        let r = refs[j];
        let g = value(got[cell], dtype);
        let e = (g - r).abs() / (r.abs() + rms);
        if e.is_nan() || e > tol {
            bad += 1;
        }
        if e.is_nan() || e > max_rel_err {
            max_rel_err = if e.is_nan() { f64::INFINITY } else { e };
        }
    }

    let flops = kernel.flops();
    let (ms, cublas_ms) = match &blas {
        Some(blas) => {
            let mut d_ref = driver("alloc", stream.alloc_zeros::<u16>((m * n) as usize))?;
            let mut ours = || launch(&mut d_c);
            let mut theirs =
                || cublas_gemm(blas, &stream, dtype, (m, n, k), &d_a, &d_b, &mut d_ref);
            let t = medians(&stream, &ctx, o, &mut [&mut ours, &mut theirs])?;
            (t[0], Some(t[1]))
        }
        None => {
            let mut ours = || launch(&mut d_c);
            (medians(&stream, &ctx, o, &mut [&mut ours])?[0], None)
        }
    };
    let tf = |t: f64| flops / (t * 1e-3) / 1e12;
    Ok(GemmReport {
        device: driver("name", ctx.name())?,
        reference,
        checked: cells.len() as u64,
        bad,
        max_rel_err,
        tolerance: tol,
        ms,
        tflops: tf(ms),
        cublas_ms,
        cublas_tflops: cublas_ms.map(tf),
        vs_cublas: cublas_ms.map(|t| t / ms),
        grid,
        registers,
    })
}
