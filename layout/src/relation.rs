//! The common meaning of every notation: a RELATION between logical coordinates and physical
//! points (spec certify.md section 1), enumerated.
//!
//! Axe, CuTe and swizzled layouts relate a logical coordinate to the physical points it maps
//! to; TV and linear layouts are read backwards (the cell a thread/value or register/lane/warp
//! holds). Two layouts are equivalent when these sets of pairs are equal.
//!
//! # The physical point of an input (one definition, used everywhere)
//!
//! Every notation names the physical side of one input by COMPONENTS `(name, value)`: a linear
//! layout's in-dims (`register = 1, lane = 3`), an Axe layout's iters and offset (each iter
//! `e:s@a` at digit `d` contributes `d*s` on `a`), a CuTe layout's offset (on `m`), a TV
//! layout's thread and value (`tx`, `reg`). Its physical point ([`point_of`]) is:
//!
//! 1. each component on the axis its name stands for: linear in-dim names as axes
//!    ([`in_dim_axis_name`]: `offset` = `m`, `lane` = `laneid`, `register` = `reg`,
//!    `warp` = `warpid`, `block` = `cta`), then the registry's aliases (`thread` = `tx`);
//! 2. the SUM of the components on each axis: two in-dims naming one axis (`register` and
//!    `reg`) add, exactly as Axe adds several iters on one axis; no component overwrites
//!    another, so the order of the in-dims does not matter;
//! 3. the registry's `cuda` relations substituted (`tx = laneid + 32*warpid`,
//!    `warpid = wwid + 4*wgid`); they are linear, so the point is still a sum of contributions;
//! 4. zero components dropped.
//!
//! Example: in-dims `register = 1, reg = 1, lane = 3, warp = 1` give `{reg: 2, tx: 35}`, and so
//! does any order of those in-dims. `S[4:1@tx]` and `(4,1):(1,0) -> (4,)` relate the same pairs
//! `((i), {tx: i})`.
//!
//! Every place that builds a physical point from named components goes through [`point_of`]
//! (or [`normalize`] for a point already summed per axis name): this module's [`relation`], the
//! Axe conversion of linear layouts (`convert`, one iter per in-dim bit on [`in_dim_axis`]),
//! and `certify`'s forward forms and counterexample confirmation.

use std::collections::BTreeSet;

use crate::axis::{Axis, AxisRegistry, Point};
use crate::error::{LayoutError, Result};
use crate::layout::Layout;
use crate::linear::LinearLayout;
use crate::shape;

/// Largest number of pairs [`relation`] enumerates: 2^18 (each pair is a coordinate and a point
/// map, a few hundred bytes: 2^22 pairs took 3.4 GB and 40 s).
pub const MAX_PAIRS: i64 = 1 << 18;

/// One pair of the relation: a logical coordinate and a physical point.
pub type Pair = (Vec<i64>, Point);

/// Names the axis a linear layout's in-dim stands for (`lane` -> `laneid`); other names are
/// axis names themselves (resolved further by the registry's aliases in [`point_of`]).
pub fn in_dim_axis_name(name: &str) -> &str {
    match name {
        "offset" => "m",
        "lane" => "laneid",
        "warp" => "warpid",
        "register" => "reg",
        "block" => "cta",
        other => other,
    }
}

/// The axis a linear layout's in-dim stands for; an error when its name is no identifier.
pub fn in_dim_axis(name: &str) -> Result<Axis> {
    Axis::new(in_dim_axis_name(name))
}

/// The physical point of named components (the module doc's definition): each component on
/// its canonical axis, components on one axis ADDED, the `cuda` relations substituted, zeros
/// dropped. Example: `[(register, 1), (reg, 1), (lane, 3), (warpid, 1)]` -> `{reg: 2, tx: 35}`.
pub fn point_of(components: impl IntoIterator<Item = (Axis, i64)>) -> Result<Point> {
    let reg = AxisRegistry::builtin();
    let mut sum = Point::new();
    for (a, v) in components {
        let slot = sum.entry(reg.resolve(&a)).or_insert(0);
        *slot = crate::arith::add(*slot, v, "physical point")?;
    }
    let mut q = reg.fuse_point("cuda", &sum)?;
    q.retain(|_, v| *v != 0);
    Ok(q)
}

/// [`point_of`] a point's own components (a raw evaluation, e.g. Axe's `{lane: 3, warp: 1}`).
pub fn normalize(p: &Point) -> Result<Point> {
    point_of(p.iter().map(|(a, v)| (a.clone(), *v)))
}

/// The physical point of a linear layout's input (one value per in-dim, in in-dim order):
/// [`point_of`] the in-dims named as axes.
/// Example: in-dims `(register, reg)` at `[1, 1]` -> `{reg: 2}`.
pub fn in_dim_point(f: &LinearLayout, input: &[i64]) -> Result<Point> {
    if input.len() != f.ins().len() {
        return Err(LayoutError::invalid(
            "linear input",
            format!("{} values for {} in-dims", input.len(), f.ins().len()),
        ));
    }
    let components = f
        .ins()
        .iter()
        .zip(input)
        .map(|(d, &v)| Ok((in_dim_axis(&d.name)?, v)))
        .collect::<Result<Vec<_>>>()?;
    point_of(components)
}

/// True when distinct inputs of `f` have distinct physical points ([`in_dim_point`] is
/// injective), checked conservatively: on every axis the in-dims' contributions (value times
/// the axis weight from the `cuda` relations) nest as a mixed radix. Then facts about the
/// input space (F2 ranks) are facts about the physical points.
pub fn in_dims_are_independent(f: &LinearLayout) -> Result<bool> {
    // Per axis: (weight of one unit, number of values) of each in-dim landing there.
    let mut per_axis: std::collections::BTreeMap<Axis, Vec<(i64, i64)>> = Default::default();
    for d in f.ins() {
        if d.bases.is_empty() {
            continue;
        }
        let unit = point_of([(in_dim_axis(&d.name)?, 1)])?;
        let count = 1i64
            .checked_shl(d.bases.len() as u32)
            .filter(|&n| n > 0)
            .ok_or_else(|| LayoutError::invalid(format!("in-dim {}", d.name), "too many bases"))?;
        for (a, w) in unit {
            per_axis.entry(a).or_default().push((w, count));
        }
    }
    for parts in per_axis.values_mut() {
        parts.sort();
        let mut reach = 1i64;
        for &(w, count) in parts.iter() {
            if w < reach {
                return Ok(false);
            }
            reach = w.checked_mul(count).unwrap_or(i64::MAX);
        }
    }
    Ok(true)
}

/// Enumerates the relation of `l` over logical shape `shape` (default: the layout's own).
pub fn relation(l: &Layout, logical_shape: Option<&[i64]>) -> Result<BTreeSet<Pair>> {
    let mut out = BTreeSet::new();
    let too_big = |n: i64| {
        LayoutError::invalid(
            "relation",
            format!("{n} pairs exceed the enumeration limit {MAX_PAIRS}"),
        )
    };
    match l {
        Layout::Tv(t) => {
            let n = t.layout().size();
            if n > MAX_PAIRS {
                return Err(too_big(n));
            }
            for th in 0..t.threads() {
                for v in 0..t.values() {
                    let p = point_of([(Axis::new("tx")?, th), (Axis::new("reg")?, v)])?;
                    out.insert((t.eval(th, v)?, p));
                }
            }
        }
        Layout::Linear(f) => {
            let n = 1i64
                .checked_shl(f.total_in_bits() as u32)
                .filter(|&n| n > 0 && n <= MAX_PAIRS)
                .ok_or_else(|| too_big(i64::MAX))?;
            let sizes: Vec<i64> = f.ins().iter().map(|d| 1i64 << d.bases.len()).collect();
            for x in 0..n {
                let input = shape::unflatten_row_major(&sizes, x)?;
                let cell = f.apply(&input)?;
                out.insert((cell, in_dim_point(f, &input)?));
            }
        }
        _ => {
            let default = l.default_shape();
            let s = logical_shape.unwrap_or(&default);
            let n = shape::size_of(s)?;
            // Each coordinate maps to up to `replica_count` points: bound the pairs, not
            // just the coordinates, before enumerating.
            let per = match l {
                Layout::Axe(a) => a.replica_count(),
                _ => 1,
            };
            let pairs = n.checked_mul(per).unwrap_or(i64::MAX);
            if pairs > MAX_PAIRS {
                return Err(too_big(pairs));
            }
            for x in 0..n {
                let c = shape::unflatten_row_major(s, x)?;
                for p in l.eval(Some(s), &c)? {
                    out.insert((c.clone(), normalize(&p)?));
                }
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ax(s: &str) -> Axis {
        Axis::new(s).unwrap()
    }

    fn lin(text: &str, shape: &[i64]) -> LinearLayout {
        crate::notation::linear::parse_attr(text, Some(shape)).unwrap()
    }

    #[test]
    fn point_of_adds_components_on_one_axis() {
        // The module doc's vector: register + reg on reg, lane + 32*warp on tx.
        let p = point_of([
            (ax("register"), 1),
            (ax("reg"), 1),
            (ax("laneid"), 3),
            (ax("warp"), 1),
        ])
        .unwrap();
        assert_eq!(p, [(ax("reg"), 2), (ax("tx"), 35)].into());
        // Order does not matter, and zeros vanish.
        let q = point_of([
            (ax("warp"), 1),
            (ax("laneid"), 3),
            (ax("reg"), 1),
            (ax("register"), 1),
            (ax("m"), 0),
        ])
        .unwrap();
        assert_eq!(p, q);
        assert!(point_of([(ax("m"), i64::MAX), (ax("offset"), 1)]).is_err());
    }

    #[test]
    fn in_dim_point_sums_aliased_in_dims_in_any_order() {
        // An empty in-dim (value 0) adds nothing; it used to overwrite the other in-dim.
        for (text, input) in [
            (
                "#ttg.linear<{register=[[1]], reg=[[2]], cta=[]}>",
                [1, 1, 0],
            ),
            (
                "#ttg.linear<{cta=[], reg=[[2]], register=[[1]]}>",
                [0, 1, 1],
            ),
        ] {
            let f = lin(text, &[4]);
            assert_eq!(
                in_dim_point(&f, &input).unwrap(),
                [(ax("reg"), 2)].into(),
                "{text}"
            );
        }
        let f = lin("#ttg.linear<{block=[[1]], cta=[]}>", &[2]);
        assert_eq!(in_dim_point(&f, &[1, 0]).unwrap(), [(ax("cta"), 1)].into());
        assert!(in_dim_point(&f, &[1]).is_err());
    }

    #[test]
    fn relation_of_aliased_in_dims_is_the_sum() {
        // register=[[1]], reg=[[3]]: (r, g) -> cell r^3g at reg r+g.
        let l = Layout::Linear(lin("#ttg.linear<{register=[[1]], reg=[[3]]}>", &[4]));
        let p = |v: i64| -> Point { point_of([(ax("reg"), v)]).unwrap() };
        let want: BTreeSet<Pair> = [
            (vec![0], p(0)),
            (vec![1], p(1)),
            (vec![3], p(1)),
            (vec![2], p(2)),
        ]
        .into();
        assert_eq!(relation(&l, None).unwrap(), want);
    }

    #[test]
    fn independence_detects_in_dims_sharing_an_axis() {
        let yes = |t: &str, s: &[i64]| in_dims_are_independent(&lin(t, s)).unwrap();
        assert!(yes(
            "#ttg.linear<{register=[[1]], lane=[[2]], warp=[[4]]}>",
            &[8]
        ));
        assert!(!yes("#ttg.linear<{register=[[1]], reg=[[2]]}>", &[4]));
        // lane (5 bits) and warp nest on tx; a 6-bit lane overlaps warp 1 at tx 32.
        let five = "#ttg.linear<{lane=[[1],[2],[4],[8],[16]], warp=[[32]]}>";
        assert!(yes(five, &[64]));
        let six = "#ttg.linear<{lane=[[1],[2],[4],[8],[16],[32]], warp=[[64]]}>";
        assert!(!yes(six, &[128]));
        // An empty in-dim shares nothing.
        assert!(yes("#ttg.linear<{register=[[1]], reg=[]}>", &[2]));
    }
}
