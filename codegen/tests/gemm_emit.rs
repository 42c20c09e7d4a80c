//! GEMM emission without a GPU: the acceptance shapes emit and validate for both dtypes, the
//! plan's certificate re-checks, and every kind of wrong index text is caught by validation
//! (each tampering below is a bug an emitter could plausibly have).

use codegen::gemm::sm90::emitted_text;
use codegen::gemm::validate::validate_sm90;
use codegen::gemm::{choose_config, emit_gemm, plan_for, GemmDtype, GemmSpec, GemmTarget};
use codegen::CodegenError;

fn spec(m: i64, n: i64, k: i64, dtype: GemmDtype) -> GemmSpec {
    GemmSpec {
        m,
        n,
        k,
        dtype,
        target: GemmTarget::Sm90,
        smem_limit: None,
    }
}

#[test]
fn the_acceptance_shapes_emit_validate_and_certify() {
    let mut shapes = vec![
        (8192, 8192, 8192),
        (4096, 4096, 4096),
        (5120, 3584, 4096),
        (1000, 1000, 1000),
    ];
    for m in [1, 16, 128, 4096] {
        for (n, k) in [(4096, 14336), (14336, 4096), (8192, 8192)] {
            shapes.push((m, n, k));
        }
    }
    for (m, n, k) in shapes {
        for dtype in [GemmDtype::Bf16, GemmDtype::F16] {
            let kern =
                emit_gemm(&spec(m, n, k, dtype)).unwrap_or_else(|e| panic!("{m}x{n}x{k}: {e}"));
            assert!(kern.source.contains(&kern.digest));
            assert!(kern.source.contains(&format!("#define LC_M {m}\n")));
            let v = &kern.validation;
            let c = &kern.config;
            // the atom check on one warpgroup, then the plan check on every consumer thread
            assert_eq!(
                v.accumulator_cells as i64,
                128 * (c.bn / 2) * (1 + c.consumers)
            );
            assert_eq!(v.smem_cells as i64, (c.bm + c.bn) * c.bk);
            assert!(v.global_offsets as i64 >= m + n);
            solver::synth::check_certificate(&kern.certificate_json)
                .unwrap_or_else(|e| panic!("{m}x{n}x{k}: {e}"));
            if c.splits > 1 {
                assert_eq!(c.cluster, 1);
                assert!(c.tiles(&kern.spec) * c.splits <= codegen::gemm::SM90_SMS);
            }
        }
    }
}

fn tampered(
    m: i64,
    n: i64,
    k: i64,
    edit: impl Fn(&mut codegen::gemm::validate::EmittedText),
) -> String {
    let s = spec(m, n, k, GemmDtype::Bf16);
    let c = choose_config(&s).unwrap();
    let plan = plan_for(&s, &c).unwrap();
    let good = emitted_text(&s, &c);
    validate_sm90(&s, &c, &plan, &good).expect("the emitted text validates");
    let mut bad = good.clone();
    edit(&mut bad);
    match validate_sm90(&s, &c, &plan, &bad) {
        Err(CodegenError::Validation(why)) => why,
        other => panic!("tampering not caught: {other:?}"),
    }
}

#[test]
fn wrong_accumulator_indices_are_caught() {
    // Rows of the two 8-row halves swapped, and adjacent column pairs swapped.
    let why = tampered(4096, 4096, 4096, |t| {
        t.acc_row = t.acc_row.replace("((i / 2) % 2) * 8", "((i / 4) % 2) * 8")
    });
    assert!(why.contains("accumulator"), "{why}");
    let why = tampered(4096, 4096, 4096, |t| {
        t.acc_col = "(i / 4) * 8 + (tid % 4) * 2 + (i + 1) % 2".into()
    });
    assert!(why.contains("accumulator"), "{why}");
}

#[test]
fn wrong_global_offsets_and_guards_are_caught() {
    let why = tampered(1000, 1000, 1000, |t| t.c_offset = "row * 1024 + col".into());
    assert!(why.contains("C offset"), "{why}");
    let why = tampered(1000, 1000, 1000, |t| t.c_offset = "row * col + col".into());
    assert!(why.contains("more than one coordinate"), "{why}");
    let why = tampered(1000, 1000, 1000, |t| {
        t.store_guard = "row < 1000 && col < 1001".into()
    });
    assert!(why.contains("guard"), "{why}");
    let why = tampered(1000, 1000, 1000, |t| t.store_guard = "row < 1000".into());
    assert!(why.contains("guard"), "{why}");
}

#[test]
fn wrong_descriptors_are_caught() {
    // SBO of 512 bytes (the 64-byte swizzle's) with the 128-byte swizzle's TMA layout.
    let why = tampered(4096, 4096, 4096, |t| {
        t.descriptor = "0x4000002000010000ull".into()
    });
    assert!(why.contains("descriptor reads"), "{why}");
    // The 64-byte swizzle mode.
    let why = tampered(4096, 4096, 4096, |t| {
        t.descriptor = "0x8000004000010000ull".into()
    });
    assert!(why.contains("layout type"), "{why}");
}

#[test]
fn wrong_split_k_ranges_and_workspace_indices_are_caught() {
    // 128 x 4096 x 4096 splits its k-blocks (16 tiles cannot fill the SMs).
    let why = tampered(128, 4096, 4096, |t| {
        t.kb_begin = t.kb_begin.replace("split *", "(split + 1) *")
    });
    assert!(why.contains("split 0 covers"), "{why}");
    let why = tampered(128, 4096, 4096, |t| t.kb_end = "(split + 1) * 3".into());
    assert!(why.contains("covers"), "{why}");
    let why = tampered(128, 4096, 4096, |t| {
        t.ws_index = t.ws_index.replace(" + i", " + i / 2")
    });
    assert!(why.contains("workspace"), "{why}");
    let why = tampered(128, 4096, 4096, |t| t.red_begin = "split * 8".into());
    assert!(why.contains("reduces words"), "{why}");
}

#[test]
fn problems_the_sm90_path_cannot_serve_are_errors() {
    // TMA cannot load rows of K = 1001 elements: the configuration is refused, and
    // `emit_gemm` routes the problem to the sm80 path instead (with a note).
    let odd = spec(64, 64, 1001, GemmDtype::F16);
    match choose_config(&odd) {
        Err(CodegenError::Gemm(why)) => assert!(why.contains("multiple of 8"), "{why}"),
        other => panic!("{other:?}"),
    }
    let kern = emit_gemm(&odd).unwrap();
    assert_eq!(kern.spec.target, GemmTarget::Sm80);
    assert!(kern.note.is_some());
    for (m, n, k, what) in [(0, 64, 64, "M = 0"), (64, 1 << 21, 64, "N = ")] {
        match emit_gemm(&spec(m, n, k, GemmDtype::F16)) {
            Err(CodegenError::Gemm(why)) => assert!(why.contains(what), "{why}"),
            other => panic!("{m}x{n}x{k}: {other:?}"),
        }
    }
}

#[test]
fn gpu_bench_gemm_runs_or_skips_visibly() {
    use codegen::gemm::runner::{bench_gemm, GemmBenchOptions};
    let kern = emit_gemm(&spec(256, 256, 256, GemmDtype::Bf16)).unwrap();
    let o = GemmBenchOptions {
        warmup: 1,
        reps: 2,
        ..Default::default()
    };
    match bench_gemm(&kern, &o) {
        Err(CodegenError::NoCudaDevice(why)) => println!("SKIP (no CUDA device): {why}"),
        Ok(r) => assert_eq!(r.bad, 0, "{r:?}"),
        Err(e) => panic!("{e}"),
    }
}

/// Session 30's audit. (1) The capacity claim took the certificate's alignment slack on trust:
/// a slack of 0, re-sealed, claimed a ring 1024 bytes smaller than the kernel's fits. TMA and
/// wgmma read A and B through the 128-byte swizzle by address bits, so the slack must cover
/// aligning the base to 1024 bytes. (2) Where N is below the tile's width, the C view's rows
/// overlap past column N; the view names its bounds, and the store is injective within them.
#[test]
fn the_certificate_binds_the_alignment_slack_and_the_c_views_bounds() {
    let kern = emit_gemm(&spec(1024, 1024, 1024, GemmDtype::F16)).unwrap();
    let mut c = certify::synthesis::check(&kern.certificate_json).unwrap();
    let a = c.smem.as_mut().unwrap();
    assert_eq!(a.align, 1024);
    a.align = 0;
    let e = certify::synthesis::check(&c.seal().to_json()).unwrap_err();
    assert!(e.contains("repeats every 1024 bytes"), "{e}");

    for (m, n) in [(64, 64), (7, 13), (1000, 100)] {
        let kern = emit_gemm(&spec(m, n, 64, GemmDtype::Bf16)).unwrap();
        let c = solver::synth::check_certificate(&kern.certificate_json).unwrap();
        let cg = c.tensors.iter().find(|t| t.name == "c_g").unwrap();
        let bn = kern.config.bn;
        assert_eq!(
            cg.bounds,
            Some(vec![kern.config.bm.min(m), n]),
            "{m}x{n}: tile width {bn}"
        );
        // Without its bounds the view's store races, and the check says so.
        let mut t = c.clone();
        t.tensors
            .iter_mut()
            .find(|t| t.name == "c_g")
            .unwrap()
            .bounds = None;
        let e = certify::synthesis::check(&t.seal().to_json()).unwrap_err();
        assert!(e.contains("both at"), "{e}");
        // Bounds past the problem are refused as well (they are the program's).
        let mut t = c.clone();
        t.tensors
            .iter_mut()
            .find(|t| t.name == "c_g")
            .unwrap()
            .bounds = Some(vec![kern.config.bm.min(m), n + 1]);
        assert!(solver::synth::check_certificate(&t.seal().to_json()).is_err());
    }
    // N at least the tile's width: no bounds, the certificate unchanged.
    let kern = emit_gemm(&spec(1000, 1000, 1000, GemmDtype::Bf16)).unwrap();
    let c = certify::synthesis::check(&kern.certificate_json).unwrap();
    assert!(c.tensors.iter().all(|t| t.bounds.is_none()));
}
