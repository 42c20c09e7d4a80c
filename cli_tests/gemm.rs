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

/// Emits a kernel and its certificate into `dir`; returns their paths.
fn emit(dir: &std::path::Path, name: &str, args: &[&str]) -> (String, String) {
    let k = dir.join(format!("{name}.cu")).to_str().unwrap().to_string();
    let c = dir
        .join(format!("{name}.json"))
        .to_str()
        .unwrap()
        .to_string();
    let mut all = vec!["gen", "gemm"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["-o", &k, "--cert", &c]);
    let o = laycert(&all);
    assert_eq!(o.status.code(), Some(0), "{}", common::stderr(&o));
    (k, c)
}

#[test]
fn a_kernel_certificate_binds_its_problem_and_its_text() {
    let tmp = common::scratch();
    let dir = tmp.path();
    // Every path: sm90, sm80, sm90 routed to sm80 (odd K), W4A16, N below the tile.
    let cases: [(&str, &[&str], &str); 5] = [
        (
            "sm90",
            &["--m", "1000", "--n", "1000", "--k", "1000"],
            "1000 x 1000 x 1000",
        ),
        (
            "sm80",
            &["--m", "512", "--n", "384", "--k", "256", "--target", "sm80"],
            "512 x 384 x 256",
        ),
        (
            "oddk",
            &["--m", "100", "--n", "200", "--k", "301"],
            "100 x 200 x 301",
        ),
        (
            "w4",
            &[
                "--m",
                "1",
                "--n",
                "4096",
                "--k",
                "4096",
                "--dtype",
                "f16",
                "--weights",
                "int4",
            ],
            "1 x 4096 x 4096",
        ),
        (
            "tiny",
            &["--m", "7", "--n", "13", "--k", "17"],
            "7 x 13 x 17",
        ),
    ];
    let mut files = Vec::new();
    for (name, args, mnk) in cases {
        let (k, c) = emit(dir, name, args);
        let o = laycert(&["check", &c, "--kernel", &k]);
        let out = common::stdout(&o);
        assert_eq!(o.status.code(), Some(0), "{name}: {out}");
        assert_eq!(first_line(&o), "valid", "{name}");
        assert!(
            out.contains(&format!("M x N x K = {mnk}; {k} is that kernel's text")),
            "{name}: {out}"
        );
        files.push((k, c));
    }
    // Another kernel's text, or this one edited anywhere, is refused (exit 1).
    let (k0, c0) = &files[0];
    let (k1, _) = &files[1];
    let o = laycert(&["check", c0, "--kernel", k1]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        first_line(&o).contains("names certificate") && first_line(&o).contains("not this one"),
        "{}",
        first_line(&o)
    );
    let text = std::fs::read_to_string(k0).unwrap();
    let edited = dir.join("edited.cu");
    let edits: [(&str, &str, &str); 4] = [
        (
            "#define LC_K 1000",
            "#define LC_K 1024",
            "defines LC_K as 1024, the certificate as 1000",
        ),
        (
            "row * 1000 + col",
            "row * 1024 + col",
            "it was edited after it was emitted",
        ),
        (
            "row < 1000 && col < 1000",
            "row < 1000 && col <= 1000",
            "it was edited after it was emitted",
        ),
        (
            "certificate digest ",
            "certificate digest: ",
            "does not name a certificate",
        ),
    ];
    for (from, to, want) in edits {
        assert!(text.contains(from), "{from}");
        std::fs::write(&edited, text.replacen(from, to, 1)).unwrap();
        let o = laycert(&["check", c0, "--kernel", edited.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(1), "{from}");
        assert!(
            first_line(&o).starts_with("invalid: kernel ") && first_line(&o).contains(want),
            "{from}: {}",
            first_line(&o)
        );
    }
    // A forged kernel whose hash and constants are re-sealed into its certificate (audit 33:
    // the hash alone was taken on trust): the text is re-emitted and compared.
    {
        use certify::synthesis::{kernel, SynthesisCertificate};
        let mut cert: SynthesisCertificate =
            serde_json::from_str(&std::fs::read_to_string(c0).unwrap()).unwrap();
        let forged = text.replacen("row * 1000 + col", "row * 1024 + col", 1);
        let b = cert.kernel.as_mut().unwrap();
        b.text_sha256 = kernel::text_sha256(&forged, &cert.digest).unwrap();
        let old = cert.digest.clone();
        let cert = cert.seal();
        let forged = forged.replacen(&old, &cert.digest, 1);
        let (fc, fk) = (dir.join("forged.json"), dir.join("forged.cu"));
        std::fs::write(&fc, cert.to_json()).unwrap();
        std::fs::write(&fk, &forged).unwrap();
        let o = laycert(&["check", fc.to_str().unwrap()]);
        assert_eq!(
            first_line(&o),
            "valid",
            "the certificate alone is consistent"
        );
        let o = laycert(&[
            "check",
            fc.to_str().unwrap(),
            "--kernel",
            fk.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(1));
        assert!(
            first_line(&o).contains("not the one laycert emits for its problem and configuration")
                && first_line(&o).contains("kernel.text_sha256"),
            "{}",
            first_line(&o)
        );
    }
    // --kernel with a certificate that binds none, or of another kind: said, not `valid`.
    let prog = dir.join("p.tile");
    std::fs::write(&prog, "program p\nthreads 32\nx = global_view(f32, [32], 32:1)\ny = global_view(f32, [32], 32:1)\nr = register_tensor(f32, [32])\ncopy(x, r)\ncopy(r, y)\n").unwrap();
    let pc = dir.join("p.json");
    let o = laycert(&[
        "synth",
        prog.to_str().unwrap(),
        "--cert",
        pc.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", common::stdout(&o));
    let o = laycert(&["check", pc.to_str().unwrap(), "--kernel", k0]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        first_line(&o).contains("binds no kernel"),
        "{}",
        first_line(&o)
    );
    let eq = dir.join("eq.json");
    let o = laycert(&[
        "equiv",
        "8:1",
        "(2,4):(1,2)",
        "--cert",
        eq.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0));
    let o = laycert(&["check", eq.to_str().unwrap(), "--kernel", k0]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        common::stderr(&o).contains("--kernel"),
        "{}",
        common::stderr(&o)
    );
    let o = laycert(&[
        "check",
        c0,
        "--kernel",
        dir.join("missing.cu").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn a_tampered_kernel_binding_is_invalid_even_when_resealed() {
    use certify::synthesis::SynthesisCertificate;
    let tmp = common::scratch();
    let dir = tmp.path();
    let (_, c) = emit(dir, "r", &["--m", "1000", "--n", "999", "--k", "1000"]);
    let (wk, w) = emit(
        dir,
        "w",
        &[
            "--m",
            "16",
            "--n",
            "4096",
            "--k",
            "4096",
            "--dtype",
            "f16",
            "--weights",
            "int4",
        ],
    );
    let read = |p: &str| -> SynthesisCertificate {
        serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
    };
    let (good, w4) = (read(&c), read(&w));
    type Edit = Box<dyn Fn(&mut SynthesisCertificate)>;
    let b = |f: fn(&mut certify::synthesis::kernel::KernelBinding)| -> Edit {
        Box::new(move |x: &mut SynthesisCertificate| f(x.kernel.as_mut().unwrap()))
    };
    let cases: Vec<(&str, &SynthesisCertificate, Edit, &str)> = vec![
        (
            "C's row pitch",
            &good,
            b(|k| k.operands[2].layout = "(1000,999):(1000,1)".into()),
            "layout (1000,999):(1000,1), the problem's is (1000,999):(999,1)",
        ),
        (
            "A's shape",
            &good,
            b(|k| k.operands[0].shape = vec![1000, 999]),
            "shape [1000, 999], the problem's is [1000, 1000]",
        ),
        (
            "M without LC_M",
            &good,
            b(|k| {
                k.m = 2000;
                k.operands[0].shape[0] = 2000;
                k.operands[0].layout = "(2000,1000):(1000,1)".into();
                k.operands[2].shape[0] = 2000;
                k.operands[2].layout = "(2000,999):(999,1)".into()
            }),
            "LC_M is 1000, the certificate's is 2000",
        ),
        (
            "a view left out",
            &good,
            b(|k| {
                k.operands.pop();
            }),
            "tensors are [\"A\", \"B\", \"C\"]",
        ),
        (
            "a view twice",
            &good,
            b(|k| k.operands[1].view = "a_g".into()),
            "a_g",
        ),
        (
            "the tile rows",
            &good,
            b(|k| {
                k.defines.insert("LC_BM".into(), 64);
            }),
            "LC_BM is 64, the certificate's is 128",
        ),
        (
            "the shared bytes",
            &good,
            b(|k| {
                *k.defines.get_mut("LC_SMEM_BYTES").unwrap() += 1024;
            }),
            "LC_SMEM_BYTES is",
        ),
        (
            "a constant's name",
            &good,
            b(|k| {
                k.defines.insert("M".into(), 1);
            }),
            "not a kernel constant",
        ),
        (
            "the text hash",
            &good,
            b(|k| k.text_sha256 = "xyz".into()),
            "not a SHA-256",
        ),
        (
            "the problem kind",
            &good,
            b(|k| k.problem = "conv".into()),
            "binds `gemm` and `w4a16`",
        ),
        ("a zero extent", &good, b(|k| k.k = 0), "each in 1..=2^31"),
        (
            "W4A16's scale group",
            &w4,
            b(|k| k.group = Some(256)),
            "shape [4096, 32], the problem's is [4096, 16]",
        ),
        (
            "W4A16's packing",
            &w4,
            b(|k| {
                k.operands[1].layout =
                    k.operands[1]
                        .layout
                        .replacen("(1,32,512,2,", "(2,32,512,1,", 1)
            }),
            "the problem's is ((8,512),(2,2,2,4,4,32)):((64,32768),(1,32,512,2,8,1024))",
        ),
        (
            "W4A16 without a group",
            &w4,
            b(|k| k.group = None),
            "names its scale group",
        ),
    ];
    let more: Vec<(&str, &SynthesisCertificate, Edit, &str)> = vec![
        (
            "bounds that leave out the problem's cells (audit 33: only cell (0,0) was compared)",
            &good,
            Box::new(|x: &mut SynthesisCertificate| {
                for t in x.tensors.iter_mut().filter(|t| t.scope == "global") {
                    t.bounds = Some(vec![1, 1]);
                }
            }),
            "leave out cells inside the problem",
        ),
        (
            "the stage count left out (audit 33)",
            &good,
            b(|k| {
                k.defines.remove("LC_STAGES");
            }),
            "do not define LC_STAGES",
        ),
        (
            "the shared bytes left out (audit 33)",
            &w4,
            b(|k| {
                k.defines.remove("LC_SMEM_BYTES");
            }),
            "do not define LC_SMEM_BYTES",
        ),
        (
            "the emitter record",
            &good,
            b(|k| k.emitter = serde_json::json!(1)),
            "not a JSON object",
        ),
        (
            "another problem's emitter record (audit 34)",
            &good,
            b(|k| k.emitter["spec"]["k"] = serde_json::json!(8)),
            "the emitter record is not of this gemm problem of 1000 x 999 x 1000",
        ),
        (
            "B loaded into the mma's a side: C^T (audit 34)",
            &good,
            Box::new(|x: &mut SynthesisCertificate| {
                let src = x.source.take().unwrap();
                x.source = Some(src.replacen(
                    "copy(a_g, a_s)\ncopy(b_g, b_s)",
                    "copy(b_g, a_s)\ncopy(a_g, b_s)",
                    1,
                ));
                x.ops[0].inputs = vec!["b_g".into()];
                x.ops[1].inputs = vec!["a_g".into()];
            }),
            "the mma's a operand a_s is computed from {\"b_g\"}",
        ),
        (
            "a 1 x 1 x 1 problem under views of pitch 1000 (audit 34)",
            &good,
            b(|k| {
                (k.m, k.n, k.k) = (1, 1, 1);
                for o in k.operands.iter_mut() {
                    (o.shape, o.layout) = (vec![1, 1], "(1,1):(1,1)".into());
                }
                for d in ["LC_M", "LC_N", "LC_K"] {
                    k.defines.insert(d.into(), 1);
                }
                for d in ["m", "n", "k"] {
                    k.emitter["spec"][d] = serde_json::json!(1);
                }
            }),
            "at cell [1, 0] the view holds element 1000",
        ),
    ];
    let path = dir.join("bad.json");
    for (what, base, edit, want) in cases.into_iter().chain(more) {
        let mut bad = base.clone();
        edit(&mut bad);
        assert_ne!(&bad, base, "{what}: the edit changed nothing");
        let bad = bad.seal();
        std::fs::write(&path, bad.to_json()).unwrap();
        let o = laycert(&["check", path.to_str().unwrap()]);
        let line = first_line(&o);
        assert_eq!(o.status.code(), Some(1), "{what}: {line}");
        assert!(
            line.starts_with("invalid: kernel binding: ") && line.contains(want),
            "{what}: {line}"
        );
    }
    // A shared layout of 2^40 cells over a 128 x 64 tile (audit 33: it was tabulated before the
    // shape was checked, and the allocation aborted the process and Python with it).
    let mut huge = good.clone();
    for t in huge.tensors.iter_mut().filter(|t| t.name == "a_s") {
        t.layout = "Sw<3,3,3> o ((8, 2147483648), (64, 1)):((64, 512), (1, 8192))".into();
    }
    std::fs::write(&path, huge.seal().to_json()).unwrap();
    let o = common::laycert_within(20, &["check", path.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", common::stderr(&o));
    assert!(
        first_line(&o).contains("does not fit"),
        "{}",
        first_line(&o)
    );
    // An emitter record whose split count wraps `128 * splits` (audit 34: a division by zero
    // panicked while re-emitting): refused, not a crash.
    let mut wrap = w4.clone();
    wrap.kernel.as_mut().unwrap().emitter["config"]["splits"] = serde_json::json!(1i64 << 57);
    let wrap = wrap.seal();
    let text = std::fs::read_to_string(&wk)
        .unwrap()
        .replacen(&w4.digest, &wrap.digest, 1);
    let wk2 = dir.join("w2b.cu");
    std::fs::write(&wk2, text).unwrap();
    std::fs::write(&path, wrap.to_json()).unwrap();
    let o = laycert(&[
        "check",
        path.to_str().unwrap(),
        "--kernel",
        wk2.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", common::stderr(&o));
    assert!(
        first_line(&o).contains("splits 144115188075855872"),
        "{}",
        first_line(&o)
    );
}

/// A certificate that names a key twice in one object says two things in one place: bad input
/// (audit 34: an emitter record's first `spec` named another problem; serde keeps the last).
#[test]
fn a_certificate_with_a_repeated_key_is_bad_input() {
    let tmp = common::scratch();
    let (_, c) = emit(tmp.path(), "d", &["--m", "64", "--n", "64", "--k", "64"]);
    let text = std::fs::read_to_string(&c).unwrap();
    let twice = text.replacen(
        "\"emitter\": {",
        "\"emitter\": {\n      \"kernel\": \"w4a16\",",
        1,
    );
    assert_ne!(twice, text);
    std::fs::write(&c, twice).unwrap();
    let o = laycert(&["check", &c]);
    assert_eq!(o.status.code(), Some(2), "{}", common::stdout(&o));
    assert!(
        common::stderr(&o).contains("`kernel.emitter.kernel` is given twice in one object"),
        "{}",
        common::stderr(&o)
    );
}
