//! laycert's distributed layouts and plans against PyTorch DTensor and JAX on the generated cases
//! in bench/dist/cases.jsonl (bench/peers/gen_dist_vectors.py): every device's shard equals the
//! peers' wherever they agree with each other, every laycert plan is certified, it receives no
//! more bytes than DTensor's or XLA's plan on any case (each certificate decided on boxes and
//! again by the cell simulator), and DTensor's own plans are checked.

use layout::mesh::{Mesh, MeshLayout};
use layout::notation::dtensor::{self, Placement};
use layout::notation::hlo;
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

/// Bytes are compared under a bandwidth-only model (alpha = 0, one link class): the planner then
/// minimizes the bytes each rank receives, the quantity compared with the peers.
/// DTensor's `_TransformInfo` steps as recorded: `[mesh dim, from placement, to placement]`.
fn transforms(steps: &[Value]) -> Vec<(usize, Placement, Placement)> {
    steps
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
        .collect()
}

fn boxes(v: &Value) -> Vec<Vec<(i64, i64)>> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|b| {
            b.as_array()
                .unwrap()
                .iter()
                .map(|iv| (iv[0].as_i64().unwrap(), iv[1].as_i64().unwrap()))
                .collect()
        })
        .collect()
}

fn blocks(l: &MeshLayout) -> Vec<Vec<(i64, i64)>> {
    (0..l.mesh.size()).map(|r| l.block(r)).collect()
}

#[test]
fn shards_plans_and_bytes_against_dtensor_and_jax() {
    let text = include_str!("../../bench/dist/cases.jsonl");
    let o = PlanOptions::bandwidth_only();
    let (mut cases, mut dt_agree, mut jax_agree, mut certified) = (0, 0, 0, 0);
    let (mut dt_cmp, mut jax_cmp) = (0, 0);
    let (mut dt_ok, mut dt_refuted, mut dt_unlowered) = (0, 0, 0);
    let (mut dt_more, mut jax_more) = (0, 0);
    let mut worst: (f64, f64) = (1.0, 1.0);
    let mut refused = 0;
    let mut larger = 0;
    let mut symbolic = 0;
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
                // Every placement DTensor takes is read (uneven _StridedShard included).
                failures.push(format!("case {id}: laycert refuses it: {e}"));
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
                let theirs = boxes(&j[key]);
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
            if c.decided_on == "symbolic" {
                symbolic += 1;
            }
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
        let tr = transforms(c["dtensor"]["transforms"].as_array().unwrap());
        let src_p = dtensor::parse_placements(src).unwrap();
        let dst_p = dtensor::parse_placements(dst).ok();
        match peer::lower_dtensor_to(&m, &shape, &src_p, dst_p.as_deref(), &tr, &o) {
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
        "cases {cases} ({refused} refused); shards equal DTensor {dt_agree}/{dt_cmp}, JAX {jax_agree}/{jax_cmp}; laycert plans certified {certified} ({symbolic} symbolically over the mesh, {larger} re-checked by check_certificate); \
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

/// bench/dist/cases_more.jsonl (`gen_dist_vectors.py --more`): permuted device meshes with
/// negative Shard dims against DTensor and JAX, HLO device lists in no iota order against XLA's
/// own reading, and XLA's unreduced shardings against JAX's run of a matmul whose output stays a
/// partial sum.
#[test]
fn permuted_meshes_device_lists_and_unreduced_against_dtensor_jax_and_xla() {
    let text = include_str!("../../bench/dist/cases_more.jsonl");
    let o = PlanOptions::bandwidth_only();
    let mut counts = std::collections::BTreeMap::<&str, i64>::new();
    let mut failures = Vec::new();
    for line in text.lines() {
        let c: Value = serde_json::from_str(line).unwrap();
        let id = c["id"].as_i64().unwrap();
        match c["kind"].as_str().unwrap() {
            "permuted" => {
                let m = Mesh::parse(c["mesh"].as_str().unwrap()).unwrap();
                let shape = ints(&c["shape"]);
                let (src, dst) = (c["src"].as_str().unwrap(), c["dst"].as_str().unwrap());
                let (s, t) = (
                    try_at(&m, &shape, src).unwrap(),
                    try_at(&m, &shape, dst).unwrap(),
                );
                let d = &c["dtensor"];
                // Negative dims normalized as distribute_tensor normalizes them.
                for (text, key) in [(src, "src_placements"), (dst, "dst_placements")] {
                    let ours =
                        dtensor::normalize(&dtensor::parse_placements(text).unwrap(), shape.len())
                            .unwrap();
                    let theirs: Vec<&str> = d[key]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|x| x.as_str().unwrap())
                        .collect();
                    let ours: Vec<String> = ours.iter().map(dtensor::print_placement).collect();
                    if ours != theirs {
                        failures.push(format!(
                            "case {id}: {text} normalized {ours:?}, DTensor {theirs:?}"
                        ));
                    }
                }
                // Every rank's shard at the coordinate the permuted DeviceMesh gives it.
                for (key, l) in [("src_shards", &s), ("dst_shards", &t)] {
                    let theirs: Vec<_> = dtensor_boxes(&d[key]).iter().map(|b| norm(b)).collect();
                    let ours: Vec<_> = blocks(l).iter().map(|b| norm(b)).collect();
                    *counts.entry("dtensor shards").or_default() += 1;
                    if ours != theirs {
                        failures.push(format!("case {id}: {key} {ours:?} vs DTensor {theirs:?}"));
                    }
                }
                let p = plan(&s, &t, &o).unwrap();
                match &p.certificate {
                    Some(cert) => {
                        *counts.entry("certified").or_default() += 1;
                        if !cert.cells_rechecked {
                            certify::dist::check_certificate(cert).unwrap();
                        }
                    }
                    None => failures.push(format!("case {id}: not certified: {:?}", p.uncertified)),
                }
                let ours = p.max_recv_elems();
                if let Some(tr) = d["transforms"].as_array() {
                    let tr = transforms(tr);
                    let src_p = dtensor::parse_placements(src).unwrap();
                    let dst_p = dtensor::parse_placements(dst).ok();
                    match peer::lower_dtensor_to(&m, &shape, &src_p, dst_p.as_deref(), &tr, &o) {
                        Ok((dplan, moves, _)) => {
                            match certify::dist::certify_plan(&s, &t, &dplan) {
                                Ok(_) => *counts.entry("DTensor plans certified").or_default() += 1,
                                Err(e) => failures.push(format!("case {id}: DTensor's plan: {e}")),
                            }
                            let theirs: i64 = moves.iter().map(|mv| mv.recv_elems).sum();
                            if ours > theirs {
                                failures
                                    .push(format!("case {id}: laycert {ours} > DTensor {theirs}"));
                            }
                        }
                        Err(e) => {
                            *counts.entry("DTensor steps not lowered").or_default() += 1;
                            println!("case {id}: DTensor's steps not lowered: {e}");
                        }
                    }
                }
                let j = &c["jax"];
                if j.get("src_boxes").is_some() {
                    *counts.entry("JAX cases").or_default() += 1;
                    for (bk, hk, l) in [("src_boxes", "src_hlo", &s), ("dst_boxes", "dst_hlo", &t)]
                    {
                        let theirs = boxes(&j[bk]);
                        if blocks(l) != theirs {
                            failures.push(format!("case {id}: {bk} differs from JAX"));
                        }
                        // XLA's text of the same sharding: ids are positions in the mesh's order.
                        let h = hlo::to_layout(
                            &m,
                            &shape,
                            &hlo::parse(j[hk].as_str().unwrap()).unwrap(),
                        )
                        .unwrap();
                        if blocks(&h) != theirs {
                            failures.push(format!("case {id}: {hk} {} read differently", j[hk]));
                        }
                    }
                    assert_eq!(j["data_ok"], Value::Bool(true), "case {id}");
                    let jr = j["recv_elems"].as_i64().unwrap();
                    if ours > jr {
                        failures.push(format!("case {id}: laycert {ours} > XLA {jr}"));
                    }
                }
            }
            "hlo" => {
                let shape = ints(&c["shape"]);
                let theirs = boxes(&c["xla"]["boxes"]);
                for mesh in [
                    format!("gpuid={}", c["n"]),
                    c["named_mesh"].as_str().unwrap().to_string(),
                ] {
                    let m = Mesh::parse(&mesh).unwrap();
                    for key in [&c["text"], &c["xla"]["xla_text"]] {
                        let l =
                            hlo::to_layout(&m, &shape, &hlo::parse(key.as_str().unwrap()).unwrap())
                                .unwrap();
                        *counts.entry("HLO readings").or_default() += 1;
                        if blocks(&l) != theirs {
                            failures.push(format!(
                                "case {id}: {key} on {mesh}: {:?} vs XLA {theirs:?}",
                                blocks(&l)
                            ));
                        }
                    }
                }
            }
            _ => {
                let m = Mesh::parse(c["mesh"].as_str().unwrap()).unwrap();
                let j = &c["jax"];
                let shape = ints(&j["shape"]);
                let text = j["hlo"].as_str().unwrap();
                let l = hlo::to_layout(&m, &shape, &hlo::parse(text).unwrap()).unwrap();
                *counts.entry("unreduced").or_default() += 1;
                let names: Vec<&str> = l.partial.keys().map(|&a| l.mesh.name(a)).collect();
                let want: Vec<&str> = c["unreduced"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.as_str().unwrap())
                    .collect();
                assert_eq!(names, want, "case {id}");
                assert_eq!(blocks(&l), boxes(&j["boxes"]), "case {id}");
                assert_eq!(hlo::from_layout(&l).unwrap(), text, "case {id}");
                // JAX's shards add up to the product over exactly laycert's addend places.
                assert_eq!(j["sum_ok"], Value::Bool(true), "case {id}");
                for g in j["groups"].as_array().unwrap() {
                    let g = ints(g);
                    let key = |r: i64| {
                        let c = l.mesh.coords(r);
                        (0..c.len())
                            .filter(|a| !l.partial.contains_key(a))
                            .map(|a| c[a])
                            .collect::<Vec<_>>()
                    };
                    let ours: Vec<i64> = (0..l.mesh.size())
                        .filter(|&r| key(r) == key(g[0]))
                        .collect();
                    assert_eq!(ours, g, "case {id}");
                    let adds: Vec<i64> = g.iter().map(|&r| l.addend_of(r)).collect();
                    assert_eq!(adds, (0..g.len() as i64).collect::<Vec<_>>(), "case {id}");
                }
                // Reducing it is certified, and a plan that forgets an axis is refuted.
                let t = MeshLayout::replicated(m.clone(), shape.clone()).unwrap();
                let p = plan(&l, &t, &o).unwrap();
                assert!(p.certificate.is_some(), "case {id}");
                let partial_axes: Vec<usize> = l.partial.keys().copied().collect();
                let short = certify::dist::Plan {
                    ranks: m.size(),
                    steps: vec![certify::dist::Step::AllReduce {
                        groups: m.groups(&partial_axes[..1]),
                        op: layout::mesh::ReduceOp::Sum,
                    }],
                };
                if partial_axes.len() > 1 {
                    match certify::dist::certify_plan(&l, &t, &short) {
                        Err(certify::dist::DistError::Refuted(ce)) => {
                            assert!(ce.element.is_some(), "case {id}: {ce}")
                        }
                        other => panic!("case {id}: {other:?}"),
                    }
                }
            }
        }
    }
    println!("{counts:?}");
    assert!(
        counts.get("JAX cases").copied().unwrap_or(0) >= 20
            && counts.get("unreduced").copied().unwrap_or(0) >= 10
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
