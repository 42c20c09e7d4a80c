//! Decomposition search in the e-graph: the four-warp SM80 accumulator decomposes into the SM80
//! atom, and random tilings `tile(atom, C)` of corpus atoms are recovered, the extracted term
//! evaluating to a layout equivalent to the input.

use egraph::decompose::{decompose, library};
use egraph::fold::Fold;
use egraph::language::parse_expr;
use layout::axe::{self, AxeLayout, Iter};
use layout::convert::{convert, Target};
use layout::Layout;
use proptest::prelude::*;

/// The corpus's element-indexed atoms, as the CLI uses them.
fn corpus_atoms() -> Vec<(String, Layout)> {
    corpus::atom::tiling_atoms(&corpus::Corpus::embedded().unwrap().atoms)
}

/// Rank-2 unswizzled corpus atoms with an Axe form: (name, Axe form, logical shape). Triton's
/// blocked layouts are left out: Axe's `tile_of` recovers no outer layout for them (their
/// warp iters sit outside the lane and register iters), so no tiling is proposed.
fn tileable() -> Vec<(String, AxeLayout, Vec<i64>)> {
    corpus_atoms()
        .into_iter()
        .filter(|(n, l)| !matches!(l, Layout::Swizzled(_)) && !n.starts_with("triton.blocked"))
        .filter_map(|(name, l)| {
            let shape = certify::forward::default_logical_shape(&l);
            match convert(&l, Target::Axe, Some(&shape)) {
                Ok(Layout::Axe(a)) if shape.len() == 2 && !a.shard().is_empty() => {
                    Some((name, a, shape))
                }
                _ => None,
            }
        })
        .collect()
}

/// The value of a term over the atoms' library.
fn evaluate(term: &str, atoms: &[(String, Layout)]) -> Layout {
    let mut g: egg::EGraph<_, Fold> = egg::EGraph::new(Fold::with_atoms(library(atoms)));
    let id = g.add_expr(&parse_expr(term).unwrap());
    match g[id].data.clone() {
        Some(certify::rules::ops::Value::Layout(l)) => l,
        other => panic!("{term} evaluates to {other:?}"),
    }
}

fn equivalent(a: &Layout, b: &Layout, shape: &[i64]) -> bool {
    let r = certify::equivalent(a, b, Some(shape), &certify::Policy::default()).unwrap();
    r.verdict() == "equivalent"
}

#[test]
fn four_warp_accumulator_decomposes_into_the_sm80_atom() {
    let l = Layout::parse("S[(2,2,8,2,4,2):(64@tx,2@reg,4@tx,32@tx,1@tx,1@reg)]", None).unwrap();
    let atoms = corpus_atoms();
    let d = decompose(&l, &[32, 16], &atoms).unwrap();
    let best = d.best.unwrap();
    assert_eq!(
        best,
        "tile(SM80_16x8x16_F16F16F16F16_TN.C, [16, 8], S[(2,2):(2@tx,1@tx)], [2, 2])"
    );
    assert_eq!(d.tilings[0].term, best);
    assert!(equivalent(&evaluate(&best, &atoms), &l, &[32, 16]));
}

#[test]
fn the_target_leaf_is_never_extracted() {
    // Column-major 32x16 memory: no atom of the corpus tiles it, so nothing is extracted
    // (the layout's own leaf is not a decomposition).
    let l = Layout::parse("(32,16):(1,32)", None).unwrap();
    let d = decompose(&l, &[32, 16], &corpus_atoms()).unwrap();
    assert_eq!(d.best, None);
    assert!(d.tilings.is_empty());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]
    /// tile(atom, C) for a random corpus atom and C a random 2-D grid over the atom's first
    /// axis (either order): the search finds a tiling whose term evaluates to the layout.
    #[test]
    fn random_tilings_of_corpus_atoms_are_recovered(
        pick in any::<prop::sample::Index>(),
        rows in 0u32..3,
        cols in 0u32..3,
        swap in any::<bool>(),
    ) {
        let atoms = tileable();
        let (_, inner, atom_shape) = &atoms[pick.index(atoms.len())];
        let (r, c) = (1i64 << rows, 1i64 << cols);
        let axis = inner.shard()[0].axis.clone();
        let (sr, sc) = if swap { (1, r) } else { (c, 1) };
        let outer = AxeLayout::from_shard(vec![
            Iter::new(r, sr, axis.clone()),
            Iter::new(c, sc, axis),
        ])
        .unwrap();
        // A grid along the lanes can reach past a warp (lanes 0..127 with warps): no CUDA
        // layout, and laycert's fused thread points refuse it (`check_fusion`).
        let tiled = axe::tile(inner, &outer, atom_shape, &[r, c]);
        if let Err(e) = &tiled {
            prop_assume!(!e.to_string().contains("thread fusion"), "{}", e);
        }
        let l = Layout::Axe(tiled.unwrap());
        let shape = [atom_shape[0] * r, atom_shape[1] * c];
        let all = corpus_atoms();
        let d = decompose(&l, &shape, &all).unwrap();
        let best = d.best.expect("a decomposition");
        // A term over a named atom (the bare atom when C is trivial), not the layout itself.
        prop_assert!(all.iter().any(|(n, _)| best.contains(n.as_str())), "{}", best);
        prop_assert!(equivalent(&evaluate(&best, &all), &l, &shape), "{}", best);
    }
}
