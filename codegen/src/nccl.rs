//! The NCCL program of a redistribution plan: CUDA C++ that loads NCCL with `dlopen` (no link
//! time dependency, like cudarc's dynamic loading), sets `NCCL_NVLS_ENABLE=0` before any
//! communicator exists (no NVLink multicast, no `multimem`), and runs the plan on each rank.
//!
//! The plan travels as DATA: one `int64_t` array (`LAYCERT_PLAN`) with an opcode per step and its
//! operands (groups, dims, message boxes, the per-rank per-dim index tables of the local
//! pack/unpack steps), read by a fixed interpreter whose kernels are a table gather
//! (`laycert_local`), a box copy (`laycert_box`) and a piece split/concat (`laycert_piece`).
//! Translation validation ([`validate_text`]) reads the array back out of the emitted TEXT and
//! requires it to decode to exactly the certified plan, so the program runs the plan the
//! certificate speaks of. The program checks its own result: every rank's buffer starts with
//! `element id + 1` on the places the source assigns it and ends compared against the target.
//!
//! Modes: `LAYCERT_RANK=r LAYCERT_WORLD=n LAYCERT_ID_FILE=path` (one process per rank, NCCL
//! communicators split per group), or `LAYCERT_EMULATE=1` on one GPU: every rank's buffers on
//! that GPU, collectives by device copies, every pack/unpack kernel run for every rank, plus a
//! one-rank NCCL all-reduce proving NCCL loads and runs with NVLS off.

use certify::dist::{Plan, Step};
use layout::mesh::{MeshLayout, ReduceOp};

use crate::error::CodegenError;

/// An emitted program.
#[derive(Debug, Clone)]
pub struct NcclProgram {
    /// CUDA C++ source.
    pub source: String,
    /// Distinct kernels the interpreter launches.
    pub kernels: usize,
    /// Length of the plan array.
    pub words: usize,
}

const OP_ALLGATHER: i64 = 1;
const OP_REDUCESCATTER: i64 = 2;
const OP_ALLREDUCE: i64 = 3;
const OP_ALLTOALL: i64 = 4;
const OP_BROADCAST: i64 = 5;
const OP_SENDRECV: i64 = 6;
const OP_LOCAL: i64 = 7;
const OP_ZERO: i64 = 8;

fn op_code(op: ReduceOp) -> i64 {
    // ncclRedOp_t values: ncclSum 0, ncclMax 2, ncclMin 3, ncclAvg 4.
    match op {
        ReduceOp::Sum => 0,
        ReduceOp::Max => 2,
        ReduceOp::Min => 3,
        ReduceOp::Avg => 4,
    }
}

fn push_groups(w: &mut Vec<i64>, groups: &[Vec<i64>]) {
    w.push(groups.len() as i64);
    for g in groups {
        w.push(g.len() as i64);
        w.extend(g);
    }
}

/// The plan as the interpreter's word array.
pub fn encode(plan: &Plan) -> Vec<i64> {
    let mut w = vec![plan.ranks, plan.steps.len() as i64];
    for s in &plan.steps {
        match s {
            Step::AllGather { groups, dim } => {
                w.push(OP_ALLGATHER);
                push_groups(&mut w, groups);
                w.push(*dim as i64);
            }
            Step::ReduceScatter { groups, dim, op } => {
                w.push(OP_REDUCESCATTER);
                push_groups(&mut w, groups);
                w.extend([*dim as i64, op_code(*op)]);
            }
            Step::AllReduce { groups, op } => {
                w.push(OP_ALLREDUCE);
                push_groups(&mut w, groups);
                w.push(op_code(*op));
            }
            Step::AllToAll {
                groups,
                split_dim,
                concat_dim,
            } => {
                w.push(OP_ALLTOALL);
                push_groups(&mut w, groups);
                w.extend([*split_dim as i64, *concat_dim as i64]);
            }
            Step::Broadcast { groups, root } => {
                w.push(OP_BROADCAST);
                push_groups(&mut w, groups);
                w.push(*root as i64);
            }
            Step::SendRecv { shape, messages } => {
                w.push(OP_SENDRECV);
                w.push(shape.len() as i64);
                w.extend(shape);
                w.push(messages.len() as i64);
                for m in messages {
                    w.extend([m.src, m.dst]);
                    w.extend(&m.src_start);
                    w.extend(&m.dst_start);
                    w.extend(&m.len);
                }
            }
            Step::Local { shape, maps } => {
                w.push(OP_LOCAL);
                w.push(shape.len() as i64);
                w.extend(shape);
                for per_rank in maps {
                    for m in per_rank {
                        w.extend(m);
                    }
                }
            }
            Step::Zero { ranks } => {
                w.push(OP_ZERO);
                w.push(ranks.len() as i64);
                w.extend(ranks);
            }
        }
    }
    w
}

/// Reads the `LAYCERT_PLAN` array back out of emitted text.
pub fn read_plan_array(source: &str) -> Result<Vec<i64>, CodegenError> {
    let fail = |m: &str| CodegenError::Validation(format!("NCCL program: {m}"));
    let start = source
        .find("LAYCERT_PLAN[] = {")
        .ok_or_else(|| fail("no LAYCERT_PLAN array"))?;
    let body = &source[start + "LAYCERT_PLAN[] = {".len()..];
    let end = body
        .find('}')
        .ok_or_else(|| fail("LAYCERT_PLAN not closed"))?;
    body[..end]
        .split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(|t| {
            t.trim_end_matches("LL")
                .parse::<i64>()
                .map_err(|_| fail(&format!("`{t}` in LAYCERT_PLAN")))
        })
        .collect()
}

/// Translation validation: the emitted text's plan array is exactly `encode(plan)`.
pub fn validate_text(source: &str, plan: &Plan) -> Result<(), CodegenError> {
    let got = read_plan_array(source)?;
    let want = encode(plan);
    if got != want {
        let at = got
            .iter()
            .zip(&want)
            .position(|(a, b)| a != b)
            .unwrap_or(got.len().min(want.len()));
        return Err(CodegenError::Validation(format!(
            "NCCL program: plan word {at} differs from the certified plan"
        )));
    }
    Ok(())
}

fn layout_words(l: &MeshLayout) -> Vec<i64> {
    let mut w = vec![l.shape.len() as i64];
    w.extend(&l.shape);
    w.extend(l.local_shape());
    // The value multiplier of the final check: a sum of `addends` copies of `id + 1`.
    let sum = !l.partial.is_empty() && l.partial.values().all(|&o| o == ReduceOp::Sum);
    w.push(if sum { l.addends() } else { 1 });
    w.push(i64::from(!l.partial.is_empty()));
    w.push(i64::from(sum));
    // Per rank: its group (the mesh position with the partial coordinates zeroed: the devices
    // whose places of one value add up), its piece count, then each piece's box and corner.
    for r in 0..l.mesh.size() {
        w.push(l.addend_group(r));
        let pieces = l.pieces(r);
        w.push(pieces.len() as i64);
        for (bx, at) in pieces {
            for (lo, hi) in bx {
                w.extend([lo, hi]);
            }
            w.extend(at);
        }
    }
    w
}

fn array(name: &str, w: &[i64]) -> String {
    let mut s = format!("static const long long {name}[] = {{");
    for (i, x) in w.iter().enumerate() {
        if i % 16 == 0 {
            s.push_str("\n  ");
        }
        s.push_str(&format!("{x}LL,"));
    }
    s.push_str("\n};\n");
    s
}

/// Emits the program for a certified plan from `source` to `target` (elements are `double`
/// in the program so element ids and their sums stay exact; `elem_bytes` is recorded for the
/// report only).
pub fn emit(
    plan: &Plan,
    source: &MeshLayout,
    target: &MeshLayout,
    elem_bytes: i64,
) -> Result<NcclProgram, CodegenError> {
    let words = encode(plan);
    if words.len() > 1 << 24 {
        return Err(CodegenError::Validation(format!(
            "plan of {} words is too large to embed",
            words.len()
        )));
    }
    let mut src = format!(
        "// laycert NCCL program: {} steps over {} ranks ({elem_bytes}-byte elements in the plan; doubles here).\n",
        plan.steps.len(),
        plan.ranks
    );
    src.push_str(RUNTIME_HEAD);
    src.push_str(crate::nccl_run::KERNELS);
    src.push_str(&array("LAYCERT_PLAN", &words));
    src.push_str(&array("LAYCERT_SOURCE", &layout_words(source)));
    src.push_str(&array("LAYCERT_TARGET", &layout_words(target)));
    src.push_str(RUNTIME_BODY);
    validate_text(&src, plan)?;
    Ok(NcclProgram {
        source: src,
        kernels: 3,
        words: words.len(),
    })
}

const RUNTIME_HEAD: &str = include_str!("nccl_runtime_head.cu");
const RUNTIME_BODY: &str = include_str!("nccl_runtime_body.cu");

#[cfg(test)]
mod tests {
    use super::*;
    use certify::dist::Step;
    use layout::mesh::Mesh;
    use layout::notation::dtensor;

    fn at(p: &str) -> MeshLayout {
        dtensor::to_layout(
            &Mesh::parse("gpuid=4").unwrap(),
            &[5, 3],
            &dtensor::parse_placements(p).unwrap(),
        )
        .unwrap()
    }

    #[test]
    fn emitted_program_carries_exactly_the_certified_plan() {
        let plan = Plan {
            ranks: 4,
            steps: vec![
                Step::AllGather {
                    groups: vec![vec![0, 1, 2, 3]],
                    dim: 0,
                },
                Step::Local {
                    shape: vec![5, 3],
                    maps: (0..4)
                        .map(|_| vec![vec![0, 1, 2, 3, 4], vec![0, 1, 2]])
                        .collect(),
                },
            ],
        };
        let (s, t) = (at("[Shard(0)]"), at("[Replicate()]"));
        certify::dist::certify_plan(&s, &t, &plan).unwrap();
        let prog = emit(&plan, &s, &t, 2).unwrap();
        assert!(prog.source.contains("NCCL_NVLS_ENABLE"));
        assert!(prog.source.contains("dlopen"));
        assert!(!prog.source.contains("multimem") && !prog.source.contains("cuMulticast"));
        assert_eq!(read_plan_array(&prog.source).unwrap(), encode(&plan));
        // An edited table in the text is caught.
        let at = prog.source.find("LAYCERT_PLAN[] = {").unwrap();
        let (head, tail) = prog.source.split_at(at);
        let edited = format!("{head}{}", tail.replacen("0LL,", "1LL,", 1));
        assert_ne!(edited, prog.source);
        assert!(validate_text(&edited, &plan).is_err());
    }
}
