//! `bank::wavefronts`: worked vectors of the phase/bank model and a property test against a
//! wavefront-by-wavefront replay of the hardware queue.

use layout::bank::wavefronts;
use proptest::prelude::*;

fn all(f: impl Fn(i64) -> i64) -> Vec<Option<i64>> {
    (0..32).map(|i| Some(f(i))).collect()
}

#[test]
fn unit_stride_words_are_conflict_free() {
    assert_eq!(wavefronts(&all(|i| 4 * i), 4).unwrap(), 1);
    assert_eq!(wavefronts(&all(|i| 2 * i), 2).unwrap(), 1);
    assert_eq!(wavefronts(&all(|i| i), 1).unwrap(), 1);
}

#[test]
fn row_stride_128_bytes_serializes_every_lane() {
    assert_eq!(wavefronts(&all(|i| 128 * i), 4).unwrap(), 32);
    // Stride 8 bytes: banks 0,2,..,30 each hit by two words.
    assert_eq!(wavefronts(&all(|i| 8 * i), 4).unwrap(), 2);
}

#[test]
fn same_word_is_a_broadcast() {
    assert_eq!(wavefronts(&all(|_| 64), 4).unwrap(), 1);
    // Two bytes of the same word, and bytes of two words of one bank.
    assert_eq!(wavefronts(&all(|i| i % 4), 1).unwrap(), 1);
    assert_eq!(wavefronts(&all(|i| 128 * (i % 2)), 1).unwrap(), 2);
}

#[test]
fn wide_accesses_split_into_phases() {
    // 8 bytes: two phases of 16 lanes, each 16 x 8 = 128 contiguous bytes.
    assert_eq!(wavefronts(&all(|i| 8 * i), 8).unwrap(), 2);
    // 16 bytes: four phases of 8 lanes.
    assert_eq!(wavefronts(&all(|i| 16 * i), 16).unwrap(), 4);
    // 16 bytes, each lane its own 128-byte row: 8 rows in a phase share banks 0..3.
    assert_eq!(wavefronts(&all(|i| 128 * i), 16).unwrap(), 4 * 8);
    // 16 bytes, all lanes the same vector: one wavefront per phase.
    assert_eq!(wavefronts(&all(|_| 256), 16).unwrap(), 4);
}

#[test]
fn inactive_lanes_and_empty_phases() {
    assert_eq!(wavefronts(&[], 4).unwrap(), 0);
    assert_eq!(wavefronts(&[None; 32], 16).unwrap(), 0);
    let mut one = vec![None; 32];
    one[31] = Some(16);
    assert_eq!(wavefronts(&one, 16).unwrap(), 1);
    assert_eq!(wavefronts(&[Some(0), None, Some(128)], 4).unwrap(), 2);
}

#[test]
fn bad_requests_are_errors() {
    let e = wavefronts(&vec![Some(0); 33], 4).unwrap_err().to_string();
    assert!(e.contains("33 lanes"), "{e}");
    let e = wavefronts(&[Some(0)], 3).unwrap_err().to_string();
    assert!(e.contains("3 bytes"), "{e}");
    let e = wavefronts(&[Some(0), Some(8)], 16).unwrap_err().to_string();
    assert!(e.contains("lane 1") && e.contains("aligned"), "{e}");
    let e = wavefronts(&[Some(-4)], 4).unwrap_err().to_string();
    assert!(e.contains("non-negative"), "{e}");
}

/// Replays the hardware: each wavefront serves, per bank, one pending word (with every lane
/// waiting on it); phases run one after another.
fn replay(addrs: &[Option<i64>], bytes: i64) -> u32 {
    let per_phase = (128 / bytes.max(4)) as usize;
    let mut n = 0;
    for phase in addrs.chunks(per_phase) {
        let mut pending: Vec<i64> = phase
            .iter()
            .flatten()
            .flat_map(|a| (a / 4..(a + bytes + 3) / 4).collect::<Vec<_>>())
            .collect();
        while !pending.is_empty() {
            let mut served = std::collections::BTreeMap::new();
            for w in &pending {
                served.entry(w % 32).or_insert(*w);
            }
            pending.retain(|w| served[&(w % 32)] != *w);
            n += 1;
        }
    }
    n
}

proptest! {
    #[test]
    fn wavefronts_match_a_replay_of_the_bank_queue(
        width in prop::sample::select(vec![1u32, 2, 4, 8, 16]),
        lanes in 0usize..=32,
        raw in prop::collection::vec(prop::option::weighted(0.85, 0i64..512), 32),
    ) {
        let addrs: Vec<Option<i64>> =
            raw[..lanes].iter().map(|a| a.map(|a| a * i64::from(width))).collect();
        prop_assert_eq!(wavefronts(&addrs, width).unwrap(), replay(&addrs, i64::from(width)));
    }
}
