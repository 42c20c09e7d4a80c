//! Runs a certified redistribution plan on this machine's GPU through `cudarc`: the CUDA
//! driver, NVRTC and NCCL, each loaded dynamically (a missing library is a `SKIP` value, not a
//! panic). One GPU holds every rank's buffer (the ranks are emulated: each collective is the
//! device copies and reductions its definition names), the local pack/unpack steps and the box
//! copies run the NCCL program's own kernels (`nccl_kernels.cu`, the text `laycert dist gen`
//! emits, compiled by NVRTC), and a one-rank NCCL communicator all-reduces a buffer, which
//! must come back unchanged, to show NCCL loads and runs with NVLink multicast off
//! (`NCCL_NVLS_ENABLE=0`). Every place of every rank's target block is then compared with the
//! value the plan must leave there (`element id + 1`, times the addend count of a summed
//! partial source), as the emitted program does.
//!
//! The interpreter is written once over [`Mem`]; [`run_on_host`] runs it on host vectors, so
//! its reading of every step is tested without a GPU.
//!
//! ```
//! use codegen::nccl_run::run_on_host;
//! use layout::mesh::Mesh;
//! use layout::notation::dtensor::{parse_placements, to_layout};
//! use solver::dist::{plan, PlanOptions};
//!
//! let mesh = Mesh::parse("dp=2,tp=3").unwrap();
//! let at = |p: &str| to_layout(&mesh, &[13, 7], &parse_placements(p).unwrap()).unwrap();
//! let (src, dst) = (at("[Shard(0), Shard(1)]"), at("[Shard(1), Shard(0)]"));
//! let p = plan(&src, &dst, &PlanOptions::default()).unwrap();
//! let r = run_on_host(&p.plan, &src, &dst)?;
//! assert_eq!((r.places_checked, r.wrong), (91, 0));
//! # Ok::<(), codegen::CodegenError>(())
//! ```

use certify::dist::{Plan, Step};
use layout::mesh::{MeshLayout, ReduceOp};

use crate::error::CodegenError;

/// What a run found.
#[derive(Clone, Debug, PartialEq)]
pub struct NcclRunReport {
    /// The device (`host` for [`run_on_host`]).
    pub device: String,
    /// Ranks emulated.
    pub ranks: i64,
    /// Steps run.
    pub steps: usize,
    /// Target places compared (none for a partial target, whose values the certificate decides).
    pub places_checked: u64,
    /// Places holding another value than the plan must leave there.
    pub wrong: u64,
    /// The first wrong place: rank, element id, value held, value wanted.
    pub first_wrong: Option<(i64, i64, f64, f64)>,
    /// What the one-rank NCCL run showed (empty on the host).
    pub nccl: String,
}

type R<T> = Result<T, CodegenError>;

fn bad(m: String) -> CodegenError {
    CodegenError::Validation(format!("plan run: {m}"))
}

fn numel(s: &[i64]) -> i64 {
    s.iter().product()
}

fn strides(s: &[i64]) -> Vec<i64> {
    let mut r = vec![0; s.len()];
    let mut a = 1;
    for d in (0..s.len()).rev() {
        r[d] = a;
        a *= s[d];
    }
    r
}

/// The device memory the interpreter needs: buffers of doubles and four kernels.
pub trait Mem {
    /// A buffer.
    type Buf: Clone;
    /// A zeroed buffer of `n` doubles.
    fn zeros(&mut self, n: i64) -> R<Self::Buf>;
    /// A buffer holding `h`.
    fn upload(&mut self, h: &[f64]) -> R<Self::Buf>;
    /// The buffer's contents.
    fn download(&mut self, b: &Self::Buf) -> R<Vec<f64>>;
    /// `dst[dst_start + c] = src[src_start + c]` for every `c` in the box `len` (row-major
    /// buffers of shapes `dst_shape` and `src_shape`).
    #[allow(clippy::too_many_arguments)]
    fn copy_box(
        &mut self,
        dst: &mut Self::Buf,
        dst_shape: &[i64],
        dst_start: &[i64],
        src: &Self::Buf,
        src_shape: &[i64],
        src_start: &[i64],
        len: &[i64],
    ) -> R<()>;
    /// `acc = op(acc, x)` elementwise over `n` values (a sum for sum and avg).
    fn reduce(&mut self, acc: &mut Self::Buf, x: &Self::Buf, n: i64, op: ReduceOp) -> R<()>;
    /// A new buffer of `shape`: at `i`, `src[sum_d maps[d][i_d] * stride_d]`, 0 where a map
    /// entry is -1.
    fn gather(
        &mut self,
        src: &Self::Buf,
        src_shape: &[i64],
        shape: &[i64],
        maps: &[Vec<i64>],
    ) -> R<Self::Buf>;
    /// Every one of `n` values divided by `p` (avg).
    fn divide(&mut self, b: &mut Self::Buf, n: i64, p: f64) -> R<()>;
    /// Most cells the ranks' buffers may hold after any step (checked before the run), if
    /// bounded.
    fn max_cells(&self) -> Option<i64> {
        None
    }
}

#[derive(Clone)]
struct Held<B> {
    shape: Vec<i64>,
    buf: B,
}

/// Places of `rank`'s pieces of `l`: (local flat index, global element id).
fn places(l: &MeshLayout, rank: i64) -> Vec<(i64, i64)> {
    let (ls, gs) = (strides(&l.local_shape()), strides(&l.shape));
    let mut out = Vec::new();
    for (block, at) in l.pieces(rank) {
        let ext: Vec<i64> = block.iter().map(|(a, b)| (b - a).max(0)).collect();
        out.extend((0..numel(&ext)).map(|k| {
            let (mut rest, mut loc, mut glob) = (k, 0, 0);
            for d in (0..ext.len()).rev() {
                let c = rest % ext[d];
                rest /= ext[d];
                loc += (at[d] + c) * ls[d];
                glob += (block[d].0 + c) * gs[d];
            }
            (loc, glob)
        }));
    }
    out
}

fn zeros_at(nd: usize, d: usize, v: i64) -> Vec<i64> {
    let mut z = vec![0; nd];
    z[d] = v;
    z
}

/// Runs `plan` from `source` with every rank on `m` and compares with `target`.
pub fn run_with<M: Mem>(
    m: &mut M,
    plan: &Plan,
    source: &MeshLayout,
    target: &MeshLayout,
    device: &str,
) -> R<NcclRunReport> {
    let ranks = plan.ranks;
    if ranks != source.mesh.size() || ranks != target.mesh.size() {
        return Err(bad(format!(
            "the plan is for {ranks} ranks; the layouts' meshes have {} and {}",
            source.mesh.size(),
            target.mesh.size()
        )));
    }
    let local = source.local_shape();
    if let Some(limit) = m.max_cells() {
        cells_fit(plan, &local, limit)?;
    }
    let mut bufs: Vec<Held<M::Buf>> = Vec::new();
    for r in 0..ranks {
        let mut h = vec![0.0; numel(&local) as usize];
        for (loc, g) in places(source, r) {
            h[loc as usize] = (g + 1) as f64;
        }
        bufs.push(Held {
            shape: local.clone(),
            buf: m.upload(&h)?,
        });
    }
    for (k, step) in plan.steps.iter().enumerate() {
        run_step(m, &mut bufs, step, ranks)
            .map_err(|e| bad(format!("step {k} ({}): {e}", step.name())))?;
    }
    // The check: every place of the target holds (id + 1) times the addend count of a summed
    // partial source; for a summed partial target, the places of one value over the devices
    // that differ only in the partial axes add up to that.
    let sum = !source.partial.is_empty() && source.partial.values().all(|&o| o == ReduceOp::Sum);
    let mult = if sum { source.addends() } else { 1 } as f64;
    let want_local = target.local_shape();
    let sum_target =
        !target.partial.is_empty() && target.partial.values().all(|&o| o == ReduceOp::Sum);
    let mut sums: std::collections::BTreeMap<(i64, i64), (f64, i64)> = Default::default();
    let mut report = NcclRunReport {
        device: device.to_string(),
        ranks,
        steps: plan.steps.len(),
        places_checked: 0,
        wrong: 0,
        first_wrong: None,
        nccl: String::new(),
    };
    for (r, b) in bufs.iter().enumerate() {
        if b.shape != want_local {
            return Err(bad(format!(
                "rank {r} ends with a buffer of shape {:?}; the target's local shape is {want_local:?}",
                b.shape
            )));
        }
        if !target.partial.is_empty() && !sum_target {
            continue;
        }
        let h = m.download(&b.buf)?;
        for (loc, g) in places(target, r as i64) {
            report.places_checked += 1;
            if sum_target {
                // A summed partial target: the places of one value over its group add up.
                let key = (target.addend_group(r as i64), g);
                let e = sums.entry(key).or_insert((0.0, r as i64));
                e.0 += h[loc as usize];
                continue;
            }
            let (got, want) = (h[loc as usize], (g + 1) as f64 * mult);
            if got != want {
                report.wrong += 1;
                report.first_wrong.get_or_insert((r as i64, g, got, want));
            }
        }
    }
    for ((_, g), (got, r)) in sums {
        let want = (g + 1) as f64 * mult;
        if got != want {
            report.wrong += 1;
            report.first_wrong.get_or_insert((r, g, got, want));
        }
    }
    Ok(report)
}

fn groups_ok(groups: &[Vec<i64>], ranks: i64) -> R<()> {
    if groups
        .iter()
        .any(|g| g.is_empty() || g.iter().any(|&r| !(0..ranks).contains(&r)))
    {
        return Err(bad("a group with no rank or a rank outside the plan".into()));
    }
    Ok(())
}

fn shape_of<B>(bufs: &[Held<B>], g: &[i64]) -> R<Vec<i64>> {
    let s = &bufs[g[0] as usize].shape;
    if g.iter().any(|&r| &bufs[r as usize].shape != s) {
        return Err(bad("a group's buffers differ in shape".into()));
    }
    Ok(s.clone())
}

fn piece_of(sh: &[i64], d: usize, p: i64) -> R<Vec<i64>> {
    if d >= sh.len() || sh[d] % p != 0 {
        return Err(bad(format!("dim {d} of {sh:?} does not split in {p}")));
    }
    let mut piece = sh.to_vec();
    piece[d] /= p;
    Ok(piece)
}

fn run_step<M: Mem>(m: &mut M, bufs: &mut [Held<M::Buf>], step: &Step, ranks: i64) -> R<()> {
    match step {
        Step::AllGather { groups, dim } => {
            groups_ok(groups, ranks)?;
            for g in groups {
                let sh = shape_of(bufs, g)?;
                if *dim >= sh.len() {
                    return Err(bad(format!("dim {dim} of {sh:?}")));
                }
                let mut ns = sh.clone();
                ns[*dim] *= g.len() as i64;
                let mut out = m.zeros(numel(&ns))?;
                let nd = sh.len();
                for (j, &r) in g.iter().enumerate() {
                    let src = bufs[r as usize].buf.clone();
                    let to = zeros_at(nd, *dim, j as i64 * sh[*dim]);
                    m.copy_box(&mut out, &ns, &to, &src, &sh, &vec![0; nd], &sh)?;
                }
                for &r in g {
                    bufs[r as usize] = Held {
                        shape: ns.clone(),
                        buf: out.clone(),
                    };
                }
            }
        }
        Step::ReduceScatter { groups, op, .. } | Step::AllReduce { groups, op } => {
            groups_ok(groups, ranks)?;
            let scatter = match step {
                Step::ReduceScatter { dim, .. } => Some(*dim),
                _ => None,
            };
            for g in groups {
                let sh = shape_of(bufs, g)?;
                let n = numel(&sh);
                let first = bufs[g[0] as usize].buf.clone();
                let mut acc = m.zeros(n)?;
                m.copy_box(&mut acc, &[n], &[0], &first, &[n], &[0], &[n])?;
                for &r in &g[1..] {
                    let x = bufs[r as usize].buf.clone();
                    m.reduce(&mut acc, &x, n, *op)?;
                }
                if *op == ReduceOp::Avg {
                    m.divide(&mut acc, n, g.len() as f64)?;
                }
                let p = g.len() as i64;
                for (j, &r) in g.iter().enumerate() {
                    bufs[r as usize] = match scatter {
                        None => Held {
                            shape: sh.clone(),
                            buf: acc.clone(),
                        },
                        Some(d) => {
                            let piece = piece_of(&sh, d, p)?;
                            let mut out = m.zeros(numel(&piece))?;
                            let from = zeros_at(sh.len(), d, j as i64 * piece[d]);
                            m.copy_box(
                                &mut out,
                                &piece,
                                &vec![0; sh.len()],
                                &acc,
                                &sh,
                                &from,
                                &piece,
                            )?;
                            Held {
                                shape: piece,
                                buf: out,
                            }
                        }
                    };
                }
            }
        }
        Step::AllToAll {
            groups,
            split_dim,
            concat_dim,
        } => {
            groups_ok(groups, ranks)?;
            for g in groups {
                let sh = shape_of(bufs, g)?;
                let p = g.len() as i64;
                let piece = piece_of(&sh, *split_dim, p)?;
                if *concat_dim >= sh.len() {
                    return Err(bad(format!("dim {concat_dim} of {sh:?}")));
                }
                let mut ns = piece.clone();
                ns[*concat_dim] *= p;
                let nd = sh.len();
                let old: Vec<M::Buf> = g.iter().map(|&r| bufs[r as usize].buf.clone()).collect();
                for (j, &r) in g.iter().enumerate() {
                    // member j receives piece j of every member i, concatenated in member order
                    let mut out = m.zeros(numel(&ns))?;
                    for (i, src) in old.iter().enumerate() {
                        let from = zeros_at(nd, *split_dim, j as i64 * piece[*split_dim]);
                        let to = zeros_at(nd, *concat_dim, i as i64 * piece[*concat_dim]);
                        m.copy_box(&mut out, &ns, &to, src, &sh, &from, &piece)?;
                    }
                    bufs[r as usize] = Held {
                        shape: ns.clone(),
                        buf: out,
                    };
                }
            }
        }
        Step::Broadcast { groups, root } => {
            groups_ok(groups, ranks)?;
            for g in groups {
                let src = g
                    .get(*root)
                    .map(|&r| bufs[r as usize].clone())
                    .ok_or_else(|| bad(format!("root {root} of a group of {}", g.len())))?;
                for &r in g {
                    bufs[r as usize] = src.clone();
                }
            }
        }
        Step::SendRecv { shape, messages } => {
            let nd = shape.len();
            let mut next: Vec<M::Buf> = (0..ranks)
                .map(|_| m.zeros(numel(shape)))
                .collect::<R<_>>()?;
            for msg in messages {
                let (s, d) = (msg.src, msg.dst);
                if !(0..ranks).contains(&s) || !(0..ranks).contains(&d) {
                    return Err(bad(format!("message {s} -> {d} outside the plan")));
                }
                let src = &bufs[s as usize];
                let inside = |start: &[i64], sh: &[i64]| {
                    start.len() == nd
                        && sh.len() == nd
                        && (0..nd).all(|x| {
                            msg.len[x] >= 0 && start[x] >= 0 && start[x] + msg.len[x] <= sh[x]
                        })
                };
                if msg.len.len() != nd
                    || !inside(&msg.src_start, &src.shape)
                    || !inside(&msg.dst_start, shape)
                {
                    return Err(bad(format!("message {s} -> {d} box out of bounds")));
                }
                let sb = src.buf.clone();
                let ss = src.shape.clone();
                m.copy_box(
                    &mut next[d as usize],
                    shape,
                    &msg.dst_start,
                    &sb,
                    &ss,
                    &msg.src_start,
                    &msg.len,
                )?;
            }
            for (r, b) in next.into_iter().enumerate() {
                bufs[r] = Held {
                    shape: shape.clone(),
                    buf: b,
                };
            }
        }
        Step::Local { shape, maps } => {
            if maps.len() as i64 != ranks {
                return Err(bad(format!("{} rank maps for {ranks} ranks", maps.len())));
            }
            for (r, map) in maps.iter().enumerate() {
                let old = &bufs[r];
                let ok = map.len() == shape.len()
                    && old.shape.len() == shape.len()
                    && map.iter().enumerate().all(|(d, v)| {
                        v.len() as i64 == shape[d]
                            && v.iter().all(|&x| x == -1 || (0..old.shape[d]).contains(&x))
                    });
                if !ok {
                    return Err(bad(format!("rank {r}'s map does not fit its buffer")));
                }
                let out = m.gather(&old.buf.clone(), &old.shape.clone(), shape, map)?;
                bufs[r] = Held {
                    shape: shape.clone(),
                    buf: out,
                };
            }
        }
        Step::Zero { ranks: zs } => {
            for &r in zs {
                if !(0..ranks).contains(&r) {
                    return Err(bad(format!("rank {r} outside the plan")));
                }
                let n = numel(&bufs[r as usize].shape);
                bufs[r as usize].buf = m.zeros(n)?;
            }
        }
    }
    Ok(())
}

/// Refuses a plan whose buffers, over all ranks, hold more than `limit` cells after any step
/// (from the source's `local` shape, by the steps' shapes alone, before anything is allocated).
fn cells_fit(plan: &Plan, local: &[i64], limit: i64) -> R<()> {
    let cells = |s: &[i64]| s.iter().fold(1i64, |a, &e| a.saturating_mul(e.max(0)));
    let mut shapes = vec![local.to_vec(); plan.ranks.max(0) as usize];
    let resize = |shapes: &mut [Vec<i64>], groups: &[Vec<i64>], f: &dyn Fn(&mut Vec<i64>, i64)| {
        for g in groups {
            for &r in g {
                if let Some(s) = usize::try_from(r).ok().and_then(|r| shapes.get_mut(r)) {
                    f(s, g.len() as i64);
                }
            }
        }
    };
    let at = |s: &mut Vec<i64>, d: usize, f: &dyn Fn(i64) -> i64| {
        if let Some(x) = s.get_mut(d) {
            *x = f(*x);
        }
    };
    let held = |shapes: &[Vec<i64>], when: String| -> R<()> {
        let total = shapes.iter().fold(0i64, |a, s| a.saturating_add(cells(s)));
        if total > limit {
            return Err(CodegenError::TooLarge(format!(
                "the {} ranks' buffers would hold {total} cells {when}; the host interpreter, \
                 like the plan simulator (`dist sim`), holds at most {limit}",
                plan.ranks
            )));
        }
        Ok(())
    };
    held(&shapes, "at the start".into())?;
    for (k, step) in plan.steps.iter().enumerate() {
        match step {
            Step::AllGather { groups, dim } => resize(&mut shapes, groups, &|s, p| {
                at(s, *dim, &|x| x.saturating_mul(p))
            }),
            Step::ReduceScatter { groups, dim, .. } => {
                resize(&mut shapes, groups, &|s, p| at(s, *dim, &|x| x / p.max(1)))
            }
            Step::AllToAll {
                groups,
                split_dim,
                concat_dim,
            } => resize(&mut shapes, groups, &|s, p| {
                at(s, *split_dim, &|x| x / p.max(1));
                at(s, *concat_dim, &|x| x.saturating_mul(p));
            }),
            Step::SendRecv { shape, .. } | Step::Local { shape, .. } => {
                shapes.iter_mut().for_each(|s| *s = shape.clone())
            }
            Step::AllReduce { .. } | Step::Broadcast { .. } | Step::Zero { .. } => {}
        }
        held(&shapes, format!("after step {k} ({})", step.name()))?;
    }
    Ok(())
}

/// Host memory: the interpreter's reference backend (its steps are tested without a GPU).
/// It holds at most [`certify::dist::simulate::MAX_CELLS`] cells, as the plan simulator does.
pub struct HostMem;

impl Mem for HostMem {
    type Buf = std::rc::Rc<Vec<f64>>;
    fn max_cells(&self) -> Option<i64> {
        Some(certify::dist::simulate::MAX_CELLS)
    }
    fn zeros(&mut self, n: i64) -> R<Self::Buf> {
        Ok(std::rc::Rc::new(vec![0.0; n.max(0) as usize]))
    }
    fn upload(&mut self, h: &[f64]) -> R<Self::Buf> {
        Ok(std::rc::Rc::new(h.to_vec()))
    }
    fn download(&mut self, b: &Self::Buf) -> R<Vec<f64>> {
        Ok(b.as_ref().clone())
    }
    fn copy_box(
        &mut self,
        dst: &mut Self::Buf,
        dst_shape: &[i64],
        dst_start: &[i64],
        src: &Self::Buf,
        src_shape: &[i64],
        src_start: &[i64],
        len: &[i64],
    ) -> R<()> {
        let (ds, ss) = (strides(dst_shape), strides(src_shape));
        let out = std::rc::Rc::make_mut(dst);
        for k in 0..numel(len) {
            let (mut rest, mut so, mut dof) = (k, 0, 0);
            for d in (0..len.len()).rev() {
                let c = rest % len[d];
                rest /= len[d];
                so += (src_start[d] + c) * ss[d];
                dof += (dst_start[d] + c) * ds[d];
            }
            out[dof as usize] = src[so as usize];
        }
        Ok(())
    }
    fn reduce(&mut self, acc: &mut Self::Buf, x: &Self::Buf, n: i64, op: ReduceOp) -> R<()> {
        let a = std::rc::Rc::make_mut(acc);
        for i in 0..n as usize {
            a[i] = match op {
                ReduceOp::Max => a[i].max(x[i]),
                ReduceOp::Min => a[i].min(x[i]),
                ReduceOp::Sum | ReduceOp::Avg => a[i] + x[i],
            };
        }
        Ok(())
    }
    fn gather(
        &mut self,
        src: &Self::Buf,
        src_shape: &[i64],
        shape: &[i64],
        maps: &[Vec<i64>],
    ) -> R<Self::Buf> {
        let ss = strides(src_shape);
        let out = (0..numel(shape))
            .map(|i| {
                let (mut rest, mut off) = (i, 0);
                for d in (0..shape.len()).rev() {
                    let c = rest % shape[d];
                    rest /= shape[d];
                    let o = maps[d][c as usize];
                    if o < 0 {
                        return 0.0;
                    }
                    off += o * ss[d];
                }
                src[off as usize]
            })
            .collect();
        Ok(std::rc::Rc::new(out))
    }
    fn divide(&mut self, b: &mut Self::Buf, n: i64, p: f64) -> R<()> {
        for x in std::rc::Rc::make_mut(b).iter_mut().take(n as usize) {
            *x /= p;
        }
        Ok(())
    }
}

/// Runs the plan on host memory (the interpreter's reference; no GPU).
pub fn run_on_host(plan: &Plan, source: &MeshLayout, target: &MeshLayout) -> R<NcclRunReport> {
    run_with(&mut HostMem, plan, source, target, "host")
}

#[repr(C)]
#[derive(Clone, Copy)]
struct D8 {
    v: [i64; 8],
}

// SAFETY: a plain C struct of eight 64-bit integers, as the kernels declare it.
unsafe impl cudarc::driver::DeviceRepr for D8 {}

fn d8(x: &[i64]) -> D8 {
    let mut v = [0; 8];
    v[..x.len()].copy_from_slice(x);
    D8 { v }
}

fn blocks(n: i64) -> cudarc::driver::LaunchConfig {
    cudarc::driver::LaunchConfig {
        grid_dim: (((n + 255) / 256).max(1) as u32, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    }
}

fn driver<T>(what: &str, r: Result<T, cudarc::driver::DriverError>) -> R<T> {
    r.map_err(|e| CodegenError::Driver(format!("{what}: {e}")))
}

/// GPU memory through cudarc, with the NCCL program's kernels.
pub struct CudaMem {
    stream: std::sync::Arc<cudarc::driver::CudaStream>,
    boxf: cudarc::driver::CudaFunction,
    reducef: cudarc::driver::CudaFunction,
    localf: cudarc::driver::CudaFunction,
}

type DBuf = std::sync::Arc<cudarc::driver::CudaSlice<f64>>;

impl Mem for CudaMem {
    type Buf = DBuf;
    fn zeros(&mut self, n: i64) -> R<DBuf> {
        Ok(std::sync::Arc::new(driver(
            "alloc",
            self.stream.alloc_zeros::<f64>(n.max(1) as usize),
        )?))
    }
    fn upload(&mut self, h: &[f64]) -> R<DBuf> {
        let h = if h.is_empty() { &[0.0][..] } else { h };
        Ok(std::sync::Arc::new(driver(
            "upload",
            self.stream.clone_htod(h),
        )?))
    }
    fn download(&mut self, b: &DBuf) -> R<Vec<f64>> {
        driver("download", self.stream.clone_dtoh(b.as_ref()))
    }
    fn copy_box(
        &mut self,
        dst: &mut DBuf,
        dst_shape: &[i64],
        dst_start: &[i64],
        src: &DBuf,
        src_shape: &[i64],
        src_start: &[i64],
        len: &[i64],
    ) -> R<()> {
        use cudarc::driver::PushKernelArg;
        let n = numel(len);
        if n == 0 {
            return Ok(());
        }
        if len.len() > 8 {
            return Err(bad(format!("{} dims (the kernels take 8)", len.len())));
        }
        let nd = len.len() as i32;
        let (l, ss, s0, ds, d0) = (
            d8(len),
            d8(&strides(src_shape)),
            d8(src_start),
            d8(&strides(dst_shape)),
            d8(dst_start),
        );
        let out = std::sync::Arc::make_mut(dst);
        let mut a = self.stream.launch_builder(&self.boxf);
        a.arg(out)
            .arg(src.as_ref())
            .arg(&n)
            .arg(&nd)
            .arg(&l)
            .arg(&ss)
            .arg(&s0)
            .arg(&ds)
            .arg(&d0);
        // SAFETY: every offset the kernel forms lies inside the boxes checked by the caller
        // (the interpreter bounds every message and piece against its buffer's shape).
        driver("launch laycert_box", unsafe { a.launch(blocks(n)) }).map(|_| ())
    }
    fn reduce(&mut self, acc: &mut DBuf, x: &DBuf, n: i64, op: ReduceOp) -> R<()> {
        use cudarc::driver::PushKernelArg;
        // the kernels' codes: 0 sum (and avg, divided after), 2 max, 3 min
        let code: i32 = match op {
            ReduceOp::Sum | ReduceOp::Avg => 0,
            ReduceOp::Max => 2,
            ReduceOp::Min => 3,
        };
        let out = std::sync::Arc::make_mut(acc);
        let mut a = self.stream.launch_builder(&self.reducef);
        a.arg(out).arg(x.as_ref()).arg(&n).arg(&code);
        // SAFETY: both buffers hold at least n values (one group's buffers share a shape).
        driver("launch laycert_reduce", unsafe { a.launch(blocks(n)) }).map(|_| ())
    }
    fn gather(
        &mut self,
        src: &DBuf,
        src_shape: &[i64],
        shape: &[i64],
        maps: &[Vec<i64>],
    ) -> R<DBuf> {
        use cudarc::driver::PushKernelArg;
        let n = numel(shape);
        let mut out = self.zeros(n)?;
        if n == 0 {
            return Ok(out);
        }
        if shape.len() > 8 {
            return Err(bad(format!("{} dims (the kernels take 8)", shape.len())));
        }
        let flat: Vec<i64> = maps.iter().flatten().copied().collect();
        let mut off = Vec::new();
        let mut o = 0;
        for m in maps {
            off.push(o);
            o += m.len() as i64;
        }
        let dm = driver(
            "upload maps",
            self.stream
                .clone_htod(if flat.is_empty() { &[0][..] } else { &flat }),
        )?;
        let nd = shape.len() as i32;
        let (sh, st, mo) = (d8(shape), d8(&strides(src_shape)), d8(&off));
        let o = std::sync::Arc::make_mut(&mut out);
        let mut a = self.stream.launch_builder(&self.localf);
        a.arg(o)
            .arg(src.as_ref())
            .arg(&n)
            .arg(&nd)
            .arg(&sh)
            .arg(&st)
            .arg(&dm)
            .arg(&mo);
        // SAFETY: every map entry is -1 or inside the source's dim (checked by the caller).
        driver("launch laycert_local", unsafe { a.launch(blocks(n)) })?;
        Ok(out)
    }
    fn divide(&mut self, b: &mut DBuf, n: i64, p: f64) -> R<()> {
        let mut h = self.download(b)?;
        for x in h.iter_mut().take(n as usize) {
            *x /= p;
        }
        *b = self.upload(&h)?;
        Ok(())
    }
}

/// The NCCL program's kernels (box copy, elementwise reduction, table gather).
pub const KERNELS: &str = include_str!("nccl_kernels.cu");

/// Runs the certified plan on GPU 0 (every rank's buffers there), then all-reduces one buffer
/// through a one-rank NCCL communicator (cudarc's bindings, NCCL loaded dynamically, NVLS off).
/// No CUDA device or NVRTC: [`CodegenError::NoCudaDevice`] / [`CodegenError::NoNvrtc`].
pub fn run_on_gpu(plan: &Plan, source: &MeshLayout, target: &MeshLayout) -> R<NcclRunReport> {
    crate::runner::probe_device()?;
    let opts = cudarc::nvrtc::CompileOptions {
        arch: Some("compute_80"),
        name: Some("nccl_kernels.cu".into()),
        ..Default::default()
    };
    // C linkage, so the module's functions carry the kernels' own names.
    let ptx =
        cudarc::nvrtc::compile_ptx_with_opts(format!("extern \"C\" {{\n{KERNELS}\n}}\n"), opts)
            .map_err(|e| CodegenError::Compile(format!("{e:?}")))?;
    let ctx = driver("context", cudarc::driver::CudaContext::new(0))?;
    let stream = ctx.default_stream();
    let module = driver("load module", ctx.load_module(ptx))?;
    let mut mem = CudaMem {
        stream: stream.clone(),
        boxf: driver("load laycert_box", module.load_function("laycert_box"))?,
        reducef: driver(
            "load laycert_reduce",
            module.load_function("laycert_reduce"),
        )?,
        localf: driver("load laycert_local", module.load_function("laycert_local"))?,
    };
    let name = driver("name", ctx.name())?;
    let mut report = run_with(&mut mem, plan, source, target, &name)?;
    driver("synchronize", stream.synchronize())?;
    report.nccl = nccl_one_rank(&stream)?;
    Ok(report)
}

/// A one-rank NCCL all-reduce of [1, 2, 3, 4] through cudarc: it must come back unchanged.
fn nccl_one_rank(stream: &std::sync::Arc<cudarc::driver::CudaStream>) -> R<String> {
    // No NVLink multicast: set before any communicator exists.
    std::env::set_var("NCCL_NVLS_ENABLE", "0");
    // SAFETY: only tries to dlopen the library by its candidate names.
    if !unsafe { cudarc::nccl::sys::is_culib_present() } {
        return Ok("NCCL not loaded (no libnccl.so on the library path)".into());
    }
    let nccl = |what: &str, e: cudarc::nccl::result::NcclError| {
        CodegenError::Driver(format!("NCCL {what}: {e:?}"))
    };
    let comms = cudarc::nccl::safe::Comm::from_devices(vec![stream.clone()])
        .map_err(|e| nccl("init", e))?;
    let want = [1.0f64, 2.0, 3.0, 4.0];
    let mut t = driver("upload", stream.clone_htod(&want))?;
    comms[0]
        .all_reduce_in_place(&mut t, &cudarc::nccl::safe::ReduceOp::Sum)
        .map_err(|e| nccl("all-reduce", e))?;
    driver("synchronize", stream.synchronize())?;
    let got = driver("download", stream.clone_dtoh(&t))?;
    if got != want {
        return Err(CodegenError::Driver(format!(
            "NCCL: a one-rank all-reduce changed [1, 2, 3, 4] into {got:?}"
        )));
    }
    Ok("one-rank all-reduce through cudarc ok (NCCL_NVLS_ENABLE=0)".into())
}
