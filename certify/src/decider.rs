//! The common interface of the deciders: each answers proved, refuted with a counterexample,
//! or unknown with the reason, and names itself and the evidence it relied on.

use serde::{Deserialize, Serialize};

/// A logical index where two layouts differ, with both sides' point sets (vectors over the
/// claim's axes).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counterexample {
    /// Row-major logical index.
    pub index: i64,
    /// The logical coordinate (over the claim's shape).
    pub coord: Vec<i64>,
    /// Points of the left layout.
    pub left: Vec<Vec<i64>>,
    /// Points of the right layout.
    pub right: Vec<Vec<i64>>,
}

/// A decider's answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum Outcome {
    /// The claim holds; what was checked.
    Proved {
        /// What the decider relied on (a digest, a query, normal forms).
        evidence: String,
    },
    /// The claim fails here.
    Refuted {
        /// Where and how.
        counterexample: Counterexample,
    },
    /// No answer, and why (domain too large, resource limit, preconditions unmet).
    Unknown {
        /// Why.
        reason: String,
    },
}

impl Outcome {
    /// `proved`, `refuted`, `unknown`.
    pub fn word(&self) -> &'static str {
        match self {
            Outcome::Proved { .. } => "proved",
            Outcome::Refuted { .. } => "refuted",
            Outcome::Unknown { .. } => "unknown",
        }
    }
}

/// The deciders laycert has.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeciderKind {
    /// Canonical forms compared structurally.
    NormalForm,
    /// z3 over bit-vectors.
    Smt,
    /// Every logical coordinate evaluated.
    Exhaustive,
}

impl DeciderKind {
    /// `normal-form`, `smt`, `exhaustive`.
    pub fn name(self) -> &'static str {
        match self {
            DeciderKind::NormalForm => "normal-form",
            DeciderKind::Smt => "smt",
            DeciderKind::Exhaustive => "exhaustive",
        }
    }
}
