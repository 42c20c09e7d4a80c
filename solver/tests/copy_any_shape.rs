//! Copies for every shape (issue 15): odd and non-power-of-two extents plan 256-thread CTAs
//! (512 where odd pitches narrow the accesses below 16 bytes) with the widest vectors their
//! layouts allow, a ceil-div grid and predicated edge tiles, and the
//! movement claim, covering the masked cells, is proved by certify at any size; plans whose
//! guard or grid is wrong are refuted, and a re-sealed certificate that says otherwise fails
//! `check`.

use certify::movement::{check, prove_staged_copy, MovementCertificate, StagedCopy};
use certify::Policy;
use layout::Layout;
use solver::certificate::staged_copy;
use solver::{plan_copy, CopyOptions, CopyPlan, Dtype};

fn parse(s: &str) -> Layout {
    Layout::parse(s, None).expect("test layouts parse")
}

fn plan(src: &str, dst: &str, shape: &[i64], dtype: Dtype) -> CopyPlan {
    plan_copy(
        &parse(src),
        &parse(dst),
        shape,
        dtype,
        &CopyOptions::default(),
    )
    .unwrap_or_else(|e| panic!("{src} -> {dst} over {shape:?}: {e}"))
}

/// Source, destination, shape, dtype, expected load and store vectors.
type Case<'a> = (&'a str, &'a str, &'a [i64], Dtype, [i64; 2]);

fn ceil(a: i64, b: i64) -> i64 {
    (a + b - 1) / b
}

/// The shapes of the issue, padded pitches and 2-D/3-D permutations with odd extents: each
/// plans with 256 threads (512 where a vector is narrower than 16 bytes), the expected vectors, the ceil-div grid, and a proved movement
/// claim whose parts include the guard; its certificate re-checks from the text.
#[test]
fn every_shape_plans_full_ctas_and_certifies() {
    let cases: &[Case] = &[
        (
            "(1001,999):(999,1)",
            "(1001,999):(1,1001)",
            &[1001, 999],
            Dtype::F32,
            [1, 1],
        ),
        (
            "(1000,1000):(1000,1)",
            "(1000,1000):(1,1000)",
            &[1000, 1000],
            Dtype::F32,
            [4, 4],
        ),
        (
            "(3000,3000):(3000,1)",
            "(3000,3000):(1,3000)",
            &[3000, 3000],
            Dtype::F32,
            [4, 4],
        ),
        (
            "(8191,4097):(4097,1)",
            "(8191,4097):(1,8191)",
            &[8191, 4097],
            Dtype::F32,
            [1, 1],
        ),
        (
            "(12288,6000):(6000,1)",
            "(12288,6000):(1,12288)",
            &[12288, 6000],
            Dtype::Bf16,
            [8, 8],
        ),
        (
            "(48,1000,1000):(1000000,1000,1)",
            "(48,1000,1000):(1000000,1,1000)",
            &[48, 1000, 1000],
            Dtype::F16,
            [8, 8],
        ),
        // Padded pitches: 16-byte vectors although the extents are not powers of two.
        (
            "(1000,1000):(1024,1)",
            "(1000,1000):(1,1008)",
            &[1000, 1000],
            Dtype::F32,
            [4, 4],
        ),
        // An odd extent under an aligned pitch: the vector must divide the extent.
        (
            "(1000,999):(1024,1)",
            "(1000,999):(1,1000)",
            &[1000, 999],
            Dtype::F16,
            [1, 8],
        ),
        // 3-D permutation (2,1,0) with odd extents.
        (
            "(30,50,70):(3500,70,1)",
            "(30,50,70):(1,30,1500)",
            &[30, 50, 70],
            Dtype::F32,
            [2, 2],
        ),
        // Batched transpose with a ragged edge along one axis only.
        (
            "(3,200,96):(19200,96,1)",
            "(3,200,96):(19200,1,200)",
            &[3, 200, 96],
            Dtype::Bf16,
            [8, 8],
        ),
    ];
    for &(src, dst, shape, dtype, [vl, vs]) in cases {
        let p = plan(src, dst, shape, dtype);
        let full = 16 / dtype.bytes();
        let want = if vl.min(vs) < full { 512 } else { 256 };
        assert_eq!(p.threads, want, "{src}: {:?}", p.tile);
        assert_eq!((p.load.vec, p.store.vec), (vl, vs), "{src}");
        let [f, s] = p.tile_dims;
        assert_eq!(
            p.grid[..2],
            [ceil(shape[f], p.tile[0]), ceil(shape[s], p.tile[1])],
            "{src}"
        );
        assert_eq!(p.guard, [shape[f], shape[s]]);
        for c in &p.certificate.claims {
            assert!(c.verdict == "proved", "{src}: {} {}", c.name, c.evidence);
        }
        let cert = p.certificate.movement.clone().unwrap();
        assert_eq!(cert.verdict, "proved");
        assert!(cert
            .parts
            .iter()
            .any(|x| x.name == "guards select the tensor" && x.verdict == "proved"));
        check(&cert.to_json()).unwrap_or_else(|e| panic!("{src}: {e}"));
    }
}

#[test]
fn ragged_plans_are_marked_and_exact_ones_are_not() {
    let odd = plan(
        "(1001,999):(999,1)",
        "(1001,999):(1,1001)",
        &[1001, 999],
        Dtype::F32,
    );
    assert!(odd.ragged());
    assert!(odd.active(&[1000, 998]));
    assert!(!odd.active(&[1001, 0]) && !odd.active(&[0, 999]));
    let even = plan(
        "(256,256):(256,1)",
        "(256,256):(1,256)",
        &[256, 256],
        Dtype::F32,
    );
    assert!(!even.ragged());
}

fn ragged() -> StagedCopy {
    // 100 x 70 f32 transpose: tiles overhang both extents.
    let p = plan(
        "(100,70):(70,1)",
        "(100,70):(1,100)",
        &[100, 70],
        Dtype::F32,
    );
    assert!(p.ragged());
    staged_copy(&p).unwrap()
}

fn refuted_part(c: &StagedCopy) -> (Vec<String>, String) {
    let r = prove_staged_copy(c, &Policy::default()).unwrap();
    assert_eq!(r.verdict, "refuted");
    let failed = r
        .parts
        .iter()
        .filter(|p| p.verdict == "refuted")
        .map(|p| p.name.clone())
        .collect();
    (failed, r.detail.unwrap_or_default())
}

/// A guard past the tensor (the padded box), one short of it, and a floor-div grid are each
/// refuted by both deciders: the parts name the guard, the simulation a logical coordinate.
#[test]
fn wrong_edge_plans_are_refuted() {
    let good = ragged();
    let r = prove_staged_copy(&good, &Policy::default()).unwrap();
    assert_eq!(r.verdict, "proved", "{:?}", r.detail);
    assert_eq!(r.deciders.len(), 2, "both deciders ran");

    let mut c = good.clone();
    c.guard = [c.grid[0] * c.tile[0], c.grid[1] * c.tile[1]];
    let (failed, why) = refuted_part(&c);
    assert_eq!(failed, ["guards select the tensor"]);
    assert!(why.contains("outside the tensor"), "{why}");

    let mut c = good.clone();
    c.guard[1] -= 1;
    let (failed, why) = refuted_part(&c);
    assert_eq!(failed, ["guards select the tensor"]);
    assert!(why.contains("never written"), "{why}");

    let mut c = good.clone();
    c.grid[0] -= 1;
    let (failed, why) = refuted_part(&c);
    assert_eq!(failed, ["guards select the tensor"]);
    assert!(why.contains("never written"), "{why}");
}

/// A store stage whose thread rows all take the first row stores those cells several times
/// (and misses the others): refuted by both deciders, never proved.
#[test]
fn a_cell_stored_twice_is_refuted() {
    use layout::cute::{CuteLayout, IntTuple, TvLayout};
    let good = ragged();
    let m = good.store.layout().flat_modes();
    assert_eq!(m.len(), 4, "{}", good.store);
    assert!(
        m[1].0 > 1,
        "the store has several rows of threads: {}",
        good.store
    );
    let nested =
        |a: [i64; 4]| IntTuple::Tuple(vec![IntTuple::flat(&a[..2]), IntTuple::flat(&a[2..])]);
    let layout = CuteLayout::new(
        nested([m[0].0, m[1].0, m[2].0, m[3].0]),
        nested([m[0].1, 0, m[2].1, m[3].1]),
    )
    .unwrap();
    let mut c = good.clone();
    c.store = TvLayout::new(layout, good.store.tile().to_vec()).unwrap();
    let r = prove_staged_copy(&c, &Policy::default()).unwrap();
    assert_eq!(r.verdict, "refuted", "{}", c.store);
    let stage = r
        .parts
        .iter()
        .find(|p| p.name == "tile stage is the identity")
        .unwrap();
    assert_eq!(stage.verdict, "refuted");
    assert!(stage.evidence.contains("second time"), "{}", stage.evidence);
}

/// A re-sealed certificate whose guard was widened to the padded box says `proved`; `check`
/// re-decides it and refuses.
#[test]
fn a_resealed_wrong_guard_fails_check() {
    let c = ragged();
    let r = prove_staged_copy(&c, &Policy::default()).unwrap();
    let mut cert = MovementCertificate::new(&c, &r);
    check(&cert.to_json()).unwrap();
    cert.guard = Some([c.grid[0] * c.tile[0], c.grid[1] * c.tile[1]]);
    cert.digest = cert.compute_digest();
    let e = check(&cert.to_json()).unwrap_err();
    assert!(e.contains("re-deciding gives refuted"), "{e}");
}

/// A version-1 certificate (no grid, no guard fields) still checks, read as version 1 meant it.
#[test]
fn version_1_certificates_still_check() {
    let p = plan("(64,64):(64,1)", "(64,64):(1,64)", &[64, 64], Dtype::F32);
    let mut cert = p.certificate.movement.clone().unwrap();
    cert.version = 1;
    cert.grid = None;
    cert.guard = None;
    // Version 1 had no guard part.
    cert.parts.retain(|x| x.name != "guards select the tensor");
    cert.digest = cert.compute_digest();
    check(&cert.to_json()).unwrap();
    // A version-2 certificate must carry both.
    cert.version = 2;
    cert.digest = cert.compute_digest();
    assert!(check(&cert.to_json()).is_err());
}

/// Session 26's audit: a copy with fewer than two dimensions of extent > 1 (1x999, 999x1, 1x1,
/// 2x1, 1x1x7) did not plan ("needs two dimensions of extent > 1 to tile"). Its missing tile
/// axes are unit dimensions: a line of up to a square tile's cells, or one cell. Each plans,
/// and its movement claim is proved by both deciders (the parts, and the simulation of the
/// whole kernel over every element) and re-checks from the certificate's text.
#[test]
fn lines_and_single_cells_plan_and_certify_every_element() {
    // (source, destination, shape, dtype, tile, grid, threads, load and store vectors)
    type Line<'a> = (
        &'a str,
        &'a str,
        &'a [i64],
        Dtype,
        [i64; 2],
        [i64; 3],
        i64,
        [i64; 2],
    );
    let cases: &[Line] = &[
        (
            "(1,999):(999,1)",
            "(1,999):(1,1)",
            &[1, 999],
            Dtype::F32,
            [1024, 1],
            [1, 1, 1],
            512,
            [1, 1],
        ),
        (
            "(999,1):(1,1)",
            "(999,1):(1,999)",
            &[999, 1],
            Dtype::F32,
            [1024, 1],
            [1, 1, 1],
            512,
            [1, 1],
        ),
        (
            "(1,1):(1,1)",
            "(1,1):(1,1)",
            &[1, 1],
            Dtype::F32,
            [1, 1],
            [1, 1, 1],
            1,
            [1, 1],
        ),
        (
            "(2,1):(1,1)",
            "(2,1):(1,2)",
            &[2, 1],
            Dtype::F32,
            [2, 1],
            [1, 1, 1],
            1,
            [2, 2],
        ),
        (
            "(1,1,7):(7,7,1)",
            "(1,1,7):(1,1,1)",
            &[1, 1, 7],
            Dtype::F32,
            [8, 1],
            [1, 1, 1],
            8,
            [1, 1],
        ),
        // Long lines: up to a square tile's cells (64 x 64 f32), float4; halves at a destination
        // stride of 2: 8 in, 1 out.
        (
            "(1,65536):(65536,1)",
            "(1,65536):(1,1)",
            &[1, 65536],
            Dtype::F32,
            [4096, 1],
            [16, 1, 1],
            256,
            [4, 4],
        ),
        (
            "(4096,1,1):(1,1,1)",
            "(4096,1,1):(2,1,1)",
            &[4096, 1, 1],
            Dtype::F16,
            [4096, 1],
            [1, 1, 1],
            512,
            [8, 1],
        ),
    ];
    for &(src, dst, shape, dtype, tile, grid, threads, [vl, vs]) in cases {
        let p = plan(src, dst, shape, dtype);
        assert_eq!(
            (p.tile, p.grid, p.threads),
            (tile, grid, threads),
            "{src} over {shape:?}"
        );
        assert_eq!((p.load.vec, p.store.vec), (vl, vs), "{src}");
        let [f, s] = p.tile_dims;
        assert_eq!(p.guard, [shape[f], shape[s]]);
        assert_eq!(shape[s], 1, "{src}: the second axis is a unit dimension");
        assert!(
            !p.store_major,
            "{src}: a line's CTAs are walked by blockIdx.x"
        );
        let cert = p.certificate.movement.clone().unwrap();
        assert_eq!(cert.verdict, "proved", "{src}");
        assert_eq!(
            cert.deciders,
            [
                ("parts".to_string(), "proved".to_string()),
                ("simulation".to_string(), "proved".to_string())
            ],
            "{src}"
        );
        let checked = check(&cert.to_json()).unwrap_or_else(|e| panic!("{src}: {e}"));
        assert_eq!(checked.verdict, "proved");
    }
}
