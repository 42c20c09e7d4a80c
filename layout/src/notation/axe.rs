//! TIRx/Axe notation: `S[shape:stride] + R[shape:stride] + offset@axis ...`. TIRx's own
//! spellings are read too: the docstring form without `S[..]`, `(2, 8):(2@warpid, 1@laneid)`,
//! and the Python wrapper `TileLayout(S[...])`, also with its module (`T.TileLayout(S[...])`,
//! `tirx.layout.TileLayout(S[...])`).
//!
//! ```text
//! layout  := shard [ '+' replica ] { '+' offset }
//! shard   := 'S[' tuple ':' tuple ']' | 'S[' int ':' term ']' | 'S[' tuple ']' | 'S[' int ']'
//!          | 'S[' int ',' [ int { ',' int } [ ',' ] ] ']'
//! replica := 'R[' tuple ':' tuple ']' | 'R[' int ':' term ']'
//! term    := int | int '@' axis            (a bare int is on axis m)
//! offset  := int '@' axis | int            (a bare int is on axis m)
//! ```
//! A shard without strides is row-major on `m`: `S[(4,64)]` is `S[(4,64):(64,1)]`. An empty
//! shard or replica prints as `S[():()]`. Printing is canonical text that parses back to the
//! same value.

use std::collections::BTreeMap;
use std::fmt::Write;

use super::cursor::Cursor;
use crate::axe::{AxeLayout, Iter};
use crate::axis::Axis;
use crate::error::{LayoutError, ParseError, Result};

const NOTATION: &str = "Axe";

/// Parses Axe/TIRx text.
pub fn parse(text: &str) -> Result<AxeLayout> {
    let mut c = Cursor::new(text, NOTATION);
    let layout = parse_layout(&mut c)?;
    c.expect_end("'+'")?;
    Ok(layout)
}

/// Prints a layout in the notation; `parse(&print(l)) == l`.
pub fn print(l: &AxeLayout) -> String {
    let mut s = format!("S[{}]", iters_text(l.shard()));
    if !l.replica().is_empty() {
        write!(s, " + R[{}]", iters_text(l.replica())).expect("write to String");
    }
    for (a, v) in l.offset() {
        s += &format!(" + {}", term_text(*v, a));
    }
    s
}

fn term_text(v: i64, a: &Axis) -> String {
    if a.is_m() {
        v.to_string()
    } else {
        format!("{v}@{a}")
    }
}

fn iters_text(iters: &[Iter]) -> String {
    match iters {
        [] => "():()".to_string(),
        [it] => format!("{}:{}", it.extent, term_text(it.stride, &it.axis)),
        _ => {
            let e: Vec<String> = iters.iter().map(|it| it.extent.to_string()).collect();
            let s: Vec<String> = iters
                .iter()
                .map(|it| term_text(it.stride, &it.axis))
                .collect();
            format!("({}):({})", e.join(","), s.join(","))
        }
    }
}

/// Whether `text` is TIRx's Python wrapper `TileLayout(...)`, with or without a module prefix
/// (`T.TileLayout(S[(8,8):(8,1)])`, `tvm.tirx.layout.TileLayout(...)`).
pub fn is_tile_layout_call(text: &str) -> bool {
    tile_layout_call_len(text.trim_start()).is_some()
}

/// The length of `[module.]TileLayout(` at the start of `text`, when it is there.
fn tile_layout_call_len(text: &str) -> Option<usize> {
    let name_len = text
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
        .unwrap_or(text.len());
    let name = &text[..name_len];
    if name != "TileLayout" && !name.ends_with(".TileLayout") {
        return None;
    }
    let rest = &text[name_len..];
    let open = rest.len() - rest.trim_start().len();
    rest.trim_start()
        .starts_with('(')
        .then_some(name_len + open + 1)
}

fn parse_layout(c: &mut Cursor) -> Result<AxeLayout> {
    c.skip_ws();
    // TIRx's wrapper as written in Python: `TileLayout(S[...])`, `T.TileLayout(S[...])`.
    if let Some(len) = tile_layout_call_len(c.rest()) {
        let call = &c.rest()[..len];
        c.eat(call);
        let l = parse_shard_and_rest(c)?;
        c.expect(")")
            .map_err(|_| c.error("')' closing TileLayout(..)"))?;
        return Ok(l);
    }
    parse_shard_and_rest(c)
}

/// A layout without TIRx's Python wrapper.
fn parse_shard_and_rest(c: &mut Cursor) -> Result<AxeLayout> {
    c.skip_ws();
    let start = c.pos();
    // TIRx docstrings write a shard without its `S[..]`: `(2, 8):(2@warpid, 1@laneid)`.
    let bare = c.peek() == Some('(') || c.peek().is_some_and(|ch| ch.is_ascii_digit());
    if !bare {
        c.expect("S[")
            .map_err(|_| c.error("'S[' (an Axe layout starts with its shard)"))?;
    }
    let shard = parse_iters(c, !bare, if bare { "" } else { "]" })?;
    let mut replica = Vec::new();
    let mut offset: BTreeMap<Axis, i64> = BTreeMap::new();
    while c.eat("+") {
        if c.eat("R[") {
            if !replica.is_empty() || !offset.is_empty() {
                return Err(c
                    .error_at(
                        c.pos() - 2,
                        c.pos(),
                        "an offset (R[...] comes once, right after S[...])",
                    )
                    .into());
            }
            replica = parse_iters(c, false, "]")?;
        } else {
            let at = c.pos();
            let (v, a) = parse_term(c)?;
            if offset.contains_key(&a) {
                return Err(c
                    .error_at(
                        at,
                        c.pos(),
                        format!("an offset on a new axis ({a} already has one)"),
                    )
                    .into());
            }
            offset.insert(a, v);
        }
    }
    AxeLayout::new(shard, replica, offset).map_err(|e| with_span(c, start, e))
}

/// Attaches the layout's span to a semantic error (extent 0, overflow).
fn with_span(c: &Cursor, start: usize, e: LayoutError) -> LayoutError {
    match e {
        LayoutError::Parse(p) => LayoutError::Parse(p),
        other => c
            .error_at(start, c.pos(), format!("a valid layout ({other})"))
            .into(),
    }
}

/// Extents and strides up to `close` (`]` inside `S[..]`/`R[..]`, nothing for a bare shard).
fn parse_iters(c: &mut Cursor, strides_optional: bool, close: &str) -> Result<Vec<Iter>> {
    // Only a shard's extents may be Python's bare subscript tuple, `S[8, 4, 2]`.
    let in_shard = strides_optional && close == "]";
    let (extents, ext_span, bare_tuple) = parse_extents(c, in_shard)?;
    if bare_tuple && c.peek() == Some(':') {
        return Err(c
            .error(
                "']' (extents without parentheses take no strides; write S[(8, 4):(4, 1)], \
                 as Python reads S[8, 4:1] as a tuple holding a slice)",
            )
            .into());
    }
    let strides: Vec<(i64, Axis)> = if c.eat(":") {
        let (s, _) = parse_terms(c)?;
        s
    } else if strides_optional {
        // Row-major on m.
        let mut acc = 1i64;
        let mut out = vec![(0, Axis::m()); extents.len()];
        for (i, e) in extents.iter().enumerate().rev() {
            out[i] = (acc, Axis::m());
            acc = acc.checked_mul(*e).ok_or_else(|| {
                c.error_at(
                    ext_span.0,
                    ext_span.1,
                    "extents whose product fits in 64 bits",
                )
            })?;
        }
        out
    } else {
        return Err(c.error("':' and the replica strides").into());
    };
    if strides.len() != extents.len() {
        return Err(c
            .error_at(
                ext_span.0,
                c.pos(),
                format!(
                    "{} strides to match {} extents",
                    extents.len(),
                    extents.len()
                ),
            )
            .into());
    }
    if !close.is_empty() {
        c.expect(close)?;
    }
    extents
        .iter()
        .zip(&strides)
        .enumerate()
        .map(|(i, (&e, (s, a)))| {
            if e < 1 {
                Err(c
                    .error_at(
                        ext_span.0,
                        ext_span.1,
                        format!("extents >= 1 (extent {i} is {e})"),
                    )
                    .into())
            } else {
                Ok(Iter::new(e, *s, a.clone()))
            }
        })
        .collect()
}

/// Extents: `(8, 4)` or `8`; with `bare_tuple`, also Python's `8, 4` and `8,` (the third
/// value says the extents were written so).
fn parse_extents(c: &mut Cursor, bare_tuple: bool) -> Result<(Vec<i64>, (usize, usize), bool)> {
    c.skip_ws();
    let start = c.pos();
    let mut tuple = false;
    let out = if c.eat("(") {
        let mut v = Vec::new();
        if !c.eat(")") {
            loop {
                v.push(c.int(false)?);
                if c.eat(")") {
                    break;
                }
                c.expect(",").map_err(|_| c.error("',' or ')'"))?;
                if c.eat(")") {
                    break;
                }
            }
        }
        v
    } else {
        let mut v = vec![c.int(false).map_err(|e| {
            if e.expected.contains("64 bits") {
                e
            } else {
                c.error("an extent or '('")
            }
        })?];
        if bare_tuple && c.eat(",") {
            tuple = true;
            while c.peek() != Some(']') {
                v.push(c.int(false).map_err(|_| c.error("an extent or ']'"))?);
                if !c.eat(",") {
                    break;
                }
            }
        }
        v
    };
    Ok((out, (start, c.pos()), tuple))
}

fn parse_terms(c: &mut Cursor) -> Result<(Vec<(i64, Axis)>, usize)> {
    c.skip_ws();
    let start = c.pos();
    if c.eat("(") {
        let mut v = Vec::new();
        if !c.eat(")") {
            loop {
                v.push(parse_term(c)?);
                if c.eat(")") {
                    break;
                }
                c.expect(",").map_err(|_| c.error("',' or ')'"))?;
                if c.eat(")") {
                    break;
                }
            }
        }
        Ok((v, start))
    } else {
        Ok((vec![parse_term(c)?], start))
    }
}

fn parse_term(c: &mut Cursor) -> Result<(i64, Axis), ParseError> {
    let v = c.int(false).map_err(|e| {
        if e.expected.contains("64 bits") {
            e
        } else {
            c.error("an integer, or integer@axis")
        }
    })?;
    if c.eat("@") {
        let name = c.ident("an axis name after '@'")?;
        Ok((
            v,
            Axis::new(name).expect("identifier checked by the cursor"),
        ))
    } else {
        Ok((v, Axis::m()))
    }
}
