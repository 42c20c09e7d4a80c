//! Shared-memory bank conflicts of warp-wide instructions.
//!
//! Model (NVIDIA shared memory, 32 banks of 4 bytes): byte address `a` lies in the 4-byte word
//! `a / 4`, which lives in bank `(a / 4) mod 32`. A warp-wide access of `access_bytes` per lane is
//! split into PHASES that each move at most 128 bytes: 1-, 2- and 4-byte accesses are one phase of
//! 32 lanes, 8-byte accesses two phases of 16 lanes, 16-byte accesses four phases of 8 lanes. In a
//! phase every bank serves one distinct word per WAVEFRONT (lanes reading the same word share it:
//! a broadcast), so the phase needs `max over banks of |distinct words in that bank|` wavefronts,
//! at least 1 when any lane of the phase is active. The instruction needs the sum over phases.
//!
//! Example (a test checks it): 32 lanes reading 4 bytes at `addrs[i] = 128 * i` all hit bank 0 in
//! 32 different words: 32 wavefronts. At `addrs[i] = 4 * i` they hit 32 different banks: 1.

use std::collections::{BTreeMap, BTreeSet};

use crate::error::{LayoutError, Result};
use crate::f2;
use crate::linear::LinearLayout;

/// Number of shared-memory banks.
pub const BANKS: i64 = 32;
/// Width of one bank word in bytes.
pub const BANK_BYTES: i64 = 4;
/// Lanes of a warp.
pub const WARP_LANES: usize = 32;

/// Shared-memory wavefronts of one warp-wide instruction: lane i accesses `access_bytes`
/// bytes starting at byte address `addrs[i]` (None = inactive lane). 32 banks x 4 bytes.
///
/// ```
/// use layout::bank::wavefronts;
/// let strided: Vec<Option<i64>> = (0..32).map(|i| Some(128 * i)).collect();
/// assert_eq!(wavefronts(&strided, 4)?, 32);
/// let unit: Vec<Option<i64>> = (0..32).map(|i| Some(4 * i)).collect();
/// assert_eq!(wavefronts(&unit, 4)?, 1);
/// # Ok::<(), layout::LayoutError>(())
/// ```
pub fn wavefronts(addrs: &[Option<i64>], access_bytes: u32) -> Result<u32> {
    if addrs.len() > WARP_LANES {
        return Err(LayoutError::invalid(
            format!("warp access of {} lanes", addrs.len()),
            format!("a warp has at most {WARP_LANES} lanes"),
        ));
    }
    let lanes_per_phase = match access_bytes {
        1 | 2 | 4 => 32,
        8 => 16,
        16 => 8,
        _ => {
            return Err(LayoutError::invalid(
                format!("access width {access_bytes} bytes"),
                "shared-memory accesses move 1, 2, 4, 8 or 16 bytes per lane",
            ))
        }
    };
    for (lane, a) in addrs.iter().enumerate() {
        let Some(a) = *a else { continue };
        if a < 0 {
            return Err(LayoutError::invalid(
                format!("address {a} of lane {lane}"),
                "shared-memory byte addresses are non-negative",
            ));
        }
        if a % i64::from(access_bytes) != 0 {
            return Err(LayoutError::invalid(
                format!("address {a} of lane {lane}"),
                format!("a {access_bytes}-byte access must be {access_bytes}-byte aligned"),
            ));
        }
    }
    let words = (i64::from(access_bytes) + BANK_BYTES - 1) / BANK_BYTES;
    let mut total = 0u32;
    for phase in addrs.chunks(lanes_per_phase) {
        let mut per_bank: BTreeMap<i64, BTreeSet<i64>> = BTreeMap::new();
        for a in phase.iter().flatten() {
            let first = a / BANK_BYTES;
            for w in first..first + words {
                per_bank.entry(w % BANKS).or_default().insert(w);
            }
        }
        let worst = per_bank.values().map(BTreeSet::len).max().unwrap_or(0);
        total += worst as u32;
    }
    Ok(total)
}

/// Bank conflicts of a (distributed layout, memory layout) pair, counted per instruction.
///
/// The distributed layout `L` maps `register`, `lane` and any other in-dims (`warp`, `block`:
/// instruction contexts) to logical coordinates; the memory layout gives each logical coordinate
/// its element offset. One instruction moves, for every lane, the registers
/// `r ⊕ span(vector bits)`, which must be contiguous and aligned in memory.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct BankReport {
    /// Register bit positions forming the vector, in element order.
    pub vector: Vec<usize>,
    /// Bytes each lane moves per instruction.
    pub access_bytes: u32,
    /// Instructions per warp (`2^(register bits - vector bits)`).
    pub instructions_per_warp: u64,
    /// Wavefronts per instruction -> number of instructions (over all warps and contexts).
    pub histogram: BTreeMap<u32, u64>,
    /// Sum of wavefronts over all instructions of all warps and contexts.
    pub total_wavefronts: u64,
}

impl BankReport {
    /// The largest wavefront count of any instruction.
    pub fn max_wavefronts(&self) -> u32 {
        self.histogram.keys().next_back().copied().unwrap_or(0)
    }
}

/// Element offset of a logical coordinate (one value per out-dim of the distributed layout).
pub type OffsetMap<'a> = dyn Fn(&[i64]) -> Result<i64> + 'a;

/// A distributed layout's register and lane bit counts, checking it fits a warp (at most 32
/// lanes).
pub struct Warp {
    /// Register bits.
    pub reg: usize,
    /// Lane bits (at most 5).
    pub lane: usize,
}

impl Warp {
    /// Reads and checks `dist`'s register and lane dims.
    pub fn of(dist: &LinearLayout) -> Result<Warp> {
        let lane = dist.in_size_log2("lane");
        if lane > 5 {
            return Err(LayoutError::invalid(
                format!("distributed layout with 2^{lane} lanes"),
                "a warp has at most 32 lanes",
            ));
        }
        Ok(Warp {
            reg: dist.in_size_log2("register"),
            lane,
        })
    }
}

/// The register offset of element `t` of a vector made of these register bits (element order).
/// Example: bits `[4, 0]`, element 3 is register `0b10001`.
pub fn vector_register(vector: &[usize], t: i64) -> i64 {
    vector
        .iter()
        .enumerate()
        .filter(|(k, _)| t >> k & 1 == 1)
        .fold(0, |r, (_, &b)| r | 1 << b)
}

fn access_bytes_of(vector: &[usize], reg_bits: usize, elem_bytes: u32) -> Result<u32> {
    let mut seen = BTreeSet::new();
    for &b in vector {
        if b >= reg_bits || !seen.insert(b) {
            return Err(LayoutError::invalid(
                format!("vector register bits {vector:?}"),
                format!("they must be distinct register bits below {reg_bits}"),
            ));
        }
    }
    if !matches!(elem_bytes, 1 | 2 | 4 | 8 | 16) {
        return Err(LayoutError::invalid(
            format!("element width {elem_bytes} bytes"),
            "elements are 1, 2, 4, 8 or 16 bytes",
        ));
    }
    let bytes = u64::from(elem_bytes) << vector.len();
    if bytes > 16 {
        return Err(LayoutError::invalid(
            format!(
                "vector of {} elements of {elem_bytes} bytes",
                1u64 << vector.len()
            ),
            "an access moves at most 16 bytes per lane",
        ));
    }
    Ok(bytes as u32)
}

/// Most input bits a layout may have for the pointwise simulators (they enumerate every input).
pub const MAX_SIMULATED_BITS: usize = 24;

/// Errors when `l` has more inputs than the simulators enumerate.
pub fn check_simulable(l: &LinearLayout) -> Result<()> {
    if l.total_in_bits() > MAX_SIMULATED_BITS {
        return Err(LayoutError::invalid(
            "layout to simulate",
            format!(
                "it has 2^{} inputs; the simulators enumerate at most 2^{MAX_SIMULATED_BITS}",
                l.total_in_bits()
            ),
        ));
    }
    Ok(())
}

/// Brute-force simulator: the wavefronts of every instruction of every warp, by computing each
/// lane's byte address and calling [`wavefronts`]. `offset_of` may be any memory layout (F2 or
/// not: CuTe, swizzled, padded), evaluated pointwise. Errors when a lane's vector is not
/// contiguous in memory.
pub fn simulate(
    dist: &LinearLayout,
    offset_of: &OffsetMap<'_>,
    elem_bytes: u32,
    vector: &[usize],
) -> Result<BankReport> {
    check_simulable(dist)?;
    let warp = Warp::of(dist)?;
    let access = access_bytes_of(vector, warp.reg, elem_bytes)?;
    let vmask = vector_register(vector, (1 << vector.len()) - 1);
    let mut histogram = BTreeMap::new();
    let mut total = 0u64;
    for ctx in dist.context_inputs() {
        for r in (0..1i64 << warp.reg).filter(|r| r & vmask == 0) {
            let mut addrs = Vec::with_capacity(1 << warp.lane);
            for lane in 0..1i64 << warp.lane {
                let base = offset_of(&dist.apply(&dist.at_register_lane(&ctx, r, lane))?)?;
                for t in 1..1i64 << vector.len() {
                    let reg = r | vector_register(vector, t);
                    let at = offset_of(&dist.apply(&dist.at_register_lane(&ctx, reg, lane))?)?;
                    if Some(at) != base.checked_add(t) {
                        return Err(LayoutError::invalid(
                            format!("vector register bits {vector:?}"),
                            format!(
                                "lane {lane}, register {reg} is at offset {at}, not {base} + {t}: \
                                 the vector is not contiguous in memory"
                            ),
                        ));
                    }
                }
                let addr = base
                    .checked_mul(i64::from(elem_bytes))
                    .ok_or(LayoutError::Overflow { op: "byte address" })?;
                addrs.push(Some(addr));
            }
            let n = wavefronts(&addrs, access)?;
            *histogram.entry(n).or_insert(0u64) += 1;
            total += u64::from(n);
        }
    }
    Ok(BankReport {
        vector: vector.to_vec(),
        access_bytes: access,
        instructions_per_warp: 1u64 << (warp.reg - vector.len()),
        histogram,
        total_wavefronts: total,
    })
}

/// The widest vector (at most 16 bytes) that is contiguous and aligned in memory for every
/// lane, chosen greedily: element `2^t` of the vector is the first register bit that puts it at
/// offset `+2^t` everywhere. Checked pointwise, so it works for any memory layout.
pub fn max_vector(
    dist: &LinearLayout,
    offset_of: &OffsetMap<'_>,
    elem_bytes: u32,
) -> Result<Vec<usize>> {
    let warp = Warp::of(dist)?;
    let mut vector: Vec<usize> = Vec::new();
    while (u64::from(elem_bytes) << (vector.len() + 1)) <= 16 {
        let found = (0..warp.reg).filter(|b| !vector.contains(b)).find(|&b| {
            let mut v = vector.clone();
            v.push(b);
            simulate(dist, offset_of, elem_bytes, &v).is_ok()
        });
        match found {
            Some(b) => vector.push(b),
            None => break,
        }
    }
    Ok(vector)
}

/// The element offset of a logical coordinate under an F2 memory layout `mem: offset -> logical`
/// (see [`memory_offsets`]), logical coordinates given in the order of `logical` (out-dims of
/// the distributed layout, matched to `mem`'s by name).
pub fn linear_offsets<'a>(
    mem: &LinearLayout,
    logical: &'a [crate::linear::OutDim],
) -> Result<Box<OffsetMap<'a>>> {
    let inv = memory_offsets(mem)?;
    Ok(Box::new(move |coord: &[i64]| {
        let named: Vec<(&str, i64)> = logical
            .iter()
            .zip(coord)
            .map(|(o, &v)| (o.name.as_str(), v))
            .collect();
        Ok(inv.apply_named(&named)?[0])
    }))
}

/// The map logical -> `offset` of a memory layout `mem: (offset, block) -> logical`: `mem^-1`
/// for a layout of one CTA. In-dims without bases (size 1, as Triton's `block = []`) are
/// ignored. The `block` in-dim of a multi-CTA layout (Triton's shared attributes with a
/// `CGALayout`) names the CTA whose shared memory holds an element and `offset` its place
/// there; every element must be held, and at one offset (the offset bases independent, and no
/// combination of them equal to a combination of block bases), so its offset is a function of
/// the element.
///
/// Example: `{offset: [[0,1],[1,0]], block: []}` on 2x2 maps `(1, 0)` to offset 2.
pub fn memory_offsets(mem: &LinearLayout) -> Result<LinearLayout> {
    let names: Vec<&str> = mem.ins().iter().map(|d| d.name.as_str()).collect();
    let other = |d: &crate::linear::InDim| !d.bases.is_empty() && !is_memory_dim(&d.name);
    if mem.in_dim("offset").is_none() || mem.ins().iter().any(other) {
        return Err(LayoutError::invalid(
            "memory layout",
            format!(
                "it has in-dims {names:?}; a memory layout has `offset` (and `block`, the CTAs of a multi-CTA layout; in-dims of size 1 are ignored)"
            ),
        ));
    }
    let (offset, block) = (mem.in_columns("offset")?, mem.in_columns("block")?);
    if block.is_empty() && offset.len() != mem.total_out_bits() as usize {
        return Err(LayoutError::invalid(
            "memory layout",
            "it is not a bijection (in and out sizes differ)",
        ));
    }
    if f2::rank(&offset) < offset.len() {
        return Err(LayoutError::invalid(
            "memory layout",
            "two offsets hold the same element (its offset bases are dependent)",
        ));
    }
    if f2::intersection_dim(&offset, &block) > 0 {
        return Err(LayoutError::invalid(
            "memory layout",
            "an element lies at different offsets in different CTAs (a combination of offset \
             bases equals one of block bases)",
        ));
    }
    let kept: Vec<&str> = names.into_iter().filter(|n| is_memory_dim(n)).collect();
    let outs: Vec<&str> = mem.outs().iter().map(|o| o.name.as_str()).collect();
    let inv = mem.sublayout(&kept, &outs)?.right_inverse()?;
    inv.sublayout(&outs, &["offset"])
}

fn is_memory_dim(name: &str) -> bool {
    name == "offset" || name == "block"
}

/// Lemma 9.4 of the Linear Layouts paper, for an F2 memory layout: wavefronts of EVERY
/// instruction (they all agree by linearity).
///
/// With `S = mem^-1` (logical -> offset, [`memory_offsets`]), `K` the span of `S(L_lane)` over
/// the lanes of one phase, `Z` the offset bits that do not change the 4-byte word a lane touches
/// (the vector and any sub-word bits) and `Idx` the offset bits above the 128-byte row, each bank serves
/// `c = |K ∩ span(Z ∪ Idx)| / |K ∩ span(Z)|` distinct words per phase, and the instruction takes
/// `c` times the number of phases. In the paper's setting (accesses of at least 4 bytes,
/// distributed layouts, so `K ∩ span(Z) = 0`) this is its `n · |span(S_Vec ∪ S_Idx) ∩
/// span(L_Thr)|`.
pub fn lemma_9_4(
    dist: &LinearLayout,
    mem: &LinearLayout,
    elem_bytes: u32,
    vector: &[usize],
) -> Result<u32> {
    let warp = Warp::of(dist)?;
    let access = access_bytes_of(vector, warp.reg, elem_bytes)?;
    let inv = memory_offsets(mem)?;
    let to_offset = |logical: u128| -> Result<u128> {
        let coord = dist.unflatten_out(logical);
        let named: Vec<(&str, i64)> = dist
            .outs()
            .iter()
            .zip(&coord)
            .map(|(o, &v)| (o.name.as_str(), v))
            .collect();
        Ok(inv.apply_named(&named)?[0] as u128)
    };
    let regs = dist.in_columns("register")?;
    for (t, &b) in vector.iter().enumerate() {
        if to_offset(regs[b])? != 1u128 << t {
            return Err(LayoutError::invalid(
                format!("vector register bits {vector:?}"),
                format!("register bit {b} is not at offset +{} in memory", 1u64 << t),
            ));
        }
    }
    let vmask = (1u128 << vector.len()) - 1;
    let regmask = vector_register(vector, (1 << vector.len()) - 1);
    for (i, &c) in dist.columns()?.iter().enumerate() {
        let is_vector = dist
            .in_offset("register")
            .is_some_and(|at| i >= at && i < at + warp.reg && regmask >> (i - at) & 1 == 1);
        if !is_vector && to_offset(c)? & vmask != 0 {
            return Err(LayoutError::invalid(
                format!("vector register bits {vector:?}"),
                format!(
                    "input bit {i} moves the offset inside a vector: the vector is not aligned \
                     for every lane"
                ),
            ));
        }
    }
    let lanes_per_phase = 128 / access.max(4);
    let phase_lane_bits = warp.lane.min(lanes_per_phase.trailing_zeros() as usize);
    let phases = (1u32 << warp.lane).div_ceil(lanes_per_phase).max(1);
    let k: Vec<u128> = dist.in_columns("lane")?[..phase_lane_bits]
        .iter()
        .map(|&c| to_offset(c))
        .collect::<Result<_>>()?;
    let d = inv.total_out_bits();
    let wb = elem_bytes.trailing_zeros();
    let low = (vector.len() as u32).max(2u32.saturating_sub(wb)).min(d);
    let hi = (7 - wb).min(d);
    let z: Vec<u128> = (0..low).map(|i| 1u128 << i).collect();
    let z_idx: Vec<u128> = z
        .iter()
        .copied()
        .chain((hi..d).map(|i| 1u128 << i))
        .collect();
    let c = f2::intersection_dim(&k, &z_idx) - f2::intersection_dim(&k, &z);
    Ok(phases << c)
}
