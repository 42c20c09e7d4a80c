//! CuTe notations (layouts, swizzled layouts, TV layouts, IntTuples): parsing never panics,
//! errors render, and what parses round-trips through its printed form.
#![no_main]

use layout::notation::cute;
use layout::LayoutError;
use libfuzzer_sys::fuzz_target;

/// Checks one parser: `print(parse(text))` parses back to the same value.
fn round_trip<T: PartialEq + std::fmt::Debug + std::fmt::Display>(
    text: &str,
    parse: fn(&str) -> layout::Result<T>,
) {
    match parse(text) {
        Ok(v) => {
            let printed = v.to_string();
            let back =
                parse(&printed).unwrap_or_else(|e| panic!("{printed:?} does not re-parse: {e}"));
            assert_eq!(
                back, v,
                "{text:?} printed as {printed:?} re-parses differently"
            );
        }
        Err(LayoutError::Parse(e)) => drop(e.render(text)),
        Err(_) => {}
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    round_trip(text, cute::parse_layout);
    round_trip(text, cute::parse_swizzled);
    round_trip(text, cute::parse_tv);
    round_trip(text, cute::parse_int_tuple);
});
