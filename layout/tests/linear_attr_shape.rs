//! `#ttg.linear` with a tensor shape other than the one its bases fill is fitted to it as
//! Triton 3.9 fits it (checked by Gluon; the generated suite is `triton_oracle_amd.rs`): bases
//! past the shape hold copies (register bases past it go), and a larger shape repeats the
//! layout in registers. Bases with holes (not surjective onto their own extent, which Triton
//! refuses to build) past the shape are a parse error naming the basis and the shape.

use layout::notation::linear::parse_attr;
use layout::LayoutError;

#[test]
fn a_basis_of_a_holed_layout_past_the_shape_is_an_error_naming_basis_and_shape() {
    let text = "#ttg.linear<{register=[[0,64]], lane=[[1,0]]}>";
    let Err(LayoutError::Parse(e)) = parse_attr(text, Some(&[4, 4])) else {
        panic!("expected a parse error");
    };
    assert!(
        e.expected.contains("[0, 64]") && e.expected.contains("[4, 4]"),
        "{e}"
    );
    assert_eq!(&text[e.span.clone()], "[0,64]");
}

fn bases(text: &str, shape: &[i64], dim: &str) -> Vec<Vec<i64>> {
    let l = parse_attr(text, Some(shape)).unwrap();
    let sizes: Vec<i64> = l.outs().iter().map(|o| o.size()).collect();
    assert_eq!(sizes, shape, "{text}: out-dim sizes are the tensor shape");
    l.in_dim(dim).unwrap().bases.clone()
}

#[test]
fn a_basis_past_the_shape_is_fitted_as_triton_does() {
    // Gluon: DistributedLinearLayout(reg_bases=[[0,1],[0,2]], lane_bases=[[1,0]], ...,
    // shape=[2,4]) at [4,2] gives register [[0,1],[2,0]], lane [[1,0]].
    let text = "#ttg.linear<{register=[[0,1],[0,2]], lane=[[1,0]]}>";
    assert_eq!(
        bases(text, &[4, 2], "register"),
        vec![vec![0, 1], vec![2, 0]]
    );
    assert_eq!(bases(text, &[4, 2], "lane"), vec![vec![1, 0]]);
    // Smaller than the bases along both dims: lanes hold copies, registers go.
    assert_eq!(bases(text, &[1, 2], "register"), vec![vec![0, 1]]);
    assert_eq!(bases(text, &[1, 2], "lane"), vec![vec![0, 0]]);
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
