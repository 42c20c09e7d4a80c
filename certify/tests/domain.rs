//! The claim's domain (spec certify.md 1b, `certify::domain`): symmetric, stated, and the
//! verdict of `equivalent` does not depend on which side is written first. Each verdict is also
//! checked against a tiny evaluator written here (CuTe colexicographic, Axe row-major) that
//! shares no code with `layout` beyond parsing the strings it generates itself.

use certify::domain::{resolve, Source};
use certify::equivalent;
use layout::Layout;
use proptest::prelude::*;

mod common;

use common::{chain_violation, parse, policy};

/// A flat (non-nested) CuTe or Axe layout on one axis, as written and as (extents, strides).
#[derive(Clone, Debug)]
struct Flat {
    text: String,
    extents: Vec<i64>,
    strides: Vec<i64>,
    colex: bool,
}

impl Flat {
    /// The text of these modes in this order's notation (CuTe or Axe).
    fn retext(mut self) -> Flat {
        let list = |v: &[i64]| v.iter().map(i64::to_string).collect::<Vec<_>>().join(",");
        let (e, d) = (list(&self.extents), list(&self.strides));
        self.text = if self.colex {
            format!("({e}):({d})")
        } else {
            format!("S[({e}):({d})]")
        };
        self
    }

    /// The same modes read in the other order: the same map over its N-D domain.
    fn flipped(&self) -> Flat {
        let mut b = self.clone();
        b.colex = !self.colex;
        b.extents.reverse();
        b.strides.reverse();
        b.retext()
    }

    fn natural(&self) -> Vec<i64> {
        if self.colex {
            self.extents.clone()
        } else {
            vec![self.extents.iter().product()]
        }
    }

    /// The layout at flat index `x` read in its own order.
    fn at_flat(&self, x: i64) -> i64 {
        let mut rest = x;
        let mut out = 0;
        let order: Vec<usize> = if self.colex {
            (0..self.extents.len()).collect()
        } else {
            (0..self.extents.len()).rev().collect()
        };
        for i in order {
            out += (rest % self.extents[i]) * self.strides[i];
            rest /= self.extents[i];
        }
        out
    }

    /// The layout at N-D coordinate `c` of `shape`, flattened in its own order.
    fn at(&self, shape: &[i64], c: &[i64]) -> i64 {
        let mut x = 0;
        if self.colex {
            for i in (0..shape.len()).rev() {
                x = x * shape[i] + c[i];
            }
        } else {
            for i in 0..shape.len() {
                x = x * shape[i] + c[i];
            }
        }
        self.at_flat(x)
    }
}

fn flat() -> impl Strategy<Value = Flat> {
    (
        prop::collection::vec((1i64..5, -6i64..7), 1..4),
        any::<bool>(),
    )
        .prop_map(|(modes, colex)| {
            Flat {
                text: String::new(),
                extents: modes.iter().map(|m| m.0).collect(),
                strides: modes.iter().map(|m| m.1).collect(),
                colex,
            }
            .retext()
        })
}

/// The reference verdict over `shape`.
fn reference_equal(a: &Flat, b: &Flat, shape: &[i64]) -> bool {
    let n: i64 = shape.iter().product();
    (0..n).all(|x| {
        let mut c = vec![0; shape.len()];
        let mut rest = x;
        for i in (0..shape.len()).rev() {
            c[i] = rest % shape[i];
            rest /= shape[i];
        }
        a.at(shape, &c) == b.at(shape, &c)
    })
}

#[test]
fn an_axe_and_a_cute_layout_of_rank_2_need_a_named_shape_either_way() {
    // The soundness issue's repro: these agree at every flat index but not at (0,1) of (3,3).
    // Neither reading is the sides' own (rule 5): the claim asks for a shape, both ways.
    let (axe, cute) = (parse("S[(3,3):(3,1)]"), parse("(3,3):(1,3)"));
    for (a, b) in [(&axe, &cute), (&cute, &axe)] {
        let e = equivalent(a, b, None, &policy()).unwrap_err().to_string();
        assert!(e.contains("ambiguous") && e.contains("--shape"), "{e}");
    }
    // Over the flat index, named explicitly, they are equivalent; over (3,3) they are not.
    let r = equivalent(&axe, &cute, Some(&[9]), &policy()).unwrap();
    assert_eq!(r.verdict(), "equivalent");
    assert_eq!(r.domain.source, Source::Given);
    let r = equivalent(&cute, &axe, Some(&[3, 3]), &policy()).unwrap();
    assert_eq!(r.verdict(), "not equivalent");
}

/// The deciders audit (F2): `equivalent` was not transitive. `((4,8)):((8,1))` against
/// `S[(8,4):(1,8)]` was decided over the flat index (equivalent), `((4,8)):((8,1))` against
/// `(4,8):(8,1)` over every shape alike (equivalent), and `S[(8,4):(1,8)]` against
/// `(4,8):(8,1)` over (4,8), read in two orders (not equivalent). The last claim now asks for
/// its shape; the same with `S[32:1]`, `32:1` and `(4,8):(1,4)`.
#[test]
fn equivalent_verdicts_chain() {
    for [a, b, c] in [
        ["S[(8,4):(1,8)]", "((4,8)):((8,1))", "(4,8):(8,1)"],
        ["S[32:1]", "32:1", "(4,8):(1,4)"],
    ] {
        let (la, lb, lc) = (parse(a), parse(b), parse(c));
        let v = |x: &Layout, y: &Layout| equivalent(x, y, None, &policy()).map(|r| r.verdict());
        assert_eq!(v(&la, &lb).unwrap(), "equivalent", "{a} {b}");
        assert_eq!(v(&lb, &lc).unwrap(), "equivalent", "{b} {c}");
        for (x, y) in [(&la, &lc), (&lc, &la)] {
            let e = v(x, y).unwrap_err().to_string();
            assert!(e.contains("ambiguous"), "{a} {c}: {e}");
        }
    }
}

#[test]
fn two_cute_layouts_of_different_shapes_are_compared_over_the_flat_index() {
    let (a, b) = (parse("(4,8):(1,4)"), parse("(2,16):(1,2)"));
    let d = resolve(&a, &b, None).unwrap();
    assert_eq!((d.shape.clone(), d.source), (vec![32], Source::Flat));
    assert_eq!(
        equivalent(&a, &b, None, &policy()).unwrap().verdict(),
        "equivalent"
    );
}

#[test]
fn different_sizes_are_an_error_naming_both_domains() {
    let e = resolve(&parse("(4,8):(1,4)"), &parse("S[16:1]"), None).unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("(4,8)") && msg.contains("(16)"), "{msg}");
}

#[test]
fn a_fixed_side_gives_the_domain_and_refuses_another() {
    let linear = Layout::parse(
        "#ttg.linear<{register = [[0, 1], [8, 0]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = [], block = []}>",
        Some(&[16, 8]),
    )
    .unwrap();
    let cute = parse("((4,8),(2,2)):((32,1),(16,8)) -> (16,8)");
    let d = resolve(&cute, &linear, None).unwrap();
    assert_eq!(d.shape, vec![16, 8]);
    assert!(resolve(&linear, &parse("S[128:1]"), Some(&[128])).is_err());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// `resolve(a, b)` and `resolve(b, a)` give the same shape (sources mirrored), and
    /// `equivalent` gives the same verdict both ways, which the reference confirms.
    #[test]
    fn the_domain_and_the_verdict_are_symmetric(a in flat(), b in flat(), regroup in any::<bool>()) {
        // Half the cases: b is a regrouping of a read in the other order (same size).
        let b = if regroup {
            a.flipped()
        } else {
            b
        };
        let (la, lb) = (parse(&a.text), parse(&b.text));
        let (ab, ba) = (resolve(&la, &lb, None), resolve(&lb, &la, None));
        match (&ab, &ba) {
            (Ok(x), Ok(y)) => {
                prop_assert_eq!(&x.shape, &y.shape);
                let mirrored = match x.source {
                    Source::Left => Source::Right,
                    Source::Right => Source::Left,
                    s => s,
                };
                prop_assert_eq!(mirrored, y.source);
                // The domain is one of the natural ones, or the flat index.
                let n: i64 = a.extents.iter().product();
                prop_assert!(x.shape == a.natural() || x.shape == b.natural() || x.shape == vec![n]);
                let (v1, v2) = (
                    equivalent(&la, &lb, None, &policy()).unwrap(),
                    equivalent(&lb, &la, None, &policy()).unwrap(),
                );
                prop_assert_eq!(v1.verdict(), v2.verdict());
                let truth = reference_equal(&a, &b, &x.shape);
                prop_assert_eq!(v1.verdict() == "equivalent", truth, "{} vs {} over {:?}", a.text, b.text, x.shape);
            }
            (Err(_), Err(_)) => {}
            _ => prop_assert!(false, "one direction resolves, the other does not: {:?} / {:?}", ab, ba),
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Verdicts given without a shape chain: for `a`, a regrouping `b` of it and a regrouping
    /// `c` of `b` (each possibly in the other order, so many triples are equal), whenever
    /// `a ~ b` and `b ~ c` are decided equivalent and `a ~ c` is decided, it is equivalent;
    /// and `a ~ b` decided not equivalent with `b ~ c` equivalent gives `a ~ c` not
    /// equivalent (where decided).
    #[test]
    fn verdicts_without_a_shape_are_transitive(
        a in flat(),
        flips in prop::collection::vec(any::<bool>(), 2),
        perturb in any::<bool>(),
    ) {
        let regroup = |x: &Flat, flip: bool| if flip { x.flipped() } else { x.clone() };
        let b = regroup(&a, flips[0]);
        let mut c = regroup(&b, flips[1]);
        if perturb {
            c.strides[0] += 1;
            c = c.retext();
        }
        // One-mode spellings of the same flat layouts, so natural domains of rank 1 meet
        // rank >= 2 ones: CuTe `((e0,e1,..)):((d0,d1,..))`, Axe is always `[n]`.
        let nest = |x: &Flat| -> Flat {
            let mut y = x.clone();
            if y.colex {
                let list = |v: &[i64]| v.iter().map(i64::to_string).collect::<Vec<_>>().join(",");
                y.text = format!("(({})):(({}))", list(&y.extents), list(&y.strides));
            }
            y
        };
        let sides = [a.clone(), nest(&a), b.clone(), nest(&b), c.clone(), nest(&c)];
        let layouts: Vec<Layout> = sides.iter().map(|f| parse(&f.text)).collect();
        let verdict = |i: usize, j: usize| {
            equivalent(&layouts[i], &layouts[j], None, &policy())
                .ok()
                .map(|r| r.verdict() == "equivalent")
        };
        let n = sides.len();
        let table: Vec<Vec<Option<bool>>> =
            (0..n).map(|i| (0..n).map(|j| verdict(i, j)).collect()).collect();
        let v = chain_violation(&table, &sides.iter().map(|s| s.text.as_str()).collect::<Vec<_>>());
        prop_assert!(v.is_none(), "{}", v.unwrap_or_default());
    }
}
