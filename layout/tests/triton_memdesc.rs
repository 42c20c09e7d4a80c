//! TTGIR memory descriptors and Blackwell tensor-memory encodings read as Triton 3.9 builds
//! them. Every case of `tests/data/triton/memdesc.jsonl` (written by
//! `bench/peers/gen_triton_memdesc.py` with Triton's own printer and CPU conversion):
//!
//! - a `!ttg.memdesc<..>` type of each shared kind, with no, a multi-buffer or a larger
//!   (subslice) allocation shape, with aliases pasted before it or without `mutable`, imports
//!   to Triton's bases of its encoding on the last dims of the allocation shape (padded_shared:
//!   to the attribute read on that shape);
//! - a rank-3 allocation with a rank-2 encoding, for which Triton gives no layout, is refused;
//! - `#ttng.tensor_memory_encoding` / `tensor_memory_scales_encoding` import to Triton's
//!   `row`/`col` bases, or are refused where Triton refuses (shape, element type); those over
//!   several CTAs are refused (no oracle of the whole map).

use layout::Layout;
use serde_json::Value;

mod triton_support;

fn cases(kind: &str) -> Vec<Value> {
    triton_support::cases("memdesc.jsonl")
        .into_iter()
        .filter(|c| c["kind"] == kind)
        .collect()
}

fn linear(l: Layout) -> layout::LinearLayout {
    match l {
        Layout::Linear(l) => l,
        other => panic!("read as {}", other.print()),
    }
}

#[test]
fn memdesc_types_import_to_tritons_bases_on_their_allocation() {
    let cases = cases("memdesc");
    assert!(cases.len() >= 150, "{} cases", cases.len());
    let mut failures = Vec::new();
    for c in &cases {
        let text = c["text"].as_str().unwrap();
        let at = triton_support::ints(&c["layout_shape"]);
        let got = Layout::parse(text, None);
        let want = if let Some(attr) = c["attr"].as_str() {
            Layout::parse(attr, Some(&at)).unwrap()
        } else {
            let l = got.clone().map(linear);
            match l {
                Ok(l) => {
                    let names = triton_support::in_dims(c);
                    let outs: Vec<i64> = l.outs().iter().map(|o| o.size()).collect();
                    if triton_support::our_bases(&l, names) != triton_support::want_bases(c)
                        || outs != at
                    {
                        failures.push(format!("{text}: got {}", Layout::Linear(l).print()));
                    }
                }
                Err(e) => failures.push(format!("{text}: {e}")),
            }
            continue;
        };
        match got {
            Ok(l) if l == want => {}
            Ok(l) => failures.push(format!("{text}: got {}", l.print())),
            Err(e) => failures.push(format!("{text}: {e}")),
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
fn memdesc_shape_given_again_must_be_the_allocations() {
    let text = "!ttg.memdesc<64x64xf16, #ttg.swizzled_shared<{vec = 2, perPhase = 1, maxPhase \
                = 4, order = [1, 0]}>, #ttg.shared_memory, mutable, 2x128x64>";
    let l = Layout::parse(text, None).unwrap();
    assert_eq!(Layout::parse(text, Some(&[128, 64])).unwrap(), l);
    let e = Layout::parse(text, Some(&[64, 64]))
        .unwrap_err()
        .to_string();
    assert!(e.contains("[128, 64]") && e.contains("[2, 128, 64]"), "{e}");
    // Triton 3.0 to 3.2's spelling reads the same.
    let old = text
        .replace("!ttg.", "!tt.")
        .replace("#ttg.shared_memory", "#triton_gpu.shared_memory");
    assert_eq!(Layout::parse(&old, None).unwrap(), l);
}

#[test]
fn multi_buffer_allocations_with_a_lower_rank_encoding_are_refused() {
    let cases = cases("memdesc_refused");
    assert!(cases.len() >= 10, "{} cases", cases.len());
    for c in &cases {
        let text = c["text"].as_str().unwrap();
        let e = Layout::parse(text, None).expect_err(text).to_string();
        assert!(
            e.contains("memdesc_index") && e.contains("buffers"),
            "{text}: {e}"
        );
    }
}

#[test]
fn near_miss_memdescs_are_errors_naming_the_part() {
    for (text, word) in [
        (
            "!ttg.memdesc<128x64xf16, #shared, #ttg.shared_memory, mutable>",
            "alias",
        ),
        (
            "!ttg.memdesc<128x64xf16, #ttg.swizzled_shared<{vec = 2, perPhase = 1, maxPhase = \
             4, order = [1, 0]}>, #ttg.shared_mem, mutable>",
            "memory space",
        ),
        (
            "!ttg.memdesc<128x64xf16, #ttg.swizzled_shared<{vec = 2, perPhase = 1, maxPhase = \
             4, order = [1, 0]}>, #ttg.shared_memory, mutabel>",
            "allocation shape",
        ),
        (
            "!ttg.memdesc<128x64xf16, #ttg.swizzled_shared<{vec = 2, perPhase = 1, maxPhase = \
             4, order = [1, 0]}>, #ttg.shared_memory, mutable, 64>",
            "rank at least 2",
        ),
        (
            "!ttg.memdesc<128x64xf16, #ttg.swizzled_shared<{vec = 2, perPhase = 1, maxPhase = \
             4, order = [1, 0]}>, #ttg.shared_memory, mutable",
            "'>'",
        ),
        ("!ttg.memdesc<128x64xf16>", "encoding"),
        (
            "#shared = #ttg.swizzled_shared<{vec = 2, perPhase = 1, maxPhase = 4, order = [1, \
             0]}>\n!ttg.memdesc<128x64xf16, #shraed, #smem, mutable>",
            "#shraed",
        ),
    ] {
        let e = Layout::parse(text, None).expect_err(text).to_string();
        assert!(e.contains(word), "{text}: {e}");
    }
}

/// The TMEM cases of `kind`: each reads to Triton's bases, or is refused where Triton refuses.
fn check_tmem(kind: &str, at_least: usize) {
    let cases = cases(kind);
    assert!(cases.len() >= at_least, "{} {kind} cases", cases.len());
    let (mut read, mut refused, mut failures) = (0, 0, Vec::new());
    for c in &cases {
        let shape = triton_support::ints(&c["shape"]);
        // The whole memdesc type Triton printed; where it refused to build one, the same
        // type as it would print it.
        let text = match (c["text"].as_str(), c["attr"].as_str()) {
            (Some(text), _) => text.to_string(),
            (None, Some(attr)) => format!(
                "!ttg.memdesc<{}x{}x{}, {attr}, #ttng.tensor_memory, mutable>",
                shape[0],
                shape[1],
                c["elem"].as_str().unwrap()
            ),
            (None, None) => panic!("case without text: {c}"),
        };
        let got = Layout::parse(&text, None);
        let name = format!("{} on {shape:?} ({})", c["attr"], c["elem"]);
        match (got, c.get("refused")) {
            (Ok(l), None) => {
                let l = linear(l);
                let ours = triton_support::our_bases(&l, &["row", "col"]);
                let want = vec![
                    triton_support::bases(&c["row"]),
                    triton_support::bases(&c["col"]),
                ];
                if ours != want {
                    failures.push(format!("{name}:\n  want {want:?}\n  got  {ours:?}"));
                }
                read += 1;
            }
            (Err(_), Some(_)) => refused += 1,
            (Ok(l), Some(why)) => failures.push(format!(
                "{name}: Triton refuses ({why}), laycert reads {}",
                l.print()
            )),
            (Err(e), None) => failures.push(format!("{name}: {e}")),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} {kind} cases mismatch ({read} read, {refused} refused alike):\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn tensor_memory_encodings_import_to_tritons_bases() {
    check_tmem("tmem", 500);
}

#[test]
fn tensor_memory_scales_import_to_tritons_bases() {
    check_tmem("tmem_scales", 20);
}

#[test]
fn tensor_memory_over_several_ctas_is_refused() {
    for c in cases("tmem_cga") {
        let text = c["text"].as_str().unwrap();
        let e = Layout::parse(text, None).expect_err(text).to_string();
        assert!(e.contains("several CTAs"), "{text}: {e}");
    }
}
