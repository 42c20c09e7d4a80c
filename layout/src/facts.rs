//! Facts `laycert show` reports about a layout: size, span per axis, injectivity and
//! surjectivity, each decided exactly (F2 rank for linear layouts, enumeration of the relation
//! otherwise, up to [`MAX_FACT_PAIRS`] pairs; beyond that the fact is `unknown`).
//!
//! Injective: no physical point is reached from two logical coordinates. Surjective: the image
//! fills its bounding box (per axis, every value between the smallest and largest reached).
//! Example: `(4,2):(2,1)` is injective and fills offsets 0..8; `4:2` is injective, not
//! surjective (offset 1 is a hole).

use std::collections::{BTreeMap, BTreeSet};

use crate::axis::{format_point, Axis, Point};
use crate::convert::linear_rank;
use crate::error::Result;
use crate::layout::Layout;
use crate::relation::{in_dims_are_independent, relation, MAX_PAIRS};

/// Most pairs (coordinate, point) of the relation [`facts`] enumerates: [`MAX_PAIRS`] (2^18,
/// the corpus's largest atoms are 2^17), checked before enumerating so replicas count too;
/// larger relations give `unknown` facts.
pub const MAX_FACT_PAIRS: i64 = MAX_PAIRS;

/// A decided (or undecided) yes/no property with its witness.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fact {
    /// Holds.
    Yes,
    /// Fails, with a witness in words.
    No(String),
    /// Not decided here, and why.
    Unknown(String),
}

impl Fact {
    /// `yes`, `no (...)`, `unknown (...)`.
    pub fn render(&self) -> String {
        match self {
            Fact::Yes => "yes".into(),
            Fact::No(w) => format!("no ({w})"),
            Fact::Unknown(w) => format!("unknown ({w})"),
        }
    }
}

/// What `show` reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Facts {
    /// Number of domain points.
    pub size: i64,
    /// Per physical axis (or logical out-dim for linear/TV layouts): `(min, max)` reached.
    pub range: BTreeMap<Axis, (i64, i64)>,
    /// Injectivity.
    pub injective: Fact,
    /// Surjectivity onto the bounding box of the image.
    pub surjective: Fact,
}

impl Facts {
    /// `show`'s lines after the layout's own text: notation, domain size and shape, the span
    /// per axis (Axe), the range reached per axis, and the two facts. One rendering for the
    /// CLI and the Python package.
    pub fn summary_lines(&self, l: &Layout, domain_shape: &[i64]) -> Vec<String> {
        let list = |v: &[i64]| {
            let b: Vec<String> = v.iter().map(i64::to_string).collect();
            format!("({})", b.join(", "))
        };
        let mut lines = vec![
            format!("notation: {}", l.notation().name()),
            format!("domain size: {}", self.size),
            format!("shape: {}", list(domain_shape)),
        ];
        if let Layout::Axe(a) = l {
            let spans: Vec<String> = a
                .axes()
                .iter()
                .map(|ax| format!("{ax}={}", a.span(ax)))
                .collect();
            if !spans.is_empty() {
                lines.push(format!("span: {}", spans.join(", ")));
            }
        }
        if !self.range.is_empty() {
            let body: Vec<String> = self
                .range
                .iter()
                .map(|(a, (lo, hi))| format!("{a}={lo}..{hi}"))
                .collect();
            lines.push(format!("range: {}", body.join(", ")));
        }
        lines.push(format!("injective: {}", self.injective.render()));
        lines.push(format!(
            "surjective (onto the image's bounding box): {}",
            self.surjective.render()
        ));
        lines
    }
}

/// Decides the facts of `l` over `shape` (default: its own).
pub fn facts(l: &Layout, shape: Option<&[i64]>) -> Result<Facts> {
    if let Layout::Linear(f) = l {
        let rank = linear_rank(f)?;
        let ins = f.total_in_bits();
        let outs = f.total_out_bits() as usize;
        let range = f
            .outs()
            .iter()
            .map(|o| (Axis::new(&o.name).expect("identifier"), (0, o.size() - 1)))
            .collect();
        // The rank speaks of inputs; it speaks of physical points only when distinct inputs
        // are distinct points (in-dims aliasing one axis, `register` and `reg`, add: module
        // doc of `relation`). Otherwise: no cell held by two physical points, by enumeration.
        let injective = if !in_dims_are_independent(f)? {
            linear_injective_by_relation(l)
        } else if rank == ins {
            Fact::Yes
        } else {
            Fact::No(format!(
                "rank {rank} < {ins} input bits: some bases are broadcast"
            ))
        };
        let surjective = if rank == outs {
            Fact::Yes
        } else {
            Fact::No(format!("rank {rank} < {outs} output bits"))
        };
        return Ok(Facts {
            size: 1i64 << ins,
            range,
            injective,
            surjective,
        });
    }
    let size = l.domain_size();
    let per = match l {
        Layout::Axe(a) => a.replica_count(),
        _ => 1,
    };
    let pairs = match size.checked_mul(per).filter(|&n| n <= MAX_FACT_PAIRS) {
        Some(_) => relation(l, shape),
        None => Err(crate::error::LayoutError::invalid(
            "relation",
            format!(
                "{size} coordinates x {per} replicas exceed the {MAX_FACT_PAIRS} pairs show enumerates"
            ),
        )),
    };
    let pairs = match pairs {
        Ok(p) => p,
        Err(e) => {
            let why = e.to_string();
            return Ok(Facts {
                size,
                range: BTreeMap::new(),
                injective: Fact::Unknown(why.clone()),
                surjective: Fact::Unknown(why),
            });
        }
    };
    // For TV layouts the image is the tile (logical side); otherwise the physical side.
    let backwards = matches!(l, Layout::Tv(_));
    let mut by_image: BTreeMap<Point, String> = BTreeMap::new();
    let mut injective = Fact::Yes;
    for (c, p) in &pairs {
        let (from, to) = if backwards {
            (format_point(p), cell_point(c))
        } else {
            (format!("{c:?}"), p.clone())
        };
        match by_image.get(&to) {
            Some(prev) if *prev != from && injective == Fact::Yes => {
                injective = Fact::No(format!(
                    "{prev} and {from} both reach {}",
                    format_point(&to)
                ));
            }
            Some(_) => {}
            None => {
                by_image.insert(to, from);
            }
        }
    }
    let mut range: BTreeMap<Axis, (i64, i64)> = BTreeMap::new();
    let axes: BTreeSet<Axis> = by_image.keys().flat_map(|p| p.keys().cloned()).collect();
    for a in &axes {
        let vals = by_image.keys().map(|p| p.get(a).copied().unwrap_or(0));
        let (lo, hi) = vals.fold((i64::MAX, i64::MIN), |(lo, hi), v| (lo.min(v), hi.max(v)));
        range.insert(a.clone(), (lo, hi));
    }
    let box_size = range.values().try_fold(1i64, |acc, (lo, hi)| {
        hi.checked_sub(*lo)?
            .checked_add(1)
            .and_then(|w| acc.checked_mul(w))
    });
    let surjective = match box_size {
        Some(n) if n == by_image.len() as i64 => Fact::Yes,
        Some(n) => Fact::No(format!(
            "{} of the {n} points in the image's bounding box are reached",
            by_image.len()
        )),
        None => Fact::Unknown("bounding box too large".into()),
    };
    Ok(Facts {
        size,
        range,
        injective,
        surjective,
    })
}

/// A linear layout is injective when no cell is held by two physical points.
fn linear_injective_by_relation(l: &Layout) -> Fact {
    let pairs = match relation(l, None) {
        Ok(p) => p,
        Err(e) => return Fact::Unknown(e.to_string()),
    };
    // Pairs are sorted by cell: two neighbours with one cell are two points holding it.
    let mut prev: Option<&(Vec<i64>, Point)> = None;
    for pair in &pairs {
        if let Some((c, p)) = prev.filter(|(c, _)| *c == pair.0) {
            return Fact::No(format!(
                "{} and {} both hold cell {c:?}",
                format_point(p),
                format_point(&pair.1)
            ));
        }
        prev = Some(pair);
    }
    Fact::Yes
}

fn cell_point(c: &[i64]) -> Point {
    c.iter()
        .enumerate()
        .map(|(i, &v)| (crate::layout::dim_axis(i), v))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliased_in_dims_decide_injectivity_on_physical_points() {
        // register=[[1]], reg=[[1]]: (r, g) -> cell r^g at reg r+g, so cell 0 is held by
        // reg 0 and reg 2: two physical points, named as such (not by input-space rank).
        let l = Layout::parse("#ttg.linear<{register=[[1]], reg=[[1]]}>", Some(&[2])).unwrap();
        let f = facts(&l, None).unwrap();
        assert_eq!(
            f.injective,
            Fact::No("{} and {reg:2} both hold cell [0]".into())
        );
        assert_eq!(f.surjective, Fact::Yes);
        // register=[[1]], reg=[[2]]: cells 0..4 at reg 0, 1, 1, 2: one point per cell.
        let l = Layout::parse("#ttg.linear<{register=[[1]], reg=[[2]]}>", Some(&[4])).unwrap();
        assert_eq!(facts(&l, None).unwrap().injective, Fact::Yes);
    }
}
