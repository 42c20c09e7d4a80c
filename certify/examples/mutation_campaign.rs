//! The full-scale mutation campaign (`bench/mutation/run.sh`; the small-scale one is the test
//! `certify/tests/mutation.rs`).
//!
//! For N pairs (default 100,000), deterministic from the pair's index: build a layout, an
//! equivalent one by a semantics-preserving transformation across notations, and a mutant (one
//! stride, extent, axis or swizzle bit changed). Families, in turn:
//! Axe vs Axe (iter split + unit iter + replica reorder), CuTe vs Axe, CuTe vs F2 linear,
//! swizzled CuTe vs F2 linear, TV vs Axe. Ground truth for each mutant comes from the trusted
//! semantics (`layout::relation`, enumerated); a mutation that happens to keep the map is
//! counted as neutral and expected to be proved.
//!
//! Failure = an equivalent pair not proved, a changed mutant not refuted, any false proof, or a
//! decider disagreement (`certify::equivalent` errors on one). Exit 1 on any failure.
//!
//! Usage: cargo run --release -p certify --example mutation_campaign -- [PAIRS] [SMT_EVERY]
//! (z3 runs on every SMT_EVERY-th pair, default 10; normal form and exhaustive on all).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use certify::{equivalent, Policy};
use layout::convert::{convert, Target};
use layout::relation::relation;
use layout::{AxeLayout, Axis, Iter, Layout};
use rayon::prelude::*;

/// SplitMix64: a small, well-mixed deterministic generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo) as u64) as i64
    }
    fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            v.swap(i, self.below(i as u64 + 1) as usize);
        }
    }
}

fn axis(i: usize) -> Axis {
    Axis::new(["m", "laneid", "warpid", "reg"][i % 4]).expect("valid axis")
}

/// One generated case: the layout, its equivalent, the mutant, the logical shape, the family.
struct Case {
    a: Layout,
    b: Layout,
    m: Layout,
    shape: Option<Vec<i64>>,
    family: usize,
}

fn axe_case(r: &mut Rng) -> Case {
    let n = r.range(1, 5) as usize;
    let shard: Vec<Iter> = (0..n)
        .map(|_| {
            Iter::new(
                [1, 2, 3, 4, 6][r.below(5) as usize],
                r.range(-5, 6),
                axis(r.below(4) as usize),
            )
        })
        .collect();
    let rep: Vec<Iter> = (0..r.below(2))
        .map(|_| Iter::new(r.range(2, 4), r.range(1, 9), axis(r.below(4) as usize)))
        .collect();
    let off = (0..r.below(2))
        .map(|_| (axis(r.below(4) as usize), r.range(-4, 5)))
        .collect();
    let l = AxeLayout::new(shard.clone(), rep.clone(), off).expect("valid Axe layout");
    // Equivalent: split one iter, insert a unit iter, reverse the replica list.
    let i = r.below(n as u64) as usize;
    let mut d = shard.clone();
    let e1 = r.range(2, 4);
    if d[i].extent % e1 == 0 && d[i].extent > e1 {
        let it = d[i].clone();
        let e2 = it.extent / e1;
        d.splice(
            i..=i,
            [
                Iter::new(e1, e2 * it.stride, it.axis.clone()),
                Iter::new(e2, it.stride, it.axis),
            ],
        );
    }
    d.insert(
        r.below(d.len() as u64 + 1) as usize,
        Iter::new(1, 7, axis(r.below(4) as usize)),
    );
    let mut rr = rep.clone();
    rr.reverse();
    let b = AxeLayout::new(d, rr, l.offset().clone()).expect("valid");
    // Mutant: a stride, an axis or an extent.
    let mut d = shard;
    match r.below(3) {
        0 => d[i].stride += r.range(1, 3),
        1 => d[i].axis = axis(r.below(4) as usize),
        _ => {
            let e = d[i].extent;
            d[i].extent = if e > 1 { e - 1 } else { 2 };
            // Keep the size: compensate on another iter when possible (else the claim's shape
            // check refutes it by size, which the semantics confirm too).
        }
    }
    let size = l.size();
    let m = AxeLayout::new(d, rep, l.offset().clone()).expect("valid");
    let shape = (m.size() == size).then(|| vec![size]);
    Case {
        a: Layout::Axe(l),
        b: Layout::Axe(b),
        m: Layout::Axe(m),
        shape,
        family: 0,
    }
}

/// A bijective power-of-two CuTe layout over (8, 16): each logical bit -> one offset bit.
fn cute_text(perm: &[u32]) -> String {
    let s: Vec<String> = perm.iter().map(|b| (1i64 << b).to_string()).collect();
    format!(
        "((2,2,2),(2,2,2,2)):(({}),({}))",
        s[..3].join(","),
        s[3..].join(",")
    )
}

fn cute_case(r: &mut Rng, family: usize) -> Case {
    let mut perm: Vec<u32> = (0..7).collect();
    r.shuffle(&mut perm);
    let text = cute_text(&perm);
    let parse = |t: &str| Layout::parse(t, None).expect("generated text parses");
    let c = parse(&text);
    let flip = r.below(7) as usize;
    match family {
        1 | 2 => {
            let to = if family == 1 {
                Target::Axe
            } else {
                Target::Linear
            };
            let other = convert(&c, to, None).expect("exact conversion");
            let mut m = perm.clone();
            if family == 1 {
                m[flip] += 1; // a doubled stride
            } else {
                m.swap(flip, (flip + 1 + r.below(6) as usize) % 7); // two strides exchanged
            }
            let mt: Vec<String> = m.iter().map(|b| (1i64 << b).to_string()).collect();
            let mtext = format!(
                "((2,2,2),(2,2,2,2)):(({}),({}))",
                mt[..3].join(","),
                mt[3..].join(",")
            );
            Case {
                a: c,
                b: other,
                m: parse(&mtext),
                shape: Some(vec![8, 16]),
                family,
            }
        }
        _ => {
            // CuTe swizzles need S >= B; M + S + B <= 7 keeps them inside the 7 offset bits.
            let (bb, mm) = (r.range(1, 3), r.range(0, 2));
            let ss = r.range(bb, 7 - bb - mm);
            let sw = parse(&format!("Sw<{bb},{mm},{ss}> o {text}"));
            let lin = convert(&sw, Target::Linear, None).expect("exact conversion");
            let (b2, m2, s2) = match r.below(3) {
                0 if bb == 2 => (1, mm, ss),
                1 if mm == 1 => (bb, 0, ss),
                _ if mm + ss + bb < 7 => (bb, mm, ss + 1),
                _ => (bb, mm, ss - 1),
            };
            let mutant = parse(&format!("Sw<{b2},{m2},{s2}> o {text}"));
            Case {
                a: sw,
                b: lin,
                m: mutant,
                shape: Some(vec![8, 16]),
                family: 3,
            }
        }
    }
}

/// A TV layout over an (8, 16) tile: 2^t threads and 2^(7-t) values, bits permuted.
fn tv_case(r: &mut Rng) -> Case {
    let mut perm: Vec<u32> = (0..7).collect();
    r.shuffle(&mut perm);
    let t = r.range(3, 6) as usize;
    let text = |p: &[u32]| {
        let s: Vec<String> = p.iter().map(|b| (1i64 << b).to_string()).collect();
        let twos = |n: usize| vec!["2"; n].join(",");
        format!(
            "(({}),({})):(({}),({})) -> (8,16)",
            twos(t),
            twos(7 - t),
            s[..t].join(","),
            s[t..].join(",")
        )
    };
    let parse = |x: &str| Layout::parse(x, None).expect("generated TV text parses");
    let tv = parse(&text(&perm));
    let axe = convert(&tv, Target::Axe, None).expect("exact conversion");
    let mut m = perm.clone();
    let i = r.below(7) as usize;
    m.swap(i, (i + 1 + r.below(6) as usize) % 7);
    Case {
        a: tv,
        b: axe,
        m: parse(&text(&m)),
        shape: None,
        family: 4,
    }
}

fn case(index: u64) -> Case {
    let mut r = Rng(index.wrapping_mul(0x2545_f491_4f6c_dd1d) ^ 0x5eed);
    match index % 5 {
        0 => axe_case(&mut r),
        1 => cute_case(&mut r, 1),
        2 => cute_case(&mut r, 2),
        3 => cute_case(&mut r, 3),
        _ => tv_case(&mut r),
    }
}

/// The relation of a layout over the claim's shape (TV and linear layouts carry their own).
fn rel(
    l: &Layout,
    shape: Option<&[i64]>,
) -> Option<std::collections::BTreeSet<layout::relation::Pair>> {
    let s = if matches!(l, Layout::Tv(_) | Layout::Linear(_)) {
        None
    } else {
        shape
    };
    relation(l, s).ok()
}

const FAMILIES: [&str; 5] = [
    "Axe vs Axe",
    "CuTe vs Axe",
    "CuTe vs F2",
    "swizzled vs F2",
    "TV vs Axe",
];

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let pairs: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(100_000);
    let smt_every: u64 = args
        .get(2)
        .and_then(|s| s.parse().ok())
        .unwrap_or(10)
        .max(1);
    let counters: Vec<[AtomicU64; 4]> = (0..5).map(|_| Default::default()).collect();
    let failures = AtomicU64::new(0);
    let smt_runs = AtomicU64::new(0);
    let t = Instant::now();
    (0..pairs).into_par_iter().for_each(|i| {
        let c = case(i);
        let policy = Policy {
            use_smt: i % smt_every == 0,
            ..Policy::default()
        };
        if policy.use_smt {
            smt_runs.fetch_add(2, Ordering::Relaxed);
        }
        let fail = |what: String| {
            if failures.fetch_add(1, Ordering::Relaxed) < 20 {
                eprintln!("FAIL pair {i} ({}): {what}", FAMILIES[c.family]);
            }
        };
        let shape = c.shape.as_deref();
        let k = &counters[c.family];
        k[0].fetch_add(1, Ordering::Relaxed);
        match equivalent(&c.a, &c.b, shape, &policy) {
            Ok(rep) if rep.verdict() == "equivalent" => {
                k[1].fetch_add(1, Ordering::Relaxed);
            }
            Ok(rep) => fail(format!("equivalent pair answered {}", rep.verdict())),
            Err(e) => fail(format!("equivalent pair: {e}")),
        }
        let (ra, rm) = (
            rel(&c.a, shape.or(Some(&[]))),
            rel(&c.m, shape.or(Some(&[]))),
        );
        let changed = match (&ra, &rm) {
            (Some(x), Some(y)) => x != y,
            _ => true, // a size change: the relation cannot even be formed on one shape
        };
        match equivalent(&c.a, &c.m, shape, &policy) {
            Ok(rep) => match (changed, rep.verdict()) {
                (true, "not equivalent") => {
                    k[2].fetch_add(1, Ordering::Relaxed);
                }
                (false, "equivalent") => {
                    k[3].fetch_add(1, Ordering::Relaxed);
                }
                (true, "equivalent") => fail("FALSE PROOF of a changed map".into()),
                (_, v) => fail(format!("mutant (changed: {changed}) answered {v}")),
            },
            // A mutant whose size no longer matches the shape is refused before deciding.
            Err(e) if changed && matches!(e, layout::LayoutError::Shape { .. }) => {
                k[2].fetch_add(1, Ordering::Relaxed);
            }
            Err(e) => fail(format!("mutant: {e}")),
        }
    });
    let secs = t.elapsed().as_secs_f64();
    println!(
        "mutation campaign: {pairs} pairs, z3 on every {smt_every}th pair ({} z3 decisions)",
        smt_runs.load(Ordering::Relaxed)
    );
    println!("| family | pairs | equivalent proved | mutants refuted | neutral mutants proved |");
    println!("|---|---|---|---|---|");
    for (f, k) in counters.iter().enumerate() {
        let v: Vec<u64> = k.iter().map(|x| x.load(Ordering::Relaxed)).collect();
        println!(
            "| {} | {} | {} | {} | {} |",
            FAMILIES[f], v[0], v[1], v[2], v[3]
        );
    }
    let bad = failures.load(Ordering::Relaxed);
    println!("failures: {bad}; false proofs: see FAIL lines (none when failures is 0)");
    println!("time: {secs:.1} s ({:.0} pairs/s)", pairs as f64 / secs);
    if bad > 0 {
        std::process::exit(1);
    }
}
