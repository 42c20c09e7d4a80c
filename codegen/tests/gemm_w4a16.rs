//! The W4A16 kernel without a GPU: emission and validation for M = 1 and 16 and several N, K,
//! groups and splits; bad problems are refused; tampered expressions are refused.

use solver::synth::Plan;

use codegen::gemm::w4a16::{
    a_kperm, choose, choose_split_k, emit_w4a16, emit_w4a16_with, emitted_text, mma_k,
    packed_layout, plan_for, validate_w4a16, W4Dequant, W4Packing, W4Text, W4a16Config, W4a16Spec,
};

/// A named edit of the printed text.
type Tamper = Box<dyn Fn(&mut W4Text)>;

/// Each edit changes the text, and validation refuses the edited text.
fn assert_tampers_refused(
    s: &W4a16Spec,
    c: &W4a16Config,
    plan: &Plan,
    text: &W4Text,
    cases: Vec<(&str, Tamper)>,
) {
    for (what, f) in cases {
        let mut t = text.clone();
        f(&mut t);
        assert_ne!(&t, text, "{what}: the tamper changed nothing");
        let e = validate_w4a16(s, c, plan, &t).expect_err(what).to_string();
        assert!(e.contains("translation validation failed"), "{what}: {e}");
        eprintln!("{what}: {e}");
    }
}

/// The first mma line of the schedule with `from` replaced by `to` (once).
fn edit_first_mma(t: &mut W4Text, from: &str, to: &str) {
    let i = t
        .schedule
        .iter()
        .position(|l| l.starts_with("LC_W4_MMA"))
        .unwrap();
    t.schedule[i] = t.schedule[i].replacen(from, to, 1);
}

/// A problem in the sequential packing (what the tests above the interleaved ones cover: both
/// dequantizations and the k-permuted mma).
fn spec(m: i64, n: i64, k: i64, group: i64) -> W4a16Spec {
    W4a16Spec {
        m,
        n,
        k,
        group,
        packing: W4Packing::Sequential,
        smem_limit: None,
    }
}

/// A problem in the interleaved packing (the default).
fn spec_i(m: i64, n: i64, k: i64, group: i64) -> W4a16Spec {
    W4a16Spec {
        packing: W4Packing::Interleaved,
        ..spec(m, n, k, group)
    }
}

#[test]
fn w4a16_emits_and_validates_for_small_m() {
    for (m, n, k, g) in [
        (1, 8192, 8192, 128),
        (16, 8192, 8192, 128),
        (7, 4096, 14336, 256),
        (16, 14336, 4096, 128),
        (3, 384, 640, 128),
    ] {
        let kern = emit_w4a16(&spec(m, n, k, g)).unwrap_or_else(|e| panic!("{m}x{n}x{k}: {e}"));
        let s = &kern.source;
        assert!(s.contains(&kern.digest));
        assert!(s.contains("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"));
        assert!(s.contains("ld.global.nc.L1::no_allocate.v4.b32"));
        assert!(s.contains("extern \"C\" int laycert_w4a16_launch(const void* A, const void* W, const void* S, void* C,"));
        assert!(s.contains(&format!("#define LC_M {m}\n")));
        let v = &kern.validation;
        assert!(v.fragment_cells > 0 && v.mma_products > 0 && v.global_offsets > 0);
        // The plan streams W with 16-byte loads.
        assert!(kern
            .plan_summary
            .iter()
            .any(|l| l.contains("copy -> w: ld.global.v4.b32")));
    }
}

#[test]
fn w4a16_default_for_8192_squared_is_512_ctas() {
    // The split-K configuration (kept where K-group CTAs do not fill the GPU).
    let c = choose_split_k(&spec(16, 8192, 8192, 128)).unwrap();
    assert_eq!(c, split_k(128, 8, 1, W4Dequant::Bytes));
    // The default at N = 8192: K-group CTAs, 16 warps per SM (bench/gpu/README.md, session 16).
    let kg = W4a16Config {
        splits: 1,
        kwarps: 8,
        cwarps: 2,
        aslots: 4,
        ..c
    };
    assert_eq!(choose(&spec(16, 8192, 8192, 128)).unwrap(), kg);
    assert_eq!(
        choose(&spec(1, 8192, 8192, 128)).unwrap(),
        W4a16Config {
            cwarps: 1,
            aslots: 2,
            dequant: W4Dequant::Pairs,
            ..kg
        }
    );
    // M = 2..=4 as M = 1; 5..=8 pairs with two column warps.
    for m in [2, 4] {
        assert_eq!(
            choose(&spec(m, 8192, 8192, 128)).unwrap(),
            choose(&spec(1, 8192, 8192, 128)).unwrap()
        );
    }
    assert_eq!(
        choose(&spec(8, 8192, 8192, 128)).unwrap(),
        W4a16Config {
            dequant: W4Dequant::Pairs,
            ..kg
        }
    );
    // A grid that does not fill the SMs keeps split-K.
    for (n, k) in [(4096, 4096), (14336, 4096)] {
        assert_eq!(choose(&spec(16, n, k, 128)).unwrap().kwarps, 1, "{n}x{k}");
    }
    let k = emit_w4a16_with(
        &spec(1, 8192, 8192, 128),
        &split_k(256, 16, 1, W4Dequant::Bytes),
    )
    .unwrap();
    assert_eq!(k.grid, 32 * 16);
    // A warp per 32 columns: 256 columns are 8 warps.
    assert!(k.source.contains("#define LC_THREADS 256"));
    assert!(k.source.contains("warps 1x8"));
}

#[test]
fn w4a16_refuses_problems_it_does_not_serve() {
    for (s, want) in [
        (spec(17, 8192, 8192, 128), "1..=16"),
        (spec(1, 8192 + 64, 8192, 128), "multiple of 128"),
        (spec(1, 8192, 8192, 96), "group"),
        (spec(1, 8192, 8192 + 128, 256), "group"),
    ] {
        let e = emit_w4a16(&s).unwrap_err().to_string();
        assert!(e.contains(want), "{s:?}: {e}");
    }
    let e = emit_w4a16_with(
        &spec(1, 8192, 8192, 128),
        &split_k(256, 1, 1, W4Dequant::Bytes),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("splits"), "{e}");
    for (splits, cluster) in [(8, 4), (3, 3), (16, 16), (1, 2)] {
        let e = emit_w4a16_with(
            &spec(1, 8192, 8192, 128),
            &split_k(128, splits, cluster, W4Dequant::Bytes),
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("cluster"),
            "{splits} splits, cluster {cluster}: {e}"
        );
    }
}

#[test]
fn w4a16_reduces_in_a_cluster_where_the_grid_fits_one_wave_of_clusters() {
    // 448 CTAs in clusters of 4: one wave; 8192 x 8192's 512 CTAs in clusters of 8: not.
    let c = choose(&spec(16, 14336, 4096, 128)).unwrap();
    assert_eq!((c.splits, c.cluster), (4, 4));
    let k = emit_w4a16_with(&spec(16, 14336, 4096, 128), &c).unwrap();
    assert!(k.source.contains("#define LC_CLUSTER_REDUCE 1"));
    assert!(k.source.contains("__cluster_dims__(LC_SPLITS, 1, 1)"));
    assert_eq!(choose(&spec(1, 8192, 8192, 128)).unwrap().cluster, 1);
    // Either reduction validates on the same problem.
    for cluster in [1, 8] {
        let s = spec(3, 1024, 2048, 128);
        let c = split_k(128, 8, cluster, W4Dequant::Bytes);
        let k = emit_w4a16_with(&s, &c).unwrap();
        let flag = format!("#define LC_CLUSTER_REDUCE {}", (cluster > 1) as i32);
        assert!(k.source.contains(&flag), "cluster {cluster}");
    }
}

#[test]
fn w4a16_validation_refuses_tampered_expressions() {
    let s = spec(5, 1024, 1024, 128);
    let c = choose(&s).unwrap();
    // The cluster reduction (8 splits of 64 CTAs fit one wave), so the partial's offsets count.
    assert_eq!(c.cluster, 8);
    let plan = plan_for(&s, &c).unwrap();
    let text = emitted_text(&s, &c, &plan).unwrap();
    validate_w4a16(&s, &c, &plan, &text).expect("the untouched text validates");
    let cases: Vec<(&str, Tamper)> = vec![
        (
            "W offset",
            Box::new(|t| t.w_goff = t.w_goff.replace("(k % 2)", "(k % 2) * 2")),
        ),
        (
            "W row",
            Box::new(|t| t.w_row = format!("({}) ^ 1", t.w_row)),
        ),
        ("W k", Box::new(|t| t.w_k = format!("({}) ^ 16", t.w_k))),
        ("W superblock step", Box::new(|t| t.w_sb_words = 64)),
        ("W vector step", Box::new(|t| t.w_vstep += 4)),
        ("W vector step 0", Box::new(|t| t.w_vstep = 0)),
        ("scale vector step", Box::new(|t| t.s_vstep += 1)),
        (
            "scale row",
            Box::new(|t| t.s_n = format!("({}) ^ 1", t.s_n)),
        ),
        ("scale offset", Box::new(|t| t.s_goff = "n * 9 + g".into())),
        ("A swizzle", Box::new(|t| t.a_swz = "o".into())),
        (
            "ldmatrix",
            Box::new(|t| t.a_ldsm_k = format!("({}) ^ 8", t.a_ldsm_k)),
        ),
        (
            "accumulator",
            Box::new(|t| t.c_col = format!("({}) ^ 2", t.c_col)),
        ),
        (
            "workspace",
            Box::new(|t| t.ws_off = "p * 5120 + r * 1024 + c + 2".into()),
        ),
        (
            "reduction",
            Box::new(|t| t.r_row = "(t + i * 128) * 2 / 512".into()),
        ),
        (
            "partial offset overlap",
            Box::new(|t| t.p_off = "r * 64 + c".into()),
        ),
        (
            "partial offset range",
            Box::new(|t| t.p_off = "r * 128 + c + 2".into()),
        ),
        (
            "partial pair",
            Box::new(|t| t.p_off = "r * 128 + (c ^ 1)".into()),
        ),
        (
            "C guard",
            Box::new(|t| t.c_guard = "r < 6 && c < 1024".into()),
        ),
        (
            "A guard",
            Box::new(|t| t.a_guard = "r < 16 && k < 1024".into()),
        ),
        (
            "nibble byte",
            Box::new(|t| edit_first_mma(t, ", 0, 1);", ", 0, 2);")),
        ),
        (
            "mma dropped",
            Box::new(|t| {
                t.schedule.pop();
            }),
        ),
        (
            "A load dropped",
            Box::new(|t| {
                t.schedule.remove(0);
            }),
        ),
    ];
    assert_tampers_refused(&s, &c, &plan, &text, cases);
}

#[test]
fn mma_k_swaps_bits_0_and_4_inside_each_32() {
    // Worked vector: kappa = 1 (k-position 1 of the first k-step) multiplies k = 16, the second
    // nibble of the pair (0, 4) of a word; kappa = 16 multiplies k = 1.
    assert_eq!(mma_k(W4Packing::Sequential, W4Dequant::Pairs, 1), 16);
    assert_eq!(mma_k(W4Packing::Sequential, W4Dequant::Pairs, 16), 1);
    assert_eq!(mma_k(W4Packing::Sequential, W4Dequant::Pairs, 8), 8);
    assert_eq!(
        mma_k(W4Packing::Sequential, W4Dequant::Pairs, 32 + 17),
        32 + 17
    );
    assert_eq!(mma_k(W4Packing::Sequential, W4Dequant::Bytes, 17), 17);
    // A permutation of every 32-aligned group, and its own inverse, along a whole K.
    for k in 0..14336 {
        let p = mma_k(W4Packing::Sequential, W4Dequant::Pairs, k);
        assert_eq!(p / 32, k / 32, "{k}");
        assert_eq!(mma_k(W4Packing::Sequential, W4Dequant::Pairs, p), k, "{k}");
    }
}

#[test]
fn w4a16_pairs_emits_and_validates() {
    for (m, n, k, g, bn, splits, cluster) in [
        (1, 8192, 8192, 128, 128, 8, 1),
        (16, 8192, 8192, 128, 128, 8, 1),
        (16, 14336, 4096, 128, 128, 4, 4),
        (7, 4096, 14336, 256, 128, 16, 1),
        (5, 1024, 1024, 128, 256, 8, 1),
        (3, 384, 640, 128, 128, 1, 1),
    ] {
        let c = split_k(bn, splits, cluster, W4Dequant::Pairs);
        let kern =
            emit_w4a16_with(&spec(m, n, k, g), &c).unwrap_or_else(|e| panic!("{m}x{n}x{k}: {e}"));
        let s = &kern.source;
        assert!(s.contains("#define LC_DQ_PAIRS 1\n"));
        assert!(s.contains("#define LC_A_PR_K(x)"));
        assert!(
            !s.contains("#define LC_A_CP_K("),
            "only the scheme's staging is printed"
        );
        // Every B register is a nibble pair: pieces 0..3, k-step 0 of a word pairs pieces 0
        // and 2, k-step 1 pieces 1 and 3.
        assert!(s.contains("LC_W4_MMA(0, 0, 0, 0, 0, 0, 2);"), "{m}x{n}x{k}");
        assert!(s.contains("LC_W4_MMA(0, 1, 0, 0, 1, 0, 3);"), "{m}x{n}x{k}");
        // The staged a_s is counted: 16 x 128 cells.
        assert!(kern.validation.smem_cells >= 2048);
    }
    // The split-K CTA stays bytes (its one-shot interleave is slower, measured on the H200);
    // the K-group CTA at M = 1 takes pairs (its per-superblock interleave moves one row).
    assert_eq!(
        choose_split_k(&spec(1, 8192, 8192, 128)).unwrap().dequant,
        W4Dequant::Bytes
    );
    assert_eq!(
        choose(&spec(1, 8192, 8192, 128)).unwrap().dequant,
        W4Dequant::Pairs
    );
    assert_eq!(
        choose(&spec(16, 8192, 8192, 128)).unwrap().dequant,
        W4Dequant::Bytes
    );
}

#[test]
fn w4a16_pairs_validation_refuses_tampered_text() {
    let s = spec(5, 1024, 1024, 128);
    let mut c = choose(&s).unwrap();
    c.dequant = W4Dequant::Pairs;
    let plan = plan_for(&s, &c).unwrap();
    let text = emitted_text(&s, &c, &plan).unwrap();
    validate_w4a16(&s, &c, &plan, &text).expect("the untouched text validates");
    // The byte scheme's text under the pair scheme's semantics: every B register would be the
    // wrong nibbles for the mma's k order.
    let mut cb = c;
    cb.dequant = W4Dequant::Bytes;
    let bytes_text = emitted_text(&s, &cb, &plan).unwrap();
    validate_w4a16(&s, &cb, &plan, &bytes_text).expect("bytes validates as bytes");
    let e = validate_w4a16(&s, &c, &plan, &bytes_text)
        .expect_err("the byte schedule under pairs")
        .to_string();
    assert!(e.contains("translation validation failed"), "{e}");
    let cases: Vec<(&str, Tamper)> = vec![
        (
            "pair k with bit 4 set",
            Box::new(|t| t.a_pr_k = "(x % 8 / 2) * 32 + (x % 2) * 16".into()),
        ),
        (
            "pairs overlap",
            Box::new(|t| t.a_pr_row = "x / 8 % 8".into()),
        ),
        (
            "pairs in k order (no interleave)",
            Box::new(|t| t.a_pr_k = "(x % 8) * 16".into()),
        ),
        (
            "pieces in byte order",
            Box::new(|t| {
                for l in t.schedule.iter_mut() {
                    *l = l.replace(", 0, 2);", ", 0, 1);");
                }
            }),
        ),
        (
            "pieces swapped",
            Box::new(|t| edit_first_mma(t, ", 0, 0, 0, 2);", ", 0, 2, 0, 0);")),
        ),
    ];
    assert_tampers_refused(&s, &c, &plan, &text, cases);
}

/// A split-K configuration (two W buffers).
fn split_k(bn: i64, splits: i64, cluster: i64, dequant: W4Dequant) -> W4a16Config {
    W4a16Config {
        bn,
        splits,
        depth: 2,
        cluster,
        dequant,
        kwarps: 1,
        cwarps: 0,
        aslots: 0,
    }
}

/// A K-group configuration (two W buffers).
fn kgroup(bn: i64, kwarps: i64, cwarps: i64, aslots: i64, dequant: W4Dequant) -> W4a16Config {
    W4a16Config {
        bn,
        splits: 1,
        depth: 2,
        cluster: 1,
        dequant,
        kwarps,
        cwarps,
        aslots,
    }
}

#[test]
fn w4a16_kgroup_ctas_emit_and_validate() {
    for (s, c) in [
        (
            spec(16, 8192, 8192, 128),
            kgroup(128, 8, 2, 4, W4Dequant::Bytes),
        ),
        (
            spec(1, 8192, 8192, 128),
            kgroup(128, 8, 1, 2, W4Dequant::Pairs),
        ),
        (
            spec(3, 4096, 14336, 256),
            kgroup(128, 4, 4, 3, W4Dequant::Bytes),
        ),
        (
            spec(5, 4096, 4096, 128),
            kgroup(256, 8, 2, 2, W4Dequant::Pairs),
        ),
        (
            spec(16, 384, 640, 128),
            kgroup(128, 5, 1, 3, W4Dequant::Pairs),
        ),
        (
            spec(9, 256, 256, 128),
            kgroup(256, 2, 4, 4, W4Dequant::Bytes),
        ),
    ] {
        let k = emit_w4a16_with(&s, &c).unwrap_or_else(|e| panic!("{s:?} {c:?}: {e}"));
        assert_eq!(k.grid, s.n / (32 * c.cwarps));
        assert!(k.source.contains("#define LC_KGROUP 1"));
        assert!(k
            .source
            .contains(&format!("#define LC_THREADS {}", 32 * c.cwarps * c.kwarps)));
        assert!(k.source.contains("#define LC_KG_TC(b, t) "));
        // no workspace: the launcher allocates nothing for K-group CTAs
        assert!(k.source.contains("#if !LC_CLUSTER_REDUCE && !LC_KGROUP"));
        assert!(k.validation.accumulator_cells > (s.n * c.kwarps) as u64);
    }
    // The split-K kernel says LC_KGROUP 0 and keeps its workspace path.
    let k = emit_w4a16_with(
        &spec(16, 8192, 8192, 128),
        &choose_split_k(&spec(16, 8192, 8192, 128)).unwrap(),
    )
    .unwrap();
    assert!(k.source.contains("#define LC_KGROUP 0"));
    assert!(!k.source.contains("LC_KG_TC(b, t) ("));
}

#[test]
fn w4a16_kgroup_refuses_bad_configurations() {
    let s = spec(16, 8192, 8192, 128);
    for (c, want) in [
        (kgroup(128, 9, 2, 4, W4Dequant::Bytes), "K-warps"),
        (kgroup(128, 8, 3, 4, W4Dequant::Bytes), "column"),
        (kgroup(128, 8, 2, 5, W4Dequant::Bytes), "slots"),
        (kgroup(128, 8, 2, 1, W4Dequant::Bytes), "slots"),
        (
            W4a16Config {
                splits: 2,
                ..kgroup(128, 8, 2, 4, W4Dequant::Bytes)
            },
            "splits",
        ),
        (
            W4a16Config {
                cluster: 2,
                ..kgroup(128, 8, 2, 4, W4Dequant::Bytes)
            },
            "cluster",
        ),
        (kgroup(128, 6, 2, 4, W4Dequant::Bytes), "superblocks"),
        (
            W4a16Config {
                kwarps: 1,
                ..kgroup(128, 8, 2, 4, W4Dequant::Bytes)
            },
            "K-group",
        ),
    ] {
        let e = emit_w4a16_with(&s, &c).unwrap_err().to_string();
        assert!(e.contains(want), "{c:?}: {e}");
    }
}

#[test]
fn w4a16_kgroup_tampers_are_refused() {
    for (s, c) in [
        (
            spec(16, 8192, 8192, 128),
            kgroup(128, 8, 2, 4, W4Dequant::Bytes),
        ),
        (
            spec_i(16, 8192, 8192, 128),
            kgroup(128, 8, 2, 4, W4Dequant::Pairs),
        ),
        (
            spec(1, 1024, 2048, 128),
            kgroup(128, 4, 1, 2, W4Dequant::Pairs),
        ),
    ] {
        let plan = plan_for(&s, &c).unwrap();
        let text = emitted_text(&s, &c, &plan).unwrap();
        validate_w4a16(&s, &c, &plan, &text).unwrap();
        let gt = 32 * c.cwarps;
        let halves = 128 / gt;
        let mut cases: Vec<(&str, Tamper)> = vec![
            (
                "tile of the next CTA",
                Box::new(move |t| t.kg_tile = format!("(b + 1) / {halves}")),
            ),
            (
                "plan threads shifted by one lane",
                Box::new(move |t| t.kg_tc = format!("(b % {halves}) * {gt} + (t + 1) % {gt}")),
            ),
            (
                "plan thread from the CTA thread (not the group thread)",
                Box::new(move |t| t.kg_tc = format!("(b % {halves}) * {gt} + t % {}", 2 * gt)),
            ),
            (
                "K-warps by warp",
                Box::new(|t| t.kg_kw = "t / 32 % 8".into()),
            ),
            (
                "K-range one superblock off",
                Box::new(|t| t.kg_k0 = format!("{} + 128", t.kg_k0)),
            ),
            (
                "A rows 8..15 never staged",
                Box::new(|t| t.kg_a_row = "c / 16 % 8".into()),
            ),
            (
                "A chunk half a chunk off",
                Box::new(|t| t.kg_a_k = "c % 16 * 8 + 4".into()),
            ),
            (
                "partials of two K-warps share slots",
                Box::new(move |t| t.kg_p_off = format!("(w % 2 * 16 + v) * {gt} + p")),
            ),
            (
                "reduction on odd values",
                Box::new(move |t| t.kg_r_v = format!("x / {gt} * 2 + 1")),
            ),
            (
                "reduction pairs repeat a thread",
                Box::new(move |t| t.kg_r_p = format!("x % {gt} / 2")),
            ),
        ];
        if !a_kperm(s.packing, c.dequant) {
            // A staged in k order from one pointer (the pairs' staging of the sequential
            // packing addresses each chunk pair itself)
            cases.push((
                "A chunk step one row short",
                Box::new(move |t| t.kg_a_istep -= s.k),
            ));
            cases.push((
                "A chunk step half a chunk off",
                Box::new(|t| t.kg_a_istep += 4),
            ));
        }
        if c.cwarps == 1 {
            // with one column warp the K-warps-by-warp tamper is the identity: replace it
            cases.retain(|(w, _)| *w != "K-warps by warp");
            cases.push(("K-warps halved", Box::new(|t| t.kg_kw = "t / 64".into())));
        }
        assert_tampers_refused(&s, &c, &plan, &text, cases);
    }
}

/// TensorRT-LLM's packing, from its own two statements (cutlass_preprocessors.cpp and the
/// kernels that undo it): `permute_B_rows_for_mixed_gemm` gives a word the k order
/// "0 1 8 9 16 17 24 25" (then 2 3 10 11 ... for the next word of the 32), and
/// `add_bias_and_interleave_int4s_inplace` stores a word as
/// "[elt_7 elt_5 elt_3 elt_1 elt_6 elt_4 elt_2 elt_0]" (highest nibble first). The nibble of
/// (n, k) inside its word, derived from those strings alone, is what the packed layout says
/// for every (n, k) of a 16 x 512 W; the words themselves are where the sequential packing
/// (the module's documented formula) puts them.
#[test]
fn interleaved_packing_is_tensorrt_llms_nibble_order() {
    let row_order: Vec<i64> = "0 1 8 9 16 17 24 25"
        .split(' ')
        .map(|x| x.parse().unwrap())
        .collect();
    let stored: Vec<i64> = "[elt_7 elt_5 elt_3 elt_1 elt_6 elt_4 elt_2 elt_0]"
        .trim_matches(|c| c == '[' || c == ']')
        .split(' ')
        .rev() // nibble 0 first
        .map(|e| e.trim_start_matches("elt_").parse().unwrap())
        .collect();
    let (n_ext, k_ext) = (16i64, 512i64);
    let parse = |p: W4Packing| match layout::Layout::parse(&packed_layout(p, n_ext, k_ext), None)
        .unwrap()
    {
        layout::Layout::Cute(c) => c,
        other => panic!("{other:?}"),
    };
    let (il, sq) = (parse(W4Packing::Interleaved), parse(W4Packing::Sequential));
    for n in 0..n_ext {
        for k in 0..k_ext {
            // the module's formula: k = k0 + 2 k1 + 4 k2 + 8 k3 + 32 kb + 128 ks
            let (k0, k1, k2, k3, kb, ks) =
                (k % 2, k / 2 % 2, k / 4 % 2, k / 8 % 4, k / 32 % 4, k / 128);
            let seq = k0
                + 32 * k1
                + 512 * k2
                + 2 * k3
                + 8 * kb
                + 1024 * ks
                + 64 * (n % 8)
                + 8 * k_ext * (n / 8);
            assert_eq!(
                sq.eval(&[n_ext, k_ext], &[n, k]).unwrap(),
                seq,
                "({n}, {k})"
            );
            // this word's first k, and which element of the word k is
            let base = k - k0 - 8 * k3;
            let elt = row_order.iter().position(|&d| base + d == k).unwrap() as i64;
            let nibble = stored.iter().position(|&e| e == elt).unwrap() as i64;
            let want = seq - seq % 8 + nibble;
            assert_eq!(
                il.eval(&[n_ext, k_ext], &[n, k]).unwrap(),
                want,
                "({n}, {k})"
            );
            // and the nibble pair (p, p + 4) is two consecutive k: (8 p, 8 p + 1) of the word
            assert_eq!(nibble % 4, k3, "({n}, {k})");
            assert_eq!(nibble / 4, k0, "({n}, {k})");
        }
    }
}

#[test]
fn interleaved_packing_defaults_to_pairs_in_k_order_and_validates() {
    // Every M at 8192^2 (K-group CTAs) and the split-K shapes: nibble pairs, the mma over k in
    // order, A staged by cp.async (no interleave).
    for m in [1, 2, 4, 8, 16] {
        let c = choose(&spec_i(m, 8192, 8192, 128)).unwrap();
        assert_eq!((c.dequant, c.kwarps), (W4Dequant::Pairs, 8), "M = {m}");
        assert_eq!(c.cwarps, if m <= 4 { 1 } else { 2 }, "M = {m}");
    }
    assert_eq!(
        choose_split_k(&spec_i(16, 8192, 8192, 128))
            .unwrap()
            .dequant,
        W4Dequant::Pairs
    );
    for (s, c) in [
        (spec_i(16, 8192, 8192, 128), None),
        (spec_i(1, 8192, 8192, 128), None),
        (spec_i(16, 14336, 4096, 128), None),
        (spec_i(7, 4096, 14336, 256), None),
        (spec_i(3, 384, 640, 128), None),
        (
            spec_i(5, 1024, 1024, 128),
            Some(split_k(256, 8, 1, W4Dequant::Pairs)),
        ),
        (
            spec_i(16, 384, 640, 128),
            Some(kgroup(128, 5, 1, 3, W4Dequant::Pairs)),
        ),
    ] {
        let c = c.unwrap_or_else(|| choose(&s).unwrap());
        let kern = emit_w4a16_with(&s, &c).unwrap_or_else(|e| panic!("{s:?}: {e}"));
        let src = &kern.source;
        for want in [
            "#define LC_DQ_PAIRS 1\n",
            "#define LC_A_KPERM 0\n",
            "#define LC_W_PACK 1\n",
            "#define LC_A_CP_K(t, j)",
            "nibbles 0..7 hold k' + 0, 8, 16, 24, 1, 9, 17, 25",
        ] {
            assert!(src.contains(want), "{s:?}: {want}");
        }
        assert!(!src.contains("#define LC_A_PR_K("), "{s:?}");
        // A B register is the nibble pair (p, p + 4) holding k (2c, 2c + 1) of a k-step: the
        // pieces of the byte schedule (k-step 0 of a word: pairs 0 and 1; k-step 1: 2 and 3).
        assert!(src.contains("LC_W4_MMA(0, 0, 0, 0, 0, 0, 1);"), "{s:?}");
        assert!(src.contains("LC_W4_MMA(0, 1, 0, 0, 2, 0, 3);"), "{s:?}");
        // The same synthesized layouts as the sequential packing (the plan sees words in k
        // order), but a certificate of its own: its program names the kernel's packing and the
        // nibble order the dequantization undoes (session 24's audit: both packings had one
        // certificate, which named neither).
        let seq = W4a16Spec {
            packing: W4Packing::Sequential,
            ..s
        };
        let (mine, other) = (
            plan_for(&s, &c).unwrap().certificate,
            plan_for(&seq, &c).unwrap().certificate,
        );
        // The kernel's certificate is the plan's with the kernel bound to it.
        let mut bound: certify::synthesis::SynthesisCertificate =
            serde_json::from_str(&kern.certificate_json).unwrap();
        assert_eq!(kern.digest, bound.digest);
        bound.kernel = None;
        assert_eq!(bound.seal().digest, mine.digest);
        assert_ne!(mine.digest, other.digest);
        assert_eq!(mine.tensors, other.tensors);
        assert_eq!(mine.claims, other.claims);
        let text = mine.source.clone().unwrap();
        assert!(
            text.contains("packing is Interleaved") && text.contains("[0, 2, 4, 6, 1, 3, 5, 7]"),
            "{text}"
        );
        // The result is stored as f16, as the kernel stores it.
        let c_g = mine.tensors.iter().find(|t| t.name == "c_g").unwrap();
        assert_eq!(c_g.dtype, "f16");
    }
    // Bytes of the interleaved packing are k and k + 8: refused.
    let e = emit_w4a16_with(
        &spec_i(16, 8192, 8192, 128),
        &split_k(128, 8, 1, W4Dequant::Bytes),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("interleaved packing"), "{e}");
}

#[test]
fn interleaved_packing_validation_refuses_the_sequential_text_and_tampers() {
    let s = spec_i(5, 1024, 1024, 128);
    let c = choose(&s).unwrap();
    let plan = plan_for(&s, &c).unwrap();
    let text = emitted_text(&s, &c, &plan).unwrap();
    validate_w4a16(&s, &c, &plan, &text).expect("the untouched text validates");
    // The same configuration's text for the sequential packing reads the wrong nibbles.
    let seq = W4a16Spec {
        packing: W4Packing::Sequential,
        ..s
    };
    let seq_text = emitted_text(&seq, &c, &plan).unwrap();
    assert!(validate_w4a16(&s, &c, &plan, &seq_text).is_err());
    assert!(validate_w4a16(&seq, &c, &plan, &text).is_err());
    let cases: Vec<(&str, Tamper)> = vec![
        (
            "W offset: k0 at the sequential stride",
            Box::new(|t| t.w_goff = t.w_goff.replace("(k % 2) * 4", "(k % 2) * 1")),
        ),
        (
            "W offset: k3 at the sequential stride",
            Box::new(|t| t.w_goff = t.w_goff.replace("(k / 8 % 4) * 1", "(k / 8 % 4) * 2")),
        ),
        (
            "pair 1 for pair 2",
            Box::new(|t| edit_first_mma(t, ", 0, 1);", ", 0, 2);")),
        ),
        ("W vector step", Box::new(|t| t.w_vstep /= 2)),
        ("scale vector step", Box::new(|t| t.s_vstep = 0)),
        (
            "pair 0 for pair 1",
            Box::new(|t| edit_first_mma(t, "0, 0, 0, 0, 0, 1);", "0, 0, 0, 0, 0, 0);")),
        ),
    ];
    assert_tampers_refused(&s, &c, &plan, &text, cases);
}

/// The certificate's capacity claim of every kind of W4A16 CTA is the kernel's
/// `LC_SMEM_BYTES` (A's superblocks, the f32 partials reusing them, 1 KiB of slack) against
/// the budget: sm80's limit by default, or the one given (session 26's audit: the limit was a
/// hard-coded 227 KiB and the claim counted one superblock).
#[test]
fn w4a16_capacity_claim_is_the_kernels_allocation_within_its_budget() {
    use certify::synthesis::{SynthClaim, MAX_SMEM_BUDGET, SM80_SMEM_LIMIT};
    let s = spec_i(16, 8192, 8192, 128);
    for (c, bytes) in [
        // K-range 1024: 8 superblocks of 4096 bytes; workspace reduction, no partials.
        (split_k(128, 8, 1, W4Dequant::Pairs), 8 * 4096 + 1024),
        // The cluster reduction's 16 x 128 f32 partial (8192 bytes) is smaller than the ring.
        (split_k(128, 8, 8, W4Dequant::Pairs), 8 * 4096 + 1024),
        // K-group: 8 K-warps x 4 slots; partials of 8 K-warps x 64 threads x 16 f32.
        (kgroup(128, 8, 2, 4, W4Dequant::Pairs), 32 * 4096 + 1024),
    ] {
        for budget in [None, Some(MAX_SMEM_BUDGET)] {
            let s = W4a16Spec {
                smem_limit: budget,
                ..s
            };
            let k = emit_w4a16_with(&s, &c).unwrap_or_else(|e| panic!("{c:?}: {e}"));
            assert_eq!(k.smem_bytes, bytes, "{c:?}");
            assert!(k
                .source
                .contains(&format!("#define LC_SMEM_BYTES {bytes}\n")));
            let cert = certify::synthesis::check(&k.certificate_json).unwrap();
            let limit = budget.unwrap_or(SM80_SMEM_LIMIT);
            assert!(
                cert.claims.contains(&SynthClaim::Capacity { bytes, limit }),
                "{c:?}: {:?}",
                cert.claims
                    .iter()
                    .find(|c| matches!(c, SynthClaim::Capacity { .. }))
            );
            assert!(k
                .source
                .contains(&format!("within a budget of {limit} bytes")));
        }
    }
    // A budget the allocation does not fit is refused, naming both.
    let small = W4a16Spec {
        smem_limit: Some(100_000),
        ..s
    };
    let e = emit_w4a16_with(&small, &kgroup(128, 8, 2, 4, W4Dequant::Pairs))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("K-group CTA: 132096 bytes of shared memory; the budget is 100000"),
        "{e}"
    );
    // The budget also bounds the CTAs per SM the kernel is compiled for.
    let c = split_k(128, 8, 1, W4Dequant::Pairs);
    let threads_bound = 4 * 128 / c.threads();
    let by = |b: i64| (b / (8 * 4096 + 1024)).clamp(1, threads_bound);
    assert_eq!(c.min_ctas(&s), by(SM80_SMEM_LIMIT));
    let h = W4a16Spec {
        smem_limit: Some(MAX_SMEM_BUDGET),
        ..s
    };
    assert_eq!(c.min_ctas(&h), by(MAX_SMEM_BUDGET));
}
