//! [`synthesize`]: a tile program to a certified plan.
//!
//! 1. the DAG and its components ([`super::graph`]); shared capacity of declared tiles;
//! 2. depth-first search over the mma anchors (atom x warp arrangement), backtracking past
//!    any choice whose propagation ([`super::propagate`]) or instruction selection fails;
//! 3. per surviving choice: rearranges become shared-memory round trips, every shared buffer
//!    gets its candidates ([`super::smem`]), every access its feasible instructions with
//!    predicted traffic, and the integer program ([`super::cost`]) picks the cheapest;
//! 4. the cheapest plan over all anchor choices is certified: its claims go to
//!    [`certify::synthesis::check`], which re-decides every one from the layouts alone.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::rc::Rc;

use certify::synthesis::{
    smem_limit, SmemAllocation, SynthClaim, SynthOp, SynthTensor, SynthesisCertificate, VERSION,
};
use layout::Layout;

use super::anchor::{coalesced, coalesced_modes, memory_modes, Tv};
use super::cost::{solve, AccessCosts, Choice, Traffic};
use super::graph::Dag;
use super::instr::{CopyKind, Instructions, Target};
use super::program::{Elem, Op, OpKind, Program, Scope, SynthError, Tensor};
use super::propagate::{mma_choices, propagate, Conflict, MmaChoice, Propagated};
use super::smem::{candidates, Candidate};

/// Most anchor combinations the search visits.
pub const MAX_ANCHOR_COMBINATIONS: usize = 64;

/// One instruction option of an operation.
#[derive(Clone, Debug)]
pub struct OpOption {
    /// Instruction name.
    pub instruction: String,
    /// The claims it relies on.
    pub claims: Vec<SynthClaim>,
    /// Predicted traffic.
    pub traffic: Traffic,
}

/// A synthesized, certified plan.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The program with inserted rearranges (as shared-memory round trips).
    pub program: Program,
    /// Target.
    pub target: Target,
    /// Register layouts (None for memory tensors).
    pub tv: Vec<Option<Tv>>,
    /// Memory layout of every memory tensor (given or chosen).
    pub memory: Vec<Option<Layout>>,
    /// Label of the chosen shared layout (swizzle / canonical atom).
    pub smem_label: BTreeMap<usize, String>,
    /// Chosen option per operation.
    pub chosen: Vec<OpOption>,
    /// The mma choices.
    pub mma: BTreeMap<usize, MmaChoice>,
    /// Conflicts resolved by rearranges.
    pub conflicts: Vec<Conflict>,
    /// Total cost (the integer program's objective plus registers and rearranges).
    pub cost: f64,
    /// 32-bit registers per thread held by the register tensors.
    pub registers: i64,
    /// Anchor combinations explored, and how many were feasible.
    pub explored: (usize, usize),
    /// The certificate (already checked by certify).
    pub certificate: SynthesisCertificate,
}

/// True when every group of `w` consecutive values of every thread of `reg` (a t-major table
/// of `nv` values per thread) sits at `w` consecutive memory elements starting at a multiple
/// of `w`.
///
/// A single value always does. A warp's slice of `reg` equal to an earlier warp's is not
/// checked again (broadcast operands repeat whole warps).
pub fn vector_ok(reg: &[i64], nv: i64, mem: &[i64], w: i64) -> bool {
    if w < 1 || nv % w != 0 {
        return false;
    }
    // A single value is a vector of one; without values there is nothing to check.
    if w == 1 || nv == 0 {
        return true;
    }
    let vectors_ok = |slice: &[i64]| {
        slice.chunks(w as usize).all(|g| {
            let a0 = mem[g[0] as usize];
            a0 % w == 0
                && g.iter()
                    .enumerate()
                    .all(|(e, &c)| mem[c as usize] == a0 + e as i64)
        })
    };
    let warps: Vec<&[i64]> = reg.chunks(32 * nv as usize).collect();
    warps
        .iter()
        .enumerate()
        .all(|(i, slice)| warps[..i].contains(slice) || vectors_ok(slice))
}

fn sectors(addrs: &[i64], bytes: i64) -> i64 {
    let mut s: Vec<i64> = Vec::with_capacity(addrs.len() * 2);
    for &a in addrs {
        s.push(a.div_euclid(32));
        s.push((a + bytes - 1).div_euclid(32));
    }
    s.sort_unstable();
    s.dedup();
    s.len() as i64
}

/// Wavefronts of one warp access under `layout::bank`'s model (32 banks of 4 bytes; phases of
/// 32, 16 or 8 lanes for 1-4, 8 and 16-byte accesses; distinct words per bank), without its
/// allocations: the search calls this millions of times. A phase touches at most 32 words
/// (32 lanes x 1 word, 16 x 2 or 8 x 4), so its distinct words are kept in short per-bank
/// chains on the stack and a phase costs its longest chain. A test checks it against
/// [`layout::bank::wavefronts`] on random accesses.
pub fn fast_wavefronts(addrs: &[i64], access: i64) -> i64 {
    let (per_phase, words) = phase(access);
    if per_phase as i64 * words > 32 {
        return fast_wavefronts_sorted(addrs, access);
    }
    let mut total = 0;
    for phase in addrs.chunks(per_phase) {
        // The phase's distinct words (at most 32), chained per bank: `head[bank]` is the last
        // word of that bank, `prev[i]` the one before word `i` (NONE ends a chain).
        const NONE: u8 = u8::MAX;
        let mut word = [0i64; 32];
        let mut prev = [NONE; 32];
        let mut head = [NONE; 32];
        let mut per_bank = [0i64; 32];
        let mut n = 0;
        let mut worst = 0;
        for &a in phase {
            let first = a / 4;
            for w in first..first + words {
                let bank = w.rem_euclid(32) as usize;
                let mut i = head[bank];
                while i != NONE && word[i as usize] != w {
                    i = prev[i as usize];
                }
                if i == NONE {
                    word[n] = w;
                    prev[n] = head[bank];
                    head[bank] = n as u8;
                    n += 1;
                    per_bank[bank] += 1;
                    worst = worst.max(per_bank[bank]);
                }
            }
        }
        total += worst;
    }
    total
}

/// Lanes per phase and 4-byte words per lane of an `access`-byte shared-memory access.
fn phase(access: i64) -> (usize, i64) {
    let lanes = match access {
        8 => 16,
        16 => 8,
        _ => 32,
    };
    (lanes, (access + 3) / 4)
}

/// [`fast_wavefronts`] by sorting `(bank, word)` keys, for accesses whose phase touches more
/// than 32 words (none of the target's instructions).
fn fast_wavefronts_sorted(addrs: &[i64], access: i64) -> i64 {
    let (per_phase, words) = phase(access);
    let mut total = 0;
    let mut buf: Vec<(i64, i64)> = Vec::with_capacity(128);
    for phase in addrs.chunks(per_phase) {
        buf.clear();
        for &a in phase {
            let first = a / 4;
            buf.extend((first..first + words).map(|w| (w.rem_euclid(32), w)));
        }
        buf.sort_unstable();
        buf.dedup();
        let mut worst = 0;
        let mut run = 0;
        for i in 0..buf.len() {
            run = if i > 0 && buf[i].0 == buf[i - 1].0 {
                run + 1
            } else {
                1
            };
            worst = worst.max(run);
        }
        total += worst;
    }
    total
}

/// The sum over warps of `per_warp(warp)`, for a t-major `reg` table of `nv` values per
/// thread; None as soon as one warp gives None. A warp whose slice of `reg` equals an earlier
/// warp's holds the same cells, so it issues the same accesses: its traffic is the earlier
/// warp's, not computed again (an operand broadcast over a warp axis has such repeats).
fn sum_over_warps(
    reg: &[i64],
    nt: i64,
    nv: i64,
    mut per_warp: impl FnMut(i64) -> Option<Traffic>,
) -> Option<Traffic> {
    let len = (32 * nv) as usize;
    let slice = |w: i64| &reg[w as usize * len..(w as usize + 1) * len];
    let mut done: Vec<(i64, Traffic)> = Vec::new();
    let mut total = Traffic::ZERO;
    for w in 0..nt / 32 {
        match done.iter().find(|(v, _)| slice(*v) == slice(w)) {
            Some((_, t)) => total += t,
            None => {
                let t = per_warp(w)?;
                total += &t;
                done.push((w, t));
            }
        }
    }
    Some(total)
}

/// Traffic of a vector access of `w` elements per thread (`smem`: bank model, else sectors).
fn vector_traffic(
    reg: &[i64],
    nt: i64,
    nv: i64,
    mem: &[i64],
    w: i64,
    bits: i64,
    smem: bool,
) -> Traffic {
    let bytes = (w * bits / 8).max(1);
    let per_warp = |warp: i64| {
        let mut t = Traffic::ZERO;
        for g in 0..nv / w {
            let mut addrs = [0i64; 32];
            for (l, a) in (0i64..).zip(addrs.iter_mut()) {
                *a = mem[reg[((warp * 32 + l) * nv + g * w) as usize] as usize] * bits / 8;
            }
            t.instructions += 1;
            if smem {
                t.wavefronts += fast_wavefronts(&addrs, bytes);
                t.ideal += ((32 * bytes + 127) / 128).max(1);
            } else {
                t.sectors += sectors(&addrs, bytes);
            }
        }
        Some(t)
    };
    // Every warp has a traffic: the sum is never None.
    sum_over_warps(reg, nt, nv, per_warp).unwrap_or(Traffic::ZERO)
}

/// Traffic of ldmatrix/stmatrix x`count`, or None when the addresses do not fit.
fn ldmatrix_traffic(
    reg: &[i64],
    nt: i64,
    nv: i64,
    mem: &[i64],
    count: i64,
    trans: bool,
) -> Option<Traffic> {
    if nv % (2 * count) != 0 || nt % 32 != 0 {
        return None;
    }
    let per_warp = |w: i64| {
        let mut t = Traffic::ZERO;
        for i in 0..nv / (2 * count) {
            t.instructions += 1;
            for j in 0..count {
                let mut rows = [0i64; 8];
                for (r, row) in (0i64..).zip(rows.iter_mut()) {
                    let mut addr = [0i64; 8];
                    for (c, a) in (0i64..).zip(addr.iter_mut()) {
                        let (lane, v) = certify::synthesis::ldmatrix_holder(j, r, c, trans);
                        *a = mem[reg[((32 * w + lane) * nv + i * 2 * count + v) as usize] as usize];
                    }
                    if addr[0] % 8 != 0
                        || addr
                            .iter()
                            .enumerate()
                            .any(|(e, &a)| a != addr[0] + e as i64)
                    {
                        return None;
                    }
                    *row = addr[0] * 2;
                }
                t.wavefronts += fast_wavefronts(&rows, 16);
                t.ideal += 1;
            }
        }
        Some(t)
    };
    sum_over_warps(reg, nt, nv, per_warp)
}

fn tensor_desc(t: &Tensor) -> String {
    format!("{} {} {:?} in {}", t.name, t.dtype, t.shape, t.scope.name())
}

/// The instruction options of one access for one layout of its buffer, shared (not copied)
/// between the memo and every anchor choice that has them.
type Options = Rc<Vec<OpOption>>;

/// A shared buffer's candidate layouts and the bytes each occupies.
type BufferCandidates = (Rc<Vec<Candidate>>, Rc<Vec<i64>>);

/// Results shared across anchor choices: candidate lists, memory and register tables and
/// instruction options depend only on the tensors' layouts, which many anchor choices share.
/// Shared by reference counting: an anchor choice copies none of them.
#[derive(Default)]
pub struct Memo {
    cands: RefCell<HashMap<String, BufferCandidates>>,
    globals: RefCell<HashMap<String, Rc<Vec<i64>>>>,
    registers: RefCell<HashMap<Tv, Rc<Vec<i64>>>>,
    programs: RefCell<HashMap<IpInput, Option<Choice>>>,
    options: RefCell<HashMap<OptionsKey, Options>>,
    sharing: RefCell<HashMap<(Tv, Tv), Sharing>>,
}

/// What the instruction options of an access depend on: the tensors (by name; a memory
/// tensor's table is fixed by its name and, for a shared buffer, the candidate's label) and
/// the register layout up to the order of its warps ([`Tv::warp_canonical`]). The order of
/// warps does not matter: an option's instruction and claims name only tensors, its
/// feasibility holds for every warp's accesses and its traffic sums over warps, and layouts
/// with the same canonical form hold the same warp slices. Compared exactly, so two accesses
/// share options only when equal.
#[derive(PartialEq, Eq, Hash)]
enum OptionsKey {
    RegMem {
        reg: String,
        memory: String,
        load: bool,
        label: Option<String>,
        layout: Tv,
    },
    GlobalShared {
        global: String,
        shared: String,
        label: String,
    },
}

/// [`AccessCosts::costs`] by the bits of each cost.
type CostBits = Vec<Vec<Option<u64>>>;

/// The exact input of one integer program (costs by their bits): equal inputs have the same
/// solution, since the solver is deterministic, so anchor choices that produce the same costs
/// (most arrangements tie) solve it once.
#[derive(PartialEq, Eq, Hash)]
struct IpInput {
    sizes: Vec<(usize, Vec<i64>)>,
    /// Per access: its buffer and its `[candidate][option]` costs, by their bits.
    accesses: Vec<(Option<usize>, CostBits)>,
    capacity: i64,
}

impl Memo {
    /// [`sharing`], once per pair of layouts.
    fn sharing(&self, src: &Tv, dst: &Tv) -> Sharing {
        let key = (src.clone(), dst.clone());
        if let Some(&r) = self.sharing.borrow().get(&key) {
            return r;
        }
        let r = sharing(src, dst);
        self.sharing.borrow_mut().insert(key, r);
        r
    }

    fn solve(
        &self,
        sizes: &[(usize, Vec<i64>)],
        accesses: &[AccessCosts],
        capacity: i64,
    ) -> Result<Option<Choice>, SynthError> {
        let input = IpInput {
            sizes: sizes.to_vec(),
            accesses: accesses
                .iter()
                .map(|a| {
                    let costs = a
                        .costs
                        .iter()
                        .map(|o| o.iter().map(|c| c.map(f64::to_bits)).collect())
                        .collect();
                    (a.buffer, costs)
                })
                .collect(),
            capacity,
        };
        if let Some(c) = self.programs.borrow().get(&input) {
            return Ok(c.clone());
        }
        let c = solve(sizes, accesses, capacity)?;
        self.programs.borrow_mut().insert(input, c.clone());
        Ok(c)
    }
}

struct Ctx<'a> {
    memo: &'a Memo,
    p: &'a Program,
    target: Target,
    tables: Vec<Option<Rc<Vec<i64>>>>,
    tv: &'a [Option<Tv>],
}

impl Ctx<'_> {
    fn reg_table(&self, i: usize) -> (&[i64], i64, i64) {
        let tv = self.tv[i].as_ref().expect("register layouts are known");
        (
            self.tables[i].as_deref().expect("tabled").as_slice(),
            tv.nthreads(),
            tv.nvalues(),
        )
    }

    /// Options of a copy between register tensor `r` and memory tensor `m` (table `mem`).
    fn reg_mem_options(
        &self,
        r: usize,
        m: usize,
        mem: &[i64],
        load: bool,
        cand: Option<&Candidate>,
    ) -> Result<Options, SynthError> {
        let key = OptionsKey::RegMem {
            reg: self.p.tensors[r].name.clone(),
            memory: self.p.tensors[m].name.clone(),
            load,
            label: cand.map(|c| c.label.clone()),
            layout: self.tv[r]
                .as_ref()
                .expect("register layouts are known")
                .warp_canonical(),
        };
        if let Some(o) = self.memo.options.borrow().get(&key) {
            return Ok(o.clone());
        }
        let o = Rc::new(self.reg_mem_options_uncached(r, m, mem, load)?);
        self.memo.options.borrow_mut().insert(key, o.clone());
        Ok(o)
    }

    fn reg_mem_options_uncached(
        &self,
        r: usize,
        m: usize,
        mem: &[i64],
        load: bool,
    ) -> Result<Vec<OpOption>, SynthError> {
        let ins = Instructions::get()?;
        let (reg, nt, nv) = self.reg_table(r);
        let (tr, tm) = (&self.p.tensors[r], &self.p.tensors[m]);
        let bits = tm.dtype.bits();
        let shared = tm.scope == Scope::Shared;
        let mut out = Vec::new();
        if shared && bits == 16 {
            let kind = if load {
                CopyKind::Ldmatrix
            } else {
                CopyKind::Stmatrix
            };
            let mut done = BTreeSet::new();
            let mut by_width: Vec<_> = ins.copies(kind, self.target).collect();
            by_width.sort_by_key(|c| std::cmp::Reverse(c.count));
            for c in by_width {
                // A narrower ldmatrix than a feasible wider one only adds instructions.
                if done.contains(&c.trans) {
                    continue;
                }
                if let Some(traffic) = ldmatrix_traffic(reg, nt, nv, mem, c.count, c.trans) {
                    done.insert(c.trans);
                    out.push(OpOption {
                        instruction: c.name.clone(),
                        claims: vec![SynthClaim::Ldmatrix {
                            reg: tr.name.clone(),
                            memory: tm.name.clone(),
                            count: c.count,
                            trans: c.trans,
                        }],
                        traffic,
                    });
                }
            }
        }
        let kind = match (shared, load) {
            (true, true) => CopyKind::LdShared,
            (true, false) => CopyKind::StShared,
            (false, true) => CopyKind::LdGlobal,
            (false, false) => CopyKind::StGlobal,
        };
        for c in ins.copies(kind, self.target) {
            if c.bits % bits != 0 {
                continue;
            }
            let w = c.bits / bits;
            if vector_ok(reg, nv, mem, w) {
                out.push(OpOption {
                    instruction: c.name.clone(),
                    claims: vec![SynthClaim::Vector {
                        reg: tr.name.clone(),
                        memory: tm.name.clone(),
                        width: w,
                    }],
                    traffic: vector_traffic(reg, nt, nv, mem, w, bits, shared),
                });
                // Narrower vectors of the same layout only add instructions (the instruction
                // file lists widths widest first).
                break;
            }
        }
        if bits < 8 && out.is_empty() && vector_ok(reg, nv, mem, 8 / bits) {
            // Sub-byte elements move at least one byte at a time.
        }
        Ok(out)
    }

    /// Options of a copy global `g` -> shared `s` laid out as `cand`.
    fn global_shared_options(
        &self,
        g: usize,
        s: usize,
        cand: &Candidate,
    ) -> Result<Options, SynthError> {
        let key = OptionsKey::GlobalShared {
            global: self.p.tensors[g].name.clone(),
            shared: self.p.tensors[s].name.clone(),
            label: cand.label.clone(),
        };
        if let Some(o) = self.memo.options.borrow().get(&key) {
            return Ok(o.clone());
        }
        let o = Rc::new(self.global_shared_options_uncached(g, s, cand)?);
        self.memo.options.borrow_mut().insert(key, o.clone());
        Ok(o)
    }

    fn global_shared_options_uncached(
        &self,
        g: usize,
        s: usize,
        cand: &Candidate,
    ) -> Result<Vec<OpOption>, SynthError> {
        let ins = Instructions::get()?;
        let (tg, ts) = (&self.p.tensors[g], &self.p.tensors[s]);
        let gmem = self.tables[g].as_deref().expect("global tabled").as_slice();
        let bits = tg.dtype.bits();
        let mut out = Vec::new();
        for c in ins.copies(CopyKind::CpAsync, self.target) {
            if c.bits % bits != 0 {
                continue;
            }
            let w = c.bits / bits;
            // Vectors along a unit-stride dimension, else along the global's own contiguous
            // run (which may cross rows).
            let dims: &[usize] = if tg.shape.len() == 2 { &[1, 0] } else { &[0] };
            let along_modes = tg
                .layout
                .as_ref()
                .and_then(|l| memory_modes(l, &tg.shape))
                .and_then(|m| coalesced_modes(&m, &tg.shape, w, self.p.threads));
            let tvs = dims
                .iter()
                .filter_map(|&fast| coalesced(&tg.shape, fast, w, self.p.threads))
                .chain(along_modes);
            for tv in tvs {
                let table = tv.table();
                if vector_ok(&table, tv.nvalues(), gmem, w)
                    && vector_ok(&table, tv.nvalues(), &cand.table, w)
                {
                    let mut traffic = vector_traffic(
                        &table,
                        tv.nthreads(),
                        tv.nvalues(),
                        &cand.table,
                        w,
                        bits,
                        true,
                    );
                    traffic.sectors =
                        vector_traffic(&table, tv.nthreads(), tv.nvalues(), gmem, w, bits, false)
                            .sectors;
                    out.push(OpOption {
                        instruction: c.name.clone(),
                        claims: vec![SynthClaim::Transfer {
                            src: tg.name.clone(),
                            dst: ts.name.clone(),
                            tv: tv.to_layout()?.to_string(),
                            width: w,
                        }],
                        traffic,
                    });
                    break;
                }
            }
        }
        if let Some((atom_name, atom_text)) = &cand.canonical {
            for c in ins.copies(CopyKind::Tma, self.target) {
                let same = c.swizzle_atom.as_ref().is_some_and(|(n, _)| n == atom_name);
                // The box's inner dimension must be contiguous, 16-byte aligned rows.
                let w = 128 / bits;
                let rows_ok = coalesced(&tg.shape, 1, w, 32)
                    .is_some_and(|tv| vector_ok(&tv.table(), tv.nvalues(), gmem, w));
                if same && rows_ok {
                    let bytes = tg.shape.iter().product::<i64>() * bits / 8;
                    out.push(OpOption {
                        instruction: c.name.clone(),
                        claims: vec![SynthClaim::Canonical {
                            tensor: ts.name.clone(),
                            atom_name: atom_name.clone(),
                            atom: atom_text.clone(),
                        }],
                        traffic: Traffic {
                            instructions: 1,
                            wavefronts: bytes / 128,
                            ideal: bytes / 128,
                            sectors: bytes / 32,
                            extra: 0,
                        },
                    });
                }
            }
        }
        Ok(out)
    }
}

fn swizzle_penalty(label: &str) -> i64 {
    if label.contains("SW128") {
        0
    } else if label.contains("SW64") {
        1
    } else if label.contains("SW32") {
        2
    } else {
        4
    }
}

/// Rewrites each rearrange `y = rearrange(x)` into `copy(x, y_smem); copy(y_smem, y)`.
fn expand_rearranges(
    p: &mut Program,
    tv: &mut Vec<Option<Tv>>,
    mma: &mut BTreeMap<usize, MmaChoice>,
) {
    let mut ops = Vec::new();
    let mut moved = BTreeMap::new();
    for (k, op) in std::mem::take(&mut p.ops).into_iter().enumerate() {
        if let Some(ch) = mma.get(&k) {
            moved.insert(ops.len(), *ch);
        }
        if op.kind == OpKind::Rearrange {
            let y = p.tensors[op.output].clone();
            let name = p.rearrange_buffer(&y.name);
            p.tensors.push(Tensor {
                name,
                scope: Scope::Shared,
                layout: None,
                bounds: None,
                ..y
            });
            tv.push(None);
            let s = p.tensors.len() - 1;
            ops.push(Op {
                kind: OpKind::Copy,
                inputs: op.inputs.clone(),
                output: s,
                line: op.line,
            });
            ops.push(Op {
                kind: OpKind::Copy,
                inputs: vec![s],
                output: op.output,
                line: op.line,
            });
        } else {
            ops.push(op);
        }
    }
    p.ops = ops;
    *mma = moved;
}

/// The option set of every operation for one propagated program; the integer program picks.
/// `capacity` bounds the sum of the shared buffers' bytes (the budget, or no bound where a
/// kernel's allocation is checked exactly on the chosen plan).
fn select(pr: Propagated, target: Target, memo: &Memo, capacity: i64) -> Result<Plan, SynthError> {
    let Propagated {
        mut program,
        mut tv,
        mut mma,
        conflicts,
    } = pr;
    expand_rearranges(&mut program, &mut tv, &mut mma);
    let p = &program;
    let ins = Instructions::get()?;
    let mut tables: Vec<Option<Rc<Vec<i64>>>> = vec![None; p.tensors.len()];
    for (i, t) in p.tensors.iter().enumerate() {
        tables[i] = match (t.scope, &tv[i], &t.layout) {
            (Scope::Register, Some(f), _) => {
                let cached = memo.registers.borrow().get(f).cloned();
                Some(cached.unwrap_or_else(|| {
                    let tab = Rc::new(f.table());
                    memo.registers.borrow_mut().insert(f.clone(), tab.clone());
                    tab
                }))
            }
            (Scope::Global, _, Some(l)) => {
                let cached = memo.globals.borrow().get(&t.name).cloned();
                let tab = match cached {
                    Some(tab) => tab,
                    None => {
                        let tab = Rc::new(super::smem::table_of(l, &t.shape)?);
                        memo.globals
                            .borrow_mut()
                            .insert(t.name.clone(), tab.clone());
                        tab
                    }
                };
                Some(tab)
            }
            _ => None,
        };
    }
    // Shared buffers and what their accesses want.
    let buffers: Vec<usize> = (0..p.tensors.len())
        .filter(|&i| p.tensors[i].scope == Scope::Shared)
        .collect();
    let mut cands: Vec<Rc<Vec<Candidate>>> = Vec::new();
    let mut cand_bytes: Vec<Rc<Vec<i64>>> = Vec::new();
    for &b in &buffers {
        let t = &p.tensors[b];
        let mut fast = BTreeSet::new();
        let mut canonical_only = false;
        for op in &p.ops {
            let touches = op.output == b || op.inputs.contains(&b);
            if !touches {
                continue;
            }
            if op.kind == OpKind::Mma {
                canonical_only = true;
            }
            for &o in op.inputs.iter().chain([&op.output]) {
                if o == b {
                    continue;
                }
                if let Some(l) = &p.tensors[o].layout {
                    // A given layout's unit-stride dimension.
                    if let Layout::Cute(c) = l {
                        for (d, m) in c.modes().iter().enumerate() {
                            if m.flat_modes().iter().any(|&(e, s)| s == 1 && e > 1) {
                                fast.insert(d);
                            }
                        }
                    } else {
                        fast.insert(t.shape.len() - 1);
                    }
                } else {
                    fast.insert(t.shape.len() - 1);
                    if t.shape.len() == 2 {
                        fast.insert(0);
                    }
                }
            }
        }
        if fast.is_empty() {
            fast.insert(t.shape.len() - 1);
        }
        let atoms: Vec<(String, layout::SwizzledLayout)> = ins
            .copies(CopyKind::Tma, target)
            .filter_map(|c| {
                c.swizzle_atom
                    .as_ref()
                    .and_then(|(n, _)| c.atom_in(t.dtype.bits()).map(|a| (n.clone(), a)))
            })
            .collect();
        let vec = (128 / t.dtype.bits()).max(1);
        let fast: Vec<usize> = fast.into_iter().collect();
        let ckey = format!(
            "{} {:?} {} {:?} {canonical_only}",
            t.name, t.shape, t.dtype, fast
        );
        let cached = memo.cands.borrow().get(&ckey).cloned();
        let (cs, bytes) = match cached {
            Some(cached) => cached,
            None => {
                let mut cs = candidates(t, vec, &fast, &atoms)?;
                if canonical_only {
                    cs.retain(|c| c.canonical.is_some() || t.layout.is_some());
                } else if t.layout.is_none() {
                    // The order of each global copied in, where no candidate has it already:
                    // it keeps every contiguous run of the global contiguous and aligned.
                    for op in &p.ops {
                        let g = op.inputs[0];
                        let from_global = op.kind == OpKind::Copy
                            && op.output == b
                            && p.tensors[g].scope == Scope::Global;
                        let Some(l) = p.tensors[g].layout.as_ref().filter(|_| from_global) else {
                            continue;
                        };
                        if let Some(c) = super::smem::storage_order(l, &t.shape)? {
                            if cs.iter().all(|o| o.table != c.table) {
                                cs.push(c);
                            }
                        }
                    }
                }
                let bits = t.dtype.bits();
                let bytes = cs
                    .iter()
                    .map(|c| (c.table.iter().max().copied().unwrap_or(0) + 1) * bits / 8)
                    .collect();
                let cached = (Rc::new(cs), Rc::new(bytes));
                memo.cands.borrow_mut().insert(ckey, cached.clone());
                cached
            }
        };
        cands.push(cs);
        cand_bytes.push(bytes);
    }
    let ctx = Ctx {
        memo,
        p,
        target,
        tables,
        tv: &tv,
    };
    // Per operation: access costs and the options behind them.
    let mut accesses = Vec::new();
    let mut options: Vec<Vec<Options>> = Vec::new();
    for (k, op) in p.ops.iter().enumerate() {
        let (bidx, per): (Option<usize>, Vec<Options>) =
            op_options(&ctx, k, op, &buffers, &cands, &mma)?;
        if per.iter().all(|o| o.is_empty()) {
            return Err(no_instruction(&ctx, op, &buffers, &cands)?);
        }
        accesses.push(AccessCosts {
            buffer: bidx,
            costs: per
                .iter()
                .map(|o| o.iter().map(|x| Some(x.traffic.cost())).collect())
                .collect(),
        });
        options.push(per);
    }
    // A second shared operand of a wgmma is its own access of its own buffer.
    let mut extras = Vec::new();
    for (k, op) in p.ops.iter().enumerate() {
        if op.kind != OpKind::Mma {
            continue;
        }
        let shared: Vec<usize> = op
            .inputs
            .iter()
            .copied()
            .filter(|&x| p.tensors[x].scope == Scope::Shared)
            .collect();
        for &y in shared.iter().skip(1) {
            let Some(bi) = buffers.iter().position(|&b| b == y) else {
                continue;
            };
            let count = accesses[k]
                .costs
                .iter()
                .flatten()
                .flatten()
                .next()
                .map_or(1.0, |_| 1.0);
            let per: Vec<Options> = cands[bi]
                .iter()
                .map(|c| match &c.canonical {
                    Some((an, at)) => Rc::new(vec![OpOption {
                        instruction: String::new(),
                        claims: vec![SynthClaim::Canonical {
                            tensor: p.tensors[y].name.clone(),
                            atom_name: an.clone(),
                            atom: at.clone(),
                        }],
                        traffic: Traffic {
                            instructions: 0,
                            wavefronts: 0,
                            ideal: 0,
                            sectors: 0,
                            extra: swizzle_penalty(an) * (count as i64),
                        },
                    }]),
                    None => Options::default(),
                })
                .collect();
            accesses.push(AccessCosts {
                buffer: Some(bi),
                costs: per
                    .iter()
                    .map(|o| o.iter().map(|x| Some(x.traffic.cost())).collect())
                    .collect(),
            });
            options.push(per);
            extras.push(k);
        }
    }
    let sizes: Vec<(usize, Vec<i64>)> = cand_bytes
        .iter()
        .map(|bytes| (bytes.len(), bytes.as_ref().clone()))
        .collect();
    let choice = memo
        .solve(&sizes, &accesses, capacity)?
        .ok_or_else(|| SynthError::NotFound {
            constraint: "instruction selection".into(),
            tensors: buffers
                .iter()
                .map(|&b| p.tensors[b].name.clone())
                .collect::<Vec<_>>()
                .join(", "),
            line: 0,
            why: "no combination of the searched shared layouts (row- and column-major \
                      orders, their swizzles, the globals' orders, canonical atoms) admits an \
                      instruction for every access within the shared-memory capacity"
                .into(),
        })?;
    let mut memory: Vec<Option<Layout>> = p.tensors.iter().map(|t| t.layout.clone()).collect();
    let mut smem_label = BTreeMap::new();
    for (k, &b) in buffers.iter().enumerate() {
        let c = &cands[k][choice.buffers[k]];
        memory[b] = Some(c.layout.clone());
        smem_label.insert(b, c.label.clone());
    }
    let pick = |k: usize| {
        let s = accesses[k].buffer.map_or(0, |b| choice.buffers[b]);
        options[k][s][choice.options[k]].clone()
    };
    let mut chosen: Vec<OpOption> = (0..p.ops.len()).map(pick).collect();
    for (e, &k) in extras.iter().enumerate() {
        let extra = pick(p.ops.len() + e);
        chosen[k].claims.extend(extra.claims);
        chosen[k].traffic.extra += extra.traffic.extra;
    }
    let registers: i64 = p
        .tensors
        .iter()
        .zip(&tv)
        .filter_map(|(t, f)| f.as_ref().map(|f| (f.nvalues() * t.dtype.bits() + 31) / 32))
        .sum();
    let cost = choice.cost + registers as f64 + 32.0 * conflicts.len() as f64;
    Ok(Plan {
        program,
        target,
        tv,
        memory,
        smem_label,
        chosen,
        mma,
        conflicts,
        cost,
        registers,
        explored: (0, 0),
        certificate: empty_certificate(),
    })
}

fn empty_certificate() -> SynthesisCertificate {
    SynthesisCertificate {
        version: VERSION,
        kind: "synthesis".into(),
        program: String::new(),
        source: None,
        target: String::new(),
        threads: 0,
        tensors: Vec::new(),
        ops: Vec::new(),
        smem: None,
        kernel: None,
        claims: Vec::new(),
        verdict: "proved".into(),
        digest: String::new(),
    }
}

/// The error of an operation no instruction was found for: infeasible where an obstruction
/// proves that none exists ([`super::obstruction`]) or the target has no instruction between
/// its scopes, else not found.
fn no_instruction(
    ctx: &Ctx<'_>,
    op: &Op,
    buffers: &[usize],
    cands: &[Rc<Vec<Candidate>>],
) -> Result<SynthError, SynthError> {
    let (p, target) = (ctx.p, ctx.target);
    let names: Vec<String> = op
        .inputs
        .iter()
        .chain([&op.output])
        .map(|&i| tensor_desc(&p.tensors[i]))
        .collect();
    let (s, d) = (op.inputs[0], op.output);
    let (src, dst) = (&p.tensors[s], &p.tensors[d]);
    // A memory tensor's table when the program fixes it: a global, or a shared tensor with a
    // given layout.
    let fixed = |i: usize| -> Option<&[i64]> {
        match p.tensors[i].scope {
            Scope::Global => ctx.tables[i].as_deref().map(Vec::as_slice),
            Scope::Shared if p.tensors[i].layout.is_some() => buffers
                .iter()
                .position(|&b| b == i)
                .and_then(|k| cands[k].first())
                .map(|c| c.table.as_slice()),
            _ => None,
        }
    };
    let proof: Option<String> = match (op.kind.name(), src.scope, dst.scope) {
        ("copy", Scope::Global, Scope::Shared) => match fixed(s) {
            Some(g) => super::obstruction::global_to_shared(src, g, fixed(d), target)?,
            None => None,
        },
        ("copy", Scope::Shared, Scope::Global) => Some(
            "no instruction of the target copies shared to global memory (TMA stores are not \
             in the instruction table); stage it through a register tensor"
                .into(),
        ),
        ("copy", Scope::Global, Scope::Global) | ("copy", Scope::Shared, Scope::Shared) => {
            Some(format!(
                "no instruction of the target copies {} to {} memory; stage it through a \
                 register tensor",
                src.scope.name(),
                dst.scope.name()
            ))
        }
        ("copy", Scope::Register, _) | ("copy", _, Scope::Register) => {
            let m = if src.scope == Scope::Register { d } else { s };
            match fixed(m) {
                Some(t) => super::obstruction::register_memory(&p.tensors[m], t, target)?,
                None => None,
            }
        }
        _ => None,
    };
    let constraint = format!(
        "{} instruction (operand layout of the instruction, {})",
        op.kind.name(),
        target.name()
    );
    Ok(match proof {
        Some(why) => SynthError::Infeasible {
            constraint,
            tensors: names.join(" -> "),
            line: op.line,
            why,
        },
        None => SynthError::NotFound {
            constraint,
            tensors: names.join(" -> "),
            line: op.line,
            why: match op.kind.name() {
                "mma" => "the shared operand of a wgmma must be a canonical GMMA layout, and \
                          no searched one (the TMA swizzle atoms tiled column-major) fits"
                    .into(),
                _ => "no searched layout (the anchors' register layouts; row- and column-major \
                      shared orders, their swizzles, the globals' orders) admits an instruction \
                      of the target"
                    .into(),
            },
        },
    })
}

#[allow(clippy::type_complexity)]
fn op_options(
    ctx: &Ctx<'_>,
    k: usize,
    op: &Op,
    buffers: &[usize],
    cands: &[Rc<Vec<Candidate>>],
    mma: &BTreeMap<usize, MmaChoice>,
) -> Result<(Option<usize>, Vec<Options>), SynthError> {
    let p = ctx.p;
    let ins = Instructions::get()?;
    let scope = |i: usize| p.tensors[i].scope;
    let bidx = |i: usize| buffers.iter().position(|&b| b == i);
    let name = |i: usize| p.tensors[i].name.clone();
    let one = |o: OpOption| Ok((None, vec![Rc::new(vec![o])]));
    let free = Traffic::ZERO;
    match &op.kind {
        OpKind::Mma => {
            let (ai, arr) = mma
                .get(&k)
                .copied()
                .ok_or_else(|| SynthError::Internal("mma without a choice".into()))?;
            let atom = &ins.mma[ai];
            let (a, b, c) = (op.inputs[0], op.inputs[1], op.output);
            let [m, n] = p.tensors[c].shape[..] else {
                return Err(SynthError::Internal("mma C".into()));
            };
            let kk = p.tensors[a].shape[1];
            let count = m * n * kk
                / (atom.shape[0] * atom.shape[1] * atom.shape[2])
                / (p.threads / atom.threads);
            let claim = SynthClaim::Mma {
                c: name(c),
                a: name(a),
                b: name(b),
                atom: atom.name.clone(),
                shape: atom.shape,
                threads: atom.threads,
                pa: atom.a.as_ref().map(|l| l.to_string()),
                pb: atom.b.as_ref().map(|l| l.to_string()),
                pc: atom.c_layout.to_string(),
            };
            let label = format!(
                "{} (warps {}x{}{})",
                atom.name,
                arr.wm,
                arr.wn,
                if arr.interleaved { " interleaved" } else { "" }
            );
            // A shared operand: a canonical candidate of its buffer is required.
            let shared = [a, b].into_iter().find(|&x| scope(x) == Scope::Shared);
            match shared.and_then(bidx) {
                Some(bi) => {
                    let per = cands[bi]
                        .iter()
                        .map(|cand| match &cand.canonical {
                            Some((an, at)) => {
                                let x = shared.expect("shared operand");
                                let claims = vec![
                                    claim.clone(),
                                    SynthClaim::Canonical {
                                        tensor: name(x),
                                        atom_name: an.clone(),
                                        atom: at.clone(),
                                    },
                                ];
                                Rc::new(vec![OpOption {
                                    instruction: label.clone(),
                                    claims,
                                    traffic: Traffic {
                                        instructions: count,
                                        extra: count * swizzle_penalty(an),
                                        ..free.clone()
                                    },
                                }])
                            }
                            None => Options::default(),
                        })
                        .collect();
                    Ok((Some(bi), per))
                }
                None => one(OpOption {
                    instruction: label,
                    claims: vec![claim],
                    traffic: Traffic {
                        instructions: count,
                        ..free
                    },
                }),
            }
        }
        OpKind::Copy => {
            let (s, d) = (op.inputs[0], op.output);
            match (scope(s), scope(d)) {
                (Scope::Register, Scope::Register) => one(OpOption {
                    instruction: "mov (registers)".into(),
                    claims: vec![SynthClaim::SameDistribution {
                        a: name(s),
                        b: name(d),
                    }],
                    traffic: free,
                }),
                (Scope::Global, Scope::Register) | (Scope::Register, Scope::Global) => {
                    let (r, g) = if scope(s) == Scope::Register {
                        (s, d)
                    } else {
                        (d, s)
                    };
                    let mem = ctx.tables[g].as_deref().expect("global tabled").as_slice();
                    Ok((None, vec![ctx.reg_mem_options(r, g, mem, r == d, None)?]))
                }
                (Scope::Shared, Scope::Register) | (Scope::Register, Scope::Shared) => {
                    let (r, sh) = if scope(s) == Scope::Register {
                        (s, d)
                    } else {
                        (d, s)
                    };
                    let bi = bidx(sh).expect("buffer");
                    let per = cands[bi]
                        .iter()
                        .map(|c| ctx.reg_mem_options(r, sh, &c.table, r == d, Some(c)))
                        .collect::<Result<Vec<_>, _>>()?;
                    Ok((Some(bi), per))
                }
                (Scope::Global, Scope::Shared) => {
                    let bi = bidx(d).expect("buffer");
                    let per = cands[bi]
                        .iter()
                        .map(|c| ctx.global_shared_options(s, d, c))
                        .collect::<Result<Vec<_>, _>>()?;
                    Ok((Some(bi), per))
                }
                _ => Ok((None, vec![Options::default()])),
            }
        }
        OpKind::Cast | OpKind::Elementwise(_) => {
            let out = op.output;
            let claims = op
                .inputs
                .iter()
                .map(|&i| {
                    if p.tensors[i].shape == p.tensors[out].shape {
                        SynthClaim::SameDistribution {
                            a: name(i),
                            b: name(out),
                        }
                    } else {
                        let dim = ctx.tv[out]
                            .as_ref()
                            .and_then(|f| {
                                super::anchor::broadcast_dim(
                                    f,
                                    &p.tensors[i].shape,
                                    ctx.tv[i].as_ref(),
                                )
                            })
                            .unwrap_or(1);
                        SynthClaim::Projection {
                            src: name(out),
                            dst: name(i),
                            dim,
                        }
                    }
                })
                .collect();
            let nv = ctx.tv[out].as_ref().map_or(0, |f| f.nvalues());
            let instruction = match &op.kind {
                OpKind::Cast => cvt_name(p.tensors[op.inputs[0]].dtype, p.tensors[out].dtype),
                OpKind::Elementwise(f) => format!("{f} (per register)"),
                _ => unreachable!(),
            };
            one(OpOption {
                instruction,
                claims,
                traffic: Traffic {
                    instructions: nv * (p.threads / 32),
                    ..free
                },
            })
        }
        OpKind::Reduce { dim, f } => {
            let (src, dst) = (op.inputs[0], op.output);
            let tvs = ctx.tv[src].as_ref().expect("known");
            let g = ctx.tv[dst].as_ref().expect("known");
            let (partials, cross_warp, copies) = ctx.memo.sharing(tvs, g);
            let steps = 63 - (partials.max(1) as u64).leading_zeros() as i64;
            let instruction = format!(
                "{f}: per-thread fold, {} shfl.bfly step(s){}{}",
                steps,
                if copies > 1 {
                    format!(
                        " over the {partials} threads with distinct cells (each cell is held by \
                         {copies} threads: the steps skip the copies)"
                    )
                } else {
                    String::new()
                },
                if cross_warp {
                    " + shared-memory exchange across warps"
                } else {
                    ""
                }
            );
            one(OpOption {
                instruction,
                claims: vec![SynthClaim::Projection {
                    src: name(src),
                    dst: name(dst),
                    dim: *dim,
                }],
                traffic: Traffic {
                    instructions: tvs.nvalues() + steps * g.nvalues(),
                    extra: if cross_warp { 32 } else { 0 },
                    ..free
                },
            })
        }
        OpKind::Rearrange => Ok((None, vec![Options::default()])),
    }
}

/// How a reduction from `src` to `dst` combines: the most threads holding one output cell (cell
/// `dst.cell(t, v)` over `src`'s threads and values), which butterfly shuffles combine, and
/// whether some cell's holders span warps. 1 and false when there is no cell.
/// A reduction's exchange: the most distinct partials of one result cell, whether some cell's
/// holders span warps, and the most copies of one partial.
type Sharing = (i64, bool, i64);

fn sharing(src: &Tv, dst: &Tv) -> Sharing {
    // The threads holding each result cell, and the source cells each folds into it: threads
    // folding the same source cells are copies (a broadcast lane bit) and hold one partial,
    // which the exchange must take once (a butterfly over a copy would add it twice to a sum).
    let (nt, nv) = (src.nthreads(), src.nvalues());
    let (s_tab, d_tab) = (src.table(), dst.table());
    let mut held: BTreeMap<(i64, i64), Vec<i64>> = BTreeMap::new();
    for t in 0..nt {
        for v in 0..nv {
            let k = (t * nv + v) as usize;
            held.entry((d_tab[k], t)).or_default().push(s_tab[k]);
        }
    }
    let mut by_cell: BTreeMap<i64, Vec<(i64, Vec<i64>)>> = BTreeMap::new();
    for ((d, t), mut cells) in held {
        cells.sort_unstable();
        cells.dedup();
        by_cell.entry(d).or_default().push((t, cells));
    }
    let (mut partials, mut cross_warp, mut copies) = (1, false, 1);
    for holders in by_cell.values() {
        // Sorted by thread within a cell: the first and last holders bound its warps.
        cross_warp |= holders[0].0 / 32 != holders[holders.len() - 1].0 / 32;
        let distinct: BTreeSet<&Vec<i64>> = holders.iter().map(|(_, c)| c).collect();
        partials = partials.max(distinct.len() as i64);
        copies = copies.max(holders.len() as i64 / distinct.len().max(1) as i64);
    }
    (partials, cross_warp, copies)
}

fn cvt_name(from: Elem, to: Elem) -> String {
    match (from, to) {
        (Elem::I4 | Elem::U4, Elem::F16 | Elem::Bf16) => {
            format!("lop3 + sub.f16x2 ({from} -> {to}, 8 per 32-bit word, register-local)")
        }
        _ => format!("cvt.rn.{to}.{from}"),
    }
}

/// Synthesizes and certifies a plan for `p` on `target`.
///
/// ```
/// use solver::synth::{synthesize, Program, Target};
/// let p = Program::parse(
///     "threads 128\nx_g = global_view(f32, [64, 64], (64,64):(64,1))\n\
///      x = register_tensor(f32, [64, 64])\ncopy(x_g, x)\n\
///      y_g = global_view(f32, [64, 64], (64,64):(64,1))\ncopy(x, y_g)\n")?;
/// let plan = synthesize(&p, Target::Sm80)?;
/// assert_eq!(plan.chosen[0].instruction, "ld.global.v4.b32");
/// assert!(certify::synthesis::check(&plan.certificate.to_json()).is_ok());
/// # Ok::<(), solver::synth::SynthError>(())
/// ```
pub fn synthesize(p: &Program, target: Target) -> Result<Plan, SynthError> {
    synthesize_in(p, target, None)
}

/// [`synthesize`] for a kernel that allocates its dynamic shared memory as `smem` says
/// (pipeline stages, buffers reused after the main loop, alignment slack) within `smem.budget`
/// bytes instead of the target's limit: the certificate carries the allocation, and its
/// capacity claim is the allocation's size against that budget (`laycert check` re-derives
/// the size from the tensors). A plan whose allocation exceeds the budget is infeasible.
///
/// ```
/// use certify::synthesis::{SmemAllocation, SmemBuffer, SynthClaim};
/// use solver::synth::{synthesize_allocated, Program, Target};
/// let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"),
///     "/../corpus/data/programs/gemm_f16_sm80.tile")).unwrap();
/// let p = Program::parse(&text)?;
/// // Three stages of a_s and b_s (128 x 32 f16 each), 1 KiB of alignment.
/// let ring = vec![SmemBuffer::new("a_s", 3), SmemBuffer::new("b_s", 3)];
/// let smem = SmemAllocation { budget: 100_000, phases: vec![ring], align: 1024 };
/// let plan = synthesize_allocated(&p, Target::Sm80, &smem)?;
/// assert!(plan.certificate.claims.contains(&SynthClaim::Capacity {
///     bytes: 3 * (8192 + 8192) + 1024,
///     limit: 100_000,
/// }));
/// # Ok::<(), solver::synth::SynthError>(())
/// ```
pub fn synthesize_allocated(
    p: &Program,
    target: Target,
    smem: &SmemAllocation,
) -> Result<Plan, SynthError> {
    synthesize_in(p, target, Some(smem))
}

fn synthesize_in(
    p: &Program,
    target: Target,
    smem: Option<&SmemAllocation>,
) -> Result<Plan, SynthError> {
    Dag::new(p)?;
    // One copy of every shared tensor against the target's limit, or, for a kernel's
    // allocation (whose phases may reuse bytes), its exact size on the chosen plan.
    let capacity = match smem {
        None => {
            capacity_precheck(p, target)?;
            smem_limit(target.name()).unwrap_or(0)
        }
        Some(_) => i64::MAX >> 16,
    };
    // Anchor combinations: one (atom, arrangement) per anchor mma (the first mma of each
    // component; later mmas follow by propagation).
    let dag = Dag::new(p)?;
    let (comp, _) = dag.components(p);
    let mut seen = BTreeSet::new();
    let mut anchor_ops = Vec::new();
    for (k, op) in p.ops.iter().enumerate() {
        if op.kind == OpKind::Mma && seen.insert(comp[op.output]) {
            anchor_ops.push(k);
        }
    }
    let lists: Vec<Vec<MmaChoice>> = anchor_ops
        .iter()
        .map(|&k| mma_choices(p, &p.ops[k], target))
        .collect();
    for (&k, l) in anchor_ops.iter().zip(&lists) {
        if l.is_empty() {
            return Err(mma_infeasible_reason(p, &p.ops[k], target));
        }
    }
    let memo = Memo::default();
    let mut best: Option<Plan> = None;
    let mut last_err: Option<SynthError> = None;
    let mut explored = 0usize;
    let mut feasible = 0usize;
    let mut idx = vec![0usize; lists.len()];
    // Depth-first over the anchors' choices (an odometer: the last anchor varies fastest);
    // a failing combination backtracks to the next.
    loop {
        if explored >= MAX_ANCHOR_COMBINATIONS {
            break;
        }
        explored += 1;
        let anchors: BTreeMap<usize, MmaChoice> = anchor_ops
            .iter()
            .zip(&idx)
            .zip(&lists)
            .map(|((&k, &i), l)| (k, l[i]))
            .collect();
        match propagate(p, target, &anchors).and_then(|pr| select(pr, target, &memo, capacity)) {
            Ok(plan) => {
                feasible += 1;
                if best.as_ref().is_none_or(|b| plan.cost < b.cost - 1e-9) {
                    best = Some(plan);
                }
            }
            Err(e @ SynthError::Internal(_)) => return Err(e),
            // A proof (infeasible) holds for every anchor choice: keep the first one over any
            // later failure to find a plan.
            Err(e) => {
                if !matches!(last_err, Some(SynthError::Infeasible { .. })) {
                    last_err = Some(e);
                }
            }
        }
        let mut d = lists.len();
        loop {
            if d == 0 {
                break;
            }
            d -= 1;
            idx[d] += 1;
            if idx[d] < lists[d].len() {
                break;
            }
            idx[d] = 0;
            if d == 0 {
                d = usize::MAX;
                break;
            }
        }
        if d == usize::MAX || lists.is_empty() {
            break;
        }
    }
    let cut_off = explored >= MAX_ANCHOR_COMBINATIONS && !lists.is_empty();
    let mut plan = best.ok_or_else(|| match last_err {
        Some(SynthError::NotFound {
            constraint,
            tensors,
            line,
            why,
        }) if cut_off => SynthError::NotFound {
            constraint,
            tensors,
            line,
            why: format!(
                "{why}; the search stopped after {MAX_ANCHOR_COMBINATIONS} anchor combinations"
            ),
        },
        Some(e) => e,
        None => SynthError::Internal("no anchor combination".into()),
    })?;
    plan.explored = (explored, feasible);
    plan.certificate = certificate(p, &plan, smem)?;
    certify::synthesis::check(&plan.certificate.to_json()).map_err(SynthError::Certify)?;
    Ok(plan)
}

fn mma_infeasible_reason(p: &Program, op: &Op, target: Target) -> SynthError {
    let ins = Instructions::get()
        .map(|i| i.mma.clone())
        .unwrap_or_default();
    let (a, c) = (&p.tensors[op.inputs[0]], &p.tensors[op.output]);
    let mut why = Vec::new();
    let mut proved = true;
    for m in ins
        .iter()
        .filter(|m| m.targets.contains(&target) && m.ab.contains(&a.dtype))
    {
        let [am, an, ak] = m.shape;
        let (mm, nn, kk) = (c.shape[0], c.shape[1], a.shape[1]);
        let groups = p.threads / m.threads;
        let b = &p.tensors[op.inputs[1]];
        let reason = if p.threads % m.threads != 0 {
            format!(
                "runs on whole groups of {} threads, the program has {}",
                m.threads, p.threads
            )
        } else if !m.ab.contains(&b.dtype) {
            format!("multiplies {:?}, B is {}", m.ab, b.dtype)
        } else if m.c != c.dtype {
            format!("accumulates in {}, C is {}", m.c, c.dtype)
        } else if mm % am != 0 || nn % an != 0 || kk % ak != 0 {
            format!("({mm},{nn},{kk}) is not whole {am}x{an}x{ak} atoms")
        } else if (m.a.is_some()) != (a.scope == Scope::Register) {
            format!(
                "reads A from {}",
                if m.a.is_some() {
                    "registers"
                } else {
                    "shared memory"
                }
            )
        } else if (m.b.is_some()) != (b.scope == Scope::Register) {
            format!(
                "reads B from {}",
                if m.b.is_some() {
                    "registers"
                } else {
                    "shared memory"
                }
            )
        } else if (mm / am) * (nn / an) % groups.max(1) != 0 || groups == 0 {
            format!(
                "{} atom blocks of C cannot be shared evenly by {groups} thread groups of {}",
                (mm / am) * (nn / an),
                m.threads
            )
        } else {
            // The search's arrangements are grids `wm x wn` of warps; a C that only another
            // assignment of blocks to groups tiles is not searched.
            proved = false;
            "no grid arrangement of the thread groups tiles C".into()
        };
        why.push(format!("{}: {reason}", m.name));
    }
    if why.is_empty() {
        why.push(format!(
            "no {} mma takes {} operands",
            target.name(),
            a.dtype
        ));
    }
    super::propagate::mma_error(p, op, target, &why.join("; "), proved)
}

fn capacity_precheck(p: &Program, target: Target) -> Result<(), SynthError> {
    let limit = smem_limit(target.name()).unwrap_or(0);
    let shared: Vec<&Tensor> = p
        .tensors
        .iter()
        .filter(|t| t.scope == Scope::Shared)
        .collect();
    let bytes: i64 = shared
        .iter()
        .map(|t| t.shape.iter().product::<i64>() * t.dtype.bits() / 8)
        .sum();
    if bytes > limit {
        return Err(SynthError::Infeasible {
            constraint: format!(
                "shared-memory capacity ({} bytes per CTA on {})",
                limit,
                target.name()
            ),
            tensors: shared
                .iter()
                .map(|t| {
                    format!(
                        "{} {} {:?} = {} B",
                        t.name,
                        t.dtype,
                        t.shape,
                        t.shape.iter().product::<i64>() * t.dtype.bits() / 8
                    )
                })
                .collect::<Vec<_>>()
                .join(", "),
            line: shared.iter().map(|t| t.line).max().unwrap_or(0),
            why: format!(
                "the shared tiles need {bytes} bytes, {} more than the target has",
                bytes - limit
            ),
        });
    }
    Ok(())
}

/// The plan's certificate: every tensor with its layout, every operation with its instruction,
/// and every claim the plan relies on.
fn certificate(
    orig: &Program,
    plan: &Plan,
    smem: Option<&SmemAllocation>,
) -> Result<SynthesisCertificate, SynthError> {
    let p = &plan.program;
    let mut tensors = Vec::new();
    let mut claims: Vec<SynthClaim> = Vec::new();
    let mut shared_bytes = 0i64;
    for (i, t) in p.tensors.iter().enumerate() {
        let layout = match (&plan.tv[i], &plan.memory[i]) {
            (Some(f), _) => f.to_layout()?.to_string(),
            (None, Some(l)) => l.print(),
            (None, None) => return Err(SynthError::Internal(format!("{} has no layout", t.name))),
        };
        if t.scope == Scope::Register {
            let f = plan.tv[i].as_ref().expect("register");
            let mut tab = f.table();
            tab.sort_unstable();
            tab.dedup();
            claims.push(SynthClaim::Distribution {
                tensor: t.name.clone(),
                exclusive: tab.len() as i64 == f.nthreads() * f.nvalues(),
            });
        }
        // A stored global view: distinct cells at distinct addresses (no racing writes; the
        // program checks it, the certificate carries it).
        if t.scope == Scope::Global && p.ops.iter().any(|op| op.output == i) {
            claims.push(SynthClaim::Injective {
                tensor: t.name.clone(),
            });
        }
        if t.scope == Scope::Shared {
            claims.push(SynthClaim::Injective {
                tensor: t.name.clone(),
            });
            let tab = super::smem::table_of(plan.memory[i].as_ref().expect("shared"), &t.shape)?;
            shared_bytes += ((tab.iter().max().copied().unwrap_or(0) + 1) * t.dtype.bits() + 7) / 8;
        }
        tensors.push(SynthTensor {
            name: t.name.clone(),
            scope: t.scope.name().into(),
            dtype: t.dtype.name().into(),
            bits: t.dtype.bits(),
            shape: t.shape.clone(),
            layout,
            bounds: t.bounds.clone(),
        });
    }
    // The capacity claim follows the tensors' claims.
    let capacity_at = claims.len();
    let mut ops = Vec::new();
    for (op, ch) in p.ops.iter().zip(&plan.chosen) {
        ops.push(SynthOp {
            line: op.line,
            op: op.kind.name().into(),
            inputs: op
                .inputs
                .iter()
                .map(|&i| p.tensors[i].name.clone())
                .collect(),
            output: p.tensors[op.output].name.clone(),
            instruction: ch.instruction.clone(),
        });
        for c in &ch.claims {
            if !claims.contains(c) {
                claims.push(c.clone());
            }
        }
    }
    let mut cert = SynthesisCertificate {
        version: VERSION,
        kind: "synthesis".into(),
        program: orig.name.clone(),
        source: orig.source.clone(),
        target: plan.target.name().into(),
        threads: orig.threads,
        tensors,
        ops,
        smem: smem.cloned(),
        kernel: None,
        claims,
        verdict: "proved".into(),
        digest: String::new(),
    };
    let (bytes, limit) = match smem {
        None => (shared_bytes, smem_limit(plan.target.name()).unwrap_or(0)),
        Some(a) => {
            let bytes = certify::synthesis::smem_bytes(&cert)
                .map_err(|e| SynthError::Internal(format!("the kernel's allocation: {e}")))?;
            if bytes > a.budget {
                return Err(over_budget(&cert, a, bytes));
            }
            (bytes, a.budget)
        }
    };
    cert.claims
        .insert(capacity_at, SynthClaim::Capacity { bytes, limit });
    Ok(cert.seal())
}

/// A kernel's allocation over its budget: which buffers, how many bytes.
fn over_budget(cert: &SynthesisCertificate, a: &SmemAllocation, bytes: i64) -> SynthError {
    let phases: Vec<String> = a
        .phases
        .iter()
        .map(|ph| {
            ph.iter()
                .map(|b| format!("{} x {}", b.copies, b.tensor))
                .collect::<Vec<_>>()
                .join(" + ")
        })
        .collect();
    SynthError::Infeasible {
        constraint: format!("shared-memory capacity ({} bytes per CTA)", a.budget),
        tensors: phases.join(", then "),
        line: cert.ops.last().map_or(0, |o| o.line),
        why: format!(
            "the kernel allocates {bytes} bytes (the largest phase plus {} bytes of alignment), \
             {} more than its budget",
            a.align,
            bytes - a.budget
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn fast_wavefronts_agrees_with_the_bank_model(
            seed in proptest::collection::vec(0i64..512, 32),
            access in prop::sample::select(vec![1i64, 2, 4, 8, 16]),
        ) {
            let addrs: Vec<i64> = seed.iter().map(|&x| x * access).collect();
            let reference = layout::bank::wavefronts(
                &addrs.iter().map(|&a| Some(a)).collect::<Vec<_>>(), access as u32).unwrap();
            prop_assert_eq!(fast_wavefronts(&addrs, access), i64::from(reference));
            prop_assert_eq!(fast_wavefronts_sorted(&addrs, access), i64::from(reference));
        }
    }

    #[test]
    fn a_repeated_warp_costs_what_its_first_copy_costs() {
        // Two warps; warp 1 holds exactly warp 0's cells (a broadcast along the warp axis),
        // read column-wise from a 32x32 row-major f32 tile (32-way conflicts per access).
        let nv = 4;
        let warp0: Vec<i64> = (0..32 * nv).map(|i| (i % nv) * 32 + i / nv).collect();
        let reg: Vec<i64> = warp0.iter().chain(&warp0).copied().collect();
        let mem: Vec<i64> = (0..1024).map(|c| (c % 32) * 32 + c / 32).collect();
        let one = vector_traffic(&warp0, 32, nv, &mem, 1, 32, true);
        assert_eq!(one.wavefronts, 4 * 32);
        let mut two = one.clone();
        two += &one;
        assert_eq!(vector_traffic(&reg, 64, nv, &mem, 1, 32, true), two);
        // A different second warp is computed on its own: here conflict-free rows.
        let rows: Vec<i64> = (0..32 * nv).map(|i| (i / nv) * 32 + i % nv + 8).collect();
        let mixed: Vec<i64> = warp0.iter().chain(&rows).copied().collect();
        let t = vector_traffic(&mixed, 64, nv, &mem, 1, 32, true);
        assert_eq!(
            t.wavefronts,
            4 * 32 + vector_traffic(&rows, 32, nv, &mem, 1, 32, true).wavefronts
        );
    }

    #[test]
    fn sharing_counts_the_holders_of_each_output_cell() {
        use crate::synth::anchor::{arrangements, coalesced, mma_layouts};
        let atom = &Instructions::get().unwrap().mma[0];
        let mut layouts = vec![
            // 16 cells over 32 threads: lanes 16..31 hold copies.
            coalesced(&[4, 4], 1, 1, 32).unwrap(),
            coalesced(&[64, 64], 1, 4, 128).unwrap(),
            coalesced(&[64, 64], 0, 4, 128).unwrap(),
            coalesced(&[16, 1024], 1, 8, 128).unwrap(),
        ];
        for arr in arrangements(atom, 64, 64, 4) {
            layouts.push(mma_layouts(atom, [64, 64, 64], arr).unwrap().0);
        }
        for src in &layouts {
            for dim in [0, 1] {
                let dst = src.project(dim).unwrap();
                // The definition: per result cell, its holders and the source cells each
                // folds into it; holders folding the same cells are copies of one partial.
                let mut holders: BTreeMap<i64, BTreeMap<i64, BTreeSet<i64>>> = BTreeMap::new();
                for t in 0..src.nthreads() {
                    for v in 0..src.nvalues() {
                        holders
                            .entry(dst.cell(t, v))
                            .or_default()
                            .entry(t)
                            .or_default()
                            .insert(src.cell(t, v));
                    }
                }
                let distinct = |s: &BTreeMap<i64, BTreeSet<i64>>| {
                    s.values().collect::<BTreeSet<_>>().len() as i64
                };
                let partials = holders.values().map(distinct).max().unwrap_or(1);
                let copies = holders
                    .values()
                    .map(|s| s.len() as i64 / distinct(s))
                    .max()
                    .unwrap_or(1);
                let cross = holders.values().any(|s| {
                    let w0 = s.keys().next().copied().unwrap_or(0) / 32;
                    s.keys().any(|&t| t / 32 != w0)
                });
                assert_eq!(
                    sharing(src, &dst),
                    (partials, cross, copies),
                    "{src:?} dim {dim}"
                );
            }
        }
    }

    #[test]
    fn vector_ok_is_its_definition() {
        use crate::synth::anchor::{arrangements, coalesced, mma_layouts};
        let atom = &Instructions::get().unwrap().mma[0];
        let mut layouts = vec![
            coalesced(&[64, 64], 1, 8, 128).unwrap(),
            coalesced(&[64, 64], 0, 4, 128).unwrap(),
        ];
        for arr in arrangements(atom, 64, 64, 4) {
            let (c, a, b) = mma_layouts(atom, [64, 64, 64], arr).unwrap();
            layouts.extend([c, a.unwrap(), b.unwrap()]);
        }
        // Column-major, row-major and a row-major XOR swizzle of 8-element chunks.
        let mems: Vec<Vec<i64>> = vec![
            (0..4096).collect(),
            (0..4096).map(|c| (c % 64) * 64 + c / 64).collect(),
            (0..4096)
                .map(|c| (c % 64) * 64 + ((c / 64) ^ ((c % 64) % 8 * 8)))
                .collect(),
        ];
        for tv in &layouts {
            let (reg, nv) = (tv.table(), tv.nvalues());
            for mem in &mems {
                for w in [1, 2, 4, 8] {
                    let want = nv % w == 0
                        && reg.chunks(w as usize).all(|g| {
                            let a0 = mem[g[0] as usize];
                            a0 % w == 0
                                && (0..w as usize).all(|e| mem[g[e] as usize] == a0 + e as i64)
                        });
                    assert_eq!(vector_ok(&reg, nv, mem, w), want, "{tv:?} w {w}");
                }
            }
        }
    }

    #[test]
    fn fast_wavefronts_counts_a_column_walk_as_32() {
        let col: Vec<i64> = (0..32).map(|i| 128 * i).collect();
        assert_eq!(fast_wavefronts(&col, 4), 32);
        let row: Vec<i64> = (0..32).map(|i| 4 * i).collect();
        assert_eq!(fast_wavefronts(&row, 4), 1);
    }
}
