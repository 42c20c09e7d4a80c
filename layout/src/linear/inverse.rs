//! Right inverse, `invert_and_compose`, and free-variable (broadcast) masks, by Gaussian
//! elimination over F2 ([`crate::f2::Echelon`]).
//!
//! The right inverse of a surjective `L: U -> V` maps every out bit to an input with that image;
//! among the solutions it takes the one with free variables 0 (bases that are combinations of
//! earlier ones are never used), so a basis that appears first in `L` is the one used. That is
//! not always the solution with the fewest set bits: `{in: [[1],[2],[3]]}` inverts 3 to
//! `in = 3` (bases 0 and 1), not `in = 4` (base 2 alone).
//! Example (Triton's unit test, a test checks it): `A = {in1: [[2],[1],[4]]}` and
//! `B = {in2: [[4],[1],[2]]}` give `invert_and_compose(A, B) = B^-1 ∘ A = {in1: [[4],[2],[1]]}`
//! into `in2`.

use std::collections::BTreeMap;

use super::{LinearLayout, OutDim};
use crate::error::{LayoutError, Result};
use crate::f2::Echelon;

impl LinearLayout {
    /// A right inverse `R` with `self ∘ R = id` on the out space; errors when `self` is not
    /// surjective (naming an out bit it misses).
    pub fn right_inverse(&self) -> Result<LinearLayout> {
        let cols = self.columns()?;
        let ech = Echelon::of_columns(&cols);
        let mut inv_cols = Vec::new();
        let mut bit = 0u32;
        for o in self.outs() {
            for k in 0..o.log2_size {
                let x = ech.solve(1u128 << bit).ok_or_else(|| {
                    LayoutError::not_representable(
                        "right inverse",
                        format!(
                            "the layout is not surjective: no input reaches {}={}",
                            o.name,
                            1u64 << k
                        ),
                    )
                })?;
                inv_cols.push(x);
                bit += 1;
            }
        }
        let ins: Vec<(String, usize)> = self
            .outs()
            .iter()
            .map(|o| (o.name.clone(), o.log2_size as usize))
            .collect();
        LinearLayout::from_columns(&ins, ins_as_outs(self), &inv_cols)
    }

    /// `B^-1 ∘ A` with `A = self`: for every input of `A`, an input of `B` holding the same
    /// element (free variables 0). `A`'s out-dims must be out-dims of `B`; every element `A`
    /// reaches must be reached by `B`.
    pub fn invert_and_compose(&self, b: &LinearLayout) -> Result<LinearLayout> {
        for o in self.outs() {
            if !b.outs().iter().any(|x| x.name == o.name) {
                return Err(LayoutError::invalid(
                    format!("invert_and_compose at out-dim {}", o.name),
                    "the second layout has no out-dim of that name",
                ));
            }
        }
        let ech = Echelon::of_columns(&b.columns()?);
        let mut cols = Vec::new();
        for d in self.ins() {
            for (k, basis) in d.bases.iter().enumerate() {
                let coord: Vec<i64> = b
                    .outs()
                    .iter()
                    .map(|o| {
                        self.outs()
                            .iter()
                            .position(|x| x.name == o.name)
                            .map_or(0, |j| basis[j])
                    })
                    .collect();
                let fits = coord.iter().zip(b.outs()).all(|(v, o)| *v < o.size());
                let x = if fits {
                    ech.solve(b.flatten_out(&coord))
                } else {
                    None
                };
                cols.push(x.ok_or_else(|| {
                    LayoutError::not_representable(
                        "B^-1 ∘ A",
                        format!(
                            "{}={} maps to {coord:?}, which the second layout never reaches",
                            d.name,
                            1u64 << k
                        ),
                    )
                })?);
            }
        }
        LinearLayout::from_columns(&self.in_shape(), ins_as_outs(b), &cols)
    }

    /// Per in-dim, the bits that are FREE variables: bases in the span of the bases before them
    /// (in-dims in order), e.g. zero bases (broadcast). Two inputs that differ only in free bits
    /// and by a kernel combination hold the same element.
    /// Example: `{register: [[1],[0]], lane: [[1]]}` has masks `{lane: 1, register: 2}`.
    pub fn free_variable_masks(&self) -> Result<BTreeMap<String, i64>> {
        let mut ech = Echelon::default();
        let cols = self.columns()?;
        let mut it = cols.into_iter();
        let mut masks = BTreeMap::new();
        for d in self.ins() {
            let mut m = 0i64;
            for k in 0..d.bases.len() {
                let c = it.next().unwrap_or(0);
                if !ech.insert(c, 0) {
                    m |= 1 << k;
                }
            }
            masks.insert(d.name.clone(), m);
        }
        Ok(masks)
    }

    /// True when every element of the out space is reached.
    pub fn is_surjective(&self) -> Result<bool> {
        Ok(Echelon::of_columns(&self.columns()?).rank() == self.total_out_bits() as usize)
    }
}

/// `l`'s in-dims as out-dims of the same names and sizes (the codomain of an inverse).
fn ins_as_outs(l: &LinearLayout) -> Vec<OutDim> {
    l.ins()
        .iter()
        .map(|d| OutDim {
            name: d.name.clone(),
            log2_size: d.bases.len() as u32,
        })
        .collect()
}
