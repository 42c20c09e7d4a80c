//! simplify and join bound their input (nodes and depth): larger input is an error naming
//! the limit, returned at once, never a run that takes minutes.

use egraph::{join, simplify, Saturation, MAX_INPUT_DEPTH, MAX_INPUT_NODES};

fn chain(op: &str, leaf: &str, n: usize) -> String {
    format!("{}{leaf}{}", format!("{op}(").repeat(n), ")".repeat(n))
}

/// A balanced tree of `compose` over distinct leaves with about `leaves` leaves.
fn wide(leaves: usize) -> String {
    let mut level: Vec<String> = (0..leaves).map(|i| format!("{}:1", i + 1)).collect();
    while level.len() > 1 {
        level = level
            .chunks(2)
            .map(|p| match p {
                [a, b] => format!("compose({a}, {b})"),
                [a] => a.clone(),
                _ => unreachable!(),
            })
            .collect();
    }
    level.pop().unwrap()
}

#[test]
fn deep_coalesce_chains_are_refused_by_depth() {
    // The repro: 1500 nested coalesce ran for over a minute (time grew cubically).
    let deep = chain("coalesce", "8:1", 1500);
    let started = std::time::Instant::now();
    let e = simplify(&deep, &[], &Saturation::default()).unwrap_err();
    assert!(started.elapsed().as_secs() < 5);
    assert!(e.contains("levels") || e.contains("nodes"), "{e}");
    let e = simplify(
        &chain("coalesce", "8:1", MAX_INPUT_DEPTH),
        &[],
        &Saturation::default(),
    )
    .unwrap_err();
    assert!(e.contains(&format!("at most {MAX_INPUT_DEPTH}")), "{e}");
    let e = join(&deep, "8:1", &[], &Saturation::default()).unwrap_err();
    assert!(e.contains("levels") || e.contains("nodes"), "{e}");
}

#[test]
fn wide_expressions_are_refused_by_node_count() {
    let e = simplify(&wide(MAX_INPUT_NODES), &[], &Saturation::default()).unwrap_err();
    assert!(e.contains(&format!("at most {MAX_INPUT_NODES}")), "{e}");
}

#[test]
fn expressions_within_the_limits_still_simplify() {
    let ok = simplify(
        &chain("coalesce", "(2,4):(4,1)", MAX_INPUT_DEPTH - 1),
        &[],
        &Saturation::default(),
    )
    .unwrap();
    assert_eq!(ok.best, "(2, 4):(4, 1)");
    assert!(simplify(&wide(MAX_INPUT_NODES / 4), &[], &Saturation::default()).is_ok());
}
