//! Every atom of the catalog against its oracles, by evaluation (issue 16).
//!
//! - `tests/data/atoms/tensor_layouts.jsonl` (bench/peers/gen_atoms.py): tensor-layouts 0.3.2's
//!   own evaluation of each of its atoms' layouts, as a size and a digest of the offsets at every
//!   `step`-th flat (thread, value) index. laycert evaluates the stored text at the same indices
//!   (the tile cell it names, flattened column-major) and must give the same digest.
//! - `tests/data/atoms/cutedsl.jsonl` (bench/peers/gen_atoms_cutedsl.py): the TV layouts the
//!   CuTe DSL 4.8.1 prints for its MMA and copy atoms. MMA operands must agree at every flat
//!   index; copy atoms (which the DSL counts in elements of `elem_bits`, the corpus in bits)
//!   must agree at the first bit of every element.
//! - AMD atoms built by Triton 3.9's Gluon are stored as the `#ttg.linear` text Gluon printed;
//!   the record must match the stored text and it must evaluate on its shape.

use std::collections::BTreeMap;

use corpus::{Atom, Corpus};
use layout::cute::TvLayout;
use layout::Layout;
use serde_json::Value;

const P: u128 = (1 << 61) - 1;

/// The generator's digest: `h = (h * 1000003 + v + 1) mod 2^61-1` over the offsets, from 0.
fn digest(values: impl IntoIterator<Item = i64>) -> u64 {
    let mut h: u128 = 0;
    for v in values {
        let v = u128::try_from(v + 1).expect("offsets are non-negative");
        h = (h * 1_000_003 + v) % P;
    }
    u64::try_from(h).expect("below 2^61")
}

fn records(name: &str) -> Vec<Value> {
    let path = format!("{}/../tests/data/atoms/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{path}: {e}"))
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

fn tv_of(a: &Atom) -> Option<TvLayout> {
    match Layout::parse(&a.layout, a.shape.as_deref()).expect("corpus texts parse") {
        Layout::Tv(tv) => Some(tv),
        _ => None,
    }
}

/// The column-major offset of the tile cell that flat index `i` (thread-fastest) names.
fn offset(tv: &TvLayout, i: i64) -> i64 {
    let t = tv.threads();
    let cell = tv.eval(i % t, i / t).expect("in the domain");
    let mut off = 0;
    let mut scale = 1;
    for (c, e) in cell.iter().zip(tv.tile()) {
        off += c * scale;
        scale *= e;
    }
    off
}

fn catalog() -> BTreeMap<String, Atom> {
    Corpus::embedded()
        .expect("the embedded corpus loads")
        .atoms
        .into_iter()
        .map(|a| (a.name.clone(), a))
        .collect()
}

#[test]
fn every_tensor_layouts_atom_evaluates_as_tensor_layouts_does() {
    let atoms = catalog();
    let (mut checked, mut gluon) = (0, 0);
    for r in records("tensor_layouts.jsonl") {
        if r.get("digest").is_none() {
            continue;
        }
        let name = r["atom"].as_str().unwrap();
        let a = atoms
            .get(name)
            .unwrap_or_else(|| panic!("{name}: not in the corpus"));
        let Some(tv) = tv_of(a) else {
            // An AMD atom stored as Gluon's layout: checked against Gluon below.
            assert!(a.source.contains("Gluon"), "{name}: not a TV layout");
            gluon += 1;
            continue;
        };
        let size = r["size"].as_i64().unwrap();
        let step = r["step"].as_i64().unwrap();
        assert_eq!(tv.layout().size(), size, "{name}: size");
        let first: Vec<i64> = (0..size.min(8)).map(|i| offset(&tv, i)).collect();
        let want: Vec<i64> = serde_json::from_value(r["first"].clone()).unwrap();
        assert_eq!(first, want, "{name}: first offsets");
        let got = digest((0..size).step_by(step as usize).map(|i| offset(&tv, i)));
        assert_eq!(got, r["digest"].as_u64().unwrap(), "{name}: digest");
        checked += 1;
    }
    assert!(
        checked >= 380,
        "{checked} atoms checked against tensor-layouts"
    );
    assert!(gluon >= 1, "{gluon} AMD operands left to the Gluon check");
}

#[test]
fn every_cutedsl_atom_evaluates_as_the_dsl_prints_it() {
    let atoms = catalog();
    let (mut checked, mut dsl_only) = (0, 0);
    for r in records("cutedsl.jsonl") {
        let name = r["atom"].as_str().unwrap();
        let Some(a) = atoms.get(name) else {
            // A DSL instance (an N or a type) that the catalog does not name.
            dsl_only += 1;
            continue;
        };
        let text = r["layout"].as_str().unwrap();
        let Layout::Cute(dsl) = Layout::parse(text, None).unwrap() else {
            panic!("{name}: the DSL's {text} is not a CuTe layout");
        };
        let tv = tv_of(a).unwrap_or_else(|| panic!("{name}: not a TV layout"));
        match r.get("elem_bits").and_then(Value::as_i64) {
            Some(w) if a.in_bits => {
                let (t, dsl_t) = (tv.threads(), dsl.modes()[0].size());
                assert_eq!(t, dsl_t, "{name}: threads");
                assert_eq!(tv.layout().size(), dsl.size() * w, "{name}: bits");
                for i in 0..dsl.size() {
                    let (th, v) = (i % t, i / t);
                    let ours = offset(&tv, th + t * v * w);
                    assert_eq!(ours, w * dsl.eval_index(i).unwrap(), "{name}: element {i}");
                }
            }
            _ => {
                assert_eq!(tv.layout().size(), dsl.size(), "{name}: size");
                for i in 0..dsl.size() {
                    assert_eq!(
                        offset(&tv, i),
                        dsl.eval_index(i).unwrap(),
                        "{name}: index {i} ({text})"
                    );
                }
            }
        }
        checked += 1;
    }
    println!("{checked} atom operands checked against the CuTe DSL, {dsl_only} DSL-only");
    assert!(
        checked >= 300,
        "{checked} atom operands checked against the CuTe DSL"
    );
}

#[test]
fn every_gluon_amd_atom_is_the_layout_gluon_printed() {
    let atoms = catalog();
    let mut checked = 0;
    for r in records("tensor_layouts.jsonl") {
        let Some(text) = r.get("gluon_linear").and_then(Value::as_str) else {
            continue;
        };
        let name = r["atom"].as_str().unwrap();
        let a = &atoms[name];
        let shape: Vec<i64> = serde_json::from_value(r["shape"].clone()).unwrap();
        assert_eq!(a.layout, text, "{name}");
        assert_eq!(a.shape.as_deref(), Some(&shape[..]), "{name}");
        let l = Layout::parse(text, Some(&shape)).unwrap();
        // Every register and lane lands inside the tile.
        let dims = l.default_shape();
        for flat in 0..l.domain_size() {
            let mut rest = flat;
            let coord: Vec<i64> = dims
                .iter()
                .map(|e| {
                    let c = rest % e;
                    rest /= e;
                    c
                })
                .collect();
            for p in l.eval(None, &coord).unwrap() {
                for (axis, v) in p {
                    let d: usize = axis.as_str()[3..].parse().unwrap();
                    assert!((0..shape[d]).contains(&v), "{name}: {coord:?} -> {v}");
                }
            }
        }
        checked += 1;
    }
    assert!(checked >= 1, "{checked} AMD operands from Gluon");
}
