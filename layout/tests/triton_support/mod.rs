//! Reading the Triton oracle data (`tests/data/triton/*.jsonl`, written by
//! `bench/peers/gen_triton_layouts*.py`): one JSON object per line, bases as lists of integers.
// Each test binary uses a different subset of these helpers.
#![allow(dead_code)]

use layout::linear::LinearLayout;
use serde_json::Value;

/// The cases of `tests/data/triton/NAME`.
pub fn cases(name: &str) -> Vec<Value> {
    let path = format!("{}/../tests/data/triton/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).expect("the oracle data file is committed");
    text.lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect()
}

/// A JSON list of integers.
pub fn ints(v: &Value) -> Vec<i64> {
    v.as_array()
        .expect("a list")
        .iter()
        .map(|x| x.as_i64().expect("an integer"))
        .collect()
}

/// A JSON list of bases.
pub fn bases(v: &Value) -> Vec<Vec<i64>> {
    v.as_array()
        .expect("a list of bases")
        .iter()
        .map(ints)
        .collect()
}

/// Our bases of the in-dims `names`, in that order (an absent in-dim has none).
pub fn our_bases(l: &LinearLayout, names: &[&str]) -> Vec<Vec<Vec<i64>>> {
    names
        .iter()
        .map(|n| l.in_dim(n).map(|d| d.bases.clone()).unwrap_or_default())
        .collect()
}
