//! `#ttg.generic_linear`, Triton 3.9's print of a distributed linear layout whose bases are not
//! a permutation (`tests/data/triton/generic_linear.jsonl`, written by
//! `bench/peers/gen_triton_generic_linear.py` from MLIR's print of Gluon-built layouts): each
//! text imports to exactly its bases, as the same bases spelled `#ttg.linear` do.

use layout::Layout;
use serde_json::Value;

mod triton_support;
use triton_support::ints;

fn cases() -> Vec<Value> {
    triton_support::cases("generic_linear.jsonl")
}

#[test]
fn oracle_has_xor_bases_in_every_rank() {
    let all = cases();
    assert!(all.len() >= 50, "{} cases", all.len());
    for rank in 1..=3 {
        let n = all
            .iter()
            .filter(|c| ints(&c["shape"]).len() == rank)
            .count();
        assert!(n >= 5, "{n} cases of rank {rank}");
    }
    assert!(all.iter().all(|c| c["attr"]
        .as_str()
        .unwrap()
        .starts_with("#ttg.generic_linear<{")));
}

#[test]
fn triton_printed_text_imports_to_its_bases() {
    triton_support::check_imports(&cases());
}

/// The same text spelled `#ttg.linear` is the same layout, at top level (the linear notation)
/// and as the parent of a slice (a Triton attribute).
#[test]
fn generic_linear_means_what_linear_means() {
    for c in cases() {
        let generic = c["attr"].as_str().unwrap();
        let plain = generic.replace("#ttg.generic_linear<", "#ttg.linear<");
        let shape = ints(&c["shape"]);
        let parse = |t: &str| match Layout::parse(t, Some(&shape)).unwrap() {
            Layout::Linear(l) => l,
            other => panic!("{t}: not linear: {other:?}"),
        };
        assert!(parse(generic).same_map(&parse(&plain)), "{generic}");
        if shape.len() > 1 {
            let slice = |p: &str| format!("#ttg.slice<{{dim = 0, parent = {p}}}>");
            let import = |t: &str| {
                layout::triton::parse_attr(t)
                    .and_then(|a| a.to_linear(&shape[1..]))
                    .map(|l| l.to_string())
            };
            let (g, p) = (import(&slice(generic)), import(&slice(&plain)));
            assert_eq!(g.is_ok(), p.is_ok(), "{generic}: {g:?} vs {p:?}");
            if let (Ok(g), Ok(p)) = (g, p) {
                assert_eq!(g, p, "{generic}");
            }
        }
    }
}

/// laycert prints these layouts as Triton 3.9 prints them: `#ttg.generic_linear`, which Triton
/// reads back (its `#ttg.linear` verifier refuses bases that are not a permutation). The same
/// bases made a permutation print as `#ttg.linear` (`triton_oracle.rs` checks that spelling
/// against MLIR's print of 300-odd layouts).
#[test]
fn laycert_prints_what_triton_prints() {
    for c in cases() {
        let attr = c["attr"].as_str().unwrap();
        let l = layout::notation::linear::parse_attr(attr, None).unwrap();
        assert!(!layout::notation::linear::is_permutation(&l), "{attr}");
        assert_eq!(layout::notation::linear::print_attr(&l).unwrap(), attr);
    }
    let perm = "#ttg.linear<{register = [[0, 0], [1, 0]], lane = [[0, 1], [2, 0], [0, 2], [4, 0], \
                [0, 4]], warp = [[0, 0]], block = []}>";
    for (text, printed) in [
        (perm, perm.to_string()),
        // A repeated basis and a basis with two bits: generic, as MLIR printed these two.
        (
            "#ttg.linear<{register = [[1, 0], [1, 0]], lane = [[0, 1], [2, 0], [0, 2], [4, 0], \
             [0, 4]], warp = [], block = []}>",
            "#ttg.generic_linear<{register = [[1, 0], [1, 0]], lane = [[0, 1], [2, 0], [0, 2], \
             [4, 0], [0, 4]], warp = [], block = []}>"
                .to_string(),
        ),
        (
            "#ttg.linear<{register = [[3, 0], [2, 0]], lane = [[0, 1]], warp = [], block = []}>",
            "#ttg.generic_linear<{register = [[3, 0], [2, 0]], lane = [[0, 1]], warp = [], \
             block = []}>"
                .to_string(),
        ),
        // Other in-dims than Triton's distributed ones keep laycert's one spelling.
        (
            "#ttg.linear<{offset = [[3, 0], [0, 1]]}>",
            "#ttg.linear<{offset = [[3, 0], [0, 1]]}>".to_string(),
        ),
    ] {
        let l = layout::notation::linear::parse_attr(text, None).unwrap();
        assert_eq!(layout::notation::linear::print_attr(&l).unwrap(), printed);
    }
}

#[test]
fn other_spellings_stay_refused() {
    for bad in [
        "#ttg.generic<{register = [[1]], lane = [[3]]}>",
        "#ttg.generic_linear_x<{register = [[1]], lane = [[3]]}>",
        "#ttg.generic_linear<{register = [[1]], lane = [[3]]}",
    ] {
        assert!(Layout::parse(bad, Some(&[4])).is_err(), "{bad}");
    }
    // As a parent, the fields are Triton's: an unknown one is named.
    let e = layout::triton::parse_attr(
        "#ttg.slice<{dim = 0, parent = #ttg.generic_linear<{register = [[1, 0]], lanes = []}>}>",
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("lanes"), "{e}");
}
