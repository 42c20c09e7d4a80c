//! The plan interpreter behind `laycert dist run` (codegen::nccl_run), on host memory: every
//! planned redistribution and every DTensor step kind ends at the target, and broken plans end
//! somewhere else, as the certificate says. The GPU backend runs the same interpreter with the
//! NCCL program's kernels (a device run, bench/dist/README.md).

use certify::dist::{certify_plan, Plan, Step};
use codegen::nccl_run::run_on_host;
use layout::mesh::{Mesh, MeshLayout};
use layout::notation::dtensor;
use solver::dist::{peer, plan, PlanOptions};

fn layout(mesh: &str, shape: &[i64], p: &str) -> MeshLayout {
    dtensor::to_layout(
        &Mesh::parse(mesh).unwrap(),
        shape,
        &dtensor::parse_placements(p).unwrap(),
    )
    .unwrap()
}

/// 1-D to 3-D meshes, extents 3 and 6, uneven shapes, partial sources, interleaved strided shards.
const CLAIMS: &[(&str, &[i64], &str, &str)] = &[
    ("a=3", &[7, 5], "[Shard(0)]", "[Shard(1)]"),
    ("a=6", &[5, 11], "[Partial(sum)]", "[Shard(1)]"),
    (
        "a=2,b=3",
        &[13, 7],
        "[Shard(0),Shard(1)]",
        "[Shard(1),Shard(0)]",
    ),
    (
        "a=2,b=3",
        &[13, 7],
        "[Partial(sum),Shard(0)]",
        "[Shard(0),Replicate()]",
    ),
    (
        "a=2,b=2,c=2",
        &[6, 5, 4],
        "[Shard(0),Shard(1),Shard(2)]",
        "[Shard(2),Replicate(),Shard(0)]",
    ),
    ("a=4", &[8, 8], "[Shard(0)]", "[Shard(1)]"),
    (
        "a=2,b=4",
        &[8, 8],
        "[Partial(sum),Replicate()]",
        "[Replicate(),Replicate()]",
    ),
    (
        "a=2,b=4",
        &[12, 12],
        "[Shard(0),Replicate()]",
        "[Replicate(),Shard(1)]",
    ),
    (
        "a=2,b=4",
        &[8, 8],
        "[Shard(0),Shard(1)]",
        "[Shard(1),Shard(0)]",
    ),
    ("a=4", &[10, 3], "[Replicate()]", "[Shard(0)]"),
    (
        "a=2,b=3",
        &[7, 9],
        "[Shard(1),Partial(max)]",
        "[Replicate(),Replicate()]",
    ),
    (
        "a=3,b=2",
        &[5, 4],
        "[Replicate(),Replicate()]",
        "[Partial(sum),Shard(1)]",
    ),
    // DTensor's interleaved _StridedShard pieces (several boxes per rank), from and to.
    (
        "a=4,b=2",
        &[25, 3],
        "[_StridedShard(0, split_factor=2),Shard(0)]",
        "[Shard(1),Shard(0)]",
    ),
    (
        "a=2,b=3",
        &[7, 11],
        "[Partial(sum),Shard(1)]",
        "[Replicate(),_StridedShard(1, split_factor=2)]",
    ),
];

#[test]
fn every_planned_redistribution_runs_to_its_target_on_the_host_interpreter() {
    let mut kinds = std::collections::BTreeSet::new();
    for &(mesh, shape, from, to) in CLAIMS {
        let (s, t) = (layout(mesh, shape, from), layout(mesh, shape, to));
        let p = plan(&s, &t, &PlanOptions::default()).unwrap();
        assert!(
            p.certificate.is_some(),
            "{mesh} {from} -> {to}: not certified"
        );
        let r = run_on_host(&p.plan, &s, &t).unwrap();
        assert_eq!(
            r.wrong, 0,
            "{mesh} {shape:?} {from} -> {to}: {:?}",
            r.first_wrong
        );
        if t.partial
            .values()
            .all(|&o| o == layout::mesh::ReduceOp::Sum)
        {
            assert_eq!(
                r.places_checked as i64,
                (0..t.mesh.size())
                    .flat_map(|q| t.pieces(q))
                    .map(|(bx, _)| bx.iter().map(|(a, b)| b - a).product::<i64>())
                    .sum::<i64>()
            );
        }
        kinds.extend(p.plan.steps.iter().map(Step::name));
    }
    for k in ["send-recv", "all-reduce", "reduce-scatter", "zero"] {
        assert!(kinds.contains(k), "no {k} among {kinds:?}");
    }
}

#[test]
fn every_dtensor_step_kind_runs_to_its_target() {
    let o = PlanOptions::default();
    let p = |s: &str| dtensor::parse_placements(s).unwrap()[0].clone();
    let cases: &[(&str, &[i64], &str, &str, &str)] = &[
        ("a=4", &[9, 6], "[Shard(0)]", "Shard(0)", "Replicate()"),
        (
            "a=4",
            &[9, 6],
            "[Partial(sum)]",
            "Partial(sum)",
            "Replicate()",
        ),
        ("a=3", &[9, 6], "[Partial(sum)]", "Partial(sum)", "Shard(0)"),
        ("a=3", &[9, 6], "[Shard(0)]", "Shard(0)", "Shard(1)"),
        ("a=4", &[9, 6], "[Replicate()]", "Replicate()", "Shard(1)"),
        (
            "a=4",
            &[9, 6],
            "[Replicate()]",
            "Replicate()",
            "Partial(sum)",
        ),
        (
            "a=2",
            &[4, 6],
            "[Partial(max)]",
            "Partial(max)",
            "Replicate()",
        ),
    ];
    let mut kinds = std::collections::BTreeSet::new();
    for &(mesh, shape, src, from, to) in cases {
        let m = Mesh::parse(mesh).unwrap();
        let source = dtensor::parse_placements(src).unwrap();
        let (pl, _, target) =
            peer::lower_dtensor(&m, shape, &source, &[(0, p(from), p(to))], &o).unwrap();
        let s = layout(mesh, shape, src);
        let r = run_on_host(&pl, &s, &target).unwrap();
        assert_eq!(r.wrong, 0, "{mesh} {from} -> {to}: {:?}", r.first_wrong);
        kinds.extend(pl.steps.iter().map(Step::name));
    }
    for k in [
        "all-gather",
        "all-reduce",
        "reduce-scatter",
        "all-to-all",
        "local",
        "zero",
    ] {
        assert!(kinds.contains(k), "no {k} among {kinds:?}");
    }
}

#[test]
fn a_broadcast_from_the_groups_root_runs_to_a_replica() {
    // The group [1, 0] with root 0 broadcasts rank 1's replica: both ranks keep the tensor.
    let s = layout("a=2", &[1, 3], "[Replicate()]");
    let plan = Plan {
        ranks: 2,
        steps: vec![Step::Broadcast {
            groups: vec![vec![1, 0]],
            root: 0,
        }],
    };
    let r = run_on_host(&plan, &s, &s).unwrap();
    assert_eq!((r.wrong, r.places_checked), (0, 6));
    // A root outside the group is an error.
    let bad = Plan {
        ranks: 2,
        steps: vec![Step::Broadcast {
            groups: vec![vec![1, 0]],
            root: 2,
        }],
    };
    assert!(run_on_host(&bad, &s, &s).is_err());
}

#[test]
fn broken_plans_end_elsewhere_and_the_certificate_agrees() {
    let (s, t) = (
        layout("a=2,b=3", &[13, 7], "[Shard(0),Shard(1)]"),
        layout("a=2,b=3", &[13, 7], "[Shard(1),Shard(0)]"),
    );
    let good = plan(&s, &t, &PlanOptions::default()).unwrap().plan;
    let mut broken = Vec::new();
    if let Step::SendRecv { shape, messages } = &good.steps[0] {
        let mut m = messages.clone();
        m.remove(1);
        broken.push(Step::SendRecv {
            shape: shape.clone(),
            messages: m,
        });
        let mut m = messages.clone();
        m[2].src = (m[2].src + 1) % 6;
        broken.push(Step::SendRecv {
            shape: shape.clone(),
            messages: m,
        });
    } else {
        panic!("expected one send-recv step: {:?}", good.steps);
    }
    for step in broken {
        let p = Plan {
            ranks: 6,
            steps: vec![step],
        };
        let cert = certify_plan(&s, &t, &p);
        match run_on_host(&p, &s, &t) {
            Ok(r) => assert!(r.wrong > 0, "a broken plan ran to the target"),
            Err(e) => assert!(e.to_string().contains("out of bounds"), "{e}"),
        }
        assert!(cert.is_err(), "the certificate accepted a broken plan");
    }
    // A summed partial target whose zeroing step is dropped counts every addend twice: the
    // run's per-value sums say so, as the certificate does.
    let (s2, t2) = (
        layout("a=3,b=2", &[5, 4], "[Replicate(),Replicate()]"),
        layout("a=3,b=2", &[5, 4], "[Partial(sum),Shard(1)]"),
    );
    let good = plan(&s2, &t2, &PlanOptions::default()).unwrap().plan;
    assert_eq!(run_on_host(&good, &s2, &t2).unwrap().wrong, 0);
    let p = Plan {
        ranks: 6,
        steps: good
            .steps
            .iter()
            .filter(|st| !matches!(st, Step::Zero { .. }))
            .cloned()
            .collect(),
    };
    assert!(p.steps.len() < good.steps.len(), "{:?}", good.steps);
    let r = run_on_host(&p, &s2, &t2).unwrap();
    assert!(r.wrong > 0 && r.places_checked > 0, "{r:?}");
    assert!(certify_plan(&s2, &t2, &p).is_err());
    // A group naming a rank outside the plan is an error, not a panic.
    let p = Plan {
        ranks: 6,
        steps: vec![Step::AllGather {
            groups: vec![vec![0, 9]],
            dim: 0,
        }],
    };
    assert!(run_on_host(&p, &s, &t).is_err());
}
