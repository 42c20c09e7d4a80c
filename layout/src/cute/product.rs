//! Products: repeat A over the pattern of B.
//!
//! `logical_product(A, B) = (A, complement(A, size(A)*cosize(B)) ∘ B)`: mode 0 is one copy of A,
//! mode 1 places the copies where B says, in the room A leaves. For rank-R operands
//! (`R = max(rank A, rank B)`, both padded with `1:0` modes), `blocked_product` zips mode `i` of
//! A with mode `i` of the copies (A innermost: blocks), `raked_product` the other way round
//! (copies innermost: A is raked across them). `zipped_product` is the logical product (B is one
//! layout here) and `tiled_product` brings the copies' top-level modes up.
//! Example: `blocked_product((3,4):(4,1), (2,5):(1,2)) = ((3, 2), (4, 5)):((4, 12), (1, 24))`.

use super::coalesce::coalesce_by_mode;
use super::complement::complement;
use super::composition::composition;
use super::divide::halves;
use super::hierarchy::{make_layout, pad_rank, zip};
use super::{CuteLayout, IntTuple};
use crate::arith;
use crate::error::Result;

/// `(A, complement(A, size(A)*cosize(B)) ∘ B)`. `logical_product(2:1, 3:1) = (2, 3):(1, 2)`.
pub fn logical_product(a: &CuteLayout, b: &CuteLayout) -> Result<CuteLayout> {
    let room = arith::mul(a.size(), b.cosize(), "product cotarget")?;
    let copies = composition(&complement(a, room)?, b)?;
    make_layout(&[a.clone(), copies])
}

/// The logical product for a single-layout B. `zipped_product(2:1, 3:1) = (2, 3):(1, 2)`.
pub fn zipped_product(a: &CuteLayout, b: &CuteLayout) -> Result<CuteLayout> {
    logical_product(a, b)
}

/// `(A, copies_0, copies_1, ...)`. `tiled_product(2:1, (3,2):(1,3)) = (2, 3, 2):(1, 2, 6)`.
pub fn tiled_product(a: &CuteLayout, b: &CuteLayout) -> Result<CuteLayout> {
    let [block, copies] = halves(&zipped_product(a, b)?);
    let mut modes = vec![block];
    modes.extend(copies.modes());
    make_layout(&modes)
}

/// Mode `i` is `(A_i, copies_i)`.
/// `blocked_product((3,4):(4,1), (2,5):(1,2)) = ((3, 2), (4, 5)):((4, 12), (1, 24))`.
pub fn blocked_product(a: &CuteLayout, b: &CuteLayout) -> Result<CuteLayout> {
    let [block, copies] = padded_product(a, b)?;
    // A scalar A (not a 1-tuple) pairs with the copies whole, nesting included, as CUTLASS
    // does: `blocked_product(4:1, (4,):(3,)) = ((4, (4,)),):((1, (12,)),)`.
    if matches!(block.shape(), IntTuple::Int(_)) && copies.rank() == 1 {
        return make_layout(&[make_layout(&[block, copies])?]);
    }
    zip_modes(&block, &copies)
}

/// Mode `i` of each side paired; rank-1 operands pair whole, as one mode (CUTLASS's
/// `blocked_product(4:2, 4:1) = ((4, (2, 2)),):((2, (1, 8)),)`: the copies `(2,2):(1,8)` are
/// the one mode of B's rank).
fn zip_modes(x: &CuteLayout, y: &CuteLayout) -> Result<CuteLayout> {
    if x.rank() == 1 || y.rank() == 1 {
        if let (Some(x0), Some(y0)) = (whole_if_rank1(x), whole_if_rank1(y)) {
            return make_layout(&[make_layout(&[x0, y0])?]);
        }
    }
    zip(x, y)
}

/// The layout as one mode when it stands for a rank-1 operand: a scalar or a 1-tuple's mode,
/// or any layout (a rank-1 B composed into a multi-mode result).
fn whole_if_rank1(l: &CuteLayout) -> Option<CuteLayout> {
    match l.modes().as_slice() {
        [m] => Some(m.clone()),
        _ => Some(l.clone()),
    }
}

/// Mode `i` is `(copies_i, A_i)`.
/// `raked_product((3,4):(4,1), (2,5):(1,2)) = ((2, 3), (5, 4)):((12, 4), (24, 1))`.
pub fn raked_product(a: &CuteLayout, b: &CuteLayout) -> Result<CuteLayout> {
    let [block, copies] = padded_product(a, b)?;
    // CUTLASS coalesces each mode of the raked product (the CuTe DSL prints
    // `raked_product((4,5):(10,2), 2:1) = ((2,4),5):((1,10),2)`).
    let r = zip_modes(&copies, &block)?;
    let ones = super::IntTuple::Tuple(vec![super::IntTuple::Int(1); r.rank()]);
    coalesce_by_mode(&r, &ones)
}

fn padded_product(a: &CuteLayout, b: &CuteLayout) -> Result<[CuteLayout; 2]> {
    let rank = a.rank().max(b.rank());
    Ok(halves(&logical_product(
        &pad_rank(a, rank)?,
        &pad_rank(b, rank)?,
    )?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notation::cute::parse_layout;

    fn l(t: &str) -> CuteLayout {
        parse_layout(t).unwrap()
    }

    #[test]
    fn blocked_product_spec_vector() {
        let r = blocked_product(&l("(3,4):(4,1)"), &l("(2,5):(1,2)")).unwrap();
        assert_eq!(r.to_string(), "((3, 2), (4, 5)):((4, 12), (1, 24))");
    }

    #[test]
    fn raked_product_swaps_the_zip() {
        let r = raked_product(&l("(3,4):(4,1)"), &l("(2,5):(1,2)")).unwrap();
        assert_eq!(r.to_string(), "((2, 3), (5, 4)):((12, 4), (24, 1))");
    }

    #[test]
    fn logical_product_places_copies_after_a() {
        assert_eq!(
            logical_product(&l("2:1"), &l("3:1")).unwrap().to_string(),
            "(2, 3):(1, 2)"
        );
        let r = logical_product(&l("(2,2):(4,1)"), &l("6:1")).unwrap();
        assert_eq!(r.to_string(), "((2, 2), (2, 3)):((4, 1), (2, 8))");
        assert_eq!(
            tiled_product(&l("2:1"), &l("(3,2):(1,3)"))
                .unwrap()
                .to_string(),
            "(2, 3, 2):(1, 2, 6)"
        );
    }

    #[test]
    fn blocked_product_pads_the_lower_rank_operand() {
        let r = blocked_product(&l("4:1"), &l("(2,3):(1,2)")).unwrap();
        assert_eq!(r.to_string(), "((4, 2), (1, 3)):((1, 4), (0, 8))");
    }
}
