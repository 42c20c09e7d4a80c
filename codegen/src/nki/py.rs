//! Writing readable Python: indented lines and affine index expressions.

/// Python source built line by line at an indentation level.
#[derive(Default)]
pub struct Py {
    lines: Vec<String>,
    depth: usize,
}

impl Py {
    /// A line at the current indentation.
    pub fn line(&mut self, text: impl AsRef<str>) {
        let text = text.as_ref();
        if text.is_empty() {
            self.lines.push(String::new());
        } else {
            self.lines
                .push(format!("{}{text}", "    ".repeat(self.depth)));
        }
    }

    /// Opens a block (`for ...:`, `def ...:`).
    pub fn open(&mut self, header: impl AsRef<str>) {
        self.line(header);
        self.depth += 1;
    }

    /// Closes the innermost block.
    pub fn close(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    /// The text, ending in a newline.
    pub fn text(&self) -> String {
        let mut s = self.lines.join("\n");
        s.push('\n');
        s
    }
}

/// `c + sum(coef * var)` as Python, terms with coefficient 0 left out:
/// `affine(5, &[(128, "i0")]) == "i0 * 128 + 5"`.
pub fn affine(c: i64, terms: &[(i64, String)]) -> String {
    let mut parts: Vec<String> = terms
        .iter()
        .filter(|(k, _)| *k != 0)
        .map(|(k, v)| {
            if *k == 1 {
                v.clone()
            } else {
                format!("{v} * {k}")
            }
        })
        .collect();
    if c != 0 || parts.is_empty() {
        parts.push(c.to_string());
    }
    parts.join(" + ").replace("+ -", "- ")
}

/// `start:start + len` (with `:step` when the stride is not 1) for `count` elements.
pub fn span(start: &str, count: i64, stride: i64) -> String {
    let len = (count - 1) * stride + 1;
    if stride == 1 {
        format!("{start}:{}", plus(start, len))
    } else {
        format!("{start}:{}:{stride}", plus(start, len))
    }
}

/// `expr + k`, folded when `expr` is a number.
pub fn plus(expr: &str, k: i64) -> String {
    match expr.parse::<i64>() {
        Ok(v) => (v + k).to_string(),
        Err(_) => format!("{expr} + {k}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn affine_and_span_print_plain_python() {
        assert_eq!(affine(5, &[(128, "i0".into())]), "i0 * 128 + 5");
        assert_eq!(affine(0, &[(0, "i0".into())]), "0");
        assert_eq!(affine(-3, &[(1, "k".into())]), "k - 3");
        assert_eq!(span("0", 128, 1), "0:128");
        assert_eq!(span("i0 * 512", 512, 1), "i0 * 512:i0 * 512 + 512");
        assert_eq!(span("4", 3, 2), "4:9:2");
    }
}
