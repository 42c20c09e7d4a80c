//! Differential test against Triton for the attributes beyond blocked and mma: every case of
//! `tests/data/triton/layouts_more.jsonl` (written by `bench/peers/gen_triton_layouts_more.py`
//! from Triton 3.9's own conversion: dot_op, slice, swizzled_shared, nvmma_shared and multi-CTA
//! layouts) must import to exactly Triton's bases and print back unchanged.

use layout::triton::parse_attr;
use serde_json::Value;

mod triton_support;
use triton_support::{bases, ints, our_bases as ours};

fn cases() -> Vec<Value> {
    triton_support::cases("layouts_more.jsonl")
}

fn in_dims(c: &Value) -> &'static [&'static str] {
    if c.get("offset").is_some() {
        &["offset", "block"]
    } else {
        &["register", "lane", "warp", "block"]
    }
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
    let mut failures = Vec::new();
    for c in cases() {
        let attr = c["attr"].as_str().unwrap();
        let shape = ints(&c["shape"]);
        let names = in_dims(&c);
        let want: Vec<_> = names.iter().map(|k| bases(&c[*k])).collect();
        match parse_attr(attr).and_then(|a| a.to_linear(&shape)) {
            Ok(got) => {
                if ours(&got, names) != want {
                    failures.push(format!(
                        "{attr} on {shape:?}:\n  want {want:?}\n  got  {:?}",
                        ours(&got, names)
                    ));
                }
                let outs: Vec<i64> = got.outs().iter().map(|o| o.size()).collect();
                assert_eq!(outs, shape, "{attr}: out-dim sizes are the tensor shape");
            }
            Err(e) => failures.push(format!("{attr} on {shape:?}: {e}")),
        }
    }
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn attribute_text_prints_back_exactly() {
    for c in cases() {
        let attr = c["attr"].as_str().unwrap();
        assert_eq!(parse_attr(attr).unwrap().to_string(), attr);
    }
}
