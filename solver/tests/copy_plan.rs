//! The copy planner: worked vectors from the module docs, refusals with reasons, and property
//! tests against the layout semantics.

use layout::bank::wavefronts;
use layout::Layout;
use proptest::prelude::*;
use solver::{plan_copy, Along, CopyOptions, CopyPlan, Dtype, Phase, PlanError, Separable};

fn parse(s: &str) -> Layout {
    Layout::parse(s, None).expect("test layouts parse")
}

#[test]
fn separable_splits_a_tiled_cute_layout_per_dimension() {
    let l = parse("((32,256),(32,256)):((1,1024),(32,262144))");
    let s = Separable::from_layout("source", &l, &[8192, 8192]).unwrap();
    assert_eq!(s.dims()[0], vec![(32, 1), (256, 1024)]);
    assert_eq!(s.dims()[1], vec![(32, 32), (256, 262144)]);
    assert_eq!(s.eval(&[33, 2]).unwrap(), 1 + 1024 + 64);
    assert_eq!(s.contiguous_run(0), 32);
    assert_eq!(s.vector_width(0, 4, 64), 4);
    assert!(s.overlapping_modes().is_none());
}

#[test]
fn separable_splits_a_mode_that_spans_two_dimensions() {
    // 32:1 over (8, 4) is column-major: (8,4):(1,8).
    let s = Separable::from_layout("source", &parse("32:1"), &[8, 4]).unwrap();
    assert_eq!(s.dims(), &[vec![(8, 1)], vec![(4, 8)]]);
}

#[test]
fn separable_converts_an_axe_layout() {
    let l = parse("S[(64,64):(64@m,1@m)]");
    let s = Separable::from_layout("source", &l, &[64, 64]).unwrap();
    assert_eq!(s.eval(&[2, 3]).unwrap(), 131);
    assert_eq!(s.fastest_dim(None), Some(1));
}

#[test]
fn separable_refuses_an_uneven_straddle_and_other_notations() {
    let e = Separable::from_layout("source", &parse("(6,4):(1,6)"), &[4, 6]).unwrap_err();
    assert!(e.to_string().contains("straddles"), "{e}");
    let e = Separable::from_layout("source", &parse("Sw<3,4,3> o (8,64):(64,1)"), &[8, 64])
        .unwrap_err();
    assert!(e.to_string().contains("CuTe shape:stride or Axe"), "{e}");
}

#[test]
fn overlapping_destination_is_refused() {
    let e = plan_copy(
        &parse("(64,64):(64,1)"),
        &parse("(64,64):(1,32)"),
        &[64, 64],
        Dtype::F32,
        &CopyOptions::default(),
    )
    .unwrap_err();
    assert!(
        matches!(
            e,
            PlanError::Unsupported {
                which: "destination",
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn bad_rank_and_dtype_are_named() {
    let l = parse("64:1");
    let e = plan_copy(&l, &l, &[64], Dtype::F32, &CopyOptions::default()).unwrap_err();
    assert!(e.to_string().contains("2-D or 3-D"), "{e}");
    assert!(Dtype::parse("f64").unwrap_err().to_string().contains("f64"));
}

#[test]
fn phase_worked_vector_from_the_docs() {
    let p = Phase::new(Along::First, 4, [32, 32], 256).unwrap();
    assert_eq!((p.lanes, p.rows, p.iters), (8, 32, 1));
    assert_eq!(p.coord(9, 0, 2), (6, 1));
    let tv = p.tv([32, 32]).unwrap();
    assert_eq!(
        tv.to_string(),
        "((8, 32), (4, 1)):((4, 32), (1, 1024)) -> (32, 32)"
    );
    assert_eq!(tv.eval(9, 2).unwrap(), vec![6, 1]);
}

#[test]
fn a_warp_writes_a_long_run_in_consecutive_accesses() {
    // The 8191x4097 f32 transpose's store phase: a 32x128 tile, single f32 along second.
    let p = Phase::warp_runs(Along::Second, 1, [32, 128], 256).unwrap();
    assert_eq!((p.lanes, p.segs, p.rows, p.iters), (32, 4, 8, 16));
    // Thread 33 (warp 1, lane 1) at k = 5: the run's second piece, second row of warps.
    assert_eq!(p.coord(33, 5, 0), (9, 33));
    let tv = p.tv([32, 128]).unwrap();
    assert_eq!(
        tv.to_string(),
        "((32, 8), (1, 4, 4)):((32, 1), (32, 1024, 8)) -> (32, 128)"
    );
    assert_eq!(tv.eval(33, 5).unwrap(), vec![9, 33]);
    // Runs of at most a warp, and rows that would not tile the other extent, keep `new`.
    assert_eq!(
        Phase::warp_runs(Along::First, 4, [32, 32], 256).unwrap(),
        Phase::new(Along::First, 4, [32, 32], 256).unwrap()
    );
    let short = Phase::warp_runs(Along::Second, 1, [4, 64], 256).unwrap();
    assert_eq!((short.lanes, short.segs, short.rows), (64, 1, 4));
}

#[test]
fn transpose_plan_is_conflict_free_and_the_baseline_conflicts() {
    let (src, dst) = (parse("(256,256):(256,1)"), parse("(256,256):(1,256)"));
    let opts = CopyOptions {
        tile_bytes: 128,
        ..CopyOptions::default()
    };
    let plan = plan_copy(&src, &dst, &[256, 256], Dtype::F32, &opts).unwrap();
    assert_eq!(
        (plan.tile, plan.tile_dims, plan.grid),
        ([32, 32], [1, 0], [8, 8, 1])
    );
    assert_eq!(
        plan.smem.stores.conflicts() + plan.smem.loads.conflicts(),
        0
    );
    let flat = plan_copy(&src, &dst, &[256, 256], Dtype::F32, &opts.without_swizzle()).unwrap();
    assert_eq!(flat.smem.layout.swizzle().bits(), 0);
    // Scalar loads down a column of the 32x32 tile: 8 lanes share each bank.
    assert_eq!(flat.smem.loads.per_instruction(), 8.0);
    let names: Vec<&str> = plan
        .certificate
        .claims
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(
        names,
        [
            "data movement is the identity",
            "source form",
            "destination form",
            "destination injective",
            "grid partitions the tensor",
            "guards select the tensor",
            "tile stage is the identity"
        ]
    );
    assert_eq!(plan.certificate.digest.len(), 64);
}

#[test]
fn the_predicted_wavefronts_recount_with_the_bank_model() {
    let plan = plan_copy(
        &parse("(128,128):(128,1)"),
        &parse("(128,128):(1,128)"),
        &[128, 128],
        Dtype::F16,
        &CopyOptions::default(),
    )
    .unwrap();
    // Recount every warp-wide shared load of one CTA directly from the layout and the phase.
    let p = &plan.store;
    let mut total = 0i64;
    for warp in 0..plan.threads / 32 {
        for k in 0..p.iters {
            for e in (0..p.vec).step_by(p.smem_vec as usize) {
                let addrs: Vec<Option<i64>> = (0..32)
                    .map(|lane| {
                        let (f, s) = p.coord(warp * 32 + lane, k, e);
                        Some(plan.smem.layout.eval(&plan.tile, &[f, s]).unwrap() * 2)
                    })
                    .collect();
                total += i64::from(wavefronts(&addrs, (p.smem_vec * 2) as u32).unwrap());
            }
        }
    }
    assert_eq!(total, plan.smem.loads.wavefronts);
    // Two wavefronts per 2-byte load down a column, as Nsight Compute measured on the H100.
    assert_eq!(plan.smem.loads.per_instruction(), 2.0);
    assert_eq!(plan.smem.stores.conflicts(), 0);
}

#[test]
fn a_3d_permutation_walks_the_third_dimension_with_the_grid() {
    let plan = plan_copy(
        &parse("(4,64,64):(4096,64,1)"),
        &parse("(4,64,64):(4096,1,64)"),
        &[4, 64, 64],
        Dtype::Bf16,
        &CopyOptions::default(),
    )
    .unwrap();
    assert_eq!(plan.tile_dims, [2, 1]);
    assert_eq!(plan.z_dim, Some(0));
    assert_eq!(plan.grid[2], 4);
}

/// Each phase's `coord` equals its TV layout on every thread, iteration and element.
fn phases_match_their_tv_layouts(plan: &CopyPlan) -> Result<(), TestCaseError> {
    for (p, tv) in [(&plan.load, &plan.load_tv), (&plan.store, &plan.store_tv)] {
        for t in 0..plan.threads {
            for k in 0..p.iters {
                for e in 0..p.vec {
                    let (f, s) = p.coord(t, k, e);
                    prop_assert_eq!(tv.eval(t, e + p.vec * k).unwrap(), vec![f, s]);
                }
            }
        }
    }
    Ok(())
}

fn layout_strategy() -> impl Strategy<Value = (Vec<i64>, String, String)> {
    // Two power-of-two extents, each layout row- or column-major, optionally padded.
    (3u32..6, 3u32..6, any::<bool>(), any::<bool>(), 0i64..3).prop_map(|(a, b, sr, dr, pad)| {
        let (m, n) = (1i64 << a, 1i64 << b);
        let mk = |row: bool, pad: i64| {
            if row {
                format!("({m},{n}):({},1)", n + pad * 8)
            } else {
                format!("({m},{n}):(1,{})", m + pad * 8)
            }
        };
        (vec![m, n], mk(sr, 0), mk(dr, pad))
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    #[test]
    fn separable_matches_the_semantics((shape, src, _dst) in layout_strategy(), i in 0i64..4096) {
        let l = parse(&src);
        let s = Separable::from_layout("source", &l, &shape).unwrap();
        let c = vec![i % shape[0], (i / shape[0]) % shape[1]];
        let want = l.eval(Some(&shape), &c).unwrap();
        let got = s.eval(&c).unwrap();
        prop_assert_eq!(want.iter().next().unwrap().values().next().copied(), Some(got));
    }

    #[test]
    fn plan_phases_match_their_tv_layouts((shape, src, dst) in layout_strategy(), dt in 0usize..3) {
        let dtype = [Dtype::F32, Dtype::F16, Dtype::I8][dt];
        let plan = plan_copy(&parse(&src), &parse(&dst), &shape, dtype, &CopyOptions::default()).unwrap();
        phases_match_their_tv_layouts(&plan)?;
        // The search never does worse than the unswizzled baseline.
        let flat = plan_copy(&parse(&src), &parse(&dst), &shape, dtype, &CopyOptions::default().without_swizzle()).unwrap();
        prop_assert!(plan.smem.stores.wavefronts + plan.smem.loads.wavefronts
            <= flat.smem.stores.wavefronts + flat.smem.loads.wavefronts);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// `warp_runs` against the definition: its TV layout is `coord`, every tile cell is moved
    /// exactly once, and each warp access is 32 consecutive vectors along the axis, which the
    /// warp's next access continues until the run ends.
    #[test]
    fn warp_runs_cover_the_tile_once_in_whole_runs(
        a in 0u32..9, b in 0u32..9, v in 0u32..3, w in 5u32..9, second in any::<bool>()
    ) {
        let (tile, vec, threads) = ([1i64 << a, 1i64 << b], 1i64 << v, 1i64 << w);
        let along = if second { Along::Second } else { Along::First };
        let Ok(p) = Phase::warp_runs(along, vec, tile, threads) else { return Ok(()) };
        let len = if second { tile[1] } else { tile[0] };
        prop_assert_eq!(p.iters * p.vec * threads, tile[0] * tile[1]);
        prop_assert_eq!(p.lanes * p.segs * p.vec, len);
        let tv = p.tv(tile).unwrap();
        let mut seen = vec![0u8; (tile[0] * tile[1]) as usize];
        for t in 0..threads {
            for k in 0..p.iters {
                for e in 0..vec {
                    let (f, s) = p.coord(t, k, e);
                    prop_assert_eq!(tv.eval(t, e + vec * k).unwrap(), vec![f, s]);
                    seen[(f + s * tile[0]) as usize] += 1;
                }
            }
        }
        prop_assert!(seen.iter().all(|&n| n == 1));
        let pos = |t: i64, k: i64| match along {
            Along::First => p.coord(t, k, 0),
            Along::Second => { let (f, s) = p.coord(t, k, 0); (s, f) }
        };
        for warp in 0..threads / 32 {
            for k in 0..p.iters {
                let (a0, r0) = pos(warp * 32, k);
                for lane in 1..32.min(p.lanes) {
                    prop_assert_eq!(pos(warp * 32 + lane, k), (a0 + lane * vec, r0));
                }
                if k % p.segs + 1 < p.segs {
                    prop_assert_eq!(pos(warp * 32, k + 1), (a0 + p.lanes * vec, r0));
                }
            }
        }
    }

    /// Odd pitches narrow the vectors to one element; the planned kernel then writes each
    /// 128-element run of its tile with one warp, and its phases still equal their TV layouts.
    #[test]
    fn odd_pitch_transposes_store_whole_runs_per_warp(m in 40i64..600, n in 40i64..600) {
        let (m, n) = (m | 1, n | 1);
        let plan = plan_copy(
            &parse(&format!("({m},{n}):({n},1)")),
            &parse(&format!("({m},{n}):(1,{m})")),
            &[m, n],
            Dtype::F32,
            &CopyOptions::default(),
        ).unwrap();
        prop_assert_eq!(plan.store.vec, 1);
        let run = match plan.store.along { Along::First => plan.tile[0], Along::Second => plan.tile[1] };
        prop_assert_eq!(plan.store.lanes, run.min(32));
        phases_match_their_tv_layouts(&plan)?;
    }
}

#[test]
fn scalar_unswizzled_transpose_is_a_32_way_conflict() {
    let (src, dst) = (parse("(256,256):(256,1)"), parse("(256,256):(1,256)"));
    let opts = CopyOptions {
        tile_bytes: 128,
        vector: Some(1),
        ..CopyOptions::default()
    };
    let flat = plan_copy(
        &src,
        &dst,
        &[256, 256],
        Dtype::F32,
        &opts.clone().without_swizzle(),
    )
    .unwrap();
    assert_eq!((flat.tile, flat.load.vec, flat.store.vec), ([32, 32], 1, 1));
    // One 4-byte word per lane, 32 lanes down one column of a 128-byte-row tile: one bank.
    let worst = flat
        .smem
        .loads
        .per_instruction()
        .max(flat.smem.stores.per_instruction());
    assert_eq!(worst, 32.0);
    let best = plan_copy(&src, &dst, &[256, 256], Dtype::F32, &opts).unwrap();
    assert_eq!(best.smem.loads.per_instruction(), 1.0);
    assert_eq!(best.smem.stores.per_instruction(), 1.0);
    for v in [0, 3, 8] {
        let bad = CopyOptions {
            vector: Some(v),
            ..opts.clone()
        };
        let e = plan_copy(&src, &dst, &[256, 256], Dtype::F32, &bad).unwrap_err();
        assert!(e.to_string().contains("vector"), "{e}");
    }
}
