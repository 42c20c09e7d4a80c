//! Cost figures of a kernel, computed from its plan, next to the same figures for the loop
//! structure of AWS's published NKI samples (tile sizes and loop order from their public
//! docs and samples), since no hardware is here. A matmul instruction's *fill* is its volume
//! `kt * mt * nt` over the largest instruction `128 x 128 x 512`.
//!
//! AWS structures modelled (the figures are this model's, not measurements):
//! - GEMM, `nki_matmul_tiled_` (the NKI matmul tutorial): tiles 128 x 128 x 512, loops m, n, k,
//!   both operand tiles loaded per (m, n, k); it requires M % 128 = N % 512 = K % 128 = 0.
//! - GEMM, `nki_matmul_fully_optimized_`: blocks of 16 x 128 rows, 2 x 512 columns, 8 x 128 of
//!   K; rhs loaded once, lhsT once per column block, results accumulated in SBUF; it requires
//!   M % 2048 = N % 1024 = K % 1024 = 0.
//! - MHA, `flash_fwd` (nki.kernels): q tiles of 128 (B_P_SIZE), key/value tiles of 2048
//!   (LARGE_TILE_SZ) in 512-column sub-tiles (B_F_SIZE), head dim up to 128 (B_D_SIZE); K and
//!   V are loaded once per q tile.

use serde::Serialize;

use solver::nki_gemm::GemmPlan;

use super::mha::MhaSpec;

/// The figures of one kernel structure.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Figures {
    /// Whose structure.
    pub structure: String,
    /// `nc_matmul` instructions.
    pub matmuls: i64,
    /// Mean fill of the 128 x 128 x 512 instruction.
    pub fill: f64,
    /// `nc_transpose` instructions.
    pub transposes: i64,
    /// Bytes moved between HBM and SBUF.
    pub dma_bytes: i64,
    /// Largest SBUF use per partition (bytes).
    pub sbuf_bytes: i64,
    /// Largest PSUM use per partition (bytes).
    pub psum_bytes: i64,
    /// Why there are no figures (the structure does not apply to this shape).
    pub not_applicable: Option<String>,
}

/// Our kernel's figures and the AWS structures'.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CostReport {
    /// The kernel.
    pub kernel: String,
    /// Ours first.
    pub rows: Vec<Figures>,
}

const FULL: f64 = 128.0 * 128.0 * 512.0;

fn na(structure: &str, why: String) -> Figures {
    Figures {
        structure: structure.into(),
        matmuls: 0,
        fill: 0.0,
        transposes: 0,
        dma_bytes: 0,
        sbuf_bytes: 0,
        psum_bytes: 0,
        not_applicable: Some(why),
    }
}

fn banks(bytes: i64) -> i64 {
    (bytes + 2047) / 2048 * 2048
}

/// The GEMM's figures.
pub fn gemm(plan: &GemmPlan) -> CostReport {
    let s = &plan.spec;
    let b = s.dtype_bytes;
    let (mut matmuls, mut volume, mut dma, mut psum) = (0i64, 0f64, 0i64, 0i64);
    for &(_, ms) in &plan.m_tiles {
        for &(_, ns) in &plan.n_tiles {
            let Some(block) = plan.blocks.iter().find(|x| x.msz == ms && x.nsz == ns) else {
                continue;
            };
            for p in &block.cert.pieces {
                let n: i64 = p.loops.iter().map(|l| l.extent).product();
                matmuls += n;
                volume += (n * p.instruction.iter().product::<i64>()) as f64;
            }
            dma += s.k * ms * b + ms * ns * b;
            psum = psum.max(banks(ns * 4));
        }
    }
    // Each column block of rhs is staged once.
    dma += s.k * s.n * b;
    let ours = Figures {
        structure: "laycert".into(),
        matmuls,
        fill: volume / (matmuls as f64 * FULL),
        transposes: 0,
        dma_bytes: dma,
        sbuf_bytes: plan.sbuf_bytes,
        psum_bytes: psum,
        not_applicable: None,
    };
    let (m, n, k) = (s.m, s.n, s.k);
    let tiled = if m % 128 == 0 && n % 512 == 0 && k % 128 == 0 {
        let count = (m / 128) * (n / 512) * (k / 128);
        Figures {
            structure: "AWS nki_matmul_tiled_".into(),
            matmuls: count,
            fill: 1.0,
            transposes: 0,
            dma_bytes: count * (128 * 128 + 128 * 512) * b + m * n * b,
            sbuf_bytes: (128 + 512) * b + 512 * b,
            psum_bytes: 2048,
            not_applicable: None,
        }
    } else {
        na(
            "AWS nki_matmul_tiled_",
            "needs M % 128 = N % 512 = K % 128 = 0".into(),
        )
    };
    let optimized = if m % 2048 == 0 && n % 1024 == 0 && k % 1024 == 0 {
        Figures {
            structure: "AWS nki_matmul_fully_optimized_".into(),
            matmuls: (m / 128) * (n / 512) * (k / 128),
            fill: 1.0,
            transposes: 0,
            dma_bytes: k * n * b + k * m * b * (n / 1024) + m * n * b,
            sbuf_bytes: (m / 128) * 2 * 512 * b + 8 * 1024 * b + 8 * 2048 * b + 1024 * 4,
            psum_bytes: 2048,
            not_applicable: None,
        }
    } else {
        na(
            "AWS nki_matmul_fully_optimized_",
            "needs M % 2048 = N % 1024 = K % 1024 = 0".into(),
        )
    };
    CostReport {
        kernel: format!("gemm {m}x{n}x{k}"),
        rows: vec![ours, tiled, optimized],
    }
}

/// The MHA kernel's figures (ours: q tiles of 128, key/value tiles of 512).
pub fn mha(spec: &MhaSpec) -> CostReport {
    let (h, s, d) = (spec.heads, spec.seq, spec.dim);
    let b = if spec.dtype == "f32" { 4 } else { 2 };
    let q_tiles = super::tile_runs(s, 128);
    let kv_tiles = super::tile_runs(s, 512);
    let (mut matmuls, mut volume, mut transposes) = (0i64, 0f64, 0i64);
    for &(_, qc, qsz) in &q_tiles {
        for &(_, kc, ksz) in &kv_tiles {
            let n = h * qc * kc;
            matmuls += n;
            volume += (n * d * qsz * ksz) as f64;
            for &(_, jc, jsz) in &super::tile_runs(ksz, 128) {
                matmuls += n * jc;
                transposes += n * jc;
                volume += (n * jc * jsz * qsz * d) as f64;
            }
        }
    }
    let n_q = (s + 127) / 128;
    let dma = h * (s * d * b + n_q * 2 * s * d * b + s * d * b);
    let ksz = s.min(512);
    let sbuf = 128 * b + ksz * b + ksz * 4 + 128 * b + d * b + (d * 4 + 3 * 4) + d * b + 8 * 4;
    let ours = Figures {
        structure: "laycert".into(),
        matmuls,
        fill: volume / (matmuls as f64 * FULL),
        transposes,
        dma_bytes: dma,
        sbuf_bytes: sbuf,
        psum_bytes: banks(ksz * 4) + banks(d * 4) + banks(128 * 4),
        not_applicable: None,
    };
    let aws = if s % 2048 == 0 && d <= 128 {
        let per = h * (s / 128) * (s / 512);
        Figures {
            structure: "AWS flash_fwd".into(),
            matmuls: per * (1 + 4),
            fill: (per as f64 * (d * 128 * 512) as f64 + (per * 4) as f64 * (128 * 128 * d) as f64)
                / ((per * 5) as f64 * FULL),
            transposes: per * 4,
            dma_bytes: dma,
            sbuf_bytes: 2048 * b * 2 + 2048 * 4 + d * 4 + 128 * b,
            psum_bytes: 2048 * 3,
            not_applicable: None,
        }
    } else {
        na(
            "AWS flash_fwd",
            "needs seq % 2048 = 0 (LARGE_TILE_SZ) and head dim <= 128".into(),
        )
    };
    CostReport {
        kernel: format!("mha heads={h} seq={s} dim={d}"),
        rows: vec![ours, aws],
    }
}

impl CostReport {
    /// A text table, one row per structure.
    pub fn lines(&self) -> Vec<String> {
        let mut out = vec![format!(
            "cost of {} (from the plan; AWS rows model their published loop structure, not measured):",
            self.kernel
        )];
        out.push(format!(
            "  {:<34} {:>9} {:>6} {:>10} {:>14} {:>12} {:>12}",
            "structure", "matmuls", "fill", "transposes", "DMA bytes", "SBUF B/part", "PSUM B/part"
        ));
        for r in &self.rows {
            match &r.not_applicable {
                Some(why) => out.push(format!("  {:<34} n/a: {why}", r.structure)),
                None => out.push(format!(
                    "  {:<34} {:>9} {:>5.1}% {:>10} {:>14} {:>12} {:>12}",
                    r.structure,
                    r.matmuls,
                    r.fill * 100.0,
                    r.transposes,
                    r.dma_bytes,
                    r.sbuf_bytes,
                    r.psum_bytes
                )),
            }
        }
        out
    }
}
