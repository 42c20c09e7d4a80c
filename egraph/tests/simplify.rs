//! The e-graph: simplify's output is proved equal to its input by a decider on 200 random
//! expressions; explanation certificates check; only PROVED rules become rewrites.

use certify::rules::explain::{check, equal_by_decider};
use certify::rules::parse::parse_term;
use egraph::{equivalent, load_rules, simplify, Saturation};

const RULES: &str = "
rule coalesce_idem forall L : cute(2, 4, 4)
  coalesce(coalesce(L)) === coalesce(L)
rule coalesce_map forall L : cute(2, 4, 4)
  coalesce(L) == L
rule flatten_map forall L : cute(2, 4, 4)
  flatten(L) == L
rule right_identity forall L : cute(1, 4, 4)
  compose(L, (size(L)):1) == L
";

/// Rules with integer parameters and integer, shape and region positions.
const INT_RULES: &str = "
rule swizzle_zero forall L : cute(2, 4, 4), m s : int
  where 0 <= m <= 2, 1 <= s <= 2, m < s
  swizzle(0, m, s, L) == L
rule tile_identity_outer forall X : axe(2, 3, 3)
  tile(X, [size(X)], S[1:1], [1]) == X
rule slice_full forall X : axe(2, 3, 3)
  slice(X, [size(X)], [(0, size(X))]) == X
";

const WRONG: &str = "
rule coalesce_is_identical forall L : cute(2, 3, 3)
  coalesce(L) === L
";

/// A deterministic generator (xorshift), so the 200 expressions are the same on every run.
struct Gen(u64);

impl Gen {
    fn next(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }

    fn leaf(&mut self) -> String {
        let rank = 1 + self.next(3);
        let shape: Vec<String> = (0..rank).map(|_| (1 + self.next(4)).to_string()).collect();
        let stride: Vec<String> = (0..rank).map(|_| self.next(6).to_string()).collect();
        if rank == 1 {
            format!("{}:{}", shape[0], stride[0])
        } else {
            format!("({}):({})", shape.join(","), stride.join(","))
        }
    }

    fn expr(&mut self, depth: u32) -> String {
        if depth == 0 || self.next(4) == 0 {
            return self.leaf();
        }
        let ops1 = ["coalesce", "flatten", "right_inverse", "left_inverse"];
        let ops2 = [
            "compose",
            "make_layout",
            "logical_divide",
            "logical_product",
        ];
        match self.next(5) {
            0 | 1 => {
                let op = ops1[self.next(4) as usize];
                format!("{op}({})", self.expr(depth - 1))
            }
            2 | 3 => {
                let op = ops2[self.next(4) as usize];
                format!("{op}({}, {})", self.expr(depth - 1), self.expr(depth - 1))
            }
            _ => self.int_op(depth - 1),
        }
    }

    /// An Axe leaf `S[e:s]` or `S[(e1,e2):(s1,s2)]`.
    fn axe(&mut self) -> (String, i64) {
        let e1 = 1 + self.next(3) as i64;
        if self.next(2) == 0 {
            return (format!("S[{e1}:{}]", self.next(3)), e1);
        }
        let e2 = 1 + self.next(3) as i64;
        let (s1, s2) = (self.next(4), self.next(3));
        (format!("S[({e1},{e2}):({s1},{s2})]"), e1 * e2)
    }

    /// An integer expression of value `v`, sometimes written as arithmetic.
    fn int(&mut self, v: i64) -> String {
        match self.next(3) {
            0 => format!("{} + {}", v - 1, 1),
            1 if v % 2 == 0 => format!("2 * {}", v / 2),
            _ => v.to_string(),
        }
    }

    /// An operator with integer, shape or region arguments.
    fn int_op(&mut self, depth: u32) -> String {
        match self.next(5) {
            0 => {
                let m = 8 + 4 * self.next(4) as i64;
                let m = self.int(m);
                format!("complement({}, {m})", self.expr(depth))
            }
            1 => {
                let (x, n) = self.axe();
                let g = [3, 2, 1].into_iter().find(|g| n % g == 0).unwrap_or(1);
                format!("group({x}, [{}, {}])", self.int(g), n / g)
            }
            2 => {
                let ((a, n), (b, m)) = (self.axe(), self.axe());
                let n = self.int(n);
                format!("tile({a}, [{n}], {b}, [{m}])")
            }
            3 => {
                let (x, n) = self.axe();
                let b = self.next(n as u64) as i64;
                let e = self.int(n);
                format!("slice({x}, [{n}], [({b}, {e})])")
            }
            _ => {
                let (x, n) = self.axe();
                format!("canonicalize(tile({x}, [{n}], S[1:1], [1]))")
            }
        }
    }

    /// A top-level expression: sometimes under a swizzle (only at the root, since `==` does
    /// not make `Sw<0,m,s> o L` and `L` interchangeable under CuTe-only operators).
    fn top(&mut self, depth: u32) -> String {
        let e = self.expr(depth);
        if self.next(5) != 0 {
            return e;
        }
        let (m, s) = (self.next(2), 1 + self.next(2));
        format!("swizzle({}, {m}, {s}, {e})", self.next(2))
    }
}

fn all_rules() -> Vec<egraph::ProvedRule> {
    let files = [("t".into(), RULES.into()), ("i".into(), INT_RULES.into())];
    let (rules, left) = load_rules(&files).unwrap();
    // right_identity's literal `(size(L)):1` holds a parameter: it is matched by value.
    assert_eq!(rules.len(), 7, "{left:?}");
    assert!(left.is_empty(), "{left:?}");
    rules
}

#[test]
fn simplify_output_is_proved_equal_to_its_input_on_200_random_expressions() {
    let rules = all_rules();
    let mut g = Gen(0x9e37_79b9_7f4a_7c15);
    let sat = Saturation::default();
    let mut cheaper = 0;
    for _ in 0..200 {
        let e = g.top(3);
        let out = simplify(&e, &rules, &sat).unwrap();
        assert!(
            out.cost <= out.input_cost,
            "{e} -> {} ({} > {})",
            out.best,
            out.cost,
            out.input_cost
        );
        cheaper += usize::from(out.cost < out.input_cost);
        let (a, b) = (parse_term(&e).unwrap(), parse_term(&out.best).unwrap());
        equal_by_decider(&a, &b, None).unwrap_or_else(|why| panic!("{e} -> {}: {why}", out.best));
    }
    assert!(cheaper > 50, "only {cheaper} of 200 got cheaper");
}

#[test]
fn simplify_certificates_check() {
    let rules = all_rules();
    let mut g = Gen(42);
    for _ in 0..40 {
        let e = g.top(2);
        let out = simplify(&e, &rules, &Saturation::default()).unwrap();
        check(&out.certificate.to_json())
            .unwrap_or_else(|why| panic!("{e}: {why}\n{}", out.certificate.to_json()));
    }
}

#[test]
fn spec_vector_simplifies_to_one_mode() {
    let (rules, _) = load_rules(&[("t".into(), RULES.into())]).unwrap();
    let out = simplify(
        "coalesce(compose((4,8):(1,4), (2,4):(1,2)))",
        &rules,
        &Saturation::default(),
    )
    .unwrap();
    assert_eq!(out.best, "8:1");
    assert_eq!(out.cost, 1);
}

#[test]
fn equivalent_expressions_are_joined_with_a_checked_certificate() {
    let (rules, _) = load_rules(&[("t".into(), RULES.into())]).unwrap();
    let c = equivalent(
        "flatten(coalesce((2,2):(1,2)))",
        "coalesce(flatten((2,2):(1,2)))",
        &rules,
        &Saturation::default(),
    )
    .unwrap()
    .expect("joined");
    check(&c.to_json()).unwrap();
    let none = equivalent("4:1", "4:2", &rules, &Saturation::default()).unwrap();
    assert!(none.is_none());
}

#[test]
fn unproved_rules_give_no_rewrites() {
    let (rules, left) = load_rules(&[("w".into(), WRONG.into())]).unwrap();
    assert!(rules.is_empty());
    assert!(left[0].contains("REFUTED"), "{left:?}");
}

#[test]
fn rewrites_fire_only_inside_the_proved_domain() {
    let (rules, _) = load_rules(&[("t".into(), RULES.into())]).unwrap();
    let (rws, _) = egraph::rewrites::rewrites(&rules);
    assert!(!rws.is_empty());
    let cond = egraph::rewrites::RuleCondition::new(rules[0].rule.clone());
    let inside = layout::Layout::parse("(2,2):(1,2)", None).unwrap();
    let outside = layout::Layout::parse("(8,2):(1,8)", None).unwrap();
    let value = |l: &layout::Layout| Some(certify::rules::ops::Value::Layout(l.clone()));
    assert!(cond.assignment(&|_| value(&inside)).is_some());
    assert!(cond.assignment(&|_| value(&outside)).is_none());
}

#[test]
fn an_integer_rule_fires_only_where_its_condition_holds() {
    let rules = all_rules();
    let sat = Saturation::default();
    // m = 1 < s = 2: Sw<0,1,2> o L is L, and the certificate binds the integers.
    let out = simplify("swizzle(0, 1, 1 + 1, (2,2):(1,2))", &rules, &sat).unwrap();
    assert_eq!(out.best, "(2, 2):(1, 2)");
    let json = out.certificate.to_json();
    assert!(json.contains("\"s\": \"2\""), "{json}");
    check(&json).unwrap();
    // m = 2 is not below s = 2: the rule does not apply, the swizzle stays.
    let out = simplify("swizzle(0, 2, 2, (2,2):(1,2))", &rules, &sat).unwrap();
    assert_eq!(out.best, "Sw<0,2,2> o (2, 2):(1, 2)");
}

#[test]
fn a_shape_position_is_matched_by_value() {
    let rules = all_rules();
    let sat = Saturation::default();
    let out = simplify("tile(S[(2,3):(5,1)], [3 * 2], S[1:1], [1])", &rules, &sat).unwrap();
    assert_eq!(out.best, "S[(2,3):(5,1)]");
    check(&out.certificate.to_json()).unwrap();
    // The rule itself fires where the shape's value is size(X), and only there.
    let fired = |e: &str| {
        let (rws, _) = egraph::rewrites::rewrites(&rules);
        let start = egraph::language::parse_expr(e).unwrap();
        let run = egg::Runner::<_, egraph::fold::Fold>::default()
            .with_expr(&start)
            .run(&rws);
        let name = egg::Symbol::from("tile_identity_outer");
        run.iterations.iter().any(|i| i.applied.contains_key(&name))
    };
    // (X inside the proved domain axe(2, 3, 3); its fold S[6:1] is another leaf.)
    assert!(fired("tile(S[(2,3):(3,1)], [3 * 2], S[1:1], [1])"));
    assert!(!fired("tile(S[(2,3):(3,1)], [2 * 2], S[1:1], [1])"));
}

#[test]
fn a_name_that_is_no_layout_is_an_error_outside_a_library() {
    let rules = all_rules();
    let e = simplify("coalesce(foo)", &rules, &Saturation::default()).unwrap_err();
    assert!(e.contains("foo is no layout"), "{e}");
}

#[test]
fn lazy_rules_are_proved_on_first_match_and_unsound_ones_never_fire() {
    let files = [("t".into(), RULES.into()), ("i".into(), INT_RULES.into())];
    let (rules, _) = egraph::load_rules_lazy(&files).unwrap();
    assert!(rules.iter().all(|r| r.proof_state().is_none()));
    let out = simplify(
        "coalesce(coalesce((2,2):(1,2)))",
        &rules,
        &Saturation::default(),
    )
    .unwrap();
    check(&out.certificate.to_json()).unwrap();
    let state = |name: &str| {
        let r = rules.iter().find(|r| r.rule.name == name).unwrap();
        r.proof_state()
    };
    assert_eq!(state("coalesce_map"), Some(true));
    // Rules whose patterns never matched were never proved.
    assert_eq!(state("tile_identity_outer"), None);
    assert_eq!(state("swizzle_zero"), None);
    // A refuted rule matches, is refuted, and joins nothing.
    let (wrong, _) = egraph::load_rules_lazy(&[("w".into(), WRONG.into())]).unwrap();
    let sat = Saturation::default();
    let joined = equivalent("coalesce((2,2):(1,2))", "(2,2):(1,2)", &wrong, &sat).unwrap();
    assert!(joined.is_none());
    assert_eq!(wrong[0].proof_state(), Some(false));
    // The same results as with rules proved up front, on random expressions.
    let all = all_rules();
    let mut g = Gen(11);
    for _ in 0..30 {
        let e = g.top(3);
        let (lazy, _) = egraph::load_rules_lazy(&files).unwrap();
        let (a, b) = (
            simplify(&e, &all, &sat).unwrap(),
            simplify(&e, &lazy, &sat).unwrap(),
        );
        assert_eq!((a.best, a.cost), (b.best, b.cost), "{e}");
    }
}

/// `swizzle_zero` merges `Sw<0,m,s> o L` with `L` (same map); congruence carries the merge
/// under `coalesce`, which is defined on CuTe layouts only. The e-graph then believes
/// `coalesce(Sw<0,1,2> o L)` (undefined) equals `coalesce(L)`: the checker rejects that step,
/// so `simplify` answers the cheapest term of the checked prefix, and `join` proves nothing.
#[test]
fn a_step_the_checker_rejects_is_never_an_answer() {
    let rules = all_rules();
    let sat = Saturation::default();
    let e = "coalesce(swizzle(0, 1, 2, (2,2):(1,2)))";
    let out = simplify(e, &rules, &sat).unwrap();
    let why = out
        .rejected
        .clone()
        .expect("the e-graph's merge is rejected");
    assert!(why.contains("undefined"), "{why}");
    check(&out.certificate.to_json()).unwrap();
    assert_eq!(out.certificate.end(), out.best);
    let (a, b) = (parse_term(e).unwrap(), parse_term(&out.best).unwrap());
    equal_by_decider(&a, &b, None).unwrap_or_else(|why| panic!("{e} -> {}: {why}", out.best));
    let joined = egraph::join(e, "coalesce((2,2):(1,2))", &rules, &sat).unwrap();
    match joined {
        egraph::Joined::Rejected(why) => assert!(why.contains("undefined"), "{why}"),
        other => panic!("{other:?}"),
    }
}
