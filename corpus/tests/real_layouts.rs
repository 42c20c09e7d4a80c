//! The real layout strings of `corpus/data/real/layouts.toml` (issue 16): every one parses
//! exactly as pasted and evaluates at every point of its domain; where
//! `tests/data/real/oracle.jsonl` (bench/peers/gen_real_oracle.py) has an oracle, the values
//! agree with it: pycute's at every flat index of a CuTe string, Gluon's linear layout at every
//! point of a Triton attribute on its shape. Strings marked `expect = "error"` (a doc typo, an
//! incongruent header layout) must be refused.

use std::collections::BTreeMap;

use corpus::real::RealLayout;
use corpus::Corpus;
use layout::Layout;
use serde_json::Value;

const P: u128 = (1 << 61) - 1;

fn digest(values: impl IntoIterator<Item = i64>) -> u64 {
    let mut h: u128 = 0;
    for v in values {
        let v = u128::try_from(v + 1).expect("offsets are non-negative");
        h = (h * 1_000_003 + v) % P;
    }
    u64::try_from(h).expect("below 2^61")
}

fn reals(file: &str) -> Vec<RealLayout> {
    Corpus::embedded()
        .expect("the embedded corpus loads")
        .reals
        .into_iter()
        .filter(|r| r.file == file)
        .collect()
}

/// Every point of the domain, as a coordinate of the layout's default shape (colexicographic).
fn points(l: &Layout) -> impl Iterator<Item = Vec<i64>> + '_ {
    let dims = l.default_shape();
    (0..l.domain_size()).map(move |flat| {
        let mut rest = flat;
        dims.iter()
            .map(|e| {
                let c = rest % e;
                rest /= e;
                c
            })
            .collect()
    })
}

#[test]
fn every_real_layout_parses_and_evaluates_everywhere() {
    let all = reals("real/layouts.toml");
    assert!(all.len() >= 145, "{} real strings", all.len());
    for r in &all {
        let parsed = Layout::parse(&r.text, r.shape.as_deref());
        if r.expect_error {
            assert!(parsed.is_err(), "{:?} ({}) must be refused", r.text, r.path);
            continue;
        }
        let l = parsed.unwrap_or_else(|e| panic!("{:?} ({}): {e}", r.text, r.path));
        assert!(l.domain_size() <= 1 << 18, "{:?}: a large domain", r.text);
        for c in points(&l) {
            l.eval(None, &c)
                .unwrap_or_else(|e| panic!("{:?} at {c:?}: {e}", r.text));
        }
    }
}

#[test]
fn real_layouts_agree_with_pycute_and_gluon() {
    let shapes: BTreeMap<String, Option<Vec<i64>>> = reals("real/layouts.toml")
        .into_iter()
        .map(|r| (r.text, r.shape))
        .collect();
    let path = format!(
        "{}/../tests/data/real/oracle.jsonl",
        env!("CARGO_MANIFEST_DIR")
    );
    let (mut cute, mut triton) = (0, 0);
    for line in std::fs::read_to_string(&path).unwrap().lines() {
        let r: Value = serde_json::from_str(line).unwrap();
        let text = r["text"].as_str().unwrap();
        let shape = shapes
            .get(text)
            .unwrap_or_else(|| panic!("{text:?}: an oracle for a string not in the corpus"));
        let l = Layout::parse(text, shape.as_deref()).unwrap();
        if let Some(p) = r.get("pycute") {
            let Layout::Cute(c) = &l else {
                panic!(
                    "{text:?} reads as {:?}, pycute as a CuTe layout",
                    l.notation()
                );
            };
            let size = p["size"].as_i64().unwrap();
            assert_eq!(c.size(), size, "{text:?}: size");
            let got = digest((0..size).map(|i| c.eval_index(i).unwrap()));
            assert_eq!(got, p["digest"].as_u64().unwrap(), "{text:?}: values");
            cute += 1;
        } else {
            let g = r["gluon_linear"].as_str().unwrap();
            let want = Layout::parse(g, shape.as_deref()).unwrap();
            assert_eq!(l.default_shape(), want.default_shape(), "{text:?}: in-dims");
            for c in points(&l) {
                assert_eq!(
                    l.eval(None, &c).unwrap(),
                    want.eval(None, &c).unwrap(),
                    "{text:?} on {shape:?} at {c:?}"
                );
            }
            triton += 1;
        }
    }
    println!("{cute} CuTe strings agree with pycute, {triton} Triton attributes with Gluon");
    assert!(
        cute >= 60 && triton >= 40,
        "{cute} CuTe, {triton} Triton oracle checks"
    );
}

#[test]
fn pending_real_layouts_are_counted() {
    let pending = reals("real/pending.toml");
    let now = pending
        .iter()
        .filter(|r| Layout::parse(&r.text, r.shape.as_deref()).is_ok())
        .count();
    println!(
        "{now} of {} pending strings parse on this branch",
        pending.len()
    );
    assert!(!pending.is_empty());
}
