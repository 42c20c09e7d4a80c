//! The cross-check of a proof by `layout`'s semantics alone: no forward form, no conversion,
//! no decider code. Both layouts are re-evaluated at every coordinate of a domain of at most
//! [`RECHECK_ALL`] points, else at its corners, edges and [`RECHECK_SAMPLES`] seeded
//! coordinates, and their point sets must be equal at each.
//!
//! Each side's points come from its own notation's evaluation:
//!
//! - **read forwards** (Axe, CuTe, swizzled): the points of `c` are `b(c) + q` for every `q` of
//!   a set `Q` that does not depend on `c`. For Axe, `b(c)` is the point of `D(x) + O` and `Q`
//!   the distinct points of the replica vectors (`layout::relation::sum`: a point is additive in
//!   its components); for CuTe and swizzled layouts `b(c)` is the one point and `Q = {0}`. `Q`
//!   is computed once, not at every coordinate (it has up to
//!   `layout::axe::MAX_REPLICA_POINTS` vectors).
//! - **read backwards** (TV, linear): the points of `c` are those of the inputs holding `c`,
//!   found by `layout::relation::Preimages` without reading every input (a linear layout's
//!   preimage is an affine subspace, a TV layout's the digit vectors of a strided sum), so
//!   the number of inputs is not limited (`(4096,8192):(1,4096) -> (4096,8192)`, 2^25 inputs,
//!   costs a few steps per coordinate). One budget per side bounds the work: at most
//!   `layout::relation::MAX_LISTED` (2^22) inputs listed, each evaluated forwards and its point
//!   computed (about a microsecond each in a release build), and `MAX_STEPS` (2^24) search
//!   steps (a few integer operations each); past it, [`RecheckError::Beyond`]. Over a whole
//!   domain each input is listed once, so every claim of at most 2^22 inputs is within it.
//!
//! Two sides read forwards are compared without listing their sets. Order points as vectors
//! over every axis (an absent axis is 0), lexicographically by axis name; translation
//! preserves this order, so `min(b + Q) = b + min Q`. Then `b + Q = b' + Q'` iff
//! `b + min Q = b' + min Q'` and `Q - min Q = Q' - min Q'`: equal sets have equal minima, and
//! less their minimum they are the same set; conversely `b + Q = (b + min Q) + (Q - min Q)`.
//! The second condition does not depend on `c` and is checked once; per coordinate, one point
//! per side is compared. Against a side read backwards, the forward side's set is listed
//! (after the sizes agree, so the work is bounded by the points kept).
//!
//! Past a limit the check answers [`RecheckError::Beyond`], never a hang and never "a decider is
//! wrong". Example: `S[4096:1] + R[(256,256):(1@laneid,1@laneid)]` against
//! `S[4096:1] + R[511:1@laneid]` computes `Q` (511 points, from 65536 replica vectors) once per
//! side, then compares one point per side at each of the 4096 coordinates.
//!
//! # Why a search that misses an input cannot make two layouts look equal
//!
//! The two sides agree at `c` only if their point sets are equal, and a side's set is that of
//! the inputs its search lists. Every listed input is evaluated forwards by the notation's own
//! semantics and holds `c` (else the search fails), so a listed set is never too large. It is
//! never too small either, and not by trust in the search: each search checks, at run time,
//! the facts that make its list the whole preimage (`layout::relation::preimage`'s module doc:
//! for a linear layout, `r` independent images and `k` independent kernel vectors with
//! `r + k` input bits, so by rank-nullity the listed coset `x0 + ker` is all of it; for a TV
//! layout, that each level visits every digit of an interval whose ends are checked against
//! a condition every solution satisfies), and a failed check is `Beyond`, never an agreement.
//! Where it is cheap, the counts are checked besides: over a whole small domain every input
//! holds one of its cells (a TV or linear layout's domain is its tile or out-dims), so the
//! lists must add up to the number of inputs, else `Beyond`. Hence the listed set of each side
//! is exactly its point set at `c`, and a replica that one side has and the other lacks is a
//! point in one set and not the other: the sets differ, and so does the verdict.

use std::cell::{Cell, RefCell};
use std::cmp::Ordering;
use std::collections::BTreeSet;

use layout::axe::MAX_REPLICA_POINTS;
use layout::relation::{normalize, sum, Budget, Inputs, Preimages};
use layout::{Layout, LayoutError, Point};

/// Domains with at most this many coordinates are re-checked at every coordinate.
pub const RECHECK_ALL: i64 = 1 << 16;
/// Seeded random coordinates re-checked on larger domains (besides the boundary).
pub const RECHECK_SAMPLES: usize = 4096;

/// Why the cross-check did not confirm a proof.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RecheckError {
    /// The semantics differ, or cannot evaluate a side where the deciders did: a decider is
    /// wrong.
    #[error("{0}")]
    Differ(String),
    /// The check is past one of its limits (or the semantics' own): no answer either way.
    #[error("{0}")]
    Beyond(String),
}

impl From<LayoutError> for RecheckError {
    fn from(e: LayoutError) -> Self {
        match e {
            LayoutError::Undecided { reason } => RecheckError::Beyond(reason),
            e => RecheckError::Differ(format!("the trusted semantics cannot evaluate: {e}")),
        }
    }
}

/// Re-evaluates an equivalence by `layout`'s semantics alone (see the module doc): every
/// coordinate of small domains; the boundary and a seeded sample of large ones. Returns how
/// many coordinates agree.
pub fn semantic_recheck(a: &Layout, b: &Layout, shape: &[i64]) -> Result<usize, RecheckError> {
    recheck_counted(a, b, shape).map(|r| r.coords)
}

/// What a cross-check that agreed did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rechecked {
    /// Coordinates at which the sides agree.
    pub coords: usize,
    /// Evaluations by the semantics: points of `D(x) + O` or of a forward layout, replica
    /// vectors, inputs' cells and inputs' points. A measure of the work, for tests: it grows
    /// with the domain plus the replica set, not with their product.
    pub evaluations: u64,
}

/// [`semantic_recheck`], counting its work.
pub fn recheck_counted(a: &Layout, b: &Layout, shape: &[i64]) -> Result<Rechecked, RecheckError> {
    let n = layout::shape::size_of(shape)?;
    let coords: Vec<Vec<i64>> = if n <= RECHECK_ALL {
        (0..n)
            .map(|x| layout::shape::unflatten_row_major(shape, x))
            .collect::<Result<_, _>>()?
    } else {
        recheck_sample(shape)
    };
    let every = coords.len() as i64 == n;
    let (sa, sb) = (Side::new(a, shape)?, Side::new(b, shape)?);
    // Two forward sides: `Q - min Q` compared once.
    let same_q = match (&sa, &sb) {
        (Side::Forward(fa), Side::Forward(fb)) => fa.shifted == fb.shifted,
        _ => true,
    };
    for c in &coords {
        if let Some((pa, pb)) = differ_at(&sa, &sb, same_q, c)? {
            return Err(RecheckError::Differ(format!(
                "the trusted semantics differ at logical {c:?}: left {}, right {}",
                describe(&pa),
                describe(&pb)
            )));
        }
    }
    if every {
        sa.check_count()?;
        sb.check_count()?;
    }
    Ok(Rechecked {
        coords: coords.len(),
        evaluations: sa.evaluations() + sb.evaluations(),
    })
}

/// `None` where the sides agree at `c`, else both point sets (each side's set computed once:
/// a side read backwards spends its budget listing it, and its listing is not repeated for the
/// message). `same_q`: two forward sides' `Q - min Q` are equal.
#[allow(clippy::type_complexity)]
fn differ_at(
    sa: &Side,
    sb: &Side,
    same_q: bool,
    c: &[i64],
) -> Result<Option<(BTreeSet<Point>, BTreeSet<Point>)>, RecheckError> {
    // A forward side's set against a backward side's, listed only when the sizes agree.
    let against = |f: &Translates, held: &BTreeSet<Point>| -> Result<_, RecheckError> {
        let listed = f.points(c)?;
        Ok((held.len() != f.q.len() || &listed != held).then_some(listed))
    };
    Ok(match (sa, sb) {
        (Side::Forward(fa), Side::Forward(fb)) => {
            if same_q && fa.min_at(c)? == fb.min_at(c)? {
                None
            } else {
                Some((fa.points(c)?, fb.points(c)?))
            }
        }
        (Side::Forward(f), Side::Backward(h)) => {
            let held = h.points(c)?;
            against(f, &held)?.map(|listed| (listed, held))
        }
        (Side::Backward(h), Side::Forward(f)) => {
            let held = h.points(c)?;
            against(f, &held)?.map(|listed| (held, listed))
        }
        (Side::Backward(ha), Side::Backward(hb)) => {
            let (pa, pb) = (ha.points(c)?, hb.points(c)?);
            (pa != pb).then_some((pa, pb))
        }
    })
}

/// A point set for a message: its size and at most 8 points.
fn describe(s: &BTreeSet<Point>) -> String {
    let first: Vec<String> = s.iter().take(8).map(layout::axis::format_point).collect();
    let more = if s.len() > first.len() { ", ..." } else { "" };
    format!("{} points {{{}{more}}}", s.len(), first.join(", "))
}

/// Corners, edge-adjacent coordinates and a seeded sample of a large domain.
fn recheck_sample(shape: &[i64]) -> Vec<Vec<i64>> {
    let mut out = BTreeSet::new();
    let edges = |e: i64| -> Vec<i64> {
        let mut v = vec![0, 1, e / 2, e - 2, e - 1];
        v.retain(|x| (0..e).contains(x));
        v
    };
    // Products of edge values over every dimension, capped (rank is small in practice).
    let mut corners: Vec<Vec<i64>> = vec![vec![]];
    for &e in shape {
        let mut next = Vec::new();
        for c in &corners {
            for v in edges(e) {
                let mut c = c.clone();
                c.push(v);
                next.push(c);
            }
        }
        next.truncate(RECHECK_SAMPLES);
        corners = next;
    }
    out.extend(corners);
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    for _ in 0..RECHECK_SAMPLES {
        let c: Vec<i64> = shape
            .iter()
            .map(|&e| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state % e as u64) as i64
            })
            .collect();
        out.insert(c);
    }
    out.into_iter().collect()
}

/// One layout's trusted semantics over the rechecked coordinates.
enum Side<'l> {
    /// Axe, CuTe, swizzled: the points of `c` are `b(c) + q`, `q` in a fixed set.
    Forward(Translates<'l>),
    /// TV, linear: the inputs holding each rechecked coordinate.
    Backward(Held<'l>),
}

impl<'l> Side<'l> {
    fn new(l: &'l Layout, shape: &[i64]) -> Result<Self, RecheckError> {
        Ok(match Inputs::of(l) {
            Some(inputs) => Side::Backward(Held::new(inputs)?),
            None => Side::Forward(Translates::new(l, shape)?),
        })
    }

    /// Evaluations so far (see [`Rechecked::evaluations`]).
    fn evaluations(&self) -> u64 {
        match self {
            Side::Forward(f) => f.evaluations.get(),
            Side::Backward(h) => h.evaluations(),
        }
    }

    /// See [`Held::check_count`]; nothing to check for a side read forwards.
    fn check_count(&self) -> Result<(), RecheckError> {
        match self {
            Side::Forward(_) => Ok(()),
            Side::Backward(h) => h.check_count(),
        }
    }
}

/// The lexicographic order of points as vectors over every axis, by axis name, an absent axis
/// being 0. Unlike `Point`'s own order (which compares axis names first), translation
/// preserves it: `a < b` iff `a + t < b + t`.
fn vector_order(a: &Point, b: &Point) -> Ordering {
    let axes: BTreeSet<&layout::Axis> = a.keys().chain(b.keys()).collect();
    for x in axes {
        let o = a.get(x).unwrap_or(&0).cmp(b.get(x).unwrap_or(&0));
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

/// A layout read forwards: the points of `c` are `b(c) + q` for `q` in `q`.
struct Translates<'l> {
    layout: &'l Layout,
    shape: Vec<i64>,
    /// The distinct points of the replica vectors (`{0}` without replicas).
    q: BTreeSet<Point>,
    /// The least of `q` in [`vector_order`].
    min: Point,
    /// `q - min`.
    shifted: BTreeSet<Point>,
    /// See [`Rechecked::evaluations`].
    evaluations: Cell<u64>,
}

impl<'l> Translates<'l> {
    fn new(l: &'l Layout, shape: &[i64]) -> Result<Self, RecheckError> {
        let mut evaluations = 0u64;
        let q: BTreeSet<Point> = match l {
            Layout::Axe(a) => {
                a.check_shape(shape)?;
                if a.replica_count() > MAX_REPLICA_POINTS {
                    return Err(RecheckError::Beyond(format!(
                        "{} replica vectors, above the limit {MAX_REPLICA_POINTS}",
                        a.replica_count()
                    )));
                }
                evaluations += a.replica_count() as u64;
                a.replica_set()?
                    .iter()
                    .map(normalize)
                    .collect::<Result<_, _>>()?
            }
            _ => [Point::new()].into(),
        };
        let min = q
            .iter()
            .min_by(|x, y| vector_order(x, y))
            .cloned()
            .expect("a replica set holds at least the zero vector");
        let neg: Point = min
            .iter()
            .map(|(a, v)| Ok((a.clone(), layout::arith::sub(0, *v, "replica point")?)))
            .collect::<Result<_, LayoutError>>()?;
        let shifted = q.iter().map(|p| sum(p, &neg)).collect::<Result<_, _>>()?;
        Ok(Translates {
            layout: l,
            shape: shape.to_vec(),
            q,
            min,
            shifted,
            evaluations: Cell::new(evaluations),
        })
    }

    /// `b(c)`: the point of `D(x) + O` (Axe), or the one point (CuTe, swizzled).
    fn base(&self, c: &[i64]) -> Result<Point, RecheckError> {
        self.evaluations.set(self.evaluations.get() + 1);
        match self.layout {
            Layout::Axe(a) => {
                let x = layout::shape::flatten_row_major(&self.shape, c)?;
                Ok(normalize(&a.shard_point(x)?)?)
            }
            l => {
                let points = l.eval(Some(&self.shape), c)?;
                match points.len() {
                    1 => Ok(normalize(points.first().expect("one point"))?),
                    n => Err(RecheckError::Differ(format!(
                        "{} relates {c:?} to {n} points, not one",
                        l.print()
                    ))),
                }
            }
        }
    }

    /// `b(c) + min Q`, the least point of `c`.
    fn min_at(&self, c: &[i64]) -> Result<Point, RecheckError> {
        Ok(sum(&self.base(c)?, &self.min)?)
    }

    /// Every point of `c`.
    fn points(&self, c: &[i64]) -> Result<BTreeSet<Point>, RecheckError> {
        let b = self.base(c)?;
        self.evaluations
            .set(self.evaluations.get() + self.q.len() as u64);
        Ok(self
            .q
            .iter()
            .map(|q| sum(&b, q))
            .collect::<Result<_, _>>()?)
    }
}

/// A layout read backwards: the inputs holding a rechecked coordinate, found by
/// `layout::relation::Preimages` (module doc), within one budget of steps for the whole check.
struct Held<'l> {
    inputs: Inputs<'l>,
    preimages: Preimages<'l>,
    budget: RefCell<Budget>,
    /// Inputs listed so far, over every coordinate asked about.
    listed: Cell<i64>,
    /// Points evaluated (see [`Rechecked::evaluations`]; the search's steps are the budget's).
    points: Cell<u64>,
}

impl<'l> Held<'l> {
    fn new(inputs: Inputs<'l>) -> Result<Self, RecheckError> {
        Ok(Held {
            preimages: Preimages::new(&inputs)?,
            inputs,
            budget: RefCell::new(Budget::default()),
            listed: Cell::new(0),
            points: Cell::new(0),
        })
    }

    /// Search steps and points evaluated so far.
    fn evaluations(&self) -> u64 {
        self.budget.borrow().used() + self.points.get()
    }

    /// The points of coordinate `c`: those of the inputs holding it.
    fn points(&self, c: &[i64]) -> Result<BTreeSet<Point>, RecheckError> {
        let held = self.preimages.holding(c, &mut self.budget.borrow_mut())?;
        self.listed.set(self.listed.get() + held.len() as i64);
        self.points.set(self.points.get() + held.len() as u64);
        Ok(held
            .iter()
            .map(|x| self.inputs.point_of_input(x))
            .collect::<Result<_, _>>()?)
    }

    /// After every coordinate of the whole domain was asked about once: every input was
    /// listed (a TV or linear layout's cells are its claim's domain), so no search missed one.
    fn check_count(&self) -> Result<(), RecheckError> {
        match self.inputs.count() {
            Some(n) if n != self.listed.get() => Err(RecheckError::Beyond(format!(
                "the preimage search listed {} of the {n} inputs over the whole domain",
                self.listed.get()
            ))),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Layout {
        Layout::parse(text, None).unwrap()
    }

    fn parse_shaped(text: &str, shape: &[i64]) -> Layout {
        Layout::parse(text, Some(shape)).unwrap()
    }

    #[test]
    fn vector_order_is_preserved_by_translation() {
        // `Point`'s own order is not: {reg: 1} > {} but {} < {reg: -1}.
        let p = |pairs: &[(&str, i64)]| -> Point {
            pairs
                .iter()
                .map(|(a, v)| (layout::Axis::new(a).unwrap(), *v))
                .filter(|(_, v)| *v != 0)
                .collect()
        };
        let pts = [
            p(&[]),
            p(&[("reg", 1)]),
            p(&[("reg", -1)]),
            p(&[("tx", 5)]),
            p(&[("reg", 1), ("tx", -3)]),
            p(&[("m", 2), ("tx", 1)]),
        ];
        for a in &pts {
            for b in &pts {
                for t in &pts {
                    let (at, bt) = (sum(a, t).unwrap(), sum(b, t).unwrap());
                    assert_eq!(
                        vector_order(a, b),
                        vector_order(&at, &bt),
                        "{a:?} {b:?} {t:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn replicated_sides_agree_or_differ_as_their_sets_do() {
        // Against the listed sets: (256,256) replicas on one axis are 511 distinct offsets.
        let cases = [
            (
                "S[64:1] + R[(16,16):(1@laneid,1@laneid)]",
                "S[64:1] + R[31:1@laneid]",
                true,
            ),
            (
                "S[64:1] + R[(16,16):(1@laneid,1@laneid)]",
                "S[64:1] + R[32:1@laneid]",
                false,
            ),
            (
                "S[64:1] + R[(16,16):(1@laneid,1@laneid)]",
                "S[64:1] + R[31:1@tx]",
                true,
            ),
            (
                "S[64:1] + R[4:1@laneid] + 1@laneid",
                "S[64:1] + R[4:1@laneid]",
                false,
            ),
            (
                "S[64:1] + R[4:1@laneid] + 1@laneid",
                "S[64:1] + R[5:1@laneid] + 1@laneid",
                false,
            ),
            (
                "S[64:1@m] + R[2:32@warpid]",
                "S[64:1@m] + R[2:1024@tx]",
                true,
            ),
            ("S[64:1] + R[2:0@m]", "S[64:1]", true),
            ("S[64:2]", "64:2", true),
            ("S[64:2]", "64:1", false),
        ];
        for (a, b, holds) in cases {
            let (la, lb) = (parse(a), parse(b));
            let listed = (0..64).all(|x| {
                crate::claim::semantic_points(&la, &[64], &[x]).unwrap()
                    == crate::claim::semantic_points(&lb, &[64], &[x]).unwrap()
            });
            assert_eq!(listed, holds, "{a} vs {b}: the listed sets");
            let r = semantic_recheck(&la, &lb, &[64]);
            assert_eq!(r.is_ok(), holds, "{a} vs {b}: {r:?}");
            assert_eq!(
                semantic_recheck(&lb, &la, &[64]).is_ok(),
                holds,
                "{b} vs {a}"
            );
            if let Err(e) = r {
                assert!(matches!(e, RecheckError::Differ(_)), "{e}");
            }
        }
    }

    #[test]
    fn replica_sets_are_evaluated_once_not_at_every_coordinate() {
        // 65536 replica vectors with 511 distinct points, over 4096 coordinates: the replica
        // sets once plus one point per side and coordinate (it was 4096 * 65536 vectors).
        let a = parse("S[4096:1] + R[(256,256):(1@laneid,1@laneid)]");
        let b = parse("S[4096:1] + R[511:1@laneid]");
        let r = recheck_counted(&a, &b, &[4096]).unwrap();
        assert_eq!(r.coords, 4096);
        assert_eq!(r.evaluations, 65536 + 511 + 2 * 4096);
        let c = parse("S[4096:1] + R[510:1@laneid]");
        assert!(matches!(
            recheck_counted(&a, &c, &[4096]),
            Err(RecheckError::Differ(_))
        ));
    }

    #[test]
    fn sides_read_backwards_are_held_not_enumerated_as_pairs() {
        // 2^19 pairs (128 threads hold each of 4096 values), past `layout::relation::MAX_PAIRS`.
        let tv = parse("(128,4096):(0,1) -> (4096)");
        let axe = parse("S[4096:1@reg] + R[128:1@tx]");
        assert_eq!(semantic_recheck(&tv, &axe, &[4096]), Ok(4096));
        assert_eq!(semantic_recheck(&axe, &tv, &[4096]), Ok(4096));
        assert_eq!(semantic_recheck(&tv, &tv, &[4096]), Ok(4096));
        // Per coordinate, the TV side's search takes one step on the value mode, 128 on the
        // broadcast thread mode (stride 0) and lists 128 inputs, whose points it evaluates;
        // the Axe side lists 128 points a coordinate, from 128 replica vectors computed once.
        let r = recheck_counted(&tv, &axe, &[4096]).unwrap();
        assert_eq!(
            r.evaluations,
            4096 * (1 + 128 + 2 * 128) + 128 + 4096 * (1 + 128)
        );
        let short = parse("S[4096:1@reg] + R[127:1@tx]");
        let e = semantic_recheck(&tv, &short, &[4096]).unwrap_err();
        assert!(
            matches!(&e, RecheckError::Differ(w) if w.contains("left 128 points")),
            "{e}"
        );
    }

    #[test]
    fn past_the_step_limit_is_beyond_not_a_difference() {
        // 2^25 inputs of a linear layout all hold cell (0), at 2^25 distinct points: more than
        // MAX_LISTED (2^22) to list.
        let zeros = vec!["[0]"; 25].join(", ");
        let l = Layout::parse(&format!("#ttg.linear<{{register=[{zeros}]}}>"), Some(&[1])).unwrap();
        let e = semantic_recheck(&l, &l, &[1]).unwrap_err();
        assert!(
            matches!(&e, RecheckError::Beyond(w) if w.contains("needs 33554432 more inputs listed, 4194304 left of the limit 4194304")),
            "{e}"
        );
    }

    /// The 4096 x 8192 tile (2^25 inputs) as a linear layout: lane and warp bits on dim0
    /// (`tx = lane + 32 warp`), register bits on dim1, and `extra` in-dims besides.
    fn tile_as_linear(extra: &str) -> Layout {
        let bits = |n: usize, shift: usize, dim: usize| -> String {
            (0..n)
                .map(|k| {
                    let v = 1i64 << (k + shift);
                    if dim == 0 {
                        format!("[{v}, 0]")
                    } else {
                        format!("[0, {v}]")
                    }
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        let text = format!(
            "#ttg.linear<{{register=[{}], lane=[{}], warp=[{}]{extra}}}>",
            bits(13, 0, 1),
            bits(5, 0, 0),
            bits(7, 5, 0)
        );
        Layout::parse(&text, Some(&[4096, 8192])).unwrap()
    }

    #[test]
    fn a_kernel_tile_is_rechecked_in_a_few_steps_per_coordinate() {
        // 2^25 inputs a side; per coordinate the TV search takes a step per mode and lists one
        // input (4 evaluations with its point), the linear one lists one input (2).
        let tile = [4096, 8192];
        let tv = parse("(4096,8192):(1,4096) -> (4096,8192)");
        let lin = tile_as_linear("");
        let axe = parse("S[(4096,8192):(1@tx,1@reg)]");
        let r = recheck_counted(&tv, &tv, &tile).unwrap();
        assert!(r.coords > RECHECK_SAMPLES, "{r:?}");
        assert_eq!(r.evaluations, 2 * 4 * r.coords as u64);
        let r = recheck_counted(&tv, &lin, &tile).unwrap();
        assert_eq!(r.evaluations, (4 + 2) * r.coords as u64);
        let r = recheck_counted(&lin, &axe, &tile).unwrap();
        assert_eq!(r.evaluations, (2 + 2) * r.coords as u64 + 1);
        // Far from the limits: a side lists one input a coordinate, of at most 2^16 + 4096.
        assert!(r.evaluations < (layout::relation::MAX_LISTED as u64) / 8);
    }

    /// The recheck's counterexample: the coordinate its message names.
    fn named_coordinate(e: &RecheckError) -> Vec<i64> {
        let RecheckError::Differ(w) = e else {
            panic!("{e}")
        };
        let inside = &w[w.find('[').unwrap() + 1..w.find(']').unwrap()];
        inside.split(", ").map(|v| v.parse().unwrap()).collect()
    }

    #[test]
    fn large_layouts_differing_at_one_coordinate_are_told_apart() {
        // One thread holds the whole tile in order, or all of it but the last cell: the sides
        // differ at (4095, 8191) alone, a corner of the sample, and the semantics confirm it.
        let tile = [4096, 8192];
        let all = parse("(1,33554432):(0,1) -> (4096,8192)");
        let short = parse("(1,33554431):(0,1) -> (4096,8192)");
        let axe = parse("S[(4096,8192):(1@reg,4096@reg)]");
        assert!(semantic_recheck(&all, &axe, &tile).is_ok());
        for (a, b) in [(&all, &short), (&short, &all), (&axe, &short)] {
            let e = semantic_recheck(a, b, &tile).unwrap_err();
            let c = named_coordinate(&e);
            assert_eq!(c, [4095, 8191], "{e}");
            assert!(e.to_string().contains("1 points") && e.to_string().contains("0 points"));
            let (pa, pb) = (
                crate::claim::semantic_points(a, &tile, &c).unwrap(),
                crate::claim::semantic_points(b, &tile, &c).unwrap(),
            );
            assert_ne!(pa, pb);
        }
    }

    #[test]
    fn large_layouts_differing_only_in_a_replica_are_told_apart() {
        // Every cell is held twice: by lane 0 and lane 1 (tx + 1), or by warp 0 and warp 1
        // (tx + 32). Same cells, same counts; the replica's point differs.
        let tile = [4096, 8192];
        let twice = |dim: &str| {
            parse_shaped(
                &format!(
                    "#ttg.linear<{{register=[{}], {dim}=[[0, 0]]}}>",
                    (0..12)
                        .map(|k| format!("[{}, 0]", 1 << k))
                        .chain((0..13).map(|k| format!("[0, {}]", 1 << k)))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                &tile,
            )
        };
        let (by_lane, by_warp) = (twice("lane"), twice("warp"));
        let once = parse("S[(4096,8192):(1@reg,4096@reg)]");
        let axe = parse("S[(4096,8192):(1@reg,4096@reg)] + R[2:1@laneid]");
        let tv = parse("(2,33554432):(0,1) -> (4096,8192)");
        assert!(semantic_recheck(&by_lane, &axe, &tile).is_ok());
        assert!(semantic_recheck(&tv, &by_lane, &tile).is_ok());
        for (a, b, sizes) in [
            (&by_lane, &by_warp, "left 2 points"),
            (&by_warp, &tv, "right 2 points"),
            (&by_lane, &once, "right 1 points"),
            (&tv, &once, "left 2 points"),
        ] {
            let e = semantic_recheck(a, b, &tile).unwrap_err();
            assert!(e.to_string().contains(sizes), "{e}");
            let c = named_coordinate(&e);
            let (pa, pb) = (
                crate::claim::semantic_points(a, &tile, &c).unwrap(),
                crate::claim::semantic_points(b, &tile, &c).unwrap(),
            );
            assert_ne!(pa, pb, "at {c:?}");
        }
    }

    #[test]
    fn a_broadcast_past_the_step_limit_is_beyond() {
        // 2^23 threads hold the one cell: more inputs to list than the 2^22 allowed; the search
        // stops before listing any.
        let l = parse("(8388608,1):(0,1) -> (1,)");
        let e = semantic_recheck(&l, &l, &[1]).unwrap_err();
        assert!(
            matches!(&e, RecheckError::Beyond(w) if w.contains("limit 4194304")),
            "{e}"
        );
        // 32 threads: within it, every cell and input (2^12) listed and counted.
        let l = parse("(32,128):(0,1) -> (128,)");
        assert_eq!(semantic_recheck(&l, &l, &[128]), Ok(128));
    }
}
