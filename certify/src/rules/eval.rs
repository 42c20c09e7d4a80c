//! Instances: a rule's parameters bound to values, its conditions decided and its terms
//! evaluated there with `layout`'s algebra. Integer arithmetic is checked; an overflow or a
//! division by zero makes the expression (and so a condition) fail, never wrap.
//!
//! The `*_costed` forms also add up the work units the operators they apply may spend
//! ([`super::ops::cost`]), for the prover's work budget.

use std::collections::BTreeMap;

use layout::{Layout, LayoutError};

use super::ops::{apply, cost, Value};
use super::syntax::{Arg, CallArg, Cond, IntExpr, Piece, Term};

/// The value of one parameter at an instance.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Bound {
    /// An integer.
    Int(i64),
    /// An axis name.
    Axis(String),
    /// A layout.
    Layout(Layout),
}

impl Bound {
    /// The value as rule text.
    pub fn text(&self) -> String {
        match self {
            Bound::Int(v) => v.to_string(),
            Bound::Axis(a) => a.clone(),
            Bound::Layout(l) => l.print(),
        }
    }
}

/// Parameter name -> value.
pub type Assignment = BTreeMap<String, Bound>;

/// Renders an assignment as `e1=2, s=-3, A=(2,2):(1,2)`, in the given parameter order.
pub fn show_assignment(order: &[String], a: &Assignment) -> String {
    order
        .iter()
        .filter_map(|n| a.get(n).map(|b| format!("{n}={}", b.text())))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Evaluates an integer expression.
pub fn int(e: &IntExpr, a: &Assignment) -> Result<i64, LayoutError> {
    int_costed(e, a, &mut 0)
}

/// [`int`], adding the operators' work units to `work`.
pub fn int_costed(e: &IntExpr, a: &Assignment, work: &mut u64) -> Result<i64, LayoutError> {
    let int = |e: &IntExpr, work: &mut u64| int_costed(e, a, work);
    let ovf = |op: &'static str| LayoutError::Overflow { op };
    Ok(match e {
        IntExpr::Num(v) => *v,
        IntExpr::Param(p) => match a.get(p) {
            Some(Bound::Int(v)) => *v,
            _ => {
                return Err(LayoutError::invalid(
                    "parameter",
                    format!("{p} has no integer value"),
                ))
            }
        },
        IntExpr::Neg(x) => int(x, work)?.checked_neg().ok_or_else(|| ovf("negation"))?,
        IntExpr::Bin(op, x, y) => {
            let (x, y) = (int(x, work)?, int(y, work)?);
            match op {
                '+' => x.checked_add(y).ok_or_else(|| ovf("addition"))?,
                '-' => x.checked_sub(y).ok_or_else(|| ovf("subtraction"))?,
                '*' => x.checked_mul(y).ok_or_else(|| ovf("multiplication"))?,
                // `checked_div` fails on a zero divisor and on `i64::MIN / -1`, whose
                // quotient 2^63 is past i64: only the first is "by zero".
                '/' => x.checked_div(y).ok_or_else(|| match y {
                    0 => ovf("division (by zero)"),
                    _ => ovf("division"),
                })?,
                _ => x.checked_rem(y).ok_or_else(|| match y {
                    0 => ovf("remainder (by zero)"),
                    _ => ovf("remainder"),
                })?,
            }
        }
        IntExpr::Call(f, arg) => match (f.as_str(), arg.as_ref()) {
            ("pow2", CallArg::Int(x)) => {
                let k = int(x, work)?;
                if !(0..=62).contains(&k) {
                    return Err(LayoutError::invalid(
                        "pow2",
                        format!("exponent {k} outside 0..=62"),
                    ));
                }
                1i64 << k
            }
            (f, CallArg::Term(t)) => {
                let l = term_costed(t, a, work)?;
                match (f, &l) {
                    ("size", l) => l.domain_size(),
                    ("cosize", Layout::Cute(c)) => c.cosize(),
                    ("rank", Layout::Cute(c)) => c.rank() as i64,
                    ("rank", Layout::Axe(x)) => x.shard().len() as i64,
                    _ => {
                        return Err(LayoutError::invalid(
                            f.to_string(),
                            format!("not defined on {}", l.print()),
                        ))
                    }
                }
            }
            (f, _) => return Err(LayoutError::invalid("function", f.to_string())),
        },
    })
}

/// The range of an integer expression when its parameters range over `known` (None: it uses
/// a parameter without a range, a function, or overflows).
pub fn interval(e: &IntExpr, known: &BTreeMap<String, (i64, i64)>) -> Option<(i64, i64)> {
    let corners = |x: (i64, i64), y: (i64, i64), f: fn(i64, i64) -> Option<i64>| {
        let v = [f(x.0, y.0)?, f(x.0, y.1)?, f(x.1, y.0)?, f(x.1, y.1)?];
        Some((*v.iter().min()?, *v.iter().max()?))
    };
    match e {
        IntExpr::Num(v) => Some((*v, *v)),
        IntExpr::Param(p) => known.get(p).copied(),
        IntExpr::Neg(x) => {
            let (a, b) = interval(x, known)?;
            Some((b.checked_neg()?, a.checked_neg()?))
        }
        IntExpr::Bin(op, x, y) => {
            let (x, y) = (interval(x, known)?, interval(y, known)?);
            match op {
                '+' => corners(x, y, i64::checked_add),
                '-' => corners(x, y, i64::checked_sub),
                '*' => corners(x, y, i64::checked_mul),
                '/' if y.0 > 0 || y.1 < 0 => corners(x, y, i64::checked_div),
                _ => None,
            }
        }
        IntExpr::Call(..) => None,
    }
}

/// Whether a condition holds; an expression that fails to evaluate makes it false.
pub fn cond(c: &Cond, a: &Assignment) -> bool {
    cond_costed(c, a, &mut 0)
}

/// [`cond`], adding the operators' work units to `work`.
pub fn cond_costed(c: &Cond, a: &Assignment, work: &mut u64) -> bool {
    match c {
        Cond::Cmp(es, ops) => {
            let Ok(vals) = es
                .iter()
                .map(|e| int_costed(e, a, work))
                .collect::<Result<Vec<_>, _>>()
            else {
                return false;
            };
            ops.iter()
                .zip(vals.windows(2))
                .all(|(op, w)| op.holds(w[0], w[1]))
        }
        Cond::And(x, y) => cond_costed(x, a, work) && cond_costed(y, a, work),
        Cond::Or(x, y) => cond_costed(x, a, work) || cond_costed(y, a, work),
        Cond::Not(x) => !cond_costed(x, a, work),
        Cond::Defined(t) => term_costed(t, a, work).is_ok(),
    }
}

/// The literal's text with its holes filled.
pub fn fill(pieces: &[Piece], a: &Assignment) -> Result<String, LayoutError> {
    fill_costed(pieces, a, &mut 0)
}

fn fill_costed(pieces: &[Piece], a: &Assignment, work: &mut u64) -> Result<String, LayoutError> {
    let mut out = String::new();
    for p in pieces {
        match p {
            Piece::Text(t) => out.push_str(t),
            Piece::Int(e) => out.push_str(&int_costed(e, a, work)?.to_string()),
            Piece::Axis(n) => match a.get(n) {
                Some(Bound::Axis(ax)) => out.push_str(ax),
                _ => {
                    return Err(LayoutError::invalid(
                        "parameter",
                        format!("{n} has no axis value"),
                    ))
                }
            },
        }
    }
    Ok(out)
}

/// Evaluates a term at an instance: the layout, or why this side is undefined there.
pub fn term(t: &Term, a: &Assignment) -> Result<Layout, LayoutError> {
    term_costed(t, a, &mut 0)
}

/// [`term`], adding the work units of every operator it applies ([`super::ops::cost`]) to
/// `work`, whether or not the operator succeeds.
pub fn term_costed(t: &Term, a: &Assignment, work: &mut u64) -> Result<Layout, LayoutError> {
    match t {
        Term::Lit { pieces, .. } => Layout::parse(&fill_costed(pieces, a, work)?, None),
        Term::Var { name, .. } => match a.get(name) {
            Some(Bound::Layout(l)) => Ok(l.clone()),
            _ => Err(LayoutError::invalid(
                "parameter",
                format!("{name} has no layout value"),
            )),
        },
        Term::Op { name, args, .. } => {
            let vals = args
                .iter()
                .map(|arg| {
                    Ok(match arg {
                        Arg::Term(t) => Value::Layout(term_costed(t, a, work)?),
                        Arg::Int(e) => Value::Int(int_costed(e, a, work)?),
                        Arg::Shape(es) => Value::Shape(
                            es.iter()
                                .map(|e| int_costed(e, a, work))
                                .collect::<Result<_, _>>()?,
                        ),
                        Arg::Region(rs) => Value::Region(
                            rs.iter()
                                .map(|(b, e)| {
                                    Ok((int_costed(b, a, work)?, int_costed(e, a, work)?))
                                })
                                .collect::<Result<_, LayoutError>>()?,
                        ),
                    })
                })
                .collect::<Result<Vec<_>, LayoutError>>()?;
            *work = work.saturating_add(cost(name, &vals));
            apply(name, &vals)
        }
    }
}
