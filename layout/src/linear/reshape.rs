//! Reshape and transpose of in- and out-dims, and sublayouts.
//!
//! Reshaping flattens the dims in order, the FIRST dim in the lowest bits (Triton's
//! convention), and splits the flat space again by the new sizes. Transposing reorders dims
//! without touching the map. Example: `{register: [[1,0],[0,1]]} -> (dim0: 2, dim1: 2)` with outs
//! reshaped to `(flat: 4)` is `{register: [[1],[2]]}`.

use super::{InDim, LinearLayout, OutDim};
use crate::arith::log2;
use crate::error::{LayoutError, Result};

fn log2_sizes(dims: &[(&str, i64)], what: &str) -> Result<Vec<(String, u32)>> {
    dims.iter()
        .map(|(n, s)| {
            log2(*s).map(|b| (n.to_string(), b)).ok_or_else(|| {
                LayoutError::invalid(
                    format!("{what} {n} of size {s}"),
                    "a linear layout's dims are powers of two",
                )
            })
        })
        .collect()
}

fn check_total(old: u32, new: &[(String, u32)], what: &str) -> Result<()> {
    let total: u32 = new.iter().map(|(_, b)| b).sum();
    if total != old {
        return Err(LayoutError::invalid(
            format!("reshape of the {what}"),
            format!("the new sizes hold 2^{total} points, the layout's {what} hold 2^{old}"),
        ));
    }
    Ok(())
}

impl LinearLayout {
    /// The same map with in-dims flattened (first dim lowest) and split into `new_ins`
    /// (name, size).
    pub fn reshape_ins(&self, new_ins: &[(&str, i64)]) -> Result<LinearLayout> {
        let new = log2_sizes(new_ins, "in-dim")?;
        check_total(self.total_in_bits() as u32, &new, "in-dims")?;
        let mut all = self.ins().iter().flat_map(|d| d.bases.iter().cloned());
        let ins = new
            .into_iter()
            .map(|(name, b)| InDim {
                name,
                bases: all.by_ref().take(b as usize).collect(),
            })
            .collect();
        LinearLayout::new(ins, self.outs().to_vec())
    }

    /// The same map with out-dims flattened (first dim lowest) and split into `new_outs`.
    pub fn reshape_outs(&self, new_outs: &[(&str, i64)]) -> Result<LinearLayout> {
        let new = log2_sizes(new_outs, "out-dim")?;
        check_total(self.total_out_bits(), &new, "out-dims")?;
        let cols = self.columns()?;
        let outs = new
            .into_iter()
            .map(|(name, log2_size)| OutDim { name, log2_size })
            .collect();
        LinearLayout::from_columns(&self.in_shape(), outs, &cols)
    }

    /// In-dims reordered to `order` (all names, each once).
    pub fn transpose_ins(&self, order: &[&str]) -> Result<LinearLayout> {
        let perm = permutation(order, self.ins().iter().map(|d| d.name.as_str()), "in-dims")?;
        let ins = perm.iter().map(|&i| self.ins()[i].clone()).collect();
        LinearLayout::new(ins, self.outs().to_vec())
    }

    /// Out-dims reordered to `order` (all names, each once).
    pub fn transpose_outs(&self, order: &[&str]) -> Result<LinearLayout> {
        let perm = permutation(
            order,
            self.outs().iter().map(|o| o.name.as_str()),
            "out-dims",
        )?;
        let ins = self
            .ins()
            .iter()
            .map(|d| InDim {
                name: d.name.clone(),
                bases: d
                    .bases
                    .iter()
                    .map(|b| perm.iter().map(|&j| b[j]).collect())
                    .collect(),
            })
            .collect();
        let outs = perm.iter().map(|&j| self.outs()[j].clone()).collect();
        LinearLayout::new(ins, outs)
    }

    /// The restriction to the named in-dims and out-dims (others dropped: inputs there are 0,
    /// outputs there ignored), in the layout's own order.
    pub fn sublayout(&self, ins: &[&str], outs: &[&str]) -> Result<LinearLayout> {
        for n in ins {
            if self.in_dim(n).is_none() {
                return Err(LayoutError::invalid(
                    format!("sublayout in-dim {n}"),
                    "the layout has no such in-dim",
                ));
            }
        }
        let keep: Vec<usize> = (0..self.outs().len())
            .filter(|&j| outs.contains(&self.outs()[j].name.as_str()))
            .collect();
        if keep.len() != outs.len() {
            return Err(LayoutError::invalid(
                format!("sublayout out-dims {outs:?}"),
                "an out-dim is unknown or repeated",
            ));
        }
        let new_ins = self
            .ins()
            .iter()
            .filter(|d| ins.contains(&d.name.as_str()))
            .map(|d| InDim {
                name: d.name.clone(),
                bases: d
                    .bases
                    .iter()
                    .map(|b| keep.iter().map(|&j| b[j]).collect())
                    .collect(),
            })
            .collect();
        let new_outs = keep.iter().map(|&j| self.outs()[j].clone()).collect();
        LinearLayout::new(new_ins, new_outs)
    }
}

fn permutation<'a>(
    order: &[&str],
    names: impl Iterator<Item = &'a str>,
    what: &str,
) -> Result<Vec<usize>> {
    let names: Vec<&str> = names.collect();
    let mut perm = Vec::new();
    for n in order {
        let i = names.iter().position(|x| x == n).ok_or_else(|| {
            LayoutError::invalid(format!("transpose of {what}: {n}"), "no such dim")
        })?;
        if perm.contains(&i) {
            return Err(LayoutError::invalid(
                format!("transpose of {what}: {n}"),
                "it appears twice",
            ));
        }
        perm.push(i);
    }
    if perm.len() != names.len() {
        return Err(LayoutError::invalid(
            format!("transpose of {what} {order:?}"),
            format!("it must name all of {names:?}"),
        ));
    }
    Ok(perm)
}
