//! `laycert synth PROGRAM --target sm80|sm90 [--json] [--cert FILE] [--draw DIR]`: synthesizes
//! the thread-value and shared-memory layouts of a tile program and certifies the plan.
//!
//! First line: `synthesized PROGRAM for TARGET: cost C, N claims certified` (exit 0),
//! `infeasible: CONSTRAINT (TENSORS) at line L: WHY` (exit 1: proved, no plan exists), or
//! `unknown: CONSTRAINT (TENSORS) at line L: no plan found in the searched space: WHY` (exit 3:
//! the search found none but did not cover every plan). A malformed program or an unreadable
//! file is bad input (exit 2, the line and operation named on stderr).
//! Then, per tensor its layout (register: CuTe TV and Triton linear form; shared: the layout
//! with its swizzle), per operation its instruction with predicted wavefronts, the inserted
//! rearranges, and the cost.

use serde_json::json;

use solver::synth::{synthesize, Program, SynthError, Target};

use super::{BadInput, Report};
use crate::report::picture::picture;
use crate::report::svg::render;

/// Runs `synth`.
pub fn run(
    path: &str,
    target: &str,
    cert: Option<&str>,
    draw: Option<&str>,
    as_json: bool,
) -> Result<Report, BadInput> {
    let target = Target::parse(target).ok_or_else(|| BadInput {
        message: format!("error: --target {target:?}: expected sm80 or sm90"),
    })?;
    let text = super::input::read_bounded(path, "program", 1 << 20)?;
    let program = Program::parse(&text).map_err(|e| BadInput {
        message: format!("error: {path}: {e}"),
    })?;
    let plan = match synthesize(&program, target) {
        Ok(p) => p,
        Err(e @ (SynthError::Infeasible { .. } | SynthError::NotFound { .. })) => {
            // Infeasible is a proof that no plan exists (exit 1); not found is no verdict: the
            // search did not cover every plan (exit 3).
            let proved = matches!(e, SynthError::Infeasible { .. });
            let mut r = if as_json {
                Report::json(json!({
                    "synthesized": false,
                    "verdict": if proved { "infeasible" } else { "unknown" },
                    "message": e.to_string(),
                }))
            } else {
                Report::ok(vec![e.to_string()])
            };
            r.code = if proved { 1 } else { 3 };
            return Ok(r);
        }
        Err(e @ SynthError::Program { .. }) => {
            return Err(BadInput {
                message: format!("error: {path}: {e}"),
            })
        }
        Err(e) => {
            return Err(BadInput {
                message: format!("error: {path}: {e}"),
            })
        }
    };
    if let Some(file) = cert {
        std::fs::write(file, plan.certificate.to_json()).map_err(|e| BadInput {
            message: format!("error: --cert {file:?}: cannot write: {e}"),
        })?;
    }
    let p = &plan.program;
    let mut drawn = Vec::new();
    if let Some(dir) = draw {
        std::fs::create_dir_all(dir).map_err(|e| BadInput {
            message: format!("error: --draw {dir:?}: cannot create: {e}"),
        })?;
        for t in &plan.certificate.tensors {
            if t.scope == "global" {
                continue;
            }
            let Ok(l) = layout::Layout::parse(&t.layout, None) else {
                continue;
            };
            let shape = (t.scope != "register").then_some(t.shape.as_slice());
            if let Ok(grid) = picture(&l, shape, &format!("{} ({})", t.name, t.layout)) {
                let file = format!("{dir}/{}.svg", t.name);
                std::fs::write(&file, render(&grid)).map_err(|e| BadInput {
                    message: format!("error: --draw: cannot write {file:?}: {e}"),
                })?;
                drawn.push(file);
            }
        }
    }
    let first = format!(
        "synthesized {} for {}: cost {:.0}, {} claims certified",
        program.name,
        target.name(),
        plan.cost,
        plan.certificate.claims.len()
    );
    if as_json {
        let tensors: Vec<_> = p
            .tensors
            .iter()
            .enumerate()
            .map(|(i, t)| {
                json!({
                    "name": t.name,
                    "scope": t.scope.name(),
                    "dtype": t.dtype.name(),
                    "shape": t.shape,
                    "layout": plan.certificate.tensors[i].layout,
                    "linear": plan.tv[i].as_ref().and_then(|f| f.linear()),
                    "swizzle": plan.smem_label.get(&i),
                })
            })
            .collect();
        let ops: Vec<_> = p
            .ops
            .iter()
            .zip(&plan.chosen)
            .map(|(op, o)| {
                json!({
                    "line": op.line,
                    "op": op.kind.name(),
                    "inputs": op.inputs.iter().map(|&i| p.tensors[i].name.clone()).collect::<Vec<_>>(),
                    "output": p.tensors[op.output].name,
                    "instruction": o.instruction,
                    "instructions": o.traffic.instructions,
                    "wavefronts": o.traffic.wavefronts,
                    "ideal_wavefronts": o.traffic.ideal,
                    "sectors": o.traffic.sectors,
                })
            })
            .collect();
        let rearranges: Vec<_> = plan
            .conflicts
            .iter()
            .map(|c| json!({"line": c.line, "op": c.op, "from": c.from, "to": c.to}))
            .collect();
        return Ok(Report::json(json!({
            "synthesized": true,
            "message": first,
            "program": program.name,
            "target": target.name(),
            "cost": plan.cost,
            "registers_per_thread": plan.registers,
            "anchors_explored": plan.explored.0,
            "anchors_feasible": plan.explored.1,
            "tensors": tensors,
            "ops": ops,
            "rearranges": rearranges,
            "claims": plan.certificate.claims.len(),
            "digest": plan.certificate.digest,
            "certificate": cert,
            "drawn": drawn,
        })));
    }
    let mut lines = vec![first, String::new(), "tensors:".into()];
    for (i, t) in p.tensors.iter().enumerate() {
        let layout = &plan.certificate.tensors[i].layout;
        let extra = match (&plan.tv[i], plan.smem_label.get(&i)) {
            (Some(f), _) => format!(
                "\n      linear: {}",
                f.linear().unwrap_or_else(|| "(not F2-linear)".into())
            ),
            (None, Some(label)) => format!("   [{label}]"),
            _ => String::new(),
        };
        lines.push(format!(
            "  {:<10} {:<8} {:<6} {:<12} {layout}{extra}",
            t.name,
            t.scope.name(),
            t.dtype.name(),
            format!("{:?}", t.shape)
        ));
    }
    lines.push(String::new());
    lines.push("operations:".into());
    for (op, o) in p.ops.iter().zip(&plan.chosen) {
        let ins: Vec<&str> = op
            .inputs
            .iter()
            .map(|&i| p.tensors[i].name.as_str())
            .collect();
        let tr = &o.traffic;
        let traffic = if tr.wavefronts > 0 {
            format!(
                "  ({} instr, {} wavefronts, ideal {})",
                tr.instructions, tr.wavefronts, tr.ideal
            )
        } else if tr.sectors > 0 {
            format!("  ({} instr, {} sectors)", tr.instructions, tr.sectors)
        } else {
            format!("  ({} instr)", tr.instructions)
        };
        lines.push(format!(
            "  line {:>3} {:<11} {} -> {}: {}{traffic}",
            op.line,
            op.kind.name(),
            ins.join(", "),
            p.tensors[op.output].name,
            o.instruction
        ));
    }
    lines.push(String::new());
    if plan.conflicts.is_empty() {
        lines.push("rearranges: none".into());
    } else {
        lines.push("rearranges (conflicts resolved through shared memory):".into());
        for c in &plan.conflicts {
            lines.push(format!(
                "  line {} {}: {} re-distributed as {}",
                c.line, c.op, c.from, c.to
            ));
        }
    }
    lines.push(format!(
        "cost: {:.0} (registers per thread {}; anchors explored {}, feasible {})",
        plan.cost, plan.registers, plan.explored.0, plan.explored.1
    ));
    lines.push(format!("certificate sha256:{}", plan.certificate.digest));
    if let Some(file) = cert {
        lines.push(format!("wrote {file}"));
    }
    for f in drawn {
        lines.push(format!("drew {f}"));
    }
    Ok(Report::ok(lines))
}
