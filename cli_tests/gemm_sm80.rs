//! `laycert gen gemm`: the sm80 path writes a kernel and a certificate `laycert check` accepts;
//! bad targets and extents exit 2.

mod common;
use common::{first_line, laycert};

fn tmp(dir: &tempfile::TempDir, name: &str) -> String {
    dir.path().join(name).to_str().unwrap().to_string()
}

#[test]
fn gen_gemm_sm80_writes_a_kernel_whose_certificate_checks() {
    let scratch = common::scratch();
    let (k, c) = (tmp(&scratch, "sm80.cu"), tmp(&scratch, "sm80.json"));
    let o = laycert(&[
        "gen", "gemm", "--m", "1000", "--n", "1000", "--k", "1000", "--dtype", "bf16", "--target",
        "sm80", "-o", &k, "--cert", &c,
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let line = first_line(&o);
    assert!(
        line.starts_with(&format!("wrote {k}: laycert_gemm (")),
        "{line}"
    );
    assert!(line.contains("certificate sha256:"), "{line}");
    let text = std::fs::read_to_string(&k).unwrap();
    assert!(text.starts_with("// laycert gemm (sm80): C[1000,1000]"));
    assert!(text.contains("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("fragment cells"), "{stdout}");
    let chk = laycert(&["check", &c]);
    assert_eq!(
        chk.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&chk.stdout)
    );
    assert_eq!(first_line(&chk), "valid");
}

#[test]
fn gen_gemm_refuses_an_unknown_target_with_exit_2() {
    let o = laycert(&[
        "gen", "gemm", "--m", "64", "--n", "64", "--k", "64", "--target", "sm70",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("expected sm80 or sm90"));
}

/// K not a multiple of 8 (rows no 16-byte load can read): the sm80 path loads A and B in 8- or
/// 4-byte cp.async chunks (K even) or stages them through registers (K odd), and `--target
/// sm90` (TMA cannot load such rows) runs that kernel, saying so; every certificate checks.
#[test]
fn gen_gemm_serves_k_not_a_multiple_of_8() {
    let scratch = common::scratch();
    for (target, k, load) in [
        ("sm80", "100", "a_s: cp.async.ca.shared.global [8 B]"),
        ("sm80", "999", "a_r: ld.global.b16"),
        ("sm90", "1002", "a_s: cp.async.ca.shared.global [4 B]"),
        ("sm90", "17", "a_r: ld.global.b16"),
    ] {
        let (kf, cf) = (tmp(&scratch, "k.cu"), tmp(&scratch, "k.json"));
        let o = laycert(&[
            "gen", "gemm", "--m", "200", "--n", "72", "--k", k, "--target", target, "-o", &kf,
            "--cert", &cf,
        ]);
        let out = String::from_utf8_lossy(&o.stdout);
        assert_eq!(o.status.code(), Some(0), "{target} K={k}: {out}");
        assert!(out.contains(&format!("copy -> {load}")), "{out}");
        assert_eq!(out.contains("note: K = "), target == "sm90", "{out}");
        let text = std::fs::read_to_string(&kf).unwrap();
        let staged = format!(
            "#define LC_REG_STAGED {}",
            i32::from(load.starts_with("a_r"))
        );
        assert!(text.contains(&staged), "{target} K={k}");
        assert!(text.starts_with("// laycert gemm (sm80)"), "{target} K={k}");
        assert_eq!(first_line(&laycert(&["check", &cf])), "valid");
    }
    // The sm90-only overrides do not apply to the path that serves the problem.
    let o = laycert(&[
        "gen",
        "gemm",
        "--m",
        "64",
        "--n",
        "64",
        "--k",
        "100",
        "--target",
        "sm90",
        "--cluster",
        "2",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--cluster configures the sm90 path"));
}

#[test]
fn gen_gemm_w4a16_writes_a_kernel_whose_certificate_checks() {
    let scratch = common::scratch();
    let (k, c) = (tmp(&scratch, "w4.cu"), tmp(&scratch, "w4.json"));
    let o = laycert(&[
        "gen",
        "gemm",
        "--m",
        "16",
        "--n",
        "1024",
        "--k",
        "2048",
        "--dtype",
        "f16",
        "--weights",
        "int4",
        "--group",
        "128",
        "-o",
        &k,
        "--cert",
        &c,
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let line = first_line(&o);
    assert!(
        line.starts_with(&format!("wrote {k}: laycert_w4a16 (")),
        "{line}"
    );
    let text = std::fs::read_to_string(&k).unwrap();
    assert!(text.contains("extern \"C\" int laycert_w4a16_launch("));
    assert!(text.contains("#define LC_GROUP 128\n"));
    let chk = laycert(&["check", &c]);
    assert_eq!(chk.status.code(), Some(0));
    assert_eq!(first_line(&chk), "valid");
}

#[test]
fn gen_gemm_w4a16_refuses_bf16_and_large_m_with_exit_2() {
    for (args, want) in [
        (vec!["--m", "16", "--dtype", "bf16"], "f16 activations"),
        (vec!["--m", "17", "--dtype", "f16"], "1..=16"),
        (
            vec!["--m", "4", "--dtype", "f16", "--dequant", "nibbles"],
            "expected bytes or pairs",
        ),
        (
            vec!["--m", "4", "--dtype", "f16", "--packing", "trt"],
            "expected interleaved or sequential",
        ),
        (
            vec!["--m", "4", "--dtype", "f16", "--dequant", "bytes"],
            "dequantization by bytes of the interleaved packing",
        ),
    ] {
        let mut all = vec![
            "gen",
            "gemm",
            "--n",
            "1024",
            "--k",
            "1024",
            "--weights",
            "int4",
        ];
        all.extend(args);
        let o = laycert(&all);
        assert_eq!(o.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&o.stderr).contains(want), "{want}");
    }
}

#[test]
fn gen_gemm_takes_tile_rows_and_warpgroups_and_refuses_what_the_body_cannot_run() {
    let scratch = common::scratch();
    let o = laycert(&[
        "gen",
        "gemm",
        "--m",
        "512",
        "--n",
        "512",
        "--k",
        "256",
        "--target",
        "sm80",
        "--bm",
        "128",
        "--bn",
        "128",
        "--warpgroups",
        "1",
        "-o",
        &tmp(&scratch, "t128.cu"),
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("tile 128x128x64, 4 stages, 1 consumer warpgroup(s)")
            && stdout.contains("128 threads"),
        "{stdout}"
    );
    for (target, extra, want) in [
        ("sm80", ["--warpgroups", "3"], "runs 4 or 8 warps"),
        ("sm80", ["--bm", "96"], "64, 128 or 256 rows"),
        ("sm90", ["--warpgroups", "1"], "each consumer owns 64 rows"),
    ] {
        let mut args = vec![
            "gen", "gemm", "--m", "512", "--n", "512", "--k", "256", "--target", target,
        ];
        args.extend(extra);
        let o = laycert(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(want), "{args:?}: {err}");
    }
}

#[test]
fn gen_gemm_w4a16_dequant_pairs_emits_the_interleaved_kernel() {
    // The default (the interleaved packing, nibble pairs over k in order), the sequential
    // packing (bytes by default; pairs over a k-permuted mma with A interleaved).
    for (extra, flag, note) in [
        (
            &[][..],
            "#define LC_DQ_PAIRS 1\n#define LC_A_KPERM 0\n#define LC_W_PACK 1\n",
            "(k and k + 1 in the interleaved packing); the mma runs over k in order",
        ),
        (
            &["--dequant", "pairs"][..],
            "#define LC_DQ_PAIRS 1\n#define LC_A_KPERM 0\n#define LC_W_PACK 1\n",
            "Dequantization by nibble pairs",
        ),
        (
            &["--packing", "sequential", "--dequant", "pairs"][..],
            "#define LC_DQ_PAIRS 1\n#define LC_A_KPERM 1\n#define LC_W_PACK 0\n",
            "interleaved in place",
        ),
        (
            &["--packing", "sequential"][..],
            "#define LC_DQ_PAIRS 0\n#define LC_A_KPERM 0\n#define LC_W_PACK 0\n",
            "Dequantization by bytes",
        ),
    ] {
        let mut args = vec![
            "gen",
            "gemm",
            "--m",
            "4",
            "--n",
            "1024",
            "--k",
            "1024",
            "--dtype",
            "f16",
            "--weights",
            "int4",
        ];
        args.extend_from_slice(extra);
        let o = laycert(&args);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(text.contains(flag) && text.contains(note), "{extra:?}");
    }
}

#[test]
fn gen_gemm_w4a16_kgroup_flags_choose_the_cta_and_bad_values_exit_2() {
    let scratch = common::scratch();
    let base = [
        "gen",
        "gemm",
        "--m",
        "16",
        "--n",
        "8192",
        "--k",
        "8192",
        "--dtype",
        "f16",
        "--weights",
        "int4",
        "-o",
    ];
    // (extra flags, the CTA the summary line names)
    for (extra, want) in [
        (vec![], "64 columns x all of K per CTA (2 column warps x 8 K-warps of 1024 k), 128 CTAs of 512 threads"),
        (vec!["--kwarps", "1"], "128 columns x K-range 1024 per CTA, 8 splits, 512 CTAs of 128 threads"),
        (vec!["--splits", "4"], "128 columns x K-range 2048 per CTA, 4 splits, 256 CTAs"),
        // --bn survives the switch to split-K
        (vec!["--bn", "256", "--splits", "8"], "256 columns x K-range 1024 per CTA, 8 splits, 256 CTAs"),
        (vec!["--bn", "256"], "64 columns x all of K per CTA"),
        (
            vec!["--kwarps", "4", "--cwarps", "4", "--aslots", "2"],
            "128 columns x all of K per CTA (4 column warps x 4 K-warps of 2048 k), 64 CTAs of 512 threads",
        ),
    ] {
        let path = tmp(&scratch, "kg.cu");
        let mut args: Vec<&str> = base.to_vec();
        args.push(&path);
        args.extend(extra.iter().copied());
        let o = laycert(&args);
        assert_eq!(o.status.code(), Some(0), "{extra:?}: {}", String::from_utf8_lossy(&o.stderr));
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(text.contains(want), "{extra:?}: {text}");
    }
    for (extra, want) in [
        (vec!["--kwarps", "9"], "K-warps"),
        (vec!["--kwarps", "0"], "kwarps 0"),
        (vec!["--splits", "0"], "splits 0"),
        (vec!["--kwarps", "8", "--cwarps", "3"], "column warps"),
        (vec!["--kwarps", "8", "--aslots", "5"], "slots"),
        (vec!["--kwarps", "8", "--cluster", "8"], "cluster"),
    ] {
        let mut args: Vec<&str> = base.to_vec();
        args.push("/dev/null");
        args.extend(extra.iter().copied());
        let o = laycert(&args);
        assert_eq!(o.status.code(), Some(2), "{extra:?}");
        assert!(
            String::from_utf8_lossy(&o.stderr).contains(want),
            "{extra:?}: {want}"
        );
    }
}

/// `#define NAME value` of an emitted kernel.
fn define(text: &str, name: &str) -> i64 {
    let key = format!("#define {name} ");
    text.lines()
        .find_map(|l| l.strip_prefix(&key))
        .unwrap_or_else(|| panic!("no {name}"))
        .trim()
        .parse()
        .unwrap()
}

/// The certificate's capacity claims: (bytes, limit).
fn capacity_claims(cert: &str) -> Vec<(i64, i64)> {
    let v: serde_json::Value = serde_json::from_str(cert).unwrap();
    v["claims"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["kind"] == "capacity")
        .map(|c| (c["bytes"].as_i64().unwrap(), c["limit"].as_i64().unwrap()))
        .collect()
}

/// Session 26's audit: `gen gemm --target sm80` emitted a 197632-byte kernel (128x256x64 in 4
/// stages) for a target whose CTAs get 166912 bytes, and its certificate's capacity claim
/// counted one stage (114688 bytes). The default now fits sm80, the header states the budget,
/// and the claim is the kernel's `LC_SMEM_BYTES` against it.
#[test]
fn gen_gemm_sm80_default_fits_sm80_and_certifies_the_kernels_shared_memory() {
    let scratch = common::scratch();
    let (k, c) = (tmp(&scratch, "k.cu"), tmp(&scratch, "g.json"));
    for shape in [
        ["8192", "8192", "8192"],
        ["4096", "4096", "4096"],
        ["1001", "999", "64"],
    ] {
        let o = laycert(&[
            "gen", "gemm", "--m", shape[0], "--n", shape[1], "--k", shape[2], "--target", "sm80",
            "-o", &k, "--cert", &c,
        ]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        let stdout = String::from_utf8_lossy(&o.stdout);
        assert!(
            stdout.contains("tile 128x256x64, 3 stages")
                && stdout.contains("148480 bytes of shared memory (budget 166912)"),
            "{shape:?}: {stdout}"
        );
        let text = std::fs::read_to_string(&k).unwrap();
        let bytes = define(&text, "LC_SMEM_BYTES");
        assert!(bytes <= 166912, "{shape:?}: {bytes}");
        assert_eq!(define(&text, "LC_STAGES"), 3);
        assert!(text.contains("within a budget of 166912 bytes (sm80's limit per CTA)"));
        let cert = std::fs::read_to_string(&c).unwrap();
        assert_eq!(capacity_claims(&cert), [(bytes, 166912)], "{shape:?}");
        let chk = laycert(&["check", &c]);
        assert_eq!(first_line(&chk), "valid", "{shape:?}");
    }
}

/// `--smem-limit 232448` (an H100/H200 CTA's 227 KiB) reproduces the 4-stage kernel the
/// benchmarks measured; an explicit configuration over the budget names the flag.
#[test]
fn gen_gemm_sm80_smem_limit_builds_the_kernel_for_a_larger_device() {
    let scratch = common::scratch();
    let (k, c) = (tmp(&scratch, "k.cu"), tmp(&scratch, "g.json"));
    let o = laycert(&[
        "gen",
        "gemm",
        "--m",
        "4096",
        "--n",
        "4096",
        "--k",
        "4096",
        "--target",
        "sm80",
        "--smem-limit",
        "232448",
        "-o",
        &k,
        "--cert",
        &c,
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("tile 128x256x64, 4 stages")
            && stdout.contains("197632 bytes of shared memory (budget 232448)"),
        "{stdout}"
    );
    let text = std::fs::read_to_string(&k).unwrap();
    assert_eq!(define(&text, "LC_SMEM_BYTES"), 197632);
    assert!(text.contains(
        "within a budget of 232448 bytes (given by --smem-limit; sm80's own limit is 166912)"
    ));
    let cert = std::fs::read_to_string(&c).unwrap();
    assert_eq!(capacity_claims(&cert), [(197632, 232448)]);
    assert_eq!(first_line(&laycert(&["check", &c])), "valid");
    let o = laycert(&[
        "gen", "gemm", "--m", "4096", "--n", "4096", "--k", "4096", "--target", "sm80", "--stages",
        "4", "-o", &k,
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("need 197632 bytes of shared memory; the budget is 166912 (--smem-limit"),
        "{err}"
    );
}

/// A budget no device has is bad input naming the flag and the range; one below every tile
/// names the smallest.
#[test]
fn gen_gemm_smem_limit_out_of_range_is_exit_2() {
    for (extra, v) in [
        (&["--target", "sm80"][..], "232449"),
        (&["--target", "sm80"][..], "0"),
        (&["--target", "sm90"][..], "-1"),
        (&["--target", "sm90"][..], "1000000"),
        (&["--dtype", "f16", "--weights", "int4"][..], "300000"),
    ] {
        let mut args = vec!["gen", "gemm", "--m", "16", "--n", "1024", "--k", "1024"];
        args.extend_from_slice(extra);
        args.extend(["--smem-limit", v, "-o", "/dev/null"]);
        let o = laycert(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.starts_with(&format!(
                "error: gemm: --smem-limit {v}: must be in 1..=232448"
            )),
            "{args:?}: {err}"
        );
    }
    let o = laycert(&[
        "gen",
        "gemm",
        "--m",
        "256",
        "--n",
        "256",
        "--k",
        "256",
        "--target",
        "sm80",
        "--smem-limit",
        "20000",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("no sm80 configuration fits a shared-memory budget of 20000 bytes"),
        "{err}"
    );
}

/// `laycert check` re-derives the capacity claim's bytes from the certified plan (its
/// allocation's stages of the tensors' tiles and element types) and its limit from the budget:
/// a claim edited down, a limit or budget edited up, or stages edited up is `invalid` even
/// with the digest re-sealed.
#[test]
fn check_refuses_a_tampered_capacity_claim() {
    use certify::synthesis::{SynthClaim, SynthesisCertificate};
    let scratch = common::scratch();
    let c = tmp(&scratch, "g.json");
    let o = laycert(&[
        "gen",
        "gemm",
        "--m",
        "4096",
        "--n",
        "4096",
        "--k",
        "4096",
        "--target",
        "sm80",
        "-o",
        "/dev/null",
        "--cert",
        &c,
    ]);
    assert_eq!(o.status.code(), Some(0));
    let good: SynthesisCertificate =
        serde_json::from_str(&std::fs::read_to_string(&c).unwrap()).unwrap();
    let edit_claim = |cert: &mut SynthesisCertificate, bytes: Option<i64>, limit: Option<i64>| {
        for k in cert.claims.iter_mut() {
            if let SynthClaim::Capacity { bytes: b, limit: l } = k {
                *b = bytes.unwrap_or(*b);
                *l = limit.unwrap_or(*l);
            }
        }
    };
    let stages = |cert: &mut SynthesisCertificate, n: i64| {
        for b in cert.smem.as_mut().unwrap().phases[0].iter_mut() {
            b.copies = n;
        }
    };
    type Edit = Box<dyn Fn(&mut SynthesisCertificate)>;
    let cases: Vec<(&str, Edit, &str)> = vec![
        (
            "bytes lowered to one stage's count",
            Box::new(move |x| edit_claim(x, Some(114688), None)),
            "the plan's shared memory takes 148480 bytes, the claim says 114688",
        ),
        (
            "limit raised",
            Box::new(move |x| edit_claim(x, None, Some(232448))),
            "no capacity claim at the kernel's budget of 166912 bytes",
        ),
        (
            "budget and limit raised, bytes kept",
            Box::new(move |x| {
                x.smem.as_mut().unwrap().budget = 300000;
                edit_claim(x, None, Some(300000))
            }),
            "a shared-memory budget of 300000 bytes",
        ),
        (
            "stages raised",
            Box::new(move |x| stages(x, 4)),
            "the plan's shared memory takes 197632 bytes, the claim says 148480",
        ),
        (
            "stages and bytes raised",
            Box::new(move |x| {
                stages(x, 4);
                edit_claim(x, Some(197632), None)
            }),
            "197632 bytes of shared memory exceed the budget of 166912",
        ),
        (
            "the epilogue tile dropped from the allocation",
            Box::new(move |x| {
                x.smem.as_mut().unwrap().phases.pop();
            }),
            "the shared tensor h_s is not in the allocation",
        ),
        (
            "the allocation dropped, the claim a one-copy sum",
            Box::new(move |x| {
                x.smem = None;
                edit_claim(x, Some(114688), None)
            }),
            "kernel binding: LC_SMEM_BYTES is 148480, the certificate's is 114688",
        ),
    ];
    for (what, edit, want) in cases {
        let mut bad = good.clone();
        edit(&mut bad);
        bad.digest = bad.compute_digest();
        std::fs::write(&c, bad.to_json()).unwrap();
        let o = laycert(&["check", &c]);
        let line = first_line(&o);
        assert_eq!(o.status.code(), Some(1), "{what}: {line}");
        assert!(
            line.starts_with("invalid: ") && line.contains(want),
            "{what}: {line}"
        );
    }
    // Edited without re-sealing: the digest.
    let mut bad = good.clone();
    edit_claim(&mut bad, Some(114688), None);
    std::fs::write(&c, bad.to_json()).unwrap();
    let line = first_line(&laycert(&["check", &c]));
    assert!(line.starts_with("invalid: the digest"), "{line}");
}
