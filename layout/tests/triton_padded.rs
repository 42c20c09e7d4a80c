//! `#ttg.padded_shared` against Triton 3.9: each case of `tests/data/triton/padded.jsonl`
//! (written by `bench/peers/gen_triton_padded.py`) is the attribute as MLIR prints it, Gluon's
//! offset bases and the interval/padding pairs. The address of every tensor element must be
//! the padded address of the offset that Gluon's bases map to it, computed here by the
//! documented rule (after every `interval` elements `padding` are inserted; paddings add up).

use layout::Layout;
use serde_json::Value;

mod triton_support;

/// Element -> padded address, from offset bases (XOR of the bases of the offset's set bits).
fn reference(c: &Value) -> Vec<(Vec<i64>, i64)> {
    let shape = triton_support::ints(&c["shape"]);
    let bases = triton_support::bases(&c["offset"]);
    let pairs = triton_support::bases(&c["pairs"]);
    let mut out = Vec::new();
    for o in 0i64..(1 << bases.len()) {
        let mut elem = vec![0i64; shape.len()];
        for (i, b) in bases.iter().enumerate() {
            if o >> i & 1 == 1 {
                for (e, v) in elem.iter_mut().zip(b) {
                    *e ^= v;
                }
            }
        }
        let pad: i64 = pairs.iter().map(|p| (o / p[0]) * p[1]).sum();
        out.push((elem, o + pad));
    }
    out
}

#[test]
fn padded_shared_addresses_match_tritons_offsets_and_padding() {
    let cases = triton_support::cases("padded.jsonl");
    assert!(cases.len() >= 50);
    let mut forms = std::collections::BTreeSet::new();
    for c in &cases {
        let attr = c["attr"].as_str().unwrap();
        forms.insert(attr.contains("order").to_string());
        let shape = triton_support::ints(&c["shape"]);
        let Layout::Cute(l) = Layout::parse(attr, Some(&shape)).unwrap() else {
            panic!("{attr}: expected a strided layout of addresses");
        };
        assert_eq!(layout::triton::parse_attr(attr).unwrap().to_string(), attr);
        for (elem, addr) in reference(c) {
            assert_eq!(l.eval(&shape, &elem).unwrap(), addr, "{attr} at {elem:?}");
        }
    }
    assert_eq!(forms.len(), 2, "both the order and the offset forms");
}
