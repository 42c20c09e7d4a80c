//! Linear layouts whose in-dims alias one physical axis (`register` and `reg`, `lane` and
//! `laneid`, `warp` and `warpid`, `offset` and `m`, `block` and `cta`) or are related through
//! `tx = laneid + 32*warpid`: the physical point of an input is the SUM of the in-dims'
//! contributions per axis (`layout::relation` module doc), so no in-dim overwrites another and
//! the order of the in-dims never changes a verdict. Checked against an evaluator written here
//! from that definition alone (no `layout` code but parsing), against the Axe conversion, and
//! across all deciders.

use std::collections::{BTreeMap, BTreeSet};

use certify::{equivalent, DeciderKind, Outcome, Policy, Report};
use layout::convert::{convert, Target};
use layout::linear::{InDim, LinearLayout, OutDim};
use layout::relation::relation;
use layout::Layout;
use proptest::prelude::*;

/// A physical point as the test reads it: axis name -> value, zeros dropped.
type TestPoint = BTreeMap<String, i64>;

/// The relation as the test computes it: (logical cell, physical point) pairs.
type TestRelation = BTreeSet<(Vec<i64>, TestPoint)>;

/// The axis an in-dim or Axe axis name lands on after aliases and the `cuda` relation
/// `tx = laneid + 32*warpid`, with the weight of one unit there (copied by hand from
/// layout/data/axes.toml, not computed by `layout`).
fn test_axis(name: &str) -> (&'static str, i64) {
    match name {
        "register" | "reg" => ("reg", 1),
        "lane" | "laneid" | "tx" => ("tx", 1),
        "warp" | "warpid" => ("tx", 32),
        "offset" | "m" => ("m", 1),
        "block" | "cta" => ("cta", 1),
        other => panic!("the test knows no axis {other}"),
    }
}

/// Sums `(name, value)` contributions per axis (the definition under test), zeros dropped.
fn test_point<'a>(components: impl IntoIterator<Item = (&'a str, i64)>) -> TestPoint {
    let mut p = TestPoint::new();
    for (name, v) in components {
        let (axis, w) = test_axis(name);
        *p.entry(axis.to_string()).or_insert(0) += w * v;
    }
    p.retain(|_, v| *v != 0);
    p
}

/// A linear layout as data: in-dims (name, bases) in order, out-dim sizes.
#[derive(Clone, Debug)]
struct Lin {
    ins: Vec<(String, Vec<Vec<i64>>)>,
    outs: Vec<i64>,
}

impl Lin {
    fn new(ins: &[(&str, &[&[i64]])], outs: &[i64]) -> Lin {
        Lin {
            ins: ins
                .iter()
                .map(|(n, bs)| (n.to_string(), bs.iter().map(|b| b.to_vec()).collect()))
                .collect(),
            outs: outs.to_vec(),
        }
    }

    fn text(&self) -> String {
        let dims: Vec<String> = self
            .ins
            .iter()
            .map(|(n, bs)| {
                let bs: Vec<String> = bs
                    .iter()
                    .map(|b| {
                        let v: Vec<String> = b.iter().map(i64::to_string).collect();
                        format!("[{}]", v.join(", "))
                    })
                    .collect();
                format!("{n}=[{}]", bs.join(", "))
            })
            .collect();
        format!("#ttg.linear<{{{}}}>", dims.join(", "))
    }

    /// The layout with exactly these out-dim sizes (the `#ttg.linear` text with a shape would
    /// be fitted to it as Triton fits a tensor's layout, repeating registers up to the shape).
    fn parse(&self) -> Layout {
        let ins = self
            .ins
            .iter()
            .map(|(name, bases)| InDim {
                name: name.clone(),
                bases: bases.clone(),
            })
            .collect();
        let outs = self
            .outs
            .iter()
            .enumerate()
            .map(|(i, &s)| OutDim {
                name: format!("dim{i}"),
                log2_size: s.trailing_zeros(),
            })
            .collect();
        Layout::Linear(LinearLayout::new(ins, outs).unwrap())
    }

    /// Every input (one value per in-dim): the XOR of its bases' set bits is the cell, the
    /// in-dims' values summed per axis the point.
    fn test_relation(&self) -> TestRelation {
        let mut inputs: Vec<Vec<i64>> = vec![vec![]];
        for (_, bs) in &self.ins {
            inputs = inputs
                .into_iter()
                .flat_map(|x| {
                    (0..1i64 << bs.len()).map(move |v| {
                        let mut y = x.clone();
                        y.push(v);
                        y
                    })
                })
                .collect();
        }
        inputs
            .iter()
            .map(|x| {
                let mut cell = vec![0i64; self.outs.len()];
                for ((_, bs), &v) in self.ins.iter().zip(x) {
                    for (k, b) in bs.iter().enumerate() {
                        if v >> k & 1 == 1 {
                            cell.iter_mut().zip(b).for_each(|(c, y)| *c ^= y);
                        }
                    }
                }
                let point = test_point(self.ins.iter().zip(x).map(|((n, _), &v)| (n.as_str(), v)));
                (cell, point)
            })
            .collect()
    }
}

/// An Axe layout's relation over row-major `shape`, computed here from its iters.
fn test_axe_relation(a: &layout::AxeLayout, shape: &[i64]) -> TestRelation {
    let digits = |iters: &[layout::Iter], mut x: i64| -> Vec<(String, i64)> {
        let mut out = Vec::new();
        for it in iters.iter().rev() {
            out.push((it.axis.to_string(), (x % it.extent) * it.stride));
            x /= it.extent;
        }
        out
    };
    let size: i64 = a.shard().iter().map(|it| it.extent).product();
    let reps: i64 = a.replica().iter().map(|it| it.extent).product();
    let mut out = TestRelation::new();
    for x in 0..size {
        let mut cell = vec![0i64; shape.len()];
        let mut rest = x;
        for (c, e) in cell.iter_mut().zip(shape).rev() {
            *c = rest % e;
            rest /= e;
        }
        for r in 0..reps {
            let mut parts = digits(a.shard(), x);
            parts.extend(digits(a.replica(), r));
            parts.extend(a.offset().iter().map(|(ax, v)| (ax.to_string(), *v)));
            out.insert((
                cell.clone(),
                test_point(parts.iter().map(|(n, v)| (n.as_str(), *v))),
            ));
        }
    }
    out
}

/// The trusted relation of `l`, in the test's representation.
fn trusted_relation(l: &Layout, shape: Option<&[i64]>) -> TestRelation {
    relation(l, shape)
        .unwrap()
        .into_iter()
        .map(|(c, p)| {
            let p = p.into_iter().map(|(a, v)| (a.to_string(), v)).collect();
            (c, p)
        })
        .collect()
}

/// The test relation's points at `cell`, as vectors over `axes` (absent axes 0), sorted.
fn points_at(r: &TestRelation, cell: &[i64], axes: &[layout::Axis]) -> Vec<Vec<i64>> {
    let mut v: Vec<Vec<i64>> = r
        .iter()
        .filter(|(c, _)| c == cell)
        .map(|(_, p)| {
            axes.iter()
                .map(|a| p.get(a.as_str()).copied().unwrap_or(0))
                .collect()
        })
        .collect();
    v.sort();
    v.dedup();
    v
}

/// Decides `a == b` and checks the report against the test's relations: the verdict is the
/// truth, no decider says the opposite, and a counterexample is one for the test too.
fn decide_and_check(a: &Layout, b: &Layout, ra: &TestRelation, rb: &TestRelation) -> Report {
    let truth = ra == rb;
    let r = equivalent(a, b, None, &Policy::default()).unwrap_or_else(|e| {
        panic!("{} vs {}: {e}", a.print(), b.print());
    });
    let want = if truth {
        "equivalent"
    } else {
        "not equivalent"
    };
    assert_eq!(
        r.verdict(),
        want,
        "{} vs {}: {:?}",
        a.print(),
        b.print(),
        r.runs
    );
    for run in &r.runs {
        let wrong = match &run.outcome {
            Outcome::Proved { .. } => !truth,
            Outcome::Refuted { .. } => truth,
            Outcome::Unknown { .. } => false,
        };
        assert!(!wrong, "{} is wrong: {:?}", run.decider.name(), run.outcome);
    }
    if let Some(c) = &r.counterexample {
        let (pa, pb) = (
            points_at(ra, &c.coord, &r.axes),
            points_at(rb, &c.coord, &r.axes),
        );
        assert_ne!(pa, pb, "no counterexample at {:?}", c.coord);
        assert_eq!((&c.left, &c.right), (&pa, &pb), "at {:?}", c.coord);
    }
    r
}

fn axe(text: &str) -> Layout {
    Layout::parse(text, None).unwrap()
}

// Repro 1 (by hand). `{register=[[1]], reg=[[3]]}` over a size-4 out-dim: input (r, g) is
// cell r*1 XOR g*3 at reg = r + g: (0,0) -> cell 0 at 0, (1,0) -> cell 1 at 1, (0,1) -> cell 3 at
// 1, (1,1) -> cell 2 at 2. `S[(2,2):(1@reg,1@reg)]` sends x = 2i + j to reg = i + j: 0 -> 0,
// 1 -> 1, 2 -> 1, 3 -> 2. They agree at 0 and 1 and first differ at logical 2 (reg 2 vs 1).
// The old relation let the LAST in-dim win (reg = g) and reported a counterexample at 1.
#[test]
fn aliased_register_in_dims_first_differ_at_logical_two() {
    let axe2 = axe("S[(2,2):(1@reg,1@reg)]");
    for order in [["register", "reg"], ["reg", "register"]] {
        let bases: [&[&[i64]]; 2] = if order[0] == "register" {
            [&[&[1]], &[&[3]]]
        } else {
            [&[&[3]], &[&[1]]]
        };
        let lin = Lin::new(&[(order[0], bases[0]), (order[1], bases[1])], &[4]);
        let rl = lin.test_relation();
        let want: TestRelation = [
            (vec![0], test_point([])),
            (vec![1], test_point([("reg", 1)])),
            (vec![3], test_point([("reg", 1)])),
            (vec![2], test_point([("reg", 2)])),
        ]
        .into();
        assert_eq!(rl, want);
        assert_eq!(trusted_relation(&lin.parse(), None), rl, "{}", lin.text());
        let r = decide_and_check(&lin.parse(), &axe2, &rl, &test_axe_relation_of(&axe2, &[4]));
        let c = r.counterexample.expect("refuted");
        assert_eq!(
            (c.coord, c.left, c.right),
            (vec![2], vec![vec![2]], vec![vec![1]])
        );
    }
}

// Repro 2 (by hand). `{register=[[1]], reg=[[2]]}`: input (r, g) is cell r + 2g at reg = r + g,
// so cell 0 -> 0, 1 -> 1, 2 -> 1, 3 -> 2: exactly `S[(2,2):(1@reg,1@reg)]` (x = 2i + j at
// i + j). EQUIVALENT under the sum definition. The deciders said so on main too, but the old
// trusted relation (last in-dim wins: cell 1 at reg 0) disagreed with them.
#[test]
fn aliased_register_in_dims_with_disjoint_bits_are_the_axe_sum() {
    let axe2 = axe("S[(2,2):(1@reg,1@reg)]");
    let ra = test_axe_relation_of(&axe2, &[4]);
    assert_eq!(trusted_relation(&axe2, Some(&[4])), ra);
    for lin in [
        Lin::new(&[("register", &[&[1]]), ("reg", &[&[2]])], &[4]),
        Lin::new(&[("reg", &[&[2]]), ("register", &[&[1]])], &[4]),
    ] {
        let rl = lin.test_relation();
        assert_eq!(rl, ra, "{}", lin.text());
        assert_eq!(trusted_relation(&lin.parse(), None), rl, "{}", lin.text());
        decide_and_check(&lin.parse(), &axe2, &rl, &ra);
    }
}

// Repro 3: reordering the in-dims of one layout. Under the sum both orders are one relation;
// the normal form (which sorts in-dims by name) proves it, and enumeration must agree rather
// than make the deciders disagree.
#[test]
fn reordering_aliased_in_dims_keeps_the_relation() {
    let a = Lin::new(&[("register", &[&[1]]), ("reg", &[&[3]])], &[4]);
    let b = Lin::new(&[("reg", &[&[3]]), ("register", &[&[1]])], &[4]);
    assert_eq!(a.test_relation(), b.test_relation());
    let r = decide_and_check(
        &a.parse(),
        &b.parse(),
        &a.test_relation(),
        &b.test_relation(),
    );
    assert!(
        r.deciding().contains(&DeciderKind::Exhaustive),
        "{:?}",
        r.runs
    );
}

fn test_axe_relation_of(l: &Layout, shape: &[i64]) -> TestRelation {
    let Layout::Axe(a) = l else { panic!("not Axe") };
    test_axe_relation(a, shape)
}

/// The alias pairs of the registry and pairs related through `tx = laneid + 32*warpid`.
const PAIRS: &[(&str, &str)] = &[
    ("register", "reg"),
    ("lane", "laneid"),
    ("warp", "warpid"),
    ("offset", "m"),
    ("block", "cta"),
    ("lane", "tx"),
    ("laneid", "tx"),
    ("warp", "tx"),
    ("warpid", "laneid"),
];

// For in-dims x = [[1]] and y = [[2]] (cell a + 2b for input (a, b)), the point is
// a*w_x + b*w_y on their common axis: the Axe layout `S[(2,2):(w_y@Y,w_x@X)]` (x = 2b + a).
// With y = [[3]] instead, cell 2 is input (1,1) at w_x + w_y while the Axe layout puts cell 2
// (b = 1, a = 0) at w_y: not equivalent, first at logical 2. Both in-dim orders.
#[test]
fn every_alias_and_related_pair_adds_in_both_orders() {
    for &(x, y) in PAIRS {
        let ((ax, wx), (ay, wy)) = (test_axis(x), test_axis(y));
        assert_eq!(ax, ay, "{x} and {y} share an axis");
        let sum = axe(&format!("S[(2,2):({wy}@{ay},{wx}@{ax})]"));
        let rs = test_axe_relation_of(&sum, &[4]);
        let mut verdicts = BTreeSet::new();
        for (first, second) in [(x, y), (y, x)] {
            for (by, truth) in [(2, true), (3, false)] {
                let (bx, bys) = ([1i64], [by]);
                let lin = if first == x {
                    Lin::new(&[(first, &[&bx]), (second, &[&bys])], &[4])
                } else {
                    Lin::new(&[(first, &[&bys]), (second, &[&bx])], &[4])
                };
                let rl = lin.test_relation();
                assert_eq!(rl == rs, truth, "{} vs {}", lin.text(), sum.print());
                assert_eq!(trusted_relation(&lin.parse(), None), rl, "{}", lin.text());
                let r = decide_and_check(&lin.parse(), &sum, &rl, &rs);
                if !truth {
                    assert_eq!(r.counterexample.as_ref().expect("refuted").coord, vec![2]);
                }
                verdicts.insert((by, first == x, r.verdict()));
            }
        }
        // The verdict does not depend on the order.
        let by_order: BTreeSet<(i64, &str)> = verdicts.iter().map(|(b, _, v)| (*b, *v)).collect();
        assert_eq!(by_order.len(), 2, "{x}/{y}: {verdicts:?}");
    }
}

const NAMES: &[&str] = &[
    "register", "reg", "lane", "laneid", "tx", "warp", "warpid", "offset", "m", "block", "cta",
];

/// The other names of `name`'s family (same axis and weight).
fn family(name: &str) -> Vec<&'static str> {
    NAMES
        .iter()
        .copied()
        .filter(|n| test_axis(n) == test_axis(name))
        .collect()
}

fn basis(outs: Vec<i64>) -> impl Strategy<Value = Vec<i64>> {
    let n = outs.len();
    let single = (0..n, 0u32..3).prop_map({
        let outs = outs.clone();
        move |(d, j)| {
            let mut b = vec![0i64; outs.len()];
            b[d] = (1i64 << j) % outs[d];
            b
        }
    });
    let random = outs
        .iter()
        .map(|&e| 0..e)
        .collect::<Vec<_>>()
        .prop_map(|v| v);
    prop_oneof![2 => single, 1 => random]
}

fn lin(outs: Vec<i64>) -> impl Strategy<Value = Lin> {
    let names = prop::sample::subsequence(NAMES, 1..=4).prop_shuffle();
    (names, Just(outs.clone())).prop_flat_map(move |(names, outs)| {
        let dims: Vec<_> = names
            .iter()
            .map(|n| {
                (
                    Just(n.to_string()),
                    prop::collection::vec(basis(outs.clone()), 0..=2),
                )
            })
            .collect();
        (dims, Just(outs)).prop_map(|(ins, outs)| Lin { ins, outs })
    })
}

fn outs() -> impl Strategy<Value = Vec<i64>> {
    prop::collection::vec(prop::sample::select(vec![2i64, 4, 8]), 1..=2)
}

/// Renames each in-dim to a random name of its family, keeping names distinct.
fn rename(l: &Lin, picks: &[usize]) -> Lin {
    let mut out = l.clone();
    for (i, p) in picks.iter().enumerate().take(out.ins.len()) {
        let f = family(&out.ins[i].0);
        let new = f[p % f.len()];
        if !out.ins.iter().any(|(n, _)| n == new) {
            out.ins[i].0 = new.to_string();
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn aliased_in_dims_agree_with_the_sum_everywhere(
        (a, b, picks, seed) in outs().prop_flat_map(|o| (
            lin(o.clone()),
            lin(o),
            prop::collection::vec(0usize..3, 4),
            any::<u64>(),
        ))
    ) {
        let ra = a.test_relation();
        let la = a.parse();
        prop_assert_eq!(&trusted_relation(&la, None), &ra, "{}", a.text());
        // Any order of the in-dims and any alias of their names: the same relation, proved.
        let mut shuffled = rename(&a, &picks);
        let n = shuffled.ins.len();
        shuffled.ins.rotate_left((seed as usize) % n);
        if seed & 1 == 1 {
            shuffled.ins.reverse();
        }
        prop_assert_eq!(&shuffled.test_relation(), &ra);
        decide_and_check(&la, &shuffled.parse(), &ra, &shuffled.test_relation());
        // An unrelated layout over the same cells: the verdict is the test's.
        decide_and_check(&la, &b.parse(), &ra, &b.test_relation());
        // The Axe conversion, when there is one, is the same relation.
        if let Ok(Layout::Axe(x)) = convert(&la, Target::Axe, None) {
            prop_assert_eq!(&test_axe_relation(&x, &a.outs), &ra, "{} -> {}", a.text(), layout::notation::axe::print(&x));
            decide_and_check(&la, &Layout::Axe(x), &ra, &ra);
        }
    }
}
