//! z3 over symbolic parameters, for rules in the STRIDED FRAGMENT: both sides are literals of
//! shard-only Axe layouts (with offsets) or flat/nested CuTe layouts whose extents, strides and
//! offsets are integer expressions of the parameters.
//!
//! Encoding (QF_BV, signed, 64-bit or narrower when interval arithmetic over the parameter
//! box shows every value fits): every integer the concrete semantics computes is a value with
//! an OK flag, false where that semantics fails (an overflow of `+ - * /` or of a negation,
//! a division by zero, `pow2` outside `0..=62`). Each side is DEFINED exactly when its
//! literal evaluates: every hole OK, every extent >= 1, the size's product and the
//! constructors' span sums (CuTe `sum (e-1)|d|`, Axe per axis `1 + sum (e-1)|s| + |offset|`)
//! without overflow, no axis carrying two offsets. The rule's conditions are encoded with
//! their own semantics (a failing expression makes a comparison false), and with the
//! parameter box they are the only assumptions. The query asks for parameters where exactly
//! one side is defined, or both are and the sizes differ, or both are and some coordinate of
//! the claim domain maps to different points.
//!
//! The claim domain (spec certify.md §1b, [`super::prove::claim_domain_over`]): a CuTe side
//! of top-level rank >= 2 against an Axe side has one only when the rule names it (`over`);
//! over the CuTe side it is that side's top-level shape: its leaf digits are the coordinate,
//! the CuTe side reads them colexicographically and the Axe side reads the row-major flat
//! index of the same N-D coordinate. Otherwise both sides read one flat index, each in its
//! own order (two CuTe sides: colexicographic; two Axe sides, a rank-1 CuTe side, or a rule
//! over the Axe side: `[n]`), which is exact.
//!
//! Axis parameters are enumerated (one query per assignment, at most
//! [`MAX_AXIS_ASSIGNMENTS`]); axis names must be ones the axis registry leaves distinct (a
//! renaming), so comparing per name is comparing the normalized points. Every literal's
//! reading is checked against `layout`'s own parser at a probe instance; a literal read
//! differently is outside the fragment. A model is re-evaluated concretely before it is
//! reported; `unsat` is followed by the concrete re-check of [`super::crosscheck`].

use std::collections::{BTreeMap, BTreeSet};

use sha2::{Digest, Sha256};
use z3::ast::{Bool, BV};

use layout::{Layout, Point};

use super::crosscheck;
use super::eval::{self, Assignment, Bound};
use super::merged_form::merged_form;
use super::prove::{
    check_instance, claim_domain_over, conditions_are_the_box, int_box, refutation_at, Instance,
    Options, RuleReport, Verdict,
};
use super::syntax::{CallArg, Cond, IntExpr, Over, Piece, Rule, Sort, Term};
use crate::smt::{canonical_smt2, check, limited_solver, z3_version, Verdict as Z3};

/// The most axis-parameter assignments z3 is asked about (one query each).
pub const MAX_AXIS_ASSIGNMENTS: usize = 64;

/// A literal's strided structure.
#[derive(Clone, Debug)]
struct SymLayout {
    /// CuTe (colexicographic) or Axe (row-major).
    colex: bool,
    /// `(extent, stride, axis)` per leaf, in written order.
    iters: Vec<(IntExpr, IntExpr, String)>,
    /// The top-level mode of each leaf (CuTe; Axe: all 0).
    mode_of: Vec<usize>,
    /// Number of top-level modes (Axe: 1).
    top_rank: usize,
    /// Axe offsets `(value, axis)`.
    offsets: Vec<(IntExpr, String)>,
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Expr(IntExpr),
    Ident(String),
    Punct(char),
}

/// Whether z3 can take the rule: why not, if not.
fn in_fragment(rule: &Rule) -> Result<(), String> {
    if !matches!(rule.lhs, Term::Lit { .. }) || !matches!(rule.rhs, Term::Lit { .. }) {
        return Err("a side applies an operator (z3 takes literal-vs-literal rules)".into());
    }
    if rule.relation != super::syntax::Relation::SameMap {
        return Err("`===` compares printed forms, which z3 does not encode".into());
    }
    if rule.params.iter().any(|p| p.sort.is_layout()) {
        return Err("a layout parameter (z3 takes int and axis parameters)".into());
    }
    fn pure(e: &IntExpr) -> bool {
        match e {
            IntExpr::Num(_) | IntExpr::Param(_) => true,
            IntExpr::Neg(x) => pure(x),
            IntExpr::Bin(_, x, y) => pure(x) && pure(y),
            IntExpr::Call(f, a) => f == "pow2" && matches!(a.as_ref(), CallArg::Int(x) if pure(x)),
        }
    }
    fn cond_pure(c: &Cond) -> bool {
        match c {
            Cond::Cmp(es, _) => es.iter().all(pure),
            Cond::And(x, y) | Cond::Or(x, y) => cond_pure(x) && cond_pure(y),
            Cond::Not(x) => cond_pure(x),
            Cond::Defined(_) => false,
        }
    }
    if !rule.conds.iter().all(cond_pure) {
        return Err("a condition uses size/cosize/rank/defined".into());
    }
    Ok(())
}

fn tokens(pieces: &[Piece], axes: &Assignment) -> Option<Vec<Tok>> {
    let mut out = Vec::new();
    for p in pieces {
        match p {
            Piece::Int(e) => out.push(Tok::Expr(e.clone())),
            Piece::Axis(n) => match axes.get(n) {
                Some(Bound::Axis(a)) => out.push(Tok::Ident(a.clone())),
                _ => return None,
            },
            Piece::Text(t) => {
                let mut chars = t.char_indices().peekable();
                while let Some((i, c)) = chars.next() {
                    if c.is_whitespace() {
                        continue;
                    }
                    if c.is_ascii_alphabetic() || c == '_' {
                        let mut end = i + c.len_utf8();
                        while let Some(&(j, d)) = chars.peek() {
                            if d.is_ascii_alphanumeric() || d == '_' {
                                end = j + d.len_utf8();
                                chars.next();
                            } else {
                                break;
                            }
                        }
                        out.push(Tok::Ident(t[i..end].to_string()));
                    } else if c.is_ascii_digit() {
                        return None;
                    } else {
                        out.push(Tok::Punct(c));
                    }
                }
            }
        }
    }
    Some(out)
}

struct TokParser {
    toks: Vec<Tok>,
    pos: usize,
}

/// Deepest CuTe nesting read (the notation's own parser refuses deeper tuples).
const MAX_DEPTH: usize = 64;

impl TokParser {
    fn eat(&mut self, c: char) -> bool {
        if self.toks.get(self.pos) == Some(&Tok::Punct(c)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expr(&mut self) -> Option<IntExpr> {
        match self.toks.get(self.pos) {
            Some(Tok::Expr(e)) => {
                self.pos += 1;
                Some(e.clone())
            }
            _ => None,
        }
    }

    fn ident(&mut self) -> Option<String> {
        match self.toks.get(self.pos) {
            Some(Tok::Ident(e)) => {
                self.pos += 1;
                Some(e.clone())
            }
            _ => None,
        }
    }

    /// An item with an optional `@axis` (None: no `@`).
    fn term(&mut self) -> Option<(IntExpr, Option<String>)> {
        let e = self.expr()?;
        let axis = if self.eat('@') {
            Some(self.ident()?)
        } else {
            None
        };
        Some((e, axis))
    }

    fn flat_tuple(&mut self) -> Option<Vec<(IntExpr, Option<String>)>> {
        if self.eat('(') {
            let mut v = vec![self.term()?];
            while self.eat(',') {
                v.push(self.term()?);
            }
            self.eat(')').then_some(v)
        } else {
            Some(vec![self.term()?])
        }
    }

    /// A nested CuTe tuple: its leaves (with their top-level mode) and its bracket structure.
    fn nested(
        &mut self,
        depth: usize,
        mode: &mut usize,
        leaves: &mut Vec<(IntExpr, usize)>,
        shape: &mut String,
    ) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        if self.eat('(') {
            shape.push('(');
            self.nested(depth + 1, mode, leaves, shape)?;
            while self.eat(',') {
                shape.push(',');
                if depth == 0 {
                    *mode += 1;
                }
                self.nested(depth + 1, mode, leaves, shape)?;
            }
            shape.push(')');
            self.eat(')').then_some(())
        } else {
            leaves.push((self.expr()?, *mode));
            shape.push('x');
            Some(())
        }
    }

    fn done(&self) -> bool {
        self.pos == self.toks.len()
    }
}

fn sym_layout(toks: Vec<Tok>) -> Option<SymLayout> {
    let mut p = TokParser { toks, pos: 0 };
    if p.toks.first() == Some(&Tok::Ident("S".into())) {
        p.pos = 1;
        if !p.eat('[') {
            return None;
        }
        let extents = p.flat_tuple()?;
        if !p.eat(':') {
            return None;
        }
        let strides = p.flat_tuple()?;
        if !p.eat(']') || extents.len() != strides.len() || extents.iter().any(|e| e.1.is_some()) {
            return None;
        }
        let iters: Vec<_> = extents
            .into_iter()
            .zip(strides)
            .map(|((e, _), (s, a))| (e, s, a.unwrap_or_else(|| "m".into())))
            .collect();
        let mut offsets = Vec::new();
        while p.eat('+') {
            let (e, a) = p.term()?;
            offsets.push((e, a.unwrap_or_else(|| "m".into())));
        }
        let n = iters.len();
        return p.done().then_some(SymLayout {
            colex: false,
            iters,
            mode_of: vec![0; n],
            top_rank: 1,
            offsets,
        });
    }
    let (mut shape, mut stride) = (Vec::new(), Vec::new());
    let (mut s1, mut s2) = (String::new(), String::new());
    let (mut m1, mut m2) = (0, 0);
    p.nested(0, &mut m1, &mut shape, &mut s1)?;
    if !p.eat(':') {
        return None;
    }
    p.nested(0, &mut m2, &mut stride, &mut s2)?;
    (p.done() && s1 == s2).then(|| SymLayout {
        colex: true,
        mode_of: shape.iter().map(|(_, m)| *m).collect(),
        top_rank: m1 + 1,
        iters: shape
            .into_iter()
            .zip(stride)
            .map(|((e, _), (s, _))| (e, s, "m".to_string()))
            .collect(),
        offsets: Vec::new(),
    })
}

/// Whether `layout`'s parser reads the literal as `l` says, at one of a few probe
/// assignments where it is defined (a literal that never parses there is not taken).
fn reads_as_parsed(pieces: &[Piece], l: &SymLayout, rule: &Rule, axes: &Assignment) -> bool {
    let ints: Vec<&str> = rule
        .params
        .iter()
        .filter(|p| p.sort == Sort::Int)
        .map(|p| p.name.as_str())
        .collect();
    let probes: [&dyn Fn(usize) -> i64; 4] = [
        &|_| 1,
        &|_| 2,
        &|i| [2, 3, 5, 7, 11, 13, 17, 19][i % 8],
        &|i| [3, 2, 1, 4, 5, 3, 2, 1][i % 8],
    ];
    for probe in probes {
        let mut a = axes.clone();
        for (i, n) in ints.iter().enumerate() {
            a.insert((*n).to_string(), Bound::Int(probe(i)));
        }
        let Ok(text) = eval::fill(pieces, &a) else {
            continue;
        };
        let parsed = match Layout::parse(&text, None) {
            Ok(p) => p,
            Err(layout::LayoutError::Parse(e))
                if e.expected.starts_with("an offset on a new axis") =>
            {
                // Two offsets on one axis: the encoding makes this side undefined too.
                let names: BTreeSet<&str> = l.offsets.iter().map(|o| o.1.as_str()).collect();
                return names.len() != l.offsets.len();
            }
            Err(_) => continue,
        };
        let val = |e: &IntExpr| eval::int(e, &a).ok();
        return match parsed {
            Layout::Cute(c) if l.colex => {
                let want: Option<Vec<(i64, i64)>> = l
                    .iters
                    .iter()
                    .map(|(e, s, _)| Some((val(e)?, val(s)?)))
                    .collect();
                let per_mode: Vec<usize> = (0..l.top_rank)
                    .map(|m| l.mode_of.iter().filter(|&&x| x == m).count())
                    .collect();
                let got_per_mode: Vec<usize> =
                    c.modes().iter().map(|m| m.flat_modes().len()).collect();
                want.as_ref() == Some(&c.flat_modes()) && per_mode == got_per_mode
            }
            Layout::Axe(x) if !l.colex => {
                let want: Option<Vec<(i64, i64, String)>> = l
                    .iters
                    .iter()
                    .map(|(e, s, a)| Some((val(e)?, val(s)?, a.clone())))
                    .collect();
                let got: Vec<(i64, i64, String)> = x
                    .shard()
                    .iter()
                    .map(|i| (i.extent, i.stride, i.axis.as_str().to_string()))
                    .collect();
                let want_off: Option<BTreeMap<String, i64>> = l
                    .offsets
                    .iter()
                    .map(|(e, a)| Some((a.clone(), val(e)?)))
                    .filter(|o| o.as_ref().is_none_or(|(_, v)| *v != 0))
                    .collect();
                let got_off: BTreeMap<String, i64> = x
                    .offset()
                    .iter()
                    .map(|(a, v)| (a.as_str().to_string(), *v))
                    .collect();
                x.replica().is_empty()
                    && want.as_ref() == Some(&got)
                    && want_off.as_ref() == Some(&got_off)
            }
            _ => false,
        };
    }
    false
}

/// Whether the registry maps these axis names one-to-one onto distinct normalized axes with
/// coefficient 1 (so per-name comparison is comparison of normalized points).
fn axes_are_a_renaming(names: &BTreeSet<String>) -> bool {
    let mut targets = BTreeSet::new();
    for n in names {
        let Ok(axis) = layout::Axis::new(n) else {
            return false;
        };
        let p: Point = [(axis, 1)].into();
        let Ok(q) = layout::relation::normalize(&p) else {
            return false;
        };
        let mut it = q.into_iter();
        match (it.next(), it.next()) {
            (Some((t, 1)), None) => {
                if !targets.insert(t) {
                    return false;
                }
            }
            _ => return false,
        }
    }
    true
}

type Iv = (i128, i128);

// Overflow guards, each exact by its definition: the operation on sign extensions wide
// enough to hold every result, which must equal the sign extension of its low `w` bits.
// z3's own predicates are not used: z3 4.8.12's `bvsmul_noovfl` reads its operands as
// unsigned (Z3Prover/z3#4726; `(-1) * (-1)` "overflows" at 16 bits), which made
// definedness false and the coordinate lemmas unsatisfiable where the product was fine.

/// Whether the `w + extra`-bit `wide` is the sign extension of its low `w` bits.
fn low_bits_hold(wide: &BV, w: u32, extra: u32) -> Bool {
    wide.extract(w - 1, 0).sign_ext(extra).eq(wide)
}

/// `x + y` (signed, `w` bits) without overflow.
fn add_fits(x: &BV, y: &BV) -> Bool {
    let w = x.get_size();
    low_bits_hold(&x.sign_ext(1).bvadd(y.sign_ext(1)), w, 1)
}

/// `x - y` (signed) without overflow.
fn sub_fits(x: &BV, y: &BV) -> Bool {
    let w = x.get_size();
    low_bits_hold(&x.sign_ext(1).bvsub(y.sign_ext(1)), w, 1)
}

/// `x * y` (signed) without overflow: the `2w`-bit product of the sign extensions is exact.
fn mul_fits(x: &BV, y: &BV) -> Bool {
    let w = x.get_size();
    low_bits_hold(&x.sign_ext(w).bvmul(y.sign_ext(w)), w, w)
}

/// Whether `x` is its width's most negative value.
fn is_min(x: &BV) -> Bool {
    let w = x.get_size();
    x.eq(BV::from_i64(i64::MIN, 64).extract(63, 64 - w))
}

/// `-x` without overflow: `x` is not the most negative value.
fn neg_fits(x: &BV) -> Bool {
    is_min(x).not()
}

/// `x / y` for a nonzero `y` without overflow: not the most negative value over `-1`.
fn sdiv_fits(x: &BV, y: &BV) -> Bool {
    let w = x.get_size();
    Bool::and(&[is_min(x), y.eq(BV::from_i64(-1, w))]).not()
}

fn iv_mul(a: Iv, b: Iv) -> Iv {
    let c = [
        a.0.saturating_mul(b.0),
        a.0.saturating_mul(b.1),
        a.1.saturating_mul(b.0),
        a.1.saturating_mul(b.1),
    ];
    (
        *c.iter().min().expect("four"),
        *c.iter().max().expect("four"),
    )
}

/// An integer of the encoding: its bit-vector, whether the concrete semantics computes it
/// without error, and an interval holding its exact value for every assignment in the box.
#[derive(Clone)]
struct Val {
    bv: BV,
    ok: Bool,
    iv: Iv,
}

struct Enc {
    width: u32,
    params: BTreeMap<String, Val>,
    max_abs: i128,
    fresh: usize,
    /// No-overflow facts of the coordinate arithmetic: true at every coordinate of a defined
    /// instance (the constructors bounded every value), stated to help the solver.
    lemmas: Vec<Bool>,
}

impl Enc {
    fn note(&mut self, v: Iv) -> Iv {
        self.max_abs = self
            .max_abs
            .max(v.0.saturating_abs())
            .max(v.1.saturating_abs());
        v
    }

    /// An overflow guard at this width: `true` when the result's interval (which holds its
    /// exact value at every assignment of the box) lies in the width's signed range, so no
    /// overflow can happen; otherwise the exact guard `exact` builds.
    fn guard(&self, result: Iv, exact: impl FnOnce() -> Bool) -> Bool {
        let half = 1i128 << (self.width - 1);
        if -half <= result.0 && result.1 < half {
            Bool::from_bool(true)
        } else {
            exact()
        }
    }

    fn kbv(&self, v: i64) -> BV {
        BV::from_i64(v, self.width)
    }

    fn k(&mut self, v: i64) -> Val {
        let iv = self.note((v as i128, v as i128));
        Val {
            bv: self.kbv(v),
            ok: Bool::from_bool(true),
            iv,
        }
    }

    fn and_ok(x: &Val, y: &Val, more: &[Bool]) -> Bool {
        let mut v = vec![x.ok.clone(), y.ok.clone()];
        v.extend_from_slice(more);
        Bool::and(&v)
    }

    fn add(&mut self, x: &Val, y: &Val) -> Val {
        let iv = self.note((x.iv.0.saturating_add(y.iv.0), x.iv.1.saturating_add(y.iv.1)));
        let fits = self.guard(iv, || add_fits(&x.bv, &y.bv));
        let ok = Self::and_ok(x, y, &[fits]);
        Val {
            bv: x.bv.bvadd(&y.bv),
            ok,
            iv,
        }
    }

    fn sub(&mut self, x: &Val, y: &Val) -> Val {
        let iv = self.note((x.iv.0.saturating_sub(y.iv.1), x.iv.1.saturating_sub(y.iv.0)));
        let fits = self.guard(iv, || sub_fits(&x.bv, &y.bv));
        let ok = Self::and_ok(x, y, &[fits]);
        Val {
            bv: x.bv.bvsub(&y.bv),
            ok,
            iv,
        }
    }

    fn mul(&mut self, x: &Val, y: &Val) -> Val {
        let iv = self.note(iv_mul(x.iv, y.iv));
        let fits = self.guard(iv, || mul_fits(&x.bv, &y.bv));
        let ok = Self::and_ok(x, y, &[fits]);
        Val {
            bv: x.bv.bvmul(&y.bv),
            ok,
            iv,
        }
    }

    fn neg(&mut self, x: &Val) -> Val {
        let iv = self.note((x.iv.1.saturating_neg(), x.iv.0.saturating_neg()));
        let fits = self.guard(iv, || neg_fits(&x.bv));
        Val {
            bv: x.bv.bvneg(),
            ok: Bool::and(&[x.ok.clone(), fits]),
            iv,
        }
    }

    /// `|x|` (undefined at i64::MIN, as `checked_abs`).
    fn abs(&mut self, x: &Val) -> Val {
        let m = x.iv.0.saturating_abs().max(x.iv.1.saturating_abs());
        let lo = if x.iv.0 <= 0 && x.iv.1 >= 0 {
            0
        } else {
            x.iv.0.saturating_abs().min(x.iv.1.saturating_abs())
        };
        let iv = self.note((lo, m));
        let negative = x.bv.bvslt(self.kbv(0));
        let negated = (x.iv.1.saturating_neg(), x.iv.0.saturating_neg());
        let fits = self.guard(negated, || neg_fits(&x.bv));
        Val {
            bv: negative.ite(&x.bv.bvneg(), &x.bv),
            ok: Bool::and(&[x.ok.clone(), fits]),
            iv,
        }
    }

    fn int(&mut self, e: &IntExpr) -> Val {
        match e {
            IntExpr::Num(v) => self.k(*v),
            IntExpr::Param(p) => self.params[p].clone(),
            IntExpr::Neg(x) => {
                let x = self.int(x);
                self.neg(&x)
            }
            IntExpr::Bin(op, x, y) => {
                let (x, y) = (self.int(x), self.int(y));
                match op {
                    '+' => self.add(&x, &y),
                    '-' => self.sub(&x, &y),
                    '*' => self.mul(&x, &y),
                    _ => {
                        // checked_div / checked_rem: None for a zero divisor and MIN / -1.
                        let m = x.iv.0.saturating_abs().max(x.iv.1.saturating_abs());
                        let iv = self.note((-m, m));
                        let ok = Self::and_ok(
                            &x,
                            &y,
                            &[
                                y.bv.eq(self.kbv(0)).not(),
                                self.guard(iv, || sdiv_fits(&x.bv, &y.bv)),
                            ],
                        );
                        let bv = if *op == '/' {
                            x.bv.bvsdiv(&y.bv)
                        } else {
                            x.bv.bvsrem(&y.bv)
                        };
                        Val { bv, ok, iv }
                    }
                }
            }
            IntExpr::Call(_, a) => {
                let CallArg::Int(x) = a.as_ref() else {
                    unreachable!("in_fragment admits pow2 only")
                };
                let x = self.int(x);
                let top = x.iv.1.clamp(0, 62) as u32;
                let iv = self.note((1, 1i128 << top));
                let ok = Bool::and(&[
                    x.ok.clone(),
                    x.bv.bvsge(self.kbv(0)),
                    x.bv.bvsle(self.kbv(62)),
                ]);
                Val {
                    bv: self.kbv(1).bvshl(&x.bv),
                    ok,
                    iv,
                }
            }
        }
    }

    /// A condition with `eval::cond`'s semantics: a comparison whose expressions do not all
    /// evaluate is false.
    fn cond(&mut self, c: &Cond) -> Bool {
        match c {
            Cond::Cmp(es, ops) => {
                let vals: Vec<Val> = es.iter().map(|e| self.int(e)).collect();
                let mut parts: Vec<Bool> = vals.iter().map(|v| v.ok.clone()).collect();
                for (op, w) in ops.iter().zip(vals.windows(2)) {
                    use super::syntax::CmpOp::*;
                    let (a, b) = (&w[0].bv, &w[1].bv);
                    parts.push(match op {
                        Lt => a.bvslt(b),
                        Le => a.bvsle(b),
                        Gt => a.bvsgt(b),
                        Ge => a.bvsge(b),
                        Eq => a.eq(b),
                        Ne => a.eq(b).not(),
                    });
                }
                Bool::and(&parts)
            }
            Cond::And(x, y) => {
                let (x, y) = (self.cond(x), self.cond(y));
                Bool::and(&[x, y])
            }
            Cond::Or(x, y) => {
                let (x, y) = (self.cond(x), self.cond(y));
                Bool::or(&[x, y])
            }
            Cond::Not(x) => self.cond(x).not(),
            Cond::Defined(_) => unreachable!("in_fragment excludes defined()"),
        }
    }

    /// A fresh variable in `0..=hi` (interval only; the range is asserted by the caller).
    fn var(&mut self, prefix: &str, iv: Iv) -> Val {
        self.fresh += 1;
        let iv = self.note(iv);
        Val {
            bv: BV::new_const(format!("{prefix}{}", self.fresh), self.width),
            ok: Bool::from_bool(true),
            iv,
        }
    }
}

/// A side's encoding: definedness, size, and its leaves' extents and strides.
struct SideEnc {
    defined: Bool,
    size: Val,
    extents: Vec<Val>,
    strides: Vec<Val>,
    offsets: Vec<(Val, String)>,
}

/// Encodes one side and its definedness (see the module doc).
fn side(enc: &mut Enc, l: &SymLayout) -> SideEnc {
    let extents: Vec<Val> = l.iters.iter().map(|(e, _, _)| enc.int(e)).collect();
    let strides: Vec<Val> = l.iters.iter().map(|(_, s, _)| enc.int(s)).collect();
    let offsets: Vec<(Val, String)> = l
        .offsets
        .iter()
        .map(|(e, a)| (enc.int(e), a.clone()))
        .collect();
    let mut ok: Vec<Bool> = extents
        .iter()
        .chain(&strides)
        .chain(offsets.iter().map(|o| &o.0))
        .map(|v| v.ok.clone())
        .collect();
    let one = enc.k(1);
    for e in &extents {
        ok.push(e.bv.bvsge(enc.kbv(1)));
    }
    let mut size = one.clone();
    for e in &extents {
        size = enc.mul(&size, e);
    }
    ok.push(size.ok.clone());
    let span_term = |enc: &mut Enc, e: &Val, s: &Val| {
        let e1 = enc.sub(e, &one);
        let a = enc.abs(s);
        enc.mul(&e1, &a)
    };
    if l.colex {
        let mut reach = enc.k(0);
        for (e, s) in extents.iter().zip(&strides) {
            let t = span_term(enc, e, s);
            reach = enc.add(&reach, &t);
        }
        ok.push(reach.ok.clone());
    } else {
        let names: BTreeSet<&str> = l.offsets.iter().map(|o| o.1.as_str()).collect();
        if names.len() != l.offsets.len() {
            ok.push(Bool::from_bool(false));
        }
        let axes: BTreeSet<&str> = l
            .iters
            .iter()
            .map(|i| i.2.as_str())
            .chain(names.iter().copied())
            .collect();
        for axis in axes {
            let mut reach = one.clone();
            for (i, (e, s)) in extents.iter().zip(&strides).enumerate() {
                if l.iters[i].2 == axis {
                    let t = span_term(enc, e, s);
                    reach = enc.add(&reach, &t);
                }
            }
            if let Some((o, _)) = offsets.iter().find(|o| o.1 == axis) {
                let a = enc.abs(o);
                reach = enc.add(&reach, &a);
            }
            ok.push(reach.ok.clone());
        }
    }
    SideEnc {
        defined: Bool::and(&ok),
        size,
        extents,
        strides,
        offsets,
    }
}

/// Plain arithmetic for coordinates of a defined instance (exact there: the constructors
/// bounded every value), with intervals for the width.
fn padd(enc: &mut Enc, x: &Val, y: &Val) -> Val {
    let iv = enc.note((x.iv.0.saturating_add(y.iv.0), x.iv.1.saturating_add(y.iv.1)));
    let fits = enc.guard(iv, || add_fits(&x.bv, &y.bv));
    enc.lemmas.push(fits);
    Val {
        bv: x.bv.bvadd(&y.bv),
        ok: Bool::from_bool(true),
        iv,
    }
}

fn pmul(enc: &mut Enc, x: &Val, y: &Val) -> Val {
    let iv = enc.note(iv_mul(x.iv, y.iv));
    let fits = enc.guard(iv, || mul_fits(&x.bv, &y.bv));
    enc.lemmas.push(fits);
    Val {
        bv: x.bv.bvmul(&y.bv),
        ok: Bool::from_bool(true),
        iv,
    }
}

/// A side's leaves from the fastest-varying digit on: colexicographic (the first leaf fastest)
/// or row-major (the last fastest).
fn fastest_first(n: usize, colex: bool) -> Vec<usize> {
    if colex {
        (0..n).collect()
    } else {
        (0..n).rev().collect()
    }
}

/// Fresh digits of a side in its own order: `x = sum d_i * P_i`, `0 <= d_i < e_i`.
fn digits_of(enc: &mut Enc, s: &SideEnc, colex: bool, x: &Val) -> (Vec<Val>, Vec<Bool>) {
    let n = s.extents.len();
    let order = fastest_first(n, colex);
    let mut digits: Vec<Option<Val>> = vec![None; n];
    let mut cons = Vec::new();
    let mut place = enc.k(1);
    let mut index = enc.k(0);
    for i in order {
        let e = s.extents[i].clone();
        let d = enc.var("d", (0, (e.iv.1 - 1).max(0)));
        cons.push(d.bv.bvsge(enc.kbv(0)));
        cons.push(d.bv.bvslt(&e.bv));
        let at = pmul(enc, &d, &place);
        index = padd(enc, &index, &at);
        place = pmul(enc, &place, &e);
        digits[i] = Some(d);
    }
    cons.push(index.bv.eq(&x.bv));
    (digits.into_iter().map(|d| d.expect("set")).collect(), cons)
}

/// Each axis's value at the digits: offset + sum digit * stride.
fn points(
    enc: &mut Enc,
    l: &SymLayout,
    s: &SideEnc,
    digits: &[Val],
    names: &BTreeSet<String>,
) -> Vec<BV> {
    names
        .iter()
        .map(|name| {
            let mut v = enc.k(0);
            for (o, a) in &s.offsets {
                if a == name {
                    v = padd(enc, &v, o);
                }
            }
            for (i, d) in digits.iter().enumerate() {
                if &l.iters[i].2 == name {
                    let t = pmul(enc, d, &s.strides[i]);
                    v = padd(enc, &v, &t);
                }
            }
            v.bv
        })
        .collect()
}

/// The most points of a claim domain whose coordinates are enumerated (one case each) rather
/// than encoded as symbolic digits.
const MAX_ENUMERATED_POINTS: i64 = 256;

/// A side's extents when every one is a literal number of at least 1.
fn literal_extents(l: &SymLayout) -> Option<Vec<i64>> {
    l.iters
        .iter()
        .map(|(e, _, _)| match e {
            IntExpr::Num(v) if *v >= 1 => Some(*v),
            _ => None,
        })
        .collect()
}

/// Both sides' literal extents and their common size, when both sides have only literal
/// extents, the same size, and at most [`MAX_ENUMERATED_POINTS`] points.
fn enumerable(l: &SymLayout, r: &SymLayout) -> Option<(Vec<i64>, Vec<i64>, i64)> {
    let (el, er) = (literal_extents(l)?, literal_extents(r)?);
    let size = |e: &[i64]| e.iter().try_fold(1i64, |a, &x| a.checked_mul(x));
    let n = size(&el)?;
    (size(&er)? == n && n <= MAX_ENUMERATED_POINTS).then_some((el, er, n))
}

/// The digits of flat index `x` in a side's own order, as [`digits_of`] constrains them:
/// colexicographic (the first extent fastest) or row-major (the last fastest).
fn literal_digits(extents: &[i64], colex: bool, mut x: i64) -> Vec<i64> {
    let n = extents.len();
    let mut digits = vec![0; n];
    let order = fastest_first(n, colex);
    for i in order {
        digits[i] = x % extents[i];
        x /= extents[i];
    }
    digits
}

/// Whether the two sides, at their digits, map to different points on some axis.
fn differ(
    enc: &mut Enc,
    (l, sl, dl): (&SymLayout, &SideEnc, &[Val]),
    (r, sr, dr): (&SymLayout, &SideEnc, &[Val]),
    names: &BTreeSet<String>,
) -> Bool {
    let vl = points(enc, l, sl, dl, names);
    let vr = points(enc, r, sr, dr, names);
    let differ: Vec<Bool> = vl.iter().zip(&vr).map(|(a, b)| a.eq(b).not()).collect();
    Bool::or(&differ)
}

/// Whether both sides have the same merged form ([`super::merged_form`]): then, wherever
/// both are defined, they map every flat index to the same point (the caller checks that the
/// claim domain is the flat index).
fn same_merged_form(l: &SymLayout, r: &SymLayout) -> bool {
    let form = |x: &SymLayout| merged_form(&x.iters, x.colex, &x.offsets);
    matches!((form(l), form(r)), (Some(a), Some(b)) if a == b)
}

/// How the model's coordinate is read back.
enum Coord {
    /// One flat index, in the order both sides share.
    Flat(BV),
    /// The CuTe side's top-level coordinate, one value per mode.
    Modes(Vec<BV>),
}

/// One query: the solver, the parameter variables, and the coordinate.
struct Query {
    solver: z3::Solver,
    params: BTreeMap<String, BV>,
    coord: Coord,
    max_abs: i128,
}

/// One of the three ways an instance can be bad.
#[derive(Clone, Copy, Debug)]
enum Part {
    /// Exactly one side is defined.
    Definedness,
    /// Both are, and their sizes differ.
    Size,
    /// Both are, sizes agree, and some coordinate maps to different points.
    Points,
}

#[allow(clippy::too_many_arguments)]
fn build(
    rule: &Rule,
    l: &SymLayout,
    r: &SymLayout,
    nd: bool,
    ibox: &BTreeMap<String, (i64, i64)>,
    width: u32,
    rlimit: u32,
    part: Part,
) -> Query {
    let mut enc = Enc {
        width,
        params: BTreeMap::new(),
        max_abs: 0,
        fresh: 0,
        lemmas: Vec::new(),
    };
    let s = limited_solver(rlimit);
    for p in rule.params.iter().filter(|p| p.sort == Sort::Int) {
        let (lo, hi) = ibox[&p.name];
        let iv = enc.note((lo as i128, hi as i128));
        let bv = BV::new_const(p.name.as_str(), width);
        s.assert(bv.bvsge(BV::from_i64(lo, width)));
        s.assert(bv.bvsle(BV::from_i64(hi, width)));
        enc.params.insert(
            p.name.clone(),
            Val {
                bv,
                ok: Bool::from_bool(true),
                iv,
            },
        );
    }
    for c in &rule.conds {
        let b = enc.cond(c);
        s.assert(&b);
    }
    let (sl, sr) = (side(&mut enc, l), side(&mut enc, r));
    let names: BTreeSet<String> = l
        .iters
        .iter()
        .map(|i| i.2.clone())
        .chain(l.offsets.iter().map(|o| o.1.clone()))
        .chain(r.iters.iter().map(|i| i.2.clone()))
        .chain(r.offsets.iter().map(|o| o.1.clone()))
        .collect();
    // The claim domain: with `nd`, the top-level shape of the CuTe side (of rank >= 2, against
    // an Axe side); otherwise one flat index, each side read in its own order.
    let cute_top = match (nd, l.colex, r.colex) {
        (true, true, false) => Some(true),
        (true, false, true) => Some(false),
        _ => None,
    };
    let enumerated = match cute_top {
        None => enumerable(l, r),
        Some(_) => None,
    };
    let (dl, dr, mut cons, coord) = match (cute_top, enumerated.clone()) {
        // Every extent a literal and few points: one case per flat index, each with literal
        // digits, so no digit is a variable and each point is linear in the parameters (a
        // symbolic digit times a symbolic stride is a product of two variables, which is
        // what made such queries slow).
        (None, Some((el, er, n))) => {
            let x = enc.var("x", (0, (n - 1).into()));
            let mut cons = vec![x.bv.bvsge(enc.kbv(0)), x.bv.bvslt(&sl.size.bv)];
            let mut cases = Vec::new();
            for k in 0..n {
                let dl: Vec<Val> = literal_digits(&el, l.colex, k)
                    .into_iter()
                    .map(|d| enc.k(d))
                    .collect();
                let dr: Vec<Val> = literal_digits(&er, r.colex, k)
                    .into_iter()
                    .map(|d| enc.k(d))
                    .collect();
                let differ = differ(&mut enc, (l, &sl, &dl), (r, &sr, &dr), &names);
                cases.push(Bool::and(&[x.bv.eq(enc.kbv(k)), differ]));
            }
            cons.push(Bool::or(&cases));
            (Vec::new(), Vec::new(), cons, Coord::Flat(x.bv))
        }
        (None, None) => {
            let hi = sl.size.iv.1.max(sr.size.iv.1);
            let x = enc.var("x", (0, (hi - 1).max(0)));
            let mut cons = vec![x.bv.bvsge(enc.kbv(0)), x.bv.bvslt(&sl.size.bv)];
            let (dl, cl) = digits_of(&mut enc, &sl, l.colex, &x);
            let (dr, cr) = digits_of(&mut enc, &sr, r.colex, &x);
            cons.extend(cl);
            cons.extend(cr);
            (dl, dr, cons, Coord::Flat(x.bv))
        }
        (Some(left_is_cute), _) => {
            let (c, cs, a, as_) = if left_is_cute {
                (l, &sl, r, &sr)
            } else {
                (r, &sr, l, &sl)
            };
            let mut cons = Vec::new();
            let mut cd = Vec::new();
            for e in &cs.extents {
                let d = enc.var("d", (0, (e.iv.1 - 1).max(0)));
                cons.push(d.bv.bvsge(enc.kbv(0)));
                cons.push(d.bv.bvslt(&e.bv));
                cd.push(d);
            }
            // Mode coordinates (colexicographic within a mode) and mode sizes.
            let mut modes = Vec::new();
            let mut sizes = Vec::new();
            for m in 0..c.top_rank {
                let mut coord = enc.k(0);
                let mut place = enc.k(1);
                for (i, d) in cd.iter().enumerate() {
                    if c.mode_of[i] == m {
                        let t = pmul(&mut enc, d, &place);
                        coord = padd(&mut enc, &coord, &t);
                        place = pmul(&mut enc, &place, &cs.extents[i]);
                    }
                }
                modes.push(coord);
                sizes.push(place);
            }
            // The Axe side's row-major flat index of the same coordinate.
            let mut flat = enc.k(0);
            let mut place = enc.k(1);
            for m in (0..c.top_rank).rev() {
                let t = pmul(&mut enc, &modes[m], &place);
                flat = padd(&mut enc, &flat, &t);
                place = pmul(&mut enc, &place, &sizes[m]);
            }
            let (ad, acons) = digits_of(&mut enc, as_, a.colex, &flat);
            cons.extend(acons);
            let coord = Coord::Modes(modes.into_iter().map(|v| v.bv).collect());
            if left_is_cute {
                (cd, ad, cons, coord)
            } else {
                (ad, cd, cons, coord)
            }
        }
    };
    if enumerated.is_none() {
        let differ = differ(&mut enc, (l, &sl, &dl), (r, &sr, &dr), &names);
        cons.push(differ);
    }
    cons.append(&mut enc.lemmas);
    // "Some instance is bad" is the disjunction of the three parts; each is asked on its own
    // with top-level assertions (which the solver's equation solving can use).
    match part {
        Part::Definedness => s.assert(sl.defined.eq(&sr.defined).not()),
        Part::Size => {
            s.assert(&sl.defined);
            s.assert(&sr.defined);
            s.assert(sl.size.bv.eq(&sr.size.bv).not());
        }
        Part::Points => {
            s.assert(&sl.defined);
            s.assert(&sr.defined);
            s.assert(sl.size.bv.eq(&sr.size.bv));
            for c in &cons {
                s.assert(c);
            }
        }
    }
    Query {
        solver: s,
        params: enc
            .params
            .iter()
            .map(|(n, v)| (n.clone(), v.bv.clone()))
            .collect(),
        coord,
        max_abs: enc.max_abs,
    }
}

/// The narrowest width (a multiple of 8, at least 16, at most 64) holding every value with
/// two bits to spare; 64 when some value may not fit in i64 (the guards are then i64's own).
fn width_for(max_abs: i128) -> u32 {
    if max_abs >= 1i128 << 62 {
        return 64;
    }
    let bits = 128 - max_abs.leading_zeros() + 2;
    bits.div_ceil(8).clamp(2, 8) * 8
}

/// A model value, signed at the query's width.
fn signed(m: &z3::Model, v: &BV, width: u32) -> i64 {
    let raw = m.eval(v, true).and_then(|v| v.as_u64()).unwrap_or(0);
    if width < 64 && raw >> (width - 1) & 1 == 1 {
        raw as i64 - (1i64 << width)
    } else {
        raw as i64
    }
}

/// Every assignment of the axis parameters (None: more than [`MAX_AXIS_ASSIGNMENTS`]).
fn axis_assignments(rule: &Rule) -> Option<Vec<Assignment>> {
    let mut sets: Vec<Assignment> = vec![Assignment::new()];
    for p in &rule.params {
        if let Sort::Axis(names) = &p.sort {
            if sets.len().saturating_mul(names.len()) > MAX_AXIS_ASSIGNMENTS {
                return None;
            }
            sets = sets
                .into_iter()
                .flat_map(|a| {
                    names.iter().map(move |n| {
                        let mut a = a.clone();
                        a.insert(p.name.clone(), Bound::Axis(n.clone()));
                        a
                    })
                })
                .collect();
        }
    }
    Some(sets)
}

/// The model's coordinate in the concrete claim domain of `x` and `y`.
fn model_coord(
    m: &z3::Model,
    q: &Query,
    width: u32,
    x: &Layout,
    y: &Layout,
    over: Option<Over>,
) -> Option<Vec<i64>> {
    let shape = claim_domain_over(x, y, over).ok()?;
    match &q.coord {
        Coord::Modes(vs) => Some(vs.iter().map(|v| signed(m, v, width)).collect()),
        Coord::Flat(v) => {
            let i = signed(m, v, width);
            if shape.len() == 1 {
                Some(vec![i])
            } else {
                layout::shape::unflatten_col_major(&shape, i).ok()
            }
        }
    }
}

/// Proves `rule` with z3 (see the module doc), filling `report`. `exhaustive_failed` says why
/// the grid was not enumerated (its size, or a spent work budget); an UNKNOWN because the rule
/// is outside z3's fragment starts with it.
pub fn prove(
    rule: &Rule,
    order: &[String],
    grid: u128,
    exhaustive_failed: &str,
    opts: &Options,
    report: &mut RuleReport,
) {
    // In a fresh z3 context, so the models (and the counterexamples printed from them) do not
    // depend on the queries the process ran before.
    z3::with_z3_config(&z3::Config::new(), || {
        prove_in_context(rule, order, grid, exhaustive_failed, opts, report)
    })
}

fn prove_in_context(
    rule: &Rule,
    order: &[String],
    grid: u128,
    exhaustive_failed: &str,
    opts: &Options,
    report: &mut RuleReport,
) {
    let outside = |why: String| {
        Verdict::Unknown(format!(
            "{exhaustive_failed} and the rule is outside z3's strided fragment: {why}"
        ))
    };
    if let Err(why) = in_fragment(rule) {
        report.verdict = outside(why);
        return;
    }
    let (Term::Lit { pieces: lp, .. }, Term::Lit { pieces: rp, .. }) = (&rule.lhs, &rule.rhs)
    else {
        unreachable!("checked by in_fragment")
    };
    let Some(axis_sets) = axis_assignments(rule) else {
        report.verdict = outside(format!(
            "more than {MAX_AXIS_ASSIGNMENTS} assignments of the axis parameters"
        ));
        return;
    };
    let ibox = match int_box(rule) {
        Ok(b) => b,
        Err(why) => {
            report.verdict = Verdict::Unknown(why);
            return;
        }
    };
    let mut h = Sha256::new();
    let mut widths = BTreeSet::new();
    let mut queries = 0;
    let mut merged = false;
    for axes in &axis_sets {
        let (Some(l), Some(r)) = (
            tokens(lp, axes).and_then(sym_layout),
            tokens(rp, axes).and_then(sym_layout),
        ) else {
            report.verdict = outside("a side is not a strided Axe or CuTe literal".into());
            return;
        };
        if !reads_as_parsed(lp, &l, rule, axes) || !reads_as_parsed(rp, &r, rule, axes) {
            report.verdict = outside(
                "a literal does not parse as read at any probe instance (layout's parser disagrees)"
                    .into(),
            );
            return;
        }
        let names: BTreeSet<String> = l
            .iters
            .iter()
            .map(|i| i.2.clone())
            .chain(l.offsets.iter().map(|o| o.1.clone()))
            .chain(r.iters.iter().map(|i| i.2.clone()))
            .chain(r.offsets.iter().map(|o| o.1.clone()))
            .collect();
        if !axes_are_a_renaming(&names) {
            report.verdict = outside(format!(
                "axes {names:?} are related by the axis registry (aliases or thread relations)"
            ));
            return;
        }
        // The claim domain: a CuTe side of top-level rank >= 2 against an Axe side is
        // ambiguous unless the rule names a side (`over`); over the CuTe side it is its
        // top-level shape, over the Axe side the flat index.
        let cute_nd = |x: &SymLayout, y: &SymLayout| x.colex && !y.colex && x.top_rank >= 2;
        let nd = match rule.over {
            _ if !cute_nd(&l, &r) && !cute_nd(&r, &l) => false,
            None => {
                report.verdict = outside(
                    "a CuTe side of top-level rank >= 2 against an Axe side has no one domain \
                     (each reads an N-D coordinate in its own order): name it with `over lhs` \
                     or `over rhs`"
                        .into(),
                );
                return;
            }
            Some(Over::Lhs) => cute_nd(&l, &r),
            Some(Over::Rhs) => cute_nd(&r, &l),
        };
        let width =
            width_for(build(rule, &l, &r, nd, &ibox, 64, opts.rlimit, Part::Points).max_abs);
        widths.insert(width);
        for part in [Part::Definedness, Part::Size, Part::Points] {
            let q = build(rule, &l, &r, nd, &ibox, width, opts.rlimit, part);
            queries += 1;
            let query = canonical_smt2(&q.solver.to_smt2());
            h.update(query.as_bytes());
            report.smt_queries.push(query);
            match check(&q.solver) {
                Z3::Unsat => {}
                // z3 gives up on the products merging modes makes: where both sides have one
                // merged form, no flat index maps differently (see `merged_form`).
                Z3::Unknown(why)
                    if matches!(part, Part::Points) && !nd && same_merged_form(&l, &r) =>
                {
                    h.update(format!("points: one merged form (z3: {why})\n").as_bytes());
                    merged = true;
                }
                Z3::Unknown(why) => {
                    report.verdict = Verdict::Unknown(format!("z3: {why}"));
                    return;
                }
                Z3::Sat => {
                    let m = q.solver.get_model().expect("sat has a model");
                    let mut a = axes.clone();
                    for (n, v) in &q.params {
                        a.insert(n.clone(), Bound::Int(signed(&m, v, width)));
                    }
                    report.method = Some(format!("z3 {}", z3_version()));
                    let meets = rule.conds.iter().all(|c| eval::cond(c, &a));
                    let shown = eval::show_assignment(order, &a);
                    let concrete = match check_instance(rule, order, &a, opts) {
                        Instance::Differs(r) => Some(r),
                        _ => match (eval::term(&rule.lhs, &a), eval::term(&rule.rhs, &a)) {
                            (Ok(x), Ok(y)) => model_coord(&m, &q, width, &x, &y, rule.over)
                                .and_then(|c| refutation_at(shown.clone(), &x, &y, rule.over, &c)),
                            _ => None,
                        },
                    };
                    report.verdict = match concrete {
                        Some(r) if meets => Verdict::Refuted(r),
                        _ => Verdict::Unknown(format!(
                            "z3's model ({shown}) does not re-evaluate as a difference"
                        )),
                    };
                    return;
                }
            }
        }
    }
    report.method = Some(format!(
        "z3 {} QF_BV {}-bit, per-side definedness, {queries} queries{}",
        z3_version(),
        widths
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join("/"),
        if merged {
            ", points by the sides' one merged form where z3 gave up"
        } else {
            ""
        },
    ));
    report.instances = conditions_are_the_box(rule).then_some(grid);
    if !opts.cross_check {
        report.digest = format!("{:x}", h.finalize());
        report.verdict = Verdict::Proved;
        return;
    }
    let re = crosscheck::recheck(rule, order, &ibox, &axis_sets, opts);
    report.rechecked = re.boundary + re.random;
    report.rechecked_boundary = re.boundary;
    report.work = re.work;
    for line in &re.decided {
        h.update(line.as_bytes());
    }
    report.digest = format!("{:x}", h.finalize());
    report.verdict = if let Some(r) = re.refutation {
        report.method = Some(format!(
            "{}; z3 answered unsat but the concrete re-check refutes (an encoding error)",
            report.method.as_deref().unwrap_or("z3")
        ));
        Verdict::Refuted(r)
    } else if report.rechecked == 0 {
        Verdict::Unknown(format!(
            "z3 found no counterexample, but the concrete re-check decided none of the {} instances it tried{}: not proved",
            re.tried,
            re.undecided
                .as_deref()
                .map_or(String::new(), |w| format!(" (e.g. {w})"))
        ))
    } else {
        Verdict::Proved
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every overflow guard agrees with i64 arithmetic on every pair of 6-bit values, and on the
    /// boundary values of 16 and 64 bits, as the solver (not its rewriter) reads them.
    #[test]
    fn overflow_guards_are_exact() {
        type Guard = (
            &'static str,
            fn(&BV, &BV) -> Bool,
            fn(i64, i64) -> Option<i64>,
        );
        let guards: [Guard; 5] = [
            ("add", add_fits, |a, b| a.checked_add(b)),
            ("sub", sub_fits, |a, b| a.checked_sub(b)),
            ("mul", mul_fits, |a, b| a.checked_mul(b)),
            ("neg", |x, _| neg_fits(x), |a, _| a.checked_neg()),
            ("sdiv", sdiv_fits, |a, b| a.checked_div(b)),
        ];
        let s = z3::Solver::new();
        let check = |w: u32, a: i64, b: i64| {
            let (lo, hi) = if w == 64 {
                (i64::MIN as i128, i64::MAX as i128)
            } else {
                (-(1i128 << (w - 1)), (1i128 << (w - 1)) - 1)
            };
            let (x, y) = (BV::new_const("x", w), BV::new_const("y", w));
            s.push();
            s.assert(x.eq(BV::from_i64(a, w)));
            s.assert(y.eq(BV::from_i64(b, w)));
            for (name, guard, exact) in &guards {
                if *name == "sdiv" && b == 0 {
                    continue;
                }
                let truth = match exact(a, b) {
                    Some(v) => (lo..=hi).contains(&(v as i128)),
                    // i64 overflow: outside every width's range.
                    None => false,
                };
                s.push();
                s.assert(guard(&x, &y));
                let sat = s.check() == z3::SatResult::Sat;
                s.pop(1);
                assert_eq!(sat, truth, "{name} {a} {b} at {w} bits");
            }
            s.pop(1);
        };
        for a in -32..32 {
            for b in -32..32 {
                check(6, a, b);
            }
        }
        for w in [16u32, 64] {
            let (min, max) = if w == 64 {
                (i64::MIN, i64::MAX)
            } else {
                (-(1i64 << (w - 1)), (1i64 << (w - 1)) - 1)
            };
            let edges = [
                min,
                min + 1,
                -256,
                -3,
                -2,
                -1,
                0,
                1,
                2,
                3,
                181,
                255,
                max - 1,
                max,
            ];
            for &a in &edges {
                for &b in &edges {
                    check(w, a, b);
                }
            }
        }
    }
}
