//! `laycert bank-conflicts` (one distributed layout against one shared-memory layout, by the
//! simulator and, for F2 memory layouts, lemma 9.4) and `laycert swizzle` (the optimal swizzled
//! layout for a write/read pair). The answer is stdout's first line.

use serde_json::json;

use layout::bank::{lemma_9_4, linear_offsets, max_vector, memory_offsets, simulate, OffsetMap};
use layout::linear::{instruction_tile, Instruction, LinearLayout};
use layout::swizzle_opt::optimal_swizzle;
use layout::Layout;

use super::linear::{dtype_bytes, linear_arg, linear_pair};
use super::{input, BadInput, Report};

/// `laycert bank-conflicts --regs L --smem M --dtype f16 [--vec N] [--shape S]`. A Triton
/// attribute in `--smem` is read on `--shape` when given, else on `--regs`' logical shape.
pub fn bank_conflicts(
    regs: &str,
    smem: &str,
    dtype: &str,
    vec: Option<u32>,
    shape: Option<&str>,
    as_json: bool,
) -> Result<Report, BadInput> {
    let shape = input::shape(shape)?;
    let bytes = dtype_bytes(dtype)?;
    let dist = linear_arg(regs, shape.as_deref(), "--regs")?;
    let logical: Vec<i64> = dist.outs().iter().map(|o| o.size()).collect();
    let mem = input::layout(smem, Some(shape.as_deref().unwrap_or(&logical)))?;
    let render = |e: layout::LayoutError| input::render(&e, "--smem", smem);
    let lin_offsets;
    let other_offsets: Box<OffsetMap<'_>>;
    let offsets: &OffsetMap<'_> = match &mem {
        Layout::Linear(m) => {
            lin_offsets = linear_offsets(m, dist.outs()).map_err(render)?;
            &*lin_offsets
        }
        Layout::Cute(c) => {
            let (c, s) = (c.clone(), logical.clone());
            other_offsets = Box::new(move |x: &[i64]| c.eval(&s, x));
            &*other_offsets
        }
        Layout::Swizzled(c) => {
            let (c, s) = (c.clone(), logical.clone());
            other_offsets = Box::new(move |x: &[i64]| c.eval(&s, x));
            &*other_offsets
        }
        other => {
            return Err(BadInput {
                message: format!(
                    "error: --smem: a shared-memory layout is linear (offset -> logical, a Triton \
                     shared attribute included), CuTe or swizzled CuTe (logical -> offset); \
                     found {} notation",
                    other.notation().name()
                ),
            })
        }
    };
    let vector = match vec {
        None => max_vector(&dist, offsets, bytes).map_err(render)?,
        Some(n) => pick_vector(&dist, offsets, bytes, n)?,
    };
    let rep = simulate(&dist, offsets, bytes, &vector).map_err(render)?;
    let formula = match &mem {
        Layout::Linear(m) => Some(lemma_9_4(&dist, m, bytes, &vector).map_err(render)?),
        _ => None,
    };
    let lowering = match &mem {
        Layout::Linear(m) => Some(instructions(&dist, m, bytes).map_err(render)?),
        _ => None,
    };
    let head = format!(
        "{} wavefronts per instruction (max), {} instructions per warp, {}-byte vectors",
        rep.max_wavefronts(),
        rep.instructions_per_warp,
        rep.access_bytes
    );
    if as_json {
        return Ok(Report::json(json!({
            "summary": head,
            "simulator": rep,
            "lemma_9_4": formula,
            "instructions": lowering,
        })));
    }
    let hist: Vec<String> = rep
        .histogram
        .iter()
        .map(|(w, n)| format!("{n} x {w}"))
        .collect();
    let mut lines = vec![
        head,
        format!("vector: register bits {:?}", rep.vector),
        format!("simulator: instructions x wavefronts {}", hist.join(", ")),
        format!("total wavefronts: {}", rep.total_wavefronts),
    ];
    if let Some(f) = formula {
        let agree = rep.histogram.keys().all(|&w| w == f);
        lines.push(format!(
            "lemma 9.4: {f} per instruction ({})",
            if agree { "agrees" } else { "DISAGREES" }
        ));
    }
    if let Some(l) = lowering {
        let parts: Vec<String> = l
            .iter()
            .map(|(name, ok)| format!("{name} {}", if *ok { "yes" } else { "no" }))
            .collect();
        lines.push(format!("P_Reg L /_l T exists for: {}", parts.join(", ")));
    }
    Ok(Report::ok(lines))
}

/// Which shared-memory instructions lower `mem^-1 ∘ dist` (theorem 5.1: `L /_l T` exists, after
/// a register permutation); `mem^-1` is [`memory_offsets`] (logical -> offset).
fn instructions(
    dist: &LinearLayout,
    mem: &LinearLayout,
    bytes: u32,
) -> Result<Vec<(String, bool)>, layout::LayoutError> {
    let l = memory_offsets(mem)?.compose(dist)?;
    let mut out = Vec::new();
    for (name, instr) in [
        ("ld/st.shared 32-bit", Instruction::Vector { bits: 32 }),
        ("64-bit", Instruction::Vector { bits: 64 }),
        ("128-bit", Instruction::Vector { bits: 128 }),
        ("ldmatrix/stmatrix", Instruction::Ldmatrix),
    ] {
        // An instruction narrower than the element, or ldmatrix of 8-byte elements, does not apply.
        let fits = match instruction_tile(instr, i64::from(bytes)) {
            Ok(_) => l
                .lowers_with_permuted_registers(instr, i64::from(bytes))?
                .is_some(),
            Err(_) => false,
        };
        out.push((name.to_string(), fits));
    }
    Ok(out)
}

/// The first `log2(n)` bits of the widest vector, or an error when `n` is no vector width (a
/// power of two of at most 16 bytes: one access moves at most 16 bytes per lane) or the layouts
/// have no contiguous vector that wide.
fn pick_vector(
    dist: &LinearLayout,
    offsets: &OffsetMap<'_>,
    bytes: u32,
    n: u32,
) -> Result<Vec<usize>, BadInput> {
    if !n.is_power_of_two() || u64::from(n) * u64::from(bytes) > 16 {
        let widths: Vec<String> = (0..=4)
            .map(|k| 1u32 << k)
            .filter(|w| w * bytes <= 16)
            .map(|w| w.to_string())
            .collect();
        let list = match widths.as_slice() {
            [rest @ .., last] if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
            one => one.join(""),
        };
        return Err(BadInput {
            message: format!(
                "error: --vec {n}: invalid vector width: it must be a power of two of at most 16 \
                 bytes per lane: {list} elements of {bytes} byte{}",
                if bytes == 1 { "" } else { "s" }
            ),
        });
    }
    let widest =
        max_vector(dist, offsets, bytes).map_err(|e| input::render(&e, "--vec", &n.to_string()))?;
    let k = n.trailing_zeros() as usize;
    if k > widest.len() {
        let most = 1u32 << widest.len();
        return Err(BadInput {
            message: format!(
                "error: --vec {n}: the widest contiguous vector here has {most} element{}",
                if most == 1 { "" } else { "s" }
            ),
        });
    }
    Ok(widest[..k].to_vec())
}

/// `laycert swizzle --write A --read B --dtype f16`.
pub fn swizzle(
    write: &str,
    read: &str,
    dtype: &str,
    shape: Option<&str>,
    as_json: bool,
) -> Result<Report, BadInput> {
    let bytes = dtype_bytes(dtype)?;
    let (a, b) = linear_pair(write, read, shape, ["--write", "--read"])?;
    let plan = optimal_swizzle(&a, &b, bytes).map_err(|e| input::render(&e, "swizzle", write))?;
    // Confirm the prediction with the simulator before printing it.
    let offs =
        linear_offsets(&plan.memory, a.outs()).map_err(|e| input::render(&e, "swizzle", write))?;
    for (l, side) in [(&a, &plan.write), (&b, &plan.read)] {
        let rep = simulate(l, &*offs, bytes, &side.vector)
            .map_err(|e| input::render(&e, "swizzle", write))?;
        if !side.confirmed_by(&rep) {
            return Err(BadInput {
                message: format!(
                    "laycert: internal error: the simulator counts {:?}, the plan predicts {}",
                    rep.histogram, side.wavefronts_per_instruction
                ),
            });
        }
    }
    let first = plan
        .cute
        .clone()
        .or_else(|| layout::notation::linear::print_attr(&plan.memory).ok())
        .unwrap_or_else(|| layout::notation::linear::print_to_string(&plan.memory));
    let cute = plan.best_cute.clone();
    if as_json {
        return Ok(Report::json(
            json!({ "layout": first, "plan": plan, "best_cute": cute }),
        ));
    }
    let side = |name: &str, s: &layout::swizzle_opt::SidePrediction| {
        format!(
            "{name}: {}-byte vectors (register bits {:?}), {} wavefronts per instruction (ideal \
             {}), {} per warp; confirmed by the simulator",
            s.access_bytes,
            s.vector,
            s.wavefronts_per_instruction,
            s.ideal_per_instruction,
            s.per_warp()
        )
    };
    let mut lines = vec![
        first,
        side("write", &plan.write),
        side("read", &plan.read),
        format!(
            "Idx bits: {}, lemma 9.5 bound: {} ({})",
            plan.idx_bits,
            plan.lemma_9_5_bound,
            if plan.idx_bits <= plan.lemma_9_5_bound {
                "conflict-free choice exists and is taken"
            } else {
                "conflicts are unavoidable"
            }
        ),
        format!(
            "CuTe: {}",
            plan.cute
                .as_deref()
                .unwrap_or("none (not a Sw<B,M,S> of a compact layout)")
        ),
        format!("Triton: {}", plan.triton.as_deref().unwrap_or("none")),
    ];
    if let Some(c) = &cute {
        lines.push(format!(
            "best CuTe swizzle: {}, {} wavefronts in all (this plan: {}; write vector {} B, read \
             vector {} B, {} / {} per instruction)",
            c.layout,
            c.total(),
            plan.write.total() + plan.read.total(),
            c.write.access_bytes,
            c.read.access_bytes,
            c.write.wavefronts_per_instruction,
            c.read.wavefronts_per_instruction
        ));
    }
    lines.extend(
        layout::notation::linear::print_to_string(&plan.memory)
            .lines()
            .map(str::to_string),
    );
    Ok(Report::ok(lines))
}
