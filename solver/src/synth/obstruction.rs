//! Obstructions: necessary conditions that every plan meets, decided on the program's given
//! memory layouts alone. An operation for which one fails with every instruction it could use
//! has no plan at all, whatever the search would try: that, and only that, is reported as
//! infeasible. Where the search finds nothing but no obstruction holds, the answer is
//! [`SynthError::NotFound`].
//!
//! The condition behind every vector access (certify's vector and transfer claims): a vector of
//! `w` elements sits at `w` consecutive memory elements from a multiple of `w`, so it covers
//! exactly one aligned block `[w q, w q + w)`; every cell is in some vector, so the aligned block
//! of every cell's element must be held by cells of the tile, all `w` of them
//! ([`blocks_complete`]). A copy between two memories moves each vector between two such
//! blocks, the cells in the same order on both sides ([`blocks_agree`]).
//!
//! Example: f16 rows of 65 elements (`(64, 64):(65, 1)`): element 64 belongs to no cell, so the
//! block `[64, 66)` of cell `(1, 0)` at element 65 is not whole for `w = 2`, nor any wider `w`:
//! no cp.async (4, 8 or 16 bytes) moves row 1. Rows of 24 (`(8, 24):(24, 1)`) are whole blocks
//! of 2, 4 and 8.

use super::instr::{CopyKind, Instructions, Target};
use super::program::{SynthError, Tensor};
use super::smem::canonical;

/// Whether the aligned block of `w` elements around every cell's element `mem[cell]` is held by
/// cells of the tile.
///
/// ```
/// use solver::synth::obstruction::blocks_complete;
/// let rows_of_24: Vec<i64> = (0..8 * 24).map(|c| (c % 8) * 24 + c / 8).collect();
/// assert!(blocks_complete(&rows_of_24, 8));
/// let rows_of_65: Vec<i64> = (0..64 * 64).map(|c| (c % 64) * 65 + c / 64).collect();
/// assert!(!blocks_complete(&rows_of_65, 2));
/// ```
pub fn blocks_complete(mem: &[i64], w: i64) -> bool {
    if w <= 1 {
        return true;
    }
    let mut held: Vec<i64> = mem.to_vec();
    held.sort_unstable();
    held.dedup();
    held.iter().all(|&a| {
        let q = a - a.rem_euclid(w);
        (q..q + w).all(|e| held.binary_search(&e).is_ok())
    })
}

/// For an injective `src`: whether the cells of every aligned block of `w` elements of `src`,
/// in element order, sit at `w` consecutive elements of `dst` from a multiple of `w`. None when
/// `src` stores two cells at one element (the blocks' cells are then not determined).
pub fn blocks_agree(src: &[i64], dst: &[i64], w: i64) -> Option<bool> {
    let mut by_element: Vec<(i64, usize)> = src.iter().enumerate().map(|(c, &a)| (a, c)).collect();
    by_element.sort_unstable();
    if by_element.windows(2).any(|p| p[0].0 == p[1].0) {
        return None;
    }
    if w <= 1 {
        return Some(true);
    }
    let find = |a: i64| by_element.binary_search_by_key(&a, |&(e, _)| e).ok();
    Some(src.iter().all(|&a| {
        let q = a - a.rem_euclid(w);
        let cells: Option<Vec<usize>> = (q..q + w)
            .map(|e| find(e).map(|i| by_element[i].1))
            .collect();
        cells.is_some_and(|cells| {
            let d0 = dst[cells[0]];
            d0.rem_euclid(w) == 0 && cells.iter().zip(0..).all(|(&c, e)| dst[c] == d0 + e)
        })
    }))
}

/// Whether the TMA box copy could move the 2-D `global` (table `gmem`) into `shared` (`smem`:
/// its given table, or None for a layout still to choose) with `atom`: the global rows are a
/// tensor map's (contiguous columns, a row stride of at least a row and a multiple of 16
/// bytes) and the shared layout is (or may be chosen as) the atom tiled over the shape. An
/// atom this module cannot resolve counts as possible.
fn tma_possible(
    global: &Tensor,
    gmem: &[i64],
    smem: Option<&[i64]>,
    atom: Option<layout::SwizzledLayout>,
) -> Result<bool, SynthError> {
    let [rows, cols] = global.shape[..] else {
        return Ok(false);
    };
    let bits = global.dtype.bits();
    let stride = if rows > 1 { gmem[1] } else { cols };
    let rows_ok = stride >= cols
        && (stride * bits) % 128 == 0
        && (0..cols).all(|c| (0..rows).all(|r| gmem[(r + rows * c) as usize] == r * stride + c));
    if !rows_ok {
        return Ok(false);
    }
    let Some(atom) = atom else {
        return Ok(true);
    };
    Ok(match canonical(&global.shape, &atom)? {
        None => false,
        Some(tiled) => smem.is_none_or(|s| s == tiled.table.as_slice()),
    })
}

/// Why no plan can copy `global` (table `gmem`) into `shared` (`smem`: its given table, or None
/// when its layout is to be chosen) on `target`, or None when some cp.async width or TMA box
/// meets the necessary conditions (the search may still have found no plan).
pub fn global_to_shared(
    global: &Tensor,
    gmem: &[i64],
    smem: Option<&[i64]>,
    target: Target,
) -> Result<Option<String>, SynthError> {
    let ins = Instructions::get()?;
    let bits = global.dtype.bits();
    let mut widths = Vec::new();
    for c in ins.copies(CopyKind::CpAsync, target) {
        if c.bits % bits != 0 {
            continue;
        }
        let w = c.bits / bits;
        let ok = blocks_complete(gmem, w)
            && smem
                .is_none_or(|s| blocks_complete(s, w) && blocks_agree(gmem, s, w) != Some(false));
        if ok {
            return Ok(None);
        }
        widths.push(c.bits / 8);
    }
    let mut tma = false;
    for c in ins.copies(CopyKind::Tma, target) {
        if tma_possible(global, gmem, smem, c.atom_in(bits))? {
            return Ok(None);
        }
        tma = true;
    }
    widths.sort_unstable();
    widths.dedup();
    let widths: Vec<String> = widths.iter().map(|w| w.to_string()).collect();
    let side = if smem.is_some() {
        "and the given shared layout in the same order"
    } else {
        "(and so no shared layout can receive it)"
    };
    Ok(Some(format!(
        "cp.async moves {} contiguous bytes from an address aligned to its size; no such \
         vector of {} fits the global layout {} {side}{}",
        either(&widths),
        global.dtype,
        global
            .layout
            .as_ref()
            .map(|l| l.print())
            .unwrap_or_default(),
        if tma {
            "; a TMA box needs rows of contiguous columns at a stride of a multiple of 16 bytes, \
             into a canonical layout"
        } else {
            ""
        }
    )))
}

/// `a`, `a or b`, `a, b or c`.
fn either(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

/// Why no vector access of the target moves `memory` (table `mem`, fixed: a global or a given
/// shared layout) to or from registers, or None when some width's blocks are whole. Only
/// sub-byte elements can fail: every target moves single elements of 8 bits and more.
pub fn register_memory(
    memory: &Tensor,
    mem: &[i64],
    target: Target,
) -> Result<Option<String>, SynthError> {
    let ins = Instructions::get()?;
    let bits = memory.dtype.bits();
    let kinds = [
        CopyKind::LdGlobal,
        CopyKind::StGlobal,
        CopyKind::LdShared,
        CopyKind::StShared,
    ];
    let mut narrowest = i64::MAX;
    for kind in kinds {
        for c in ins.copies(kind, target) {
            if c.bits % bits == 0 {
                narrowest = narrowest.min(c.bits / bits);
            }
        }
    }
    if narrowest == i64::MAX || blocks_complete(mem, narrowest) {
        return Ok(None);
    }
    Ok(Some(format!(
        "the narrowest access moves {narrowest} {} elements from an element index aligned to \
         {narrowest}, and {}'s layout {} leaves such a block partly outside the tile",
        memory.dtype,
        memory.name,
        memory
            .layout
            .as_ref()
            .map(|l| l.print())
            .unwrap_or_default()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive_complete(mem: &[i64], w: i64) -> bool {
        mem.iter().all(|&a| {
            let q = a.div_euclid(w) * w;
            (q..q + w).all(|e| mem.contains(&e))
        })
    }

    #[test]
    fn blocks_complete_is_its_definition() {
        for rows in 1..6i64 {
            for cols in 1..7i64 {
                for stride in cols..cols + 4 {
                    let mem: Vec<i64> = (0..rows * cols)
                        .map(|c| (c % rows) * stride + c / rows)
                        .collect();
                    for w in [1, 2, 4, 8] {
                        assert_eq!(blocks_complete(&mem, w), naive_complete(&mem, w));
                    }
                }
            }
        }
    }

    #[test]
    fn blocks_agree_compares_orders() {
        let row_major: Vec<i64> = (0..4 * 6).map(|c| (c % 4) * 6 + c / 4).collect();
        let col_major: Vec<i64> = (0..4 * 6).collect();
        assert_eq!(blocks_agree(&row_major, &row_major, 2), Some(true));
        assert_eq!(blocks_agree(&row_major, &col_major, 2), Some(false));
        assert_eq!(blocks_agree(&row_major, &col_major, 1), Some(true));
        assert_eq!(blocks_agree(&[0, 0], &[0, 1], 2), None);
    }
}
