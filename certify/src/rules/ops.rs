//! The operators a rule term may apply, each a call into `layout`'s algebra. An operator that
//! fails on an instance (a composition whose divisibility condition is violated, a grouping that
//! does not exist) leaves that side UNDEFINED there, with `layout`'s reason: this is part of the
//! semantics a rule is proved against.

use layout::axe::{self, AxeLayout};
use layout::convert::{convert, Target};
use layout::cute::{self, CuteLayout};
use layout::{Layout, LayoutError, SwizzledLayout};

/// The kind of one operator argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgKind {
    /// A layout term.
    Term,
    /// An integer expression.
    Int,
    /// A shape `[..]`.
    Shape,
    /// A region `[(b,e), ..]`.
    Region,
}

use ArgKind::{Int, Region, Shape, Term};

/// Every operator: name, argument kinds, and what it computes.
pub const OPERATORS: &[(&str, &[ArgKind], &str)] = &[
    (
        "compose",
        &[Term, Term],
        "CuTe A o B (A may be swizzled: Sw o (A o B))",
    ),
    ("coalesce", &[Term], "CuTe coalesce"),
    ("complement", &[Term, Int], "CuTe complement(A, M)"),
    ("logical_divide", &[Term, Term], "CuTe logical_divide"),
    ("zipped_divide", &[Term, Term], "CuTe zipped_divide"),
    ("tiled_divide", &[Term, Term], "CuTe tiled_divide"),
    ("flat_divide", &[Term, Term], "CuTe flat_divide"),
    ("logical_product", &[Term, Term], "CuTe logical_product"),
    ("zipped_product", &[Term, Term], "CuTe zipped_product"),
    ("tiled_product", &[Term, Term], "CuTe tiled_product"),
    ("blocked_product", &[Term, Term], "CuTe blocked_product"),
    ("raked_product", &[Term, Term], "CuTe raked_product"),
    ("right_inverse", &[Term], "CuTe right_inverse"),
    ("left_inverse", &[Term], "CuTe left_inverse"),
    ("flatten", &[Term], "CuTe flatten"),
    ("make_layout", &[Term, Term], "CuTe (A, B) as two modes"),
    (
        "recast",
        &[Term, Int, Int],
        "CuTe or swizzled recast(L, from_bits, to_bits)",
    ),
    (
        "swizzle",
        &[Int, Int, Int, Term],
        "Sw<B,M,S> o L (an Axe L converted exactly to CuTe)",
    ),
    ("canonicalize", &[Term], "Axe canonical form"),
    ("group", &[Term, Shape], "Axe group by a shape"),
    (
        "tile",
        &[Term, Shape, Term, Shape],
        "Axe tile(inner, inner_shape, outer, outer_shape)",
    ),
    (
        "direct_sum",
        &[Term, Shape, Term, Shape],
        "Axe direct_sum(a, a_shape, b, b_shape)",
    ),
    (
        "slice",
        &[Term, Shape, Region],
        "Axe slice(L, shape, region)",
    ),
    ("to_axe", &[Term], "exact conversion to Axe"),
    ("to_cute", &[Term], "exact conversion to CuTe"),
    (
        "to_linear",
        &[Term],
        "exact conversion to an F2 linear layout",
    ),
    (
        "f2_compose",
        &[Term, Term],
        "F2 A o B (both converted to linear layouts; B's out-dims are A's in-dims)",
    ),
    (
        "f2_invert_compose",
        &[Term, Term],
        "F2 B^-1 o A (Triton's invert_and_compose)",
    ),
    (
        "f2_right_inverse",
        &[Term],
        "F2 right inverse (free variables 0)",
    ),
    (
        "f2_identity",
        &[Term],
        "the identity F2 map on the term's out-dims",
    ),
    (
        "swizzle_map",
        &[Int, Int, Int, Int],
        "Sw<B,M,S> as an F2 map offset -> offset on N bits",
    ),
];

/// The argument kinds of `name`, if it is an operator.
pub fn signature(name: &str) -> Option<&'static [ArgKind]> {
    OPERATORS
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|(_, k, _)| *k)
}

/// An evaluated operator argument.
#[derive(Clone, Debug)]
pub enum Value {
    /// A layout.
    Layout(Layout),
    /// An integer.
    Int(i64),
    /// A shape.
    Shape(Vec<i64>),
    /// A region.
    Region(Vec<(i64, i64)>),
}

fn cute_of<'a>(op: &str, v: &'a Value) -> Result<&'a CuteLayout, LayoutError> {
    match v {
        Value::Layout(Layout::Cute(c)) => Ok(c),
        other => Err(wrong(op, "a CuTe layout", other)),
    }
}

fn axe_of<'a>(op: &str, v: &'a Value) -> Result<&'a AxeLayout, LayoutError> {
    match v {
        Value::Layout(Layout::Axe(a)) => Ok(a),
        other => Err(wrong(op, "an Axe layout", other)),
    }
}

fn int_of(op: &str, v: &Value) -> Result<i64, LayoutError> {
    match v {
        Value::Int(i) => Ok(*i),
        other => Err(wrong(op, "an integer", other)),
    }
}

fn shape_of<'a>(op: &str, v: &'a Value) -> Result<&'a [i64], LayoutError> {
    match v {
        Value::Shape(s) => Ok(s),
        other => Err(wrong(op, "a shape", other)),
    }
}

fn wrong(op: &str, want: &str, got: &Value) -> LayoutError {
    let got = match got {
        Value::Layout(l) => format!("{} layout {}", l.notation().name(), l.print()),
        Value::Int(i) => format!("integer {i}"),
        Value::Shape(s) => format!("shape {s:?}"),
        Value::Region(r) => format!("region {r:?}"),
    };
    LayoutError::invalid(
        format!("argument of {op}"),
        format!("needs {want}, got {got}"),
    )
}

/// Applies operator `op` to evaluated arguments (kinds already checked by the parser).
pub fn apply(op: &str, a: &[Value]) -> Result<Layout, LayoutError> {
    let c = |i: usize| cute_of(op, &a[i]);
    let x = |i: usize| axe_of(op, &a[i]);
    let cute2 = |f: fn(&CuteLayout, &CuteLayout) -> layout::Result<CuteLayout>| {
        Ok::<_, LayoutError>(Layout::Cute(f(c(0)?, c(1)?)?))
    };
    Ok(match op {
        "compose" => match &a[0] {
            Value::Layout(Layout::Swizzled(s)) => {
                Layout::Swizzled(cute::composition_swizzled(s, c(1)?)?)
            }
            _ => Layout::Cute(cute::composition(c(0)?, c(1)?)?),
        },
        "coalesce" => Layout::Cute(cute::coalesce(c(0)?)),
        "complement" => Layout::Cute(cute::complement(c(0)?, int_of(op, &a[1])?)?),
        "logical_divide" => cute2(cute::logical_divide)?,
        "zipped_divide" => cute2(cute::zipped_divide)?,
        "tiled_divide" => cute2(cute::tiled_divide)?,
        "flat_divide" => cute2(cute::flat_divide)?,
        "logical_product" => cute2(cute::logical_product)?,
        "zipped_product" => cute2(cute::zipped_product)?,
        "tiled_product" => cute2(cute::tiled_product)?,
        "blocked_product" => cute2(cute::blocked_product)?,
        "raked_product" => cute2(cute::raked_product)?,
        "right_inverse" => Layout::Cute(cute::right_inverse(c(0)?)?),
        "left_inverse" => Layout::Cute(cute::left_inverse(c(0)?)?),
        "flatten" => Layout::Cute(cute::flatten(c(0)?)),
        "make_layout" => Layout::Cute(cute::make_layout(&[c(0)?.clone(), c(1)?.clone()])?),
        "recast" => {
            let (from, to) = (int_of(op, &a[1])?, int_of(op, &a[2])?);
            match &a[0] {
                Value::Layout(Layout::Swizzled(s)) => {
                    Layout::Swizzled(cute::recast_swizzled(s, from, to)?)
                }
                _ => Layout::Cute(cute::recast(c(0)?, from, to)?),
            }
        }
        "swizzle" => {
            let bits = small(op, int_of(op, &a[0])?)?;
            let base = small(op, int_of(op, &a[1])?)?;
            let shift = int_of(op, &a[2])?;
            let shift = i32::try_from(shift)
                .map_err(|_| LayoutError::invalid("swizzle shift", format!("{shift}")))?;
            let sw = layout::Swizzle::new(bits, base, shift)?;
            let inner = match &a[3] {
                Value::Layout(l @ Layout::Axe(_)) => match convert(l, Target::Cute, None)? {
                    Layout::Cute(c) => c,
                    other => return Err(wrong(op, "a CuTe layout", &Value::Layout(other))),
                },
                other => cute_of(op, other)?.clone(),
            };
            Layout::Swizzled(SwizzledLayout::new(sw, inner)?)
        }
        "canonicalize" => Layout::Axe(axe::canonicalize(x(0)?)?.layout),
        "group" => Layout::Axe(axe::group(x(0)?, shape_of(op, &a[1])?)?.layout),
        "tile" => Layout::Axe(axe::tile(
            x(0)?,
            x(2)?,
            shape_of(op, &a[1])?,
            shape_of(op, &a[3])?,
        )?),
        "direct_sum" => Layout::Axe(axe::direct_sum(
            x(0)?,
            x(2)?,
            shape_of(op, &a[1])?,
            shape_of(op, &a[3])?,
        )?),
        "slice" => match &a[2] {
            Value::Region(r) => Layout::Axe(axe::slice(x(0)?, shape_of(op, &a[1])?, r)?),
            other => return Err(wrong(op, "a region", other)),
        },
        "to_axe" | "to_cute" | "to_linear" => {
            let target = match op {
                "to_axe" => Target::Axe,
                "to_cute" => Target::Cute,
                _ => Target::Linear,
            };
            match &a[0] {
                Value::Layout(l) => convert(l, target, None)?,
                other => return Err(wrong(op, "a layout", other)),
            }
        }
        "f2_compose" => Layout::Linear(lin(op, &a[0])?.compose(&lin(op, &a[1])?)?),
        "f2_invert_compose" => {
            Layout::Linear(lin(op, &a[0])?.invert_and_compose(&lin(op, &a[1])?)?)
        }
        "f2_right_inverse" => Layout::Linear(lin(op, &a[0])?.right_inverse()?),
        "f2_identity" => {
            let l = lin(op, &a[0])?;
            let ins = l
                .outs()
                .iter()
                .map(|o| layout::linear::InDim {
                    name: o.name.clone(),
                    bases: (0..o.log2_size)
                        .map(|k| {
                            l.outs()
                                .iter()
                                .map(|p| if p.name == o.name { 1i64 << k } else { 0 })
                                .collect()
                        })
                        .collect(),
                })
                .collect();
            Layout::Linear(layout::LinearLayout::new(ins, l.outs().to_vec())?)
        }
        "swizzle_map" => {
            let bits = small(op, int_of(op, &a[0])?)?;
            let base = small(op, int_of(op, &a[1])?)?;
            let shift = int_of(op, &a[2])?;
            let shift = i32::try_from(shift)
                .map_err(|_| LayoutError::invalid("swizzle shift", format!("{shift}")))?;
            let n = small(op, int_of(op, &a[3])?)?;
            let sw = layout::Swizzle::new(bits, base, shift)?;
            if n > 30 || (sw.source_mask() | sw.dest_mask()) >> n != 0 {
                return Err(LayoutError::invalid(
                    format!("swizzle_map({bits}, {base}, {shift}, {n})"),
                    format!("{sw} moves bits outside {n} offset bits"),
                ));
            }
            let bases = (0..n)
                .map(|k| Ok(vec![sw.apply(1i64 << k)?]))
                .collect::<Result<Vec<_>, LayoutError>>()?;
            Layout::Linear(layout::LinearLayout::new(
                vec![layout::linear::InDim {
                    name: "offset".into(),
                    bases,
                }],
                vec![layout::linear::OutDim {
                    name: "offset".into(),
                    log2_size: n,
                }],
            )?)
        }
        other => {
            return Err(LayoutError::invalid(
                "operator",
                format!("{other} is not an operator"),
            ))
        }
    })
}

/// Work units that applying `op` to `a` may spend besides a constant, for the prover's work
/// budget (one unit is about the cost of evaluating one logical index): the operators that
/// enumerate values. A composition checks every coordinate of its right operand (up to 2^20;
/// the divides and products compose with their operands), a slice that does not group reads
/// its region's values (up to 2^20), and a left inverse outside CUTLASS's form searches up to
/// 2^24 small steps (about 2^17 units; fewer for a small L). An estimate, never a bound the semantics rely on.
pub fn cost(op: &str, a: &[Value]) -> u64 {
    const ENUMERATED: u64 = 1 << 20;
    const LEFT_INVERSE_SEARCH: u64 = 1 << 17;
    let size = |v: &Value| match v {
        Value::Layout(l) => l.domain_size().max(0) as u64,
        _ => 0,
    };
    match op {
        "compose" | "logical_divide" | "zipped_divide" | "tiled_divide" | "flat_divide"
        | "logical_product" | "zipped_product" | "tiled_product" | "blocked_product"
        | "raked_product" => a
            .iter()
            .map(size)
            .fold(0u64, u64::saturating_add)
            .min(ENUMERATED),
        "slice" => match a.get(2) {
            Some(Value::Region(r)) => r
                .iter()
                .map(|&(b, e)| e.saturating_sub(b).max(0) as u64)
                .fold(1u64, u64::saturating_mul)
                .min(ENUMERATED),
            _ => 0,
        },
        // The search tries at least one shape per size from cosize to twice that, each
        // checked against the size(L) offsets.
        "left_inverse" => match a.first() {
            Some(Value::Layout(Layout::Cute(c))) if cute::cutlass_left_inverse(c).is_err() => {
                (c.size().max(0) as u64)
                    .saturating_mul(c.cosize().max(0) as u64)
                    .div_ceil(8)
                    .min(LEFT_INVERSE_SEARCH)
            }
            _ => 0,
        },
        _ => 0,
    }
}

/// An operand as an F2 linear layout (converted exactly when it is not one).
fn lin(op: &str, v: &Value) -> Result<layout::LinearLayout, LayoutError> {
    match v {
        Value::Layout(Layout::Linear(l)) => Ok(l.clone()),
        Value::Layout(l) => match convert(l, Target::Linear, None)? {
            Layout::Linear(f) => Ok(f),
            _ => unreachable!("convert to Linear gives Linear"),
        },
        other => Err(wrong(op, "a layout", other)),
    }
}

fn small(op: &str, v: i64) -> Result<u32, LayoutError> {
    u32::try_from(v).map_err(|_| LayoutError::invalid(format!("argument of {op}"), format!("{v}")))
}
