//! `axe::slice` against a brute force on random small layouts, shapes the layout need not group
//! by, and regions: a layout it answers equals the original on every element of the region
//! (plain evaluation), and it answers "no" exactly when no shard of any factorization of the
//! region's size reproduces the region's point sets up to one translation (a replica only
//! translates each set, so that is every Axe layout over the region's shape).

use std::collections::BTreeSet;

use layout::axe;
use layout::axis::Point;
use layout::{AxeLayout, LayoutError};
use proptest::prelude::*;

mod axe_support;
use axe_support::{build, Spec};

/// Shards of 1..5 iters with extents 1..5 (non-powers of two included), strides -6..6 (0 and
/// negative included) on up to 4 axes, mostly on `m`; small replicas and offsets.
fn layout_spec() -> impl Strategy<Value = Spec> {
    let axis = prop_oneof![3 => Just(0usize), 1 => 1usize..4];
    (
        prop::collection::vec((1i64..6, -6i64..7, axis.clone()), 1..5),
        prop::collection::vec((1i64..4, -6i64..7, axis), 0..2),
        prop::collection::vec((-5i64..6, 0usize..4), 0..2),
    )
}

fn divisors(n: i64) -> Vec<i64> {
    (1..=n).filter(|d| n % d == 0).collect()
}

/// A shape of rank 1..3 with product `size`, dims picked among the divisors.
fn shape_of(size: i64, picks: &[prop::sample::Index]) -> Vec<i64> {
    let mut shape = Vec::new();
    let mut rest = size;
    for p in picks {
        let d = divisors(rest);
        let dim = d[p.index(d.len())];
        shape.push(dim);
        rest /= dim;
    }
    shape.push(rest);
    shape
}

fn unflatten(shape: &[i64], mut x: i64) -> Vec<i64> {
    let mut c = vec![0; shape.len()];
    for d in (0..shape.len()).rev() {
        c[d] = x % shape[d];
        x /= shape[d];
    }
    c
}

/// The layout's point sets at the region's elements, row-major over the region's shape, each
/// point over every axis of the layout (so that sets compare and translate alike).
fn region_sets(l: &AxeLayout, shape: &[i64], region: &[(i64, i64)]) -> Vec<BTreeSet<Point>> {
    let sub: Vec<i64> = region.iter().map(|(b, e)| e - b).collect();
    (0..sub.iter().product::<i64>())
        .map(|y| {
            let c: Vec<i64> = unflatten(&sub, y)
                .iter()
                .zip(region)
                .map(|(y, (b, _))| y + b)
                .collect();
            l.eval(shape, &c).unwrap()
        })
        .collect()
}

fn shifted(set: &BTreeSet<Point>, t: &Point) -> BTreeSet<Point> {
    set.iter()
        .map(|p| p.iter().map(|(a, v)| (a.clone(), v + t[a])).collect())
        .collect()
}

/// Every ordered factorization of `n` into factors >= 2 (slowest first).
fn factorizations(n: i64) -> Vec<Vec<i64>> {
    if n == 1 {
        return vec![vec![]];
    }
    let mut out = Vec::new();
    for e in 2..=n {
        if n % e == 0 {
            for mut rest in factorizations(n / e) {
                rest.insert(0, e);
                out.push(rest);
            }
        }
    }
    out
}

/// Is there a shard whose map, added to the first set, gives every set? For a factorization
/// the strides are forced: iter i's stride is the translation from set 0 to set `P_i` (it
/// must lie on one axis); then every set is checked.
fn some_layout_has(sets: &[BTreeSet<Point>]) -> bool {
    let first = |s: &BTreeSet<Point>| s.iter().next().unwrap().clone();
    let origin = first(&sets[0]);
    let translation = |s: &BTreeSet<Point>| -> Point {
        first(s)
            .into_iter()
            .map(|(a, v)| {
                let o = origin[&a];
                (a, v - o)
            })
            .collect()
    };
    let n = sets.len() as i64;
    'factorization: for f in factorizations(n) {
        let mut steps = Vec::new();
        let mut p = n;
        for &e in &f {
            p /= e;
            let t = translation(&sets[p as usize]);
            if t.values().filter(|&&v| v != 0).count() > 1 {
                continue 'factorization;
            }
            steps.push(t);
        }
        for (y, set) in sets.iter().enumerate() {
            let digits = unflatten(&f, y as i64);
            let mut t: Point = origin.keys().map(|a| (a.clone(), 0)).collect();
            for (d, step) in digits.iter().zip(&steps) {
                for (a, v) in step {
                    *t.get_mut(a).unwrap() += d * v;
                }
            }
            if shifted(&sets[0], &t) != *set {
                continue 'factorization;
            }
        }
        return true;
    }
    false
}

fn nonzero(set: BTreeSet<Point>) -> BTreeSet<Point> {
    set.into_iter()
        .map(|p| p.into_iter().filter(|(_, v)| *v != 0).collect())
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]
    #[test]
    fn slice_answers_exactly_when_some_layout_has_the_region(
        spec in layout_spec(),
        picks in prop::collection::vec(any::<prop::sample::Index>(), 0..3),
        ends in prop::collection::vec((any::<prop::sample::Index>(), any::<prop::sample::Index>()), 3),
    ) {
        let l = build(&spec);
        let shape = shape_of(l.size(), &picks);
        let region: Vec<(i64, i64)> = shape.iter().zip(&ends).map(|(&n, (p, q))| {
            let b = p.index(n as usize) as i64;
            (b, b + 1 + q.index((n - b) as usize) as i64)
        }).collect();
        let sub: Vec<i64> = region.iter().map(|(b, e)| e - b).collect();
        let sets = region_sets(&l, &shape, &region);
        let exists = some_layout_has(&sets);
        match axe::slice(&l, &shape, &region) {
            Ok(s) => {
                prop_assert!(exists, "{} answered, the brute force finds no layout", layout::notation::axe::print(&s));
                for (y, set) in sets.into_iter().enumerate() {
                    let yc = unflatten(&sub, y as i64);
                    prop_assert_eq!(nonzero(s.eval(&sub, &yc).unwrap()), nonzero(set), "at {:?}", yc);
                }
            }
            Err(LayoutError::NotASlice { reason }) => {
                prop_assert!(!exists, "a false no: {}", reason);
            }
            Err(e) => prop_assert!(false, "{}", e),
        }
    }
}

#[test]
fn the_brute_force_tells_layouts_from_the_rest() {
    let sets = |l: &str, shape: &[i64], region: &[(i64, i64)]| {
        region_sets(&layout::notation::axe::parse(l).unwrap(), shape, region)
    };
    assert!(some_layout_has(&sets("S[(6,2):(5,5)]", &[12], &[(5, 9)])));
    assert!(some_layout_has(&sets(
        "S[(2,3):(5,1)] + R[2:1@laneid]",
        &[3, 2],
        &[(0, 3), (0, 2)]
    )));
    assert!(!some_layout_has(&sets(
        "S[(2,3):(5,1)]",
        &[3, 2],
        &[(0, 2), (0, 2)]
    )));
    assert!(!some_layout_has(&sets("S[(4,4):(1,4)]", &[16], &[(3, 9)])));
    assert!(!some_layout_has(&sets(
        "S[(2,3):(5,1@laneid)]",
        &[3, 2],
        &[(1, 2), (0, 2)]
    )));
}
