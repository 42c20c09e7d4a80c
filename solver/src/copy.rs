//! [`plan_copy`]: a layout-to-layout copy kernel through a shared-memory tile.
//!
//! The source's fastest logical dimension becomes the tile's FIRST axis; the destination's
//! fastest dimension the SECOND (when both are the same, the destination's next fastest is). A
//! CTA loads its tile with vectors along first (as wide as the source's contiguity allows),
//! writes it to shared memory, synchronizes, reads it back along second and stores with vectors
//! as wide as the destination's contiguity allows. A third logical dimension is walked by the
//! grid's z index. The shared-memory layout and swizzle come from [`crate::smem::choose_smem`].
//!
//! Any extents: the tile is a power of two along each axis (at most `tile_bytes` wide, and no
//! wider than the extent rounded up to a power of two), the grid is the ceil-div of the
//! extents by the tile, and when a tile extent does not divide the tensor's, the edge tiles
//! are PREDICATED: every access checks its logical coordinate against the tensor's bounds
//! ([`CopyPlan::guard`]; certify's movement claim covers the masked cells). A vector never
//! straddles the edge: its width divides the extent along its axis as well as the layout's
//! contiguous run and every other stride (so each vector is contiguous and 16-byte aligned at
//! most), so odd pitches narrow the vectors, never the CTA: 256 threads whenever the tile has
//! that many vectors, 512 when odd pitches narrow a phase below 16-byte accesses (more warps
//! in flight for the same bytes: 8191x4097 f32 90% -> 92-95% of a device copy on the H200,
//! every odd-pitch shape measured gained; bench/gpu/README.md). A run of more than 32 vectors
//! is written by one warp in consecutive accesses ([`Phase::warp_runs`]).
//!
//! A tensor with fewer than two dimensions of extent > 1 (1x999, 999x1, 1x1x7, 1x1) has no
//! second axis to transpose along: the missing axes are its unit dimensions, so the tile is one
//! line along first (as many cells as a square tile: 4096 f32) or a single cell, and both
//! phases run along the line, one row of threads covering it in consecutive iterations. The
//! plan, its certificate and the kernel are the 2-D ones with a tile extent of 1.
//!
//! Example: row-major to column-major 8192x8192 f32 is a transpose: first = dimension 1,
//! second = dimension 0, a 64x64 tile, 256 threads, float4 loads and stores; 3000x3000 is the
//! same plan on a 47x47 grid whose last row and column of tiles are masked to 56 of their 64
//! cells; 8191x4097 (odd pitches both ways) moves single elements with 512 threads, each warp
//! storing whole 128-element runs of the destination.

use layout::cute::TvLayout;
use layout::Layout;

use crate::certificate::{certify_plan, PlanCertificate};
use crate::dtype::Dtype;
use crate::error::PlanError;
use crate::phase::{Along, Phase};
use crate::separable::Separable;
use crate::smem::{choose_smem, SmemChoice};

/// Planner options.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CopyOptions {
    /// Search swizzles (false: the unswizzled baseline).
    pub swizzle: bool,
    /// Bytes along each tile axis: the tile is at most this wide both ways, narrowed until its
    /// shared copy fits [`MAX_SMEM_BYTES`]. The default, 256, measured best on the H100
    /// (bench/gpu/README.md). A line (a tensor with one dimension of extent > 1) takes the
    /// square tile's cells along that dimension.
    pub tile_bytes: i64,
    /// Threads per CTA (a power of two in 32..=1024; `None`: 256, or 512 where the layouts
    /// narrow a phase's global accesses below 16 bytes).
    pub threads: Option<i64>,
    /// Most elements per global access (a power of two; `None`: as wide as the layouts'
    /// contiguity and 16 bytes allow). `Some(1)` with [`CopyOptions::without_swizzle`] is the
    /// bank-conflict experiment's scalar baseline: a 32x32 f32 tile read down its columns
    /// one word per lane, which the model predicts to be a 32-way conflict.
    pub vector: Option<i64>,
    /// The tile in elements along first and second (powers of two whose shared copy fits
    /// [`MAX_SMEM_BYTES`]), overriding `tile_bytes`; each is still capped at the extent rounded
    /// up to a power of two. `None`: chosen from `tile_bytes` and the layouts.
    pub tile: Option<[i64; 2]>,
    /// Launch the CTAs that share a tile row along the STORE axis consecutively (the hardware's
    /// `blockIdx.x` walks `by`), the default: measured 2-3 points faster on the H200 for
    /// aligned transposes and 12 points for odd destination pitches (bench/gpu/README.md).
    /// `false`: `blockIdx.x` walks `bx` (the load axis). A line's one row of CTAs is walked
    /// by `blockIdx.x` either way.
    pub store_major: bool,
}

impl Default for CopyOptions {
    fn default() -> Self {
        CopyOptions {
            swizzle: true,
            tile_bytes: 256,
            threads: None,
            vector: None,
            tile: None,
            store_major: true,
        }
    }
}

impl CopyOptions {
    /// The unswizzled baseline.
    pub fn without_swizzle(mut self) -> Self {
        self.swizzle = false;
        self
    }
}

/// A planned, certified copy kernel.
#[derive(Clone, Debug)]
pub struct CopyPlan {
    /// Logical tensor shape.
    pub shape: Vec<i64>,
    /// Element type.
    pub dtype: Dtype,
    /// The source layout as given.
    pub src_layout: Layout,
    /// The destination layout as given.
    pub dst_layout: Layout,
    /// The source, per dimension.
    pub src: Separable,
    /// The destination, per dimension.
    pub dst: Separable,
    /// Logical dimensions of the tile's first and second axes.
    pub tile_dims: [usize; 2],
    /// The dimension walked by the grid's z index (3-D tensors).
    pub z_dim: Option<usize>,
    /// Tile extents along first and second.
    pub tile: [i64; 2],
    /// Grid: tiles along first, along second (each the ceil-div of the extent by the tile),
    /// and the z extent.
    pub grid: [i64; 3],
    /// The predicate's bounds along first and second: an access at logical `x` happens iff
    /// `x[tile_dims[0]] < guard[0]` and `x[tile_dims[1]] < guard[1]` (the tensor's extents).
    pub guard: [i64; 2],
    /// Threads per CTA.
    pub threads: i64,
    /// The hardware's `blockIdx.x` walks `by` and `blockIdx.y` walks `bx` ([`CopyOptions`];
    /// false for a line).
    pub store_major: bool,
    /// The global load (along first).
    pub load: Phase,
    /// The global store.
    pub store: Phase,
    /// The shared-memory layout and its predicted traffic.
    pub smem: SmemChoice,
    /// `load` as a TV layout.
    pub load_tv: TvLayout,
    /// `store` as a TV layout.
    pub store_tv: TvLayout,
    /// The checked claims and their digest.
    pub certificate: PlanCertificate,
}

impl CopyPlan {
    /// Number of CTAs in the grid.
    pub fn ctas(&self) -> i64 {
        self.grid.iter().product()
    }

    /// True when some tile is only partly inside the tensor, so the kernel must predicate its
    /// accesses on [`CopyPlan::guard`].
    pub fn ragged(&self) -> bool {
        self.grid[0] * self.tile[0] != self.guard[0] || self.grid[1] * self.tile[1] != self.guard[1]
    }

    /// True when an access at logical `coord` passes the guard.
    pub fn active(&self, coord: &[i64]) -> bool {
        coord[self.tile_dims[0]] < self.guard[0] && coord[self.tile_dims[1]] < self.guard[1]
    }

    /// Logical coordinate of tile-local `(f, s)` in CTA `(bx, by, bz)`.
    pub fn logical(&self, block: [i64; 3], (f, s): (i64, i64)) -> Vec<i64> {
        let mut c = vec![0; self.shape.len()];
        c[self.tile_dims[0]] = block[0] * self.tile[0] + f;
        c[self.tile_dims[1]] = block[1] * self.tile[1] + s;
        if let Some(z) = self.z_dim {
            c[z] = block[2];
        }
        c
    }
}

/// Static shared memory a kernel may declare (48 KiB).
pub const MAX_SMEM_BYTES: i64 = 48 * 1024;

/// Largest power of two at most `cap` dividing `extent`.
fn pow2_dividing(extent: i64, cap: i64) -> i64 {
    let mut t = 1;
    while t * 2 <= cap && extent % (t * 2) == 0 {
        t *= 2;
    }
    t
}

/// The tile extent for `extent`: the power of two at most `cap` (a power of two) and at most
/// `extent` rounded up to a power of two.
fn pow2_tile(extent: i64, cap: i64) -> i64 {
    let mut t = 1;
    while t < cap && t < extent {
        t *= 2;
    }
    t
}

/// Plans and certifies a copy from `src` to `dst` over the logical `shape` (rank 2 or 3).
///
/// ```
/// use layout::Layout;
/// use solver::{plan_copy, CopyOptions, Dtype};
/// let src = Layout::parse("(64,64):(64,1)", None)?;
/// let dst = Layout::parse("(64,64):(1,64)", None)?;
/// let plan = plan_copy(&src, &dst, &[64, 64], Dtype::F32, &CopyOptions::default())?;
/// assert_eq!((plan.tile, plan.load.vec, plan.store.vec), ([64, 64], 4, 4));
/// // Scalar shared loads down the columns of the 64x64 tile: the best swizzle leaves two
/// // wavefronts per instruction (Nsight Compute measured the same on the H100).
/// assert_eq!(plan.smem.loads.per_instruction(), 2.0);
/// // A row vector (one dimension of extent > 1): a line of 4096 cells, float4 both ways.
/// let row = Layout::parse("(1,8192):(8192,1)", None)?;
/// let plan = plan_copy(&row, &row, &[1, 8192], Dtype::F32, &CopyOptions::default())?;
/// assert_eq!((plan.tile, plan.grid, plan.threads), ([4096, 1], [2, 1, 1], 256));
/// # Ok::<(), solver::PlanError>(())
/// ```
pub fn plan_copy(
    src_layout: &Layout,
    dst_layout: &Layout,
    shape: &[i64],
    dtype: Dtype,
    opts: &CopyOptions,
) -> Result<CopyPlan, PlanError> {
    if !(2..=3).contains(&shape.len()) {
        return Err(PlanError::Shape {
            shape: shape.to_vec(),
            why: "a copy plan takes a 2-D or 3-D tensor".into(),
        });
    }
    if let Some(t) = opts.threads {
        if !(32..=1024).contains(&t) || t & (t - 1) != 0 {
            return Err(PlanError::Option {
                what: "threads",
                why: format!("{t} is not a power of two in 32..=1024"),
            });
        }
    }
    if opts.tile_bytes < dtype.bytes() || opts.tile_bytes > 512 {
        return Err(PlanError::Option {
            what: "tile bytes",
            why: format!("{} is outside {}..=512", opts.tile_bytes, dtype.bytes()),
        });
    }
    if let Some(v) = opts.vector {
        if v < 1 || v & (v - 1) != 0 || v * dtype.bytes() > 16 {
            return Err(PlanError::Option {
                what: "vector",
                why: format!(
                    "{v} elements is not a power of two of at most 16 bytes of {}",
                    dtype.name()
                ),
            });
        }
    }
    let src = Separable::from_layout("source", src_layout, shape)?;
    let dst = Separable::from_layout("destination", dst_layout, shape)?;
    if let Some((a, b)) = dst.overlapping_modes() {
        return Err(PlanError::Unsupported {
            which: "destination",
            layout: dst_layout.print(),
            why: format!(
                "modes {}:{} and {}:{} may overlap, so two elements could be written to one \
                 address",
                a.0, a.1, b.0, b.1
            ),
        });
    }
    // With fewer than two dimensions of extent > 1, an axis the layouts cannot name falls to a
    // unit dimension (the lowest other one): the tile is one line along `first`, or one cell.
    let unit = |other: Option<usize>| (0..shape.len()).find(|&d| Some(d) != other);
    let first = src.fastest_dim(None).or_else(|| unit(None));
    let first = first.ok_or_else(|| PlanError::Shape {
        shape: shape.to_vec(),
        why: "a copy plan takes a 2-D or 3-D tensor".into(),
    })?;
    let second = match dst.fastest_dim(None) {
        Some(d) if d != first => Some(d),
        _ => dst.fastest_dim(Some(first)).or_else(|| unit(Some(first))),
    };
    let second = second.ok_or_else(|| PlanError::Shape {
        shape: shape.to_vec(),
        why: "a copy plan takes a 2-D or 3-D tensor".into(),
    })?;
    let z_dim = (0..shape.len()).find(|&d| d != first && d != second);
    // A line (second is a unit dimension) takes as many cells along first as a square tile
    // would have in all.
    let line = shape[second] == 1;
    let tile_of = |cap: i64| {
        let along = if line { cap.saturating_mul(cap) } else { cap };
        [
            pow2_tile(shape[first], along),
            pow2_tile(shape[second], cap),
        ]
    };
    // The widest tile of at most `tile_bytes` per axis whose shared copy fits the static limit.
    let mut cap = opts.tile_bytes / dtype.bytes();
    let mut tile = tile_of(cap);
    while tile[0] * tile[1] * dtype.bytes() > MAX_SMEM_BYTES {
        cap /= 2;
        tile = tile_of(cap);
    }
    if let Some(t) = opts.tile {
        let pow2 = |v: i64| (1..=1024).contains(&v) && v & (v - 1) == 0;
        if !pow2(t[0]) || !pow2(t[1]) || t[0] * t[1] * dtype.bytes() > MAX_SMEM_BYTES {
            return Err(PlanError::Option {
                what: "tile",
                why: format!(
                    "{t:?} must be powers of two up to 1024 whose {} shared copy fits {} bytes",
                    dtype.name(),
                    MAX_SMEM_BYTES
                ),
            });
        }
        tile = [
            pow2_tile(shape[first], t[0]),
            pow2_tile(shape[second], t[1]),
        ];
    }
    // Stores narrower than 16 bytes because the destination's pitch or extent is misaligned
    // write partial sectors at both ends of every run: a tile 32 elements along first (one
    // warp of loads) and 512 bytes along the store axis measured best (bench/gpu/README.md:
    // 32x128 for f32; for f16, 32x256 74% of a device copy where 64x256 gave 67%).
    let full_vec = |w: i64| w * dtype.bytes() >= 16;
    if opts.tile.is_none() && opts.tile_bytes == CopyOptions::default().tile_bytes {
        let store_dim = if dst.fastest_dim(None) == Some(first) {
            first
        } else {
            second
        };
        let along = if store_dim == first { tile[0] } else { tile[1] };
        let vs = dst.vector_width(
            store_dim,
            dtype.bytes(),
            pow2_dividing(shape[store_dim], along),
        );
        if !full_vec(vs) && store_dim == second && dtype.bytes() >= 2 {
            let b = dtype.bytes();
            tile = [
                pow2_tile(shape[first], 32),
                pow2_tile(shape[second], 512 / b),
            ];
        }
    }
    let z = z_dim.map_or(1, |d| shape[d]);
    let up = |e: i64, t: i64| (e + t - 1) / t;
    let grid = [up(shape[first], tile[0]), up(shape[second], tile[1]), z];
    // A line's CTAs form one row, the same order either way: `blockIdx.x` (up to 2^31) walks it.
    let store_major = opts.store_major && !line;
    let (hx, hy) = if store_major {
        (grid[1], grid[0])
    } else {
        (grid[0], grid[1])
    };
    if hy > 65535 || grid[2] > 65535 || hx > i64::from(i32::MAX) {
        return Err(PlanError::Shape {
            shape: shape.to_vec(),
            why: format!("the grid {grid:?} exceeds CUDA's limits (x < 2^31, y and z <= 65535)"),
        });
    }
    let cap_vec = |w: i64| opts.vector.map_or(w, |v| w.min(v));
    // A vector divides the extent along its axis, so none straddles the guard.
    let lane_span = |d: usize, t: i64| pow2_dividing(shape[d], t);
    let vl = cap_vec(src.vector_width(first, dtype.bytes(), lane_span(first, tile[0])));
    let store_along = if dst.fastest_dim(None) == Some(first) {
        Along::First
    } else {
        Along::Second
    };
    let vs = cap_vec(match store_along {
        Along::First => dst.vector_width(first, dtype.bytes(), lane_span(first, tile[0])),
        Along::Second => dst.vector_width(second, dtype.bytes(), lane_span(second, tile[1])),
    });
    let cells = tile[0] * tile[1];
    // Each phase's threads span its whole axis (`lanes = extent / vector`, or a warp covering
    // a longer run in consecutive accesses: `Phase::warp_runs`), and every thread
    // holds at least one vector of the other phase: narrow the wider vector until the thread
    // count both phases allow covers the other phase's lanes (e.g. a 2 x 36 tensor whose loads
    // are 4 wide but whose stores, at an odd pitch, are 1 wide).
    let (along_l, along_s) = match store_along {
        Along::First => (tile[0], tile[0]),
        Along::Second => (tile[0], tile[1]),
    };
    // (A line's phases both run along it, each thread row covering it in consecutive
    // iterations: `Phase`'s lanes are then the threads.)
    let (mut vl, mut vs) = (vl, vs);
    while !line && vl > 1 && cells / vl < along_s / vs {
        vl /= 2;
    }
    while !line && vs > 1 && cells / vs < along_l / vl {
        vs /= 2;
    }
    let narrowed = opts.vector.is_none() && vl.min(vs) * dtype.bytes() < 16;
    let threads = opts
        .threads
        .unwrap_or(if narrowed { 512 } else { 256 })
        .min(cells / vl)
        .min(cells / vs);
    let mut load = Phase::warp_runs(Along::First, vl, tile, threads)?;
    let mut store = Phase::warp_runs(store_along, vs, tile, threads)?;
    let smem = choose_smem(tile, dtype.bytes(), threads, &load, &store, opts.swizzle)?;
    load.smem_vec = smem.store_vec;
    store.smem_vec = smem.load_vec;
    let load_tv = load.tv(tile)?;
    let store_tv = store.tv(tile)?;
    let mut plan = CopyPlan {
        shape: shape.to_vec(),
        dtype,
        src_layout: src_layout.clone(),
        dst_layout: dst_layout.clone(),
        src,
        dst,
        tile_dims: [first, second],
        z_dim,
        tile,
        grid,
        guard: [shape[first], shape[second]],
        threads,
        store_major,
        load,
        store,
        smem,
        load_tv,
        store_tv,
        certificate: PlanCertificate::default(),
    };
    plan.certificate = certify_plan(&plan)?;
    Ok(plan)
}
