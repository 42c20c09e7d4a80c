//! Product (Triton's `operator*`, the block-diagonal matrix) and its inverse, left division.
//!
//! `a * b` has the union of the in-dims and of the out-dims. Where an in-dim is shared, `b`'s bases
//! follow `a`'s; where an out-dim is shared, `b`'s values move above `a`'s bits (sizes multiply).
//! Example: `{register: [[1]]} -> (dim0: 2)` times `{register: [[1]]} -> (dim0: 2)` is
//! `{register: [[1],[2]]} -> (dim0: 4)`. Left division undoes it: `(a * b) /_l a = b`.

use super::{InDim, LinearLayout, OutDim};
use crate::error::{LayoutError, Result};

impl LinearLayout {
    /// The product `self * other` (block-diagonal; `self` in the low bits of shared dims).
    pub fn product(&self, other: &LinearLayout) -> Result<LinearLayout> {
        let mut outs: Vec<OutDim> = self.outs().to_vec();
        for o in other.outs() {
            match outs.iter_mut().find(|x| x.name == o.name) {
                Some(x) => x.log2_size += o.log2_size,
                None => outs.push(o.clone()),
            }
        }
        if let Some(o) = outs.iter().find(|o| o.log2_size > super::MAX_OUT_BITS) {
            return Err(LayoutError::invalid(
                format!("product at out-dim {}", o.name),
                format!(
                    "the sizes multiply to 2^{}, beyond 2^{}",
                    o.log2_size,
                    super::MAX_OUT_BITS
                ),
            ));
        }
        let embed = |l: &LinearLayout, b: &[i64], high: bool| -> Vec<i64> {
            outs.iter()
                .map(|o| {
                    let Some(j) = l.outs().iter().position(|x| x.name == o.name) else {
                        return 0;
                    };
                    let shift = if high { self.out_bits(&o.name) } else { 0 };
                    b[j] << shift
                })
                .collect()
        };
        let mut ins: Vec<InDim> = Vec::new();
        for d in self.ins() {
            ins.push(InDim {
                name: d.name.clone(),
                bases: d.bases.iter().map(|b| embed(self, b, false)).collect(),
            });
        }
        for d in other.ins() {
            let bases: Vec<Vec<i64>> = d.bases.iter().map(|b| embed(other, b, true)).collect();
            match ins.iter_mut().find(|x| x.name == d.name) {
                Some(x) => x.bases.extend(bases),
                None => ins.push(InDim {
                    name: d.name.clone(),
                    bases,
                }),
            }
        }
        LinearLayout::new(ins, outs)
    }

    /// Left division `self /_l tile`: the `M2` with `self = tile * M2`, or an error naming the
    /// first basis that breaks the block-diagonal structure.
    pub fn divide_left(&self, tile: &LinearLayout) -> Result<LinearLayout> {
        let not = |why: String| LayoutError::NotATile { reason: why };
        for o in tile.outs() {
            if self.out_bits(&o.name) < o.log2_size || !self.outs().iter().any(|x| x.name == o.name)
            {
                return Err(not(format!(
                    "out-dim {} of the tile (size {}) exceeds the layout's (size {})",
                    o.name,
                    o.size(),
                    self.out_size(&o.name)
                )));
            }
        }
        let outs: Vec<OutDim> = self
            .outs()
            .iter()
            .map(|o| OutDim {
                name: o.name.clone(),
                log2_size: o.log2_size - tile.out_bits(&o.name),
            })
            .collect();
        let mut ins = Vec::new();
        for d in self.ins() {
            let k = tile.in_size_log2(&d.name);
            if d.bases.len() < k {
                return Err(not(format!(
                    "in-dim {} has {} bases, fewer than the tile's {k}",
                    d.name,
                    d.bases.len()
                )));
            }
            for (i, b) in d.bases[..k].iter().enumerate() {
                let want: Vec<i64> = self
                    .outs()
                    .iter()
                    .map(|o| tile.value_at(&d.name, i, &o.name))
                    .collect();
                if *b != want {
                    return Err(not(format!(
                        "basis {}[{i}] is {b:?}, the tile's is {want:?}",
                        d.name
                    )));
                }
            }
            let mut rest = Vec::new();
            for (i, b) in d.bases[k..].iter().enumerate() {
                let mut q = Vec::with_capacity(b.len());
                for (v, o) in b.iter().zip(self.outs()) {
                    let low = tile.out_bits(&o.name);
                    if v & ((1i64 << low) - 1) != 0 {
                        return Err(not(format!(
                            "basis {}[{}] = {b:?} has bits of out-dim {} inside the tile",
                            d.name,
                            k + i,
                            o.name
                        )));
                    }
                    q.push(v >> low);
                }
                rest.push(q);
            }
            ins.push(InDim {
                name: d.name.clone(),
                bases: rest,
            });
        }
        if let Some(d) = tile.ins().iter().find(|d| self.in_dim(&d.name).is_none()) {
            return Err(not(format!("the layout has no in-dim {}", d.name)));
        }
        LinearLayout::new(ins, outs)
    }

    /// `log2` of the out-dim's size, 0 when absent.
    pub fn out_bits(&self, name: &str) -> u32 {
        self.outs()
            .iter()
            .find(|o| o.name == name)
            .map_or(0, |o| o.log2_size)
    }

    /// Value of basis `in_dim[k]` on out-dim `out`, 0 when either is absent.
    fn value_at(&self, in_dim: &str, k: usize, out: &str) -> i64 {
        let j = self.outs().iter().position(|o| o.name == out);
        match (self.in_dim(in_dim).and_then(|d| d.bases.get(k)), j) {
            (Some(b), Some(j)) => b[j],
            _ => 0,
        }
    }
}
