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
//! code with the deciders (run once, inside [`crate::claim::equivalent`], whose report records
//! it): [`crate::recheck::semantic_recheck`] evaluates both layouts with
//! `layout`'s trusted semantics (`Layout::eval` and `layout::relation`, no conversion to the
//! forward form) at every coordinate of the domain when it has at most
//! [`crate::recheck::RECHECK_ALL`] points, and otherwise at the domain's corners and edges and
//! [`crate::recheck::RECHECK_SAMPLES`] seeded random coordinates. A `not equivalent` verdict's
//! counterexample is re-evaluated by the same trusted semantics (`claim::confirm`).

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
    // `equivalent` ran the trusted cross-check for the proof it re-derived (a proof it could
    // not confirm is `unknown`, a disagreement an error); it is not run a second time here.
    if c.verdict == "equivalent" && report.rechecked.is_none() {
        return Err(CheckError::Differs(
            "the trusted cross-check did not confirm the proof".into(),
        ));
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

/// The first key a JSON object of `text` names twice, with the path to it (`kernel.emitter`),
/// or `None` when every object's keys are distinct (or the text is not JSON: parsing reports
/// that). A repeated key is read last-wins by serde, jq and Python alike, but a certificate is
/// evidence: one that says two things in one place is refused, not read one way.
///
/// ```
/// use certify::certificate::repeated_key;
/// assert_eq!(repeated_key(r#"{"a": 1, "b": {"c": 2, "c": 3}}"#), Some("b.c".to_string()));
/// assert_eq!(repeated_key(r#"{"a": [{"x": 1}, {"x": 2}]}"#), None);
/// ```
pub fn repeated_key(text: &str) -> Option<String> {
    use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
    use std::collections::BTreeSet;
    use std::fmt;

    /// Walks one value; `found` holds the first repeated key's path.
    struct Walk<'a> {
        path: String,
        found: &'a std::cell::RefCell<Option<String>>,
    }
    impl<'de> DeserializeSeed<'de> for Walk<'_> {
        type Value = ();
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
            d.deserialize_any(self)
        }
    }
    impl<'de> Visitor<'de> for Walk<'_> {
        type Value = ();
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("JSON")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            let mut seen = BTreeSet::new();
            while let Some(key) = map.next_key::<String>()? {
                let path = if self.path.is_empty() {
                    key.clone()
                } else {
                    format!("{}.{key}", self.path)
                };
                if !seen.insert(key) && self.found.borrow().is_none() {
                    *self.found.borrow_mut() = Some(path.clone());
                }
                map.next_value_seed(Walk {
                    path,
                    found: self.found,
                })?;
            }
            Ok(())
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
            while seq
                .next_element_seed(Walk {
                    path: self.path.clone(),
                    found: self.found,
                })?
                .is_some()
            {}
            Ok(())
        }
        fn visit_bool<E>(self, _: bool) -> Result<(), E> {
            Ok(())
        }
        fn visit_i64<E>(self, _: i64) -> Result<(), E> {
            Ok(())
        }
        fn visit_u64<E>(self, _: u64) -> Result<(), E> {
            Ok(())
        }
        fn visit_f64<E>(self, _: f64) -> Result<(), E> {
            Ok(())
        }
        fn visit_str<E>(self, _: &str) -> Result<(), E> {
            Ok(())
        }
        fn visit_unit<E>(self) -> Result<(), E> {
            Ok(())
        }
    }
    let found = std::cell::RefCell::new(None);
    let mut de = serde_json::Deserializer::from_str(text);
    let _ = Walk {
        path: String::new(),
        found: &found,
    }
    .deserialize(&mut de);
    found.into_inner()
}
