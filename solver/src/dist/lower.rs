//! Moves between mesh layouts and their lowering to plan steps (untrusted: every lowered plan
//! is certified by `certify::dist`). Each move's buffers follow the layouts' padded local
//! shapes; a collective is preceded by a local pack when its pieces must follow torch.chunk's
//! rule and followed by a local unpack that puts every element at its new local address.

use certify::dist::{Message, Step};
use layout::mesh::{Block, MeshLayout, ReduceOp};

/// A move from one mesh layout to the next.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Move {
    /// Gather the pieces of `axis` (innermost on `dim`).
    AllGather {
        /// Mesh axis.
        axis: usize,
        /// Tensor dim.
        dim: usize,
    },
    /// Reduce the partial `axis` and scatter it onto `dim` (innermost).
    ReduceScatter {
        /// Mesh axis.
        axis: usize,
        /// Tensor dim.
        dim: usize,
        /// Reduction.
        op: ReduceOp,
    },
    /// Reduce the partial `axis` everywhere.
    AllReduce {
        /// Mesh axis.
        axis: usize,
        /// Reduction.
        op: ReduceOp,
    },
    /// Move `axis` from innermost on `from` to innermost on `to`.
    AllToAll {
        /// Mesh axis.
        axis: usize,
        /// Tensor dim it leaves.
        from: usize,
        /// Tensor dim it cuts next.
        to: usize,
    },
    /// Keep one's piece of a replicated `axis` on `dim` (no communication).
    Slice {
        /// Mesh axis.
        axis: usize,
        /// Tensor dim.
        dim: usize,
    },
    /// Replicated `axis` becomes partial under `op`: for a sum, all but coordinate 0 zero
    /// their copy; for max, min and avg every copy already is an addend (the reduction of equal
    /// addends is the value), so no data changes.
    Zero {
        /// Mesh axis.
        axis: usize,
        /// The reduction the partial axis is read under.
        op: ReduceOp,
    },
    /// The single device's tensor to every device.
    Broadcast,
    /// Point-to-point: each device receives exactly what it lacks from a device that holds it.
    SendRecv,
    /// Same blocks, another padded local shape.
    Repack,
}

impl Move {
    /// Text for reports: `all-gather(tp, dim 1)`.
    pub fn describe(&self, l: &MeshLayout) -> String {
        let n = |a: usize| l.mesh.name(a).to_string();
        match *self {
            Move::AllGather { axis, dim } => format!("all-gather over {} on dim {dim}", n(axis)),
            Move::ReduceScatter { axis, dim, op } => format!(
                "reduce-scatter({}) over {} onto dim {dim}",
                op.name(),
                n(axis)
            ),
            Move::AllReduce { axis, op } => format!("all-reduce({}) over {}", op.name(), n(axis)),
            Move::AllToAll { axis, from, to } => {
                format!("all-to-all over {} (dim {from} -> dim {to})", n(axis))
            }
            Move::Slice { axis, dim } => format!("local slice of dim {dim} by {}", n(axis)),
            Move::Zero {
                axis,
                op: ReduceOp::Sum,
            } => format!("local zero off coordinate 0 of {}", n(axis)),
            Move::Zero { axis, op } => format!(
                "partial({}) over {}: every copy is an addend (no data moves)",
                op.name(),
                n(axis)
            ),
            Move::Broadcast => "broadcast".into(),
            Move::SendRecv => "send-recv (point-to-point)".into(),
            Move::Repack => "local repack".into(),
        }
    }
}

fn innermost(l: &MeshLayout, d: usize) -> Option<usize> {
    match l.dims[d].last() {
        Some(level) if level.len() == 1 => Some(level[0]),
        _ => None,
    }
}

/// The layout after `m`, when `m` applies to `a`.
pub fn apply(a: &MeshLayout, m: Move) -> Option<MeshLayout> {
    // A strided (interleaved) layout changes only by reductions and zeroing here; its pieces
    // reach any other layout by send-recv.
    let keeps_dims = matches!(m, Move::AllReduce { .. } | Move::Zero { .. });
    if !a.is_boxed() && !keeps_dims {
        return None;
    }
    let mut b = a.clone();
    match m {
        Move::AllGather { axis, dim } => {
            if innermost(a, dim) != Some(axis) {
                return None;
            }
            b.dims[dim].pop();
        }
        Move::ReduceScatter { axis, dim, op } => {
            if a.partial.get(&axis) != Some(&op) {
                return None;
            }
            b.partial.remove(&axis);
            b.dims[dim].push(vec![axis]);
        }
        Move::AllReduce { axis, op } => {
            if a.partial.get(&axis) != Some(&op) {
                return None;
            }
            b.partial.remove(&axis);
        }
        Move::AllToAll { axis, from, to } => {
            if from == to || innermost(a, from) != Some(axis) {
                return None;
            }
            b.dims[from].pop();
            b.dims[to].push(vec![axis]);
        }
        Move::Slice { axis, dim } => {
            if !a.replicated_axes().contains(&axis) || a.maximal.is_some() {
                return None;
            }
            b.dims[dim].push(vec![axis]);
        }
        Move::Zero { axis, op } => {
            if !a.replicated_axes().contains(&axis)
                || a.maximal.is_some()
                || a.partial.values().any(|&o| o != op)
            {
                return None;
            }
            b.partial.insert(axis, op);
        }
        Move::Broadcast => {
            a.maximal?;
            b.maximal = None;
        }
        Move::SendRecv | Move::Repack => return None,
    }
    Some(b)
}

fn identity(n: i64) -> Vec<i64> {
    (0..n).collect()
}

/// Per-dim map for new index `u` of a block `new` stored from `old` (same rank).
fn rebase(new: (i64, i64), new_pad: i64, old: (i64, i64)) -> Vec<i64> {
    (0..new_pad)
        .map(|u| {
            if new.0 + u < new.1 {
                new.0 + u - old.0
            } else {
                -1
            }
        })
        .collect()
}

/// The group of each of the `n` ranks among `groups` (the first that names it; none: empty),
/// built once per move (a lookup per rank would cost ranks squared on a 1-D mesh).
fn group_of_rank(groups: &[Vec<i64>], n: i64) -> Vec<&[i64]> {
    let mut of: Vec<&[i64]> = vec![&[]; n.max(0) as usize];
    for g in groups {
        for &r in g {
            if let Some(at) = usize::try_from(r).ok().and_then(|r| of.get_mut(r)) {
                if at.is_empty() {
                    *at = g;
                }
            }
        }
    }
    of
}

/// Pack along `dim`: `p` pieces of `c` where piece `m` is member `m`'s block in `b` (relative to
/// this rank's block `own` in `a`).
fn pack_map(own: (i64, i64), pieces: &[(i64, i64)], c: i64) -> Vec<i64> {
    let mut v = Vec::new();
    for &(lo, hi) in pieces {
        for s in 0..c {
            v.push(if lo + s < hi { lo + s - own.0 } else { -1 });
        }
    }
    v
}

/// Unpack along `dim` after a concatenation of members' `a` blocks (each padded to `c`): new
/// index `u` of block `new` comes from the member whose block holds it. `None` when no member
/// holds an element of the block.
fn unpack_map(
    new: (i64, i64),
    new_pad: i64,
    members: &[(i64, i64)],
    c: i64,
    literal: bool,
) -> Option<Vec<i64>> {
    if literal {
        // DTensor's reading: member m holds chunk m of the block (torch.chunk), padded to c.
        let p = members.len() as i64;
        let len = new.1 - new.0;
        let ch = (len + p - 1) / p;
        return Some(
            (0..new_pad)
                .map(|u| {
                    if u < len && ch > 0 {
                        (u / ch) * c + u % ch
                    } else {
                        -1
                    }
                })
                .collect(),
        );
    }
    // Index u of the block comes from the first member whose block holds it: filled member by
    // member over the overlap only (a search per index would cost indices x members).
    let mut from: Vec<Option<i64>> = vec![None; new_pad.max(0) as usize];
    let end = new.1.min(new.0 + new_pad);
    for (m, &(lo, hi)) in members.iter().enumerate() {
        for g in lo.max(new.0)..hi.min(end) {
            from[(g - new.0) as usize].get_or_insert(m as i64 * c + g - lo);
        }
    }
    (0..new_pad)
        .map(|u| {
            if new.0 + u >= new.1 {
                Some(-1)
            } else {
                from[u as usize]
            }
        })
        .collect()
}

/// The steps of move `m` from `a` to `b` (`None` when the move does not realize `b`); a
/// send-recv takes each piece from a holder in the receiver's node when there is one.
pub fn lower(a: &MeshLayout, b: &MeshLayout, m: Move, ranks_per_node: i64) -> Option<Vec<Step>> {
    lower_as(a, b, m, ranks_per_node, false)
}

/// [`lower`], or with `literal` the reading a peer (DTensor) gives a gather: member `m`'s
/// buffer is taken to be chunk `m` of the gathered block, whether or not it is.
pub fn lower_as(
    a: &MeshLayout,
    b: &MeshLayout,
    m: Move,
    ranks_per_node: i64,
    literal: bool,
) -> Option<Vec<Step>> {
    let n = a.mesh.size();
    let (al, bl) = (a.local_shape(), b.local_shape());
    let nd = a.shape.len();
    // Every move but these reads one box per device (a strided layout holds several).
    let needs_boxes = !matches!(
        m,
        Move::SendRecv | Move::AllReduce { .. } | Move::Zero { .. }
    );
    if needs_boxes && (!a.is_boxed() || !b.is_boxed()) {
        return None;
    }
    let blocks = |l: &MeshLayout| -> Vec<Block> {
        if needs_boxes {
            (0..n).map(|r| l.block(r)).collect()
        } else {
            Vec::new()
        }
    };
    let (ablk, bblk) = (blocks(a), blocks(b));
    let local_to_b = |r: usize| -> Vec<Vec<i64>> {
        (0..nd)
            .map(|e| rebase(bblk[r][e], bl[e], ablk[r][e]))
            .collect()
    };
    Some(match m {
        Move::AllGather { axis, dim } => {
            let groups = a.mesh.groups(&[axis]);
            let group_of = group_of_rank(&groups, n);
            let mut maps = Vec::new();
            for r in 0..n {
                let g = group_of[r as usize];
                let members: Vec<(i64, i64)> = g.iter().map(|&x| ablk[x as usize][dim]).collect();
                let mut mp = local_to_b(r as usize);
                mp[dim] = unpack_map(bblk[r as usize][dim], bl[dim], &members, al[dim], literal)?;
                maps.push(mp);
            }
            vec![
                Step::AllGather { groups, dim },
                Step::Local { shape: bl, maps },
            ]
        }
        Move::ReduceScatter { axis, dim, op } => {
            let groups = a.mesh.groups(&[axis]);
            let p = groups[0].len() as i64;
            let mut shape = al.clone();
            shape[dim] = p * bl[dim];
            let group_of = group_of_rank(&groups, n);
            let maps = (0..n)
                .map(|r| {
                    let g = group_of[r as usize];
                    let pieces: Vec<(i64, i64)> =
                        g.iter().map(|&x| bblk[x as usize][dim]).collect();
                    let mut mp: Vec<Vec<i64>> = al.iter().map(|&e| identity(e)).collect();
                    mp[dim] = pack_map(ablk[r as usize][dim], &pieces, bl[dim]);
                    mp
                })
                .collect();
            vec![
                Step::Local { shape, maps },
                Step::ReduceScatter { groups, dim, op },
            ]
        }
        Move::AllReduce { axis, op } => vec![Step::AllReduce {
            groups: a.mesh.groups(&[axis]),
            op,
        }],
        Move::AllToAll { axis, from, to } => {
            let groups = a.mesh.groups(&[axis]);
            let p = groups[0].len() as i64;
            let mut packed = al.clone();
            packed[to] = p * bl[to];
            let mut pre = Vec::new();
            let mut post = Vec::new();
            let group_of = group_of_rank(&groups, n);
            for r in 0..n {
                let g = group_of[r as usize];
                let pieces: Vec<(i64, i64)> = g.iter().map(|&x| bblk[x as usize][to]).collect();
                let mut mp: Vec<Vec<i64>> = al.iter().map(|&e| identity(e)).collect();
                mp[to] = pack_map(ablk[r as usize][to], &pieces, bl[to]);
                pre.push(mp);
                let members: Vec<(i64, i64)> = g.iter().map(|&x| ablk[x as usize][from]).collect();
                let mut q: Vec<Vec<i64>> = (0..nd)
                    .map(|e| rebase(bblk[r as usize][e], bl[e], ablk[r as usize][e]))
                    .collect();
                q[to] = identity(bl[to]);
                q[from] = unpack_map(
                    bblk[r as usize][from],
                    bl[from],
                    &members,
                    al[from],
                    literal,
                )?;
                post.push(q);
            }
            vec![
                Step::Local {
                    shape: packed,
                    maps: pre,
                },
                Step::AllToAll {
                    groups,
                    split_dim: to,
                    concat_dim: from,
                },
                Step::Local {
                    shape: bl,
                    maps: post,
                },
            ]
        }
        Move::Slice { .. } | Move::Repack => {
            vec![Step::Local {
                shape: bl.clone(),
                maps: (0..n as usize).map(local_to_b).collect(),
            }]
        }
        Move::Zero {
            axis,
            op: ReduceOp::Sum,
        } => {
            let ranks = (0..n).filter(|&r| a.mesh.coords(r)[axis] != 0).collect();
            vec![Step::Zero { ranks }]
        }
        Move::Zero { .. } => Vec::new(),
        Move::Broadcast => {
            let root = a.maximal? as usize;
            vec![Step::Broadcast {
                groups: vec![(0..n).collect()],
                root,
            }]
        }
        Move::SendRecv => {
            let messages = send_recv_messages(a, &pieces_of(a), &pieces_of(b), &|h, r| {
                i64::from(h / ranks_per_node != r / ranks_per_node)
            })?;
            vec![Step::SendRecv {
                shape: bl,
                messages,
            }]
        }
    })
}

/// Every rank's pieces ([`MeshLayout::pieces`]): (global box, local corner) each.
pub(crate) type Pieces = Vec<Vec<(Block, Vec<i64>)>>;

/// The pieces of every rank of `l`.
pub(crate) fn pieces_of(l: &MeshLayout) -> Pieces {
    (0..l.mesh.size()).map(|r| l.pieces(r)).collect()
}

/// For each target rank, each of its pieces cut by the source's interval boundaries into
/// cells, each from one holder: itself when it holds it, else the holder `prefer` ranks lowest
/// (ties: the holder that sends fewest messages so far, then the nearest rank number).
pub(crate) fn send_recv_messages(
    a: &MeshLayout,
    ap: &Pieces,
    bp: &Pieces,
    prefer: &dyn Fn(i64, i64) -> i64,
) -> Option<Vec<Message>> {
    let mut msgs = Vec::new();
    send_recv_cells(a, ap, bp, prefer, &mut |c| {
        msgs.push(Message {
            src: c.src,
            dst: c.dst,
            src_start: c.src_start.to_vec(),
            dst_start: c.dst_start.to_vec(),
            len: c.cell.iter().map(|(lo, hi)| hi - lo).collect(),
        });
    })?;
    Some(msgs)
}

/// Per dim, the sorted distinct intervals of the source pieces (a tensor of `nd` dims). On one
/// dim any two are equal or disjoint: a device's runs depend only on its coordinates on the
/// axes that cut the dim, and devices that differ there hold disjoint elements.
pub(crate) fn source_cuts(pieces: &Pieces, nd: usize) -> Vec<Vec<(i64, i64)>> {
    let mut cuts: Vec<Vec<(i64, i64)>> = vec![Vec::new(); nd];
    for (bx, _) in pieces.iter().flatten() {
        for d in 0..nd {
            cuts[d].push(bx[d]);
        }
    }
    for c in cuts.iter_mut() {
        c.sort();
        c.dedup();
    }
    cuts
}

/// The cuts of one dim (sorted, pairwise disjoint) that meet `[t.0, t.1)`, with their index.
pub(crate) fn overlapping(
    cuts: &[(i64, i64)],
    t: (i64, i64),
) -> impl Iterator<Item = (usize, &(i64, i64))> {
    let first = cuts.partition_point(|iv| iv.1 <= t.0);
    cuts[first..]
        .iter()
        .enumerate()
        .take_while(move |(_, iv)| iv.0 < t.1)
        .filter(move |(_, iv)| iv.0 < iv.1 && iv.0.max(t.0) < iv.1.min(t.1))
        .map(move |(k, iv)| (first + k, iv))
}

/// One cell of a send-recv: from `src` to `dst`, the global box `cell`, at `src_start` in the
/// source buffer and `dst_start` in the target buffer.
pub(crate) struct Cell<'a> {
    pub src: i64,
    pub dst: i64,
    pub cell: &'a [(i64, i64)],
    pub src_start: &'a [i64],
    pub dst_start: &'a [i64],
}

/// What [`send_recv_cells`] calls per cell.
pub(crate) type CellVisitor<'a> = dyn FnMut(&Cell) + 'a;

/// The cells of [`send_recv_messages`], in message order, without building messages (the cost
/// model visits millions of them).
pub(crate) fn send_recv_cells(
    a: &MeshLayout,
    ap: &Pieces,
    bp: &Pieces,
    prefer: &dyn Fn(i64, i64) -> i64,
    visit: &mut CellVisitor,
) -> Option<()> {
    if !a.partial.is_empty() {
        return None;
    }
    let nd = a.shape.len();
    let cuts = source_cuts(ap, nd);
    // Holders of each source box, named by its interval index per dim: (rank, box, corner).
    type Holder<'p> = (i64, &'p Block, &'p [i64]);
    let mut holders: std::collections::BTreeMap<Vec<u32>, Vec<Holder>> = Default::default();
    for (r, ps) in ap.iter().enumerate() {
        for (bx, at) in ps {
            let key: Vec<u32> = (0..nd)
                .map(|d| cuts[d].binary_search(&bx[d]).ok().map(|i| i as u32))
                .collect::<Option<_>>()?;
            holders.entry(key).or_default().push((r as i64, bx, at));
        }
    }
    let mut load = vec![0i64; ap.len()];
    let mut key = vec![0u32; nd];
    let mut cell = vec![(0i64, 0i64); nd];
    let (mut ss, mut ds) = (vec![0i64; nd], vec![0i64; nd]);
    for (r, ps) in bp.iter().enumerate() {
        let r = r as i64;
        for (t, tat) in ps {
            // Per dim, the pieces of t cut by the source intervals, with the interval's index.
            let per_dim: Vec<Vec<((i64, i64), u32)>> = (0..nd)
                .map(|d| {
                    overlapping(&cuts[d], t[d])
                        .map(|(k, iv)| ((iv.0.max(t[d].0), iv.1.min(t[d].1)), k as u32))
                        .collect()
                })
                .collect();
            if per_dim.iter().any(|v| v.is_empty()) {
                return None;
            }
            let mut idx = vec![0usize; nd];
            'cells: loop {
                for d in 0..nd {
                    (cell[d], key[d]) = per_dim[d][idx[d]];
                }
                let hs = holders.get(&key[..])?;
                let &(src, sb, sat) = match hs.iter().find(|h| h.0 == r) {
                    Some(h) => h,
                    None => hs.iter().min_by_key(|h| {
                        (prefer(h.0, r), load[h.0 as usize], (h.0 - r).abs(), h.0)
                    })?,
                };
                if src != r {
                    load[src as usize] += 1;
                }
                for d in 0..nd {
                    ss[d] = cell[d].0 - sb[d].0 + sat[d];
                    ds[d] = cell[d].0 - t[d].0 + tat[d];
                }
                visit(&Cell {
                    src,
                    dst: r,
                    cell: &cell,
                    src_start: &ss,
                    dst_start: &ds,
                });
                let mut d = nd;
                loop {
                    if d == 0 {
                        break 'cells;
                    }
                    d -= 1;
                    idx[d] += 1;
                    if idx[d] < per_dim[d].len() {
                        continue 'cells;
                    }
                    idx[d] = 0;
                }
            }
        }
    }
    Some(())
}
