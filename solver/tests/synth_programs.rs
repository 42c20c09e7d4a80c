//! Every reference tile program in corpus/data/programs synthesizes and its certificate
//! checks; a tampered certificate is refused; the infeasible programs are explained.

use certify::synthesis::{check, SynthClaim, SynthOp};
use solver::synth::{synthesize, Plan, Program, SynthError, Target};

fn program(name: &str) -> Program {
    let path = format!(
        "{}/../corpus/data/programs/{name}.tile",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    Program::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn certified(name: &str, target: Target) -> Plan {
    let plan = synthesize(&program(name), target).unwrap_or_else(|e| panic!("{name}: {e}"));
    check(&plan.certificate.to_json()).unwrap_or_else(|e| panic!("{name}: {e}"));
    plan
}

fn instructions(plan: &Plan) -> Vec<String> {
    plan.chosen.iter().map(|o| o.instruction.clone()).collect()
}

fn infeasible(name: &str, target: Target) -> (String, String, String) {
    match synthesize(&program(name), target) {
        Err(SynthError::Infeasible {
            constraint,
            tensors,
            why,
            ..
        }) => (constraint, tensors, why),
        other => panic!("{name}: expected an infeasibility, got {other:?}"),
    }
}

#[test]
fn gemm_f16_sm80_uses_cp_async_ldmatrix_and_mma_without_conflicts() {
    let plan = certified("gemm_f16_sm80", Target::Sm80);
    let i = instructions(&plan);
    assert!(
        i[0].starts_with("cp.async.cg.shared.global [16 B]"),
        "{i:?}"
    );
    assert!(
        i[2].starts_with("ldmatrix.sync.aligned.m8n8.x4.shared"),
        "{i:?}"
    );
    assert!(i[4].starts_with("mma.sync.aligned.m16n8k16"), "{i:?}");
    for k in [0, 1, 2, 3] {
        assert_eq!(
            plan.chosen[k].traffic.wavefronts, plan.chosen[k].traffic.ideal,
            "{}",
            i[k]
        );
    }
    assert!(plan.conflicts.is_empty());
}

#[test]
fn gemm_f16_sm90_uses_tma_into_canonical_layouts_and_wgmma() {
    let plan = certified("gemm_f16_sm90", Target::Sm90);
    let i = instructions(&plan);
    assert!(i[0].contains("TMA"), "{i:?}");
    assert!(i[2].starts_with("wgmma"), "{i:?}");
    let canon = plan
        .certificate
        .claims
        .iter()
        .filter(|c| matches!(c, SynthClaim::Canonical { .. }))
        .count();
    assert!(
        canon >= 2,
        "both shared operands are canonical GMMA layouts"
    );
    // mma.sync cannot read shared operands: on sm80 the same program is infeasible.
    let (constraint, tensors, _) = infeasible("gemm_f16_sm90", Target::Sm80);
    assert!(
        constraint.starts_with("mma operand agreement"),
        "{constraint}"
    );
    assert!(tensors.contains("a_s"), "{tensors}");
}

#[test]
fn int4_weights_in_the_tensorrt_llm_layout_load_as_one_word_per_thread() {
    let plan = certified("gemm_f16_int4_trtllm", Target::Sm80);
    let w = plan
        .program
        .ops
        .iter()
        .position(|o| plan.program.tensors[o.output].name == "w")
        .unwrap();
    assert_eq!(plan.chosen[w].instruction, "ld.global.b32");
    assert!(plan.chosen[w].claims.contains(&SynthClaim::Vector {
        reg: "w".into(),
        memory: "w_g".into(),
        width: 8
    }));
}

#[test]
fn gemv_rmsnorm_and_softmax_synthesize_with_coalesced_vectors() {
    for name in ["gemv_f16", "rmsnorm_f16", "softmax_f32"] {
        let plan = certified(name, Target::Sm80);
        let first = &plan.chosen[0].instruction;
        assert!(first == "ld.global.v4.b32", "{name}: {first}");
        assert!(plan.conflicts.is_empty(), "{name}");
        assert!(
            plan.certificate
                .claims
                .iter()
                .any(|c| matches!(c, SynthClaim::Projection { .. })),
            "{name}"
        );
    }
}

#[test]
fn attention_feeds_the_first_accumulator_to_the_second_mma_in_registers() {
    let plan = certified("attention_fwd_f16", Target::Sm80);
    assert!(plan.conflicts.is_empty(), "{:?}", plan.conflicts);
    assert_eq!(
        plan.certificate
            .claims
            .iter()
            .filter(|c| matches!(c, SynthClaim::Mma { .. }))
            .count(),
        2
    );
    let i = instructions(&plan);
    assert!(
        i.iter()
            .any(|x| x.contains("ldmatrix") && x.contains("trans")),
        "V^T is column-major: {i:?}"
    );
}

#[test]
fn a_tensor_used_as_a_and_b_operand_is_rearranged_through_shared_memory() {
    let plan = certified("conversion_rearrange", Target::Sm80);
    assert_eq!(plan.conflicts.len(), 1, "{:?}", plan.conflicts);
    assert_eq!(plan.conflicts[0].from, "x");
    assert!(plan
        .program
        .tensors
        .iter()
        .any(|t| t.name.ends_with("_smem")));
}

#[test]
fn a_tampered_certificate_is_refused() {
    let plan = certified("gemm_f16_sm80", Target::Sm80);
    // Flip one stride of the accumulator's layout and re-seal the digest: the mma claim fails.
    let mut c = plan.certificate.clone();
    let t = c.tensors.iter_mut().find(|t| t.name == "c").unwrap();
    assert!(t.layout.contains("(256, 1, 1024, 16)"), "{}", t.layout);
    t.layout = t
        .layout
        .replacen("(256, 1, 1024, 16)", "(256, 1, 16, 1024)", 1);
    let sealed = c.clone().seal();
    let e = check(&sealed.to_json()).unwrap_err();
    assert!(e.contains("claim #"), "{e}");
    // Without re-sealing, the digest already refuses it.
    let e = check(&c.to_json()).unwrap_err();
    assert!(e.contains("digest"), "{e}");
    // Dropping the mma claim leaves the operation unbacked.
    let mut d = plan.certificate.clone();
    d.claims.retain(|k| !matches!(k, SynthClaim::Mma { .. }));
    let e = check(&d.seal().to_json()).unwrap_err();
    assert!(e.contains("no claim backing it"), "{e}");
    // The CTA size is claimed data too: a forged one, re-sealed, is refused (it re-checked).
    for threads in [0, 1 << 62, plan.certificate.threads * 2] {
        let mut t = plan.certificate.clone();
        t.threads = threads;
        let e = check(&t.seal().to_json()).unwrap_err();
        assert!(
            e.contains("threads") || e.contains("the CTA has"),
            "{threads}: {e}"
        );
    }
}

#[test]
fn a_racing_store_is_refused_and_its_claim_is_required() {
    // Session 30's audit: a store into a global view with two cells at one address (stride 0)
    // synthesized and certified; its writes race.
    let text = std::fs::read_to_string(format!(
        "{}/../corpus/data/programs/gemm_f16_sm80.tile",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    assert!(text.contains("(128,128):(4096,1))"));
    for (from, to) in [
        ("(128,128):(4096,1))", "(128,128):(0,1))"),
        ("(128,128):(4096,1))", "(128,128):(1,2))"),
    ] {
        let e = Program::parse(&text.replacen(from, to, 1)).unwrap_err();
        assert!(e.to_string().contains("race"), "{e}");
    }
    // The store's injectivity is a claim the checker requires and re-decides.
    let plan = certified("gemm_f16_sm80", Target::Sm80);
    let store = plan.certificate.ops.last().unwrap().output.clone();
    let e = refused(&plan, |c| {
        c.claims
            .retain(|k| !matches!(k, SynthClaim::Injective { tensor } if *tensor == store))
    });
    assert!(e.contains("no distribution or injectivity claim"), "{e}");
    let e = refused(&plan, |c| {
        let t = c.tensors.iter_mut().find(|t| t.name == store).unwrap();
        t.layout = t.layout.replacen("4096", "0", 1);
    });
    assert!(e.contains("both at"), "{e}");
}

#[test]
fn an_mma_texts_warp_arrangement_is_re_derived_from_the_accumulator() {
    // Session 30's audit: only the arrangement's size was checked, so `4x1` or `1x4` for a 2x2
    // plan re-checked as valid.
    let plan = certified("gemm_f16_sm80", Target::Sm80);
    let retext = |from: &'static str, to: &'static str| {
        refused(&plan, move |c| {
            let op = c.ops.iter_mut().find(|o| o.op == "mma").unwrap();
            assert!(op.instruction.ends_with(from), "{}", op.instruction);
            op.instruction = op.instruction.replace(from, to);
        })
    };
    for to in ["(warps 4x1 interleaved)", "(warps 1x4 interleaved)"] {
        let e = retext("(warps 2x2 interleaved)", to);
        assert!(e.contains("row block sets"), "{to}: {e}");
    }
    let e = retext("(warps 2x2 interleaved)", "(warps 2x2)");
    assert!(e.contains("not interleaved"), "{e}");
    // The attention program's 4x1 and the int4 GEMM's 1x4 re-derive as stated.
    for name in ["attention_fwd_f16", "gemm_f16_int4_trtllm"] {
        certified(name, Target::Sm80);
    }
}

#[test]
fn infeasible_programs_name_the_constraint_and_the_tensors() {
    let (c, t, w) = infeasible("infeasible_mma_operands", Target::Sm80);
    assert!(c.starts_with("mma operand agreement"), "{c}");
    assert!(t.contains("C = c f32 [16, 8]"), "{t}");
    assert!(
        w.contains("cannot be shared evenly by 4 thread groups"),
        "{w}"
    );
    let (c, t, w) = infeasible("infeasible_unaligned_copy", Target::Sm80);
    assert!(c.starts_with("copy instruction"), "{c}");
    assert!(t.contains("x_g") && t.contains("x_s"), "{t}");
    assert!(w.contains("cp.async"), "{w}");
    let (c, t, w) = infeasible("infeasible_smem_capacity", Target::Sm80);
    assert!(c.starts_with("shared-memory capacity"), "{c}");
    assert!(t.contains("a_s") && t.contains("b_s"), "{t}");
    assert!(w.contains("262144 bytes"), "{w}");
}

#[test]
fn a_one_copy_program_goes_through_the_same_synthesis() {
    // What `gen copy` plans: a transpose through a shared tile, as a tile program.
    let p = Program::parse(
        "threads 256\nsrc = global_view(f32, [64, 64], (64,64):(64,1))\n\
         dst = global_view(f32, [64, 64], (64,64):(1,64))\nx = register_tensor(f32, [64, 64])\ncopy(src, x)\ny2 = rearrange(x)\ncopy(y2, dst)\n",
    )
    .unwrap();
    let plan = synthesize(&p, Target::Sm80).unwrap();
    check(&plan.certificate.to_json()).unwrap();
    assert_eq!(plan.chosen[0].instruction, "ld.global.v4.b32");
    assert_eq!(plan.chosen.last().unwrap().instruction, "st.global.v4.b32");
}

#[test]
fn an_mma_claim_whose_atom_is_not_the_corpus_instruction_is_refused() {
    let plan = certified("gemm_f16_sm80", Target::Sm80);
    let retag = |f: &dyn Fn(&mut SynthClaim)| {
        let mut c = plan.certificate.clone();
        for k in c.claims.iter_mut() {
            if matches!(k, SynthClaim::Mma { .. }) {
                f(k);
            }
        }
        check(&c.seal().to_json()).unwrap_err()
    };
    // The certificate's own copy of the atom's A layout replaced by its B layout.
    let e = retag(&|k| {
        if let SynthClaim::Mma { pa, pb, .. } = k {
            *pa = pb.clone();
        }
    });
    assert!(
        e.contains("A layout") && e.contains("not the corpus's"),
        "{e}"
    );
    // An instruction the corpus does not define.
    let e = retag(&|k| {
        if let SynthClaim::Mma { atom, .. } = k {
            *atom = "mma.sync.aligned.m16n8k16.made.up".into();
        }
    });
    // The op still names the real instruction: the claim backs another one.
    assert!(e.contains("no mma claim of"), "{e}");
    // Another instruction's name with this one's shape.
    let e = retag(&|k| {
        if let SynthClaim::Mma { atom, .. } = k {
            *atom = "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32".into();
        }
    });
    assert!(e.contains("no mma claim of"), "{e}");
}

/// Re-seals `plan`'s certificate after `f` edits it, and returns the checker's refusal.
fn refused(plan: &Plan, f: impl FnOnce(&mut certify::synthesis::SynthesisCertificate)) -> String {
    let mut c = plan.certificate.clone();
    f(&mut c);
    match check(&c.seal().to_json()) {
        Ok(_) => panic!("a tampered certificate re-checked"),
        Err(e) => e,
    }
}

#[test]
fn ops_are_bound_to_their_instructions_and_claims() {
    // The digest is unkeyed: anyone can re-seal an edit. Each edit below re-checked before the
    // binding of ops to claims (session 21's audit); each is now refused, and says why.
    let plan = certified("gemm_f16_sm80", Target::Sm80);
    let op = |c: &mut certify::synthesis::SynthesisCertificate, prefix: &str| {
        let i = c
            .ops
            .iter()
            .position(|o| o.instruction.starts_with(prefix))
            .unwrap_or_else(|| panic!("no {prefix} op"));
        i
    };
    // An instruction name nobody defines, on every op in turn.
    for i in 0..plan.certificate.ops.len() {
        let e = refused(&plan, |c| c.ops[i].instruction = "bogus".into());
        assert!(e.contains("bogus"), "op {i}: {e}");
    }
    // ldmatrix .x4 said to be .x2, in the op or in its claim.
    let e = refused(&plan, |c| {
        let i = op(c, "ldmatrix");
        c.ops[i].instruction = c.ops[i].instruction.replace(".x4.", ".x2.");
    });
    assert!(e.contains("no ldmatrix claim of 2 matrices"), "{e}");
    let e = refused(&plan, |c| {
        for k in c.claims.iter_mut() {
            if let SynthClaim::Ldmatrix { count, .. } = k {
                *count = 2;
            }
        }
    });
    assert!(e.contains("no ldmatrix claim of 4 matrices"), "{e}");
    // ldmatrix said to be transposed.
    let e = refused(&plan, |c| {
        let i = op(c, "ldmatrix");
        c.ops[i].instruction = c.ops[i].instruction.replace(".x4.", ".x4.trans.");
    });
    assert!(e.contains("transposed"), "{e}");
    // An op deleted, its claim kept.
    let e = refused(&plan, |c| {
        let i = op(c, "ldmatrix");
        c.ops.remove(i);
    });
    assert!(e.contains("backs no operation"), "{e}");
    // A copy that converts: the f32 accumulator stored into an f16 view.
    let e = refused(&plan, |c| {
        let t = c.tensors.iter_mut().find(|t| t.name == "c_g").unwrap();
        t.dtype = "f16".into();
        t.bits = 16;
    });
    assert!(e.contains("a copy does not convert"), "{e}");
    // An f16 accumulator under the f32-accumulating atom.
    let e = refused(&plan, |c| {
        for t in c
            .tensors
            .iter_mut()
            .filter(|t| t.name == "c" || t.name == "c_g")
        {
            t.dtype = "f16".into();
            t.bits = 16;
        }
    });
    assert!(e.contains("accumulates in f32"), "{e}");
    // bf16 operands under the f16 atom.
    let e = refused(&plan, |c| {
        for t in c.tensors.iter_mut().filter(|t| t.dtype == "f16") {
            t.dtype = "bf16".into();
        }
    });
    assert!(e.contains("multiplies"), "{e}");
    // A register operand whose atom layout is dropped from the claim (it would go unchecked).
    let e = refused(&plan, |c| {
        for k in c.claims.iter_mut() {
            if let SynthClaim::Mma { pa, .. } = k {
                *pa = None;
            }
        }
    });
    assert!(e.contains("A layout (none)"), "{e}");
    // A vector store said to be 16 bytes wide.
    let e = refused(&plan, |c| {
        let i = op(c, "st.global");
        c.ops[i].instruction = "st.global.v4.b32".into();
    });
    assert!(e.contains("no vector claim of 4 elements"), "{e}");
    // A cp.async said to be an ldmatrix (wrong direction).
    let e = refused(&plan, |c| {
        let i = op(c, "cp.async");
        c.ops[i].instruction = "ldmatrix.sync.aligned.m8n8.x4.shared.b16".into();
    });
    assert!(e.contains("does not copy global to shared"), "{e}");
    // A copy relabelled a rearrange (which no claim backs).
    let e = refused(&plan, |c| c.ops[0].op = "rearrange".into());
    assert!(e.contains("rearrange"), "{e}");
    // The warp arrangement's size is the CTA's.
    let e = refused(&plan, |c| {
        let i = op(c, "mma");
        c.ops[i].instruction = c.ops[i].instruction.replace("2x2", "4x2");
    });
    assert!(e.contains("are not the CTA's"), "{e}");
}

#[test]
fn derived_instruction_texts_and_swizzle_atoms_are_re_derived() {
    // A cast's cvt and a reduction's butterfly count are re-derived from the tensors.
    let plan = certified("softmax_f32", Target::Sm80);
    let i = plan
        .certificate
        .ops
        .iter()
        .position(|o| o.op == "reduce")
        .unwrap();
    let text = plan.certificate.ops[i].instruction.clone();
    let e = refused(&plan, |c| {
        c.ops[i].instruction = text.replacen(" shfl.bfly", "1 shfl.bfly", 1);
    });
    assert!(e.contains("this reduction is"), "{e}");
    let plan = certified("rmsnorm_f16", Target::Sm80);
    let i = plan
        .certificate
        .ops
        .iter()
        .position(|o| o.op == "cast")
        .unwrap();
    let e = refused(&plan, |c| c.ops[i].instruction = "cvt.rn.bf16.f16".into());
    assert!(e.contains("is `cvt.rn."), "{e}");
    // A TMA box and its canonical claim must name one swizzle atom, and the claim's atom must be
    // that corpus atom at the tensor's width.
    let plan = certified("gemm_f16_sm90", Target::Sm90);
    let e = refused(&plan, |c| {
        for o in c.ops.iter_mut() {
            o.instruction = o.instruction.replace("K-major SW64", "K-major SW128");
        }
    });
    assert!(e.contains("no canonical claim of Layout_K_SW128"), "{e}");
    let e = refused(&plan, |c| {
        for o in c.ops.iter_mut() {
            o.instruction = o.instruction.replace("K-major SW64", "K-major SW128");
        }
        for k in c.claims.iter_mut() {
            if let SynthClaim::Canonical { atom_name, .. } = k {
                *atom_name = "Layout_K_SW128_Atom_Bits".into();
            }
        }
    });
    assert!(
        e.contains("is not Layout_K_SW128_Atom_Bits at 16 bits"),
        "{e}"
    );
    // A wgmma operand read by descriptor with no K-major canonical layout claimed.
    let e = refused(&plan, |c| {
        c.claims
            .retain(|k| !matches!(k, SynthClaim::Canonical { tensor, .. } if tensor == "b_s"));
        c.ops.retain(|o| o.output != "b_s");
    });
    assert!(
        e.contains("K-major canonical claim") || e.contains("no claim backing"),
        "{e}"
    );
}

/// Re-seals `plan`'s certificate after `f` edits it, and returns the whole check's refusal
/// (claims, bindings and the program text).
fn refused_by_program(
    plan: &Plan,
    f: impl FnOnce(&mut certify::synthesis::SynthesisCertificate),
) -> String {
    let mut c = plan.certificate.clone();
    f(&mut c);
    match solver::synth::check_certificate(&c.seal().to_json()) {
        Ok(_) => panic!("a tampered certificate re-checked"),
        Err(e) => e,
    }
}

#[test]
fn a_certificate_is_tied_to_the_program_text_it_carries() {
    // Every reference program's certificate passes the whole check, rearranges included.
    for (name, target) in [
        ("gemm_f16_sm80", Target::Sm80),
        ("gemm_f16_sm90", Target::Sm90),
        ("attention_fwd_f16", Target::Sm80),
        ("conversion_rearrange", Target::Sm80),
        ("softmax_f32", Target::Sm90),
    ] {
        let plan = certified(name, target);
        solver::synth::check_certificate(&plan.certificate.to_json())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    // Session 22's audit: each of these re-sealed edits passed `check`; the claims hold, but the
    // plan is not the program's.
    let attn = certified("attention_fwd_f16", Target::Sm80);
    let op = |c: &certify::synthesis::SynthesisCertificate, f: &dyn Fn(&SynthOp) -> bool| {
        c.ops.iter().position(f).expect("the op")
    };
    // A reduction's function renamed.
    let e = refused_by_program(&attn, |c| {
        let i = op(c, &|o| o.instruction.starts_with("max: "));
        c.ops[i].instruction = c.ops[i].instruction.replacen("max", "sum", 1);
    });
    assert!(
        e.contains("(sum) appears 1 time(s) in the certificate, 0 in its program"),
        "{e}"
    );
    // An elementwise function renamed, and its operands exchanged.
    let e = refused_by_program(&attn, |c| {
        let i = op(c, &|o| o.instruction.starts_with("exp_sub"));
        c.ops[i].instruction = "exp (per register)".into();
    });
    assert!(e.contains("(exp) appears"), "{e}");
    let e = refused_by_program(&attn, |c| {
        let i = op(c, &|o| o.instruction.starts_with("div"));
        c.ops[i].inputs.reverse();
    });
    assert!(e.contains("in its program"), "{e}");
    let gemm = certified("gemm_f16_sm80", Target::Sm80);
    // The mma listed twice (C += A B^T twice).
    let e = refused_by_program(&gemm, |c| {
        let i = op(c, &|o| o.op == "mma");
        let again = c.ops[i].clone();
        c.ops.insert(i, again);
    });
    assert!(
        e.contains("appears 2 time(s) in the certificate, 1 in its program"),
        "{e}"
    );
    // The result store dropped, with its claim and its tensor.
    let e = refused_by_program(&gemm, |c| {
        c.ops.retain(|o| o.output != "c_g");
        c.tensors.retain(|t| t.name != "c_g");
        c.claims
            .retain(|k| !matches!(k, SynthClaim::Vector { memory, .. } if memory == "c_g"));
    });
    assert!(e.contains("c_g"), "{e}");
    // The mma's operands exchanged, with its claim and the two register layouts to match: the
    // transposed product.
    let e = refused_by_program(&gemm, |c| {
        let i = op(c, &|o| o.op == "mma");
        c.ops[i].inputs.reverse();
        for k in c.claims.iter_mut() {
            if let SynthClaim::Mma { a, b, .. } = k {
                std::mem::swap(a, b);
            }
        }
        let layout = |c: &certify::synthesis::SynthesisCertificate, n: &str| {
            c.tensors.iter().position(|t| t.name == n).unwrap()
        };
        let (ia, ib) = (layout(c, "a"), layout(c, "b"));
        let la = c.tensors[ia].layout.clone();
        c.tensors[ia].layout = std::mem::replace(&mut c.tensors[ib].layout, la);
        // The copies into a and b now feed the other operand's fragment layout: their claims
        // name tensors, not layouts, so swap those two copies' targets as well.
        for o in c.ops.iter_mut() {
            if o.output == "a" {
                o.output = "b".into();
            } else if o.output == "b" {
                o.output = "a".into();
            }
        }
        for k in c.claims.iter_mut() {
            if let SynthClaim::Ldmatrix { reg, .. } = k {
                *reg = if reg == "a" { "b".into() } else { "a".into() };
            }
        }
        // What remains is one true plan, for mma(c, b, a): check's claims hold.
        assert!(check(&c.clone().seal().to_json()).is_ok());
    });
    assert!(e.contains("in its program"), "{e}");
    // A global view's layout edited (column-major A).
    let e = refused_by_program(&gemm, |c| {
        let t = c.tensors.iter_mut().find(|t| t.name == "a_g").unwrap();
        t.layout = "(128, 32):(1, 128)".into();
    });
    assert!(
        e.contains("is not the program's") || e.contains("claim #"),
        "{e}"
    );
    // Another program's text.
    let e = refused_by_program(&gemm, |c| {
        c.source = Some(
            c.source
                .clone()
                .unwrap()
                .replace("mma(c, a, b)", "mma(c, b, a)"),
        );
    });
    assert!(e.contains("in its program") || e.contains("line 17"), "{e}");
    // No program text at all.
    let e = refused_by_program(&gemm, |c| c.source = None);
    assert!(e.contains("carries no program text"), "{e}");
}

#[test]
fn a_swizzle_cute_cannot_instantiate_is_refused() {
    // Session 22's audit: `Sw<3,3,2>` (|S| < B, overlapping bit ranges) re-checked on a shared
    // tensor. It is a bijection, so the plan stayed correct, but CuTe's Swizzle<B,M,S> requires
    // |S| >= B and synthesis never chooses one.
    let plan = certified("gemm_f16_sm80", Target::Sm80);
    for sw in ["Sw<3,3,2>", "Sw<2,3,1>", "Sw<3,3,-2>"] {
        let e = refused(&plan, |c| {
            for t in c.tensors.iter_mut().filter(|t| t.scope == "shared") {
                let (_, rest) = t
                    .layout
                    .split_once(" o ")
                    .expect("a swizzled shared layout");
                t.layout = format!("{sw} o {rest}");
            }
        });
        assert!(e.contains("requires |S| >= B"), "{sw}: {e}");
    }
    // The same edit with a swizzle CuTe can instantiate is not refused by this rule (here it
    // re-checks: `Sw<3,3,3>` is as conflict-free for these ldmatrix reads).
    let mut c = plan.certificate.clone();
    for t in c.tensors.iter_mut().filter(|t| t.scope == "shared") {
        let (_, rest) = t.layout.split_once(" o ").unwrap();
        t.layout = format!("Sw<3,3,3> o {rest}");
    }
    if let Err(e) = check(&c.seal().to_json()) {
        assert!(!e.contains("requires |S| >= B"), "{e}");
    }
}
