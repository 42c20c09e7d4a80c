//! `prove` and `validate`: rule reports (the CLI's `prove` and `validate`).

use certify::rules::certificate::RuleCertificate;
use certify::rules::{prove_source, Options, RuleReport as Rule, Verdict};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::equiv::Certificate;
use crate::errors::{error, rule_file_error};

/// One rule's verdict: `verdict` (`PROVED`, `REFUTED`, `UNKNOWN`), `method`, `instances`, the
/// `counterexample` (a dict: params, coordinate, lhs_value, rhs_value, lhs, rhs) when refuted,
/// `reason` when unknown, and its `certificate`. `str(r)` is the CLI's line for the rule.
#[pyclass(module = "laycert", frozen)]
pub struct RuleReport {
    /// The rule's name.
    #[pyo3(get)]
    pub name: String,
    /// `PROVED`, `REFUTED` or `UNKNOWN`.
    #[pyo3(get)]
    pub verdict: String,
    /// `exhaustive` or `z3 ...`.
    #[pyo3(get)]
    pub method: Option<String>,
    /// Parameter assignments decided, when counted.
    #[pyo3(get)]
    pub instances: Option<u128>,
    /// Where it fails, when refuted.
    #[pyo3(get)]
    pub counterexample: Option<Py<PyDict>>,
    /// Why it is unknown.
    #[pyo3(get)]
    pub reason: Option<String>,
    /// Wall time in seconds.
    #[pyo3(get)]
    pub seconds: f64,
    /// The rule certificate (`check()` re-proves it).
    #[pyo3(get)]
    pub certificate: Py<Certificate>,
    line: String,
}

#[pymethods]
impl RuleReport {
    fn __str__(&self) -> String {
        self.line.clone()
    }

    fn __repr__(&self) -> String {
        format!("<laycert.RuleReport {} {}>", self.verdict, self.name)
    }
}

/// The reports of a rule file or a log: `rules`, the counts, and `ok` (nothing refuted or
/// unknown). `str(r)` is what the CLI prints (one line per rule, then the summary).
#[pyclass(module = "laycert", frozen, get_all)]
pub struct RulesReport {
    /// One report per rule, in order.
    pub rules: Vec<Py<RuleReport>>,
    /// Rules proved.
    pub proved: usize,
    /// Rules refuted.
    pub refuted: usize,
    /// Rules unknown.
    pub unknown: usize,
    /// Wall time in seconds.
    pub seconds: f64,
}

#[pymethods]
impl RulesReport {
    /// True when every rule is PROVED.
    #[getter]
    fn ok(&self) -> bool {
        self.refuted == 0 && self.unknown == 0
    }

    fn __bool__(&self) -> bool {
        self.ok()
    }

    fn __len__(&self) -> usize {
        self.rules.len()
    }

    fn __str__(&self, py: Python<'_>) -> String {
        let mut lines: Vec<String> = self.rules.iter().map(|r| r.get().line.clone()).collect();
        let _ = py;
        let n = self.rules.len();
        let rate = n as f64 / self.seconds.max(1e-9);
        lines.push(format!(
            "{n} rules: {} proved, {} refuted, {} unknown in {:.2}s ({rate:.1} rules/s)",
            self.proved, self.refuted, self.unknown, self.seconds
        ));
        lines.join("\n")
    }

    fn __repr__(&self) -> String {
        format!(
            "<laycert.RulesReport {} proved, {} refuted, {} unknown>",
            self.proved, self.refuted, self.unknown
        )
    }
}

fn options(max_instances: Option<u64>) -> PyResult<Options> {
    let mut o = Options::default();
    if let Some(m) = max_instances {
        let limit = certify::rules::prove::MAX_INSTANCES_LIMIT;
        if m > limit {
            return Err(error(format!(
                "error: max_instances {m} is above the maximum {limit} (2^24)"
            )));
        }
        o.max_instances = m;
    }
    Ok(o)
}

fn report(py: Python<'_>, reports: Vec<Rule>, opts: &Options, secs: f64) -> PyResult<RulesReport> {
    let count = |w: &str| reports.iter().filter(|r| r.word() == w).count();
    let (proved, refuted, unknown) = (count("PROVED"), count("REFUTED"), count("UNKNOWN"));
    let rules = reports
        .iter()
        .map(|r| {
            let (counterexample, reason) = match &r.verdict {
                Verdict::Proved => (None, None),
                Verdict::Refuted(x) => {
                    let d = PyDict::new(py);
                    d.set_item("params", &x.params)?;
                    d.set_item("coordinate", x.coordinate.clone())?;
                    d.set_item("lhs_value", &x.lhs_value)?;
                    d.set_item("rhs_value", &x.rhs_value)?;
                    d.set_item("lhs", &x.lhs)?;
                    d.set_item("rhs", &x.rhs)?;
                    (Some(d.unbind()), None)
                }
                Verdict::Unknown(why) => (None, Some(why.clone())),
            };
            Py::new(
                py,
                RuleReport {
                    name: r.name.clone(),
                    verdict: r.word().to_string(),
                    method: r.method.clone(),
                    instances: r.instances,
                    counterexample,
                    reason,
                    seconds: r.micros as f64 / 1e6,
                    certificate: Py::new(
                        py,
                        Certificate::of(RuleCertificate::of(r, opts).to_json()),
                    )?,
                    line: r.line(),
                },
            )
        })
        .collect::<PyResult<Vec<_>>>()?;
    Ok(RulesReport {
        rules,
        proved,
        refuted,
        unknown,
        seconds: secs,
    })
}

/// Proves every rule of a rule file's text (`name` is the file name in messages) for every
/// parameter assignment within its bounds, as `laycert prove` does. Raises `RuleFileError`
/// (with `file:line:col` and a caret) when the text does not parse or type-check.
#[pyfunction]
#[pyo3(signature = (text, name="<rules>", max_instances=None))]
pub fn prove_text(
    py: Python<'_>,
    text: &str,
    name: &str,
    max_instances: Option<u64>,
) -> PyResult<RulesReport> {
    let opts = options(max_instances)?;
    let t = std::time::Instant::now();
    let reports = py
        .detach(|| prove_source(name, text, &opts))
        .map_err(|e| rule_file_error(&format!("error: {}", e.render_located())))?;
    report(py, reports, &opts, t.elapsed().as_secs_f64())
}

/// Validates a log of concrete rewrites (JSON lines `{"before", "after", "relation", "name",
/// "shape"}`; `name` is the log's name in messages), as `laycert validate` does: chains of
/// lines are decided over one domain.
#[pyfunction]
#[pyo3(signature = (text, name="<pairs>", max_instances=None))]
pub fn validate_text(
    py: Python<'_>,
    text: &str,
    name: &str,
    max_instances: Option<u64>,
) -> PyResult<RulesReport> {
    let opts = options(max_instances)?;
    let t = std::time::Instant::now();
    let reports = py
        .detach(|| certify::rules::validate::validate(name, text, &opts))
        .map_err(|e| rule_file_error(&format!("error: {e}")))?;
    report(py, reports, &opts, t.elapsed().as_secs_f64())
}
