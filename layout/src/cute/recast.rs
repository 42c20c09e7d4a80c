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
    // The leaf that carries the bits inside an element: the one unit-stride leaf of extent
    // above 1; narrowing may instead grow a `1:1` leaf (the first) when there is none. Other
    // `1:1` leaves reach only offset 0 and are scaled like any other stride (CUTLASS's
    // `downcast` grows every unit-stride leaf, so `(6,1):(1,1)` from 16 to 8 bits gives its
    // `(12,2):(1,1)`, 24 elements for 12 bytes; here it is `(12, 1):(1, 2)`).
    let modes = l.flat_modes();
    let wide: Vec<usize> = (0..modes.len())
        .filter(|&k| modes[k].1 == 1 && modes[k].0 > 1)
        .collect();
    let carrier =
        match wide.as_slice() {
            [k] => *k,
            [] if to < from => match modes.iter().position(|&m| m == (1, 1)) {
                Some(k) => k,
                None => return Err(LayoutError::invalid(
                    what(),
                    "it needs a unit-stride mode to carry the bits inside an element, found none",
                )),
            },
            found => {
                return Err(LayoutError::invalid(
                    what(),
                    format!(
                    "it needs exactly one unit-stride mode of extent above 1 to carry the bits \
                     inside an element, found {}",
                    found.len()
                ),
                ))
            }
        };
    let (shape, stride) = if to >= from && to % from == 0 {
        widen(l.shape(), l.stride(), to / from).map_err(|why| LayoutError::invalid(what(), why))?
    } else if from % to == 0 {
        narrow(l.shape(), l.stride(), from / to, carrier, &mut 0).ok_or(LayoutError::Overflow {
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

/// Narrowing by `n`: flat leaf `carrier` (a unit-stride leaf) grows by `n`, every other
/// stride is multiplied by `n`; `leaf` counts the flat leaves visited.
fn narrow(
    shape: &IntTuple,
    stride: &IntTuple,
    n: i64,
    carrier: usize,
    leaf: &mut usize,
) -> Option<(IntTuple, IntTuple)> {
    match (shape, stride) {
        (IntTuple::Int(s), IntTuple::Int(d)) => {
            let (s, d) = if *leaf == carrier {
                (s.checked_mul(n)?, *d)
            } else {
                (*s, d.checked_mul(n)?)
            };
            *leaf += 1;
            Some((IntTuple::Int(s), IntTuple::Int(d)))
        }
        (IntTuple::Tuple(ss), IntTuple::Tuple(ds)) => {
            let parts = ss
                .iter()
                .zip(ds)
                .map(|(s, d)| narrow(s, d, n, carrier, leaf))
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

    /// An extent-1 unit-stride mode reaches only offset 0: it neither blocks a recast nor
    /// carries the bits (audit 25: `(6,1):(1,1)` was refused; CUTLASS's `downcast` answers
    /// `(12,2):(1,1)`, 24 elements for 12 bytes).
    #[test]
    fn recast_ignores_unit_modes_of_extent_one() {
        let l = parse_layout("(6,1):(1,1)").unwrap();
        let r = recast(&l, 16, 8).unwrap();
        assert_eq!(r.to_string(), "(12, 1):(1, 2)");
        assert_eq!(r.size(), 12);
        assert_eq!(recast(&r, 8, 16).unwrap().to_string(), "(6, 1):(1, 1)");
        assert_eq!(
            recast(&parse_layout("(1,4):(1,1)").unwrap(), 16, 8)
                .unwrap()
                .to_string(),
            "(1, 8):(2, 1)"
        );
        assert_eq!(
            recast(&parse_layout("(1,1):(1,1)").unwrap(), 16, 8)
                .unwrap()
                .to_string(),
            "(2, 1):(1, 2)"
        );
        // Two unit-stride modes of extent above 1: which carries the bits is not defined.
        assert!(recast(&parse_layout("(4,4):(1,1)").unwrap(), 16, 8).is_err());
        // None at all when narrowing: no mode holds the new elements.
        assert!(recast(&parse_layout("4:2").unwrap(), 16, 8).is_err());
    }

    #[test]
    fn recast_refuses_strides_that_split_elements() {
        assert!(recast(&parse_layout("(16,4):(1,24)").unwrap(), 1, 16).is_err());
        assert!(recast(&parse_layout("(8,4):(1,16)").unwrap(), 1, 16).is_err());
        assert!(recast(&parse_layout("4:16").unwrap(), 1, 16).is_err());
        assert!(recast(&parse_layout("16:1").unwrap(), 3, 16).is_err());
    }
}
