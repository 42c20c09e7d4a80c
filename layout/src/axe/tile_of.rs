//! Recognizing a tile (paper appendix D): given `L` over its full shape and the inner atom `B`
//! over its shape, decide whether `L = tile(B, C)` for some outer `C` and return `C`; and the
//! dual, given the outer `C`, recover the inner `B`.
//!
//! In `tile(B, C)` each dim `k` of extent `SC_k*SB_k` is C's block (scaled by `span(B)`)
//! followed by B's block, so `L` groups by the interleaved shape `[SC_0, SB_0, SC_1, SB_1, ..]`
//! (fusing first, grouping never depends on how `L` was written); where it does not, by the
//! tile's runs only (parts of extent 1 dropped, adjacent parts of one factor merged), the only
//! boundaries a tile's map has. Normalized shards are unique
//! for a map (paper A.8), so each `SB_k` part of `L` must normalize to B's block `k`, and each
//! `SC_k` part must have every stride `s@a` divisible by `span_a(B)`; dividing gives C's block.
//! Replicas and offsets work on canonical forms: `R_L = scaled(R_C) ∪ R_B` as multisets and
//! `O_C = (O_L - O_B) / span(B)`. Given the outer instead, `span_a(L) = span_a(B)*span_a(C)`
//! gives the scale. Every answer is checked by building the tile and comparing canonical forms
//! (and replica sets where GC fails), so a returned layout is always right; a "no" names the
//! block and iter at fault.
//!
//! Worked example (paper F.4, a test checks it): `L = S[16:1]` over `[4,4]` with inner
//! `S[(2,2):(4,1)]` over `[2,2]`: L groups by `[2,2,2,2]` as `(2:8, 2:4, 2:2, 2:1)`; the inner
//! parts `2:4`, `2:1` match, but `span_m(B) = 6` does not divide the outer stride 8: not a tile.

use std::collections::{BTreeMap, BTreeSet};

use super::canonicalize::{canonicalize, normalize_shard, Canonical};
use super::span::{span, span_at, span_vector};
use super::tile::{add_offset, same_rank, scale_iters, scale_offset};
use super::{group, tile, AxeLayout, Grouped, Iter};
use crate::arith;
use crate::axis::{Axis, Point};
use crate::error::{LayoutError, Result};
use crate::notation::axe::print;

/// Given `L` over `shape` and the inner atom over `inner_shape`, the outer `C` with
/// `L = tile(inner, C)`, or [`LayoutError::NotATile`] naming the block and iter at fault.
///
/// ```
/// use layout::{axe, notation::axe::{parse, print}};
/// let c = axe::tile_of(&parse("S[(8,2,32):(64,1,2)]")?, &[16, 32],
///                      &parse("S[(2,4):(1,2)]")?, &[2, 4])?;
/// assert_eq!(print(&c), "S[(8,8):(8,1)]");
/// let no = axe::tile_of(&parse("S[16:1]")?, &[4, 4], &parse("S[(2,2):(4,1)]")?, &[2, 2]);
/// assert!(no.unwrap_err().to_string().starts_with("not a tile: block 0"));
/// # Ok::<(), layout::LayoutError>(())
/// ```
pub fn tile_of(
    l: &AxeLayout,
    shape: &[i64],
    inner: &AxeLayout,
    inner_shape: &[i64],
) -> Result<AxeLayout> {
    let outer_shape = quotient_shape(shape, inner_shape, "inner")?;
    inner.check_shape(inner_shape)?;
    let cl = canonicalize(l)?;
    let cb = canonicalize(inner)?.layout;
    let spans = span_vector(inner)?;
    let (parts, inner_used, _) = parts(&cl.layout, shape, &outer_shape, inner_shape)?;
    let gb = group(&cb, &inner_used)?;
    let mut shard = Vec::new();
    for (is_inner, k, block) in &parts {
        if *is_inner {
            same_block(*k, block, gb.block(*k), "inner", not_a_tile)?;
        } else {
            for it in normalize_shard(block)? {
                shard.push(descale(*k, &it, &spans)?);
            }
        }
    }
    let rest = multiset_minus(cl.layout.replica(), cb.replica(), "inner", not_a_tile)?;
    let replica = rest
        .iter()
        .map(|it| descale_replica(it, &spans))
        .collect::<Result<_>>()?;
    let mut offset = BTreeMap::new();
    for a in cl.layout.axes().into_iter().chain(cb.axes()) {
        let diff = arith::sub(offset_at(&cl.layout, &a), offset_at(&cb, &a), "offset")?;
        let s = span_at(&spans, &a);
        if diff % s != 0 {
            return Err(not_a_tile(format!(
                "offset: L's offset minus the inner's on axis {a} is {diff}, not a multiple of \
                 span_{a}(inner) = {s}"
            )));
        }
        offset.insert(a, diff / s);
    }
    let outer = AxeLayout::new(shard, replica, offset)?;
    confirm(
        &cl,
        &tile(inner, &outer, inner_shape, &outer_shape)?,
        not_a_tile,
    )?;
    Ok(outer)
}

/// Given `L` over `shape` and the outer `C` over `outer_shape`, the inner `B` with
/// `L = tile(B, outer)`, or [`LayoutError::NotATile`] naming the block and iter at fault.
///
/// ```
/// use layout::{axe, notation::axe::{parse, print}};
/// let b = axe::tile_of_given_outer(&parse("S[(8,2,32):(64,1,2)]")?, &[16, 32],
///                                  &parse("S[(8,8):(8,1)]")?, &[8, 8])?;
/// assert_eq!(print(&b), "S[(2,4):(1,2)]");
/// # Ok::<(), layout::LayoutError>(())
/// ```
pub fn tile_of_given_outer(
    l: &AxeLayout,
    shape: &[i64],
    outer: &AxeLayout,
    outer_shape: &[i64],
) -> Result<AxeLayout> {
    let inner_shape = quotient_shape(shape, outer_shape, "outer")?;
    outer.check_shape(outer_shape)?;
    let cl = canonicalize(l)?;
    let cc = canonicalize(outer)?.layout;
    // span_a(tile(B, C)) = span_a(B) * span_a(C) on every axis.
    let mut spans = BTreeMap::new();
    for a in cc.axes() {
        let (sl, sc) = (span(&cl.layout, &a)?, span(&cc, &a)?);
        if sl % sc != 0 {
            return Err(not_a_tile(format!(
                "axis {a}: span_{a}(L) = {sl} is not a multiple of span_{a}(outer) = {sc}"
            )));
        }
        spans.insert(a, sl / sc);
    }
    let (parts, _, outer_used) = parts(&cl.layout, shape, outer_shape, &inner_shape)?;
    let gc = group(&cc, &outer_used)?;
    let mut shard = Vec::new();
    for (is_inner, k, block) in &parts {
        if *is_inner {
            shard.extend(block.iter().cloned());
        } else {
            let scaled = scale_iters(gc.block(*k), &spans)?;
            same_block(*k, block, &scaled, "scaled outer", not_a_tile)?;
        }
    }
    let scaled_r = scale_iters(cc.replica(), &spans)?;
    let replica = multiset_minus(cl.layout.replica(), &scaled_r, "scaled outer", not_a_tile)?;
    let mut offset = cl.layout.offset().clone();
    let scaled_o = scale_offset(cc.offset(), &spans)?;
    add_offset(&mut offset, &negate(&scaled_o)?)?;
    let inner = AxeLayout::new(shard, replica, offset)?;
    confirm(
        &cl,
        &tile(&inner, outer, &inner_shape, outer_shape)?,
        not_a_tile,
    )?;
    Ok(inner)
}

fn not_a_tile(reason: String) -> LayoutError {
    LayoutError::NotATile { reason }
}

/// `shape / part` dim by dim, when it divides.
pub(crate) fn quotient_shape(shape: &[i64], part: &[i64], name: &str) -> Result<Vec<i64>> {
    same_rank(part, shape)?;
    crate::shape::size_of(part)?;
    shape
        .iter()
        .zip(part)
        .enumerate()
        .map(|(k, (&n, &p))| {
            if n % p == 0 {
                Ok(n / p)
            } else {
                Err(LayoutError::Shape {
                    shape: shape.to_vec(),
                    why: format!(
                        "dimension {k} (extent {n}) is not a multiple of the {name} extent {p}"
                    ),
                })
            }
        })
        .collect()
}

/// `l` grouped by `[outer_0, inner_0, outer_1, inner_1, ..]`: block `2k` is dim `k`'s outer
/// part, block `2k+1` its inner part.
pub(crate) fn interleaved(
    l: &AxeLayout,
    shape: &[i64],
    outer_shape: &[i64],
    inner_shape: &[i64],
    no: fn(String) -> LayoutError,
) -> Result<Grouped> {
    l.check_shape(shape)?;
    let domain: Vec<i64> = outer_shape
        .iter()
        .zip(inner_shape)
        .flat_map(|(&a, &b)| [a, b])
        .collect();
    group(l, &domain).map_err(|e| {
        no(format!(
            "L does not group by the interleaved shape {domain:?} (outer, inner per dim): {e}"
        ))
    })
}

/// The parts of `l` in its digit order, each `(inner?, index in its factor's grouping, iters)`,
/// and the shapes the inner and outer factors are grouped by. By the interleaved shape when `l`
/// groups by it (index `k` per dim); else by the tile's runs (`runs` in `tile.rs`: parts of
/// extent 1 dropped, adjacent parts of one factor merged), the only boundaries the tile's map
/// has: outer `[3,4,1]` with inner `[1,1,2]` needs `l` grouped by `[12, 2]` only.
#[allow(clippy::type_complexity)]
fn parts(
    l: &AxeLayout,
    shape: &[i64],
    outer_shape: &[i64],
    inner_shape: &[i64],
) -> Result<(Vec<(bool, usize, Vec<Iter>)>, Vec<i64>, Vec<i64>)> {
    let first = match interleaved(l, shape, outer_shape, inner_shape, not_a_tile) {
        Ok(g) => {
            let parts = (0..shape.len())
                .flat_map(|k| {
                    [
                        (false, k, g.block(2 * k).to_vec()),
                        (true, k, g.block(2 * k + 1).to_vec()),
                    ]
                })
                .collect();
            return Ok((parts, inner_shape.to_vec(), outer_shape.to_vec()));
        }
        Err(e) => e,
    };
    let runs = super::tile::runs(inner_shape, outer_shape);
    let mut extents: Vec<i64> = runs.iter().map(|r| r.1).collect();
    if extents.is_empty() {
        extents.push(1);
    }
    let Ok(g) = group(l, &extents) else {
        return Err(first);
    };
    let parts = super::tile::run_slots(&runs)
        .into_iter()
        .enumerate()
        .map(|(j, (is_inner, k))| (is_inner, k, g.block(j).to_vec()))
        .collect();
    Ok((
        parts,
        super::tile::run_shape(&runs, true),
        super::tile::run_shape(&runs, false),
    ))
}

/// Checks that two iter lists have the same map (their normalized forms are equal).
pub(crate) fn same_block(
    k: usize,
    found: &[Iter],
    expected: &[Iter],
    part: &str,
    no: fn(String) -> LayoutError,
) -> Result<()> {
    let (f, e) = (normalize_shard(found)?, normalize_shard(expected)?);
    if f == e {
        return Ok(());
    }
    let j = f.iter().zip(&e).take_while(|(x, y)| x == y).count();
    Err(no(format!(
        "block {k}: L's {part} part is {} but the {part} block is {} (they differ at iter {j})",
        iters_text(&f),
        iters_text(&e)
    )))
}

/// An iter of C's block `k` scaled by `span(B)`, divided back.
fn descale(k: usize, it: &Iter, spans: &BTreeMap<Axis, i64>) -> Result<Iter> {
    let s = span_at(spans, &it.axis);
    if it.stride % s != 0 {
        return Err(not_a_tile(format!(
            "block {k}, outer iter {}: stride {} is not a multiple of span_{}(inner) = {s}",
            iter_text(it),
            it.stride,
            it.axis
        )));
    }
    Ok(Iter::new(it.extent, it.stride / s, it.axis.clone()))
}

fn descale_replica(it: &Iter, spans: &BTreeMap<Axis, i64>) -> Result<Iter> {
    let s = span_at(spans, &it.axis);
    if it.stride % s != 0 {
        return Err(not_a_tile(format!(
            "replica iter {}: stride {} is not a multiple of span_{}(inner) = {s}",
            iter_text(it),
            it.stride,
            it.axis
        )));
    }
    Ok(Iter::new(it.extent, it.stride / s, it.axis.clone()))
}

/// `all - part` as multisets of iters; every iter of `part` must occur in `all`.
pub(crate) fn multiset_minus(
    all: &[Iter],
    part: &[Iter],
    name: &str,
    no: fn(String) -> LayoutError,
) -> Result<Vec<Iter>> {
    let mut rest = all.to_vec();
    for it in part {
        if let Some(i) = rest.iter().position(|x| x == it) {
            rest.remove(i);
            continue;
        }
        // C2 may have fused `it` with another iter into one run `(E, s)`; split the run back
        // and take `it` (the check by rebuilding confirms the choice).
        let split = rest
            .iter()
            .enumerate()
            .find_map(|(i, x)| (x.axis == it.axis).then(|| unmerge(x, it).map(|y| (i, y)))?);
        match split {
            Some((i, left)) => rest[i] = left,
            None => {
                return Err(no(format!(
                    "replica: the {name} replica iter {} is not in L's canonical replica {}",
                    iter_text(it),
                    iters_text(all)
                )))
            }
        }
    }
    Ok(rest)
}

/// The iter `y` with `C2(it, y) = run`, if any: `(e, s)` with `(e2, k*s)`, `1 <= k <= e`, fuse
/// to `(e + k*(e2-1), s)`; `it` may be either of the two.
fn unmerge(run: &Iter, it: &Iter) -> Option<Iter> {
    let (big, s, e) = (run.extent, run.stride, it.extent);
    if big <= e || s <= 0 || it.stride % s != 0 {
        return None;
    }
    let k = it.stride / s;
    if k == 1 {
        // `it` is the base: the other is `(e2, k*s)` with `big = e + k*(e2-1)`, largest k first.
        let k = (1..=e).rev().find(|k| (big - e) % k == 0)?;
        return Some(Iter::new(
            (big - e) / k + 1,
            k.checked_mul(s)?,
            run.axis.clone(),
        ));
    }
    // `it` is the multiple: the base is `(e1, s)` with `big = e1 + k*(e-1)`, `k <= e1`.
    let e1 = big.checked_sub(k.checked_mul(e - 1)?)?;
    (e1 >= k).then(|| Iter::new(e1, s, run.axis.clone()))
}

/// `-o` axis by axis.
pub(crate) fn negate(o: &BTreeMap<Axis, i64>) -> Result<BTreeMap<Axis, i64>> {
    o.iter()
        .map(|(a, &v)| Ok((a.clone(), arith::sub(0, v, "offset")?)))
        .collect()
}

fn offset_at(l: &AxeLayout, a: &Axis) -> i64 {
    l.offset().get(a).copied().unwrap_or(0)
}

/// Checks that the rebuilt layout has the same map as canonical `cl`: equal canonical forms,
/// or (where GC fails) equal shard and offset and equal replica sets.
pub(crate) fn confirm(
    cl: &Canonical,
    rebuilt: &AxeLayout,
    no: fn(String) -> LayoutError,
) -> Result<()> {
    let cr = canonicalize(rebuilt)?;
    if cr.layout == cl.layout {
        return Ok(());
    }
    let sets_agree = || -> Result<bool> {
        let nonzero = |s: BTreeSet<Point>| -> BTreeSet<Point> {
            s.into_iter()
                .map(|mut p| {
                    p.retain(|_, v| *v != 0);
                    p
                })
                .collect()
        };
        Ok(nonzero(cr.layout.replica_set()?) == nonzero(cl.layout.replica_set()?))
    };
    let gc_fails = !cr.gc_holds() || !cl.gc_holds();
    if gc_fails
        && cr.layout.shard() == cl.layout.shard()
        && cr.layout.offset() == cl.layout.offset()
        && sets_agree()?
    {
        return Ok(());
    }
    Err(no(format!(
        "replica: rebuilding gives {} but L is {}",
        print(&cr.layout),
        print(&cl.layout)
    )))
}

fn iter_text(it: &Iter) -> String {
    if it.axis.is_m() {
        format!("{}:{}", it.extent, it.stride)
    } else {
        format!("{}:{}@{}", it.extent, it.stride, it.axis)
    }
}

fn iters_text(its: &[Iter]) -> String {
    let body: Vec<String> = its.iter().map(iter_text).collect();
    format!("({})", body.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notation::axe::parse;

    #[test]
    fn tile_of_recovers_the_spec_outer() {
        let l = parse("S[(8,8,1,8,4,2):(16,4@laneid,2,2,1@laneid,1)]").unwrap();
        let b = parse("S[(8,1,4,2):(4@laneid,2,1@laneid,1)]").unwrap();
        let c = tile_of(&l, &[64, 64], &b, &[8, 8]).unwrap();
        assert_eq!(print(&c), "S[(8,8):(8,1)]");
        let b2 = tile_of_given_outer(&l, &[64, 64], &c, &[8, 8]).unwrap();
        assert_eq!(print(&b2), "S[(8,4,2):(4@laneid,1@laneid,1)]");
    }

    #[test]
    fn paper_f4_direct_sum_is_not_a_tile() {
        let l = parse("S[16:1]").unwrap();
        let b = parse("S[(2,2):(4,1)]").unwrap();
        let e = tile_of(&l, &[4, 4], &b, &[2, 2]).unwrap_err();
        let LayoutError::NotATile { reason } = e else {
            panic!("expected NotATile, got {e}")
        };
        assert!(
            reason.contains("block 0") && reason.contains("2:8"),
            "{reason}"
        );
    }

    #[test]
    fn mismatched_inner_part_names_the_block() {
        let l = parse("S[(4,4):(4,1)]").unwrap();
        let e = tile_of(&l, &[4, 4], &parse("S[(2,2):(1,2)]").unwrap(), &[2, 2])
            .unwrap_err()
            .to_string();
        assert!(e.contains("block 0: L's inner part"), "{e}");
    }

    #[test]
    fn tile_of_recovers_replica_and_offset() {
        let b = parse("S[2:1] + R[2:2@laneid] + 1@laneid").unwrap();
        let c = parse("S[3:1] + R[2:1@laneid] + 1 + 2@laneid").unwrap();
        let l = tile(&b, &c, &[2], &[3]).unwrap();
        let got = tile_of(&l, &[6], &b, &[2]).unwrap();
        assert_eq!(canonicalize(&got).unwrap(), canonicalize(&c).unwrap());
        let got = tile_of_given_outer(&l, &[6], &c, &[3]).unwrap();
        assert_eq!(canonicalize(&got).unwrap(), canonicalize(&b).unwrap());
    }

    #[test]
    fn indivisible_shapes_are_errors() {
        let l = parse("S[6:1]").unwrap();
        assert!(tile_of(&l, &[6], &parse("S[4:1]").unwrap(), &[4]).is_err());
    }
}
