//! CuTe layouts with ScaledBasis strides (`make_identity_layout`, TMA coordinate layouts):
//! `(_64,_8):(_1@0,_1@1)` maps a coordinate to a coordinate tuple, `_1@1` being one step along
//! codomain mode 1. They read as Axe layouts on the axes `dim0`, `dim1`, ...; here every point
//! is compared with CuTe's definition evaluated independently: the colexicographic digits of
//! the index, each times its stride's value, summed per codomain mode.

use std::collections::BTreeMap;

use layout::{Axis, Layout, LayoutError};

/// CuTe's value of the layout with flat modes `(extent, value, mode)` at flat index `i`, plus
/// the start tuple.
fn cute_value(modes: &[(i64, i64, usize)], start: &[i64], mut i: i64) -> BTreeMap<String, i64> {
    let mut out: BTreeMap<String, i64> = BTreeMap::new();
    for (k, &s) in start.iter().enumerate() {
        *out.entry(format!("dim{k}")).or_default() += s;
    }
    for &(e, v, mode) in modes {
        *out.entry(format!("dim{mode}")).or_default() += (i % e) * v;
        i /= e;
    }
    out.retain(|_, v| *v != 0);
    out
}

/// The one point the layout gives at `coord` of `shape` (`None`: its own domain).
fn point(l: &Layout, shape: Option<&[i64]>, coord: &[i64]) -> BTreeMap<String, i64> {
    let set = l.eval(shape, coord).unwrap();
    assert_eq!(set.len(), 1);
    let p = set.into_iter().next().unwrap();
    p.into_iter()
        .filter(|(_, v)| *v != 0)
        .map(|(a, v): (Axis, i64)| (a.to_string(), v))
        .collect()
}

/// Checks `text` against CuTe's definition at every flat index of its own domain, and at every
/// coordinate of `shape` read colexicographically (as CuTe reads a coordinate).
fn check(text: &str, modes: &[(i64, i64, usize)], start: &[i64], shape: &[i64]) {
    let size: i64 = modes.iter().map(|m| m.0).product();
    let flat = Layout::parse(text, None).unwrap_or_else(|e| panic!("{text}: {e}"));
    assert!(matches!(flat, Layout::Axe(_)), "{text}");
    for i in 0..size {
        assert_eq!(
            point(&flat, None, &[i]),
            cute_value(modes, start, i),
            "{text} at {i}"
        );
    }
    let nd = Layout::parse(text, Some(shape)).unwrap_or_else(|e| panic!("{text}: {e}"));
    for i in 0..size {
        let (mut rest, mut coord) = (i, Vec::new());
        for &s in shape {
            coord.push(rest % s);
            rest /= s;
        }
        assert_eq!(
            point(&nd, Some(shape), &coord),
            cute_value(modes, start, i),
            "{text} at {coord:?} of {shape:?}"
        );
    }
}

#[test]
fn identity_layout_maps_each_coordinate_to_itself() {
    let text = "(_64,_8):(_1@0,_1@1)";
    check(text, &[(64, 1, 0), (8, 1, 1)], &[], &[64, 8]);
    // Its flat index is CuTe's: 67 is (3, 1).
    let l = Layout::parse(text, None).unwrap();
    assert_eq!(l.print(), "S[(8,64):(1@dim1,1@dim0)]");
    // Over its shape it is the identity on coordinates.
    let l = Layout::parse(text, Some(&[64, 8])).unwrap();
    assert_eq!(l.print(), "S[(64,8):(1@dim0,1@dim1)]");
}

#[test]
fn tma_and_nested_coordinate_layouts_follow_the_definition() {
    check(
        "(_128,_64):(_1@1,_1@0)",
        &[(128, 1, 1), (64, 1, 0)],
        &[],
        &[128, 64],
    );
    check(
        "((_4,_8),_4):((_1@0,_1@1),_4@0)",
        &[(4, 1, 0), (8, 1, 1), (4, 4, 0)],
        &[],
        &[32, 4],
    );
    // The CuTe DSL's print and MLIR type of a TMA basis (no `_`).
    check(
        "(32,128,1):(1@1,1@0,1@2)",
        &[(32, 1, 1), (128, 1, 0), (1, 1, 2)],
        &[],
        &[32, 128, 1],
    );
    check(
        "!cute.layout<\"(64,128):(1@1,1@0)\">",
        &[(64, 1, 1), (128, 1, 0)],
        &[],
        &[64, 128],
    );
    // A stride 0 moves nowhere; negative values step backwards.
    check(
        "(4,2,8):(_2@1,0,_-1@0)",
        &[(4, 2, 1), (2, 0, 0), (8, -1, 0)],
        &[],
        &[4, 16],
    );
    // `print(make_identity_tensor(..))`: the start tuple, then the layout.
    check(
        "ArithTuple(_0,_3) o (_64,_8):(_1@0,_1@1)",
        &[(64, 1, 0), (8, 1, 1)],
        &[0, 3],
        &[64, 8],
    );
}

fn refusal(text: &str) -> String {
    match Layout::parse(text, None) {
        Err(LayoutError::Parse(p)) => format!("{p} [{}]", &text[p.span.clone()]),
        Err(e) => e.to_string(),
        Ok(l) => panic!("{text}: read as {}", l.print()),
    }
}

#[test]
fn near_misses_are_refused_naming_scaled_basis_and_the_place() {
    // Was "Axe notation: expected an integer, found _64".
    let e = refusal("(_64,_8):(_1@0,2)");
    assert!(
        e.starts_with("CuTe ScaledBasis notation")
            && e.contains("no codomain mode")
            && e.ends_with("[2]"),
        "{e}"
    );
    let e = refusal("(_64,_8):(_1@0,_1@x1)");
    assert!(
        e.contains("a codomain mode number") && e.ends_with("[x1]"),
        "{e}"
    );
    let e = refusal("(_64,_8):(_1@0@1,_1@1)");
    assert!(e.contains("nested codomain mode"), "{e}");
    let e = refusal("(_64,_8):(_1@0,_1@1,_1@2)");
    assert!(
        e.contains("CuTe ScaledBasis") && e.contains("congruent"),
        "{e}"
    );
    let e = refusal("(?,_8):(_1@0,_1@1)");
    assert!(e.contains("known only at run time"), "{e}");
    // A shape that does not split the modes, as CuTe would read it.
    let e = Layout::parse("(_64,_8):(_1@0,_1@1)", Some(&[8, 8])).unwrap_err();
    assert!(e.to_string().contains("512"), "{e}");
}
