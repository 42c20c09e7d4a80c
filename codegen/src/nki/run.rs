//! Running a kernel on the reference interpreter: the embedded `nki` package and harness are
//! written to a fresh temporary directory, and `python3` (or `$LAYCERT_PYTHON`) runs
//! `harness.py KERNEL.py` with it on `PYTHONPATH`.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::NkiError;

const FILES: [(&str, &str); 6] = [
    (
        "nki/__init__.py",
        include_str!("../../nki_ref/nki/__init__.py"),
    ),
    ("nki/_core.py", include_str!("../../nki_ref/nki/_core.py")),
    (
        "nki/language.py",
        include_str!("../../nki_ref/nki/language.py"),
    ),
    ("nki/isa.py", include_str!("../../nki_ref/nki/isa.py")),
    ("harness.py", include_str!("../../nki_ref/harness.py")),
    ("README.md", include_str!("../../nki_ref/README.md")),
];

/// What the harness said.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunOutcome {
    /// 0 match, 1 mismatch, 2 a rule violated (or the file is not a runnable kernel).
    pub code: i32,
    /// Its output: the verdict line, then a JSON line of figures.
    pub stdout: String,
}

/// The Python to use: `$LAYCERT_PYTHON`, else `python3`.
pub fn python() -> String {
    std::env::var("LAYCERT_PYTHON").unwrap_or_else(|_| "python3".into())
}

/// Whether Python with NumPy is available (the interpreter's only dependency).
pub fn numpy_available() -> bool {
    Command::new(python())
        .args(["-c", "import numpy"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

/// Writes the interpreter into a fresh directory under the system temp dir.
fn install() -> Result<PathBuf, NkiError> {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("laycert-nki-{}-{n}", std::process::id()));
    let io = |e: std::io::Error| {
        NkiError::NoPython(format!(
            "cannot write the interpreter to {}: {e}",
            dir.display()
        ))
    };
    std::fs::create_dir_all(dir.join("nki")).map_err(io)?;
    for (name, text) in FILES {
        std::fs::write(dir.join(name), text).map_err(io)?;
    }
    Ok(dir)
}

/// Runs `kernel` (a file) on the interpreter for `target` (`trn1`, `trn2`).
pub fn run(kernel: &Path, target: &str) -> Result<RunOutcome, NkiError> {
    layout::trainium::target(target).map_err(|e| NkiError::Input(e.to_string()))?;
    if !numpy_available() {
        return Err(NkiError::NoPython(format!(
            "{} with numpy is needed to run NKI kernels (set LAYCERT_PYTHON)",
            python()
        )));
    }
    let dir = install()?;
    let out = Command::new(python())
        .arg(dir.join("harness.py"))
        .arg(kernel)
        .env("PYTHONPATH", &dir)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("NKI_REF_TARGET", target)
        .output();
    let _ = std::fs::remove_dir_all(&dir);
    let out = out.map_err(|e| NkiError::NoPython(format!("cannot run {}: {e}", python())))?;
    let mut stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    stdout.truncate(64 * 1024);
    let code = match out.status.code() {
        Some(c @ 0..=2) => c,
        _ => {
            let err = String::from_utf8_lossy(&out.stderr);
            let last = err.lines().last().unwrap_or("").to_string();
            stdout = format!("error: the interpreter failed: {last}\n");
            2
        }
    };
    Ok(RunOutcome { code, stdout })
}
