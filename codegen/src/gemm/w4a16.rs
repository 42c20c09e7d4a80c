//! # W4A16: f16 activations x int4 weights, for small M (1..=16)
//!
//! `C[M,N] = A[M,K] * dequant(W)[N,K]^T`, A and C f16 row-major, f32 accumulation, where
//! `dequant(W)[n, k] = q[n, k] * scale[n, k / group]` rounded to f16 (the product of the
//! integer and the scale, rounded once, as `q.half() * s` in torch), `q` a **signed** int4
//! (two's complement, -8..=7) and `scale` f16, row-major `(N, K / group)`, `group` a multiple
//! of 128 dividing K.
//!
//! **Packed layout** (the synthesis reference program's TensorRT-LLM block, `corpus/data/
//! programs/gemm_f16_int4_trtllm.tile`, with four K-blocks interleaved so one thread's words
//! are one 16-byte vector): W is an array of 32-bit words; nibble `i` of a word is bits
//! `4i..4i+3`; the nibble offset of `(n, k)` is the CuTe layout
//! `((8, N/8), (2, 2, 2, 4, 4, K/128)) : ((64, 8K), (1, 32, 512, 2, 8, 1024))`, i.e. with
//! `k = k0 + 2 k1 + 4 k2 + 8 k3 + 32 kb + 128 ks` and `n = n0 + 8 nb`:
//! `offset = k0 + 32 k1 + 512 k2 + 2 k3 + 8 kb + 1024 ks + 64 n0 + 8K nb`. A word holds
//! `k = k' + {0, 1, 8, 9, 16, 17, 24, 25}` (nibbles 0..7) of one row `n`, `k' = 32 kb + 2 c`;
//! the 16 bytes at `(n, c, ks)` hold the four K-blocks `kb = 0..3` of that row and `c`: exactly
//! the 32 values mma.sync's B fragment needs in one thread for 128 k (so synthesis picks
//! `ld.global.v4.b32`). Each (8 n x 128 k) superblock is 512 contiguous bytes; the superblocks
//! of one 8-row block follow each other along K. That is [`W4Packing::Sequential`]. The default,
//! [`W4Packing::Interleaved`], is TensorRT-LLM's preprocessing in full: the same words, each
//! with its 8 values interleaved as TensorRT-LLM stores them (nibbles 0..7 hold
//! `k' + {0, 8, 16, 24, 1, 9, 17, 25}`: strides `(4, 32, 512, 1, 8, 1024)` along k), so that the
//! nibble pair `(i, i + 4)` is two consecutive k. The tile program sees the words in k order
//! (the sequential view); the interleave inside a word is the dequantization's, validated
//! nibble by nibble.
//!
//! **Kernel**: CTA = a warp per 32 columns, `bn` (128, default, or 256) columns of C, a K-range of `K / splits`
//! (split-K). The tile program ([`tile_program`]) is one (16 x bn x 128) step: A via
//! cp.async into the synthesized swizzled `a_s` (all the CTA's K-range at once, rows >= M
//! zero-filled) and ldmatrix.x4; W streamed once with 16-byte loads (`depth - 1` superblocks
//! in flight, each vector's address computed once and stepped by a validated constant),
//! dequantized in registers ([`W4Dequant::Pairs`]: the nibble pair (i, i + 4), one `lop3`, an
//! exact `sub.f16x2` or `fma.f16x2`, the scale's `mul.f16x2`; of the sequential packing, over a
//! k-permuted mma, [`mma_k`], A interleaved to match; or [`W4Dequant::Bytes`] of the
//! sequential packing: `prmt` of the word and the word shifted by 4, one `lop3`, an exact
//! `sub.f16x2`, the `mul.f16x2`); mma.sync m16n8k16 into f32. The splits of a column
//! tile sum their f32 partials in split order (deterministic): with 1, 2, 4 or 8 splits they run
//! as one thread-block cluster (sm_90), each writes its partial into its own shared memory and,
//! after a cluster barrier, CTA `p` sums its share of the tile over every split's partial through
//! distributed shared memory and stores C; with other split counts each split stores its
//! partial into a workspace `(splits, M, N)`, and the last CTA of a column tile (an atomic
//! counter) adds them, stores C and resets the counter.
//!
//! **K-group CTAs** ([`W4a16Config::kwarps`] > 1, the default where they fill the GPU:
//! [`default_kgroup`]): the same plan CTA spread over CTAs of `cwarps` column warps x `kwarps`
//! K-warps that each hold all of K, so no split-K reduction through global memory: the
//! K-warps' partials are summed in shared memory, in order. The warps of one K-warp index
//! share A through a ring of `aslots` superblocks refilled by their own cp.async.
//!
//! **Validation** ([`validate_w4a16`]): every printed expression is parsed and evaluated on
//! every thread and value: the shared layout and the cp.async map (as on sm80), or the chunk
//! pairs' map and what each a_s cell then holds (A at [`mma_k`] of its k-position); ldmatrix
//! through the corpus LDSM atoms onto the plan's `a`; the W vector offsets
//! (`LC_W_GOFF`, a sum of one-coordinate terms) equal the packed layout above along each axis,
//! and nibble `e` of thread `t`'s vector `j` is the plan's `w` value `32 j + e` (so the plan's
//! `ld.global.v4.b32` is what the kernel does); the plan's `q = cast(w)`, `b = q * s` keep
//! `w`'s layout and `s` broadcasts `b`'s row; every B register half of every mma line (the
//! nibble the scheme's `lc_dq` puts there, its k taken to the mma's k-position by [`mma_k`]) is the
//! atom's B fragment at one (n, k) origin, its scale the plan's `s`, its A registers the atom's
//! A fragment with the same k, and its accumulators the plan's `c`; every accumulator value gets
//! all 8 k-steps of a superblock exactly once; the partial store, the reduction and the final
//! store cover the tile exactly once at offsets equal to the workspace and C layouts (with the
//! cluster reduction: the CTAs' shares partition the pairs, and the shared partial's offsets
//! are one aligned f32 pair per two cells of the tile); guards equal the bounds along each axis.
//! K-group CTAs add `check_kgroup`: every (column tile, plan thread, K-warp) is one CTA thread
//! exactly once, hardware lane = plan lane in one plan warp per hardware warp; the K-warps'
//! ranges partition K; the ring's chunks are the rows < M, aligned and contiguous in `a_s`; the
//! partial slots and the reduction pairs cover their sets once. The kernel addresses a thread's
//! W vectors and scales from one pointer each (`LC_W_VSTEP`, `LC_S_VSTEP`: checked for every
//! thread and column tile) and, in a K-group CTA, its A chunks from one pointer
//! (`LC_KG_A_ISTEP`: checked for every chunk, K-warp and superblock), so the loads take
//! constant offsets: about 45 fewer instructions per two superblocks, which at M = 16 is the
//! difference between 18.4 and 17.1 us cold on the H200 (bench/gpu/README.md, session 19).

use std::fmt::Write as _;

use certify::synthesis::{SmemAllocation, SmemBuffer};
use serde::{Deserialize, Serialize};
use solver::synth::anchor::{coalesced, Tv};
use solver::synth::{synthesize_allocated, Plan, Program, Target};

use super::sm80::{header, memory_exprs, plan_atom, plan_memory, plan_tv, tv_exprs};
use super::validate::{eval2, memory_offset, GemmValidation};
use super::validate_sm80::{check_guard, check_ldsm, check_offset, fail, rc, Ldsm, SharedMap};
use super::{check_capacity_claim, plan_summary, smem_line, MAX_EXTENT, SM80_SMEM_LIMIT};
use crate::c_expr::CExpr;
use crate::error::CodegenError;

/// The problem.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct W4a16Spec {
    /// Rows of A and C (1..=16).
    pub m: i64,
    /// Rows of W, columns of C.
    pub n: i64,
    /// The reduction extent.
    pub k: i64,
    /// K-elements per scale (a multiple of 128 dividing K).
    pub group: i64,
    /// How W's nibbles sit in its words.
    pub packing: W4Packing,
    /// Most dynamic shared memory per CTA the kernel may use (`None`: sm80's limit, the
    /// kernel's instruction set); at most [`super::MAX_SMEM_BUDGET`]. The cluster reduction runs on
    /// sm_90 only, and an H100 or H200 gives a CTA 227 KiB: raising the budget there also lets
    /// [`W4a16Config::min_ctas`] count more CTAs per SM.
    pub smem_limit: Option<i64>,
}

impl W4a16Spec {
    /// The shared-memory budget per CTA, in bytes.
    pub fn smem_budget(&self) -> i64 {
        self.smem_limit.unwrap_or(SM80_SMEM_LIMIT)
    }
}

/// Where W's values sit inside its 32-bit words (the two packings differ only there: a word
/// holds the same 8 values of one row `n`, `k' + {0, 1, 8, 9, 16, 17, 24, 25}` with
/// `k' = 32 kb + 2 c`, and the words, vectors and superblocks are laid out alike).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum W4Packing {
    /// TensorRT-LLM's preprocessing for its mixed-input GEMM in full: its row permutation
    /// (`permute_B_rows_for_mixed_gemm`: a word's 8 values are k' + 0, 1, 8, 9, 16, 17, 24, 25)
    /// and its nibble interleave inside each word (`add_bias_and_interleave_int4s_inplace`:
    /// elements 0, 2, 4, 6, 1, 3, 5, 7 at nibbles 0..7), without that function's +8 bias (q is
    /// stored as a signed int4). Nibble `i` holds `k' + (0, 8, 16, 24, 1, 9, 17, 25)[i]`, so the
    /// nibble pair `(p, p + 4)` is two consecutive k and [`W4Dequant::Pairs`] needs no
    /// permutation of the mma's k. The default.
    Interleaved,
    /// The row permutation alone: nibble `i` holds `k' + (0, 1, 8, 9, 16, 17, 24, 25)[i]`, so a
    /// byte is two consecutive k ([`W4Dequant::Bytes`]); [`W4Dequant::Pairs`] then runs the mma
    /// over a permuted k ([`mma_k`]) with A interleaved to match. The default before
    /// 2026-11-25 (`--packing sequential`).
    Sequential,
}

impl W4Packing {
    /// Nibble strides of the packed layout's k modes `(k0, k1, k2, k3, kb)` in
    /// `k = k0 + 2 k1 + 4 k2 + 8 k3 + 32 kb + 128 ks` (`ks`: 1024 nibbles, a superblock): only
    /// `k0` and `k3`, which place a value inside its word, differ.
    pub fn k_strides(self) -> [i64; 5] {
        match self {
            W4Packing::Interleaved => [4, 32, 512, 1, 8],
            W4Packing::Sequential => [1, 32, 512, 2, 8],
        }
    }

    /// Which of its word's 8 values (in k order: `k' + 0, 1, 8, 9, 16, 17, 24, 25`, the order
    /// the plan's tile program sees, [`tile_program`]) nibble `i` (0..8) holds.
    pub fn nibble_value(self, i: i64) -> i64 {
        match self {
            W4Packing::Interleaved => [0, 2, 4, 6, 1, 3, 5, 7][i as usize],
            W4Packing::Sequential => i,
        }
    }

    /// The nibble (0..8) that holds value `x` of its word (the inverse of
    /// [`W4Packing::nibble_value`]).
    pub fn value_nibble(self, x: i64) -> i64 {
        match self {
            W4Packing::Interleaved => [0, 4, 1, 5, 2, 6, 3, 7][x as usize],
            W4Packing::Sequential => x,
        }
    }

    /// The `#define LC_W_PACK` value (what bench/gpu/w4a16.py packs for).
    pub fn code(self) -> i64 {
        match self {
            W4Packing::Interleaved => 1,
            W4Packing::Sequential => 0,
        }
    }
}

/// How the kernel turns W's nibbles into the f16 B registers of `mma.sync` (each register is
/// two values of one row of W at the mma's k-positions `(2c, 2c + 1)` of a k-step).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum W4Dequant {
    /// A B register is one byte of a word: nibbles `(2b, 2b + 1)`, consecutive k in the packing.
    /// `prmt` of the word and the word shifted by 4, `lop3`, an exact `sub.f16x2`, the scale's
    /// `mul.f16x2`: 17 instructions per word. The mma runs over k in order and A is staged by
    /// 16-byte `cp.async`.
    Bytes,
    /// A B register is the nibble pair `(p, p + 4)` of a word: two consecutive k in the
    /// interleaved packing (the mma runs over k in order, A staged by `cp.async`; the default),
    /// k and k + 16 in the sequential one (what follows): one `lop3` (of the word, or of the word shifted by 8 for p >= 2), an exact
    /// `sub.f16x2` (even p) or `fma.f16x2` by 1/16 (odd p: the pair sits 4 bits up), the
    /// scale's `mul.f16x2`: 13 instructions per word. The mma runs over k with bits 0 and 4
    /// swapped inside each 32 ([`mma_k`]), so every register is a consecutive pair of the mma's
    /// k; A is staged into shared memory in that same order (one thread copies the 16-byte
    /// chunks at k and k + 16 by `cp.async` and interleaves them in place: `ld.shared`, `prmt`,
    /// `st.shared`), and the sum over k is unchanged. Correct and validated, but slower on the
    /// H200 (1x8192x8192: 19.8-20.3 us against 18.4-18.6 us by bytes; the same kernel without
    /// the interleave, wrong products, 17.9-18.0 us): the interleave before the main loop costs
    /// more than the instructions saved (bench/gpu/README.md, session 15).
    Pairs,
}

/// The k of A and W that the mma multiplies at its k-position `kappa` (inside a 128-k
/// superblock or anywhere along K: 32-aligned groups map to themselves): `kappa` itself where
/// each B register is two consecutive k of the packing ([`W4Dequant::Bytes`] of
/// [`W4Packing::Sequential`], [`W4Dequant::Pairs`] of [`W4Packing::Interleaved`]); with
/// [`W4Dequant::Pairs`] of [`W4Packing::Sequential`] bits 0 and 4 swapped (an involution, so
/// it also maps k back to kappa). (Bytes of the interleaved packing are not served.)
pub fn mma_k(packing: W4Packing, dequant: W4Dequant, kappa: i64) -> i64 {
    if a_kperm(packing, dequant) {
        (kappa & !0x11) | ((kappa & 1) << 4) | ((kappa >> 4) & 1)
    } else {
        kappa
    }
}

/// Whether the mma's k order is permuted ([`mma_k`]), so A is staged interleaved.
pub fn a_kperm(packing: W4Packing, dequant: W4Dequant) -> bool {
    packing == W4Packing::Sequential && dequant == W4Dequant::Pairs
}

/// The CTA configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct W4a16Config {
    /// Columns of C per CTA (128 or 256).
    pub bn: i64,
    /// K-splits (CTAs per column tile).
    pub splits: i64,
    /// W buffers per thread (2 to [`MAX_DEPTH`]): superblocks in flight plus the one being
    /// multiplied.
    pub depth: i64,
    /// CTAs per thread-block cluster: 1 (the splits sum their partials through a global
    /// workspace), or `splits` (2, 4 or 8: the splits of a column tile are one cluster and sum
    /// through distributed shared memory; sm_90).
    pub cluster: i64,
    /// The dequantization (and with it the mma's k order and A's staging).
    pub dequant: W4Dequant,
    /// K-warps per CTA. 1: the split-K CTA above (a warp per 32 columns over one K-range).
    /// 2 to [`MAX_KWARPS`]: a **K-group CTA** of `cwarps` column warps x `kwarps` K-warps that
    /// holds all of K (`splits` 1): K-warp `w` takes `[w K / kwarps, (w + 1) K / kwarps)`; the
    /// `cwarps` warps of one K-warp index (a K-group) share their A superblocks through a ring
    /// of `aslots` superblocks in shared memory, refilled by the group's own cp.async `aslots -
    /// 1` superblocks ahead (one named barrier per superblock); at the end the K-warps' f32
    /// partials meet in shared memory and are summed in K-warp order (deterministic) and
    /// stored. No workspace, no counters, no second pass over C (the split-K tail is the
    /// largest single cost of the split-K CTA: bench/gpu/README.md, session 14). The plan's
    /// CTA (`bn` columns, thread `tc`) is spread over `bn / (32 cwarps)` CTAs.
    pub kwarps: i64,
    /// Column warps per K-group CTA (1, 2 or 4, dividing `bn / 32`; 0 when `kwarps` is 1).
    pub cwarps: i64,
    /// A superblocks in a K-group's ring (2 to 4; 0 when `kwarps` is 1).
    pub aslots: i64,
}

impl W4a16Config {
    /// K-elements per warp: the CTA's K-range (split-K CTA) or one K-warp's (K-group CTA).
    pub fn ks(&self, spec: &W4a16Spec) -> i64 {
        spec.k / (self.splits * self.kwarps)
    }

    /// Whether the CTA is a K-group CTA (see [`W4a16Config::kwarps`]).
    pub fn kgroup(&self) -> bool {
        self.kwarps > 1
    }

    /// Threads of one K-group (the column warps that share A superblocks).
    pub fn group_threads(&self) -> i64 {
        32 * self.cwarps
    }

    /// CTAs: a column tile of `bn` columns per split; with K-groups, one CTA per `32 cwarps`
    /// columns.
    pub fn grid(&self, spec: &W4a16Spec) -> i64 {
        if self.kgroup() {
            spec.n / self.group_threads()
        } else {
            spec.n / self.bn * self.splits
        }
    }

    /// Threads per CTA: a warp per 32 columns (every thread holds the same W vectors whatever
    /// `bn`; more columns per CTA read A from L2 fewer times); with K-groups, `cwarps x kwarps`
    /// warps.
    pub fn threads(&self) -> i64 {
        if self.kgroup() {
            32 * self.cwarps * self.kwarps
        } else {
            self.bn
        }
    }

    /// Whether the splits of a column tile run as one thread-block cluster and sum their
    /// partials through distributed shared memory (a portable cluster of 2, 4 or 8 CTAs that
    /// share the tile's reduction pairs evenly); otherwise through the global workspace and a
    /// per-tile counter.
    pub fn cluster_reduce(&self) -> bool {
        self.cluster > 1
    }

    /// CTAs per SM the kernel is compiled for (`__launch_bounds__`' second argument): as many as
    /// the shared-memory budget allows and 128 registers per thread leave room for (16 warps
    /// per SM), so a split-K grid of that many CTAs per SM runs in one wave.
    pub fn min_ctas(&self, spec: &W4a16Spec) -> i64 {
        let by_smem = spec.smem_budget() / smem_bytes(spec, self).max(1);
        let by_regs = (4 * 128 / self.threads()).max(1);
        by_smem.clamp(1, by_regs)
    }
}

/// An emitted, validated W4A16 kernel.
#[derive(Clone, Debug, Serialize)]
pub struct W4a16Kernel {
    /// The problem.
    pub spec: W4a16Spec,
    /// The configuration.
    pub config: W4a16Config,
    /// CUDA C++ (`-DLAYCERT_HOST_LAUNCHER` adds the host launcher).
    pub source: String,
    /// Kernel entry point.
    pub entry: &'static str,
    /// The synthesis certificate's digest.
    pub digest: String,
    /// The plan, one line per operation.
    pub plan_summary: Vec<String>,
    /// CTAs.
    pub grid: i64,
    /// Dynamic shared memory per CTA.
    pub smem_bytes: i64,
    /// What translation validation covered.
    pub validation: GemmValidation,
    /// The synthesis certificate (`laycert check` re-decides it).
    #[serde(skip)]
    pub certificate_json: String,
}

/// The kernel body.
pub const BODY: &str = include_str!("w4a16_body.cu");

/// Largest K-range per CTA (A's slice of it is staged in shared memory: 32 bytes per k).
pub const MAX_KS: i64 = 4096;
/// The most W register buffers a thread keeps in flight (`--stages`).
pub const MAX_DEPTH: i64 = 8;
/// The most K-warps of a K-group CTA (named barriers 1..=8 besides the CTA's 0).
pub const MAX_KWARPS: i64 = 8;

fn bad(why: String) -> CodegenError {
    CodegenError::Gemm(why)
}

/// Checks the problem and chooses the configuration: 128 columns per CTA (at most 128
/// registers, so four CTAs of 4 warps fit an SM), two W buffers (one superblock in flight
/// while one is multiplied: the fastest on the H200, bench/gpu/README.md), the packing's
/// dequantization ([`default_dequant`]; for the split-K CTA of the sequential packing bytes:
/// pairs save instructions but their A interleave costs more than they do, measured),
/// splits doubling while the grid stays within about four CTAs per SM of an H100/H200 (528)
/// or a CTA's K-range is above 2048, and the reduction of [`default_cluster`].
pub fn choose(spec: &W4a16Spec) -> Result<W4a16Config, CodegenError> {
    let c = choose_split_k(spec)?;
    Ok(default_kgroup(spec, &c).unwrap_or(c))
}

/// The split-K configuration [`choose`] starts from (and keeps where [`default_kgroup`] does
/// not apply).
pub fn choose_split_k(spec: &W4a16Spec) -> Result<W4a16Config, CodegenError> {
    check_spec(spec)?;
    let bn = 128;
    let tiles = spec.n / bn;
    let mut splits = 1;
    while spec.k % (256 * splits) == 0 && (tiles * splits * 2 <= 528 || spec.k / splits > 2048) {
        splits *= 2;
    }
    let mut c = W4a16Config {
        bn,
        splits,
        depth: 2,
        cluster: 1,
        dequant: default_dequant(spec),
        kwarps: 1,
        cwarps: 0,
        aslots: 0,
    };
    c.cluster = default_cluster(spec, &c);
    Ok(c)
}

/// The dequantization a packing is served with by default: nibble pairs where they are two
/// consecutive k ([`W4Packing::Interleaved`]), bytes otherwise.
pub fn default_dequant(spec: &W4a16Spec) -> W4Dequant {
    match spec.packing {
        W4Packing::Interleaved => W4Dequant::Pairs,
        W4Packing::Sequential => W4Dequant::Bytes,
    }
}

/// The K-group CTA [`choose`] takes instead of split-K where it fills the GPU: 8 K-warps of
/// `K / 8` each (K a multiple of 1024) at 128 registers, 16 warps per SM, when the grid is 90
/// to 100% of the CTA slots of the H200's 132 SMs (so N = 8192). The dequantization and the
/// CTA follow M, as measured on the H200 at N = K = 8192 (bench/gpu/README.md, session 16; cold
/// L2, us, against the split-K CTA):
/// - M <= 4: nibble pairs (the in-ring interleave moves at most 4 rows), one column warp (2
///   CTAs per SM), a ring of 2 A superblocks: M = 1 17.3 (split-K 18.4), M = 2 17.7 (18.7),
///   M = 4 18.6 (19.0);
/// - M = 5..=8: pairs, two column warps, 4 slots: M = 8 19.2 (19.9);
/// - M > 8: bytes (the interleave of 16 rows costs more than the pairs save: 21.2), two column
///   warps, 4 slots: M = 16 19.0-19.1 (20.2).
///
/// Those are the sequential packing's. The interleaved packing takes pairs at every M (no
/// interleave of A: session 19, cold, us, interleaved against sequential: M = 1 16.9-17.0
/// (17.4-17.6), 2 17.1-17.2 (17.6-17.7), 4 17.4-17.5 (18.4-18.5), 8 18.1-18.2 (19.1),
/// 16 18.3-18.6 (19.2)); with the one-pointer addressing after it, M = 1 16.3-16.4, 2 16.1,
/// 4 16.4, 8 16.6-16.8, 16 17.1 (2.5x cuBLAS f16 and more at every M).
///
/// At 16x14336x4096 (448 CTAs of 4 warps) the same CTA was no faster than the cluster, so
/// narrower grids keep split-K.
pub fn default_kgroup(spec: &W4a16Spec, base: &W4a16Config) -> Option<W4a16Config> {
    let (dequant, cwarps, aslots) = match (spec.packing, spec.m) {
        (_, ..=4) => (W4Dequant::Pairs, 1, 2),
        (W4Packing::Sequential, 9..) => (W4Dequant::Bytes, 2, 4),
        _ => (W4Dequant::Pairs, 2, 4),
    };
    let c = W4a16Config {
        splits: 1,
        cluster: 1,
        kwarps: 8,
        cwarps,
        aslots,
        dequant,
        ..*base
    };
    let slots = super::SM90_SMS * c.min_ctas(spec);
    let grid = c.grid(spec);
    (check_config(spec, &c).is_ok()
        && spec.k % 1024 == 0
        && grid <= slots
        && grid * 10 >= slots * 9)
        .then_some(c)
}

/// The reduction [`choose`] picks for a configuration: a cluster of the splits when there are
/// 2, 4 or 8 of them and the grid fits in one wave of clusters (clusters of 8 pack 736 of 792
/// CTA slots on the H200, so at 4 CTAs per SM the 512-CTA grid of 8192x8192 does not: measured
/// slower, bench/gpu/README.md), else the workspace.
///
/// A configuration the kernel does not serve gets 1 (its derived sizes are not computed:
/// `--splits 0` divided by zero here); emitting it reports why.
pub fn default_cluster(spec: &W4a16Spec, c: &W4a16Config) -> i64 {
    if check_config(spec, &W4a16Config { cluster: 1, ..*c }).is_err() {
        return 1;
    }
    let grid = c.grid(spec);
    let slots = super::SM90_SMS * c.min_ctas(spec);
    if matches!(c.splits, 2 | 4 | 8) && grid * 8 <= slots * 7 {
        c.splits
    } else {
        1
    }
}

fn check_spec(spec: &W4a16Spec) -> Result<(), CodegenError> {
    if !(1..=16).contains(&spec.m) {
        return Err(bad(format!(
            "M = {}: the W4A16 kernel serves 1..=16 rows (one m16 mma tile)",
            spec.m
        )));
    }
    for (name, v) in [("N", spec.n), ("K", spec.k)] {
        if !(128..=MAX_EXTENT).contains(&v) || v % 128 != 0 {
            return Err(bad(format!(
                "{name} = {v}: the packed int4 layout tiles N and K by 128 (8-row blocks, \
                 128-k superblocks, 128-column CTAs); {name} must be a multiple of 128 in \
                 128..={MAX_EXTENT}"
            )));
        }
    }
    if spec.group < 128 || spec.group % 128 != 0 || spec.k % spec.group != 0 {
        return Err(bad(format!(
            "group {}: the scale group must be a multiple of 128 dividing K = {}",
            spec.group, spec.k
        )));
    }
    super::check_smem_limit(spec.smem_budget())
}

fn check_config(spec: &W4a16Spec, c: &W4a16Config) -> Result<(), CodegenError> {
    check_spec(spec)?;
    if spec.packing == W4Packing::Interleaved && c.dequant == W4Dequant::Bytes {
        return Err(bad(
            "dequantization by bytes of the interleaved packing: a byte there is k and k + 8; \
             use nibble pairs (the default) or --packing sequential"
                .into(),
        ));
    }
    if c.bn != 128 && c.bn != 256 || spec.n % c.bn != 0 {
        return Err(bad(format!(
            "bn {}: 128 or 256 columns per CTA, dividing N = {}",
            c.bn, spec.n
        )));
    }
    if !(2..=MAX_DEPTH).contains(&c.depth) {
        return Err(bad(format!(
            "depth {}: 2 to {MAX_DEPTH} W buffers",
            c.depth
        )));
    }
    if c.cluster != 1 && !(c.cluster == c.splits && matches!(c.splits, 2 | 4 | 8)) {
        return Err(bad(format!(
            "cluster {} with {} splits: the cluster reduction puts the 2, 4 or 8 splits of a \
             column tile in one cluster (cluster = splits); cluster 1 sums through the workspace",
            c.cluster, c.splits
        )));
    }
    if c.kgroup() {
        let groups = c.bn / 32;
        if c.kwarps > MAX_KWARPS
            || !matches!(c.cwarps, 1 | 2 | 4)
            || groups % c.cwarps != 0
            || c.splits != 1
            || c.cluster != 1
            || !(2..=4).contains(&c.aslots)
            || spec.k % (128 * c.kwarps) != 0
        {
            return Err(bad(format!(
                "K-group CTA of {} column warps x {} K-warps, {} A slots, {} splits, cluster {}: \
                 2 to {MAX_KWARPS} K-warps of whole 128-k superblocks (K = {}), 1, 2 or 4 column \
                 warps dividing the {groups} warps of a {}-column tile, 2 to 4 slots, no splits, \
                 no cluster",
                c.cwarps, c.kwarps, c.aslots, c.splits, c.cluster, spec.k, c.bn
            )));
        }
        return check_smem(spec, c);
    }
    if c.kwarps != 1 || c.cwarps != 0 || c.aslots != 0 {
        return Err(bad(format!(
            "kwarps {}, cwarps {}, aslots {}: column warps and A slots belong to a K-group CTA \
             (kwarps 2 to {MAX_KWARPS})",
            c.kwarps, c.cwarps, c.aslots
        )));
    }
    // (splits <= K / 128 first: a certificate's emitter record may name any i64, and
    // `128 * splits` must not wrap.)
    if c.splits < 1
        || c.splits > spec.k / 128
        || spec.k % (128 * c.splits) != 0
        || c.ks(spec) > MAX_KS
    {
        return Err(bad(format!(
            "splits {}: K = {} must split into K-ranges that are multiples of 128 and at most \
             {MAX_KS}",
            c.splits, spec.k
        )));
    }
    check_smem(spec, c)
}

/// The kernel's shared memory fits the budget.
fn check_smem(spec: &W4a16Spec, c: &W4a16Config) -> Result<(), CodegenError> {
    if smem_bytes(spec, c) > spec.smem_budget() {
        return Err(bad(format!(
            "{}: {} bytes of shared memory; the budget is {}{}",
            if c.kgroup() {
                "K-group CTA"
            } else {
                "split-K CTA"
            },
            smem_bytes(spec, c),
            spec.smem_budget(),
            super::raise_hint(spec.smem_budget())
        )));
    }
    Ok(())
}

/// How the kernel allocates its dynamic shared memory: A's superblocks (the split-K CTA's
/// whole K-range, or the K-groups' rings), then the f32 partials that reuse them (the cluster
/// reduction's tile of `c`, or each K-warp's share of a K-group CTA's columns), and 1 KiB of
/// slack to align the base ([`smem_bytes`] is this sum).
pub fn allocation(spec: &W4a16Spec, c: &W4a16Config) -> SmemAllocation {
    let (ring, partials) = if c.kgroup() {
        let partials = SmemBuffer {
            tensor: "c".into(),
            copies: c.kwarps,
            threads: Some(c.group_threads()),
        };
        (c.kwarps * c.aslots, Some(partials))
    } else {
        let partials = c.cluster_reduce().then(|| SmemBuffer::new("c", 1));
        (c.ks(spec) / 128, partials)
    };
    let mut phases = vec![vec![SmemBuffer::new("a_s", ring)]];
    phases.extend(partials.map(|p| vec![p]));
    SmemAllocation {
        budget: spec.smem_budget(),
        phases,
        align: 1024,
    }
}

/// Dynamic shared memory: A's K-range (16 rows of f16) or, with the cluster reduction, the f32
/// partial tile that reuses it, whichever is larger, plus 1 KiB of alignment slack.
pub fn smem_bytes(spec: &W4a16Spec, c: &W4a16Config) -> i64 {
    if c.kgroup() {
        // The K-groups' A rings, or the K-warps' f32 partials (16 accumulators a thread)
        // that reuse them.
        let ring = c.kwarps * c.aslots * 16 * 128 * 2;
        let partials = c.kwarps * c.group_threads() * 16 * 4;
        return ring.max(partials) + 1024;
    }
    let partial = if c.cluster_reduce() { 16 * c.bn * 4 } else { 0 };
    (16 * c.ks(spec) * 2).max(partial) + 1024
}

/// The packed layout of all of W over `(N, K)`, in nibbles.
pub fn packed_layout(packing: W4Packing, n: i64, k: i64) -> String {
    let [s0, s1, s2, s3, sb] = packing.k_strides();
    format!(
        "((8,{}),(2,2,2,4,4,{})):((64,{}),({s0},{s1},{s2},{s3},{sb},1024))",
        n / 8,
        k / 128,
        8 * k
    )
}

/// The CTA's tile program: one (16 x bn x 128) step.
pub fn tile_program(spec: &W4a16Spec, c: &W4a16Config) -> String {
    let bn = c.bn;
    // The plan sees each word's values in k order (the sequential packing); the interleaved
    // packing differs only inside a word, which the dequantization undoes (validated nibble by
    // nibble: [`W4Packing::nibble_value`]).
    let [s0, s1, s2, s3, sb] = W4Packing::Sequential.k_strides();
    let order: Vec<String> = (0..8)
        .map(|i| spec.packing.nibble_value(i).to_string())
        .collect();
    format!(
        "program laycert_w4a16_16x{bn}x128\n\
         # w_g has each 32-bit word's 8 values in k order; the kernel's packing is {packing:?}:\n\
         # nibble i of a word holds its value [{order}][i], which the dequantization undoes\n\
         # (the emitter validates every nibble).\n\
         threads {threads}\n\
         a_g = global_view(f16, [16, 128], (16,128):({k},1))\n\
         w_g = global_view(i4, [{bn}, 128], ((8,{nb}),(2,2,2,4,4)):((64,{nbs}),({s0},{s1},{s2},{s3},{sb})))\n\
         s_g = global_view(f16, [{bn}], {bn}:{g})\n\
         c_g = global_view(f16, [16, {bn}], (16,{bn}):({n},1))\n\
         a_s = shared_tensor(f16, [16, 128])\n\
         a = register_tensor(f16, [16, 128])\n\
         w = register_tensor(i4, [{bn}, 128])\n\
         s = register_tensor(f16, [{bn}])\n\
         c = register_tensor(f32, [16, {bn}])\n\
         copy(a_g, a_s)\n\
         copy(a_s, a)\n\
         copy(w_g, w)\n\
         copy(s_g, s)\n\
         q = cast(w, f16)\n\
         b = elementwise(mul, q, s)\n\
         mma(c, a, b)\n\
         h = cast(c, f16)\n\
         copy(h, c_g)\n",
        k = spec.k,
        n = spec.n,
        nb = bn / 8,
        nbs = 8 * spec.k,
        g = spec.k / spec.group,
        threads = c.bn,
        packing = spec.packing,
        order = order.join(", "),
    )
}

/// Synthesizes the tile program (certified inside, with the kernel's shared-memory
/// [`allocation`]).
pub fn plan_for(spec: &W4a16Spec, c: &W4a16Config) -> Result<Plan, CodegenError> {
    let program = Program::parse(&tile_program(spec, c))
        .map_err(|e| bad(format!("the tile program: {e}")))?;
    synthesize_allocated(&program, Target::Sm80, &allocation(spec, c))
        .map_err(|e| bad(format!("synthesis: {e}")))
}

/// The plan-dependent text of the W4A16 kernel, exactly as printed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct W4Text {
    /// The mma instruction.
    pub mma_instr: String,
    /// `LC_A_GROUPS`: ldmatrix.x4 groups of A per superblock.
    pub a_groups: i64,
    /// `LC_WV`: 16-byte W vectors per thread per superblock.
    pub w_vectors: i64,
    /// `LC_ACC`.
    pub acc: i64,
    /// `LC_A_CHUNKS`: cp.async chunks of one superblock of A per thread.
    pub a_chunks: i64,
    /// `LC_R_ITERS`: reduction steps (pairs) per thread.
    pub r_iters: i64,
    /// `LC_A_CP_ROW(t, j)` ([`W4Dequant::Bytes`]: cp.async chunk j of thread t).
    pub a_cp_row: String,
    /// `LC_A_CP_K(t, j)`.
    pub a_cp_k: String,
    /// `LC_A_PR_ROW(x)` ([`W4Dequant::Pairs`]): the row of a superblock's chunk pair x
    /// (0..[`A_PAIRS`]), whose two 16-byte chunks of A at k and k + 16 become the shared chunks
    /// at the mma's k-positions k and k + 16.
    pub a_pr_row: String,
    /// `LC_A_PR_K(x)`: its k (bit 4 clear).
    pub a_pr_k: String,
    /// `LC_A_SLIN(r, k)`.
    pub a_slin: String,
    /// Body of `lc_swz_a(o)`.
    pub a_swz: String,
    /// `LC_A_LDSM_ROW(t, g)`.
    pub a_ldsm_row: String,
    /// `LC_A_LDSM_K(t, g)`.
    pub a_ldsm_k: String,
    /// `LC_W_ROW(t, j)`: tile row (n) of vector j's first nibble.
    pub w_row: String,
    /// `LC_W_K(t, j)`: its k within the superblock.
    pub w_k: String,
    /// `LC_W_GOFF(n, k)`: nibble offset in W.
    pub w_goff: String,
    /// `LC_W_SB_WORDS`: 32-bit words between one superblock's W and the next
    /// (`LC_W_GOFF(n, k + 128) = LC_W_GOFF(n, k) + 8 * LC_W_SB_WORDS`, validated), so the
    /// kernel computes each vector's address once and steps it.
    pub w_sb_words: i64,
    /// `LC_W_VSTEP`: 32-bit words from a thread's W vector j to vector j + 1 (the same for
    /// every thread, column tile and superblock: validated), so the kernel addresses all of a
    /// thread's vectors from one pointer with constant offsets.
    pub w_vstep: i64,
    /// `LC_S_VSTEP`: scale elements from vector j's scale to vector j + 1's (validated likewise).
    pub s_vstep: i64,
    /// `LC_S_N(t, j)`: the tile row whose scale multiplies vector j.
    pub s_n: String,
    /// `LC_S_GOFF(n, g)`: the scale's element offset.
    pub s_goff: String,
    /// `LC_C_ROW(t, v)`.
    pub c_row: String,
    /// `LC_C_COL(t, v)`.
    pub c_col: String,
    /// `LC_R_ROW(t, i)`: row of reduction pair i.
    pub r_row: String,
    /// `LC_R_COL(t, i)`.
    pub r_col: String,
    /// `LC_A_GOFF(r, k)`.
    pub a_goff: String,
    /// `LC_C_GOFF(r, c)`.
    pub c_goff: String,
    /// `LC_WS_OFF(p, r, c)`: workspace offset of split p.
    pub ws_off: String,
    /// `LC_P_OFF(r, c)`: f32 offset of cell (r, c) of the partial tile in shared memory (the
    /// cluster reduction).
    pub p_off: String,
    /// `LC_A_GUARD(r, k)`.
    pub a_guard: String,
    /// `LC_C_GUARD(r, c)`.
    pub c_guard: String,
    /// The lines of `LC_W4_SCHEDULE` (one superblock).
    pub schedule: Vec<String>,
    /// K-group CTA ([`W4a16Config::kgroup`]): `LC_KG_TILE(b)`, the column tile of CTA b.
    pub kg_tile: String,
    /// `LC_KG_TC(b, t)`: the plan's thread that thread t of CTA b is.
    pub kg_tc: String,
    /// `LC_KG_KW(t)`: thread t's K-warp (and K-group).
    pub kg_kw: String,
    /// `LC_KG_K0(w)`: the first k of K-warp w.
    pub kg_k0: String,
    /// `LC_KG_A_ROW(c)`, `LC_KG_A_K(c)`: the 16-byte chunk c of an A superblock (row, first
    /// k), staged (c < 16 M) or zeroed once (rows >= M, c taken modulo 256).
    pub kg_a_row: String,
    /// See `kg_a_row`.
    pub kg_a_k: String,
    /// `LC_KG_A_ISTEP`: A elements from group thread p's ring chunk p to its chunk p + i x
    /// (group threads), per i (validated for every chunk a thread stages, in every K-warp and
    /// superblock), so a thread stages A from one pointer.
    pub kg_a_istep: i64,
    /// `LC_KG_P_OFF(w, v, p)`: f32 slot of accumulator v of K-group thread p of K-warp w.
    pub kg_p_off: String,
    /// `LC_KG_R_P(x)`, `LC_KG_R_V(x)`: the K-group thread and the (even) accumulator of
    /// reduction pair x.
    pub kg_r_p: String,
    /// See `kg_r_p`.
    pub kg_r_v: String,
}

/// Chunk pairs of one A superblock (16 rows x 128 k in pairs of 16-byte chunks).
pub const A_PAIRS: i64 = 16 * 128 / 16;

const LDSM_T: &str = "(t / 32 * 32 + t % 8 * 4)";
const LDSM_V: &str = "(g * 8 + t % 32 / 8 * 2)";

fn find_value(tv: &Tv, t: i64, want: (i64, i64)) -> Option<i64> {
    (0..tv.nvalues()).find(|&v| rc(tv, t, v) == want)
}

/// One superblock's schedule: `LC_LDSM_A(g);` (one k-step ahead) and the mma of every vector
/// slot per k-step: `LC_W4_MMA(ci, g, j, w0, x0, w1, x1);` (acc[ci..ci+3] += A group g x the two
/// B registers dequantized from piece x0 of word w0 and piece x1 of word w1 of vector j: the
/// byte x with [`W4Dequant::Bytes`], the nibble pair (x, x + 4) with [`W4Dequant::Pairs`]).
/// The atom's B value at the mma's k-position kappa is W at k = [`mma_k`]`(kappa)`.
fn schedule(
    plan: &Plan,
    packing: W4Packing,
    dequant: W4Dequant,
) -> Result<Vec<String>, CodegenError> {
    let (_, atom) = plan_atom(plan)?;
    let (aa, ab) = match (&atom.a, &atom.b) {
        (Some(a), Some(b)) => (a, b),
        _ => {
            return Err(bad(
                "the mma atom reads an operand from shared memory".into()
            ))
        }
    };
    let (tv_a, tv_b, tv_c) = (
        plan_tv(plan, "a")?,
        plan_tv(plan, "b")?,
        plan_tv(plan, "c")?,
    );
    let cc = atom.c_layout.eval(0, 0)?;
    let mut groups = Vec::new();
    let mut mmas: Vec<Vec<String>> = Vec::new();
    for kk in 0..8 {
        // The A group of this k-step: the one whose first value is the atom's A at (0, 16 kk).
        let a0 = aa.eval(0, 0)?;
        let va = find_value(tv_a, 0, (a0[0], 16 * kk + a0[1]))
            .ok_or_else(|| bad(format!("the plan's a has no fragment for k-step {kk}")))?;
        if va % 8 != 0 {
            return Err(bad(format!(
                "the plan's a fragment of k-step {kk} does not start an ldmatrix.x4 group"
            )));
        }
        groups.push(va / 8);
        let mut lines = Vec::new();
        for ci in (0..tv_c.nvalues()).step_by(4) {
            let (r, col) = rc(tv_c, 0, ci);
            let n0 = col - cc[1];
            if r - cc[0] != 0 {
                return Err(bad("the plan's c has more than one m16 row block".into()));
            }
            // Each B register: its two halves' plan values, then the word and piece.
            let mut regs = Vec::new();
            for p in 0..2 {
                let mut halves = [0i64; 2];
                for (h, half) in halves.iter_mut().enumerate() {
                    let at = ab.eval(0, 2 * p + h as i64)?;
                    let k = mma_k(packing, dequant, 16 * kk + at[1]);
                    *half = find_value(tv_b, 0, (n0 + at[0], k)).ok_or_else(|| {
                        bad(format!(
                            "the plan's b has no value at ({}, {k})",
                            n0 + at[0]
                        ))
                    })?;
                }
                // the nibbles (of the vector's 32) that hold the two values
                let [lo, hi] = halves.map(|x| x - x % 8 + packing.value_nibble(x % 8));
                let piece = match dequant {
                    W4Dequant::Bytes if lo % 2 == 0 && hi == lo + 1 => (lo % 8) / 2,
                    W4Dequant::Pairs if lo % 8 < 4 && hi == lo + 4 => lo % 8,
                    _ => {
                        return Err(bad(format!(
                            "a B register's halves are the vector's nibbles {lo} and {hi}: not \
                             one {} of a word",
                            match dequant {
                                W4Dequant::Bytes => "byte",
                                W4Dequant::Pairs => "nibble pair (i, i + 4)",
                            }
                        )))
                    }
                };
                regs.push((lo / 32, (lo % 32) / 8, piece));
            }
            let j = regs[0].0;
            if regs[1].0 != j {
                return Err(bad("one mma's B registers come from two vectors".into()));
            }
            lines.push(format!(
                "LC_W4_MMA({ci}, {}, {j}, {}, {}, {}, {});",
                va / 8,
                regs[0].1,
                regs[0].2,
                regs[1].1,
                regs[1].2
            ));
        }
        mmas.push(lines);
    }
    // Each k-step's A group is loaded one k-step ahead of its mma.
    let mut lines = vec![format!("LC_LDSM_A({});", groups[0])];
    for kk in 0..8 {
        if kk + 1 < 8 {
            lines.push(format!("LC_LDSM_A({});", groups[kk + 1]));
        }
        lines.append(&mut mmas[kk]);
    }
    Ok(lines)
}

/// Expressions of flat-value-index `v` = `(j * 32)` etc. substituted into a layout.
fn tv_at(tv: &Tv, t: &str, v: &str, what: &str) -> Result<(String, String), CodegenError> {
    tv_exprs(tv, t, v, what)
}

/// The plan-dependent text for `plan`.
pub fn emitted_text(
    spec: &W4a16Spec,
    c: &W4a16Config,
    plan: &Plan,
) -> Result<W4Text, CodegenError> {
    let (name, _) = plan_atom(plan)?;
    let (tv_a, tv_w, tv_s, tv_c) = (
        plan_tv(plan, "a")?,
        plan_tv(plan, "w")?,
        plan_tv(plan, "s")?,
        plan_tv(plan, "c")?,
    );
    let copy = coalesced(&[16, 128], 1, 8, c.bn)
        .ok_or_else(|| bad("no coalesced copy layout for A".into()))?;
    let (a_cp_row, a_cp_k) = tv_at(&copy, "t", "(j * 8)", "a_g -> a_s")?;
    let (a_slin, a_swz) = memory_exprs(plan_memory(plan, "a_s")?, &[16, 128], "r", "k", "a_s")?;
    let (a_ldsm_row, a_ldsm_k) = tv_at(tv_a, LDSM_T, LDSM_V, "a")?;
    let (w_row, w_k) = tv_at(tv_w, "t", "(j * 32)", "w")?;
    // s is 1-D over the tile's rows: print it as a 2-D layout with one column.
    let s2 = Tv {
        threads: tv_s.threads.clone(),
        values: tv_s.values.clone(),
        shape: vec![c.bn, 1],
    };
    let (s_n, _) = tv_at(&s2, "t", "(j * 32)", "s")?;
    let (c_row, c_col) = tv_at(tv_c, "t", "v", "c")?;
    let g = spec.k / spec.group;
    // W's nibble offset: the packed layout's terms for n and k.
    let [s0, s1, s2, s3, sb] = spec.packing.k_strides();
    let w_goff = format!(
        "(n % 8) * 64 + (n / 8) * {} + (k % 2) * {s0} + (k / 2 % 2) * {s1} + (k / 4 % 2) * {s2} + \
         (k / 8 % 4) * {s3} + (k / 32 % 4) * {sb} + (k / 128) * 1024",
        8 * spec.k
    );
    let pairs = 16 * c.bn / 2;
    // K-group CTAs: threads of a K-group, and CTAs per column tile (printed only for K-group
    // CTAs; a split-K configuration has no column warps, so 1 keeps the text well-formed).
    let gt = c.group_threads().max(1);
    let halves = (c.bn / gt).max(1);
    // One superblock further along k: the packed layout's (k / 128) term.
    let w_sb_words = 1024 / 8;
    // A thread's vector j + 1 against vector j (thread 0, the first tile; validated for all).
    let ev = |e: &str, a: (&str, i64), b: (&str, i64)| -> Result<i64, CodegenError> {
        eval2(&CExpr::parse(e)?, a, b)
    };
    let w_at = |j: i64| -> Result<i64, CodegenError> {
        let n = ev(&w_row, ("t", 0), ("j", j))?;
        let k = ev(&w_k, ("t", 0), ("j", j))?;
        ev(&w_goff, ("n", n), ("k", k))
    };
    let s_goff = format!("n * {g} + g");
    let s_at = |j: i64| -> Result<i64, CodegenError> {
        ev(&s_goff, ("n", ev(&s_n, ("t", 0), ("j", j))?), ("g", 0))
    };
    let (w_vstep, s_vstep) = if tv_w.nvalues() > 32 {
        ((w_at(1)? - w_at(0)?) / 8, s_at(1)? - s_at(0)?)
    } else {
        (0, 0)
    };
    let a_goff = format!("r * {} + k", spec.k);
    let (kg_a_row, kg_a_k) = ("c / 16".to_string(), "c % 16 * 8".to_string());
    let a_chunk = |ch: i64| -> Result<i64, CodegenError> {
        let r = eval1(&CExpr::parse(&kg_a_row)?, "c", ch)?;
        let k = eval1(&CExpr::parse(&kg_a_k)?, "c", ch)?;
        ev(&a_goff, ("r", r), ("k", k))
    };
    let kg_a_istep = a_chunk(gt)? - a_chunk(0)?;
    Ok(W4Text {
        mma_instr: name,
        a_groups: tv_a.nvalues() / 8,
        w_vectors: tv_w.nvalues() / 32,
        acc: tv_c.nvalues(),
        a_chunks: 16 * 128 / 8 / c.bn,
        r_iters: pairs / c.bn,
        a_cp_row,
        a_cp_k,
        a_slin,
        a_swz,
        a_ldsm_row,
        a_ldsm_k,
        w_row,
        w_k,
        w_goff,
        w_sb_words,
        w_vstep,
        s_vstep,
        s_n,
        s_goff,
        c_row,
        c_col,
        r_row: format!("(t + i * {}) * 2 / {}", c.bn, c.bn),
        r_col: format!("(t + i * {}) * 2 % {}", c.bn, c.bn),
        a_goff,
        c_goff: format!("r * {} + c", spec.n),
        ws_off: format!("p * {} + r * {} + c", spec.m * spec.n, spec.n),
        p_off: format!("r * {} + c", c.bn),
        a_guard: format!("r < {} && k < {}", spec.m, spec.k),
        c_guard: format!("r < {} && c < {}", spec.m, spec.n),
        a_pr_row: "x / 8".into(),
        a_pr_k: "(x % 8 / 2) * 32 + (x % 2) * 8".into(),
        schedule: schedule(plan, spec.packing, c.dequant)?,
        kg_tile: format!("b / {halves}"),
        kg_tc: format!("(b % {halves}) * {gt} + t % {gt}"),
        kg_kw: format!("t / {gt}"),
        kg_k0: format!("w * {}", c.ks(spec)),
        kg_a_row,
        kg_a_k,
        kg_a_istep,
        kg_p_off: format!("(w * {} + v) * {gt} + p", tv_c.nvalues()),
        kg_r_p: format!("x % {gt}"),
        kg_r_v: format!("x / {gt} * 2"),
    })
}

fn check_tables_equal(plan: &Plan, names: &[&str]) -> Result<(), CodegenError> {
    let first = plan_tv(plan, names[0])?;
    for n in &names[1..] {
        let t = plan_tv(plan, n)?;
        if t.table() != first.table() || t.shape != first.shape {
            return Err(fail(format!(
                "the plan's {n} does not keep {}'s layout",
                names[0]
            )));
        }
    }
    Ok(())
}

fn parse_w4_mma(line: &str) -> Option<[i64; 7]> {
    let inner = line.trim().strip_prefix("LC_W4_MMA(")?.strip_suffix(");")?;
    let v: Vec<i64> = inner
        .split(',')
        .map(|x| x.trim().parse().ok())
        .collect::<Option<_>>()?;
    v.try_into().ok()
}

/// The cp.async staging of A ([`W4Dequant::Bytes`]): the coalesced copy layout's chunks,
/// 16 contiguous aligned bytes of a_s each, cover one superblock once (in k order).
fn check_a_cp_async(text: &W4Text, sa: &SharedMap, nt: i64) -> Result<(), CodegenError> {
    let copy = coalesced(&[16, 128], 1, 8, nt).ok_or_else(|| fail("no A copy layout".into()))?;
    if copy.nvalues() != 8 * text.a_chunks {
        return Err(fail(format!(
            "LC_A_CHUNKS {}: the copy layout has {}",
            text.a_chunks,
            copy.nvalues() / 8
        )));
    }
    let (cr, ck) = (CExpr::parse(&text.a_cp_row)?, CExpr::parse(&text.a_cp_k)?);
    let mut seen = vec![false; 16 * 128];
    for t in 0..nt {
        for j in 0..text.a_chunks {
            let (r, k) = (
                eval2(&cr, ("t", t), ("j", j))?,
                eval2(&ck, ("t", t), ("j", j))?,
            );
            if (r, k) != rc(&copy, t, 8 * j) || k % 8 != 0 {
                return Err(fail(format!(
                    "A cp.async chunk {j} of thread {t} loads ({r}, {k}); the copy layout says {:?}",
                    rc(&copy, t, 8 * j)
                )));
            }
            let base = sa.offset(r, k)?;
            for e in 0..8 {
                if sa.offset(r, k + e)? != base + e || base % 8 != 0 {
                    return Err(fail(format!(
                        "A cp.async chunk ({r}, {k}) is not 16 contiguous aligned bytes"
                    )));
                }
                let s = &mut seen[(r * 128 + k + e) as usize];
                if *s {
                    return Err(fail(format!("A cp.async writes ({r}, {}) twice", k + e)));
                }
                *s = true;
            }
        }
    }
    if seen.iter().any(|&x| !x) {
        return Err(fail(
            "A cp.async leaves a cell of the superblock unloaded".into(),
        ));
    }
    Ok(())
}

/// The chunk-pair staging of A ([`W4Dequant::Pairs`]): one thread copies A's 16-byte chunks
/// at (r, k) and (r, k + 16) of pair x (k with bit 4 clear) to a_s (r, k) and (r, k + 16), both
/// 16 contiguous aligned bytes of a_s, and once they have landed rewrites them in place with
/// `prmt(lo, hi, 0x5410)` word by word (each word's low halves: A's k + 2i and k + 16 + 2i) at
/// (r, k) and `prmt(lo, hi, 0x7632)` (the high halves: k + 2i + 1 and k + 17 + 2i) at
/// (r, k + 16) (`codegen/tests/w4a16_dequant.rs` replays the selectors on `__byte_perm`). The
/// pairs must cover the superblock once; returns what each cell then holds.
fn check_a_pairs(text: &W4Text, sa: &SharedMap) -> Result<Vec<Vec<i64>>, CodegenError> {
    let (pr, pk) = (CExpr::parse(&text.a_pr_row)?, CExpr::parse(&text.a_pr_k)?);
    let mut staged = vec![vec![-1i64; 128]; 16];
    for x in 0..A_PAIRS {
        let env = |n: &str| (n == "x").then_some(x);
        let (r, k) = (pr.eval_with(&env)?, pk.eval_with(&env)?);
        if !(0..16).contains(&r) || !(0..128).contains(&k) || k % 8 != 0 || k & 16 != 0 {
            return Err(fail(format!(
                "A chunk pair {x} at ({r}, {k}): outside the superblock, unaligned, or k with bit 4 set"
            )));
        }
        for half in [k, k + 16] {
            let base = sa.offset(r, half)?;
            for e in 0..8 {
                if sa.offset(r, half + e)? != base + e || base % 8 != 0 {
                    return Err(fail(format!(
                        "A chunk pair {x}: a_s ({r}, {half}) is not 16 contiguous aligned bytes"
                    )));
                }
            }
        }
        for i in 0..4 {
            for (kappa, from) in [
                (k + 2 * i, k + 2 * i),
                (k + 2 * i + 1, k + 16 + 2 * i),
                (k + 16 + 2 * i, k + 2 * i + 1),
                (k + 17 + 2 * i, k + 17 + 2 * i),
            ] {
                let cell = &mut staged[r as usize][kappa as usize];
                if *cell >= 0 {
                    return Err(fail(format!(
                        "A chunk pairs write a_s ({r}, {kappa}) twice"
                    )));
                }
                *cell = from;
            }
        }
    }
    if staged.iter().flatten().any(|&x| x < 0) {
        return Err(fail(
            "A chunk pairs leave a cell of the superblock unloaded".into(),
        ));
    }
    Ok(staged)
}

/// Validates the W4A16 kernel's text (see the module documentation for what is checked).
pub fn validate_w4a16(
    spec: &W4a16Spec,
    c: &W4a16Config,
    plan: &Plan,
    text: &W4Text,
) -> Result<GemmValidation, CodegenError> {
    let mut v = GemmValidation::default();
    let nt = c.bn;
    let (instr, atom) = plan_atom(plan)?;
    if text.mma_instr != instr || !instr.contains(".f16.f16.f32") {
        return Err(fail(format!(
            "the kernel issues {:?}, the plan chose {instr:?} (f16 operands needed)",
            text.mma_instr
        )));
    }
    let (aa, ab) = match (&atom.a, &atom.b) {
        (Some(a), Some(b)) => (a, b),
        _ => return Err(fail(format!("{instr}: an operand is not in registers"))),
    };
    let (tv_a, tv_w, tv_s, tv_b, tv_c) = (
        plan_tv(plan, "a")?,
        plan_tv(plan, "w")?,
        plan_tv(plan, "s")?,
        plan_tv(plan, "b")?,
        plan_tv(plan, "c")?,
    );
    check_tables_equal(plan, &["w", "q", "b"])?;
    if tv_w.nthreads() != nt || tv_w.nvalues() != 32 * text.w_vectors || tv_w.shape != [c.bn, 128] {
        return Err(fail(format!(
            "the plan's w has {} threads x {} values over {:?}; the kernel loads {nt} x {} \
             vectors of 32 over [{}, 128]",
            tv_w.nthreads(),
            tv_w.nvalues(),
            tv_w.shape,
            text.w_vectors,
            c.bn
        )));
    }
    for t in 0..nt {
        for x in 0..tv_b.nvalues() {
            if tv_s.cell(t, x) != rc(tv_b, t, x).0 {
                return Err(fail(format!(
                    "the plan's s at thread {t}, value {x} is row {}, b's row is {}",
                    tv_s.cell(t, x),
                    rc(tv_b, t, x).0
                )));
            }
        }
    }

    // A: shared layout, cp.async (one superblock; the kernel repeats it at LC_A_SB_BYTES
    // strides), ldmatrix.
    let sa = SharedMap::new(
        "a_s",
        plan_memory(plan, "a_s")?,
        (16, 128),
        &text.a_slin,
        &text.a_swz,
        ("r", "k"),
        &mut v,
    )?;
    // What each cell (r, kappa) of a superblock's a_s holds: A at (r, staged[r][kappa]).
    let staged = if a_kperm(spec.packing, c.dequant) {
        check_a_pairs(text, &sa)?
    } else {
        check_a_cp_async(text, &sa, nt)?;
        (0..16)
            .map(|_| (0..128).collect::<Vec<i64>>())
            .collect::<Vec<_>>()
    };
    for (r, row) in staged.iter().enumerate() {
        for (kappa, &k) in row.iter().enumerate() {
            let want = mma_k(spec.packing, c.dequant, kappa as i64);
            if k != want {
                return Err(fail(format!(
                    "A staging: a_s cell ({r}, {kappa}) holds A's k {k}; the mma multiplies k {want} there"
                )));
            }
            v.smem_cells += 1;
        }
    }
    let ldsm = Ldsm::corpus()?;
    let frag_a = check_ldsm(
        "a",
        &ldsm,
        &sa,
        tv_a,
        nt,
        text.a_groups,
        &CExpr::parse(&text.a_ldsm_row)?,
        &CExpr::parse(&text.a_ldsm_k)?,
        &mut v,
    )?;

    // Global offsets and guards.
    check_offset("A", &text.a_goff, ("r", "k"), spec.m, spec.k, &mut v)?;
    check_offset("C", &text.c_goff, ("r", "c"), spec.m, spec.n, &mut v)?;
    let ga = check_guard(
        "A",
        &text.a_guard,
        ("r", "k"),
        spec.m,
        spec.k,
        16,
        spec.k,
        &mut v,
    )?;
    for k in (0..spec.k).step_by(8) {
        if eval2(&ga, ("r", 0), ("k", k))? != eval2(&ga, ("r", 0), ("k", k + 7))? {
            return Err(fail(format!(
                "the A guard changes inside the chunk at k = {k}"
            )));
        }
    }
    let gc = check_guard(
        "C",
        &text.c_guard,
        ("r", "c"),
        spec.m,
        spec.n,
        16,
        spec.n,
        &mut v,
    )?;
    // Scales: (N, K / group) row-major.
    check_offset(
        "scale",
        &text.s_goff,
        ("n", "g"),
        spec.n,
        spec.k / spec.group,
        &mut v,
    )?;
    // The workspace (splits, M, N) row-major: one-coordinate terms, each axis.
    let ws = CExpr::parse(&text.ws_off)?;
    for term in ws.summands() {
        if term.vars().len() > 1 {
            return Err(fail(format!(
                "the workspace offset term {term:?} reads more than one coordinate"
            )));
        }
    }
    let ws_eval = |p: i64, r: i64, col: i64| {
        ws.eval_with(&|n| match n {
            "p" => Some(p),
            "r" => Some(r),
            "c" => Some(col),
            _ => None,
        })
    };
    for (axis, ext) in [(0, c.splits), (1, spec.m), (2, spec.n)] {
        for x in 0..ext {
            let (p, r, col) = match axis {
                0 => (x, 0, 0),
                1 => (0, x, 0),
                _ => (0, 0, x),
            };
            if ws_eval(p, r, col)? != (p * spec.m + r) * spec.n + col {
                return Err(fail(format!(
                    "workspace offset at ({p}, {r}, {col}) is not (splits, M, N) row-major"
                )));
            }
            v.global_offsets += 1;
        }
    }
    // W: the printed offset is the packed layout along each axis (one-coordinate terms).
    let wl = layout::Layout::parse(&packed_layout(spec.packing, spec.n, spec.k), None)?;
    let wg = CExpr::parse(&text.w_goff)?;
    for term in wg.summands() {
        if term.vars().len() > 1 {
            return Err(fail(format!(
                "the W offset term {term:?} reads more than one coordinate"
            )));
        }
    }
    for (axis, ext) in [(0, spec.n), (1, spec.k)] {
        for x in 0..ext {
            let coord = if axis == 0 { [x, 0] } else { [0, x] };
            let got = eval2(&wg, ("n", coord[0]), ("k", coord[1]))?;
            let want = memory_offset(&wl, &[spec.n, spec.k], &coord)?;
            if got != want {
                return Err(fail(format!(
                    "W nibble offset at {coord:?}: the kernel reads {got}, the packed layout says {want}"
                )));
            }
            v.global_offsets += 1;
        }
    }
    // The kernel steps each vector's address by LC_W_SB_WORDS words per superblock: along k
    // (the offset is a sum of one-coordinate terms, so the n term drops out) one superblock
    // further must be exactly that many nibbles further, from every k; by induction the
    // address of superblock s is the base plus s steps.
    for k in 0..spec.k - 128 {
        let (a, b) = (
            eval2(&wg, ("n", 0), ("k", k))?,
            eval2(&wg, ("n", 0), ("k", k + 128))?,
        );
        if b - a != 8 * text.w_sb_words {
            return Err(fail(format!(
                "W: k = {k} and k + 128 are {} nibbles apart; LC_W_SB_WORDS says {} words",
                b - a,
                text.w_sb_words
            )));
        }
        v.global_offsets += 1;
    }
    // The plan's view of a tile is the packed layout at the tile origin, up to where a value
    // sits inside its word (the view has each word's values in k order).
    let wid = plan
        .program
        .tensor("w_g")
        .ok_or_else(|| fail("the plan has no w_g".into()))?;
    let view = plan.program.tensors[wid]
        .layout
        .clone()
        .ok_or_else(|| fail("w_g has no layout".into()))?;
    for n in 0..c.bn {
        for k in 0..128 {
            let a = memory_offset(&view, &[c.bn, 128], &[n, k])?;
            let a = a - a % 8 + spec.packing.value_nibble(a % 8);
            let b = memory_offset(&wl, &[spec.n, spec.k], &[n, k])?;
            if a != b {
                return Err(fail(format!(
                    "the plan's w_g maps ({n}, {k}) to {a}, the packed layout to {b}"
                )));
            }
        }
    }
    // Vectors: the plan's w value 32 j + x of thread t is nibble 8 (x / 8) + value_nibble(x % 8)
    // of its vector j (nibble x without the interleave), for tile origins at the first and last
    // column tile and superblock.
    let (wr, wk, sn) = (
        CExpr::parse(&text.w_row)?,
        CExpr::parse(&text.w_k)?,
        CExpr::parse(&text.s_n)?,
    );
    for t in 0..nt {
        for j in 0..text.w_vectors {
            let (r, k) = (
                eval2(&wr, ("t", t), ("j", j))?,
                eval2(&wk, ("t", t), ("j", j))?,
            );
            if eval2(&sn, ("t", t), ("j", j))? != tv_s.cell(t, 32 * j) {
                return Err(fail(format!(
                    "thread {t} vector {j}: LC_S_N is not the plan's s"
                )));
            }
            for n0 in [0, spec.n - c.bn] {
                for k0 in [0, spec.k - 128] {
                    let off = eval2(&wg, ("n", n0 + r), ("k", k0 + k))?;
                    if off % 32 != 0 {
                        return Err(fail(format!(
                            "thread {t} vector {j}: nibble {off} is not 16-byte aligned"
                        )));
                    }
                    for e in 0..32 {
                        let (cn, ck) = rc(tv_w, t, 32 * j + e);
                        if tv_s.cell(t, 32 * j + e) != tv_s.cell(t, 32 * j) {
                            return Err(fail(format!("thread {t} vector {j} spans two scales")));
                        }
                        let want = memory_offset(&wl, &[spec.n, spec.k], &[n0 + cn, k0 + ck])?;
                        let nib = e - e % 8 + spec.packing.value_nibble(e % 8);
                        if want != off + nib {
                            return Err(fail(format!(
                                "thread {t} vector {j}: the plan's w value {} is W nibble {want}, \
                                 the kernel reads it from nibble {}",
                                32 * j + e,
                                off + nib
                            )));
                        }
                        v.fragment_cells += 1;
                    }
                }
            }
        }
    }

    // One pointer per thread: vector j's W words are j LC_W_VSTEP words after vector 0's, and
    // its scale j LC_S_VSTEP elements after vector 0's (the scale offset of (n, g) is the sum
    // of an n term and a g term: check_offset above), in every column tile, at the first and
    // last superblock.
    let sg = CExpr::parse(&text.s_goff)?;
    for n0 in (0..spec.n).step_by(c.bn as usize) {
        for t in 0..nt {
            let at = |j: i64, k0: i64| -> Result<(i64, i64), CodegenError> {
                let (r, k) = (
                    eval2(&wr, ("t", t), ("j", j))?,
                    eval2(&wk, ("t", t), ("j", j))?,
                );
                Ok((
                    eval2(&wg, ("n", n0 + r), ("k", k0 + k))?,
                    eval2(&sg, ("n", n0 + eval2(&sn, ("t", t), ("j", j))?), ("g", 0))?,
                ))
            };
            for k0 in [0, spec.k - 128] {
                let (w0, s0) = at(0, k0)?;
                for j in 1..text.w_vectors {
                    let (wj, sj) = at(j, k0)?;
                    if wj - w0 != 8 * j * text.w_vstep || sj - s0 != j * text.s_vstep {
                        return Err(fail(format!(
                            "thread {t} vector {j} (tile {n0}, k {k0}): W nibble {wj} and scale {sj} \
                             are not LC_W_VSTEP {} words and LC_S_VSTEP {} after vector 0's {w0} \
                             and {s0}",
                            text.w_vstep, text.s_vstep
                        )));
                    }
                    v.global_offsets += 1;
                }
            }
        }
    }

    // The schedule and the mma semantics.
    if tv_c.nthreads() != nt || tv_c.nvalues() != text.acc || tv_c.shape != [16, c.bn] {
        return Err(fail(
            "the plan's c does not match the kernel's accumulators".into(),
        ));
    }
    let mut owner = vec![0u32; (16 * c.bn) as usize];
    for t in 0..nt {
        for x in 0..text.acc {
            let (r, col) = rc(tv_c, t, x);
            owner[(r + 16 * col) as usize] += 1;
        }
    }
    if owner.iter().any(|&n| n != 1) {
        return Err(fail(
            "the plan's c does not hold every cell exactly once".into(),
        ));
    }
    let mut ksum = vec![vec![0u64; text.acc as usize]; nt as usize];
    let mut loaded = vec![false; text.a_groups as usize];
    for line in &text.schedule {
        if let Some(g) = line
            .trim()
            .strip_prefix("LC_LDSM_A(")
            .and_then(|x| x.strip_suffix(");"))
            .and_then(|x| x.trim().parse::<i64>().ok())
        {
            if !(0..text.a_groups).contains(&g) || loaded[g as usize] {
                return Err(fail(format!(
                    "schedule line {line:?}: group out of range or loaded twice"
                )));
            }
            loaded[g as usize] = true;
            continue;
        }
        let [ci, ag, j, w0, b0, w1, b1] = parse_w4_mma(line)
            .ok_or_else(|| fail(format!("schedule line {line:?} is not read")))?;
        if ci < 0
            || ci + 3 >= text.acc
            || !(0..text.w_vectors).contains(&j)
            || [w0, w1].iter().any(|w| !(0..4).contains(w))
            || [b0, b1].iter().any(|b| !(0..4).contains(b))
        {
            return Err(fail(format!(
                "schedule line {line:?}: an index is out of range"
            )));
        }
        if !(0..text.a_groups).contains(&ag) || !loaded[ag as usize] {
            return Err(fail(format!(
                "schedule line {line:?} reads A group {ag} before loading it"
            )));
        }
        for w in 0..nt / 32 {
            let mut ao: Option<(i64, i64)> = None;
            let mut bo: Option<(i64, i64)> = None;
            let agree = |o: &mut Option<(i64, i64)>, d: (i64, i64), what: &str| {
                match o {
                None => {
                    *o = Some(d);
                    Ok(())
                }
                Some(x) if *x == d => Ok(()),
                Some(x) => Err(fail(format!(
                    "schedule line {line:?}, warp {w}: the {what} fragment is not one atom ({x:?}, {d:?})"
                ))),
            }
            };
            for l in 0..32 {
                let t = w * 32 + l;
                for p in 0..8 {
                    let got = frag_a[t as usize][(8 * ag + p) as usize];
                    let at = aa.eval(l, p)?;
                    agree(&mut ao, (got.0 - at[0], got.1 - at[1]), "A")?;
                }
                for (p, (wd, by)) in [(w0, b0), (w1, b1)].into_iter().enumerate() {
                    for h in 0..2 {
                        // The nibble lc_dq puts in half h of the register (w4a16_dequant.rs
                        // replays both on every byte and word).
                        let e = match c.dequant {
                            W4Dequant::Bytes => 2 * by + h,
                            W4Dequant::Pairs => by + 4 * h,
                        };
                        // ... and the plan's value that nibble holds
                        let x = 32 * j + 8 * wd + spec.packing.nibble_value(e);
                        let (gn, gk) = rc(tv_w, t, x);
                        // W at k is what the mma multiplies at its k-position mma_k(k) (an
                        // involution); A's side is the staged a_s, checked against mma_k above.
                        let got = (gn, mma_k(spec.packing, c.dequant, gk));
                        // the scale multiplied into this half: vector j's (validated above)
                        if tv_s.cell(t, x) != got.0 {
                            return Err(fail(format!(
                                "schedule line {line:?}: the scale is not row {}",
                                got.0
                            )));
                        }
                        let at = ab.eval(l, 2 * p as i64 + h)?;
                        agree(&mut bo, (got.0 - at[0], got.1 - at[1]), "B")?;
                        v.fragment_cells += 1;
                    }
                }
            }
            let (am, ak) = ao.unwrap_or((0, 0));
            let (bn, bk) = bo.unwrap_or((0, 0));
            if ak != bk || ak % 16 != 0 || !(0..128).contains(&ak) || am != 0 {
                return Err(fail(format!(
                    "schedule line {line:?}, warp {w}: A reads rows {am}+ k {ak}, B reads k {bk}"
                )));
            }
            for l in 0..32 {
                let t = w * 32 + l;
                for jj in 0..4 {
                    let at = atom.c_layout.eval(l, jj)?;
                    let want = (am + at[0], bn + at[1]);
                    if rc(tv_c, t, ci + jj) != want {
                        return Err(fail(format!(
                            "schedule line {line:?}: thread {t} accumulator {} is the plan's {:?}, \
                             the mma writes {want:?}",
                            ci + jj,
                            rc(tv_c, t, ci + jj)
                        )));
                    }
                    let bit = 1u64 << (ak / 16);
                    let s = &mut ksum[t as usize][(ci + jj) as usize];
                    if *s & bit != 0 {
                        return Err(fail(format!(
                            "schedule line {line:?}: a k-step is added twice"
                        )));
                    }
                    *s |= bit;
                    v.mma_products += 1;
                }
            }
        }
    }
    if ksum.iter().flatten().any(|&s| s != 0xFF) {
        return Err(fail(
            "an accumulator value misses a k-step of the superblock".into(),
        ));
    }
    v.accumulator_cells += (nt * text.acc) as u64;

    // Partial store: pairs of adjacent columns of the plan's c, rows < M.
    let (pr, pc) = (CExpr::parse(&text.c_row)?, CExpr::parse(&text.c_col)?);
    for t in 0..nt {
        for x in (0..text.acc).step_by(2) {
            let got = (
                eval2(&pr, ("t", t), ("v", x))?,
                eval2(&pc, ("t", t), ("v", x))?,
            );
            if got != rc(tv_c, t, x) || rc(tv_c, t, x + 1) != (got.0, got.1 + 1) || got.1 % 2 != 0 {
                return Err(fail(format!(
                    "partial store: thread {t} values {x}, {} go to {got:?}; the plan's c holds {:?}",
                    x + 1,
                    rc(tv_c, t, x)
                )));
            }
            v.accumulator_cells += 2;
        }
    }
    // Reduction: pairs cover the 16 x bn tile once; the C guard (rows < M) decides the store.
    let (rr, rcol) = (CExpr::parse(&text.r_row)?, CExpr::parse(&text.r_col)?);
    let mut cover = vec![false; (16 * c.bn) as usize];
    for t in 0..nt {
        for i in 0..text.r_iters {
            let (r, col) = (
                eval2(&rr, ("t", t), ("i", i))?,
                eval2(&rcol, ("t", t), ("i", i))?,
            );
            if !(0..16).contains(&r) || !(0..c.bn).contains(&col) || col % 2 != 0 {
                return Err(fail(format!(
                    "reduction pair {i} of thread {t} at ({r}, {col}) is outside the tile or odd"
                )));
            }
            for e in 0..2 {
                let x = &mut cover[(r * c.bn + col + e) as usize];
                if *x {
                    return Err(fail(format!("reduction covers ({r}, {}) twice", col + e)));
                }
                *x = true;
            }
            v.accumulator_cells += 2;
        }
    }
    if cover.iter().any(|&x| !x) {
        return Err(fail("the reduction misses a cell of the tile".into()));
    }
    if c.cluster_reduce() {
        // The cluster reduction: split p's CTA takes pairs i in
        // [p * LC_R_ITERS / LC_SPLITS, (p + 1) * LC_R_ITERS / LC_SPLITS) of every thread (so the
        // CTAs share the cover above), and reads cell (r, c) of every split's partial at
        // LC_P_OFF(r, c), which each CTA wrote from its own accumulators: the offset must be
        // one f32 slot per cell of the 16 x bn tile, inside the partial's 16 * bn slots, and
        // the pair (c, c + 1) adjacent (one 8-byte access).
        if text.r_iters % c.splits != 0 {
            return Err(fail(format!(
                "{} reduction pairs per thread do not divide among {} CTAs of a cluster",
                text.r_iters, c.splits
            )));
        }
        let po = CExpr::parse(&text.p_off)?;
        let mut slot = vec![false; (16 * c.bn) as usize];
        for r in 0..16 {
            for col in 0..c.bn {
                let o = eval2(&po, ("r", r), ("c", col))?;
                if !(0..16 * c.bn).contains(&o) || slot[o as usize] {
                    return Err(fail(format!(
                        "partial offset of ({r}, {col}) is {o}: outside the tile's {} slots or \
                         shared with another cell",
                        16 * c.bn
                    )));
                }
                slot[o as usize] = true;
                if col % 2 == 0 && (o % 2 != 0 || eval2(&po, ("r", r), ("c", col + 1))? != o + 1) {
                    return Err(fail(format!(
                        "partial offsets of ({r}, {col}) and ({r}, {}) are not one aligned pair",
                        col + 1
                    )));
                }
                v.smem_cells += 1;
            }
        }
    }
    for col in (0..spec.n).step_by(2) {
        if eval2(&gc, ("r", 0), ("c", col))? != eval2(&gc, ("r", 0), ("c", col + 1))? {
            return Err(fail(format!(
                "the C guard changes inside the pair at column {col}"
            )));
        }
    }
    if c.kgroup() {
        check_kgroup(spec, c, text, &sa, &mut v)?;
    }
    Ok(v)
}

fn eval1(e: &CExpr, name: &str, x: i64) -> Result<i64, CodegenError> {
    e.eval_with(&|n| (n == name).then_some(x))
}

/// The K-group CTA's own maps (everything else is the plan CTA's, validated above for the
/// plan's `bn` threads):
/// - the CTAs' threads are the plan's threads of every column tile and K-warp exactly once,
///   hardware lane = plan lane and one plan warp per hardware warp (so every ldmatrix and mma
///   line validated above is what a hardware warp executes), and a thread's plan thread
///   depends on its K-group thread only (the reduction reads partials by that index);
/// - the K-warps' K-ranges partition K into whole superblocks;
/// - A's ring: the first 16 M chunks (bytes) or 8 M chunk pairs (pairs: the plan's pair map,
///   validated with its interleave above) are exactly the rows < M, every chunk 16-byte
///   aligned and contiguous in a_s; chunks 0..256 are every chunk once (the zero fill of rows
///   >= M);
/// - the partial slots are distinct per (K-warp, value, group thread) and inside the shared
///   memory; the reduction pairs cover every (group thread, even value) once.
fn check_kgroup(
    spec: &W4a16Spec,
    c: &W4a16Config,
    text: &W4Text,
    sa: &SharedMap,
    v: &mut GemmValidation,
) -> Result<(), CodegenError> {
    let (tile_e, tc_e, kw_e) = (
        CExpr::parse(&text.kg_tile)?,
        CExpr::parse(&text.kg_tc)?,
        CExpr::parse(&text.kg_kw)?,
    );
    let (grid, nt, gt) = (c.grid(spec), c.threads(), c.group_threads());
    let tiles = spec.n / c.bn;
    let mut seen = vec![false; (tiles * c.bn * c.kwarps) as usize];
    for b in 0..grid {
        for t in 0..nt {
            let tile = eval1(&tile_e, "b", b)?;
            let tc = eval2(&tc_e, ("b", b), ("t", t))?;
            let w = eval1(&kw_e, "t", t)?;
            if !(0..tiles).contains(&tile)
                || !(0..c.bn).contains(&tc)
                || !(0..c.kwarps).contains(&w)
            {
                return Err(fail(format!(
                    "K-group CTA {b} thread {t}: tile {tile}, plan thread {tc}, K-warp {w} out of range"
                )));
            }
            if tc % 32 != t % 32 || tc / 32 != eval2(&tc_e, ("b", b), ("t", t - t % 32))? / 32 {
                return Err(fail(format!(
                    "K-group CTA {b} thread {t}: plan thread {tc} is not this lane of one plan warp"
                )));
            }
            if eval1(&kw_e, "t", t - t % 32)? != w {
                return Err(fail(format!(
                    "K-group CTA {b}: warp {} spans two K-warps",
                    t / 32
                )));
            }
            if tc != eval2(&tc_e, ("b", b), ("t", t % gt))? {
                return Err(fail(format!(
                    "K-group CTA {b} thread {t}: its plan thread is not that of group thread {}",
                    t % gt
                )));
            }
            let x = &mut seen[((tile * c.bn + tc) * c.kwarps + w) as usize];
            if *x {
                return Err(fail(format!(
                    "K-group CTAs: tile {tile}, plan thread {tc}, K-warp {w} twice"
                )));
            }
            *x = true;
            v.accumulator_cells += 1;
        }
    }
    if seen.iter().any(|&x| !x) {
        return Err(fail(
            "K-group CTAs miss a (tile, plan thread, K-warp)".into(),
        ));
    }
    let k0 = CExpr::parse(&text.kg_k0)?;
    let ks = c.ks(spec);
    for w in 0..c.kwarps {
        if eval1(&k0, "w", w)? != w * ks || ks % 128 != 0 {
            return Err(fail(format!(
                "K-warp {w} starts at k {}; the K-ranges of {ks} do not partition K = {} in superblocks",
                eval1(&k0, "w", w)?,
                spec.k
            )));
        }
        v.global_offsets += 1;
    }
    if ks * c.kwarps != spec.k {
        return Err(fail("the K-warps' ranges do not cover K".into()));
    }
    // A's ring chunks.
    let (ar, ak) = (CExpr::parse(&text.kg_a_row)?, CExpr::parse(&text.kg_a_k)?);
    let mut chunk = vec![false; 16 * 16];
    for ch in 0..256 {
        let (r, k) = (eval1(&ar, "c", ch)?, eval1(&ak, "c", ch)?);
        if !(0..16).contains(&r)
            || !(0..128).contains(&k)
            || k % 8 != 0
            || chunk[(r * 16 + k / 8) as usize]
        {
            return Err(fail(format!(
                "A ring chunk {ch} at ({r}, {k}): outside the superblock, unaligned or twice"
            )));
        }
        chunk[(r * 16 + k / 8) as usize] = true;
        if (ch < 16 * spec.m) != (r < spec.m) {
            return Err(fail(format!(
                "A ring chunk {ch} is row {r}: the first {} chunks must be the rows < M = {}",
                16 * spec.m,
                spec.m
            )));
        }
        let o = sa.offset(r, k)?;
        if o % 8 != 0 || (1..8).any(|e| sa.offset(r, k + e).ok() != Some(o + e)) {
            return Err(fail(format!(
                "A ring chunk ({r}, {k}) is not 16 contiguous, aligned bytes of a_s"
            )));
        }
        v.smem_cells += 8;
    }
    // In k order a group thread p stages its chunks p + i x (group threads) of superblock sb
    // from one pointer: A's offset of chunk p at K-warp w's first k, plus sb superblocks, plus
    // i LC_KG_A_ISTEP.
    if !a_kperm(spec.packing, c.dequant) {
        let ag = CExpr::parse(&text.a_goff)?;
        let k0e = CExpr::parse(&text.kg_k0)?;
        let off = |ch: i64, k: i64| -> Result<i64, CodegenError> {
            let (r, kc) = (eval1(&ar, "c", ch)?, eval1(&ak, "c", ch)?);
            eval2(&ag, ("r", r), ("k", k + kc))
        };
        for w in 0..c.kwarps {
            let kw = eval1(&k0e, "w", w)?;
            for p in 0..gt {
                let base = off(p, kw)?;
                for sb in 0..c.ks(spec) / 128 {
                    for i in 0..(16 * spec.m + gt - 1) / gt {
                        let ch = i * gt + p;
                        if ch >= 16 * spec.m {
                            continue;
                        }
                        let want = off(ch, kw + 128 * sb)?;
                        if base + 128 * sb + i * text.kg_a_istep != want {
                            return Err(fail(format!(
                                "K-warp {w} group thread {p}: A chunk {ch} of superblock {sb} is \
                                 at {want}, not the thread's pointer {base} + 128 x {sb} + \
                                 LC_KG_A_ISTEP {} x {i}",
                                text.kg_a_istep
                            )));
                        }
                        v.global_offsets += 1;
                    }
                }
            }
        }
    }
    if a_kperm(spec.packing, c.dequant) {
        let pr = CExpr::parse(&text.a_pr_row)?;
        for x in 0..A_PAIRS {
            if (x < 8 * spec.m) != (eval1(&pr, "x", x)? < spec.m) {
                return Err(fail(format!(
                    "A ring pair {x}: the first {} pairs must be the rows < M = {}",
                    8 * spec.m,
                    spec.m
                )));
            }
        }
    }
    // Partials and the reduction.
    let po = CExpr::parse(&text.kg_p_off)?;
    let slots = c.kwarps * text.acc * gt;
    if 4 * slots + 1024 > smem_bytes(spec, c) {
        return Err(fail(format!(
            "{slots} f32 partials do not fit the CTA's {} bytes of shared memory",
            smem_bytes(spec, c)
        )));
    }
    let mut slot = vec![false; slots as usize];
    for w in 0..c.kwarps {
        for x in 0..text.acc {
            for p in 0..gt {
                let o = po.eval_with(&|n| match n {
                    "w" => Some(w),
                    "v" => Some(x),
                    "p" => Some(p),
                    _ => None,
                })?;
                if !(0..slots).contains(&o) || slot[o as usize] {
                    return Err(fail(format!(
                        "partial slot of K-warp {w}, value {x}, group thread {p} is {o}: outside \
                         the {slots} slots or shared"
                    )));
                }
                slot[o as usize] = true;
                v.smem_cells += 1;
            }
        }
    }
    let (rp, rv) = (CExpr::parse(&text.kg_r_p)?, CExpr::parse(&text.kg_r_v)?);
    let mut pair = vec![false; (gt * text.acc) as usize];
    for x in 0..gt * text.acc / 2 {
        let (p, val) = (eval1(&rp, "x", x)?, eval1(&rv, "x", x)?);
        if !(0..gt).contains(&p)
            || !(0..text.acc).contains(&val)
            || val % 2 != 0
            || pair[(p * text.acc + val) as usize]
        {
            return Err(fail(format!(
                "reduction pair {x}: group thread {p}, value {val} outside, odd or twice"
            )));
        }
        pair[(p * text.acc + val) as usize] = true;
        v.accumulator_cells += 2;
    }
    Ok(())
}

fn defines(k: &mut String, list: &[(&str, i64)]) {
    for (name, v) in list {
        let _ = writeln!(k, "#define {name} {v}");
    }
}

fn print_text(spec: &W4a16Spec, c: &W4a16Config, t: &W4Text) -> String {
    let mut k = String::new();
    let tiles = spec.n / c.bn;
    defines(
        &mut k,
        &[
            ("LC_M", spec.m),
            ("LC_N", spec.n),
            ("LC_K", spec.k),
            ("LC_GROUP", spec.group),
            ("LC_BN", c.bn),
            ("LC_SPLITS", c.splits),
            ("LC_W_DEPTH", c.depth),
            ("LC_MIN_CTAS", c.min_ctas(spec)),
            ("LC_KS", c.ks(spec)),
            ("LC_SB", c.ks(spec) / 128),
            ("LC_TILES_N", tiles),
            ("LC_GRID", c.grid(spec)),
            ("LC_THREADS", c.threads()),
            ("LC_A_SB_BYTES", 16 * 128 * 2),
            ("LC_SMEM_BYTES", smem_bytes(spec, c)),
            ("LC_A_GROUPS", t.a_groups),
            ("LC_WV", t.w_vectors),
            ("LC_ACC", t.acc),
            ("LC_A_CHUNKS", t.a_chunks),
            ("LC_R_ITERS", t.r_iters),
            ("LC_W_SB_WORDS", t.w_sb_words),
            ("LC_W_VSTEP", t.w_vstep),
            ("LC_S_VSTEP", t.s_vstep),
            ("LC_CLUSTER_REDUCE", c.cluster_reduce() as i64),
            ("LC_DQ_PAIRS", (c.dequant == W4Dequant::Pairs) as i64),
            ("LC_A_KPERM", a_kperm(spec.packing, c.dequant) as i64),
            ("LC_W_PACK", spec.packing.code()),
            ("LC_A_PAIRS", A_PAIRS),
            ("LC_KGROUP", c.kgroup() as i64),
        ],
    );
    if c.kgroup() {
        defines(
            &mut k,
            &[
                ("LC_CWARPS", c.cwarps),
                ("LC_KWARPS", c.kwarps),
                ("LC_GROUP_THREADS", c.group_threads()),
                ("LC_A_SLOTS", c.aslots),
                ("LC_KG_A_ISTEP", t.kg_a_istep),
            ],
        );
        let _ = writeln!(
            k,
            "// K-group CTA b, thread t: the column tile, the plan's thread, the K-warp; K-warp w's\n\
             // first k; chunk c of an A superblock; the f32 partial slot of (K-warp w, value v,\n\
             // group thread p); reduction pair x (group thread, even value).\n\
             #define LC_KG_TILE(b) ({})\n#define LC_KG_TC(b, t) ({})\n#define LC_KG_KW(t) ({})\n\
             #define LC_KG_K0(w) ({})\n#define LC_KG_A_ROW(c) ({})\n#define LC_KG_A_K(c) ({})\n\
             #define LC_KG_P_OFF(w, v, p) ({})\n#define LC_KG_R_P(x) ({})\n#define LC_KG_R_V(x) ({})",
            t.kg_tile, t.kg_tc, t.kg_kw, t.kg_k0, t.kg_a_row, t.kg_a_k, t.kg_p_off, t.kg_r_p, t.kg_r_v
        );
    }
    let staging = match a_kperm(spec.packing, c.dequant) {
        false => format!(
            "// cp.async chunk j of one A superblock [16, 128] (coalesced copy layout) and a_s.\n\
             #define LC_A_CP_ROW(t, j) ({})\n#define LC_A_CP_K(t, j) ({})",
            t.a_cp_row, t.a_cp_k
        ),
        true => format!(
            "// Chunk pair x of one A superblock [16, 128]: A's 16-byte chunks at (row, k) and\n\
             // (row, k + 16), stored interleaved at a_s (row, k) and (row, k + 16): the mma's k order.\n\
             #define LC_A_PR_ROW(x) ({})\n#define LC_A_PR_K(x) ({})",
            t.a_pr_row, t.a_pr_k
        ),
    };
    let _ = writeln!(
        k,
        "{}\n\
         #define LC_A_SLIN(r, k) ({})\n\
         __device__ __forceinline__ int lc_swz_a(int o) {{ return {}; }}\n\
         // ldmatrix.x4 group g (the plan's a values 8g..8g+7): the row this lane addresses.\n\
         #define LC_A_LDSM_ROW(t, g) ({})\n#define LC_A_LDSM_K(t, g) ({})\n\
         // W vector j (the plan's w values 32j..32j+31): its first nibble's tile row and k.\n\
         #define LC_W_ROW(t, j) ({})\n#define LC_W_K(t, j) ({})\n\
         // Nibble offset of (n, k) in the packed W.\n\
         #define LC_W_GOFF(n, k) ({})\n\
         // The scale of vector j: tile row, and the offset of (n, group g) in the scales.\n\
         #define LC_S_N(t, j) ({})\n#define LC_S_GOFF(n, g) ({})\n\
         // Accumulator value v of thread t (the plan's c).\n\
         #define LC_C_ROW(t, v) ({})\n#define LC_C_COL(t, v) ({})\n\
         // Reduction pair i of thread t.\n\
         #define LC_R_ROW(t, i) ({})\n#define LC_R_COL(t, i) ({})\n\
         // Global offsets and bounds.\n\
         #define LC_A_GOFF(r, k) ({})\n#define LC_C_GOFF(r, c) ({})\n#define LC_WS_OFF(p, r, c) ({})\n\
         // f32 slot of cell (r, c) in a split's partial tile in shared memory (cluster reduction).\n\
         #define LC_P_OFF(r, c) ({})\n\
         #define LC_A_GUARD(r, k) ({})\n#define LC_C_GUARD(r, c) ({})",
        staging,
        t.a_slin,
        t.a_swz,
        t.a_ldsm_row,
        t.a_ldsm_k,
        t.w_row,
        t.w_k,
        t.w_goff,
        t.s_n,
        t.s_goff,
        t.c_row,
        t.c_col,
        t.r_row,
        t.r_col,
        t.a_goff,
        t.c_goff,
        t.ws_off,
        t.p_off,
        t.a_guard,
        t.c_guard,
    );
    let _ = writeln!(
        k,
        "__device__ __forceinline__ void lc_mma(float& d0, float& d1, float& d2, float& d3, unsigned a0,\n\
         \x20                                      unsigned a1, unsigned a2, unsigned a3, unsigned b0, unsigned b1) {{\n\
         \x20   asm volatile(\"{} {{%0, %1, %2, %3}}, {{%4, %5, %6, %7}}, {{%8, %9}}, {{%0, %1, %2, %3}};\"\n\
         \x20                : \"+f\"(d0), \"+f\"(d1), \"+f\"(d2), \"+f\"(d3)\n\
         \x20                : \"r\"(a0), \"r\"(a1), \"r\"(a2), \"r\"(a3), \"r\"(b0), \"r\"(b1));\n\
         }}",
        t.mma_instr
    );
    let piece = match c.dequant {
        W4Dequant::Bytes => "byte x of word w",
        W4Dequant::Pairs => "nibbles (x, x + 4) of word w",
    };
    let _ = writeln!(
        k,
        "// One superblock (LC_W4_MMA(ci, g, j, w0, x0, w1, x1): acc[ci..ci+3] += A group g x\n\
         // (dequant(piece x0 of word w0), dequant(piece x1 of word w1)) of W vector j; a piece\n\
         // is {piece}).\n\
         #define LC_W4_SCHEDULE \\"
    );
    for line in &t.schedule {
        let _ = writeln!(k, "    {line} \\");
    }
    let _ = writeln!(k, "    /* end of LC_W4_SCHEDULE */");
    k
}

const HOST: &str = r#"
#ifdef LAYCERT_HOST_LAUNCHER
// Host launcher for nvcc builds. With LC_CLUSTER_REDUCE the kernel's clusters (compiled in)
// and with LC_KGROUP the K-group CTAs need nothing else; otherwise the f32 split-K workspace and the per-tile counters are
// allocated once (counters zeroed once; the last CTA of a tile resets its counter), so
// launches on one stream may follow each other; concurrent launches must not share them.
#include <cuda_runtime.h>
static int lc_ready = 0;
static float* lc_ws = 0;
static unsigned* lc_counters = 0;
extern "C" int laycert_w4a16_launch(const void* A, const void* W, const void* S, void* C,
                                    void* stream) {
    if (!lc_ready) {
#if !LC_CLUSTER_REDUCE && !LC_KGROUP
        if (cudaMalloc((void**)&lc_ws, sizeof(float) * (size_t)LC_SPLITS * LC_M * LC_N)) return 3001;
        if (cudaMalloc((void**)&lc_counters, sizeof(unsigned) * LC_TILES_N)) return 3002;
        if (cudaMemset(lc_counters, 0, sizeof(unsigned) * LC_TILES_N)) return 3003;
#endif
        if (cudaFuncSetAttribute(laycert_w4a16, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 LC_SMEM_BYTES)) return 3004;
        lc_ready = 1;
    }
    laycert_w4a16<<<LC_GRID, LC_THREADS, LC_SMEM_BYTES, (cudaStream_t)stream>>>(
        (const lc_elem*)A, (const unsigned*)W, (const lc_elem*)S, (lc_elem*)C, lc_ws, lc_counters);
    return (int)cudaGetLastError();
}
extern "C" int laycert_w4a16_grid() { return LC_GRID; }
#endif
"#;

/// The parts of [`smem_bytes`], for the header.
fn smem_what(spec: &W4a16Spec, c: &W4a16Config) -> String {
    let a = allocation(spec, c);
    let ring = a.phases[0][0].copies;
    let partials = if c.kgroup() {
        format!(
            "{} K-warps' f32 partials of {} columns reuse them",
            c.kwarps,
            c.group_threads()
        )
    } else if c.cluster_reduce() {
        "the f32 partial tile reuses them".to_string()
    } else {
        "no partials (the workspace reduction)".to_string()
    };
    format!("{ring} superblocks of A, 4096 bytes each; {partials}; 1024 bytes of alignment slack")
}

/// Emits the W4A16 kernel with the default configuration.
pub fn emit_w4a16(spec: &W4a16Spec) -> Result<W4a16Kernel, CodegenError> {
    let c = choose(spec)?;
    emit_w4a16_with(spec, &c)
}

/// Emits the W4A16 kernel with a given configuration (checked).
pub fn emit_w4a16_with(spec: &W4a16Spec, c: &W4a16Config) -> Result<W4a16Kernel, CodegenError> {
    check_config(spec, c)?;
    let plan = plan_for(spec, c)?;
    check_capacity_claim(&plan, smem_bytes(spec, c), spec.smem_budget())?;
    let text = emitted_text(spec, c, &plan)?;
    let validation = validate_w4a16(spec, c, &plan, &text)?;
    let grid = c.grid(spec);
    let mut k = header(
        &format!(
            "// laycert gemm (W4A16, sm80 instructions): C[{m},{n}] = A[{m},{k}] * dequant(W)[{n},{k}]^T, \
             f16 operands, int4 weights, f32 accumulation, f16 C.",
            m = spec.m,
            n = spec.n,
            k = spec.k
        ),
        &plan,
        &[
            format!(
                "dequant(W)[n,k] = q[n,k] * scale[n, k / {}] (q signed int4, scale f16 row-major \
                 ({}, {})); W packed in nibbles as {} (nibble i of a 32-bit word = bits 4i..4i+3; {}).",
                spec.group,
                spec.n,
                spec.k / spec.group,
                packed_layout(spec.packing, spec.n, spec.k),
                match spec.packing {
                    W4Packing::Interleaved => "TensorRT-LLM's interleave: a word's nibbles 0..7 hold \
                                               k' + 0, 8, 16, 24, 1, 9, 17, 25; LC_W_PACK 1",
                    W4Packing::Sequential => "a word's nibbles 0..7 hold k' + 0, 1, 8, 9, 16, 17, \
                                              24, 25; LC_W_PACK 0",
                }
            ),
            if c.kgroup() {
                format!(
                    "CTA: {} column warps x {} K-warps ({} columns, all of K, {} k per K-warp; A \
                     through a ring of {} superblocks per K-group; the K-warps' partials summed \
                     in shared memory, in order), {} CTAs.",
                    c.cwarps,
                    c.kwarps,
                    c.group_threads(),
                    c.ks(spec),
                    c.aslots,
                    grid
                )
            } else {
                format!(
                    "CTA: {} warps, {} columns, K-range {} ({} splits, deterministic reduction), {} CTAs.",
                    c.threads() / 32,
                    c.bn,
                    c.ks(spec),
                    c.splits,
                    grid
                )
            },
            match (c.dequant, a_kperm(spec.packing, c.dequant)) {
                (W4Dequant::Bytes, _) => "Dequantization by bytes: a B register is nibbles (2b, 2b + 1) \
                                     of a word; the mma runs over k in order."
                    .to_string(),
                (W4Dequant::Pairs, false) => "Dequantization by nibble pairs: a B register is \
                                              nibbles (i, i + 4) of a word (k and k + 1 in the \
                                              interleaved packing); the mma runs over k in order."
                    .to_string(),
                (W4Dequant::Pairs, true) => "Dequantization by nibble pairs: a B register is nibbles \
                                     (i, i + 4) of a word (k and k + 16); the mma runs over k \
                                     with bits 0 and 4 swapped inside each 32 (the sum over k is \
                                     the same): A's chunks at k and k + 16 are copied by one \
                                     thread (the plan's cp.async) and interleaved in place \
                                     (ld.shared, prmt, st.shared) into that order."
                    .to_string(),
            },
            smem_line(
                smem_bytes(spec, c),
                &smem_what(spec, c),
                "sm80",
                spec.smem_budget(),
                SM80_SMEM_LIMIT,
            ),
        ],
        &format!(
            "Translation validation: {} accumulator cells, {} operand fragment cells, {} mma \
             k-steps, {} global offsets, {} guard points, {} shared-memory cells.",
            validation.accumulator_cells,
            validation.fragment_cells,
            validation.mma_products,
            validation.global_offsets,
            validation.guard_points,
            validation.smem_cells
        ),
    );
    let _ = writeln!(k, "\ntypedef unsigned short lc_elem;  // f16 bits");
    // Every index macro's parameters parenthesized (checked: the same expressions).
    k += &crate::c_expr::hygienic_defines(&print_text(spec, c, &text))?;
    k += "\n";
    k += super::PTX_SM80;
    k += BODY;
    k += HOST;
    let (source, cert) = super::bind_kernel(
        &plan.certificate,
        "w4a16",
        [spec.m, spec.n, spec.k],
        Some(spec.group),
        serde_json::json!({"kernel": "w4a16", "spec": spec, "config": c}),
        &k,
    )?;
    Ok(W4a16Kernel {
        spec: *spec,
        config: *c,
        source,
        entry: "laycert_w4a16",
        digest: cert.digest.clone(),
        plan_summary: plan_summary(&plan),
        grid,
        smem_bytes: smem_bytes(spec, c),
        validation,
        certificate_json: cert.to_json(),
    })
}
