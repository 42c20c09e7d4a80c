//! The normal-form decider: both layouts converted exactly to their F2 form (Triton's
//! hardware -> logical bases) and compared structurally.
//!
//! An F2-linear map is determined by its bases, and the exact conversions of `layout::convert`
//! read in-dims off the physical bit ranges, so two layouts relating the same pairs convert to
//! the same bases: equal forms prove equivalence, different forms refute it. The refutation's
//! witness: an input bit `h` whose bases differ; at the logical cell `c = A(h)`, `A` relates
//! `h` and `B` does not (it sends `h` to `B(h) != c`). Preconditions, else `unknown`: both
//! sides have an exact F2 form over the claim's shape, and no `lane` in-dim has more than 5
//! bits (the common vocabulary reads thread ids as `laneid + 32*warpid`).
//! Example: `(4,2):(2,1)` and `S[(4,2):(2,1)]` both become `offset: [[0,1],[1,0],[2,0]]`.

use layout::convert::{convert, Target};
use layout::{Layout, LinearLayout};

use crate::decider::{Counterexample, Outcome};
use crate::forward::Forward;

/// The F2 normal form of `l` over `shape` (empty in-dims dropped, in-dims sorted by name), or
/// why there is none.
pub fn f2_form(l: &Layout, shape: &[i64]) -> Result<LinearLayout, String> {
    let logical = if matches!(l, Layout::Tv(_) | Layout::Linear(_)) {
        None
    } else {
        Some(shape)
    };
    match convert(l, Target::Linear, logical) {
        Ok(Layout::Linear(f)) => {
            if f.in_dim("lane").is_some_and(|d| d.bases.len() > 5) {
                return Err("a lane in-dim of more than 32 lanes".into());
            }
            // Size-1 in-dims carry nothing; order the rest by name.
            let mut ins: Vec<_> = f
                .ins()
                .iter()
                .filter(|d| !d.bases.is_empty())
                .cloned()
                .collect();
            ins.sort_by(|x, y| x.name.cmp(&y.name));
            LinearLayout::new(ins, f.outs().to_vec()).map_err(|e| e.to_string())
        }
        Ok(_) => Err("conversion gave no linear layout".into()),
        Err(e) => Err(e.to_string()),
    }
}

/// Decides `a == b` by F2 normal forms; `fa`, `fb` are the sides' forward forms over common
/// axes (used only to render the counterexample's point sets).
pub fn decide(a: &Layout, b: &Layout, shape: &[i64], fa: &Forward, fb: &Forward) -> Outcome {
    let (na, nb) = match (f2_form(a, shape), f2_form(b, shape)) {
        (Ok(x), Ok(y)) => (x, y),
        (Err(why), _) | (_, Err(why)) => {
            return Outcome::Unknown {
                reason: format!("no F2 normal form: {why}"),
            }
        }
    };
    if na.outs() != nb.outs() {
        return Outcome::Unknown {
            reason: "the F2 forms have different out-dims".into(),
        };
    }
    if na == nb {
        let bits: usize = na.total_in_bits();
        return Outcome::Proved {
            evidence: format!("identical F2 normal forms ({bits} input bits)"),
        };
    }
    // Find an input bit whose images differ (missing in-dims/bits count as a different image).
    let names: Vec<&str> = na
        .ins()
        .iter()
        .chain(nb.ins())
        .map(|d| d.name.as_str())
        .collect();
    for name in names {
        let (da, db) = (na.in_dim(name), nb.in_dim(name));
        let len = da
            .map_or(0, |d| d.bases.len())
            .max(db.map_or(0, |d| d.bases.len()));
        for k in 0..len {
            let ba = da.and_then(|d| d.bases.get(k));
            let bb = db.and_then(|d| d.bases.get(k));
            if ba == bb {
                continue;
            }
            // Read the cell from the side that has the bit.
            let cell = ba.or(bb).expect("one side has it").clone();
            let Ok(index) = layout::shape::flatten_row_major(&fa.shape, &cell) else {
                continue;
            };
            let (left, right) = (fa.points(index), fb.points(index));
            if left != right {
                return Outcome::Refuted {
                    counterexample: Counterexample {
                        index,
                        coord: cell,
                        left,
                        right,
                    },
                };
            }
        }
    }
    Outcome::Unknown {
        reason: "the F2 forms differ but no witness bit was found".into(),
    }
}
