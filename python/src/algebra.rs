//! The layout algebra: CuTe operations through `layout::cute::cli_op` (text in, pycute's text
//! out, as `laycert cute OP` calls it) and the Axe operators (`laycert canon`, `group`, `tile`,
//! `tile-of`, `slice`, `direct-sum`).

use layout::axe::{self, AxeLayout};
use layout::notation::axe::parse;
use layout::AxisRegistry;
use pyo3::prelude::*;

use crate::errors::render;
use crate::layout_py::{Layout, LayoutArg};

/// Runs one CuTe operation on text operands (`compose`, `complement`, `coalesce`, `divide`,
/// `product`, `left-inverse`, `right-inverse`, `nullspace`, `recast`) and returns the result's
/// text, exactly as pycute prints it.
#[pyfunction]
pub fn cute_op(py: Python<'_>, op: &str, args: Vec<String>) -> PyResult<String> {
    let joined = args.join(" ");
    py.detach(|| layout::cute::cli_op(op, &args))
        .map_err(|e| render(&e, &format!("cute {op}"), &joined))
}

fn axe_arg(l: LayoutArg, what: &str) -> PyResult<AxeLayout> {
    match l {
        LayoutArg::Object(Layout {
            inner: layout::Layout::Axe(a),
            ..
        }) => Ok(a),
        other => {
            let t = other.text();
            parse(&t).map_err(|e| render(&e, what, &t))
        }
    }
}

fn axe(l: AxeLayout) -> Layout {
    Layout::of(layout::Layout::Axe(l))
}

/// The canonical form of an Axe layout (`target="cuda"` merges `laneid`/`warpid` into `tx`).
#[pyfunction]
#[pyo3(signature = (layout, target=None))]
pub fn canonicalize(layout: LayoutArg, target: Option<&str>) -> PyResult<Layout> {
    let t = layout.text();
    let l = axe_arg(layout, "the layout")?;
    axe::canonicalize_on(&l, AxisRegistry::builtin(), target)
        .map(|c| axe(c.layout))
        .map_err(|e| render(&e, "canonicalize", &t))
}

/// An Axe layout grouped by a logical shape (several shapes: by their common refinement).
#[pyfunction]
pub fn group(layout: LayoutArg, shapes: Vec<Vec<i64>>) -> PyResult<Layout> {
    let t = layout.text();
    let l = axe_arg(layout, "the layout")?;
    match shapes.as_slice() {
        [one] => axe::group(&l, one).map(|g| axe(g.layout)),
        many => axe::group_many(&l, many).map(|g| axe(g.grouped.layout)),
    }
    .map_err(|e| render(&e, "group", &t))
}

/// The canonical tiled layout of `inner` (shape `inner_shape`) by `outer` (`outer_shape`).
#[pyfunction]
pub fn tile(
    inner: LayoutArg,
    outer: LayoutArg,
    inner_shape: Vec<i64>,
    outer_shape: Vec<i64>,
) -> PyResult<Layout> {
    let t = inner.text();
    let (b, a) = (
        axe_arg(inner, "the inner layout")?,
        axe_arg(outer, "the outer layout")?,
    );
    axe::tile(&b, &a, &inner_shape, &outer_shape)
        .and_then(|x| axe::canonicalize(&x))
        .map(|c| axe(c.layout))
        .map_err(|e| render(&e, "tile", &t))
}

/// The other factor of a tile: given the inner layout (`inner`, `inner_shape`), the outer
/// one; given the outer (`outer`, `outer_shape`), the inner. Raises `AlgebraError` when
/// `layout` is not such a tile.
#[pyfunction]
#[pyo3(signature = (layout, shape, inner=None, inner_shape=None, outer=None, outer_shape=None))]
pub fn tile_of(
    layout: LayoutArg,
    shape: Vec<i64>,
    inner: Option<LayoutArg>,
    inner_shape: Option<Vec<i64>>,
    outer: Option<LayoutArg>,
    outer_shape: Option<Vec<i64>>,
) -> PyResult<Layout> {
    let t = layout.text();
    let l = axe_arg(layout, "the layout")?;
    let r = match (inner, inner_shape, outer, outer_shape) {
        (Some(b), Some(sb), None, None) => axe::tile_of(&l, &shape, &axe_arg(b, "inner")?, &sb),
        (None, None, Some(c), Some(sc)) => {
            axe::tile_of_given_outer(&l, &shape, &axe_arg(c, "outer")?, &sc)
        }
        _ => {
            return Err(crate::errors::error(
                "error: tile_of takes inner with inner_shape, or outer with outer_shape",
            ))
        }
    };
    r.map(axe).map_err(|e| render(&e, "tile_of", &t))
}

/// The layout of a region of `shape` (half-open `(begin, end)` ranges per dimension) of an Axe
/// or swizzled layout.
#[pyfunction]
pub fn slice(layout: LayoutArg, shape: Vec<i64>, region: Vec<(i64, i64)>) -> PyResult<Layout> {
    let t = layout.text();
    if layout::notation::Notation::detect(&t) == layout::notation::Notation::Swizzled {
        let s =
            layout::notation::cute::parse_swizzled(&t).map_err(|e| render(&e, "the layout", &t))?;
        return axe::slice_swizzled(&s, &shape, &region)
            .and_then(|x| layout::Layout::parse(&x.to_string(), None))
            .map(Layout::of)
            .map_err(|e| render(&e, "slice", &t));
    }
    let l = axe_arg(layout, "the layout")?;
    axe::slice(&l, &shape, &region)
        .map(axe)
        .map_err(|e| render(&e, "slice", &t))
}

/// The canonical direct sum of `a` (over `a_shape`) and `b` (over `b_shape`).
#[pyfunction]
pub fn direct_sum(
    a: LayoutArg,
    b: LayoutArg,
    a_shape: Vec<i64>,
    b_shape: Vec<i64>,
) -> PyResult<Layout> {
    let t = a.text();
    let (la, lb) = (
        axe_arg(a, "the first layout")?,
        axe_arg(b, "the second layout")?,
    );
    axe::direct_sum(&la, &lb, &a_shape, &b_shape)
        .and_then(|s| axe::canonicalize(&s))
        .map(|c| axe(c.layout))
        .map_err(|e| render(&e, "direct_sum", &t))
}
