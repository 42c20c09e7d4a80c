//! Translation validation of the sm80 GEMM kernel's plan-dependent text.
//!
//! [`validate_sm80`] takes the text exactly as [`super::sm80`] prints it ([`Sm80Text`]),
//! parses every expression with [`crate::c_expr`] and evaluates it; the references are the
//! plan's layouts (evaluated by `layout` / [`Tv::cell`]), the problem's row-major layouts, and
//! two instruction models read from the corpus, never from the plan or the emitter:
//! `ldmatrix.x4` (CUTLASS `SM75_U32x4_LDSM_N` source and destination layouts: lane `l`'s
//! address supplies source elements `src(l, 0..8)`, thread `T`'s value `v` receives the
//! element `dst(T, v)`, values `2i, 2i + 1` in register `i`), and the mma atom of the plan's
//! instruction (A, B, C fragment layouts, `mma.sync.m16n8k16`). What is checked, on every
//! thread of the CTA and every value:
//!
//! 1. **shared layouts**: `lc_swz_X(LC_X_SLIN(r, k))` equals the plan's layout of `a_s`,
//!    `b_s`, `h_s` at every cell (so the offset map is injective and inside one stage);
//! 2. **loads**: chunk `j` of thread `t` (`LC_A/B_CP_ROW/K`) is values `cj .. cj + c - 1`
//!    (`c` = `LC_CHUNK`) of
//!    synthesis's coalesced copy layout (`solver::synth::anchor::coalesced`, the map its
//!    traffic prediction scored) for the cp.async, or, where K is odd
//!    (`LC_REG_STAGED`), of the plan's layout of the staging tensor `a_r` / `b_r`, whose load
//!    (`ld.global.b16`, `.b32`, `.v2.b32`: `LC_LD_ELEMS` 1, 2, 4) and 16-byte store are the
//!    body's; where K is even but not a multiple of 8 the cp.async chunks are `LC_CHUNK` = 4
//!    or 2 elements (8 or 4 bytes) and the plan's instruction is that cp.async; the chunk
//!    starts on a boundary of its size in shared memory, its cells are
//!    consecutive elements there and in global memory (`LC_A/B_GOFF`), every global load is
//!    aligned to its size in every row, and the chunks of all threads cover the stage exactly
//!    once; the guard is uniform over every load;
//! 3. **ldmatrix**: for every group `g` the row addresses the lanes supply
//!    (`LC_A/B_LDSM_ROW/K`, the swizzle) are 16-byte aligned, and through the ldmatrix model
//!    every (thread, register, half) receives exactly the cell the plan's layout of `a` / `b`
//!    assigns to value `8g + 2i + half`;
//! 4. **mma**: the schedule issues the next stage's cp.async exactly once and loads every
//!    group once per k-block before any mma reads it; for
//!    every `LC_MMA(ci, ag, ar, bg, br)` and warp, the cells the A registers hold are the
//!    atom's A fragment shifted by one (row, k) origin, the B registers the atom's B fragment
//!    shifted by one (col, k) origin with the same k, and accumulator values `ci..ci+3` of
//!    every thread are the atom's C fragment at (row, col) origin, which is the plan's layout
//!    of `c`; every accumulator value receives each k-step of the block exactly once, and the
//!    plan's `c` holds every cell of the tile exactly once, so one k-block adds exactly
//!    `A_tile B_tile^T`;
//! 5. **epilogue**: `LC_C_ROW/COL(t, v)` is the plan's `c` (and `h = cast(c)` has `c`'s
//!    layout); pairs `(v, v + 1)` are adjacent columns stored as one 4-byte word at the plan's
//!    `h_s` offset; `LC_O_ROW/COL(t, v)` is the plan's `o`, each group of 8 values is 8
//!    consecutive, 16-byte aligned elements of `h_s` and of C, and the reads cover `h_s`
//!    exactly once;
//! 6. **global memory**: `LC_A/B/C_GOFF` are sums of one-coordinate terms equal to the
//!    row-major layouts of A (M, K), B (N, K), C (M, N) along each full axis (so everywhere),
//!    and the plan's global views of a tile are those layouts at the tile origin;
//!    `LC_A/B/C_GUARD` are conjunctions of one-coordinate terms equal to the bounds along each
//!    axis of the padded grid; the 16-byte stores are used only when N is a multiple of 8;
//! 7. **constant offsets**: on every thread, ldmatrix group `g`'s byte is
//!    `(group 0's ^ LC_X_LDSM_X(g)) + LC_X_LDSM_D(g)` with `LC_X_LDSM_X(g)` below 1024 while
//!    every stage and `b_s` start on 1024 bytes (so the XOR never touches the stage base)
//!    (`LC_FAST_LDSM`, any shape); and, with full-tile addressing (`LC_FAST_ADDR`, cp.async
//!    loads; it drops the guards), `LC_FULL_A(m0, k0)` / `LC_FULL_B(n0, k0)` hold exactly on
//!    the operand tiles and k-blocks inside the problem (so every dropped guard would have
//!    held), and there cp.async chunk `j`'s shared byte is chunk 0's plus `LC_X_CP_SD(j)` and
//!    its global element chunk 0's plus `LC_X_CP_GD(j)` plus the k-block's k (at the first and
//!    last such tile origin and k-block; the offsets are affine, item 6).
//!
//! With `LC_PIPELINED` (item 4): the `LC_PRELOAD` groups count as loaded when a k-block starts;
//! the schedule's one `LC_ADVANCE()` comes after `LC_NEXT_STAGE()` (so its wait for
//! `LC_STAGES - 2` pending groups covers k-block `kb + 1`), the loads after it are exactly the
//! preloaded groups, and no mma after it reads one of them.

use std::collections::{BTreeMap, HashMap};

use layout::{Layout, TvLayout};
use solver::synth::anchor::{coalesced, Tv};
use solver::synth::Plan;

use super::sm80::{
    cp_cache, plan_atom, plan_instruction, plan_memory, plan_tv, reg_staged, staged_load_elems,
};
use super::validate::{eval2, memory_offset, show, GemmValidation};
use super::{ceil_div, GemmConfig, GemmSpec};
use crate::c_expr::CExpr;
use crate::error::CodegenError;

/// The plan-dependent text of the sm80 kernel, exactly as printed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sm80Text {
    /// The mma instruction printed into the `asm` (the corpus name).
    pub mma_instr: String,
    /// `LC_THREADS`.
    pub threads: i64,
    /// `LC_A_GROUPS`: ldmatrix.x4 groups of A per k-block.
    pub a_groups: i64,
    /// `LC_B_GROUPS`.
    pub b_groups: i64,
    /// `LC_ACC`: accumulator values per thread.
    pub acc: i64,
    /// `LC_O_VALUES`: epilogue values per thread.
    pub o_values: i64,
    /// `LC_LD_ELEMS` where `LC_REG_STAGED` (K odd: each 8-element chunk is read with global
    /// loads of this many elements, 1, 2 or 4, and stored to shared memory with one 16-byte
    /// store); 0: cp.async chunks.
    pub ld_elems: i64,
    /// `LC_CHUNK`: elements per chunk (8 staged; cp.async 8, 4 or 2: 16, 8 or 4 bytes).
    pub chunk: i64,
    /// `LC_A_CHUNKS`: chunks of A per thread and stage.
    pub a_chunks: i64,
    /// `LC_B_CHUNKS`.
    pub b_chunks: i64,
    /// `LC_C_ROW(t, v)`.
    pub c_row: String,
    /// `LC_C_COL(t, v)`.
    pub c_col: String,
    /// `LC_O_ROW(t, v)`.
    pub o_row: String,
    /// `LC_O_COL(t, v)`.
    pub o_col: String,
    /// `LC_A_LDSM_ROW(t, g)`.
    pub a_ldsm_row: String,
    /// `LC_A_LDSM_K(t, g)`.
    pub a_ldsm_k: String,
    /// `LC_B_LDSM_ROW(t, g)`.
    pub b_ldsm_row: String,
    /// `LC_B_LDSM_K(t, g)`.
    pub b_ldsm_k: String,
    /// `LC_A_CP_ROW(t, j)`.
    pub a_cp_row: String,
    /// `LC_A_CP_K(t, j)`.
    pub a_cp_k: String,
    /// `LC_B_CP_ROW(t, j)`.
    pub b_cp_row: String,
    /// `LC_B_CP_K(t, j)`.
    pub b_cp_k: String,
    /// `LC_A_SLIN(r, k)`.
    pub a_slin: String,
    /// `LC_B_SLIN(r, k)`.
    pub b_slin: String,
    /// `LC_H_SLIN(r, c)`.
    pub h_slin: String,
    /// Body of `lc_swz_a(o)`.
    pub a_swz: String,
    /// Body of `lc_swz_b(o)`.
    pub b_swz: String,
    /// Body of `lc_swz_h(o)`.
    pub h_swz: String,
    /// `LC_A_GOFF(r, k)`.
    pub a_goff: String,
    /// `LC_B_GOFF(r, k)`.
    pub b_goff: String,
    /// `LC_C_GOFF(r, c)`.
    pub c_goff: String,
    /// `LC_A_GUARD(r, k)`.
    pub a_guard: String,
    /// `LC_B_GUARD(r, k)`.
    pub b_guard: String,
    /// `LC_C_GUARD(r, c)`.
    pub c_guard: String,
    /// The lines of `LC_SCHEDULE`.
    pub schedule: Vec<String>,
    /// The lines of `LC_PRELOAD` (`LC_PIPELINED`; empty: the k-loop without it). The body
    /// issues them once before the k-loop; `LC_SCHEDULE` then holds one `LC_ADVANCE();` (wait
    /// for the next k-block, barrier, switch to its stage) followed by the same loads, the
    /// next k-block's first fragments, issued before the last k-step's mma.
    pub preload: Vec<String>,
    /// Full-tile addressing (`LC_FAST_ADDR`), or `None`.
    pub fast: Option<Sm80Fast>,
}

/// One operand's printed maps (`X` = A or B): what full-tile addressing is derived from and
/// checked against.
pub(crate) struct OperandText<'a> {
    pub slin: &'a str,
    pub swz: &'a str,
    pub goff: &'a str,
    /// `LC_X_CP_ROW`, `LC_X_CP_K`.
    pub cp: (&'a str, &'a str),
    /// `LC_X_LDSM_ROW`, `LC_X_LDSM_K`.
    pub ldsm: (&'a str, &'a str),
    pub chunks: i64,
    pub groups: i64,
}

impl Sm80Text {
    /// Operand `op`'s ('a' or 'b') printed maps.
    pub(crate) fn operand(&self, op: char) -> OperandText<'_> {
        if op == 'a' {
            OperandText {
                slin: &self.a_slin,
                swz: &self.a_swz,
                goff: &self.a_goff,
                cp: (&self.a_cp_row, &self.a_cp_k),
                ldsm: (&self.a_ldsm_row, &self.a_ldsm_k),
                chunks: self.a_chunks,
                groups: self.a_groups,
            }
        } else {
            OperandText {
                slin: &self.b_slin,
                swz: &self.b_swz,
                goff: &self.b_goff,
                cp: (&self.b_cp_row, &self.b_cp_k),
                ldsm: (&self.b_ldsm_row, &self.b_ldsm_k),
                chunks: self.b_chunks,
                groups: self.b_groups,
            }
        }
    }
}

/// Constant-offset addressing. `LC_FAST_LDSM`: a thread's ldmatrix group `g` address is
/// `(stage + group 0's byte offset) ^ LC_X_LDSM_X(g)` plus `LC_X_LDSM_D(g)` bytes (the swizzle's
/// XOR of the k-step, the row block's offset), on any shape, so the k-loop holds one shared
/// address per operand instead of one per group. `LC_FAST_ADDR` ([`Sm80FastCp`], on the operand
/// tiles and k-blocks inside the problem, so no guard): a thread's cp.async chunk `j` is its chunk 0 plus
/// `LC_X_CP_SD(j)` shared bytes and `LC_X_CP_GD(j)` global elements. Every one of these is
/// validated on every thread (module docs, item 7).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sm80Fast {
    /// The cp.async constants (`LC_FAST_ADDR`; not where K is odd), or `None`.
    pub cp: Option<Sm80FastCp>,
    /// `LC_A_LDSM_X(g)`.
    pub a_ldsm_x: String,
    /// `LC_A_LDSM_D(g)`.
    pub a_ldsm_d: String,
    /// `LC_B_LDSM_X(g)`.
    pub b_ldsm_x: String,
    /// `LC_B_LDSM_D(g)`.
    pub b_ldsm_d: String,
}

/// The cp.async constants of full-tile addressing (`LC_FAST_ADDR`, see [`Sm80Fast`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sm80FastCp {
    /// `LC_A_CP_SD(j)`.
    pub a_cp_sd: String,
    /// `LC_A_CP_GD(j)`.
    pub a_cp_gd: String,
    /// `LC_B_CP_SD(j)`.
    pub b_cp_sd: String,
    /// `LC_B_CP_GD(j)`.
    pub b_cp_gd: String,
    /// `LC_FULL_A(m0, k0)`: where it holds, the body loads A's chunks with these constants and
    /// no guard; elsewhere with the guarded per-chunk addresses. Validated to hold exactly on
    /// the tiles and k-blocks inside the problem.
    pub full_a: String,
    /// `LC_FULL_B(n0, k0)`, the same for B.
    pub full_b: String,
}

pub(crate) fn fail(why: String) -> CodegenError {
    CodegenError::Validation(why)
}

/// Cells of a 2-D tile as (row, col).
pub(crate) fn rc(tv: &Tv, t: i64, v: i64) -> (i64, i64) {
    let x = tv.cell(t, v);
    (x % tv.shape[0], x / tv.shape[0])
}

/// A printed shared layout: `swz(lin(r, k))`, checked against the plan at every cell; returns
/// the element offset of every cell (row-major over the tile) and the inverse map.
pub(crate) struct SharedMap {
    /// (rows, cols).
    pub shape: (i64, i64),
    lin: CExpr,
    swz: CExpr,
    names: (&'static str, &'static str),
    /// offset -> (row, col).
    pub inverse: HashMap<i64, (i64, i64)>,
}

impl SharedMap {
    pub(crate) fn new(
        name: &str,
        plan_layout: &Layout,
        shape: (i64, i64),
        lin: &str,
        swz: &str,
        names: (&'static str, &'static str),
        v: &mut GemmValidation,
    ) -> Result<SharedMap, CodegenError> {
        let mut m = SharedMap {
            shape,
            lin: CExpr::parse(lin)?,
            swz: CExpr::parse(swz)?,
            names,
            inverse: HashMap::new(),
        };
        for r in 0..shape.0 {
            for k in 0..shape.1 {
                let got = m.offset(r, k)?;
                let want = memory_offset(plan_layout, &[shape.0, shape.1], &[r, k])?;
                if got != want {
                    return Err(fail(format!(
                        "{name} cell ({r}, {k}): the kernel's swizzle puts it at element {got}, \
                         the plan's layout {} at {want}",
                        show(plan_layout)
                    )));
                }
                if !(0..shape.0 * shape.1).contains(&got) || m.inverse.insert(got, (r, k)).is_some()
                {
                    return Err(fail(format!(
                        "{name}: element {got} (cell ({r}, {k})) is outside the tile or taken twice"
                    )));
                }
                v.smem_cells += 1;
            }
        }
        Ok(m)
    }

    /// The kernel's element offset of cell (r, k).
    pub(crate) fn offset(&self, r: i64, k: i64) -> Result<i64, CodegenError> {
        let o = eval2(&self.lin, (self.names.0, r), (self.names.1, k))?;
        self.swz.eval_with(&|n| (n == "o").then_some(o))
    }

    pub(crate) fn cell(&self, off: i64, what: &str) -> Result<(i64, i64), CodegenError> {
        self.inverse
            .get(&off)
            .copied()
            .ok_or_else(|| fail(format!("{what}: shared element {off} is outside the tile")))
    }
}

/// The ldmatrix.x4 (non-transposed) model from the corpus atoms: for thread `T` and value
/// `v` (register `v / 2`, half `v % 2`), the (lane, element) whose address supplies it.
pub(crate) struct Ldsm {
    map: Vec<(i64, i64)>,
}

impl Ldsm {
    pub(crate) fn corpus() -> Result<Ldsm, CodegenError> {
        let corpus = corpus::Corpus::embedded().map_err(|e| fail(format!("corpus: {e}")))?;
        let get = |name: &str| -> Result<TvLayout, CodegenError> {
            let a = corpus
                .atom(name)
                .ok_or_else(|| fail(format!("corpus atom {name} is missing")))?;
            let text = a
                .recast
                .get(&16)
                .ok_or_else(|| fail(format!("corpus atom {name} has no 16-bit view")))?;
            match Layout::parse(text, None)? {
                Layout::Tv(t) => Ok(t),
                _ => Err(fail(format!("corpus atom {name} is not a TV layout"))),
            }
        };
        let src = get("SM75_U32x4_LDSM_N.src")?;
        let dst = get("SM75_U32x4_LDSM_N.dst")?;
        if src.threads() != 32 || src.values() != 8 || dst.threads() != 32 || dst.values() != 8 {
            return Err(fail("the ldmatrix.x4 atoms are not 32 x 8".into()));
        }
        let mut from = BTreeMap::new();
        for l in 0..32 {
            for e in 0..8 {
                from.insert(src.eval(l, e)?[0], (l, e));
            }
        }
        let mut map = Vec::with_capacity(256);
        for t in 0..32 {
            for v in 0..8 {
                let x = dst.eval(t, v)?[0];
                map.push(
                    *from
                        .get(&x)
                        .ok_or_else(|| fail("ldmatrix atoms do not match".into()))?,
                );
            }
        }
        Ok(Ldsm { map })
    }

    /// (lane, element of its row) supplying value `v` of thread `lane`.
    pub(crate) fn source(&self, lane: i64, v: i64) -> (i64, i64) {
        self.map[(lane * 8 + v) as usize]
    }
}

/// Checks one operand's ldmatrix groups; returns `cells[t][g * 8 + v]` = (row, k) delivered.
#[allow(clippy::too_many_arguments)]
pub(crate) fn check_ldsm(
    what: &str,
    ldsm: &Ldsm,
    smem: &SharedMap,
    tv: &Tv,
    threads: i64,
    groups: i64,
    row_e: &CExpr,
    k_e: &CExpr,
    v: &mut GemmValidation,
) -> Result<Vec<Vec<(i64, i64)>>, CodegenError> {
    if tv.nthreads() != threads || tv.nvalues() != 8 * groups {
        return Err(fail(format!(
            "the plan's {what} has {} threads x {} values; the kernel runs {threads} threads x \
             {groups} ldmatrix.x4 groups of 8",
            tv.nthreads(),
            tv.nvalues()
        )));
    }
    let mut out = vec![vec![(0, 0); (8 * groups) as usize]; threads as usize];
    for w in 0..threads / 32 {
        for g in 0..groups {
            let mut addr = [0i64; 32];
            for (l, a) in addr.iter_mut().enumerate() {
                let t = w * 32 + l as i64;
                let r = eval2(row_e, ("t", t), ("g", g))?;
                let k = eval2(k_e, ("t", t), ("g", g))?;
                if !(0..smem.shape.0).contains(&r) || !(0..smem.shape.1).contains(&k) {
                    return Err(fail(format!(
                        "{what} ldmatrix group {g}, thread {t}: row ({r}, {k}) is outside the tile"
                    )));
                }
                *a = smem.offset(r, k)?;
                if *a % 8 != 0 {
                    return Err(fail(format!(
                        "{what} ldmatrix group {g}, thread {t}: element {a} is not 16-byte aligned"
                    )));
                }
            }
            for l in 0..32 {
                let t = w * 32 + l;
                for x in 0..8 {
                    let (src, e) = ldsm.source(l, x);
                    let got = smem.cell(addr[src as usize] + e, what)?;
                    let want = rc(tv, t, 8 * g + x);
                    if got != want {
                        return Err(fail(format!(
                            "{what} ldmatrix group {g}: thread {t} register {} half {} receives \
                             cell {got:?}, the plan's layout holds {want:?} there",
                            x / 2,
                            x % 2
                        )));
                    }
                    out[t as usize][(8 * g + x) as usize] = got;
                    v.fragment_cells += 1;
                }
            }
        }
    }
    Ok(out)
}

/// `off(r, c)` equals the row-major layout `(rows, cols):(cols, 1)` along each full axis and is
/// a sum of one-coordinate terms (so it equals it everywhere).
pub(crate) fn check_offset(
    what: &str,
    text: &str,
    names: (&str, &str),
    rows: i64,
    cols: i64,
    v: &mut GemmValidation,
) -> Result<(), CodegenError> {
    let e = CExpr::parse(text)?;
    for t in e.summands() {
        if t.vars().len() > 1 {
            return Err(fail(format!(
                "the {what} offset term {t:?} reads more than one coordinate"
            )));
        }
    }
    let layout = Layout::parse(&format!("({rows},{cols}):({cols},1)"), None)?;
    for (axis, ext) in [(0, rows), (1, cols)] {
        for x in 0..ext {
            let coord = if axis == 0 { [x, 0] } else { [0, x] };
            let got = eval2(&e, (names.0, coord[0]), (names.1, coord[1]))?;
            let want = memory_offset(&layout, &[rows, cols], &coord)?;
            if got != want {
                return Err(fail(format!(
                    "{what} offset at {coord:?}: the kernel addresses {got}, the layout {want}"
                )));
            }
            v.global_offsets += 1;
        }
    }
    Ok(())
}

/// `guard(r, c)` is a conjunction of one-coordinate terms equal to `r < rows && c < cols` along
/// each axis up to the padded extents.
#[allow(clippy::too_many_arguments)]
pub(crate) fn check_guard(
    what: &str,
    text: &str,
    names: (&str, &str),
    rows: i64,
    cols: i64,
    padded_rows: i64,
    padded_cols: i64,
    v: &mut GemmValidation,
) -> Result<CExpr, CodegenError> {
    let g = CExpr::parse(text)?;
    for t in g.conjuncts() {
        if t.vars().len() > 1 {
            return Err(fail(format!(
                "the {what} guard term {t:?} reads more than one coordinate"
            )));
        }
    }
    for (axis, ext, bound) in [(0, padded_rows, rows), (1, padded_cols, cols)] {
        for x in 0..ext {
            let coord = if axis == 0 { [x, 0] } else { [0, x] };
            let got = eval2(&g, (names.0, coord[0]), (names.1, coord[1]))? != 0;
            if got != (x < bound) {
                return Err(fail(format!(
                    "the {what} guard at {coord:?} is {got}, the bound says {}",
                    x < bound
                )));
            }
            v.guard_points += 1;
        }
    }
    Ok(g)
}

/// The plan's global view of a tile equals the problem's row-major layout at the tile origin.
pub(crate) fn check_view(
    plan: &Plan,
    name: &str,
    tile: (i64, i64),
    whole: (i64, i64),
    v: &mut GemmValidation,
) -> Result<(), CodegenError> {
    let id = plan
        .program
        .tensor(name)
        .ok_or_else(|| fail(format!("the plan has no tensor {name}")))?;
    let view = plan.program.tensors[id]
        .layout
        .clone()
        .ok_or_else(|| fail(format!("the plan's {name} has no layout")))?;
    let layout = Layout::parse(&format!("({},{}):({},1)", whole.0, whole.1, whole.1), None)?;
    for r in 0..tile.0.min(whole.0) {
        for c in 0..tile.1.min(whole.1) {
            let a = memory_offset(&view, &[tile.0, tile.1], &[r, c])?;
            let b = memory_offset(&layout, &[whole.0, whole.1], &[r, c])?;
            if a != b {
                return Err(fail(format!(
                    "the plan's view {name} maps ({r}, {c}) to {a}, the problem's layout to {b}"
                )));
            }
            v.global_offsets += 1;
        }
    }
    Ok(())
}

/// `LC_FULL_X` (`what`) must hold exactly where operand X's tile at row origin `axes[0].0` and
/// the k-block at `k0` lie inside the problem, so every guard the fast loads drop would have
/// held: `0` where no tile fits along some axis, `1` where the tiles divide both axes, else a
/// `&&` chain of one `v < bound` term for each axis they do not divide, with bound = extent -
/// tile + 1 (so `v < bound` iff v + tile <= extent).
fn check_full(what: &str, axes: [(&str, i64, i64); 2], full: &str) -> Result<(), CodegenError> {
    let e = CExpr::parse(full)?;
    let bad = |why: String| fail(format!("{what} = {full}: {why}"));
    if axes.iter().any(|&(_, extent, tile)| extent < tile) {
        return if e == CExpr::Int(0) {
            Ok(())
        } else {
            Err(bad(
                "no tile lies inside the problem, so it must be 0".into()
            ))
        };
    }
    let mut seen: BTreeMap<String, i64> = BTreeMap::new();
    if e != CExpr::Int(1) {
        for term in e.conjuncts() {
            let CExpr::Bin('<', v, b) = term else {
                return Err(bad("a term is not `v < bound`".into()));
            };
            let (CExpr::Var(v), CExpr::Int(b)) = (v.as_ref(), b.as_ref()) else {
                return Err(bad("a term is not `v < bound`".into()));
            };
            if seen.insert(v.clone(), *b).is_some() {
                return Err(bad(format!("{v} twice")));
            }
        }
    }
    for (v, extent, tile) in axes {
        let want = (extent % tile != 0).then_some(extent - tile + 1);
        if seen.remove(v) != want {
            return Err(bad(format!(
                "it does not hold exactly where {v} + {tile} <= {extent}"
            )));
        }
    }
    match seen.keys().next() {
        Some(v) => Err(bad(format!("{v} is not one of its arguments"))),
        None => Ok(()),
    }
}

/// Item 7 of the module docs: `LC_FAST_ADDR`'s constants on every thread.
fn check_fast(
    spec: &GemmSpec,
    c: &GemmConfig,
    text: &Sm80Text,
    f: &Sm80Fast,
    smem: (&SharedMap, &SharedMap),
    v: &mut GemmValidation,
) -> Result<(), CodegenError> {
    if let Some(cp) = &f.cp {
        if text.ld_elems != 0 {
            return Err(fail(
                "LC_FAST_ADDR issues cp.async, but K is odd: the loads are staged through \
                 registers"
                    .into(),
            ));
        }
        check_full(
            "LC_FULL_A(m0, k0)",
            [("m0", spec.m, c.bm), ("k0", spec.k, c.bk)],
            &cp.full_a,
        )?;
        check_full(
            "LC_FULL_B(n0, k0)",
            [("n0", spec.n, c.bn), ("k0", spec.k, c.bk)],
            &cp.full_b,
        )?;
    }
    // The body aligns the ring to 1024 bytes; every stage and b_s must start on 1024 bytes too.
    if (c.bm * c.bk * 2) % 1024 != 0 || super::sm80::stage_bytes(c) % 1024 != 0 {
        return Err(fail(
            "LC_FAST_LDSM needs stages and b_s on 1024-byte boundaries".into(),
        ));
    }
    let nt = text.threads;
    for (what, sm, o, fcp, fx, rows) in [
        (
            "A",
            smem.0,
            text.operand('a'),
            f.cp.as_ref().map(|x| [&x.a_cp_sd, &x.a_cp_gd]),
            [&f.a_ldsm_x, &f.a_ldsm_d],
            spec.m,
        ),
        (
            "B",
            smem.1,
            text.operand('b'),
            f.cp.as_ref().map(|x| [&x.b_cp_sd, &x.b_cp_gd]),
            [&f.b_ldsm_x, &f.b_ldsm_d],
            spec.n,
        ),
    ] {
        let (chunks, groups, k) = (o.chunks, o.groups, spec.k);
        let p = CExpr::parse;
        let (cr, ck) = (p(o.cp.0)?, p(o.cp.1)?);
        let cp = match fcp {
            Some([sd, gd]) => Some((p(sd)?, p(gd)?)),
            None => None,
        };
        let (lr, lk, lx, ld) = (p(o.ldsm.0)?, p(o.ldsm.1)?, p(fx[0])?, p(fx[1])?);
        let goff = p(o.goff)?;
        let one = |e: &CExpr, name: &str, x: i64| e.eval_with(&|n| (n == name).then_some(x));
        let bytes = |r: i64, kk: i64| -> Result<i64, CodegenError> { Ok(2 * sm.offset(r, kk)?) };
        let tile_rows = if what == "A" { c.bm } else { c.bn };
        for t in 0..nt {
            let (r0, k0) = (
                eval2(&cr, ("t", t), ("j", 0))?,
                eval2(&ck, ("t", t), ("j", 0))?,
            );
            if let Some((sd, gd)) = &cp {
                for j in 0..chunks {
                    let (r, kk) = (
                        eval2(&cr, ("t", t), ("j", j))?,
                        eval2(&ck, ("t", t), ("j", j))?,
                    );
                    if bytes(r, kk)? != bytes(r0, k0)? + one(sd, "j", j)? {
                        return Err(fail(format!(
                            "{what} cp.async chunk {j} of thread {t}: shared byte {} is not chunk 0's \
                             {} + LC_{what}_CP_SD({j})",
                            bytes(r, kk)?,
                            bytes(r0, k0)?
                        )));
                    }
                    // The body adds k0 (whole k-blocks) and the tile origin to chunk 0's offset;
                    // it does so only where LC_FULL holds (checked by check_full), so at the
                    // first and the last tile and k-block inside the problem.
                    for origin in [0, (rows - tile_rows).max(0) / tile_rows * tile_rows] {
                        for kb in [0, (k - c.bk).max(0) / c.bk * c.bk] {
                            let at = |rr: i64, kx: i64| eval2(&goff, ("r", origin + rr), ("k", kx));
                            if at(r, kb + kk)? != at(r0, k0)? + kb + one(gd, "j", j)? {
                                return Err(fail(format!(
                                    "{what} cp.async chunk {j} of thread {t} at row origin {origin}, \
                                     k {kb}: global element {} is not chunk 0's + k + LC_{what}_CP_GD({j})",
                                    at(r, kb + kk)?
                                )));
                            }
                            v.global_offsets += 1;
                        }
                    }
                }
            }
            let lo = |g: i64| -> Result<i64, CodegenError> {
                bytes(
                    eval2(&lr, ("t", t), ("g", g))?,
                    eval2(&lk, ("t", t), ("g", g))?,
                )
            };
            for g in 0..groups {
                let x = one(&lx, "g", g)?;
                if !(0..1024).contains(&x) {
                    return Err(fail(format!(
                        "LC_{what}_LDSM_X({g}) = {x} reaches the stage base's bits"
                    )));
                }
                if (lo(0)? ^ x) + one(&ld, "g", g)? != lo(g)? {
                    return Err(fail(format!(
                        "{what} ldmatrix group {g}, thread {t}: (group 0's byte {} ^ {x}) + \
                         LC_{what}_LDSM_D({g}) is not its byte {}",
                        lo(0)?,
                        lo(g)?
                    )));
                }
                v.fragment_cells += 1;
            }
        }
    }
    Ok(())
}

pub(crate) fn parse_mma(line: &str) -> Option<[i64; 5]> {
    let inner = line.trim().strip_prefix("LC_MMA(")?.strip_suffix(");")?;
    let v: Vec<i64> = inner
        .split(',')
        .map(|x| x.trim().parse().ok())
        .collect::<Option<_>>()?;
    v.try_into().ok()
}

pub(crate) fn parse_ldsm(line: &str) -> Option<(char, i64)> {
    let l = line.trim();
    for (p, op) in [("LC_LDSM_A(", 'a'), ("LC_LDSM_B(", 'b')] {
        if let Some(rest) = l.strip_prefix(p) {
            return Some((op, rest.strip_suffix(");")?.trim().parse().ok()?));
        }
    }
    None
}

/// Validates the sm80 kernel's text against the plan, the layouts and the instruction models.
pub fn validate_sm80(
    spec: &GemmSpec,
    c: &GemmConfig,
    plan: &Plan,
    text: &Sm80Text,
) -> Result<GemmValidation, CodegenError> {
    let mut v = GemmValidation::default();
    let nt = text.threads;
    if nt != 128 * c.consumers || nt % 32 != 0 {
        return Err(fail(format!(
            "LC_THREADS {nt}: the configuration runs {} threads",
            128 * c.consumers
        )));
    }
    let (instr, atom) = plan_atom(plan)?;
    if text.mma_instr != instr {
        return Err(fail(format!(
            "the kernel issues {:?}, the plan chose {instr:?}",
            text.mma_instr
        )));
    }
    let (aa, ab) = match (&atom.a, &atom.b) {
        (Some(a), Some(b)) => (a, b),
        _ => return Err(fail(format!("{instr}: an operand is not in registers"))),
    };
    let (tv_a, tv_b, tv_c) = (
        plan_tv(plan, "a")?,
        plan_tv(plan, "b")?,
        plan_tv(plan, "c")?,
    );
    let (tv_h, tv_o) = (plan_tv(plan, "h")?, plan_tv(plan, "o")?);

    // 1. Shared layouts.
    let sa = SharedMap::new(
        "a_s",
        plan_memory(plan, "a_s")?,
        (c.bm, c.bk),
        &text.a_slin,
        &text.a_swz,
        ("r", "k"),
        &mut v,
    )?;
    let sb = SharedMap::new(
        "b_s",
        plan_memory(plan, "b_s")?,
        (c.bn, c.bk),
        &text.b_slin,
        &text.b_swz,
        ("r", "k"),
        &mut v,
    )?;
    let sh = SharedMap::new(
        "h_s",
        plan_memory(plan, "h_s")?,
        (c.bm, c.bn),
        &text.h_slin,
        &text.h_swz,
        ("r", "c"),
        &mut v,
    )?;

    // 6. Global offsets, views and guards.
    check_offset("A", &text.a_goff, ("r", "k"), spec.m, spec.k, &mut v)?;
    check_offset("B", &text.b_goff, ("r", "k"), spec.n, spec.k, &mut v)?;
    check_offset("C", &text.c_goff, ("r", "c"), spec.m, spec.n, &mut v)?;
    check_view(plan, "a_g", (c.bm, c.bk), (spec.m, spec.k), &mut v)?;
    check_view(plan, "b_g", (c.bn, c.bk), (spec.n, spec.k), &mut v)?;
    check_view(plan, "c_g", (c.bm, c.bn), (spec.m, spec.n), &mut v)?;
    let tiles_m = ceil_div(spec.m, c.bm);
    let tiles_n = ceil_div(spec.n, c.bn);
    let padded_k = ceil_div(spec.k, c.bk) * c.bk;
    let ga = check_guard(
        "A",
        &text.a_guard,
        ("r", "k"),
        spec.m,
        spec.k,
        tiles_m * c.bm,
        padded_k,
        &mut v,
    )?;
    let gb = check_guard(
        "B",
        &text.b_guard,
        ("r", "k"),
        spec.n,
        spec.k,
        tiles_n * c.bn,
        padded_k,
        &mut v,
    )?;
    let gc = check_guard(
        "C",
        &text.c_guard,
        ("r", "c"),
        spec.m,
        spec.n,
        tiles_m * c.bm,
        tiles_n * c.bn,
        &mut v,
    )?;

    // 2. Loads: placement, contiguity, alignment, coverage, guard uniformity. Each global
    // load moves `width` elements: a 16-byte cp.async chunk, or a staged load.
    let staged = text.ld_elems != 0;
    if staged != reg_staged(spec) {
        return Err(fail(format!(
            "LC_REG_STAGED {}: K = {} {} register staging",
            i32::from(staged),
            spec.k,
            if reg_staged(spec) {
                "needs"
            } else {
                "does not use"
            }
        )));
    }
    let width = if staged { text.ld_elems } else { text.chunk };
    let chunk = text.chunk;
    if ![1, 2, 4, 8].contains(&width) || ![2, 4, 8].contains(&chunk) || chunk % width != 0 {
        return Err(fail(format!(
            "LC_LD_ELEMS {width}, LC_CHUNK {chunk}: loads of 1, 2, 4 or 8 elements within \
             chunks of 2, 4 or 8"
        )));
    }
    if staged && chunk != 8 {
        return Err(fail(format!(
            "LC_CHUNK {chunk}: the staged body stores 16-byte chunks"
        )));
    }
    for (what, smem, chunks, row_t, k_t, goff, guard, grows) in [
        (
            "A",
            &sa,
            text.a_chunks,
            &text.a_cp_row,
            &text.a_cp_k,
            &text.a_goff,
            &ga,
            spec.m,
        ),
        (
            "B",
            &sb,
            text.b_chunks,
            &text.b_cp_row,
            &text.b_cp_k,
            &text.b_goff,
            &gb,
            spec.n,
        ),
    ] {
        let (row_e, k_e, off_e) = (
            CExpr::parse(row_t)?,
            CExpr::parse(k_t)?,
            CExpr::parse(goff)?,
        );
        let (rows, cols) = smem.shape;
        // The copy's thread map: synthesis's coalesced 16-byte cp.async layout (the one its
        // traffic prediction scored), or, staged through registers, the plan's layout of the
        // staging tensor, whose loads and store are the body's (item 2).
        let owned;
        let copy = if staged {
            let name = if what == "A" { "a_r" } else { "b_r" };
            let elems = staged_load_elems(plan, name)?;
            if elems != text.ld_elems {
                return Err(fail(format!(
                    "LC_LD_ELEMS {}: the plan loads {name} {elems} elements at a time",
                    text.ld_elems
                )));
            }
            plan_tv(plan, name)?
        } else {
            let name = if what == "A" { "a_s" } else { "b_s" };
            let want = format!(
                "cp.async.{}.shared.global [{} B]",
                cp_cache(chunk),
                2 * chunk
            );
            let chosen = plan_instruction(plan, name)?;
            if chosen != want {
                return Err(fail(format!(
                    "LC_CHUNK {chunk}: the body issues {want}; the plan chose {chosen}"
                )));
            }
            owned = coalesced(&[rows, cols], 1, chunk, nt)
                .ok_or_else(|| fail(format!("no coalesced copy layout for {what}")))?;
            &owned
        };
        if copy.nvalues() != chunk * chunks {
            return Err(fail(format!(
                "{what}: {chunks} chunks per thread; the copy layout has {}",
                copy.nvalues() / chunk
            )));
        }
        let mut seen = vec![false; (rows * cols) as usize];
        for t in 0..nt {
            for j in 0..chunks {
                let r = eval2(&row_e, ("t", t), ("j", j))?;
                let k = eval2(&k_e, ("t", t), ("j", j))?;
                if (r, k) != rc(copy, t, chunk * j) {
                    return Err(fail(format!(
                        "{what} cp.async chunk {j} of thread {t} loads ({r}, {k}); the copy layout \
                         says {:?}",
                        rc(copy, t, chunk * j)
                    )));
                }
                if !(0..rows).contains(&r) || k < 0 || k % chunk != 0 || k + chunk > cols {
                    return Err(fail(format!(
                        "{what} cp.async chunk {j} of thread {t}: ({r}, {k}) is not a {}-byte \
                         chunk of the tile",
                        2 * chunk
                    )));
                }
                let base = smem.offset(r, k)?;
                if base % chunk != 0 {
                    return Err(fail(format!(
                        "{what} cp.async chunk {j} of thread {t}: shared element {base} is not \
                         {}-byte aligned",
                        2 * chunk
                    )));
                }
                for e in 0..chunk {
                    if rc(copy, t, chunk * j + e) != (r, k + e) {
                        return Err(fail(format!(
                            "{what} chunk {j} of thread {t}: value {} is {:?}, not ({r}, {})",
                            chunk * j + e,
                            rc(copy, t, chunk * j + e),
                            k + e
                        )));
                    }
                    if smem.offset(r, k + e)? != base + e {
                        return Err(fail(format!(
                            "{what} cp.async chunk {j} of thread {t}: cell ({r}, {}) is not at \
                             shared element {}",
                            k + e,
                            base + e
                        )));
                    }
                    let cell = &mut seen[(r * cols + k + e) as usize];
                    if *cell {
                        return Err(fail(format!(
                            "{what} cp.async: cell ({r}, {}) is written twice",
                            k + e
                        )));
                    }
                    *cell = true;
                }
                // The global side: 8 consecutive elements, each load (of `width` elements)
                // aligned to its size in every row (the offset is affine in the row, item 6, so
                // rows 0 and 1 decide), at every k-block.
                for row0 in [0, 1.min(grows - 1), grows - 1] {
                    let g0 = eval2(&off_e, ("r", row0), ("k", k))?;
                    let g7 = eval2(&off_e, ("r", row0), ("k", k + chunk - 1))?;
                    if g7 != g0 + chunk - 1 {
                        return Err(fail(format!(
                            "{what} cp.async chunk ({r}, {k}): global elements are not consecutive"
                        )));
                    }
                    for kb in [0, c.bk] {
                        let g = eval2(&off_e, ("r", row0), ("k", kb + k))?;
                        if g % width != 0 {
                            return Err(fail(format!(
                                "{what} chunk ({r}, {k}): global element {g} of row {row0} is \
                                 not {}-byte aligned",
                                2 * width
                            )));
                        }
                    }
                }
            }
        }
        if let Some(i) = seen.iter().position(|&x| !x) {
            return Err(fail(format!(
                "{what} cp.async: cell ({}, {}) of the stage is never loaded",
                i as i64 / cols,
                i as i64 % cols
            )));
        }
        for k in (0..padded_k).step_by(width as usize) {
            let a = eval2(guard, ("r", 0), ("k", k))? != 0;
            let b = eval2(guard, ("r", 0), ("k", k + width - 1))? != 0;
            if a != b {
                return Err(fail(format!(
                    "the {what} guard changes inside the {}-byte load at k = {k}",
                    2 * width
                )));
            }
        }
    }

    // 7. Full-tile addressing.
    if let Some(f) = &text.fast {
        check_fast(spec, c, text, f, (&sa, &sb), &mut v)?;
    }

    // 3. ldmatrix fragments.
    let ldsm = Ldsm::corpus()?;
    let frag_a = check_ldsm(
        "a",
        &ldsm,
        &sa,
        tv_a,
        nt,
        text.a_groups,
        &CExpr::parse(&text.a_ldsm_row)?,
        &CExpr::parse(&text.a_ldsm_k)?,
        &mut v,
    )?;
    let frag_b = check_ldsm(
        "b",
        &ldsm,
        &sb,
        tv_b,
        nt,
        text.b_groups,
        &CExpr::parse(&text.b_ldsm_row)?,
        &CExpr::parse(&text.b_ldsm_k)?,
        &mut v,
    )?;

    // 4. The schedule and the mma semantics.
    if tv_c.nthreads() != nt || tv_c.nvalues() != text.acc || tv_c.shape != [c.bm, c.bn] {
        return Err(fail(format!(
            "the plan's c has {} threads x {} values over {:?}; the kernel holds {nt} x {} over \
             [{}, {}]",
            tv_c.nthreads(),
            tv_c.nvalues(),
            tv_c.shape,
            text.acc,
            c.bm,
            c.bn
        )));
    }
    let mut owner = vec![0u32; (c.bm * c.bn) as usize];
    for t in 0..nt {
        for x in 0..text.acc {
            let (r, col) = rc(tv_c, t, x);
            owner[(r + c.bm * col) as usize] += 1;
        }
    }
    if let Some(i) = owner.iter().position(|&n| n != 1) {
        return Err(fail(format!(
            "the plan's c holds cell ({}, {}) {} times",
            i as i64 % c.bm,
            i as i64 / c.bm,
            owner[i]
        )));
    }
    let steps = c.bk / 16;
    let mut ksum = vec![vec![0u64; text.acc as usize]; nt as usize];
    let mut loaded_a = vec![false; text.a_groups as usize];
    let mut loaded_b = vec![false; text.b_groups as usize];
    let count = |what: &str| text.schedule.iter().filter(|l| l.trim() == what).count();
    let next = count("LC_NEXT_STAGE();");
    if next != 1 {
        return Err(fail(format!(
            "the schedule issues the next stage's cp.async {next} times per k-block, not once"
        )));
    }
    // LC_PIPELINED: the preloaded groups hold this k-block's fragments when the block starts;
    // after LC_ADVANCE() the loads are the next block's and must be exactly the preloaded
    // groups, and no mma after it may read one of them.
    let advance = count("LC_ADVANCE();");
    let pipelined = !text.preload.is_empty();
    if advance != usize::from(pipelined) {
        return Err(fail(format!(
            "the schedule has {advance} LC_ADVANCE() with {} preloaded groups",
            text.preload.len()
        )));
    }
    let mut preloaded: Vec<(char, i64)> = Vec::new();
    // Marks group g of operand op loaded in this k-block; refuses one out of range or loaded twice.
    let mark = |loaded: (&mut Vec<bool>, &mut Vec<bool>), op: char, g: i64, line: &str| {
        let (set, n) = if op == 'a' {
            (loaded.0, text.a_groups)
        } else {
            (loaded.1, text.b_groups)
        };
        if !(0..n).contains(&g) || set[g as usize] {
            return Err(fail(format!(
                "line {line:?}: group out of range or loaded twice in a k-block"
            )));
        }
        set[g as usize] = true;
        Ok(())
    };
    for line in &text.preload {
        let (op, g) = parse_ldsm(line)
            .ok_or_else(|| fail(format!("preload line {line:?} is not an ldmatrix")))?;
        mark((&mut loaded_a, &mut loaded_b), op, g, line)?;
        preloaded.push((op, g));
    }
    if pipelined {
        let pos = |what: &str| text.schedule.iter().position(|l| l.trim() == what);
        if pos("LC_NEXT_STAGE();") > pos("LC_ADVANCE();") {
            return Err(fail(
                "LC_ADVANCE() comes before LC_NEXT_STAGE(): its wait would not cover k-block kb + 1"
                    .into(),
            ));
        }
    }
    let mut advanced = false;
    let mut reloaded: Vec<(char, i64)> = Vec::new();
    for line in &text.schedule {
        if line.trim() == "LC_NEXT_STAGE();" {
            continue;
        }
        if line.trim() == "LC_ADVANCE();" {
            advanced = true;
            continue;
        }
        if let Some((op, g)) = parse_ldsm(line) {
            if advanced {
                if !preloaded.contains(&(op, g)) || reloaded.contains(&(op, g)) {
                    return Err(fail(format!(
                        "schedule line {line:?} after LC_ADVANCE(): not a preloaded group, or \
                         loaded twice"
                    )));
                }
                reloaded.push((op, g));
                continue;
            }
            mark((&mut loaded_a, &mut loaded_b), op, g, line)?;
            continue;
        }
        let [ci, ag, ar, bg, br] =
            parse_mma(line).ok_or_else(|| fail(format!("schedule line {line:?} is not read")))?;
        if advanced && (preloaded.contains(&('a', ag)) || preloaded.contains(&('b', bg))) {
            return Err(fail(format!(
                "schedule line {line:?} after LC_ADVANCE() reads a group that now holds the next \
                 k-block"
            )));
        }
        if ci < 0
            || ci + 3 >= text.acc
            || !(0..text.a_groups).contains(&ag)
            || !(0..=0).contains(&ar)
            || !(0..text.b_groups).contains(&bg)
            || !(0..=2).contains(&br)
        {
            return Err(fail(format!(
                "schedule line {line:?}: a register index is out of range"
            )));
        }
        if !loaded_a[ag as usize] || !loaded_b[bg as usize] {
            return Err(fail(format!(
                "schedule line {line:?} reads a fragment group not yet loaded in this k-block"
            )));
        }
        for w in 0..nt / 32 {
            let mut ao: Option<(i64, i64)> = None;
            let mut bo: Option<(i64, i64)> = None;
            let agree = |o: &mut Option<(i64, i64)>, d: (i64, i64), what: &str| match o {
                None => {
                    *o = Some(d);
                    Ok(())
                }
                Some(x) if *x == d => Ok(()),
                Some(x) => Err(fail(format!(
                    "schedule line {line:?}, warp {w}: the {what} fragment is not one atom \
                         (origins {x:?} and {d:?})"
                ))),
            };
            for l in 0..32 {
                let t = w * 32 + l;
                for p in 0..8 {
                    let got = frag_a[t as usize][(8 * ag + 2 * ar + p) as usize];
                    let at = aa.eval(l, p)?;
                    agree(&mut ao, (got.0 - at[0], got.1 - at[1]), "A")?;
                }
                for p in 0..4 {
                    let got = frag_b[t as usize][(8 * bg + 2 * br + p) as usize];
                    let at = ab.eval(l, p)?;
                    agree(&mut bo, (got.0 - at[0], got.1 - at[1]), "B")?;
                }
            }
            let (am, ak) = ao.unwrap_or((0, 0));
            let (bn, bk) = bo.unwrap_or((0, 0));
            if ak != bk || ak % 16 != 0 || !(0..c.bk).contains(&ak) {
                return Err(fail(format!(
                    "schedule line {line:?}, warp {w}: A reads k-step {ak}, B reads {bk}"
                )));
            }
            for l in 0..32 {
                let t = w * 32 + l;
                for j in 0..4 {
                    let at = atom.c_layout.eval(l, j)?;
                    let want = (am + at[0], bn + at[1]);
                    let got = rc(tv_c, t, ci + j);
                    if got != want {
                        return Err(fail(format!(
                            "schedule line {line:?}: thread {t} accumulator {} is the plan's \
                             cell {got:?}, the mma writes {want:?}",
                            ci + j
                        )));
                    }
                    let bit = 1u64 << (ak / 16);
                    let s = &mut ksum[t as usize][(ci + j) as usize];
                    if *s & bit != 0 {
                        return Err(fail(format!(
                            "schedule line {line:?}: thread {t} accumulator {} gets k-step {ak} twice",
                            ci + j
                        )));
                    }
                    *s |= bit;
                    v.mma_products += 1;
                }
            }
        }
    }
    if reloaded.len() != preloaded.len() {
        return Err(fail(format!(
            "LC_ADVANCE() is followed by {} of the {} preloaded groups",
            reloaded.len(),
            preloaded.len()
        )));
    }
    let full = (1u64 << steps) - 1;
    for (t, row) in ksum.iter().enumerate() {
        if let Some(x) = row.iter().position(|&s| s != full) {
            return Err(fail(format!(
                "thread {t} accumulator {x} receives k-steps {:#b} of a k-block, not all {steps}",
                row[x]
            )));
        }
    }
    v.accumulator_cells += (nt * text.acc) as u64;

    // 5. Epilogue.
    if tv_h.table() != tv_c.table() || tv_h.shape != tv_c.shape {
        return Err(fail(
            "the plan's h = cast(c) does not keep c's layout".into(),
        ));
    }
    let (cr, cc) = (CExpr::parse(&text.c_row)?, CExpr::parse(&text.c_col)?);
    for t in 0..nt {
        for x in (0..text.acc).step_by(2) {
            let got = (
                eval2(&cr, ("t", t), ("v", x))?,
                eval2(&cc, ("t", t), ("v", x))?,
            );
            if got != rc(tv_c, t, x) || rc(tv_c, t, x + 1) != (got.0, got.1 + 1) {
                return Err(fail(format!(
                    "epilogue: thread {t} values {x}, {} go to {got:?} and the next column; the \
                     plan's c holds {:?}, {:?}",
                    x + 1,
                    rc(tv_c, t, x),
                    rc(tv_c, t, x + 1)
                )));
            }
            let s = sh.offset(got.0, got.1)?;
            if s % 2 != 0 || sh.cell(s + 1, "h_s")? != (got.0, got.1 + 1) {
                return Err(fail(format!(
                    "epilogue: the pair at {got:?} is not one aligned 4-byte word of h_s"
                )));
            }
            v.accumulator_cells += 2;
        }
    }
    if tv_o.nthreads() != nt || tv_o.nvalues() != text.o_values || text.o_values % 8 != 0 {
        return Err(fail(format!(
            "the plan's o has {} threads x {} values; the kernel stores {nt} x {}",
            tv_o.nthreads(),
            tv_o.nvalues(),
            text.o_values
        )));
    }
    let (or, oc) = (CExpr::parse(&text.o_row)?, CExpr::parse(&text.o_col)?);
    let mut read = vec![false; (c.bm * c.bn) as usize];
    for t in 0..nt {
        for x in (0..text.o_values).step_by(8) {
            let (r, col) = (
                eval2(&or, ("t", t), ("v", x))?,
                eval2(&oc, ("t", t), ("v", x))?,
            );
            let s = sh.offset(r, col)?;
            if s % 8 != 0 || col % 8 != 0 {
                return Err(fail(format!(
                    "epilogue: thread {t} vector {x} at ({r}, {col}) is not 16-byte aligned"
                )));
            }
            for e in 0..8 {
                let cell = (r, col + e);
                if rc(tv_o, t, x + e) != cell || sh.cell(s + e, "h_s")? != cell {
                    return Err(fail(format!(
                        "epilogue: thread {t} value {} reads {cell:?}; the plan's o holds {:?}",
                        x + e,
                        rc(tv_o, t, x + e)
                    )));
                }
                let i = (cell.0 * c.bn + cell.1) as usize;
                if read[i] {
                    return Err(fail(format!("epilogue: cell {cell:?} is stored twice")));
                }
                read[i] = true;
                v.accumulator_cells += 1;
            }
        }
    }
    if read.iter().any(|&x| !x) {
        return Err(fail("epilogue: a cell of the tile is never stored".into()));
    }
    // The vector store path (N % 8 == 0) needs the guard uniform over every 8-column vector.
    if spec.n % 8 == 0 {
        for col in (0..tiles_n * c.bn).step_by(8) {
            let a = eval2(&gc, ("r", 0), ("c", col))? != 0;
            let b = eval2(&gc, ("r", 0), ("c", col + 7))? != 0;
            if a != b {
                return Err(fail(format!(
                    "the C guard changes inside the 16-byte vector at column {col}"
                )));
            }
        }
    }
    Ok(v)
}
