//! Triton TTGIR layout attributes, imported to F2 linear layouts for a tensor shape.
//!
//! Text such as `#ttg.blocked<{sizePerThread = [2, 2], threadsPerWarp = [4, 8],
//! warpsPerCTA = [2, 1], order = [1, 0]}>` is parsed into a [`TritonAttr`] (printing gives the
//! same text back, in MLIR's spelling), and [`TritonAttr::to_linear`] builds the linear layout
//! `(register, lane, warp, block) -> (dim0, dim1, ...)` for a tensor shape.
//!
//! Both kinds first build one CTA tile as a product of identity factors, each walking one tensor
//! dim from its next free bit, then fit the tile to the shape.
//!
//! - Blocked: per `order` (fastest dim first), registers take `sizePerThread`, then lanes
//!   `threadsPerWarp`, then warps `warpsPerCTA`.
//! - `nvidia_mma` (v2 `instrShape = [16, 8]`, or `[1, 16, 8]` with a batch dim; v3 (Hopper
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
//!
//! Multi-CTA attributes (`CTAsPerCGA`/`CTASplitNum` other than 1, a non-empty `CGALayout`)
//! are refused here; the F2 issue adds them.

use std::fmt;

use crate::arith::log2;
use crate::error::{LayoutError, ParseError, Result};
use crate::linear::{InDim, LinearLayout, OutDim, MAX_OUT_BITS};
use crate::notation::cursor::Cursor;

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
                AttrValue::TypedInt(x, ty) => write!(f, "{x} : {ty}")?,
                AttrValue::Bool(b) => write!(f, "{b}")?,
                AttrValue::List(xs) => write!(f, "[{}]", join(xs))?,
                AttrValue::Lists(xss) => {
                    let s: Vec<String> = xss.iter().map(|xs| format!("[{}]", join(xs))).collect();
                    write!(f, "[{}]", s.join(", "))?
                }
                AttrValue::Attr(a) => write!(f, "{a}")?,
            }
        }
        f.write_str("}>")
    }
}

fn join(xs: &[i64]) -> String {
    xs.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")
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
                    AttrValue::TypedInt(v, c.ident("an integer type")?.to_string())
                } else {
                    AttrValue::Int(v)
                }
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
        const CTA: [&str; 4] = ["CTAsPerCGA", "CTASplitNum", "CTAOrder", "CGALayout"];
        let known: &[&str] = match self.raw.kind.as_str() {
            "blocked" => &["sizePerThread", "threadsPerWarp", "warpsPerCTA", "order"],
            "nvidia_mma" => &["versionMajor", "versionMinor", "warpsPerCTA", "instrShape"],
            other => {
                let (s, e) = self.raw.span;
                return Err(c
                    .error_at(
                        s,
                        e,
                        format!("a supported attribute kind (blocked, nvidia_mma), not {other:?}"),
                    )
                    .into());
            }
        };
        for (k, _) in &self.raw.fields {
            if !known.contains(&k.as_str()) && !CTA.contains(&k.as_str()) {
                let all: Vec<&str> = known.iter().chain(&CTA).copied().collect();
                return Err(self.err(
                    k,
                    format!(
                        "unknown field; #ttg.{} has {}",
                        self.raw.kind,
                        all.join(", ")
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Refuses multi-CTA fields (the F2 issue adds them) and checks their shape otherwise.
    fn check_single_cta(&self, rank: usize) -> Result<()> {
        const LATER: &str = "multi-CTA layouts are imported by the F2 issue (only one CTA here)";
        for key in ["CTAsPerCGA", "CTASplitNum", "CTAOrder"] {
            if self.value(key).is_none() {
                continue;
            }
            let v = self.list(key)?;
            if v.len() != rank {
                return Err(self.err(key, format!("has {} entries, not the rank {rank}", v.len())));
            }
            if key == "CTAOrder" {
                check_order(&v).map_err(|why| self.err(key, why))?;
            } else if let Some(x) = v.iter().find(|&&x| x != 1) {
                return Err(self.err(key, format!("{x} CTAs: {LATER}")));
            }
        }
        match self.value("CGALayout") {
            None => Ok(()),
            Some(AttrValue::List(xs)) if xs.is_empty() => Ok(()),
            Some(AttrValue::Lists(_)) => {
                Err(self.err("CGALayout", format!("block bases: {LATER}")))
            }
            Some(_) => Err(self.err(
                "CGALayout",
                "expected a list of block bases such as [[0, 1]]",
            )),
        }
    }

    /// The linear layout of this attribute on a tensor of `shape`.
    ///
    /// `#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [1, 1],
    /// instrShape = [16, 8]}>` on `[16, 8]` gives `register [[0,1],[8,0]]`,
    /// `lane [[0,2],[0,4],[1,0],[2,0],[4,0]]`, `warp []`, `block []`.
    pub fn to_linear(&self, shape: &[i64]) -> Result<LinearLayout> {
        let shape_log = log2_all(shape).map_err(|why| LayoutError::Shape {
            shape: shape.to_vec(),
            why,
        })?;
        self.check_single_cta(shape.len())?;
        match self.raw.kind.as_str() {
            "blocked" => self.blocked_to_linear(shape, &shape_log),
            "nvidia_mma" => self.mma_to_linear(shape, &shape_log),
            other => Err(self.err("kind", format!("{other} is not supported"))),
        }
    }

    fn blocked_to_linear(&self, shape: &[i64], shape_log: &[u32]) -> Result<LinearLayout> {
        let rank = shape.len();
        let spt = self.pow2_list("sizePerThread", rank, shape)?;
        let tpw = self.pow2_list("threadsPerWarp", rank, shape)?;
        let wpc = self.pow2_list("warpsPerCTA", rank, shape)?;
        let order = self.list("order")?;
        if order.len() != rank {
            return Err(self.err(
                "order",
                format!(
                    "has {} entries but the shape {shape:?} has rank {rank}",
                    order.len()
                ),
            ));
        }
        let order = check_order(&order).map_err(|why| self.err("order", why))?;
        let mut tile = TileBuilder::new(rank);
        for (name, logs) in [("register", &spt), ("lane", &tpw), ("warp", &wpc)] {
            for &d in &order {
                tile.identity(name, d, logs[d])?;
            }
        }
        tile.fit_to_shape(shape_log, &order, Registers::Drop)
    }

    fn mma_to_linear(&self, shape: &[i64], shape_log: &[u32]) -> Result<LinearLayout> {
        let rank = shape.len();
        let major = self.int("versionMajor")?;
        let minor = self.int("versionMinor")?;
        if major != 2 && major != 3 {
            return Err(self.err(
                "versionMajor",
                format!("{major} is not supported: 2 (Ampere mma.sync) and 3 (Hopper wgmma) are"),
            ));
        }
        if minor < 0 {
            return Err(self.err("versionMinor", format!("{minor} is negative")));
        }
        let (instr_len, ranks) = match major {
            2 => (rank, "2, or 3 with a batch dim"),
            _ => (3, "2"),
        };
        if !(rank == 2 || (major == 2 && rank == 3)) {
            return Err(LayoutError::Shape {
                shape: shape.to_vec(),
                why: format!("#ttg.nvidia_mma version {major} tiles tensors of rank {ranks}"),
            });
        }
        let wpc = self.pow2_list("warpsPerCTA", rank, shape)?;
        let instr = self.list("instrShape")?;
        let spelled = match major {
            2 if rank == 3 => "[1, 16, 8]",
            2 => "[16, 8]",
            _ => "[16, N, K]",
        };
        if instr.len() != instr_len {
            return Err(self.err(
                "instrShape",
                format!(
                    "has {} entries; version {major} on rank {rank} has {instr_len} ({spelled})",
                    instr.len()
                ),
            ));
        }
        // The m and n entries: the last two for v2, the first two for v3 (k last).
        let mn = if major == 2 { rank - 2 } else { 0 };
        if major == 2 && rank == 3 && instr[0] != 1 {
            return Err(self.err(
                "instrShape",
                format!("the batch entry is {}, not 1 ({spelled})", instr[0]),
            ));
        }
        let log_of = |i: usize, least: i64, what: &str| -> Result<u32> {
            match log2(instr[i]) {
                Some(l) if instr[i] >= least => Ok(l),
                _ => Err(self.err(
                    "instrShape",
                    format!(
                        "{what} = {} is not a power of two >= {least} ({spelled})",
                        instr[i]
                    ),
                )),
            }
        };
        let m_log = log_of(mn, 16, "m")?;
        let n_log = log_of(mn + 1, 8, "n")?;
        if major == 3 {
            log_of(2, 1, "k")?;
        }
        // One warp's m x n accumulator tile; (m, n) are the last two tensor dims.
        let (m, n) = (rank - 2, rank - 1);
        let mut tile = TileBuilder::new(rank);
        tile.identity("register", n, 1)?;
        tile.identity("lane", n, 2)?;
        tile.identity("lane", m, 3)?;
        tile.identity("register", m, m_log - 3)?;
        tile.identity("register", n, n_log - 3)?;
        let last_first: Vec<usize> = (0..rank).rev().collect();
        let warp_order = if major == 2 {
            last_first.clone()
        } else {
            vec![m, n]
        };
        for &d in &warp_order {
            tile.identity("warp", d, wpc[d])?;
        }
        tile.fit_to_shape(shape_log, &last_first, Registers::Broadcast)
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

    /// Fits the tile to `shape` (log2 per dim): lane, warp and block bases beyond the shape
    /// become zero (broadcast), register bases as `registers` says; a shape larger than the
    /// tile repeats it along registers, dims taken in `repeat_order`.
    pub(crate) fn fit_to_shape(
        mut self,
        shape_log: &[u32],
        repeat_order: &[usize],
        registers: Registers,
    ) -> Result<LinearLayout> {
        for (dim, &want) in shape_log.iter().enumerate() {
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
            let missing = shape_log[dim].saturating_sub(self.out_bits[dim]);
            self.identity("register", dim, missing)?;
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
    fn multi_cta_is_refused_naming_the_f2_issue() {
        let cga = "#ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], CGALayout = [[0, 1], [1, 0]], instrShape = [16, 64, 16]}>";
        assert_eq!(parse_attr(cga).unwrap().to_string(), cga);
        assert!(refusal(cga, &[128, 128], "CGALayout").contains("F2 issue"));
        let split = "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 1], order = [1, 0], CTAsPerCGA = [2, 1], CTASplitNum = [1, 1], CTAOrder = [1, 0]}>";
        assert!(refusal(split, &[64, 64], "CTAsPerCGA").contains("F2 issue"));
        let order = split
            .replace("CTAsPerCGA = [2, 1]", "CTAsPerCGA = [1, 1]")
            .replace("CTAOrder = [1, 0]", "CTAOrder = [1, 1]");
        refusal(&order, &[64, 64], "CTAOrder");
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
        refusal(&MMA2.replace("[16, 8]}", "[8, 8]}"), &[16, 8], "instrShape");
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
