//! `laycert`: the command line. Argument parsing and dispatch only; every computation lives in the
//! library crates and the rendering in [`cli`].
//!
//! Output contract: the answer is stdout's first line (`--json`: one JSON object instead); exit 0
//! on success, 1 when `verify` finds a failing check, 2 on bad input (the message on stderr, parse
//! errors with a caret under the offending text), 101 on an internal error (never a backtrace).

mod cli;
mod report;

use std::io::Write;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// laycert: a verification-first tensor-layout solver and prover.
#[derive(Parser)]
#[command(name = "laycert", version, about, long_about = None)]
struct Args {
    /// Print one JSON object instead of text.
    #[arg(long, global = true)]
    json: bool,
    /// A TTGIR file whose `#name = ...` aliases layout arguments may use (`#blocked`).
    #[arg(long, global = true)]
    mlir: Option<String>,
    /// Axis correspondence applied to every layout argument, `from=to,...` (e.g.
    /// `lane_id=laneid,tid=tx`): the names on the left are the user's own axes (a name that
    /// looks like a misspelled registry axis, `@laneId`, is accepted once declared here); the
    /// registry's aliases apply as well.
    #[arg(long, global = true)]
    axes: Option<String>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Show a layout: its printed form, notation, domain, span per axis and facts.
    Show {
        /// The layout, in any notation (Axe `S[..]`, CuTe `(4,2):(2,1)`, `Sw<..> o ..`, TV
        /// `.. -> (16,8)`, Triton `#ttg.*` attributes, `LinearLayout::toString()` text).
        #[arg(allow_hyphen_values = true)]
        layout: String,
        /// Logical shape, e.g. `8,16` (default: the layout's own; Triton attributes need one).
        #[arg(long)]
        shape: Option<String>,
    },
    /// Evaluate a layout at one coordinate; prints the set of points it maps to.
    Eval {
        /// The layout, in any notation.
        #[arg(allow_hyphen_values = true)]
        layout: String,
        /// Logical shape, e.g. `8,16` (default: the layout's own).
        #[arg(long)]
        shape: Option<String>,
        /// Coordinate, e.g. `2,9`; linear layouts also take in-dim names: `register=1,lane=9`.
        #[arg(long, allow_hyphen_values = true)]
        coord: String,
        /// Print every point (at most 16384) instead of `N points, first 16: ...`.
        #[arg(long)]
        full: bool,
    },
    /// Convert a layout to another formalism, exactly, or say why it has no exact form there.
    Convert {
        /// The layout, in any notation.
        #[arg(allow_hyphen_values = true)]
        layout: String,
        /// Target formalism: `axe`, `cute` or `linear`.
        #[arg(long)]
        to: String,
        /// Logical shape, e.g. `8,16` (default: the layout's own).
        #[arg(long)]
        shape: Option<String>,
    },
    /// Decide whether two layouts (any notations) are equivalent as relations between logical
    /// coordinates and physical points; prints the evidence or a counterexample.
    /// Exit 0 equivalent, 1 not equivalent, 3 unknown, 2 bad input.
    Equiv {
        /// Left layout.
        #[arg(allow_hyphen_values = true)]
        a: String,
        /// Right layout.
        #[arg(allow_hyphen_values = true)]
        b: String,
        /// Logical shape (and the tensor shape of Triton attributes), e.g. `16,8`.
        #[arg(long)]
        shape: Option<String>,
        /// Write the certificate (versioned JSON) here.
        #[arg(long)]
        cert: Option<String>,
    },
    /// Decide a property of one layout: injective, surjective (onto its image's bounding box)
    /// or bijective. Exit 0 proved, 1 refuted, 3 unknown, 2 bad input.
    ProveProperty {
        /// `injective`, `surjective` or `bijective`.
        property: String,
        /// The layout, in any notation.
        #[arg(allow_hyphen_values = true)]
        layout: String,
        /// Logical shape (and the tensor shape of Triton attributes), e.g. `16,8`.
        #[arg(long)]
        shape: Option<String>,
    },
    /// Re-verify a certificate from scratch: `valid` (exit 0) or `invalid: why` (exit 1).
    Check {
        /// The certificate file.
        cert: String,
        /// A kernel file to bind to a kernel's certificate (`gen gemm --cert`): valid only when
        /// the file is, byte for byte, the kernel emitted with it (it names the certificate's
        /// digest, defines its constants, and hashes to its text hash)
        #[arg(long, value_name = "KERNEL")]
        kernel: Option<String>,
    },
    /// Axe: the canonical form (D0/D1, C0-C2, sorted R) and the gap condition per axis.
    Canon {
        /// An Axe layout.
        layout: String,
        /// Fuse axes by this registry target's relations (e.g. `cuda`: tx = laneid + 32*warpid).
        #[arg(long)]
        target: Option<String>,
    },
    /// Axe: group by a shape, or by several at once (their common refinement).
    Group {
        /// An Axe layout.
        layout: String,
        /// A shape, e.g. `6,5`; repeat for several.
        #[arg(long = "shape", required = true)]
        shapes: Vec<String>,
    },
    /// Axe: the Kronecker tile of an inner layout by an outer one.
    Tile {
        /// Inner layout (the atom).
        inner: String,
        /// Outer layout.
        outer: String,
        /// Inner logical shape.
        #[arg(long)]
        inner_shape: String,
        /// Outer logical shape.
        #[arg(long)]
        outer_shape: String,
    },
    /// Axe: is L a tile of this inner atom (recover the outer) or of this outer (recover the inner)?
    TileOf {
        /// The tiled layout.
        layout: String,
        /// Its logical shape.
        #[arg(long)]
        shape: String,
        /// The inner atom.
        #[arg(long, requires = "inner_shape", conflicts_with = "outer")]
        inner: Option<String>,
        /// The inner atom's shape.
        #[arg(long)]
        inner_shape: Option<String>,
        /// The outer layout.
        #[arg(long, requires = "outer_shape")]
        outer: Option<String>,
        /// The outer layout's shape.
        #[arg(long)]
        outer_shape: Option<String>,
    },
    /// Axe: the layout of a rectangular region, e.g. `--region 2:3,6:10` (half-open). Exit 1
    /// when no layout has the region's map, 3 (unknown) when undecided within the limits.
    Slice {
        /// An Axe layout.
        layout: String,
        /// Its logical shape.
        #[arg(long)]
        shape: String,
        /// `begin:end` per dimension.
        #[arg(long)]
        region: String,
    },
    /// Axe: the direct sum of two layouts over interleaved domains (no span scaling).
    DirectSum {
        /// First layout.
        a: String,
        /// Second layout.
        b: String,
        /// Their shapes, `A_SHAPE/B_SHAPE`, e.g. `2,2/2,2`.
        #[arg(long)]
        shapes: String,
    },
    /// CuTe algebra, printed as pycute prints: coalesce, compose, complement, divide, product
    /// (the tiler may be a tuple, `(2:1, 3:2)`), left-inverse, right-inverse, nullspace, recast.
    Cute {
        /// The operation.
        op: String,
        /// Its operands (layouts in CuTe notation, integers, variant names).
        #[arg(allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// The main job: run every check of the corpus (embedded, or the directory / file PATH) and
    /// compare each verdict with the expected one; a summary table at the end. Exit 1 when any
    /// verdict differs.
    Verify {
        /// A corpus directory (every `*.toml` below it) or one corpus file instead of the
        /// embedded corpus (a file's `atom:` references may name embedded atoms).
        path: Option<String>,
        /// Also write an HTML report with pictures into this directory.
        #[arg(long)]
        report: Option<String>,
        /// List every check, not only the failing ones.
        #[arg(long, short)]
        verbose: bool,
    },
    /// Draw a layout as SVG: TV / Triton / Axe thread layouts as a grid of `T V` cells coloured
    /// by thread (like CuTe's print_latex), memory layouts as offset grids, and with `--banks` a
    /// shared-memory bank map with conflicts marked.
    Draw {
        /// The layout, in any notation.
        #[arg(allow_hyphen_values = true)]
        layout: String,
        /// Logical shape (and the tensor shape of Triton attributes), e.g. `16,8`.
        #[arg(long)]
        shape: Option<String>,
        /// Element size in bytes: colour cells by 4-byte bank and mark bank conflicts.
        #[arg(long)]
        banks: Option<i64>,
        /// Which cells one 128-byte access reads together: `row` or `col` (with `--banks`).
        #[arg(long, default_value = "row", requires = "banks")]
        access: String,
        /// The SVG file to write.
        #[arg(short, long)]
        output: String,
    },
    /// F2 linear-layout algebra: `compose A B` (A ∘ B), `invert-and-compose A B` (B^-1 ∘ A).
    Linear {
        /// The operation.
        #[command(subcommand)]
        op: cli::linear::LinearCommand,
    },
    /// Shared-memory bank conflicts of a distributed layout against a memory layout: the
    /// simulator over every instruction of a warp, and lemma 9.4 for F2 memory layouts.
    BankConflicts {
        /// The distributed layout (register/lane/warp -> logical), any linear spelling.
        #[arg(long)]
        regs: String,
        /// The memory layout: linear (offset -> logical: `#ttg.linear`, or a Triton shared
        /// attribute `#ttg.swizzled_shared` / `#ttg.nvmma_shared` on `--shape`), CuTe or
        /// `Sw<B,M,S> o` CuTe (logical -> offset, evaluated pointwise; `#ttg.padded_shared`
        /// reads as CuTe).
        #[arg(long)]
        smem: String,
        /// Element type: f16, bf16, f32, i8, f8, f64, ...
        #[arg(long)]
        dtype: String,
        /// Elements per vector: a power of two, at most 16 bytes in all (default: the widest
        /// contiguous one).
        #[arg(long)]
        vec: Option<u32>,
        /// Tensor shape for Triton attributes (`--regs` and `--smem`), e.g. `128,128`.
        #[arg(long)]
        shape: Option<String>,
    },
    /// The optimal swizzled shared-memory layout for writing with one distributed layout and
    /// reading with another (Linear Layouts section 5.4), its predicted wavefronts (checked by
    /// the simulator), and its CuTe / Triton form when it has one.
    Swizzle {
        /// The layout that writes shared memory.
        #[arg(long)]
        write: String,
        /// The layout that reads it.
        #[arg(long)]
        read: String,
        /// Element type: f16, bf16, f32, i8, f8, f64, ...
        #[arg(long)]
        dtype: String,
        /// Tensor shape for Triton attributes, e.g. `128,128`.
        #[arg(long)]
        shape: Option<String>,
    },
    /// The warp-shuffle plan converting distributed layout A into B, executed on symbolic data
    /// before it is printed; an error when the conversion needs shared memory.
    Shuffle {
        /// The source layout.
        a: String,
        /// The target layout.
        b: String,
        /// Element type (sets how many elements one 32-bit shuffle moves).
        #[arg(long, default_value = "f32")]
        dtype: String,
        /// Tensor shape for Triton attributes, e.g. `128,128`.
        #[arg(long)]
        shape: Option<String>,
    },
    /// Prove rewrite rules (rule files) for every parameter assignment within their bounds:
    /// one line per rule, PROVED / REFUTED (with a counterexample) / UNKNOWN (why).
    /// Exit 0 all proved, 1 some REFUTED, 3 some UNKNOWN (0 with --allow-unknown), 2 bad input
    /// (a rule that does not parse or type-check; --max-instances above 2^24).
    Prove {
        /// Rule files (`corpus/rules/*.rules`).
        #[arg(required = true)]
        files: Vec<String>,
        /// Write JUnit XML here.
        #[arg(long)]
        junit: Option<String>,
        /// Write one certificate per rule into this directory.
        #[arg(long)]
        cert_dir: Option<String>,
        /// Exit 0, not 3, when a rule is UNKNOWN (JUnit then marks it skipped, not failed).
        #[arg(long)]
        allow_unknown: bool,
        /// Accepted for compatibility: UNKNOWN fails by default now (exit 3).
        #[arg(long, hide = true)]
        strict: bool,
        /// Largest parameter grid enumerated exhaustively (default 200000, at most 2^24).
        #[arg(long)]
        max_instances: Option<u64>,
    },
    /// Validate concrete rewrites a compiler logged: JSON lines
    /// `{"before": L, "after": L, "relation": "equal"}`; same outputs and exit codes as prove.
    Validate {
        /// The JSON-lines file.
        pairs: String,
        /// Write JUnit XML here.
        #[arg(long)]
        junit: Option<String>,
        /// Write one certificate per pair into this directory.
        #[arg(long)]
        cert_dir: Option<String>,
        /// Exit 0, not 3, when a pair is UNKNOWN.
        #[arg(long)]
        allow_unknown: bool,
        /// Accepted for compatibility: UNKNOWN fails by default now (exit 3).
        #[arg(long, hide = true)]
        strict: bool,
    },
    /// Simplify a layout expression with the e-graph (only PROVED rules; concrete subterms
    /// folded): prints the cheapest equivalent form (cost: number of modes).
    Simplify {
        /// An expression, e.g. `coalesce(compose((4,8):(1,4), (2,4):(1,2)))`.
        expr: String,
        /// Rule files (default: the corpus rules compiled in).
        #[arg(long = "rules")]
        rules: Vec<String>,
        /// Write the explanation certificate here.
        #[arg(long)]
        cert: Option<String>,
    },
    /// Prove two layout expressions equal by saturation, or else decide their folded values
    /// with certify's deciders (as `equiv` does). Exit 0 equal, 1 not equal (with a
    /// counterexample the semantics confirm), 3 unknown.
    EquivExpr {
        /// Left expression.
        a: String,
        /// Right expression.
        b: String,
        /// Rule files (default: the corpus rules compiled in).
        #[arg(long = "rules")]
        rules: Vec<String>,
        /// Write the explanation certificate here.
        #[arg(long)]
        cert: Option<String>,
        /// The claim's logical domain (default: the one both values resolve to; spec
        /// certify.md 1b). Every step is decided over it.
        #[arg(long)]
        shape: Option<String>,
    },
    /// List the atoms of the embedded corpus (each usable as `atom:NAME` wherever a command
    /// takes a layout): name, shape, layout and source. FILTER keeps names containing it.
    Atoms {
        /// Keep the atoms whose name contains this text (case-insensitive).
        filter: Option<String>,
    },
    /// Decomposition search: is the layout `tile(atom, C)` (or `Sw o tile(atom, C)`) for an atom
    /// of the embedded corpus? The cheapest proved tiling first; exit 1 when none.
    Decompose {
        /// The layout, in any notation.
        #[arg(allow_hyphen_values = true)]
        layout: String,
        /// Its logical shape, e.g. `32,16`.
        #[arg(long)]
        shape: String,
    },
    /// Generate kernels: `gen copy` plans, certifies and emits a layout-to-layout copy.
    Gen {
        #[command(subcommand)]
        what: GenCommand,
    },
    /// Synthesize the thread-value and shared-memory layouts of a tile program and certify
    /// the plan. Exit 0 synthesized, 1 infeasible (proved; the constraint and tensors named),
    /// 2 bad input, 3 unknown (no plan found, but the search did not cover every plan).
    Synth {
        /// The tile program (text form, one operation per line).
        program: String,
        /// Target: `sm80` or `sm90`.
        #[arg(long, default_value = "sm80")]
        target: String,
        /// Write the plan certificate (`laycert check` re-decides it) here.
        #[arg(long)]
        cert: Option<String>,
        /// Draw every register and shared layout as SVG into this directory.
        #[arg(long)]
        draw: Option<String>,
    },
    /// Distributed layouts over device meshes: plan, check, simulate and generate
    /// redistributions (DTensor placements, JAX PartitionSpecs, HLO sharding text).
    Dist(cli::dist::DistArgs),
    /// Run generated kernels on the GPU: `gpu bench` checks and times a copy kernel, `gpu bench
    /// gemm` a GEMM against cuBLAS.
    Gpu {
        #[command(subcommand)]
        what: GpuCommand,
    },
    /// Trainium: `nki run` runs a kernel on the reference interpreter against NumPy; `nki
    /// dispatch` plans a TensorE matmul from Axe layouts.
    Nki {
        #[command(subcommand)]
        what: cli::nki::NkiCommand,
    },
}

/// The copy kernel's inputs.
#[derive(clap::Args)]
struct CopySpec {
    /// Source global layout (CuTe `shape:stride`, tiled CuTe, or Axe over `m`).
    #[arg(long)]
    src: String,
    /// Destination global layout of the same logical tensor.
    #[arg(long)]
    dst: String,
    /// Logical tensor shape (2-D or 3-D), e.g. `8192,8192`.
    #[arg(long)]
    shape: String,
    /// Element type: f32, f16, bf16, f8 or i8.
    #[arg(long)]
    dtype: String,
    /// Force the unswizzled shared-memory layout (the bank-conflict baseline).
    #[arg(long)]
    no_swizzle: bool,
    /// Bytes of the CTA tile along each axis.
    #[arg(long, default_value_t = 256)]
    tile_bytes: i64,
    /// Threads per CTA (a power of two, 32..=1024; default 256, or 512 where odd pitches
    /// narrow the global accesses below 16 bytes).
    #[arg(long)]
    threads: Option<i64>,
    /// Most elements per global access (a power of two of at most 16 bytes; default: as wide
    /// as the layouts allow). `--vector 1 --no-swizzle` is the scalar bank-conflict baseline.
    #[arg(long)]
    vector: Option<i64>,
    /// The CTA tile in elements along its first and second axes, e.g. `32,256` (powers of two;
    /// overrides --tile-bytes).
    #[arg(long)]
    tile: Option<String>,
    /// Launch order: consecutive CTAs walk the load axis (`blockIdx.x` is the tile index along
    /// the source's fast dimension; the default walks the store axis).
    #[arg(long)]
    load_major: bool,
}

impl CopySpec {
    fn args(&self) -> cli::gen::CopyArgs<'_> {
        cli::gen::CopyArgs {
            src: &self.src,
            dst: &self.dst,
            shape: &self.shape,
            dtype: &self.dtype,
            no_swizzle: self.no_swizzle,
            tile_bytes: self.tile_bytes,
            threads: self.threads,
            vector: self.vector,
            tile: self.tile.as_deref(),
            load_major: self.load_major,
        }
    }
}

#[derive(Subcommand)]
enum GenCommand {
    /// A layout-to-layout copy through a swizzled shared-memory tile (CUDA C++ to stdout or -o).
    Copy {
        #[command(flatten)]
        spec: CopySpec,
        /// Write the kernel here instead of stdout.
        #[arg(short = 'o', long = "out")]
        out: Option<String>,
        /// Write certify's data-movement certificate here (`laycert check` re-decides it).
        #[arg(long)]
        cert: Option<String>,
    },
    /// NKI kernels for AWS Trainium: `gen nki gemm|softmax|mha`.
    Nki {
        #[command(subcommand)]
        what: cli::nki::NkiGen,
    },
    /// A GEMM `C = A B^T` (A, B, C row-major, f32 accumulation) from a synthesized, certified
    /// plan, its index expressions validated (CUDA C++ to stdout or -o).
    Gemm {
        #[command(flatten)]
        spec: GemmCli,
        /// Write the kernel here instead of stdout.
        #[arg(short = 'o', long = "out")]
        out: Option<String>,
        /// Write the synthesis certificate here (`laycert check` re-decides it).
        #[arg(long)]
        cert: Option<String>,
    },
}

/// The GEMM problem and configuration overrides.
#[derive(clap::Args)]
struct GemmCli {
    /// Rows of A and C.
    #[arg(long)]
    m: i64,
    /// Rows of B (columns of C).
    #[arg(long)]
    n: i64,
    /// The reduction extent.
    #[arg(long)]
    k: i64,
    /// `f16` or `bf16`.
    #[arg(long, default_value = "bf16")]
    dtype: String,
    /// `sm80` (cp.async + ldmatrix + mma.sync; runs on Hopper too) or `sm90` (TMA + wgmma).
    #[arg(long, default_value = "sm90")]
    target: String,
    /// Shared-memory ring depth (default: chosen; W4A16: W register buffers, 2 or 3).
    #[arg(long)]
    stages: Option<i64>,
    /// CTAs per cluster along M, sharing B by multicast (default: chosen). W4A16: the
    /// splits of a column tile as one cluster summing through distributed shared memory
    /// (`--cluster S` with `--splits S` of 2, 4 or 8), or 1 for the global workspace.
    #[arg(long)]
    cluster: Option<i64>,
    /// Tile columns = the wgmma N (default: chosen).
    #[arg(long)]
    bn: Option<i64>,
    /// Tile rows (default: chosen; sm90: 64 per consumer warpgroup).
    #[arg(long)]
    bm: Option<i64>,
    /// Warpgroups computing the tile (sm80: groups of 4 warps, 1 or 2; sm90: consumer
    /// warpgroups) (default: chosen).
    #[arg(long)]
    warpgroups: Option<i64>,
    /// k-block: 64 (128-byte swizzle) or 32 (64-byte swizzle) (default: chosen).
    #[arg(long)]
    bk: Option<i64>,
    /// Split-K factor: sm90 k-splits per tile (default: chosen so that small grids fill the
    /// SMs); W4A16 k-splits per column tile (default: chosen).
    #[arg(long)]
    splits: Option<i64>,
    /// Cluster rows per group of the tile order (default: chosen).
    #[arg(long)]
    group_m: Option<i64>,
    /// `int4`: weight-only int4 B (W4A16: f16 A, M <= 16; see codegen::gemm::w4a16).
    #[arg(long)]
    weights: Option<String>,
    /// K-elements per int4 scale, a multiple of 128 (W4A16; default 128).
    #[arg(long)]
    group: Option<i64>,
    /// sm80: shared A and B tiles given row-major and unswizzled (the bank-conflict baseline).
    #[arg(long)]
    no_swizzle: bool,
    /// W4A16: `pairs` (a B register is the nibble pair (i, i + 4) of a W word: with the
    /// interleaved packing two consecutive k; with the sequential one k and k + 16, the mma over
    /// k with bits 0 and 4 swapped and A interleaved to match) or `bytes` (a byte of a word: the
    /// sequential packing only) (default: pairs with the interleaved packing; with the
    /// sequential one pairs for K-group CTAs with M <= 8, bytes otherwise, as measured on the
    /// H200).
    #[arg(long)]
    dequant: Option<String>,
    /// W4A16: how W's nibbles sit in each 32-bit word: `interleaved` (TensorRT-LLM's
    /// preprocessing: nibbles 0..7 hold k' + 0, 8, 16, 24, 1, 9, 17, 25, so a nibble pair (i,
    /// i + 4) is two consecutive k) or `sequential` (k' + 0, 1, 8, 9, 16, 17, 24, 25: a byte is
    /// two consecutive k) (default: interleaved).
    #[arg(long)]
    packing: Option<String>,
    /// W4A16: K-warps per CTA: 1 for split-K CTAs (a warp per 32 columns over a K-range), 2 to
    /// 8 for K-group CTAs that hold all of K and sum their K-warps in shared memory (default:
    /// chosen; K-groups where they fill the GPU, e.g. N = 8192).
    #[arg(long)]
    kwarps: Option<i64>,
    /// W4A16 K-group CTAs: column warps per CTA, 1, 2 or 4 (default: chosen, or 2).
    #[arg(long)]
    cwarps: Option<i64>,
    /// W4A16 K-group CTAs: A superblocks in each K-group's shared-memory ring, 2 to 4
    /// (default: chosen, or 4).
    #[arg(long)]
    aslots: Option<i64>,
    /// Shared-memory budget per CTA in bytes, at most 232448 (default: the target's limit,
    /// sm80 166912, sm90 232448; the W4A16 kernel's is sm80's). The sm80 kernel runs on an H100
    /// or H200 too: `--smem-limit 232448` builds it for one (4 stages of the 128x256x64 tile).
    #[arg(long, allow_hyphen_values = true)]
    smem_limit: Option<i64>,
}

impl GemmCli {
    fn args(&self) -> cli::gemm::GemmArgs<'_> {
        cli::gemm::GemmArgs {
            m: self.m,
            n: self.n,
            k: self.k,
            dtype: &self.dtype,
            target: &self.target,
            stages: self.stages,
            cluster: self.cluster,
            bn: self.bn,
            bm: self.bm,
            warpgroups: self.warpgroups,
            bk: self.bk,
            splits: self.splits,
            group_m: self.group_m,
            weights: self.weights.as_deref(),
            group: self.group,
            no_swizzle: self.no_swizzle,
            dequant: self.dequant.as_deref(),
            packing: self.packing.as_deref(),
            kwarps: self.kwarps,
            cwarps: self.cwarps,
            aslots: self.aslots,
            smem_limit: self.smem_limit,
        }
    }
}

/// `gpu bench gemm ...` reads as the hidden `gpu bench-gemm ...`: clap has no two-word
/// subcommands, and `gpu bench --src ..` (the copy benchmark) keeps its flags at that level.
fn gpu_bench_gemm_argv(mut argv: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    if let Some(i) = argv.iter().position(|a| a == "gpu") {
        if argv.get(i + 1).is_some_and(|a| a == "bench")
            && argv.get(i + 2).is_some_and(|a| a == "gemm")
        {
            argv.splice(i + 1..i + 3, [std::ffi::OsString::from("bench-gemm")]);
        }
    }
    argv
}

#[derive(Subcommand)]
enum GpuCommand {
    /// `gpu bench gemm`: compile a GEMM with NVRTC, check it against cuBLAS and time both.
    #[command(name = "bench-gemm", hide = true)]
    BenchGemm {
        #[command(flatten)]
        spec: GemmCli,
        /// Untimed warm-up runs.
        #[arg(long, default_value_t = 5)]
        warmup: usize,
        /// Timed runs (medians reported).
        #[arg(long, default_value_t = 20)]
        reps: usize,
    },
    /// Compile, run, check every element and time a copy kernel against a D2D copy.
    Bench {
        #[command(flatten)]
        spec: CopySpec,
        /// Untimed warm-up runs.
        #[arg(long, default_value_t = 10)]
        warmup: usize,
        /// Timed runs (the median is reported).
        #[arg(long, default_value_t = 50)]
        reps: usize,
    },
}

/// The report outputs of `prove` and `validate`.
fn outputs<'a>(
    junit: &'a Option<String>,
    cert_dir: &'a Option<String>,
    allow_unknown: bool,
    max_instances: Option<u64>,
) -> cli::prove::Outputs<'a> {
    cli::prove::Outputs {
        junit: junit.as_deref(),
        cert_dir: cert_dir.as_deref(),
        allow_unknown,
        max_instances,
    }
}

fn main() -> ExitCode {
    cli::install_panic_hook();
    let args = Args::parse_from(gpu_bench_gemm_argv(std::env::args_os().collect()));
    if let Some(path) = &args.mlir {
        if let Err(e) = cli::input::set_mlir(path) {
            return bad_input(&e.message);
        }
    }
    if let Some(text) = &args.axes {
        if let Err(e) = cli::input::set_axes(text) {
            return bad_input(&e.message);
        }
    }
    let result = match &args.command {
        Command::Show { layout, shape } => cli::show::run(layout, shape.as_deref(), args.json),
        Command::Eval {
            layout,
            shape,
            coord,
            full,
        } => cli::eval::run(layout, shape.as_deref(), coord, *full, args.json),
        Command::Convert { layout, to, shape } => {
            cli::convert::run(layout, to, shape.as_deref(), args.json)
        }
        Command::Equiv { a, b, shape, cert } => {
            cli::equiv::run(a, b, shape.as_deref(), cert.as_deref(), args.json)
        }
        Command::ProveProperty {
            property,
            layout,
            shape,
        } => cli::property::run(property, layout, shape.as_deref(), args.json),
        Command::Check { cert, kernel } => cli::check::run(cert, kernel.as_deref(), args.json),
        Command::Canon { layout, target } => {
            cli::algebra::canon(layout, target.as_deref(), args.json)
        }
        Command::Group { layout, shapes } => cli::algebra::group(layout, shapes, args.json),
        Command::Tile {
            inner,
            outer,
            inner_shape,
            outer_shape,
        } => cli::algebra::tile(inner, outer, inner_shape, outer_shape, args.json),
        Command::TileOf {
            layout,
            shape,
            inner,
            inner_shape,
            outer,
            outer_shape,
        } => cli::algebra::tile_of(
            layout,
            shape,
            inner.as_deref().zip(inner_shape.as_deref()),
            outer.as_deref().zip(outer_shape.as_deref()),
            args.json,
        ),
        Command::Slice {
            layout,
            shape,
            region,
        } => cli::algebra::slice(layout, shape, region, args.json),
        Command::DirectSum { a, b, shapes } => cli::algebra::direct_sum(a, b, shapes, args.json),
        Command::Cute { op, args: operands } => cli::algebra::cute(op, operands, args.json),
        Command::Verify {
            path,
            report,
            verbose,
        } => cli::verify::run(&cli::verify::Options {
            path: path.as_deref(),
            report: report.as_deref(),
            verbose: *verbose,
            json: args.json,
        }),
        Command::Draw {
            layout,
            shape,
            banks,
            access,
            output,
        } => cli::draw::run(&cli::draw::Options {
            layout,
            shape: shape.as_deref(),
            banks: *banks,
            access,
            output,
            json: args.json,
        }),
        Command::Linear { op } => cli::linear::run(op, args.json),
        Command::BankConflicts {
            regs,
            smem,
            dtype,
            vec,
            shape,
        } => cli::bank::bank_conflicts(regs, smem, dtype, *vec, shape.as_deref(), args.json),
        Command::Swizzle {
            write,
            read,
            dtype,
            shape,
        } => cli::bank::swizzle(write, read, dtype, shape.as_deref(), args.json),
        Command::Shuffle { a, b, dtype, shape } => {
            cli::linear::shuffle(a, b, dtype, shape.as_deref(), args.json)
        }
        Command::Prove {
            files,
            junit,
            cert_dir,
            allow_unknown,
            strict: _,
            max_instances,
        } => cli::prove::run(
            files,
            &outputs(junit, cert_dir, *allow_unknown, *max_instances),
            args.json,
        ),
        Command::Validate {
            pairs,
            junit,
            cert_dir,
            allow_unknown,
            strict: _,
        } => cli::prove::validate(
            pairs,
            &outputs(junit, cert_dir, *allow_unknown, None),
            args.json,
        ),
        Command::Simplify { expr, rules, cert } => {
            cli::simplify::simplify(expr, rules, cert.as_deref(), args.json)
        }
        Command::EquivExpr {
            a,
            b,
            rules,
            cert,
            shape,
        } => cli::simplify::equiv_expr(a, b, rules, cert.as_deref(), shape.as_deref(), args.json),
        Command::Decompose { layout, shape } => cli::decompose::run(layout, shape, args.json),
        Command::Atoms { filter } => cli::atoms::run(filter.as_deref(), args.json),
        Command::Gen {
            what: GenCommand::Copy { spec, out, cert },
        } => cli::gen::copy(&spec.args(), out.as_deref(), cert.as_deref(), args.json),
        Command::Synth {
            program,
            target,
            cert,
            draw,
        } => cli::synth::run(program, target, cert.as_deref(), draw.as_deref(), args.json),
        Command::Dist(d) => cli::dist::run(d, args.json),
        Command::Gpu {
            what: GpuCommand::Bench { spec, warmup, reps },
        } => cli::gpu::bench(&spec.args(), *warmup, *reps, args.json),
        Command::Gpu {
            what: GpuCommand::BenchGemm { spec, warmup, reps },
        } => cli::gemm::bench(&spec.args(), *warmup, *reps, args.json),
        Command::Gen {
            what: GenCommand::Nki { what },
        } => cli::nki::gen(what, args.json),
        Command::Gen {
            what: GenCommand::Gemm { spec, out, cert },
        } => cli::gemm::gen(&spec.args(), out.as_deref(), cert.as_deref(), args.json),
        Command::Nki { what } => cli::nki::run(what, args.json),
    };
    match result {
        Ok(report) => {
            let mut out = std::io::stdout().lock();
            // A closed stdout (e.g. `| head -1`) is not an error of the command; any other
            // failure to write (a full disk) is: the answer did not reach its reader.
            match out
                .write_all(report.stdout.as_bytes())
                .and_then(|_| out.flush())
            {
                Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                    cli::to_stderr(&format!("error: writing the output: {e}"));
                    ExitCode::from(cli::BAD_INPUT)
                }
                _ => ExitCode::from(report.code),
            }
        }
        Err(e) => bad_input(&e.message),
    }
}

/// Bad input: the message on stderr and exit 2, with or without `--json` (stdout carries only
/// answers, so a script reading JSON reads nothing it could mistake for one).
fn bad_input(message: &str) -> ExitCode {
    cli::to_stderr(&cli::bounded_message(message));
    ExitCode::from(cli::BAD_INPUT)
}
