//! Swizzles: CuTe `Sw<B,M,S>`, TIRx's swizzle parameters, Triton's `swizzled_shared` parameters,
//! and swizzled layouts (a swizzle applied after a CuTe layout).
//!
//! `Sw<B,M,S>` acts on an integer offset `o`. With `yyy = (2^B - 1) << (M + max(0,S))`,
//! `sw(o) = o ^ ((o & yyy) >> S)` for `S >= 0` (a left shift by `-S` when `S < 0`): the B bits
//! starting at bit `M + S` are XORed into the B bits starting at bit `M`. It is an involution
//! whenever the two bit ranges do not overlap (`|S| >= B`) and F2-linear always.
//! Example: `Sw<3,4,3>` maps `o = 0x80` (bit 7 set) to `0x80 ^ 0x10 = 0x90`.
//!
//! TIRx writes the same family as `per_element = M, swizzle_len = B, atom_len = S`:
//! `addr(m) = f(m >> M) * 2^M + (m mod 2^M)`, `f(x) = x ^ ((x & ((2^B-1) << S)) >> S)`.
//!
//! Triton's `#ttg.swizzled_shared<{vec, perPhase, maxPhase, order}>` on a row of `C` elements
//! (along `order[0]`): `phase = (i / perPhase) mod maxPhase`, column `j` is stored at
//! `((j / vec) XOR phase) * vec + j mod vec`. For powers of two it is `Sw<log2 maxPhase,
//! log2 vec, log2 C + log2 perPhase - log2 vec>` after the row-major layout.

use std::fmt;

use crate::arith::{self, log2};
use crate::cute::CuteLayout;
use crate::error::{LayoutError, Result};

/// CuTe's `Swizzle<B,M,S>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Swizzle {
    bits: u32,
    base: u32,
    shift: i32,
}

/// Largest bit position a swizzle may touch (offsets are non-negative i64).
const MAX_BIT: i64 = 62;

/// The highest bit `Sw<B,M,S>` touches, `B + M + |S| - 1` (B counted as at least 1, so that
/// `M + |S|` stays below 63 and the masks in range), in a width no sum overflows.
fn highest_bit(bits: i64, base: i64, shift: i64) -> i128 {
    i128::from(bits.max(1)) + i128::from(base) + i128::from(shift).abs() - 1
}

impl Swizzle {
    /// `Sw<B,M,S>`; all touched bits must lie at or below bit 62. It touches bits `M..M+B`
    /// and `M+|S|..M+|S|+B`, so its highest is `B + M + |S| - 1` (with `B` 0 it touches
    /// none, and `M + |S|` is still held below 63 so its masks stay in range).
    pub fn new(bits: u32, base: u32, shift: i32) -> Result<Swizzle> {
        let hi = highest_bit(bits.into(), base.into(), shift.into());
        if hi > MAX_BIT.into() {
            return Err(LayoutError::invalid(
                format!("Sw<{bits},{base},{shift}>"),
                format!("it touches bit {hi}, beyond the supported bit {MAX_BIT}"),
            ));
        }
        Ok(Swizzle { bits, base, shift })
    }

    /// [`Swizzle::new`] from parsed integers of any size: one past the supported bits is refused
    /// as such, however large (`Sw<3,4,2^63-1>` touches bit 2^63 + 5).
    pub fn from_i64(bits: i64, base: i64, shift: i64) -> Result<Swizzle> {
        if bits < 0 || base < 0 {
            return Err(LayoutError::invalid(
                format!("Sw<{bits},{base},{shift}>"),
                "B and M must be >= 0",
            ));
        }
        let hi = highest_bit(bits, base, shift);
        match (
            u32::try_from(bits),
            u32::try_from(base),
            i32::try_from(shift),
        ) {
            (Ok(b), Ok(m), Ok(s)) if hi <= i128::from(MAX_BIT) => Swizzle::new(b, m, s),
            _ => Err(LayoutError::invalid(
                format!("Sw<{bits},{base},{shift}>"),
                format!("it touches bit {hi}, beyond the supported bit {MAX_BIT}"),
            )),
        }
    }

    /// The identity swizzle `Sw<0,0,0>`.
    pub fn identity() -> Swizzle {
        Swizzle {
            bits: 0,
            base: 0,
            shift: 0,
        }
    }

    /// B: number of bits XORed.
    pub fn bits(&self) -> u32 {
        self.bits
    }

    /// M: number of low bits left alone (the vector of `2^M` elements).
    pub fn base(&self) -> u32 {
        self.base
    }

    /// S: distance between the source and destination bit ranges.
    pub fn shift(&self) -> i32 {
        self.shift
    }

    fn mask(&self) -> i64 {
        (1i64 << self.bits) - 1
    }

    /// `yyy`: the source bits.
    pub fn source_mask(&self) -> i64 {
        self.mask() << (self.base as i64 + (self.shift as i64).max(0))
    }

    /// `zzz`: the destination bits.
    pub fn dest_mask(&self) -> i64 {
        self.mask() << (self.base as i64 - (self.shift as i64).min(0))
    }

    /// `sw(o)`; errors on a negative offset (swizzles act on addresses).
    pub fn apply(&self, o: i64) -> Result<i64> {
        if o < 0 {
            return Err(LayoutError::invalid(
                format!("offset {o}"),
                format!("{self} acts on non-negative offsets"),
            ));
        }
        let moved = o & self.source_mask();
        Ok(if self.shift >= 0 {
            o ^ (moved >> self.shift)
        } else {
            o ^ (moved << -self.shift)
        })
    }

    /// True when the source and destination bit ranges are disjoint (then `sw(sw(o)) == o`).
    pub fn is_involution(&self) -> bool {
        self.source_mask() & self.dest_mask() == 0 || self.bits == 0
    }
}

impl fmt::Display for Swizzle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Sw<{},{},{}>", self.bits, self.base, self.shift)
    }
}

/// TIRx's swizzle parameters (`per_element`, `swizzle_len`, `atom_len`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TirxSwizzle {
    /// Low address bits left alone (M).
    pub per_element: u32,
    /// Number of bits XORed (B).
    pub swizzle_len: u32,
    /// Shift between source and destination bits (S).
    pub atom_len: u32,
}

impl TirxSwizzle {
    /// TIRx's own formula: `f(m >> M) * 2^M + (m mod 2^M)`.
    pub fn apply(&self, m: i64) -> Result<i64> {
        self.to_cute()?;
        if m < 0 {
            return Err(LayoutError::invalid(
                format!("address {m}"),
                "TIRx swizzles act on non-negative addresses",
            ));
        }
        let x = m >> self.per_element;
        let mask = ((1i64 << self.swizzle_len) - 1) << self.atom_len;
        let f = x ^ ((x & mask) >> self.atom_len);
        Ok((f << self.per_element) + (m & ((1i64 << self.per_element) - 1)))
    }

    /// The identical CuTe swizzle `Sw<swizzle_len, per_element, atom_len>`.
    pub fn to_cute(&self) -> Result<Swizzle> {
        Swizzle::new(self.swizzle_len, self.per_element, self.atom_len as i32)
    }

    /// The TIRx parameters of a CuTe swizzle with `S >= 0`.
    pub fn from_cute(sw: &Swizzle) -> Result<TirxSwizzle> {
        let atom_len = u32::try_from(sw.shift()).map_err(|_| {
            LayoutError::not_representable("TIRx swizzle", format!("{sw} has a negative shift"))
        })?;
        Ok(TirxSwizzle {
            per_element: sw.base(),
            swizzle_len: sw.bits(),
            atom_len,
        })
    }
}

/// Triton's `swizzled_shared` parameters.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TritonSwizzle {
    /// Elements per vector.
    pub vec: i64,
    /// Rows sharing one phase.
    pub per_phase: i64,
    /// Number of distinct phases.
    pub max_phase: i64,
    /// Dimension order, fastest first.
    pub order: Vec<usize>,
}

impl TritonSwizzle {
    /// Checks positive parameters and that `order` is a permutation of `0..rank`.
    pub fn new(
        vec: i64,
        per_phase: i64,
        max_phase: i64,
        order: Vec<usize>,
    ) -> Result<TritonSwizzle> {
        for (name, v) in [
            ("vec", vec),
            ("perPhase", per_phase),
            ("maxPhase", max_phase),
        ] {
            if v < 1 {
                return Err(LayoutError::invalid(
                    format!("swizzled_shared {name}"),
                    format!("{v} is below 1"),
                ));
            }
        }
        let mut seen = order.clone();
        seen.sort_unstable();
        if seen != (0..order.len()).collect::<Vec<_>>() {
            return Err(LayoutError::invalid(
                format!("swizzled_shared order {order:?}"),
                "it is not a permutation of 0..rank",
            ));
        }
        Ok(TritonSwizzle {
            vec,
            per_phase,
            max_phase,
            order,
        })
    }

    /// Element offset of a 2-D coordinate `(i, j)` (row `i` along `order[1]`, column `j` along
    /// `order[0]`) in a tile of `cols` columns: definition 4.11 of the Linear Layouts paper.
    pub fn offset_2d(&self, i: i64, j: i64, cols: i64) -> Result<i64> {
        let phase = (i / self.per_phase) % self.max_phase;
        let col = (((j / self.vec) ^ phase) * self.vec) ^ (j % self.vec);
        arith::add(
            arith::mul(i, cols, "swizzled_shared offset")?,
            col,
            "swizzled_shared offset",
        )
    }

    /// The equal `Sw<B,M,S>` after a row-major layout with `cols` columns, when every parameter
    /// is a power of two and the swizzle stays inside a row (`vec * maxPhase <= cols`).
    pub fn to_cute(&self, cols: i64) -> Result<Swizzle> {
        let why = |r: &str| LayoutError::not_representable("CuTe swizzle", r.to_string());
        let (v, p, mp, c) = (
            log2(self.vec),
            log2(self.per_phase),
            log2(self.max_phase),
            log2(cols),
        );
        let (Some(v), Some(p), Some(mp), Some(c)) = (v, p, mp, c) else {
            return Err(why(
                "vec, perPhase, maxPhase and the row length must all be powers of two",
            ));
        };
        if self.vec * self.max_phase > cols {
            return Err(why(
                "vec * maxPhase exceeds the row length, so the XOR leaves the row",
            ));
        }
        Swizzle::new(mp, v, (c + p) as i32 - v as i32)
    }
}

/// `Sw<B,M,S> o L`: the offset is `sw(L(c))`; with an offset `o` (CuTe's `Sw o o o L`, a
/// slice of a swizzled layout) it is `sw(o + L(c))`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SwizzledLayout {
    swizzle: Swizzle,
    offset: i64,
    layout: CuteLayout,
}

impl SwizzledLayout {
    /// `Sw o L`; every offset `L` reaches must be non-negative (see
    /// [`SwizzledLayout::with_offset`]).
    pub fn new(swizzle: Swizzle, layout: CuteLayout) -> Result<SwizzledLayout> {
        SwizzledLayout::with_offset(swizzle, 0, layout)
    }

    /// `Sw o offset o L`. A swizzle acts on addresses, so every offset the layout reaches,
    /// `offset + L(c)`, must be non-negative; strides may be negative when the offset makes up
    /// for them, as in CuTe. The smallest is `offset + sum (e-1)*d` over the negative strides
    /// (a mode of extent 1 never contributes): `Sw<3,3,3> o 511 o (8,64):(-64,-1)` reaches
    /// 511 - 448 - 63 = 0, so it is accepted; `Sw<3,3,3> o 510 o (8,64):(-64,-1)` is not.
    pub fn with_offset(
        swizzle: Swizzle,
        offset: i64,
        layout: CuteLayout,
    ) -> Result<SwizzledLayout> {
        let smallest = layout
            .flat_modes()
            .iter()
            .filter(|&&(_, d)| d < 0)
            .fold(offset as i128, |acc, &(e, d)| {
                acc.saturating_add((e as i128 - 1) * d as i128)
            });
        if smallest < 0 {
            let what = if offset == 0 {
                format!("{swizzle} o {layout}")
            } else {
                format!("{swizzle} o {offset} o {layout}")
            };
            return Err(LayoutError::invalid(
                what,
                format!(
                    "a swizzle acts on addresses, so every offset the layout reaches must be \
                     non-negative, but the smallest is {smallest} (the offset {offset} plus \
                     (extent-1)*stride of each negative stride)"
                ),
            ));
        }
        Ok(SwizzledLayout {
            swizzle,
            offset,
            layout,
        })
    }

    /// The offset added before the swizzle (0 unless the layout is a slice).
    pub fn offset(&self) -> i64 {
        self.offset
    }

    /// The swizzle.
    pub fn swizzle(&self) -> &Swizzle {
        &self.swizzle
    }

    /// The layout before the swizzle.
    pub fn layout(&self) -> &CuteLayout {
        &self.layout
    }

    /// `sw(L(i))` for a colexicographic index.
    pub fn eval_index(&self, i: i64) -> Result<i64> {
        let x = crate::arith::add(self.offset, self.layout.eval_index(i)?, "swizzled offset")?;
        self.swizzle.apply(x)
    }

    /// `sw(L(i))` for every flat index of the domain, in order ([`SwizzledLayout::eval_index`]
    /// for all points at once).
    pub fn eval_all(&self) -> Result<Vec<i64>> {
        self.layout
            .eval_all()
            .into_iter()
            .map(|x| {
                self.swizzle
                    .apply(crate::arith::add(self.offset, x, "swizzled offset")?)
            })
            .collect()
    }

    /// `sw(L(c))` for a coordinate of a logical shape (column-major flattening).
    pub fn eval(&self, logical_shape: &[i64], coord: &[i64]) -> Result<i64> {
        let x = self.layout.eval(logical_shape, coord)?;
        self.swizzle
            .apply(crate::arith::add(self.offset, x, "swizzled offset")?)
    }
}

impl fmt::Display for SwizzledLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.offset == 0 {
            write!(f, "{} o {}", self.swizzle, self.layout)
        } else {
            write!(f, "{} o {} o {}", self.swizzle, self.offset, self.layout)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Swizzle;

    /// `Sw<B,M,S>` touches bits up to `B + M + |S| - 1`: `Sw<1,0,62>` reads bit 62 into bit 0
    /// (audit 27: it was refused as touching bit 63).
    #[test]
    fn the_highest_bit_touched_is_b_plus_m_plus_s_minus_1() {
        let sw = Swizzle::new(1, 0, 62).unwrap();
        assert_eq!(sw.apply(1 << 62).unwrap(), (1 << 62) | 1);
        assert_eq!(sw.apply(5).unwrap(), 5);
        let e = Swizzle::new(2, 0, 62).unwrap_err().to_string();
        assert!(e.contains("touches bit 63"), "{e}");
        assert!(Swizzle::new(1, 1, 62).is_err());
        assert!(Swizzle::new(0, 62, 0).is_ok());
        assert!(Swizzle::new(0, 70, 0).is_err());
    }
}
