//! The CuTe DSL's print of a tensor reads as its layout: every case of
//! `tests/data/cutedsl/tensor_print.jsonl` (written by `bench/peers/gen_cutedsl_tensor.py` with
//! nvidia-cutlass-dsl 4.8.1: `print(tensor)` inside `@cute.jit`, and the DSL's own evaluation of
//! the tensor's layout at every linear index) evaluates to exactly the DSL's values: plain
//! layouts after each pointer kind (`tensor<ptr<f16, smem, align<16>> o L>`, register tensors),
//! swizzled ones (`.. o S<B,M,S> o 0 o L>`) and coordinate tensors (`tensor<(0,0) o
//! (8,4):(1@0,1@1)>`).

use layout::layout::dim_axis;
use layout::Layout;
use serde_json::Value;

fn cases() -> Vec<Value> {
    let path = format!(
        "{}/../tests/data/cutedsl/tensor_print.jsonl",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(path)
        .expect("the oracle data file is committed")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn dsl_tensor_prints_evaluate_to_the_dsls_values() {
    let cases = cases();
    assert!(cases.len() >= 100, "{} cases", cases.len());
    let mut failures = Vec::new();
    for c in &cases {
        let text = c["text"].as_str().unwrap();
        let values = c["values"].as_array().unwrap();
        // The DSL 4.8.1 drops a negative-shift swizzle's '>' in a tensor's print
        // (`S<2,2,-2 o 0 o 8:1>`); laycert refuses that text rather than guess it.
        let truncated = text
            .split_once("S<")
            .is_some_and(|(_, sw)| !sw.split(" o ").next().unwrap_or("").contains('>'));
        let l = match Layout::parse(text, None) {
            Ok(l) if truncated => {
                failures.push(format!("{text}: read as {}", l.print()));
                continue;
            }
            Err(e) if truncated => {
                assert!(e.to_string().contains("'>'"), "{text}: {e}");
                continue;
            }
            Ok(l) => l,
            Err(e) => {
                failures.push(format!("{text}: {e}"));
                continue;
            }
        };
        let size = values.len() as i64;
        for (i, want) in values.iter().enumerate() {
            let got = l.eval(Some(&[size]), &[i as i64]).unwrap();
            let point = got.iter().next().unwrap();
            let got: Vec<i64> = match want {
                Value::Array(w) => (0..w.len())
                    .map(|k| point.get(&dim_axis(k)).copied().unwrap_or(0))
                    .collect(),
                _ => vec![point.values().sum()],
            };
            let want: Vec<i64> = match want {
                Value::Array(w) => w.iter().map(|v| v.as_i64().unwrap()).collect(),
                v => vec![v.as_i64().unwrap()],
            };
            if got != want {
                failures.push(format!("{text} at {i}: want {want:?}, got {got:?}"));
                break;
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} mismatch:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn dsl_tensor_is_its_layout_and_near_misses_name_the_part() {
    let plain = "(4,(2,4)):(2,(1,8))";
    let want = Layout::parse(plain, None).unwrap();
    for text in [
        "tensor<ptr<f32, rmem, align<32>> o (4,(2,4)):(2,(1,8))>",
        "tensor<ptr<f16, smem, align<16>> ∘ (4,(2,4)):(2,(1,8))>",
    ] {
        assert_eq!(Layout::parse(text, None).unwrap(), want, "{text}");
    }
    for (text, word) in [
        ("tensor<ptr<f32, rmem, align<32>> (4,8):(1,4)>", "'o'"),
        ("tensor<ptr<f32, rmem, align<32> o (4,8):(1,4)>", "'o'"),
        (
            "tensor<ptr<f32, rmem, align<32>> o (4,8):(1,4)",
            "'>' closing",
        ),
    ] {
        let e = Layout::parse(text, None).expect_err(text).to_string();
        assert!(e.contains(word), "{text}: {e}");
    }
}
