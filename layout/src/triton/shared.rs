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
//! `nvmma_shared<{swizzlingByteWidth, transposed, elementBitWidth, rank, fp4Padded}>` (the
//! wgmma/TMA swizzles), as Triton 3.9 builds it (`nvmmaSharedToLinearLayout`), per CTA:
//!
//! 1. The TMA block: the CTA's shape with every dim cut to at most 256 and the contiguous dim
//!    (the last, or dim 0 when `transposed`) exactly one swizzle row, `8 * swizzlingByteWidth
//!    / elementBitWidth` elements (a narrower CTA is refused).
//! 2. Swizzled (32, 64, 128 bytes): the block collapses to 2-D, rows = the product of all dims
//!    but the last, columns = the last (swapped when `transposed`). An 8-row core tiles it:
//!    offsets walk one row of columns, then rows `2^k` (k < 3) whose 16-byte column groups are
//!    XOR-ed with the phase `(row / perPhase) mod maxPhase` ((perPhase, maxPhase) = (4, 2),
//!    (2, 4), (1, 8) for 32, 64, 128 bytes), then the remaining rows, then remaining columns.
//!    The 2-D offsets are read back row-major on the block's shape, rotated left by one when
//!    `transposed` (dim 0 last) and rotated back. At rank 3 and up with `transposed`, the
//!    columns thus hold dim 0 and dim 1 together, Triton's convention.
//! 3. No swizzle (0 bytes): the block walked row-major; when `transposed` it is the rotated
//!    block, whose dim `j` Triton labels `dim(j - 1 mod rank)`: from rank 3 on, a block dim
//!    lands on a dim of another size, so some offset bits are zero (padding) and missing ones
//!    come last (from the last dim down).
//! 4. Dims longer than the block repeat it (from dim 0 up; from the last dim down without
//!    swizzle); offset bits past the CTA's shape are zero.
//!
//! `fp4Padded` (only with 128 bytes and 8-bit elements): of every 16 offsets along a row the
//! upper 8 are padding, which Triton maps onto the same elements as the lower 8 (a zero
//! offset basis: a buffer twice the data, every element at two offsets).
//!
//! Example (checked against Triton 3.9's Gluon): `swizzlingByteWidth = 32, transposed = true,
//! elementBitWidth = 64, rank = 3` on 4x8x8 gives offset bases `[1,0,0],[2,0,0],[0,1,0],
//! [0,2,0],[2,4,0],[0,0,1],[0,0,2],[0,0,4]`: rows of 4 elements along dim 0, dim 1 next in
//! the same 32-element columns, the third row bit XOR-ing dim 0 by 2.
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
        let flag = |key: &str| -> Result<bool> {
            match self.value(key) {
                None => Ok(false),
                Some(super::AttrValue::Bool(b)) => Ok(*b),
                Some(_) => Err(self.err(key, "expected true or false")),
            }
        };
        let bits = self.int("elementBitWidth")?;
        let bits_log = log2(bits).filter(|l| (3..=6).contains(l)).ok_or_else(|| {
            self.err(
                "elementBitWidth",
                format!("{bits}: expected 8, 16, 32 or 64"),
            )
        })?;
        let width = self.int("swizzlingByteWidth")?;
        // (log2 swizzle row bytes, log2 perPhase, log2 maxPhase), or None for no swizzle.
        let swizzle = match width {
            0 => None,
            32 => Some((5, 2, 1)),
            64 => Some((6, 1, 2)),
            128 => Some((7, 0, 3)),
            _ => {
                return Err(self.err(
                    "swizzlingByteWidth",
                    format!("{width}: expected 0, 32, 64 or 128"),
                ))
            }
        };
        let fp4 = flag("fp4Padded")?;
        if fp4 && (width, bits) != (128, 8) {
            return Err(self.err(
                "fp4Padded",
                "Triton 3.9 builds padded fp4 layouts only with swizzlingByteWidth = 128 and \
                 elementBitWidth = 8",
            ));
        }
        let nv = Nvmma {
            rank,
            transposed: flag("transposed")?,
            fp4,
            bits_log,
            swizzle,
        };
        let cga = self.cga(rank)?;
        let cta = cga.per_cta(shape_log);
        if cta.iter().sum::<u32>() > 62 {
            return Err(LayoutError::Shape {
                shape: shape.to_vec(),
                why: "a CTA holds more than 2^62 elements: more offset bits than a linear \
                      layout has"
                    .into(),
            });
        }
        let block = nv.tma_block(&cta).map_err(|why| LayoutError::Shape {
            shape: shape.to_vec(),
            why,
        })?;
        let offsets = match swizzle {
            None => nv.unswizzled(&block, &cta),
            Some(_) => nv
                .swizzled(&block, &cta)
                .map_err(|why| LayoutError::Shape {
                    shape: shape.to_vec(),
                    why,
                })?,
        };
        let mut tile = TileBuilder::with_first(rank, "offset");
        for b in offsets {
            tile.push_any("offset", b);
        }
        tile.finish(shape_log, &cga, &[], Registers::Drop)
    }
}

/// An `nvmma_shared` attribute's parameters; sizes are log2 throughout.
struct Nvmma {
    rank: usize,
    transposed: bool,
    fp4: bool,
    bits_log: u32,
    /// (log2 swizzle row bytes, log2 perPhase, log2 maxPhase), `None` for no swizzle.
    swizzle: Option<(u32, u32, u32)>,
}

/// The basis moving `dim` by `2^bit`.
fn unit(rank: usize, dim: usize, bit: u32) -> Vec<i64> {
    let mut b = vec![0; rank];
    b[dim] = 1i64 << bit;
    b
}

impl Nvmma {
    /// The contiguous dim: the last, or the first when transposed.
    fn contig(&self) -> usize {
        if self.transposed {
            0
        } else {
            self.rank - 1
        }
    }

    /// `shape` rotated left by one when transposed (the contiguous dim 0 moved last).
    fn rotated(&self, shape: &[u32]) -> Vec<u32> {
        let mut s = shape.to_vec();
        if self.transposed {
            s.rotate_left(1);
        }
        s
    }

    /// Triton's TMA block of a CTA's shape (packed): every dim at most 256, the contiguous
    /// dim exactly one swizzle row (`8 * swizzle bytes / element bits` elements), fp4 padding
    /// counted while capping. Errors when the CTA is narrower than a swizzle row.
    fn tma_block(&self, cta: &[u32]) -> std::result::Result<Vec<u32>, String> {
        let c = self.contig();
        let mut t = cta.to_vec();
        t[c] += u32::from(self.fp4);
        for x in &mut t {
            *x = (*x).min(8);
        }
        if let Some((row_bytes, _, _)) = self.swizzle {
            let row = row_bytes + 3 - self.bits_log;
            if t[c] < row {
                return Err(format!(
                    "#ttg.nvmma_shared with {}-byte swizzling of {}-bit elements needs at least \
                     {} elements per CTA along dim{c} (the contiguous dim); Triton refuses \
                     fewer",
                    1u32 << row_bytes,
                    1u32 << self.bits_log,
                    1i64 << row.saturating_sub(u32::from(self.fp4))
                ));
            }
            t[c] = row;
        }
        t[c] -= u32::from(self.fp4);
        Ok(t)
    }

    /// No swizzle: the TMA block walked row-major (rotated when transposed), then the rest of
    /// the CTA dim by dim from the last. Triton 3.9 labels the rotated block's dim `j` as
    /// `dim(j - 1 mod rank)` when transposed, so at rank 3 and up a block dim lands on a dim of
    /// another size: the extra bits are zero (padding) and missing ones come last.
    fn unswizzled(&self, block: &[u32], cta: &[u32]) -> Vec<Vec<i64>> {
        let r = self.rank;
        let s = self.rotated(block);
        let label = |j: usize| if self.transposed { (j + r - 1) % r } else { j };
        let mut used = vec![0u32; r];
        let mut out = Vec::new();
        for j in (0..r).rev() {
            out.extend((0..s[j]).map(|k| unit(r, label(j), k)));
            used[label(j)] = s[j];
        }
        for d in (0..r).rev() {
            out.extend((used[d]..cta[d]).map(|k| unit(r, d, k)));
        }
        out
    }

    /// Swizzled: the TMA block collapsed to 2-D (rows = the leading dims, columns = the last;
    /// swapped when transposed), tiled by the 8-row swizzle core, read back row-major on the
    /// rotated block and un-rotated, then the rest of the CTA dim by dim from dim 0.
    fn swizzled(&self, block: &[u32], cta: &[u32]) -> std::result::Result<Vec<Vec<i64>>, String> {
        let r = self.rank;
        let (row_bytes, per_log, max_log) = self.swizzle.expect("swizzled");
        let (mut rows, mut cols) = (block[..r - 1].iter().sum::<u32>(), block[r - 1]);
        if self.transposed {
            std::mem::swap(&mut rows, &mut cols);
        }
        let core_cols = row_bytes + 3 - self.bits_log;
        if rows < 3 || cols + u32::from(self.fp4) < core_cols {
            return Err(format!(
                "#ttg.nvmma_shared with {}-byte swizzling needs the TMA block (each dim at most \
                 256, the contiguous dim one swizzle row) to collapse to at least 8 rows of {} \
                 elements; here it is {} rows of {} elements (Triton refuses it)",
                1u32 << row_bytes,
                1i64 << (core_cols - u32::from(self.fp4)),
                1i64 << rows,
                1i64 << cols
            ));
        }
        // fp4 padding: of every 16 offsets the upper 8 are holes, mapped by Triton onto the
        // same columns as the lower 8.
        let pack = |c: i64| if self.fp4 { c / 16 * 8 + c % 8 } else { c };
        let vec_log = 7 - self.bits_log;
        let mut core: Vec<(i64, i64)> = (0..core_cols).map(|k| (0, pack(1 << k))).collect();
        for k in 0..3 {
            let phase = (1i64 << k >> per_log) & ((1 << max_log) - 1);
            core.push((1 << k, pack(phase << vec_log)));
        }
        core.extend((3..rows).map(|k| (1i64 << k, 0)));
        core.extend((core_cols - u32::from(self.fp4)..cols).map(|k| (0, 1i64 << k)));
        let read = self.rotated(block);
        let mut out = Vec::new();
        for (row, col) in core {
            let mut flat = row << cols | col;
            let mut v = vec![0i64; r];
            for d in (0..r).rev() {
                v[d] = flat & ((1 << read[d]) - 1);
                flat >>= read[d];
            }
            if self.transposed {
                v.rotate_right(1);
            }
            out.push(v);
        }
        for d in 0..r {
            out.extend((block[d]..cta[d]).map(|k| unit(r, d, k)));
        }
        Ok(out)
    }
}
