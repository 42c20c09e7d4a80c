//! Gluon constructor text (`ttgl.BlockedLayout(size_per_thread=[..], ...)`, keyword and
//! positional forms, nested parents) reads as the layout Triton 3.9 builds from it: every case of
//! `tests/data/triton/gluon_text.jsonl` (written by `bench/peers/gen_triton_gluon_text.py`)
//! imports to exactly Triton's bases.

use layout::Layout;
use serde_json::Value;

mod triton_support;

fn check(c: &Value, form: &str) -> Option<String> {
    let text = c[form].as_str().unwrap();
    let shape = triton_support::ints(&c["shape"]);
    let (names, want) = (triton_support::in_dims(c), triton_support::want_bases(c));
    match Layout::parse(text, Some(&shape)) {
        Ok(Layout::Linear(l)) => {
            let got = triton_support::our_bases(&l, names);
            (got != want).then(|| format!("{text} on {shape:?}:\n  want {want:?}\n  got  {got:?}"))
        }
        Ok(other) => Some(format!("{text}: read as {:?}", other.notation())),
        Err(e) => Some(format!("{text} on {shape:?}: {e}")),
    }
}

#[test]
fn keyword_and_positional_gluon_text_imports_to_tritons_bases() {
    let cases = triton_support::cases("gluon_text.jsonl");
    assert!(cases.len() >= 400, "{} cases", cases.len());
    let mut failures = Vec::new();
    for c in &cases {
        for form in ["keyword", "positional"] {
            failures.extend(check(c, form));
        }
    }
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn gluon_text_reads_as_the_attribute_gluon_prints() {
    let (mlir, shape) = layout::triton::gluon::to_mlir(
        "ttgl.BlockedLayout(size_per_thread=[1, 4], threads_per_warp=[8, 4], warps_per_cta=[4, 1], order=[1, 0])",
    )
    .unwrap();
    assert_eq!(
        mlir,
        "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>"
    );
    assert_eq!(shape, None);
    let (mlir, _) = layout::triton::gluon::to_mlir(
        "gl.SliceLayout(1, gl.DotOperandLayout(operand_index=0, parent=gl.NVMMADistributedLayout(version=[2, 0], warps_per_cta=[4, 1], instr_shape=[16, 8]), k_width=2))",
    )
    .unwrap();
    assert_eq!(
        mlir,
        "#ttg.slice<{dim = 1, parent = #ttg.dot_op<{opIdx = 0, parent = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 8]}>, kWidth = 2}>}>"
    );
}

#[test]
fn bad_gluon_text_is_an_error_naming_the_argument() {
    let err = |t: &str| Layout::parse(t, Some(&[16, 16])).unwrap_err().to_string();
    let e = err(
        "ttgl.BlockedLayout(size_per_thread=[1, 1], threads_per_warp=[4, 8], warps_per_cta=[1, 1])",
    );
    assert!(e.contains("order"), "{e}");
    let e = err("ttgl.BlockedLayout(size_per_thread=[1, 1], threads_per_warp=[4, 8], warps_per_cta=[1, 1], order=[1, 0], ordre=[0])");
    assert!(e.contains("ordre") && e.contains("size_per_thread"), "{e}");
    let e = err("ttgl.BlockedLayout([1, 1], size_per_thread=[1, 1], threads_per_warp=[4, 8], warps_per_cta=[1, 1], order=[1, 0])");
    assert!(e.contains("size_per_thread"), "{e}");
    let e = err("ttgl.FancyLayout(1)");
    assert!(
        e.contains("BlockedLayout") && e.contains("FancyLayout"),
        "{e}"
    );
    let e = err("ttgl.BlockedLayout(size_per_thread=[1, 1], order=[1, 0], threads_per_warp=[4, 8], warps_per_cta=[1, 1], order=[0, 1])");
    assert!(e.contains("twice"), "{e}");
    assert!(Layout::parse("ttgl.BlockedLayout(size_per_thread=[1, 1]", None).is_err());
}
