//! Property tests of the Triton notations: random `#ttg.blocked` / `#ttg.nvidia_mma` attributes
//! print back exactly; random linear layouts round-trip through both `#ttg.linear` and
//! `LinearLayout::toString()` text; and a blocked import holds every tensor element, each once
//! when the CTA tile fits inside the tensor (checked by evaluating every input).

use std::collections::BTreeMap;

use layout::linear::{InDim, LinearLayout, OutDim};
use layout::notation::linear::{parse_attr, parse_to_string, print_attr, print_to_string};
use layout::triton;
use proptest::prelude::*;

fn list(v: &[i64]) -> String {
    format!(
        "[{}]",
        v.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")
    )
}

/// `n` powers of two, one doubling per entry of `picks` (a dim index, taken mod `n`).
fn split(n: usize, picks: &[usize]) -> Vec<i64> {
    let mut v = vec![1i64; n];
    for &p in picks {
        v[p % n] *= 2;
    }
    v
}

/// A blocked attribute's fields: sizePerThread, threadsPerWarp (product 32), warpsPerCTA, order.
fn blocked_fields() -> impl Strategy<Value = (Vec<i64>, Vec<i64>, Vec<i64>, Vec<usize>)> {
    (1usize..=3).prop_flat_map(|rank| {
        (
            prop::collection::vec(0u32..3, rank)
                .prop_map(|l| l.iter().map(|&x| 1i64 << x).collect()),
            prop::collection::vec(0usize..3, 5).prop_map(move |p| split(rank, &p)),
            prop::collection::vec(0usize..3, 0..4).prop_map(move |p| split(rank, &p)),
            Just((0..rank).collect::<Vec<usize>>()).prop_shuffle(),
        )
    })
}

fn blocked_text(spt: &[i64], tpw: &[i64], wpc: &[i64], order: &[usize], cta: bool) -> String {
    let order: Vec<i64> = order.iter().map(|&o| o as i64).collect();
    let mut s = format!(
        "#ttg.blocked<{{sizePerThread = {}, threadsPerWarp = {}, warpsPerCTA = {}, order = {}",
        list(spt),
        list(tpw),
        list(wpc),
        list(&order)
    );
    if cta {
        let ones = vec![1i64; spt.len()];
        s += &format!(
            ", CTAsPerCGA = {}, CTASplitNum = {}, CTAOrder = {}",
            list(&ones),
            list(&ones),
            list(&order)
        );
    }
    s + "}>"
}

proptest! {
    #[test]
    fn blocked_attribute_prints_back_exactly((spt, tpw, wpc, order) in blocked_fields(), cta: bool) {
        let text = blocked_text(&spt, &tpw, &wpc, &order, cta);
        let attr = triton::parse_attr(&text).unwrap();
        prop_assert_eq!(attr.to_string(), text.clone());
        prop_assert_eq!(triton::parse_attr(&attr.to_string()).unwrap(), attr);
    }

    #[test]
    fn mma_attribute_prints_back_exactly(v3: bool, wlog in prop::collection::vec(0u32..3, 2), n in 3u32..9) {
        let wpc: Vec<i64> = wlog.iter().map(|&l| 1i64 << l).collect();
        let instr = if v3 { vec![16, 1i64 << n, 16] } else { vec![16, 8] };
        let text = format!(
            "#ttg.nvidia_mma<{{versionMajor = {}, versionMinor = 0, warpsPerCTA = {}, instrShape = {}}}>",
            if v3 { 3 } else { 2 }, list(&wpc), list(&instr));
        let attr = triton::parse_attr(&text).unwrap();
        prop_assert_eq!(attr.to_string(), text);
        prop_assert!(attr.to_linear(&[64, 64]).is_ok());
    }

    #[test]
    fn blocked_import_holds_every_element(
        (spt, tpw, wpc, order) in blocked_fields(),
        shape_logs in prop::collection::vec(0u32..6, 3),
    ) {
        let rank = spt.len();
        let shape: Vec<i64> = shape_logs[..rank].iter().map(|&l| 1i64 << l).collect();
        let text = blocked_text(&spt, &tpw, &wpc, &order, false);
        let l = triton::parse_attr(&text).unwrap().to_linear(&shape).unwrap();
        let sizes: Vec<i64> = l.ins().iter().map(|d| 1i64 << d.bases.len()).collect();
        let mut held: BTreeMap<Vec<i64>, i64> = BTreeMap::new();
        let total: i64 = sizes.iter().product();
        for flat in 0..total {
            let mut rest = flat;
            let input: Vec<i64> = sizes.iter().map(|s| { let x = rest % s; rest /= s; x }).collect();
            *held.entry(l.apply(&input).unwrap()).or_default() += 1;
        }
        let elements: i64 = shape.iter().product();
        prop_assert_eq!(held.len() as i64, elements, "every element is held");
        let tile_fits = (0..rank).all(|d| spt[d] * tpw[d] * wpc[d] <= shape[d]);
        if tile_fits {
            prop_assert!(held.values().all(|&n| n == 1), "each element once when the tile fits");
        }
    }
}

/// A random linear layout: up to 4 out-dims (`dim0..`) of size up to 2^6, in-dims
/// `register, lane, warp, block` (or fewer) with up to 5 bases each, values inside the out-dims.
fn linear_layout(named_dims: bool) -> impl Strategy<Value = LinearLayout> {
    let outs = prop::collection::vec(0u32..7, 0..4);
    let ins = prop::collection::vec(
        prop::collection::vec(prop::collection::vec(any::<u64>(), 4), 0..6),
        1..5,
    );
    (outs, ins, any::<bool>()).prop_map(move |(logs, ins, offset)| {
        let names: Vec<&str> = if offset && !named_dims {
            vec!["offset"]
        } else {
            vec!["register", "lane", "warp", "block"]
        };
        let outs: Vec<OutDim> = logs
            .iter()
            .enumerate()
            .map(|(i, &l)| OutDim {
                name: if named_dims {
                    format!("dim{i}")
                } else {
                    format!("d{i}x")
                },
                log2_size: l,
            })
            .collect();
        let ins = ins
            .iter()
            .zip(&names)
            .map(|(bases, name)| InDim {
                name: name.to_string(),
                bases: bases
                    .iter()
                    .map(|b| {
                        outs.iter()
                            .zip(b)
                            .map(|(o, v)| (*v % (o.size() as u64)) as i64)
                            .collect()
                    })
                    .collect(),
            })
            .collect();
        LinearLayout::new(ins, outs).unwrap()
    })
}

proptest! {
    #[test]
    fn linear_attribute_round_trips(l in linear_layout(true)) {
        let text = print_attr(&l).unwrap();
        let shape: Vec<i64> = l.outs().iter().map(|o| o.size()).collect();
        // Without a shape the bases come back as written.
        let bare = parse_attr(&text, None).unwrap();
        prop_assert_eq!(print_attr(&bare).unwrap(), text.clone());
        prop_assert_eq!(bare.ins(), l.ins());
        // With its own shape, a layout whose bases reach every dim's size comes back
        // unchanged; one that does not is repeated in registers up to it, as Triton fits it.
        let back = parse_attr(&text, Some(&shape)).unwrap();
        // Bits of each out-dim the bases reach.
        let reached: Vec<u32> = (0..shape.len())
            .map(|j| {
                let max = l.ins().iter().flat_map(|d| &d.bases).map(|b| b[j]).max().unwrap_or(0);
                64 - (max as u64).leading_zeros()
            })
            .collect();
        let missing: u32 = l.outs().iter().zip(&reached).map(|(o, r)| o.log2_size - r).sum();
        if missing == 0 {
            prop_assert_eq!(back, l);
        } else {
            let outs: Vec<i64> = back.outs().iter().map(|o| o.size()).collect();
            prop_assert_eq!(outs, shape);
            let added = back.ins()[0].bases.len() - l.ins()[0].bases.len();
            prop_assert_eq!(added as u32, missing);
        }
    }

    #[test]
    fn to_string_text_round_trips(l in linear_layout(false)) {
        let text = print_to_string(&l);
        let back = parse_to_string(&text).unwrap();
        prop_assert_eq!(print_to_string(&back), text);
        prop_assert_eq!(back, l);
    }
}
