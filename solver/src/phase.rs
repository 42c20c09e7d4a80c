//! [`Phase`]: how the threads of a CTA walk the tile in one direction.
//!
//! The tile has two axes, FIRST (the source's fastest logical dimension) and SECOND. A phase
//! moves `vec` consecutive elements per access along its axis: thread `t` at iteration `k`
//! takes value `e` (`0 <= e < vec`) at
//!
//! - along = first:  `(f, s) = ((t % lanes) * vec + e, t / lanes + k * rows)`
//! - along = second: `(f, s) = (t / lanes + k * rows, (t % lanes) * vec + e)`
//!
//! with `lanes = tile_along / vec` threads side by side and `rows = threads / lanes`.
//! Example: a 32x32 f32 tile, 256 threads, `vec = 4` along first: thread 9 at `k = 0`, `e = 2`
//! holds `(f, s) = (6, 1)`. As a CuTe TV layout over the column-major tile this is
//! `((8,32),(4,1)):((4,32),(1,1024))`.

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
    /// Rows covered by all threads at once.
    pub rows: i64,
    /// Iterations to cover the tile.
    pub iters: i64,
    /// Elements per shared-memory access (divides `vec`).
    pub smem_vec: i64,
}

impl Phase {
    /// Lays `threads` over a `tile` = `[first, second]` with vectors of `vec` along `along`.
    pub fn new(along: Along, vec: i64, tile: [i64; 2], threads: i64) -> Result<Phase, PlanError> {
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
        let lanes = len / vec;
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
            rows,
            iters: other / rows,
            smem_vec: 1,
        })
    }

    /// Values per thread.
    pub fn values(&self) -> i64 {
        self.vec * self.iters
    }

    /// The tile coordinate `(f, s)` of thread `t`, iteration `k`, element `e`.
    pub fn coord(&self, t: i64, k: i64, e: i64) -> (i64, i64) {
        let along = (t % self.lanes) * self.vec + e;
        let across = t / self.lanes + k * self.rows;
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
        let shape = nested(&[&[self.lanes, self.rows], &[self.vec, self.iters]]);
        let stride = nested(&[&[self.vec * along, across], &[along, self.rows * across]]);
        Ok(TvLayout::new(
            CuteLayout::new(shape, stride)?,
            tile.to_vec(),
        )?)
    }
}

fn nested(modes: &[&[i64]]) -> IntTuple {
    IntTuple::Tuple(modes.iter().map(|m| IntTuple::flat(m)).collect())
}
