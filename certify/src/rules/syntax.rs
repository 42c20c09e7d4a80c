//! The abstract syntax of rule files: rules, their parameters and sorts, side conditions, and
//! layout terms built from literals (with symbolic integers inside), layout variables and the
//! operators of the layout algebra.

use std::ops::Range;

/// A parsed rule file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleFile {
    /// The rules, in file order.
    pub rules: Vec<Rule>,
}

/// One named rule `forall params where conds  lhs == rhs`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    /// The rule's name.
    pub name: String,
    /// The rule's source text (from `rule` to the end of its right-hand side).
    pub text: String,
    /// Byte span of the rule in its file.
    pub span: Range<usize>,
    /// Quantified parameters, in declaration order.
    pub params: Vec<Param>,
    /// Side conditions (all must hold); bounds `lo <= p <= hi` are among them.
    pub conds: Vec<Cond>,
    /// Left-hand side.
    pub lhs: Term,
    /// `==` (same map) or `===` (same printed form).
    pub relation: Relation,
    /// Right-hand side.
    pub rhs: Term,
    /// `over lhs` / `over rhs`: the claim's logical domain is that side's natural domain at
    /// every instance (spec certify.md 1b); absent: the one
    /// [`crate::domain::resolve_pair`] gives for the instance's two values.
    pub over: Option<Over>,
}

/// The side whose natural domain a rule's claim is decided over (`over lhs`, `over rhs`):
/// needed where the sides read coordinates in different orders and their natural domains
/// differ (a CuTe layout of rank 2 against an Axe layout), which is otherwise ambiguous.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Over {
    /// The left-hand side's natural domain.
    Lhs,
    /// The right-hand side's natural domain.
    Rhs,
}

/// What a rule claims of its two sides at every instance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Relation {
    /// `==`: the same relation between logical index and physical points (decided).
    SameMap,
    /// `===`: the same value, printed identically (structural).
    Identical,
}

/// A quantified parameter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Param {
    /// Its name.
    pub name: String,
    /// Its sort.
    pub sort: Sort,
    /// Where it was declared.
    pub span: Range<usize>,
}

/// The sort of a parameter, with the finite domain it ranges over.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Sort {
    /// An integer; its range comes from a `lo <= p <= hi` condition.
    Int,
    /// An axis name, ranging over the listed axes (default `m`, `laneid`).
    Axis(Vec<String>),
    /// A flat CuTe layout: rank `1..=rank`, extents `1..=extent`, strides `0..=stride`.
    Cute {
        /// Largest rank.
        rank: u32,
        /// Largest extent.
        extent: i64,
        /// Largest stride.
        stride: i64,
    },
    /// A shard-only Axe layout on axis `m`: rank `1..=rank`, extents `1..=extent`, strides
    /// `-stride..=stride`.
    Axe {
        /// Largest rank.
        rank: u32,
        /// Largest extent.
        extent: i64,
        /// Largest stride magnitude.
        stride: i64,
    },
}

impl Sort {
    /// Whether values of this sort are layouts.
    pub fn is_layout(&self) -> bool {
        matches!(self, Sort::Cute { .. } | Sort::Axe { .. })
    }
}

/// An integer expression.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IntExpr {
    /// A literal.
    Num(i64),
    /// An integer parameter.
    Param(String),
    /// `-e`.
    Neg(Box<IntExpr>),
    /// `a op b` with op one of `+ - * / %` (`/` and `%` truncate, as in Rust and C).
    Bin(char, Box<IntExpr>, Box<IntExpr>),
    /// `size(T)`, `cosize(T)`, `rank(T)`, `pow2(e)` (a term or an int argument).
    Call(String, Box<CallArg>),
}

/// The argument of an integer function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CallArg {
    /// A layout term (`size`, `cosize`, `rank`).
    Term(Term),
    /// An integer (`pow2`).
    Int(IntExpr),
}

/// A side condition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cond {
    /// A comparison chain `e0 op1 e1 op2 e2 ...` (each adjacent pair must hold).
    Cmp(Vec<IntExpr>, Vec<CmpOp>),
    /// Both.
    And(Box<Cond>, Box<Cond>),
    /// Either.
    Or(Box<Cond>, Box<Cond>),
    /// Not.
    Not(Box<Cond>),
    /// `defined(T)`: the term evaluates (every operator's conditions hold).
    Defined(Term),
}

/// A comparison operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpOp {
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `==`
    Eq,
    /// `!=`
    Ne,
}

impl CmpOp {
    /// Applies the comparison.
    pub fn holds(self, a: i64, b: i64) -> bool {
        match self {
            CmpOp::Lt => a < b,
            CmpOp::Le => a <= b,
            CmpOp::Gt => a > b,
            CmpOp::Ge => a >= b,
            CmpOp::Eq => a == b,
            CmpOp::Ne => a != b,
        }
    }

    /// Its text.
    pub fn text(self) -> &'static str {
        match self {
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
            CmpOp::Eq => "==",
            CmpOp::Ne => "!=",
        }
    }
}

/// A layout term.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Term {
    /// A layout literal in any notation; integer and axis parameters inside are substituted
    /// before `layout`'s own parser reads it.
    Lit {
        /// The literal's text as written.
        text: String,
        /// The text cut into verbatim pieces and parameter holes.
        pieces: Vec<Piece>,
        /// Its byte span in the file.
        span: Range<usize>,
    },
    /// A layout parameter.
    Var {
        /// Its name.
        name: String,
        /// Its byte span.
        span: Range<usize>,
    },
    /// An operator applied to arguments.
    Op {
        /// The operator (see [`crate::rules::ops::OPERATORS`]).
        name: String,
        /// Its arguments.
        args: Vec<Arg>,
        /// Its byte span.
        span: Range<usize>,
    },
}

impl Term {
    /// The term's byte span.
    pub fn span(&self) -> Range<usize> {
        match self {
            Term::Lit { span, .. } | Term::Var { span, .. } | Term::Op { span, .. } => span.clone(),
        }
    }
}

/// An operator argument.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Arg {
    /// A layout.
    Term(Term),
    /// An integer.
    Int(IntExpr),
    /// A shape `[e0, e1, ...]`.
    Shape(Vec<IntExpr>),
    /// A region `[(b0, e0), (b1, e1), ...]`, half-open per dim.
    Region(Vec<(IntExpr, IntExpr)>),
}

/// A piece of a layout literal: verbatim text, or a hole filled at each instance.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Piece {
    /// Text copied as is.
    Text(String),
    /// An integer expression, printed in decimal.
    Int(IntExpr),
    /// An axis parameter, printed as the axis name.
    Axis(String),
}
