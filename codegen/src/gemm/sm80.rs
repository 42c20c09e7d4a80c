//! The sm80 GEMM: a multi-stage `cp.async` pipeline into the synthesized swizzled shared
//! layouts, `ldmatrix.x4` into the synthesized register fragments, `mma.sync.m16n8k16`, and an
//! epilogue staged through a synthesized shared layout with 16-byte coalesced stores (see
//! `sm80_body.cu` for the kernel body, which is the same for every plan).
//!
//! The CTA's tile program ([`tile_program`]) names every layout the kernel uses: the global
//! views of A, B, C (the problem's strides), the shared tiles `a_s`, `b_s` (one pipeline stage)
//! and `h_s` (the epilogue staging tile), and the register tensors `a`, `b` (the mma operand
//! fragments), `c` (the accumulator), `h` (its cast) and `o` (the rows the epilogue stores).
//! Synthesis chooses all of them. Everything plan-dependent in the kernel is derived here from
//! the plan, printed as C expressions, and validated ([`super::validate_sm80`]) before the text
//! is returned:
//!
//! - the register fragment maps: `LC_C_ROW/COL(t, v)` and `LC_O_ROW/COL(t, v)` are the plan's
//!   thread-value layouts of `c` and `o` printed mode by mode; the `ldmatrix` row addresses
//!   `LC_A/B_LDSM_ROW/K(t, g)` are the plan's layouts of `a`/`b` evaluated at the lane whose
//!   fragment starts each 8x8 matrix (group `g` = values `8g .. 8g + 7`);
//! - the shared layouts: `LC_A/B/H_SLIN(r, k)` (the layout before the swizzle) and
//!   `lc_swz_a/b/h(o)` (the swizzle) are the plan's `Sw<B,M,S> o L`;
//! - the load thread map `LC_A/B_CP_ROW/K(t, j)` is synthesis's coalesced copy layout
//!   (cp.async vectors along K, consecutive threads on consecutive vectors: 16 bytes, or the
//!   8 or 4 that rows of an even K not a multiple of 8 allow, [`cp_elems`]), or, where K is
//!   odd so no cp.async can read the rows ([`reg_staged`]), the plan's layouts of the register
//!   tensors `a_r`, `b_r` that stage A and B (2-byte global loads, one 16-byte shared store
//!   per 8-element chunk);
//! - the mma schedule (`LC_LDSM_A/B(g)` and `LC_MMA(ci, ag, ar, bg, br)` lines) is found by
//!   matching the corpus mma atom's A, B, C fragments against the plan's layouts;
//! - the global offsets and guards `LC_A/B/C_GOFF`, `LC_A/B/C_GUARD` are the problem's
//!   row-major layouts and bounds.

use std::fmt::Write as _;

use layout::{CuteLayout, Layout};
use solver::synth::anchor::{coalesced, Tv};
use solver::synth::instr::{Instructions, MmaAtom};
use solver::synth::Plan;

use super::validate::{eval2, show};
use super::validate_sm80::{
    self, parse_ldsm, parse_mma, OperandText, Sm80Fast, Sm80FastCp, Sm80Text,
};
use super::{
    ceil_div, check_capacity_claim, fit_stages, plan_summary, raise_hint, smem_line, GemmConfig,
    GemmKernel, GemmSpec,
};
use crate::c_expr::CExpr;
use crate::error::CodegenError;

/// The kernel body shared by every sm80 plan.
pub const BODY: &str = include_str!("sm80_body.cu");

/// The most stages the default configuration pipelines (fewer where the budget demands).
pub const STAGES: i64 = 4;

fn gemm_err(why: String) -> CodegenError {
    CodegenError::Gemm(why)
}

/// The default configuration: the first of [`tiles`] whose shared memory fits the budget with
/// the most stages (at most [`STAGES`], at least 2) that do. Within sm80's 163 KiB that is the
/// 128 x 256 x 64 tile in 3 stages (CUTLASS's choice for this tile on the A100); within an
/// H100's 227 KiB, in 4.
pub fn choose(spec: &GemmSpec) -> Result<GemmConfig, CodegenError> {
    let list = tiles(spec);
    for &tile in &list {
        let mut c = tile;
        if fit_stages(spec, &mut c, STAGES) {
            return Ok(c);
        }
    }
    let least = list
        .iter()
        .map(|&t| GemmConfig { stages: 2, ..t })
        .min_by_key(smem_bytes)
        .unwrap_or(list[0]);
    Err(gemm_err(format!(
        "no sm80 configuration fits a shared-memory budget of {} bytes: the smallest, 2 stages \
         of the {}x{}x{} tile, needs {}",
        spec.smem_budget(),
        least.bm,
        least.bn,
        least.bk,
        smem_bytes(&least)
    )))
}

/// The tiles the default configuration tries, best first: 128 x 256 x 64 over 8 warps (each a
/// 64 x 64 slice of C in whatever arrangement synthesis picks), grouped tile order, then the
/// same with k-blocks of 32 (half the ring), then 64 x 128 x 32 over 4 warps, which is the
/// only tile when M is at most 64.
pub fn tiles(spec: &GemmSpec) -> Vec<GemmConfig> {
    let small = GemmConfig {
        bm: 64,
        bn: 128,
        bk: 32,
        stages: STAGES,
        consumers: 1,
        cluster: 1,
        group_m: 1,
        splits: 1,
    };
    if spec.m <= 64 {
        return vec![small];
    }
    // bk 64: with LC_PIPELINED the next k-block's first fragments are issued before the
    // last k-step's mma, which needs the last k-step to read groups of its own (at bk 32
    // the two k-steps share every B group); a stage is 48 KiB.
    let large = GemmConfig {
        bm: 128,
        bn: 256,
        bk: 64,
        stages: STAGES,
        consumers: 2,
        cluster: 1,
        group_m: 8,
        splits: 1,
    };
    vec![large, GemmConfig { bk: 32, ..large }, small]
}

/// Threads per CTA on sm80: `consumers` counts groups of four warps.
pub fn threads(c: &GemmConfig) -> i64 {
    128 * c.consumers
}

/// Bytes of one pipeline stage (A then B).
pub fn stage_bytes(c: &GemmConfig) -> i64 {
    (c.bm + c.bn) * c.bk * 2
}

/// Dynamic shared memory: the ring or the epilogue tile, whichever is larger, plus 1 KiB of
/// alignment slack.
pub fn smem_bytes(c: &GemmConfig) -> i64 {
    (c.stages * stage_bytes(c)).max(c.bm * c.bn * 2) + 1024
}

/// Checks a configuration against what the body implements and the shared-memory budget.
pub fn check_config(c: &GemmConfig, budget: i64) -> Result<(), CodegenError> {
    if c.bk != 32 && c.bk != 64 {
        return Err(gemm_err(format!(
            "k-block {}: the sm80 body reads 32 or 64 elements per stage row",
            c.bk
        )));
    }
    if ![64, 128, 256].contains(&c.bm) || ![64, 128, 256].contains(&c.bn) {
        return Err(gemm_err(format!(
            "tile {}x{}: the sm80 body takes 64, 128 or 256 rows and columns",
            c.bm, c.bn
        )));
    }
    if !(1..=2).contains(&c.consumers) {
        return Err(gemm_err(format!(
            "{} groups of 4 warps: the sm80 body runs 4 or 8 warps",
            c.consumers
        )));
    }
    if c.cluster != 1 {
        return Err(gemm_err(format!(
            "cluster {}: the sm80 path has no clusters",
            c.cluster
        )));
    }
    if !(2..=8).contains(&c.stages) || !(1..=64).contains(&c.group_m) {
        return Err(gemm_err(format!(
            "stages {} (2..=8), group-m {} (1..=64)",
            c.stages, c.group_m
        )));
    }
    if smem_bytes(c) > budget {
        return Err(gemm_err(format!(
            "{} stages of {} bytes need {} bytes of shared memory; the budget is {budget}{}",
            c.stages,
            stage_bytes(c),
            smem_bytes(c),
            raise_hint(budget)
        )));
    }
    Ok(())
}

/// [`tile_program`] with `a_s` and `b_s` GIVEN row-major and unswizzled (the bank-conflict
/// baseline: synthesis keeps them and chooses everything else around them).
pub fn tile_program_unswizzled(spec: &GemmSpec, c: &GemmConfig) -> String {
    let t = spec.dtype.name();
    tile_program(spec, c)
        .replace(
            &format!("a_s = shared_tensor({t}, [{}, {}])", c.bm, c.bk),
            &format!(
                "a_s = shared_tensor({t}, [{bm}, {bk}], ({bm},{bk}):({bk},1))",
                bm = c.bm,
                bk = c.bk
            ),
        )
        .replace(
            &format!("b_s = shared_tensor({t}, [{}, {}])", c.bn, c.bk),
            &format!(
                "b_s = shared_tensor({t}, [{bn}, {bk}], ({bn},{bk}):({bk},1))",
                bn = c.bn,
                bk = c.bk
            ),
        )
}

/// True when the rows of A and B are not even 4-byte aligned (K odd): no cp.async (4, 8 or 16
/// bytes) can read them, so the tile program stages A and B through registers
/// (`copy(a_g, a_r)`, `copy(a_r, a_s)`: 2-byte global loads, 16-byte shared stores). An even
/// K not a multiple of 8 keeps the cp.async ring with 4- or 8-byte chunks ([`cp_elems`]).
pub fn reg_staged(spec: &GemmSpec) -> bool {
    spec.k % 2 != 0
}

/// Elements per cp.async chunk: 8 (16 bytes) where K is a multiple of 8, else 4 or 2 (8 or 4
/// bytes), the widest that every row's alignment allows (what synthesis chooses; checked).
pub fn cp_elems(spec: &GemmSpec) -> i64 {
    [8, 4, 2].into_iter().find(|w| spec.k % w == 0).unwrap_or(1)
}

/// The CTA's tile program: global views (the problem's strides), one stage of shared A and B
/// (loaded by cp.async, or through the register tensors `a_r`, `b_r` where
/// [`reg_staged`]), register operand fragments, the accumulator, its cast, the epilogue's
/// shared staging tile and the register rows it stores. Synthesis chooses every layout.
pub fn tile_program(spec: &GemmSpec, c: &GemmConfig) -> String {
    let t = spec.dtype.name();
    let loads = if reg_staged(spec) {
        format!(
            "a_r = register_tensor({t}, [{bm}, {bk}])\n\
             b_r = register_tensor({t}, [{bn}, {bk}])\n\
             copy(a_g, a_r)\n\
             copy(a_r, a_s)\n\
             copy(b_g, b_r)\n\
             copy(b_r, b_s)\n",
            bm = c.bm,
            bn = c.bn,
            bk = c.bk,
        )
    } else {
        "copy(a_g, a_s)\ncopy(b_g, b_s)\n".to_string()
    };
    format!(
        "program laycert_gemm_sm80_{bm}x{bn}x{bk}_{t}\n\
         threads {threads}\n\
         a_g = global_view({t}, [{bm}, {bk}], ({bm},{bk}):({k},1))\n\
         b_g = global_view({t}, [{bn}, {bk}], ({bn},{bk}):({k},1))\n\
         {c_view}\n\
         a_s = shared_tensor({t}, [{bm}, {bk}])\n\
         b_s = shared_tensor({t}, [{bn}, {bk}])\n\
         a = register_tensor({t}, [{bm}, {bk}])\n\
         b = register_tensor({t}, [{bn}, {bk}])\n\
         c = register_tensor(f32, [{bm}, {bn}])\n\
         {loads}\
         copy(a_s, a)\n\
         copy(b_s, b)\n\
         mma(c, a, b)\n\
         h = cast(c, {t})\n\
         h_s = shared_tensor({t}, [{bm}, {bn}])\n\
         copy(h, h_s)\n\
         o = register_tensor({t}, [{bm}, {bn}])\n\
         copy(h_s, o)\n\
         copy(o, c_g)\n",
        c_view = super::c_view(t, spec, c),
        bm = c.bm,
        bn = c.bn,
        bk = c.bk,
        k = spec.k,
        threads = threads(c),
    )
}

// ---------------------------------------------------------------------------------------------
// Printing layouts as C expressions.

/// The digit `x / p % e` of a mixed-radix index `x < total` (`x` must be a name or
/// parenthesized), simplified where `p = 1` or `p e >= total`.
fn digit(x: &str, p: i64, e: i64, total: i64) -> String {
    match (p == 1, p * e >= total) {
        (true, true) => x.to_string(),
        (true, false) => format!("({x} % {e})"),
        (false, true) => format!("({x} / {p})"),
        (false, false) => format!("({x} / {p} % {e})"),
    }
}

fn term(d: String, stride: i64) -> String {
    if stride == 1 {
        d
    } else {
        format!("{d} * {stride}")
    }
}

fn sum(terms: &[String]) -> String {
    if terms.is_empty() {
        "0".into()
    } else {
        terms.join(" + ")
    }
}

/// Row and column terms of flat modes over a column-major `rows`-row tile, indexed by `x`.
fn mode_terms(
    modes: &[(i64, i64)],
    x: &str,
    rows: i64,
    what: &str,
) -> Result<(Vec<String>, Vec<String>), CodegenError> {
    let total: i64 = modes.iter().map(|&(e, _)| e).product();
    let (mut r, mut c) = (Vec::new(), Vec::new());
    let mut p = 1;
    for &(e, s) in modes {
        if e > 1 && s != 0 {
            let (dr, dc) = (s % rows, s / rows);
            if dr != 0 && dc != 0 || dc == 0 && (e - 1) * s >= rows {
                return Err(gemm_err(format!(
                    "{what}: mode {e}:{s} moves along both rows and columns of a {rows}-row tile"
                )));
            }
            let d = digit(x, p, e, total);
            if dc == 0 {
                r.push(term(d, dr));
            } else {
                c.push(term(d, dc));
            }
        }
        p *= e;
    }
    Ok((r, c))
}

/// `(row, col)` expressions of a 2-D thread-value layout at thread `t`, value `v` (names or
/// parenthesized expressions).
pub(crate) fn tv_exprs(
    tv: &Tv,
    t: &str,
    v: &str,
    what: &str,
) -> Result<(String, String), CodegenError> {
    if tv.shape.len() != 2 {
        return Err(gemm_err(format!("{what}: not a 2-D layout")));
    }
    let rows = tv.shape[0];
    let (mut r, mut c) = mode_terms(&tv.threads, t, rows, what)?;
    let (r2, c2) = mode_terms(&tv.values, v, rows, what)?;
    r.extend(r2);
    c.extend(c2);
    Ok((sum(&r), sum(&c)))
}

/// The linear part `L(r, k)` of a 2-D memory layout of `shape`, and the swizzle `sw(o)`, as
/// expressions over the names `r`, `k` (`rname`, `kname`) and `o`.
pub(crate) fn memory_exprs(
    l: &Layout,
    shape: &[i64],
    rname: &str,
    kname: &str,
    what: &str,
) -> Result<(String, String), CodegenError> {
    let (inner, sw): (&CuteLayout, String) = match l {
        Layout::Cute(c) => (c, "o".into()),
        Layout::Swizzled(s) => {
            if s.offset() != 0 {
                return Err(gemm_err(format!(
                    "{what}: a swizzled layout with an offset"
                )));
            }
            let z = s.swizzle();
            let text = if z.bits() == 0 {
                "o".to_string()
            } else if z.shift() > 0 {
                let mask = ((1i64 << z.bits()) - 1) << z.base();
                format!("o ^ ((o >> {}) & {mask})", z.shift())
            } else {
                return Err(gemm_err(format!(
                    "{what}: swizzle {z} moves bits upwards; the body prints right shifts only"
                )));
            };
            (s.layout(), text)
        }
        other => {
            return Err(gemm_err(format!(
                "{what}: {} is not a strided or swizzled layout",
                show(other)
            )))
        }
    };
    let modes = inner.modes();
    if modes.len() != 2 || inner.top_shape() != shape {
        return Err(gemm_err(format!(
            "{what}: {} is not a rank-2 layout of shape {shape:?}",
            show(l)
        )));
    }
    let mut terms = Vec::new();
    for (d, (m, x)) in modes.iter().zip([rname, kname]).enumerate() {
        let flat = m.flat_modes();
        let mut p = 1;
        for (e, s) in flat {
            if e > 1 && s != 0 {
                terms.push(term(digit(x, p, e, shape[d]), s));
            }
            p *= e;
        }
    }
    Ok((sum(&terms), sw))
}

// ---------------------------------------------------------------------------------------------

pub(crate) fn mma_op(plan: &Plan) -> Result<usize, CodegenError> {
    plan.program
        .ops
        .iter()
        .position(|o| o.kind.name() == "mma")
        .ok_or_else(|| gemm_err("the plan has no mma".into()))
}

/// The corpus atom of the plan's mma (the label is `name (warps ...)`).
pub(crate) fn plan_atom(plan: &Plan) -> Result<(String, &'static MmaAtom), CodegenError> {
    let label = &plan.chosen[mma_op(plan)?].instruction;
    let name = label.split(" (warps ").next().unwrap_or(label).to_string();
    let atoms = Instructions::get().map_err(|e| gemm_err(format!("corpus instructions: {e}")))?;
    let atom = atoms
        .mma
        .iter()
        .find(|a| a.name == name)
        .ok_or_else(|| gemm_err(format!("{name:?} is not a corpus instruction")))?;
    if atom.kind != "mma" || atom.shape != [16, 8, 16] || atom.threads != 32 {
        return Err(gemm_err(format!(
            "synthesis chose {name} for the mma; the sm80 body implements mma.sync m16n8k16"
        )));
    }
    Ok((name, atom))
}

pub(crate) fn plan_tv<'a>(plan: &'a Plan, name: &str) -> Result<&'a Tv, CodegenError> {
    let id = plan
        .program
        .tensor(name)
        .ok_or_else(|| gemm_err(format!("the plan has no tensor {name}")))?;
    plan.tv[id]
        .as_ref()
        .ok_or_else(|| gemm_err(format!("the plan has no register layout for {name}")))
}

pub(crate) fn plan_memory<'a>(plan: &'a Plan, name: &str) -> Result<&'a Layout, CodegenError> {
    let id = plan
        .program
        .tensor(name)
        .ok_or_else(|| gemm_err(format!("the plan has no tensor {name}")))?;
    plan.memory[id]
        .as_ref()
        .ok_or_else(|| gemm_err(format!("the plan has no memory layout for {name}")))
}

/// The cp.async cache operator of a chunk of `elems` 2-byte elements: `.cg` (L2 only) takes
/// 16 bytes only, so 4- and 8-byte chunks use `.ca`.
pub(crate) fn cp_cache(elems: i64) -> &'static str {
    if elems == 8 {
        "cg"
    } else {
        "ca"
    }
}

/// The instruction the plan chose for the operation that writes `name`.
pub(crate) fn plan_instruction<'a>(plan: &'a Plan, name: &str) -> Result<&'a str, CodegenError> {
    let id = plan
        .program
        .tensor(name)
        .ok_or_else(|| gemm_err(format!("the plan has no tensor {name}")))?;
    let op = plan
        .program
        .ops
        .iter()
        .position(|o| o.output == id)
        .ok_or_else(|| gemm_err(format!("the plan writes no {name}")))?;
    Ok(plan.chosen[op].instruction.as_str())
}

/// The global load width (elements) of the plan's copy into the staging tensor `name` (`a_r`,
/// `b_r`), one of the body's (`LC_LD_ELEMS`: 1, 2 or 4 two-byte elements), and that the copy
/// out of it is the body's 16-byte `st.shared.v4.b32`.
pub(crate) fn staged_load_elems(plan: &Plan, name: &str) -> Result<i64, CodegenError> {
    let load = plan_instruction(plan, name)?;
    let elems = match load {
        "ld.global.b16" => 1,
        "ld.global.b32" => 2,
        "ld.global.v2.b32" => 4,
        other => {
            return Err(gemm_err(format!(
                "synthesis loads {name} with {other}; the body's staged loads are \
                 ld.global.b16, .b32 or .v2.b32"
            )))
        }
    };
    let shared = &name[..1];
    let store = plan_instruction(plan, &format!("{shared}_s"))?;
    if store != "st.shared.v4.b32" {
        return Err(gemm_err(format!(
            "synthesis stores {name} into {shared}_s with {store}; the body stores 16-byte \
             st.shared.v4.b32 chunks"
        )));
    }
    Ok(elems)
}

fn cell_rc(tv: &Tv, t: i64, v: i64) -> (i64, i64) {
    let x = tv.cell(t, v);
    (x % tv.shape[0], x / tv.shape[0])
}

fn atom_rc(l: &layout::TvLayout, t: i64, v: i64) -> Result<(i64, i64), CodegenError> {
    let c = l.eval(t, v)?;
    Ok((c[0], c[1]))
}

/// The ldmatrix lane substitution: lane `l` of warp `w` supplies the row address of matrix
/// `l / 8`, row `l % 8` of group `g`: the cell of value `8 g + 2 (l / 8)` of the lane `4 (l % 8)`
/// of the same warp (the lane whose fragment register holds that row's first two elements).
const LDSM_T: &str = "(t / 32 * 32 + t % 8 * 4)";
const LDSM_V: &str = "(g * 8 + t % 32 / 8 * 2)";

/// Finds the operand register holding atom value pair `2p, 2p + 1` for thread 0.
fn find_pair(tv: &Tv, want: (i64, i64), what: &str) -> Result<(i64, i64), CodegenError> {
    let nv = tv.nvalues();
    for v in 0..nv {
        if cell_rc(tv, 0, v) == want {
            if v % 2 != 0 {
                break;
            }
            return Ok((v / 8, (v % 8) / 2));
        }
    }
    Err(gemm_err(format!(
        "the plan's {what} fragments hold no register pair starting at {want:?} for thread 0: \
         the mma operand cannot be read from an ldmatrix.x4 group"
    )))
}

/// The mma schedule of one k-block: `LC_LDSM_A(g);`, `LC_LDSM_B(g);`, `LC_MMA(...);` lines,
/// each operand group loaded before the k-step that first uses it (software pipelined one
/// k-step ahead), and one `LC_NEXT_STAGE();` (the cp.async of a later k-block).
fn schedule(c: &GemmConfig, plan: &Plan, atom: &MmaAtom) -> Result<Vec<String>, CodegenError> {
    let (tv_a, tv_b, tv_c) = (
        plan_tv(plan, "a")?,
        plan_tv(plan, "b")?,
        plan_tv(plan, "c")?,
    );
    let (aa, ab) = match (&atom.a, &atom.b) {
        (Some(a), Some(b)) => (a, b),
        _ => {
            return Err(gemm_err(
                "the mma atom reads an operand from shared memory".into(),
            ))
        }
    };
    let steps = c.bk / 16;
    let mut mmas: Vec<Vec<String>> = vec![Vec::new(); steps as usize];
    let mut uses: Vec<(Vec<i64>, Vec<i64>)> = vec![(Vec::new(), Vec::new()); steps as usize];
    let c00 = atom_rc(&atom.c_layout, 0, 0)?;
    for ci in (0..tv_c.nvalues()).step_by(4) {
        let (r, col) = cell_rc(tv_c, 0, ci);
        let (m0, n0) = (r - c00.0, col - c00.1);
        for kk in 0..steps {
            let mut a_regs = Vec::new();
            for p in 0..4 {
                let (i, k) = atom_rc(aa, 0, 2 * p)?;
                a_regs.push(find_pair(tv_a, (m0 + i, 16 * kk + k), "a")?);
            }
            let mut b_regs = Vec::new();
            for p in 0..2 {
                let (j, k) = atom_rc(ab, 0, 2 * p)?;
                b_regs.push(find_pair(tv_b, (n0 + j, 16 * kk + k), "b")?);
            }
            let (ag, ar) = a_regs[0];
            let (bg, br) = b_regs[0];
            let contiguous = a_regs
                .iter()
                .enumerate()
                .all(|(p, &x)| x == (ag, ar + p as i64))
                && b_regs
                    .iter()
                    .enumerate()
                    .all(|(p, &x)| x == (bg, br + p as i64));
            if !contiguous {
                return Err(gemm_err(format!(
                    "the plan's fragments put the mma operands of accumulator value {ci}, k-step \
                     {kk} in non-consecutive registers (A {a_regs:?}, B {b_regs:?})"
                )));
            }
            mmas[kk as usize].push(format!("LC_MMA({ci}, {ag}, {ar}, {bg}, {br});"));
            let u = &mut uses[kk as usize];
            if !u.0.contains(&ag) {
                u.0.push(ag);
            }
            if !u.1.contains(&bg) {
                u.1.push(bg);
            }
        }
    }
    let mut loaded_a: Vec<i64> = Vec::new();
    let mut loaded_b: Vec<i64> = Vec::new();
    let mut lines = Vec::new();
    let mut load = |kk: usize, lines: &mut Vec<String>| {
        for &g in &uses[kk].0 {
            if !loaded_a.contains(&g) {
                loaded_a.push(g);
                lines.push(format!("LC_LDSM_A({g});"));
            }
        }
        for &g in &uses[kk].1 {
            if !loaded_b.contains(&g) {
                loaded_b.push(g);
                lines.push(format!("LC_LDSM_B({g});"));
            }
        }
    };
    load(0, &mut lines);
    for (kk, step) in mmas.iter().enumerate() {
        if kk + 1 < mmas.len() {
            load(kk + 1, &mut lines);
        }
        lines.extend(step.iter().cloned());
        // The next stage's cp.async go out after the first k-step's mma, so the fragment loads
        // and the first mma follow the barrier directly.
        if kk == 0 {
            lines.push("LC_NEXT_STAGE();".into());
        }
    }
    Ok(lines)
}

/// The groups an `LC_MMA(ci, ag, ar, bg, br);` line reads.
fn mma_groups(line: &str) -> Option<[(char, i64); 2]> {
    parse_mma(line).map(|f| [('a', f[1]), ('b', f[3])])
}

/// Software pipelining across k-blocks (CUTLASS's multistage order): the loads of the first
/// k-step's groups leave the top of the k-block for its end, after an `LC_ADVANCE();` (wait
/// for the next k-block, barrier, its stage) placed before the last k-step's mma, so the next
/// block's first fragments are in flight while the last k-step multiplies. Returns
/// (`LC_PRELOAD`, `LC_SCHEDULE`), or no preload where the last k-step reads a group the first
/// one loads (then the loads would overwrite registers still to be read) or there is one k-step.
fn pipeline(lines: Vec<String>) -> (Vec<String>, Vec<String>) {
    let is_mma = |l: &String| l.starts_with("LC_MMA(");
    let Some(first) = lines.iter().position(is_mma) else {
        return (Vec::new(), lines);
    };
    let first_end = lines[first..]
        .iter()
        .position(|l| !is_mma(l))
        .map_or(lines.len(), |i| first + i);
    let last = (0..lines.len())
        .rev()
        .find(|&i| is_mma(&lines[i]) && (i == 0 || !is_mma(&lines[i - 1])))
        .unwrap_or(first);
    let next = lines.iter().position(|l| l == "LC_NEXT_STAGE();");
    let step0: Vec<(char, i64)> = lines[first..first_end]
        .iter()
        .filter_map(|l| mma_groups(l))
        .flatten()
        .collect();
    let tail: Vec<(char, i64)> = lines[last..]
        .iter()
        .filter_map(|l| mma_groups(l))
        .flatten()
        .collect();
    let pre: Vec<String> = lines[..first]
        .iter()
        .filter(|l| parse_ldsm(l).is_some_and(|g| step0.contains(&g)))
        .cloned()
        .collect();
    let sound = last > first
        && next.is_some_and(|n| n < last)
        && pre
            .iter()
            .all(|l| parse_ldsm(l).is_some_and(|g| !tail.contains(&g)));
    if !sound || pre.is_empty() {
        return (Vec::new(), lines);
    }
    let mut body: Vec<String> = lines[..first]
        .iter()
        .filter(|l| !pre.contains(l))
        .cloned()
        .collect();
    body.extend(lines[first..last].iter().cloned());
    body.push("LC_ADVANCE();".into());
    body.extend(pre.iter().cloned());
    body.extend(lines[last..].iter().cloned());
    (pre, body)
}

/// `vals[x]` as a sum of bit terms `(x / 2^b % 2) * c_b` of the index (`vals.len()` a power of
/// two, `vals[0] = 0`), or `None` where no such sum equals it at every index.
fn bit_formula(var: &str, vals: &[i64]) -> Option<String> {
    let n = vals.len();
    if n == 0 || !n.is_power_of_two() || vals[0] != 0 {
        return None;
    }
    let bits = n.trailing_zeros() as usize;
    let c: Vec<i64> = (0..bits).map(|b| vals[1 << b]).collect();
    let fits = (0..n).all(|x| {
        (0..bits)
            .map(|b| if x >> b & 1 == 1 { c[b] } else { 0 })
            .sum::<i64>()
            == vals[x]
    });
    if !fits {
        return None;
    }
    let terms: Vec<String> = (0..bits)
        .filter(|&b| c[b] != 0)
        .map(|b| format!("({var} / {} % 2) * {}", 1i64 << b, c[b]))
        .collect();
    Some(if terms.is_empty() {
        "0".into()
    } else {
        terms.join(" + ")
    })
}

/// One operand's constant offsets: the cp.async ones (shared bytes, global elements:
/// `LC_FAST_ADDR`) and the ldmatrix ones (XOR, bytes: `LC_FAST_LDSM`), each a formula in `j`
/// or `g` whose value is the same on every thread, or `None`. Computed from the printed maps;
/// the validator checks them again.
type FastPair = Option<[String; 2]>;
fn fast_operand(m: &OperandText, nt: i64) -> Result<(FastPair, FastPair), CodegenError> {
    let p = |s: &str| CExpr::parse(s);
    let (lin, swz, goff) = (p(m.slin)?, p(m.swz)?, p(m.goff)?);
    let (cr, ck, lr, lk) = (p(m.cp.0)?, p(m.cp.1)?, p(m.ldsm.0)?, p(m.ldsm.1)?);
    let smem = |r: i64, k: i64| -> Result<i64, CodegenError> {
        let o = eval2(&lin, ("r", r), ("k", k))?;
        Ok(2 * swz.eval_with(&|n| (n == "o").then_some(o))?)
    };
    // One value per index, the same on every thread, or None.
    let uniform = |n: i64,
                   f: &dyn Fn(i64, i64) -> Result<i64, CodegenError>|
     -> Result<Option<Vec<i64>>, CodegenError> {
        let mut out = Vec::new();
        for i in 0..n {
            let v = f(0, i)?;
            for t in 1..nt {
                if f(t, i)? != v {
                    return Ok(None);
                }
            }
            out.push(v);
        }
        Ok(Some(out))
    };
    let cp_at = |t: i64, j: i64| -> Result<(i64, i64), CodegenError> {
        Ok((
            eval2(&cr, ("t", t), ("j", j))?,
            eval2(&ck, ("t", t), ("j", j))?,
        ))
    };
    let sd = uniform(m.chunks, &|t, j| {
        let ((r, k), (r0, k0)) = (cp_at(t, j)?, cp_at(t, 0)?);
        Ok(smem(r, k)? - smem(r0, k0)?)
    })?;
    let gd = uniform(m.chunks, &|t, j| {
        let ((r, k), (r0, k0)) = (cp_at(t, j)?, cp_at(t, 0)?);
        Ok(eval2(&goff, ("r", r), ("k", k))? - eval2(&goff, ("r", r0), ("k", k0))?)
    })?;
    let lo = |t: i64, g: i64| -> Result<i64, CodegenError> {
        smem(
            eval2(&lr, ("t", t), ("g", g))?,
            eval2(&lk, ("t", t), ("g", g))?,
        )
    };
    // Group g = (group 0 ^ x) + d with x one of the XOR masks below 1024 (the stage base's
    // alignment) that makes d uniform.
    let mut xs = Vec::new();
    let mut ds = Vec::new();
    for g in 0..m.groups {
        let mut found = None;
        for x in (0..1024).step_by(16) {
            if let Some(d) = uniform(1, &|t, _| Ok(lo(t, g)? - (lo(t, 0)? ^ x)))? {
                found = Some((x, d[0]));
                break;
            }
        }
        let Some((x, d)) = found else {
            xs.clear();
            break;
        };
        xs.push(x);
        ds.push(d);
    }
    let cp = match (sd, gd) {
        (Some(sd), Some(gd)) => match (bit_formula("j", &sd), bit_formula("j", &gd)) {
            (Some(a), Some(b)) => Some([a, b]),
            _ => None,
        },
        _ => None,
    };
    let ldsm = if xs.len() as i64 == m.groups {
        match (bit_formula("g", &xs), bit_formula("g", &ds)) {
            (Some(c), Some(d)) => Some([c, d]),
            _ => None,
        }
    } else {
        None
    };
    Ok((cp, ldsm))
}

/// `LC_FULL_A(m0, k0)` / `LC_FULL_B(n0, k0)`: whether the operand's tile at row origin `v`
/// and the k-block at `k0` lie inside the problem: one `v < extent - tile + 1` term for each
/// axis the tiles do not divide, `1` where they divide both, `0` where no tile fits.
fn full_tile(axes: [(&str, i64, i64); 2]) -> String {
    if axes.iter().any(|&(_, extent, tile)| extent < tile) {
        return "0".into();
    }
    let terms: Vec<String> = axes
        .into_iter()
        .filter(|&(_, extent, tile)| extent % tile != 0)
        .map(|(v, extent, tile)| format!("{v} < {}", extent - tile + 1))
        .collect();
    if terms.is_empty() {
        "1".into()
    } else {
        terms.join(" && ")
    }
}

/// Constant-offset addressing ([`Sm80Fast`]): the ldmatrix constants on any shape, the
/// cp.async ones wherever loads are cp.async (the body uses them for the operand tiles and
/// k-blocks inside the problem, `LC_FULL_A` / `LC_FULL_B`).
fn fast_addr(
    spec: &GemmSpec,
    c: &GemmConfig,
    text: &Sm80Text,
) -> Result<Option<Sm80Fast>, CodegenError> {
    let ((a_cp, a_ldsm), (b_cp, b_ldsm)) = (
        fast_operand(&text.operand('a'), text.threads)?,
        fast_operand(&text.operand('b'), text.threads)?,
    );
    let (Some([a_ldsm_x, a_ldsm_d]), Some([b_ldsm_x, b_ldsm_d])) = (a_ldsm, b_ldsm) else {
        return Ok(None);
    };
    let cp = match (a_cp, b_cp) {
        // Not with 8-byte chunks (K = 4 mod 8): there the loop holding both the constant and
        // the guarded loads spilled (40 bytes at 255 registers) and ran 9% slower than the
        // guarded loads alone (H200, 4096x4096x4100: 237 against 260 TFLOP/s, bench/gpu
        // README "Session 30"); every other chunk size measured faster with them.
        (Some([a_cp_sd, a_cp_gd]), Some([b_cp_sd, b_cp_gd]))
            if text.ld_elems == 0 && text.chunk != 4 =>
        {
            let full_a = full_tile([("m0", spec.m, c.bm), ("k0", spec.k, c.bk)]);
            let full_b = full_tile([("n0", spec.n, c.bn), ("k0", spec.k, c.bk)]);
            (full_a != "0" || full_b != "0").then_some(Sm80FastCp {
                a_cp_sd,
                a_cp_gd,
                b_cp_sd,
                b_cp_gd,
                full_a,
                full_b,
            })
        }
        _ => None,
    };
    Ok(Some(Sm80Fast {
        cp,
        a_ldsm_x,
        a_ldsm_d,
        b_ldsm_x,
        b_ldsm_d,
    }))
}

/// The plan-dependent text of the kernel for `plan`.
pub fn emitted_text(
    spec: &GemmSpec,
    c: &GemmConfig,
    plan: &Plan,
) -> Result<Sm80Text, CodegenError> {
    let (name, atom) = plan_atom(plan)?;
    let nt = threads(c);
    let (tv_a, tv_b, tv_c, tv_o) = (
        plan_tv(plan, "a")?,
        plan_tv(plan, "b")?,
        plan_tv(plan, "c")?,
        plan_tv(plan, "o")?,
    );
    let (c_row, c_col) = tv_exprs(tv_c, "t", "v", "c")?;
    let (o_row, o_col) = tv_exprs(tv_o, "t", "v", "o")?;
    let (a_ldsm_row, a_ldsm_k) = tv_exprs(tv_a, LDSM_T, LDSM_V, "a")?;
    let (b_ldsm_row, b_ldsm_k) = tv_exprs(tv_b, LDSM_T, LDSM_V, "b")?;
    // The chunk map: synthesis's coalesced cp.async layout of `chunk`-element vectors, or
    // (staged through registers) the plan's layouts of `a_r` and `b_r`, whose values
    // 8j..8j+7 are chunk j.
    let staged = reg_staged(spec);
    let chunk = if staged { 8 } else { cp_elems(spec) };
    let cp = |rows: i64, staging: &str, what: &str| -> Result<(String, String), CodegenError> {
        let j = format!("(j * {chunk})");
        if staged {
            return tv_exprs(plan_tv(plan, staging)?, "t", &j, what);
        }
        // The plan's cp.async instruction is this chunk's: validation item 2 checks it.
        let tv = coalesced(&[rows, c.bk], 1, chunk, nt).ok_or_else(|| {
            gemm_err(format!(
                "no coalesced {chunk}-element copy layout for {what}"
            ))
        })?;
        tv_exprs(&tv, "t", &j, what)
    };
    let (a_cp_row, a_cp_k) = cp(c.bm, "a_r", "a_g -> a_s")?;
    let (b_cp_row, b_cp_k) = cp(c.bn, "b_r", "b_g -> b_s")?;
    let ld_elems = if staged {
        let (a, b) = (
            staged_load_elems(plan, "a_r")?,
            staged_load_elems(plan, "b_r")?,
        );
        if a != b {
            return Err(gemm_err(format!(
                "synthesis loads A {a} and B {b} elements at a time; the body loads both alike"
            )));
        }
        a
    } else {
        0
    };
    let (a_slin, a_swz) = memory_exprs(plan_memory(plan, "a_s")?, &[c.bm, c.bk], "r", "k", "a_s")?;
    let (b_slin, b_swz) = memory_exprs(plan_memory(plan, "b_s")?, &[c.bn, c.bk], "r", "k", "b_s")?;
    let (h_slin, h_swz) = memory_exprs(plan_memory(plan, "h_s")?, &[c.bm, c.bn], "r", "c", "h_s")?;
    let (preload, schedule) = pipeline(schedule(c, plan, atom)?);
    let mut text = Sm80Text {
        mma_instr: name,
        threads: nt,
        a_groups: tv_a.nvalues() / 8,
        b_groups: tv_b.nvalues() / 8,
        acc: tv_c.nvalues(),
        o_values: tv_o.nvalues(),
        ld_elems,
        chunk,
        a_chunks: c.bm * c.bk / chunk / nt,
        b_chunks: c.bn * c.bk / chunk / nt,
        c_row,
        c_col,
        o_row,
        o_col,
        a_ldsm_row,
        a_ldsm_k,
        b_ldsm_row,
        b_ldsm_k,
        a_cp_row,
        a_cp_k,
        b_cp_row,
        b_cp_k,
        a_slin,
        b_slin,
        h_slin,
        a_swz,
        b_swz,
        h_swz,
        a_goff: format!("r * {} + k", spec.k),
        b_goff: format!("r * {} + k", spec.k),
        c_goff: format!("r * {} + c", spec.n),
        a_guard: format!("r < {} && k < {}", spec.m, spec.k),
        b_guard: format!("r < {} && k < {}", spec.n, spec.k),
        c_guard: format!("r < {} && c < {}", spec.m, spec.n),
        schedule,
        preload,
        fast: None,
    };
    text.fast = fast_addr(spec, c, &text)?;
    Ok(text)
}

fn defines(k: &mut String, list: &[(&str, String)]) {
    for (name, v) in list {
        let _ = writeln!(k, "#define {name} {v}");
    }
}

/// Prints the plan-dependent part of the kernel (macros and helpers) for `text`.
pub fn print_text(spec: &GemmSpec, c: &GemmConfig, text: &Sm80Text) -> String {
    let mut k = String::new();
    let tiles_m = ceil_div(spec.m, c.bm);
    let tiles_n = ceil_div(spec.n, c.bn);
    defines(
        &mut k,
        &[
            ("LC_M", spec.m.to_string()),
            ("LC_N", spec.n.to_string()),
            ("LC_K", spec.k.to_string()),
            ("LC_BM", c.bm.to_string()),
            ("LC_BN", c.bn.to_string()),
            ("LC_BK", c.bk.to_string()),
            ("LC_STAGES", c.stages.to_string()),
            ("LC_CONSUMERS", c.consumers.to_string()),
            ("LC_CLUSTER", "1".into()),
            ("LC_GROUP_M", c.group_m.to_string()),
            ("LC_THREADS", text.threads.to_string()),
            ("LC_TILES_M", tiles_m.to_string()),
            ("LC_TILES_N", tiles_n.to_string()),
            ("LC_GRID", (tiles_m * tiles_n).to_string()),
            ("LC_A_STAGE_BYTES", (c.bm * c.bk * 2).to_string()),
            ("LC_STAGE_BYTES", stage_bytes(c).to_string()),
            ("LC_SMEM_BYTES", smem_bytes(c).to_string()),
            ("LC_A_GROUPS", text.a_groups.to_string()),
            ("LC_B_GROUPS", text.b_groups.to_string()),
            ("LC_ACC", text.acc.to_string()),
            ("LC_O_VALUES", text.o_values.to_string()),
            ("LC_A_CHUNKS", text.a_chunks.to_string()),
            ("LC_B_CHUNKS", text.b_chunks.to_string()),
            ("LC_REG_STAGED", i32::from(text.ld_elems != 0).to_string()),
            ("LC_CHUNK", text.chunk.to_string()),
            (
                "LC_LD_ELEMS",
                (if text.ld_elems == 0 {
                    text.chunk
                } else {
                    text.ld_elems
                })
                .to_string(),
            ),
        ],
    );
    let _ = writeln!(
        k,
        "// Accumulator value v of thread t: the plan's layout of c (= h).\n\
         #define LC_C_ROW(t, v) ({})\n#define LC_C_COL(t, v) ({})\n\
         // Epilogue vector v (8 values) of thread t: the plan's layout of o.\n\
         #define LC_O_ROW(t, v) ({})\n#define LC_O_COL(t, v) ({})\n\
         // ldmatrix.x4 group g (operand values 8g..8g+7): the row this lane addresses.\n\
         #define LC_A_LDSM_ROW(t, g) ({})\n#define LC_A_LDSM_K(t, g) ({})\n\
         #define LC_B_LDSM_ROW(t, g) ({})\n#define LC_B_LDSM_K(t, g) ({})\n\
         // Load chunk j (LC_CHUNK elements along k) of thread t: {}.\n\
         #define LC_A_CP_ROW(t, j) ({})\n#define LC_A_CP_K(t, j) ({})\n\
         #define LC_B_CP_ROW(t, j) ({})\n#define LC_B_CP_K(t, j) ({})\n\
         // Shared layouts before the swizzle.\n\
         #define LC_A_SLIN(r, k) ({})\n#define LC_B_SLIN(r, k) ({})\n#define LC_H_SLIN(r, c) ({})\n\
         // Global element offsets and bounds (absolute rows and columns).\n\
         #define LC_A_GOFF(r, k) ({})\n#define LC_B_GOFF(r, k) ({})\n#define LC_C_GOFF(r, c) ({})\n\
         #define LC_A_GUARD(r, k) ({})\n#define LC_B_GUARD(r, k) ({})\n#define LC_C_GUARD(r, c) ({})",
        text.c_row,
        text.c_col,
        text.o_row,
        text.o_col,
        text.a_ldsm_row,
        text.a_ldsm_k,
        text.b_ldsm_row,
        text.b_ldsm_k,
        if text.ld_elems == 0 {
            "the coalesced cp.async layout"
        } else {
            "the plan's layouts of a_r and b_r"
        },
        text.a_cp_row,
        text.a_cp_k,
        text.b_cp_row,
        text.b_cp_k,
        text.a_slin,
        text.b_slin,
        text.h_slin,
        text.a_goff,
        text.b_goff,
        text.c_goff,
        text.a_guard,
        text.b_guard,
        text.c_guard,
    );
    let _ = writeln!(
        k,
        "// The synthesized swizzles (element offsets within one stage / the epilogue tile).\n\
         __device__ __forceinline__ int lc_swz_a(int o) {{ return {}; }}\n\
         __device__ __forceinline__ int lc_swz_b(int o) {{ return {}; }}\n\
         __device__ __forceinline__ int lc_swz_h(int o) {{ return {}; }}",
        text.a_swz, text.b_swz, text.h_swz
    );
    let cvt = spec.dtype.name();
    let _ = writeln!(
        k,
        "// {instr}: d += a b (a: 4 registers, b: 2, d: 4 f32 in the atom's order).\n\
         __device__ __forceinline__ void lc_mma(float& d0, float& d1, float& d2, float& d3, unsigned a0,\n\
         \x20                                      unsigned a1, unsigned a2, unsigned a3, unsigned b0, unsigned b1) {{\n\
         \x20   asm volatile(\"{instr} {{%0, %1, %2, %3}}, {{%4, %5, %6, %7}}, {{%8, %9}}, {{%0, %1, %2, %3}};\"\n\
         \x20                : \"+f\"(d0), \"+f\"(d1), \"+f\"(d2), \"+f\"(d3)\n\
         \x20                : \"r\"(a0), \"r\"(a1), \"r\"(a2), \"r\"(a3), \"r\"(b0), \"r\"(b1));\n\
         }}\n\
         // Two f32 to a packed pair of {cvt} (x at the lower address).\n\
         __device__ __forceinline__ unsigned lc_pack(float x, float y) {{\n\
         \x20   unsigned r;\n\
         \x20   asm(\"cvt.rn.{cvt}x2.f32 %0, %1, %2;\" : \"=r\"(r) : \"f\"(y), \"f\"(x));\n\
         \x20   return r;\n\
         }}",
        instr = text.mma_instr
    );
    let _ = writeln!(
        k,
        "// One k-block: ldmatrix groups and mma.sync in the order the plan's fragments allow\n\
         // (LC_MMA(ci, ag, ar, bg, br): acc[ci..ci+3] += af[ag][ar..ar+3] x bf[bg][br..br+1]).\n\
         #define LC_SCHEDULE \\"
    );
    for line in &text.schedule {
        let _ = writeln!(k, "    {line} \\");
    }
    let _ = writeln!(k, "    /* end of LC_SCHEDULE */");
    let _ = writeln!(
        k,
        "// LC_PIPELINED: LC_PRELOAD (the first k-step's groups) goes out once before the k-loop;\n\
         // LC_SCHEDULE reloads them for the next k-block after its LC_ADVANCE().\n\
         #define LC_PIPELINED {}",
        i32::from(!text.preload.is_empty())
    );
    if !text.preload.is_empty() {
        let _ = writeln!(k, "#define LC_PRELOAD \\");
        for line in &text.preload {
            let _ = writeln!(k, "    {line} \\");
        }
        let _ = writeln!(k, "    /* end of LC_PRELOAD */");
    }
    let cp = text.fast.as_ref().and_then(|f| f.cp.as_ref());
    let _ = writeln!(
        k,
        "// LC_FAST_LDSM: ldmatrix group g at ((stage + group 0) ^ LC_X_LDSM_X(g)) + LC_X_LDSM_D(g)\n\
         // bytes. LC_FAST_ADDR: where LC_FULL_X (X's tile and the k-block lie inside the\n\
         // problem), cp.async chunk j = chunk 0 + LC_X_CP_SD(j) shared bytes and LC_X_CP_GD(j)\n\
         // elements, no guard.\n\
         #define LC_FAST_LDSM {}\n#define LC_FAST_ADDR {}",
        i32::from(text.fast.is_some()),
        i32::from(cp.is_some())
    );
    if let Some(f) = &text.fast {
        let _ = writeln!(
            k,
            "#define LC_A_LDSM_X(g) ({})\n#define LC_A_LDSM_D(g) ({})\n\
             #define LC_B_LDSM_X(g) ({})\n#define LC_B_LDSM_D(g) ({})",
            f.a_ldsm_x, f.a_ldsm_d, f.b_ldsm_x, f.b_ldsm_d
        );
    }
    if let Some(f) = cp {
        let _ = writeln!(
            k,
            "#define LC_A_CP_SD(j) ({})\n#define LC_A_CP_GD(j) ({})\n\
             #define LC_B_CP_SD(j) ({})\n#define LC_B_CP_GD(j) ({})\n\
             #define LC_FULL_A(m0, k0) ({})\n#define LC_FULL_B(n0, k0) ({})",
            f.a_cp_sd, f.a_cp_gd, f.b_cp_sd, f.b_cp_gd, f.full_a, f.full_b
        );
    }
    k
}

fn host_launcher() -> &'static str {
    r#"
#ifdef LAYCERT_HOST_LAUNCHER
// Host launcher for nvcc builds (`nvcc -arch=sm_80 (or sm_90a) -DLAYCERT_HOST_LAUNCHER -shared`):
// one CTA per C tile, LC_GRID CTAs.
#include <cuda_runtime.h>
static int lc_configured = 0;
extern "C" int laycert_gemm_launch(const void* A, const void* B, void* C, void* stream) {
    if (!lc_configured) {
        if (cudaFuncSetAttribute(laycert_gemm, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 LC_SMEM_BYTES)) return 3000;
        lc_configured = 1;
    }
    laycert_gemm<<<LC_GRID, LC_THREADS, LC_SMEM_BYTES, (cudaStream_t)stream>>>(
        (const lc_elem*)A, (const lc_elem*)B, (lc_elem*)C);
    return (int)cudaGetLastError();
}
extern "C" int laycert_gemm_grid() { return LC_GRID; }
#endif
"#
}

/// The header comment: problem, configuration, plan, layouts, certificate digest.
pub(crate) fn header(title: &str, plan: &Plan, lines: &[String], validation_line: &str) -> String {
    let mut k = String::new();
    let _ = writeln!(k, "{title}");
    for l in lines {
        let _ = writeln!(k, "// {l}");
    }
    let _ = writeln!(
        k,
        "// Synthesized plan ({}; certificate digest {}):",
        plan.program.name, plan.certificate.digest
    );
    for line in plan_summary(plan) {
        let _ = writeln!(k, "//   {line}");
    }
    for (id, l) in plan.memory.iter().enumerate() {
        if let Some(l) = l {
            let t = &plan.program.tensors[id];
            if t.scope.name() == "shared" {
                let _ = writeln!(k, "//   shared {} = {}", t.name, show(l));
            }
        }
    }
    // The bank model's prediction per tile-program instance (one CTA k-block for the main
    // loop's copies, one CTA tile for the epilogue's): bench/gpu/ncu_conflicts.py compares it
    // with Nsight Compute's counters.
    for (i, op) in plan.program.ops.iter().enumerate() {
        let tr = &plan.chosen[i].traffic;
        if tr.wavefronts > 0 {
            let _ = writeln!(
                k,
                "// predicted: {} -> {}: {} instructions, {} shared wavefronts (ideal {})",
                op.kind.name(),
                plan.program.tensors[op.output].name,
                tr.instructions,
                tr.wavefronts,
                tr.ideal
            );
        }
    }
    for (id, tv) in plan.tv.iter().enumerate() {
        if let Some(tv) = tv {
            let t = &plan.program.tensors[id];
            let m = |v: &[(i64, i64)]| {
                v.iter()
                    .map(|(e, s)| format!("{e}:{s}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let _ = writeln!(
                k,
                "//   register {} {:?}: threads ({}) values ({})",
                t.name,
                tv.shape,
                m(&tv.threads),
                m(&tv.values)
            );
        }
    }
    let _ = writeln!(k, "// {validation_line}");
    k
}

/// Emits the sm80 kernel for a synthesized plan.
pub fn emit(
    spec: &GemmSpec,
    c: &GemmConfig,
    plan: &Plan,
    swizzle: bool,
) -> Result<GemmKernel, CodegenError> {
    check_capacity_claim(plan, smem_bytes(c), spec.smem_budget())?;
    let text = emitted_text(spec, c, plan)?;
    let validation = validate_sm80::validate_sm80(spec, c, plan, &text)?;
    let elem = spec.dtype.name();
    let mut k = header(
        &format!(
            "// laycert gemm (sm80): C[{m},{n}] = A[{m},{k}] * B[{n},{k}]^T, {elem} operands, f32 \
             accumulation, {elem} C.",
            m = spec.m,
            n = spec.n,
            k = spec.k
        ),
        plan,
        &[
            format!(
                "Global layouts: A ({m},{k}):({k},1)  B ({n},{k}):({k},1)  C ({m},{n}):({n},1).",
                m = spec.m,
                n = spec.n,
                k = spec.k
            ),
            format!(
                "CTA: {}x{}x{} tile, {} warps, {} cp.async stages, group-M {}, {} CTAs.",
                c.bm,
                c.bn,
                c.bk,
                threads(c) / 32,
                c.stages,
                c.group_m,
                ceil_div(spec.m, c.bm) * ceil_div(spec.n, c.bn)
            ),
            smem_line(
                smem_bytes(c),
                &format!(
                    "{} stages of {} bytes; the epilogue tile, {} bytes, reuses them; 1024 bytes \
                     of alignment slack",
                    c.stages,
                    stage_bytes(c),
                    c.bm * c.bn * 2
                ),
                "sm80",
                spec.smem_budget(),
                spec.target.smem_limit(),
            ),
        ],
        &format!(
            "Translation validation: {} accumulator cells, {} operand fragment cells (ldmatrix \
             model from the corpus atoms), {} mma k-steps, {} global offsets, {} guard points, \
             {} shared-memory cells.",
            validation.accumulator_cells,
            validation.fragment_cells,
            validation.mma_products,
            validation.global_offsets,
            validation.guard_points,
            validation.smem_cells
        ),
    );
    let _ = writeln!(k, "\ntypedef unsigned short lc_elem;  // {elem} bits");
    // Every index macro's parameters parenthesized (checked: the same expressions).
    k += &crate::c_expr::hygienic_defines(&print_text(spec, c, &text))?;
    k += "\n";
    k += super::PTX_SM80;
    k += BODY;
    k += host_launcher();
    let (source, cert) = super::bind_gemm(&plan.certificate, spec, c, swizzle, &k)?;
    Ok(GemmKernel {
        spec: *spec,
        config: *c,
        source,
        entry: "laycert_gemm",
        digest: cert.digest.clone(),
        plan_summary: plan_summary(plan),
        threads: threads(c),
        smem_bytes: smem_bytes(c),
        validation,
        certificate_json: cert.to_json(),
        note: None,
    })
}
