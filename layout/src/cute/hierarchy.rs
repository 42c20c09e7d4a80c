//! Hierarchical helpers used by the algebra and by TV layouts: `make_layout` (modes side by
//! side), `select`, `flatten`, `append`, `pad_rank` (CuTe's `append<R>`) and `zip`.
//!
//! Example: `make_layout(4:1, (2,3):(4,8)) = (4, (2, 3)):(1, (4, 8))`; `zip` of
//! `(3,4):(4,1)` and `(2,5):(12,24)` is `((3, 2), (4, 5)):((4, 12), (1, 24))`.

use super::{CuteLayout, IntTuple};
use crate::error::{LayoutError, Result};

/// The layout whose top-level modes are `modes`, in order (a single mode gives a 1-tuple, as
/// pycute's `make_layout` does). `make_layout([4:1, 2:4]) = (4, 2):(1, 4)`.
pub fn make_layout(modes: &[CuteLayout]) -> Result<CuteLayout> {
    let shape = IntTuple::Tuple(modes.iter().map(|m| m.shape().clone()).collect());
    let stride = IntTuple::Tuple(modes.iter().map(|m| m.stride().clone()).collect());
    CuteLayout::new(shape, stride)
}

/// The top-level modes at `indices`, in that order. `select((4,2,3):(1,4,8), [2,0]) = (3, 4):(8, 1)`.
pub fn select(layout: &CuteLayout, indices: &[usize]) -> Result<CuteLayout> {
    let modes = layout.modes();
    let picked = indices
        .iter()
        .map(|&i| {
            modes.get(i).cloned().ok_or_else(|| {
                LayoutError::invalid(
                    format!("select mode {i} of {layout}"),
                    format!("the layout has {} top-level modes", modes.len()),
                )
            })
        })
        .collect::<Result<Vec<_>>>()?;
    make_layout(&picked)
}

/// All leaves as top-level modes; a leaf layout stays as it is.
/// `flatten((4,(2,4)):(2,(1,8))) = (4, 2, 4):(2, 1, 8)`.
pub fn flatten(layout: &CuteLayout) -> CuteLayout {
    match layout.shape() {
        IntTuple::Int(_) => layout.clone(),
        IntTuple::Tuple(_) => CuteLayout {
            shape: IntTuple::flat(&layout.shape().leaves()),
            stride: IntTuple::flat(&layout.stride().leaves()),
        },
    }
}

/// `layout` with `mode` added as its last top-level mode. `append(4:1, 2:4) = (4, 2):(1, 4)`.
pub fn append(layout: &CuteLayout, mode: &CuteLayout) -> Result<CuteLayout> {
    let mut modes = layout.modes();
    modes.push(mode.clone());
    make_layout(&modes)
}

/// `layout` padded with `1:0` modes up to `rank` top-level modes (CuTe's `append<R>`);
/// unchanged when it already has that many. `pad_rank(4:1, 2) = (4, 1):(1, 0)`.
pub fn pad_rank(layout: &CuteLayout, rank: usize) -> Result<CuteLayout> {
    if layout.rank() >= rank {
        return Ok(layout.clone());
    }
    let mut modes = layout.modes();
    modes.resize(rank, unit());
    make_layout(&modes)
}

/// Mode `i` of the result pairs mode `i` of `a` with mode `i` of `b`; the ranks must agree.
/// `zip((3,4):(4,1), (2,5):(12,24)) = ((3, 2), (4, 5)):((4, 12), (1, 24))`.
pub fn zip(a: &CuteLayout, b: &CuteLayout) -> Result<CuteLayout> {
    if a.rank() != b.rank() {
        return Err(LayoutError::invalid(
            format!("zip of {a} and {b}"),
            format!("their ranks differ ({} and {})", a.rank(), b.rank()),
        ));
    }
    let pairs = a
        .modes()
        .into_iter()
        .zip(b.modes())
        .map(|(x, y)| make_layout(&[x, y]))
        .collect::<Result<Vec<_>>>()?;
    make_layout(&pairs)
}

/// The layout `1:0` (one element at offset 0).
pub(crate) fn unit() -> CuteLayout {
    CuteLayout {
        shape: IntTuple::Int(1),
        stride: IntTuple::Int(0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notation::cute::parse_layout;

    fn l(t: &str) -> CuteLayout {
        parse_layout(t).unwrap()
    }

    #[test]
    fn make_layout_places_modes_side_by_side() {
        let r = make_layout(&[l("4:1"), l("(2,3):(4,8)")]).unwrap();
        assert_eq!(r.to_string(), "(4, (2, 3)):(1, (4, 8))");
        assert_eq!(make_layout(&[l("4:1")]).unwrap().to_string(), "(4,):(1,)");
    }

    #[test]
    fn select_picks_modes_in_order_and_rejects_missing_ones() {
        assert_eq!(
            select(&l("(4,2,3):(1,4,8)"), &[2, 0]).unwrap().to_string(),
            "(3, 4):(8, 1)"
        );
        assert!(select(&l("(4,2):(1,4)"), &[2]).is_err());
    }

    #[test]
    fn flatten_lists_the_leaves() {
        assert_eq!(
            flatten(&l("(4,(2,4)):(2,(1,8))")).to_string(),
            "(4, 2, 4):(2, 1, 8)"
        );
        assert_eq!(flatten(&l("8:1")).to_string(), "8:1");
    }

    #[test]
    fn append_and_pad_rank_add_trailing_modes() {
        assert_eq!(
            append(&l("4:1"), &l("2:4")).unwrap().to_string(),
            "(4, 2):(1, 4)"
        );
        assert_eq!(pad_rank(&l("4:1"), 2).unwrap().to_string(), "(4, 1):(1, 0)");
        assert_eq!(
            pad_rank(&l("(4,2):(1,4)"), 2).unwrap().to_string(),
            "(4, 2):(1, 4)"
        );
    }

    #[test]
    fn zip_pairs_modes_and_rejects_rank_mismatch() {
        let r = zip(&l("(3,4):(4,1)"), &l("(2,5):(12,24)")).unwrap();
        assert_eq!(r.to_string(), "((3, 2), (4, 5)):((4, 12), (1, 24))");
        assert!(zip(&l("(3,4):(4,1)"), &l("2:1")).is_err());
    }
}
