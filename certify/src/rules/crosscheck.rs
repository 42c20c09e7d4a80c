//! The concrete re-check of a z3 proof: instances chosen where a wrong encoding would show,
//! decided by the exhaustive path ([`decide_instance`]), which shares no code with the
//! encoding.
//!
//! BOUNDARY instances: every integer parameter at its extremes and their neighbours (`lo`,
//! `lo+1`, `hi-1`, `hi`, and `-1, 0, 1` within the box), each varied from a few base
//! assignments; and the EDGES where something flips: along each parameter (the others fixed),
//! bisection finds adjacent values `v, v+1` where a condition's truth or a side's
//! definedness (an overflow guard, an extent reaching 1, `pow2`'s range, an axis clash)
//! changes, and both are taken. A candidate that misses the conditions is moved to the
//! nearest value of that parameter (within 64) that meets them. RANDOM instances: a sample
//! seeded by the rule's text (deterministic), half uniform over each range, half
//! log-uniform near its ends (small domains are decidable). An instance whose decider cannot
//! answer (a domain above the re-check's exhaustive limit) is tried but not counted as
//! re-checked.
//!
//! Example: `(a,b):(1,a) == S[(b,a):(a,1)]` for `a, b` in `1..=1000` with `a % 10 == 5`: the
//! boundary candidate `a = 1` moves to `a = 5`; at `a = b = 5` the sides differ at
//! coordinate `(0,1)`.

use std::collections::{BTreeMap, BTreeSet};

use rayon::prelude::*;
use sha2::{Digest, Sha256};

use super::eval::{self, show_assignment, Assignment, Bound};
use super::prove::{decide_instance, Instance, Options, Refutation};
use super::syntax::{Rule, Sort};

/// The most boundary instances re-checked.
pub const MAX_BOUNDARY: usize = 384;
/// The random instances sought.
pub const RANDOM: usize = 48;
/// Random draws tried to find them.
const RANDOM_TRIES: usize = 8192;
/// Largest domain one re-checked instance enumerates.
const RECHECK_EXHAUSTIVE_LIMIT: i64 = 1 << 20;
/// Work budget of the whole re-check (capped by the rule's).
const RECHECK_BUDGET: u64 = 1 << 28;
/// How far a candidate moves to meet the conditions.
const REPAIR: i64 = 64;
/// Flips sought per (base, parameter).
const FLIPS: usize = 6;

/// What the re-check did.
#[derive(Debug, Default)]
pub struct Recheck {
    /// Boundary instances decided.
    pub boundary: u64,
    /// Random instances decided.
    pub random: u64,
    /// Instances tried (decided or not).
    pub tried: u64,
    /// Why one instance was undecided, if one was.
    pub undecided: Option<String>,
    /// A refutation the semantics confirm (z3 was wrong).
    pub refutation: Option<Box<Refutation>>,
    /// One line per decided instance (for the digest), in order.
    pub decided: Vec<String>,
    /// Work units spent.
    pub work: u64,
}

/// SplitMix64: a small deterministic generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A value in `lo..=hi`: uniform, or log-uniform near one end.
    fn value(&mut self, lo: i64, hi: i64) -> i64 {
        let span = (hi as i128 - lo as i128) as u128;
        let pick = |r: u64, n: u128| -> i128 {
            if n == u128::MAX {
                r as i128
            } else {
                ((r as u128) % (n + 1)) as i128
            }
        };
        let mode = self.next() % 4;
        let off = if mode < 2 {
            pick(self.next(), span)
        } else {
            let bits = 128 - span.leading_zeros();
            let k = (self.next() % (u64::from(bits) + 1)) as u32;
            let cap = if k >= 127 {
                span
            } else {
                ((1u128 << k) - 1).min(span)
            };
            let o = pick(self.next(), cap);
            if mode == 2 {
                o
            } else {
                span as i128 - o
            }
        };
        (lo as i128 + off) as i64
    }
}

fn with(a: &Assignment, p: &str, v: i64) -> Assignment {
    let mut a = a.clone();
    a.insert(p.to_string(), Bound::Int(v));
    a
}

fn meets(rule: &Rule, a: &Assignment) -> bool {
    rule.conds.iter().all(|c| eval::cond(c, a))
}

/// What flips along a parameter: the conditions' truth and each side's definedness.
fn signature(rule: &Rule, a: &Assignment) -> (bool, bool, bool) {
    (
        meets(rule, a),
        eval::term(&rule.lhs, a).is_ok(),
        eval::term(&rule.rhs, a).is_ok(),
    )
}

/// Adjacent pairs `(v, v+1)` in `lo..=hi` where `signature` changes along `p` (at most
/// [`FLIPS`], by bisection of the intervals whose ends differ).
fn flips(rule: &Rule, base: &Assignment, p: &str, lo: i64, hi: i64) -> Vec<i64> {
    let sig = |v: i64| signature(rule, &with(base, p, v));
    let mut out = Vec::new();
    let mut stack = vec![(lo, sig(lo), hi, sig(hi))];
    let mut steps = 0;
    while let Some((a, sa, b, sb)) = stack.pop() {
        if out.len() >= FLIPS || steps > 512 {
            break;
        }
        if sa == sb || b <= a {
            continue;
        }
        if b - a == 1 {
            out.push(a);
            out.push(b);
            continue;
        }
        steps += 1;
        let mid = ((a as i128 + b as i128) / 2) as i64;
        let sm = sig(mid);
        stack.push((mid, sm, b, sb));
        stack.push((a, sa, mid, sm));
    }
    out
}

/// The nearest assignment along `p` (within [`REPAIR`]) that meets the conditions.
fn repair(rule: &Rule, a: &Assignment, p: &str, lo: i64, hi: i64) -> Option<Assignment> {
    let Some(Bound::Int(v)) = a.get(p) else {
        return meets(rule, a).then(|| a.clone());
    };
    for d in 0..=REPAIR {
        for w in [v.checked_sub(d), v.checked_add(d)].into_iter().flatten() {
            if (lo..=hi).contains(&w) {
                let b = with(a, p, w);
                if meets(rule, &b) {
                    return Some(b);
                }
            }
        }
    }
    None
}

/// Re-checks a rule concretely (see the module doc).
pub fn recheck(
    rule: &Rule,
    order: &[String],
    ibox: &BTreeMap<String, (i64, i64)>,
    axis_sets: &[Assignment],
    opts: &Options,
) -> Recheck {
    let ints: Vec<(&str, i64, i64)> = rule
        .params
        .iter()
        .filter(|p| p.sort == Sort::Int)
        .map(|p| {
            let (lo, hi) = ibox[&p.name];
            (p.name.as_str(), lo, hi)
        })
        .collect();
    let mut seed = [0u8; 8];
    seed.copy_from_slice(&Sha256::digest(rule.text.as_bytes())[..8]);
    let mut rng = Rng(u64::from_le_bytes(seed));
    let axes = |i: usize| axis_sets[i % axis_sets.len().max(1)].clone();
    let fill = |base: &Assignment, f: &dyn Fn(i64, i64) -> i64| {
        let mut a = base.clone();
        for &(n, lo, hi) in &ints {
            a.insert(n.to_string(), Bound::Int(f(lo, hi)));
        }
        a
    };
    // Random instances first: they also serve as bases.
    let mut random = Vec::new();
    for t in 0..RANDOM_TRIES {
        if random.len() >= RANDOM {
            break;
        }
        let mut a = axes(t);
        for &(n, lo, hi) in &ints {
            a.insert(n.to_string(), Bound::Int(rng.value(lo, hi)));
        }
        if meets(rule, &a) {
            random.push(a);
        }
    }
    let mut bases = vec![
        fill(&axes(0), &|lo, _| lo),
        fill(&axes(1), &|_, hi| hi),
        fill(&axes(2), &|lo, hi| ((lo as i128 + hi as i128) / 2) as i64),
    ];
    bases.extend(random.iter().take(3).cloned());
    let mut candidates: Vec<(Assignment, &str)> = Vec::new();
    for (bi, base) in bases.iter().enumerate() {
        candidates.push((base.clone(), ints.first().map_or("", |p| p.0)));
        for &(p, lo, hi) in &ints {
            let mut vals: BTreeSet<i64> = [lo, lo.saturating_add(1), hi.saturating_sub(1), hi]
                .into_iter()
                .chain([-1, 0, 1])
                .filter(|v| (lo..=hi).contains(v))
                .collect();
            if bi < 4 {
                vals.extend(flips(rule, base, p, lo, hi));
            }
            for v in vals {
                candidates.push((with(base, p, v), p));
            }
        }
    }
    let mut seen = BTreeSet::new();
    let mut boundary = Vec::new();
    for (a, p) in candidates {
        let (lo, hi) = ibox.get(p).copied().unwrap_or((0, 0));
        if let Some(a) = repair(rule, &a, p, lo, hi) {
            if seen.insert(show_assignment(order, &a)) {
                boundary.push(a);
            }
        }
        if boundary.len() >= MAX_BOUNDARY {
            break;
        }
    }
    let random: Vec<Assignment> = random
        .into_iter()
        .filter(|a| seen.insert(show_assignment(order, a)))
        .collect();
    let check_opts = Options {
        exhaustive_limit: RECHECK_EXHAUSTIVE_LIMIT,
        ..opts.clone()
    };
    let budget = RECHECK_BUDGET.min(opts.work_budget);
    let mut out = Recheck::default();
    for (is_boundary, set) in [(true, boundary), (false, random)] {
        let results: Vec<(Instance, u64)> = set
            .par_iter()
            .map(|a| decide_instance(rule, order, a, &check_opts))
            .collect();
        for (a, (r, cost)) in set.iter().zip(results) {
            out.work = out.work.saturating_add(cost);
            if out.work > budget {
                return out;
            }
            out.tried += 1;
            match r {
                Instance::Differs(x) => {
                    out.refutation = Some(x);
                    return out;
                }
                Instance::Holds { defined } => {
                    if is_boundary {
                        out.boundary += 1;
                    } else {
                        out.random += 1;
                    }
                    out.decided
                        .push(format!("{}:{defined}\n", show_assignment(order, a)));
                }
                Instance::Unknown(why) => {
                    if out.undecided.is_none() {
                        out.undecided = Some(why);
                    }
                }
            }
        }
    }
    out
}
