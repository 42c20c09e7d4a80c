//! Triton TTGIR layout attributes, imported to F2 linear layouts for a tensor shape.
//!
//! Text such as `#ttg.blocked<{sizePerThread = [2, 2], threadsPerWarp = [4, 8],
//! warpsPerCTA = [2, 1], order = [1, 0]}>` is parsed into a [`TritonAttr`] (printing gives the
//! same text back, in MLIR's spelling), and [`TritonAttr::to_linear`] builds the linear layout
//! `(register, lane, warp, block) -> (dim0, dim1, ...)` for a tensor shape.
//!
//! Kinds: `blocked`, `nvidia_mma`, `dot_op` and `slice` (distributed, in-dims `register, lane,
//! warp, block`; see the `distributed` module; a slice's parent may be a `#ttg.linear`), `swizzled_shared` and `nvmma_shared` (shared,
//! in-dims `offset, block`; see `shared`; the pre-3.2 `#triton_gpu.shared` is read as one of
//! them, see `legacy`), each optionally spread over a cluster of CTAs
//! (`CGALayout`, or the older `CTAsPerCGA`/`CTASplitNum`/`CTAOrder`; see `cga`).
//! Every kind is checked against Triton 3.9's own conversion on generated cases
//! (`layout/tests/triton_oracle*.rs`; `triton_oracle_fit.rs` at shapes smaller than, equal to
//! and larger than each tile, rank 1 to 4).
//!
//! Blocked and mma layouts first build one CTA tile as a product of identity factors, each walking one tensor
//! dim from its next free bit, then fit the tile to the shape.
//!
//! - Blocked: per `order` (fastest dim first), registers take `sizePerThread`, then lanes
//!   `threadsPerWarp`, then warps `warpsPerCTA`.
//! - `nvidia_mma` (v2 `instrShape = [16, 8]` or fp64 `[8, 8]`, with a leading 1 for a batch
//!   dim; v3 (Hopper
//!   wgmma) `[16, N, K]`): one warp's `M x N` accumulator tile is register bit 0 on n, lanes
//!   2 x 4 on n then 8 on m, registers up to `M` on m, then registers up to `N` on n. Warps are
//!   laid over the tiles fastest-last-dim first for v2, and m first for v3 (the four warps of
//!   a warpgroup stack 16-row slabs).
//!
//! Fitting: where the tile is larger than the shape, lane and warp bases beyond it become 0
//! (broadcast), and so do register bases of `nvidia_mma`, while blocked drops them; where it
//! is smaller, it repeats in registers, fastest dim first (blocked: per `order`; mma: the last
//! dim first).
//!
//! Worked example (the Linear Layouts paper, figure 1): the attribute above on 16x16 gives
//! `register [[0,1],[1,0]]`, `lane [[0,2],[0,4],[0,8],[2,0],[4,0]]`, `warp [[8,0]]`; and
//! `#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [1, 1], instrShape =
//! [16, 8]}>` on 16x16 gives `register [[0,1],[8,0],[0,8]]`, `lane [[0,2],[0,4],[1,0],[2,0],
//! [4,0]]`, `warp []`.

use std::fmt;

use crate::arith::log2;
use crate::error::{LayoutError, ParseError, Result};
use crate::linear::{InDim, LinearLayout, OutDim, MAX_OUT_BITS};
use crate::notation::cursor::Cursor;

pub mod aliases;
mod amd;
mod cga;
mod distributed;
pub mod gluon;
mod legacy;
pub mod memdesc;
mod padded;
mod shared;
pub mod tmem;

pub(crate) use cga::Cga;

const NOTATION: &str = "Triton attribute";

/// One value of an attribute's dictionary.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum AttrValue {
    /// `4`
    Int(i64),
    /// An integer with its MLIR type, as some printers write it: `8 : i32`.
    TypedInt(i64, String),
    /// `true` / `false`
    Bool(bool),
    /// `[2, 2]`
    List(Vec<i64>),
    /// A non-empty list of lists: `CGALayout = [[0, 1], [1, 0]]`.
    Lists(Vec<Vec<i64>>),
    /// A nested attribute (`parent = #ttg.nvidia_mma<{...}>`).
    Attr(Box<RawAttr>),
    /// A nested dictionary (`ctaLayout = {warp = [[1, 0]]}`).
    Dict(Vec<(String, AttrValue)>),
}

/// An attribute as written: its kind (`blocked`, `nvidia_mma`, ...) and its fields in order.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RawAttr {
    /// The dialect prefix as written (`ttg` or `triton_gpu`).
    pub dialect: String,
    /// `blocked`, `nvidia_mma`, ...
    pub kind: String,
    /// `key = value` pairs in written order.
    pub fields: Vec<(String, AttrValue)>,
    /// Byte span of the attribute in the input (for errors).
    pub span: (usize, usize),
    /// `padded_shared`'s `[interval:+padding, ...]` pairs (empty for other kinds).
    pub intervals: Vec<(i64, i64)>,
    /// Parameters after the dictionary, `key = integer` (`shared_linear`'s `alignment = 16`).
    pub params: Vec<(String, i64)>,
}

impl fmt::Display for RawAttr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}.{}<", self.dialect, self.kind)?;
        if self.kind == "padded_shared" {
            let pairs: Vec<String> = self
                .intervals
                .iter()
                .map(|(i, p)| format!("{i}:+{p}"))
                .collect();
            write!(f, "[{}] ", pairs.join(", "))?;
        }
        write_fields(f, &self.fields)?;
        for (k, v) in &self.params {
            write!(f, ", {k} = {v}")?;
        }
        f.write_str(">")
    }
}

/// `{key = value, ...}` in MLIR's spelling.
fn write_fields(f: &mut fmt::Formatter<'_>, fields: &[(String, AttrValue)]) -> fmt::Result {
    f.write_str("{")?;
    for (i, (k, v)) in fields.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write!(f, "{k} = ")?;
        match v {
            AttrValue::Int(x) => write!(f, "{x}")?,
            AttrValue::TypedInt(x, ty) => write!(f, "{x} : {ty}")?,
            AttrValue::Bool(b) => write!(f, "{b}")?,
            AttrValue::List(xs) => write!(f, "[{}]", join(xs))?,
            AttrValue::Lists(xss) => {
                let s: Vec<String> = xss.iter().map(|xs| format!("[{}]", join(xs))).collect();
                write!(f, "[{}]", s.join(", "))?
            }
            AttrValue::Attr(a) => write!(f, "{a}")?,
            AttrValue::Dict(d) => write_fields(f, d)?,
        }
    }
    f.write_str("}")
}

fn join(xs: &[i64]) -> String {
    xs.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")
}

/// A parsed Triton layout attribute.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TritonAttr {
    raw: RawAttr,
}

/// The dims of a TTGIR type: `128x64x` (then the element type) when `typed`, else `3x128x64`
/// (a memdesc's allocation shape, to the end of its part); `missing` says what was expected
/// when there is none.
fn type_dims(c: &mut Cursor, typed: bool, missing: &str) -> Result<Vec<i64>, ParseError> {
    let mut shape = Vec::new();
    loop {
        let at = c.pos();
        let mut probe = c.clone();
        match probe.int(false) {
            Ok(d) if !typed || probe.rest().starts_with('x') => {
                if d < 1 {
                    return Err(c.error_at(at, probe.pos(), "a dimension of at least 1"));
                }
                shape.push(d);
                *c = probe;
                if !c.eat("x") {
                    break;
                }
            }
            _ => break,
        }
    }
    if shape.is_empty() {
        return Err(c.error(missing));
    }
    Ok(shape)
}

/// A whole TTGIR tensor type, `tensor<128x64xf16, #ttg.blocked<{...}>>`, as TTGIR prints
/// values: its shape, and the text with everything but the encoding blanked out (spaces of the
/// same length, so error spans still point into the text as given). `None` when `text` is no
/// tensor type. The element type is not part of the layout and is skipped.
pub fn tensor_type(text: &str) -> Result<Option<(String, Vec<i64>)>> {
    const WHAT: &str = "TTGIR tensor type";
    let mut c = Cursor::new(text, WHAT);
    if !c.eat("tensor<") {
        return Ok(None);
    }
    let opened = c.pos();
    let shape = type_dims(
        &mut c,
        true,
        "a shape such as 128x64x before the element type (tensor<128x64xf16, #..>)",
    )?;
    // The element type (`f16`, `!tt.ptr<f16>`) runs to the comma outside any `<..>`.
    let mut depth = 0i64;
    let ty_len = c
        .rest()
        .char_indices()
        .find(|&(_, ch)| {
            match ch {
                '<' => depth += 1,
                '>' => depth -= 1,
                _ => {}
            }
            depth < 0 || (depth == 0 && ch == ',')
        })
        .map(|(i, _)| i);
    let Some(ty_len) = ty_len.filter(|&i| c.rest()[i..].starts_with(',')) else {
        return Err(c
            .error(
                "an element type, ',' and the layout encoding (tensor<128x64xf16, \
                 #ttg.blocked<{..}>>); a tensor type without an encoding has no layout",
            )
            .into());
    };
    if text.matches('<').count() != text.matches('>').count() {
        let end = text.trim_end().len();
        return Err(c
            .error_at(
                end,
                end,
                "'>' closing the tensor type (its '<' and '>' do not pair up)",
            )
            .into());
    }
    let enc_start = c.pos() + ty_len + 1;
    let trimmed = text.trim_end();
    let Some(enc_end) = trimmed
        .strip_suffix('>')
        .map(str::len)
        .filter(|&e| e >= enc_start)
    else {
        return Err(c
            .error_at(opened - 7, trimmed.len(), "'>' closing the tensor type")
            .into());
    };
    let enc = text[enc_start..enc_end].trim();
    if enc.starts_with('#') && !enc.contains('.') && !enc.contains('<') {
        let at = enc_start + (text[enc_start..].len() - text[enc_start..].trim_start().len());
        return Err(c
            .error_at(
                at,
                at + enc.len(),
                format!(
                    "a layout attribute such as #ttg.blocked<{{..}}>: {enc} is an alias of a \
                     TTGIR file (pass the file with --mlir FILE)"
                ),
            )
            .into());
    }
    let blank = |t: &str| " ".repeat(t.len());
    let out = format!(
        "{}{}{}{}",
        blank(&text[..enc_start]),
        &text[enc_start..enc_end],
        blank(&text[enc_end..enc_end + 1]),
        &text[enc_end + 1..]
    );
    Ok(Some((out, shape)))
}

/// Parses one attribute; a leading alias definition (`#blocked = `) is skipped.
pub fn parse_attr(text: &str) -> Result<TritonAttr> {
    let mut c = Cursor::new(text, NOTATION);
    let mut probe = c.clone();
    if probe.eat("#") && probe.ident("alias").is_ok() && probe.eat("=") && probe.peek() == Some('#')
    {
        c = probe;
    }
    let raw = raw_attr(&mut c, 0)?;
    c.expect_end("end of attribute")?;
    let attr = TritonAttr { raw };
    attr.validate(&c)?;
    Ok(attr)
}

fn raw_attr(c: &mut Cursor, depth: usize) -> Result<RawAttr, ParseError> {
    c.skip_ws();
    let start = c.pos();
    if depth > 8 {
        return Err(c.error("at most 8 nested attributes"));
    }
    c.expect("#")?;
    let dialect = c.ident("a dialect name (ttg)")?.to_string();
    if dialect != "ttg" && dialect != "triton_gpu" {
        return Err(c.error_at(start + 1, c.pos(), "the 'ttg' (or 'triton_gpu') dialect"));
    }
    c.expect(".")?;
    let kind = c
        .ident("an attribute kind (blocked, nvidia_mma, ...)")?
        .to_string();
    c.expect("<")?;
    let mut intervals = Vec::new();
    if kind == "padded_shared" {
        c.expect("[")?;
        loop {
            let interval = c.int(false)?;
            c.expect(":")?;
            c.expect("+")?;
            intervals.push((interval, c.int(false)?));
            if c.eat("]") {
                break;
            }
            c.expect(",").map_err(|_| c.error("',' or ']'"))?;
            if intervals.len() > 64 {
                return Err(c.error("at most 64 interval:+padding pairs"));
            }
        }
    }
    c.expect("{")?;
    let fields = field_list(c, depth)?;
    let mut params: Vec<(String, i64)> = Vec::new();
    while c.eat(",") {
        let at = c.pos();
        let key = c.ident("a parameter name (alignment)")?.to_string();
        if params.iter().any(|(k, _)| *k == key) {
            return Err(c.error_at(
                at,
                c.pos(),
                format!("a new parameter ({key} appears twice)"),
            ));
        }
        c.expect("=")?;
        params.push((key, c.int(false)?));
    }
    c.expect(">").map_err(|_| c.error("',' or '>'"))?;
    Ok(RawAttr {
        dialect,
        kind,
        fields,
        span: (start, c.pos()),
        intervals,
        params,
    })
}

/// `key = value, ...}` after a `{`: the fields of an attribute or of a nested dictionary.
fn field_list(c: &mut Cursor, depth: usize) -> Result<Vec<(String, AttrValue)>, ParseError> {
    let mut fields: Vec<(String, AttrValue)> = Vec::new();
    if c.eat("}") {
        return Ok(fields);
    }
    loop {
        let kat = c.pos();
        let key = c.ident("a field name")?.to_string();
        if fields.iter().any(|(k, _)| *k == key) {
            return Err(c.error_at(kat, c.pos(), format!("a new field ({key} appears twice)")));
        }
        c.expect("=")?;
        let value = if c.peek() == Some('[') {
            c.expect("[")?;
            if c.peek() == Some('[') {
                let mut xss = vec![int_list(c)?];
                while !c.eat("]") {
                    c.expect(",").map_err(|_| c.error("',' or ']'"))?;
                    xss.push(int_list(c)?);
                }
                AttrValue::Lists(xss)
            } else {
                AttrValue::List(int_list_rest(c)?)
            }
        } else if c.peek() == Some('#') {
            AttrValue::Attr(Box::new(raw_attr(c, depth + 1)?))
        } else if c.peek() == Some('{') {
            if depth > 8 {
                return Err(c.error("at most 8 nested dictionaries"));
            }
            c.expect("{")?;
            AttrValue::Dict(field_list(c, depth + 1)?)
        } else if c.eat("true") {
            AttrValue::Bool(true)
        } else if c.eat("false") {
            AttrValue::Bool(false)
        } else {
            let v = c.int(false).map_err(|_| {
                c.error("an integer, a boolean, a list [..], a dictionary {..} or an attribute")
            })?;
            // MLIR may print a typed integer, e.g. `8 : i32`.
            if c.eat(":") {
                AttrValue::TypedInt(v, c.ident("an integer type")?.to_string())
            } else {
                AttrValue::Int(v)
            }
        };
        fields.push((key, value));
        if c.eat("}") {
            return Ok(fields);
        }
        c.expect(",").map_err(|_| c.error("',' or '}'"))?;
    }
}

/// `[1, 2, 3]`.
fn int_list(c: &mut Cursor) -> Result<Vec<i64>, ParseError> {
    c.expect("[")?;
    int_list_rest(c)
}

/// The rest of an integer list after its `[`.
fn int_list_rest(c: &mut Cursor) -> Result<Vec<i64>, ParseError> {
    let mut xs = Vec::new();
    if c.eat("]") {
        return Ok(xs);
    }
    loop {
        xs.push(c.int(false)?);
        if c.eat("]") {
            return Ok(xs);
        }
        c.expect(",").map_err(|_| c.error("',' or ']'"))?;
    }
}

impl TritonAttr {
    /// The attribute as parsed.
    pub fn raw(&self) -> &RawAttr {
        &self.raw
    }

    fn err(&self, field: &str, why: impl Into<String>) -> LayoutError {
        LayoutError::invalid(format!("#ttg.{} field {field}", self.raw.kind), why)
    }

    fn value(&self, key: &str) -> Option<&AttrValue> {
        self.raw
            .fields
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    }

    fn list(&self, key: &str) -> Result<Vec<i64>> {
        match self.value(key) {
            Some(AttrValue::List(xs)) => Ok(xs.clone()),
            Some(_) => Err(self.err(key, "expected a list such as [1, 0]")),
            None => Err(self.err(key, "missing")),
        }
    }

    fn int(&self, key: &str) -> Result<i64> {
        match self.value(key) {
            Some(AttrValue::Int(x) | AttrValue::TypedInt(x, _)) => Ok(*x),
            Some(_) => Err(self.err(key, "expected an integer")),
            None => Err(self.err(key, "missing")),
        }
    }

    /// A list field with one entry per tensor dim, each a power of two; `log2` of each.
    fn pow2_list(&self, key: &str, rank: usize, shape: &[i64]) -> Result<Vec<u32>> {
        let v = self.list(key)?;
        if v.len() != rank {
            return Err(self.err(
                key,
                format!(
                    "has {} entries but the shape {shape:?} has rank {rank}",
                    v.len()
                ),
            ));
        }
        log2_all(&v).map_err(|why| self.err(key, why))
    }

    fn validate(&self, c: &Cursor) -> Result<()> {
        let Some(known) = fields_of(&self.raw.kind) else {
            let (s, e) = self.raw.span;
            return Err(c
                .error_at(
                    s,
                    e,
                    format!(
                        "a supported attribute kind ({}), not {:?}",
                        KINDS.join(", "),
                        self.raw.kind
                    ),
                )
                .into());
        };
        let cga: &[&str] = if matches!(
            self.raw.kind.as_str(),
            "dot_op" | "slice" | "linear" | "shared_linear" | "generic_linear"
        ) {
            &[]
        } else {
            &CGA_FIELDS
        };
        for (k, v) in &self.raw.fields {
            if !known.contains(&k.as_str()) && !cga.contains(&k.as_str()) {
                let all: Vec<&str> = known.iter().chain(cga).copied().collect();
                return Err(self.err(
                    k,
                    format!(
                        "unknown field; #ttg.{} has {}",
                        self.raw.kind,
                        all.join(", ")
                    ),
                ));
            }
            if let AttrValue::Attr(inner) = v {
                TritonAttr {
                    raw: (**inner).clone(),
                }
                .validate(c)?;
            }
        }
        let params: &[&str] = if self.raw.kind == "shared_linear" {
            &["alignment"]
        } else {
            &[]
        };
        if let Some((k, _)) = self
            .raw
            .params
            .iter()
            .find(|(k, _)| !params.contains(&k.as_str()))
        {
            return Err(self.err(
                k,
                format!(
                    "unknown parameter after the dictionary; #ttg.{} has {}",
                    self.raw.kind,
                    if params.is_empty() {
                        "none".to_string()
                    } else {
                        params.join(", ")
                    }
                ),
            ));
        }
        if self.raw.kind == "shared_linear" {
            self.shared_linear()?;
        }
        Ok(())
    }

    /// The nested `parent` attribute of `dot_op` and `slice`.
    fn parent(&self) -> Result<TritonAttr> {
        match self.value("parent") {
            Some(AttrValue::Attr(a)) => Ok(TritonAttr { raw: (**a).clone() }),
            Some(_) => Err(self.err(
                "parent",
                "expected an attribute such as #ttg.nvidia_mma<{..}>",
            )),
            None => Err(self.err("parent", "missing")),
        }
    }

    /// Whether this attribute describes a shared-memory layout (`offset -> dims`).
    pub fn is_shared(&self) -> bool {
        matches!(
            self.raw.kind.as_str(),
            "swizzled_shared" | "nvmma_shared" | "padded_shared" | "shared" | "shared_linear"
        )
    }

    /// The layout of this attribute on a tensor of `shape`: the linear layout of
    /// [`TritonAttr::to_linear`], except `padded_shared`, whose memory addresses (with the
    /// padding's holes) form a strided CuTe layout from tensor coordinates to addresses.
    pub fn to_layout(&self, shape: &[i64]) -> Result<crate::Layout> {
        if self.raw.kind == "padded_shared" {
            return Ok(crate::Layout::Cute(self.padded_to_cute(shape)?));
        }
        Ok(crate::Layout::Linear(self.to_linear(shape)?))
    }

    /// The linear layout of this attribute on a tensor of `shape`: `(register, lane, warp,
    /// block) -> (dim0, ..)` for distributed layouts, `(offset, block) -> (dim0, ..)` for
    /// shared ones (the element at each offset of a CTA's buffer).
    ///
    /// `#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [1, 1],
    /// instrShape = [16, 8]}>` on `[16, 8]` gives `register [[0,1],[8,0]]`,
    /// `lane [[0,2],[0,4],[1,0],[2,0],[4,0]]`, `warp []`, `block []`.
    pub fn to_linear(&self, shape: &[i64]) -> Result<LinearLayout> {
        let shape_log = log2_all(shape).map_err(|why| LayoutError::Shape {
            shape: shape.to_vec(),
            why,
        })?;
        if shape.is_empty() {
            return Err(LayoutError::Shape {
                shape: vec![],
                why: "a Triton layout needs a tensor of rank at least 1".into(),
            });
        }
        match self.raw.kind.as_str() {
            "blocked" => self.blocked_to_linear(&shape_log),
            "nvidia_mma" => self.mma_to_linear(shape, &shape_log),
            "amd_mfma" => self.mfma_to_linear(shape, &shape_log),
            "amd_wmma" => self.wmma_to_linear(shape, &shape_log),
            "dot_op" => self.dot_to_linear(shape, &shape_log),
            "slice" => self.slice_to_linear(shape),
            "swizzled_shared" => self.swizzled_to_linear(&shape_log),
            "nvmma_shared" => self.nvmma_shared_to_linear(shape, &shape_log),
            "shared_linear" => self.shared_linear_on(shape),
            "shared" => self.legacy_shared()?.to_linear(shape),
            // A `#ttg.linear` or `#ttg.generic_linear` nested as a parent (at top level it is
            // its own notation).
            "linear" | "generic_linear" => {
                crate::notation::linear::parse_attr(&self.raw.to_string(), Some(shape))
            }
            "padded_shared" => Err(self.err(
                "kind",
                "a padded shared layout has holes in memory, so no linear layout; it is read as \
                 a strided (CuTe) layout of memory addresses (Layout::parse, to_layout)",
            )),
            other => Err(self.err("kind", format!("{other} is not supported"))),
        }
    }
}

/// Attribute kinds this module imports (`shared` is Triton's pre-3.2 spelling; see `legacy`).
const KINDS: [&str; 13] = [
    "padded_shared",
    "blocked",
    "nvidia_mma",
    "amd_mfma",
    "amd_wmma",
    "dot_op",
    "slice",
    "swizzled_shared",
    "nvmma_shared",
    "shared_linear",
    "shared",
    "linear",
    "generic_linear",
];

/// The multi-CTA fields: the old spelling (`CTAsPerCGA`, `CTASplitNum`, `CTAOrder`) and
/// Triton 3.9's block bases (`CGALayout`).
const CGA_FIELDS: [&str; 4] = ["CTAsPerCGA", "CTASplitNum", "CTAOrder", "CGALayout"];

/// The fields of each kind (besides the multi-CTA ones).
fn fields_of(kind: &str) -> Option<&'static [&'static str]> {
    Some(match kind {
        "blocked" => &["sizePerThread", "threadsPerWarp", "warpsPerCTA", "order"],
        "nvidia_mma" => &["versionMajor", "versionMinor", "warpsPerCTA", "instrShape"],
        "amd_mfma" => &[
            "version",
            "versionMajor",
            "versionMinor",
            "warpsPerCTA",
            "instrShape",
            "MDim",
            "NDim",
            "isTransposed",
            "tilesPerWarp",
            "elementBitWidth",
        ],
        "amd_wmma" => &[
            "version",
            "isTranspose",
            "ctaLayout",
            "warpsPerCTA",
            "tilesPerWarp",
            "instrShape",
        ],
        "dot_op" => &["opIdx", "parent", "kWidth"],
        "slice" => &["dim", "parent"],
        "swizzled_shared" => &["vec", "perPhase", "maxPhase", "order"],
        "padded_shared" => &["order", "shape", "offset", "block"],
        "shared" => &["vec", "perPhase", "maxPhase", "order", "hasLeadingOffset"],
        "linear" | "generic_linear" => &["register", "lane", "warp", "block", "order"],
        "shared_linear" => &["offset", "block"],
        "nvmma_shared" => &[
            "swizzlingByteWidth",
            "transposed",
            "elementBitWidth",
            "rank",
            "fp4Padded",
        ],
        _ => return None,
    })
}

impl fmt::Display for TritonAttr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.raw.fmt(f)
    }
}

fn check_order(order: &[i64]) -> std::result::Result<Vec<usize>, String> {
    let mut seen = vec![false; order.len()];
    let mut out = Vec::new();
    for &o in order {
        let Some(slot) = usize::try_from(o).ok().filter(|&u| u < order.len()) else {
            return Err(format!("{o} is not a dimension of rank {}", order.len()));
        };
        if std::mem::replace(&mut seen[slot], true) {
            return Err(format!("dimension {o} appears twice"));
        }
        out.push(slot);
    }
    Ok(out)
}

fn log2_all(v: &[i64]) -> std::result::Result<Vec<u32>, String> {
    v.iter()
        .map(|&x| log2(x).ok_or_else(|| format!("{x} is not a power of two")))
        .collect()
}

/// What fitting a tile to a smaller shape does with register bases beyond the shape.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Registers {
    /// Remove them (blocked: fewer registers per thread).
    Drop,
    /// Zero them (nvidia_mma: registers keep the instruction's count, holding copies).
    Broadcast,
}

/// Builds `(register, lane, warp, block) -> (dim0..)` bases one identity factor at a time
/// (a product of one-dimensional identity layouts), then fits the tile to a tensor shape.
pub(crate) struct TileBuilder {
    rank: usize,
    /// The in-dim that repeats the tile: `register` (distributed) or `offset` (shared).
    first_in: String,
    /// In-dims in insertion order with their bases.
    ins: Vec<InDim>,
    /// Bits used so far per out-dim.
    out_bits: Vec<u32>,
}

impl TileBuilder {
    pub(crate) fn new(rank: usize) -> Self {
        TileBuilder::with_first(rank, "register")
    }

    /// A builder whose tile repeats along `first_in`.
    pub(crate) fn with_first(rank: usize, first_in: &str) -> Self {
        TileBuilder {
            rank,
            first_in: first_in.to_string(),
            ins: Vec::new(),
            out_bits: vec![0; rank],
        }
    }

    fn dim_mut(&mut self, name: &str) -> &mut InDim {
        let i = match self.ins.iter().position(|d| d.name == name) {
            Some(i) => i,
            None => {
                self.ins.push(InDim {
                    name: name.to_string(),
                    bases: Vec::new(),
                });
                self.ins.len() - 1
            }
        };
        &mut self.ins[i]
    }

    /// Appends `log2_size` bases to in-dim `name` that walk out-dim `dim` from its next free
    /// bit; fails when the dim would pass 2^62.
    pub(crate) fn identity(&mut self, name: &str, dim: usize, log2_size: u32) -> Result<()> {
        let start = self.out_bits[dim];
        let end =
            start
                .checked_add(log2_size)
                .filter(|&e| e <= MAX_OUT_BITS)
                .ok_or_else(|| {
                    LayoutError::invalid(
                format!("{name} bases along dim{dim}"),
                format!("the tile would span 2^{start} * 2^{log2_size}, beyond 2^{MAX_OUT_BITS}"),
            )
                })?;
        let rank = self.rank;
        let d = self.dim_mut(name);
        for bit in start..end {
            let mut b = vec![0i64; rank];
            b[dim] = 1i64 << bit;
            d.bases.push(b);
        }
        self.out_bits[dim] = end;
        Ok(())
    }

    /// Appends `log2_size` zero bases to in-dim `name` (a broadcast: those bits select copies).
    pub(crate) fn zeros(&mut self, name: &str, log2_size: u32) {
        let rank = self.rank;
        let d = self.dim_mut(name);
        for _ in 0..log2_size {
            d.bases.push(vec![0; rank]);
        }
    }

    /// Appends one basis to in-dim `name` and records that out-dim `dim` now uses `bits` bits
    /// (for bases that are not one-dim identities, e.g. a swizzled row).
    pub(crate) fn push(&mut self, name: &str, basis: Vec<i64>, dim: usize, bits: u32) {
        self.dim_mut(name).bases.push(basis);
        self.out_bits[dim] = self.out_bits[dim].max(bits);
    }

    /// Appends a basis that may move several out-dims (scaled CTA-layout bases of AMD wmma).
    pub(crate) fn push_any(&mut self, name: &str, basis: Vec<i64>) {
        self.dim_mut(name).bases.push(basis);
    }

    /// Records that out-dim `dim` now spans `2^bits` (a product whose factor spans it).
    pub(crate) fn raise_bits(&mut self, dim: usize, bits: u32) {
        self.out_bits[dim] = self.out_bits[dim].max(bits);
    }

    /// Bits used so far along out-dim `dim`.
    pub(crate) fn bits(&self, dim: usize) -> u32 {
        self.out_bits[dim]
    }

    /// Fits the CTA tile to the per-CTA shape, adds the CGA's block bases and returns the
    /// layout on the whole tensor (`shape_log`, log2 per dim).
    ///
    /// Fitting: lane, warp and block bases beyond the per-CTA shape become zero (broadcast),
    /// register bases as `registers` says; a shape larger than the tile repeats it along
    /// registers, dims taken in `repeat_order`.
    pub(crate) fn finish(
        mut self,
        shape_log: &[u32],
        cga: &Cga,
        repeat_order: &[usize],
        registers: Registers,
    ) -> Result<LinearLayout> {
        let cta_log = cga.per_cta(shape_log);
        for (dim, &want) in cta_log.iter().enumerate() {
            let limit = 1i64 << want;
            for d in &mut self.ins {
                let drop = registers == Registers::Drop && d.name == "register";
                d.bases.retain(|b| !(drop && b[dim] >= limit));
                for b in &mut d.bases {
                    if b[dim] >= limit {
                        b[dim] = 0;
                    }
                }
            }
            self.out_bits[dim] = self.out_bits[dim].min(want);
        }
        for &dim in repeat_order {
            let missing = cta_log[dim].saturating_sub(self.out_bits[dim]);
            self.identity(self.first_in.clone().as_str(), dim, missing)?;
        }
        let block = cga.block_bases(shape_log);
        self.dim_mut("block").bases.extend(block);
        let order: &[&str] = if self.first_in == "offset" {
            &["offset", "block"]
        } else {
            &["register", "lane", "warp", "block"]
        };
        for name in order {
            self.dim_mut(name);
        }
        self.ins.sort_by_key(|d| {
            order
                .iter()
                .position(|n| *n == d.name)
                .unwrap_or(order.len())
        });
        let outs = (0..self.rank)
            .map(|i| OutDim {
                name: format!("dim{i}"),
                log2_size: shape_log[i],
            })
            .collect();
        LinearLayout::new(self.ins, outs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MMA2: &str = "#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>";

    fn import(text: &str, shape: &[i64]) -> Result<LinearLayout> {
        parse_attr(text)?.to_linear(shape)
    }

    /// The error's text, which must name `field`.
    fn refusal(text: &str, shape: &[i64], field: &str) -> String {
        let e = import(text, shape).expect_err(text).to_string();
        assert!(e.contains(field), "{e:?} does not name {field}");
        e
    }

    /// `test/TritonGPU/amd/invalid.mlir` slices a `#ttg.linear` parent (with the `order` key
    /// Triton ignores); Triton 3.9 reads it as the parent's bases without the sliced dim.
    #[test]
    fn a_linear_parent_is_sliced_like_any_distributed_parent() {
        let slice = "#ttg.slice<{dim = 1, parent = #ttg.linear<{register = [[1, 0], [2, 0], [4, 0], [8, 0]], lane = [[0, 0], [0, 0]], warp = [], block = [], order = [1, 0]}>}>";
        let l = import(slice, &[16]).unwrap();
        assert_eq!(l.ins()[0].bases, vec![vec![1], vec![2], vec![4], vec![8]]);
        assert_eq!(l.ins()[1].bases, vec![vec![0], vec![0]]);
        let bad =
            "#ttg.slice<{dim = 1, parent = #ttg.linear<{register = [[1, 0]], CTAOrder = [0]}>}>";
        refusal(bad, &[2], "CTAOrder");
    }

    #[test]
    fn old_single_cta_fields_are_accepted_and_print_back() {
        let old = "#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], CTAsPerCGA = [1, 1], CTASplitNum = [1, 1], CTAOrder = [1, 0], instrShape = [16, 8]}>";
        assert_eq!(parse_attr(old).unwrap().to_string(), old);
        let typed = MMA2.replace("versionMajor = 2", "versionMajor = 2 : i32");
        assert_eq!(parse_attr(&typed).unwrap().to_string(), typed);
        assert_eq!(
            import(&typed, &[64, 64]).unwrap(),
            import(MMA2, &[64, 64]).unwrap()
        );
        assert_eq!(
            import(old, &[64, 64]).unwrap(),
            import(MMA2, &[64, 64]).unwrap()
        );
    }

    #[test]
    fn multi_cta_fields_give_block_bases() {
        let cga = "#ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], CGALayout = [[0, 1], [1, 0]], instrShape = [16, 64, 16]}>";
        assert_eq!(parse_attr(cga).unwrap().to_string(), cga);
        let l = import(cga, &[128, 128]).unwrap();
        assert_eq!(
            l.in_dim("block").unwrap().bases,
            vec![vec![0, 64], vec![64, 0]]
        );
        // The old spelling of the same cluster: 2x2 CTAs, both dims split, dim1 fastest.
        let old = cga.replace(
            "CGALayout = [[0, 1], [1, 0]]",
            "CTAsPerCGA = [2, 2], CTASplitNum = [2, 2], CTAOrder = [1, 0]",
        );
        assert_eq!(import(&old, &[128, 128]).unwrap(), l);
        // Split one way over two CTAs: the second block bit holds copies.
        let half = old.replace("CTASplitNum = [2, 2]", "CTASplitNum = [1, 2]");
        let l = import(&half, &[128, 128]).unwrap();
        assert_eq!(
            l.in_dim("block").unwrap().bases,
            vec![vec![0, 64], vec![0, 0]]
        );
    }

    #[test]
    fn bad_multi_cta_fields_are_refused_by_name() {
        let split = "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 1], order = [1, 0], CTAsPerCGA = [2, 1], CTASplitNum = [4, 1], CTAOrder = [1, 0]}>";
        assert!(refusal(split, &[64, 64], "CTASplitNum").contains("only 2 CTAs"));
        let order = split.replace("CTAOrder = [1, 0]", "CTAOrder = [1, 1]");
        refusal(&order, &[64, 64], "CTAOrder");
        let cga = "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 1], order = [1, 0], CGALayout = [[3, 0]]}>";
        refusal(cga, &[64, 64], "CGALayout");
        refusal(
            &cga.replace("[[3, 0]]", "[[1, 0, 0]]"),
            &[64, 64],
            "CGALayout",
        );
        let both = cga.replace("[[3, 0]]", "[[1, 0]], CTAOrder = [1, 0]");
        refusal(&both, &[64, 64], "CTAOrder");
    }

    #[test]
    fn dot_slice_and_shared_fields_are_refused_by_name() {
        let dot = format!("#ttg.dot_op<{{opIdx = 0, parent = {MMA2}, kWidth = 2}}>");
        assert!(import(&dot, &[64, 64]).is_ok());
        refusal(&dot.replace("opIdx = 0", "opIdx = 2"), &[64, 64], "opIdx");
        refusal(
            &dot.replace("kWidth = 2", "kWidth = 3"),
            &[64, 64],
            "kWidth",
        );
        refusal(
            &dot.replace("kWidth = 2", "kWidth = 32"),
            &[64, 64],
            "kWidth",
        );
        let blocked = "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 1], order = [1, 0]}>";
        let fma = format!("#ttg.dot_op<{{opIdx = 0, parent = {blocked}, kWidth = 1}}>");
        refusal(&fma, &[64, 64], "kWidth");
        let fma = format!("#ttg.dot_op<{{opIdx = 0, parent = {blocked}}}>");
        assert!(import(&fma, &[64, 64]).is_ok());
        let sw_parent =
            "#ttg.swizzled_shared<{vec = 2, perPhase = 1, maxPhase = 4, order = [1, 0]}>";
        let shared = format!("#ttg.dot_op<{{opIdx = 0, parent = {sw_parent}}}>");
        refusal(&shared, &[64, 64], "parent");
        let v3 = "#ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 64, 16]}>";
        let b3 = format!("#ttg.dot_op<{{opIdx = 1, parent = {v3}, kWidth = 2}}>");
        assert!(refusal(&b3, &[64, 64], "opIdx").contains("shared memory"));
        // A nested attribute is validated too, with its own field names.
        let typo = dot.replace("warpsPerCTA", "warpPerCTA");
        let e = parse_attr(&typo).unwrap_err().to_string();
        assert!(e.contains("warpPerCTA"), "{e}");
        let slice = format!("#ttg.slice<{{dim = 2, parent = {blocked}}}>");
        refusal(&slice, &[64], "dim");
        let sw = "#ttg.swizzled_shared<{vec = 3, perPhase = 1, maxPhase = 4, order = [1, 0]}>";
        refusal(sw, &[8, 8], "vec");
        let shared_slice = format!("#ttg.slice<{{dim = 0, parent = {}}}>", sw.replace("3", "2"));
        refusal(&shared_slice, &[8], "parent");
        let nv = "#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>";
        assert!(import(nv, &[8, 64]).is_ok());
        assert!(refusal(nv, &[8, 32], "contiguous dim").contains("64 elements"));
        assert!(refusal(nv, &[4, 64], "8 rows").contains("4 rows of 64"));
        refusal(&nv.replace("128", "96"), &[8, 64], "swizzlingByteWidth");
        refusal(&nv.replace("= 16}", "= 12}"), &[8, 64], "elementBitWidth");
        refusal(nv, &[2, 8, 64], "rank");
    }

    /// The audit's cases (Triton 3.9's Gluon gives these bases): rank-3 `transposed` keeps
    /// dim 0 contiguous and shares the 2-D columns with dim 1; unswizzled, it lands the TMA
    /// block's dims on dims of other sizes (zero bases: padding). `fp4Padded` maps the upper
    /// 8 of every 16 offsets onto the lower 8 (a zero basis).
    #[test]
    fn nvmma_shared_follows_triton_for_rank_3_transposed_and_fp4_padding() {
        let nv = |w: i64, bits: i64, rest: &str| {
            format!(
                "#ttg.nvmma_shared<{{swizzlingByteWidth = {w}, transposed = true, \
                 elementBitWidth = {bits}{rest}}}>"
            )
        };
        let offsets =
            |text: &str, shape: &[i64]| import(text, shape).unwrap().ins()[0].bases.clone();
        assert_eq!(
            offsets(&nv(32, 64, ", rank = 3"), &[4, 8, 8]),
            [
                [1, 0, 0],
                [2, 0, 0],
                [0, 1, 0],
                [0, 2, 0],
                [2, 4, 0],
                [0, 0, 1],
                [0, 0, 2],
                [0, 0, 4]
            ]
        );
        assert_eq!(
            offsets(&nv(0, 16, ", rank = 3"), &[2, 16, 16]),
            [
                [0, 1, 0],
                [1, 0, 0],
                [0, 0, 0],
                [0, 0, 0],
                [0, 0, 0],
                [0, 0, 1],
                [0, 0, 2],
                [0, 0, 4],
                [0, 0, 8],
                [0, 2, 0],
                [0, 4, 0],
                [0, 8, 0]
            ]
        );
        let fp4 = "#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, \
                   elementBitWidth = 8, fp4Padded = true}>";
        assert_eq!(
            offsets(fp4, &[8, 64]),
            [
                [0, 1],
                [0, 2],
                [0, 4],
                [0, 0],
                [0, 8],
                [0, 16],
                [0, 32],
                [1, 8],
                [2, 16],
                [4, 32]
            ]
        );
        // Triton builds padded fp4 only with 128-byte swizzling of 8-bit elements.
        refusal(&fp4.replace("128", "64"), &[8, 64], "fp4Padded");
        // Past 256 elements the TMA block repeats: dim 0 comes before dim 1's bit 256.
        let big =
            "#ttg.nvmma_shared<{swizzlingByteWidth = 0, transposed = false, elementBitWidth = 16}>";
        let b = offsets(big, &[512, 512]);
        assert_eq!(&b[16..], [[0, 256], [256, 0]]);
        // More offset bits than a linear layout holds are refused before any is computed.
        let nine = big.replace("16}", "16, rank = 9}");
        refusal(&nine, &[256; 9], "2^62");
    }

    #[test]
    fn bad_mma_fields_are_refused_by_name() {
        refusal(
            &MMA2.replace("versionMajor = 2", "versionMajor = 1"),
            &[16, 8],
            "versionMajor",
        );
        refusal(
            &MMA2.replace("versionMinor = 0", "versionMinor = [0]"),
            &[16, 8],
            "versionMinor",
        );
        refusal(
            &MMA2.replace("[16, 8]}", "[16, 12]}"),
            &[16, 8],
            "instrShape",
        );
        refusal(
            &MMA2.replace("[16, 8]}", "[8, 16]}"),
            &[16, 8],
            "instrShape",
        );
        refusal(
            &MMA2.replace("[16, 8]}", "[16, 8, 16]}"),
            &[16, 8],
            "instrShape",
        );
        refusal(&MMA2.replace("[2, 2]", "[3, 1]"), &[16, 8], "warpsPerCTA");
        refusal(
            &MMA2.replace("[2, 2]", "[2, 2, 1]"),
            &[16, 8],
            "warpsPerCTA",
        );
        refusal(
            &MMA2.replace("warpsPerCTA = [2, 2], ", ""),
            &[16, 8],
            "warpsPerCTA",
        );
        refusal(
            &MMA2
                .replace("[16, 8]}", "[2, 16, 8]}")
                .replace("[2, 2]", "[2, 2, 1]"),
            &[4, 16, 8],
            "batch",
        );
        let v3 = "#ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1, 1], instrShape = [16, 64, 16]}>";
        refusal(v3, &[2, 64, 64], "rank");
        refusal(
            &MMA2.replace("instrShape", "instShape"),
            &[16, 8],
            "instShape",
        );
        refusal(MMA2, &[16, 12], "12");
    }

    #[test]
    fn huge_blocked_tiles_are_refused_not_overflowed() {
        let big = "#ttg.blocked<{sizePerThread = [1099511627776], threadsPerWarp = [1099511627776], warpsPerCTA = [1], order = [0]}>";
        refusal(big, &[4], "beyond 2^62");
        let zero = big.replace("[1099511627776], threads", "[0], threads");
        refusal(&zero, &[4], "sizePerThread");
    }

    #[test]
    fn mma_v3_warps_stack_along_m_first() {
        let v3 = "#ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 2], instrShape = [16, 32, 16]}>";
        let l = import(v3, &[128, 128]).unwrap();
        let warps = &l.in_dim("warp").unwrap().bases;
        assert_eq!(warps, &vec![vec![16, 0], vec![32, 0], vec![0, 32]]);
    }
}
