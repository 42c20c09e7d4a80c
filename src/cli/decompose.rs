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
    let mut search = solver::decompose::decompose(&l, &shape, &atoms)
        .map_err(|e| input::render(&e, "the layout", text))?;
    // An atom of one thread is matched only whole (C of no iters): as a tile it fits anything.
    let whole: Vec<_> = corpus::atom::one_thread_atoms(&corpus.atoms)
        .into_iter()
        .filter(|(_, a)| matches!(a, layout::Layout::Tv(tv) if tv.tile() == shape.as_slice()))
        .collect();
    if !whole.is_empty() {
        let exact = solver::decompose::decompose(&l, &shape, &whole)
            .map_err(|e| input::render(&e, "the layout", text))?;
        search
            .tilings
            .extend(exact.tilings.into_iter().filter(|t| t.cost == 0));
        search.tilings.sort_by_key(|t| t.cost);
        if search.best.is_none() {
            search.best = search.tilings.first().map(|t| t.term.clone());
        }
    }
    let tried = atoms.len() + whole.len();
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
            "atoms_tried": tried,
        }));
        r.code = if found.is_empty() { NONE } else { 0 };
        return Ok(r);
    }
    let Some(best) = found.first() else {
        let mut r = Report::ok(vec![
            "no tiling by a corpus atom".to_string(),
            format!(
                "{} atoms tried ({} of one thread, matched only whole)",
                tried,
                whole.len()
            ),
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
