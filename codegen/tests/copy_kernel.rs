//! The copy emitter: the C-expression reader against Rust arithmetic, translation validation
//! catching tampered expressions, the CPU reference against the layout semantics, a CPU
//! emulation of whole emitted kernels (every CTA, thread and access, through the kernel's own
//! index expressions), and the NVRTC / device paths (which print a visible SKIP line where the
//! library or GPU is missing).

use codegen::c_expr::{CExpr, Env};
use codegen::runner::{random_elements, reference, POISON};
use codegen::validate::validate;
use codegen::{bench, compile, emit_copy, BenchOptions, CodegenError, CopyKernel};
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
    // Every dtype width, a non-transposing copy, a 3-D permutation, lines and a single cell.
    let cases = [
        ("(1,999):(999,1)", "(1,999):(1,1)", vec![1, 999], Dtype::F32),
        (
            "(1,1,7):(7,7,1)",
            "(1,1,7):(1,1,1)",
            vec![1, 1, 7],
            Dtype::F32,
        ),
        ("(1,1):(1,1)", "(1,1):(1,1)", vec![1, 1], Dtype::F16),
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

/// Runs an emitted kernel on the CPU: every CTA of the grid, every thread, iteration and
/// element of both phases, each index computed by the kernel's own expressions (the strings
/// the source prints: tile coordinates, logical coordinates, guard, global and shared
/// offsets), with vector accesses as runs of elements. The source holds each element's own
/// offset; the destination starts at `u64::MAX`. Returns the destination.
fn emulate(plan: &CopyPlan, k: &CopyKernel) -> Vec<u64> {
    let parse = |t: &str| CExpr::parse(t).unwrap();
    let phase = |t: &codegen::copy_kernel::PhaseText| {
        (
            parse(&t.f),
            parse(&t.s),
            t.coords.iter().map(|c| parse(c)).collect::<Vec<_>>(),
            parse(&t.global),
            parse(&t.smem_linear),
            parse(&t.smem),
            t.guard.as_deref().map(parse),
        )
    };
    let (lf, ls, lc, lg, lsl, lsm, lguard) = phase(&k.load);
    let (sf, ss, sc, sg, ssl, ssm, sguard) = phase(&k.store);
    let src: Vec<u64> = (0..plan.src.cosize().unwrap() as u64).collect();
    let mut dst = vec![u64::MAX; plan.dst.cosize().unwrap() as usize];
    let cells = (plan.tile[0] * plan.tile[1]) as usize;
    let ev = |e: &CExpr, env: &Env| e.eval(env).unwrap();
    // The logical coordinates and whether the guard passes, at (f, s) of the block in `env`.
    let at = |coords: &[CExpr], guard: &Option<CExpr>, env: &mut Env| -> bool {
        for (d, c) in coords.iter().enumerate() {
            let v = ev(c, env);
            env.insert(format!("c{d}"), v);
        }
        guard.as_ref().is_none_or(|g| ev(g, env) != 0)
    };
    for bz in 0..plan.grid[2] {
        for by in 0..plan.grid[1] {
            for bx in 0..plan.grid[0] {
                let mut smem = vec![u64::MAX; cells];
                let block: Env = [("bx", bx), ("by", by), ("bz", bz)]
                    .map(|(n, v)| (n.to_string(), v))
                    .into();
                let (lv, lw) = (plan.load.vec, plan.load.smem_vec);
                for t in 0..plan.threads {
                    for it in 0..plan.load.iters {
                        let mut env = block.clone();
                        env.extend(
                            [("t", t), ("k", it), ("e", 0)].map(|(n, v)| (n.to_string(), v)),
                        );
                        env.insert("f".into(), ev(&lf, &env));
                        env.insert("s".into(), ev(&ls, &env));
                        if !at(&lc, &lguard, &mut env) {
                            continue;
                        }
                        let g = ev(&lg, &env) as usize;
                        let r = &src[g..g + lv as usize];
                        for e in (0..lv).step_by(lw as usize) {
                            env.insert("e".into(), e);
                            env.insert("f".into(), ev(&lf, &env));
                            env.insert("s".into(), ev(&ls, &env));
                            env.insert("o".into(), ev(&lsl, &env));
                            let o = ev(&lsm, &env) as usize;
                            for j in 0..lw as usize {
                                smem[o + j] = r[e as usize + j];
                            }
                        }
                    }
                }
                let (sv, sw) = (plan.store.vec, plan.store.smem_vec);
                for t in 0..plan.threads {
                    for it in 0..plan.store.iters {
                        let mut env = block.clone();
                        env.extend(
                            [("t", t), ("k", it), ("e", 0)].map(|(n, v)| (n.to_string(), v)),
                        );
                        env.insert("f".into(), ev(&sf, &env));
                        env.insert("s".into(), ev(&ss, &env));
                        if !at(&sc, &sguard, &mut env) {
                            continue;
                        }
                        let g = ev(&sg, &env) as usize;
                        let mut w = vec![u64::MAX; sv as usize];
                        for e in (0..sv).step_by(sw as usize) {
                            env.insert("e".into(), e);
                            env.insert("f".into(), ev(&sf, &env));
                            env.insert("s".into(), ev(&ss, &env));
                            env.insert("o".into(), ev(&ssl, &env));
                            let o = ev(&ssm, &env) as usize;
                            w[e as usize..(e + sw) as usize]
                                .copy_from_slice(&smem[o..o + sw as usize]);
                        }
                        for (j, x) in w.into_iter().enumerate() {
                            assert_eq!(dst[g + j], u64::MAX, "destination {} written twice", g + j);
                            dst[g + j] = x;
                        }
                    }
                }
            }
        }
    }
    dst
}

/// Every logical coordinate of `shape`, in order.
fn coordinates(shape: &[i64]) -> Vec<Vec<i64>> {
    let mut all = vec![vec![]];
    for &e in shape {
        all = all
            .into_iter()
            .flat_map(|c| {
                (0..e).map(move |x| {
                    let mut c = c.clone();
                    c.push(x);
                    c
                })
            })
            .collect();
    }
    all
}

/// The emulated kernel moves `src[S(x)]` to `dst[D(x)]` for every logical `x` (offsets by the
/// given layouts' semantics) and writes nothing else, for lines, single cells and ragged
/// 2-D / 3-D copies alike (session 26's audit: shapes with fewer than two dimensions of
/// extent > 1 did not plan).
#[test]
fn emulated_kernels_move_every_element_where_the_layouts_say() {
    let cases: &[(&str, &str, &[i64], Dtype)] = &[
        ("(1,999):(999,1)", "(1,999):(1,1)", &[1, 999], Dtype::F32),
        ("(999,1):(1,1)", "(999,1):(1,999)", &[999, 1], Dtype::F32),
        ("(1,1):(1,1)", "(1,1):(1,1)", &[1, 1], Dtype::F32),
        ("(2,1):(1,1)", "(2,1):(1,2)", &[2, 1], Dtype::F16),
        ("(1,1,7):(7,7,1)", "(1,1,7):(1,1,1)", &[1, 1, 7], Dtype::F32),
        // A line whose destination has a stride of 2 (vectors of 8 in, 1 out).
        (
            "(1,4096):(4096,1)",
            "(1,4096):(1,2)",
            &[1, 4096],
            Dtype::F16,
        ),
        // Ragged 2-D and 3-D copies (the emulator against plans that tile two axes).
        ("(37,45):(45,1)", "(37,45):(1,37)", &[37, 45], Dtype::F32),
        (
            "(3,20,12):(240,12,1)",
            "(3,20,12):(240,1,20)",
            &[3, 20, 12],
            Dtype::Bf16,
        ),
    ];
    for &(src, dst, shape, dtype) in cases {
        let p = plan(src, dst, shape, dtype);
        let k = emit_copy(&p).unwrap_or_else(|e| panic!("{src}: {e}"));
        let out = emulate(&p, &k);
        let (ls, ld) = (
            Layout::parse(src, None).unwrap(),
            Layout::parse(dst, None).unwrap(),
        );
        let at = |l: &Layout, c: &[i64]| {
            *l.eval(Some(shape), c)
                .unwrap()
                .iter()
                .next()
                .unwrap()
                .values()
                .next()
                .unwrap() as usize
        };
        let all = coordinates(shape);
        for c in &all {
            assert_eq!(
                out[at(&ld, c)],
                at(&ls, c) as u64,
                "{src} -> {dst} at {c:?}"
            );
        }
        let written = out.iter().filter(|&&x| x != u64::MAX).count();
        assert_eq!(written, all.len(), "{src} -> {dst}");
    }
}

/// The shapes of session 26's audit: a kernel, its validation and its certificate.
#[test]
fn lines_and_single_cells_emit_validated_kernels() {
    for (src, dst, shape, tile, threads) in [
        (
            "(1,999):(999,1)",
            "(1,999):(1,1)",
            &[1, 999][..],
            "tile 1024x1 over logical dims (1, 0)",
            512,
        ),
        (
            "(999,1):(1,1)",
            "(999,1):(1,999)",
            &[999, 1][..],
            "tile 1024x1 over logical dims (0, 1)",
            512,
        ),
        (
            "(1,1):(1,1)",
            "(1,1):(1,1)",
            &[1, 1][..],
            "tile 1x1 over logical dims (0, 1)",
            1,
        ),
        (
            "(1,1,7):(7,7,1)",
            "(1,1,7):(1,1,1)",
            &[1, 1, 7][..],
            "tile 8x1 over logical dims (2, 0), z dim 1",
            8,
        ),
    ] {
        let p = plan(src, dst, shape, Dtype::F32);
        let k = emit_copy(&p).unwrap();
        assert!(
            k.source.contains(tile),
            "{src}: {}",
            k.source.lines().nth(4).unwrap()
        );
        assert_eq!(k.threads, threads, "{src}");
        assert!(k
            .source
            .contains(&format!("// certificate sha256:{}", p.certificate.digest)));
        assert!(k.source.contains("__launch_bounds__"));
        assert_eq!(k.validation.cells, (p.tile[0] * p.tile[1]) as u64);
        let cert = p.certificate.movement.as_ref().unwrap();
        assert_eq!(cert.verdict, "proved");
    }
}
