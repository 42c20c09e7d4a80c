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
        if self.next(2) == 0 {
            let op = ops1[self.next(4) as usize];
            format!("{op}({})", self.expr(depth - 1))
        } else {
            let op = ops2[self.next(4) as usize];
            format!("{op}({}, {})", self.expr(depth - 1), self.expr(depth - 1))
        }
    }
}

#[test]
fn simplify_output_is_proved_equal_to_its_input_on_200_random_expressions() {
    let (rules, left) = load_rules(&[("t".into(), RULES.into())]).unwrap();
    assert_eq!(rules.len(), 4, "{left:?}");
    let mut g = Gen(0x9e37_79b9_7f4a_7c15);
    let sat = Saturation::default();
    let mut cheaper = 0;
    for _ in 0..200 {
        let e = g.expr(3);
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
        equal_by_decider(&a, &b).unwrap_or_else(|why| panic!("{e} -> {}: {why}", out.best));
    }
    assert!(cheaper > 50, "only {cheaper} of 200 got cheaper");
}

#[test]
fn simplify_certificates_check() {
    let (rules, _) = load_rules(&[("t".into(), RULES.into())]).unwrap();
    let mut g = Gen(42);
    for _ in 0..20 {
        let e = g.expr(2);
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
    assert!(cond.assignment(&|_| Some(inside.clone())).is_some());
    assert!(cond.assignment(&|_| Some(outside.clone())).is_none());
}
