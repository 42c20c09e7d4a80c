//! The bank-conflict model two ways: the brute-force simulator (any memory layout, pointwise)
//! and lemma 9.4's formula (F2 memory layouts). They must agree on every F2 case.

use layout::bank::{lemma_9_4, linear_offsets, max_vector, simulate};
use layout::cute::CuteLayout;
use layout::linear::LinearLayout;
use layout::notation::cute::{parse_layout, parse_swizzled};
use proptest::prelude::*;

mod linear_support;
use linear_support::{ll2, unit, units, Rng};

/// Row-major memory for an `2^r x 2^c` tile: offset bits are dim1's, then dim0's.
fn row_major(r: u32, c: u32) -> LinearLayout {
    let mut b: Vec<(usize, u32)> = (0..c).map(|k| (1, k)).collect();
    b.extend((0..r).map(|k| (0, k)));
    ll2(&[("offset", units(&b))], r, c)
}

/// 32 lanes down a column of a 32x32 f32 tile, one element each.
fn column_reader() -> LinearLayout {
    ll2(
        &[
            (
                "register",
                units(&(0..5).map(|k| (1, k)).collect::<Vec<_>>()),
            ),
            ("lane", units(&(0..5).map(|k| (0, k)).collect::<Vec<_>>())),
        ],
        5,
        5,
    )
}

#[test]
fn column_reads_of_a_row_major_tile_conflict_32_ways() {
    let dist = column_reader();
    let mem = row_major(5, 5);
    let offs = linear_offsets(&mem, dist.outs()).unwrap();
    let rep = simulate(&dist, &*offs, 4, &[]).unwrap();
    assert_eq!(
        rep.histogram.into_iter().collect::<Vec<_>>(),
        vec![(32, 32)]
    );
    assert_eq!(lemma_9_4(&dist, &mem, 4, &[]).unwrap(), 32);
}

#[test]
fn padding_removes_the_conflicts_pointwise() {
    // (32,32):(33,1): row stride 33 words, not an F2 layout; the simulator evaluates it.
    let pad = parse_layout("(32,32):(33,1)").unwrap();
    let dist = column_reader();
    let offs = |c: &[i64]| pad.eval(&[32, 32], c);
    let rep = simulate(&dist, &offs, 4, &[]).unwrap();
    assert_eq!(rep.total_wavefronts, 32);
    assert_eq!(rep.max_wavefronts(), 1);
}

#[test]
fn xor_swizzle_removes_the_conflicts_both_ways() {
    // Sw<5,0,5> o (32,32):(32,1): column j of row i is stored at j ^ i.
    let sw = parse_swizzled("Sw<5,0,5> o (32,32):(32,1)").unwrap();
    let dist = column_reader();
    let offs = |c: &[i64]| sw.eval(&[32, 32], c);
    assert_eq!(simulate(&dist, &offs, 4, &[]).unwrap().max_wavefronts(), 1);
    // The same swizzle as an F2 layout: offset bit k (k < 5) -> dim1 bit k, bit 5+k -> dim0 bit
    // k and dim1 bit k.
    let mut bases = units(&(0..5).map(|k| (1, k)).collect::<Vec<_>>());
    bases.extend((0..5).map(|k| vec![1 << k, 1 << k]));
    let mem = ll2(&[("offset", bases)], 5, 5);
    let lin = linear_offsets(&mem, dist.outs()).unwrap();
    for i in 0..32 {
        for j in 0..32 {
            assert_eq!(lin(&[i, j]).unwrap(), offs(&[i, j]).unwrap());
        }
    }
    assert_eq!(lemma_9_4(&dist, &mem, 4, &[]).unwrap(), 1);
}

#[test]
fn vectorized_f16_rows_take_one_wavefront_per_phase() {
    // 8 f16 per lane along a row, 4 lanes per 64-element row, 8 rows per warp: 16-byte
    // accesses, 4 phases, no conflicts.
    let mut reg = units(&(0..3).map(|k| (1, k)).collect::<Vec<_>>());
    reg.push(vec![0, 0]);
    let lane = units(&[(1, 3), (1, 4), (0, 0), (0, 1), (0, 2)]);
    let dist = ll2(&[("register", reg), ("lane", lane)], 3, 5);
    let mem = row_major(3, 5);
    let offs = linear_offsets(&mem, dist.outs()).unwrap();
    assert_eq!(max_vector(&dist, &*offs, 2).unwrap(), vec![0, 1, 2]);
    let rep = simulate(&dist, &*offs, 2, &[0, 1, 2]).unwrap();
    assert_eq!(rep.access_bytes, 16);
    assert_eq!(rep.instructions_per_warp, 2);
    assert_eq!(rep.histogram.into_iter().collect::<Vec<_>>(), vec![(4, 2)]);
    assert_eq!(lemma_9_4(&dist, &mem, 2, &[0, 1, 2]).unwrap(), 4);
}

#[test]
fn bad_vectors_are_errors() {
    let dist = column_reader();
    let mem = row_major(5, 5);
    let offs = linear_offsets(&mem, dist.outs()).unwrap();
    let e = simulate(&dist, &*offs, 4, &[0, 0]).unwrap_err().to_string();
    assert!(e.contains("distinct"), "{e}");
    let e = simulate(&dist, &*offs, 4, &[0, 1, 2])
        .unwrap_err()
        .to_string();
    assert!(e.contains("16 bytes"), "{e}");
    // Register bit 0 steps along dim1 = +1 element: contiguous. Along a column it is not.
    let col = ll2(
        &[
            (
                "register",
                units(&(0..5).map(|k| (0, k)).collect::<Vec<_>>()),
            ),
            ("lane", units(&(0..5).map(|k| (1, k)).collect::<Vec<_>>())),
        ],
        5,
        5,
    );
    let offs2 = linear_offsets(&mem, col.outs()).unwrap();
    let e = simulate(&col, &*offs2, 4, &[0]).unwrap_err().to_string();
    assert!(e.contains("not contiguous"), "{e}");
    assert!(lemma_9_4(&col, &mem, 4, &[0]).is_err());
}

/// A random distributed layout over `d` logical bits (split into two dims) and a random
/// bijective memory layout whose first `v` offset bits are register bases of it.
fn arb_pair() -> impl Strategy<Value = (LinearLayout, LinearLayout, u32, Vec<usize>)> {
    (
        2u32..=5,
        2u32..=5,
        0usize..=5,
        prop::sample::select(vec![1u32, 2, 4, 8]),
        any::<u64>(),
        0usize..=3,
    )
        .prop_map(|(d0, d1, lanes, elem, seed, zeros)| {
            let mut rng = Rng(seed | 1);
            let mut rnd = |n: u64| rng.below(n);
            let d = d0 + d1;
            let bits = Rng(seed | 1).permutation(d);
            let lanes = lanes.min(d as usize);
            let mut lane: Vec<Vec<i64>> = bits[..lanes].iter().map(|&b| unit(b, d0)).collect();
            let mut reg: Vec<Vec<i64>> = bits[lanes..].iter().map(|&b| unit(b, d0)).collect();
            let mut z = Rng(seed ^ 0x9e37_79b9);
            for _ in 0..zeros {
                if z.below(2) == 0 {
                    z.maybe_broadcast(&mut lane, 1, 5);
                } else {
                    z.maybe_broadcast(&mut reg, 1, usize::MAX);
                }
            }
            let dist = ll2(&[("register", reg.clone()), ("lane", lane)], d0, d1);
            // Vector: up to 16 bytes of nonzero registers.
            let max_v = (16 / elem).trailing_zeros() as usize;
            let cand: Vec<usize> = (0..reg.len()).filter(|&i| reg[i] != vec![0, 0]).collect();
            let v = (rnd(max_v as u64 + 1) as usize).min(cand.len());
            let vector: Vec<usize> = cand.iter().copied().take(v).collect();
            let flat = |c: &Vec<i64>| (c[0] as u128) | (c[1] as u128) << d0;
            let mut cols: Vec<u128> = vector.iter().map(|&i| flat(&reg[i])).collect();
            // The other offset bits span the other logical bits, so vectors stay aligned.
            let rest: u128 = ((1u128 << d) - 1) & !cols.iter().fold(0, |a, c| a | c);
            let mut ech = layout::f2::Echelon::of_columns(&cols);
            while cols.len() < d as usize {
                let c = u128::from(rnd(1 << d)) & rest;
                if ech.insert(c, 0) {
                    cols.push(c);
                }
            }
            let bases = cols
                .iter()
                .map(|&c| vec![(c & ((1 << d0) - 1)) as i64, (c >> d0) as i64])
                .collect();
            let mem = ll2(&[("offset", bases)], d0, d1);
            (dist, mem, elem, vector)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]
    #[test]
    fn simulator_and_lemma_9_4_agree_on_every_instruction((dist, mem, elem, vector) in arb_pair()) {
        let offs = linear_offsets(&mem, dist.outs()).unwrap();
        let rep = simulate(&dist, &*offs, elem, &vector).unwrap();
        let f = lemma_9_4(&dist, &mem, elem, &vector).unwrap();
        prop_assert_eq!(rep.histogram.keys().copied().collect::<Vec<_>>(), vec![f]);
    }
}

/// Real distributed layouts (Triton blocked and MMA accumulators, imported from their
/// attributes) against the memory layouts kernels use (row- and column-major, and every CuTe
/// `Sw<B,M,S>` over them, read back as F2 layouts): simulator and lemma 9.4 agree on every
/// instruction, for every vector the pair admits.
#[test]
fn simulator_and_lemma_9_4_agree_on_real_layouts() {
    use layout::swizzle::{Swizzle, SwizzledLayout};
    use layout::swizzle_opt::memory_from_offsets;
    let dists = [
        "#ttg.blocked<{sizePerThread=[1,8], threadsPerWarp=[4,8], warpsPerCTA=[2,1], order=[1,0]}>",
        "#ttg.blocked<{sizePerThread=[4,1], threadsPerWarp=[8,4], warpsPerCTA=[1,2], order=[0,1]}>",
        "#ttg.blocked<{sizePerThread=[2,2], threadsPerWarp=[4,8], warpsPerCTA=[2,1], order=[1,0]}>",
        "#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 1], instrShape = [16, 8]}>",
    ];
    let mut checked = 0;
    for text in dists {
        let layout::Layout::Linear(dist) = layout::Layout::parse(text, Some(&[32, 64])).unwrap()
        else {
            panic!("{text} imports to a linear layout")
        };
        let mut bases = vec![
            CuteLayout::from_flat(&[32, 64], &[64, 1]).unwrap(),
            CuteLayout::from_flat(&[32, 64], &[1, 32]).unwrap(),
        ];
        bases.dedup();
        for base in bases {
            let mut sws = vec![Swizzle::identity()];
            for (b, m, s) in [
                (1, 0, 5),
                (2, 1, 4),
                (3, 3, 3),
                (3, 2, 3),
                (2, 4, 3),
                (3, 1, 6),
            ] {
                sws.push(Swizzle::new(b, m, s).unwrap());
            }
            for sw in sws {
                let sl = SwizzledLayout::new(sw, base.clone()).unwrap();
                let offs = |c: &[i64]| sl.eval(&[32, 64], c);
                let mem = memory_from_offsets(dist.outs(), &offs).unwrap();
                for elem in [1u32, 2, 4, 8] {
                    let widest = max_vector(&dist, &offs, elem).unwrap();
                    for v in 0..=widest.len() {
                        let rep = simulate(&dist, &offs, elem, &widest[..v]).unwrap();
                        let f = lemma_9_4(&dist, &mem, elem, &widest[..v]).unwrap();
                        assert_eq!(
                            rep.histogram.keys().copied().collect::<Vec<_>>(),
                            vec![f],
                            "{text} on {sl}, {elem}-byte elements, vector {:?}",
                            &widest[..v]
                        );
                        checked += 1;
                    }
                }
            }
        }
    }
    assert!(checked > 200, "{checked}");
}

#[test]
fn oversized_layouts_are_refused_not_enumerated() {
    let huge = ll2(
        &[
            ("register", vec![vec![0, 0]; 30]),
            ("lane", units(&(0..5).map(|k| (0, k)).collect::<Vec<_>>())),
        ],
        5,
        0,
    );
    let mem = ll2(
        &[("offset", units(&(0..5).map(|k| (0, k)).collect::<Vec<_>>()))],
        5,
        0,
    );
    let offs = linear_offsets(&mem, huge.outs()).unwrap();
    let e = simulate(&huge, &*offs, 4, &[]).unwrap_err().to_string();
    assert!(e.contains("at most 2^24"), "{e}");
    assert!(layout::swizzle_opt::optimal_swizzle(&huge, &huge, 4).is_err());
    assert!(layout::shuffle::shuffle_plan(&huge, &huge, 4).is_err());
    // The formula needs no enumeration.
    assert_eq!(lemma_9_4(&huge, &mem, 4, &[]).unwrap(), 1);
}

fn linear(text: &str, shape: &[i64]) -> LinearLayout {
    match layout::Layout::parse(text, Some(shape)).unwrap() {
        layout::Layout::Linear(l) => l,
        other => panic!("{text} imports to a linear layout, not {other:?}"),
    }
}

/// Triton's shared attributes import as `(offset, block) -> logical` with `block = []` for one
/// CTA: that size-1 in-dim is no second input. `swizzled_shared` vec=8, perPhase=1,
/// maxPhase=8 and the 128-byte `nvmma_shared` of f16 on 64x64 are CuTe's `Sw<3,3,3> o
/// (64,64):(64,1)`, offset for offset.
#[test]
fn triton_shared_attributes_are_memory_layouts_with_cute_offsets() {
    let sw = parse_swizzled("Sw<3,3,3> o (64,64):(64,1)").unwrap();
    for text in [
        "#ttg.swizzled_shared<{vec=8, perPhase=1, maxPhase=8, order=[1,0]}>",
        "#ttg.nvmma_shared<{swizzlingByteWidth=128, transposed=false, elementBitWidth=16}>",
        "#ttg.linear<{offset = [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [0, 32], [1, 8], \
         [2, 16], [4, 32], [8, 0], [16, 0], [32, 0]], block = []}>",
    ] {
        let mem = linear(text, &[64, 64]);
        assert_eq!(
            mem.in_dim("block").map(|d| d.bases.len()),
            Some(0),
            "{text}"
        );
        let offs = linear_offsets(&mem, mem.outs()).unwrap();
        for i in 0..64 {
            for j in 0..64 {
                assert_eq!(
                    offs(&[i, j]).unwrap(),
                    sw.eval(&[64, 64], &[i, j]).unwrap(),
                    "{text} at ({i}, {j})"
                );
            }
        }
    }
}

/// A multi-CTA shared layout: `block` names the CTA holding an element and the offset is its
/// place in that CTA's memory. Split over 2 CTAs along dim0, each CTA holds a 32x64 swizzled
/// tile; broadcast to 2 CTAs (a zero block basis), each holds the whole 64x64 tile.
#[test]
fn multi_cta_shared_layouts_give_the_offset_inside_the_cta() {
    let cta = "#ttg.swizzled_shared<{vec=8, perPhase=1, maxPhase=8, order=[1,0]}>";
    let (half, full) = (linear(cta, &[32, 64]), linear(cta, &[64, 64]));
    let one = linear_offsets(&half, half.outs()).unwrap();
    let split = "#ttg.swizzled_shared<{vec=8, perPhase=1, maxPhase=8, order=[1,0], \
                 CTAsPerCGA=[2,1], CTASplitNum=[2,1], CTAOrder=[1,0]}>";
    let split = linear(split, &[64, 64]);
    assert_eq!(split.in_size("block"), 2);
    let split = linear_offsets(&split, split.outs()).unwrap();
    let whole = linear_offsets(&full, full.outs()).unwrap();
    let copy = "#ttg.swizzled_shared<{vec=8, perPhase=1, maxPhase=8, order=[1,0], \
                CTAsPerCGA=[2,1], CTASplitNum=[1,1], CTAOrder=[1,0]}>";
    let copy = linear(copy, &[64, 64]);
    let copy = linear_offsets(&copy, copy.outs()).unwrap();
    for i in 0..64 {
        for j in 0..64 {
            assert_eq!(split(&[i, j]).unwrap(), one(&[i % 32, j]).unwrap());
            assert_eq!(copy(&[i, j]).unwrap(), whole(&[i, j]).unwrap());
        }
    }
}

/// What is no memory layout is refused, saying why: an in-dim other than offset and block with
/// bases, two offsets holding one element, an element at two offsets in two CTAs.
#[test]
fn memory_layouts_that_do_not_give_one_offset_per_element_are_refused() {
    use layout::bank::memory_offsets;
    let err = |l: &LinearLayout| memory_offsets(l).unwrap_err().to_string();
    let lanes = ll2(
        &[("offset", units(&[(1, 0)])), ("lane", units(&[(0, 0)]))],
        1,
        1,
    );
    assert!(
        err(&lanes).contains("in-dims [\"offset\", \"lane\"]"),
        "{}",
        err(&lanes)
    );
    let twice = ll2(
        &[
            ("offset", vec![vec![0, 1], vec![0, 1]]),
            ("block", units(&[(0, 0)])),
        ],
        1,
        1,
    );
    assert!(err(&twice).contains("two offsets"), "{}", err(&twice));
    let moved = ll2(
        &[
            ("offset", units(&[(1, 0), (0, 0)])),
            ("block", vec![vec![1, 0]]),
        ],
        1,
        1,
    );
    assert!(err(&moved).contains("different offsets"), "{}", err(&moved));
    // The size-1 in-dims are ignored, whatever their name.
    let single = ll2(
        &[
            ("offset", units(&[(1, 0), (0, 0)])),
            ("block", vec![]),
            ("x", vec![]),
        ],
        1,
        1,
    );
    let s = memory_offsets(&single).unwrap();
    assert_eq!(s.apply(&[1, 0]).unwrap(), vec![2]);
    assert_eq!(s.apply(&[0, 1]).unwrap(), vec![1]);
}
