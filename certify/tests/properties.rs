//! Property claims: injective / surjective / bijective, refines, equal on a region.

use certify::property::{equal_on_region, prove_property, refines, Property};
use certify::Policy;
use layout::Layout;
use proptest::prelude::*;

fn parse(t: &str) -> Layout {
    Layout::parse(t, None).unwrap()
}

fn verdict(t: &str, p: Property) -> &'static str {
    prove_property(&parse(t), p, None, &Policy::default())
        .unwrap()
        .verdict
}

#[test]
fn worked_properties() {
    assert_eq!(verdict("(4,2):(2,1)", Property::Bijective), "proved");
    assert_eq!(verdict("4:2", Property::Injective), "proved");
    assert_eq!(verdict("4:2", Property::Surjective), "refuted");
    let r = prove_property(
        &parse("(2,2):(1,1)"),
        Property::Injective,
        None,
        &Policy::default(),
    )
    .unwrap();
    assert_eq!(r.verdict, "refuted");
    assert_eq!(
        r.deciders.len(),
        2,
        "normal-form and exhaustive: {:?}",
        r.deciders
    );
    assert!(r.detail.unwrap().contains("reach the same point"));
    assert_eq!(
        verdict("Sw<3,4,3> o (8,1024):(1024,1)", Property::Bijective),
        "proved"
    );
    // The Axe tensor-core tile: replicas do not break injectivity (disjoint point sets).
    assert_eq!(
        verdict(
            "S[(8,2,4,2):(4@laneid,1@warpid,1@laneid,1@reg)] + R[2:4@warpid] + 5@warpid",
            Property::Injective
        ),
        "proved"
    );
    assert_eq!(
        verdict(
            "((4,8),(2,2)):((32,1),(16,8)) -> (16,8)",
            Property::Bijective
        ),
        "proved"
    );
}

#[test]
fn refinement_and_regions() {
    let a = parse("S[4:1]");
    let b = parse("S[4:1] + R[2:4]");
    assert_eq!(refines(&a, &b, None).unwrap(), Ok(()));
    assert_eq!(refines(&b, &a, None).unwrap(), Err(vec![0]));
    let x = parse("S[(4,4):(4,1)]");
    let y = parse("S[(4,4):(4,2)]");
    assert_eq!(
        equal_on_region(&x, &y, &[4, 4], &[(0, 4), (0, 1)]).unwrap(),
        Ok(())
    );
    assert_eq!(
        equal_on_region(&x, &y, &[4, 4], &[(1, 3), (0, 2)]).unwrap(),
        Err(vec![1, 1])
    );
    assert!(equal_on_region(&x, &y, &[4, 4], &[(0, 5), (0, 1)]).is_err());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn injectivity_deciders_agree_with_the_relation(m in prop::collection::vec((1i64..5, 0i64..9), 1..4)) {
        let s: Vec<String> = m.iter().map(|x| x.0.to_string()).collect();
        let d: Vec<String> = m.iter().map(|x| x.1.to_string()).collect();
        let l = parse(&format!("({},):({},)", s.join(","), d.join(",")));
        let r = prove_property(&l, Property::Injective, None, &Policy::default()).unwrap();
        let offsets: Vec<i64> = layout::relation::relation(&l, None).unwrap().into_iter()
            .map(|(_, p)| p.values().sum::<i64>()).collect();
        let mut dedup = offsets.clone();
        dedup.sort();
        dedup.dedup();
        prop_assert_eq!(r.verdict == "proved", dedup.len() == offsets.len());
    }
}

/// Above the exhaustive limit: the structure (normal form) decides injectivity and filling, z3
/// and counting what it leaves open; all agree with enumeration on domains small enough to
/// enumerate.
#[test]
fn large_domains_by_z3_and_counting() {
    let small = Policy {
        exhaustive_limit: 16,
        ..Policy::default()
    };
    // Enumeration of property claims keeps every point; keep it to small domains here.
    let big = Policy {
        exhaustive_limit: 1 << 12,
        ..Policy::default()
    };
    let at = |t: &str, p: Property, pol: &Policy| prove_property(&parse(t), p, None, pol).unwrap();
    // The 8192x8192 transpose grid: 2^26 indices.
    let grid = at(
        "(64,64,128,128):(1,8192,64,524288)",
        Property::Bijective,
        &big,
    );
    assert_eq!(grid.verdict, "proved", "{grid:?}");
    assert_eq!(grid.deciders[0].0, "normal-form");
    // 16 = 2*3 + 2*5: a collision the structure does not name (the gap condition fails at 16,
    // no stride is a small multiple of another); z3 finds it.
    let open = at("(3,3,1024):(3,5,16)", Property::Injective, &big);
    assert_eq!(open.verdict, "refuted", "{open:?}");
    assert_eq!(open.deciders[0].0, "smt");
    // One more unit: injective, still open for the structure (5 <= 2*3), proved by z3.
    let open = at("(3,3,1024):(3,5,17)", Property::Injective, &big);
    assert_eq!(
        (open.verdict, open.deciders[0].0.as_str()),
        ("proved", "smt")
    );
    // Strides 3, 10, 31 meet the gap condition (10 > 2*3, 31 > 2*3 + 2*10): the structure.
    let gapped = at("(3,3,1024):(3,10,31)", Property::Injective, &big);
    assert_eq!(gapped.verdict, "proved");
    assert_eq!(gapped.deciders[0].0, "normal-form");
    // A mutated grid stride overlaps two tiles: refuted with a witness the semantics confirm.
    let bad = at(
        "(64,64,128,128):(1,8192,32,524288)",
        Property::Bijective,
        &big,
    );
    assert_eq!(bad.verdict, "refuted");
    assert!(bad.detail.unwrap().contains("reach the same point"));
    // Injective with holes: not surjective, by counting.
    let holes = at("(4096,4096):(1,8192)", Property::Bijective, &big);
    assert_eq!(holes.verdict, "refuted");
    assert!(holes.detail.unwrap().contains("is not reached"));
    assert_eq!(
        at("(4096,4096):(1,8192)", Property::Injective, &big).verdict,
        "proved"
    );
    // Small cases: the large-domain path equals enumeration.
    for t in [
        "(4,2):(2,1)",
        "4:2",
        "(2,2):(1,1)",
        "(2,4):(4,1)",
        "(3,5):(5,1)",
        "(2,3):(-3,1)",
        "(3,3,4):(3,5,16)",
        "(3,3,4):(3,5,17)",
        "(4,4):(1,2)",
        "(2,2,2):(0,1,2)",
    ] {
        for p in [
            Property::Injective,
            Property::Surjective,
            Property::Bijective,
        ] {
            let (a, b) = (at(t, p, &big), at(t, p, &small));
            if b.verdict != "unknown" {
                assert_eq!(a.verdict, b.verdict, "{t} {p:?}: {a:?} vs {b:?}");
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// The structural analysis (normal form) agrees with enumeration of the image on random
    /// Axe layouts with stride 0, negative strides, two axes, replicas and offsets; its
    /// witnesses are real.
    #[test]
    fn structural_properties_equal_enumeration(
        shard in prop::collection::vec((1i64..5, -7i64..8, 0usize..2), 1..4),
        reps in prop::collection::vec((1i64..4, -4i64..5, 0usize..2), 0..3),
        off in -2i64..3,
    ) {
        use certify::forward::forward;
        use certify::property::strided_analysis;
        use std::collections::BTreeMap;
        let axis = |k: usize| ["m", "laneid"][k];
        let part = |its: &[(i64, i64, usize)]| {
            let e: Vec<String> = its.iter().map(|x| x.0.to_string()).collect();
            let s: Vec<String> = its.iter().map(|x| format!("{}@{}", x.1, axis(x.2))).collect();
            format!("({}):({})", e.join(","), s.join(","))
        };
        let mut t = format!("S[{}]", part(&shard));
        if !reps.is_empty() {
            t += &format!(" + R[{}]", part(&reps));
        }
        t += &format!(" + {off}@m");
        let f = forward(&parse(&t), None).unwrap();
        let a = strided_analysis(&f).unwrap();
        // Enumerate: who reaches each point, and the bounding box.
        let mut owner: BTreeMap<Vec<i64>, i64> = BTreeMap::new();
        let mut injective = true;
        for x in 0..f.size() {
            for p in f.points(x) {
                if let Some(&y) = owner.get(&p) {
                    if y != x { injective = false; }
                }
                owner.insert(p, x);
            }
        }
        let dims = f.axes.len();
        let mut cells = 1i128;
        for d in 0..dims {
            let lo = owner.keys().map(|p| p[d]).min().unwrap();
            let hi = owner.keys().map(|p| p[d]).max().unwrap();
            cells *= (hi - lo + 1) as i128;
        }
        let fills = cells == owner.len() as i128;
        prop_assert_eq!(a.cells, cells, "{}", t);
        if let Some((inj, w)) = a.injective {
            prop_assert_eq!(inj, injective, "{}", t);
            if let Some((x, y)) = w {
                let (px, py) = (f.points(x), f.points(y));
                prop_assert!(x != y && px.iter().any(|p| py.contains(p)), "{} {:?}", t, (x, y));
            }
        }
        let (sur, hole) = a.fills.clone().unwrap();
        prop_assert_eq!(sur, fills, "{}", t);
        if let Some(h) = hole {
            prop_assert!(!owner.contains_key(&h), "{} hole {:?} is reached", t, h);
            for d in 0..dims {
                let lo = owner.keys().map(|p| p[d]).min().unwrap();
                let hi = owner.keys().map(|p| p[d]).max().unwrap();
                prop_assert!(lo <= h[d] && h[d] <= hi, "{} hole {:?} outside the box", t, h);
            }
        }
    }
}

/// TV and linear layouts map physical points to logical cells (certify.md 1): a property is of
/// that map, as `show` reports it. A broadcast (a cell held by several threads) is not
/// injective; prove-property once answered "proved" for every such layout.
#[test]
fn physical_to_logical_layouts_are_judged_in_their_own_direction() {
    let broadcast = "((2,4),2):((0,1),4) -> (8)";
    assert_eq!(verdict(broadcast, Property::Injective), "refuted");
    assert_eq!(verdict(broadcast, Property::Bijective), "refuted");
    assert_eq!(verdict(broadcast, Property::Surjective), "proved");
    let blocked = Layout::parse(
        "#ttg.blocked<{sizePerThread=[1], threadsPerWarp=[32], warpsPerCTA=[4], order=[0]}>",
        Some(&[32]),
    )
    .unwrap();
    let r = prove_property(&blocked, Property::Bijective, None, &Policy::default()).unwrap();
    assert_eq!(r.verdict, "refuted", "{r:?}");
    assert_eq!(r.deciders.len(), 2, "{:?}", r.deciders);
    let fig1 =
        "#ttg.linear<{register=[[0,1],[1,0]], lane=[[0,2],[0,4],[0,8],[2,0],[4,0]], warp=[[8,0]]}>";
    assert_eq!(verdict(fig1, Property::Bijective), "proved");
}

fn pow2_tv() -> impl Strategy<Value = String> {
    // Thread and value modes over the bits of a 2^m x 2^n tile, some dropped (cells held by
    // nobody), some doubled as stride 0 (broadcast).
    (
        1u32..3,
        1u32..3,
        Just(()).prop_perturb(|_, mut rng| {
            let mut bits: Vec<u32> = (0..4).collect();
            for i in (1..bits.len()).rev() {
                bits.swap(i, rng.random_range(0..=i));
            }
            (
                bits,
                rng.random_range(1..4usize),
                rng.random_range(0..2usize),
                rng.random_range(0..2usize),
            )
        }),
    )
        .prop_map(|(m, n, (bits, split, zeros, drop))| {
            let total = (m + n) as usize;
            let mut bits: Vec<i64> = bits
                .into_iter()
                .filter(|&b| (b as usize) < total)
                .map(|b| 1 << b)
                .collect();
            bits.truncate(total - drop.min(total - 1));
            let split = split.min(bits.len() - 1).max(1);
            let mut thread = bits[..split].to_vec();
            thread.extend(std::iter::repeat_n(0, zeros));
            let value = if split < bits.len() {
                bits[split..].to_vec()
            } else {
                vec![0]
            };
            let mode = |v: &[i64]| {
                let e = vec!["2"; v.len()].join(",");
                let s: Vec<String> = v.iter().map(i64::to_string).collect();
                (format!("({e},)"), format!("({},)", s.join(",")))
            };
            let ((ts, td), (vs, vd)) = (mode(&thread), mode(&value));
            format!("({ts},{vs}):({td},{vd}) -> ({},{})", 1 << m, 1 << n)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    /// prove-property and show's facts agree on TV layouts (broadcast, partial, bijective),
    /// and injectivity matches the definition: no cell held by two (thread, value) points.
    #[test]
    fn tv_properties_agree_with_show_and_the_definition(t in pow2_tv()) {
        let l = parse(&t);
        let f = layout::facts::facts(&l, None).unwrap();
        let inj = verdict(&t, Property::Injective);
        prop_assert_eq!(inj == "proved", f.injective == layout::facts::Fact::Yes, "{}", t);
        let sur = verdict(&t, Property::Surjective);
        prop_assert_eq!(sur == "proved", f.surjective == layout::facts::Fact::Yes, "{}", t);
        let pairs = layout::relation::relation(&l, None).unwrap();
        let mut holders = std::collections::BTreeMap::new();
        for (cell, _) in &pairs {
            *holders.entry(cell.clone()).or_insert(0) += 1;
        }
        prop_assert_eq!(inj == "proved", holders.values().all(|&n| n == 1), "{}", t);
    }
}
