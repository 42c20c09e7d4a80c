//! Decomposition search in the e-graph: is a layout `tile(atom, C)`, `Sw o tile(atom, C)`, or
//! an aligned `slice(atom, region)` for an atom of a library (the corpus's hardware atoms)?
//!
//! The target layout is a leaf of an e-graph whose folding analysis holds the library, so an
//! `Atom` node (printed with its library name) has the atom's value: its Axe form at its
//! logical shape (a swizzle of the atom is matched against the target's separately). For every
//! atom whose logical shape divides the layout's shape dim by dim, Axe's `tile_of` proposes the
//! outer layout `C` (axe.md §4) and the candidate term `tile(atom, [..], C, [..])` (under
//! `swizzle(B, M, S, ..)` when the target is swizzled) is added; for every atom whose shape is
//! a multiple of the layout's, each aligned region gives `slice(atom, [..], [(b, e), ..])`.
//! Folding computes each candidate's value by the algebra; a candidate is unioned with the
//! target only after certify proves its value equivalent to the target's at the target's shape
//! (the deciders are recorded; under a swizzle, the value under the swizzle against the
//! target's unswizzled layout, the swizzle being the same on both), so every term of the
//! target's e-class is a proved decomposition. Extraction then picks
//! the cheapest by [`DecomposeCost`].
//!
//! ```
//! use layout::Layout;
//! use egraph::decompose::decompose;
//! // Four SM80 16x8 accumulator tiles, 2x2 over warps: a 32x16 tile of 128 threads.
//! let l = Layout::parse("S[(2,2,8,2,4,2):(64@tx,2@reg,4@tx,32@tx,1@tx,1@reg)]", None)?;
//! let atom = Layout::parse("((4,8),(2,2)):((32,1),(16,8)) -> (16,8)", None)?;
//! let found = decompose(&l, &[32, 16], &[("SM80_C".to_string(), atom)])?;
//! assert_eq!(found.best.as_deref(), Some("tile(SM80_C, [16, 8], S[(2,2):(2@tx,1@tx)], [2, 2])"));
//! assert_eq!(found.tilings[0].to_string(), "tile(SM80_C, S[(2,2):(2@tx,1@tx)] over [2, 2])");
//! # Ok::<(), layout::LayoutError>(())
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use certify::forward::default_logical_shape;
use certify::rules::ops::Value;
use certify::{equivalent, Policy};
use egg::{CostFunction, EGraph, Extractor, Id, Language, RecExpr};
use layout::axe::{self, AxeLayout};
use layout::convert::{convert, Target};
use layout::notation::axe::print;
use layout::{Layout, LayoutError, Swizzle};

use crate::fold::{modes, Fold};
use crate::language::{print_expr, AtomName, LayoutExpr, Leaf};

/// One decomposition `[Sw o] tile(atom, outer)` or `[Sw o] slice(atom, region)`, proved equal
/// to the layout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tiling {
    /// The atom's name in the library.
    pub atom: String,
    /// The atom's logical shape (the inner shape).
    pub atom_shape: Vec<i64>,
    /// The recovered outer layout `C`.
    pub outer: AxeLayout,
    /// `C`'s shape: the layout's shape divided by the atom's, dim by dim.
    pub outer_shape: Vec<i64>,
    /// The swizzle over the whole, for `Sw o tile(atom, C)`.
    pub swizzle: Option<Swizzle>,
    /// The cost: iters of `C`'s canonical form.
    pub cost: usize,
    /// The deciders that proved the candidate equal to the layout.
    pub proved_by: Vec<String>,
    /// For a slice form `slice(atom, region)`: the region of the atom (then `outer` is empty).
    pub region: Option<Vec<(i64, i64)>>,
    /// The candidate as an e-graph term (`tile(SM80_C, [16, 8], S[..], [2, 2])`).
    pub term: String,
}

impl fmt::Display for Tiling {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(sw) = &self.swizzle {
            write!(f, "{sw} o ")?;
        }
        if let Some(region) = &self.region {
            let r: Vec<String> = region.iter().map(|(b, e)| format!("{b}:{e}")).collect();
            return write!(f, "slice({}, [{}])", self.atom, r.join(", "));
        }
        write!(
            f,
            "tile({}, {} over {:?})",
            self.atom,
            print(&self.outer),
            self.outer_shape
        )
    }
}

/// The result of [`decompose`].
#[derive(Clone, Debug)]
pub struct Decomposition {
    /// The cheapest term of the target's e-class (`None`: no candidate was proved).
    pub best: Option<String>,
    /// Every proved candidate, cheapest first (the same order as [`DecomposeCost`]).
    pub tilings: Vec<Tiling>,
    /// E-nodes of the e-graph at the end.
    pub nodes: usize,
}

/// The cost model of decomposition. A cost is a number, and a node always costs more than each
/// of its children (so the cheapest term never loops through a cycle that folding creates,
/// e.g. `tile(atom, [..], S[1:1], [1])` in the atom's own class). Weighted bands make the sum
/// read lexicographically:
///
/// - an `Atom` costs `1 + i`, `i` its index among the atoms sorted by (size, name): cheaper
///   than any leaf, so an atom's class prints as its name;
/// - a leaf costs [`LEAF`]` + iters` of its canonical Axe form (its modes for another
///   notation); a leaf of the target's own e-class is never chosen (infinite);
/// - a number costs `1 + |v|` (capped at 1000), a shape or a region 1 more than its numbers (an
///   earlier region is cheaper);
/// - `tile(atom, _, C, _)` costs the sum of its children plus `ITERS * iters(C) + ATOM * j`,
///   `j` the atom's place by (larger size, then name) (fewer iters first, then the LARGER
///   atom), `slice(atom, ..)` the sum plus
///   `SLICE + ATOM * i` (after every tiling, then the smaller atom), a `swizzle` 1 more than its
///   children, any other node `OTHER` more (after tilings and slices).
///
/// Ties between atoms of one size fall to the name, then to the region. The bands assume a
/// library of fewer than 2^20 atoms (beyond, the order degrades but costs never overflow).
pub struct DecomposeCost {
    exclude: BTreeSet<Leaf>,
    index: BTreeMap<String, u64>,
    /// For atom `i`: its place in the order (larger size, then name) of tilings.
    tile_order: Vec<u64>,
}

/// The base cost of a leaf (above every atom's).
pub const LEAF: u64 = 1 << 20;
const ATOM: u64 = 1 << 30;
const ITERS: u64 = 1 << 44;
const SLICE: u64 = 1 << 54;
const OTHER: u64 = 1 << 58;
const EXCLUDED: u64 = u64::MAX;

impl DecomposeCost {
    /// The model for atoms `sizes` (name -> size), never choosing the leaves `exclude`.
    pub fn new(sizes: &BTreeMap<String, i64>, exclude: BTreeSet<Leaf>) -> Self {
        let mut order: Vec<(&i64, &String)> = sizes.iter().map(|(n, s)| (s, n)).collect();
        order.sort();
        let mut tiles: Vec<(i64, &String, usize)> = order
            .iter()
            .enumerate()
            .map(|(i, (s, n))| (-**s, *n, i))
            .collect();
        tiles.sort();
        let mut tile_order = vec![0; order.len()];
        for (place, (_, _, i)) in tiles.into_iter().enumerate() {
            tile_order[i] = place as u64;
        }
        let index = order
            .into_iter()
            .zip(0u64..)
            .map(|((_, n), i)| (n.clone(), i))
            .collect();
        DecomposeCost {
            exclude,
            index,
            tile_order,
        }
    }

    /// The atom index a child's cost encodes, if the child is an atom.
    fn atom(&self, c: u64) -> Option<u64> {
        (1..=self.index.len() as u64).contains(&c).then(|| c - 1)
    }
}

/// Iters of a layout's canonical Axe form (its modes when it has none).
fn iters(l: &Layout) -> u64 {
    let n = match l {
        Layout::Axe(a) => axe::canonicalize(a).map_or(1 << 10, |c| c.layout.shard().len()),
        other => modes(other),
    };
    (n as u64).min(1 << 10)
}

impl CostFunction<LayoutExpr> for DecomposeCost {
    type Cost = u64;
    fn cost<C>(&mut self, enode: &LayoutExpr, mut costs: C) -> u64
    where
        C: FnMut(Id) -> u64,
    {
        let kids: Vec<u64> = enode.children().iter().map(|&c| costs(c)).collect();
        let sum = kids.iter().fold(1u64, |a, &k| a.saturating_add(k));
        let n = self.index.len() as u64;
        match enode {
            LayoutExpr::Leaf(l) if self.exclude.contains(l) => EXCLUDED,
            LayoutExpr::Leaf(l) => LEAF + Layout::parse(&l.0, None).map_or(1 << 10, |v| iters(&v)),
            LayoutExpr::Atom(a) => 1 + self.index.get(&a.0).copied().unwrap_or(n),
            LayoutExpr::Num(v) => 1 + v.unsigned_abs().min(1000),
            LayoutExpr::Shape(_) | LayoutExpr::Region(_) | LayoutExpr::Swizzle(_) => sum,
            LayoutExpr::Tile(_) => match self.atom(kids[0]) {
                Some(i) => {
                    let c = kids[2].saturating_sub(LEAF).min(1 << 10);
                    let j = self.tile_order[i as usize];
                    sum.saturating_add(
                        ITERS
                            .saturating_mul(c)
                            .saturating_add(ATOM.saturating_mul(j)),
                    )
                }
                None => sum.saturating_add(OTHER),
            },
            LayoutExpr::Slice(_) => match self.atom(kids[0]) {
                Some(i) => sum.saturating_add(SLICE.saturating_add(ATOM.saturating_mul(i))),
                None => sum.saturating_add(OTHER),
            },
            _ => sum.saturating_add(OTHER),
        }
    }
}

/// Splits a swizzle off the outside of a layout (`Sw o L` with no offset).
fn unswizzle(l: &Layout) -> (Option<Swizzle>, Layout) {
    match l {
        Layout::Swizzled(s) if s.offset() == 0 => {
            (Some(*s.swizzle()), Layout::Cute(s.layout().clone()))
        }
        other => (None, other.clone()),
    }
}

/// The values `Atom` nodes take in the search: every atom's Axe form at its logical shape (the
/// swizzle of a swizzled atom split off), by name. Atoms with no Axe form are left out.
pub fn library(atoms: &[(String, Layout)]) -> BTreeMap<String, Layout> {
    atoms
        .iter()
        .filter_map(|(name, atom)| {
            let (_, base) = unswizzle(atom);
            let shape = default_logical_shape(&base);
            let axe = convert(&base, Target::Axe, Some(&shape)).ok()?;
            Some((name.clone(), axe))
        })
        .collect()
}

/// A library atom usable against the target: its Axe form at its logical shape.
struct Atom {
    name: String,
    inner: AxeLayout,
    shape: Vec<i64>,
}

/// The atoms of `atoms` that can apply to a target of rank `rank` under `swizzle`.
fn usable_atoms(atoms: &[(String, Layout)], rank: usize, swizzle: Option<Swizzle>) -> Vec<Atom> {
    let mut out = Vec::new();
    for (name, atom) in atoms {
        let (atom_sw, atom_base) = unswizzle(atom);
        if (atom_sw.is_some() && atom_sw != swizzle) || name.parse::<AtomName>().is_err() {
            continue;
        }
        let shape = default_logical_shape(&atom_base);
        if shape.len() != rank || shape.iter().any(|a| *a < 1) {
            continue;
        }
        if let Ok(Layout::Axe(inner)) = convert(&atom_base, Target::Axe, Some(&shape)) {
            out.push(Atom {
                name: name.clone(),
                inner,
                shape,
            });
        }
    }
    out
}

/// A candidate before it is proved: its term and what it says.
struct Candidate {
    expr: RecExpr<LayoutExpr>,
    /// The node under the swizzle (the root when there is none).
    body: Id,
    tiling: Tiling,
    use_smt: bool,
}

fn shape_node(e: &mut RecExpr<LayoutExpr>, dims: &[i64]) -> Id {
    let kids: Box<[Id]> = dims.iter().map(|&d| e.add(LayoutExpr::Num(d))).collect();
    e.add(LayoutExpr::Shape(kids))
}

/// `[swizzle(B, M, S,] op(atom, [atom_shape], rest..) [)]` as a term, and the node of `op`.
fn candidate_expr(
    atom: &Atom,
    swizzle: Option<Swizzle>,
    rest: &dyn Fn(&mut RecExpr<LayoutExpr>, [Id; 2]) -> LayoutExpr,
) -> (RecExpr<LayoutExpr>, Id) {
    let mut e = RecExpr::default();
    let a = e.add(LayoutExpr::Atom(AtomName(atom.name.clone())));
    let s = shape_node(&mut e, &atom.shape);
    let body = rest(&mut e, [a, s]);
    let body = e.add(body);
    if let Some(sw) = swizzle {
        let [b, m, s] = [
            i64::from(sw.bits()),
            i64::from(sw.base()),
            i64::from(sw.shift()),
        ]
        .map(|v| e.add(LayoutExpr::Num(v)));
        e.add(LayoutExpr::Swizzle([b, m, s, body]));
    }
    (e, body)
}

/// The tiling candidate of one atom, when `tile_of` recovers an outer layout.
fn tiling(
    target: &AxeLayout,
    shape: &[i64],
    atom: &Atom,
    sw: Option<Swizzle>,
) -> Option<Candidate> {
    let outer = axe::tile_of(target, shape, &atom.inner, &atom.shape).ok()?;
    let outer_shape: Vec<i64> = shape.iter().zip(&atom.shape).map(|(s, a)| s / a).collect();
    let leaf = Leaf(print(&outer));
    let (expr, body) = candidate_expr(atom, sw, &|e, [a, s]| {
        let c = e.add(LayoutExpr::Leaf(leaf.clone()));
        let cs = shape_node(e, &outer_shape);
        LayoutExpr::Tile([a, s, c, cs])
    });
    let cost = axe::canonicalize(&outer).ok()?.layout.shard().len();
    Some(Candidate {
        tiling: Tiling {
            atom: atom.name.clone(),
            atom_shape: atom.shape.clone(),
            outer,
            outer_shape,
            swizzle: sw,
            cost,
            proved_by: Vec::new(),
            region: None,
            term: print_expr(&expr),
        },
        expr,
        body,
        use_smt: true,
    })
}

/// The subterm of `e` rooted at `id`.
fn sub_expr(e: &RecExpr<LayoutExpr>, id: Id) -> RecExpr<LayoutExpr> {
    e[id].build_recexpr(|c| e[c].clone())
}

/// Largest number of aligned regions tried per atom.
const MAX_REGIONS: i64 = 256;

/// The slice candidates of one atom whose shape is a multiple of `shape`: each aligned region.
fn slices(shape: &[i64], atom: &Atom, sw: Option<Swizzle>) -> Result<Vec<Candidate>, LayoutError> {
    if shape
        .iter()
        .zip(&atom.shape)
        .any(|(s, a)| *s < 1 || a % s != 0)
    {
        return Ok(Vec::new());
    }
    let counts: Vec<i64> = atom.shape.iter().zip(shape).map(|(a, s)| a / s).collect();
    let total = counts.iter().try_fold(1i64, |acc, c| acc.checked_mul(*c));
    let Some(total) = total.filter(|t| *t <= MAX_REGIONS) else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for k in 0..total {
        let mut rest = k;
        let mut region = Vec::with_capacity(shape.len());
        for d in (0..shape.len()).rev() {
            let b = (rest % counts[d]) * shape[d];
            rest /= counts[d];
            region.push((b, b + shape[d]));
        }
        region.reverse();
        let (expr, body) = candidate_expr(atom, sw, &|e, [a, s]| {
            let bounds: Box<[Id]> = region
                .iter()
                .flat_map(|&(b, end)| [b, end])
                .map(|v| e.add(LayoutExpr::Num(v)))
                .collect();
            let r = e.add(LayoutExpr::Region(bounds));
            LayoutExpr::Slice([a, s, r])
        });
        out.push(Candidate {
            tiling: Tiling {
                atom: atom.name.clone(),
                atom_shape: atom.shape.clone(),
                outer: AxeLayout::new(Vec::new(), Vec::new(), Default::default())?,
                outer_shape: vec![1; shape.len()],
                swizzle: sw,
                cost: 0,
                proved_by: Vec::new(),
                region: Some(region),
                term: print_expr(&expr),
            },
            expr,
            body,
            // Many regions: the normal form and enumeration decide each in microseconds.
            use_smt: false,
        });
    }
    Ok(out)
}

/// Most replica points of a layout the search decomposes.
pub const MAX_REPLICAS: i64 = 1024;

/// Searches the decompositions of `l` over `shape` by the atoms of `atoms` (`(name, layout)`;
/// names are `[A-Za-z_][A-Za-z0-9_.]*`) in an e-graph, and extracts the cheapest. Atoms that
/// cannot apply (another rank, a shape that does not divide, no Axe form, a different swizzle)
/// are skipped; an error only for a layout with no Axe form at all.
pub fn decompose(
    l: &Layout,
    shape: &[i64],
    atoms: &[(String, Layout)],
) -> Result<Decomposition, LayoutError> {
    let (swizzle, base) = unswizzle(l);
    let target = match convert(&base, Target::Axe, Some(shape))? {
        Layout::Axe(a) => a,
        _ => unreachable!("convert to Axe gives Axe"),
    };
    // Every candidate's proof and tile_of read the replica set: bounded (audit 27: 65536
    // replicas ran for minutes over the corpus's atoms).
    if target.replica_count() > MAX_REPLICAS {
        return Err(LayoutError::invalid(
            "the layout",
            format!(
                "it has {} replica points; the decomposition search takes at most \
                 {MAX_REPLICAS}",
                target.replica_count()
            ),
        ));
    }
    let usable = usable_atoms(atoms, shape.len(), swizzle);
    let mut candidates = Vec::new();
    for atom in &usable {
        if shape.iter().zip(&atom.shape).any(|(s, a)| s % a != 0) {
            candidates.extend(slices(shape, atom, swizzle)?);
        } else {
            candidates.extend(tiling(&target, shape, atom, swizzle));
        }
    }
    let library = usable
        .iter()
        .map(|a| (a.name.clone(), Layout::Axe(a.inner.clone())))
        .collect();
    let mut egraph: EGraph<LayoutExpr, Fold> = EGraph::new(Fold::with_atoms(library));
    // The target: its own leaf (the Axe form for a linear layout, which is no leaf).
    let target_leaf = match l {
        Layout::Linear(_) => Leaf(Layout::Axe(target.clone()).print()),
        other => Leaf(other.print()),
    };
    let root = egraph.add(LayoutExpr::Leaf(target_leaf.clone()));
    let mut found = Vec::new();
    for mut c in candidates {
        let id = egraph.add_expr(&c.expr);
        let body = egraph.add_expr(&sub_expr(&c.expr, c.body));
        // The body's value is compared with the target's at its shape: a swizzle, when any,
        // is the same over both (`Sw o X` and `Sw o T` are the same map when X and T are).
        let Some(Value::Layout(value)) = egraph[body].data.clone() else {
            continue;
        };
        if egraph[id].data.is_none() {
            continue;
        }
        let policy = Policy {
            use_smt: c.use_smt,
            ..Policy::default()
        };
        let report = equivalent(&value, &Layout::Axe(target.clone()), Some(shape), &policy)?;
        if report.verdict() != "equivalent" {
            if c.tiling.region.is_none() {
                return Err(LayoutError::invalid(
                    format!("tile_of({}, {})", print(&target), c.tiling.atom),
                    format!(
                        "it recovered {} but tile(atom, C) is {} to the layout",
                        print(&c.tiling.outer),
                        report.verdict()
                    ),
                ));
            }
            continue;
        }
        c.tiling.proved_by = report
            .deciding()
            .iter()
            .map(|d| d.name().to_string())
            .collect();
        egraph.union_trusted(
            root,
            id,
            format!("certify: {}", c.tiling.proved_by.join(", ")),
        );
        found.push(c);
    }
    egraph.rebuild();
    let exclude = egraph[root]
        .nodes
        .iter()
        .filter_map(|n| match n {
            LayoutExpr::Leaf(l) => Some(l.clone()),
            _ => None,
        })
        .collect();
    let sizes = usable
        .iter()
        .map(|a| (a.name.clone(), a.shape.iter().product()))
        .collect();
    let mut cost = DecomposeCost::new(&sizes, exclude);
    found.sort_by_cached_key(|c| cost.cost_rec(&c.expr));
    let best = if found.is_empty() {
        None
    } else {
        let (_, best) = Extractor::new(&egraph, cost).find_best(root);
        Some(print_expr(&best))
    };
    Ok(Decomposition {
        best,
        tilings: found.into_iter().map(|c| c.tiling).collect(),
        nodes: egraph.total_number_of_nodes(),
    })
}

/// Every decomposition of `l` over `shape` by an atom of `atoms`, best first (see
/// [`decompose`]).
pub fn find_tilings(
    l: &Layout,
    shape: &[i64],
    atoms: &[(String, Layout)],
) -> Result<Vec<Tiling>, LayoutError> {
    decompose(l, shape, atoms).map(|d| d.tilings)
}
