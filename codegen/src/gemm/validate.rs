//! Translation validation of a GEMM kernel's plan-dependent text.
//!
//! Every expression below is the exact text printed into the kernel, parsed back by
//! [`crate::c_expr`] and evaluated; the references are the layouts, evaluated by `layout`, and
//! two small models written from the PTX ISA and the CUDA driver documentation (not from the
//! plan or the emitter):
//!
//! - **accumulator**: `LC_ACC_ROW(tid, i)`, `LC_ACC_COL(tid, i)` equal the corpus's wgmma C
//!   atom (CUTLASS `CLayout_64xN`) at every (thread, register) of a warpgroup, and, tiled over
//!   the consumer warpgroups (64 rows each), the plan's synthesized layout of `c` at every
//!   (thread, value) of the CTA;
//! - **C offsets**: `LC_C_OFFSET` is a sum of terms each reading one of `row`, `col`, and
//!   equals C's global layout along each full axis (so everywhere); the plan's global view of
//!   a tile equals C's layout shifted to the tile origin;
//! - **guard**: `LC_STORE_GUARD` is a conjunction of terms each reading one coordinate and
//!   equals "inside (M, N)" along each axis of the padded box the grid covers;
//! - **shared memory**: for A and B, at every cell of a stage, the byte the TMA writes
//!   (`CU_TENSOR_MAP_SWIZZLE_128B`/`64B`: 16-byte chunk `c` of box row `r` lands at chunk
//!   `c ^ (r % 8)` / `c ^ ((r / 2) % 4)`,
//!   per box, each cluster rank's box of B at its own offset) equals the byte the wgmma
//!   descriptor reads (the descriptor's LBO/SBO/mode fields decoded from the emitted constant;
//!   the canonical K-major layout `start + (r / 8) SBO + (r % 8) W + 2 k`, then the swizzle of
//!   the address's 16-byte chunk bits by bits 7-9 (7-8 for 64 bytes)), which equals 2 x the
//!   plan's shared layout.

use serde::Serialize;
use solver::synth::instr::Instructions;
use solver::synth::Plan;

use layout::Layout;

use super::{ceil_div, GemmConfig, GemmSpec};
use crate::c_expr::CExpr;
use crate::error::CodegenError;

/// The plan-dependent expressions as printed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EmittedText {
    /// Accumulator row of register `i` of thread `tid` in a warpgroup's 64-row slice.
    pub acc_row: String,
    /// Accumulator column.
    pub acc_col: String,
    /// Global element offset of C at `row`, `col`.
    pub c_offset: String,
    /// The store guard over `row`, `col`.
    pub store_guard: String,
    /// The descriptor's constant fields (a hex literal with `ull`).
    pub descriptor: String,
    /// First k-block of `split`.
    pub kb_begin: String,
    /// One past the last k-block of `split`, before clamping to the k-blocks.
    pub kb_end: String,
    /// Workspace word of register `i` of consumer `thread` for (`tile`, `split`).
    pub ws_index: String,
    /// First word (of a tile's partial) that `split` reduces.
    pub red_begin: String,
}

/// What was checked.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct GemmValidation {
    /// (thread, register) pairs compared with the atom and the plan.
    pub accumulator_cells: u64,
    /// Global offsets compared with C's layout.
    pub global_offsets: u64,
    /// Guard evaluations compared with the bounds.
    pub guard_points: u64,
    /// Split-K k-blocks and workspace words checked.
    pub split_points: u64,
    /// Shared-memory cells where TMA, descriptor and plan agree.
    pub smem_cells: u64,
    /// Operand fragment values whose source cell was followed through the load model
    /// (ldmatrix, dequantization) and compared with the plan (sm80 and W4A16 paths).
    pub fragment_cells: u64,
    /// (thread, accumulator value, k-step) triples checked against the mma atom's product
    /// (sm80 and W4A16 paths).
    pub mma_products: u64,
}

fn fail(why: String) -> CodegenError {
    CodegenError::Validation(why)
}

pub(crate) fn eval2(e: &CExpr, a: (&str, i64), b: (&str, i64)) -> Result<i64, CodegenError> {
    e.eval_with(&|name| {
        if name == a.0 {
            Some(a.1)
        } else if name == b.0 {
            Some(b.1)
        } else {
            None
        }
    })
}

pub(crate) fn memory_offset(l: &Layout, shape: &[i64], coord: &[i64]) -> Result<i64, CodegenError> {
    Ok(match l {
        Layout::Cute(c) => c.eval(shape, coord)?,
        Layout::Swizzled(s) => s.eval(shape, coord)?,
        other => {
            return Err(fail(format!(
                "{} is not a strided or swizzled layout",
                show(other)
            )))
        }
    })
}

/// A layout as text (CuTe and swizzled layouts print their notation).
pub fn show(l: &Layout) -> String {
    match l {
        Layout::Cute(c) => c.to_string(),
        Layout::Swizzled(s) => s.to_string(),
        other => format!("{other:?}"),
    }
}

fn tensor(plan: &Plan, name: &str) -> Result<usize, CodegenError> {
    plan.program
        .tensor(name)
        .ok_or_else(|| fail(format!("the plan has no tensor {name}")))
}

/// Decoded descriptor fields: (LBO bytes, SBO bytes, layout type).
pub fn decode_descriptor(text: &str) -> Result<(i64, i64, u64), CodegenError> {
    let hex = text
        .trim()
        .trim_end_matches("ull")
        .strip_prefix("0x")
        .ok_or_else(|| fail(format!("descriptor constant {text:?} is not a hex literal")))?;
    let v = u64::from_str_radix(hex, 16)
        .map_err(|e| fail(format!("descriptor constant {text:?}: {e}")))?;
    if v & 0x3FFF != 0 {
        return Err(fail(format!(
            "descriptor constant {text:?} sets start-address bits"
        )));
    }
    let lbo = ((v >> 16) & 0x3FFF) as i64 * 16;
    let sbo = ((v >> 32) & 0x3FFF) as i64 * 16;
    let base_offset = (v >> 49) & 7;
    if base_offset != 0 {
        return Err(fail(format!(
            "descriptor base offset {base_offset}: the model assumes 1024-byte aligned stages"
        )));
    }
    Ok((lbo, sbo, v >> 62))
}

/// The byte a canonical K-major GMMA descriptor with a `w`-byte swizzle (layout type 1: 128,
/// 2: 64) addresses for row `r`, element `k` (2-byte elements), relative to a 1024-byte aligned
/// base: 8-row core groups `SBO` apart, rows `w` bytes apart, then the address swizzle (the
/// 16-byte chunk bits 4.. XOR the row-group bits 7..).
fn descriptor_byte(start: i64, sbo: i64, w: i64, r: i64, k: i64) -> i64 {
    let addr = start + (r / 8) * sbo + (r % 8) * w + 2 * k;
    addr ^ (((addr >> 7) & (w / 16 - 1)) << 4)
}

/// The byte a SWIZZLE_`w`B TMA box (rows of `w` bytes, row-major in the box) writes for its row
/// `r`, element `k`: the 16-byte chunk of byte `b` moves to chunk `(b / 16) ^ (row bits)`, the
/// row bits being `r % 8` for 128-byte rows and `(r / 2) % 4` for 64-byte rows.
fn tma_byte(box_base: i64, w: i64, r: i64, k: i64) -> i64 {
    let b = 2 * k;
    let row_bits = if w == 128 { r % 8 } else { (r / 2) % 4 };
    box_base + r * w + (((b / 16) ^ row_bits) * 16) + b % 16
}

/// Validates the sm90 kernel's text against the plan and the layouts.
pub fn validate_sm90(
    spec: &GemmSpec,
    c: &GemmConfig,
    plan: &Plan,
    text: &EmittedText,
) -> Result<GemmValidation, CodegenError> {
    let mut v = GemmValidation::default();
    let row_e = CExpr::parse(&text.acc_row)?;
    let col_e = CExpr::parse(&text.acc_col)?;
    let regs = c.bn / 2;

    // Accumulator against the corpus atom of the chosen instruction.
    let mma = plan
        .program
        .ops
        .iter()
        .position(|o| o.kind.name() == "mma")
        .ok_or_else(|| fail("the plan has no mma".into()))?;
    let label = &plan.chosen[mma].instruction;
    // The label is the corpus name followed by the warp arrangement, `name (warps 2x1)`.
    let instr = label.split(" (warps ").next().unwrap_or(label);
    let atoms = Instructions::get().map_err(|e| fail(format!("corpus instructions: {e}")))?;
    let atom = atoms
        .mma
        .iter()
        .find(|a| a.name == instr)
        .ok_or_else(|| fail(format!("{instr:?} is not a corpus instruction")))?;
    if atom.shape != [64, c.bn, 16] || atom.threads != 128 || atom.c_layout.values() != regs {
        return Err(fail(format!(
            "{instr}: atom shape {:?}, {} threads, {} values; the body needs 64x{}x16 over 128 threads",
            atom.shape,
            atom.threads,
            atom.c_layout.values(),
            c.bn
        )));
    }
    let mut kernel_cell = vec![(0i64, 0i64); (128 * regs) as usize];
    for t in 0..128 {
        for i in 0..regs {
            let r = eval2(&row_e, ("tid", t), ("i", i))?;
            let col = eval2(&col_e, ("tid", t), ("i", i))?;
            let want = atom.c_layout.eval(t, i)?;
            if want != [r, col] {
                return Err(fail(format!(
                    "accumulator of thread {t}, register {i}: the kernel reads ({r}, {col}), the \
                     atom {instr} holds {want:?}"
                )));
            }
            kernel_cell[(t * regs + i) as usize] = (r, col);
            v.accumulator_cells += 1;
        }
    }
    // ... and against the plan's layout of c, tiled over the consumer warpgroups.
    let cid = tensor(plan, "c")?;
    let tv = plan.tv[cid]
        .as_ref()
        .ok_or_else(|| fail("the plan has no register layout for c".into()))?;
    if tv.nthreads() != 128 * c.consumers || tv.nvalues() != regs || tv.shape != [c.bm, c.bn] {
        return Err(fail(format!(
            "the plan's c has {} threads x {} values over {:?}; the kernel runs {} consumer \
             threads x {regs} registers over [{}, {}]",
            tv.nthreads(),
            tv.nvalues(),
            tv.shape,
            128 * c.consumers,
            c.bm,
            c.bn
        )));
    }
    for t in 0..128 * c.consumers {
        for i in 0..regs {
            let (r, col) = kernel_cell[((t % 128) * regs + i) as usize];
            let r = r + (t / 128) * 64;
            let cell = tv.cell(t, i);
            if cell != r + c.bm * col {
                return Err(fail(format!(
                    "consumer thread {t}, register {i}: the kernel stores cell ({r}, {col}), the \
                     plan's c holds ({}, {})",
                    cell % c.bm,
                    cell / c.bm
                )));
            }
            v.accumulator_cells += 1;
        }
    }

    // C's global offsets: one term per coordinate, checked along each full axis.
    let c_layout = Layout::parse(&format!("({},{}):({},1)", spec.m, spec.n, spec.n), None)?;
    let shape = [spec.m, spec.n];
    let off = CExpr::parse(&text.c_offset)?;
    for term in off.summands() {
        if term.vars().len() > 1 {
            return Err(fail(format!(
                "the C offset term {term:?} reads more than one coordinate"
            )));
        }
    }
    for (axis, ext) in [(0usize, spec.m), (1, spec.n)] {
        for x in 0..ext {
            let coord = if axis == 0 { [x, 0] } else { [0, x] };
            let got = eval2(&off, ("row", coord[0]), ("col", coord[1]))?;
            let want = memory_offset(&c_layout, &shape, &coord)?;
            if got != want {
                return Err(fail(format!(
                    "C offset at {coord:?}: the kernel writes {got}, C's layout says {want}"
                )));
            }
            v.global_offsets += 1;
        }
    }
    let cg = tensor(plan, "c_g")?;
    let view = plan.program.tensors[cg]
        .layout
        .clone()
        .ok_or_else(|| fail("the plan's c_g has no layout".into()))?;
    let (rows, cols) = (c.bm.min(spec.m), c.bn.min(spec.n));
    for r in 0..rows {
        for col in 0..cols {
            let tile = memory_offset(&view, &[c.bm, c.bn], &[r, col])?;
            let whole = memory_offset(&c_layout, &shape, &[r, col])?;
            if tile != whole {
                return Err(fail(format!(
                    "the plan's view of a C tile maps ({r}, {col}) to {tile}, C's layout to {whole}"
                )));
            }
            v.global_offsets += 1;
        }
    }

    // The guard: inside (M, N) along each axis of the padded box.
    let guard = CExpr::parse(&text.store_guard)?;
    for term in guard.conjuncts() {
        if term.vars().len() > 1 {
            return Err(fail(format!(
                "the guard term {term:?} reads more than one coordinate"
            )));
        }
    }
    let padded_m = ceil_div(ceil_div(spec.m, c.bm), c.cluster) * c.cluster * c.bm;
    let padded_n = ceil_div(spec.n, c.bn) * c.bn;
    for (axis, ext, bound) in [(0usize, padded_m, spec.m), (1, padded_n, spec.n)] {
        for x in 0..ext {
            let coord = if axis == 0 { [x, 0] } else { [0, x] };
            let got = eval2(&guard, ("row", coord[0]), ("col", coord[1]))? != 0;
            if got != (x < bound) {
                return Err(fail(format!(
                    "the store guard at {coord:?} is {got}, the bound says {}",
                    x < bound
                )));
            }
            v.guard_points += 1;
        }
    }

    // Split-K: the ranges tile the k-blocks, each split non-empty; the workspace index is a
    // bijection of (tile, split, thread, register group) onto 16-byte aligned words inside
    // the workspace (checked on the first and last tile, and by its stride along tiles).
    let kblocks = c.kblocks(spec);
    let begin = CExpr::parse(&text.kb_begin)?;
    let end = CExpr::parse(&text.kb_end)?;
    let at = |e: &CExpr, split: i64| e.eval_with(&|n| (n == "split").then_some(split));
    let mut next = 0;
    for split in 0..c.splits {
        let (b, e) = (at(&begin, split)?, at(&end, split)?.min(kblocks));
        if b != next || b >= e {
            return Err(fail(format!(
                "split {split} covers k-blocks [{b}, {e}); the previous split ended at {next}"
            )));
        }
        next = e;
        v.split_points += (e - b) as u64;
    }
    if next != kblocks {
        return Err(fail(format!(
            "the splits cover k-blocks [0, {next}) of {kblocks}"
        )));
    }
    if c.splits > 1 {
        let ws = CExpr::parse(&text.ws_index)?;
        let threads = 128 * c.consumers;
        let tiles = c.tiles(spec) / c.cluster;
        let words = c.workspace_floats(spec);
        let idx = |tile: i64, split: i64, thread: i64, i: i64| {
            ws.eval_with(&|n| match n {
                "tile" => Some(tile),
                "split" => Some(split),
                "thread" => Some(thread),
                "i" => Some(i),
                _ => None,
            })
        };
        let per_tile = c.splits * threads * regs;
        for tile in [0, tiles - 1] {
            let mut seen = vec![false; per_tile as usize];
            for split in 0..c.splits {
                for thread in 0..threads {
                    for i in (0..regs).step_by(4) {
                        let w = idx(tile, split, thread, i)?;
                        let local = w - tile * per_tile;
                        if w % 4 != 0 || w + 3 >= words || !(0..per_tile).contains(&local) {
                            return Err(fail(format!(
                                "workspace word {w} of tile {tile}, split {split}, thread {thread}, \
                                 register {i}: outside tile {tile}'s 16-byte aligned block of \
                                 {per_tile} words (workspace {words})"
                            )));
                        }
                        for j in 0..4 {
                            let slot = &mut seen[(local + j) as usize];
                            if *slot {
                                return Err(fail(format!(
                                    "workspace word {} written twice in tile {tile}",
                                    w + j
                                )));
                            }
                            *slot = true;
                        }
                        v.split_points += 1;
                    }
                }
            }
        }
        // The reduction slices tile one split's partial, 16-byte aligned.
        let red = CExpr::parse(&text.red_begin)?;
        let words_per = c.reduce_words();
        let partial = threads * regs;
        for split in 0..c.splits {
            let b = at(&red, split)?;
            if b != split * words_per || b % 4 != 0 || words_per % 4 != 0 {
                return Err(fail(format!(
                    "split {split} reduces words from {b}; the slices of {words_per} words must \
                     tile the {partial}-word partial in order"
                )));
            }
            v.split_points += 1;
        }
        if words_per * c.splits != partial {
            return Err(fail(format!(
                "{} slices of {words_per} words do not cover the {partial}-word partial",
                c.splits
            )));
        }
        if tiles > 1 && idx(1, 0, 0, 0)? - idx(0, 0, 0, 0)? != per_tile {
            return Err(fail(
                "the workspace stride along tiles is not one tile's block".into(),
            ));
        }
    }

    // Shared memory: TMA writes = descriptor reads = 2 x the plan's layout.
    let w = c.bk * 2;
    if w != 128 && w != 64 {
        return Err(fail(format!(
            "k-block {}: the TMA models cover rows of 128 or 64 bytes",
            c.bk
        )));
    }
    let (_lbo, sbo, mode) = decode_descriptor(&text.descriptor)?;
    let want_mode = if w == 128 { 1 } else { 2 };
    if mode != want_mode {
        return Err(fail(format!(
            "descriptor layout type {mode}: the kernel's TMA writes the {w}-byte swizzle (type {want_mode})"
        )));
    }
    for (name, rows, boxes) in [("a_s", c.bm, 1), ("b_s", c.bn, c.cluster)] {
        let id = tensor(plan, name)?;
        let l = plan.memory[id]
            .clone()
            .ok_or_else(|| fail(format!("the plan has no shared layout for {name}")))?;
        let box_rows = rows / boxes;
        for r in 0..rows {
            for k in 0..c.bk {
                let (rank, rl) = (r / box_rows, r % box_rows);
                let tma = tma_byte(rank * box_rows * w, w, rl, k);
                // The consumer reading this cell: warpgroup r / 64 for A (all of B), k-step k / 16.
                let start = if name == "a_s" { (r / 64) * 64 * w } else { 0 } + (k / 16) * 32;
                let rr = if name == "a_s" { r % 64 } else { r };
                let desc = descriptor_byte(start, sbo, w, rr, k % 16);
                let plan_b = 2 * memory_offset(&l, &[rows, c.bk], &[r, k])?;
                if tma != desc || desc != plan_b {
                    return Err(fail(format!(
                        "{name} cell ({r}, {k}): TMA writes byte {tma}, the wgmma descriptor \
                         reads byte {desc}, the plan's layout {} puts it at byte {plan_b}",
                        show(&l)
                    )));
                }
                v.smem_cells += 1;
            }
        }
    }
    Ok(v)
}
