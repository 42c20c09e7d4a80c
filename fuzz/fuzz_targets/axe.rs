//! Axe notation: parsing never panics, errors render, and what parses round-trips through print.
#![no_main]

use layout::notation::axe;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match axe::parse(text) {
        Ok(l) => {
            let printed = axe::print(&l);
            let back = axe::parse(&printed)
                .unwrap_or_else(|e| panic!("{printed:?} does not re-parse: {e}"));
            assert_eq!(
                back, l,
                "{text:?} printed as {printed:?} re-parses differently"
            );
        }
        Err(layout::LayoutError::Parse(e)) => drop(e.render(text)),
        Err(_) => {}
    }
});
