//! Certificates: versioned JSON records of a decided claim that anyone can re-check from
//! scratch with [`check`], which re-parses both layouts, re-runs every decider named in the
//! certificate, and fails on any difference in verdict, evidence, counterexample or digest.
//!
//! The `digest` is SHA-256 over the certificate's other fields (serialized in a fixed order),
//! so an edit anywhere that is not re-derived is caught even before the deciders run.
//!
//! What [`check`] re-derives, and by which path: the deciders' verdicts and evidence are
//! re-derived by running the same deciders again (the same code path: that catches edits, not
//! decider bugs). An `equivalent` verdict is ALSO re-derived by a second path that shares no
//! code with the deciders: [`semantic_recheck`] evaluates both layouts with `layout`'s trusted
//! semantics (`Layout::eval` and `layout::relation`, no conversion to the forward form) at every
//! coordinate of the domain when it has at most [`RECHECK_ALL`] points, and otherwise at every
//! corner of the domain, every coordinate with one component at an edge, and
//! [`RECHECK_SAMPLES`] seeded random coordinates. A `not equivalent` verdict's counterexample
//! is re-evaluated by the same trusted semantics (`claim::confirm`).

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use layout::{Layout, LayoutError};

use crate::claim::{equivalent, Policy, Report};
use crate::decider::{Counterexample, DeciderKind, Outcome};

/// The certificate format version this build writes and checks.
pub const VERSION: u32 = 2;

/// What was claimed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClaimText {
    /// `equivalent`.
    pub kind: String,
    /// Left layout, in its notation's printed text.
    pub left: String,
    /// Right layout, in its notation's printed text.
    pub right: String,
    /// The logical shape (the claim's domain, spec certify.md 1b).
    pub shape: Vec<i64>,
    /// How each side reads a coordinate of `shape`: `left <order>, right <order>`
    /// (`colexicographic` for CuTe, `row-major` for Axe, TV and linear layouts).
    pub coordinates: String,
}

/// One decider's evidence.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Evidence {
    /// Which decider.
    pub decider: DeciderKind,
    /// Its outcome.
    pub outcome: Outcome,
}

/// A certificate.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Certificate {
    /// Format version.
    pub version: u32,
    /// The claim.
    pub claim: ClaimText,
    /// `equivalent`, `not equivalent` or `unknown`.
    pub verdict: String,
    /// Axes of the point vectors in the evidence.
    pub axes: Vec<String>,
    /// Every decider that ran.
    pub evidence: Vec<Evidence>,
    /// The confirmed counterexample, when refuted.
    pub counterexample: Option<Counterexample>,
    /// The SMT-LIB2 query z3 answered, when it ran.
    pub smt_query: Option<String>,
    /// SHA-256 over all other fields.
    pub digest: String,
}

/// Builds the certificate of a decided equivalence.
pub fn certify_equivalence(a: &Layout, b: &Layout, report: &Report) -> Certificate {
    let mut c = Certificate {
        version: VERSION,
        claim: ClaimText {
            kind: "equivalent".into(),
            left: a.print(),
            right: b.print(),
            shape: report.shape.clone(),
            coordinates: format!(
                "left {}, right {}",
                report.domain.orders[0].name(),
                report.domain.orders[1].name()
            ),
        },
        verdict: report.verdict().into(),
        axes: report.axes.iter().map(|x| x.to_string()).collect(),
        evidence: report
            .runs
            .iter()
            .map(|r| Evidence {
                decider: r.decider,
                outcome: r.outcome.clone(),
            })
            .collect(),
        counterexample: report.counterexample.clone(),
        smt_query: report.smt_query.clone(),
        digest: String::new(),
    };
    c.digest = digest(&c);
    c
}

/// SHA-256 of the certificate with its digest field blanked.
pub fn digest(c: &Certificate) -> String {
    let mut blank = c.clone();
    blank.digest = String::new();
    let text = serde_json::to_string(&blank).expect("certificates serialize");
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Why a certificate was rejected.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    /// Not a certificate of this format.
    #[error("not a laycert certificate: {0}")]
    Format(String),
    /// The digest does not match the content.
    #[error("digest mismatch: the certificate was edited after it was made")]
    Digest,
    /// A layout in the claim does not parse.
    #[error("claim layout does not parse: {0}")]
    Layout(#[from] LayoutError),
    /// Re-deciding gave something else.
    #[error("re-check differs: {0}")]
    Differs(String),
}

/// Re-verifies a certificate from scratch.
pub fn check(json: &str) -> Result<Certificate, CheckError> {
    let c: Certificate =
        serde_json::from_str(json).map_err(|e| CheckError::Format(e.to_string()))?;
    if c.version != VERSION {
        return Err(CheckError::Format(format!(
            "version {} (this build checks version {VERSION})",
            c.version
        )));
    }
    if digest(&c) != c.digest {
        return Err(CheckError::Digest);
    }
    if c.claim.kind != "equivalent" {
        return Err(CheckError::Format(format!("claim kind {:?}", c.claim.kind)));
    }
    let a = Layout::parse(&c.claim.left, None)?;
    let b = Layout::parse(&c.claim.right, None)?;
    let policy = Policy {
        use_smt: c.evidence.iter().any(|e| e.decider == DeciderKind::Smt),
        ..Policy::default()
    };
    let report = equivalent(&a, &b, Some(&c.claim.shape), &policy)?;
    let fresh = certify_equivalence(&a, &b, &report);
    if fresh.verdict != c.verdict {
        return Err(CheckError::Differs(format!(
            "verdict is {:?}, the certificate says {:?}",
            fresh.verdict, c.verdict
        )));
    }
    let strip = |e: &[Evidence]| -> Vec<(DeciderKind, String)> {
        e.iter()
            .map(|x| {
                (
                    x.decider,
                    serde_json::to_string(&x.outcome).expect("serializes"),
                )
            })
            .collect()
    };
    if strip(&fresh.evidence) != strip(&c.evidence) {
        return Err(CheckError::Differs("a decider's evidence differs".into()));
    }
    if c.verdict == "equivalent" {
        semantic_recheck(&a, &b, &c.claim.shape).map_err(CheckError::Differs)?;
    }
    for (field, same) in [
        ("counterexample", fresh.counterexample == c.counterexample),
        ("smt_query", fresh.smt_query == c.smt_query),
        ("axes", fresh.axes == c.axes),
        ("claim text", fresh.claim == c.claim),
    ] {
        if !same {
            return Err(CheckError::Differs(format!("the {field} differs")));
        }
    }
    Ok(c)
}

/// Domains with at most this many coordinates are re-checked at every coordinate.
pub const RECHECK_ALL: i64 = 1 << 16;
/// Seeded random coordinates re-checked on larger domains (besides the boundary).
pub const RECHECK_SAMPLES: usize = 4096;

/// Re-evaluates an equivalence by `layout`'s semantics alone (see the module doc): every
/// coordinate of small domains; the boundary and a seeded sample of large ones.
pub fn semantic_recheck(a: &Layout, b: &Layout, shape: &[i64]) -> Result<usize, String> {
    let n = layout::shape::size_of(shape).map_err(|e| e.to_string())?;
    let coords: Vec<Vec<i64>> = if n <= RECHECK_ALL {
        (0..n)
            .map(|x| layout::shape::unflatten_row_major(shape, x).map_err(|e| e.to_string()))
            .collect::<Result<_, _>>()?
    } else {
        recheck_sample(shape)
    };
    let (ta, tb) = (Semantics::new(a, shape)?, Semantics::new(b, shape)?);
    for c in &coords {
        let (pa, pb) = (ta.points(c)?, tb.points(c)?);
        if pa != pb {
            return Err(format!(
                "the trusted semantics differ at logical {c:?}: left {pa:?}, right {pb:?}"
            ));
        }
    }
    Ok(coords.len())
}

/// Corners, edge-adjacent coordinates and a seeded sample of a large domain.
fn recheck_sample(shape: &[i64]) -> Vec<Vec<i64>> {
    let mut out = std::collections::BTreeSet::new();
    let edges = |e: i64| -> Vec<i64> {
        let mut v = vec![0, 1, e / 2, e - 2, e - 1];
        v.retain(|x| (0..e).contains(x));
        v
    };
    // Products of edge values over every dimension, capped (rank is small in practice).
    let mut corners: Vec<Vec<i64>> = vec![vec![]];
    for &e in shape {
        let mut next = Vec::new();
        for c in &corners {
            for v in edges(e) {
                let mut c = c.clone();
                c.push(v);
                next.push(c);
            }
        }
        next.truncate(RECHECK_SAMPLES);
        corners = next;
    }
    out.extend(corners);
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    for _ in 0..RECHECK_SAMPLES {
        let c: Vec<i64> = shape
            .iter()
            .map(|&e| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state % e as u64) as i64
            })
            .collect();
        out.insert(c);
    }
    out.into_iter().collect()
}

/// A layout's trusted semantics over a shape: TV and linear layouts are read backwards, so
/// their relation is enumerated once; the others are evaluated per coordinate.
enum Semantics<'l> {
    Table(std::collections::BTreeMap<Vec<i64>, std::collections::BTreeSet<layout::Point>>),
    Eval(&'l Layout, Vec<i64>),
}

impl<'l> Semantics<'l> {
    fn new(l: &'l Layout, shape: &[i64]) -> Result<Self, String> {
        match l {
            Layout::Tv(_) | Layout::Linear(_) => {
                let mut t = std::collections::BTreeMap::<_, std::collections::BTreeSet<_>>::new();
                for (c, p) in
                    layout::relation::relation(l, Some(shape)).map_err(|e| e.to_string())?
                {
                    t.entry(c).or_default().insert(p);
                }
                Ok(Semantics::Table(t))
            }
            _ => Ok(Semantics::Eval(l, shape.to_vec())),
        }
    }

    fn points(&self, c: &[i64]) -> Result<std::collections::BTreeSet<layout::Point>, String> {
        match self {
            Semantics::Table(t) => Ok(t.get(c).cloned().unwrap_or_default()),
            Semantics::Eval(l, shape) => {
                crate::claim::semantic_points(l, shape, c).map_err(|e| e.to_string())
            }
        }
    }
}
