//! `#ttg.linear` with a tensor shape: a basis outside the shape is a parse error naming the
//! basis and the shape (it used to widen the out-dim silently).

use layout::notation::linear::parse_attr;
use layout::LayoutError;

#[test]
fn a_basis_past_the_shape_is_an_error_naming_basis_and_shape() {
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
