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
    /// How the sides differ beyond this one point, when a decider can say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explanation: Option<Explanation>,
}

/// How two maps differ as a whole: how many logical indices differ, the first few, and what
/// part of the layouts parts them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Explanation {
    /// Bounds `(lo, hi)` on the number of differing logical indices; exact when equal.
    pub differing: (i64, i64),
    /// The number of logical indices.
    pub of: i64,
    /// The first few differing logical coordinates, in row-major order.
    pub first: Vec<Vec<i64>>,
    /// The logical mode (dimension of the claim's shape) where the maps first part, when
    /// they agree at the origin.
    pub mode: Option<usize>,
    /// What differs, in words.
    pub why: String,
}

impl Explanation {
    /// One line: `differs at 9 of 12 logical indices (first (0,1), (0,2), (0,3)); mode 1: ...`.
    pub fn line(&self) -> String {
        let count = if self.differing.0 == self.differing.1 {
            format!("{}", self.differing.0)
        } else {
            format!("between {} and {}", self.differing.0, self.differing.1)
        };
        let first: Vec<String> = self
            .first
            .iter()
            .map(|c| {
                let v: Vec<String> = c.iter().map(i64::to_string).collect();
                format!("({})", v.join(","))
            })
            .collect();
        let mode = self.mode.map_or(String::new(), |m| format!("; mode {m}"));
        format!(
            "differs at {count} of {} logical indices (first {}){mode}: {}",
            self.of,
            first.join(", "),
            self.why
        )
    }
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
