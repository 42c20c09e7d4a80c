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

/// The three disagreements issue 16 reported, with Triton 3.9's answers (Gluon's
/// `to_linear_layout` of `BlockedLayout([2,1,1,1], [4,2,2,2], [1,2,2,1], [3,2,1,0])` at
/// `[2,1,1,1]`, of `SliceLayout(1, BlockedLayout([1,4], [8,4], [4,1], [1,0]))` at `[1]`, and of
/// `SliceLayout(d, NVMMADistributedLayout([2,0], [2,2], [16,8]))` at `[8]`).
/// An attribute, a shape, and Triton's register, lane and warp bases there.
type Expected = (String, Vec<i64>, [Vec<Vec<i64>>; 3]);

#[test]
fn issue_16_small_shapes_broadcast_as_triton_does() {
    let mma = "#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>";
    let cases: [Expected; 4] = [
        (
            "#ttg.blocked<{sizePerThread = [2, 1, 1, 1], threadsPerWarp = [4, 2, 2, 2], warpsPerCTA = [1, 2, 2, 1], order = [3, 2, 1, 0]}>".into(),
            vec![2, 1, 1, 1],
            [vec![vec![1, 0, 0, 0]], vec![vec![0; 4]; 5], vec![vec![0; 4]; 2]],
        ),
        (
            "#ttg.slice<{dim = 1, parent = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>}>".into(),
            vec![1],
            [vec![], vec![vec![0]; 5], vec![vec![0]; 2]],
        ),
        (
            format!("#ttg.slice<{{dim = 0, parent = {mma}}}>"),
            vec![8],
            [vec![vec![1]], vec![vec![2], vec![4], vec![0], vec![0], vec![0]], vec![vec![0]; 2]],
        ),
        (
            format!("#ttg.slice<{{dim = 1, parent = {mma}}}>"),
            vec![8],
            [vec![], vec![vec![0], vec![0], vec![1], vec![2], vec![4]], vec![vec![0]; 2]],
        ),
    ];
    for (attr, shape, want) in cases {
        let l = layout::triton::parse_attr(&attr)
            .and_then(|a| a.to_linear(&shape))
            .unwrap();
        let got = triton_support::our_bases(&l, &["register", "lane", "warp"]);
        assert_eq!(got, want.to_vec(), "{attr} on {shape:?}");
    }
}
