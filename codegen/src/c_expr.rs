//! A reader and evaluator for the integer C expressions the emitters write, so translation
//! validation checks the emitted TEXT, not a value computed beside it.
//!
//! Grammar (C precedence, left associative): `land := xor ('&&' xor)*`, `xor := and ('^'
//! and)*`, `and := rel ('&' rel)*`, `rel := shift ('<' shift)*`, `shift := add ('>>' add)*`,
//! `add := mul ('+' mul)*`, `mul := atom (('*'|'/'|'%') atom)*`, `atom := integer | identifier
//! | '(' land ')'`. Arithmetic is checked i64; `/` and `%` truncate like C (the emitters only
//! divide non-negative values); `<` and `&&` give 0 or 1 as in C.
//!
//! Example: `(t % 8) * 4 + e` with `t = 9, e = 2` is `6`; `c1 < 999 && c0 < 1001` with
//! `c0 = 1000, c1 = 999` is `0`.

use std::collections::BTreeMap;

use crate::error::CodegenError;

/// A parsed expression.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CExpr {
    /// An integer literal.
    Int(i64),
    /// A variable.
    Var(String),
    /// A binary operation: `+ * / % & ^ >>` (`>` stands for `>>`), `<`, and `&&` (as `a`).
    Bin(char, Box<CExpr>, Box<CExpr>),
}

/// Variable values.
pub type Env = BTreeMap<String, i64>;

impl CExpr {
    /// Parses `text`.
    ///
    /// ```
    /// use codegen::c_expr::CExpr;
    /// let e = CExpr::parse("(t % 8) * 4 + e")?;
    /// let env = [("t".to_string(), 9), ("e".to_string(), 2)].into();
    /// assert_eq!(e.eval(&env)?, 6);
    /// # Ok::<(), codegen::CodegenError>(())
    /// ```
    pub fn parse(text: &str) -> Result<CExpr, CodegenError> {
        let mut p = Parser { text, pos: 0 };
        let e = p.land()?;
        p.skip_ws();
        if p.pos != text.len() {
            return Err(p.error("unexpected text"));
        }
        Ok(e)
    }

    /// Evaluates with checked arithmetic; an unbound variable or a division by zero is an error.
    pub fn eval(&self, env: &Env) -> Result<i64, CodegenError> {
        self.eval_with(&|name| env.get(name).copied())
    }

    /// [`CExpr::eval`] with the variables looked up by `var` (`None`: unbound).
    pub fn eval_with(&self, var: &dyn Fn(&str) -> Option<i64>) -> Result<i64, CodegenError> {
        let fail = |why: String| CodegenError::Validation(why);
        Ok(match self {
            CExpr::Int(v) => *v,
            CExpr::Var(name) => {
                var(name).ok_or_else(|| fail(format!("variable {name} is unbound")))?
            }
            CExpr::Bin(op, a, b) => {
                let (x, y) = (a.eval_with(var)?, b.eval_with(var)?);
                let r = match op {
                    '+' => x.checked_add(y),
                    '*' => x.checked_mul(y),
                    '/' => x.checked_div(y),
                    '%' => x.checked_rem(y),
                    '&' => Some(x & y),
                    '^' => Some(x ^ y),
                    '>' => u32::try_from(y).ok().and_then(|s| x.checked_shr(s)),
                    '<' => Some(i64::from(x < y)),
                    'a' => Some(i64::from(x != 0 && y != 0)),
                    _ => None,
                };
                r.ok_or_else(|| fail(format!("{x} {op} {y} overflows or divides by zero")))?
            }
        })
    }
}

impl CExpr {
    /// The variables the expression reads.
    pub fn vars(&self) -> std::collections::BTreeSet<&str> {
        match self {
            CExpr::Int(_) => Default::default(),
            CExpr::Var(v) => [v.as_str()].into(),
            CExpr::Bin(_, a, b) => a.vars().union(&b.vars()).copied().collect(),
        }
    }

    /// The operands of the top-level chain of `+` (the expression itself when it is no sum).
    pub fn summands(&self) -> Vec<&CExpr> {
        self.chain('+')
    }

    /// The operands of the top-level chain of `&&` (the expression itself when it is no
    /// conjunction).
    pub fn conjuncts(&self) -> Vec<&CExpr> {
        self.chain('a')
    }

    fn chain(&self, op: char) -> Vec<&CExpr> {
        match self {
            CExpr::Bin(o, a, b) if *o == op => {
                let mut out = a.chain(op);
                out.extend(b.chain(op));
                out
            }
            other => vec![other],
        }
    }
}

/// Rewrites every function-like `#define NAME(p, q, ...) body` line of `text` so that each
/// parameter inside the body is parenthesized (`r * 8192 + k` becomes `(r) * 8192 + (k)`): the
/// emitted index macros then mean the same when a caller passes an expression (`m0 + row`)
/// instead of a plain variable. The body must be one integer expression ([`CExpr`]) on one
/// line; the rewritten body is parsed back and must be the same expression, so the printed
/// macro is the one translation validation checked. Other lines are kept as they are.
///
/// ```
/// use codegen::c_expr::hygienic_defines;
/// let t = hygienic_defines("#define LC_A_GOFF(r, k) (r * 8192 + k)\n#define LC_M 16\n")?;
/// assert_eq!(t, "#define LC_A_GOFF(r, k) ((r) * 8192 + (k))\n#define LC_M 16\n");
/// # Ok::<(), codegen::CodegenError>(())
/// ```
pub fn hygienic_defines(text: &str) -> Result<String, CodegenError> {
    let fail = |why: String| CodegenError::Validation(why);
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    for line in text.split_inclusive('\n') {
        let Some(rest) = line.strip_prefix("#define ") else {
            out.push_str(line);
            continue;
        };
        let name_len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let (name, after) = rest.split_at(name_len);
        let Some(params_on) = after.strip_prefix('(') else {
            out.push_str(line);
            continue;
        };
        let close = params_on
            .find(')')
            .ok_or_else(|| fail(format!("macro {name}: no ')' after its parameters")))?;
        let params: Vec<&str> = params_on[..close].split(',').map(str::trim).collect();
        let body = params_on[close + 1..].trim_end_matches('\n').trim();
        if body.ends_with('\\') {
            return Err(fail(format!(
                "macro {name}: a function-like macro over several lines is not an index expression"
            )));
        }
        let parsed = CExpr::parse(body).map_err(|e| {
            fail(format!(
                "macro {name}: its body is not an index expression: {e}"
            ))
        })?;
        // A literal (digits first, a suffix such as LL) never equals a parameter's name.
        let wrapped = map_words(body, |w| params.contains(&w).then(|| format!("({w})")));
        if CExpr::parse(&wrapped)? != parsed {
            return Err(fail(format!(
                "macro {name}: the parenthesized body {wrapped:?} reads differently from {body:?}"
            )));
        }
        out.push_str("#define ");
        out.push_str(name);
        out.push('(');
        out.push_str(&params_on[..close]);
        out.push_str(") ");
        out.push_str(&wrapped);
        if line.ends_with('\n') {
            out.push('\n');
        }
    }
    Ok(out)
}

/// `text` with every maximal run of `[A-Za-z0-9_]` (a name or a literal) replaced by `f(run)`,
/// or kept where `f` answers `None`.
fn map_words(text: &str, f: impl Fn(&str) -> Option<String>) -> String {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut out = String::with_capacity(text.len() * 2);
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        let len = if word(c) {
            rest.find(|c: char| !word(c)).unwrap_or(rest.len())
        } else {
            c.len_utf8()
        };
        let run = &rest[..len];
        match if word(c) { f(run) } else { None } {
            Some(x) => out.push_str(&x),
            None => out.push_str(run),
        }
        rest = &rest[len..];
    }
    out
}

struct Parser<'a> {
    text: &'a str,
    pos: usize,
}

impl Parser<'_> {
    fn error(&self, why: &str) -> CodegenError {
        CodegenError::Expr {
            text: self.text.to_string(),
            why: format!("{why} at byte {}", self.pos),
        }
    }

    fn skip_ws(&mut self) {
        while self.text[self.pos..].starts_with(' ') {
            self.pos += 1;
        }
    }

    fn eat(&mut self, op: &str) -> bool {
        self.skip_ws();
        let rest = &self.text[self.pos..];
        // `&` and `<` alone are not the first half of `&&` or `<<`.
        let doubled = (op == "&" || op == "<") && rest[op.len().min(rest.len())..].starts_with(op);
        if rest.starts_with(op) && !doubled {
            self.pos += op.len();
            true
        } else {
            false
        }
    }

    fn level(
        &mut self,
        ops: &[(&str, char)],
        next: fn(&mut Self) -> Result<CExpr, CodegenError>,
    ) -> Result<CExpr, CodegenError> {
        let mut lhs = next(self)?;
        'more: loop {
            for &(text, op) in ops {
                if self.eat(text) {
                    let rhs = next(self)?;
                    lhs = CExpr::Bin(op, Box::new(lhs), Box::new(rhs));
                    continue 'more;
                }
            }
            return Ok(lhs);
        }
    }

    fn land(&mut self) -> Result<CExpr, CodegenError> {
        self.level(&[("&&", 'a')], Self::xor)
    }

    fn xor(&mut self) -> Result<CExpr, CodegenError> {
        self.level(&[("^", '^')], Self::and)
    }

    fn and(&mut self) -> Result<CExpr, CodegenError> {
        self.level(&[("&", '&')], Self::rel)
    }

    fn rel(&mut self) -> Result<CExpr, CodegenError> {
        self.level(&[("<", '<')], Self::shift)
    }

    fn shift(&mut self) -> Result<CExpr, CodegenError> {
        self.level(&[(">>", '>')], Self::add)
    }

    fn add(&mut self) -> Result<CExpr, CodegenError> {
        self.level(&[("+", '+')], Self::mul)
    }

    fn mul(&mut self) -> Result<CExpr, CodegenError> {
        self.level(&[("*", '*'), ("/", '/'), ("%", '%')], Self::atom)
    }

    fn atom(&mut self) -> Result<CExpr, CodegenError> {
        self.skip_ws();
        let rest = &self.text[self.pos..];
        if self.eat("(") {
            let e = self.land()?;
            if !self.eat(")") {
                return Err(self.error("expected ')'"));
            }
            return Ok(e);
        }
        let len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        if len == 0 {
            return Err(self.error("expected a number, a name or '('"));
        }
        let word = &rest[..len];
        let out = if word.as_bytes()[0].is_ascii_digit() {
            let digits = word.strip_suffix("LL").unwrap_or(word);
            CExpr::Int(
                digits
                    .parse()
                    .map_err(|_| self.error("bad integer literal"))?,
            )
        } else {
            CExpr::Var(word.to_string())
        };
        self.pos += len;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `body` with each parameter replaced by its argument's TEXT, as the C preprocessor does.
    fn expand(body: &str, params: &[&str], args: &[&str]) -> String {
        map_words(body, |w| {
            params
                .iter()
                .position(|p| *p == w)
                .map(|i| args[i].to_string())
        })
    }

    #[test]
    fn hygienic_defines_wraps_parameters_only() {
        let text = "// #define LC_X(a) (a)\n#define LC_K 8192\n\
                    #define LC_A_GUARD(r, k) (r < 8192 && k < 8192)\n\
                    #define LC_X_CP_SD(j) ((j / 1 % 2) * 4096 + 16LL)\n#define LC_T(t) (tt + t2 + t)";
        let got = hygienic_defines(text).unwrap();
        assert_eq!(
            got,
            "// #define LC_X(a) (a)\n#define LC_K 8192\n\
             #define LC_A_GUARD(r, k) ((r) < 8192 && (k) < 8192)\n\
             #define LC_X_CP_SD(j) (((j) / 1 % 2) * 4096 + 16LL)\n#define LC_T(t) (tt + t2 + (t))"
        );
    }

    #[test]
    fn hygienic_defines_refuses_what_it_cannot_read() {
        for bad in [
            "#define LC_F(x) do { x; } while (0)\n",
            "#define LC_G(x) (x + \\\n 1)\n",
            "#define LC_H(x (x)\n",
        ] {
            assert!(hygienic_defines(bad).is_err(), "{bad:?}");
        }
    }

    /// The defining property: expanding the hygienic macro with expression arguments gives the
    /// value of the expression at the arguments' values, on random bodies and arguments; the
    /// plain macro does not (the hazard the rewrite removes).
    #[test]
    fn hygienic_macros_evaluate_expression_arguments() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let mut plain_differs = 0;
        for _ in 0..500 {
            // body: a random sum of products / quotients / remainders of r and k
            let mut terms = Vec::new();
            for _ in 0..1 + next(4) {
                let v = ["r", "k"][next(2) as usize];
                let c = 1 + next(300) as i64;
                terms.push(match next(4) {
                    0 => format!("{v} * {c}"),
                    1 => format!("{v} / {c}"),
                    2 => format!("{v} % {c}"),
                    _ => format!("({v} / {c} % 4) * {}", 1 + next(64)),
                });
            }
            let body = format!("({})", terms.join(" + "));
            let line = format!("#define LC_F(r, k) {body}");
            let hyg = hygienic_defines(&line).unwrap();
            let hbody = hyg.split_once(") ").unwrap().1;
            let (x, y, z) = (next(1000) as i64, next(1000) as i64, next(50) as i64);
            let args = ["m0 + row", "k0 * 2 + kk"];
            let env: Env = [
                ("m0".into(), x),
                ("row".into(), y),
                ("k0".into(), z),
                ("kk".into(), y),
            ]
            .into();
            let want = CExpr::parse(&body)
                .unwrap()
                .eval(&[("r".to_string(), x + y), ("k".to_string(), z * 2 + y)].into())
                .unwrap();
            let got = CExpr::parse(&expand(hbody, &["r", "k"], &args))
                .unwrap()
                .eval(&env)
                .unwrap();
            assert_eq!(got, want, "{line} -> {hyg}");
            let plain = CExpr::parse(&expand(&body, &["r", "k"], &args))
                .unwrap()
                .eval(&env)
                .unwrap();
            plain_differs += usize::from(plain != want);
        }
        assert!(
            plain_differs > 100,
            "plain expansion differed only {plain_differs} times"
        );
    }
}
