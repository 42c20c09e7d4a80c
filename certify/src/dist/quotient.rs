//! Deciding a plan on a quotient of the tensor: when every block boundary of the source and the
//! target and every box, piece and table of the plan move whole `q_d`-blocks of dim `d`, the plan
//! on shape `S` is the INFLATION of a plan on `S / q` (each element of the small tensor stands
//! for a `q`-block: a local table entry `m` becomes `q*m + t`, a box `[s, s+l)` becomes
//! `[q*s, q*(s+l))`, groups and dims stay). Every step's semantics (concatenate and split along a
//! dim, copy a box, gather through per-dim tables, reduce elementwise, zero) commutes with
//! inflation, so the big plan meets the big claim exactly when the small plan meets the small
//! claim. [`deflate`] computes the small plan and [`inflate`] is compared with the given plan
//! entry by entry, so nothing is assumed about the plan: a plan that is not an inflation is
//! decided at full size.

use super::plan::{Message, Plan, Step};

fn div_box(v: &[i64], q: &[i64]) -> Option<Vec<i64>> {
    v.iter()
        .zip(q)
        .map(|(x, q)| (x % q == 0).then_some(x / q))
        .collect()
}

/// The plan on the quotient shape, when `plan` is an inflation by `q` (checked by the caller
/// with [`inflate`]).
pub fn deflate(plan: &Plan, q: &[i64]) -> Option<Plan> {
    let steps = plan
        .steps
        .iter()
        .map(|s| {
            Some(match s {
                Step::SendRecv { shape, messages } => Step::SendRecv {
                    shape: div_box(shape, q)?,
                    messages: messages
                        .iter()
                        .map(|m| {
                            Some(Message {
                                src: m.src,
                                dst: m.dst,
                                src_start: div_box(&m.src_start, q)?,
                                dst_start: div_box(&m.dst_start, q)?,
                                len: div_box(&m.len, q)?,
                            })
                        })
                        .collect::<Option<Vec<_>>>()?,
                },
                Step::Local { shape, maps } => {
                    let shape = div_box(shape, q)?;
                    let maps = maps
                        .iter()
                        .map(|per| {
                            per.iter()
                                .enumerate()
                                .map(|(d, m)| {
                                    let qd = *q.get(d)?;
                                    (0..shape.get(d).copied()?)
                                        .map(|u| {
                                            let v = *m.get((u * qd) as usize)?;
                                            Some(if v < 0 { -1 } else { v / qd })
                                        })
                                        .collect::<Option<Vec<i64>>>()
                                })
                                .collect::<Option<Vec<_>>>()
                        })
                        .collect::<Option<Vec<_>>>()?;
                    Step::Local { shape, maps }
                }
                other => other.clone(),
            })
        })
        .collect::<Option<Vec<_>>>()?;
    Some(Plan {
        ranks: plan.ranks,
        steps,
    })
}

fn mul_box(v: &[i64], q: &[i64]) -> Vec<i64> {
    v.iter().zip(q).map(|(x, q)| x * q).collect()
}

/// The inflation of a small plan by `q` (see the module doc).
pub fn inflate(plan: &Plan, q: &[i64]) -> Plan {
    let steps = plan
        .steps
        .iter()
        .map(|s| match s {
            Step::SendRecv { shape, messages } => Step::SendRecv {
                shape: mul_box(shape, q),
                messages: messages
                    .iter()
                    .map(|m| Message {
                        src: m.src,
                        dst: m.dst,
                        src_start: mul_box(&m.src_start, q),
                        dst_start: mul_box(&m.dst_start, q),
                        len: mul_box(&m.len, q),
                    })
                    .collect(),
            },
            Step::Local { shape, maps } => Step::Local {
                shape: mul_box(shape, q),
                maps: maps
                    .iter()
                    .map(|per| {
                        per.iter()
                            .zip(q)
                            .map(|(m, &qd)| {
                                m.iter()
                                    .flat_map(|&v| {
                                        (0..qd).map(move |t| if v < 0 { -1 } else { v * qd + t })
                                    })
                                    .collect()
                            })
                            .collect()
                    })
                    .collect(),
            },
            other => other.clone(),
        })
        .collect();
    Plan {
        ranks: plan.ranks,
        steps,
    }
}

/// Greatest common divisor (of non-negative values; gcd(0, x) = x).
pub fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 {
        a.abs()
    } else {
        gcd(b, a % b)
    }
}
