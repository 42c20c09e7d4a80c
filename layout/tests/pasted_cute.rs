//! Swizzled layouts whose negative strides an offset makes up for read as CuTe reads them
//! (`Sw<3,3,3> o 511 o (8,64):(-64,-1)`): a swizzle acts on addresses, so every offset the
//! layout reaches must be non-negative, and one that is not is refused naming the smallest.

use layout::{Layout, LayoutError};

fn parse(text: &str) -> Layout {
    Layout::parse(text, None).unwrap_or_else(|e| panic!("{text}: {e}"))
}

/// The offset at every flat (colexicographic) index.
fn offsets(l: &Layout) -> Vec<i64> {
    match l {
        Layout::Cute(c) => (0..c.size()).map(|i| c.eval_index(i).unwrap()).collect(),
        Layout::Swizzled(s) => s.eval_all().unwrap(),
        other => panic!("{}: not a CuTe layout", other.print()),
    }
}

/// The error of `text`, rendered.
fn refusal(text: &str) -> String {
    match Layout::parse(text, None) {
        Err(LayoutError::Parse(p)) => format!("{p} [{}]", &text[p.span.clone()]),
        Err(e) => e.to_string(),
        Ok(l) => panic!("{text}: read as {}", l.print()),
    }
}

#[test]
fn swizzled_layouts_with_negative_strides_read_when_no_offset_is_negative() {
    // 511 - 64 i - j >= 0 on (8,64): the smallest offset, at (7, 63), is 0.
    let l = parse("Sw<3,3,3> o 511 o (8,64):(-64,-1)");
    let v = offsets(&l);
    // (0,0): sw(511) = 511 ^ ((511 & 0b111000000) >> 3) = 511 ^ 56 = 455.
    assert_eq!(v[0], 455);
    // (7,63): sw(0) = 0.
    assert_eq!(v[511], 0);
    // The -5 is on a mode of extent 1: it never contributes.
    let l = parse("Sw<1,2,3> o (4,1,32):(1,-5,4)");
    assert_eq!(
        offsets(&l),
        (0..128).map(|o| o ^ ((o & 32) >> 3)).collect::<Vec<_>>()
    );
    // C++ prints a static negative as `_-1`.
    assert_eq!(
        parse("Sw<3,3,3> o _511 o (_8,_64):(_-64,_-1)"),
        parse("Sw<3,3,3> o 511 o (8,64):(-64,-1)")
    );
}

#[test]
fn swizzled_near_misses_name_the_smallest_offset() {
    let e = refusal("Sw<3,3,3> o 510 o (8,64):(-64,-1)");
    assert!(
        e.contains("CuTe notation") && e.contains("the smallest is -1"),
        "{e}"
    );
    let e = refusal("Sw<1,2,3> o (4,2,32):(1,-5,4)");
    assert!(e.contains("the smallest is -5"), "{e}");
}
