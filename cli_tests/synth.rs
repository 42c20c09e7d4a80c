//! `laycert synth`: first line, exit codes, the certificate round trip through `laycert check`.

mod common;
use common::{first_line, laycert, stdout};

fn program(name: &str) -> String {
    format!(
        "{}/corpus/data/programs/{name}.tile",
        env!("CARGO_MANIFEST_DIR")
    )
}

#[test]
fn synth_certifies_the_sm80_gemm_and_check_accepts_its_certificate() {
    let tmp = common::scratch();
    let dir = tmp.path();
    let cert = dir.join("gemm.json");
    let draw = dir.join("draw");
    let o = laycert(&[
        "synth",
        &program("gemm_f16_sm80"),
        "--target",
        "sm80",
        "--cert",
        cert.to_str().unwrap(),
        "--draw",
        draw.to_str().unwrap(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        first_line(&o).starts_with("synthesized gemm_f16_128x128x32_sm80 for sm80: cost "),
        "{}",
        first_line(&o)
    );
    let text = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(text.contains("ldmatrix.sync.aligned.m8n8.x4"), "{text}");
    assert!(text.contains("linear: #ttg.linear<{register = "), "{text}");
    assert!(draw.join("c.svg").exists());
    let c = laycert(&["check", cert.to_str().unwrap()]);
    assert_eq!(c.status.code(), Some(0));
    assert_eq!(first_line(&c), "valid");
    // One flipped stride in the accumulator's layout (digest re-sealed or not): invalid.
    let json = std::fs::read_to_string(&cert).unwrap();
    let bad = json.replacen("(256, 1, 1024, 16)", "(256, 1, 16, 1024)", 1);
    assert_ne!(bad, json);
    std::fs::write(dir.join("bad.json"), bad).unwrap();
    let c = laycert(&["check", dir.join("bad.json").to_str().unwrap()]);
    assert_eq!(c.status.code(), Some(1));
    assert!(
        first_line(&c).starts_with("invalid: "),
        "{}",
        first_line(&c)
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn synth_json_reports_instructions_and_rearranges() {
    let o = laycert(&["synth", &program("conversion_rearrange"), "--json"]);
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["synthesized"], true);
    assert_eq!(v["rearranges"].as_array().unwrap().len(), 1);
    assert_eq!(v["rearranges"][0]["from"], "x");
}

#[test]
fn synth_explains_an_infeasible_program_with_exit_1() {
    let o = laycert(&[
        "synth",
        &program("infeasible_smem_capacity"),
        "--target",
        "sm80",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        first_line(&o).starts_with("infeasible: shared-memory capacity"),
        "{}",
        first_line(&o)
    );
}

#[test]
fn synth_rejects_a_malformed_program_with_its_line_and_exit_2() {
    let tmp = common::scratch();
    let dir = tmp.path();
    let f = dir.join("bad.tile");
    std::fs::write(
        &f,
        "threads 128\nx = register_tensor(f16, [16, 16])\ncopy(x, y)\n",
    )
    .unwrap();
    let o = laycert(&["synth", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("line 3: copy: unknown tensor \"y\""), "{err}");
    let o = laycert(&["synth", f.to_str().unwrap(), "--target", "sm70"]);
    assert_eq!(o.status.code(), Some(2));
    let _ = std::fs::remove_dir_all(dir);
}

/// Writes `text` as a program, synthesizes it for `target` with a certificate, and returns the
/// exit code, the first line and, on success, `laycert check`'s verdict on the certificate.
fn synth_text(text: &str, target: &str) -> (Option<i32>, String, Option<String>) {
    let tmp = common::scratch();
    let dir = tmp.path();
    let f = dir.join("p.tile");
    let cert = dir.join("p.json");
    std::fs::write(&f, text).unwrap();
    let o = laycert(&[
        "synth",
        f.to_str().unwrap(),
        "--target",
        target,
        "--cert",
        cert.to_str().unwrap(),
    ]);
    let checked = (o.status.code() == Some(0))
        .then(|| first_line(&laycert(&["check", cert.to_str().unwrap()])));
    (o.status.code(), first_line(&o), checked)
}

fn assert_certified(text: &str, target: &str) {
    let (code, line, checked) = synth_text(text, target);
    assert_eq!(code, Some(0), "{target}\n{text}\n{line}");
    assert!(line.starts_with("synthesized "), "{line}");
    assert_eq!(checked.as_deref(), Some("valid"), "{text}");
}

fn copy_to_shared(dtype: &str, threads: i64, shape: [i64; 2], layout: &str) -> String {
    let [r, c] = shape;
    format!(
        "program t\nthreads {threads}\nx_g = global_view({dtype}, [{r}, {c}], {layout})\n\
         x_s = shared_tensor({dtype}, [{r}, {c}])\ncopy(x_g, x_s)\n"
    )
}

// Audit F1: rows whose length is not a power of two are whole aligned cp.async vectors.
#[test]
fn synth_plans_global_to_shared_copies_of_non_power_of_two_rows() {
    let cases: [(&str, i64, [i64; 2], &str); 10] = [
        ("f16", 32, [8, 24], "(8,24):(24,1)"),
        ("f16", 128, [128, 24], "(128,24):(24,1)"),
        ("f16", 128, [128, 40], "(128,40):(40,1)"),
        ("f16", 128, [128, 48], "(128,48):(48,1)"),
        ("f16", 128, [24, 128], "(24,128):(1,24)"),
        ("f16", 128, [48, 64], "(48,64):(1,48)"),
        ("bf16", 128, [128, 40], "(128,40):(40,1)"),
        ("i8", 128, [128, 24], "(128,24):(24,1)"),
        ("f8e4m3", 128, [128, 40], "(128,40):(80,1)"),
        // Rows of 2 bytes: the 4-byte vectors run across rows of the contiguous tile.
        ("i8", 32, [64, 2], "(64,2):(2,1)"),
    ];
    for (dtype, threads, shape, layout) in cases {
        for target in ["sm80", "sm90"] {
            assert_certified(&copy_to_shared(dtype, threads, shape, layout), target);
        }
    }
    // [128, 24] f16 rows are whole 16-byte vectors: the widest cp.async is the one chosen.
    let o = {
        let tmp = common::scratch();
        let f = tmp.path().join("p.tile");
        let text = copy_to_shared("f16", 128, [128, 24], "(128,24):(24,1)");
        std::fs::write(&f, text).unwrap();
        laycert(&["synth", f.to_str().unwrap(), "--target", "sm80"])
    };
    let out = common::stdout(&o);
    assert!(out.contains("cp.async.cg.shared.global [16 B]"), "{out}");
}

// Rows that start at unaligned elements stay infeasible (exit 1), with the reason.
#[test]
fn synth_still_refutes_copies_of_unaligned_rows() {
    for (dtype, shape, layout) in [
        ("f16", [8, 8], "(8,8):(9,1)"),
        ("f8e4m3", [16, 16], "(16,16):(17,1)"),
        ("f16", [64, 64], "(64,64):(65,1)"),
    ] {
        for target in ["sm80", "sm90"] {
            let (code, line, _) = synth_text(&copy_to_shared(dtype, 128, shape, layout), target);
            assert_eq!(code, Some(1), "{line}");
            assert!(
                line.starts_with("infeasible: copy instruction")
                    && line.contains("no such vector of"),
                "{line}"
            );
        }
    }
}

// Audit F2: a register tile whose rows of vectors do not divide the threads evenly.
#[test]
fn synth_distributes_a_register_tile_over_every_thread() {
    let text = "program t\nthreads 32\nx_g = global_view(i8, [24, 16], (24,16):(16,1))\n\
                y_g = global_view(i8, [24, 16], (24,16):(16,1))\nx = register_tensor(i8, [24, 16])\n\
                copy(x_g, x)\ncopy(x, y_g)\n";
    for target in ["sm80", "sm90"] {
        assert_certified(text, target);
    }
    // The layout is exclusive: 4 threads along a row of 4-byte vectors, 8 rows, 3 row blocks.
    let tmp = common::scratch();
    let f = tmp.path().join("p.tile");
    std::fs::write(&f, text).unwrap();
    let out = common::stdout(&laycert(&["synth", f.to_str().unwrap()]));
    assert!(
        out.contains("((4, 8), (4, 3)):((96, 1), (24, 8)) -> (24, 16)"),
        "{out}"
    );
    // Other thread counts that used to be refused ("spans 96 threads, the program has 128").
    for (threads, r, c) in [(128, 24, 16), (256, 48, 40), (64, 24, 24), (128, 40, 24)] {
        let text = format!(
            "program t\nthreads {threads}\nx_g = global_view(f16, [{r}, {c}], ({r},{c}):({c},1))\n\
             y_g = global_view(f16, [{r}, {c}], ({r},{c}):({c},1))\n\
             x = register_tensor(f16, [{r}, {c}])\ncopy(x_g, x)\ncopy(x, y_g)\n"
        );
        assert_certified(&text, "sm80");
    }
}

// Audit F3: a reduction over a tile loaded from a padded view certifies (its result follows
// its input's layout, never the store's).
#[test]
fn synth_certifies_reductions_of_padded_tiles() {
    let cases: [(&str, i64, [i64; 2], &str, usize); 4] = [
        ("f32", 32, [4, 4], "(4,4):(5,1)", 1),
        ("f32", 32, [32, 8], "(32,8):(9,1)", 0),
        ("f32", 32, [32, 8], "(32,8):(9,1)", 1),
        ("f16", 128, [128, 128], "(128,128):(129,1)", 1),
    ];
    for (dtype, threads, [r, c], layout, dim) in cases {
        let n = if dim == 0 { c } else { r };
        let text = format!(
            "program t\nthreads {threads}\nx_g = global_view({dtype}, [{r}, {c}], {layout})\n\
             y_g = global_view({dtype}, [{n}], ({n}):(1))\nx = register_tensor({dtype}, [{r}, {c}])\n\
             copy(x_g, x)\ny = reduce(x, {dim}, max)\ncopy(y, y_g)\n"
        );
        for target in ["sm80", "sm90"] {
            assert_certified(&text, target);
        }
    }
}

// Audit F6: 576 elements over 256 threads through shared memory: planned (threads beyond the
// tile's cells hold copies), no false "never copied" reason.
#[test]
fn synth_plans_a_staged_copy_with_more_threads_than_vectors() {
    let text = "program t\nthreads 256\nx_g = global_view(f16, [24, 24], (24,24):(24,1))\n\
                y_g = global_view(f16, [24, 24], (24,24):(24,1))\nx_s = shared_tensor(f16, [24, 24])\n\
                x = register_tensor(f16, [24, 24])\ncopy(x_g, x_s)\ncopy(x_s, x)\ncopy(x, y_g)\n";
    for target in ["sm80", "sm90"] {
        assert_certified(text, target);
    }
}

// Where the search finds no plan without a proof that none exists, the answer is `unknown`
// (exit 3), never `infeasible`: here two cp.async copies into one buffer want rows and columns
// contiguous, and the search's shared layouts are whole orders.
#[test]
fn synth_answers_unknown_where_its_search_is_not_a_proof() {
    let text = "program t\nthreads 128\nx_g = global_view(f16, [16, 16], (16,16):(16,1))\n\
                y_g = global_view(f16, [16, 16], (16,16):(1,16))\nx_s = shared_tensor(f16, [16, 16])\n\
                copy(x_g, x_s)\ncopy(y_g, x_s)\n";
    let (code, line, _) = synth_text(text, "sm80");
    assert_eq!(code, Some(3), "{line}");
    assert!(
        line.starts_with("unknown: instruction selection")
            && line.contains("no plan found in the searched space"),
        "{line}"
    );
}

// A sum over a tile with fewer cells than threads: lanes 16..31 hold copies of lanes 0..15's
// cells (a broadcast lane bit). A butterfly over the copies would add each cell twice; the plan
// combines only the 4 threads with distinct cells (2 steps, not 3), and `check` re-derives that.
#[test]
fn synth_sums_a_replicated_tile_once_per_cell() {
    let text = "program t\nthreads 32\nx_g = global_view(f32, [4, 4], (4,4):(5,1))\n\
                x = register_tensor(f32, [4, 4])\ncopy(x_g, x)\ny = reduce(x, 1, sum)\n\
                y_g = global_view(f32, [4], (4):(1))\ncopy(y, y_g)\n";
    assert_certified(text, "sm80");
    let tmp = common::scratch();
    let f = tmp.path().join("p.tile");
    std::fs::write(&f, text).unwrap();
    let out = stdout(&laycert(&["synth", f.to_str().unwrap()]));
    assert!(
        out.contains(
            "sum: per-thread fold, 2 shfl.bfly step(s) over the 4 threads with distinct cells \
             (each cell is held by 2 threads: the steps skip the copies)"
        ),
        "{out}"
    );
}
