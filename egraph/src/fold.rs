//! Constant folding: every e-class whose terms are concrete carries the value they evaluate to
//! (a layout by `layout`'s algebra through `certify::rules::ops::apply`, an integer by checked
//! arithmetic, a shape or a region), and gets that value as a leaf: a layout leaf, a `Num`, or
//! a `shape`/`region` of `Num`s. The union is recorded as a `fold` step, which the explanation
//! checker re-computes. Linear layouts stay data only (their text spans lines), and `rank` is
//! never folded: two terms with the same map (`==`) may have different ranks, so a rank would
//! not be a function of the e-class.
//!
//! For example `complement(4:2, 2 * 12)` folds: `2 * 12` to `24`, then the whole to
//! `(2,3):(1,8)`.

use std::collections::BTreeMap;
use std::sync::Arc;

use egg::{Analysis, DidMerge, EGraph, Id, Language};
use layout::Layout;

use crate::language::{int_op, op_name, LayoutExpr, Leaf};
use certify::rules::ops::{apply, Value};

/// The folding analysis; its data is the class's value (`None`: undefined or not concrete). It
/// holds the atom library that gives `Atom` leaves their values.
#[derive(Default, Clone, Debug)]
pub struct Fold {
    /// Atom name -> its layout.
    pub atoms: Arc<BTreeMap<String, Layout>>,
}

impl Fold {
    /// The analysis with an atom library.
    pub fn with_atoms(atoms: BTreeMap<String, Layout>) -> Self {
        Fold {
            atoms: Arc::new(atoms),
        }
    }
}

fn int_of(v: Option<Value>) -> Option<i64> {
    match v? {
        Value::Int(i) => Some(i),
        _ => None,
    }
}

/// The value of an integer node from its children's values (`None`: not defined there).
fn fold_int(n: &LayoutExpr, child: &dyn Fn(Id) -> Option<Value>) -> Option<i64> {
    let kids = n.children();
    let int = |k: usize| int_of(child(kids[k]));
    match n {
        LayoutExpr::Add(_) => int(0)?.checked_add(int(1)?),
        LayoutExpr::Sub(_) => int(0)?.checked_sub(int(1)?),
        LayoutExpr::Mul(_) => int(0)?.checked_mul(int(1)?),
        LayoutExpr::Div(_) => int(0)?.checked_div(int(1)?),
        LayoutExpr::Rem(_) => int(0)?.checked_rem(int(1)?),
        LayoutExpr::Neg(_) => int(0)?.checked_neg(),
        LayoutExpr::Pow2(_) => {
            let k = int(0)?;
            (0..=62).contains(&k).then(|| 1i64 << k)
        }
        LayoutExpr::Size(_) => match child(kids[0])? {
            Value::Layout(l) => Some(l.domain_size()),
            _ => None,
        },
        LayoutExpr::Cosize(_) => match child(kids[0])? {
            Value::Layout(Layout::Cute(c)) => Some(c.cosize()),
            _ => None,
        },
        _ => None,
    }
}

/// The value of one node, from its children's values and the atom library.
pub fn fold_node(
    n: &LayoutExpr,
    child: &dyn Fn(Id) -> Option<Value>,
    atoms: &BTreeMap<String, Layout>,
) -> Option<Value> {
    let ints = || -> Option<Vec<i64>> { n.children().iter().map(|&c| int_of(child(c))).collect() };
    match n {
        LayoutExpr::Leaf(l) => Layout::parse(&l.0, None).ok().map(Value::Layout),
        LayoutExpr::Atom(a) => atoms.get(&a.0).cloned().map(Value::Layout),
        LayoutExpr::Num(v) => Some(Value::Int(*v)),
        LayoutExpr::Shape(_) => ints().map(Value::Shape),
        LayoutExpr::Region(_) => {
            let v = ints()?;
            (v.len() % 2 == 0).then(|| Value::Region(v.chunks(2).map(|p| (p[0], p[1])).collect()))
        }
        other if int_op(other).is_some() => fold_int(other, child).map(Value::Int),
        other => {
            let args: Option<Vec<Value>> = other.children().iter().map(|&c| child(c)).collect();
            apply(&op_name(other)?, &args?).ok().map(Value::Layout)
        }
    }
}

impl Analysis<LayoutExpr> for Fold {
    type Data = Option<Value>;

    fn make(egraph: &mut EGraph<LayoutExpr, Self>, enode: &LayoutExpr, _id: Id) -> Self::Data {
        fold_node(enode, &|c| egraph[c].data.clone(), &egraph.analysis.atoms)
    }

    fn merge(&mut self, a: &mut Self::Data, b: Self::Data) -> DidMerge {
        match (a.is_some(), b.is_some()) {
            (false, true) => {
                *a = b;
                DidMerge(true, false)
            }
            (true, false) => DidMerge(false, true),
            _ => DidMerge(false, false),
        }
    }

    fn modify(egraph: &mut EGraph<LayoutExpr, Self>, id: Id) {
        let Some(v) = egraph[id].data.clone() else {
            return;
        };
        let nums = |egraph: &mut EGraph<LayoutExpr, Self>, vs: &[i64]| -> Box<[Id]> {
            vs.iter().map(|&v| egraph.add(LayoutExpr::Num(v))).collect()
        };
        let leaf = match v {
            Value::Layout(Layout::Linear(_)) => return,
            Value::Layout(l) => LayoutExpr::Leaf(Leaf(l.print())),
            Value::Int(i) => LayoutExpr::Num(i),
            Value::Shape(s) => LayoutExpr::Shape(nums(egraph, &s)),
            Value::Region(r) => {
                let flat: Vec<i64> = r.iter().flat_map(|&(b, e)| [b, e]).collect();
                LayoutExpr::Region(nums(egraph, &flat))
            }
        };
        let leaf = egraph.add(leaf);
        egraph.union_trusted(id, leaf, "fold");
    }
}

/// The cost model of simplification: a leaf costs its number of modes (CuTe flat modes, Axe
/// shard and replica iters, plus one for a swizzle), a number or an atom 1; any other node
/// costs 1 more than its children.
pub struct ModeCost;

/// The cost of a layout value.
pub fn modes(l: &Layout) -> usize {
    match l {
        Layout::Cute(c) => c.flat_modes().len(),
        Layout::Axe(x) => x.shard().len() + x.replica().len() + x.offset().len(),
        Layout::Swizzled(s) => s.layout().flat_modes().len() + 1,
        Layout::Tv(t) => t.layout().flat_modes().len(),
        Layout::Linear(f) => f.total_in_bits(),
    }
}

impl egg::CostFunction<LayoutExpr> for ModeCost {
    type Cost = usize;
    fn cost<C>(&mut self, enode: &LayoutExpr, mut costs: C) -> usize
    where
        C: FnMut(Id) -> usize,
    {
        match enode {
            LayoutExpr::Leaf(l) => Layout::parse(&l.0, None).map_or(usize::MAX / 4, |v| modes(&v)),
            LayoutExpr::Num(_) | LayoutExpr::Atom(_) => 1,
            n => n.fold(1usize, |acc, c| acc.saturating_add(costs(c))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::language::{parse_expr, print_expr};

    fn class_value(text: &str) -> (Option<Value>, String) {
        let mut g: EGraph<LayoutExpr, Fold> = EGraph::new(Fold::default());
        let id = g.add_expr(&parse_expr(text).unwrap());
        g.rebuild();
        let (_, best) = egg::Extractor::new(&g, ModeCost).find_best(id);
        (g[id].data.clone(), print_expr(&best))
    }

    #[test]
    fn integer_expressions_fold_to_numbers() {
        let (v, best) = class_value("complement(4:2, 2 * 12)");
        assert!(matches!(v, Some(Value::Layout(_))));
        assert_eq!(best, "(2, 3):(1, 8)");
        let mut g: EGraph<LayoutExpr, Fold> = EGraph::new(Fold::default());
        let e = parse_expr("group(S[12:1], [(12 / size(S[3:1])), 3])").unwrap();
        g.add_expr(&e);
        g.rebuild();
        // The shape [12 / size(S[3:1]), 3] folds to [4, 3]: its class holds shape(4, 3).
        let shape = parse_expr("group(S[12:1], [4, 3])").unwrap();
        assert_eq!(g.lookup_expr(&shape), g.lookup_expr(&e));
    }

    #[test]
    fn shapes_and_regions_fold_and_undefined_arithmetic_does_not() {
        let mut g: EGraph<LayoutExpr, Fold> = EGraph::new(Fold::default());
        let e = parse_expr("slice(S[8:1], [2 * 4], [(1 + 1, 6)])").unwrap();
        let id = g.add_expr(&e);
        g.rebuild();
        match &g[id].data {
            Some(Value::Layout(l)) => assert_eq!(l.print(), "S[4:1] + 2"),
            other => panic!("{other:?}"),
        }
        // A constant that is never defined is bad input at parse time (audit 27), not a class
        // left unfolded.
        let e = parse_expr("complement(4:2, 1 / 0)").unwrap_err();
        assert!(e.contains("uses no parameter"), "{e}");
        let (v, best) = class_value("complement(4:2, size(S[(2,2):(1,2)]) * rank(4:1))");
        assert!(v.is_none(), "rank is never folded");
        assert!(best.contains("rank"), "{best}");
    }
}
