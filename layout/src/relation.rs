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
//! Step 3 merges points: `{laneid: 32}` and `{warpid: 1}` are both `{tx: 32}`. It is faithful
//! only where a layout's lanes span fewer than a CUDA warp's 32 values (and `wwid` fewer than a
//! warpgroup's 4), or it has no warp-level axis; [`check_fusion`] refuses the rest (a 64-lane
//! AMD wavefront with warps), layout by layout, and every decider's entry ([`relation`],
//! certify's forward forms) calls it.
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

pub mod preimage;

pub use preimage::{Budget, Preimages, MAX_LISTED, MAX_STEPS};

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

/// The values each unfused axis of a layout's physical points can take, as `(min, max)`, for
/// the axes the `cuda` relations fuse and `tx` (`laneid`, `warpid`, `wwid`, `wgid`; names resolved by
/// the registry's aliases and the linear in-dim names). Each component ranges independently
/// (an Axe iter over its digits, a replica over its copies, a linear in-dim over its values),
/// so the bounds are attained. An axis no component reaches is absent.
fn fused_axis_ranges(l: &Layout) -> Result<std::collections::BTreeMap<Axis, (i64, i64)>> {
    let reg = AxisRegistry::builtin();
    let watched = ["laneid", "warpid", "wwid", "wgid", "tx"];
    let mut ranges: std::collections::BTreeMap<Axis, (i64, i64)> = Default::default();
    let mut add = |axis: &Axis, lo: i64, hi: i64| -> Result<()> {
        let a = reg.resolve(axis);
        if !watched.contains(&a.as_str()) || (lo == 0 && hi == 0) {
            return Ok(());
        }
        let slot = ranges.entry(a).or_insert((0, 0));
        slot.0 = crate::arith::add(slot.0, lo, "lane range")?;
        slot.1 = crate::arith::add(slot.1, hi, "lane range")?;
        Ok(())
    };
    match l {
        Layout::Axe(x) => {
            for it in x.shard().iter().chain(x.replica()) {
                let reach = crate::arith::mul(it.extent - 1, it.stride, "lane range")?;
                add(&it.axis, reach.min(0), reach.max(0))?;
            }
            for (a, &v) in x.offset() {
                add(a, v, v)?;
            }
        }
        Layout::Linear(f) => {
            for d in f.ins() {
                let top = 1i64
                    .checked_shl(d.bases.len() as u32)
                    .filter(|&n| n > 0)
                    .ok_or(LayoutError::Overflow { op: "lane range" })?;
                add(&in_dim_axis(&d.name)?, 0, top - 1)?;
            }
        }
        Layout::Tv(t) => add(&Axis::new("tx")?, 0, t.threads() - 1)?,
        // CuTe and swizzled layouts are on `m`.
        Layout::Cute(_) | Layout::Swizzled(_) => {}
    }
    Ok(ranges)
}

/// The thread axes (`laneid`, `warpid`, `wwid`, `wgid`, `tx`) some component of `l` reaches,
/// by their canonical names.
pub fn thread_axes(l: &Layout) -> Result<BTreeSet<String>> {
    Ok(fused_axis_ranges(l)?
        .into_keys()
        .map(|a| a.as_str().to_string())
        .collect())
}

/// The lane values `l`'s physical points reach, as `(min, max)`, or `None` where no component
/// is on `laneid` (by its canonical name; the bounds are attained, see [`thread_axes`]).
pub fn lane_range(l: &Layout) -> Result<Option<(i64, i64)>> {
    Ok(fused_axis_ranges(l)?
        .into_iter()
        .find(|(a, _)| a.as_str() == "laneid")
        .map(|(_, r)| r))
}

/// Checks, for each of `layouts` on its own, that the `cuda` relations (`tx = laneid +
/// 32*warpid`, `warpid = wwid + 4*wgid`) keep its physical points apart: its fusion is then
/// faithful, and comparing or counting its fused points is comparing or counting the points
/// themselves. Each layout is checked alone, so whether a layout's fused points stand for it
/// never depends on the layout it is compared with (a claim's verdicts then chain).
///
/// The fusion merges `{laneid: 32}` with `{warpid: 1}`: two points merge only where their lanes
/// differ by a multiple of 32, so it is faithful when the layout's lane values span fewer than
/// 32 (a CUDA warp's `0..32`), or when it has no warp-level component at all (then `tx` is the
/// lane). A 64-lane AMD wavefront with warps (`threadsPerWarp = [64]`, `warpsPerCTA = [2]`)
/// breaks it: lane 32 of warp 0 would be counted as lane 0 of warp 1. The same holds one level
/// up for `wwid` in `0..4` and `wgid`. Such a layout is refused, naming the lane range, rather
/// than decided on merged points (certify compares a layout on lanes and warps only lane by
/// lane and warp by warp instead, before it gets here).
///
/// ```
/// use layout::{relation::check_fusion, Layout};
/// let wave64 = Layout::parse("S[(2,64):(1@warpid,1@laneid)]", None).unwrap();
/// let warp32 = Layout::parse("S[(2,32):(1@warpid,1@laneid)]", None).unwrap();
/// assert!(check_fusion(&[&warp32]).is_ok());
/// assert!(check_fusion(&[&wave64]).is_err());
/// // A 64-lane layout without warps is fine, alone or beside one with warps.
/// let lanes64 = Layout::parse("S[64:1@laneid]", None).unwrap();
/// assert!(check_fusion(&[&lanes64]).is_ok());
/// assert!(check_fusion(&[&lanes64, &warp32]).is_ok());
/// ```
pub fn check_fusion(layouts: &[&Layout]) -> Result<()> {
    layouts.iter().try_for_each(|l| check_fusion_of(l))
}

fn check_fusion_of(l: &Layout) -> Result<()> {
    let ranges = fused_axis_ranges(l)?;
    let uses = |name: &str| ranges.keys().any(|a| a.as_str() == name);
    // The values an axis takes: two points merge only if their values on it differ by a whole
    // warp (32 lanes) or group (4 warps), so a narrower span keeps them apart.
    let span = |name: &str| {
        ranges
            .iter()
            .find(|(a, _)| a.as_str() == name)
            .map(|(_, &range)| range)
    };
    let warp_level = uses("warpid") || uses("wwid") || uses("wgid");
    match span("laneid") {
        Some((lo, hi)) if warp_level && hi.saturating_sub(lo) >= 32 => {
            return Err(LayoutError::invalid(
                "thread fusion",
                format!(
                    "lane values reach {lo}..{hi}, more than a CUDA warp's 32, in a layout with \
                     warp-level axes: laycert fuses threads as tx = laneid + 32*warpid, which \
                     would make lane {} of warp 0 the same thread as lane {} of warp 1; a \
                     64-lane wavefront's layouts compare as lanes and warps of their own with \
                     `--axes laneid=lane64,warpid=wave64`, which the fusion leaves apart",
                    lo + 32,
                    lo
                ),
            ))
        }
        _ => {}
    }
    match span("wwid") {
        Some((lo, hi)) if uses("wgid") && hi.saturating_sub(lo) >= 4 => {
            return Err(LayoutError::invalid(
                "thread fusion",
                format!(
                    "warp-in-group values reach {lo}..{hi}, more than a warpgroup's 4, in a \
                     layout with warpgroups: laycert fuses warpid = wwid + 4*wgid, which would \
                     make warp {} of group 0 warp {lo} of group 1",
                    lo + 4
                ),
            ))
        }
        _ => {}
    }
    Ok(())
}

/// The sum of two physical points, axis by axis, zeros dropped (checked arithmetic).
/// [`point_of`] is additive: the point of components `A` then `B` is the sum of the point of
/// `A` and the point of `B` (the registry's relations are linear), so the points of an Axe
/// layout at `x` are the point of `D(x) + O` plus each replica vector's point.
/// Example: `{reg: 1, tx: 3} + {tx: -3}` = `{reg: 1}`.
pub fn sum(a: &Point, b: &Point) -> Result<Point> {
    let mut out = a.clone();
    for (axis, v) in b {
        let slot = out.entry(axis.clone()).or_insert(0);
        *slot = crate::arith::add(*slot, *v, "physical point")?;
    }
    out.retain(|_, v| *v != 0);
    Ok(out)
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

/// A TV or linear layout read backwards, input by input ([`Preimages`] finds the inputs
/// holding one cell without reading the others). Inputs are numbered: a TV layout's
/// `(thread, value)` is input `thread * values + value`; a linear layout's inputs are the
/// values of its in-dims, row-major in in-dim order. Input `i` holds one cell
/// ([`Inputs::cell`], a logical coordinate) at one physical point ([`Inputs::point`]); the
/// relation is the set of those pairs over every input.
///
/// Example: `#ttg.linear<{register=[[1]], lane=[[2]]}>` over (4) has inputs
/// `(register, lane)` = (0,0), (0,1), (1,0), (1,1): input 1 holds cell (2) at `{tx: 1}`.
#[derive(Clone, Debug)]
pub enum Inputs<'l> {
    /// A TV layout's `(thread, value)` pairs, with its number of threads and of values.
    Tv(&'l crate::cute::TvLayout, i64, i64),
    /// A linear layout's in-dim values, with the size of each in-dim.
    Linear(&'l LinearLayout, Vec<i64>),
}

impl<'l> Inputs<'l> {
    /// The inputs of a TV or linear layout; `None` for the notations read forwards.
    pub fn of(l: &'l Layout) -> Option<Inputs<'l>> {
        match l {
            Layout::Tv(t) => Some(Inputs::Tv(t, t.threads(), t.values())),
            Layout::Linear(f) => Some(Inputs::Linear(
                f,
                f.ins()
                    .iter()
                    .map(|d| 1i64.checked_shl(d.bases.len() as u32).unwrap_or(0))
                    .collect(),
            )),
            _ => None,
        }
    }

    /// Number of inputs; `None` when it exceeds i64 (a linear layout of 63 or more in-bits).
    pub fn count(&self) -> Option<i64> {
        match self {
            Inputs::Tv(_, threads, values) => threads.checked_mul(*values),
            Inputs::Linear(f, _) => 1i64
                .checked_shl(f.total_in_bits() as u32)
                .filter(|&n| n > 0),
        }
    }

    /// The number of inputs as text: the count, or `2^bits` past i64.
    pub fn count_text(&self) -> String {
        match (self.count(), self) {
            (Some(n), _) => n.to_string(),
            (None, Inputs::Linear(f, _)) => format!("2^{}", f.total_in_bits()),
            (None, Inputs::Tv(_, threads, values)) => format!("{threads} x {values}"),
        }
    }

    /// Checks that `i` numbers an input.
    fn check(&self, i: i64) -> Result<()> {
        shape::check_index(i, self.count().unwrap_or(i64::MAX))
    }

    /// The components of input `i`: TV `[thread, value]`, linear one value per in-dim.
    pub fn components(&self, i: i64) -> Result<Vec<i64>> {
        self.check(i)?;
        match self {
            Inputs::Tv(_, _, values) => Ok(vec![i / values, i % values]),
            Inputs::Linear(_, sizes) => shape::unflatten_row_major(sizes, i),
        }
    }

    /// The cell (logical coordinate) input `i` holds.
    pub fn cell(&self, i: i64) -> Result<Vec<i64>> {
        self.cell_of_input(&self.components(i)?)
    }

    /// The physical point of input `i` ([`point_of`] its components).
    pub fn point(&self, i: i64) -> Result<Point> {
        self.point_of_input(&self.components(i)?)
    }

    /// The cell the input with these [`Inputs::components`] holds (the notation's evaluation).
    pub fn cell_of_input(&self, input: &[i64]) -> Result<Vec<i64>> {
        match self {
            Inputs::Tv(t, _, _) => match input {
                &[thread, value] => t.eval(thread, value),
                _ => Err(LayoutError::Coordinate {
                    coord: input.to_vec(),
                    why: "a TV layout's input is (thread, value)".into(),
                }),
            },
            Inputs::Linear(f, _) => f.apply(input),
        }
    }

    /// The physical point of the input with these [`Inputs::components`] ([`point_of`] them).
    pub fn point_of_input(&self, input: &[i64]) -> Result<Point> {
        match self {
            Inputs::Tv(t, _, _) => {
                let &[thread, value] = input else {
                    return Err(LayoutError::Coordinate {
                        coord: input.to_vec(),
                        why: "a TV layout's input is (thread, value)".into(),
                    });
                };
                shape::check_index(thread, t.threads())?;
                shape::check_index(value, t.values())?;
                point_of([(Axis::new("tx")?, thread), (Axis::new("reg")?, value)])
            }
            Inputs::Linear(f, sizes) => {
                shape::flatten_row_major(sizes, input)?;
                in_dim_point(f, input)
            }
        }
    }
}

/// The physical points a TV or linear layout relates to logical `coord`: the inputs holding
/// `coord` found by [`Preimages`] (certified complete, each evaluated forwards), within
/// [`MAX_LISTED`] inputs and [`MAX_STEPS`] search steps, else [`LayoutError::Undecided`].
/// Nothing else is held.
pub fn points_at(inputs: &Inputs, coord: &[i64]) -> Result<BTreeSet<Point>> {
    let mut budget = Budget::default();
    Preimages::new(inputs)?
        .holding(coord, &mut budget)?
        .iter()
        .map(|x| inputs.point_of_input(x))
        .collect()
}

/// Enumerates the relation of `l` over logical shape `shape` (default: the layout's own).
pub fn relation(l: &Layout, logical_shape: Option<&[i64]>) -> Result<BTreeSet<Pair>> {
    check_fusion(&[l])?;
    let mut out = BTreeSet::new();
    let too_big = |n: String| {
        LayoutError::invalid(
            "relation",
            format!("{n} pairs exceed the enumeration limit {MAX_PAIRS}"),
        )
    };
    if let Some(inputs) = Inputs::of(l) {
        // One pair per input (fewer once duplicates are merged).
        let n = inputs
            .count()
            .filter(|&n| n <= MAX_PAIRS)
            .ok_or_else(|| too_big(inputs.count_text()))?;
        for i in 0..n {
            out.insert((inputs.cell(i)?, inputs.point(i)?));
        }
        return Ok(out);
    }
    let default = l.default_shape();
    let s = logical_shape.unwrap_or(&default);
    let n = shape::size_of(s)?;
    // Each coordinate maps to up to `replica_count` points: bound the pairs, not just the
    // coordinates, before enumerating.
    let per = match l {
        Layout::Axe(a) => a.replica_count(),
        _ => 1,
    };
    let pairs = n.checked_mul(per);
    if pairs.is_none_or(|p| p > MAX_PAIRS) {
        return Err(too_big(
            pairs.map_or_else(|| format!("{n} x {per}"), |p| p.to_string()),
        ));
    }
    // An Axe layout's replica set is computed once, not at every coordinate.
    let replicas = match l {
        Layout::Axe(a) => {
            a.check_shape(s)?;
            Some((a, a.replica_set()?))
        }
        _ => None,
    };
    for x in 0..n {
        let c = shape::unflatten_row_major(s, x)?;
        let points = match &replicas {
            Some((a, r)) => a.eval_flat_with(x, r)?,
            None => l.eval(Some(s), &c)?,
        };
        for p in points {
            out.insert((c.clone(), normalize(&p)?));
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
    fn point_of_is_additive() {
        // The property `sum` documents, on components with aliases and the cuda relations.
        let parts: Vec<Vec<(Axis, i64)>> = vec![
            vec![(ax("laneid"), 3), (ax("warp"), 1)],
            vec![(ax("tx"), -35), (ax("register"), 2)],
            vec![(ax("lane"), 31), (ax("warpid"), -1), (ax("reg"), -2)],
            vec![(ax("m"), 7), (ax("offset"), -7)],
            vec![(ax("wwid"), 1), (ax("wgid"), 1), (ax("cta"), 2)],
            vec![],
        ];
        for a in &parts {
            for b in &parts {
                let whole = point_of(a.iter().chain(b).cloned()).unwrap();
                let (pa, pb) = (point_of(a.clone()).unwrap(), point_of(b.clone()).unwrap());
                assert_eq!(sum(&pa, &pb).unwrap(), whole, "{a:?} + {b:?}");
            }
        }
        let tx = [(ax("tx"), 3)].into();
        assert_eq!(
            sum(
                &[(ax("reg"), 1), (ax("tx"), 3)].into(),
                &[(ax("tx"), -3)].into()
            )
            .unwrap(),
            [(ax("reg"), 1)].into()
        );
        assert!(sum(&[(ax("tx"), i64::MAX)].into(), &tx).is_err());
    }

    #[test]
    fn inputs_number_cells_and_points() {
        // The doc's example: input 1 of (register, lane) is register 0, lane 1.
        let l = Layout::Linear(lin("#ttg.linear<{register=[[1]], lane=[[2]]}>", &[4]));
        let inputs = Inputs::of(&l).unwrap();
        assert_eq!(inputs.count(), Some(4));
        assert_eq!(inputs.cell(1).unwrap(), vec![2]);
        assert_eq!(inputs.point(1).unwrap(), [(ax("tx"), 1)].into());
        assert!(inputs.cell(4).is_err() && inputs.point(-1).is_err());
        // A TV layout: input thread * values + value.
        let t = Layout::parse("(128,4096):(0,1) -> (4096)", None).unwrap();
        let inputs = Inputs::of(&t).unwrap();
        assert_eq!(inputs.count(), Some(1 << 19));
        assert_eq!(inputs.cell(4096 * 5 + 7).unwrap(), vec![7]);
        assert_eq!(
            inputs.point(4096 * 5 + 7).unwrap(),
            [(ax("reg"), 7), (ax("tx"), 5)].into()
        );
        assert!(Inputs::of(&Layout::parse("S[4:1]", None).unwrap()).is_none());
    }

    #[test]
    fn points_at_reads_every_input_holding_the_coordinate() {
        // 128 threads hold every value: the points at (7) are (tx t, reg 7) for every t,
        // although the relation (2^19 pairs) is past what `relation` enumerates.
        let t = Layout::parse("(128,4096):(0,1) -> (4096)", None).unwrap();
        let inputs = Inputs::of(&t).unwrap();
        let want: BTreeSet<Point> = (0..128)
            .map(|th| point_of([(ax("tx"), th), (ax("reg"), 7)]).unwrap())
            .collect();
        assert_eq!(points_at(&inputs, &[7]).unwrap(), want);
        let e = relation(&t, None).unwrap_err().to_string();
        assert!(
            e.contains("524288 pairs exceed the enumeration limit 262144"),
            "{e}"
        );
        // On a small layout, points_at is the relation filtered.
        let l = Layout::Linear(lin("#ttg.linear<{register=[[1]], reg=[[3]]}>", &[4]));
        let pairs = relation(&l, None).unwrap();
        for c in 0..4 {
            let want: BTreeSet<Point> = pairs
                .iter()
                .filter(|(x, _)| x == &vec![c])
                .map(|(_, p)| p.clone())
                .collect();
            assert_eq!(points_at(&Inputs::of(&l).unwrap(), &[c]).unwrap(), want);
        }
    }

    #[test]
    fn input_counts_are_exact_or_named_past_i64() {
        let zeros = |bits: usize| vec!["[0]"; bits].join(", ");
        // 25 broadcast bits: 2^25 inputs, past MAX_INPUTS: undecided, not an error of the input.
        let f = lin(&format!("#ttg.linear<{{register=[{}]}}>", zeros(25)), &[1]);
        let l = Layout::Linear(f);
        let inputs = Inputs::of(&l).unwrap();
        assert_eq!(inputs.count(), Some(1 << 25));
        assert!(matches!(
            points_at(&inputs, &[0]),
            Err(LayoutError::Undecided { .. })
        ));
        let e = relation(&l, None).unwrap_err().to_string();
        assert!(e.contains("33554432 pairs exceed"), "{e}");
        // 70 bits: no i64 count; the text says 2^70, never a saturated number.
        let f = lin(
            &format!(
                "#ttg.linear<{{register=[{}], lane=[{}]}}>",
                zeros(40),
                zeros(30)
            ),
            &[1],
        );
        let l = Layout::Linear(f);
        let inputs = Inputs::of(&l).unwrap();
        assert_eq!(inputs.count(), None);
        assert_eq!(inputs.count_text(), "2^70");
        let e = relation(&l, None).unwrap_err().to_string();
        assert!(e.contains("2^70 pairs exceed"), "{e}");
        assert!(points_at(&inputs, &[0]).is_err());
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
