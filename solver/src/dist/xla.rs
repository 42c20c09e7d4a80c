//! XLA's plan as a laycert plan: the compiled SPMD program of a resharding (HLO text, as
//! `jax.jit(f).lower(x).compile().as_text()` prints it) read instruction by instruction with
//! XLA's own semantics, so certifying the result checks what XLA does, not what it meant.
//!
//! Every value of the program is tracked per partition as an array of integers: for tensor data,
//! the position (row-major) in the partition's current plan buffer each element comes from; for
//! index arithmetic (`partition-id`, constant tables, `clamp`, `multiply`, ...), the integers
//! themselves, each in its declared type: arithmetic wraps as XLA's fixed-width integers do (a
//! u32 `subtract` below zero is `2^32` more), a narrowing `convert` keeps the low bits, and what
//! XLA leaves implementation-defined (a division by zero) or a non-integer index is refused. Local instructions (`bitcast` through both layouts, `reshape`, `copy`,
//! `transpose`, `slice`, `dynamic-slice` at the clamped offsets its index operands give each
//! partition, `concatenate`, `broadcast`, tuples, `fusion` bodies) only move these positions.
//! A collective first lays its operand out in the plan buffer (a local step of messages from a
//! rank to itself, skipped when the buffer already is the operand) and then becomes one plan step
//! with XLA's semantics, on a view of the buffer as `[L, M]` (leading 1s up to the tensor's rank):
//! - `all-gather dimensions={k}`: members' buffers concatenated in replica-group order along `k`
//!   = along the last dim of `[prod(S[..k]), prod(S[k..])]`;
//! - `all-to-all dimensions={k}` (one operand): piece `j` along `k` to member `j`, concatenated in
//!   member order = all-to-all on the last dim of the same view; the tuple form (one operand per
//!   member) = all-to-all on dim 0 of `[members, operand size]`;
//! - `reduce-scatter dimensions={k}`: like all-gather's view, reduce then piece per member;
//! - `all-reduce`; `collective-permute source_target_pairs`: the whole buffer from source to
//!   target (a partition that is no target gets zeros: padding in the plan).
//!
//! Replica-group ids are partition ids; partition `p` is the rank at position `p` of the mesh's
//! device order (as in HLO sharding text). Anything outside this subset is an error naming the
//! instruction and its line, never a guess.

use std::collections::BTreeMap;

use certify::dist::{Message, Plan, Step};
use layout::mesh::{MeshLayout, ReduceOp};
use layout::notation::hlo_module::{self, HloModule, HloShape, Instr};

/// Most integers (over all partitions) one tracked value may hold: 2^24.
pub const MAX_TRACKED: i64 = 1 << 24;

/// XLA's program as a plan, with the elements each rank receives.
#[derive(Debug, Clone)]
pub struct XlaPlan {
    /// The plan (ranks = the mesh's devices).
    pub plan: Plan,
    /// Elements each rank receives from other ranks, summed over the collectives (indexed by
    /// rank): all-gather `out - in`, all-to-all and reduce-scatter `(p-1)/p` of the input,
    /// all-reduce `2(p-1)/p`, collective-permute the buffer unless sent to itself.
    pub recv_elems: Vec<i64>,
    /// The collectives read, one line each (`all-gather %name over 4 groups of 2`).
    pub collectives: Vec<String>,
}

impl XlaPlan {
    /// The most elements any rank receives.
    pub fn max_recv_elems(&self) -> i64 {
        self.recv_elems.iter().copied().max().unwrap_or(0)
    }
}

/// Why XLA's program was not read as a plan.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum XlaError {
    /// The text is not HLO.
    #[error("{0}")]
    Text(#[from] hlo_module::HloTextError),
    /// An instruction outside the subset, or one whose operands do not fit it.
    #[error("HLO line {line}: %{name} ({opcode}): {why}")]
    Unsupported {
        /// Line (1-based).
        line: usize,
        /// Instruction name.
        name: String,
        /// Its opcode.
        opcode: String,
        /// What is not read.
        why: String,
    },
    /// The program does not fit the claim (partition count, parameter or result shape).
    #[error("{0}")]
    Mismatch(String),
}

/// A tracked array: per partition, row-major logical order.
#[derive(Debug, Clone)]
struct Arr {
    /// `Some(epoch)` for tensor data (positions in the plan buffer of that epoch), `None` for
    /// integers.
    data: Option<usize>,
    dims: Vec<i64>,
    layout: Vec<i64>,
    v: Vec<Vec<i64>>,
}

#[derive(Debug, Clone)]
enum Val {
    Arr(Arr),
    Tuple(Vec<Val>),
}

/// Elements of a shape, summed over a tuple's members (saturating).
fn shape_elems(s: &HloShape) -> i64 {
    match s {
        HloShape::Array { dims, .. } => dims
            .iter()
            .try_fold(1i64, |a, &d| a.checked_mul(d.max(0)))
            .unwrap_or(i64::MAX),
        HloShape::Tuple(m) => m.iter().fold(0i64, |a, x| a.saturating_add(shape_elems(x))),
    }
}

fn size(dims: &[i64]) -> i64 {
    dims.iter().product()
}

fn strides(dims: &[i64]) -> Vec<i64> {
    let mut s = vec![1i64; dims.len()];
    for i in (0..dims.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * dims[i + 1];
    }
    s
}

fn coords(mut i: i64, dims: &[i64]) -> Vec<i64> {
    let mut c = vec![0; dims.len()];
    for d in (0..dims.len()).rev() {
        if dims[d] > 0 {
            c[d] = i % dims[d];
            i /= dims[d];
        }
    }
    c
}

/// Logical (row-major) index of each physical position under `layout` (minor to major).
fn physical_order(dims: &[i64], layout: &[i64]) -> Vec<i64> {
    let st = strides(dims);
    let n = size(dims);
    (0..n)
        .map(|mut k| {
            let mut logical = 0;
            for &d in layout {
                let e = dims[d as usize];
                logical += (k % e) * st[d as usize];
                k /= e;
            }
            logical
        })
        .collect()
}

struct Reader<'a> {
    module: &'a HloModule,
    /// Partition -> rank.
    ranks: Vec<i64>,
    rank_of_tensor: usize,
    /// Current plan buffer shape (same on every rank).
    pshape: Vec<i64>,
    epoch: usize,
    steps: Vec<Step>,
    recv: Vec<i64>,
    collectives: Vec<String>,
    /// Nesting of computations being evaluated (a fusion calling itself stops at 64).
    depth: usize,
}

type R<T> = Result<T, XlaError>;

fn unsupported(i: &Instr, why: impl Into<String>) -> XlaError {
    XlaError::Unsupported {
        line: i.line,
        name: i.name.clone(),
        opcode: i.opcode.clone(),
        why: why.into(),
    }
}

fn array_shape(i: &Instr) -> R<(Vec<i64>, Vec<i64>)> {
    match &i.shape {
        HloShape::Array { dims, layout, .. } => Ok((dims.clone(), layout.clone())),
        HloShape::Tuple(_) => Err(unsupported(i, "a tuple shape where an array is read")),
    }
}

/// An integer element type's width and signedness (`pred` is 1 bit, unsigned); `None` for the
/// others.
fn int_type(ty: &str) -> Option<(u32, bool)> {
    Some(match ty {
        "pred" => (1, false),
        "s4" => (4, true),
        "s8" => (8, true),
        "s16" => (16, true),
        "s32" => (32, true),
        "s64" => (64, true),
        "u4" => (4, false),
        "u8" => (8, false),
        "u16" => (16, false),
        "u32" => (32, false),
        "u64" => (64, false),
        _ => return None,
    })
}

/// `x` reduced into an integer type's range, as XLA's fixed-width arithmetic does (two's
/// complement for the signed types).
fn wrap(x: i128, (bits, signed): (u32, bool)) -> i128 {
    let m = x.rem_euclid(1i128 << bits);
    if signed && m >= 1i128 << (bits - 1) {
        m - (1i128 << bits)
    } else {
        m
    }
}

/// Whether `x` is a value of the integer type.
fn fits(x: i128, t: (u32, bool)) -> bool {
    wrap(x, t) == x
}

/// The result's element type, which must be an integer type: index values are integers of
/// their declared width, and every one laycert tracks is in that type's range.
fn result_int_type(i: &Instr) -> R<(u32, bool)> {
    match &i.shape {
        HloShape::Array { ty, .. } => int_type(ty).ok_or_else(|| {
            unsupported(
                i,
                format!("index values of type {ty}: laycert reads integer index arithmetic only"),
            )
        }),
        HloShape::Tuple(_) => Err(unsupported(i, "a tuple shape where an array is read")),
    }
}

/// Every value fits the result's declared integer type (a value moved, or a constant, is not
/// reinterpreted: one that does not fit is refused, not wrapped).
fn check_fits(i: &Instr, v: &[Vec<i64>]) -> R<()> {
    let t = result_int_type(i)?;
    match v
        .iter()
        .flatten()
        .find(|&&x| wrap(x as i128, t) != x as i128)
    {
        Some(x) => Err(unsupported(
            i,
            format!("the value {x} does not fit its declared type"),
        )),
        None => Ok(()),
    }
}

fn attr_ints(i: &Instr, key: &str) -> R<Vec<i64>> {
    let t = i
        .attrs
        .get(key)
        .ok_or_else(|| unsupported(i, format!("no {key}=")))?;
    hlo_module::ints_in(t).map_err(|m| unsupported(i, format!("{key}: {m}")))
}

impl<'a> Reader<'a> {
    fn n(&self) -> usize {
        self.ranks.len()
    }

    fn view(&self, l: i64, m: i64) -> Option<Vec<i64>> {
        if self.rank_of_tensor == 1 {
            return (l == 1).then(|| vec![m]);
        }
        let mut v = vec![1; self.rank_of_tensor - 2];
        v.extend([l, m]);
        Some(v)
    }

    fn arr(&self, i: &Instr, v: &Val) -> R<Arr> {
        match v {
            Val::Arr(a) => Ok(a.clone()),
            Val::Tuple(_) => Err(unsupported(i, "a tuple operand where an array is read")),
        }
    }

    fn data(&self, i: &Instr, v: &Val) -> R<Arr> {
        let a = self.arr(i, v)?;
        match a.data {
            Some(e) if e == self.epoch => Ok(a),
            Some(_) => Err(unsupported(
                i,
                "reads tensor data from before the last collective (not one buffer per device)",
            )),
            None => Err(unsupported(
                i,
                "a collective on index integers, not tensor data",
            )),
        }
    }

    /// Whether `a` is the plan buffer itself (same shape, every element in place).
    fn is_buffer(&self, a: &Arr) -> bool {
        a.dims == self.pshape
            && a.v
                .iter()
                .all(|v| v.iter().enumerate().all(|(k, &s)| s == k as i64))
    }

    /// Lays `a` out in the plan buffer as `view` (a local step, unless it already is).
    fn materialize(&mut self, i: &Instr, a: &Arr, view: Vec<i64>) -> R<()> {
        if size(&view) != size(&a.dims) {
            return Err(unsupported(i, "view of another size"));
        }
        let identity =
            (0..self.n()).all(|p| a.v[p].iter().enumerate().all(|(k, &s)| s == k as i64));
        if identity && view == self.pshape {
            return Ok(());
        }
        let (last_v, last_p) = (
            *view.last().unwrap_or(&1),
            *self.pshape.last().unwrap_or(&1),
        );
        let mut messages = Vec::new();
        for (p, src) in a.v.iter().enumerate() {
            let r = self.ranks[p];
            let mut k = 0usize;
            while k < src.len() {
                let mut len = 1usize;
                while k + len < src.len()
                    && (k + len) as i64 % last_v != 0
                    && src[k + len] == src[k] + len as i64
                    && src[k + len] % last_p != 0
                {
                    len += 1;
                }
                let mut ones = vec![1i64; view.len()];
                if let Some(l) = ones.last_mut() {
                    *l = len as i64;
                }
                messages.push(Message {
                    src: r,
                    dst: r,
                    src_start: coords(src[k], &self.pshape),
                    dst_start: coords(k as i64, &view),
                    len: ones,
                });
                k += len;
            }
        }
        self.steps.push(Step::SendRecv {
            shape: view.clone(),
            messages,
        });
        self.pshape = view;
        Ok(())
    }

    fn fresh(&mut self, dims: Vec<i64>, layout: Vec<i64>) -> Arr {
        self.epoch += 1;
        let id: Vec<i64> = (0..size(&dims)).collect();
        Arr {
            data: Some(self.epoch),
            dims,
            layout,
            v: vec![id; self.n()],
        }
    }

    fn groups(&self, i: &Instr) -> R<Vec<Vec<i64>>> {
        let n = self.n() as i64;
        let g = match i.attrs.get("replica_groups") {
            Some(t) => {
                hlo_module::replica_groups(t, i.attrs.get("device_ids").map(String::as_str), n)
                    .map_err(|m| unsupported(i, m))?
            }
            None => vec![(0..n).collect()],
        };
        let mut seen = vec![false; self.n()];
        for &d in g.iter().flatten() {
            if d < 0 || d >= n || std::mem::replace(&mut seen[d as usize], true) {
                return Err(unsupported(
                    i,
                    format!("partition {d} of {n} twice or out of range in the replica groups"),
                ));
            }
        }
        if seen.iter().any(|s| !s) {
            return Err(unsupported(i, "replica groups that leave a partition out"));
        }
        let p = g[0].len();
        if g.iter().any(|x| x.len() != p) {
            return Err(unsupported(i, "replica groups of different sizes"));
        }
        Ok(g)
    }

    fn rank_groups(&self, g: &[Vec<i64>]) -> Vec<Vec<i64>> {
        g.iter()
            .map(|x| x.iter().map(|&d| self.ranks[d as usize]).collect())
            .collect()
    }

    fn reduce_op(&self, i: &Instr) -> R<ReduceOp> {
        let name = i
            .attrs
            .get("to_apply")
            .map(|s| s.trim_start_matches('%').to_string())
            .ok_or_else(|| unsupported(i, "no to_apply="))?;
        let c = self
            .module
            .computations
            .get(&name)
            .ok_or_else(|| unsupported(i, format!("to_apply %{name} is not in the module")))?;
        match c.instrs[c.root].opcode.as_str() {
            "add" => Ok(ReduceOp::Sum),
            "maximum" => Ok(ReduceOp::Max),
            "minimum" => Ok(ReduceOp::Min),
            o => Err(unsupported(i, format!("reduction by {o}"))),
        }
    }

    fn collective(&mut self, i: &Instr, ops: &[Val]) -> R<Val> {
        let op = i.opcode.trim_end_matches("-start");
        let first = ops.first().ok_or_else(|| unsupported(i, "no operand"))?;
        let n = self.n();
        let mut line = format!("{op} %{}", i.name);
        let val = match op {
            "all-gather" | "reduce-scatter" | "all-to-all"
                if ops.len() == 1 && i.attrs.contains_key("dimensions") =>
            {
                let a = self.data(i, first)?;
                let k = attr_ints(i, "dimensions")?;
                let [k] = k[..] else {
                    return Err(unsupported(i, "more than one dimension"));
                };
                let k = k as usize;
                if k >= a.dims.len() {
                    return Err(unsupported(
                        i,
                        format!("dimension {k} of a {}-D operand", a.dims.len()),
                    ));
                }
                let g = self.groups(i)?;
                let p = g[0].len() as i64;
                let (dims, layout) = array_shape(i)?;
                let mut want = a.dims.clone();
                match op {
                    "all-gather" => want[k] *= p,
                    _ if a.dims[k] % p != 0 => {
                        return Err(unsupported(i, format!("dim {k} does not split in {p}")))
                    }
                    "reduce-scatter" => want[k] /= p,
                    _ => {}
                }
                if want != dims {
                    return Err(unsupported(i, format!("result {dims:?} is not {want:?}")));
                }
                // On the buffer itself when it already is the operand (dim k); else on the view
                // [prod(S[..k]), prod(S[k..])], whose last dim cuts and joins like dim k.
                let (view, d, after) = if self.is_buffer(&a) {
                    (a.dims.clone(), k, want.clone())
                } else {
                    let (l, m) = (size(&a.dims[..k]), size(&a.dims[k..]));
                    let no_view = || unsupported(i, "a 1-D tensor's buffer has no [L, M] view");
                    let view = self.view(l, m).ok_or_else(no_view)?;
                    let after = self
                        .view(l, m * size(&dims) / size(&a.dims))
                        .ok_or_else(no_view)?;
                    (view, self.rank_of_tensor - 1, after)
                };
                let groups = self.rank_groups(&g);
                let step = match op {
                    "all-gather" => Step::AllGather { groups, dim: d },
                    "reduce-scatter" => Step::ReduceScatter {
                        groups,
                        dim: d,
                        op: self.reduce_op(i)?,
                    },
                    _ => Step::AllToAll {
                        groups,
                        split_dim: d,
                        concat_dim: d,
                    },
                };
                let recv = match op {
                    "all-gather" => (p - 1) * size(&a.dims),
                    _ => (p - 1) * size(&a.dims) / p,
                };
                let _ = write_groups(&mut line, &g);
                self.materialize(i, &a, view)?;
                self.steps.push(step);
                self.pshape = after;
                self.recv.iter_mut().for_each(|r| *r += recv);
                Val::Arr(self.fresh(dims, layout))
            }
            "all-to-all" => {
                // Tuple form: operand j goes to member j; result element i came from member i.
                let g = self.groups(i)?;
                let p = g[0].len();
                if ops.len() != p || i.attrs.contains_key("dimensions") {
                    return Err(unsupported(
                        i,
                        format!("{} operands for groups of {p}", ops.len()),
                    ));
                }
                let parts: Vec<Arr> = ops.iter().map(|o| self.data(i, o)).collect::<R<_>>()?;
                let t = size(&parts[0].dims);
                if parts.iter().any(|x| x.dims != parts[0].dims) {
                    return Err(unsupported(i, "operands of different shapes"));
                }
                let joined = Arr {
                    data: parts[0].data,
                    dims: vec![p as i64 * t],
                    layout: vec![0],
                    v: (0..n)
                        .map(|q| parts.iter().flat_map(|x| x.v[q].iter().copied()).collect())
                        .collect(),
                };
                let view = self.view(p as i64, t).ok_or_else(|| {
                    unsupported(i, "a 1-D tensor's buffer has no [members, size] view")
                })?;
                let d = view.len() - 2;
                let _ = write_groups(&mut line, &g);
                self.materialize(i, &joined, view)?;
                self.steps.push(Step::AllToAll {
                    groups: self.rank_groups(&g),
                    split_dim: d,
                    concat_dim: d,
                });
                self.recv.iter_mut().for_each(|r| *r += (p as i64 - 1) * t);
                self.epoch += 1;
                let HloShape::Tuple(shapes) = &i.shape else {
                    return Err(unsupported(i, "the tuple form with an array result"));
                };
                let mut out = Vec::new();
                for (j, s) in shapes.iter().enumerate() {
                    let HloShape::Array { dims, layout, .. } = s else {
                        return Err(unsupported(i, "a nested tuple result"));
                    };
                    if size(dims) != t {
                        return Err(unsupported(i, "result elements of another size"));
                    }
                    let v: Vec<i64> = (0..t).map(|x| j as i64 * t + x).collect();
                    out.push(Val::Arr(Arr {
                        data: Some(self.epoch),
                        dims: dims.clone(),
                        layout: layout.clone(),
                        v: vec![v; n],
                    }));
                }
                Val::Tuple(out)
            }
            "all-reduce" => {
                let a = self.data(i, first)?;
                let g = self.groups(i)?;
                let p = g[0].len() as i64;
                let view = self.view(1, size(&a.dims)).unwrap_or_default();
                let _ = write_groups(&mut line, &g);
                self.materialize(i, &a, view)?;
                let reduce = Step::AllReduce {
                    groups: self.rank_groups(&g),
                    op: self.reduce_op(i)?,
                };
                self.steps.push(reduce);
                let sz = size(&a.dims);
                self.recv
                    .iter_mut()
                    .for_each(|r| *r += (2 * (p - 1) * sz + p - 1) / p); // rounded up, as hlo_collectives counts
                let (dims, layout) = array_shape(i)?;
                Val::Arr(self.fresh(dims, layout))
            }
            "collective-permute" => {
                let a = self.data(i, first)?;
                let t = i
                    .attrs
                    .get("source_target_pairs")
                    .ok_or_else(|| unsupported(i, "no source_target_pairs="))?;
                let pairs = hlo_module::pairs(t).map_err(|m| unsupported(i, m))?;
                let mut target_seen = vec![false; n];
                for &(s, d) in &pairs {
                    if s < 0 || d < 0 || s >= n as i64 || d >= n as i64 {
                        return Err(unsupported(
                            i,
                            format!("pair {{{s},{d}}} on {n} partitions"),
                        ));
                    }
                    if std::mem::replace(&mut target_seen[d as usize], true) {
                        return Err(unsupported(
                            i,
                            format!("partition {d} is the target of two pairs"),
                        ));
                    }
                }
                let view = self.view(1, size(&a.dims)).unwrap_or_default();
                self.materialize(i, &a, view.clone())?;
                let sz = size(&a.dims);
                let messages = pairs
                    .iter()
                    .map(|&(s, d)| {
                        if s != d {
                            self.recv[d as usize] += sz;
                        }
                        Message {
                            src: self.ranks[s as usize],
                            dst: self.ranks[d as usize],
                            src_start: vec![0; view.len()],
                            dst_start: vec![0; view.len()],
                            len: view.clone(),
                        }
                    })
                    .collect();
                line += &format!(" ({} pairs)", pairs.len());
                self.steps.push(Step::SendRecv {
                    shape: view,
                    messages,
                });
                let (dims, layout) = match &i.shape {
                    HloShape::Tuple(s) => match s.get(1) {
                        Some(HloShape::Array { dims, layout, .. }) => {
                            (dims.clone(), layout.clone())
                        }
                        _ => return Err(unsupported(i, "an async result without the output")),
                    },
                    _ => array_shape(i)?,
                };
                Val::Arr(self.fresh(dims, layout))
            }
            _ => return Err(unsupported(i, "not a collective laycert reads")),
        };
        self.collectives.push(line);
        // `*-start` returns (operand, result, ..): `*-done` takes element 1.
        Ok(match (&i.shape, i.opcode.ends_with("-start"), &val) {
            (HloShape::Tuple(_), true, Val::Arr(_)) => Val::Tuple(vec![first.clone(), val]),
            _ => val,
        })
    }

    fn eval_comp(&mut self, name: &str, args: Vec<Val>) -> R<Val> {
        self.depth += 1;
        if self.depth > 64 {
            return Err(XlaError::Mismatch(format!(
                "computation %{name}: calls nested more than 64 deep"
            )));
        }
        let v = self.eval_body(name, args);
        self.depth -= 1;
        v
    }

    fn eval_body(&mut self, name: &str, args: Vec<Val>) -> R<Val> {
        let c = self.module.computations.get(name).ok_or_else(|| {
            XlaError::Mismatch(format!("computation %{name} is not in the module"))
        })?;
        let mut env: BTreeMap<&str, Val> = BTreeMap::new();
        for i in &c.instrs {
            let ops: Vec<Val> = i
                .operands
                .iter()
                .map(|o| {
                    env.get(o.as_str()).cloned().ok_or_else(|| {
                        unsupported(i, format!("operand %{o} is not defined before it"))
                    })
                })
                .collect::<R<_>>()?;
            let v = self.eval(i, &ops, &args)?;
            env.insert(&i.name, v);
        }
        env.remove(c.instrs[c.root].name.as_str())
            .ok_or_else(|| XlaError::Mismatch(format!("%{name} has no root")))
    }

    fn eval(&mut self, i: &Instr, ops: &[Val], args: &[Val]) -> R<Val> {
        let op = i.opcode.as_str();
        // Every result is tracked on every partition: a shape past the bound is refused before
        // anything is allocated for it.
        if shape_elems(&i.shape).saturating_mul(self.n() as i64) > MAX_TRACKED {
            return Err(unsupported(
                i,
                format!("past {MAX_TRACKED} tracked elements"),
            ));
        }
        match op {
            "parameter" => {
                let k: usize = i
                    .literal
                    .trim()
                    .parse()
                    .map_err(|_| unsupported(i, "parameter number"))?;
                let a = args
                    .get(k)
                    .cloned()
                    .ok_or_else(|| unsupported(i, format!("parameter {k} of {}", args.len())))?;
                if let (Val::Arr(a), HloShape::Array { dims, layout, .. }) = (&a, &i.shape) {
                    if &a.dims != dims {
                        return Err(unsupported(
                            i,
                            format!("parameter {dims:?} bound to {:?}", a.dims),
                        ));
                    }
                    return Ok(Val::Arr(Arr {
                        layout: layout.clone(),
                        ..a.clone()
                    }));
                }
                Ok(a)
            }
            "fusion" | "call" => {
                let name = i
                    .attrs
                    .get("calls")
                    .or_else(|| i.attrs.get("to_apply"))
                    .map(|s| s.trim_start_matches('%').to_string())
                    .ok_or_else(|| unsupported(i, "no calls="))?;
                self.eval_comp(&name, ops.to_vec())
            }
            "tuple" => Ok(Val::Tuple(ops.to_vec())),
            "get-tuple-element"
            | "all-gather-done"
            | "collective-permute-done"
            | "all-reduce-done" => {
                let k = if op == "get-tuple-element" {
                    attr_ints(i, "index")?.first().copied().unwrap_or(-1)
                } else {
                    1
                };
                match ops.first() {
                    Some(Val::Tuple(t)) => t
                        .get(k as usize)
                        .cloned()
                        .ok_or_else(|| unsupported(i, format!("element {k} of {}", t.len()))),
                    Some(v) if op != "get-tuple-element" => Ok(v.clone()),
                    _ => Err(unsupported(i, "not a tuple")),
                }
            }
            "all-gather"
            | "all-gather-start"
            | "all-to-all"
            | "reduce-scatter"
            | "all-reduce"
            | "all-reduce-start"
            | "collective-permute"
            | "collective-permute-start" => self.collective(i, ops),
            "partition-id" | "replica-id" | "constant" => {
                let (dims, layout) = array_shape(i)?;
                if op != "constant" && size(&dims) != 1 {
                    return Err(unsupported(i, "an id that is not a scalar"));
                }
                let vals = if op == "constant" {
                    let lit = i.literal.replace("true", "1").replace("false", "0");
                    if lit.contains('.') || lit.contains("nan") || lit.contains("inf") {
                        return Err(unsupported(i, "a non-integer constant"));
                    }
                    let v = hlo_module::ints_in(&lit).map_err(|m| unsupported(i, m))?;
                    if v.len() as i64 != size(&dims) {
                        return Err(unsupported(i, format!("{} values for {dims:?}", v.len())));
                    }
                    vec![v; self.n()]
                } else {
                    // One replica: replica-id is 0 everywhere.
                    (0..self.n() as i64)
                        .map(|p| vec![if op == "replica-id" { 0 } else { p }])
                        .collect()
                };
                check_fits(i, &vals)?;
                Ok(Val::Arr(Arr {
                    data: None,
                    dims,
                    layout,
                    v: vals,
                }))
            }
            _ => self.local(i, ops),
        }
    }

    /// Movement and index arithmetic on one partition's arrays.
    fn local(&mut self, i: &Instr, ops: &[Val]) -> R<Val> {
        let op = i.opcode.as_str();
        // (`eval` has bounded the result's size.)
        let (dims, layout) = array_shape(i)?;
        let a: Vec<Arr> = ops.iter().map(|o| self.arr(i, o)).collect::<R<_>>()?;
        let a0 = a.first().ok_or_else(|| unsupported(i, "no operand"))?;
        // Every index is checked against the operand: text that does not fit is an error.
        let outside = || unsupported(i, "indexes outside its operand");
        let gather = |idx: &dyn Fn(usize, &[i64]) -> i64, src: &Arr| -> R<Vec<Vec<i64>>> {
            (0..src.v.len())
                .map(|p| {
                    (0..size(&dims))
                        .map(|k| {
                            let at = idx(p, &coords(k, &dims));
                            usize::try_from(at)
                                .ok()
                                .and_then(|at| src.v[p].get(at).copied())
                                .ok_or_else(outside)
                        })
                        .collect()
                })
                .collect()
        };
        let st = strides(&a0.dims);
        // -1 for a coordinate outside the operand.
        let lin = |c: &[i64]| {
            let inside = c.len() == a0.dims.len()
                && c.iter().zip(&a0.dims).all(|(&x, &e)| (0..e).contains(&x));
            if inside {
                c.iter().zip(&st).map(|(x, s)| x * s).sum::<i64>()
            } else {
                -1
            }
        };
        let v = match op {
            // A dtype change keeps tensor data's positions: read like copy. An index value's
            // is XLA's conversion into the new type (`arith`).
            "convert" if a0.data.is_none() => return self.arith(i, &a, dims, layout),
            "reshape" | "copy" | "convert" if size(&dims) == size(&a0.dims) => a0.v.clone(),
            "bitcast" if size(&dims) == size(&a0.dims) => {
                let (po, pr) = (
                    physical_order(&a0.dims, &a0.layout),
                    physical_order(&dims, &layout),
                );
                let mut from = vec![0i64; pr.len()];
                for (k, &r) in pr.iter().enumerate() {
                    from[r as usize] = po[k];
                }
                a0.v.iter()
                    .map(|v| from.iter().map(|&f| v[f as usize]).collect())
                    .collect()
            }
            "transpose" => {
                let perm = attr_ints(i, "dimensions")?;
                if perm.len() != dims.len()
                    || perm.iter().any(|&d| d < 0 || d as usize >= a0.dims.len())
                {
                    return Err(unsupported(i, "dimensions is not a permutation"));
                }
                gather(
                    &|_, c| {
                        let mut o = vec![-1; a0.dims.len()];
                        for (k, &d) in perm.iter().enumerate() {
                            o[d as usize] = c[k];
                        }
                        lin(&o)
                    },
                    a0,
                )?
            }
            "broadcast" => {
                let map = attr_ints(i, "dimensions")?;
                if map.len() != a0.dims.len()
                    || map.iter().any(|&d| d < 0 || d as usize >= dims.len())
                {
                    return Err(unsupported(i, "dimensions does not map the operand"));
                }
                gather(
                    &|_, c| lin(&map.iter().map(|&d| c[d as usize]).collect::<Vec<_>>()),
                    a0,
                )?
            }
            "slice" => {
                let t = i
                    .attrs
                    .get("slice")
                    .ok_or_else(|| unsupported(i, "no slice="))?;
                let mut spec = Vec::new();
                for part in t.trim_matches(|c| c == '{' || c == '}').split(',') {
                    let v: Vec<i64> = part
                        .trim()
                        .trim_matches(|c| c == '[' || c == ']')
                        .split(':')
                        .map(|x| x.trim().parse::<i64>())
                        .collect::<Result<_, _>>()
                        .map_err(|_| unsupported(i, format!("slice `{part}`")))?;
                    spec.push((v[0], *v.get(2).unwrap_or(&1)));
                }
                if spec.len() != a0.dims.len()
                    || spec
                        .iter()
                        .zip(&dims)
                        .zip(&a0.dims)
                        .any(|(((s, k), &e), &o)| {
                            *k < 1
                                || *s < 0
                                || (e > 0 && s.saturating_add((e - 1).saturating_mul(*k)) >= o)
                        })
                {
                    return Err(unsupported(i, "slice out of the operand"));
                }
                gather(
                    &|_, c| {
                        lin(&c
                            .iter()
                            .zip(&spec)
                            .map(|(x, (s, k))| s.saturating_add(x.saturating_mul(*k)))
                            .collect::<Vec<_>>())
                    },
                    a0,
                )?
            }
            "dynamic-slice" => {
                let sizes = attr_ints(i, "dynamic_slice_sizes")?;
                if sizes != dims || dims.len() != a0.dims.len() || a.len() != a0.dims.len() + 1 {
                    return Err(unsupported(
                        i,
                        "index operands or sizes do not fit the operand",
                    ));
                }
                let mut starts = Vec::new();
                for x in &a[1..] {
                    if x.data.is_some() || !x.dims.is_empty() {
                        return Err(unsupported(i, "an index that is not a scalar integer"));
                    }
                    starts.push(
                        x.v.iter()
                            .map(|v| {
                                v.first()
                                    .copied()
                                    .ok_or_else(|| unsupported(i, "an index without a value"))
                            })
                            .collect::<R<Vec<_>>>()?,
                    );
                }
                if starts.len() != a0.dims.len() || starts.iter().any(|s| s.len() != a0.v.len()) {
                    return Err(unsupported(
                        i,
                        "index operands over another number of partitions than the operand",
                    ));
                }
                // XLA clamps each start into [0, dim - size].
                let clamp =
                    |p: usize, d: usize| starts[d][p].clamp(0, (a0.dims[d] - sizes[d]).max(0));
                gather(
                    &|p, c| {
                        lin(&c
                            .iter()
                            .enumerate()
                            .map(|(d, x)| x + clamp(p, d))
                            .collect::<Vec<_>>())
                    },
                    a0,
                )?
            }
            "concatenate" => {
                let k = attr_ints(i, "dimensions")?.first().copied().unwrap_or(-1);
                if k < 0
                    || k as usize >= dims.len()
                    || a.iter().any(|x| {
                        x.data != a0.data
                            || x.dims.len() != dims.len()
                            || x.dims
                                .iter()
                                .zip(&dims)
                                .enumerate()
                                .any(|(d, (e, f))| d != k as usize && e != f)
                    })
                {
                    return Err(unsupported(i, "operands that do not concatenate"));
                }
                let k = k as usize;
                let mut offs = vec![0i64];
                for x in &a {
                    offs.push(offs.last().unwrap_or(&0) + x.dims[k]);
                }
                if *offs.last().unwrap_or(&0) != dims[k] {
                    return Err(unsupported(
                        i,
                        "concatenated extents differ from the result",
                    ));
                }
                (0..self.n())
                    .map(|p| {
                        (0..size(&dims))
                            .map(|q| {
                                let mut c = coords(q, &dims);
                                let j = offs
                                    .iter()
                                    .rposition(|&o| o <= c[k])
                                    .unwrap_or(0)
                                    .min(a.len() - 1);
                                c[k] -= offs[j];
                                let s = strides(&a[j].dims);
                                a[j].v[p]
                                    [c.iter().zip(&s).map(|(x, s)| x * s).sum::<i64>() as usize]
                            })
                            .collect()
                    })
                    .collect()
            }
            _ => return self.arith(i, &a, dims, layout),
        };
        if a0.data.is_none() {
            check_fits(i, &v)?;
        }
        Ok(Val::Arr(Arr {
            data: a0.data,
            dims,
            layout,
            v,
        }))
    }

    /// Elementwise integer arithmetic (index computations only), in the result's declared
    /// type as XLA computes it: the exact value reduced into the type's range (`add`,
    /// `subtract`, `multiply`, `negate`, `abs` wrap; `convert` to an integer type wraps, to
    /// `pred` tests for non-zero); a `divide` or `remainder` by zero, or one whose quotient does
    /// not fit (the type's least value by -1), is refused (XLA leaves it implementation-defined).
    fn arith(&self, i: &Instr, a: &[Arr], dims: Vec<i64>, layout: Vec<i64>) -> R<Val> {
        let op = i.opcode.as_str();
        let f: fn(&[i128]) -> Option<i128> = match op {
            "add" => |x| Some(x[0] + x[1]),
            "subtract" => |x| Some(x[0] - x[1]),
            "multiply" => |x| x[0].checked_mul(x[1]),
            "divide" => |x| x[0].checked_div(x[1]),
            "remainder" => |x| x[0].checked_rem(x[1]),
            "maximum" => |x| Some(x[0].max(x[1])),
            "minimum" => |x| Some(x[0].min(x[1])),
            "clamp" => |x| Some(x[1].max(x[0]).min(x[2])),
            "negate" => |x| Some(-x[0]),
            "abs" => |x| Some(x[0].abs()),
            "convert" | "copy" | "reshape" | "bitcast" => |x| Some(x[0]),
            _ => return Err(unsupported(i, "not in the subset laycert reads")),
        };
        if a.iter().any(|x| x.data.is_some()) {
            return Err(unsupported(
                i,
                "computes on tensor data: not a data movement",
            ));
        }
        let t = result_int_type(i)?;
        let on_pred = t.0 == 1
            && !matches!(
                op,
                "convert" | "copy" | "reshape" | "bitcast" | "maximum" | "minimum" | "clamp"
            );
        if on_pred {
            return Err(unsupported(i, "arithmetic on pred"));
        }
        // The exact value into the result's type: the ring operations and `convert` wrap; the
        // others (a quotient, a value moved or chosen) must already fit.
        let into = |x: i128| -> Option<i64> {
            let r = match op {
                "convert" if t.0 == 1 => i128::from(x != 0),
                "add" | "subtract" | "multiply" | "negate" | "abs" | "convert" => wrap(x, t),
                _ => fits(x, t).then_some(x)?,
            };
            i64::try_from(r).ok()
        };
        let arity = match i.opcode.as_str() {
            "clamp" => 3,
            "negate" | "abs" | "convert" | "copy" | "reshape" | "bitcast" => 1,
            _ => 2,
        };
        if a.len() != arity {
            return Err(unsupported(i, format!("{} operands, not {arity}", a.len())));
        }
        if a.iter().any(|x| !x.dims.is_empty() && x.dims != dims) {
            return Err(unsupported(i, "operand shapes differ from the result's"));
        }
        let n = size(&dims);
        let v = (0..self.n())
            .map(|p| {
                (0..n)
                    .map(|k| {
                        let args: Vec<i128> = a
                            .iter()
                            .map(|x| {
                                i128::from(if x.dims.is_empty() {
                                    x.v[p][0]
                                } else {
                                    x.v[p].get(k as usize).copied().unwrap_or(0)
                                })
                            })
                            .collect();
                        f(&args).and_then(into)
                    })
                    .collect::<Option<Vec<i64>>>()
            })
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| {
                unsupported(
                    i,
                    "a division by zero, a quotient or value outside its declared type, or a \
                     u64 value past 2^63",
                )
            })?;
        Ok(Val::Arr(Arr {
            data: None,
            dims,
            layout,
            v,
        }))
    }
}

fn write_groups(line: &mut String, g: &[Vec<i64>]) -> std::fmt::Result {
    use std::fmt::Write as _;
    write!(line, " over {} group(s) of {}", g.len(), g[0].len())
}

/// Reads XLA's compiled SPMD program `text` as a plan from `source` to `target` (the same mesh;
/// the program's parameter is the source's local shard, its result the target's).
pub fn lower_xla(
    text: &str,
    source: &MeshLayout,
    target: &MeshLayout,
) -> Result<XlaPlan, XlaError> {
    let module = hlo_module::parse_module(text)?;
    let mesh = &source.mesh;
    let n = mesh.size();
    if module.num_partitions != n {
        return Err(XlaError::Mismatch(format!(
            "the program runs on {} partitions, the mesh has {n} devices",
            module.num_partitions
        )));
    }
    if !source.is_even() || !target.is_even() {
        return Err(XlaError::Mismatch(
            "an uneven sharding: XLA's programs hold even shards".into(),
        ));
    }
    let local = source.local_shape();
    let mut reader = Reader {
        module: &module,
        ranks: (0..n).map(|p| mesh.device_at(p)).collect(),
        rank_of_tensor: local.len(),
        pshape: local.clone(),
        epoch: 0,
        steps: Vec::new(),
        recv: vec![0; n as usize],
        collectives: Vec::new(),
        depth: 0,
    };
    if size(&local).saturating_mul(n) > MAX_TRACKED {
        return Err(XlaError::Mismatch(format!(
            "past {MAX_TRACKED} tracked elements"
        )));
    }
    let param = Val::Arr(Arr {
        data: Some(0),
        dims: local.clone(),
        layout: (0..local.len() as i64).rev().collect(),
        v: vec![(0..size(&local)).collect(); n as usize],
    });
    let entry = module.entry.clone();
    let root = reader.eval_comp(&entry, vec![param])?;
    let c = &module.computations[&entry];
    let ri = &c.instrs[c.root];
    let out = reader.data(ri, &root)?;
    let want = target.local_shape();
    if out.dims != want {
        return Err(XlaError::Mismatch(format!(
            "the program returns {:?} per device, the target's shard is {want:?}",
            out.dims
        )));
    }
    reader.materialize(ri, &out, want)?;
    let mut recv = vec![0; n as usize];
    for (p, r) in reader.recv.iter().enumerate() {
        recv[reader.ranks[p] as usize] = *r;
    }
    Ok(XlaPlan {
        plan: Plan {
            ranks: n,
            steps: reader.steps,
        },
        recv_elems: recv,
        collectives: reader.collectives,
    })
}
