//! The TensorE dispatch checker against an independent simulation: the instruction stream a
//! certificate describes is executed on integer matrices placed in SBUF and PSUM by the
//! layouts' semantics, and the PSUM contents compared with `A.T @ B`. Property: whenever
//! `check` proves a (possibly mutated) dispatch, the simulation computes exactly `A.T @ B`
//! into `C`; and every unmutated dispatch of the generated family is proved.

use std::collections::BTreeMap;

use certify::tensore::{check, digest, DispatchCertificate, Loop, Piece, Step};
use layout::notation::axe::parse;
use proptest::prelude::*;

/// `layout(r, c)` -> `(P, F)` for every cell.
fn cells(text: &str, rows: i64, cols: i64) -> BTreeMap<(i64, i64), (i64, i64)> {
    let l = parse(text).unwrap();
    let mut out = BTreeMap::new();
    for r in 0..rows {
        for c in 0..cols {
            let pt = l
                .eval(&[rows, cols], &[r, c])
                .unwrap()
                .into_iter()
                .next()
                .unwrap();
            let get = |a: &str| {
                pt.iter()
                    .find(|(k, _)| k.as_str() == a)
                    .map_or(0, |(_, v)| *v)
            };
            out.insert((r, c), (get("P"), get("F")));
        }
    }
    out
}

/// Runs the certificate's instruction stream; None when an instruction touches a point that
/// holds no operand cell or writes outside C.
fn simulate(
    cert: &DispatchCertificate,
    a_val: &dyn Fn(i64, i64) -> i64,
    b_val: &dyn Fn(i64, i64) -> i64,
) -> Option<BTreeMap<(i64, i64), i64>> {
    let [_, m, n] = cert.dims;
    let c_cells = cells(&cert.c, m, n);
    let c_points: BTreeMap<(i64, i64), (i64, i64)> =
        c_cells.iter().map(|(k, v)| (*v, *k)).collect();
    let mut psum: BTreeMap<(i64, i64), i64> = BTreeMap::new();
    for piece in &cert.pieces {
        let sa: BTreeMap<(i64, i64), i64> = cells(&piece.a, piece.k, m)
            .into_iter()
            .map(|((k, mm), pt)| (pt, a_val(piece.k0 + k, mm)))
            .collect();
        let sb: BTreeMap<(i64, i64), i64> = cells(&piece.b, piece.k, n)
            .into_iter()
            .map(|((k, nn), pt)| (pt, b_val(piece.k0 + k, nn)))
            .collect();
        let [kt, mt, nt] = piece.instruction;
        let total: i64 = piece.loops.iter().map(|l| l.extent).product();
        for flat in 0..total {
            let (mut a, mut b, mut c) = (piece.a_base, piece.b_base, piece.c_base);
            let mut rest = flat;
            for l in piece.loops.iter().rev() {
                let i = rest % l.extent;
                rest /= l.extent;
                for (base, step) in [(&mut a, l.a), (&mut b, l.b), (&mut c, l.c)] {
                    let s = step.unwrap_or_default();
                    base.p += i * s.p;
                    base.f += i * s.f;
                }
            }
            for j in 0..mt {
                for col in 0..nt {
                    let mut acc = 0;
                    for p in 0..kt {
                        acc += sa.get(&(a.p + p, a.f + j * piece.a_free))?
                            * sb.get(&(b.p + p, b.f + col * piece.b_free))?;
                    }
                    let at = (c.p + j, c.f + col * piece.c_free);
                    c_points.get(&at)?;
                    *psum.entry(at).or_insert(0) += acc;
                }
            }
        }
    }
    Some(
        c_cells
            .iter()
            .map(|(mn, pt)| (*mn, psum.get(pt).copied().unwrap_or(i64::MIN)))
            .collect(),
    )
}

/// A tile-grid dispatch: K = nk*kt (+ a tail piece), M = mm*mt on P, N = nn*nt on F.
fn family(nk: i64, kt: i64, tail: i64, mt: i64, nn: i64, nt: i64) -> DispatchCertificate {
    let (m, n) = (mt, nn * nt);
    let c = format!("S[({m},{n}):(1@P,1@F)]");
    let mut pieces = vec![Piece {
        k0: 0,
        k: nk * kt,
        a: format!("S[({nk},{kt},{m}):({m}@F,1@P,1@F)]"),
        b: format!("S[({nk},{kt},{n}):({n}@F,1@P,1@F)]"),
        instruction: [kt, mt, nt],
        loops: vec![
            Loop {
                dim: "n".into(),
                extent: nn,
                a: None,
                b: Some(Step { p: 0, f: nt }),
                c: Some(Step { p: 0, f: nt }),
            },
            Loop {
                dim: "k".into(),
                extent: nk,
                a: Some(Step { p: 0, f: m }),
                b: Some(Step { p: 0, f: n }),
                c: None,
            },
        ],
        a_base: Step::default(),
        a_free: 1,
        b_base: Step::default(),
        b_free: 1,
        c_base: Step::default(),
        c_free: 1,
    }];
    if tail > 0 {
        pieces.push(Piece {
            k0: nk * kt,
            k: tail,
            a: format!("S[({tail},{m}):(1@P,1@F)]"),
            b: format!("S[({tail},{n}):(1@P,1@F)]"),
            instruction: [tail, mt, nt],
            loops: vec![Loop {
                dim: "n".into(),
                extent: nn,
                a: None,
                b: Some(Step { p: 0, f: nt }),
                c: Some(Step { p: 0, f: nt }),
            }],
            a_base: Step::default(),
            a_free: 1,
            b_base: Step::default(),
            b_free: 1,
            c_base: Step::default(),
            c_free: 1,
        });
    }
    let mut cert = DispatchCertificate {
        kind: "tensore-dispatch".into(),
        version: certify::tensore::VERSION,
        name: "family".into(),
        target: "trn1".into(),
        dtype_bytes: 2,
        dims: [nk * kt + tail, m, n],
        c,
        pieces,
        verdict: "proved".into(),
        digest: String::new(),
    };
    cert.digest = digest(&cert);
    cert
}

fn mutate(cert: &mut DispatchCertificate, what: u8, by: i64) {
    let p = &mut cert.pieces[0];
    match what % 9 {
        0 => p.loops[0].extent = (p.loops[0].extent + by).max(1),
        1 => p.loops[1].extent = (p.loops[1].extent + by).max(1),
        2 => {
            p.loops[1].a = Some(Step {
                p: 0,
                f: p.loops[1].a.unwrap().f + by,
            })
        }
        3 => {
            p.loops[1].b = Some(Step {
                p: by.rem_euclid(2),
                f: p.loops[1].b.unwrap().f,
            })
        }
        4 => {
            p.loops[0].c = Some(Step {
                p: 0,
                f: p.loops[0].c.unwrap().f + by,
            })
        }
        5 => p.a_free += by,
        6 => p.b_base.f += by,
        7 => p.instruction[2] = (p.instruction[2] + by).max(1),
        _ => p.instruction[0] = (p.instruction[0] + by).max(1),
    }
    cert.digest = digest(cert);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn a_proved_dispatch_computes_the_matmul_in_simulation(
        nk in 1i64..4, kt in 1i64..5, tail in 0i64..3, mt in 1i64..5, nn in 1i64..4, nt in 1i64..5,
        what in 0u8..9, by in -2i64..3, mutated in any::<bool>(),
    ) {
        let mut cert = family(nk, kt, tail, mt, nn, nt);
        if mutated {
            mutate(&mut cert, what, by);
        }
        let a = |k: i64, m: i64| (k * 7 + m * 3) % 5 - 2;
        let b = |k: i64, n: i64| (k * 5 + n * 11) % 7 - 3;
        let json = serde_json::to_string(&cert).unwrap();
        let verdict = check(&json);
        if !mutated {
            prop_assert!(verdict.is_ok(), "{:?}", verdict.err());
        }
        if verdict.is_ok() {
            let got = simulate(&cert, &a, &b);
            prop_assert!(got.is_some(), "proved, but an instruction touches a point outside its operand");
            let [k, m, n] = cert.dims;
            for ((mm, nn2), v) in got.unwrap() {
                let want: i64 = (0..k).map(|kk| a(kk, mm) * b(kk, nn2)).sum();
                prop_assert_eq!(v, want, "C[{}, {}]", mm, nn2);
            }
            let _ = (m, n);
        }
    }
}
