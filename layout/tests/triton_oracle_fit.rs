//! Differential test against Triton for fitting a layout to a tensor shape: every case of
//! `tests/data/triton/fit.jsonl` (written by `bench/peers/gen_triton_fit.py` from Triton 3.9's
//! own conversion) holds one attribute of each kind and rank 1 to 4 at shapes smaller than,
//! equal to and larger than its tile, and must import to exactly Triton's bases.

use serde_json::Value;

mod triton_support;

fn cases() -> Vec<Value> {
    triton_support::cases("fit.jsonl")
}

#[test]
fn fit_oracle_covers_every_kind_at_every_fit() {
    let all = cases();
    let mut seen = std::collections::BTreeMap::<(String, String), usize>::new();
    for c in &all {
        let key = (
            c["kind"].as_str().unwrap().to_string(),
            c["fit"].as_str().unwrap().to_string(),
        );
        *seen.entry(key).or_default() += 1;
    }
    let kinds: std::collections::BTreeSet<_> = seen.keys().map(|(k, _)| k.clone()).collect();
    assert!(kinds.len() >= 25, "{} kinds: {kinds:?}", kinds.len());
    for kind in &kinds {
        for fit in ["equal", "large"] {
            assert!(
                seen.contains_key(&(kind.clone(), fit.to_string())),
                "{kind} has no {fit} case"
            );
        }
        if !kind.starts_with("nvmma") {
            assert!(
                seen.contains_key(&(kind.clone(), "small".to_string())),
                "{kind} has no small case"
            );
        }
    }
}

#[test]
fn import_matches_triton_at_small_equal_and_large_shapes() {
    triton_support::check_imports(&cases());
}

#[test]
fn fit_attribute_text_prints_back_exactly() {
    triton_support::check_prints_back(&cases());
}
