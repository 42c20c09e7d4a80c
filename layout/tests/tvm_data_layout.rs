//! TVM data-layout strings read as TVM 0.27 applies them. Every case of
//! `tests/data/tvm/data_layout.jsonl` (written by `bench/peers/gen_tvm_data_layout.py`: TVM's
//! `sbijective_layout` builds each pair, `forward_shape` gives the transformed buffer's shape and
//! `forward_index` the transformed indices):
//!
//! - a pair TVM transforms without padding reads, and gives at every coordinate of the data the
//!   offset of TVM's transformed index in TVM's transformed buffer (flattened row-major);
//! - a pair TVM refuses (an invalid layout string, different primal axes) is refused;
//! - a pair where TVM pads (a primal extent no multiple of the new factor) is refused, saying so;
//! - a pair whose map is no strided map (the data's own scan of TVM's offsets says so: a primal
//!   axis re-split by a factor that does not divide the old one) is refused as no Axe layout.
//!
//! One disagreement is laycert's on purpose: TVM 0.27 accepts `"NCHW4"`, a factor with no axis
//! after it, and drops the 4; laycert refuses it (the 4 means nothing, and a user who wrote it
//! meant something).

use layout::axis::Axis;
use layout::notation::Notation;
use layout::Layout;
use serde_json::Value;

fn cases() -> Vec<Value> {
    let path = format!(
        "{}/../tests/data/tvm/data_layout.jsonl",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).expect("the oracle data file is committed");
    text.lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect()
}

fn ints(v: &Value) -> Vec<i64> {
    v.as_array()
        .expect("a list")
        .iter()
        .map(|x| x.as_i64().expect("an integer"))
        .collect()
}

/// The text a user pastes for a case: the pair, or the layout alone.
fn text_of(c: &Value) -> String {
    let (src, dst) = (c["src"].as_str().unwrap(), c["dst"].as_str().unwrap());
    if src.is_empty() {
        format!("tvm.s_tir.slayout(\"{dst}\")")
    } else {
        format!("tvm.s_tir.sbijective_layout(\"{src}\", \"{dst}\")")
    }
}

/// (coordinate, TVM's offset) pairs of a case.
fn points(c: &Value, shape: &[i64]) -> Vec<(Vec<i64>, i64)> {
    if let Some(offs) = c["offsets"].as_array() {
        let size: i64 = shape.iter().product();
        assert_eq!(offs.len() as i64, size);
        (0..size)
            .map(|x| {
                let mut coord = vec![0; shape.len()];
                let mut y = x;
                for d in (0..shape.len()).rev() {
                    coord[d] = y % shape[d];
                    y /= shape[d];
                }
                (coord, offs[x as usize].as_i64().unwrap())
            })
            .collect()
    } else {
        c["points"]
            .as_array()
            .expect("points")
            .iter()
            .map(|p| (ints(&p[0]), p[1].as_i64().unwrap()))
            .collect()
    }
}

#[test]
fn every_case_reads_as_tvm_transforms_it_or_is_refused_where_tvm_refuses_or_pads() {
    let cases = cases();
    assert!(cases.len() >= 400, "{} cases", cases.len());
    let (mut read, mut refused_tvm, mut refused_padded, mut refused_unstrided) = (0, 0, 0, 0);
    let mut points_checked = 0;
    let mut failures = Vec::new();
    for c in &cases {
        let shape = ints(&c["shape"]);
        let text = text_of(c);
        let got = Layout::parse(&text, Some(&shape));
        let lenient = c["dst"]
            .as_str()
            .unwrap()
            .ends_with(|ch: char| ch.is_ascii_digit());
        match (c["tvm_error"].is_null(), c["padded"].as_bool(), got) {
            (false, _, Ok(l)) => failures.push(format!(
                "{text} on {shape:?}: TVM refuses ({}), laycert read {}",
                c["tvm_error"],
                l.print()
            )),
            (false, _, Err(_)) => refused_tvm += 1,
            (true, Some(true), Ok(l)) => failures.push(format!(
                "{text} on {shape:?}: TVM pads to {}, laycert read {}",
                c["tvm_shape"],
                l.print()
            )),
            (true, Some(true), Err(e)) => {
                if !e.to_string().contains("TVM pads it") {
                    failures.push(format!("{text} on {shape:?}: padded, but refused as: {e}"));
                }
                refused_padded += 1;
            }
            (true, _, Err(e)) => {
                // Re-splitting a primal axis by a factor that does not divide the old one
                // (`NCHW2c` -> `NCHW3c`) gives TVM an index map that is no strided map.
                let why = e.to_string();
                if c["strided"].as_bool() == Some(false)
                    && (why.contains("no Axe layout") || why.contains("no strided map"))
                {
                    refused_unstrided += 1;
                } else if !lenient {
                    failures.push(format!(
                        "{text} on {shape:?}: TVM transforms it, refused: {e}"
                    ));
                }
            }
            (true, _, Ok(l)) => {
                read += 1;
                if c["strided"].as_bool() != Some(true) {
                    failures.push(format!(
                        "{text} on {shape:?}: the data's scan finds no strided map, read as {}",
                        l.print()
                    ));
                }
                let Layout::Axe(axe) = &l else {
                    failures.push(format!("{text}: read as {}", l.print()));
                    continue;
                };
                for (coord, want) in points(c, &shape) {
                    let flat = coord
                        .iter()
                        .zip(&shape)
                        .fold(0, |acc, (&i, &s)| acc * s + i);
                    let got: Vec<i64> = axe
                        .eval_flat(flat)
                        .unwrap()
                        .iter()
                        .map(|p| p.get(&Axis::m()).copied().unwrap_or(0))
                        .collect();
                    points_checked += 1;
                    if got != [want] {
                        failures.push(format!(
                            "{text} on {shape:?} = {}: at {coord:?} laycert {got:?}, TVM {want}",
                            l.print()
                        ));
                        break;
                    }
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
    eprintln!(
        "read {read} ({points_checked} coordinates checked); refused as TVM does \
         {refused_tvm}; refused where TVM pads {refused_padded}; refused as no strided map \
         {refused_unstrided}"
    );
    // A reader that refused everything would pass the loop above.
    assert!(read >= 120, "read {read}");
    assert!(refused_tvm >= 100 && refused_padded >= 50);
}

#[test]
fn worked_example_nchw16c() {
    // NCHW -> NCHW16c on (2, 32, 3, 3): lambda N, C, H, W: (N, C // 16, H, W, C % 16) into
    // the buffer (2, 2, 3, 3, 16), strides (288, 144, 48, 16, 1).
    let want = "S[(2,2,16,3,3):(288,144,1,48,16)]";
    for text in [
        "tvm.tir.bijective_layout(\"NCHW\", \"NCHW16c\")",
        "layout(\"NCHW16c\")",
        "layout_transform(%x, src_layout=\"NCHW\", dst_layout=\"NCHW16c\")",
        "bijective_layout('NCHW', 'NCHW16c')  # Python",
    ] {
        assert_eq!(Notation::detect(text), Notation::TvmDataLayout, "{text}");
        let l = Layout::parse(text, Some(&[2, 32, 3, 3])).unwrap();
        assert_eq!(l.print(), want, "{text}");
    }
    // The reverse: the packed buffer's index back to NCHW.
    let back = Layout::parse(
        "bijective_layout(\"NCHW16c\", \"NCHW\")",
        Some(&[2, 2, 3, 3, 16]),
    );
    assert_eq!(back.unwrap().print(), "S[(2,2,3,3,16):(288,144,3,1,9)]");
}

#[test]
fn refusals_name_what_and_where() {
    let shape: &[i64] = &[2, 32, 3, 3];
    for (text, says) in [
        ("layout(\"NCHW16c\") extra", "text after the call"),
        ("layout(\"NC4HW\")", "a factor (4) before the primal axis H"),
        ("layout(\"NCHWc\")", "needs a factor of at least 1"),
        ("layout(\"NCHW4c2c\")", "appears twice"),
        ("layout(\"NCH16w\")", "has no primal axis W"),
        ("layout(\"NCHW4\")", "ends in the factor 4"),
        ("layout(\"NCHW99999999999c\")", "TVM keeps factors in int32"),
        (
            "bijective_layout(\"NCHW\", \"NHW\")",
            "different primal axes",
        ),
        (
            "bijective_layout(\"NCHW\", \"NCHW3c\")",
            "TVM pads it to 33",
        ),
        ("bijective_layout(\"NCHW16c\", \"NCHW\")", "has 5 axes"),
    ] {
        let e = Layout::parse(text, Some(shape)).unwrap_err().to_string();
        assert!(e.contains(says), "{text}: {e}");
    }
    let e = Layout::parse("layout(\"NCHW16c\")", None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("--shape"), "{e}");
    let e = Layout::parse(
        "bijective_layout(\"NCHW16c\", \"NCHW\")",
        Some(&[2, 2, 3, 3, 8]),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("its factor is 16"), "{e}");
}
