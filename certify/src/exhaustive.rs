//! The exhaustive decider: evaluate both layouts on every logical index and compare.
//!
//! The fast path handles two strided forms without swizzles: the replica sets are compared
//! once up to translation (two point sets `t_A + R_A` and `t_B + R_B` are equal iff their
//! lexicographic minima are equal and `R_A - min R_A == R_B - min R_B`), after which only the
//! minimum points are compared, walked with odometer digit counters (additions, no division
//! per element) over chunks run in parallel with rayon. Everything else goes through
//! [`Forward::points`]. Evidence: the count and a SHA-256 digest of the left side's images.
//! Example: `(4,2):(2,1)` and `S[8:1]` agree on all 8 indices: proved.

use rayon::prelude::*;
use sha2::{Digest, Sha256};

use crate::decider::{Counterexample, Outcome};
use crate::forward::{Forward, ForwardKind};

/// Default largest domain the exhaustive decider enumerates: 2^26.
pub const DEFAULT_LIMIT: i64 = 1 << 26;

/// Indices per parallel chunk.
const CHUNK: i64 = 1 << 16;

/// Decides `a == b` (as maps from logical index to point sets) by enumeration. Both forms must
/// have the same shape and axes (see [`Forward::widen`]).
pub fn decide(a: &Forward, b: &Forward, limit: i64) -> Outcome {
    assert_eq!(a.axes, b.axes, "forms are widened to common axes first");
    let n = a.size();
    if n != b.size() {
        return Outcome::Unknown {
            reason: format!("the sides have {n} and {} logical indices", b.size()),
        };
    }
    if n > limit {
        return Outcome::Unknown {
            reason: format!("the domain has {n} indices, above the exhaustive limit {limit}"),
        };
    }
    let fast = fast_pair(a, b);
    let first_bad = match &fast {
        Some(Fast::ReplicasDiffer) => Some(0),
        Some(Fast::Walk(wa, wb)) => (0..chunks(n))
            .into_par_iter()
            .filter_map(|c| walk_chunk(wa, wb, c * CHUNK, ((c + 1) * CHUNK).min(n)))
            .min(),
        None => (0..chunks(n))
            .into_par_iter()
            .filter_map(|c| {
                (c * CHUNK..((c + 1) * CHUNK).min(n)).find(|&x| a.points(x) != b.points(x))
            })
            .min(),
    };
    match first_bad {
        Some(x) => Outcome::Refuted {
            counterexample: Counterexample {
                index: x,
                coord: layout::shape::unflatten_row_major(&a.shape, x).unwrap_or_default(),
                left: a.points(x),
                right: b.points(x),
            },
        },
        None => Outcome::Proved {
            evidence: format!(
                "{n} logical indices enumerated; image digest sha256:{}",
                digest(a)
            ),
        },
    }
}

/// SHA-256 over every index's sorted points (little-endian i64s), in index order.
pub fn digest(f: &Forward) -> String {
    let n = f.size();
    let parts: Vec<[u8; 32]> = (0..chunks(n))
        .into_par_iter()
        .map(|c| {
            let mut h = Sha256::new();
            for x in c * CHUNK..((c + 1) * CHUNK).min(n) {
                for p in f.points(x) {
                    for v in p {
                        h.update(v.to_le_bytes());
                    }
                }
                h.update([0xff]);
            }
            h.finalize().into()
        })
        .collect();
    let mut h = Sha256::new();
    for p in parts {
        h.update(p);
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// A strided form reduced to one point per index: `base + sum digit * stride`.
struct Walker {
    extents: Vec<i64>,
    strides: Vec<Vec<i64>>,
    base: Vec<i64>,
}

enum Fast {
    ReplicasDiffer,
    Walk(Walker, Walker),
}

fn fast_pair(a: &Forward, b: &Forward) -> Option<Fast> {
    let (
        ForwardKind::Strided {
            digits: da,
            replicas: ra,
            offset: oa,
            swizzle: None,
        },
        ForwardKind::Strided {
            digits: db,
            replicas: rb,
            offset: ob,
            swizzle: None,
        },
    ) = (&a.kind, &b.kind)
    else {
        return None;
    };
    let norm = |r: &Vec<Vec<i64>>| -> Vec<Vec<i64>> {
        let m = &r[0];
        r.iter()
            .map(|p| p.iter().zip(m).map(|(x, y)| x - y).collect())
            .collect()
    };
    if norm(ra) != norm(rb) {
        return Some(Fast::ReplicasDiffer);
    }
    let walker = |d: &Vec<(i64, Vec<i64>)>, o: &Vec<i64>, r: &Vec<Vec<i64>>| Walker {
        extents: d.iter().map(|x| x.0).collect(),
        strides: d.iter().map(|x| x.1.clone()).collect(),
        base: o.iter().zip(&r[0]).map(|(x, y)| x + y).collect(),
    };
    Some(Fast::Walk(walker(da, oa, ra), walker(db, ob, rb)))
}

impl Walker {
    /// The point of index `x` and its digits.
    fn start(&self, x: i64) -> (Vec<i64>, Vec<i64>) {
        let mut digits = vec![0i64; self.extents.len()];
        let mut p = self.base.clone();
        let mut rest = x;
        for i in (0..self.extents.len()).rev() {
            digits[i] = rest % self.extents[i];
            rest /= self.extents[i];
            p.iter_mut()
                .zip(&self.strides[i])
                .for_each(|(v, s)| *v += digits[i] * s);
        }
        (digits, p)
    }

    /// Advances to the next index: bump the last digit, carrying leftwards.
    fn step(&self, digits: &mut [i64], p: &mut [i64]) {
        for i in (0..digits.len()).rev() {
            digits[i] += 1;
            if digits[i] < self.extents[i] {
                p.iter_mut()
                    .zip(&self.strides[i])
                    .for_each(|(v, s)| *v += s);
                return;
            }
            p.iter_mut()
                .zip(&self.strides[i])
                .for_each(|(v, s)| *v -= (self.extents[i] - 1) * s);
            digits[i] = 0;
        }
    }
}

/// The first index in `[lo, hi)` where the walkers differ.
fn walk_chunk(a: &Walker, b: &Walker, lo: i64, hi: i64) -> Option<i64> {
    let (mut da, mut pa) = a.start(lo);
    let (mut db, mut pb) = b.start(lo);
    for x in lo..hi {
        if pa != pb {
            return Some(x);
        }
        if x + 1 < hi {
            a.step(&mut da, &mut pa);
            b.step(&mut db, &mut pb);
        }
    }
    None
}

/// Number of chunks covering `n` indices.
fn chunks(n: i64) -> i64 {
    (n + CHUNK - 1) / CHUNK
}
