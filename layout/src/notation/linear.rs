//! Linear-layout text, in Triton's two spellings.
//!
//! 1. The TTGIR attribute: `#ttg.linear<{register = [[0, 1], [1, 0]], lane = [[0, 2]],
//!    warp = [], block = []}>`. Out-dims are `dim0, dim1, ...`; the attribute does not carry
//!    their sizes (the tensor type does): they are inferred from the bases, and a tensor shape,
//!    if given, fits the layout to it as Triton does ([`fit_to_shape`]). Triton 3.9 prints a
//!    layout whose bases are not a permutation of unit vectors (after dropping zero bases) as
//!    `#ttg.generic_linear<{...}>` with the same fields; it reads here with the same meaning.
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

/// Parses `#ttg.linear<{...}>` (or `#ttg.generic_linear<{...}>`, the same). A flat `order = [..]` is read and ignored, as Triton's parser
/// ignores every key but its in-dims. With a tensor `shape`, an attribute whose in-dims are Triton's
/// (`register, lane, warp, block`) is fitted to it as Triton does ([`fit_to_shape`]); one with
/// other in-dim names (laycert's own linear layouts) takes the shape as its out-dim sizes, and
/// a basis outside it is an error naming the basis and the shape.
pub fn parse_attr(text: &str, shape: Option<&[i64]>) -> Result<LinearLayout> {
    let mut c = Cursor::new(text, ATTR);
    if !(c.eat("#ttg.linear<") || c.eat("#triton_gpu.linear<") || c.eat("#ttg.generic_linear<")) {
        return Err(c.error("'#ttg.linear<' or '#ttg.generic_linear<'").into());
    }
    c.expect("{")?;
    let mut ins = Vec::new();
    let mut rank: Option<(usize, usize)> = None;
    let mut order_seen = false;
    if !c.eat("}") {
        loop {
            let name_at = c.pos();
            let name = c
                .ident("an in-dim name (register, lane, warp, block)")?
                .to_string();
            let twice =
                ins.iter().any(|d: &InDim| d.name == name) || (order_seen && name == "order");
            if twice {
                return Err(c
                    .error_at(
                        name_at,
                        c.pos(),
                        format!("a new in-dim ({name} appears twice)"),
                    )
                    .into());
            }
            c.expect("=")?;
            let mut probe = c.clone();
            if name == "order" && probe.eat("[") && probe.peek() != Some('[') {
                // Triton reads only `register, lane, warp, block` and ignores other keys;
                // its own lit tests write an `order` (test/TritonGPU/amd/invalid.mlir).
                int_list(&mut c, "[", "]")?;
                order_seen = true;
            } else {
                let bases = bases_list(&mut c, &mut rank)?;
                ins.push(InDim { name, bases });
            }
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
    let triton = ins.iter().all(|d| TRITON_INS.contains(&d.name.as_str()));
    match shape {
        Some(s) if triton => fit_to_shape(&LinearLayout::with_inferred_outs(ins, &refs, &[])?, s),
        Some(s) => {
            // In-dims Triton does not have: a layout of laycert's own, whose out-dims are the
            // shape; a basis past it would silently widen a dim beyond the tensor.
            for d in &ins {
                for b in &d.bases {
                    if let Some(j) = (0..b.len().min(s.len())).find(|&j| b[j] >= s[j]) {
                        return Err(LayoutError::Shape {
                            shape: s.to_vec(),
                            why: format!(
                                "basis {}{b:?} has dim{j} = {} >= {}, outside the shape",
                                d.name, b[j], s[j]
                            ),
                        });
                    }
                }
            }
            LinearLayout::with_inferred_outs(ins, &refs, s)
        }
        None => LinearLayout::with_inferred_outs(ins, &refs, &[]),
    }
}

/// The in-dims of Triton's distributed linear layouts: an attribute with only these is fitted
/// to a tensor shape as Triton fits it; other names are laycert's own linear layouts.
const TRITON_INS: [&str; 4] = ["register", "lane", "warp", "block"];

/// The layout of a `#ttg.linear` attribute on a tensor of `shape`, as Triton 3.9 fits a linear
/// encoding (`layout/tests/triton_linear_fit.rs` checks it against Triton on 336 cases):
///
/// - a dim the bases do not reach is **repeated in new register bases**, dims taken in the
///   order the register bases first move them, then the others from the last dim down;
/// - a dim the bases overrun is **cut**: the lane, warp and block bases beyond it become zero
///   in that dim (a broadcast), and register bases beyond it are removed.
///
/// Triton cuts the largest bases one at a time, one per halving of the dim; that is "every
/// basis beyond the shape" only when the dim's values are distinct powers of two, as Triton's
/// verifier requires of the attribute (a permutation after removing broadcast bases).
/// Otherwise the fit is refused, naming the dim.
///
/// `register = [[0, 1], [8, 0]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]]` on `[8, 8]`
/// drops the register basis `[8, 0]`; on `[32, 32]` it gains `[0, 8], [0, 16], [16, 0]`.
pub fn fit_to_shape(own: &LinearLayout, shape: &[i64]) -> Result<LinearLayout> {
    let bad = |why: String| LayoutError::Shape {
        shape: shape.to_vec(),
        why,
    };
    if shape.len() != own.outs().len() {
        return Err(bad(format!(
            "the layout has {} dims, the shape {}",
            own.outs().len(),
            shape.len()
        )));
    }
    let mut want = Vec::with_capacity(shape.len());
    for &s in shape {
        match crate::arith::log2(s) {
            Some(b) => want.push(b),
            None => return Err(bad(format!("{s} is not a power of two"))),
        }
    }
    let mut ins: Vec<InDim> = own.ins().to_vec();
    let has = |ins: &[InDim], name: &str| ins.iter().position(|d| d.name == name);
    let reg = match has(&ins, "register") {
        Some(i) => i,
        None => {
            ins.insert(
                0,
                InDim {
                    name: "register".into(),
                    bases: Vec::new(),
                },
            );
            0
        }
    };
    // Cut every overrun dim (registers removed after all dims are seen, as Triton does).
    let mut removed = vec![false; ins[reg].bases.len()];
    for (j, o) in own.outs().iter().enumerate() {
        if o.log2_size <= want[j] {
            continue;
        }
        let limit = 1i64 << want[j];
        let mut values: Vec<i64> = Vec::new();
        for d in &ins {
            values.extend(d.bases.iter().map(|b| b[j]).filter(|&v| v != 0));
        }
        values.sort_unstable();
        let distinct_pow2 =
            values.iter().all(|v| v.count_ones() == 1) && values.windows(2).all(|w| w[0] != w[1]);
        let beyond = values.iter().filter(|&&v| v >= limit).count();
        if !distinct_pow2 || beyond != (o.log2_size - want[j]) as usize {
            return Err(bad(format!(
                "dim{j}: Triton cuts the dim from {} to {limit} by removing one basis per halving, \
                 largest first, but the bases' values there are {values:?}, not one power of two \
                 per bit (Triton's verifier requires a permutation), so the fit is not defined",
                o.size()
            )));
        }
        for (i, d) in ins.iter_mut().enumerate() {
            for (k, b) in d.bases.iter_mut().enumerate() {
                if b[j] >= limit {
                    if i == reg {
                        removed[k] = true;
                    } else {
                        b[j] = 0;
                    }
                }
            }
        }
    }
    let mut k = 0;
    ins[reg].bases.retain(|_| {
        k += 1;
        !removed[k - 1]
    });
    // Repeat every dim the bases do not reach, in the register bases' order of dims.
    let mut order: Vec<usize> = Vec::new();
    let own_registers = own.ins().iter().filter(|d| d.name == "register");
    for b in own_registers.flat_map(|d| d.bases.iter()) {
        if let Some(j) = b.iter().position(|&v| v != 0) {
            if !order.contains(&j) {
                order.push(j);
            }
        }
    }
    for j in (0..shape.len()).rev() {
        if !order.contains(&j) {
            order.push(j);
        }
    }
    for j in order {
        let have = own.outs()[j].log2_size;
        for bit in have..want[j] {
            let mut b = vec![0; shape.len()];
            b[j] = 1i64 << bit;
            ins[reg].bases.push(b);
        }
    }
    if !own.ins().iter().any(|d| d.name == "register") && ins[reg].bases.is_empty() {
        ins.remove(reg);
    }
    let outs = own
        .outs()
        .iter()
        .zip(&want)
        .map(|(o, &w)| OutDim {
            name: o.name.clone(),
            log2_size: w,
        })
        .collect();
    LinearLayout::new(ins, outs)
}

/// One in-dim's bases.
fn bases_list(
    c: &mut Cursor,
    rank: &mut Option<(usize, usize)>,
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

/// Prints `#ttg.linear<{...}>`; needs out-dims named `dim0, dim1, ...` in order. A layout over
/// Triton's distributed in-dims (`register`, `lane`, `warp`, `block`) whose nonzero bases are not
/// distinct unit vectors prints as `#ttg.generic_linear<{...}>`, as Triton 3.9 prints it: its
/// `#ttg.linear` verifier refuses such bases ("requires a permutation matrix layout"), so that
/// is the spelling Triton reads back ([`is_permutation`]).
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
        .map(|d| format!("{} = {}", d.name, bases_text(&d.bases)))
        .collect();
    let distributed = l
        .ins()
        .iter()
        .all(|d| TRITON_IN_DIMS.contains(&d.name.as_str()));
    let name = if distributed && !is_permutation(l) {
        "generic_linear"
    } else {
        "linear"
    };
    Ok(format!("#ttg.{name}<{{{}}}>", dims.join(", ")))
}

/// Triton's in-dims of a distributed layout, in its order.
const TRITON_IN_DIMS: [&str; 4] = ["register", "lane", "warp", "block"];

/// Whether the nonzero bases of `l` are distinct unit vectors (one nonzero entry, a power of
/// two): a permutation matrix once zero bases are dropped, which is what Triton 3.9's
/// `#ttg.linear` accepts. `register = [[0, 0], [1, 0]], lane = [[0, 1]]` is one;
/// `register = [[1, 0], [1, 0]]` (a repeated basis) and `register = [[3, 0]]` are not.
pub fn is_permutation(l: &LinearLayout) -> bool {
    let mut seen = std::collections::BTreeSet::new();
    l.ins().iter().flat_map(|d| &d.bases).all(|b| {
        b.iter().all(|&v| v == 0)
            || crate::linear::single_entry(b)
                .is_some_and(|(j, v)| v.count_ones() == 1 && seen.insert((j, v)))
    })
}

/// Bases as Triton's attributes print them: `[[0, 1], [2, 0]]` (`[]` for none).
pub fn bases_text(bases: &[Vec<i64>]) -> String {
    let each: Vec<String> = bases.iter().map(|b| format!("[{}]", join(b))).collect();
    format!("[{}]", each.join(", "))
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

/// `toString()` text as a C++ comment or an MLIR lit test quotes it keeps its `//` markers
/// (`// - register=1 -> (1, 0)`, `// where out dims are: ..`): when every non-empty line
/// starts with `//` after its indentation, the markers read as blanks. The text keeps its
/// length, so an error still points into the text as pasted.
fn blank_comment_markers(text: &str) -> std::borrow::Cow<'_, str> {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.len() < 2 || !lines.iter().all(|l| l.trim_start().starts_with("//")) {
        return text.into();
    }
    text.split_inclusive('\n')
        .map(|line| match line.find("//") {
            Some(at) if line[..at].trim().is_empty() => {
                format!("{}  {}", &line[..at], &line[at + 2..])
            }
            _ => line.to_string(),
        })
        .collect::<String>()
        .into()
}

/// Parses the `toString()` text.
pub fn parse_to_string(text: &str) -> Result<LinearLayout> {
    let text = blank_comment_markers(text);
    let text = text.as_ref();
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
