//! `laycert decompose L --shape S`: is L `tile(atom, C)` (or `Sw o tile(atom, C)`, or a slice of
//! an atom) for an atom of the embedded corpus? The search runs in the e-graph
//! (`egraph::decompose`). First line: the cheapest proved tiling, or `no tiling by a corpus atom`
//! (exit 1); then the deciders that proved it, the e-graph term extracted, and the other
//! tilings found.

use serde_json::json;

use super::{input, BadInput, Report};

/// Exit status when no atom tiles the layout.
const NONE: u8 = 1;

/// Runs `decompose`.
pub fn run(text: &str, shape: &str, as_json: bool) -> Result<Report, BadInput> {
    let shape = input::shape(Some(shape))?.unwrap_or_default();
    let l = input::layout(text, Some(&shape))?;
    let corpus = corpus::Corpus::embedded().map_err(|e| BadInput {
        message: format!("error: the embedded corpus: {e}"),
    })?;
    let atoms = corpus::atom::tiling_atoms(&corpus.atoms);
    let search = solver::decompose::decompose(&l, &shape, &atoms)
        .map_err(|e| input::render(&e, "the layout", text))?;
    let found = &search.tilings;
    if as_json {
        let mut r = Report::json(json!({
            "tilings": found.iter().map(|t| json!({
                "tiling": t.to_string(),
                "atom": t.atom,
                "term": t.term,
                "cost": t.cost,
                "proved_by": t.proved_by,
            })).collect::<Vec<_>>(),
            "best_term": search.best,
            "atoms_tried": atoms.len(),
        }));
        r.code = if found.is_empty() { NONE } else { 0 };
        return Ok(r);
    }
    let Some(best) = found.first() else {
        let mut r = Report::ok(vec![
            "no tiling by a corpus atom".to_string(),
            format!("{} atoms tried", atoms.len()),
        ]);
        r.code = NONE;
        return Ok(r);
    };
    let mut lines = vec![
        best.to_string(),
        format!(
            "proved equal by {}; cost {} (iters of C)",
            best.proved_by.join(", "),
            best.cost
        ),
        format!(
            "e-graph term: {}",
            search.best.as_deref().unwrap_or(&best.term)
        ),
    ];
    if found.len() > 1 {
        lines.push(format!("{} other tilings:", found.len() - 1));
        lines.extend(found[1..].iter().take(8).map(|t| format!("  {t}")));
    }
    Ok(Report::ok(lines))
}
