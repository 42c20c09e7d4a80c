//! Tile programs: tensors with a scope, an element type and a shape, and the operations over
//! them; the text form users write (one operation per line) and a Rust builder.
//!
//! ```text
//! program gemm_f16_128x128x32
//! threads 128
//! a_g = global_view(f16, [128, 32], (128,32):(4096,1))   # given: the CTA's view of global A
//! a_s = shared_tensor(f16, [128, 32])                      # layout unknown: synthesized
//! a   = register_tensor(f16, [128, 32])                    # register layouts are always unknown
//! copy(a_g, a_s)
//! copy(a_s, a)
//! mma(c, a, b)                                             # c += a b^T: c (M,N), a (M,K), b (N,K)
//! h = cast(c, f16)                                         # a new register tensor
//! y = elementwise(mul, x, r)                               # r may be x with one dimension dropped
//! r = reduce(x, 1, sum)                                    # reduce dimension 1
//! z = rearrange(x)                                         # explicit conversion (through smem)
//! ```
//! Memory layouts are CuTe layouts over the tensor's logical shape (`(128,32):(4096,1)`: row
//! stride 4096 elements) or swizzled (`Sw<3,3,3> o (128,64):(64,1)`). A global view may name
//! bounds, `global_view(f16, [128, 128], (128,128):(64,1), [128, 64])`: only the cells below
//! them are accessed (a tile at the problem's edge; the kernel predicates the rest off), so a
//! store must be injective on those cells only. `#` starts a comment.

use std::collections::BTreeMap;
use std::fmt;

use layout::{CuteLayout, Layout};

/// Most tensors, operations, dimensions and cells a program may have (bounds all work).
pub const MAX_TENSORS: usize = 256;
/// Most cells of one tensor.
pub const MAX_CELLS: i64 = 1 << 20;

/// Why a program is malformed or cannot be synthesized.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SynthError {
    /// The program text or builder call is malformed.
    #[error("line {line}: {op}: {why}")]
    Program {
        /// 1-based line (0: builder).
        line: usize,
        /// The operation.
        op: String,
        /// What is wrong.
        why: String,
    },
    /// No plan satisfies a constraint: which constraint, which tensors, why.
    #[error("infeasible: {constraint} ({tensors}) at line {line}: {why}")]
    Infeasible {
        /// The constraint that fails.
        constraint: String,
        /// The tensors it relates.
        tensors: String,
        /// The operation's line.
        line: usize,
        /// Why.
        why: String,
    },
    /// The search found no plan, but the space it searched is not every plan, so this is no
    /// proof that none exists: which constraint stopped it, which tensors, and what was not
    /// searched. An [`SynthError::Infeasible`] answer, by contrast, is a proof.
    #[error("unknown: {constraint} ({tensors}) at line {line}: no plan found in the searched space: {why}")]
    NotFound {
        /// The constraint no searched plan met.
        constraint: String,
        /// The tensors it relates.
        tensors: String,
        /// The operation's line.
        line: usize,
        /// What was searched and what was not.
        why: String,
    },
    /// The plan did not certify (a solver bug: never returned as a plan).
    #[error("the plan does not certify: {0}")]
    Certify(String),
    /// A corpus or layout-algebra failure.
    #[error("{0}")]
    Internal(String),
}

impl From<layout::LayoutError> for SynthError {
    fn from(e: layout::LayoutError) -> Self {
        SynthError::Internal(e.to_string())
    }
}

fn bad(line: usize, op: &str, why: impl Into<String>) -> SynthError {
    SynthError::Program {
        line,
        op: op.into(),
        why: why.into(),
    }
}

/// Element types.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Elem {
    /// 32-bit float.
    F32,
    /// IEEE half.
    F16,
    /// bfloat16.
    Bf16,
    /// 8-bit float e4m3.
    F8e4m3,
    /// 8-bit float e5m2.
    F8e5m2,
    /// 8-bit integer.
    I8,
    /// 4-bit signed integer.
    I4,
    /// 4-bit unsigned integer.
    U4,
    /// 32-bit integer (int8 mma accumulators).
    I32,
}

impl Elem {
    /// Parses a dtype name.
    pub fn parse(s: &str) -> Option<Elem> {
        Some(match s {
            "f32" => Elem::F32,
            "f16" => Elem::F16,
            "bf16" => Elem::Bf16,
            "f8e4m3" => Elem::F8e4m3,
            "f8e5m2" => Elem::F8e5m2,
            "i8" => Elem::I8,
            "i4" => Elem::I4,
            "u4" => Elem::U4,
            "i32" => Elem::I32,
            _ => return None,
        })
    }

    /// Width in bits.
    pub fn bits(self) -> i64 {
        match self {
            Elem::F32 | Elem::I32 => 32,
            Elem::F16 | Elem::Bf16 => 16,
            Elem::F8e4m3 | Elem::F8e5m2 | Elem::I8 => 8,
            Elem::I4 | Elem::U4 => 4,
        }
    }

    /// The name `parse` reads.
    pub fn name(self) -> &'static str {
        match self {
            Elem::F32 => "f32",
            Elem::F16 => "f16",
            Elem::Bf16 => "bf16",
            Elem::F8e4m3 => "f8e4m3",
            Elem::F8e5m2 => "f8e5m2",
            Elem::I8 => "i8",
            Elem::I4 => "i4",
            Elem::U4 => "u4",
            Elem::I32 => "i32",
        }
    }
}

impl fmt::Display for Elem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Where a tensor lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Scope {
    /// Global memory (layout given).
    Global,
    /// Shared memory (layout given or synthesized).
    Shared,
    /// Registers (TV layout synthesized).
    Register,
}

impl Scope {
    /// `global`, `shared`, `register`.
    pub fn name(self) -> &'static str {
        match self {
            Scope::Global => "global",
            Scope::Shared => "shared",
            Scope::Register => "register",
        }
    }
}

/// A tensor of the program.
#[derive(Clone, Debug, PartialEq)]
pub struct Tensor {
    /// Its name.
    pub name: String,
    /// Scope.
    pub scope: Scope,
    /// Element type.
    pub dtype: Elem,
    /// Logical shape.
    pub shape: Vec<i64>,
    /// Memory layout (cell -> element), when given.
    pub layout: Option<Layout>,
    /// A global view: the cells the kernel accesses are those below these bounds along every
    /// dimension (it predicates the others off: a tile at the problem's edge); `None`: all.
    pub bounds: Option<Vec<i64>>,
    /// Line that declared it.
    pub line: usize,
}

/// What an operation does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OpKind {
    /// `copy(src, dst)`.
    Copy,
    /// `mma(c, a, b)`: `c += a b^T`.
    Mma,
    /// `y = cast(x, dtype)`.
    Cast,
    /// `y = rearrange(x)`.
    Rearrange,
    /// `y = elementwise(f, x1, ..)`.
    Elementwise(String),
    /// `y = reduce(x, dim, f)`.
    Reduce {
        /// Reduced dimension.
        dim: usize,
        /// Combiner (`sum`, `max`, ..).
        f: String,
    },
}

impl OpKind {
    /// The operation's name.
    pub fn name(&self) -> &'static str {
        match self {
            OpKind::Copy => "copy",
            OpKind::Mma => "mma",
            OpKind::Cast => "cast",
            OpKind::Rearrange => "rearrange",
            OpKind::Elementwise(_) => "elementwise",
            OpKind::Reduce { .. } => "reduce",
        }
    }
}

/// An operation: reads `inputs`, writes `output` (tensor indices).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Op {
    /// What it does.
    pub kind: OpKind,
    /// Tensors read (mma: a, b; the accumulator is the output).
    pub inputs: Vec<usize>,
    /// Tensor written.
    pub output: usize,
    /// Line in the text (0 from the builder).
    pub line: usize,
}

/// A tile program.
#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    /// Its name.
    pub name: String,
    /// Threads of the CTA.
    pub threads: i64,
    /// Tensors, in declaration order.
    pub tensors: Vec<Tensor>,
    /// Operations, in program order.
    pub ops: Vec<Op>,
    /// The text it was parsed from ([`Program::parse`]); `None` when built call by call. The
    /// plan's certificate carries it, so `check` can tie the certificate's ops to it.
    pub source: Option<String>,
}

impl Program {
    /// Index of tensor `name`.
    pub fn tensor(&self, name: &str) -> Option<usize> {
        self.tensors.iter().position(|t| t.name == name)
    }

    /// The shared buffer a rearrange into `y` goes through: `y_smem`, with `_` appended while a
    /// tensor has the name (the certificate's checker names it alike).
    pub fn rearrange_buffer(&self, y: &str) -> String {
        let mut name = format!("{y}_smem");
        while self.tensor(&name).is_some() {
            name.push('_');
        }
        name
    }

    /// Parses the text form.
    ///
    /// ```
    /// use solver::synth::Program;
    /// let p = Program::parse(
    ///     "threads 32\nx_g = global_view(f32, [32, 4], (32,4):(4,1))\n\
    ///      x = register_tensor(f32, [32, 4])\ncopy(x_g, x)\ny = cast(x, f16)\n",
    /// )?;
    /// assert_eq!(p.tensors[2].dtype.name(), "f16");
    /// let e = Program::parse("threads 32\ny = cast(x, f16)\n").unwrap_err();
    /// assert_eq!(e.to_string(), "line 2: cast: unknown tensor \"x\"");
    /// # Ok::<(), solver::synth::SynthError>(())
    /// ```
    pub fn parse(text: &str) -> Result<Program, SynthError> {
        let mut b = ProgramBuilder::new("program", 0);
        if text.len() > 1 << 20 {
            return Err(bad(0, "program", "longer than 1 MiB"));
        }
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            b.line = line;
            let body = raw.split('#').next().unwrap_or("").trim();
            if body.is_empty() {
                continue;
            }
            if let Some(rest) = body.strip_prefix("program ") {
                b.program.name = rest.trim().to_string();
                continue;
            }
            if let Some(rest) = body.strip_prefix("threads ") {
                let t: i64 = rest.trim().parse().map_err(|_| {
                    bad(
                        line,
                        "threads",
                        format!("{:?} is not a number", rest.trim()),
                    )
                })?;
                b.threads(t)?;
                continue;
            }
            let (lhs, call) = match body.split_once('=') {
                Some((l, r)) if !l.contains('(') => (Some(l.trim()), r.trim()),
                _ => (None, body),
            };
            let (op, args) = call
                .split_once('(')
                .filter(|_| call.ends_with(')'))
                .ok_or_else(|| bad(line, call, "expected `op(args)` or `name = op(args)`"))?;
            let op = op.trim();
            let args = split_args(&args[..args.len() - 1]);
            b.statement(lhs, op, &args)?;
        }
        let mut p = b.finish()?;
        p.source = Some(text.to_string());
        Ok(p)
    }
}

/// Splits at top-level commas (outside (), [] and <>).
fn split_args(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut cur = String::new();
    for ch in s.chars() {
        match ch {
            '(' | '[' | '<' => depth += 1,
            ')' | ']' | '>' => depth -= 1,
            ',' if depth == 0 => {
                out.push(cur.trim().to_string());
                cur.clear();
                continue;
            }
            _ => {}
        }
        cur.push(ch);
    }
    if !cur.trim().is_empty() || !out.is_empty() {
        out.push(cur.trim().to_string());
    }
    out
}

/// Builds a [`Program`] call by call; every call checks what it can.
///
/// ```
/// use solver::synth::{Elem, ProgramBuilder};
/// let mut b = ProgramBuilder::new("scale", 128);
/// b.global_view("x_g", Elem::F16, &[64, 64], "(64,64):(64,1)")?;
/// b.register_tensor("x", Elem::F16, &[64, 64])?;
/// b.copy("x_g", "x")?;
/// let p = b.finish()?;
/// assert_eq!(p.ops.len(), 1);
/// # Ok::<(), solver::synth::SynthError>(())
/// ```
#[derive(Clone, Debug)]
pub struct ProgramBuilder {
    program: Program,
    line: usize,
    names: BTreeMap<String, usize>,
}

fn is_ident(s: &str) -> bool {
    let mut c = s.chars();
    c.next()
        .is_some_and(|f| f.is_ascii_alphabetic() || f == '_')
        && c.all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
        && s.len() <= 64
}

fn parse_shape(line: usize, op: &str, s: &str) -> Result<Vec<i64>, SynthError> {
    let inner = s
        .strip_prefix('[')
        .and_then(|r| r.strip_suffix(']'))
        .ok_or_else(|| bad(line, op, format!("shape {s:?}: expected [d0, d1, ..]")))?;
    let dims = inner
        .split(',')
        .map(|d| d.trim().parse::<i64>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| bad(line, op, format!("shape {s:?}: not a list of integers")))?;
    Ok(dims)
}

impl ProgramBuilder {
    /// A program of `threads` threads (0: set later with [`ProgramBuilder::threads`]).
    pub fn new(name: &str, threads: i64) -> ProgramBuilder {
        ProgramBuilder {
            program: Program {
                name: name.into(),
                threads,
                tensors: Vec::new(),
                ops: Vec::new(),
                source: None,
            },
            line: 0,
            names: BTreeMap::new(),
        }
    }

    /// Sets the thread count: a multiple of 32 in 32..=1024.
    pub fn threads(&mut self, t: i64) -> Result<&mut Self, SynthError> {
        if !(32..=1024).contains(&t) || t % 32 != 0 {
            return Err(bad(
                self.line,
                "threads",
                format!("{t} is not a multiple of 32 in 32..=1024"),
            ));
        }
        self.program.threads = t;
        Ok(self)
    }

    fn declare(
        &mut self,
        op: &str,
        name: &str,
        scope: Scope,
        dtype: Elem,
        shape: &[i64],
        layout: Option<Layout>,
    ) -> Result<usize, SynthError> {
        let line = self.line;
        if !is_ident(name) {
            return Err(bad(line, op, format!("{name:?} is not a name")));
        }
        if self.names.contains_key(name) {
            return Err(bad(
                line,
                op,
                format!("tensor {name:?} is already declared"),
            ));
        }
        if self.program.tensors.len() >= MAX_TENSORS {
            return Err(bad(line, op, format!("more than {MAX_TENSORS} tensors")));
        }
        if shape.is_empty() || shape.len() > 2 || shape.iter().any(|&d| d < 1) {
            return Err(bad(
                line,
                op,
                format!("shape {shape:?}: a tile is 1-D or 2-D with extents >= 1"),
            ));
        }
        let cells = shape.iter().try_fold(1i64, |a, &d| a.checked_mul(d));
        if cells.is_none_or(|c| c > MAX_CELLS) {
            return Err(bad(
                line,
                op,
                format!("shape {shape:?}: more than {MAX_CELLS} cells"),
            ));
        }
        if let Some(l) = &layout {
            check_memory_layout(line, op, l, shape)?;
        }
        let i = self.program.tensors.len();
        self.program.tensors.push(Tensor {
            name: name.into(),
            scope,
            dtype,
            shape: shape.to_vec(),
            layout,
            bounds: None,
            line,
        });
        self.names.insert(name.into(), i);
        Ok(i)
    }

    fn lookup(&self, op: &str, name: &str) -> Result<usize, SynthError> {
        self.names
            .get(name)
            .copied()
            .ok_or_else(|| bad(self.line, op, format!("unknown tensor {name:?}")))
    }

    /// `name = global_view(dtype, shape, layout)`.
    pub fn global_view(
        &mut self,
        name: &str,
        dtype: Elem,
        shape: &[i64],
        layout: &str,
    ) -> Result<usize, SynthError> {
        let l = parse_layout(self.line, "global_view", layout)?;
        self.declare("global_view", name, Scope::Global, dtype, shape, Some(l))
    }

    /// `name = global_view(dtype, shape, layout, bounds)`: a view of which only the cells below
    /// `bounds` (one per dimension, each in 1..=the extent) are accessed, the others predicated
    /// off (a tile at the problem's edge). Stores must be injective on those cells only.
    pub fn global_view_within(
        &mut self,
        name: &str,
        dtype: Elem,
        shape: &[i64],
        layout: &str,
        bounds: &[i64],
    ) -> Result<usize, SynthError> {
        let i = self.global_view(name, dtype, shape, layout)?;
        if bounds.len() != shape.len()
            || bounds
                .iter()
                .zip(shape)
                .any(|(&b, &d)| !(1..=d).contains(&b))
        {
            return Err(bad(
                self.line,
                "global_view",
                format!(
                    "bounds {bounds:?}: one per dimension of {shape:?}, each in 1..=its extent"
                ),
            ));
        }
        self.program.tensors[i].bounds = Some(bounds.to_vec());
        Ok(i)
    }

    /// `name = shared_tensor(dtype, shape[, layout])`.
    pub fn shared_tensor(
        &mut self,
        name: &str,
        dtype: Elem,
        shape: &[i64],
        layout: Option<&str>,
    ) -> Result<usize, SynthError> {
        let l = layout
            .map(|t| parse_layout(self.line, "shared_tensor", t))
            .transpose()?;
        self.declare("shared_tensor", name, Scope::Shared, dtype, shape, l)
    }

    /// `name = register_tensor(dtype, shape)`.
    pub fn register_tensor(
        &mut self,
        name: &str,
        dtype: Elem,
        shape: &[i64],
    ) -> Result<usize, SynthError> {
        self.declare("register_tensor", name, Scope::Register, dtype, shape, None)
    }

    fn push(
        &mut self,
        kind: OpKind,
        inputs: Vec<usize>,
        output: usize,
    ) -> Result<&mut Self, SynthError> {
        if self.program.ops.len() >= MAX_TENSORS * 4 {
            return Err(bad(self.line, kind.name(), "too many operations"));
        }
        self.program.ops.push(Op {
            kind,
            inputs,
            output,
            line: self.line,
        });
        Ok(self)
    }

    /// `copy(src, dst)`: same shape and dtype; not global to global.
    pub fn copy(&mut self, src: &str, dst: &str) -> Result<&mut Self, SynthError> {
        let (s, d) = (self.lookup("copy", src)?, self.lookup("copy", dst)?);
        let (ts, td) = (&self.program.tensors[s], &self.program.tensors[d]);
        if ts.shape != td.shape || ts.dtype != td.dtype {
            return Err(bad(
                self.line,
                "copy",
                format!(
                    "{src} is {} {:?}, {dst} is {} {:?}: a copy keeps shape and dtype (use cast)",
                    ts.dtype, ts.shape, td.dtype, td.shape
                ),
            ));
        }
        if td.scope == Scope::Global && ts.scope == Scope::Global {
            return Err(bad(
                self.line,
                "copy",
                "global to global: stage through shared or registers",
            ));
        }
        if td.scope == Scope::Global {
            // A store: two cells at one address would race (cells outside its bounds are
            // never written).
            let l = td.layout.as_ref().expect("a global view has its layout");
            let table = super::smem::table_of(l, &td.shape)?;
            if let Some((a, b, o)) =
                certify::synthesis::collision(&table, &td.shape, td.bounds.as_deref())
            {
                return Err(bad(
                    self.line,
                    "copy",
                    format!(
                        "{dst} stores cells {a:?} and {b:?} both at element {o}: the writes would \
                         race (a stored global view must be injective)"
                    ),
                ));
            }
        }
        self.push(OpKind::Copy, vec![s], d)
    }

    /// `mma(c, a, b)`: `c (M,N) += a (M,K) b (N,K)^T`, all register tensors except that A and B
    /// may be shared (wgmma).
    pub fn mma(&mut self, c: &str, a: &str, b: &str) -> Result<&mut Self, SynthError> {
        let (ci, ai, bi) = (
            self.lookup("mma", c)?,
            self.lookup("mma", a)?,
            self.lookup("mma", b)?,
        );
        let t = &self.program.tensors;
        let (tc, ta, tb) = (&t[ci], &t[ai], &t[bi]);
        let ok = tc.shape.len() == 2
            && ta.shape.len() == 2
            && tb.shape.len() == 2
            && ta.shape[0] == tc.shape[0]
            && tb.shape[0] == tc.shape[1]
            && ta.shape[1] == tb.shape[1];
        if !ok {
            return Err(bad(
                self.line,
                "mma",
                format!(
                    "shapes C {:?}, A {:?}, B {:?} are not (M,N), (M,K), (N,K)",
                    tc.shape, ta.shape, tb.shape
                ),
            ));
        }
        if tc.scope != Scope::Register || ta.scope == Scope::Global || tb.scope == Scope::Global {
            return Err(bad(
                self.line,
                "mma",
                "the accumulator is a register tensor; A and B are register or shared",
            ));
        }
        if ta.dtype != tb.dtype {
            return Err(bad(
                self.line,
                "mma",
                format!("A is {} and B is {}", ta.dtype, tb.dtype),
            ));
        }
        self.push(OpKind::Mma, vec![ai, bi], ci)
    }

    fn derived(
        &mut self,
        op: &str,
        out: &str,
        dtype: Elem,
        shape: Vec<i64>,
    ) -> Result<usize, SynthError> {
        self.declare(op, out, Scope::Register, dtype, &shape, None)
    }

    fn register_input(&self, op: &str, name: &str) -> Result<usize, SynthError> {
        let i = self.lookup(op, name)?;
        if self.program.tensors[i].scope != Scope::Register {
            return Err(bad(
                self.line,
                op,
                format!(
                    "{name} is a {} tensor; {op} reads registers",
                    self.program.tensors[i].scope.name()
                ),
            ));
        }
        Ok(i)
    }

    /// `out = cast(x, dtype)`.
    pub fn cast(&mut self, out: &str, x: &str, dtype: Elem) -> Result<&mut Self, SynthError> {
        let i = self.register_input("cast", x)?;
        let shape = self.program.tensors[i].shape.clone();
        let o = self.derived("cast", out, dtype, shape)?;
        self.push(OpKind::Cast, vec![i], o)
    }

    /// `out = rearrange(x)`.
    pub fn rearrange(&mut self, out: &str, x: &str) -> Result<&mut Self, SynthError> {
        let i = self.register_input("rearrange", x)?;
        let t = self.program.tensors[i].clone();
        let o = self.derived("rearrange", out, t.dtype, t.shape)?;
        self.push(OpKind::Rearrange, vec![i], o)
    }

    /// `out = elementwise(f, xs..)`: the output has the first operand's shape and dtype; every
    /// other operand has that shape or that shape with one dimension dropped (broadcast).
    pub fn elementwise(
        &mut self,
        out: &str,
        f: &str,
        xs: &[&str],
    ) -> Result<&mut Self, SynthError> {
        if xs.is_empty() || !is_ident(f) {
            return Err(bad(
                self.line,
                "elementwise",
                "expected elementwise(f, x1, ..)",
            ));
        }
        let ins = xs
            .iter()
            .map(|x| self.register_input("elementwise", x))
            .collect::<Result<Vec<_>, _>>()?;
        let first = self.program.tensors[ins[0]].clone();
        for &i in &ins[1..] {
            let s = &self.program.tensors[i].shape;
            let fits = *s == first.shape
                || (s.len() + 1 == first.shape.len()
                    && (0..first.shape.len()).any(|d| {
                        let mut r = first.shape.clone();
                        r.remove(d);
                        r == *s
                    }));
            if !fits {
                return Err(bad(
                    self.line,
                    "elementwise",
                    format!(
                        "{} {:?} is neither {:?} nor it with one dimension dropped",
                        self.program.tensors[i].name, s, first.shape
                    ),
                ));
            }
        }
        let o = self.derived("elementwise", out, first.dtype, first.shape)?;
        self.push(OpKind::Elementwise(f.into()), ins, o)
    }

    /// `out = reduce(x, dim, f)`.
    pub fn reduce(
        &mut self,
        out: &str,
        x: &str,
        dim: usize,
        f: &str,
    ) -> Result<&mut Self, SynthError> {
        let i = self.register_input("reduce", x)?;
        let t = self.program.tensors[i].clone();
        if t.shape.len() != 2 || dim > 1 {
            return Err(bad(
                self.line,
                "reduce",
                format!(
                    "{x} {:?} has no dimension {dim} to reduce (2-D tensors)",
                    t.shape
                ),
            ));
        }
        let mut shape = t.shape.clone();
        shape.remove(dim);
        let o = self.derived("reduce", out, t.dtype, shape)?;
        self.push(OpKind::Reduce { dim, f: f.into() }, vec![i], o)
    }

    /// One statement of the text form.
    fn statement(
        &mut self,
        lhs: Option<&str>,
        op: &str,
        args: &[String],
    ) -> Result<(), SynthError> {
        let line = self.line;
        let need = |n: std::ops::RangeInclusive<usize>| {
            if n.contains(&args.len()) {
                Ok(())
            } else {
                Err(bad(
                    line,
                    op,
                    format!(
                        "expected {} arguments, got {}",
                        if n.start() == n.end() {
                            n.start().to_string()
                        } else {
                            format!("{} to {}", n.start(), n.end())
                        },
                        args.len()
                    ),
                ))
            }
        };
        let name = || lhs.ok_or_else(|| bad(line, op, "expected `name = ...`"));
        let dtype = |s: &str| {
            Elem::parse(s).ok_or_else(|| {
                bad(
                    line,
                    op,
                    format!(
                        "dtype {s:?}: expected f32, f16, bf16, f8e4m3, f8e5m2, i8, i4, u4 or i32"
                    ),
                )
            })
        };
        let no_lhs = || {
            if lhs.is_some() {
                Err(bad(line, op, "writes an existing tensor: no `name =`"))
            } else {
                Ok(())
            }
        };
        match op {
            "global_view" => {
                need(3..=4)?;
                let shape = parse_shape(line, op, &args[1])?;
                match args.get(3) {
                    None => self.global_view(name()?, dtype(&args[0])?, &shape, &args[2])?,
                    Some(b) => {
                        let bounds = parse_shape(line, op, b)?;
                        self.global_view_within(name()?, dtype(&args[0])?, &shape, &args[2], &bounds)?
                    }
                };
            }
            "shared_tensor" => {
                need(2..=3)?;
                let shape = parse_shape(line, op, &args[1])?;
                self.shared_tensor(name()?, dtype(&args[0])?, &shape, args.get(2).map(String::as_str))?;
            }
            "register_tensor" => {
                need(2..=2)?;
                let shape = parse_shape(line, op, &args[1])?;
                self.register_tensor(name()?, dtype(&args[0])?, &shape)?;
            }
            "copy" => {
                need(2..=2)?;
                no_lhs()?;
                self.copy(&args[0], &args[1])?;
            }
            "mma" => {
                need(3..=3)?;
                no_lhs()?;
                self.mma(&args[0], &args[1], &args[2])?;
            }
            "cast" => {
                need(2..=2)?;
                self.cast(name()?, &args[0], dtype(&args[1])?)?;
            }
            "rearrange" => {
                need(1..=1)?;
                self.rearrange(name()?, &args[0])?;
            }
            "elementwise" => {
                if args.len() < 2 {
                    return Err(bad(line, op, "expected elementwise(f, x1, ..)"));
                }
                let xs: Vec<&str> = args[1..].iter().map(String::as_str).collect();
                self.elementwise(name()?, &args[0], &xs)?;
            }
            "reduce" => {
                need(3..=3)?;
                let dim = args[1].parse().map_err(|_| bad(line, op, format!("dimension {:?} is not a number", args[1])))?;
                self.reduce(name()?, &args[0], dim, &args[2])?;
            }
            other => return Err(bad(line, other, "unknown operation (expected global_view, register_tensor, shared_tensor, copy, mma, cast, rearrange, elementwise or reduce)")),
        }
        Ok(())
    }

    /// The program; checks the thread count and that every register tensor is written before
    /// it is read.
    pub fn finish(self) -> Result<Program, SynthError> {
        let p = self.program;
        if p.threads == 0 {
            return Err(bad(
                0,
                "threads",
                "the program names no thread count (`threads 128`)",
            ));
        }
        if p.ops.is_empty() {
            return Err(bad(
                0,
                "program",
                "the program has no operations: nothing to synthesize",
            ));
        }
        let mut written = vec![false; p.tensors.len()];
        for (i, t) in p.tensors.iter().enumerate() {
            written[i] = t.scope == Scope::Global;
        }
        for op in &p.ops {
            for &i in &op.inputs {
                if !written[i] && p.tensors[i].scope != Scope::Global {
                    return Err(bad(
                        op.line,
                        op.kind.name(),
                        format!("{} is read before anything writes it", p.tensors[i].name),
                    ));
                }
            }
            written[op.output] = true;
        }
        Ok(p)
    }
}

fn parse_layout(line: usize, op: &str, text: &str) -> Result<Layout, SynthError> {
    let l =
        Layout::parse(text, None).map_err(|e| bad(line, op, format!("layout {text:?}: {e}")))?;
    match l {
        Layout::Cute(_) | Layout::Swizzled(_) => Ok(l),
        other => Err(bad(
            line,
            op,
            format!(
                "layout {}: a memory layout is CuTe `shape:stride` or `Sw<..> o shape:stride`",
                other.print()
            ),
        )),
    }
}

fn check_memory_layout(line: usize, op: &str, l: &Layout, shape: &[i64]) -> Result<(), SynthError> {
    let inner: &CuteLayout = match l {
        Layout::Cute(c) => c,
        Layout::Swizzled(s) => s.layout(),
        _ => return Err(bad(line, op, "not a memory layout")),
    };
    inner.check_shape(shape).map_err(|e| {
        bad(
            line,
            op,
            format!("layout {} over shape {shape:?}: {e}", l.print()),
        )
    })?;
    if inner.flat_modes().iter().any(|&(_, d)| d < 0) {
        return Err(bad(
            line,
            op,
            format!("layout {}: negative strides are not supported", l.print()),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_reads_every_operation() {
        let p = Program::parse(
            "program t\nthreads 64\nx_g = global_view(f16, [16, 64], (16,64):(64,1))\n\
             x = register_tensor(f16, [16, 64])\ncopy(x_g, x)\ny = cast(x, f32)\n\
             r = reduce(y, 1, sum)\nz = elementwise(mul, y, r)\nw = rearrange(z)\n",
        )
        .unwrap();
        assert_eq!(p.name, "t");
        assert_eq!(p.tensors.len(), 6);
        let kinds: Vec<_> = p.ops.iter().map(|o| o.kind.name()).collect();
        assert_eq!(
            kinds,
            ["copy", "cast", "reduce", "elementwise", "rearrange"]
        );
        assert_eq!(p.tensors[p.tensor("r").unwrap()].shape, [16]);
    }

    #[test]
    fn errors_name_the_line_and_operation() {
        let cases = [
            ("threads 32\nx = register_tensor(f17, [4])", "line 2: register_tensor: dtype \"f17\""),
            ("threads 32\nx = register_tensor(f16, [4])\ncopy(x, y)", "line 3: copy: unknown tensor \"y\""),
            ("threads 33", "line 1: threads: 33 is not a multiple of 32"),
            ("threads 32\nfoo(x)", "line 2: foo: unknown operation"),
            ("threads 32\nx = global_view(f16, [4, 4], (4,4):(5,1))\ny = register_tensor(f16, [4, 8])\ncopy(x, y)", "line 4: copy: x is f16 [4, 4]"),
            ("threads 32\nx = global_view(f16, [4, 4], (4,5):(5,1))", "line 2: global_view: layout"),
            ("threads 32\nx = register_tensor(f16, [4])\ny = cast(x, f32)\n", "line 3: cast: x is read before"),
            ("threads 32\nx = register_tensor(f16, [4])\nz = register_tensor(f16, [4])\ncopy(z, x)", "line 4: copy: z is read before"),
            ("threads 128\n", "line 0: program: the program has no operations"),
            ("threads 32\nx = global_view(f16, [4, 4], (4,4):(4,1), [5, 4])", "line 2: global_view: bounds [5, 4]"),
            ("threads 32\nx = global_view(f16, [4, 4], (4,4):(4,1), [4])", "line 2: global_view: bounds [4]"),
            // Within its bounds [4, 2] the view (4,4):(2,1) is injective: the store is no race.
            ("threads 32\nx = register_tensor(f16, [4, 4])\ny = global_view(f16, [4, 4], (4,4):(2,1), [4, 2])\nz = global_view(f16, [4, 4], (4,4):(4,1))\ncopy(z, x)\ncopy(x, y)", ""),
            ("threads 32\nx = register_tensor(f16, [4, 4])\ny = global_view(f16, [4, 4], (4,4):(2,1), [4, 3])\nz = global_view(f16, [4, 4], (4,4):(4,1))\ncopy(z, x)\ncopy(x, y)", "line 6: copy: y stores cells [1, 0] and [0, 2]"),
            ("threads 32\nx = register_tensor(f16, [4, 4])\ny = global_view(f16, [4, 4], (4,4):(1,0))\ncopy(x, y)", "line 4: copy: y stores cells [0, 0] and [0, 1] both at element 0"),
        ];
        for (text, want) in cases {
            match Program::parse(text) {
                Ok(_) => assert!(want.is_empty(), "{text:?} parsed"),
                Err(e) => assert!(
                    !want.is_empty() && e.to_string().starts_with(want),
                    "{text:?}: {e}"
                ),
            }
        }
    }

    #[test]
    fn split_args_respects_nesting() {
        assert_eq!(
            split_args("f16, [4, 4], Sw<3,3,3> o (4,4):(4,1)"),
            ["f16", "[4, 4]", "Sw<3,3,3> o (4,4):(4,1)"]
        );
    }
}
