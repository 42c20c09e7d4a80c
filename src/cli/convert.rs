//! `laycert convert L --to axe|cute|linear`: the exact equivalent in the target formalism (first
//! line), or an error saying why there is none.

use serde_json::json;

use layout::convert::{convert, Target};
use layout::Layout;

use super::{input, BadInput, Report};

/// Runs `convert`.
pub fn run(text: &str, to: &str, shape: Option<&str>, as_json: bool) -> Result<Report, BadInput> {
    let target = Target::parse(to).map_err(|e| input::render(&e, "--to", to))?;
    let shape = input::shape(shape)?;
    let l = input::layout(text, shape.as_deref())?;
    let logical = if matches!(l, Layout::Linear(_)) {
        None
    } else {
        shape.as_deref()
    };
    let out =
        convert(&l, target, logical).map_err(|e| input::render(&e, "the conversion", text))?;
    if as_json {
        return Ok(Report::json(json!({
            "from": l.notation().name(),
            "to": to,
            "layout": super::layout_lines(&out)[0],
            "text": out.print(),
        })));
    }
    Ok(Report::ok(super::layout_lines(&out)))
}
