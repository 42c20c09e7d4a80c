//! Differential test against Triton for the attributes beyond blocked and mma: every case of
//! `tests/data/triton/layouts_more.jsonl` (written by `bench/peers/gen_triton_layouts_more.py`
//! from Triton 3.9's own conversion: dot_op, slice, swizzled_shared, nvmma_shared and multi-CTA
//! layouts) must import to exactly Triton's bases and print back unchanged.

use serde_json::Value;

mod triton_support;

fn cases() -> Vec<Value> {
    triton_support::cases("layouts_more.jsonl")
}

#[test]
fn oracle_covers_every_attribute() {
    let all = cases();
    assert!(all.len() >= 300, "{} cases", all.len());
    let count = |needle: &str| {
        all.iter()
            .filter(|c| c["attr"].as_str().unwrap().contains(needle))
            .count()
    };
    for (needle, least) in [
        ("#ttg.dot_op<{opIdx = 0", 30),
        ("#ttg.dot_op<{opIdx = 1", 30),
        ("kWidth = 2", 10),
        ("kWidth = 4", 10),
        ("kWidth = 8", 10),
        ("#ttg.slice<", 50),
        ("#ttg.swizzled_shared<", 50),
        ("#ttg.nvmma_shared<", 50),
        ("swizzlingByteWidth = 32", 8),
        ("swizzlingByteWidth = 64", 8),
        ("swizzlingByteWidth = 128", 8),
        ("transposed = true", 5),
        ("CGALayout", 40),
    ] {
        assert!(
            count(needle) >= least,
            "{} cases of {needle}",
            count(needle)
        );
    }
}

#[test]
fn import_matches_triton_on_every_case() {
    triton_support::check_imports(&cases());
}

#[test]
fn attribute_text_prints_back_exactly() {
    triton_support::check_prints_back(&cases());
}
