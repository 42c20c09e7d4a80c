//! Direct sum on the tiling domain (paper appendix F).
//!
//! For `A` over shape `SA` and `B` over shape `SB` of the same rank, `A ⊕ B` has shape
//! `SA_k*SB_k` per dim, and coordinate `i_k = x_k*SB_k + y_k` maps to `f_A(x) + f_B(y)`: the
//! domain of [`super::tile()`] without the span scaling. Construction: for each dim `k`, A's block
//! `k` then B's block `k`; `R = R_A ∪ R_B`, `O = O_A + O_B`. Recognition recovers either summand
//! from the sum and the other one, as [`super::tile_of()`] does (normalized parts, multiset
//! replicas, offsets by subtraction, then a check by rebuilding). Without span scaling the
//! summands' replicas may fuse beyond what matching canonical iters undoes; that answer is an
//! "undecided" error, never a "no".
//!
//! Worked example (paper F.4, a test checks it): `A = S[(2,2):(8,2)]`, `B = S[(2,2):(4,1)]`,
//! shapes `[2,2]` and `[2,2]`: blocks `(2:8, 2:4)` and `(2:2, 2:1)` give
//! `S[(2,2,2,2):(8,4,2,1)]`, canonically `S[16:1]` over `[4,4]`; no outer layout tiles `B` to
//! it (see [`super::tile_of()`]).

use super::canonicalize::canonicalize;
use super::tile::{add_offset, interleave, same_rank};
use super::tile_of::{confirm, interleaved, multiset_minus, negate, quotient_shape, same_block};
use super::{group, AxeLayout};
use crate::error::{LayoutError, Result};

/// `a ⊕ b` over shapes `a_shape` (slower part of each dim) and `b_shape` (faster part).
///
/// ```
/// use layout::{axe, notation::axe::{parse, print}};
/// let s = axe::direct_sum(&parse("S[(2,2):(8,2)]")?, &parse("S[(2,2):(4,1)]")?, &[2, 2], &[2, 2])?;
/// assert_eq!(print(&axe::canonicalize(&s)?.layout), "S[16:1]");
/// # Ok::<(), layout::LayoutError>(())
/// ```
pub fn direct_sum(
    a: &AxeLayout,
    b: &AxeLayout,
    a_shape: &[i64],
    b_shape: &[i64],
) -> Result<AxeLayout> {
    same_rank(b_shape, a_shape)?;
    // As a tile's shard without the span scaling (by runs where a summand does not group).
    let shard = interleave(a, b, a_shape, b_shape, &|it| Ok(it.to_vec()))?;
    let replica = a.replica().iter().chain(b.replica()).cloned().collect();
    let mut offset = a.offset().clone();
    add_offset(&mut offset, b.offset())?;
    AxeLayout::new(shard, replica, offset)
}

/// Given `l = a ⊕ b` over `shape` and the second summand `b` over `b_shape`, recovers `a`, or
/// [`LayoutError::NotADirectSum`] naming the block at fault.
///
/// ```
/// use layout::{axe, notation::axe::{parse, print}};
/// let a = axe::first_summand(&parse("S[16:1]")?, &[4, 4], &parse("S[(2,2):(4,1)]")?, &[2, 2])?;
/// assert_eq!(print(&a), "S[(2,2):(8,2)]");
/// # Ok::<(), layout::LayoutError>(())
/// ```
pub fn first_summand(
    l: &AxeLayout,
    shape: &[i64],
    b: &AxeLayout,
    b_shape: &[i64],
) -> Result<AxeLayout> {
    recover(l, shape, b, b_shape, Known::Second)
}

/// Given `l = a ⊕ b` over `shape` and the first summand `a` over `a_shape`, recovers `b`, or
/// [`LayoutError::NotADirectSum`] naming the block at fault.
///
/// ```
/// use layout::{axe, notation::axe::{parse, print}};
/// let b = axe::second_summand(&parse("S[16:1]")?, &[4, 4], &parse("S[(2,2):(8,2)]")?, &[2, 2])?;
/// assert_eq!(print(&b), "S[(2,2):(4,1)]");
/// # Ok::<(), layout::LayoutError>(())
/// ```
pub fn second_summand(
    l: &AxeLayout,
    shape: &[i64],
    a: &AxeLayout,
    a_shape: &[i64],
) -> Result<AxeLayout> {
    recover(l, shape, a, a_shape, Known::First)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Known {
    First,
    Second,
}

fn not_a_direct_sum(reason: String) -> LayoutError {
    LayoutError::NotADirectSum { reason }
}

/// Replica sets add without span scaling, so C2 can fuse the two summands' replicas in ways
/// the canonical iters do not undo; a failed match there is no proof of "not a direct sum".
fn undecided(reason: String) -> LayoutError {
    LayoutError::invalid(
        "direct-sum recognition",
        format!("undecided: {reason} (replicas are matched by canonical iters only)"),
    )
}

fn recover(
    l: &AxeLayout,
    shape: &[i64],
    known: &AxeLayout,
    known_shape: &[i64],
    which: Known,
) -> Result<AxeLayout> {
    let other_shape = quotient_shape(shape, known_shape, "summand")?;
    known.check_shape(known_shape)?;
    let (a_shape, b_shape) = match which {
        Known::First => (known_shape, other_shape.as_slice()),
        Known::Second => (other_shape.as_slice(), known_shape),
    };
    let cl = canonicalize(l)?;
    let ck = canonicalize(known)?.layout;
    let g = interleaved(&cl.layout, shape, a_shape, b_shape, not_a_direct_sum)?;
    let gk = group(&ck, known_shape)?;
    let (known_part, other_part, name) = match which {
        Known::First => (0, 1, "first summand"),
        Known::Second => (1, 0, "second summand"),
    };
    let mut shard = Vec::new();
    for k in 0..shape.len() {
        same_block(
            k,
            g.block(2 * k + known_part),
            gk.block(k),
            name,
            not_a_direct_sum,
        )?;
        shard.extend(g.block(2 * k + other_part).iter().cloned());
    }
    let replica = multiset_minus(cl.layout.replica(), ck.replica(), name, undecided)?;
    let mut offset = cl.layout.offset().clone();
    add_offset(&mut offset, &negate(ck.offset())?)?;
    let other = AxeLayout::new(shard, replica, offset)?;
    let rebuilt = match which {
        Known::First => direct_sum(known, &other, a_shape, b_shape)?,
        Known::Second => direct_sum(&other, known, a_shape, b_shape)?,
    };
    confirm(&cl, &rebuilt, not_a_direct_sum)?;
    Ok(other)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::axe::tile_of;
    use crate::notation::axe::{parse, print};

    /// A summand that does not group by its shape (`S[(4,3):(6,5@warpid)]` by `[3,4,1]`) still
    /// sums with one that only adds a last digit: `f(x, y) = f_A(x) + f_B(y)` at every point.
    #[test]
    fn a_direct_sum_needs_only_the_boundaries_its_interleaving_uses() {
        let a = parse("S[(4,3):(6,5@warpid)]").unwrap();
        let b = parse("S[2:1@warpid]").unwrap();
        let s = direct_sum(&a, &b, &[3, 4, 1], &[1, 1, 2]).unwrap();
        assert_eq!(print(&s), "S[(4,3,2):(6,5@warpid,1@warpid)]");
        for x in 0..12 {
            for y in 0..2 {
                let (pa, pb) = (a.eval_flat(x).unwrap(), b.eval_flat(y).unwrap());
                let (pa, pb) = (pa.first().unwrap(), pb.first().unwrap());
                let mut want = pa.clone();
                for (k, v) in pb {
                    *want.entry(k.clone()).or_insert(0) += v;
                }
                want.retain(|_, v| *v != 0);
                let mut got = s.eval_flat(2 * x + y).unwrap().pop_first().unwrap();
                got.retain(|_, v| *v != 0);
                assert_eq!(got, want, "x {x} y {y}");
            }
        }
        assert!(direct_sum(&a, &b, &[3, 4, 1], &[2, 1, 1]).is_err());
    }

    #[test]
    fn paper_f4_direct_sum_is_contiguous_and_not_a_tile() {
        let a = parse("S[(2,2):(8,2)]").unwrap();
        let b = parse("S[(2,2):(4,1)]").unwrap();
        let s = direct_sum(&a, &b, &[2, 2], &[2, 2]).unwrap();
        assert_eq!(print(&canonicalize(&s).unwrap().layout), "S[16:1]");
        assert!(matches!(
            tile_of(&s, &[4, 4], &b, &[2, 2]),
            Err(LayoutError::NotATile { .. })
        ));
    }

    #[test]
    fn direct_sum_adds_replicas_and_offsets() {
        let s = direct_sum(
            &parse("S[2:4] + R[2:1@laneid] + 3").unwrap(),
            &parse("S[2:1] + 1@laneid").unwrap(),
            &[2],
            &[2],
        )
        .unwrap();
        assert_eq!(print(&s), "S[(2,2):(4,1)] + R[2:1@laneid] + 1@laneid + 3");
    }

    #[test]
    fn recognition_names_the_mismatched_block() {
        let e = first_summand(
            &parse("S[16:1]").unwrap(),
            &[4, 4],
            &parse("S[(2,2):(1,4)]").unwrap(),
            &[2, 2],
        )
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("not a direct sum: block 0"), "{e}");
    }
}
