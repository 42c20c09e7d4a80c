//! Conversions between formalisms: worked vectors, refusals with reasons, the cross-system
//! facts of cute.md section 4, and property tests that a converted layout relates exactly the
//! same (logical, physical) pairs as the original.

use layout::convert::{convert, Target};
use layout::relation::relation;
use layout::{Layout, LayoutError};
use proptest::prelude::*;

fn parse(t: &str) -> Layout {
    Layout::parse(t, None).unwrap()
}

fn conv(t: &str, to: Target, shape: Option<&[i64]>) -> Layout {
    convert(&parse(t), to, shape).unwrap()
}

fn refusal(t: &str, to: Target, shape: Option<&[i64]>) -> String {
    match convert(&parse(t), to, shape) {
        Err(e @ LayoutError::NotRepresentable { .. }) => e.to_string(),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn cute_to_axe_reverses_modes_per_dimension() {
    assert_eq!(
        conv("((2,2),8):((1,16),2)", Target::Axe, None).print(),
        "S[(2,2,8):(16,1,2)]"
    );
    assert_eq!(
        conv("(4,8):(8,1)", Target::Axe, None).print(),
        "S[(4,8):(8,1)]"
    );
    assert_eq!(
        conv("S[(2,2,8):(16,1,2)]", Target::Cute, Some(&[4, 8])).print(),
        "((2, 2), 8):((1, 16), 2)"
    );
}

/// Modes that a dimension boundary splits unevenly as written are merged where they are one
/// mode (`(3,64):(1,3)` is `192:1`), then split by the shape; modes that fit as written keep
/// their structure.
#[test]
fn modes_that_are_one_mode_are_merged_before_splitting_by_the_shape() {
    assert_eq!(
        conv("(3,64):(1,3)", Target::Axe, Some(&[64, 3])).print(),
        "S[(64,3):(1,64)]"
    );
    assert_eq!(
        conv("((3,5),(2,7)):((1,3),(15,30))", Target::Axe, Some(&[7, 30])).print(),
        "S[(7,30):(1,7)]"
    );
    assert_eq!(
        conv("S[(3,64):(64,1)]", Target::Cute, Some(&[64, 3])).print(),
        "(64, 3):(3, 1)"
    );
    // Written modes that fit are kept: no merge.
    assert_eq!(
        conv("((2,2),8):((1,2),4)", Target::Axe, None).print(),
        "S[(2,2,8):(2,1,4)]"
    );
    // Modes that are not one mode still refuse: (3,4):(4,1) has no split at 4.
    let e = convert(&parse("(3,4):(4,1)"), Target::Axe, Some(&[4, 3])).unwrap_err();
    assert!(
        e.to_string().contains("splits a mode of extent 3 unevenly"),
        "{e}"
    );
}

#[test]
fn sm80_c_atom_as_axe_and_back() {
    let tv = "((4,8),(2,2)):((32,1),(16,8)) -> (16,8)";
    let axe = conv(tv, Target::Axe, None);
    assert_eq!(axe.print(), "S[(2,8,4,2):(2@reg,4@tx,1@tx,1@reg)]");
    let back = convert(&axe, Target::Cute, Some(&[16, 8])).unwrap();
    assert_eq!(
        back.print(),
        "((4, 8), (2, 2)):((32, 1), (16, 8)) -> (16, 8)"
    );
}

#[test]
fn triton_mmav2_equals_cute_sm80_c_by_enumeration() {
    let mma = Layout::parse(
        "#ttg.linear<{register = [[0, 1], [8, 0]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = [], block = []}>",
        Some(&[16, 8]),
    )
    .unwrap();
    let cute = parse("((4,8),(2,2)):((32,1),(16,8)) -> (16,8)");
    let (a, b) = (
        relation(&mma, None).unwrap(),
        relation(&cute, None).unwrap(),
    );
    assert_eq!(a.len(), 128);
    assert_eq!(a, b);
    assert_eq!(convert(&mma, Target::Cute, None).unwrap(), cute);
}

#[test]
fn gmma_c_64x16_equals_triton_mmav3_by_enumeration() {
    let mma = Layout::parse(
        "#ttg.linear<{register = [[0, 1], [8, 0], [0, 8]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = [[16, 0], [32, 0]], block = []}>",
        Some(&[64, 16]),
    )
    .unwrap();
    let cute = parse("((4,8,4),(2,2,2)):((128,1,16),(64,8,512)) -> (64,16)");
    let (a, b) = (
        relation(&mma, None).unwrap(),
        relation(&cute, None).unwrap(),
    );
    assert_eq!(a.len(), 1024);
    assert_eq!(a, b);
}

#[test]
fn power_of_two_layouts_convert_to_f2() {
    let l = conv("(4,2):(2,1)", Target::Linear, None);
    let Layout::Linear(f) = &l else { panic!() };
    assert_eq!(
        layout::notation::linear::print_attr(f).unwrap(),
        "#ttg.linear<{offset = [[0, 1], [1, 0], [2, 0]]}>"
    );
    // The Axe tensor-core tile with its replica: warpid bit 2 is a zero basis (broadcast).
    let t = conv(
        "S[(8,2,4,2):(4@laneid,1@warpid,1@laneid,1@reg)] + R[2:2@warpid]",
        Target::Linear,
        Some(&[8, 16]),
    );
    let Layout::Linear(f) = &t else { panic!() };
    assert_eq!(
        f.in_dim("warp").unwrap().bases,
        vec![vec![0, 8], vec![0, 0]]
    );
    assert_eq!(
        relation(&t, None).unwrap(),
        relation(
            &parse("S[(8,2,4,2):(4@laneid,1@warpid,1@laneid,1@reg)] + R[2:2@warpid]"),
            Some(&[8, 16])
        )
        .unwrap()
    );
}

#[test]
fn non_f2_layouts_are_refused_with_the_reason() {
    assert!(
        refusal("4:3", Target::Linear, None).contains("carries"),
        "stride 3"
    );
    assert!(refusal("6:1", Target::Linear, None).contains("not a power of two"));
    assert!(refusal("4:2", Target::Linear, None).contains("hole"));
    assert!(refusal("(2,2):(1,0)", Target::Linear, None).contains("not a function"));
    assert!(refusal("S[4:1] + 3", Target::Linear, None).contains("offset"));
    assert!(refusal("Sw<3,4,3> o (8,1024):(1024,1)", Target::Axe, None).contains("XOR"));
    assert!(refusal("S[4:2@laneid]", Target::Cute, Some(&[4])).contains("holds no element"));
    assert!(refusal("S[(4,4):(1@laneid,1)]", Target::Cute, None).contains("axes"));
    assert!(refusal("S[4:1] + R[2:8]", Target::Cute, None).contains("replica"));
}

// The relation reads a thread as tx = lane + 32*warp: with 2 lane bits, warp 1 is thread 32,
// but a TV thread index would put it at thread 4 (the bit right above the lanes).
#[test]
fn linear_to_cute_refuses_lanes_other_than_five_bits_under_warps() {
    let l = Layout::parse("#ttg.linear<{lane=[[1],[2]], warp=[[4]]}>", Some(&[8])).unwrap();
    match convert(&l, Target::Cute, None) {
        Err(e @ LayoutError::NotRepresentable { .. }) => {
            assert!(e.to_string().contains("2 bits, not 5"), "{e}")
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
    // Without warps the lanes are the thread index.
    let l = Layout::parse("#ttg.linear<{lane=[[1],[2]], warp=[]}>", Some(&[4])).unwrap();
    let c = convert(&l, Target::Cute, None).unwrap();
    assert_eq!(relation(&c, None).unwrap(), relation(&l, None).unwrap());
}

#[test]
fn swizzled_layout_converts_to_xor_bases() {
    let l = conv("Sw<1,0,1> o (2,2):(2,1)", Target::Linear, None);
    let sw = parse("Sw<1,0,1> o (2,2):(2,1)");
    assert_eq!(relation(&l, None).unwrap(), relation(&sw, None).unwrap());
}

// ---- property tests ----

fn axis_name() -> impl Strategy<Value = &'static str> {
    prop_oneof![Just("m"), Just("laneid"), Just("warpid"), Just("reg")]
}

fn axe_text() -> impl Strategy<Value = String> {
    (
        prop::collection::vec((1i64..5, -6i64..7, axis_name()), 1..5),
        prop::collection::vec((1i64..5, -6i64..7, axis_name()), 0..3),
        prop::collection::vec((-9i64..10, axis_name()), 0..3),
    )
        .prop_map(|(d, r, o)| {
            let term = |s: i64, a: &str| {
                if a == "m" {
                    s.to_string()
                } else {
                    format!("{s}@{a}")
                }
            };
            let mut t = format!(
                "S[({}):({})]",
                d.iter()
                    .map(|x| x.0.to_string())
                    .collect::<Vec<_>>()
                    .join(","),
                d.iter()
                    .map(|x| term(x.1, x.2))
                    .collect::<Vec<_>>()
                    .join(",")
            );
            if !r.is_empty() {
                t += &format!(
                    " + R[({}):({})]",
                    r.iter()
                        .map(|x| x.0.to_string())
                        .collect::<Vec<_>>()
                        .join(","),
                    r.iter()
                        .map(|x| term(x.1, x.2))
                        .collect::<Vec<_>>()
                        .join(",")
                );
            }
            let mut seen = Vec::new();
            for (v, a) in o {
                if !seen.contains(&a) {
                    seen.push(a);
                    t += &format!(" + {}", term(v, a));
                }
            }
            t
        })
}

fn int_tuple(depth: u32) -> BoxedStrategy<(String, String)> {
    let leaf = (1i64..5, -8i64..9).prop_map(|(e, s)| (e.to_string(), s.to_string()));
    if depth == 0 {
        return leaf.boxed();
    }
    prop_oneof![
        leaf,
        prop::collection::vec(int_tuple(depth - 1), 1..4).prop_map(|v| {
            let s: Vec<String> = v.iter().map(|x| x.0.clone()).collect();
            let d: Vec<String> = v.iter().map(|x| x.1.clone()).collect();
            let one = if v.len() == 1 { "," } else { "" };
            (
                format!("({}{one})", s.join(",")),
                format!("({}{one})", d.join(",")),
            )
        })
    ]
    .boxed()
}

/// A bijective power-of-two TV layout: tile bits dealt out to thread and value modes, plus
/// some broadcast (stride-0) thread bits.
fn pow2_tv() -> impl Strategy<Value = String> {
    (
        1u32..4,
        1u32..4,
        Just(()).prop_perturb(|_, mut rng| {
            let mut bits: Vec<u32> = (0..6).collect();
            for i in (1..bits.len()).rev() {
                bits.swap(i, rng.random_range(0..=i));
            }
            (
                bits,
                rng.random_range(1..5usize),
                rng.random_range(0..2usize),
            )
        }),
    )
        .prop_map(|(m, n, (bits, split, zeros))| {
            let total = (m + n) as usize;
            let bits: Vec<u32> = bits.into_iter().filter(|&b| (b as usize) < total).collect();
            let split = split.min(total - 1);
            let mut thread: Vec<i64> = bits[..split].iter().map(|&b| 1i64 << b).collect();
            thread.extend(std::iter::repeat_n(0, zeros));
            let value: Vec<i64> = bits[split..].iter().map(|&b| 1i64 << b).collect();
            let mode = |v: &[i64]| {
                let e = vec!["2"; v.len()].join(",");
                let s: Vec<String> = v.iter().map(i64::to_string).collect();
                format!("({e},):({},)", s.join(","))
            };
            let (ts, td) = mode(&thread)
                .split_once(':')
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .unwrap();
            let (vs, vd) = mode(&value)
                .split_once(':')
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .unwrap();
            format!("({ts},{vs}):({td},{vd}) -> ({},{})", 1 << m, 1 << n)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn axe_print_parse_round_trip(t in axe_text()) {
        let l = parse(&t);
        prop_assert_eq!(Layout::parse(&l.print(), None).unwrap(), l);
    }

    #[test]
    fn cute_print_parse_round_trip(st in int_tuple(3)) {
        let l = parse(&format!("{}:{}", st.0, st.1));
        prop_assert_eq!(Layout::parse(&l.print(), None).unwrap(), l.clone());
        let sw = parse(&format!("Sw<2,1,3> o {}:{}", st.0, st.1.replace('-', "")));
        prop_assert_eq!(Layout::parse(&sw.print(), None).unwrap(), sw);
    }

    #[test]
    fn cute_to_axe_preserves_the_relation(st in int_tuple(2)) {
        let l = parse(&format!("{}:{}", st.0, st.1));
        let a = convert(&l, Target::Axe, None).unwrap();
        let shape = l.default_shape();
        prop_assert_eq!(relation(&a, Some(&shape)).unwrap(), relation(&l, None).unwrap());
        let back = convert(&a, Target::Cute, Some(&shape)).unwrap();
        prop_assert_eq!(relation(&back, Some(&shape)).unwrap(), relation(&l, None).unwrap());
    }

    /// A compact chain of modes `(e1,e2,..):(d, d*e1, ..)`, grouped at random and given any
    /// 2-D shape of its size, is one mode: it always converts, and the Axe form relates the
    /// same pairs as the CuTe layout over that shape (both read by `relation`, the semantics).
    #[test]
    fn a_chain_of_modes_converts_over_every_shape_of_its_size(
        ext in prop::collection::vec(1i64..7, 1..5),
        d in prop::sample::select(vec![1i64, 2, 3, -1, 5]),
        cut in 1usize..4,
        p_pick in 0usize..64,
    ) {
        let mut strides = Vec::new();
        let mut s = d;
        for e in &ext {
            strides.push(s);
            s *= e;
        }
        let join = |v: &[i64]| v.iter().map(i64::to_string).collect::<Vec<_>>().join(",");
        let cut = cut.min(ext.len());
        let text = if cut < ext.len() {
            format!("(({}),({})):(({}),({}))", join(&ext[..cut]), join(&ext[cut..]),
                join(&strides[..cut]), join(&strides[cut..]))
        } else {
            format!("({}):({})", join(&ext), join(&strides))
        };
        let l = parse(&text);
        let n: i64 = ext.iter().product();
        let divisors: Vec<i64> = (1..=n).filter(|q| n % q == 0).collect();
        let p = divisors[p_pick % divisors.len()];
        let shape = [p, n / p];
        let a = convert(&l, Target::Axe, Some(&shape)).unwrap();
        prop_assert_eq!(relation(&a, Some(&shape)).unwrap(), relation(&l, Some(&shape)).unwrap());
    }

    #[test]
    fn axe_single_axis_to_cute_preserves_the_relation(ext in prop::collection::vec((1i64..5, -6i64..7), 1..5), split in 0usize..4) {
        let text = format!("S[({}):({})]", ext.iter().map(|x| x.0.to_string()).collect::<Vec<_>>().join(","),
            ext.iter().map(|x| x.1.to_string()).collect::<Vec<_>>().join(","));
        let a = parse(&text);
        let size = a.domain_size();
        let first = ext.iter().take(split).map(|x| x.0).product::<i64>();
        let shape = [first, size / first];
        match convert(&a, Target::Cute, Some(&shape)) {
            Ok(c) => prop_assert_eq!(relation(&c, Some(&shape)).unwrap(), relation(&a, Some(&shape)).unwrap()),
            Err(e) => prop_assert!(false, "{}", e),
        }
    }

    /// A TV layout that holds only half its tile has no exact linear form (Triton's layouts
    /// reach every cell): refused, as the Axe conversion refuses it. The linear conversion once
    /// answered with a layout over the half it held.
    #[test]
    fn tv_layouts_missing_tile_cells_are_refused(t in pow2_tv()) {
        let (tv, tile) = t.rsplit_once(" -> (").unwrap();
        let (a, b) = tile.trim_end_matches(')').split_once(',').unwrap();
        let a: i64 = a.parse().unwrap();
        let half = parse(&format!("{tv} -> ({},{b})", 2 * a));
        for to in [Target::Linear, Target::Axe] {
            let why = refusal(&half.print(), to, None);
            prop_assert!(why.contains("is held by no (thread, value)"), "{}", why);
        }
    }

    #[test]
    fn tv_conversions_preserve_the_relation(t in pow2_tv()) {
        let tv = parse(&t);
        let rel = relation(&tv, None).unwrap();
        let axe = convert(&tv, Target::Axe, None).unwrap();
        let Layout::Tv(inner) = &tv else { unreachable!() };
        prop_assert_eq!(&relation(&axe, Some(inner.tile())).unwrap(), &rel);
        let lin = convert(&tv, Target::Linear, None).unwrap();
        prop_assert_eq!(&relation(&lin, None).unwrap(), &rel);
        let back = convert(&lin, Target::Cute, None).unwrap();
        prop_assert_eq!(&relation(&back, None).unwrap(), &rel);
        let from_axe = convert(&axe, Target::Cute, Some(inner.tile())).unwrap();
        prop_assert_eq!(&relation(&from_axe, None).unwrap(), &rel);
        let lin_axe = convert(&lin, Target::Axe, None).unwrap();
        prop_assert_eq!(&relation(&lin_axe, Some(inner.tile())).unwrap(), &rel);
    }

    #[test]
    fn linear_to_cute_preserves_the_relation_or_refuses(
        (lanes, warps, regs) in (0usize..7, 0usize..3, 0usize..3)
    ) {
        // A permutation of the cell bits: register bits first, then lane, then warp.
        let bit = |k: usize| format!("[{}]", 1i64 << k);
        let take = |from: usize, n: usize| (from..from + n).map(bit).collect::<Vec<_>>().join(", ");
        let text = format!(
            "#ttg.linear<{{register=[{}], lane=[{}], warp=[{}]}}>",
            take(0, regs),
            take(regs, lanes),
            take(regs + lanes, warps)
        );
        let n = 1i64 << (regs + lanes + warps);
        let l = Layout::parse(&text, Some(&[n])).unwrap();
        if let Ok(c) = convert(&l, Target::Cute, None) {
            prop_assert_eq!(relation(&c, None).unwrap(), relation(&l, None).unwrap(), "{}", text);
        }
    }

    #[test]
    fn axe_to_linear_preserves_the_relation_or_refuses(t in axe_text()) {
        let a = parse(&t);
        let shape = a.default_shape();
        if let Ok(lin) = convert(&a, Target::Linear, Some(&shape)) {
            prop_assert_eq!(relation(&lin, None).unwrap(), relation(&a, Some(&shape)).unwrap());
        }
    }
}
