//! CuTe notation, as pycute prints it: `(4, (2, 4)):(2, (1, 8))`, a scalar `8:1`, a 1-tuple
//! `(8,):(1,)`. Parsing also takes C++ CuTe's spelling of static integers (`(_4,_8):(_1,_4)`)
//! and spaces anywhere.
//!
//! Swizzled layouts: `Sw<3,4,3> o (8,64):(64,1)` (`∘` is accepted for `o`).
//! TV layouts: `((4,8),(2,2)):((32,1),(16,8)) -> (16,8)`: the layout then the tile shape.

use super::cursor::Cursor;
use crate::cute::{CuteLayout, IntTuple, TvLayout};
use crate::error::{LayoutError, ParseError, Result};
use crate::swizzle::{Swizzle, SwizzledLayout};

const NOTATION: &str = "CuTe";

/// Parses `shape:stride`.
pub fn parse_layout(text: &str) -> Result<CuteLayout> {
    let mut c = Cursor::new(text, NOTATION);
    let l = layout(&mut c)?;
    c.expect_end("end of layout")?;
    Ok(l)
}

/// Parses `Sw<B,M,S> o shape:stride`.
pub fn parse_swizzled(text: &str) -> Result<SwizzledLayout> {
    let mut c = Cursor::new(text, NOTATION);
    let l = swizzled(&mut c)?;
    c.expect_end("end of layout")?;
    Ok(l)
}

/// Parses `shape:stride -> (tile)`.
pub fn parse_tv(text: &str) -> Result<TvLayout> {
    let mut c = Cursor::new(text, NOTATION);
    let l = tv(&mut c)?;
    c.expect_end("end of layout")?;
    Ok(l)
}

/// Parses an IntTuple such as `(4,(2,4))` or `8`.
pub fn parse_int_tuple(text: &str) -> Result<IntTuple> {
    let mut c = Cursor::new(text, NOTATION);
    let t = int_tuple(&mut c, 0)?;
    c.expect_end("end of tuple")?;
    Ok(t)
}

pub(crate) fn swizzled(c: &mut Cursor) -> Result<SwizzledLayout> {
    let start = c.pos();
    c.expect("Sw<")?;
    let b = c.int(false)?;
    c.expect(",")?;
    let m = c.int(false)?;
    c.expect(",")?;
    let s = c.int(false)?;
    c.expect(">")?;
    let end = c.pos();
    let (Ok(b), Ok(m), Ok(s)) = (u32::try_from(b), u32::try_from(m), i32::try_from(s)) else {
        return Err(c.error_at(start, end, "Sw<B,M,S> with B, M >= 0").into());
    };
    let sw = Swizzle::new(b, m, s)
        .map_err(|e| c.error_at(start, end, format!("a valid swizzle ({e})")))?;
    if !(c.eat("o") || c.eat("∘")) {
        return Err(c.error("'o' (composition) after the swizzle").into());
    }
    // An optional offset between the swizzle and the layout: `Sw<..> o 32 o L` (`_32` too).
    let mut probe = c.clone();
    probe.skip_ws();
    probe.eat("_");
    let mut offset = 0;
    if let Ok(v) = probe.int(false) {
        if probe.eat("o") || probe.eat("∘") {
            offset = v;
            *c = probe;
        }
    }
    let lstart = c.pos();
    let l = layout(c)?;
    SwizzledLayout::with_offset(sw, offset, l).map_err(|e| {
        c.error_at(
            lstart,
            c.pos(),
            format!("a layout a swizzle can follow ({e})"),
        )
        .into()
    })
}

pub(crate) fn tv(c: &mut Cursor) -> Result<TvLayout> {
    let start = c.pos();
    let l = layout(c)?;
    c.expect("->")
        .map_err(|_| c.error("'->' and the tile shape of a TV layout"))?;
    let tstart = c.pos();
    let tile = match int_tuple(c, 0)? {
        IntTuple::Int(v) => vec![v],
        t @ IntTuple::Tuple(_) => {
            let flat = IntTuple::flat(&t.leaves());
            if flat != t {
                return Err(c
                    .error_at(tstart, c.pos(), "a flat tile shape such as (16,8)")
                    .into());
            }
            t.leaves()
        }
    };
    TvLayout::new(l, tile).map_err(|e| {
        c.error_at(start, c.pos(), format!("a valid TV layout ({e})"))
            .into()
    })
}

pub(crate) fn layout(c: &mut Cursor) -> Result<CuteLayout> {
    c.skip_ws();
    let start = c.pos();
    let shape = int_tuple(c, 0)?;
    c.expect(":")
        .map_err(|_| c.error("':' between shape and stride"))?;
    let stride = int_tuple(c, 0)?;
    CuteLayout::new(shape, stride).map_err(|e| match e {
        LayoutError::Parse(p) => LayoutError::Parse(p),
        other => c
            .error_at(start, c.pos(), format!("a valid layout ({other})"))
            .into(),
    })
}

/// Nesting deeper than this is rejected (keeps recursion bounded on hostile input).
const MAX_DEPTH: usize = 64;

fn int_tuple(c: &mut Cursor, depth: usize) -> Result<IntTuple, ParseError> {
    if depth > MAX_DEPTH {
        return Err(c.error(format!("at most {MAX_DEPTH} levels of nesting")));
    }
    if c.eat("(") {
        let mut items = Vec::new();
        if c.eat(")") {
            return Ok(IntTuple::Tuple(items));
        }
        loop {
            items.push(int_tuple(c, depth + 1)?);
            if c.eat(")") {
                break;
            }
            c.expect(",").map_err(|_| c.error("',' or ')'"))?;
            if c.eat(")") {
                break;
            }
        }
        Ok(IntTuple::Tuple(items))
    } else {
        c.int(true).map(IntTuple::Int).map_err(|e| {
            if e.expected.contains("64 bits") {
                e
            } else {
                c.error("an integer or '('")
            }
        })
    }
}
