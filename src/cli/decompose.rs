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
    // Element-indexed atoms only (bit-indexed ones describe the same memory at another grain).
    // Many catalog atoms share one layout (an MMA's C for every input type): each layout is
    // tried once, under the first name, the hand-written CUTLASS-sourced atoms first. Atoms of
    // one thread (dp4a, a UMMA issued by one thread, AMX) tile anything trivially: left out.
    let mut ordered: Vec<&corpus::Atom> = corpus.atoms.iter().filter(|a| !a.in_bits).collect();
    ordered.sort_by_key(|a| !a.source.starts_with("CUTLASS"));
    let mut seen = std::collections::BTreeSet::new();
    let atoms: Vec<(String, layout::Layout)> = ordered
        .into_iter()
        .filter(|a| seen.insert((a.layout.clone(), a.shape.clone())))
        .filter_map(|a| {
            layout::Layout::parse(&a.layout, a.shape.as_deref())
                .ok()
                .filter(|l| !matches!(l, layout::Layout::Tv(tv) if tv.threads() <= 1))
                .map(|l| (a.name.clone(), l))
        })
        .collect();
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
