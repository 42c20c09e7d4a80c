//! A peer's plan as a laycert plan: DTensor's `_TransformInfo` sequence (one transition of one
//! mesh dim per step) lowered step by step with the peer's own reading of each collective
//! (a gather concatenates the members' buffers in group order and takes chunk `m` from member
//! `m`), so certifying it checks what the peer does, not what it meant.

use certify::dist::{Plan, Step};
use layout::mesh::{Mesh, MeshLayout};
use layout::notation::dtensor::{self, Placement};

use super::lower::{lower_as, Move};
use super::{move_cost, PlanOptions, PlannedMove};

/// One DTensor transform: mesh dim, source and destination placement.
pub type Transform = (usize, Placement, Placement);

/// The peer's plan lowered, with its moves and costs, or the first step laycert cannot lower.
pub fn lower_dtensor(
    mesh: &Mesh,
    shape: &[i64],
    source: &[Placement],
    transforms: &[Transform],
    o: &PlanOptions,
) -> Result<(Plan, Vec<PlannedMove>, MeshLayout), String> {
    lower_dtensor_to(mesh, shape, source, None, transforms, o)
}

/// [`lower_dtensor`] toward the `target` placements DTensor planned for: DTensor names a target
/// `_StridedShard(d, f)` mesh dim `Shard(d)` in its transforms too (its local slice of a piece
/// already split by a later mesh dim is the strided placement), so a step to `Shard(d)` on a
/// mesh dim whose target is `_StridedShard(d, f)` lowers to the target's placement. Reading it
/// otherwise can only fail to certify (the plan is checked against the target), never certify
/// a wrong plan.
pub fn lower_dtensor_to(
    mesh: &Mesh,
    shape: &[i64],
    source: &[Placement],
    target: Option<&[Placement]>,
    transforms: &[Transform],
    o: &PlanOptions,
) -> Result<(Plan, Vec<PlannedMove>, MeshLayout), String> {
    let mut cur = dtensor::normalize(source, shape.len()).map_err(|e| e.to_string())?;
    let mut a = dtensor::to_layout(mesh, shape, &cur).map_err(|e| e.to_string())?;
    let mut steps: Vec<Step> = Vec::new();
    let mut moves = Vec::new();
    for (k, (i, from, to)) in transforms.iter().enumerate() {
        let norm = |p: &Placement| {
            dtensor::normalize(std::slice::from_ref(p), shape.len())
                .map(|v| v[0].clone())
                .map_err(|e| format!("step {k}: {e}"))
        };
        let (from, to) = (&norm(from)?, &norm(to)?);
        // DTensor names a `_StridedShard(d, f)` mesh dim `Shard(d)` in its transforms.
        let same = |a: &Placement, b: &Placement| match (a, b) {
            (Placement::StridedShard(d, _), Placement::Shard(e)) => d == e,
            _ => a == b,
        };
        if *i >= cur.len() || !same(&cur[*i], from) {
            return Err(format!(
                "step {k}: mesh dim {i} is not {}",
                dtensor::print_placement(from)
            ));
        }
        let from = &cur[*i].clone();
        let to = match (to, target.and_then(|t| t.get(*i))) {
            (Placement::Shard(d), Some(t @ Placement::StridedShard(e, _))) if d == e => t,
            _ => to,
        };
        cur[*i] = to.clone();
        let b = dtensor::to_layout(mesh, shape, &cur).map_err(|e| format!("step {k}: {e}"))?;
        let dim_of = |p: &Placement| match p {
            Placement::Shard(d) | Placement::StridedShard(d, _) => Some(*d as usize),
            _ => None,
        };
        let m = match (from, to) {
            (Placement::Partial(op), Placement::Replicate) => Move::AllReduce { axis: *i, op: *op },
            (Placement::Partial(op), t) if dim_of(t).is_some() => Move::ReduceScatter {
                axis: *i,
                dim: dim_of(t).unwrap_or(0),
                op: *op,
            },
            (Placement::Replicate, Placement::Partial(op)) => Move::Zero { axis: *i, op: *op },
            (Placement::Replicate, t) if dim_of(t).is_some() => Move::Slice {
                axis: *i,
                dim: dim_of(t).unwrap_or(0),
            },
            (f, Placement::Replicate) if dim_of(f).is_some() => Move::AllGather {
                axis: *i,
                dim: dim_of(f).unwrap_or(0),
            },
            (f, t) if dim_of(f).is_some() && dim_of(t).is_some() => {
                let (d1, d2) = (dim_of(f).unwrap_or(0), dim_of(t).unwrap_or(0));
                if d1 == d2 {
                    Move::Repack
                } else {
                    Move::AllToAll {
                        axis: *i,
                        from: d1,
                        to: d2,
                    }
                }
            }
            _ => {
                return Err(format!(
                    "step {k}: {} -> {} is not a transition laycert lowers",
                    dtensor::print_placement(from),
                    dtensor::print_placement(to)
                ))
            }
        };
        let lowered = lower_as(&a, &b, m, o.topology.ranks_per_node, true).ok_or_else(|| {
            if a.is_boxed() && b.is_boxed() {
                format!("step {k}: {} does not lower", m.describe(&a))
            } else {
                format!(
                    "step {k}: {} on an interleaved _StridedShard layout is not lowered (its \
                     collectives' padding and reordering are not modelled; laycert's own plans \
                     move such layouts by send-recv)",
                    m.describe(&a)
                )
            }
        })?;
        steps.extend(lowered);
        let (recv, tot, link, t) = move_cost(&a, &b, m, o);
        moves.push(PlannedMove {
            mv: m,
            text: m.describe(&a),
            after: b.clone(),
            recv_elems: recv,
            total_elems: tot,
            link,
            time_s: t,
        });
        a = b;
    }
    Ok((
        Plan {
            ranks: mesh.size(),
            steps,
        },
        moves,
        a,
    ))
}
