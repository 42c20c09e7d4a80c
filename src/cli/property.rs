//! `laycert prove-property injective|surjective|bijective L`: first line `proved`, `refuted`
//! or `unknown`; then the deciders and, when refuted, the witness. Exit 0 / 1 / 3; 2 on bad
//! input.

use serde_json::json;

use certify::property::{prove_property, Property};
use certify::Policy;

use super::{input, BadInput, Report};

/// Runs `prove-property`.
pub fn run(prop: &str, text: &str, shape: Option<&str>, as_json: bool) -> Result<Report, BadInput> {
    let p = Property::parse(prop).map_err(|e| input::render(&e, "the property", prop))?;
    let shape = input::shape(shape)?;
    let l = input::layout(text, shape.as_deref())?;
    let logical = shape
        .as_deref()
        .filter(|_| !matches!(l, layout::Layout::Tv(_) | layout::Layout::Linear(_)));
    let r = prove_property(&l, p, logical, &Policy::default())
        .map_err(|e| input::render(&e, "the claim", text))?;
    let code = match r.verdict {
        "proved" => 0,
        "refuted" => super::equiv::REFUTED,
        _ => super::equiv::UNKNOWN,
    };
    let mut report = if as_json {
        Report::json(
            json!({ "property": prop, "verdict": r.verdict, "deciders": r.deciders, "detail": r.detail }),
        )
    } else {
        let deciders: Vec<String> = r.deciders.iter().map(|(d, v)| format!("{d} {v}")).collect();
        let mut lines = vec![
            r.verdict.to_string(),
            format!("deciders: {}", deciders.join("; ")),
        ];
        lines.extend(r.detail.map(|d| format!("because: {d}")));
        Report::ok(lines)
    };
    report.code = code;
    Ok(report)
}
