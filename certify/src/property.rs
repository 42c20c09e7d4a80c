//! Property claims about one layout, and relations between two beyond equality.
//!
//! - injective: no physical point is related to two logical coordinates;
//! - surjective: the image fills its bounding box (every value between the smallest and the
//!   largest reached, on every axis);
//! - bijective: both;
//! - refines(A, B): every pair of A is a pair of B (`A(x) ⊆ B(x)` for every `x`);
//! - equal on a region: `A(x) == B(x)` for every `x` in a box of logical coordinates.
//!
//! A swizzle-free strided form is first analysed at any size by its structure (the
//! `normal-form` decider, [`strided_analysis`]): every point is keyed to a scalar over the
//! image's bounding box (mixed radix: injective on the box and linear), so the image is
//! `key(O) + sum of the arithmetic progressions {0, k, .., (e-1)k}` of the digits and the
//! replica generators. Sorted by `|k|`, the sum is an interval iff each `|k_j| <= 1 + reach`
//! (the sum of `(e_i - 1)|k_i|` before it), else `reach + 1` is a hole: filling is exact.
//! Injectivity: the Axe gap condition (`|k_j| > reach`) over the digits and the C2-merged
//! replica generators proves it; a zero digit stride or a stride that is a small multiple of
//! another gives a witness pair; otherwise it is undecided here. Enumeration decides domains
//! up to the exhaustive limit (and must agree); above it, z3 answers what the structure
//! leaves open (`exists x != y: F(x) == F(y)`, digits as bounded variables). Witnesses are
//! re-evaluated by the trusted semantics. Example: `4:2` is injective, not surjective (offset
//! 1 is a hole).

use std::collections::BTreeMap;

use serde::Serialize;
use z3::ast::{Bool, BV};

use layout::{Layout, LayoutError};

use crate::claim::{semantic_points, Policy};
use crate::forward::{default_logical_shape, forward, Forward, ForwardKind};
use crate::smt::{check, limited_solver, Verdict};

/// A property of one layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Property {
    /// No point reached twice.
    Injective,
    /// The image fills its bounding box.
    Surjective,
    /// Both.
    Bijective,
}

impl Property {
    /// Parses `injective`, `surjective`, `bijective`.
    pub fn parse(s: &str) -> Result<Property, LayoutError> {
        match s {
            "injective" => Ok(Property::Injective),
            "surjective" => Ok(Property::Surjective),
            "bijective" => Ok(Property::Bijective),
            other => Err(LayoutError::invalid(
                format!("property {other:?}"),
                "expected injective, surjective or bijective",
            )),
        }
    }
}

/// The answer to a property claim.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PropertyReport {
    /// `proved`, `refuted` or `unknown`.
    pub verdict: &'static str,
    /// The deciders that ran and what each said.
    pub deciders: Vec<(String, String)>,
    /// Why it fails (a witness in words), or why it is unknown.
    pub detail: Option<String>,
}

/// `layout`'s [`facts`](layout::facts::facts) of `l`, with an `unknown` injectivity or
/// surjectivity of a memory layout (Axe, CuTe, swizzled) decided where the property deciders
/// can: past the relation `facts` enumerates, a bitset scan with its own work limit, or z3.
/// What `show` reports, in the CLI and the Python package.
pub fn decided_facts(l: &Layout, logical: Option<&[i64]>) -> layout::Result<layout::facts::Facts> {
    use layout::facts::Fact;
    let mut f = layout::facts::facts(l, logical)?;
    // A layout whose fused threads would merge points is decided by `prove_property` (lanes and
    // warps apart) wherever it can be.
    let unfused = layout::relation::check_fusion(&[l]).is_err();
    if unfused || matches!(l, Layout::Axe(_) | Layout::Cute(_) | Layout::Swizzled(_)) {
        for (fact, prop) in [
            (&mut f.injective, Property::Injective),
            (&mut f.surjective, Property::Surjective),
        ] {
            if matches!(fact, Fact::Unknown(_)) {
                if let Ok(r) = prove_property(l, prop, logical, &Policy::default()) {
                    match r.verdict {
                        "proved" => *fact = Fact::Yes,
                        "refuted" => *fact = Fact::No(r.detail.unwrap_or_default()),
                        _ => {}
                    }
                }
            }
        }
    }
    Ok(f)
}

/// Decides a property of `l` over `shape` (default: its logical shape).
pub fn prove_property(
    l: &Layout,
    prop: Property,
    shape: Option<&[i64]>,
    policy: &Policy,
) -> Result<PropertyReport, LayoutError> {
    let shape = shape
        .map(<[i64]>::to_vec)
        .unwrap_or_else(|| default_logical_shape(l));
    if matches!(l, Layout::Tv(_) | Layout::Linear(_)) {
        return physical_to_logical(l, &shape, prop, policy);
    }
    // A 64-lane wavefront with warps: its lanes and warps are decided apart (the CUDA fusion
    // `laneid + 32*warpid` would merge lane 32 of warp 0 with lane 0 of warp 1).
    if let Some(renamed) = crate::claim::wavefront_axes_of(l)? {
        return prove_property(&renamed, prop, Some(&shape), policy);
    }
    let f = match forward(l, Some(&shape)) {
        Ok(f) => f,
        Err(e) if crate::forward::beyond_table(&e) => return Ok(beyond_reach(&e)),
        Err(e) => return Err(e),
    };
    let structural = strided_analysis(&f);
    if let Some(a) = &structural {
        if let Some((x, y)) = a.injective.as_ref().and_then(|i| i.1) {
            confirm_collision(l, &shape, x, y)?;
        }
    }
    let structural_word = structural.as_ref().and_then(|a| {
        let inj = a.injective.as_ref().map(|i| i.0);
        let sur = a.fills.as_ref().map(|s| s.0);
        match prop {
            Property::Injective => inj,
            Property::Surjective => sur,
            Property::Bijective => match (inj, sur) {
                (Some(false), _) | (_, Some(false)) => Some(false),
                (Some(true), Some(true)) => Some(true),
                _ => None,
            },
        }
    });
    // The work is the number of points visited (indices x points per index), not just indices.
    let points = f
        .size()
        .checked_mul(crate::exhaustive::points_per_index(&f))
        .unwrap_or(i64::MAX);
    let scan = if points > policy.exhaustive_limit {
        None
    } else {
        match box_scan(&f) {
            Some(scan) => Some(scan),
            // The point-set enumeration holds every point in a map: it has its own, lower bound.
            None if points > MAX_POINT_SET => None,
            None => Some((injective(&f), surjective(&f))),
        }
    };
    let Some(scan) = scan else {
        if let (Some(holds), Some(a)) = (structural_word, &structural) {
            return Ok(PropertyReport {
                verdict: if holds { "proved" } else { "refuted" },
                deciders: vec![("normal-form".into(), word(holds))],
                detail: (!holds).then(|| a.detail(prop, &shape)).flatten(),
            });
        }
        return large_domain(l, &f, &shape, prop, policy);
    };
    let ((inj, inj_witness), (sur, sur_witness)) = scan;
    let holds = match prop {
        Property::Injective => inj,
        Property::Surjective => sur,
        Property::Bijective => inj && sur,
    };
    let mut deciders = Vec::new();
    if let Some(w) = structural_word {
        if w != holds {
            return Err(LayoutError::invalid(
                "decision",
                "the normal-form and exhaustive deciders disagree on a property",
            ));
        }
        deciders.push(("normal-form".to_string(), word(w)));
    }
    deciders.push(("exhaustive".to_string(), word(holds)));
    if let Some((x, y)) = inj_witness {
        confirm_collision(l, &shape, x, y)?;
    }
    // z3 is the second decider only where the structure left the claim open.
    if matches!(prop, Property::Injective | Property::Bijective)
        && policy.use_smt
        && structural_word.is_none()
    {
        if let Some(z) = smt_injective(&f, policy.rlimit) {
            if z != inj {
                return Err(LayoutError::invalid(
                    "decision",
                    "the exhaustive and smt deciders disagree on injectivity",
                ));
            }
            deciders.push(("smt".into(), word(z)));
        }
    }
    let detail = if holds {
        None
    } else if !inj && prop != Property::Surjective {
        inj_witness.map(|(x, y)| {
            let c = |i| layout::shape::unflatten_row_major(&shape, i).unwrap_or_default();
            format!("logical {:?} and {:?} reach the same point", c(x), c(y))
        })
    } else {
        sur_witness
    };
    Ok(PropertyReport {
        verdict: if holds { "proved" } else { "refuted" },
        deciders,
        detail,
    })
}

/// `unknown`: the layout has no strided form over the shape and is too large to tabulate.
fn beyond_reach(e: &LayoutError) -> PropertyReport {
    PropertyReport {
        verdict: "unknown",
        deciders: vec![("exhaustive".into(), "unknown".into())],
        detail: Some(e.to_string()),
    }
}

/// A property of a physical -> logical notation (CuTe TV layouts, linear layouts and the
/// Triton attributes read as them; certify.md 1) is a property of THAT map, as `show` reports
/// it: injective when no logical cell is held by two physical points (a broadcast is not);
/// surjective when the held cells fill the tile's bounding box of them (TV) or every cell of
/// the out-dims (linear). Two deciders must agree: the layout's facts (F2 rank for linear
/// layouts, the enumerated relation for TV) and an enumeration of certify's own forward form
/// (cell -> the points holding it), when its work is within the exhaustive limit.
fn physical_to_logical(
    l: &Layout,
    shape: &[i64],
    prop: Property,
    policy: &Policy,
) -> Result<PropertyReport, LayoutError> {
    use layout::facts::Fact;
    let facts = layout::facts::facts(l, Some(shape))?;
    let fact = |f: &Fact| match f {
        Fact::Yes => Some((true, None)),
        Fact::No(w) => Some((false, Some(w.clone()))),
        Fact::Unknown(_) => None,
    };
    let by_facts = (fact(&facts.injective), fact(&facts.surjective));
    // A 64-lane wavefront with warps: the points are enumerated with lanes and warps apart
    // (the CUDA fusion would merge lane 32 of warp 0 with lane 0 of warp 1).
    let renamed = crate::claim::wavefront_axes_of(l)?;
    let f = match forward(renamed.as_ref().unwrap_or(l), Some(shape)) {
        Ok(f) => f,
        Err(e) if crate::forward::beyond_table(&e) => return Ok(beyond_reach(&e)),
        Err(e) => return Err(e),
    };
    let work = f
        .size()
        .checked_mul(crate::exhaustive::points_per_index(&f).max(1))
        .unwrap_or(i64::MAX);
    let by_forward = (work <= policy.exhaustive_limit).then(|| held_cells(&f, shape, l));
    let combine = |p: Property, (inj, sur): (Decided, Decided)| match p {
        Property::Injective => inj,
        Property::Surjective => sur,
        Property::Bijective => match (inj, sur) {
            (Some((false, w)), _) | (_, Some((false, w))) => Some((false, w)),
            (Some((true, _)), Some((true, _))) => Some((true, None)),
            _ => None,
        },
    };
    let a = combine(prop, by_facts);
    let b = by_forward.and_then(|x| combine(prop, x));
    let mut deciders = Vec::new();
    let kind = if matches!(l, Layout::Linear(_)) {
        "F2 rank"
    } else {
        "relation"
    };
    if let Some((h, _)) = &a {
        deciders.push((kind.to_string(), word(*h)));
    }
    if let Some((h, _)) = &b {
        deciders.push(("exhaustive".to_string(), word(*h)));
    }
    match (a, b) {
        (Some((x, _)), Some((y, _))) if x != y => Err(LayoutError::invalid(
            "decision",
            format!("the {kind} and exhaustive deciders disagree on a property"),
        )),
        (Some((holds, w)), _) | (None, Some((holds, w))) => Ok(PropertyReport {
            verdict: if holds { "proved" } else { "refuted" },
            deciders,
            detail: w,
        }),
        (None, None) => Ok(PropertyReport {
            verdict: "unknown",
            deciders,
            detail: Some(format!(
                "the relation is past what the deciders enumerate ({work} points; limit {})",
                policy.exhaustive_limit
            )),
        }),
    }
}

type Decided = Option<(bool, Option<String>)>;

/// Injectivity and surjectivity of a physical -> logical map by enumerating its forward form:
/// a cell held by two points is a collision (named), and the held cells must fill their
/// bounding box (TV) or the whole shape (linear).
fn held_cells(f: &Forward, shape: &[i64], l: &Layout) -> (Decided, Decided) {
    let coord = |x: i64| layout::shape::unflatten_row_major(shape, x).unwrap_or_default();
    let mut collision = None;
    let mut held = Vec::new();
    for x in 0..f.size() {
        let ps = f.points(x);
        if ps.len() > 1 && collision.is_none() {
            collision = Some(format!(
                "cell {:?} is held by two physical points ({:?} and {:?} over {:?})",
                coord(x),
                ps[0],
                ps[1],
                f.axes.iter().map(ToString::to_string).collect::<Vec<_>>()
            ));
        }
        if !ps.is_empty() {
            held.push(coord(x));
        }
    }
    let injective = Some((collision.is_none(), collision));
    let wanted = if matches!(l, Layout::Linear(_)) {
        Some(f.size())
    } else {
        (0..shape.len()).try_fold(1i64, |acc, d| {
            let lo = held.iter().map(|c| c[d]).min()?;
            let hi = held.iter().map(|c| c[d]).max()?;
            acc.checked_mul(hi - lo + 1)
        })
    };
    let surjective = wanted.map(|n| {
        let ok = n == held.len() as i64;
        (
            ok,
            (!ok).then(|| format!("{} of the {n} cells are held", held.len())),
        )
    });
    (injective, surjective)
}

/// Confirms by the semantics that logical indices `x` and `y` reach a common point.
fn confirm_collision(l: &Layout, shape: &[i64], x: i64, y: i64) -> Result<(), LayoutError> {
    let cx = layout::shape::unflatten_row_major(shape, x)?;
    let cy = layout::shape::unflatten_row_major(shape, y)?;
    if x == y || semantic_points(l, shape, &cx)?.is_disjoint(&semantic_points(l, shape, &cy)?) {
        return Err(LayoutError::invalid(
            "injectivity witness",
            format!("{cx:?} and {cy:?} share no point by the semantics"),
        ));
    }
    Ok(())
}

/// What the structure of a swizzle-free strided form decides (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StridedAnalysis {
    /// Injective, with two colliding logical indices when not; `None`: undecided.
    pub injective: Option<(bool, Option<(i64, i64)>)>,
    /// Fills its bounding box, with an unreached point when not; `None`: undecided.
    pub fills: Option<(bool, Option<Vec<i64>>)>,
    /// Points of the bounding box.
    pub cells: i128,
}

impl StridedAnalysis {
    fn detail(&self, prop: Property, shape: &[i64]) -> Option<String> {
        if prop != Property::Surjective {
            if let Some((false, Some((x, y)))) = self.injective {
                let c = |i| layout::shape::unflatten_row_major(shape, i).unwrap_or_default();
                return Some(format!(
                    "logical {:?} and {:?} reach the same point",
                    c(x),
                    c(y)
                ));
            }
        }
        match &self.fills {
            Some((false, Some(p))) => Some(format!(
                "point {p:?} of the image's bounding box ({} points) is not reached",
                self.cells
            )),
            _ => None,
        }
    }
}

/// Injectivity and filling of a swizzle-free strided form from its digits and replica
/// generators alone, at any size; `None` for other forms or when the box overflows i128.
///
/// ```
/// use certify::forward::forward;
/// use certify::property::strided_analysis;
/// use layout::Layout;
/// let f = forward(&Layout::parse("(3000,3000):(1,3000)", None).unwrap(), None).unwrap();
/// let a = strided_analysis(&f).unwrap();
/// assert_eq!((a.injective, a.fills), (Some((true, None)), Some((true, None))));
/// let f = forward(&Layout::parse("(4,4):(1,2)", None).unwrap(), None).unwrap();
/// let a = strided_analysis(&f).unwrap();
/// assert_eq!(a.injective.map(|i| i.0), Some(false));
/// ```
pub fn strided_analysis(f: &Forward) -> Option<StridedAnalysis> {
    let ForwardKind::Strided {
        digits,
        replica_gens,
        offset,
        swizzle: None,
        ..
    } = &f.kind
    else {
        return None;
    };
    let axes = offset.len();
    // The image's bounding box, and the mixed-radix key over it.
    let all = || digits.iter().chain(replica_gens.iter());
    let mut lo = vec![0i128; axes];
    let mut radix = vec![0i128; axes];
    let mut cells: i128 = 1;
    for a in (0..axes).rev() {
        let (mut l, mut h) = (offset[a] as i128, offset[a] as i128);
        for (e, s) in all() {
            let span = (*e as i128 - 1).checked_mul(s[a] as i128)?;
            l = l.checked_add(span.min(0))?;
            h = h.checked_add(span.max(0))?;
        }
        lo[a] = l;
        radix[a] = cells;
        cells = cells.checked_mul(h.checked_sub(l)?.checked_add(1)?)?;
    }
    let key = |v: &[i64]| -> Option<i128> {
        v.iter().zip(&radix).try_fold(0i128, |acc, (x, r)| {
            acc.checked_add((*x as i128).checked_mul(*r)?)
        })
    };
    // Place value of each digit (row-major: the last digit counts fastest).
    let mut place = vec![0i64; digits.len()];
    let mut p: i64 = 1;
    for i in (0..digits.len()).rev() {
        place[i] = p;
        p = p.checked_mul(digits[i].0)?;
    }
    let dk: Vec<(i64, i128, usize)> = digits
        .iter()
        .enumerate()
        .filter(|(_, (e, _))| *e > 1)
        .map(|(i, (e, s))| Some((*e, key(s)?, i)))
        .collect::<Option<_>>()?;
    let rk: Vec<(i64, i128)> = replica_gens
        .iter()
        .filter(|(e, _)| *e > 1)
        .map(|(e, s)| Some((*e, key(s)?.checked_abs()?)))
        .collect::<Option<_>>()?;
    // Filling: the sum of all progressions is an interval of `cells` keys.
    let mut prog: Vec<(i64, i128)> = dk.iter().map(|&(e, k, _)| (e, k.abs())).collect();
    prog.extend(rk.iter().copied());
    prog.retain(|&(_, k)| k != 0);
    prog.sort_by_key(|&(_, k)| k);
    let mut reach: i128 = 0;
    let mut hole = None;
    for &(e, k) in &prog {
        if k > reach + 1 {
            hole = Some(reach + 1);
            break;
        }
        reach = reach.checked_add((e as i128 - 1).checked_mul(k)?)?;
    }
    // The smallest key of the image: each negative progression at its far end.
    let mut min_key = key(offset)?;
    for (e, s) in all() {
        let k = key(s)?;
        if k < 0 {
            min_key = min_key.checked_add((*e as i128 - 1).checked_mul(k)?)?;
        }
    }
    let lo_key = lo
        .iter()
        .zip(&radix)
        .try_fold(0i128, |acc, (x, r)| acc.checked_add(x.checked_mul(*r)?))?;
    let decode = |k: i128| -> Vec<i64> {
        let mut rest = k - lo_key;
        (0..axes)
            .map(|a| {
                let d = rest / radix[a];
                rest -= d * radix[a];
                (lo[a] + d) as i64
            })
            .collect()
    };
    let fills = match hole {
        Some(h) => (false, Some(decode(min_key + h))),
        None if reach + 1 == cells => (true, None),
        // An interval that misses the box's corners: its key-range end is a box point not
        // reached (the interval starts at `min_key`, so `min_key + reach + 1` or one below
        // `min_key` lies in the box).
        None => {
            let next = min_key + reach + 1;
            let k = if next < lo_key + cells {
                next
            } else {
                min_key - 1
            };
            (false, Some(decode(k)))
        }
    };
    Some(StridedAnalysis {
        injective: injectivity(&dk, &rk, &place),
        fills: Some(fills),
        cells,
    })
}

/// Injectivity from keyed digits `(extent, key, digit)` and replica generators `(extent, |key|)`.
fn injectivity(
    dk: &[(i64, i128, usize)],
    rk: &[(i64, i128)],
    place: &[i64],
) -> Option<(bool, Option<(i64, i64)>)> {
    // A zero digit stride: index 0 and one step of that digit have the same points.
    if let Some(&(_, _, i)) = dk.iter().find(|d| d.1 == 0) {
        return Some((false, Some((0, place[i]))));
    }
    // The replica set's own overlaps are allowed: merge its runs first (rule C2).
    let mut reps: Vec<(i64, i128)> = rk.iter().copied().filter(|r| r.1 != 0).collect();
    'merge: loop {
        reps.sort_by_key(|&(e, k)| (k, e));
        for i in 0..reps.len() {
            for j in 0..reps.len() {
                let ((e1, s1), (e2, s2)) = (reps[i], reps[j]);
                if i != j && s2 % s1 == 0 && (1..=e1 as i128).contains(&(s2 / s1)) {
                    reps[i] = (
                        i64::try_from(e1 as i128 + (s2 / s1) * (e2 as i128 - 1)).ok()?,
                        s1,
                    );
                    reps.remove(j);
                    continue 'merge;
                }
            }
        }
        break;
    }
    let mut all: Vec<(i64, i128, Option<usize>)> = dk
        .iter()
        .map(|&(e, k, i)| (e, k.abs(), Some(i)))
        .chain(reps.iter().map(|&(e, k)| (e, k, None)))
        .collect();
    all.sort_by_key(|&(_, k, _)| k);
    let mut reach: i128 = 0;
    let mut gapped = true;
    for &(e, k, _) in &all {
        if k <= reach {
            gapped = false;
            break;
        }
        reach = reach.checked_add((e as i128 - 1).checked_mul(k)?)?;
    }
    if gapped {
        return Some((true, None));
    }
    // Witnesses: a digit stride that is m times another digit's (m below that extent) or
    // m times a replica generator's (m below its extent).
    for &(ei, ki, i) in dk {
        for &(_, kj, j) in dk {
            if i == j || kj.abs() % ki.abs() != 0 {
                continue;
            }
            let m = kj.abs() / ki.abs();
            if m >= ei as i128 {
                continue;
            }
            let m = m as i64;
            // k_j == m k_i: x = P_j, y = m P_i; k_j == -m k_i: x = P_j + m P_i, y = 0.
            let pair = if (kj > 0) == (ki > 0) {
                (place[j], m.checked_mul(place[i])?)
            } else {
                (place[j].checked_add(m.checked_mul(place[i])?)?, 0)
            };
            return Some((false, Some((pair.0.min(pair.1), pair.0.max(pair.1)))));
        }
        for &(f, g) in &reps {
            if ki.abs() % g == 0 && ki.abs() / g < f as i128 {
                return Some((false, Some((0, place[i]))));
            }
        }
    }
    None
}

fn word(b: bool) -> String {
    if b {
        "proved".into()
    } else {
        "refuted".into()
    }
}

/// Most points the point-set enumeration (`injective`, `surjective`) holds in memory: 2^20
/// (a point vector and a map entry each). Larger forms without a bitset scan go to the
/// large-domain deciders.
pub const MAX_POINT_SET: i64 = 1 << 20;

/// Most cells of an image bounding box [`box_scan`] marks in a bitset (128 MiB).
const BOX_SCAN_CELLS: i64 = 1 << 30;

type Scan = ((bool, Option<(i64, i64)>), (bool, Option<String>));

/// Injectivity and surjectivity of a swizzle-free strided form in one pass without point
/// vectors: each point is a key into the image's bounding box (mixed radix), marked in a
/// bitset; the first key marked twice gives the witness pair (the earlier index found by a
/// second pass). `None` when the form has a swizzle, is a table, or its box is too large; the
/// point-set enumeration ([`injective`], [`surjective`]) decides those, and the tests compare
/// the two.
fn box_scan(f: &Forward) -> Option<Scan> {
    let ForwardKind::Strided {
        digits,
        replicas,
        offset,
        swizzle: None,
        ..
    } = &f.kind
    else {
        return None;
    };
    let axes = offset.len();
    let (mut lo, mut hi) = (offset.clone(), offset.clone());
    for (e, s) in digits {
        for a in 0..axes {
            let reach = (e - 1).checked_mul(s[a])?;
            if reach < 0 {
                lo[a] = lo[a].checked_add(reach)?;
            } else {
                hi[a] = hi[a].checked_add(reach)?;
            }
        }
    }
    let rlo: Vec<i64> = (0..axes)
        .map(|a| replicas.iter().map(|r| r[a]).min().unwrap_or(0))
        .collect();
    let rhi: Vec<i64> = (0..axes)
        .map(|a| replicas.iter().map(|r| r[a]).max().unwrap_or(0))
        .collect();
    let mut radix = vec![0i64; axes];
    let mut cells: i64 = 1;
    for a in (0..axes).rev() {
        lo[a] = lo[a].checked_add(rlo[a])?;
        hi[a] = hi[a].checked_add(rhi[a])?;
        radix[a] = cells;
        cells = cells.checked_mul(hi[a].checked_sub(lo[a])?.checked_add(1)?)?;
    }
    if cells > BOX_SCAN_CELLS {
        return None;
    }
    // Index x's base key, then + each replica's key; digits run slowest first, so the last
    // digit counts fastest (row-major over the logical shape).
    let key_of = |p: &[i64]| -> i64 { (0..axes).map(|a| (p[a] - lo[a]) * radix[a]).sum() };
    let step: Vec<i64> = digits
        .iter()
        .map(|(_, s)| key_of_delta(s, &radix))
        .collect();
    let rkeys: Vec<i64> = replicas.iter().map(|r| key_of_delta(r, &radix)).collect();
    let base0 = key_of(offset);
    let visit = |mut each: Box<dyn FnMut(i64, i64) -> bool + '_>| {
        let mut counters = vec![0i64; digits.len()];
        let mut base = base0;
        for x in 0..f.size() {
            for &r in &rkeys {
                if !each(x, base + r) {
                    return;
                }
            }
            for d in (0..digits.len()).rev() {
                counters[d] += 1;
                base += step[d];
                if counters[d] < digits[d].0 {
                    break;
                }
                base -= step[d] * digits[d].0;
                counters[d] = 0;
            }
        }
    };
    let mut bits = vec![0u64; (cells as usize).div_ceil(64)];
    let mut distinct: i64 = 0;
    let mut collision: Option<(i64, i64)> = None;
    visit(Box::new(|x, k| {
        let (w, b) = ((k / 64) as usize, k % 64);
        if bits[w] >> b & 1 == 1 {
            collision.get_or_insert((x, k));
        } else {
            bits[w] |= 1 << b;
            distinct += 1;
        }
        true
    }));
    let witness = collision.map(|(x, k)| {
        let mut first = x;
        visit(Box::new(|y, key| {
            if key == k && y != x {
                first = y;
                return false;
            }
            y < x
        }));
        (first.min(x), first.max(x))
    });
    let sur = distinct == cells;
    let sur_witness = (!sur).then(|| {
        format!("{distinct} of the {cells} points of the image's bounding box are reached")
    });
    Some(((witness.is_none(), witness), (sur, sur_witness)))
}

/// The key offset of a point delta over the box radices.
fn key_of_delta(d: &[i64], radix: &[i64]) -> i64 {
    d.iter().zip(radix).map(|(v, r)| v * r).sum()
}

/// Injectivity by enumeration, with two indices sharing a point when it fails.
fn injective(f: &Forward) -> (bool, Option<(i64, i64)>) {
    let mut seen: BTreeMap<Vec<i64>, i64> = BTreeMap::new();
    for x in 0..f.size() {
        for p in f.points(x) {
            if let Some(&y) = seen.get(&p) {
                if y != x {
                    return (false, Some((y, x)));
                }
            }
            seen.insert(p, x);
        }
    }
    (true, None)
}

/// Surjectivity onto the image's bounding box by enumeration.
fn surjective(f: &Forward) -> (bool, Option<String>) {
    let mut points: Vec<Vec<i64>> = (0..f.size()).flat_map(|x| f.points(x)).collect();
    points.sort();
    points.dedup();
    let dims = f.axes.len();
    let mut cells: i64 = 1;
    for d in 0..dims {
        let lo = points.iter().map(|p| p[d]).min().unwrap_or(0);
        let hi = points.iter().map(|p| p[d]).max().unwrap_or(0);
        match hi
            .checked_sub(lo)
            .and_then(|w| w.checked_add(1))
            .and_then(|w| cells.checked_mul(w))
        {
            Some(c) => cells = c,
            None => {
                return (
                    false,
                    Some("the bounding box is too large to be filled".into()),
                )
            }
        }
    }
    if cells == points.len() as i64 {
        (true, None)
    } else {
        (
            false,
            Some(format!(
                "{} of the {cells} points of the image's bounding box are reached",
                points.len()
            )),
        )
    }
}

/// Above the exhaustive limit: injectivity by z3 alone (a witness is re-evaluated by the
/// semantics), and filling by counting: an injective map of `n` indices into a bounding box of
/// `n` points reaches every point of it (pigeonhole), into a larger box it cannot. The box of a
/// strided form is `offset + sum of the digits' extremes` per axis. Example: the grid of an
/// 8192x8192 transpose, `(64,64,128,128):(1,8192,64,524288)`, is bijective onto its 2^26 indices.
fn large_domain(
    l: &Layout,
    f: &Forward,
    shape: &[i64],
    prop: Property,
    policy: &Policy,
) -> Result<PropertyReport, LayoutError> {
    let unknown = |why: String| PropertyReport {
        verdict: "unknown",
        deciders: vec![("exhaustive".into(), "unknown".into())],
        detail: Some(why),
    };
    let too_big = format!(
        "the domain has {} indices ({} points per index at most), above the enumeration limits",
        f.size(),
        crate::exhaustive::points_per_index(f)
    );
    if !policy.use_smt {
        return Ok(unknown(too_big));
    }
    let Some(z) = smt_injective_model(f, policy.rlimit) else {
        return Ok(unknown(format!(
            "{too_big}, and z3 cannot decide injectivity of this form"
        )));
    };
    let mut deciders = vec![("smt".to_string(), word(z.is_none()))];
    if let Some((x, y)) = z {
        let cx = layout::shape::unflatten_row_major(shape, x)?;
        let cy = layout::shape::unflatten_row_major(shape, y)?;
        if semantic_points(l, shape, &cx)?.is_disjoint(&semantic_points(l, shape, &cy)?) {
            return Err(LayoutError::invalid(
                "injectivity witness",
                format!("z3's {cx:?} and {cy:?} share no point by the semantics"),
            ));
        }
        if prop == Property::Surjective {
            return Ok(unknown(format!(
                "{too_big}, and the map is not injective, so counting cannot decide filling"
            )));
        }
        return Ok(PropertyReport {
            verdict: "refuted",
            deciders,
            detail: Some(format!(
                "logical {cx:?} and {cy:?} reach the same point (z3, confirmed by the semantics)"
            )),
        });
    }
    if prop == Property::Injective {
        return Ok(PropertyReport {
            verdict: "proved",
            deciders,
            detail: None,
        });
    }
    let Some(cells) = bounding_box_cells(f) else {
        return Ok(unknown(format!(
            "{too_big}, and the image's bounding box cannot be counted"
        )));
    };
    let fills = cells == f.size();
    deciders.push(("count".into(), word(fills)));
    Ok(PropertyReport {
        verdict: if fills { "proved" } else { "refuted" },
        deciders,
        detail: (!fills).then(|| {
            format!(
                "{} distinct points cannot fill the image's bounding box of {cells}",
                f.size()
            )
        }),
    })
}

/// The number of points in the bounding box of a swizzle-free strided form with one replica
/// vector (`None` otherwise or on overflow).
fn bounding_box_cells(f: &Forward) -> Option<i64> {
    let ForwardKind::Strided {
        digits,
        replicas,
        swizzle: None,
        ..
    } = &f.kind
    else {
        return None;
    };
    if replicas.len() > 1 {
        return None;
    }
    let mut cells: i64 = 1;
    for axis in 0..f.axes.len() {
        let (mut lo, mut hi) = (0i64, 0i64);
        for (e, s) in digits {
            let reach = (e - 1).checked_mul(s[axis])?;
            if reach < 0 {
                lo = lo.checked_add(reach)?;
            } else {
                hi = hi.checked_add(reach)?;
            }
        }
        cells = cells.checked_mul(hi.checked_sub(lo)?.checked_add(1)?)?;
    }
    Some(cells)
}

/// `exists x != y < n: F(x) == F(y)` for a strided, replica-free form; `None` when not encodable
/// or z3 gives up.
fn smt_injective(f: &Forward, rlimit: u32) -> Option<bool> {
    smt_injective_model(f, rlimit).map(|m| m.is_none())
}

/// As [`smt_injective`], with z3's two colliding indices when the form is not injective:
/// `Some(None)` injective, `Some(Some((x, y)))` not.
fn smt_injective_model(f: &Forward, rlimit: u32) -> Option<Option<(i64, i64)>> {
    // A fresh z3 context: the model must not depend on earlier queries (see smt::decide).
    z3::with_z3_config(&z3::Config::new(), || {
        smt_injective_model_in_context(f, rlimit)
    })
}

fn smt_injective_model_in_context(f: &Forward, rlimit: u32) -> Option<Option<(i64, i64)>> {
    let ForwardKind::Strided { replicas, .. } = &f.kind else {
        return None;
    };
    if replicas.len() > 1 {
        return None;
    }
    let enc = crate::smt::Encodable::of(f)?;
    let width = crate::smt::width_for(&[&enc], f.size())?;
    let s = limited_solver(rlimit);
    let n = BV::from_u64(f.size() as u64, width);
    let (x, y) = (BV::new_const("x", width), BV::new_const("y", width));
    s.assert(x.bvult(&n));
    s.assert(y.bvult(&n));
    s.assert(x.eq(&y).not());
    let (px, py) = (
        enc.encode(&s, &x, "x", width),
        enc.encode(&s, &y, "y", width),
    );
    let same: Vec<Bool> = px.iter().zip(&py).map(|(a, b)| a.eq(b)).collect();
    s.assert(Bool::and(&same));
    match check(&s) {
        Verdict::Unsat => Some(None),
        Verdict::Sat => {
            let m = s.get_model()?;
            let get = |v: &BV| m.eval(v, true).and_then(|b| b.as_u64()).map(|u| u as i64);
            Some(Some((get(&x)?, get(&y)?)))
        }
        Verdict::Unknown(_) => None,
    }
}

/// An error when enumerating both forms would visit more points than the exhaustive decider's
/// default limit (the relation claims have no other decider: beyond it they are undecided).
fn within_enumeration_limit(fa: &Forward, fb: &Forward) -> Result<(), LayoutError> {
    let per = crate::exhaustive::points_per_index(fa)
        .saturating_add(crate::exhaustive::points_per_index(fb));
    let work = fa.size().checked_mul(per).unwrap_or(i64::MAX);
    let limit = crate::exhaustive::DEFAULT_LIMIT;
    if work > limit {
        return Err(LayoutError::invalid(
            "claim",
            format!("enumerating it would visit {work} points, above the exhaustive limit {limit}"),
        ));
    }
    Ok(())
}

/// Whether every pair of `a` is a pair of `b` over the claim's domain (`shape`, else
/// [`crate::domain::resolve`]'s), by enumeration; the first logical
/// index where `a` has a point `b` lacks, when not.
pub fn refines(
    a: &Layout,
    b: &Layout,
    shape: Option<&[i64]>,
) -> Result<Result<(), Vec<i64>>, LayoutError> {
    let domain = crate::domain::resolve(a, b, shape)?;
    let (fa, fb) = crate::claim::forms(a, b, &domain.shape)?;
    if let Some(first) = refines_by_canonical_forms(&fa, &fb) {
        return match first {
            None => Ok(Ok(())),
            Some(x) => Ok(Err(layout::shape::unflatten_row_major(&fa.shape, x)?)),
        };
    }
    within_enumeration_limit(&fa, &fb)?;
    Ok(refines_by_enumeration(&fa, &fb).map_or(Ok(()), |x| {
        Err(layout::shape::unflatten_row_major(&fa.shape, x).unwrap_or_default())
    }))
}

/// The first index where `A(x)` is not a subset of `B(x)`, by enumeration.
fn refines_by_enumeration(fa: &Forward, fb: &Forward) -> Option<i64> {
    (0..fa.size()).find(|&x| {
        let pb = fb.points(x);
        fa.points(x).iter().any(|p| pb.binary_search(p).is_err())
    })
}

/// Refinement from the canonical forms, at any size: `Some(None)` holds, `Some(Some(x))` fails
/// first at index `x`, `None` undecided. With `A(x) = a(x) + R'_A` and `B(x) = b(x) + R'_B`
/// (lex-minimum plus shape): when `B` has one point per index, `A(x) ⊆ B(x)` iff `A` has one
/// too and `a(x) == b(x)`, so refinement is equality; when `a == b` as maps, it holds iff
/// `R'_A ⊆ R'_B` (every index alike). Other cases are left to enumeration.
fn refines_by_canonical_forms(fa: &Forward, fb: &Forward) -> Option<Option<i64>> {
    use crate::canonical::{canonicalize, compare, Comparison};
    let (ca, cb) = (canonicalize(fa)?, canonicalize(fb)?);
    let shape = |f: &Forward| -> Option<Vec<Vec<i64>>> {
        let ForwardKind::Strided { replicas, .. } = &f.kind else {
            return None;
        };
        let min = replicas.first()?;
        replicas
            .iter()
            .map(|p| p.iter().zip(min).map(|(x, m)| x.checked_sub(*m)).collect())
            .collect()
    };
    let (ra, rb) = (shape(fa)?, shape(fb)?);
    if rb.len() == 1 {
        if ra.len() > 1 {
            return Some(Some(0));
        }
        return match compare(&ca, &cb, fa, fb)? {
            Comparison::Equal => Some(None),
            Comparison::Differ(d) => Some(Some(d.first)),
        };
    }
    if ca.base == cb.base && ca.digits == cb.digits {
        let all = ra.iter().all(|p| rb.binary_search(p).is_ok());
        return Some((!all).then_some(0));
    }
    None
}

/// Whether `a` and `b` agree on the box `region` (`[lo, hi)` per dim) of `shape`; the first
/// coordinate where they differ, when not.
pub fn equal_on_region(
    a: &Layout,
    b: &Layout,
    shape: &[i64],
    region: &[(i64, i64)],
) -> Result<Result<(), Vec<i64>>, LayoutError> {
    if region.len() != shape.len()
        || region
            .iter()
            .zip(shape)
            .any(|(&(lo, hi), &e)| lo < 0 || hi > e || lo >= hi)
    {
        return Err(LayoutError::invalid(
            format!("region {region:?}"),
            format!("each [lo, hi) must be a non-empty part of {shape:?}"),
        ));
    }
    let (fa, fb) = crate::claim::forms(a, b, shape)?;
    within_enumeration_limit(&fa, &fb)?;
    for x in 0..fa.size() {
        let c = layout::shape::unflatten_row_major(shape, x)?;
        if c.iter()
            .zip(region)
            .all(|(&v, &(lo, hi))| lo <= v && v < hi)
            && fa.points(x) != fb.points(x)
        {
            return Ok(Err(c));
        }
    }
    Ok(Ok(()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1000))]
        /// Refinement by canonical forms, where it decides, equals enumeration (first failing
        /// index included), on random Axe pairs with replicas.
        #[test]
        fn refinement_by_canonical_forms_equals_enumeration(
            shard in prop::collection::vec((1i64..4, -3i64..4), 1..4),
            reps_a in prop::collection::vec((1i64..3, 0i64..4), 0..2),
            reps_b in prop::collection::vec((1i64..3, 0i64..4), 0..3),
            bump in 0usize..5,
        ) {
            let text = |shard: &[(i64, i64)], reps: &[(i64, i64)]| {
                let e: Vec<String> = shard.iter().map(|x| x.0.to_string()).collect();
                let s: Vec<String> = shard.iter().map(|x| format!("{}@m", x.1)).collect();
                let mut t = format!("S[({}):({})]", e.join(","), s.join(","));
                if !reps.is_empty() {
                    let e: Vec<String> = reps.iter().map(|x| x.0.to_string()).collect();
                    let s: Vec<String> = reps.iter().map(|x| format!("{}@m", x.1)).collect();
                    t += &format!(" + R[({}):({})]", e.join(","), s.join(","));
                }
                t
            };
            let mut sb = shard.clone();
            if bump < sb.len() {
                sb[bump].1 += 1;
            }
            let a = Layout::parse(&text(&shard, &reps_a), None).unwrap();
            let b = Layout::parse(&text(&sb, &reps_b), None).unwrap();
            let n: i64 = shard.iter().map(|x| x.0).product();
            let (fa, fb) = crate::claim::forms(&a, &b, &[n]).unwrap();
            if let Some(got) = refines_by_canonical_forms(&fa, &fb) {
                prop_assert_eq!(got, refines_by_enumeration(&fa, &fb));
            }
        }
    }

    proptest! {
        /// The bitset scan and the point-set enumeration agree on random strided layouts
        /// (CuTe, and Axe with replicas and two axes), witnesses included.
        #[test]
        fn box_scan_equals_enumeration(
            modes in prop::collection::vec((1i64..5, -6i64..7, 0usize..2), 1..4),
            reps in prop::collection::vec((1i64..3, 0i64..5), 0..2),
            off in 0i64..3,
        ) {
            let axis = |k: usize| ["m", "laneid"][k];
            let shard: Vec<String> = modes.iter().map(|(e, _, _)| e.to_string()).collect();
            let strides: Vec<String> =
                modes.iter().map(|(_, s, a)| format!("{s}@{}", axis(*a))).collect();
            let mut text = format!("S[({}):({})]", shard.join(","), strides.join(","));
            if !reps.is_empty() {
                let e: Vec<String> = reps.iter().map(|(e, _)| e.to_string()).collect();
                let s: Vec<String> = reps.iter().map(|(_, s)| format!("{s}@m")).collect();
                text += &format!(" + R[({}):({})]", e.join(","), s.join(","));
            }
            text += &format!(" + {off}@m");
            let l = Layout::parse(&text, None).unwrap();
            let f = forward(&l, None).unwrap();
            let scan = box_scan(&f);
            prop_assert!(scan.is_some(), "{}", text);
            if let Some(((inj, w), (sur, _))) = scan {
                let (inj2, w2) = injective(&f);
                prop_assert_eq!(inj, inj2, "{}", text);
                prop_assert_eq!(sur, surjective(&f).0, "{}", text);
                if let Some((x, y)) = w {
                    prop_assert!(x < y);
                    let (px, py) = (f.points(x), f.points(y));
                    prop_assert!(px.iter().any(|p| py.contains(p)), "{} {:?}", text, w2);
                }
            }
        }
    }
}
