//! Reading command-line inputs (layout text, shapes, coordinates) into library values, and
//! rendering their errors: parse errors get the input line with a caret under the bad span.

use layout::{Layout, LayoutError};

use super::BadInput;

/// Renders `e`, caused by the text `input` of the argument named `what`.
pub fn render(e: &LayoutError, what: &str, input: &str) -> BadInput {
    let message = match e {
        LayoutError::Parse(p) => format!("{}\n  (in {what})", p.render(input)),
        other => format!("error: {what}: {other}"),
    };
    BadInput { message }
}

/// Parses the layout argument (with the shape, which Triton attributes need).
pub fn layout(text: &str, shape: Option<&[i64]>) -> Result<Layout, BadInput> {
    Layout::parse(text, shape).map_err(|e| render(&e, "the layout", text))
}

/// Parses a `--shape` argument such as `8,16`.
pub fn shape(text: Option<&str>) -> Result<Option<Vec<i64>>, BadInput> {
    text.map(|t| layout::shape::parse_list(t).map_err(|e| render(&e, "--shape", t)))
        .transpose()
}

/// Parses a `--coord` argument: positional `2,9`, or named `register=1,lane=9` for a linear
/// layout (absent in-dims are 0), returned in the layout's in-dim order.
pub fn coord(text: &str, l: &Layout) -> Result<Vec<i64>, BadInput> {
    if !text.contains('=') {
        return layout::shape::parse_list(text).map_err(|e| render(&e, "--coord", text));
    }
    let Layout::Linear(f) = l else {
        return Err(BadInput {
            message: format!(
                "error: --coord {text:?}: named components (name=value) are for linear layouts; give \
                 a positional coordinate such as 2,9"
            ),
        });
    };
    let mut values = vec![0i64; f.ins().len()];
    let mut seen = vec![false; f.ins().len()];
    for part in text.split(',') {
        let bad = |why: String| BadInput {
            message: format!("error: --coord {text:?}: {why}"),
        };
        let (name, value) = part
            .split_once('=')
            .ok_or_else(|| bad(format!("{part:?} is not name=value")))?;
        let (name, value) = (name.trim(), value.trim());
        let i = f.ins().iter().position(|d| d.name == name).ok_or_else(|| {
            let names: Vec<&str> = f.ins().iter().map(|d| d.name.as_str()).collect();
            bad(format!(
                "unknown in-dim {name:?}; the layout's in-dims are {names:?}"
            ))
        })?;
        if std::mem::replace(&mut seen[i], true) {
            return Err(bad(format!("in-dim {name:?} is given twice")));
        }
        values[i] = value
            .parse()
            .map_err(|_| bad(format!("{value:?} (for {name}) is not an integer")))?;
    }
    Ok(values)
}
