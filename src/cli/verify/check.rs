//! The unit of `laycert verify`: one check with its expected and actual verdict, and the
//! [`Suite`] trait every kind of check implements, the extension point for later kinds (rule
//! files, synthesis and codegen checks): a suite lists its checks and runs any one of them.

use serde_json::{json, Value};

/// A layout a check is about, for pictures in the HTML report.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Subject {
    /// What it is in the check (`left`, `right`, `atom`, ...).
    pub role: String,
    /// The layout text.
    pub text: String,
    /// The tensor shape its text needs (Triton attributes).
    pub tensor_shape: Option<Vec<i64>>,
    /// The logical shape it is read over, when not its own.
    pub shape: Option<Vec<i64>>,
}

/// The outcome of one check.
#[derive(Clone, Debug)]
pub struct Check {
    /// The kind of check (`spec-vector`, `atom`, `claim`, ...): the suite's name.
    pub kind: &'static str,
    /// Unique within its kind.
    pub name: String,
    /// Where the fact comes from.
    pub source: String,
    /// The expected verdict.
    pub expected: String,
    /// The verdict reached.
    pub got: String,
    /// Why it failed, or the evidence (counterexample, witness) in words.
    pub detail: Option<String>,
    /// The deciders (or `semantics`) that reached the verdict.
    pub deciders: Vec<String>,
    /// Wall time in microseconds (varies run to run: shown only in the table and JSON).
    pub micros: u128,
    /// The layouts involved.
    pub subjects: Vec<Subject>,
}

impl Check {
    /// Whether the verdict is the expected one.
    pub fn passed(&self) -> bool {
        self.expected == self.got
    }

    /// The check as JSON.
    pub fn to_json(&self) -> Value {
        json!({
            "kind": self.kind,
            "name": self.name,
            "source": self.source,
            "expected": self.expected,
            "got": self.got,
            "passed": self.passed(),
            "detail": self.detail,
            "deciders": self.deciders,
            "micros": self.micros,
        })
    }
}

/// A kind of check over some data: the extension point of `verify`.
pub trait Suite: Sync {
    /// The kind name shown in the summary table (`claim`, `atom`, ...).
    fn kind(&self) -> &'static str;
    /// How many checks it has.
    fn len(&self) -> usize;
    /// Runs check `i` (`i < len()`); never panics on bad data, reports it as a failed check.
    fn run(&self, i: usize) -> Check;
}

/// A layout subject read over its own shape.
pub fn subject(role: &str, text: &str, tensor_shape: Option<&[i64]>) -> Subject {
    Subject {
        role: role.to_string(),
        text: text.to_string(),
        tensor_shape: tensor_shape.map(<[i64]>::to_vec),
        shape: None,
    }
}
