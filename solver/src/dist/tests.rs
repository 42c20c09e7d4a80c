use super::*;
use layout::mesh::Mesh;
use layout::notation::{dtensor, jax};

fn at(mesh: &str, shape: &[i64], p: &str) -> MeshLayout {
    dtensor::to_layout(
        &Mesh::parse(mesh).unwrap(),
        shape,
        &dtensor::parse_placements(p).unwrap(),
    )
    .unwrap()
}

fn planned(mesh: &str, shape: &[i64], from: &str, to: &str) -> DistPlan {
    let p = plan(
        &at(mesh, shape, from),
        &at(mesh, shape, to),
        &PlanOptions::default(),
    )
    .unwrap();
    assert!(p.certificate.is_some(), "{:?}", p.uncertified);
    p
}

fn names(p: &DistPlan) -> Vec<&'static str> {
    p.moves
        .iter()
        .filter(|m| m.link != "local")
        .map(|m| match m.mv {
            Move::AllGather { .. } => "all-gather",
            Move::AllToAll { .. } => "all-to-all",
            Move::ReduceScatter { .. } => "reduce-scatter",
            Move::AllReduce { .. } => "all-reduce",
            Move::SendRecv => "send-recv",
            _ => "other",
        })
        .collect()
}

#[test]
fn spec_vectors_plan_the_least_movement() {
    // gpuid=4 (8,8) S0 -> S1: each rank receives 12 of its 16.
    let p = planned("gpuid=4", &[8, 8], "[Shard(0)]", "[Shard(1)]");
    assert_eq!(p.max_recv_elems(), 12);
    // (5,3) S0 -> R: every rank ends with all 15 (gathered over the padded 8 rows).
    let p = planned("gpuid=4", &[5, 3], "[Shard(0)]", "[Replicate()]");
    assert!(p.max_recv_elems() <= 15);
    // dp=2,tp=4 (8,8) [S0,R] -> [R,S1]: 8 elements each (JAX receives 32).
    let p = planned(
        "dp=2,tp=4",
        &[8, 8],
        "[Shard(0), Replicate()]",
        "[Replicate(), Shard(1)]",
    );
    assert_eq!(p.max_recv_elems(), 8);
    // [S0,S1] -> [S1,S0]: at most 8 (DTensor receives 40).
    let p = planned(
        "dp=2,tp=4",
        &[8, 8],
        "[Shard(0), Shard(1)]",
        "[Shard(1), Shard(0)]",
    );
    assert!(p.max_recv_elems() <= 8, "{}", p.max_recv_elems());
    // Partial -> Shard: one reduce-scatter.
    let p = planned(
        "dp=2,tp=2",
        &[4, 4],
        "[Partial(sum), Replicate()]",
        "[Shard(0), Replicate()]",
    );
    assert_eq!(names(&p), vec!["reduce-scatter"]);
}

#[test]
fn uneven_and_odd_meshes_are_certified() {
    for (mesh, shape, from, to) in [
        ("a=3", vec![7, 5], "[Shard(0)]", "[Shard(1)]"),
        (
            "a=2,b=3",
            vec![13, 7],
            "[Shard(0), Shard(1)]",
            "[Shard(1), Shard(0)]",
        ),
        (
            "a=2,b=3",
            vec![13, 7],
            "[Partial(sum), Shard(0)]",
            "[Shard(0), Replicate()]",
        ),
        ("a=6", vec![5, 11], "[Partial(sum)]", "[Shard(1)]"),
        (
            "a=2,b=3,c=2",
            vec![12, 9, 5],
            "[Shard(0), Shard(0), Shard(2)]",
            "[Replicate(), Shard(1), Shard(0)]",
        ),
        (
            "a=2,b=2",
            vec![5, 3],
            "[Shard(0), Shard(0)]",
            "[Replicate(), Partial(sum)]",
        ),
    ] {
        planned(mesh, &shape, from, to);
    }
}

#[test]
fn permuted_device_meshes_plan_over_the_real_ranks() {
    // DeviceMesh("cpu", [[0, 2, 4, 6], [1, 3, 5, 7]], ("dp", "tp")): the tp groups are
    // {0,2,4,6} and {1,3,5,7}; the planner's collectives run over them.
    let m = "dp=2,tp=4 devices=[0,2,4,6,1,3,5,7]";
    let p = planned(
        m,
        &[8, 8],
        "[Shard(0), Replicate()]",
        "[Replicate(), Shard(1)]",
    );
    assert_eq!(p.max_recv_elems(), 8);
    let p = planned(m, &[13, 7], "[Shard(0), Shard(1)]", "[Shard(1), Shard(0)]");
    for step in &p.plan.steps {
        if let Step::AllGather { groups, .. } | Step::AllToAll { groups, .. } = step {
            assert!(
                groups.contains(&vec![0, 2, 4, 6]) || groups.contains(&vec![0, 1]),
                "{groups:?}"
            );
        }
    }
    planned(
        m,
        &[5, 3],
        "[Partial(sum), Shard(0)]",
        "[Replicate(), Replicate()]",
    );
    // An HLO device list in no axis order lives on its own tile mesh: the planner moves it
    // point to point onto the named mesh.
    let named = Mesh::parse("x=2,y=2").unwrap();
    let odd = layout::notation::hlo::to_layout(
        &named,
        &[4, 6],
        &layout::notation::hlo::parse("{devices=[2,2]0,3,1,2}").unwrap(),
    )
    .unwrap();
    let t = at("x=2,y=2", &[4, 6], "[Shard(0), Shard(1)]");
    let p = plan(&odd, &t, &PlanOptions::default()).unwrap();
    assert!(p.certificate.is_some(), "{:?}", p.uncertified);
    assert_eq!(names(&p), vec!["send-recv"]);
}

#[test]
fn jax_flat_split_reaches_a_nested_target() {
    let m = Mesh::parse("x=2,y=3").unwrap();
    let s = jax::to_layout(&m, &[13, 4], &jax::parse_spec("P(('x','y'))").unwrap()).unwrap();
    let t = at("x=2,y=3", &[13, 4], "[Shard(0), Shard(0)]");
    let p = plan(&s, &t, &PlanOptions::default()).unwrap();
    assert!(p.certificate.is_some());
}

#[test]
fn dtensor_transforms_lower_and_certify() {
    use dtensor::Placement::*;
    let m = Mesh::parse("dp=2,tp=4").unwrap();
    let src = dtensor::parse_placements("[Shard(0), Shard(1)]").unwrap();
    let dst = at("dp=2,tp=4", &[8, 8], "[Shard(1), Shard(0)]");
    // DTensor 2.x: all-gather over tp, all-to-all over dp, slice over tp.
    let tr = vec![
        (1, Shard(1), Replicate),
        (0, Shard(0), Shard(1)),
        (1, Replicate, Shard(0)),
    ];
    let (plan, moves, end) =
        peer::lower_dtensor(&m, &[8, 8], &src, &tr, &PlanOptions::default()).unwrap();
    assert_eq!(end, dst);
    certify::dist::certify_plan(
        &at("dp=2,tp=4", &[8, 8], "[Shard(0), Shard(1)]"),
        &dst,
        &plan,
    )
    .unwrap();
    assert_eq!(moves.iter().map(|m| m.recv_elems).sum::<i64>(), 24 + 16);
}

/// Mutations of a plan: a step dropped or doubled, two group members swapped, a table entry or
/// a message corner off by one.
fn mutate(plan: &Plan, seed: u64) -> Option<Plan> {
    let mut z = seed;
    let mut next = |k: usize| {
        z = z.wrapping_add(0x9e3779b97f4a7c15);
        let mut x = z;
        x = (x ^ (x >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94d049bb133111eb);
        ((x ^ (x >> 31)) % k.max(1) as u64) as usize
    };
    if plan.steps.is_empty() {
        return None;
    }
    let mut p = plan.clone();
    let k = next(p.steps.len());
    match next(4) {
        0 => {
            p.steps.remove(k);
        }
        1 => {
            let s = p.steps[k].clone();
            p.steps.insert(k, s);
        }
        _ => match &mut p.steps[k] {
            Step::AllGather { groups, .. }
            | Step::ReduceScatter { groups, .. }
            | Step::AllReduce { groups, .. }
            | Step::AllToAll { groups, .. } => {
                let g = next(groups.len());
                if groups[g].len() < 2 {
                    return None;
                }
                let i = next(groups[g].len());
                let j = (i + 1 + next(groups[g].len() - 1)) % groups[g].len();
                groups[g].swap(i, j);
            }
            Step::Local { maps, .. } => {
                let r = next(maps.len());
                let d = next(maps[r].len());
                if maps[r][d].is_empty() {
                    return None;
                }
                let u = next(maps[r][d].len());
                maps[r][d][u] = if maps[r][d][u] > 0 {
                    maps[r][d][u] - 1
                } else {
                    1
                };
            }
            Step::SendRecv { messages, .. } => {
                if messages.is_empty() {
                    return None;
                }
                let m = next(messages.len());
                let d = next(messages[m].dst_start.len());
                if next(2) == 0 {
                    messages[m].src = (messages[m].src + 1) % plan.ranks;
                } else {
                    messages[m].dst_start[d] += 1;
                }
            }
            _ => return None,
        },
    }
    Some(p)
}

#[test]
fn mutated_plans_are_refuted_alike_on_boxes_and_cells() {
    let meshes = [
        "gpuid=4",
        "a=3",
        "a=2,b=3",
        "a=2,b=2,c=2",
        "a=2,b=3 devices=[[5,0,3],[1,4,2]]",
    ];
    let placements = ["Shard(0)", "Shard(1)", "Replicate()", "Partial(sum)"];
    let (mut tried, mut refuted, mut same) = (0, 0, 0);
    for seed in 0..160u64 {
        let mut z = seed.wrapping_mul(2654435761).wrapping_add(7);
        let mut next = |k: u64| {
            z ^= z << 13;
            z ^= z >> 7;
            z ^= z << 17;
            z % k
        };
        let mesh = meshes[next(meshes.len() as u64) as usize];
        let m = Mesh::parse(mesh).unwrap();
        let shape = [1 + next(9) as i64, 1 + next(9) as i64];
        let mut pick = || {
            let v: Vec<&str> = (0..m.ndim())
                .map(|_| placements[next(4) as usize])
                .collect();
            format!("[{}]", v.join(", "))
        };
        let (from, to) = (pick(), pick());
        let at = |p: &str| dtensor::to_layout(&m, &shape, &dtensor::parse_placements(p).unwrap());
        let (Ok(s), Ok(t)) = (at(&from), at(&to)) else {
            continue;
        };
        let Ok(p) = plan(&s, &t, &PlanOptions::default()) else {
            continue;
        };
        let cert = p.certificate.as_ref().unwrap();
        assert!(cert.cells_rechecked, "{mesh} {from} -> {to}");
        for k in 0..4 {
            let Some(bad) = mutate(&p.plan, seed * 8 + k) else {
                continue;
            };
            tried += 1;
            // Both deciders run on these small claims; a disagreement is `Unknown`.
            match certify::dist::certify_plan(&s, &t, &bad) {
                Err(DistError::Refuted(c)) => {
                    refuted += 1;
                    assert!(c.rank >= 0 && c.rank < m.size());
                }
                Ok(_) => same += 1,
                Err(DistError::Unknown(w)) => panic!("{mesh} {shape:?} {from} -> {to}: {w}"),
            }
        }
    }
    println!("{tried} mutated plans: {refuted} refuted, {same} still right");
    // A mutation may leave the claim met (a table entry changed in a padding row, two members
    // that hold the same copy swapped, an identity table doubled); most do not.
    assert!(
        tried > 150 && refuted * 2 > tried,
        "{tried} {refuted} {same}"
    );
}

mod props {
    use super::*;
    use proptest::prelude::*;

    fn placement(nd: usize) -> impl Strategy<Value = String> {
        prop_oneof![
            (0..nd).prop_map(|d| format!("Shard({d})")),
            Just("Replicate()".to_string()),
            Just("Partial(sum)".to_string()),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Every plan the planner returns is certified by the simulator, on 1-D to 3-D meshes
        /// with odd extents and uneven shapes, partial sources and targets.
        #[test]
        fn every_plan_is_certified(
            ext in prop::collection::vec(1i64..4, 1..4),
            shape in prop::collection::vec(1i64..10, 2..3),
            seed in prop::collection::vec(placement(2), 6),
        ) {
            let names = ["a", "b", "c"];
            let mesh: Vec<String> = ext.iter().enumerate().map(|(i, e)| format!("{}={e}", names[i])).collect();
            let mesh = mesh.join(",");
            let k = ext.len();
            let from = format!("[{}]", seed[..k].join(", "));
            let mut to_p: Vec<String> = seed[3..3 + k].to_vec();
            // A partial target needs a partial-free or same-op source; keep sum everywhere.
            if to_p.iter().any(|p| p.starts_with("Partial")) && seed[..k].iter().any(|p| p.starts_with("Partial")) {
                to_p = to_p.into_iter().map(|p| if p.starts_with("Partial") { "Replicate()".into() } else { p }).collect();
            }
            let to = format!("[{}]", to_p.join(", "));
            let m = Mesh::parse(&mesh).unwrap();
            let (s, t) = match (
                dtensor::to_layout(&m, &shape, &dtensor::parse_placements(&from).unwrap()),
                dtensor::to_layout(&m, &shape, &dtensor::parse_placements(&to).unwrap()),
            ) {
                (Ok(s), Ok(t)) => (s, t),
                _ => return Ok(()),
            };
            match plan(&s, &t, &PlanOptions::default()) {
                Ok(p) => prop_assert!(p.certificate.is_some(), "{mesh} {from} -> {to}: {:?}", p.uncertified),
                Err(DistPlanError::NoPlan(_)) => {}
                Err(e) => prop_assert!(false, "{mesh} {shape:?} {from} -> {to}: {e}"),
            }
        }
    }
}
