//! The sm80 GEMM path without a GPU: emission and translation validation over square, ragged
//! and skinny shapes (f16 and bf16); every kind of tampered expression is refused by the
//! validator.

use certify::synthesis::SynthClaim;
use codegen::gemm::sm80::emitted_text;
use codegen::gemm::validate_sm80::{validate_sm80, Sm80Text};
use codegen::gemm::{
    choose_config, emit_gemm, emit_gemm_with, plan_for, GemmDtype, GemmSpec, GemmTarget,
    MAX_SMEM_BUDGET, SM80_SMEM_LIMIT,
};

/// A named edit of the printed text.
type Tamper = Box<dyn Fn(&mut Sm80Text)>;

fn spec(m: i64, n: i64, k: i64, dtype: GemmDtype) -> GemmSpec {
    GemmSpec {
        m,
        n,
        k,
        dtype,
        target: GemmTarget::Sm80,
        smem_limit: None,
    }
}

/// Applies an edit to a copy of the text and returns the validator's refusal.
type Refuse = Box<dyn Fn(&dyn Fn(&mut Sm80Text)) -> String>;

/// The emitted text for `s` (validated untouched) and its [`Refuse`].
fn harness(s: GemmSpec) -> (Sm80Text, Refuse) {
    let c = choose_config(&s).unwrap();
    let plan = plan_for(&s, &c).unwrap();
    let text = emitted_text(&s, &c, &plan).unwrap();
    validate_sm80(&s, &c, &plan, &text).expect("the untouched text validates");
    let base = text.clone();
    let tamper = move |f: &dyn Fn(&mut Sm80Text)| -> String {
        let mut t = base.clone();
        f(&mut t);
        validate_sm80(&s, &c, &plan, &t)
            .expect_err("a tampered text must be refused")
            .to_string()
    };
    (text, Box::new(tamper))
}

#[test]
fn sm80_emits_and_validates_square_ragged_and_skinny_shapes() {
    for (m, n, k, dtype) in [
        (8192, 8192, 8192, GemmDtype::Bf16),
        (4096, 4096, 4096, GemmDtype::F16),
        (1000, 1000, 1000, GemmDtype::Bf16),
        (5120, 3584, 4096, GemmDtype::Bf16),
        (1, 4096, 4096, GemmDtype::F16),
        (16, 14336, 4096, GemmDtype::Bf16),
        (128, 8192, 8192, GemmDtype::F16),
    ] {
        let kern = emit_gemm(&spec(m, n, k, dtype)).unwrap_or_else(|e| panic!("{m}x{n}x{k}: {e}"));
        let s = &kern.source;
        assert!(s.contains(&kern.digest));
        assert!(s.contains(&format!(
            "mma.sync.aligned.m16n8k16.row.col.f32.{t}.{t}.f32",
            t = dtype.name()
        )));
        assert!(s.contains("ldmatrix.sync.aligned.m8n8.x4.shared.b16"));
        assert!(s.contains("cp.async.cg.shared.global"));
        assert!(s.contains(&format!("#define LC_M {m}\n")));
        assert!(s.contains("#define LC_CLUSTER 1\n"));
        assert!(s.contains("extern \"C\" int laycert_gemm_launch("));
        let v = &kern.validation;
        assert!(v.fragment_cells > 0 && v.mma_products > 0 && v.smem_cells > 0);
        assert!(v.guard_points > 0 && v.global_offsets > 0);
    }
}

#[test]
fn sm80_big_tiles_are_128x256_over_8_warps() {
    let c = choose_config(&spec(8192, 8192, 8192, GemmDtype::Bf16)).unwrap();
    assert_eq!((c.bm, c.bn, c.bk, c.consumers), (128, 256, 64, 2));
    let kern = emit_gemm(&spec(8192, 8192, 8192, GemmDtype::Bf16)).unwrap();
    assert_eq!(kern.threads, 256);
    // Every (thread, accumulator, k-step) of the 128x256x64 block: 256 x 128 x 4.
    assert_eq!(kern.validation.mma_products, 256 * 128 * 4);
    // Whole tiles: full-tile addressing; 4 k-steps: pipelined across k-blocks.
    assert!(kern.source.contains("#define LC_FAST_ADDR 1\n"));
    assert!(kern.source.contains("#define LC_PIPELINED 1\n"));
}

#[test]
fn sm80_fast_addressing_and_pipelining_follow_the_shape() {
    let text = |m, n, k| {
        let s = spec(m, n, k, GemmDtype::Bf16);
        let c = choose_config(&s).unwrap();
        emitted_text(&s, &c, &plan_for(&s, &c).unwrap()).unwrap()
    };
    // Ragged: constant offsets on the tiles and k-blocks inside the problem (guarded loads on
    // the others), constant ldmatrix offsets, still pipelined.
    let t = text(1000, 1000, 1000);
    let f = t.fast.as_ref().expect("ldmatrix offsets on any shape");
    let cp = f.cp.as_ref().expect("interior tiles");
    assert_eq!(cp.full_a, "m0 < 873 && k0 < 937");
    assert_eq!(cp.full_b, "n0 < 745 && k0 < 937");
    assert!(!t.preload.is_empty());
    // K = 4098 (4-byte chunks): the same, ragged in K only.
    let t = text(4096, 4096, 4098);
    let cp = t
        .fast
        .as_ref()
        .and_then(|f| f.cp.as_ref())
        .expect("K = 4098");
    assert_eq!(
        (cp.full_a.as_str(), cp.full_b.as_str()),
        ("k0 < 4035", "k0 < 4035")
    );
    // K = 4100 (8-byte chunks): guarded loads only (measured faster there).
    let t = text(4096, 4096, 4100);
    assert!(t.fast.as_ref().is_some_and(|f| f.cp.is_none()));
    // Skinny M: no A tile lies inside the problem, every B tile does.
    let t = text(16, 4096, 4096);
    let cp = t
        .fast
        .as_ref()
        .and_then(|f| f.cp.as_ref())
        .expect("B tiles");
    assert_eq!((cp.full_a.as_str(), cp.full_b.as_str()), ("0", "1"));
    // K odd (loads staged through registers): no cp.async constants.
    let t = text(4096, 4096, 999);
    assert!(t.fast.as_ref().is_some_and(|f| f.cp.is_none()));
    // 4096^3: both; the preload is the first k-step's groups, reloaded after LC_ADVANCE.
    let t = text(4096, 4096, 4096);
    let f = t.fast.as_ref().expect("whole tiles");
    assert_eq!(f.a_ldsm_x, "(g / 1 % 2) * 32 + (g / 2 % 2) * 64");
    let cp = f.cp.as_ref().expect("whole tiles");
    assert_eq!((cp.full_a.as_str(), cp.full_b.as_str()), ("1", "1"));
    assert_eq!(cp.a_cp_sd, "(j / 1 % 2) * 4096 + (j / 2 % 2) * 8192");
    assert_eq!(cp.a_cp_gd, "(j / 1 % 2) * 131072 + (j / 2 % 2) * 262144");
    let adv = line_at(&t.schedule, "LC_ADVANCE();");
    assert_eq!(
        t.schedule[adv + 1..adv + 1 + t.preload.len()],
        t.preload[..]
    );
    // Skinny M (64 x 128 x 32 tiles): two k-steps share every B group, so no pipelining.
    let t = text(16, 4096, 4096);
    assert!(t.preload.is_empty());
}

/// The index of the schedule line `line` (which must be there).
fn line_at(schedule: &[String], line: &str) -> usize {
    schedule
        .iter()
        .position(|l| l == line)
        .unwrap_or_else(|| panic!("no {line} in the schedule"))
}

#[test]
fn sm80_validation_refuses_tampered_fast_addressing_and_pipelining() {
    let (text, tamper) = harness(spec(4096, 4096, 4096, GemmDtype::F16));
    let fast = |f: fn(&mut codegen::gemm::validate_sm80::Sm80Fast)| -> Tamper {
        Box::new(move |t: &mut Sm80Text| f(t.fast.as_mut().unwrap()))
    };
    let cases: Vec<(&str, &str, Tamper)> = vec![
        (
            "cp.async shared step",
            "LC_A_CP_SD",
            fast(|f| {
                let c = f.cp.as_mut().unwrap();
                c.a_cp_sd = format!("{} + 16", c.a_cp_sd)
            }),
        ),
        (
            "cp.async global step",
            "LC_B_CP_GD",
            fast(|f| f.cp.as_mut().unwrap().b_cp_gd = "(j / 1 % 2) * 4096".into()),
        ),
        (
            "ldmatrix XOR",
            "LC_A_LDSM_D",
            fast(|f| f.a_ldsm_x = "(g / 1 % 2) * 64".into()),
        ),
        (
            "ldmatrix XOR into the base",
            "reaches the stage base",
            fast(|f| f.b_ldsm_x = format!("{} + 1024", f.b_ldsm_x)),
        ),
        (
            "ldmatrix row block",
            "LC_B_LDSM_D",
            fast(|f| f.b_ldsm_d = "(g / 2 % 2) * 4096".into()),
        ),
        (
            "advance before the next stage",
            "before LC_NEXT_STAGE",
            Box::new(|t: &mut Sm80Text| {
                let i = line_at(&t.schedule, "LC_NEXT_STAGE();");
                let l = t.schedule.remove(i);
                let a = line_at(&t.schedule, "LC_ADVANCE();");
                t.schedule.insert(a + 1, l);
            }),
        ),
        (
            "no advance",
            "LC_ADVANCE",
            Box::new(|t: &mut Sm80Text| t.schedule.retain(|l| l != "LC_ADVANCE();")),
        ),
        (
            "a reload dropped",
            "preloaded groups",
            Box::new(|t: &mut Sm80Text| {
                let a = line_at(&t.schedule, "LC_ADVANCE();");
                t.schedule.remove(a + 1);
            }),
        ),
        (
            "a preload dropped",
            "not yet loaded",
            Box::new(|t: &mut Sm80Text| {
                t.preload.remove(0);
            }),
        ),
        (
            "the last k-step reads a reloaded group",
            "holds the next",
            Box::new(|t: &mut Sm80Text| {
                let a = line_at(&t.schedule, "LC_ADVANCE();");
                let n = t.preload.len();
                // Move the reloads after the last mma's first line: an mma then reads a group
                // that already holds the next k-block.
                let reloads: Vec<String> = t.schedule.drain(a + 1..a + 1 + n).collect();
                let first_mma = t.schedule[..a]
                    .iter()
                    .position(|l| l.starts_with("LC_MMA("))
                    .unwrap();
                let m = t.schedule[first_mma].clone();
                let mut after = vec!["LC_ADVANCE();".to_string()];
                after.extend(reloads);
                after.push(m);
                t.schedule.splice(a..a + 1, after);
            }),
        ),
    ];
    for (what, want, f) in cases {
        let e = tamper(&*f);
        assert!(
            e.contains("translation validation failed") && e.contains(want),
            "{what}: {e}"
        );
        eprintln!("{what}: {e}");
    }
    // Fast addressing drops the guards: on a ragged shape only where LC_FULL_A/B hold, so the
    // whole-tile text's constants (LC_FULL_A = 1) are refused there.
    let s2 = spec(4000, 4096, 4096, GemmDtype::F16);
    let c2 = choose_config(&s2).unwrap();
    let p2 = plan_for(&s2, &c2).unwrap();
    let mut t2 = emitted_text(&s2, &c2, &p2).unwrap();
    let cp2 = t2
        .fast
        .as_ref()
        .and_then(|f| f.cp.as_ref())
        .expect("interior tiles");
    assert_eq!(
        (cp2.full_a.as_str(), cp2.full_b.as_str()),
        ("m0 < 3873", "1")
    );
    t2.fast.as_mut().unwrap().cp = text.fast.as_ref().unwrap().cp.clone();
    let e = validate_sm80(&s2, &c2, &p2, &t2).unwrap_err().to_string();
    assert!(e.contains("where m0 + 128 <= 4000"), "{e}");
}

/// The certificate's capacity claim of a kernel: (bytes, limit).
fn capacity_claim(kern: &codegen::gemm::GemmKernel) -> (i64, i64) {
    let cert = certify::synthesis::check(&kern.certificate_json).expect("the certificate checks");
    let claims: Vec<(i64, i64)> = cert
        .claims
        .iter()
        .filter_map(|c| match c {
            SynthClaim::Capacity { bytes, limit } => Some((*bytes, *limit)),
            _ => None,
        })
        .collect();
    assert_eq!(claims.len(), 1, "{claims:?}");
    claims[0]
}

/// Session 26's audit: the default sm80 kernel asked for 197632 bytes of shared memory (the
/// 128x256x64 tile in 4 stages), more than compute capability 8.0's 166912 per CTA, and its
/// certificate's capacity claim counted one stage. Now the default fits the A100 (3 stages)
/// and the claim is exactly the kernel's `LC_SMEM_BYTES` against that limit.
#[test]
fn sm80_default_fits_the_a100_and_the_capacity_claim_is_the_kernels_allocation() {
    for (m, n, k) in [(8192, 8192, 8192), (4096, 4096, 4096), (1001, 999, 64)] {
        for dtype in [GemmDtype::Bf16, GemmDtype::F16] {
            let kern = emit_gemm(&spec(m, n, k, dtype)).unwrap();
            let c = kern.config;
            assert_eq!(
                (c.bm, c.bn, c.bk, c.stages),
                (128, 256, 64, 3),
                "{m}x{n}x{k}"
            );
            assert_eq!(kern.smem_bytes, 148_480);
            assert!(kern.smem_bytes <= SM80_SMEM_LIMIT);
            assert!(kern
                .source
                .contains(&format!("#define LC_SMEM_BYTES {}\n", kern.smem_bytes)));
            assert!(kern
                .source
                .contains("within a budget of 166912 bytes (sm80's limit per CTA)"));
            assert_eq!(capacity_claim(&kern), (kern.smem_bytes, SM80_SMEM_LIMIT));
        }
    }
    // Skinny M: the 64x128x32 tile keeps its 4 stages.
    let kern = emit_gemm(&spec(16, 4096, 4096, GemmDtype::Bf16)).unwrap();
    assert_eq!((kern.config.stages, kern.smem_bytes), (4, 50_176));
    assert_eq!(capacity_claim(&kern), (50_176, SM80_SMEM_LIMIT));
}

/// The H100/H200 budget reproduces the 4-stage kernel the benchmarks measured; a budget below
/// every tile, or an explicit configuration over the budget, is refused naming the bytes.
#[test]
fn sm80_budget_of_an_h100_gives_the_four_stage_kernel() {
    let h100 = spec(4096, 4096, 4096, GemmDtype::Bf16).with_smem_limit(MAX_SMEM_BUDGET);
    let kern = emit_gemm(&h100).unwrap();
    let c = kern.config;
    assert_eq!((c.bm, c.bn, c.bk, c.stages), (128, 256, 64, 4));
    assert_eq!(kern.smem_bytes, 197_632);
    assert!(kern.source.contains("#define LC_SMEM_BYTES 197632\n"));
    assert!(kern
        .source
        .contains("within a budget of 232448 bytes (given by --smem-limit"));
    assert_eq!(capacity_claim(&kern), (197_632, MAX_SMEM_BUDGET));
    // Between the tiles: k-blocks of 32 in 2 stages fit 70000 bytes, bk 64 does not.
    let c = choose_config(&h100.with_smem_limit(70_000)).unwrap();
    assert_eq!((c.bk, c.stages), (32, 2));
    let e = choose_config(&h100.with_smem_limit(20_000)).unwrap_err();
    assert!(
        e.to_string()
            .contains("the smallest, 2 stages of the 64x128x32 tile, needs 25600"),
        "{e}"
    );
    let e = choose_config(&h100.with_smem_limit(MAX_SMEM_BUDGET + 1)).unwrap_err();
    assert!(e.to_string().contains("1..=232448"), "{e}");
    let four = GemmSpec {
        smem_limit: None,
        ..h100
    };
    let e = emit_gemm_with(&four, &c4(&four)).unwrap_err();
    assert!(
        e.to_string().contains(
            "need 197632 bytes of shared memory; the budget is 166912 (--smem-limit raises it"
        ),
        "{e}"
    );
}

/// The default configuration with 4 stages.
fn c4(s: &GemmSpec) -> codegen::gemm::GemmConfig {
    codegen::gemm::GemmConfig {
        stages: 4,
        ..choose_config(s).unwrap()
    }
}

/// K not a multiple of 8: an even K keeps the cp.async ring with chunks as wide as the rows'
/// alignment allows (8 or 4 bytes, `.ca`); an odd K stages A and B through registers (2-byte
/// loads, every 8-element chunk stored with one 16-byte st.shared). The text is validated like
/// any other; the sm90 target routes such a problem here.
#[test]
fn sm80_serves_k_not_a_multiple_of_8() {
    for (m, n, k, chunk, staged) in [
        (64, 64, 100, 4, false),
        (1000, 1000, 999, 8, true),
        (129, 257, 1002, 2, false),
        (1, 1, 1, 8, true),
        (300, 8, 4100, 4, false),
        (4096, 4096, 4097, 8, true),
        (16, 8192, 8190, 2, false),
    ] {
        for dtype in [GemmDtype::F16, GemmDtype::Bf16] {
            let kern =
                emit_gemm(&spec(m, n, k, dtype)).unwrap_or_else(|e| panic!("{m}x{n}x{k}: {e}"));
            let src = &kern.source;
            let flag = format!("#define LC_REG_STAGED {}", i32::from(staged));
            assert!(src.contains(&flag), "{m}x{n}x{k}");
            assert!(
                src.contains(&format!("#define LC_CHUNK {chunk}\n")),
                "{m}x{n}x{k}"
            );
            let copy = if staged {
                "copy -> a_r: ld.global.b16".to_string()
            } else {
                format!("copy -> a_s: cp.async.ca.shared.global [{} B]", 2 * chunk)
            };
            assert!(
                kern.plan_summary.iter().any(|l| l.starts_with(&copy)),
                "{m}x{n}x{k}: {:?}",
                kern.plan_summary
            );
            assert!(kern.validation.global_offsets > 0);
            assert!(kern.note.is_none());
        }
    }
    // Multiples of 8 keep the 16-byte cp.async chunks.
    let kern = emit_gemm(&spec(64, 64, 104, GemmDtype::F16)).unwrap();
    assert!(kern.source.contains("#define LC_REG_STAGED 0"));
    assert!(kern.source.contains("#define LC_CHUNK 8\n"));
    // The sm90 target routes K = 100 here, within sm90's budget, and says why.
    let sm90 = GemmSpec::new(64, 64, 100, GemmDtype::F16, GemmTarget::Sm90);
    let kern = emit_gemm(&sm90).unwrap();
    assert_eq!(kern.spec.target, GemmTarget::Sm80);
    assert_eq!(kern.spec.smem_budget(), codegen::gemm::SM90_SMEM_LIMIT);
    let note = kern.note.unwrap();
    assert!(
        note.contains("TMA cannot load rows of 200 bytes") && note.contains("8-byte cp.async"),
        "{note}"
    );
}

/// The narrow chunks' text is validated: a chunk size other than the plan's, a chunk map off
/// the plan's, a guard that splits a chunk.
#[test]
fn sm80_narrow_chunk_validation_refuses_tampered_loads() {
    let (_, tamper) = harness(spec(1000, 1000, 1004, GemmDtype::Bf16));
    let cases: Vec<(&str, Tamper)> = vec![
        ("the plan chose", Box::new(|t| t.chunk = 2)),
        ("the plan chose", Box::new(|t| t.chunk = 8)),
        (
            "the copy layout says",
            Box::new(|t| t.b_cp_k = format!("({}) ^ 4", t.b_cp_k)),
        ),
        (
            "guard",
            Box::new(|t| t.a_guard = t.a_guard.replace("k < 1004", "k < 1002")),
        ),
    ];
    for (want, f) in cases {
        let why = tamper(&*f);
        assert!(why.contains(want), "{want}: {why}");
    }
}

/// The staged loads' text is validated: a wrong load width, a chunk map off the plan's, a
/// guard that splits a load.
#[test]
fn sm80_staged_validation_refuses_tampered_loads() {
    let (_, tamper) = harness(spec(1000, 1000, 999, GemmDtype::Bf16));
    let cases: Vec<(&str, Tamper)> = vec![
        ("LC_LD_ELEMS", Box::new(|t| t.ld_elems = 4)),
        ("LC_LD_ELEMS", Box::new(|t| t.ld_elems = 2)),
        ("needs register staging", Box::new(|t| t.ld_elems = 0)),
        (
            "the copy layout says",
            Box::new(|t| t.a_cp_k = format!("({}) ^ 8", t.a_cp_k)),
        ),
        (
            "guard",
            Box::new(|t| t.b_guard = t.b_guard.replace("k < 999", "k < 998")),
        ),
    ];
    for (want, f) in cases {
        let why = tamper(&*f);
        assert!(why.contains(want), "{want}: {why}");
    }
}

#[test]
fn sm80_validation_refuses_tampered_expressions() {
    let (_, tamper) = harness(spec(1000, 1000, 1000, GemmDtype::Bf16));
    let cases: Vec<(&str, Tamper)> = vec![
        (
            "ldmatrix k",
            Box::new(|t| t.a_ldsm_k = format!("({}) ^ 8", t.a_ldsm_k)),
        ),
        (
            "ldmatrix row",
            Box::new(|t| t.b_ldsm_row = format!("({}) ^ 1", t.b_ldsm_row)),
        ),
        (
            "swizzle",
            Box::new(|t| t.a_swz = "o ^ ((o >> 4) & 56)".into()),
        ),
        ("no swizzle", Box::new(|t| t.b_swz = "o".into())),
        (
            "epilogue swizzle",
            Box::new(|t| t.h_swz = "o ^ ((o >> 3) & 56)".into()),
        ),
        ("stage layout", Box::new(|t| t.a_slin = "r * 40 + k".into())),
        (
            "cp.async row",
            Box::new(|t| t.a_cp_row = format!("({}) ^ 1", t.a_cp_row)),
        ),
        (
            "cp.async k",
            Box::new(|t| t.b_cp_k = "((t % 4) ^ 1) * 8".into()),
        ),
        (
            "accumulator row",
            Box::new(|t| t.c_row = format!("({}) ^ 8", t.c_row)),
        ),
        (
            "accumulator col",
            Box::new(|t| t.c_col = format!("({}) ^ 1", t.c_col)),
        ),
        (
            "output row",
            Box::new(|t| t.o_row = format!("({}) ^ 1", t.o_row)),
        ),
        ("C offset", Box::new(|t| t.c_goff = "r * 1008 + c".into())),
        (
            "A offset",
            Box::new(|t| t.a_goff = "r * 1000 + k + 1".into()),
        ),
        (
            "C guard",
            Box::new(|t| t.c_guard = "r < 1000 && c < 1008".into()),
        ),
        (
            "A guard",
            Box::new(|t| t.a_guard = "r < 1001 && k < 1000".into()),
        ),
        (
            "B guard k",
            Box::new(|t| t.b_guard = "r < 1000 && k < 1004".into()),
        ),
        (
            "mma instruction",
            Box::new(|t| t.mma_instr = t.mma_instr.replace("bf16", "f16")),
        ),
        ("chunks", Box::new(|t| t.a_chunks -= 1)),
        (
            "schedule: a load dropped",
            Box::new(|t| {
                let i = t
                    .schedule
                    .iter()
                    .position(|l| l.starts_with("LC_LDSM_A"))
                    .unwrap();
                t.schedule.remove(i);
            }),
        ),
        (
            "schedule: an mma dropped",
            Box::new(|t| {
                t.schedule.pop();
            }),
        ),
        (
            "schedule: an mma doubled",
            Box::new(|t| {
                let l = t.schedule.last().unwrap().clone();
                t.schedule.push(l);
            }),
        ),
        (
            "schedule: B operands swapped",
            Box::new(|t| {
                let i = t
                    .schedule
                    .iter()
                    .position(|l| l.starts_with("LC_MMA(0,"))
                    .unwrap();
                t.schedule[i] = "LC_MMA(0, 0, 0, 1, 0);".into();
            }),
        ),
    ];
    for (what, f) in cases {
        let e = tamper(&*f);
        assert!(e.contains("translation validation failed"), "{what}: {e}");
        eprintln!("{what}: {e}");
    }
}

#[test]
fn sm80_validation_refuses_a_full_tile_condition_that_is_not_exact() {
    // LC_FULL_A / LC_FULL_B decide where the guards are dropped: one that holds on a tile that
    // crosses the problem's edge would read outside A or B.
    let (text, tamper) = harness(spec(1000, 1000, 1000, GemmDtype::Bf16));
    assert!(text.fast.as_ref().and_then(|f| f.cp.as_ref()).is_some());
    let full = |f: fn(&mut codegen::gemm::validate_sm80::Sm80FastCp)| -> Tamper {
        Box::new(move |t: &mut Sm80Text| f(t.fast.as_mut().unwrap().cp.as_mut().unwrap()))
    };
    let cases: Vec<(&str, &str, Tamper)> = vec![
        (
            "one row too far",
            "where m0 + 128 <= 1000",
            full(|c| c.full_a = "m0 < 874 && k0 < 937".into()),
        ),
        (
            "the k bound dropped",
            "where k0 + 64 <= 1000",
            full(|c| c.full_b = "n0 < 745".into()),
        ),
        (
            "always",
            "where m0 + 128 <= 1000",
            full(|c| c.full_a = "1".into()),
        ),
        (
            "the wrong operand's axis",
            "where m0 + 128 <= 1000",
            full(|c| c.full_a = "n0 < 745 && k0 < 937".into()),
        ),
        (
            "not a bound",
            "not `v < bound`",
            full(|c| c.full_b = "n0 < 745 && (k0 & 1)".into()),
        ),
        (
            "an unknown variable",
            "not one of its arguments",
            full(|c| c.full_a = "m0 < 873 && k0 < 937 && t < 5".into()),
        ),
    ];
    for (what, expect, f) in cases {
        let err = tamper(&*f);
        assert!(err.contains(expect), "{what}: {err}");
    }
    // Skinny M: no A tile fits, so LC_FULL_A must be 0.
    let (_, tamper) = harness(spec(16, 4096, 4096, GemmDtype::Bf16));
    let err = tamper(&|t: &mut Sm80Text| {
        t.fast.as_mut().unwrap().cp.as_mut().unwrap().full_a = "1".into()
    });
    assert!(err.contains("must be 0"), "{err}");
}
