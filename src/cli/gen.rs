//! `laycert gen copy --src L --dst L --shape .. --dtype .. [-o kernel.cu]`: plans, certifies
//! and emits a layout-to-layout copy kernel. Without `-o` the kernel text goes to stdout (its
//! header comment carries the plan, the predicted wavefronts and the certificate digest); with
//! `-o` the first line says where it went and the plan summary follows.

use serde_json::json;

use codegen::{emit_copy, CopyKernel};
use solver::{plan_copy, CopyOptions, CopyPlan, Dtype, Traffic};

use super::{input, BadInput, Report};

/// The copy arguments shared by `gen copy` and `gpu bench`.
pub struct CopyArgs<'a> {
    /// Source layout text.
    pub src: &'a str,
    /// Destination layout text.
    pub dst: &'a str,
    /// Shape text (`8192,8192`).
    pub shape: &'a str,
    /// Dtype name.
    pub dtype: &'a str,
    /// Force the unswizzled plan.
    pub no_swizzle: bool,
    /// Bytes of the tile along each axis.
    pub tile_bytes: i64,
    /// Threads per CTA.
    pub threads: Option<i64>,
    /// Most elements per global access.
    pub vector: Option<i64>,
    /// The tile in elements (`F,S`), overriding `tile_bytes`.
    pub tile: Option<&'a str>,
    /// Consecutive CTAs walk the load axis (the default walks the store axis).
    pub load_major: bool,
}

fn bad(what: &str, e: impl std::fmt::Display) -> BadInput {
    BadInput {
        message: format!("error: {what}: {e}"),
    }
}

/// Parses, plans, certifies, emits and validates.
pub fn build(a: &CopyArgs) -> Result<(CopyPlan, CopyKernel), BadInput> {
    let shape = input::shape(Some(a.shape))?.unwrap_or_default();
    let src = input::layout(a.src, Some(&shape)).map_err(|e| BadInput {
        message: format!("{}\n  (in --src)", e.message),
    })?;
    let dst = input::layout(a.dst, Some(&shape)).map_err(|e| BadInput {
        message: format!("{}\n  (in --dst)", e.message),
    })?;
    let dtype = Dtype::parse(a.dtype).map_err(|e| bad("--dtype", e))?;
    let tile = match a.tile {
        None => None,
        Some(t) => {
            let v: Vec<i64> = t
                .split(',')
                .map(|x| x.trim().parse::<i64>())
                .collect::<Result<_, _>>()
                .map_err(|e| bad(&format!("--tile {t:?}"), e))?;
            match v[..] {
                [f, s] => Some([f, s]),
                _ => return Err(bad(&format!("--tile {t:?}"), "give two extents, F,S")),
            }
        }
    };
    let mut opts = CopyOptions {
        tile_bytes: a.tile_bytes,
        threads: a.threads,
        vector: a.vector,
        tile,
        store_major: !a.load_major,
        ..CopyOptions::default()
    };
    if a.no_swizzle {
        opts = opts.without_swizzle();
    }
    let plan = plan_copy(&src, &dst, &shape, dtype, &opts).map_err(|e| bad("the copy plan", e))?;
    let kernel = emit_copy(&plan).map_err(|e| bad("the kernel", e))?;
    Ok((plan, kernel))
}

fn traffic_line(what: &str, t: &Traffic, ctas: i64) -> String {
    format!(
        "predicted shared {what}: {} wavefronts over {} instructions per launch ({:.2} per \
         instruction; ideal {}, conflicts {})",
        t.wavefronts * ctas,
        t.instructions * ctas,
        t.per_instruction(),
        t.ideal * ctas,
        t.conflicts() * ctas
    )
}

/// Why the plan's CTA is not the `--threads` asked for (each phase's threads cover one vector
/// of the tile at most, so a small tile takes fewer), or `None`.
pub fn threads_note(a: &CopyArgs, plan: &CopyPlan) -> Option<String> {
    let asked = a.threads?;
    (asked != plan.threads).then(|| {
        format!(
            "note: --threads {asked} lowered to {}: the {}x{} tile holds {} cells, and every \
             thread moves at least one vector of {} (loads) and {} (stores) elements",
            plan.threads,
            plan.tile[0],
            plan.tile[1],
            plan.tile[0] * plan.tile[1],
            plan.load.vec,
            plan.store.vec
        )
    })
}

/// The plan summary, one fact per line.
pub fn summary(plan: &CopyPlan, kernel: &CopyKernel) -> Vec<String> {
    let ctas = plan.ctas();
    vec![
        format!(
            "plan: tile {}x{} over dims ({}, {}), grid {:?}, {} threads; load vector {} along dim \
             {}, store vector {}",
            plan.tile[0],
            plan.tile[1],
            plan.tile_dims[0],
            plan.tile_dims[1],
            plan.grid,
            plan.threads,
            plan.load.vec,
            plan.tile_dims[0],
            plan.store.vec
        ) + &match &kernel.interior {
            Some(cond) => format!(
                "; ragged edges: accesses guarded by x[{}] < {} and x[{}] < {}, CTAs with {cond} \
                 unguarded",
                plan.tile_dims[0], plan.guard[0], plan.tile_dims[1], plan.guard[1]
            ),
            None => String::new(),
        },
        format!(
            "shared: {} (stores of {}, loads of {} elements; best of {} candidates)",
            plan.smem.layout, plan.smem.store_vec, plan.smem.load_vec, plan.smem.candidates
        ),
        traffic_line("stores", &plan.smem.stores, ctas),
        traffic_line("loads", &plan.smem.loads, ctas),
        format!(
            "validated: {} accesses in {} CTAs and {} points along the logical axes against the \
             layouts; {} tile cells delivered",
            kernel.validation.accesses,
            kernel.validation.ctas,
            kernel.validation.axis_points,
            kernel.validation.cells
        ),
        format!("certificate sha256:{}", plan.certificate.digest),
    ]
}

fn traffic_json(t: &Traffic, ctas: i64) -> serde_json::Value {
    json!({
        "instructions": t.instructions * ctas,
        "wavefronts": t.wavefronts * ctas,
        "ideal": t.ideal * ctas,
        "conflicts": t.conflicts() * ctas,
        "per_instruction": t.per_instruction(),
    })
}

/// The plan as JSON.
pub fn summary_json(plan: &CopyPlan, kernel: &CopyKernel) -> serde_json::Value {
    let ctas = plan.ctas();
    json!({
        "shape": plan.shape,
        "dtype": plan.dtype.name(),
        "src": plan.src_layout.print(),
        "dst": plan.dst_layout.print(),
        "tile": plan.tile,
        "tile_dims": plan.tile_dims,
        "grid": plan.grid,
        "guard": plan.guard,
        "interior": kernel.interior,
        "store_major": plan.store_major,
        "threads": plan.threads,
        "load_tv": plan.load_tv.to_string(),
        "store_tv": plan.store_tv.to_string(),
        "load_vector": plan.load.vec,
        "store_vector": plan.store.vec,
        "smem": plan.smem.layout.to_string(),
        "smem_store_vector": plan.smem.store_vec,
        "smem_load_vector": plan.smem.load_vec,
        "predicted_per_launch": {
            "shared_stores": traffic_json(&plan.smem.stores, ctas),
            "shared_loads": traffic_json(&plan.smem.loads, ctas),
        },
        "validation": kernel.validation,
        "claims": plan.certificate.claims,
        "certificate": format!("sha256:{}", plan.certificate.digest),
    })
}

/// Runs `gen copy`.
pub fn copy(
    a: &CopyArgs,
    out: Option<&str>,
    cert: Option<&str>,
    as_json: bool,
) -> Result<Report, BadInput> {
    let (plan, kernel) = build(a)?;
    if let Some(path) = out {
        std::fs::write(path, &kernel.source).map_err(|e| bad(&format!("-o {path}"), e))?;
    }
    if let Some(path) = cert {
        let c = plan.certificate.movement.as_ref().ok_or_else(|| BadInput {
            message: "error: the plan carries no movement certificate".into(),
        })?;
        std::fs::write(path, c.to_json()).map_err(|e| bad(&format!("--cert {path}"), e))?;
    }
    let note = threads_note(a, &plan);
    if as_json {
        let mut v = summary_json(&plan, &kernel);
        v["kernel"] = json!(kernel.name);
        if let Some(n) = &note {
            v["note"] = json!(n);
        }
        match out {
            Some(path) => v["written"] = json!(path),
            None => v["source"] = json!(kernel.source),
        }
        return Ok(Report::json(v));
    }
    Ok(match out {
        Some(path) => {
            let mut lines = vec![format!(
                "wrote {path}: {} ({} lines), certificate sha256:{}",
                kernel.name,
                kernel.source.lines().count(),
                plan.certificate.digest
            )];
            lines.extend(note);
            lines.extend(summary(&plan, &kernel));
            Report::ok(lines)
        }
        None => Report {
            stdout: kernel.source,
            code: 0,
        },
    })
}
