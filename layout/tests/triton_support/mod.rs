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

/// The in-dims a case lists bases for: `offset, block` (shared) or `register, lane, warp, block`.
pub fn in_dims(c: &Value) -> &'static [&'static str] {
    if c.get("offset").is_some() {
        &["offset", "block"]
    } else {
        &["register", "lane", "warp", "block"]
    }
}

/// Triton's bases of the case's in-dims ([`in_dims`]), in that order.
pub fn want_bases(c: &Value) -> Vec<Vec<Vec<i64>>> {
    in_dims(c).iter().map(|k| bases(&c[*k])).collect()
}

/// Every case's attribute imports (`layout::triton`) to exactly Triton's bases, with out-dim
/// sizes equal to the tensor shape; all mismatches are reported together.
pub fn check_imports(cases: &[Value]) {
    let mut failures = Vec::new();
    for c in cases {
        let attr = c["attr"].as_str().unwrap();
        let shape = ints(&c["shape"]);
        let (names, want) = (in_dims(c), want_bases(c));
        match layout::triton::parse_attr(attr).and_then(|a| a.to_linear(&shape)) {
            Ok(got) => {
                if our_bases(&got, names) != want {
                    failures.push(format!(
                        "{attr} on {shape:?}:\n  want {want:?}\n  got  {:?}",
                        our_bases(&got, names)
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

/// Every case's attribute text parses and prints back unchanged.
pub fn check_prints_back(cases: &[Value]) {
    for c in cases {
        let attr = c["attr"].as_str().unwrap();
        assert_eq!(layout::triton::parse_attr(attr).unwrap().to_string(), attr);
    }
}
