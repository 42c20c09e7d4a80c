//! `laycert atoms [FILTER]`: the atoms of the embedded corpus (each usable as `atom:NAME` where
//! a command takes a layout), one per line: name, logical shape, layout text and source.
//! FILTER keeps the names that contain it (case-insensitive). First line: the count.

use layout::Layout;

use super::{BadInput, Report};

/// Lists the atoms whose name contains `filter`.
pub fn run(filter: Option<&str>, as_json: bool) -> Result<Report, BadInput> {
    let corpus = corpus::Corpus::embedded().map_err(|e| BadInput {
        message: format!("error: the embedded corpus: {e}"),
    })?;
    let needle = filter.unwrap_or("").to_lowercase();
    let atoms: Vec<&corpus::atom::Atom> = corpus
        .atoms
        .iter()
        .filter(|a| a.name.to_lowercase().contains(&needle))
        .collect();
    let shape_of = |a: &corpus::atom::Atom| -> String {
        match Layout::parse(&a.layout, a.shape.as_deref()) {
            Ok(l) => format!("{:?}", l.default_shape()),
            Err(_) => "?".into(),
        }
    };
    if as_json {
        let list: Vec<serde_json::Value> = atoms
            .iter()
            .map(|a| {
                serde_json::json!({
                    "name": a.name, "layout": a.layout, "shape": shape_of(a),
                    "source": a.source, "file": a.file,
                })
            })
            .collect();
        return Ok(Report::json(
            serde_json::json!({"count": atoms.len(), "atoms": list}),
        ));
    }
    let mut lines = vec![format!("{} atoms", atoms.len())];
    for a in atoms {
        lines.push(format!(
            "{}  shape {}  {}  ({})",
            a.name,
            shape_of(a),
            a.layout,
            a.source
        ));
    }
    Ok(Report::ok(lines))
}
