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

/// Parses the layout argument (with the shape, which Triton attributes need). `atom:NAME`
/// names an atom of the embedded corpus (`laycert atoms` lists them); its own shape applies
/// when none is given.
pub fn layout(text: &str, shape: Option<&[i64]>) -> Result<Layout, BadInput> {
    if let Some(name) = text.trim().strip_prefix("atom:") {
        let atom = atom(name.trim())?;
        let shape = shape.or(atom.shape.as_deref());
        return Layout::parse(&atom.layout, shape)
            .map_err(|e| render(&e, &format!("atom:{}", atom.name), &atom.layout));
    }
    Layout::parse(text, shape).map_err(|e| render(&e, "the layout", text))
}

/// The atom of the embedded corpus named `name`; an unknown name lists the closest ones.
pub fn atom(name: &str) -> Result<corpus::atom::Atom, BadInput> {
    let corpus = corpus::Corpus::embedded().map_err(|e| BadInput {
        message: format!("error: the embedded corpus: {e}"),
    })?;
    if let Some(a) = corpus.atom(name) {
        return Ok(a.clone());
    }
    let lower = name.to_lowercase();
    let mut near: Vec<&str> = corpus
        .atoms
        .iter()
        .map(|a| a.name.as_str())
        .filter(|n| {
            let n = n.to_lowercase();
            n.contains(&lower) || lower.contains(&n) || common_prefix(&n, &lower) >= 8
        })
        .collect();
    near.truncate(8);
    let hint = if near.is_empty() {
        "`laycert atoms` lists them".to_string()
    } else {
        format!("did you mean {}?", near.join(", "))
    };
    Err(BadInput {
        message: format!("error: atom:{name}: no atom of that name in the corpus; {hint}"),
    })
}

fn common_prefix(a: &str, b: &str) -> usize {
    a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count()
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
