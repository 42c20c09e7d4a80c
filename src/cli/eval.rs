//! `laycert eval L --coord ..`: the set of points the layout maps one coordinate to, on one
//! line, e.g. `{{laneid:8, reg:1, warpid:6}, {laneid:8, reg:1, warpid:10}}`. A set of more
//! than [`super::SUMMARY_POINTS`] points prints as `N points, first k: {..}` unless `--full`
//! (or `--json`) asks for all of them, at most [`super::MAX_FULL_POINTS`].

use serde_json::{json, Map, Value};

use layout::axis::format_point;
use layout::Layout;

use super::{input, BadInput, Report};

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
