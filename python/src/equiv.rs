//! `laycert.equiv` and its report, certificates and `check` (the CLI's `equiv`, `check`,
//! `prove-property`).

use certify::certificate::certify_equivalence;
use certify::{equivalent, Outcome, Policy};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::{error, render};
use crate::layout_py::{claim_shape, LayoutArg};

/// Points as `{axis: value}` dicts.
fn point_dicts<'py>(
    py: Python<'py>,
    axes: &[String],
    ps: &[Vec<i64>],
) -> PyResult<Vec<Bound<'py, PyDict>>> {
    ps.iter()
        .map(|p| {
            let d = PyDict::new(py);
            for (a, v) in axes.iter().zip(p) {
                d.set_item(a, v)?;
            }
            Ok(d)
        })
        .collect()
}

fn point_text(axes: &[String], p: &[i64]) -> String {
    let parts: Vec<String> = axes
        .iter()
        .zip(p)
        .map(|(a, v)| format!("{a}:{v}"))
        .collect();
    format!("{{{}}}", parts.join(", "))
}

/// A coordinate where the two sides differ, confirmed by the trusted semantics.
#[pyclass(module = "laycert", frozen, get_all)]
pub struct Counterexample {
    /// The logical coordinate (over the claim's shape).
    pub coord: Vec<i64>,
    /// Its row-major index in the claim's domain.
    pub index: i64,
    /// The left side's points there, as `{axis: value}`.
    pub left: Py<PyAny>,
    /// The right side's points there.
    pub right: Py<PyAny>,
    /// How the maps differ as a whole (how many indices, where the sides part), when known.
    pub explanation: Option<String>,
}

#[pymethods]
impl Counterexample {
    fn __repr__(&self) -> String {
        format!("<laycert.Counterexample at {:?}>", self.coord)
    }
}

/// One decider's run: `name` (`normal-form`, `exhaustive`, `smt`), `outcome` (`proved`,
/// `refuted`, `unknown`), `micros`, and `detail` (its evidence, or why it is unknown).
#[pyclass(module = "laycert", frozen, get_all)]
pub struct Decider {
    /// The decider's name.
    pub name: String,
    /// `proved`, `refuted` or `unknown`.
    pub outcome: String,
    /// Time it took, in microseconds.
    pub micros: u128,
    /// The evidence of a proof, or the reason it is unknown.
    pub detail: Option<String>,
}

#[pymethods]
impl Decider {
    fn __repr__(&self) -> String {
        format!("<laycert.Decider {} {}>", self.name, self.outcome)
    }
}

/// A certificate (JSON) that `check()` re-verifies from scratch with certify's checker, which
/// re-decides the claim with its own deciders.
#[pyclass(module = "laycert", frozen)]
pub struct Certificate {
    json: String,
}

/// What `check` found: `status` is `valid` (a proof that re-verifies), `invalid` (it does not
/// re-verify), `unknown` or `refuted` (it re-verifies but records no proof); `message` is the
/// CLI's first line; `claim` says what was checked.
#[pyclass(module = "laycert", frozen, get_all)]
pub struct CheckResult {
    /// `valid`, `invalid`, `unknown` or `refuted`.
    pub status: String,
    /// What `laycert check` prints first.
    pub message: String,
    /// The claim checked, when the certificate re-verifies.
    pub claim: Option<String>,
}

#[pymethods]
impl CheckResult {
    /// True only for a certificate that records a proof and re-verifies.
    #[getter]
    fn valid(&self) -> bool {
        self.status == "valid"
    }

    fn __bool__(&self) -> bool {
        self.valid()
    }

    fn __str__(&self) -> String {
        [Some(self.message.clone()), self.claim.clone()]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn __repr__(&self) -> String {
        format!("<laycert.CheckResult {}>", self.message)
    }
}

/// Re-verifies a certificate's JSON, as `laycert check` does (every kind it knows).
pub fn check_json(text: &str) -> CheckResult {
    check_json_with(text, None)
}

/// [`check_json`], binding a kernel's source text to a kernel's certificate as
/// `laycert check CERT --kernel K.cu` does (`None`: no kernel).
pub fn check_json_with(text: &str, kernel: Option<&str>) -> CheckResult {
    let value = serde_json::from_str::<serde_json::Value>(text).ok();
    let kind = value
        .as_ref()
        .and_then(|v| v.get("kind").and_then(|k| k.as_str()).map(str::to_string));
    // A distributed plan's certificate (`dist plan --cert`) carries no `kind`: its fields say.
    let is_dist = value.as_ref().is_some_and(|v| {
        ["source", "target", "plan"]
            .iter()
            .all(|k| v.get(k).is_some())
    });
    let result: Result<(String, String), String> = match kind.as_deref() {
        _ if is_dist => serde_json::from_str::<certify::dist::DistCertificate>(text)
            .map_err(|e| format!("not a distributed plan's certificate: {e}"))
            .and_then(|c| {
                certify::dist::check_certificate(&c).map_err(|e| e.why_invalid())?;
                Ok((
                    "proved".to_string(),
                    c.summary(),
                ))
            }),
        Some("tensore-dispatch" | "tensore-dispatches") => certify::tensore::check_any(text)
            .map(|certs| {
                let what: Vec<String> = certs
                    .iter()
                    .map(|c| c.summary())
                    .collect();
                ("proved".to_string(), what.join("\n"))
            })
            .map_err(|e| e.to_string()),
        Some("rule") => certify::rules::certificate::check(text)
            .map(|c| (c.verdict.clone(), format!("rule {}: {}", c.name, c.verdict)))
            .map_err(|e| e.to_string()),
        Some("movement") => certify::movement::check(text)
            .map(|c| {
                (
                    c.verdict.clone(),
                    format!(
                        "data movement {}: dst[{}](x) == src[{}](x) over {:?}",
                        c.verdict, c.dst, c.src, c.shape
                    ),
                )
            })
            .map_err(|e| e.to_string()),
        Some("synthesis") => solver::synth::check_certificate(text).and_then(|c| {
            if let Some(k) = kernel {
                codegen::gemm::reemitted(&c, k).map_err(|e| format!("kernel: {e}"))?;
            }
            Ok((
                "proved".to_string(),
                format!(
                    "synthesis plan {} for {}: {} claims over {} tensors and {} operations re-decided{}",
                    c.program,
                    c.target,
                    c.claims.len(),
                    c.tensors.len(),
                    c.ops.len(),
                    match (&c.kernel, kernel) {
                        (Some(b), Some(_)) => format!(
                            "; the kernel is the text of a {} kernel of {} x {} x {} bound to it",
                            b.problem, b.m, b.n, b.k
                        ),
                        _ => String::new(),
                    }
                ),
            ))
        }),
        Some("explanation") => certify::rules::explain::check(text)
            .map(|c| {
                (
                    "proved".to_string(),
                    format!(
                        "explanation: {} == {} ({} steps)",
                        c.start,
                        c.end(),
                        c.steps.len()
                    ),
                )
            })
            .map_err(|e| e.to_string()),
        _ => certify::certificate::check(text)
            .map(|c| {
                (
                    c.verdict.clone(),
                    format!(
                        "{} ({} == {}) over {:?}, {}",
                        c.verdict,
                        c.claim.left.lines().next().unwrap_or(""),
                        c.claim.right.lines().next().unwrap_or(""),
                        c.claim.shape,
                        c.claim.coordinates
                    ),
                )
            })
            .map_err(|e| e.to_string()),
    };
    match result {
        Ok((verdict, claim)) => {
            let (status, message) = match verdict.to_ascii_lowercase().as_str() {
                "equivalent" | "proved" => ("valid", "valid".to_string()),
                "not equivalent" | "refuted" => (
                    "refuted",
                    "refuted: the certificate re-verifies a refutation, not a proof".to_string(),
                ),
                _ => (
                    "unknown",
                    "unknown: the certificate re-verifies, but it records no proof".to_string(),
                ),
            };
            CheckResult {
                status: status.into(),
                message,
                // A certificate's layouts can be megabytes of text: bounded as errors are.
                claim: Some(layout::error::bounded_message(&claim)),
            }
        }
        Err(e) => CheckResult {
            status: "invalid".into(),
            message: layout::error::bounded_message(&format!("invalid: {e}")),
            claim: None,
        },
    }
}

impl Certificate {
    /// Wraps certificate JSON.
    pub fn of(json: String) -> Certificate {
        Certificate { json }
    }
}

#[pymethods]
impl Certificate {
    /// Reads a certificate from JSON text.
    #[staticmethod]
    fn from_json(text: String) -> Certificate {
        Certificate { json: text }
    }

    /// Reads a certificate file.
    #[staticmethod]
    fn load(path: std::path::PathBuf) -> PyResult<Certificate> {
        std::fs::read_to_string(&path)
            .map(|json| Certificate { json })
            .map_err(|e| error(format!("error: certificate {path:?}: cannot read: {e}")))
    }

    /// The certificate as JSON text.
    #[getter]
    fn json(&self) -> String {
        self.json.clone()
    }

    /// `rule`, `movement`, `explanation`, `synthesis`, or `equivalence`.
    #[getter]
    fn kind(&self) -> String {
        serde_json::from_str::<serde_json::Value>(&self.json)
            .ok()
            .and_then(|v| v.get("kind").and_then(|k| k.as_str()).map(str::to_string))
            .unwrap_or_else(|| "equivalence".to_string())
    }

    /// Re-verifies the certificate from scratch (certify's checker re-decides the claim),
    /// without the GIL.
    fn check(&self, py: Python<'_>) -> CheckResult {
        py.detach(|| check_json(&self.json))
    }

    /// Writes the JSON to `path`.
    fn save(&self, path: std::path::PathBuf) -> PyResult<()> {
        std::fs::write(&path, format!("{}\n", self.json.trim_end()))
            .map_err(|e| error(format!("error: certificate {path:?}: cannot write: {e}")))
    }

    fn __repr__(&self) -> String {
        format!(
            "<laycert.Certificate {}, {} bytes>",
            self.kind(),
            self.json.len()
        )
    }
}

/// The answer of `equiv`: `verdict` (`equivalent`, `not equivalent`, `unknown`), the claim's
/// `shape` and `domain`, the `deciders` that ran, the `counterexample` when refuted, and the
/// `certificate`. `str(report)` is what `laycert equiv` prints.
#[pyclass(module = "laycert", frozen)]
pub struct Report {
    /// `equivalent`, `not equivalent` or `unknown`.
    #[pyo3(get)]
    pub verdict: String,
    /// The logical shape compared over.
    #[pyo3(get)]
    pub shape: Vec<i64>,
    /// The claim's domain in words (which rule chose it, how each side reads it).
    #[pyo3(get)]
    pub domain: String,
    /// The axes of the points.
    #[pyo3(get)]
    pub axes: Vec<String>,
    /// Every decider that ran, in order.
    #[pyo3(get)]
    pub deciders: Vec<Py<Decider>>,
    /// The confirmed counterexample, when refuted.
    #[pyo3(get)]
    pub counterexample: Option<Py<Counterexample>>,
    /// When proved: how many coordinates the trusted semantics re-checked.
    #[pyo3(get)]
    pub rechecked: Option<usize>,
    /// Why a decider's verdict stands unconfirmed (the verdict is then `unknown`): the trusted
    /// semantics could not re-check it within their limits.
    #[pyo3(get)]
    pub unconfirmed: Option<String>,
    /// The certificate of this decision.
    #[pyo3(get)]
    pub certificate: Py<Certificate>,
    /// The SMT-LIB2 query, when z3 ran.
    #[pyo3(get)]
    pub smt_query: Option<String>,
    lines: Vec<String>,
}

#[pymethods]
impl Report {
    /// True when equivalent, False when not, None when unknown.
    #[getter]
    fn equivalent(&self) -> Option<bool> {
        match self.verdict.as_str() {
            "equivalent" => Some(true),
            "not equivalent" => Some(false),
            _ => None,
        }
    }

    fn __str__(&self) -> String {
        self.lines.join("\n")
    }

    fn __repr__(&self) -> String {
        format!("<laycert.Report {}>", self.verdict)
    }
}

/// The lines `laycert equiv` prints.
fn lines(d: &certify::Report, axes: &[String]) -> Vec<String> {
    let mut out = vec![d.verdict().to_string()];
    let shape: Vec<String> = d.shape.iter().map(i64::to_string).collect();
    out.push(format!("logical shape: ({})", shape.join(",")));
    out.push(format!("domain: {}", d.domain.describe()));
    let set = |ps: &[Vec<i64>]| {
        let parts: Vec<String> = ps.iter().take(17).map(|p| point_text(axes, p)).collect();
        if ps.len() <= 16 {
            format!("{{{}}}", parts.join(", "))
        } else {
            format!(
                "{} points, first 16: {{{}}}",
                ps.len(),
                parts[..16].join(", ")
            )
        }
    };
    if let Some(c) = &d.counterexample {
        let coord: Vec<String> = c.coord.iter().map(i64::to_string).collect();
        out.push(format!("counterexample at logical ({}):", coord.join(",")));
        out.push(format!("  left:  {}", set(&c.left)));
        out.push(format!("  right: {}", set(&c.right)));
        if let Some(e) = &c.explanation {
            out.push(format!("  {}", e.line()));
        }
    }
    let runs: Vec<String> = d
        .runs
        .iter()
        .map(|r| {
            let why = match &r.outcome {
                Outcome::Unknown { reason } => format!(": {reason}"),
                _ => String::new(),
            };
            format!(
                "{} {} in {} us{why}",
                r.decider.name(),
                r.outcome.word(),
                r.micros
            )
        })
        .collect();
    out.push(format!("deciders: {}", runs.join("; ")));
    for r in &d.runs {
        if let Outcome::Proved { evidence } = &r.outcome {
            out.push(format!("  {}: {evidence}", r.decider.name()));
        }
    }
    if let Some(why) = &d.unconfirmed {
        out.push(format!("unconfirmed: {why}"));
    }
    if let Some(n) = d.rechecked {
        out.push(format!(
            "cross-check: the trusted semantics agree at {n} coordinates{}",
            if (n as i64) < d.shape.iter().product::<i64>() {
                " (the domain's corners and edges and a seeded sample)"
            } else {
                " (every coordinate)"
            }
        ));
    }
    out
}

/// Decides whether `a` and `b` (layouts or text, any notations) relate the same (logical
/// coordinate, physical point) pairs over one claim domain: `shape` names it (a Triton
/// attribute's tensor shape too), else the shape the `Layout` arguments were made with, else it
/// is chosen from both sides as the CLI does. `axes` renames axes first
/// (`"lane_id=laneid,..."`).
#[pyfunction]
#[pyo3(signature = (a, b, shape=None, axes=None))]
pub fn equiv(
    py: Python<'_>,
    a: LayoutArg,
    b: LayoutArg,
    shape: Option<&Bound<'_, PyAny>>,
    axes: Option<&str>,
) -> PyResult<Report> {
    let shape = claim_shape(shape, &[&a, &b])?;
    let (a_text, b_text) = (a.text(), b.text());
    let mut la = a.get(shape.as_deref(), "the left layout")?;
    let mut lb = b.get(shape.as_deref(), "the right layout")?;
    if let Some(text) = axes {
        let map = certify::claim::parse_axes(text).map_err(|e| render(&e, "axes", text))?;
        la = certify::claim::rename_axes(&la, &map)
            .map_err(|e| render(&e, "the left layout", &a_text))?;
        lb = certify::claim::rename_axes(&lb, &map)
            .map_err(|e| render(&e, "the right layout", &b_text))?;
    }
    // Triton attributes take the shape as their tensor shape; TV/linear fix their logical side.
    let fixed = |l: &layout::Layout| matches!(l, layout::Layout::Tv(_) | layout::Layout::Linear(_));
    let logical = shape.as_deref().filter(|_| !fixed(&la) || !fixed(&lb));
    let d = py
        .detach(|| equivalent(&la, &lb, logical, &Policy::default()))
        .map_err(|e| render(&e, "the claim", &a_text))?;
    let cert = certify_equivalence(&la, &lb, &d);
    let cert = serde_json::to_string_pretty(&cert)
        .map_err(|e| error(format!("error: the certificate: {e}")))?;
    let axes: Vec<String> = d.axes.iter().map(|a| a.to_string()).collect();
    let counterexample = match &d.counterexample {
        None => None,
        Some(c) => Some(Py::new(
            py,
            Counterexample {
                coord: c.coord.clone(),
                index: c.index,
                left: point_dicts(py, &axes, &c.left)?.into_pyobject(py)?.unbind(),
                right: point_dicts(py, &axes, &c.right)?
                    .into_pyobject(py)?
                    .unbind(),
                explanation: c.explanation.as_ref().map(|e| e.line()),
            },
        )?),
    };
    let deciders = d
        .runs
        .iter()
        .map(|r| {
            Py::new(
                py,
                Decider {
                    name: r.decider.name().to_string(),
                    outcome: r.outcome.word().to_string(),
                    micros: r.micros,
                    detail: match &r.outcome {
                        Outcome::Proved { evidence } => Some(evidence.clone()),
                        Outcome::Unknown { reason } => Some(reason.clone()),
                        Outcome::Refuted { .. } => None,
                    },
                },
            )
        })
        .collect::<PyResult<Vec<_>>>()?;
    Ok(Report {
        verdict: d.verdict().to_string(),
        shape: d.shape.clone(),
        domain: d.domain.describe(),
        lines: lines(&d, &axes),
        axes,
        deciders,
        counterexample,
        rechecked: d.rechecked,
        unconfirmed: d.unconfirmed.clone(),
        certificate: Py::new(py, Certificate::of(cert))?,
        smt_query: d.smt_query.clone(),
    })
}

/// A certificate argument: a `Certificate`, or a path to a certificate file.
#[derive(FromPyObject)]
pub enum CertArg {
    /// A `Certificate` object.
    Object(Py<Certificate>),
    /// A file path.
    Path(std::path::PathBuf),
}

/// Re-verifies a certificate (an object or a file), as `laycert check` does; with `kernel`
/// (a kernel's CUDA source text, e.g. `gen_gemm(..).source`), also that it is, byte for byte,
/// the kernel the certificate was emitted with (`laycert check CERT --kernel K.cu`).
#[pyfunction]
#[pyo3(signature = (cert, kernel=None))]
pub fn check(py: Python<'_>, cert: CertArg, kernel: Option<String>) -> PyResult<CheckResult> {
    let json = match cert {
        CertArg::Object(c) => c.borrow(py).json.clone(),
        CertArg::Path(p) => Certificate::load(p)?.json,
    };
    if let Some(key) = certify::certificate::repeated_key(&json) {
        return Err(error(format!(
            "error: the certificate gives `{key}` twice in one object"
        )));
    }
    if kernel.is_some() {
        let kind = serde_json::from_str::<serde_json::Value>(&json)
            .ok()
            .and_then(|v| v.get("kind").and_then(|k| k.as_str()).map(str::to_string));
        if kind.as_deref() != Some("synthesis") {
            return Err(error(
                "error: kernel= binds a kernel to its synthesis certificate (gen_gemm's)",
            ));
        }
    }
    Ok(py.detach(|| check_json_with(&json, kernel.as_deref())))
}

/// The answer of `prove_property`: `verdict` (`proved`, `refuted`, `unknown`), the deciders
/// that ran and what each said, and `detail` (the witness in words, or why unknown).
#[pyclass(module = "laycert", frozen, get_all)]
pub struct PropertyReport {
    /// `proved`, `refuted` or `unknown`.
    pub verdict: String,
    /// `(decider, what it said)` pairs.
    pub deciders: Vec<(String, String)>,
    /// Why it fails, or why it is unknown.
    pub detail: Option<String>,
}

#[pymethods]
impl PropertyReport {
    fn __str__(&self) -> String {
        let deciders: Vec<String> = self
            .deciders
            .iter()
            .map(|(d, v)| format!("{d} {v}"))
            .collect();
        let mut lines = vec![
            self.verdict.clone(),
            format!("deciders: {}", deciders.join("; ")),
        ];
        lines.extend(self.detail.as_ref().map(|d| format!("because: {d}")));
        lines.join("\n")
    }

    fn __repr__(&self) -> String {
        format!("<laycert.PropertyReport {}>", self.verdict)
    }
}

/// Decides `injective`, `surjective` or `bijective` for a layout over `shape` (default: its
/// own), as `laycert prove-property` does.
#[pyfunction]
#[pyo3(signature = (prop, layout, shape=None))]
pub fn prove_property(
    py: Python<'_>,
    prop: &str,
    layout: LayoutArg,
    shape: Option<&Bound<'_, PyAny>>,
) -> PyResult<PropertyReport> {
    let p =
        certify::property::Property::parse(prop).map_err(|e| render(&e, "the property", prop))?;
    let shape = claim_shape(shape, &[&layout])?;
    let text = layout.text();
    let l = layout.get(shape.as_deref(), "the layout")?;
    let logical = shape
        .as_deref()
        .filter(|_| !matches!(l, layout::Layout::Tv(_) | layout::Layout::Linear(_)));
    let r = py
        .detach(|| certify::property::prove_property(&l, p, logical, &Policy::default()))
        .map_err(|e| render(&e, "the claim", &text))?;
    Ok(PropertyReport {
        verdict: r.verdict.to_string(),
        deciders: r.deciders,
        detail: r.detail,
    })
}
