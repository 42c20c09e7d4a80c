//! TVM index maps: `T.index_map(lambda i, j: (i // 16, j // 16, i % 16, j % 16))`, what
//! `sch.transform_layout` takes, read as an Axe layout on the flattened buffer (axis `m`).
//!
//! Sources: TVM's `tvm.tirx.IndexMap` (`python/tvm/tirx/function.py`, `src/tirx/ir/index_map.cc`,
//! apache-tvm 0.27). The rules read here:
//!
//! 1. An index map is a Python function of the buffer's logical indices giving its physical
//!    indices: `from_func(mapping_function)`, printed by `IndexMapNode::ToPythonString` as
//!    `lambda i, j: (e0, e1, ..,)` (inside `T.index_map(..)`; older TVM printed
//!    `index_map(..)`, and a map with an inverse as `tvm.tir.IndexMap.from_func(lambda ..,
//!    inverse_index_map=lambda ..)`). "Returning a tirx.Expr is equivalent to returning a list of
//!    length 1 containing that tirx.Expr." Expressions are TIR's: `//` and `%` are `floordiv` and
//!    `floormod` (Python's own meaning), `T.Div`/`T.truncdiv` and `T.truncmod` round towards
//!    zero, constants may print as `T.int64(16)`.
//! 2. `transform_layout` allocates the transformed buffer with the shape `MapShape` gives, and
//!    the buffer is flattened row-major (`FlattenBuffer`): the offset of logical index `x` is
//!    `sum_k out_k(x) * S_k` with `S_k` the row-major strides of that physical shape. `MapShape`
//!    checks each output's range starts at 0 (`is_zero(range->min)`).
//! 3. `MapShape` takes each output's extent from TVM's iterator analysis (`DetectIterMap`), else
//!    from interval bounds: it pads. Measured with TVM 0.27 (the oracle data
//!    `tests/data/tvm/index_map.jsonl`): `i % 16` over `i < 6` gets extent 16, `j * 2` over
//!    `j < 10` gets 20, where the values reach 5 and 18.
//!
//! So laycert takes the physical shape from one of two places, and never guesses:
//!
//! - **The transformed buffer's declaration pasted after the map** (TVM prints it once the
//!   schedule has run: `A = T.Buffer((7, 4, 16, 16), "float16")`): used as given; every mapped
//!   index must lie inside it.
//! - **Otherwise, each output's exact range**, and only where that is what TVM allocates: every
//!   output takes every value of `[0, n)` over the buffer (no gaps); none subtracts (TVM
//!   refuses `4 - i`, and gives `0 - i` over `i < 1` the extent -1), multiplies two indices
//!   (TVM refuses `i * i`) or scales a dim of extent 1 (TVM gives `j * 3` over `j < 1` the
//!   extent 3: its analysis keeps extent-1 iterators); and every `//` and `%`
//!   divides a dividend whose values lie in `[0, R)`, reaching `R - 1`, with `R` a multiple of
//!   the divisor (no padding). Any other map is refused, naming the output that breaks this and
//!   asking for the transformed buffer's declaration. In the oracle data, every map that passes
//!   this test has TVM's shape (a test checks it).
//!
//! The logical shape is `--shape` (the library's `shape` argument) or a buffer declared before
//! the map (`T.Buffer((128, 64), "float16")`, `T.match_buffer(a, (128, 64))`,
//! `T.alloc_buffer(..)`, `decl_buffer(..)`); both must agree.
//!
//! **From the offset function to an Axe shard.** The offset is `f(x) = sum_k S_k out_k(x)`. The
//! outputs that share an index variable tie those variables into one group, and `f` is the sum
//! of one function per group (each output reads one group's variables only). Each group's
//! function, over its variables' row-major index, is recognized as a shard by
//! [`crate::axe::shard_of::shard_of`], which checks every index of the group (so the work is
//! the sum of the groups' sizes, not their product) and whose "no" is a proof: a map that is no
//! strided map is refused with the index where the forced step fails. The shard is grouped by
//! the variables ([`crate::axe::group()`]) where it can be; a boundary it cannot be split at
//! must join variables that are adjacent in the buffer. Last, the Axe layout
//! is evaluated by laycert's own semantics at the corners and 256 sampled coordinates and
//! compared with the map. Worked example (a test checks it): `lambda i, j: (i // 16, j // 16, i
//! % 16, j % 16)` on `(128, 64)` has the physical shape `(8, 4, 16, 16)` and reads as
//! `S[(8,16,4,16):(1024,16,256,1)]`.
//!
//! An `inverse_index_map` is checked: it must map every mapped index back (TVM leaves its
//! correctness to the caller). Refused by name: `*args` lambdas, axis separators (a buffer of
//! several physical axes), `/` (true division in Python), a divisor 0, and maps whose check
//! would evaluate more than [`MAX_WORK`] outputs. A `pad_value` does not change the layout and is
//! skipped.

use std::collections::BTreeMap;

use super::cursor::{dotted, without_python_comments, Cursor};
use crate::arith;
use crate::axe::shard_of::{shard_of, Recognized};
use crate::axe::{self, AxeLayout, Iter};
use crate::axis::Axis;
use crate::error::{LayoutError, ParseError, Result};

const NOTATION: &str = "TVM index map";

/// Most output evaluations spent reading one map: its ranges, the check of its strided form at
/// every coordinate of every group, and (with an inverse) the inverse at every coordinate.
pub const MAX_WORK: i64 = 1 << 29;

/// Deepest expression nesting read (deeper text is refused, not recursed into).
const MAX_DEPTH: usize = 128;

/// Most variables (dims) of a map, and most outputs.
const MAX_VARS: usize = 16;
const MAX_OUTPUTS: usize = 32;

/// Widest output range whose values are listed to see whether they fill `[0, n)`.
const MAX_RANGE_LISTED: i64 = 1 << 26;

/// A binary operation of TIR, as the printer writes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `a + b`
    Add,
    /// `a - b`
    Sub,
    /// `a * b`
    Mul,
    /// `a // b`, `T.floordiv(a, b)`: rounds down.
    FloorDiv,
    /// `a % b`, `T.floormod(a, b)`: the sign of `b`.
    FloorMod,
    /// `T.Div(a, b)`, `T.truncdiv(a, b)`: rounds towards zero.
    TruncDiv,
    /// `T.truncmod(a, b)`: the sign of `a`.
    TruncMod,
    /// `T.min(a, b)`
    Min,
    /// `T.max(a, b)`
    Max,
}

impl Op {
    fn is_division(self) -> bool {
        matches!(
            self,
            Op::FloorDiv | Op::FloorMod | Op::TruncDiv | Op::TruncMod
        )
    }

    fn text(self) -> &'static str {
        match self {
            Op::Add => "+",
            Op::Sub => "-",
            Op::Mul => "*",
            Op::FloorDiv => "//",
            Op::FloorMod => "%",
            Op::TruncDiv => "T.truncdiv",
            Op::TruncMod => "T.truncmod",
            Op::Min => "T.min",
            Op::Max => "T.max",
        }
    }
}

/// An index expression over the map's variables.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expr {
    /// An integer constant.
    Const(i64),
    /// The `i`-th parameter of the lambda.
    Var(usize),
    /// `-a`
    Neg(Box<Expr>),
    /// `a op b`
    Bin(Op, Box<Expr>, Box<Expr>),
}

impl Expr {
    /// The value at `env` (one value per parameter), with checked arithmetic.
    pub fn eval(&self, env: &[i64]) -> Result<i64> {
        Ok(match self {
            Expr::Const(c) => *c,
            Expr::Var(v) => env[*v],
            Expr::Neg(a) => a
                .eval(env)?
                .checked_neg()
                .ok_or(LayoutError::Overflow { op: "index map" })?,
            Expr::Bin(op, a, b) => apply(*op, a.eval(env)?, b.eval(env)?)?,
        })
    }

    /// The parameters it reads, as a bit set.
    fn vars(&self) -> u32 {
        match self {
            Expr::Const(_) => 0,
            Expr::Var(v) => 1 << v,
            Expr::Neg(a) => a.vars(),
            Expr::Bin(_, a, b) => a.vars() | b.vars(),
        }
    }

    /// Its nodes in pre-order.
    fn nodes<'a>(&'a self, out: &mut Vec<&'a Expr>) {
        out.push(self);
        match self {
            Expr::Const(_) | Expr::Var(_) => {}
            Expr::Neg(a) => a.nodes(out),
            Expr::Bin(_, a, b) => {
                a.nodes(out);
                b.nodes(out);
            }
        }
    }

    /// Evaluates every node into `values`, in the order of [`Expr::nodes`].
    fn eval_nodes(&self, env: &[i64], values: &mut [i64], next: &mut usize) -> Result<i64> {
        let at = *next;
        *next += 1;
        let v = match self {
            Expr::Const(c) => *c,
            Expr::Var(v) => env[*v],
            Expr::Neg(a) => a
                .eval_nodes(env, values, next)?
                .checked_neg()
                .ok_or(LayoutError::Overflow { op: "index map" })?,
            Expr::Bin(op, a, b) => {
                let x = a.eval_nodes(env, values, next)?;
                let y = b.eval_nodes(env, values, next)?;
                apply(*op, x, y)?
            }
        };
        values[at] = v;
        Ok(v)
    }

    fn size(&self) -> usize {
        match self {
            Expr::Const(_) | Expr::Var(_) => 1,
            Expr::Neg(a) => 1 + a.size(),
            Expr::Bin(_, a, b) => 1 + a.size() + b.size(),
        }
    }

    /// Python text with the lambda's parameter names.
    pub fn text(&self, names: &[String]) -> String {
        match self {
            Expr::Const(c) => c.to_string(),
            Expr::Var(v) => names[*v].clone(),
            Expr::Neg(a) => format!("-{}", a.operand_text(names)),
            Expr::Bin(op @ (Op::TruncDiv | Op::TruncMod | Op::Min | Op::Max), a, b) => {
                format!("{}({}, {})", op.text(), a.text(names), b.text(names))
            }
            Expr::Bin(op, a, b) => format!(
                "{} {} {}",
                a.operand_text(names),
                op.text(),
                b.operand_text(names)
            ),
        }
    }

    fn operand_text(&self, names: &[String]) -> String {
        match self {
            Expr::Bin(Op::Add | Op::Sub | Op::Mul | Op::FloorDiv | Op::FloorMod, _, _) => {
                format!("({})", self.text(names))
            }
            _ => self.text(names),
        }
    }
}

/// `x op y` with TIR's meaning and checked arithmetic.
fn apply(op: Op, x: i64, y: i64) -> Result<i64> {
    let overflow = LayoutError::Overflow { op: "index map" };
    if op.is_division() && y == 0 {
        return Err(LayoutError::invalid(
            NOTATION,
            format!(
                "it divides {x} by 0 (`{}` with a divisor that is 0 there)",
                op.text()
            ),
        ));
    }
    Ok(match op {
        Op::Add => x.checked_add(y).ok_or(overflow)?,
        Op::Sub => x.checked_sub(y).ok_or(overflow)?,
        Op::Mul => x.checked_mul(y).ok_or(overflow)?,
        Op::FloorDiv | Op::FloorMod | Op::TruncDiv | Op::TruncMod => {
            // i64::MIN / -1 overflows; its remainder is 0.
            let q = x.checked_div(y);
            let r = x.checked_rem(y).unwrap_or(0);
            // Floor forms round towards minus infinity: the remainder takes the divisor's sign.
            let down = r != 0 && ((r < 0) != (y < 0));
            match op {
                Op::TruncDiv => q.ok_or(overflow)?,
                Op::TruncMod => r,
                Op::FloorDiv => q.ok_or(overflow)? - i64::from(down),
                _ => {
                    if down {
                        r + y
                    } else {
                        r
                    }
                }
            }
        }
        Op::Min => x.min(y),
        Op::Max => x.max(y),
    })
}

/// `lambda params: outputs`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lambda {
    /// The parameter names, in order.
    pub params: Vec<String>,
    /// The output expressions, in order.
    pub outputs: Vec<Expr>,
}

impl Lambda {
    /// The outputs at `env`.
    pub fn eval(&self, env: &[i64]) -> Result<Vec<i64>> {
        self.outputs.iter().map(|e| e.eval(env)).collect()
    }

    /// `lambda i, j: (e0, e1,)`, as TVM prints it.
    pub fn text(&self) -> String {
        let outs: Vec<String> = self
            .outputs
            .iter()
            .map(|e| format!("{},", e.text(&self.params)))
            .collect();
        format!("lambda {}: ({})", self.params.join(", "), outs.join(" "))
    }
}

/// An index map as pasted: the map, its inverse when given, and the buffer shapes declared
/// before it (logical) and after it (physical).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexMap {
    /// The forward map.
    pub map: Lambda,
    /// `inverse_index_map=lambda ..`, when given.
    pub inverse: Option<Lambda>,
    /// The shape of the buffer declared before the map.
    pub logical: Option<Vec<i64>>,
    /// The shape of the buffer declared after the map (the transformed buffer).
    pub physical: Option<Vec<i64>>,
}

/// Whether `text` holds a TVM index map: a Python `lambda` outside comments.
pub fn is_index_map(text: &str) -> bool {
    find_word(&without_python_comments(text), "lambda", 0).is_some()
}

/// Reads the text and gives its Axe layout on the logical `shape` (or the declared one), see
/// [`IndexMap::to_axe`].
pub fn parse_layout(text: &str, shape: Option<&[i64]>) -> Result<AxeLayout> {
    parse(text)?.to_axe(shape)
}

/// Byte position of `word` at or after `from`, standing alone (not inside an identifier).
fn find_word(text: &str, word: &str, from: usize) -> Option<usize> {
    let is_ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let bytes = text.as_bytes();
    let mut at = from;
    while let Some(i) = text.get(at..)?.find(word) {
        let s = at + i;
        let e = s + word.len();
        let before = s == 0 || !is_ident(bytes[s - 1]);
        let after = e >= bytes.len() || !is_ident(bytes[e]);
        if before && after {
            return Some(s);
        }
        at = e;
    }
    None
}

/// The name a `lambda` at `at` is bound to by `name=` (a keyword argument or an assignment).
fn bound_name(text: &str, at: usize) -> Option<&str> {
    let head = text[..at].trim_end().strip_suffix('=')?.trim_end();
    let start = head
        .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .map_or(0, |i| i + 1);
    Some(&head[start..])
}

/// Reads an index map as written: the lambdas and the declared buffer shapes.
pub fn parse(text: &str) -> Result<IndexMap> {
    let clean = without_python_comments(text);
    // Lambdas of other meanings, which would read as a buffer's map and mean something else.
    for (word, why) in [
        (
            "BlockSpec",
            "a Pallas BlockSpec's index_map sends grid indices to block indices; it is no \
             buffer layout (laycert reads TVM index maps here)",
        ),
        (
            "transform_block_layout",
            "transform_block_layout remaps a block's iteration space, not a buffer's layout \
             (transform_layout's map is one)",
        ),
    ] {
        if let Some(i) = find_word(&clean, word, 0) {
            let c = Cursor::new(&clean, NOTATION);
            return Err(c
                .error_at(i, i + word.len(), format!("a TVM index map: {why}"))
                .into());
        }
    }
    let mut forward: Option<(usize, usize, Lambda)> = None;
    let mut inverse: Option<Lambda> = None;
    let mut at = 0;
    while let Some(start) = find_word(&clean, "lambda", at) {
        let mut c = Cursor::new(&clean, NOTATION);
        c.seek(start);
        let lambda = parse_lambda(&mut c)?;
        let end = c.pos();
        match bound_name(&clean, start) {
            Some("inverse_index_map") => {
                if inverse.is_some() {
                    return Err(c.error_at(start, end, "one inverse_index_map").into());
                }
                inverse = Some(lambda);
            }
            // A pad value is a value, not a place: it does not change the layout.
            Some("pad_value") => {}
            _ => {
                if forward.is_some() {
                    return Err(c
                        .error_at(
                            start,
                            end,
                            "one index map (a second lambda is here; paste one map, with its \
                             inverse as inverse_index_map=)",
                        )
                        .into());
                }
                forward = Some((start, end, lambda));
            }
        }
        at = end.max(start + 1);
    }
    let Some((start, end, map)) = forward else {
        return Err(LayoutError::invalid(
            NOTATION,
            "no index map: its only lambdas are an inverse_index_map or a pad_value",
        ));
    };
    for word in ["axis_separators", "axis_separator", "AXIS_SEPARATOR"] {
        let Some(i) = find_word(&clean, word, 0) else {
            continue;
        };
        let value = clean[i + word.len()..].trim_start();
        let value = value.strip_prefix('=').map(str::trim_start);
        let empty = value.is_some_and(|v| ["[]", "()", "None"].iter().any(|e| v.starts_with(e)));
        if !empty {
            let c = Cursor::new(&clean, NOTATION);
            return Err(c
                .error_at(
                    i,
                    i + word.len(),
                    "no axis separators (they split the buffer into several physical axes, \
                     which one offset on `m` cannot hold)",
                )
                .into());
        }
    }
    if let Some(inv) = &inverse {
        if inv.params.len() != map.outputs.len() || inv.outputs.len() != map.params.len() {
            return Err(LayoutError::invalid(
                NOTATION,
                format!(
                    "its inverse_index_map takes {} indices and gives {}, where the map gives \
                     {} and takes {}",
                    inv.params.len(),
                    inv.outputs.len(),
                    map.outputs.len(),
                    map.params.len()
                ),
            ));
        }
    }
    let logical = declared_shape(&clean, 0, start, "before the map")?;
    let physical = declared_shape(&clean, end, clean.len(), "after the map")?;
    Ok(IndexMap {
        map,
        inverse,
        logical,
        physical,
    })
}

/// The shape of the buffers declared in `text[from..to]`, which must all agree.
fn declared_shape(text: &str, from: usize, to: usize, place: &str) -> Result<Option<Vec<i64>>> {
    let region = &text[..to];
    let mut found: Option<Vec<i64>> = None;
    for name in ["Buffer", "match_buffer", "alloc_buffer", "decl_buffer"] {
        let mut at = from;
        while let Some(s) = find_word(region, name, at) {
            at = s + name.len();
            let mut c = Cursor::new(region, NOTATION);
            c.seek(at);
            // `T.Buffer((8, 8), "float32")`, or older TVMScript's `T.Buffer[(8, 8), "float32"]`.
            if !c.eat("(") && !c.eat("[") {
                continue;
            }
            // The shape is the first argument written as a tuple or a list (or `shape=`).
            let shape = loop {
                let arg = c.pos();
                if c.eat("shape") && c.eat("=") {
                    break read_shape(&mut c)?;
                }
                c.seek(arg);
                match c.peek() {
                    Some('(' | '[') => break read_shape(&mut c)?,
                    None | Some(')') => {
                        return Err(c
                            .error(format!(
                                "the buffer's shape, a tuple of extents, in {name}(..)"
                            ))
                            .into())
                    }
                    _ => skip_argument(&mut c)?,
                }
            };
            match &found {
                Some(seen) if *seen != shape => {
                    return Err(LayoutError::invalid(
                        NOTATION,
                        format!(
                            "buffers of shapes {seen:?} and {shape:?} are declared {place}: \
                             paste the one the map applies to"
                        ),
                    ))
                }
                _ => found = Some(shape),
            }
        }
    }
    Ok(found)
}

/// Skips one call argument (up to the next top-level `,`, which it consumes, or `)`).
fn skip_argument(c: &mut Cursor) -> std::result::Result<(), ParseError> {
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    loop {
        let Some(ch) = c.rest().chars().next() else {
            return Err(c.error("')' closing the buffer declaration"));
        };
        match (quote, ch) {
            (Some(q), _) if ch == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(ch),
            (None, '(' | '[' | '{') => depth += 1,
            (None, ')' | ']' | '}') if depth == 0 => return Ok(()),
            (None, ')' | ']' | '}') => depth -= 1,
            (None, ',') if depth == 0 => {
                c.seek(c.pos() + 1);
                return Ok(());
            }
            _ => {}
        }
        c.seek(c.pos() + ch.len_utf8());
    }
}

/// `(128, 64)` or `[128, 64]` (a trailing comma allowed, `T.int64(128)` read as 128).
fn read_shape(c: &mut Cursor) -> Result<Vec<i64>> {
    let close = if c.eat("(") {
        ")"
    } else {
        c.expect("[")?;
        "]"
    };
    let mut dims = Vec::new();
    loop {
        if c.eat(close) {
            break;
        }
        let start = c.pos();
        let v = match constant_call(c)? {
            Some(v) => v,
            None => c.int(false)?,
        };
        if v < 1 {
            return Err(c
                .error_at(start, c.pos(), "a buffer extent of at least 1")
                .into());
        }
        dims.push(v);
        if dims.len() > MAX_VARS {
            return Err(c
                .error_at(start, c.pos(), format!("at most {MAX_VARS} dims"))
                .into());
        }
        if !c.eat(",") {
            c.expect(close)?;
            break;
        }
    }
    if dims.is_empty() {
        return Err(c.error("a buffer shape with at least one extent").into());
    }
    Ok(dims)
}

/// A typed constant `T.int64(16)` (also `T.int32`, `tir.IntImm("int32", 16)`, ..), when the
/// cursor is at one.
fn constant_call(c: &mut Cursor) -> Result<Option<i64>> {
    c.skip_ws();
    let save = c.pos();
    let rest = c.rest();
    let name_len = rest
        .find(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_' || ch == '.'))
        .unwrap_or(rest.len());
    let name = &rest[..name_len];
    let ty = name.rsplit('.').next().unwrap_or(name);
    let typed = matches!(
        ty,
        "int64" | "int32" | "int16" | "int8" | "uint64" | "uint32" | "uint16" | "uint8" | "IntImm"
    );
    if !typed || !rest[name_len..].trim_start().starts_with('(') {
        return Ok(None);
    }
    c.seek(save + name_len);
    c.expect("(")?;
    if ty == "IntImm" {
        skip_argument(c)?;
    }
    let v = c.int(false)?;
    c.expect(")")?;
    Ok(Some(v))
}

fn parse_lambda(c: &mut Cursor) -> Result<Lambda> {
    c.expect("lambda")?;
    let mut params: Vec<String> = Vec::new();
    while c.peek() != Some(':') {
        if c.peek() == Some('*') {
            return Err(c
                .error(
                    "named parameters (a `*args` lambda has no fixed rank; write one name per \
                     dim)",
                )
                .into());
        }
        let start = c.pos();
        let name = c.ident("a parameter name")?.to_string();
        if params.contains(&name) {
            return Err(c
                .error_at(start, c.pos(), "distinct parameter names")
                .into());
        }
        params.push(name);
        if params.len() > MAX_VARS {
            return Err(c
                .error_at(start, c.pos(), format!("at most {MAX_VARS} parameters"))
                .into());
        }
        if !c.eat(",") {
            break;
        }
    }
    c.expect(":")?;
    if params.is_empty() {
        return Err(c.error("a lambda with at least one parameter").into());
    }
    let outputs = ExprParser { c, params: &params }.body()?;
    Ok(Lambda { params, outputs })
}

struct ExprParser<'c, 'a> {
    c: &'c mut Cursor<'a>,
    params: &'c [String],
}

impl ExprParser<'_, '_> {
    /// `(e0, e1, ..)`, `[e0, ..]` or one expression.
    fn body(&mut self) -> Result<Vec<Expr>> {
        let open = self.c.peek();
        if open == Some('(') || open == Some('[') {
            let save = self.c.pos();
            let close = if open == Some('(') { ")" } else { "]" };
            self.c.seek(save + 1);
            let mut outs = Vec::new();
            let mut trailing = false;
            loop {
                if self.c.eat(close) {
                    break;
                }
                if outs.len() == MAX_OUTPUTS {
                    return Err(self
                        .c
                        .error(format!("at most {MAX_OUTPUTS} outputs"))
                        .into());
                }
                outs.push(self.sum(1)?);
                trailing = self.c.eat(",");
                if !trailing {
                    self.c.expect(close)?;
                    break;
                }
            }
            if outs.is_empty() {
                return Err(self.c.error("a lambda with at least one output").into());
            }
            if close == "]" || outs.len() > 1 || trailing {
                return Ok(outs);
            }
            // `(i + 1) * 2`: a parenthesized expression, read again as a whole.
            self.c.seek(save);
        }
        Ok(vec![self.sum(0)?])
    }

    fn sum(&mut self, depth: usize) -> Result<Expr> {
        let mut left = self.term(depth)?;
        loop {
            let op = if self.c.eat("+") {
                Op::Add
            } else if self.c.eat("-") {
                Op::Sub
            } else {
                return Ok(left);
            };
            let right = self.term(depth)?;
            left = Expr::Bin(op, Box::new(left), Box::new(right));
        }
    }

    fn term(&mut self, depth: usize) -> Result<Expr> {
        let mut left = self.unary(depth)?;
        loop {
            let op = if self.c.eat("//") {
                Op::FloorDiv
            } else if self.c.peek() == Some('/') {
                return Err(self
                    .c
                    .error("`//` (a single `/` is Python's true division; index maps use `//`)")
                    .into());
            } else if self.c.eat("**") {
                return Err(self.c.error("no `**` (powers are not read)").into());
            } else if self.c.eat("*") {
                Op::Mul
            } else if self.c.eat("%") {
                Op::FloorMod
            } else {
                return Ok(left);
            };
            let right = self.unary(depth)?;
            left = Expr::Bin(op, Box::new(left), Box::new(right));
        }
    }

    fn unary(&mut self, depth: usize) -> Result<Expr> {
        if depth > MAX_DEPTH {
            return Err(self
                .c
                .error(format!("an expression nested at most {MAX_DEPTH} deep"))
                .into());
        }
        if self.c.eat("-") {
            return Ok(match self.unary(depth + 1)? {
                Expr::Const(v) => Expr::Const(
                    v.checked_neg()
                        .ok_or(LayoutError::Overflow { op: "index map" })?,
                ),
                a => Expr::Neg(Box::new(a)),
            });
        }
        if self.c.eat("+") {
            return self.unary(depth + 1);
        }
        self.atom(depth)
    }

    fn atom(&mut self, depth: usize) -> Result<Expr> {
        match self.c.peek() {
            Some('(') => {
                self.c.eat("(");
                let e = self.sum(depth + 1)?;
                self.c.expect(")")?;
                Ok(e)
            }
            Some(ch) if ch.is_ascii_digit() => Ok(Expr::Const(self.c.int(false)?)),
            Some(_) => {
                if let Some(v) = constant_call(self.c)? {
                    return Ok(Expr::Const(v));
                }
                if !self
                    .c
                    .rest()
                    .starts_with(|ch: char| ch.is_ascii_alphabetic() || ch == '_')
                {
                    return Err(self.c.error("a number, a parameter or a call").into());
                }
                let start = self.c.pos();
                let name = dotted(self.c)?;
                if let Some(v) = self.params.iter().position(|p| p == name) {
                    return Ok(Expr::Var(v));
                }
                let op = match name.rsplit('.').next().unwrap_or(name) {
                    "floordiv" | "FloorDiv" | "indexdiv" => Op::FloorDiv,
                    "floormod" | "FloorMod" | "indexmod" => Op::FloorMod,
                    "truncdiv" | "Div" => Op::TruncDiv,
                    "truncmod" | "Mod" => Op::TruncMod,
                    "min" | "Min" => Op::Min,
                    "max" | "Max" => Op::Max,
                    _ => {
                        return Err(self
                            .c
                            .error_at(
                                start,
                                self.c.pos(),
                                format!(
                                    "a parameter ({}) or one of T.floordiv, T.floormod, \
                                     T.truncdiv, T.Div, T.truncmod, T.min, T.max",
                                    self.params.join(", ")
                                ),
                            )
                            .into())
                    }
                };
                self.c.expect("(")?;
                let a = self.sum(depth + 1)?;
                self.c.expect(",")?;
                let b = self.sum(depth + 1)?;
                self.c.expect(")")?;
                Ok(Expr::Bin(op, Box::new(a), Box::new(b)))
            }
            None => Err(self.c.error("an expression").into()),
        }
    }
}

/// The coordinates of some parameters, in row-major order (the last fastest); the others 0.
struct Odometer<'a> {
    vars: &'a [usize],
    extents: &'a [i64],
    env: Vec<i64>,
    started: bool,
}

impl<'a> Odometer<'a> {
    fn new(vars: &'a [usize], extents: &'a [i64]) -> Self {
        Odometer {
            vars,
            extents,
            env: vec![0; extents.len()],
            started: false,
        }
    }

    /// Moves to the next coordinate; false after the last.
    fn advance(&mut self) -> bool {
        if !self.started {
            self.started = true;
            return true;
        }
        for &v in self.vars.iter().rev() {
            self.env[v] += 1;
            if self.env[v] < self.extents[v] {
                return true;
            }
            self.env[v] = 0;
        }
        false
    }
}

/// What the first pass learns of one output.
struct OutputRange {
    min: i64,
    max: i64,
    /// Its values fill `[min, max]`.
    dense: bool,
    /// The first division that pads, when one does.
    unaligned: Option<String>,
    /// The first node whose extent TVM's analysis takes otherwise than its range, when one
    /// does (a subtraction, a product of indices, a dim of extent 1 scaled).
    irregular: Option<String>,
}

/// The parameters set in a bit set, ascending.
fn members(mask: u32, n: usize) -> Vec<usize> {
    (0..n).filter(|v| mask >> v & 1 == 1).collect()
}

impl IndexMap {
    /// The logical shape: `shape` or the declared one (they must agree).
    fn logical_shape(&self, shape: Option<&[i64]>) -> Result<Vec<i64>> {
        let shape = match (shape, &self.logical) {
            (Some(s), Some(d)) if s != d.as_slice() => {
                return Err(LayoutError::Shape {
                    shape: s.to_vec(),
                    why: format!("the buffer declared before the map has the shape {d:?}"),
                })
            }
            (Some(s), _) => s.to_vec(),
            (None, Some(d)) => d.clone(),
            (None, None) => {
                return Err(LayoutError::invalid(
                    NOTATION,
                    "it gives a layout only for a buffer shape: give one (--shape 128,64), or \
                     paste the buffer's declaration before the map (A = T.Buffer((128, 64), \
                     \"float16\"))",
                ))
            }
        };
        if shape.len() != self.map.params.len() {
            return Err(LayoutError::Shape {
                shape,
                why: format!(
                    "the map takes {} indices ({})",
                    self.map.params.len(),
                    self.map.params.join(", ")
                ),
            });
        }
        if let Some(i) = shape.iter().position(|&e| e < 1) {
            return Err(LayoutError::Shape {
                shape,
                why: format!("extent {i} is below 1"),
            });
        }
        arith::product(shape.iter().copied(), "buffer size")?;
        Ok(shape)
    }

    /// The Axe layout of the map on the logical `shape` (or the declared one): the offset of
    /// each logical index in the row-major flattened transformed buffer, on axis `m`. See the
    /// module doc for the physical shape and the check.
    pub fn to_axe(&self, shape: Option<&[i64]>) -> Result<AxeLayout> {
        let extents = self.logical_shape(shape)?;
        let map = &self.map;
        let n = extents.len();
        let bad = |why: String| LayoutError::invalid(NOTATION, why);

        // Groups of parameters tied by the outputs that read them.
        let out_vars: Vec<u32> = map.outputs.iter().map(Expr::vars).collect();
        let mut group_of: Vec<u32> = (0..n).map(|v| 1u32 << v).collect();
        for &mask in &out_vars {
            let joined = members(mask, n)
                .iter()
                .fold(mask, |acc, &v| acc | group_of[v]);
            for v in members(joined, n) {
                group_of[v] = joined;
            }
        }
        let mut groups: Vec<u32> = group_of.clone();
        groups.sort_unstable();
        groups.dedup();

        // The work: each output's range (two passes over its parameters), each group's check.
        let size_of = |mask: u32| -> i64 {
            members(mask, n)
                .iter()
                .fold(1i64, |acc, &v| acc.saturating_mul(extents[v]))
        };
        let mut work: i64 = 0;
        for (k, &mask) in out_vars.iter().enumerate() {
            work =
                work.saturating_add(size_of(mask).saturating_mul(2 * map.outputs[k].size() as i64));
        }
        for &g in &groups {
            // shard_of evaluates the group's outputs at most twice per index.
            let tied = out_vars.iter().filter(|&&m| m & g != 0).count().max(1) as i64;
            work = work.saturating_add(size_of(g).saturating_mul(2 * tied));
        }
        if self.inverse.is_some() {
            work = work.saturating_add(size_of(u32::MAX >> (32 - n)).saturating_mul(2));
        }
        if work > MAX_WORK {
            return Err(bad(format!(
                "reading and checking it takes about {work} evaluations (the coordinates of its \
                 outputs' and its tied indices' ranges), above the limit of {MAX_WORK}"
            )));
        }

        let ranges = self.output_ranges(&extents, &out_vars)?;
        let physical = self.physical_shape(&ranges)?;
        let mut strides = vec![1i64; physical.len()];
        for k in (0..physical.len().saturating_sub(1)).rev() {
            strides[k] = arith::mul(strides[k + 1], physical[k + 1], "physical strides")?;
        }
        // The part of the offset the outputs reading `mask`'s parameters give (all: None).
        let offset_of = |env: &[i64], mask: Option<u32>| -> Result<i64> {
            let mut f: i64 = 0;
            for (k, e) in map.outputs.iter().enumerate() {
                if mask.is_some_and(|g| out_vars[k] & g == 0) {
                    continue;
                }
                let term = arith::mul(e.eval(env)?, strides[k], "index map offset")?;
                f = arith::add(f, term, "index map offset")?;
            }
            Ok(f)
        };
        let zero = vec![0i64; n];
        let offset = offset_of(&zero, None)?;

        let mut segments: Vec<(usize, Vec<Iter>)> = Vec::new();
        for &g in &groups {
            let vars = members(g, n);
            // The group's offsets over its row-major index are a shard, or provably none
            // (`shard_of` checks every index of the group).
            let mut env = vec![0i64; n];
            let recognized = shard_of(&[Axis::m()], size_of(g), |y| {
                let mut y = y;
                for &v in vars.iter().rev() {
                    env[v] = y % extents[v];
                    y /= extents[v];
                }
                Ok(vec![offset_of(&env, Some(g))?])
            })?;
            let shard: Vec<Iter> = match recognized {
                Recognized::Shard(d) => d,
                Recognized::NotAShard(why) => {
                    let names: Vec<&str> = vars.iter().map(|&v| map.params[v].as_str()).collect();
                    return Err(bad(format!(
                        "its offsets are no strided map of the indices, so no Axe layout: over \
                         ({}) read row-major, with the physical shape {physical:?}, {why}",
                        names.join(", ")
                    )));
                }
            };
            segments.extend(blocks_by_vars(&vars, &extents, shard, &map.params)?);
        }
        segments.sort_by_key(|(key, _)| *key);
        let shard: Vec<Iter> = segments
            .iter()
            .flat_map(|(_, block)| block.iter().cloned())
            .collect();
        let layout = AxeLayout::new(shard, vec![], BTreeMap::from([(Axis::m(), offset)]))?;
        cross_check(&layout, &extents, |env| offset_of(env, None))?;
        self.check_inverse(&extents)?;
        Ok(layout)
    }

    /// Each output's range, whether its values fill it, and its first padding division.
    fn output_ranges(&self, extents: &[i64], out_vars: &[u32]) -> Result<Vec<OutputRange>> {
        let names = &self.map.params;
        let mut result = Vec::with_capacity(self.map.outputs.len());
        for (k, e) in self.map.outputs.iter().enumerate() {
            let vars = members(out_vars[k], extents.len());
            let mut nodes = Vec::new();
            e.nodes(&mut nodes);
            let mut lo = vec![i64::MAX; nodes.len()];
            let mut hi = vec![i64::MIN; nodes.len()];
            let mut values = vec![0i64; nodes.len()];
            let mut odo = Odometer::new(&vars, extents);
            while odo.advance() {
                let mut next = 0;
                e.eval_nodes(&odo.env, &mut values, &mut next)?;
                for (i, &v) in values.iter().enumerate() {
                    lo[i] = lo[i].min(v);
                    hi[i] = hi[i].max(v);
                }
            }
            let (min, max) = (lo[0], hi[0]);
            let span = max.checked_sub(min).and_then(|s| s.checked_add(1));
            let dense = match span {
                Some(span) if span <= MAX_RANGE_LISTED => {
                    let mut seen = vec![false; span as usize];
                    let mut odo = Odometer::new(&vars, extents);
                    while odo.advance() {
                        seen[(e.eval(&odo.env)? - min) as usize] = true;
                    }
                    seen.iter().all(|&s| s)
                }
                _ => false,
            };
            // A division pads unless its dividend lies in [0, R) reaching R - 1, with R a
            // multiple of a constant divisor.
            let mut unaligned = None;
            for (i, node) in nodes.iter().enumerate() {
                let Expr::Bin(op, a, _) = node else {
                    continue;
                };
                if !op.is_division() {
                    continue;
                }
                let (a_at, b_at) = (i + 1, i + 1 + a.size());
                let (dlo, dhi) = (lo[a_at], hi[a_at]);
                let divisor = (lo[b_at] == hi[b_at]).then_some(lo[b_at]);
                let aligned = match divisor {
                    Some(c) if c > 0 && dlo == 0 => dhi.checked_add(1).is_some_and(|r| r % c == 0),
                    _ => false,
                };
                if !aligned {
                    unaligned = Some(format!(
                        "`{}` divides values in [{dlo}, {dhi}] by {}",
                        node.text(names),
                        match divisor {
                            Some(c) => c.to_string(),
                            None => format!("values in [{}, {}]", lo[b_at], hi[b_at]),
                        }
                    ));
                    break;
                }
            }
            // Terms whose extent TVM's analysis takes otherwise than their range.
            let trivial = |e: &Expr| {
                members(e.vars(), extents.len())
                    .iter()
                    .any(|&v| extents[v] == 1)
            };
            let irregular = nodes.iter().find_map(|node| match node {
                Expr::Neg(_) | Expr::Bin(Op::Sub, _, _) | Expr::Const(i64::MIN..=-1) => {
                    Some(format!(
                        "`{}` subtracts (TVM 0.27 refuses `4 - i` over i < 5 and gives `0 - i` \
                     over i < 1 the extent -1)",
                        node.text(names)
                    ))
                }
                Expr::Bin(Op::Mul, a, b) if a.vars() != 0 && b.vars() != 0 => Some(format!(
                    "`{}` multiplies indices (TVM's MapShape refuses `i * i`)",
                    node.text(names)
                )),
                Expr::Bin(Op::Mul, a, b) if trivial(a) || trivial(b) => Some(format!(
                    "`{}` scales a dim of extent 1 (TVM gives `j * 3` over j < 1 the extent 3)",
                    node.text(names)
                )),
                _ => None,
            });
            result.push(OutputRange {
                min,
                max,
                dense,
                unaligned,
                irregular,
            });
        }
        Ok(result)
    }

    /// The physical shape: the declared one (every index inside it), or each output's exact
    /// range where that is what TVM allocates (module doc, rule 3).
    fn physical_shape(&self, ranges: &[OutputRange]) -> Result<Vec<i64>> {
        let text = |k: usize| self.map.outputs[k].text(&self.map.params);
        let bad = |why: String| LayoutError::invalid(NOTATION, why);
        if let Some(p) = &self.physical {
            if p.len() != ranges.len() {
                return Err(bad(format!(
                    "the buffer declared after the map has the shape {p:?} ({} dims), and the \
                     map gives {} indices",
                    p.len(),
                    ranges.len()
                )));
            }
            for (k, r) in ranges.iter().enumerate() {
                if r.min < 0 || r.max >= p[k] {
                    return Err(bad(format!(
                        "output {k} (`{}`) takes values in [{}, {}], outside [0, {}) of the \
                         transformed buffer's shape {p:?}",
                        text(k),
                        r.min,
                        r.max,
                        p[k]
                    )));
                }
            }
            return Ok(p.clone());
        }
        let ask = "paste the transformed buffer's declaration after the map (TVM prints it once \
                   transform_layout has run: A = T.Buffer((..), \"float16\"))";
        let mut shape = Vec::with_capacity(ranges.len());
        for (k, r) in ranges.iter().enumerate() {
            if r.min != 0 {
                return Err(bad(format!(
                    "output {k} (`{}`) takes values in [{}, {}]: TVM's MapShape refuses an \
                     output whose range does not start at 0",
                    text(k),
                    r.min,
                    r.max
                )));
            }
            if let Some(why) = &r.irregular {
                return Err(bad(format!(
                    "output {k} (`{}`): {why}, and TVM's physical extent for it comes from its \
                     own analysis; {ask}",
                    text(k)
                )));
            }
            if let Some(why) = &r.unaligned {
                return Err(bad(format!(
                    "output {k} (`{}`): {why}, so TVM pads the buffer by its own analysis and \
                     its physical shape need not be the range of the indices; {ask}",
                    text(k)
                )));
            }
            if !r.dense {
                return Err(bad(format!(
                    "output {k} (`{}`) takes values in [0, {}] with gaps, and TVM's extent for \
                     it depends on its own analysis; {ask}",
                    text(k),
                    r.max
                )));
            }
            shape.push(r.max + 1);
        }
        Ok(shape)
    }

    /// Checks `inverse_index_map` maps every mapped index back.
    fn check_inverse(&self, extents: &[i64]) -> Result<()> {
        let Some(inv) = &self.inverse else {
            return Ok(());
        };
        let all: Vec<usize> = (0..extents.len()).collect();
        let mut odo = Odometer::new(&all, extents);
        while odo.advance() {
            let out = self.map.eval(&odo.env)?;
            let back = inv.eval(&out)?;
            if back != odo.env {
                return Err(LayoutError::invalid(
                    NOTATION,
                    format!(
                        "its inverse_index_map is no inverse: the map sends {:?} to {out:?}, \
                         which the inverse sends to {back:?}",
                        odo.env
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// Evaluates `layout` by laycert's semantics at the corners and 256 sampled flat indices, and
/// compares with the map's offset `f`.
fn cross_check(
    layout: &AxeLayout,
    extents: &[i64],
    f: impl Fn(&[i64]) -> Result<i64>,
) -> Result<()> {
    let size: i64 = extents.iter().product();
    let mut xs = vec![0, size - 1];
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    for _ in 0..256 {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        xs.push(((state >> 11) % size as u64) as i64);
    }
    for x in xs {
        let want = f(&crate::shape::unflatten_row_major(extents, x)?)?;
        let got: Vec<i64> = layout
            .eval_flat(x)?
            .iter()
            .map(|p| p.get(&Axis::m()).copied().unwrap_or(0))
            .collect();
        if got != [want] {
            return Err(LayoutError::invalid(
                NOTATION,
                format!(
                    "internal error: the layout read ({}) gives {got:?} at flat index {x}, \
                     where the map gives {want}",
                    super::axe::print(layout)
                ),
            ));
        }
    }
    Ok(())
}

/// A group's shard (slowest iter first, over its variables' row-major index) in blocks, one per
/// variable where [`axe::group()`] can split it at the variables' boundary, keyed by the block's
/// outermost variable. A boundary inside an iter that does not split joins the two variables
/// there in one block, which needs them adjacent in the buffer (only extent-1 dims between).
fn blocks_by_vars(
    vars: &[usize],
    extents: &[i64],
    shard: Vec<Iter>,
    names: &[String],
) -> Result<Vec<(usize, Vec<Iter>)>> {
    let l = AxeLayout::from_shard(shard)?;
    let size = l.size();
    // (the block's variables, its extent)
    let mut blocks: Vec<(Vec<usize>, i64)> = vec![(vec![vars[0]], extents[vars[0]])];
    for w in 1..vars.len() {
        let inner: i64 = vars[w..].iter().map(|&v| extents[v]).product();
        if axe::group(&l, &[size / inner, inner]).is_ok() {
            blocks.push((vec![vars[w]], extents[vars[w]]));
            continue;
        }
        let (outer, inner) = (vars[w - 1], vars[w]);
        if let Some(v) = (outer + 1..inner).find(|&v| extents[v] > 1) {
            return Err(LayoutError::invalid(
                NOTATION,
                format!(
                    "its offsets join {} and {} in one stride, and {} lies between them in the \
                     buffer: no Axe layout over the row-major index",
                    names[outer], names[inner], names[v]
                ),
            ));
        }
        if let Some((members, extent)) = blocks.last_mut() {
            members.push(vars[w]);
            *extent *= extents[vars[w]];
        }
    }
    let shape: Vec<i64> = blocks.iter().map(|(_, e)| *e).collect();
    let grouped = axe::group(&l, &shape)?;
    Ok(blocks
        .iter()
        .enumerate()
        .map(|(k, (members, _))| (members[0], grouped.block(k).to_vec()))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str, shape: Option<&[i64]>) -> Result<String> {
        Ok(super::super::axe::print(&parse_layout(text, shape)?))
    }

    #[test]
    fn the_module_docs_worked_example() {
        let text = "A = T.Buffer((128, 64), \"float16\")\n\
                    T.index_map(lambda i, j: (i // 16, j // 16, i % 16, j % 16))";
        assert_eq!(read(text, None).unwrap(), "S[(8,16,4,16):(1024,16,256,1)]");
        // TVM's print with int64 constants, with --shape instead of the declaration.
        let tvm = "T.index_map(lambda i, j: (i // T.int64(16), j // T.int64(16), i % \
                   T.int64(16), j % T.int64(16)))";
        assert_eq!(
            read(tvm, Some(&[128, 64])).unwrap(),
            "S[(8,16,4,16):(1024,16,256,1)]"
        );
        // A different --shape than the declaration is refused.
        assert!(read(text, Some(&[64, 128])).is_err());
    }

    #[test]
    fn a_transpose_and_a_fused_split() {
        assert_eq!(
            read("lambda i, j: (j, i)", Some(&[3, 5])).unwrap(),
            "S[(3,5):(1,3)]"
        );
        // (i * 10 + j) split 6 x 5 is the row-major index itself.
        assert_eq!(
            read(
                "lambda i, j: ((i * 10 + j) // 5, (i * 10 + j) % 5)",
                Some(&[3, 10])
            )
            .unwrap(),
            "S[(3,10):(10,1)]"
        );
    }

    #[test]
    fn a_stride_across_two_dims_joins_them_only_when_adjacent() {
        // Over (2, 3) the fused index x = 3i + j goes to (x % 2, x // 2) of a (2, 3) buffer:
        // offset 3(x % 2) + x // 2, whose iter of extent 3 starts at index 2 and crosses the
        // boundary at 3 between i and j, so i and j stay one block.
        let fused = "lambda i, j: ((i * 3 + j) % 2, (i * 3 + j) // 2)";
        assert_eq!(read(fused, Some(&[2, 3])).unwrap(), "S[(3,2):(1,3)]");
        // The same with a dim k of extent 5 between them: no Axe layout.
        let apart = "lambda i, k, j: ((i * 3 + j) % 2, k, (i * 3 + j) // 2)";
        let e = read(apart, Some(&[2, 5, 3])).unwrap_err();
        assert!(e.to_string().contains("k lies between them"), "{e}");
        // An extent-1 dim between them does not separate them.
        assert_eq!(read(apart, Some(&[2, 1, 3])).unwrap(), "S[(3,2):(1,3)]");
    }

    #[test]
    fn offsets_and_negative_strides() {
        // Without the transformed buffer it is refused: TVM 0.27's MapShape refuses `9 - i`.
        let e = read("lambda i: (9 - i,)", Some(&[10])).unwrap_err();
        assert!(e.to_string().contains("subtracts"), "{e}");
        let l = parse_layout("lambda i: (9 - i,)\nT.Buffer((10,))", Some(&[10])).unwrap();
        for x in 0..10 {
            let p = l.eval_flat(x).unwrap();
            assert_eq!(p.iter().next().unwrap()[&Axis::m()], 9 - x);
        }
    }

    #[test]
    fn padding_and_gaps_need_the_transformed_buffer() {
        let e = read("lambda i: (i // 16, i % 16)", Some(&[100])).unwrap_err();
        assert!(e.to_string().contains("pads the buffer"), "{e}");
        let e = read("lambda i, j: (i, j * 2)", Some(&[4, 10])).unwrap_err();
        assert!(e.to_string().contains("with gaps"), "{e}");
        // With TVM's transformed buffer pasted after the map, they read.
        // TVM's own test (tir-schedule, blockize + cache_read), with the old subscript syntax.
        let old = "sch.transform_layout(B, (\"write\", 0), lambda i, j: (i // 16, j // 16, i % \
                   16, j % 16))\n@T.prim_func\ndef ref(B: T.Buffer[(8, 8, 16, 16), \"float32\"])";
        assert_eq!(
            read(old, Some(&[128, 128])).unwrap(),
            "S[(8,16,8,16):(2048,16,256,1)]"
        );
        let padded = "A = T.Buffer((100,), \"float32\")\nlambda i: (i // 16, i % 16)\n\
                      A_t = T.Buffer((7, 16), \"float32\")";
        assert_eq!(read(padded, None).unwrap(), "S[100:1]");
        let scaled = "T.Buffer((4, 10))\nlambda i, j: (i, j * 2)\nT.Buffer((4, 20))";
        assert_eq!(read(scaled, None).unwrap(), "S[(4,10):(20,2)]");
        // A transformed buffer too small for the indices is refused.
        let small = "T.Buffer((4, 10))\nlambda i, j: (i, j * 2)\nT.Buffer((4, 18))";
        assert!(read(small, None)
            .unwrap_err()
            .to_string()
            .contains("outside"));
    }

    #[test]
    fn maps_that_are_no_layout_are_refused_with_a_coordinate() {
        let e = read("lambda i, j: (T.min(i, j),)", Some(&[3, 3])).unwrap_err();
        assert!(e.to_string().contains("no strided map"), "{e}");
        let e = read(
            "T.Buffer((4, 4))\nlambda i, j: (i * j,)\nT.Buffer((10,))",
            None,
        )
        .unwrap_err();
        assert!(e.to_string().contains("no strided map"), "{e}");
    }

    #[test]
    fn a_wrong_inverse_is_refused() {
        let ok = "tvm.tir.IndexMap.from_func(lambda i, j: (j, i,), inverse_index_map=lambda a, \
                  b: (b, a,))";
        assert_eq!(read(ok, Some(&[2, 3])).unwrap(), "S[(2,3):(1,2)]");
        let bad = "tvm.tir.IndexMap.from_func(lambda i, j: (j, i,), inverse_index_map=lambda \
                   a, b: (a, b,))";
        let e = read(bad, Some(&[2, 3])).unwrap_err();
        assert!(e.to_string().contains("no inverse"), "{e}");
    }

    #[test]
    fn floor_and_trunc_division_are_pythons_and_cs() {
        // (x, y, Python's x // y and x % y, C's x / y and x % y), written out by hand.
        for (x, y, fq, fr, tq, tr) in [
            (7, 2, 3, 1, 3, 1),
            (-7, 2, -4, 1, -3, -1),
            (7, -2, -4, -1, -3, 1),
            (-7, -2, 3, -1, 3, -1),
            (6, 3, 2, 0, 2, 0),
            (-6, 3, -2, 0, -2, 0),
        ] {
            assert_eq!(apply(Op::FloorDiv, x, y).unwrap(), fq, "{x} // {y}");
            assert_eq!(apply(Op::FloorMod, x, y).unwrap(), fr, "{x} % {y}");
            assert_eq!(apply(Op::TruncDiv, x, y).unwrap(), tq, "truncdiv({x}, {y})");
            assert_eq!(apply(Op::TruncMod, x, y).unwrap(), tr, "truncmod({x}, {y})");
        }
        assert!(apply(Op::FloorDiv, i64::MIN, -1).is_err());
        assert_eq!(apply(Op::FloorMod, i64::MIN, -1).unwrap(), 0);
    }

    #[test]
    fn bad_text_names_what_and_where() {
        for (text, says) in [
            ("lambda i, j: (i / 4, j)", "`//`"),
            ("lambda *args: args", "named parameters"),
            ("lambda i: (i // 4, i % 4), lambda j: (j,)", "one index map"),
            ("lambda i: (foo(i),)", "a parameter"),
            ("lambda i, i: (i,)", "distinct"),
            ("lambda i: (i,", "an expression"),
            ("lambda i: (i ** 2,)", "`**`"),
            ("lambda i: (i, T.axis_separator(), i)", "a parameter"),
            ("pl.BlockSpec((16, 128), lambda i, j: (i, j))", "Pallas"),
            (
                "sch.transform_block_layout(b, lambda i, j: (j, i))",
                "iteration space",
            ),
        ] {
            let e = parse(text).unwrap_err().to_string();
            assert!(e.contains(says), "{text}: {e}");
        }
        let deep = format!("lambda i: ({}i{},)", "(".repeat(10_000), ")".repeat(10_000));
        assert!(parse(&deep).unwrap_err().to_string().contains("nested"));
        let e =
            parse("sch.transform_layout(b, (\"write\", 0), lambda i: (i,), axis_separators=[1])")
                .unwrap_err()
                .to_string();
        assert!(e.contains("axis separators"), "{e}");
        let e = read("lambda i: (i // 0,)", Some(&[4]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("by 0"), "{e}");
        let e = read("lambda i: (i,)", None).unwrap_err().to_string();
        assert!(e.contains("--shape"), "{e}");
    }
}
