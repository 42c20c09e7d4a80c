//! A TTGIR memory descriptor type, `!ttg.memdesc<128x64xf16, #ttg.swizzled_shared<{..}>,
//! #ttg.shared_memory, mutable, 3x128x64>`, as MLIR prints a shared- or tensor-memory value:
//! its shape, element type, encoding, memory space, `mutable` when it may be written, and the
//! shape of the allocation it is a view of when that differs from its own.
//!
//! Its layout is Triton's `toLinearLayout(MemDescType)`: the encoding on the LAST `rank` dims
//! of the allocation shape (`getAllocShape().take_back(getRank())`), where `rank` is the
//! descriptor's own rank. So:
//!
//! - a multi-buffered allocation `3x128x64` viewed as one buffer `128x64` (after
//!   `memdesc_index`) has the encoding's layout on `128x64`: the leading `3` counts buffers, one
//!   after the other, and is not part of one buffer's layout;
//! - a subslice `64x64` of a `128x64` allocation (`memdesc_subslice`) has the layout of the
//!   whole `128x64` buffer, which Triton trims to the view where it uses it: the layout read is
//!   the parent buffer's, on `128x64`.
//!
//! Without an allocation shape it is the descriptor's own shape. Example: `!ttg.memdesc<8x8xf16,
//! #ttg.swizzled_shared<{vec = 2, perPhase = 1, maxPhase = 4, order = [1, 0]}>,
//! #ttg.shared_memory, mutable, 2x8x8>` is that `swizzled_shared` on 8x8: offset bases
//! `[0,1],[0,2],[0,4],[1,2],[2,4],[4,0]`.
//!
//! The memory space (`#ttg.shared_memory`, `#ttng.tensor_memory`, or an alias such as `#smem`)
//! and `mutable` are not part of the map and are only checked for spelling.

use crate::error::Result;
use crate::notation::cursor::Cursor;

const WHAT: &str = "TTGIR memdesc type";

/// The memory spaces Triton 3.9 prints (and the pre-3.2 dialect name).
const SPACES: [&str; 3] = [
    "#ttg.shared_memory",
    "#triton_gpu.shared_memory",
    "#ttng.tensor_memory",
];

/// A parsed memory descriptor type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemDesc {
    /// The text with everything but the encoding blanked out (spaces of the same length, so
    /// error spans still point into the text as given).
    pub encoding: String,
    /// The descriptor's own shape.
    pub shape: Vec<i64>,
    /// The allocation shape as written (the descriptor's own shape when none is written).
    pub alloc_shape: Vec<i64>,
    /// The element type as written (`f16`, `i8`, `f8E4M3FN`).
    pub element: String,
}

impl MemDesc {
    /// Bits of the element type, where its name says (`f16`, `bf16`, `i8`, `f8E4M3FN`,
    /// `f4E2M1FN`, `tf32`: 32).
    pub fn element_bits(&self) -> Option<i64> {
        let e = self.element.as_str();
        if e == "tf32" {
            return Some(32);
        }
        let digits = e
            .strip_prefix("bf")
            .or_else(|| e.strip_prefix('f'))
            .or_else(|| e.strip_prefix('i'))?;
        let n: String = digits.chars().take_while(char::is_ascii_digit).collect();
        n.parse().ok()
    }

    /// The shape the encoding is laid out on: the last `rank` dims of the allocation shape.
    pub fn layout_shape(&self) -> &[i64] {
        &self.alloc_shape[self.alloc_shape.len() - self.shape.len()..]
    }
}

/// Whether `text` opens a memory descriptor type (`!ttg.memdesc<`, the older `!tt.memdesc<`,
/// `!triton_gpu.memdesc<`, or without the dialect `memdesc<`).
fn opener(text: &str) -> Option<usize> {
    [
        "!ttg.memdesc<",
        "!tt.memdesc<",
        "!triton_gpu.memdesc<",
        "memdesc<",
    ]
    .iter()
    .find(|o| text.starts_with(**o))
    .map(|o| o.len())
}

/// Reads `text` as a memory descriptor type; `None` when it is none.
pub fn memdesc_type(text: &str) -> Result<Option<MemDesc>> {
    let lead = text.len() - text.trim_start().len();
    let Some(open) = opener(&text[lead..]) else {
        return Ok(None);
    };
    let mut c = Cursor::new(text, WHAT);
    c.expect(&text[lead..lead + open])?;
    let shape = super::type_dims(
        &mut c,
        true,
        "a shape such as 128x64x before the element type (!ttg.memdesc<128x64xf16, #..>)",
    )?;
    // The top-level comma-separated parts after the shape: element type, encoding, memory
    // space, then `mutable` and the allocation shape, each optional.
    let body_start = c.pos();
    let mut parts: Vec<(usize, usize)> = Vec::new();
    let (mut depth, mut from, mut close) = (0i64, body_start, None);
    let mut prev = ' ';
    for (i, ch) in text[body_start..].char_indices() {
        let at = body_start + i;
        match ch {
            '<' | '{' | '[' | '(' => depth += 1,
            '>' if prev == '-' => {}
            '>' | '}' | ']' | ')' => {
                if depth == 0 {
                    close = Some(at);
                    parts.push((from, at));
                    break;
                }
                depth -= 1;
            }
            ',' if depth == 0 => {
                parts.push((from, at));
                from = at + 1;
            }
            _ => {}
        }
        prev = ch;
    }
    let Some(close) = close else {
        let end = text.trim_end().len();
        return Err(c.error_at(end, end, "'>' closing the memdesc type").into());
    };
    if !text[close + 1..].trim().is_empty() {
        let at = close + 1 + (text[close + 1..].len() - text[close + 1..].trim_start().len());
        return Err(c
            .error_at(at, text.trim_end().len(), "end of the memdesc type")
            .into());
    }
    let trimmed = |(s, e): (usize, usize)| -> (usize, usize) {
        let t = &text[s..e];
        let s2 = s + (t.len() - t.trim_start().len());
        (s2, s2 + t.trim().len())
    };
    let parts: Vec<(usize, usize)> = parts.into_iter().map(trimmed).collect();
    if parts.len() < 3 {
        return Err(c
            .error_at(
                parts.last().map_or(close, |p| p.1),
                close + 1,
                "an element type, the layout encoding and the memory space \
                 (!ttg.memdesc<128x64xf16, #ttg.swizzled_shared<{..}>, #ttg.shared_memory>)",
            )
            .into());
    }
    let (es, ee) = parts[1];
    let encoding = &text[es..ee];
    if encoding.starts_with('#') && !encoding.contains('.') && !encoding.contains('<') {
        return Err(c
            .error_at(
                es,
                ee,
                format!(
                    "a layout attribute such as #ttg.swizzled_shared<{{..}}>: {encoding} is an \
                     alias of a TTGIR file (paste its definition line `{encoding} = ..` before \
                     the type, or pass the file with --mlir FILE)"
                ),
            )
            .into());
    }
    if !encoding.starts_with('#') {
        return Err(c
            .error_at(
                es,
                ee,
                "a layout attribute such as #ttg.swizzled_shared<{..}> as the encoding",
            )
            .into());
    }
    let (ss, se) = parts[2];
    let space = &text[ss..se];
    let is_alias = space.starts_with('#')
        && space.len() > 1
        && space[1..]
            .chars()
            .all(|ch| ch.is_ascii_alphanumeric() || ch == '_' || ch == '$');
    if !SPACES.contains(&space) && !is_alias {
        return Err(c
            .error_at(
                ss,
                se,
                format!("a memory space ({}, or an alias)", SPACES.join(", ")),
            )
            .into());
    }
    let mut alloc_shape = shape.clone();
    let mut rest = parts[3..].iter().copied().peekable();
    rest.next_if(|&(s, e)| &text[s..e] == "mutable");
    if let Some((s, e)) = rest.next() {
        let mut a = c.clone();
        a.seek(s);
        let alloc = super::type_dims(&mut a, false, "an allocation shape such as 3x128x64");
        let Some(alloc) = alloc.ok().filter(|_| a.pos() == e) else {
            return Err(c
                .error_at(
                    s,
                    e,
                    "`mutable` or an allocation shape such as 3x128x64 (then '>')",
                )
                .into());
        };
        if alloc.len() < shape.len() {
            return Err(c
                .error_at(
                    s,
                    e,
                    format!(
                        "an allocation shape of rank at least {} (the memdesc's own rank)",
                        shape.len()
                    ),
                )
                .into());
        }
        alloc_shape = alloc;
    }
    if let Some((s, e)) = rest.next() {
        return Err(c.error_at(s, e, "'>' closing the memdesc type").into());
    }
    let blank = |t: &str| " ".repeat(t.len());
    let kept = format!("{}{}{}", blank(&text[..es]), encoding, blank(&text[ee..]));
    Ok(Some(MemDesc {
        element: text[parts[0].0..parts[0].1].to_string(),
        encoding: kept,
        shape,
        alloc_shape,
    }))
}
