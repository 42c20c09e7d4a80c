//! TensorE dispatch (the Axe paper, section 3.4 and appendix H): given the Axe layouts of
//! `A[K,M]` and `B[K,N]` in SBUF and `C[M,N]` in PSUM over the axes `P` and `F`, find the
//! largest `nc_matmul` instruction and the loop nest over the remaining iters.
//!
//! 1. *Group* each layout by its two logical dims (`layout::axe::group`), then regroup the
//!    two sides of each dim by their common refinement, so the K iters of `A` and `B`, the M
//!    iters of `A` and `C` and the N iters of `B` and `C` pair up one to one.
//! 2. *Intersect K*: the innermost K pair must be on `P` with stride 1 in `A` and in `B`
//!    (rule `k-on-partition`); its extent is the instruction's partition size.
//! 3. *Intersect M and N*: the innermost M pair is on `F` in `A` and on `P` (stride 1) in `C`;
//!    the innermost N pair is on `F` in `B` and on `F` (stride 1) in `C`. Their extents, cut to
//!    the largest divisor within the limits (stationary free <= 128, moving free <= 512, or
//!    smaller when asked), are the instruction's free sizes.
//! 4. *Finalize*: every other pair, and the outer part of a cut pair, becomes a loop (M and N
//!    loops outside, K loops innermost so that PSUM accumulates over K).
//!
//! Every dispatch is proved by [`certify::tensore`] before it is returned, which also
//! enforces PSUM banks and capacities; a layout that breaks a rule is refused with the rule
//! named. Worked example (a test checks it): `A = S[(2,128,128):(128@F,1@P,1@F)]`,
//! `B = S[(2,128,1024):(1024@F,1@P,1@F)]`, `C = S[(128,1024):(1@P,1@F)]` dispatch as the
//! instruction 128x128x512 in the nest `n: 2 (B +512@F, C +512@F)`, `k: 2`: 4 instructions.

use certify::tensore::{DispatchCertificate, DispatchError, Loop, Piece, Step};
use layout::axe::{common_refinement, group, resolve_aliases};
use layout::notation::axe::print;
use layout::{AxeLayout, AxisRegistry, Iter, LayoutError};

/// A matmul to dispatch: layouts and dims (`A[k, m]`, `B[k, n]`, `C[m, n]`).
#[derive(Clone, Debug)]
pub struct Problem {
    /// `A[K, M]` in SBUF.
    pub a: AxeLayout,
    /// `B[K, N]` in SBUF.
    pub b: AxeLayout,
    /// `C[M, N]` in PSUM.
    pub c: AxeLayout,
    /// `[K, M, N]`.
    pub dims: [i64; 3],
}

/// Limits and context of a dispatch.
#[derive(Clone, Debug)]
pub struct Options {
    /// `trn1` or `trn2`.
    pub target: String,
    /// Bytes of an SBUF element.
    pub dtype_bytes: i64,
    /// Largest instruction `[kt, mt, nt]` to use; beyond the hardware's it is refused.
    pub instruction: [i64; 3],
}

impl Default for Options {
    fn default() -> Options {
        Options {
            target: "trn1".into(),
            dtype_bytes: 2,
            instruction: [128, 128, 512],
        }
    }
}

/// Why a dispatch is refused.
#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    /// A documented rule, named first.
    #[error("{rule}: {why}")]
    Rule {
        /// The rule (`k-on-partition`, `matmul-moving-free`, `psum-capacity`, ...).
        rule: &'static str,
        /// What breaks it.
        why: String,
    },
    /// A layout error (not groupable, ...).
    #[error("{0}")]
    Layout(#[from] LayoutError),
    /// certify did not prove the dispatch (a planner bug, or a rule it found).
    #[error("{0}")]
    Certify(#[from] DispatchError),
}

impl Refusal {
    /// The rule's name, when a rule refused it.
    pub fn rule(&self) -> Option<&'static str> {
        match self {
            Refusal::Rule { rule, .. } => Some(rule),
            Refusal::Certify(DispatchError::Rule { rule, .. }) => Some(rule),
            _ => None,
        }
    }
}

fn refuse(rule: &'static str, why: impl Into<String>) -> Refusal {
    Refusal::Rule {
        rule,
        why: why.into(),
    }
}

/// The dispatch of one piece: the instruction and its nest, as certify states it.
pub fn dispatch(problem: &Problem, opts: &Options) -> Result<Piece, Refusal> {
    let [kt_max, mt_max, nt_max] = opts.instruction;
    let t = layout::trainium::target(&opts.target)?;
    for (v, lim, rule, what) in [
        (
            kt_max,
            t.partitions,
            "matmul-partition",
            "partition (contraction) size",
        ),
        (
            mt_max,
            t.stationary_fmax,
            "matmul-stationary-free",
            "stationary free size",
        ),
        (
            nt_max,
            t.moving_fmax,
            "matmul-moving-free",
            "moving free size",
        ),
    ] {
        if !(1..=lim).contains(&v) {
            return Err(refuse(
                rule,
                format!("{what} {v} is not in [1, {lim}] on {}", t.name),
            ));
        }
    }
    let [k, m, n] = problem.dims;
    let reg = AxisRegistry::builtin();
    let (a, b, c) = (
        on_p_and_f(&problem.a, "A", reg)?,
        on_p_and_f(&problem.b, "B", reg)?,
        on_p_and_f(&problem.c, "C", reg)?,
    );
    // 1. Group, then pair the iters of each dim through the common refinement.
    let ga = group(&a, &[k, m])?;
    let gb = group(&b, &[k, n])?;
    let gc = group(&c, &[m, n])?;
    let refine = |x: Vec<i64>, y: Vec<i64>, dim: i64| -> Result<Vec<i64>, Refusal> {
        let r = common_refinement(&[x, y])?;
        Ok(if r.is_empty() { vec![dim] } else { r })
    };
    let rk = refine(extents(ga.block(0), k), extents(gb.block(0), k), k)?;
    let rm = refine(extents(ga.block(1), m), extents(gc.block(0), m), m)?;
    let rn = refine(extents(gb.block(1), n), extents(gc.block(1), n), n)?;
    let ia = iters_by(&a, &[&rk[..], &rm[..]].concat(), "A")?;
    let ib = iters_by(&b, &[&rk[..], &rn[..]].concat(), "B")?;
    let ic = iters_by(&c, &[&rm[..], &rn[..]].concat(), "C")?;
    let (ka, ma) = ia.split_at(rk.len());
    let (kb, nb) = ib.split_at(rk.len());
    let (mc, nc) = ic.split_at(rm.len());
    let p_unit = |it: &Iter| it.axis.as_str() == "P" && (it.stride == 1 || it.extent == 1);
    let on_f = |it: &Iter| it.axis.as_str() == "F" || it.extent == 1;
    // 2. K intersection on P.
    let (ka_in, kb_in) = (ka.last().expect("K >= 1"), kb.last().expect("K >= 1"));
    if !p_unit(ka_in) || !p_unit(kb_in) {
        return Err(refuse(
            "k-on-partition",
            format!(
                "the contraction dim K must map to the partition axis P with stride 1 in both \
                 SBUF operands; its innermost iters are A {} and B {}",
                show(ka_in),
                show(kb_in)
            ),
        ));
    }
    // 3. M and N intersections.
    let (ma_in, mc_in) = (ma.last().expect("M >= 1"), mc.last().expect("M >= 1"));
    if !on_f(ma_in) {
        return Err(refuse(
            "stationary-free-is-m",
            format!(
                "A's M must be on the free axis F; its innermost M iter is {}",
                show(ma_in)
            ),
        ));
    }
    if !p_unit(mc_in) {
        return Err(refuse(
            "psum-partition-is-m",
            format!(
                "C's M must be on PSUM partitions with stride 1; its innermost M iter is {}",
                show(mc_in)
            ),
        ));
    }
    let (nb_in, nc_in) = (nb.last().expect("N >= 1"), nc.last().expect("N >= 1"));
    if !on_f(nb_in) || !on_f(nc_in) || (nc_in.stride != 1 && nc_in.extent > 1) {
        return Err(refuse(
            "free-is-n",
            format!(
                "N must be on F in B and on F with stride 1 in C; the innermost N iters are B {} and C {}",
                show(nb_in),
                show(nc_in)
            ),
        ));
    }
    let kt = largest_divisor(ka_in.extent, kt_max);
    let mt = largest_divisor(ma_in.extent, mt_max);
    let nt = largest_divisor(nb_in.extent, nt_max);
    // 4. The rest of each dim becomes loops: M, then N, then K innermost.
    let mut loops = Vec::new();
    let step = |it: &Iter, by: i64| -> Step {
        let s = it.stride * by;
        if it.axis.as_str() == "P" {
            Step { p: s, f: 0 }
        } else {
            Step { p: 0, f: s }
        }
    };
    let mut rest = |dim: &str, x: &[Iter], y: &[Iter], inner: i64| {
        for (i, (u, v)) in x.iter().zip(y).enumerate() {
            let last = i + 1 == x.len();
            let (extent, by) = if last {
                (u.extent / inner, inner)
            } else {
                (u.extent, 1)
            };
            if extent == 1 {
                continue;
            }
            let (su, sv) = (Some(step(u, by)), Some(step(v, by)));
            loops.push(match dim {
                "m" => Loop {
                    dim: "m".into(),
                    extent,
                    a: su,
                    b: None,
                    c: sv,
                },
                "n" => Loop {
                    dim: "n".into(),
                    extent,
                    a: None,
                    b: su,
                    c: sv,
                },
                _ => Loop {
                    dim: "k".into(),
                    extent,
                    a: su,
                    b: sv,
                    c: None,
                },
            });
        }
    };
    rest("m", ma, mc, mt);
    rest("n", nb, nc, nt);
    rest("k", ka, kb, kt);
    let base = |l: &AxeLayout| Step {
        p: l.offset()
            .iter()
            .find(|(a, _)| a.as_str() == "P")
            .map_or(0, |(_, v)| *v),
        f: l.offset()
            .iter()
            .find(|(a, _)| a.as_str() == "F")
            .map_or(0, |(_, v)| *v),
    };
    Ok(Piece {
        k0: 0,
        k,
        a: print(&a),
        b: print(&b),
        instruction: [kt, mt, nt],
        loops,
        a_base: base(&a),
        a_free: ma_in.stride,
        b_base: base(&b),
        b_free: nb_in.stride,
        c_base: base(&c),
        c_free: nc_in.stride,
    })
}

/// Dispatches and proves a one-piece problem.
pub fn dispatch_and_prove(
    name: &str,
    problem: &Problem,
    opts: &Options,
) -> Result<DispatchCertificate, Refusal> {
    let piece = dispatch(problem, opts)?;
    let c = print(&on_p_and_f(&problem.c, "C", AxisRegistry::builtin())?);
    Ok(DispatchCertificate::prove(
        name,
        &opts.target,
        opts.dtype_bytes,
        problem.dims,
        c,
        vec![piece],
    )?)
}

fn show(it: &Iter) -> String {
    format!("({}, {}@{})", it.extent, it.stride, it.axis)
}

/// The layout with aliases resolved, refused unless it maps to `P` and `F` only (no replica).
pub fn on_p_and_f(l: &AxeLayout, what: &str, reg: &AxisRegistry) -> Result<AxeLayout, Refusal> {
    let r = resolve_aliases(l, reg)?;
    if !r.replica().is_empty()
        || r.axes()
            .iter()
            .any(|a| a.as_str() != "P" && a.as_str() != "F")
    {
        return Err(refuse(
            "operand-axes",
            format!(
                "{what} = {} must map to the axes P and F only, without replication",
                print(l)
            ),
        ));
    }
    Ok(r)
}

fn extents(block: &[Iter], dim: i64) -> Vec<i64> {
    if block.is_empty() {
        vec![dim]
    } else {
        block.iter().map(|it| it.extent).collect()
    }
}

/// The layout's iters when grouped by `shape`: exactly one iter per dim (a missing one of
/// extent 1 stands as `(1, 0@P)`).
fn iters_by(l: &AxeLayout, shape: &[i64], what: &str) -> Result<Vec<Iter>, Refusal> {
    let g = group(l, shape)?;
    (0..shape.len())
        .map(|d| match g.block(d) {
            [] => Ok(Iter::new(1, 0, layout::trainium::partition_axis())),
            [one] => Ok(one.clone()),
            many => Err(refuse(
                "no-intersection",
                format!(
                    "{what}'s dim of extent {} is {} iters that the other operand does not share",
                    shape[d],
                    many.len()
                ),
            )),
        })
        .collect()
}

fn largest_divisor(e: i64, max: i64) -> i64 {
    (1..=max.min(e)).rev().find(|d| e % d == 0).unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use layout::notation::axe::parse;

    fn problem(a: &str, b: &str, c: &str, dims: [i64; 3]) -> Problem {
        Problem {
            a: parse(a).unwrap(),
            b: parse(b).unwrap(),
            c: parse(c).unwrap(),
            dims,
        }
    }

    #[test]
    fn worked_example_dispatches_as_the_largest_instruction() {
        let p = problem(
            "S[(2,128,128):(128@F,1@P,1@F)]",
            "S[(2,128,1024):(1024@F,1@P,1@F)]",
            "S[(128,1024):(1@P,1@F)]",
            [256, 128, 1024],
        );
        let cert = dispatch_and_prove("t", &p, &Options::default()).unwrap();
        let piece = &cert.pieces[0];
        assert_eq!(piece.instruction, [128, 128, 512]);
        let nest: Vec<(String, i64)> = piece
            .loops
            .iter()
            .map(|l| (l.dim.clone(), l.extent))
            .collect();
        assert_eq!(nest, [("n".to_string(), 2), ("k".to_string(), 2)]);
        assert_eq!(piece.loops[0].c, Some(Step { p: 0, f: 512 }));
        assert_eq!(cert.instructions(), 4);
        certify::tensore::check(&serde_json::to_string(&cert).unwrap()).unwrap();
    }

    #[test]
    fn k_on_the_free_axis_is_refused_naming_the_rule() {
        let p = problem(
            "S[(128,128):(1@F,1@P)]",
            "S[(128,512):(1@P,1@F)]",
            "S[(128,512):(1@P,1@F)]",
            [128, 128, 512],
        );
        let e = dispatch(&p, &Options::default()).unwrap_err();
        assert_eq!(e.rule(), Some("k-on-partition"), "{e}");
    }

    #[test]
    fn a_moving_tile_of_1024_is_refused_naming_the_rule() {
        let p = problem(
            "S[(128,128):(1@P,1@F)]",
            "S[(128,1024):(1@P,1@F)]",
            "S[(128,1024):(1@P,1@F)]",
            [128, 128, 1024],
        );
        let opts = Options {
            instruction: [128, 128, 1024],
            ..Options::default()
        };
        let e = dispatch(&p, &opts).unwrap_err();
        assert_eq!(e.rule(), Some("matmul-moving-free"), "{e}");
        // The same layouts within the limits: two instructions of 512.
        assert_eq!(
            dispatch_and_prove("t", &p, &Options::default())
                .unwrap()
                .instructions(),
            2
        );
    }

    #[test]
    fn a_psum_overflow_is_refused_naming_the_rule() {
        let p = problem(
            "S[(128,128):(1@P,1@F)]",
            "S[(128,8192):(1@P,1@F)]",
            "S[(128,8192):(1@P,1@F)]",
            [128, 128, 8192],
        );
        let e = dispatch_and_prove("t", &p, &Options::default()).unwrap_err();
        assert_eq!(e.rule(), Some("psum-capacity"), "{e}");
    }

    #[test]
    fn m_on_psum_free_is_refused_naming_the_rule() {
        let p = problem(
            "S[(128,64):(1@P,1@F)]",
            "S[(128,64):(1@P,1@F)]",
            "S[(64,64):(1@F,64@F)]",
            [128, 64, 64],
        );
        assert_eq!(
            dispatch(&p, &Options::default()).unwrap_err().rule(),
            Some("psum-partition-is-m")
        );
    }

    #[test]
    fn dispatches_of_generated_shapes_all_prove() {
        // Property: for tile grids of every small shape the dispatch is proved by certify.
        for (nk, ms, nn) in [
            (1, 1, 1),
            (3, 7, 5),
            (2, 128, 100),
            (1, 44, 512),
            (4, 128, 1536),
        ] {
            let k = nk * 128;
            let p = problem(
                &format!("S[({nk},128,{ms}):({ms}@F,1@P,1@F)]"),
                &format!("S[({nk},128,{nn}):({nn}@F,1@P,1@F)]"),
                &format!("S[({ms},{nn}):(1@P,1@F)]"),
                [k, ms, nn],
            );
            let cert = dispatch_and_prove("t", &p, &Options::default()).unwrap();
            let [kt, mt, nt] = cert.pieces[0].instruction;
            assert_eq!(cert.instructions() * kt * mt * nt, k * ms * nn);
        }
    }
}
