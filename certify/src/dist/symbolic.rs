//! The mesh-symbolic decider: one symbolic buffer stands for every device, so the decision and
//! its evidence do not grow with the device count.
//!
//! **Model.** A device is its mesh coordinates `c = (c_0, .., c_{k-1})`. An [`Aff`] is an affine
//! function `k + sum_a coef_a * c_a`. A [`SymPiece`] is a box `[lo, lo + len)` of the buffer
//! (the same on every device) whose cell `lo + t` holds, on device `c`, the *padded* global
//! element `elem(c) + t` with the addends [`Terms`] names relative to `c`. A padded element with
//! a coordinate at or past the tensor's extent is padding. A [`SymState`] (a shape and disjoint
//! pieces) is every device's buffer at once.
//!
//! **Which claims.** Layouts whose every device holds one box at the local origin, with a
//! corner affine in `c` ([`affine_layout`]): every level of a dim divides its piece exactly, or
//! the dim has one cutting level (torch.chunk's ceil rule, read on the padded extent: device `j`
//! holds `[j*ch, j*ch + ch)` of which the part past the extent is padding, exactly the cells the
//! source buffers leave empty). Not maximal, not `_StridedShard`. Plans whose steps are
//! collectives over the groups of one mesh axis (`Mesh::groups`), local tables that are, on
//! every device, runs of consecutive entries starting at an affine offset, and zeroing of the
//! devices off coordinate 0 of one axis; and a final send-recv (the planner's straight move to
//! the target), read by what lands: each receiver's intake (its messages' windows of their
//! senders' symbolic pieces, evaluated at the senders' coordinates, merged where they continue
//! each other) is grouped into receiver classes. A class is a box of mesh coordinates (one
//! interval per axis); within it every receiver lands the same boxes with the same addends,
//! and each box's global element is one affine function of the receiver's coordinates,
//! compared on every receiver. Who sends is not read: a sender `c div q` on one
//! axis at a corner `q*(c mod q)` lands the element `c`, and the replica the planner picks to
//! spread the load is invisible. An axis's interval is cut at the coordinate of a receiver
//! that breaks the fit when it differs from its class's origin on that axis alone (a short
//! last shard is a class of its own); as many classes as devices, or more than
//! [`MAX_CLASSES`], is declined. Anything else
//! returns `Err` (not decided here, never a refutation) and the claim goes to the box decider.
//!
//! **Theorem.** If [`decide`] returns `Ok`, every device's buffers under the cell semantics of
//! [`super::simulate`] meet the claim (spec/distributed.md section 4). *Sketch.* By induction
//! over the steps, on every device `c` and buffer cell `p`: the real cell holds element `x` with
//! addend multiset `M` iff the symbolic piece over `p` evaluates at `c` to padded element `x`
//! (inside the extent) with terms `M`; the real cell is padding iff no piece covers `p` or the
//! padded element is past the extent (or the terms were zeroed). The base case is the layout's
//! definition above. Each step is the collective's definition with the member index replaced by
//! the group axis's coordinate: an all-gather substitutes `c_a := j` in member `j`'s pieces and
//! shifts them by `j` buffer lengths; a cut at an offset that depends on `c` (the member's own
//! piece of a reduce-scatter or all-to-all, a table run) is taken only from a piece spanning the
//! whole dim, so it is a box at the same place on every device; a reduction requires the
//! members to hold the same padded element (no coefficient on the group axis) and combines
//! terms exactly (an own coordinate on the axis becomes all of them; terms that do not depend
//! on the axis are counted `extent` times; zeroed members contribute none). A local table is
//! accepted only after every device's table was compared entry by entry with the affine runs.
//! A final send-recv lands on each receiver `c` its messages' windows of their senders'
//! buffers, which the induction hypothesis gives exactly (the sender's pieces evaluated at its
//! coordinates; its addends named relative to `c`, which requires the sender's own partial
//! coordinate to be `c`'s); a receiver's messages must land on disjoint boxes (a later message
//! would overwrite an earlier one). Within a class the class's piece, with its fitted affine
//! element, evaluates at every receiver to what that receiver was computed to hold, because
//! the fit was compared on each of them. The target's corner is compared on the class (the
//! coordinates of its one-point intervals substituted): two affine functions agree on a box
//! whose every other interval has two points iff they are the same function.
//! At the end each piece must equal the target's affine corner plus its position (the identity
//! of two affine functions, so equal on every device), hold every addend exactly once (after
//! summing over the target's partial axes for a partial target), and every uncovered cell must
//! be padding in the target on every device. The places checked are counted in closed form.
//!
//! The evidence (the final symbolic state, hashed) has a size independent of the device count;
//! recognizing the plan reads the plan's own tables once. `certify_plan` re-decides every claim
//! on at most [`SYMBOLIC_RECHECK_RANKS`] devices on boxes and requires the same verdict.
//!
//! Worked vector: mesh `dp=2,tp=4`, (8,8), `[Shard(0), Replicate()] -> [Replicate(), Shard(1)]`
//! by an all-gather over dp and a local slice of 2 columns at `2*c_tp`: the source piece is
//! `lo [0,0] len [4,8] elem [4*c_dp, 0]`; after the gather `lo [0,0] len [8,8] elem [0,0]`;
//! after the slice `lo [0,0] len [8,2] elem [0, 2*c_tp]`, the target's corner.

use std::collections::BTreeMap;

use layout::mesh::{Mesh, MeshLayout, ReduceOp};
use sha2::{Digest, Sha256};

use super::plan::{Plan, Step};

/// Most symbolic pieces a state may hold (2^12).
pub const MAX_SYMBOLIC_PIECES: usize = 1 << 12;

/// Claims on at most this many devices that the symbolic decider certifies are re-decided on
/// boxes, and the two must agree (2^12).
pub const SYMBOLIC_RECHECK_RANKS: i64 = 1 << 12;

/// `k + sum_a coef[a] * c[a]` over the mesh coordinates `c`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Aff {
    /// Constant.
    pub k: i64,
    /// One coefficient per mesh axis.
    pub coef: Vec<i64>,
}

impl Aff {
    fn constant(k: i64, axes: usize) -> Aff {
        Aff {
            k,
            coef: vec![0; axes],
        }
    }
    /// Its value at coordinates `c`.
    pub fn eval(&self, c: &[i64]) -> i64 {
        self.coef.iter().zip(c).fold(self.k, |s, (a, x)| s + a * x)
    }
    fn is_const(&self) -> bool {
        self.coef.iter().all(|&a| a == 0)
    }
    fn shift(&self, d: i64) -> Aff {
        Aff {
            k: self.k + d,
            coef: self.coef.clone(),
        }
    }
    fn add(&self, o: &Aff) -> Aff {
        debug_assert_eq!(
            self.coef.len(),
            o.coef.len(),
            "affine functions of one frame"
        );
        Aff {
            k: self.k + o.k,
            coef: self.coef.iter().zip(&o.coef).map(|(a, b)| a + b).collect(),
        }
    }
    /// `c_a := v`.
    fn with(&self, a: usize, v: i64) -> Aff {
        let mut out = self.clone();
        out.k += out.coef[a] * v;
        out.coef[a] = 0;
        out
    }
    /// Least and greatest value over the coordinates of the box (per axis `[lo, hi)`).
    fn range(&self, bounds: &[(i64, i64)]) -> (i64, i64) {
        let (mut lo, mut hi) = (self.k, self.k);
        for (&k, &(a, b)) in self.coef.iter().zip(bounds) {
            lo += (k * a).min(k * (b - 1));
            hi += (k * a).max(k * (b - 1));
        }
        (lo, hi)
    }
}

impl std::fmt::Display for Aff {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.k)?;
        for (a, &k) in self.coef.iter().enumerate() {
            if k != 0 {
                write!(f, "{:+}*c{a}", k)?;
            }
        }
        Ok(())
    }
}

/// The addends a symbolic cell holds on device `c`: each addend of the set `count` times. The
/// set is, per partial axis of the source, the device's own coordinate (`own`) or every
/// coordinate; the terms are there only on devices at coordinate 0 of every axis in
/// `zero_unless` (the others were zeroed). `count == 0`: no terms.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Terms {
    /// Multiplicity of each addend of the set.
    pub count: i64,
    /// Per partial axis of the source (ascending): the addend's coordinate is the device's own.
    pub own: Vec<bool>,
    /// Axes on which only coordinate 0 holds the terms (sorted).
    pub zero_unless: Vec<usize>,
}

impl Terms {
    fn none(partials: usize) -> Terms {
        Terms {
            count: 0,
            own: vec![false; partials],
            zero_unless: Vec::new(),
        }
    }
}

/// A box of the buffer, the same on every device, holding padded elements affine in `c`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SymPiece {
    /// First cell.
    pub lo: Vec<i64>,
    /// Extents (>= 1).
    pub len: Vec<i64>,
    /// Padded global element at `lo`, per tensor dim.
    pub elem: Vec<Aff>,
    /// Addends.
    pub terms: Terms,
}

/// Every device's buffer: one shape, disjoint pieces; cells in no piece are padding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SymState {
    /// Buffer shape.
    pub shape: Vec<i64>,
    /// Pieces (sorted, merged).
    pub pieces: Vec<SymPiece>,
}

/// A symbolic decision: places checked (closed form), the final state's digest and size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Symbolic {
    /// Target places checked over all devices.
    pub places: i64,
    /// SHA-256 of the final symbolic state (hex).
    pub digest: String,
    /// Pieces of the final state (over all receiver classes).
    pub pieces: usize,
    /// Receiver classes (1 unless a final send-recv was split).
    pub classes: usize,
}

type R<T> = Result<T, String>;

/// The affine corner (per dim) and padded local shape of `l`, when every device holds one box
/// at its local origin whose corner is affine in the mesh coordinates (see the module docs).
pub fn affine_layout(l: &MeshLayout) -> R<(Vec<Aff>, Vec<i64>)> {
    if l.maximal.is_some() {
        return Err("a maximal layout".into());
    }
    if !l.strided.is_empty() {
        return Err("a _StridedShard dim".into());
    }
    let k = l.mesh.ndim();
    let mut corner = Vec::new();
    let mut local = Vec::new();
    for (levels, &n) in l.dims.iter().zip(&l.shape) {
        let mut aff = Aff::constant(0, k);
        let mut c = n;
        let cutting = levels
            .iter()
            .filter(|lv| lv.iter().map(|&a| l.mesh.extent(a)).product::<i64>() > 1)
            .count();
        for level in levels {
            let ext: i64 = level.iter().map(|&a| l.mesh.extent(a)).product();
            if c % ext != 0 && cutting > 1 {
                return Err(format!(
                    "{n} is cut unevenly by one of {cutting} levels (pieces not affine)"
                ));
            }
            let ch = (c + ext - 1) / ext;
            let mut stride = 1;
            for &a in level.iter().rev() {
                aff.coef[a] += ch * stride;
                stride *= l.mesh.extent(a);
            }
            c = ch;
        }
        corner.push(aff);
        local.push(c);
    }
    if local != l.local_shape() {
        return Err("local shape differs from the nested rule".into());
    }
    Ok((corner, local))
}

struct Ctx<'a> {
    mesh: &'a Mesh,
    /// Source partial axes, ascending.
    partials: Vec<usize>,
    /// `Mesh::groups(&[a])`, computed when first asked.
    groups: BTreeMap<usize, Vec<Vec<i64>>>,
    coords: Vec<Vec<i64>>,
    /// The mesh's coordinates, per axis `[0, extent)`.
    bounds: Vec<(i64, i64)>,
}

impl Ctx<'_> {
    /// The mesh axis whose groups these are (member order included).
    fn axis_of(&mut self, groups: &[Vec<i64>]) -> R<usize> {
        for a in 0..self.mesh.ndim() {
            if self.mesh.extent(a) as usize != groups.first().map_or(0, |g| g.len()) {
                continue;
            }
            let g = self
                .groups
                .entry(a)
                .or_insert_with(|| self.mesh.groups(&[a]));
            if g == groups {
                return Ok(a);
            }
        }
        Err("groups that are not one mesh axis's".into())
    }
    fn own_index(&self, a: usize) -> Option<usize> {
        self.partials.iter().position(|&p| p == a)
    }
}

/// Member `v` of axis `a`'s group, seen from the other members: `c_a := v`.
fn substitute(ctx: &Ctx, p: &SymPiece, a: usize, v: i64) -> R<SymPiece> {
    let mut q = p.clone();
    q.elem = p.elem.iter().map(|e| e.with(a, v)).collect();
    if q.terms.count > 0 {
        if ctx.own_index(a).is_some_and(|i| q.terms.own[i]) {
            return Err("addends moved along their own partial axis".into());
        }
        if let Some(i) = q.terms.zero_unless.iter().position(|&z| z == a) {
            if v == 0 {
                q.terms.zero_unless.remove(i);
            } else {
                q.terms = Terms::none(ctx.partials.len());
            }
        }
    }
    Ok(q)
}

/// The elementwise reduction by `op` over axis `a`'s groups (all members hold the same
/// pieces). Zero is the identity of sum only: for max, min and avg, a reduction of zeroed
/// members with terms is not decided here; nor is an average of members that hold the same
/// addends (the box and cell deciders answer those, as undecided).
fn reduce(ctx: &Ctx, p: &SymPiece, a: usize, op: ReduceOp) -> R<SymPiece> {
    if p.elem.iter().any(|e| e.coef[a] != 0) {
        return Err("a reduction of different elements".into());
    }
    let mut q = p.clone();
    let t = &mut q.terms;
    if t.count == 0 {
        return Ok(q);
    }
    let own = ctx.own_index(a);
    if let Some(i) = t.zero_unless.iter().position(|&z| z == a) {
        if own.is_some_and(|o| t.own[o]) {
            return Err("zeroed own addends reduced".into());
        }
        if op != ReduceOp::Sum {
            return Err(format!("zeroed members reduced by {}", op.name()));
        }
        t.zero_unless.remove(i);
    } else if let Some(o) = own.filter(|&o| t.own[o]) {
        t.own[o] = false;
    } else {
        if op == ReduceOp::Avg {
            return Err("an average of members holding the same addends".into());
        }
        t.count = t
            .count
            .checked_mul(ctx.mesh.extent(a))
            .ok_or("term count overflow")?;
    }
    Ok(q)
}

/// The window `[start(c), start(c) + len)` of every device's buffer, as pieces relative to the
/// window. An offset depending on `c` is taken only from pieces spanning the whole dim.
fn cut(bounds: &[(i64, i64)], s: &SymState, start: &[Aff], len: &[i64]) -> R<Vec<SymPiece>> {
    for d in 0..len.len() {
        let (lo, hi) = start[d].range(bounds);
        if lo < 0 || hi + len[d] > s.shape[d] {
            return Err(format!(
                "a window {}+{} of dim {d} outside the buffer",
                start[d], len[d]
            ));
        }
    }
    let mut out = Vec::new();
    'piece: for p in &s.pieces {
        let mut q = p.clone();
        for d in 0..len.len() {
            if start[d].is_const() {
                let w = start[d].k;
                let lo = p.lo[d].max(w);
                let hi = (p.lo[d] + p.len[d]).min(w + len[d]);
                if hi <= lo {
                    continue 'piece;
                }
                q.lo[d] = lo - w;
                q.len[d] = hi - lo;
                q.elem[d] = p.elem[d].shift(lo - p.lo[d]);
            } else {
                if p.lo[d] != 0 || p.len[d] != s.shape[d] {
                    return Err(format!(
                        "a window at {} of dim {d} cuts a piece not spanning it",
                        start[d]
                    ));
                }
                if len[d] == 0 {
                    continue 'piece;
                }
                q.lo[d] = 0;
                q.len[d] = len[d];
                q.elem[d] = p.elem[d].add(&start[d]);
            }
        }
        out.push(q);
    }
    Ok(out)
}

/// Sorted, with neighbours that continue each other (in buffer and in element, same terms)
/// merged into one piece.
fn merge(mut pieces: Vec<SymPiece>) -> R<Vec<SymPiece>> {
    if pieces.len() > MAX_SYMBOLIC_PIECES {
        return Err(format!(
            "{} symbolic pieces; at most {MAX_SYMBOLIC_PIECES}",
            pieces.len()
        ));
    }
    let nd = pieces.first().map_or(0, |p| p.lo.len());
    loop {
        let before = pieces.len();
        for d in (0..nd).rev() {
            // Everything but dim d's position, then the position along d.
            pieces.sort_by_cached_key(|p| {
                let (mut lo, mut len, mut el) = (p.lo.clone(), p.len.clone(), p.elem.clone());
                let at = lo[d];
                lo[d] = 0;
                len[d] = 0;
                el[d] = Aff::constant(0, 0);
                (lo, len, el, p.terms.clone(), at)
            });
            let mut out: Vec<SymPiece> = Vec::with_capacity(pieces.len());
            for p in pieces {
                if let Some(last) = out.last_mut() {
                    let same_rest = (0..nd).all(|e| {
                        e == d
                            || (last.lo[e] == p.lo[e]
                                && last.len[e] == p.len[e]
                                && last.elem[e] == p.elem[e])
                    }) && last.terms == p.terms;
                    if same_rest
                        && last.lo[d] + last.len[d] == p.lo[d]
                        && last.elem[d].shift(last.len[d]) == p.elem[d]
                    {
                        last.len[d] += p.len[d];
                        continue;
                    }
                }
                out.push(p);
            }
            pieces = out;
        }
        if pieces.len() == before {
            break;
        }
    }
    pieces.sort();
    Ok(pieces)
}

/// The runs of one device's table for one dim: `(new start, length, old start)`.
fn table_runs(m: &[i64]) -> Vec<(i64, i64, i64)> {
    let mut out: Vec<(i64, i64, i64)> = Vec::new();
    for (i, &o) in m.iter().enumerate() {
        if o < 0 {
            continue;
        }
        match out.last_mut() {
            Some(r) if r.0 + r.1 == i as i64 && r.2 + r.1 == o => r.1 += 1,
            _ => out.push((i as i64, 1, o)),
        }
    }
    out
}

/// A local step's table for dim `d` as runs whose old start is affine, checked on every device.
fn affine_runs(
    ctx: &Ctx,
    maps: &[Vec<Vec<i64>>],
    d: usize,
    old_len: i64,
) -> R<Vec<(i64, i64, Aff)>> {
    let mesh = ctx.mesh;
    let k = mesh.ndim();
    let zero = vec![0; k];
    let base = table_runs(&maps[mesh.rank(&zero) as usize][d]);
    let mut runs: Vec<(i64, i64, Aff)> = base
        .iter()
        .map(|&(n, l, o)| (n, l, Aff::constant(o, k)))
        .collect();
    for a in 0..k {
        if mesh.extent(a) < 2 {
            continue;
        }
        let mut unit = zero.clone();
        unit[a] = 1;
        let other = table_runs(&maps[mesh.rank(&unit) as usize][d]);
        if other.len() != base.len() {
            return Err(format!("dim {d}'s table runs differ between devices"));
        }
        for (r, (o, b)) in runs.iter_mut().zip(other.iter().zip(&base)) {
            if (o.0, o.1) != (b.0, b.1) {
                return Err(format!("dim {d}'s table runs differ between devices"));
            }
            r.2.coef[a] = o.2 - b.2;
        }
    }
    // Every device's table, entry by entry.
    let width = maps[0][d].len();
    let mut want = vec![-1i64; width];
    for (r, map) in maps.iter().enumerate() {
        let c = &ctx.coords[r];
        want.iter_mut().for_each(|w| *w = -1);
        for (n, l, o) in &runs {
            let o = o.eval(c);
            for t in 0..*l {
                want[(n + t) as usize] = o + t;
            }
        }
        if map[d] != want || map[d].iter().any(|&o| o >= old_len) {
            return Err(format!(
                "dim {d}'s table on rank {r} is not the affine runs"
            ));
        }
    }
    Ok(runs)
}

fn step(ctx: &mut Ctx, s: SymState, st: &Step) -> R<SymState> {
    let mesh = ctx.mesh;
    let nd = s.shape.len();
    let reshape = |shape: Vec<i64>, pieces: Vec<SymPiece>| -> R<SymState> {
        Ok(SymState {
            shape,
            pieces: merge(pieces)?,
        })
    };
    let window = |a: usize, dim: usize, w: i64| -> Vec<Aff> {
        (0..nd)
            .map(|d| {
                let mut x = Aff::constant(0, mesh.ndim());
                if d == dim {
                    x.coef[a] = w;
                }
                x
            })
            .collect()
    };
    match st {
        Step::AllGather { groups, dim } => {
            let a = ctx.axis_of(groups)?;
            if *dim >= nd {
                return Err("gather dim out of range".into());
            }
            let e = mesh.extent(a);
            let mut shape = s.shape.clone();
            shape[*dim] = shape[*dim].checked_mul(e).ok_or("shape overflow")?;
            let mut out = Vec::new();
            for j in 0..e {
                for p in &s.pieces {
                    let mut q = substitute(ctx, p, a, j)?;
                    q.lo[*dim] += j * s.shape[*dim];
                    out.push(q);
                }
            }
            reshape(shape, out)
        }
        Step::ReduceScatter { groups, dim, op } => {
            let a = ctx.axis_of(groups)?;
            let e = mesh.extent(a);
            if *dim >= nd || s.shape[*dim] % e != 0 {
                return Err("reduce-scatter dim does not split".into());
            }
            let pieces = s
                .pieces
                .iter()
                .map(|p| reduce(ctx, p, a, *op))
                .collect::<R<Vec<_>>>()?;
            let w = s.shape[*dim] / e;
            let mut len = s.shape.clone();
            len[*dim] = w;
            let red = SymState {
                shape: s.shape.clone(),
                pieces,
            };
            let out = cut(&ctx.bounds, &red, &window(a, *dim, w), &len)?;
            reshape(len, out)
        }
        Step::AllReduce { groups, op } => {
            let a = ctx.axis_of(groups)?;
            let pieces = s
                .pieces
                .iter()
                .map(|p| reduce(ctx, p, a, *op))
                .collect::<R<Vec<_>>>()?;
            reshape(s.shape, pieces)
        }
        Step::AllToAll {
            groups,
            split_dim,
            concat_dim,
        } => {
            let a = ctx.axis_of(groups)?;
            let e = mesh.extent(a);
            let (sd, cd) = (*split_dim, *concat_dim);
            if sd >= nd || cd >= nd || s.shape[sd] % e != 0 {
                return Err("all-to-all dims do not split".into());
            }
            let w = s.shape[sd] / e;
            let mut len = s.shape.clone();
            len[sd] = w;
            let mut shape = len.clone();
            shape[cd] = shape[cd].checked_mul(e).ok_or("shape overflow")?;
            let mut out = Vec::new();
            for i in 0..e {
                let sender = SymState {
                    shape: s.shape.clone(),
                    pieces: s
                        .pieces
                        .iter()
                        .map(|p| substitute(ctx, p, a, i))
                        .collect::<R<Vec<_>>>()?,
                };
                for mut q in cut(&ctx.bounds, &sender, &window(a, sd, w), &len)? {
                    q.lo[cd] += i * len[cd];
                    out.push(q);
                }
            }
            reshape(shape, out)
        }
        Step::Broadcast { groups, root } => {
            let a = ctx.axis_of(groups)?;
            if *root as i64 >= mesh.extent(a) {
                return Err("broadcast root out of range".into());
            }
            let pieces = s
                .pieces
                .iter()
                .map(|p| substitute(ctx, p, a, *root as i64))
                .collect::<R<Vec<_>>>()?;
            reshape(s.shape, pieces)
        }
        Step::Local { shape, maps } => {
            let n = mesh.size() as usize;
            if maps.len() != n || shape.len() != nd || shape.iter().any(|&x| x < 0) {
                return Err("local step of another rank count or rank".into());
            }
            for m in maps {
                if m.len() != nd || (0..nd).any(|d| m[d].len() as i64 != shape[d]) {
                    return Err("local table of another shape".into());
                }
            }
            let runs = (0..nd)
                .map(|d| affine_runs(ctx, maps, d, s.shape[d]))
                .collect::<R<Vec<_>>>()?;
            let combos: usize = runs.iter().map(|r| r.len()).product();
            if combos > MAX_SYMBOLIC_PIECES {
                return Err(format!("{combos} table boxes"));
            }
            let mut out = Vec::new();
            let mut idx = vec![0usize; nd];
            for _ in 0..combos {
                let start: Vec<Aff> = (0..nd).map(|d| runs[d][idx[d]].2.clone()).collect();
                let len: Vec<i64> = (0..nd).map(|d| runs[d][idx[d]].1).collect();
                for mut q in cut(&ctx.bounds, &s, &start, &len)? {
                    for d in 0..nd {
                        q.lo[d] += runs[d][idx[d]].0;
                    }
                    out.push(q);
                }
                for d in (0..nd).rev() {
                    idx[d] += 1;
                    if idx[d] < runs[d].len() {
                        break;
                    }
                    idx[d] = 0;
                }
            }
            reshape(shape.clone(), out)
        }
        Step::Zero { ranks } => {
            if ranks.is_empty() {
                return Ok(s);
            }
            let mut sorted = ranks.clone();
            sorted.sort_unstable();
            let axis = (0..mesh.ndim()).find(|&a| {
                let off: Vec<i64> = (0..mesh.size())
                    .filter(|&r| ctx.coords[r as usize][a] != 0)
                    .collect();
                off == sorted
            });
            let a = axis.ok_or("zeroed ranks that are not one axis off coordinate 0")?;
            let pieces = s
                .pieces
                .iter()
                .map(|p| {
                    let mut q = p.clone();
                    if q.terms.count > 0 && !q.terms.zero_unless.contains(&a) {
                        q.terms.zero_unless.push(a);
                        q.terms.zero_unless.sort_unstable();
                    }
                    q
                })
                .collect();
            reshape(s.shape, pieces)
        }
        Step::SendRecv { .. } => Err("a send-recv step (per-device messages)".into()),
    }
}

/// Box `a` minus box `b` (as disjoint boxes).
fn subtract(a: &(Vec<i64>, Vec<i64>), b: &(Vec<i64>, Vec<i64>)) -> Vec<(Vec<i64>, Vec<i64>)> {
    let nd = a.0.len();
    if !meets((&a.0, &a.1), (&b.0, &b.1)) {
        return vec![a.clone()];
    }
    let mut out = Vec::new();
    let mut rest = a.clone();
    for d in 0..nd {
        let (lo, hi) = (rest.0[d], rest.0[d] + rest.1[d]);
        let (blo, bhi) = (b.0[d].max(lo), (b.0[d] + b.1[d]).min(hi));
        if blo > lo {
            let mut p = rest.clone();
            p.1[d] = blo - lo;
            out.push(p);
        }
        if bhi < hi {
            let mut p = rest.clone();
            p.0[d] = bhi;
            p.1[d] = hi - bhi;
            out.push(p);
        }
        rest.0[d] = blo;
        rest.1[d] = bhi - blo;
    }
    out
}

/// The final state against the target; the places checked.
fn check_final(
    ctx: &Ctx,
    s: &SymState,
    target: &MeshLayout,
    corner: &[Aff],
    local: &[i64],
    bounds: &[(i64, i64)],
) -> R<()> {
    if s.shape != local {
        return Err("final shape is not the target's".into());
    }
    let sum_partial =
        !target.partial.is_empty() && target.partial.values().all(|&o| o == ReduceOp::Sum);
    for p in &s.pieces {
        for (d, want) in corner.iter().enumerate() {
            let want = want.shift(p.lo[d]);
            if p.elem[d] != want {
                return Err(format!(
                    "a piece at {:?} holds {} on dim {d}; the target has {want}",
                    p.lo, p.elem[d]
                ));
            }
        }
        let mut q = p.clone();
        if sum_partial {
            for &a in target.partial.keys() {
                q = reduce(ctx, &q, a, ReduceOp::Sum)?;
            }
        }
        let t = &q.terms;
        if t.count != 1 || t.own.iter().any(|&o| o) || !t.zero_unless.is_empty() {
            return Err(format!("a piece at {:?} holds terms {t:?}", p.lo));
        }
    }
    if any_overlap(s.pieces.iter().map(|p| (&p.lo[..], &p.len[..])).collect()) {
        return Err("overlapping pieces".into());
    }
    // Uncovered cells must be target padding on every device.
    let mut holes = vec![(vec![0; local.len()], local.to_vec())];
    for p in &s.pieces {
        let b = (p.lo.clone(), p.len.clone());
        holes = holes.iter().flat_map(|h| subtract(h, &b)).collect();
        if holes.len() > MAX_SYMBOLIC_PIECES {
            return Err("too many uncovered boxes".into());
        }
    }
    for h in &holes {
        if h.1.contains(&0) {
            continue;
        }
        let padding =
            (0..local.len()).any(|d| corner[d].range(bounds).0 + h.0[d] >= target.shape[d]);
        if !padding {
            return Err(format!("cells at {:?} hold nothing", h.0));
        }
    }
    Ok(())
}

/// The target's places over all devices: every element once per device of the axes that cut
/// no dim (each dim's pieces partition it).
fn places(target: &MeshLayout) -> i64 {
    let mesh = &target.mesh;
    let cutting: Vec<usize> = target.dims.iter().flatten().flatten().copied().collect();
    let copies: i64 = (0..mesh.ndim())
        .filter(|a| !cutting.contains(a))
        .map(|a| mesh.extent(a))
        .product();
    target.shape.iter().product::<i64>() * copies
}

/// Every device's buffer after `plan`, from `source` (or why the plan is not read here).
pub fn execute(source: &MeshLayout, plan: &Plan) -> R<SymState> {
    if plan.ranks != source.mesh.size() {
        return Err("a plan of another rank count".into());
    }
    run(&mut context(source), source, &plan.steps)
}

/// The steps from `source`'s buffers.
fn run(ctx: &mut Ctx, source: &MeshLayout, steps: &[Step]) -> R<SymState> {
    let (corner, local) = affine_layout(source)?;
    let pieces = if local.contains(&0) {
        Vec::new()
    } else {
        vec![SymPiece {
            lo: vec![0; local.len()],
            len: local.clone(),
            elem: corner,
            terms: Terms {
                count: 1,
                own: vec![true; ctx.partials.len()],
                zero_unless: Vec::new(),
            },
        }]
    };
    let mut s = SymState {
        shape: local,
        pieces,
    };
    for (k, st) in steps.iter().enumerate() {
        s = step(ctx, s, st).map_err(|w| format!("step {k} ({}): {w}", st.name()))?;
    }
    Ok(s)
}

fn context(source: &MeshLayout) -> Ctx<'_> {
    let mesh = &source.mesh;
    Ctx {
        mesh,
        partials: source.partial.keys().copied().collect(),
        groups: BTreeMap::new(),
        coords: (0..mesh.size()).map(|r| mesh.coords(r)).collect(),
        bounds: (0..mesh.ndim()).map(|a| (0, mesh.extent(a))).collect(),
    }
}

/// Decides "`plan` takes `source` to `target`" symbolically, or says why it does not apply
/// (`Err`: not a refutation). The caller has checked the claim's shapes and rank counts.
pub fn decide(source: &MeshLayout, target: &MeshLayout, plan: &Plan) -> R<Symbolic> {
    if target.mesh != source.mesh || target.shape != source.shape {
        return Err("another mesh or shape".into());
    }
    if plan.ranks != source.mesh.size() {
        return Err("a plan of another rank count".into());
    }
    let (tcorner, tlocal) = affine_layout(target)?;
    let mut ctx = context(source);
    // The final states, one per receiver class (one class unless a final send-recv splits).
    let finals: Vec<Class> = match plan.steps.split_last() {
        Some((Step::SendRecv { shape, messages }, before)) => {
            let pre = run(&mut ctx, source, before)?;
            let k = before.len();
            send_recv_classes(&ctx, &pre, shape, messages, &tcorner)
                .map_err(|w| format!("step {k} (send-recv): {w}"))?
        }
        _ => {
            let s = run(&mut ctx, source, &plan.steps)?;
            vec![(ctx.bounds.clone(), s, tcorner)]
        }
    };
    let mut h = Sha256::new();
    for (phi, s, corner) in &finals {
        check_final(&ctx, s, target, corner, &tlocal, phi).map_err(|w| {
            if finals.len() > 1 {
                format!("receivers at {phi:?}: {w}")
            } else {
                w
            }
        })?;
        h.update(format!("{phi:?} {:?}", s.shape));
        for p in &s.pieces {
            h.update(format!("{:?}", p));
        }
    }
    Ok(Symbolic {
        places: places(target),
        digest: super::hex(h),
        pieces: finals.iter().map(|f| f.1.pieces.len()).sum(),
        classes: finals.len(),
    })
}

/// One receiver class of a final send-recv: per mesh axis an interval of coordinates (the
/// class is their product), the receivers' new buffer, and the target's corner on the class.
type Class = (Vec<(i64, i64)>, SymState, Vec<Aff>);

/// Most receiver classes a final send-recv is split into (2^10); never the device count.
pub const MAX_CLASSES: i64 = 1 << 10;

/// Most boxes a final send-recv lands, over all receivers (2^22).
pub const MAX_LANDED: usize = 1 << 22;

/// What one receiver's messages land in its buffer: boxes whose elements are constants (the
/// receiver's own values), merged where they continue each other, so the way the plan cuts
/// its messages is not read.
#[derive(Debug)]
struct Received(Vec<SymPiece>);

impl Received {
    /// Everything but the elements: equal across a receiver class.
    fn same_shape(&self, o: &Received) -> bool {
        self.0.len() == o.0.len()
            && self
                .0
                .iter()
                .zip(&o.0)
                .all(|(x, y)| x.lo == y.lo && x.len == y.len && x.terms == y.terms)
    }
}

/// Whether boxes `a` and `b` (corner, extents; none empty) share a cell.
fn meets(a: (&[i64], &[i64]), b: (&[i64], &[i64])) -> bool {
    (0..a.0.len()).all(|d| a.0[d] < b.0[d] + b.1[d] && b.0[d] < a.0[d] + a.1[d])
}

/// Whether two of these boxes (corner, extents) meet; empty boxes meet none.
fn any_overlap(mut boxes: Vec<(&[i64], &[i64])>) -> bool {
    boxes.retain(|b| !b.1.contains(&0));
    boxes.sort_unstable_by_key(|b| b.0[0]);
    for (i, a) in boxes.iter().enumerate() {
        for b in &boxes[i + 1..] {
            if b.0[0] >= a.0[0] + a.1[0] {
                break;
            }
            if meets(*a, *b) {
                return true;
            }
        }
    }
    false
}

/// The addends `t` of a sender at `s`, named relative to its receiver at `c`.
fn seen_by(ctx: &Ctx, t: &Terms, s: &[i64], c: &[i64]) -> R<Terms> {
    if t.count == 0 || t.zero_unless.iter().any(|&z| s[z] != 0) {
        return Ok(Terms::none(ctx.partials.len()));
    }
    for (i, &a) in ctx.partials.iter().enumerate() {
        if t.own[i] && s[a] != c[a] {
            return Err("addends moved across their partial axis".into());
        }
    }
    Ok(Terms {
        count: t.count,
        own: t.own.clone(),
        zero_unless: Vec::new(),
    })
}

/// What the receiver at rank `r` receives: each message's window of its sender's buffer
/// (the symbolic pieces evaluated at the sender's coordinates), cut by the pieces. Its
/// messages' landing boxes must be disjoint (a later message would overwrite an earlier one,
/// with padding where its window holds none).
fn receive(
    ctx: &Ctx,
    pre: &SymState,
    shape: &[i64],
    list: &[&super::plan::Message],
    r: usize,
) -> R<Received> {
    let (nd, k) = (shape.len(), ctx.bounds.len());
    let c = &ctx.coords[r];
    let mut out = Vec::new();
    for m in list {
        if (0..nd).any(|d| {
            m.len[d] < 0
                || m.dst_start[d] < 0
                || m.dst_start[d] + m.len[d] > shape[d]
                || m.src_start[d] < 0
                || m.src_start[d] + m.len[d] > pre.shape[d]
        }) {
            return Err(format!("rank {r} receives a message outside a buffer"));
        }
        // The sender's window (constant corner) of the symbolic state, then its values.
        let s = &ctx.coords[m.src as usize];
        let at: Vec<Aff> = m.src_start.iter().map(|&x| Aff::constant(x, k)).collect();
        for mut q in cut(&ctx.bounds, pre, &at, &m.len)? {
            for (lo, at) in q.lo.iter_mut().zip(&m.dst_start) {
                *lo += at;
            }
            q.elem = q.elem.iter().map(|e| Aff::constant(e.eval(s), k)).collect();
            q.terms = seen_by(ctx, &q.terms, s, c)?;
            out.push(q);
        }
    }
    let boxes: Vec<(&[i64], &[i64])> = list
        .iter()
        .map(|m| (&m.dst_start[..], &m.len[..]))
        .collect();
    if any_overlap(boxes) {
        return Err(format!("two messages to rank {r} land on one cell"));
    }
    Ok(Received(merge(out)?))
}

/// A final send-recv, receiver class by receiver class. Every receiver's intake is computed
/// from the symbolic state before the step ([`receive`]: its messages' windows of their
/// senders' pieces, merged). A class is a box of mesh coordinates, one interval per axis;
/// within it every receiver must receive the same boxes with the same addends, and each box's
/// global element must be one affine function of the receiver's coordinates (fitted from the
/// class's origin and its unit steps, then compared on every receiver). Who sends is not
/// read: only what lands. An axis's interval is cut at a receiver's coordinate where the
/// receiver breaks the fit differing from the origin on that axis alone (on all the axes
/// where it is off the origin when none does alone). Returns per class its intervals, the
/// receivers' new buffer and the target's corner on the class.
fn send_recv_classes(
    ctx: &Ctx,
    pre: &SymState,
    shape: &[i64],
    messages: &[super::plan::Message],
    tcorner: &[Aff],
) -> R<Vec<Class>> {
    let mesh = ctx.mesh;
    let (n, k, nd) = (mesh.size(), mesh.ndim(), shape.len());
    let mut by_dst: Vec<Vec<&super::plan::Message>> = vec![Vec::new(); n as usize];
    for m in messages {
        let ok = |r: i64| (0..n).contains(&r);
        if !ok(m.src)
            || !ok(m.dst)
            || [&m.src_start, &m.dst_start, &m.len]
                .iter()
                .any(|v| v.len() != nd)
        {
            return Err("a message out of range".into());
        }
        by_dst[m.dst as usize].push(m);
    }
    let mut total = 0usize;
    let mut got = Vec::with_capacity(n as usize);
    for (r, list) in by_dst.iter().enumerate() {
        let x = receive(ctx, pre, shape, list, r)?;
        total += x.0.len() + by_dst[r].len();
        if total > MAX_LANDED {
            return Err(format!("more than {MAX_LANDED} boxes received"));
        }
        got.push(x);
    }
    // Per axis, the first coordinates of its intervals (0 first); a class is one interval
    // per axis.
    let mut cuts: Vec<Vec<i64>> = vec![vec![0]; k];
    'fit: loop {
        let count: i64 = cuts.iter().map(|c| c.len() as i64).product();
        if count > MAX_CLASSES || (count >= n && n > 1) {
            return Err(format!(
                "{count} receiver classes (no fewer than the devices)"
            ));
        }
        let mut classes: Vec<Vec<(i64, i64)>> = vec![Vec::new()];
        for (g, starts) in cuts.iter().enumerate() {
            let ends = starts.iter().skip(1).copied().chain([mesh.extent(g)]);
            let intervals: Vec<(i64, i64)> = starts.iter().copied().zip(ends).collect();
            classes = classes
                .into_iter()
                .flat_map(|p| {
                    intervals.iter().map(move |&iv| {
                        let mut q = p.clone();
                        q.push(iv);
                        q
                    })
                })
                .collect();
        }
        let mut out = Vec::new();
        for class in classes {
            let phi: Vec<i64> = class.iter().map(|iv| iv.0).collect();
            let free: Vec<usize> = (0..k).filter(|&g| class[g].1 - class[g].0 > 1).collect();
            let base = &got[mesh.rank(&phi) as usize];
            // Per landed box and dim: its global element, affine in the free coordinates
            // (`base + sum_g coef_g * (c_g - phi_g)`).
            let mut aff: Vec<Vec<Aff>> = base.0.iter().map(|l| l.elem.clone()).collect();
            for &g in &free {
                let mut c = phi.clone();
                c[g] += 1;
                let unit = &got[mesh.rank(&c) as usize];
                if !unit.same_shape(base) {
                    cuts[g].push(c[g]);
                    cuts[g].sort_unstable();
                    continue 'fit;
                }
                for (f, (u, b)) in aff.iter_mut().zip(unit.0.iter().zip(&base.0)) {
                    for (fd, (ud, bd)) in f.iter_mut().zip(u.elem.iter().zip(&b.elem)) {
                        fd.coef[g] = ud.k - bd.k;
                        fd.k -= fd.coef[g] * phi[g];
                    }
                }
            }
            let fits = |c: &[i64]| {
                let x = &got[mesh.rank(c) as usize];
                x.same_shape(base)
                    && x.0
                        .iter()
                        .zip(&aff)
                        .all(|(l, f)| l.elem.iter().zip(f).all(|(e, f)| e.k == f.eval(c)))
            };
            for r in 0..n as usize {
                let c = &ctx.coords[r];
                if (0..k).any(|g| c[g] < class[g].0 || c[g] >= class[g].1) || fits(c) {
                    continue;
                }
                // A new interval from the receiver's coordinate on the axes where it breaks
                // the fit alone (on all the axes where it is off the class's origin if none).
                let off: Vec<usize> = free.iter().copied().filter(|&g| c[g] != phi[g]).collect();
                if off.is_empty() {
                    return Err(format!("rank {r} breaks the fit at its class's origin"));
                }
                let alone: Vec<usize> = off
                    .iter()
                    .copied()
                    .filter(|&g| {
                        let mut p = phi.clone();
                        p[g] = c[g];
                        !fits(&p)
                    })
                    .collect();
                for g in if alone.is_empty() { off } else { alone } {
                    cuts[g].push(c[g]);
                    cuts[g].sort_unstable();
                }
                continue 'fit;
            }
            let pieces = merge(
                base.0
                    .iter()
                    .zip(aff)
                    .map(|(l, elem)| SymPiece {
                        lo: l.lo.clone(),
                        len: l.len.clone(),
                        elem,
                        terms: l.terms.clone(),
                    })
                    .collect(),
            )?;
            // The target's corner on the class: the coordinates of its one-point intervals.
            let on_class = |f: &Aff| {
                (0..k)
                    .filter(|&g| class[g].1 - class[g].0 == 1)
                    .fold(f.clone(), |f, g| f.with(g, phi[g]))
            };
            let corner = tcorner.iter().map(on_class).collect();
            out.push((
                class,
                SymState {
                    shape: shape.to_vec(),
                    pieces,
                },
                corner,
            ));
        }
        return Ok(out);
    }
}
