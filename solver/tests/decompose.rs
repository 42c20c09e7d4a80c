//! Decomposition search: layouts built as `tile(atom, C)` (and `Sw o tile(atom, C)`) are found
//! again with a proved tiling; a layout that is no tiling of any atom gets none.

use layout::axe::{self, AxeLayout};
use layout::convert::{convert, Target};
use layout::notation::axe::parse;
use layout::{Layout, SwizzledLayout};
use proptest::prelude::*;
use solver::decompose::find_tilings;

const SM80_C: &str = "((4,8),(2,2)):((32,1),(16,8)) -> (16,8)";
const SM80_A: &str = "((4,8),(2,2,2)):((32,1),(16,8,128)) -> (16,16)";

fn library() -> Vec<(String, Layout)> {
    [
        ("SM80_C", SM80_C),
        ("SM80_A", SM80_A),
        ("ROW8x64", "(8,64):(64,1)"),
    ]
    .iter()
    .map(|(n, t)| (n.to_string(), Layout::parse(t, None).unwrap()))
    .collect()
}

fn axe_of(l: &Layout, shape: &[i64]) -> AxeLayout {
    match convert(l, Target::Axe, Some(shape)).unwrap() {
        Layout::Axe(a) => a,
        _ => unreachable!(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]
    /// tile(SM80 C, C) for C a random permutation of a 2x2 or 2x4 warp grid over tx.
    #[test]
    fn tiles_of_a_library_atom_are_found(rows in 1u32..3, cols in 1u32..3, swap in any::<bool>()) {
        let (r, c) = (1i64 << rows, 1i64 << cols);
        let outer = if swap {
            format!("S[({r},{c}):(1@tx,{r}@tx)]")
        } else {
            format!("S[({r},{c}):({c}@tx,1@tx)]")
        };
        let outer = parse(&outer).unwrap();
        let atom = axe_of(&Layout::parse(SM80_C, None).unwrap(), &[16, 8]);
        let l = axe::tile(&atom, &outer, &[16, 8], &[r, c]).unwrap();
        let shape = [16 * r, 8 * c];
        let found = find_tilings(&Layout::Axe(l), &shape, &library()).unwrap();
        prop_assert!(!found.is_empty());
        let best = &found[0];
        prop_assert_eq!(&best.atom, "SM80_C");
        prop_assert!(best.proved_by.len() >= 2, "{:?}", best.proved_by);
    }
}

#[test]
fn a_swizzled_tiling_keeps_its_swizzle() {
    let atom = axe_of(&Layout::parse("(8,64):(64,1)", None).unwrap(), &[8, 64]);
    let outer = parse("S[(2,2):(2,1)]").unwrap();
    let tiled = axe::tile(&atom, &outer, &[8, 64], &[2, 2]).unwrap();
    let cute = match convert(&Layout::Axe(tiled), Target::Cute, Some(&[16, 128])).unwrap() {
        Layout::Cute(c) => c,
        other => panic!("{other:?}"),
    };
    let sw = layout::Swizzle::new(3, 3, 3).unwrap();
    let l = Layout::Swizzled(SwizzledLayout::new(sw, cute).unwrap());
    let mut lib = library();
    lib.push((
        "SW128_ATOM".into(),
        Layout::parse("Sw<3,3,3> o (8,64):(64,1)", None).unwrap(),
    ));
    let found = find_tilings(&l, &[16, 128], &lib).unwrap();
    assert!(!found.is_empty());
    assert!(
        found[0].to_string().starts_with("Sw<3,3,3> o tile("),
        "{}",
        found[0]
    );
    // An atom under another swizzle never applies.
    let other = vec![(
        "SW64_ATOM".to_string(),
        Layout::parse("Sw<2,3,3> o (8,64):(64,1)", None).unwrap(),
    )];
    assert!(find_tilings(&l, &[16, 128], &other).unwrap().is_empty());
}

#[test]
fn a_layout_that_is_no_tiling_gets_none() {
    // Column-major 32x16 memory: no atom of the library tiles it.
    let l = Layout::parse("(32,16):(1,32)", None).unwrap();
    assert!(find_tilings(&l, &[32, 16], &library()).unwrap().is_empty());
}

#[test]
fn an_aligned_part_of_an_atom_is_found_as_a_slice() {
    // Rows 8..16 of the SM80 16x8 accumulator: lanes 16..31 with their registers.
    let l = Layout::Axe(parse("S[(8,4,2):(4@tx,1@tx,1@reg)] + 2@reg").unwrap());
    let found = find_tilings(&l, &[8, 8], &library()).unwrap();
    assert_eq!(found[0].to_string(), "slice(SM80_C, [8:16, 0:8])");
    assert_eq!(found[0].region, Some(vec![(8, 16), (0, 8)]));
}
