//! TVM data-layout strings: `"NCHW16c"`, `"OIHW4i16o"`, read as an Axe layout on the flattened
//! buffer (axis `m`) through the index map they stand for.
//!
//! Sources: TVM's `s_tir.slayout` / `s_tir.sbijective_layout` (formerly `tir.layout` /
//! `tir.bijective_layout`; `src/s_tir/data_layout.cc`, apache-tvm 0.27), what Relay's
//! `layout_transform(x, src_layout="NCHW", dst_layout="NCHW16c")` and convolution attributes
//! (`data_layout="NCHW16c"`) name. The rules read here, each checked against TVM 0.27 (the
//! oracle data `tests/data/tvm/data_layout.jsonl`):
//!
//! 1. A layout string is a sequence of axes. An upper-case letter is a *primal* axis (`C`, the
//!    channel), digits then a lower-case letter a *subordinate* axis with that factor (`16c`: the
//!    channel's innermost 16). TVM refuses a factor before a primal axis (`NC4HW`), a
//!    subordinate without a factor (`NCHWc`) or with factor 0, a second subordinate of one axis
//!    (`NCHW4c2c`), a repeated axis, and a subordinate whose primal axis is absent (`NCH16w`).
//! 2. `bijective_layout(src, dst)` maps an index of a `src` buffer to an index of a `dst`
//!    buffer, both sets of primal axes being the same: each primal coordinate is
//!    `X * f + x` in `src` (or `X` where `src` has no `x`), and in `dst` it is split again,
//!    `X' = X // f'`, `x' = X % f'`. `forward_shape` pads (`ceil`) where a primal extent is no
//!    multiple of the new factor: laycert refuses that case, naming the axis (a padded buffer
//!    is no strided layout of the logical one).
//! 3. A layout alone (`layout("NCHW16c")`, `data_layout="NCHW16c"`) is the map from its primal
//!    axes, in the order they appear (`NCHW`), to itself.
//!
//! The result is the [`super::tvm`] index map with the transformed buffer's shape given, so it
//! is read, checked at the corners and sampled coordinates, and refused exactly as a pasted
//! `transform_layout` map. Worked example (a test checks it): `NCHW -> NCHW16c` on
//! `(2, 32, 3, 3)` is `lambda N, C, H, W: (N, C // 16, H, W, C % 16)` on the physical shape
//! `(2, 2, 3, 3, 16)`, the Axe layout `S[(2,2,16,3,3):(288,144,1,48,16)]`.
//!
//! Forms read (Python comments ignored): `bijective_layout("NCHW", "NCHW16c")` (any dotted
//! prefix, `sbijective_layout` too), `layout("NCHW16c")` (`slayout`), and
//! `layout_transform(x, src_layout="NCHW", dst_layout="NCHW16c")`. The logical shape is
//! `--shape`, one extent per axis of the source layout.

use super::cursor::{dotted, without_python_comments, Cursor};
use super::tvm::{Expr, IndexMap, Lambda, Op};
use crate::arith;
use crate::axe::AxeLayout;
use crate::error::{LayoutError, Result};

const NOTATION: &str = "TVM data layout";

/// Most axes of a layout string (TVM's own limit is the 26 letters, twice).
const MAX_AXES: usize = 16;

/// One axis of a layout string.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LayoutAxis {
    /// `C`: a primal axis, its upper-case letter.
    Primal(u8),
    /// `16c`: the innermost `factor` of the primal axis named by the upper-case `letter`.
    Sub {
        /// The primal axis's upper-case letter.
        letter: u8,
        /// The factor.
        factor: i64,
    },
}

impl LayoutAxis {
    fn letter(self) -> u8 {
        match self {
            LayoutAxis::Primal(l) | LayoutAxis::Sub { letter: l, .. } => l,
        }
    }

    /// What makes two axes the same axis: their kind and letter (`16c` and `4c` clash).
    fn key(self) -> (bool, u8) {
        (matches!(self, LayoutAxis::Sub { .. }), self.letter())
    }

    /// The name TVM's index maps give the axis's variable (`C`, `c`).
    fn name(self) -> String {
        match self {
            LayoutAxis::Primal(l) => char::from(l).to_string(),
            LayoutAxis::Sub { letter, .. } => char::from(letter.to_ascii_lowercase()).to_string(),
        }
    }
}

/// A parsed layout string.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DataLayout {
    /// The string as written.
    pub text: String,
    /// Its axes, outermost first.
    pub axes: Vec<LayoutAxis>,
}

impl DataLayout {
    /// Reads a layout string by TVM's rules (module doc, rule 1).
    pub fn parse(text: &str) -> Result<DataLayout> {
        let bad = |why: String| LayoutError::invalid(NOTATION, format!("{text:?}: {why}"));
        if text.is_empty() {
            return Err(bad(
                "an empty layout (TVM's undefined layout has no axes)".into()
            ));
        }
        let mut axes = Vec::new();
        let mut factor: Option<i64> = None;
        for (i, ch) in text.bytes().enumerate() {
            match ch {
                b'0'..=b'9' => {
                    let d = i64::from(ch - b'0');
                    let f = factor
                        .unwrap_or(0)
                        .checked_mul(10)
                        .and_then(|f| f.checked_add(d))
                        .filter(|&f| f <= i64::from(i32::MAX))
                        .ok_or_else(|| {
                            bad(format!(
                                "the factor at byte {i} is above {} (TVM keeps factors in int32)",
                                i32::MAX
                            ))
                        })?;
                    factor = Some(f);
                }
                b'A'..=b'Z' => {
                    if let Some(f) = factor {
                        return Err(bad(format!(
                            "a factor ({f}) before the primal axis {} (a factor names a \
                             subordinate axis, a lower-case letter: `{f}{}`)",
                            char::from(ch),
                            char::from(ch.to_ascii_lowercase())
                        )));
                    }
                    axes.push(LayoutAxis::Primal(ch));
                }
                b'a'..=b'z' => {
                    let letter = ch.to_ascii_uppercase();
                    match factor.take() {
                        Some(f) if f > 0 => axes.push(LayoutAxis::Sub { letter, factor: f }),
                        _ => {
                            return Err(bad(format!(
                                "the subordinate axis {} needs a factor of at least 1 before \
                                 it (`16{}`)",
                                char::from(ch),
                                char::from(ch)
                            )))
                        }
                    }
                }
                _ => {
                    return Err(bad(format!(
                        "{:?} at byte {i}: a layout is upper-case primal axes and factors \
                         with lower-case subordinate axes (`NCHW16c`)",
                        char::from(ch)
                    )))
                }
            }
            if axes.len() > MAX_AXES {
                return Err(bad(format!("more than {MAX_AXES} axes")));
            }
        }
        if let Some(f) = factor {
            return Err(bad(format!(
                "it ends in the factor {f}, with no subordinate axis after it"
            )));
        }
        for (k, a) in axes.iter().enumerate() {
            if axes[..k].iter().any(|b| b.key() == a.key()) {
                return Err(bad(format!(
                    "the axis {} appears twice (TVM allows one primal and one subordinate axis \
                     per letter)",
                    a.name()
                )));
            }
            if let LayoutAxis::Sub { letter, .. } = a {
                if !axes.contains(&LayoutAxis::Primal(*letter)) {
                    return Err(bad(format!(
                        "the subordinate axis {} has no primal axis {}",
                        a.name(),
                        char::from(*letter)
                    )));
                }
            }
        }
        Ok(DataLayout {
            text: text.to_string(),
            axes,
        })
    }

    /// The layout of the primal axes alone, in the order they appear (`NCHW16c` -> `NCHW`).
    pub fn primal(&self) -> DataLayout {
        let axes: Vec<LayoutAxis> = self
            .axes
            .iter()
            .copied()
            .filter(|a| matches!(a, LayoutAxis::Primal(_)))
            .collect();
        let text = axes.iter().map(|a| a.name()).collect();
        DataLayout { text, axes }
    }

    fn sub_factor(&self, letter: u8) -> Option<i64> {
        self.axes.iter().find_map(|a| match *a {
            LayoutAxis::Sub { letter: l, factor } if l == letter => Some(factor),
            _ => None,
        })
    }

    fn primals(&self) -> Vec<u8> {
        let mut p: Vec<u8> = self
            .axes
            .iter()
            .filter_map(|a| match a {
                LayoutAxis::Primal(l) => Some(*l),
                LayoutAxis::Sub { .. } => None,
            })
            .collect();
        p.sort_unstable();
        p
    }
}

/// `bijective_layout(src, dst)`: TVM's index map from a `src` buffer's index to a `dst`
/// buffer's, with the `dst` buffer's shape, on the `src` buffer of shape `shape` (module doc,
/// rule 2).
pub fn index_map(src: &DataLayout, dst: &DataLayout, shape: &[i64]) -> Result<IndexMap> {
    let bad = |why: String| {
        LayoutError::invalid(NOTATION, format!("{:?} -> {:?}: {why}", src.text, dst.text))
    };
    if src.primals() != dst.primals() {
        return Err(bad(
            "the two layouts have different primal axes (a layout transform keeps them)".into(),
        ));
    }
    if shape.len() != src.axes.len() {
        return Err(bad(format!(
            "the shape {shape:?} has {} extents, where {:?} has {} axes",
            shape.len(),
            src.text,
            src.axes.len()
        )));
    }
    // Each primal axis's full extent, and its coordinate as an expression of src's indices.
    let mut extent = [0i64; 26];
    let mut coord: Vec<Option<Expr>> = vec![None; 26];
    for (k, a) in src.axes.iter().enumerate() {
        if shape[k] < 1 {
            return Err(bad(format!(
                "the extent {} of axis {} is below 1",
                shape[k],
                a.name()
            )));
        }
        if let LayoutAxis::Sub { factor, .. } = *a {
            if shape[k] != factor {
                return Err(bad(format!(
                    "the subordinate axis {} has the extent {} in the shape, where its factor \
                     is {factor}",
                    a.name(),
                    shape[k]
                )));
            }
        }
    }
    for (k, a) in src.axes.iter().enumerate() {
        if let LayoutAxis::Primal(l) = *a {
            let i = usize::from(l - b'A');
            let sub = src
                .axes
                .iter()
                .position(|b| matches!(b, LayoutAxis::Sub { letter, .. } if *letter == l));
            let (e, x) = match sub {
                None => (shape[k], Expr::Var(k)),
                Some(s) => {
                    let f = shape[s];
                    (
                        arith::mul(shape[k], f, "a primal axis's extent")?,
                        Expr::Bin(
                            Op::Add,
                            Box::new(Expr::Bin(
                                Op::Mul,
                                Box::new(Expr::Var(k)),
                                Box::new(Expr::Const(f)),
                            )),
                            Box::new(Expr::Var(s)),
                        ),
                    )
                }
            };
            extent[i] = e;
            coord[i] = Some(x);
        }
    }
    let mut outputs = Vec::new();
    let mut physical = Vec::new();
    for a in &dst.axes {
        let i = usize::from(a.letter() - b'A');
        let x = coord[i].clone().expect("the primal axes agree");
        match (*a, dst.sub_factor(a.letter())) {
            (LayoutAxis::Primal(_), None) => {
                outputs.push(x);
                physical.push(extent[i]);
            }
            (LayoutAxis::Primal(l), Some(f))
            | (
                LayoutAxis::Sub {
                    letter: l,
                    factor: f,
                },
                _,
            ) => {
                if extent[i] % f != 0 {
                    return Err(bad(format!(
                        "the axis {} has the extent {}, no multiple of the factor {f} of {}{}: \
                         TVM pads it to {}, and a padded buffer is no strided layout of the \
                         logical one",
                        char::from(l),
                        extent[i],
                        f,
                        char::from(l.to_ascii_lowercase()),
                        (extent[i] / f + 1) * f
                    )));
                }
                let (op, e) = if matches!(a, LayoutAxis::Primal(_)) {
                    (Op::FloorDiv, extent[i] / f)
                } else {
                    (Op::FloorMod, f)
                };
                outputs.push(Expr::Bin(op, Box::new(x), Box::new(Expr::Const(f))));
                physical.push(e);
            }
        }
    }
    Ok(IndexMap {
        map: Lambda {
            params: src.axes.iter().map(|a| a.name()).collect(),
            outputs,
        },
        inverse: None,
        logical: None,
        physical: Some(physical),
    })
}

/// Whether `text` is a data-layout form this module reads: a call of `bijective_layout`,
/// `layout` (with their `s` prefixed names) or `layout_transform(.., src_layout=..)`, whose
/// layouts are string literals.
pub fn is_data_layout(text: &str) -> bool {
    find_call(&without_python_comments(text)).is_some()
}

/// The source and destination layout strings of the call in `text` (the source empty for a
/// layout alone), and the text after the call, when there is one.
fn find_call(text: &str) -> Option<(String, String, String)> {
    let t = text.trim();
    let mut c = Cursor::new(t, NOTATION);
    let name = dotted(&mut c).ok()?;
    let callee = name.rsplit('.').next().unwrap_or(name);
    if !c.eat("(") {
        return None;
    }
    let args = call_args(&mut c)?;
    let string = |v: &str| -> Option<String> {
        let v = v.trim();
        let q = v.chars().next().filter(|q| *q == '"' || *q == '\'')?;
        let inner = v.strip_prefix(q)?.strip_suffix(q)?;
        (!inner.is_empty() && inner.bytes().all(|b| b.is_ascii_alphanumeric()))
            .then(|| inner.to_string())
    };
    let keyword = |key: &str| -> Option<String> {
        args.iter()
            .find_map(|(k, v)| (k.as_deref() == Some(key)).then(|| string(v)).flatten())
    };
    let positional: Vec<Option<String>> = args
        .iter()
        .filter(|(k, _)| k.is_none())
        .map(|(_, v)| string(v))
        .collect();
    let found = match callee {
        "bijective_layout" | "sbijective_layout" => match positional.as_slice() {
            [Some(s), Some(d)] => Some((s.clone(), d.clone())),
            _ => keyword("src_layout").zip(keyword("dst_layout")),
        },
        "layout" | "slayout" => match positional.as_slice() {
            [Some(l)] | [Some(l), _] => Some((String::new(), l.clone())),
            _ => keyword("layout_str").map(|l| (String::new(), l)),
        },
        "layout_transform" => keyword("src_layout").zip(keyword("dst_layout")),
        _ => None,
    };
    Some(found?).map(|(src, dst)| (src, dst, c.rest().trim().to_string()))
}

/// The arguments of a call whose `(` has been read, as (keyword, value text), through the
/// closing `)`; `None` when they do not close.
fn call_args(c: &mut Cursor) -> Option<Vec<(Option<String>, String)>> {
    let mut args = Vec::new();
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    let mut current = String::new();
    for ch in c.rest().chars() {
        c.seek(c.pos() + ch.len_utf8());
        match (quote, ch) {
            (Some(q), _) if ch == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(ch),
            (None, '(' | '[' | '{') => depth += 1,
            (None, ')') if depth == 0 => {
                if !current.trim().is_empty() {
                    args.push(split_keyword(&current));
                }
                return Some(args);
            }
            (None, ')' | ']' | '}') => depth = depth.checked_sub(1)?,
            (None, ',') if depth == 0 => {
                args.push(split_keyword(&current));
                current.clear();
                continue;
            }
            _ => {}
        }
        current.push(ch);
    }
    None
}

/// `key=value` into its keyword and value (a comparison `a == b` is no keyword).
fn split_keyword(arg: &str) -> (Option<String>, String) {
    let arg = arg.trim();
    if let Some((k, v)) = arg.split_once('=') {
        let k = k.trim();
        if !v.starts_with('=')
            && !k.is_empty()
            && k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        {
            return (Some(k.to_string()), v.trim().to_string());
        }
    }
    (None, arg.to_string())
}

/// Reads the text (module doc: the forms) and gives its Axe layout on the source buffer of
/// shape `shape`.
pub fn parse_layout(text: &str, shape: Option<&[i64]>) -> Result<AxeLayout> {
    let clean = without_python_comments(text);
    let Some((src, dst, rest)) = find_call(&clean) else {
        return Err(LayoutError::invalid(
            NOTATION,
            "no layout call: bijective_layout(\"NCHW\", \"NCHW16c\"), layout(\"NCHW16c\") or \
             layout_transform(x, src_layout=\"NCHW\", dst_layout=\"NCHW16c\")",
        ));
    };
    if !rest.is_empty() {
        return Err(LayoutError::invalid(
            NOTATION,
            format!(
                "text after the call: {:?}",
                rest.chars().take(40).collect::<String>()
            ),
        ));
    }
    let dst = DataLayout::parse(&dst)?;
    let src = if src.is_empty() {
        dst.primal()
    } else {
        DataLayout::parse(&src)?
    };
    let shape = shape.ok_or_else(|| {
        LayoutError::invalid(
            NOTATION,
            format!(
                "{:?} -> {:?} needs the source buffer's shape, one extent per axis of {:?} \
                 (--shape)",
                src.text, dst.text, src.text
            ),
        )
    })?;
    index_map(&src, &dst, shape)?.to_axe(Some(shape))
}
