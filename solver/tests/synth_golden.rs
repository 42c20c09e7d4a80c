//! The synthesized plan of every reference program, and of the variant programs in
//! solver/tests/golden/programs, is exactly the recorded one (solver/tests/golden/*.plan):
//! search speed-ups (memoization, pruning) must not change a layout, a cost, the chosen
//! arrangement or the tie-break among equal-cost arrangements. After an intended change of the
//! plans, re-record with `LAYCERT_BLESS=1 cargo test -p solver --test synth_golden` and review
//! the diff.

use solver::synth::{synthesize, Program, Target};

/// The reference programs (corpus/data/programs), each with the target(s) it is synthesized for.
const PROGRAMS: [(&str, Target); 12] = [
    ("gemm_f16_sm80", Target::Sm80),
    ("gemm_f16_sm90", Target::Sm90),
    ("gemm_f16_sm90", Target::Sm80),
    ("gemm_f16_int4_trtllm", Target::Sm80),
    ("gemv_f16", Target::Sm80),
    ("rmsnorm_f16", Target::Sm80),
    ("softmax_f32", Target::Sm80),
    ("attention_fwd_f16", Target::Sm80),
    ("conversion_rearrange", Target::Sm80),
    ("infeasible_mma_operands", Target::Sm80),
    ("infeasible_unaligned_copy", Target::Sm80),
    ("infeasible_smem_capacity", Target::Sm80),
];

/// Variants of the reference programs (solver/tests/golden/programs): other tile sizes, warp
/// counts, operand orders and dtypes, so the search meets arrangements and ties the reference
/// programs do not.
const VARIANTS: [(&str, Target); 5] = [
    ("gemm_f16_64x64x64_sm80", Target::Sm80),
    ("gemm_f16_8warps_sm80", Target::Sm80),
    ("gemm_f16_b_nmajor_sm80", Target::Sm80),
    ("attention_128q_8warps_sm80", Target::Sm80),
    ("gemm_bf16_64x128x64_sm90", Target::Sm90),
];

/// Every field of the plan (or the error), one item per line.
fn render(dir: &str, name: &str, target: Target) -> String {
    let text = std::fs::read_to_string(format!("{dir}/{name}.tile")).expect("program");
    let p = Program::parse(&text).expect("parses");
    let plan = match synthesize(&p, target) {
        Ok(plan) => plan,
        Err(e) => return format!("error: {e}\n{e:?}\n"),
    };
    let mut out = format!(
        "program {} threads {} target {}\n",
        plan.program.name,
        plan.program.threads,
        plan.target.name()
    );
    let mut line = |s: String| {
        out.push_str(&s);
        out.push('\n');
    };
    for (i, t) in plan.program.tensors.iter().enumerate() {
        line(format!("tensor {t:?}"));
        line(format!("  tv {:?}", plan.tv[i]));
        line(format!("  memory {:?}", plan.memory[i]));
        line(format!("  smem {:?}", plan.smem_label.get(&i)));
    }
    for (op, ch) in plan.program.ops.iter().zip(&plan.chosen) {
        line(format!("op {op:?}"));
        line(format!("  chosen {ch:?}"));
    }
    line(format!("mma {:?}", plan.mma));
    line(format!("conflicts {:?}", plan.conflicts));
    line(format!(
        "cost {:?} registers {} explored {:?}",
        plan.cost, plan.registers, plan.explored
    ));
    line(format!("certificate {}", plan.certificate.to_json()));
    out
}

#[test]
fn plans_of_the_reference_programs_are_the_recorded_ones() {
    let bless = std::env::var_os("LAYCERT_BLESS").is_some();
    let mut differ = Vec::new();
    let root = env!("CARGO_MANIFEST_DIR");
    let corpus = format!("{root}/../corpus/data/programs");
    let variants = format!("{root}/tests/golden/programs");
    let all = PROGRAMS
        .iter()
        .map(|p| (corpus.as_str(), p))
        .chain(VARIANTS.iter().map(|p| (variants.as_str(), p)));
    for (dir, &(name, target)) in all {
        let path = format!("{root}/tests/golden/{name}.{}.plan", target.name());
        let got = render(dir, name, target);
        if bless {
            std::fs::write(&path, &got).expect("write golden");
            continue;
        }
        let want = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        if got != want {
            let line = got
                .lines()
                .zip(want.lines())
                .position(|(a, b)| a != b)
                .unwrap_or(got.lines().count().min(want.lines().count()));
            differ.push(format!("{path}: first difference at line {}", line + 1));
        }
    }
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}
