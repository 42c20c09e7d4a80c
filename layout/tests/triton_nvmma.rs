//! Differential test of `#ttg.nvmma_shared` against Triton: every case of
//! `tests/data/triton/nvmma.jsonl` (written by `bench/peers/gen_triton_nvmma.py`, a fixed grid
//! of swizzle widths, element widths, `transposed`, `fp4Padded`, ranks 1 to 4 and multi-CTA
//! layouts, converted by Triton 3.9) imports to exactly Triton's bases, and every case Triton
//! refuses (it aborts) is refused here too, with the reason.

use serde_json::Value;

mod triton_support;
use triton_support::ints;

fn cases() -> Vec<Value> {
    triton_support::cases("nvmma.jsonl")
}

fn accepted() -> Vec<Value> {
    cases()
        .into_iter()
        .filter(|c| c.get("refused").is_none())
        .collect()
}

#[test]
fn oracle_covers_the_grid() {
    let all = cases();
    let count = |pred: &dyn Fn(&Value) -> bool| all.iter().filter(|c| pred(c)).count();
    let attr = |c: &Value| c["attr"].as_str().unwrap().to_string();
    let ok = |c: &Value| c.get("refused").is_none();
    let rank = |c: &Value| c["shape"].as_array().unwrap().len();
    for (what, least, n) in [
        ("cases", 3000, all.len()),
        ("refused", 1000, count(&|c| !ok(c))),
        (
            "rank-3 transposed",
            300,
            count(&|c| ok(c) && rank(c) == 3 && attr(c).contains("transposed = true")),
        ),
        (
            "rank-3 transposed, unswizzled",
            50,
            count(&|c| {
                ok(c)
                    && rank(c) == 3
                    && attr(c).contains("transposed = true")
                    && attr(c).contains("swizzlingByteWidth = 0")
            }),
        ),
        (
            "rank-4 transposed",
            50,
            count(&|c| ok(c) && rank(c) == 4 && attr(c).contains("transposed = true")),
        ),
        (
            "fp4Padded",
            20,
            count(&|c| ok(c) && attr(c).contains("fp4Padded = true")),
        ),
        (
            "multi-CTA",
            10,
            count(&|c| ok(c) && attr(c).contains("CGALayout")),
        ),
        ("rank 1", 10, count(&|c| ok(c) && rank(c) == 1)),
        (
            "a dim past the 256-element TMA block",
            500,
            count(&|c| ok(c) && ints(&c["shape"]).contains(&512)),
        ),
    ] {
        assert!(n >= least, "{n} {what} cases, expected at least {least}");
    }
}

#[test]
fn import_matches_triton_on_every_case() {
    triton_support::check_imports(&accepted());
}

/// Triton aborts on these (a CTA narrower than one swizzle row, or a TMA block that collapses
/// to fewer than 8 rows of a row); the import refuses them as a shape error naming why.
#[test]
fn cases_triton_refuses_are_refused() {
    let mut wrong = Vec::new();
    for c in cases().iter().filter(|c| c.get("refused").is_some()) {
        let attr = c["attr"].as_str().unwrap();
        let shape = ints(&c["shape"]);
        match layout::triton::parse_attr(attr).and_then(|a| a.to_linear(&shape)) {
            Ok(l) => wrong.push(format!("{attr} on {shape:?} imported as {l}")),
            Err(e) => {
                let e = e.to_string();
                assert!(e.contains("Triton refuses"), "{attr} on {shape:?}: {e}");
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{} accepted:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

#[test]
fn attribute_text_prints_back_exactly() {
    triton_support::check_prints_back(&cases());
}
