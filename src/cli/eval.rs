//! `laycert eval L --coord ..`: the set of points the layout maps one coordinate to, on one
//! line, e.g. `{{laneid:8, reg:1, warpid:6}, {laneid:8, reg:1, warpid:10}}`. A set of more
//! than [`super::SUMMARY_POINTS`] points prints as `N points, first k: {..}` unless `--full`
//! (or `--json`) asks for all of them, at most [`super::MAX_FULL_POINTS`].

use serde_json::{json, Map, Value};

use layout::axis::format_point;
use layout::Layout;

use super::{input, BadInput, Report};

/// A single index on a domain of rank >= 2 is a flat index, read in the notation's order (the
/// claim domain's): CuTe (plain, swizzled, TV) colexicographic, Axe row-major. Linear layouts
/// keep their in-dim coordinates. `(4,8):(8,1)` at 21 is the coordinate `(1, 5)`.
fn flat_to_coord(
    l: &Layout,
    logical: Option<&[i64]>,
    c: Vec<i64>,
    text: &str,
) -> Result<Vec<i64>, BadInput> {
    let dom = logical
        .map(<[i64]>::to_vec)
        .unwrap_or_else(|| l.default_shape());
    if c.len() != 1 || dom.len() < 2 || matches!(l, Layout::Linear(_)) {
        return Ok(c);
    }
    let size = dom.iter().try_fold(1i64, |a, &b| a.checked_mul(b));
    let i = c[0];
    if !size.is_some_and(|n| (0..n).contains(&i)) {
        return Err(BadInput {
            message: format!(
                "error: --coord {text:?}: the flat index {i} is outside the domain {dom:?} (size {})",
                size.map_or("beyond 2^63".to_string(), |n| n.to_string())
            ),
        });
    }
    let mut out = vec![0i64; dom.len()];
    let mut rest = i;
    let order: Vec<usize> = if matches!(l, Layout::Axe(_)) {
        (0..dom.len()).rev().collect()
    } else {
        (0..dom.len()).collect()
    };
    for k in order {
        out[k] = rest % dom[k];
        rest /= dom[k];
    }
    Ok(out)
}

/// Runs `eval`.
pub fn run(
    text: &str,
    shape: Option<&str>,
    coord: &str,
    full: bool,
    as_json: bool,
) -> Result<Report, BadInput> {
    let shape = input::shape(shape)?;
    let l = input::layout(text, shape.as_deref())?;
    let c = input::coord(coord, &l)?;
    // A linear layout's `--shape` is the tensor shape its text was read for; its domain is fixed.
    let logical = if matches!(l, Layout::Linear(_)) {
        None
    } else {
        shape.as_deref()
    };
    let c = flat_to_coord(&l, logical, c, coord)?;
    let points = l
        .eval(logical, &c)
        .map_err(|e| input::render(&e, "evaluation", coord))?;
    if as_json {
        if points.len() > super::MAX_FULL_POINTS {
            return Err(super::too_many_points(points.len()));
        }
        let pts: Vec<Value> = points
            .iter()
            .map(|p| {
                Value::Object(
                    p.iter()
                        .map(|(a, v)| (a.to_string(), json!(v)))
                        .collect::<Map<_, _>>(),
                )
            })
            .collect();
        return Ok(Report::json(json!({
            "layout": super::layout_lines(&l)[0],
            "shape": logical.map(|s| s.to_vec()).unwrap_or_else(|| l.default_shape()),
            "coord": c,
            "count": pts.len(),
            "points": pts,
        })));
    }
    let body: Vec<String> = points.iter().map(format_point).collect();
    Ok(Report::ok(vec![super::point_set(&body, full)?]))
}
