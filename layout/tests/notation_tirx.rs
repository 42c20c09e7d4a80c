//! TIRx's own spellings of an Axe layout read as the `S[..]` form: the docstring form without
//! `S[..]` and the Python wrapper `TileLayout(S[...])` (both as found in TVM's TIRx docs).

use layout::notation::{axe, Notation};
use layout::Layout;

#[test]
fn tirx_docstring_form_reads_as_the_shard() {
    let bare = "(2, 8, 4, 2):(2@warpid, 4@laneid, 1@laneid, 1@m)";
    let full = "S[(2, 8, 4, 2):(2@warpid, 4@laneid, 1@laneid, 1@m)]";
    assert_eq!(Notation::detect(bare), Notation::Axe);
    assert_eq!(axe::parse(bare).unwrap(), axe::parse(full).unwrap());
    assert_eq!(
        Layout::parse(bare, None).unwrap(),
        Layout::parse(full, None).unwrap()
    );
}

#[test]
fn tile_layout_wrapper_reads_as_its_argument() {
    let wrapped = "TileLayout(S[(8, 8):(1@laneid, 8)] + R[4:1@warpid])";
    let inner = "S[(8, 8):(1@laneid, 8)] + R[4:1@warpid]";
    assert_eq!(Notation::detect(wrapped), Notation::Axe);
    assert_eq!(axe::parse(wrapped).unwrap(), axe::parse(inner).unwrap());
    assert!(axe::parse("TileLayout(S[8:1]").is_err());
}

#[test]
fn cute_layouts_without_axes_stay_cute() {
    assert_eq!(Notation::detect("(4,2):(2,1)"), Notation::Cute);
    assert_eq!(
        Notation::detect("((4,8),(2,2)):((32,1),(16,8)) -> (16,8)"),
        Notation::Tv
    );
}
