//! Plan + certificate time on large meshes (bench/dist/README.md):
//! `cargo run --release -p solver --example dist_bench` (the table's cases),
//! `... -- MESH SHAPE FROM TO` (one case), `... -- --sweep N` (N random claims on 8x8x16 with
//! uneven shapes, partial sources and targets; prints the slowest and the totals).
use std::time::Instant;

use layout::mesh::Mesh;
use layout::notation::dtensor;
use solver::dist::{plan, PlanOptions};

/// N pseudo-random claims on a=8,b=8,c=16 (a fixed linear congruential sequence).
fn sweep(n: usize) {
    let m = Mesh::parse("a=8,b=8,c=16").unwrap();
    let mut state: u64 = 22;
    let mut next = |k: u64| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) % k
    };
    let (mut worst, mut total, mut certified, mut count) = (0.0f64, 0.0, 0, 0);
    let mut symbolic = 0;
    let mut worst_case = String::new();
    while count < n {
        let nd = 2 + next(2) as usize;
        let shape: Vec<i64> = (0..nd)
            .map(|_| [1023, 1021, 999, 127, 4095, 61, 8191][next(7) as usize])
            .collect();
        if shape.iter().product::<i64>() > 1 << 25 {
            continue;
        }
        let mut pick = |partial: bool| -> String {
            let v: Vec<String> = (0..3)
                .map(|_| match next(if partial { 5 } else { 4 }) {
                    0 | 1 => format!("Shard({})", next(nd as u64)),
                    2 | 3 => "Replicate()".to_string(),
                    _ => "Partial(sum)".to_string(),
                })
                .collect();
            format!("[{}]", v.join(", "))
        };
        let (from, to) = (pick(true), pick(true));
        let at = |p: &str| dtensor::to_layout(&m, &shape, &dtensor::parse_placements(p).unwrap());
        let (Ok(s), Ok(t)) = (at(&from), at(&to)) else {
            continue;
        };
        count += 1;
        let t0 = Instant::now();
        let p = plan(&s, &t, &PlanOptions::default());
        let dt = t0.elapsed().as_secs_f64();
        total += dt;
        if let Some(c) = p.as_ref().ok().and_then(|p| p.certificate.as_ref()) {
            certified += 1;
            symbolic += usize::from(c.decided_on == "symbolic");
        } else {
            let why = p
                .map(|p| format!("{:?}", p.uncertified))
                .unwrap_or_else(|e| e.to_string());
            println!("not certified: {shape:?} {from} -> {to}: {why}");
        }
        if dt > worst {
            worst = dt;
            worst_case = format!("{shape:?} {from} -> {to}");
        }
    }
    println!(
        "sweep: {n} claims on a=8,b=8,c=16 (1024 devices), {certified} certified ({symbolic} symbolically over the mesh); plan+certificate mean {:.3} s, max {worst:.3} s ({worst_case})",
        total / n as f64
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() == 2 && args[0] == "--sweep" {
        sweep(args[1].parse().unwrap());
        return;
    }
    let cases = [
        (
            "a=8,b=8,c=16",
            "1024,1024",
            "[Shard(0), Shard(1), Replicate()]",
            "[Shard(1), Replicate(), Shard(0)]",
        ),
        (
            "a=8,b=8,c=16",
            "4096,8192",
            "[Shard(0), Replicate(), Replicate()]",
            "[Replicate(), Shard(1), Shard(0)]",
        ),
        (
            "a=8,b=8,c=16",
            "8192,8192",
            "[Partial(sum), Shard(0), Replicate()]",
            "[Shard(0), Shard(1), Replicate()]",
        ),
        (
            "a=8,b=8,c=16",
            "1000,999",
            "[Shard(0), Shard(1), Replicate()]",
            "[Replicate(), Shard(0), Shard(1)]",
        ),
        (
            "a=8,b=8,c=16",
            "1023,1021",
            "[Shard(0), Shard(1), Replicate()]",
            "[Replicate(), Shard(0), Shard(1)]",
        ),
        (
            "a=8,b=8,c=16",
            "4095,8191",
            "[Shard(0), Replicate(), Replicate()]",
            "[Replicate(), Shard(1), Shard(0)]",
        ),
        (
            "a=8,b=8,c=16",
            "1023,1021",
            "[Partial(sum), Shard(0), Replicate()]",
            "[Shard(0), Shard(1), Replicate()]",
        ),
        (
            "a=8,b=8,c=16",
            "8191,8191",
            "[Shard(0), Shard(1), Replicate()]",
            "[Shard(1), Replicate(), Shard(0)]",
        ),
        (
            "a=8,b=8,c=16",
            "8192,8192",
            "[Shard(0), Shard(1), Replicate()]",
            "[Replicate(), Shard(1), Replicate()]",
        ),
        (
            "a=16,b=64,c=64",
            "512,512",
            "[Shard(0), Shard(1), Replicate()]",
            "[Replicate(), Shard(1), Replicate()]",
        ),
        (
            "a=16,b=64,c=64",
            "512,512",
            "[Partial(sum), Shard(1), Replicate()]",
            "[Shard(0), Shard(1), Replicate()]",
        ),
        (
            "a=16,b=64,c=64",
            "512,512",
            "[Shard(0), Shard(1), Replicate()]",
            "[Shard(1), Replicate(), Shard(0)]",
        ),
        (
            "a=2,b=2,c=2",
            "1024,1024",
            "[Shard(0), Shard(1), Replicate()]",
            "[Shard(1), Replicate(), Shard(0)]",
        ),
    ];
    let given;
    let cases: &[(&str, &str, &str, &str)] = if args.len() == 4 {
        given = [(
            args[0].as_str(),
            args[1].as_str(),
            args[2].as_str(),
            args[3].as_str(),
        )];
        &given
    } else {
        &cases
    };
    for &(mesh, shape, from, to) in cases {
        let m = Mesh::parse(mesh).unwrap();
        let shape = layout::shape::parse_list(shape).unwrap();
        let at = |p: &str| {
            dtensor::to_layout(&m, &shape, &dtensor::parse_placements(p).unwrap()).unwrap()
        };
        let (s, t) = (at(from), at(to));
        let t0 = Instant::now();
        let p = plan(&s, &t, &PlanOptions::default()).unwrap();
        let dt = t0.elapsed().as_secs_f64();
        // The certificate alone, decided again on the same plan.
        let t1 = Instant::now();
        let again = certify::dist::certify_plan(&s, &t, &p.plan).is_ok();
        let dc = t1.elapsed().as_secs_f64();
        // The symbolic decision alone (no re-check on boxes or cells), when it applies.
        let t2 = Instant::now();
        let sym = certify::dist::symbolic::decide(&s, &t, &p.plan);
        let why = sym.as_ref().err().cloned();
        let sym = sym.ok().map(|d| d.classes);
        let ds = t2.elapsed().as_secs_f64();
        let q = p
            .certificate
            .as_ref()
            .map(|c| {
                let mut again = String::new();
                if c.boxes_rechecked {
                    again += ", boxes re-checked";
                }
                if c.cells_rechecked {
                    again += ", cells re-checked";
                }
                match (sym, &why) {
                    (Some(k), _) => {
                        again +=
                            &format!(", symbolic decision alone {ds:.4} s, {k} receiver classes")
                    }
                    (None, Some(w)) => again += &format!(" (symbolic declined: {w})"),
                    _ => {}
                }
                format!("certified on {}{again}", c.decided_on)
            })
            .unwrap_or_else(|| format!("uncertified: {:?}", p.uncertified));
        println!(
            "{mesh} ({} devices) {shape:?} {from} -> {to}: {} moves, {} elems/rank, plan+certificate {:.3} s (certificate alone {:.3} s{}), {q}",
            m.size(),
            p.moves.len(),
            p.max_recv_elems(),
            dt,
            dc,
            if again { "" } else { ", NOT certified again" }
        );
    }
}
