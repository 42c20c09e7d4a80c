//! The domain of a claim (spec certify.md section 1b): ONE definition, used by `equiv`, the
//! steps of `equiv-expr`/`simplify` chains, `validate`, rule proofs (both the exhaustive and the
//! symbolic path) and movement claims.
//!
//! # Definition
//!
//! A claim about two layouts `A` and `B` is decided over one LOGICAL DOMAIN: a shape `D`, whose
//! points are N-D coordinates `c`. Both sides are evaluated at the same `c`; each side reads `c`
//! in its own notation's order ([`Order`]): CuTe (and swizzled CuTe) flatten `c`
//! colexicographically, Axe row-major; TV and linear layouts take `c` as their logical cell.
//!
//! Each layout has a NATURAL domain ([`natural`]): CuTe its top-level mode sizes, Axe `[size]`
//! (one flat index), a CuTe TV layout its tile and a linear layout its out-dim sizes. The last
//! two are FIXED: no other domain is meaningful for them. When the claim names no shape,
//! [`resolve`] picks the domain by these rules, in order; none depends on which side is left:
//!
//! 1. a fixed side gives the domain (two fixed sides must have the same one);
//! 2. two equal natural domains give that domain;
//! 3. natural domains of different sizes are not comparable (an error naming both);
//! 4. sides read in the SAME order: when exactly one natural domain has rank >= 2 it is the
//!    domain, else the flat index `[n]`; both sides flatten any shape of size `n` the same way,
//!    so the verdict is the same over every such shape;
//! 5. sides read in DIFFERENT orders (CuTe against Axe, TV or linear) whose natural domains
//!    differ: the flat index `[n]` when neither has two extents above 1 (every reading of such
//!    a shape is the flat index), else the claim is ambiguous and the caller must name a shape
//!    (`--shape`). Rule 1 is subject to this too: a fixed side gives the domain to a side read
//!    in the other order only when their natural domains are equal or both flat.
//!
//! A named shape is used as given (a fixed side must agree with it).
//!
//! Why this is symmetric: every rule is stated on the unordered pair of sides. Why rule 5
//! refuses: over a shape of rank >= 2 a colexicographic and a row-major side read different
//! flat indices, so their verdict depends on the shape, while two sides read in one order get
//! the same verdict over every shape of their size. Picking one side's rank >= 2 domain for a
//! mixed pair would make `equivalent` intransitive: `S[32:1]` (Axe, `[32]`) and `32:1` (CuTe,
//! `[32]`) are equal over the flat index, `32:1` and `(4,8):(1,4)` (both CuTe) are equal over
//! every shape, yet `S[32:1]` and `(4,8):(1,4)` differ over `(4,8)` (Axe reads `(0,1)` as
//! index 1, CuTe as index 4). With rule 5 every verdict given without a shape is a verdict
//! about each side's own map (its flat function in its order, or its function over its own
//! natural domain when the two sides' domains are equal), so verdicts chain: `A ~ B` and
//! `B ~ C` decided give `A ~ C` whenever `A ~ C` is decided.
//!
//! Example: `S[(3,3):(3,1)]` (Axe, natural `[9]`) and `(3,3):(1,3)` (CuTe, natural `(3,3)`)
//! agree at every flat index (both are the identity there) but not at the coordinate `(0,1)` of
//! `(3,3)` (Axe reads it as index 1, CuTe as index 3): the claim names no shape, so it is
//! ambiguous (rule 5), whichever side is written first; `--shape 9` or `--shape 3,3` decides it.
//!
//! ```
//! use certify::domain::{resolve, Source};
//! use layout::Layout;
//! let axe = Layout::parse("S[(3,3):(3,1)]", None)?;
//! let cute = Layout::parse("(3,3):(1,3)", None)?;
//! assert!(resolve(&axe, &cute, None).is_err());
//! assert!(resolve(&cute, &axe, None).is_err());
//! let d = resolve(&axe, &cute, Some(&[3, 3]))?;
//! assert_eq!((d.shape, d.source), (vec![3, 3], Source::Given));
//! // Two CuTe layouts of different shapes read alike: the flat index.
//! let d = resolve(&cute, &Layout::parse("9:1", None)?, None)?;
//! assert_eq!((d.shape, d.source), (vec![3, 3], Source::Left));
//! # Ok::<(), layout::LayoutError>(())
//! ```

use layout::{Layout, LayoutError};

use crate::forward::default_logical_shape;

/// How a side reads an N-D coordinate of the claim's domain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// CuTe: the first mode varies fastest.
    Colex,
    /// Axe/TIRx and Triton: the last mode varies fastest.
    RowMajor,
}

impl Order {
    /// `colexicographic` or `row-major`.
    pub fn name(self) -> &'static str {
        match self {
            Order::Colex => "colexicographic",
            Order::RowMajor => "row-major",
        }
    }

    /// How a side reads: `colexicographically` or `row-major`.
    pub fn how(self) -> &'static str {
        match self {
            Order::Colex => "colexicographically",
            Order::RowMajor => "row-major",
        }
    }
}

/// Where the domain came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// The claim named it.
    Given,
    /// Both sides' natural domains are this shape (rules 1 and 2).
    Both,
    /// The left side's natural domain (fixed, or the only one of rank >= 2).
    Left,
    /// The right side's natural domain (fixed, or the only one of rank >= 2).
    Right,
    /// The flat index: both sides read every shape of this size in the same order (rule 5).
    Flat,
}

/// A layout's natural domain: shape, coordinate order, and whether it is fixed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Natural {
    /// The shape.
    pub shape: Vec<i64>,
    /// How the layout reads coordinates.
    pub order: Order,
    /// TV and linear layouts admit no other domain.
    pub fixed: bool,
}

/// The natural domain of `l` (see the module doc).
pub fn natural(l: &Layout) -> Natural {
    let (order, fixed) = match l {
        Layout::Cute(_) | Layout::Swizzled(_) => (Order::Colex, false),
        Layout::Axe(_) => (Order::RowMajor, false),
        Layout::Tv(_) | Layout::Linear(_) => (Order::RowMajor, true),
    };
    Natural {
        shape: default_logical_shape(l),
        order,
        fixed,
    }
}

/// The resolved domain of a claim.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Domain {
    /// The logical shape both sides are evaluated over.
    pub shape: Vec<i64>,
    /// Which rule chose it.
    pub source: Source,
    /// How the left and the right side read its coordinates.
    pub orders: [Order; 2],
}

impl Domain {
    /// One line that states the domain: the shape, where it came from, and how each side reads
    /// it when that matters (a rank >= 2 shape read in two orders).
    /// Example: `(3,3), the right side's natural domain; left reads it row-major, right
    /// colexicographically`.
    pub fn describe(&self) -> String {
        let shape = format!(
            "({})",
            self.shape
                .iter()
                .map(i64::to_string)
                .collect::<Vec<_>>()
                .join(",")
        );
        let from = match self.source {
            Source::Given => "given",
            Source::Both => "both sides' natural domain",
            Source::Left => "the left side's natural domain",
            Source::Right => "the right side's natural domain",
            Source::Flat => "the flat index (both sides read every shape of this size alike)",
        };
        let mut out = format!("{shape}, {from}");
        if self.shape.len() >= 2 && self.orders[0] != self.orders[1] {
            out.push_str(&format!(
                "; left reads it {}, right {}",
                self.orders[0].how(),
                self.orders[1].how()
            ));
        }
        out
    }
}

fn show(s: &[i64]) -> String {
    format!(
        "({})",
        s.iter().map(i64::to_string).collect::<Vec<_>>().join(",")
    )
}

fn size(s: &[i64]) -> Option<i64> {
    s.iter().try_fold(1i64, |acc, &e| acc.checked_mul(e))
}

/// Resolves the domain of a claim about `a` and `b` (see the module doc). `given` is the shape
/// the claim names, if any. Errors: a fixed side that disagrees with the given shape or with
/// the other fixed side, natural domains of different sizes, and an ambiguous pair (rule 6).
pub fn resolve(a: &Layout, b: &Layout, given: Option<&[i64]>) -> Result<Domain, LayoutError> {
    resolve_pair(a, b, given).map_err(|e| LayoutError::invalid("the claim's domain", e.to_string()))
}

/// Why a claim has no domain.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NoDomain {
    /// The sides cannot be compared over one domain (different sizes, two different fixed
    /// domains, a fixed side against another given shape): as a claim of equality, refuted.
    #[error("{0}")]
    NotComparable(String),
    /// Rule 5: the verdict depends on the shape and none was named. `why` names the two
    /// readings; the message adds the shapes to name with `--shape` (a caller with another way
    /// to name one, a rule's `over`, a log line's `"shape"`, says its own instead).
    #[error("{why}; name one with --shape (e.g. {choices})")]
    Ambiguous {
        /// The two sides' readings and why they part.
        why: String,
        /// The shapes to choose from, as `--shape 9, or --shape 3,3`.
        choices: String,
    },
}

/// [`resolve`] with the reason typed: what cannot be compared, or what is ambiguous.
pub fn resolve_pair(a: &Layout, b: &Layout, given: Option<&[i64]>) -> Result<Domain, NoDomain> {
    let (na, nb) = (natural(a), natural(b));
    let orders = [na.order, nb.order];
    let domain = |shape: Vec<i64>, source| Domain {
        shape,
        source,
        orders,
    };
    let bad = NoDomain::NotComparable;
    if let Some(g) = given {
        for (side, n) in [("left", &na), ("right", &nb)] {
            if n.fixed && n.shape != g {
                return Err(bad(format!(
                    "the {side} side's domain is fixed to {} (its tile or out-dims), not the given {}",
                    show(&n.shape),
                    show(g)
                )));
            }
        }
        return Ok(domain(g.to_vec(), Source::Given));
    }
    // Rule 5: sides read in different orders share a reading only of equal natural domains or
    // of flat ones.
    let flat = |n: &Natural| n.shape.iter().filter(|&&e| e != 1).count() <= 1;
    let alike = na.order == nb.order || na.shape == nb.shape || (flat(&na) && flat(&nb));
    let ambiguous = || {
        let list = |s: &[i64]| s.iter().map(i64::to_string).collect::<Vec<_>>().join(",");
        let wide = if flat(&na) { &nb } else { &na };
        NoDomain::Ambiguous {
            why: format!(
                "ambiguous: left reads {} {}, right reads {} {}; over {} the sides read different \
                 flat indices, so the verdict depends on the shape",
                show(&na.shape),
                na.order.name(),
                show(&nb.shape),
                nb.order.name(),
                show(&wide.shape),
            ),
            choices: format!(
                "--shape {}, or --shape {}",
                size(&na.shape).map_or("n".into(), |n| n.to_string()),
                list(&wide.shape)
            ),
        }
    };
    match (na.fixed, nb.fixed) {
        (true, true) if na.shape != nb.shape => {
            return Err(bad(format!(
                "both sides' domains are fixed and differ: left {}, right {}",
                show(&na.shape),
                show(&nb.shape)
            )))
        }
        (true, true) => return Ok(domain(na.shape, Source::Both)),
        // A fixed side against the other order: the size check below, then rule 5.
        (true, false) | (false, true) if !alike => {}
        (true, false) => return Ok(domain(na.shape, Source::Left)),
        (false, true) => return Ok(domain(nb.shape, Source::Right)),
        (false, false) => {}
    }
    if na.shape == nb.shape {
        return Ok(domain(na.shape, Source::Both));
    }
    let (sa, sb) = (size(&na.shape), size(&nb.shape));
    if sa != sb {
        return Err(bad(format!(
            "the sides relate different numbers of logical coordinates: left {} ({} points), right {} ({} points)",
            show(&na.shape),
            sa.map_or("overflowing".into(), |n| n.to_string()),
            show(&nb.shape),
            sb.map_or("overflowing".into(), |n| n.to_string()),
        )));
    }
    let n = sa.ok_or_else(|| bad("the domain's size overflows i64".into()))?;
    if !alike {
        return Err(ambiguous());
    }
    match (na.shape.len() >= 2, nb.shape.len() >= 2) {
        (true, false) if na.order == nb.order => Ok(domain(na.shape, Source::Left)),
        (false, true) if na.order == nb.order => Ok(domain(nb.shape, Source::Right)),
        _ => Ok(domain(vec![n], Source::Flat)),
    }
}
