//! Trainium on-chip memory as Axe axes, with each target's capacities as data.
//!
//! SBUF and PSUM are 2-D memories: 128 partitions (axis `P`) by a free axis (`F`). An Axe
//! layout of an on-chip tile maps its logical coordinates to `{P, F}` points; `F` counts
//! elements of the tile's dtype (PSUM holds matmul results, so float32). PSUM's free axis is
//! 8 banks of 2 KiB per partition; the registry (`layout/data/axes.toml`, target `trainium`)
//! names a PSUM address `(bank, pcol)` with `F = pcol + 512*bank`. The capacities of trn1
//! (NeuronCore-v2) and trn2 (NeuronCore-v3) are in `layout/data/trainium.toml`, with their
//! sources. Worked example (a test checks it): on trn2 a partition holds 224 KiB of SBUF, so
//! a bf16 tile of shape `[128, 114688]` is the largest that fits; PSUM element 1000 of a
//! partition (fp32) lies in bank `1000*4 / 2048 = 1`.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::axis::Axis;
use crate::error::{LayoutError, Result};

/// One target's on-chip capacities (bytes per partition unless named otherwise).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Target {
    /// `trn1`, `trn2`.
    pub name: String,
    /// The NeuronCore generation.
    pub core: String,
    /// Partitions of SBUF and PSUM (the `P` extent).
    pub partitions: i64,
    /// SBUF bytes per partition.
    pub sbuf_bytes_per_partition: i64,
    /// PSUM bytes per partition.
    pub psum_bytes_per_partition: i64,
    /// Bytes of one PSUM bank per partition.
    pub psum_bank_bytes: i64,
    /// PSUM banks.
    pub psum_banks: i64,
    /// Most free elements of nc_matmul's stationary operand.
    pub stationary_fmax: i64,
    /// Most free elements of nc_matmul's moving operand.
    pub moving_fmax: i64,
}

impl Target {
    /// The PSUM bank of a float32 element at free offset `f` of a partition.
    pub fn psum_bank_of(&self, f: i64) -> i64 {
        f * 4 / self.psum_bank_bytes
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TargetsFile {
    target: Vec<Target>,
}

const DATA: &str = include_str!("../data/trainium.toml");

/// Every target in `layout/data/trainium.toml`, by name. Parsed once per process.
pub fn targets() -> &'static BTreeMap<String, Target> {
    static PARSED: std::sync::LazyLock<BTreeMap<String, Target>> = std::sync::LazyLock::new(|| {
        // The embedded file is tested (`targets_load_with_documented_capacities`).
        let file: TargetsFile = toml::from_str(DATA).expect("layout/data/trainium.toml is valid");
        file.target
            .into_iter()
            .map(|t| (t.name.clone(), t))
            .collect()
    });
    &PARSED
}

/// The target of that name (`trn1`, `trn2`).
pub fn target(name: &str) -> Result<&'static Target> {
    targets().get(name).ok_or_else(|| {
        LayoutError::invalid(
            format!("Trainium target {name:?}"),
            "known targets are trn1 and trn2",
        )
    })
}

/// The partition axis `P`.
pub fn partition_axis() -> Axis {
    Axis::new("P").expect("P is an identifier")
}

/// The free axis `F`.
pub fn free_axis() -> Axis {
    Axis::new("F").expect("F is an identifier")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::axis::{AxisRegistry, Point};

    #[test]
    fn targets_load_with_documented_capacities() {
        let t1 = target("trn1").unwrap();
        let t2 = target("trn2").unwrap();
        assert_eq!(t1.sbuf_bytes_per_partition * t1.partitions, 24 << 20);
        assert_eq!(t2.sbuf_bytes_per_partition * t2.partitions, 28 << 20);
        for t in [t1, t2] {
            assert_eq!(t.partitions, 128);
            assert_eq!(t.psum_bank_bytes * t.psum_banks, t.psum_bytes_per_partition);
            assert_eq!((t.stationary_fmax, t.moving_fmax), (128, 512));
        }
        // The worked example: the largest bf16 tile on trn2, and a PSUM element's bank.
        assert_eq!(t2.sbuf_bytes_per_partition / 2, 114688);
        assert_eq!(t2.psum_bank_of(1000), 1);
        assert_eq!(t2.psum_bank_of(511), 0);
        assert_eq!(t2.psum_bank_of(512), 1);
        assert!(target("trn9").is_err());
    }

    #[test]
    fn psum_bank_address_fuses_to_the_free_axis() {
        let r = AxisRegistry::builtin();
        let ax = |s: &str| Axis::new(s).unwrap();
        let p: Point = [(ax("pcol"), 7), (ax("bank"), 3), (ax("partition"), 5)].into();
        assert_eq!(
            r.fuse_point("trainium", &p).unwrap(),
            [(ax("F"), 7 + 3 * 512), (ax("P"), 5)].into()
        );
    }
}
