//! `#ttg.linear` with a tensor shape: fitted as Triton fits it (it used to widen the out-dim
//! silently, then to refuse; `triton_linear_fit.rs` checks the fit against Triton itself).

use layout::notation::linear::parse_attr;
use layout::LayoutError;

/// A register basis past the shape is removed, a lane basis past it becomes zero (a
/// broadcast), and the out-dims are the shape's.
#[test]
fn a_basis_past_the_shape_is_cut_as_triton_cuts_it() {
    let l = parse_attr(
        "#ttg.linear<{register=[[0,4]], lane=[[1,0],[0,1],[0,2],[2,0]]}>",
        Some(&[2, 4]),
    )
    .unwrap();
    assert_eq!(l.ins()[0].name, "register");
    assert!(l.ins()[0].bases.is_empty());
    assert_eq!(
        l.ins()[1].bases,
        vec![vec![1, 0], vec![0, 1], vec![0, 2], vec![0, 0]]
    );
    // dim0 (size 2 in the bases) is repeated to 4 in a new register basis.
    let l = parse_attr(
        "#ttg.linear<{register=[], lane=[[1,0],[0,1]]}>",
        Some(&[4, 2]),
    )
    .unwrap();
    assert_eq!(l.ins()[0].bases, vec![vec![2, 0]]);
    let sizes: Vec<i64> = l.outs().iter().map(|o| o.size()).collect();
    assert_eq!(sizes, vec![4, 2]);
}

#[test]
fn bases_inside_the_shape_still_parse_and_keep_its_sizes() {
    let l = parse_attr(
        "#ttg.linear<{register=[[0,2]], lane=[[1,0]]}>",
        Some(&[4, 4]),
    )
    .unwrap();
    let sizes: Vec<i64> = l.outs().iter().map(|o| o.size()).collect();
    assert_eq!(sizes, vec![4, 4]);
    // Without a shape the out-dims are inferred from the bases, as before.
    let l = parse_attr("#ttg.linear<{register=[[0,64]], lane=[[1,0]]}>", None).unwrap();
    let sizes: Vec<i64> = l.outs().iter().map(|o| o.size()).collect();
    assert_eq!(sizes, vec![2, 128]);
}

/// In-dims Triton does not have: the shape is the out-dim sizes, and a basis past it is an
/// error naming the basis and the shape (it used to widen the out-dim silently).
#[test]
fn a_basis_past_the_shape_of_a_non_triton_layout_is_an_error() {
    let text = "#ttg.linear<{reg=[[0,64]], thread=[[1,0]]}>";
    let Err(LayoutError::Shape { shape, why }) = parse_attr(text, Some(&[4, 4])) else {
        panic!("expected a shape error");
    };
    assert_eq!(shape, vec![4, 4]);
    assert!(why.contains("[0, 64]") && why.contains("reg"), "{why}");
    let l = parse_attr("#ttg.linear<{reg=[[0,2]], thread=[[1,0]]}>", Some(&[4, 4])).unwrap();
    assert_eq!(l.ins()[0].bases, vec![vec![0, 2]]);
}

/// Triton's parser reads only the in-dims of a `#ttg.linear` and ignores other keys; its
/// `test/TritonGPU/amd/invalid.mlir` writes `order = [1, 0]` (Triton 3.9 reads it so too).
#[test]
fn an_order_key_is_read_and_ignored_as_triton_does() {
    let bases = "register = [[1, 0], [2, 0]], lane = [[0, 0]], warp = [], block = []";
    let with = parse_attr(
        &format!("#ttg.linear<{{{bases}, order = [1, 0]}}>"),
        Some(&[4, 1]),
    )
    .unwrap();
    let without = parse_attr(&format!("#ttg.linear<{{{bases}}}>"), Some(&[4, 1])).unwrap();
    assert_eq!(with, without);
    let twice = format!("#ttg.linear<{{{bases}, order = [1, 0], order = [0, 1]}}>");
    assert!(parse_attr(&twice, None)
        .unwrap_err()
        .to_string()
        .contains("twice"));
    // An `order` holding bases is an in-dim of laycert's own, as any other name.
    let own = parse_attr("#ttg.linear<{order = [[1]]}>", None).unwrap();
    assert_eq!(own.ins()[0].name, "order");
}
