//! Shared-memory tile layout and swizzle choice by bank-conflict evaluation.
//!
//! Candidates are the two row orders of the tile, `(F,S):(1,F)` (first axis contiguous) and
//! `(F,S):(S,1)` (second axis contiguous), each under every CuTe swizzle `Sw<B,M,S>` that stays
//! inside the tile. For each candidate the widest legal shared-memory vector of each phase is
//! found (the phase's elements must be consecutive and aligned after the swizzle), then every
//! warp-wide store and load instruction of one CTA is scored with
//! [`layout::bank::wavefronts`]. The candidate with the fewest wavefronts in total wins; ties
//! keep the earlier (unswizzled, then smaller) candidate.
//!
//! Example (a test checks it): a 32x32 f32 transpose tile without a swizzle needs 32 wavefronts
//! for each warp-wide 4-byte access that walks down a column (a 32-way conflict); the chosen
//! swizzle brings every access to its ideal count.

use layout::bank::{wavefronts, WARP_LANES};
use layout::cute::CuteLayout;
use layout::swizzle::{Swizzle, SwizzledLayout};

use crate::error::PlanError;
use crate::phase::Phase;

/// Predicted shared-memory traffic of one CTA (a whole launch is this times the CTA count).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Traffic {
    /// Warp-wide instructions.
    pub instructions: i64,
    /// Wavefronts they need.
    pub wavefronts: i64,
    /// Wavefronts they would need without conflicts.
    pub ideal: i64,
}

impl Traffic {
    /// Excess wavefronts (what Nsight Compute counts as bank conflicts).
    pub fn conflicts(&self) -> i64 {
        self.wavefronts - self.ideal
    }

    /// Wavefronts per instruction.
    pub fn per_instruction(&self) -> f64 {
        if self.instructions == 0 {
            0.0
        } else {
            self.wavefronts as f64 / self.instructions as f64
        }
    }
}

/// The chosen shared-memory layout with its vectors and predicted traffic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SmemChoice {
    /// `(f, s) -> element offset` over the column-major tile.
    pub layout: SwizzledLayout,
    /// Elements per shared-memory store (load phase's side).
    pub store_vec: i64,
    /// Elements per shared-memory load (store phase's side).
    pub load_vec: i64,
    /// Shared-memory stores of one CTA.
    pub stores: Traffic,
    /// Shared-memory loads of one CTA.
    pub loads: Traffic,
    /// Candidates scored.
    pub candidates: usize,
}

/// Scores every candidate and returns the best. `swizzle = false` keeps only the unswizzled
/// row orders (the conflict experiment's baseline).
pub fn choose_smem(
    tile: [i64; 2],
    elem_bytes: i64,
    threads: i64,
    load: &Phase,
    store: &Phase,
    swizzle: bool,
) -> Result<SmemChoice, PlanError> {
    let bases = [
        CuteLayout::from_flat(&tile, &[1, tile[0]])?,
        CuteLayout::from_flat(&tile, &[tile[1], 1])?,
    ];
    let cells = tile[0] * tile[1];
    let bits = if cells & (cells - 1) == 0 {
        cells.trailing_zeros()
    } else {
        0
    };
    let mut swizzles = vec![Swizzle::identity()];
    if swizzle {
        for b in 1..=5u32 {
            for m in 0..=4u32 {
                for s in 1..=7u32 {
                    if b + m + s <= bits && b <= s {
                        swizzles.push(Swizzle::new(b, m, s as i32)?);
                    }
                }
            }
        }
    }
    let mut best: Option<(i64, SwizzledLayout, Offsets, i64, i64)> = None;
    let mut count = 0usize;
    for base in &bases {
        for sw in &swizzles {
            let l = SwizzledLayout::new(*sw, base.clone())?;
            count += 1;
            let table = Offsets::new(&l, tile)?;
            let store_vec = widest_vec(&table, threads, load, elem_bytes);
            let load_vec = widest_vec(&table, threads, store, elem_bytes);
            // The search scores with a quick count; the winner is re-scored below with the
            // bank model itself (the reported numbers are always `layout::bank::wavefronts`).
            let cost = quick_wavefronts(&table, threads, load, store_vec, elem_bytes)
                + quick_wavefronts(&table, threads, store, load_vec, elem_bytes);
            if best.as_ref().is_none_or(|b| cost < b.0) {
                best = Some((cost, l, table, store_vec, load_vec));
            }
        }
    }
    let (_, layout, table, store_vec, load_vec) = best.expect("at least the identity candidate");
    Ok(SmemChoice {
        stores: table_traffic(&table, threads, load, store_vec, elem_bytes)?,
        loads: table_traffic(&table, threads, store, load_vec, elem_bytes)?,
        layout,
        store_vec,
        load_vec,
        candidates: count,
    })
}

/// `l(f, s)` for every cell of the tile, evaluated once per candidate (the search looks each
/// cell up several times per candidate). Candidates are rank-2 `(F,S):(a,b)` layouts,
/// evaluated directly as `sw(f*a + s*b)`; others go through `eval`.
struct Offsets {
    tile: [i64; 2],
    at: Vec<i64>,
}

impl Offsets {
    fn new(l: &SwizzledLayout, tile: [i64; 2]) -> Result<Offsets, PlanError> {
        let modes = l.layout().flat_modes();
        let mut at = Vec::with_capacity((tile[0] * tile[1]) as usize);
        for s in 0..tile[1] {
            for f in 0..tile[0] {
                at.push(match modes[..] {
                    [(ef, a), (es, b)] if [ef, es] == tile => l.swizzle().apply(f * a + s * b)?,
                    _ => l.eval(&tile, &[f, s])?,
                });
            }
        }
        Ok(Offsets { tile, at })
    }

    fn get(&self, (f, s): (i64, i64)) -> i64 {
        self.at[(f + s * self.tile[0]) as usize]
    }
}

/// Widest power of two dividing the phase's vector (at most 16 bytes) for which every access's
/// elements are consecutive in shared memory and start aligned.
pub fn smem_vec(
    l: &SwizzledLayout,
    tile: [i64; 2],
    threads: i64,
    p: &Phase,
    elem_bytes: i64,
) -> Result<i64, PlanError> {
    Ok(widest_vec(&Offsets::new(l, tile)?, threads, p, elem_bytes))
}

fn widest_vec(table: &Offsets, threads: i64, p: &Phase, elem_bytes: i64) -> i64 {
    let mut w = p.vec;
    while w * elem_bytes > 16 {
        w /= 2;
    }
    while w > 1 && !vector_fits(table, threads, p, w) {
        w /= 2;
    }
    w
}

/// True when every access of `w` elements of phase `p` is consecutive and aligned in `l`.
fn vector_fits(table: &Offsets, threads: i64, p: &Phase, w: i64) -> bool {
    for t in 0..threads {
        for k in 0..p.iters {
            for e0 in (0..p.vec).step_by(w as usize) {
                let o = table.get(p.coord(t, k, e0));
                if o % w != 0 {
                    return false;
                }
                for e in 1..w {
                    if table.get(p.coord(t, k, e0 + e)) != o + e {
                        return false;
                    }
                }
            }
        }
    }
    true
}

/// The wavefronts [`table_traffic`] counts, by the same rule as [`layout::bank::wavefronts`]
/// (per phase of lanes: the most distinct 4-byte words any bank holds) with fixed arrays instead
/// of maps; the search calls it hundreds of thousands of times. A test checks it against the
/// bank model.
fn quick_wavefronts(table: &Offsets, threads: i64, p: &Phase, w: i64, elem_bytes: i64) -> i64 {
    let access = w * elem_bytes;
    let lanes_per_phase = match access {
        8 => 16,
        16 => 8,
        _ => 32,
    };
    let words = (access + 3) / 4;
    let mut total = 0i64;
    let warps = (threads + 31) / 32;
    // Per bank: the distinct words seen in this phase (at most 32 lanes x 4 words).
    let mut seen = [[0i64; 128]; 32];
    let mut count: [usize; 32];
    for warp in 0..warps {
        for k in 0..p.iters {
            for e0 in (0..p.vec).step_by(w as usize) {
                let mut lane = warp * 32;
                let end = (warp * 32 + 32).min(threads);
                while lane < end {
                    count = [0; 32];
                    for t in lane..(lane + lanes_per_phase).min(end) {
                        let first = table.get(p.coord(t, k, e0)) * elem_bytes / 4;
                        for word in first..first + words {
                            let b = word.rem_euclid(32) as usize;
                            if !seen[b][..count[b]].contains(&word) {
                                seen[b][count[b]] = word;
                                count[b] += 1;
                            }
                        }
                    }
                    total += *count.iter().max().unwrap_or(&0) as i64;
                    lane += lanes_per_phase;
                }
            }
        }
    }
    total
}

/// Wavefronts of every warp-wide shared-memory instruction of one CTA in phase `p`, each
/// accessing `w` elements per lane.
pub fn traffic(
    l: &SwizzledLayout,
    tile: [i64; 2],
    threads: i64,
    p: &Phase,
    w: i64,
    elem_bytes: i64,
) -> Result<Traffic, PlanError> {
    table_traffic(&Offsets::new(l, tile)?, threads, p, w, elem_bytes)
}

fn table_traffic(
    table: &Offsets,
    threads: i64,
    p: &Phase,
    w: i64,
    elem_bytes: i64,
) -> Result<Traffic, PlanError> {
    let access = u32::try_from(w * elem_bytes).map_err(|_| PlanError::Overflow("access width"))?;
    let mut out = Traffic::default();
    let warps = (threads + WARP_LANES as i64 - 1) / WARP_LANES as i64;
    for warp in 0..warps {
        let lanes: Vec<i64> = (0..WARP_LANES as i64)
            .map(|i| warp * WARP_LANES as i64 + i)
            .filter(|&t| t < threads)
            .collect();
        for k in 0..p.iters {
            for e0 in (0..p.vec).step_by(w as usize) {
                let addrs: Vec<Option<i64>> = lanes
                    .iter()
                    .map(|&t| Some(table.get(p.coord(t, k, e0)) * elem_bytes))
                    .collect();
                out.instructions += 1;
                out.wavefronts += i64::from(wavefronts(&addrs, access)?);
                out.ideal += ((lanes.len() as i64 * i64::from(access) + 127) / 128).max(1);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::phase::Along;

    /// The search's quick count equals the bank model's on every candidate of a few tiles,
    /// phases and access widths, for phases laid out both ways (`Phase::new`, and the
    /// planner's `Phase::warp_runs`, whose runs of 64 and 128 single elements take `segs`
    /// iterations).
    #[test]
    fn quick_wavefronts_count_like_the_bank_model() {
        let mut warp_run_phases = 0;
        for (tile, bytes, vec_f, vec_s) in [
            ([32, 32], 4, 4, 1),
            ([64, 64], 4, 1, 1),
            ([64, 32], 2, 8, 2),
            ([128, 64], 1, 16, 4),
            ([32, 128], 4, 1, 4),
            ([32, 128], 4, 1, 1),
        ] {
            let threads = 256.min(tile[0] * tile[1] / vec_f.max(vec_s));
            let phases = [
                Phase::new(Along::First, vec_f, tile, threads).unwrap(),
                Phase::new(Along::Second, vec_s, tile, threads).unwrap(),
                Phase::warp_runs(Along::First, vec_f, tile, threads).unwrap(),
                Phase::warp_runs(Along::Second, vec_s, tile, threads).unwrap(),
            ];
            warp_run_phases += phases.iter().filter(|p| p.segs > 1).count();
            let base = CuteLayout::from_flat(&tile, &[1, tile[0]]).unwrap();
            let bits = (tile[0] * tile[1]).trailing_zeros();
            let mut checked = 0;
            for b in 0..=3u32 {
                for m in 0..=4u32 {
                    for s in b.max(1)..=7u32 {
                        if b + m + s > bits {
                            continue;
                        }
                        let sw = Swizzle::new(b, m, s as i32).unwrap();
                        let l = SwizzledLayout::new(sw, base.clone()).unwrap();
                        let table = Offsets::new(&l, tile).unwrap();
                        for p in &phases {
                            let w = widest_vec(&table, threads, p, bytes);
                            let model = table_traffic(&table, threads, p, w, bytes).unwrap();
                            let quick = quick_wavefronts(&table, threads, p, w, bytes);
                            assert_eq!(quick, model.wavefronts, "{tile:?} {l} {p:?} w {w}");
                            checked += 1;
                        }
                    }
                }
            }
            assert!(checked > 10, "{tile:?}: {checked}");
        }
        assert_eq!(warp_run_phases, 3);
    }
}
