//! The mesh-symbolic decider (`certify::dist::symbolic`) against the box decider, on plans made
//! of random walks of collective moves (lowered by the planner) and on their mutations: a
//! symbolic certification must be a certification of the boxes with the same places, on every
//! case; the walks on meshes with extents 1 to 6 and the uneven single cuts must be decided
//! symbolically (not only passed to the boxes); and the decision on 65536 devices is
//! symbolic alone.

use certify::dist::{certify_on_boxes, symbolic, DistError, Plan, Step};
use layout::mesh::{Mesh, MeshLayout, ReduceOp};
use layout::notation::dtensor;
use solver::dist::lower::{apply, lower, Move};

struct Rng(u64);
impl Rng {
    fn next(&mut self, k: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % k.max(1)
    }
}

/// Every move the walk may take from `a` (collectives and local steps; no send-recv).
fn candidates(a: &MeshLayout) -> Vec<Move> {
    let (k, nd) = (a.mesh.ndim(), a.shape.len());
    let mut v = Vec::new();
    for axis in 0..k {
        v.push(Move::AllReduce {
            axis,
            op: ReduceOp::Sum,
        });
        v.push(Move::Zero {
            axis,
            op: ReduceOp::Sum,
        });
        for dim in 0..nd {
            v.push(Move::AllGather { axis, dim });
            v.push(Move::Slice { axis, dim });
            v.push(Move::ReduceScatter {
                axis,
                dim,
                op: ReduceOp::Sum,
            });
            for to in 0..nd {
                if to != dim {
                    v.push(Move::AllToAll {
                        axis,
                        from: dim,
                        to,
                    });
                }
            }
        }
    }
    v
}

/// A walk of up to `len` moves from `s`: the layout reached and the lowered plan.
fn walk(s: &MeshLayout, len: usize, rng: &mut Rng) -> Option<(MeshLayout, Plan)> {
    let mut a = s.clone();
    let mut steps = Vec::new();
    for _ in 0..len {
        let next: Vec<(Move, MeshLayout)> = candidates(&a)
            .into_iter()
            .filter_map(|m| apply(&a, m).map(|b| (m, b)))
            .collect();
        if next.is_empty() {
            break;
        }
        let (m, b) = next[rng.next(next.len() as u64) as usize].clone();
        steps.extend(lower(&a, &b, m, 8)?);
        a = b;
    }
    Some((
        a,
        Plan {
            ranks: s.mesh.size(),
            steps,
        },
    ))
}

/// Mutations that keep a plan readable by the symbolic decider: a step dropped or doubled,
/// another axis's groups, another dim, every device's table shifted by one, another zeroed axis.
fn mutate(p: &Plan, mesh: &Mesh, rng: &mut Rng) -> Option<Plan> {
    if p.steps.is_empty() {
        return None;
    }
    let mut q = p.clone();
    let k = rng.next(q.steps.len() as u64) as usize;
    let other_axis = |groups: &[Vec<i64>], rng: &mut Rng| -> Option<Vec<Vec<i64>>> {
        let b = rng.next(mesh.ndim() as u64) as usize;
        let g = mesh.groups(&[b]);
        (g != groups && g[0].len() == groups[0].len()).then_some(g)
    };
    match rng.next(5) {
        0 => {
            q.steps.remove(k);
        }
        1 => {
            let s = q.steps[k].clone();
            q.steps.insert(k, s);
        }
        2 => match &mut q.steps[k] {
            Step::AllGather { groups, .. }
            | Step::ReduceScatter { groups, .. }
            | Step::AllReduce { groups, .. }
            | Step::AllToAll { groups, .. } => *groups = other_axis(groups, rng)?,
            Step::Zero { ranks } => {
                let b = rng.next(mesh.ndim() as u64) as usize;
                *ranks = (0..mesh.size())
                    .filter(|&r| mesh.coords(r)[b] != 0)
                    .collect();
            }
            _ => return None,
        },
        3 => match &mut q.steps[k] {
            Step::AllGather { dim, .. } | Step::ReduceScatter { dim, .. } => {
                *dim = (*dim + 1) % 2;
            }
            Step::AllToAll {
                split_dim,
                concat_dim,
                ..
            } => std::mem::swap(split_dim, concat_dim),
            _ => return None,
        },
        _ => match &mut q.steps[k] {
            Step::Local { maps, .. } => {
                let d = rng.next(maps[0].len() as u64) as usize;
                for m in maps.iter_mut() {
                    for o in m[d].iter_mut() {
                        if *o >= 0 {
                            *o += 1;
                        }
                    }
                    // Past the old buffer: the last entry becomes padding.
                    if let Some(last) = m[d].last_mut() {
                        *last = -1;
                    }
                }
            }
            _ => return None,
        },
    }
    Some(q)
}

#[derive(Default, Debug)]
struct Tally {
    claims: usize,
    symbolic: usize,
    boxes_only: usize,
    mutants: usize,
    mutants_refuted: usize,
    mutants_symbolic: usize,
}

/// Random DTensor placements on `k` mesh axes: `Shard(0)`, `Shard(1)` or `Replicate()` each.
fn shard_or_replicate(rng: &mut Rng, k: usize) -> String {
    let placements = ["Shard(0)", "Shard(1)", "Replicate()"];
    let v: Vec<&str> = (0..k).map(|_| placements[rng.next(3) as usize]).collect();
    format!("[{}]", v.join(", "))
}

/// The layouts of a claim given in DTensor placements.
fn claim(m: &Mesh, shape: &[i64], from: &str, to: &str) -> (MeshLayout, MeshLayout) {
    let at = |p: &str| dtensor::to_layout(m, shape, &dtensor::parse_placements(p).unwrap());
    (at(from).unwrap(), at(to).unwrap())
}

/// One claim: the symbolic verdict is implied by the boxes'.
fn judge(s: &MeshLayout, t: &MeshLayout, p: &Plan, what: &str) -> (bool, Result<(), DistError>) {
    let sym = symbolic::decide(s, t, p);
    let boxes = certify_on_boxes(s, t, p);
    if let Ok(y) = &sym {
        match &boxes {
            Ok(b) => assert_eq!(b.places_checked, y.places, "{what}: places differ"),
            Err(e) => panic!("{what}: certified symbolically, but the boxes say {e}"),
        }
    }
    (sym.is_ok(), boxes.map(|_| ()))
}

#[test]
fn symbolic_certifications_are_box_certifications() {
    let meshes = [
        "gpuid=4",
        "a=3",
        "a=6",
        "a=2,b=3",
        "a=2,b=2,c=2",
        "a=3,b=1,c=2",
        "a=2,b=3 devices=[[5,0,3],[1,4,2]]",
    ];
    let placements = ["Shard(0)", "Shard(1)", "Replicate()", "Partial(sum)"];
    let mut rng = Rng(0x2545f4914f6cdd1d);
    let mut t = Tally::default();
    let mut uneven = 0;
    for case in 0..600 {
        let mesh = meshes[rng.next(meshes.len() as u64) as usize];
        let m = Mesh::parse(mesh).unwrap();
        // Mostly multiples of 12 (every extent divides), some odd sizes.
        let mut ext = || {
            if rng.next(4) == 0 {
                1 + rng.next(13) as i64
            } else {
                12 * (1 + rng.next(3) as i64)
            }
        };
        let shape = [ext(), ext()];
        let p: Vec<&str> = (0..m.ndim())
            .map(|_| placements[rng.next(4) as usize])
            .collect();
        let from = format!("[{}]", p.join(", "));
        let Ok(s) = dtensor::to_layout(&m, &shape, &dtensor::parse_placements(&from).unwrap())
        else {
            continue;
        };
        let Some((target, plan)) = walk(&s, 1 + rng.next(4) as usize, &mut rng) else {
            continue;
        };
        let what = format!(
            "case {case}: {mesh} {shape:?} {from}, {} steps",
            plan.steps.len()
        );
        let (sym, boxes) = judge(&s, &target, &plan, &what);
        boxes.unwrap_or_else(|e| panic!("{what}: the walk's plan is not certified: {e}"));
        t.claims += 1;
        if sym {
            t.symbolic += 1;
            uneven += usize::from(!s.is_even() || !target.is_even());
        } else {
            t.boxes_only += 1;
        }
        for _ in 0..3 {
            let Some(bad) = mutate(&plan, &m, &mut rng) else {
                continue;
            };
            t.mutants += 1;
            let (sym, boxes) = judge(&s, &target, &bad, &format!("{what}, mutated"));
            t.mutants_symbolic += usize::from(sym);
            t.mutants_refuted += usize::from(matches!(boxes, Err(DistError::Refuted(_))));
        }
    }
    println!("{t:?}, {uneven} symbolic claims with an uneven layout");
    assert!(t.claims > 400, "{t:?}");
    // Not decided here (the boxes decide them): an uneven nested cut, and an intermediate
    // uneven layout whose member pieces a window cuts differently on different devices.
    assert!(t.symbolic * 10 > t.claims * 7, "{t:?}");
    assert!(uneven > 20, "{uneven}");
    assert!(
        t.mutants > 600 && t.mutants_refuted * 2 > t.mutants,
        "{t:?}"
    );
}

#[test]
fn a_claim_on_65536_devices_is_decided_symbolically_alone() {
    // 16x64x64 devices, (256, 256): [S0, S1, R] -> [R, S1, S0] by an all-gather over a and a
    // slice of 4 rows by c; the symbolic state has one piece whatever the device count.
    let m = Mesh::parse("a=16,b=64,c=64").unwrap();
    let (s, t) = claim(
        &m,
        &[256, 256],
        "[Shard(0), Shard(1), Replicate()]",
        "[Replicate(), Shard(1), Shard(0)]",
    );
    let slice = |shift: i64| -> Vec<Vec<Vec<i64>>> {
        (0..m.size())
            .map(|r| {
                let c = m.coords(r)[2];
                let rows = (0..4).map(|i| (4 * c + i + shift).min(255)).collect();
                vec![rows, (0..4).collect()]
            })
            .collect()
    };
    let plan = |shift| Plan {
        ranks: m.size(),
        steps: vec![
            Step::AllGather {
                groups: m.groups(&[0]),
                dim: 0,
            },
            Step::Local {
                shape: vec![4, 4],
                maps: slice(shift),
            },
        ],
    };
    let sym = symbolic::decide(&s, &t, &plan(0)).unwrap();
    // Every element on the 16 devices of a (replicated there).
    assert_eq!((sym.pieces, sym.places), (1, 256 * 256 * 16));
    let cert = certify::dist::certify_plan(&s, &t, &plan(0)).unwrap();
    assert_eq!(
        (
            cert.decided_on.as_str(),
            cert.boxes_rechecked,
            cert.cells_rechecked
        ),
        ("symbolic", false, false)
    );
    // The slice one row off on every device is not certified symbolically; the boxes refute
    // it on the first device.
    assert!(symbolic::decide(&s, &t, &plan(1)).is_err());
    match certify::dist::certify_plan(&s, &t, &plan(1)) {
        Err(DistError::Refuted(c)) => assert_eq!(c.element, Some(vec![0, 0]), "{c}"),
        other => panic!("{other:?}"),
    }
}

/// Mutations of a final send-recv applied to every receiver alike (so the messages stay affine
/// in the receiver): message `k`'s sender corner or landing corner moved by one, message `k`
/// dropped, two messages' senders swapped; or one receiver's sender changed.
fn mutate_send_recv(p: &Plan, rng: &mut Rng) -> Option<Plan> {
    let mut q = p.clone();
    let Some(Step::SendRecv { messages, .. }) = q.steps.last_mut() else {
        return None;
    };
    // Each message's index within its receiver's list (plan order).
    let mut seen = std::collections::BTreeMap::new();
    let index: Vec<usize> = messages
        .iter()
        .map(|m| {
            let e = seen.entry(m.dst).or_insert(0usize);
            *e += 1;
            *e - 1
        })
        .collect();
    let most = *seen.values().max()?;
    let k = rng.next(most as u64) as usize;
    let d = rng.next(messages[0].len.len() as u64) as usize;
    match rng.next(5) {
        0 => messages
            .iter_mut()
            .zip(&index)
            .filter(|(_, &i)| i == k)
            .for_each(|(m, _)| m.src_start[d] += 1),
        1 => messages
            .iter_mut()
            .zip(&index)
            .filter(|(_, &i)| i == k)
            .for_each(|(m, _)| m.dst_start[d] += 1),
        2 => {
            let mut it = index.iter();
            messages.retain(|_| *it.next().unwrap() != k);
        }
        3 => {
            // Every receiver's messages k and k+1 trade senders.
            let mut by: std::collections::BTreeMap<i64, Vec<usize>> = Default::default();
            for (j, m) in messages.iter().enumerate() {
                by.entry(m.dst).or_default().push(j);
            }
            for list in by.values() {
                if list.len() > k + 1 {
                    let (a, b) = (list[k], list[k + 1]);
                    let (sa, sb) = (messages[a].src, messages[b].src);
                    messages[a].src = sb;
                    messages[b].src = sa;
                }
            }
        }
        _ => {
            let j = rng.next(messages.len() as u64) as usize;
            messages[j].src = (messages[j].src + 1) % p.ranks;
        }
    }
    Some(q)
}

#[test]
fn symbolic_send_recv_certifications_are_box_certifications() {
    let meshes = [
        "gpuid=4",
        "a=6",
        "a=2,b=4",
        "a=2,b=3",
        "a=2,b=2,c=2",
        "a=4,b=2 devices=[[7,6],[5,4],[3,2],[1,0]]",
    ];
    let mut rng = Rng(0x9e3779b97f4a7c15);
    let (mut claims, mut send_recv, mut symbolic_sr) = (0, 0, 0);
    let (mut mutants, mut refuted, mut kept) = (0, 0, 0);
    for case in 0..400 {
        let mesh = meshes[rng.next(meshes.len() as u64) as usize];
        let m = Mesh::parse(mesh).unwrap();
        let mut ext = || {
            if rng.next(3) == 0 {
                1 + rng.next(17) as i64
            } else {
                24 * (1 + rng.next(2) as i64)
            }
        };
        let shape = [ext(), ext()];
        let (from, to) = (
            shard_or_replicate(&mut rng, m.ndim()),
            shard_or_replicate(&mut rng, m.ndim()),
        );
        let at = |p: &str| dtensor::to_layout(&m, &shape, &dtensor::parse_placements(p).unwrap());
        let (Ok(s), Ok(t)) = (at(&from), at(&to)) else {
            continue;
        };
        let Ok(p) = solver::dist::plan(&s, &t, &solver::dist::PlanOptions::default()) else {
            continue;
        };
        claims += 1;
        let what = format!("case {case}: {mesh} {shape:?} {from} -> {to}");
        let (sym, boxes) = judge(&s, &t, &p.plan, &what);
        boxes.unwrap_or_else(|e| panic!("{what}: {e}"));
        if !matches!(p.plan.steps.last(), Some(Step::SendRecv { .. })) {
            continue;
        }
        send_recv += 1;
        symbolic_sr += usize::from(sym);
        for _ in 0..4 {
            let Some(bad) = mutate_send_recv(&p.plan, &mut rng) else {
                continue;
            };
            mutants += 1;
            let (sym, boxes) = judge(&s, &t, &bad, &format!("{what}, mutated"));
            kept += usize::from(sym);
            refuted += usize::from(matches!(boxes, Err(DistError::Refuted(_))));
        }
    }
    println!(
        "{claims} claims, {send_recv} send-recv plans, {symbolic_sr} decided symbolically; \
         {mutants} mutants, {refuted} refuted by the boxes, {kept} still certified symbolically"
    );
    assert!(
        send_recv > 80 && symbolic_sr * 2 > send_recv,
        "{send_recv} {symbolic_sr}"
    );
    assert!(
        mutants > 300 && refuted * 10 > mutants * 8,
        "{mutants} {refuted}"
    );
}

#[test]
fn a_cross_dim_send_recv_on_65536_devices_is_one_receiver_class() {
    // 16x64x64 devices, (1024, 4096): [S0, S1, R] -> [S1, R, S0] in one send-recv. Receiver
    // (a, b, c) needs rows [16c, 16c+16) (held by a' = c div 4, at row 16 (c mod 4) of its
    // buffer) and columns [256a, 256a+256) (held by b' = 4a..4a+3): four messages. Which of
    // the 64 replicas sends is spread by a pattern that is not affine, (7c + 3b) mod 64.
    let m = Mesh::parse("a=16,b=64,c=64").unwrap();
    let (s, t) = claim(
        &m,
        &[1024, 4096],
        "[Shard(0), Shard(1), Replicate()]",
        "[Shard(1), Replicate(), Shard(0)]",
    );
    let plan = |wrong: Option<i64>| {
        let mut messages = Vec::new();
        for r in 0..m.size() {
            let c = m.coords(r);
            for i in 0..4 {
                let mut from = [c[2] / 4, 4 * c[0] + i, (7 * c[2] + 3 * c[1]) % 64];
                if wrong == Some(r) && i == 2 {
                    from[1] += 1;
                }
                messages.push(certify::dist::Message {
                    src: m.rank(&from),
                    dst: r,
                    src_start: vec![16 * (c[2] % 4), 0],
                    dst_start: vec![0, 64 * i],
                    len: vec![16, 64],
                });
            }
        }
        Plan {
            ranks: m.size(),
            steps: vec![Step::SendRecv {
                shape: vec![16, 256],
                messages,
            }],
        }
    };
    let sym = symbolic::decide(&s, &t, &plan(None)).unwrap();
    // One class, one piece: the four messages land one box whose element is [16c, 256a].
    assert_eq!((sym.classes, sym.pieces), (1, 1));
    let cert = certify::dist::certify_plan(&s, &t, &plan(None)).unwrap();
    assert_eq!(cert.decided_on, "symbolic");
    // One receiver's third message from the wrong column block: declined symbolically, and
    // the boxes refute it on that receiver.
    let bad = plan(Some(40_000));
    assert!(symbolic::decide(&s, &t, &bad).is_err());
    match certify::dist::certify_plan(&s, &t, &bad) {
        Err(DistError::Refuted(c)) => assert_eq!(c.rank, 40_000, "{c}"),
        other => panic!("{other:?}"),
    }
}

/// Cross-dim send-recvs on meshes of 36 to 256 devices with evenly divided shapes. A
/// receiver's sender is often `c div q` on some axis and its corner `c mod q` (a target piece
/// inside a source piece), or its pieces come from several senders whose boxes the plan cuts
/// differently on different receivers: neither is affine in the receiver, but what lands is.
/// Every plan ending in a send-recv is decided symbolically in one receiver class; on shapes
/// divisible by no extent the short shards are receiver classes of their own (a few). The
/// mutants (the send-recv mutations above) are never certified symbolically unless the boxes
/// certify them.
#[test]
fn cross_dim_send_recvs_are_one_receiver_class() {
    let meshes = [
        "a=4,b=4,c=8",
        "a=8,b=16",
        "a=3,b=12",
        "a=2,b=6,c=4",
        "a=4,b=4,c=16",
    ];
    let mut rng = Rng(0x2545f4914f6cdd1d);
    let (mut send_recv, mut one_class) = (0, 0);
    let (mut uneven, mut uneven_symbolic, mut most_classes) = (0, 0, 0);
    let (mut mutants, mut refuted, mut kept) = (0, 0, 0);
    for mesh in meshes {
        let m = Mesh::parse(mesh).unwrap();
        let k = m.ndim();
        let pairs: Vec<(String, String)> = (0..48)
            .map(|_| {
                (
                    shard_or_replicate(&mut rng, k),
                    shard_or_replicate(&mut rng, k),
                )
            })
            .collect();
        // Divisible by every product of extents (2304 = 2^8 * 9), or by none of them.
        for (i, (from, to)) in pairs.into_iter().enumerate() {
            let even = i % 4 != 3;
            let shape = if even { [2304, 4608] } else { [2303, 4601] };
            let (s, t) = claim(&m, &shape, &from, &to);
            let p = solver::dist::plan(&s, &t, &solver::dist::PlanOptions::default()).unwrap();
            if !matches!(p.plan.steps.last(), Some(Step::SendRecv { .. })) {
                continue;
            }
            let what = format!("{mesh} {shape:?} {from} -> {to}");
            let (_, boxes) = judge(&s, &t, &p.plan, &what);
            boxes.unwrap_or_else(|e| panic!("{what}: {e}"));
            if even {
                send_recv += 1;
                let y = symbolic::decide(&s, &t, &p.plan)
                    .unwrap_or_else(|e| panic!("{what}: not decided symbolically: {e}"));
                one_class += usize::from(y.classes == 1);
            } else {
                uneven += 1;
                match symbolic::decide(&s, &t, &p.plan) {
                    Ok(y) => {
                        uneven_symbolic += 1;
                        most_classes = most_classes.max(y.classes);
                    }
                    Err(e) if std::env::var("SHOWWHY").is_ok() => println!("{what}: {e}"),
                    Err(_) => {}
                }
            }
            for _ in 0..3 {
                let Some(bad) = mutate_send_recv(&p.plan, &mut rng) else {
                    continue;
                };
                mutants += 1;
                let (sym, boxes) = judge(&s, &t, &bad, &format!("{what}, mutated"));
                kept += usize::from(sym);
                refuted += usize::from(matches!(boxes, Err(DistError::Refuted(_))));
            }
        }
    }
    println!(
        "{send_recv} send-recv plans on 36 to 256 devices, all symbolic, {one_class} in one \
         receiver class; {mutants} mutants, {refuted} refuted by the boxes, {kept} still \
         certified symbolically (and by the boxes); uneven: {uneven} send-recv plans, \
         {uneven_symbolic} symbolic, at most {most_classes} receiver classes"
    );
    // The others cut a dim unevenly at two levels (torch.chunk of a chunk: not affine).
    assert!(uneven > 10 && uneven_symbolic >= 10 && most_classes <= 8);
    assert!(
        send_recv > 60 && one_class == send_recv,
        "{send_recv} {one_class}"
    );
    assert!(refuted * 10 > mutants * 7, "{mutants} {refuted}");
}
