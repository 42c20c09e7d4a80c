//! DTensor's `_StridedShard`, uneven and interleaved, against DTensor's own data
//! (bench/dist/strided.jsonl, `python3 bench/peers/gen_strided_vectors.py`: every rank's local
//! tensor of `arange(numel)` from gloo processes, torch 2.15). For every case:
//! - laycert's pieces of each rank, read in local order, are exactly DTensor's local tensor
//!   (shape and every value) for the source and the target;
//! - laycert plans the redistribution and certifies it (the box certificate and the cell
//!   simulator agree);
//! - DTensor's own `redistribute` is judged against the target: a rank whose local tensor is
//!   not the target's is reported with the element that proves it, as is a run that died.

use layout::mesh::{Mesh, MeshLayout};
use layout::notation::dtensor;
use serde_json::Value;
use solver::dist::{plan, PlanOptions};

fn layout(m: &Mesh, shape: &[i64], p: &str) -> Result<MeshLayout, String> {
    dtensor::to_layout(m, shape, &dtensor::parse_placements(p).map_err(|e| e.0)?).map_err(|e| e.0)
}

/// Rank `r`'s local tensor under `l` as DTensor holds it: (shape, flat element ids row-major).
fn local_tensor(l: &MeshLayout, r: i64) -> (Vec<i64>, Vec<i64>) {
    let runs = l.runs(r);
    let shape: Vec<i64> = runs
        .iter()
        .map(|rs| rs.iter().map(|(lo, hi)| hi - lo).sum())
        .collect();
    // Per dim, the global index at each local position.
    let idx: Vec<Vec<i64>> = runs
        .iter()
        .map(|rs| rs.iter().flat_map(|&(lo, hi)| lo..hi).collect())
        .collect();
    let n: i64 = shape.iter().product();
    let mut vals = Vec::with_capacity(n as usize);
    for k in 0..n {
        let (mut rest, mut flat, mut stride) = (k, 0, 1);
        for d in (0..shape.len()).rev() {
            let c = rest % shape[d];
            rest /= shape[d];
            flat += idx[d][c as usize] * stride;
            stride *= l.shape[d];
        }
        vals.push(flat);
    }
    (shape, vals)
}

fn ints(v: &Value) -> Vec<i64> {
    v.as_array()
        .map(|a| a.iter().filter_map(|x| x.as_i64()).collect())
        .unwrap_or_default()
}

fn coords(shape: &[i64], mut flat: i64) -> Vec<i64> {
    let mut c = vec![0; shape.len()];
    for d in (0..shape.len()).rev() {
        c[d] = flat % shape[d];
        flat /= shape[d];
    }
    c
}

/// None when DTensor's record equals laycert's local tensor, else what differs.
fn differs(rec: &Value, ours: &(Vec<i64>, Vec<i64>), global: &[i64]) -> Option<String> {
    if let Some(e) = rec.get("error") {
        return Some(format!("DTensor raised {e}"));
    }
    let (shape, vals) = (ints(&rec["shape"]), ints(&rec["values"]));
    if shape != ours.0 {
        return Some(format!("local shape {shape:?}, the layout's {:?}", ours.0));
    }
    let k = vals.iter().zip(&ours.1).position(|(a, b)| a != b)?;
    Some(format!(
        "local {:?} holds element {:?}, the layout puts {:?} there",
        coords(&shape, k as i64),
        coords(global, vals[k]),
        coords(global, ours.1[k])
    ))
}

#[test]
fn strided_shards_equal_dtensor_and_plans_certify() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../bench/dist/strided.jsonl");
    let text = std::fs::read_to_string(path).expect("bench/dist/strided.jsonl");
    let (mut cases, mut interleaved, mut shards, mut certified) = (0, 0, 0, 0);
    let (mut peer_ok, mut peer_wrong, mut peer_died, mut peer_raised) = (0, 0, 0, 0);
    let mut via_wrong = 0;
    let mut failures = Vec::new();
    let mut findings = Vec::new();
    for line in text.lines() {
        let c: Value = serde_json::from_str(line).unwrap();
        cases += 1;
        let id = c["id"].as_i64().unwrap();
        let m = Mesh::parse(c["mesh"].as_str().unwrap()).unwrap();
        let shape = ints(&c["shape"]);
        let (src, dst) = (c["src"].as_str().unwrap(), c["dst"].as_str().unwrap());
        let (s, t) = match (layout(&m, &shape, src), layout(&m, &shape, dst)) {
            (Ok(s), Ok(t)) => (s, t),
            (Err(e), _) | (_, Err(e)) => {
                failures.push(format!("case {id}: laycert refuses {src} -> {dst}: {e}"));
                continue;
            }
        };
        interleaved += usize::from(!s.is_boxed() || !t.is_boxed());
        // Shards against DTensor's local tensors.
        for (key, l) in [("src_ranks", &s), ("dst_ranks", &t)] {
            for r in 0..m.size() {
                let rec = &c[key][r as usize];
                if rec.get("values").is_none() {
                    // DTensor could not build this placement, or the group died first.
                    continue;
                }
                shards += 1;
                if let Some(d) = differs(rec, &local_tensor(l, r), &shape) {
                    failures.push(format!("case {id}: {key} rank {r}: {d}"));
                }
            }
        }
        // DTensor's own path into the source (redistribute from Replicate).
        for r in 0..m.size() {
            let rec = &c["src_via_ranks"][r as usize];
            if rec.get("values").is_some() {
                if let Some(d) = differs(rec, &local_tensor(&s, r), &shape) {
                    via_wrong += 1;
                    findings.push(format!(
                        "case {id}: DTensor's Replicate -> {src} on {} {:?}: rank {r}: {d}",
                        c["mesh"], shape
                    ));
                    break;
                }
            }
        }
        // laycert's plan, certified.
        match plan(&s, &t, &PlanOptions::bandwidth_only()) {
            Ok(p) if p.certificate.is_some() => certified += 1,
            Ok(p) => failures.push(format!("case {id}: not certified: {:?}", p.uncertified)),
            Err(e) => failures.push(format!("case {id}: no plan: {e}")),
        }
        // DTensor's redistribute judged against the target.
        if let Some(a) = c.get("aborted") {
            peer_died += 1;
            findings.push(format!(
                "case {id}: DTensor's {src} -> {dst} on {} {:?} died: {}",
                c["mesh"], shape, a
            ));
            continue;
        }
        let mut verdict = None;
        for r in 0..m.size() {
            let rec = &c["run_ranks"][r as usize];
            if rec.is_null() {
                continue;
            }
            if let Some(e) = rec.get("error") {
                verdict = Some((false, format!("rank {r} raised {e}")));
                break;
            }
            if let Some(d) = differs(rec, &local_tensor(&t, r), &shape) {
                verdict = Some((true, format!("rank {r}: {d}")));
                break;
            }
        }
        match verdict {
            None => peer_ok += 1,
            Some((wrong, d)) => {
                if wrong {
                    peer_wrong += 1;
                } else {
                    peer_raised += 1;
                }
                findings.push(format!(
                    "case {id}: DTensor's {src} -> {dst} on {} {:?}: {d}",
                    c["mesh"], shape
                ));
            }
        }
    }
    println!(
        "cases {cases} ({interleaved} with an interleaved source or target); local tensors equal \
         DTensor's {} / {shards}; laycert plans certified {certified}; DTensor's redistribute: right \
         {peer_ok}, wrong {peer_wrong}, raised {peer_raised}, died {peer_died}; DTensor's \
         Replicate -> source wrong on {via_wrong}",
        shards - failures.iter().filter(|f| f.contains("_ranks rank")).count()
    );
    for f in &findings {
        println!("  {f}");
    }
    assert!(cases >= 100, "{cases} cases");
    // Every DTensor run has a verdict; each wrong one names a rank and what it holds. Each is
    // judged against DTensor's own local split of the target, which laycert's layout equals on
    // every rank of every case (the shard comparison above).
    assert_eq!(peer_ok + peer_wrong + peer_raised + peer_died, cases);
    assert!(findings
        .iter()
        .all(|f| f.contains("rank") || f.contains("died")));
    assert!(interleaved > 0, "no interleaved case");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
