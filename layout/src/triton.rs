//! Triton TTGIR layout attributes, imported to F2 linear layouts for a tensor shape.
//!
//! Text such as `#ttg.blocked<{sizePerThread = [2, 2], threadsPerWarp = [4, 8],
//! warpsPerCTA = [2, 1], order = [1, 0]}>` is parsed into a [`TritonAttr`] (printing gives the
//! same text back, in MLIR's spelling), and [`TritonAttr::to_linear`] builds the linear layout
//! `(register, lane, warp, block) -> (dim0, dim1, ...)` for a tensor shape.
//!
//! Blocked (the identity construction, per `order`, fastest dim first): registers take
//! `sizePerThread`, then lanes `threadsPerWarp`, then warps `warpsPerCTA`. The CTA tile is then
//! fitted to the shape: where the tile is larger, the extra lane/warp bases become 0 (broadcast)
//! and extra register bases are dropped; where it is smaller, it repeats in registers.
//! Worked example (the Linear Layouts paper, figure 1): the attribute above on 16x16 gives
//! `register [[0,1],[1,0]]`, `lane [[0,2],[0,4],[0,8],[2,0],[4,0]]`, `warp [[8,0]]`.

use std::fmt;

use crate::arith::log2;
use crate::error::{LayoutError, ParseError, Result};
use crate::linear::{InDim, LinearLayout, OutDim};
use crate::notation::cursor::Cursor;

const NOTATION: &str = "Triton attribute";

/// One value of an attribute's dictionary.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum AttrValue {
    /// `4`
    Int(i64),
    /// `true` / `false`
    Bool(bool),
    /// `[2, 2]`
    List(Vec<i64>),
    /// A nested attribute (`parent = #ttg.nvidia_mma<{...}>`).
    Attr(Box<RawAttr>),
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
}

impl fmt::Display for RawAttr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}.{}<{{", self.dialect, self.kind)?;
        for (i, (k, v)) in self.fields.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{k} = ")?;
            match v {
                AttrValue::Int(x) => write!(f, "{x}")?,
                AttrValue::Bool(b) => write!(f, "{b}")?,
                AttrValue::List(xs) => {
                    let s: Vec<String> = xs.iter().map(i64::to_string).collect();
                    write!(f, "[{}]", s.join(", "))?
                }
                AttrValue::Attr(a) => write!(f, "{a}")?,
            }
        }
        f.write_str("}>")
    }
}

/// A parsed Triton layout attribute.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TritonAttr {
    raw: RawAttr,
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
    c.expect("{")?;
    let mut fields: Vec<(String, AttrValue)> = Vec::new();
    if !c.eat("}") {
        loop {
            let kat = c.pos();
            let key = c.ident("a field name")?.to_string();
            if fields.iter().any(|(k, _)| *k == key) {
                return Err(c.error_at(kat, c.pos(), format!("a new field ({key} appears twice)")));
            }
            c.expect("=")?;
            let value = if c.peek() == Some('[') {
                c.expect("[")?;
                let mut xs = Vec::new();
                if !c.eat("]") {
                    loop {
                        xs.push(c.int(false)?);
                        if c.eat("]") {
                            break;
                        }
                        c.expect(",").map_err(|_| c.error("',' or ']'"))?;
                    }
                }
                AttrValue::List(xs)
            } else if c.peek() == Some('#') {
                AttrValue::Attr(Box::new(raw_attr(c, depth + 1)?))
            } else if c.eat("true") {
                AttrValue::Bool(true)
            } else if c.eat("false") {
                AttrValue::Bool(false)
            } else {
                let v = c
                    .int(false)
                    .map_err(|_| c.error("an integer, a boolean, a list [..] or an attribute"))?;
                // MLIR may print a typed integer, e.g. `8 : i32`.
                if c.eat(":") {
                    c.ident("an integer type")?;
                }
                AttrValue::Int(v)
            };
            fields.push((key, value));
            if c.eat("}") {
                break;
            }
            c.expect(",").map_err(|_| c.error("',' or '}'"))?;
        }
    }
    c.expect(">")?;
    Ok(RawAttr {
        dialect,
        kind,
        fields,
        span: (start, c.pos()),
    })
}

impl TritonAttr {
    /// The attribute as parsed.
    pub fn raw(&self) -> &RawAttr {
        &self.raw
    }

    fn err(&self, field: &str, why: impl Into<String>) -> LayoutError {
        LayoutError::invalid(format!("#ttg.{} field {field}", self.raw.kind), why)
    }

    fn list(&self, key: &str) -> Result<Vec<i64>> {
        match self.raw.fields.iter().find(|(k, _)| k == key) {
            Some((_, AttrValue::List(xs))) => Ok(xs.clone()),
            Some(_) => Err(self.err(key, "expected a list such as [1, 0]")),
            None => Err(self.err(key, "missing")),
        }
    }

    fn opt_list(&self, key: &str) -> Result<Option<Vec<i64>>> {
        match self.raw.fields.iter().any(|(k, _)| k == key) {
            true => self.list(key).map(Some),
            false => Ok(None),
        }
    }

    fn validate(&self, c: &Cursor) -> Result<()> {
        let known: &[&str] = match self.raw.kind.as_str() {
            "blocked" => &[
                "sizePerThread",
                "threadsPerWarp",
                "warpsPerCTA",
                "order",
                "CTAsPerCGA",
                "CTASplitNum",
                "CTAOrder",
            ],
            other => {
                let (s, e) = self.raw.span;
                return Err(c
                    .error_at(
                        s,
                        e,
                        format!("a supported attribute kind (blocked), not {other:?}"),
                    )
                    .into());
            }
        };
        for (k, _) in &self.raw.fields {
            if !known.contains(&k.as_str()) {
                return Err(self.err(
                    k,
                    format!(
                        "unknown field; #ttg.{} has {}",
                        self.raw.kind,
                        known.join(", ")
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The linear layout of this attribute on a tensor of `shape`.
    pub fn to_linear(&self, shape: &[i64]) -> Result<LinearLayout> {
        match self.raw.kind.as_str() {
            "blocked" => self.blocked_to_linear(shape),
            other => Err(self.err("kind", format!("{other} is not supported"))),
        }
    }

    fn blocked_to_linear(&self, shape: &[i64]) -> Result<LinearLayout> {
        let rank = shape.len();
        let spt = self.list("sizePerThread")?;
        let tpw = self.list("threadsPerWarp")?;
        let wpc = self.list("warpsPerCTA")?;
        let order = self.list("order")?;
        for (name, v) in [
            ("sizePerThread", &spt),
            ("threadsPerWarp", &tpw),
            ("warpsPerCTA", &wpc),
            ("order", &order),
        ] {
            if v.len() != rank {
                return Err(self.err(
                    name,
                    format!(
                        "has {} entries but the shape {shape:?} has rank {rank}",
                        v.len()
                    ),
                ));
            }
        }
        let order = check_order(&order).map_err(|why| self.err("order", why))?;
        for (name, key) in [("CTAsPerCGA", "CTAsPerCGA"), ("CTASplitNum", "CTASplitNum")] {
            if let Some(v) = self.opt_list(key)? {
                if v.iter().any(|&x| x != 1) {
                    return Err(self.err(
                        name,
                        "multi-CTA layouts are imported by the F2 issue (only 1s here)",
                    ));
                }
            }
        }
        let shape_log = log2_all(shape).map_err(|why| LayoutError::Shape {
            shape: shape.to_vec(),
            why,
        })?;
        let mut tile = TileBuilder::new(rank);
        for (name, sizes, field) in [
            ("register", &spt, "sizePerThread"),
            ("lane", &tpw, "threadsPerWarp"),
            ("warp", &wpc, "warpsPerCTA"),
        ] {
            let logs = log2_all(sizes).map_err(|why| self.err(field, why))?;
            for &d in &order {
                tile.identity(name, d, logs[d]);
            }
        }
        tile.fit_to_shape(&shape_log)
    }
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

/// Builds `(register, lane, warp, block) -> (dim0..)` bases one identity factor at a time
/// (Triton's product of `identity1D` layouts), then fits the tile to a tensor shape.
pub(crate) struct TileBuilder {
    rank: usize,
    /// In-dims in insertion order with their bases.
    ins: Vec<InDim>,
    /// Bits used so far per out-dim.
    out_bits: Vec<u32>,
}

impl TileBuilder {
    pub(crate) fn new(rank: usize) -> Self {
        TileBuilder {
            rank,
            ins: Vec::new(),
            out_bits: vec![0; rank],
        }
    }

    fn dim_mut(&mut self, name: &str) -> &mut InDim {
        if let Some(i) = self.ins.iter().position(|d| d.name == name) {
            &mut self.ins[i]
        } else {
            self.ins.push(InDim {
                name: name.to_string(),
                bases: Vec::new(),
            });
            self.ins.last_mut().expect("just pushed")
        }
    }

    /// Appends `log2_size` bases to in-dim `name` that walk out-dim `dim` from its next free bit.
    pub(crate) fn identity(&mut self, name: &str, dim: usize, log2_size: u32) {
        let start = self.out_bits[dim];
        let rank = self.rank;
        let d = self.dim_mut(name);
        for k in 0..log2_size {
            let mut b = vec![0i64; rank];
            b[dim] = 1i64 << (start + k);
            d.bases.push(b);
        }
        self.out_bits[dim] += log2_size;
    }

    /// Fits the tile to `shape` (log2 per dim): bases beyond the shape become zero (lanes,
    /// warps, blocks: broadcast) or are dropped (registers); a shape larger than the tile
    /// repeats it along registers.
    pub(crate) fn fit_to_shape(mut self, shape_log: &[u32]) -> Result<LinearLayout> {
        for (dim, &want) in shape_log.iter().enumerate() {
            let limit = 1i64 << want;
            for d in &mut self.ins {
                let is_reg = d.name == "register";
                let mut kept = Vec::new();
                for b in d.bases.drain(..) {
                    if b[dim] >= limit {
                        if !is_reg {
                            let mut z = b.clone();
                            z[dim] = 0;
                            kept.push(z);
                        }
                    } else {
                        kept.push(b);
                    }
                }
                d.bases = kept;
            }
            self.out_bits[dim] = self.out_bits[dim].min(want);
        }
        for (dim, &want) in shape_log.iter().enumerate() {
            if self.out_bits[dim] < want {
                let missing = want - self.out_bits[dim];
                self.identity("register", dim, missing);
            }
        }
        for name in ["register", "lane", "warp", "block"] {
            self.dim_mut(name);
        }
        let order = ["register", "lane", "warp", "block"];
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
