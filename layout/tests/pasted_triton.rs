//! Triton text pasted whole reads as Triton builds it: Triton 3.3 to 3.5's Gluon
//! `BlockedLayout` with its CTA fields is the attribute with `CTAsPerCGA`, `CTASplitNum`,
//! `CTAOrder`. The cases of `tests/data/triton/pasted.jsonl` (written by
//! `bench/peers/gen_triton_pasted.py`: the exact text, and Triton 3.9's bases at the case's
//! shape) of each kind read here import to exactly Triton's bases.

use layout::{Layout, LayoutError};
use serde_json::Value;

mod triton_support;

/// Mismatches of the cases of `kind`; `with_shape` passes the case's shape as `--shape` would.
fn mismatches(kind: &str, with_shape: bool) -> (usize, Vec<String>) {
    let cases: Vec<Value> = triton_support::cases("pasted.jsonl")
        .into_iter()
        .filter(|c| c["kind"] == kind)
        .collect();
    let mut failures = Vec::new();
    for c in &cases {
        let text = c["text"].as_str().unwrap();
        let shape = triton_support::ints(&c["shape"]);
        let names = triton_support::in_dims(c);
        let want: Vec<_> = names
            .iter()
            .map(|k| triton_support::bases(&c[*k]))
            .collect();
        match Layout::parse(text, with_shape.then_some(shape.as_slice())) {
            Ok(Layout::Linear(l)) => {
                let got = triton_support::our_bases(&l, names);
                let outs: Vec<i64> = l.outs().iter().map(|o| o.size()).collect();
                if got != want || outs != shape {
                    failures.push(format!(
                        "{text} on {shape:?}:\n  want {want:?}\n  got  {got:?} on {outs:?}"
                    ));
                }
            }
            Ok(other) => failures.push(format!("{text}: read as {:?}", other.notation())),
            Err(e) => failures.push(format!("{text} on {shape:?}: {e}")),
        }
    }
    (cases.len(), failures)
}

fn assert_all_match(kind: &str, with_shape: bool, at_least: usize) {
    let (n, failures) = mismatches(kind, with_shape);
    assert!(n >= at_least, "{n} {kind} cases");
    assert!(
        failures.is_empty(),
        "{} of {n} {kind} cases mismatch:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn refusal(text: &str, shape: Option<&[i64]>) -> String {
    match Layout::parse(text, shape) {
        Err(LayoutError::Parse(p)) => format!("{p} [{}]", &text[p.span.clone()]),
        Err(e) => e.to_string(),
        Ok(l) => panic!("{text}: read as {}", l.print()),
    }
}

#[test]
fn older_gluon_blocked_layout_is_the_attribute_with_its_cta_fields() {
    let old = "ttgl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0], [2, 1], [2, 1], [1, 0])";
    let attr = "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = \
                [4, 1], order = [1, 0], CTAsPerCGA = [2, 1], CTASplitNum = [2, 1], CTAOrder = [1, 0]}>";
    assert_eq!(
        layout::triton::gluon::to_mlir(old).unwrap().0,
        attr.replace("                ", "")
    );
    let shape = [256, 64];
    assert_eq!(
        Layout::parse(old, Some(&shape)).unwrap(),
        Layout::parse(attr, Some(&shape)).unwrap()
    );
    // A field left out takes Gluon's default (cta_split_num = [1] * rank), not the attribute's
    // (CTASplitNum = CTAsPerCGA): two CTAs holding copies, not splitting dim 0.
    let partial = "ttgl.BlockedLayout(size_per_thread=[1, 8], threads_per_warp=[4, 8], \
                   warps_per_cta=[4, 1], order=[1, 0], ctas_per_cga=[2, 1])";
    assert_eq!(
        layout::triton::gluon::to_mlir(partial).unwrap().0,
        "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], \
         order = [1, 0], CTAsPerCGA = [2, 1], CTASplitNum = [1, 1], CTAOrder = [1, 0]}>"
    );
}

#[test]
fn older_gluon_blocked_layouts_import_to_tritons_bases() {
    assert_all_match("gluon_old", true, 200);
}

#[test]
fn older_gluon_near_misses_name_the_arguments() {
    let e = refusal(
        "ttgl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0], [1, 1], [1, 1], [1, 0], [1])",
        Some(&[8, 8]),
    );
    assert!(e.contains("at most 7 arguments"), "{e}");
    let e = refusal(
        "ttgl.BlockedLayout(size_per_thread=[1, 8], threads_per_warp=[4, 8], \
         warps_per_cta=[4, 1], order=[1, 0], cta_layout=[1, 1])",
        Some(&[8, 8]),
    );
    assert!(
        e.contains("Gluon layout constructor")
            && e.contains("ctas_per_cga")
            && e.contains("not cta_layout"),
        "{e}"
    );
}
