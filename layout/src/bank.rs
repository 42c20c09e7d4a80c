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

/// Number of shared-memory banks.
pub const BANKS: i64 = 32;
/// Width of one bank word in bytes.
pub const BANK_BYTES: i64 = 4;
/// Lanes of a warp.
pub const WARP_LANES: usize = 32;

/// Shared-memory wavefronts of one warp-wide instruction: lane i accesses `access_bytes`
/// bytes starting at byte address addrs[i] (None = inactive lane). 32 banks x 4 bytes.
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
