//! F2 linear-layout algebra: the spec's worked vectors (linear.md §2) and property tests of
//! every operation against evaluation.

use layout::linear::{instruction_tile, InDim, Instruction, LinearLayout, OutDim};
use proptest::prelude::*;

fn ll(ins: &[(&str, &[&[i64]])], outs: &[(&str, i64)]) -> LinearLayout {
    LinearLayout::new(
        ins.iter()
            .map(|(n, b)| InDim {
                name: n.to_string(),
                bases: b.iter().map(|v| v.to_vec()).collect(),
            })
            .collect(),
        outs.iter()
            .map(|(n, s)| OutDim {
                name: n.to_string(),
                log2_size: s.trailing_zeros(),
            })
            .collect(),
    )
    .unwrap()
}

#[test]
fn compose_reproduces_tritons_vector() {
    let l1 = ll(
        &[("in1", &[&[1, 1], &[0, 1]]), ("in2", &[&[1, 0], &[1, 2]])],
        &[("out1", 4), ("out2", 4)],
    );
    let l2 = ll(
        &[("out1", &[&[2, 2], &[1, 0]]), ("out2", &[&[1, 1], &[2, 1]])],
        &[("out3", 4), ("out4", 4)],
    );
    let want = ll(
        &[("in1", &[&[3, 3], &[1, 1]]), ("in2", &[&[2, 2], &[0, 3]])],
        &[("out3", 4), ("out4", 4)],
    );
    assert_eq!(l2.compose(&l1).unwrap(), want);
}

/// Audit 28: an out-dim of size 1 of the inner layout carries no bit, so the outer needs no
/// in-dim for it (Triton's text cannot write a 0-bit in-dim); a missing in-dim of size 2 is
/// still refused, and the message says it is missing.
#[test]
fn compose_needs_no_in_dim_for_a_size_one_out_dim() {
    let inner = ll(&[("i0", &[&[0, 1]])], &[("m0", 1), ("m1", 2)]);
    let outer = ll(&[("m1", &[&[1]])], &[("o0", 2)]);
    let want = ll(&[("i0", &[&[1]])], &[("o0", 2)]);
    assert_eq!(outer.compose(&inner).unwrap(), want);
    let wider = ll(&[("i0", &[&[1, 1]])], &[("m0", 2), ("m1", 2)]);
    let e = outer.compose(&wider).unwrap_err().to_string();
    assert!(e.contains("the outer has no such in-dim"), "{e}");
}

#[test]
fn invert_and_compose_reproduces_tritons_vector() {
    let a = ll(&[("in1", &[&[2], &[1], &[4]])], &[("out", 8)]);
    let b = ll(&[("in2", &[&[4], &[1], &[2]])], &[("out", 8)]);
    let want = ll(&[("in1", &[&[4], &[2], &[1]])], &[("in2", 8)]);
    assert_eq!(a.invert_and_compose(&b).unwrap(), want);
}

fn figure1() -> LinearLayout {
    ll(
        &[
            ("register", &[&[0, 1], &[1, 0]]),
            ("lane", &[&[0, 2], &[0, 4], &[0, 8], &[2, 0], &[4, 0]]),
            ("warp", &[&[8, 0]]),
        ],
        &[("dim0", 16), ("dim1", 16)],
    )
}

#[test]
fn apply_figure1_thread9_register1() {
    let l = figure1();
    assert_eq!(l.apply(&[1, 9, 0]).unwrap(), vec![2, 3]);
}

#[test]
fn right_inverse_of_figure1_recovers_hardware_indices() {
    let l = figure1();
    let inv = l.right_inverse().unwrap();
    // (2,3) is held by register 1, lane 9, warp 0.
    assert_eq!(inv.apply(&[2, 3]).unwrap(), vec![1, 9, 0]);
    assert_eq!(inv.ins()[0].name, "dim0");
    assert_eq!(inv.outs()[2].name, "warp");
}

#[test]
fn right_inverse_takes_the_first_of_broadcast_bases() {
    // Registers 1 and 2 both hold dim0=1: free variables 0 means register 1 is used.
    let l = ll(
        &[("register", &[&[1], &[1]]), ("lane", &[&[2]])],
        &[("dim0", 4)],
    );
    let inv = l.right_inverse().unwrap();
    assert_eq!(inv.apply(&[1]).unwrap(), vec![1, 0]);
    assert_eq!(inv.apply(&[3]).unwrap(), vec![1, 1]);
    let e = ll(&[("register", &[&[1]])], &[("dim0", 4)]).right_inverse();
    assert!(e.unwrap_err().to_string().contains("dim0=2"));
}

/// With a non-injective B, `invert_and_compose` sets the free variables to 0: B's basis 2 (= 3,
/// the XOR of bases 0 and 1) is never used, so 3 is reached as `in = 3` (two set bits) though
/// `in = 4` (one) holds it too. Both are correct (`B ∘ result = A`); the documentation promises
/// free variables 0, not the fewest set bits.
#[test]
fn invert_and_compose_sets_free_variables_to_zero_not_fewest_bits() {
    let a = ll(&[("x", &[&[3]])], &[("out", 4)]);
    let b = ll(&[("in", &[&[1], &[2], &[3]])], &[("out", 4)]);
    let r = a.invert_and_compose(&b).unwrap();
    assert_eq!(r, ll(&[("x", &[&[3]])], &[("in", 8)]));
    assert_eq!(b.apply(&[4]).unwrap(), vec![3]);
    assert!(b.compose(&r).unwrap().same_map(&a));
}

#[test]
fn product_concatenates_shared_dims() {
    let a = ll(&[("register", &[&[1]])], &[("dim0", 2)]);
    let b = ll(&[("register", &[&[1]]), ("lane", &[&[1]])], &[("dim0", 2)]);
    let p = a.product(&b).unwrap();
    assert_eq!(
        p,
        ll(
            &[("register", &[&[1], &[2]]), ("lane", &[&[2]])],
            &[("dim0", 4)]
        )
    );
    assert!(p.divide_left(&a).unwrap().same_map(&b));
}

#[test]
fn divide_left_names_the_breaking_basis() {
    let l = ll(&[("register", &[&[2], &[1]])], &[("offset", 4)]);
    let t = instruction_tile(Instruction::Vector { bits: 32 }, 2).unwrap();
    let e = l.divide_left(&t).unwrap_err().to_string();
    assert!(e.contains("register[0]"), "{e}");
}

#[test]
fn ldmatrix_tile_for_f16() {
    let t = instruction_tile(Instruction::Ldmatrix, 2).unwrap();
    assert_eq!(
        t,
        ll(
            &[("register", &[&[1]]), ("lane", &[&[2], &[4]])],
            &[("offset", 8)]
        )
    );
    assert!(instruction_tile(Instruction::Ldmatrix, 8).is_err());
    assert!(instruction_tile(Instruction::Vector { bits: 32 }, 8).is_err());
    assert!(instruction_tile(Instruction::Vector { bits: 48 }, 2).is_err());
}

#[test]
fn instruction_tests_on_a_row_major_store() {
    // MMAv2 accumulator (16x8 tile, f16) stored row-major into offset = 8*m + n.
    let mma = ll(
        &[
            ("register", &[&[0, 1], &[8, 0]]),
            ("lane", &[&[0, 2], &[0, 4], &[1, 0], &[2, 0], &[4, 0]]),
        ],
        &[("dim0", 16), ("dim1", 8)],
    );
    let mut bases: Vec<Vec<i64>> = (0..3).map(|k| vec![0, 1 << k]).collect();
    bases.extend((0..4).map(|k| vec![1 << k, 0]));
    let smem = LinearLayout::new(
        vec![InDim {
            name: "offset".into(),
            bases,
        }],
        vec![
            OutDim {
                name: "dim0".into(),
                log2_size: 4,
            },
            OutDim {
                name: "dim1".into(),
                log2_size: 3,
            },
        ],
    )
    .unwrap();
    let l = mma.invert_and_compose(&smem).unwrap();
    assert!(l
        .lowers_with(Instruction::Vector { bits: 32 }, 2)
        .unwrap()
        .is_some());
    assert!(l
        .lowers_with(Instruction::Vector { bits: 64 }, 2)
        .unwrap()
        .is_none());
    assert!(l.lowers_with(Instruction::Stmatrix, 2).unwrap().is_some());
    assert_eq!(mma.contiguous_elements(&["dim1", "dim0"]).unwrap(), 2);
    // Registers swapped: only a register permutation (generalized vectorization) lowers it.
    let swapped = l.transpose_ins(&["lane", "register"]).unwrap();
    let swapped = swapped
        .reshape_ins(&[("lane", 32), ("register", 4)])
        .unwrap();
    let regs = swapped.in_dim("register").unwrap().bases.clone();
    let flipped = LinearLayout::new(
        vec![
            InDim {
                name: "register".into(),
                bases: vec![regs[1].clone(), regs[0].clone()],
            },
            swapped.in_dim("lane").unwrap().clone(),
        ],
        swapped.outs().to_vec(),
    )
    .unwrap();
    let v32 = Instruction::Vector { bits: 32 };
    assert!(flipped.lowers_with(v32, 2).unwrap().is_none());
    let (order, q) = flipped
        .lowers_with_permuted_registers(v32, 2)
        .unwrap()
        .unwrap();
    assert_eq!(order, vec![1, 0]);
    assert!(q.same_map(&l.lowers_with(v32, 2).unwrap().unwrap()));
    assert_eq!(mma.contiguous_elements(&["dim0", "dim1"]).unwrap(), 1);
}

#[test]
fn reshape_transpose_and_sublayout() {
    let l = figure1();
    let flat = l.reshape_outs(&[("flat", 256)]).unwrap();
    assert_eq!(flat.apply(&[1, 9, 0]).unwrap(), vec![2 + 3 * 16]);
    let t = l.transpose_outs(&["dim1", "dim0"]).unwrap();
    assert_eq!(t.apply(&[1, 9, 0]).unwrap(), vec![3, 2]);
    let r = l.reshape_ins(&[("thread", 256)]).unwrap();
    assert_eq!(r.apply(&[1 + 4 * 9]).unwrap(), vec![2, 3]);
    let s = l.sublayout(&["lane"], &["dim1"]).unwrap();
    assert_eq!(s.apply(&[9]).unwrap(), vec![2]);
    assert!(l.reshape_outs(&[("flat", 128)]).is_err());
    assert!(l.transpose_outs(&["dim1"]).is_err());
}

#[test]
fn free_variable_masks_mark_broadcast_bits() {
    let l = ll(
        &[("register", &[&[1], &[0]]), ("lane", &[&[1], &[2]])],
        &[("dim0", 4)],
    );
    let m = l.free_variable_masks().unwrap();
    assert_eq!(m["register"], 0b10);
    assert_eq!(m["lane"], 0b01);
}

// ---- property tests ----

const OUTS: [&str; 2] = ["dim0", "dim1"];

fn arb_layout(
    ins: &'static [&'static str],
    max_bits: usize,
    outs: [&'static str; 2],
) -> impl Strategy<Value = LinearLayout> {
    (
        prop::collection::vec(0usize..=max_bits, ins.len()),
        (0u32..=3, 0u32..=3),
        any::<u64>(),
    )
        .prop_map(move |(counts, (o0, o1), seed)| {
            let mut s = seed;
            let mut next = |bits: u32| {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((s >> 33) as i64) & ((1i64 << bits) - 1)
            };
            let dims = ins
                .iter()
                .zip(counts)
                .map(|(n, c)| InDim {
                    name: n.to_string(),
                    bases: (0..c).map(|_| vec![next(o0), next(o1)]).collect(),
                })
                .collect();
            LinearLayout::new(
                dims,
                vec![
                    OutDim {
                        name: outs[0].into(),
                        log2_size: o0,
                    },
                    OutDim {
                        name: outs[1].into(),
                        log2_size: o1,
                    },
                ],
            )
            .unwrap()
        })
}

fn inputs(l: &LinearLayout) -> Vec<Vec<i64>> {
    let mut all = vec![vec![]];
    for d in l.ins() {
        all = all
            .into_iter()
            .flat_map(|p| {
                (0..1i64 << d.bases.len()).map(move |x| {
                    let mut q = p.clone();
                    q.push(x);
                    q
                })
            })
            .collect();
    }
    all
}

fn named(l: &LinearLayout, out: &[i64]) -> Vec<(String, i64)> {
    l.outs()
        .iter()
        .zip(out)
        .map(|(o, &v)| (o.name.clone(), v))
        .collect()
}

fn apply_names(l: &LinearLayout, v: &[(String, i64)]) -> Vec<i64> {
    let r: Vec<(&str, i64)> = v.iter().map(|(n, x)| (n.as_str(), *x)).collect();
    l.apply_named(&r).unwrap()
}

proptest! {
    #[test]
    fn compose_matches_evaluation(
        l1 in arb_layout(&["register", "lane"], 3, ["a", "b"]),
        l2 in arb_layout(&["a", "b"], 3, OUTS),
    ) {
        match l2.compose(&l1) {
            Ok(c) => for x in inputs(&l1) {
                prop_assert_eq!(c.apply(&x).unwrap(), apply_names(&l2, &named(&l1, &l1.apply(&x).unwrap())));
            },
            Err(_) => prop_assert!(l1.outs().iter().any(|o| l2.in_size_log2(&o.name) < o.log2_size as usize)),
        }
    }

    #[test]
    fn compose_is_associative(
        l1 in arb_layout(&["register", "lane"], 3, ["a", "b"]),
        l2 in arb_layout(&["a", "b"], 4, ["c", "d"]),
        l3 in arb_layout(&["c", "d"], 4, OUTS),
    ) {
        if let (Ok(l21), Ok(l32)) = (l2.compose(&l1), l3.compose(&l2)) {
            prop_assert_eq!(l3.compose(&l21).unwrap(), l32.compose(&l1).unwrap());
        }
    }

    #[test]
    fn inverse_is_identity_on_the_image(l in arb_layout(&["register", "lane", "warp"], 3, OUTS)) {
        // L ∘ L^-1 = id on the image: L^-1 ∘ L picks an input with the same image.
        let x_of = l.invert_and_compose(&l).unwrap();
        for x in inputs(&l) {
            let y = x_of.apply(&x).unwrap();
            prop_assert_eq!(l.apply(&y).unwrap(), l.apply(&x).unwrap());
        }
        match l.right_inverse() {
            Ok(r) => {
                prop_assert!(l.is_surjective().unwrap());
                for y in inputs(&r) {
                    prop_assert_eq!(l.apply(&r.apply(&y).unwrap()).unwrap(), y);
                }
            }
            Err(_) => prop_assert!(!l.is_surjective().unwrap()),
        }
    }

    #[test]
    fn invert_and_compose_matches_evaluation(
        a in arb_layout(&["register", "lane"], 3, OUTS),
        b in arb_layout(&["register", "lane", "warp"], 4, OUTS),
    ) {
        if let Ok(x) = a.invert_and_compose(&b) {
            for i in inputs(&a) {
                let j = x.apply(&i).unwrap();
                let a_out = a.apply(&i).unwrap();
                let b_out = b.apply(&j).unwrap();
                for (o, v) in a.outs().iter().zip(&a_out) {
                    let k = b.outs().iter().position(|p| p.name == o.name).unwrap();
                    prop_assert_eq!(*v, b_out[k]);
                }
            }
        }
    }

    #[test]
    fn product_matches_evaluation_and_divides_back(
        a in arb_layout(&["register", "lane"], 2, OUTS),
        b in arb_layout(&["register", "warp"], 2, OUTS),
    ) {
        let p = a.product(&b).unwrap();
        for xa in inputs(&a) {
            for xb in inputs(&b) {
                let (ra, la) = (xa[0], xa[1]);
                let (rb, wb) = (xb[0], xb[1]);
                let reg = ra | rb << a.in_size_log2("register");
                let got = p.apply_named(&[("register", reg), ("lane", la), ("warp", wb)]).unwrap();
                let (ya, yb) = (a.apply(&xa).unwrap(), b.apply(&xb).unwrap());
                let want: Vec<i64> = (0..2).map(|j| ya[j] | yb[j] << a.outs()[j].log2_size).collect();
                prop_assert_eq!(got, want);
            }
        }
        prop_assert!(p.divide_left(&a).unwrap().same_map(&b));
    }

    #[test]
    fn reshape_and_transpose_preserve_the_map(l in arb_layout(&["register", "lane"], 3, OUTS)) {
        let n = 1i64 << l.total_out_bits();
        let flat = l.reshape_outs(&[("flat", n)]).unwrap();
        let t = l.transpose_outs(&["dim1", "dim0"]).unwrap();
        let rin = l.reshape_ins(&[("all", 1i64 << l.total_in_bits())]).unwrap();
        for x in inputs(&l) {
            let y = l.apply(&x).unwrap();
            prop_assert_eq!(flat.apply(&x).unwrap(), vec![y[0] | y[1] << l.outs()[0].log2_size]);
            prop_assert_eq!(t.apply(&x).unwrap(), vec![y[1], y[0]]);
            let xi = x[0] | x[1] << l.in_size_log2("register");
            prop_assert_eq!(rin.apply(&[xi]).unwrap(), y);
        }
    }

    #[test]
    fn sublayout_matches_evaluation(l in arb_layout(&["register", "lane", "warp"], 3, OUTS)) {
        let s = l.sublayout(&["register", "warp"], &["dim1"]).unwrap();
        for x in inputs(&s) {
            let full = l.apply(&[x[0], 0, x[1]]).unwrap();
            prop_assert_eq!(s.apply(&x).unwrap(), vec![full[1]]);
        }
    }

    #[test]
    fn free_variables_count_the_kernel(l in arb_layout(&["register", "lane", "warp"], 3, OUTS)) {
        let masks = l.free_variable_masks().unwrap();
        let free: u32 = masks.values().map(|m| m.count_ones()).sum();
        let images: std::collections::BTreeSet<Vec<i64>> =
            inputs(&l).iter().map(|x| l.apply(x).unwrap()).collect();
        prop_assert_eq!(1usize << (l.total_in_bits() - free as usize), images.len());
    }

    #[test]
    fn contiguous_elements_are_consecutive_registers(l in arb_layout(&["register"], 4, OUTS)) {
        let n = l.contiguous_elements(&["dim0", "dim1"]).unwrap();
        let flat = |y: Vec<i64>| y[0] | y[1] << l.outs()[0].log2_size;
        for r in 0..n {
            prop_assert_eq!(flat(l.apply(&[r]).unwrap()), r);
        }
        if n < l.in_size("register") {
            prop_assert_ne!(flat(l.apply(&[n]).unwrap()), n);
        }
    }

    #[test]
    fn tile_times_quotient_lowers(
        q in arb_layout(&["register", "lane"], 3, ["offset", "unused"]),
        instr in prop::sample::select(vec![
            Instruction::Vector { bits: 32 }, Instruction::Vector { bits: 128 }, Instruction::Ldmatrix,
        ]),
    ) {
        let q = q.sublayout(&["register", "lane"], &["offset"]).unwrap();
        let t = instruction_tile(instr, 2).unwrap();
        let l = t.product(&q).unwrap();
        let got = l.lowers_with(instr, 2).unwrap().unwrap();
        prop_assert!(got.same_map(&q));
    }
}
