//! Matching a layout literal with parameter holes against a concrete layout.
//!
//! A rule side may write parameters inside a layout literal: `(a,b):(1,a)`, `size(L):1`,
//! `S[e:s@x]`. Matching such a literal against a layout value means finding values of the
//! holes' parameters for which the literal, instantiated, is the same layout value. Candidates
//! come from reading the value's printed integers where the literal prints each parameter
//! (found by instantiating the literal with distinct marker values and aligning the two
//! printed texts), and otherwise from the parameter's bounded range; every candidate is
//! confirmed by instantiating the literal and comparing values, so a match found is never
//! wrong, only possibly missed (a parameter printed nowhere whose range is too large, or a
//! literal that prints unlike the value: other than in its integers and axis names).
//!
//! Example: `(a,b):(1,a)` against `(4, 8):(1, 4)` binds `a = 4`, `b = 8`; against
//! `(4, 8):(1, 2)` nothing (a = 4 from the shape, 2 from the stride: instantiating with
//! `a = 4` gives stride 4, not 2).

use std::collections::BTreeMap;

use layout::Layout;

use super::eval::{self, Assignment, Bound};
use super::prove::bounds_in;
use super::syntax::{Arg, CallArg, IntExpr, Piece, Rule, Sort, Term};

/// The finite range of each integer and axis parameter of a rule (empty for an integer
/// without bounds or with more than [`MOST_TRIES`] values).
pub type Ranges = BTreeMap<String, Vec<Bound>>;

/// The most instantiations one match tries when enumerating parameter ranges.
pub const MOST_TRIES: usize = 4096;

/// Marker values for the alignment (primes unlikely to be printed by the values matched).
const MARKERS: [i64; 12] = [
    7919, 7927, 7933, 7937, 7949, 7951, 7963, 7993, 8009, 8011, 8017, 8039,
];

/// The ranges of a rule's integer and axis parameters.
pub fn ranges(rule: &Rule) -> Ranges {
    let mut known = BTreeMap::new();
    // Bounds may use other parameters: settle them in rounds (as the prover does).
    for _ in 0..rule.params.len() {
        for p in rule.params.iter().filter(|p| p.sort == Sort::Int) {
            if let Ok(b) = bounds_in(&p.name, &rule.conds, &known) {
                known.insert(p.name.clone(), b);
            }
        }
    }
    let mut out = Ranges::new();
    for p in &rule.params {
        let vals = match &p.sort {
            Sort::Int => match known.get(&p.name) {
                Some(&(lo, hi)) if (hi as i128) - (lo as i128) < MOST_TRIES as i128 => {
                    (lo..=hi).map(Bound::Int).collect()
                }
                _ => Vec::new(),
            },
            Sort::Axis(axes) => axes.iter().cloned().map(Bound::Axis).collect(),
            _ => continue,
        };
        out.insert(p.name.clone(), vals);
    }
    out
}

/// Whether a literal's holes use a parameter (`S[1:1]` holds number holes only).
pub fn is_parametric(pieces: &[Piece]) -> bool {
    !hole_params(pieces).is_empty()
}

/// The parameters a literal's holes use (layouts inside `size(L)` too), in order of first use.
pub fn hole_params(pieces: &[Piece]) -> Vec<String> {
    let mut out = Vec::new();
    for p in pieces {
        match p {
            Piece::Text(_) => {}
            Piece::Int(e) => int_params(e, &mut out),
            Piece::Axis(n) => push(&mut out, n),
        }
    }
    out
}

fn push(out: &mut Vec<String>, n: &str) {
    if !out.iter().any(|x| x == n) {
        out.push(n.to_string());
    }
}

fn int_params(e: &IntExpr, out: &mut Vec<String>) {
    match e {
        IntExpr::Num(_) => {}
        IntExpr::Param(p) => push(out, p),
        IntExpr::Neg(x) => int_params(x, out),
        IntExpr::Bin(_, x, y) => {
            int_params(x, out);
            int_params(y, out);
        }
        IntExpr::Call(_, arg) => match arg.as_ref() {
            CallArg::Int(x) => int_params(x, out),
            CallArg::Term(t) => term_params(t, out),
        },
    }
}

fn term_params(t: &Term, out: &mut Vec<String>) {
    match t {
        Term::Lit { pieces, .. } => {
            for n in hole_params(pieces) {
                push(out, &n);
            }
        }
        Term::Var { name, .. } => push(out, name),
        Term::Op { args, .. } => {
            for a in args {
                match a {
                    Arg::Term(t) => term_params(t, out),
                    Arg::Int(e) => int_params(e, out),
                    Arg::Shape(es) => es.iter().for_each(|e| int_params(e, out)),
                    Arg::Region(rs) => rs.iter().for_each(|(b, e)| {
                        int_params(b, out);
                        int_params(e, out);
                    }),
                }
            }
        }
    }
}

/// The printed integers of a text (a `-` right before one is its sign; digits inside a name
/// are no integer), and the text with each integer replaced by `#`.
fn integers(text: &str) -> (Vec<i64>, String) {
    let chars: Vec<char> = text.chars().collect();
    let (mut nums, mut skeleton) = (Vec::new(), String::new());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let in_name = i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_');
        if c.is_ascii_digit() && !in_name {
            let start = i;
            while i < chars.len() && chars[i].is_ascii_digit() {
                i += 1;
            }
            let digits: String = chars[start..i].iter().collect();
            let Ok(v) = digits.parse::<i64>() else {
                return (Vec::new(), text.to_string());
            };
            let negative = skeleton.ends_with('-');
            if negative {
                skeleton.pop();
            }
            nums.push(if negative { -v } else { v });
            skeleton.push('#');
        } else {
            skeleton.push(c);
            i += 1;
        }
    }
    (nums, skeleton)
}

/// Whether the literal instantiated at `a` is `value`.
fn confirms(pieces: &[Piece], value: &Layout, a: &Assignment) -> bool {
    eval::fill(pieces, a)
        .ok()
        .and_then(|text| Layout::parse(&text, None).ok())
        .is_some_and(|l| &l == value)
}

/// What aligning the literal printed with marker values against the value printed gives.
enum Alignment {
    /// The marked literal does not instantiate: nothing is read.
    Unaligned,
    /// The two printed forms differ in more than their integers and axis names: the literal
    /// prints unlike the value, no match is looked for.
    Unlike,
    /// The integer parameters read from the value (each in its range).
    Read(BTreeMap<String, i64>),
}

fn aligned(
    pieces: &[Piece],
    value: &Layout,
    a: &Assignment,
    ints: &[&String],
    ranges: &Ranges,
) -> Alignment {
    let mut marked = a.clone();
    for (n, m) in ints.iter().zip(MARKERS) {
        marked.insert((*n).clone(), Bound::Int(m));
    }
    for (n, vals) in ranges {
        if let (false, Some(first)) = (marked.contains_key(n), vals.first()) {
            marked.insert(n.clone(), first.clone());
        }
    }
    let Some(text) = eval::fill(pieces, &marked)
        .ok()
        .and_then(|t| Layout::parse(&t, None).ok())
        .map(|l| l.print())
    else {
        return Alignment::Unaligned;
    };
    let (mark_nums, mark_skel) = integers(&text);
    let (nums, skel) = integers(&value.print());
    let mut guesses: BTreeMap<String, Option<i64>> = BTreeMap::new();
    // Axis names may differ (the markers use each axis parameter's first axis, and the
    // default axis is not printed).
    let shape = |s: &str| -> String {
        s.chars()
            .filter(|c| !c.is_alphabetic() && *c != '@' && *c != '_')
            .collect()
    };
    if shape(&mark_skel) != shape(&skel) || mark_nums.len() != nums.len() {
        return Alignment::Unlike;
    }
    for (m, v) in mark_nums.iter().zip(&nums) {
        for (n, mk) in ints.iter().zip(MARKERS) {
            let g = if *m == mk {
                Some(*v)
            } else if *m == -mk {
                v.checked_neg()
            } else {
                continue;
            };
            let slot = guesses.entry((*n).clone()).or_insert(g);
            if *slot != g {
                *slot = None;
            }
        }
    }
    let found = guesses
        .into_iter()
        .filter_map(|(n, g)| {
            let g = g?;
            let r = ranges.get(&n)?;
            (r.is_empty() || r.contains(&Bound::Int(g))).then_some((n, g))
        })
        .collect();
    Alignment::Read(found)
}

/// The first assignment (in range order) extending `fixed` over `free` that confirms, trying
/// at most [`MOST_TRIES`] instantiations.
fn enumerate(
    pieces: &[Piece],
    value: &Layout,
    fixed: &Assignment,
    free: &[&String],
    ranges: &Ranges,
) -> Option<Assignment> {
    let doms: Vec<&Vec<Bound>> = free.iter().map(|n| ranges.get(*n)).collect::<Option<_>>()?;
    let total = doms
        .iter()
        .try_fold(1usize, |acc, d| acc.checked_mul(d.len()))?;
    if total == 0 || total > MOST_TRIES {
        return None;
    }
    for mut i in 0..total {
        let mut a = fixed.clone();
        for (n, d) in free.iter().zip(&doms) {
            a.insert((*n).clone(), d[i % d.len()].clone());
            i /= d.len();
        }
        if confirms(pieces, value, &a) {
            return Some(a);
        }
    }
    None
}

/// Extends `a` with values of the literal's unbound hole parameters so that the literal,
/// instantiated, is `value` (`None`: no such values found; a parameter neither in `a` nor in
/// `ranges`, a layout, must be bound already). Parameters bound in `a` keep their values.
pub fn match_literal(
    pieces: &[Piece],
    value: &Layout,
    a: &Assignment,
    ranges: &Ranges,
) -> Option<Assignment> {
    let params = hole_params(pieces);
    let free: Vec<&String> = params.iter().filter(|n| !a.contains_key(*n)).collect();
    if free.iter().any(|n| !ranges.contains_key(*n)) {
        return None;
    }
    if free.is_empty() {
        return confirms(pieces, value, a).then(|| a.clone());
    }
    let ints: Vec<&String> = free
        .iter()
        .copied()
        .filter(|n| !matches!(ranges[*n].first(), Some(Bound::Axis(_))))
        .collect();
    match aligned(pieces, value, a, &ints, ranges) {
        Alignment::Unlike => None,
        // The parameters read from the value are fixed; the others are searched.
        Alignment::Read(guesses) => {
            let mut fixed = a.clone();
            fixed.extend(guesses.iter().map(|(n, g)| (n.clone(), Bound::Int(*g))));
            let rest: Vec<&String> = free
                .iter()
                .copied()
                .filter(|n| !guesses.contains_key(*n))
                .collect();
            enumerate(pieces, value, &fixed, &rest, ranges)
        }
        Alignment::Unaligned => enumerate(pieces, value, a, &free, ranges),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::parse_source;

    fn rule(text: &str) -> Rule {
        parse_source("t.rules", text).unwrap().rules.remove(0)
    }

    fn lhs_literal(r: &Rule) -> Vec<Piece> {
        match &r.lhs {
            Term::Lit { pieces, .. } => pieces.clone(),
            Term::Op { args, .. } => match &args[0] {
                Arg::Term(Term::Lit { pieces, .. }) => pieces.clone(),
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        }
    }

    fn layout(text: &str) -> Layout {
        Layout::parse(text, None).unwrap()
    }

    #[test]
    fn a_literal_binds_its_holes_from_the_value() {
        let r = rule(
            "rule m forall a b d : int where 2 <= a <= 6, 2 <= b <= 6, 1 <= d <= 5
               coalesce((a,b):(d, a*d)) === (a*b):d",
        );
        let (pieces, rs) = (lhs_literal(&r), ranges(&r));
        let a = match_literal(&pieces, &layout("(4,5):(3,12)"), &Assignment::new(), &rs).unwrap();
        let text: Vec<String> = ["a", "b", "d"].iter().map(|n| a[*n].text()).collect();
        assert_eq!(text, ["4", "5", "3"]);
        // The stride 12 is not a*d for a = 4, d = 2.
        assert!(match_literal(&pieces, &layout("(4,5):(2,12)"), &Assignment::new(), &rs).is_none());
        // A value outside the marker alignment: still confirmed by instantiation.
        let mut bound = Assignment::new();
        bound.insert("a".into(), Bound::Int(5));
        assert!(match_literal(&pieces, &layout("(4,5):(3,12)"), &bound, &rs).is_none());
    }

    #[test]
    fn match_side_binds_hole_parameters_consistently() {
        use crate::rules::explain::match_side;
        use crate::rules::parse::parse_term;
        let r = rule(
            "rule m forall a b d : int where 2 <= a <= 6, 2 <= b <= 6, 1 <= d <= 5
               coalesce((a,b):(d, a*d)) === (a*b):d",
        );
        let rs = ranges(&r);
        let mut s = BTreeMap::new();
        let t = parse_term("coalesce((3,4):(2,6))").unwrap();
        assert!(match_side(&r.lhs, &t, &mut s, &rs));
        assert!(match_side(
            &r.rhs,
            &parse_term("12:2").unwrap(),
            &mut s,
            &rs
        ));
        assert_eq!(s["a"], "3");
        // The target disagrees with d = 2 bound by the source.
        let mut s = BTreeMap::new();
        assert!(match_side(&r.lhs, &t, &mut s, &rs));
        assert!(!match_side(
            &r.rhs,
            &parse_term("12:3").unwrap(),
            &mut s,
            &rs
        ));
    }

    #[test]
    fn holes_read_nowhere_are_found_in_their_range() {
        let r = rule(
            "rule c forall e1 e2 s k : int where 1 <= e1 <= 4, 1 <= e2 <= 4, 1 <= s <= 3, 1 <= k <= 4
               S[(e1,e2):(s, k*s)] == S[(e1,e2):(s, k*s)]",
        );
        let pieces = lhs_literal(&r);
        let a = match_literal(
            &pieces,
            &layout("S[(2,3):(2,6)]"),
            &Assignment::new(),
            &ranges(&r),
        )
        .unwrap();
        assert_eq!(a["k"].text(), "3");
        assert_eq!(a["s"].text(), "2");
    }
}
