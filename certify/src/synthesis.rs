//! Synthesis-plan certificates: the claims a synthesized tile-program plan relies on, each
//! re-decided here by evaluating the layouts with `layout`'s semantics (no solver code).
//!
//! A plan assigns every register tensor a thread-value (TV) layout `f: (t, v) -> cell` of its
//! tile, every shared tensor an offset layout `s: cell -> element`, and every operation an
//! instruction. The claims are the paper's figure-12 constraints made concrete:
//!
//! - [`SynthClaim::Distribution`]: `f` reaches every cell of the tensor (and, `exclusive`, each
//!   exactly once: accumulators must not be counted twice).
//! - [`SynthClaim::SameDistribution`]: elementwise and cast operands hold the same cells in the
//!   same registers: `f_a(t, v) == f_b(t, v)` for every `(t, v)`.
//! - [`SynthClaim::Projection`]: reduce, `mu o f = g`: `g(t, v) == drop_dim(f(t, v))`.
//! - [`SynthClaim::Mma`]: the M, N, K projections of `f_C o p_C^-1`, `f_A o p_A^-1`,
//!   `f_B o p_B^-1` agree. Decided by cutting each operand's values into atom instances: every
//!   instance of a warp (or warpgroup) must be the atom's layout `p` translated to an aligned
//!   origin; the C origins of all groups must partition `M x N` into atom blocks; and for every C
//!   origin `(m0, n0)` of a group and every `k0`, the group must hold the A instance at
//!   `(m0, k0)` and the B instance at `(n0, k0)`. Then the group's atoms compute
//!   `C += A B` over the whole tile, each product once.
//! - [`SynthClaim::Vector`]: a vector access of `width` elements per thread: each group of
//!   `width` consecutive values of a thread lies at consecutive memory elements, the first
//!   aligned to `width` (the tensor's base aligned to 16 bytes is the stated assumption).
//! - [`SynthClaim::Transfer`]: a memory-to-memory copy (cp.async) split by a TV layout: it covers
//!   the tile and each vector is contiguous and aligned on both sides.
//! - [`SynthClaim::Ldmatrix`]: `ldmatrix` / `stmatrix` (`.trans`): the 8 elements lane `l` of a
//!   warp names for row `r` of matrix `j` are contiguous and 16-byte aligned, and they are the
//!   cells the fragment layout says the receiving lanes hold (PTX ISA 9.7.9.23: in matrix `j`,
//!   lane `4r + c/2` holds row `r`, column `c` in register `2j + c%2`; transposed, lane
//!   `4c + r/2` in register `2j + r%2`).
//! - [`SynthClaim::Canonical`]: a shared tensor is the column-major tiling of a swizzle atom
//!   (TMA boxes and wgmma descriptors read exactly these layouts).
//! - [`SynthClaim::Injective`]: a shared layout, or a global view the program stores to, holds
//!   distinct cells at distinct elements (no two writes race).
//! - [`SynthClaim::Capacity`]: the shared memory the plan's kernel allocates fits its budget,
//!   the byte count re-derived from the tensors (and the kernel's [`SmemAllocation`]: pipeline
//!   stages, reuse, alignment), the budget the target's limit or the allocation's (`capacity`).
//!
//! Every operation of the program must be backed by its claims ([`covered`]), and bound to them:
//! its instruction is a corpus instruction of the target whose kind, width, matrix count, swizzle
//! atom or mma atom is the claim's, over operands of the instruction's types, and no operand
//! claim is left over (`bind`). [`check`] re-decides all of them. A tampered layout fails its
//! claim; a tampered instruction, type or op list fails its binding.

use std::collections::{BTreeMap, BTreeSet};

mod bind;
mod capacity;
pub mod kernel;

pub use capacity::{
    budget, smem_bytes, smem_limit, SmemAllocation, SmemBuffer, MAX_COPIES, MAX_SMEM_BUDGET,
    SM80_SMEM_LIMIT, SM90_SMEM_LIMIT,
};

use layout::cute::TvLayout;
use layout::{Layout, SwizzledLayout};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Format version (2: the certificate carries its program's text).
pub const VERSION: u32 = 2;

/// Most cells (or thread-value pairs) a claim evaluates: bounds the checker's work on any input.
pub const MAX_POINTS: i64 = 1 << 22;

/// A tensor of the plan.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SynthTensor {
    /// Name in the program.
    pub name: String,
    /// `global`, `shared` or `register`.
    pub scope: String,
    /// Element type name.
    pub dtype: String,
    /// Element width in bits.
    pub bits: i64,
    /// Logical shape.
    pub shape: Vec<i64>,
    /// Register: a TV layout `... -> (shape)`; memory: `cell -> element` (CuTe or swizzled).
    pub layout: String,
    /// A global view: only the cells below these bounds (one per dimension) are accessed, the
    /// others predicated off; absent: every cell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bounds: Option<Vec<i64>>,
}

/// One operation of the plan and the instruction chosen for it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SynthOp {
    /// Line in the program.
    pub line: usize,
    /// `copy`, `mma`, `cast`, `rearrange`, `elementwise`, `reduce`.
    pub op: String,
    /// Tensors read.
    pub inputs: Vec<String>,
    /// Tensor written.
    pub output: String,
    /// The instruction chosen.
    pub instruction: String,
}

/// A claim a plan relies on (see the module doc).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum SynthClaim {
    /// `f` covers the tensor (exclusive: each cell exactly once).
    Distribution {
        /// Register tensor.
        tensor: String,
        /// Each cell held by exactly one (thread, value).
        exclusive: bool,
    },
    /// `f_a == f_b` as maps `(t, v) -> cell`.
    SameDistribution {
        /// First tensor.
        a: String,
        /// Second tensor.
        b: String,
    },
    /// `dst(t, v) == src(t, v)` with dimension `dim` dropped.
    Projection {
        /// Reduced tensor.
        src: String,
        /// Result.
        dst: String,
        /// Reduced dimension.
        dim: usize,
    },
    /// The mma operands agree with the atom (figure 12).
    Mma {
        /// Accumulator (M, N).
        c: String,
        /// A (M, K).
        a: String,
        /// B (N, K).
        b: String,
        /// Atom name.
        atom: String,
        /// Atom (m, n, k).
        shape: [i64; 3],
        /// Threads executing one atom (32 or 128).
        threads: i64,
        /// Atom A layout, when A is read from registers.
        pa: Option<String>,
        /// Atom B layout, when B is read from registers.
        pb: Option<String>,
        /// Atom C layout.
        pc: String,
    },
    /// Vector access of `width` elements between a register tensor and memory.
    Vector {
        /// Register tensor.
        reg: String,
        /// Memory tensor.
        memory: String,
        /// Elements per access.
        width: i64,
    },
    /// Memory-to-memory copy through the TV layout `tv`, `width` elements per access.
    Transfer {
        /// Source memory tensor.
        src: String,
        /// Destination memory tensor.
        dst: String,
        /// TV layout of the copy.
        tv: String,
        /// Elements per access.
        width: i64,
    },
    /// ldmatrix / stmatrix between `reg` and the shared tensor `memory`.
    Ldmatrix {
        /// Register tensor (fragment).
        reg: String,
        /// Shared tensor.
        memory: String,
        /// Matrices per instruction (1, 2, 4).
        count: i64,
        /// `.trans`.
        trans: bool,
    },
    /// `tensor`'s layout is the column-major tiling of `atom` (in elements) over its shape.
    Canonical {
        /// Shared tensor.
        tensor: String,
        /// Atom name.
        atom_name: String,
        /// Atom layout in elements (`Sw<..> o (r,c):(..)`).
        atom: String,
    },
    /// Distinct cells at distinct elements.
    Injective {
        /// A shared tensor, or a global view the program stores to.
        tensor: String,
    },
    /// The plan's shared memory (every shared tensor once, or the certificate's
    /// [`SmemAllocation`]) takes `bytes`, at most `limit`, the budget.
    Capacity {
        /// Bytes the plan claims.
        bytes: i64,
        /// The budget: the target's limit, or the allocation's budget.
        limit: i64,
    },
}

/// A synthesis-plan certificate.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SynthesisCertificate {
    /// Format version.
    pub version: u32,
    /// Always `synthesis`.
    pub kind: String,
    /// Program name.
    pub program: String,
    /// The program's text (tile-program form), which the ops and tensors must be exactly (the
    /// solver's `check_certificate` parses it and compares; this crate has no program parser).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// `sm80` or `sm90`.
    pub target: String,
    /// Threads of the CTA.
    pub threads: i64,
    /// Every tensor with its layout.
    pub tensors: Vec<SynthTensor>,
    /// Every operation with its instruction.
    pub ops: Vec<SynthOp>,
    /// How the plan's kernel allocates its dynamic shared memory, and the budget it was built
    /// for (a kernel's certificate; `synth` writes none: every shared tensor once, the target's
    /// limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub smem: Option<SmemAllocation>,
    /// The problem and the kernel text a kernel's certificate was emitted for
    /// ([`kernel::KernelBinding`]; `synth` writes none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<kernel::KernelBinding>,
    /// The claims.
    pub claims: Vec<SynthClaim>,
    /// `proved`.
    pub verdict: String,
    /// SHA-256 over the other fields.
    pub digest: String,
}

impl SynthesisCertificate {
    /// SHA-256 over every field but the digest.
    pub fn compute_digest(&self) -> String {
        let mut c = self.clone();
        c.digest = String::new();
        let text = serde_json::to_string(&c).expect("serializable");
        format!("{:x}", Sha256::digest(text.as_bytes()))
    }

    /// Sets the digest.
    pub fn seal(mut self) -> Self {
        self.digest = self.compute_digest();
        self
    }

    /// Pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("serializable")
    }
}

/// A parsed tensor, with its map evaluated once by `layout`'s semantics into a table.
#[derive(Clone, Debug)]
pub enum Parsed {
    /// Register tensor: the TV layout and the column-major cell of every `(t, v)`, t-major.
    Reg(TvLayout, Vec<i64>),
    /// Memory tensor: the layout and the element offset of every column-major cell.
    Mem(Layout, Vec<i64>),
}

/// The column-major cell index of every `(t, v)` of `tv`, t-major, by `TvLayout::eval`.
pub fn tv_table(tv: &TvLayout) -> Result<Vec<i64>, String> {
    Ok(tv.eval_all())
}

/// The element offset of every column-major cell of `shape` under memory layout `l`.
pub fn mem_table(l: &Layout, shape: &[i64]) -> Result<Vec<i64>, String> {
    let inner = match l {
        Layout::Cute(c) => c,
        Layout::Swizzled(x) => x.layout(),
        other => return Err(format!("{} is not a memory layout", other.print())),
    };
    // The shape first: the table has one entry per cell of the layout, which must be the
    // tensor's (bounded by `MAX_POINTS`), not a size the layout text alone names (a layout of
    // 2^43 cells over a 128 x 64 tile was tabulated before it was refused).
    inner.check_shape(shape).map_err(|e| e.to_string())?;
    if inner.size() > MAX_POINTS {
        return Err(format!(
            "layout {}: more than {MAX_POINTS} cells",
            l.print()
        ));
    }
    // `eval(shape, c)` is `eval_index` of c's column-major index: the same table.
    Ok(match l {
        Layout::Swizzled(x) => x.eval_all().map_err(|e| e.to_string())?,
        _ => inner.eval_all(),
    })
}

/// The coordinate of column-major cell `i` of `shape`.
fn coord(shape: &[i64], i: i64) -> Vec<i64> {
    let mut out = Vec::with_capacity(shape.len());
    let mut i = i;
    for &d in shape {
        out.push(i % d);
        i /= d;
    }
    out
}

/// The tensors of a certificate, parsed.
#[derive(Clone, Debug, Default)]
pub struct Tensors {
    map: BTreeMap<String, (SynthTensor, Parsed)>,
}

impl Tensors {
    /// Parses every tensor's layout and checks it against its shape.
    pub fn new(ts: &[SynthTensor]) -> Result<Tensors, String> {
        let mut map = BTreeMap::new();
        for t in ts {
            let cells = size(&t.shape).ok_or_else(|| format!("tensor {}: bad shape", t.name))?;
            if cells > MAX_POINTS {
                return Err(format!("tensor {}: more than {MAX_POINTS} cells", t.name));
            }
            if dtype_bits(&t.dtype) != Some(t.bits) {
                return Err(format!(
                    "tensor {}: {} bits per element, a {} has {}",
                    t.name,
                    t.bits,
                    t.dtype,
                    dtype_bits(&t.dtype).map_or("no known width".into(), |b| format!("{b}"))
                ));
            }
            if let Some(b) = &t.bounds {
                let ok = t.scope == "global"
                    && b.len() == t.shape.len()
                    && b.iter().zip(&t.shape).all(|(&b, &d)| (1..=d).contains(&b));
                if !ok {
                    return Err(format!(
                        "tensor {}: bounds {b:?}: only a global view has them, one per dimension \
                         of {:?}, each in 1..=its extent",
                        t.name, t.shape
                    ));
                }
            }
            let l = Layout::parse(&t.layout, None)
                .map_err(|e| format!("tensor {} layout {:?}: {e}", t.name, t.layout))?;
            let parsed = match (t.scope.as_str(), l) {
                ("register", Layout::Tv(tv)) => {
                    if tv.tile() != t.shape.as_slice() {
                        return Err(format!("tensor {}: TV tile is not its shape", t.name));
                    }
                    if tv.layout().size() > MAX_POINTS {
                        return Err(format!("tensor {}: too many thread-values", t.name));
                    }
                    let table = tv_table(&tv)?;
                    Parsed::Reg(tv, table)
                }
                ("global" | "shared", l @ (Layout::Cute(_) | Layout::Swizzled(_))) => {
                    if let Layout::Swizzled(s) = &l {
                        cute_swizzle(s.swizzle()).map_err(|e| format!("tensor {}: {e}", t.name))?;
                    }
                    let table = mem_table(&l, &t.shape)?;
                    Parsed::Mem(l, table)
                }
                (s, l) => {
                    return Err(format!(
                        "tensor {}: a {s} tensor cannot have the layout {}",
                        t.name,
                        l.print()
                    ))
                }
            };
            if map.insert(t.name.clone(), (t.clone(), parsed)).is_some() {
                return Err(format!("tensor {} declared twice", t.name));
            }
        }
        Ok(Tensors { map })
    }

    fn get(&self, name: &str) -> Result<&(SynthTensor, Parsed), String> {
        self.map
            .get(name)
            .ok_or_else(|| format!("unknown tensor {name:?}"))
    }

    /// A register tensor's TV layout and its table.
    pub fn reg(&self, name: &str) -> Result<(&SynthTensor, Reg<'_>), String> {
        match self.get(name)? {
            (t, Parsed::Reg(tv, table)) => Ok((
                t,
                Reg {
                    tv,
                    table,
                    nv: tv.values(),
                    shape: &t.shape,
                },
            )),
            (t, _) => Err(format!(
                "{} is a {} tensor, not a register tensor",
                name, t.scope
            )),
        }
    }

    /// A memory tensor's offset table.
    pub fn mem(&self, name: &str) -> Result<(&SynthTensor, &[i64]), String> {
        match self.get(name)? {
            (t, Parsed::Mem(_, table)) => Ok((t, table.as_slice())),
            (t, _) => Err(format!(
                "{} is a {} tensor, not a memory tensor",
                name, t.scope
            )),
        }
    }
}

/// A register tensor's layout with its table.
#[derive(Clone, Copy, Debug)]
pub struct Reg<'a> {
    pub(crate) tv: &'a TvLayout,
    pub(crate) table: &'a [i64],
    pub(crate) nv: i64,
    shape: &'a [i64],
}

impl Reg<'_> {
    fn threads(&self) -> i64 {
        self.tv.threads()
    }
    fn values(&self) -> i64 {
        self.nv
    }
    /// Column-major cell of `(t, v)`.
    fn cell(&self, t: i64, v: i64) -> i64 {
        self.table[(t * self.nv + v) as usize]
    }
    fn at(&self, t: i64, v: i64) -> Vec<i64> {
        coord(self.shape, self.cell(t, v))
    }
}

/// The width of an element type a tile program names.
pub fn dtype_bits(dtype: &str) -> Option<i64> {
    Some(match dtype {
        "f32" | "i32" => 32,
        "f16" | "bf16" => 16,
        "f8e4m3" | "f8e5m2" | "i8" => 8,
        "i4" | "u4" => 4,
        _ => return None,
    })
}

fn size(shape: &[i64]) -> Option<i64> {
    shape
        .iter()
        .try_fold(1i64, |a, &e| if e >= 1 { a.checked_mul(e) } else { None })
}

/// The memory element a cell is stored at.
pub fn offset(l: &Layout, shape: &[i64], cell: &[i64]) -> Result<i64, String> {
    match l {
        Layout::Cute(c) => c.eval(shape, cell),
        Layout::Swizzled(s) => s.eval(shape, cell),
        other => return Err(format!("{} is not a memory layout", other.print())),
    }
    .map_err(|e| e.to_string())
}

/// Decides one claim of `cert`; `Err` says why it does not hold.
pub fn decide(c: &SynthClaim, cert: &SynthesisCertificate, ts: &Tensors) -> Result<(), String> {
    match c {
        SynthClaim::Distribution { tensor, exclusive } => distribution(ts, tensor, *exclusive),
        SynthClaim::SameDistribution { a, b } => same(ts, a, b),
        SynthClaim::Projection { src, dst, dim } => projection(ts, src, dst, *dim),
        SynthClaim::Mma { .. } => mma(ts, c),
        SynthClaim::Vector { reg, memory, width } => vector(ts, reg, memory, *width),
        SynthClaim::Transfer {
            src,
            dst,
            tv,
            width,
        } => transfer(ts, src, dst, tv, *width, cert.threads),
        SynthClaim::Ldmatrix {
            reg,
            memory,
            count,
            trans,
        } => ldmatrix(ts, reg, memory, *count, *trans),
        SynthClaim::Canonical { tensor, atom, .. } => canonical(ts, tensor, atom),
        SynthClaim::Injective { tensor } => injective(ts, tensor),
        SynthClaim::Capacity { bytes, limit } => capacity::capacity(cert, ts, *bytes, *limit),
    }
}

fn distribution(ts: &Tensors, name: &str, exclusive: bool) -> Result<(), String> {
    let (t, tv) = ts.reg(name)?;
    let cells = size(&t.shape).unwrap_or(0);
    let mut seen = vec![0u32; cells as usize];
    for th in 0..tv.threads() {
        for v in 0..tv.values() {
            let i = tv.cell(th, v);
            seen[i as usize] = seen[i as usize].saturating_add(1);
        }
    }
    if let Some(i) = seen.iter().position(|&n| n == 0) {
        return Err(format!("{name}: no thread holds cell #{i}"));
    }
    if exclusive {
        if let Some(i) = seen.iter().position(|&n| n > 1) {
            return Err(format!("{name}: cell #{i} is held {} times", seen[i]));
        }
    }
    Ok(())
}

fn same(ts: &Tensors, a: &str, b: &str) -> Result<(), String> {
    let (ta, fa) = ts.reg(a)?;
    let (tb, fb) = ts.reg(b)?;
    if ta.shape != tb.shape || fa.threads() != fb.threads() || fa.values() != fb.values() {
        return Err(format!("{a} and {b} differ in shape, threads or values"));
    }
    for t in 0..fa.threads() {
        for v in 0..fa.values() {
            if fa.cell(t, v) != fb.cell(t, v) {
                let (x, y) = (fa.at(t, v), fb.at(t, v));
                return Err(format!(
                    "thread {t} value {v}: {a} holds {x:?}, {b} holds {y:?}"
                ));
            }
        }
    }
    Ok(())
}

fn projection(ts: &Tensors, src: &str, dst: &str, dim: usize) -> Result<(), String> {
    let (tsrc, f) = ts.reg(src)?;
    let (tdst, g) = ts.reg(dst)?;
    let mut dropped = tsrc.shape.clone();
    if dim >= dropped.len() {
        return Err(format!("{src} has no dimension {dim}"));
    }
    dropped.remove(dim);
    if dropped != tdst.shape || f.threads() != g.threads() || f.values() != g.values() {
        return Err(format!("{dst} is not {src} with dimension {dim} dropped"));
    }
    for t in 0..f.threads() {
        for v in 0..f.values() {
            let mut x = f.at(t, v);
            x.remove(dim);
            let y = g.at(t, v);
            if x != y {
                return Err(format!(
                    "thread {t} value {v}: {src} projects to {x:?}, {dst} holds {y:?}"
                ));
            }
        }
    }
    Ok(())
}

fn atom_tv(text: &str) -> Result<TvLayout, String> {
    match Layout::parse(text, None).map_err(|e| format!("atom {text:?}: {e}"))? {
        Layout::Tv(tv) => Ok(tv),
        l => Err(format!("atom {} is not a TV layout", l.print())),
    }
}

/// Origins of the atom instances of one operand per thread group, or why the operand is not a
/// tiling of the atom. Instance `i` of group `g` is values `[i*Va, (i+1)*Va)` of threads
/// `[g*Ta, (g+1)*Ta)`.
fn instances(
    f: Reg<'_>,
    name: &str,
    p: Reg<'_>,
    group: i64,
) -> Result<Vec<BTreeSet<(i64, i64)>>, String> {
    let (pt, pv) = (p.threads(), p.values());
    if pt != group
        || f.threads() % pt != 0
        || f.values() % pv != 0
        || p.shape.len() != 2
        || f.shape.len() != 2
    {
        return Err(format!(
            "{name}: {} threads x {} values are not whole atoms of {pt} x {pv}",
            f.threads(),
            f.values()
        ));
    }
    let ext = p.shape;
    let mut out = Vec::new();
    for g in 0..f.threads() / pt {
        let mut set = BTreeSet::new();
        for i in 0..f.values() / pv {
            let at = f.at(g * pt, i * pv);
            let base = p.at(0, 0);
            let o = (at[0] - base[0], at[1] - base[1]);
            if o.0 % ext[0] != 0 || o.1 % ext[1] != 0 || o.0 < 0 || o.1 < 0 {
                return Err(format!(
                    "{name}: instance {i} of group {g} starts at {o:?}, not on the atom grid"
                ));
            }
            for l in 0..pt {
                for v in 0..pv {
                    let want = p.at(l, v);
                    let got = f.at(g * pt + l, i * pv + v);
                    if got != [o.0 + want[0], o.1 + want[1]] {
                        return Err(format!(
                            "{name}: thread {} value {} holds {got:?}, the atom places it at \
                             {:?}",
                            g * pt + l,
                            i * pv + v,
                            [o.0 + want[0], o.1 + want[1]]
                        ));
                    }
                }
            }
            set.insert(o);
        }
        out.push(set);
    }
    Ok(out)
}

fn mma(ts: &Tensors, claim: &SynthClaim) -> Result<(), String> {
    let SynthClaim::Mma {
        c,
        a,
        b,
        shape: [am, an, ak],
        threads,
        pa,
        pb,
        pc,
        ..
    } = claim
    else {
        return Err("not an mma claim".into());
    };
    let (tc, fc) = ts.reg(c)?;
    let shape_of = |n: &str| ts.get(n).map(|(t, _)| t.shape.clone());
    let (sa, sb) = (shape_of(a)?, shape_of(b)?);
    let [m, n] = tc.shape[..] else {
        return Err(format!("{c} is not 2-D"));
    };
    if sa.len() != 2 || sb.len() != 2 || sa[0] != m || sb[0] != n || sa[1] != sb[1] {
        return Err(format!(
            "shapes C {:?}, A {sa:?}, B {sb:?} are not (M,N), (M,K), (N,K)",
            tc.shape
        ));
    }
    let k = sa[1];
    if *am < 1 || *an < 1 || *ak < 1 || m % am != 0 || n % an != 0 || k % ak != 0 {
        return Err(format!(
            "({m},{n},{k}) is not a multiple of the atom ({am},{an},{ak})"
        ));
    }
    let pcl = atom_tv(pc)?;
    if pcl.tile() != [*am, *an] {
        return Err("atom C layout is not (m, n)".into());
    }
    let pct = tv_table(&pcl)?;
    let pcr = Reg {
        tv: &pcl,
        table: &pct,
        nv: pcl.values(),
        shape: pcl.tile(),
    };
    let cs = instances(fc, c, pcr, *threads)?;
    let mut all = BTreeSet::new();
    for set in &cs {
        for &o in set {
            if !all.insert(o) {
                return Err(format!("C block at {o:?} is computed by two thread groups"));
            }
        }
    }
    if all.len() as i64 != (m / am) * (n / an) {
        return Err(format!(
            "C instances cover {} of {} atom blocks",
            all.len(),
            (m / am) * (n / an)
        ));
    }
    let operand = |name: &str, p: &Option<String>, ext: [i64; 2]| {
        p.as_ref()
            .map(|p| {
                let pl = atom_tv(p)?;
                if pl.tile() != ext {
                    return Err(format!("atom layout of {name} is not {ext:?}"));
                }
                let pt = tv_table(&pl)?;
                let pr = Reg {
                    tv: &pl,
                    table: &pt,
                    nv: pl.values(),
                    shape: pl.tile(),
                };
                let (_, f) = ts.reg(name)?;
                if f.threads() != fc.threads() {
                    return Err(format!("{name} and {c} have different thread counts"));
                }
                instances(f, name, pr, *threads)
            })
            .transpose()
    };
    let ai = operand(a, pa, [*am, *ak])?;
    let bi = operand(b, pb, [*an, *ak])?;
    for (g, set) in cs.iter().enumerate() {
        for &(m0, n0) in set {
            for k0 in (0..k).step_by(*ak as usize) {
                if let Some(ai) = &ai {
                    if !ai[g].contains(&(m0, k0)) {
                        return Err(format!(
                            "group {g} computes C block ({m0},{n0}) but holds no A block \
                             ({m0},{k0})"
                        ));
                    }
                }
                if let Some(bi) = &bi {
                    if !bi[g].contains(&(n0, k0)) {
                        return Err(format!(
                            "group {g} computes C block ({m0},{n0}) but holds no B block \
                             ({n0},{k0})"
                        ));
                    }
                }
            }
        }
    }
    Ok(())
}

/// Checks that `addrs` are consecutive from an aligned start.
fn contiguous(addrs: &[i64], width: i64) -> bool {
    addrs[0] % width == 0
        && addrs
            .iter()
            .enumerate()
            .all(|(i, &a)| a == addrs[0] + i as i64)
}

fn width_ok(width: i64, bits: i64) -> Result<(), String> {
    if width < 1 || width & (width - 1) != 0 || width * bits > 128 || (width * bits) % 8 != 0 {
        return Err(format!(
            "{width} elements of {bits} bits is not a 1..16-byte power-of-two access"
        ));
    }
    Ok(())
}

fn vector(ts: &Tensors, reg: &str, memory: &str, width: i64) -> Result<(), String> {
    let (tr, f) = ts.reg(reg)?;
    let (tm, l) = ts.mem(memory)?;
    if tr.shape != tm.shape {
        return Err(format!("{reg} and {memory} have different shapes"));
    }
    width_ok(width, tm.bits)?;
    if f.values() % width != 0 {
        return Err(format!(
            "{reg}: {} values per thread are not whole vectors of {width}",
            f.values()
        ));
    }
    for t in 0..f.threads() {
        for g in 0..f.values() / width {
            let addrs = (0..width)
                .map(|e| l[f.cell(t, g * width + e) as usize])
                .collect::<Vec<_>>();
            if !contiguous(&addrs, width) {
                return Err(format!(
                    "thread {t} vector {g}: {reg}'s values sit at {memory} elements {addrs:?}, \
                     not {width} consecutive from a multiple of {width}"
                ));
            }
        }
    }
    Ok(())
}

fn transfer(
    ts: &Tensors,
    src: &str,
    dst: &str,
    tv: &str,
    width: i64,
    cta_threads: i64,
) -> Result<(), String> {
    let (a, la) = ts.mem(src)?;
    let (b, lb) = ts.mem(dst)?;
    if a.shape != b.shape || a.bits != b.bits {
        return Err(format!("{src} and {dst} differ in shape or dtype"));
    }
    width_ok(width, a.bits)?;
    let ftv = atom_tv(tv)?;
    if ftv.tile() != a.shape.as_slice() || ftv.layout().size() > MAX_POINTS {
        return Err(format!("the copy's TV layout does not tile {src}"));
    }
    // The copy runs on the program's threads: a layout over others is not its plan.
    if ftv.threads() != cta_threads {
        return Err(format!(
            "the copy's TV layout spans {} threads, the CTA has {cta_threads}",
            ftv.threads()
        ));
    }
    let ftab = tv_table(&ftv)?;
    let f = Reg {
        tv: &ftv,
        table: &ftab,
        nv: ftv.values(),
        shape: ftv.tile(),
    };
    if f.values() % width != 0 {
        return Err(format!(
            "the copy's values are not whole vectors of {width}"
        ));
    }
    let cells = size(&a.shape).unwrap_or(0);
    let mut seen = vec![false; cells as usize];
    for t in 0..f.threads() {
        for g in 0..f.values() / width {
            let mut sa = Vec::new();
            let mut sb = Vec::new();
            for e in 0..width {
                let i = f.cell(t, g * width + e) as usize;
                seen[i] = true;
                sa.push(la[i]);
                sb.push(lb[i]);
            }
            if !contiguous(&sa, width) || !contiguous(&sb, width) {
                return Err(format!(
                    "thread {t} vector {g}: {src} elements {sa:?} -> {dst} elements {sb:?} \
                     are not {width} consecutive aligned elements on both sides"
                ));
            }
        }
    }
    if let Some(i) = seen.iter().position(|s| !s) {
        return Err(format!("the copy never moves cell #{i} of {src}"));
    }
    Ok(())
}

/// The (lane, value-in-instance) of element `c` of stored row `r` of matrix `j`.
pub fn ldmatrix_holder(j: i64, r: i64, c: i64, trans: bool) -> (i64, i64) {
    if trans {
        (4 * c + r / 2, 2 * j + r % 2)
    } else {
        (4 * r + c / 2, 2 * j + c % 2)
    }
}

fn ldmatrix(ts: &Tensors, reg: &str, memory: &str, count: i64, trans: bool) -> Result<(), String> {
    let (tr, f) = ts.reg(reg)?;
    let (tm, l) = ts.mem(memory)?;
    if tr.shape != tm.shape || tm.bits != 16 || tr.bits != 16 {
        return Err(format!("{reg} and {memory} are not the same 16-bit tile"));
    }
    if !matches!(count, 1 | 2 | 4) || f.threads() % 32 != 0 || f.values() % (2 * count) != 0 {
        return Err(format!(
            "{reg}: {} threads x {} values are not whole ldmatrix.x{count} fragments",
            f.threads(),
            f.values()
        ));
    }
    for w in 0..f.threads() / 32 {
        for i in 0..f.values() / (2 * count) {
            for j in 0..count {
                for r in 0..8 {
                    let addrs = (0..8)
                        .map(|c| {
                            let (lane, v) = ldmatrix_holder(j, r, c, trans);
                            l[f.cell(32 * w + lane, i * 2 * count + v) as usize]
                        })
                        .collect::<Vec<_>>();
                    if !contiguous(&addrs, 8) {
                        return Err(format!(
                            "warp {w} instance {i} matrix {j} row {r}: the cells sit at \
                             {memory} elements {addrs:?}, not one aligned 16-byte row"
                        ));
                    }
                }
            }
        }
    }
    Ok(())
}

fn canonical(ts: &Tensors, name: &str, atom: &str) -> Result<(), String> {
    let (t, l) = ts.mem(name)?;
    let a = match Layout::parse(atom, None).map_err(|e| format!("atom {atom:?}: {e}"))? {
        Layout::Swizzled(s) => s,
        Layout::Cute(c) => {
            SwizzledLayout::new(layout::Swizzle::identity(), c).map_err(|e| e.to_string())?
        }
        other => return Err(format!("atom {} is not a memory layout", other.print())),
    };
    let ext = a.layout().top_shape();
    let [rows, cols] = t.shape[..] else {
        return Err(format!("{name} is not 2-D"));
    };
    if ext.len() != 2 || rows % ext[0] != 0 || cols % ext[1] != 0 {
        return Err(format!("{name} {:?} is not whole atoms {ext:?}", t.shape));
    }
    let block = ext[0] * ext[1];
    for c in 0..cols {
        for r in 0..rows {
            let inner = a
                .eval(&ext, &[r % ext[0], c % ext[1]])
                .map_err(|e| e.to_string())?;
            let want = inner + block * (r / ext[0] + (rows / ext[0]) * (c / ext[1]));
            let got = l[(r + rows * c) as usize];
            if got != want {
                return Err(format!(
                    "{name} stores ({r},{c}) at {got}, the tiled atom at {want}"
                ));
            }
        }
    }
    Ok(())
}

fn injective(ts: &Tensors, name: &str) -> Result<(), String> {
    let (t, l) = ts.mem(name)?;
    if let Some(i) = l.iter().position(|&o| o < 0) {
        return Err(format!("{name} stores cell #{i} at a negative offset"));
    }
    match collision(l, &t.shape, t.bounds.as_deref()) {
        Some((a, b, o)) => Err(format!("{name} stores {a:?} and {b:?} both at {o}")),
        None => Ok(()),
    }
}

/// Two cells of `shape` that `table` (the element offset of every column-major cell) puts at
/// one element, the first such pair in column-major order, with that element; only cells below
/// `bounds` count (all where `None`: a global view's other cells are never accessed). `None`:
/// the map is injective there.
pub fn collision(
    table: &[i64],
    shape: &[i64],
    bounds: Option<&[i64]>,
) -> Option<(Vec<i64>, Vec<i64>, i64)> {
    let mut seen = BTreeMap::new();
    for (i, &o) in table.iter().enumerate() {
        let at = coord(shape, i as i64);
        if bounds.is_some_and(|b| at.iter().zip(b).any(|(c, b)| c >= b)) {
            continue;
        }
        if let Some(prev) = seen.insert(o, at.clone()) {
            return Some((prev, at, o));
        }
    }
    None
}

/// Bytes a shared tensor occupies: (largest offset + 1) elements, from its offset table.
pub fn footprint(t: &SynthTensor, offsets: &[i64]) -> i64 {
    let top = offsets.iter().copied().max().unwrap_or(0);
    ((top + 1) * t.bits + 7) / 8
}

/// Checks that every operation and tensor is backed by the claims it needs.
pub fn covered(c: &SynthesisCertificate) -> Result<(), String> {
    let has = |f: &dyn Fn(&SynthClaim) -> bool| c.claims.iter().any(f);
    for t in &c.tensors {
        let ok = match t.scope.as_str() {
            "register" => {
                has(&|k| matches!(k, SynthClaim::Distribution { tensor, .. } if tensor == &t.name))
            }
            "shared" => {
                has(&|k| matches!(k, SynthClaim::Injective { tensor } if tensor == &t.name))
            }
            // A global view some operation writes: its writes must not race.
            _ if c.ops.iter().any(|op| op.output == t.name) => {
                has(&|k| matches!(k, SynthClaim::Injective { tensor } if tensor == &t.name))
            }
            _ => true,
        };
        if !ok {
            return Err(format!(
                "tensor {} has no distribution or injectivity claim",
                t.name
            ));
        }
    }
    let budget = budget(c)?;
    if !has(&|k| matches!(k, SynthClaim::Capacity { limit, .. } if *limit == budget)) {
        return Err(match c.smem {
            Some(_) => format!("no capacity claim at the kernel's budget of {budget} bytes"),
            None => format!(
                "no capacity claim at {}'s limit of {budget} bytes",
                c.target
            ),
        });
    }
    for op in &c.ops {
        let out = &op.output;
        let inp = |i: usize| op.inputs.get(i).cloned().unwrap_or_default();
        let ok = match op.op.as_str() {
            "mma" => has(&|k| {
                matches!(k, SynthClaim::Mma { c, a, b, .. }
                    if c == out && *a == inp(0) && *b == inp(1))
            }),
            "copy" => has(&|k| match k {
                SynthClaim::Vector { reg, memory, .. } => {
                    (reg == out && *memory == inp(0)) || (*reg == inp(0) && memory == out)
                }
                SynthClaim::Ldmatrix { reg, memory, .. } => {
                    (reg == out && *memory == inp(0)) || (*reg == inp(0) && memory == out)
                }
                SynthClaim::Transfer { src, dst, .. } => *src == inp(0) && dst == out,
                SynthClaim::SameDistribution { a, b } => *a == inp(0) && b == out,
                SynthClaim::Canonical { tensor, .. } => {
                    tensor == out && op.instruction.contains("TMA")
                }
                _ => false,
            }),
            "cast" | "elementwise" => op.inputs.iter().all(|i| {
                has(&|k| match k {
                    SynthClaim::SameDistribution { a, b } => a == i && b == out,
                    // A broadcast operand: the output's layout with one dimension dropped.
                    SynthClaim::Projection { src, dst, .. } => src == out && dst == i,
                    _ => false,
                })
            }),
            "reduce" => has(
                &|k| matches!(k, SynthClaim::Projection { src, dst, .. } if *src == inp(0) && dst == out),
            ),
            // Through shared memory: any two distributions of one tile; both are covered by
            // their distribution claims and the staging buffer by its injectivity claim.
            "rearrange" => true,
            other => return Err(format!("line {}: unknown operation {other:?}", op.line)),
        };
        if !ok {
            return Err(format!(
                "line {}: {} {:?} -> {} has no claim backing it",
                op.line, op.op, op.inputs, op.output
            ));
        }
    }
    Ok(())
}

/// Re-checks a synthesis certificate: digest, coverage, then every claim re-decided.
pub fn check(text: &str) -> Result<SynthesisCertificate, String> {
    let c: SynthesisCertificate =
        serde_json::from_str(text).map_err(|e| format!("not a synthesis certificate: {e}"))?;
    if c.kind != "synthesis" {
        return Err(format!("kind {:?}, not synthesis", c.kind));
    }
    if c.version != VERSION {
        return Err(format!(
            "version {}: this laycert checks version {VERSION} (a certificate that carries its \
             program's text); re-run `laycert synth --cert`",
            c.version
        ));
    }
    if c.digest != c.compute_digest() {
        return Err("the digest does not match the contents (edited after it was written)".into());
    }
    if c.verdict != "proved" {
        return Err(format!(
            "the certificate records {:?}, not a proof",
            c.verdict
        ));
    }
    let ts = Tensors::new(&c.tensors)?;
    covered(&c)?;
    bind::ops_are_bound(&c, &ts)?;
    cta_threads(&c, &ts)?;
    for (i, claim) in c.claims.iter().enumerate() {
        let at = |e: String| format!("claim #{} ({}): {e}", i + 1, claim_kind(claim));
        match claim {
            SynthClaim::Mma { .. } => mma_atom_is_the_corpus_instruction(claim).map_err(at)?,
            SynthClaim::Canonical { .. } => {
                bind::canonical_atom_is_the_corpus_atom(claim, &ts).map_err(at)?
            }
            _ => {}
        }
        decide(claim, &c, &ts).map_err(at)?;
    }
    kernel::check_binding(&c, &ts)?;
    Ok(c)
}

/// A plan's swizzle is one CuTe can instantiate: `Swizzle<B,M,S>` requires `|S| >= B`
/// (cute/swizzle.hpp), so its source and destination bits are disjoint. laycert evaluates the
/// overlapping ones too (they are bijections), but synthesis never chooses one and a kernel
/// author could not write it in CuTe; a certificate naming one was not written by `synth`.
fn cute_swizzle(sw: &layout::Swizzle) -> Result<(), String> {
    if sw.bits() > 0 && sw.shift().unsigned_abs() < sw.bits() {
        return Err(format!(
            "{sw}: CuTe's Swizzle<B,M,S> requires |S| >= B (its source and destination bits \
             overlap here)"
        ));
    }
    Ok(())
}

/// Most threads of one CTA (CUDA's limit).
pub const MAX_CTA_THREADS: i64 = 1024;

/// The certificate's CTA size is a CTA size, and the one every register tensor is distributed
/// over: `threads` is claimed data, and without this a forged value re-checked.
fn cta_threads(c: &SynthesisCertificate, ts: &Tensors) -> Result<(), String> {
    if !(1..=MAX_CTA_THREADS).contains(&c.threads) {
        return Err(format!(
            "threads {}: a CTA has 1..={MAX_CTA_THREADS} threads",
            c.threads
        ));
    }
    for t in c.tensors.iter().filter(|t| t.scope == "register") {
        let (_, f) = ts.reg(&t.name)?;
        if f.threads() != c.threads {
            return Err(format!(
                "tensor {}: distributed over {} threads, the CTA has {}",
                t.name,
                f.threads(),
                c.threads
            ));
        }
    }
    Ok(())
}

/// The instruction an mma claim names, as the corpus defines it (corpus/data/atoms/
/// instructions.toml, its operand layouts resolved through the corpus atoms): the claim's atom
/// shape, threads and operand layouts must be exactly those. A certificate carries its own copy of
/// the atom layouts; without this comparison an edit of an atom and its tensors together would
/// re-check.
fn mma_atom_is_the_corpus_instruction(claim: &SynthClaim) -> Result<(), String> {
    let SynthClaim::Mma {
        atom,
        shape,
        threads,
        pa,
        pb,
        pc,
        ..
    } = claim
    else {
        return Err("not an mma claim".into());
    };
    let entry = &bind::instructions()?
        .iter()
        .find(|i| i.name == *atom)
        .ok_or_else(|| format!("the corpus defines no instruction {atom:?}"))?
        .table;
    let ints = |k: &str| -> Vec<i64> {
        match entry.get(k) {
            Some(toml::Value::Array(a)) => a.iter().filter_map(|v| v.as_integer()).collect(),
            Some(toml::Value::Integer(i)) => vec![*i],
            _ => Vec::new(),
        }
    };
    if ints("shape") != shape.to_vec() || ints("threads") != vec![*threads] {
        return Err(format!(
            "{atom}: the claim says shape {shape:?} and {threads} threads, the corpus {:?} and {:?}",
            ints("shape"),
            ints("threads")
        ));
    }
    let corpus = bind::corpus()?;
    let resolve = |k: &str| -> Result<Option<String>, String> {
        let Some(name) = entry.get(k).and_then(|v| v.as_str()) else {
            return Ok(None);
        };
        // An operand read from shared memory is claimed by its canonical layout, not a TV one.
        if k != "c_layout" && !bind::reads_registers(entry, k) {
            return Ok(None);
        }
        let key = name.strip_prefix("atom:").unwrap_or(name);
        let a = corpus
            .atom(key)
            .ok_or_else(|| format!("instructions.toml names unknown atom {key}"))?;
        Layout::parse(&a.layout, a.shape.as_deref())
            .map(|l| Some(l.print()))
            .map_err(|e| format!("atom {key}: {e}"))
    };
    let printed = |t: &Option<String>| -> Result<Option<String>, String> {
        t.as_ref()
            .map(|t| {
                Layout::parse(t, None)
                    .map(|l| l.print())
                    .map_err(|e| format!("{t:?}: {e}"))
            })
            .transpose()
    };
    for (operand, key, claimed) in [
        ("A", "a", printed(pa)?),
        ("B", "b", printed(pb)?),
        ("C", "c_layout", printed(&Some(pc.clone()))?),
    ] {
        let want = resolve(key)?;
        // An operand read from shared memory has no register layout, in the corpus and in the
        // claim alike; one read from registers has the corpus's.
        if claimed != want {
            return Err(format!(
                "{atom}: the claim's {operand} layout {} is not the corpus's {}",
                claimed.unwrap_or_else(|| "(none)".into()),
                want.unwrap_or_else(|| "(none)".into())
            ));
        }
        if claimed.is_none() && operand == "C" {
            return Err(format!("{atom}: the claim has no C layout"));
        }
    }
    Ok(())
}

/// The claim's kind name.
pub fn claim_kind(c: &SynthClaim) -> &'static str {
    match c {
        SynthClaim::Distribution { .. } => "distribution",
        SynthClaim::SameDistribution { .. } => "same_distribution",
        SynthClaim::Projection { .. } => "projection",
        SynthClaim::Mma { .. } => "mma",
        SynthClaim::Vector { .. } => "vector",
        SynthClaim::Transfer { .. } => "transfer",
        SynthClaim::Ldmatrix { .. } => "ldmatrix",
        SynthClaim::Canonical { .. } => "canonical",
        SynthClaim::Injective { .. } => "injective",
        SynthClaim::Capacity { .. } => "capacity",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reg(name: &str, shape: &[i64], layout: &str) -> SynthTensor {
        SynthTensor {
            name: name.into(),
            scope: "register".into(),
            dtype: "f16".into(),
            bits: 16,
            shape: shape.to_vec(),
            layout: layout.into(),
            bounds: None,
        }
    }

    fn mem(name: &str, shape: &[i64], layout: &str) -> SynthTensor {
        SynthTensor {
            scope: "shared".into(),
            ..reg(name, shape, layout)
        }
    }

    const A16: &str = "((4,8),(2,2,2)):((32,1),(16,8,128)) -> (16,16)";
    const B16: &str = "((4,8),(2,2)):((16,1),(8,64)) -> (8,16)";
    const C16: &str = "((4,8),(2,2)):((32,1),(16,8)) -> (16,8)";

    /// A certificate with no tensors or ops: the claims decided here read only `ts`.
    fn blank() -> SynthesisCertificate {
        SynthesisCertificate {
            version: VERSION,
            kind: "synthesis".into(),
            program: "t".into(),
            source: None,
            target: "sm80".into(),
            threads: 32,
            tensors: Vec::new(),
            ops: Vec::new(),
            smem: None,
            kernel: None,
            claims: Vec::new(),
            verdict: "proved".into(),
            digest: String::new(),
        }
    }

    fn mma_claim() -> SynthClaim {
        SynthClaim::Mma {
            c: "c".into(),
            a: "a".into(),
            b: "b".into(),
            atom: "m16n8k16".into(),
            shape: [16, 8, 16],
            threads: 32,
            pa: Some(A16.into()),
            pb: Some(B16.into()),
            pc: C16.into(),
        }
    }

    #[test]
    fn one_atom_mma_is_its_own_tiling() {
        let ts = Tensors::new(&[
            reg("a", &[16, 16], A16),
            reg("b", &[8, 16], B16),
            reg("c", &[16, 8], C16),
        ])
        .unwrap();
        decide(&mma_claim(), &blank(), &ts).unwrap();
    }

    #[test]
    fn mma_with_a_swapped_value_mode_is_refused() {
        // A's k+8 and m+8 value strides swapped: the registers hold the wrong cells.
        let ts = Tensors::new(&[
            reg(
                "a",
                &[16, 16],
                "((4,8),(2,2,2)):((32,1),(16,128,8)) -> (16,16)",
            ),
            reg("b", &[8, 16], B16),
            reg("c", &[16, 8], C16),
        ])
        .unwrap();
        let e = decide(&mma_claim(), &blank(), &ts).unwrap_err();
        assert!(e.contains("a: thread"), "{e}");
    }

    #[test]
    fn ldmatrix_x4_reads_k_major_rows() {
        // A 16x16 K-major tile (row-major (16,16):(16,1)) feeds the A fragment by ldmatrix.x4.
        let ts = Tensors::new(&[
            reg("a", &[16, 16], A16),
            mem("s", &[16, 16], "(16,16):(16,1)"),
        ])
        .unwrap();
        ldmatrix(&ts, "a", "s", 4, false).unwrap();
        // Column-major storage needs .trans.
        let ts = Tensors::new(&[
            reg("a", &[16, 16], A16),
            mem("s", &[16, 16], "(16,16):(1,16)"),
        ])
        .unwrap();
        assert!(ldmatrix(&ts, "a", "s", 4, false).is_err());
        ldmatrix(&ts, "a", "s", 4, true).unwrap();
    }

    #[test]
    fn vector_access_needs_consecutive_aligned_elements() {
        let ts = Tensors::new(&[
            reg("r", &[8, 8], "(8,8):(1,8) -> (8,8)"),
            mem("g", &[8, 8], "(8,8):(8,1)"),
            mem("h", &[8, 8], "(8,8):(9,1)"),
        ])
        .unwrap();
        vector(&ts, "r", "g", 8).unwrap();
        assert!(vector(&ts, "r", "h", 2).is_err()); // row r starts at 9r: unaligned
        vector(&ts, "r", "h", 1).unwrap();
    }

    /// A cp.async transfer's TV layout runs on the CTA's threads: the same tiling over 16
    /// threads is not a plan of a 32-thread program.
    #[test]
    fn a_transfer_runs_on_the_ctas_threads() {
        let ts = Tensors::new(&[
            mem("g", &[8, 8], "(8,8):(8,1)"),
            mem("s", &[8, 8], "(8,8):(8,1)"),
        ])
        .unwrap();
        let tv32 = "((8,4),2):((1,16),8) -> (8,8)";
        let tv16 = "((8,2),4):((1,32),8) -> (8,8)";
        transfer(&ts, "g", "s", tv32, 2, 32).unwrap();
        transfer(&ts, "g", "s", tv16, 2, 16).unwrap();
        let e = transfer(&ts, "g", "s", tv16, 2, 32).unwrap_err();
        assert!(e.contains("spans 16 threads, the CTA has 32"), "{e}");
    }

    #[test]
    fn projection_drops_the_reduced_dimension() {
        let ts = Tensors::new(&[
            reg("x", &[4, 8], "(4,8):(1,4) -> (4,8)"),
            reg("y", &[4], "(4,8):(1,0) -> (4)"),
            reg("z", &[4], "(4,8):(0,0) -> (4)"),
        ])
        .unwrap();
        projection(&ts, "x", "y", 1).unwrap();
        assert!(projection(&ts, "x", "z", 1).is_err());
    }

    #[test]
    fn canonical_accepts_the_tiled_atom_and_refuses_a_plain_layout() {
        let atom = "Sw<3,3,3> o (8,64):(64,1)";
        let tiled = "Sw<3,3,3> o (16,64):(64,1)";
        let ts = Tensors::new(&[
            mem("s", &[16, 64], tiled),
            mem("p", &[16, 64], "(16,64):(64,1)"),
        ])
        .unwrap();
        canonical(&ts, "s", atom).unwrap();
        assert!(canonical(&ts, "p", atom).is_err());
    }
}
