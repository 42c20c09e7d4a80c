//! Gluon's Python layout constructors as text, e.g. `ttgl.BlockedLayout(size_per_thread=[1, 4],
//! threads_per_warp=[8, 4], warps_per_cta=[4, 1], order=[1, 0])`, read into the TTGIR attribute
//! that Gluon itself builds (`#ttg.blocked<{sizePerThread = [1, 4], ...}>`), so both spellings
//! denote the same layout (checked against Triton 3.9 in `layout/tests/triton_gluon_text.rs`).
//!
//! Arguments may be positional (in the dataclass's field order) or keywords; values are
//! integers, `True`/`False`, `None` (the default), lists or tuples, and nested constructors
//! (`parent=ttgl.BlockedLayout(...)`). A module prefix (`ttgl.`, `gl.`, `amd.`, ...) is
//! ignored. Classes: `BlockedLayout` (also Triton 3.3 to 3.5's, with `ctas_per_cga`,
//! `cta_split_num`, `cta_order`, which become the attribute's `CTAsPerCGA`, `CTASplitNum`,
//! `CTAOrder`), `SliceLayout`, `DotOperandLayout`,
//! `NVMMADistributedLayout`, `NVMMASharedLayout`, `SwizzledSharedLayout`,
//! `DistributedLinearLayout`, `AMDMFMALayout`, `AMDWMMALayout`.

use crate::error::{ParseError, Result};
use crate::notation::cursor::Cursor;

const NOTATION: &str = "Gluon layout constructor";

/// A Python value of a constructor argument.
#[derive(Clone, Debug, PartialEq)]
enum Py {
    Int(i64),
    Bool(bool),
    None,
    List(Vec<Py>),
    Call(Call),
}

#[derive(Clone, Debug, PartialEq)]
struct Call {
    class: String,
    /// Where the class name is, for errors.
    span: (usize, usize),
    args: Vec<Py>,
    kwargs: Vec<(String, Py)>,
}

/// Whether `text` looks like a Gluon constructor call (`[module.]NameLayout(`).
pub fn is_gluon(text: &str) -> bool {
    let t = text.trim_start();
    let head: String = t
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '.')
        .collect();
    head.ends_with("Layout") && t[head.len()..].trim_start().starts_with('(')
}

/// The TTGIR attribute text Gluon builds for this constructor, and the shape the constructor
/// itself names (`DistributedLinearLayout(..., shape=[..])`), if any.
pub fn to_mlir(text: &str) -> Result<(String, Option<Vec<i64>>)> {
    let mut c = Cursor::new(text, NOTATION);
    let call = call(&mut c, 0)?;
    c.expect_end("end of the constructor")?;
    let mut shape = None;
    let s = render(&call, &mut c, &mut shape)?;
    Ok((s, shape))
}

fn call(c: &mut Cursor, depth: usize) -> Result<Call, ParseError> {
    if depth > 8 {
        return Err(c.error("at most 8 nested constructors"));
    }
    c.skip_ws();
    let start = c.pos();
    let mut class = c
        .ident("a layout class such as ttgl.BlockedLayout")?
        .to_string();
    while c.eat(".") {
        class = c.ident("a name after '.'")?.to_string();
    }
    let span = (start, c.pos());
    c.expect("(")?;
    let mut args = Vec::new();
    let mut kwargs: Vec<(String, Py)> = Vec::new();
    if !c.eat(")") {
        loop {
            let mut probe = c.clone();
            let key = probe.ident("").ok().map(str::to_string);
            let keyword = key.filter(|k| {
                probe.eat("=")
                    && !probe.rest().starts_with('=')
                    && !matches!(k.as_str(), "True" | "False" | "None")
            });
            if let Some(k) = keyword {
                let at = c.pos();
                *c = probe;
                if kwargs.iter().any(|(x, _)| *x == k) {
                    return Err(c.error_at(
                        at,
                        at + k.len(),
                        format!("a new keyword ({k} is given twice)"),
                    ));
                }
                kwargs.push((k, value(c, depth)?));
            } else {
                if !kwargs.is_empty() {
                    return Err(c.error("a keyword argument (positional arguments come first)"));
                }
                args.push(value(c, depth)?);
            }
            if c.eat(")") {
                break;
            }
            c.expect(",").map_err(|_| c.error("',' or ')'"))?;
            if c.eat(")") {
                break;
            }
        }
    }
    Ok(Call {
        class,
        span,
        args,
        kwargs,
    })
}

fn value(c: &mut Cursor, depth: usize) -> Result<Py, ParseError> {
    c.skip_ws();
    if depth > 16 {
        return Err(c.error("values nested at most 16 deep"));
    }
    for (open, close) in [("[", "]"), ("(", ")")] {
        if c.eat(open) {
            let mut xs = Vec::new();
            if c.eat(close) {
                return Ok(Py::List(xs));
            }
            loop {
                if xs.len() >= 1 << 16 {
                    return Err(c.error("a list of at most 65536 entries"));
                }
                xs.push(value(c, depth + 1)?);
                if c.eat(close) {
                    return Ok(Py::List(xs));
                }
                c.expect(",")
                    .map_err(|_| c.error(format!("',' or '{close}'")))?;
                if c.eat(close) {
                    return Ok(Py::List(xs));
                }
            }
        }
    }
    for (word, v) in [
        ("True", Py::Bool(true)),
        ("False", Py::Bool(false)),
        ("None", Py::None),
    ] {
        let mut probe = c.clone();
        if probe.ident("").ok() == Some(word) {
            *c = probe;
            return Ok(v);
        }
    }
    if matches!(c.peek(), Some(ch) if ch.is_ascii_alphabetic() || ch == '_') {
        let mut probe = c.clone();
        if probe.ident("").is_ok() && probe.peek() == Some('[') {
            // `S[(8,8):(8,1)]` is TIRx's Axe shard, not a Gluon value.
            return Err(c.error(
                "a Gluon argument (an integer, a list, a layout constructor); S[..] is an Axe \
                 shard, which TIRx wraps as TileLayout(S[..])",
            ));
        }
        return Ok(Py::Call(call(c, depth + 1)?));
    }
    Ok(Py::Int(c.int(false)?))
}

/// The class whose fields a call fills: its own name, except for a `BlockedLayout` written
/// with Triton 3.3 to 3.5's CTA fields (`ctas_per_cga=`, `cta_split_num=`, `cta_order=`, or
/// positionally: more than 5 arguments, or a flat list of integers 5th).
fn signature(call: &Call) -> &str {
    if call.class != "BlockedLayout" {
        return &call.class;
    }
    let old_keyword = call
        .kwargs
        .iter()
        .any(|(k, _)| matches!(k.as_str(), "ctas_per_cga" | "cta_split_num" | "cta_order"));
    let old_positional = call.args.len() > 5
        || call.args.get(4).is_some_and(
            |a| matches!(a, Py::List(xs) if xs.iter().any(|x| matches!(x, Py::Int(_)))),
        );
    if old_keyword || old_positional {
        "BlockedLayout(ctas_per_cga)"
    } else {
        &call.class
    }
}

/// The values Triton 3.3 to 3.5's `BlockedLayout._to_ir` passes for CTA fields left out
/// (`ctas_per_cga or [1] * rank`, `cta_split_num or [1] * rank`, `cta_order or
/// list(reversed(range(rank)))`) when any is given, since they are not the TTGIR attribute's
/// defaults (a missing `CTASplitNum` there is `CTAsPerCGA`). `values` are the call's fields in
/// order; `None` where none is given or the rank is unknown.
fn old_cta_defaults(values: &[Option<&Py>]) -> [Option<Py>; 3] {
    let given = values[4..7]
        .iter()
        .any(|v| matches!(v, Some(p) if !matches!(p, Py::None)));
    let rank = values[0].and_then(ints).map(|v| v.len() as i64);
    let (true, Some(rank)) = (given, rank) else {
        return [None, None, None];
    };
    let list = |xs: Vec<i64>| Some(Py::List(xs.into_iter().map(Py::Int).collect()));
    [
        list(vec![1; rank as usize]),
        list(vec![1; rank as usize]),
        list((0..rank).rev().collect()),
    ]
}

/// A class: its Gluon fields in order, each with the TTGIR field it becomes (`""`: handled by
/// hand) and whether it may be left out.
struct Class {
    kind: &'static str,
    fields: &'static [(&'static str, &'static str, bool)],
}

fn class(name: &str) -> Option<Class> {
    let (kind, fields): (&str, &[(&str, &str, bool)]) = match name {
        "BlockedLayout" => (
            "blocked",
            &[
                ("size_per_thread", "sizePerThread", false),
                ("threads_per_warp", "threadsPerWarp", false),
                ("warps_per_cta", "warpsPerCTA", false),
                ("order", "order", false),
                ("cga_layout", "CGALayout", true),
            ],
        ),
        // Triton 3.3 to 3.5's BlockedLayout, whose CTA fields became `cga_layout` in 3.6.
        "BlockedLayout(ctas_per_cga)" => (
            "blocked",
            &[
                ("size_per_thread", "sizePerThread", false),
                ("threads_per_warp", "threadsPerWarp", false),
                ("warps_per_cta", "warpsPerCTA", false),
                ("order", "order", false),
                ("ctas_per_cga", "CTAsPerCGA", true),
                ("cta_split_num", "CTASplitNum", true),
                ("cta_order", "CTAOrder", true),
            ],
        ),
        "SliceLayout" => (
            "slice",
            &[("dim", "dim", false), ("parent", "parent", false)],
        ),
        "DotOperandLayout" => (
            "dot_op",
            &[
                ("operand_index", "opIdx", false),
                ("parent", "parent", false),
                ("k_width", "kWidth", false),
            ],
        ),
        "NVMMADistributedLayout" => (
            "nvidia_mma",
            &[
                ("version", "", false),
                ("warps_per_cta", "warpsPerCTA", false),
                ("instr_shape", "instrShape", false),
                ("cga_layout", "CGALayout", true),
            ],
        ),
        "NVMMASharedLayout" => (
            "nvmma_shared",
            &[
                ("swizzle_byte_width", "swizzlingByteWidth", false),
                ("element_bitwidth", "elementBitWidth", false),
                ("rank", "rank", true),
                ("transposed", "transposed", true),
                ("fp4_padded", "fp4Padded", true),
                ("cga_layout", "CGALayout", true),
            ],
        ),
        "SwizzledSharedLayout" => (
            "swizzled_shared",
            &[
                ("vec", "vec", false),
                ("per_phase", "perPhase", false),
                ("max_phase", "maxPhase", false),
                ("order", "order", false),
                ("cga_layout", "CGALayout", true),
            ],
        ),
        "DistributedLinearLayout" => (
            "linear",
            &[
                ("reg_bases", "register", false),
                ("lane_bases", "lane", false),
                ("warp_bases", "warp", false),
                ("block_bases", "block", false),
                ("shape", "", false),
            ],
        ),
        "AMDMFMALayout" => (
            "amd_mfma",
            &[
                ("version", "version", false),
                ("instr_shape", "instrShape", false),
                ("transposed", "isTransposed", false),
                ("warps_per_cta", "warpsPerCTA", false),
                ("element_bitwidth", "elementBitWidth", true),
                ("tiles_per_warp", "tilesPerWarp", true),
                ("cga_layout", "CGALayout", true),
            ],
        ),
        "AMDWMMALayout" => (
            "amd_wmma",
            &[
                ("version", "version", false),
                ("transposed", "isTranspose", false),
                ("warp_bases", "", false),
                ("reg_bases", "", true),
                ("instr_shape", "instrShape", true),
                ("cga_layout", "CGALayout", true),
                ("rank", "", true),
            ],
        ),
        _ => return None,
    };
    Some(Class { kind, fields })
}

const CLASSES: &str = "BlockedLayout, SliceLayout, DotOperandLayout, NVMMADistributedLayout, \
                       NVMMASharedLayout, SwizzledSharedLayout, DistributedLinearLayout, \
                       AMDMFMALayout, AMDWMMALayout";

/// `[1, 2]`, `[[1, 0], [0, 1]]`, `true`; a nested constructor as its attribute.
fn py_text(v: &Py, c: &mut Cursor) -> Result<String> {
    Ok(match v {
        Py::Int(x) => x.to_string(),
        Py::Bool(b) => b.to_string(),
        Py::None => return Err(c.error("a value other than None here").into()),
        Py::List(xs) => {
            let parts: Result<Vec<String>> = xs.iter().map(|x| py_text(x, c)).collect();
            format!("[{}]", parts?.join(", "))
        }
        Py::Call(inner) => render(inner, c, &mut None)?,
    })
}

fn ints(v: &Py) -> Option<Vec<i64>> {
    match v {
        Py::List(xs) => xs
            .iter()
            .map(|x| match x {
                Py::Int(i) => Some(*i),
                _ => None,
            })
            .collect(),
        _ => None,
    }
}

/// The attribute text of one constructor call.
fn render(call: &Call, c: &mut Cursor, shape: &mut Option<Vec<i64>>) -> Result<String> {
    let (s, e) = call.span;
    let Some(cls) = class(signature(call)) else {
        return Err(c
            .error_at(
                s,
                e,
                format!("a Gluon layout class ({CLASSES}), not {}", call.class),
            )
            .into());
    };
    if call.args.len() > cls.fields.len() {
        return Err(c
            .error_at(
                s,
                e,
                format!("at most {} arguments to {}", cls.fields.len(), call.class),
            )
            .into());
    }
    // Each field's value: positional first, then keywords.
    let cta_defaults: [Option<Py>; 3];
    let mut values: Vec<Option<&Py>> = vec![None; cls.fields.len()];
    for (i, a) in call.args.iter().enumerate() {
        values[i] = Some(a);
    }
    for (k, v) in &call.kwargs {
        let Some(i) = cls.fields.iter().position(|(g, _, _)| g == k) else {
            let names: Vec<&str> = cls.fields.iter().map(|(g, _, _)| *g).collect();
            let old = if call.class == "BlockedLayout" && cls.fields.len() == 5 {
                "; Triton 3.3 to 3.5 had ctas_per_cga, cta_split_num, cta_order for cga_layout"
            } else {
                ""
            };
            return Err(c
                .error_at(
                    s,
                    e,
                    format!(
                        "{}'s arguments ({}{old}), not {k}",
                        call.class,
                        names.join(", ")
                    ),
                )
                .into());
        };
        if values[i].is_some() {
            return Err(c
                .error_at(
                    s,
                    e,
                    format!("{k} given once ({} has it positionally too)", call.class),
                )
                .into());
        }
        values[i] = Some(v);
    }
    if cls.fields.iter().any(|(g, _, _)| *g == "ctas_per_cga") {
        cta_defaults = old_cta_defaults(&values);
        for (i, d) in cta_defaults.iter().enumerate() {
            let slot = &mut values[4 + i];
            if matches!(slot, None | Some(Py::None)) {
                *slot = d.as_ref();
            }
        }
    }
    let mut out: Vec<String> = Vec::new();
    let mut wmma_dict: Vec<String> = Vec::new();
    for (i, &(gluon, mlir, optional)) in cls.fields.iter().enumerate() {
        let v = match values[i] {
            Some(Py::None) | None if optional => continue,
            Some(v) => v,
            None => {
                return Err(c
                    .error_at(s, e, format!("{} needs its argument {gluon}", call.class))
                    .into())
            }
        };
        // Empty CGA bases and a blocked parent's k_width = 0 are what Gluon leaves out.
        if gluon == "cga_layout" && matches!(v, Py::List(xs) if xs.is_empty()) {
            continue;
        }
        match (cls.kind, gluon) {
            ("nvidia_mma", "version") => {
                let Some([major, minor]) = ints(v).and_then(|x| <[i64; 2]>::try_from(x).ok())
                else {
                    return Err(c.error_at(s, e, "version=[major, minor]").into());
                };
                out.push(format!("versionMajor = {major}, versionMinor = {minor}"));
            }
            ("dot_op", "k_width") if matches!(v, Py::Int(0)) => {}
            ("linear", "shape") => {
                *shape = Some(ints(v).ok_or_else(|| c.error_at(s, e, "shape=[..] of integers"))?);
            }
            ("amd_wmma", "warp_bases" | "reg_bases") => {
                let key = if gluon == "warp_bases" {
                    "warp"
                } else {
                    "register"
                };
                if !matches!(v, Py::List(xs) if xs.is_empty()) || key == "warp" {
                    wmma_dict.push(format!("{key} = {}", py_text(v, c)?));
                }
            }
            ("amd_wmma", "rank") => {}
            _ => out.push(format!("{mlir} = {}", py_text(v, c)?)),
        }
    }
    if cls.kind == "amd_wmma" {
        // Gluon prints register bases before warp bases.
        wmma_dict.reverse();
        out.insert(2, format!("ctaLayout = {{{}}}", wmma_dict.join(", ")));
    }
    Ok(format!("#ttg.{}<{{{}}}>", cls.kind, out.join(", ")))
}
