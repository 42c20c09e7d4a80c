//! `#ttg.linear<{...}>`: parsing (with and without a tensor shape) never panics, errors render,
//! and a layout read without a shape round-trips through `print_attr`.
#![no_main]

use layout::notation::linear;
use layout::LayoutError;
use libfuzzer_sys::fuzz_target;

const SHAPES: &[&[i64]] = &[&[16, 16], &[128], &[4, 8, 2], &[3, 5], &[]];

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match linear::parse_attr(text, None) {
        Ok(l) => {
            if let Ok(printed) = linear::print_attr(&l) {
                let back = linear::parse_attr(&printed, None)
                    .unwrap_or_else(|e| panic!("{printed:?} does not re-parse: {e}"));
                assert_eq!(
                    back, l,
                    "{text:?} printed as {printed:?} re-parses differently"
                );
            }
        }
        Err(LayoutError::Parse(e)) => drop(e.render(text)),
        Err(_) => {}
    }
    for shape in SHAPES {
        if let Err(LayoutError::Parse(e)) = linear::parse_attr(text, Some(shape)) {
            drop(e.render(text));
        }
    }
});
