//! A small-scale mutation campaign (the full-scale one is `bench/mutation`): equivalent pairs
//! built by semantics-preserving transformations across notations are proved; one mutated
//! stride, extent, axis or swizzle bit that changes the map is refuted with a counterexample
//! the semantics confirm; the deciders never disagree (`equivalent` errors if they do).

use certify::{equivalent, Policy};
use layout::convert::{convert, Target};
use layout::relation::relation;
use layout::{AxeLayout, Axis, Iter, Layout};
use proptest::prelude::*;

fn decide(a: &Layout, b: &Layout, shape: Option<&[i64]>) -> &'static str {
    equivalent(a, b, shape, &Policy::default())
        .expect("deciders agree and counterexamples check")
        .verdict()
}

/// Whether two layouts really differ, by the enumerated relation (the test's own oracle).
fn differ(a: &Layout, b: &Layout, shape: Option<&[i64]>) -> bool {
    let sa = if matches!(a, Layout::Tv(_) | Layout::Linear(_)) {
        None
    } else {
        shape
    };
    let sb = if matches!(b, Layout::Tv(_) | Layout::Linear(_)) {
        None
    } else {
        shape
    };
    relation(a, sa).unwrap() != relation(b, sb).unwrap()
}

fn axis(i: usize) -> Axis {
    Axis::new(["m", "laneid", "warpid", "reg"][i % 4]).unwrap()
}

/// Splits iter `i` of a shard into two (same map): `(e1*e2, s) -> (e1, e2*s), (e2, s)`.
fn split(l: &AxeLayout, i: usize, e1: i64) -> AxeLayout {
    let mut d = l.shard().to_vec();
    let it = d[i].clone();
    if it.extent % e1 != 0 || e1 == 1 || e1 == it.extent {
        return l.clone();
    }
    let e2 = it.extent / e1;
    d.splice(
        i..=i,
        [
            Iter::new(e1, e2 * it.stride, it.axis.clone()),
            Iter::new(e2, it.stride, it.axis),
        ],
    );
    AxeLayout::new(d, l.replica().to_vec(), l.offset().clone()).unwrap()
}

/// Inserts a unit iter and reverses the replica list (same map).
fn pad(l: &AxeLayout, at: usize, ax: usize) -> AxeLayout {
    let mut d = l.shard().to_vec();
    d.insert(at.min(d.len()), Iter::new(1, 7, axis(ax)));
    let mut r = l.replica().to_vec();
    r.reverse();
    AxeLayout::new(d, r, l.offset().clone()).unwrap()
}

fn axe() -> impl Strategy<Value = AxeLayout> {
    (
        prop::collection::vec(
            (
                prop_oneof![Just(1i64), Just(2), Just(3), Just(4), Just(6)],
                -5i64..6,
                0usize..4,
            ),
            1..5,
        ),
        prop::collection::vec((2i64..4, 1i64..9, 0usize..4), 0..2),
        prop::collection::vec((-4i64..5, 0usize..4), 0..2),
    )
        .prop_map(|(d, r, o)| {
            let shard = d
                .iter()
                .map(|&(e, s, a)| Iter::new(e, s, axis(a)))
                .collect();
            let rep = r
                .iter()
                .map(|&(e, s, a)| Iter::new(e, s, axis(a)))
                .collect();
            let off = o.iter().map(|&(v, a)| (axis(a), v)).collect();
            AxeLayout::new(shard, rep, off).unwrap()
        })
        // Lanes within a warp's span where warps are in play: the fused points are faithful
        // (`check_fusion`; other layouts are refused, not decided).
        .prop_filter("lanes span less than a warp", |l| {
            layout::relation::check_fusion(&[&Layout::Axe(l.clone())]).is_ok()
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn axe_rewrites_are_proved_and_mutants_refuted(l in axe(), i in 0usize..5, e1 in 2i64..4, at in 0usize..5, ax in 0usize..4, which in 0usize..3, delta in 1i64..3) {
        let a = Layout::Axe(l.clone());
        let i = i % l.shard().len();
        let b = Layout::Axe(pad(&split(&l, i, e1), at, ax));
        prop_assert_eq!(decide(&a, &b, None), "equivalent");
        // Mutate: a stride, an extent (with a compensating shape), or an axis.
        let mut d = l.shard().to_vec();
        match which {
            0 => d[i].stride += delta,
            1 => d[i].axis = axis(ax + 1 + usize::from(d[i].axis == axis(ax + 1))),
            _ => {
                let j = (i + 1) % d.len();
                if d.len() < 2 || d[i].extent == d[j].extent { d[i].stride += delta } else { d.swap(i, j) }
            }
        }
        let m = Layout::Axe(AxeLayout::new(d, l.replica().to_vec(), l.offset().clone()).unwrap());
        prop_assume!(layout::relation::check_fusion(&[&a, &m]).is_ok());
        let want = if differ(&a, &m, Some(&[l.size()])) { "not equivalent" } else { "equivalent" };
        prop_assert_eq!(decide(&a, &m, None), want);
    }

    #[test]
    fn cute_axe_and_f2_forms_are_proved_and_mutants_refuted(bits in Just(()).prop_perturb(|_, mut rng| {
        let mut b: Vec<u32> = (0..7).collect();
        for i in (1..b.len()).rev() { b.swap(i, rng.random_range(0..=i)); }
        (b, rng.random_range(1..4usize), rng.random_range(0..7usize))
    })) {
        // A bijective power-of-two CuTe layout over (8,16): each logical bit -> one offset bit.
        let (perm, _, flip) = bits;
        let modes: Vec<String> = perm.iter().map(|b| (1i64 << b).to_string()).collect();
        let text = format!("((2,2,2),(2,2,2,2)):(({}),({}))", modes[..3].join(","), modes[3..].join(","));
        let c = Layout::parse(&text, None).unwrap();
        let shape = [8i64, 16];
        for to in [Target::Axe, Target::Linear] {
            let other = convert(&c, to, None).unwrap();
            prop_assert_eq!(decide(&c, &other, Some(&shape)), "equivalent");
        }
        let sw = Layout::parse(&format!("Sw<1,0,{}> o {text}", 1 + flip % 5), None).unwrap();
        let lin = convert(&sw, Target::Linear, None).unwrap();
        prop_assert_eq!(decide(&sw, &lin, Some(&shape)), "equivalent");
        // Mutants: a doubled stride; a swizzle bit moved.
        let mut m = modes.clone();
        m[flip] = (2 * (1i64 << perm[flip])).to_string();
        let bad = Layout::parse(&format!("((2,2,2),(2,2,2,2)):(({}),({}))", m[..3].join(","), m[3..].join(",")), None).unwrap();
        prop_assert_eq!(decide(&c, &bad, Some(&shape)), "not equivalent");
        let sw2 = Layout::parse(&format!("Sw<1,1,{}> o {text}", 1 + flip % 5), None).unwrap();
        let want = if differ(&sw, &sw2, Some(&shape)) { "not equivalent" } else { "equivalent" };
        prop_assert_eq!(decide(&sw, &sw2, Some(&shape)), want);
    }
}
