//! Equivalence decisions: cross-system pairs proved, mutated pairs refuted with counterexamples
//! confirmed by the semantics, and the deciders checked against each other on random pairs.

use certify::{equivalent, DeciderKind, Outcome, Policy};
use layout::convert::{convert, Target};
use layout::Layout;
use proptest::prelude::*;

fn parse(t: &str, shape: Option<&[i64]>) -> Layout {
    Layout::parse(t, shape).unwrap()
}

/// Decides with the default policy, requiring both deciders to answer (they agree, or
/// `equivalent` errors).
fn both_decide(a: &Layout, b: &Layout, shape: Option<&[i64]>) -> &'static str {
    let r = equivalent(a, b, shape, &Policy::default()).unwrap();
    let d = r.deciding();
    assert!(
        d.contains(&DeciderKind::Exhaustive) && d.contains(&DeciderKind::Smt),
        "{:?}",
        r.runs
    );
    r.verdict()
}

/// Decides where only enumeration applies (a side has no strided form, so z3 says unknown).
fn exhaustive_decides(a: &Layout, b: &Layout, shape: Option<&[i64]>) -> &'static str {
    let r = equivalent(a, b, shape, &Policy::default()).unwrap();
    assert!(!r.deciding().contains(&DeciderKind::Smt), "{:?}", r.runs);
    assert!(
        r.deciding().contains(&DeciderKind::Exhaustive),
        "{:?}",
        r.runs
    );
    r.verdict()
}

const MMAV2_16X8: &str =
    "#ttg.linear<{register = [[0, 1], [8, 0]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = [], block = []}>";
const SM80_C: &str = "((4,8),(2,2)):((32,1),(16,8)) -> (16,8)";

#[test]
fn triton_mmav2_is_cute_sm80_c() {
    assert_eq!(
        both_decide(
            &parse(MMAV2_16X8, Some(&[16, 8])),
            &parse(SM80_C, None),
            None
        ),
        "equivalent"
    );
}

#[test]
fn triton_mmav3_is_cute_gmma_c_64x16() {
    let mma = parse(
        "#ttg.linear<{register = [[0, 1], [8, 0], [0, 8]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = [[16, 0], [32, 0]], block = []}>",
        Some(&[64, 16]),
    );
    let gmma = parse("((4,8,4),(2,2,2)):((128,1,16),(64,8,512)) -> (64,16)", None);
    assert_eq!(both_decide(&mma, &gmma, None), "equivalent");
}

#[test]
fn axe_tensor_core_tile_is_its_cute_tv_form() {
    let axe = parse(
        "S[(8,2,4,2):(4@laneid,1@warpid,1@laneid,1@reg)] + R[2:2@warpid]",
        None,
    );
    let tv = convert(&axe, Target::Cute, Some(&[8, 16])).unwrap();
    assert!(matches!(tv, Layout::Tv(_)), "{tv:?}");
    assert_eq!(both_decide(&axe, &tv, Some(&[8, 16])), "equivalent");
}

#[test]
fn mutated_stride_is_refuted_with_a_confirmed_counterexample() {
    let bad = parse("((4,8),(2,2)):((32,1),(16,4)) -> (16,8)", None);
    let r = equivalent(
        &parse(MMAV2_16X8, Some(&[16, 8])),
        &bad,
        None,
        &Policy::default(),
    )
    .unwrap();
    assert_eq!(r.verdict(), "not equivalent");
    let c = r.counterexample.unwrap();
    assert_ne!(c.left, c.right);
    // The mutant's TV map overlaps itself, so it has no strided form: enumeration decides.
    let outcome = |k: DeciderKind| &r.runs.iter().find(|x| x.decider == k).unwrap().outcome;
    assert!(
        matches!(outcome(DeciderKind::Exhaustive), Outcome::Refuted { .. }),
        "{:?}",
        r.runs
    );
    assert!(
        matches!(outcome(DeciderKind::Smt), Outcome::Unknown { .. }),
        "{:?}",
        r.runs
    );
    // A mutant that stays a bijection is refuted by both.
    let swapped = parse("((4,8),(2,2)):((32,1),(8,16)) -> (16,8)", None);
    assert_eq!(
        both_decide(&parse(MMAV2_16X8, Some(&[16, 8])), &swapped, None),
        "not equivalent"
    );
}

#[test]
fn swizzled_layouts_are_decided_by_both() {
    let a = parse("Sw<3,4,3> o (8,1024):(1024,1)", None);
    let c = parse("Sw<3,4,2> o (8,1024):(1024,1)", None);
    assert_eq!(both_decide(&a, &a, None), "equivalent");
    // The F2 form XORs bases, which has no strided form: enumeration decides it.
    assert_eq!(
        exhaustive_decides(&a, &convert(&a, Target::Linear, None).unwrap(), None),
        "equivalent"
    );
    assert_eq!(both_decide(&a, &c, None), "not equivalent");
}

#[test]
fn replicas_compare_as_sets() {
    let a = parse("S[1:1] + R[(8,4):(4@laneid,1@laneid)] + 2@warpid", None);
    let b = parse("S[1:1] + R[(4,8):(1@laneid,4@laneid)] + 2@warpid", None);
    let c = parse("S[1:1] + R[(4,8):(1@laneid,4@laneid)] + 3@warpid", None);
    assert_eq!(both_decide(&a, &b, None), "equivalent");
    assert_eq!(both_decide(&a, &c, None), "not equivalent");
    let d = parse("S[1:1] + R[(4,4):(1@laneid,4@laneid)] + 2@warpid", None);
    assert_eq!(both_decide(&a, &d, None), "not equivalent");
}

#[test]
fn laneid_warpid_compare_with_thread_index() {
    let a = parse("S[(4,32):(1@warpid,1@laneid)]", None);
    let b = parse("S[128:1@tx]", None);
    assert_eq!(both_decide(&a, &b, None), "equivalent");
}

#[test]
fn smt_query_is_exported() {
    // CuTe (i,j) -> 8i + j over (4,8) is the Axe S[(4,8):(8,1)]; S[(8,4):(1,8)] reads the
    // same 32 offsets in another order, so the two differ.
    let cute = parse("(4,8):(8,1)", None);
    let r = equivalent(
        &cute,
        &parse("S[(4,8):(8,1)]", None),
        Some(&[4, 8]),
        &Policy::default(),
    )
    .unwrap();
    assert_eq!(r.verdict(), "equivalent");
    assert!(r.smt_query.as_deref().unwrap().contains("(check-sat)"));
    let r = equivalent(
        &cute,
        &parse("S[(8,4):(1,8)]", None),
        Some(&[4, 8]),
        &Policy::default(),
    )
    .unwrap();
    assert_eq!(r.verdict(), "not equivalent");
}

fn cute_text() -> impl Strategy<Value = String> {
    prop::collection::vec((1i64..5, 0i64..12), 1..5).prop_map(|m| {
        let s: Vec<String> = m.iter().map(|x| x.0.to_string()).collect();
        let d: Vec<String> = m.iter().map(|x| x.1.to_string()).collect();
        format!("({},):({},)", s.join(","), d.join(","))
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn deciders_agree_and_conversions_are_proved(t in cute_text(), k in 0usize..5, delta in 1i64..3) {
        let a = parse(&t, None);
        let axe = convert(&a, Target::Axe, None).unwrap();
        // The conversion keeps the map over the CuTe layout's own domain, which the claim
        // names: the Axe side reads it row-major (without it a rank-2 CuTe side against an
        // Axe side is ambiguous, spec certify.md 1b).
        let shape = certify::domain::natural(&a).shape;
        prop_assert_eq!(both_decide(&a, &axe, Some(&shape)), "equivalent");
        // Mutate one stride of the Axe form.
        let Layout::Axe(x) = &axe else { unreachable!() };
        let mut shard = x.shard().to_vec();
        if shard.is_empty() { return Ok(()); }
        let i = k % shard.len();
        shard[i].stride += delta;
        let m = Layout::Axe(layout::AxeLayout::from_shard(shard).unwrap());
        let r = equivalent(&a, &m, Some(&shape), &Policy::default()).unwrap();
        // Normal form (canonical forms), exhaustive and z3 all decide.
        prop_assert_eq!(r.deciding().len(), 3);
        // A stride change on an extent-1 iter changes nothing; otherwise the map changed.
        let changed = x.shard()[i].extent > 1;
        prop_assert_eq!(r.verdict(), if changed { "not equivalent" } else { "equivalent" });
    }
}

#[test]
fn certificates_recheck_and_any_tampering_is_caught() {
    use certify::certificate::{certify_equivalence, check};
    let a = parse(MMAV2_16X8, Some(&[16, 8]));
    let b = parse(SM80_C, None);
    let r = equivalent(&a, &b, None, &Policy::default()).unwrap();
    let cert = certify_equivalence(&a, &b, &r);
    let json = serde_json::to_string_pretty(&cert).unwrap();
    assert_eq!(check(&json).unwrap(), cert);
    // Flip each field in turn (re-digesting so only the re-check can catch it).
    let mut edits: Vec<certify::certificate::Certificate> = Vec::new();
    let mut e = cert.clone();
    e.claim.right = "((4,8),(2,2)):((32,1),(8,16)) -> (16,8)".into();
    edits.push(e);
    let mut e = cert.clone();
    e.claim.shape = vec![8, 16];
    edits.push(e);
    let mut e = cert.clone();
    e.verdict = "not equivalent".into();
    edits.push(e);
    let mut e = cert.clone();
    e.axes = vec!["m".into(), "tx".into()];
    edits.push(e);
    let mut e = cert.clone();
    e.smt_query = Some("(check-sat)".into());
    edits.push(e);
    let mut e = cert.clone();
    e.evidence.pop();
    edits.push(e);
    let mut e = cert.clone();
    e.evidence[0].outcome = certify::Outcome::Proved {
        evidence: "trust me".into(),
    };
    edits.push(e);
    for mut e in edits {
        e.digest = certify::certificate::digest(&e);
        assert!(
            check(&serde_json::to_string(&e).unwrap()).is_err(),
            "accepted {e:?}"
        );
    }
    // An edit without re-digesting is caught by the digest alone.
    let tampered = json.replacen("32, 1", "32, 2", 1);
    assert!(check(&tampered).is_err());
    let version = format!("\"version\": {}", certify::certificate::VERSION);
    assert!(json.contains(&version));
    assert!(check(&json.replace(&version, "\"version\": 99")).is_err());
}

#[test]
fn normal_form_decides_power_of_two_pairs_both_ways() {
    let p = Policy::default();
    let r = equivalent(
        &parse(MMAV2_16X8, Some(&[16, 8])),
        &parse(SM80_C, None),
        None,
        &p,
    )
    .unwrap();
    assert!(
        matches!(r.runs[0].outcome, Outcome::Proved { .. }),
        "{:?}",
        r.runs[0]
    );
    let swapped = parse("((4,8),(2,2)):((32,1),(8,16)) -> (16,8)", None);
    let r = equivalent(&parse(MMAV2_16X8, Some(&[16, 8])), &swapped, None, &p).unwrap();
    assert_eq!(r.runs[0].decider, DeciderKind::NormalForm);
    assert!(
        matches!(r.runs[0].outcome, Outcome::Refuted { .. }),
        "{:?}",
        r.runs[0]
    );
    // Not a power of two: the canonical forms decide, with an explained counterexample.
    let r = equivalent(
        &parse("(3,4):(4,1)", None),
        &parse("S[(4,3):(1,4)]", None),
        Some(&[3, 4]),
        &p,
    )
    .unwrap();
    let Outcome::Refuted { counterexample: c } = &r.runs[0].outcome else {
        panic!("{:?}", r.runs[0])
    };
    assert_eq!(c.index, 1);
    let e = c.explanation.as_ref().expect("explained");
    // m = x against m = (x mod 3) * 4 + x / 3: equal only at x = 0 and x = 11.
    assert_eq!((e.differing, e.of), ((10, 10), 12));
    assert_eq!(e.first, vec![vec![0, 1], vec![0, 2], vec![0, 3]]);
}

#[test]
fn normal_form_decides_strided_pairs_at_any_size() {
    let p = Policy::default();
    // One mode regrouped, 9 * 10^8 indices: equal by canonical forms (and by z3).
    let r = equivalent(
        &parse("(30000,30000):(30000,1)", None),
        &parse("(30000,(100,300)):(30000,(1,100))", None),
        None,
        &p,
    )
    .unwrap();
    assert_eq!(r.verdict(), "equivalent");
    assert!(
        matches!(r.runs[0].outcome, Outcome::Proved { .. }),
        "{:?}",
        r.runs
    );
    // A one-stride mutant: 897 * 10^6 indices differ (those with a nonzero middle digit).
    let r = equivalent(
        &parse("(30000,30000):(30000,1)", None),
        &parse("(30000,(100,300)):(30000,(1,101))", None),
        None,
        &p,
    )
    .unwrap();
    assert_eq!(r.verdict(), "not equivalent");
    let c = r.counterexample.expect("refuted");
    let e = c.explanation.expect("explained by the normal form");
    assert_eq!(e.differing, (897_000_000, 897_000_000));
    assert_eq!(e.mode, Some(1));
    // Odd mixed radix: compact 3*5*7*11*13*17*4 is 1021020:1.
    let r = equivalent(
        &parse("(1021020):(1)", None),
        &parse("(3,5,7,11,13,17,4):(1,3,15,105,1155,15015,255255)", None),
        Some(&[1021020]),
        &p,
    )
    .unwrap();
    assert_eq!(r.deciding().len(), 3, "{:?}", r.runs);
    assert_eq!(r.verdict(), "equivalent");
}

/// Axe text from iters `(extent, stride, axis)`, replica iters and an offset on `m`.
fn axe_text(shard: &[(i64, i64, usize)], reps: &[(i64, i64, usize)], off: i64) -> String {
    let axis = |k: usize| ["m", "laneid", "warpid"][k];
    let part = |its: &[(i64, i64, usize)]| {
        let e: Vec<String> = its.iter().map(|x| x.0.to_string()).collect();
        let s: Vec<String> = its
            .iter()
            .map(|x| format!("{}@{}", x.1, axis(x.2)))
            .collect();
        format!("({}):({})", e.join(","), s.join(","))
    };
    let mut t = format!("S[{}]", part(shard));
    if !reps.is_empty() {
        t += &format!(" + R[{}]", part(reps));
    }
    t + &format!(" + {off}@m")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// On random Axe layouts with stride 0, size-1 iters, negative strides, several axes,
    /// replicas and offsets, the canonical-form verdict agrees with enumeration (the policy
    /// errors when deciders disagree): respelled pairs (an iter split) are proved, mutants are
    /// decided the same way by both.
    #[test]
    fn canonical_forms_agree_with_enumeration_on_axe_layouts(
        shard in prop::collection::vec((1i64..5, -5i64..6, 0usize..3), 1..4),
        reps in prop::collection::vec((1i64..4, -3i64..4, 0usize..3), 0..3),
        off in -2i64..3,
        split in 0usize..4,
        mutate in 0usize..6,
        delta in 1i64..3,
    ) {
        let a = parse(&axe_text(&shard, &reps, off), None);
        // Lanes spanning a warp or more, with warps: no fused comparison (`check_fusion`).
        prop_assume!(layout::relation::check_fusion(&[&a]).is_ok());
        // Split iter `split` (when its extent is 4) into (2, 2*s), (2, s): the same map.
        let mut sb = Vec::new();
        for (i, &(e, s, ax)) in shard.iter().enumerate() {
            if i == split && e == 4 {
                sb.push((2, 2 * s, ax));
                sb.push((2, s, ax));
            } else {
                sb.push((e, s, ax));
            }
        }
        let b = parse(&axe_text(&sb, &reps, off), None);
        let r = equivalent(&a, &b, None, &Policy::default()).unwrap();
        prop_assert_eq!(r.verdict(), "equivalent");
        prop_assert!(matches!(r.runs[0].outcome, Outcome::Proved { .. }), "{:?}", r.runs[0]);
        let mut rb = reps.clone();
        let mut ob = off;
        match mutate {
            0 | 1 if mutate < sb.len() => sb[mutate].1 += delta,
            2 if !rb.is_empty() => rb[0].1 += delta,
            3 => ob += delta,
            _ => {}
        }
        let m = parse(&axe_text(&sb, &rb, ob), None);
        prop_assume!(layout::relation::check_fusion(&[&a, &m]).is_ok());
        let r = equivalent(&a, &m, None, &Policy::default()).unwrap();
        let d = r.deciding();
        prop_assert!(
            d.contains(&DeciderKind::NormalForm) && d.contains(&DeciderKind::Exhaustive),
            "{:?}",
            r.runs
        );
    }
}

/// Each axis's own span fits in i64 (2^58 warps), but `tx = laneid + 32*warpid` does not: the
/// forward form refuses it (an error), so no decider computes a wrapped point.
#[test]
fn a_point_that_overflows_after_fusing_axes_is_an_error() {
    let l = parse("S[(2,2):(16@laneid, 288230376151711744@warpid)]", None);
    let e = equivalent(&l, &l, None, &Policy::default()).unwrap_err();
    let e = e.to_string();
    assert!(e.contains("exceed i64") || e.contains("overflow"), "{e}");
}

/// A refutation certificate re-checks in a process that has already run other z3 queries (the
/// Python package found that z3's thread-local context made the second query's model differ,
/// so `check` answered "a decider's evidence differs" on a correct certificate).
#[test]
fn refutation_certificate_rechecks_after_other_queries_in_one_process() {
    use certify::certificate::{certify_equivalence, check};
    let shape = [4, 8];
    let p = Policy::default();
    let a = Layout::parse("(4,8):(8,1)", None).unwrap();
    let other = Layout::parse("S[(8,4):(1,2)]", None).unwrap();
    let b = Layout::parse("S[(8,4):(1,8)]", None).unwrap();
    equivalent(&a, &other, Some(&shape), &p).unwrap();
    let r = equivalent(&a, &b, Some(&shape), &p).unwrap();
    assert!(r.counterexample.is_some(), "the pair differs at (0,1)");
    let text = serde_json::to_string(&certify_equivalence(&a, &b, &r)).unwrap();
    for round in 0..3 {
        equivalent(&other, &b, Some(&shape), &p).unwrap();
        check(&text).unwrap_or_else(|e| panic!("round {round}: {e}"));
    }
}
