//! `laycert verify [PATH]`, the main job: runs every check of the corpus (embedded in the
//! binary, or the directory / file at PATH) and compares each verdict with the expected one.
//!
//! Output: stdout's first line is the verdict summary (`verify: 412 passed, 0 failed`,
//! deterministic), then the summary table (counts by kind, verdict and decider, and times),
//! then every failing check (`--verbose`: every check). `--json`: one JSON object. `--report
//! DIR` writes an HTML report with a picture of each layout. Exit 1 when any verdict differs
//! from its expectation. A progress bar goes to stderr when the run takes over a second and
//! stderr is a terminal.
//!
//! Kinds of checks are [`check::Suite`]s listed by [`suites`]: the specs' worked vectors, the
//! atoms' self-checks, the corpus claims, and the rule files (each sound rule PROVED, each rule
//! under `unsound/` REFUTED). A new kind (synthesis, codegen) is one more `Suite` added there.

pub mod atoms;
pub mod check;
pub mod claims;
pub mod rules;
pub mod vectors;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;
use serde_json::json;

use corpus::Corpus;

use self::check::{Check, Suite};
use super::{BadInput, Report};
use crate::report::table::Table;

/// Exit status when a verdict differs from its expectation.
pub const FAILED: u8 = 1;

/// What `verify` was asked to do.
pub struct Options<'a> {
    /// A corpus directory or file instead of the embedded corpus.
    pub path: Option<&'a str>,
    /// Write the HTML report into this directory.
    pub report: Option<&'a str>,
    /// List every check, not only the failing ones.
    pub verbose: bool,
    /// One JSON object instead of text.
    pub json: bool,
}

/// Every kind of check over `corpus`, in the order they run and print.
pub fn suites(corpus: &Corpus, rules: rules::Rules) -> Vec<Box<dyn Suite>> {
    vec![
        Box::new(vectors::Vectors::new(&corpus.vectors)),
        Box::new(atoms::Atoms::new(&corpus.atoms)),
        Box::new(claims::Claims::new(&corpus.claims)),
        Box::new(rules),
    ]
}

/// Runs every check of every suite (in parallel; results in suite order), with a progress bar
/// on stderr once the run has taken a second.
pub fn run_all(suites: &[Box<dyn Suite>]) -> Vec<Check> {
    let jobs: Vec<(usize, usize)> = suites
        .iter()
        .enumerate()
        .flat_map(|(s, suite)| (0..suite.len()).map(move |i| (s, i)))
        .collect();
    let bar = ProgressBar::with_draw_target(Some(jobs.len() as u64), ProgressDrawTarget::hidden());
    if let Ok(style) = ProgressStyle::with_template("verify {bar:40} {pos}/{len} {msg}") {
        bar.set_style(style);
    }
    let start = Instant::now();
    let shown = std::sync::atomic::AtomicBool::new(false);
    let results = jobs
        .par_iter()
        .map(|&(s, i)| {
            let c = suites[s].run(i);
            if start.elapsed() > Duration::from_secs(1)
                && !shown.swap(true, std::sync::atomic::Ordering::Relaxed)
            {
                bar.set_draw_target(ProgressDrawTarget::stderr());
            }
            bar.set_message(suites[s].kind());
            bar.inc(1);
            c
        })
        .collect();
    bar.finish_and_clear();
    results
}

/// The rule files at or below PATH.
fn read_rules(p: &str) -> Result<rules::Rules, BadInput> {
    rules::Rules::from_path(Path::new(p)).map_err(|e| BadInput {
        message: format!("error: {p}: cannot read rule files: {e}"),
    })
}

/// Runs `verify`.
pub fn run(opts: &Options) -> Result<Report, BadInput> {
    let (corpus, rules, origin) = match opts.path {
        None => (
            Corpus::embedded(),
            rules::Rules::embedded(),
            "embedded".to_string(),
        ),
        // A rule file alone: no corpus data.
        Some(p) if p.ends_with(".rules") => {
            (Corpus::from_texts(&[], &[]), read_rules(p)?, p.to_string())
        }
        Some(p) => (
            Corpus::from_path(Path::new(p)),
            read_rules(p)?,
            p.to_string(),
        ),
    };
    let corpus = corpus.map_err(|e| BadInput {
        message: format!("error: {e}"),
    })?;
    let report_error = |dir: &str, e: std::io::Error| BadInput {
        message: format!("error: --report {dir:?}: {e}"),
    };
    if let Some(dir) = opts.report {
        crate::report::html::prepare(Path::new(dir)).map_err(|e| report_error(dir, e))?;
    }
    let start = Instant::now();
    let rule_count = rules.len();
    let suites = suites(&corpus, rules);
    let checks = run_all(&suites);
    let wall = start.elapsed();
    let failed = checks.iter().filter(|c| !c.passed()).count();
    let passed = checks.len() - failed;
    let code = if failed > 0 { FAILED } else { 0 };
    let about = format!(
        "corpus: {origin} ({} files, {} atoms, {} claims, {} spec vectors, {rule_count} rules)",
        corpus.files.len(),
        corpus.atoms.len(),
        corpus.claims.len(),
        corpus.vectors.len()
    );
    let table = summary(&suites, &checks, wall);
    let mut report_line = None;
    if let Some(dir) = opts.report {
        let index = crate::report::html::write(Path::new(dir), &about, &table, &checks)
            .map_err(|e| report_error(dir, e))?;
        report_line = Some(format!("report: {}", index.display()));
    }
    if opts.json {
        let mut r = Report::json(json!({
            "passed": passed,
            "failed": failed,
            "corpus": {
                "origin": origin,
                "files": corpus.files,
                "atoms": corpus.atoms.len(),
                "claims": corpus.claims.len(),
                "vectors": corpus.vectors.len(),
            },
            "summary": table.to_json(),
            "wall_micros": wall.as_micros(),
            "report": report_line,
            "checks": checks.iter().map(Check::to_json).collect::<Vec<_>>(),
        }));
        r.code = code;
        return Ok(r);
    }
    let mut lines = vec![format!("verify: {passed} passed, {failed} failed"), about];
    lines.extend(table.render());
    for c in &checks {
        if !c.passed() || opts.verbose {
            lines.push(line(c));
        }
    }
    lines.extend(report_line);
    let mut r = Report::ok(lines);
    r.code = code;
    Ok(r)
}

/// One check on one line: `ok    claim NAME: equivalent (normal-form, exhaustive)`.
fn line(c: &Check) -> String {
    let status = if c.passed() { "ok  " } else { "FAIL" };
    let deciders = if c.deciders.is_empty() {
        String::new()
    } else {
        format!(" ({})", c.deciders.join(", "))
    };
    let mut s = format!("{status}  {} {}: {}{deciders}", c.kind, c.name, c.got);
    if !c.passed() {
        s += &format!("; expected {}", c.expected);
    }
    if let Some(d) = &c.detail {
        s += &format!("; {d}");
    }
    s
}

fn counts<'a>(items: impl Iterator<Item = &'a str>) -> String {
    let mut m: BTreeMap<&str, usize> = BTreeMap::new();
    for i in items {
        *m.entry(i).or_default() += 1;
    }
    let parts: Vec<String> = m.iter().map(|(k, n)| format!("{k} {n}")).collect();
    parts.join(", ")
}

fn seconds(micros: u128) -> String {
    format!("{:.2}s", micros as f64 / 1e6)
}

/// The summary table: one row per kind, then the total.
fn summary(suites: &[Box<dyn Suite>], checks: &[Check], wall: Duration) -> Table {
    let mut t = Table::new(&[
        "kind", "checks", "passed", "failed", "verdicts", "deciders", "time",
    ]);
    for s in suites {
        let of: Vec<&Check> = checks.iter().filter(|c| c.kind == s.kind()).collect();
        let failed = of.iter().filter(|c| !c.passed()).count();
        t.row(vec![
            s.kind().to_string(),
            of.len().to_string(),
            (of.len() - failed).to_string(),
            failed.to_string(),
            counts(of.iter().map(|c| c.got.as_str())),
            counts(
                of.iter()
                    .flat_map(|c| c.deciders.iter().map(String::as_str)),
            ),
            seconds(of.iter().map(|c| c.micros).sum()),
        ]);
    }
    let failed = checks.iter().filter(|c| !c.passed()).count();
    t.row(vec![
        "total".into(),
        checks.len().to_string(),
        (checks.len() - failed).to_string(),
        failed.to_string(),
        String::new(),
        String::new(),
        format!("{} wall", seconds(wall.as_micros())),
    ]);
    t
}
