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
    assert_eq!(r.deciders.len(), 2, "exhaustive and smt: {:?}", r.deciders);
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
