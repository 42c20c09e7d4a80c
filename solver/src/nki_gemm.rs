//! Planning a tiled GEMM `result[M,N] = lhsT[K,M].T @ rhs[K,N]` for Trainium: the output is cut
//! into blocks of at most `mt x nt` (full blocks and tails, so any M and N work), each block's
//! operands are staged in SBUF with K on the partitions (`A = S[(nk,kt,msz):(msz@F,1@P,1@F)]`,
//! the K tail a second piece `S[(kr,msz):(1@P,1@F)]`), and each distinct block shape is
//! dispatched by [`crate::tensore`] and proved by certify (PSUM accumulates the pieces).
//!
//! Worked example (a test checks it): M=300, N=700, K=200 in bf16 has m tiles 128,128,44, n
//! tiles 512,188 and K = 1 tile of 128 plus a tail of 72: four block shapes, each two pieces,
//! 3*2*2 = 12 instructions.

use certify::tensore::DispatchCertificate;
use layout::notation::axe::parse;

use crate::tensore::{dispatch, on_p_and_f, Options, Problem, Refusal};

/// A GEMM to plan.
#[derive(Clone, Debug)]
pub struct GemmSpec {
    /// Rows of the result.
    pub m: i64,
    /// Columns of the result.
    pub n: i64,
    /// The contraction.
    pub k: i64,
    /// Bytes of an input element (2: bf16 or f16).
    pub dtype_bytes: i64,
    /// `trn1` or `trn2`.
    pub target: String,
    /// Block and instruction size `[kt, mt, nt]` (default 128, 128, 512).
    pub tile: [i64; 3],
}

/// One block shape and its proved dispatch.
#[derive(Clone, Debug)]
pub struct GemmBlock {
    /// Rows.
    pub msz: i64,
    /// Columns.
    pub nsz: i64,
    /// Its dispatch certificate (pieces: full K tiles, then the K tail).
    pub cert: DispatchCertificate,
}

/// A planned GEMM.
#[derive(Clone, Debug)]
pub struct GemmPlan {
    /// The spec.
    pub spec: GemmSpec,
    /// Full K tiles and the K tail.
    pub nk: i64,
    /// Rows of the K tail (0 when K is a multiple of kt).
    pub kr: i64,
    /// Row tiles `(start, size)`.
    pub m_tiles: Vec<(i64, i64)>,
    /// Column tiles `(start, size)`.
    pub n_tiles: Vec<(i64, i64)>,
    /// The distinct block shapes, each dispatched and proved.
    pub blocks: Vec<GemmBlock>,
    /// SBUF bytes per partition held at once (largest block; two rhs column blocks).
    pub sbuf_bytes: i64,
}

fn tiles(total: i64, size: i64) -> Vec<(i64, i64)> {
    (0..(total + size - 1) / size)
        .map(|i| (i * size, size.min(total - i * size)))
        .collect()
}

/// The sizes the GEMM takes: M, N and K in [1, 65536] (rule `gemm-size`).
pub fn check_size(m: i64, n: i64, k: i64) -> Result<(), Refusal> {
    for (what, v) in [("M", m), ("N", n), ("K", k)] {
        if !(1..=1 << 16).contains(&v) {
            return Err(Refusal::Rule {
                rule: "gemm-size",
                why: format!("{what} = {v} is not in [1, 65536]"),
            });
        }
    }
    Ok(())
}

/// Plans and proves the GEMM; a rule it cannot meet is a [`Refusal`] naming it.
pub fn plan_gemm(spec: &GemmSpec) -> Result<GemmPlan, Refusal> {
    let [kt, mt, nt] = spec.tile;
    check_size(spec.m, spec.n, spec.k)?;
    let t = layout::trainium::target(&spec.target)?;
    let opts = Options {
        target: spec.target.clone(),
        dtype_bytes: spec.dtype_bytes,
        instruction: spec.tile,
    };
    // The instruction limits are the dispatch's to refuse; tiles need at least 1.
    if spec.tile.iter().any(|v| *v < 1) {
        return Err(Refusal::Rule {
            rule: "gemm-tile",
            why: format!("tile {:?} has a size below 1", spec.tile),
        });
    }
    let (nk, kr) = (spec.k / kt, spec.k % kt);
    let m_tiles = tiles(spec.m, mt);
    let n_tiles = tiles(spec.n, nt);
    let mut shapes: Vec<(i64, i64)> = Vec::new();
    for &(_, ms) in &m_tiles {
        for &(_, ns) in &n_tiles {
            if !shapes.contains(&(ms, ns)) {
                shapes.push((ms, ns));
            }
        }
    }
    let mut blocks = Vec::new();
    let mut sbuf_bytes = 0;
    for (msz, nsz) in shapes {
        let c_text = format!("S[({msz},{nsz}):(1@P,1@F)]");
        let c = parse(&c_text)?;
        let mut pieces = Vec::new();
        for (k0, ksz, a, b) in [
            (
                0,
                nk * kt,
                format!("S[({nk},{kt},{msz}):({msz}@F,1@P,1@F)]"),
                format!("S[({nk},{kt},{nsz}):({nsz}@F,1@P,1@F)]"),
            ),
            (
                nk * kt,
                kr,
                format!("S[({kr},{msz}):(1@P,1@F)]"),
                format!("S[({kr},{nsz}):(1@P,1@F)]"),
            ),
        ] {
            if ksz == 0 {
                continue;
            }
            let problem = Problem {
                a: parse(&a)?,
                b: parse(&b)?,
                c: c.clone(),
                dims: [ksz, msz, nsz],
            };
            let mut piece = dispatch(&problem, &opts)?;
            piece.k0 = k0;
            pieces.push(piece);
        }
        // SBUF per partition: two column blocks of rhs (the next one is staged while the last
        // is still in use), one row block of lhsT and the output tile, over both pieces.
        let staged = (nk + i64::from(kr > 0)) * (msz + 2 * nsz) + nsz;
        let bytes = staged * spec.dtype_bytes;
        if bytes > t.sbuf_bytes_per_partition {
            return Err(Refusal::Rule {
                rule: "sbuf-capacity",
                why: format!(
                    "a {msz}x{nsz} block stages K = {} in SBUF: {bytes} bytes per partition > {} on {} \
                     (streaming K through SBUF is not implemented)",
                    spec.k, t.sbuf_bytes_per_partition, t.name
                ),
            });
        }
        sbuf_bytes = sbuf_bytes.max(bytes);
        let c_print =
            layout::notation::axe::print(&on_p_and_f(&c, "C", layout::AxisRegistry::builtin())?);
        let name = format!("gemm {}x{}x{} block {msz}x{nsz}", spec.m, spec.n, spec.k);
        let cert = DispatchCertificate::prove(
            &name,
            &spec.target,
            spec.dtype_bytes,
            [spec.k, msz, nsz],
            c_print,
            pieces,
        )?;
        blocks.push(GemmBlock { msz, nsz, cert });
    }
    Ok(GemmPlan {
        spec: spec.clone(),
        nk,
        kr,
        m_tiles,
        n_tiles,
        blocks,
        sbuf_bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(m: i64, n: i64, k: i64) -> GemmSpec {
        GemmSpec {
            m,
            n,
            k,
            dtype_bytes: 2,
            target: "trn1".into(),
            tile: [128, 128, 512],
        }
    }

    #[test]
    fn worked_example_has_four_block_shapes_of_two_pieces() {
        let p = plan_gemm(&spec(300, 700, 200)).unwrap();
        assert_eq!(p.m_tiles, [(0, 128), (128, 128), (256, 44)]);
        assert_eq!(p.n_tiles, [(0, 512), (512, 188)]);
        assert_eq!((p.nk, p.kr), (1, 72));
        assert_eq!(p.blocks.len(), 4);
        assert!(p
            .blocks
            .iter()
            .all(|b| b.cert.pieces.len() == 2 && b.cert.instructions() == 2));
        let total: i64 = p.m_tiles.len() as i64 * p.n_tiles.len() as i64 * 2;
        assert_eq!(total, 12);
    }

    #[test]
    fn a_moving_tile_of_1024_is_refused() {
        let s = GemmSpec {
            tile: [128, 128, 1024],
            ..spec(128, 1024, 128)
        };
        assert_eq!(
            plan_gemm(&s).unwrap_err().rule(),
            Some("matmul-moving-free")
        );
    }

    #[test]
    fn a_k_too_large_to_stage_is_refused_naming_sbuf_capacity() {
        assert_eq!(
            plan_gemm(&spec(128, 512, 65536)).unwrap_err().rule(),
            Some("sbuf-capacity")
        );
    }
}
