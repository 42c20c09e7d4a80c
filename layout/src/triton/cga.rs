//! Multi-CTA layouts: how the CTAs of a cluster (CGA) share a tensor.
//!
//! Triton 3.9 writes them as block bases, `CGALayout = [[1, 0], [0, 1]]`: block bit `k` moves
//! by `bases[k]` CTA tiles (a zero basis: that bit selects a CTA holding a copy). Older dumps
//! write `CTAsPerCGA`, `CTASplitNum` and `CTAOrder`: along each dim, in `CTAOrder`, the first
//! `log2(CTASplitNum)` block bits split the dim and the remaining ones broadcast.
//!
//! A tensor dim split over `2^s` CTAs gives each CTA `shape / 2^s` of it; the CTA layout is
//! built for that per-CTA shape and block bases are scaled by it. Example: `CGALayout =
//! [[1, 0], [0, 1]]` on a 16x32 tensor gives each CTA 8x16 and block bases `[8, 0]`, `[0, 16]`.

use super::{check_order, log2_all, AttrValue, TritonAttr};
use crate::arith::log2;
use crate::error::Result;

/// The cluster part of a layout: block bases in units of one CTA's tile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Cga {
    /// One basis per block bit; each entry is 0 or a power of two (CTA tiles along that dim).
    bases: Vec<Vec<i64>>,
}

impl Cga {
    /// `log2` of the number of CTAs that split each dim.
    fn split_log(&self, rank: usize) -> Vec<u32> {
        (0..rank)
            .map(|d| {
                let or = self.bases.iter().fold(0i64, |acc, b| acc | b[d]);
                64 - or.leading_zeros()
            })
            .collect()
    }

    /// The per-CTA shape (log2 per dim) of a tensor of shape `2^shape_log`.
    pub(crate) fn per_cta(&self, shape_log: &[u32]) -> Vec<u32> {
        let split = self.split_log(shape_log.len());
        shape_log
            .iter()
            .zip(&split)
            .map(|(s, p)| s.saturating_sub(*p))
            .collect()
    }

    /// The block bases in elements on a tensor of shape `2^shape_log`; a basis that moves past
    /// a dim smaller than the split becomes 0 there (those CTAs hold copies).
    pub(crate) fn block_bases(&self, shape_log: &[u32]) -> Vec<Vec<i64>> {
        let per = self.per_cta(shape_log);
        self.bases
            .iter()
            .map(|b| {
                b.iter()
                    .enumerate()
                    .map(|(d, &v)| {
                        let scaled = v << per[d];
                        if scaled >> shape_log[d] != 0 {
                            0
                        } else {
                            scaled
                        }
                    })
                    .collect()
            })
            .collect()
    }

    /// The same CTAs with dim `dim` never split (a dot operand's K: every CTA along the
    /// parent's N (for A) or M (for B) holds the same operand tile).
    pub(crate) fn broadcast_dim(&self, dim: usize) -> Cga {
        let mut bases = self.bases.clone();
        for b in &mut bases {
            b[dim] = 0;
        }
        Cga { bases }
    }
}

impl TritonAttr {
    /// The attribute's CGA for a tensor of rank `rank` (one CTA when no field is given).
    pub(crate) fn cga(&self, rank: usize) -> Result<Cga> {
        let old: Vec<&str> = ["CTAsPerCGA", "CTASplitNum", "CTAOrder"]
            .into_iter()
            .filter(|k| self.value(k).is_some())
            .collect();
        match self.value("CGALayout") {
            Some(v) => {
                if let Some(k) = old.first() {
                    return Err(self.err(k, "give either CGALayout or the CTA fields, not both"));
                }
                let bases = match v {
                    AttrValue::List(xs) if xs.is_empty() => Vec::new(),
                    AttrValue::Lists(xss) => xss.clone(),
                    _ => {
                        return Err(self.err(
                            "CGALayout",
                            "expected a list of block bases such as [[0, 1], [1, 0]]",
                        ))
                    }
                };
                for (k, b) in bases.iter().enumerate() {
                    if b.len() != rank {
                        return Err(self.err(
                            "CGALayout",
                            format!("basis {k} has {} entries, not the rank {rank}", b.len()),
                        ));
                    }
                    if let Some(v) = b
                        .iter()
                        .find(|&&v| v != 0 && log2(v).is_none_or(|l| l > 30))
                    {
                        return Err(self.err(
                            "CGALayout",
                            format!("basis {k} moves by {v} CTAs: expected 0 or a power of two up to 2^30"),
                        ));
                    }
                }
                Ok(Cga { bases })
            }
            None if old.is_empty() => Ok(Cga { bases: Vec::new() }),
            None => self.old_cga(rank),
        }
    }

    /// `CTAsPerCGA` / `CTASplitNum` / `CTAOrder` (each defaulting to one CTA, identity order).
    fn old_cga(&self, rank: usize) -> Result<Cga> {
        let list = |key: &str, default: Vec<i64>| -> Result<Vec<i64>> {
            let v = if self.value(key).is_some() {
                self.list(key)?
            } else {
                default
            };
            if v.len() != rank {
                return Err(self.err(key, format!("has {} entries, not the rank {rank}", v.len())));
            }
            Ok(v)
        };
        let ctas = list("CTAsPerCGA", vec![1; rank])?;
        let split = list("CTASplitNum", ctas.clone())?;
        let order = list("CTAOrder", (0..rank as i64).rev().collect())?;
        let order = check_order(&order).map_err(|why| self.err("CTAOrder", why))?;
        let ctas_log = log2_all(&ctas).map_err(|why| self.err("CTAsPerCGA", why))?;
        let split_log = log2_all(&split).map_err(|why| self.err("CTASplitNum", why))?;
        let mut bases = Vec::new();
        for d in order {
            if split_log[d] > ctas_log[d] {
                return Err(self.err(
                    "CTASplitNum",
                    format!(
                        "dim {d} is split {} ways over only {} CTAs",
                        split[d], ctas[d]
                    ),
                ));
            }
            if ctas_log[d] > 30 {
                return Err(self.err("CTAsPerCGA", format!("{} CTAs along dim {d}", ctas[d])));
            }
            for bit in 0..ctas_log[d] {
                let mut b = vec![0; rank];
                if bit < split_log[d] {
                    b[d] = 1i64 << bit;
                }
                bases.push(b);
            }
        }
        Ok(Cga { bases })
    }
}
