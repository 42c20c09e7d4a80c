//! The Trainium commands.
//!
//! - `laycert gen nki gemm|softmax|mha ... [-o FILE] [--cert FILE]`: plans (TensorE dispatch
//!   proved by certify), emits NKI Python (to stdout, or to FILE with a summary and the cost
//!   table on stdout). A request that breaks a documented hardware rule is bad input (exit 2),
//!   its message `error: <rule>: ...`. A kernel too large for the reference interpreter (see
//!   `nki run`) is still emitted, with a note on stderr.
//! - `laycert nki run KERNEL.py [--target trn1|trn2]`: runs the kernel on laycert's reference
//!   interpreter against NumPy. First line `match` (exit 0), `mismatch` (exit 1) or
//!   `rule violated: <rule>: ...` (exit 2). A file that is not a runnable laycert kernel (a
//!   header whose sizes the generator refuses, a kernel that raises) is exit 2 with the reason
//!   on stderr; so is a header whose sizes need more than the interpreter's memory limit (2 GiB
//!   of arrays, `codegen::nki::MAX_INTERPRETER_BYTES`), refused before Python starts. Exit 3:
//!   `cannot run: ...` when no Python with NumPy is available (`LAYCERT_PYTHON`), `timeout: ...`
//!   when the run passed `--timeout SECONDS` (default 600; the interpreter and every process it
//!   started are killed). The kernel file is trusted code: Python executes it.
//! - `laycert nki dispatch --a L --b L --c L --dims K,M,N [--instruction K,M,N] [--cert FILE]`:
//!   the Axe paper's TensorE dispatch of `C[M,N] += A[K,M].T @ B[K,N]` over the axes P and F.
//!   First line `dispatch: ...` (exit 0) or `refused: <rule>: ...` (exit 1).
//! - `--json`: one object instead, same exit codes: `gen nki` gives `kernel` (what it computes),
//!   `cost`, and `source` (the kernel text) or `wrote` (FILE); `nki run` gives `verdict` (the
//!   first line above, `timeout: ...` and `cannot run: ...` included) and `figures` (null when
//!   the kernel did not run).

use clap::Subcommand;
use serde_json::json;

use codegen::nki::{self, CostReport, KernelSizes, MhaSpec};
use solver::nki_gemm::{plan_gemm, GemmSpec};
use solver::tensore::{dispatch_and_prove, Options, Problem};

use super::{input, BadInput, Report};

/// `gen nki ...`.
#[derive(Subcommand)]
pub enum NkiGen {
    /// Tiled GEMM `result[M,N] = lhsT[K,M].T @ rhs[K,N]`, PSUM accumulation over K.
    Gemm {
        /// Rows of the result.
        #[arg(long)]
        m: i64,
        /// Columns of the result.
        #[arg(long)]
        n: i64,
        /// The contraction.
        #[arg(long)]
        k: i64,
        /// Input element type: bf16 or f16.
        #[arg(long, default_value = "bf16")]
        dtype: String,
        /// Largest instruction and block `K,M,N` (at most 128,128,512).
        #[arg(long, default_value = "128,128,512")]
        tile: String,
        /// trn1 or trn2 (capacities).
        #[arg(long, default_value = "trn1")]
        target: String,
        /// Write the kernel here instead of stdout.
        #[arg(short = 'o', long = "out")]
        out: Option<String>,
        /// Write the dispatch certificates here (`laycert check` re-decides them).
        #[arg(long)]
        cert: Option<String>,
    },
    /// Row softmax of a `rows x cols` matrix.
    Softmax {
        /// Rows.
        #[arg(long)]
        rows: i64,
        /// Columns.
        #[arg(long)]
        cols: i64,
        /// f32, bf16 or f16.
        #[arg(long, default_value = "f32")]
        dtype: String,
        /// trn1 or trn2.
        #[arg(long, default_value = "trn1")]
        target: String,
        /// Write the kernel here instead of stdout.
        #[arg(short = 'o', long = "out")]
        out: Option<String>,
    },
    /// Multi-head attention forward, flash style.
    Mha {
        /// Sequence length.
        #[arg(long)]
        seq: i64,
        /// Heads.
        #[arg(long)]
        heads: i64,
        /// Head dim (at most 128).
        #[arg(long)]
        dim: i64,
        /// bf16, f16 or f32.
        #[arg(long, default_value = "bf16")]
        dtype: String,
        /// trn1 or trn2.
        #[arg(long, default_value = "trn1")]
        target: String,
        /// Write the kernel here instead of stdout.
        #[arg(short = 'o', long = "out")]
        out: Option<String>,
        /// Write the dispatch certificates here.
        #[arg(long)]
        cert: Option<String>,
    },
}

/// `nki ...`.
#[derive(Subcommand)]
pub enum NkiCommand {
    /// Run a kernel on the reference interpreter against NumPy (validates against the
    /// documented ISA, not hardware).
    Run {
        /// The kernel file (its first line `# laycert-nki: ...` names what it computes).
        kernel: String,
        /// trn1 or trn2 (SBUF capacity).
        #[arg(long, default_value = "trn1")]
        target: String,
        /// Wall-clock limit in seconds; past it the run is killed (exit 3).
        #[arg(long, default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..=86400))]
        timeout: u64,
    },
    /// TensorE dispatch of `C[M,N] += A[K,M].T @ B[K,N]` from Axe layouts over P and F.
    Dispatch {
        /// `A[K,M]` in SBUF.
        #[arg(long)]
        a: String,
        /// `B[K,N]` in SBUF.
        #[arg(long)]
        b: String,
        /// `C[M,N]` in PSUM (float32 elements on F).
        #[arg(long)]
        c: String,
        /// `K,M,N`.
        #[arg(long)]
        dims: String,
        /// Largest instruction `K,M,N` to use.
        #[arg(long, default_value = "128,128,512")]
        instruction: String,
        /// trn1 or trn2.
        #[arg(long, default_value = "trn1")]
        target: String,
        /// Bytes of an SBUF element: 1 (fp8), 2 (bf16, f16) or 4 (f32).
        #[arg(long, default_value_t = 2)]
        dtype_bytes: i64,
        /// Write the certificate here.
        #[arg(long)]
        cert: Option<String>,
    },
}

fn bad(e: impl std::fmt::Display) -> BadInput {
    BadInput {
        message: format!("error: {e}"),
    }
}

fn three(text: &str, what: &str) -> Result<[i64; 3], BadInput> {
    let v = input::shape(Some(text))
        .map_err(|e| BadInput {
            message: format!("{}\n  (in {what})", e.message),
        })?
        .unwrap_or_default();
    v.try_into().map_err(|v: Vec<i64>| BadInput {
        message: format!("error: {what} needs three numbers K,M,N, got {}", v.len()),
    })
}

fn write(path: &str, text: &str) -> Result<(), BadInput> {
    std::fs::write(path, text).map_err(|e| BadInput {
        message: format!("error: cannot write {path:?}: {e}"),
    })
}

/// The kernel on stdout, or written to `out` with a summary; a note on stderr when `nki run`
/// would refuse it for the reference interpreter's memory (the kernel itself stays valid).
fn finish(
    kernel: String,
    what: String,
    sizes: KernelSizes,
    out: Option<&str>,
    cost: Option<CostReport>,
    as_json: bool,
) -> Result<Report, BadInput> {
    if let Err(e) = sizes.check_interpreter_memory() {
        super::to_stderr(&format!(
            "note: `laycert nki run` will refuse this kernel: {e}"
        ));
    }
    let Some(path) = out else {
        if as_json {
            return Ok(Report::json(
                json!({ "kernel": what, "source": kernel, "cost": cost }),
            ));
        }
        return Ok(Report {
            stdout: kernel,
            code: 0,
        });
    };
    write(path, &kernel)?;
    if as_json {
        return Ok(Report::json(
            json!({ "wrote": path, "kernel": what, "cost": cost }),
        ));
    }
    let mut lines = vec![format!("wrote {path}: {what}")];
    if let Some(c) = cost {
        lines.extend(c.lines());
    }
    Ok(Report::ok(lines))
}

/// `gen nki ...`.
pub fn gen(what: &NkiGen, as_json: bool) -> Result<Report, BadInput> {
    match what {
        NkiGen::Gemm {
            m,
            n,
            k,
            dtype,
            tile,
            target,
            out,
            cert,
        } => {
            if dtype != "bf16" && dtype != "f16" {
                return Err(bad(format!(
                    "--dtype {dtype:?}: the GEMM takes bf16 or f16"
                )));
            }
            let spec = GemmSpec {
                m: *m,
                n: *n,
                k: *k,
                dtype_bytes: 2,
                target: target.clone(),
                tile: three(tile, "--tile")?,
            };
            let plan = plan_gemm(&spec).map_err(bad)?;
            if let Some(path) = cert {
                let set = certify::tensore::DispatchSet::new(
                    &format!("gemm {m}x{n}x{k}"),
                    plan.blocks.iter().map(|b| b.cert.clone()).collect(),
                );
                write(
                    path,
                    &serde_json::to_string_pretty(&set).expect("serializes"),
                )?;
            }
            let kernel = nki::emit_gemm(&plan, dtype);
            let cost = nki::cost::gemm(&plan);
            let what = format!(
                "gemm {m}x{n}x{k} {dtype}, {} block shape(s), dispatches proved",
                plan.blocks.len()
            );
            let sizes = KernelSizes::Gemm {
                m: *m,
                n: *n,
                k: *k,
            };
            finish(kernel, what, sizes, out.as_deref(), Some(cost), as_json)
        }
        NkiGen::Softmax {
            rows,
            cols,
            dtype,
            target,
            out,
        } => {
            let kernel = nki::emit_softmax(*rows, *cols, dtype, target).map_err(bad)?;
            finish(
                kernel,
                format!("softmax {rows}x{cols} {dtype}"),
                KernelSizes::Softmax {
                    rows: *rows,
                    cols: *cols,
                },
                out.as_deref(),
                None,
                as_json,
            )
        }
        NkiGen::Mha {
            seq,
            heads,
            dim,
            dtype,
            target,
            out,
            cert,
        } => {
            nki::dtype_bytes(dtype).map_err(bad)?;
            let spec = MhaSpec {
                heads: *heads,
                seq: *seq,
                dim: *dim,
                dtype: dtype.clone(),
                target: target.clone(),
            };
            let k = nki::emit_mha(&spec).map_err(bad)?;
            if let Some(path) = cert {
                let set = certify::tensore::DispatchSet::new(
                    &format!("mha heads={heads} seq={seq} dim={dim}"),
                    k.certs.clone(),
                );
                write(
                    path,
                    &serde_json::to_string_pretty(&set).expect("serializes"),
                )?;
            }
            let what = format!(
                "mha heads={heads} seq={seq} dim={dim} {dtype}, {} matmul dispatch(es) proved",
                k.certs.len()
            );
            let sizes = KernelSizes::Mha {
                heads: *heads,
                seq: *seq,
                dim: *dim,
            };
            finish(
                k.source,
                what,
                sizes,
                out.as_deref(),
                Some(nki::cost::mha(&spec)),
                as_json,
            )
        }
    }
}

/// A run that did not happen or finish (exit 3): its line, or the JSON of a verdict without
/// figures.
fn not_run(line: String, as_json: bool) -> Report {
    let mut r = if as_json {
        Report::json(json!({ "verdict": line, "figures": null }))
    } else {
        Report::ok(vec![line])
    };
    r.code = 3;
    r
}

/// `nki ...`.
pub fn run(what: &NkiCommand, as_json: bool) -> Result<Report, BadInput> {
    match what {
        NkiCommand::Run {
            kernel,
            target,
            timeout,
        } => {
            let path = std::path::Path::new(kernel);
            if !path.is_file() {
                let why = if !path.exists() {
                    "no such file"
                } else if path.is_dir() {
                    "a directory, not a kernel file"
                } else {
                    "not a regular file"
                };
                return Err(bad(format!("kernel {kernel:?}: {why}")));
            }
            match nki::run_within(path, target, std::time::Duration::from_secs(*timeout)) {
                Ok(o) => {
                    let code = u8::try_from(o.code).unwrap_or(2);
                    if as_json {
                        let mut lines = o.stdout.lines();
                        let verdict = lines.next().unwrap_or("").to_string();
                        let figures: serde_json::Value = lines
                            .next()
                            .and_then(|l| serde_json::from_str(l).ok())
                            .unwrap_or(serde_json::Value::Null);
                        let mut r = Report::json(json!({ "verdict": verdict, "figures": figures }));
                        r.code = code;
                        return Ok(r);
                    }
                    Ok(Report {
                        stdout: o.stdout,
                        code,
                    })
                }
                Err(nki::NkiError::NoPython(why)) => {
                    Ok(not_run(format!("cannot run: {why}"), as_json))
                }
                Err(e @ nki::NkiError::Timeout(_)) => Ok(not_run(
                    format!("timeout: {kernel}: {e} (--timeout)"),
                    as_json,
                )),
                Err(e) => Err(bad(e)),
            }
        }
        NkiCommand::Dispatch {
            a,
            b,
            c,
            dims,
            instruction,
            target,
            dtype_bytes,
            cert,
        } => {
            let parse = |text: &str, what: &str| {
                layout::notation::axe::parse(text).map_err(|e| BadInput {
                    message: format!("error: {what} {text:?}: {e}"),
                })
            };
            let problem = Problem {
                a: parse(a, "--a")?,
                b: parse(b, "--b")?,
                c: parse(c, "--c")?,
                dims: three(dims, "--dims")?,
            };
            if ![1, 2, 4].contains(dtype_bytes) {
                return Err(bad(format!(
                    "--dtype-bytes {dtype_bytes}: an SBUF element is 1 (fp8), 2 (bf16, f16) or 4 \
                     (f32) bytes"
                )));
            }
            let opts = Options {
                target: target.clone(),
                dtype_bytes: *dtype_bytes,
                instruction: three(instruction, "--instruction")?,
            };
            match dispatch_and_prove("nki dispatch", &problem, &opts) {
                Ok(certificate) => {
                    if let Some(path) = cert {
                        write(
                            path,
                            &serde_json::to_string_pretty(&certificate).expect("serializes"),
                        )?;
                    }
                    let p = &certificate.pieces[0];
                    let [kt, mt, nt] = p.instruction;
                    let nest: Vec<String> = p
                        .loops
                        .iter()
                        .map(|l| format!("{}:{}", l.dim, l.extent))
                        .collect();
                    let first = format!(
                        "dispatch: instruction {kt}x{mt}x{nt} (K x M x N), {} instruction(s), loops {}",
                        certificate.instructions(),
                        if nest.is_empty() { "none".into() } else { nest.join(" ") }
                    );
                    if as_json {
                        return Ok(Report::json(
                            json!({ "dispatch": first, "certificate": certificate }),
                        ));
                    }
                    Ok(Report::ok(vec![
                        first,
                        format!(
                            "proved by certify (tensore-dispatch, digest {})",
                            certificate.digest
                        ),
                    ]))
                }
                Err(e) if e.rule().is_some() => {
                    let mut r = if as_json {
                        Report::json(json!({ "refused": e.to_string(), "rule": e.rule() }))
                    } else {
                        Report::ok(vec![format!("refused: {e}")])
                    };
                    r.code = 1;
                    Ok(r)
                }
                Err(e) => Err(bad(e)),
            }
        }
    }
}
