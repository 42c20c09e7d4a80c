//! certify's data-movement claim on planned copies: every plan is proved by both deciders (the
//! compositional parts and the whole-kernel simulation), its certificate re-checks, and
//! mutated plans (a shared-memory stride, a TV stride, an address form, the tile) are refuted
//! by both deciders alike, never proved.

use certify::movement::{check, prove_staged_copy, MovementCertificate, StagedCopy};
use certify::Policy;
use layout::Layout;
use proptest::prelude::*;
use solver::certificate::staged_copy;
use solver::{plan_copy, CopyOptions, Dtype};

fn parse(s: &str) -> Layout {
    Layout::parse(s, None).expect("test layouts parse")
}

fn cute(s: &str) -> layout::cute::CuteLayout {
    match parse(s) {
        Layout::Cute(l) => l,
        other => panic!("{} is not CuTe", other.print()),
    }
}

fn transpose_64() -> StagedCopy {
    plan(
        "(64,64):(64,1)",
        "(64,64):(1,64)",
        &[64, 64],
        Dtype::F32,
        &CopyOptions::default(),
    )
}

fn plan(src: &str, dst: &str, shape: &[i64], dtype: Dtype, opts: &CopyOptions) -> StagedCopy {
    let p = plan_copy(&parse(src), &parse(dst), shape, dtype, opts).unwrap();
    staged_copy(&p).unwrap()
}

/// `text` with its `k`-th integer after the first `):(` (a stride) replaced by `f(old)`.
fn mutate_stride(text: &str, k: usize, f: impl Fn(i64) -> i64) -> Option<String> {
    let start = text.find("):(")? + 3;
    let end = text[start..].find(" ->").map_or(text.len(), |e| start + e);
    let mut out = text[..start].to_string();
    let mut seen = 0;
    let mut changed = false;
    let body = &text[start..end];
    let mut i = 0;
    let bytes = body.as_bytes();
    while i < bytes.len() {
        if bytes[i].is_ascii_digit() {
            let j = (i..bytes.len())
                .find(|&j| !bytes[j].is_ascii_digit())
                .unwrap_or(bytes.len());
            let n: i64 = body[i..j].parse().ok()?;
            if seen == k {
                out.push_str(&f(n).to_string());
                changed = true;
            } else {
                out.push_str(&body[i..j]);
            }
            seen += 1;
            i = j;
        } else {
            out.push(bytes[i] as char);
            i += 1;
        }
    }
    out.push_str(&text[end..]);
    changed.then_some(out)
}

#[test]
fn planned_copies_are_proved_by_both_deciders_and_their_certificates_check() {
    let cases = [
        (
            "(128,64):(64,1)",
            "(128,64):(1,128)",
            vec![128, 64],
            Dtype::F32,
        ),
        (
            "(64,128):(128,1)",
            "(64,128):(1,64)",
            vec![64, 128],
            Dtype::F16,
        ),
        ("(64,64):(64,1)", "(64,64):(64,1)", vec![64, 64], Dtype::I8),
        (
            "((32,4),(32,4)):((1,1024),(32,4096))",
            "(128,128):(128,1)",
            vec![128, 128],
            Dtype::F32,
        ),
        (
            "S[(8,16,32):(512@m,32@m,1@m)]",
            "(8,16,32):(1,8,128)",
            vec![8, 16, 32],
            Dtype::Bf16,
        ),
    ];
    for (src, dst, shape, dtype) in cases {
        for opts in [
            CopyOptions::default(),
            CopyOptions::default().without_swizzle(),
            CopyOptions {
                vector: Some(1),
                tile_bytes: 64,
                ..CopyOptions::default()
            },
        ] {
            let p = plan_copy(&parse(src), &parse(dst), &shape, dtype, &opts).unwrap();
            // plan_copy proved the claim; its certificate re-decides from the text alone.
            let cert = p.certificate.movement.clone().unwrap();
            assert_eq!(cert.verdict, "proved", "{src} -> {dst}");
            assert_eq!(
                cert.deciders,
                [
                    ("parts".to_string(), "proved".to_string()),
                    ("simulation".to_string(), "proved".to_string())
                ]
            );
            assert_eq!(
                cert.staged_copy().unwrap().smem,
                staged_copy(&p).unwrap().smem
            );
            check(&cert.to_json()).unwrap();
        }
    }
}

#[test]
fn a_large_plan_is_proved_by_its_parts() {
    let c = plan(
        "(8192,8192):(8192,1)",
        "(8192,8192):(1,8192)",
        &[8192, 8192],
        Dtype::F32,
        &CopyOptions::default(),
    );
    let r = prove_staged_copy(&c, &Policy::default()).unwrap();
    assert_eq!(r.verdict, "proved", "{:?}", r.detail);
    assert_eq!(r.deciders, [("parts".to_string(), "proved".to_string())]);
    let grid = &r.parts[3];
    assert_eq!(grid.name, "grid partitions the tensor");
    assert!(
        grid.evidence.contains("normal-form: proved"),
        "{}",
        grid.evidence
    );
    // The swizzled tile is F2-linear: the tile stage is also decided by ranks.
    assert!(
        r.parts[5].evidence.contains("f2 ranks: proved"),
        "{}",
        r.parts[5].evidence
    );
}

/// Odd sizes above the enumeration limit: the destination's injectivity and the grid's
/// bijectivity are decided by the strided structure (normal form), not by z3 or enumeration.
#[test]
fn odd_sized_permutations_are_proved_by_their_structure() {
    for (src, dst, shape, dtype) in [
        (
            "(3000,3000):(3000,1)",
            "(3000,3000):(1,3000)",
            vec![3000, 3000],
            Dtype::F32,
        ),
        (
            "(8191,4097):(4097,1)",
            "(8191,4097):(1,8191)",
            vec![8191, 4097],
            Dtype::F32,
        ),
        (
            "(48,1000,1000):(1000000,1000,1)",
            "(48,1000,1000):(1000000,1,1000)",
            vec![48, 1000, 1000],
            Dtype::F16,
        ),
    ] {
        let c = plan(src, dst, &shape, dtype, &CopyOptions::default());
        let r = prove_staged_copy(&c, &Policy::default()).unwrap();
        assert_eq!(r.verdict, "proved", "{src} -> {dst}: {:?}", r.detail);
        for k in [2, 3] {
            assert!(
                r.parts[k].evidence.contains("normal-form: proved"),
                "{src}: {}",
                r.parts[k].evidence
            );
        }
    }
}

#[test]
fn tampered_certificates_fail() {
    let c = transpose_64();
    let r = prove_staged_copy(&c, &Policy::default()).unwrap();
    let cert = MovementCertificate::new(&c, &r);
    // An edit without a new digest.
    let mut edited = cert.clone();
    edited.smem = "(64,64):(1,32)".into();
    assert!(check(&serde_json::to_string(&edited).unwrap())
        .unwrap_err()
        .contains("digest"));
    // A re-sealed lie: a broken shared layout claimed proved.
    edited.digest = edited.compute_digest();
    let e = check(&serde_json::to_string(&edited).unwrap()).unwrap_err();
    assert!(e.contains("re-deciding gives refuted"), "{e}");
    // Session 24's audit: re-sealed edits of what `check` prints but did not re-derive.
    let resealed = |f: &dyn Fn(&mut MovementCertificate)| {
        let mut c = cert.clone();
        f(&mut c);
        c.digest = c.compute_digest();
        check(&serde_json::to_string(&c).unwrap()).unwrap_err()
    };
    let e = resealed(&|c| c.deciders = vec![("parts".into(), "proved".into())]);
    assert!(e.contains("lists the deciders"), "{e}");
    let e = resealed(&|c| {
        c.deciders.push(("z3".into(), "proved".into()));
    });
    assert!(e.contains("lists the deciders"), "{e}");
    let e = resealed(&|c| c.parts[0].statement = "S == transpose(S)".into());
    assert!(e.contains("its statement is"), "{e}");
    // A grid far beyond the tensor (10^12 CTAs, all masked but 4): the claim is still true and
    // decided by its parts; the simulation is not run on a box that large (it took hours), and
    // the re-sealed certificate that lists it is refused at once.
    let started = std::time::Instant::now();
    let mut huge = c.clone();
    huge.grid = [1_000_000, 1_000_000, 1];
    let r = prove_staged_copy(&huge, &Policy::default()).unwrap();
    assert_eq!(r.verdict, "proved");
    assert_eq!(
        r.deciders,
        vec![("parts".to_string(), "proved".to_string())]
    );
    check(&MovementCertificate::new(&huge, &r).to_json()).unwrap();
    let e = resealed(&|c| {
        c.grid = Some([1_000_000, 1_000_000, 1]);
        c.parts = r.parts.clone();
    });
    assert!(e.contains("lists the deciders"), "{e}");
    assert!(started.elapsed().as_secs() < 60, "{:?}", started.elapsed());
}

#[test]
fn broken_plans_are_refuted_with_a_wrong_coordinate() {
    let good = plan(
        "(64,64):(64,1)",
        "(64,64):(1,64)",
        &[64, 64],
        Dtype::F32,
        &CopyOptions {
            tile_bytes: 128,
            ..CopyOptions::default()
        },
    );
    let refuted = |c: &StagedCopy, part: &str| {
        let r = prove_staged_copy(c, &Policy::default()).unwrap();
        assert_eq!(r.verdict, "refuted", "{part}");
        let failed: Vec<&str> = r
            .parts
            .iter()
            .filter(|p| p.verdict == "refuted")
            .map(|p| p.name.as_str())
            .collect();
        assert!(failed.contains(&part), "{part}: {failed:?}");
        let why = r.detail.unwrap();
        assert!(why.starts_with("logical ["), "{why}");
    };
    // Two cells share a shared-memory slot.
    let mut c = good.clone();
    c.smem = parse("(32,32):(1,16)");
    refuted(&c, "tile stage is the identity");
    // The kernel's destination form is not the destination.
    let mut c = good.clone();
    c.dst_form = cute("(64,64):(1,65)");
    refuted(&c, "destination form");
    // A guard past the tensor's bounds: the edge tiles would touch memory outside it.
    let mut c = good.clone();
    c.shape = vec![64, 48];
    c.src = parse("(64,48):(48,1)");
    c.dst = parse("(64,48):(1,64)");
    c.src_form = cute("(64,48):(48,1)");
    c.dst_form = cute("(64,48):(1,64)");
    refuted(&c, "guards select the tensor");
    // The right guard but a grid that stops short (floor division): elements never written.
    c.guard = [48, 64];
    c.grid = [1, 2, 1];
    refuted(&c, "guards select the tensor");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Random plans are proved; each stride mutation of the shared layout, a TV layout or an
    /// address form is either bad input or decided alike by both deciders (the function
    /// errors on disagreement), and one that changes the tile's routing is never proved.
    #[test]
    fn mutations_are_decided_alike(
        a in 3u32..=6, b in 3u32..=6, dt in 0usize..3, swz in any::<bool>(),
        vec in prop::option::of(0u32..=2), which in 0usize..5, k in 0usize..6,
        bump in prop::sample::select(vec![1i64, 2, -1]),
    ) {
        let (m, n) = (1i64 << a, 1i64 << b);
        let dtype = [Dtype::F32, Dtype::F16, Dtype::I8][dt];
        let opts = CopyOptions {
            swizzle: swz,
            tile_bytes: 64,
            threads: Some(64),
            vector: vec.map(|v| 1i64 << v),
            tile: None,
            store_major: false,
        };
        let src = format!("({m},{n}):({n},1)");
        let dst = format!("({m},{n}):(1,{m})");
        let good = plan(&src, &dst, &[m, n], dtype, &opts);
        let r = prove_staged_copy(&good, &Policy::default()).unwrap();
        prop_assert_eq!(r.verdict, "proved");
        let f = |x: i64| (x + bump).max(0);
        let mut c = good.clone();
        let text = match which {
            0 => c.smem.print(),
            1 => c.load.to_string(),
            2 => c.store.to_string(),
            3 => c.src_form.to_string(),
            _ => c.dst_form.to_string(),
        };
        let Some(t) = mutate_stride(&text, k, f) else { return Ok(()) };
        let Ok(l) = Layout::parse(&t, None) else { return Ok(()) };
        match (which, l) {
            (0, l) => c.smem = l,
            (1, Layout::Tv(tv)) => c.load = tv,
            (2, Layout::Tv(tv)) => c.store = tv,
            (3, Layout::Cute(l)) => c.src_form = l,
            (4, Layout::Cute(l)) => c.dst_form = l,
            _ => return Ok(()),
        }
        match prove_staged_copy(&c, &Policy::default()) {
            Err(e) => prop_assert!(!e.to_string().contains("disagree"), "{}", e),
            Ok(r) => {
                prop_assert!(r.verdict != "unknown");
                if r.verdict == "refuted" {
                    let why = r.detail.unwrap_or_default();
                    prop_assert!(why.starts_with("logical ["), "{}", why);
                }
            }
        }
    }
}

#[test]
fn bad_claims_are_errors_naming_the_piece() {
    let good = transpose_64();
    let err = |c: &StagedCopy| {
        prove_staged_copy(c, &Policy::default())
            .unwrap_err()
            .to_string()
    };
    let mut c = good.clone();
    c.shape = vec![1 << 40, 1 << 40];
    assert!(err(&c).contains("overflows"), "{}", err(&c));
    let mut c = good.clone();
    c.tile_dims = [0, 0];
    assert!(err(&c).contains("tile dims"), "{}", err(&c));
    let mut c = good.clone();
    c.tile = [1 << 20, 1 << 20];
    assert!(err(&c).contains("no shared memory holds it"), "{}", err(&c));
    let mut c = good.clone();
    c.smem = parse("(8,8):(1,8)");
    assert!(err(&c).contains("shared layout"), "{}", err(&c));
    let mut c = good.clone();
    c.z_dim = Some(2);
    assert!(err(&c).contains("z dim"), "{}", err(&c));
}
