//! Composition `outer ∘ inner`: the matrix product over F2, dims matched by name.
//!
//! Every out-dim of `inner` must be an in-dim of `outer` at least as large; the result maps
//! `inner`'s in-dims to `outer`'s out-dims. Example (Triton's unit test, a test checks it):
//! `inner {in1: [[1,1],[0,1]], in2: [[1,0],[1,2]]} -> (out1: 4, out2: 4)` and
//! `outer {out1: [[2,2],[1,0]], out2: [[1,1],[2,1]]} -> (out3: 4, out4: 4)` compose to
//! `{in1: [[3,3],[1,1]], in2: [[2,2],[0,3]]}`.

use super::{InDim, LinearLayout};
use crate::error::{LayoutError, Result};

impl LinearLayout {
    /// `self ∘ inner`: apply `inner`, then `self` (its in-dims named like `inner`'s out-dims).
    pub fn compose(&self, inner: &LinearLayout) -> Result<LinearLayout> {
        for o in inner.outs() {
            // An out-dim of size 1 carries no bit: it needs no in-dim of the outer layout
            // (Triton's text cannot write a 0-bit in-dim).
            let fits = o.log2_size == 0
                || self
                    .in_dim(&o.name)
                    .is_some_and(|d| d.bases.len() >= o.log2_size as usize);
            if !fits {
                let has = match self.in_dim(&o.name) {
                    Some(_) => format!("size {}", self.in_size(&o.name)),
                    None => "no such in-dim".to_string(),
                };
                return Err(LayoutError::invalid(
                    format!("composition at {}", o.name),
                    format!(
                        "the inner layout's out-dim {} (size {}) needs an in-dim of the outer \
                         layout of at least that size (the outer has {has})",
                        o.name,
                        o.size(),
                    ),
                ));
            }
        }
        let ins = inner
            .ins()
            .iter()
            .map(|d| {
                let bases = d
                    .bases
                    .iter()
                    .map(|b| {
                        let named: Vec<(&str, i64)> = inner
                            .outs()
                            .iter()
                            .zip(b)
                            .filter(|(o, _)| o.log2_size > 0 || self.in_dim(&o.name).is_some())
                            .map(|(o, &v)| (o.name.as_str(), v))
                            .collect();
                        self.apply_named(&named)
                    })
                    .collect::<Result<Vec<_>>>()?;
                Ok(InDim {
                    name: d.name.clone(),
                    bases,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        LinearLayout::new(ins, self.outs().to_vec())
    }
}
