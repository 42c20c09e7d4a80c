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
    if fast.is_none() {
        // The general path evaluates every point of every index on both sides.
        let work = n
            .checked_mul(points_per_index(a).saturating_add(points_per_index(b)))
            .unwrap_or(i64::MAX);
        if work > limit {
            return Outcome::Unknown {
                reason: format!(
                    "enumerating would evaluate {work} points, above the exhaustive limit {limit}"
                ),
            };
        }
    }
    let mut checksum = None;
    let first_bad = match &fast {
        Some(Fast::ReplicasDiffer) => Some(0),
        Some(Fast::Walk(wa, wb)) => {
            let (first, sum) = walk_all(wa, wb, n);
            checksum = Some(sum);
            first
        }
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
                explanation: None,
            },
        },
        None => Outcome::Proved {
            evidence: match checksum {
                Some(sum) => format!(
                    "{n} logical indices enumerated; point checksum {sum:016x} (wrapping sum of \
                     encoded points)"
                ),
                None => format!(
                    "{n} logical indices enumerated; image digest sha256:{}",
                    digest(a)
                ),
            },
        },
    }
}

/// The most points one index of `f` maps to (an upper bound for strided forms).
pub fn points_per_index(f: &Forward) -> i64 {
    match &f.kind {
        ForwardKind::Strided { replicas, .. } => replicas.len() as i64,
        ForwardKind::Table { sets } => sets.iter().map(Vec::len).max().unwrap_or(0) as i64,
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
            ..
        },
        ForwardKind::Strided {
            digits: db,
            replicas: rb,
            offset: ob,
            swizzle: None,
            ..
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

/// The result of enumerating one range: the first differing index, and a wrapping sum of the
/// left side's encoded points (part of the evidence).
type Scan = (Option<i64>, u64);

/// Walks both strided forms over every index, comparing their points.
///
/// Points are first encoded as scalar keys (mixed radix over the box both sides' points lie
/// in, so equal keys <=> equal points) and both digit lists are split to a common refinement;
/// then each row of the trailing digits is compared in a tight loop over precomputed tables.
/// Where the encoding overflows or no common refinement exists, each side walks its own
/// odometer on vector points.
fn walk_all(a: &Walker, b: &Walker, n: i64) -> Scan {
    if let Some((ka, kb)) = keyed(a, b) {
        if let Some(pair) = refine(&ka, &kb) {
            return pair.scan(n);
        }
    }
    let parts: Vec<Scan> = (0..chunks(n))
        .into_par_iter()
        .map(|c| (walk_chunk(a, b, c * CHUNK, ((c + 1) * CHUNK).min(n)), 0))
        .collect();
    (parts.iter().filter_map(|p| p.0).min(), 0)
}

/// A strided form over scalar keys: digits `(extent, stride)`, most significant first.
struct KeyWalk {
    digits: Vec<(i64, i64)>,
    base: i64,
}

/// Encodes both walkers' points as scalar keys, or `None` when the box is too large.
fn keyed(a: &Walker, b: &Walker) -> Option<(KeyWalk, KeyWalk)> {
    let dims = a.base.len();
    let mut lo = vec![i128::MAX; dims];
    let mut hi = vec![i128::MIN; dims];
    for w in [a, b] {
        for ax in 0..dims {
            let mut l = w.base[ax] as i128;
            let mut h = l;
            for (e, s) in w.extents.iter().zip(&w.strides) {
                let span = (*e as i128 - 1) * s[ax] as i128;
                l += span.min(0);
                h += span.max(0);
            }
            lo[ax] = lo[ax].min(l);
            hi[ax] = hi[ax].max(h);
        }
    }
    let mut radix = Vec::with_capacity(dims);
    let mut r: i128 = 1;
    for ax in 0..dims {
        radix.push(r);
        r = r.checked_mul(hi[ax] - lo[ax] + 1)?;
        if r > 1 << 62 {
            return None;
        }
    }
    let key = |w: &Walker| -> KeyWalk {
        let digits = w
            .extents
            .iter()
            .zip(&w.strides)
            .filter(|(e, _)| **e > 1)
            .map(|(e, s)| {
                let k: i128 = (0..dims).map(|ax| s[ax] as i128 * radix[ax]).sum();
                (*e, k as i64)
            })
            .collect();
        let base: i128 = (0..dims)
            .map(|ax| (w.base[ax] as i128 - lo[ax]) * radix[ax])
            .sum();
        KeyWalk {
            digits,
            base: base as i64,
        }
    };
    Some((key(a), key(b)))
}

/// Both sides on common digits: extents, the two sides' strides, and bases.
struct KeyPair {
    extents: Vec<i64>,
    sa: Vec<i64>,
    sb: Vec<i64>,
    base: (i64, i64),
}

/// Splits both digit lists to their common refinement (place values forming one divisibility
/// chain), or `None` when there is none (e.g. `(4, 6)` against `(6, 4)`).
fn refine(a: &KeyWalk, b: &KeyWalk) -> Option<KeyPair> {
    // Place value of each digit (product of the extents after it), least significant first.
    let places = |w: &KeyWalk| -> Vec<(i64, i64, i64)> {
        let mut p = 1i64;
        let mut out = Vec::new();
        for &(e, s) in w.digits.iter().rev() {
            out.push((p, e, s));
            p *= e;
        }
        out
    };
    let (pa, pb) = (places(a), places(b));
    let total = pa.iter().map(|d| d.1).product::<i64>();
    let mut cuts: Vec<i64> = pa.iter().chain(&pb).map(|d| d.0).collect();
    cuts.push(total);
    cuts.sort_unstable();
    cuts.dedup();
    if cuts.windows(2).any(|w| w[1] % w[0] != 0) {
        return None;
    }
    // For each common digit [cuts[i], cuts[i+1]): the stride of the covering digit, scaled.
    let stride_at = |p: &[(i64, i64, i64)], place: i64| -> i64 {
        p.iter()
            .find(|(q, e, _)| *q <= place && place < q * e)
            .map_or(0, |(q, _, s)| s * (place / q))
    };
    let mut extents = Vec::new();
    let (mut sa, mut sb) = (Vec::new(), Vec::new());
    for w in cuts.windows(2).rev() {
        let (e, a_s, b_s) = (w[1] / w[0], stride_at(&pa, w[0]), stride_at(&pb, w[0]));
        // A digit longer than a row splits at its largest divisor that fits one.
        let d = (1..=ROW.min(e)).rev().find(|d| e % d == 0).unwrap_or(1);
        if d > 1 && d < e {
            extents.extend([e / d, d]);
            sa.extend([a_s * d, a_s]);
            sb.extend([b_s * d, b_s]);
        } else {
            extents.push(e);
            sa.push(a_s);
            sb.push(b_s);
        }
    }
    Some(KeyPair {
        extents,
        sa,
        sb,
        base: (a.base, b.base),
    })
}

/// Largest row of trailing digits compared in one tight loop.
const ROW: i64 = 1 << 12;

impl KeyPair {
    fn scan(&self, n: i64) -> Scan {
        // Trailing digits form the row; the leading ones are walked by an odometer.
        let mut split = self.extents.len();
        let mut row = 1i64;
        while split > 0 && row * self.extents[split - 1] <= ROW {
            split -= 1;
            row *= self.extents[split];
        }
        // Row-major: earlier digits are more significant.
        let table = |s: &[i64]| -> Vec<i64> {
            let mut t = vec![0i64];
            for (&e, &si) in self.extents[split..].iter().zip(&s[split..]) {
                t = t
                    .iter()
                    .flat_map(|&x| (0..e).map(move |d| x + d * si))
                    .collect();
            }
            t
        };
        let (ta, tb) = (table(&self.sa), table(&self.sb));
        let rows = n / row;
        let outer = &self.extents[..split];
        // Chunks of about 2^20 indices, but at least four per worker thread so every core
        // takes part in mid-sized domains (2^20 would otherwise be one chunk).
        let threads = rayon::current_num_threads() as i64;
        let rows_per_chunk = (CHUNK * 16 / row).min(rows / (4 * threads)).max(1);
        let parts: Vec<Scan> = (0..(rows + rows_per_chunk - 1) / rows_per_chunk)
            .into_par_iter()
            .map(|c| {
                let (lo, hi) = (c * rows_per_chunk, ((c + 1) * rows_per_chunk).min(rows));
                let mut digits = vec![0i64; split];
                let mut rest = lo;
                let (mut ba, mut bb) = self.base;
                for i in (0..split).rev() {
                    digits[i] = rest % outer[i];
                    rest /= outer[i];
                    ba += digits[i] * self.sa[i];
                    bb += digits[i] * self.sb[i];
                }
                let mut sum = 0u64;
                for r in lo..hi {
                    let mut bad = false;
                    for (x, y) in ta.iter().zip(&tb) {
                        let ka = ba + x;
                        bad |= ka != bb + y;
                        sum = sum.wrapping_add(ka as u64);
                    }
                    if bad {
                        let j = (0..ta.len()).find(|&j| ba + ta[j] != bb + tb[j]);
                        return (j.map(|j| r * row + j as i64), sum);
                    }
                    // Odometer step over the leading digits.
                    for i in (0..split).rev() {
                        digits[i] += 1;
                        ba += self.sa[i];
                        bb += self.sb[i];
                        if digits[i] < outer[i] {
                            break;
                        }
                        ba -= outer[i] * self.sa[i];
                        bb -= outer[i] * self.sb[i];
                        digits[i] = 0;
                    }
                }
                (None, sum)
            })
            .collect();
        let first = parts.iter().filter_map(|p| p.0).min();
        let sum = parts.iter().fold(0u64, |acc, p| acc.wrapping_add(p.1));
        (first, sum)
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use layout::Axis;
    use proptest::prelude::*;

    fn strided(digits: Vec<(i64, Vec<i64>)>, offset: Vec<i64>) -> Forward {
        Forward {
            shape: digits.iter().map(|d| d.0).collect(),
            axes: vec![Axis::new("m").unwrap(), Axis::new("n").unwrap()],
            kind: ForwardKind::Strided {
                digits,
                replicas: vec![vec![0, 0]],
                replica_gens: Vec::new(),
                offset,
                swizzle: None,
            },
        }
    }

    /// The first differing index by the reference path (`Forward::points`).
    fn reference(a: &Forward, b: &Forward) -> Option<i64> {
        (0..a.size()).find(|&x| a.points(x) != b.points(x))
    }

    fn digit() -> impl Strategy<Value = (i64, Vec<i64>)> {
        (1i64..7, -9i64..10, -3i64..4).prop_map(|(e, s, t)| (e, vec![s, t]))
    }

    #[test]
    fn refinement_needs_a_divisibility_chain() {
        let ka = KeyWalk {
            digits: vec![(4, 1), (6, 4)],
            base: 0,
        };
        let kb = KeyWalk {
            digits: vec![(6, 1), (4, 6)],
            base: 0,
        };
        assert!(refine(&ka, &kb).is_none());
        let kc = KeyWalk {
            digits: vec![(2, 1), (2, 2), (6, 4)],
            base: 0,
        };
        let p = refine(&ka, &kc).expect("(4,6) refines to (2,2,6)");
        assert_eq!(p.extents, vec![2, 2, 6]);
    }

    #[test]
    fn long_digits_split_into_rows() {
        // 3 * 8191 has no divisor between 3 and the row size; 2^20 splits into rows of 2^12.
        for (e, k) in [(3 * 8191, 3), (1 << 20, 4)] {
            let a = strided(vec![(e, vec![1, 0])], vec![0, 0]);
            let same = strided(vec![(e / k, vec![k, 0]), (k, vec![1, 0])], vec![0, 0]);
            assert!(matches!(
                decide(&a, &same, DEFAULT_LIMIT),
                Outcome::Proved { .. }
            ));
            let inner = strided(vec![(e / k, vec![k, 0]), (k, vec![1, 1])], vec![0, 0]);
            let outer = strided(vec![(e / k, vec![k, 1]), (k, vec![1, 0])], vec![0, 0]);
            for (mutant, first) in [(inner, 1), (outer, k)] {
                match decide(&a, &mutant, DEFAULT_LIMIT) {
                    Outcome::Refuted { counterexample } => {
                        assert_eq!(counterexample.index, first)
                    }
                    o => panic!("{o:?}"),
                }
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]
        #[test]
        fn fast_walk_agrees_with_the_reference(
            da in prop::collection::vec(digit(), 1..4),
            split in prop::collection::vec(1i64..4, 0..3),
            flip in 0usize..4,
            off in -5i64..6,
        ) {
            // b: a with one digit split (same map), then possibly one stride changed.
            let a = strided(da.clone(), vec![off, 0]);
            let mut db = Vec::new();
            for (i, (e, s)) in da.iter().enumerate() {
                match split.get(i) {
                    Some(&k) if k > 1 && e % k == 0 && *e > k => {
                        db.push((k, s.iter().map(|v| v * (e / k)).collect()));
                        db.push((e / k, s.clone()));
                    }
                    _ => db.push((*e, s.clone())),
                }
            }
            if flip < db.len() && db[flip].0 > 1 {
                db[flip].1[0] += 1;
            }
            let b = strided(db, vec![off, 0]);
            let want = reference(&a, &b);
            match decide(&a, &b, DEFAULT_LIMIT) {
                Outcome::Proved { .. } => prop_assert_eq!(want, None),
                Outcome::Refuted { counterexample } => {
                    prop_assert_eq!(Some(counterexample.index), want)
                }
                Outcome::Unknown { reason } => prop_assert!(false, "unknown: {}", reason),
            }
        }
    }
}
