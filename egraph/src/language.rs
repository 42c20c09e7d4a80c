//! The egg [`Language`] of layout terms: the layout-to-layout operators of the algebra and
//! concrete layout leaves (stored as their printed text, which re-parses to the same value).
//! Operators that also take integers or shapes (`tile`, `group`, `slice`, `complement`, ...)
//! stay outside the e-graph: their integer arguments would need an integer sort.

use std::fmt;
use std::str::FromStr;

use certify::rules::parse::{parse_term, print_term};
use certify::rules::syntax::{Arg, Term};
use egg::{Id, RecExpr};
use layout::Layout;

/// A concrete layout leaf: its printed text (any notation but linear, whose text spans lines).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Leaf(pub String);

impl FromStr for Leaf {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match Layout::parse(s, None) {
            Ok(Layout::Linear(_)) => Err("linear layouts are not e-graph leaves".into()),
            Ok(l) => Ok(Leaf(l.print())),
            Err(e) => Err(e.to_string()),
        }
    }
}

impl fmt::Display for Leaf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

pub use nodes::LayoutExpr;

/// The node type. Each variant is the operator of the same name in `certify::rules::ops`
/// (whose table documents it); `Leaf` is a concrete layout. egg's macro cannot carry variant
/// docs.
#[allow(missing_docs)]
mod nodes {
    use super::Leaf;
    use egg::{define_language, Id};

    define_language! {
        /// Layout terms: operators over concrete layouts.
        pub enum LayoutExpr {
            "compose" = Compose([Id; 2]),
            "make_layout" = MakeLayout([Id; 2]),
            "logical_divide" = LogicalDivide([Id; 2]),
            "zipped_divide" = ZippedDivide([Id; 2]),
            "tiled_divide" = TiledDivide([Id; 2]),
            "flat_divide" = FlatDivide([Id; 2]),
            "logical_product" = LogicalProduct([Id; 2]),
            "zipped_product" = ZippedProduct([Id; 2]),
            "tiled_product" = TiledProduct([Id; 2]),
            "blocked_product" = BlockedProduct([Id; 2]),
            "raked_product" = RakedProduct([Id; 2]),
            "coalesce" = Coalesce([Id; 1]),
            "flatten" = Flatten([Id; 1]),
            "right_inverse" = RightInverse([Id; 1]),
            "left_inverse" = LeftInverse([Id; 1]),
            "canonicalize" = Canonicalize([Id; 1]),
            "to_axe" = ToAxe([Id; 1]),
            "to_cute" = ToCute([Id; 1]),
            Leaf(Leaf),
        }
    }
}

/// The operator name of a node (`None` for a leaf).
pub fn op_name(n: &LayoutExpr) -> Option<String> {
    match n {
        LayoutExpr::Leaf(_) => None,
        other => Some(other.to_string()),
    }
}

/// Builds the node of an operator over child ids.
pub type OpBuilder<'a, L> = &'a dyn Fn(&str, Vec<Id>) -> Result<L, String>;

/// Adds a term (operators over literals and, for patterns, variables) to `out`; `var` turns
/// a layout parameter into a node. Errors name the operator outside the language.
pub fn add_term<L>(
    t: &Term,
    out: &mut RecExpr<L>,
    leaf: &dyn Fn(&str) -> Result<L, String>,
    op: OpBuilder<'_, L>,
    var: &dyn Fn(&str) -> Result<L, String>,
) -> Result<Id, String>
where
    L: egg::Language,
{
    match t {
        Term::Lit { text, .. } => Ok(out.add(leaf(text)?)),
        Term::Var { name, .. } => Ok(out.add(var(name)?)),
        Term::Op { name, args, .. } => {
            let mut ids = Vec::new();
            for a in args {
                match a {
                    Arg::Term(t) => ids.push(add_term(t, out, leaf, op, var)?),
                    _ => {
                        return Err(format!(
                            "{name} takes integer arguments; not in the e-graph"
                        ))
                    }
                }
            }
            Ok(out.add(op(name, ids)?))
        }
    }
}

/// The node for operator `name` over `ids`.
pub fn make_op(name: &str, ids: Vec<Id>) -> Result<LayoutExpr, String> {
    <LayoutExpr as egg::FromOp>::from_op(name, ids)
        .map_err(|_| format!("operator {name} is not in the e-graph language"))
}

/// Parses a concrete expression (rule-term syntax: `coalesce(compose((4,8):(1,4), 2:1))`).
pub fn parse_expr(text: &str) -> Result<RecExpr<LayoutExpr>, String> {
    let t = parse_term(text).map_err(|e| e.render(text))?;
    let mut out = RecExpr::default();
    add_term(
        &t,
        &mut out,
        &|s| s.parse::<Leaf>().map(LayoutExpr::Leaf),
        &make_op,
        &|v| Err(format!("{v} is a variable; expressions are concrete")),
    )?;
    Ok(out)
}

/// Prints an expression in rule-term syntax.
pub fn print_expr(e: &RecExpr<LayoutExpr>) -> String {
    fn go(e: &RecExpr<LayoutExpr>, id: Id) -> String {
        match &e[id] {
            LayoutExpr::Leaf(l) => l.0.clone(),
            n => {
                let args: Vec<String> = egg::Language::children(n)
                    .iter()
                    .map(|&c| go(e, c))
                    .collect();
                format!("{}({})", n, args.join(", "))
            }
        }
    }
    go(e, Id::from(e.as_ref().len() - 1))
}

/// Prints a term (re-export for callers that hold certify terms).
pub fn print(t: &Term) -> String {
    print_term(t)
}
