//! `laycert dist plan|check|sim|gen`: distributed layouts over device meshes.
//!
//! Layouts are given in any of the notations users have, detected from the text: DTensor
//! placements `[Shard(0), Replicate()]`, a JAX PartitionSpec `P('dp', None)`, or HLO sharding
//! text `{devices=[2,1,4]<=[8] last_tile_dim_replicate}` (`last_tile_dims={unreduced}` is a
//! partial sum; HLO device ids are positions in the mesh's device order).
//!
//! First lines and exit codes:
//! - `plan`: `plan: N steps, B bytes received per rank (max), predicted T us, certified` (exit 0).
//! - `sim`: `simulated: N ranks, P places checked, certified` (exit 0), or `refuted: ...` (exit 1),
//!   or `unknown: ...` (exit 3) past the cell simulator's 2^24 cells: the plan run cell by cell.
//! - `check`: `certified: ...` (exit 0) or `refuted: device R [coords], element [..]: ...` (exit 1)
//!   or `unknown: ...` (exit 3) for a peer's plan (DTensor transforms, a plan JSON, a
//!   certificate, or XLA's compiled program as HLO text: `--xla-hlo`, then a line with the bytes
//!   each device receives by its collectives; HLO outside the subset read is exit 2 naming the
//!   instruction).
//! - `run`: `ran: N steps, R ranks on DEVICE, P places checked, 0 wrong` (exit 0) or `WRONG: ...`
//!   (exit 1), then `nccl: ...`; `SKIP (no CUDA device): why` (exit 3); `--host` runs the same
//!   interpreter on host memory.
//! - `gen`: `generated: FILE (N steps, K kernels)` (exit 0).
//!   Bad input (a mesh of 0 devices, a repeated axis name, a placement naming a missing tensor
//!   dim, a mesh axis used twice, different device counts) is exit 2 naming what and where.
//! - `--json`: one object instead, with the same exit code: `verdict` (`certified`, `refuted`,
//!   `unknown`, `invalid`) and its figures for `sim` and `check`, `correct` for `run` (`skipped`
//!   without a device), `written` for `gen`.

use std::fmt::Write as _;

use serde_json::json;

use layout::mesh::{Mesh, MeshLayout};
use layout::notation::{dtensor, hlo, jax};
use solver::dist::{peer, DistPlan, PlanOptions, Topology};

use super::input::MAX_FILE_BYTES;
use super::{BadInput, Report};

/// The `dist` command's arguments.
#[derive(clap::Args)]
pub struct DistArgs {
    #[command(subcommand)]
    what: DistCommand,
}

/// The arguments every `dist` subcommand shares.
#[derive(clap::Args, Clone)]
pub struct Spec {
    /// The device mesh, e.g. `dp=2,tp=4` (or `8` for `gpuid=8`), optionally with the rank at each
    /// mesh position: `dp=2,tp=2 devices=[[0,2],[1,3]]` (a DeviceMesh over a permuted tensor).
    #[arg(long)]
    mesh: String,
    /// The target's mesh when it differs (same device count, ranks map by number).
    #[arg(long)]
    to_mesh: Option<String>,
    /// Global tensor shape, e.g. `4096,8192`.
    #[arg(long)]
    shape: String,
    /// Element type (bytes per element): f32, bf16, f16, f8, i32, f64...
    #[arg(long, default_value = "bf16")]
    dtype: String,
    /// Source layout (DTensor placements, JAX PartitionSpec or HLO sharding).
    #[arg(long, allow_hyphen_values = true)]
    from: String,
    /// Target layout.
    #[arg(long, allow_hyphen_values = true)]
    to: String,
    /// Ranks per node for the cost model (NVLink inside, network across).
    #[arg(long, default_value_t = 8)]
    ranks_per_node: i64,
}

#[derive(clap::Subcommand)]
enum DistCommand {
    /// Plan a redistribution: the collectives, bytes per link, predicted time, certificate.
    Plan {
        #[command(flatten)]
        spec: Spec,
        /// Write an SVG of the mesh before and after.
        #[arg(long)]
        svg: Option<String>,
        /// Write the certificate (JSON).
        #[arg(long)]
        cert: Option<String>,
    },
    /// Plan, then run the plan cell by cell on the simulated ranks; print what each device holds.
    Sim {
        #[command(flatten)]
        spec: Spec,
    },
    /// Check a peer's plan: DTensor transforms `[(1, Shard(1), Replicate()), ...]`, or a laycert
    /// plan/certificate JSON file.
    Check {
        #[command(flatten)]
        spec: Spec,
        /// DTensor `_TransformInfo` steps as `(mesh_dim, src, dst)` tuples.
        #[arg(long, allow_hyphen_values = true)]
        dtensor_steps: Option<String>,
        /// A plan (JSON, as `plan --cert` writes inside its certificate) to check.
        #[arg(long)]
        plan: Option<String>,
        /// XLA's compiled SPMD program of the resharding (HLO text, as
        /// `jax.jit(f).lower(x).compile().as_text()` prints it) to check.
        #[arg(long)]
        xla_hlo: Option<String>,
    },
    /// Run the certified plan on this machine's GPU through cudarc (every rank's buffers on
    /// GPU 0, the NCCL program's kernels compiled by NVRTC, a one-rank NCCL all-reduce through
    /// cudarc's bindings with NVLS off) and compare every target place.
    Run {
        #[command(flatten)]
        spec: Spec,
        /// Run the same interpreter on host memory instead (no GPU needed).
        #[arg(long)]
        host: bool,
    },
    /// Generate the NCCL program of the plan (CUDA C++, NCCL loaded with dlopen).
    Gen {
        #[command(flatten)]
        spec: Spec,
        /// Output file (.cu).
        #[arg(long, short)]
        out: String,
    },
}

fn bad(msg: impl Into<String>) -> BadInput {
    BadInput {
        message: format!("error: {}", msg.into()),
    }
}

/// Reads a layout in any supported notation.
pub fn read_layout(
    mesh: &Mesh,
    shape: &[i64],
    text: &str,
    flag: &str,
) -> Result<MeshLayout, BadInput> {
    let t = text.trim();
    let r = if t.starts_with('{') || t.starts_with("devices=") || t.starts_with("sharding=") {
        hlo::parse(t).and_then(|s| hlo::to_layout(mesh, shape, &s))
    } else if t.starts_with("P(")
        || t.starts_with("PartitionSpec")
        || t.starts_with("NamedSharding")
        || (!t.starts_with('[') && (t.contains('\'') || t.contains("None")))
    {
        jax::check_named_mesh(t, mesh)
            .and_then(|()| jax::parse_spec(t))
            .and_then(|s| jax::to_layout(mesh, shape, &s))
    } else {
        dtensor::parse_placements(t).and_then(|p| dtensor::to_layout(mesh, shape, &p))
    };
    r.map_err(|e| bad(format!("{flag} {text:?}: {e}")))
}

fn elem_bytes(dtype: &str) -> Result<i64, BadInput> {
    Ok(match dtype {
        "f8" | "fp8" | "e4m3" | "e5m2" | "i8" | "u8" => 1,
        "bf16" | "f16" | "fp16" | "i16" => 2,
        "f32" | "fp32" | "i32" | "u32" => 4,
        "f64" | "i64" => 8,
        _ => {
            return Err(bad(format!(
                "--dtype {dtype:?}: expected f8, bf16, f16, f32, f64, i8, i32, i64"
            )))
        }
    })
}

struct Inputs {
    source: MeshLayout,
    target: MeshLayout,
    opts: PlanOptions,
    bytes: i64,
}

fn inputs(s: &Spec) -> Result<Inputs, BadInput> {
    let mesh = Mesh::parse(&s.mesh).map_err(|e| bad(format!("--mesh {:?}: {e}", s.mesh)))?;
    let to_mesh = match &s.to_mesh {
        Some(m) => Mesh::parse(m).map_err(|e| bad(format!("--to-mesh {m:?}: {e}")))?,
        None => mesh.clone(),
    };
    if to_mesh.size() != mesh.size() {
        return Err(bad(format!(
            "--to-mesh {to_mesh} has {} devices, --mesh {mesh} has {}: a redistribution between different device counts needs a mapping",
            to_mesh.size(),
            mesh.size()
        )));
    }
    let shape = layout::shape::parse_list(&s.shape)
        .map_err(|e| super::input::render(&e, "--shape", &s.shape))?;
    if shape
        .iter()
        .try_fold(1i64, |a, &d| a.checked_mul(d))
        .is_none()
    {
        return Err(bad(format!(
            "--shape {:?}: the element count overflows i64",
            s.shape
        )));
    }
    let source = read_layout(&mesh, &shape, &s.from, "--from")?;
    let target = read_layout(&to_mesh, &shape, &s.to, "--to")?;
    if s.ranks_per_node < 1 {
        return Err(bad("--ranks-per-node must be >= 1"));
    }
    let bytes = elem_bytes(&s.dtype)?;
    let opts = PlanOptions {
        topology: Topology {
            ranks_per_node: s.ranks_per_node,
            ..Topology::default()
        },
        elem_bytes: bytes,
        ..PlanOptions::default()
    };
    Ok(Inputs {
        source,
        target,
        opts,
        bytes,
    })
}

fn describe(l: &MeshLayout) -> String {
    match dtensor::from_layout(l) {
        Ok(p) => dtensor::print_placements(&p),
        Err(_) => jax::print_spec(l)
            .or_else(|_| hlo::from_layout(l))
            .unwrap_or_else(|_| format!("{:?}", l.dims)),
    }
}

fn human_bytes(b: i64) -> String {
    match b {
        b if b >= 1 << 30 => format!("{:.2} GiB", b as f64 / (1u64 << 30) as f64),
        b if b >= 1 << 20 => format!("{:.2} MiB", b as f64 / (1u64 << 20) as f64),
        b if b >= 1 << 10 => format!("{:.2} KiB", b as f64 / 1024.0),
        b => format!("{b} B"),
    }
}

/// Why a subcommand stopped: bad input (exit 2), or valid input for which the planner found no
/// plan within its search (`unknown: no plan found: ...`, exit 3: no plan is no proof that
/// none exists).
enum Stop {
    Bad(BadInput),
    NoPlan(String),
}

impl From<BadInput> for Stop {
    fn from(b: BadInput) -> Stop {
        Stop::Bad(b)
    }
}

fn make_plan(i: &Inputs) -> Result<DistPlan, Stop> {
    solver::dist::plan(&i.source, &i.target, &i.opts).map_err(|e| match e {
        solver::dist::DistPlanError::NoPlan(_) => Stop::NoPlan(e.to_string()),
        e => Stop::Bad(bad(e.to_string())),
    })
}

/// The inputs and their plan, refused unless certified (`gen` and `run` act on certified plans
/// only).
fn certified_plan(spec: &Spec, cmd: &str, done: &str) -> Result<(Inputs, DistPlan), Stop> {
    let i = inputs(spec)?;
    let p = make_plan(&i)?;
    if p.certificate.is_none() {
        return Err(Stop::Bad(bad(format!(
            "{cmd}: the plan is {}; only certified plans are {done}",
            verdict(&p)
        ))));
    }
    Ok((i, p))
}

fn verdict(p: &DistPlan) -> String {
    match (&p.certificate, &p.uncertified) {
        (Some(_), _) => "certified".into(),
        (None, Some(r)) => format!("not certified ({r})"),
        (None, None) => "not certified".into(),
    }
}

fn plan_lines(p: &DistPlan, i: &Inputs) -> Vec<String> {
    let recv: i64 = p.max_recv_elems() * i.bytes;
    let mut lines = vec![format!(
        "plan: {} steps, {} bytes received per rank (max), predicted {:.1} us, {}",
        p.moves.len(),
        recv,
        p.time_s * 1e6,
        verdict(p)
    )];
    lines.push(format!(
        "from {} to {} on {} ({} devices), shape {:?}",
        describe(&p.source),
        describe(&p.target),
        p.source.mesh,
        p.source.mesh.size(),
        p.source.shape
    ));
    lines.push(i.opts.topology.describe());
    for (k, m) in p.moves.iter().enumerate() {
        lines.push(format!(
            "  {}. {:<44} {:>12} per rank ({}, {} total)  {:.1} us  -> {}",
            k + 1,
            m.text,
            human_bytes(m.recv_elems * i.bytes),
            m.link,
            human_bytes(m.total_elems * i.bytes),
            m.time_s * 1e6,
            describe(&m.after)
        ));
    }
    if let Some(c) = &p.certificate {
        lines.push(format!(
            "certificate: {} ranks, {} target places checked, decided on {}{}{}, digest {}",
            c.ranks,
            c.places_checked,
            c.decided_on,
            if c.boxes_rechecked {
                ", re-checked on boxes"
            } else {
                ""
            },
            if c.cells_rechecked {
                " and re-checked cell by cell"
            } else {
                ""
            },
            &c.digest[..16]
        ));
    }
    lines
}

fn plan_json(p: &DistPlan, i: &Inputs) -> serde_json::Value {
    json!({
        "steps": p.moves.iter().map(|m| json!({
            "move": m.text, "recv_bytes_per_rank": m.recv_elems * i.bytes,
            "total_bytes": m.total_elems * i.bytes, "link": m.link, "time_us": m.time_s * 1e6,
            "after": describe(&m.after)})).collect::<Vec<_>>(),
        "recv_bytes_per_rank": p.max_recv_elems() * i.bytes,
        "time_us": p.time_s * 1e6,
        "certified": p.certificate.is_some(),
        "uncertified": p.uncertified,
        "topology": i.opts.topology.describe(),
    })
}

/// Runs a `dist` subcommand.
pub fn run(args: &DistArgs, as_json: bool) -> Result<Report, BadInput> {
    match run_or_stop(args, as_json) {
        Ok(r) => Ok(r),
        Err(Stop::Bad(b)) => Err(b),
        Err(Stop::NoPlan(why)) => {
            let mut report = if as_json {
                Report::json(json!({ "verdict": "unknown", "reason": why }))
            } else {
                Report::ok(vec![format!("unknown: {why}")])
            };
            report.code = 3;
            Ok(report)
        }
    }
}

fn run_or_stop(args: &DistArgs, as_json: bool) -> Result<Report, Stop> {
    match &args.what {
        DistCommand::Plan { spec, svg, cert } => {
            let i = inputs(spec)?;
            let p = make_plan(&i)?;
            if let Some(path) = svg {
                let text = svg_of(&[("before", &p.source), ("after", &p.target)]);
                std::fs::write(path, text).map_err(|e| bad(format!("--svg {path}: {e}")))?;
            }
            if let Some(path) = cert {
                let c = p
                    .certificate
                    .as_ref()
                    .ok_or_else(|| bad(format!("--cert: the plan is {}", verdict(&p))))?;
                let text = serde_json::to_string(c).map_err(|e| bad(e.to_string()))?;
                std::fs::write(path, text).map_err(|e| bad(format!("--cert {path}: {e}")))?;
            }
            if as_json {
                return Ok(Report::json(plan_json(&p, &i)));
            }
            Ok(Report::ok(plan_lines(&p, &i)))
        }
        DistCommand::Sim { spec } => {
            let i = inputs(spec)?;
            let p = make_plan(&i)?;
            // The cell simulator alone, whatever decided the certificate.
            let c = match certify::dist::simulate_plan(&p.source, &p.target, &p.plan) {
                Ok(c) => c,
                Err(e) => return Ok(dist_error(&e, None, as_json)),
            };
            if as_json {
                let devices: Vec<_> = (0..p.source.mesh.size().min(64))
                    .map(|r| {
                        json!({
                            "rank": r, "coords": p.source.mesh.coords(r),
                            "holds_before": held_boxes(&p.source, r),
                            "holds_after": held_boxes(&p.target, r),
                        })
                    })
                    .collect();
                return Ok(Report::json(json!({
                    "verdict": "certified", "ranks": c.ranks, "places_checked": c.places_checked,
                    "plan": plan_json(&p, &i), "devices": devices,
                })));
            }
            let mut lines = vec![format!(
                "simulated: {} ranks, {} places checked, certified",
                c.ranks, c.places_checked
            )];
            for r in 0..p.source.mesh.size().min(64) {
                lines.push(format!(
                    "  device {r} {:?}: holds {} -> {}",
                    p.source.mesh.coords(r),
                    held(&p.source, r),
                    held(&p.target, r)
                ));
            }
            Ok(Report::ok(lines))
        }
        DistCommand::Check {
            spec,
            dtensor_steps,
            plan,
            xla_hlo,
        } => {
            let i = inputs(spec)?;
            let mut xla = None;
            let lowered = match (dtensor_steps, plan, xla_hlo) {
                (None, None, Some(path)) => {
                    let text = super::input::read_bounded(path, "--xla-hlo", MAX_FILE_BYTES)?;
                    let x = solver::dist::xla::lower_xla(&text, &i.source, &i.target)
                        .map_err(|e| bad(format!("--xla-hlo {path}: {e}")))?;
                    let plan = x.plan.clone();
                    xla = Some((x, i.bytes));
                    plan
                }
                (Some(steps), None, None) => {
                    let src =
                        dtensor::from_layout(&i.source).map_err(|e| bad(format!("--from: {e}")))?;
                    let tr = parse_transforms(steps)?;
                    let dims = i.source.mesh.ndim();
                    if let Some((k, (d, _, _))) = tr.iter().enumerate().find(|(_, t)| t.0 >= dims) {
                        return Err(bad(format!(
                            "--dtensor-steps: step {k}: mesh dim {d} does not exist (the mesh has \
                             {dims})"
                        ))
                        .into());
                    }
                    let dst = dtensor::from_layout(&i.target).ok();
                    match peer::lower_dtensor_to(
                        &i.source.mesh,
                        &i.source.shape,
                        &src,
                        dst.as_deref(),
                        &tr,
                        &i.opts,
                    ) {
                        Ok((plan, _, _)) => plan,
                        Err(e) => {
                            let e = certify::dist::DistError::Unknown(e.to_string());
                            return Ok(dist_error(&e, None, as_json));
                        }
                    }
                }
                (None, Some(path), None) => {
                    let text = super::input::read_bounded(path, "--plan", MAX_FILE_BYTES)?;
                    match serde_json::from_str::<certify::dist::Plan>(&text) {
                        Ok(plan) if plan.ranks != i.source.mesh.size() => {
                            return Err(bad(format!(
                                "--plan {path}: a plan over {} ranks, --mesh {} has {} devices",
                                plan.ranks,
                                i.source.mesh,
                                i.source.mesh.size()
                            ))
                            .into())
                        }
                        Ok(plan) => plan,
                        Err(e) => {
                            let c = serde_json::from_str::<certify::dist::DistCertificate>(&text)
                                .map_err(|_| {
                                bad(format!("--plan {path}: not a plan or certificate: {e}"))
                            })?;
                            // A certificate is checked as one: for the layouts given, and its own
                            // evidence re-derived, not just its plan re-decided.
                            for (flag, mine, theirs) in [
                                ("--from", &i.source, &c.source),
                                ("--to", &i.target, &c.target),
                            ] {
                                if mine != theirs {
                                    return Err(bad(format!(
                                        "--plan {path}: the certificate's {} layout is not the \
                                         {flag} given",
                                        if flag == "--from" { "source" } else { "target" }
                                    ))
                                    .into());
                                }
                            }
                            if let Err(e) = certify::dist::check_certificate(&c) {
                                let why = e.why_invalid();
                                let mut r = if as_json {
                                    Report::json(json!({ "verdict": "invalid", "reason": why }))
                                } else {
                                    Report::ok(vec![format!(
                                        "invalid: the certificate does not re-check: {why}"
                                    )])
                                };
                                r.code = 1;
                                return Ok(r);
                            }
                            c.plan
                        }
                    }
                }
                _ => {
                    return Err(bad(
                        "check: give exactly one of --dtensor-steps, --plan and --xla-hlo",
                    )
                    .into())
                }
            };
            let xla = xla.as_ref().map(|(x, bytes)| (x, *bytes));
            Ok(
                match certify::dist::certify_plan(&i.source, &i.target, &lowered) {
                    Ok(c) if as_json => Report::json(json!({
                        "verdict": "certified", "steps": lowered.steps.len(), "ranks": c.ranks,
                        "places_checked": c.places_checked, "xla": xla.map(xla_json),
                    })),
                    Ok(c) => Report::ok(
                        std::iter::once(format!(
                            "certified: {} steps, {} ranks, {} places checked",
                            lowered.steps.len(),
                            c.ranks,
                            c.places_checked
                        ))
                        .chain(xla.map(xla_lines).unwrap_or_default())
                        .collect(),
                    ),
                    Err(e) => dist_error(&e, xla, as_json),
                },
            )
        }
        DistCommand::Run { spec, host } => {
            let (_, p) = certified_plan(spec, "run", "run")?;
            let run = if *host {
                codegen::nccl_run::run_on_host(&p.plan, &p.source, &p.target)
            } else {
                codegen::nccl_run::run_on_gpu(&p.plan, &p.source, &p.target)
            };
            let r = match run {
                Ok(r) => r,
                Err(codegen::CodegenError::NoCudaDevice(why)) => {
                    return Ok(super::gpu::skipped(&why, as_json))
                }
                Err(e) => return Err(bad(format!("run: {e}")).into()),
            };
            if as_json {
                let mut report = Report::json(json!({
                    "correct": r.wrong == 0, "steps": r.steps, "ranks": r.ranks,
                    "device": r.device, "places_checked": r.places_checked, "wrong": r.wrong,
                    "first_wrong": r.first_wrong.map(|(rank, id, got, want)| json!({
                        "rank": rank, "element": id, "got": got, "want": want })),
                    "nccl": (!r.nccl.is_empty()).then_some(&r.nccl),
                }));
                report.code = u8::from(r.wrong > 0);
                return Ok(report);
            }
            let mut lines = vec![match r.first_wrong {
                None => format!(
                    "ran: {} steps, {} ranks on {}, {} places checked, 0 wrong",
                    r.steps, r.ranks, r.device, r.places_checked
                ),
                Some((rank, id, got, want)) => format!(
                    "WRONG: {} of {} places; first: rank {rank}, element #{id} holds {got}, want {want}",
                    r.wrong, r.places_checked
                ),
            }];
            if !r.nccl.is_empty() {
                lines.push(format!("nccl: {}", r.nccl));
            }
            let mut report = Report::ok(lines);
            if r.wrong > 0 {
                report.code = 1;
            }
            Ok(report)
        }
        DistCommand::Gen { spec, out } => {
            let (i, p) = certified_plan(spec, "gen", "generated")?;
            let prog = codegen::nccl::emit(&p.plan, &p.source, &p.target, i.bytes)
                .map_err(|e| bad(e.to_string()))?;
            std::fs::write(out, &prog.source).map_err(|e| bad(format!("--out {out}: {e}")))?;
            if as_json {
                return Ok(Report::json(json!({
                    "written": out, "steps": p.plan.steps.len(), "kernels": prog.kernels,
                    "validated": true, "plan": plan_json(&p, &i),
                })));
            }
            Ok(Report::ok(vec![format!(
                "generated: {out} ({} steps, {} kernels, validated)",
                p.plan.steps.len(),
                prog.kernels
            )]))
        }
    }
}

/// A refuted or undecided plan: `refuted: ...` (exit 1, then XLA's collectives when the plan
/// was XLA's) or `unknown: ...` (exit 3), or their JSON.
fn dist_error(
    e: &certify::dist::DistError,
    xla: Option<(&solver::dist::xla::XlaPlan, i64)>,
    as_json: bool,
) -> Report {
    use certify::dist::DistError;
    let (mut report, code) = match (e, as_json) {
        (DistError::Refuted(c), true) => (
            Report::json(json!({
                "verdict": "refuted", "counterexample": c, "xla": xla.map(xla_json),
            })),
            1,
        ),
        (DistError::Refuted(c), false) => (
            Report::ok(
                std::iter::once(format!("refuted: {c}"))
                    .chain(xla.map(xla_lines).unwrap_or_default())
                    .collect(),
            ),
            1,
        ),
        (DistError::Unknown(r), true) => (
            Report::json(json!({ "verdict": "unknown", "reason": r })),
            3,
        ),
        (DistError::Unknown(r), false) => (Report::ok(vec![format!("unknown: {r}")]), 3),
    };
    report.code = code;
    report
}

/// XLA's collectives and the bytes each device receives by them (`bytes` per element).
fn xla_lines((x, bytes): (&solver::dist::xla::XlaPlan, i64)) -> Vec<String> {
    let per: Vec<String> = x
        .recv_elems
        .iter()
        .map(|e| (e * bytes).to_string())
        .collect();
    let mut lines = vec![format!(
        "xla: {} collective(s), {} bytes received per rank (max); per device: [{}]",
        x.collectives.len(),
        x.max_recv_elems() * bytes,
        per.join(", ")
    )];
    lines.extend(x.collectives.iter().map(|c| format!("  {c}")));
    lines
}

/// [`xla_lines`] as JSON.
fn xla_json((x, bytes): (&solver::dist::xla::XlaPlan, i64)) -> serde_json::Value {
    json!({
        "collectives": x.collectives,
        "recv_bytes_per_rank": x.max_recv_elems() * bytes,
        "recv_bytes_per_device": x.recv_elems.iter().map(|e| e * bytes).collect::<Vec<_>>(),
    })
}

/// Reads DTensor's transform steps as Python prints the list of `_TransformInfo`s' fields:
/// `[(1, Shard(1), Replicate()), (0, Shard(0), Shard(1))]`, tuples `(mesh_dim, src, dst)`
/// separated by commas (`[]`: no steps). Anything else is an error naming its column.
fn parse_transforms(text: &str) -> Result<Vec<peer::Transform>, BadInput> {
    let cs: Vec<char> = text.chars().collect();
    let fail = |at: usize, want: &str| {
        let found = if at >= cs.len() {
            "the end".to_string()
        } else {
            let s: String = cs[at..].iter().take(24).collect();
            let more = if cs.len() - at > 24 { "..." } else { "" };
            format!("{s:?}{more}")
        };
        bad(format!(
            "--dtensor-steps: expected [(mesh_dim, src, dst), ...]: {want} at column {}, found {found}",
            at + 1
        ))
    };
    let skip_ws = |mut i: usize| {
        while cs.get(i).is_some_and(|c| c.is_whitespace()) {
            i += 1;
        }
        i
    };
    let mut i = skip_ws(0);
    if cs.get(i) != Some(&'[') {
        return Err(fail(i, "`[`"));
    }
    i = skip_ws(i + 1);
    let mut out = Vec::new();
    if cs.get(i) != Some(&']') {
        loop {
            if cs.get(i) != Some(&'(') {
                return Err(fail(i, "a step `(mesh_dim, src, dst)`"));
            }
            // The tuple's closing parenthesis and its top-level commas.
            let (mut depth, mut close, mut commas) = (0usize, None, Vec::new());
            for (k, &c) in cs.iter().enumerate().skip(i) {
                match c {
                    '(' => depth += 1,
                    ')' => {
                        depth -= 1;
                        if depth == 0 {
                            close = Some(k);
                            break;
                        }
                    }
                    ',' if depth == 1 => commas.push(k),
                    _ => {}
                }
            }
            let Some(close) = close else {
                return Err(fail(i, "a step closed by `)`"));
            };
            if commas.len() != 2 {
                return Err(fail(i, "a step of three fields `(mesh_dim, src, dst)`"));
            }
            let field = |a: usize, b: usize| cs[a + 1..b].iter().collect::<String>();
            let dim_text = field(i, commas[0]);
            let dim: usize = dim_text
                .trim()
                .parse()
                .map_err(|_| fail(i + 1, "a mesh dim (0, 1, ...)"))?;
            let placement = |a: usize, b: usize| {
                let t = field(a, b);
                match dtensor::parse_placements(&format!("[{t}]")) {
                    Ok(p) if p.len() == 1 => Ok(p[0].clone()),
                    Ok(_) => Err(fail(a + 1, "one placement")),
                    Err(e) => Err(bad(format!(
                        "--dtensor-steps: the placement at column {}: {e}",
                        skip_ws(a + 1) + 1
                    ))),
                }
            };
            let src = placement(commas[0], commas[1])?;
            let dst = placement(commas[1], close)?;
            out.push((dim, src, dst));
            i = skip_ws(close + 1);
            match cs.get(i) {
                Some(',') => i = skip_ws(i + 1),
                Some(']') => break,
                _ => return Err(fail(i, "`,` or `]`")),
            }
        }
    }
    i = skip_ws(i + 1);
    if i < cs.len() {
        return Err(fail(i, "the end after `]`"));
    }
    Ok(out)
}

/// What device `r` holds: its block, or the list of its boxes under an interleaving strided rule.
fn held(l: &MeshLayout, r: i64) -> String {
    if l.is_boxed() {
        format!("{:?}", l.block(r))
    } else {
        let boxes: Vec<_> = l.pieces(r).into_iter().map(|p| p.0).collect();
        format!("{boxes:?}")
    }
}

/// What device `r` holds as JSON: the list of its boxes, each `[[lo, hi], ...]` per dim.
fn held_boxes(l: &MeshLayout, r: i64) -> serde_json::Value {
    if l.is_boxed() {
        json!([l.block(r)])
    } else {
        json!(l.pieces(r).into_iter().map(|p| p.0).collect::<Vec<_>>())
    }
}

/// An SVG: one panel per layout, one cell per device showing the box of the tensor it holds
/// (first two dims; partial holders drawn hatched).
pub fn svg_of(panels: &[(&str, &MeshLayout)]) -> String {
    let n = panels[0].1.mesh.size().min(256);
    let cols = (n as f64).sqrt().ceil().max(1.0) as i64;
    let rows = (n + cols - 1) / cols;
    let (cw, ch, pad) = (70i64, 70i64, 14i64);
    let pw = cols * (cw + pad) + pad;
    let ph = rows * (ch + pad + 12) + 30;
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" font-family="monospace" font-size="10">"#,
        pw * panels.len() as i64,
        ph
    );
    for (k, (title, l)) in panels.iter().enumerate() {
        let x0 = k as i64 * pw;
        let _ = write!(
            s,
            r#"<text x="{}" y="16" font-size="13">{} {}</text>"#,
            x0 + pad,
            title,
            xml(&describe(l))
        );
        let (h, w) = (
            l.shape[0].max(1),
            l.shape.get(1).copied().unwrap_or(1).max(1),
        );
        for r in 0..n {
            let (cx, cy) = (
                x0 + pad + (r % cols) * (cw + pad),
                30 + (r / cols) * (ch + pad + 12),
            );
            let _ = write!(
                s,
                r#"<rect x="{cx}" y="{cy}" width="{cw}" height="{ch}" fill="white" stroke="black"/>"#
            );
            for (b, _) in l.pieces(r) {
                let (r0, r1) = (b[0].0, b[0].1);
                let (c0, c1) = b.get(1).copied().unwrap_or((0, 1));
                let fill = if l.partial.is_empty() {
                    "#4a90d9"
                } else {
                    "#e8a33d"
                };
                let _ = write!(
                    s,
                    r#"<rect x="{}" y="{}" width="{}" height="{}" fill="{fill}" opacity="0.8"/>"#,
                    cx + c0 * cw / w,
                    cy + r0 * ch / h,
                    ((c1 - c0) * cw / w).max(1),
                    ((r1 - r0) * ch / h).max(1)
                );
            }
            let _ = write!(
                s,
                r#"<text x="{cx}" y="{}">{r} {:?}</text>"#,
                cy + ch + 10,
                l.mesh.coords(r)
            );
        }
    }
    s + "</svg>\n"
}

fn xml(t: &str) -> String {
    t.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}
