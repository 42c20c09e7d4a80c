//! Device meshes and distributed (mesh) layouts: which device holds which element of a tensor.
//!
//! A [`Mesh`] is a named tuple of axes with extents, `dp=2,tp=4`; its devices are numbered
//! row-major (`rank = dp*4 + tp`), as DTensor's `init_device_mesh` and JAX's `Mesh` over
//! `np.arange(n).reshape(shape)` number them. A mesh built from another arrangement of the ranks
//! (DTensor's `DeviceMesh("cuda", [[0, 2], [1, 3]])`, JAX's `Mesh` over permuted devices) carries
//! its *device order*: the rank at each row-major mesh position, `dp=2,tp=2 devices=[0,2,1,3]`
//! (rank 2 sits at dp 0, tp 1). Coordinates, groups and blocks follow it, so every plan and
//! certificate speaks of the real ranks.
//!
//! A [`MeshLayout`] says, for every tensor dim `d`, which mesh axes cut it and in which order
//! (`dims[d]`, a list of *levels*, outermost first). A level is a list of mesh axes read as one
//! mixed-radix coordinate (first axis major); it cuts the piece it is given by torch.chunk's rule
//! into `K` = product of its extents pieces of `c = ceil(n/K)`: piece `j` is
//! `[j*c, min((j+1)*c, n))`, EMPTY when `j*c >= n` (5 over 4 gives 2,2,1,0). The next level cuts
//! each piece again. DTensor's `[Shard(0), Shard(0)]` is two levels of one axis each (nested);
//! JAX's `P(('dp','tp'))` is one level of two axes (flat); both agree when the sizes divide.
//! Mesh axes that cut no dim are either *replicated* (each coordinate holds a copy) or *partial*
//! (`partial[a] = op`: the devices that differ only in `a` each hold one addend and the value is
//! their reduction, each addend exactly once). A *maximal* layout lives on one device only.
//!
//! Each device's part is a box (one interval per tensor dim); its local buffer is that box,
//! stored row-major at the origin of a buffer of the layout's *padded local shape* (per dim the
//! chain `c_0 = n`, `c_i = ceil(c_{i-1}/K_i)`, the largest piece any device gets). Places outside
//! the box are padding: no claim speaks of them. The one exception is a dim cut by DTensor's
//! `_StridedShard` where its split is not a nest of chunks ([`MeshLayout::strided`]): there a
//! device holds runs of that dim one after the other in its buffer, so its part is a list of
//! boxes, each at its local corner ([`MeshLayout::pieces`]); [`MeshLayout::block`] is for the
//! boxed layouts ([`MeshLayout::is_boxed`]).
//!
//! Worked vector (spec/distributed.md section 6): mesh `gpuid=4`, shape (8,6), `[Shard(1)]`:
//! column pieces `[0,2) [2,4) [4,6) [6,6)`, rank 3 holds nothing, padded local shape (8,2).
//!
//! The per-device address composes with any on-device layout: [`MeshLayout::places`] gives
//! `(rank, local coordinate)` pairs, and an on-device [`crate::Layout`] evaluated at the local
//! coordinate names the address, thread or register below.

use std::collections::BTreeMap;
use std::fmt;

/// Most devices a mesh may have (2^20).
pub const MAX_DEVICES: i64 = 1 << 20;
/// Most mesh axes.
pub const MAX_AXES: usize = 8;
/// Most tensor dims.
pub const MAX_DIMS: usize = 8;

/// An error in a mesh or a mesh layout: what is wrong and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct MeshError(pub String);

fn err<T>(msg: impl Into<String>) -> Result<T, MeshError> {
    Err(MeshError(msg.into()))
}

/// A named device mesh: axes, and the rank at each row-major position (identity unless given).
#[derive(
    Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(try_from = "MeshText", into = "MeshText")]
pub struct Mesh {
    axes: Vec<(String, i64)>,
    /// `Some((devices, positions))`: the rank at each position and the position of each rank.
    order: Option<(Vec<i64>, Vec<i64>)>,
}

/// The serialized mesh: axes and the device order (validated when read back).
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct MeshText {
    axes: Vec<(String, i64)>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    devices: Option<Vec<i64>>,
}

impl TryFrom<MeshText> for Mesh {
    type Error = MeshError;
    fn try_from(t: MeshText) -> Result<Mesh, MeshError> {
        let m = Mesh::new(t.axes)?;
        match t.devices {
            Some(d) => m.with_devices(d),
            None => Ok(m),
        }
    }
}

impl From<Mesh> for MeshText {
    fn from(m: Mesh) -> MeshText {
        MeshText {
            devices: m.devices().map(|d| d.to_vec()),
            axes: m.axes,
        }
    }
}

impl Mesh {
    /// A mesh from `(name, extent)` pairs: at least one axis, names distinct identifiers,
    /// extents >= 1, at most [`MAX_DEVICES`] devices.
    ///
    /// ```
    /// let m = layout::mesh::Mesh::new(vec![("dp".into(), 2), ("tp".into(), 4)]).unwrap();
    /// assert_eq!((m.size(), m.coords(6)), (8, vec![1, 2]));
    /// ```
    pub fn new(axes: Vec<(String, i64)>) -> Result<Mesh, MeshError> {
        if axes.is_empty() {
            return err("mesh: no axes (a mesh of 0 devices)");
        }
        if axes.len() > MAX_AXES {
            return err(format!("mesh: {} axes; at most {MAX_AXES}", axes.len()));
        }
        let mut size: i64 = 1;
        for (i, (name, ext)) in axes.iter().enumerate() {
            if !crate::axis::is_identifier(name) {
                return err(format!("mesh axis {i}: `{name}` is not an identifier"));
            }
            if axes[..i].iter().any(|(n, _)| n == name) {
                return err(format!("mesh axis {i}: repeated axis name `{name}`"));
            }
            if *ext < 1 {
                return err(format!(
                    "mesh axis `{name}`: extent {ext} (a mesh of 0 devices); extents are >= 1"
                ));
            }
            size = match size.checked_mul(*ext) {
                Some(s) if s <= MAX_DEVICES => s,
                _ => return err(format!("mesh: more than {MAX_DEVICES} devices")),
            };
        }
        Ok(Mesh { axes, order: None })
    }

    /// The same mesh with `devices[p]` the rank at row-major position `p` (a permutation of
    /// `0..size`; the identity gives the plain mesh).
    ///
    /// ```
    /// let m = layout::mesh::Mesh::parse("dp=2,tp=2").unwrap().with_devices(vec![0, 2, 1, 3]).unwrap();
    /// assert_eq!((m.coords(2), m.rank(&[1, 0])), (vec![0, 1], 1));
    /// assert_eq!(m.to_string(), "dp=2,tp=2 devices=[0,2,1,3]");
    /// ```
    pub fn with_devices(mut self, devices: Vec<i64>) -> Result<Mesh, MeshError> {
        let n = self.size();
        if devices.len() as i64 != n {
            return err(format!(
                "mesh devices: {} ranks for a mesh of {n} devices ({self})",
                devices.len()
            ));
        }
        let mut positions = vec![-1i64; n as usize];
        for (p, &d) in devices.iter().enumerate() {
            if d < 0 || d >= n {
                return err(format!(
                    "mesh devices: rank {d} at position {p} is not in 0..{n}"
                ));
            }
            if positions[d as usize] >= 0 {
                return err(format!(
                    "mesh devices: rank {d} at positions {} and {p}",
                    positions[d as usize]
                ));
            }
            positions[d as usize] = p as i64;
        }
        let identity = devices.iter().enumerate().all(|(p, &d)| p as i64 == d);
        self.order = (!identity).then_some((devices, positions));
        Ok(self)
    }

    /// The rank at each row-major position, when not the identity.
    pub fn devices(&self) -> Option<&[i64]> {
        self.order.as_ref().map(|o| &o.0[..])
    }

    /// The rank at row-major position `p`.
    pub fn device_at(&self, p: i64) -> i64 {
        self.order.as_ref().map_or(p, |o| o.0[p as usize])
    }

    /// The row-major position of `rank`.
    pub fn position_of(&self, rank: i64) -> i64 {
        self.order.as_ref().map_or(rank, |o| o.1[rank as usize])
    }

    /// The same axes with the identity device order.
    pub fn plain(&self) -> Mesh {
        Mesh {
            axes: self.axes.clone(),
            order: None,
        }
    }

    /// Reads `dp=2,tp=4` (or `gpuid=8`; a bare number `8` is the flat mesh `gpuid=8`), optionally
    /// followed by the device order `devices=[0,2,1,3]` (nested brackets as DTensor's mesh
    /// tensor prints them are flattened: `devices=[[0,2],[1,3]]`).
    pub fn parse(text: &str) -> Result<Mesh, MeshError> {
        let t = text.trim();
        if let Some((axes, order)) = t.split_once("devices=") {
            let list: String = order
                .chars()
                .filter(|c| !matches!(c, '[' | ']' | '(' | ')') && !c.is_whitespace())
                .collect();
            let devices = list
                .split(',')
                .filter(|x| !x.is_empty())
                .map(|x| {
                    x.parse::<i64>()
                        .map_err(|_| MeshError(format!("mesh devices: `{x}` is not an integer")))
                })
                .collect::<Result<Vec<i64>, MeshError>>()?;
            return Mesh::parse(axes)?.with_devices(devices);
        }
        if let Ok(n) = t.parse::<i64>() {
            return Mesh::new(vec![("gpuid".into(), n)]);
        }
        let mut axes = Vec::new();
        for (i, part) in t.split(',').enumerate() {
            let Some((name, ext)) = part.split_once('=') else {
                return err(format!(
                    "mesh: entry {i} `{}` is not NAME=EXTENT",
                    part.trim()
                ));
            };
            let ext: i64 = ext.trim().parse().map_err(|_| {
                MeshError(format!(
                    "mesh: entry {i}: extent `{}` is not an integer",
                    ext.trim()
                ))
            })?;
            axes.push((name.trim().to_string(), ext));
        }
        Mesh::new(axes)
    }

    /// The axes, outermost (major) first.
    pub fn axes(&self) -> &[(String, i64)] {
        &self.axes
    }
    /// Number of axes.
    pub fn ndim(&self) -> usize {
        self.axes.len()
    }
    /// Extent of axis `a`.
    pub fn extent(&self, a: usize) -> i64 {
        self.axes[a].1
    }
    /// Name of axis `a`.
    pub fn name(&self, a: usize) -> &str {
        &self.axes[a].0
    }
    /// Number of devices.
    pub fn size(&self) -> i64 {
        self.axes.iter().map(|a| a.1).product()
    }
    /// The index of the axis called `name`.
    pub fn axis_index(&self, name: &str) -> Option<usize> {
        self.axes.iter().position(|(n, _)| n == name)
    }
    /// The mesh coordinates of `rank` (its position, row-major).
    pub fn coords(&self, rank: i64) -> Vec<i64> {
        let mut c = vec![0; self.axes.len()];
        let mut r = self.position_of(rank);
        for (i, (_, e)) in self.axes.iter().enumerate().rev() {
            c[i] = r % e;
            r /= e;
        }
        c
    }
    /// The rank at mesh coordinates `c`.
    pub fn rank(&self, c: &[i64]) -> i64 {
        self.device_at(self.position(c))
    }

    /// The row-major position of mesh coordinates `c`.
    pub fn position(&self, c: &[i64]) -> i64 {
        self.axes
            .iter()
            .zip(c)
            .fold(0, |acc, ((_, e), x)| acc * e + x)
    }
    /// The groups of ranks that differ only in the axes `over` (member order: `over`'s
    /// coordinates read mixed-radix, first axis major), one group per coordinate of the other
    /// axes, in rank order of their first member.
    ///
    /// ```
    /// let m = layout::mesh::Mesh::parse("dp=2,tp=4").unwrap();
    /// assert_eq!(m.groups(&[0]), vec![vec![0, 4], vec![1, 5], vec![2, 6], vec![3, 7]]);
    /// ```
    pub fn groups(&self, over: &[usize]) -> Vec<Vec<i64>> {
        let mut out: BTreeMap<Vec<i64>, Vec<(i64, i64)>> = BTreeMap::new();
        for r in 0..self.size() {
            let c = self.coords(r);
            let key: Vec<i64> = (0..self.ndim())
                .map(|a| if over.contains(&a) { -1 } else { c[a] })
                .collect();
            let pos = over.iter().fold(0, |acc, &a| acc * self.extent(a) + c[a]);
            out.entry(key).or_default().push((pos, r));
        }
        let mut groups: Vec<Vec<i64>> = out
            .into_values()
            .map(|mut g| {
                g.sort();
                g.into_iter().map(|(_, r)| r).collect()
            })
            .collect();
        groups.sort();
        groups
    }
}

impl fmt::Display for Mesh {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self.axes.iter().map(|(n, e)| format!("{n}={e}")).collect();
        write!(f, "{}", parts.join(","))?;
        if let Some(d) = self.devices() {
            let v: Vec<String> = d.iter().map(|x| x.to_string()).collect();
            write!(f, " devices=[{}]", v.join(","))?;
        }
        Ok(())
    }
}

/// The reduction of a partial state.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub enum ReduceOp {
    /// Sum of the addends.
    Sum,
    /// Mean of the addends.
    Avg,
    /// Maximum.
    Max,
    /// Minimum.
    Min,
}

impl ReduceOp {
    /// The name DTensor and NCCL use (`sum`, `avg`, `max`, `min`).
    pub fn name(self) -> &'static str {
        match self {
            ReduceOp::Sum => "sum",
            ReduceOp::Avg => "avg",
            ReduceOp::Max => "max",
            ReduceOp::Min => "min",
        }
    }
    /// Reads a name.
    pub fn parse(s: &str) -> Option<ReduceOp> {
        Some(match s {
            "sum" => ReduceOp::Sum,
            "avg" => ReduceOp::Avg,
            "max" => ReduceOp::Max,
            "min" => ReduceOp::Min,
            _ => return None,
        })
    }
}

/// A tensor distributed over a mesh (see the module doc for the meaning).
#[derive(
    Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(deny_unknown_fields)]
pub struct MeshLayout {
    /// The mesh.
    pub mesh: Mesh,
    /// The global tensor shape.
    pub shape: Vec<i64>,
    /// Per tensor dim: levels (outermost first), each a list of mesh axes (first major).
    pub dims: Vec<Vec<Vec<usize>>>,
    /// Mesh axes whose devices hold addends, with the reduction.
    pub partial: BTreeMap<usize, ReduceOp>,
    /// `Some(rank)`: the whole tensor lives on that device only (HLO `maximal`).
    pub maximal: Option<i64>,
    /// Tensor dims cut by DTensor's own left-to-right rule where it is not a nest of chunks
    /// (see [`MeshLayout::runs`]): per dim, the `(mesh axis, split_factor)` of each `Shard`
    /// (factor 1) and `_StridedShard` on it, in mesh-dim order. Such a dim's axes are also
    /// listed in `dims[d]` (as one-axis levels, for the axis bookkeeping), but its pieces come
    /// from this list. Empty for every layout that is a nest of chunks.
    #[serde(default)]
    pub strided: BTreeMap<usize, Vec<(usize, i64)>>,
}

/// One interval `[lo, hi)` per tensor dim.
pub type Block = Vec<(i64, i64)>;

/// Most `split_factor` (and product of the split factors) a strided dim takes.
pub const MAX_SPLIT: i64 = 1 << 8;
/// Most runs a strided dim's rule may give all devices together.
pub const MAX_STRIDED_WORK: i64 = 1 << 13;

/// The positions `[from, to)` of a list of runs read as one local index list.
fn take_runs(runs: &[(i64, i64)], from: i64, to: i64) -> Vec<(i64, i64)> {
    let mut out: Vec<(i64, i64)> = Vec::new();
    let mut at = 0i64;
    for &(lo, hi) in runs {
        let len = hi - lo;
        let (a, b) = (from.max(at), to.min(at + len));
        if a < b {
            let piece = (lo + a - at, lo + b - at);
            match out.last_mut() {
                Some(last) if last.1 == piece.0 => last.1 = piece.1,
                _ => out.push(piece),
            }
        }
        at += len;
    }
    out
}

fn runs_len(runs: &[(i64, i64)]) -> i64 {
    runs.iter().map(|(lo, hi)| hi - lo).sum()
}

/// torch.chunk's piece `j` of `k` of a run list (`ceil` sized, short or empty last pieces).
fn chunk_runs(runs: &[(i64, i64)], k: i64, j: i64) -> Vec<(i64, i64)> {
    let len = runs_len(runs);
    let c = (len + k - 1) / k;
    take_runs(runs, (j * c).min(len), ((j + 1) * c).min(len))
}

/// `_StridedShard(split_factor=f)._split_tensor`'s piece `i` of `n`: chunk into `f`, chunk each
/// into `n`, and concatenate the `i`-th of each.
fn strided_runs(runs: &[(i64, i64)], f: i64, n: i64, i: i64) -> Vec<(i64, i64)> {
    let mut out: Vec<(i64, i64)> = Vec::new();
    for j in 0..f {
        for piece in chunk_runs(&chunk_runs(runs, f, j), n, i) {
            match out.last_mut() {
                Some(last) if last.1 == piece.0 => last.1 = piece.1,
                _ => out.push(piece),
            }
        }
    }
    out
}

impl MeshLayout {
    /// A validated layout: dims >= 1 (at most [`MAX_DIMS`]), each mesh axis used at most once
    /// (in a level or as partial), a maximal device inside the mesh and no cuts with it.
    pub fn new(
        mesh: Mesh,
        shape: Vec<i64>,
        dims: Vec<Vec<Vec<usize>>>,
        partial: BTreeMap<usize, ReduceOp>,
        maximal: Option<i64>,
    ) -> Result<MeshLayout, MeshError> {
        if shape.is_empty() || shape.len() > MAX_DIMS {
            return err(format!(
                "shape: {} dims; between 1 and {MAX_DIMS}",
                shape.len()
            ));
        }
        let mut total: i64 = 1;
        for (d, &n) in shape.iter().enumerate() {
            if n < 1 {
                return err(format!("shape: dim {d} has size {n}; sizes are >= 1"));
            }
            total = total
                .checked_mul(n)
                .ok_or_else(|| MeshError("shape: element count overflows i64".into()))?;
        }
        if dims.len() != shape.len() {
            return err(format!(
                "layout: {} dim entries for a {}-D shape",
                dims.len(),
                shape.len()
            ));
        }
        let mut used: BTreeMap<usize, String> = BTreeMap::new();
        let mut use_axis = |a: usize, place: String| -> Result<(), MeshError> {
            if a >= mesh.ndim() {
                return err(format!("{place}: mesh axis {a} does not exist"));
            }
            if let Some(prev) = used.insert(a, place.clone()) {
                return err(format!(
                    "mesh axis `{}` used twice: in {prev} and in {place}",
                    mesh.name(a)
                ));
            }
            Ok(())
        };
        for (d, levels) in dims.iter().enumerate() {
            for level in levels {
                if level.is_empty() {
                    return err(format!("tensor dim {d}: an empty level"));
                }
                for &a in level {
                    use_axis(a, format!("tensor dim {d}"))?;
                }
            }
        }
        for &a in partial.keys() {
            use_axis(a, "partial".into())?;
        }
        if let Some(r) = maximal {
            if r < 0 || r >= mesh.size() {
                return err(format!(
                    "maximal device {r} is not in a mesh of {} devices",
                    mesh.size()
                ));
            }
            if !used.is_empty() {
                return err("maximal: a single-device layout has no cuts or partials");
            }
        }
        Ok(MeshLayout {
            mesh,
            shape,
            dims,
            partial,
            maximal,
            strided: BTreeMap::new(),
        })
    }

    /// The layout with tensor dim `d` cut by DTensor's left-to-right rule `list` (`(mesh axis,
    /// split_factor)` per `Shard`/`_StridedShard` on `d`, in mesh-dim order; see
    /// [`MeshLayout::runs`]). The axes must be exactly those `dims[d]` lists. When the rule gives
    /// every device the nested chunk it already has, the layout is returned unchanged (it is the
    /// nest of chunks, and every tool that needs one box per device takes it).
    pub fn with_strided(
        mut self,
        d: usize,
        list: Vec<(usize, i64)>,
    ) -> Result<MeshLayout, MeshError> {
        if d >= self.shape.len() {
            return err(format!("strided dim {d} of a {}-D shape", self.shape.len()));
        }
        if self.maximal.is_some() {
            return err("maximal: a single-device layout has no cuts");
        }
        let mut listed: Vec<usize> = list.iter().map(|e| e.0).collect();
        let mut axes: Vec<usize> = self.dims[d].iter().flatten().copied().collect();
        listed.sort();
        axes.sort();
        if listed != axes {
            return err(format!(
                "tensor dim {d}: the strided rule names mesh axes {listed:?}, the layout {axes:?}"
            ));
        }
        for &(a, f) in &list {
            if !(1..=MAX_SPLIT).contains(&f) {
                return err(format!(
                    "tensor dim {d}: split_factor {f} on mesh axis `{}`; between 1 and {MAX_SPLIT}",
                    self.mesh.name(a)
                ));
            }
        }
        // A device holds at most the product of the split factors as runs, and each is cut
        // once per entry: bound the work over all devices.
        let prod = list.iter().fold(1i64, |p, e| p.saturating_mul(e.1));
        if prod > MAX_SPLIT || prod.saturating_mul(self.mesh.size()) > MAX_STRIDED_WORK {
            return err(format!(
                "tensor dim {d}: split factors multiplying to {prod} on {} devices; at most {MAX_SPLIT} per dim and {MAX_STRIDED_WORK} runs over all devices",
                self.mesh.size()
            ));
        }
        let plain = self.clone();
        self.strided.insert(d, list);
        // One pass over the devices: bound each one's runs, and see whether every device holds
        // its nested chunk.
        let mut nested_same = true;
        for r in 0..self.mesh.size() {
            let runs = self.runs(r);
            if runs[d].len() > MAX_SPLIT as usize {
                return err(format!(
                    "tensor dim {d}: device {r} would hold {} separate runs; at most {MAX_SPLIT}",
                    runs[d].len()
                ));
            }
            let (lo, hi) = plain.block(r)[d];
            nested_same &= runs[d] == if lo < hi { vec![(lo, hi)] } else { vec![] };
        }
        Ok(if nested_same { plain } else { self })
    }

    /// True when every device holds one box (no dim follows a [`MeshLayout::strided`] rule).
    pub fn is_boxed(&self) -> bool {
        self.strided.is_empty()
    }

    /// Per tensor dim, the runs of global indices device `rank` holds, in local order (the
    /// device's local index `i` on that dim is the `i`-th index of the runs read one after the
    /// other); an empty list where it holds nothing. A nested dim gives its block's interval; a
    /// [`MeshLayout::strided`] dim starts from `[0, n)` and applies each entry in mesh-dim order
    /// to the device's current list, as DTensor's `_split_tensor` does to the local tensor:
    /// `Shard` keeps torch.chunk's piece of the device's coordinate, `_StridedShard(f)` chunks
    /// the list into `f`, each of those into the axis extent, and concatenates the device's
    /// piece of each. Worked vector (torch 2.15, pytorch issue 168134's example): `(5,)` under
    /// `[_StridedShard(0, split_factor=2)]` on `gpuid=2`: rank 0 holds `[0,2) [3,4)` (elements
    /// 0, 1, 3), rank 1 `[2,3) [4,5)`.
    pub fn runs(&self, rank: i64) -> Vec<Vec<(i64, i64)>> {
        let b = if self.strided.is_empty() {
            self.block(rank)
        } else {
            self.nested_block(rank)
        };
        let c = self.mesh.coords(rank);
        b.iter()
            .enumerate()
            .map(|(d, &(lo, hi))| match self.strided.get(&d) {
                Some(list) if self.maximal.is_none() => {
                    let mut runs = vec![(0, self.shape[d])];
                    for &(a, f) in list {
                        let (n, i) = (self.mesh.extent(a), c[a]);
                        runs = if f == 1 {
                            chunk_runs(&runs, n, i)
                        } else {
                            strided_runs(&runs, f, n, i)
                        };
                    }
                    runs
                }
                _ if lo < hi => vec![(lo, hi)],
                _ => vec![],
            })
            .collect()
    }

    /// The boxes device `rank` holds, each as (global box, where its corner sits in the local
    /// buffer): one box for a boxed layout (none on a device that holds nothing), the product
    /// of the runs of [`MeshLayout::runs`] otherwise.
    pub fn pieces(&self, rank: i64) -> Vec<(Block, Vec<i64>)> {
        let runs = self.runs(rank);
        if runs.iter().any(|r| r.is_empty()) {
            return vec![];
        }
        let mut out = Vec::new();
        let mut idx = vec![0usize; runs.len()];
        loop {
            let mut bx = Vec::with_capacity(runs.len());
            let mut at = Vec::with_capacity(runs.len());
            for (d, &k) in idx.iter().enumerate() {
                bx.push(runs[d][k]);
                at.push(runs_len(&runs[d][..k]));
            }
            out.push((bx, at));
            let mut d = runs.len();
            loop {
                if d == 0 {
                    return out;
                }
                d -= 1;
                idx[d] += 1;
                if idx[d] < runs[d].len() {
                    break;
                }
                idx[d] = 0;
            }
        }
    }

    /// Replicated on every device.
    pub fn replicated(mesh: Mesh, shape: Vec<i64>) -> Result<MeshLayout, MeshError> {
        let n = shape.len();
        MeshLayout::new(mesh, shape, vec![vec![]; n], BTreeMap::new(), None)
    }

    /// The box of tensor elements device `rank` holds (empty intervals on a device that holds
    /// nothing). Only for a boxed layout ([`MeshLayout::is_boxed`]); one whose device may hold
    /// several boxes is read by [`MeshLayout::pieces`].
    pub fn block(&self, rank: i64) -> Block {
        debug_assert!(self.is_boxed(), "block() of a strided layout: use pieces()");
        self.nested_block(rank)
    }

    /// The nested-chunk box of `rank` (the strided rule ignored).
    fn nested_block(&self, rank: i64) -> Block {
        if let Some(m) = self.maximal {
            return self
                .shape
                .iter()
                .map(|&n| if rank == m { (0, n) } else { (0, 0) })
                .collect();
        }
        let c = self.mesh.coords(rank);
        self.dims
            .iter()
            .zip(&self.shape)
            .map(|(levels, &n)| {
                let (mut lo, mut hi) = (0i64, n);
                for level in levels {
                    let k: i64 = level.iter().map(|&a| self.mesh.extent(a)).product();
                    let j = level
                        .iter()
                        .fold(0, |acc, &a| acc * self.mesh.extent(a) + c[a]);
                    let len = hi - lo;
                    let ch = (len + k - 1) / k;
                    let (a, b) = ((j * ch).min(len), ((j + 1) * ch).min(len));
                    hi = lo + b;
                    lo += a;
                }
                (lo, hi)
            })
            .collect()
    }

    /// The padded local shape: per dim the largest piece any device gets (`c_i = ceil(c_{i-1}/K_i)`;
    /// on a strided dim the longest run list over the devices, as DTensor pads to its largest
    /// chunk).
    pub fn local_shape(&self) -> Vec<i64> {
        if !self.strided.is_empty() {
            let mut out = self.nested_local_shape();
            for &d in self.strided.keys() {
                out[d] = (0..self.mesh.size())
                    .map(|r| runs_len(&self.runs(r)[d]))
                    .max()
                    .unwrap_or(0);
            }
            return out;
        }
        self.nested_local_shape()
    }

    fn nested_local_shape(&self) -> Vec<i64> {
        self.dims
            .iter()
            .zip(&self.shape)
            .map(|(levels, &n)| {
                levels.iter().fold(n, |c, level| {
                    let k: i64 = level.iter().map(|&a| self.mesh.extent(a)).product();
                    (c + k - 1) / k
                })
            })
            .collect()
    }

    /// Number of addends of every value: the product of the partial axes' extents (1 if none).
    pub fn addends(&self) -> i64 {
        self.partial.keys().map(|&a| self.mesh.extent(a)).product()
    }

    /// Which addend device `rank` holds: its partial coordinates read mixed-radix (0 if none).
    pub fn addend_of(&self, rank: i64) -> i64 {
        let c = self.mesh.coords(rank);
        self.partial
            .keys()
            .fold(0, |acc, &a| acc * self.mesh.extent(a) + c[a])
    }

    /// The group of `rank`'s addends: its mesh position with the partial coordinates zeroed.
    /// Devices of one group differ only in the partial axes, so they hold the same places, and
    /// the addends at one place over the group make up its value.
    pub fn addend_group(&self, rank: i64) -> i64 {
        let c = self.mesh.coords(rank);
        let z: Vec<i64> = (0..self.mesh.ndim())
            .map(|a| {
                if self.partial.contains_key(&a) {
                    0
                } else {
                    c[a]
                }
            })
            .collect();
        self.mesh.position(&z)
    }

    /// The places of logical index `x`: `(rank, local coordinate)` for every device whose box
    /// holds `x`, in rank order. With a partial layout each place holds an addend
    /// ([`MeshLayout::addend_of`] says which).
    ///
    /// ```
    /// use layout::mesh::*;
    /// let m = Mesh::parse("dp=2,tp=2").unwrap();
    /// let l = MeshLayout::new(m, vec![4, 4], vec![vec![vec![0]], vec![]],
    ///     Default::default(), None).unwrap();
    /// assert_eq!(l.places(&[3, 1]), vec![(2, vec![1, 1]), (3, vec![1, 1])]);
    /// ```
    pub fn places(&self, x: &[i64]) -> Vec<(i64, Vec<i64>)> {
        (0..self.mesh.size())
            .filter_map(|r| {
                self.pieces(r).into_iter().find_map(|(b, at)| {
                    let inside = b.iter().zip(x).all(|(&(lo, hi), &v)| lo <= v && v < hi);
                    inside.then(|| {
                        let local = b.iter().zip(x).zip(&at);
                        (r, local.map(|((&(lo, _), &v), &o)| v - lo + o).collect())
                    })
                })
            })
            .collect()
    }

    /// True when every level's cut divides its piece exactly (no short or empty pieces) and no
    /// dim follows a strided rule.
    pub fn is_even(&self) -> bool {
        if !self.strided.is_empty() {
            return false;
        }
        self.dims.iter().zip(&self.shape).all(|(levels, &n)| {
            let mut c = n;
            for level in levels {
                let k: i64 = level.iter().map(|&a| self.mesh.extent(a)).product();
                if c % k != 0 {
                    return false;
                }
                c /= k;
            }
            true
        })
    }

    /// The axes that neither cut a dim nor are partial (replicated).
    pub fn replicated_axes(&self) -> Vec<usize> {
        (0..self.mesh.ndim())
            .filter(|a| {
                !self.partial.contains_key(a) && !self.dims.iter().flatten().any(|l| l.contains(a))
            })
            .collect()
    }

    /// The same placement with each multi-axis level split into nested one-axis levels, which
    /// denote the same layout when the layout is even (`None` otherwise).
    pub fn nested(&self) -> Option<MeshLayout> {
        if !self.is_even() {
            return None;
        }
        let mut l = self.clone();
        l.dims = self
            .dims
            .iter()
            .map(|levels| levels.iter().flatten().map(|&a| vec![a]).collect())
            .collect();
        Some(l)
    }

    /// The layout as Axe text when it is even and not maximal: mesh axes are axes like any
    /// other, the local address is `m` (row-major over the padded local shape).
    /// `[Shard(0), Replicate()]` on `dp=2,tp=4`, shape (8,8): `S[(2,4,8):(1@dp,8@m,1@m)] + R[4:1@tp]`.
    pub fn to_axe(&self) -> Option<String> {
        if self.maximal.is_some() || !self.is_even() {
            return None;
        }
        let local = self.local_shape();
        let mut mstride = vec![1i64; local.len()];
        for d in (0..local.len().saturating_sub(1)).rev() {
            mstride[d] = mstride[d + 1] * local[d + 1];
        }
        let (mut ext, mut strides) = (Vec::new(), Vec::new());
        for (d, levels) in self.dims.iter().enumerate() {
            for &a in levels.iter().flatten() {
                ext.push(self.mesh.extent(a).to_string());
                strides.push(format!("1@{}", self.mesh.name(a)));
            }
            ext.push(local[d].to_string());
            strides.push(format!("{}@m", mstride[d]));
        }
        let mut text = format!("S[({}):({})]", ext.join(","), strides.join(","));
        let rep = self.replicated_axes();
        if !rep.is_empty() {
            let e: Vec<String> = rep
                .iter()
                .map(|&a| self.mesh.extent(a).to_string())
                .collect();
            let s: Vec<String> = rep
                .iter()
                .map(|&a| format!("1@{}", self.mesh.name(a)))
                .collect();
            text += &format!(" + R[({}):({})]", e.join(","), s.join(","));
        }
        Some(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lay(mesh: &str, shape: &[i64], dims: Vec<Vec<Vec<usize>>>) -> MeshLayout {
        MeshLayout::new(
            Mesh::parse(mesh).unwrap(),
            shape.to_vec(),
            dims,
            BTreeMap::new(),
            None,
        )
        .unwrap()
    }

    #[test]
    fn chunk_rule_gives_short_and_empty_pieces() {
        let l = lay("gpuid=4", &[8, 6], vec![vec![], vec![vec![0]]]);
        let cols: Vec<(i64, i64)> = (0..4).map(|r| l.block(r)[1]).collect();
        assert_eq!(cols, vec![(0, 2), (2, 4), (4, 6), (6, 6)]);
        let l = lay("gpuid=4", &[5, 3], vec![vec![vec![0]], vec![]]);
        let rows: Vec<i64> = (0..4).map(|r| l.block(r)[0].1 - l.block(r)[0].0).collect();
        assert_eq!(rows, vec![2, 2, 1, 0]);
        assert_eq!(l.local_shape(), vec![2, 3]);
    }

    #[test]
    fn nested_and_flat_levels_differ_only_when_uneven() {
        let nested = lay("a=2,b=2", &[5], vec![vec![vec![0], vec![1]]]);
        let flat = lay("a=2,b=2", &[5], vec![vec![vec![0, 1]]]);
        let n: Vec<Block> = (0..4).map(|r| nested.block(r)).collect();
        let f: Vec<Block> = (0..4).map(|r| flat.block(r)).collect();
        assert_eq!(
            n,
            vec![vec![(0, 2)], vec![(2, 3)], vec![(3, 4)], vec![(4, 5)]]
        );
        assert_eq!(
            f,
            vec![vec![(0, 2)], vec![(2, 4)], vec![(4, 5)], vec![(5, 5)]]
        );
        let nested = lay("a=2,b=3", &[12], vec![vec![vec![0], vec![1]]]);
        let flat = lay("a=2,b=3", &[12], vec![vec![vec![0, 1]]]);
        for r in 0..6 {
            assert_eq!(nested.block(r), flat.block(r));
        }
    }

    #[test]
    fn blocks_partition_the_tensor_on_every_mesh() {
        for (mesh, shape) in [
            ("a=3", vec![7, 5]),
            ("a=2,b=3", vec![13, 6]),
            ("a=2,b=3,c=2", vec![11, 7]),
        ] {
            let m = Mesh::parse(mesh).unwrap();
            let n = m.ndim();
            let dims = vec![(0..n - 1).map(|a| vec![a]).collect(), vec![vec![n - 1]]];
            let l = MeshLayout::new(m.clone(), shape.clone(), dims, BTreeMap::new(), None).unwrap();
            for x0 in 0..shape[0] {
                for x1 in 0..shape[1] {
                    assert_eq!(l.places(&[x0, x1]).len(), 1, "{mesh} {x0},{x1}");
                }
            }
        }
    }

    #[test]
    fn bad_meshes_and_layouts_are_errors() {
        assert!(Mesh::parse("dp=0").is_err());
        assert!(Mesh::parse("dp=2,dp=2").is_err());
        assert!(Mesh::parse("dp").is_err());
        let m = Mesh::parse("dp=2,tp=2").unwrap();
        let twice = MeshLayout::new(
            m,
            vec![4, 4],
            vec![vec![vec![0]], vec![vec![0]]],
            BTreeMap::new(),
            None,
        );
        assert!(twice.unwrap_err().0.contains("used twice"));
    }

    #[test]
    fn a_device_order_moves_blocks_and_groups_with_the_ranks() {
        // DTensor's DeviceMesh("cpu", [[0, 2], [1, 3]], mesh_dim_names=("dp", "tp")).
        let m = Mesh::parse("dp=2,tp=2 devices=[[0, 2], [1, 3]]").unwrap();
        assert_eq!(m.to_string(), "dp=2,tp=2 devices=[0,2,1,3]");
        assert_eq!(Mesh::parse(&m.to_string()).unwrap(), m);
        assert_eq!(m.groups(&[1]), vec![vec![0, 2], vec![1, 3]]);
        assert_eq!(m.groups(&[0]), vec![vec![0, 1], vec![2, 3]]);
        let l = MeshLayout::new(
            m.clone(),
            vec![4, 4],
            vec![vec![vec![0]], vec![]],
            BTreeMap::new(),
            None,
        )
        .unwrap();
        // Rank 1 sits at (dp 1, tp 0): rows 2..4.
        assert_eq!(l.block(1), vec![(2, 4), (0, 4)]);
        assert_eq!(l.block(2), vec![(0, 2), (0, 4)]);
        let json = serde_json::to_string(&m).unwrap();
        assert_eq!(serde_json::from_str::<Mesh>(&json).unwrap(), m);
        // The identity order is the plain mesh; a non-permutation is refused by name.
        assert_eq!(
            Mesh::parse("dp=2,tp=2 devices=[0,1,2,3]").unwrap(),
            Mesh::parse("dp=2,tp=2").unwrap()
        );
        for (text, what) in [
            ("dp=2,tp=2 devices=[0,2,1]", "3 ranks for a mesh of 4"),
            ("dp=2,tp=2 devices=[0,2,1,2]", "rank 2 at positions 1 and 3"),
            (
                "dp=2,tp=2 devices=[0,2,1,4]",
                "rank 4 at position 3 is not in 0..4",
            ),
            ("dp=2,tp=2 devices=[0,x,1,3]", "`x` is not an integer"),
        ] {
            let e = Mesh::parse(text).unwrap_err();
            assert!(e.0.contains(what), "{text}: {e}");
        }
        let bad = r#"{"axes":[["a",2]],"devices":[0,0]}"#;
        assert!(serde_json::from_str::<Mesh>(bad).is_err());
    }

    #[test]
    fn groups_keep_mesh_rank_order() {
        let m = Mesh::parse("a=2,b=3").unwrap();
        assert_eq!(m.groups(&[1]), vec![vec![0, 1, 2], vec![3, 4, 5]]);
        assert_eq!(m.groups(&[1, 0]), vec![vec![0, 3, 1, 4, 2, 5]]);
    }

    #[test]
    fn axe_text_of_the_spec_example() {
        let l = lay("dp=2,tp=4", &[8, 8], vec![vec![vec![0]], vec![]]);
        assert_eq!(
            l.to_axe().unwrap(),
            "S[(2,4,8):(1@dp,8@m,1@m)] + R[(4):(1@tp)]"
        );
        // The Axe text evaluates to the same places as the mesh layout.
        let axe = crate::Layout::parse(&l.to_axe().unwrap(), None).unwrap();
        let pts = axe.eval(Some(&[8, 8]), &[5, 3]).unwrap();
        let ours: Vec<String> = l
            .places(&[5, 3])
            .iter()
            .map(|(r, c)| {
                let k = l.mesh.coords(*r);
                format!("{{dp:{}, m:{}, tp:{}}}", k[0], c[0] * 8 + c[1], k[1])
            })
            .collect();
        let theirs: Vec<String> = pts.iter().map(crate::axis::format_point).collect();
        assert_eq!(ours, theirs);
    }

    proptest::proptest! {
        /// A strided rule's pieces partition the tensor among the devices of each replica
        /// class, at distinct local places inside the padded local shape, and `places` finds
        /// each element where the pieces put it.
        #[test]
        fn strided_pieces_partition_the_tensor(
            e0 in 1i64..5, e1 in 1i64..5, n in 1i64..40, m in 1i64..4,
            f0 in 1i64..5, f1 in 1i64..5, order in proptest::bool::ANY,
        ) {
            let mesh = Mesh::parse(&format!("a={e0},b={e1}")).unwrap();
            let list = if order { vec![(0, f0), (1, f1)] } else { vec![(1, f1), (0, f0)] };
            let base = MeshLayout::new(mesh.clone(), vec![n, m], vec![vec![vec![0], vec![1]], vec![]],
                BTreeMap::new(), None).unwrap();
            let l = base.with_strided(0, list).unwrap();
            let local = l.local_shape();
            let mut owner = vec![None; (n * m) as usize];
            for r in 0..mesh.size() {
                let mut seen = std::collections::BTreeSet::new();
                for (bx, at) in l.pieces(r) {
                    for x in bx[0].0..bx[0].1 {
                        for y in bx[1].0..bx[1].1 {
                            let lc = (x - bx[0].0 + at[0], y - bx[1].0 + at[1]);
                            proptest::prop_assert!(lc.0 < local[0] && lc.1 < local[1]);
                            proptest::prop_assert!(seen.insert(lc));
                            let o = &mut owner[(x * m + y) as usize];
                            proptest::prop_assert!(o.is_none(), "element {x},{y} held twice");
                            *o = Some(r);
                            proptest::prop_assert!(l.places(&[x, y]).contains(&(r, vec![lc.0, lc.1])));
                        }
                    }
                }
            }
            proptest::prop_assert!(owner.iter().all(|o| o.is_some()));
        }
    }
}
