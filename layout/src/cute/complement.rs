//! Complement: the layout that fills, in order, what A leaves out of `[0, M)`.
//!
//! Definition: take A's flat modes with extent > 1 and stride != 0, sorted by (stride, extent).
//! Walking them with `current = 1`, each mode `s:d` needs `d >= current` (else it starts inside
//! the span of the modes before it: the modes interleave, whether or not they repeat an offset,
//! and no ordered layout fills the holes); it contributes `floor(d/current) : current`, and `current` becomes `s*d`. Finally
//! `ceil(M/current) : current` covers the rest up to M. The result is coalesced; its strides
//! increase, so it is ordered, and `(A, complement(A, M))` is injective. When every `d` is a
//! multiple of `current` (A is "exact"), `(A, complement)` is moreover onto an interval.
//! Example: `complement(4:2, 24) = (2, 3):(1, 8)`; `complement((2,2):(1,6), 24) = (3, 2):(2, 12)`.

use super::coalesce::{coalesce, from_modes};
use super::CuteLayout;
use crate::arith;
use crate::error::{LayoutError, Result};

/// `complement(A, M)` (see the module doc). `complement(4:2, 24) = (2, 3):(1, 8)`.
pub fn complement(a: &CuteLayout, cotarget: i64) -> Result<CuteLayout> {
    complement_walk(a, cotarget)
}

/// `complement(A, S)` for a shape cotarget, as CUTLASS computes it: the last mode's extent is
/// the product of `S` divided by where A's modes end, element by element rounding up
/// (`ceil(s_i / rest)`, then `rest = ceil(rest / s_i)`).
/// `complement(3:2, (8, 8)) = (2, 16):(1, 6)`.
pub fn complement_shape(a: &CuteLayout, cotarget: &[i64]) -> Result<CuteLayout> {
    if cotarget.iter().any(|&s| s < 1) {
        return Err(LayoutError::invalid(
            format!("complement of {a} in the shape {cotarget:?}"),
            "every extent of the cotarget must be at least 1",
        ));
    }
    // The walk with cotarget 1 gives the gap modes and, last, `1:current`.
    let walked = complement_walk(a, 1)?;
    let current = cosize_end(a)?;
    let mut rest = current;
    let mut last = 1i64;
    for &s in cotarget {
        last = arith::mul(last, ceil_div(s, rest), "complement size")?;
        rest = ceil_div(rest, s);
    }
    let mut modes: Vec<(i64, i64)> = walked.flat_modes();
    modes.retain(|&(s, _)| s > 1);
    modes.push((last, current));
    arith::product(modes.iter().map(|m| m.0), "complement size")?;
    Ok(coalesce(&checked(&modes)?))
}

fn ceil_div(a: i64, b: i64) -> i64 {
    a / b + i64::from(a % b != 0)
}

/// Where A's modes end in stride order (the `current` of the walk after every mode).
fn cosize_end(a: &CuteLayout) -> Result<i64> {
    let mut modes: Vec<(i64, i64)> = a
        .flat_modes()
        .into_iter()
        .filter(|&(s, d)| s != 1 && d != 0)
        .map(|(s, d)| (d, s))
        .collect();
    modes.sort_unstable();
    match modes.last() {
        Some(&(d, s)) => arith::mul(s, d, "complement stride"),
        None => Ok(1),
    }
}

fn complement_walk(a: &CuteLayout, cotarget: i64) -> Result<CuteLayout> {
    if cotarget < 1 {
        return Err(LayoutError::invalid(
            format!("complement of {a} in [0, {cotarget})"),
            "the cotarget size must be at least 1",
        ));
    }
    let mut modes: Vec<(i64, i64)> = a
        .flat_modes()
        .into_iter()
        .filter(|&(s, d)| s != 1 && d != 0)
        .map(|(s, d)| (d, s))
        .collect();
    modes.sort_unstable();
    let mut current = 1i64;
    let mut out = Vec::with_capacity(modes.len() + 1);
    for (d, s) in modes {
        if d < 0 {
            return Err(LayoutError::invalid(
                format!("complement of {a}"),
                format!("stride {d} is negative"),
            ));
        }
        if d < current {
            return Err(LayoutError::invalid(
                format!("complement of {a}"),
                format!(
                    "the mode {s}:{d} starts below {current}, where the modes of smaller stride end: {}",
                    super::inverse::interleaving(a, "no ordered layout fills the holes between them")
                ),
            ));
        }
        out.push((d / current, current));
        current = arith::mul(s, d, "complement stride")?;
    }
    out.push((
        cotarget / current + i64::from(cotarget % current != 0),
        current,
    ));
    let shape = out.iter().map(|m| m.0);
    arith::product(shape, "complement size")?;
    Ok(coalesce(&checked(&out)?))
}

/// The flat modes as a layout, checked like any other (the last stride may be large).
fn checked(modes: &[(i64, i64)]) -> Result<CuteLayout> {
    let l = from_modes(modes);
    CuteLayout::new(l.shape, l.stride)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notation::cute::parse_layout;

    fn comp(a: &str, m: i64) -> Result<String> {
        complement(&parse_layout(a).unwrap(), m).map(|r| r.to_string())
    }

    #[test]
    fn complement_spec_vectors() {
        assert_eq!(comp("4:2", 24).unwrap(), "(2, 3):(1, 8)");
        assert_eq!(comp("(2,2):(1,6)", 24).unwrap(), "(3, 2):(2, 12)");
    }

    #[test]
    fn complement_of_a_covering_layout_is_trivial() {
        assert_eq!(comp("(4,2):(2,1)", 8).unwrap(), "1:0");
        assert_eq!(comp("(4,2):(2,1)", 16).unwrap(), "2:8");
    }

    #[test]
    fn complement_rejects_overlapping_modes() {
        let e = comp("(2,2):(1,1)", 4).unwrap_err().to_string();
        assert!(
            e.contains("the indices 1 and 2 both reach the offset 1"),
            "{e}"
        );
        // Interleaved but injective (0, 2, 3, 5): refused, and the error does not say otherwise.
        let e = comp("(2,2):(2,3)", 12).unwrap_err().to_string();
        assert!(e.contains("the layout is injective"), "{e}");
        assert_eq!(comp("(2,2):(2,5)", 20).unwrap(), "(2, 2):(1, 10)");
        assert!(comp("4:1", 0).is_err());
    }
}
