//! The rule-file parser. Every error is a [`ParseError`] with the byte span of the offending
//! text, rendered like the notation parsers' errors (a caret under the span).
//!
//! ```text
//! rule merge_same_axis  forall e1 e2 s : int, a : axis
//!   where 1 <= e1 <= 8, 1 <= e2 <= 8, -8 <= s <= 8
//!   S[(e1,e2):((e2*s)@a, s@a)] == S[(e1*e2):(s@a)]
//! rule convert_to_axe_preserves_map  forall L : cute(2, 3, 3)
//!   L == to_axe(L) over lhs
//! ```
//! `over lhs` / `over rhs` names the claim's logical domain: that side's natural domain at
//! every instance (spec certify.md 1b). Without it the domain is the one
//! [`crate::domain::resolve_pair`] gives, which is ambiguous where a CuTe side of rank 2 or
//! more meets an Axe side (each reads an N-D coordinate in its own order).
//!
//! Layout literals are cut into verbatim text and holes: an integer parameter or an arithmetic
//! run (`e1*e2`, `(e2*s)`) becomes an integer hole, an axis parameter an axis hole; `layout`'s
//! own parser reads the literal once the holes are filled.
//!
//! Nesting is bounded: operators, parentheses, `!` and the operands of one `+ - * / %` chain
//! may nest at most [`MAX_NESTING`] levels deep (the layout notations stop at 64 too); deeper
//! input is a [`ParseError`] with a caret, never a stack overflow in the parser or in the
//! recursive evaluators behind it. Chains of `&&` and `||` are not bounded: they are built as
//! balanced trees (both are associative and evaluated left to right), so a chain of n
//! conditions is only log2(n) deep.

use std::collections::BTreeMap;
use std::ops::Range;

use layout::ParseError;

use super::ops::{signature, ArgKind};
use super::syntax::{
    Arg, CallArg, CmpOp, Cond, IntExpr, Over, Param, Piece, Relation, Rule, RuleFile, Sort, Term,
};

/// How deeply terms, integer expressions and conditions may nest (operators, parentheses,
/// `!`, and the operands of one arithmetic chain each count one level).
pub const MAX_NESTING: usize = 64;

/// Words that cannot name a parameter.
const RESERVED: &[&str] = &[
    "rule", "forall", "where", "int", "axis", "cute", "axe", "size", "cosize", "rank", "pow2",
    "defined", "S", "R", "Sw", "o", "over",
];

/// Integer functions usable in expressions: name and whether the argument is a term.
const INT_FUNCTIONS: &[(&str, bool)] = &[
    ("size", true),
    ("cosize", true),
    ("rank", true),
    ("pow2", false),
];

/// Parses a whole rule file.
pub fn parse_file(src: &str) -> Result<RuleFile, ParseError> {
    let mut p = Parser {
        src,
        pos: 0,
        params: BTreeMap::new(),
        depth: 0,
    };
    let mut rules: Vec<Rule> = Vec::new();
    loop {
        p.ws();
        if p.pos >= src.len() {
            break;
        }
        let rule = p.rule()?;
        check_literals(&rule)?;
        if let Some(prev) = rules.iter().find(|r| r.name == rule.name) {
            let at = prev.span.start;
            return Err(p.err_at(
                rule.span.start..rule.span.start + 4 + rule.name.len() + 1,
                "a rule name not used before",
                &format!(
                    "{:?} (already the name of the rule at byte {at})",
                    rule.name
                ),
            ));
        }
        rules.push(rule);
    }
    Ok(RuleFile { rules })
}

/// Parses one concrete term (no parameters): operators over layout literals.
pub fn parse_term(src: &str) -> Result<Term, ParseError> {
    let mut p = Parser {
        src,
        pos: 0,
        params: BTreeMap::new(),
        depth: 0,
    };
    let t = p.term()?;
    p.ws();
    if p.pos < src.len() {
        return Err(p.err("the end of the term"));
    }
    Ok(t)
}

/// Prints a term in rule syntax (operators over literals and parameters).
pub fn print_term(t: &Term) -> String {
    use super::syntax::Arg;
    let int = |e: &IntExpr| print_int(e);
    match t {
        Term::Lit { text, .. } => text.clone(),
        Term::Var { name, .. } => name.clone(),
        Term::Op { name, args, .. } => {
            let args: Vec<String> = args
                .iter()
                .map(|a| match a {
                    Arg::Term(t) => print_term(t),
                    Arg::Int(e) => int(e),
                    Arg::Shape(es) => {
                        format!("[{}]", es.iter().map(int).collect::<Vec<_>>().join(", "))
                    }
                    Arg::Region(rs) => format!(
                        "[{}]",
                        rs.iter()
                            .map(|(b, e)| format!("({}, {})", int(b), int(e)))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                })
                .collect();
            format!("{name}({})", args.join(", "))
        }
    }
}

fn print_int(e: &IntExpr) -> String {
    match e {
        IntExpr::Num(v) => v.to_string(),
        IntExpr::Param(p) => p.clone(),
        IntExpr::Neg(x) => format!("-({})", print_int(x)),
        IntExpr::Bin(op, x, y) => format!("({} {op} {})", print_int(x), print_int(y)),
        IntExpr::Call(f, a) => match a.as_ref() {
            CallArg::Term(t) => format!("{f}({})", print_term(t)),
            CallArg::Int(x) => format!("{f}({})", print_int(x)),
        },
    }
}

struct Parser<'a> {
    src: &'a str,
    pos: usize,
    params: BTreeMap<String, Sort>,
    /// The current nesting level (see [`MAX_NESTING`]).
    depth: usize,
}

/// Joins conditions with `join` as a balanced tree (left to right order kept).
fn balanced(mut cs: Vec<Cond>, join: fn(Box<Cond>, Box<Cond>) -> Cond) -> Cond {
    while cs.len() > 1 {
        let mut next = Vec::with_capacity(cs.len().div_ceil(2));
        let mut it = cs.into_iter();
        while let Some(a) = it.next() {
            next.push(match it.next() {
                Some(b) => join(Box::new(a), Box::new(b)),
                None => a,
            });
        }
        cs = next;
    }
    cs.pop().expect("at least one condition")
}

impl<'a> Parser<'a> {
    fn rest(&self) -> &'a str {
        &self.src[self.pos..]
    }

    /// Skips spaces and `//` comments.
    fn ws(&mut self) {
        loop {
            let r = self.rest();
            let t = r.trim_start();
            self.pos += r.len() - t.len();
            if t.starts_with("//") {
                self.pos += t.find('\n').unwrap_or(t.len());
            } else {
                break;
            }
        }
    }

    /// Runs `f` one nesting level deeper, or fails when that passes [`MAX_NESTING`].
    fn nested<T>(
        &mut self,
        f: impl FnOnce(&mut Self) -> Result<T, ParseError>,
    ) -> Result<T, ParseError> {
        self.deeper()?;
        let r = f(self);
        self.depth -= 1;
        r
    }

    /// Enters one more nesting level (the caller restores `depth`).
    fn deeper(&mut self) -> Result<(), ParseError> {
        if self.depth >= MAX_NESTING {
            self.ws();
            return Err(self.err(&format!("at most {MAX_NESTING} levels of nesting")));
        }
        self.depth += 1;
        Ok(())
    }

    fn found(&self) -> String {
        let r = self.rest();
        match r.split_whitespace().next() {
            None => "end of input".into(),
            Some(w) => format!("{:?}", w.chars().take(24).collect::<String>()),
        }
    }

    fn err(&self, expected: &str) -> ParseError {
        let len = self.rest().chars().next().map_or(0, char::len_utf8);
        self.err_at(self.pos..self.pos + len, expected, &self.found())
    }

    fn err_at(&self, span: Range<usize>, expected: &str, found: &str) -> ParseError {
        ParseError {
            notation: "rule file",
            span,
            expected: expected.into(),
            found: found.into(),
        }
    }

    fn peek_is(&mut self, tok: &str) -> bool {
        self.ws();
        self.rest().starts_with(tok)
    }

    fn eat(&mut self, tok: &str) -> bool {
        if self.peek_is(tok) {
            self.pos += tok.len();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, tok: &str) -> Result<(), ParseError> {
        if self.eat(tok) {
            Ok(())
        } else {
            Err(self.err(&format!("{tok:?}")))
        }
    }

    /// The identifier at the cursor, without consuming it.
    fn peek_ident(&mut self) -> Option<(String, Range<usize>)> {
        self.ws();
        let r = self.rest();
        let end = ident_len(r)?;
        Some((r[..end].to_string(), self.pos..self.pos + end))
    }

    fn ident(&mut self, what: &str) -> Result<(String, Range<usize>), ParseError> {
        let (name, span) = self.peek_ident().ok_or_else(|| self.err(what))?;
        self.pos = span.end;
        Ok((name, span))
    }

    fn keyword(&mut self, kw: &str) -> bool {
        match self.peek_ident() {
            Some((w, span)) if w == kw => {
                self.pos = span.end;
                true
            }
            _ => false,
        }
    }

    fn int(&mut self) -> Result<i64, ParseError> {
        self.ws();
        let start = self.pos;
        let r = self.rest();
        let end = r.find(|c: char| !c.is_ascii_digit()).unwrap_or(r.len());
        if end == 0 {
            return Err(self.err("an integer"));
        }
        self.pos += end;
        r[..end]
            .parse::<i64>()
            .map_err(|_| self.err_at(start..start + end, "an integer that fits in i64", &r[..end]))
    }

    fn rule(&mut self) -> Result<Rule, ParseError> {
        let start = self.pos;
        if !self.keyword("rule") {
            return Err(self.err("\"rule\""));
        }
        let (name, _) = self.ident("a rule name")?;
        self.params.clear();
        let mut params = Vec::new();
        if self.keyword("forall") {
            loop {
                let mut names = Vec::new();
                while let Some((n, span)) = self.peek_ident() {
                    if RESERVED.contains(&n.as_str()) {
                        return Err(self.err_at(
                            span,
                            "a parameter name",
                            &format!("{n:?} (reserved)"),
                        ));
                    }
                    self.pos = span.end;
                    names.push((n, span));
                }
                if names.is_empty() {
                    return Err(self.err("a parameter name"));
                }
                self.expect(":")?;
                let sort = self.sort()?;
                for (n, span) in names {
                    if self.params.insert(n.clone(), sort.clone()).is_some() {
                        return Err(self.err_at(
                            span,
                            "a new parameter name",
                            &format!("{n:?} again"),
                        ));
                    }
                    params.push(Param {
                        name: n,
                        sort: sort.clone(),
                        span,
                    });
                }
                if !self.eat(",") {
                    break;
                }
            }
        }
        let mut conds = Vec::new();
        if self.keyword("where") {
            loop {
                conds.push(self.cond()?);
                if !self.eat(",") {
                    break;
                }
            }
        }
        let lhs = self.term()?;
        let relation = if self.eat("===") {
            Relation::Identical
        } else if self.eat("==") {
            Relation::SameMap
        } else {
            return Err(self.err("\"==\" (same map) or \"===\" (identical)"));
        };
        let rhs = self.term()?;
        let mut end = self.pos;
        let over = if self.keyword("over") {
            let (side, span) =
                self.ident("\"lhs\" or \"rhs\" (the side whose natural domain the claim is over)")?;
            match side.as_str() {
                "lhs" => Some(Over::Lhs),
                "rhs" => Some(Over::Rhs),
                _ => {
                    return Err(self.err_at(
                        span,
                        "\"lhs\" or \"rhs\" (the side whose natural domain the claim is over)",
                        &format!("{side:?}"),
                    ))
                }
            }
        } else {
            None
        };
        if over.is_some() {
            end = self.pos;
        }
        self.ws();
        if self.pos < self.src.len() && !matches!(self.peek_ident(), Some((w, _)) if w == "rule") {
            return Err(self.err("\"over lhs\", \"over rhs\", or the end of the rule (a new \"rule\" or the end of the file)"));
        }
        Ok(Rule {
            name,
            text: self.src[start..end].to_string(),
            span: start..end,
            params,
            conds,
            lhs,
            relation,
            rhs,
            over,
        })
    }

    fn sort(&mut self) -> Result<Sort, ParseError> {
        let (s, span) = self.ident("a sort: int, axis, cute(r,e,s) or axe(r,e,s)")?;
        match s.as_str() {
            "int" => Ok(Sort::Int),
            "axis" => {
                let mut axes = vec!["m".to_string(), "laneid".to_string()];
                if self.eat("{") {
                    axes.clear();
                    loop {
                        axes.push(self.ident("an axis name")?.0);
                        if !self.eat(",") {
                            break;
                        }
                    }
                    self.expect("}")?;
                }
                Ok(Sort::Axis(axes))
            }
            "cute" | "axe" => {
                self.expect("(")?;
                let rank = self.int()?;
                self.expect(",")?;
                let extent = self.int()?;
                self.expect(",")?;
                let stride = self.int()?;
                self.expect(")")?;
                let rank = u32::try_from(rank)
                    .ok()
                    .filter(|r| (1..=4).contains(r))
                    .ok_or_else(|| {
                        self.err_at(span.clone(), "a rank in 1..=4", &rank.to_string())
                    })?;
                if extent < 1 {
                    return Err(self.err_at(span, "an extent bound >= 1", &extent.to_string()));
                }
                Ok(if s == "cute" {
                    Sort::Cute {
                        rank,
                        extent,
                        stride,
                    }
                } else {
                    Sort::Axe {
                        rank,
                        extent,
                        stride,
                    }
                })
            }
            other => Err(self.err_at(span, "a sort: int, axis, cute(r,e,s) or axe(r,e,s)", other)),
        }
    }

    fn cond(&mut self) -> Result<Cond, ParseError> {
        let mut cs = vec![self.cond_and()?];
        while self.eat("||") {
            cs.push(self.cond_and()?);
        }
        Ok(balanced(cs, Cond::Or))
    }

    fn cond_and(&mut self) -> Result<Cond, ParseError> {
        let mut cs = vec![self.cond_not()?];
        while self.eat("&&") {
            cs.push(self.cond_not()?);
        }
        Ok(balanced(cs, Cond::And))
    }

    fn cond_not(&mut self) -> Result<Cond, ParseError> {
        self.nested(Self::cond_atom)
    }

    fn cond_atom(&mut self) -> Result<Cond, ParseError> {
        if self.peek_is("!") && !self.peek_is("!=") {
            self.pos += 1;
            return Ok(Cond::Not(Box::new(self.cond_not()?)));
        }
        if let Some((w, span)) = self.peek_ident() {
            if w == "defined" && self.src[span.end..].trim_start().starts_with('(') {
                self.pos = span.end;
                self.expect("(")?;
                let t = self.term()?;
                self.expect(")")?;
                return Ok(Cond::Defined(t));
            }
        }
        if self.peek_is("(") {
            let save = self.pos;
            self.pos += 1;
            if let Ok(c) = self.cond() {
                if self.eat(")") && self.cmp_op_ahead().is_none() {
                    return Ok(c);
                }
            }
            self.pos = save;
        }
        let mut exprs = vec![self.expr()?];
        let mut ops = Vec::new();
        while let Some((op, len)) = self.cmp_op_ahead() {
            self.pos += len;
            ops.push(op);
            exprs.push(self.expr()?);
        }
        if ops.is_empty() {
            return Err(self.err("a comparison (<, <=, >, >=, ==, !=)"));
        }
        Ok(Cond::Cmp(exprs, ops))
    }

    fn cmp_op_ahead(&mut self) -> Option<(CmpOp, usize)> {
        self.ws();
        let r = self.rest();
        if r.starts_with("===") {
            return None;
        }
        [
            ("<=", CmpOp::Le),
            (">=", CmpOp::Ge),
            ("==", CmpOp::Eq),
            ("!=", CmpOp::Ne),
            ("<", CmpOp::Lt),
            (">", CmpOp::Gt),
        ]
        .into_iter()
        .find(|(t, _)| r.starts_with(t))
        .map(|(t, op)| (op, t.len()))
    }

    /// A `+ -` chain; each further operand is one level deeper (the tree is left-deep).
    fn expr(&mut self) -> Result<IntExpr, ParseError> {
        self.ws();
        let (base, start) = (self.depth, self.pos);
        let r = self.expr_chain();
        self.depth = base;
        self.evaluates_if_constant(r?, start)
    }

    /// `e` (parsed from `start`), unless it uses no parameter and fails to evaluate (an
    /// overflow, a division by zero, `pow2` out of range): it would fail at every instance, so
    /// the rule is malformed. (`size`, `cosize` and `rank` of a term are left to the
    /// instances: an operator that fails leaves a side undefined, by the rules' semantics.)
    fn evaluates_if_constant(&self, e: IntExpr, start: usize) -> Result<IntExpr, ParseError> {
        if !constant(&e) {
            return Ok(e);
        }
        match super::eval::int(&e, &super::eval::Assignment::new()) {
            Ok(_) => Ok(e),
            Err(why) => {
                let end = start + self.src[start..self.pos].trim_end().len();
                Err(self.err_at(
                    start..end.max(start + 1),
                    "an integer expression that evaluates (it uses no parameter, so it fails at every instance)",
                    &why.to_string(),
                ))
            }
        }
    }

    fn expr_chain(&mut self) -> Result<IntExpr, ParseError> {
        let mut e = self.product()?;
        loop {
            let op = if self.peek_is("+") {
                '+'
            } else if self.peek_is("-") && !self.peek_is("->") {
                '-'
            } else {
                return Ok(e);
            };
            self.pos += 1;
            self.deeper()?;
            e = IntExpr::Bin(op, Box::new(e), Box::new(self.product()?));
        }
    }

    /// A `* / %` chain; each further operand is one level deeper (the tree is left-deep).
    fn product(&mut self) -> Result<IntExpr, ParseError> {
        self.ws();
        let (base, start) = (self.depth, self.pos);
        let r = self.product_chain();
        self.depth = base;
        self.evaluates_if_constant(r?, start)
    }

    fn product_chain(&mut self) -> Result<IntExpr, ParseError> {
        let mut e = self.unary()?;
        loop {
            let op = ['*', '/', '%']
                .into_iter()
                .find(|c| self.peek_is(&c.to_string()) && !self.peek_is("//"));
            let Some(op) = op else { return Ok(e) };
            self.pos += 1;
            self.deeper()?;
            e = IntExpr::Bin(op, Box::new(e), Box::new(self.unary()?));
        }
    }

    fn unary(&mut self) -> Result<IntExpr, ParseError> {
        self.nested(Self::unary_atom)
    }

    fn unary_atom(&mut self) -> Result<IntExpr, ParseError> {
        if self.eat("-") {
            return Ok(IntExpr::Neg(Box::new(self.unary()?)));
        }
        if self.eat("(") {
            let e = self.expr()?;
            self.expect(")")?;
            return Ok(e);
        }
        if let Some((name, span)) = self.peek_ident() {
            if let Some((f, takes_term)) = INT_FUNCTIONS.iter().find(|(f, _)| *f == name) {
                self.pos = span.end;
                self.expect("(")?;
                let arg = if *takes_term {
                    CallArg::Term(self.term()?)
                } else {
                    CallArg::Int(self.expr()?)
                };
                self.expect(")")?;
                return Ok(IntExpr::Call(f.to_string(), Box::new(arg)));
            }
            return match self.params.get(&name) {
                Some(Sort::Int) => {
                    self.pos = span.end;
                    Ok(IntExpr::Param(name))
                }
                Some(other) => Err(self.err_at(
                    span,
                    "an integer parameter",
                    &format!("{name:?} (declared as {})", sort_name(other)),
                )),
                None => Err(self.err_at(
                    span,
                    "an integer or a declared int parameter",
                    &format!("{name:?}"),
                )),
            };
        }
        Ok(IntExpr::Num(self.int()?))
    }

    fn term(&mut self) -> Result<Term, ParseError> {
        self.nested(Self::term_atom)
    }

    fn term_atom(&mut self) -> Result<Term, ParseError> {
        self.ws();
        let start = self.pos;
        if let Some((name, span)) = self.peek_ident() {
            let after = self.src[span.end..].trim_start();
            if after.starts_with('(') {
                if let Some(kinds) = signature(&name) {
                    self.pos = span.end;
                    self.expect("(")?;
                    let mut args = Vec::new();
                    for (i, kind) in kinds.iter().enumerate() {
                        if i > 0 {
                            self.expect(",").map_err(|_| {
                                self.err(&format!("\",\": {name} takes {} arguments", kinds.len()))
                            })?;
                        }
                        args.push(self.arg(*kind)?);
                    }
                    self.expect(")").map_err(|_| {
                        self.err(&format!("\")\": {name} takes {} arguments", kinds.len()))
                    })?;
                    return Ok(Term::Op {
                        name,
                        args,
                        span: start..self.pos,
                    });
                }
            }
            if let Some(sort) = self.params.get(&name) {
                if sort.is_layout() {
                    self.pos = span.end;
                    return Ok(Term::Var { name, span });
                }
            }
            // No layout notation starts with `name(`: an operator this build does not know.
            if after.starts_with('(') && !INT_FUNCTIONS.iter().any(|(f, _)| *f == name) {
                let known: Vec<&str> = super::ops::OPERATORS.iter().map(|o| o.0).collect();
                return Err(self.err_at(
                    span,
                    &format!("an operator ({})", known.join(", ")),
                    &format!("{name:?}, not an operator"),
                ));
            }
        }
        self.literal()
    }

    fn arg(&mut self, kind: ArgKind) -> Result<Arg, ParseError> {
        Ok(match kind {
            ArgKind::Term => Arg::Term(self.term()?),
            ArgKind::Int => Arg::Int(self.expr()?),
            ArgKind::Shape => {
                self.expect("[")?;
                let mut dims = vec![self.expr()?];
                while self.eat(",") {
                    dims.push(self.expr()?);
                }
                self.expect("]")?;
                Arg::Shape(dims)
            }
            ArgKind::Region => {
                self.expect("[")?;
                let mut dims = Vec::new();
                loop {
                    self.expect("(")?;
                    let b = self.expr()?;
                    self.expect(",")?;
                    let e = self.expr()?;
                    self.expect(")")?;
                    dims.push((b, e));
                    if !self.eat(",") {
                        break;
                    }
                }
                self.expect("]")?;
                Arg::Region(dims)
            }
        })
    }

    /// Whether the word `over` (a rule's domain clause) starts at byte `i`, after whitespace
    /// and before whitespace or the end.
    fn at_over(&self, i: usize) -> bool {
        let b = self.src.as_bytes();
        b[i..].starts_with(b"over")
            && i > 0
            && b[i - 1].is_ascii_whitespace()
            && b.get(i + 4).is_none_or(|c| c.is_ascii_whitespace())
    }

    /// A layout literal: everything up to a `,`, an unmatched closer, `=`, the word `over` or
    /// the end of the line at bracket depth 0.
    fn literal(&mut self) -> Result<Term, ParseError> {
        self.ws();
        let start = self.pos;
        let bytes = self.src.as_bytes();
        let mut stack: Vec<u8> = Vec::new();
        let mut i = start;
        while i < bytes.len() {
            let c = bytes[i];
            if stack.is_empty()
                && (matches!(c, b',' | b')' | b']' | b'}' | b'\n' | b'=')
                    || bytes[i..].starts_with(b"//")
                    || self.at_over(i))
            {
                break;
            }
            match c {
                b'(' => stack.push(b')'),
                b'[' => stack.push(b']'),
                b'{' => stack.push(b'}'),
                b'<' if i > 0 && bytes[i - 1].is_ascii_alphanumeric() => stack.push(b'>'),
                b'>' if i > 0 && bytes[i - 1] == b'-' => {}
                b')' | b']' | b'}' | b'>' => {
                    if stack.last() == Some(&c) {
                        stack.pop();
                    } else if c != b'>' {
                        return Err(self.err_at(
                            i..i + 1,
                            "a balanced layout literal",
                            &format!("{:?}", c as char),
                        ));
                    }
                }
                _ => {}
            }
            i += 1;
        }
        if !stack.is_empty() {
            return Err(self.err_at(
                start..i,
                &format!(
                    "{:?} closing the layout literal",
                    stack[stack.len() - 1] as char
                ),
                "end of the literal",
            ));
        }
        let text = self.src[start..i].trim_end();
        if text.is_empty() {
            return Err(self.err("a layout term (a literal, a layout parameter or an operator)"));
        }
        let span = start..start + text.len();
        // A parser that ends where the literal ends, so expressions stop there.
        let mut inner = Parser {
            src: &self.src[..span.end],
            pos: span.start,
            params: std::mem::take(&mut self.params),
            depth: self.depth,
        };
        let pieces = inner.pieces(span.clone());
        self.params = inner.params;
        let pieces = pieces?;
        self.pos = span.end;
        Ok(Term::Lit {
            text: text.to_string(),
            pieces,
            span,
        })
    }

    /// Cuts a literal into text and holes (see the module doc).
    fn pieces(&mut self, span: Range<usize>) -> Result<Vec<Piece>, ParseError> {
        let mut out: Vec<Piece> = Vec::new();
        let push_text = |out: &mut Vec<Piece>, s: &str| match out.last_mut() {
            Some(Piece::Text(t)) => t.push_str(s),
            _ => out.push(Piece::Text(s.to_string())),
        };
        self.pos = span.start;
        while self.pos < span.end {
            let c = self.rest().chars().next().expect("inside the literal");
            let prev = self.src[span.start..self.pos].trim_end().chars().last();
            // After an Axe literal's top-level `+`, the run is one offset (`3`, `-c`,
            // `(c+2)@F`): its own `+` and `-` separate offsets (axe.md 3), so it is one product,
            // never a sum (`S[4:1] + 3 + 2@F` has the offsets 3 and 2@F, not 5@F).
            let offset = prev == Some('+') && self.at_top_level(span.start);
            let unary_ok = matches!(prev, None | Some('(' | ',' | ':' | '[')) || offset;
            let starts_run = c.is_ascii_digit()
                || (c == '-' && unary_ok)
                || (c == '(' && self.arithmetic_paren(span.end))
                || matches!(self.peek_ident_here(), Some(ref n) if matches!(self.params.get(n), Some(Sort::Int))
                    || (INT_FUNCTIONS.iter().any(|(f, _)| f == n)
                        && self.src[self.pos + n.len()..].starts_with('(')))
                    && prev != Some('@');
            if starts_run {
                let at = self.pos;
                let e = if offset {
                    self.product()?
                } else {
                    self.expr()?
                };
                if self.pos > span.end {
                    return Err(self.err_at(
                        at..span.end,
                        "an integer expression inside the literal",
                        "text past its end",
                    ));
                }
                out.push(Piece::Int(e));
                continue;
            }
            if let Some(n) = self.peek_ident_here() {
                let len = n.len();
                let span = self.pos..self.pos + len;
                match self.params.get(&n) {
                    Some(Sort::Axis(_)) if prev != Some('@') => {
                        return Err(self.err_at(
                            span,
                            "an axis parameter only after '@' (as in `4@a`)",
                            &format!("{n:?} (an axis parameter) outside an axis position"),
                        ))
                    }
                    Some(Sort::Int) if prev == Some('@') => {
                        return Err(self.err_at(
                            span,
                            "an axis name or an axis parameter after '@'",
                            &format!("{n:?} (declared as int)"),
                        ))
                    }
                    Some(Sort::Axis(_)) => out.push(Piece::Axis(n)),
                    Some(s) if s.is_layout() => {
                        return Err(self.err_at(
                            self.pos..self.pos + len,
                            "a layout literal (a layout parameter stands alone, not inside one)",
                            &n,
                        ))
                    }
                    _ => push_text(&mut out, &n),
                }
                self.pos += len;
                continue;
            }
            push_text(&mut out, &c.to_string());
            self.pos += c.len_utf8();
        }
        Ok(out)
    }

    /// Whether the cursor is outside every bracket of the literal that starts at `start`.
    fn at_top_level(&self, start: usize) -> bool {
        let mut depth = 0i64;
        for c in self.src[start..self.pos].chars() {
            match c {
                '(' | '[' | '<' => depth += 1,
                ')' | ']' | '>' => depth -= 1,
                _ => {}
            }
        }
        depth == 0
    }

    fn peek_ident_here(&self) -> Option<String> {
        let r = self.rest();
        ident_len(r).map(|end| r[..end].to_string())
    }

    /// Whether the `(` at the cursor opens an arithmetic group (no `,`, `:` or `@` before its
    /// matching `)`).
    fn arithmetic_paren(&self, end: usize) -> bool {
        let mut depth = 0;
        for (i, c) in self.src[self.pos..end].char_indices() {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        return i > 1;
                    }
                }
                ',' | ':' | '@' | '[' | '<' => return false,
                _ => {}
            }
        }
        false
    }
}

fn sort_name(s: &Sort) -> &'static str {
    match s {
        Sort::Int => "int",
        Sort::Axis(_) => "axis",
        Sort::Cute { .. } => "cute",
        Sort::Axe { .. } => "axe",
    }
}

/// The length of the identifier `[A-Za-z_][A-Za-z0-9_]*` that starts `r`, if one does.
fn ident_len(r: &str) -> Option<usize> {
    let mut it = r.char_indices();
    match it.next() {
        Some((_, c)) if c.is_ascii_alphabetic() || c == '_' => {}
        _ => return None,
    }
    Some(
        it.find(|(_, c)| !(c.is_ascii_alphanumeric() || *c == '_'))
            .map_or(r.len(), |(i, _)| i),
    )
}

/// Markers of a notation parser's SEMANTIC errors (values that depend on the instance), as
/// opposed to text that never parses.
const SEMANTIC: &[&str] = &[
    "a valid",
    "an offset on a new axis",
    "extents",
    "Sw<B,M,S>",
    "a layout a swizzle",
    "a power-of-two",
    "an integer that fits",
];

/// Whether an integer expression is the same at every instance: it uses no parameter and no
/// term (`size(T)` and the like are left to the instances).
fn constant(e: &IntExpr) -> bool {
    match e {
        IntExpr::Num(_) => true,
        IntExpr::Param(_) => false,
        IntExpr::Neg(x) => constant(x),
        IntExpr::Bin(_, x, y) => constant(x) && constant(y),
        IntExpr::Call(_, a) => match a.as_ref() {
            CallArg::Int(x) => constant(x),
            CallArg::Term(_) => false,
        },
    }
}

/// Every layout literal of a rule must parse in its notation at a probe instance (integer
/// holes 1, axis holes the sort's first axis), unless the failure is one a value causes: a
/// literal that never parses (an unknown word, a misplaced symbol) is a malformed rule, not an
/// instance where a side is undefined. A literal that uses no parameter is the same value at
/// every instance: it is read with its own numbers, and any failure (an extent 0, two offsets
/// on one axis, strides that do not match the shape) is a malformed rule too.
fn check_literals(rule: &Rule) -> Result<(), ParseError> {
    let mut lits = Vec::new();
    collect_term(&rule.lhs, &mut lits);
    collect_term(&rule.rhs, &mut lits);
    for c in &rule.conds {
        collect_cond(c, &mut lits);
    }
    for lit in lits {
        let Term::Lit { text, pieces, span } = lit else {
            continue;
        };
        let fixed = pieces.iter().all(|p| match p {
            Piece::Text(_) => true,
            Piece::Int(e) => constant(e),
            Piece::Axis(_) => false,
        });
        // The filled text, and where each piece lies in it and in the literal.
        let mut filled = String::new();
        let mut map: Vec<(usize, usize)> = Vec::new(); // (filled start, literal offset)
        let mut cursor = 0;
        for p in pieces {
            let at = filled.len();
            match p {
                Piece::Text(t) => {
                    let off = text[cursor..]
                        .find(t.as_str())
                        .map_or(cursor, |i| cursor + i);
                    map.push((at, off));
                    cursor = off + t.len();
                    filled.push_str(t);
                }
                Piece::Int(e) => {
                    map.push((at, cursor));
                    match fixed {
                        // Evaluates: `evaluates_if_constant` checked it when it was parsed.
                        true => filled.push_str(
                            &super::eval::int(e, &super::eval::Assignment::new())
                                .map_or_else(|_| "1".into(), |v| v.to_string()),
                        ),
                        false => filled.push('1'),
                    }
                }
                Piece::Axis(n) => {
                    map.push((at, cursor));
                    let axis = rule
                        .params
                        .iter()
                        .find(|q| &q.name == n)
                        .and_then(|q| match &q.sort {
                            Sort::Axis(a) => a.first().cloned(),
                            _ => None,
                        })
                        .unwrap_or_else(|| "m".into());
                    filled.push_str(&axis);
                }
            }
        }
        let e = match layout::Layout::parse(&filled, None) {
            Ok(_) => continue,
            Err(layout::LayoutError::Parse(e))
                if fixed || !SEMANTIC.iter().any(|m| e.expected.starts_with(m)) =>
            {
                e
            }
            Err(other) if fixed => {
                return Err(ParseError {
                    notation: "rule file",
                    span: span.clone(),
                    expected: "a layout literal that is defined (it uses no parameter, so it is undefined at every instance)".into(),
                    found: other.to_string(),
                })
            }
            Err(_) => continue,
        };
        let fixed_note = if fixed {
            "; the literal uses no parameter, so it is undefined at every instance"
        } else {
            ""
        };
        let i = map
            .partition_point(|&(f, _)| f <= e.span.start)
            .saturating_sub(1);
        let (f, off) = map.get(i).copied().unwrap_or((0, 0));
        let in_text = matches!(pieces.get(i), Some(Piece::Text(_)));
        let start = span.start + off + if in_text { e.span.start - f } else { 0 };
        let len = e.span.len().max(1);
        return Err(ParseError {
            notation: "rule file",
            span: start..(start + len).min(span.end).max(start + 1),
            expected: format!(
                "a layout literal in a notation ({} parser expected {}{fixed_note})",
                e.notation, e.expected
            ),
            found: e.found,
        });
    }
    Ok(())
}

fn collect_term<'t>(t: &'t Term, out: &mut Vec<&'t Term>) {
    match t {
        Term::Lit { .. } => out.push(t),
        Term::Var { .. } => {}
        Term::Op { args, .. } => {
            for a in args {
                match a {
                    Arg::Term(t) => collect_term(t, out),
                    Arg::Int(e) => collect_int(e, out),
                    Arg::Shape(es) => es.iter().for_each(|e| collect_int(e, out)),
                    Arg::Region(rs) => rs.iter().for_each(|(b, e)| {
                        collect_int(b, out);
                        collect_int(e, out);
                    }),
                }
            }
        }
    }
    if let Term::Lit { pieces, .. } = t {
        for p in pieces {
            if let Piece::Int(e) = p {
                collect_int(e, out);
            }
        }
    }
}

fn collect_int<'t>(e: &'t IntExpr, out: &mut Vec<&'t Term>) {
    match e {
        IntExpr::Num(_) | IntExpr::Param(_) => {}
        IntExpr::Neg(x) => collect_int(x, out),
        IntExpr::Bin(_, x, y) => {
            collect_int(x, out);
            collect_int(y, out);
        }
        IntExpr::Call(_, a) => match a.as_ref() {
            CallArg::Term(t) => collect_term(t, out),
            CallArg::Int(x) => collect_int(x, out),
        },
    }
}

fn collect_cond<'t>(c: &'t Cond, out: &mut Vec<&'t Term>) {
    match c {
        Cond::Cmp(es, _) => es.iter().for_each(|e| collect_int(e, out)),
        Cond::And(x, y) | Cond::Or(x, y) => {
            collect_cond(x, out);
            collect_cond(y, out);
        }
        Cond::Not(x) => collect_cond(x, out),
        Cond::Defined(t) => collect_term(t, out),
    }
}
