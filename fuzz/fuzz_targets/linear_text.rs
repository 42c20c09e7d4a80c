//! `LinearLayout::toString()` text: parsing never panics, errors render, and what parses
//! round-trips through `print_to_string`.
#![no_main]

use layout::notation::linear;
use layout::LayoutError;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match linear::parse_to_string(text) {
        Ok(l) => {
            let printed = linear::print_to_string(&l);
            let back = linear::parse_to_string(&printed)
                .unwrap_or_else(|e| panic!("{printed:?} does not re-parse: {e}"));
            assert_eq!(
                back, l,
                "{text:?} printed as {printed:?} re-parses differently"
            );
        }
        Err(LayoutError::Parse(e)) => drop(e.render(text)),
        Err(_) => {}
    }
});
