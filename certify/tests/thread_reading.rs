//! One reading of a layout's threads, whatever it is compared with (the deciders audit, F1):
//! `S[64:1@laneid]` was equivalent to `S[64:1@tx]` (read fused, `tx = laneid + 32*warpid`),
//! `S[64:1@tx]` to `S[(2,32):(1@warpid,1@laneid)]`, yet the first and the last were not
//! equivalent (read lane by lane, because the PAIR had wide lanes and warps). A layout on lanes
//! and warps, with warps, whose lanes span more than 32 values is now a wavefront layout on its
//! own, read apart only; every other layout is read fused.

use certify::equivalent;
use layout::Layout;
use proptest::prelude::*;

mod common;

use common::{chain_violation, parse, policy};

/// `Some(true)` equivalent, `Some(false)` not, `None` refused.
fn verdict(a: &Layout, b: &Layout) -> Option<bool> {
    equivalent(a, b, None, &policy())
        .ok()
        .map(|r| r.verdict() == "equivalent")
}

#[test]
fn the_audit_triple_no_longer_breaks_transitivity() {
    let (a, b, c) = (
        parse("S[64:1@laneid]"),
        parse("S[64:1@tx]"),
        parse("S[(2,32):(1@warpid,1@laneid)]"),
    );
    for (x, y) in [(&a, &b), (&b, &c), (&a, &c), (&c, &a)] {
        assert_eq!(verdict(x, y), Some(true), "{} vs {}", x.print(), y.print());
    }
    // A wavefront with warps is read apart: not the CUDA layout with the same fused threads,
    // and refused against `tx`.
    let w = parse("S[(2,64):(1@warpid,1@laneid)]");
    assert!(certify::claim::is_wavefront(&w).unwrap());
    let cuda = parse("S[(2,2,32):(2@warpid,1@warpid,1@laneid)]");
    assert_eq!(verdict(&w, &cuda), Some(false));
    let e = equivalent(&w, &parse("S[128:1@tx]"), None, &policy())
        .unwrap_err()
        .to_string();
    assert!(e.contains("wavefront") && e.contains("`tx`"), "{e}");
    // Triton keeps lanes and warps apart: 64 lanes in one warp is a wavefront, not the
    // 32-lane layout with two warps (Gluon's bases differ); against lanes without warps, read
    // as CUDA threads, there is no common reading.
    let wave64 = Layout::parse(
        "#ttg.blocked<{sizePerThread = [1], threadsPerWarp = [64], warpsPerCTA = [1], order = [0]}>",
        Some(&[64]),
    )
    .unwrap();
    let warp32 = Layout::parse(
        "#ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [2], order = [0]}>",
        Some(&[64]),
    )
    .unwrap();
    assert!(certify::claim::is_wavefront(&wave64).unwrap());
    assert_eq!(verdict(&wave64, &warp32), Some(false));
    assert_eq!(verdict(&warp32, &c), Some(true));
    assert_eq!(verdict(&wave64, &a), None);
    // Two spellings of one wavefront map are equivalent.
    assert_eq!(
        verdict(&w, &parse("S[(2,2,32):(1@warpid,32@laneid,1@laneid)]")),
        Some(true)
    );
}

/// A thread map of 8 logical cells, as (extents, strides in threads, offset in threads).
fn thread_map() -> impl Strategy<Value = (Vec<i64>, Vec<i64>, i64)> {
    (
        prop::sample::select(vec![vec![8i64], vec![2, 4], vec![4, 2], vec![2, 2, 2]]),
        prop::collection::vec(prop::sample::select(vec![1i64, 2, 8, 16, 32, 64]), 3),
        prop::sample::select(vec![0i64, 32]),
    )
        .prop_map(|(e, s, o)| {
            let n = e.len();
            (e, s[..n].to_vec(), o)
        })
}

/// One spelling of a thread map: each stride (and the offset) on `tx`, on `laneid` (any
/// value, so lanes may pass 31), or on `warpid` where it is whole warps.
fn spell(map: &(Vec<i64>, Vec<i64>, i64), how: &[u8]) -> String {
    let on = |v: i64, h: u8| match h % 3 {
        0 => format!("{v}@tx"),
        1 => format!("{v}@laneid"),
        _ if v % 32 == 0 => format!("{}@warpid", v / 32),
        _ => format!("{v}@laneid"),
    };
    let e: Vec<String> = map.0.iter().map(i64::to_string).collect();
    let s: Vec<String> = map.1.iter().zip(how).map(|(&v, &h)| on(v, h)).collect();
    let off = if map.2 == 0 {
        String::new()
    } else {
        format!(" + {}", on(map.2, how[3]))
    };
    format!("S[({}):({})]{off}", e.join(","), s.join(","))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// For every triple of random thread layouts (of one size), answered verdicts chain.
    #[test]
    fn thread_verdicts_are_transitive(
        maps in prop::collection::vec(thread_map(), 1..3),
        spellings in prop::collection::vec((0usize..2, prop::collection::vec(0u8..3, 4)), 3..7),
    ) {
        // Several spellings of one or two maps, so many pairs are equal when read fused.
        let texts: Vec<String> = spellings
            .iter()
            .map(|(m, how)| spell(&maps[m % maps.len()], how))
            .collect();
        let layouts: Vec<Layout> = texts.iter().map(|t| parse(t)).collect();
        let n = layouts.len();
        let table: Vec<Vec<Option<bool>>> = (0..n)
            .map(|i| (0..n).map(|j| verdict(&layouts[i], &layouts[j])).collect())
            .collect();
        for i in 0..n {
            for j in 0..n {
                prop_assert_eq!(table[i][j], table[j][i], "{} vs {}", &texts[i], &texts[j]);
            }
        }
        let v = chain_violation(&table, &texts.iter().map(String::as_str).collect::<Vec<_>>());
        prop_assert!(v.is_none(), "{}", v.unwrap_or_default());
    }
}
