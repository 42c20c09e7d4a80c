//! The sm80 GEMM path without a GPU: emission and translation validation over square, ragged
//! and skinny shapes (f16 and bf16); every kind of tampered expression is refused by the
//! validator.

use codegen::gemm::sm80::emitted_text;
use codegen::gemm::validate_sm80::{validate_sm80, Sm80Text};
use codegen::gemm::{choose_config, emit_gemm, plan_for, GemmDtype, GemmSpec, GemmTarget};

/// A named edit of the printed text.
type Tamper = Box<dyn Fn(&mut Sm80Text)>;

fn spec(m: i64, n: i64, k: i64, dtype: GemmDtype) -> GemmSpec {
    GemmSpec {
        m,
        n,
        k,
        dtype,
        target: GemmTarget::Sm80,
    }
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
    assert_eq!((c.bm, c.bn, c.bk, c.consumers), (128, 256, 32, 2));
    let kern = emit_gemm(&spec(8192, 8192, 8192, GemmDtype::Bf16)).unwrap();
    assert_eq!(kern.threads, 256);
    // Every (thread, accumulator, k-step) of the 128x256x32 block: 256 x 128 x 2.
    assert_eq!(kern.validation.mma_products, 256 * 128 * 2);
}

#[test]
fn sm80_refuses_k_not_a_multiple_of_8() {
    let e = emit_gemm(&spec(64, 64, 100, GemmDtype::F16)).unwrap_err();
    assert!(e.to_string().contains("multiple of 8"), "{e}");
}

#[test]
fn sm80_validation_refuses_tampered_expressions() {
    let s = spec(1000, 1000, 1000, GemmDtype::Bf16);
    let c = choose_config(&s).unwrap();
    let plan = plan_for(&s, &c).unwrap();
    let text = emitted_text(&s, &c, &plan).unwrap();
    validate_sm80(&s, &c, &plan, &text).expect("the untouched text validates");
    let tamper = |f: &dyn Fn(&mut Sm80Text)| -> String {
        let mut t = text.clone();
        f(&mut t);
        validate_sm80(&s, &c, &plan, &t)
            .expect_err("a tampered text must be refused")
            .to_string()
    };
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
