//! The Axe algebra (spec axe.md section 4) against the semantics, on random layouts: random
//! extents, strides including 0 and negative, several axes, replicas and offsets.

use std::collections::{BTreeMap, BTreeSet};

use layout::axe::{self, canonicalize, Canonical};
use layout::axis::Point;
use layout::relation::relation;
use layout::{AxeLayout, Axis, AxisRegistry, Iter, Layout};
use proptest::prelude::*;

mod axe_support;
use axe_support::{axis, build, Spec};

fn layout_spec(max_d: usize) -> impl Strategy<Value = Spec> {
    (
        prop::collection::vec((1i64..5, -6i64..7, 0usize..4), 1..max_d),
        prop::collection::vec((1i64..4, -6i64..7, 0usize..4), 0..3),
        prop::collection::vec((-5i64..6, 0usize..4), 0..3),
    )
}

/// A shape the shard groups by: consecutive iter extents multiplied together.
fn grouping_shape(l: &AxeLayout, cuts: &[bool]) -> Vec<i64> {
    let mut shape = vec![];
    let mut cur = 1;
    for (i, it) in l.shard().iter().enumerate() {
        cur *= it.extent;
        if cuts.get(i).copied().unwrap_or(false) {
            shape.push(cur);
            cur = 1;
        }
    }
    shape.push(cur);
    shape
}

/// Pads the shorter shape with leading unit dims (which group to empty blocks).
fn same_rank(mut a: Vec<i64>, mut b: Vec<i64>) -> (Vec<i64>, Vec<i64>) {
    while a.len() < b.len() {
        a.insert(0, 1);
    }
    while b.len() < a.len() {
        b.insert(0, 1);
    }
    (a, b)
}

fn nonzero(p: Point) -> Point {
    p.into_iter().filter(|(_, v)| *v != 0).collect()
}

/// The map as one set of points (zero components dropped) per flat logical index.
fn map_of(l: &AxeLayout) -> Vec<BTreeSet<Point>> {
    (0..l.size())
        .map(|x| l.eval_flat(x).unwrap().into_iter().map(nonzero).collect())
        .collect()
}

fn eval_at(l: &AxeLayout, shape: &[i64], c: &[i64]) -> BTreeSet<Point> {
    l.eval(shape, c).unwrap().into_iter().map(nonzero).collect()
}

fn scaled(p: &Point, by: &BTreeMap<Axis, i64>) -> Point {
    p.iter()
        .map(|(a, v)| (a.clone(), v * by.get(a).copied().unwrap_or(1)))
        .collect()
}

fn sum(p: &Point, q: &Point) -> Point {
    let mut out = p.clone();
    for (a, v) in q {
        *out.entry(a.clone()).or_insert(0) += v;
    }
    nonzero(out)
}

fn unflatten(shape: &[i64], mut x: i64) -> Vec<i64> {
    let mut c = vec![0; shape.len()];
    for k in (0..shape.len()).rev() {
        c[k] = x % shape[k];
        x /= shape[k];
    }
    c
}

/// Every coordinate of the tiling domain: `f(i) = outer(x) ⊙ by + inner(y)` as sets.
fn check_interleaved(
    l: &AxeLayout,
    inner: (&AxeLayout, &[i64]),
    outer: (&AxeLayout, &[i64]),
    by: &BTreeMap<Axis, i64>,
) -> Result<(), TestCaseError> {
    let (b, sb) = inner;
    let (a, sa) = outer;
    let shape: Vec<i64> = sa.iter().zip(sb).map(|(x, y)| x * y).collect();
    for flat in 0..l.size() {
        let i = unflatten(&shape, flat);
        let x: Vec<i64> = i.iter().zip(sb).map(|(i, s)| i / s).collect();
        let y: Vec<i64> = i.iter().zip(sb).map(|(i, s)| i % s).collect();
        let mut expect = BTreeSet::new();
        for p in eval_at(a, sa, &x) {
            for q in eval_at(b, sb, &y) {
                expect.insert(sum(&scaled(&p, by), &q));
            }
        }
        prop_assert_eq!(eval_at(l, &shape, &i), expect, "at {:?}", i);
    }
    Ok(())
}

/// Rewrites that keep the map: split D iters, insert unit iters, split and reorder R iters,
/// flip R signs (moving the offset), give stride-0 iters another axis.
fn same_map_variant(l: &AxeLayout, choices: &[u8]) -> AxeLayout {
    let mut pick = choices.iter().copied().cycle();
    let mut shard = Vec::new();
    for it in l.shard() {
        let c = pick.next().unwrap_or(0);
        let f = (2..it.extent).find(|f| it.extent % f == 0);
        match (c % 4, f) {
            (0, Some(f)) => {
                shard.push(Iter::new(f, it.stride * (it.extent / f), it.axis.clone()));
                shard.push(Iter::new(it.extent / f, it.stride, it.axis.clone()));
            }
            (1, _) => {
                shard.push(Iter::new(1, 5, axis(3)));
                shard.push(it.clone());
            }
            (2, _) if it.stride == 0 => shard.push(Iter::new(it.extent, 0, axis(2))),
            _ => shard.push(it.clone()),
        }
    }
    let mut offset = l.offset().clone();
    let mut replica = Vec::new();
    for it in l.replica() {
        let c = pick.next().unwrap_or(0);
        let f = (2..it.extent).find(|f| it.extent % f == 0);
        match (c % 3, f) {
            (0, _) => {
                *offset.entry(it.axis.clone()).or_insert(0) += (it.extent - 1) * it.stride;
                replica.push(Iter::new(it.extent, -it.stride, it.axis.clone()));
            }
            (1, Some(f)) => {
                replica.push(Iter::new(it.extent / f, it.stride * f, it.axis.clone()));
                replica.push(Iter::new(f, it.stride, it.axis.clone()));
            }
            _ => replica.push(it.clone()),
        }
    }
    if choices.first().copied().unwrap_or(0) % 2 == 0 {
        replica.reverse();
    }
    AxeLayout::new(shard, replica, offset).unwrap()
}

fn canon(l: &AxeLayout) -> Canonical {
    canonicalize(l).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn canonicalize_preserves_map(spec in layout_spec(6)) {
        let l = build(&spec);
        let c = canon(&l);
        prop_assert_eq!(map_of(&c.layout), map_of(&l));
        prop_assert_eq!(canon(&c.layout), c, "canonicalize is idempotent");
    }

    #[test]
    fn equal_layouts_canonicalize_alike_under_gc(
        spec in layout_spec(6),
        choices in prop::collection::vec(any::<u8>(), 1..12),
    ) {
        let l = build(&spec);
        let v = same_map_variant(&l, &choices);
        prop_assert_eq!(map_of(&v), map_of(&l), "the variant keeps the map");
        let (cl, cv) = (canon(&l), canon(&v));
        if cl.gc_holds() && cv.gc_holds() {
            prop_assert_eq!(cl.layout, cv.layout);
        }
    }

    #[test]
    fn differing_layouts_never_canonicalize_alike(
        spec in layout_spec(6),
        which in any::<prop::sample::Index>(),
        delta in 1i64..4,
    ) {
        let l = build(&spec);
        let mut d: Vec<Iter> = l.shard().to_vec();
        let mut r: Vec<Iter> = l.replica().to_vec();
        let i = which.index(d.len() + r.len());
        if i < d.len() { d[i].stride += delta } else { r[i - d.len()].stride += delta }
        let m = AxeLayout::new(d, r, l.offset().clone()).unwrap();
        if map_of(&m) != map_of(&l) {
            prop_assert_ne!(canon(&m).layout, canon(&l).layout);
        }
    }

    #[test]
    fn canonical_form_is_sorted_and_saturated(spec in layout_spec(6)) {
        let c = canon(&build(&spec)).layout;
        let keys: Vec<(Axis, i64)> = c.replica().iter().map(|it| (it.axis.clone(), it.stride)).collect();
        let mut sorted = keys.clone();
        sorted.sort();
        prop_assert_eq!(&keys, &sorted);
        prop_assert!(c.replica().iter().all(|it| it.stride > 0 && it.extent > 1));
        prop_assert!(c.shard().iter().all(|it| it.extent > 1));
    }

    #[test]
    fn group_preserves_map_and_never_reorders(
        spec in layout_spec(6),
        cuts in prop::collection::vec(any::<bool>(), 6),
        extra in 1i64..5,
    ) {
        let l = build(&spec);
        let mut shape = grouping_shape(&l, &cuts);
        // Also try splitting a dim further, which may or may not group.
        if let Some(last) = shape.last_mut() {
            if *last % extra == 0 && extra > 1 {
                *last /= extra;
                shape.push(extra);
            }
        }
        let Ok(g) = axe::group(&l, &shape) else { return Ok(()) };
        prop_assert_eq!(map_of(&g.layout), map_of(&l));
        for (k, &n) in shape.iter().enumerate() {
            prop_assert_eq!(g.block(k).iter().map(|it| it.extent).product::<i64>(), n);
        }
        // Fusing the pieces back gives the normalized input: no iter moved.
        let (cg, cl) = (canon(&g.layout).layout, canon(&l).layout);
        prop_assert_eq!(cg.shard(), cl.shard());
    }

    #[test]
    fn group_succeeds_on_consecutive_products(spec in layout_spec(6), cuts in prop::collection::vec(any::<bool>(), 6)) {
        let l = build(&spec);
        let shape = grouping_shape(&l, &cuts);
        prop_assert!(axe::group(&l, &shape).is_ok(), "{:?} by {:?}", l, shape);
    }

    #[test]
    fn tile_matches_definition(b in layout_spec(4), c in layout_spec(4), cb in prop::collection::vec(any::<bool>(), 4), cc in prop::collection::vec(any::<bool>(), 4)) {
        let (b, c) = (build(&b), build(&c));
        let (sb, sc) = (grouping_shape(&b, &cb), grouping_shape(&c, &cc));
        let (sb, sc) = same_rank(sb, sc);
        let t = axe::tile(&b, &c, &sb, &sc).unwrap();
        check_interleaved(&t, (&b, &sb), (&c, &sc), &axe::span_vector(&b).unwrap())?;
    }

    #[test]
    fn tile_of_recovers_outer_and_inner(b in layout_spec(4), c in layout_spec(4), cb in prop::collection::vec(any::<bool>(), 4), cc in prop::collection::vec(any::<bool>(), 4)) {
        let (b, c) = (build(&b), build(&c));
        let (sb, sc) = (grouping_shape(&b, &cb), grouping_shape(&c, &cc));
        let (sb, sc) = same_rank(sb, sc);
        let t = axe::tile(&b, &c, &sb, &sc).unwrap();
        let shape = axe::tile::tile_shape(&sb, &sc).unwrap();
        let c2 = axe::tile_of(&t, &shape, &b, &sb);
        prop_assert!(c2.is_ok(), "{:?}", c2);
        prop_assert_eq!(map_of(&c2.unwrap()), map_of(&c));
        let b2 = axe::tile_of_given_outer(&t, &shape, &c, &sc);
        prop_assert!(b2.is_ok(), "{:?}", b2);
        prop_assert_eq!(map_of(&b2.unwrap()), map_of(&b));
    }

    #[test]
    fn tile_of_answers_are_tiles(l in layout_spec(5), b in layout_spec(3), cb in prop::collection::vec(any::<bool>(), 3)) {
        let (l, b) = (build(&l), build(&b));
        let sb = grouping_shape(&b, &cb);
        let sb = vec![sb.iter().product::<i64>()];
        if l.size() % sb[0] != 0 {
            return Ok(());
        }
        if let Ok(c) = axe::tile_of(&l, &[l.size()], &b, &sb) {
            let t = axe::tile(&b, &c, &sb, &[l.size() / sb[0]]).unwrap();
            prop_assert_eq!(map_of(&t), map_of(&l));
        }
    }

    #[test]
    fn direct_sum_matches_definition_and_recognition_recovers_summands(a in layout_spec(4), b in layout_spec(4), ca in prop::collection::vec(any::<bool>(), 4), cb in prop::collection::vec(any::<bool>(), 4)) {
        let (a, b) = (build(&a), build(&b));
        let (sa, sb) = (grouping_shape(&a, &ca), grouping_shape(&b, &cb));
        let (sa, sb) = same_rank(sa, sb);
        let s = axe::direct_sum(&a, &b, &sa, &sb).unwrap();
        check_interleaved(&s, (&b, &sb), (&a, &sa), &BTreeMap::new())?;
        let shape = axe::tile::tile_shape(&sb, &sa).unwrap();
        // The shard of a summand is unique; its replica need not be (sets add without
        // scaling), so the recovered summand is checked by summing it back. Replica unions
        // C2 fuses beyond one merge are answered "undecided", never "no".
        let a2 = match axe::first_summand(&s, &shape, &b, &sb) {
            Err(e) if e.to_string().contains("undecided") => return Ok(()),
            r => r.unwrap(),
        };
        prop_assert_eq!(canon(&a2).layout.shard().to_vec(), canon(&a).layout.shard().to_vec());
        prop_assert_eq!(map_of(&axe::direct_sum(&a2, &b, &sa, &sb).unwrap()), map_of(&s));
        let b2 = match axe::second_summand(&s, &shape, &a, &sa) {
            Err(e) if e.to_string().contains("undecided") => return Ok(()),
            r => r.unwrap(),
        };
        prop_assert_eq!(canon(&b2).layout.shard().to_vec(), canon(&b).layout.shard().to_vec());
        prop_assert_eq!(map_of(&axe::direct_sum(&a, &b2, &sa, &sb).unwrap()), map_of(&s));
    }

    #[test]
    fn slice_agrees_with_the_layout_on_the_region(
        spec in layout_spec(6),
        cuts in prop::collection::vec(any::<bool>(), 6),
        picks in prop::collection::vec((any::<prop::sample::Index>(), any::<prop::sample::Index>()), 6),
    ) {
        let l = build(&spec);
        let shape = grouping_shape(&l, &cuts);
        let region: Vec<(i64, i64)> = shape.iter().zip(&picks).map(|(&n, (p, q))| {
            let b = p.index(n as usize) as i64;
            (b, b + 1 + q.index((n - b) as usize) as i64)
        }).collect();
        let full: Vec<(i64, i64)> = shape.iter().map(|&n| (0, n)).collect();
        prop_assert!(axe::slice(&l, &shape, &full).is_ok(), "the whole region always peels");
        if let Ok(s) = axe::slice(&l, &shape, &region) {
            let n: Vec<i64> = region.iter().map(|(b, e)| e - b).collect();
            for y in 0..s.size() {
                let yc = unflatten(&n, y);
                let xc: Vec<i64> = yc.iter().zip(&region).map(|(y, (b, _))| y + b).collect();
                prop_assert_eq!(eval_at(&s, &n, &yc), eval_at(&l, &shape, &xc));
            }
        }
    }

    #[test]
    fn axis_fusion_preserves_the_relation(d in prop::collection::vec((1i64..5, 0i64..5, 1usize..3), 1..4)) {
        let l = build(&(d, vec![], vec![]));
        let f = axe::fuse_axes(&l, AxisRegistry::builtin(), "cuda").unwrap();
        let (rl, rf) = (relation(&Layout::Axe(l), None).unwrap(), relation(&Layout::Axe(f), None).unwrap());
        prop_assert_eq!(rl, rf);
    }
}

#[test]
fn axis_fusion_gives_tx_on_cuda() {
    let l = layout::notation::axe::parse("S[(2,2,8,4):(2@warpid,1@warpid,4@lane,1@lane)]").unwrap();
    let c = axe::canonicalize_on(&l, AxisRegistry::builtin(), Some("cuda")).unwrap();
    assert_eq!(layout::notation::axe::print(&c.layout), "S[128:1@tx]");
}
