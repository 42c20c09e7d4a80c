//! Triton text pasted whole reads as Triton 3.9 builds it: a TTGIR tensor type
//! `tensor<128x64xf16, #ttg.blocked<{..}>>` (its shape and its encoding), a
//! `#ttg.shared_linear<{..}, alignment = 16>`, and Triton 3.3 to 3.5's Gluon `BlockedLayout`
//! with its CTA fields. Every case of `tests/data/triton/pasted.jsonl` (written by
//! `bench/peers/gen_triton_pasted.py`: the exact text Triton prints, and Triton's bases at the
//! case's shape) imports to exactly Triton's bases.

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
        let (names, want) = (triton_support::in_dims(c), triton_support::want_bases(c));
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

const BLOCKED: &str = "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], \
                       warpsPerCTA = [4, 1], order = [1, 0]}>";

#[test]
fn tensor_type_is_its_encoding_on_its_shape() {
    let typed = format!("tensor<128x64xf16, {BLOCKED}>");
    let l = Layout::parse(&typed, None).unwrap();
    assert_eq!(l, Layout::parse(BLOCKED, Some(&[128, 64])).unwrap());
    // The same shape given again agrees; another is an error naming both.
    assert_eq!(Layout::parse(&typed, Some(&[128, 64])).unwrap(), l);
    let e = refusal(&typed, Some(&[64, 64]));
    assert!(e.contains("[64, 64]") && e.contains("[128, 64]"), "{e}");
    // Pointer element types and other encodings.
    let ptrs = format!("tensor<128x64x!tt.ptr<f16>, {BLOCKED}>");
    assert_eq!(Layout::parse(&ptrs, None).unwrap(), l);
}

#[test]
fn tensor_types_triton_prints_import_to_tritons_bases() {
    assert_all_match("tensor_type", false, 120);
}

#[test]
fn shared_linear_is_its_bases_and_alignment_is_not_part_of_the_map() {
    let text = "#ttg.shared_linear<{offset = [[0, 1], [0, 2], [0, 4], [1, 0], [2, 0], [4, 0]]}, \
                alignment = 16>";
    let Layout::Linear(l) = Layout::parse(text, None).unwrap() else {
        panic!("a linear layout")
    };
    assert_eq!(
        l.in_dim("offset").unwrap().bases,
        vec![
            vec![0, 1],
            vec![0, 2],
            vec![0, 4],
            vec![1, 0],
            vec![2, 0],
            vec![4, 0]
        ]
    );
    assert_eq!(
        l.outs().iter().map(|o| o.size()).collect::<Vec<_>>(),
        [8, 8]
    );
    let other = text.replace("alignment = 16", "alignment = 1024");
    assert_eq!(
        Layout::parse(&other, None).unwrap(),
        Layout::Linear(l.clone())
    );
    // It prints back as it was written.
    let attr = layout::triton::parse_attr(text).unwrap();
    assert_eq!(attr.to_string(), text.replace("  ", ""));
}

#[test]
fn shared_linear_attributes_triton_prints_import_to_tritons_bases() {
    assert_all_match("shared_linear", false, 60);
    assert_all_match("shared_linear", true, 60);
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
fn tensor_type_near_misses_name_what_and_where() {
    let e = refusal("tensor<128x64xf16>", None);
    assert!(
        e.starts_with("TTGIR tensor type notation") && e.contains("encoding"),
        "{e}"
    );
    let e = refusal("tensor<128x64xf16, #blocked>", None);
    assert!(e.contains("--mlir") && e.ends_with("[#blocked]"), "{e}");
    let e = refusal(&format!("tensor<128x64xf16, {BLOCKED}"), None);
    assert!(e.contains("'>' closing the tensor type"), "{e}");
}

#[test]
fn shared_linear_near_misses_name_the_field() {
    let e = refusal(
        "#ttg.shared_linear<{offset = [[0, 1], [0, 2], [1, 0]]}>",
        None,
    );
    assert!(e.contains("alignment") && e.contains("missing"), "{e}");
    let e = refusal(
        "#ttg.shared_linear<{offset = [[0, 1], [0, 2], [1, 0]]}, alignment = 12>",
        None,
    );
    assert!(e.contains("12 is not a positive power of two"), "{e}");
    let e = refusal(
        "#ttg.shared_linear<{offset = [[0, 1], [0, 4]]}, alignment = 16>",
        None,
    );
    assert!(e.contains("surjective"), "{e}");
    let e = refusal(
        "#ttg.shared_linear<{offset = [[0, 1], [0, 2], [1, 0]]}, alignment = 16>",
        Some(&[4, 4]),
    );
    assert!(e.contains("[2, 4]"), "{e}");
    let e = refusal(
        &format!("{}, alignment = 16>", &BLOCKED[..BLOCKED.len() - 1]),
        Some(&[8, 8]),
    );
    assert!(e.contains("#ttg.blocked has none"), "{e}");
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
