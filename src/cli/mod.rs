//! Rendering for the `laycert` commands: each submodule turns library results into the text
//! and JSON the command prints. Inputs are read by [`input`], which renders bad input the same
//! way for every command.

pub mod algebra;
pub mod atoms;
pub mod bank;
pub mod check;
pub mod convert;
pub mod decompose;
pub mod dist;
pub mod draw;
pub mod equiv;
pub mod eval;
pub mod gemm;
pub mod gen;
pub mod gpu;
pub mod input;
pub mod linear;
pub mod nki;
pub mod property;
pub mod prove;
pub mod show;
pub mod simplify;
pub mod synth;
pub mod verify;

/// Exit status for bad input (also what clap uses for usage errors).
pub const BAD_INPUT: u8 = 2;

/// Exit status for an internal error (a panic caught by the hook).
pub const INTERNAL_ERROR: i32 = 101;

/// What a command prints on success, and its exit status.
pub struct Report {
    /// Everything for stdout; the answer is its first line.
    pub stdout: String,
    /// Exit status (0, or 1 when `verify` finds a failing check).
    pub code: u8,
}

impl Report {
    /// A successful report: `lines` joined, one per line.
    pub fn ok(lines: Vec<String>) -> Report {
        Report {
            stdout: lines.into_iter().map(|l| l + "\n").collect(),
            code: 0,
        }
    }

    /// A successful report of one JSON object on one line.
    pub fn json(value: serde_json::Value) -> Report {
        Report {
            stdout: format!("{value}\n"),
            code: 0,
        }
    }
}

/// Points a point set prints by default; more are summarized as `N points, first k: {..}`.
pub const SUMMARY_POINTS: usize = 16;

/// Most points a point set prints in full (`--full`, `--json`): 16384, under 1 MB of text.
/// A larger set is an error naming its size.
pub const MAX_FULL_POINTS: usize = 16_384;

/// A set of rendered points on one line: `{p, q}` when it has at most [`SUMMARY_POINTS`] (or
/// `full` is set and it has at most [`MAX_FULL_POINTS`]), else `N points, first k: {..}`; an
/// error naming the count when `full` asks for more than [`MAX_FULL_POINTS`].
pub fn point_set(points: &[String], full: bool) -> Result<String, BadInput> {
    let n = points.len();
    if full && n > MAX_FULL_POINTS {
        return Err(too_many_points(n));
    }
    if full || n <= SUMMARY_POINTS {
        return Ok(format!("{{{}}}", points.join(", ")));
    }
    Ok(format!(
        "{n} points, first {SUMMARY_POINTS}: {{{}}}",
        points[..SUMMARY_POINTS].join(", ")
    ))
}

/// The error for a full point set over [`MAX_FULL_POINTS`].
pub fn too_many_points(n: usize) -> BadInput {
    BadInput {
        message: format!(
            "error: the set has {n} points; --full and --json print at most {MAX_FULL_POINTS}"
        ),
    }
}

/// Bad input: the message for stderr (already rendered, with a caret for parse errors).
#[derive(Debug)]
pub struct BadInput {
    /// What to print on stderr.
    pub message: String,
}

pub use layout::error::bounded_message;

/// Writes `line` and a newline to stderr, ignoring a failure: `eprintln!` panics when stderr
/// cannot be written (`2>/dev/full`, a closed pipe), which turned a bad-input message into a
/// panic and, inside the panic hook, an abort (exit 134). The exit code still says what
/// happened.
pub fn to_stderr(line: &str) {
    use std::io::Write;
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{line}").and_then(|_| err.flush());
}

/// Prints a one-line message instead of a panic's default output and backtrace, and exits 101.
/// A last resort: user input must be rejected with an error value long before this.
pub fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let what = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".to_string());
        let place = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        to_stderr(&format!(
            "laycert: internal error{place}: {what} (this is a bug in laycert; please report it)"
        ));
        std::process::exit(INTERNAL_ERROR);
    }));
}

/// The layout's text for a command's output: its first element is one line a user can paste
/// back. Linear layouts print as `#ttg.linear<{...}>` (their tensor shape is then given with
/// `--shape`), followed by their multi-line `LinearLayout::toString()` text, which keeps the
/// out-dim names and sizes.
pub fn layout_lines(l: &layout::Layout) -> Vec<String> {
    match l {
        layout::Layout::Linear(f) => {
            let text = l.print();
            let mut lines: Vec<String> = Vec::new();
            if let Ok(attr) = layout::notation::linear::print_attr(f) {
                lines.push(attr);
            }
            lines.extend(text.lines().map(str::to_string));
            lines
        }
        other => vec![other.print()],
    }
}
