//! Every reference tile program in corpus/data/programs synthesizes, and its certificate checks;
//! the infeasible ones are explained.

use solver::synth::{synthesize, Program, SynthError, Target};

fn program(name: &str) -> Program {
    let path = format!("{}/../corpus/data/programs/{name}.tile", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    Program::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn certified(name: &str, target: Target) -> solver::synth::Plan {
    let plan = synthesize(&program(name), target).unwrap_or_else(|e| panic!("{name}: {e}"));
    let json = plan.certificate.to_json();
    certify::synthesis::check(&json).unwrap_or_else(|e| panic!("{name}: {e}"));
    plan
}

#[test]
fn gemm_f16_sm80_uses_ldmatrix_and_cp_async_and_certifies() {
    let plan = certified("gemm_f16_sm80", Target::Sm80);
    let instr: Vec<&str> = plan.chosen.iter().map(|o| o.instruction.as_str()).collect();
    eprintln!("{instr:#?} cost {}", plan.cost);
    assert!(instr[0].starts_with("cp.async.cg.shared.global [16 B]"), "{instr:?}");
    assert!(instr[2].starts_with("ldmatrix.sync.aligned.m8n8.x4"), "{instr:?}");
    assert!(instr[4].starts_with("mma.sync.aligned.m16n8k16"), "{instr:?}");
    // No bank conflicts on the ldmatrix reads.
    assert_eq!(plan.chosen[2].traffic.wavefronts, plan.chosen[2].traffic.ideal);
}
