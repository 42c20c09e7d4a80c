//! A byte cursor shared by the notation parsers: whitespace skipping, integers with overflow
//! checks, identifiers, and errors that carry the byte span and what was expected.

use crate::error::ParseError;

/// Reads one notation's text left to right.
#[derive(Clone)]
pub(crate) struct Cursor<'a> {
    src: &'a str,
    pos: usize,
    notation: &'static str,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(src: &'a str, notation: &'static str) -> Self {
        Cursor {
            src,
            pos: 0,
            notation,
        }
    }

    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    /// Moves to byte `pos` of the text (a char boundary the caller found).
    pub(crate) fn seek(&mut self, pos: usize) {
        self.pos = pos.min(self.src.len());
    }

    pub(crate) fn rest(&self) -> &'a str {
        &self.src[self.pos..]
    }

    pub(crate) fn skip_ws(&mut self) {
        while let Some(c) = self.rest().chars().next() {
            if c.is_whitespace() {
                self.pos += c.len_utf8();
            } else {
                break;
            }
        }
    }

    /// Next non-space character, without consuming it.
    pub(crate) fn peek(&mut self) -> Option<char> {
        self.skip_ws();
        self.rest().chars().next()
    }

    /// Consumes `token` (after spaces) if it is next.
    pub(crate) fn eat(&mut self, token: &str) -> bool {
        self.skip_ws();
        if self.rest().starts_with(token) {
            self.pos += token.len();
            true
        } else {
            false
        }
    }

    /// Consumes `token` or fails saying it was expected.
    pub(crate) fn expect(&mut self, token: &str) -> Result<(), ParseError> {
        if self.eat(token) {
            Ok(())
        } else {
            Err(self.error(format!("'{token}'")))
        }
    }

    /// An error at the next token: `expected`, and what stands there.
    pub(crate) fn error(&mut self, expected: impl Into<String>) -> ParseError {
        self.skip_ws();
        let rest = self.rest();
        let len = token_len(rest);
        let found = if rest.is_empty() {
            "end of input".to_string()
        } else {
            format!("{:?}", &rest[..len])
        };
        ParseError {
            notation: self.notation,
            span: self.pos..self.pos + len,
            expected: expected.into(),
            found,
        }
    }

    /// An error over an explicit span.
    pub(crate) fn error_at(
        &self,
        start: usize,
        end: usize,
        expected: impl Into<String>,
    ) -> ParseError {
        let end = end.min(self.src.len()).max(start);
        let text = &self.src[start..end];
        let found = if text.is_empty() {
            "end of input".to_string()
        } else {
            format!("{text:?}")
        };
        ParseError {
            notation: self.notation,
            span: start..end,
            expected: expected.into(),
            found,
        }
    }

    /// Fails unless only spaces remain.
    pub(crate) fn expect_end(&mut self, expected: &str) -> Result<(), ParseError> {
        if self.peek().is_none() {
            Ok(())
        } else {
            Err(self.error(format!("{expected} or end of input")))
        }
    }

    /// A signed decimal integer. `allow_static` also accepts CuTe's static spelling `_8` (`_-8`).
    pub(crate) fn int(&mut self, allow_static: bool) -> Result<i64, ParseError> {
        self.skip_ws();
        let start = self.pos;
        let bytes = self.src.as_bytes();
        let mut i = self.pos;
        // C++ CuTe prints a static negative `Int<-1>` as `_-1`.
        if allow_static && bytes.get(i) == Some(&b'_') && bytes.get(i + 1) == Some(&b'-') {
            i += 1;
        }
        let neg = bytes.get(i) == Some(&b'-');
        if neg {
            i += 1;
        }
        if allow_static && bytes.get(i) == Some(&b'_') {
            i += 1;
        }
        let digits_start = i;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        if i == digits_start {
            return Err(self.error("an integer"));
        }
        let digits = &self.src[digits_start..i];
        let magnitude: i128 = digits.parse().unwrap_or(i128::MAX);
        let value = if neg { -magnitude } else { magnitude };
        let value = i64::try_from(value)
            .map_err(|_| self.error_at(start, i, "an integer that fits in 64 bits"))?;
        self.pos = i;
        Ok(value)
    }

    /// An identifier `[A-Za-z_][A-Za-z0-9_]*`.
    pub(crate) fn ident(&mut self, what: &str) -> Result<&'a str, ParseError> {
        self.skip_ws();
        let rest = self.rest();
        let len = rest
            .char_indices()
            .take_while(|&(i, c)| {
                c.is_ascii_alphabetic() || c == '_' || (i > 0 && c.is_ascii_digit())
            })
            .map(|(i, c)| i + c.len_utf8())
            .last()
            .unwrap_or(0);
        if len == 0 {
            return Err(self.error(what.to_string()));
        }
        self.pos += len;
        Ok(&rest[..len])
    }
}

/// `name(.name)*` at the cursor: a dotted Python name (`nl.ndarray`, `T.floordiv`).
pub(crate) fn dotted<'a>(c: &mut Cursor<'a>) -> Result<&'a str, ParseError> {
    c.skip_ws();
    let start = c.pos();
    c.ident("a name")?;
    while c.rest().starts_with('.')
        && c.rest()[1..].starts_with(|ch: char| ch.is_ascii_alphabetic() || ch == '_')
    {
        c.seek(c.pos() + 1);
        c.ident("a name")?;
    }
    let end = c.pos();
    c.seek(start);
    let text = &c.rest()[..end - start];
    c.seek(end);
    Ok(text)
}

/// Python text with its comments (`#` to the end of the line, outside a string) blanked,
/// byte offsets kept, so that errors point into the text as pasted.
pub(crate) fn without_python_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_comment = false;
    let mut quote: Option<char> = None;
    for c in text.chars() {
        if c == '\n' {
            in_comment = false;
            quote = None;
        }
        if in_comment {
            out.extend(std::iter::repeat_n(' ', c.len_utf8()));
            continue;
        }
        match quote {
            Some(q) if c == q => quote = None,
            None if c == '"' || c == '\'' => quote = Some(c),
            None if c == '#' => {
                in_comment = true;
                out.push(' ');
                continue;
            }
            _ => {}
        }
        out.push(c);
    }
    out
}

/// Length of the token at the start of `rest`: a word, a number, or one character.
fn token_len(rest: &str) -> usize {
    let word: usize = rest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .map(char::len_utf8)
        .sum();
    if word > 0 {
        word
    } else {
        rest.chars().next().map_or(0, char::len_utf8)
    }
}
