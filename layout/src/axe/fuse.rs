//! Axis fusion from the axis registry: aliases resolved, then per-target linear relations applied.
//!
//! A target relation `t = sum_i c_i * a_i` (CUDA: `tx = laneid + 32*warpid`) rewrites every iter
//! `(e, s@a_i)` to `(e, c_i*s@t)` and every offset `o@a_i` to `c_i*o@t`. This is exact when the
//! decomposition is faithful on the layout's image: with the terms sorted by coefficient, every
//! axis but the last must stay in `[0, c_{i+1}/c_i)` on every point the layout produces (a lane
//! id in `[0, 32)`); otherwise the layout is left unchanged on that relation.
//!
//! Worked example (a test checks it): on target `cuda`,
//! `S[(2,2,8,4):(2@warpid,1@warpid,4@laneid,1@laneid)]` (laneid in `[0, 32)`) becomes
//! `S[(2,2,8,4):(64@tx,32@tx,4@tx,1@tx)]`, which canonicalizes to `S[128:1@tx]`.

use std::collections::BTreeMap;

use super::{AxeLayout, Iter};
use crate::arith;
use crate::axis::{Axis, AxisRegistry, Relation};
use crate::error::{LayoutError, Result};

/// Renames every axis to its canonical name (offsets on merged axes add).
///
/// ```
/// use layout::{axe, AxisRegistry, notation::axe::{parse, print}};
/// let l = parse("S[4:1@lane] + 2@warp")?;
/// let r = axe::resolve_aliases(&l, &AxisRegistry::builtin())?;
/// assert_eq!(print(&r), "S[4:1@laneid] + 2@warpid");
/// # Ok::<(), layout::LayoutError>(())
/// ```
pub fn resolve_aliases(l: &AxeLayout, reg: &AxisRegistry) -> Result<AxeLayout> {
    let rename = |its: &[Iter]| -> Vec<Iter> {
        its.iter()
            .map(|it| Iter::new(it.extent, it.stride, reg.resolve(&it.axis)))
            .collect()
    };
    let offset = reg.resolve_point(l.offset())?;
    AxeLayout::new(rename(l.shard()), rename(l.replica()), offset)
}

/// Applies `target`'s relations to a fixpoint (each at most once per round, rounds bounded by
/// the number of relations plus one), fusing axes where the image allows it.
///
/// ```
/// use layout::{axe, AxisRegistry, notation::axe::{parse, print}};
/// let l = parse("S[(4,32):(1@warpid,1@laneid)]")?;
/// let f = axe::fuse_axes(&l, &AxisRegistry::builtin(), "cuda")?;
/// assert_eq!(print(&f), "S[(4,32):(32@tx,1@tx)]");
/// # Ok::<(), layout::LayoutError>(())
/// ```
pub fn fuse_axes(l: &AxeLayout, reg: &AxisRegistry, target: &str) -> Result<AxeLayout> {
    let t = reg.target(target).ok_or_else(|| {
        let known: Vec<String> = reg.targets().map(|t| t.name.clone()).collect();
        LayoutError::invalid(
            format!("target {target:?}"),
            format!(
                "the axis registry has no such target (known: {})",
                known.join(", ")
            ),
        )
    })?;
    let mut cur = l.clone();
    for _ in 0..=t.relations.len() {
        let mut changed = false;
        for rel in &t.relations {
            if let Some(next) = fuse_relation(&cur, rel)? {
                cur = next;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    Ok(cur)
}

/// One relation, when the layout mentions a term axis and stays within the faithful box.
fn fuse_relation(l: &AxeLayout, rel: &Relation) -> Result<Option<AxeLayout>> {
    let coef: BTreeMap<&Axis, i64> = rel.terms.iter().map(|(c, a)| (a, *c)).collect();
    if !l.axes().iter().any(|a| coef.contains_key(a)) || !faithful(l, rel)? {
        return Ok(None);
    }
    let map = |its: &[Iter]| -> Result<Vec<Iter>> {
        its.iter()
            .map(|it| match coef.get(&it.axis) {
                Some(&c) => Ok(Iter::new(
                    it.extent,
                    arith::mul(it.stride, c, "axis fusion")?,
                    rel.axis.clone(),
                )),
                None => Ok(it.clone()),
            })
            .collect()
    };
    let mut offset = BTreeMap::new();
    for (a, &o) in l.offset() {
        let (axis, v) = match coef.get(a) {
            Some(&c) => (rel.axis.clone(), arith::mul(o, c, "axis fusion")?),
            None => (a.clone(), o),
        };
        let slot = offset.entry(axis).or_insert(0);
        *slot = arith::add(*slot, v, "axis fusion")?;
    }
    Ok(Some(AxeLayout::new(
        map(l.shard())?,
        map(l.replica())?,
        offset,
    )?))
}

/// Terms sorted by positive coefficient, each dividing the next; every axis but the last stays
/// in `[0, c_next / c)` on the layout's image.
fn faithful(l: &AxeLayout, rel: &Relation) -> Result<bool> {
    let mut terms: Vec<(i64, &Axis)> = rel.terms.iter().map(|(c, a)| (*c, a)).collect();
    terms.sort();
    if terms.iter().any(|(c, _)| *c <= 0) {
        return Ok(false);
    }
    for w in terms.windows(2) {
        let ((c, a), (next, _)) = (w[0], w[1]);
        if next % c != 0 {
            return Ok(false);
        }
        let (lo, hi) = range_on(l, a)?;
        if lo < 0 || hi >= next / c {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The exact range `[lo, hi]` of the layout's image on one axis (digits are independent).
fn range_on(l: &AxeLayout, axis: &Axis) -> Result<(i64, i64)> {
    let o = l.offset().get(axis).copied().unwrap_or(0);
    l.iters()
        .filter(|it| &it.axis == axis)
        .try_fold((o, o), |(lo, hi), it| {
            let reach = arith::mul(it.extent - 1, it.stride, "axis range")?;
            Ok((
                arith::add(lo, reach.min(0), "axis range")?,
                arith::add(hi, reach.max(0), "axis range")?,
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notation::axe::{parse, print};

    #[test]
    fn lanes_outside_a_warp_do_not_fuse() {
        let reg = AxisRegistry::builtin();
        let l = parse("S[(2,64):(1@warpid,1@laneid)]").unwrap();
        assert_eq!(fuse_axes(&l, reg, "cuda").unwrap(), l);
        let l = parse("S[4:1@laneid] + -1@laneid").unwrap();
        assert_eq!(fuse_axes(&l, reg, "cuda").unwrap(), l);
    }

    #[test]
    fn offsets_and_replicas_fuse_too() {
        let reg = AxisRegistry::builtin();
        let l = parse("S[8:1@laneid] + R[2:8@laneid] + 1@warpid + 3@laneid").unwrap();
        let f = fuse_axes(&l, reg, "cuda").unwrap();
        assert_eq!(print(&f), "S[8:1@tx] + R[2:8@tx] + 35@tx");
    }

    #[test]
    fn unknown_target_is_an_error_naming_it() {
        let e = fuse_axes(&parse("S[4:1]").unwrap(), AxisRegistry::builtin(), "tpu")
            .unwrap_err()
            .to_string();
        assert!(e.contains("\"tpu\"") && e.contains("cuda"), "{e}");
    }
}
