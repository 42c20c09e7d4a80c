//! [`Phase`]: how the threads of a CTA walk the tile in one direction.
//!
//! The tile has two axes, FIRST (the source's fastest logical dimension) and SECOND. A phase
//! moves `vec` consecutive elements per access along its axis: thread `t` at iteration `k`
//! takes value `e` (`0 <= e < vec`) at
//!
//! - along = first:  `(f, s) = (a, r)`
//! - along = second: `(f, s) = (r, a)`
//!
//! with `a = (t % lanes) * vec + e + (k % segs) * lanes * vec` along the axis and
//! `r = t / lanes + (k / segs) * rows` across it: `lanes` threads side by side cover
//! `lanes * vec` elements of a run, `segs = tile_along / (lanes * vec)` consecutive iterations
//! cover the whole run, and `rows = threads / lanes`.
//! Example: a 32x32 f32 tile, 256 threads, `vec = 4` along first: thread 9 at `k = 0`, `e = 2`
//! holds `(f, s) = (6, 1)`. As a CuTe TV layout over the column-major tile this is
//! `((8,32),(4,1)):((4,32),(1,1024))` (with `segs > 1` the value mode is `(vec, segs, iters /
//! segs)`).
//!
//! Runs longer than a warp's accesses (`tile_along / vec > 32`, e.g. 128 single f32 at an odd
//! pitch) are written by ONE warp in `segs` consecutive accesses ([`Phase::warp_runs`]) rather
//! than by `tile_along / vec` threads side by side: on the H200 the 8191x4097 f32 transpose
//! goes from 86.0-87.3% to 90.5-91.2% of a device copy (bench/gpu/README.md).

use layout::cute::{CuteLayout, IntTuple, TvLayout};

use crate::error::PlanError;

/// Which tile axis a phase's vectors run along.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Along {
    /// The tile's first axis.
    First,
    /// The tile's second axis.
    Second,
}

/// One direction of traffic through the tile (the global load, or the global store).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Phase {
    /// Axis of the vectors.
    pub along: Along,
    /// Elements per global access.
    pub vec: i64,
    /// Threads side by side along the axis.
    pub lanes: i64,
    /// Consecutive iterations that cover one run of the axis (`tile_along / (lanes * vec)`).
    pub segs: i64,
    /// Rows covered by all threads at once.
    pub rows: i64,
    /// Iterations to cover the tile.
    pub iters: i64,
    /// Elements per shared-memory access (divides `vec`).
    pub smem_vec: i64,
}

impl Phase {
    /// Lays `threads` over a `tile` = `[first, second]` with vectors of `vec` along `along`,
    /// `tile_along / vec` threads side by side (one iteration covers a run).
    pub fn new(along: Along, vec: i64, tile: [i64; 2], threads: i64) -> Result<Phase, PlanError> {
        Phase::with_lanes(along, vec, tile, threads, None)
    }

    /// As [`Phase::new`], but a run of more than 32 vectors is covered by one warp in
    /// consecutive iterations (`lanes = 32`, `segs = tile_along / (32 * vec)`) wherever the
    /// `threads / 32` rows of threads tile the other extent.
    pub fn warp_runs(
        along: Along,
        vec: i64,
        tile: [i64; 2],
        threads: i64,
    ) -> Result<Phase, PlanError> {
        Phase::with_lanes(along, vec, tile, threads, Some(32))
    }

    fn with_lanes(
        along: Along,
        vec: i64,
        tile: [i64; 2],
        threads: i64,
        most_lanes: Option<i64>,
    ) -> Result<Phase, PlanError> {
        let (len, other) = match along {
            Along::First => (tile[0], tile[1]),
            Along::Second => (tile[1], tile[0]),
        };
        let bad = |why: String| PlanError::Option {
            what: "threads",
            why,
        };
        if vec < 1 || len % vec != 0 {
            return Err(bad(format!(
                "vector {vec} does not divide the tile extent {len}"
            )));
        }
        let mut lanes = len / vec;
        if let Some(w) = most_lanes {
            // Only where a warp-wide row of threads still tiles the other extent.
            let rows = threads / w;
            if lanes > w && lanes % w == 0 && threads % w == 0 && rows <= other && other % rows == 0
            {
                lanes = w;
            }
        }
        // A line (the other extent 1): one row of threads walks it in consecutive iterations.
        if other == 1 && lanes > threads && threads > 0 && lanes % threads == 0 {
            lanes = threads;
        }
        let segs = len / vec / lanes;
        if threads % lanes != 0 {
            return Err(bad(format!(
                "{threads} threads are not a multiple of {lanes} lanes"
            )));
        }
        let rows = threads / lanes;
        if rows > other || other % rows != 0 {
            return Err(bad(format!(
                "{rows} rows of threads do not tile the other extent {other}"
            )));
        }
        Ok(Phase {
            along,
            vec,
            lanes,
            segs,
            rows,
            iters: segs * (other / rows),
            smem_vec: 1,
        })
    }

    /// Values per thread.
    pub fn values(&self) -> i64 {
        self.vec * self.iters
    }

    /// The tile coordinate `(f, s)` of thread `t`, iteration `k`, element `e`.
    pub fn coord(&self, t: i64, k: i64, e: i64) -> (i64, i64) {
        let along = (t % self.lanes) * self.vec + e + (k % self.segs) * self.lanes * self.vec;
        let across = t / self.lanes + (k / self.segs) * self.rows;
        match self.along {
            Along::First => (along, across),
            Along::Second => (across, along),
        }
    }

    /// The phase as a CuTe TV layout `(thread, value) -> tile index` over the column-major tile,
    /// value `v = e + vec * k`.
    pub fn tv(&self, tile: [i64; 2]) -> Result<TvLayout, PlanError> {
        let (sf, ss) = (1, tile[0]);
        let (along, across) = match self.along {
            Along::First => (sf, ss),
            Along::Second => (ss, sf),
        };
        let (vshape, vstride) = if self.segs == 1 {
            (vec![self.vec, self.iters], vec![along, self.rows * across])
        } else {
            let run = self.lanes * self.vec * along;
            (
                vec![self.vec, self.segs, self.iters / self.segs],
                vec![along, run, self.rows * across],
            )
        };
        let shape = nested(&[&[self.lanes, self.rows], &vshape]);
        let stride = nested(&[&[self.vec * along, across], &vstride]);
        Ok(TvLayout::new(
            CuteLayout::new(shape, stride)?,
            tile.to_vec(),
        )?)
    }
}

fn nested(modes: &[&[i64]]) -> IntTuple {
    IntTuple::Tuple(modes.iter().map(|m| IntTuple::flat(m)).collect())
}
