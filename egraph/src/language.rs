//! The egg [`Language`] of layout terms: every operator of the rule language
//! (`certify::rules::ops::OPERATORS`), concrete layout leaves (stored as their printed text,
//! which re-parses to the same value), named library atoms, and the integer sort the operators
//! with integer, shape and region arguments need.
//!
//! Integers are `Num` leaves and the rule language's arithmetic (`+ - * / %`, `neg`, `size`,
//! `cosize`, `rank`, `pow2`). A shape `[e0, e1]` is the variadic node `shape(e0, e1)`; a region
//! `[(b0, e0), (b1, e1)]` is `region(b0, e0, b1, e1)`, its bounds flattened pairwise. So
//! `slice(L, [8, 8], [(0, 4), (2, 6)])` is the node `slice` over `L`, `shape(8, 8)` and
//! `region(0, 4, 2, 6)`, and [`print_expr`] writes it back in rule-term syntax.

use std::fmt;
use std::str::FromStr;

use certify::rules::parse::{parse_term, print_term};
use certify::rules::syntax::{Arg, CallArg, IntExpr, Piece, Term};
use egg::{Id, Language, RecExpr};
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

/// A named atom of a library (`SM80_16x8x16_F16F16F16F16_TN.C`): the analysis holding the
/// library gives its value. A name is `[A-Za-z_][A-Za-z0-9_.]*`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AtomName(pub String);

impl FromStr for AtomName {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut chars = s.chars();
        let first = chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
        if first && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.') {
            Ok(AtomName(s.to_string()))
        } else {
            Err(format!("{s:?} is not an atom name"))
        }
    }
}

impl fmt::Display for AtomName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

pub use nodes::LayoutExpr;

/// The node type. Each operator variant is the operator of the same name in
/// `certify::rules::ops` (whose table documents it) or an integer function of the rule
/// language; `Leaf` is a concrete layout, `Atom` a library atom, `Num` an integer. egg's macro
/// cannot carry variant docs.
#[allow(missing_docs)]
mod nodes {
    use super::{AtomName, Leaf};
    use egg::{define_language, Id};

    define_language! {
        /// Layout terms: operators over concrete layouts, atoms and integers.
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
            "complement" = Complement([Id; 2]),
            "recast" = Recast([Id; 3]),
            "swizzle" = Swizzle([Id; 4]),
            "group" = Group([Id; 2]),
            "tile" = Tile([Id; 4]),
            "direct_sum" = DirectSum([Id; 4]),
            "slice" = Slice([Id; 3]),
            "to_linear" = ToLinear([Id; 1]),
            "f2_compose" = F2Compose([Id; 2]),
            "f2_invert_compose" = F2InvertCompose([Id; 2]),
            "f2_right_inverse" = F2RightInverse([Id; 1]),
            "f2_identity" = F2Identity([Id; 1]),
            "swizzle_map" = SwizzleMap([Id; 4]),
            "shape" = Shape(Box<[Id]>),
            "region" = Region(Box<[Id]>),
            "+" = Add([Id; 2]),
            "-" = Sub([Id; 2]),
            "*" = Mul([Id; 2]),
            "/" = Div([Id; 2]),
            "%" = Rem([Id; 2]),
            "neg" = Neg([Id; 1]),
            "size" = Size([Id; 1]),
            "cosize" = Cosize([Id; 1]),
            "rank" = Rank([Id; 1]),
            "pow2" = Pow2([Id; 1]),
            Num(i64),
            Leaf(Leaf),
            Atom(AtomName),
        }
    }
}

/// The operator name of a layout operator node (`None` for leaves, atoms and the integer
/// sort's nodes).
pub fn op_name(n: &LayoutExpr) -> Option<String> {
    match n {
        LayoutExpr::Leaf(_) | LayoutExpr::Atom(_) | LayoutExpr::Num(_) => None,
        LayoutExpr::Shape(_) | LayoutExpr::Region(_) => None,
        n if int_op(n).is_some() => None,
        other => Some(other.to_string()),
    }
}

/// The integer function or operator of a node of the integer sort, if it is one.
pub fn int_op(n: &LayoutExpr) -> Option<&'static str> {
    Some(match n {
        LayoutExpr::Add(_) => "+",
        LayoutExpr::Sub(_) => "-",
        LayoutExpr::Mul(_) => "*",
        LayoutExpr::Div(_) => "/",
        LayoutExpr::Rem(_) => "%",
        LayoutExpr::Neg(_) => "neg",
        LayoutExpr::Size(_) => "size",
        LayoutExpr::Cosize(_) => "cosize",
        LayoutExpr::Rank(_) => "rank",
        LayoutExpr::Pow2(_) => "pow2",
        _ => return None,
    })
}

/// How [`add_term`] builds the nodes of one language (an expression's or a pattern's).
pub trait Builder<L> {
    /// A layout literal (its text).
    fn leaf(&self, text: &str) -> Result<L, String>;
    /// A layout parameter.
    fn var(&self, name: &str) -> Result<L, String>;
    /// A node of `LayoutExpr` over child ids (an operator, a number, a shape, ...).
    fn node(&self, n: LayoutExpr) -> Result<L, String>;
    /// An integer expression at a position a pattern matches (`None`: add it as nodes). A
    /// pattern's searcher turns an integer parameter into a variable and a composite
    /// expression into a fresh variable checked by value.
    fn int_hole(&self, _e: &IntExpr) -> Option<Result<L, String>> {
        None
    }
    /// A layout literal with parameter holes (`(a,b):(1,a)`; `None`: build it as a leaf from
    /// its text). A pattern's searcher turns it into a fresh variable matched by value.
    fn lit_hole(&self, _pieces: &[Piece]) -> Option<Result<L, String>> {
        None
    }
}

/// Adds a term (operators over literals and, for patterns, variables) to `out`.
pub fn add_term<L: Language>(
    t: &Term,
    out: &mut RecExpr<L>,
    b: &dyn Builder<L>,
) -> Result<Id, String> {
    match t {
        Term::Lit { text, pieces, .. } => match b.lit_hole(pieces) {
            Some(hole) => Ok(out.add(hole?)),
            None => Ok(out.add(b.leaf(text)?)),
        },
        Term::Var { name, .. } => Ok(out.add(b.var(name)?)),
        Term::Op { name, args, .. } => {
            let mut ids = Vec::new();
            for a in args {
                ids.push(match a {
                    Arg::Term(t) => add_term(t, out, b)?,
                    Arg::Int(e) => add_int(e, out, b)?,
                    Arg::Shape(es) => {
                        let kids = es
                            .iter()
                            .map(|e| add_int(e, out, b))
                            .collect::<Result<Vec<_>, _>>()?;
                        out.add(b.node(LayoutExpr::Shape(kids.into()))?)
                    }
                    Arg::Region(rs) => {
                        let mut kids = Vec::new();
                        for (lo, hi) in rs {
                            kids.push(add_int(lo, out, b)?);
                            kids.push(add_int(hi, out, b)?);
                        }
                        out.add(b.node(LayoutExpr::Region(kids.into()))?)
                    }
                });
            }
            Ok(out.add(b.node(make_op(name, ids)?)?))
        }
    }
}

/// Adds an integer expression to `out`.
pub fn add_int<L: Language>(
    e: &IntExpr,
    out: &mut RecExpr<L>,
    b: &dyn Builder<L>,
) -> Result<Id, String> {
    if let Some(hole) = b.int_hole(e) {
        return Ok(out.add(hole?));
    }
    let n = match e {
        IntExpr::Neg(x) => match x.as_ref() {
            // `-3` is the number -3, as printed.
            IntExpr::Num(v) => LayoutExpr::Num(v.checked_neg().ok_or("negation overflows")?),
            x => LayoutExpr::Neg([add_int(x, out, b)?]),
        },
        IntExpr::Num(v) => LayoutExpr::Num(*v),
        IntExpr::Param(p) => return Ok(out.add(b.var(p)?)),
        IntExpr::Bin(op, x, y) => {
            let kids = [add_int(x, out, b)?, add_int(y, out, b)?];
            match op {
                '+' => LayoutExpr::Add(kids),
                '-' => LayoutExpr::Sub(kids),
                '*' => LayoutExpr::Mul(kids),
                '/' => LayoutExpr::Div(kids),
                _ => LayoutExpr::Rem(kids),
            }
        }
        IntExpr::Call(f, arg) => {
            let kid = match arg.as_ref() {
                CallArg::Term(t) => add_term(t, out, b)?,
                CallArg::Int(x) => add_int(x, out, b)?,
            };
            match f.as_str() {
                "size" => LayoutExpr::Size([kid]),
                "cosize" => LayoutExpr::Cosize([kid]),
                "rank" => LayoutExpr::Rank([kid]),
                "pow2" => LayoutExpr::Pow2([kid]),
                other => return Err(format!("integer function {other} is not in the e-graph")),
            }
        }
    };
    Ok(out.add(b.node(n)?))
}

/// The node for layout operator `name` over `ids`.
pub fn make_op(name: &str, ids: Vec<Id>) -> Result<LayoutExpr, String> {
    match <LayoutExpr as egg::FromOp>::from_op(name, ids) {
        Ok(n) if op_name(&n).is_some() => Ok(n),
        _ => Err(format!("operator {name} is not in the e-graph language")),
    }
}

/// Builds concrete expressions: literals are leaves (or atoms, for a name that is no
/// layout), variables are errors.
struct Concrete;

impl Builder<LayoutExpr> for Concrete {
    fn leaf(&self, text: &str) -> Result<LayoutExpr, String> {
        match text.parse::<Leaf>() {
            Ok(l) => Ok(LayoutExpr::Leaf(l)),
            Err(e) => text
                .parse::<AtomName>()
                .map(LayoutExpr::Atom)
                .map_err(|_| e),
        }
    }
    fn var(&self, name: &str) -> Result<LayoutExpr, String> {
        Err(format!("{name} is a variable; expressions are concrete"))
    }
    fn node(&self, n: LayoutExpr) -> Result<LayoutExpr, String> {
        Ok(n)
    }
}

/// Parses a concrete expression (rule-term syntax: `coalesce(compose((4,8):(1,4), 2:1))`,
/// `slice(S[64:1], [8, 8], [(0, 4), (2, 6)])`; a name that is no layout is an atom).
pub fn parse_expr(text: &str) -> Result<RecExpr<LayoutExpr>, String> {
    let t = parse_term(text).map_err(|e| e.render(text))?;
    let mut out = RecExpr::default();
    add_term(&t, &mut out, &Concrete)?;
    Ok(out)
}

/// Prints an expression in rule-term syntax (integer arguments as the rule language writes
/// them: `(a + b)`, `-(a)`, `size(L)`).
pub fn print_expr(e: &RecExpr<LayoutExpr>) -> String {
    print_node(&|id| &e[id], Id::from(e.as_ref().len() - 1))
}

/// Prints the node `id` of a term whose nodes `node` gives.
pub fn print_node<'a>(node: &dyn Fn(Id) -> &'a LayoutExpr, id: Id) -> String {
    let go = |c: &Id| print_node(node, *c);
    let n = node(id);
    let kids: Vec<String> = n.children().iter().map(go).collect();
    match n {
        LayoutExpr::Leaf(l) => l.0.clone(),
        LayoutExpr::Atom(a) => a.0.clone(),
        LayoutExpr::Num(v) => v.to_string(),
        LayoutExpr::Shape(_) => format!("[{}]", kids.join(", ")),
        LayoutExpr::Region(_) => {
            let pairs: Vec<String> = kids
                .chunks(2)
                .map(|p| format!("({})", p.join(", ")))
                .collect();
            format!("[{}]", pairs.join(", "))
        }
        LayoutExpr::Neg(_) => format!("-({})", kids[0]),
        n => match int_op(n) {
            Some(op) if op.len() == 1 => format!("({} {op} {})", kids[0], kids[1]),
            _ => format!("{}({})", n, kids.join(", ")),
        },
    }
}

/// Prints a term (re-export for callers that hold certify terms).
pub fn print(t: &Term) -> String {
    print_term(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_terms_with_integers_shapes_and_regions_round_trip() {
        for text in [
            "tile(S[(2,4):(1,2)], [2, 4], S[(8,8):(8,1)], [8, 8])",
            "slice(S[64:1], [8, 8], [(0, 4), (2, 6)])",
            "complement(4:2, 16)",
            "complement(4:2, (2 * 8))",
            "group(S[12:1], [(12 / size(S[3:1])), -3])",
            "recast(Sw<3,4,3> o (8, 1024):(1024, 1), 1, 16)",
            "swizzle(1, 0, 2, tile(SM80_C, [16, 8], S[(2,2):(2@tx,1@tx)], [2, 2]))",
            "f2_compose(swizzle_map(1, 0, 2, 6), to_linear(8:1))",
            "direct_sum(S[2:1], [pow2(1)], S[2:4], [(cosize(2:1) % 3)])",
        ] {
            let e = parse_expr(text).unwrap();
            assert_eq!(print_expr(&e), text);
            // certify re-parses what is printed.
            certify::rules::parse::parse_term(&print_expr(&e)).unwrap();
        }
    }

    #[test]
    fn a_region_is_its_bounds_flattened_and_an_atom_a_name() {
        let e = parse_expr("slice(SM80_C, [16, 8], [(8, 16), (0, 8)])").unwrap();
        let nodes = e.as_ref();
        assert!(matches!(&nodes[0], LayoutExpr::Atom(a) if a.0 == "SM80_C"));
        let region = nodes.iter().find_map(|n| match n {
            LayoutExpr::Region(kids) => Some(kids.len()),
            _ => None,
        });
        assert_eq!(region, Some(4));
        assert!(parse_expr("coalesce(4:1:1)").is_err());
        // A bare name is an atom: its value comes from a library, not from the text.
        assert!(matches!(
            parse_expr("L").unwrap().as_ref()[0],
            LayoutExpr::Atom(_)
        ));
    }
}
