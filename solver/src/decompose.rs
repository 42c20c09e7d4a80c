//! Decomposition search: is a layout `tile(atom, C)`, `Sw o tile(atom, C)`, or an aligned
//! `slice(atom, region)` for an atom of a library (the corpus's hardware atoms)? For every atom
//! whose logical shape divides the layout's shape dim by dim, Axe's `tile_of` recovers the
//! outer layout `C` when one exists (axe.md §4); for every atom whose shape is a multiple of
//! the layout's, each aligned region of the layout's shape is sliced out of the atom. A
//! candidate is kept only after certify proves it equivalent to the layout. Candidates are
//! ranked by a cost model: tilings before slices (a tiling says how the layout repeats a
//! hardware atom), fewer iters in `C`'s canonical form first, then the larger atom for a tiling
//! and the smaller atom for a slice, then the name.
//!
//! ```
//! use layout::Layout;
//! use solver::decompose::find_tilings;
//! // Four SM80 16x8 accumulator tiles, 2x2 over warps: a 32x16 tile of 128 threads.
//! let l = Layout::parse("S[(2,2,8,2,4,2):(64@tx,2@reg,4@tx,32@tx,1@tx,1@reg)]", None)?;
//! let atom = Layout::parse("((4,8),(2,2)):((32,1),(16,8)) -> (16,8)", None)?;
//! let found = find_tilings(&l, &[32, 16], &[("SM80_C".to_string(), atom)])?;
//! assert_eq!(found[0].to_string(), "tile(SM80_C, S[(2,2):(2@tx,1@tx)] over [2, 2])");
//! # Ok::<(), layout::LayoutError>(())
//! ```

use std::fmt;

use certify::forward::default_logical_shape;
use certify::{equivalent, Policy};
use layout::axe::{self, AxeLayout};
use layout::convert::{convert, Target};
use layout::notation::axe::print;
use layout::{Layout, LayoutError, Swizzle};

/// One decomposition `[Sw o] tile(atom, outer)`, proved equal to the layout.
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
    /// The deciders that proved `tile(atom, C)` equal to the layout.
    pub proved_by: Vec<String>,
    /// For a slice form `slice(atom, region)`: the region of the atom (then `outer` is empty).
    pub region: Option<Vec<(i64, i64)>>,
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

/// Splits a swizzle off the outside of a layout (`Sw o L` with no offset).
fn unswizzle(l: &Layout) -> (Option<Swizzle>, Layout) {
    match l {
        Layout::Swizzled(s) if s.offset() == 0 => {
            (Some(*s.swizzle()), Layout::Cute(s.layout().clone()))
        }
        other => (None, other.clone()),
    }
}

/// Every decomposition of `l` over `shape` by an atom of `atoms` (`(name, layout)`), best
/// first. Atoms that cannot apply (another rank, a shape that does not divide, no Axe form, a
/// different swizzle) are skipped; an error only for a layout with no Axe form at all.
pub fn find_tilings(
    l: &Layout,
    shape: &[i64],
    atoms: &[(String, Layout)],
) -> Result<Vec<Tiling>, LayoutError> {
    let (swizzle, base) = unswizzle(l);
    let target = match convert(&base, Target::Axe, Some(shape))? {
        Layout::Axe(a) => a,
        _ => unreachable!("convert to Axe gives Axe"),
    };
    let mut found = Vec::new();
    for (name, atom) in atoms {
        let (atom_sw, atom_base) = unswizzle(atom);
        if atom_sw.is_some() && atom_sw != swizzle {
            continue;
        }
        let atom_shape = default_logical_shape(&atom_base);
        if atom_shape.len() != shape.len() || atom_shape.iter().any(|a| *a < 1) {
            continue;
        }
        let Ok(Layout::Axe(inner)) = convert(&atom_base, Target::Axe, Some(&atom_shape)) else {
            continue;
        };
        if shape.iter().zip(&atom_shape).any(|(s, a)| s % a != 0) {
            found.extend(slices(&target, shape, name, &inner, &atom_shape, swizzle)?);
            continue;
        }
        let Ok(outer) = axe::tile_of(&target, shape, &inner, &atom_shape) else {
            continue;
        };
        let outer_shape: Vec<i64> = shape.iter().zip(&atom_shape).map(|(s, a)| s / a).collect();
        // The claim: tile(atom, C) equals the layout (the swizzle, when any, is common).
        let tiled = axe::tile(&inner, &outer, &atom_shape, &outer_shape)?;
        let report = equivalent(
            &Layout::Axe(tiled),
            &Layout::Axe(target.clone()),
            Some(shape),
            &Policy::default(),
        )?;
        if report.verdict() != "equivalent" {
            return Err(LayoutError::invalid(
                format!("tile_of({}, {name})", print(&target)),
                format!(
                    "it recovered {} but tile(atom, C) is {} to the layout",
                    print(&outer),
                    report.verdict()
                ),
            ));
        }
        let cost = axe::canonicalize(&outer)?.layout.shard().len();
        found.push(Tiling {
            atom: name.clone(),
            atom_shape,
            outer,
            outer_shape,
            swizzle,
            cost,
            proved_by: report
                .deciding()
                .iter()
                .map(|d| d.name().to_string())
                .collect(),
            region: None,
        });
    }
    // Tilings before slices, then fewer iters; a tiling by a larger atom, a slice of a smaller.
    found.sort_by_key(|t| {
        let size = t.atom_shape.iter().product::<i64>();
        let slice = t.region.is_some();
        (
            slice,
            t.cost,
            if slice { size } else { -size },
            t.atom.clone(),
        )
    });
    Ok(found)
}

/// Largest number of aligned regions tried per atom.
const MAX_REGIONS: i64 = 256;

/// The aligned regions of `shape` inside an atom whose shape is a multiple of it, each kept when
/// certify proves the slice equal to the layout.
fn slices(
    target: &AxeLayout,
    shape: &[i64],
    name: &str,
    inner: &AxeLayout,
    atom_shape: &[i64],
    swizzle: Option<Swizzle>,
) -> Result<Vec<Tiling>, LayoutError> {
    if shape
        .iter()
        .zip(atom_shape)
        .any(|(s, a)| *s < 1 || a % s != 0)
    {
        return Ok(Vec::new());
    }
    let counts: Vec<i64> = atom_shape.iter().zip(shape).map(|(a, s)| a / s).collect();
    let total = counts.iter().try_fold(1i64, |acc, c| acc.checked_mul(*c));
    if total.is_none_or(|t| t > MAX_REGIONS) {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for k in 0..total.unwrap_or(0) {
        let mut rest = k;
        let mut region = Vec::with_capacity(shape.len());
        for d in (0..shape.len()).rev() {
            let b = (rest % counts[d]) * shape[d];
            rest /= counts[d];
            region.push((b, b + shape[d]));
        }
        region.reverse();
        let Ok(piece) = axe::slice(inner, atom_shape, &region) else {
            continue;
        };
        let report = equivalent(
            &Layout::Axe(piece),
            &Layout::Axe(target.clone()),
            Some(shape),
            &Policy {
                // Many regions: the normal form and enumeration decide each in microseconds.
                use_smt: false,
                ..Policy::default()
            },
        )?;
        if report.verdict() == "equivalent" {
            out.push(Tiling {
                atom: name.to_string(),
                atom_shape: atom_shape.to_vec(),
                outer: AxeLayout::new(Vec::new(), Vec::new(), Default::default())?,
                outer_shape: vec![1; shape.len()],
                swizzle,
                cost: 0,
                proved_by: report
                    .deciding()
                    .iter()
                    .map(|d| d.name().to_string())
                    .collect(),
                region: Some(region),
            });
        }
    }
    Ok(out)
}
