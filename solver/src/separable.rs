//! [`Separable`]: a global memory layout split into one strided sum per logical dimension.
//!
//! A copy kernel computes each element's address from its logical coordinate. Every CuTe
//! layout whose colexicographic modes can be cut at the logical dimensions' boundaries (and every
//! Axe layout over `m` that converts to such a CuTe layout) is a sum of per-dimension terms
//! `offset(c) = sum_d term_d(c_d)` with `term_d(x) = sum_k ((x / P_k) % e_k) * s_k`, where
//! `(e_k, s_k)` are dimension d's modes and `P_k` the product of the earlier extents.
//!
//! Example: `((32,256),(32,256)):((1,1024),(32,32768))` over (8192, 8192) has dimension 0 modes
//! `[(32,1),(256,1024)]` and dimension 1 modes `[(32,32),(256,32768)]`; coordinate (33, 2) lands
//! at `1*1 + 1*1024 + 2*32 = 1089`.

use layout::convert::{convert, Target};
use layout::cute::{CuteLayout, IntTuple};
use layout::Layout;

use crate::error::PlanError;

/// Per-dimension modes `(extent, stride)`, innermost first, of a global layout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Separable {
    shape: Vec<i64>,
    dims: Vec<Vec<(i64, i64)>>,
}

impl Separable {
    /// Splits `l` over the logical `shape`. `which` names the layout in errors (`source`,
    /// `destination`). Refuses layouts with negative strides, modes that straddle two logical
    /// dimensions unevenly, and notations other than CuTe and Axe over one axis.
    ///
    /// ```
    /// use layout::Layout;
    /// use solver::Separable;
    /// let l = Layout::parse("((32,256),(32,256)):((1,1024),(32,32768))", None)?;
    /// let s = Separable::from_layout("source", &l, &[8192, 8192])?;
    /// assert_eq!(s.dims()[0], vec![(32, 1), (256, 1024)]);
    /// assert_eq!(s.eval(&[33, 2])?, 1089);
    /// # Ok::<(), solver::PlanError>(())
    /// ```
    pub fn from_layout(which: &'static str, l: &Layout, shape: &[i64]) -> Result<Self, PlanError> {
        let unsupported = |why: String| PlanError::Unsupported {
            which,
            layout: l.print(),
            why,
        };
        if shape.is_empty() || shape.iter().any(|&e| e < 1) {
            return Err(PlanError::Shape {
                shape: shape.to_vec(),
                why: "every extent must be at least 1".into(),
            });
        }
        let cute =
            match l {
                Layout::Cute(c) => c.clone(),
                Layout::Axe(_) => match convert(l, Target::Cute, Some(shape)) {
                    Ok(Layout::Cute(c)) => c,
                    Ok(other) => return Err(unsupported(format!("converts to {}", other.print()))),
                    Err(e) => return Err(unsupported(format!("no CuTe form over one axis: {e}"))),
                },
                _ => return Err(unsupported(
                    "a global layout must be CuTe shape:stride or Axe over m (a swizzled, TV or \
                     linear layout does not give one address per logical element)"
                        .into(),
                )),
            };
        cute.check_shape(shape)?;
        let mut dims: Vec<Vec<(i64, i64)>> = vec![Vec::new(); shape.len()];
        let mut d = 0usize;
        let mut left = shape[0];
        for (e0, s0) in cute.flat_modes() {
            if s0 < 0 {
                return Err(unsupported(format!("stride {s0} is negative")));
            }
            let (mut e, mut s) = (e0, s0);
            while e > 1 {
                while left == 1 {
                    d += 1;
                    left = *shape.get(d).ok_or_else(|| {
                        unsupported("its modes reach past the last logical dimension".into())
                    })?;
                }
                if left % e == 0 {
                    dims[d].push((e, s));
                    left /= e;
                    e = 1;
                } else if e % left == 0 {
                    dims[d].push((left, s));
                    s = s
                        .checked_mul(left)
                        .ok_or(PlanError::Overflow("mode split"))?;
                    e /= left;
                    left = 1;
                } else {
                    return Err(unsupported(format!(
                        "mode {e0}:{s0} straddles logical dimension {d} (extent {}) unevenly, so \
                         the address is not a sum of per-dimension terms",
                        shape[d]
                    )));
                }
            }
        }
        Ok(Separable {
            shape: shape.to_vec(),
            dims,
        })
    }

    /// The logical shape.
    pub fn shape(&self) -> &[i64] {
        &self.shape
    }

    /// Modes `(extent, stride)` of each logical dimension, innermost first.
    pub fn dims(&self) -> &[Vec<(i64, i64)>] {
        &self.dims
    }

    /// `term_d(x)`: dimension d's contribution to the offset at coordinate x.
    pub fn term(&self, d: usize, x: i64) -> Result<i64, PlanError> {
        let mut rest = x;
        let mut out = 0i64;
        for &(e, s) in &self.dims[d] {
            out = (rest % e)
                .checked_mul(s)
                .and_then(|v| out.checked_add(v))
                .ok_or(PlanError::Overflow("offset term"))?;
            rest /= e;
        }
        Ok(out)
    }

    /// The offset of a logical coordinate (errors outside the shape).
    pub fn eval(&self, coord: &[i64]) -> Result<i64, PlanError> {
        layout::shape::flatten_col_major(&self.shape, coord)?;
        let mut out = 0i64;
        for (d, &x) in coord.iter().enumerate() {
            out = out
                .checked_add(self.term(d, x)?)
                .ok_or(PlanError::Overflow("offset"))?;
        }
        Ok(out)
    }

    /// The same map as one CuTe layout, one top-level mode per logical dimension; certify
    /// proves it equal to the layout it came from.
    pub fn to_cute(&self) -> Result<CuteLayout, PlanError> {
        let modes = |pick: fn(&(i64, i64)) -> i64| {
            IntTuple::Tuple(
                self.dims
                    .iter()
                    .map(|m| {
                        if m.is_empty() {
                            IntTuple::Int(pick(&(1, 0)))
                        } else {
                            IntTuple::Tuple(m.iter().map(|x| IntTuple::Int(pick(x))).collect())
                        }
                    })
                    .collect(),
            )
        };
        Ok(CuteLayout::new(modes(|m| m.0), modes(|m| m.1))?)
    }

    /// Largest offset reached plus one (the buffer length in elements).
    pub fn cosize(&self) -> Result<i64, PlanError> {
        let mut hi = 0i64;
        for &(e, s) in self.dims.iter().flatten() {
            hi = (e - 1)
                .checked_mul(s)
                .and_then(|v| hi.checked_add(v))
                .ok_or(PlanError::Overflow("cosize"))?;
        }
        hi.checked_add(1).ok_or(PlanError::Overflow("cosize"))
    }

    /// Length of the unit-stride run along dimension d: the product of its leading modes while
    /// each stride equals the product before it (1 when the first stride is not 1).
    pub fn contiguous_run(&self, d: usize) -> i64 {
        let mut run = 1i64;
        for &(e, s) in &self.dims[d] {
            if s != run {
                break;
            }
            match run.checked_mul(e) {
                Some(r) => run = r,
                None => break,
            }
        }
        run
    }

    /// Widest vector (in elements) for accesses along dimension d that start at multiples of it:
    /// a power of two dividing the contiguous run and `tile`, at most 16 bytes, and dividing every
    /// stride outside the run, so that every vector is contiguous and aligned.
    pub fn vector_width(&self, d: usize, elem_bytes: i64, tile: i64) -> i64 {
        let run = self.contiguous_run(d);
        let mut covered = 1i64;
        let mut inside = 0usize;
        for &(e, _) in &self.dims[d] {
            if covered >= run {
                break;
            }
            covered *= e;
            inside += 1;
        }
        let outside: Vec<i64> = self
            .dims
            .iter()
            .enumerate()
            .flat_map(|(i, m)| {
                let skip = if i == d { inside } else { 0 };
                m.iter().skip(skip).map(|&(_, s)| s)
            })
            .collect();
        let mut w = 1i64;
        while w * 2 * elem_bytes <= 16
            && run % (w * 2) == 0
            && tile % (w * 2) == 0
            && outside.iter().all(|s| s % (w * 2) == 0)
        {
            w *= 2;
        }
        w
    }

    /// The dimension of the smallest innermost stride (a unit-stride one when there is one);
    /// ties go to the lower dimension. `except` excludes a dimension.
    pub fn fastest_dim(&self, except: Option<usize>) -> Option<usize> {
        (0..self.dims.len())
            .filter(|&d| Some(d) != except && self.shape[d] > 1)
            .min_by_key(|&d| (self.dims[d].first().map_or(i64::MAX, |m| m.1), d))
    }

    /// A sufficient check of injectivity: sorted by stride, every mode's stride is at least the
    /// span of the modes below it (so no two coordinates share an offset). `None` when it holds,
    /// else the pair of modes that overlap.
    pub fn overlapping_modes(&self) -> Option<((i64, i64), (i64, i64))> {
        let mut modes: Vec<(i64, i64)> = self.dims.iter().flatten().copied().collect();
        modes.sort_by_key(|&(e, s)| (s, e));
        let mut span = 1i64;
        let mut prev = (1, 1);
        for &(e, s) in &modes {
            if s < span {
                return Some((prev, (e, s)));
            }
            span = match s.checked_mul(e) {
                Some(v) => v,
                None => return Some((prev, (e, s))),
            };
            prev = (e, s);
        }
        None
    }
}
