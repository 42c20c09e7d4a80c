//! Claims with expected verdicts: what `laycert verify` decides and compares.
//!
//! ```toml
//! [[claim]]
//! name = "sm80-c-equals-triton-mmav2-16x8"
//! kind = "equivalent"
//! left = "atom:SM80_16x8x16_F16F16F16F16_TN.C"
//! right = "atom:triton.mma_v2.16x8"
//! expect = "equivalent"
//! source = "spec linear.md 3: CuTe SM80 C equals Triton MMAv2 on 16x8"
//! ```
//!
//! `kind` is `equivalent`, `injective`, `surjective`, `bijective`, `refines` or
//! `equal_on_region` (with `region = [[lo, hi], ...]`). `expect` is `equivalent` /
//! `not equivalent` for equivalences and `proved` / `refuted` for the rest. A false claim may
//! name `witness`, a logical coordinate where the two sides differ; verify checks it by the
//! semantics. An operand is layout text or `atom:NAME`; `shape` is the logical shape (and the
//! tensor shape of Triton attributes written inline).

use crate::entry::Entry;
use crate::error::CorpusError;

/// What a claim asserts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ClaimKind {
    /// The two sides relate the same (logical, physical) pairs.
    Equivalent,
    /// No physical point reached from two logical coordinates.
    Injective,
    /// The image fills its bounding box.
    Surjective,
    /// Both.
    Bijective,
    /// Every pair of the left side is a pair of the right side.
    Refines,
    /// The two sides agree on a box of logical coordinates.
    EqualOnRegion,
}

impl ClaimKind {
    /// The spelling in corpus files.
    pub fn name(self) -> &'static str {
        match self {
            ClaimKind::Equivalent => "equivalent",
            ClaimKind::Injective => "injective",
            ClaimKind::Surjective => "surjective",
            ClaimKind::Bijective => "bijective",
            ClaimKind::Refines => "refines",
            ClaimKind::EqualOnRegion => "equal_on_region",
        }
    }

    /// Whether the claim relates two layouts.
    pub fn is_binary(self) -> bool {
        matches!(
            self,
            ClaimKind::Equivalent | ClaimKind::Refines | ClaimKind::EqualOnRegion
        )
    }

    /// The verdict words for holding and failing.
    pub fn words(self) -> (&'static str, &'static str) {
        match self {
            ClaimKind::Equivalent => ("equivalent", "not equivalent"),
            _ => ("proved", "refuted"),
        }
    }

    fn parse(s: &str) -> Option<ClaimKind> {
        [
            ClaimKind::Equivalent,
            ClaimKind::Injective,
            ClaimKind::Surjective,
            ClaimKind::Bijective,
            ClaimKind::Refines,
            ClaimKind::EqualOnRegion,
        ]
        .into_iter()
        .find(|k| k.name() == s)
    }
}

/// One side of a claim.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Operand {
    /// The text as written (`atom:NAME` or layout text).
    pub written: String,
    /// The layout text (the atom's, when it refers to one).
    pub text: String,
    /// The tensor shape to parse it with (the atom's, or the claim's `shape`).
    pub tensor_shape: Option<Vec<i64>>,
    /// The atom it refers to.
    pub atom: Option<String>,
}

/// One claim of the corpus.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Claim {
    /// Unique name across the corpus.
    pub name: String,
    /// The file it is in.
    pub file: String,
    /// What it asserts.
    pub kind: ClaimKind,
    /// The layout (left side).
    pub left: Operand,
    /// The right side of a binary claim.
    pub right: Option<Operand>,
    /// The logical shape to decide over.
    pub shape: Option<Vec<i64>>,
    /// The box of `equal_on_region`, `[lo, hi)` per dim.
    pub region: Option<Vec<(i64, i64)>>,
    /// Whether it is expected to hold.
    pub holds: bool,
    /// For a false claim: a logical coordinate where it fails.
    pub witness: Option<Vec<i64>>,
    /// Where the fact comes from.
    pub source: String,
}

impl Claim {
    /// The expected verdict word.
    pub fn expected(&self) -> &'static str {
        let (yes, no) = self.kind.words();
        if self.holds {
            yes
        } else {
            no
        }
    }

    /// Reads a `[[claim]]` entry. Operands referring to atoms are resolved by the loader.
    pub fn read(e: &mut Entry) -> Result<Claim, CorpusError> {
        let name = e.str("name")?;
        let kind_text = e.str("kind")?;
        let kind = ClaimKind::parse(&kind_text).ok_or_else(|| {
            e.error(
                "kind",
                format!(
                    "{kind_text:?} is not one of equivalent, injective, surjective, bijective, \
                     refines, equal_on_region"
                ),
            )
        })?;
        let shape = e.opt_ints("shape")?;
        let left = operand(e, "left", shape.as_deref())?;
        let right = match (kind.is_binary(), e.opt_str("right")?) {
            (true, Some(_)) => Some(operand(e, "right", shape.as_deref())?),
            (true, None) => return Err(e.error("right", "missing (this kind relates two layouts)")),
            (false, Some(_)) => return Err(e.error("right", "a property claim has one layout")),
            (false, None) => None,
        };
        let region = e.opt_pairs("region")?;
        match (kind == ClaimKind::EqualOnRegion, &region, &shape) {
            (true, None, _) => return Err(e.error("region", "missing (equal_on_region needs it)")),
            (true, Some(_), None) => return Err(e.error("shape", "missing (a region needs it)")),
            (false, Some(_), _) => return Err(e.error("region", "only equal_on_region has one")),
            _ => {}
        }
        let expect = e.str("expect")?;
        let (yes, no) = kind.words();
        let holds = if expect == yes {
            true
        } else if expect == no {
            false
        } else {
            return Err(e.error("expect", format!("{expect:?}: expected {yes:?} or {no:?}")));
        };
        let witness = e.opt_ints("witness")?;
        if holds && witness.is_some() {
            return Err(e.error("witness", "only a claim expected to fail has a witness"));
        }
        let source = e.str("source")?;
        e.finish_with(&[])?;
        Ok(Claim {
            name,
            file: e.file().to_string(),
            kind,
            left,
            right,
            shape,
            region,
            holds,
            witness,
            source,
        })
    }
}

/// Reads an operand field; layout text is checked here, `atom:` references by the loader.
fn operand(
    e: &mut Entry,
    field: &'static str,
    shape: Option<&[i64]>,
) -> Result<Operand, CorpusError> {
    let written = e.str(field)?;
    if let Some(name) = written.strip_prefix("atom:") {
        return Ok(Operand {
            written: written.clone(),
            text: String::new(),
            tensor_shape: None,
            atom: Some(name.trim().to_string()),
        });
    }
    e.check_layout(field, &written, shape)?;
    Ok(Operand {
        text: written.clone(),
        written,
        tensor_shape: shape.map(<[i64]>::to_vec),
        atom: None,
    })
}
