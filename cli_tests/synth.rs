//! `laycert synth`: first line, exit codes, the certificate round trip through `laycert check`.

mod common;
use common::{first_line, laycert};

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
