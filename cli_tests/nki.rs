//! `laycert gen nki ...`, `laycert nki run|dispatch` and `laycert check` of their certificates:
//! first lines and exit codes. Running kernels needs python3 with numpy (`LAYCERT_PYTHON`);
//! without it those tests print a SKIP line.

use std::process::Command;

mod common;
use common::{first_line, laycert, stderr, stdout};

fn tmp(dir: &tempfile::TempDir, name: &str) -> String {
    dir.path().join(name).to_string_lossy().into_owned()
}

fn numpy() -> bool {
    let py = std::env::var("LAYCERT_PYTHON").unwrap_or_else(|_| "python3".into());
    let ok = Command::new(py)
        .args(["-c", "import numpy"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !ok {
        println!("SKIP (no python3 with numpy: set LAYCERT_PYTHON)");
    }
    ok
}

#[test]
fn gen_nki_gemm_writes_a_kernel_and_a_certificate_that_checks() {
    let scratch = common::scratch();
    let (k, c) = (tmp(&scratch, "g.py"), tmp(&scratch, "g.json"));
    let o = laycert(&[
        "gen", "nki", "gemm", "--m", "300", "--n", "700", "--k", "200", "-o", &k, "--cert", &c,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        first_line(&o).starts_with(&format!("wrote {k}: gemm 300x700x200 bf16")),
        "{}",
        first_line(&o)
    );
    let text = std::fs::read_to_string(&k).unwrap();
    assert!(text.starts_with("# laycert-nki: kind=gemm m=300 n=700 k=200 dtype=bf16"));
    for api in [
        "import nki.isa as nisa",
        "import nki.language as nl",
        "nisa.nc_matmul(",
        "buffer=nl.psum",
        "nl.affine_range(",
    ] {
        assert!(text.contains(api), "{api}");
    }
    let o = laycert(&["check", &c]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert_eq!(first_line(&o), "valid");
    // Tampering: a stride inside the certificate.
    let json = std::fs::read_to_string(&c)
        .unwrap()
        .replacen("128@F,1@P,1@F", "127@F,1@P,1@F", 1);
    let bad = tmp(&scratch, "g_bad.json");
    std::fs::write(&bad, json).unwrap();
    let o = laycert(&["check", &bad]);
    assert_eq!(o.status.code(), Some(1));
    assert!(first_line(&o).starts_with("invalid:"), "{}", first_line(&o));
    if numpy() {
        let o = laycert(&["nki", "run", &k]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stdout)
        );
        assert!(first_line(&o).starts_with("match"));
    }
}

#[test]
fn gen_nki_refuses_a_moving_tile_of_1024_naming_the_rule() {
    let o = laycert(&[
        "gen",
        "nki",
        "gemm",
        "--m",
        "128",
        "--n",
        "1024",
        "--k",
        "128",
        "--tile",
        "128,128,1024",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).starts_with("error: matmul-moving-free"),
        "{}",
        stderr(&o)
    );
    let o = laycert(&[
        "gen", "nki", "mha", "--seq", "128", "--heads", "1", "--dim", "256",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).starts_with("error: matmul-partition"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn nki_dispatch_proves_or_refuses_naming_the_rule() {
    let scratch = common::scratch();
    let c = tmp(&scratch, "d.json");
    let o = laycert(&[
        "nki",
        "dispatch",
        "--a",
        "S[(2,128,128):(128@F,1@P,1@F)]",
        "--b",
        "S[(2,128,1024):(1024@F,1@P,1@F)]",
        "--c",
        "S[(128,1024):(1@P,1@F)]",
        "--dims",
        "256,128,1024",
        "--cert",
        &c,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        first_line(&o),
        "dispatch: instruction 128x128x512 (K x M x N), 4 instruction(s), loops n:2 k:2"
    );
    assert_eq!(first_line(&laycert(&["check", &c])), "valid");
    for (a, b, cc, dims, rule) in [
        (
            "S[(128,128):(1@F,1@P)]",
            "S[(128,512):(1@P,1@F)]",
            "S[(128,512):(1@P,1@F)]",
            "128,128,512",
            "k-on-partition",
        ),
        (
            "S[(128,128):(1@P,1@F)]",
            "S[(128,8192):(1@P,1@F)]",
            "S[(128,8192):(1@P,1@F)]",
            "128,128,8192",
            "psum-capacity",
        ),
    ] {
        let o = laycert(&[
            "nki", "dispatch", "--a", a, "--b", b, "--c", cc, "--dims", dims,
        ]);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert!(
            first_line(&o).starts_with(&format!("refused: {rule}")),
            "{}",
            first_line(&o)
        );
    }
    let o = laycert(&[
        "nki",
        "dispatch",
        "--a",
        "S[(128,128):(1@P,1@F)]",
        "--b",
        "S[(128,1024):(1@P,1@F)]",
        "--c",
        "S[(128,1024):(1@P,1@F)]",
        "--dims",
        "128,128,1024",
        "--instruction",
        "128,128,1024",
    ]);
    assert!(
        first_line(&o).starts_with("refused: matmul-moving-free"),
        "{}",
        first_line(&o)
    );
}

#[test]
fn nki_run_exit_codes() {
    let scratch = common::scratch();
    let o = laycert(&["nki", "run", &tmp(&scratch, "missing.py")]);
    assert_eq!(o.status.code(), Some(2));
    if !numpy() {
        return;
    }
    let k = tmp(&scratch, "psum.py");
    std::fs::write(
        &k,
        "# laycert-nki: kind=gemm m=128 n=512 k=128 dtype=bf16 entry=gemm\n\
         import nki\nimport nki.language as nl\n\n\
         def gemm(lhsT, rhs):\n    return nl.ndarray((128, 4608), dtype=nl.float32, buffer=nl.psum)\n",
    )
    .unwrap();
    let o = laycert(&["nki", "run", &k]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        first_line(&o).starts_with("rule violated: psum-capacity"),
        "{}",
        first_line(&o)
    );
    let s = tmp(&scratch, "s.py");
    let o = laycert(&[
        "gen", "nki", "softmax", "--rows", "130", "--cols", "33", "-o", &s,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = laycert(&["nki", "run", &s, "--json"]);
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_str(&String::from_utf8_lossy(&o.stdout)).unwrap();
    assert!(v["verdict"].as_str().unwrap().starts_with("match"));
}

/// A header whose sizes `gen nki` refuses is bad input with the generator's reason (the run
/// used to end in exit 1 with nothing printed, `{"figures":null,"verdict":""}` under --json).
#[test]
fn nki_run_refuses_a_header_the_generator_refuses() {
    let scratch = common::scratch();
    for (i, (header, why)) in [
        (
            "kind=gemm m=0 n=0 k=0",
            "gemm-size: M = 0 is not in [1, 65536]",
        ),
        ("kind=gemm m=128 n=x k=128", "n=x is not an integer"),
        (
            "kind=softmax rows=8 cols=0",
            "rows 8 and cols 0 must be in [1, 2^24]",
        ),
        (
            "kind=mha heads=1 seq=128 dim=256",
            "matmul-partition: head dim 256",
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let k = tmp(&scratch, &format!("header{i}.py"));
        std::fs::write(&k, format!("# laycert-nki: {header} dtype=bf16 entry=k\n")).unwrap();
        for json in [false, true] {
            let mut args = vec!["nki", "run", k.as_str()];
            if json {
                args.push("--json");
            }
            let o = laycert(&args);
            assert_eq!(o.status.code(), Some(2), "{header}: {}", stderr(&o));
            assert!(o.stdout.is_empty(), "{header}: {}", first_line(&o));
            assert!(
                stderr(&o).contains(&format!("header: {why}")),
                "{header}: {}",
                stderr(&o)
            );
        }
    }
}

/// A kernel that never ends is stopped at `--timeout` (exit 3, `timeout: ...`); a kernel that
/// raises is exit 2 with the reason on stderr and nothing on stdout.
#[test]
fn nki_run_stops_a_kernel_past_its_timeout_and_reports_errors_on_stderr() {
    let scratch = common::scratch();
    if !numpy() {
        return;
    }
    let header = "# laycert-nki: kind=gemm m=128 n=512 k=128 dtype=bf16 entry=laycert_gemm\n";
    let k = tmp(&scratch, "loop.py");
    std::fs::write(&k, format!("{header}while True:\n    pass\n")).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_laycert"))
        .args(["nki", "run", "--timeout", "1", &k])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > std::time::Duration::from_secs(30) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("nki run --timeout 1 still running after 30 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(3));
    assert!(
        first_line(&o).starts_with("timeout: ") && first_line(&o).contains("1 s"),
        "{}",
        first_line(&o)
    );
    let k = tmp(&scratch, "raise.py");
    std::fs::write(&k, format!("{header}raise RuntimeError('boom')\n")).unwrap();
    let o = laycert(&["nki", "run", &k]);
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty(), "{}", first_line(&o));
    assert!(stderr(&o).contains("RuntimeError: boom"), "{}", stderr(&o));
}

/// `--json` output: exactly one JSON object on one line.
fn json(o: &std::process::Output) -> serde_json::Value {
    let text = stdout(o);
    assert_eq!(text.lines().count(), 1, "--json prints one line: {text}");
    let v: serde_json::Value = serde_json::from_str(&text).expect("--json prints valid JSON");
    assert!(v.is_object(), "{text}");
    v
}

/// `gen nki` without `-o` prints the kernel itself; with `--json`, one object holding it as
/// `source`, what it computes and its cost (as `-o` does with `wrote`).
#[test]
fn gen_nki_json_without_out_holds_the_kernel_source() {
    for (what, args) in [
        (
            "gemm 128x512x128 bf16",
            &["gemm", "--m", "128", "--n", "512", "--k", "128"][..],
        ),
        (
            "softmax 130x33 f32",
            &["softmax", "--rows", "130", "--cols", "33"][..],
        ),
        (
            "mha heads=1 seq=128 dim=64",
            &["mha", "--heads", "1", "--seq", "128", "--dim", "64"][..],
        ),
    ] {
        let mut text = vec!["gen", "nki"];
        text.extend(args);
        let o = laycert(&text);
        assert_eq!(o.status.code(), Some(0), "{what}: {}", stderr(&o));
        let source = stdout(&o);
        assert!(
            source.starts_with("# laycert-nki: kind="),
            "{what}: {source}"
        );
        let mut with_json = vec!["--json"];
        with_json.extend(text);
        let o = laycert(&with_json);
        assert_eq!(o.status.code(), Some(0), "{what}: {}", stderr(&o));
        let v = json(&o);
        assert_eq!(v["source"].as_str(), Some(source.as_str()), "{what}");
        assert!(
            v["kernel"].as_str().unwrap().starts_with(what),
            "{what}: {v}"
        );
        assert!(
            v.get("cost").is_some() && v.get("wrote").is_none(),
            "{what}: {v}"
        );
    }
}

/// `nki run --json` prints one object for every outcome, `timeout: ...` and `cannot run: ...`
/// as their verdicts with null figures (exit 3 as in text).
#[test]
fn nki_run_json_reports_timeout_and_no_python_as_one_object() {
    let scratch = common::scratch();
    let k = tmp(&scratch, "g.py");
    let o = laycert(&[
        "gen", "nki", "gemm", "--m", "128", "--n", "512", "--k", "128", "-o", &k,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    for json_flag in [false, true] {
        let mut args = vec!["nki", "run", k.as_str()];
        if json_flag {
            args.insert(0, "--json");
        }
        let o = Command::new(env!("CARGO_BIN_EXE_laycert"))
            .args(&args)
            .env("LAYCERT_PYTHON", "/nonexistent")
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
        let line = if json_flag {
            let v = json(&o);
            assert!(v["figures"].is_null(), "{v}");
            v["verdict"].as_str().unwrap().to_string()
        } else {
            assert_eq!(stdout(&o).lines().count(), 1);
            first_line(&o)
        };
        assert!(
            line.starts_with("cannot run: /nonexistent with numpy"),
            "{line}"
        );
    }
    if !numpy() {
        return;
    }
    let header = "# laycert-nki: kind=gemm m=128 n=512 k=128 dtype=bf16 entry=laycert_gemm\n";
    let k = tmp(&scratch, "loop.py");
    std::fs::write(&k, format!("{header}while True:\n    pass\n")).unwrap();
    let o = laycert(&["--json", "nki", "run", &k, "--timeout", "1"]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let v = json(&o);
    assert!(
        v["verdict"].as_str().unwrap().starts_with("timeout: "),
        "{v}"
    );
    assert!(v["figures"].is_null(), "{v}");
}

/// The reference interpreter's arrays grow with the header's sizes (a 16384x16384x8192 GEMM
/// grew past 6 GB before its timeout): a kernel needing more than its limit is refused before
/// Python starts, exit 2 naming the sizes and the limit. `gen nki` still emits it (it is valid
/// for the hardware), with a note on stderr.
#[test]
fn nki_run_refuses_a_kernel_past_the_interpreter_memory_limit() {
    let scratch = common::scratch();
    let k = tmp(&scratch, "big.py");
    let o = laycert(&[
        "gen", "nki", "gemm", "--m", "16384", "--n", "16384", "--k", "8192", "-o", &k,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(first_line(&o).starts_with(&format!("wrote {k}: gemm 16384x16384x8192")));
    assert!(
        stderr(&o).contains("note: `laycert nki run` will refuse this kernel"),
        "{}",
        stderr(&o)
    );
    let m = tmp(&scratch, "mha.py");
    std::fs::write(
        &m,
        "# laycert-nki: kind=mha heads=1 seq=131072 dim=64 dtype=bf16 entry=k\n",
    )
    .unwrap();
    for (path, sizes) in [
        (&k, "gemm m=16384 n=16384 k=8192"),
        (&m, "mha heads=1 seq=131072 dim=64"),
    ] {
        for json_flag in [false, true] {
            let mut args = vec!["nki", "run", path.as_str()];
            if json_flag {
                args.push("--json");
            }
            let o = laycert(&args);
            assert_eq!(o.status.code(), Some(2), "{sizes}: {}", stderr(&o));
            assert!(o.stdout.is_empty(), "{sizes}: {}", first_line(&o));
            let err = stderr(&o);
            assert!(
                err.contains(&format!("header: {sizes} needs about "))
                    && err.contains("over the interpreter's limit of 2 GiB"),
                "{err}"
            );
        }
    }
    // A kernel the interpreter runs comes with no note.
    let s = tmp(&scratch, "s.py");
    let o = laycert(&[
        "gen", "nki", "softmax", "--rows", "130", "--cols", "33", "-o", &s,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!stderr(&o).contains("note:"), "{}", stderr(&o));
}

/// Audit 33: the header is read as the harness reads it (a key given twice was read
/// first here and last there, past the 2 GiB guard; an unknown first `kind=` skipped it); a
/// kernel that prints is judged like one that does not; a directory or device is named as such;
/// `--dtype-bytes` takes an element size.
#[test]
fn nki_run_reads_the_header_as_the_harness_does() {
    let scratch = common::scratch();
    let k = tmp(&scratch, "g.py");
    let o = laycert(&[
        "gen", "nki", "gemm", "--m", "128", "--n", "128", "--k", "128", "-o", &k,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = std::fs::read_to_string(&k).unwrap();
    let (first, rest) = text.split_once('\n').unwrap();
    let bad = tmp(&scratch, "bad.py");
    for (header, want) in [
        (format!("{first} m=4000 n=4000 k=4000"), "m= is given twice"),
        (
            first.replacen("kind=gemm", "kind=none kind=gemm", 1),
            "kind= is given twice",
        ),
        (first.replacen("kind=gemm", "kind=conv", 1), "kind=conv"),
        (format!("{first} junk"), "field `junk` is not key=value"),
    ] {
        std::fs::write(&bad, format!("{header}\n{rest}")).unwrap();
        let o = laycert(&["nki", "run", &bad]);
        assert_eq!(o.status.code(), Some(2), "{header}: {}", stdout(&o));
        assert!(stderr(&o).contains(want), "{header}: {}", stderr(&o));
    }
    let o = laycert(&["nki", "run", scratch.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("a directory"), "{}", stderr(&o));
    let o = laycert(&[
        "nki",
        "dispatch",
        "--a",
        "S[(128,128):(1@P,1@F)]",
        "--b",
        "S[(128,512):(1@P,1@F)]",
        "--c",
        "S[(128,512):(1@P,1@F)]",
        "--dims",
        "128,128,512",
        "--dtype-bytes",
        "8",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--dtype-bytes 8"), "{}", stderr(&o));
    if !numpy() {
        return;
    }
    let printing = tmp(&scratch, "print.py");
    std::fs::write(
        &printing,
        format!("{first}\nprint(\"debug: loading\")\n{rest}"),
    )
    .unwrap();
    let o = laycert(&["nki", "run", &printing]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(first_line(&o).starts_with("match"), "{}", stdout(&o));
}
