//! Synthesis + certification time per reference program (bench/synth/README.md):
//! `cargo run --release -p solver --example synth_bench [REPS]`. Each program is synthesized
//! (which includes certify's check of the plan) REPS times after one warm-up; the median, min
//! and max wall times are printed, with the plan's cost and claim count.

use std::time::Instant;

use solver::synth::{synthesize, Program, Target};

fn main() {
    let reps: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(11);
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../corpus/data/programs");
    let programs = [
        ("gemm_f16_sm80", Target::Sm80),
        ("gemm_f16_sm90", Target::Sm90),
        ("gemm_f16_int4_trtllm", Target::Sm80),
        ("gemv_f16", Target::Sm80),
        ("rmsnorm_f16", Target::Sm80),
        ("softmax_f32", Target::Sm80),
        ("attention_fwd_f16", Target::Sm80),
        ("conversion_rearrange", Target::Sm80),
    ];
    println!(
        "| program | target | median ms | min ms | max ms | anchors | cost | claims | rearranges |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for (name, target) in programs {
        let text = std::fs::read_to_string(format!("{dir}/{name}.tile")).expect("program");
        let p = Program::parse(&text).expect("parses");
        let warm = synthesize(&p, target).expect("synthesizes");
        let mut times: Vec<f64> = (0..reps)
            .map(|_| {
                let t = Instant::now();
                let plan = synthesize(&p, target).expect("synthesizes");
                std::hint::black_box(&plan);
                t.elapsed().as_secs_f64() * 1e3
            })
            .collect();
        times.sort_by(|a, b| a.total_cmp(b));
        println!(
            "| {name} | {} | {:.1} | {:.1} | {:.1} | {} | {:.0} | {} | {} |",
            target.name(),
            times[times.len() / 2],
            times[0],
            times[times.len() - 1],
            warm.explored.0,
            warm.cost,
            warm.certificate.claims.len(),
            warm.conflicts.len()
        );
    }
}
