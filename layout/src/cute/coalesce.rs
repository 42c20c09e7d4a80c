//! Coalesce: the same integer map with as few modes as possible.
//!
//! Definition: flatten; drop size-1 modes; merge neighbours `(s0:d0),(s1:d1)` into `s0*s1:d0`
//! when `d1 == s0*d0`; no mode left gives `1:0`; one mode left is printed as a scalar.
//! Example: `(4,5):(1,4) -> 20:1`; `((2,2),2):((2,4),1) -> (4, 2):(2, 1)`.
//!
//! By-mode coalesce takes a profile: an integer coalesces the whole (sub)layout, a tuple
//! coalesces each of the first modes by its own profile and keeps the remaining modes.

use super::hierarchy::make_layout;
use super::{CuteLayout, IntTuple};
use crate::error::{LayoutError, Result};

/// The coalesced layout (same map on `[0, size)`). `coalesce((4,5):(1,4)) = 20:1`.
pub fn coalesce(layout: &CuteLayout) -> CuteLayout {
    let mut modes: Vec<(i64, i64)> = Vec::new();
    for (s, d) in layout.flat_modes() {
        match modes.last_mut() {
            _ if s == 1 => {}
            Some((ls, ld)) if ld.checked_mul(*ls) == Some(d) => *ls *= s,
            _ => modes.push((s, d)),
        }
    }
    from_modes(&modes)
}

/// Coalesces mode by mode following `profile` (see the module doc).
/// `coalesce_by_mode(((2,2),(3,1)):((1,2),(4,0)), (1,1)) = (4, 3):(1, 4)`.
pub fn coalesce_by_mode(layout: &CuteLayout, profile: &IntTuple) -> Result<CuteLayout> {
    let IntTuple::Tuple(parts) = profile else {
        return Ok(coalesce(layout));
    };
    let modes = layout.modes();
    if modes.len() < parts.len() {
        return Err(LayoutError::invalid(
            format!("coalesce profile {profile} for {layout}"),
            format!(
                "the profile has {} modes but the layout only {}",
                parts.len(),
                modes.len()
            ),
        ));
    }
    let mut out = Vec::with_capacity(modes.len());
    for (i, mode) in modes.iter().enumerate() {
        out.push(match parts.get(i) {
            Some(p) => coalesce_by_mode(mode, p)?,
            None => mode.clone(),
        });
    }
    make_layout(&out)
}

/// A flat list of modes as a layout: none is `1:0`, one is a scalar, more a flat tuple. The
/// modes come from a valid layout's (reordered or merged) modes, so the offsets stay in range.
pub(crate) fn from_modes(modes: &[(i64, i64)]) -> CuteLayout {
    match modes {
        [] => super::hierarchy::unit(),
        [(s, d)] => CuteLayout {
            shape: IntTuple::Int(*s),
            stride: IntTuple::Int(*d),
        },
        _ => CuteLayout {
            shape: IntTuple::Tuple(modes.iter().map(|m| IntTuple::Int(m.0)).collect()),
            stride: IntTuple::Tuple(modes.iter().map(|m| IntTuple::Int(m.1)).collect()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notation::cute::{parse_int_tuple, parse_layout};

    fn c(t: &str) -> String {
        coalesce(&parse_layout(t).unwrap()).to_string()
    }

    #[test]
    fn coalesce_spec_vectors() {
        assert_eq!(c("(4,5):(1,4)"), "20:1");
        assert_eq!(c("((2,2),2):((2,4),1)"), "(4, 2):(2, 1)");
    }

    #[test]
    fn coalesce_of_only_unit_modes_is_one_zero() {
        assert_eq!(c("(1,(1,1)):(3,(5,7))"), "1:0");
        assert_eq!(c("(1,6):(9,2)"), "6:2");
    }

    #[test]
    fn coalesce_by_mode_keeps_the_profile_rank() {
        let l = parse_layout("((2,2),(3,1)):((1,2),(4,0))").unwrap();
        let p = parse_int_tuple("(1,1)").unwrap();
        assert_eq!(
            coalesce_by_mode(&l, &p).unwrap().to_string(),
            "(4, 3):(1, 4)"
        );
        let p1 = parse_int_tuple("(1,)").unwrap();
        assert_eq!(
            coalesce_by_mode(&l, &p1).unwrap().to_string(),
            "(4, (3, 1)):(1, (4, 0))"
        );
        assert!(coalesce_by_mode(&l, &parse_int_tuple("(1,1,1)").unwrap()).is_err());
    }
}
