//! CuTe notation, as pycute prints it: `(4, (2, 4)):(2, (1, 8))`, a scalar `8:1`, a 1-tuple
//! `(8,):(1,)`. Parsing also takes C++ CuTe's spelling of static integers (`(_4,_8):(_1,_4)`)
//! and spaces anywhere.
//!
//! Swizzled layouts: `Sw<3,4,3> o (8,64):(64,1)` (`∘` is accepted for `o`), also as the CuTe
//! DSL prints them, `S<3,4,3> o 0 o (8,64):(64,1)` (the same swizzle, offset and layout).
//! TV layouts: `((4,8),(2,2)):((32,1),(16,8)) -> (16,8)`: the layout then the tile shape.
//!
//! Text the tools print around a layout is read too:
//! - the CuTe DSL's MLIR types `!cute.layout<"(4,8):(8,1)">` and
//!   `!cute.composed_layout<"S<3,4,3> o 0 o (8,64):(64,1)">` (static values only; the DSL
//!   prints `?` for a value known at run time);
//! - the pointer of CuTe's `print(tensor)`, `gmem_ptr[16b](0x7f0000000000) o (128,64):(64,_1)`:
//!   the tensor's element at `c` is at `ptr + L(c)`, so the layout is what follows the pointer
//!   and the pointer's address is not part of it. (A pointer tag BETWEEN a swizzle and its
//!   layout, `Sw<3,4,3> o smem_ptr[16b](unset) o L`, is different: there the swizzle acts on
//!   byte addresses; see [`parse_swizzled`].)
//!
//! ScaledBasis strides (`make_identity_layout`, TMA coordinate layouts):
//! `(_64,_8):(_1@0,_1@1)` maps a coordinate to a coordinate TUPLE; the stride `_1@1` (CuTe's
//! `E<1>`) is one step along codomain mode 1. [`parse_basis`] reads it as the Axe layout whose
//! axes `dim0`, `dim1`, ... are those codomain modes.

use super::cursor::Cursor;
use crate::cute::{CuteLayout, IntTuple, TvLayout};
use crate::error::{LayoutError, ParseError, Result};
use crate::swizzle::{Swizzle, SwizzledLayout};

const NOTATION: &str = "CuTe";

/// The notation's name in errors about ScaledBasis strides.
const BASIS: &str = "CuTe ScaledBasis";

/// The CuTe DSL's MLIR type of a layout and of a composed (swizzled) layout.
const DSL_LAYOUT: &str = "!cute.layout<\"";
const DSL_COMPOSED: &str = "!cute.composed_layout<\"";

/// Parses `shape:stride` (or C++ CuTe's type, `Layout<Shape<_4,_8>,Stride<_8,_1>>`, the DSL's
/// `!cute.layout<"shape:stride">`, a tensor's print `gmem_ptr[16b](0x..) o shape:stride`, or
/// the DSL's `tensor<ptr<f32, rmem, align<32>> o shape:stride>`, see [`dsl_tensor`]).
pub fn parse_layout(text: &str) -> Result<CuteLayout> {
    if let Some(inner) = dsl_tensor(text)? {
        return parse_layout(&inner);
    }
    if let Some(t) = cpp_type_text(text) {
        return parse_layout(&t);
    }
    let mut c = Cursor::new(text, NOTATION);
    let close = open_envelope(&mut c, DSL_LAYOUT)?;
    let l = layout(&mut c)?;
    close_envelope(&mut c, close)?;
    c.expect_end("end of layout")?;
    Ok(l)
}

/// The CuTe DSL's print of a tensor (nvidia-cutlass-dsl 4.8's `print(tensor)` inside
/// `@cute.jit`): `tensor<ptr<f32, rmem, align<32>> o (4,(2,4)):(2,(1,8))>`, a swizzled one
/// `tensor<ptr<f16, smem, align<16>> o S<3,4,3> o 0 o (8,64):(64,1)>`, or a coordinate tensor
/// `tensor<(0,0) o (8,4):(1@0,1@1)>` (`make_identity_tensor`). The pointer (element type,
/// address space, alignment) is not part of the layout: the text with `tensor<`, the pointer
/// and its `o`, and the closing `>` blanked out (spaces of the same length, so error spans
/// still point into the text as given). `None` when `text` is no DSL tensor (a TTGIR tensor
/// type `tensor<128x64xf16, ..>` starts with its shape).
pub fn dsl_tensor(text: &str) -> Result<Option<String>> {
    let lead = text.len() - text.trim_start().len();
    let Some(after) = text[lead..].strip_prefix("tensor<") else {
        return Ok(None);
    };
    let mut c = Cursor::new(text, "CuTe DSL tensor");
    c.seek(lead + "tensor<".len());
    let inner_at = lead + "tensor<".len() + (after.len() - after.trim_start().len());
    let body_start = if after.trim_start().starts_with("ptr<") {
        // The pointer type runs to its matching '>'.
        let mut depth = 0i64;
        let close = text[inner_at..].char_indices().find_map(|(i, ch)| {
            match ch {
                '<' => depth += 1,
                '>' => depth -= 1,
                _ => {}
            }
            (depth == 0 && ch == '>').then_some(inner_at + i)
        });
        let Some(close) = close else {
            let end = text.trim_end().len();
            return Err(c
                .error_at(inner_at, end, "'>' closing the tensor's ptr<..>")
                .into());
        };
        c.seek(close + 1);
        if !(c.eat("o") || c.eat("∘")) {
            return Err(c
                .error("'o' between the tensor's pointer and its layout")
                .into());
        }
        c.pos()
    } else if after.trim_start().starts_with('(') {
        // A coordinate tensor: its start tuple stays, read as ArithTuple's.
        inner_at
    } else {
        return Ok(None);
    };
    let end = text.trim_end().len();
    if !text[..end].ends_with('>') || end - 1 < body_start {
        return Err(c
            .error_at(end, end, "'>' closing the CuTe DSL tensor")
            .into());
    }
    let blank = |t: &str| " ".repeat(t.len());
    Ok(Some(format!(
        "{}{}{}{}",
        blank(&text[..body_start]),
        &text[body_start..end - 1],
        " ",
        &text[end..]
    )))
}

/// The text after the envelope a tool prints around a layout (a tensor's pointer, a DSL type's
/// opening), for telling notations apart; `text` itself when there is none.
pub(crate) fn past_envelope(text: &str) -> &str {
    let mut c = Cursor::new(text, NOTATION);
    let _ = tensor_pointer(&mut c);
    let _ = c.eat(DSL_LAYOUT) || c.eat(DSL_COMPOSED);
    c.skip_ws();
    c.rest()
}

/// Reads what may come before a layout: the pointer of a tensor's print (`gmem_ptr[16b](0x..)
/// o`), then the DSL type `opener` (`!cute.layout<"`). Returns whether the DSL type's `">`
/// must close it. The other DSL type is refused, naming the one expected.
fn open_envelope(c: &mut Cursor, opener: &str) -> Result<bool> {
    tensor_pointer(c)?;
    if c.eat(opener) {
        return Ok(true);
    }
    let other = if opener == DSL_LAYOUT {
        DSL_COMPOSED
    } else {
        DSL_LAYOUT
    };
    let at = c.pos();
    if c.eat(other) {
        let what = if opener == DSL_LAYOUT {
            "!cute.layout<\"..\"> around a layout without a swizzle (the DSL's !cute.composed_layout holds a swizzled one)"
        } else {
            "!cute.composed_layout<\"..\"> around a swizzled layout (the DSL's !cute.layout holds one without a swizzle)"
        };
        return Err(c.error_at(at, c.pos(), what).into());
    }
    Ok(false)
}

/// Closes what [`open_envelope`] opened.
fn close_envelope(c: &mut Cursor, open: bool) -> Result<()> {
    if open {
        c.expect("\">")
            .map_err(|_| c.error("'\">' closing the CuTe DSL type"))?;
    }
    Ok(())
}

/// Consumes the pointer CuTe's `print(tensor)` writes before the layout, with its `o`:
/// `gmem_ptr[16b](0x7f0000000000) o`, `smem_ptr[16b](0x7f00) o`, `rmem_ptr[32b](..) o`, or a
/// raw `ptr[32b](0x7ffd..) o`. The element offset the layout gives is added to the pointer, so
/// neither the address nor the element width changes the layout.
fn tensor_pointer(c: &mut Cursor) -> Result<()> {
    const NAMES: [&str; 4] = ["gmem_ptr", "smem_ptr", "rmem_ptr", "ptr"];
    c.skip_ws();
    let start = c.pos();
    let Some(name) = NAMES
        .iter()
        .find(|n| c.rest().starts_with(**n) && c.rest()[n.len()..].starts_with('['))
    else {
        return Ok(());
    };
    if pointer_text(c, &NAMES).is_empty() {
        return Err(c
            .error_at(
                start,
                start + name.len(),
                format!(
                    "a tensor's pointer as CuTe prints it, then 'o' and the layout \
                     ({name}[16b](0x7f00) o (128,64):(64,_1))"
                ),
            )
            .into());
    }
    Ok(())
}

/// Parses `Sw<B,M,S> o shape:stride` (also as CuTe's `print()` writes it, with a pointer tag
/// `Sw<3,4,3> o smem_ptr[16b](unset) o (_8,_64):(_64,_1)`, as the C++ type
/// `ComposedLayout<Swizzle<3,4,3>, smem_ptr_flag, Layout<...>>`, as the CuTe DSL prints it,
/// `S<3,4,3> o 0 o (8,64):(64,1)` or `!cute.composed_layout<"S<3,4,3> o 0 o (8,64):(64,1)">`,
/// and after a tensor's pointer, `smem_ptr[16b](0x7f00) o Sw<3,4,3> o _0 o (8,64):(64,_1)`,
/// which is the swizzled layout `Sw<3,4,3> o (8,64):(64,1)` of element offsets).
pub fn parse_swizzled(text: &str) -> Result<SwizzledLayout> {
    if let Some(inner) = dsl_tensor(text)? {
        return parse_swizzled(&inner);
    }
    if let Some(t) = cpp_type_text(text) {
        return parse_swizzled(&t);
    }
    let mut c = Cursor::new(text, NOTATION);
    let close = open_envelope(&mut c, DSL_COMPOSED)?;
    let l = swizzled(&mut c)?;
    close_envelope(&mut c, close)?;
    c.expect_end("end of layout")?;
    Ok(l)
}

/// Reads a pointer tag and its `o` as CuTe prints them (`smem_ptr[16b](unset) o`,
/// `smem_ptr16b o`, `gmem_ptr[32b](0x0) o`), when one is next, and returns its element width in
/// bits (`None` when there is no tag; an error when a tag names no width).
///
/// The tag matters: CuTe applies the swizzle of `Sw<B,M,S> o smem_ptr[Nb] o L` to the pointer's
/// BYTE address (`swizzle_ptr`; `as_position_independent_swizzle_layout` recasts it from bytes to
/// N-bit elements), not to L's element offset.
fn pointer_tag(c: &mut Cursor) -> Result<Option<u32>> {
    let start = c.pos();
    let tag = pointer_tag_text(c);
    if start == c.pos() {
        return Ok(None);
    }
    let digits: String = tag
        .trim_start_matches(|ch: char| ch.is_ascii_alphabetic() || ch == '_' || ch == '[')
        .chars()
        .take_while(|ch| ch.is_ascii_digit())
        .collect();
    match digits.parse::<u32>() {
        Ok(bits) if bits > 0 && bits <= 1024 && bits.is_power_of_two() => Ok(Some(bits)),
        _ => Err(c
            .error_at(
                start,
                c.pos(),
                "a pointer tag with a power-of-two element width in bits (smem_ptr[16b])",
            )
            .into()),
    }
}

/// Consumes a pointer tag and its `o` when one is next; the tag's text (empty when none).
fn pointer_tag_text(c: &mut Cursor) -> String {
    pointer_text(c, &["smem_ptr", "gmem_ptr", "rmem_ptr"])
}

/// Consumes a pointer named one of `names` (`smem_ptr[16b](unset)`), and the `o` after it,
/// when they are next; the pointer's text (empty when none).
fn pointer_text(c: &mut Cursor, names: &[&str]) -> String {
    let mut probe = c.clone();
    if !names.iter().any(|t| probe.eat(t)) {
        return String::new();
    }
    let rest = probe.rest();
    let mut len = 0;
    let mut close = None;
    for ch in rest.chars() {
        match (close, ch) {
            (Some(end), _) if ch == end => close = None,
            (Some(_), _) => {}
            (None, '[') => close = Some(']'),
            (None, '(') => close = Some(')'),
            (None, ch) if ch.is_ascii_alphanumeric() || ch == '_' => {}
            (None, _) => break,
        }
        len += ch.len_utf8();
    }
    let text = rest[..len].to_string();
    if close.is_none() && probe.eat(&text) && (probe.eat("o") || probe.eat("∘")) {
        *c = probe;
        return text;
    }
    String::new()
}

/// C++ CuTe's type spelling rewritten to the notation: `Layout<Shape<_4,_8>,Stride<_8,_1>>`
/// is `(_4,_8):(_8,_1)`, `ComposedLayout<Swizzle<3,4,3>, smem_ptr_flag_bits<16>, Layout<..>>`
/// is `Sw<3,4,3> o ..`; `Int<8>` and `C<8>` are `8`. `None` when the text is not such a type.
pub fn cpp_type_text(text: &str) -> Option<String> {
    let t = text.trim();
    if !(t.starts_with("Layout<") || t.starts_with("ComposedLayout<")) {
        return None;
    }
    let (out, rest) = cpp_term(t, 0)?;
    rest.trim().is_empty().then_some(out)
}

/// One C++ term and the text after it.
fn cpp_term(t: &str, depth: usize) -> Option<(String, &str)> {
    if depth > 32 {
        return None;
    }
    let t = t.trim_start();
    let name_len = t
        .find(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_' || ch == ':'))
        .unwrap_or(t.len());
    let (name, rest) = t.split_at(name_len);
    let name = name.trim_start_matches("cute::");
    let Some(mut rest) = rest.trim_start().strip_prefix('<') else {
        // A leaf: `_8`, `8`, or the pointer flag of a composed layout (no value).
        if name == "smem_ptr_flag" {
            // `using smem_ptr_flag = smem_ptr_flag_bits<1>` (cute/pointer_flagged.hpp).
            return Some(("smem_ptr[1b]".to_string(), rest));
        }
        let v = name.trim_start_matches('_');
        return (!v.is_empty() && v.chars().all(|ch| ch.is_ascii_digit()))
            .then(|| (v.to_string(), rest));
    };
    let mut args = Vec::new();
    loop {
        let (a, r) = cpp_term(rest, depth + 1)?;
        args.push(a);
        let r = r.trim_start();
        if let Some(r) = r.strip_prefix(',') {
            rest = r;
        } else {
            rest = r.strip_prefix('>')?;
            break;
        }
    }
    let out = match (name, args.as_slice()) {
        ("Int" | "C" | "_", [v]) => v.clone(),
        ("Shape" | "Stride" | "tuple", _) => format!("({})", args.join(",")),
        ("Layout", [shape]) => format!("{shape}:{}", compact_col_major_text(shape)?),
        ("Layout", [shape, stride]) => format!("{shape}:{stride}"),
        ("Swizzle", [b, m, s]) => format!("Sw<{b},{m},{s}>"),
        ("smem_ptr_flag_bits", [bits]) => format!("smem_ptr[{bits}b]"),
        ("ComposedLayout", [sw, ptr, l])
            if ptr.starts_with("smem_ptr[") || ptr.chars().all(|c| c.is_ascii_digit()) =>
        {
            format!("{sw} o {ptr} o {l}")
        }
        ("ComposedLayout", [sw, l]) => format!("{sw} o {l}"),
        _ => return None,
    };
    Some((out, rest))
}

/// The column-major compact strides of a shape's text (CuTe's default for `Layout<Shape>`).
fn compact_col_major_text(shape: &str) -> Option<String> {
    let tuple = parse_int_tuple(shape).ok()?;
    let mut acc = 1i64;
    fn walk(t: &IntTuple, acc: &mut i64) -> Option<String> {
        match t {
            IntTuple::Int(n) => {
                let d = if *n == 1 { 0 } else { *acc };
                *acc = acc.checked_mul(*n)?;
                Some(d.to_string())
            }
            IntTuple::Tuple(ts) => {
                let parts: Option<Vec<String>> = ts.iter().map(|x| walk(x, acc)).collect();
                Some(format!("({})", parts?.join(",")))
            }
        }
    }
    walk(&tuple, &mut acc)
}

/// Parses `shape:stride -> (tile)`.
pub fn parse_tv(text: &str) -> Result<TvLayout> {
    let mut c = Cursor::new(text, NOTATION);
    let l = tv(&mut c)?;
    c.expect_end("end of layout")?;
    Ok(l)
}

/// Parses a CuTe layout whose strides are ScaledBasis elements, as CuTe prints
/// `make_identity_layout` and TMA coordinate layouts: `(_64,_8):(_1@0,_1@1)` (the DSL writes
/// `1@0`). Such a layout maps a coordinate to a coordinate tuple: `v@k` is `v` steps along
/// codomain mode `k`, and a stride `0` moves nowhere. It reads as the Axe layout whose axes
/// `dim0`, `dim1`, ... are the codomain modes, over `shape` read as CuTe reads it
/// (colexicographically), by default the flat index `[size]`:
/// `(_64,_8):(_1@0,_1@1)` is `S[(8,64):(1@dim1,1@dim0)]`, whose flat index `i` gives
/// CuTe's `L(i) = (i mod 64, i / 64)`; with shape `[64, 8]` it is
/// `S[(64,8):(1@dim0,1@dim1)]`, the identity on coordinates `(i, j)`.
///
/// A coordinate tensor's print, `ArithTuple(_0,_0) o (_64,_8):(_1@0,_1@1)`, reads the same way,
/// its start tuple becoming the offset on each codomain mode.
///
/// Refused: a stride that is a plain non-zero integer (it has no codomain mode; CuTe cannot add
/// it to a basis element either) and a basis into a nested codomain mode (`_1@0@1`).
pub fn parse_basis(text: &str, shape: Option<&[i64]>) -> Result<crate::axe::AxeLayout> {
    if let Some(inner) = dsl_tensor(text)? {
        return parse_basis(&inner, shape);
    }
    let mut c = Cursor::new(text, BASIS);
    let start_tuple = arith_tuple(&mut c)?;
    let close = open_envelope(&mut c, DSL_LAYOUT)?;
    c.skip_ws();
    let start = c.pos();
    let shape_t = int_tuple(&mut c, 0)?;
    c.expect(":")
        .map_err(|_| c.error("':' between shape and stride"))?;
    let (stride, modes) = basis_tuple(&mut c, 0)?;
    let l = CuteLayout::new(shape_t, stride).map_err(|e| match e {
        LayoutError::Parse(p) => LayoutError::Parse(p),
        other => c
            .error_at(start, c.pos(), format!("a valid layout ({other})"))
            .into(),
    })?;
    close_envelope(&mut c, close)?;
    c.expect_end("end of layout")?;
    let axes: Vec<crate::axis::Axis> = modes
        .leaves()
        .into_iter()
        .map(|k| crate::layout::dim_axis(k.max(0) as usize))
        .collect();
    let flat: Vec<(i64, (i64, crate::axis::Axis))> = l
        .flat_modes()
        .into_iter()
        .zip(axes)
        .map(|((e, d), a)| (e, (d, a)))
        .collect();
    let size = l.size();
    let a = crate::convert::cute_basis_to_axe(&flat, shape.unwrap_or(&[size]))?;
    let offset = start_tuple
        .into_iter()
        .enumerate()
        .map(|(k, v)| (crate::layout::dim_axis(k), v))
        .collect();
    crate::axe::AxeLayout::new(a.shard().to_vec(), Vec::new(), offset)
}

/// The start of a coordinate tensor as CuTe's `print(tensor)` writes it, `ArithTuple(_0,_0) o`
/// (`make_identity_tensor`): its element at `c` is the tuple `start + L(c)`, so the start is an
/// offset on each codomain mode. Empty when there is none.
fn arith_tuple(c: &mut Cursor) -> Result<Vec<i64>> {
    if !c.eat("ArithTuple(") {
        // The CuTe DSL writes the start tuple bare, `(0,0) o (8,4):(1@0,1@1)`.
        let mut probe = c.clone();
        let bare = probe.eat("(")
            && probe.rest().find(')').is_some_and(|i| {
                let after = probe.rest()[i + 1..].trim_start();
                after.starts_with('o') || after.starts_with('∘')
            })
            && !probe.rest()[..probe.rest().find(')').unwrap_or(0)].contains('(');
        if !bare {
            return Ok(Vec::new());
        }
        *c = probe;
    }
    let mut start = Vec::new();
    loop {
        if start.len() >= MAX_MODE as usize {
            return Err(c.error(format!("at most {MAX_MODE} codomain modes")).into());
        }
        start.push(c.int(true).map_err(|e| {
            if e.expected.contains("64 bits") {
                e
            } else {
                c.error("an integer (a start coordinate of one codomain mode)")
            }
        })?);
        if c.eat(")") {
            break;
        }
        c.expect(",").map_err(|_| c.error("',' or ')'"))?;
    }
    if !(c.eat("o") || c.eat("∘")) {
        return Err(c.error("'o' after the start tuple").into());
    }
    Ok(start)
}

/// Codomain modes are numbered below this (a basis `_1@70000` is a typo, not a tensor).
const MAX_MODE: i64 = 64;

/// A stride tuple of ScaledBasis terms: the values, and each leaf's codomain mode (-1 for a
/// plain `0`, which moves nowhere).
fn basis_tuple(c: &mut Cursor, depth: usize) -> Result<(IntTuple, IntTuple), ParseError> {
    if depth > MAX_DEPTH {
        return Err(c.error(format!("at most {MAX_DEPTH} levels of nesting")));
    }
    if c.eat("(") {
        let (mut values, mut modes) = (Vec::new(), Vec::new());
        if !c.eat(")") {
            loop {
                let (v, m) = basis_tuple(c, depth + 1)?;
                values.push(v);
                modes.push(m);
                if c.eat(")") {
                    break;
                }
                c.expect(",").map_err(|_| c.error("',' or ')'"))?;
                if c.eat(")") {
                    break;
                }
            }
        }
        return Ok((IntTuple::Tuple(values), IntTuple::Tuple(modes)));
    }
    c.skip_ws();
    let at = c.pos();
    let v = c.int(true).map_err(|e| {
        if e.expected.contains("64 bits") {
            e
        } else {
            c.error("a stride such as _1@0 (a ScaledBasis: a value, '@', a codomain mode) or '('")
        }
    })?;
    if !c.eat("@") {
        if v == 0 {
            return Ok((IntTuple::Int(0), IntTuple::Int(-1)));
        }
        return Err(c.error_at(
            at,
            c.pos(),
            "a ScaledBasis stride such as _1@0, or 0: the other strides are ScaledBasis \
             elements, and a plain integer stride has no codomain mode to step along",
        ));
    }
    let mat = c.pos();
    let mut probe = c.clone();
    let Some(mode) = probe.int(false).ok().filter(|m| (0..MAX_MODE).contains(m)) else {
        return Err(c.error(format!(
            "a codomain mode number from 0 to {} after '@' (_1@1 steps along mode 1)",
            MAX_MODE - 1
        )));
    };
    *c = probe;
    if c.peek() == Some('@') {
        return Err(c.error_at(
            mat,
            c.pos() + 1,
            "one codomain mode after '@': a basis into a nested codomain mode (_1@0@1) is not read",
        ));
    }
    Ok((IntTuple::Int(v), IntTuple::Int(mode)))
}

/// Parses an IntTuple such as `(4,(2,4))` or `8`.
pub fn parse_int_tuple(text: &str) -> Result<IntTuple> {
    let mut c = Cursor::new(text, NOTATION);
    let t = int_tuple(&mut c, 0)?;
    c.expect_end("end of tuple")?;
    Ok(t)
}

pub(crate) fn swizzled(c: &mut Cursor) -> Result<SwizzledLayout> {
    c.skip_ws();
    let start = c.pos();
    // `Sw<B,M,S>` as CuTe C++ prints a swizzle, `S<B,M,S>` as the CuTe DSL does.
    if !(c.eat("Sw<") || c.eat("S<")) {
        return Err(c.error("'Sw<' (or the CuTe DSL's 'S<')").into());
    }
    let b = c.int(false)?;
    c.expect(",")?;
    let m = c.int(false)?;
    c.expect(",")?;
    let s = c.int(false)?;
    c.expect(">")?;
    let end = c.pos();
    if b < 0 || m < 0 {
        return Err(c.error_at(start, end, "Sw<B,M,S> with B, M >= 0").into());
    }
    let sw = Swizzle::from_i64(b, m, s)
        .map_err(|e| c.error_at(start, end, format!("a valid swizzle ({e})")))?;
    if let Some(ptr) = ["_smem_ptr", "_gmem_ptr", "_rmem_ptr", "_ptr"]
        .iter()
        .find(|p| c.rest().starts_with(**p))
    {
        return Err(c
            .error_at(
                end,
                end + ptr.len(),
                "'o' after the swizzle: `Sw<..>_smem_ptr` is CuTe's print of a swizzle pointer, \
                 which swizzles the ABSOLUTE address, so its layout depends on the pointer's \
                 address and is not read (print the tensor's layout, or its composition \
                 `Sw<..> o smem_ptr[16b](unset) o L`)",
            )
            .into());
    }
    if !(c.eat("o") || c.eat("∘")) {
        return Err(c.error("'o' (composition) after the swizzle").into());
    }
    // CuTe's print() names the pointer between them: `Sw<..> o smem_ptr[16b](unset) o L`; the
    // swizzle then acts on byte addresses, which is `Sw<B, M - log2(N/8), S>` on N-bit elements
    // (`Sw<B, M + log2(8/N), S>` below a byte), as CuTe's recast_layout<uint8_t, uint_bit_t<N>>.
    let tag_start = c.pos();
    let sw = match pointer_tag(c)? {
        None => sw,
        Some(bits) => {
            let (b, m, s) = (sw.bits(), sw.base(), sw.shift());
            let m = if bits >= 8 {
                let k = (bits / 8).trailing_zeros();
                m.checked_sub(k).ok_or_else(|| {
                    c.error_at(
                        tag_start,
                        c.pos(),
                        format!(
                            "a swizzle of byte addresses that keeps {bits}-bit elements whole (Sw<{b},{m},{s}> moves bits below one element)"
                        ),
                    )
                })?
            } else {
                m + (8 / bits).trailing_zeros()
            };
            Swizzle::new(b, m, s)
                .map_err(|e| c.error_at(start, c.pos(), format!("a valid swizzle ({e})")))?
        }
    };
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
            } else if c.peek() == Some('?') {
                c.error(
                    "a static integer (the CuTe DSL prints '?' for a value known only at run \
                     time; give the layout with its values)",
                )
            } else {
                c.error("an integer or '('")
            }
        })
    }
}
