//! Anchors (paper algorithm 1, step 2) and the TV layouts they build.
//!
//! A [`Tv`] is a thread-value layout kept as flat modes: `(extent, stride)` lists for the thread
//! and the value coordinate, strides in the tensor's column-major cell index. An mma anchor
//! tiles the accumulator with the atom's C layout: the atom's modes are re-based from the atom
//! tile into the tensor tile (composition with the embedding `(Ma,Na):(1,M)`), warps are laid
//! out `WM x WN` over atom blocks, and the remaining blocks become value repeats; A and B
//! follow from the same arrangement with the other warps' axis broadcast (stride 0). A copy
//! anchor is coalesced: vectors along the memory's unit-stride dimension, consecutive threads
//! on consecutive vectors.

use layout::cute::make_layout;
use layout::{CuteLayout, TvLayout};

use super::instr::MmaAtom;
use super::program::SynthError;

/// A thread-value layout as flat modes over a column-major tile.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Tv {
    /// Thread modes, innermost first.
    pub threads: Vec<(i64, i64)>,
    /// Value modes, innermost first.
    pub values: Vec<(i64, i64)>,
    /// The tile.
    pub shape: Vec<i64>,
}

fn size(m: &[(i64, i64)]) -> i64 {
    m.iter().map(|&(e, _)| e).product()
}

fn eval_modes(m: &[(i64, i64)], mut i: i64) -> i64 {
    let mut o = 0;
    for &(e, s) in m {
        o += (i % e) * s;
        i /= e;
    }
    o
}

impl Tv {
    /// Threads.
    pub fn nthreads(&self) -> i64 {
        size(&self.threads)
    }

    /// Values per thread.
    pub fn nvalues(&self) -> i64 {
        size(&self.values)
    }

    /// Column-major cell index held by `(t, v)`.
    pub fn cell(&self, t: i64, v: i64) -> i64 {
        eval_modes(&self.threads, t) + eval_modes(&self.values, v)
    }

    /// Every `(t, v)`'s cell, `t`-major.
    pub fn table(&self) -> Vec<i64> {
        let (nt, nv) = (self.nthreads(), self.nvalues());
        // The value offsets are the same for every thread: evaluate them once.
        let offsets: Vec<i64> = (0..nv).map(|v| eval_modes(&self.values, v)).collect();
        let mut out = Vec::with_capacity((nt * nv) as usize);
        for t in 0..nt {
            let base = eval_modes(&self.threads, t);
            out.extend(offsets.iter().map(|&o| base + o));
        }
        out
    }

    /// The same map as a CuTe TV layout `((threads),(values)) -> shape`.
    pub fn to_layout(&self) -> Result<TvLayout, SynthError> {
        let mode = |m: &[(i64, i64)]| {
            let m: Vec<(i64, i64)> = if m.is_empty() {
                vec![(1, 0)]
            } else {
                m.to_vec()
            };
            let (e, s): (Vec<i64>, Vec<i64>) = m.into_iter().unzip();
            CuteLayout::from_flat(&e, &s)
        };
        let l = make_layout(&[mode(&self.threads)?, mode(&self.values)?])?;
        Ok(TvLayout::new(l, self.shape.clone())?)
    }

    /// The Triton linear form `#ttg.linear<{register, lane, warp, block}>` (bases as
    /// `[row, col]`), when the map is F2-linear: power-of-two sizes and every `(t, v)` the XOR
    /// of the bases of its set bits (checked on every point). None otherwise.
    pub fn linear(&self) -> Option<String> {
        let (nt, nv) = (self.nthreads(), self.nvalues());
        let pow2 = |x: i64| x > 0 && x & (x - 1) == 0;
        if !pow2(nt) || !pow2(nv) || !self.shape.iter().all(|&d| pow2(d)) {
            return None;
        }
        let r = self.shape[0];
        let coord = |cell: i64| -> Vec<i64> {
            if self.shape.len() == 2 {
                vec![cell % r, cell / r]
            } else {
                vec![cell]
            }
        };
        let xor = |a: &[i64], b: &[i64]| a.iter().zip(b).map(|(x, y)| x ^ y).collect::<Vec<_>>();
        let vb: Vec<Vec<i64>> = (0..nv.trailing_zeros())
            .map(|b| coord(self.cell(0, 1 << b)))
            .collect();
        let tb: Vec<Vec<i64>> = (0..nt.trailing_zeros())
            .map(|b| coord(self.cell(1 << b, 0)))
            .collect();
        let zero = coord(self.cell(0, 0));
        if zero.iter().any(|&z| z != 0) {
            return None;
        }
        for t in 0..nt {
            for v in 0..nv {
                let mut acc = zero.clone();
                for (b, base) in tb.iter().enumerate() {
                    if t >> b & 1 == 1 {
                        acc = xor(&acc, base);
                    }
                }
                for (b, base) in vb.iter().enumerate() {
                    if v >> b & 1 == 1 {
                        acc = xor(&acc, base);
                    }
                }
                if acc != coord(self.cell(t, v)) {
                    return None;
                }
            }
        }
        let list = |bs: &[Vec<i64>]| {
            let items: Vec<String> = bs
                .iter()
                .map(|b| {
                    format!(
                        "[{}]",
                        b.iter()
                            .map(|x| x.to_string())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                })
                .collect();
            format!("[{}]", items.join(", "))
        };
        let lanes = tb.len().min(5);
        Some(format!(
            "#ttg.linear<{{register = {}, lane = {}, warp = {}, block = []}}>",
            list(&vb),
            list(&tb[..lanes]),
            list(&tb[lanes..])
        ))
    }

    /// The same layout with its warps renumbered canonically: when the thread modes split at
    /// 32 (the leading modes hold exactly the 32 lanes of a warp), the modes after them (the
    /// warp index) are sorted. Thread `32 w + l` holds `lanes(l) + warps(w) + values(v)`, so
    /// permuting the warp modes only permutes whole warps: the result holds the same multiset
    /// of per-warp cell slices as `self`. Without such a split, `self` unchanged.
    ///
    /// Two layouts with equal `warp_canonical` issue the same per-warp accesses, in another
    /// warp order (Triton's warp order against the other one, for example).
    pub fn warp_canonical(&self) -> Tv {
        let mut lanes = 1;
        let mut k = 0;
        while k < self.threads.len() && lanes < 32 {
            lanes *= self.threads[k].0;
            k += 1;
        }
        let mut out = self.clone();
        if lanes == 32 {
            out.threads[k..].sort_unstable();
        }
        out
    }

    /// Drops size-1 modes.
    pub fn tidy(mut self) -> Tv {
        self.threads.retain(|&(e, _)| e != 1);
        self.values.retain(|&(e, _)| e != 1);
        self
    }

    /// `mu o f` for `mu` dropping dimension `dim` of a 2-D tile: each stride is re-read in the
    /// remaining dimension (a mode that moves only along `dim` becomes a broadcast, stride 0).
    pub fn project(&self, dim: usize) -> Result<Tv, SynthError> {
        let [r, c] = self.shape[..] else {
            return Err(SynthError::Internal(
                "projection of a non-2-D layout".into(),
            ));
        };
        let map = |modes: &[(i64, i64)]| -> Result<Vec<(i64, i64)>, SynthError> {
            modes
                .iter()
                .map(|&(e, s)| {
                    let (dr, dc) = (s % r, s / r);
                    let clean = s == 0 || dc == 0 && (e - 1) * s < r || dr == 0;
                    if !clean {
                        return Err(SynthError::Internal(format!(
                            "mode {e}:{s} straddles rows of {r}"
                        )));
                    }
                    Ok((e, if dim == 0 { dc } else { dr }))
                })
                .collect()
        };
        let shape = vec![if dim == 0 { c } else { r }];
        Ok(Tv {
            threads: map(&self.threads)?,
            values: map(&self.values)?,
            shape,
        })
    }
}

/// The dimension of `out_shape` a broadcast operand of `operand_shape` lacks: the one whose
/// projection of `out` reproduces the operand's layout when that is known, else the last
/// dimension that fits (a per-row value, as `reduce(x, 1, ..)` produces).
pub fn broadcast_dim(out: &Tv, operand_shape: &[i64], operand: Option<&Tv>) -> Option<usize> {
    let fits: Vec<usize> = (0..out.shape.len())
        .rev()
        .filter(|&d| {
            let mut s = out.shape.clone();
            s.remove(d);
            s == operand_shape
        })
        .collect();
    if let Some(known) = operand {
        for &d in &fits {
            if out.project(d).is_ok_and(|p| p.table() == known.table()) {
                return Some(d);
            }
        }
    }
    fits.first().copied()
}

/// Re-bases the flat modes of `atom` (over its tile `ext`) into a tile of `rows` rows: stride
/// `s` (cell `(s % er, s / er)` of the atom) becomes `s % er + rows * (s / er)`. This is the
/// composition `(er, ec):(1, rows) o atom`; a mode that straddles atom rows is refused.
pub fn rebase(modes: &[(i64, i64)], ext: &[i64], rows: i64) -> Result<Vec<(i64, i64)>, SynthError> {
    let er = ext[0];
    modes
        .iter()
        .map(|&(e, s)| {
            let (dr, dc) = (s % er, s / er);
            if s != 0 && (dr != 0 && dc != 0 || dc == 0 && (e - 1) * s >= er) {
                return Err(SynthError::Internal(format!(
                    "atom mode {e}:{s} straddles rows"
                )));
            }
            Ok((e, dr + rows * dc))
        })
        .collect()
}

/// Flat `(extent, stride)` modes.
type Modes = Vec<(i64, i64)>;

fn split(tv: &TvLayout) -> (Modes, Modes) {
    let m = tv.layout().modes();
    (m[0].flat_modes(), m[1].flat_modes())
}

/// How warps (or warpgroups) are laid over the atom blocks of C.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Arrangement {
    /// Groups along M.
    pub wm: i64,
    /// Groups along N.
    pub wn: i64,
    /// Groups interleave at atom granularity (Triton's order) or own contiguous blocks.
    pub interleaved: bool,
    /// C's values pair adjacent N atoms first (so C can feed a following mma's A operand).
    pub pair_n: bool,
    /// A's and B's value repeats run along K first (so a thread's K-neighbours are adjacent
    /// values: packed sub-byte weights load as one word).
    pub k_first: bool,
    /// Triton's order: warp ids run along N first, and C's value repeats along N before M
    /// (with `k_first`, this is exactly Triton's `nvidia_mma` / `dot_op` layouts).
    pub triton_order: bool,
}

/// The TV layouts of C, A and B for `atom` tiling `(m, n, k)` with `arr`. A or B is `None`
/// when the atom reads it from shared memory.
pub fn mma_layouts(
    atom: &MmaAtom,
    [m, n, k]: [i64; 3],
    arr: Arrangement,
) -> Result<(Tv, Option<Tv>, Option<Tv>), SynthError> {
    let [am, an, ak] = atom.shape;
    let (wm, wn) = (arr.wm, arr.wn);
    if m % (am * wm) != 0 || n % (an * wn) != 0 || k % ak != 0 {
        return Err(SynthError::Internal("arrangement does not tile".into()));
    }
    let (rm, rn, rk) = (m / (am * wm), n / (an * wn), k / ak);
    // Offsets (in rows / cols) of warp index and repeat index along M and N.
    let (wstep_m, rstep_m) = if arr.interleaved {
        (am, am * wm)
    } else {
        (am * rm, am)
    };
    let (wstep_n, rstep_n) = if arr.interleaved {
        (an, an * wn)
    } else {
        (an * rn, an)
    };
    let (ct, cv) = split(&atom.c_layout);
    let mut threads = rebase(&ct, atom.c_layout.tile(), m)?;
    if arr.triton_order {
        threads.extend([(wn, m * wstep_n), (wm, wstep_m)]);
    } else {
        threads.extend([(wm, wstep_m), (wn, m * wstep_n)]);
    }
    let mut values = rebase(&cv, atom.c_layout.tile(), m)?;
    if arr.triton_order && !arr.pair_n {
        values.extend([(rn, m * rstep_n), (rm, rstep_m)]);
    } else if arr.pair_n && rn % 2 == 0 && !arr.interleaved {
        values.extend([(2, m * rstep_n), (rm, rstep_m), (rn / 2, 2 * m * rstep_n)]);
    } else if arr.pair_n {
        return Err(SynthError::Internal(
            "pairing needs an even, blocked N repeat".into(),
        ));
    } else {
        values.extend([(rm, rstep_m), (rn, m * rstep_n)]);
    }
    let c = Tv {
        threads,
        values,
        shape: vec![m, n],
    }
    .tidy();
    let a = atom
        .a
        .as_ref()
        .map(|pa| -> Result<Tv, SynthError> {
            let (t, v) = split(pa);
            let mut threads = rebase(&t, pa.tile(), m)?;
            if arr.triton_order {
                threads.extend([(wn, 0), (wm, wstep_m)]);
            } else {
                threads.extend([(wm, wstep_m), (wn, 0)]);
            }
            let mut values = rebase(&v, pa.tile(), m)?;
            if arr.k_first {
                values.extend([(rk, m * ak), (rm, rstep_m)]);
            } else {
                values.extend([(rm, rstep_m), (rk, m * ak)]);
            }
            Ok(Tv {
                threads,
                values,
                shape: vec![m, k],
            }
            .tidy())
        })
        .transpose()?;
    let b = atom
        .b
        .as_ref()
        .map(|pb| -> Result<Tv, SynthError> {
            let (t, v) = split(pb);
            let mut threads = rebase(&t, pb.tile(), n)?;
            if arr.triton_order {
                threads.extend([(wn, wstep_n), (wm, 0)]);
            } else {
                threads.extend([(wm, 0), (wn, wstep_n)]);
            }
            let mut values = rebase(&v, pb.tile(), n)?;
            if arr.k_first {
                values.extend([(rk, n * ak), (rn, rstep_n)]);
            } else {
                values.extend([(rn, rstep_n), (rk, n * ak)]);
            }
            Ok(Tv {
                threads,
                values,
                shape: vec![n, k],
            }
            .tidy())
        })
        .transpose()?;
    Ok((c, a, b))
}

/// Every arrangement of `groups` warps (warpgroups) over C for `atom` on `(m, n)`, the
/// widest-M first.
pub fn arrangements(atom: &MmaAtom, m: i64, n: i64, groups: i64) -> Vec<Arrangement> {
    let mut out = Vec::new();
    let mut wm = groups;
    while wm >= 1 {
        let wn = groups / wm;
        if wm * wn == groups && m % (atom.shape[0] * wm) == 0 && n % (atom.shape[1] * wn) == 0 {
            for interleaved in [true, false] {
                for pair_n in [false, true] {
                    let rn = n / (atom.shape[1] * wn);
                    if pair_n && (interleaved || rn % 2 != 0) {
                        continue;
                    }
                    if interleaved && (wm == 1 && wn == 1) {
                        continue; // same as blocked
                    }
                    // Triton's order first: on equal cost the search keeps the first plan, so
                    // ties resolve to the layouts users get from Triton today.
                    for (triton_order, k_first) in [(true, true), (false, false), (false, true)] {
                        if triton_order && pair_n {
                            continue;
                        }
                        out.push(Arrangement {
                            wm,
                            wn,
                            interleaved,
                            pair_n,
                            k_first,
                            triton_order,
                        });
                    }
                }
            }
        }
        wm /= 2;
    }
    out
}

fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 {
        a.abs()
    } else {
        gcd(b, a % b)
    }
}

/// A coalesced TV layout for `threads` threads over a tile whose memory layout has unit stride
/// along `fast` (0 or 1): vectors of `vec` cells along `fast`, consecutive threads on
/// consecutive vectors, then the other dimension, then repeats.
///
/// Threads take the largest factor of the vectors along `fast` that divides their count
/// (`gcd`), then of the other dimension; threads left over hold copies (a stride-0 mode), so
/// every tile whose `fast` extent is whole vectors gets a layout over exactly `threads`
/// threads: 32 threads over `[24, 16]` rows of 4-cell vectors are 4 along a row x 8 rows, each
/// holding 3 rows apart by 8. None when `fast` is not whole vectors.
pub fn coalesced(shape: &[i64], fast: usize, vec: i64, threads: i64) -> Option<Tv> {
    if vec < 1 || threads < 1 {
        return None;
    }
    if shape.len() == 1 {
        let n = shape[0];
        if n % vec != 0 {
            return None;
        }
        let tf = gcd(threads, n / vec);
        let rest = n / vec / tf;
        let bcast = threads / tf;
        return Some(
            Tv {
                threads: vec![(tf, vec), (bcast, 0)],
                values: vec![(vec, 1), (rest, vec * tf)],
                shape: shape.to_vec(),
            }
            .tidy(),
        );
    }
    let (ef, es) = (shape[fast], shape[1 - fast]);
    let (sf, ss) = if fast == 0 {
        (1, shape[0])
    } else {
        (shape[0], 1)
    };
    if ef % vec != 0 {
        return None;
    }
    let tf = gcd(threads, ef / vec);
    let ts = gcd(threads / tf, es);
    let bcast = threads / (tf * ts);
    Some(
        Tv {
            threads: vec![(tf, vec * sf), (ts, ss), (bcast, 0)],
            values: vec![
                (vec, sf),
                (ef / vec / tf, vec * tf * sf),
                (es / ts, ts * ss),
            ],
            shape: shape.to_vec(),
        }
        .tidy(),
    )
}

/// A memory layout as flat modes `(extent, memory stride, cell stride)`: mode `i` moves
/// `memory stride` elements in memory and `cell stride` in the tile's column-major cell index.
pub type MemoryModes = Vec<(i64, i64, i64)>;

/// The flat modes of a CuTe memory layout over `shape` (one top mode per dimension), with each
/// sub-mode's cell stride; None for any other layout (swizzled, or not one mode per dimension).
pub fn memory_modes(l: &layout::Layout, shape: &[i64]) -> Option<MemoryModes> {
    let layout::Layout::Cute(c) = l else {
        return None;
    };
    let modes = c.modes();
    if modes.len() != shape.len() {
        return None;
    }
    let mut out = Vec::new();
    let mut dim_stride = 1i64;
    for (m, &extent) in modes.iter().zip(shape) {
        let mut within = 1i64;
        for (e, s) in m.flat_modes() {
            out.push((e, s, within.checked_mul(dim_stride)?));
            within = within.checked_mul(e)?;
        }
        if within != extent {
            return None;
        }
        dim_stride = dim_stride.checked_mul(extent)?;
    }
    Some(out)
}

/// A coalesced TV layout read off a memory layout's own modes (`modes`, from
/// [`memory_modes`]): the vector is the memory's contiguous run of `vec` elements, whatever
/// dimensions it crosses (4 i8 of `[64, 2]` rows `(2, 1)` are two rows), and every other
/// mode's memory stride must be a multiple of `vec` (the vectors are aligned); the remaining
/// modes, in memory order, go to threads as in [`coalesced`] (`gcd` factors, the rest copies)
/// and then to values. None when the memory has no such run.
///
/// Modes are sorted by memory stride and merged where they continue each other in memory and
/// in the tile, so `(3, 2):(1, 3)` over `[3, 2]` is one run of 6.
pub fn coalesced_modes(
    modes: &[(i64, i64, i64)],
    shape: &[i64],
    vec: i64,
    threads: i64,
) -> Option<Tv> {
    if vec < 1 || threads < 1 {
        return None;
    }
    let mut sorted: MemoryModes = modes.iter().copied().filter(|m| m.0 > 1).collect();
    sorted.sort_by_key(|&(e, m, c)| (m, c, e));
    let mut merged: MemoryModes = Vec::new();
    for (e, m, c) in sorted {
        match merged.last_mut() {
            Some(last)
                if last.0.checked_mul(last.1) == Some(m)
                    && last.0.checked_mul(last.2) == Some(c) =>
            {
                last.0 = last.0.checked_mul(e)?;
            }
            _ => merged.push((e, m, c)),
        }
    }
    // The vector: the contiguous run from memory stride 1.
    let mut vector = Vec::new();
    let mut need = vec;
    let mut run = 1i64;
    let mut grid = merged.into_iter().peekable();
    while need > 1 {
        let (e, m, c) = grid.next()?;
        if m != run {
            return None;
        }
        if e % need == 0 {
            vector.push((need, c));
            let left = (e / need, m.checked_mul(need)?, c.checked_mul(need)?);
            need = 1;
            if left.0 > 1 {
                let rest: MemoryModes = std::iter::once(left).chain(grid).collect();
                return place(vector, rest, shape, vec, threads);
            }
        } else if need % e == 0 {
            vector.push((e, c));
            need /= e;
            run = run.checked_mul(e)?;
        } else {
            return None;
        }
    }
    place(vector, grid.collect(), shape, vec, threads)
}

/// Threads over the vector grid `rest` (memory order): `gcd` factors, then copies.
fn place(
    vector: Vec<(i64, i64)>,
    rest: MemoryModes,
    shape: &[i64],
    vec: i64,
    threads: i64,
) -> Option<Tv> {
    if rest.iter().any(|&(_, m, _)| m % vec != 0) {
        return None;
    }
    let mut left = threads;
    let mut thread_modes = Vec::new();
    let mut values = vector;
    for (e, _, c) in rest {
        let g = gcd(left, e);
        thread_modes.push((g, c));
        values.push((e / g, g.checked_mul(c)?));
        left /= g;
    }
    thread_modes.push((left, 0));
    Some(
        Tv {
            threads: thread_modes,
            values,
            shape: shape.to_vec(),
        }
        .tidy(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::instr::Instructions;

    #[test]
    fn rebase_is_composition_with_the_embedding() {
        // SM80 C atom on (16,8) into a 128-row tile: strides (32,1 | 16,8) -> (256,1 | 128,8).
        let r = rebase(&[(4, 32), (8, 1), (2, 16), (2, 8)], &[16, 8], 128).unwrap();
        assert_eq!(r, [(4, 256), (8, 1), (2, 128), (2, 8)]);
        // Against CuTe composition, evaluated: (16,8):(1,128) o atom.
        let emb = CuteLayout::from_flat(&[16, 8], &[1, 128]).unwrap();
        let atom = CuteLayout::from_flat(&[4, 8, 2, 2], &[32, 1, 16, 8]).unwrap();
        let comp = layout::cute::composition(&emb, &atom).unwrap();
        let mine = CuteLayout::from_flat(&[4, 8, 2, 2], &[256, 1, 128, 8]).unwrap();
        for i in 0..128 {
            assert_eq!(comp.eval_index(i).unwrap(), mine.eval_index(i).unwrap());
        }
    }

    #[test]
    fn table_lists_every_cell_thread_major() {
        let atom = &Instructions::get().unwrap().mma[0];
        let arr = arrangements(atom, 64, 64, 4)[1];
        let (c, a, _) = mma_layouts(atom, [64, 64, 64], arr).unwrap();
        for tv in [c, a.unwrap(), coalesced(&[64, 32], 1, 8, 128).unwrap()] {
            let (nt, nv) = (tv.nthreads(), tv.nvalues());
            let want: Vec<i64> = (0..nt)
                .flat_map(|t| (0..nv).map(move |v| (t, v)))
                .map(|(t, v)| tv.cell(t, v))
                .collect();
            assert_eq!(tv.table(), want, "{tv:?}");
        }
    }

    #[test]
    fn warp_canonical_holds_the_same_warp_slices() {
        let atom = &Instructions::get().unwrap().mma[0];
        let all = arrangements(atom, 128, 128, 4);
        let slices = |tv: &Tv| {
            let t = tv.table();
            let mut s: Vec<Vec<i64>> = t
                .chunks(32 * tv.nvalues() as usize)
                .map(|c| c.to_vec())
                .collect();
            s.sort();
            s
        };
        let mut merged = 0;
        for x in &all {
            for y in &all {
                let (_, ax, _) = mma_layouts(atom, [128, 128, 32], *x).unwrap();
                let (_, ay, _) = mma_layouts(atom, [128, 128, 32], *y).unwrap();
                let (ax, ay) = (ax.unwrap(), ay.unwrap());
                let (cx, cy) = (ax.warp_canonical(), ay.warp_canonical());
                assert_eq!(slices(&cx), slices(&ax));
                if cx == cy {
                    assert_eq!(slices(&ax), slices(&ay), "{x:?} {y:?}");
                    merged += usize::from(ax != ay);
                }
            }
        }
        // Triton's warp order and the other one give A the same warps.
        assert!(merged > 0);
        // A layout whose thread modes do not split at 32 is its own canonical form.
        let odd = Tv {
            threads: vec![(16, 1), (8, 16)],
            values: vec![(4, 128)],
            shape: vec![128, 4],
        };
        assert_eq!(odd.warp_canonical(), odd);
    }

    #[test]
    fn one_warp_one_atom_is_the_atom() {
        let atom = &Instructions::get().unwrap().mma[0];
        let arr = Arrangement {
            wm: 1,
            wn: 1,
            interleaved: false,
            pair_n: false,
            k_first: false,
            triton_order: false,
        };
        let (c, a, b) = mma_layouts(atom, [16, 8, 16], arr).unwrap();
        let want = atom.c_layout.clone();
        for t in 0..32 {
            for v in 0..4 {
                let cell = c.cell(t, v);
                assert_eq!(vec![cell % 16, cell / 16], want.eval(t, v).unwrap());
            }
        }
        assert_eq!(a.unwrap().nvalues(), 8);
        assert_eq!(b.unwrap().nvalues(), 4);
    }

    #[test]
    fn coalesced_rows_put_consecutive_threads_on_consecutive_vectors() {
        // 128x32 f16 row-major: 4 threads per row of 32 (8-wide vectors), 32 rows per pass.
        let tv = coalesced(&[128, 32], 1, 8, 128).unwrap();
        assert_eq!(tv.cell(1, 0), 8 * 128); // thread 1 starts at column 8
        assert_eq!(tv.cell(4, 0), 1); // thread 4 starts row 1
        assert_eq!(tv.nvalues(), 32);
        let mut t = tv.table();
        t.sort();
        assert_eq!(t, (0..4096).collect::<Vec<_>>());
    }

    #[test]
    fn projection_broadcasts_the_dropped_dimension() {
        let tv = coalesced(&[16, 64], 1, 4, 64).unwrap();
        let p = tv.project(1).unwrap();
        for t in 0..64 {
            for v in 0..tv.nvalues() {
                assert_eq!(p.cell(t, v), tv.cell(t, v) % 16);
            }
        }
    }
}
