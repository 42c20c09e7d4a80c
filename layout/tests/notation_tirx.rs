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

/// TVM scripts name the wrapper with its module: `T.TileLayout(S[..])` (was refused with a
/// "Gluon layout constructor" error, while the same text without `T.` was read).
#[test]
fn tile_layout_wrapper_reads_with_its_module_prefix() {
    let inner = Layout::parse("S[(8,8):(8,1)]", None).unwrap();
    for wrapped in [
        "T.TileLayout(S[(8,8):(8,1)])",
        "Tx.TileLayout(S[(8,8):(8,1)])",
        "tvm.tirx.layout.TileLayout (S[(8,8):(8,1)])",
    ] {
        assert_eq!(Notation::detect(wrapped), Notation::Axe, "{wrapped}");
        assert_eq!(Layout::parse(wrapped, None).unwrap(), inner, "{wrapped}");
    }
    // Near misses name the Axe notation and what is missing.
    let e = Layout::parse("T.TileLayout(S[(8,8):(8,1)]", None)
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("Axe notation: expected ')' closing TileLayout(..)"),
        "{e}"
    );
    // An Axe shard inside a Gluon constructor says where it belongs.
    let e = Layout::parse("ttgl.BlockedLayout(S[(8,8):(8,1)])", None)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("S[..] is an Axe shard") && e.contains("TileLayout"),
        "{e}"
    );
}

/// TVM's `tvm/tirx/layout.py` documents `S[8, 4, 2]` (extents only) and its tests write
/// `TileLayout(S[4,])`: Python's subscript tuple without parentheses.
#[test]
fn python_subscript_tuple_reads_as_the_parenthesized_extents() {
    for (python, tuple) in [
        ("S[8, 4, 2]", "S[(8, 4, 2)]"),
        ("S[8, 4, 2,]", "S[(8,4,2):(8,2,1)]"),
        ("TileLayout(S[4,])", "S[(4,)]"),
        ("S[1,] + 2@warpid", "S[1:1] + 2@warpid"),
    ] {
        assert_eq!(
            axe::parse(python).unwrap(),
            axe::parse(tuple).unwrap(),
            "{python}"
        );
    }
    // Strides after a bare tuple would be a slice inside a tuple in Python: refused, and the
    // message says how to write it.
    let e = axe::parse("S[8, 4:1]").unwrap_err().to_string();
    assert!(
        e.contains("S[(8, 4):(4, 1)]") && e.contains("bytes 6..7"),
        "{e}"
    );
    // A replica's extents keep their parentheses.
    assert!(axe::parse("S[4] + R[2, 2:(1, 2)]").is_err());
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
    // CuTe swizzles the BYTE address behind a pointer flag (cute/pointer_flagged.hpp:
    // `smem_ptr_flag` is `smem_ptr_flag_bits<1>`; `as_position_independent_swizzle_layout`
    // recasts the swizzle from bytes to the flag's element width). On 16-bit elements
    // Sw<3,4,3> of bytes is Sw<3,3,3>; on bits it is Sw<3,7,3>.
    let composed =
        "ComposedLayout<Swizzle<3,4,3>, smem_ptr_flag, Layout<Shape<_8,_64>,Stride<_64,_1>>>";
    let composed16 = "ComposedLayout<Swizzle<3,4,3>, smem_ptr_flag_bits<16>, Layout<Shape<_8,_64>,Stride<_64,_1>>>";
    let printed = "Sw<3,4,3> o smem_ptr[16b](unset) o (_8,_64):(_64,_1)";
    let elements16 = parse_swizzled("Sw<3,3,3> o (8,64):(64,1)").unwrap();
    let bits = parse_swizzled("Sw<3,7,3> o (8,64):(64,1)").unwrap();
    assert_eq!(parse_swizzled(composed).unwrap(), bits);
    assert_eq!(parse_swizzled(composed16).unwrap(), elements16);
    assert_eq!(parse_swizzled(printed).unwrap(), elements16);
    assert_eq!(
        parse_swizzled("Sw<3,4,3> o smem_ptr16b o (_8,_64):(_64,_1)").unwrap(),
        elements16
    );
    assert_eq!(
        parse_swizzled("Sw<3,4,3> o smem_ptr[4b](unset) o (_8,_256):(_256,_1)").unwrap(),
        parse_swizzled("Sw<3,5,3> o (8,256):(256,1)").unwrap()
    );
    assert_eq!(
        Layout::parse(composed16, None).unwrap(),
        Layout::Swizzled(elements16)
    );
    // Without a pointer the swizzle acts on L's own offsets, and an offset is kept.
    assert_eq!(
        parse_swizzled("ComposedLayout<Swizzle<3,4,3>, _32, Layout<Shape<_8,_64>,Stride<_64,_1>>>")
            .unwrap(),
        parse_swizzled("Sw<3,4,3> o 32 o (8,64):(64,1)").unwrap()
    );
    // A byte swizzle that moves bits inside one 128-bit element is not an element map.
    let e = parse_swizzled("Sw<3,2,3> o smem_ptr[128b](unset) o (8,8):(8,1)").unwrap_err();
    assert!(
        e.to_string().contains("keeps 128-bit elements whole"),
        "{e}"
    );
    assert!(parse_layout("Layout<Shape<_4,_8>,Stride<_1>").is_err());
    assert!(parse_layout("Layout<Frobnicate<_4>>").is_err());
}
