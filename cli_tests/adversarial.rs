//! Adversarial input for every `laycert` subcommand: malformed and hostile text (deep nesting,
//! extents and strides near i64::MAX, 2^20..2^62 replicas, empty and unicode strings, bad
//! flags, huge shapes), each run under an address-space and CPU-time limit. The contract: exit
//! 0, 1, 2 or 3 only (never a panic's 101, an abort's 134 or a signal), at most 1 MB of output,
//! and exit 2 always with a message on stderr.
//!
//! `LAYCERT_BIN` runs another build of the binary (e.g. the release one) through the same set.

use std::io::Read;
use std::process::{Command, Stdio};

mod common;

/// Address space for one run (bytes): enough for z3 and rayon's threads, far below a blow-up.
const MEMORY_LIMIT: u64 = 3 << 30;
/// CPU seconds for one run: a hang or a cubic blow-up hits it (SIGXCPU / SIGKILL).
const CPU_SECONDS: u64 = 30;
/// Most bytes of stdout + stderr one run may print.
const MAX_OUTPUT: usize = 1 << 20;

fn bin() -> String {
    std::env::var("LAYCERT_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_laycert").to_string())
}

/// Runs the binary with `args` under the limits; returns (exit code, stderr text) or panics
/// with what broke the contract.
fn run(args: &[String]) -> (i32, String) {
    check(args).unwrap_or_else(|e| panic!("{e}"))
}

/// Runs every case, then fails listing each that broke the contract.
fn run_all(cases: Vec<Vec<String>>) -> usize {
    let n = cases.len();
    let broken: Vec<String> = cases.iter().filter_map(|a| check(a).err()).collect();
    assert!(
        broken.is_empty(),
        "{} of {n} runs broke the contract:\n{}",
        broken.len(),
        broken.join("\n")
    );
    n
}

/// [`run`], with what broke the contract as an error.
fn check(args: &[String]) -> Result<(i32, String), String> {
    let tmp = common::scratch();
    let dir = tmp.path();
    let started = std::time::Instant::now();
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -v {} && ulimit -t {CPU_SECONDS} && exec \"$@\"",
            MEMORY_LIMIT / 1024
        ))
        .arg("sh")
        .arg(bin())
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    // Read both pipes, stopping past the limit (a blow-up must not take the test down too).
    let mut err_pipe = child.stderr.take().unwrap();
    let err_thread = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = (&mut err_pipe)
            .take(MAX_OUTPUT as u64 + 1)
            .read_to_end(&mut buf);
        buf
    });
    let mut out = Vec::new();
    let _ = child
        .stdout
        .take()
        .unwrap()
        .take(MAX_OUTPUT as u64 + 1)
        .read_to_end(&mut out);
    if out.len() > MAX_OUTPUT {
        let _ = child.kill();
    }
    let status = child.wait().unwrap();
    let err = err_thread.join().unwrap();
    let shown = |a: &[String]| {
        let s = format!("{a:?}");
        s.chars().take(300).collect::<String>()
    };
    let stderr = String::from_utf8_lossy(&err).to_string();
    if std::env::var_os("LAYCERT_ADVERSARIAL_TIMES").is_some() {
        eprintln!("{:>8.3} s {}", started.elapsed().as_secs_f64(), shown(args));
    }
    if out.len() + err.len() > MAX_OUTPUT {
        return Err(format!(
            "{} printed {} bytes",
            shown(args),
            out.len() + err.len()
        ));
    }
    let Some(code) = status.code() else {
        return Err(format!(
            "{} ended by a signal: {status:?}; stderr: {}",
            shown(args),
            stderr.chars().take(300).collect::<String>()
        ));
    };
    if !matches!(code, 0..=3) {
        return Err(format!(
            "{} exited {code}; stderr: {}",
            shown(args),
            stderr.chars().take(300).collect::<String>()
        ));
    }
    if code == 2 && stderr.trim().is_empty() {
        return Err(format!("{} exited 2 with nothing on stderr", shown(args)));
    }
    Ok((code, stderr))
}

fn nest(open: &str, inner: &str, close: &str, n: usize) -> String {
    format!("{}{inner}{}", open.repeat(n), close.repeat(n))
}

/// Hostile layout texts, in every notation.
fn layouts() -> Vec<String> {
    let max = i64::MAX;
    let mut v: Vec<String> = [
        "",
        " ",
        "é",
        "\u{1F600}[4:1]",
        "S[",
        "S[0:1]",
        "S[-1:1]",
        "S[4:1@]",
        "S[4:1@\u{e9}]",
        "8:1",
        "(8,4):(4,1)",
        "S[(8,4):(4@laneid,1@warpid)] + R[2:1@reg] + 3@m",
        "Sw<3,4,3> o (8,64):(64,1)",
        "Sw<62,1,1> o 8:1",
        "Sw<1,62,62> o 8:1",
        "(32,4):(1,32) -> (16,8)",
        "#ttg.linear<{register=[[0,1],[1,0]], lane=[[0,2],[0,4]]}>",
        "#ttg.linear<{register=[[0,4611686018427387904]]}>",
        "#ttg.linear<{register=[[0,64]], lane=[[1,0]]}>",
        "#ttg.blocked<{sizePerThread=[1,1], threadsPerWarp=[32,1], warpsPerCTA=[4,1], order=[1,0]}>",
        "#ttg.blocked<{sizePerThread=[4611686018427387904,1], threadsPerWarp=[32,1], warpsPerCTA=[4,1], order=[1,0]}>",
        "S[16:1] + R[1048576:1@reg]",
        "S[16:1] + R[65536:1@reg]",
        "S[16:1] + R[(1024,1024,1024,1024):(1,1024,1048576,1073741824)@reg]",
        "S[4194304:1]",
        "S[1073741824:1]",
        "(1073741824,1073741824):(1,1073741824)",
    ]
    .map(str::to_string)
    .to_vec();
    v.extend([
        format!("S[{max}:1]"),
        format!("S[2:{max}]"),
        format!("S[(2,2):({max},1)]"),
        format!("S[4:1] + {max}@m"),
        format!("({max}):(1)"),
        format!("(2,{max}):(1,2)"),
        "(4611686018427387904,2):(1,1)".to_string(),
        "S[16:1] + R[4611686018427387904:1@reg]".to_string(),
        nest("(", "8", ")", 10_000),
        format!("S[{}:1]", nest("(", "8", ")", 10_000)),
        format!("{}:1", nest("(", "2", ",2)", 5_000)),
        format!("#ttg.linear<{{register={}}}>", nest("[", "1", "]", 10_000)),
        "(".repeat(9_000),
        "S[".repeat(3_000),
        "Sw<".repeat(3_000),
    ]);
    v
}

fn s(args: &[&str]) -> Vec<String> {
    args.iter().map(|a| a.to_string()).collect()
}

/// How many of [`with_layout`]'s first cases every hostile layout goes through.
const CORE: usize = 10;

/// Every subcommand with one hostile layout `l` in each layout position (the first [`CORE`]
/// are the common readers).
fn with_layout(l: &str) -> Vec<Vec<String>> {
    vec![
        s(&["show", l]),
        s(&["show", l, "--shape", "4,4"]),
        s(&["eval", l, "--coord", "3"]),
        s(&["--json", "eval", l, "--coord", "0,0", "--full"]),
        s(&["convert", l, "--to", "linear"]),
        s(&["equiv", l, "S[16:1] + R[65536:2@reg]"]),
        s(&["prove-property", "injective", l]),
        s(&["cute", "coalesce", l]),
        s(&["simplify", &format!("coalesce({l})")]),
        s(&["draw", l, "-o", "out.svg"]),
        s(&["--json", "show", l]),
        s(&["convert", l, "--to", "axe"]),
        s(&["convert", l, "--to", "cute"]),
        s(&["equiv", l, "8:1", "--axes", "m=lane"]),
        s(&["--json", "equiv", "S[16:1] + R[65536:2@reg]", l]),
        s(&["prove-property", "surjective", l]),
        s(&["canon", l, "--target", "cuda"]),
        s(&["group", l, "--shape", "4,2"]),
        s(&["tile", l, "8:1", "--inner-shape", "4", "--outer-shape", "8"]),
        s(&[
            "tile-of",
            l,
            "--shape",
            "16",
            "--inner",
            "S[4:1]",
            "--inner-shape",
            "4",
        ]),
        s(&["slice", l, "--shape", "16", "--region", "2:9"]),
        s(&["direct-sum", l, "S[2:1]", "--shapes", "4/2"]),
        s(&["cute", "compose", l, "(4,2):(2,1)"]),
        s(&["cute", "complement", l, "64"]),
        s(&["cute", "divide", l, "(2:1, 3:2)"]),
        s(&["cute", "product", l, "4:1"]),
        s(&["cute", "right-inverse", l]),
        s(&["cute", "nullspace", l]),
        s(&["linear", "compose", l, l]),
        s(&[
            "linear",
            "invert-and-compose",
            l,
            "#ttg.linear<{register=[[1]]}>",
        ]),
        s(&[
            "bank-conflicts",
            "--regs",
            l,
            "--smem",
            "(8,64):(64,1)",
            "--dtype",
            "f16",
        ]),
        s(&["swizzle", "--write", l, "--read", l, "--dtype", "f16"]),
        s(&["shuffle", l, l]),
        s(&["equiv-expr", &format!("coalesce({l})"), l]),
        s(&["decompose", l, "--shape", "32,16"]),
        s(&[
            "gen",
            "copy",
            "--src",
            l,
            "--dst",
            "(64,64):(1,64)",
            "--shape",
            "64,64",
            "--dtype",
            "f32",
        ]),
    ]
}

/// Hostile flags and argument values, and the file-reading subcommands.
fn other_cases() -> Vec<Vec<String>> {
    let max = i64::MAX.to_string();
    let huge_shape = ["4611686018427387904"; 4].join(",");
    let mut v = vec![
        s(&[]),
        s(&["--bogus"]),
        s(&["show"]),
        s(&["show", "8:1", "--shape", ""]),
        s(&["show", "8:1", "--shape", &huge_shape]),
        s(&["show", "8:1", "--shape", &max]),
        s(&["show", "8:1", "--shape", "-8"]),
        s(&["show", "8:1", "--shape", &vec!["1"; 5000].join(",")]),
        s(&[
            "show",
            "#ttg.linear<{register=[[0,1]]}>",
            "--shape",
            &huge_shape,
        ]),
        s(&["eval", "8:1", "--coord", &max]),
        s(&["eval", "8:1", "--coord", ""]),
        s(&["eval", "8:1", "--coord", "-1"]),
        s(&[
            "eval",
            "S[16:1] + R[1048576:1@reg]",
            "--coord",
            "3",
            "--full",
        ]),
        s(&["convert", "8:1", "--to", "\u{e9}"]),
        s(&["prove-property", "\u{1F600}", "8:1"]),
        s(&["equiv", "8:1", "8:1", "--shape", &huge_shape]),
        s(&["equiv", "8:1", "8:1", "--axes", "="]),
        s(&["equiv", "8:1", "8:1", "--axes", "m=m,m=m"]),
        s(&["cute", "\u{e9}"]),
        s(&["cute", "recast", "8:1", &max, "1"]),
        s(&["cute", "complement", "8:1", &max]),
        s(&[
            "slice",
            "8:1",
            "--shape",
            "8",
            "--region",
            &format!("0:{max}"),
        ]),
        s(&["group", "8:1", "--shape", &huge_shape]),
        s(&["draw", "8:1", "-o", ""]),
        s(&["draw", "(8,8):(8,1)", "-o", "x.svg", "--banks", &max]),
        s(&["linear", "from", "#ttg.blocked<{}>", "--shape", &huge_shape]),
        s(&[
            "swizzle", "--write", "8:1", "--read", "8:1", "--dtype", "f999",
        ]),
        s(&["shuffle", "8:1", "8:1", "--dtype", ""]),
        s(&["simplify", ""]),
        s(&["simplify", &nest("coalesce(", "8:1", ")", 1_500)]),
        s(&["simplify", &nest("coalesce(", "8:1", ")", 10_000)]),
        s(&["equiv-expr", &nest("coalesce(", "8:1", ")", 1_500), "8:1"]),
        s(&["decompose", "8:1", "--shape", &huge_shape]),
        s(&[
            "gen",
            "copy",
            "--src",
            "8:1",
            "--dst",
            "8:1",
            "--shape",
            &huge_shape,
            "--dtype",
            "f32",
        ]),
        s(&[
            "gen",
            "copy",
            "--src",
            "(64,64):(64,1)",
            "--dst",
            "(64,64):(1,64)",
            "--shape",
            "64,64",
            "--dtype",
            "f32",
            "--threads",
            &max,
            "--tile-bytes",
            &max,
        ]),
        s(&["gpu", "bench", "--bogus"]),
        s(&["check", "missing.json"]),
        s(&["prove", "missing.rules"]),
        s(&["validate", "missing.jsonl"]),
        s(&["verify", "missing-dir"]),
    ];
    // File inputs: certificates, rule files and pair logs with hostile contents.
    let tmp = common::scratch();
    let dir = tmp.path();
    let deep_and = vec!["1 <= a"; 20_000].join(" && ");
    let files: Vec<(&str, String)> = vec![
        ("empty.json", String::new()),
        ("deep.json", nest("[", "1", "]", 100_000)),
        ("unicode.json", "{\"kind\": \"\u{1F600}\"}".into()),
        ("empty.rules", String::new()),
        ("deep.rules", format!("rule r {} == 8:1", nest("coalesce(", "8:1", ")", 10_000))),
        (
            "and.rules",
            format!("rule r forall a : int where 1 <= a <= 4, {deep_and} S[a:1] == S[a:1]"),
        ),
        (
            "neg.rules",
            format!("rule r forall a : int where 1 <= a <= 4, a <= {}8 S[a:1] == S[a:1]", "-".repeat(100_000)),
        ),
        (
            "big.rules",
            format!("rule r forall a : int where 1 <= a <= {max} S[a:1] == S[a:1]"),
        ),
        (
            "replica.rules",
            "rule r forall a : int where 1 <= a <= 2 S[16:1] + R[1048576:a@reg] == S[16:1] + R[1048576:2@reg]".into(),
        ),
        ("pairs.jsonl", format!("{}\n{{\"before\": \"\", \"after\": \"8:1\"}}\n", nest("[", "1", "]", 100_000))),
        (
            "pairs2.jsonl",
            format!(
                "{{\"before\": \"S[16:1] + R[65536:1@reg]\", \"after\": \"S[16:1] + R[65536:2@reg]\"}}\n{{\"before\": \"{}\", \"after\": \"8:1\"}}\n",
                nest("coalesce(", "8:1", ")", 10_000)
            ),
        ),
    ];
    for (name, text) in &files {
        std::fs::write(dir.join(name), text).unwrap();
    }
    for (name, _) in &files {
        let p = dir.join(name).to_string_lossy().to_string();
        v.push(s(&["check", &p]));
        v.push(s(&["prove", &p]));
        v.push(s(&["validate", &p]));
        v.push(s(&["simplify", "8:1", "--rules", &p]));
    }
    v.push(s(&["verify", &dir.to_string_lossy()]));
    v
}

#[test]
fn every_subcommand_survives_hostile_layouts() {
    // Every layout through the layout readers most commands share (show, eval, equiv, ...);
    // every third one through every subcommand, to keep the run short.
    let all = layouts();
    let mut cases: Vec<Vec<String>> = Vec::new();
    for (i, l) in all.iter().enumerate() {
        let per = with_layout(l);
        if i % 3 == 0 {
            cases.extend(per);
        } else {
            cases.extend(per.into_iter().take(CORE));
        }
    }
    assert!(run_all(cases) > 500);
}

#[test]
fn hostile_flags_and_files_are_refused_cleanly() {
    run_all(other_cases());
}

#[test]
fn the_reported_blow_ups_stay_small_and_bounded() {
    // 26 bytes that needed more than 8 GB in `show`.
    let (code, _) = run(&s(&["show", "S[16:1] + R[1048576:1@reg]"]));
    assert_eq!(code, 0);
    // eval of 2^20 replicas (20 MB of output): now an error naming the count.
    let (code, err) = run(&s(&["eval", "S[16:1] + R[1048576:1@reg]", "--coord", "3"]));
    assert_eq!(code, 2);
    assert!(err.contains("1048576"), "{err}");
    // 1500 nested coalesce (over a minute in simplify): refused at once.
    let (code, err) = run(&s(&["simplify", &nest("coalesce(", "8:1", ")", 1_500)]));
    assert_eq!(code, 2);
    assert!(err.contains("at most"), "{err}");
}

/// Runs the binary without limits and returns (code, stdout, stderr).
fn plain(args: &[&str]) -> (i32, String, String) {
    let o = Command::new(bin())
        .args(args)
        .output()
        .expect("the binary runs");
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).to_string(),
        String::from_utf8_lossy(&o.stderr).to_string(),
    )
}

#[test]
fn large_point_sets_print_as_a_count_and_the_first_sixteen() {
    let l = "S[16:1] + R[4096:1@reg]";
    let (code, out, _) = plain(&["eval", l, "--coord", "3"]);
    assert_eq!(code, 0);
    assert!(
        out.starts_with("4096 points, first 16: {{m:3, reg:0}, {m:3, reg:1},"),
        "{out}"
    );
    assert!(out.len() < 1_000, "{}", out.len());
    let (code, out, _) = plain(&["eval", l, "--coord", "3", "--full"]);
    assert_eq!(code, 0);
    assert_eq!(out.matches("{m:3").count(), 4096);
    // Small sets print whole, as before.
    let (_, out, _) = plain(&["eval", "S[16:1] + R[4:1@reg]", "--coord", "3"]);
    assert_eq!(
        out.trim(),
        "{{m:3, reg:0}, {m:3, reg:1}, {m:3, reg:2}, {m:3, reg:3}}"
    );
    // A full set past the print limit is an error naming the count.
    let (code, _, err) = plain(&["eval", "S[16:1] + R[65536:1@reg]", "--coord", "3", "--full"]);
    assert_eq!(code, 2);
    assert!(err.contains("65536 points"), "{err}");
}

#[test]
fn equiv_counterexamples_are_summarized() {
    let (a, b) = ("S[16:1] + R[65536:1@reg]", "S[16:1] + R[65536:2@reg]");
    let (code, out, _) = plain(&["equiv", a, b]);
    assert_eq!(code, 1);
    assert!(
        out.contains("left:  65536 points, first 16: {{m:0, reg:0}"),
        "{out}"
    );
    assert!(out.len() < 4_000, "{}", out.len());
    let (code, out, _) = plain(&["--json", "equiv", a, b]);
    assert_eq!(code, 1);
    assert!(out.len() < 1 << 20, "{}", out.len());
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["counterexample"]["left_count"], 65536);
    assert_eq!(v["counterexample"]["truncated"], true);
}

#[test]
fn axes_renaming_onto_an_alias_or_a_related_axis_is_refused() {
    let l = "S[(4,32):(1@foo,1@laneid)]";
    for target in ["lane", "laneid", "tx", "thread"] {
        let (code, _, err) = plain(&["equiv", l, l, "--axes", &format!("foo={target}")]);
        assert_eq!(code, 2, "foo={target}");
        assert!(err.contains("foo") && err.contains("laneid"), "{err}");
    }
    let (code, _, err) = plain(&["equiv", l, l, "--axes", "foo=warpid"]);
    assert_eq!(code, 0, "{err}");
}

/// A `#ttg.linear` on a tensor shape is fitted as Triton fits it; where Triton's fit is not
/// defined (the bases of a cut dim are not one power of two per bit) it is refused, naming the
/// dim, its bases and the shape.
#[test]
fn linear_attribute_bases_outside_the_shape_are_refused() {
    let (code, _, err) = plain(&[
        "show",
        "#ttg.linear<{register=[[0,64]], lane=[[1,0]]}>",
        "--shape",
        "4,4",
    ]);
    assert_eq!(code, 2);
    assert!(
        err.contains("dim1") && err.contains("[64]") && err.contains("[4, 4]"),
        "{err}"
    );
    // A permutation layout is cut: the register basis past the shape is removed.
    let (code, out, err) = plain(&[
        "show",
        "#ttg.linear<{register=[[0,4]], lane=[[1,0],[0,1],[0,2],[2,0]]}>",
        "--shape",
        "4,4",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("register = []"), "{out}");
}

/// A claim past every decider's reach is `unknown` (exit 3), not bad input: a side with no
/// strided form over the given shape and a table past the limit. Merging modes that are one
/// mode gives the CuTe side of the second claim a strided form, so it is decided.
#[test]
fn claims_past_the_table_limit_are_unknown_and_one_mode_chains_are_decided() {
    let (code, out, err) = plain(&[
        "equiv",
        "(3,4194304):(4194304,1)",
        "12582912:1",
        "--shape",
        "4194304,3",
    ]);
    assert_eq!(code, 3, "{out}{err}");
    assert!(out.starts_with("unknown\n"), "{out}");
    assert!(out.contains("exceeds 4194304"), "{out}");
    let (code, out, _) = plain(&[
        "prove-property",
        "injective",
        "(3,4194304):(4194304,1)",
        "--shape",
        "4194304,3",
    ]);
    assert_eq!(code, 3, "{out}");
    assert!(out.starts_with("unknown\n"), "{out}");
    let (code, out, err) = plain(&[
        "equiv",
        "(3,67108864):(1,3)",
        "201326592:1",
        "--shape",
        "67108864,3",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.starts_with("equivalent\n"), "{out}");
    let (code, out, err) = plain(&[
        "equiv",
        "(3,67108864):(1,3)",
        "201326592:2",
        "--shape",
        "67108864,3",
    ]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.starts_with("not equivalent\n"), "{out}");
}

/// Flags the command would silently ignore are refused, naming the flag; errors carry one
/// `error: ` prefix; a file of another kind is pointed to the command that checks it.
#[test]
fn ignored_flags_are_refused_and_errors_name_one_prefix() {
    let (code, _, err) = plain(&[
        "gen",
        "gemm",
        "--m",
        "64",
        "--n",
        "64",
        "--k",
        "64",
        "--kwarps",
        "3",
        "-o",
        "/dev/null",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--kwarps applies only to the W4A16 kernel"),
        "{err}"
    );
    let (code, _, err) = plain(&[
        "gen",
        "gemm",
        "--m",
        "16",
        "--n",
        "64",
        "--k",
        "128",
        "--weights",
        "int4",
        "--dtype",
        "f16",
        "--bm",
        "64",
        "-o",
        "/dev/null",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--bm does not apply to the W4A16 kernel"),
        "{err}"
    );
    let (code, _, err) = plain(&["draw", "(4,8):(8,1)", "--access", "col", "-o", "/dev/null"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--banks"), "{err}");
    // An undefined term has no simplest form (it was printed back with exit 0).
    let (code, out, err) = plain(&["simplify", "complement(4:2, -5)"]);
    assert_eq!(code, 2, "{out}");
    assert!(err.contains("is undefined"), "{err}");
    for args in [
        vec!["simplify", "compose(4:1, 2:1"],
        vec!["equiv-expr", "compose(", "4:1"],
        vec!["equiv", "foo", "4:1"],
    ] {
        let (code, _, err) = plain(&args);
        assert_eq!(code, 2, "{args:?}");
        assert!(err.starts_with("error: "), "{err}");
        assert_eq!(err.matches("error:").count(), 1, "{err}");
    }
}

#[test]
fn empty_rule_and_pair_files_are_bad_input() {
    let tmp = common::scratch();
    let dir = tmp.path();
    let file = |name: &str, text: &str| {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p.to_str().unwrap().to_string()
    };
    // A CI step that proves nothing must not pass: an empty (or blank) file is refused.
    for (cmd, name, text, what) in [
        ("validate", "e.jsonl", "", "no pairs"),
        ("validate", "b.jsonl", "\n  \n", "no pairs"),
        ("prove", "e.rules", "", "no rules"),
        ("prove", "c.rules", "// only a comment\n", "no rules"),
    ] {
        let (code, _, err) = plain(&[cmd, &file(name, text)]);
        assert_eq!(code, 2, "{cmd} {name}");
        assert!(err.contains(what), "{cmd} {name}: {err}");
    }
    // A literal whose size overflows is no layout, and a logged pair holds no parameter: it is
    // undefined at every instance, so the line is bad input naming its field (as a rule file's
    // parameter-free literal is), not a refutation.
    let big = "S[(4611686018427387904,4):(1,1)]";
    let pair =
        format!("{{\"before\": \"S[2:1]\", \"after\": \"{big}\", \"relation\": \"equal\"}}\n");
    let (code, out, err) = plain(&["validate", &file("o.jsonl", &pair)]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains("o.jsonl:1: field \"after\"") && err.contains("integer overflow"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// `slice` of a layout that does not group by the shape (or whose region fits no grouped
/// construction) is decided from the region's values: a layout (exit 0), "no" only when no
/// layout has the region's map (exit 1), `unknown` past the enumeration limit (exit 3).
#[test]
fn slice_decides_regions_of_layouts_that_do_not_group() {
    let slice = |l: &str, shape: &str, region: &str| {
        let (code, out, err) = plain(&["slice", l, "--shape", shape, "--region", region]);
        (code, out.lines().next().unwrap_or("").to_string(), err)
    };
    // S[(2,3):(5,1)] over [3,2]: the values row-major are 0, 1, 2, 5, 6, 7.
    let (code, out, err) = slice("S[(2,3):(5,1)]", "3,2", "1:2,1:2");
    assert_eq!((code, out.as_str()), (0, "S[():()] + 5"), "{err}");
    let (code, out, err) = slice("S[(2,3):(5,1)]", "3,2", "0:3,0:2");
    assert_eq!((code, out.as_str()), (0, "S[(2,3):(5,1)]"), "{err}");
    // Indices 5..9 of S[(6,2):(5,5)] are 15, 15, 20, 20.
    let (code, out, err) = slice("S[(6,2):(5,5)]", "12", "5:9");
    assert_eq!((code, out.as_str()), (0, "S[(2,2):(5,0)] + 15"), "{err}");
    // 0, 1, 2, 5: no layout of 4 elements runs 3 steps of 1 and then breaks.
    let (code, out, _) = slice("S[(2,3):(5,1)]", "3,2", "0:2,0:2");
    assert_eq!(code, 1, "{out}");
    assert!(out.starts_with("not a layout of this form: "), "{out}");
    // 6 * 2^20 elements and no grouping: undecided, not "no".
    let (code, out, err) = slice(
        "S[(2,3,1048576):(5242880,1048576,1)]",
        "3,2097152",
        "0:3,0:2097152",
    );
    assert_eq!(code, 3, "{out}{err}");
    assert!(out.starts_with("unknown: slice: no grouping"), "{out}");
    let (code, out, _) = plain(&[
        "--json",
        "slice",
        "S[(2,3,1048576):(5242880,1048576,1)]",
        "--shape",
        "3,2097152",
        "--region",
        "0:3,0:2097152",
    ]);
    assert_eq!(code, 3, "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(v["result"].is_null() && v["unknown"].is_string(), "{out}");
}
