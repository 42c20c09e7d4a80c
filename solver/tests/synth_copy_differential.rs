//! Differential test of `synthesize` on small copy programs with shapes and strides that are
//! mostly not powers of two, against a brute force written here from the definitions alone:
//!
//! - a plan that comes back must certify (`certify::synthesis::check`);
//! - an `infeasible` answer is a proof, so the brute force must confirm it: for every cp.async
//!   width, some cell's aligned block of global elements is not whole, or (a given shared
//!   layout) its cells do not sit in the same order at an aligned shared block;
//! - where the brute force holds a plain witness (vectors along a unit-stride dimension that
//!   divides into whole, aligned vectors on both sides), a plan must come back;
//! - programs through registers (8 bits and more) always have a plan: single elements always
//!   move.

use proptest::prelude::*;
use solver::synth::{synthesize, Program, SynthError, Target};

/// A 2-D memory layout `(rows, cols):(sr, sc)`; `table[r + rows * c]` is the element of `(r, c)`.
#[derive(Clone, Copy, Debug)]
struct Strided {
    rows: i64,
    cols: i64,
    sr: i64,
    sc: i64,
}

impl Strided {
    fn text(&self) -> String {
        format!("({},{}):({},{})", self.rows, self.cols, self.sr, self.sc)
    }

    fn table(&self) -> Vec<i64> {
        (0..self.rows * self.cols)
            .map(|i| (i % self.rows) * self.sr + (i / self.rows) * self.sc)
            .collect()
    }
}

/// Every cell's aligned block of `w` elements is held by cells of the tile.
fn whole_blocks(mem: &[i64], w: i64) -> bool {
    mem.iter()
        .all(|&a| (a - a % w..a - a % w + w).all(|e| mem.contains(&e)))
}

/// The cells of each aligned block of `src` (injective), in element order, sit at `w`
/// consecutive elements of `dst` from a multiple of `w`.
fn same_blocks(src: &[i64], dst: &[i64], w: i64) -> bool {
    src.iter().all(|&a| {
        let q = a - a % w;
        let cells: Vec<usize> = (q..q + w)
            .map(|e| src.iter().position(|&x| x == e).expect("whole block"))
            .collect();
        let d0 = dst[cells[0]];
        d0 % w == 0 && (0..w as usize).all(|e| dst[cells[e]] == d0 + e as i64)
    })
}

/// Vectors of `w` along dimension `dim` of `l`: unit stride there, the extent whole vectors,
/// the other dimension's stride a multiple of `w` (or extent 1).
fn along(l: &Strided, dim: usize, w: i64) -> bool {
    let (e, s, other_e, other_s) = if dim == 1 {
        (l.cols, l.sc, l.rows, l.sr)
    } else {
        (l.rows, l.sr, l.cols, l.sc)
    };
    (s == 1 || e == 1) && e % w == 0 && (other_e == 1 || other_s % w == 0)
}

const CP_ASYNC_BITS: [i64; 3] = [32, 64, 128];

fn bits(dtype: &str) -> i64 {
    match dtype {
        "f32" => 32,
        "f16" | "bf16" => 16,
        "i4" => 4,
        _ => 8,
    }
}

fn layout(rows: i64, cols: i64, column_major: bool, pad: i64) -> Strided {
    if column_major {
        Strided {
            rows,
            cols,
            sr: 1,
            sc: rows + pad,
        }
    } else {
        Strided {
            rows,
            cols,
            sr: cols + pad,
            sc: 1,
        }
    }
}

fn run(text: &str, target: Target) -> Result<(), SynthError> {
    let p = Program::parse(text).unwrap_or_else(|e| panic!("{text}\n{e}"));
    let plan = synthesize(&p, target)?;
    if let Err(e) = certify::synthesis::check(&plan.certificate.to_json()) {
        panic!("{text}\nthe plan does not check: {e}");
    }
    Ok(())
}

fn dims() -> impl Strategy<Value = i64> {
    prop::sample::select(vec![1i64, 2, 3, 4, 5, 6, 7, 8, 10, 12, 16, 24, 40])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// global -> shared (cp.async), the shared layout chosen or given.
    #[test]
    fn global_to_shared_is_planned_or_provably_infeasible(
        dtype in prop::sample::select(vec!["f32", "f16", "bf16", "i8", "f8e4m3", "i4"]),
        rows in dims(),
        cols in dims(),
        column_major in any::<bool>(),
        pad in prop::sample::select(vec![0i64, 0, 1, 2, 3, 4, 8]),
        shared in prop::sample::select(vec![None, None, Some((false, 0i64)), Some((true, 0)), Some((false, 8))]),
        threads in prop::sample::select(vec![32i64, 64, 96, 128, 256]),
    ) {
        let g = layout(rows, cols, column_major, pad);
        let s = shared.map(|(cm, pad)| layout(rows, cols, cm, pad));
        let text = format!(
            "program d\nthreads {threads}\nx_g = global_view({dtype}, [{rows}, {cols}], {})\n\
             x_s = shared_tensor({dtype}, [{rows}, {cols}]{})\ncopy(x_g, x_s)\n",
            g.text(),
            s.map(|s| format!(", {}", s.text())).unwrap_or_default(),
        );
        let (gt, st) = (g.table(), s.map(|s| s.table()));
        let widths: Vec<i64> = CP_ASYNC_BITS
            .iter()
            .filter(|&&b| b % bits(dtype) == 0)
            .map(|&b| b / bits(dtype))
            .collect();
        let possible = widths.iter().any(|&w| {
            whole_blocks(&gt, w)
                && st.as_ref().is_none_or(|st| whole_blocks(st, w) && same_blocks(&gt, st, w))
        });
        let witness = widths.iter().any(|&w| {
            (0..2).any(|d| along(&g, d, w) && s.is_none_or(|s| along(&s, d, w)))
        });
        match run(&text, Target::Sm80) {
            Ok(()) => prop_assert!(possible, "{text}: a plan the brute force rules out"),
            Err(e @ SynthError::Infeasible { .. }) => {
                prop_assert!(!possible, "{text}: {e}\nbut whole, agreeing blocks exist")
            }
            Err(e @ SynthError::NotFound { .. }) => {
                prop_assert!(!witness, "{text}: {e}\nbut vectors along a dimension fit")
            }
            Err(e) => prop_assert!(false, "{text}: {e}"),
        }
    }

    /// global -> register -> global, global -> shared -> register -> global, and a reduction
    /// of a loaded tile: always planned (8-bit elements and wider), on both targets.
    #[test]
    fn register_copies_and_reductions_are_planned(
        dtype in prop::sample::select(vec!["f32", "f16", "bf16", "i8", "f8e4m3"]),
        rows in dims(),
        cols in dims(),
        column_major in any::<bool>(),
        pad in prop::sample::select(vec![0i64, 0, 1, 2, 3, 4, 8]),
        shape_kind in 0..3usize,
        dim in 0..2usize,
        threads in prop::sample::select(vec![32i64, 64, 96, 128, 256]),
        sm90 in any::<bool>(),
    ) {
        let g = layout(rows, cols, column_major, pad);
        let head = format!(
            "program d\nthreads {threads}\nx_g = global_view({dtype}, [{rows}, {cols}], {})\n\
             x = register_tensor({dtype}, [{rows}, {cols}])\n",
            g.text()
        );
        let text = match shape_kind {
            0 => format!(
                "{head}y_g = global_view({dtype}, [{rows}, {cols}], ({rows},{cols}):({cols},1))\n\
                 copy(x_g, x)\ncopy(x, y_g)\n"
            ),
            1 => format!(
                "{head}y_g = global_view({dtype}, [{rows}, {cols}], ({rows},{cols}):({cols},1))\n\
                 x_s = shared_tensor({dtype}, [{rows}, {cols}])\n\
                 copy(x_g, x_s)\ncopy(x_s, x)\ncopy(x, y_g)\n"
            ),
            _ => {
                let n = if dim == 0 { cols } else { rows };
                format!(
                    "{head}y_g = global_view({dtype}, [{n}], ({n}):(1))\ncopy(x_g, x)\n\
                     y = reduce(x, {dim}, max)\ncopy(y, y_g)\n"
                )
            }
        };
        // Through shared memory, the cp.async must exist: whole blocks for some width (and
        // with vectors along a dimension, a plan must come back).
        let gt = g.table();
        let widths: Vec<i64> = CP_ASYNC_BITS.iter().map(|&b| b / bits(dtype)).collect();
        let staged_ok = shape_kind != 1 || widths.iter().any(|&w| whole_blocks(&gt, w));
        let witness =
            shape_kind != 1 || widths.iter().any(|&w| (0..2).any(|d| along(&g, d, w)));
        let target = if sm90 { Target::Sm90 } else { Target::Sm80 };
        // (On sm90 a TMA box may move what no cp.async can: the other test decides those.)
        match run(&text, target) {
            Ok(()) => prop_assert!(staged_ok || sm90, "{text}: a plan the brute force rules out"),
            Err(e @ SynthError::Infeasible { .. }) => prop_assert!(!staged_ok, "{text}: {e}"),
            Err(e @ SynthError::NotFound { .. }) => prop_assert!(!witness, "{text}: {e}"),
            Err(e) => prop_assert!(false, "{text}: {e}"),
        }
    }
}
