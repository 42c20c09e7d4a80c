//! `laycert gen gemm` and `laycert gpu bench gemm`: first lines, exit codes, the certificate
//! round trip through `laycert check`, bad input, and the visible SKIP without a GPU.

mod common;
use common::{first_line, laycert};

#[test]
fn gen_gemm_writes_a_validated_kernel_whose_certificate_checks() {
    let tmp = common::scratch();
    let dir = tmp.path();
    let (k, cert) = (dir.join("k.cu"), dir.join("k.json"));
    let o = laycert(&[
        "gen",
        "gemm",
        "--m",
        "1000",
        "--n",
        "1000",
        "--k",
        "1000",
        "--dtype",
        "f16",
        "-o",
        k.to_str().unwrap(),
        "--cert",
        cert.to_str().unwrap(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let first = first_line(&o);
    assert!(
        first.starts_with("wrote ") && first.contains("certificate sha256:"),
        "{first}"
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("validated:"), "{out}");
    let source = std::fs::read_to_string(&k).unwrap();
    assert!(source.contains("wgmma.mma_async.sync.aligned.m64n"));
    assert!(source.contains("f16 operands"));
    let c = laycert(&["check", cert.to_str().unwrap()]);
    assert_eq!(
        c.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&c.stdout)
    );
    assert_eq!(first_line(&c), "valid");
    // A tampered certificate (the mma atom's shape) is refused.
    let text = std::fs::read_to_string(&cert).unwrap();
    let bad = text.replacen("64,", "32,", 1);
    assert_ne!(bad, text);
    std::fs::write(&cert, bad).unwrap();
    let c = laycert(&["check", cert.to_str().unwrap()]);
    assert_ne!(
        c.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&c.stdout)
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn gen_gemm_json_is_one_object_with_the_split_k_choice() {
    let o = laycert(&[
        "--json",
        "gen",
        "gemm",
        "--m",
        "128",
        "--n",
        "4096",
        "--k",
        "4096",
        "-o",
        "/dev/null",
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(text.lines().count(), 1, "{text}");
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert!(v["config"]["splits"].as_i64().unwrap() > 1, "{v}");
    assert!(v["validation"]["split_points"].as_u64().unwrap() > 0, "{v}");
}

#[test]
fn bad_gemm_problems_are_errors_naming_what() {
    for (args, what) in [
        (
            vec!["--m", "64", "--n", "64", "--k", "1001", "--splits", "2"],
            "--splits configures the sm90 path, and K = 1001",
        ),
        (vec!["--m", "0", "--n", "64", "--k", "64"], "M = 0"),
        (
            vec!["--m", "64", "--n", "99999999999", "--k", "64"],
            "N = 99999999999",
        ),
        (
            vec!["--m", "64", "--n", "64", "--k", "64", "--dtype", "f32"],
            "--dtype",
        ),
        (
            vec!["--m", "64", "--n", "64", "--k", "64", "--target", "sm70"],
            "--target",
        ),
        (
            vec!["--m", "4096", "--n", "4096", "--k", "4096", "--stages", "9"],
            "shared memory",
        ),
        (
            vec!["--m", "4096", "--n", "4096", "--k", "4096", "--bk", "48"],
            "k-block 48",
        ),
        (
            vec!["--m", "128", "--n", "4096", "--k", "4096", "--splits", "3"],
            "splits 3",
        ),
    ] {
        let mut full = vec!["gen", "gemm"];
        full.extend(args.iter().copied());
        full.extend(["-o", "/dev/null"]);
        let o = laycert(&full);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(what), "{args:?}: {err}");
        assert!(err.lines().count() <= 3, "{err}");
    }
}

#[test]
fn gpu_bench_gemm_runs_or_skips_visibly() {
    let o = laycert(&[
        "gpu", "bench", "gemm", "--m", "256", "--n", "256", "--k", "256",
    ]);
    let first = first_line(&o);
    match o.status.code() {
        Some(3) => {
            assert!(first.starts_with("SKIP (no CUDA device)"), "{first}");
            println!("{first}");
        }
        Some(0) => assert!(first.starts_with("correct: "), "{first}"),
        other => panic!(
            "exit {other:?}: {first} {}",
            String::from_utf8_lossy(&o.stderr)
        ),
    }
    // The copy benchmark keeps its flags at `gpu bench`.
    let o = laycert(&[
        "gpu",
        "bench",
        "--src",
        "(64,64):(64,1)",
        "--dst",
        "(64,64):(1,64)",
        "--shape",
        "64,64",
        "--dtype",
        "f32",
    ]);
    assert!(
        matches!(o.status.code(), Some(0) | Some(3)),
        "{}",
        first_line(&o)
    );
}

#[test]
fn gpu_bench_gemm_refuses_the_w4a16_kernel_it_does_not_run() {
    // It benchmarked the plain f16 kernel and reported it as the W4A16 one (session 24).
    let o = laycert(&[
        "gpu",
        "bench",
        "gemm",
        "--m",
        "16",
        "--n",
        "128",
        "--k",
        "128",
        "--weights",
        "int4",
        "--dtype",
        "f16",
        "--target",
        "sm80",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", first_line(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("bench/gpu/w4a16.py"), "{err}");
}

#[test]
fn no_swizzle_gives_the_sm80_baseline_and_predicts_its_conflicts() {
    let tmp = common::scratch();
    let dir = tmp.path();
    let (sw, unsw) = (dir.join("sw.cu"), dir.join("unsw.cu"));
    for (path, extra) in [(&sw, None), (&unsw, Some("--no-swizzle"))] {
        let mut args = vec![
            "gen", "gemm", "--target", "sm80", "--m", "256", "--n", "256", "--k", "256", "--bk",
            "32",
        ];
        args.extend(extra);
        args.extend(["-o", path.to_str().unwrap()]);
        let o = laycert(&args);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let pred = |p: &std::path::Path, name: &str| -> (i64, i64) {
        let text = std::fs::read_to_string(p).unwrap();
        let line = text
            .lines()
            .find(|l| l.starts_with(&format!("// predicted: copy -> {name}:")))
            .unwrap_or_else(|| panic!("no prediction for {name}"))
            .to_string();
        let nums: Vec<i64> = line
            .split(|c: char| !c.is_ascii_digit())
            .filter(|s| !s.is_empty())
            .filter_map(|s| s.parse().ok())
            .collect();
        let n = nums.len();
        (nums[n - 2], nums[n - 1])
    };
    // The synthesized swizzle is conflict-free; the given row-major tile (64-byte rows at
    // --bk 32) conflicts 4 ways (8 ways at the default --bk 64: 128-byte rows).
    let (w, ideal) = pred(&sw, "a");
    assert_eq!(w, ideal);
    let (w, ideal) = pred(&unsw, "a");
    assert_eq!(w, 4 * ideal);
    let source = std::fs::read_to_string(&unsw).unwrap();
    assert!(
        source.contains("[given]")
            || source.contains("(128, 32):(32, 1)")
            || source.contains(":(32, 1)")
    );
    // sm90 has no unswizzled plan (TMA + wgmma need the canonical layouts).
    let o = laycert(&[
        "gen",
        "gemm",
        "--m",
        "256",
        "--n",
        "256",
        "--k",
        "256",
        "--no-swizzle",
        "-o",
        "/dev/null",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--no-swizzle"));
    let _ = std::fs::remove_dir_all(dir);
}
