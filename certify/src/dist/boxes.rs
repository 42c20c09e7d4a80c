//! The plan executed on boxes: the collective semantics of [`super::simulate`] with each rank's
//! buffer held as a list of disjoint boxes of cells instead of the cells themselves.
//!
//! A [`Piece`] is a box `[lo, lo + len)` of a rank's buffer whose cell `lo + k` holds global
//! element `elem + k` with the same addends (`count` terms, set `addends`); cells in no piece are
//! padding (or zero). Every step of a plan moves whole boxes: a collective concatenates, cuts and
//! reduces along a buffer dim, a send-recv copies a box over a box, and a local table is cut into
//! runs of consecutive entries, each of which moves a box. So the cost of a decision is the
//! number of boxes, not of cells: a shard of 1021 rows is one piece whatever its padding, and the
//! claim on 1024 ranks costs a few pieces per rank.
//!
//! The result is the cell simulator's, cell for cell ([`BoxBuffer::to_cells`]), with the same
//! errors (step, rank, message); the tests compare the two on random and mutated plans, and
//! `certify_plan` re-runs the cell simulator on every claim small enough for it. A plan whose
//! tables scatter single cells costs as much as the cells; past [`MAX_BOXES`] boxes or
//! [`MAX_WORK`] box operations the decision stops with [`Stop::Limit`] (not a refutation).
//!
//! Worked vector: 4 ranks, shape (5,3), `[Shard(0)]`: rank 2 holds the piece `lo [0,0], len
//! [1,3], elem [4,0]` in a (2,3) buffer (row 4; its second row is padding). An all-gather along
//! dim 0 gives every rank an (8,3) buffer whose pieces `[0,0]+[2,3]@[0,0]`, `[2,0]+[2,3]@[2,0]`
//! and `[4,0]+[1,3]@[4,0]` merge into the one piece `[0,0]+[5,3]@[0,0]`.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::sync::Arc;

use layout::mesh::{MeshLayout, ReduceOp};

use super::plan::{Plan, Step};
use super::simulate::{average_note, check_groups, padding_note, Buffer, Cell, SimError};
use super::{DistCounterexample, DistError};

/// Most pieces, over all ranks, the buffers may hold after a step (2^22).
pub const MAX_BOXES: i64 = 1 << 22;
/// Most box operations (intersections, table runs, pieces made) one decision may spend (2^27).
pub const MAX_WORK: i64 = 1 << 27;

/// A box of a buffer's cells holding consecutive elements with the same addends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Piece {
    /// First cell (buffer coordinates).
    pub lo: Vec<i64>,
    /// Extents (all >= 1).
    pub len: Vec<i64>,
    /// Global element (tensor coordinates) held at `lo`.
    pub elem: Vec<i64>,
    /// How many addends were summed into each cell.
    pub count: u32,
    /// Which addends.
    pub addends: Addends,
}

/// A set of addend indices: sorted, disjoint, non-adjacent ranges `[lo, hi)` (shared).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Addends(pub(super) Arc<Vec<(u32, u32)>>);

impl Addends {
    /// `{i}`.
    pub fn one(i: u32) -> Addends {
        Addends(Arc::new(vec![(i, i + 1)]))
    }

    /// `{0, .., n-1}`.
    pub fn all(n: u32) -> Addends {
        Addends(Arc::new(vec![(0, n)]))
    }

    /// The union.
    pub fn union(&self, o: &Addends) -> Addends {
        let mut all: Vec<(u32, u32)> = self.0.iter().chain(o.0.iter()).copied().collect();
        all.sort_unstable();
        let mut out: Vec<(u32, u32)> = Vec::with_capacity(all.len());
        for (lo, hi) in all {
            match out.last_mut() {
                Some(l) if lo <= l.1 => l.1 = l.1.max(hi),
                _ => out.push((lo, hi)),
            }
        }
        Addends(Arc::new(out))
    }

    /// Whether the two sets share an index.
    pub fn meets(&self, o: &Addends) -> bool {
        let (mut i, mut j) = (0, 0);
        while i < self.0.len() && j < o.0.len() {
            let (a, b) = (self.0[i], o.0[j]);
            if a.0 < b.1 && b.0 < a.1 {
                return true;
            }
            if a.1 <= b.1 {
                i += 1;
            } else {
                j += 1;
            }
        }
        false
    }

    /// The bit mask when every index is below 64 (as the cell simulator holds it).
    pub fn mask(&self) -> Option<u64> {
        self.0.iter().try_fold(0u64, |m, &(lo, hi)| {
            (hi <= 64).then(|| m | ((u64::MAX >> (64 - (hi - lo))) << lo))
        })
    }

    /// `0x1f` when it fits a mask (the cell simulator's text), else `{0..3, 5..128}`.
    pub fn text(&self) -> String {
        match self.mask() {
            Some(m) => format!("{m:#x}"),
            None => {
                let v: Vec<String> = self.0.iter().map(|(a, b)| format!("{a}..{b}")).collect();
                format!("{{{}}}", v.join(", "))
            }
        }
    }
}

impl Piece {
    /// The part of the piece inside the box `[from, from + len)`, if any.
    pub fn clip(&self, from: &[i64], len: &[i64]) -> Option<Piece> {
        if !self.meets(from, len) {
            return None;
        }
        let mut p = self.clone();
        for d in 0..self.lo.len() {
            let a = self.lo[d].max(from[d]);
            let b = (self.lo[d] + self.len[d]).min(from[d] + len[d]);
            if a >= b {
                return None;
            }
            p.elem[d] += a - self.lo[d];
            p.lo[d] = a;
            p.len[d] = b - a;
        }
        Some(p)
    }

    /// Whether the piece has a cell inside the box `[from, from + len)`.
    fn meets(&self, from: &[i64], len: &[i64]) -> bool {
        (0..self.lo.len())
            .all(|d| self.lo[d].max(from[d]) < (self.lo[d] + self.len[d]).min(from[d] + len[d]))
    }

    /// The piece restricted to `[a, b)` along dim `d` (inside it).
    fn part(&self, d: usize, a: i64, b: i64) -> Piece {
        let mut p = self.clone();
        p.elem[d] += a - self.lo[d];
        p.lo[d] = a;
        p.len[d] = b - a;
        p
    }

    /// The piece moved by `by` in the buffer (its elements stay).
    fn moved(mut self, by: &[i64]) -> Piece {
        self.lo.iter_mut().zip(by).for_each(|(l, b)| *l += b);
        self
    }

    /// The cells of the piece outside the box `[from, from + len)`: at most two pieces per dim.
    fn minus(&self, from: &[i64], len: &[i64]) -> Vec<Piece> {
        if !self.meets(from, len) {
            return vec![self.clone()];
        }
        let mut out = Vec::new();
        let mut rest = self.clone();
        for d in 0..self.lo.len() {
            let (lo, hi) = (rest.lo[d], rest.lo[d] + rest.len[d]);
            let (a, b) = (from[d].max(lo), (from[d] + len[d]).min(hi));
            if lo < a {
                out.push(rest.part(d, lo, a));
            }
            if b < hi {
                out.push(rest.part(d, b, hi));
            }
            rest = rest.part(d, a, b);
        }
        out
    }

    /// The element offset along dim `d` (element minus buffer coordinate).
    fn offset(&self, d: usize) -> i64 {
        self.elem[d] - self.lo[d]
    }

    /// Whether `o` is this piece moved along dim `d` only, holding the elements that continue
    /// it there (same box across `d`, same element offsets, same addends).
    fn continued_by(&self, o: &Piece, d: usize) -> bool {
        (0..self.lo.len()).all(|e| {
            e == d
                || (self.lo[e] == o.lo[e] && self.len[e] == o.len[e] && self.elem[e] == o.elem[e])
        }) && self.offset(d) == o.offset(d)
            && self.count == o.count
            && self.addends == o.addends
    }

    fn same_elements(&self, o: &Piece) -> bool {
        (0..self.lo.len()).all(|d| self.offset(d) == o.offset(d))
    }
}

/// A rank's buffer: its shape and disjoint pieces (shared between ranks that hold the same).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoxBuffer {
    /// Shape (row-major).
    pub shape: Vec<i64>,
    /// Disjoint pieces, sorted by `lo`.
    pub pieces: Arc<Vec<Piece>>,
}

impl BoxBuffer {
    /// A buffer of `shape` holding `pieces` (disjoint, inside the shape).
    pub fn new(shape: Vec<i64>, pieces: Vec<Piece>) -> BoxBuffer {
        BoxBuffer {
            shape,
            pieces: Arc::new(coalesce(pieces)),
        }
    }

    /// The same buffer cell by cell, element ids flat row-major in `elem_shape` (as the cell
    /// simulator numbers them).
    pub fn to_cells(&self, elem_shape: &[i64]) -> Buffer {
        let mut b = Buffer::pad(&self.shape);
        for p in self.pieces.iter() {
            let n: i64 = p.len.iter().product();
            let mut k = vec![0i64; p.len.len()];
            for _ in 0..n {
                let at: Vec<i64> = p.lo.iter().zip(&k).map(|(l, k)| l + k).collect();
                let e: Vec<i64> = p.elem.iter().zip(&k).map(|(l, k)| l + k).collect();
                b.cells[flat(&self.shape, &at) as usize] = Cell {
                    elem: flat(elem_shape, &e) as u32,
                    count: p.count,
                    mask: p.addends.mask().unwrap_or(u64::MAX),
                };
                for d in (0..k.len()).rev() {
                    k[d] += 1;
                    if k[d] < p.len[d] {
                        break;
                    }
                    k[d] = 0;
                }
            }
        }
        b
    }
}

/// Row-major position of `c` in `shape`.
pub(super) fn flat(shape: &[i64], c: &[i64]) -> i64 {
    shape.iter().zip(c).fold(0, |a, (s, x)| a * s + x)
}

fn volume(shape: &[i64]) -> Option<i64> {
    shape
        .iter()
        .try_fold(1i64, |a, &e| if e < 0 { None } else { a.checked_mul(e) })
}

/// Why a decision on boxes stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    /// A step does not execute (the cell simulator's error, word for word).
    Step(SimError),
    /// The decision would cost more than [`MAX_BOXES`] or [`MAX_WORK`] (unknown, not refuted).
    Limit(String),
}

enum Fail {
    At(Option<i64>, String),
    Limit(String),
}

impl From<(Option<i64>, String)> for Fail {
    fn from((r, m): (Option<i64>, String)) -> Fail {
        Fail::At(r, m)
    }
}

/// The work a decision may still spend.
struct Budget(i64);

impl Budget {
    fn new() -> Budget {
        Budget(MAX_WORK)
    }
    fn spend(&mut self, n: usize) -> Result<(), Fail> {
        self.0 -= n as i64;
        if self.0 < 0 {
            return Err(Fail::Limit(format!(
                "more than {MAX_WORK} box operations (the plan's tables scatter cells)"
            )));
        }
        Ok(())
    }
}

/// Merges pieces that touch along a dim and hold consecutive elements with the same addends,
/// until none do; sorted by `lo`. The cells are unchanged.
fn coalesce(mut v: Vec<Piece>) -> Vec<Piece> {
    if v.len() > 1 {
        let nd = v[0].lo.len();
        loop {
            let before = v.len();
            for d in (0..nd).rev() {
                // Sort so that pieces that may merge along `d` are neighbours.
                let key = |a: &Piece, b: &Piece| -> Ordering {
                    let mut o = Ordering::Equal;
                    for e in (0..nd).filter(|&e| e != d) {
                        o = o.then(a.lo[e].cmp(&b.lo[e])).then(a.len[e].cmp(&b.len[e]));
                    }
                    for e in 0..nd {
                        o = o.then(a.offset(e).cmp(&b.offset(e)));
                    }
                    o.then(a.count.cmp(&b.count))
                        .then(a.addends.cmp(&b.addends))
                        .then(a.lo[d].cmp(&b.lo[d]))
                };
                v.sort_by(key);
                let mut out: Vec<Piece> = Vec::with_capacity(v.len());
                for p in v.drain(..) {
                    if let Some(last) = out.last_mut() {
                        if last.lo[d] + last.len[d] == p.lo[d] && last.continued_by(&p, d) {
                            last.len[d] += p.len[d];
                            continue;
                        }
                    }
                    out.push(p);
                }
                v = out;
            }
            if v.len() == before {
                break;
            }
        }
    }
    v.sort_by(|a, b| a.lo.cmp(&b.lo));
    v
}

/// Each rank's buffer reduced by `op` with the next's, cell by cell, `acc` holding `j` members'
/// reduction: where both hold a value they must hold one element (else the row-major first such
/// position, with both elements); the terms add. As the cell simulator's `reduce`: for max,
/// min and avg a value reduced with padding or zero is undecided (zero is the identity of sum
/// only), and avg must reduce equally weighted, disjoint members (a limit: unknown).
fn reduce_pair(
    acc: &[Piece],
    other: &[Piece],
    shape: &[i64],
    elem_shape: &[i64],
    (op, j): (ReduceOp, u32),
    budget: &mut Budget,
) -> Result<Vec<Piece>, Fail> {
    let mut out = Vec::new();
    let mut conflict: Option<(i64, i64, i64)> = None;
    // The row-major first position the addend model cannot decide, and why.
    let mut undecided: Option<(i64, String)> = None;
    let mut undecided_at = |pos: i64, why: &dyn Fn() -> String| {
        if undecided.as_ref().is_none_or(|u| pos < u.0) {
            undecided = Some((pos, why()));
        }
    };
    for a in acc {
        budget.spend(other.len())?;
        for b in other {
            let Some(i) = a.clip(&b.lo, &b.len) else {
                continue;
            };
            if a.same_elements(b) {
                if op == ReduceOp::Avg
                    && (a.addends.meets(&b.addends) || a.count != b.count.saturating_mul(j))
                {
                    undecided_at(flat(shape, &i.lo), &|| {
                        average_note(flat(elem_shape, &i.elem), a.count, b.count, j)
                    });
                }
                out.push(Piece {
                    count: a.count.saturating_add(b.count),
                    addends: a.addends.union(&b.addends),
                    ..i
                });
            } else {
                let pos = flat(shape, &i.lo);
                if conflict.is_none_or(|c| pos < c.0) {
                    let eb: Vec<i64> = (0..i.lo.len()).map(|d| i.lo[d] + b.offset(d)).collect();
                    conflict = Some((pos, flat(elem_shape, &i.elem), flat(elem_shape, &eb)));
                }
            }
        }
    }
    if let Some((pos, ea, eb)) = conflict {
        return Err(Fail::At(
            None,
            format!("position {pos}: reduces element #{ea} with element #{eb}"),
        ));
    }
    for (mine, theirs) in [(acc, other), (other, acc)] {
        for p in mine {
            let mut frags = vec![p.clone()];
            for b in theirs.iter().filter(|b| p.clip(&b.lo, &b.len).is_some()) {
                budget.spend(frags.len())?;
                frags = frags.iter().flat_map(|f| f.minus(&b.lo, &b.len)).collect();
            }
            if op != ReduceOp::Sum {
                for f in &frags {
                    undecided_at(flat(shape, &f.lo), &|| {
                        padding_note(flat(elem_shape, &f.elem), op)
                    });
                }
            }
            out.extend(frags);
        }
    }
    if let Some((pos, m)) = undecided {
        return Err(Fail::Limit(format!("position {pos}: {m}")));
    }
    Ok(coalesce(out))
}

/// Runs `plan` on boxes from `start`; `elem_shape` numbers elements in messages as the cell
/// simulator does. The buffers after the last step, or the cell simulator's error.
pub fn run(plan: &Plan, start: Vec<BoxBuffer>, elem_shape: &[i64]) -> Result<Vec<BoxBuffer>, Stop> {
    let mut bufs = start;
    let mut budget = Budget::new();
    for (k, step) in plan.steps.iter().enumerate() {
        bufs = run_step(step, bufs, elem_shape, &mut budget).map_err(|f| match f {
            Fail::At(rank, message) => Stop::Step(SimError {
                step: k,
                rank,
                message,
                limit: false,
            }),
            Fail::Limit(m) => Stop::Limit(format!("step {k}: {m}")),
        })?;
        let total: i64 = bufs.iter().map(|b| b.pieces.len() as i64).sum();
        if total > MAX_BOXES {
            return Err(Stop::Limit(format!(
                "step {k}: the buffers hold {total} boxes; at most {MAX_BOXES}"
            )));
        }
        if let Some(b) = bufs.iter().find(|b| volume(&b.shape).is_none()) {
            return Err(Stop::Limit(format!(
                "step {k}: a buffer of shape {:?} (its size overflows i64)",
                b.shape
            )));
        }
    }
    Ok(bufs)
}

fn same_shape(bufs: &[BoxBuffer], g: &[i64]) -> Result<Vec<i64>, Fail> {
    let s = bufs[g[0] as usize].shape.clone();
    for &r in g {
        if bufs[r as usize].shape != s {
            return Err(Fail::At(
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

fn reduce_all(
    bufs: &[BoxBuffer],
    g: &[i64],
    elem_shape: &[i64],
    op: ReduceOp,
    budget: &mut Budget,
) -> Result<Vec<Piece>, Fail> {
    let shape = &bufs[g[0] as usize].shape;
    let mut acc: Vec<Piece> = bufs[g[0] as usize].pieces.to_vec();
    for (j, &r) in g.iter().enumerate().skip(1) {
        let pieces = &bufs[r as usize].pieces;
        acc = match reduce_pair(&acc, pieces, shape, elem_shape, (op, j as u32), budget) {
            Err(Fail::At(_, m)) => return Err(Fail::At(Some(r), m)),
            other => other?,
        };
    }
    Ok(acc)
}

/// Piece `i` of `p` along `dim` of a buffer of shape `s`: its pieces at the origin, its shape.
fn piece_of(pieces: &[Piece], s: &[i64], dim: usize, p: i64, i: i64) -> (Vec<Piece>, Vec<i64>) {
    let mut shape = s.to_vec();
    shape[dim] /= p;
    let mut from = vec![0; s.len()];
    from[dim] = i * shape[dim];
    let back: Vec<i64> = from.iter().map(|x| -x).collect();
    let v = pieces
        .iter()
        .filter_map(|q| q.clip(&from, &shape))
        .map(|q| q.moved(&back))
        .collect();
    (v, shape)
}

/// Concatenation along `dim` of parts of one shape.
fn concat(parts: Vec<(Vec<Piece>, Vec<i64>)>, dim: usize) -> BoxBuffer {
    let mut shape = parts[0].1.clone();
    let step = shape[dim];
    shape[dim] = step.saturating_mul(parts.len() as i64);
    let mut v = Vec::new();
    for (i, (ps, _)) in parts.into_iter().enumerate() {
        let mut by = vec![0; shape.len()];
        by[dim] = i as i64 * step;
        v.extend(ps.into_iter().map(|p| p.moved(&by)));
    }
    BoxBuffer::new(shape, v)
}

/// A local table cut into runs: `(new start, old start, length)` of consecutive entries.
fn runs(m: &[i64]) -> Vec<(i64, i64, i64)> {
    let mut out: Vec<(i64, i64, i64)> = Vec::new();
    for (u, &v) in m.iter().enumerate() {
        if v < 0 {
            continue;
        }
        match out.last_mut() {
            Some(r) if r.0 + r.2 == u as i64 && r.1 + r.2 == v => r.2 += 1,
            _ => out.push((u as i64, v, 1)),
        }
    }
    out
}

/// Rank `r`'s buffer gathered through its per-dim tables into `shape`.
fn gather(
    old: &BoxBuffer,
    map: &[Vec<i64>],
    shape: &[i64],
    budget: &mut Budget,
) -> Result<BoxBuffer, Fail> {
    let per_dim: Vec<Vec<(i64, i64, i64)>> = map.iter().map(|m| runs(m)).collect();
    let nd = shape.len();
    let mut out = Vec::new();
    for p in old.pieces.iter() {
        // Per dim, the (new start, element start, length) of each run meeting the piece.
        let mut lists: Vec<Vec<(i64, i64, i64)>> = Vec::with_capacity(nd);
        for (d, dim_runs) in per_dim.iter().enumerate() {
            budget.spend(dim_runs.len())?;
            let (plo, phi) = (p.lo[d], p.lo[d] + p.len[d]);
            let l: Vec<(i64, i64, i64)> = dim_runs
                .iter()
                .filter_map(|&(nu, ov, n)| {
                    let (a, b) = (ov.max(plo), (ov + n).min(phi));
                    (a < b).then(|| (nu + a - ov, p.elem[d] + a - plo, b - a))
                })
                .collect();
            if l.is_empty() {
                break;
            }
            lists.push(l);
        }
        if lists.len() < nd {
            continue;
        }
        let total = lists.iter().try_fold(1usize, |a, l| a.checked_mul(l.len()));
        budget.spend(total.unwrap_or(usize::MAX))?;
        let mut idx = vec![0usize; nd];
        'product: loop {
            out.push(Piece {
                lo: (0..nd).map(|d| lists[d][idx[d]].0).collect(),
                elem: (0..nd).map(|d| lists[d][idx[d]].1).collect(),
                len: (0..nd).map(|d| lists[d][idx[d]].2).collect(),
                count: p.count,
                addends: p.addends.clone(),
            });
            let mut d = nd;
            loop {
                if d == 0 {
                    break 'product;
                }
                d -= 1;
                idx[d] += 1;
                if idx[d] < lists[d].len() {
                    continue 'product;
                }
                idx[d] = 0;
            }
        }
    }
    Ok(BoxBuffer::new(shape.to_vec(), out))
}

fn run_step(
    step: &Step,
    mut bufs: Vec<BoxBuffer>,
    elem_shape: &[i64],
    budget: &mut Budget,
) -> Result<Vec<BoxBuffer>, Fail> {
    let n = bufs.len();
    match step {
        Step::AllGather { groups, dim } => {
            check_groups(groups, n)?;
            for g in groups {
                let s = same_shape(&bufs, g)?;
                if *dim >= s.len() {
                    return Err(Fail::At(
                        Some(g[0]),
                        format!("dim {dim} of a {}-D buffer", s.len()),
                    ));
                }
                let parts = g
                    .iter()
                    .map(|&r| (bufs[r as usize].pieces.to_vec(), s.clone()))
                    .collect();
                budget.spend(g.iter().map(|&r| bufs[r as usize].pieces.len()).sum())?;
                let whole = concat(parts, *dim);
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
                    return Err(Fail::At(
                        Some(g[0]),
                        format!("dim {dim} of shape {s:?} does not split into {p} pieces"),
                    ));
                }
                let sum = reduce_all(&bufs, g, elem_shape, *op, budget)?;
                for (i, &r) in g.iter().enumerate() {
                    let (v, shape) = piece_of(&sum, &s, *dim, p, i as i64);
                    bufs[r as usize] = BoxBuffer::new(shape, v);
                }
            }
        }
        Step::AllReduce { groups, op } => {
            check_groups(groups, n)?;
            for g in groups {
                let s = same_shape(&bufs, g)?;
                let sum = BoxBuffer::new(s, reduce_all(&bufs, g, elem_shape, *op, budget)?);
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
                    return Err(Fail::At(
                        Some(g[0]),
                        format!("all-to-all dims {split_dim}/{concat_dim} of shape {s:?} over {p}"),
                    ));
                }
                let old: Vec<Arc<Vec<Piece>>> =
                    g.iter().map(|&r| bufs[r as usize].pieces.clone()).collect();
                for (j, &r) in g.iter().enumerate() {
                    let parts: Vec<(Vec<Piece>, Vec<i64>)> = old
                        .iter()
                        .map(|b| piece_of(b, &s, *split_dim, p, j as i64))
                        .collect();
                    budget.spend(parts.iter().map(|x| x.0.len()).sum())?;
                    bufs[r as usize] = concat(parts, *concat_dim);
                }
            }
        }
        Step::Broadcast { groups, root } => {
            check_groups(groups, n)?;
            for g in groups {
                let Some(&src) = g.get(*root) else {
                    return Err(Fail::At(
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
                return Err(Fail::At(None, format!("shape {shape:?}")));
            }
            let mut out: Vec<Vec<Piece>> = vec![Vec::new(); n];
            for m in messages {
                for r in [m.src, m.dst] {
                    if r < 0 || r as usize >= n {
                        return Err(Fail::At(Some(r), format!("message names rank {r} of {n}")));
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
                    return Err(Fail::At(
                        Some(m.dst),
                        format!("message {} -> {} box out of bounds", m.src, m.dst),
                    ));
                }
                // The box is written over: what the receiver had there is gone, padding included.
                let dst = &mut out[m.dst as usize];
                budget.spend(dst.len() + src.pieces.len())?;
                // Rebuilt only when the box covers some of it (messages are mostly disjoint).
                if dst.iter().any(|p| p.meets(&m.dst_start, &m.len)) {
                    *dst = dst
                        .iter()
                        .flat_map(|p| p.minus(&m.dst_start, &m.len))
                        .collect();
                }
                let by: Vec<i64> = m
                    .dst_start
                    .iter()
                    .zip(&m.src_start)
                    .map(|(d, s)| d - s)
                    .collect();
                dst.extend(
                    src.pieces
                        .iter()
                        .filter_map(|p| p.clip(&m.src_start, &m.len))
                        .map(|p| p.moved(&by)),
                );
            }
            bufs = out
                .into_iter()
                .map(|v| BoxBuffer::new(shape.clone(), v))
                .collect();
        }
        Step::Local { shape, maps } => {
            if maps.len() != n {
                return Err(Fail::At(
                    None,
                    format!("{} local maps for {n} ranks", maps.len()),
                ));
            }
            for (r, map) in maps.iter().enumerate() {
                let old = &bufs[r];
                if map.len() != shape.len() || map.len() != old.shape.len() {
                    return Err(Fail::At(
                        Some(r as i64),
                        "local map rank differs from the buffer's".into(),
                    ));
                }
                for (d, m) in map.iter().enumerate() {
                    if m.len() as i64 != shape[d] || m.iter().any(|&i| i < -1 || i >= old.shape[d])
                    {
                        return Err(Fail::At(
                            Some(r as i64),
                            format!("local map of dim {d} out of range"),
                        ));
                    }
                }
                bufs[r] = gather(old, map, shape, budget)?;
            }
        }
        Step::Zero { ranks } => {
            for &r in ranks {
                let b = bufs
                    .get_mut(r as usize)
                    .ok_or(Fail::At(Some(r), format!("rank {r} of {n}")))?;
                b.pieces = Arc::new(Vec::new());
            }
        }
    }
    Ok(bufs)
}

/// The row-major first cell of the box `[0, ext)` in none of `boxes` (given as `(lo, len)`,
/// clipped to it), if any. A gap first opens at 0 or where a box ends, so only those rows are
/// tried, each by the boxes crossing it.
pub(super) fn first_uncovered(ext: &[i64], boxes: &[(&[i64], &[i64])]) -> Option<Vec<i64>> {
    let Some((&e0, rest)) = ext.split_first() else {
        return boxes.is_empty().then(Vec::new);
    };
    if e0 <= 0 || rest.iter().any(|&e| e <= 0) {
        return None;
    }
    let mut rows: Vec<i64> = vec![0];
    rows.extend(
        boxes
            .iter()
            .map(|(lo, len)| lo[0] + len[0])
            .filter(|&h| h < e0),
    );
    rows.sort_unstable();
    rows.dedup();
    for x in rows {
        let cross: Vec<(&[i64], &[i64])> = boxes
            .iter()
            .filter(|(lo, len)| lo[0] <= x && x < lo[0] + len[0])
            .map(|(lo, len)| (&lo[1..], &len[1..]))
            .collect();
        if let Some(mut c) = first_uncovered(rest, &cross) {
            c.insert(0, x);
            return Some(c);
        }
    }
    None
}

/// Each rank's buffer under layout `l`: its pieces at their local corners (for a boxed layout
/// one piece, its block at the origin of the padded local shape; none on a device that holds
/// nothing).
pub fn initial(l: &MeshLayout) -> Vec<BoxBuffer> {
    let local = l.local_shape();
    (0..l.mesh.size())
        .map(|r| {
            let pieces = l
                .pieces(r)
                .into_iter()
                .map(|(bl, at)| Piece {
                    lo: at,
                    len: bl.iter().map(|(lo, hi)| hi - lo).collect(),
                    elem: bl.iter().map(|b| b.0).collect(),
                    count: 1,
                    addends: Addends::one(l.addend_of(r) as u32),
                })
                .collect();
            BoxBuffer::new(local.clone(), pieces)
        })
        .collect()
}

/// The row-major first cell of `[0, ext)` that no piece of `inside` (clipped to it) covers.
fn gap(ext: &[i64], inside: &[Piece]) -> Option<Vec<i64>> {
    let covered: i64 = inside.iter().map(|p| p.len.iter().product::<i64>()).sum();
    if covered == ext.iter().product::<i64>() {
        return None;
    }
    let boxes: Vec<(&[i64], &[i64])> = inside.iter().map(|p| (&p.lo[..], &p.len[..])).collect();
    first_uncovered(ext, &boxes)
}

fn addend_text(at: &str, count: u32, set: &Addends, n_add: i64) -> String {
    format!(
        "{at} holds {count} addend(s) (set {}) of {n_add}: a partial sum reduced {}",
        set.text(),
        if (count as i64) > n_add {
            "more than once"
        } else {
            "incompletely"
        }
    )
}

/// [`super::check_final`] on boxes: the same places checked, or the same counterexample (the
/// row-major first wrong place of the first wrong device). `Unknown` only past [`MAX_WORK`].
pub fn check_final(
    source: &MeshLayout,
    target: &MeshLayout,
    bufs: &[BoxBuffer],
    dup_ok: bool,
) -> Result<i64, DistError> {
    let mesh = &target.mesh;
    let n_add = source.addends();
    let full = Addends::all(n_add as u32);
    let local = target.local_shape();
    let sum_partial =
        !target.partial.is_empty() && target.partial.values().all(|&o| o == ReduceOp::Sum);
    let ce = |r: i64, x: Option<Vec<i64>>, m: String| {
        DistError::Refuted(DistCounterexample {
            rank: r,
            coords: mesh.coords(r),
            element: x,
            message: m,
        })
    };
    if bufs.len() as i64 != mesh.size() {
        return Err(ce(
            0,
            None,
            format!("{} buffers for {} ranks", bufs.len(), mesh.size()),
        ));
    }
    // Coordinates off the partial axes -> (first rank, block corner, extents, pieces).
    type Group = (i64, Vec<i64>, Vec<i64>, Vec<Vec<Piece>>);
    let mut groups: BTreeMap<Vec<i64>, Group> = BTreeMap::new();
    let mut checked = 0i64;
    let mut budget = Budget::new();
    for r in 0..mesh.size() {
        let b = &bufs[r as usize];
        let target_pieces = target.pieces(r);
        if b.shape != local {
            let first = target_pieces
                .first()
                .map(|(bl, _)| bl.iter().map(|b| b.0).collect());
            return Err(ce(
                r,
                first,
                format!(
                    "buffer shape {:?}; the target's local shape is {local:?}",
                    b.shape
                ),
            ));
        }
        // Each piece the target gives the device, in order (the cell checker's order): its
        // buffer's pieces inside it, moved to the piece's own origin.
        for (k, (bl, at)) in target_pieces.iter().enumerate() {
            let ext: Vec<i64> = bl.iter().map(|(lo, hi)| hi - lo).collect();
            let want: Vec<i64> = bl.iter().map(|b| b.0).collect();
            checked += ext.iter().product::<i64>();
            let back: Vec<i64> = at.iter().map(|x| -x).collect();
            if let Err(Fail::Limit(w) | Fail::At(_, w)) = budget.spend(b.pieces.len()) {
                return Err(DistError::Unknown(w));
            }
            let inside: Vec<Piece> = b
                .pieces
                .iter()
                .filter_map(|p| p.clip(at, &ext))
                .map(|p| p.moved(&back))
                .collect();
            let mut first: Option<(Vec<i64>, String)> = None;
            let mut note = |lc: Vec<i64>, m: String| {
                if first.as_ref().is_none_or(|f| lc < f.0) {
                    first = Some((lc, m));
                }
            };
            let local_at =
                |lc: &[i64]| -> Vec<i64> { lc.iter().zip(at).map(|(a, b)| a + b).collect() };
            for p in &inside {
                let here = format!("local {:?}", local_at(&p.lo));
                if (0..ext.len()).any(|d| p.offset(d) != want[d]) {
                    note(p.lo.clone(), format!("{here} holds element {:?}", p.elem));
                } else if !sum_partial
                    && ((!dup_ok && p.count as i64 != n_add) || p.addends != full)
                {
                    note(p.lo.clone(), addend_text(&here, p.count, &p.addends, n_add));
                }
            }
            if !sum_partial {
                if let Some(lc) = gap(&ext, &inside) {
                    let m = format!("local {:?} holds padding or zero", local_at(&lc));
                    note(lc, m);
                }
            }
            if let Some((lc, m)) = first {
                let x = lc.iter().zip(&want).map(|(a, b)| a + b).collect();
                return Err(ce(r, Some(x), m));
            }
            if sum_partial {
                let c = mesh.coords(r);
                let mut key: Vec<i64> = (0..mesh.ndim())
                    .map(|a| {
                        if target.partial.contains_key(&a) {
                            -1
                        } else {
                            c[a]
                        }
                    })
                    .collect();
                key.push(k as i64);
                groups
                    .entry(key)
                    .or_insert((r, want, ext, Vec::new()))
                    .3
                    .push(inside);
            }
        }
    }
    // The places of one value together: each addend exactly once. The first failing value in
    // (element, group) order, as the cell checker finds it.
    // ((element, group), first rank, message) of the first failing value.
    type Failing = ((Vec<i64>, Vec<i64>), i64, String);
    let mut worst: Option<Failing> = None;
    for (key, (r, want, ext, members)) in groups {
        let mut acc: Vec<Piece> = Vec::new();
        for m in &members {
            acc = match reduce_pair(&acc, m, &ext, &[], (ReduceOp::Sum, 0), &mut budget) {
                Ok(v) => v,
                Err(Fail::Limit(w)) => return Err(DistError::Unknown(w)),
                // Every piece holds the element of its place (checked above): no conflict.
                Err(Fail::At(_, w)) => return Err(DistError::Unknown(w)),
            };
        }
        let mut bad: Option<(Vec<i64>, u32, String)> = acc
            .iter()
            .filter(|p| p.count as i64 != n_add || p.addends != full)
            .map(|p| (p.lo.clone(), p.count, p.addends.text()))
            .min();
        if let Some(lc) = gap(&ext, &acc) {
            if bad.as_ref().is_none_or(|b| lc < b.0) {
                bad = Some((lc, 0, "0x0".into()));
            }
        }
        if let Some((lc, count, set)) = bad {
            let x: Vec<i64> = lc.iter().zip(&want).map(|(a, b)| a + b).collect();
            let k = (x, key);
            if worst.as_ref().is_none_or(|w| k < w.0) {
                let m = format!(
                    "the target's addends of this value hold {count} term(s) (set {set}) of {n_add}"
                );
                worst = Some((k, r, m));
            }
        }
    }
    if let Some(((x, _), r, m)) = worst {
        return Err(ce(r, Some(x), m));
    }
    Ok(checked)
}
