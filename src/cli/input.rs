//! Reading command-line inputs (layout text, shapes, coordinates) into library values, and
//! rendering their errors: parse errors get the input line with a caret under the bad span.

use layout::{Layout, LayoutError};

use super::BadInput;

/// Renders `e`, caused by the text `input` of the argument named `what`.
pub fn render(e: &LayoutError, what: &str, input: &str) -> BadInput {
    let message = match e {
        LayoutError::Parse(p) => format!("error: {}\n  (in {what})", p.render(input)),
        other => format!("error: {what}: {other}"),
    };
    BadInput { message }
}

/// The TTGIR file given with `--mlir`, whose `#name = ...` aliases layout arguments may use.
static MLIR: std::sync::OnceLock<(String, layout::triton::aliases::Aliases)> =
    std::sync::OnceLock::new();

/// Axis names the user declared (`--axes lane_id=laneid` declares `lane_id`).
static DECLARED: std::sync::Mutex<std::collections::BTreeSet<String>> =
    std::sync::Mutex::new(std::collections::BTreeSet::new());

/// The axis correspondence given with `--axes`, applied to every layout argument.
static AXES: std::sync::OnceLock<(String, Vec<(layout::Axis, layout::Axis)>)> =
    std::sync::OnceLock::new();

/// Reads `--axes from=to,...`: declares each `from` (the user's own axis name) and renames it
/// to `to` in every layout argument read after this.
pub fn set_axes(text: &str) -> Result<(), BadInput> {
    let map = certify::claim::parse_axes(text).map_err(|e| render(&e, "--axes", text))?;
    declare_axes(map.iter().map(|(from, _)| from.as_str()));
    let _ = AXES.set((text.to_string(), map));
    Ok(())
}

/// Declares axis names: layouts may use them even where they look like a misspelled registry
/// name.
pub fn declare_axes<'a>(names: impl IntoIterator<Item = &'a str>) {
    if let Ok(mut d) = DECLARED.lock() {
        d.extend(names.into_iter().map(str::to_string));
    }
}

/// Refuses an Axe layout's axis that misspells a registry name (`@laneId`, `@lane_id`) and
/// was not declared, naming the registry's spelling.
fn check_axis_names(l: &Layout, what: &str) -> Result<(), BadInput> {
    let Layout::Axe(a) = l else {
        return Ok(());
    };
    let declared = DECLARED.lock().map(|d| d.clone()).unwrap_or_default();
    let registry = layout::AxisRegistry::builtin();
    for axis in a.axes() {
        let name = axis.as_str();
        if declared.contains(name) {
            continue;
        }
        if let Some(known) = registry.misspelling_of(name) {
            return Err(BadInput {
                message: format!(
                    "error: {what}: axis @{name} is not in the axis registry; did you mean \
                     @{known}? (--axes {name}={known} declares {name} and maps it onto {known})"
                ),
            });
        }
    }
    Ok(())
}

/// Most bytes any input file is read for (`--mlir`, rule files, logs, certificates, plans).
pub use corpus::MAX_FILE_BYTES;

/// The text of the file at `path`, read for at most `max` bytes: `what` names it in the error
/// (`error: rule file "r.rules": cannot read: ...`, `...: more than 67108864 bytes ...`).
pub fn read_bounded(path: &str, what: &str, max: u64) -> Result<String, BadInput> {
    corpus::read_text_at_most(std::path::Path::new(path), max).map_err(|e| BadInput {
        message: format!("error: {what} {path:?}: cannot read: {e}"),
    })
}

/// Reads `--mlir FILE`: its aliases become usable in every layout argument.
pub fn set_mlir(path: &str) -> Result<(), BadInput> {
    let bad = |why: String| BadInput {
        message: format!("error: --mlir {path:?}: {why}"),
    };
    let text = read_bounded(path, "--mlir", MAX_FILE_BYTES)?;
    let aliases = layout::triton::aliases::Aliases::parse(&text).map_err(|e| bad(e.to_string()))?;
    let _ = MLIR.set((path.to_string(), aliases));
    Ok(())
}

/// Replaces the `--mlir` file's aliases in `text`; a bare `#name` without `--shape` takes the
/// shape of the file's first tensor type with that encoding. Without `--mlir`, a `#name` that
/// is no dialect attribute is refused with a hint.
fn with_aliases(text: &str, shape: Option<&[i64]>) -> Result<(String, Option<Vec<i64>>), BadInput> {
    let t = text.trim();
    let is_alias_ref = t.starts_with('#')
        && !t.starts_with("#ttg.")
        && !t.starts_with("#triton_gpu.")
        && t[1..]
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$' || c == '.');
    let Some((path, aliases)) = MLIR.get() else {
        if is_alias_ref {
            return Err(BadInput {
                message: format!(
                    "error: {t} is an alias of a TTGIR file: pass the file with --mlir FILE"
                ),
            });
        }
        return Ok((text.to_string(), shape.map(<[i64]>::to_vec)));
    };
    if !text.contains('#') {
        return Ok((text.to_string(), shape.map(<[i64]>::to_vec)));
    }
    let expanded = aliases.expand(text).map_err(|e| BadInput {
        message: format!("error: --mlir {path:?}: {e}"),
    })?;
    let shape = match shape {
        Some(s) => Some(s.to_vec()),
        None if is_alias_ref => aliases.shape_of(&t[1..]),
        None => None,
    };
    Ok((expanded, shape))
}

/// Parses the layout argument (with the shape, which Triton attributes need). `atom:NAME`
/// names an atom of the embedded corpus (`laycert atoms` lists them); its own shape applies
/// when none is given. `#name` is an alias of the `--mlir` file.
pub fn layout(text: &str, shape: Option<&[i64]>) -> Result<Layout, BadInput> {
    let text = uncomment(text);
    let (text, shape) = with_aliases(&text, shape)?;
    let (text, shape) = (text.as_str(), shape.as_deref());
    let l = if let Some(name) = text.trim().strip_prefix("atom:") {
        let atom = atom(name.trim())?;
        let shape = shape.or(atom.shape.as_deref());
        Layout::parse(&atom.layout, shape)
            .map_err(|e| render(&e, &format!("atom:{}", atom.name), &atom.layout))?
    } else {
        let l = Layout::parse(text, shape).map_err(|e| render(&e, "the layout", text))?;
        check_axis_names(&l, "the layout")?;
        l
    };
    match AXES.get() {
        Some((_, map)) => {
            certify::claim::rename_axes(&l, map).map_err(|e| render(&e, "the layout", text))
        }
        None => Ok(l),
    }
}

/// The shape a layout argument gives itself as a TTGIR tensor type
/// (`tensor<128x64xf16, #ttg.blocked<..>>` gives `[128, 64]`), so a command comparing it with
/// another layout reads both as if `--shape 128,64` were given. `None` for other text.
pub fn tensor_type_shape(text: &str) -> Option<Vec<i64>> {
    let (text, _) = with_aliases(&uncomment(text), None).ok()?;
    layout::triton::tensor_type(&text)
        .ok()
        .flatten()
        .map(|(_, s)| s)
}

/// Text pasted from an MLIR lit test keeps its `//` comment markers (`// - register=1 -> ..`,
/// `// where out dims are: ..`): when every non-empty line starts with `//`, they go.
fn uncomment(text: &str) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.len() < 2 || !lines.iter().all(|l| l.trim_start().starts_with("//")) {
        return text.to_string();
    }
    lines
        .iter()
        .map(|l| {
            let rest = &l.trim_start()[2..];
            rest.strip_prefix(' ').unwrap_or(rest)
        })
        .collect::<Vec<_>>()
        .join("\n")
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
