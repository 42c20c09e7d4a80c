//! Error values of the layout model. Every failure on user input is one of these, never a panic.

use std::ops::Range;

/// A parse failure: where (byte span into the input), what was expected, and what was found.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{notation} notation: expected {expected}, found {found} at bytes {}..{}", span.start, span.end)]
pub struct ParseError {
    /// Which notation was being read (`Axe`, `CuTe`, `linear`, `Triton attribute`, ...).
    pub notation: &'static str,
    /// Byte range of the offending text in the input.
    pub span: Range<usize>,
    /// What the parser expected at that position.
    pub expected: String,
    /// What it found there (quoted text, or `end of input`).
    pub found: String,
}

impl ParseError {
    /// Renders the error with the input line and a caret under the span, for terminals (no
    /// `error: ` prefix: the caller, which knows the context, adds it once).
    pub fn render(&self, input: &str) -> String {
        let start = self.span.start.min(input.len());
        let end = self.span.end.clamp(start, input.len());
        let width = input[start..end].chars().count().max(1);
        let pad = input[..start].chars().count();
        format!(
            "{self}\n  {input}\n  {}{}",
            " ".repeat(pad),
            "^".repeat(width)
        )
    }
}

/// Any error of the layout model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LayoutError {
    /// Text that is not valid in its notation.
    #[error(transparent)]
    Parse(#[from] ParseError),
    /// A checked i64 operation overflowed; names the operation.
    #[error("integer overflow in {op}")]
    Overflow {
        /// The operation that overflowed.
        op: &'static str,
    },
    /// A value that breaks an invariant of its type (extent 0, incongruent shape and stride, ...).
    #[error("invalid {what}: {why}")]
    Invalid {
        /// The object that is invalid.
        what: String,
        /// Why it is invalid.
        why: String,
    },
    /// A logical shape that the layout does not admit.
    #[error("shape {shape:?} does not fit: {why}")]
    Shape {
        /// The offending shape.
        shape: Vec<i64>,
        /// Why it does not fit.
        why: String,
    },
    /// A coordinate outside its domain.
    #[error("coordinate {coord:?} is outside the domain: {why}")]
    Coordinate {
        /// The offending coordinate.
        coord: Vec<i64>,
        /// Which component is out of range and why.
        why: String,
    },
    /// A conversion between formalisms that cannot be exact for this layout.
    #[error("not representable as {target}: {reason}")]
    NotRepresentable {
        /// The formalism converted to.
        target: &'static str,
        /// Why this layout has no exact form there.
        reason: String,
    },
    /// A layout that does not group by a shape (or shapes with no common refinement).
    #[error("no grouping by {shape:?}: {why}")]
    NotGroupable {
        /// The shape asked for.
        shape: Vec<i64>,
        /// Which dimension or boundary fails, and why.
        why: String,
    },
    /// A layout that is not a tile of the given inner (or outer) layout.
    #[error("not a tile: {reason}")]
    NotATile {
        /// Which block and iter fail, and why.
        reason: String,
    },
    /// A layout that is not the direct sum of the given summand and any other layout.
    #[error("not a direct sum: {reason}")]
    NotADirectSum {
        /// Which block and iter fail, and why.
        reason: String,
    },
    /// A region whose restriction is no layout over the region's shape (the first value that
    /// rules every layout out).
    #[error("not a layout of this form: {reason}")]
    NotASlice {
        /// Which dimension or element fails, and why.
        reason: String,
    },
    /// A question an operation could not decide within its limits: neither a yes nor a no.
    #[error("undecided: {reason}")]
    Undecided {
        /// Which limit was reached, and what was tried before.
        reason: String,
    },
}

impl LayoutError {
    /// Shorthand for [`LayoutError::Invalid`].
    pub fn invalid(what: impl Into<String>, why: impl Into<String>) -> Self {
        LayoutError::Invalid {
            what: what.into(),
            why: why.into(),
        }
    }

    /// Shorthand for [`LayoutError::NotRepresentable`].
    pub fn not_representable(target: &'static str, reason: impl Into<String>) -> Self {
        LayoutError::NotRepresentable {
            target,
            reason: reason.into(),
        }
    }
}

/// Result alias of the layout model.
pub type Result<T, E = LayoutError> = std::result::Result<T, E>;

/// Widest line of an error message, in characters: a longer one (an echoed 10 MB input) is cut
/// around what matters, so bad input never gives megabytes of output.
pub const MAX_ERROR_LINE: usize = 1000;

/// Most lines of an error message; the rest are summarized by their count.
pub const MAX_ERROR_LINES: usize = 60;

/// `message` with every line at most [`MAX_ERROR_LINE`] characters and at most
/// [`MAX_ERROR_LINES`] lines. A source line followed by its caret line (`    ^^^`) keeps the
/// window around the caret in both, so the caret still points at the error:
/// `bounded_message(&format!("x {}", "9".repeat(5000)))` is about 1000 characters with the count of
/// those elided.
pub fn bounded_message(message: &str) -> String {
    let lines: Vec<&str> = message.lines().collect();
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let caret = lines.get(i + 1).and_then(|l| caret_column(l));
        match caret {
            Some(col)
                if width(lines[i]) > MAX_ERROR_LINE || width(lines[i + 1]) > MAX_ERROR_LINE =>
            {
                let from = col.saturating_sub(MAX_ERROR_LINE / 2);
                for l in [lines[i], lines[i + 1]] {
                    out.push(window(l, from));
                }
                i += 2;
            }
            _ => {
                out.push(clip(lines[i]));
                i += 1;
            }
        }
    }
    if out.len() > MAX_ERROR_LINES {
        let n = out.len() - MAX_ERROR_LINES;
        out.truncate(MAX_ERROR_LINES);
        out.push(format!("[{n} more lines]"));
    }
    out.join("\n")
}

fn width(line: &str) -> usize {
    line.chars().count()
}

/// The column of the first `^` of a caret line (spaces, then carets).
fn caret_column(line: &str) -> Option<usize> {
    let col = line.find('^')?;
    (line[..col].chars().all(|c| c == ' ') && line[col..].trim_end().chars().all(|c| c == '^'))
        .then_some(col)
}

/// The line from character `from` on, at most [`MAX_ERROR_LINE`] characters, with what was cut
/// counted where it was cut.
fn window(line: &str, from: usize) -> String {
    let n = width(line);
    if n <= MAX_ERROR_LINE && from == 0 {
        return line.to_string();
    }
    let from = from.min(n);
    let to = (from + MAX_ERROR_LINE).min(n);
    let body: String = line.chars().skip(from).take(to - from).collect();
    let head = if from > 0 {
        format!("[{from} chars] ")
    } else {
        String::new()
    };
    let tail = if to < n {
        format!(" [{} chars]", n - to)
    } else {
        String::new()
    };
    // The caret line keeps its alignment: its marker is as wide as the source line's.
    if caret_column(line).is_some() {
        return format!("{}{body}", " ".repeat(head.chars().count()));
    }
    format!("{head}{body}{tail}")
}

/// A line cut to its first and last characters around a count of the elided ones.
fn clip(line: &str) -> String {
    let n = width(line);
    if n <= MAX_ERROR_LINE {
        return line.to_string();
    }
    let keep = MAX_ERROR_LINE / 2;
    let head: String = line.chars().take(keep).collect();
    let tail: String = line.chars().skip(n - keep / 2).collect();
    format!("{head} [{} chars] {tail}", n - keep - keep / 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_parse_error_is_bounded_and_keeps_its_caret() {
        let input = format!("{}X{}", "a".repeat(50_000), "b".repeat(49_999));
        let e = ParseError {
            notation: "CuTe",
            span: 50_000..50_001,
            expected: "a shape".into(),
            found: "'X'".into(),
        };
        let m = bounded_message(&format!("error: {}", e.render(&input)));
        assert!(m.len() < 3 * MAX_ERROR_LINE, "{} bytes", m.len());
        let lines: Vec<&str> = m.lines().collect();
        // The source line is cut to the window around the caret, what was cut counted.
        assert!(lines[1].starts_with("[49502 chars] a"), "{}", lines[1]);
        assert!(lines[1].ends_with("b [49500 chars]"), "{}", lines[1]);
        let caret = lines[2].find('^').unwrap();
        assert_eq!(lines[1].chars().nth(caret), Some('X'));
    }

    #[test]
    fn many_lines_are_counted() {
        let m = bounded_message(&"x\n".repeat(MAX_ERROR_LINES + 5));
        assert!(m.ends_with("[5 more lines]"), "{m}");
    }
}
