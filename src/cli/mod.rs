//! Rendering for the `laycert` commands: each submodule turns library results into the text
//! and JSON the command prints. Inputs are read by [`input`], which renders bad input the same
//! way for every command.

pub mod algebra;
pub mod atoms;
pub mod bank;
pub mod check;
pub mod convert;
pub mod decompose;
pub mod draw;
pub mod equiv;
pub mod eval;
pub mod gen;
pub mod gpu;
pub mod input;
pub mod linear;
pub mod property;
pub mod prove;
pub mod show;
pub mod simplify;
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

/// Bad input: the message for stderr (already rendered, with a caret for parse errors).
#[derive(Debug)]
pub struct BadInput {
    /// What to print on stderr.
    pub message: String,
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
        eprintln!(
            "laycert: internal error{place}: {what} (this is a bug in laycert; please report it)"
        );
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
