//! Random Axe layouts for property tests: a shard, a replica and offsets over the axes
//! `m`, `laneid`, `warpid`, `reg`, as `(extent, stride, axis index)` and `(offset, axis index)`.

use layout::{AxeLayout, Axis, Iter};

/// The axis of index `i` (0 `m`, 1 `laneid`, 2 `warpid`, 3 `reg`).
pub fn axis(i: usize) -> Axis {
    Axis::new(["m", "laneid", "warpid", "reg"][i]).unwrap()
}

/// Shard iters, replica iters, offsets.
pub type Spec = (
    Vec<(i64, i64, usize)>,
    Vec<(i64, i64, usize)>,
    Vec<(i64, usize)>,
);

/// The layout a spec describes.
pub fn build((d, r, o): &Spec) -> AxeLayout {
    let its = |v: &[(i64, i64, usize)]| -> Vec<Iter> {
        v.iter()
            .map(|&(e, s, a)| Iter::new(e, s, axis(a)))
            .collect()
    };
    let offset = o.iter().map(|&(v, a)| (axis(a), v)).collect();
    AxeLayout::new(its(d), its(r), offset).unwrap()
}
