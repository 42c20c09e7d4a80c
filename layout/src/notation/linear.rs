//! Linear-layout text, in Triton's two spellings.
//!
//! 1. The TTGIR attribute: `#ttg.linear<{register = [[0, 1], [1, 0]], lane = [[0, 2]],
//!    warp = [], block = []}>`. Out-dims are `dim0, dim1, ...`; the attribute does not carry
//!    their sizes (the tensor type does): pass a shape, or they are inferred from the bases.
//! 2. `LinearLayout::toString()`:
//!    ```text
//!     - register=1 -> (0, 1)
//!       register=2 -> (1, 0)
//!     - lane is a size 1 dimension
//!    where out dims are: [dim0 (size 2), dim1 (size 2)]
//!    ```
//!
//! Both print exactly what they parse. Both spellings are checked against Triton 3.9 itself
//! (`layout/tests/triton_oracle.rs`: MLIR's print of the attribute, and `toString()` text).

use super::cursor::Cursor;
use crate::error::{LayoutError, ParseError, Result};
use crate::linear::{InDim, LinearLayout, OutDim};

const ATTR: &str = "linear attribute";
const TEXT: &str = "LinearLayout text";

/// Parses `#ttg.linear<{...}>`. `shape`, if given, sets the out-dim sizes (`dim0..`).
pub fn parse_attr(text: &str, shape: Option<&[i64]>) -> Result<LinearLayout> {
    let mut c = Cursor::new(text, ATTR);
    if !(c.eat("#ttg.linear<") || c.eat("#triton_gpu.linear<")) {
        return Err(c.error("'#ttg.linear<'").into());
    }
    c.expect("{")?;
    let mut ins = Vec::new();
    let mut rank: Option<(usize, usize)> = None;
    if !c.eat("}") {
        loop {
            let name_at = c.pos();
            let name = c
                .ident("an in-dim name (register, lane, warp, block)")?
                .to_string();
            if ins.iter().any(|d: &InDim| d.name == name) {
                return Err(c
                    .error_at(
                        name_at,
                        c.pos(),
                        format!("a new in-dim ({name} appears twice)"),
                    )
                    .into());
            }
            c.expect("=")?;
            let bases = bases_list(&mut c, &mut rank, shape)?;
            ins.push(InDim { name, bases });
            if c.eat("}") {
                break;
            }
            c.expect(",").map_err(|_| c.error("',' or '}'"))?;
        }
    }
    c.expect(">")?;
    c.expect_end("end of attribute")?;
    let n = match (rank, shape) {
        (Some((r, _)), _) => r,
        (None, Some(s)) => s.len(),
        (None, None) => 0,
    };
    if let (Some((r, at)), Some(s)) = (rank, shape) {
        if s.len() != r {
            return Err(c
                .error_at(
                    at,
                    at + 1,
                    format!("bases of rank {} to match the shape {s:?}", s.len()),
                )
                .into());
        }
    }
    let names: Vec<String> = (0..n).map(|i| format!("dim{i}")).collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    LinearLayout::with_inferred_outs(ins, &refs, shape.unwrap_or(&[]))
}

/// One in-dim's bases; with a tensor `shape` of the same rank, every basis must lie inside it
/// (a basis value past a dim would silently widen that out-dim beyond the tensor).
fn bases_list(
    c: &mut Cursor,
    rank: &mut Option<(usize, usize)>,
    shape: Option<&[i64]>,
) -> Result<Vec<Vec<i64>>, ParseError> {
    c.expect("[")?;
    let mut out = Vec::new();
    if c.eat("]") {
        return Ok(out);
    }
    loop {
        c.skip_ws();
        let at = c.pos();
        let b = int_list(c, "[", "]")?;
        match rank {
            Some((r, _)) if *r != b.len() => {
                return Err(c.error_at(
                    at,
                    c.pos(),
                    format!("a basis of {r} values like the others"),
                ));
            }
            None => *rank = Some((b.len(), at)),
            _ => {}
        }
        if let Some(v) = b.iter().find(|v| **v < 0) {
            return Err(c.error_at(
                at,
                c.pos(),
                format!("non-negative basis values (found {v})"),
            ));
        }
        if let Some(s) = shape.filter(|s| s.len() == b.len()) {
            if let Some(j) = (0..b.len()).find(|&j| b[j] >= s[j]) {
                return Err(c.error_at(
                    at,
                    c.pos(),
                    format!(
                        "a basis inside the shape {s:?} (basis {b:?} has dim{j} = {} >= {})",
                        b[j], s[j]
                    ),
                ));
            }
        }
        out.push(b);
        if c.eat("]") {
            return Ok(out);
        }
        c.expect(",").map_err(|_| c.error("',' or ']'"))?;
    }
}

fn int_list(c: &mut Cursor, open: &str, close: &str) -> Result<Vec<i64>, ParseError> {
    c.expect(open)?;
    let mut v = Vec::new();
    if c.eat(close) {
        return Ok(v);
    }
    loop {
        v.push(c.int(false)?);
        if c.eat(close) {
            return Ok(v);
        }
        c.expect(",")
            .map_err(|_| c.error(format!("',' or '{close}'")))?;
    }
}

/// Prints `#ttg.linear<{...}>`; needs out-dims named `dim0, dim1, ...` in order.
pub fn print_attr(l: &LinearLayout) -> Result<String> {
    for (i, o) in l.outs().iter().enumerate() {
        if o.name != format!("dim{i}") {
            return Err(LayoutError::not_representable(
                "#ttg.linear attribute",
                format!(
                    "out-dim {i} is named {}, the attribute's out-dims are dim0, dim1, ...",
                    o.name
                ),
            ));
        }
    }
    let dims: Vec<String> = l
        .ins()
        .iter()
        .map(|d| {
            let bases: Vec<String> = d.bases.iter().map(|b| format!("[{}]", join(b))).collect();
            format!("{} = [{}]", d.name, bases.join(", "))
        })
        .collect();
    Ok(format!("#ttg.linear<{{{}}}>", dims.join(", ")))
}

fn join(v: &[i64]) -> String {
    v.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")
}

/// Prints Triton's `LinearLayout::toString()` text (without its leading newline).
pub fn print_to_string(l: &LinearLayout) -> String {
    let mut s = String::new();
    for d in l.ins() {
        if d.bases.is_empty() {
            s += &format!(" - {} is a size 1 dimension\n", d.name);
        }
        for (k, b) in d.bases.iter().enumerate() {
            let bullet = if k == 0 { " - " } else { "   " };
            s += &format!("{bullet}{}={} -> ({})\n", d.name, 1u64 << k, join(b));
        }
    }
    let outs: Vec<String> = l
        .outs()
        .iter()
        .map(|o| format!("{} (size {})", o.name, o.size()))
        .collect();
    s += &format!("where out dims are: [{}]", outs.join(", "));
    s
}

/// Parses the `toString()` text.
pub fn parse_to_string(text: &str) -> Result<LinearLayout> {
    let mut c = Cursor::new(text, TEXT);
    let mut ins: Vec<InDim> = Vec::new();
    loop {
        if c.eat("where") {
            break;
        }
        let bullet = c.eat("-");
        let name_at = c.pos();
        let name = c
            .ident("an in-dim name, '- ', or 'where out dims are:'")?
            .to_string();
        let name_end = c.pos();
        let known = ins.last().is_some_and(|d| d.name == name);
        if bullet == known {
            let want = if bullet {
                "a continuation line of the previous in-dim (no '-')"
            } else {
                "'- ' before a new in-dim"
            };
            return Err(c.error_at(name_at, name_end, want).into());
        }
        if bullet && ins.iter().any(|d| d.name == name) {
            return Err(c
                .error_at(
                    name_at,
                    name_end,
                    format!("a new in-dim ({name} appeared before)"),
                )
                .into());
        }
        if bullet && c.eat("is") {
            for w in ["a", "size", "1", "dimension"] {
                c.expect(w)?;
            }
            ins.push(InDim {
                name,
                bases: Vec::new(),
            });
            continue;
        }
        c.expect("=")?;
        let at = c.pos();
        let k = c.int(false)?;
        if bullet {
            ins.push(InDim {
                name,
                bases: Vec::new(),
            });
        }
        let dim = ins.last_mut().expect("pushed above");
        let want = 1i64.checked_shl(dim.bases.len() as u32).unwrap_or(0);
        if k != want {
            return Err(c
                .error_at(
                    at,
                    c.pos(),
                    format!("{}={want} (bases are listed bit by bit)", dim.name),
                )
                .into());
        }
        c.expect("->")?;
        dim.bases.push(int_list(&mut c, "(", ")")?);
    }
    for w in ["out", "dims", "are", ":", "["] {
        c.expect(w)?;
    }
    let mut outs = Vec::new();
    if !c.eat("]") {
        loop {
            let name = c.ident("an out-dim name")?.to_string();
            c.expect("(")?;
            c.expect("size")?;
            let at = c.pos();
            let size = c.int(false)?;
            let log2_size = crate::arith::log2(size)
                .ok_or_else(|| c.error_at(at, c.pos(), "a power-of-two size"))?;
            c.expect(")")?;
            outs.push(OutDim { name, log2_size });
            if c.eat("]") {
                break;
            }
            c.expect(",").map_err(|_| c.error("',' or ']'"))?;
        }
    }
    c.expect_end("end of text")?;
    let end = text.len();
    LinearLayout::new(ins, outs).map_err(|e| {
        c.error_at(0, end, format!("a valid linear layout ({e})"))
            .into()
    })
}
