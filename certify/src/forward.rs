//! The forward form every decider works on: a layout in any notation, read as a map from a
//! logical index (row-major over the claim's logical shape) to a SET of physical points, each
//! point a vector over one shared, sorted list of axes.
//!
//! - [`ForwardKind::Strided`]: an Axe layout after alias resolution and the registry's `cuda`
//!   relations (`tx = laneid + 32*warpid`): row-major digits, a stride vector per digit, the
//!   replica set, an offset, and optionally a swizzle on one axis applied last (swizzled CuTe).
//!   CuTe, CuTe TV and most Triton layouts convert here exactly (`layout::convert`).
//! - [`ForwardKind::Table`]: the relation enumerated by the trusted semantics, for layouts with
//!   no strided form (XOR-mixed linear layouts, TV layouts with holes).
//!
//! Example: `(4,2):(2,1)` over shape (4,2) is Strided with digits `[(4, [2]), (2, [1])]` on
//! axes `[m]`: index 5 = digits (2,1) -> m = 5.

use std::collections::{BTreeMap, BTreeSet};

use layout::axe::MAX_REPLICA_POINTS;
use layout::convert::{convert, Target};
use layout::relation::{point_of, relation, Inputs};
use layout::{AxeLayout, Axis, Layout, LayoutError, Swizzle};

/// A layout as logical index -> set of points over `axes`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Forward {
    /// The logical shape (row-major).
    pub shape: Vec<i64>,
    /// The axes of every point vector, sorted by name.
    pub axes: Vec<Axis>,
    /// How points are computed.
    pub kind: ForwardKind,
}

/// The two computable shapes of a forward map.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ForwardKind {
    /// `x -> { sw(O + sum_i x_i * s_i + r) | r in replicas }`.
    Strided {
        /// `(extent, stride vector)` per digit, slowest first.
        digits: Vec<(i64, Vec<i64>)>,
        /// The distinct replica vectors, sorted (just the zero vector when R is empty).
        replicas: Vec<Vec<i64>>,
        /// The replica iters `(extent, stride vector)` that generate `replicas` (their sums);
        /// the canonical form and the property analysis read the set's structure from them.
        replica_gens: Vec<(i64, Vec<i64>)>,
        /// The offset vector.
        offset: Vec<i64>,
        /// A swizzle applied last to one axis (by index into `axes`).
        swizzle: Option<(usize, Swizzle)>,
    },
    /// `sets[x]` is the sorted list of points of logical index `x`.
    Table {
        /// One sorted point list per logical index.
        sets: Vec<Vec<Vec<i64>>>,
    },
}

impl Forward {
    /// Number of logical indices.
    pub fn size(&self) -> i64 {
        self.shape.iter().product()
    }

    /// The sorted points of logical index `x`, straight from the form (the deciders' reference
    /// path; the fast paths are checked against it).
    pub fn points(&self, x: i64) -> Vec<Vec<i64>> {
        match &self.kind {
            ForwardKind::Strided {
                digits,
                replicas,
                offset,
                swizzle,
                ..
            } => {
                let mut base = offset.clone();
                let mut rest = x;
                for (e, s) in digits.iter().rev() {
                    let d = rest % e;
                    rest /= e;
                    base.iter_mut().zip(s).for_each(|(b, v)| *b += d * v);
                }
                let mut out: Vec<Vec<i64>> = replicas
                    .iter()
                    .map(|r| {
                        let mut p: Vec<i64> = base.iter().zip(r).map(|(a, b)| a + b).collect();
                        if let Some((i, sw)) = swizzle {
                            p[*i] = sw.apply(p[*i]).unwrap_or(p[*i]);
                        }
                        p
                    })
                    .collect();
                out.sort();
                out.dedup();
                out
            }
            ForwardKind::Table { sets } => sets[x as usize].clone(),
        }
    }

    /// Re-indexes points onto a larger sorted axis list (absent axes are 0).
    pub fn widen(&self, axes: &[Axis]) -> Forward {
        let map: Vec<usize> = self
            .axes
            .iter()
            .map(|a| axes.iter().position(|b| b == a).expect("superset"))
            .collect();
        let lift = |v: &Vec<i64>| -> Vec<i64> {
            let mut out = vec![0; axes.len()];
            for (i, x) in v.iter().enumerate() {
                out[map[i]] = *x;
            }
            out
        };
        let kind = match &self.kind {
            ForwardKind::Strided {
                digits,
                replicas,
                replica_gens,
                offset,
                swizzle,
            } => ForwardKind::Strided {
                digits: digits.iter().map(|(e, s)| (*e, lift(s))).collect(),
                replica_gens: replica_gens.iter().map(|(e, s)| (*e, lift(s))).collect(),
                replicas: {
                    let mut r: Vec<Vec<i64>> = replicas.iter().map(lift).collect();
                    r.sort();
                    r
                },
                offset: lift(offset),
                swizzle: swizzle.map(|(i, sw)| (map[i], sw)),
            },
            ForwardKind::Table { sets } => ForwardKind::Table {
                sets: sets
                    .iter()
                    .map(|s| {
                        let mut v: Vec<Vec<i64>> = s.iter().map(lift).collect();
                        v.sort();
                        v
                    })
                    .collect(),
            },
        };
        Forward {
            shape: self.shape.clone(),
            axes: axes.to_vec(),
            kind,
        }
    }
}

/// Largest table a [`ForwardKind::Table`] may hold (in logical indices).
pub const MAX_TABLE: i64 = 1 << 22;

/// What the error of a table past [`MAX_TABLE`] names.
const TABLE_WHAT: &str = "forward table";

/// Whether `e` is [`forward`]'s refusal to tabulate a layout with no strided form over a
/// domain past [`MAX_TABLE`], or to list more replica vectors than the deciders take: a limit
/// of the deciders, not a fault of the claim, so callers answer `unknown` (exit 3) rather than
/// bad input.
pub fn beyond_table(e: &LayoutError) -> bool {
    matches!(e, LayoutError::Invalid { what, .. } if what == TABLE_WHAT)
        || matches!(e, LayoutError::Undecided { .. })
}

/// The logical shape a layout is read over by default: Axe `[size]`, CuTe its top-level mode
/// sizes, TV its tile, linear its out-dim sizes.
pub fn default_logical_shape(l: &Layout) -> Vec<i64> {
    match l {
        Layout::Tv(t) => t.tile().to_vec(),
        Layout::Linear(f) => f.outs().iter().map(|o| o.size()).collect(),
        other => other.default_shape(),
    }
}

/// Builds the forward form of `l` over `shape` (default: [`default_logical_shape`]).
pub fn forward(l: &Layout, shape: Option<&[i64]>) -> Result<Forward, LayoutError> {
    // Forward forms hold fused points: refused where the fusion would merge two points.
    layout::relation::check_fusion(&[l])?;
    let natural = default_logical_shape(l);
    let shape = shape
        .map(<[i64]>::to_vec)
        .unwrap_or_else(|| natural.clone());
    if matches!(l, Layout::Tv(_) | Layout::Linear(_)) && shape != natural {
        return Err(LayoutError::Shape {
            shape,
            why: format!(
                "this layout's logical side is fixed by its tile or out-dims: {natural:?}"
            ),
        });
    }
    let strided = match l {
        Layout::Axe(a) => Some((a.clone(), None)),
        Layout::Cute(_) | Layout::Tv(_) | Layout::Linear(_) => {
            match convert(l, Target::Axe, Some(&shape)) {
                Ok(Layout::Axe(a)) => Some((a, None)),
                _ => None,
            }
        }
        // A logical shape that splits a mode unevenly (`(2,3):(1,20)` over (3, 2)) has no
        // strided form; the table reads it, as it reads an unswizzled CuTe layout (audit 27).
        Layout::Swizzled(s) => {
            match convert(&Layout::Cute(s.layout().clone()), Target::Axe, Some(&shape)) {
                Ok(Layout::Axe(a)) => {
                    // The swizzled layout's offset ADDS to any offset the Axe form has on `m`.
                    let mut offset = a.offset().clone();
                    let m = offset.entry(Axis::m()).or_insert(0);
                    *m = layout::arith::add(*m, s.offset(), "offset")?;
                    offset.retain(|_, v| *v != 0);
                    let a = AxeLayout::new(a.shard().to_vec(), a.replica().to_vec(), offset)?;
                    Some((a, Some(*s.swizzle())))
                }
                _ => None,
            }
        }
    };
    match strided {
        Some((a, sw)) => strided_form(&a, &shape, sw),
        None => table_form(l, &shape),
    }
}

fn strided_form(a: &AxeLayout, shape: &[i64], sw: Option<Swizzle>) -> Result<Forward, LayoutError> {
    a.check_shape(shape)?;
    // The point of index x is `point_of` the iters' contributions and the offset; `point_of`
    // is linear (a sum per resolved axis, then linear substitutions), so it is the sum of
    // `point_of` each stride and of the offset: the stride vectors below.
    let fuse = |axis: &Axis, v: i64| point_of([(axis.clone(), v)]);
    let mut axes: BTreeSet<Axis> = BTreeSet::new();
    let mut digit_maps = Vec::new();
    for it in a.shard() {
        let p = fuse(&it.axis, it.stride)?;
        axes.extend(p.keys().cloned());
        digit_maps.push((it.extent, p));
    }
    let mut rep_maps = Vec::new();
    for it in a.replica() {
        let p = fuse(&it.axis, it.stride)?;
        axes.extend(p.keys().cloned());
        rep_maps.push((it.extent, p));
    }
    let off = point_of(a.offset().iter().map(|(x, v)| (x.clone(), *v)))?;
    axes.extend(off.keys().cloned());
    if sw.is_some() {
        axes.insert(Axis::m());
    }
    let axes: Vec<Axis> = axes.into_iter().collect();
    let vec_of = |p: &BTreeMap<Axis, i64>| -> Vec<i64> {
        axes.iter()
            .map(|ax| p.get(ax).copied().unwrap_or(0))
            .collect()
    };
    let digits: Vec<(i64, Vec<i64>)> = digit_maps.iter().map(|(e, p)| (*e, vec_of(p))).collect();
    let gens: Vec<(i64, Vec<i64>)> = rep_maps.iter().map(|(e, p)| (*e, vec_of(p))).collect();
    fused_bound(&axes, &digits, &gens, &vec_of(&off))?;
    let count = a.replica_count();
    if count > MAX_REPLICA_POINTS {
        // A limit of the deciders, not a fault of the layout: `unknown`, see [`beyond_table`].
        return Err(LayoutError::Undecided {
            reason: format!(
                "{count} replica vectors (points each coordinate maps to) exceed the deciders' \
                 limit of {MAX_REPLICA_POINTS}"
            ),
        });
    }
    let mut replicas = BTreeSet::new();
    for r in 0..count {
        let mut v = vec![0i64; axes.len()];
        let mut rest = r;
        for (e, p) in rep_maps.iter().rev() {
            let d = rest % e;
            rest /= e;
            v.iter_mut().zip(vec_of(p)).for_each(|(x, s)| *x += d * s);
        }
        replicas.insert(v);
    }
    let swizzle = sw.map(|s| (axes.iter().position(|x| x.is_m()).expect("m inserted"), s));
    Ok(Forward {
        shape: shape.to_vec(),
        kind: ForwardKind::Strided {
            digits,
            replicas: replicas.into_iter().collect(),
            replica_gens: gens,
            offset: vec_of(&off),
            swizzle,
        },
        axes,
    })
}

/// Checks that every point of the form fits in i64 on every axis AFTER the registry's relations
/// are substituted (`tx = laneid + 32*warpid` can exceed what each axis's own span allowed), so
/// no decider ever computes a wrapped coordinate: `|offset| + sum (e-1)*|stride|` per axis.
fn fused_bound(
    axes: &[Axis],
    digits: &[(i64, Vec<i64>)],
    gens: &[(i64, Vec<i64>)],
    offset: &[i64],
) -> Result<(), LayoutError> {
    for (i, axis) in axes.iter().enumerate() {
        let mut bound = Some(offset[i].unsigned_abs() as i128);
        for (e, s) in digits.iter().chain(gens) {
            bound = bound
                .and_then(|b| b.checked_add(((*e - 1) as i128) * (s[i].unsigned_abs() as i128)));
        }
        if bound.is_none_or(|b| b > i64::MAX as i128) {
            return Err(LayoutError::invalid(
                format!("axis {axis}"),
                "its coordinates exceed i64 once the registry's relations are substituted (tx = laneid + 32*warpid)",
            ));
        }
    }
    Ok(())
}

fn table_form(l: &Layout, shape: &[i64]) -> Result<Forward, LayoutError> {
    let n = layout::shape::size_of(shape)?;
    let beyond = |what: String| {
        LayoutError::invalid(
            TABLE_WHAT,
            format!(
                "the {} layout has no strided form over {shape:?}, and {what} exceeds \
                 {MAX_TABLE}",
                layout::notation::Notation::detect(&l.print()).name()
            ),
        )
    };
    if n > MAX_TABLE {
        return Err(beyond(format!("its table of {n} logical indices")));
    }
    // Each point becomes a vector over the axes seen so far (in order of first sight); the
    // vectors are widened onto the sorted axes at the end. The relation's points are already
    // `point_of` their components.
    let mut seen: Vec<Axis> = Vec::new();
    let mut sets: Vec<Vec<Vec<i64>>> = vec![Vec::new(); n as usize];
    let mut add = |c: &[i64], p: &layout::Point| -> Result<(), LayoutError> {
        let x = layout::shape::flatten_row_major(shape, c)?;
        for a in p.keys() {
            if !seen.contains(a) {
                seen.push(a.clone());
            }
        }
        let v = seen
            .iter()
            .map(|a| p.get(a).copied().unwrap_or(0))
            .collect();
        sets[x as usize].push(v);
        Ok(())
    };
    match Inputs::of(l) {
        // Read backwards one input at a time: no pair is held but as its vector.
        Some(inputs) => {
            let count = inputs
                .count()
                .filter(|&c| c <= MAX_TABLE)
                .ok_or_else(|| beyond(format!("its {} inputs", inputs.count_text())))?;
            for i in 0..count {
                add(&inputs.cell(i)?, &inputs.point(i)?)?;
            }
        }
        None => {
            for (c, p) in relation(l, Some(shape))? {
                add(&c, &p)?;
            }
        }
    }
    let axes: Vec<Axis> = seen
        .iter()
        .cloned()
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let column: Vec<usize> = axes
        .iter()
        .map(|a| seen.iter().position(|b| b == a).expect("seen"))
        .collect();
    for v in sets.iter_mut().flatten() {
        *v = column
            .iter()
            .map(|&k| v.get(k).copied().unwrap_or(0))
            .collect();
    }
    for s in &mut sets {
        s.sort();
        s.dedup();
    }
    Ok(Forward {
        shape: shape.to_vec(),
        axes,
        kind: ForwardKind::Table { sets },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_reads_inputs_past_the_pair_enumeration_limit() {
        // A swizzled shared layout (XOR: no strided form) over 2^19 cells: one input per cell,
        // past the 2^18 pairs `layout::relation::relation` enumerates (it was an error, exit 2).
        let text = "#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>";
        let l = Layout::parse(text, Some(&[1024, 512])).unwrap();
        let f = forward(&l, None).unwrap();
        let ForwardKind::Table { sets } = &f.kind else {
            panic!("a swizzled layout has no strided form")
        };
        assert_eq!(sets.len(), 1 << 19);
        assert!(sets.iter().all(|s| s.len() == 1));
        // Every point is the one `points_at` reads (at a few cells).
        let inputs = Inputs::of(&l).unwrap();
        for x in [0, 1, 513, (1 << 19) - 1] {
            let c = layout::shape::unflatten_row_major(&f.shape, x).unwrap();
            let want: Vec<Vec<i64>> = layout::relation::points_at(&inputs, &c)
                .unwrap()
                .iter()
                .map(|p| {
                    f.axes
                        .iter()
                        .map(|a| p.get(a).copied().unwrap_or(0))
                        .collect()
                })
                .collect();
            assert_eq!(f.points(x), want, "cell {c:?}");
        }
        // 2^23 cells: past MAX_TABLE, a limit of the deciders (unknown), not bad input.
        let l = Layout::parse(text, Some(&[4096, 2048])).unwrap();
        assert!(beyond_table(&forward(&l, None).unwrap_err()));
    }

    #[test]
    fn a_table_past_max_table_inputs_is_beyond_the_deciders() {
        // XOR-mixed bases over 4 cells, broadcast by 21 zero bases: 2^23 inputs.
        let zeros = vec!["[0, 0]"; 21].join(", ");
        let text = format!("#ttg.linear<{{register=[[1, 1], [0, 1], {zeros}]}}>");
        let l = Layout::parse(&text, Some(&[2, 2])).unwrap();
        let e = forward(&l, None).unwrap_err();
        assert!(beyond_table(&e), "{e}");
        assert!(e.to_string().contains("its 8388608 inputs"), "{e}");
    }

    #[test]
    fn more_replicas_than_the_deciders_list_is_beyond_them_not_bad_input() {
        // 2^23 threads holding the one element: a valid layout whose replica set is too big.
        let l = Layout::parse("(8388608,1):(0,1) -> (1,)", None).unwrap();
        let e = forward(&l, None).unwrap_err();
        assert!(beyond_table(&e), "{e}");
        assert!(e.to_string().contains("8388608 replica vectors"), "{e}");
        // At the limit it is tabulated.
        let l = Layout::parse("(65536,1):(0,1) -> (1,)", None).unwrap();
        assert!(forward(&l, None).is_ok());
    }
}
