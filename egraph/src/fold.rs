//! Constant folding: every e-class whose terms are concrete carries the layout they evaluate to
//! (by `layout`'s algebra, through `certify::rules::ops`), and gets that layout as a leaf. The
//! union is recorded as a `fold` step, which the explanation checker re-computes.

use egg::{Analysis, DidMerge, EGraph, Id, Language};
use layout::Layout;

use crate::language::{op_name, LayoutExpr, Leaf};
use certify::rules::ops::{apply, Value};

/// The folding analysis; its data is the class's value (`None`: undefined or not concrete).
#[derive(Default, Clone, Copy, Debug)]
pub struct Fold;

/// The value of one node, from its children's values.
pub fn fold_node(n: &LayoutExpr, child: &dyn Fn(Id) -> Option<Layout>) -> Option<Layout> {
    match n {
        LayoutExpr::Leaf(l) => Layout::parse(&l.0, None).ok(),
        other => {
            let args: Option<Vec<Value>> = other
                .children()
                .iter()
                .map(|&c| child(c).map(Value::Layout))
                .collect();
            apply(&op_name(other)?, &args?).ok()
        }
    }
}

impl Analysis<LayoutExpr> for Fold {
    type Data = Option<Layout>;

    fn make(egraph: &mut EGraph<LayoutExpr, Self>, enode: &LayoutExpr, _id: Id) -> Self::Data {
        fold_node(enode, &|c| egraph[c].data.clone())
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
        let Some(l) = egraph[id].data.clone() else {
            return;
        };
        if matches!(l, Layout::Linear(_)) {
            return;
        }
        let leaf = egraph.add(LayoutExpr::Leaf(Leaf(l.print())));
        egraph.union_trusted(id, leaf, "fold");
    }
}

/// The cost model: a leaf costs its number of modes (CuTe flat modes, Axe shard and replica
/// iters, plus one for a swizzle); an operator costs 1 more than its children.
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
            n => n.fold(1usize, |acc, c| acc.saturating_add(costs(c))),
        }
    }
}
