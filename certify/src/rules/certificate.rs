//! Rule certificates: a versioned JSON record of one rule's proof (its text, method, the
//! counts: assignments in the box, instances meeting the conditions when counted, instances
//! re-checked concretely after z3; the digest of the decided instances or of the SMT queries,
//! the queries themselves, the counterexample). [`check`] re-proves the rule from its text
//! with the recorded limits and fails on any difference; a SHA-256 `seal` over the other
//! fields catches edits first. A certificate records any verdict: only `PROVED`, re-derived,
//! says the rule holds.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::prove::{prove_rule, Options, RuleReport, Verdict, MAX_INSTANCES_LIMIT};

/// The format version this build writes and checks. Version 3: the z3 encoding's overflow
/// guards are laycert's own (version 2 used z3's `bvsmul_noovfl`, which z3 4.8.12 computes
/// wrongly) and literal extents are enumerated, so version 2's SMT queries and digests are
/// not this build's. Version 4: work units are recalibrated (an instance costs 32 units, not
/// 256, besides what it enumerates, which now counts replica vectors, table inputs and the
/// operators that enumerate), so version 3's `work` and budget are not this build's.
pub const VERSION: u32 = 4;

/// The largest work budget a certificate may ask its checker to spend: the budget `prove`
/// runs under ([`super::prove::WORK_BUDGET`]), so that re-checking a certificate takes no
/// longer than proving the rule.
pub const MAX_WORK_BUDGET: u64 = super::prove::WORK_BUDGET;

/// The certificate of one rule.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleCertificate {
    /// Format version.
    pub version: u32,
    /// Always `rule`.
    pub kind: String,
    /// The rule's name.
    pub name: String,
    /// The rule's source text.
    pub rule: String,
    /// `PROVED`, `REFUTED` or `UNKNOWN`.
    pub verdict: String,
    /// The method, when one applied.
    pub method: Option<String>,
    /// Parameter assignments in the box.
    pub grid: String,
    /// Assignments meeting the conditions, when counted.
    pub instances: Option<String>,
    /// Instances with both sides defined (exhaustive).
    pub defined: u64,
    /// Instances re-checked concretely after z3 (boundary and random).
    pub rechecked: u64,
    /// Of those, the boundary instances.
    pub rechecked_boundary: u64,
    /// Work units spent.
    pub work: u64,
    /// Digest of the decided instances or of the queries.
    pub digest: String,
    /// SMT-LIB2 queries z3 answered.
    pub smt_queries: Vec<String>,
    /// The refutation or the reason, one line.
    pub detail: Option<String>,
    /// The grid limit the proof ran under.
    pub max_instances: u64,
    /// The work budget the proof ran under.
    pub work_budget: u64,
    /// The logical domain the claim named (`validate`'s `"shape"`), when it named one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain: Option<Vec<i64>>,
    /// SHA-256 over all other fields.
    pub seal: String,
}

fn detail(r: &RuleReport) -> Option<String> {
    match &r.verdict {
        Verdict::Proved => None,
        Verdict::Refuted(x) => Some(x.line()),
        Verdict::Unknown(why) => Some(why.clone()),
    }
}

impl RuleCertificate {
    /// The certificate of a report.
    pub fn of(r: &RuleReport, opts: &Options) -> RuleCertificate {
        let mut c = RuleCertificate {
            version: VERSION,
            kind: "rule".into(),
            name: r.name.clone(),
            rule: r.text.clone(),
            verdict: r.word().into(),
            method: r.method.clone(),
            grid: r.grid.to_string(),
            instances: r.instances.map(|n| n.to_string()),
            defined: r.defined,
            rechecked: r.rechecked,
            rechecked_boundary: r.rechecked_boundary,
            work: r.work,
            digest: r.digest.clone(),
            smt_queries: r.smt_queries.clone(),
            detail: detail(r),
            max_instances: opts.max_instances,
            work_budget: opts.work_budget,
            domain: r.domain.clone(),
            seal: String::new(),
        };
        c.seal = c.compute_seal();
        c
    }

    fn compute_seal(&self) -> String {
        let mut unsealed = self.clone();
        unsealed.seal = String::new();
        let text = serde_json::to_string(&unsealed).expect("serializable");
        format!("{:x}", Sha256::digest(text.as_bytes()))
    }

    /// Pretty JSON text.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("serializable")
    }
}

/// Re-checks a rule certificate from scratch: the seal, then a fresh proof of the rule text
/// under the recorded limits. Returns the certificate the fresh proof gives (its `verdict` is
/// the re-derived one: `PROVED` only when the rule re-proves); any difference from the
/// recorded fields, a claimed `PROVED` included, is an error.
pub fn check(text: &str) -> Result<RuleCertificate, String> {
    let c: RuleCertificate =
        serde_json::from_str(text).map_err(|e| format!("not a rule certificate: {e}"))?;
    if c.version != VERSION {
        return Err(format!(
            "version {} (this build checks {VERSION}; `laycert prove --cert-dir DIR` writes a current one)",
            c.version
        ));
    }
    if c.seal != c.compute_seal() {
        return Err("the seal does not match the contents (edited after it was written)".into());
    }
    let file = super::parse_source(&c.name, &c.rule).map_err(|e| e.to_string())?;
    let [rule] = file.rules.as_slice() else {
        return Err(format!(
            "the rule text holds {} rules, not one",
            file.rules.len()
        ));
    };
    if rule.name != c.name {
        return Err(format!(
            "the rule text names {:?}, the certificate {:?}",
            rule.name, c.name
        ));
    }
    if c.max_instances > MAX_INSTANCES_LIMIT {
        return Err(format!(
            "max_instances {} is above the limit {MAX_INSTANCES_LIMIT}",
            c.max_instances
        ));
    }
    if c.work_budget > MAX_WORK_BUDGET {
        return Err(format!(
            "work_budget {} is above the limit {MAX_WORK_BUDGET}",
            c.work_budget
        ));
    }
    let opts = Options {
        max_instances: c.max_instances,
        work_budget: c.work_budget,
        domain: c.domain.clone(),
        ..Options::default()
    };
    let fresh = RuleCertificate::of(&prove_rule(rule, &opts), &opts);
    let same = |what: &str, a: &dyn std::fmt::Debug, b: &dyn std::fmt::Debug| {
        let (a, b) = (format!("{a:?}"), format!("{b:?}"));
        if a == b {
            Ok(())
        } else {
            Err(format!(
                "{what}: the certificate says {a}, a fresh proof says {b}"
            ))
        }
    };
    same("verdict", &c.verdict, &fresh.verdict)?;
    same("method", &c.method, &fresh.method)?;
    same("grid", &c.grid, &fresh.grid)?;
    same("instances", &c.instances, &fresh.instances)?;
    same("defined instances", &c.defined, &fresh.defined)?;
    same("re-checked instances", &c.rechecked, &fresh.rechecked)?;
    same(
        "re-checked boundary instances",
        &c.rechecked_boundary,
        &fresh.rechecked_boundary,
    )?;
    same("work", &c.work, &fresh.work)?;
    same("digest", &c.digest, &fresh.digest)?;
    same("SMT queries", &c.smt_queries, &fresh.smt_queries)?;
    same("detail", &c.detail, &fresh.detail)?;
    Ok(fresh)
}
