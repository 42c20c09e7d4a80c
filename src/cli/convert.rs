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
    exact(&l, &out, shape.as_deref())?;
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

/// The conversion's promise, checked by certify's deciders (which share no code with the
/// conversion): the output relates the same logical coordinates to the same points as the
/// input. A counterexample is a bug in a conversion, reported instead of a wrong answer;
/// where the deciders cannot decide (a domain past their limits) the construction stands.
fn exact(from: &Layout, to: &Layout, shape: Option<&[i64]>) -> Result<(), BadInput> {
    let policy = certify::claim::Policy {
        use_smt: false,
        ..certify::claim::Policy::default()
    };
    let Ok(r) = certify::claim::equivalent(from, to, shape, &policy) else {
        return Ok(());
    };
    match &r.counterexample {
        Some(c) => Err(BadInput {
            message: format!(
                "error: the conversion gives {}, which differs from the input at the coordinate {:?} \
                 (a bug in laycert's conversion; please report it)",
                to.print(),
                c.coord
            ),
        }),
        None => Ok(()),
    }
}
