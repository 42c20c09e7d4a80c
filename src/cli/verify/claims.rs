//! Corpus claims, decided by certify: equivalences by every decider the domain allows,
//! properties, refinement and equality on a region. A false claim's witness is re-checked by
//! the trusted semantics: the two sides must differ there.

use std::time::Instant;

use certify::claim::semantic_points;
use certify::property::{equal_on_region, prove_property, refines, Property};
use certify::{equivalent, Policy};
use corpus::{Claim, ClaimKind, Operand};
use layout::{Layout, LayoutError};

use super::check::{Check, Subject, Suite};

/// Every corpus claim.
pub struct Claims {
    claims: Vec<Claim>,
    policy: Policy,
}

impl Claims {
    /// The checks of `claims`, decided under the default policy.
    pub fn new(claims: &[Claim]) -> Claims {
        Claims {
            claims: claims.to_vec(),
            policy: Policy::default(),
        }
    }
}

/// A decided claim: the verdict word, the deciders that reached it, and the evidence.
struct Decision {
    verdict: String,
    deciders: Vec<String>,
    detail: Option<String>,
}

impl Suite for Claims {
    fn kind(&self) -> &'static str {
        "claim"
    }

    fn len(&self) -> usize {
        self.claims.len()
    }

    fn run(&self, i: usize) -> Check {
        let c = &self.claims[i];
        let t = Instant::now();
        let d = decide(c, &self.policy).unwrap_or_else(|e| Decision {
            verdict: "error".into(),
            deciders: Vec::new(),
            detail: Some(e.to_string()),
        });
        let mut subjects = vec![side("left", &c.left, c)];
        subjects.extend(c.right.as_ref().map(|r| side("right", r, c)));
        Check {
            kind: self.kind(),
            name: c.name.clone(),
            source: c.source.clone(),
            expected: c.expected().to_string(),
            got: d.verdict,
            detail: d.detail,
            deciders: d.deciders,
            micros: t.elapsed().as_micros(),
            subjects,
        }
    }
}

fn side(role: &str, o: &Operand, c: &Claim) -> Subject {
    Subject {
        role: match &o.atom {
            Some(a) => format!("{role} (atom {a})"),
            None => role.to_string(),
        },
        text: o.text.clone(),
        tensor_shape: o.tensor_shape.clone(),
        shape: c.shape.clone(),
    }
}

fn parse(o: &Operand) -> Result<Layout, LayoutError> {
    Layout::parse(&o.text, o.tensor_shape.as_deref())
}

/// TV and linear layouts fix their logical side; `shape` is for the others.
fn fixes_shape(l: &Layout) -> bool {
    matches!(l, Layout::Tv(_) | Layout::Linear(_))
}

fn decide(c: &Claim, policy: &Policy) -> Result<Decision, LayoutError> {
    let left = parse(&c.left)?;
    let right = c.right.as_ref().map(parse).transpose()?;
    let logical = c
        .shape
        .as_deref()
        .filter(|_| !fixes_shape(&left) || right.as_ref().is_some_and(|r| !fixes_shape(r)));
    let (yes, no) = c.kind.words();
    let word = |holds: bool| if holds { yes } else { no }.to_string();
    let property = |p| -> Result<Decision, LayoutError> {
        let r = prove_property(&left, p, logical, policy)?;
        Ok(Decision {
            verdict: r.verdict.to_string(),
            deciders: r
                .deciders
                .iter()
                .filter(|(_, v)| v != "unknown")
                .map(|(d, _)| d.clone())
                .collect(),
            detail: r.detail,
        })
    };
    let Some(right) = right else {
        return match c.kind {
            ClaimKind::Injective => property(Property::Injective),
            ClaimKind::Surjective => property(Property::Surjective),
            _ => property(Property::Bijective),
        };
    };
    let mut d = match c.kind {
        ClaimKind::Refines | ClaimKind::EqualOnRegion => {
            let found = if c.kind == ClaimKind::Refines {
                refines(&left, &right, logical)?
            } else {
                let shape = logical.ok_or_else(|| {
                    LayoutError::invalid("equal_on_region", "needs a logical shape")
                })?;
                let region = c.region.as_deref().unwrap_or_default();
                equal_on_region(&left, &right, shape, region)?
            };
            Decision {
                verdict: word(found.is_ok()),
                deciders: vec!["exhaustive".into()],
                detail: found.err().map(|x| format!("fails at logical {x:?}")),
            }
        }
        _ => {
            let r = equivalent(&left, &right, logical, policy)?;
            let detail = r
                .counterexample
                .as_ref()
                .map(|x| format!("counterexample at logical {:?}", x.coord));
            Decision {
                verdict: r.verdict().to_string(),
                deciders: r.deciding().iter().map(|k| k.name().to_string()).collect(),
                detail,
            }
        }
    };
    if let Some(w) = &c.witness {
        let shape = certify::domain::resolve(&left, &right, logical)?.shape;
        let (pa, pb) = (
            semantic_points(&left, &shape, w)?,
            semantic_points(&right, &shape, w)?,
        );
        let fails_there = match c.kind {
            ClaimKind::Refines => !pa.is_subset(&pb),
            _ => pa != pb,
        };
        if fails_there {
            d.detail = Some(match d.detail {
                Some(x) => format!("{x}; witness {w:?} confirmed by the semantics"),
                None => format!("witness {w:?} confirmed by the semantics"),
            });
        } else {
            d.verdict = format!("{} (but the sides agree at witness {w:?})", d.verdict);
        }
    }
    Ok(d)
}
