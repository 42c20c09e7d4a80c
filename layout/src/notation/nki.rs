//! AWS Trainium NKI access patterns: `t.ap(pattern=[[step, num], ...], offset=...)`, read as
//! an Axe layout with the meaning the NKI docs give them.
//!
//! Source: "NKI Access Patterns",
//! <https://awsdocs-neuron.readthedocs-hosted.com/en/latest/nki/deep-dives/nki-aps.html> (also
//! v2.31.0, and its source `_sources/nki/deep-dives/nki-aps.rst`). The rules read here:
//!
//! 1. Signature: `ap(self, pattern, offset=None, scalar_offset=None, vector_offset=None,
//!    indirect_dim=0, dtype=None)`. "`pattern`: A list of two-element tuples, each tuple
//!    describes the access on one dimension. The first element represents the element stepping
//!    and the second element represents the number of elements in each dimension. This tuple is
//!    referred to as `[step, num]`." "The shape of a pattern is the collection of num", in the
//!    order written.
//! 2. "Given a tensor, the Access Pattern conceptually flattens the tensor to 1D, and then uses a
//!    loop to fetch elements from the tensor to construct a view": for `pattern=[[N, p_size],
//!    [z_step, z_num], [y_step, y_num], [x_step, x_num]]`, `access[w, z, y, x] =
//!    t_flatten[offset + (w * N) + (z * z_step) + (y * y_step) + (x * x_step)]`, the first entry
//!    the outermost loop. "The shape of the result view is always the same as the shape of the
//!    pattern."
//! 3. Units: "The offset is an integer indicating the start offset in terms of elements with
//!    respect to the beginning of the tensor. Each two-element list `[step, num]` represents the
//!    stride in terms of elements"; with `dtype` ("The data type of the access pattern. The
//!    default value is the `dtype` of the tensor being accessed") "both the pattern and the
//!    offset are in terms of number of elements, not bytes" of that dtype (its example: an int32
//!    `(128, 256)` tensor read as bfloat16 by `[[512, 128], [1, 512]]`).
//! 4. "For SBUF/PSUM tensors, the first tuple must always be the access for the partition
//!    dimension. On NeuronCore v2/v3/v4, the access on the partition dimension must be
//!    contiguous, meaning that the step of the leading dimension must be the element count of
//!    the entire free dimension of the tensor" (`t.ap(pattern=[[64, 8], [1, 32]])` on a
//!    `(16, 32)` tensor "is illegal"). SBUF and PSUM have 128 partitions, and a partition is
//!    read through "up to four-dimensional arrays" (so at most 4 free entries).
//!
//! Why Axe: rule 2 is a strided map from the pattern's shape, flattened row-major (first entry
//! outermost), plus an offset; that is an Axe shard `S[(num..):(step..)] + offset` read in
//! Axe's own row-major order (a CuTe layout would reverse the modes and has no offset). The
//! axes follow [`crate::trainium`] and spec/axe.md's Trainium section:
//!
//! - A pattern alone, or on a tensor laycert is not shown: on axis `m`, the index into the
//!   flattened tensor (rule 2). Worked example (a test checks it): `t.ap(pattern=[[16, 16],
//!   [1, 8]], offset=8)` is `S[(16,8):(16,1)] + 8`; element `(2, 3)` is `t_flatten[43]`.
//! - On an SBUF/PSUM tensor declared in the pasted text (`t = nl.ndarray((16, 16),
//!   dtype=nl.float32, buffer=nl.sbuf)`): the first entry on the partition axis `P` with stride
//!   1 (its step must be the tensor's free size `F`, rule 4), the others on the free axis `F`,
//!   the offset split into `offset div F` partitions and `offset mod F` free elements: the same
//!   example is `S[(16,8):(1@P,1@F)] + 8@F`; element `(2, 3)` is partition 2, free element 11
//!   (`43 = 2*16 + 11`).
//! - On an HBM tensor (`nl.hbm`, `nl.shared_hbm`, `nl.private_hbm`) or one whose buffer is not
//!   given: on `m`, as for a pattern alone.
//!
//! Refused, because the docs leave the case undefined or it is no static layout: an index of
//! the flattened tensor below 0 (Python would wrap it) or past the declared tensor's end; on an
//! SBUF/PSUM tensor a partition step other than `F` (also when its num is 1: the docs say
//! "must"), more than 128 partitions, or a free index leaving `[0, F)` (the flattening reads
//! the next partition's row, while "the access pattern in each partition must be identical");
//! `num < 1`; more than 5
//! entries; `scalar_offset`/`vector_offset` and an offset that is not an integer (runtime
//! values); a chained `.ap(..).ap(..)` (the docs say the outer overrides the inner, and also
//! that an omitted offset inherits the view's); the docs' own `src.ap([32, 16], [1, 32])`
//! (the signature reads it as `pattern=[32, 16], offset=[1, 32]`); a dtype change whose
//! element widths the docs' dtype table does not give (tfloat32, packed types). An omitted
//! offset is 0: the documented default of NKI 0.2.0 (`offset: Optional[int] = 0`), and the
//! storage offset of a tensor made by `nl.ndarray`, which the current default inherits.

use std::collections::{BTreeMap, HashMap};

use super::cursor::{dotted, without_python_comments, Cursor};
use crate::arith;
use crate::axe::{AxeLayout, Iter};
use crate::axis::Axis;
use crate::error::{LayoutError, ParseError, Result};
use crate::trainium::{free_axis, partition_axis};

const NOTATION: &str = "NKI access pattern";

/// Most entries of a pattern: the partition entry and up to 4 free dims (rule 4).
pub const MAX_ENTRIES: usize = 5;

/// Partitions of SBUF and PSUM on NeuronCore v2/v3/v4.
const PARTITIONS: i64 = 128;

/// Where a declared tensor lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Buffer {
    /// `nl.sbuf`.
    Sbuf,
    /// `nl.psum`.
    Psum,
    /// `nl.hbm`, `nl.shared_hbm`, `nl.private_hbm`.
    Hbm,
}

/// A tensor declared by `nl.ndarray(shape, dtype, buffer=...)` in the pasted text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tensor {
    /// Its shape (the partition dim first for SBUF/PSUM).
    pub shape: Vec<i64>,
    /// Its dtype name (`float32`), when given.
    pub dtype: Option<String>,
    /// Its buffer, when given.
    pub buffer: Option<Buffer>,
}

/// One `.ap(...)` (or a bare pattern), as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccessPattern {
    /// `[step, num]` entries, outermost first.
    pub pattern: Vec<(i64, i64)>,
    /// Start offset, in elements of the access dtype.
    pub offset: i64,
    /// The `dtype=` argument's name, when given.
    pub dtype: Option<String>,
    /// The tensor it is called on, when the text declares it.
    pub tensor: Option<Tensor>,
}

/// Whether `text` is written as an NKI access pattern: a bare `[[step, num], ...]`, a call
/// `t.ap(...)`, or `nl.ndarray(...)` declarations before one.
pub fn is_access_pattern(text: &str) -> bool {
    let t = without_python_comments(text);
    let t = t.trim_start();
    let bare = t.strip_prefix('[').is_some_and(|r| {
        let r = r.trim_start();
        r.starts_with('[') || r.starts_with('(')
    });
    bare || t.contains(".ap(")
        || t.contains("nl.ndarray(")
        || t.contains("nki.language.ndarray(")
        || t.contains("isa.iota(")
}

/// Reads the text and gives its Axe layout ([`AccessPattern::to_axe`]).
pub fn parse_layout(text: &str) -> Result<AxeLayout> {
    parse(text)?.to_axe()
}

/// Reads an access pattern as written (no semantic checks beyond the syntax and `num >= 1`).
pub fn parse(text: &str) -> Result<AccessPattern> {
    let clean = without_python_comments(text);
    let mut c = Cursor::new(&clean, NOTATION);
    if c.peek() == Some('[') {
        let pattern = pattern(&mut c)?;
        c.expect_end("end of the pattern")?;
        return Ok(AccessPattern {
            pattern,
            offset: 0,
            dtype: None,
            tensor: None,
        });
    }
    let mut tensors: HashMap<String, Tensor> = HashMap::new();
    let mut found: Option<AccessPattern> = None;
    while c.peek().is_some() {
        if c.eat(";") {
            continue;
        }
        let start = c.pos();
        if found.is_some() {
            return Err(c
                .error("end of input (the access pattern is the last statement)")
                .into());
        }
        if c.rest().starts_with("import ") || c.rest().starts_with("from ") {
            let line = c.rest().find('\n').unwrap_or(c.rest().len());
            c.seek(c.pos() + line);
            continue;
        }
        let mut name = dotted(&mut c)?;
        let mut target = None;
        if c.rest().trim_start().starts_with('=') && !c.rest().trim_start().starts_with("==") {
            c.expect("=")?;
            target = Some(name.to_string());
            name = dotted(&mut c)?;
        }
        if name.ends_with("isa.iota") || name == "iota" {
            return Err(LayoutError::invalid(
                "nki.isa.iota",
                "its pattern generates values, not an access of a tensor: it has no partition \
                 entry (the partitions are dst.shape[0], scaled by channel_multiplier) and is \
                 padded to 4 free dims; laycert reads .ap(...) access patterns",
            ));
        }
        let tensor = if is_ndarray(name) {
            c.expect("(")?;
            let t = ndarray_args(&mut c)?;
            if !c.eat(".ap") {
                let Some(target) = target else {
                    return Err(c.error("'.ap(' after the tensor").into());
                };
                tensors.insert(target, t);
                continue;
            }
            Some(t)
        } else if let Some(recv) = name.strip_suffix(".ap") {
            tensors.get(recv).cloned()
        } else {
            return Err(c
                .error_at(
                    start,
                    c.pos(),
                    "`name = nl.ndarray(...)` or `name.ap(pattern=..., offset=...)`",
                )
                .into());
        };
        c.expect("(")?;
        let mut ap = ap_args(&mut c)?;
        ap.tensor = tensor;
        if c.rest().trim_start().starts_with(".ap") {
            return Err(LayoutError::invalid(
                "chained .ap(..).ap(..)",
                "the NKI docs say the outer .ap overrides the inner one, and also that an \
                 omitted offset inherits the view's offset: write the outer .ap on the tensor",
            ));
        }
        found = Some(ap);
    }
    found.ok_or_else(|| {
        LayoutError::invalid(
            "NKI access pattern",
            "the text declares tensors but calls no .ap(pattern=..., offset=...) on one",
        )
    })
}

impl AccessPattern {
    /// The Axe layout of the access (see the module doc for the axes). Every index of the
    /// flattened tensor must lie in it: `>= 0`, and below the declared tensor's element count.
    pub fn to_axe(&self) -> Result<AxeLayout> {
        let bad = |why: String| LayoutError::invalid("NKI access pattern", why);
        if self.pattern.is_empty() || self.pattern.len() > MAX_ENTRIES {
            return Err(bad(format!(
                "{} entries: a pattern has 1 to {MAX_ENTRIES} (the partition entry and up to 4 \
                 free dims, the hardware's \"up to four-dimensional arrays\")",
                self.pattern.len()
            )));
        }
        arith::product(self.pattern.iter().map(|&(_, n)| n), "access size")?;
        let (low, high) = reach(self.offset, &self.pattern)?;
        if low < 0 {
            return Err(bad(format!(
                "it reads index {low} of the flattened tensor: the docs define t_flatten[offset \
                 + sum(i*step)] only inside the tensor"
            )));
        }
        let Some(t) = &self.tensor else {
            return on_m(self.offset, &self.pattern);
        };
        let (elements, partitions) = self.elements(t)?;
        if high >= elements {
            return Err(bad(format!(
                "it reads index {high} of the flattened tensor, which has {elements} elements \
                 of the access dtype"
            )));
        }
        match t.buffer {
            Some(Buffer::Sbuf | Buffer::Psum) => self.on_partitions(elements, partitions),
            _ => on_m(self.offset, &self.pattern),
        }
    }

    /// The tensor's element count in the access dtype, and its partition count (shape[0]).
    fn elements(&self, t: &Tensor) -> Result<(i64, i64)> {
        let own = arith::product(t.shape.iter().copied(), "tensor size")?;
        let partitions = t.shape.first().copied().unwrap_or(1);
        let (from, to) = match (&t.dtype, &self.dtype) {
            (_, None) => return Ok((own, partitions)),
            (Some(a), Some(b)) if a == b => return Ok((own, partitions)),
            (None, Some(b)) => {
                return Err(LayoutError::invalid(
                    "NKI access pattern",
                    format!("dtype={b} on a tensor whose dtype is not given"),
                ))
            }
            (Some(a), Some(b)) => (a, b),
        };
        let bytes = |d: &str| {
            dtype_bytes(d).ok_or_else(|| {
                LayoutError::invalid(
                    "NKI access pattern",
                    format!(
                        "a reinterpret cast between {from} and {to}: the NKI dtype table gives \
                         no storage width for {d}"
                    ),
                )
            })
        };
        let (a, b) = (bytes(from)?, bytes(to)?);
        let row = arith::product(t.shape.iter().skip(1).copied(), "tensor size")?;
        let row_bytes = arith::mul(row, a, "tensor bytes")?;
        if row_bytes % b != 0 {
            return Err(LayoutError::invalid(
                "NKI access pattern",
                format!(
                    "a partition row of {row} {from} elements is {row_bytes} bytes, not a whole \
                     number of {to} elements"
                ),
            ));
        }
        Ok((
            arith::mul(row_bytes / b, partitions, "tensor size")?,
            partitions,
        ))
    }

    /// The SBUF/PSUM form: the first entry on `P`, the others on `F` (rule 4).
    fn on_partitions(&self, elements: i64, partitions: i64) -> Result<AxeLayout> {
        let bad = |why: String| LayoutError::invalid("NKI access pattern on SBUF/PSUM", why);
        if partitions > PARTITIONS {
            return Err(bad(format!(
                "the tensor has {partitions} partitions; SBUF and PSUM have {PARTITIONS}"
            )));
        }
        let free = elements / partitions;
        let (step, num) = self.pattern[0];
        if step != free {
            return Err(bad(format!(
                "the partition entry's step is {step}: it must be the element count of the \
                 tensor's whole free dimension, {free} (\"the access on the partition dimension \
                 must be contiguous\")"
            )));
        }
        let (p0, f0) = (self.offset.div_euclid(free), self.offset.rem_euclid(free));
        let (low, high) = reach(f0, &self.pattern[1..])?;
        if low < 0 || high >= free {
            return Err(bad(format!(
                "its free index reaches {} (a partition row has {free} elements): the docs' \
                 flattening would read another partition's row there, and do not say that the \
                 hardware does",
                if low < 0 { low } else { high }
            )));
        }
        let mut shard = vec![Iter::new(num, 1, partition_axis())];
        shard.extend(
            self.pattern[1..]
                .iter()
                .map(|&(s, n)| Iter::new(n, s, free_axis())),
        );
        let offset = BTreeMap::from([(partition_axis(), p0), (free_axis(), f0)]);
        AxeLayout::new(shard, Vec::new(), offset)
    }
}

/// `S[(num..):(step..)] + offset` on `m` (rule 2).
fn on_m(offset: i64, pattern: &[(i64, i64)]) -> Result<AxeLayout> {
    let shard = pattern.iter().map(|&(s, n)| Iter::on_m(n, s)).collect();
    AxeLayout::new(shard, Vec::new(), BTreeMap::from([(Axis::m(), offset)]))
}

/// The least and greatest of `offset + sum(i*step)` over the pattern.
fn reach(offset: i64, pattern: &[(i64, i64)]) -> Result<(i64, i64)> {
    pattern
        .iter()
        .try_fold((offset, offset), |(lo, hi), &(s, n)| {
            let d = arith::mul(n - 1, s, "access index")?;
            Ok((
                arith::add(lo, d.min(0), "access index")?,
                arith::add(hi, d.max(0), "access index")?,
            ))
        })
}

/// Storage bytes of an NKI dtype (the docs' "Supported Data Types" table), by its bare name.
pub fn dtype_bytes(name: &str) -> Option<i64> {
    Some(match name {
        "uint8" | "int8" | "bool_" | "float8_e4m3" | "float8_e5m2" | "float8_e4m3fn"
        | "float8_e8m0fnu" => 1,
        "uint16" | "int16" | "float16" | "bfloat16" => 2,
        "uint32" | "int32" | "float32" => 4,
        _ => return None,
    })
}

/// Every NKI dtype name the docs' table lists.
fn is_dtype(name: &str) -> bool {
    dtype_bytes(name).is_some()
        || matches!(
            name,
            "tfloat32" | "float8_e5m2_x4" | "float8_e4m3fn_x4" | "float4_e2m1fn_x4"
        )
}

fn is_ndarray(name: &str) -> bool {
    matches!(name, "nl.ndarray" | "nki.language.ndarray" | "ndarray")
}
/// The pattern: `[[step, num], ...]`, tuples or lists.
fn pattern(c: &mut Cursor) -> Result<Vec<(i64, i64)>, ParseError> {
    let close = open(c, "the pattern, a list of [step, num] pairs")?;
    let mut entries = Vec::new();
    loop {
        if c.eat(close) {
            break;
        }
        let start = c.pos();
        if !matches!(c.peek(), Some('[' | '(')) {
            return Err(c.error(
                "a [step, num] pair (a pattern is a list of pairs: [[32, 16], [1, 32]]; the \
                 docs' `src.ap([32, 16], [1, 32])` passes the pairs as two arguments, which \
                 the documented signature reads as pattern=[32, 16], offset=[1, 32])",
            ));
        }
        let inner = open(c, "a [step, num] pair")?;
        let step = int_expr(c)?;
        c.expect(",")?;
        let num_at = c.pos();
        let num = int_expr(c)?;
        c.eat(",");
        c.expect(inner)?;
        if num < 1 {
            return Err(c.error_at(
                num_at,
                c.pos(),
                format!("num >= 1 (the number of elements of the dimension; it is {num})"),
            ));
        }
        if entries.len() == MAX_ENTRIES {
            return Err(c.error_at(
                start,
                c.pos(),
                format!(
                    "at most {MAX_ENTRIES} entries (the partition entry and up to 4 free dims)"
                ),
            ));
        }
        entries.push((step, num));
        if !c.eat(",") {
            c.expect(close)?;
            break;
        }
    }
    if entries.is_empty() {
        return Err(c.error("at least one [step, num] pair"));
    }
    Ok(entries)
}

/// `[` or `(`; gives the closing bracket.
fn open(c: &mut Cursor, what: &str) -> Result<&'static str, ParseError> {
    if c.eat("[") {
        Ok("]")
    } else if c.eat("(") {
        Ok(")")
    } else {
        Err(c.error(what.to_string()))
    }
}

/// Deepest nesting of parentheses and signs an integer expression may have (a bound on the
/// parser's recursion, so hostile text is an error, not a stack overflow).
const MAX_DEPTH: u32 = 32;

/// An integer expression: literals with `+`, `-`, `*` and parentheses, checked for overflow.
fn int_expr(c: &mut Cursor) -> Result<i64, ParseError> {
    expr_at(c, 0)
}

fn expr_at(c: &mut Cursor, depth: u32) -> Result<i64, ParseError> {
    let start = c.pos();
    let mut value = term_at(c, depth)?;
    loop {
        let next = if c.eat("+") {
            term_at(c, depth)?.checked_add(value)
        } else if c.eat("-") {
            value.checked_sub(term_at(c, depth)?)
        } else {
            return Ok(value);
        };
        value =
            next.ok_or_else(|| c.error_at(start, c.pos(), "an integer that fits in 64 bits"))?;
    }
}

fn term_at(c: &mut Cursor, depth: u32) -> Result<i64, ParseError> {
    let start = c.pos();
    let mut value = factor_at(c, depth)?;
    while c.eat("*") {
        let rhs = factor_at(c, depth)?;
        value = value
            .checked_mul(rhs)
            .ok_or_else(|| c.error_at(start, c.pos(), "an integer that fits in 64 bits"))?;
    }
    Ok(value)
}

fn factor_at(c: &mut Cursor, depth: u32) -> Result<i64, ParseError> {
    if depth >= MAX_DEPTH && matches!(c.peek(), Some('(' | '-')) {
        return Err(c.error(format!(
            "an integer (expressions nest at most {MAX_DEPTH} deep)"
        )));
    }
    if c.eat("(") {
        let v = expr_at(c, depth + 1)?;
        c.expect(")")?;
        return Ok(v);
    }
    if c.eat("-") {
        let start = c.pos();
        let v = factor_at(c, depth + 1)?;
        return v
            .checked_neg()
            .ok_or_else(|| c.error_at(start, c.pos(), "an integer that fits in 64 bits"));
    }
    match c.peek() {
        Some(ch) if ch.is_ascii_digit() => c.int(false),
        Some(ch) if ch.is_ascii_alphabetic() || ch == '_' => {
            Err(c.error("an integer (laycert does not know the values of names: write the number)"))
        }
        _ => Err(c.error("an integer")),
    }
}

/// A keyword `name=` (not `==`), consumed when it is next.
fn keyword<'a>(c: &mut Cursor<'a>) -> Option<&'a str> {
    let save = c.pos();
    let Ok(name) = c.ident("") else {
        c.seek(save);
        return None;
    };
    let rest = c.rest().trim_start();
    if rest.starts_with('=') && !rest.starts_with("==") {
        c.expect("=").ok()?;
        Some(name)
    } else {
        c.seek(save);
        None
    }
}

/// Arguments after `(`, up to and including `)`: positional by `names`, then keywords; each
/// value is read by `read`.
fn call_args<'a>(
    c: &mut Cursor<'a>,
    what: &str,
    names: &[&'static str],
    mut read: impl FnMut(&mut Cursor<'a>, &'static str) -> Result<(), LayoutError>,
) -> Result<()> {
    let mut seen: Vec<&'static str> = Vec::new();
    let mut positional = 0;
    loop {
        if c.eat(")") {
            return Ok(());
        }
        let at = c.pos();
        let name = match keyword(c) {
            Some(k) => {
                let Some(&name) = names.iter().find(|n| **n == k) else {
                    return Err(c
                        .error_at(
                            at,
                            c.pos(),
                            format!("an argument of {what} ({})", names.join(", ")),
                        )
                        .into());
                };
                positional = names.len();
                name
            }
            None => {
                let Some(&name) = names.get(positional) else {
                    return Err(c
                        .error(format!("')' ({what} takes {} arguments)", names.len()))
                        .into());
                };
                positional += 1;
                name
            }
        };
        if seen.contains(&name) {
            return Err(c.error_at(at, c.pos(), format!("{name} only once")).into());
        }
        seen.push(name);
        read(c, name)?;
        if !c.eat(",") {
            c.expect(")")?;
            return Ok(());
        }
    }
}

/// `nl.ndarray(shape, dtype, buffer=..., name=...)` after its `(`.
fn ndarray_args(c: &mut Cursor) -> Result<Tensor> {
    let mut t = Tensor {
        shape: Vec::new(),
        dtype: None,
        buffer: None,
    };
    let mut has_shape = false;
    call_args(
        c,
        "nl.ndarray",
        &["shape", "dtype", "buffer", "name"],
        |c, name| {
            match name {
                "shape" => {
                    let close = open(c, "the shape, a tuple of integers")?;
                    loop {
                        if c.eat(close) {
                            break;
                        }
                        let at = c.pos();
                        let d = int_expr(c)?;
                        if d < 1 {
                            return Err(c.error_at(at, c.pos(), "a dimension >= 1").into());
                        }
                        t.shape.push(d);
                        if !c.eat(",") {
                            c.expect(close)?;
                            break;
                        }
                    }
                    has_shape = true;
                }
                "dtype" => t.dtype = Some(dtype(c)?),
                "buffer" => t.buffer = Some(buffer(c)?),
                _ => string(c)?,
            }
            Ok(())
        },
    )?;
    if !has_shape || t.shape.is_empty() {
        return Err(LayoutError::invalid(
            "nl.ndarray",
            "it needs a shape of at least one dimension",
        ));
    }
    Ok(t)
}

/// `.ap(...)` after its `(`.
fn ap_args(c: &mut Cursor) -> Result<AccessPattern> {
    let mut ap = AccessPattern {
        pattern: Vec::new(),
        offset: 0,
        dtype: None,
        tensor: None,
    };
    let names = [
        "pattern",
        "offset",
        "scalar_offset",
        "vector_offset",
        "indirect_dim",
        "dtype",
    ];
    call_args(c, ".ap", &names, |c, name| {
        match name {
            "pattern" => ap.pattern = pattern(c)?,
            "offset" => {
                if !c.eat("None") {
                    ap.offset = int_expr(c)?;
                }
            }
            "scalar_offset" | "vector_offset" => {
                if !c.eat("None") {
                    return Err(c
                        .error(format!(
                            "{name}=None ({name} is a runtime value: the access is no static \
                             layout)"
                        ))
                        .into());
                }
            }
            "indirect_dim" => {
                int_expr(c)?;
            }
            _ => {
                if !c.eat("None") {
                    ap.dtype = Some(dtype(c)?);
                }
            }
        }
        Ok(())
    })?;
    if ap.pattern.is_empty() {
        return Err(c.error("a pattern=[[step, num], ...] argument").into());
    }
    Ok(ap)
}

/// A name without its `nl.` or `nki.language.` module prefix.
fn without_module(name: &str) -> &str {
    name.strip_prefix("nl.")
        .or_else(|| name.strip_prefix("nki.language."))
        .unwrap_or(name)
}

/// `nl.float32`, `nki.language.float32`, or a bare dtype name; gives the bare name.
fn dtype(c: &mut Cursor) -> Result<String, ParseError> {
    let at = c.pos();
    let bare = without_module(dotted(c)?);
    if is_dtype(bare) {
        Ok(bare.to_string())
    } else {
        Err(c.error_at(
            at,
            c.pos(),
            "an NKI dtype (nl.float32, nl.bfloat16, nl.int8, ...)",
        ))
    }
}

/// `nl.sbuf`, `nl.psum`, `nl.hbm`, `nl.shared_hbm`, `nl.private_hbm` (or the bare name).
fn buffer(c: &mut Cursor) -> Result<Buffer, ParseError> {
    let at = c.pos();
    let bare = without_module(dotted(c)?);
    match bare {
        "sbuf" => Ok(Buffer::Sbuf),
        "psum" => Ok(Buffer::Psum),
        "hbm" | "shared_hbm" | "private_hbm" => Ok(Buffer::Hbm),
        _ => Err(c.error_at(
            at,
            c.pos(),
            "a buffer (nl.sbuf, nl.psum, nl.hbm, nl.shared_hbm, nl.private_hbm)",
        )),
    }
}

/// A quoted Python string (a tensor's `name=`), skipped.
fn string(c: &mut Cursor) -> Result<(), ParseError> {
    let quote = match c.peek() {
        Some(q @ ('\'' | '"')) => q,
        _ => return Err(c.error("a quoted name")),
    };
    let start = c.pos();
    let rest = &c.rest()[1..];
    match rest.find(quote) {
        Some(end) if !rest[..end].contains('\n') => {
            c.seek(start + end + 2);
            Ok(())
        }
        _ => Err(c.error_at(start, start + 1, "a closed string")),
    }
}
