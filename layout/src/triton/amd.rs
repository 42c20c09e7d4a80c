//! AMD matrix-core layouts: `amd_mfma` (CDNA, 64-lane waves), `amd_wmma` (RDNA and gfx1250,
//! 32-lane waves) and their `dot_op` operands -> `(register, lane, warp, block) -> (dim0, ..)`.
//!
//! Tensors are `M x N` (or `B x M x N`: the batch dim 0 only moves by warps). Below, "along
//! m" means identity bases walking the m dim from its next free bit.
//!
//! - `amd_mfma<{version, warpsPerCTA, instrShape = [M, N(, K)], isTransposed, tilesPerWarp,
//!   elementBitWidth}>` (older dumps spell `versionMajor`/`versionMinor`, or `MDim`/`NDim`):
//!   one instruction tile is `h` registers along m (`h` = 4, or 1 for 64-bit elements), lanes
//!   `N` along n then `64 / N` along m, then `M*N / (64 h)` registers along m; `isTransposed`
//!   swaps the roles of m and n in that tile. Then registers `tilesPerWarp[n]` along n, warps
//!   `warpsPerCTA[n]` along n, registers along n up to the whole tensor's n extent, registers
//!   `tilesPerWarp[m]` along m, warps `warpsPerCTA[m]` along m, warps along the batch dim.
//!   Worked example (checked against Triton): `version = 3, warpsPerCTA = [2, 2], instrShape
//!   = [32, 32, 8], isTransposed = true` on 64x64 gives registers `[0,1],[0,2],[0,8],[0,16]`,
//!   lanes `[1,0],[2,0],[4,0],[8,0],[16,0],[0,4]`, warps `[0,32],[32,0]`.
//! - `amd_wmma<{version, isTranspose, ctaLayout = {register = .., warp = ..}, instrShape}>`:
//!   a 16x16 tile of 32 lanes (version 1: registers at m = 2, 4, 8, lanes n 1..8 then m 1;
//!   versions 2 and 3: registers m 1, 2, 4, lanes n 1..8 then m 8; `isTranspose` swaps m and
//!   n), times the `ctaLayout` bases counted in tiles. The older `warpsPerCTA = [..]` form is
//!   warp bases along n first, then m, then the batch dim.
//! - `dot_op` of `amd_mfma`: `kWidth` registers along K, lanes `M` (A) or `N` (B) along the
//!   other dim then the rest along K, registers along K up to the tensor's K extent, registers
//!   `tilesPerWarp` along the other dim; warps as the parent (those along K land beyond the
//!   tensor and hold copies).
//! - `dot_op` of `amd_wmma`: `kWidth` registers along K, 16 lanes along the other dim, 2
//!   lanes along K (version 1: copies), registers along K up to `instrShape[2]`; then the
//!   parent's `ctaLayout` with its K component removed (register bases that become zero are
//!   dropped).
//!
//! All of them repeat a tile smaller than the tensor along registers (mfma and wmma: n first;
//! operands: K first) and zero register, lane and warp bases beyond a smaller tensor.

use super::{AttrValue, Registers, TileBuilder, TritonAttr};
use crate::arith::log2;
use crate::error::{LayoutError, Result};
use crate::linear::LinearLayout;

/// The checked fields of an `amd_mfma`, as log2 where they are sizes.
struct Mfma {
    m_log: u32,
    n_log: u32,
    transposed: bool,
    height_log: u32,
    warps: Vec<u32>,
    tiles: Vec<u32>,
}

/// The checked fields of an `amd_wmma`.
struct Wmma {
    version: i64,
    transposed: bool,
    k_log: u32,
    /// `ctaLayout` register and warp bases, counted in 16x16 tiles.
    registers: Vec<Vec<i64>>,
    warps: Vec<Vec<i64>>,
}

impl TritonAttr {
    fn flag(&self, key: &str) -> Result<bool> {
        match self.value(key) {
            None => Ok(false),
            Some(AttrValue::Bool(b)) => Ok(*b),
            Some(_) => Err(self.err(key, "expected true or false")),
        }
    }

    /// Rank 2, or 3 with a leading batch dim, as AMD's matrix layouts allow.
    fn amd_rank(&self, shape: &[i64]) -> Result<usize> {
        match shape.len() {
            2 | 3 => Ok(shape.len()),
            r => Err(LayoutError::Shape {
                shape: shape.to_vec(),
                why: format!(
                    "#ttg.{} tiles tensors of rank 2, or 3 with a batch dim; this one has rank {r}",
                    self.raw.kind
                ),
            }),
        }
    }

    /// `version` (Triton 3.4 and later) or `versionMajor` (earlier), within `lo..=hi`.
    fn amd_version(&self, lo: i64, hi: i64) -> Result<i64> {
        let key = if self.value("version").is_some() || self.value("versionMajor").is_none() {
            "version"
        } else {
            "versionMajor"
        };
        let v = self.int(key)?;
        if let Some(AttrValue::Int(minor) | AttrValue::TypedInt(minor, _)) =
            self.value("versionMinor")
        {
            if *minor < 0 {
                return Err(self.err("versionMinor", format!("{minor} is negative")));
            }
        }
        if !(lo..=hi).contains(&v) {
            return Err(self.err(key, format!("{v} is not a version {lo} to {hi}")));
        }
        Ok(v)
    }

    fn mfma_fields(&self, shape: &[i64]) -> Result<Mfma> {
        let rank = self.amd_rank(shape)?;
        self.amd_version(1, 4)?;
        let (m, n) = match (self.value("instrShape"), self.value("MDim")) {
            (Some(_), _) => {
                let instr = self.list("instrShape")?;
                if instr.len() != 2 && instr.len() != 3 {
                    return Err(self.err(
                        "instrShape",
                        format!("has {} entries: expected [M, N] or [M, N, K]", instr.len()),
                    ));
                }
                if let Some(&k) = instr.get(2) {
                    if log2(k).is_none() {
                        return Err(
                            self.err("instrShape", format!("K = {k} is not a power of two"))
                        );
                    }
                }
                (instr[0], instr[1])
            }
            (None, Some(_)) => (self.int("MDim")?, self.int("NDim")?),
            (None, None) => return Err(self.err("instrShape", "missing")),
        };
        if !matches!((m, n), (32, 32) | (16, 16) | (4, 64) | (64, 4)) {
            return Err(self.err(
                "instrShape",
                format!("{m}x{n} is not an mfma output tile: 32x32, 16x16, 4x64 or 64x4"),
            ));
        }
        let transposed = self.flag("isTransposed")?;
        if (m, n) == (64, 4) && !transposed {
            return Err(self.err("isTransposed", "a 64x4 mfma is always transposed"));
        }
        let height_log = match self.value("elementBitWidth") {
            None => 2,
            Some(_) => match self.int("elementBitWidth")? {
                32 => 2,
                64 => 0,
                b => return Err(self.err("elementBitWidth", format!("{b}: expected 32 or 64"))),
            },
        };
        let warps = self.pow2_list("warpsPerCTA", rank, shape)?;
        let tiles = if self.value("tilesPerWarp").is_some() {
            self.pow2_list("tilesPerWarp", rank, shape)?
        } else {
            vec![0; rank]
        };
        if tiles.iter().chain(&warps).any(|&t| t > 20) {
            return Err(self.err("warpsPerCTA", "more than 2^20 warps or tiles per dim"));
        }
        Ok(Mfma {
            m_log: m.trailing_zeros(),
            n_log: n.trailing_zeros(),
            transposed,
            height_log,
            warps,
            tiles,
        })
    }

    pub(super) fn mfma_to_linear(&self, shape: &[i64], shape_log: &[u32]) -> Result<LinearLayout> {
        let f = self.mfma_fields(shape)?;
        let rank = shape.len();
        let (m, n) = (rank - 2, rank - 1);
        let mut tile = TileBuilder::new(rank);
        // The tile's register-major dim and lane-major dim.
        let (reg_dim, lane_dim, lane_log) = if f.transposed {
            (n, m, f.m_log)
        } else {
            (m, n, f.n_log)
        };
        let tiles_log = (f.m_log + f.n_log) - 6 - f.height_log;
        tile.identity("register", reg_dim, f.height_log)?;
        tile.identity("lane", lane_dim, lane_log)?;
        tile.identity("lane", reg_dim, 6 - lane_log)?;
        tile.identity("register", reg_dim, tiles_log)?;
        tile.identity("register", n, f.tiles[n])?;
        tile.identity("warp", n, f.warps[n])?;
        // Triton lays mfma tiles n-contiguous over the whole tensor's n extent.
        let n_rest = shape_log[n].saturating_sub(f.n_log + f.warps[n] + f.tiles[n]);
        tile.identity("register", n, n_rest)?;
        tile.identity("register", m, f.tiles[m])?;
        tile.identity("warp", m, f.warps[m])?;
        if rank == 3 {
            tile.identity("warp", 0, f.warps[0])?;
        }
        let cga = self.cga(rank)?;
        let mut repeat = vec![n, m];
        repeat.extend((0..rank - 2).rev());
        tile.finish(shape_log, &cga, &repeat, Registers::Broadcast)
    }

    /// The `kWidth` of an AMD operand, as log2.
    fn amd_k_width(&self) -> Result<u32> {
        let kw = self.int("kWidth")?;
        log2(kw)
            .filter(|&l| l <= 6)
            .ok_or_else(|| self.err("kWidth", format!("{kw} is not a power of two 1..64")))
    }

    pub(super) fn mfma_dot_to_linear(
        &self,
        parent: &TritonAttr,
        is_a: bool,
        shape: &[i64],
        shape_log: &[u32],
    ) -> Result<LinearLayout> {
        let f = parent.mfma_fields(shape)?;
        let kw_log = self.amd_k_width()?;
        let rank = shape.len();
        let (k, nonk) = if is_a {
            (rank - 1, rank - 2)
        } else {
            (rank - 2, rank - 1)
        };
        let nonk_log = if is_a { f.m_log } else { f.n_log };
        let mut tile = TileBuilder::new(rank);
        tile.identity("register", k, kw_log)?;
        tile.identity("lane", nonk, nonk_log)?;
        tile.identity("lane", k, 6 - nonk_log)?;
        let mut k_tile_log = 6 - nonk_log + kw_log;
        // The 64x64 operand of a 4x64 (64x4) mfma repeats 16 times along K.
        let wide = (f.m_log, f.n_log) == (6, 2) && is_a || (f.m_log, f.n_log) == (2, 6) && !is_a;
        if wide {
            tile.identity("register", k, 4)?;
            k_tile_log += 4;
        }
        tile.identity("register", k, shape_log[k].saturating_sub(k_tile_log))?;
        tile.identity("register", nonk, f.tiles[nonk])?;
        for d in (0..rank).rev() {
            tile.identity("warp", d, f.warps[d])?;
        }
        let cga = parent.cga(rank)?.broadcast_dim(k);
        let mut repeat = vec![k, nonk];
        repeat.extend((0..rank - 2).rev());
        tile.finish(shape_log, &cga, &repeat, Registers::Broadcast)
    }

    /// A `ctaLayout` entry (`register` or `warp`): bases of `rank` entries, each 0 or a power
    /// of two up to 2^20 (tiles).
    fn wmma_bases(
        &self,
        dict: &[(String, AttrValue)],
        key: &str,
        rank: usize,
    ) -> Result<Vec<Vec<i64>>> {
        let field = format!("ctaLayout.{key}");
        let bases = match dict.iter().find(|(k, _)| k == key).map(|(_, v)| v) {
            None => return Ok(Vec::new()),
            Some(AttrValue::List(xs)) if xs.is_empty() => Vec::new(),
            Some(AttrValue::Lists(xss)) => xss.clone(),
            Some(_) => return Err(self.err(&field, "expected a list of bases such as [[1, 0]]")),
        };
        for (i, b) in bases.iter().enumerate() {
            if b.len() != rank {
                return Err(self.err(
                    &field,
                    format!("basis {i} has {} entries, not the rank {rank}", b.len()),
                ));
            }
            if let Some(v) = b
                .iter()
                .find(|&&v| v != 0 && log2(v).is_none_or(|l| l > 20))
            {
                return Err(self.err(
                    &field,
                    format!(
                        "basis {i} moves by {v} tiles: expected 0 or a power of two up to 2^20"
                    ),
                ));
            }
        }
        Ok(bases)
    }

    fn wmma_fields(&self, shape: &[i64]) -> Result<Wmma> {
        let rank = self.amd_rank(shape)?;
        let version = self.amd_version(1, 3)?;
        let transposed = self.flag("isTranspose")?;
        let instr = match self.value("instrShape") {
            Some(_) => self.list("instrShape")?,
            None => vec![16, 16, 16],
        };
        let k_log = match instr[..] {
            [16, 16, k] => log2(k).filter(|&l| (2..=7).contains(&l)),
            _ => None,
        }
        .ok_or_else(|| {
            self.err(
                "instrShape",
                format!("{instr:?}: expected [16, 16, K] with K a power of two 4..128"),
            )
        })?;
        let (registers, warps) = match (self.value("ctaLayout"), self.value("warpsPerCTA")) {
            (Some(_), Some(_)) => {
                return Err(self.err(
                    "warpsPerCTA",
                    "give either ctaLayout or warpsPerCTA, not both",
                ))
            }
            (Some(AttrValue::Dict(d)), None) => {
                if let Some((k, _)) = d.iter().find(|(k, _)| k != "register" && k != "warp") {
                    return Err(self.err(
                        &format!("ctaLayout.{k}"),
                        "unknown entry; ctaLayout has register and warp",
                    ));
                }
                (
                    self.wmma_bases(d, "register", rank)?,
                    self.wmma_bases(d, "warp", rank)?,
                )
            }
            (Some(_), None) => {
                return Err(self.err("ctaLayout", "expected {register = [..], warp = [..]}"))
            }
            (None, _) => {
                // The older spelling: warps along n first, then m, then the batch dim.
                let wpc = self.pow2_list("warpsPerCTA", rank, shape)?;
                if wpc.iter().any(|&w| w > 20) {
                    return Err(self.err("warpsPerCTA", "more than 2^20 warps per dim"));
                }
                let mut warps = Vec::new();
                for d in (0..rank).rev() {
                    for bit in 0..wpc[d] {
                        let mut b = vec![0; rank];
                        b[d] = 1i64 << bit;
                        warps.push(b);
                    }
                }
                (Vec::new(), warps)
            }
        };
        if let Some(AttrValue::List(t)) = self.value("tilesPerWarp") {
            if t.iter().any(|&x| x != 1) {
                return Err(self.err("tilesPerWarp", "only [1, 1] is imported for #ttg.amd_wmma"));
            }
        }
        Ok(Wmma {
            version,
            transposed,
            k_log,
            registers,
            warps,
        })
    }

    /// Appends `ctaLayout` bases counted in tiles of `2^tile_bits[d]` along each dim.
    fn push_tiles(tile: &mut TileBuilder, name: &str, bases: &[Vec<i64>], tile_bits: &[u32]) {
        for b in bases {
            let scaled = b.iter().zip(tile_bits).map(|(&v, &t)| v << t).collect();
            tile.push_any(name, scaled);
        }
    }

    /// Raises each dim's extent to the tile's times the `ctaLayout`'s (a layout product).
    fn raise_by_tiles(tile: &mut TileBuilder, all: &[&Vec<i64>], tile_bits: &[u32]) {
        for (d, &t) in tile_bits.iter().enumerate() {
            let or = all.iter().fold(0i64, |acc, b| acc | b[d]);
            tile.raise_bits(d, t + (64 - or.leading_zeros()));
        }
    }

    pub(super) fn wmma_to_linear(&self, shape: &[i64], shape_log: &[u32]) -> Result<LinearLayout> {
        let f = self.wmma_fields(shape)?;
        let rank = shape.len();
        let (m, n) = if f.transposed {
            (rank - 1, rank - 2)
        } else {
            (rank - 2, rank - 1)
        };
        let mut tile = TileBuilder::new(rank);
        let unit = |d: usize, v: i64| {
            let mut b = vec![0i64; rank];
            b[d] = v;
            b
        };
        let (regs, last_lane): (&[i64], i64) = if f.version == 1 {
            (&[2, 4, 8], 1)
        } else {
            (&[1, 2, 4], 8)
        };
        for &r in regs {
            tile.push_any("register", unit(m, r));
        }
        for l in [1, 2, 4, 8] {
            tile.push_any("lane", unit(n, l));
        }
        tile.push_any("lane", unit(m, last_lane));
        let mut tile_bits = vec![0u32; rank];
        tile_bits[rank - 2] = 4;
        tile_bits[rank - 1] = 4;
        Self::push_tiles(&mut tile, "register", &f.registers, &tile_bits);
        Self::push_tiles(&mut tile, "warp", &f.warps, &tile_bits);
        let all: Vec<&Vec<i64>> = f.registers.iter().chain(&f.warps).collect();
        Self::raise_by_tiles(&mut tile, &all, &tile_bits);
        let cga = self.cga(rank)?;
        let repeat: Vec<usize> = (0..rank).rev().collect();
        tile.finish(shape_log, &cga, &repeat, Registers::Broadcast)
    }

    pub(super) fn wmma_dot_to_linear(
        &self,
        parent: &TritonAttr,
        is_a: bool,
        shape: &[i64],
        shape_log: &[u32],
    ) -> Result<LinearLayout> {
        let f = parent.wmma_fields(shape)?;
        let kw_log = self.amd_k_width()?;
        let rank = shape.len();
        let (k, nonk) = if is_a {
            (rank - 1, rank - 2)
        } else {
            (rank - 2, rank - 1)
        };
        let mut tile = TileBuilder::new(rank);
        tile.identity("register", k, kw_log)?;
        tile.identity("lane", nonk, 4)?;
        if f.version == 1 {
            tile.zeros("lane", 1);
        } else {
            tile.identity("lane", k, 1)?;
        }
        tile.identity("register", k, f.k_log.saturating_sub(1 + kw_log))?;
        // The parent's CTA bases without their K component; register bases left all zero go.
        let project = |bases: &[Vec<i64>], drop_zero: bool| -> Vec<Vec<i64>> {
            bases
                .iter()
                .map(|b| {
                    let mut b = b.clone();
                    b[k] = 0;
                    b
                })
                .filter(|b| !drop_zero || b.iter().any(|&v| v != 0))
                .collect()
        };
        let registers = project(&f.registers, true);
        let warps = project(&f.warps, false);
        let mut tile_bits = vec![0u32; rank];
        tile_bits[nonk] = tile.bits(nonk);
        let mut moved = tile_bits.clone();
        moved[k] = 0;
        Self::push_tiles(&mut tile, "register", &registers, &moved);
        Self::push_tiles(&mut tile, "warp", &warps, &moved);
        let all: Vec<&Vec<i64>> = registers.iter().chain(&warps).collect();
        let mut others = moved.clone();
        others[k] = tile.bits(k);
        Self::raise_by_tiles(&mut tile, &all, &others);
        let cga = parent.cga(rank)?.broadcast_dim(k);
        let mut repeat = vec![k, nonk];
        repeat.extend((0..rank - 2).rev());
        tile.finish(shape_log, &cga, &repeat, Registers::Broadcast)
    }
}

#[cfg(test)]
mod tests {
    use super::super::parse_attr;
    use crate::linear::LinearLayout;

    fn import(text: &str, shape: &[i64]) -> LinearLayout {
        parse_attr(text).and_then(|a| a.to_linear(shape)).unwrap()
    }

    fn refusal(text: &str, shape: &[i64], field: &str) {
        let e = parse_attr(text)
            .and_then(|a| a.to_linear(shape))
            .expect_err(text)
            .to_string();
        assert!(e.contains(field), "{e:?} does not name {field}");
    }

    #[test]
    fn older_mfma_spellings_are_the_same_layout() {
        let new = "#ttg.amd_mfma<{version = 3, warpsPerCTA = [2, 2], instrShape = [32, 32, 8], isTransposed = true}>";
        let major = "#ttg.amd_mfma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [32, 32], isTransposed = true}>";
        let mdim = "#ttg.amd_mfma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [2, 2], MDim = 32, NDim = 32, isTransposed = true}>";
        for shape in [[64, 64], [16, 256], [256, 8]] {
            assert_eq!(import(major, &shape), import(new, &shape));
            assert_eq!(import(mdim, &shape), import(new, &shape));
        }
        // The module doc's worked example.
        let l = import(new, &[64, 64]);
        assert_eq!(
            l.in_dim("register").unwrap().bases,
            vec![vec![0, 1], vec![0, 2], vec![0, 8], vec![0, 16]]
        );
        assert_eq!(
            l.in_dim("warp").unwrap().bases,
            vec![vec![0, 32], vec![32, 0]]
        );
    }

    #[test]
    fn older_wmma_warps_are_ctalayout_warp_bases() {
        let old = "#ttg.amd_wmma<{version = 2, isTranspose = true, warpsPerCTA = [2, 4]}>";
        let new = "#ttg.amd_wmma<{version = 2, isTranspose = true, ctaLayout = {warp = [[0, 1], [0, 2], [1, 0]]}}>";
        assert_eq!(import(old, &[64, 128]), import(new, &[64, 128]));
    }

    #[test]
    fn bad_amd_fields_are_refused_by_name() {
        let m = "#ttg.amd_mfma<{version = 3, warpsPerCTA = [2, 2], instrShape = [32, 32, 8], isTransposed = false}>";
        refusal(
            &m.replace("[32, 32, 8]", "[32, 16, 8]"),
            &[64, 64],
            "instrShape",
        );
        refusal(
            &m.replace("[32, 32, 8]", "[64, 4, 4]"),
            &[64, 64],
            "isTransposed",
        );
        refusal(
            &m.replace("version = 3", "version = 5"),
            &[64, 64],
            "version",
        );
        refusal(&m.replace("[2, 2]", "[2, 2, 1]"), &[64, 64], "warpsPerCTA");
        refusal(
            &m.replace("}>", ", elementBitWidth = 16}>"),
            &[64, 64],
            "elementBitWidth",
        );
        refusal(m, &[64], "rank");
        let w = "#ttg.amd_wmma<{version = 1, isTranspose = false, ctaLayout = {warp = [[1, 0]]}}>";
        refusal(
            &w.replace("warp = [[1, 0]]", "warp = [[3, 0]]"),
            &[32, 32],
            "ctaLayout.warp",
        );
        refusal(&w.replace("warp =", "wrap ="), &[32, 32], "ctaLayout.wrap");
        refusal(
            &w.replace("}}>", "}, instrShape = [16, 16, 3]}>"),
            &[32, 32],
            "instrShape",
        );
        refusal(
            &w.replace("}}>", "}, warpsPerCTA = [1, 1]}>"),
            &[32, 32],
            "warpsPerCTA",
        );
        let dot = format!("#ttg.dot_op<{{opIdx = 0, parent = {m}, kWidth = 3}}>");
        refusal(&dot, &[64, 64], "kWidth");
    }
}
