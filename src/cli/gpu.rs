//! `laycert gpu bench --src L --dst L --shape .. --dtype .. [--no-swizzle]`: plans, emits,
//! compiles with NVRTC, runs on GPU 0, checks every destination byte against a CPU reference
//! and times the kernel against a device-to-device copy. First line: `correct ...` (exit 0),
//! `MISMATCH ...` (exit 1), or `SKIP (no CUDA device): why` (exit 3); 2 on bad input.

use serde_json::json;

use codegen::{bench as run_bench, BenchOptions, CodegenError};

use super::gen::{build, summary, summary_json, CopyArgs};
use super::{BadInput, Report};

/// Exit code when the GPU run could not happen here.
pub const SKIPPED: u8 = 3;

/// The report of a GPU run that could not happen here: `SKIP (no CUDA device): why` (or its
/// JSON), exit [`SKIPPED`].
pub fn skipped(why: &str, as_json: bool) -> Report {
    let mut report = if as_json {
        Report::json(json!({ "skipped": format!("no CUDA device: {why}") }))
    } else {
        Report::ok(vec![format!("SKIP (no CUDA device): {why}")])
    };
    report.code = SKIPPED;
    report
}

/// Runs `gpu bench`.
pub fn bench(a: &CopyArgs, warmup: usize, reps: usize, as_json: bool) -> Result<Report, BadInput> {
    let (plan, kernel) = build(a)?;
    let opts = BenchOptions {
        warmup,
        reps,
        ..BenchOptions::default()
    };
    let r = match run_bench(&plan, &kernel, &opts) {
        Ok(r) => r,
        Err(CodegenError::NoCudaDevice(why)) => return Ok(skipped(&why, as_json)),
        Err(e) => {
            return Err(BadInput {
                message: format!("error: the GPU run: {e}"),
            })
        }
    };
    let code = if r.mismatches == 0 { 0 } else { 1 };
    let mut report = if as_json {
        let mut v = summary_json(&plan, &kernel);
        v["bench"] = json!(r);
        v["correct"] = json!(r.mismatches == 0);
        Report::json(v)
    } else {
        let first = if r.mismatches == 0 {
            format!(
                "correct: all {} elements match the CPU reference (destination poisoned first)",
                r.elements
            )
        } else {
            format!(
                "MISMATCH: {} destination bytes differ from the CPU reference",
                r.mismatches
            )
        };
        let mut lines = vec![
            first,
            format!(
                "kernel {:.4} ms = {:.1} GB/s; device-to-device copy {:.4} ms = {:.1} GB/s; ratio \
                 {:.1}% (medians of {reps} runs after {warmup} warm-up, {}, {} registers)",
                r.kernel_ms,
                r.kernel_gbps,
                r.d2d_ms,
                r.d2d_gbps,
                100.0 * r.ratio,
                r.device,
                r.registers
            ),
        ];
        lines.extend(summary(&plan, &kernel));
        Report::ok(lines)
    };
    report.code = code;
    Ok(report)
}
