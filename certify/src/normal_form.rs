//! The normal-form decider. Two strided forms (CuTe, Axe, TV and linear layouts with an exact
//! strided form: any extents, stride 0, size 1, negative strides, offsets, replicas) are
//! compared by their [`crate::canonical`] forms, complete at any size: identical forms prove
//! equivalence, different forms refute it at the first differing index, with the count of
//! differing indices. Two swizzled forms with the same swizzle are equal when their unswizzled
//! forms are, and differ where the unswizzled forms first differ if the swizzled points do
//! there. Every other pair (XOR-mixed linear layouts, tables) goes through the F2 form.
//!
//! F2 form: both layouts converted exactly to Triton's hardware -> logical bases and compared
//! structurally.
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

use crate::canonical::{canonicalize, compare, Comparison};
use crate::decider::{Counterexample, Explanation, Outcome};
use crate::forward::{Forward, ForwardKind};

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

/// Decides `a == b` by canonical forms (strided pairs) or F2 normal forms (the rest); `fa`,
/// `fb` are the sides' forward forms over common axes.
pub fn decide(a: &Layout, b: &Layout, shape: &[i64], fa: &Forward, fb: &Forward) -> Outcome {
    if let Some(o) = decide_strided(fa, fb) {
        return o;
    }
    decide_f2(a, b, shape, fa, fb)
}

/// The F2 normal-form decision where the sides have no forward form (a table past its limit):
/// proved when the normal forms are identical, else unknown (a refutation needs the points
/// of a witness, which the forward forms give).
pub fn decide_f2_without_forms(a: &Layout, b: &Layout, shape: &[i64]) -> Outcome {
    match (f2_form(a, shape), f2_form(b, shape)) {
        (Ok(na), Ok(nb)) if na == nb => Outcome::Proved {
            evidence: format!(
                "identical F2 normal forms ({} input bits)",
                na.total_in_bits()
            ),
        },
        (Ok(_), Ok(_)) => Outcome::Unknown {
            reason: "the F2 normal forms differ, and the sides are too large for a forward \
                     form to find the witness's points"
                .into(),
        },
        (Err(why), _) | (_, Err(why)) => Outcome::Unknown {
            reason: format!("no F2 normal form: {why}"),
        },
    }
}

/// Most differing indices listed in an explanation, and most indices scanned to find them.
const LISTED: usize = 3;
const SCANNED: i64 = 256;

/// The canonical-form decision of two strided forms, or `None` when it does not apply (a
/// table, different swizzles, an overflow).
pub fn decide_strided(fa: &Forward, fb: &Forward) -> Option<Outcome> {
    if fa.size() != fb.size() || fa.axes != fb.axes {
        return None;
    }
    let (ForwardKind::Strided { swizzle: wa, .. }, ForwardKind::Strided { swizzle: wb, .. }) =
        (&fa.kind, &fb.kind)
    else {
        return None;
    };
    if wa.is_some() || wb.is_some() {
        // sw(F) == sw(G) whenever F == G; a difference under one swizzle may still vanish.
        if wa != wb {
            return None;
        }
        let (ua, ub) = (unswizzled(fa), unswizzled(fb));
        let (ca, cb) = (canonicalize(&ua)?, canonicalize(&ub)?);
        return match compare(&ca, &cb, &ua, &ub)? {
            Comparison::Equal => Some(Outcome::Proved {
                evidence: format!(
                    "the same swizzle after identical canonical forms ({} digits)",
                    ca.digits.len()
                ),
            }),
            // Refute only where the swizzled points differ (a swizzle that merges values
            // could hide the difference; then the F2 form and the other deciders decide).
            Comparison::Differ(d) => {
                let (left, right) = (fa.points(d.first), fb.points(d.first));
                (left != right).then(|| Outcome::Refuted {
                    counterexample: Counterexample {
                        index: d.first,
                        coord: layout::shape::unflatten_row_major(&fa.shape, d.first)
                            .unwrap_or_default(),
                        left,
                        right,
                        explanation: None,
                    },
                })
            }
        };
    }
    let (ca, cb) = (canonicalize(fa)?, canonicalize(fb)?);
    match compare(&ca, &cb, fa, fb)? {
        Comparison::Equal => Some(Outcome::Proved {
            evidence: format!(
                "identical canonical forms ({} digits after merging, {} logical indices)",
                ca.digits.len(),
                ca.size
            ),
        }),
        Comparison::Differ(d) => {
            let index = d.first;
            let (left, right) = (fa.points(index), fb.points(index));
            if left == right {
                return Some(Outcome::Unknown {
                    reason: format!(
                        "the canonical forms part at index {index}, where the points agree"
                    ),
                });
            }
            let coord_of =
                |x: i64| layout::shape::unflatten_row_major(&fa.shape, x).unwrap_or_default();
            let mut first = vec![coord_of(index)];
            let end = fa.size().min(index.saturating_add(SCANNED));
            first.extend(
                (index + 1..end)
                    .filter(|&x| fa.points(x) != fb.points(x))
                    .take(LISTED - 1)
                    .map(coord_of),
            );
            let coord = coord_of(index);
            let mode = (index > 0)
                .then(|| coord.iter().rposition(|&c| c != 0))
                .flatten();
            Some(Outcome::Refuted {
                counterexample: Counterexample {
                    index,
                    coord,
                    left,
                    right,
                    explanation: Some(Explanation {
                        differing: d.count,
                        of: fa.size(),
                        first,
                        mode,
                        why: d.why,
                    }),
                },
            })
        }
    }
}

fn unswizzled(f: &Forward) -> Forward {
    let mut u = f.clone();
    if let ForwardKind::Strided { swizzle, .. } = &mut u.kind {
        *swizzle = None;
    }
    u
}

/// Decides `a == b` by F2 normal forms; `fa`, `fb` render the counterexample's point sets.
fn decide_f2(a: &Layout, b: &Layout, shape: &[i64], fa: &Forward, fb: &Forward) -> Outcome {
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
                        explanation: None,
                    },
                };
            }
        }
    }
    Outcome::Unknown {
        reason: "the F2 forms differ but no witness bit was found".into(),
    }
}
