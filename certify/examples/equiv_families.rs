//! Times the normal-form decider (alone, and with building both forward forms; parsing
//! excluded) and z3 on the
//! equivalence benchmark's families (`bench/equiv/families.json`, written by
//! `bench/equiv/families.py`): each case's equal pair and its one-stride mutant. Prints one
//! JSON object; `bench/equiv/run_families.sh` joins it with the peers' times.
//!
//! Usage: `cargo run --release -p certify --example equiv_families -- bench/equiv/families.json`

use std::time::Instant;

use certify::claim::forms;
use certify::{normal_form, smt, Outcome};
use layout::Layout;
use serde_json::{json, Value};

/// Median seconds of `f` over batches filling about 20 ms each (at most 15 batches).
fn median<F: FnMut() -> Outcome>(mut f: F) -> (f64, Outcome) {
    let t = Instant::now();
    let out = f();
    let once = t.elapsed().as_secs_f64().max(1e-7);
    let per_batch = ((0.02 / once) as usize).clamp(1, 100_000);
    let mut times = Vec::new();
    for _ in 0..15 {
        let t = Instant::now();
        for _ in 0..per_batch {
            std::hint::black_box(f());
        }
        times.push(t.elapsed().as_secs_f64() / per_batch as f64);
    }
    times.sort_by(f64::total_cmp);
    (times[times.len() / 2], out)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "bench/equiv/families.json".into());
    let cases: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(path)?)?;
    let mut rows = Vec::new();
    for c in &cases {
        let size = c["size"].as_i64().ok_or("size")?;
        let shape = [size];
        let text = |k: &str| c[k]["axe"].as_str().unwrap_or_default().to_string();
        let left = Layout::parse(&text("left"), None)?;
        let mut row = json!({"family": c["family"], "name": c["name"], "size": size});
        for (key, want) in [("right", "proved"), ("mutant", "refuted")] {
            let right = Layout::parse(&text(key), None)?;
            let (with_forms, _) = median(|| match forms(&left, &right, &shape) {
                Ok((fa, fb)) => normal_form::decide(&left, &right, &shape, &fa, &fb),
                Err(e) => Outcome::Unknown {
                    reason: e.to_string(),
                },
            });
            let (fa, fb) = forms(&left, &right, &shape)?;
            let (secs, outcome) = median(|| normal_form::decide(&left, &right, &shape, &fa, &fb));
            let t = Instant::now();
            let (z3, _) = smt::decide(&fa, &fb, smt::DEFAULT_RLIMIT);
            let z3_secs = t.elapsed().as_secs_f64();
            row[key] = json!({
                "normal_form": {"seconds": secs, "with_forms": with_forms, "verdict": outcome.word()},
                "smt": {"seconds": z3_secs, "verdict": z3.word()},
                "expected": want,
            });
            if outcome.word() != want {
                eprintln!("{} {key}: normal form says {}", c["name"], outcome.word());
            }
        }
        eprintln!("{}", row);
        rows.push(row);
    }
    println!("{}", serde_json::to_string_pretty(&rows)?);
    Ok(())
}
