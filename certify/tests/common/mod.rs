//! Helpers shared by certify's claim tests.

use certify::Policy;
use layout::Layout;

/// Parses a layout written by the test, with no logical shape.
pub fn parse(t: &str) -> Layout {
    Layout::parse(t, None).unwrap_or_else(|e| panic!("{t}: {e}"))
}

/// The default policy without z3 (the exhaustive and normal-form deciders decide).
pub fn policy() -> Policy {
    Policy {
        use_smt: false,
        ..Policy::default()
    }
}

/// The first way the verdicts `table[i][j]` (`Some(true)` equivalent, `Some(false)` not,
/// `None` undecided) among layouts `texts` fail to chain: `a ~ b ~ c` decided with `a ~ c`
/// decided otherwise, or `a !~ b ~ c` with `a ~ c`. `None`: they chain.
pub fn chain_violation(table: &[Vec<Option<bool>>], texts: &[&str]) -> Option<String> {
    let n = texts.len();
    for i in 0..n {
        for j in 0..n {
            for k in 0..n {
                let (Some(x), Some(y), Some(z)) = (table[i][j], table[j][k], table[i][k]) else {
                    continue;
                };
                let (a, b, c) = (texts[i], texts[j], texts[k]);
                if x && y && !z {
                    return Some(format!("{a} ~ {b} ~ {c} but not {a} ~ {c}"));
                }
                if !x && y && z {
                    return Some(format!("{a} !~ {b} ~ {c} but {a} ~ {c}"));
                }
            }
        }
    }
    None
}
