//! Any notation through `Layout::parse`: never panics, errors render, printing then re-parsing
//! gives the same value (a round-trip failure crashes the target), and what `laycert show` and
//! `eval` compute (spans, evaluation at the first and last coordinate, facts on small domains)
//! never panics.
#![no_main]

use layout::{Layout, LayoutError};
use libfuzzer_sys::fuzz_target;

/// The tensor shape given to notations that need one (Triton attributes, `#ttg.linear`).
const SHAPE: &[i64] = &[16, 16];

/// Evaluate only where the replica set is small (evaluation enumerates it).
const MAX_REPLICAS: i64 = 1 << 12;

/// Decide facts only on small domains (they enumerate the relation).
const MAX_FACTS_DOMAIN: i64 = 1 << 8;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for shape in [None, Some(SHAPE)] {
        let l = match Layout::parse(text, shape) {
            Ok(l) => l,
            Err(LayoutError::Parse(e)) => {
                drop(e.render(text));
                continue;
            }
            Err(_) => continue,
        };
        let printed = l.print();
        let back = Layout::parse(&printed, shape)
            .unwrap_or_else(|e| panic!("{printed:?} does not re-parse: {e}"));
        assert_eq!(
            back, l,
            "{text:?} printed as {printed:?} re-parses differently"
        );
        if let Layout::Axe(a) = &l {
            for axis in a.axes() {
                let _ = a.span(&axis);
            }
            if a.replica_count() > MAX_REPLICAS {
                continue;
            }
        }
        let dims = l.default_shape();
        let first = vec![0; dims.len()];
        let last: Vec<i64> = dims.iter().map(|d| d - 1).collect();
        let _ = l.eval(None, &first);
        let _ = l.eval(None, &last);
        let replicas = match &l {
            Layout::Axe(a) => a.replica_count(),
            _ => 1,
        };
        if l.domain_size().saturating_mul(replicas) <= MAX_FACTS_DOMAIN {
            let _ = layout::facts::facts(&l, None);
        }
    }
});
