//! `laycert gen gemm --m M --n N --k K --dtype f16|bf16 [--target sm80|sm90] [--smem-limit BYTES]
//! [-o k.cu] [--cert FILE]`: chooses the CTA configuration whose shared memory fits the budget
//! (the target's limit per CTA, or `--smem-limit`, at most 232448: the sm80 kernel built for an
//! H100 or H200), synthesizes and certifies the tile program's layouts, emits
//! the CUDA C++ kernel and validates its index expressions against the layouts. Without `-o`
//! the kernel goes to stdout; with `-o` the first line says where it went
//! (`wrote k.cu: laycert_gemm (N lines), certificate sha256:...`) and the plan follows.
//! `--weights int4 [--group 128] [--splits S] [--bn 128|256] [--stages 2|3] [--cluster 1|S]
//! [--dequant bytes|pairs] [--packing interleaved|sequential]` emits the W4A16
//! kernel instead (f16 activations, M <= 16, signed int4 weights in the packed layout of
//! `codegen::gemm::w4a16`: TensorRT-LLM's, nibbles interleaved inside each word, unless
//! `--packing sequential`; `--stages` = W buffers per thread).
//! Any K: where K is not a multiple of 8 the sm80 path loads A and B in 8- or 4-byte cp.async
//! chunks (K even) or stages them through registers (K odd), and
//! `--target sm90` runs the sm80 path (TMA cannot load such rows; the summary's `note:` line
//! says so). Exit 0 emitted, 2 bad input (an extent out of range, a configuration that does
//! not fit).

use serde_json::json;

use codegen::gemm::w4a16::{self, W4a16Kernel, W4a16Spec};
use codegen::gemm::{
    choose_config, emit_gemm_with, GemmConfig, GemmDtype, GemmKernel, GemmSpec, GemmTarget,
    MAX_SMEM_BUDGET, SM80_SMEM_LIMIT,
};

use super::{BadInput, Report};

/// `gen gemm` arguments.
pub struct GemmArgs<'a> {
    /// Rows of A and C.
    pub m: i64,
    /// Columns of C.
    pub n: i64,
    /// Reduction extent.
    pub k: i64,
    /// `f16` or `bf16`.
    pub dtype: &'a str,
    /// `sm80` or `sm90`.
    pub target: &'a str,
    /// Ring depth override.
    pub stages: Option<i64>,
    /// Cluster size override.
    pub cluster: Option<i64>,
    /// Tile-columns override.
    pub bn: Option<i64>,
    /// Tile-rows override.
    pub bm: Option<i64>,
    /// Warpgroup-count override (sm80: groups of 4 warps; sm90: consumers).
    pub warpgroups: Option<i64>,
    /// k-block override.
    pub bk: Option<i64>,
    /// Group-M override.
    pub group_m: Option<i64>,
    /// `int4`: weight-only int4 B (W4A16, f16 activations, M <= 16).
    pub weights: Option<&'a str>,
    /// K-elements per int4 scale (W4A16).
    pub group: Option<i64>,
    /// sm80: give `a_s`/`b_s` row-major, unswizzled (the bank-conflict baseline).
    pub no_swizzle: bool,
    /// K-splits override (sm90 split-K, W4A16).
    pub splits: Option<i64>,
    /// W4A16 dequantization override: `bytes` or `pairs`.
    pub dequant: Option<&'a str>,
    /// W4A16 weight packing: `interleaved` (default) or `sequential`.
    pub packing: Option<&'a str>,
    /// W4A16 K-warps per CTA override (1: split-K CTAs; 2..=8: K-group CTAs).
    pub kwarps: Option<i64>,
    /// W4A16 column warps per K-group CTA override.
    pub cwarps: Option<i64>,
    /// W4A16 A superblocks per K-group ring override.
    pub aslots: Option<i64>,
    /// Shared-memory budget per CTA in bytes (default: the target's limit; the W4A16 kernel's
    /// is sm80's).
    pub smem_limit: Option<i64>,
}

fn bad(message: String) -> BadInput {
    BadInput { message }
}

/// Largest value a configuration override may take: every one counts rows, columns, stages,
/// CTAs, warps or elements of one CTA's work, so anything larger is a typo, and arithmetic on
/// it cannot overflow.
const MAX_OVERRIDE: i64 = 1 << 16;

/// Refuses an override below 1 or above [`MAX_OVERRIDE`] before any configuration arithmetic
/// divides by it, naming the flag; and a shared-memory budget no device has.
fn check_overrides(a: &GemmArgs) -> Result<(), BadInput> {
    if let Some(v) = a.smem_limit.filter(|v| !(1..=MAX_SMEM_BUDGET).contains(v)) {
        return Err(bad(format!(
            "error: gemm: --smem-limit {v}: must be in 1..={MAX_SMEM_BUDGET} bytes of shared \
             memory per CTA (232448 = 227 KiB, the most any device gives a CTA: the H100 and \
             H200; sm80's own limit is {SM80_SMEM_LIMIT})"
        )));
    }
    let flags = [
        ("--stages", a.stages),
        ("--cluster", a.cluster),
        ("--bn", a.bn),
        ("--bm", a.bm),
        ("--warpgroups", a.warpgroups),
        ("--bk", a.bk),
        ("--group-m", a.group_m),
        ("--group", a.group),
        ("--splits", a.splits),
        ("--kwarps", a.kwarps),
        ("--cwarps", a.cwarps),
        ("--aslots", a.aslots),
    ];
    for (flag, v) in flags {
        if let Some(v) = v.filter(|v| !(1..=MAX_OVERRIDE).contains(v)) {
            return Err(bad(format!(
                "error: gemm: {flag} {v}: must be in 1..={MAX_OVERRIDE}"
            )));
        }
    }
    Ok(())
}

/// Refuses a flag given to the kernel it does not configure (a silently ignored override would
/// emit a kernel other than the one asked for).
fn check_applies(a: &GemmArgs, w4a16: bool) -> Result<(), BadInput> {
    let only_w4a16 = [
        ("--group", a.group.is_some()),
        ("--kwarps", a.kwarps.is_some()),
        ("--cwarps", a.cwarps.is_some()),
        ("--aslots", a.aslots.is_some()),
        ("--packing", a.packing.is_some()),
        ("--dequant", a.dequant.is_some()),
    ];
    let not_w4a16 = [
        ("--bm", a.bm.is_some()),
        ("--warpgroups", a.warpgroups.is_some()),
        ("--bk", a.bk.is_some()),
        ("--group-m", a.group_m.is_some()),
        ("--no-swizzle", a.no_swizzle),
    ];
    let (list, why): (&[(&str, bool)], _) = if w4a16 {
        (
            &not_w4a16,
            "does not apply to the W4A16 kernel (--weights int4)",
        )
    } else {
        (
            &only_w4a16,
            "applies only to the W4A16 kernel (--weights int4)",
        )
    };
    match list.iter().find(|(_, given)| *given) {
        Some((flag, _)) => Err(bad(format!("error: gemm: {flag} {why}"))),
        None => Ok(()),
    }
}

/// Parses, configures, synthesizes, emits and validates.
pub fn build(a: &GemmArgs) -> Result<GemmKernel, BadInput> {
    check_overrides(a)?;
    check_applies(a, false)?;
    let dtype = GemmDtype::parse(a.dtype).ok_or_else(|| {
        bad(format!(
            "error: --dtype {:?}: expected f16 or bf16",
            a.dtype
        ))
    })?;
    let target = GemmTarget::parse(a.target).ok_or_else(|| {
        bad(format!(
            "error: --target {:?}: expected sm80 or sm90",
            a.target
        ))
    })?;
    let spec = GemmSpec {
        m: a.m,
        n: a.n,
        k: a.k,
        dtype,
        target,
        smem_limit: a.smem_limit,
    };
    let (spec, note) = codegen::gemm::route(&spec);
    if let (Some(why), Some(flag)) = (
        &note,
        [("--cluster", a.cluster), ("--splits", a.splits)]
            .iter()
            .find(|(_, v)| v.is_some())
            .map(|(f, _)| f),
    ) {
        return Err(bad(format!(
            "error: gemm: {flag} configures the sm90 path, and {why}; the sm80 path runs whole \
             tiles without clusters"
        )));
    }
    let mut c: GemmConfig = choose_config(&spec).map_err(|e| bad(format!("error: {e}")))?;
    let chosen_stages = c.stages;
    if let Some(s) = a.stages {
        c.stages = s;
    }
    if let Some(x) = a.cluster {
        c.cluster = x;
    }
    if let Some(x) = a.bn {
        c.bn = x;
    }
    if let Some(x) = a.bm {
        c.bm = x;
    }
    if let Some(x) = a.warpgroups {
        c.consumers = x;
    }
    if let Some(x) = a.bk {
        c.bk = x;
    }
    match a.splits {
        Some(x) => c.splits = x,
        // Clusters and split-K exclude each other: a requested cluster keeps whole tiles.
        None if a.cluster.is_some_and(|x| x > 1) => c.splits = 1,
        None => codegen::gemm::fit_splits(&spec, &mut c),
    }
    if let Some(x) = a.group_m {
        c.group_m = x;
    }
    if a.stages.is_none() {
        // The most stages that fit the budget for the tile asked for: sm80's from its most,
        // sm90's from the chosen (a tile too large for them is refused below, naming its bytes).
        let from = match spec.target {
            GemmTarget::Sm80 => codegen::gemm::sm80::STAGES,
            GemmTarget::Sm90 => chosen_stages,
        };
        codegen::gemm::fit_stages(&spec, &mut c, from);
    }
    let mut kernel = if a.no_swizzle {
        codegen::gemm::emit_gemm_unswizzled(&spec, &c)
    } else {
        emit_gemm_with(&spec, &c)
    }
    .map_err(|e| bad(format!("error: {e}")))?;
    kernel.note = note;
    Ok(kernel)
}

/// The plan summary lines.
pub fn summary(k: &GemmKernel) -> Vec<String> {
    let c = &k.config;
    let mut lines = vec![format!(
        "{}x{}x{} {} {}: tile {}x{}x{}, {} stages, {} consumer warpgroup(s), cluster {}, split-K \
         {}, {} threads, {} bytes of shared memory (budget {})",
        k.spec.m,
        k.spec.n,
        k.spec.k,
        k.spec.dtype.name(),
        k.spec.target.name(),
        c.bm,
        c.bn,
        c.bk,
        c.stages,
        c.consumers,
        c.cluster,
        c.splits,
        k.threads,
        k.smem_bytes,
        k.spec.smem_budget()
    )];
    if let Some(why) = &k.note {
        lines.push(format!("  note: {why}"));
    }
    lines.extend(k.plan_summary.iter().map(|l| format!("  {l}")));
    let v = &k.validation;
    lines.push(format!(
        "validated: {} accumulator cells, {} global offsets, {} guard points, {} split-K points, \
         {} shared cells, {} fragment cells, {} mma k-steps",
        v.accumulator_cells,
        v.global_offsets,
        v.guard_points,
        v.split_points,
        v.smem_cells,
        v.fragment_cells,
        v.mma_products
    ));
    lines
}

/// Parses and emits the W4A16 kernel (`--weights int4`).
pub fn build_w4a16(a: &GemmArgs) -> Result<W4a16Kernel, BadInput> {
    check_overrides(a)?;
    check_applies(a, true)?;
    if a.weights != Some("int4") {
        return Err(bad(format!(
            "error: --weights {:?}: expected int4",
            a.weights.unwrap_or("")
        )));
    }
    if a.dtype != "f16" {
        return Err(bad(format!(
            "error: --dtype {:?} with --weights int4: the W4A16 kernel takes f16 activations",
            a.dtype
        )));
    }
    if GemmTarget::parse(a.target).is_none() {
        return Err(bad(format!(
            "error: --target {:?}: expected sm80 or sm90",
            a.target
        )));
    }
    let packing = match a.packing {
        None | Some("interleaved") => w4a16::W4Packing::Interleaved,
        Some("sequential") => w4a16::W4Packing::Sequential,
        Some(x) => {
            return Err(bad(format!(
                "error: --packing {x:?}: expected interleaved or sequential"
            )))
        }
    };
    let spec = W4a16Spec {
        m: a.m,
        n: a.n,
        k: a.k,
        group: a.group.unwrap_or(128),
        packing,
        smem_limit: a.smem_limit,
    };
    // Asking for split-K or a cluster (or --kwarps 1) starts from the split-K configuration;
    // asking for K-warps from a split-K one fills in what is not given (2 column warps, 4 A
    // slots). The other overrides apply to either.
    let split_k = a.splits.is_some() || a.cluster.is_some() || a.kwarps == Some(1);
    let mut c = if split_k {
        w4a16::choose_split_k(&spec)
    } else {
        w4a16::choose(&spec)
    }
    .map_err(|e| bad(format!("error: {e}")))?;
    if let Some(x) = a.kwarps.filter(|&x| x != 1) {
        if !c.kgroup() {
            c = w4a16::W4a16Config {
                splits: 1,
                cluster: 1,
                cwarps: 2,
                aslots: 4,
                ..c
            };
        }
        c.kwarps = x;
    }
    if let Some(x) = a.bn {
        c.bn = x;
    }
    if let Some(x) = a.cwarps {
        c.cwarps = x;
    }
    if let Some(x) = a.aslots {
        c.aslots = x;
    }
    if let Some(x) = a.splits {
        c.splits = x;
    }
    if let Some(x) = a.stages {
        c.depth = x;
    }
    match a.dequant {
        None => {}
        Some("pairs") => c.dequant = w4a16::W4Dequant::Pairs,
        Some("bytes") => c.dequant = w4a16::W4Dequant::Bytes,
        Some(x) => {
            return Err(bad(format!(
                "error: --dequant {x:?}: expected bytes or pairs"
            )))
        }
    }
    c.cluster = match a.cluster {
        Some(x) => x,
        None if c.kgroup() => 1,
        None => w4a16::default_cluster(&spec, &c),
    };
    w4a16::emit_w4a16_with(&spec, &c).map_err(|e| bad(format!("error: {e}")))
}

struct Emitted<'k> {
    source: &'k str,
    certificate_json: &'k str,
    entry: &'k str,
    digest: &'k str,
    lines: Vec<String>,
    json: serde_json::Value,
}

fn write_out(
    e: Emitted,
    out: Option<&str>,
    cert: Option<&str>,
    as_json: bool,
) -> Result<Report, BadInput> {
    if let Some(path) = out {
        std::fs::write(path, e.source).map_err(|x| bad(format!("error: -o {path}: {x}")))?;
    }
    if let Some(path) = cert {
        std::fs::write(path, e.certificate_json)
            .map_err(|x| bad(format!("error: --cert {path}: {x}")))?;
    }
    if as_json {
        let mut v = e.json;
        match out {
            Some(path) => v["written"] = json!(path),
            None => v["source"] = json!(e.source),
        }
        return Ok(Report::json(v));
    }
    Ok(match out {
        Some(path) => {
            let mut lines = vec![format!(
                "wrote {path}: {} ({} lines), certificate sha256:{}",
                e.entry,
                e.source.lines().count(),
                e.digest
            )];
            lines.extend(e.lines);
            Report::ok(lines)
        }
        None => Report {
            stdout: e.source.to_string(),
            code: 0,
        },
    })
}

/// Runs `gen gemm`.
pub fn gen(
    a: &GemmArgs,
    out: Option<&str>,
    cert: Option<&str>,
    as_json: bool,
) -> Result<Report, BadInput> {
    if a.weights.is_some() {
        let k = build_w4a16(a)?;
        let v = &k.validation;
        let cta = if k.config.kgroup() {
            format!(
                "{} columns x all of K per CTA ({} column warps x {} K-warps of {} k)",
                k.config.group_threads(),
                k.config.cwarps,
                k.config.kwarps,
                k.config.ks(&k.spec)
            )
        } else {
            format!(
                "{} columns x K-range {} per CTA, {} splits",
                k.config.bn,
                k.config.ks(&k.spec),
                k.config.splits
            )
        };
        let lines = vec![
            format!(
                "W4A16 {}x{}x{} f16 x int4 (group {}): {cta}, {} CTAs of {} threads, {} bytes of \
                 shared memory (budget {})",
                k.spec.m,
                k.spec.n,
                k.spec.k,
                k.spec.group,
                k.grid,
                k.config.threads(),
                k.smem_bytes,
                k.spec.smem_budget()
            ),
            format!(
                "validated: {} accumulator cells, {} global offsets, {} guard points, {} shared \
                 cells, {} fragment cells, {} mma k-steps",
                v.accumulator_cells,
                v.global_offsets,
                v.guard_points,
                v.smem_cells,
                v.fragment_cells,
                v.mma_products
            ),
        ];
        let lines = lines
            .into_iter()
            .chain(k.plan_summary.iter().map(|l| format!("  {l}")))
            .collect();
        let json = json!({
            "spec": k.spec,
            "config": k.config,
            "plan": k.plan_summary,
            "validation": k.validation,
            "certificate": format!("sha256:{}", k.digest),
            "kernel": k.entry,
        });
        return write_out(
            Emitted {
                source: &k.source,
                certificate_json: &k.certificate_json,
                entry: k.entry,
                digest: &k.digest,
                lines,
                json,
            },
            out,
            cert,
            as_json,
        );
    }
    let k = build(a)?;
    let json = json!({
        "spec": k.spec,
        "config": k.config,
        "plan": k.plan_summary,
        "validation": k.validation,
        "certificate": format!("sha256:{}", k.digest),
        "kernel": k.entry,
    });
    write_out(
        Emitted {
            source: &k.source,
            certificate_json: &k.certificate_json,
            entry: k.entry,
            digest: &k.digest,
            lines: summary(&k),
            json,
        },
        out,
        cert,
        as_json,
    )
}
/// Runs `gpu bench gemm`: emits, compiles with NVRTC, checks against cuBLAS (or a sampled CPU
/// reference) and times both. First line `correct: ...` (exit 0), `WRONG: ...` (exit 1) or
/// `SKIP (no CUDA device): why` (exit 3); 2 on bad input.
pub fn bench(a: &GemmArgs, warmup: usize, reps: usize, as_json: bool) -> Result<Report, BadInput> {
    use codegen::gemm::runner::{bench_gemm, GemmBenchOptions};
    use codegen::CodegenError;
    if a.weights.is_some() {
        // `build` makes the f16/bf16 kernel: with --weights it benchmarked a plain GEMM and
        // reported it as the W4A16 one (session 24).
        return Err(bad(
            "error: gpu bench gemm: --weights int4 (the W4A16 kernel) is not run by this \
             command, which runs the f16/bf16 kernels; bench/gpu/w4a16.py runs and checks W4A16 \
             kernels against cuBLAS (bench/gpu/README.md)"
                .to_string(),
        ));
    }
    let k = build(a)?;
    let opts = GemmBenchOptions {
        warmup,
        reps,
        ..GemmBenchOptions::default()
    };
    let r = match bench_gemm(&k, &opts) {
        Ok(r) => r,
        Err(CodegenError::NoCudaDevice(why)) => return Ok(super::gpu::skipped(&why, as_json)),
        Err(e) => return Err(bad(format!("error: the GPU run: {e}"))),
    };
    let code = if r.bad == 0 { 0 } else { 1 };
    let mut report = if as_json {
        Report::json(json!({
            "spec": k.spec, "config": k.config, "certificate": format!("sha256:{}", k.digest),
            "bench": r, "correct": r.bad == 0,
        }))
    } else {
        let first = if r.bad == 0 {
            format!(
                "correct: {} cells within {:.1e} of {} (max error {:.2e})",
                r.checked, r.tolerance, r.reference, r.max_rel_err
            )
        } else {
            format!(
                "WRONG: {} of {} cells outside {:.1e} of {}",
                r.bad, r.checked, r.tolerance, r.reference
            )
        };
        let mut lines = vec![first];
        lines.push(match (r.cublas_ms, r.cublas_tflops, r.vs_cublas) {
            (Some(cm), Some(ct), Some(v)) => format!(
                "laycert {:.4} ms = {:.1} TFLOP/s; cuBLAS {:.4} ms = {:.1} TFLOP/s; ratio {:.1}% \
                 (medians of {reps} interleaved runs after {warmup} warm-up, {}, grid {}, {} registers)",
                r.ms, r.tflops, cm, ct, 100.0 * v, r.device, r.grid, r.registers
            ),
            _ => format!(
                "laycert {:.4} ms = {:.1} TFLOP/s (cuBLAS not loadable: no ratio; {}, grid {}, {} registers)",
                r.ms, r.tflops, r.device, r.grid, r.registers
            ),
        });
        lines.extend(summary(&k));
        Report::ok(lines)
    };
    report.code = code;
    Ok(report)
}
