//! The `laycert` binary's output contract: the answer on stdout's first line, `--json` one JSON
//! object, exit 0 on success and 2 on bad input with the message (and a caret) on stderr, never a
//! panic.

use std::process::Output;

mod common;
use common::{first_line, laycert, laycert_within, stderr, stdout};

const TILE: &str = "S[(8,2,4,2):(4@laneid,1@warpid,1@laneid,1@reg)] + R[2:4@warpid] + 5@warpid";
const FIG1: &str =
    "#ttg.linear<{register=[[0,1],[1,0]], lane=[[0,2],[0,4],[0,8],[2,0],[4,0]], warp=[[8,0]]}>";

fn json(o: &Output) -> serde_json::Value {
    let text = stdout(o);
    assert_eq!(text.lines().count(), 1, "--json prints one line: {text}");
    serde_json::from_str(&text).expect("--json prints valid JSON")
}

#[test]
fn show_prints_the_layout_first_then_its_facts() {
    let o = laycert(&["show", TILE]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], TILE);
    assert!(lines.contains(&"notation: axe"), "{out}");
    assert!(lines.contains(&"domain size: 128"), "{out}");
    assert!(lines.contains(&"span: laneid=32, reg=2, warpid=6"), "{out}");
    assert!(lines.contains(&"injective: yes"), "{out}");
}

#[test]
fn show_json_has_size_span_and_facts() {
    let v = json(&laycert(&["show", TILE, "--json"]));
    assert_eq!(v["layout"], TILE);
    assert_eq!(v["size"], 128);
    assert_eq!(v["span"]["laneid"], 32);
    assert_eq!(v["span"]["warpid"], 6);
    assert_eq!(v["injective"]["holds"], "yes");
    assert_eq!(v["surjective"]["holds"], "no");
}

#[test]
fn show_with_a_shape_reports_that_shape() {
    let o = laycert(&["show", TILE, "--shape", "8,16"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).lines().any(|l| l == "shape: (8, 16)"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn eval_prints_the_spec_answer_for_the_tensor_core_tile() {
    let o = laycert(&["eval", TILE, "--shape", "8,16", "--coord", "2,9"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "{{laneid:8, reg:1, warpid:6}, {laneid:8, reg:1, warpid:10}}\n"
    );
}

#[test]
fn eval_json_lists_the_points() {
    let v = json(&laycert(&[
        "eval", TILE, "--shape", "8,16", "--coord", "2,9", "--json",
    ]));
    assert_eq!(v["coord"], serde_json::json!([2, 9]));
    assert_eq!(
        v["points"],
        serde_json::json!([{"laneid": 8, "reg": 1, "warpid": 6}, {"laneid": 8, "reg": 1, "warpid": 10}])
    );
}

#[test]
fn eval_of_cute_flattens_column_major() {
    let o = laycert(&["eval", "(4,(2,4)):(2,(1,8))", "--coord", "3,5"]);
    assert_eq!(first_line(&o), "{{m:23}}");
}

#[test]
fn eval_of_a_linear_layout_takes_named_and_positional_coordinates() {
    // linear.md 1: thread 9, register 1, warp 0 -> (2, 3).
    let named = laycert(&[
        "eval",
        FIG1,
        "--shape",
        "16,16",
        "--coord",
        "register=1,lane=9",
    ]);
    assert_eq!(named.status.code(), Some(0), "{}", stderr(&named));
    assert_eq!(first_line(&named), "{{dim0:2, dim1:3}}");
    let positional = laycert(&["eval", FIG1, "--shape", "16,16", "--coord", "1,9,0"]);
    assert_eq!(first_line(&positional), "{{dim0:2, dim1:3}}");
    let unknown = laycert(&["eval", FIG1, "--shape", "16,16", "--coord", "thread=9"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(
        stderr(&unknown).contains("unknown in-dim \"thread\""),
        "{}",
        stderr(&unknown)
    );
}

#[test]
fn convert_prints_the_exact_equivalent() {
    // convert.rs: `(4,8):(8,1)` over shape (4,8) is `S[(4,8):(8,1)]`.
    let o = laycert(&["convert", "(4,8):(8,1)", "--to", "axe"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(first_line(&o), "S[(4,8):(8,1)]");
    let v = json(&laycert(&[
        "convert",
        "(4,8):(8,1)",
        "--to",
        "axe",
        "--json",
    ]));
    assert_eq!(v["layout"], "S[(4,8):(8,1)]");
    assert_eq!(v["from"], "cute");
}

#[test]
fn convert_refuses_with_the_reason() {
    let o = laycert(&["convert", "(4,3):(1,4)", "--to", "linear"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("not a power of two"), "{}", stderr(&o));
    assert!(stdout(&o).is_empty());
    // The SM80 C atom's threads on a 16x16 tile hold half of it: no exact linear form.
    let o = laycert(&[
        "convert",
        "((4,8),(2,2)):((32,1),(16,8)) -> (16,16)",
        "--to",
        "linear",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("tile cell 128 is held by no"),
        "{}",
        stderr(&o)
    );
}

/// Bad layouts exit 2 with the message and a caret on stderr, nothing on stdout.
#[test]
fn bad_input_exits_2_with_a_caret() {
    for bad in [
        "S[(8,0):(1,1)]",
        "S[(8,2):(1)]",
        "S[(8,2):(1,1)",
        "(4,2):(1,2,3)",
        "((4,2):(1,2)",
        "",
    ] {
        for args in [
            vec!["show", bad],
            vec!["eval", bad, "--coord", "0"],
            vec!["convert", bad, "--to", "axe"],
        ] {
            let o = laycert(&args);
            assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
            let err = stderr(&o);
            assert!(err.starts_with("error: "), "{args:?}: {err}");
            assert!(
                err.lines().any(|l| l.trim_start().starts_with('^')),
                "{args:?}: no caret in {err}"
            );
            assert!(!err.contains("panicked"), "{args:?}: {err}");
            assert!(stdout(&o).is_empty(), "{args:?}");
        }
    }
}

#[test]
fn the_caret_sits_under_the_bad_extent() {
    let err = stderr(&laycert(&["show", "S[(8,0):(1,1)]"]));
    let lines: Vec<&str> = err.lines().collect();
    let input = lines
        .iter()
        .position(|l| l.trim() == "S[(8,0):(1,1)]")
        .expect("input echoed");
    let caret = lines[input + 1];
    let col = lines[input].find("(8,0)").expect("extent tuple");
    assert_eq!(caret.find('^'), Some(col), "{err}");
}

#[test]
fn bad_arguments_exit_2() {
    for args in [
        vec!["eval", "S[8:1]", "--coord", "9"],
        vec!["eval", "S[8:1]", "--coord", "x"],
        vec!["eval", "S[8:1]", "--coord", "-1"],
        vec!["show", "S[8:1]", "--shape", "3,3"],
        vec!["show", "S[8:1]", "--shape", "2,0"],
        vec!["eval", "S[8:1]", "--shape", "3,3", "--coord", "1,1"],
        vec!["eval", "S[8:1]", "--coord", "lane=1"],
        vec!["convert", "S[8:1]", "--to", "sideways"],
        vec!["show", "#ttg.blocked<{sizePerThread=[1]}>"],
        vec!["no-such-command"],
        vec!["eval", "S[8:1]"],
    ] {
        let o = laycert(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(!stderr(&o).is_empty(), "{args:?}");
    }
}

/// A small corpus file: a cross-system claim on an embedded atom, a false claim with its
/// witness, and one claim whose expectation is wrong when `wrong` is set.
fn corpus_file(dir: &std::path::Path, wrong: bool) -> String {
    let expect = if wrong {
        "not equivalent"
    } else {
        "equivalent"
    };
    let text = format!(
        r##"[[claim]]
name = "c-vs-mmav2"
kind = "equivalent"
left = "atom:SM80_16x8x16_F16F16F16F16_TN.C"
right = "#ttg.nvidia_mma<{{versionMajor = 2, versionMinor = 0, warpsPerCTA = [1, 1], instrShape = [16, 8]}}>"
shape = [16, 8]
expect = "{expect}"
source = "spec linear.md 3"

[[claim]]
name = "row-vs-column-major"
kind = "equivalent"
left = "(8,8):(1,8)"
right = "S[(8,8):(8,1)]"
shape = [8, 8]
expect = "not equivalent"
witness = [0, 1]
source = "spec axe.md 2"
"##
    );
    let path = dir.join(if wrong { "wrong.toml" } else { "claims.toml" });
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

#[test]
fn verify_runs_the_embedded_corpus_and_every_verdict_matches() {
    let o = laycert(&["verify"]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    let first = first_line(&o);
    let passed: usize = first
        .strip_prefix("verify: ")
        .and_then(|r| r.strip_suffix(" passed, 0 failed"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("first line: {first}"));
    assert!(passed >= 450, "{first}");
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[1].starts_with("corpus: embedded ("), "{out}");
    assert!(
        lines[2].starts_with("kind ") && lines[2].contains("deciders"),
        "{out}"
    );
    for kind in ["spec-vector", "atom", "claim", "total"] {
        assert!(lines.iter().any(|l| l.starts_with(kind)), "{kind}: {out}");
    }
    assert!(!out.contains("FAIL"), "{out}");
}

#[test]
fn verify_a_file_checks_its_claims_and_witnesses() {
    let tmp = common::scratch();
    let dir = tmp.path();
    let path = corpus_file(dir, false);
    let o = laycert(&["verify", &path, "--verbose"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert_eq!(first_line(&o), "verify: 2 passed, 0 failed");
    let out = stdout(&o);
    assert!(
        out.contains("ok    claim c-vs-mmav2: equivalent ("),
        "{out}"
    );
    assert!(
        out.contains("witness [0, 1] confirmed by the semantics"),
        "{out}"
    );
    let v = json(&laycert(&["verify", &path, "--json"]));
    assert_eq!(
        (v["passed"].as_u64(), v["failed"].as_u64()),
        (Some(2), Some(0))
    );
    assert_eq!(v["checks"][1]["got"], "not equivalent");
    assert_eq!(v["summary"][0]["kind"], "spec-vector");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn verify_exits_1_when_a_verdict_differs_from_its_expectation() {
    let tmp = common::scratch();
    let dir = tmp.path();
    let path = corpus_file(dir, true);
    let o = laycert(&["verify", &path]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(first_line(&o), "verify: 1 passed, 1 failed");
    let out = stdout(&o);
    assert!(
        out.contains("FAIL  claim c-vs-mmav2: equivalent (")
            && out.contains("expected not equivalent"),
        "{out}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn verify_names_file_entry_and_field_of_a_malformed_corpus() {
    let tmp = common::scratch();
    let dir = tmp.path();
    let path = dir.join("bad.toml");
    std::fs::write(
        &path,
        "[[claim]]\nname = \"x\"\nkind = \"equals\"\nleft = \"4:1\"\nright = \"4:1\"\n\
         expect = \"equivalent\"\nsource = \"s\"\n",
    )
    .unwrap();
    let o = laycert(&["verify", path.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("bad.toml: [[claim]] #1 \"x\": field `kind`: \"equals\" is not one of"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn verify_report_writes_html_with_pictures_beside_each_claim() {
    let tmp = common::scratch();
    let dir = tmp.path();
    let path = corpus_file(dir, false);
    let out_dir = dir.join("out");
    let o = laycert(&["verify", &path, "--report", out_dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("report: "), "{}", stdout(&o));
    let html = std::fs::read_to_string(out_dir.join("index.html")).unwrap();
    assert!(html.contains("<b>c-vs-mmav2</b>"), "{html}");
    let imgs = html.matches("<img src=\"pictures/").count();
    assert_eq!(imgs, 4, "two layouts per claim: {html}");
    let svg = std::fs::read_to_string(out_dir.join("pictures/p0000.svg")).unwrap();
    assert!(
        svg.starts_with("<svg") && svg.contains(">T4</text>"),
        "{svg}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn draw_writes_a_tv_picture_and_a_bank_map() {
    let tmp = common::scratch();
    let dir = tmp.path();
    let svg = dir.join("a.svg");
    let a = "((4,8),(2,2,2)):((32,1),(16,8,128)) -> (16,16)";
    let o = laycert(&["draw", a, "-o", svg.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        first_line(&o),
        format!("wrote {} (16x16 cells)", svg.display())
    );
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.contains(">T31</text>") && text.contains(">V7</text>"));
    let banks = dir.join("banks.svg");
    let o = laycert(&[
        "draw",
        "(8,64):(64,1)",
        "--banks",
        "2",
        "--access",
        "col",
        "-o",
        banks.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("64 of 64 accesses conflict"),
        "{}",
        stdout(&o)
    );
    let o = laycert(&[
        "draw",
        FIG1,
        "--shape",
        "16,16",
        "-o",
        svg.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(json(&o)["rows"], 16);
    let o = laycert(&["draw", a, "--banks", "2", "-o", banks.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "a TV layout has no bank map");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn output_is_deterministic() {
    let a = laycert(&["show", TILE, "--json"]);
    let b = laycert(&["show", TILE, "--json"]);
    assert_eq!(a.stdout, b.stdout);
}

#[test]
fn equiv_proves_cross_system_pairs_and_writes_a_checkable_certificate() {
    let tmp = common::scratch();
    let dir = tmp.path();
    let cert = dir.join("mma.json");
    let cert = cert.to_str().unwrap();
    let o = laycert(&[
        "equiv",
        "#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [1, 1], instrShape = [16, 8]}>",
        "((4,8),(2,2)):((32,1),(16,8)) -> (16,8)",
        "--shape",
        "16,8",
        "--cert",
        cert,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(first_line(&o), "equivalent");
    assert!(stdout(&o).contains("exhaustive proved") && stdout(&o).contains("smt proved"));
    let c = laycert(&["check", cert]);
    assert_eq!(
        (c.status.code(), first_line(&c)),
        (Some(0), "valid".to_string())
    );
    // Tampering with one stride of the claim is caught.
    let text = std::fs::read_to_string(cert)
        .unwrap()
        .replacen("32, 1", "32, 2", 1);
    std::fs::write(cert, text).unwrap();
    let c = laycert(&["check", cert]);
    assert_eq!(c.status.code(), Some(1));
    assert!(first_line(&c).starts_with("invalid:"), "{}", first_line(&c));
    let missing = laycert(&["check", "/nonexistent/cert.json"]);
    assert_eq!(missing.status.code(), Some(2));
    // A file that is not one JSON object is bad input (exit 2) that says so, with the place:
    // truncated, nested past the parser's depth, a number out of range, an array.
    let whole = std::fs::read_to_string(cert).unwrap();
    let deep = "[".repeat(200) + &"]".repeat(200);
    for (text, want) in [
        (&whole[..whole.len() / 2], "not JSON: EOF while parsing"),
        (deep.as_str(), "not JSON: recursion limit exceeded"),
        (r#"{"threads": 1e400}"#, "not JSON: number out of range"),
        ("[1, 2]", "a certificate is a JSON object"),
    ] {
        std::fs::write(cert, text).unwrap();
        let c = laycert(&["check", cert]);
        assert_eq!(c.status.code(), Some(2), "{want}: {}", stdout(&c));
        assert!(stderr(&c).contains(want), "{want}: {}", stderr(&c));
    }
}

#[test]
fn equiv_refutes_with_a_counterexample_and_exit_1() {
    let o = laycert(&["equiv", "(4,8):(8,1)", "S[(8,4):(1,8)]", "--shape", "4,8"]);
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    assert_eq!(first_line(&o), "not equivalent");
    assert!(out.contains("counterexample at logical (0,1):"), "{out}");
    assert!(
        out.contains("left:  {{m:1}}") && out.contains("right: {{m:8}}"),
        "{out}"
    );
    let j = json(&laycert(&[
        "--json",
        "equiv",
        "(4,8):(8,1)",
        "S[(8,4):(1,8)]",
        "--shape",
        "4,8",
    ]));
    assert_eq!(j["verdict"], "not equivalent");
    assert_eq!(j["counterexample"]["coord"], serde_json::json!([0, 1]));
}

// In-dims aliasing one axis add (layout::relation's module doc): register=[[1]], reg=[[3]]
// holds cell 2 at reg 1+1 = 2, where S[(2,2):(1@reg,1@reg)] has reg 1 (cells 0 and 1 agree), in
// either in-dim order; with reg=[[2]] the two are the same relation.
#[test]
fn equiv_adds_aliased_in_dims_whatever_their_order() {
    let axe = "S[(2,2):(1@reg,1@reg)]";
    for lin in [
        "#ttg.linear<{register=[[1]], reg=[[3]]}>",
        "#ttg.linear<{reg=[[3]], register=[[1]]}>",
    ] {
        let o = laycert(&["equiv", lin, axe, "--shape", "4"]);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        let out = stdout(&o);
        assert!(out.contains("counterexample at logical (2):"), "{out}");
        assert!(
            out.contains("left:  {{reg:2}}") && out.contains("right: {{reg:1}}"),
            "{out}"
        );
    }
    for lin in [
        "#ttg.linear<{register=[[1]], reg=[[2]]}>",
        "#ttg.linear<{reg=[[2]], register=[[1]]}>",
    ] {
        let o = laycert(&["equiv", lin, axe, "--shape", "4"]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert_eq!(first_line(&o), "equivalent");
    }
}

#[test]
fn equiv_bad_input_exits_2() {
    let o = laycert(&["equiv", "S[(8,0):(1,1)]", "S[8:1]"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains('^'));
    let o = laycert(&["equiv", "S[8:1]", "S[4:1]"]);
    assert_eq!(o.status.code(), Some(2), "sizes differ: {}", stderr(&o));
}

#[test]
fn prove_property_answers_and_exits_by_verdict() {
    let o = laycert(&["prove-property", "injective", "(4,2):(2,1)"]);
    assert_eq!(
        (o.status.code(), first_line(&o)),
        (Some(0), "proved".to_string())
    );
    let o = laycert(&["prove-property", "injective", "(2,2):(1,1)"]);
    assert_eq!(
        (o.status.code(), first_line(&o)),
        (Some(1), "refuted".to_string())
    );
    assert!(
        stdout(&o).contains("reach the same point"),
        "{}",
        stdout(&o)
    );
    let o = laycert(&["prove-property", "surjective", "4:2"]);
    assert_eq!(o.status.code(), Some(1));
    let o = laycert(&["prove-property", "lovely", "4:2"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn axe_algebra_commands_print_the_result_first_and_exit_1_on_no() {
    let run = |args: &[&str]| {
        let o = laycert(args);
        (o.status.code(), first_line(&o))
    };
    assert_eq!(
        run(&[
            "canon",
            "S[(2,2,8,4):(2@warpid,1@warpid,4@laneid,1@laneid)]",
            "--target",
            "cuda"
        ]),
        (Some(0), "S[128:1@tx]".to_string())
    );
    assert_eq!(
        run(&["canon", "S[(3,4,5,2):(20,5,1,60)]"]),
        (Some(0), "S[(60,2):(1,60)]".to_string())
    );
    assert_eq!(
        run(&["group", "S[30:1]", "--shape", "6,5", "--shape", "2,15"]),
        (Some(0), "S[(2,3,5):(15,5,1)]".to_string())
    );
    assert_eq!(
        run(&["group", "S[12:1]", "--shape", "3,4", "--shape", "2,6"]).0,
        Some(1)
    );
    assert_eq!(
        run(&[
            "tile",
            "S[(2,4):(1,2)]",
            "S[(8,8):(8,1)]",
            "--inner-shape",
            "2,4",
            "--outer-shape",
            "8,8"
        ]),
        (Some(0), "S[(8,2,32):(64,1,2)]".to_string())
    );
    assert_eq!(
        run(&[
            "direct-sum",
            "S[(2,2):(8,2)]",
            "S[(2,2):(4,1)]",
            "--shapes",
            "2,2/2,2"
        ]),
        (Some(0), "S[16:1]".to_string())
    );
    let (code, line) = run(&[
        "tile-of",
        "S[16:1]",
        "--shape",
        "4,4",
        "--inner",
        "S[(2,2):(4,1)]",
        "--inner-shape",
        "2,2",
    ]);
    assert_eq!(code, Some(1));
    assert!(line.starts_with("not a tile: "), "{line}");
    assert_eq!(
        run(&[
            "slice",
            "S[(8,8):(8,1)]",
            "--shape",
            "64",
            "--region",
            "5:8"
        ]),
        (Some(0), "S[3:1] + 5".to_string())
    );
    assert_eq!(
        run(&["slice", "S[8:1]", "--shape", "8", "--region", "5"]).0,
        Some(2)
    );
}

#[test]
fn cute_algebra_prints_like_pycute() {
    let run = |args: &[&str]| {
        let o = laycert(args);
        (o.status.code(), first_line(&o))
    };
    assert_eq!(
        run(&["cute", "coalesce", "(4,5):(1,4)"]),
        (Some(0), "20:1".to_string())
    );
    assert_eq!(
        run(&["cute", "compose", "(6,2):(8,2)", "(4,3):(3,1)"]),
        (Some(0), "((2, 2), 3):((24, 2), 8)".to_string())
    );
    assert_eq!(
        run(&["cute", "complement", "4:2", "24"]),
        (Some(0), "(2, 3):(1, 8)".to_string())
    );
    assert_eq!(
        run(&["cute", "left-inverse", "(4,3):(3,1)"]),
        (Some(0), "(3, 4):(4, 1)".to_string())
    );
    assert_eq!(
        run(&["cute", "compose", "1:1", "4:1"]),
        (Some(0), "4:1".to_string())
    );
    assert_eq!(
        run(&["cute", "left-inverse", "4:2"]),
        (Some(0), "(2, 4):(0, 1)".to_string())
    );
    let o = laycert(&["cute", "compose", "(4,8):(8,1)", "4:3"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("stride divisibility"), "{}", stderr(&o));
}

#[test]
fn slice_of_a_swizzled_layout_keeps_the_swizzle_over_an_offset() {
    let o = laycert(&[
        "slice",
        "Sw<3,3,3> o (8,64):(64,1)",
        "--shape",
        "8,64",
        "--region",
        "2:4,8:16",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(first_line(&o), "Sw<3,3,3> o 136 o (2, 8):(64, 1)");
    // The offset form is a layout the deciders take; the offset is part of the address the
    // swizzle sees, so another offset is another map.
    let e = laycert(&[
        "equiv",
        "Sw<3,3,3> o 136 o (2,8):(64,1)",
        "Sw<3,3,3> o 8 o (2,8):(64,1)",
    ]);
    assert_eq!(first_line(&e), "not equivalent", "{}", stdout(&e));
    let o = laycert(&[
        "slice",
        "Sw<1,0,5> o (4,4):(1,16)",
        "--shape",
        "16",
        "--region",
        "1:12",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        first_line(&o).starts_with("not a layout of this form"),
        "{}",
        first_line(&o)
    );
}

#[test]
fn equiv_axes_maps_a_users_axis_names_onto_the_registry() {
    let (a, b) = ("S[(4,8):(8@lane_id,1@lane_id)]", "S[32:1@laneid]");
    // Undeclared, lane_id reads as a misspelled laneid: refused with the registry's name.
    let o = laycert(&["equiv", a, b]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("did you mean @laneid"),
        "{}",
        stderr(&o)
    );
    let o = laycert(&["equiv", a, b, "--axes", "lane_id=laneid"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(first_line(&o), "equivalent");
    // A CuTe layout's implicit axis m renamed: a CuTe 32:1 is the lane layout.
    let o = laycert(&["equiv", "32:1", b, "--axes", "m=laneid"]);
    assert_eq!(first_line(&o), "equivalent", "{}", stderr(&o));
    for bad in ["lane_id", "lane_id=laneid,lane_id=tx", "lane id=laneid"] {
        let o = laycert(&["equiv", a, b, "--axes", bad]);
        assert_eq!(o.status.code(), Some(2), "{bad}");
        assert!(stderr(&o).contains("--axes"), "{bad}: {}", stderr(&o));
    }
    // Renaming onto an axis the layout already has would add coordinates: refused.
    let o = laycert(&[
        "equiv",
        "S[(4,8):(8@lane_id,1@laneid)]",
        b,
        "--axes",
        "lane_id=laneid",
    ]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn gen_copy_prints_a_validated_kernel_with_its_certificate() {
    let o = laycert(&[
        "gen",
        "copy",
        "--src",
        "(128,128):(128,1)",
        "--dst",
        "(128,128):(1,128)",
        "--shape",
        "128,128",
        "--dtype",
        "f16",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(first_line(&o).starts_with("// laycert copy kernel"));
    assert!(out.contains("extern \"C\" __global__"));
    assert!(out.contains("// proved data movement is the identity: dst["));
    assert!(out.contains("// proved tile stage is the identity"));
    assert!(out.contains("// certificate sha256:"));
}

#[test]
fn gen_copy_writes_the_kernel_file_and_summarizes() {
    let tmp = common::scratch();
    let path = tmp.path().join("gen.cu");
    let p = path.to_str().unwrap();
    let mut args = TRANSPOSE_64_F32.to_vec();
    args.extend(["-o", p]);
    let o = laycert(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(first_line(&o).starts_with(&format!("wrote {p}: laycert_copy")));
    assert!(stdout(&o).contains("predicted shared loads:"));
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("laycert_copy"));
    let _ = std::fs::remove_file(&path);
}

#[test]
fn gen_copy_json_and_no_swizzle_baseline() {
    let args = |extra: &[&'static str]| {
        let mut a = vec![
            "gen",
            "copy",
            "--json",
            "--src",
            "(64,64):(64,1)",
            "--dst",
            "(64,64):(1,64)",
            "--shape",
            "64,64",
            "--dtype",
            "f32",
            "--tile-bytes",
            "128",
        ];
        a.extend_from_slice(extra);
        a
    };
    let v = json(&laycert(&args(&[])));
    assert_eq!(v["predicted_per_launch"]["shared_loads"]["conflicts"], 0);
    let flat = json(&laycert(&args(&["--no-swizzle"])));
    assert_eq!(flat["smem"], "Sw<0,0,0> o (32, 32):(1, 32)");
    assert!(
        flat["predicted_per_launch"]["shared_loads"]["conflicts"]
            .as_i64()
            .unwrap()
            > 0
    );
}

#[test]
fn gen_copy_rejects_bad_input_with_exit_2() {
    let o = laycert(&[
        "gen",
        "copy",
        "--src",
        "(64,64):(64,1)",
        "--dst",
        "(64,64):(1,32)",
        "--shape",
        "64,64",
        "--dtype",
        "f32",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("destination layout"), "{}", stderr(&o));
    let mut f64_args = TRANSPOSE_64_F32;
    f64_args[9] = "f64";
    let o = laycert(&f64_args);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("dtype \"f64\""), "{}", stderr(&o));
}

#[test]
fn gpu_bench_checks_on_a_gpu_or_skips_visibly() {
    let o = laycert(&[
        "gpu",
        "bench",
        "--src",
        "(256,256):(256,1)",
        "--dst",
        "(256,256):(1,256)",
        "--shape",
        "256,256",
        "--dtype",
        "bf16",
        "--warmup",
        "1",
        "--reps",
        "3",
    ]);
    match o.status.code() {
        Some(3) => {
            assert!(first_line(&o).starts_with("SKIP (no CUDA device)"));
            eprintln!("{}", first_line(&o));
        }
        Some(0) => assert!(first_line(&o).starts_with("correct: all 65536 elements")),
        other => panic!("exit {other:?}: {}{}", stdout(&o), stderr(&o)),
    }
}

#[test]
fn linear_compose_and_invert_and_compose_reproduce_tritons_vectors() {
    let l1 = " - in1=1 -> (1, 1)\n   in1=2 -> (0, 1)\n - in2=1 -> (1, 0)\n   in2=2 -> (1, 2)\nwhere out dims are: [out1 (size 4), out2 (size 4)]";
    let l2 = " - out1=1 -> (2, 2)\n   out1=2 -> (1, 0)\n - out2=1 -> (1, 1)\n   out2=2 -> (2, 1)\nwhere out dims are: [out3 (size 4), out4 (size 4)]";
    let o = laycert(&["linear", "compose", l2, l1]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        " - in1=1 -> (3, 3)\n   in1=2 -> (1, 1)\n - in2=1 -> (2, 2)\n   in2=2 -> (0, 3)\nwhere out dims are: [out3 (size 4), out4 (size 4)]\n"
    );
    let a = " - in1=1 -> (2)\n   in1=2 -> (1)\n   in1=4 -> (4)\nwhere out dims are: [out (size 8)]";
    let b = " - in2=1 -> (4)\n   in2=2 -> (1)\n   in2=4 -> (2)\nwhere out dims are: [out (size 8)]";
    let v = json(&laycert(&["linear", "invert-and-compose", a, b, "--json"]));
    assert_eq!(
        v["text"],
        " - in1=1 -> (4)\n   in1=2 -> (2)\n   in1=4 -> (1)\nwhere out dims are: [in2 (size 8)]"
    );
    // Mismatched dims: exit 2 with the reason.
    let o = laycert(&["linear", "compose", l1, l1]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("out-dim out1"), "{}", stderr(&o));
}

/// The help of `linear invert-and-compose` promises what the result is: an input of B per input
/// of A, with free variables 0, which with a non-injective B is not always the input of fewest
/// set bits (here `in = 3` where `in = 4` holds the same element).
#[test]
fn invert_and_compose_help_promises_free_variables_zero_only() {
    let o = laycert(&["linear", "invert-and-compose", "--help"]);
    let help = stdout(&o);
    assert!(help.contains("free variables are 0"), "{help}");
    assert!(
        help.contains("not always the input with the fewest set bits"),
        "{help}"
    );
    assert!(!help.contains("minimal"), "{help}");
    let (a, b) = (
        "#ttg.linear<{x = [[3]]}>",
        "#ttg.linear<{in = [[1], [2], [3]]}>",
    );
    let v = json(&laycert(&["linear", "invert-and-compose", a, b, "--json"]));
    assert_eq!(
        v["text"],
        " - x=1 -> (3)\nwhere out dims are: [in (size 8)]"
    );
}

#[test]
fn bank_conflicts_counts_by_simulator_and_lemma() {
    let o = laycert(&[
        "bank-conflicts",
        "--regs",
        F2_READ,
        "--smem",
        "(128,128):(128,1)",
        "--dtype",
        "f16",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        first_line(&o),
        "16 wavefronts per instruction (max), 16 instructions per warp, 8-byte vectors"
    );
    // The same tile as an F2 memory layout: the lemma agrees.
    let smem = "#ttg.linear<{offset=[[0,1],[0,2],[0,4],[0,8],[0,16],[0,32],[0,64],[1,0],[2,0],[4,0],[8,0],[16,0],[32,0],[64,0]]}>";
    let v = json(&laycert(&[
        "bank-conflicts",
        "--regs",
        F2_READ,
        "--smem",
        smem,
        "--dtype",
        "f16",
        "--json",
    ]));
    assert_eq!(v["lemma_9_4"], 16);
    // Reads along columns of a row-major tile: registers 4 and 5 hold 4 contiguous f16, so
    // 32- and 64-bit accesses after a register permutation, not 128-bit.
    assert_eq!(
        v["instructions"][0],
        serde_json::json!(["ld/st.shared 32-bit", true])
    );
    assert_eq!(v["instructions"][1], serde_json::json!(["64-bit", true]));
    assert_eq!(v["instructions"][2], serde_json::json!(["128-bit", false]));
    assert_eq!(v["simulator"]["total_wavefronts"], 2048);
    let o = laycert(&[
        "bank-conflicts",
        "--regs",
        F2_READ,
        "--smem",
        smem,
        "--dtype",
        "f17",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--dtype"));
}

/// `--smem` takes Triton's shared attributes, and the `#ttg.linear` text laycert prints for
/// them (its empty `block = []` is no second input), on `--shape`: `swizzled_shared` vec=8,
/// perPhase=1, maxPhase=8 and the 128-byte `nvmma_shared` of f16 on 64x64 count exactly the
/// wavefronts of CuTe's `Sw<3,3,3> o (64,64):(64,1)`, for 16-byte row reads and for an
/// ldmatrix-style read (mma operand A), at every vector width.
#[test]
fn bank_conflicts_reads_triton_shared_attributes_like_their_cute_swizzle() {
    let swizzled = "#ttg.swizzled_shared<{vec=8, perPhase=1, maxPhase=8, order=[1,0]}>";
    let nvmma = "#ttg.nvmma_shared<{swizzlingByteWidth=128, transposed=false, elementBitWidth=16}>";
    let o = laycert(&["convert", "--to", "linear", swizzled, "--shape", "64,64"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let printed = first_line(&o);
    assert!(printed.ends_with("block = []}>"), "{printed}");
    let cute = "Sw<3,3,3> o (64,64):(64,1)";
    let rows = "#ttg.linear<{register=[[0,1],[0,2],[0,4],[0,16],[0,32],[32,0]], \
                lane=[[1,0],[2,0],[4,0],[8,0],[0,8]], warp=[[16,0]]}>";
    let dot_a = "#ttg.dot_op<{opIdx = 0, parent = #ttg.nvidia_mma<{versionMajor = 2, \
                 versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 8]}>, kWidth = 2}>";
    let run = |regs: &str, smem: &str, vec: Option<&str>| {
        let mut args = vec![
            "bank-conflicts",
            "--regs",
            regs,
            "--smem",
            smem,
            "--dtype",
            "f16",
            "--shape",
            "64,64",
        ];
        args.extend(vec.iter().flat_map(|v| ["--vec", v]));
        let o = laycert(&args);
        assert_eq!(o.status.code(), Some(0), "{smem}: {}", stderr(&o));
        stdout(&o)
    };
    for (regs, vecs, head) in [
        (
            rows,
            &["1", "2", "4", "8"][..],
            "4 wavefronts per instruction (max), 8 instructions per warp, 16-byte vectors",
        ),
        (
            dot_a,
            &["1", "2"][..],
            "1 wavefronts per instruction (max), 16 instructions per warp, 4-byte vectors",
        ),
    ] {
        for vec in std::iter::once(None).chain(vecs.iter().copied().map(Some)) {
            let want = run(regs, cute, vec);
            let want: Vec<&str> = want.lines().collect();
            if vec.is_none() {
                assert_eq!(want[0], head);
            }
            for smem in [swizzled, nvmma, printed.as_str()] {
                let got = run(regs, smem, vec);
                let got: Vec<&str> = got.lines().collect();
                // The simulator's lines are CuTe's; the F2 layout adds lemma 9.4, which agrees.
                assert_eq!(got[..4], want[..4], "{smem} --vec {vec:?}");
                assert!(got[4].ends_with("(agrees)"), "{}", got[4]);
            }
        }
    }
    // The swizzle is what removes the conflicts: row-major memory has them.
    let plain = run(rows, "(64,64):(64,1)", None);
    assert!(
        plain.starts_with("32 wavefronts per instruction"),
        "{plain}"
    );
}

/// `--vec` must be a vector width (a power of two, at most 16 bytes per lane): 0, 3 or 16 f16
/// elements are refused as such, exit 2, listing the widths; a width the layouts do not make
/// contiguous is refused for that reason.
#[test]
fn bank_conflicts_refuses_an_invalid_vector_width_as_such() {
    let run = |vec: &str, smem: &str, dtype: &str| {
        laycert(&[
            "bank-conflicts",
            "--regs",
            F2_READ,
            "--smem",
            smem,
            "--dtype",
            dtype,
            "--vec",
            vec,
        ])
    };
    let rows = "(128,128):(128,1)";
    for (vec, dtype, widths) in [
        ("0", "f16", "1, 2, 4 or 8 elements of 2 bytes"),
        ("3", "f16", "1, 2, 4 or 8 elements of 2 bytes"),
        ("16", "f16", "1, 2, 4 or 8 elements of 2 bytes"),
        ("4", "f64", "1 or 2 elements of 8 bytes"),
        ("32", "i8", "1, 2, 4, 8 or 16 elements of 1 byte"),
    ] {
        let o = run(vec, rows, dtype);
        assert_eq!(o.status.code(), Some(2), "--vec {vec}");
        let e = stderr(&o);
        assert!(
            e.starts_with(&format!("error: --vec {vec}: invalid vector width")),
            "{e}"
        );
        assert!(e.contains(widths), "{e}");
        assert!(!e.contains("contiguous"), "{e}");
    }
    // A valid width the layouts do not make contiguous: F2_READ holds 4 consecutive elements
    // of a row.
    let o = run("8", rows, "f16");
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--vec 8: the widest contiguous vector here has 4 elements"),
        "{}",
        stderr(&o)
    );
    assert_eq!(run("4", rows, "f16").status.code(), Some(0));
}

#[test]
fn swizzle_finds_the_conflict_free_transpose_layout() {
    let o = laycert(&[
        "swizzle", "--write", F2_WRITE, "--read", F2_READ, "--dtype", "f16",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        first_line(&o).starts_with("#ttg.linear<{offset = "),
        "{out}"
    );
    assert!(out.contains("write: 16-byte vectors"), "{out}");
    assert!(
        out.contains("4 wavefronts per instruction (ideal 4)"),
        "{out}"
    );
    let v = json(&laycert(&[
        "swizzle", "--write", F2_WRITE, "--read", F2_READ, "--dtype", "f16", "--json",
    ]));
    assert_eq!(v["plan"]["common_vector"], 8);
    assert_eq!(v["plan"]["read"]["wavefronts_per_instruction"], 4);
}

#[test]
fn shuffle_prints_a_simulated_plan_or_says_shared_memory() {
    let a = "#ttg.linear<{register=[[1,0]], lane=[[2,0]]}>";
    let b = "#ttg.linear<{register=[[2,0]], lane=[[1,0]]}>";
    let o = laycert(&["shuffle", a, b]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // x1 and x2 swap lanes in one shuffle; x0 and x3 stay in their lane (register moves).
    assert!(
        first_line(&o).starts_with("1 shuffles in 1 rounds"),
        "{}",
        stdout(&o)
    );
    assert!(
        stdout(&o).contains("in-lane moves: 2 vector(s)"),
        "{}",
        stdout(&o)
    );
    let v = json(&laycert(&["shuffle", a, b, "--json"]));
    assert_eq!(v["plan"]["rounds"], 1);
    assert_eq!(v["plan"]["moves"].as_array().map(Vec::len), Some(2));
    let o = laycert(&["shuffle", F2_WRITE, F2_READ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("needs shared memory"), "{}", stderr(&o));
}

/// Warps that hold the same elements under A and B, at places that differ from warp to warp,
/// are refused for that reason (not "elements move between warps"); a `#ttg.linear` without
/// Triton's size-1 `block = []` converts from the attribute it was printed from.
#[test]
fn shuffle_refusals_say_the_true_reason() {
    let blocked = "#ttg.blocked<{sizePerThread=[1,4], threadsPerWarp=[8,4], warpsPerCTA=[2,1], \
                   order=[1,0]}>";
    let skewed = "#ttg.linear<{register=[[0,1],[0,2]], lane=[[0,4],[0,8],[1,0],[2,0],[4,0]], \
                  warp=[[8,1]]}>";
    let o = laycert(&["shuffle", blocked, skewed, "--shape", "16,16"]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains("every warp holds the same elements in A and in B"),
        "{e}"
    );
    assert!(e.contains("warp=1 differ ([8, 0] in A, [8, 1] in B"), "{e}");
    assert!(!e.contains("move between warps"), "{e}");
    let printed = "#ttg.linear<{register=[[0,1],[0,2]], lane=[[0,4],[0,8],[1,0],[2,0],[4,0]], \
                   warp=[[8,0]]}>";
    let o = laycert(&["shuffle", blocked, printed, "--shape", "16,16"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        first_line(&o).starts_with("0 shuffles in 0 rounds"),
        "{}",
        stdout(&o)
    );
}

/// The audit's pair: A and B share a register basis but B's lanes start at an XOR
/// combination, so packing two f16 (or four i8) per shuffle would swap elements; the plan
/// moves single elements (with f32 it always did) and its simulation passes.
#[test]
fn shuffle_packs_only_vectors_that_keep_their_element_order() {
    let a = "#ttg.linear<{register=[[1]], lane=[[2],[4],[8],[16],[32]], warp=[], block=[]}>";
    let b = "#ttg.linear<{register=[[1]], lane=[[3],[4],[8],[16],[32]], warp=[], block=[]}>";
    for dtype in ["f16", "i8", "f32"] {
        let o = laycert(&["shuffle", a, b, "--shape", "64", "--dtype", dtype]);
        assert_eq!(o.status.code(), Some(0), "{dtype}: {}", stderr(&o));
        let out = stdout(&o);
        assert!(
            out.starts_with("0 shuffles in 0 rounds, 1 element(s) per shuffle"),
            "{out}"
        );
        assert!(out.contains("in-lane moves: 64 vector(s)"), "{out}");
    }
}

/// The audit's completeness cases: Triton 3.9's `#ttg.generic_linear` print reads as the same
/// bases spelled `#ttg.linear` (and prints back as Triton prints it: `generic_linear`, as the
/// bases are no permutation), and `nvmma_shared` with `fp4Padded` imports to Triton's
/// layout (offset bit 3 a zero basis: the padding) instead of a refusal.
#[test]
fn linear_from_reads_generic_linear_and_fp4_padded_nvmma() {
    let bases = "register = [[1]], lane = [[3], [4], [8], [16], [32]], warp = [], block = []";
    let generic = format!("#ttg.generic_linear<{{{bases}}}>");
    let o = laycert(&["linear", "from", &generic, "--shape", "64"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(first_line(&o), generic);
    let o = laycert(&[
        "equiv",
        &generic,
        &format!("#ttg.linear<{{{bases}}}>"),
        "--shape",
        "64",
    ]);
    assert_eq!(first_line(&o), "equivalent", "{}", stderr(&o));
    let fp4 = "#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, \
               elementBitWidth = 8, fp4Padded = true}>";
    let o = laycert(&["linear", "from", fp4, "--shape", "8,64"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        first_line(&o),
        "#ttg.linear<{offset = [[0, 1], [0, 2], [0, 4], [0, 0], [0, 8], [0, 16], [0, 32], \
         [1, 8], [2, 16], [4, 32]], block = []}>"
    );
}

const F2_WRITE: &str = "#ttg.linear<{register=[[0,1],[0,2],[0,4],[0,8],[1,0],[2,0]], lane=[[0,16],[0,32],[0,64],[4,0],[8,0]], warp=[[16,0],[32,0],[64,0]]}>";
const F2_READ: &str = "#ttg.linear<{register=[[1,0],[2,0],[4,0],[8,0],[0,1],[0,2]], lane=[[16,0],[32,0],[64,0],[0,4],[0,8]], warp=[[0,16],[0,32],[0,64]]}>";

#[test]
fn prove_prints_one_line_per_rule_and_exits_1_on_refuted() {
    let tmp = common::scratch();
    let d = tmp.path();
    let f = d.join("r.rules");
    std::fs::write(&f, RULES).unwrap();
    let junit = d.join("junit.xml");
    let certs = d.join("certs");
    let o = laycert(&[
        "prove",
        f.to_str().unwrap(),
        "--junit",
        junit.to_str().unwrap(),
        "--cert-dir",
        certs.to_str().unwrap(),
    ]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[0].starts_with("PROVED merge (exhaustive, 224 instances"),
        "{out}"
    );
    assert!(
        lines[1].starts_with("REFUTED merge_wrong: params e1="),
        "{out}"
    );
    assert!(lines[1].contains("coordinate"), "{out}");
    assert!(
        lines[2].starts_with("UNKNOWN unbounded: parameter e has no bounds"),
        "{out}"
    );
    assert!(
        lines[3].contains("3 rules: 1 proved, 1 refuted, 1 unknown"),
        "{out}"
    );
    let xml = std::fs::read_to_string(&junit).unwrap();
    // UNKNOWN is a failure unless --allow-unknown.
    assert!(
        xml.contains("failures=\"2\"") && xml.contains("skipped=\"0\""),
        "{xml}"
    );
    let cert = certs.join("merge.cert.json");
    let c = laycert(&["check", cert.to_str().unwrap()]);
    assert_eq!(first_line(&c), "valid", "{}", stdout(&c));
    let text = std::fs::read_to_string(&cert)
        .unwrap()
        .replace("\"instances\": \"224\"", "\"instances\": \"223\"");
    std::fs::write(&cert, text).unwrap();
    let c = laycert(&["check", cert.to_str().unwrap()]);
    assert_eq!(c.status.code(), Some(1));
    assert!(first_line(&c).starts_with("invalid"));
}

#[test]
fn prove_exits_3_on_unknown_unless_allowed_and_json_is_one_object() {
    let tmp = common::scratch();
    let d = tmp.path();
    let f = d.join("r.rules");
    std::fs::write(
        &f,
        "rule u forall e : int where e >= 1\n  S[e:1] == S[e:1]\n",
    )
    .unwrap();
    assert_eq!(
        laycert(&["prove", f.to_str().unwrap()]).status.code(),
        Some(3)
    );
    assert_eq!(
        laycert(&["prove", "--strict", f.to_str().unwrap()])
            .status
            .code(),
        Some(3)
    );
    let allowed = laycert(&["prove", "--allow-unknown", f.to_str().unwrap()]);
    assert_eq!(allowed.status.code(), Some(0));
    let junit = d.join("j.xml");
    laycert(&[
        "prove",
        f.to_str().unwrap(),
        "--junit",
        junit.to_str().unwrap(),
    ]);
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("<failure message=\"UNKNOWN\">"), "{xml}");
    let v = json(&laycert(&["--json", "prove", f.to_str().unwrap()]));
    assert_eq!(v["unknown"], 1);
    assert_eq!(v["rules"][0]["verdict"], "UNKNOWN");
}

#[test]
fn prove_rejects_a_bad_rule_file_with_a_caret() {
    let tmp = common::scratch();
    let d = tmp.path();
    let f = d.join("r.rules");
    std::fs::write(&f, "rule r forall x : nat\n  S[x:1] == S[x:1]\n").unwrap();
    let o = laycert(&["prove", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("r.rules:1:19: error: rule file"),
        "{}",
        stderr(&o)
    );
    assert!(stderr(&o).contains("^^^"), "{}", stderr(&o));
}

#[test]
fn prove_rejects_ill_typed_rules_and_huge_limits_as_bad_input() {
    let tmp = common::scratch();
    let d = tmp.path();
    for (text, at) in [
        ("rule r\n  foo((4):(1)) == 4:1\n", ":2:3: error"),
        (
            "rule r forall e : int where 1 <= e <= 4\n  S[4:1@e] == S[4:1]\n",
            ":2:9: error",
        ),
        ("rule r\n  S[(4,y):(1,4)] == S[16:1]\n", ":2:8: error"),
    ] {
        let f = d.join("r.rules");
        std::fs::write(&f, text).unwrap();
        let o = laycert(&["prove", f.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{text}: {}", stdout(&o));
        assert!(stderr(&o).contains(at), "{text}: {}", stderr(&o));
        assert!(stderr(&o).contains('^'), "{}", stderr(&o));
    }
    let f = d.join("ok.rules");
    std::fs::write(&f, "rule r S[4:1] == 4:1\n").unwrap();
    let o = laycert(&[
        "prove",
        "--max-instances",
        "18446744073709551615",
        f.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("above the maximum"), "{}", stderr(&o));
}

/// A literal that uses no parameter and is never defined is bad input (exit 2, the place and a
/// caret), not REFUTED or a vacuous UNKNOWN (the audit's p1, p3, p6 and o7).
#[test]
fn prove_rejects_constant_literals_that_are_never_defined() {
    let tmp = common::scratch();
    let d = tmp.path();
    for (text, at, what) in [
        (
            "rule i8\n  S[2:1] + 1 + 2 === S[2:1] + 3\n",
            ":2:16: error",
            "an offset on a new axis",
        ),
        (
            "rule z\n  (2,0):(1,1) == (2,0):(1,1)\n",
            ":2:3: error",
            "below 1",
        ),
        (
            "rule z\n  (2,3):(1,2,3) == (2,3):(1,2,3)\n",
            ":2:3: error",
            "not congruent",
        ),
        (
            "rule o7\n  S[1:((0 - 9223372036854775807 - 1) % (0 - 1))] == S[1:0]\n",
            ":2:8: error",
            "integer overflow in remainder",
        ),
    ] {
        let f = d.join("c.rules");
        std::fs::write(&f, text).unwrap();
        let o = laycert(&["prove", f.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{text}: {}", stdout(&o));
        assert!(stdout(&o).is_empty(), "{}", stdout(&o));
        let err = stderr(&o);
        assert!(err.contains(&format!("c.rules{at}")), "{text}: {err}");
        assert!(err.contains(what) && err.contains('^'), "{text}: {err}");
    }
}

#[test]
fn prove_refutes_cute_against_axe_over_the_cute_top_shape() {
    // Regression: z3 compared the sides at one flat index and proved this false rule. The
    // rule names its domain, the CuTe side's (spec certify.md 1b).
    let tmp = common::scratch();
    let d = tmp.path();
    let f = d.join("r.rules");
    std::fs::write(
        &f,
        "rule r forall a b : int where 1 <= a <= 1000, 1 <= b <= 1000, a % 10 == 5, b % 10 == 5\n  (a, b):(1, a) == S[(b, a):(a, 1)] over lhs\n",
    )
    .unwrap();
    let certs = d.join("certs");
    let o = laycert(&[
        "prove",
        f.to_str().unwrap(),
        "--cert-dir",
        certs.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(
        first_line(&o).starts_with("REFUTED r: params a="),
        "{}",
        stdout(&o)
    );
    let c = laycert(&["check", certs.join("r.cert.json").to_str().unwrap()]);
    assert!(stdout(&c).contains("REFUTED"), "{}", stdout(&c));
}

#[test]
fn validate_proves_and_refutes_logged_pairs() {
    let tmp = common::scratch();
    let d = tmp.path();
    let f = d.join("pairs.jsonl");
    std::fs::write(
        &f,
        "{\"before\": \"(4,5):(1,4)\", \"after\": \"20:1\", \"relation\": \"equal\"}\n\
         {\"name\": \"bad\", \"before\": \"S[(4,8):(8,1)]\", \"after\": \"S[32:2]\"}\n",
    )
    .unwrap();
    let o = laycert(&["validate", f.to_str().unwrap()]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.starts_with("PROVED line1"), "{out}");
    assert!(
        out.contains("REFUTED bad: params (none), coordinate [1]"),
        "{out}"
    );
}

#[test]
fn simplify_and_equiv_expr_write_certificates_that_check() {
    let tmp = common::scratch();
    let d = tmp.path();
    let r = d.join("r.rules");
    std::fs::write(
        &r,
        "rule idem forall L : cute(2, 4, 4)\n  coalesce(coalesce(L)) === coalesce(L)\n",
    )
    .unwrap();
    let cert = d.join("e.json");
    let o = laycert(&[
        "simplify",
        "coalesce(compose((4,8):(1,4), (2,4):(1,2)))",
        "--rules",
        r.to_str().unwrap(),
        "--cert",
        cert.to_str().unwrap(),
    ]);
    assert_eq!(first_line(&o), "8:1", "{}", stdout(&o));
    let c = laycert(&["check", cert.to_str().unwrap()]);
    assert_eq!(first_line(&c), "valid", "{}", stdout(&c));
    let o = laycert(&[
        "equiv-expr",
        "coalesce((2,2):(1,2))",
        "coalesce(coalesce((2,2):(1,2)))",
        "--rules",
        r.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(first_line(&o).starts_with("equal"));
    // A corpus rule with integer parameters (f2_swizzle_involution) rewrites, and its
    // certificate binds them.
    let cert = d.join("f2.json");
    let o = laycert(&[
        "simplify",
        "f2_compose(swizzle_map(1, 0, 2, 6), swizzle_map(1, 0, 1 + 1, 6))",
        "--cert",
        cert.to_str().unwrap(),
    ]);
    assert_eq!(first_line(&o), "swizzle_map(0, 0, 1, 6)", "{}", stdout(&o));
    let text = std::fs::read_to_string(&cert).unwrap();
    assert!(text.contains("f2_swizzle_involution"), "{text}");
    let c = laycert(&["check", cert.to_str().unwrap()]);
    assert_eq!(first_line(&c), "valid", "{}", stdout(&c));
}

/// `equiv-expr --shape` is checked as `equiv` checks it: a shape that does not fit the
/// expressions is bad input (it once printed `equal` and wrote a certificate `check` accepted),
/// and so is an undefined expression.
#[test]
fn equiv_expr_refuses_a_shape_that_does_not_fit() {
    for shape in ["--shape=-4", "--shape=7", "--shape=0,0"] {
        let o = laycert(&["equiv-expr", shape, "32:1", "32:1"]);
        assert_eq!(o.status.code(), Some(2), "{shape}: {}", stdout(&o));
        assert!(stderr(&o).contains("does not fit"), "{}", stderr(&o));
    }
    let o = laycert(&["equiv-expr", "--shape=4,8", "32:1", "32:1"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        stdout(&o).lines().nth(1),
        Some("logical shape: (4,8) (every step decided over it)")
    );
    let o = laycert(&[
        "equiv-expr",
        "left_inverse((2,2):(1,1))",
        "left_inverse((2,2):(1,1))",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
}

const RULES: &str = "rule merge forall e1 e2 s : int, a : axis
  where 1 <= e1 <= 4, 1 <= e2 <= 4, -3 <= s <= 3
  S[(e1,e2):((e2*s)@a, s@a)] == S[(e1*e2):(s@a)]
rule merge_wrong forall e1 e2 s : int
  where 1 <= e1 <= 4, 1 <= e2 <= 4, 1 <= s <= 3
  S[(e1,e2):(s, e2*s)] == S[(e1*e2):s]
rule unbounded forall e : int where e >= 1
  S[e:1] == S[e:1]
";

#[test]
fn linear_from_imports_a_triton_attribute_at_a_shape() {
    let dot = "#ttg.dot_op<{opIdx = 0, parent = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>, kWidth = 2}>";
    let o = laycert(&["linear", "from", dot, "--shape", "64,64"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // Triton 3.9's bases for this attribute and shape (tests/data/triton oracle).
    assert_eq!(
        first_line(&o),
        "#ttg.linear<{register = [[0, 1], [8, 0], [0, 8], [0, 16], [0, 32], [32, 0]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = [[0, 0], [16, 0]], block = []}>"
    );
    let nv =
        "#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>";
    let o = laycert(&["linear", "from", nv, "--shape", "8,32"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("at least 64 elements per CTA along dim1 (the contiguous dim)"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn decompose_finds_a_proved_tiling_by_a_corpus_atom_or_says_none() {
    let o = laycert(&[
        "decompose",
        "S[(2,2,8,2,4,2):(64@tx,2@reg,4@tx,32@tx,1@tx,1@reg)]",
        "--shape",
        "32,16",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        first_line(&o),
        "tile(SM80_16x8x16_F16F16F16F16_TN.C, S[(2,2):(2@tx,1@tx)] over [2, 2])"
    );
    assert!(stdout(&o).contains("proved equal by normal-form, exhaustive"));
    // The e-graph's extracted term names the atom.
    assert!(
        stdout(&o).contains(
            "e-graph term: tile(SM80_16x8x16_F16F16F16F16_TN.C, [16, 8], S[(2,2):(2@tx,1@tx)], [2, 2])"
        ),
        "{}",
        stdout(&o)
    );
    let o = laycert(&["decompose", "(32,16):(1,32)", "--shape", "32,16"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(first_line(&o), "no tiling by a corpus atom");
    let o = laycert(&["decompose", "S[8:1]", "--shape", "8,x"]);
    assert_eq!(o.status.code(), Some(2));
    // Audit 27: 65536 replica points ran for minutes over the atoms; past the search's bound
    // the layout is refused by name.
    let o = laycert(&[
        "decompose",
        "S[(2,2):(1,1)] + R[65536:1@warpid]",
        "--shape",
        "2,2",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("65536 replica points"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn decompose_matches_one_thread_atoms_whole_and_only_whole() {
    // A UMMA operand (issued by one thread) and an AMX tile: corpus atoms that a tiling search
    // skips (one thread tiles anything) and that used to be answered "no tiling".
    for (l, shape, atom) in [
        (
            "S[(128,16):(1@reg,128@reg)]",
            "128,16",
            "SM100_128x128x16_F16BF16BF16_SS.A",
        ),
        (
            "(1,(16,32)):(0,(1,16)) -> (16,32)",
            "16,32",
            "AMX_16x16x32_F32BF16BF16F32.A",
        ),
    ] {
        let o = laycert(&["decompose", l, "--shape", shape]);
        assert_eq!(o.status.code(), Some(0), "{l}: {}", stdout(&o));
        assert_eq!(
            first_line(&o),
            format!("tile({atom}, S[():()] over [1, 1])"),
            "{l}"
        );
    }
    // The same registers in another order are not the atom, nor tiled by it.
    let o = laycert(&[
        "decompose",
        "S[(128,16):(128@reg,1@reg)]",
        "--shape",
        "128,16",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(stdout(&o).contains("of one thread, matched only whole"));
}

/// `gen copy` of a 64x64 f32 transpose.
const TRANSPOSE_64_F32: [&str; 10] = [
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
];

#[test]
fn gen_copy_writes_a_movement_certificate_that_check_re_decides() {
    let tmp = common::scratch();
    let path = tmp.path().join("move.json");
    let p = path.to_str().unwrap();
    let mut args = TRANSPOSE_64_F32.to_vec();
    args.extend(["--cert", p]);
    let o = laycert(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = laycert(&["check", p]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(first_line(&o), "valid");
    assert!(
        stdout(&o).contains("data movement proved"),
        "{}",
        stdout(&o)
    );
    // A re-sealed lie: a shared layout that loses cells, still claimed proved.
    let text = std::fs::read_to_string(&path).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["smem"] = serde_json::json!("(64,64):(1,32)");
    v["digest"] = serde_json::json!("");
    let mut c: certify::movement::MovementCertificate = serde_json::from_value(v).unwrap();
    c.digest = c.compute_digest();
    std::fs::write(&path, c.to_json()).unwrap();
    let o = laycert(&["check", p]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        first_line(&o).starts_with("invalid: the certificate says proved"),
        "{}",
        first_line(&o)
    );
    let _ = std::fs::remove_file(&path);
}

/// Soundness repro: `equiv` decided over the LEFT side's default domain, so the two orders
/// disagreed. The domain is now chosen from both sides and printed; both orders agree. Here
/// the sides read an N-D coordinate in different orders and their natural domains differ, so
/// the verdict depends on the shape: both orders ask for one (the deciders audit: picking the
/// CuTe side's made `equiv` intransitive).
#[test]
fn equiv_is_symmetric_and_names_its_domain() {
    for (a, b) in [
        ("S[(3,3):(3,1)]", "(3,3):(1,3)"),
        ("(3,3):(1,3)", "S[(3,3):(3,1)]"),
    ] {
        let o = laycert(&["equiv", a, b]);
        assert_eq!(o.status.code(), Some(2), "{a} vs {b}: {}", stdout(&o));
        let err = stderr(&o);
        assert!(
            err.contains("ambiguous") && err.contains("--shape 3,3"),
            "{err}"
        );
        let o = laycert(&["equiv", a, b, "--shape", "3,3"]);
        assert_eq!(o.status.code(), Some(1), "{a} vs {b}: {}", stdout(&o));
        let out = stdout(&o);
        assert!(out.contains("logical shape: (3,3)"), "{out}");
        assert!(out.contains("domain: (3,3), given"), "{out}");
    }
    // Over the flat index, named, both are the identity.
    let o = laycert(&["equiv", "S[(3,3):(3,1)]", "(3,3):(1,3)", "--shape", "9"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(stdout(&o).contains("cross-check: the trusted semantics agree at 9 coordinates"));
    // Different sizes are bad input naming both domains.
    let o = laycert(&["equiv", "(4,8):(1,4)", "S[16:1]"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("(4,8)") && stderr(&o).contains("(16)"),
        "{}",
        stderr(&o)
    );
}

/// Soundness repro: each step of an `equiv-expr` chain was decided over the left term's
/// default shape, so `(3,3):(3,1)` was "equal" to a term whose value is another map.
#[test]
fn equiv_expr_decides_every_step_over_the_chains_domain() {
    // The checker rejects the e-graph's chain; the deciders then refute the claim over (3,3),
    // where the right side, a rank-1 CuTe layout, reads (0,1) as index 3.
    let o = laycert(&["equiv-expr", "(3,3):(3,1)", "to_cute(to_axe((3,3):(3,1)))"]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(first_line(&o).starts_with("not equal"), "{}", stdout(&o));
    assert!(
        stdout(&o).contains("counterexample at logical (0,1):"),
        "{}",
        stdout(&o)
    );
    let o = laycert(&["equiv-expr", "coalesce((4,8):(1,4))", "32:1"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(stdout(&o).contains("logical shape: (32)"), "{}", stdout(&o));
}

/// Where saturation does not join two concrete expressions, `equiv-expr` decides their values
/// as `equiv` does: `equal` (exit 0) with a one-step `decide` certificate that `check`
/// re-verifies, or `not equal` (exit 1) with a counterexample, confirmed here by `eval` of
/// each side's value (the audit's three `unknown` answers, and a false stride).
#[test]
fn equiv_expr_decides_concrete_values_equal_or_not_equal() {
    let tmp = common::scratch();
    let cert = tmp.path().join("d.json");
    let o = laycert(&[
        "equiv-expr",
        "(4,8):(1,4)",
        "32:1",
        "--cert",
        cert.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(
        first_line(&o).starts_with("equal (by the deciders"),
        "{}",
        stdout(&o)
    );
    assert!(stdout(&o).contains("cross-check:"), "{}", stdout(&o));
    let c = laycert(&["check", cert.to_str().unwrap()]);
    assert_eq!(first_line(&c), "valid", "{}", stdout(&c));
    // The certificate names the claim; another end term does not re-verify.
    let text = std::fs::read_to_string(&cert).unwrap();
    assert!(text.contains("\"rule\": \"decide\""), "{text}");
    std::fs::write(&cert, text.replace("\"32:1\"", "\"32:2\"")).unwrap();
    assert_ne!(
        first_line(&laycert(&["check", cert.to_str().unwrap()])),
        "valid"
    );
    // to_axe((4,8):(1,4)) is S[(4,8):(1,4)]: equal to it, and not to the transpose or to the
    // identity over the flat index and over (8,4).
    let value = first_line(&laycert(&["convert", "(4,8):(1,4)", "--to", "axe"]));
    assert_eq!(value, "S[(4,8):(1,4)]");
    let o = laycert(&["equiv-expr", "to_axe((4,8):(1,4))", &value]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    for (shape, a, b, right, coord, left_pts, right_pts) in [
        (
            None,
            "to_axe((4,8):(1,4))",
            "S[(8,4):(1,8)]",
            "S[(8,4):(1,8)]",
            "1",
            "{{m:4}}",
            "{{m:8}}",
        ),
        (
            Some("8,4"),
            "to_axe((4,8):(1,4))",
            "S[32:1]",
            "S[32:1]",
            "0,1",
            "{{m:4}}",
            "{{m:1}}",
        ),
        (
            None,
            "(4,8):(1,4)",
            "(4,8):(1,5)",
            "(4,8):(1,5)",
            "0,1",
            "{{m:4}}",
            "{{m:5}}",
        ),
    ] {
        let mut args = vec!["equiv-expr", a, b];
        if let Some(s) = shape {
            args.extend(["--shape", s]);
        }
        let o = laycert(&args);
        let out = stdout(&o);
        assert_eq!(o.status.code(), Some(1), "{a} {b}: {out}");
        assert!(
            first_line(&o).starts_with("not equal (by the deciders"),
            "{out}"
        );
        assert!(
            out.contains(&format!("counterexample at logical ({coord}):"))
                && out.contains(&format!("left:  {left_pts}"))
                && out.contains(&format!("right: {right_pts}")),
            "{out}"
        );
        let left = if a.starts_with("to_axe") {
            value.as_str()
        } else {
            a
        };
        let domain = shape.unwrap_or(if a.starts_with("to_axe") { "32" } else { "4,8" });
        for (l, pts) in [(left, left_pts), (right, right_pts)] {
            let e = laycert(&["eval", l, "--shape", domain, "--coord", coord]);
            assert_eq!(first_line(&e), pts, "{l} at ({coord}) over {domain}");
        }
    }
    let v = json(&laycert(&[
        "--json",
        "equiv-expr",
        "(4,8):(1,4)",
        "(4,8):(1,5)",
    ]));
    assert_eq!(v["verdict"], "not equal");
    assert_eq!(v["equal"], false);
    assert_eq!(
        v["decision"]["counterexample"]["coord"],
        serde_json::json!([0, 1])
    );
}

/// `check` says `valid` only for a re-verified proof: a refutation and an unknown are
/// reported as what they are.
#[test]
fn check_is_valid_only_for_a_proof() {
    let tmp = common::scratch();
    let dir = tmp.path();
    let refuted = dir.join("refuted.json");
    let o = laycert(&[
        "equiv",
        "(4,8):(1,4)",
        "(4,8):(1,5)",
        "--cert",
        refuted.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let c = laycert(&["check", refuted.to_str().unwrap()]);
    assert_eq!(c.status.code(), Some(4), "{}", stdout(&c));
    assert!(first_line(&c).starts_with("refuted"), "{}", stdout(&c));
    let proved = dir.join("proved.json");
    laycert(&[
        "equiv",
        "(4,8):(1,4)",
        "32:1",
        "--cert",
        proved.to_str().unwrap(),
    ]);
    let c = laycert(&["check", proved.to_str().unwrap()]);
    assert_eq!(
        (c.status.code(), first_line(&c)),
        (Some(0), "valid".to_string())
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn equiv_explains_a_counterexample_at_any_size() {
    // 9 * 10^8 indices, decided by canonical forms: the count, the first points and the mode.
    let o = laycert(&[
        "equiv",
        "(30000,30000):(30000,1)",
        "(30000,(100,300)):(30000,(1,101))",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    assert!(out.starts_with("not equivalent\n"), "{out}");
    assert!(
        out.contains("differs at 897000000 of 900000000 logical indices (first (0,100), (0,101), (0,102)); mode 1"),
        "{out}"
    );
    assert!(out.contains("normal-form refuted"), "{out}");
}

#[test]
fn atoms_by_name_in_the_algebra_commands() {
    // A CuTe thread-value atom is its (thread, value) -> offset layout in `cute` operators.
    let o = laycert(&[
        "cute",
        "compose",
        "atom:SM80_16x8x16_F16F16F16F16_TN.A",
        "4:1",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(first_line(&o), "4:32");
    let o = laycert(&[
        "cute",
        "compose",
        "((4,8),(2,2,2)):((32,1),(16,8,128))",
        "4:1",
    ]);
    assert_eq!(
        first_line(&o),
        "4:32",
        "the same as the atom's layout typed out"
    );
    // An atom in another notation is named, with its notation, exit 2; so is an unknown name.
    let o = laycert(&[
        "cute",
        "coalesce",
        "atom:CDNA3P_16x16x32_F32BF16BF16_MFMA.C",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("is linear notation"), "{}", stderr(&o));
    let o = laycert(&["canon", "atom:SM80_16x8x16_F16F16F16F16_TN.A"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("takes Axe layouts"), "{}", stderr(&o));
    let o = laycert(&["cute", "coalesce", "atom:NoSuchAtom"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("no atom of that name"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn atoms_are_listed_and_named_in_any_command() {
    let o = laycert(&["atoms", "SM80_16x8x16_F16F16F16F16"]);
    assert_eq!(o.status.code(), Some(0));
    let out = String::from_utf8(o.stdout).unwrap();
    assert!(out.starts_with("3 atoms"), "{out}");
    assert!(out.contains("mma_traits_sm80.hpp"), "{out}");
    let all = String::from_utf8(laycert(&["atoms"]).stdout).unwrap();
    let n: usize = all.split_whitespace().next().unwrap().parse().unwrap();
    assert!(n >= 240, "{n} atoms");
    let o = laycert(&[
        "equiv",
        "atom:SM80_16x8x16_F16F16F16F16_TN.A",
        "((4,8),(2,2,2)):((32,1),(16,8,128)) -> (16,16)",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = laycert(&["show", "atom:SM80_16x8x16_F16F16F16F16_TN.Q"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("did you mean"), "{}", stderr(&o));
}

/// Issue 16: the catalog's families (Blackwell UMMA and TMEM, AMD MFMA/WMMA from Gluon, Intel
/// XMX) are listed with sources, filtered, and accepted by name by equiv, draw and decompose.
#[test]
fn catalog_atoms_of_every_family_work_in_equiv_draw_and_decompose() {
    for (filter, source) in [
        ("SM100_128x256x16", "mma_traits_sm100.hpp"),
        ("SM100_TMEM_LOAD", "tcgen05"),
        ("CDNA3_", "Gluon AMDMFMALayout"),
        ("RDNA3_", "Gluon AMDWMMALayout"),
        ("XeHPC_", "atoms_xe"),
    ] {
        let o = laycert(&["atoms", filter]);
        assert_eq!(o.status.code(), Some(0));
        let out = stdout(&o);
        let n: usize = first_line(&o).split(' ').next().unwrap().parse().unwrap();
        assert!(n >= 3, "{filter}: {out}");
        assert!(out.contains(source), "{filter}: {out}");
    }
    // The same MMA C layout under two input types; a TMEM load against its printed layout.
    for (a, b) in [
        (
            "atom:SM80_16x8x16_F32BF16BF16F32_TN.C",
            "atom:SM80_16x8x8_F16F16F16F16_TN.C",
        ),
        (
            "atom:CDNA_32x32x8_F32F16F16_MFMA.C",
            "atom:CDNA_32x32x8_F32BF16BF16_1K_MFMA.C",
        ),
        (
            "atom:SM100_TMEM_LOAD_32dp32b4x.dst",
            "(32,4):(4,1) -> (128)",
        ),
    ] {
        let o = laycert(&["equiv", a, b]);
        assert_eq!(o.status.code(), Some(0), "{a} {b}: {}", stderr(&o));
        assert_eq!(first_line(&o), "equivalent");
    }
    let o = laycert(&[
        "equiv",
        "atom:SM80_16x8x16_F32F16F16F32_TN.A",
        "atom:SM80_16x8x16_F32F16F16F32_TN.C",
    ]);
    assert_ne!(o.status.code(), Some(0), "A (16x16) and C (16x8) differ");
    let tmp = common::scratch();
    let dir = tmp.path();
    for atom in [
        "atom:RDNA3_16x16x16_F32F16F16_WMMA.C",
        "atom:SM90_64x64x16_F32BF16BF16_SS.C",
        "atom:XeHPG_8x16x8_F32F16F16_DPAS.A",
    ] {
        let svg = dir.join("atom.svg");
        let o = laycert(&["draw", atom, "--output", svg.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(0), "{atom}: {}", stderr(&o));
        assert!(std::fs::read_to_string(&svg).unwrap().contains("<svg"));
    }
    std::fs::remove_dir_all(dir).ok();
    // An atom as the layout to decompose: the Hopper 64x8 accumulator is itself an atom.
    let o = laycert(&["decompose", "atom:SM90_64x8x16.C", "--shape", "64,8"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(first_line(&o).contains("64x8x16"), "{}", stdout(&o));
}

#[test]
fn eval_takes_a_flat_index_in_the_notations_order() {
    let eval = |l: &str, extra: &[&str], c: &str| {
        let mut args = vec!["eval", l, "--coord", c];
        args.extend_from_slice(extra);
        String::from_utf8(laycert(&args).stdout).unwrap()
    };
    // CuTe: colexicographic, 21 = (1, 5) on (4,8); offset 1*8 + 5*1 = 13.
    assert_eq!(
        eval("(4,8):(8,1)", &[], "21"),
        eval("(4,8):(8,1)", &[], "1,5")
    );
    assert!(eval("(4,8):(8,1)", &[], "21").contains("13"));
    // Axe on a 2-D shape: row-major, 21 = (2, 5) on (4,8); offset 2*1 + 5*4 = 22.
    let shape = ["--shape", "4,8"];
    assert_eq!(
        eval("S[(4,8):(1,4)]", &shape, "21"),
        eval("S[(4,8):(1,4)]", &shape, "2,5")
    );
    assert!(eval("S[(4,8):(1,4)]", &shape, "21").contains("22"));
    let o = laycert(&["eval", "(4,8):(8,1)", "--coord", "32"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("outside the domain"), "{}", stderr(&o));
}

/// `validate` honours a line's `"shape"`, decides a chain of lines over one domain, and
/// refuses a name that is no identifier (it was pasted into the rule text: an injection).
#[test]
fn validate_decides_lines_over_their_claims_domain() {
    let tmp = common::scratch();
    let dir = tmp.path();
    let log = dir.join("pairs.jsonl");
    std::fs::write(
        &log,
        concat!(
            r#"{"name": "flat", "before": "S[(3,3):(3,1)]", "after": "(3,3):(1,3)", "shape": [9]}"#,
            "\n",
            r#"{"name": "nd", "before": "S[(3,3):(3,1)]", "after": "(3,3):(1,3)"}"#,
            "\n"
        ),
    )
    .unwrap();
    let o = laycert(&["validate", log.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(3), "{}", stdout(&o));
    assert!(stdout(&o).contains("PROVED flat"), "{}", stdout(&o));
    // Without a shape the line is ambiguous (its sides read (3,3) in different orders).
    assert!(
        stdout(&o).contains("UNKNOWN nd") && stdout(&o).contains("\"shape\""),
        "{}",
        stdout(&o)
    );
    // A chain: to_axe keeps the N-D map, to_cute the flat one; over the chain's one domain
    // (3,3) the second step fails, so the chain does not prove its end-to-end claim.
    std::fs::write(
        &log,
        concat!(
            r#"{"name": "a", "before": "(3,3):(3,1)", "after": "to_axe((3,3):(3,1))"}"#,
            "\n",
            r#"{"name": "b", "before": "to_axe((3,3):(3,1))", "after": "to_cute(to_axe((3,3):(3,1)))"}"#,
            "\n"
        ),
    )
    .unwrap();
    let o = laycert(&["validate", log.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(stdout(&o).contains("REFUTED b"), "{}", stdout(&o));
    std::fs::write(
        &log,
        "{\"name\": \"x\\nrule y\\n  1:1\\n  == 1:1\", \"before\": \"1:1\", \"after\": \"1:1\"}\n",
    )
    .unwrap();
    let o = laycert(&["validate", log.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("not an identifier"), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(dir);
}

/// Issue 15: an odd shape plans full CTAs (512 threads: its odd pitches narrow the accesses
/// to single f32) on a ceil-div grid with guarded edge tiles (the JSON names the guard and the
/// interior condition), each warp storing whole 128-element runs; `--threads` and `--tile`
/// set the CTA and the tile, and bad ones are bad input.
#[test]
fn gen_copy_plans_odd_shapes_with_guarded_edges() {
    let args = |extra: &[&'static str]| {
        let mut a = vec![
            "gen",
            "copy",
            "--json",
            "--src",
            "(1001,999):(999,1)",
            "--dst",
            "(1001,999):(1,1001)",
            "--shape",
            "1001,999",
            "--dtype",
            "f32",
        ];
        a.extend_from_slice(extra);
        a
    };
    let o = laycert(&args(&[]));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(v["threads"], 512);
    assert_eq!(
        v["store_tv"],
        "((32, 16), (1, 4, 2)):((32, 1), (32, 1024, 16)) -> (32, 128)"
    );
    assert_eq!(v["guard"], serde_json::json!([999, 1001]));
    assert_eq!(v["tile"], serde_json::json!([32, 128]));
    assert_eq!(v["grid"], serde_json::json!([32, 8, 1]));
    assert_eq!(v["interior"], "bx < 31 && by < 7");
    let names: Vec<&str> = v["claims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"guards select the tensor"), "{names:?}");
    let v = json(&laycert(&args(&[
        "--tile",
        "64,64",
        "--load-major",
        "--threads",
        "256",
    ])));
    assert_eq!(v["tile"], serde_json::json!([64, 64]));
    assert_eq!(v["store_major"], false);
    assert_eq!(v["threads"], 256);
    for bad in ["48", "16", "2048"] {
        let o = laycert(&args(&["--threads", bad]));
        assert_eq!(o.status.code(), Some(2), "--threads {bad}");
        assert!(stderr(&o).contains("threads"), "{}", stderr(&o));
    }
    for bad in ["64", "48,64", "256,256", "x,1"] {
        let o = laycert(&args(&["--tile", bad]));
        assert_eq!(o.status.code(), Some(2), "--tile {bad}");
        assert!(stderr(&o).contains("tile"), "{}", stderr(&o));
    }
    // A tile too small for the threads asked: the CTA is smaller, and a note says why (it was
    // lowered silently).
    let v = json(&laycert(&args(&["--tile", "2,2", "--threads", "1024"])));
    assert!(v["threads"].as_i64().unwrap() < 1024);
    let note = v["note"].as_str().unwrap();
    assert!(
        note.starts_with("note: --threads 1024 lowered to") && note.contains("the 2x2 tile"),
        "{note}"
    );
    assert!(json(&laycert(&args(&["--threads", "256"])))
        .get("note")
        .is_none());
}

/// `linear` takes a thread-value atom by name, read as its linear layout: the SM80 A fragment
/// `((4,8),(2,2,2)):((32,1),(16,8,128)) -> (16,16)` (thread t, value v at column-major index
/// 32*(t%4) + (t/4) + 16*(v%2) + 8*(v/2%2) + 128*(v/4)): lane bit 0 moves the column by 2,
/// register bit 0 by 1.
#[test]
fn linear_takes_a_thread_value_atom_by_name() {
    let o = laycert(&[
        "linear",
        "from",
        "atom:SM80_16x8x16_F16F16F16F16_TN.A",
        "--shape",
        "16,16",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("register = [[0, 1], [8, 0], [0, 8]]"), "{out}");
    assert!(
        out.contains("lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]]"),
        "{out}"
    );
    let o = laycert(&["linear", "from", "atom:NO_SUCH_ATOM", "--shape", "16,16"]);
    assert_eq!(o.status.code(), Some(2));
}

/// Configuration overrides of `gen gemm` (and `gpu bench gemm`) below 1 are bad input naming
/// the flag; `--cluster 0` and `--bm 0` once divided by zero (exit 101).
#[test]
fn gemm_overrides_below_one_exit_2_naming_the_flag() {
    let base = ["gen", "gemm", "--m", "256", "--n", "256", "--k", "256"];
    for (extra, flag) in [
        (vec!["--cluster", "0"], "--cluster 0"),
        (vec!["--bm", "0"], "--bm 0"),
        (vec!["--bn", "0"], "--bn 0"),
        (vec!["--bk", "0"], "--bk 0"),
        (
            vec!["--bm", "4611686018427387904"],
            "--bm 4611686018427387904",
        ),
        (
            vec!["--target", "sm80", "--warpgroups", "0"],
            "--warpgroups 0",
        ),
        (vec!["--weights", "int4", "--kwarps", "0"], "--kwarps 0"),
    ] {
        let mut args: Vec<&str> = base.to_vec();
        args.extend(&extra);
        args.extend(["-o", "/dev/null"]);
        let o = laycert(&args);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(flag), "{extra:?}: {}", stderr(&o));
    }
    let bench: Vec<&str> = "gpu bench gemm --m 256 --n 256 --k 256 --cluster 0"
        .split(' ')
        .collect();
    let o = laycert(&bench);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

/// An endless input file is refused after a bounded read, for every command that reads one.
#[test]
fn endless_input_files_are_refused_after_a_bounded_read() {
    if !std::path::Path::new("/dev/zero").exists() {
        return;
    }
    for args in [
        vec!["check", "/dev/zero"],
        vec!["prove", "/dev/zero"],
        vec!["validate", "/dev/zero"],
        vec!["verify", "/dev/zero"],
        vec!["--mlir", "/dev/zero", "show", "4:1"],
        vec!["simplify", "4:1", "--rules", "/dev/zero"],
    ] {
        let o = laycert(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("more than"), "{args:?}: {}", stderr(&o));
    }
}

/// A huge bad input gives a bounded error: each line cut around what matters, the caret
/// still under the error.
#[test]
fn a_huge_bad_input_gives_a_short_error_with_its_caret_in_place() {
    let text = format!("S[({}", "4,".repeat(50_000));
    let o = laycert(&["show", &text]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(e.len() < 8_000, "{} bytes of error", e.len());
    let lines: Vec<&str> = e.lines().collect();
    let caret = lines
        .iter()
        .position(|l| l.trim_start().starts_with('^'))
        .expect("a caret line");
    let col = lines[caret].find('^').unwrap();
    // The error is at the end of the input: the caret sits just past the window's last byte.
    assert_eq!(col, lines[caret - 1].trim_end().len(), "{e}");
    assert!(lines[caret - 1].contains("chars]"), "{e}");
}

/// An answer that cannot be written (a full disk) is an error, not a silent exit 0.
#[test]
fn a_failed_write_of_the_answer_exits_2() {
    let Ok(full) = std::fs::File::create("/dev/full") else {
        return;
    };
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_laycert"))
        .args(["show", "4:1"])
        .stdout(full)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("writing the output"), "{}", stderr(&o));
}

#[test]
fn an_unwritable_stderr_keeps_the_exit_code() {
    // Session 24's audit: `2>/dev/full` made the bad-input message's `eprintln!` panic, and the
    // panic hook's own `eprintln!` abort (exit 134).
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        println!("SKIP (no /dev/full)");
        return;
    };
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_laycert"))
        .args(["show", "(4,8):(1,4) xyz"])
        .stderr(full)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{o:?}");
}

/// A Triton slice of a blocked layout broadcast over 8 warps: 2^19 (coordinate, point) pairs
/// over 8192 coordinates, past the 2^18 pairs `layout::relation` enumerates.
const SLICE_8X1: &str = "#ttg.slice<{dim = 0, parent = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [8, 1], order = [1, 0]}>}>";
const SLICE_4X2: &str = "#ttg.slice<{dim = 0, parent = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 2], order = [1, 0]}>}>";

#[test]
fn equiv_decides_broadcast_layouts_past_the_pair_enumeration_limit() {
    // Session 24's audit: each exited 2, the cross-check of a proof or the confirmation of a
    // counterexample enumerating past 2^18 pairs ("a decider is wrong", "9223372036854775807
    // pairs").
    // (left, right, shape, verdict, exit code)
    let cases: [(&str, &str, Option<&str>, &str, i32); 7] = [
        (SLICE_8X1, SLICE_8X1, Some("8192"), "equivalent", 0),
        (SLICE_8X1, SLICE_4X2, Some("8192"), "not equivalent", 1),
        (
            "(128,4096):(0,1) -> (4096)",
            "(128,4096):(0,1) -> (4096)",
            None,
            "equivalent",
            0,
        ),
        (
            "(128,4096):(0,1) -> (4096)",
            "S[4096:1@reg] + R[128:1@tx]",
            Some("4096"),
            "equivalent",
            0,
        ),
        (
            "S[4096:1@reg] + R[128:1@tx]",
            "(128,4096):(0,1) -> (4096)",
            Some("4096"),
            "equivalent",
            0,
        ),
        (
            "(128,4096):(0,1) -> (4096)",
            "S[4096:1@reg] + R[127:1@tx]",
            Some("4096"),
            "not equivalent",
            1,
        ),
        (
            "((32,1024),16):((0,16),1) -> (16,1024)",
            "S[(16,1024):(1@reg,32@tx)] + R[32:1@tx]",
            Some("16,1024"),
            "equivalent",
            0,
        ),
    ];
    for (a, b, shape, verdict, code) in cases {
        let mut args = vec!["equiv", a, b];
        if let Some(s) = shape {
            args.extend(["--shape", s]);
        }
        let o = laycert_within(60, &args);
        assert_eq!(o.status.code(), Some(code), "{a} vs {b}: {}", stderr(&o));
        assert_eq!(first_line(&o), verdict, "{a} vs {b}");
        if code == 0 {
            assert!(
                stdout(&o).contains("cross-check: the trusted semantics agree at"),
                "{}",
                stdout(&o)
            );
        }
    }
}

#[test]
fn equiv_compares_replicated_axe_layouts_without_enumerating_every_replica() {
    // (256,256) replica vectors are 511 distinct offsets; the cross-check evaluated all 65536
    // at every coordinate (4096 coordinates: 90 s of CPU; 65536: more than 10 minutes).
    let wide = "R[(256,256):(1@laneid,1@laneid)]";
    for (n, other, verdict, code) in [
        (65536, "R[511:1@laneid]", "equivalent", 0),
        (4096, "R[511:1@laneid]", "equivalent", 0),
        (4096, "R[511:1@tx]", "equivalent", 0),
        (4096, "R[510:1@laneid]", "not equivalent", 1),
        (4096, "R[511:1@laneid] + 1@laneid", "not equivalent", 1),
    ] {
        let a = format!("S[{n}:1] + {wide}");
        let b = format!("S[{n}:1] + {other}");
        let o = laycert_within(60, &["equiv", &a, &b]);
        assert_eq!(o.status.code(), Some(code), "{a} vs {b}: {}", stderr(&o));
        assert_eq!(first_line(&o), verdict, "{a} vs {b}");
    }
}

#[test]
fn equiv_of_a_kernel_sized_tile_is_cross_checked() {
    // 2^25 thread-value pairs: the cross-check finds the one input holding each rechecked
    // coordinate (it read every input, at most 2^22, and answered unknown).
    let tv = "(4096,8192):(1,4096) -> (4096,8192)";
    let o = laycert_within(60, &["equiv", tv, tv]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(first_line(&o), "equivalent");
    assert!(
        stdout(&o).contains("cross-check: the trusted semantics agree at 4108 coordinates"),
        "{}",
        stdout(&o)
    );
    let v = json(&laycert_within(60, &["equiv", tv, tv, "--json"]));
    assert_eq!(v["verdict"], "equivalent");
    // Refuted by the deciders, and the counterexample re-evaluated by the semantics.
    let axe = "S[(8192,4096):(1@tx,1@reg)]";
    let o = laycert_within(60, &["equiv", tv, axe, "--shape", "4096,8192"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(first_line(&o), "not equivalent");
    assert!(
        stdout(&o).contains("counterexample at logical (0,4096):"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn equiv_past_the_cross_checks_reach_is_unknown_with_the_reason() {
    // 65536 threads hold each of 128 cells: 2^23 inputs to list, past
    // `layout::relation::MAX_LISTED` (2^22), so the proof stands unconfirmed: exit 3.
    let tv = "(65536,128):(0,1) -> (128,)";
    let o = laycert_within(120, &["equiv", tv, tv]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert_eq!(first_line(&o), "unknown");
    assert!(
        stdout(&o).contains("unconfirmed: the deciders proved the claim, but the trusted cross-check is past its limits: reading the layout backwards needs 65536 more inputs listed"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn equiv_of_a_swizzled_table_past_the_pair_limit_decides() {
    // No strided form (XOR): the deciders' table reads 2^19 inputs (it stopped at 2^18 pairs
    // and exited 2); past 2^22 inputs the table is beyond the deciders, and identical F2
    // normal forms decide (audit 27: this was unknown, exit 3).
    let sw = "#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>";
    let o = laycert_within(60, &["equiv", sw, sw, "--shape", "1024,512"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(first_line(&o), "equivalent");
    let o = laycert_within(60, &["equiv", sw, sw, "--shape", "4096,2048"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("identical F2 normal forms"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn check_accepts_a_certificate_of_a_broadcast_layout_past_the_pair_limit() {
    let dir = common::scratch();
    let cert = dir.path().join("slice.json");
    let cert = cert.to_str().unwrap();
    let o = laycert_within(
        60,
        &[
            "equiv", SLICE_8X1, SLICE_8X1, "--shape", "8192", "--cert", cert,
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = laycert_within(60, &["check", cert]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(first_line(&o), "valid");
}

/// A valid layout past the deciders' limits is `unknown` (exit 3), not bad input (exit 2):
/// 2^23 threads holding one element have a replica set the deciders do not list.
#[test]
fn a_broadcast_past_the_replica_limit_is_unknown_not_bad_input() {
    let l = "(8388608,1):(0,1) -> (1,)";
    let o = laycert(&["equiv", l, l]);
    assert_eq!(o.status.code(), Some(3), "{}{}", stdout(&o), stderr(&o));
    assert_eq!(first_line(&o), "unknown");
    assert!(
        stdout(&o).contains("8388608 replica vectors"),
        "{}",
        stdout(&o)
    );
    let o = laycert(&["prove-property", "injective", l]);
    assert_eq!(o.status.code(), Some(3), "{}{}", stdout(&o), stderr(&o));
}

/// Session 26's audit: `gen copy` refused a tensor with fewer than two dimensions of
/// extent > 1 ("the copy needs two dimensions of extent > 1 to tile", exit 2), though any
/// extents plan. A row or column vector, a single cell and a 1x1x7 tensor now plan a line (or one
/// cell) along their one long dimension; the kernel is written, its movement certificate
/// `check`s valid with both deciders (the simulation covers every element).
#[test]
fn gen_copy_plans_lines_and_single_cells() {
    let tmp = common::scratch();
    let (k, c) = (tmp.path().join("k.cu"), tmp.path().join("c.json"));
    let (k, c) = (k.to_str().unwrap(), c.to_str().unwrap());
    for (src, dst, shape, plan_line) in [
        (
            "(1,999):(999,1)",
            "(1,999):(1,1)",
            "1,999",
            "plan: tile 1024x1 over dims (1, 0), grid [1, 1, 1], 512 threads",
        ),
        (
            "(999,1):(1,1)",
            "(999,1):(1,999)",
            "999,1",
            "plan: tile 1024x1 over dims (0, 1), grid [1, 1, 1], 512 threads",
        ),
        (
            "(1,1):(1,1)",
            "(1,1):(1,1)",
            "1,1",
            "plan: tile 1x1 over dims (0, 1), grid [1, 1, 1], 1 threads",
        ),
        (
            "(2,1):(1,1)",
            "(2,1):(1,2)",
            "2,1",
            "plan: tile 2x1 over dims (0, 1), grid [1, 1, 1], 1 threads",
        ),
        (
            "(1,1,7):(7,7,1)",
            "(1,1,7):(1,1,1)",
            "1,1,7",
            "plan: tile 8x1 over dims (2, 0), grid [1, 1, 1], 8 threads",
        ),
    ] {
        let o = laycert(&[
            "gen", "copy", "--src", src, "--dst", dst, "--shape", shape, "--dtype", "f32", "-o", k,
            "--cert", c,
        ]);
        assert_eq!(o.status.code(), Some(0), "{shape}: {}", stderr(&o));
        assert!(
            first_line(&o).starts_with(&format!("wrote {k}: laycert_copy")),
            "{}",
            first_line(&o)
        );
        assert!(stdout(&o).contains(plan_line), "{shape}: {}", stdout(&o));
        let text = std::fs::read_to_string(k).unwrap();
        assert!(
            text.contains("// proved data movement is the identity: dst["),
            "{shape}"
        );
        assert!(text.contains("extern \"C\" __global__ void __launch_bounds__("));
        let o = laycert(&["check", c]);
        assert_eq!(o.status.code(), Some(0), "{shape}: {}", stdout(&o));
        assert_eq!(first_line(&o), "valid");
        assert!(
            stdout(&o).contains("(parts: proved, simulation: proved)"),
            "{shape}: {}",
            stdout(&o)
        );
    }
}

/// A swizzle whose shift is past the supported bits is refused as such, however large the
/// number (an S beyond i32 was reported as "expected Sw<B,M,S> with B, M >= 0").
#[test]
fn show_refuses_a_swizzle_shift_out_of_range_naming_the_bit() {
    for (s, bit) in [
        ("60", "66"),
        ("-60", "66"),
        ("9223372036854775807", "9223372036854775813"),
        ("-9223372036854775807", "9223372036854775813"),
    ] {
        let text = format!("Sw<3,4,{s}> o (8,64):(64,1)");
        let o = laycert(&["show", &text]);
        assert_eq!(o.status.code(), Some(2), "{text}");
        let err = stderr(&o);
        assert!(
            err.contains(&format!(
                "invalid Sw<3,4,{s}>: it touches bit {bit}, beyond the supported bit 62"
            )),
            "{err}"
        );
    }
    let o = laycert(&["show", "Sw<-1,4,3> o (8,64):(64,1)"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("expected Sw<B,M,S> with B, M >= 0"),
        "{}",
        stderr(&o)
    );
}

/// `--report` names a directory the report can be written to, checked before the run: a path
/// that cannot be one is refused at once, not after the whole corpus.
#[test]
fn verify_refuses_a_report_path_before_running_the_corpus() {
    let o = laycert_within(2, &["verify", "--report", "/dev/full"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(o.stdout.is_empty(), "{}", stdout(&o));
    assert!(
        stderr(&o).starts_with("error: --report \"/dev/full\": "),
        "{}",
        stderr(&o)
    );
    let tmp = common::scratch();
    let file = tmp.path().join("file");
    std::fs::write(&file, "").unwrap();
    let under = file.join("report");
    let o = laycert_within(2, &["verify", "--report", under.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(o.stdout.is_empty(), "{}", stdout(&o));
}
