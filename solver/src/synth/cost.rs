//! The cost model and the integer program that picks the final plan (paper algorithm 1,
//! step 5, with an exact optimum instead of a heuristic ranking).
//!
//! Cost of one CTA tile, in shared-memory-wavefront units (one wavefront = one 128-byte
//! shared-memory transaction, the unit `layout::bank` predicts):
//!
//! | term | cost |
//! |---|---|
//! | every warp-level instruction issued | 1 |
//! | shared-memory wavefronts of an access (bank model, `layout::bank::wavefronts`) | 1 each |
//! | global-memory 32-byte sectors of a warp access | 1 each |
//! | a TMA box | 1 instruction + bytes / 128 wavefronts |
//! | a wgmma shared operand in swizzle INTER / SW32 / SW64 / SW128 | 4 / 2 / 1 / 0 per wgmma |
//! | 32-bit registers per thread of all register tensors | 1 each |
//! | an inserted rearrange (a CTA barrier) | 32 |
//!
//! The integer program: a binary `x[b][s]` per shared buffer `b` and candidate layout `s`, a
//! binary `y[o][s][i]` per access `o` of `b`, candidate `s` and instruction option `i`
//! feasible there, and `y[o][i]` for accesses touching no shared memory. Constraints:
//! `sum_s x[b][s] = 1`, `sum_i y[o][s][i] = x[b][s]`, `sum_i y[o][i] = 1`, and the shared
//! bytes of the chosen candidates at most the target's capacity. Objective: the total cost.
//! Solved by `good_lp` with its pure-Rust `microlp` backend.

use good_lp::{
    constraint, microlp, variable, variables, Expression, Solution, SolverModel, Variable,
};

use super::program::SynthError;

/// One instruction option of an access, with its predicted traffic.
#[derive(Clone, Debug, PartialEq)]
pub struct Traffic {
    /// Warp-level instructions.
    pub instructions: i64,
    /// Shared-memory wavefronts.
    pub wavefronts: i64,
    /// Wavefronts without conflicts.
    pub ideal: i64,
    /// Global 32-byte sectors.
    pub sectors: i64,
    /// Other cost (swizzle penalties).
    pub extra: i64,
}

impl Traffic {
    /// No traffic.
    pub const ZERO: Traffic = Traffic {
        instructions: 0,
        wavefronts: 0,
        ideal: 0,
        sectors: 0,
        extra: 0,
    };

    /// The cost in the model's units.
    pub fn cost(&self) -> f64 {
        (self.instructions + self.wavefronts + self.sectors + self.extra) as f64
    }
}

impl std::ops::AddAssign<&Traffic> for Traffic {
    /// Traffic of two accesses together: every count adds.
    fn add_assign(&mut self, other: &Traffic) {
        self.instructions += other.instructions;
        self.wavefronts += other.wavefronts;
        self.ideal += other.ideal;
        self.sectors += other.sectors;
        self.extra += other.extra;
    }
}

/// An access: which buffer it touches (if any) and, per candidate of that buffer, its options'
/// costs (`None`: infeasible there).
#[derive(Clone, Debug)]
pub struct AccessCosts {
    /// Index of the buffer in the buffer list, if the access touches shared memory.
    pub buffer: Option<usize>,
    /// `[candidate][option] -> cost` (one pseudo-candidate when no buffer).
    pub costs: Vec<Vec<Option<f64>>>,
}

/// The chosen candidate per buffer and (candidate, option) per access, and the total cost.
#[derive(Clone, Debug, PartialEq)]
pub struct Choice {
    /// Candidate per buffer.
    pub buffers: Vec<usize>,
    /// Option per access.
    pub options: Vec<usize>,
    /// Objective value.
    pub cost: f64,
}

/// Solves the integer program. `buffers[b]` = (number of candidates, bytes per candidate).
pub fn solve(
    buffers: &[(usize, Vec<i64>)],
    accesses: &[AccessCosts],
    capacity: i64,
) -> Result<Option<Choice>, SynthError> {
    let mut vars = variables!();
    let xs: Vec<Vec<Variable>> = buffers
        .iter()
        .map(|(n, _)| (0..*n).map(|_| vars.add(variable().binary())).collect())
        .collect();
    let mut ys: Vec<Vec<Vec<Option<Variable>>>> = Vec::new();
    let mut objective = Expression::from(0.0);
    for a in accesses {
        let per: Vec<Vec<Option<Variable>>> = a
            .costs
            .iter()
            .map(|opts| {
                opts.iter()
                    .map(|c| {
                        c.map(|c| {
                            let y = vars.add(variable().binary());
                            objective += c * y;
                            y
                        })
                    })
                    .collect()
            })
            .collect();
        ys.push(per);
    }
    let mut model = vars.minimise(objective.clone()).using(microlp);
    let mut bytes = Expression::from(0.0);
    for (b, (_, sizes)) in buffers.iter().enumerate() {
        let sum: Expression = xs[b].iter().map(|&x| Expression::from(x)).sum();
        model = model.with(constraint!(sum == 1.0));
        for (s, &x) in xs[b].iter().enumerate() {
            bytes += (sizes[s] as f64) * x;
        }
    }
    model = model.with(constraint!(bytes <= capacity as f64));
    for (a, per) in accesses.iter().zip(&ys) {
        match a.buffer {
            Some(b) => {
                for (s, opts) in per.iter().enumerate() {
                    let sum: Expression = opts.iter().flatten().map(|&y| Expression::from(y)).sum();
                    model = model.with(constraint!(sum - xs[b][s] == 0.0));
                }
            }
            None => {
                let sum: Expression = per
                    .iter()
                    .flatten()
                    .flatten()
                    .map(|&y| Expression::from(y))
                    .sum();
                model = model.with(constraint!(sum == 1.0));
            }
        }
    }
    let sol = match model.solve() {
        Ok(s) => s,
        Err(good_lp::ResolutionError::Infeasible) => return Ok(None),
        Err(e) => return Err(SynthError::Internal(format!("integer program: {e}"))),
    };
    let pick = |v: &[Variable]| v.iter().position(|&x| sol.value(x) > 0.5);
    let buffers_chosen = xs.iter().map(|x| pick(x).unwrap_or(0)).collect::<Vec<_>>();
    let options = accesses
        .iter()
        .zip(&ys)
        .map(|(a, per)| {
            let s = a.buffer.map_or(0, |b| buffers_chosen[b]);
            per[s]
                .iter()
                .position(|y| y.is_some_and(|y| sol.value(y) > 0.5))
                .unwrap_or(0)
        })
        .collect();
    Ok(Some(Choice {
        buffers: buffers_chosen,
        options,
        cost: sol.eval(&objective),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_program_trades_one_access_against_another() {
        // One buffer, two candidates; access 0 prefers candidate 0 (1 vs 10), access 1 prefers
        // candidate 1 (2 vs 20): candidate 1 wins (10 + 2 < 1 + 20).
        let accesses = vec![
            AccessCosts {
                buffer: Some(0),
                costs: vec![vec![Some(1.0)], vec![Some(10.0)]],
            },
            AccessCosts {
                buffer: Some(0),
                costs: vec![vec![Some(20.0), None], vec![Some(3.0), Some(2.0)]],
            },
            AccessCosts {
                buffer: None,
                costs: vec![vec![Some(5.0), Some(4.0)]],
            },
        ];
        let c = solve(&[(2, vec![100, 100])], &accesses, 1000)
            .unwrap()
            .unwrap();
        assert_eq!(c.buffers, [1]);
        assert_eq!(c.options, [0, 1, 1]);
        assert!((c.cost - 16.0).abs() < 1e-6);
        // Over capacity: no plan.
        assert!(solve(&[(2, vec![100, 100])], &accesses, 50)
            .unwrap()
            .is_none());
    }
}
