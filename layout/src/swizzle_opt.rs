//! Optimal swizzling for a (write, read) pair of distributed layouts (Linear Layouts paper,
//! section 5.4 and appendix 9.2).
//!
//! The shared-memory layout is an F2 bijection `S: offset -> logical`, its offset bits split
//! into `Vec` (the vector each lane moves, common to both layouts' registers), `Bank` (the rest
//! of a 128-byte row) and `Idx` (the row). A lane of a phase conflicts with another exactly when
//! their logical difference lies in `span(Vec ∪ Idx)` (lemma 9.4). With `P = span(Vec ∪ A_Thr) ∪
//! span(Vec ∪ B_Thr)`, the algorithm picks `Idx` with `span(Idx) ∩ P = {0}`: from `G = {e_i ⊕
//! f_i}` (`E = A_Thr \ B_Thr`, `F = B_Thr \ A_Thr`) and a complement `C` of `span(P)`, falling
//! back to `A_Thr` when short; lemma 9.5 bounds the largest such subspace by
//! `d - max(dim U, dim V)`. Beyond the paper, when the common vector is narrower than a bank
//! word or than 16 bytes, one side may extend its vector with its own registers; every variant
//! is predicted exactly by [`crate::bank::lemma_9_4`] and the cheapest kept. Where a lane or
//! warp basis is a register basis XOR another bit, the common vector may be misaligned for
//! some lanes: the memory's other bases are then sheared off the vector (by elements of its
//! span, which keeps every conflict count's spans) so that each lane's vector starts aligned,
//! else the vector is shortened, down to none; and the cheapest CuTe swizzle
//! ([`best_cute_swizzle`]) is the plan where it costs less.
//!
//! Example (a test checks it): the 128x128 f16 transpose (register `[[0,1],[0,2],[0,4],[0,8],
//! [1,0],[2,0]]`, lane `[[0,16],[0,32],[0,64],[4,0],[8,0]]`, warp `[[16,0],[32,0],[64,0]]`
//! written, its transpose read) gets 8-element vectors and 4 wavefronts per 16-byte instruction
//! on both sides: no bank conflicts.

use crate::bank::{lemma_9_4, BankReport};
use crate::cute::CuteLayout;
use crate::error::{LayoutError, Result};
use crate::f2;
use crate::linear::{InDim, LinearLayout, OutDim};
use crate::swizzle::{Swizzle, SwizzledLayout, TritonSwizzle};

/// Most logical bits the optimizer handles (the pointwise checks enumerate `2^d` elements).
pub const MAX_LOGICAL_BITS: u32 = 24;

/// One side (write or read) of a swizzle plan.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct SidePrediction {
    /// Register bit positions forming the vector, in element order.
    pub vector: Vec<usize>,
    /// Bytes per lane per instruction.
    pub access_bytes: u32,
    /// Predicted wavefronts of every instruction (lemma 9.4).
    pub wavefronts_per_instruction: u32,
    /// The conflict-free count: one wavefront per 128-byte phase.
    pub ideal_per_instruction: u32,
    /// Instructions per warp.
    pub instructions_per_warp: u64,
    /// Warps (all assignments of the in-dims other than register and lane).
    pub warps: u64,
}

impl SidePrediction {
    /// Wavefronts per warp.
    pub fn per_warp(&self) -> u64 {
        self.instructions_per_warp * u64::from(self.wavefronts_per_instruction)
    }

    /// Wavefronts of all warps together.
    pub fn total(&self) -> u64 {
        self.per_warp() * self.warps
    }
}

/// The optimizer's answer.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct SwizzlePlan {
    /// The memory layout `offset -> logical`.
    #[serde(serialize_with = "ser_layout")]
    pub memory: LinearLayout,
    /// Elements of the vector common to both layouts.
    pub common_vector: u32,
    /// Writes.
    pub write: SidePrediction,
    /// Reads.
    pub read: SidePrediction,
    /// `ℓ`: number of `Idx` offset bits (rows above one 128-byte row).
    pub idx_bits: u32,
    /// Lemma 9.5: the largest dimension of a subspace meeting both thread spaces only in 0.
    pub lemma_9_5_bound: u32,
    /// The same layout as CuTe `Sw<B,M,S> o shape:stride`, when it is one (checked pointwise).
    pub cute: Option<String>,
    /// The same layout as `#ttg.swizzled_shared<{...}>` when it is one (checked pointwise),
    /// else as `#ttg.shared_linear<{offset = ..}, alignment = 16>` ([`as_triton`]).
    pub triton: Option<String>,
    /// The cheapest CuTe swizzle for the pair ([`best_cute_swizzle`]), which the plan never
    /// costs more than; not part of the plan's JSON (callers print it beside the plan).
    #[serde(skip)]
    pub best_cute: Option<CuteChoice>,
}

fn ser_layout<S: serde::Serializer>(
    l: &LinearLayout,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    let text = crate::notation::linear::print_to_string(l);
    s.serialize_str(&text)
}

/// Flat columns of one side.
struct Side {
    reg: Vec<u128>,
    lane: Vec<u128>,
}

impl Side {
    fn of(l: &LinearLayout) -> Result<Side> {
        crate::bank::Warp::of(l)?;
        Ok(Side {
            reg: l.in_columns("register")?,
            lane: l.in_columns("lane")?,
        })
    }

    /// Nonzero lanes of one phase for accesses of `access` bytes.
    fn phase_lanes(&self, access: u32) -> Vec<u128> {
        let n = (128 / access.max(4)).trailing_zeros() as usize;
        self.lane
            .iter()
            .take(n)
            .copied()
            .filter(|&c| c != 0)
            .collect()
    }
}

/// Which side widens its vector beyond the common one, by how many register bits, and whether
/// registers that are lanes of the other side come first (those cost the other side nothing).
#[derive(Clone, Copy)]
enum Extend {
    Write(usize, bool),
    Read(usize, bool),
}

/// The optimal swizzled layout for writing with `write` and reading with `read` (both
/// `register/lane/warp -> logical`, same out-dims) elements of `elem_bytes` bytes.
pub fn optimal_swizzle(
    write: &LinearLayout,
    read: &LinearLayout,
    elem_bytes: u32,
) -> Result<SwizzlePlan> {
    if write.outs() != read.outs() {
        return Err(LayoutError::invalid(
            "swizzle pair",
            "the write and read layouts must have the same out-dims (names, sizes, order)",
        ));
    }
    if !matches!(elem_bytes, 1 | 2 | 4 | 8) {
        return Err(LayoutError::invalid(
            format!("element width {elem_bytes} bytes"),
            "elements are 1, 2, 4 or 8 bytes",
        ));
    }
    let d = write.total_out_bits();
    if d > MAX_LOGICAL_BITS {
        return Err(LayoutError::invalid(
            "swizzle pair",
            format!("the tensor has 2^{d} elements; at most 2^{MAX_LOGICAL_BITS} are supported"),
        ));
    }
    for (name, l) in [("write", write), ("read", read)] {
        crate::bank::check_simulable(l)?;
        if !l.is_surjective()? {
            return Err(LayoutError::invalid(
                format!("{name} layout"),
                "it does not cover the whole tensor",
            ));
        }
    }
    let (a, b) = (Side::of(write)?, Side::of(read)?);
    let max_v = (16 / elem_bytes).trailing_zeros() as usize;
    // V: common register vectors, in the write layout's order, at most 16 bytes.
    let mut common: Vec<(usize, usize)> = Vec::new();
    for (i, &c) in a.reg.iter().enumerate() {
        if common.len() == max_v || c == 0 {
            continue;
        }
        if let Some(j) = b.reg.iter().position(|&x| x == c) {
            if !common.iter().any(|&(_, y)| y == j) {
                common.push((i, j));
            }
        }
    }
    // A common vector no memory layout aligns for every lane (a lane or another register is a
    // vector register XOR something inside the vector) is shortened until one does; the empty
    // vector always does.
    let mut best: Option<SwizzlePlan> = None;
    for k in (0..=common.len()).rev() {
        let common = &common[..k];
        let room = max_v - common.len();
        let mut options = vec![Extend::Write(0, false)];
        for e in 1..=room {
            for lanes_first in [true, false] {
                options.push(Extend::Write(e, lanes_first));
                options.push(Extend::Read(e, lanes_first));
            }
        }
        for (ext, order) in options
            .into_iter()
            .flat_map(|e| FALLBACKS.iter().map(move |&o| (e, o)))
        {
            let Some(plan) = build(write, read, &a, &b, common, ext, order, elem_bytes, d)? else {
                continue;
            };
            let cost = |p: &SwizzlePlan| p.write.total() + p.read.total();
            if best.as_ref().is_none_or(|q| cost(&plan) < cost(q)) {
                best = Some(plan);
            }
        }
        if best.is_some() {
            break;
        }
    }
    let mut plan = best
        .ok_or_else(|| LayoutError::invalid("swizzle pair", "no memory layout could be built"))?;
    // With lanes XOR-mixed with registers the construction may give up vector width or
    // alignment; a CuTe swizzle with each side's widest aligned vector may then cost less, and
    // it is the plan (on unmixed pairs the construction never loses: bank_swizzle's tests).
    let best_cute = best_cute_with_memory(write, read, elem_bytes)?;
    if let Some((c, memory)) = best_cute.clone() {
        if c.total() < plan.write.total() + plan.read.total() {
            let shared = c
                .write
                .vector
                .iter()
                .filter(|&&i| c.read.vector.iter().any(|&j| b.reg[j] == a.reg[i]))
                .count();
            plan = SwizzlePlan {
                common_vector: 1 << shared,
                write: c.write,
                read: c.read,
                memory,
                ..plan
            };
        }
    }
    plan.best_cute = best_cute.map(|(c, _)| c);
    plan.cute = as_cute(&plan.memory)?.map(|(sw, l)| format!("{sw} o {l}"));
    plan.triton = as_triton(&plan.memory)?;
    Ok(plan)
}

/// Where `Idx` vectors come from, in order, after the complement `C`: the pairs `G` (no
/// conflicts), then, when short, `A`-only (`E`) or `B`-only (`F`) thread vectors first, which
/// puts the unavoidable conflicts on one side (the paper's fallback is `A_Thr`).
#[derive(Clone, Copy)]
enum Pool {
    G,
    E,
    F,
    LanesA,
    LanesB,
}

const FALLBACKS: [&[Pool]; 4] = [
    &[Pool::G, Pool::E, Pool::F, Pool::LanesA, Pool::LanesB],
    &[Pool::G, Pool::F, Pool::E, Pool::LanesB, Pool::LanesA],
    &[Pool::E, Pool::F, Pool::LanesA, Pool::LanesB],
    &[Pool::F, Pool::E, Pool::LanesB, Pool::LanesA],
];

/// One variant of the construction; `None` when the extending side has too few registers.
#[allow(clippy::too_many_arguments)]
fn build(
    write: &LinearLayout,
    read: &LinearLayout,
    a: &Side,
    b: &Side,
    common: &[(usize, usize)],
    ext: Extend,
    order: &[Pool],
    elem_bytes: u32,
    d: u32,
) -> Result<Option<SwizzlePlan>> {
    let mut low: Vec<u128> = common.iter().map(|&(i, _)| a.reg[i]).collect();
    let mut vec_a: Vec<usize> = common.iter().map(|&(i, _)| i).collect();
    let mut vec_b: Vec<usize> = common.iter().map(|&(_, j)| j).collect();
    let (count, lanes_first, side, other, vec) = match ext {
        Extend::Write(e, f) => (e, f, &a.reg, &b.lane, &mut vec_a),
        Extend::Read(e, f) => (e, f, &b.reg, &a.lane, &mut vec_b),
    };
    let mut pick: Vec<usize> = (0..side.len()).collect();
    pick.sort_by_key(|&i| (lanes_first && !other.contains(&side[i]), i));
    for _ in 0..count {
        let next = pick
            .iter()
            .copied()
            .find(|&i| !vec.contains(&i) && side[i] != 0 && f2::extend(&low, [side[i]]).len() == 1);
        let Some(i) = next else { return Ok(None) };
        vec.push(i);
        low.push(side[i]);
    }
    let wb = elem_bytes.trailing_zeros();
    let access = |v: usize| elem_bytes << v;
    let (pa, pb) = (
        a.phase_lanes(access(vec_a.len())),
        b.phase_lanes(access(vec_b.len())),
    );
    // Sub-word bits: offsets that stay inside one 4-byte word; lanes there share a word.
    let word = 2u32.saturating_sub(wb).min(d) as usize;
    if low.len() < word {
        let shared: Vec<u128> = pa.iter().copied().filter(|c| pb.contains(c)).collect();
        let pool = shared
            .into_iter()
            .chain(pa.iter().copied())
            .chain(pb.iter().copied())
            .chain((0..d).map(|i| 1u128 << i));
        let more = f2::extend(&low, pool);
        low.extend(more.into_iter().take(word - low.len()));
    }
    let hi = (7 - wb).min(d) as usize;
    let idx_bits = d as usize - hi.max(low.len());
    let u: Vec<u128> = low.iter().chain(&pa).copied().collect();
    let w: Vec<u128> = low.iter().chain(&pb).copied().collect();
    let inter = f2::intersection(&u, &w);
    let e = f2::extend(&inter, u.iter().copied());
    let f = f2::extend(&inter, w.iter().copied());
    let g: Vec<u128> = e.iter().zip(&f).map(|(x, y)| x ^ y).collect();
    let uw: Vec<u128> = u.iter().chain(&w).copied().collect();
    let c = f2::complete(&uw, d);
    let bound = d as usize - f2::rank(&u).max(f2::rank(&w));
    // Unpaired thread vectors first: after G, a paired e_i would bring f_i into span(Idx) too.
    let unpaired_first = |v: &[u128]| -> Vec<u128> {
        let k = g.len().min(v.len());
        v[k..].iter().chain(&v[..k]).copied().collect()
    };
    let (e, f) = (unpaired_first(&e), unpaired_first(&f));
    let mut pool = c;
    for p in order {
        pool.extend_from_slice(match p {
            Pool::G => &g,
            Pool::E => &e,
            Pool::F => &f,
            Pool::LanesA => &pa,
            Pool::LanesB => &pb,
        });
    }
    let idx: Vec<u128> = f2::extend(&low, pool).into_iter().take(idx_bits).collect();
    let fixed: Vec<u128> = low.iter().chain(&idx).copied().collect();
    let bank = f2::complete(&fixed, d);
    let cols: Vec<u128> = low.iter().chain(&bank).chain(&idx).copied().collect();
    // The columns as built, else sheared so that every other column of both layouts lies in
    // the span of the offset bits above the vector (its lanes' vectors then start aligned).
    let mut candidates = vec![cols.clone()];
    let others: Vec<u128> = [(write, &vec_a), (read, &vec_b)]
        .into_iter()
        .map(|(l, v)| non_vector_columns(l, v))
        .collect::<Result<Vec<_>>>()?
        .concat();
    candidates.extend(sheared(&cols, low.len(), &others));
    for cols in candidates {
        let memory = LinearLayout::from_columns(
            &[("offset".to_string(), d as usize)],
            write.outs().to_vec(),
            &cols,
        )?;
        let side = |l: &LinearLayout, v: &[usize]| predict(l, &memory, elem_bytes, v.to_vec());
        let (w, r) = match (side(write, &vec_a), side(read, &vec_b)) {
            (Ok(w), Ok(r)) => (w, r),
            (Err(e), _) | (_, Err(e)) if misaligned(&e) => continue,
            (Err(e), _) | (_, Err(e)) => return Err(e),
        };
        return Ok(Some(SwizzlePlan {
            write: w,
            read: r,
            common_vector: 1 << common.len(),
            idx_bits: idx_bits as u32,
            lemma_9_5_bound: bound as u32,
            memory,
            cute: None,
            triton: None,
            best_cute: None,
        }));
    }
    Ok(None)
}

/// Whether lemma 9.4 refused a vector because another input bit moves the offset inside it.
fn misaligned(e: &LayoutError) -> bool {
    matches!(e, LayoutError::Invalid { what, .. } if what.starts_with("vector register bits"))
}

/// The input columns of `l` other than its vector registers `vector` (nonzero ones).
fn non_vector_columns(l: &LinearLayout, vector: &[usize]) -> Result<Vec<u128>> {
    let at = l.in_offset("register").unwrap_or(usize::MAX);
    Ok(l.columns()?
        .into_iter()
        .enumerate()
        .filter(|&(i, c)| c != 0 && !(i >= at && vector.contains(&(i - at))))
        .map(|(_, c)| c)
        .collect())
}

/// `cols` (a basis, its first `low` vectors the vector's) with each later vector `b_k`
/// replaced by `b_k ⊕ λ_k` (`λ_k` in the span of the first `low`) so that every vector of
/// `others` outside that span lies in the span of the later ones; `None` when no shear does
/// (a combination of them lies in the vector's span) or none is needed. The shear keeps
/// every span the construction chose modulo the vector's span; lemma 9.4 predicts the result
/// afresh.
fn sheared(cols: &[u128], low: usize, others: &[u128]) -> Option<Vec<u128>> {
    let lows = &cols[..low];
    let in_low = f2::Echelon::of_columns(lows);
    let outside: Vec<u128> = others
        .iter()
        .copied()
        .filter(|&c| !in_low.contains(c))
        .collect();
    let n = f2::extend(&[], outside);
    if n.is_empty() || f2::extend(lows, n.iter().copied()).len() != n.len() {
        return None;
    }
    let all = f2::Echelon::of_columns(cols);
    let low_mask = (1u128 << low) - 1;
    // Each vector of n: its coefficients on the later vectors (r) and on the vector's (l).
    let parts: Vec<(u128, u128)> = n
        .iter()
        .map(|&v| {
            let x = all.solve(v).expect("cols is a basis");
            (x >> low, x & low_mask)
        })
        .collect();
    let rest = cols.len() - low;
    let mut basis: Vec<u128> = parts.iter().map(|&(r, _)| r).collect();
    basis.extend(f2::extend(&basis, (0..rest).map(|k| 1u128 << k)));
    let in_basis = f2::Echelon::of_columns(&basis);
    let mut out = cols.to_vec();
    let mut changed = false;
    for k in 0..rest {
        let x = in_basis.solve(1u128 << k)?;
        let lambda = parts
            .iter()
            .enumerate()
            .filter(|&(j, _)| x >> j & 1 == 1)
            .fold(0u128, |acc, (_, &(_, l))| acc ^ l);
        if lambda != 0 {
            out[low + k] ^= f2::apply(lows, lambda);
            changed = true;
        }
    }
    changed.then_some(out)
}

/// Lemma 9.4's prediction for one side with this vector.
fn predict(
    l: &LinearLayout,
    memory: &LinearLayout,
    elem_bytes: u32,
    v: Vec<usize>,
) -> Result<SidePrediction> {
    let n = lemma_9_4(l, memory, elem_bytes, &v)?;
    let bytes = elem_bytes << v.len();
    let lanes = 1u32 << l.in_size_log2("lane");
    Ok(SidePrediction {
        access_bytes: bytes,
        wavefronts_per_instruction: n,
        ideal_per_instruction: lanes.div_ceil(128 / bytes.max(4)).max(1),
        instructions_per_warp: 1u64 << (l.in_size_log2("register") - v.len()),
        warps: 1u64 << (l.total_in_bits() - l.in_size_log2("register") - l.in_size_log2("lane")),
        vector: v,
    })
}

/// The cheapest CuTe `Sw<B,M,S> o L` for a pair (L row- or column-major; every swizzle whose
/// touched bits lie within the tile's address bits, with CuTe's `|S| >= B`: see
/// [`cute_swizzles`]), by lemma 9.4, each side with its widest aligned vector: what a CuTe
/// author can write down. Ties go to the first in search order (the smallest `B`, `M`, `|S|`).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct CuteChoice {
    /// `Sw<B,M,S> o shape:stride`, checked pointwise against its F2 form.
    pub layout: String,
    /// Writes.
    pub write: SidePrediction,
    /// Reads.
    pub read: SidePrediction,
}

impl CuteChoice {
    /// Wavefronts of both sides over all warps.
    pub fn total(&self) -> u64 {
        self.write.total() + self.read.total()
    }
}

/// Searches the CuTe swizzles for the pair (see [`CuteChoice`]).
pub fn best_cute_swizzle(
    write: &LinearLayout,
    read: &LinearLayout,
    elem_bytes: u32,
) -> Result<Option<CuteChoice>> {
    Ok(best_cute_with_memory(write, read, elem_bytes)?.map(|(c, _)| c))
}

/// [`best_cute_swizzle`] and its memory layout `offset -> logical`.
fn best_cute_with_memory(
    write: &LinearLayout,
    read: &LinearLayout,
    elem_bytes: u32,
) -> Result<Option<(CuteChoice, LinearLayout)>> {
    let outs = write.outs();
    let shape = logical_sizes(write);
    let d = write.total_out_bits();
    let names: Vec<(String, usize)> = outs
        .iter()
        .map(|o| (o.name.clone(), o.log2_size as usize))
        .collect();
    let mut best: Option<(u64, Swizzle, CuteLayout, SidePrediction, SidePrediction)> = None;
    for base in compact_layouts(&shape)? {
        for sw in cute_swizzles(d)? {
            // logical -> offset is linear: one column per logical bit.
            let mut cols = Vec::new();
            for (j, o) in outs.iter().enumerate() {
                for k in 0..o.log2_size {
                    let mut c = vec![0i64; outs.len()];
                    c[j] = 1 << k;
                    cols.push(sw.apply(base.eval(&shape, &c)?)? as u128);
                }
            }
            let to_offset = LinearLayout::from_columns(
                &names,
                vec![OutDim {
                    name: "offset".into(),
                    log2_size: d,
                }],
                &cols,
            )?;
            let Ok(memory) = to_offset.right_inverse() else {
                continue;
            };
            let (Some(w), Some(r)) = (
                widest(write, &memory, elem_bytes)?,
                widest(read, &memory, elem_bytes)?,
            ) else {
                continue;
            };
            let cost = w.total() + r.total();
            if best.as_ref().is_none_or(|b| cost < b.0) {
                best = Some((cost, sw, base.clone(), w, r));
            }
        }
    }
    let Some((_, sw, base, write, read)) = best else {
        return Ok(None);
    };
    // Claim only what evaluates equal at every point.
    let sl = SwizzledLayout::new(sw, base)?;
    let memory = memory_from_offsets(outs, &|c: &[i64]| sl.eval(&shape, c))?;
    if as_cute(&memory)?.is_none() {
        return Ok(None);
    }
    Ok(Some((
        CuteChoice {
            layout: sl.to_string(),
            write,
            read,
        },
        memory,
    )))
}

/// Every CuTe swizzle on `d` address bits, identity first: `Sw<B,M,S>` with `B >= 1`,
/// `|S| >= B` (CuTe's requirement: source and destination bits apart) and all touched bits
/// below `d` (`M + |S| + B <= d`), ordered by `B`, then `M`, then `|S|`, `+S` before `-S`.
/// Example: `d = 4` gives the identity, `Sw<1,0,1>`, `Sw<1,0,-1>`, `Sw<1,0,2>`, `Sw<1,0,-2>`,
/// `Sw<1,0,3>`, `Sw<1,0,-3>`, `Sw<1,1,1>`, ..., `Sw<1,2,1>`, `Sw<1,2,-1>`, `Sw<2,0,2>`,
/// `Sw<2,0,-2>`.
pub fn cute_swizzles(d: u32) -> Result<Vec<Swizzle>> {
    let mut out = vec![Swizzle::identity()];
    for bits in 1..=d / 2 {
        for base in 0..=d - 2 * bits {
            for shift in bits..=d - base - bits {
                out.push(Swizzle::new(bits, base, shift as i32)?);
                out.push(Swizzle::new(bits, base, -(shift as i32))?);
            }
        }
    }
    Ok(out)
}

/// The side's widest vector under `memory` (register `i` at offset `2^t` for `t = 0, 1, ..`,
/// at most 16 bytes, shortened until aligned), with its prediction.
fn widest(
    l: &LinearLayout,
    memory: &LinearLayout,
    elem_bytes: u32,
) -> Result<Option<SidePrediction>> {
    let regs = l.in_columns("register")?;
    let offsets = crate::bank::linear_offsets(memory, l.outs())?;
    let max_v = (16 / elem_bytes).trailing_zeros() as usize;
    let mut v: Vec<usize> = Vec::new();
    while v.len() < max_v {
        let want = 1i64 << v.len();
        let mut next = None;
        for (i, &c) in regs.iter().enumerate() {
            if !v.contains(&i) && offsets(&l.unflatten_out(c))? == want {
                next = Some(i);
                break;
            }
        }
        match next {
            Some(i) => v.push(i),
            None => break,
        }
    }
    loop {
        if let Ok(p) = predict(l, memory, elem_bytes, v.clone()) {
            return Ok(Some(p));
        }
        if v.pop().is_none() {
            return Ok(None);
        }
    }
}

impl SidePrediction {
    /// True when the simulator's report matches this prediction on every instruction.
    pub fn confirmed_by(&self, rep: &BankReport) -> bool {
        rep.vector == self.vector
            && rep.histogram.keys().copied().collect::<Vec<_>>()
                == [self.wavefronts_per_instruction]
    }
}

fn logical_sizes(mem: &LinearLayout) -> Vec<i64> {
    mem.outs().iter().map(OutDim::size).collect()
}

/// Compact CuTe layouts of the logical shape: row-major (last dim fastest), then column-major.
fn compact_layouts(shape: &[i64]) -> Result<Vec<CuteLayout>> {
    let mut out = Vec::new();
    for reverse in [true, false] {
        let mut stride = vec![0i64; shape.len()];
        let mut acc = 1i64;
        let order: Vec<usize> = if reverse {
            (0..shape.len()).rev().collect()
        } else {
            (0..shape.len()).collect()
        };
        for i in order {
            stride[i] = acc;
            acc = crate::arith::mul(acc, shape[i], "compact stride")?;
        }
        out.push(CuteLayout::from_flat(shape, &stride)?);
    }
    Ok(out)
}

/// Every logical coordinate of a shape, row-major.
fn coords(shape: &[i64]) -> Result<Vec<Vec<i64>>> {
    let n = crate::shape::size_of(shape)?;
    (0..n)
        .map(|x| crate::shape::unflatten_row_major(shape, x))
        .collect()
}

/// `Sw<B,M,S> o L` (L compact) equal to `mem`'s inverse at every coordinate, if any.
pub fn as_cute(mem: &LinearLayout) -> Result<Option<(Swizzle, CuteLayout)>> {
    let shape = logical_sizes(mem);
    let offsets = crate::bank::linear_offsets(mem, mem.outs())?;
    let d = mem.total_out_bits();
    for base in compact_layouts(&shape)? {
        // The offset->offset map sw = S^-1 ∘ L^-1, one column per offset bit.
        let mut t = Vec::new();
        for k in 0..d {
            let coord = unrank(&base, &shape, 1i64 << k)?;
            t.push(offsets(&coord)? as u128);
        }
        let Some(sw) = match_swizzle(&t, d)? else {
            continue;
        };
        let sl = SwizzledLayout::new(sw, base.clone())?;
        let mut ok = true;
        for c in coords(&shape)? {
            if sl.eval(&shape, &c)? != offsets(&c)? {
                ok = false;
                break;
            }
        }
        if ok {
            return Ok(Some((sw, base)));
        }
    }
    Ok(None)
}

/// The logical coordinate that a compact layout maps to `offset`.
fn unrank(base: &CuteLayout, shape: &[i64], offset: i64) -> Result<Vec<i64>> {
    let modes = base.flat_modes();
    Ok(modes
        .iter()
        .zip(shape)
        .map(|(&(_, stride), &s)| (offset / stride) % s)
        .collect())
}

/// The `Sw<B,M,S>` whose matrix has these columns, or the identity: S > 0 first (any B),
/// then the CuTe swizzles with S < 0 ([`cute_swizzles`]).
fn match_swizzle(t: &[u128], d: u32) -> Result<Option<Swizzle>> {
    let identity = t.iter().enumerate().all(|(k, &c)| c == 1u128 << k);
    if identity {
        return Ok(Some(Swizzle::identity()));
    }
    let fits = |sw: &Swizzle| {
        t.iter()
            .enumerate()
            .all(|(k, &c)| sw.apply(1i64 << k).map(|v| v as u128 == c).unwrap_or(false))
    };
    for bits in 1..=d {
        for base in 0..d {
            for shift in 1..=d {
                if bits + base + shift > d {
                    break;
                }
                let sw = Swizzle::new(bits, base, shift as i32)?;
                if fits(&sw) {
                    return Ok(Some(sw));
                }
            }
        }
    }
    Ok(cute_swizzles(d)?
        .into_iter()
        .find(|sw| sw.shift() < 0 && fits(sw)))
}

/// The Triton shared attribute of `mem` (`offset -> dim0, dim1, ..`): the
/// `#ttg.swizzled_shared<{vec, perPhase, maxPhase, order}>` equal to it at every coordinate
/// (2-D tensors) when there is one, else `#ttg.shared_linear<{offset = [..]}, alignment = 16>`,
/// which holds any F2 memory layout: its offset bit `k` holds the element `offset[k]`, the
/// bases themselves (printed as MLIR prints the attribute Gluon's
/// `SharedLinearLayout(offset_bases)` builds, whose default alignment is 16 bytes, the widest
/// vector a plan moves). `None` for a layout with other in-dims or out-dims.
pub fn as_triton(mem: &LinearLayout) -> Result<Option<String>> {
    if let Some(swizzled) = as_swizzled_shared(mem)? {
        return Ok(Some(swizzled));
    }
    Ok(as_shared_linear(mem))
}

/// `#ttg.shared_linear<{offset = [..]}, alignment = 16>` of a memory layout whose one in-dim
/// with bases is `offset` and whose out-dims are `dim0, dim1, ..` (see [`as_triton`]).
fn as_shared_linear(mem: &LinearLayout) -> Option<String> {
    let dims_ok = mem
        .outs()
        .iter()
        .enumerate()
        .all(|(i, o)| o.name == format!("dim{i}"));
    let others = mem
        .ins()
        .iter()
        .any(|d| d.name != "offset" && !d.bases.is_empty());
    let offset = mem.in_dim("offset")?;
    if !dims_ok || others || offset.bases.is_empty() {
        return None;
    }
    Some(format!(
        "#ttg.shared_linear<{{offset = {}}}, alignment = 16>",
        crate::notation::linear::bases_text(&offset.bases)
    ))
}

/// `#ttg.swizzled_shared<{vec, perPhase, maxPhase, order}>` equal to `mem` at every coordinate
/// (2-D tensors), if any.
fn as_swizzled_shared(mem: &LinearLayout) -> Result<Option<String>> {
    let shape = logical_sizes(mem);
    if shape.len() != 2 {
        return Ok(None);
    }
    let Some((sw, base)) = as_cute(mem)? else {
        return Ok(None);
    };
    let offsets = crate::bank::linear_offsets(mem, mem.outs())?;
    let row_major = base.flat_modes()[1].1 == 1;
    let (order, cols) = if row_major {
        (vec![1, 0], shape[1])
    } else {
        (vec![0, 1], shape[0])
    };
    let c = cols.trailing_zeros() as i32;
    let (vec, max_phase, per_phase_log) = if sw.bits() == 0 {
        (1, 1, 0)
    } else {
        (
            1i64 << sw.base(),
            1i64 << sw.bits(),
            sw.shift() + sw.base() as i32 - c,
        )
    };
    if per_phase_log < 0 || sw.base() + sw.bits() > c as u32 {
        return Ok(None);
    }
    let ts = TritonSwizzle::new(vec, 1i64 << per_phase_log, max_phase, order.clone())?;
    for p in coords(&shape)? {
        let (i, j) = if row_major {
            (p[0], p[1])
        } else {
            (p[1], p[0])
        };
        if ts.offset_2d(i, j, cols)? != offsets(&p)? {
            return Ok(None);
        }
    }
    Ok(Some(format!(
        "#ttg.swizzled_shared<{{vec = {}, perPhase = {}, maxPhase = {}, order = [{}, {}]}}>",
        ts.vec, ts.per_phase, ts.max_phase, order[0], order[1]
    )))
}

/// The F2 memory layout `offset -> logical` of any pointwise offset map (CuTe, swizzled) over
/// the power-of-two shape of `outs`: each offset bit's coordinate, checked at every point, or
/// an error saying why the map is not an F2 bijection (padding, a stride of 3, a carry).
pub fn memory_from_offsets(
    outs: &[OutDim],
    offset_of: &crate::bank::OffsetMap<'_>,
) -> Result<LinearLayout> {
    let shape: Vec<i64> = outs.iter().map(OutDim::size).collect();
    let d: u32 = outs.iter().map(|o| o.log2_size).sum();
    if d > MAX_LOGICAL_BITS {
        return Err(LayoutError::invalid(
            "memory layout",
            format!("2^{d} elements; at most 2^{MAX_LOGICAL_BITS}"),
        ));
    }
    let mut by_offset = vec![None; 1usize << d];
    for c in coords(&shape)? {
        let o = offset_of(&c)?;
        let slot = usize::try_from(o)
            .ok()
            .filter(|&o| o < by_offset.len())
            .ok_or_else(|| {
                LayoutError::not_representable(
                    "F2 memory layout",
                    format!("coordinate {c:?} is at offset {o}, outside [0, 2^{d})"),
                )
            })?;
        if by_offset[slot].replace(c.clone()).is_some() {
            return Err(LayoutError::not_representable(
                "F2 memory layout",
                format!("offset {o} holds two coordinates"),
            ));
        }
    }
    let bases: Vec<Vec<i64>> = (0..d)
        .map(|k| by_offset[1usize << k].clone().expect("bijective"))
        .collect();
    let mem = LinearLayout::new(
        vec![InDim {
            name: "offset".into(),
            bases,
        }],
        outs.to_vec(),
    )?;
    for (o, c) in by_offset.iter().enumerate() {
        let c = c.as_ref().expect("bijective");
        if &mem.apply(&[o as i64])? != c {
            return Err(LayoutError::not_representable(
                "F2 memory layout",
                format!("offset {o} holds {c:?}, which is not the XOR of its bits' coordinates"),
            ));
        }
    }
    Ok(mem)
}
