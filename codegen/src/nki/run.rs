//! Running a kernel on the reference interpreter: the embedded `nki` package and harness are
//! written to a fresh temporary directory, and `python3` (or `$LAYCERT_PYTHON`) runs
//! `harness.py KERNEL.py` with it on `PYTHONPATH`.

use std::io::{BufRead, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

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

/// Default wall-clock limit of [`run`]: 600 s.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// Most bytes of the interpreter's output kept (stdout and stderr each): 64 KiB.
const MAX_OUTPUT: u64 = 64 * 1024;

/// Runs `kernel` (a file) on the interpreter for `target` (`trn1`, `trn2`), within
/// [`DEFAULT_TIMEOUT`].
pub fn run(kernel: &Path, target: &str) -> Result<RunOutcome, NkiError> {
    run_within(kernel, target, DEFAULT_TIMEOUT)
}

/// [`run`] within `timeout` of wall-clock time: past it the interpreter and every process it
/// started (its process group) are killed and the answer is [`NkiError::Timeout`]. The kernel
/// file is trusted code: Python runs it as it is. A kernel that fails to run (an exception, an
/// interpreter that dies) is [`NkiError::Input`] with the interpreter's message.
pub fn run_within(kernel: &Path, target: &str, timeout: Duration) -> Result<RunOutcome, NkiError> {
    layout::trainium::target(target).map_err(|e| NkiError::Input(e.to_string()))?;
    check_header(kernel)?;
    if !numpy_available() {
        return Err(NkiError::NoPython(format!(
            "{} with numpy is needed to run NKI kernels (set LAYCERT_PYTHON)",
            python()
        )));
    }
    let dir = install()?;
    let out = run_child(
        Command::new(python())
            .arg(dir.join("harness.py"))
            .arg(kernel)
            .env("PYTHONPATH", &dir)
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .env("NKI_REF_TARGET", target),
        timeout,
    );
    let _ = std::fs::remove_dir_all(&dir);
    let (status, stdout, stderr) = out?;
    let first = stdout.lines().next().unwrap_or("");
    // A verdict is the harness's first line; anything else is the kernel failing to run.
    let verdict = match status.code() {
        Some(0) => first.starts_with("match"),
        Some(1) => first.starts_with("mismatch"),
        Some(2) => first.starts_with("rule violated"),
        _ => false,
    };
    if verdict {
        return Ok(RunOutcome {
            code: status.code().unwrap_or(2),
            stdout,
        });
    }
    let why = match first.strip_prefix("error: ") {
        Some(e) if status.code() == Some(2) => e.to_string(),
        _ => {
            let last = stderr.lines().last().unwrap_or("").trim();
            match status.code() {
                Some(c) => format!("the interpreter failed (exit {c}): {last}"),
                None => format!("the interpreter was killed ({status}): {last}"),
            }
        }
    };
    Err(NkiError::Input(format!("{}: {why}", kernel.display())))
}

/// The interpreter's status and output (each cut at [`MAX_OUTPUT`]), or
/// [`NkiError::Timeout`] after killing its process group past `timeout`.
fn run_child(
    cmd: &mut Command,
    timeout: Duration,
) -> Result<(ExitStatus, String, String), NkiError> {
    use std::os::unix::process::CommandExt;
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own process group, so that whatever it starts is killed with it.
        .process_group(0)
        .spawn()
        .map_err(|e| NkiError::NoPython(format!("cannot run {}: {e}", python())))?;
    // Each pipe read on its own thread (the child never blocks on a full pipe); the text comes
    // back through a channel, so a process that escaped the group and holds a pipe open cannot
    // hold up the answer.
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut kept = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.by_ref().take(MAX_OUTPUT).read_to_end(&mut kept);
                let _ = std::io::copy(&mut p, &mut std::io::sink());
            }
            let _ = tx.send(String::from_utf8_lossy(&kept).into_owned());
        });
        rx
    };
    let out = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let err = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Ok(s),
            Ok(None) if start.elapsed() >= timeout => break Err(()),
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => {
                kill_group(&mut child);
                return Err(NkiError::NoPython(format!("waiting for {}: {e}", python())));
            }
        }
    };
    let Ok(status) = status else {
        kill_group(&mut child);
        return Err(NkiError::Timeout(timeout.as_secs_f64()));
    };
    // A process the kernel left behind keeps the pipes open: it goes with the group.
    kill_group_only(child.id());
    let text = |rx: std::sync::mpsc::Receiver<String>| {
        rx.recv_timeout(Duration::from_secs(5)).unwrap_or_default()
    };
    Ok((status, text(out), text(err)))
}

/// Kills the child's process group and reaps the child.
fn kill_group(child: &mut Child) {
    kill_group_only(child.id());
    let _ = child.kill();
    let _ = child.wait();
}

fn kill_group_only(pid: u32) {
    if let Ok(pid) = i32::try_from(pid) {
        // SAFETY: kill(2) on the process group the child leads (created by `process_group(0)`
        // at spawn, so its id is the child's); no memory is touched.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
}

/// Refuses a kernel whose header (`# laycert-nki: kind=gemm m=M n=N k=K ...`) names sizes the
/// generator refuses (`gen nki gemm|softmax|mha`), with the generator's reason. A header is read
/// exactly as the harness reads it: every field `key=value`, no key twice (the harness keeps the
/// last, this check read the first: audit 33), a kind the harness knows. A first line that is no
/// header is left to the harness.
fn check_header(kernel: &Path) -> Result<(), NkiError> {
    let file = std::fs::File::open(kernel)
        .map_err(|e| NkiError::Input(format!("{}: {e}", kernel.display())))?;
    let mut first = String::new();
    let _ = std::io::BufReader::new(file.take(4096)).read_line(&mut first);
    let Some(fields) = first.trim_end().strip_prefix(super::HEADER) else {
        return Ok(());
    };
    let header = |e: String| NkiError::Input(format!("{} header: {e}", kernel.display()));
    let mut seen = std::collections::BTreeSet::new();
    let mut pairs = Vec::new();
    for f in fields.split_whitespace() {
        let (key, value) = f
            .split_once('=')
            .ok_or_else(|| header(format!("field `{f}` is not key=value")))?;
        if !seen.insert(key) {
            return Err(header(format!("{key}= is given twice")));
        }
        pairs.push((key, value));
    }
    let fields = pairs;
    let get = |name: &str| fields.iter().find(|f| f.0 == name).map(|f| f.1);
    let size = |name: &str| -> Result<i64, NkiError> {
        let v = get(name).ok_or_else(|| header(format!("no {name}=")))?;
        v.parse()
            .map_err(|_| header(format!("{name}={v} is not an integer")))
    };
    let sizes = match get("kind") {
        Some("gemm") => {
            let (m, n, k) = (size("m")?, size("n")?, size("k")?);
            solver::nki_gemm::check_size(m, n, k).map_err(|e| header(e.to_string()))?;
            KernelSizes::Gemm { m, n, k }
        }
        Some("softmax") => {
            let (rows, cols) = (size("rows")?, size("cols")?);
            super::softmax::check_size(rows, cols).map_err(|e| header(e.to_string()))?;
            KernelSizes::Softmax { rows, cols }
        }
        Some("mha") => {
            let (heads, seq, dim) = (size("heads")?, size("seq")?, size("dim")?);
            super::mha::check_size(heads, seq, dim).map_err(|e| header(e.to_string()))?;
            KernelSizes::Mha { heads, seq, dim }
        }
        other => {
            return Err(header(format!(
                "kind={}: the interpreter runs gemm, softmax and mha",
                other.unwrap_or("(none)")
            )))
        }
    };
    sizes
        .check_interpreter_memory()
        .map_err(|e| header(e.to_string()))
}

/// Most bytes the reference interpreter's arrays may take: 2 GiB. The harness draws the inputs
/// and computes the reference from the header's sizes in float64, so its memory grows with them
/// (a 16384x16384x8192 GEMM needs over 20 GiB); a kernel over the limit is refused before
/// Python starts.
pub const MAX_INTERPRETER_BYTES: i64 = 2 << 30;

/// Bytes per element of the inputs and of the result the harness holds: the float64 draws and
/// reference, the rounded storage and written-masks, and the comparison's float64 temporaries
/// (six float64 arrays; measured peaks are about 34 and 45).
const BYTES_PER_ELEMENT: i64 = 48;

/// Bytes per attention score (`heads x seq x seq`): the reference's float64 scores, exponentials
/// and probabilities (three float64 arrays; measured about 19).
const BYTES_PER_SCORE: i64 = 24;

/// The sizes a kernel's header declares, which set the interpreter's arrays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelSizes {
    /// `result[m,n] = lhsT[k,m].T @ rhs[k,n]`.
    Gemm {
        /// Rows of the result.
        m: i64,
        /// Columns of the result.
        n: i64,
        /// The contraction.
        k: i64,
    },
    /// Row softmax of `rows x cols`.
    Softmax {
        /// Rows.
        rows: i64,
        /// Columns.
        cols: i64,
    },
    /// Attention over `heads`, `seq` and head dim `dim`.
    Mha {
        /// Heads.
        heads: i64,
        /// Sequence length.
        seq: i64,
        /// Head dim.
        dim: i64,
    },
}

impl std::fmt::Display for KernelSizes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KernelSizes::Gemm { m, n, k } => write!(f, "gemm m={m} n={n} k={k}"),
            KernelSizes::Softmax { rows, cols } => write!(f, "softmax rows={rows} cols={cols}"),
            KernelSizes::Mha { heads, seq, dim } => {
                write!(f, "mha heads={heads} seq={seq} dim={dim}")
            }
        }
    }
}

impl KernelSizes {
    /// The interpreter's estimated memory: `BYTES_PER_ELEMENT` per element of the inputs and
    /// of the result, plus `BYTES_PER_SCORE` per attention score; `None` past `i64`.
    ///
    /// A 128x512x128 GEMM holds 81920 input and 65536 result elements:
    ///
    /// ```
    /// use codegen::nki::KernelSizes;
    /// let gemm = KernelSizes::Gemm { m: 128, n: 512, k: 128 };
    /// assert_eq!(gemm.interpreter_bytes(), Some(48 * (81920 + 65536)));
    /// ```
    pub fn interpreter_bytes(&self) -> Option<i64> {
        let (inputs, result, scores) = match *self {
            KernelSizes::Gemm { m, n, k } => {
                (k.checked_mul(m.checked_add(n)?)?, m.checked_mul(n)?, 0)
            }
            KernelSizes::Softmax { rows, cols } => {
                let x = rows.checked_mul(cols)?;
                (x, x, 0)
            }
            KernelSizes::Mha { heads, seq, dim } => {
                let x = heads.checked_mul(seq)?.checked_mul(dim)?;
                (
                    x.checked_mul(3)?,
                    x,
                    heads.checked_mul(seq)?.checked_mul(seq)?,
                )
            }
        };
        inputs
            .checked_add(result)?
            .checked_mul(BYTES_PER_ELEMENT)?
            .checked_add(scores.checked_mul(BYTES_PER_SCORE)?)
    }

    /// Ok when the interpreter's arrays fit [`MAX_INTERPRETER_BYTES`]; else an error naming the
    /// sizes, the estimate and the limit.
    pub fn check_interpreter_memory(&self) -> Result<(), NkiError> {
        let gib = |b: i64| b as f64 / (1u64 << 30) as f64;
        match self.interpreter_bytes() {
            Some(b) if b <= MAX_INTERPRETER_BYTES => Ok(()),
            b => {
                Err(NkiError::Input(format!(
                "{self} needs {} of reference-interpreter arrays ({BYTES_PER_ELEMENT} bytes per \
                 input and result element, {BYTES_PER_SCORE} per attention score), over the \
                 interpreter's limit of {:.0} GiB",
                b.map_or("more than 2^63 bytes".into(), |b| format!("about {:.1} GiB", gib(b))),
                gib(MAX_INTERPRETER_BYTES)
            )))
            }
        }
    }
}
