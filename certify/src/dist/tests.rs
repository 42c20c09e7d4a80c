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
        (
            cert.places_checked,
            cert.decided_on.as_str(),
            cert.cells_rechecked
        ),
        (64, "symbolic", true)
    );
    assert!(cert.boxes_rechecked);
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
fn large_claims_are_decided_on_boxes_and_mutations_still_refuted() {
    // 4096x8192 over 4 ranks: 32M elements, a few boxes per rank (too many cells to re-check).
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
    assert_eq!(
        (
            cert.decided_on.as_str(),
            cert.cells_rechecked,
            cert.boxes_rechecked
        ),
        ("symbolic", false, true)
    );
    let on_boxes = decide_on_boxes(&s, &t, &plan).unwrap();
    assert_eq!(on_boxes.places_checked, cert.places_checked);
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
    // A table with one entry off is refuted at that entry.
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

#[test]
fn boxes_worked_vector_a_gather_merges_into_one_piece() {
    let s = lay("gpuid=4", &[5, 3], "[Shard(0)]");
    let start = boxes::initial(&s);
    let p2 = &start[2].pieces[0];
    assert_eq!(
        (p2.lo.clone(), p2.len.clone(), p2.elem.clone()),
        (vec![0, 0], vec![1, 3], vec![4, 0])
    );
    assert!(start[3].pieces.is_empty());
    let plan = Plan {
        ranks: 4,
        steps: vec![Step::AllGather {
            groups: vec![vec![0, 1, 2, 3]],
            dim: 0,
        }],
    };
    let end = boxes::run(&plan, start, &[5, 3]).unwrap();
    assert_eq!(end[1].shape, vec![8, 3]);
    let p = &end[1].pieces[..];
    assert_eq!(p.len(), 1);
    assert_eq!(
        (p[0].lo.clone(), p[0].len.clone(), p[0].elem.clone()),
        (vec![0, 0], vec![5, 3], vec![0, 0])
    );
    // Cell for cell what the simulator holds.
    let cells = simulate::run(&plan, initial_buffers(&s).unwrap()).unwrap();
    assert_eq!(end[1].to_cells(&[5, 3]), cells[1]);
}

#[test]
fn an_uneven_claim_on_1024_devices_is_decided_on_boxes_and_a_wrong_entry_named() {
    // 1023x1021 on 8x8x16, [S0, S1, R] -> [R, S1, R]: gather the row pieces (127 in the last,
    // padded to 128) over `a`, then drop the padding row.
    let m = "a=8,b=8,c=16";
    let (s, t) = (
        lay(m, &[1023, 1021], "[Shard(0), Shard(1), Replicate()]"),
        lay(m, &[1023, 1021], "[Replicate(), Shard(1), Replicate()]"),
    );
    let groups = s.mesh.groups(&[0]);
    let unpad = |bad_rank: i64| -> Vec<Vec<Vec<i64>>> {
        (0..1024)
            .map(|r| {
                let mut rows: Vec<i64> = (0..1023).collect();
                if r == bad_rank {
                    rows[500] = 501;
                }
                vec![rows, (0..128).collect()]
            })
            .collect()
    };
    let plan = |bad_rank| Plan {
        ranks: 1024,
        steps: vec![
            Step::AllGather {
                groups: groups.clone(),
                dim: 0,
            },
            Step::Local {
                shape: vec![1023, 128],
                maps: unpad(bad_rank),
            },
        ],
    };
    let cert = certify_plan(&s, &t, &plan(-1)).unwrap();
    assert_eq!(
        (cert.decided_on.as_str(), cert.boxes_rechecked),
        ("symbolic", true)
    );
    assert_eq!(cert.places_checked, 1023 * 1021 * 128);
    let on_boxes = decide_on_boxes(&s, &t, &plan(-1)).unwrap();
    assert_eq!(on_boxes.places_checked, cert.places_checked);
    // Rank 777 is (a 6, b 0, c 9): its columns start at 0; its row 500 holds row 501.
    let c = refuted(certify_plan(&s, &t, &plan(777)));
    assert_eq!(
        (c.rank, c.element.clone()),
        (777, Some(vec![500, 0])),
        "{c}"
    );
    assert!(c.message.contains("holds element [501, 0]"), "{c}");
}

#[test]
fn more_than_64_addends_are_decided_on_boxes() {
    // 128 addends per value: two partial axes of 8 and 16.
    let (s, t) = (
        lay("a=8,b=16", &[3, 5], "[Partial(sum), Partial(sum)]"),
        lay("a=8,b=16", &[3, 5], "[Replicate(), Replicate()]"),
    );
    let ar = |axis: usize| Step::AllReduce {
        groups: s.mesh.groups(&[axis]),
        op: ReduceOp::Sum,
    };
    let plan = Plan {
        ranks: 128,
        steps: vec![ar(0), ar(1)],
    };
    let cert = certify_plan(&s, &t, &plan).unwrap();
    assert!(!cert.cells_rechecked);
    let c = refuted(certify_plan(
        &s,
        &t,
        &Plan {
            ranks: 128,
            steps: vec![ar(0)],
        },
    ));
    assert_eq!((c.rank, c.element.clone()), (0, Some(vec![0, 0])), "{c}");
    assert!(
        c.message
            .contains("holds 8 addend(s) (set {0..1, 16..17, 32..33, 48..49, 64..65, 80..81, 96..97, 112..113}) of 128: a partial sum reduced incompletely"),
        "{c}"
    );
    let c = refuted(certify_plan(
        &s,
        &t,
        &Plan {
            ranks: 128,
            steps: vec![ar(0), ar(1), ar(0)],
        },
    ));
    assert!(c.message.contains("reduced more than once"), "{c}");
}

/// A small deterministic generator for the cross-check (splitmix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self, k: i64) -> i64 {
        self.0 = self.0.wrapping_add(0x9e3779b97f4a7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d049bb133111eb);
        ((z ^ (z >> 31)) % k.max(1) as u64) as i64
    }
}

/// A random step for buffers of `shapes` on `mesh`: mostly well-formed, sometimes not (out of
/// range roots, boxes, dims and table entries), so errors are compared too.
fn random_step(g: &mut Rng, mesh: &Mesh, shapes: &[Vec<i64>]) -> Step {
    let n = mesh.size();
    let nd = shapes[0].len();
    let groups = |g: &mut Rng| {
        let mut gs = mesh.groups(&[g.next(mesh.ndim() as i64) as usize]);
        if g.next(3) == 0 {
            let k = g.next(gs.len() as i64) as usize;
            gs[k].reverse();
        }
        gs
    };
    let dim = |g: &mut Rng| {
        let extra = i64::from(g.next(8) == 0);
        g.next(nd as i64 + extra) as usize
    };
    match g.next(8) {
        0 => Step::AllGather {
            groups: groups(g),
            dim: dim(g),
        },
        1 => Step::ReduceScatter {
            groups: groups(g),
            dim: dim(g),
            op: ReduceOp::Sum,
        },
        2 => Step::AllReduce {
            groups: groups(g),
            op: ReduceOp::Sum,
        },
        3 => Step::AllToAll {
            groups: groups(g),
            split_dim: dim(g),
            concat_dim: dim(g),
        },
        4 => {
            let groups = groups(g);
            let root = g.next(groups[0].len() as i64 + 1) as usize;
            Step::Broadcast { groups, root }
        }
        5 => {
            let shape: Vec<i64> = (0..nd).map(|_| 1 + g.next(6)).collect();
            let messages = (0..g.next(3 * n))
                .map(|_| {
                    let (src, dst) = (g.next(n), g.next(n));
                    let ss = &shapes[src as usize];
                    let len: Vec<i64> = (0..nd).map(|d| g.next(ss[d].min(shape[d]) + 1)).collect();
                    Message {
                        src,
                        dst,
                        src_start: (0..nd)
                            .map(|d| {
                                let extra = i64::from(g.next(16) == 0);
                                g.next(ss[d] - len[d] + 1 + extra)
                            })
                            .collect(),
                        dst_start: (0..nd).map(|d| g.next(shape[d] - len[d] + 1)).collect(),
                        len,
                    }
                })
                .collect();
            Step::SendRecv { shape, messages }
        }
        6 => {
            let shape: Vec<i64> = (0..nd).map(|_| 1 + g.next(7)).collect();
            let maps = (0..n as usize)
                .map(|r| {
                    (0..nd)
                        .map(|d| {
                            let old = shapes[r][d];
                            let (mode, off) = (g.next(3), g.next(old + 1) - 1);
                            (0..shape[d])
                                .map(|u| {
                                    let v = match mode {
                                        0 => u + off,
                                        1 => old - 1 - u,
                                        _ => g.next(old + 1) - 1,
                                    };
                                    if v >= old && g.next(32) > 0 {
                                        -1
                                    } else {
                                        v
                                    }
                                })
                                .collect()
                        })
                        .collect()
                })
                .collect();
            Step::Local { shape, maps }
        }
        _ => Step::Zero {
            ranks: (0..n).filter(|_| g.next(3) == 0).collect(),
        },
    }
}

#[test]
fn boxes_equal_the_cell_simulator_on_random_plans() {
    let meshes = [
        "gpuid=4",
        "a=3",
        "a=2,b=3",
        "a=2,b=2",
        "a=2,b=2,c=2",
        "gpuid=1",
        "a=2,b=3 devices=[5,0,3,1,4,2]",
        "a=2,b=2,c=2 devices=[0,4,2,6,1,5,3,7]",
    ];
    let placements = ["Shard(0)", "Shard(1)", "Replicate()", "Partial(sum)"];
    let (mut ran, mut errors, mut certified, mut refuted_n) = (0, 0, 0, 0);
    for seed in 0..1500u64 {
        let g = &mut Rng(seed);
        let mesh = Mesh::parse(meshes[g.next(meshes.len() as i64) as usize]).unwrap();
        let shape: Vec<i64> = (0..2).map(|_| 1 + g.next(7)).collect();
        let mut pick = || {
            let v: Vec<&str> = (0..mesh.ndim())
                .map(|_| placements[g.next(4) as usize])
                .collect();
            format!("[{}]", v.join(", "))
        };
        let (from, to) = (pick(), pick());
        let parse =
            |p: &str| dtensor::to_layout(&mesh, &shape, &dtensor::parse_placements(p).unwrap());
        let (Ok(s), Ok(t)) = (parse(&from), parse(&to)) else {
            continue;
        };
        // Steps chosen on the buffers the simulator holds so far.
        let mut cells = initial_buffers(&s).unwrap();
        let mut steps = Vec::new();
        for _ in 0..1 + g.next(4) {
            let shapes: Vec<Vec<i64>> = cells.iter().map(|b| b.shape.clone()).collect();
            let step = random_step(g, &mesh, &shapes);
            let one = Plan {
                ranks: mesh.size(),
                steps: vec![step.clone()],
            };
            steps.push(step);
            match simulate::run(&one, cells.clone()) {
                Ok(next) => cells = next,
                Err(_) => break,
            }
        }
        let plan = Plan {
            ranks: mesh.size(),
            steps,
        };
        ran += 1;
        let by_cells = simulate::run(&plan, initial_buffers(&s).unwrap());
        let by_boxes = boxes::run(&plan, boxes::initial(&s), &shape);
        match (by_cells, by_boxes) {
            (Ok(c), Ok(b)) => {
                let b: Vec<simulate::Buffer> = b.iter().map(|x| x.to_cells(&shape)).collect();
                assert_eq!(c, b, "seed {seed}: {from} on {}: {plan:?}", mesh);
            }
            (Err(e), Err(boxes::Stop::Step(f))) => {
                errors += 1;
                assert_eq!(e, f, "seed {seed}: {from} on {}: {plan:?}", mesh);
            }
            (c, b) => panic!("seed {seed}: cells {c:?} boxes {b:?} on {plan:?}"),
        }
        // The claim against a random target: both deciders ran and agreed (else Unknown).
        match certify_plan(&s, &t, &plan) {
            Ok(c) => {
                assert!(c.cells_rechecked, "seed {seed}");
                certified += 1;
            }
            Err(DistError::Refuted(_)) => refuted_n += 1,
            Err(DistError::Unknown(w)) => assert!(!w.contains("disagree"), "seed {seed}: {w}"),
        }
    }
    // The generator reaches every outcome.
    println!("{ran} plans, {errors} errors, {certified} certified, {refuted_n} refuted");
    assert!(
        ran > 1000 && errors > 100 && certified > 10 && refuted_n > 300,
        "{ran} plans, {errors} errors, {certified} certified, {refuted_n} refuted"
    );
}

#[test]
fn the_first_uncovered_cell_is_row_major_first() {
    let b = |lo: &'static [i64], len: &'static [i64]| (lo, len);
    assert_eq!(boxes::first_uncovered(&[3, 4], &[]), Some(vec![0, 0]));
    let full = [b(&[0, 0], &[3, 4])];
    assert_eq!(boxes::first_uncovered(&[3, 4], &full), None);
    // Rows 0..2 covered, row 2 covered from column 1: the gap is (2, 0).
    let v = [b(&[0, 0], &[2, 4]), b(&[2, 1], &[1, 3])];
    assert_eq!(boxes::first_uncovered(&[3, 4], &v), Some(vec![2, 0]));
    // A hole in the middle.
    let v = [
        b(&[0, 0], &[1, 4]),
        b(&[1, 0], &[2, 2]),
        b(&[1, 3], &[2, 1]),
        b(&[2, 2], &[1, 1]),
    ];
    assert_eq!(boxes::first_uncovered(&[3, 4], &v), Some(vec![1, 2]));
}

mod symbolic_decider {
    use super::*;
    use crate::dist::symbolic::{self, Aff};

    fn aff(k: i64, coef: &[i64]) -> Aff {
        Aff {
            k,
            coef: coef.to_vec(),
        }
    }

    /// The module's worked vector: dp=2,tp=4, (8,8), [S0, R] -> [R, S1] by an all-gather over
    /// dp and a slice of 2 columns at 2*c_tp.
    #[test]
    fn worked_vector_gather_then_slice() {
        let (s, t) = (
            lay("dp=2,tp=4", &[8, 8], "[Shard(0), Replicate()]"),
            lay("dp=2,tp=4", &[8, 8], "[Replicate(), Shard(1)]"),
        );
        let gather = Step::AllGather {
            groups: s.mesh.groups(&[0]),
            dim: 0,
        };
        let start = symbolic::execute(
            &s,
            &Plan {
                ranks: 8,
                steps: vec![],
            },
        )
        .unwrap();
        assert_eq!(start.pieces.len(), 1);
        assert_eq!(start.pieces[0].elem, vec![aff(0, &[4, 0]), aff(0, &[0, 0])]);
        let mid = symbolic::execute(
            &s,
            &Plan {
                ranks: 8,
                steps: vec![gather.clone()],
            },
        )
        .unwrap();
        assert_eq!(
            (
                mid.shape.clone(),
                mid.pieces[0].len.clone(),
                mid.pieces[0].elem.clone()
            ),
            (
                vec![8, 8],
                vec![8, 8],
                vec![aff(0, &[0, 0]), aff(0, &[0, 0])]
            )
        );
        // Columns `2*c_tp` on, or (mirrored) `6 - 2*c_tp` on.
        let slice = |mirror: bool| Step::Local {
            shape: vec![8, 2],
            maps: (0..8)
                .map(|r| {
                    let c = s.mesh.coords(r)[1];
                    let at = if mirror { 6 - 2 * c } else { 2 * c };
                    vec![(0..8).collect(), vec![at, at + 1]]
                })
                .collect(),
        };
        let plan = Plan {
            ranks: 8,
            steps: vec![gather.clone(), slice(false)],
        };
        let end = symbolic::execute(&s, &plan).unwrap();
        assert_eq!(end.pieces[0].elem, vec![aff(0, &[0, 0]), aff(0, &[0, 2])]);
        let y = symbolic::decide(&s, &t, &plan).unwrap();
        assert_eq!((y.places, y.pieces), (64 * 2, 1));
        let cert = certify_plan(&s, &t, &plan).unwrap();
        assert_eq!(
            (
                cert.decided_on.as_str(),
                cert.boxes_rechecked,
                cert.cells_rechecked
            ),
            ("symbolic", true, true)
        );
        check_certificate(&cert).unwrap();
        // A tampered digest is caught.
        let mut forged = cert.clone();
        forged.digest = "0".repeat(64);
        assert!(check_certificate(&forged).is_err());
        // The devices' columns mirrored: affine still, not the target; the boxes refute.
        let bad = Plan {
            ranks: 8,
            steps: vec![gather, slice(true)],
        };
        let why = symbolic::decide(&s, &t, &bad).unwrap_err();
        assert!(why.contains("6-2*c1"), "{why}");
        let c = refuted(certify_plan(&s, &t, &bad));
        assert_eq!((c.rank, c.element.clone()), (0, Some(vec![0, 0])), "{c}");
        assert!(c.message.contains("holds element [0, 6]"), "{c}");
    }

    #[test]
    fn partial_terms_reduced_once_zeroed_and_counted() {
        let m = "dp=2,tp=2";
        let (s, t) = (
            lay(m, &[4, 4], "[Partial(sum), Replicate()]"),
            lay(m, &[4, 4], "[Shard(0), Replicate()]"),
        );
        let groups = s.mesh.groups(&[0]);
        let rs = Step::ReduceScatter {
            groups: groups.clone(),
            dim: 0,
            op: ReduceOp::Sum,
        };
        let one = Plan {
            ranks: 4,
            steps: vec![rs.clone()],
        };
        assert_eq!(symbolic::decide(&s, &t, &one).unwrap().places, 16 * 2);
        // Reduced twice: an all-reduce first counts every addend twice.
        let twice = Plan {
            ranks: 4,
            steps: vec![
                Step::AllReduce {
                    groups: groups.clone(),
                    op: ReduceOp::Sum,
                },
                rs,
            ],
        };
        let why = symbolic::decide(&s, &t, &twice).unwrap_err();
        assert!(why.contains("count: 2"), "{why}");
        refuted(certify_plan(&s, &t, &twice));
        // Replicate -> Partial by zeroing the devices off dp 0, and back by an all-reduce.
        let (r, p) = (
            lay(m, &[4, 4], "[Replicate(), Replicate()]"),
            lay(m, &[4, 4], "[Partial(sum), Replicate()]"),
        );
        let zero = Step::Zero {
            ranks: (0..4).filter(|&x| s.mesh.coords(x)[0] != 0).collect(),
        };
        let to_partial = Plan {
            ranks: 4,
            steps: vec![zero.clone()],
        };
        assert!(symbolic::decide(&r, &p, &to_partial).is_ok());
        let round = Plan {
            ranks: 4,
            steps: vec![
                zero.clone(),
                Step::AllReduce {
                    groups: groups.clone(),
                    op: ReduceOp::Sum,
                },
            ],
        };
        assert!(symbolic::decide(&r, &r, &round).is_ok());
        // Zeroing the wrong axis leaves a dp group with two copies of the value.
        let wrong = Plan {
            ranks: 4,
            steps: vec![Step::Zero {
                ranks: (0..4).filter(|&x| s.mesh.coords(x)[1] != 0).collect(),
            }],
        };
        assert!(symbolic::decide(&r, &p, &wrong).is_err());
        refuted(certify_plan(&r, &p, &wrong));
    }

    #[test]
    fn uneven_single_cuts_are_padding_and_nested_uneven_cuts_are_not_read() {
        // 5 rows over 4: pieces 2,2,1,0 on the padded extent 8; gather and unpad.
        let (s, t) = (
            lay("gpuid=4", &[5, 3], "[Shard(0)]"),
            lay("gpuid=4", &[5, 3], "[Replicate()]"),
        );
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
                        .map(|_| vec![(0..5).collect(), (0..3).collect()])
                        .collect(),
                },
            ],
        };
        assert_eq!(symbolic::decide(&s, &t, &plan).unwrap().places, 15 * 4);
        // Without the unpad the buffer has the wrong shape; a table that keeps a padding row
        // reads padding at a target place.
        let mut keep_pad = plan.clone();
        if let Step::Local { shape, maps } = &mut keep_pad.steps[1] {
            shape[0] = 6;
            maps.iter_mut().for_each(|m| m[0] = (0..6).collect());
        }
        assert!(symbolic::decide(&s, &t, &keep_pad).is_err());
        // 9 over 2 then 2 (5 -> 3,2 and 4 -> 2,2): not affine, left to the boxes.
        let n = lay("a=2,b=2", &[9, 2], "[Shard(0), Shard(0)]");
        let why = symbolic::affine_layout(&n).unwrap_err();
        assert!(why.contains("unevenly"), "{why}");
    }

    /// A cross-dim send-recv read by what lands: a=2,b=4, (8,8), [S0, S1] -> [S1, S0].
    /// Receiver (a, b) takes rows [2b, 2b+2) from a' = b div 2 at row 2 (b mod 2) of its
    /// buffer, and columns [4a, 4a+4) from b' = 2a and 2a+1: neither the senders nor the
    /// corners are affine in (a, b), but what lands is one box with element [2b, 4a].
    #[test]
    fn send_recv_read_by_what_lands() {
        let (s, t) = (
            lay("a=2,b=4", &[8, 8], "[Shard(0), Shard(1)]"),
            lay("a=2,b=4", &[8, 8], "[Shard(1), Shard(0)]"),
        );
        let m = &s.mesh;
        let plan = |swap: bool| {
            let mut messages = Vec::new();
            for r in 0..8 {
                let c = m.coords(r);
                for i in 0..2 {
                    messages.push(Message {
                        src: m.rank(&[c[1] / 2, 2 * c[0] + i]),
                        dst: r,
                        src_start: vec![2 * ((c[1] + i64::from(swap)) % 2), 0],
                        dst_start: vec![0, 2 * i],
                        len: vec![2, 2],
                    });
                }
            }
            Plan {
                ranks: 8,
                steps: vec![Step::SendRecv {
                    shape: vec![2, 4],
                    messages,
                }],
            }
        };
        let y = symbolic::decide(&s, &t, &plan(false)).unwrap();
        assert_eq!((y.classes, y.pieces, y.places), (1, 1, 64));
        assert!(certify_on_boxes(&s, &t, &plan(false)).is_ok());
        // The two row halves of every sender swapped: declined symbolically, and the boxes
        // refute it at device 0, element [0, 0].
        assert!(symbolic::decide(&s, &t, &plan(true)).is_err());
        let c = refuted(certify_on_boxes(&s, &t, &plan(true)));
        assert_eq!((c.rank, c.element.clone()), (0, Some(vec![0, 0])), "{c}");
    }
}

/// Max, min and avg are not sums: zero is not their identity, and an average of unequally
/// weighted members is not the mean. Each plan below was certified by the count-and-set model
/// before (a hostile audit's forgeries); with real addends (1, 2, 3, 10), (-5, -7, -9) each
/// computes a wrong value, so none may be certified. Duplicates are harmless for max: a second
/// all-reduce leaves the value, and is certified.
#[test]
fn max_min_and_avg_reductions_are_not_sums() {
    let unknown = |r: Result<DistCertificate, DistError>| match r {
        Err(DistError::Unknown(w)) => w,
        other => panic!("expected unknown, got {other:?}"),
    };
    let ar = |groups: Vec<Vec<i64>>, op| Step::AllReduce { groups, op };
    // avg over [[0,1,2],[3]] then [[2,3]] weights 10 by 1/2: (2 + 10) / 2 = 6, not 4.
    let (s, t) = (
        lay("gpuid=4", &[4], "[Partial(avg)]"),
        lay("gpuid=4", &[4], "[Replicate()]"),
    );
    let plan = Plan {
        ranks: 4,
        steps: vec![
            ar(vec![vec![0, 1, 2], vec![3]], ReduceOp::Avg),
            ar(vec![vec![2, 3], vec![0], vec![1]], ReduceOp::Avg),
            Step::Broadcast {
                groups: vec![vec![2, 0, 1, 3]],
                root: 0,
            },
        ],
    };
    let w = unknown(certify_plan(&s, &t, &plan));
    assert!(w.contains("not equally weighted"), "{w}");
    // The same plan in sum is right: (1+2+3) + 10.
    let (ss, _) = (lay("gpuid=4", &[4], "[Partial(sum)]"), ());
    let mut sum = plan.clone();
    for st in &mut sum.steps {
        if let Step::AllReduce { op, .. } = st {
            *op = ReduceOp::Sum;
        }
    }
    certify_plan(&ss, &t, &sum).unwrap();
    // max, then rank 2 zeroed, then max over [[0,2]]: max(-5, 0) = 0 on ranks 0 and 2.
    let (s, t) = (
        lay("gpuid=3", &[4], "[Partial(max)]"),
        lay("gpuid=3", &[4], "[Replicate()]"),
    );
    let zeroed = Plan {
        ranks: 3,
        steps: vec![
            ar(vec![vec![0, 1, 2]], ReduceOp::Max),
            Step::Zero { ranks: vec![2] },
            ar(vec![vec![0, 2], vec![1]], ReduceOp::Max),
        ],
    };
    let w = unknown(certify_plan(&s, &t, &zeroed));
    assert!(w.contains("zero is the identity of sum only"), "{w}");
    // avg over a zeroed member halves the mean.
    let (s2, t2) = (
        lay("gpuid=2", &[4], "[Partial(avg)]"),
        lay("gpuid=2", &[4], "[Replicate()]"),
    );
    let halved = Plan {
        ranks: 2,
        steps: vec![
            ar(vec![vec![0, 1]], ReduceOp::Avg),
            Step::Zero { ranks: vec![1] },
            ar(vec![vec![0, 1]], ReduceOp::Avg),
        ],
    };
    unknown(certify_plan(&s2, &t2, &halved));
    // max twice: max(max(a)) = max(a), certified; the sum analogue is refuted.
    let twice = Plan {
        ranks: 3,
        steps: vec![
            ar(vec![vec![0, 1, 2]], ReduceOp::Max),
            ar(vec![vec![0, 1, 2]], ReduceOp::Max),
        ],
    };
    certify_plan(&s, &t, &twice).unwrap();
    let (s3, t3) = (
        lay("gpuid=3", &[4], "[Partial(sum)]"),
        lay("gpuid=3", &[4], "[Replicate()]"),
    );
    let mut twice_sum = twice.clone();
    for st in &mut twice_sum.steps {
        if let Step::AllReduce { op, .. } = st {
            *op = ReduceOp::Sum;
        }
    }
    let c = refuted(certify_plan(&s3, &t3, &twice_sum));
    assert!(c.message.contains("more than once"), "{c}");
    // A sum over places of max-reduced values is not the max.
    let tp = lay("gpuid=3", &[4], "[Partial(sum)]");
    unknown(certify_plan(
        &s,
        &tp,
        &Plan {
            ranks: 3,
            steps: vec![],
        },
    ));
}
