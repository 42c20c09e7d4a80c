//! Propagation (paper algorithm 1, steps 3 and 4): from the anchors, every constraint with
//! exactly one unknown register layout is solved by layout algebra, until none is left.
//!
//! - copy between registers, cast, elementwise: `f_out = f_in` (figure 12 with the identity
//!   instruction: `f = g o q^-1 o p` where `p = q`); an operand of lower rank is `mu o f_out`.
//! - reduce: `g = mu o f` ([`Tv::project`]).
//! - mma: the operands of an mma whose atom and arrangement are chosen are built by
//!   [`mma_layouts`]; an mma with a known operand takes the first arrangement that reproduces
//!   it (`f_A o p_A^-1` must be the arrangement's instance map).
//! - a component with no anchor left is anchored at its widest global copy, coalesced.
//!
//! A constraint whose tensors are all known but disagree is a CONFLICT: the operand is
//! re-distributed through shared memory by an inserted `rearrange`, which is reported.

use std::collections::BTreeMap;

use super::anchor::{
    arrangements, broadcast_dim, coalesced, coalesced_modes, memory_modes, mma_layouts,
    Arrangement, Tv,
};
use super::instr::{Instructions, MmaAtom, Target};
use super::program::{Op, OpKind, Program, Scope, SynthError, Tensor};

/// The mma choice of one operation: atom index and arrangement.
pub type MmaChoice = (usize, Arrangement);

/// A conflict resolved by an inserted rearrange.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conflict {
    /// Line of the operation whose operand disagreed.
    pub line: usize,
    /// The operation.
    pub op: String,
    /// The tensor as produced.
    pub from: String,
    /// The re-distributed copy the operation reads instead.
    pub to: String,
}

/// The result of propagation.
#[derive(Clone, Debug)]
pub struct Propagated {
    /// The program with inserted rearranges.
    pub program: Program,
    /// Every register tensor's layout (None for memory tensors).
    pub tv: Vec<Option<Tv>>,
    /// The mma choices, by operation index.
    pub mma: BTreeMap<usize, MmaChoice>,
    /// Conflicts found.
    pub conflicts: Vec<Conflict>,
}

/// mma atoms usable for `op` on `target`, the fastest (largest k*n) first.
pub fn mma_atoms(p: &Program, op: &Op, target: Target) -> Vec<usize> {
    let ins = Instructions::get().map(|i| &i.mma[..]).unwrap_or(&[]);
    let (a, b, c) = (
        &p.tensors[op.inputs[0]],
        &p.tensors[op.inputs[1]],
        &p.tensors[op.output],
    );
    let mut ids: Vec<usize> = ins
        .iter()
        .enumerate()
        .filter(|(_, m)| {
            m.targets.contains(&target)
                && m.ab.contains(&a.dtype)
                && m.ab.contains(&b.dtype)
                && (m.c == c.dtype)
                && (m.a.is_some() == (a.scope == Scope::Register))
                && (m.b.is_some() == (b.scope == Scope::Register))
                && c.shape[0] % m.shape[0] == 0
                && c.shape[1] % m.shape[1] == 0
                && a.shape[1] % m.shape[2] == 0
                && p.threads % m.threads == 0
        })
        .map(|(i, _)| i)
        .collect();
    ids.sort_by_key(|&i| {
        std::cmp::Reverse((ins[i].kind == "wgmma", ins[i].shape[1] * ins[i].shape[2]))
    });
    ids
}

/// Every (atom, arrangement) for `op`.
pub fn mma_choices(p: &Program, op: &Op, target: Target) -> Vec<MmaChoice> {
    let Ok(ins) = Instructions::get() else {
        return Vec::new();
    };
    let c = &p.tensors[op.output];
    let mut out = Vec::new();
    for i in mma_atoms(p, op, target) {
        let m: &MmaAtom = &ins.mma[i];
        for arr in arrangements(m, c.shape[0], c.shape[1], p.threads / m.threads) {
            out.push((i, arr));
        }
    }
    out
}

struct State {
    program: Program,
    tv: Vec<Option<Tv>>,
    mma: BTreeMap<usize, MmaChoice>,
    conflicts: Vec<Conflict>,
    target: Target,
}

fn same_map(a: &Tv, b: &Tv) -> bool {
    if a == b {
        return true;
    }
    a.shape == b.shape
        && a.nthreads() == b.nthreads()
        && a.nvalues() == b.nvalues()
        && a.table() == b.table()
}

impl State {
    fn reg(&self, i: usize) -> bool {
        self.program.tensors[i].scope == Scope::Register
    }

    /// Whether tensor `i` is the result of a reduce.
    fn reduced(&self, i: usize) -> bool {
        self.program
            .ops
            .iter()
            .any(|op| op.output == i && matches!(op.kind, OpKind::Reduce { .. }))
    }

    /// Makes op `k` read a re-distributed copy of its input slot `slot` with layout `want`.
    fn rearrange(&mut self, k: usize, slot: usize, want: Tv) {
        let src = self.program.ops[k].inputs[slot];
        let t = self.program.tensors[src].clone();
        let mut n = self.conflicts.len() + 1;
        let mut name = format!("{}_r{n}", t.name);
        while self.program.tensor(&name).is_some() {
            n += 1;
            name = format!("{}_r{n}", t.name);
        }
        let line = self.program.ops[k].line;
        self.program.tensors.push(Tensor {
            name: name.clone(),
            line,
            ..t.clone()
        });
        self.tv.push(Some(want));
        let new = self.program.tensors.len() - 1;
        self.program.ops[k].inputs[slot] = new;
        self.program.ops.push(Op {
            kind: OpKind::Rearrange,
            inputs: vec![src],
            output: new,
            line,
        });
        self.conflicts.push(Conflict {
            line,
            op: self.program.ops[k].kind.name().into(),
            from: t.name,
            to: name,
        });
    }

    /// Sets or reconciles input `slot` of op `k` with `want`; true when something changed.
    fn input(&mut self, k: usize, slot: usize, want: Tv) -> bool {
        let i = self.program.ops[k].inputs[slot];
        match &self.tv[i] {
            // A reduction's result is its input's layout with a dimension dropped (the
            // projection claim): it is never set from a consumer. Once the reduce sets it, a
            // consumer that wants another layout reads a rearranged copy.
            None if self.reduced(i) => false,
            None => {
                self.tv[i] = Some(want);
                true
            }
            Some(have) if same_map(have, &want) => false,
            Some(_) => {
                self.rearrange(k, slot, want);
                true
            }
        }
    }

    fn mma_step(&mut self, k: usize) -> Result<bool, SynthError> {
        let op = self.program.ops[k].clone();
        let (a, b, c) = (op.inputs[0], op.inputs[1], op.output);
        let known = |s: &State, i: usize| s.reg(i) && s.tv[i].is_some();
        let choice = match self.mma.get(&k) {
            Some(ch) => *ch,
            None => {
                if !(known(self, a) || known(self, b) || known(self, c)) {
                    return Ok(false);
                }
                let ins = Instructions::get()?;
                let fits = |s: &State, ch: &MmaChoice, strict: bool| -> bool {
                    let Ok((fc, fa, fb)) =
                        mma_layouts(&ins.mma[ch.0], shape3(&s.program, &op), ch.1)
                    else {
                        return false;
                    };
                    let agree = |i: usize, f: &Option<Tv>| match (&s.tv[i], f) {
                        (Some(h), Some(f)) => same_map(h, f),
                        _ => true,
                    };
                    let c_ok = s.tv[c].as_ref().is_none_or(|h| same_map(h, &fc));
                    c_ok && (!strict || agree(a, &fa) && agree(b, &fb))
                };
                let all = mma_choices(&self.program, &op, self.target);
                let pick = all
                    .iter()
                    .find(|ch| fits(self, ch, true))
                    .or_else(|| all.iter().find(|ch| fits(self, ch, false)))
                    .copied()
                    .ok_or_else(|| {
                        mma_error(
                            &self.program,
                            &op,
                            self.target,
                            "no atom arrangement reproduces the accumulator's layout",
                            false,
                        )
                    })?;
                self.mma.insert(k, pick);
                pick
            }
        };
        let ins = Instructions::get()?;
        let (fc, fa, fb) = mma_layouts(&ins.mma[choice.0], shape3(&self.program, &op), choice.1)?;
        let mut changed = false;
        if self.tv[c].is_none() {
            self.tv[c] = Some(fc);
            changed = true;
        } else if !same_map(self.tv[c].as_ref().expect("known"), &fc) {
            return Err(mma_error(
                &self.program,
                &op,
                self.target,
                "the accumulator already has another distribution",
                false,
            ));
        }
        if let Some(fa) = fa {
            changed |= self.input(k, 0, fa);
        }
        if let Some(fb) = fb {
            changed |= self.input(k, 1, fb);
        }
        Ok(changed)
    }

    /// Same-distribution ops: copy (register to register), cast, elementwise.
    fn unify_step(&mut self, k: usize) -> Result<bool, SynthError> {
        let op = self.program.ops[k].clone();
        let out = op.output;
        if self.tv[out].is_none() {
            // Forward from the first full-rank known input.
            let full = op.inputs.iter().copied().find(|&i| {
                self.program.tensors[i].shape == self.program.tensors[out].shape
                    && self.tv[i].is_some()
            });
            match full {
                Some(i) => self.tv[out] = self.tv[i].clone(),
                None => return Ok(false),
            }
            return Ok(true);
        }
        let f = self.tv[out].clone().expect("known");
        let mut changed = false;
        for slot in 0..op.inputs.len() {
            let i = self.program.ops[k].inputs[slot];
            let ts = &self.program.tensors[i].shape;
            let want = if *ts == self.program.tensors[out].shape {
                f.clone()
            } else {
                let dim = broadcast_dim(&f, ts, self.tv[i].as_ref());
                f.project(dim.unwrap_or(1))?
            };
            changed |= self.input(k, slot, want);
        }
        Ok(changed)
    }

    fn step(&mut self, k: usize) -> Result<bool, SynthError> {
        let op = &self.program.ops[k];
        let regs = op.inputs.iter().all(|&i| self.reg(i)) && self.reg(op.output);
        match &op.kind {
            OpKind::Mma => self.mma_step(k),
            OpKind::Copy if regs => self.unify_step(k),
            OpKind::Cast | OpKind::Elementwise(_) => self.unify_step(k),
            OpKind::Reduce { dim, .. } => {
                let (src, dst, dim) = (op.inputs[0], op.output, *dim);
                match (&self.tv[src], &self.tv[dst]) {
                    (Some(f), None) => {
                        self.tv[dst] = Some(f.project(dim)?);
                        Ok(true)
                    }
                    (Some(f), Some(g)) if !same_map(&f.project(dim)?, g) => {
                        let t = &self.program.tensors[dst];
                        Err(SynthError::NotFound {
                            constraint: "reduce projection (mu o f = g)".into(),
                            tensors: format!("{} -> {}", self.program.tensors[src].name, t.name),
                            line: op.line,
                            why: format!(
                                "{} is also written by another operation with another layout; \
                                 the search does not re-distribute a reduction's result",
                                t.name
                            ),
                        })
                    }
                    _ => Ok(false),
                }
            }
            _ => Ok(false),
        }
    }

    /// Gives the first register tensor that nothing determines (and that is no reduction's
    /// result) a plain layout: cells along its last dimension, consecutive threads on
    /// consecutive cells, copies where threads outnumber cells. No constraint asks for more.
    fn anchor_default(&mut self) -> bool {
        let threads = self.program.threads;
        let free = (0..self.program.tensors.len())
            .find(|&i| self.reg(i) && self.tv[i].is_none() && !self.reduced(i));
        let Some(i) = free else {
            return false;
        };
        let shape = &self.program.tensors[i].shape;
        let fast = shape.len().saturating_sub(1).min(1);
        match coalesced(shape, fast, 1, threads) {
            Some(tv) => {
                self.tv[i] = Some(tv);
                true
            }
            None => false,
        }
    }

    /// Anchors the first register tensor still unknown at its widest copy with memory.
    fn anchor_copy(&mut self) -> Result<bool, SynthError> {
        let mut best: Option<(i64, usize, Tv)> = None;
        for op in &self.program.ops {
            if op.kind != OpKind::Copy {
                continue;
            }
            let (s, d) = (op.inputs[0], op.output);
            let (reg, mem) = match (self.reg(s), self.reg(d)) {
                (false, true) => (d, s),
                (true, false) => (s, d),
                _ => continue,
            };
            // A reduction's result follows its input (see `input`).
            if self.tv[reg].is_some() || self.reduced(reg) {
                continue;
            }
            let t = &self.program.tensors[reg];
            let m = &self.program.tensors[mem];
            if let Some((bytes, tv)) = coalesced_for(m, t, self.program.threads)? {
                if best.as_ref().is_none_or(|b| bytes > b.0) {
                    best = Some((bytes, reg, tv));
                }
            }
        }
        match best {
            Some((_, reg, tv)) => {
                self.tv[reg] = Some(tv);
                Ok(true)
            }
            None => Ok(false),
        }
    }
}

fn shape3(p: &Program, op: &Op) -> [i64; 3] {
    let c = &p.tensors[op.output].shape;
    [c[0], c[1], p.tensors[op.inputs[0]].shape[1]]
}

/// The infeasibility of an mma, naming the constraint and tensors: `why` must be a proof
/// (no atom of the target can compute this product at all).
pub fn infeasible_mma(p: &Program, op: &Op, target: Target, why: &str) -> SynthError {
    mma_error(p, op, target, why, true)
}

/// An mma the search found no plan for (`proved`: and none exists).
pub fn mma_error(p: &Program, op: &Op, target: Target, why: &str, proved: bool) -> SynthError {
    let n = |i: usize| {
        let t = &p.tensors[i];
        format!("{} {} {:?} in {}", t.name, t.dtype, t.shape, t.scope.name())
    };
    let constraint = format!("mma operand agreement (figure 12: projections of f_C o p_C^-1, f_A o p_A^-1, f_B o p_B^-1) on {}", target.name());
    let tensors = format!(
        "C = {}, A = {}, B = {}",
        n(op.output),
        n(op.inputs[0]),
        n(op.inputs[1])
    );
    if proved {
        SynthError::Infeasible {
            constraint,
            tensors,
            line: op.line,
            why: why.into(),
        }
    } else {
        SynthError::NotFound {
            constraint,
            tensors,
            line: op.line,
            why: format!(
                "{why} (the search tries each atom over grid warp arrangements only, and \
                 propagates from its anchors without revisiting their choices)"
            ),
        }
    }
}

/// The coalesced layout of register tensor `t` copied with memory tensor `m`: vectors as wide
/// as the memory's contiguity allows (at most 16 bytes), along its unit-stride dimension;
/// returns the bytes per thread access and the layout.
pub fn coalesced_for(
    m: &Tensor,
    t: &Tensor,
    threads: i64,
) -> Result<Option<(i64, Tv)>, SynthError> {
    let table = match &m.layout {
        Some(l) => Some(super::smem::table_of(l, &m.shape)?),
        None => None,
    };
    let dims: Vec<usize> = if t.shape.len() == 1 {
        vec![0]
    } else {
        vec![1, 0]
    };
    let modes = m.layout.as_ref().and_then(|l| memory_modes(l, &m.shape));
    let cells: i64 = t.shape.iter().product();
    // Every width along each unit-stride dimension, then along the memory's own contiguous run
    // (which may cross dimensions: 4 i8 of `[64, 2]` rows `(2, 1)` are two rows). The fewest
    // copies of each cell win (threads beyond the cells' vectors hold copies), then the
    // widest vector, then the first found.
    let mut best: Option<(i64, i64, Tv)> = None;
    let mut vec = (128 / t.dtype.bits()).max(1);
    let mut found = Vec::new();
    while vec >= 1 {
        if vec * t.dtype.bits() >= 8 || vec == 1 {
            for &fast in &dims {
                found.extend(coalesced(&t.shape, fast, vec, threads).map(|tv| (vec, tv)));
            }
            if let Some(modes) = &modes {
                found.extend(coalesced_modes(modes, &t.shape, vec, threads).map(|tv| (vec, tv)));
            }
        }
        vec /= 2;
    }
    for (vec, tv) in found {
        let ok = match &table {
            Some(tab) => super::plan::vector_ok(&tv.table(), tv.nvalues(), tab, vec),
            None => true,
        };
        let bytes = (vec * t.dtype.bits() / 8).max(1);
        let copies = (tv.nthreads() * tv.nvalues()) / cells.max(1);
        if ok && best.as_ref().is_none_or(|b| (copies, -bytes) < (b.0, -b.1)) {
            best = Some((copies, bytes, tv));
        }
    }
    let best = best.map(|(_, bytes, tv)| (bytes, tv));
    Ok(best)
}

/// Propagates from the mma `anchors` to every register tensor of `p`.
pub fn propagate(
    p: &Program,
    target: Target,
    anchors: &BTreeMap<usize, MmaChoice>,
) -> Result<Propagated, SynthError> {
    let mut s = State {
        program: p.clone(),
        tv: vec![None; p.tensors.len()],
        mma: anchors.clone(),
        conflicts: Vec::new(),
        target,
    };
    let mut rounds = 0;
    loop {
        rounds += 1;
        if rounds > 4 * (s.program.ops.len() + s.program.tensors.len()) + 8 {
            return Err(SynthError::Internal("propagation does not converge".into()));
        }
        let mut changed = false;
        for k in 0..s.program.ops.len() {
            changed |= s.step(k)?;
        }
        if changed {
            continue;
        }
        if s.anchor_copy()? || s.anchor_default() {
            continue;
        }
        // Unconstrained rearrange outputs keep their input's distribution.
        let mut any = false;
        for k in 0..s.program.ops.len() {
            let op = &s.program.ops[k];
            if op.kind == OpKind::Rearrange
                && s.tv[op.output].is_none()
                && s.tv[op.inputs[0]].is_some()
            {
                s.tv[op.output] = s.tv[op.inputs[0]].clone();
                any = true;
            }
        }
        if !any {
            break;
        }
    }
    // Register-to-register copies between different layouts become rearranges.
    for k in 0..s.program.ops.len() {
        let op = s.program.ops[k].clone();
        if op.kind == OpKind::Copy && s.reg(op.inputs[0]) && s.reg(op.output) {
            if let (Some(a), Some(b)) = (&s.tv[op.inputs[0]], &s.tv[op.output]) {
                if !same_map(a, b) {
                    s.program.ops[k].kind = OpKind::Rearrange;
                    s.conflicts.push(Conflict {
                        line: op.line,
                        op: "copy".into(),
                        from: s.program.tensors[op.inputs[0]].name.clone(),
                        to: s.program.tensors[op.output].name.clone(),
                    });
                }
            }
        }
    }
    for (i, t) in s.program.tensors.iter().enumerate() {
        // Every register tensor has a layout over the program's threads: the anchors build
        // them so, and propagation keeps the thread count. Anything else is a solver bug, not
        // a property of the program.
        if t.scope == Scope::Register {
            let n = s.tv[i].as_ref().map_or(0, |f| f.nthreads());
            if n != p.threads {
                return Err(SynthError::Internal(format!(
                    "register tensor {}: its layout spans {n} threads, the program has {}",
                    t.name, p.threads
                )));
            }
        }
    }
    Ok(Propagated {
        program: s.program,
        tv: s.tv,
        mma: s.mma,
        conflicts: s.conflicts,
    })
}
