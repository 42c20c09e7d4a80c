//! Contiguity and SIMD instruction tiles (Linear Layouts paper, sections 5.1 and 5.3).
//!
//! An instruction with tile `T` can lower a register/lane -> memory-offset map `L` exactly when
//! the left division `L /_l T` exists (theorem 5.1). Tiles, for elements of `w` bytes:
//! - vectorized `ld.shared`/`st.shared` of `n` bits: the identity from `log2(n / 8w)` register
//!   bits onto the low offset bits;
//! - `ldmatrix`/`stmatrix`: `id_k(register -> offset) * id_2(lane -> offset)`, `k = log2(4 / w)`:
//!   each lane moves 4 contiguous bytes and 4 lanes share one 16-byte row.
//!
//! Example (a test checks it): for f16, `ldmatrix`'s tile is `{register: [[1]], lane: [[2],[4]]}`
//! into `(offset: 8)`.

use super::{InDim, LinearLayout, OutDim};
use crate::arith::log2;
use crate::error::{LayoutError, Result};

/// A shared-memory instruction whose tile `L /_l T` tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Instruction {
    /// Vectorized `ld.shared` / `st.shared` moving this many bits per lane (32, 64 or 128).
    Vector {
        /// Bits per lane.
        bits: u32,
    },
    /// `ldmatrix` (8x8 matrices of 16-byte rows, 4 lanes per row).
    Ldmatrix,
    /// `stmatrix` (same tile as `ldmatrix`).
    Stmatrix,
}

/// The tile of `instr` for elements of `elem_bytes` bytes: register (and lane) -> `offset`.
pub fn instruction_tile(instr: Instruction, elem_bytes: i64) -> Result<LinearLayout> {
    let w = log2(elem_bytes).filter(|&b| b <= 3).ok_or_else(|| {
        LayoutError::invalid(
            format!("element width {elem_bytes} bytes"),
            "elements are 1, 2, 4 or 8 bytes",
        )
    })?;
    let (reg_bits, lane_bits) = match instr {
        Instruction::Vector { bits } => {
            let b: u32 = match bits {
                32 => 2,
                64 => 3,
                128 => 4,
                _ => {
                    return Err(LayoutError::invalid(
                        format!("vector access of {bits} bits"),
                        "vectorized shared-memory accesses move 32, 64 or 128 bits",
                    ))
                }
            };
            let k = b.checked_sub(w).ok_or_else(|| {
                LayoutError::invalid(
                    format!("{bits}-bit access of {elem_bytes}-byte elements"),
                    "the element is wider than the access",
                )
            })?;
            (k, 0)
        }
        Instruction::Ldmatrix | Instruction::Stmatrix => {
            let k = 2u32.checked_sub(w).ok_or_else(|| {
                LayoutError::invalid(
                    format!("{instr:?} of {elem_bytes}-byte elements"),
                    "ldmatrix/stmatrix move elements of at most 4 bytes",
                )
            })?;
            (k, 2)
        }
    };
    let unit = |i: u32| vec![1i64 << i];
    let mut ins = vec![InDim {
        name: "register".into(),
        bases: (0..reg_bits).map(unit).collect(),
    }];
    if lane_bits > 0 {
        ins.push(InDim {
            name: "lane".into(),
            bases: (reg_bits..reg_bits + lane_bits).map(unit).collect(),
        });
    }
    LinearLayout::new(
        ins,
        vec![OutDim {
            name: "offset".into(),
            log2_size: reg_bits + lane_bits,
        }],
    )
}

impl LinearLayout {
    /// `L /_l T` for the instruction's tile: `Some(quotient)` when `instr` can lower this
    /// register/lane -> `offset` map, `None` when the division does not exist.
    pub fn lowers_with(&self, instr: Instruction, elem_bytes: i64) -> Result<Option<LinearLayout>> {
        let tile = instruction_tile(instr, elem_bytes)?;
        match self.divide_left(&tile) {
            Ok(q) => Ok(Some(q)),
            Err(LayoutError::NotATile { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Generalized vectorization (section 5.3): `L' = P_Reg L /_l T`, where the register
    /// permutation `P_Reg` moves the registers matching the tile's register bases to the front
    /// (the others keep their order). `Some((order, quotient))`, `order[i]` being the register
    /// bit that becomes bit `i`, or `None` when no permutation makes the division exist.
    pub fn lowers_with_permuted_registers(
        &self,
        instr: Instruction,
        elem_bytes: i64,
    ) -> Result<Option<(Vec<usize>, LinearLayout)>> {
        let tile = instruction_tile(instr, elem_bytes)?;
        let Some(regs) = self.in_dim("register") else {
            return Ok(None);
        };
        let Some(offset) = self.outs().iter().position(|o| o.name == "offset") else {
            return Ok(None);
        };
        let mut order = Vec::new();
        for want in tile.in_dim("register").map_or(&[][..], |d| &d.bases[..]) {
            let found = regs.bases.iter().enumerate().position(|(i, b)| {
                !order.contains(&i)
                    && b[offset] == want[0]
                    && b.iter().enumerate().all(|(j, v)| j == offset || *v == 0)
            });
            match found {
                Some(i) => order.push(i),
                None => return Ok(None),
            }
        }
        let rest: Vec<usize> = (0..regs.bases.len())
            .filter(|i| !order.contains(i))
            .collect();
        order.extend(rest);
        let ins = self
            .ins()
            .iter()
            .map(|d| InDim {
                name: d.name.clone(),
                bases: if d.name == "register" {
                    order.iter().map(|&i| d.bases[i].clone()).collect()
                } else {
                    d.bases.clone()
                },
            })
            .collect();
        let permuted = LinearLayout::new(ins, self.outs().to_vec())?;
        Ok(permuted.lowers_with(instr, elem_bytes)?.map(|q| (order, q)))
    }

    /// Number of consecutive logical elements each thread holds in consecutive registers: `2^k`
    /// for the largest `k` with register bases `0..k` equal to the unit vectors `1, 2, 4, ...`
    /// of the logical tensor flattened with `fastest` first (the register part of the inverse
    /// is the identity there). Example: blocked `sizePerThread=[2,2]`, order `[1,0]` on 16x16,
    /// `fastest = [dim1, dim0]`: 2.
    pub fn contiguous_elements(&self, fastest: &[&str]) -> Result<i64> {
        let t = self.transpose_outs(fastest)?;
        let regs = t.in_columns("register")?;
        let k = regs
            .iter()
            .enumerate()
            .take_while(|(i, &c)| c == 1u128 << i)
            .count();
        Ok(1i64 << k)
    }
}
