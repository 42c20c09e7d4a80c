//! Distributed layouts: `blocked`, `nvidia_mma`, `dot_op` and `slice` -> `(register, lane,
//! warp, block) -> (dim0, ..)`.
//!
//! `dot_op` (an mma operand held in registers, `kWidth` consecutive K elements per register
//! group): one warp's tile of A (`M x K`, `16 x 8*kWidth`) or B (`K x N`, `8*kWidth x 8`) is
//! registers `kWidth` along K, lanes 4 along K then 8 along M (A) or N (B), registers 2 along
//! M (A only), then registers 2 along K. Warps follow the parent's warp order, and warps along
//! K hold copies (zero bases). Repetition takes K first. Worked example (checked against
//! Triton): A with `kWidth = 2` of a 2x2-warp mma v2 on 64x64 gives registers
//! `[0,1],[8,0],[0,8],[0,16],[0,32],[32,0]`, lanes `[0,2],[0,4],[1,0],[2,0],[4,0]`, warps
//! `[0,0],[16,0]`.
//!
//! The fp64 mma (`instrShape = [8, 8]`, `m8n8k4`) has no second row group of registers, and
//! its operands drop registers beyond a smaller tensor. An FMA operand (`dot_op` of a
//! `blocked` parent, no `kWidth`) holds the whole K extent per thread in registers (in the
//! parent's order), lanes and warps as the parent but with copies along K.
//!
//! `slice` removes one dim of its parent: the parent on the shape with that dim of size 1,
//! the dim dropped from every basis, and zero register bases dropped (lanes and warps that
//! differed only along the removed dim keep zero bases: they hold copies).

use super::{check_order, Registers, TileBuilder, TritonAttr};
use crate::arith::log2;
use crate::error::{LayoutError, Result};
use crate::linear::{InDim, LinearLayout, OutDim};

impl TritonAttr {
    pub(super) fn blocked_to_linear(&self, shape_log: &[u32]) -> Result<LinearLayout> {
        let rank = shape_log.len();
        let shape: Vec<i64> = shape_log.iter().map(|&l| 1i64 << l).collect();
        let spt = self.pow2_list("sizePerThread", rank, &shape)?;
        let tpw = self.pow2_list("threadsPerWarp", rank, &shape)?;
        let wpc = self.pow2_list("warpsPerCTA", rank, &shape)?;
        let order = self.list("order")?;
        if order.len() != rank {
            return Err(self.err(
                "order",
                format!(
                    "has {} entries but the shape {shape:?} has rank {rank}",
                    order.len()
                ),
            ));
        }
        let order = check_order(&order).map_err(|why| self.err("order", why))?;
        let cga = self.cga(rank)?;
        let mut tile = TileBuilder::new(rank);
        for (name, logs) in [("register", &spt), ("lane", &tpw), ("warp", &wpc)] {
            for &d in &order {
                tile.identity(name, d, logs[d])?;
            }
        }
        tile.finish(shape_log, &cga, &order, Registers::Drop)
    }

    /// The checked fields of an `nvidia_mma`: `(major, warpsPerCTA log2, m log2, n log2)`.
    fn mma_fields(&self, shape: &[i64]) -> Result<(i64, Vec<u32>, u32, u32)> {
        let rank = shape.len();
        let major = self.int("versionMajor")?;
        let minor = self.int("versionMinor")?;
        if major != 2 && major != 3 {
            return Err(self.err(
                "versionMajor",
                format!("{major} is not supported: 2 (Ampere mma.sync) and 3 (Hopper wgmma) are"),
            ));
        }
        if minor < 0 {
            return Err(self.err("versionMinor", format!("{minor} is negative")));
        }
        let (instr_len, ranks) = match major {
            2 => (rank, "2, or 3 with a batch dim"),
            _ => (3, "2"),
        };
        if !(rank == 2 || (major == 2 && rank == 3)) {
            return Err(LayoutError::Shape {
                shape: shape.to_vec(),
                why: format!("#ttg.nvidia_mma version {major} tiles tensors of rank {ranks}"),
            });
        }
        let wpc = self.pow2_list("warpsPerCTA", rank, shape)?;
        let instr = self.list("instrShape")?;
        let spelled = match major {
            2 if rank == 3 => "[1, 16, 8] or [1, 8, 8]",
            2 => "[16, 8] or [8, 8] (fp64)",
            _ => "[16, N, K]",
        };
        if instr.len() != instr_len {
            return Err(self.err(
                "instrShape",
                format!(
                    "has {} entries; version {major} on rank {rank} has {instr_len} ({spelled})",
                    instr.len()
                ),
            ));
        }
        // The m and n entries: the last two for v2, the first two for v3 (k last).
        let mn = if major == 2 { rank - 2 } else { 0 };
        if major == 2 && rank == 3 && instr[0] != 1 {
            return Err(self.err(
                "instrShape",
                format!("the batch entry is {}, not 1 ({spelled})", instr[0]),
            ));
        }
        let log_of = |i: usize, least: i64, what: &str| -> Result<u32> {
            match log2(instr[i]) {
                Some(l) if instr[i] >= least => Ok(l),
                _ => Err(self.err(
                    "instrShape",
                    format!(
                        "{what} = {} is not a power of two >= {least} ({spelled})",
                        instr[i]
                    ),
                )),
            }
        };
        // Version 2 also has the fp64 instruction `m8n8k4`: instrShape [8, 8].
        let fp64 = major == 2 && instr[mn] == 8 && instr[mn + 1] == 8;
        let m_log = if fp64 { 3 } else { log_of(mn, 16, "m")? };
        let n_log = log_of(mn + 1, 8, "n")?;
        if major == 3 {
            log_of(2, 1, "k")?;
        }
        Ok((major, wpc, m_log, n_log))
    }

    /// Warps of an mma laid over the tensor dims: fastest last dim first for v2, m first for
    /// v3 (the four warps of a warpgroup stack 16-row slabs).
    fn mma_warp_order(major: i64, rank: usize) -> Vec<usize> {
        if major == 2 {
            (0..rank).rev().collect()
        } else {
            vec![rank - 2, rank - 1]
        }
    }

    pub(super) fn mma_to_linear(&self, shape: &[i64], shape_log: &[u32]) -> Result<LinearLayout> {
        let rank = shape.len();
        let (major, wpc, m_log, n_log) = self.mma_fields(shape)?;
        let cga = self.cga(rank)?;
        // One warp's m x n accumulator tile; (m, n) are the last two tensor dims.
        let (m, n) = (rank - 2, rank - 1);
        let mut tile = TileBuilder::new(rank);
        tile.identity("register", n, 1)?;
        tile.identity("lane", n, 2)?;
        tile.identity("lane", m, 3)?;
        tile.identity("register", m, m_log - 3)?;
        tile.identity("register", n, n_log - 3)?;
        for d in Self::mma_warp_order(major, rank) {
            tile.identity("warp", d, wpc[d])?;
        }
        let last_first: Vec<usize> = (0..rank).rev().collect();
        tile.finish(shape_log, &cga, &last_first, Registers::Broadcast)
    }

    pub(super) fn dot_to_linear(&self, shape: &[i64], shape_log: &[u32]) -> Result<LinearLayout> {
        let rank = shape.len();
        let parent = self.parent()?;
        let op = self.int("opIdx")?;
        if op != 0 && op != 1 {
            return Err(self.err("opIdx", format!("{op}: 0 is operand A, 1 is operand B")));
        }
        match parent.raw.kind.as_str() {
            "nvidia_mma" => {}
            "blocked" => return self.fma_dot_to_linear(&parent, op == 0, shape_log),
            "amd_mfma" => return self.mfma_dot_to_linear(&parent, op == 0, shape, shape_log),
            "amd_wmma" => return self.wmma_dot_to_linear(&parent, op == 0, shape, shape_log),
            other => {
                return Err(self.err(
                    "parent",
                    format!(
                        "#ttg.{other} parents are not supported: operands of #ttg.nvidia_mma, \
                         #ttg.amd_mfma, #ttg.amd_wmma and #ttg.blocked (FMA) are"
                    ),
                ))
            }
        }
        let k_width = self.int("kWidth")?;
        let kw_log = log2(k_width)
            .filter(|&l| l <= 4)
            .ok_or_else(|| self.err("kWidth", format!("{k_width} is not a power of two 1..16")))?;
        let (major, wpc, m_log, _) = parent.mma_fields(shape)?;
        // The fp64 instruction (m8n8k4) has no second row group, and Triton drops its
        // registers beyond a smaller tensor instead of broadcasting them.
        let fp64 = major == 2 && m_log == 3;
        if major == 3 && op == 1 {
            return Err(self.err(
                "opIdx",
                "operand B of a version 3 (wgmma) mma is read from shared memory, not registers",
            ));
        }
        let is_a = op == 0;
        let (k, other) = if is_a {
            (rank - 1, rank - 2)
        } else {
            (rank - 2, rank - 1)
        };
        let mut tile = TileBuilder::new(rank);
        tile.identity("register", k, kw_log)?;
        tile.identity("lane", k, 2)?;
        tile.identity("lane", other, 3)?;
        tile.identity("register", other, if is_a && !fp64 { 1 } else { 0 })?;
        tile.identity("register", k, 1)?;
        for d in Self::mma_warp_order(major, rank) {
            if d == k {
                tile.zeros("warp", wpc[d]);
            } else {
                tile.identity("warp", d, wpc[d])?;
            }
        }
        let mut repeat = vec![k, other];
        repeat.extend((0..rank - 2).rev());
        let cga = parent.cga(rank)?.broadcast_dim(k);
        let registers = if fp64 {
            Registers::Drop
        } else {
            Registers::Broadcast
        };
        tile.finish(shape_log, &cga, &repeat, registers)
    }

    /// An FMA operand (`dot_op` of a `blocked` parent): each thread holds the whole K extent
    /// in registers; lanes and warps follow the parent, holding copies along K (zero bases).
    /// Unlike the blocked parent, registers beyond a smaller tensor are kept as copies.
    fn fma_dot_to_linear(
        &self,
        parent: &TritonAttr,
        is_a: bool,
        shape_log: &[u32],
    ) -> Result<LinearLayout> {
        if let Some(kw) = self.value("kWidth") {
            if !matches!(
                kw,
                super::AttrValue::Int(0) | super::AttrValue::TypedInt(0, _)
            ) {
                return Err(self.err(
                    "kWidth",
                    "is not used by an operand of a #ttg.blocked parent (FMA); leave it out",
                ));
            }
        }
        let rank = shape_log.len();
        if rank < 2 {
            return Err(self.err("parent", "an FMA operand needs a tensor of rank at least 2"));
        }
        let shape: Vec<i64> = shape_log.iter().map(|&l| 1i64 << l).collect();
        let spt = parent.pow2_list("sizePerThread", rank, &shape)?;
        let tpw = parent.pow2_list("threadsPerWarp", rank, &shape)?;
        let wpc = parent.pow2_list("warpsPerCTA", rank, &shape)?;
        let order = parent.list("order")?;
        if order.len() != rank {
            return Err(parent.err(
                "order",
                format!("has {} entries but the shape has rank {rank}", order.len()),
            ));
        }
        let order = check_order(&order).map_err(|why| parent.err("order", why))?;
        let k = if is_a { rank - 1 } else { rank - 2 };
        let mut tile = TileBuilder::new(rank);
        for &d in &order {
            let bits = if d == k { shape_log[k] } else { spt[d] };
            tile.identity("register", d, bits)?;
        }
        for (name, logs) in [("lane", &tpw), ("warp", &wpc)] {
            for &d in &order {
                if d == k {
                    tile.zeros(name, logs[d]);
                } else {
                    tile.identity(name, d, logs[d])?;
                }
            }
        }
        let cga = parent.cga(rank)?.broadcast_dim(k);
        tile.finish(shape_log, &cga, &order, Registers::Broadcast)
    }

    pub(super) fn slice_to_linear(&self, shape: &[i64]) -> Result<LinearLayout> {
        let dim = self.int("dim")?;
        let parent = self.parent()?;
        if parent.is_shared() {
            return Err(self.err(
                "parent",
                format!(
                    "#ttg.{} is a shared layout; slices are of distributed layouts",
                    parent.raw.kind
                ),
            ));
        }
        let dim = usize::try_from(dim)
            .ok()
            .filter(|&d| d <= shape.len())
            .ok_or_else(|| {
                self.err(
                    "dim",
                    format!(
                        "{dim} is not a dim of the parent's rank {}",
                        shape.len() + 1
                    ),
                )
            })?;
        let mut parent_shape = shape.to_vec();
        parent_shape.insert(dim, 1);
        let whole = parent.to_linear(&parent_shape)?;
        let ins = whole
            .ins()
            .iter()
            .map(|d| {
                let bases = d
                    .bases
                    .iter()
                    .map(|b| {
                        let mut b = b.clone();
                        b.remove(dim);
                        b
                    })
                    .filter(|b| d.name != "register" || b.iter().any(|&v| v != 0))
                    .collect();
                InDim {
                    name: d.name.clone(),
                    bases,
                }
            })
            .collect();
        let outs = shape
            .iter()
            .enumerate()
            .map(|(i, &s)| OutDim {
                name: format!("dim{i}"),
                log2_size: s.trailing_zeros(),
            })
            .collect();
        LinearLayout::new(ins, outs)
    }
}
