//! Warp-shuffle conversion plans: worked example, the warp-bits error, packed vectors whose
//! element order differs between A and B, and the property that a plan executes to B on random
//! pairs (permuted bases, and bases that are XOR combinations).

use layout::linear::LinearLayout;
use layout::shuffle::{execute, shuffle_plan, LocalMove, ShufflePlan};
use proptest::prelude::*;

mod linear_support;
use linear_support::{ll2 as ll, unit, Rng};

#[test]
fn two_lanes_swap_their_second_elements() {
    let a = ll(
        &[("register", vec![vec![1, 0]]), ("lane", vec![vec![2, 0]])],
        2,
        0,
    );
    let b = ll(
        &[("register", vec![vec![2, 0]]), ("lane", vec![vec![1, 0]])],
        2,
        0,
    );
    // Lane 0 holds x0, x1 and lane 1 x2, x3 under A; B puts x0, x2 in lane 0 and x1, x3 in
    // lane 1: x1 and x2 cross in one shuffle, x0 and x3 stay (register moves).
    let plan = shuffle_plan(&a, &b, 4).unwrap();
    assert_eq!(plan.rounds, 1);
    assert_eq!(plan.shuffles.len(), 1);
    assert_eq!(plan.moves.len(), 2);
    assert_eq!(execute(&plan, &a, &b).unwrap(), 1);
    // The plan is data: it survives JSON.
    let text = serde_json::to_string(&plan).unwrap();
    let back: ShufflePlan = serde_json::from_str(&text).unwrap();
    assert_eq!(back, plan);
    // A plan for the wrong target fails in the simulator, naming the register.
    let e = execute(&plan, &a, &a).unwrap_err().to_string();
    assert!(e.contains("lane"), "{e}");
}

/// Converting a layout into itself moves nothing across lanes: no shuffle, every element a
/// register move inside its lane, and the simulator agrees.
#[test]
fn a_layout_into_itself_needs_no_shuffle() {
    let a = ll(
        &[
            ("register", vec![vec![0, 1], vec![0, 2]]),
            (
                "lane",
                vec![vec![0, 4], vec![0, 8], vec![1, 0], vec![2, 0], vec![4, 0]],
            ),
        ],
        3,
        4,
    );
    for elem in [1, 2, 4, 8] {
        let plan = shuffle_plan(&a, &a, elem).unwrap();
        assert_eq!((plan.shuffles.len(), plan.rounds), (0, 0), "{elem} bytes");
        let vector = 1usize << plan.src_vector.len();
        assert_eq!(plan.moves.len() * vector, 4 * 32, "{elem} bytes");
        assert_eq!(execute(&plan, &a, &a).unwrap(), 0);
    }
    // Dropping a move leaves a B register empty, and the simulator names it.
    let mut plan = shuffle_plan(&a, &a, 4).unwrap();
    plan.moves.pop();
    let e = execute(&plan, &a, &a).unwrap_err().to_string();
    assert!(e.contains("B says"), "{e}");
}

#[test]
fn transposing_a_blocked_layout_within_a_warp() {
    // A: 4 registers along dim1, 32 lanes; B: the same with roles of dim0/dim1 swapped.
    let a = ll(
        &[
            ("register", vec![vec![0, 1], vec![0, 2]]),
            (
                "lane",
                vec![vec![0, 4], vec![0, 8], vec![1, 0], vec![2, 0], vec![4, 0]],
            ),
        ],
        3,
        4,
    );
    let b = ll(
        &[
            ("register", vec![vec![1, 0], vec![2, 0]]),
            (
                "lane",
                vec![vec![4, 0], vec![0, 1], vec![0, 2], vec![0, 4], vec![0, 8]],
            ),
        ],
        3,
        4,
    );
    let plan = shuffle_plan(&a, &b, 2).unwrap();
    assert_eq!(plan.shuffles.len(), plan.rounds);
    execute(&plan, &a, &b).unwrap();
}

#[test]
fn different_warp_bits_need_shared_memory() {
    let a = ll(
        &[("lane", vec![vec![1, 0]]), ("warp", vec![vec![2, 0]])],
        2,
        0,
    );
    let b = ll(
        &[("lane", vec![vec![2, 0]]), ("warp", vec![vec![1, 0]])],
        2,
        0,
    );
    let e = shuffle_plan(&a, &b, 4).unwrap_err().to_string();
    assert!(e.contains("shared memory"), "{e}");
    assert!(shuffle_plan(&a, &a, 3).is_err());
}

/// Warp 1 holds the same elements {4..7} in A and in B, but B's warp basis differs from A's by
/// element 1 (inside the warp): A's lane l holds 4+l there, B's lane l needs 4+swap(l)^1. The
/// refusal says so, not that elements move between warps; and the plan of warp 0 (made for the
/// same pair with equal warp bases) indeed fails in warp 1.
#[test]
fn warps_holding_the_same_elements_elsewhere_are_refused_for_that_reason() {
    let a = ll(
        &[
            ("lane", vec![vec![1, 0], vec![2, 0]]),
            ("warp", vec![vec![4, 0]]),
        ],
        3,
        0,
    );
    let b_with = |warp: i64| {
        ll(
            &[
                ("lane", vec![vec![2, 0], vec![1, 0]]),
                ("warp", vec![vec![warp, 0]]),
            ],
            3,
            0,
        )
    };
    let e = shuffle_plan(&a, &b_with(5), 4).unwrap_err().to_string();
    assert!(e.contains("every warp holds the same elements"), "{e}");
    assert!(e.contains("warp=1"), "{e}");
    assert!(e.contains("differ from warp to warp"), "{e}");
    assert!(!e.contains("move between warps"), "{e}");
    let warp0 = shuffle_plan(&a, &b_with(4), 4).unwrap();
    assert_eq!(execute(&warp0, &a, &b_with(4)).unwrap(), 1);
    let e = execute(&warp0, &a, &b_with(5)).unwrap_err().to_string();
    assert!(e.contains("B says"), "{e}");
    // A warp basis outside the warp's elements does move elements between warps.
    let moved = ll(
        &[
            ("lane", vec![vec![1, 0], vec![4, 0]]),
            ("warp", vec![vec![2, 0]]),
        ],
        3,
        0,
    );
    let e = shuffle_plan(&a, &moved, 4).unwrap_err().to_string();
    assert!(e.contains("hold different elements"), "{e}");
}

/// In-dims of size 1 are no warps: Triton's imports carry `warp = [], block = []`, a
/// hand-written `#ttg.linear` may leave them out, and the pair still converts.
#[test]
fn size_one_warp_and_block_dims_are_no_context() {
    let lanes = vec![vec![1, 0], vec![2, 0]];
    let a = ll(
        &[
            ("register", vec![vec![4, 0]]),
            ("lane", lanes.clone()),
            ("warp", vec![]),
            ("block", vec![]),
        ],
        3,
        0,
    );
    let b = ll(
        &[
            ("register", vec![vec![1, 0]]),
            ("lane", vec![vec![2, 0], vec![4, 0]]),
        ],
        3,
        0,
    );
    for (x, y) in [(&a, &b), (&b, &a)] {
        let plan = shuffle_plan(x, y, 4).unwrap();
        assert_eq!(execute(&plan, x, y).unwrap(), plan.shuffles.len());
    }
    // Two warps (each a copy of the tensor) against one are different contexts.
    let reg = ("register", vec![vec![4, 0]]);
    let two = ll(
        &[
            reg.clone(),
            ("lane", lanes.clone()),
            ("warp", vec![vec![0, 0]]),
        ],
        3,
        0,
    );
    let one = ll(&[reg, ("lane", lanes), ("warp", vec![])], 3, 0);
    let e = shuffle_plan(&two, &one, 4).unwrap_err().to_string();
    assert!(e.contains("contexts [\"warp (2)\"] and B []"), "{e}");
    assert!(e.contains("shared memory"), "{e}");
}

/// A random pair over the same logical bits with the same warp bases; registers and lanes
/// shuffled independently, with occasional broadcast (zero) bases.
fn arb_pair() -> impl Strategy<Value = (LinearLayout, LinearLayout, u32)> {
    (
        2u32..=4,
        2u32..=4,
        0usize..=2,
        any::<u64>(),
        prop::sample::select(vec![1u32, 2, 4, 8]),
    )
        .prop_map(|(d0, d1, warps, seed, elem)| {
            let mut rng = Rng(seed | 1);
            let d = d0 + d1;
            let col = |b: u32| unit(b, d0);
            let bits = rng.permutation(d);
            let warps = warps.min(d as usize - 1);
            let warp: Vec<Vec<i64>> = bits[..warps].iter().map(|&b| col(b)).collect();
            let mut side = |rest: &[u32]| {
                let rest: Vec<u32> = rng
                    .permutation(rest.len() as u32)
                    .iter()
                    .map(|&i| rest[i as usize])
                    .collect();
                let lanes = (rng.below(rest.len().min(5) as u64 + 1) as usize).min(rest.len());
                let mut lane: Vec<Vec<i64>> = rest[..lanes].iter().map(|&b| col(b)).collect();
                let mut reg: Vec<Vec<i64>> = rest[lanes..].iter().map(|&b| col(b)).collect();
                rng.maybe_broadcast(&mut lane, 4, 5);
                rng.maybe_broadcast(&mut reg, 4, usize::MAX);
                ll(
                    &[("register", reg), ("lane", lane), ("warp", warp.clone())],
                    d0,
                    d1,
                )
            };
            let a = side(&bits[warps..]);
            let b = side(&bits[warps..]);
            (a, b, elem)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    #[test]
    fn shuffle_plans_execute_to_b((a, b, elem) in arb_pair()) {
        let plan = shuffle_plan(&a, &b, elem).unwrap();
        prop_assert!(plan.shuffles.len() >= plan.rounds.min(1));
        prop_assert_eq!(execute(&plan, &a, &b).unwrap(), plan.shuffles.len());
        // Without broadcasting, the paper's count: one shuffle per round.
        let zero = |l: &LinearLayout| l.ins().iter().any(|d| d.bases.iter().any(|v| v == &vec![0, 0]));
        if !zero(&a) && !zero(&b) && a.in_size("lane") == b.in_size("lane") {
            prop_assert_eq!(plan.shuffles.len(), plan.rounds);
        }
    }
}

/// Runs `plan` on warp 0 with every register holding the logical coordinate it carries, apart
/// from [`execute`]: B's registers start empty, every move and every element of every
/// shuffled vector stores `A`'s element, and then each B register must hold B's element.
fn runs_to_b(plan: &ShufflePlan, a: &LinearLayout, b: &LinearLayout) -> bool {
    let ctx_a = vec![0; a.ins().len()];
    let ctx_b = vec![0; b.ins().len()];
    let (b_regs, b_lanes) = (b.in_size("register"), b.in_size("lane"));
    let mut got = vec![None; (b_regs * b_lanes) as usize];
    let vector = |bits: &[usize], t: i64| -> i64 {
        bits.iter()
            .enumerate()
            .filter(|(k, _)| t >> k & 1 == 1)
            .map(|(_, &bit)| 1i64 << bit)
            .sum()
    };
    let mut store = |from_lane: i64, from: i64, to_lane: i64, to: i64| {
        for t in 0..1i64 << plan.src_vector.len() {
            let (r, w) = (
                from | vector(&plan.src_vector, t),
                to | vector(&plan.dst_vector, t),
            );
            let x = a.apply(&a.at_register_lane(&ctx_a, r, from_lane)).unwrap();
            got[(to_lane * b_regs + w) as usize] = Some(x);
        }
    };
    for m in &plan.moves {
        store(m.lane, m.src, m.lane, m.dst);
    }
    for s in &plan.shuffles {
        for (dl, src) in s.src_lane.iter().enumerate() {
            if let Some(sl) = *src {
                let sr = s.send[sl as usize].unwrap();
                store(sl, sr, dl as i64, s.recv[dl].unwrap());
            }
        }
    }
    (0..b_lanes).all(|l| {
        (0..b_regs).all(|r| {
            got[(l * b_regs + r) as usize]
                == Some(b.apply(&b.at_register_lane(&ctx_b, r, l)).unwrap())
        })
    })
}

/// The audit's pair: A and B share register column 1, but B's lane 1 holds (3, 2) where A's
/// lane 1 holds (2, 3). Packing the two 16-bit elements into one word would store them in
/// A's order, so that register bit is no vector bit: the plan moves single elements inside
/// each lane and executes to B for every element width.
#[test]
fn a_shared_register_bit_whose_order_differs_is_not_packed() {
    let lanes = |first: i64| {
        vec![
            vec![first, 0],
            vec![4, 0],
            vec![8, 0],
            vec![16, 0],
            vec![32, 0],
        ]
    };
    let a = ll(&[("register", vec![vec![1, 0]]), ("lane", lanes(2))], 6, 0);
    let b = ll(&[("register", vec![vec![1, 0]]), ("lane", lanes(3))], 6, 0);
    for elem in [1, 2, 4, 8] {
        let plan = shuffle_plan(&a, &b, elem).unwrap();
        assert!(
            plan.src_vector.is_empty(),
            "{elem} bytes: {:?}",
            plan.src_vector
        );
        assert_eq!(
            (plan.shuffles.len(), plan.moves.len()),
            (0, 64),
            "{elem} bytes"
        );
        assert_eq!(execute(&plan, &a, &b).unwrap(), 0);
        assert!(runs_to_b(&plan, &a, &b));
    }
    // The plan packing that bit (what the planner made before) is caught by both simulators.
    let packed = ShufflePlan {
        elem_bytes: 2,
        src_vector: vec![0],
        dst_vector: vec![0],
        rounds: 0,
        shuffles: vec![],
        moves: (0..32)
            .map(|lane| LocalMove {
                lane,
                src: 0,
                dst: 0,
            })
            .collect(),
    };
    let e = execute(&packed, &a, &b).unwrap_err().to_string();
    assert!(e.contains("lane 1 register"), "{e}");
    assert!(!runs_to_b(&packed, &a, &b));
}

/// A shared register bit that keeps its order in every lane is still packed: here B only
/// swaps two lane bits, so f16 moves two elements per shuffle and i8 too (one register bit).
#[test]
fn a_shared_register_bit_in_order_is_packed() {
    let a = ll(
        &[
            ("register", vec![vec![1, 0]]),
            ("lane", vec![vec![2, 0], vec![4, 0]]),
        ],
        3,
        0,
    );
    let b = ll(
        &[
            ("register", vec![vec![1, 0]]),
            ("lane", vec![vec![4, 0], vec![2, 0]]),
        ],
        3,
        0,
    );
    for elem in [1, 2] {
        let plan = shuffle_plan(&a, &b, elem).unwrap();
        assert_eq!(
            (plan.src_vector.clone(), plan.dst_vector.clone()),
            (vec![0], vec![0])
        );
        assert_eq!(execute(&plan, &a, &b).unwrap(), plan.shuffles.len());
        assert!(runs_to_b(&plan, &a, &b));
    }
}

/// The audit's 2-D pair (a blocked-like A; B with the XOR basis `[8, 1]`), which f16 refused.
#[test]
fn the_audit_2d_xor_pair_plans_for_f16() {
    let a = ll(
        &[
            (
                "register",
                vec![
                    vec![0, 1],
                    vec![8, 0],
                    vec![16, 0],
                    vec![32, 0],
                    vec![64, 0],
                ],
            ),
            (
                "lane",
                vec![vec![1, 0], vec![2, 0], vec![4, 0], vec![0, 0], vec![0, 0]],
            ),
            ("warp", vec![vec![0, 0]]),
        ],
        7,
        1,
    );
    let b = ll(
        &[
            (
                "register",
                vec![
                    vec![8, 0],
                    vec![8, 1],
                    vec![64, 0],
                    vec![32, 0],
                    vec![2, 0],
                    vec![16, 0],
                    vec![1, 0],
                    vec![4, 0],
                ],
            ),
            ("lane", vec![vec![0, 0]; 5]),
            ("warp", vec![vec![0, 0]]),
        ],
        7,
        1,
    );
    for elem in [1, 2, 4] {
        let plan = shuffle_plan(&a, &b, elem).unwrap();
        assert_eq!(execute(&plan, &a, &b).unwrap(), plan.shuffles.len());
        assert!(runs_to_b(&plan, &a, &b), "{elem} bytes");
    }
}

/// `bases` split at random into lanes (at most 5) and registers, with the warp bases `warp`
/// and maybe a zero (broadcast) lane and register basis.
fn split_side(
    rng: &mut Rng,
    mut bases: Vec<Vec<i64>>,
    warp: &[Vec<i64>],
    d0: u32,
    d1: u32,
) -> LinearLayout {
    let lanes = (rng.below(bases.len().min(5) as u64 + 1) as usize).min(bases.len());
    let mut reg = bases.split_off(lanes);
    let mut lane = bases;
    rng.maybe_broadcast(&mut lane, 4, 5);
    rng.maybe_broadcast(&mut reg, 4, usize::MAX);
    ll(
        &[("register", reg), ("lane", lane), ("warp", warp.to_vec())],
        d0,
        d1,
    )
}

/// The auditor's generator: A's bases are the logical bits, permuted and split into registers
/// and lanes; B's are the same bits, permuted, with one to three XOR steps `v_i ^= v_j` (so
/// some bases are XOR combinations, `#ttg.generic_linear` in Triton's print), split again;
/// both share unit warp bases, and either may broadcast (a zero basis).
fn arb_xor_pair() -> impl Strategy<Value = (LinearLayout, LinearLayout, u32)> {
    (
        1u32..=4,
        1u32..=4,
        0usize..=2,
        any::<u64>(),
        prop::sample::select(vec![1u32, 2, 1, 2, 4, 8]),
    )
        .prop_map(|(d0, d1, warps, seed, elem)| {
            let mut rng = Rng(seed | 1);
            let d = d0 + d1;
            let bits = rng.permutation(d);
            let warps = warps.min(d as usize - 1);
            let warp: Vec<Vec<i64>> = bits[..warps].iter().map(|&b| unit(b, d0)).collect();
            let rest: Vec<Vec<i64>> = bits[warps..].iter().map(|&b| unit(b, d0)).collect();
            let a = split_side(&mut rng, rest.clone(), &warp, d0, d1);
            let mut v: Vec<Vec<i64>> = {
                let p = rng.permutation(rest.len() as u32);
                p.iter().map(|&i| rest[i as usize].clone()).collect()
            };
            if v.len() >= 2 {
                for _ in 0..=rng.below(3) {
                    let i = rng.below(v.len() as u64) as usize;
                    let j = (i + 1 + rng.below(v.len() as u64 - 1) as usize) % v.len();
                    let vj = v[j].clone();
                    for (x, y) in v[i].iter_mut().zip(vj) {
                        *x ^= y;
                    }
                }
            }
            let b = split_side(&mut rng, v, &warp, d0, d1);
            (a, b, elem)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]
    /// Every pair converts (each warp holds the same elements under A and B), and the plan
    /// executes to B in both simulators, packed vectors included.
    #[test]
    fn xor_basis_pairs_plan_and_execute_to_b((a, b, elem) in arb_xor_pair()) {
        let plan = shuffle_plan(&a, &b, elem).unwrap();
        prop_assert_eq!(execute(&plan, &a, &b).unwrap(), plan.shuffles.len());
        prop_assert!(runs_to_b(&plan, &a, &b));
        prop_assert!(plan.src_vector.len() <= (4 / elem.min(4)).trailing_zeros() as usize);
    }
}
