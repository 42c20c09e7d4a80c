//! `laycert.Layout`: a layout in any notation (the CLI's `show`, `eval`, `convert`, `draw`).

use std::collections::BTreeMap;

use certify::property::decided_facts;
use layout::convert::{convert, Target};
use layout::IntTuple;
use layout::Layout as L;
use pyo3::exceptions::{PyOverflowError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple};

use crate::errors::{error, render};
use crate::picture::{bank_map, picture, Access};
use crate::svg;

/// A layout in any notation: Axe `S[..]`, CuTe `(4,2):(2,1)`, `Sw<B,M,S> o L`, TV
/// `.. -> (16,8)`, Triton `#ttg.*` attributes (with `shape`), `LinearLayout::toString()`
/// text, or `atom:NAME` for an atom of the embedded corpus.
#[pyclass(module = "laycert", frozen, from_py_object)]
#[derive(Clone)]
pub struct Layout {
    /// The parsed value.
    pub inner: L,
    /// The logical shape given (the tensor shape of a Triton attribute), if any.
    pub given_shape: Option<Vec<i64>>,
}

/// A layout argument: a `Layout` or its text.
#[derive(FromPyObject)]
pub enum LayoutArg {
    /// A `Layout` object.
    Object(Layout),
    /// Text in any notation.
    Text(String),
}

impl LayoutArg {
    /// The layout, text parsed with `shape` (which Triton attributes need).
    pub fn get(self, shape: Option<&[i64]>, what: &str) -> PyResult<L> {
        match self {
            LayoutArg::Object(l) => Ok(l.inner),
            LayoutArg::Text(t) => parse(&t, shape, what),
        }
    }

    /// The logical shape a `Layout` object was made with (none for text, linear and TV).
    pub fn own_shape(&self) -> Option<Vec<i64>> {
        match self {
            LayoutArg::Object(l) => l.logical().map(<[i64]>::to_vec),
            LayoutArg::Text(_) => None,
        }
    }

    /// The argument's text as the CuTe operations read it.
    pub fn text(&self) -> String {
        match self {
            LayoutArg::Object(l) => l.line(),
            LayoutArg::Text(t) => t.clone(),
        }
    }
}

/// Parses `text` as the CLI's layout argument does (`atom:NAME` included).
pub fn parse(text: &str, shape: Option<&[i64]>, what: &str) -> PyResult<L> {
    if let Some(name) = text.trim().strip_prefix("atom:") {
        let corpus = corpus::Corpus::embedded()
            .map_err(|e| error(format!("error: the embedded corpus: {e}")))?;
        let atom = corpus.atom(name.trim()).ok_or_else(|| {
            error(format!(
                "error: atom:{}: no atom of that name in the corpus",
                name.trim()
            ))
        })?;
        let shape = shape.or(atom.shape.as_deref());
        return L::parse(&atom.layout, shape)
            .map_err(|e| render(&e, &format!("atom:{}", atom.name), &atom.layout));
    }
    L::parse(text, shape).map_err(|e| render(&e, what, text))
}

impl Layout {
    /// Wraps a value computed by the library.
    pub fn of(inner: L) -> Layout {
        Layout {
            inner,
            given_shape: None,
        }
    }

    /// The logical shape claims and evaluation use: the one given, except for linear and TV
    /// layouts, whose domain is fixed (a Triton attribute's shape is its tensor shape).
    fn logical(&self) -> Option<&[i64]> {
        match self.inner {
            L::Linear(_) | L::Tv(_) => None,
            _ => self.given_shape.as_deref(),
        }
    }

    /// One line a user can paste back (linear layouts as `#ttg.linear<{...}>`).
    pub fn line(&self) -> String {
        match &self.inner {
            L::Linear(f) => {
                layout::notation::linear::print_attr(f).unwrap_or_else(|_| self.inner.print())
            }
            other => other.print(),
        }
    }

    fn domain_shape(&self) -> Vec<i64> {
        self.logical()
            .map(<[i64]>::to_vec)
            .unwrap_or_else(|| self.inner.default_shape())
    }

    /// `show()`'s text; run without the GIL.
    fn show_text(&self) -> PyResult<String> {
        let l = &self.inner;
        let logical = self.logical();
        let text = self.line();
        let f = decided_facts(l, logical).map_err(|e| render(&e, "facts", &text))?;
        let mut lines = vec![text];
        if let L::Linear(_) = l {
            lines.extend(l.print().lines().map(str::to_string));
        }
        lines.extend(f.summary_lines(l, &self.domain_shape()));
        Ok(lines.join("\n"))
    }

    fn coordinate(&self, coord: &Bound<'_, PyAny>) -> PyResult<Vec<i64>> {
        if let Ok(d) = coord.cast::<PyDict>() {
            let L::Linear(f) = &self.inner else {
                return Err(error(
                    "error: coord: named components (name=value) are for linear layouts; give a \
                     positional coordinate such as (2, 9)",
                ));
            };
            let mut values = vec![0i64; f.ins().len()];
            for (k, v) in d.iter() {
                let name: String = k.extract().map_err(|_| {
                    PyTypeError::new_err(format!(
                        "coord: an in-dim name is a str, got {}",
                        type_name(&k)
                    ))
                })?;
                let i = f.ins().iter().position(|d| d.name == name).ok_or_else(|| {
                    let names: Vec<&str> = f.ins().iter().map(|d| d.name.as_str()).collect();
                    error(format!(
                        "error: coord: unknown in-dim {name:?}; the layout's in-dims are {names:?}"
                    ))
                })?;
                let what = format!("coord[{name:?}]");
                values[i] = integer(&v, &what)?.ok_or_else(|| {
                    PyTypeError::new_err(format!("{what}: expected an int, got {}", type_name(&v)))
                })?;
            }
            return Ok(values);
        }
        int_list(
            coord,
            "coord",
            "an int, a sequence of ints or {in_dim: int}",
        )
    }
}

/// Most entries a shape or coordinate argument is read for (a rank far beyond any layout's).
const MAX_ENTRIES: usize = 1 << 16;

/// The name of `obj`'s type, for messages.
fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".to_string())
}

/// `obj` as an i64 when it is an integer (an `int`, or anything with `__index__`), None when it
/// is not one; an integer beyond i64 is a `LaycertError` naming the argument `what`.
pub fn integer(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Option<i64>> {
    if obj.is_instance_of::<PyString>() || !obj.hasattr("__index__")? {
        return Ok(None);
    }
    match obj.extract::<i64>() {
        Ok(v) => Ok(Some(v)),
        Err(e) if e.is_instance_of::<PyOverflowError>(obj.py()) => {
            let bits: u64 = obj
                .call_method0("bit_length")
                .and_then(|b| b.extract())
                .unwrap_or(0);
            let value = if bits <= 128 {
                obj.str().map(|s| s.to_string()).unwrap_or_default()
            } else {
                format!("an integer of {bits} bits")
            };
            Err(error(format!(
                "error: {what}: {value} does not fit in a signed 64-bit integer (laycert's \
                 extents, strides and coordinates are i64: -2^63 to 2^63 - 1)"
            )))
        }
        Err(_) => Ok(None),
    }
}

/// An int (read as a one-entry list) or a sequence of ints, named `what` in errors: an integer
/// beyond i64 is a `LaycertError`, anything else that is no int a `TypeError` saying what was
/// expected (`expected`) and what was given.
pub fn int_list(obj: &Bound<'_, PyAny>, what: &str, expected: &str) -> PyResult<Vec<i64>> {
    if let Some(v) = integer(obj, what)? {
        return Ok(vec![v]);
    }
    let not = || {
        PyTypeError::new_err(format!(
            "{what}: expected {expected}, got {}",
            type_name(obj)
        ))
    };
    if obj.is_instance_of::<PyString>() || obj.is_instance_of::<PyDict>() {
        return Err(not());
    }
    let Ok(items) = obj.try_iter() else {
        return Err(not());
    };
    let mut out = Vec::new();
    for (i, item) in items.enumerate() {
        if i == MAX_ENTRIES {
            return Err(error(format!(
                "error: {what}: more than {MAX_ENTRIES} entries"
            )));
        }
        let item = item?;
        let at = format!("{what}[{i}]");
        match integer(&item, &at)? {
            Some(v) => out.push(v),
            None => {
                return Err(PyTypeError::new_err(format!(
                    "{at}: expected an int, got {}",
                    type_name(&item)
                )))
            }
        }
    }
    Ok(out)
}

/// A CuTe IntTuple as Python's nested tuples of ints.
fn int_tuple<'py>(py: Python<'py>, t: &IntTuple) -> PyResult<Bound<'py, PyAny>> {
    match t {
        IntTuple::Int(v) => Ok(v.into_pyobject(py)?.into_any()),
        IntTuple::Tuple(items) => {
            let items = items
                .iter()
                .map(|x| int_tuple(py, x))
                .collect::<PyResult<Vec<_>>>()?;
            Ok(PyTuple::new(py, items)?.into_any())
        }
    }
}

fn points<'py>(
    py: Python<'py>,
    set: impl IntoIterator<Item = layout::axis::Point>,
) -> PyResult<Vec<Bound<'py, PyDict>>> {
    set.into_iter()
        .map(|p| {
            let d = PyDict::new(py);
            for (a, v) in p {
                d.set_item(a.to_string(), v)?;
            }
            Ok(d)
        })
        .collect()
}

/// The claim's shape: `shape` when given, else the one shape the `Layout` arguments were made
/// with; arguments made with different shapes must be given one.
pub fn claim_shape(
    shape: Option<&Bound<'_, PyAny>>,
    args: &[&LayoutArg],
) -> PyResult<Option<Vec<i64>>> {
    if let Some(s) = shape_arg(shape)? {
        return Ok(Some(s));
    }
    let own: std::collections::BTreeSet<Vec<i64>> =
        args.iter().filter_map(|a| a.own_shape()).collect();
    match own.len() {
        0 => Ok(None),
        1 => Ok(own.into_iter().next()),
        _ => Err(error(format!(
            "error: the layouts were made with different shapes {own:?}; give shape= for the \
             claim's domain"
        ))),
    }
}

/// Reads a shape argument: an int or a sequence of ints.
pub fn shape_arg(shape: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Vec<i64>>> {
    match shape {
        None => Ok(None),
        Some(s) if s.is_none() => Ok(None),
        Some(s) => {
            if let Ok(t) = s.extract::<String>() {
                return layout::shape::parse_list(&t)
                    .map(Some)
                    .map_err(|e| render(&e, "shape", &t));
            }
            int_list(
                s,
                "shape",
                "an int, a sequence of ints or a str such as \"4,8\"",
            )
            .map(Some)
        }
    }
}

#[pymethods]
impl Layout {
    /// Parses `text` in any notation; `shape` is the logical shape (a Triton attribute's
    /// tensor shape).
    #[new]
    #[pyo3(signature = (text, shape=None))]
    fn new(text: &str, shape: Option<&Bound<'_, PyAny>>) -> PyResult<Layout> {
        let shape = shape_arg(shape)?;
        let inner = parse(text, shape.as_deref(), "the layout")?;
        let l = Layout {
            inner,
            given_shape: shape,
        };
        if let Some(s) = l.logical() {
            // Evaluating at the origin checks that the layout admits the shape, as `show` does.
            l.inner
                .eval(Some(s), &vec![0; s.len()])
                .map_err(|e| render(&e, "shape", &format!("{s:?}")))?;
        }
        Ok(l)
    }

    /// The layout as laycert prints it, in its own notation (linear layouts as the multi-line
    /// `LinearLayout::toString()` text).
    #[getter]
    fn text(&self) -> String {
        self.inner.print()
    }

    /// The notation's name as the CLI's `--json` says it: `axe`, `cute`, `swizzled`, `tv`,
    /// `linear-attr`.
    #[getter]
    fn notation(&self) -> &'static str {
        self.inner.notation().name()
    }

    /// The logical domain's shape.
    #[getter]
    fn shape(&self) -> Vec<i64> {
        self.domain_shape()
    }

    /// The number of logical coordinates.
    #[getter]
    fn size(&self) -> i64 {
        self.inner.domain_size()
    }

    /// For linear layouts: the in-dims as `{name: [basis, ...]}` and the out-dims as
    /// `{name: size}` (None for other notations).
    #[getter]
    fn linear<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyTuple>>> {
        let L::Linear(f) = &self.inner else {
            return Ok(None);
        };
        let ins: BTreeMap<usize, (String, Vec<Vec<i64>>)> = f
            .ins()
            .iter()
            .enumerate()
            .map(|(i, d)| (i, (d.name.clone(), d.bases.clone())))
            .collect();
        let ins: Vec<(String, Vec<Vec<i64>>)> = ins.into_values().collect();
        let outs: Vec<(String, i64)> = f
            .outs()
            .iter()
            .map(|o| (o.name.clone(), 1i64 << o.log2_size))
            .collect();
        Ok(Some(PyTuple::new(
            py,
            [
                ins.into_pyobject(py)?.into_any(),
                outs.into_pyobject(py)?.into_any(),
            ],
        )?))
    }

    /// The set of points the layout maps one coordinate to, as `{axis: value}` dicts. `coord`
    /// is an N-D coordinate of the domain (an int for rank 1); a linear layout also takes
    /// `{in_dim: value}` (absent in-dims are 0).
    fn eval<'py>(
        &self,
        py: Python<'py>,
        coord: &Bound<'py, PyAny>,
    ) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let c = self.coordinate(coord)?;
        let set = self
            .inner
            .eval(self.logical(), &c)
            .map_err(|e| render(&e, "evaluation", &format!("{c:?}")))?;
        points(py, set)
    }

    /// What `laycert show` prints: the layout, notation, domain, span per axis, range and the
    /// injective / surjective facts. Deciding the facts may take seconds: the GIL is released.
    fn show(&self, py: Python<'_>) -> PyResult<String> {
        py.detach(|| self.show_text())
    }

    /// The exact equivalent in another formalism (`axe`, `cute` or `linear`); raises
    /// `LaycertError` saying why when there is none.
    fn convert(&self, to: &str) -> PyResult<Layout> {
        let target = Target::parse(to).map_err(|e| render(&e, "to", to))?;
        let out = convert(&self.inner, target, self.logical())
            .map_err(|e| render(&e, "the conversion", &self.line()))?;
        Ok(Layout {
            inner: out,
            given_shape: self.logical().map(<[i64]>::to_vec),
        })
    }

    /// The layout as a `#ttg.linear<{...}>` attribute (converted to F2 linear first).
    fn to_ttg(&self) -> PyResult<String> {
        let lin = match &self.inner {
            L::Linear(f) => f.clone(),
            other => match convert(other, Target::Linear, self.logical())
                .map_err(|e| render(&e, "the conversion", &self.line()))?
            {
                L::Linear(f) => f,
                _ => return Err(error("error: the conversion did not give a linear layout")),
            },
        };
        layout::notation::linear::print_attr(&lin)
            .map_err(|e| render(&e, "the #ttg.linear text", &self.line()))
    }

    /// An SVG picture (what `laycert draw` writes): TV / thread layouts as `T V` grids
    /// coloured by thread, memory layouts as offset grids; with `banks` (element bytes) a
    /// shared-memory bank map, a conflicting 128-byte access (`access`: `row` or `col`)
    /// outlined in red.
    #[pyo3(signature = (banks=None, access="row", title=None))]
    fn draw(&self, banks: Option<i64>, access: &str, title: Option<&str>) -> PyResult<String> {
        let line = self.line();
        let title = title.unwrap_or(&line);
        let grid = match banks {
            None => picture(&self.inner, self.logical(), title),
            Some(bytes) => {
                let a = Access::parse(access).map_err(|e| render(&e, "access", access))?;
                bank_map(&self.inner, self.logical(), bytes, a, title)
            }
        }
        .map_err(|e| render(&e, "the picture", &line))?;
        Ok(svg::render(&grid))
    }

    /// Jupyter's rich display: the picture, or None when the layout has none (too large).
    fn _repr_svg_(&self) -> Option<String> {
        self.draw(None, "row", None).ok()
    }

    /// `(swizzle, offset, shape, stride)` of the layout's CuTe form, for the interop modules:
    /// `swizzle` is `(B, M, S)` or None, `shape` and `stride` nested tuples of ints. `what` names
    /// the caller in errors: a layout with no CuTe form, or whose form is a thread-value layout
    /// (no `shape:stride` function of one coordinate), is a `LaycertError` saying so.
    fn _cute_parts<'py>(&self, py: Python<'py>, what: &str) -> PyResult<Bound<'py, PyTuple>> {
        let line = self.line();
        let cute = match &self.inner {
            L::Cute(_) | L::Swizzled(_) => self.inner.clone(),
            other => {
                convert(other, Target::Cute, self.logical()).map_err(|e| render(&e, what, &line))?
            }
        };
        let (swizzle, offset, plain) = match &cute {
            L::Cute(c) => (None, 0, c),
            L::Swizzled(s) => {
                let sw = s.swizzle();
                (
                    Some((sw.bits(), sw.base(), sw.shift())),
                    s.offset(),
                    s.layout(),
                )
            }
            L::Tv(tv) => {
                return Err(error(format!(
                    "error: {what}: {line} has no CuTe shape:stride form: its CuTe form is the \
                     thread-value layout {tv}, which maps a (thread, value) pair to a coordinate \
                     of the tile {:?}, not to one offset",
                    tv.tile()
                )))
            }
            other => {
                return Err(error(format!(
                    "error: {what}: the conversion to CuTe gave a {} layout",
                    other.notation().name()
                )))
            }
        };
        PyTuple::new(
            py,
            [
                swizzle.into_pyobject(py)?.into_any(),
                offset.into_pyobject(py)?.into_any(),
                int_tuple(py, plain.shape())?,
                int_tuple(py, plain.stride())?,
            ],
        )
    }

    /// The layout as pycute's `Layout` (needs `pip install nvidia-cutlass`).
    fn to_pycute<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        interop(slf, "pycute", "to_pycute")
    }

    /// The layout as a tensor-layouts `Layout` (needs `pip install tensor-layouts`).
    fn to_tensor_layouts<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        interop(slf, "tensor_layouts", "to_tensor_layouts")
    }

    /// The layout as a Triton Gluon `DistributedLinearLayout` (needs triton).
    fn to_gluon<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        interop(slf, "gluon", "to_gluon")
    }

    fn __str__(&self) -> String {
        self.line()
    }

    fn __repr__(&self) -> String {
        match &self.given_shape {
            Some(s) => format!("laycert.Layout({:?}, shape={s:?})", self.line()),
            None => format!("laycert.Layout({:?})", self.line()),
        }
    }
}

/// Calls the pure-Python interop function `laycert.interop.<module>.<function>(layout)`.
fn interop<'py>(
    slf: &Bound<'py, Layout>,
    module: &str,
    function: &str,
) -> PyResult<Bound<'py, PyAny>> {
    slf.py()
        .import(format!("laycert.interop.{module}"))?
        .getattr(function)?
        .call1((slf,))
}
