//! TVM index maps read as TVM 0.27 applies them. Every case of `tests/data/tvm/index_map.jsonl`
//! (written by `bench/peers/gen_tvm_index_map.py`: TVM builds each map, prints it, gives the
//! transformed buffer's shape with `map_shape` and the mapped indices with `map_indices`):
//!
//! - a map laycert reads gives, at every coordinate of the data, the offset of TVM's mapped
//!   indices in TVM's transformed buffer (flattened row-major), whether the physical shape came
//!   from the pasted transformed buffer or from laycert's own rule (module doc of
//!   `layout::notation::tvm`);
//! - with TVM's transformed buffer pasted, every map the data's independent scan calls strided
//!   reads, and every other one is refused (TVM's own shape is refused where it has an extent
//!   below 1: TVM 0.27 gives `0 - i` over `i < 1` the extent -1);
//! - without it, maps TVM itself refuses (`MapShape`'s range check) are refused, and where TVM
//!   pads (its shape is not the exact range) laycert refuses rather than guess.

use layout::axis::Axis;
use layout::Layout;
use serde_json::Value;

fn cases() -> Vec<Value> {
    let path = format!(
        "{}/../tests/data/tvm/index_map.jsonl",
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

fn decl(shape: &[i64]) -> String {
    let dims: Vec<String> = shape.iter().map(i64::to_string).collect();
    format!("T.Buffer(({},), \"float16\")", dims.join(", "))
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

/// The offsets `axe` gives flat index `x` (one, where the map is a function).
fn offsets(axe: &layout::AxeLayout, x: i64) -> Vec<i64> {
    axe.eval_flat(x)
        .unwrap()
        .iter()
        .map(|p| p.get(&Axis::m()).copied().unwrap_or(0))
        .collect()
}

/// The first coordinate where `l` and TVM differ, if any.
fn first_difference(l: &Layout, c: &Value, shape: &[i64]) -> Option<String> {
    let Layout::Axe(axe) = l else {
        return Some(format!("read as {}", l.print()));
    };
    for (coord, want) in points(c, shape) {
        let flat = coord.iter().zip(shape).fold(0, |acc, (&i, &s)| acc * s + i);
        let got = offsets(axe, flat);
        if got != [want] {
            return Some(format!("at {coord:?}: laycert {got:?}, TVM {want}"));
        }
    }
    None
}

#[test]
fn read_maps_give_tvms_offsets_and_refusals_are_where_tvm_pads() {
    let cases = cases();
    assert!(cases.len() >= 600, "{} cases", cases.len());
    let (mut read, mut refused_padding, mut refused_tvm, mut declined) = (0, 0, 0, 0);
    let mut failures = Vec::new();
    for c in &cases {
        let shape = ints(&c["shape"]);
        let text = format!("{}\n{}", decl(&shape), c["text"].as_str().unwrap());
        let got = Layout::parse(&text, None);
        match (&c["tvm_shape"], got) {
            (Value::Null, Ok(l)) => failures.push(format!(
                "{text}: TVM's MapShape refuses it, laycert read {}",
                l.print()
            )),
            (Value::Null, Err(_)) => refused_tvm += 1,
            (_, Ok(l)) => {
                read += 1;
                if let Some(d) = first_difference(&l, c, &shape) {
                    failures.push(format!("{text}: {} {d}", l.print()));
                }
            }
            (tvm_shape, Err(e)) => {
                let exact = &c["exact_shape"];
                let strided = c["strided"].as_bool();
                // Refusing is right where TVM pads (its shape is not the exact range), where
                // the map is no strided map, or on a big case (no exact range in the data);
                // otherwise it must be laycert's rule declining to predict TVM's analysis
                // (a padding division, a subtraction, a product of indices, a scaled dim of
                // extent 1), which asks for the transformed buffer instead.
                let why = e.to_string();
                let excused = exact.is_null()
                    || exact != tvm_shape
                    || strided == Some(false)
                    || why.contains("pads the buffer")
                    || why.contains("comes from its own analysis");
                if !(exact.is_null() || exact != tvm_shape || strided == Some(false)) {
                    declined += 1;
                }
                if !excused {
                    failures.push(format!(
                        "{text}: refused ({why}) though TVM's shape is exact"
                    ));
                }
                refused_padding += 1;
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
        "read {read}; refused {refused_padding} ({declined} of them where TVM's shape is the \
         exact range); refused as TVM does {refused_tvm}"
    );
    // The families are mostly readable: a reader that refused everything would pass the above.
    assert!(
        read >= 250,
        "read {read}, refused {refused_padding} + {refused_tvm}"
    );
}

#[test]
fn with_tvms_transformed_buffer_every_strided_map_reads() {
    let mut read = 0;
    let mut failures = Vec::new();
    for c in cases() {
        let Some(tvm_shape) = c["tvm_shape"].as_array().map(|_| ints(&c["tvm_shape"])) else {
            continue;
        };
        let shape = ints(&c["shape"]);
        let text = format!(
            "A = {}\n{}\nA_t = {}",
            decl(&shape),
            c["text"].as_str().unwrap(),
            decl(&tvm_shape)
        );
        // TVM 0.27 gives `0 - i` over i < 1 the extent -1: no buffer, and laycert says so.
        if tvm_shape.iter().any(|&e| e < 1) {
            if Layout::parse(&text, None).is_ok() {
                failures.push(format!("{text}: a buffer extent below 1 was taken"));
            }
            continue;
        }
        match (Layout::parse(&text, None), c["strided"].as_bool()) {
            (Ok(l), strided) => {
                read += 1;
                if strided == Some(false) {
                    failures.push(format!("{text}: no strided map, read as {}", l.print()));
                } else if let Some(d) = first_difference(&l, &c, &shape) {
                    failures.push(format!("{text}: {} {d}", l.print()));
                }
            }
            (Err(e), Some(true)) => failures.push(format!("{text}: strided, refused: {e}")),
            (Err(e), _) => {
                let why = e.to_string();
                if !(why.contains("no strided map") || why.contains("no Axe layout")) {
                    failures.push(format!("{text}: refused for another reason: {why}"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    eprintln!("read {read} with TVM's transformed buffer");
    assert!(read >= 400, "read {read}");
}

mod generated {
    //! Tiled maps written out as text, against the offset computed here from the tiling itself
    //! (row-major over the tile grid, then over the tile), at every coordinate.
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        #[test]
        fn tiled_maps_read_as_their_tiling(
            tiles in prop::collection::vec((1i64..5, 1i64..5), 1..4),
            order in prop::collection::vec(0usize..100, 8),
            int64 in any::<bool>(),
        ) {
            // Dim d has extent grid_d * tile_d; the map sends i_d to (i_d // tile_d, i_d %
            // tile_d), its outputs in a shuffled order.
            let r = tiles.len();
            let names: Vec<String> = (0..r).map(|d| format!("x{d}")).collect();
            let shape: Vec<i64> = tiles.iter().map(|&(g, t)| g * t).collect();
            let c = |v: i64| if int64 { format!("T.int64({v})") } else { v.to_string() };
            let mut outs: Vec<(usize, bool)> = (0..r).flat_map(|d| [(d, false), (d, true)]).collect();
            outs.sort_by_key(|&(d, inner)| order[2 * d + usize::from(inner)]);
            let exprs: Vec<String> = outs
                .iter()
                .map(|&(d, inner)| {
                    let op = if inner { "%" } else { "//" };
                    format!("{} {op} {}", names[d], c(tiles[d].1))
                })
                .collect();
            let text = format!("T.index_map(lambda {}: ({},))", names.join(", "), exprs.join(", "));
            let extent = |&(d, inner): &(usize, bool)| if inner { tiles[d].1 } else { tiles[d].0 };
            let l = Layout::parse(&text, Some(&shape)).unwrap();
            let Layout::Axe(axe) = l else { panic!("not Axe") };
            let size: i64 = shape.iter().product();
            for x in 0..size {
                let mut coord = vec![0; r];
                let mut y = x;
                for d in (0..r).rev() {
                    coord[d] = y % shape[d];
                    y /= shape[d];
                }
                let mut want = 0;
                for o in &outs {
                    let (d, inner) = *o;
                    let t = tiles[d].1;
                    let v = if inner { coord[d] % t } else { coord[d] / t };
                    want = want * extent(o) + v;
                }
                prop_assert_eq!(offsets(&axe, x), vec![want], "{} at {:?}", text, coord);
            }
        }
    }
}
