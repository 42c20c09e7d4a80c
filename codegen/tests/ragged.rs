//! Predicated edge tiles: the emitted kernel's own expressions, interpreted on the CPU exactly
//! as the kernel's loops run them (every CTA of the launch grid, the interior/edge split, the
//! guard evaluated once per vector, vector loads and stores from their first element's
//! address), move every element of random odd-shaped 2-D and 3-D permutations to where the
//! layouts say, each destination element exactly once; tampered guards and interior
//! conditions are refused by translation validation.

use codegen::c_expr::{CExpr, Env};
use codegen::copy_kernel::PhaseText;
use codegen::validate::{validate, validate_interior};
use codegen::{compile, emit_copy, CodegenError, CopyKernel};
use layout::Layout;
use proptest::prelude::*;
use solver::{plan_copy, CopyOptions, CopyPlan, Dtype};

fn plan(src: &str, dst: &str, shape: &[i64], dtype: Dtype) -> CopyPlan {
    let (s, d) = (
        Layout::parse(src, None).unwrap(),
        Layout::parse(dst, None).unwrap(),
    );
    plan_copy(&s, &d, shape, dtype, &CopyOptions::default())
        .unwrap_or_else(|e| panic!("{src} -> {dst} over {shape:?}: {e}"))
}

struct Parsed {
    f: CExpr,
    s: CExpr,
    coords: Vec<CExpr>,
    global: CExpr,
    smem_linear: CExpr,
    smem: CExpr,
    guard: Option<CExpr>,
}

fn parsed(t: &PhaseText) -> Parsed {
    let p = |x: &str| CExpr::parse(x).unwrap();
    Parsed {
        f: p(&t.f),
        s: p(&t.s),
        coords: t.coords.iter().map(|c| p(c)).collect(),
        global: p(&t.global),
        smem_linear: p(&t.smem_linear),
        smem: p(&t.smem),
        guard: t.guard.as_deref().map(p),
    }
}

/// Binds `f`, `s`, the `c<d>` and `o` for thread `t`, iteration `k`, element `e`.
fn bind(env: &mut Env, p: &Parsed, t: i64, k: i64, e: i64) {
    env.insert("t".into(), t);
    env.insert("k".into(), k);
    env.insert("e".into(), e);
    let f = p.f.eval(env).unwrap();
    let s = p.s.eval(env).unwrap();
    env.insert("f".into(), f);
    env.insert("s".into(), s);
    for (d, c) in p.coords.iter().enumerate() {
        let v = c.eval(env).unwrap();
        env.insert(format!("c{d}"), v);
    }
    let o = p.smem_linear.eval(env).unwrap();
    env.insert("o".into(), o);
}

/// Runs the kernel's two phases over the whole launch grid; `src[i] = i`. Returns the
/// destination buffer: for each address, the values written there, in order.
fn interpret(plan: &CopyPlan, k: &CopyKernel) -> Vec<Vec<i64>> {
    let (load, store) = (parsed(&k.load), parsed(&k.store));
    let interior = k.interior.as_deref().map(|c| CExpr::parse(c).unwrap());
    let src_len = plan.src.cosize().unwrap();
    let mut dst = vec![Vec::new(); plan.dst.cosize().unwrap() as usize];
    let cells = (plan.tile[0] * plan.tile[1]) as usize;
    let (lv, sv) = (plan.load.vec, plan.store.vec);
    let (lw, sw) = (plan.load.smem_vec, plan.store.smem_vec);
    for bz in 0..i64::from(k.grid[2]) {
        for hy in 0..i64::from(k.grid[1]) {
            for hx in 0..i64::from(k.grid[0]) {
                let (bx, by) = if plan.store_major { (hy, hx) } else { (hx, hy) };
                let mut env: Env = [("bx".into(), bx), ("by".into(), by), ("bz".into(), bz)].into();
                let inside = interior
                    .as_ref()
                    .is_some_and(|c| c.eval(&env).unwrap() != 0);
                let pass = |p: &Parsed, env: &Env| {
                    inside || p.guard.as_ref().is_none_or(|g| g.eval(env).unwrap() != 0)
                };
                let mut smem = vec![None::<i64>; cells];
                for t in 0..plan.threads {
                    for it in 0..plan.load.iters {
                        bind(&mut env, &load, t, it, 0);
                        if !pass(&load, &env) {
                            continue;
                        }
                        let base = load.global.eval(&env).unwrap();
                        assert!(base >= 0 && base + lv <= src_len, "load at {base}");
                        let r: Vec<i64> = (base..base + lv).collect();
                        for e in (0..lv).step_by(lw as usize) {
                            bind(&mut env, &load, t, it, e);
                            let at = load.smem.eval(&env).unwrap() as usize;
                            for j in 0..lw as usize {
                                smem[at + j] = Some(r[e as usize + j]);
                            }
                        }
                    }
                }
                for t in 0..plan.threads {
                    for it in 0..plan.store.iters {
                        bind(&mut env, &store, t, it, 0);
                        if !pass(&store, &env) {
                            continue;
                        }
                        let mut w = vec![None; sv as usize];
                        for e in (0..sv).step_by(sw as usize) {
                            bind(&mut env, &store, t, it, e);
                            let at = store.smem.eval(&env).unwrap() as usize;
                            for j in 0..sw as usize {
                                w[e as usize + j] = smem[at + j];
                            }
                        }
                        bind(&mut env, &store, t, it, 0);
                        let base = store.global.eval(&env).unwrap();
                        for (j, v) in w.into_iter().enumerate() {
                            dst[base as usize + j].push(v.expect("a slot no load wrote"));
                        }
                    }
                }
            }
        }
    }
    dst
}

fn offset(l: &Layout, shape: &[i64], x: &[i64]) -> i64 {
    *l.eval(Some(shape), x)
        .unwrap()
        .iter()
        .next()
        .unwrap()
        .values()
        .next()
        .unwrap()
}

/// Every logical element lands once where the layouts say; nothing else is written.
fn check_movement(src: &str, dst: &str, shape: &[i64], dtype: Dtype) -> CopyPlan {
    let p = plan(src, dst, shape, dtype);
    let k = emit_copy(&p).unwrap();
    check_kernel(&p, &k, src, dst, shape);
    p
}

fn check_kernel(p: &CopyPlan, k: &CopyKernel, src: &str, dst: &str, shape: &[i64]) {
    let out = interpret(p, k);
    let (ls, ld) = (
        Layout::parse(src, None).unwrap(),
        Layout::parse(dst, None).unwrap(),
    );
    let size: i64 = shape.iter().product();
    for i in 0..size {
        let x = layout::shape::unflatten_row_major(shape, i).unwrap();
        let (so, dof) = (offset(&ls, shape, &x), offset(&ld, shape, &x));
        assert_eq!(out[dof as usize], [so], "{src} -> {dst}: logical {x:?}");
    }
    let writes: usize = out.iter().map(Vec::len).sum();
    assert_eq!(writes as i64, size, "{src} -> {dst}: extra writes");
}

/// The interpreter is not vacuous: the same kernel with every CTA taken as interior (the
/// guard skipped on the edge tiles) touches memory outside the tensor and is caught.
#[test]
#[should_panic]
fn the_interpreter_catches_an_unguarded_edge() {
    let (src, dst) = ("(100,70):(70,1)", "(100,70):(1,100)");
    let p = plan(src, dst, &[100, 70], Dtype::F32);
    let mut k = emit_copy(&p).unwrap();
    k.interior = Some("1".into());
    check_kernel(&p, &k, src, dst, &[100, 70]);
}

#[test]
fn the_ragged_kernel_moves_every_element_once() {
    let p = check_movement(
        "(100,70):(70,1)",
        "(100,70):(1,100)",
        &[100, 70],
        Dtype::F32,
    );
    assert!(p.ragged());
    check_movement("(37,45):(45,1)", "(37,45):(1,40)", &[37, 45], Dtype::F16);
    check_movement(
        "(3,20,33):(660,33,1)",
        "(3,20,33):(1,3,60)",
        &[3, 20, 33],
        Dtype::I8,
    );
    // Found by the property test below: loads 4 wide, stores (odd pitch) 1 wide over a 64-wide
    // tile, so the 32 threads the loads allowed could not span the stores' 64 lanes.
    for dtype in [Dtype::F32, Dtype::F16, Dtype::I8] {
        check_movement("(2,36):(36,1)", "(2,36):(37,1)", &[2, 36], dtype);
    }
}

#[test]
fn c_expr_reads_comparisons_and_conjunctions() {
    let e = CExpr::parse("c1 < 999 && c0 < 1001").unwrap();
    let env = |a: i64, b: i64| -> Env { [("c0".into(), a), ("c1".into(), b)].into() };
    assert_eq!(e.eval(&env(1000, 998)).unwrap(), 1);
    assert_eq!(e.eval(&env(1000, 999)).unwrap(), 0);
    assert_eq!(e.eval(&env(1001, 0)).unwrap(), 0);
    assert_eq!(e.conjuncts().len(), 2);
    // `&` binds tighter than `&&`, `<` tighter than `&`, `+` tighter than `<`.
    let e = CExpr::parse("3 & 1 < 2 + 1 && 1").unwrap();
    assert_eq!(e.eval(&Env::new()).unwrap(), 1); // (3 & (1 < 3)) && 1
}

#[test]
fn validation_refuses_tampered_guards_and_interiors() {
    let p = plan(
        "(1001,999):(999,1)",
        "(1001,999):(1,1001)",
        &[1001, 999],
        Dtype::F32,
    );
    let k = emit_copy(&p).unwrap();
    let guard = k.load.guard.clone().unwrap();
    assert!(guard.contains("999") && guard.contains("1001"), "{guard}");
    // A guard one past the edge, one short, dropped, or reading two coordinates at once.
    for bad in [
        guard.replace("999", "1000"),
        guard.replace("1001", "1000"),
        "c0 + c1 < 2000".to_string(),
    ] {
        let mut t = k.load.clone();
        t.guard = Some(bad.clone());
        assert!(validate(&p, &t, &k.store).is_err(), "{bad}");
        let mut t = k.store.clone();
        t.guard = Some(bad.clone());
        assert!(validate(&p, &k.load, &t).is_err(), "{bad}");
    }
    let mut t = k.store.clone();
    t.guard = None;
    let e = validate(&p, &k.load, &t).unwrap_err();
    assert!(e.to_string().contains("guard"), "{e}");
    // The interior condition: one tile too many along either axis, or an axis left out.
    let interior = k.interior.clone().unwrap();
    assert!(validate_interior(&p, &interior).unwrap() > 0);
    let full = [999 / p.tile[0], 1001 / p.tile[1]];
    for bad in [
        format!("bx < {} && by < {}", full[0] + 1, full[1]),
        format!("bx < {} && by < {}", full[0], full[1] + 1),
        format!("bx < {}", full[0]),
        format!("bx + by < {}", full[0]),
    ] {
        assert!(validate_interior(&p, &bad).is_err(), "{bad}");
    }
}

#[test]
fn nvrtc_compiles_a_ragged_kernel_or_skips_visibly() {
    let p = plan(
        "(48,100,100):(10000,100,1)",
        "(48,100,100):(10000,1,100)",
        &[48, 100, 100],
        Dtype::F16,
    );
    let k = emit_copy(&p).unwrap();
    assert!(k.interior.is_some());
    match compile(&k) {
        Ok(ptx) => assert!(ptx.to_src().contains("laycert_copy")),
        Err(CodegenError::NoNvrtc(why)) => {
            use std::io::Write;
            let _ = writeln!(std::io::stderr(), "SKIP (no NVRTC): {why}");
        }
        Err(e) => panic!("compile failed: {e}"),
    }
}

/// Compact strides for `shape` with the dimensions ordered fastest-first by `order`, the
/// second-fastest pitch padded by `pad`.
fn compact(shape: &[i64], order: &[usize], pad: i64) -> String {
    let mut stride = vec![0i64; shape.len()];
    let mut run = 1i64;
    for (i, &d) in order.iter().enumerate() {
        stride[d] = run;
        run *= shape[d] + if i == 0 { pad } else { 0 };
    }
    let list = |v: &[i64]| v.iter().map(i64::to_string).collect::<Vec<_>>().join(",");
    format!("({}):({})", list(shape), list(&stride))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Random odd 2-D transposes and copies, and 3-D permutations, with optional padding: the
    /// interpreted kernel moves every element once.
    #[test]
    fn random_odd_shapes_move_every_element_once(
        rank3 in any::<bool>(),
        e in prop::collection::vec(2i64..70, 3),
        src_perm in 0usize..6, dst_perm in 0usize..6,
        pad in 0i64..3, dt in 0usize..4,
    ) {
        let perms: [[usize; 3]; 6] = [[0,1,2],[0,2,1],[1,0,2],[1,2,0],[2,0,1],[2,1,0]];
        let dtype = [Dtype::F32, Dtype::F16, Dtype::I8, Dtype::Bf16][dt];
        let (shape, so, dor): (Vec<i64>, Vec<usize>, Vec<usize>) = if rank3 {
            let shape = vec![e[0].min(9), e[1], e[2]];
            (shape, perms[src_perm].to_vec(), perms[dst_perm].to_vec())
        } else {
            let o = |p: usize| if p % 2 == 0 { vec![0, 1] } else { vec![1, 0] };
            (vec![e[0], e[1]], o(src_perm), o(dst_perm))
        };
        let src = compact(&shape, &so, 0);
        let dst = compact(&shape, &dor, pad);
        check_movement(&src, &dst, &shape, dtype);
    }
}
