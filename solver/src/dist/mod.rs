//! Redistribution planning: from a source to a target mesh layout (same mesh), the sequence of
//! collectives with the least predicted time under an alpha-beta model ([`cost`]), every plan
//! lowered to buffer steps ([`lower`]) and certified by `certify::dist`.
//!
//! The search is Dijkstra over mesh layouts: a move is one collective or local step on one mesh
//! axis (all-gather, reduce-scatter, all-reduce, all-to-all, local slice, zero, broadcast), plus a
//! point-to-point send-recv straight to the target from any layout without partials, in which
//! each device receives exactly the elements it lacks (so the bytes it moves are the least any
//! plan can move). Uneven shards and non-power-of-two meshes go through the same moves: the
//! local packs follow torch.chunk's rule.
//!
//! ```
//! use layout::{mesh::Mesh, notation::dtensor};
//! use solver::dist::{plan, PlanOptions};
//! let m = Mesh::parse("dp=2,tp=4").unwrap();
//! let at = |p: &str| dtensor::to_layout(&m, &[8, 8], &dtensor::parse_placements(p).unwrap()).unwrap();
//! let p = plan(&at("[Shard(0), Replicate()]"), &at("[Replicate(), Shard(1)]"), &PlanOptions::default()).unwrap();
//! // Each device receives the 8 elements it lacks (JAX gathers all 64 and slices).
//! assert_eq!(p.max_recv_elems(), 8);
//! assert!(p.certificate.is_some());
//! ```

pub mod cost;
pub mod lower;
pub mod peer;
pub mod xla;

use std::collections::{BTreeMap, BTreeSet, BinaryHeap};

use certify::dist::{DistCertificate, DistError, Plan, Step};
use layout::mesh::{MeshLayout, ReduceOp};

pub use cost::{Link, Topology};
pub use lower::Move;
use lower::{pieces_of, Pieces};

/// Most devices the planner takes (2^16).
pub const MAX_PLAN_DEVICES: i64 = 1 << 16;
/// Visited layouts x devices the search may spend (2^22).
const STATE_WORK: i64 = 1 << 22;

/// Most local-table entries a lowered plan may hold (ranks x buffer indices): 2^27.
pub const MAX_TABLE_ENTRIES: i64 = 1 << 27;

/// Most messages a send-recv may have (2^18): each is a box in the lowered plan, its certificate
/// and the box decider, and an all-to-all pattern point to point has one per pair of ranks.
/// A send-recv past it is no candidate (the collectives plan the move; on a 1-D mesh of more
/// than 512 ranks, the all-to-all over the axis does).
pub const MAX_SEND_RECV_MESSAGES: i64 = 1 << 18;

/// Options of [`plan`].
#[derive(Debug, Clone)]
pub struct PlanOptions {
    /// The machine.
    pub topology: Topology,
    /// Bytes per element.
    pub elem_bytes: i64,
    /// Most layouts the search visits.
    pub max_states: usize,
    /// Certify the plan (skipped, with a reason, past the checker's limits).
    pub certify: bool,
}

impl Default for PlanOptions {
    fn default() -> PlanOptions {
        PlanOptions {
            topology: Topology::default(),
            elem_bytes: 2,
            max_states: 4000,
            certify: true,
        }
    }
}

impl PlanOptions {
    /// A bandwidth-only model (alpha = 0, one link class, 4-byte elements): the planner then
    /// minimizes the elements each rank receives, the measure compared with peers' plans.
    pub fn bandwidth_only() -> PlanOptions {
        let bw = Link {
            alpha: 0.0,
            beta: 1e9,
        };
        PlanOptions {
            elem_bytes: 4,
            topology: Topology {
                ranks_per_node: 1 << 20,
                nvlink: bw,
                network: bw,
            },
            ..PlanOptions::default()
        }
    }
}

/// One move of a plan with its cost.
#[derive(Debug, Clone)]
pub struct PlannedMove {
    /// The move.
    pub mv: Move,
    /// Its description.
    pub text: String,
    /// The layout after it.
    pub after: MeshLayout,
    /// Most elements any rank receives.
    pub recv_elems: i64,
    /// Elements received over all ranks.
    pub total_elems: i64,
    /// `nvlink`, `network` or `local`.
    pub link: &'static str,
    /// Predicted seconds.
    pub time_s: f64,
}

/// A plan: the moves, their lowering and (when it ran) the certificate.
#[derive(Debug, Clone)]
pub struct DistPlan {
    /// Source layout.
    pub source: MeshLayout,
    /// Target layout.
    pub target: MeshLayout,
    /// The moves in order.
    pub moves: Vec<PlannedMove>,
    /// The lowered plan.
    pub plan: Plan,
    /// Predicted seconds.
    pub time_s: f64,
    /// The certificate (None when certification was off or past the checker's limits).
    pub certificate: Option<DistCertificate>,
    /// Why there is no certificate, when there is none.
    pub uncertified: Option<String>,
}

impl DistPlan {
    /// Most elements any rank receives in any one step, summed over steps per rank (max).
    pub fn max_recv_elems(&self) -> i64 {
        self.moves.iter().map(|m| m.recv_elems).sum()
    }
}

/// Why no plan came out.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DistPlanError {
    /// Source and target do not fit together.
    #[error("{0}")]
    Mismatch(String),
    /// The search found no plan.
    #[error("no plan found: {0}")]
    NoPlan(String),
    /// The plan was refuted by the checker (a planner bug).
    #[error("the planner's plan was refuted (a laycert bug): {0}")]
    Refuted(String),
}

fn size(s: &[i64]) -> i64 {
    s.iter().product()
}

/// Same places and roles (pieces, partials, maximal), whatever the padded local shape.
fn same_places(a: &MeshLayout, b: &MeshLayout, b_pieces: &Pieces) -> bool {
    if a.partial != b.partial || a.maximal != b.maximal {
        return false;
    }
    if !a.is_boxed() || !b.is_boxed() {
        // Equal pieces at equal corners: then the local shapes are equal too.
        return a.strided == b.strided && pieces_of(a) == *b_pieces;
    }
    let axes = |l: &MeshLayout| -> Vec<Vec<usize>> {
        l.dims
            .iter()
            .map(|lv| {
                let mut v: Vec<usize> = lv
                    .iter()
                    .flatten()
                    .copied()
                    .filter(|&x| l.mesh.extent(x) > 1)
                    .collect();
                v.sort();
                v
            })
            .collect()
    };
    if axes(a) != axes(b) {
        return false;
    }
    (0..a.mesh.size()).all(|r| {
        let p = &b_pieces[r as usize];
        let blk = a.block(r);
        match p.first() {
            Some((bx, _)) => *bx == blk,
            None => blk.iter().any(|(lo, hi)| hi <= lo),
        }
    })
}

/// Cost of a move: (max elements received by a rank, total elements, link, seconds).
fn move_cost(
    a: &MeshLayout,
    b: &MeshLayout,
    m: Move,
    o: &PlanOptions,
) -> (i64, i64, &'static str, f64) {
    let topo = &o.topology;
    let (al, bl) = (a.local_shape(), b.local_shape());
    let n = a.mesh.size();
    let group_cost = |axis: usize, recv: i64, steps: i64| {
        let groups = a.mesh.groups(&[axis]);
        let (link, name) = if groups.iter().any(|g| topo.group_link(g).1 == "network") {
            (topo.network, "network")
        } else {
            (topo.nvlink, "nvlink")
        };
        let t = steps as f64 * link.alpha + (recv * o.elem_bytes) as f64 / link.beta;
        (recv, recv * n, name, t)
    };
    match m {
        Move::AllGather { axis, .. } => {
            let p = a.mesh.extent(axis);
            group_cost(axis, (p - 1) * size(&al), p - 1)
        }
        Move::ReduceScatter { axis, dim, .. } => {
            let p = a.mesh.extent(axis);
            let mut s = al.clone();
            s[dim] = p * bl[dim];
            group_cost(axis, (p - 1) * size(&s) / p, p - 1)
        }
        Move::AllReduce { axis, .. } => {
            let p = a.mesh.extent(axis);
            group_cost(axis, (2 * (p - 1) * size(&al) + p - 1) / p, 2 * (p - 1))
        }
        Move::AllToAll { axis, to, .. } => {
            let p = a.mesh.extent(axis);
            let mut s = al.clone();
            s[to] = p * bl[to];
            group_cost(axis, (p - 1) * size(&s) / p, p - 1)
        }
        Move::Broadcast => {
            let all: Vec<i64> = (0..n).collect();
            let (link, name) = topo.group_link(&all);
            let steps = 64 - (n as u64).saturating_sub(1).leading_zeros() as i64;
            let recv = size(&al);
            (
                recv,
                recv * (n - 1),
                name,
                steps as f64 * link.alpha + (recv * o.elem_bytes) as f64 / link.beta,
            )
        }
        Move::SendRecv => {
            let (ab, bb) = (pieces_of(a), pieces_of(b));
            let rpn = topo.ranks_per_node;
            let mut recv = vec![(0i64, 0f64); n as usize];
            let mut send = vec![0f64; n as usize];
            let mut any_net = false;
            let prefer = |h: i64, r: i64| i64::from(h / rpn != r / rpn);
            let lowers = lower::send_recv_cells(a, &ab, &bb, &prefer, &mut |c| {
                let (src, dst) = (c.src, c.dst);
                if src == dst {
                    return;
                }
                let e: i64 = c.cell.iter().map(|(lo, hi)| hi - lo).product();
                let (link, name) = topo.link(src, dst);
                any_net |= name == "network";
                let t = link.alpha + (e * o.elem_bytes) as f64 / link.beta;
                recv[dst as usize].0 += e;
                recv[dst as usize].1 += t;
                send[src as usize] += t;
            });
            if lowers.is_none() {
                // No send-recv exists (a partial source): nothing is costed; it does not lower.
                recv.fill((0, 0.0));
                send.fill(0.0);
            }
            let max_recv = recv.iter().map(|x| x.0).max().unwrap_or(0);
            let total = recv.iter().map(|x| x.0).sum();
            let t = recv
                .iter()
                .zip(&send)
                .map(|(r, s)| r.1.max(*s))
                .fold(0.0, f64::max);
            (
                max_recv,
                total,
                if any_net { "network" } else { "nvlink" },
                t,
            )
        }
        Move::Slice { .. } | Move::Zero { .. } | Move::Repack => (0, 0, "local", 0.0),
    }
}

/// A lower bound on [`move_cost`]'s time for the send-recv from `a` to the target pieces `tb`:
/// a device receives one message per source cell of its target pieces that it does not hold
/// (the cells are each target piece cut by the source's intervals, exactly as the messages
/// are; it holds at most one cell of a piece per piece of its own), and every element it
/// lacks, each at the fastest link's alpha and beta. With it, the number of cells over all
/// devices: the messages of the lowered send-recv (the local copies included).
fn send_recv_bound(a: &MeshLayout, tb: &Pieces, o: &PlanOptions) -> (f64, i64) {
    let topo = &o.topology;
    let alpha = topo.nvlink.alpha.min(topo.network.alpha);
    let beta = topo.nvlink.beta.max(topo.network.beta);
    let ab = pieces_of(a);
    let nd = a.shape.len();
    let cuts = lower::source_cuts(&ab, nd);
    let mut worst: f64 = 0.0;
    let mut messages = 0i64;
    for (ts, own) in tb.iter().zip(&ab) {
        let (mut msgs, mut lack) = (0i64, 0i64);
        for (t, _) in ts {
            let cells: i64 = (0..nd)
                .map(|d| lower::overlapping(&cuts[d], t[d]).count() as i64)
                .product();
            let (mut held, mut mine) = (0i64, 0i64);
            for (ob, _) in own {
                let m: i64 = (0..nd)
                    .map(|d| (t[d].1.min(ob[d].1) - t[d].0.max(ob[d].0)).max(0))
                    .product();
                held += i64::from(m > 0);
                mine += m;
            }
            msgs += cells - held;
            messages = messages.saturating_add(cells);
            lack += size(&t.iter().map(|(lo, hi)| hi - lo).collect::<Vec<_>>()) - mine;
        }
        worst = worst.max(msgs as f64 * alpha + (lack * o.elem_bytes) as f64 / beta);
    }
    (worst, messages)
}

/// Every move from `a`; `ops` are the reductions the target's partial axes use (a replicated
/// axis may become partial under each, besides sum).
fn moves_from(a: &MeshLayout, ops: &BTreeSet<ReduceOp>) -> Vec<Move> {
    let nd = a.shape.len();
    let mut v = Vec::new();
    if a.maximal.is_some() {
        v.push(Move::Broadcast);
        return v;
    }
    for (&axis, &op) in &a.partial {
        v.push(Move::AllReduce { axis, op });
        for dim in 0..nd {
            v.push(Move::ReduceScatter { axis, dim, op });
        }
    }
    for dim in 0..nd {
        if let Some(axis) = a.dims[dim].last().filter(|l| l.len() == 1).map(|l| l[0]) {
            v.push(Move::AllGather { axis, dim });
            for to in (0..nd).filter(|&t| t != dim) {
                v.push(Move::AllToAll {
                    axis,
                    from: dim,
                    to,
                });
            }
        }
    }
    for axis in a.replicated_axes() {
        v.push(Move::Zero {
            axis,
            op: ReduceOp::Sum,
        });
        for &op in ops.iter().filter(|&&o| o != ReduceOp::Sum) {
            v.push(Move::Zero { axis, op });
        }
        for dim in 0..nd {
            v.push(Move::Slice { axis, dim });
        }
    }
    v
}

/// Plans the redistribution from `source` to `target` (see the module doc) and certifies it.
pub fn plan(
    source: &MeshLayout,
    target: &MeshLayout,
    o: &PlanOptions,
) -> Result<DistPlan, DistPlanError> {
    if source.mesh.size() != target.mesh.size() {
        return Err(DistPlanError::Mismatch(format!(
            "source mesh {} has {} devices, target mesh {} has {}; give a mapping (same device count)",
            source.mesh,
            source.mesh.size(),
            target.mesh,
            target.mesh.size()
        )));
    }
    if source.shape != target.shape {
        return Err(DistPlanError::Mismatch(format!(
            "source shape {:?} and target shape {:?} differ",
            source.shape, target.shape
        )));
    }
    for l in [source, target] {
        let ops: std::collections::BTreeSet<_> = l.partial.values().map(|o| o.name()).collect();
        if ops.len() > 1 {
            return Err(DistPlanError::Mismatch(format!(
                "partial in several reductions ({}): the planner and the checker take one \
                 reduction per layout",
                ops.into_iter().collect::<Vec<_>>().join(", ")
            )));
        }
    }
    if source.mesh.size() > MAX_PLAN_DEVICES {
        return Err(DistPlanError::Mismatch(format!(
            "a mesh of {} devices; the planner takes at most {MAX_PLAN_DEVICES}",
            source.mesh.size()
        )));
    }
    // Each visited layout costs work linear in the device count: bound the total.
    let max_states = o
        .max_states
        .min((STATE_WORK / source.mesh.size()).max(8) as usize);
    // The lowered local tables hold one entry per rank per buffer index of each dim.
    let per_rank: i64 = source
        .shape
        .iter()
        .fold(0i64, |a, &n| a.saturating_add(n))
        .saturating_mul(2);
    if per_rank.saturating_mul(source.mesh.size()) > MAX_TABLE_ENTRIES {
        return Err(DistPlanError::Mismatch(format!(
            "shape {:?} on {} devices: the plan's local tables would exceed {MAX_TABLE_ENTRIES} entries",
            source.shape,
            source.mesh.size()
        )));
    }
    // Over another mesh with the same device count: send-recv (moves are per axis), after
    // the moves that reduce a partial source on its own mesh.
    let same_mesh = source.mesh == target.mesh;
    let tb = pieces_of(target);
    let target_ops: BTreeSet<ReduceOp> = target.partial.values().copied().collect();
    let key = |t: f64| (t * 1e12).round() as u64;
    // Dijkstra over (cost, what, state index): what 1 expands the state, what 0 costs the
    // send-recv from it straight to the target. That candidate enters the heap at its lower
    // bound and is costed exactly (its messages can number millions) only when popped before
    // the search ends; a candidate never popped cannot beat the plan found. At equal cost the
    // collectives win: a layout reached at the cost of the best send-recv is still expanded
    // (local moves are free) and a goal it reaches replaces the send-recv. Such a plan runs as
    // NCCL collectives and is certified symbolically over the mesh (`certify::dist::symbolic`);
    // the send-recv's messages are per device.
    // (layout, how it was reached, predicted seconds so far)
    type State = (MeshLayout, Option<(usize, Move)>, f64);
    let mut states: Vec<State> = vec![(source.clone(), None, 0.0)];
    let mut index: BTreeMap<MeshLayout, usize> = BTreeMap::new();
    index.insert(source.clone(), 0);
    let mut heap = BinaryHeap::new();
    heap.push(std::cmp::Reverse((0u64, 1u8, 0usize)));
    let mut done: BTreeSet<usize> = BTreeSet::new();
    let mut best_goal: Option<(u64, usize, Option<Move>)> = None;
    // A send-recv goal a collective one tied.
    let mut tied_send_recv: Option<(u64, usize, Option<Move>)> = None;
    let target_plain = target.partial.is_empty();
    // The most messages of a send-recv left out for MAX_SEND_RECV_MESSAGES.
    let mut too_many_messages = 0i64;
    while let Some(std::cmp::Reverse((c, what, i))) = heap.pop() {
        let send_recv_goal = |g: &(u64, usize, Option<Move>)| g.2 == Some(Move::SendRecv);
        match &best_goal {
            Some(g) if g.0 < c => break,
            // At the goal's cost only layouts that may still reach a collective goal matter.
            Some(g) if g.0 == c && (what == 0 || !send_recv_goal(g)) => continue,
            _ => {}
        }
        if what == 0 {
            let (_, _, _, t) = move_cost(&states[i].0, target, Move::SendRecv, o);
            let total = key(states[i].2 + t);
            if best_goal.as_ref().is_none_or(|g| total < g.0) {
                best_goal = Some((total, i, Some(Move::SendRecv)));
            }
            continue;
        }
        if !done.insert(i) {
            continue;
        }
        let a = states[i].0.clone();
        if same_places(&a, target, &tb) {
            let fin = if a.local_shape() == target.local_shape() {
                None
            } else {
                Some(Move::Repack)
            };
            if best_goal
                .as_ref()
                .is_none_or(|g| c < g.0 || (c == g.0 && send_recv_goal(g)))
            {
                if let Some(g) = best_goal.filter(|g| g.0 == c) {
                    tied_send_recv = Some(g);
                }
                best_goal = Some((c, i, fin));
            }
            continue;
        }
        if a.partial.is_empty() && target_plain {
            let (bound, messages) = send_recv_bound(&a, &tb, o);
            if messages <= MAX_SEND_RECV_MESSAGES {
                heap.push(std::cmp::Reverse((key(states[i].2 + bound), 0, i)));
            } else {
                too_many_messages = too_many_messages.max(messages);
            }
        }
        // Over another mesh only send-recv crosses (moves are per axis), and it moves plain
        // data: a partial source is first reduced on its own mesh (all-reduce,
        // reduce-scatter), then sent.
        if (!same_mesh && a.partial.is_empty()) || states.len() >= max_states {
            continue;
        }
        for m in moves_from(&a, &target_ops) {
            let Some(b) = lower::apply(&a, m) else {
                continue;
            };
            let (_, _, _, t) = move_cost(&a, &b, m, o);
            let nc = states[i].2 + t;
            match index.get(&b) {
                Some(&j) if states[j].2 <= nc => {}
                Some(&j) => {
                    states[j] = (b, Some((i, m)), nc);
                    heap.push(std::cmp::Reverse((key(nc), 1, j)));
                }
                None => {
                    let j = states.len();
                    index.insert(b.clone(), j);
                    states.push((b, Some((i, m)), nc));
                    heap.push(std::cmp::Reverse((key(nc), 1, j)));
                }
            }
        }
    }
    let Some(mut best) = best_goal else {
        let send_recv = if too_many_messages > 0 {
            format!(
                " (a send-recv straight to it would take {too_many_messages} messages, \
                 above the limit of {MAX_SEND_RECV_MESSAGES})"
            )
        } else {
            String::new()
        };
        return Err(DistPlanError::NoPlan(format!(
            "no sequence of moves reaches the target within {} layouts{send_recv}",
            o.max_states
        )));
    };
    // Walk back.
    let chain_of = |goal: usize| {
        let mut chain: Vec<(usize, Move)> = Vec::new();
        let mut at = goal;
        while let Some((prev, m)) = states[at].1 {
            chain.push((at, m));
            at = prev;
        }
        chain.reverse();
        chain
    };
    // Elements the busiest rank receives along a goal's moves.
    let recv_of = |goal: usize, fin: Option<Move>| -> i64 {
        let mut cur = source;
        let mut sum = 0;
        for (j, m) in chain_of(goal) {
            sum += move_cost(cur, &states[j].0, m, o).0;
            cur = &states[j].0;
        }
        sum + fin.map_or(0, |m| move_cost(cur, target, m, o).0)
    };
    // The tie goes to the collectives unless they receive more.
    if let Some(t) = tied_send_recv {
        if recv_of(t.1, t.2) < recv_of(best.1, best.2) {
            best = t;
        }
    }
    let (goal, fin) = (best.1, best.2);
    let chain = chain_of(goal);
    let mut moves = Vec::new();
    let mut steps: Vec<Step> = Vec::new();
    let mut cur = source.clone();
    let mut total = 0.0;
    let rpn = o.topology.ranks_per_node;
    let mut push = |a: &MeshLayout,
                    b: &MeshLayout,
                    m: Move,
                    moves: &mut Vec<PlannedMove>|
     -> Result<f64, DistPlanError> {
        let lowered = lower::lower(a, b, m, rpn)
            .ok_or_else(|| DistPlanError::NoPlan(format!("{} does not lower", m.describe(a))))?;
        steps.extend(lowered);
        let (recv, tot, link, t) = move_cost(a, b, m, o);
        moves.push(PlannedMove {
            mv: m,
            text: m.describe(a),
            after: b.clone(),
            recv_elems: recv,
            total_elems: tot,
            link,
            time_s: t,
        });
        Ok(t)
    };
    for (j, m) in chain {
        let b = states[j].0.clone();
        total += push(&cur, &b, m, &mut moves)?;
        cur = b;
    }
    if let Some(m) = fin {
        total += push(&cur, target, m, &mut moves)?;
    }
    let lowered = Plan {
        ranks: source.mesh.size(),
        steps,
    };
    let (certificate, uncertified) = if o.certify {
        match certify::dist::certify_plan(source, target, &lowered) {
            Ok(c) => (Some(c), None),
            Err(DistError::Refuted(c)) => return Err(DistPlanError::Refuted(c.to_string())),
            Err(DistError::Unknown(r)) => (None, Some(r)),
        }
    } else {
        (None, Some("certification not requested".into()))
    };
    Ok(DistPlan {
        source: source.clone(),
        target: target.clone(),
        moves,
        plan: lowered,
        time_s: total,
        certificate,
        uncertified,
    })
}

#[cfg(test)]
mod tests;
