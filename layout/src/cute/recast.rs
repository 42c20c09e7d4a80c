//! Recast: the same memory seen through elements of another width.
//!
//! A layout over elements of `from` bits maps coordinates to element offsets; element `e`
//! occupies bits `[from*e, from*(e+1))`. Recasting to `to`-bit elements keeps every bit where it
//! was. Widening (`to = N*from`): the one leaf of unit stride (it carries the bits inside an
//! element) shrinks its extent by N, every other stride must be a multiple of N and is divided by
//! it, stride 0 stays 0. Narrowing (`from = N*to`): the unit-stride leaf grows by N, other strides
//! are multiplied by N. A swizzle `Sw<B,M,S>` on offsets moves its base: `M - log2 N` when
//! widening (needs `M >= log2 N`), `M + log2 N` when narrowing; N must then be a power of two.
//! Example (bits to 16-bit elements): `(8,1024):(1024,1) -> (8, 64):(64, 1)`;
//! `Sw<3,7,3> o (8,1024):(1024,1) -> Sw<3,3,3> o (8, 64):(64, 1)`.

use super::{CuteLayout, IntTuple};
use crate::arith::log2;
use crate::error::{LayoutError, Result};
use crate::swizzle::{Swizzle, SwizzledLayout};

/// The layout over `to`-bit elements with the same bit-level map as `l` over `from`-bit ones.
/// `recast((8,1024):(1024,1), 1, 16) = (8, 64):(64, 1)`.
pub fn recast(l: &CuteLayout, from: i64, to: i64) -> Result<CuteLayout> {
    let what = || format!("recast of {l} from {from}-bit to {to}-bit elements");
    if from < 1 || to < 1 {
        return Err(LayoutError::invalid(
            what(),
            "element widths must be positive",
        ));
    }
    if from == to {
        return Ok(l.clone());
    }
    // Widening needs a unit-stride mode with room to shrink; narrowing may grow a `1:1` mode.
    let units = l
        .flat_modes()
        .iter()
        .filter(|&&(s, d)| d == 1 && (s > 1 || to < from))
        .count();
    if units != 1 {
        return Err(LayoutError::invalid(
            what(),
            format!("it needs exactly one unit-stride mode to carry the bits inside an element, found {units}"),
        ));
    }
    let (shape, stride) = if to >= from && to % from == 0 {
        widen(l.shape(), l.stride(), to / from).map_err(|why| LayoutError::invalid(what(), why))?
    } else if from % to == 0 {
        narrow(l.shape(), l.stride(), from / to).ok_or(LayoutError::Overflow {
            op: "recast stride",
        })?
    } else {
        return Err(LayoutError::invalid(
            what(),
            "one width must be a multiple of the other",
        ));
    };
    CuteLayout::new(shape, stride)
}

/// `Sw<B,M,S> o L` recast: L as by [`recast`], the swizzle's base moved by `log2 N`.
/// `recast_swizzled(Sw<3,7,3> o (8,1024):(1024,1), 1, 16) = Sw<3,3,3> o (8, 64):(64, 1)`.
pub fn recast_swizzled(sl: &SwizzledLayout, from: i64, to: i64) -> Result<SwizzledLayout> {
    if sl.offset() != 0 {
        return Err(LayoutError::invalid(
            format!("recast of {sl}"),
            "recast of a swizzled layout with an offset (a slice) is not supported: recast the whole layout, then slice",
        ));
    }
    let layout = recast(sl.layout(), from, to)?;
    let sw = sl.swizzle();
    let what = || format!("recast of {sl} from {from}-bit to {to}-bit elements");
    let ratio = if to >= from { to / from } else { from / to };
    let k = log2(ratio).ok_or_else(|| {
        LayoutError::invalid(what(), "a swizzle recasts only by a power-of-two ratio")
    })?;
    let base = if to >= from {
        sw.base()
            .checked_sub(k)
            .or((sw.bits() == 0).then_some(0))
            .ok_or_else(|| {
                LayoutError::invalid(
                    what(),
                    format!(
                    "the swizzle keeps {} low bits, fewer than the {k} bits inside a new element",
                    sw.base()
                ),
                )
            })?
    } else {
        sw.base() + k
    };
    let moved = Swizzle::new(sw.bits(), base, sw.shift())?;
    SwizzledLayout::new(moved, layout)
}

fn widen(shape: &IntTuple, stride: &IntTuple, n: i64) -> Result<(IntTuple, IntTuple), String> {
    match (shape, stride) {
        (IntTuple::Int(s), IntTuple::Int(d)) => {
            let (s, d) = (*s, *d);
            match d {
                _ if s == 1 => Ok((1, d / n)),
                0 => Ok((s, 0)),
                1 if s % n == 0 => Ok((s / n, 1)),
                1 => Err(format!(
                    "the unit-stride extent {s} is not a multiple of {n}"
                )),
                _ if d > 0 && d % n == 0 => Ok((s, d / n)),
                _ => Err(format!(
                    "stride {d} is not a non-negative multiple of {n}, so it splits an element"
                )),
            }
            .map(|(s, d)| (IntTuple::Int(s), IntTuple::Int(d)))
        }
        (IntTuple::Tuple(ss), IntTuple::Tuple(ds)) => {
            let parts = ss
                .iter()
                .zip(ds)
                .map(|(s, d)| widen(s, d, n))
                .collect::<Result<Vec<_>, _>>()?;
            let (s, d) = parts.into_iter().unzip();
            Ok((IntTuple::Tuple(s), IntTuple::Tuple(d)))
        }
        _ => Err("shape and stride are not congruent".into()),
    }
}

fn narrow(shape: &IntTuple, stride: &IntTuple, n: i64) -> Option<(IntTuple, IntTuple)> {
    match (shape, stride) {
        (IntTuple::Int(s), IntTuple::Int(d)) => {
            let (s, d) = if *d == 1 {
                (s.checked_mul(n)?, 1)
            } else {
                (*s, d.checked_mul(n)?)
            };
            Some((IntTuple::Int(s), IntTuple::Int(d)))
        }
        (IntTuple::Tuple(ss), IntTuple::Tuple(ds)) => {
            let parts = ss
                .iter()
                .zip(ds)
                .map(|(s, d)| narrow(s, d, n))
                .collect::<Option<Vec<_>>>()?;
            let (s, d) = parts.into_iter().unzip();
            Some((IntTuple::Tuple(s), IntTuple::Tuple(d)))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notation::cute::{parse_layout, parse_swizzled};

    #[test]
    fn recast_bits_to_halves_divides_the_unit_mode() {
        let l = parse_layout("(8,1024):(1024,1)").unwrap();
        assert_eq!(recast(&l, 1, 16).unwrap().to_string(), "(8, 64):(64, 1)");
        assert_eq!(recast(&recast(&l, 1, 16).unwrap(), 16, 1).unwrap(), l);
    }

    #[test]
    fn recast_swizzle_moves_the_base() {
        let sl = parse_swizzled("Sw<3,7,3> o (8,1024):(1024,1)").unwrap();
        let h = recast_swizzled(&sl, 1, 16).unwrap();
        assert_eq!(h.to_string(), "Sw<3,3,3> o (8, 64):(64, 1)");
        assert_eq!(recast_swizzled(&h, 16, 1).unwrap(), sl);
        let low = parse_swizzled("Sw<3,2,3> o (8,1024):(1024,1)").unwrap();
        assert!(recast_swizzled(&low, 1, 16).is_err());
    }

    #[test]
    fn recast_refuses_strides_that_split_elements() {
        assert!(recast(&parse_layout("(16,4):(1,24)").unwrap(), 1, 16).is_err());
        assert!(recast(&parse_layout("(8,4):(1,16)").unwrap(), 1, 16).is_err());
        assert!(recast(&parse_layout("4:16").unwrap(), 1, 16).is_err());
        assert!(recast(&parse_layout("16:1").unwrap(), 3, 16).is_err());
    }
}
