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

/// C++ CuTe as written in CUTLASS headers and printed by `print()`.
#[test]
fn cute_cpp_types_and_printed_pointer_tags_read_as_the_notation() {
    use layout::notation::cute::{parse_layout, parse_swizzled};
    let cpp = "Layout<Shape<Shape<_4,_8>,Shape<_2,_2>>,Stride<Stride<_32,_1>,Stride<_16,_8>>>";
    assert_eq!(
        parse_layout(cpp).unwrap(),
        parse_layout("((4,8),(2,2)):((32,1),(16,8))").unwrap()
    );
    assert_eq!(
        parse_layout("Layout<Shape<_8,_1024>, Stride<_1024,_1>>").unwrap(),
        parse_layout("(8,1024):(1024,1)").unwrap()
    );
    assert_eq!(
        parse_layout("Layout<Shape<_4,Int<8>>>").unwrap(),
        parse_layout("(4,8):(1,4)").unwrap()
    );
    let composed =
        "ComposedLayout<Swizzle<3,4,3>, smem_ptr_flag, Layout<Shape<_8,_64>,Stride<_64,_1>>>";
    let printed = "Sw<3,4,3> o smem_ptr[16b](unset) o (_8,_64):(_64,_1)";
    let want = parse_swizzled("Sw<3,4,3> o (8,64):(64,1)").unwrap();
    assert_eq!(parse_swizzled(composed).unwrap(), want);
    assert_eq!(parse_swizzled(printed).unwrap(), want);
    assert_eq!(
        parse_swizzled("Sw<3,4,3> o smem_ptr16b o (_8,_64):(_64,_1)").unwrap(),
        want
    );
    assert_eq!(
        Layout::parse(composed, None).unwrap(),
        Layout::Swizzled(want)
    );
    assert!(parse_layout("Layout<Shape<_4,_8>,Stride<_1>").is_err());
    assert!(parse_layout("Layout<Frobnicate<_4>>").is_err());
}
