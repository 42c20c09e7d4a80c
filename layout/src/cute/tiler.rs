//! Tuple tilers: divide and multiply mode by mode.
//!
//! A tiler is a layout, or a tuple of tilers (one per top-level mode of A; `_` leaves a mode
//! whole; an integer `n` is the tile `n:1`). CuTe applies a tuple tiler mode by mode:
//! `logical_divide(A, (B0, B1)) = (A0 / B0, A1 / B1, A2, ...)`, and likewise the logical
//! product. The zipped forms gather the tiles first and the rests second, `((t0, t1),
//! (r0, r1, A2, ...))`; tiled brings the rests up, `((t0, t1), r0, r1, ...)`; flat brings both
//! up, `(t0, t1, r0, r1, ...)`. Blocked and raked products take a layout only.
//!
//! A `_` leaves its mode whole in the logical divide and product; the zipped, tiled and flat
//! forms then split that mode as CUTLASS's `zip2_by` does (`tile_unzip`): a mode of rank 2,
//! `(m0, m1)`, gives `m0` to the tiles and `m1` to the rests, and a mode of any other rank is
//! refused, as CUTLASS refuses it (`static_assert(tuple_size<T>::value == 2)`; the CuTe DSL
//! 4.8.1 refuses it too). So `zipped_divide(((4,4),6):((1,4),16), (_, 3)) =
//! ((4, 3), (4, 2)):((1, 16), (4, 48))`, the DSL's answer. pycute differs: its `hier_unzip`
//! gives a `_` mode the tile `1:0` and the whole mode as the rest, `((1, 3), ((4, 4), 2))`.
//! Both rearrange the same logical divide; laycert follows CUTLASS, whose kernels use it.
//!
//! Example (the same text as pycute's and the DSL's): `zipped_divide((8,6):(1,8), (2:1, 3:2))
//! = ((2, 3), (4, 2)):((1, 16), (2, 8))`.

use std::fmt;

use super::divide::halves;
use super::hierarchy::make_layout;
use super::{composition, logical_divide, logical_product, CuteLayout};
use crate::error::{LayoutError, Result};
use crate::notation::cute::parse_layout;

/// A tiler: a layout, a tuple of tilers, or `_` (leave the mode whole).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Tiler {
    /// `_`.
    Skip,
    /// One layout, applied to the whole operand.
    Layout(CuteLayout),
    /// One tiler per top-level mode.
    Modes(Vec<Tiler>),
}

impl fmt::Display for Tiler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tiler::Skip => f.write_str("_"),
            Tiler::Layout(l) => write!(f, "{l}"),
            Tiler::Modes(ts) => {
                let parts: Vec<String> = ts.iter().map(Tiler::to_string).collect();
                write!(f, "({})", parts.join(", "))
            }
        }
    }
}

/// Parses a tiler: a CuTe layout (`4:2`, `(2,2):(1,4)`), an integer `n` (`n:1`), `_`, or a
/// parenthesized tuple of those (`(2:1, 3:2)`, `(4, _)`).
pub fn parse_tiler(text: &str) -> Result<Tiler> {
    parse_tiler_at(text, 0)
}

/// Most levels of tuple nesting in a tiler, as in a layout (`notation::cute`).
const MAX_TILER_DEPTH: usize = 64;

fn parse_tiler_at(text: &str, level: usize) -> Result<Tiler> {
    let t = text.trim();
    if level > MAX_TILER_DEPTH {
        return Err(LayoutError::invalid(
            "tiler",
            format!("at most {MAX_TILER_DEPTH} levels of nesting"),
        ));
    }
    let bad = |why: &str| LayoutError::invalid(format!("tiler {text:?}"), why.to_string());
    if t == "_" {
        return Ok(Tiler::Skip);
    }
    if let Ok(l) = parse_layout(t) {
        return Ok(Tiler::Layout(l));
    }
    if let Ok(n) = t.trim_start_matches('_').parse::<i64>() {
        // CuTe's `make_layout(n)`: compact, so an extent of 1 has stride 0.
        return CuteLayout::from_flat(&[n], &[i64::from(n != 1)]).map(Tiler::Layout);
    }
    let inner = t
        .strip_prefix('(')
        .and_then(|x| x.strip_suffix(')'))
        .ok_or_else(|| bad("expected a layout, an integer, '_' or a tuple (T0, T1, ...)"))?;
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0i32, 0usize);
    for (i, ch) in inner.char_indices() {
        match ch {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
        if depth < 0 {
            return Err(bad("unbalanced parentheses"));
        }
    }
    if depth != 0 {
        return Err(bad("unbalanced parentheses"));
    }
    parts.push(&inner[start..]);
    // A 1-tuple as Python and pycute print it: `(4,)`, `(2:1,)`.
    if parts.len() == 2 && parts[1].trim().is_empty() {
        parts.pop();
    }
    if parts.iter().any(|p| p.trim().is_empty()) {
        return Err(bad("an empty element"));
    }
    Ok(Tiler::Modes(
        parts
            .into_iter()
            .map(|p| parse_tiler_at(p, level + 1))
            .collect::<Result<_>>()?,
    ))
}

/// The top-level modes of `a` paired with the tuple's tilers; more tilers than modes is an
/// error naming both.
fn paired<'t>(
    a: &CuteLayout,
    ts: &'t [Tiler],
    op: &str,
) -> Result<Vec<(CuteLayout, Option<&'t Tiler>)>> {
    let modes = a.modes();
    if ts.len() > modes.len() {
        return Err(LayoutError::invalid(
            format!("{op} of {a}"),
            format!(
                "the tiler has {} modes but the layout has rank {}",
                ts.len(),
                modes.len()
            ),
        ));
    }
    Ok(modes
        .into_iter()
        .enumerate()
        .map(|(i, m)| (m, ts.get(i)))
        .collect())
}

/// `A ∘ T` by a tiler: a layout composes whole; a tuple composes mode by mode and, as in
/// CUTLASS, drops the modes of A it does not reach; `_` keeps the mode.
/// `composition_by((4,8):(8,1), (2, 4)) = (2, 4):(8, 1)`.
pub fn composition_by(a: &CuteLayout, t: &Tiler) -> Result<CuteLayout> {
    match t {
        Tiler::Skip => Ok(a.clone()),
        Tiler::Layout(b) => composition(a, b),
        Tiler::Modes(ts) => {
            let modes = paired(a, ts, "composition")?
                .into_iter()
                .filter_map(|(m, t)| t.map(|t| composition_by(&m, t)))
                .collect::<Result<Vec<_>>>()?;
            make_layout(&modes)
        }
    }
}

/// `logical_divide` by a tiler (mode by mode for a tuple).
pub fn logical_divide_by(a: &CuteLayout, t: &Tiler) -> Result<CuteLayout> {
    match t {
        Tiler::Skip => Ok(a.clone()),
        Tiler::Layout(b) => logical_divide(a, b),
        Tiler::Modes(ts) => {
            let modes = paired(a, ts, "logical_divide")?
                .into_iter()
                .map(|(m, t)| t.map_or(Ok(m.clone()), |t| logical_divide_by(&m, t)))
                .collect::<Result<Vec<_>>>()?;
            make_layout(&modes)
        }
    }
}

/// `logical_product` by a tiler (mode by mode for a tuple).
pub fn logical_product_by(a: &CuteLayout, t: &Tiler) -> Result<CuteLayout> {
    match t {
        Tiler::Skip => Ok(a.clone()),
        Tiler::Layout(b) => logical_product(a, b),
        Tiler::Modes(ts) => {
            let modes = paired(a, ts, "logical_product")?
                .into_iter()
                .map(|(m, t)| t.map_or(Ok(m.clone()), |t| logical_product_by(&m, t)))
                .collect::<Result<Vec<_>>>()?;
            make_layout(&modes)
        }
    }
}

/// `(tiles, rests)`: the divide's tile part first. A layout tiler's logical divide already is;
/// a mode a `_` leaves whole is split as CUTLASS's `zip2_by` splits it (see the module doc).
fn zip_halves(a: &CuteLayout, t: &Tiler, divide: bool) -> Result<[CuteLayout; 2]> {
    let op = if divide {
        "zipped_divide"
    } else {
        "zipped_product"
    };
    match t {
        Tiler::Skip => match a.modes().as_slice() {
            [m0, m1] => Ok([m0.clone(), m1.clone()]),
            _ => Err(LayoutError::invalid(
                format!("{op} of {a} by `_`"),
                format!(
                    "CUTLASS's zip2_by splits a mode that `_` leaves whole into its two \
                     sub-modes (tile, rest), so the mode must have rank 2; {a} has rank {} \
                     (CUTLASS refuses it at compile time, the CuTe DSL at trace time; pycute \
                     gives it the tile 1:0, which laycert does not, to stay with CUTLASS)",
                    a.rank()
                ),
            )),
        },
        Tiler::Layout(b) if divide => Ok(halves(&logical_divide(a, b)?)),
        Tiler::Layout(b) => Ok(halves(&logical_product(a, b)?)),
        Tiler::Modes(ts) => {
            let (mut first, mut second) = (Vec::new(), Vec::new());
            for (m, t) in paired(a, ts, op)? {
                match t {
                    Some(t) => {
                        let [x, y] = zip_halves(&m, t, divide)?;
                        first.push(x);
                        second.push(y);
                    }
                    None => second.push(m),
                }
            }
            Ok([make_layout(&first)?, make_layout(&second)?])
        }
    }
}

/// `zipped_divide` by a tiler: `((t0, t1, ..), (r0, r1, .., rest of A))`.
pub fn zipped_divide_by(a: &CuteLayout, t: &Tiler) -> Result<CuteLayout> {
    make_layout(&zip_halves(a, t, true)?)
}

/// `tiled_divide` by a tiler: `((t0, t1, ..), r0, r1, ..)`.
pub fn tiled_divide_by(a: &CuteLayout, t: &Tiler) -> Result<CuteLayout> {
    let [tile, rest] = zip_halves(a, t, true)?;
    let mut modes = vec![tile];
    modes.extend(rest.modes());
    make_layout(&modes)
}

/// `flat_divide` by a tiler: `(t0, t1, .., r0, r1, ..)`.
pub fn flat_divide_by(a: &CuteLayout, t: &Tiler) -> Result<CuteLayout> {
    let [tile, rest] = zip_halves(a, t, true)?;
    let mut modes = tile.modes();
    modes.extend(rest.modes());
    make_layout(&modes)
}

/// `zipped_product` by a tiler: `((a0, a1, ..), (c0, c1, .., rest of A))`.
pub fn zipped_product_by(a: &CuteLayout, t: &Tiler) -> Result<CuteLayout> {
    make_layout(&zip_halves(a, t, false)?)
}

/// `tiled_product` by a tiler: `((a0, a1, ..), c0, c1, ..)`.
pub fn tiled_product_by(a: &CuteLayout, t: &Tiler) -> Result<CuteLayout> {
    let [block, copies] = zip_halves(a, t, false)?;
    let mut modes = vec![block];
    modes.extend(copies.modes());
    make_layout(&modes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(op: fn(&CuteLayout, &Tiler) -> Result<CuteLayout>, a: &str, t: &str) -> String {
        op(&parse_layout(a).unwrap(), &parse_tiler(t).unwrap())
            .unwrap()
            .to_string()
    }

    /// Vectors printed by pycute 4.2 (`logical_divide(A, (B0, B1))` etc.); its flat_divide
    /// crashes on tuple tilers, so ours is checked against tiled_divide's modes.
    #[test]
    fn tuple_tilers_match_pycute() {
        let cases: &[(&str, &str, [&str; 6])] = &[
            (
                "(8,6):(1,8)",
                "(2:1, 3:2)",
                [
                    "((2, 4), (3, 2)):((1, 2), (16, 8))",
                    "((2, 3), (4, 2)):((1, 16), (2, 8))",
                    "((2, 3), 4, 2):((1, 16), 2, 8)",
                    "((8, 2), (6, 3)):((1, 8), (8, 2))",
                    "((8, 6), (2, 3)):((1, 8), (8, 2))",
                    "((8, 6), 2, 3):((1, 8), 8, 2)",
                ],
            ),
            (
                "(8,6,4):(1,8,48)",
                "(4:2, 3:1)",
                [
                    "((4, 2), (3, 2), 4):((2, 1), (8, 24), 48)",
                    "((4, 3), (2, 2, 4)):((2, 8), (1, 24, 48))",
                    "((4, 3), 2, 2, 4):((2, 8), 1, 24, 48)",
                    "((8, 4), (6, 3), 4):((1, 16), (8, 1), 48)",
                    "((8, 6), (4, 3, 4)):((1, 8), (16, 1, 48))",
                    "((8, 6), 4, 3, 4):((1, 8), 16, 1, 48)",
                ],
            ),
            (
                "((2,4),6):((1,2),8)",
                "(2:2, 2:3)",
                [
                    "((2, (2, 2)), (2, 3)):((2, (1, 4)), (24, 8))",
                    "((2, 2), ((2, 2), 3)):((2, 24), ((1, 4), 8))",
                    "((2, 2), (2, 2), 3):((2, 24), (1, 4), 8)",
                    "(((2, 4), 2), (6, 2)):(((1, 2), 16), (8, 3))",
                    "(((2, 4), 6), (2, 2)):(((1, 2), 8), (16, 3))",
                    "(((2, 4), 6), 2, 2):(((1, 2), 8), 16, 3)",
                ],
            ),
            (
                "(16,12):(12,1)",
                "((2,2):(1,4), 3:1)",
                [
                    "(((2, 2), (2, 2)), (3, 4)):(((12, 48), (24, 96)), (1, 3))",
                    "(((2, 2), 3), ((2, 2), 4)):(((12, 48), 1), ((24, 96), 3))",
                    "(((2, 2), 3), (2, 2), 4):(((12, 48), 1), (24, 96), 3)",
                    "((16, (2, 2)), (12, 3)):((12, (1, 4)), (1, 12))",
                    "((16, 12), ((2, 2), 3)):((12, 1), ((1, 4), 12))",
                    "((16, 12), (2, 2), 3):((12, 1), (1, 4), 12)",
                ],
            ),
        ];
        for (a, t, want) in cases {
            let ops: [fn(&CuteLayout, &Tiler) -> Result<CuteLayout>; 6] = [
                logical_divide_by,
                zipped_divide_by,
                tiled_divide_by,
                logical_product_by,
                zipped_product_by,
                tiled_product_by,
            ];
            for (op, w) in ops.iter().zip(want) {
                assert_eq!(run(*op, a, t), *w, "{a} by {t}");
            }
        }
        assert_eq!(
            run(logical_divide_by, "(8,8):(8,1)", "(4:1, _)"),
            "((4, 2), 8):((8, 32), 1)"
        );
        // `_` on a mode of rank 1: CUTLASS's zip2_by needs a pair, so it is refused (the CuTe
        // DSL 4.8.1 refuses it); on a mode of rank 2 the mode is split, as the DSL gives it.
        for op in [zipped_divide_by, tiled_divide_by, flat_divide_by] {
            let a = parse_layout("(8,8):(8,1)").unwrap();
            let e = op(&a, &parse_tiler("(4:1, _)").unwrap()).unwrap_err();
            assert!(e.to_string().contains("must have rank 2"), "{e}");
        }
        for (op, want) in [
            (
                zipped_divide_by as fn(&CuteLayout, &Tiler) -> Result<CuteLayout>,
                "((4, 3), (4, 2)):((1, 16), (4, 48))",
            ),
            (tiled_divide_by, "((4, 3), 4, 2):((1, 16), 4, 48)"),
            (flat_divide_by, "(4, 3, 4, 2):(1, 16, 4, 48)"),
        ] {
            assert_eq!(run(op, "((4,4),6):((1,4),16)", "(_, 3)"), want);
        }
        assert_eq!(
            run(zipped_divide_by, "((2,3),(4,5)):((1,2),(6,24))", "(_, _)"),
            "((2, 4), (3, 5)):((1, 6), (2, 24))"
        );
        assert_eq!(
            run(flat_divide_by, "(8,6):(1,8)", "(2:1, 3:2)"),
            "(2, 3, 4, 2):(1, 16, 2, 8)"
        );
    }

    #[test]
    fn tilers_parse_print_and_refuse_clearly() {
        let t = parse_tiler("(2:1, (4, _), 8)").unwrap();
        assert_eq!(t.to_string(), "(2:1, (4:1, _), 8:1)");
        for bad in ["(2:1,", "(2:1,,3)", "x", "(2:1))"] {
            assert!(parse_tiler(bad).is_err(), "{bad}");
        }
        // Deep nesting is refused at the layout parser's depth, not by the stack.
        let deep = |n: usize| format!("{}4,{}", "(".repeat(n), ")".repeat(n));
        assert!(parse_tiler(&deep(60)).is_ok());
        let e = parse_tiler(&deep(100_000)).unwrap_err().to_string();
        assert!(e.contains("levels of nesting"), "{e}");
        let e = logical_divide_by(
            &parse_layout("8:1").unwrap(),
            &parse_tiler("(2:1, 2:1)").unwrap(),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("2 modes but the layout has rank 1"), "{e}");
    }
}
