//! The common meaning of every notation: a RELATION between logical coordinates and physical
//! points (spec certify.md section 1), enumerated.
//!
//! Axe, CuTe and swizzled layouts relate a logical coordinate to the physical points it maps
//! to; TV and linear layouts are read backwards (the cell a thread/value or register/lane/warp
//! holds). Physical points are put in one vocabulary: axis aliases resolved by the registry,
//! linear in-dims named as axes (`offset` = `m`, `lane` = `laneid`, `register` = `reg`,
//! `warp` = `warpid`, `block` = `cta`), the registry's `cuda` relations substituted (thread ids
//! as `tx = laneid + 32*warpid`), zero components dropped. Two layouts are equivalent when these sets are equal.
//! Example: `S[4:1@tx]` and `(4,1):(1,0) -> (4,)` relate the same pairs `((i), {tx: i})`.

use std::collections::BTreeSet;

use crate::axis::{Axis, AxisRegistry, Point};
use crate::error::{LayoutError, Result};
use crate::layout::Layout;
use crate::shape;

/// Largest number of pairs [`relation`] enumerates: 2^18 (each pair is a coordinate and a point
/// map, a few hundred bytes: 2^22 pairs took 3.4 GB and 40 s).
pub const MAX_PAIRS: i64 = 1 << 18;

/// One pair of the relation: a logical coordinate and a physical point.
pub type Pair = (Vec<i64>, Point);

/// Names the axis a linear layout's in-dim stands for.
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

/// Puts a point in the common vocabulary (see the module doc): aliases resolved, the `cuda`
/// target's relations substituted (`tx = laneid + 32*warpid`), zero components dropped.
pub fn normalize_point(reg: &AxisRegistry, p: &Point) -> Result<Point> {
    let mut q = reg.fuse_point("cuda", p)?;
    q.retain(|_, v| *v != 0);
    Ok(q)
}

fn axis(name: &str) -> Axis {
    Axis::new(name).expect("identifier")
}

/// Enumerates the relation of `l` over logical shape `shape` (default: the layout's own).
pub fn relation(l: &Layout, logical_shape: Option<&[i64]>) -> Result<BTreeSet<Pair>> {
    let reg = AxisRegistry::builtin();
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
                    let p: Point = [(axis("tx"), th), (axis("reg"), v)].into();
                    out.insert((t.eval(th, v)?, normalize_point(reg, &p)?));
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
                let p: Point = f
                    .ins()
                    .iter()
                    .zip(&input)
                    .map(|(d, &v)| (axis(in_dim_axis_name(&d.name)), v))
                    .collect();
                out.insert((cell, normalize_point(reg, &p)?));
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
                    out.insert((c.clone(), normalize_point(reg, &p)?));
                }
            }
        }
    }
    Ok(out)
}
