//! Linear layouts over F2 (Triton's `LinearLayout`).
//!
//! A linear layout is an F2-linear map between labelled spaces. Each in-dim (`register`, `lane`,
//! `warp`, `block` for distributed layouts; `offset` for memory layouts) has size `2^k` and is
//! stored as `k` BASES: the out-coordinate (one integer per out-dim) of the input with only that
//! bit set. The image of an input is the XOR, per out-dim, of the bases of its set bits. A zero
//! basis means broadcast: several inputs hold the same element. Out-dims (`dim0`, `dim1`, ...)
//! have sizes `2^n`.
//!
//! Worked example (a test checks it; the Linear Layouts paper, figure 1): `register:
//! [[0,1],[1,0]]`, `lane: [[0,2],[0,4],[0,8],[2,0],[4,0]]`, `warp: [[8,0]]` into
//! `(dim0: 16, dim1: 16)`. Lane 9 = bits 0 and 3 gives `[0,2] ^ [2,0] = [2,2]`; register 1
//! adds `[0,1]`: the element `(2,3)`.

use std::fmt;

use crate::arith::{is_pow2, log2};
use crate::error::{LayoutError, Result};

mod compose;
mod inverse;
mod product;
mod reshape;
mod tile;

pub use tile::{instruction_tile, Instruction};

/// Largest out-dim size exponent (out values stay in i64).
pub const MAX_OUT_BITS: u32 = 62;

/// An in-dimension: its name and one basis per bit.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct InDim {
    /// `register`, `lane`, `warp`, `block`, `offset`, ...
    pub name: String,
    /// `bases[k]` is the image of `1 << k`: one value per out-dim.
    pub bases: Vec<Vec<i64>>,
}

/// An out-dimension: its name and `log2` of its size.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct OutDim {
    /// `dim0`, `dim1`, ...
    pub name: String,
    /// The size is `2^log2_size`.
    pub log2_size: u32,
}

impl OutDim {
    /// `2^log2_size`.
    pub fn size(&self) -> i64 {
        1i64 << self.log2_size
    }
}

/// An F2-linear map from named in-dims to named out-dims.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LinearLayout {
    ins: Vec<InDim>,
    outs: Vec<OutDim>,
}

impl LinearLayout {
    /// Checks distinct names, one value per out-dim in every basis, and every value inside its
    /// out-dim.
    pub fn new(ins: Vec<InDim>, outs: Vec<OutDim>) -> Result<LinearLayout> {
        check_distinct(ins.iter().map(|d| d.name.as_str()), "in-dim")?;
        check_distinct(outs.iter().map(|d| d.name.as_str()), "out-dim")?;
        if let Some(o) = outs.iter().find(|o| o.log2_size > MAX_OUT_BITS) {
            return Err(LayoutError::invalid(
                format!("out-dim {}", o.name),
                format!("size 2^{} exceeds 2^{MAX_OUT_BITS}", o.log2_size),
            ));
        }
        for d in &ins {
            if d.bases.len() > MAX_OUT_BITS as usize {
                return Err(LayoutError::invalid(
                    format!("in-dim {}", d.name),
                    "more than 62 bases",
                ));
            }
            for (k, b) in d.bases.iter().enumerate() {
                if b.len() != outs.len() {
                    return Err(LayoutError::invalid(
                        format!("basis {}[{k}]", d.name),
                        format!(
                            "it has {} values but there are {} out-dims",
                            b.len(),
                            outs.len()
                        ),
                    ));
                }
                for (v, o) in b.iter().zip(&outs) {
                    if *v < 0 || *v >= o.size() {
                        return Err(LayoutError::invalid(
                            format!("basis {}[{k}]", d.name),
                            format!(
                                "value {v} is outside out-dim {} of size {}",
                                o.name,
                                o.size()
                            ),
                        ));
                    }
                }
            }
        }
        Ok(LinearLayout { ins, outs })
    }

    /// Builds from bases, each out-dim as small as the bases allow (or `min_sizes` if larger).
    /// `min_sizes` must be powers of two; pass `&[]` to infer all.
    pub fn with_inferred_outs(
        ins: Vec<InDim>,
        out_names: &[&str],
        min_sizes: &[i64],
    ) -> Result<LinearLayout> {
        let mut outs = Vec::new();
        for (j, name) in out_names.iter().enumerate() {
            let max = ins
                .iter()
                .flat_map(|d| d.bases.iter())
                .filter_map(|b| b.get(j))
                .copied()
                .max()
                .unwrap_or(0);
            let mut bits = if max <= 0 {
                0
            } else {
                64 - (max as u64).leading_zeros()
            };
            if let Some(&s) = min_sizes.get(j) {
                let b = log2(s).ok_or_else(|| {
                    LayoutError::invalid(
                        format!("out-dim {name} size {s}"),
                        "a linear layout's dims are powers of two",
                    )
                })?;
                bits = bits.max(b);
            }
            outs.push(OutDim {
                name: name.to_string(),
                log2_size: bits,
            });
        }
        LinearLayout::new(ins, outs)
    }

    /// The in-dims, in order.
    pub fn ins(&self) -> &[InDim] {
        &self.ins
    }

    /// The out-dims, in order.
    pub fn outs(&self) -> &[OutDim] {
        &self.outs
    }

    /// The in-dim of that name.
    pub fn in_dim(&self, name: &str) -> Option<&InDim> {
        self.ins.iter().find(|d| d.name == name)
    }

    /// Size of an in-dim (`2^bases`), 1 when absent.
    pub fn in_size(&self, name: &str) -> i64 {
        self.in_dim(name).map_or(1, |d| 1i64 << d.bases.len())
    }

    /// Total number of input bits.
    pub fn total_in_bits(&self) -> usize {
        self.ins.iter().map(|d| d.bases.len()).sum()
    }

    /// Total number of output bits.
    pub fn total_out_bits(&self) -> u32 {
        self.outs.iter().map(|d| d.log2_size).sum()
    }

    /// The image of an input given as one value per in-dim (in in-dim order).
    pub fn apply(&self, input: &[i64]) -> Result<Vec<i64>> {
        if input.len() != self.ins.len() {
            return Err(LayoutError::Coordinate {
                coord: input.to_vec(),
                why: format!(
                    "it has {} components but the layout has {} in-dims",
                    input.len(),
                    self.ins.len()
                ),
            });
        }
        let mut out = vec![0i64; self.outs.len()];
        for (d, (&x, dim)) in input.iter().zip(&self.ins).enumerate() {
            let size = 1i64 << dim.bases.len();
            if x < 0 || x >= size {
                return Err(LayoutError::Coordinate {
                    coord: input.to_vec(),
                    why: format!("component {d} ({}) is {x}, outside [0, {size})", dim.name),
                });
            }
            for (k, b) in dim.bases.iter().enumerate() {
                if x >> k & 1 == 1 {
                    out.iter_mut().zip(b).for_each(|(o, v)| *o ^= v);
                }
            }
        }
        Ok(out)
    }

    /// The image of a named input; absent in-dims are 0, unknown names are an error.
    pub fn apply_named(&self, input: &[(&str, i64)]) -> Result<Vec<i64>> {
        let mut values = vec![0i64; self.ins.len()];
        for (name, v) in input {
            let i = self
                .ins
                .iter()
                .position(|d| d.name == *name)
                .ok_or_else(|| {
                    LayoutError::invalid(
                        format!("in-dim {name:?}"),
                        "the layout has no such in-dim",
                    )
                })?;
            values[i] = *v;
        }
        self.apply(&values)
    }
}

/// Most bits a flattened in- or out-space may have for the matrix algebra (columns are `u128`).
pub const MAX_FLAT_BITS: u32 = 128;

impl LinearLayout {
    /// The matrix of the layout over F2: one column per input bit (in-dims in order, bit 0
    /// first), each the concatenation of the out-dim values (first out-dim in the low bits).
    ///
    /// Example: `register: [[0,1],[1,0]]` into `(dim0: 2, dim1: 2)` has columns `[0b10, 0b01]`.
    pub fn columns(&self) -> Result<Vec<u128>> {
        self.check_flat("the F2 matrix")?;
        let mut cols = Vec::with_capacity(self.total_in_bits());
        for d in &self.ins {
            for b in &d.bases {
                cols.push(self.flatten_out(b));
            }
        }
        Ok(cols)
    }

    /// One out-coordinate (one value per out-dim) as a flat bit-vector, first out-dim lowest.
    pub fn flatten_out(&self, coord: &[i64]) -> u128 {
        let mut v = 0u128;
        let mut shift = 0u32;
        for (x, o) in coord.iter().zip(&self.outs) {
            v |= (*x as u128) << shift;
            shift += o.log2_size;
        }
        v
    }

    /// Splits a flat out bit-vector into one value per out-dim (inverse of `flatten_out`).
    pub fn unflatten_out(&self, v: u128) -> Vec<i64> {
        split_flat(v, self.outs.iter().map(|o| o.log2_size))
    }

    /// Splits a flat input bit-vector into one value per in-dim.
    pub fn unflatten_in(&self, x: u128) -> Vec<i64> {
        split_flat(x, self.ins.iter().map(|d| d.bases.len() as u32))
    }

    /// Builds a layout from its matrix: `ins` names the input bits (name, bit count), in order.
    pub fn from_columns(
        ins: &[(String, usize)],
        outs: Vec<OutDim>,
        cols: &[u128],
    ) -> Result<LinearLayout> {
        let sizes = outs.iter().map(|o| o.log2_size).collect::<Vec<_>>();
        let mut it = cols.iter();
        let mut dims = Vec::new();
        for (name, n) in ins {
            let bases = (0..*n)
                .map(|_| {
                    it.next()
                        .map(|&c| split_flat(c, sizes.iter().copied()))
                        .ok_or_else(|| {
                            LayoutError::invalid(format!("in-dim {name}"), "too few columns")
                        })
                })
                .collect::<Result<Vec<_>>>()?;
            dims.push(InDim {
                name: name.clone(),
                bases,
            });
        }
        LinearLayout::new(dims, outs)
    }

    /// `(name, number of bases)` of every in-dim, in order.
    pub fn in_shape(&self) -> Vec<(String, usize)> {
        self.ins
            .iter()
            .map(|d| (d.name.clone(), d.bases.len()))
            .collect()
    }

    /// Index of the first bit of in-dim `name` in the flat input (see [`LinearLayout::columns`]).
    pub fn in_offset(&self, name: &str) -> Option<usize> {
        let i = self.ins.iter().position(|d| d.name == name)?;
        Some(self.ins[..i].iter().map(|d| d.bases.len()).sum())
    }

    /// The flat columns of one in-dim (empty when absent).
    pub fn in_columns(&self, name: &str) -> Result<Vec<u128>> {
        let cols = self.columns()?;
        Ok(match self.in_offset(name) {
            Some(at) => cols[at..at + self.in_size_log2(name)].to_vec(),
            None => Vec::new(),
        })
    }

    /// Number of bases of an in-dim (0 when absent).
    pub fn in_size_log2(&self, name: &str) -> usize {
        self.in_dim(name).map_or(0, |d| d.bases.len())
    }

    /// Size of an out-dim, 1 when absent.
    pub fn out_size(&self, name: &str) -> i64 {
        self.outs
            .iter()
            .find(|o| o.name == name)
            .map_or(1, OutDim::size)
    }

    fn check_flat(&self, what: &str) -> Result<()> {
        let (i, o) = (self.total_in_bits(), self.total_out_bits());
        if i > MAX_FLAT_BITS as usize || o > MAX_FLAT_BITS {
            return Err(LayoutError::invalid(
                what.to_string(),
                format!(
                    "the layout has {i} input and {o} output bits; at most {MAX_FLAT_BITS} each"
                ),
            ));
        }
        Ok(())
    }

    /// Equality of the maps up to the order of dims (matched by name); size-1 dims, which carry
    /// no bits, are ignored.
    pub fn same_map(&self, other: &LinearLayout) -> bool {
        type Key<'a> = (
            std::collections::BTreeMap<&'a str, Vec<Vec<i64>>>,
            std::collections::BTreeMap<&'a str, u32>,
        );
        fn key(l: &LinearLayout) -> Key<'_> {
            let outs: std::collections::BTreeMap<&str, u32> = l
                .outs
                .iter()
                .filter(|o| o.log2_size > 0)
                .map(|o| (o.name.as_str(), o.log2_size))
                .collect();
            let order: Vec<usize> = {
                let mut idx: Vec<usize> = (0..l.outs.len()).collect();
                idx.retain(|&j| l.outs[j].log2_size > 0);
                idx.sort_by(|&a, &b| l.outs[a].name.cmp(&l.outs[b].name));
                idx
            };
            let ins: std::collections::BTreeMap<&str, Vec<Vec<i64>>> = l
                .ins
                .iter()
                .filter(|d| !d.bases.is_empty())
                .map(|d| {
                    let bases = d
                        .bases
                        .iter()
                        .map(|b| order.iter().map(|&j| b[j]).collect())
                        .collect();
                    (d.name.as_str(), bases)
                })
                .collect();
            (ins, outs)
        }
        key(self) == key(other)
    }
}

impl LinearLayout {
    /// Every assignment of the in-dims other than `register` and `lane` (`warp`, `block`: the
    /// contexts an instruction runs in), as full inputs with register and lane 0.
    pub fn context_inputs(&self) -> Vec<Vec<i64>> {
        let mut all = vec![vec![0i64; self.ins.len()]];
        for (i, d) in self.ins.iter().enumerate() {
            if d.name == "register" || d.name == "lane" {
                continue;
            }
            all = all
                .into_iter()
                .flat_map(|p| {
                    (0..1i64 << d.bases.len()).map(move |x| {
                        let mut q = p.clone();
                        q[i] = x;
                        q
                    })
                })
                .collect();
        }
        all
    }

    /// A context input (see [`LinearLayout::context_inputs`]) with register and lane set.
    pub fn at_register_lane(&self, ctx: &[i64], reg: i64, lane: i64) -> Vec<i64> {
        let mut x = ctx.to_vec();
        for (i, d) in self.ins.iter().enumerate() {
            match d.name.as_str() {
                "register" => x[i] = reg,
                "lane" => x[i] = lane,
                _ => {}
            }
        }
        x
    }
}

fn split_flat(mut v: u128, sizes: impl Iterator<Item = u32>) -> Vec<i64> {
    sizes
        .map(|n| {
            let x = (v & ((1u128 << n) - 1)) as i64;
            v >>= n;
            x
        })
        .collect()
}

fn check_distinct<'a>(names: impl Iterator<Item = &'a str>, what: &str) -> Result<()> {
    let mut seen = std::collections::BTreeSet::new();
    for n in names {
        if !crate::axis::is_identifier(n) {
            return Err(LayoutError::invalid(
                format!("{what} name {n:?}"),
                "names are identifiers",
            ));
        }
        if !seen.insert(n) {
            return Err(LayoutError::invalid(
                format!("{what} {n:?}"),
                "it appears twice",
            ));
        }
    }
    Ok(())
}

/// The one nonzero entry `(out-dim, value)` of a basis vector, if it has exactly one:
/// `[0, 4]` gives `(1, 4)`; `[0, 0]` and `[1, 1]` give `None`.
pub fn single_entry(basis: &[i64]) -> Option<(usize, i64)> {
    let mut nonzero = basis.iter().copied().enumerate().filter(|&(_, v)| v != 0);
    match (nonzero.next(), nonzero.next()) {
        (Some(e), None) => Some(e),
        _ => None,
    }
}

/// True when `n` is a power of two (dims of linear layouts must be).
pub fn is_dim_size(n: i64) -> bool {
    is_pow2(n)
}

impl fmt::Display for LinearLayout {
    /// Triton's `LinearLayout::toString()` text.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&crate::notation::linear::print_to_string(self))
    }
}
