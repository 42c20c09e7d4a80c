//! The data-movement claim of a copy through a shared-memory tile: after the kernel runs,
//! `dst[D(x)] == src[S(x)]` for every logical coordinate `x` of the tensor.
//!
//! A staged copy ([`StagedCopy`]) is what a copy kernel does, in layouts. The kernel launches
//! `grid` CTAs; CTA `b = (bx, by, bz)` owns the tile whose cell `c = (f, s)` is the logical
//! coordinate `G(b, c)` (`x[first] = bx * T0 + f`, `x[second] = by * T1 + s`, `x[z] = bz`).
//! Every access is PREDICATED: it happens iff `x[first] < guard[0]` and `x[second] <
//! guard[1]` (ragged edges: a tile extent need not divide the tensor's, the grid is rounded up
//! and the edge tiles are partly masked). In the LOAD stage, thread `t`'s value `v` takes cell
//! `c = load(t, v)`, and when `G(b, c)` passes the guard reads `src` at `S'(G(b, c))` and
//! writes shared slot `M(c)`; after a barrier, in the STORE stage, thread `t`'s value `v` takes
//! cell `c = store(t, v)`, and when `G(b, c)` passes the guard reads slot `M(c)` and writes
//! `dst` at `D'(G(b, c))`. `S'` and `D'` are the forms the kernel's address arithmetic is
//! generated from; `S` and `D` are the layouts as the user gave them.
//!
//! [`prove_staged_copy`] decides the claim compositionally (the `parts` decider), each part by
//! certify's own deciders:
//!
//! 1. `source form`, `destination form`: `S' == S` and `D' == D` over the tensor (equivalence).
//! 2. `destination injective`: `D'` never sends two coordinates to one address (enumeration, or
//!    z3 above the enumeration limit).
//! 3. `grid partitions the tensor`: `G`, as the CuTe layout `(T0, T1, grid0, grid1, gz)` into
//!    the column-major index of the PADDED box `(grid0 * T0, grid1 * T1, gz)` (in the tensor's
//!    dimension order), is a bijection onto all of the box's indices (normal form, enumeration,
//!    or z3 plus counting).
//! 4. `guards select the tensor`: the box contains the tensor (`grid_a * T_a >= E_a` along
//!    first and second, `gz` equal to the z extent) and the guard is the tensor's bounds
//!    (`guard = (E_first, E_second)`): checked arithmetic.
//! 5. `tile stage is the identity`: for every store `(t, v)` the slot it reads was written by
//!    loads of its own cell only, every cell is stored, and none twice (enumeration of both
//!    stages over one tile: the stages are the same in every CTA; when every piece is
//!    F2-linear, also by ranks over F2, and the two must agree).
//!
//! Together: take any `x` of the tensor. By 4 it lies in the box, so by 3 there is exactly one
//! `(b, c)` with `G(b, c) = x`, and its accesses pass the guard (4: the guard is the tensor's
//! bounds). By 5 exactly one store of CTA `b` takes `c`, and what it reads at `M(c)` was loaded
//! for `c` only (that load passed the same guard, at the same `x`), i.e. `src[S'(x)]`; it
//! writes that to `D'(x)`. Every access that passes the guard is at a coordinate of the tensor
//! (4), so by 2 no write for another coordinate lands on `D'(x)`, and no access leaves the
//! buffers: `dst[D'(x)] = src[S'(x)]`, written exactly once, which by 1 is
//! `dst[D(x)] = src[S(x)]`. Masked cells of the edge tiles touch no memory.
//!
//! A second, independent decider, `simulation`, runs the whole kernel on the tensor (up to
//! [`SIMULATION_LIMIT`] elements in a launched box of at most [`SIMULATION_BOX_LIMIT`] cells):
//! every CTA's load and store stage over a model of the
//! memories, each source element tagged by its address, then compares every destination
//! address with the GIVEN layouts' semantics. When both run they must agree.
//!
//! ```
//! use certify::movement::{prove_staged_copy, StagedCopy};
//! use certify::Policy;
//! use layout::cute::{CuteLayout, TvLayout};
//! use layout::Layout;
//! let p = |t: &str| Layout::parse(t, None).unwrap();
//! let cute = |t: &str| match p(t) { Layout::Cute(c) => c, _ => unreachable!() };
//! // A 64x64 f32 transpose through 32x32 tiles: 256 threads, float4 both ways.
//! let tv = |t: &str| TvLayout::new(cute(t), vec![32, 32]).unwrap();
//! let copy = StagedCopy {
//!     shape: vec![64, 64],
//!     src: p("(64,64):(64,1)"),
//!     dst: p("(64,64):(1,64)"),
//!     src_form: cute("(64,64):(64,1)"),
//!     dst_form: cute("(64,64):(1,64)"),
//!     tile_dims: [1, 0],
//!     z_dim: None,
//!     tile: [32, 32],
//!     grid: [2, 2, 1],
//!     guard: [64, 64],
//!     load: tv("((8,32),(4,1)):((4,32),(1,1024))"),
//!     store: tv("((8,32),(4,1)):((128,1),(32,1024))"),
//!     smem: p("Sw<3,2,5> o (32,32):(1,32)"),
//! };
//! let r = prove_staged_copy(&copy, &Policy::default())?;
//! assert_eq!(r.verdict, "proved");
//! assert_eq!(r.deciders, [("parts".to_string(), "proved".to_string()),
//!                         ("simulation".to_string(), "proved".to_string())]);
//! # Ok::<(), layout::LayoutError>(())
//! ```

use std::collections::{BTreeSet, HashMap};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use layout::cute::{CuteLayout, TvLayout};
use layout::{Axis, Layout, LayoutError};

use crate::certificate::certify_equivalence;
use crate::claim::{equivalent, Policy};
use crate::property::{prove_property, Property};

/// Largest tensor the `simulation` decider runs the whole kernel on.
pub const SIMULATION_LIMIT: i64 = 1 << 18;

/// Largest launched box (grid x tile cells, masked ones included) the `simulation` decider
/// walks: its work is the box's, not the tensor's, and a grid far beyond the tensor (a
/// re-sealed certificate's `[1000000, 1000000, 1]`) would take hours.
pub const SIMULATION_BOX_LIMIT: i64 = 1 << 24;

/// Most cells of a tile, and most `(thread, value)` pairs of a stage: 2^20 (a 1-byte tile of
/// 2^20 cells is four times the largest shared memory of any GPU).
pub const MAX_TILE_CELLS: i64 = 1 << 20;

/// A copy kernel's data movement, in layouts (see the module doc).
#[derive(Clone, Debug)]
pub struct StagedCopy {
    /// The logical tensor's shape (rank 2 or 3).
    pub shape: Vec<i64>,
    /// The source layout as given.
    pub src: Layout,
    /// The destination layout as given.
    pub dst: Layout,
    /// The source form the kernel's load addresses come from.
    pub src_form: CuteLayout,
    /// The destination form the kernel's store addresses come from.
    pub dst_form: CuteLayout,
    /// The logical dimensions of the tile's first and second axes.
    pub tile_dims: [usize; 2],
    /// The dimension walked by the grid's z index (rank 3).
    pub z_dim: Option<usize>,
    /// The tile's extents along first and second.
    pub tile: [i64; 2],
    /// The launched grid: CTAs along first, along second, and along z.
    pub grid: [i64; 3],
    /// The predicate's bounds: an access at logical `x` happens iff `x[first] < guard[0]` and
    /// `x[second] < guard[1]`.
    pub guard: [i64; 2],
    /// The load stage: `(thread, value) -> (f, s)` over the tile.
    pub load: TvLayout,
    /// The store stage.
    pub store: TvLayout,
    /// The shared-memory layout: `(f, s) -> slot` over the tile.
    pub smem: Layout,
}

/// One part of the compositional proof.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Part {
    /// Short name (module doc, items 1-5).
    pub name: String,
    /// What it states.
    pub statement: String,
    /// `proved`, `refuted` or `unknown`.
    pub verdict: String,
    /// The deciders and what they said, or the certificate digest: a record of the run that
    /// wrote it, which depends on the deciders' time limits; `check` re-derives the verdict and
    /// the statement, not this text.
    pub evidence: String,
}

/// The answer to a data-movement claim.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MovementReport {
    /// `proved`, `refuted` or `unknown`.
    pub verdict: &'static str,
    /// The parts, in the module doc's order.
    pub parts: Vec<Part>,
    /// The deciders that ran (`parts`, `simulation`) and what each said.
    pub deciders: Vec<(String, String)>,
    /// For `refuted`: a logical coordinate whose destination element is wrong, or the failing
    /// part's witness; for `unknown`: why.
    pub detail: Option<String>,
}

fn bad(what: impl Into<String>, why: impl Into<String>) -> LayoutError {
    LayoutError::invalid(what, why)
}

impl StagedCopy {
    /// The ceil-div grid of a tile over a tensor (what a planner launches): CTAs along first,
    /// along second, and the z extent. `None` for a non-positive tile or a bad dimension.
    ///
    /// ```
    /// assert_eq!(certify::movement::StagedCopy::ceil_grid(&[1001, 999], [1, 0], None, [64, 64]),
    ///            Some([16, 16, 1]));
    /// ```
    pub fn ceil_grid(
        shape: &[i64],
        tile_dims: [usize; 2],
        z_dim: Option<usize>,
        tile: [i64; 2],
    ) -> Option<[i64; 3]> {
        let up = |e: i64, t: i64| (t > 0).then(|| (e + t - 1) / t);
        Some([
            up(*shape.get(tile_dims[0])?, tile[0])?,
            up(*shape.get(tile_dims[1])?, tile[1])?,
            match z_dim {
                Some(z) => *shape.get(z)?,
                None => 1,
            },
        ])
    }

    /// True when the guard lets an access at logical `x` happen.
    pub fn active(&self, x: &[i64]) -> bool {
        x[self.tile_dims[0]] < self.guard[0] && x[self.tile_dims[1]] < self.guard[1]
    }

    /// True when `x` is a coordinate of the tensor.
    fn inside(&self, x: &[i64]) -> bool {
        x.iter()
            .zip(&self.shape)
            .all(|(&v, &e)| (0..e).contains(&v))
    }

    /// Checks the pieces fit together (bad input is an error, not a refutation).
    pub fn validate(&self) -> Result<(), LayoutError> {
        let rank = self.shape.len();
        if !(2..=3).contains(&rank) || self.shape.iter().any(|&e| e < 1) {
            return Err(bad(
                format!("tensor shape {:?}", self.shape),
                "a staged copy takes a 2-D or 3-D tensor of positive extents",
            ));
        }
        let [a, b] = self.tile_dims;
        let dims_ok = a < rank && b < rank && a != b;
        let z_ok = match self.z_dim {
            Some(z) => rank == 3 && z < rank && z != a && z != b,
            None => rank == 2,
        };
        if !dims_ok || !z_ok {
            return Err(bad(
                format!("tile dims {:?}, z dim {:?}", self.tile_dims, self.z_dim),
                format!("they must name the {rank} dimensions once each"),
            ));
        }
        self.shape
            .iter()
            .try_fold(1i64, |a, &e| a.checked_mul(e))
            .ok_or_else(|| {
                bad(
                    format!("tensor shape {:?}", self.shape),
                    "its size overflows",
                )
            })?;
        if self.tile.iter().any(|&t| t < 1) {
            return Err(bad(
                format!("tile {:?}", self.tile),
                "extents must be positive",
            ));
        }
        if self.grid.iter().any(|&g| g < 1) || self.guard.iter().any(|&g| g < 1) {
            return Err(bad(
                format!("grid {:?}, guard {:?}", self.grid, self.guard),
                "extents must be positive",
            ));
        }
        let box_size = self.grid[0]
            .checked_mul(self.tile[0])
            .zip(self.grid[1].checked_mul(self.tile[1]))
            .and_then(|(a, b)| a.checked_mul(b))
            .and_then(|a| a.checked_mul(self.grid[2]));
        if box_size.is_none() {
            return Err(bad(
                format!("grid {:?} of tile {:?}", self.grid, self.tile),
                "the box it covers overflows",
            ));
        }
        match self.tile[0].checked_mul(self.tile[1]) {
            Some(cells) if cells <= MAX_TILE_CELLS => {}
            _ => {
                return Err(bad(
                    format!("tile {:?}", self.tile),
                    format!("more than {MAX_TILE_CELLS} cells: no shared memory holds it"),
                ))
            }
        }
        for (which, tv) in [("load", &self.load), ("store", &self.store)] {
            if tv
                .threads()
                .checked_mul(tv.values())
                .is_none_or(|n| n > MAX_TILE_CELLS)
            {
                return Err(bad(
                    format!("{which} TV layout {tv}"),
                    format!("more than {MAX_TILE_CELLS} (thread, value) pairs"),
                ));
            }
        }
        slot(&self.smem, self.tile, &[0, 0]).map_err(|e| {
            bad(
                format!("shared layout {}", self.smem.print()),
                format!("it is not a layout of the tile {:?}: {e}", self.tile),
            )
        })?;
        for (which, tv) in [("load", &self.load), ("store", &self.store)] {
            if tv.tile() != self.tile {
                return Err(bad(
                    format!("{which} TV layout {tv}"),
                    format!("its tile is not {:?}", self.tile),
                ));
            }
        }
        Ok(())
    }

    /// `G(b, c)`.
    pub fn logical(&self, block: [i64; 3], cell: &[i64]) -> Vec<i64> {
        let mut x = vec![0; self.shape.len()];
        x[self.tile_dims[0]] = block[0] * self.tile[0] + cell[0];
        x[self.tile_dims[1]] = block[1] * self.tile[1] + cell[1];
        if let Some(z) = self.z_dim {
            x[z] = block[2];
        }
        x
    }

    /// The box the grid covers, in the tensor's dimension order: `grid_a * T_a` along first
    /// and second, the grid's z extent along z.
    pub fn padded_box(&self) -> Vec<i64> {
        let mut p = self.shape.clone();
        p[self.tile_dims[0]] = self.grid[0].saturating_mul(self.tile[0]);
        p[self.tile_dims[1]] = self.grid[1].saturating_mul(self.tile[1]);
        if let Some(z) = self.z_dim {
            p[z] = self.grid[2];
        }
        p
    }

    /// `G` as a CuTe layout `(T0, T1, grid0, grid1, gz)` into the column-major index of the
    /// padded box ([`StagedCopy::padded_box`]).
    pub fn grid_layout(&self) -> Result<CuteLayout, LayoutError> {
        let boxed = self.padded_box();
        let mut col = vec![1i64; boxed.len()];
        for d in 1..boxed.len() {
            col[d] = col[d - 1]
                .checked_mul(boxed[d - 1])
                .ok_or_else(|| bad("grid layout", "the box's size overflows"))?;
        }
        let [f, s] = self.tile_dims;
        let g = self.grid;
        let mul = |a: i64, b: i64| {
            a.checked_mul(b)
                .ok_or_else(|| bad("grid layout", "a stride overflows"))
        };
        let z_stride = self.z_dim.map_or(0, |z| col[z]);
        CuteLayout::from_flat(
            &[self.tile[0], self.tile[1], g[0], g[1], g[2]],
            &[
                col[f],
                col[s],
                mul(self.tile[0], col[f])?,
                mul(self.tile[1], col[s])?,
                z_stride,
            ],
        )
    }
}

/// The single memory offset a global layout gives `x` (over axis `m`).
fn address(l: &Layout, shape: &[i64], x: &[i64]) -> Result<i64, LayoutError> {
    // CuTe and swizzled layouts have one offset per coordinate: their own evaluation, without
    // the point sets of the general path.
    match l {
        Layout::Cute(c) => return c.eval(shape, x),
        Layout::Swizzled(s) => return s.eval(shape, x),
        _ => {}
    }
    // Physical points as `layout::relation::point_of` defines them (aliases of `m` added).
    let points = l
        .eval(Some(shape), x)?
        .iter()
        .map(layout::relation::normalize)
        .collect::<Result<BTreeSet<_>, _>>()?;
    let mut it = points.iter();
    match (it.next(), it.next()) {
        (Some(p), None) if p.keys().all(|a| *a == Axis::m()) => {
            Ok(p.get(&Axis::m()).copied().unwrap_or(0))
        }
        _ => Err(bad(
            format!("global layout {}", l.print()),
            format!("{x:?} is not one memory offset"),
        )),
    }
}

/// A CuTe layout evaluated over one logical shape many times: `CuteLayout::eval` with the
/// shape check and the flat modes done once (the simulation evaluates millions of points).
struct FlatCute {
    shape: Vec<i64>,
    modes: Vec<(i64, i64)>,
}

impl FlatCute {
    fn new(l: &CuteLayout, shape: &[i64]) -> Result<FlatCute, LayoutError> {
        l.check_shape(shape)?;
        Ok(FlatCute {
            shape: shape.to_vec(),
            modes: l.flat_modes(),
        })
    }

    /// `L(x)`: the column-major index of `x`, then the mixed-radix digits times the strides.
    fn eval(&self, x: &[i64]) -> Result<i64, LayoutError> {
        let mut rest = layout::shape::flatten_col_major(&self.shape, x)?;
        let mut out = 0i64;
        for &(e, d) in &self.modes {
            out = (rest % e)
                .checked_mul(d)
                .and_then(|v| out.checked_add(v))
                .ok_or_else(|| bad("offset", "overflows i64"))?;
            rest /= e;
        }
        Ok(out)
    }
}

/// The slot `M` gives tile cell `c`.
fn slot(m: &Layout, tile: [i64; 2], c: &[i64]) -> Result<i64, LayoutError> {
    address(m, &tile, c)
}

fn part(name: &str, statement: String, verdict: &str, evidence: String) -> Part {
    Part {
        name: name.into(),
        statement,
        verdict: verdict.into(),
        evidence,
    }
}

fn form_part(
    which: &str,
    given: &Layout,
    form: &CuteLayout,
    shape: &[i64],
    policy: &Policy,
) -> Result<Part, LayoutError> {
    let form = Layout::Cute(form.clone());
    let r = equivalent(given, &form, Some(shape), policy)?;
    let verdict = match r.verdict() {
        "equivalent" => "proved",
        "not equivalent" => "refuted",
        _ => "unknown",
    };
    let evidence = if verdict == "proved" {
        format!(
            "certificate sha256:{}",
            certify_equivalence(given, &form, &r).digest
        )
    } else {
        r.verdict().to_string()
    };
    Ok(part(
        &format!("{which} form"),
        format!("{} == {} over {shape:?}", given.print(), form.print()),
        verdict,
        evidence,
    ))
}

fn property_part(
    name: &str,
    l: &Layout,
    prop: Property,
    shape: &[i64],
    policy: &Policy,
) -> Result<Part, LayoutError> {
    let r = prove_property(l, prop, Some(shape), policy)?;
    let deciders: Vec<String> = r
        .deciders
        .iter()
        .map(|(d, v)| format!("{d}: {v}"))
        .collect();
    Ok(part(
        name,
        format!("{} is {prop:?} over {shape:?}", l.print()).to_lowercase(),
        r.verdict,
        match r.detail {
            Some(d) => format!("{} ({d})", deciders.join(", ")),
            None => deciders.join(", "),
        },
    ))
}

/// Part 4: the box contains the tensor and the guard is the tensor's bounds (arithmetic).
fn guard_part(c: &StagedCopy, boxed: &[i64]) -> Part {
    let [f, s] = c.tile_dims;
    let bounds = [c.shape[f], c.shape[s]];
    let short = (0..c.shape.len()).find(|&d| boxed[d] < c.shape[d]);
    let z_over = c.z_dim.filter(|&z| boxed[z] != c.shape[z]);
    let why = if let Some(d) = short {
        Some(format!(
            "the grid covers {} of dimension {d}'s {} coordinates",
            boxed[d], c.shape[d]
        ))
    } else if let Some(z) = z_over {
        Some(format!(
            "the grid walks {} z coordinates of dimension {z}'s {}",
            boxed[z], c.shape[z]
        ))
    } else if c.guard != bounds {
        Some(format!(
            "the guard {:?} is not the tensor's bounds {bounds:?} along dims ({f}, {s})",
            c.guard
        ))
    } else {
        None
    };
    part(
        "guards select the tensor",
        format!(
            "the box {boxed:?} contains {:?}, and an access happens iff x[{f}] < {} and x[{s}] < {}",
            c.shape, c.guard[0], c.guard[1]
        ),
        if why.is_some() { "refuted" } else { "proved" },
        match why {
            None => format!(
                "arithmetic: grid {:?} x tile {:?} >= {bounds:?}, guard == {bounds:?}",
                c.grid, c.tile
            ),
            Some(w) => format!("arithmetic: {w}"),
        },
    )
}

/// Part 5: enumerates one tile's two stages. `Err(why)` names the first store that reads the
/// wrong thing, or a cell no store takes.
fn tile_stage(c: &StagedCopy) -> Result<Result<(), String>, LayoutError> {
    let mut writers: HashMap<i64, Vec<i64>> = HashMap::new();
    for t in 0..c.load.threads() {
        for v in 0..c.load.values() {
            let cell = c.load.eval(t, v)?;
            let s = slot(&c.smem, c.tile, &cell)?;
            let w = writers.entry(s).or_default();
            let flat = cell[0] + cell[1] * c.tile[0];
            if !w.contains(&flat) {
                w.push(flat);
            }
        }
    }
    let cells = c.tile[0] * c.tile[1];
    let mut stored = vec![false; cells as usize];
    let cell_of = |i: i64| [i % c.tile[0], i / c.tile[0]];
    for t in 0..c.store.threads() {
        for v in 0..c.store.values() {
            let cell = c.store.eval(t, v)?;
            let flat = cell[0] + cell[1] * c.tile[0];
            if std::mem::replace(&mut stored[flat as usize], true) {
                return Ok(Err(format!(
                    "store thread {t} value {v} stores cell {cell:?} a second time"
                )));
            }
            let s = slot(&c.smem, c.tile, &cell)?;
            match writers.get(&s).map(Vec::as_slice) {
                Some([w]) if *w == flat => {}
                None | Some([]) => {
                    return Ok(Err(format!(
                        "store thread {t} value {v} reads slot {s} for cell {cell:?}, which no \
                         load writes"
                    )))
                }
                Some(ws) => {
                    let others: Vec<[i64; 2]> = ws
                        .iter()
                        .filter(|&&w| w != flat)
                        .map(|&w| cell_of(w))
                        .collect();
                    return Ok(Err(format!(
                        "store thread {t} value {v} reads slot {s} for cell {cell:?}, which the \
                         loads also write for cell(s) {others:?}"
                    )));
                }
            }
        }
    }
    if let Some(i) = stored.iter().position(|&s| !s) {
        return Ok(Err(format!("no store takes cell {:?}", cell_of(i as i64))));
    }
    Ok(Ok(()))
}

/// Part 5 by F2 ranks, when the tile, both TV layouts and the shared layout are F2-linear
/// (powers of two, XOR swizzles): a store's slot `M(c)` holds exactly cell `c` iff `M` is
/// injective on the cells and every cell is loaded; every cell is stored iff the store map is
/// onto, and none twice iff it is also one-to-one. With `k` cell bits: the load map of rank
/// `k`, the store map a bijection on `k` bits, and the shared map (which converts as its
/// inverse, `offset -> cell`) a bijection on `k` bits. `None` when a piece is not linear.
fn f2_tile_stage(c: &StagedCopy) -> Option<bool> {
    use layout::convert::{convert, Target};
    let cells = c.tile[0].checked_mul(c.tile[1])?;
    if cells & (cells - 1) != 0 {
        return None;
    }
    let k = cells.trailing_zeros() as usize;
    let linear = |l: &Layout| match convert(l, Target::Linear, None) {
        Ok(Layout::Linear(f)) => Some(f),
        _ => None,
    };
    let onto = |l: &Layout| -> Option<bool> {
        let f = linear(l)?;
        Some(f.total_out_bits() as usize == k && layout::f2::rank(&f.columns().ok()?) == k)
    };
    let load = onto(&Layout::Tv(c.load.clone()))?;
    let store_tv = Layout::Tv(c.store.clone());
    let store = onto(&store_tv)? && linear(&store_tv)?.total_in_bits() == k;
    let m = linear(&c.smem)?;
    if m.total_in_bits() != k || m.total_out_bits() as usize != k {
        return None;
    }
    let m_bijective = layout::f2::rank(&m.columns().ok()?) == k;
    Some(load && store && m_bijective)
}

/// The `simulation` decider: `Ok(None)` when every destination element is right, else the
/// first wrong logical coordinate (row-major order) with what it holds.
fn simulate(c: &StagedCopy) -> Result<Option<String>, LayoutError> {
    let g = c.grid;
    let outside =
        |x: &[i64]| format!("logical {x:?}: an access outside the tensor passes the guard");
    let mut dst_mem: HashMap<i64, i64> = HashMap::new();
    let mut smem: HashMap<i64, i64> = HashMap::new();
    // The stages are the same in every CTA: each (thread, value)'s cell and slot, once.
    let stage = |tv: &TvLayout| -> Result<Vec<(Vec<i64>, i64)>, LayoutError> {
        let mut out = Vec::new();
        for t in 0..tv.threads() {
            for v in 0..tv.values() {
                let cell = tv.eval(t, v)?;
                let s = slot(&c.smem, c.tile, &cell)?;
                out.push((cell, s));
            }
        }
        Ok(out)
    };
    let (loads, stores) = (stage(&c.load)?, stage(&c.store)?);
    let (src_form, dst_form) = (
        FlatCute::new(&c.src_form, &c.shape)?,
        FlatCute::new(&c.dst_form, &c.shape)?,
    );
    for bz in 0..g[2] {
        for by in 0..g[1] {
            for bx in 0..g[0] {
                let b = [bx, by, bz];
                smem.clear();
                for (cell, s) in &loads {
                    let x = c.logical(b, cell);
                    if !c.active(&x) {
                        continue;
                    }
                    if !c.inside(&x) {
                        return Ok(Some(outside(&x)));
                    }
                    let value = src_form.eval(&x)?;
                    smem.insert(*s, value);
                }
                for (cell, s) in &stores {
                    let x = c.logical(b, cell);
                    if !c.active(&x) {
                        continue;
                    }
                    if !c.inside(&x) {
                        return Ok(Some(outside(&x)));
                    }
                    // A slot nothing wrote holds poison (-1): no source address is negative
                    // in a model where every source element is tagged by its address.
                    let value = smem.get(s).copied().unwrap_or(-1);
                    let at = dst_form.eval(&x)?;
                    if dst_mem.insert(at, value).is_some() {
                        return Ok(Some(format!(
                            "logical {x:?}: its destination address {at} is written twice"
                        )));
                    }
                }
            }
        }
    }
    let size: i64 = c.shape.iter().product();
    // The GIVEN layouts' semantics (a CuTe one through the same evaluation as CuteLayout::eval).
    let given = |l: &Layout| match l {
        Layout::Cute(cute) => FlatCute::new(cute, &c.shape).map(Some),
        _ => Ok(None),
    };
    let (src, dst) = (given(&c.src)?, given(&c.dst)?);
    let at = |fast: &Option<FlatCute>, l: &Layout, x: &[i64]| match fast {
        Some(f) => f.eval(x),
        None => address(l, &c.shape, x),
    };
    for i in 0..size {
        let x = layout::shape::unflatten_row_major(&c.shape, i)?;
        let want = at(&src, &c.src, &x)?;
        match dst_mem.get(&at(&dst, &c.dst, &x)?) {
            Some(&got) if got == want => {}
            Some(&got) => {
                return Ok(Some(format!(
                    "logical {x:?}: the destination holds source address {got}, not {want}"
                )))
            }
            None => return Ok(Some(format!("logical {x:?}: never written"))),
        }
    }
    Ok(None)
}

/// Decides the data-movement claim of `c` (module doc): the compositional `parts` decider,
/// and the whole-kernel `simulation` when the tensor has at most [`SIMULATION_LIMIT`]
/// elements. Bad input (pieces that do not fit) is an error.
pub fn prove_staged_copy(c: &StagedCopy, policy: &Policy) -> Result<MovementReport, LayoutError> {
    c.validate()?;
    // Property enumeration keeps every point: above 2^16 indices z3 and counting decide.
    let prop_policy = Policy {
        exhaustive_limit: policy.exhaustive_limit.min(1 << 16),
        ..policy.clone()
    };
    let mut parts = vec![
        form_part("source", &c.src, &c.src_form, &c.shape, policy)?,
        form_part("destination", &c.dst, &c.dst_form, &c.shape, policy)?,
        property_part(
            "destination injective",
            &Layout::Cute(c.dst_form.clone()),
            Property::Injective,
            &c.shape,
            &prop_policy,
        )?,
    ];
    let g = c.grid_layout()?;
    let size: i64 = c.shape.iter().product();
    let boxed = c.padded_box();
    let box_size: i64 = boxed.iter().product();
    let mut grid = property_part(
        "grid partitions the tensor",
        &Layout::Cute(g.clone()),
        Property::Bijective,
        &[g.size()],
        &prop_policy,
    )?;
    if grid.verdict == "proved" && g.size() != box_size {
        grid.verdict = "refuted".into();
        grid.evidence = format!(
            "{} (the grid covers {} of the box's {box_size} elements)",
            grid.evidence,
            g.size()
        );
    }
    grid.statement = format!(
        "G = {g} (tile x grid -> column-major index) is a bijection onto the {box_size} elements \
         of the box {boxed:?}"
    );
    parts.push(grid);
    parts.push(guard_part(c, &boxed));
    let stage = tile_stage(c)?;
    let f2 = f2_tile_stage(c);
    if f2.is_some_and(|ok| ok != stage.is_ok()) {
        return Err(bad(
            "decision",
            format!(
                "the tile stage's exhaustive and F2 deciders disagree ({:?})",
                stage.as_ref().err()
            ),
        ));
    }
    let f2_word = match f2 {
        Some(true) => "; f2 ranks: proved",
        Some(false) => "; f2 ranks: refuted",
        None => "",
    };
    parts.push(part(
        "tile stage is the identity",
        format!(
            "every store of {} reads the slot of {} that the loads of {} wrote for its own cell \
             only, and every cell is stored",
            c.store,
            c.smem.print(),
            c.load
        ),
        if stage.is_ok() { "proved" } else { "refuted" },
        match &stage {
            Ok(()) => format!(
                "exhaustive: {} loads and {} stores of one tile{f2_word}",
                c.load.threads() * c.load.values(),
                c.store.threads() * c.store.values()
            ),
            Err(why) => format!("exhaustive: {why}{f2_word}"),
        },
    ));
    let by_parts = if parts.iter().all(|p| p.verdict == "proved") {
        "proved"
    } else if parts.iter().any(|p| p.verdict == "refuted") {
        "refuted"
    } else {
        "unknown"
    };
    let mut deciders = vec![("parts".to_string(), by_parts.to_string())];
    let mut detail = parts
        .iter()
        .find(|p| p.verdict != "proved")
        .map(|p| format!("{}: {}", p.name, p.evidence));
    if size <= SIMULATION_LIMIT && box_size <= SIMULATION_BOX_LIMIT {
        let sim = simulate(c)?;
        let said = if sim.is_none() { "proved" } else { "refuted" };
        deciders.push(("simulation".into(), said.into()));
        if by_parts != "unknown" && by_parts != said {
            return Err(bad(
                "decision",
                format!(
                    "the parts and simulation deciders disagree ({by_parts} vs {said}: {})",
                    sim.or(detail).unwrap_or_default()
                ),
            ));
        }
        if let Some(why) = sim {
            detail = Some(why);
        }
        return Ok(MovementReport {
            verdict: said,
            parts,
            deciders,
            detail,
        });
    }
    Ok(MovementReport {
        verdict: by_parts,
        parts,
        deciders,
        detail,
    })
}

/// The format version of [`MovementCertificate`]. Version 2 added the launched grid and the
/// guard (predicated edge tiles); a version-1 certificate is read with the grid its tile
/// divides out (floor) and the guard at the tensor's bounds, as version 1 meant.
pub const VERSION: u32 = 2;

/// A data-movement certificate: the claim's layouts as text, the verdict and its parts.
/// [`check`] re-decides it from the layouts alone.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MovementCertificate {
    /// Format version.
    pub version: u32,
    /// Always `movement`.
    pub kind: String,
    /// The tensor's shape.
    pub shape: Vec<i64>,
    /// The source layout as given.
    pub src: String,
    /// The destination layout as given.
    pub dst: String,
    /// The source form.
    pub src_form: String,
    /// The destination form.
    pub dst_form: String,
    /// The tile's first and second dimensions.
    pub tile_dims: [usize; 2],
    /// The z dimension.
    pub z_dim: Option<usize>,
    /// The tile.
    pub tile: [i64; 2],
    /// The launched grid (absent in version 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grid: Option<[i64; 3]>,
    /// The guard (absent in version 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guard: Option<[i64; 2]>,
    /// The load TV layout (`layout -> tile` text).
    pub load: String,
    /// The store TV layout.
    pub store: String,
    /// The shared-memory layout.
    pub smem: String,
    /// The verdict.
    pub verdict: String,
    /// The parts.
    pub parts: Vec<Part>,
    /// The deciders and their answers.
    pub deciders: Vec<(String, String)>,
    /// SHA-256 over the other fields.
    pub digest: String,
}

impl MovementCertificate {
    /// The certificate of `c` and its report.
    pub fn new(c: &StagedCopy, r: &MovementReport) -> Self {
        let mut out = MovementCertificate {
            version: VERSION,
            kind: "movement".into(),
            shape: c.shape.clone(),
            src: c.src.print(),
            dst: c.dst.print(),
            src_form: c.src_form.to_string(),
            dst_form: c.dst_form.to_string(),
            tile_dims: c.tile_dims,
            z_dim: c.z_dim,
            tile: c.tile,
            grid: Some(c.grid),
            guard: Some(c.guard),
            load: c.load.to_string(),
            store: c.store.to_string(),
            smem: c.smem.print(),
            verdict: r.verdict.into(),
            parts: r.parts.clone(),
            deciders: r.deciders.clone(),
            digest: String::new(),
        };
        out.digest = out.compute_digest();
        out
    }

    /// SHA-256 over every field but the digest.
    pub fn compute_digest(&self) -> String {
        let mut c = self.clone();
        c.digest = String::new();
        let text = serde_json::to_string(&c).expect("serializable");
        format!("{:x}", Sha256::digest(text.as_bytes()))
    }

    /// Pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("serializable")
    }

    /// The claim, re-read from the text fields.
    pub fn staged_copy(&self) -> Result<StagedCopy, String> {
        let layout =
            |what: &str, t: &str| Layout::parse(t, None).map_err(|e| format!("{what} {t:?}: {e}"));
        let cute = |what: &str, t: &str| match layout(what, t)? {
            Layout::Cute(c) => Ok(c),
            other => Err(format!("{what} {}: not a CuTe layout", other.print())),
        };
        let tv = |what: &str, t: &str| match layout(what, t)? {
            Layout::Tv(tv) => Ok(tv),
            other => Err(format!("{what} {}: not a TV layout", other.print())),
        };
        let src = layout("src", &self.src)?;
        let dst = layout("dst", &self.dst)?;
        let dim = |d: usize| {
            self.shape
                .get(d)
                .copied()
                .ok_or_else(|| format!("dimension {d} is not in the shape {:?}", self.shape))
        };
        let [f, s] = self.tile_dims;
        // Version 1: the grid the tile divides out, the guard at the tensor's bounds.
        let grid = match self.grid {
            Some(g) => g,
            None => [
                dim(f)?.checked_div(self.tile[0]).unwrap_or(0),
                dim(s)?.checked_div(self.tile[1]).unwrap_or(0),
                match self.z_dim {
                    Some(z) => dim(z)?,
                    None => 1,
                },
            ],
        };
        let guard = match self.guard {
            Some(g) => g,
            None => [dim(f)?, dim(s)?],
        };
        Ok(StagedCopy {
            shape: self.shape.clone(),
            src,
            dst,
            src_form: cute("src_form", &self.src_form)?,
            dst_form: cute("dst_form", &self.dst_form)?,
            tile_dims: self.tile_dims,
            z_dim: self.z_dim,
            tile: self.tile,
            grid,
            guard,
            load: tv("load", &self.load)?,
            store: tv("store", &self.store)?,
            smem: layout("smem", &self.smem)?,
        })
    }
}

/// Re-checks a movement certificate: its digest, then the claim re-decided from its layouts
/// must give the same verdict and parts.
pub fn check(text: &str) -> Result<MovementCertificate, String> {
    let c: MovementCertificate =
        serde_json::from_str(text).map_err(|e| format!("not a movement certificate: {e}"))?;
    let versioned = match c.version {
        1 => c.grid.is_none() && c.guard.is_none(),
        VERSION => c.grid.is_some() && c.guard.is_some(),
        _ => false,
    };
    if !versioned || c.kind != "movement" {
        return Err(format!("kind {:?} version {}", c.kind, c.version));
    }
    if c.digest != c.compute_digest() {
        return Err("the digest does not match the contents (edited after it was written)".into());
    }
    let claim = c.staged_copy()?;
    let mut r = prove_staged_copy(&claim, &Policy::default()).map_err(|e| e.to_string())?;
    if c.version == 1 {
        // Version 1 listed no guard part (its grid and guard are implied, see `VERSION`).
        r.parts.retain(|p| p.name != "guards select the tensor");
    }
    if r.verdict != c.verdict {
        return Err(format!(
            "the certificate says {}, re-deciding gives {}{}",
            c.verdict,
            r.verdict,
            r.detail.map(|d| format!(" ({d})")).unwrap_or_default()
        ));
    }
    for (mine, theirs) in r.parts.iter().zip(&c.parts) {
        if mine.name != theirs.name || mine.verdict != theirs.verdict {
            return Err(format!(
                "part {:?} says {}, re-deciding {:?} gives {}",
                theirs.name, theirs.verdict, mine.name, mine.verdict
            ));
        }
        // What `check` prints and a reader trusts is what it re-derived: each part's statement
        // too (session 24's audit: a statement equating a layout with its transpose re-checked).
        // The evidence is not compared: it records what the deciders said when the certificate
        // was written, which depends on their time limits (a slower machine's z3 may time out
        // where another's proves), and `check` does not print it.
        if mine.statement != theirs.statement {
            return Err(format!(
                "part {:?}: its statement is {:?}, re-deciding gives {:?}",
                theirs.name, theirs.statement, mine.statement
            ));
        }
    }
    if r.parts.len() != c.parts.len() {
        return Err(format!(
            "{} parts listed, {} re-decided",
            c.parts.len(),
            r.parts.len()
        ));
    }
    if r.deciders != c.deciders {
        return Err(format!(
            "the certificate lists the deciders {:?}, re-deciding ran {:?}",
            c.deciders, r.deciders
        ));
    }
    Ok(c)
}

#[cfg(test)]
mod address_tests {
    use super::address;
    use layout::Layout;

    #[test]
    fn flat_cute_evaluates_like_cute_eval() {
        let Layout::Cute(l) = Layout::parse("((4,3),(5,2)):((1,40),(4,20))", None).unwrap() else {
            panic!("CuTe")
        };
        for shape in [vec![12, 10], vec![3, 4, 10], vec![120]] {
            let f = super::FlatCute::new(&l, &shape).unwrap();
            for i in 0..120 {
                let x = layout::shape::unflatten_row_major(&shape, i).unwrap();
                assert_eq!(
                    f.eval(&x).unwrap(),
                    l.eval(&shape, &x).unwrap(),
                    "{shape:?} {x:?}"
                );
            }
        }
        assert!(super::FlatCute::new(&l, &[7, 7]).is_err());
    }

    #[test]
    fn address_adds_the_aliases_of_m() {
        // 2@m + 1@offset at (1,1) is offset 3 (the point {m:2, offset:1} was refused).
        let l = Layout::parse("S[(2,2):(2@m,1@offset)]", None).unwrap();
        assert_eq!(address(&l, &[2, 2], &[1, 1]).unwrap(), 3);
        let t = Layout::parse("S[(2,2):(2@m,1@tx)]", None).unwrap();
        assert!(address(&t, &[2, 2], &[1, 1]).is_err());
    }
}
