//! Shared builders for the F2 test files: 2-D layouts over `dim0 x dim1`, and a small
//! deterministic random generator for layouts whose bases permute the logical bits.
// Each test binary uses a different subset of these helpers.
#![allow(dead_code)]

use layout::linear::{InDim, LinearLayout, OutDim};

/// A layout into `(dim0: 2^d0, dim1: 2^d1)` from named bases.
pub fn ll2(ins: &[(&str, Vec<Vec<i64>>)], d0: u32, d1: u32) -> LinearLayout {
    LinearLayout::new(
        ins.iter()
            .map(|(n, b)| InDim {
                name: n.to_string(),
                bases: b.clone(),
            })
            .collect(),
        vec![
            OutDim {
                name: "dim0".into(),
                log2_size: d0,
            },
            OutDim {
                name: "dim1".into(),
                log2_size: d1,
            },
        ],
    )
    .unwrap()
}

/// Logical bit `b` of `dim0 x dim1` (dim0's `d0` bits first) as a basis.
pub fn unit(b: u32, d0: u32) -> Vec<i64> {
    if b < d0 {
        vec![1 << b, 0]
    } else {
        vec![0, 1 << (b - d0)]
    }
}

/// Bases `(dim, bit)` as unit vectors.
pub fn units(pairs: &[(usize, u32)]) -> Vec<Vec<i64>> {
    pairs
        .iter()
        .map(|&(d, k)| {
            let mut v = vec![0, 0];
            v[d] = 1 << k;
            v
        })
        .collect()
}

/// xorshift64: deterministic, so every test run sees the same cases.
pub struct Rng(pub u64);

impl Rng {
    /// A value in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }

    /// A random permutation of `0..n`.
    pub fn permutation(&mut self, n: u32) -> Vec<u32> {
        let mut v: Vec<u32> = (0..n).collect();
        for i in (1..v.len()).rev() {
            v.swap(i, self.below(i as u64 + 1) as usize);
        }
        v
    }

    /// Inserts a zero (broadcast) basis at a random place, one time in `odds`, if `v` has
    /// fewer than `max` bases.
    pub fn maybe_broadcast(&mut self, v: &mut Vec<Vec<i64>>, odds: u64, max: usize) {
        if self.below(odds) == 0 && v.len() < max {
            let at = self.below(v.len() as u64 + 1) as usize;
            v.insert(at, vec![0, 0]);
        }
    }
}
