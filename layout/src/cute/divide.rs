//! Division: split A into tiles of B and the tiles' arrangement.
//!
//! `logical_divide(A, B) = A ∘ (B, complement(B, size(A)))`: mode 0 walks one tile (B's
//! elements of A), mode 1 walks the tiles. The variants only regroup that result:
//! `zipped_divide` is the same `(tile, rest)` pair (B is one layout here), `tiled_divide` is
//! `(tile, rest_0, rest_1, ...)` and `flat_divide` is `(tile_0, tile_1, ..., rest_0, ...)`.
//! Example: `(4,2,3):(2,1,8) / 4:2 = ((2, 2), (2, 3)):((4, 1), (2, 8))`.

use super::complement::complement;
use super::composition::composition;
use super::hierarchy::make_layout;
use super::CuteLayout;
use crate::error::Result;

/// `A ∘ (B, complement(B, size(A)))`. `logical_divide(16:1, 4:1) = (4, 4):(1, 4)`.
pub fn logical_divide(a: &CuteLayout, b: &CuteLayout) -> Result<CuteLayout> {
    let rest = complement(b, a.size())?;
    composition(a, &make_layout(&[b.clone(), rest])?)
}

/// `(tile, rest)`, the logical divide itself for a single-layout tiler.
/// `zipped_divide(16:1, 4:1) = (4, 4):(1, 4)`.
pub fn zipped_divide(a: &CuteLayout, b: &CuteLayout) -> Result<CuteLayout> {
    logical_divide(a, b)
}

/// `(tile, rest_0, rest_1, ...)`: the rest's top-level modes brought up.
/// `tiled_divide((8,4):(1,16), 2:1) = (2, 4, 4):(1, 2, 16)`.
pub fn tiled_divide(a: &CuteLayout, b: &CuteLayout) -> Result<CuteLayout> {
    let [tile, rest] = halves(&zipped_divide(a, b)?);
    let mut modes = vec![tile];
    modes.extend(rest.modes());
    make_layout(&modes)
}

/// `(tile_0, ..., rest_0, ...)`: both halves' top-level modes brought up.
/// `flat_divide((8,4):(1,8), (2,2):(1,8)) = (2, 2, 4, 2):(1, 8, 2, 16)`.
pub fn flat_divide(a: &CuteLayout, b: &CuteLayout) -> Result<CuteLayout> {
    let [tile, rest] = halves(&zipped_divide(a, b)?);
    let mut modes = tile.modes();
    modes.extend(rest.modes());
    make_layout(&modes)
}

/// The two top-level modes of a divide or product result (always rank 2 by construction).
pub(crate) fn halves(l: &CuteLayout) -> [CuteLayout; 2] {
    let mut modes = l.modes().into_iter();
    let first = modes.next().unwrap_or_else(super::hierarchy::unit);
    let second = modes.next().unwrap_or_else(super::hierarchy::unit);
    [first, second]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notation::cute::parse_layout;

    fn l(t: &str) -> CuteLayout {
        parse_layout(t).unwrap()
    }

    #[test]
    fn logical_divide_spec_vector() {
        let r = logical_divide(&l("(4,2,3):(2,1,8)"), &l("4:2")).unwrap();
        assert_eq!(r.to_string(), "((2, 2), (2, 3)):((4, 1), (2, 8))");
    }

    #[test]
    fn divide_variants_regroup_the_same_map() {
        let (a, b) = (l("(8,4):(1,8)"), l("(2,2):(1,8)"));
        let base = logical_divide(&a, &b).unwrap();
        assert_eq!(base.to_string(), "((2, 2), (4, 2)):((1, 8), (2, 16))");
        assert_eq!(zipped_divide(&a, &b).unwrap(), base);
        assert_eq!(
            tiled_divide(&a, &b).unwrap().to_string(),
            "((2, 2), 4, 2):((1, 8), 2, 16)"
        );
        assert_eq!(
            flat_divide(&a, &b).unwrap().to_string(),
            "(2, 2, 4, 2):(1, 8, 2, 16)"
        );
        assert_eq!(
            tiled_divide(&l("(8,4):(1,16)"), &l("2:1"))
                .unwrap()
                .to_string(),
            "(2, 4, 4):(1, 2, 16)"
        );
        for r in [tiled_divide(&a, &b).unwrap(), flat_divide(&a, &b).unwrap()] {
            for i in 0..a.size() {
                assert_eq!(r.eval_index(i).unwrap(), base.eval_index(i).unwrap());
            }
        }
    }
}
