//! The plan simulator: executes a [`Plan`] on N simulated ranks with real buffers. A cell holds
//! which global element it carries and which addends of it (a count and a bit set), so "each
//! addend exactly once" is checked exactly (count == addends and every bit set). It shares no code
//! with the planner: it only knows the collective semantics of spec/distributed.md section 3.

use layout::mesh::ReduceOp;

use super::plan::{Plan, Step};

/// Why a max, min or avg reduction of element `elem` with padding or zero is not decided (the
/// cell simulator's and the box decider's words, so their unknowns read alike).
pub(super) fn padding_note(elem: i64, op: ReduceOp) -> String {
    format!(
        "undecided: reduces element #{elem} with padding or zero by {}: zero is the identity of \
         sum only",
        op.name()
    )
}

/// Why an average of element `elem` is not decided: the accumulated `j` members hold `acc`
/// addends, the next member `next`; they are not equally weighted and disjoint.
pub(super) fn average_note(elem: i64, acc: u32, next: u32, j: u32) -> String {
    format!(
        "undecided: averages element #{elem} over members that are not equally weighted and \
         disjoint ({} and {next} addend(s))",
        acc / j.max(1)
    )
}

/// Most cells (over all ranks) a simulation holds at once: 2^24.
pub const MAX_CELLS: i64 = 1 << 24;

/// One buffer cell: `elem` is the global flat index (row-major), [`EMPTY`] for padding/zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cell {
    /// Global flat element index, or [`EMPTY`].
    pub elem: u32,
    /// How many addends were summed into this cell.
    pub count: u32,
    /// Which addends (bit `i` = addend `i`).
    pub mask: u64,
}

/// The element id of padding or zero.
pub const EMPTY: u32 = u32::MAX;
const PAD: Cell = Cell {
    elem: EMPTY,
    count: 0,
    mask: 0,
};

/// A rank's local buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Buffer {
    /// Shape (row-major).
    pub shape: Vec<i64>,
    /// Cells.
    pub cells: Vec<Cell>,
}

/// Why a simulation stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimError {
    /// Step index (0-based).
    pub step: usize,
    /// Rank where it happened, if one.
    pub rank: Option<i64>,
    /// What went wrong.
    pub message: String,
    /// True when the simulator cannot decide: its size limit stopped it, or a reduction its
    /// addend model does not cover; the plan may be right: unknown, not refuted.
    pub limit: bool,
}

impl Buffer {
    /// A padding-filled buffer.
    pub fn pad(shape: &[i64]) -> Buffer {
        let n: i64 = shape.iter().product();
        Buffer {
            shape: shape.to_vec(),
            cells: vec![PAD; n.max(0) as usize],
        }
    }
    fn strides(shape: &[i64]) -> Vec<i64> {
        let mut s = vec![1i64; shape.len()];
        for i in (0..shape.len().saturating_sub(1)).rev() {
            s[i] = s[i + 1] * shape[i + 1];
        }
        s
    }
    /// Copies the box `[from, from+len)` of `src` to `at` of `self` (bounds checked by caller).
    fn copy_box(&mut self, src: &Buffer, from: &[i64], at: &[i64], len: &[i64]) {
        let (ss, ds) = (Self::strides(&src.shape), Self::strides(&self.shape));
        let n: i64 = len.iter().product();
        let mut idx = vec![0i64; len.len()];
        for _ in 0..n {
            let so: i64 = (0..len.len()).map(|d| (from[d] + idx[d]) * ss[d]).sum();
            let dof: i64 = (0..len.len()).map(|d| (at[d] + idx[d]) * ds[d]).sum();
            self.cells[dof as usize] = src.cells[so as usize];
            for d in (0..len.len()).rev() {
                idx[d] += 1;
                if idx[d] < len[d] {
                    break;
                }
                idx[d] = 0;
            }
        }
    }
}

/// Reduces cell `b` into `a`, which already holds `j` members' reduction, by `op`. The model
/// (element, addend count, addend set) is exact for sum, where padding and zero are the
/// identity. For max and min the value is the op over the set (duplicates are harmless), but
/// zero is not their identity: a cell reduced with padding or zero is undecided. For avg the
/// members must be equally weighted and disjoint (then the mean of means is the mean of the
/// union); anything else is undecided.
fn reduce(a: Cell, b: Cell, op: ReduceOp, j: u32) -> Result<Cell, (bool, String)> {
    if a.elem == EMPTY && b.elem == EMPTY {
        return Ok(a);
    }
    if a.elem == EMPTY || b.elem == EMPTY {
        if op == ReduceOp::Sum {
            return Ok(if a.elem == EMPTY { b } else { a });
        }
        return Err((true, padding_note(a.elem.min(b.elem) as i64, op)));
    }
    if a.elem != b.elem {
        return Err((
            false,
            format!("reduces element #{} with element #{}", a.elem, b.elem),
        ));
    }
    if op == ReduceOp::Avg && (a.mask & b.mask != 0 || a.count != b.count.saturating_mul(j)) {
        return Err((true, average_note(a.elem as i64, a.count, b.count, j)));
    }
    Ok(Cell {
        elem: a.elem,
        count: a.count.saturating_add(b.count),
        mask: a.mask | b.mask,
    })
}

/// Runs `plan` from `start` (one buffer per rank); the buffers after the last step, or the
/// first step that is not executable (a group member twice, shapes that differ, a piece count
/// that does not divide, a message out of bounds, two different elements reduced together).
pub fn run(plan: &Plan, start: Vec<Buffer>) -> Result<Vec<Buffer>, SimError> {
    let mut bufs = start;
    for (k, step) in plan.steps.iter().enumerate() {
        let fail = |rank: Option<i64>, m: String, limit: bool| SimError {
            step: k,
            rank,
            message: m,
            limit,
        };
        if let Step::SendRecv { shape, .. } = step {
            let size: i64 = shape
                .iter()
                .try_fold(1i64, |a, &e| a.checked_mul(e.max(0)))
                .unwrap_or(i64::MAX);
            if size.saturating_mul(bufs.len() as i64) > MAX_CELLS {
                let m = format!(
                    "send-recv buffers of {shape:?} on {} ranks exceed {MAX_CELLS} cells",
                    bufs.len()
                );
                return Err(fail(None, m, true));
            }
        }
        bufs = run_step(step, bufs).map_err(|e| fail(e.rank, e.message, e.undecided))?;
        let total: i64 = bufs.iter().map(|b| b.cells.len() as i64).sum();
        if total > MAX_CELLS {
            return Err(fail(
                None,
                format!("the buffers hold {total} cells; at most {MAX_CELLS}"),
                true,
            ));
        }
    }
    Ok(bufs)
}

/// Why a step stopped: a refutation (the step does not execute) or, when `undecided`, a
/// reduction the addend model does not cover.
struct StepErr {
    rank: Option<i64>,
    message: String,
    undecided: bool,
}

impl StepErr {
    fn refute(rank: Option<i64>, message: String) -> StepErr {
        StepErr {
            rank,
            message,
            undecided: false,
        }
    }
}

impl From<(Option<i64>, String)> for StepErr {
    fn from((rank, message): (Option<i64>, String)) -> StepErr {
        StepErr::refute(rank, message)
    }
}

type StepResult = Result<Vec<Buffer>, StepErr>;

/// Every group non-empty, every rank in range and in at most one group.
pub(super) fn check_groups(groups: &[Vec<i64>], n: usize) -> Result<(), (Option<i64>, String)> {
    let mut seen = vec![false; n];
    for g in groups {
        if g.is_empty() {
            return Err((None, "an empty group".into()));
        }
        for &r in g {
            if r < 0 || r as usize >= n {
                return Err((Some(r), format!("rank {r} is not one of the {n} ranks")));
            }
            if seen[r as usize] {
                return Err((
                    Some(r),
                    format!("rank {r} is in two groups or twice in one"),
                ));
            }
            seen[r as usize] = true;
        }
    }
    Ok(())
}

fn same_shape(bufs: &[Buffer], g: &[i64]) -> Result<Vec<i64>, (Option<i64>, String)> {
    let s = bufs[g[0] as usize].shape.clone();
    for &r in g {
        if bufs[r as usize].shape != s {
            return Err((
                Some(r),
                format!(
                    "buffer shape {:?} differs from rank {}'s {:?}",
                    bufs[r as usize].shape, g[0], s
                ),
            ));
        }
    }
    Ok(s)
}

/// Piece `i` of `p` along `dim` of `b`.
fn piece(b: &Buffer, dim: usize, p: i64, i: i64) -> Buffer {
    let mut shape = b.shape.clone();
    shape[dim] /= p;
    let mut out = Buffer::pad(&shape);
    let mut from = vec![0; shape.len()];
    from[dim] = i * shape[dim];
    out.copy_box(b, &from, &vec![0; shape.len()], &shape);
    out
}

/// Concatenation along `dim`.
fn concat(parts: &[Buffer], dim: usize) -> Buffer {
    let mut shape = parts[0].shape.clone();
    shape[dim] *= parts.len() as i64;
    let mut out = Buffer::pad(&shape);
    for (i, p) in parts.iter().enumerate() {
        let mut at = vec![0; shape.len()];
        at[dim] = i as i64 * p.shape[dim];
        out.copy_box(p, &vec![0; shape.len()], &at, &p.shape);
    }
    out
}

fn reduce_all(bufs: &[Buffer], g: &[i64], op: ReduceOp) -> Result<Buffer, StepErr> {
    let mut acc = bufs[g[0] as usize].clone();
    for (j, &r) in g.iter().enumerate().skip(1) {
        for (i, c) in bufs[r as usize].cells.iter().enumerate() {
            acc.cells[i] =
                reduce(acc.cells[i], *c, op, j as u32).map_err(|(undecided, m)| StepErr {
                    rank: Some(r),
                    message: format!("position {i}: {m}"),
                    undecided,
                })?;
        }
    }
    Ok(acc)
}

fn run_step(step: &Step, mut bufs: Vec<Buffer>) -> StepResult {
    let n = bufs.len();
    match step {
        Step::AllGather { groups, dim } => {
            check_groups(groups, n)?;
            for g in groups {
                let s = same_shape(&bufs, g)?;
                if *dim >= s.len() {
                    return Err(StepErr::refute(
                        Some(g[0]),
                        format!("dim {dim} of a {}-D buffer", s.len()),
                    ));
                }
                let parts: Vec<Buffer> = g.iter().map(|&r| bufs[r as usize].clone()).collect();
                let whole = concat(&parts, *dim);
                for &r in g {
                    bufs[r as usize] = whole.clone();
                }
            }
        }
        Step::ReduceScatter { groups, dim, op } => {
            check_groups(groups, n)?;
            for g in groups {
                let s = same_shape(&bufs, g)?;
                let p = g.len() as i64;
                if *dim >= s.len() || s[*dim] % p != 0 {
                    return Err(StepErr::refute(
                        Some(g[0]),
                        format!("dim {dim} of shape {s:?} does not split into {p} pieces"),
                    ));
                }
                let sum = reduce_all(&bufs, g, *op)?;
                for (i, &r) in g.iter().enumerate() {
                    bufs[r as usize] = piece(&sum, *dim, p, i as i64);
                }
            }
        }
        Step::AllReduce { groups, op } => {
            check_groups(groups, n)?;
            for g in groups {
                same_shape(&bufs, g)?;
                let sum = reduce_all(&bufs, g, *op)?;
                for &r in g {
                    bufs[r as usize] = sum.clone();
                }
            }
        }
        Step::AllToAll {
            groups,
            split_dim,
            concat_dim,
        } => {
            check_groups(groups, n)?;
            for g in groups {
                let s = same_shape(&bufs, g)?;
                let p = g.len() as i64;
                if *split_dim >= s.len() || *concat_dim >= s.len() || s[*split_dim] % p != 0 {
                    return Err(StepErr::refute(
                        Some(g[0]),
                        format!("all-to-all dims {split_dim}/{concat_dim} of shape {s:?} over {p}"),
                    ));
                }
                let old: Vec<Buffer> = g.iter().map(|&r| bufs[r as usize].clone()).collect();
                for (j, &r) in g.iter().enumerate() {
                    let parts: Vec<Buffer> = old
                        .iter()
                        .map(|b| piece(b, *split_dim, p, j as i64))
                        .collect();
                    bufs[r as usize] = concat(&parts, *concat_dim);
                }
            }
        }
        Step::Broadcast { groups, root } => {
            check_groups(groups, n)?;
            for g in groups {
                let Some(&src) = g.get(*root) else {
                    return Err(StepErr::refute(
                        Some(g[0]),
                        format!("root {root} of a group of {}", g.len()),
                    ));
                };
                let b = bufs[src as usize].clone();
                for &r in g {
                    bufs[r as usize] = b.clone();
                }
            }
        }
        Step::SendRecv { shape, messages } => {
            if shape.iter().any(|&e| e < 0) {
                return Err(StepErr::refute(None, format!("shape {shape:?}")));
            }
            let mut out: Vec<Buffer> = (0..n).map(|_| Buffer::pad(shape)).collect();
            for m in messages {
                for r in [m.src, m.dst] {
                    if r < 0 || r as usize >= n {
                        return Err(StepErr::refute(
                            Some(r),
                            format!("message names rank {r} of {n}"),
                        ));
                    }
                }
                let src = &bufs[m.src as usize];
                let ok = |start: &[i64], sh: &[i64]| {
                    start.len() == sh.len()
                        && m.len.len() == sh.len()
                        && (0..sh.len())
                            .all(|d| start[d] >= 0 && m.len[d] >= 0 && start[d] + m.len[d] <= sh[d])
                };
                if !ok(&m.src_start, &src.shape) || !ok(&m.dst_start, shape) {
                    return Err(StepErr::refute(
                        Some(m.dst),
                        format!("message {} -> {} box out of bounds", m.src, m.dst),
                    ));
                }
                out[m.dst as usize].copy_box(src, &m.src_start, &m.dst_start, &m.len);
            }
            bufs = out;
        }
        Step::Local { shape, maps } => {
            if maps.len() != n {
                return Err(StepErr::refute(
                    None,
                    format!("{} local maps for {n} ranks", maps.len()),
                ));
            }
            for (r, map) in maps.iter().enumerate() {
                let old = &bufs[r];
                if map.len() != shape.len() || map.len() != old.shape.len() {
                    return Err(StepErr::refute(
                        Some(r as i64),
                        "local map rank differs from the buffer's".into(),
                    ));
                }
                for (d, m) in map.iter().enumerate() {
                    if m.len() as i64 != shape[d] || m.iter().any(|&i| i < -1 || i >= old.shape[d])
                    {
                        return Err(StepErr::refute(
                            Some(r as i64),
                            format!("local map of dim {d} out of range"),
                        ));
                    }
                }
                let mut new = Buffer::pad(shape);
                let os = Buffer::strides(&old.shape);
                let mut idx = vec![0i64; shape.len()];
                for cell in new.cells.iter_mut() {
                    let mut off = 0i64;
                    let mut pad = false;
                    for d in 0..shape.len() {
                        let o = map[d][idx[d] as usize];
                        pad |= o < 0;
                        off += o * os[d];
                    }
                    if !pad {
                        *cell = old.cells[off as usize];
                    }
                    for d in (0..shape.len()).rev() {
                        idx[d] += 1;
                        if idx[d] < shape[d] {
                            break;
                        }
                        idx[d] = 0;
                    }
                }
                bufs[r] = new;
            }
        }
        Step::Zero { ranks } => {
            for &r in ranks {
                let b = bufs
                    .get_mut(r as usize)
                    .ok_or(StepErr::refute(Some(r), format!("rank {r} of {n}")))?;
                b.cells.iter_mut().for_each(|c| *c = PAD);
            }
        }
    }
    Ok(bufs)
}
