//! Slices of swizzled layouts: `slice_swizzled(Sw o L, shape, region)(y) == (Sw o L)(b + y)` on
//! every coordinate of the region, on random row/column-major and tiled layouts and swizzles;
//! the offset form prints and parses back; and the offset reaches the deciders.

use layout::axe::slice_swizzled;
use layout::notation::cute::parse_swizzled;
use layout::{Layout, LayoutError};
use proptest::prelude::*;

fn coords(shape: &[i64]) -> Vec<Vec<i64>> {
    let mut out = vec![vec![]];
    for &n in shape {
        out = out
            .into_iter()
            .flat_map(|c| {
                (0..n).map(move |i| {
                    let mut c = c.clone();
                    c.push(i);
                    c
                })
            })
            .collect();
    }
    out
}

#[test]
fn the_offset_form_round_trips() {
    let s = parse_swizzled("Sw<2,1,3> o 64 o (4,8):(8,1)").unwrap();
    assert_eq!(s.offset(), 64);
    assert_eq!(s.to_string(), "Sw<2,1,3> o 64 o (4, 8):(8, 1)");
    assert_eq!(parse_swizzled(&s.to_string()).unwrap(), s);
    // pycute's static-int spelling of the offset.
    assert_eq!(parse_swizzled("Sw<2,1,3> o _64 o (4,8):(8,1)").unwrap(), s);
    // Not an offset: `o` must follow.
    assert!(parse_swizzled("Sw<2,1,3> o 64 (4,8):(8,1)").is_err());
}

#[test]
fn a_region_that_is_no_slice_form_is_refused() {
    // Indices 1..12 of (4,4):(1,16) wrap twice: 1,2,3, 16..19, 32..35 (no form of the paper).
    let s = parse_swizzled("Sw<1,0,5> o (4,4):(1,16)").unwrap();
    let e = slice_swizzled(&s, &[16], &[(1, 12)]).unwrap_err();
    assert!(matches!(e, LayoutError::NotASlice { .. }), "{e}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    #[test]
    fn slices_evaluate_to_the_region(
        rows_log in 1u32..5, cols_log in 1u32..6, col_major in any::<bool>(),
        b in 1u32..3, m in 0u32..3, extra in 0u32..2,
        r0 in 0i64..16, r1 in 1i64..17, c0 in 0i64..32, c1 in 1i64..33,
    ) {
        let (rows, cols) = (1i64 << rows_log, 1i64 << cols_log);
        let text = if col_major {
            format!("Sw<{b},{m},{}> o ({rows},{cols}):(1,{rows})", b + extra)
        } else {
            format!("Sw<{b},{m},{}> o ({rows},{cols}):({cols},1)", b + extra)
        };
        let s = parse_swizzled(&text).unwrap();
        let shape = [rows, cols];
        let (rb, re) = (r0 % rows, (r0 % rows + r1).min(rows));
        let (cb, ce) = (c0 % cols, (c0 % cols + c1).min(cols));
        match slice_swizzled(&s, &shape, &[(rb, re), (cb, ce)]) {
            Ok(t) => {
                let sub = [re - rb, ce - cb];
                for y in coords(&sub) {
                    let want = s.eval(&shape, &[rb + y[0], cb + y[1]]).unwrap();
                    prop_assert_eq!(t.eval(&sub, &y).unwrap(), want, "{} at {:?}", t, y);
                }
                // The deciders see the same map (offset included).
                let l = Layout::Swizzled(t.clone());
                prop_assert_eq!(l.domain_size(), sub[0] * sub[1]);
            }
            Err(LayoutError::NotASlice { .. }) => {}
            Err(e) => prop_assert!(false, "{}", e),
        }
    }
}
