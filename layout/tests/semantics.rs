//! The semantics against the definitions written out independently (spec axe.md section 2,
//! cute.md section 1, linear.md section 1), on random layouts.

use std::collections::BTreeSet;

use layout::axis::Point;
use layout::{AxeLayout, Axis, CuteLayout, Iter, Layout};
use proptest::prelude::*;

fn axis(i: usize) -> Axis {
    Axis::new(["m", "laneid", "warpid", "reg"][i]).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn axe_eval_matches_the_definition(
        d in prop::collection::vec((1i64..5, -7i64..8, 0usize..4), 1..5),
        r in prop::collection::vec((1i64..4, -7i64..8, 0usize..4), 0..3),
        o in prop::collection::vec((-9i64..10, 0usize..4), 0..3),
    ) {
        let shard: Vec<Iter> = d.iter().map(|&(e, s, a)| Iter::new(e, s, axis(a))).collect();
        let replica: Vec<Iter> = r.iter().map(|&(e, s, a)| Iter::new(e, s, axis(a))).collect();
        let offset = o.iter().map(|&(v, a)| (axis(a), v)).collect();
        let l = AxeLayout::new(shard.clone(), replica.clone(), offset).unwrap();
        let all_axes: BTreeSet<Axis> = l.axes();
        let size: i64 = shard.iter().map(|i| i.extent).product();
        for x in 0..size {
            // P_i = prod_{j>i} e_j; x_i = floor(x / P_i) mod e_i.
            let mut base: Point = all_axes.iter().map(|a| (a.clone(), l.offset().get(a).copied().unwrap_or(0))).collect();
            for (i, it) in shard.iter().enumerate() {
                let p: i64 = shard[i + 1..].iter().map(|j| j.extent).product();
                *base.get_mut(&it.axis).unwrap() += (x / p) % it.extent * it.stride;
            }
            // Rset: every digit vector of R.
            let mut expect = BTreeSet::new();
            let rcount: i64 = replica.iter().map(|i| i.extent).product();
            for rv in 0..rcount {
                let mut pt = base.clone();
                let mut rest = rv;
                for it in &replica {
                    *pt.get_mut(&it.axis).unwrap() += (rest % it.extent) * it.stride;
                    rest /= it.extent;
                }
                expect.insert(pt);
            }
            // With no replica iter (r empty) too: eval_flat's shortcut is the definition.
            prop_assert_eq!(l.eval_flat_with(x, &l.replica_set().unwrap()).unwrap(), expect.clone());
            prop_assert_eq!(l.eval_flat(x).unwrap(), expect);
        }
    }

    #[test]
    fn cute_eval_matches_colexicographic_definition(m in prop::collection::vec((1i64..5, -9i64..10), 1..5)) {
        let (s, d): (Vec<i64>, Vec<i64>) = m.iter().copied().unzip();
        let l = CuteLayout::from_flat(&s, &d).unwrap();
        for i in 0..l.size() {
            // c_k = (i / prod_{j<k} s_j) mod s_k.
            let want: i64 = (0..s.len()).map(|k| (i / s[..k].iter().product::<i64>()) % s[k] * d[k]).sum();
            prop_assert_eq!(l.eval_index(i).unwrap(), want);
        }
    }

    #[test]
    fn linear_apply_is_xor_of_bases(bases in prop::collection::vec((0i64..16, 0i64..8), 0..6), x in 0i64..64) {
        let text = format!(
            "#ttg.linear<{{register = [{}]}}>",
            bases.iter().map(|(a, b)| format!("[{a}, {b}]")).collect::<Vec<_>>().join(", ")
        );
        let l = Layout::parse(&text, Some(&[16, 8])).unwrap();
        let Layout::Linear(f) = &l else { unreachable!() };
        let x = x % (1 << bases.len());
        let want = bases.iter().enumerate().filter(|(k, _)| x >> k & 1 == 1).fold((0, 0), |acc, (_, b)| (acc.0 ^ b.0, acc.1 ^ b.1));
        prop_assert_eq!(f.apply(&[x]).unwrap(), vec![want.0, want.1]);
    }

    #[test]
    fn swizzle_is_an_involution_and_a_swizzled_layout_applies_it(b in 0u32..4, m in 0u32..4, s in 0i32..5, x in 0i64..4096) {
        prop_assume!(s as u32 >= b);
        let sw = layout::Swizzle::new(b, m, s).unwrap();
        prop_assert_eq!(sw.apply(sw.apply(x).unwrap()).unwrap(), x);
        let l = Layout::parse(&format!("Sw<{b},{m},{s}> o (64,64):(64,1)"), None).unwrap();
        let Layout::Swizzled(sl) = &l else { unreachable!() };
        prop_assert_eq!(sl.eval_index(x).unwrap(), sw.apply(sl.layout().eval_index(x).unwrap()).unwrap());
    }

    #[test]
    fn tv_print_parse_round_trip(t in prop::collection::vec((1i64..5, 0i64..4), 2..5), split in 1usize..4) {
        let split = split.min(t.len() - 1);
        let (th, va) = t.split_at(split);
        let join = |v: &[(i64, i64)], f: fn(&(i64, i64)) -> i64| v.iter().map(|p| f(p).to_string()).collect::<Vec<_>>().join(",");
        let layout = format!("(({},),({},)):(({},),({},))", join(th, |p| p.0), join(va, |p| p.0), join(th, |p| p.1), join(va, |p| p.1));
        let cosize = CuteLayout::new(
            layout::notation::cute::parse_int_tuple(layout.split(':').next().unwrap()).unwrap(),
            layout::notation::cute::parse_int_tuple(layout.split(':').nth(1).unwrap()).unwrap(),
        ).unwrap().cosize();
        let l = Layout::parse(&format!("{layout} -> ({cosize},2)"), None).unwrap();
        prop_assert_eq!(Layout::parse(&l.print(), None).unwrap(), l);
    }
}

/// Regression (found by `laycert show 'S[2:9223372036854775807]'`): the span `1 + reach` must fit
/// in i64 for every layout `new` accepts, so `span` cannot overflow.
#[test]
fn span_of_every_accepted_layout_fits_in_i64() {
    let max = i64::MAX;
    assert!(AxeLayout::from_shard(vec![Iter::on_m(2, max)]).is_err());
    assert!(AxeLayout::from_shard(vec![Iter::on_m(2, -max)]).is_err());
    let l = AxeLayout::from_shard(vec![Iter::on_m(2, max - 1)]).unwrap();
    assert_eq!(l.span(&Axis::m()), max);
    assert!(Layout::parse("S[2:9223372036854775807]", None).is_err());
}

#[test]
fn facts_of_a_huge_bounding_box_do_not_overflow() {
    let l = Layout::parse(
        "S[2:-288230376151711743@warpid] + R[2:288230376151711743@warpid]",
        None,
    )
    .unwrap();
    let f = layout::facts::facts(&l, None);
    // Either decided or an error value: never a panic or a wrapped count.
    if let Ok(f) = f {
        assert!(!matches!(f.surjective, layout::facts::Fact::No(ref w) if w.contains('-')));
    }
}
