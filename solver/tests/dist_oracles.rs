//! laycert's distributed layouts and plans against PyTorch DTensor and JAX on the generated cases
//! in bench/dist/cases.jsonl (bench/peers/gen_dist_vectors.py): every device's shard equals the
//! peers' wherever they agree with each other, every laycert plan is certified, it receives no
//! more bytes than DTensor's or XLA's plan on any case (each certificate decided on boxes and
//! again by the cell simulator), and DTensor's own plans are checked.

use layout::mesh::{Mesh, MeshLayout};
use layout::notation::dtensor::{self, Placement};
use serde_json::Value;
use solver::dist::{peer, plan, PlanOptions};

fn try_at(m: &Mesh, shape: &[i64], p: &str) -> Result<MeshLayout, String> {
    dtensor::to_layout(m, shape, &dtensor::parse_placements(p).unwrap()).map_err(|e| e.0)
}

fn ints(v: &Value) -> Vec<i64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_i64().unwrap())
        .collect()
}

/// DTensor's (local shape, offset) per rank as boxes; an empty shard is an empty box.
fn dtensor_boxes(v: &Value) -> Vec<Vec<(i64, i64)>> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let (ls, off) = (ints(&r[0]), ints(&r[1]));
            ls.iter().zip(&off).map(|(l, o)| (*o, o + l)).collect()
        })
        .collect()
}

fn norm(b: &[(i64, i64)]) -> Vec<(i64, i64)> {
    if b.iter().any(|(lo, hi)| hi <= lo) {
        vec![]
    } else {
        b.to_vec()
    }
}

#[test]
fn shards_plans_and_bytes_against_dtensor_and_jax() {
    let text = include_str!("../../bench/dist/cases.jsonl");
    // Bytes are compared under a bandwidth-only model (alpha = 0, one link class): the planner
    // then minimizes the bytes each rank receives, the quantity compared with the peers.
    let bw = solver::dist::Link {
        alpha: 0.0,
        beta: 1e9,
    };
    let topology = solver::dist::Topology {
        ranks_per_node: 1 << 20,
        nvlink: bw,
        network: bw,
    };
    let o = PlanOptions {
        elem_bytes: 4,
        topology,
        ..PlanOptions::default()
    };
    let (mut cases, mut dt_agree, mut jax_agree, mut certified) = (0, 0, 0, 0);
    let (mut dt_cmp, mut jax_cmp) = (0, 0);
    let (mut dt_ok, mut dt_refuted, mut dt_unlowered) = (0, 0, 0);
    let (mut dt_more, mut jax_more) = (0, 0);
    let mut worst: (f64, f64) = (1.0, 1.0);
    let mut refused = 0;
    let mut larger = 0;
    let mut failures = Vec::new();
    let mut report = Vec::new();
    for line in text.lines() {
        let c: Value = serde_json::from_str(line).unwrap();
        cases += 1;
        let id = c["id"].as_i64().unwrap();
        let m = Mesh::parse(c["mesh"].as_str().unwrap()).unwrap();
        let shape = ints(&c["shape"]);
        let (src, dst) = (c["src"].as_str().unwrap(), c["dst"].as_str().unwrap());
        let (s, t) = match (try_at(&m, &shape, src), try_at(&m, &shape, dst)) {
            (Ok(s), Ok(t)) => (s, t),
            (Err(e), _) | (_, Err(e)) => {
                // The one documented refusal: torch's uneven _StridedShard pieces.
                assert!(e.contains("uneven strided"), "case {id}: {e}");
                refused += 1;
                continue;
            }
        };
        // Shards: laycert's blocks vs DTensor's own rule.
        for (key, l) in [("src_shards", &s), ("dst_shards", &t)] {
            let theirs = dtensor_boxes(&c["dtensor"][key]);
            let ours: Vec<_> = (0..m.size()).map(|r| norm(&l.block(r))).collect();
            let theirs: Vec<_> = theirs.iter().map(|b| norm(b)).collect();
            dt_cmp += 1;
            if ours == theirs {
                dt_agree += 1;
            } else {
                failures.push(format!(
                    "case {id}: {key} differs from DTensor: ours {ours:?} theirs {theirs:?}"
                ));
            }
        }
        // JAX boxes where JAX ran (even cases without Partial).
        let j = &c["jax"];
        if j.get("src_boxes").is_some() {
            for (key, l) in [("src_boxes", &s), ("dst_boxes", &t)] {
                let theirs: Vec<Vec<(i64, i64)>> = j[key]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|b| {
                        b.as_array()
                            .unwrap()
                            .iter()
                            .map(|iv| (iv[0].as_i64().unwrap(), iv[1].as_i64().unwrap()))
                            .collect()
                    })
                    .collect();
                let ours: Vec<_> = (0..m.size()).map(|r| l.block(r)).collect();
                jax_cmp += 1;
                if ours == theirs {
                    jax_agree += 1;
                } else {
                    failures.push(format!("case {id}: {key} differs from JAX"));
                }
            }
            if j.get("data_ok") == Some(&Value::Bool(false)) {
                report.push(format!("case {id}: JAX's output shards are wrong"));
            }
        }
        // laycert's plan: certified, bytes.
        let p = match plan(&s, &t, &o) {
            Ok(p) => p,
            Err(e) => {
                failures.push(format!("case {id}: no plan: {e}"));
                continue;
            }
        };
        if let Some(c) = &p.certificate {
            certified += 1;
            // Decided on boxes and again cell by cell: in certify_plan for claims of at most
            // 2^18 cells, by check_certificate (up to 2^24) for the others.
            if !c.cells_rechecked {
                larger += 1;
                if let Err(e) = certify::dist::check_certificate(c) {
                    failures.push(format!(
                        "case {id}: the cell simulator does not confirm: {e}"
                    ));
                }
            }
        } else {
            failures.push(format!(
                "case {id}: plan not certified: {:?}",
                p.uncertified
            ));
        }
        let ours = p.max_recv_elems();
        // DTensor's plan, lowered literally and checked.
        let tr: Vec<(usize, Placement, Placement)> = c["dtensor"]["transforms"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| {
                let ps = dtensor::parse_placements(&format!(
                    "[{}, {}]",
                    x[1].as_str().unwrap(),
                    x[2].as_str().unwrap()
                ))
                .unwrap();
                (
                    x[0].as_u64().unwrap() as usize,
                    ps[0].clone(),
                    ps[1].clone(),
                )
            })
            .collect();
        let src_p = dtensor::parse_placements(src).unwrap();
        match peer::lower_dtensor(&m, &shape, &src_p, &tr, &o) {
            Ok((dplan, moves, _)) => {
                let theirs: i64 = moves.iter().map(|mv| mv.recv_elems).sum();
                match certify::dist::certify_plan(&s, &t, &dplan) {
                    Ok(_) => dt_ok += 1,
                    Err(certify::dist::DistError::Refuted(ce)) => {
                        dt_refuted += 1;
                        report.push(format!("case {id} {} {src} -> {dst} shape {shape:?}: DTensor's plan refuted: {ce}", m));
                    }
                    Err(e) => report.push(format!("case {id}: DTensor plan unknown: {e}")),
                }
                if ours > theirs {
                    failures.push(format!("case {id} {m} {src} -> {dst} {shape:?}: laycert receives {ours} > DTensor {theirs}"));
                }
                if ours < theirs {
                    dt_more += 1;
                }
                if ours > 0 {
                    worst.0 = worst.0.max(theirs as f64 / ours as f64);
                }
            }
            Err(e) => {
                dt_unlowered += 1;
                report.push(format!("case {id}: DTensor's steps not lowered: {e}"));
            }
        }
        if let Some(jr) = j.get("recv_elems").and_then(|v| v.as_i64()) {
            if ours > jr {
                failures.push(format!(
                    "case {id} {m} {src} -> {dst} {shape:?}: laycert receives {ours} > XLA {jr}"
                ));
            }
            if ours < jr {
                jax_more += 1;
            }
            if ours > 0 {
                worst.1 = worst.1.max(jr as f64 / ours as f64);
            }
        }
    }
    println!(
        "cases {cases} ({refused} refused: uneven _StridedShard); shards equal DTensor {dt_agree}/{dt_cmp}, JAX {jax_agree}/{jax_cmp}; laycert plans certified {certified} ({larger} re-checked by check_certificate); \
         DTensor plans certified {dt_ok}, refuted {dt_refuted}, not lowered {dt_unlowered}; laycert strictly fewer bytes than DTensor on {dt_more}, than XLA on {jax_more}; \
         max ratio DTensor/laycert {:.2}, XLA/laycert {:.2}",
        worst.0, worst.1
    );
    for r in &report {
        println!("{r}");
    }
    assert!(cases >= 300);
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
