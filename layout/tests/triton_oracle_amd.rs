//! Differential test against Triton for AMD's layouts and `#ttg.linear`: every case of
//! `tests/data/triton/amd.jsonl` (written by `bench/peers/gen_triton_amd.py` from Triton 3.9's
//! own conversion) holds one `amd_mfma`, `amd_wmma`, `dot_op` of either, `slice` of either or
//! `linear` attribute at a shape smaller than, equal to or larger than its tile, and must import
//! to exactly Triton's bases.

use std::collections::BTreeMap;

use serde_json::Value;

mod triton_support;

fn cases() -> Vec<Value> {
    triton_support::cases("amd.jsonl")
}

fn kind(c: &Value) -> &str {
    c["kind"].as_str().unwrap()
}

#[test]
fn amd_oracle_covers_every_kind_at_every_fit() {
    let mut seen = BTreeMap::<(String, String), usize>::new();
    for c in &cases() {
        let key = (kind(c).to_string(), c["fit"].as_str().unwrap().to_string());
        *seen.entry(key).or_default() += 1;
    }
    for k in [
        "amd_mfma2d",
        "amd_mfma3d",
        "amd_wmma2d",
        "amd_wmma3d",
        "dot_amd_mfma2d",
        "dot_amd_mfma3d",
        "dot_amd_wmma2d",
        "dot_amd_wmma3d",
        "slice_amd_mfma2d",
        "slice_amd_wmma2d",
    ] {
        for fit in ["ones", "small", "equal", "large"] {
            assert!(
                seen.contains_key(&(k.to_string(), fit.to_string())),
                "{k} has no {fit} case"
            );
        }
    }
    for k in ["linear1d", "linear2d", "linear3d", "linear4d"] {
        for fit in ["ones", "small", "equal", "large"] {
            assert!(seen.contains_key(&(k.to_string(), fit.to_string())));
        }
    }
}

#[test]
fn import_matches_triton_on_amd_and_linear_attributes() {
    let all = cases();
    let (linear, attrs): (Vec<Value>, Vec<Value>) =
        all.into_iter().partition(|c| kind(c).starts_with("linear"));
    // `#ttg.linear` at every fit (its own shape, ones, smaller, larger, mixed): laycert fits
    // the bases to the tensor shape as Triton does (`notation::linear::fit_to_shape`).
    assert!(linear.len() >= 192, "{} linear cases", linear.len());
    triton_support::check_imports(&attrs);
    for c in &linear {
        let text = c["attr"].as_str().unwrap();
        let shape = triton_support::ints(&c["shape"]);
        let got = layout::notation::linear::parse_attr(text, Some(&shape)).unwrap();
        let (names, want) = (triton_support::in_dims(c), triton_support::want_bases(c));
        assert_eq!(triton_support::our_bases(&got, names), want, "{text}");
        let outs: Vec<i64> = got.outs().iter().map(|o| o.size()).collect();
        assert_eq!(outs, shape, "{text}");
    }
}

#[test]
fn amd_attribute_text_prints_back_exactly() {
    let attrs: Vec<Value> = cases()
        .into_iter()
        .filter(|c| !kind(c).starts_with("linear"))
        .collect();
    triton_support::check_prints_back(&attrs);
}
