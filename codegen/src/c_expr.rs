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
