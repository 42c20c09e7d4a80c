//! Triton layout attributes (`#ttg.blocked`, `#ttg.nvidia_mma`, ...): parsing and importing to a
//! linear layout for a few tensor shapes never panic, and errors render.
#![no_main]

use layout::{triton, LayoutError};
use libfuzzer_sys::fuzz_target;

const SHAPES: &[&[i64]] = &[
    &[16, 16],
    &[64, 32],
    &[128],
    &[16, 8],
    &[2, 64, 8],
    &[3, 5],
    &[0],
];

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match triton::parse_attr(text) {
        Ok(attr) => {
            for shape in SHAPES {
                // Refusals are fine; only a panic is a finding.
                let _ = attr.to_linear(shape);
            }
        }
        Err(LayoutError::Parse(e)) => drop(e.render(text)),
        Err(_) => {}
    }
});
