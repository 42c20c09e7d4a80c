//! Differential test against Triton itself: every case of `tests/data/triton/layouts.jsonl`
//! (written by `bench/peers/gen_triton_layouts.py` from Triton 3.9's own conversion) must import
//! to exactly Triton's bases, and its attribute text must print back unchanged. Cases that carry
//! Triton's `LinearLayout::toString()` text must parse to the same bases and print back exactly,
//! and MLIR's `#ttg.linear` print of the same bases must parse to the import and print back.
//! Also the cross-system facts of spec/cute.md section 4: CuTe SM80 and GMMA C layouts equal
//! Triton MMAv2 (16x8) and MMAv3 (64x16) on every (thread, value).

use layout::linear::LinearLayout;
use layout::notation::linear::{
    parse_attr as parse_linear, parse_to_string, print_attr, print_to_string,
};
use layout::Layout;
use serde_json::Value;

mod triton_support;
use triton_support::{bases, ints};

const DIMS: [&str; 4] = ["register", "lane", "warp", "block"];

fn cases() -> Vec<Value> {
    triton_support::cases("layouts.jsonl")
}

/// The bases of in-dims `register, lane, warp, block` of a layout, in that order.
fn our_bases(l: &LinearLayout) -> Vec<Vec<Vec<i64>>> {
    triton_support::our_bases(l, &DIMS)
}

fn import(attr: &str, shape: &[i64]) -> LinearLayout {
    match Layout::parse(attr, Some(shape)) {
        Ok(Layout::Linear(l)) => l,
        other => panic!("{attr} on {shape:?}: {other:?}"),
    }
}

#[test]
fn oracle_has_every_kind() {
    let all = cases();
    assert!(all.len() >= 300, "{} cases", all.len());
    for kind in ["#ttg.blocked<", "versionMajor = 2", "versionMajor = 3"] {
        let n = all
            .iter()
            .filter(|c| c["attr"].as_str().unwrap().contains(kind))
            .count();
        assert!(n >= 50, "{n} cases of {kind}");
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

#[test]
fn linear_attribute_text_matches_mlir() {
    for c in cases() {
        let text = c["linear_attr"].as_str().unwrap();
        let shape = ints(&c["shape"]);
        let l = parse_linear(text, Some(&shape)).unwrap();
        assert_eq!(l, import(c["attr"].as_str().unwrap(), &shape), "{text}");
        assert_eq!(print_attr(&l).unwrap(), text);
    }
}

#[test]
fn to_string_text_matches_triton() {
    let mut seen = 0;
    for c in cases().iter().filter(|c| c.get("to_string").is_some()) {
        let text = c["to_string"].as_str().unwrap();
        let l = parse_to_string(text).unwrap();
        let want: Vec<_> = ["register", "lane", "warp", "block"]
            .iter()
            .map(|k| bases(&c[*k]))
            .collect();
        assert_eq!(our_bases(&l), want, "{text}");
        let outs: Vec<i64> = l.outs().iter().map(|o| o.size()).collect();
        assert_eq!(outs, ints(&c["to_string_shape"]));
        assert_eq!(print_to_string(&l), text);
        seen += 1;
    }
    assert!(seen >= 20, "{seen} toString cases");
}

#[test]
fn mma_v2_16x16_one_warp_matches_triton_fact() {
    let l = import(
        "#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [1, 1], instrShape = [16, 8]}>",
        &[16, 16],
    );
    let lanes = vec![vec![0, 2], vec![0, 4], vec![1, 0], vec![2, 0], vec![4, 0]];
    assert_eq!(
        our_bases(&l),
        vec![
            vec![vec![0, 1], vec![8, 0], vec![0, 8]],
            lanes,
            vec![],
            vec![]
        ]
    );
}

#[test]
fn mma_v2_16x8_one_warp_matches_triton_fact() {
    let l = import(
        "#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [1, 1], instrShape = [16, 8]}>",
        &[16, 8],
    );
    let lanes = vec![vec![0, 2], vec![0, 4], vec![1, 0], vec![2, 0], vec![4, 0]];
    assert_eq!(
        our_bases(&l),
        vec![vec![vec![0, 1], vec![8, 0]], lanes, vec![], vec![]]
    );
}

/// CuTe's TV layout and Triton's import agree on every `(thread, value)` pair: thread `t` is
/// lane `t % 32` of warp `t / 32`, value `v` is register `v`.
fn assert_same_as_cute_tv(tv: &str, attr: &str, shape: &[i64]) {
    let Ok(Layout::Tv(cute)) = Layout::parse(tv, None) else {
        panic!("{tv} is a TV layout")
    };
    let triton = import(attr, shape);
    assert_eq!(
        cute.threads(),
        triton.in_size("lane") * triton.in_size("warp")
    );
    assert_eq!(cute.values(), triton.in_size("register"));
    for t in 0..cute.threads() {
        for v in 0..cute.values() {
            let ours = triton.apply_named(&[("register", v), ("lane", t % 32), ("warp", t / 32)]);
            assert_eq!(
                cute.eval(t, v).unwrap(),
                ours.unwrap(),
                "thread {t}, value {v}"
            );
        }
    }
}

#[test]
fn mma_v2_16x8_equals_cute_sm80_c() {
    assert_same_as_cute_tv(
        "((4,8),(2,2)):((32,1),(16,8)) -> (16,8)",
        "#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [1, 1], instrShape = [16, 8]}>",
        &[16, 8],
    );
}

#[test]
fn mma_v3_64x16_equals_cute_gmma_c() {
    assert_same_as_cute_tv(
        "((4,8,4),(2,2,2)):((128,1,16),(64,8,512)) -> (64,16)",
        "#ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 16, 16]}>",
        &[64, 16],
    );
}
