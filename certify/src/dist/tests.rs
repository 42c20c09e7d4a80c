use super::*;
use layout::mesh::Mesh;
use layout::notation::dtensor;

fn lay(mesh: &str, shape: &[i64], p: &str) -> MeshLayout {
    let m = Mesh::parse(mesh).unwrap();
    dtensor::to_layout(&m, shape, &dtensor::parse_placements(p).unwrap()).unwrap()
}

fn refuted(r: Result<DistCertificate, DistError>) -> DistCounterexample {
    match r {
        Err(DistError::Refuted(c)) => c,
        other => panic!("expected a refutation, got {other:?}"),
    }
}

#[test]
fn one_all_to_all_moves_rows_to_columns() {
    let (s, t) = (
        lay("gpuid=4", &[8, 8], "[Shard(0)]"),
        lay("gpuid=4", &[8, 8], "[Shard(1)]"),
    );
    let plan = Plan {
        ranks: 4,
        steps: vec![Step::AllToAll {
            groups: vec![vec![0, 1, 2, 3]],
            split_dim: 1,
            concat_dim: 0,
        }],
    };
    let cert = certify_plan(&s, &t, &plan).unwrap();
    assert_eq!(
        (cert.places_checked, cert.quotient.clone()),
        (16, vec![2, 2])
    );
    check_certificate(&cert).unwrap();
    // A wrong peer (group order swapped) lands columns on the wrong device.
    let bad = Plan {
        ranks: 4,
        steps: vec![Step::AllToAll {
            groups: vec![vec![1, 0, 2, 3]],
            split_dim: 1,
            concat_dim: 0,
        }],
    };
    let c = refuted(certify_plan(&s, &t, &bad));
    assert_eq!((c.rank, c.element.clone()), (0, Some(vec![0, 0])), "{c}");
    // A dropped step leaves rank 0 with the wrong shape.
    let c = refuted(certify_plan(
        &s,
        &t,
        &Plan {
            ranks: 4,
            steps: vec![],
        },
    ));
    assert_eq!(c.rank, 0);
}

#[test]
fn uneven_gather_unpads_and_off_by_one_is_refused() {
    // (5,3) over 4: pieces of 2,2,1,0 rows; gather over padded 8 then unpad to 5.
    let (s, t) = (
        lay("gpuid=4", &[5, 3], "[Shard(0)]"),
        lay("gpuid=4", &[5, 3], "[Replicate()]"),
    );
    let unpad = |shift: i64| -> Vec<Vec<Vec<i64>>> {
        (0..4)
            .map(|_| vec![vec![0, 1, 2, 3, 4 + shift], vec![0, 1, 2]])
            .collect()
    };
    let plan = |shift| Plan {
        ranks: 4,
        steps: vec![
            Step::AllGather {
                groups: vec![vec![0, 1, 2, 3]],
                dim: 0,
            },
            Step::Local {
                shape: vec![5, 3],
                maps: unpad(shift),
            },
        ],
    };
    certify_plan(&s, &t, &plan(0)).unwrap();
    let c = refuted(certify_plan(&s, &t, &plan(-1)));
    assert_eq!(c.element, Some(vec![4, 0]), "{c}");
    assert!(c.message.contains("element [3, 0]"), "{c}");
}

#[test]
fn partial_sums_are_reduced_exactly_once() {
    let (s, t) = (
        lay("dp=2,tp=2", &[4, 4], "[Partial(sum), Replicate()]"),
        lay("dp=2,tp=2", &[4, 4], "[Shard(0), Replicate()]"),
    );
    let rs = Step::ReduceScatter {
        groups: vec![vec![0, 2], vec![1, 3]],
        dim: 0,
        op: ReduceOp::Sum,
    };
    certify_plan(
        &s,
        &t,
        &Plan {
            ranks: 4,
            steps: vec![rs.clone()],
        },
    )
    .unwrap();
    // Reduced twice: an all-reduce over dp then the reduce-scatter.
    let ar = Step::AllReduce {
        groups: vec![vec![0, 2], vec![1, 3]],
        op: ReduceOp::Sum,
    };
    let c = refuted(certify_plan(
        &s,
        &t,
        &Plan {
            ranks: 4,
            steps: vec![ar, rs],
        },
    ));
    assert!(c.message.contains("more than once"), "{c}");
    // Never reduced: a local slice keeps one addend.
    let maps = (0..4)
        .map(|r| {
            vec![
                if r / 2 == 0 { vec![0, 1] } else { vec![2, 3] },
                vec![0, 1, 2, 3],
            ]
        })
        .collect();
    let c = refuted(certify_plan(
        &s,
        &t,
        &Plan {
            ranks: 4,
            steps: vec![Step::Local {
                shape: vec![2, 4],
                maps,
            }],
        },
    ));
    assert!(c.message.contains("incompletely"), "{c}");
}

#[test]
fn a_partial_target_needs_each_addend_once_across_its_places() {
    let (s, t) = (
        lay("gpuid=2", &[2], "[Replicate()]"),
        lay("gpuid=2", &[2], "[Partial(sum)]"),
    );
    certify_plan(
        &s,
        &t,
        &Plan {
            ranks: 2,
            steps: vec![Step::Zero { ranks: vec![1] }],
        },
    )
    .unwrap();
    let c = refuted(certify_plan(
        &s,
        &t,
        &Plan {
            ranks: 2,
            steps: vec![],
        },
    ));
    assert!(c.message.contains("2 term(s)"), "{c}");
}

#[test]
fn tampered_certificate_is_rejected() {
    let (s, t) = (
        lay("gpuid=2", &[4], "[Shard(0)]"),
        lay("gpuid=2", &[4], "[Replicate()]"),
    );
    let plan = Plan {
        ranks: 2,
        steps: vec![Step::AllGather {
            groups: vec![vec![0, 1]],
            dim: 0,
        }],
    };
    let mut cert = certify_plan(&s, &t, &plan).unwrap();
    cert.plan.steps[0] = Step::AllGather {
        groups: vec![vec![1, 0]],
        dim: 0,
    };
    assert!(check_certificate(&cert).is_err());
}

#[test]
fn large_even_claims_are_decided_on_the_quotient_and_mutations_still_refuted() {
    // 4096x8192 over 4 ranks: 32M elements, decided on blocks of 1024x8192.
    let (s, t) = (
        lay("gpuid=4", &[4096, 8192], "[Shard(0)]"),
        lay("gpuid=4", &[4096, 8192], "[Shard(1)]"),
    );
    let plan = Plan {
        ranks: 4,
        steps: vec![Step::AllToAll {
            groups: vec![vec![0, 1, 2, 3]],
            split_dim: 1,
            concat_dim: 0,
        }],
    };
    let cert = certify_plan(&s, &t, &plan).unwrap();
    assert_eq!(cert.quotient, vec![1024, 2048]);
    check_certificate(&cert).unwrap();
    let bad = Plan {
        ranks: 4,
        steps: vec![Step::AllToAll {
            groups: vec![vec![0, 1, 3, 2]],
            split_dim: 1,
            concat_dim: 0,
        }],
    };
    let c = refuted(certify_plan(&s, &t, &bad));
    assert_eq!((c.rank, c.element.clone()), (0, Some(vec![2048, 0])), "{c}");
    // A table that is not an inflation (one entry off) is decided at full size and refuted.
    let (s, t) = (
        lay("gpuid=2", &[8, 4], "[Shard(0)]"),
        lay("gpuid=2", &[8, 4], "[Replicate()]"),
    );
    let mut m0: Vec<i64> = (0..8).collect();
    m0[5] = 4;
    let plan = Plan {
        ranks: 2,
        steps: vec![
            Step::AllGather {
                groups: vec![vec![0, 1]],
                dim: 0,
            },
            Step::Local {
                shape: vec![8, 4],
                maps: vec![
                    vec![m0.clone(), (0..4).collect()],
                    vec![m0, (0..4).collect()],
                ],
            },
        ],
    };
    let c = refuted(certify_plan(&s, &t, &plan));
    assert_eq!(c.element, Some(vec![5, 0]), "{c}");
}
