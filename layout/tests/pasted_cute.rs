//! CuTe layouts as the tools print them read with the tools' meaning: the CuTe DSL's swizzled
//! print `S<3,4,3> o 0 o (8,64):(64,1)` and its MLIR types, C++ `print(tensor)` with the pointer
//! in front, and swizzled layouts whose negative strides an offset makes up for. Every printed
//! form of `tests/data/pycute/pasted.jsonl` (written by `bench/peers/gen_pycute_pasted.py`)
//! evaluates, at every flat index, to the offsets pycute's layout gives.

use layout::{Layout, LayoutError};
use serde_json::Value;

fn parse(text: &str) -> Layout {
    Layout::parse(text, None).unwrap_or_else(|e| panic!("{text}: {e}"))
}

/// The offset at every flat (colexicographic) index.
fn offsets(l: &Layout) -> Vec<i64> {
    match l {
        Layout::Cute(c) => (0..c.size()).map(|i| c.eval_index(i).unwrap()).collect(),
        Layout::Swizzled(s) => s.eval_all().unwrap(),
        other => panic!("{}: not a CuTe layout", other.print()),
    }
}

/// The error of `text`, rendered.
fn refusal(text: &str) -> String {
    match Layout::parse(text, None) {
        Err(LayoutError::Parse(p)) => format!("{p} [{}]", &text[p.span.clone()]),
        Err(e) => e.to_string(),
        Ok(l) => panic!("{text}: read as {}", l.print()),
    }
}

#[test]
fn dsl_swizzle_print_is_the_swizzle_offset_and_layout() {
    let l = parse("S<3,4,3> o 0 o (8,64):(64,1)");
    assert_eq!(l, parse("Sw<3,4,3> o (8,64):(64,1)"));
    assert_eq!(l.print(), "Sw<3,4,3> o (8, 64):(64, 1)");
    // (1, 2) is offset 1*64 + 2 = 66 (bit 6 set); Sw<3,4,3> XORs bits 7..9 into 4..6: 66.
    // (2, 0) is 128 (bit 7): 128 ^ 16 = 144.
    let v = offsets(&l);
    assert_eq!((v[1 + 8 * 2], v[2]), (66, 144));
    // A non-zero offset is added before the swizzle, as in the DSL.
    let l = parse("S<3,3,3> o 4 o (8,64):(64,1)");
    assert_eq!(l.print(), "Sw<3,3,3> o 4 o (8, 64):(64, 1)");
}

#[test]
fn dsl_mlir_types_hold_their_layout() {
    assert_eq!(parse("!cute.layout<\"(4,8):(8,1)\">"), parse("(4,8):(8,1)"));
    assert_eq!(
        parse("!cute.composed_layout<\"S<3,4,3> o 0 o (8,64):(64,1)\">"),
        parse("Sw<3,4,3> o (8,64):(64,1)")
    );
    assert_eq!(
        parse("!cute.composed_layout<\"S<3,4,3> o 6 o (8,2):(2,16)\">").print(),
        "Sw<3,4,3> o 6 o (8, 2):(2, 16)"
    );
}

#[test]
fn a_tensors_pointer_is_not_part_of_its_layout() {
    assert_eq!(
        parse("gmem_ptr[16b](0x7f0000000000) o (128,64):(64,_1)"),
        parse("(128,64):(64,1)")
    );
    // The swizzle comes after the pointer, inside the layout: it acts on element offsets.
    assert_eq!(
        parse("smem_ptr[16b](0x7f00) o Sw<3,4,3> o _0 o (8,64):(64,_1)"),
        parse("Sw<3,4,3> o (8,64):(64,1)")
    );
    // Unlike a pointer tag between the swizzle and the layout, where it acts on byte
    // addresses: on 16-bit elements that is Sw<3,3,3>.
    assert_eq!(
        parse("Sw<3,4,3> o smem_ptr[16b](unset) o (8,64):(64,_1)"),
        parse("Sw<3,3,3> o (8,64):(64,1)")
    );
    assert_eq!(
        parse("ptr[32b](0x7ffd5e0c1a20) o (4,8):(_1,4)"),
        parse("(4,8):(1,4)")
    );
}

#[test]
fn swizzled_layouts_with_negative_strides_read_when_no_offset_is_negative() {
    // 511 - 64 i - j >= 0 on (8,64): the smallest offset, at (7, 63), is 0.
    let l = parse("Sw<3,3,3> o 511 o (8,64):(-64,-1)");
    let v = offsets(&l);
    // (0,0): sw(511) = 511 ^ ((511 & 0b111000000) >> 3) = 511 ^ 56 = 455.
    assert_eq!(v[0], 455);
    // (7,63): sw(0) = 0.
    assert_eq!(v[511], 0);
    // The -5 is on a mode of extent 1: it never contributes.
    let l = parse("Sw<1,2,3> o (4,1,32):(1,-5,4)");
    assert_eq!(
        offsets(&l),
        (0..128).map(|o| o ^ ((o & 32) >> 3)).collect::<Vec<_>>()
    );
    // C++ prints a static negative as `_-1`.
    assert_eq!(
        parse("Sw<3,3,3> o _511 o (_8,_64):(_-64,_-1)"),
        parse("Sw<3,3,3> o 511 o (8,64):(-64,-1)")
    );
}

#[test]
fn printed_layouts_evaluate_as_pycute() {
    let path = format!(
        "{}/../tests/data/pycute/pasted.jsonl",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).expect("the oracle data file is committed");
    let cases: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(cases.len() >= 900, "{} cases", cases.len());
    let mut failures = Vec::new();
    for c in &cases {
        let t = c["text"].as_str().unwrap();
        match (Layout::parse(t, None), c.get("error")) {
            (Ok(l), None) => {
                let want: Vec<i64> = c["values"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_i64().unwrap())
                    .collect();
                if offsets(&l) != want {
                    failures.push(format!("{t}: want {want:?}, got {:?}", offsets(&l)));
                }
            }
            (Err(e), Some(why)) if e.to_string().contains(why.as_str().unwrap()) => {}
            (Ok(l), Some(_)) => failures.push(format!("{t}: read as {}", l.print())),
            (Err(e), _) => failures.push(format!("{t}: {e}")),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases fail:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn swizzled_near_misses_name_the_smallest_offset() {
    let e = refusal("Sw<3,3,3> o 510 o (8,64):(-64,-1)");
    assert!(
        e.contains("CuTe notation") && e.contains("the smallest is -1"),
        "{e}"
    );
    let e = refusal("Sw<1,2,3> o (4,2,32):(1,-5,4)");
    assert!(e.contains("the smallest is -5"), "{e}");
}

#[test]
fn printed_near_misses_name_the_notation_what_and_where() {
    let e = refusal("S<3,4> o 0 o (8,64):(64,1)");
    assert!(
        e.contains("CuTe notation: expected ','") && e.ends_with("[>]"),
        "{e}"
    );
    let e = refusal("!cute.layout<\"(?,8):(8,1)\">");
    assert!(
        e.contains("known only at run time") && e.ends_with("[?]"),
        "{e}"
    );
    let e = refusal("!cute.layout<\"(4,8):(8,1)\"");
    assert!(e.contains("'\">' closing the CuTe DSL type"), "{e}");
    let e = refusal("!cute.layout<\"S<3,4,3> o 0 o (8,64):(64,1)\">");
    assert!(e.contains("!cute.composed_layout"), "{e}");
    let e = refusal("gmem_ptr[16b](0x7f0000000000) (128,64):(64,_1)");
    assert!(
        e.contains("a tensor's pointer") && e.ends_with("[gmem_ptr]"),
        "{e}"
    );
    let e = refusal("Sw<3,4,3>_smem_ptr[16b](0x7f00) o (8,64):(64,_1)");
    assert!(
        e.contains("swizzle pointer") && e.ends_with("[_smem_ptr]"),
        "{e}"
    );
}
