//! Property claims about one layout, and relations between two beyond equality.
//!
//! - injective: no physical point is related to two logical coordinates;
//! - surjective: the image fills its bounding box (every value between the smallest and the
//!   largest reached, on every axis);
//! - bijective: both;
//! - refines(A, B): every pair of A is a pair of B (`A(x) ⊆ B(x)` for every `x`);
//! - equal on a region: `A(x) == B(x)` for every `x` in a box of logical coordinates.
//!
//! Each is decided by enumeration; injectivity of a strided, replica-free form also by z3
//! (`exists x != y: F(x) == F(y)`), and the two must agree. Witnesses are re-evaluated by the
//! trusted semantics. Example: `4:2` is injective, not surjective (offset 1 is a hole).

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
    let f = forward(l, Some(&shape))?;
    if f.size() > policy.exhaustive_limit {
        return large_domain(l, &f, &shape, prop, policy);
    }
    let ((inj, inj_witness), (sur, sur_witness)) =
        box_scan(&f).unwrap_or_else(|| (injective(&f), surjective(&f)));
    let mut deciders = vec![(
        "exhaustive".to_string(),
        word(match prop {
            Property::Injective => inj,
            Property::Surjective => sur,
            Property::Bijective => inj && sur,
        }),
    )];
    if let Some((x, y)) = inj_witness {
        // Confirm by the semantics: both coordinates reach a common point.
        let cx = layout::shape::unflatten_row_major(&shape, x)?;
        let cy = layout::shape::unflatten_row_major(&shape, y)?;
        let (px, py) = (
            semantic_points(l, &shape, &cx)?,
            semantic_points(l, &shape, &cy)?,
        );
        if px.is_disjoint(&py) {
            return Err(LayoutError::invalid(
                "injectivity witness",
                format!("{cx:?} and {cy:?} share no point by the semantics"),
            ));
        }
    }
    if matches!(prop, Property::Injective | Property::Bijective) && policy.use_smt {
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
    let holds = match prop {
        Property::Injective => inj,
        Property::Surjective => sur,
        Property::Bijective => inj && sur,
    };
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

fn word(b: bool) -> String {
    if b {
        "proved".into()
    } else {
        "refuted".into()
    }
}

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
        "the domain has {} indices, above the exhaustive limit",
        f.size()
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

/// Whether every pair of `a` is a pair of `b` over `shape`, by enumeration; the first logical
/// index where `a` has a point `b` lacks, when not.
pub fn refines(
    a: &Layout,
    b: &Layout,
    shape: Option<&[i64]>,
) -> Result<Result<(), Vec<i64>>, LayoutError> {
    let (fa, fb) = crate::claim::forms(
        a,
        b,
        &shape
            .map(<[i64]>::to_vec)
            .unwrap_or_else(|| default_logical_shape(a)),
    )?;
    for x in 0..fa.size() {
        let pb = fb.points(x);
        if fa.points(x).iter().any(|p| pb.binary_search(p).is_err()) {
            return Ok(Err(layout::shape::unflatten_row_major(&fa.shape, x)?));
        }
    }
    Ok(Ok(()))
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
