//! What every CLI test file needs: run the built `laycert` binary and read its output.

#![allow(dead_code)] // each test binary uses its own subset

use std::process::{Command, Output};

/// A fresh directory for one test, removed when the returned guard drops (a failing test's
/// too), so test runs leave nothing in the system's temporary directory.
pub fn scratch() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("laycert-test-")
        .tempdir()
        .expect("a temporary directory")
}

/// Runs the built binary with `args`.
pub fn laycert(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_laycert"))
        .args(args)
        .output()
        .expect("the binary runs")
}

/// Standard output (it must be UTF-8).
pub fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("utf-8 stdout")
}

/// Standard error (it must be UTF-8).
pub fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).expect("utf-8 stderr")
}

/// The answer: stdout's first line.
pub fn first_line(o: &Output) -> String {
    stdout(o).lines().next().unwrap_or_default().to_string()
}

/// Runs the built binary with `args` under a CPU-time limit (`ulimit -t`, seconds): a sanity
/// bound on the work, generous enough not to depend on the machine (a run past it is killed
/// by a signal and has no exit code).
pub fn laycert_within(cpu_seconds: u64, args: &[&str]) -> Output {
    Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -t {cpu_seconds} && exec \"$@\""))
        .arg("sh")
        .arg(env!("CARGO_BIN_EXE_laycert"))
        .args(args)
        .output()
        .expect("the binary runs")
}
