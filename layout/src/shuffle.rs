//! Warp-shuffle plans for converting between two distributed layouts (Linear Layouts paper,
//! section 5.4), and a simulator that executes a plan on symbolic data.
//!
//! A plan is one instruction sequence for every warp, so `A` and `B` must have equal warp (and
//! block) bases: different ones move elements between warps, or, when each warp holds the same
//! elements in both, place them at lanes and registers that differ from warp to warp. Then the
//! conversion is a sequence of shuffle ROUNDS. With `V` the registers common to both (moved
//! together, at most 32 bits, and only bits that keep every vector's element order: see
//! `common_vector`), `I = A_Thr ∩ B_Thr`, `E = A_Thr \ I`, `F = B_Thr \ I` and `G = {e_i ⊕ f_i}`, the
//! round `i` moves the elements of the coset `R(i) ⊕ span(V ∪ I ∪ G)`, `R` completing that span
//! to the warp's elements: each lane sends one vector and receives one. With broadcasting a
//! round may need several shuffles; the plan lists each one. An element that is already in its
//! `B` lane moves between registers inside the lane, with no shuffle (so converting a layout
//! into itself takes none), and a round left with no such element is no round.
//!
//! A shuffle is data: what every lane sends (an `A` register), which lane every lane reads, and
//! the `B` register it stores to. The simulator runs it with each register holding the logical
//! coordinate it carries and checks the result is `B` everywhere.
//!
//! Example (a test checks it): `A = {register: [[1]], lane: [[2]]}`, `B = {register: [[2]],
//! lane: [[1]]}` on 4 elements (2 lanes): one shuffle (x1 and x2 cross) and two register moves
//! (x0 and x3 stay in their lane).
//!
//! A shuffle moves 32 bits: an 8-byte element takes two ([`ShufflePlan::instructions`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::bank::vector_register;
use crate::error::{LayoutError, Result};
use crate::f2::{self, Echelon};
use crate::linear::LinearLayout;

/// One round's transfers: (dst lane, dst register) -> (src lane, src register).
type Transfers = BTreeMap<(i64, i64), (i64, i64)>;

/// Most register + lane bits a layout may have here (elements per warp).
pub const MAX_WARP_BITS: usize = 16;

/// One warp shuffle (`shfl.sync.idx`), per lane.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shuffle {
    /// The `A` register (vector start) each lane offers; `None` when no lane reads it.
    pub send: Vec<Option<i64>>,
    /// The lane each lane reads from; `None` when it keeps nothing from this shuffle.
    pub src_lane: Vec<Option<i64>>,
    /// The `B` register (vector start) each lane stores what it read into.
    pub recv: Vec<Option<i64>>,
}

/// An element that is already in its `B` lane: a register move inside the lane, no shuffle.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LocalMove {
    /// The lane.
    pub lane: i64,
    /// The `A` register (vector start) it is read from.
    pub src: i64,
    /// The `B` register (vector start) it is stored to.
    pub dst: i64,
}

/// A conversion plan from `A` to `B` by warp shuffles, the same for every warp.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShufflePlan {
    /// Bytes per element.
    pub elem_bytes: u32,
    /// Register bits of `A` that form the vector moved by one shuffle, in element order.
    pub src_vector: Vec<usize>,
    /// The matching register bits of `B`.
    pub dst_vector: Vec<usize>,
    /// Number of rounds that move an element across lanes (of the `2^|R|` cosets, those
    /// whose elements all stay in their lane need no shuffle).
    pub rounds: usize,
    /// The shuffles, round after round.
    pub shuffles: Vec<Shuffle>,
    /// The elements already in their `B` lane, moved between registers inside it.
    #[serde(default)]
    pub moves: Vec<LocalMove>,
}

fn nonzero(v: &[u128]) -> Vec<u128> {
    v.iter().copied().filter(|&c| c != 0).collect()
}

/// Columns of every in-dim other than register and lane (warp, block), by name; in-dims of
/// size 1 (no bases, as Triton's `block = []`) are no context.
fn context_columns(l: &LinearLayout) -> Result<BTreeMap<String, Vec<u128>>> {
    l.ins()
        .iter()
        .filter(|d| d.name != "register" && d.name != "lane" && !d.bases.is_empty())
        .map(|d| Ok((d.name.clone(), l.in_columns(&d.name)?)))
        .collect()
}

/// `b`'s input for the context `ctx` of `a` (a [`LinearLayout::context_inputs`] value of `a`),
/// in-dims matched by name, register and lane 0.
fn same_context(a: &LinearLayout, b: &LinearLayout, ctx: &[i64]) -> Vec<i64> {
    b.ins()
        .iter()
        .map(|d| {
            let i = a.ins().iter().position(|x| x.name == d.name);
            match (d.name.as_str(), i) {
                ("register" | "lane", _) | (_, None) => 0,
                (_, Some(i)) => ctx.get(i).copied().unwrap_or(0),
            }
        })
        .collect()
}

/// A plan is one instruction sequence for every warp (and CTA), computed on warp 0: it holds
/// in warp `w` exactly when A's and B's context bases are equal. Warp `w` of B needs at lane `l`,
/// register `r` the element `B_thr(r, l) ⊕ B_warp(w)`, which A holds at
/// `A_thr^-1(B_thr(r, l) ⊕ d)` with `d = A_warp(w) ⊕ B_warp(w)`: the same place as in warp 0 only
/// when `d = 0`. When `d` is a combination of `thread` (A's register and lane bases), warp `w`
/// holds the same elements in A and B but moves them between other lanes or registers; else
/// its elements move between warps. The error says which.
fn check_same_in_every_warp(a: &LinearLayout, b: &LinearLayout, thread: &[u128]) -> Result<()> {
    let (ca, cb) = (context_columns(a)?, context_columns(b)?);
    let dims = |c: &BTreeMap<String, Vec<u128>>| -> Vec<String> {
        c.iter()
            .map(|(n, v)| format!("{n} ({})", 1u64 << v.len()))
            .collect()
    };
    if dims(&ca) != dims(&cb) {
        return Err(LayoutError::not_representable(
            "warp shuffles",
            format!(
                "A has the contexts {:?} and B {:?} (warps and CTAs beyond register and lane): a \
                 shuffle plan runs in the same warps under both layouts, so converting needs \
                 shared memory",
                dims(&ca),
                dims(&cb)
            ),
        ));
    }
    let inside = Echelon::of_columns(thread);
    let mut differ = None;
    for ((name, xs), (_, ys)) in ca.iter().zip(&cb) {
        for (k, (&x, &y)) in xs.iter().zip(ys).enumerate() {
            if x == y {
                continue;
            }
            let at = format!("{name}={}", 1u64 << k);
            if !inside.contains(x ^ y) {
                return Err(LayoutError::not_representable(
                    "warp shuffles",
                    format!(
                        "{at} of A and of B hold different elements: elements move between \
                         warps, which needs shared memory"
                    ),
                ));
            }
            differ.get_or_insert((at, x, y));
        }
    }
    match differ {
        None => Ok(()),
        Some((at, x, y)) => Err(LayoutError::not_representable(
            "warp shuffles",
            format!(
                "every warp holds the same elements in A and in B, but the bases of {at} differ \
                 ({:?} in A, {:?} in B, by a combination of A's register and lane bases), so \
                 the lanes and registers between which elements move differ from warp to warp; \
                 a shuffle plan is one instruction sequence, the same in every warp \
                 (converting through shared memory works)",
                a.unflatten_out(x),
                b.unflatten_out(y)
            ),
        )),
    }
}

/// The shuffle plan converting `a` into `b`, or an error saying why shuffles cannot do it
/// (e.g. the layouts differ in warp bits: the conversion needs shared memory).
pub fn shuffle_plan(a: &LinearLayout, b: &LinearLayout, elem_bytes: u32) -> Result<ShufflePlan> {
    if a.outs() != b.outs() {
        return Err(LayoutError::invalid(
            "shuffle pair",
            "the layouts must have the same out-dims (names, sizes, order)",
        ));
    }
    if !matches!(elem_bytes, 1 | 2 | 4 | 8) {
        return Err(LayoutError::invalid(
            format!("element width {elem_bytes} bytes"),
            "elements are 1, 2, 4 or 8 bytes",
        ));
    }
    for l in [a, b] {
        crate::bank::Warp::of(l)?;
    }
    for (name, l) in [("A", a), ("B", b)] {
        let bits = l.in_size_log2("register") + l.in_size_log2("lane");
        if bits > MAX_WARP_BITS {
            return Err(LayoutError::invalid(
                format!("layout {name}"),
                format!("a warp holds 2^{bits} elements; at most 2^{MAX_WARP_BITS} are supported"),
            ));
        }
    }
    let (ar, al) = (a.in_columns("register")?, a.in_columns("lane")?);
    let (br, bl) = (b.in_columns("register")?, b.in_columns("lane")?);
    let ta: Vec<u128> = ar.iter().chain(&al).copied().collect();
    let tb: Vec<u128> = br.iter().chain(&bl).copied().collect();
    let t = f2::intersection(&ta, &tb);
    if t.len() != f2::rank(&ta) || t.len() != f2::rank(&tb) {
        return Err(LayoutError::not_representable(
            "warp shuffles",
            "a warp of A and the same warp of B hold different elements: the conversion needs \
             shared memory",
        ));
    }
    check_same_in_every_warp(a, b, &ta)?;
    let (src_vector, dst_vector) = common_vector(&ar, &al, &br, &bl, elem_bytes);
    let v: Vec<u128> = src_vector.iter().map(|&i| ar[i]).collect();
    let (la, lb) = (nonzero(&al), nonzero(&bl));
    let i_set: Vec<u128> = f2::intersection(&la, &lb);
    let e = f2::extend(&i_set, la.iter().copied());
    let f = f2::extend(&i_set, lb.iter().copied());
    let g: Vec<u128> = e.iter().zip(&f).map(|(x, y)| x ^ y).collect();
    let s0: Vec<u128> = f2::extend(&[], v.iter().chain(&i_set).chain(&g).copied());
    let r = f2::extend(&s0, ta.iter().chain(&tb).copied());
    // Every element's source is a vector start of A (its vector bits 0), so the columns of
    // A's vector bits are left out of the solve.
    let a_inv = Echelon::of_columns(&without(&ta, &src_vector));
    let (a_reg_bits, b_reg_bits) = (ar.len(), br.len());
    let b_vmask = vector_register(&dst_vector, (1 << dst_vector.len()) - 1);
    let b_lanes = 1i64 << bl.len();
    let a_lanes = 1usize << al.len();
    let mut shuffles = Vec::new();
    // Each element's round: the R-coordinates of it in the basis s0 ∪ R.
    let rounds_ech = Echelon::of_columns(&s0.iter().chain(&r).copied().collect::<Vec<_>>());
    // Per round, (dst lane, dst register) -> (src lane, src register).
    let mut needs: BTreeMap<u128, Transfers> = BTreeMap::new();
    let mut moves = Vec::new();
    for lane in 0..b_lanes {
        for reg in (0..1i64 << b_reg_bits).filter(|x| x & b_vmask == 0) {
            let x = f2::apply(&tb, (reg as u128) | (lane as u128) << b_reg_bits);
            let missing =
                || LayoutError::invalid("shuffle pair", "an element of B is not held by A");
            let round = rounds_ech.solve(x).ok_or_else(missing)? >> s0.len();
            let src = a_inv.solve(x).ok_or_else(missing)?;
            let src_reg = (src & ((1u128 << a_reg_bits) - 1)) as i64;
            let src_lane = (src >> a_reg_bits) as i64;
            if src_lane == lane {
                moves.push(LocalMove {
                    lane,
                    src: src_reg,
                    dst: reg,
                });
                continue;
            }
            needs
                .entry(round)
                .or_default()
                .insert((lane, reg), (src_lane, src_reg));
        }
    }
    for round_needs in needs.values() {
        pack(round_needs, a_lanes, b_lanes as usize, &mut shuffles);
    }
    Ok(ShufflePlan {
        elem_bytes,
        src_vector,
        dst_vector,
        rounds: needs.len(),
        shuffles,
        moves,
    })
}

/// `cols` with the columns at `bits` replaced by 0.
fn without(cols: &[u128], bits: &[usize]) -> Vec<u128> {
    cols.iter()
        .enumerate()
        .map(|(i, &c)| if bits.contains(&i) { 0 } else { c })
        .collect()
}

/// The vector `V`: pairs (A register bit, B register bit) with the same column, at most 32
/// bits of elements, such that each vector keeps its element order.
///
/// A shuffle moves a vector as one word, so element `t` of the vector B stores at register
/// `dst | V_B(t)` must be element `t` of the vector A sends from `src | V_A(t)`. With `src`
/// and `dst` vector starts (vector bits 0) that holds exactly when every B vector start lies
/// in the span of A's other columns (`W_B ⊆ W_A`, each `W` the span of the register and
/// lane columns outside `V`). Example: A `register [[1]], lane [[2]]` and B
/// `register [[1]], lane [[3]]` share the register column 1, but B's lane 1 starts at 3,
/// which A holds as the second element of its vector (2, 3): the pair would arrive as (2, 3)
/// where B wants (3, 2), so that bit is no vector bit. A bit kept out of `V` costs shuffles,
/// never correctness; bits are taken greedily in A's register order (the condition is
/// inherited by subsets, so the greedy result is a maximal valid `V`).
fn common_vector(
    ar: &[u128],
    al: &[u128],
    br: &[u128],
    bl: &[u128],
    elem_bytes: u32,
) -> (Vec<usize>, Vec<usize>) {
    let max_v = (4 / elem_bytes.min(4)).trailing_zeros() as usize;
    let (mut src, mut dst) = (Vec::new(), Vec::new());
    for (i, &c) in ar.iter().enumerate() {
        if src.len() == max_v || c == 0 {
            continue;
        }
        let Some(j) = (0..br.len()).find(|&j| br[j] == c && !dst.contains(&j)) else {
            continue;
        };
        src.push(i);
        dst.push(j);
        let w_a = Echelon::of_columns(&[without(ar, &src), al.to_vec()].concat());
        let keeps_order = without(br, &dst).iter().chain(bl).all(|&x| w_a.contains(x));
        if !keeps_order {
            src.pop();
            dst.pop();
        }
    }
    (src, dst)
}

impl ShufflePlan {
    /// The `shfl.sync` instructions one warp executes: each shuffle of the plan once per 32-bit
    /// word of what it moves (twice for 8-byte elements).
    pub fn instructions(&self) -> usize {
        self.shuffles.len() * (self.elem_bytes as usize).div_ceil(4)
    }
}

/// Packs one round's transfers into as few shuffles as possible: in one shuffle each lane sends
/// one register and receives one.
fn pack(needs: &Transfers, a_lanes: usize, b_lanes: usize, out: &mut Vec<Shuffle>) {
    let lanes = a_lanes.max(b_lanes);
    let mut round: Vec<Shuffle> = Vec::new();
    for (&(dl, dr), &(sl, sr)) in needs {
        let (dl, sl) = (dl as usize, sl as usize);
        let slot = round
            .iter()
            .position(|s| s.src_lane[dl].is_none() && s.send[sl].is_none_or(|x| x == sr));
        let s = match slot {
            Some(k) => &mut round[k],
            None => {
                round.push(Shuffle {
                    send: vec![None; lanes],
                    src_lane: vec![None; lanes],
                    recv: vec![None; lanes],
                });
                round.last_mut().expect("pushed")
            }
        };
        s.send[sl] = Some(sr);
        s.src_lane[dl] = Some(sl as i64);
        s.recv[dl] = Some(dr);
    }
    out.extend(round);
}

/// Executes `plan` on symbolic data: every `A` register holds the logical coordinate it
/// carries; after all shuffles every `B` register must hold `B`'s coordinate. Returns the
/// number of shuffles executed per warp, or an error naming the first wrong register.
pub fn execute(plan: &ShufflePlan, a: &LinearLayout, b: &LinearLayout) -> Result<usize> {
    for l in [a, b] {
        crate::bank::check_simulable(l)?;
    }
    let bad = |why: String| LayoutError::invalid("shuffle plan", why);
    let (a_regs, b_regs) = (a.in_size("register"), b.in_size("register"));
    let (a_lanes, b_lanes) = (a.in_size("lane"), b.in_size("lane"));
    let (ca, cb) = (context_columns(a)?, context_columns(b)?);
    let sizes = |c: &BTreeMap<String, Vec<u128>>| c.values().map(Vec::len).collect::<Vec<_>>();
    if ca.keys().ne(cb.keys()) || sizes(&ca) != sizes(&cb) {
        return Err(bad(
            "A and B have different warp (or block) in-dims; a plan runs in every warp of both"
                .into(),
        ));
    }
    for ctx in &a.context_inputs() {
        let a_at = |r: i64, l: i64| a.apply(&a.at_register_lane(ctx, r, l));
        let b_ctx = same_context(a, b, ctx);
        let mut dst: BTreeMap<(i64, i64), Vec<i64>> = BTreeMap::new();
        for m in &plan.moves {
            if m.lane < 0 || m.lane >= a_lanes.min(b_lanes) {
                return Err(bad(format!("move in lane {} out of range", m.lane)));
            }
            for t in 0..1i64 << plan.src_vector.len() {
                let from = m.src | vector_register(&plan.src_vector, t);
                let to = m.dst | vector_register(&plan.dst_vector, t);
                if from < 0 || to < 0 || from >= a_regs || to >= b_regs {
                    return Err(bad(format!(
                        "move in lane {}: register {from} -> {to} out of range",
                        m.lane
                    )));
                }
                dst.insert((m.lane, to), a_at(from, m.lane)?);
            }
        }
        for (k, s) in plan.shuffles.iter().enumerate() {
            for (dl, src) in s.src_lane.iter().enumerate() {
                let Some(sl) = *src else { continue };
                let sr = s
                    .send
                    .get(sl as usize)
                    .copied()
                    .flatten()
                    .ok_or_else(|| bad(format!("shuffle {k}: lane {sl} sends nothing")))?;
                let dr = s.recv[dl].ok_or_else(|| {
                    bad(format!("shuffle {k}: lane {dl} reads without a register"))
                })?;
                if sl < 0 || sl >= a_lanes || dl as i64 >= b_lanes {
                    return Err(bad(format!("shuffle {k}: lane {sl} -> {dl} out of range")));
                }
                for t in 0..1i64 << plan.src_vector.len() {
                    let from = sr | vector_register(&plan.src_vector, t);
                    let to = dr | vector_register(&plan.dst_vector, t);
                    if from >= a_regs || to >= b_regs {
                        return Err(bad(format!(
                            "shuffle {k}: register {from} -> {to} out of range"
                        )));
                    }
                    dst.insert((dl as i64, to), a_at(from, sl)?);
                }
            }
        }
        for l in 0..b_lanes {
            for r in 0..b_regs {
                let want = b.apply(&b.at_register_lane(&b_ctx, r, l))?;
                match dst.get(&(l, r)) {
                    Some(got) if *got == want => {}
                    got => {
                        return Err(bad(format!(
                            "after the plan, lane {l} register {r} holds {got:?}, B says {want:?}"
                        )))
                    }
                }
            }
        }
    }
    Ok(plan.shuffles.len())
}
