//! Plan + certificate time on large meshes (bench/dist/README.md):
//! `cargo run --release -p solver --example dist_bench`.
use std::time::Instant;

use layout::mesh::Mesh;
use layout::notation::dtensor;
use solver::dist::{plan, PlanOptions};

fn main() {
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
            "a=2,b=2,c=2",
            "1024,1024",
            "[Shard(0), Shard(1), Replicate()]",
            "[Shard(1), Replicate(), Shard(0)]",
        ),
    ];
    for (mesh, shape, from, to) in cases {
        let m = Mesh::parse(mesh).unwrap();
        let shape = layout::shape::parse_list(shape).unwrap();
        let at = |p: &str| {
            dtensor::to_layout(&m, &shape, &dtensor::parse_placements(p).unwrap()).unwrap()
        };
        let (s, t) = (at(from), at(to));
        let t0 = Instant::now();
        let p = plan(&s, &t, &PlanOptions::default()).unwrap();
        let dt = t0.elapsed().as_secs_f64();
        let q = p
            .certificate
            .as_ref()
            .map(|c| format!("{:?}", c.quotient))
            .unwrap_or_else(|| format!("uncertified: {:?}", p.uncertified));
        println!(
            "{mesh} ({} devices) {shape:?} {from} -> {to}: {} moves, {} elems/rank, plan+certificate {:.3} s, quotient {q}",
            m.size(),
            p.moves.len(),
            p.max_recv_elems(),
            dt
        );
    }
}
