//! Equivalence deciders on pairs with domains 2^10 .. 2^30 (`cargo bench -p certify --bench
//! deciders`; `bench/equiv/run.sh` runs it beside the peers and writes the table).
//!
//! Each pair is a row-major CuTe layout `(2^a, 2^b):(2^b, 1)` against the same map with its
//! inner mode split, `(2^a, (2^c, 2^(b-c))):(2^b, (1, 2^c))`: equivalent, so every decider does
//! its whole job (an enumeration cannot stop early). The forward forms are built once; each
//! decider is timed alone, the normal form including both conversions to F2.

use certify::claim::forms;
use certify::{exhaustive, normal_form, smt};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use layout::Layout;

/// The pair with a domain of 2^k.
fn pair(k: u32) -> (Layout, Layout, Vec<i64>) {
    let (a, b) = (k / 2, k - k / 2);
    let c = b / 2;
    let left = format!("({}, {}):({}, 1)", 1i64 << a, 1i64 << b, 1i64 << b);
    let right = format!(
        "({}, ({}, {})):({}, (1, {}))",
        1i64 << a,
        1i64 << c,
        1i64 << (b - c),
        1i64 << b,
        1i64 << c
    );
    let parse = |t: &str| Layout::parse(t, None).expect("bench layouts parse");
    (parse(&left), parse(&right), vec![1i64 << a, 1i64 << b])
}

const SIZES: [u32; 5] = [10, 16, 20, 24, 30];

fn deciders(c: &mut Criterion) {
    let mut g = c.benchmark_group("normal_form");
    for k in SIZES {
        let (a, b, shape) = pair(k);
        let (fa, fb) = forms(&a, &b, &shape).unwrap();
        g.bench_with_input(BenchmarkId::from_parameter(k), &k, |bench, _| {
            bench.iter(|| normal_form::decide(&a, &b, &shape, &fa, &fb))
        });
    }
    g.finish();
    let mut g = c.benchmark_group("smt");
    g.sample_size(20);
    for k in SIZES {
        let (a, b, shape) = pair(k);
        let (fa, fb) = forms(&a, &b, &shape).unwrap();
        g.bench_with_input(BenchmarkId::from_parameter(k), &k, |bench, _| {
            bench.iter(|| smt::decide(&fa, &fb, smt::DEFAULT_RLIMIT))
        });
    }
    g.finish();
    let mut g = c.benchmark_group("exhaustive");
    g.sample_size(10);
    for k in SIZES {
        let (a, b, shape) = pair(k);
        let (fa, fb) = forms(&a, &b, &shape).unwrap();
        g.bench_with_input(BenchmarkId::from_parameter(k), &k, |bench, _| {
            bench.iter(|| exhaustive::decide(&fa, &fb, 1 << 30))
        });
    }
    g.finish();
}

criterion_group!(benches, deciders);
criterion_main!(benches);
