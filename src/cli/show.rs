//! `laycert show L`: the layout as laycert prints it (first line), then its notation, domain,
//! span per axis (Axe), the range reached per axis and the injective/surjective facts.

use serde_json::{json, Map, Value};

use certify::property::decided_facts;
use layout::facts::Fact;
use layout::Layout;

use super::{input, BadInput, Report};

/// Runs `show`.
pub fn run(text: &str, shape: Option<&str>, as_json: bool) -> Result<Report, BadInput> {
    let shape = input::shape(shape)?;
    let l = input::layout(text, shape.as_deref())?;
    // For linear layouts `--shape` is the tensor shape the text was read for; the domain is the
    // in-dims. For the others it is the logical shape of the domain.
    let domain_shape = match (&l, &shape) {
        (Layout::Linear(_), _) | (_, None) => l.default_shape(),
        (_, Some(s)) => s.clone(),
    };
    let logical = if matches!(l, Layout::Linear(_)) {
        None
    } else {
        shape.as_deref()
    };
    if let Some(s) = logical {
        // Evaluating at the origin checks that the layout admits the shape.
        l.eval(Some(s), &vec![0; s.len()])
            .map_err(|e| input::render(&e, "--shape", &list(s)))?;
    }
    let f = decided_facts(&l, logical).map_err(|e| input::render(&e, "facts", text))?;
    let spans: Vec<(String, i64)> = match &l {
        Layout::Axe(a) => a
            .axes()
            .iter()
            .map(|ax| (ax.to_string(), a.span(ax)))
            .collect(),
        _ => Vec::new(),
    };
    if as_json {
        let span: Map<String, Value> = spans.iter().map(|(a, s)| (a.clone(), json!(s))).collect();
        let range: Map<String, Value> = f
            .range
            .iter()
            .map(|(a, (lo, hi))| (a.to_string(), json!([lo, hi])))
            .collect();
        return Ok(Report::json(json!({
            "layout": super::layout_lines(&l)[0],
            "text": l.print(),
            "notation": l.notation().name(),
            "size": f.size,
            "shape": domain_shape,
            "span": if matches!(l, Layout::Axe(_)) { Value::Object(span) } else { Value::Null },
            "range": range,
            "injective": fact_json(&f.injective),
            "surjective": fact_json(&f.surjective),
        })));
    }
    let mut lines = super::layout_lines(&l);
    lines.extend(f.summary_lines(&l, &domain_shape));
    Ok(Report::ok(lines))
}

/// `(8, 16)`-style list text.
pub fn list(v: &[i64]) -> String {
    let body: Vec<String> = v.iter().map(|x| x.to_string()).collect();
    format!("({})", body.join(", "))
}

fn fact_json(f: &Fact) -> Value {
    match f {
        Fact::Yes => json!({ "holds": "yes" }),
        Fact::No(why) => json!({ "holds": "no", "why": why }),
        Fact::Unknown(why) => json!({ "holds": "unknown", "why": why }),
    }
}
