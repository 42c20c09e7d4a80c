//! Decomposition search: is a layout `tile(atom, C)`, or `Sw o tile(atom, C)`, for an atom of a
//! library (the corpus's hardware atoms)? For every atom whose logical shape divides the
//! layout's shape dim by dim, Axe's `tile_of` recovers the outer layout `C` when one exists
//! (axe.md §4); the candidate is kept only after certify proves `tile(atom, C)` equivalent to
//! the layout. Candidates are ranked by a cost model: fewer iters in `C`'s canonical form first
//! (a simpler repetition), then the larger atom, then the name.
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
}

impl fmt::Display for Tiling {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(sw) = &self.swizzle {
            write!(f, "{sw} o ")?;
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
        if atom_shape.len() != shape.len()
            || shape
                .iter()
                .zip(&atom_shape)
                .any(|(s, a)| *a < 1 || s % a != 0)
        {
            continue;
        }
        let Ok(Layout::Axe(inner)) = convert(&atom_base, Target::Axe, Some(&atom_shape)) else {
            continue;
        };
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
        });
    }
    found.sort_by(|x, y| {
        let size = |t: &Tiling| t.atom_shape.iter().product::<i64>();
        (x.cost, std::cmp::Reverse(size(x)), &x.atom).cmp(&(
            y.cost,
            std::cmp::Reverse(size(y)),
            &y.atom,
        ))
    });
    Ok(found)
}
