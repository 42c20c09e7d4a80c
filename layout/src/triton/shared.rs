//! Shared-memory layouts: `swizzled_shared` and `nvmma_shared` -> `(offset, block) -> (dim0,
//! ..)`, the logical element stored at each offset (in elements) of a CTA's buffer.
//!
//! `swizzled_shared<{vec, perPhase, maxPhase, order}>` (the Linear Layouts paper, definition
//! 4.11): rows run along `order[1]`, columns along `order[0]`; row `r` has its column groups of
//! `vec` XOR-ed with `(r / perPhase) mod maxPhase`, so the offset bit of row `2^k` holds the
//! element `(2^k, vec * ((2^k / perPhase) mod maxPhase) mod cols)`. Further dims follow
//! `order`. Example (checked against Triton): `vec = 2, perPhase = 1, maxPhase = 4,
//! order = [1, 0]` on 8x8 gives offset bases `[0,1],[0,2],[0,4],[1,2],[2,4],[4,0]`.
//!
//! `nvmma_shared<{swizzlingByteWidth, transposed, elementBitWidth}>` (the wgmma/TMA
//! swizzles): a tile of 8 rows of `swizzlingByteWidth` bytes; within it `vec = 16 bytes` of
//! elements are XOR-swizzled with phase `(row / perPhase) mod maxPhase`, where (perPhase,
//! maxPhase) is (4, 2), (2, 4), (1, 8) for 32, 64, 128 bytes (0 bytes: no swizzle, one row
//! is the whole last dim). Offsets walk the tile's columns, then every row (the leading dims
//! collapsed, innermost first), then the remaining column tiles. `transposed` swaps the
//! roles of the last two dims. The shape must hold at least one tile (8 rows of
//! `swizzlingByteWidth` bytes), as Triton requires.
//!
//! `shared_linear<{offset = [[0, 1], ..], block = [[..]]}, alignment = 16>` (Triton 3.9's
//! print) gives the bases themselves: offset bit `k` holds the element `offset[k]`. Each dim is
//! as large as the bases reach, the layout must cover it (Triton refuses a layout that is not
//! surjective) and the tensor shape must equal it (Triton asserts so). `alignment` is the
//! buffer's alignment in bytes (a positive power of two), not part of the map.

use super::{check_order, AttrValue, Registers, TileBuilder, TritonAttr};
use crate::arith::log2;
use crate::error::{LayoutError, Result};
use crate::linear::{InDim, LinearLayout};

impl TritonAttr {
    /// A `shared_linear`'s layout, each dim as large as its bases reach (checked as Triton's
    /// parser checks it: an `alignment` that is a positive power of two, bases of one rank,
    /// a surjective map).
    pub(super) fn shared_linear(&self) -> Result<LinearLayout> {
        match self.raw.params.iter().find(|(k, _)| k == "alignment") {
            Some((_, a)) if *a > 0 && log2(*a).is_some() => {}
            Some((_, a)) => {
                return Err(self.err(
                    "alignment",
                    format!("{a} is not a positive power of two (Triton requires one)"),
                ))
            }
            None => {
                return Err(self.err(
                    "alignment",
                    "missing: Triton writes it after the bases, `}, alignment = 16>`",
                ))
            }
        }
        let bases = |key: &str| -> Result<Vec<Vec<i64>>> {
            match self.value(key) {
                Some(AttrValue::Lists(b)) => Ok(b.clone()),
                Some(AttrValue::List(b)) if b.is_empty() => Ok(Vec::new()),
                None if key == "block" => Ok(Vec::new()),
                None => Err(self.err(key, "missing")),
                Some(_) => Err(self.err(key, "expected a list of bases such as [[0, 1]]")),
            }
        };
        let offset = bases("offset")?;
        let block = bases("block")?;
        let Some(rank) = offset.first().map(Vec::len).filter(|&r| r > 0) else {
            return Err(self.err("offset", "needs at least one basis, of rank 1 or more"));
        };
        for (key, bs) in [("offset", &offset), ("block", &block)] {
            if let Some(b) = bs.iter().find(|b| b.len() != rank) {
                return Err(self.err(key, format!("basis {b:?} is not of rank {rank}")));
            }
            if let Some(b) = bs.iter().find(|b| b.iter().any(|&v| v < 0)) {
                return Err(self.err(key, format!("basis {b:?} has a negative entry")));
            }
        }
        let names: Vec<String> = (0..rank).map(|i| format!("dim{i}")).collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let ins = vec![
            InDim {
                name: "offset".into(),
                bases: offset,
            },
            InDim {
                name: "block".into(),
                bases: block,
            },
        ];
        let l = LinearLayout::with_inferred_outs(ins, &refs, &[])?;
        if !l.is_surjective()? {
            return Err(self.err(
                "offset",
                "the bases do not reach every element of the shape they span (Triton requires a \
                 surjective layout)",
            ));
        }
        Ok(l)
    }

    /// A `shared_linear` on a tensor of `shape`, which must be the shape its bases fix.
    pub(super) fn shared_linear_on(&self, shape: &[i64]) -> Result<LinearLayout> {
        let l = self.shared_linear()?;
        let own: Vec<i64> = l.outs().iter().map(|o| o.size()).collect();
        if own != shape {
            return Err(LayoutError::Shape {
                shape: shape.to_vec(),
                why: format!(
                    "a #ttg.shared_linear layout fixes its tensor's shape by its bases, here \
                     {own:?} (Triton requires the two to be equal)"
                ),
            });
        }
        Ok(l)
    }

    /// A positive power-of-two integer field, as log2.
    fn pow2_int(&self, key: &str) -> Result<u32> {
        let v = self.int(key)?;
        log2(v).filter(|&l| l <= 30).ok_or_else(|| {
            self.err(
                key,
                format!("{v} is not a power of two up to 2^30 (the layout would not be F2-linear)"),
            )
        })
    }

    pub(super) fn swizzled_to_linear(&self, shape_log: &[u32]) -> Result<LinearLayout> {
        let rank = shape_log.len();
        let vec = self.pow2_int("vec")?;
        let per_phase = self.pow2_int("perPhase")?;
        let max_phase = self.pow2_int("maxPhase")?;
        let order = self.list("order")?;
        if order.len() != rank {
            return Err(self.err(
                "order",
                format!("has {} entries but the tensor has rank {rank}", order.len()),
            ));
        }
        let order = check_order(&order).map_err(|why| self.err("order", why))?;
        let cga = self.cga(rank)?;
        let cta = cga.per_cta(shape_log);
        let mut tile = TileBuilder::with_first(rank, "offset");
        let col = order[0];
        tile.identity("offset", col, cta[col])?;
        if rank >= 2 {
            let row = order[1];
            let cols = 1i64 << cta[col];
            for k in 0..cta[row] {
                let r = 1i64 << k;
                let phase = (r >> per_phase) & ((1i64 << max_phase) - 1);
                let mut b = vec![0; rank];
                b[row] = r;
                b[col] = (phase << vec) & (cols - 1);
                tile.push("offset", b, row, k + 1);
            }
            for &d in &order[2..] {
                tile.identity("offset", d, cta[d])?;
            }
        }
        tile.finish(shape_log, &cga, &order, Registers::Drop)
    }

    pub(super) fn nvmma_shared_to_linear(
        &self,
        shape: &[i64],
        shape_log: &[u32],
    ) -> Result<LinearLayout> {
        let rank = shape.len();
        // MLIR prints `rank` only when the CGA bases do not already say it (default 2).
        let declared = match (self.value("rank"), self.value("CGALayout")) {
            (Some(_), _) => self.int("rank")?,
            (None, Some(super::AttrValue::Lists(bases))) => bases[0].len() as i64,
            (None, _) => 2,
        };
        if declared != rank as i64 {
            return Err(LayoutError::Shape {
                shape: shape.to_vec(),
                why: format!("#ttg.nvmma_shared has rank = {declared}; the tensor has rank {rank}"),
            });
        }
        if rank < 2 {
            return Err(LayoutError::Shape {
                shape: shape.to_vec(),
                why: "#ttg.nvmma_shared tiles tensors of rank 2 or more".into(),
            });
        }
        let flag = |key: &str| -> Result<bool> {
            match self.value(key) {
                None => Ok(false),
                Some(super::AttrValue::Bool(b)) => Ok(*b),
                Some(_) => Err(self.err(key, "expected true or false")),
            }
        };
        let transposed = flag("transposed")?;
        if flag("fp4Padded")? {
            return Err(self.err(
                "fp4Padded",
                "padded fp4 layouts (with holes) are not imported: they are not F2-linear",
            ));
        }
        let bits = self.int("elementBitWidth")?;
        let bits_log = log2(bits).filter(|l| (3..=6).contains(l)).ok_or_else(|| {
            self.err(
                "elementBitWidth",
                format!("{bits}: expected 8, 16, 32 or 64"),
            )
        })?;
        let width = self.int("swizzlingByteWidth")?;
        // (log2 perPhase, log2 maxPhase), or None for no swizzle.
        let phases = match width {
            0 => None,
            32 => Some((2u32, 1u32)),
            64 => Some((1, 2)),
            128 => Some((0, 3)),
            _ => {
                return Err(self.err(
                    "swizzlingByteWidth",
                    format!("{width}: expected 0, 32, 64 or 128"),
                ))
            }
        };
        let cga = self.cga(rank)?;
        let cta = cga.per_cta(shape_log);
        let (row_dim, col_dim) = if transposed {
            (rank - 1, rank - 2)
        } else {
            (rank - 2, rank - 1)
        };
        // Rows: the row dim first, then the leading dims (collapsed), innermost first.
        let mut row_dims = vec![row_dim];
        row_dims.extend((0..rank - 2).rev());
        let rows_log: u32 = row_dims.iter().map(|&d| cta[d]).sum();
        // 16 bytes of elements per swizzle unit; a row of the tile is `width` bytes.
        let vec_log = 7 - bits_log;
        let tile_cols_log = match phases {
            Some(_) => (width.trailing_zeros() + 3) - bits_log,
            None => cta[col_dim],
        };
        if phases.is_some() && (rows_log < 3 || cta[col_dim] < tile_cols_log) {
            return Err(LayoutError::Shape {
                shape: shape.to_vec(),
                why: format!(
                    "#ttg.nvmma_shared with {width}-byte swizzling of {bits}-bit elements needs \
                     at least 8 rows of {} elements per CTA; a CTA has {} rows of {}",
                    1i64 << tile_cols_log,
                    1i64 << rows_log,
                    1i64 << cta[col_dim]
                ),
            });
        }
        let mut tile = TileBuilder::with_first(rank, "offset");
        tile.identity("offset", col_dim, tile_cols_log)?;
        let mut collapsed = 0u32;
        for &d in &row_dims {
            for k in 0..cta[d] {
                let mut b = vec![0; rank];
                b[d] = 1i64 << k;
                if let Some((per_log, max_log)) = phases {
                    let r = 1i64 << collapsed;
                    let phase = (r >> per_log) & ((1i64 << max_log) - 1);
                    b[col_dim] = phase << vec_log;
                }
                tile.push("offset", b, d, k + 1);
                collapsed += 1;
            }
        }
        tile.identity("offset", col_dim, cta[col_dim] - tile_cols_log)?;
        tile.finish(shape_log, &cga, &[], Registers::Drop)
    }
}
