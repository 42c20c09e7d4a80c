//! The copy emitter: the C-expression reader against Rust arithmetic, translation validation
//! catching tampered expressions, the CPU reference against the layout semantics, and the
//! NVRTC / device paths (which print a visible SKIP line where the library or GPU is missing).

use codegen::c_expr::{CExpr, Env};
use codegen::runner::{random_elements, reference, POISON};
use codegen::validate::validate;
use codegen::{bench, compile, emit_copy, BenchOptions, CodegenError};
use layout::Layout;
use proptest::prelude::*;
use solver::{plan_copy, CopyOptions, CopyPlan, Dtype};

/// Prints past the test harness's capture (it only captures the print macros), so a skipped
/// GPU test is visible in every run.
fn skip(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{line}");
}

fn plan(src: &str, dst: &str, shape: &[i64], dtype: Dtype) -> CopyPlan {
    let (s, d) = (
        Layout::parse(src, None).unwrap(),
        Layout::parse(dst, None).unwrap(),
    );
    plan_copy(&s, &d, shape, dtype, &CopyOptions::default()).unwrap()
}

#[test]
fn c_expr_worked_vector() {
    let e = CExpr::parse("(t % 8) * 4 + e").unwrap();
    let env: Env = [("t".to_string(), 9), ("e".to_string(), 2)].into();
    assert_eq!(e.eval(&env).unwrap(), 6);
    let sw = CExpr::parse("o ^ ((o & 896) >> 5)").unwrap();
    let env: Env = [("o".to_string(), 200)].into();
    assert_eq!(sw.eval(&env).unwrap(), 204); // 200 ^ ((200 & 896) >> 5) = 200 ^ 4
    assert_eq!(
        CExpr::parse("(c0) * 8192LL + c1")
            .unwrap()
            .eval(&[("c0".into(), 2), ("c1".into(), 3)].into())
            .unwrap(),
        16387
    );
}

#[test]
fn c_expr_errors_name_the_position() {
    let e = CExpr::parse("(t % 8").unwrap_err();
    assert!(matches!(e, CodegenError::Expr { .. }), "{e}");
    assert!(e.to_string().contains("expected ')'"), "{e}");
    let unbound = CExpr::parse("x + 1")
        .unwrap()
        .eval(&Env::new())
        .unwrap_err();
    assert!(unbound.to_string().contains("unbound"), "{unbound}");
    let div0 = CExpr::parse("1 / 0")
        .unwrap()
        .eval(&Env::new())
        .unwrap_err();
    assert!(div0.to_string().contains("divides by zero"), "{div0}");
}

#[test]
fn kernel_carries_layouts_and_certificate_and_validates() {
    let p = plan(
        "(256,256):(256,1)",
        "(256,256):(1,256)",
        &[256, 256],
        Dtype::F32,
    );
    let k = emit_copy(&p).unwrap();
    assert!(k.source.contains("// source      (256, 256):(256, 1)"));
    assert!(k
        .source
        .contains(&format!("// certificate sha256:{}", p.certificate.digest)));
    assert!(k.source.contains(&k.load.global));
    assert!(k.source.contains("st.global.v4.u32"));
    assert_eq!(k.validation.cells, (p.tile[0] * p.tile[1]) as u64);
    assert_eq!(k.grid, [4, 4, 1]);
}

#[test]
fn validation_rejects_a_tampered_expression() {
    let p = plan(
        "(128,128):(128,1)",
        "(128,128):(1,128)",
        &[128, 128],
        Dtype::F16,
    );
    let k = emit_copy(&p).unwrap();
    let mut bad = k.store.clone();
    bad.global = bad.global.replace("128LL", "127LL");
    let e = validate(&p, &k.load, &bad).unwrap_err();
    assert!(e.to_string().contains("emitted offset"), "{e}");
    let mut bad = k.load.clone();
    bad.smem = "o".into();
    let e = validate(&p, &bad, &k.store).unwrap_err();
    assert!(e.to_string().contains("shared offset"), "{e}");
    let mut bad = k.store.clone();
    bad.s = bad.s.replace("+ e", "+ 0");
    assert!(validate(&p, &k.load, &bad).is_err());
}

#[test]
fn reference_moves_every_element_where_the_layouts_say() {
    let (src, dst) = ("(8,16):(16,1)", "(8,16):(1,10)");
    let p = plan(src, dst, &[8, 16], Dtype::F16);
    let data = random_elements(p.src.cosize().unwrap() as usize, 2, 7);
    let out = reference(&p, &data).unwrap();
    let (ls, ld) = (
        Layout::parse(src, None).unwrap(),
        Layout::parse(dst, None).unwrap(),
    );
    let at = |l: &Layout, c: &[i64]| {
        *l.eval(Some(&[8, 16]), c)
            .unwrap()
            .iter()
            .next()
            .unwrap()
            .values()
            .next()
            .unwrap() as usize
    };
    let mut written = 0;
    for i in 0..8 {
        for j in 0..16 {
            let (so, dof) = (at(&ls, &[i, j]), at(&ld, &[i, j]));
            assert_eq!(out[dof * 2..dof * 2 + 2], data[so * 2..so * 2 + 2]);
            written += 1;
        }
    }
    // The pitch-10 destination has holes; they stay poisoned.
    let poisoned = out.chunks(2).filter(|c| c == &[POISON, POISON]).count();
    assert_eq!(poisoned + written, out.len() / 2);
    assert!(data.chunks(2).all(|c| c[0] != POISON && c != [0, 0]));
}

#[test]
fn nvrtc_compiles_the_kernels_or_skips_visibly() {
    // Every dtype width, a non-transposing copy and a 3-D permutation.
    let cases = [
        ("(64,64):(64,1)", "(64,64):(1,64)", vec![64, 64], Dtype::F32),
        (
            "(64,64):(64,1)",
            "(64,64):(1,64)",
            vec![64, 64],
            Dtype::Bf16,
        ),
        ("(64,64):(64,1)", "(64,64):(1,72)", vec![64, 64], Dtype::I8),
        ("(64,64):(64,1)", "(64,64):(64,1)", vec![64, 64], Dtype::F16),
        (
            "(4,32,64):(2048,64,1)",
            "(4,32,64):(1,4,128)",
            vec![4, 32, 64],
            Dtype::F8,
        ),
    ];
    for (src, dst, shape, dtype) in cases {
        let k = emit_copy(&plan(src, dst, &shape, dtype)).unwrap();
        match compile(&k) {
            Ok(ptx) => assert!(ptx.to_src().contains("laycert_copy")),
            Err(CodegenError::NoNvrtc(why)) => return skip(&format!("SKIP (no NVRTC): {why}")),
            Err(e) => panic!("{src} -> {dst} {dtype}: compile failed: {e}"),
        }
    }
}

#[test]
fn bench_runs_on_a_gpu_or_reports_no_cuda_device() {
    let p = plan(
        "(256,128):(128,1)",
        "(256,128):(1,256)",
        &[256, 128],
        Dtype::F32,
    );
    let k = emit_copy(&p).unwrap();
    let opts = BenchOptions {
        warmup: 1,
        reps: 3,
        ..BenchOptions::default()
    };
    match bench(&p, &k, &opts) {
        Ok(r) => assert_eq!(r.mismatches, 0, "{r:?}"),
        Err(CodegenError::NoCudaDevice(why)) => skip(&format!("SKIP (no CUDA device): {why}")),
        Err(e) => panic!("GPU run failed: {e}"),
    }
}

fn expr_strategy() -> impl Strategy<Value = (String, i64)> {
    // Random expressions over x with their value computed by Rust at x = 37 (small enough
    // that no product overflows).
    let leaf = prop_oneof![
        (0i64..10).prop_map(|v| (v.to_string(), v)),
        Just(("x".to_string(), 37))
    ];
    leaf.prop_recursive(3, 16, 2, |inner| {
        (inner.clone(), inner, 0usize..6).prop_map(|((a, va), (b, vb), op)| match op {
            0 => (format!("({a}) + ({b})"), va + vb),
            1 => (format!("({a}) * ({b})"), va * vb),
            2 => (format!("({a}) / (({b}) + 1)"), va / (vb + 1)),
            3 => (format!("({a}) % (({b}) + 1)"), va % (vb + 1)),
            4 => (format!("({a}) ^ ({b})"), va ^ vb),
            _ => (format!("({a}) & ({b})"), va & vb),
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn c_expr_evaluates_like_rust((text, want) in expr_strategy()) {
        let env: Env = [("x".to_string(), 37)].into();
        prop_assert_eq!(CExpr::parse(&text).unwrap().eval(&env).unwrap(), want);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(8))]

    #[test]
    fn emitted_kernels_validate_for_random_layout_pairs(
        a in 3u32..6, b in 3u32..6, src_row in any::<bool>(), dst_row in any::<bool>(), pad in 0i64..2, dt in 0usize..3,
    ) {
        let (m, n) = (1i64 << a, 1i64 << b);
        let lay = |row: bool, pad: i64| if row { format!("({m},{n}):({},1)", n + 16 * pad) } else { format!("({m},{n}):(1,{})", m + 16 * pad) };
        let dtype = [Dtype::F32, Dtype::Bf16, Dtype::F8][dt];
        let p = plan(&lay(src_row, 0), &lay(dst_row, pad), &[m, n], dtype);
        let k = emit_copy(&p).unwrap();
        prop_assert_eq!(k.validation.cells, (p.tile[0] * p.tile[1]) as u64);
    }
}
