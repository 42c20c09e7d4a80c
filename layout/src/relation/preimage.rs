//! The inputs of a TV or linear layout that hold one cell, found without reading every input,
//! and certified complete.
//!
//! A layout read backwards ([`Inputs`]) says which cell each input holds. Reading every input
//! to find those holding a cell `c` costs the number of inputs (2^25 for a 4096 x 8192 tile);
//! the PREIMAGE of `c` is usually a handful. [`Preimages::holding`] finds it by the notation's
//! own structure, and every input it returns is evaluated forwards ([`Inputs::cell_of_input`])
//! and holds `c`. That makes the answer a subset of the preimage; each search also checks, at
//! run time, the facts that make it the WHOLE preimage (a missed input would hide a point of
//! `c`, e.g. a replica one layout has and another lacks). A failed check is
//! [`LayoutError::Undecided`], never a wrong set.
//!
//! # Linear layouts: an affine subspace
//!
//! The cell of input `x` is `B x` over F2, a vector of out-dim values combined by XOR
//! (`layout::linear`). Its inputs are an F2 vector too: one value per in-dim, bit `k` of in-dim
//! `d` being input bit `(d, k)`. Elimination, once per layout, over the unit inputs in the order
//! `(d, k)`: each unit input's image (evaluated forwards) is reduced by the pivots found so far
//! (XOR of a pivot whose image has the same TOP bit, [`top`]: the greatest `(component, bit)`
//! set), carrying the input along; a non-zero result is a new pivot, a zero one a kernel
//! vector. [`Preimages::new`] then checks, by forward evaluation of each carried input:
//!
//! - the `r` pivots' images are their inputs' images and have distinct top bits, so they are
//!   independent: `rank B >= r`;
//! - the `k` kernel vectors map to 0 and have distinct top bits (input bit order), so they are
//!   independent: `dim ker B >= k`;
//! - `r + k` is the number of input bits `n`.
//!
//! By rank-nullity (`rank + dim ker = n`) both bounds are equalities: the kernel is exactly the
//! span of the kernel vectors, and the image the span of the pivot images. For a cell `c`,
//! reducing `c` by the pivots either reaches 0, and the inputs carried XOR to `x0` with
//! `B x0 = c`, so the preimage is `x0 + ker B`: `2^k` inputs, listed and each evaluated; or stops
//! at a non-zero top bit no pivot has: then `c` is outside the image (a non-zero combination of
//! pivot images has the greatest of their distinct top bits), and no input holds `c`.
//!
//! Example: `register = [[1], [1]]` into (2): pivot `register = 1` (image 1), kernel vector
//! `register = 3`; cell 1 is held by `{1, 1 ^ 3 = 2}`, cell 0 by `{0, 3}`.
//!
//! # TV layouts: a bounded search over digits
//!
//! Input `(t, v)` holds the cell at column-major index `T(t) + V(v)` of the tile, `T` and `V`
//! the thread and value modes; flattened, that index is `sum_i d_i s_i` over every flat mode
//! `(e_i, s_i)` of both, digit `0 <= d_i < e_i`, strides `s_i >= 0` (a TV layout has no negative
//! stride). The search assigns the digits mode by mode, largest stride first, keeping the rest
//! `r` of the index; with `R` the most the modes after this one can add (`sum (e_j - 1) s_j`),
//! every solution's digit `d` satisfies `0 <= r - d s <= R`. The search visits exactly those
//! digits, and checks that they are all of them: for `s > 0` the condition holds on an interval
//! `[a, b]` of integers (`r - d s` decreases in `d`), and the search checks its ends (`a` and
//! `b` satisfy it, `a - 1` and `b + 1` do not) before visiting `[a, b]` within `[0, e)`. So every
//! solution is reached: the search prunes only what no solution satisfies. Each step is counted
//! against the caller's [`Budget`] (dead ends included), so a layout whose strides leave gaps
//! cannot make it run long.
//!
//! Example: `(4,2):(2,1) -> (8,)`, cell (5): modes by stride `(4,2), (2,1)`; `d = 2` leaves 1
//! (`0 <= 1 <= 1`), then `d = 1`: input `(2, 1)`, and no other.

use crate::cute::TvLayout;
use crate::error::{LayoutError, Result};
use crate::linear::LinearLayout;
use crate::shape;

use super::Inputs;

/// Most inputs one [`Budget`] lists, each evaluated forwards (and by the cross-check given its
/// point): 2^22, the most inputs the cross-check read before it searched, so whatever it
/// confirmed then it confirms now (over a whole domain it lists each input once).
pub const MAX_LISTED: i64 = 1 << 22;

/// Most search steps (a digit tried) one [`Budget`] allows: 2^24, each a few integer operations.
pub const MAX_STEPS: i64 = 1 << 24;

/// Work left to a search, shared by the calls of one caller (its work adds up): inputs listed
/// and search steps.
#[derive(Clone, Debug)]
pub struct Budget {
    /// Inputs listed: `[left, limit]`.
    listed: [i64; 2],
    /// Search steps: `[left, limit]`.
    steps: [i64; 2],
    used: u64,
}

impl Default for Budget {
    /// [`MAX_LISTED`] inputs and [`MAX_STEPS`] steps.
    fn default() -> Budget {
        Budget::new(MAX_LISTED, MAX_STEPS)
    }
}

impl Budget {
    /// A budget of `listed` inputs and `steps` search steps.
    pub fn new(listed: i64, steps: i64) -> Budget {
        Budget {
            listed: [listed; 2],
            steps: [steps; 2],
            used: 0,
        }
    }

    /// Inputs listed plus steps taken so far.
    pub fn used(&self) -> u64 {
        self.used
    }

    /// Lists `n` inputs, or says which limit they are past.
    fn list(&mut self, n: i64) -> Result<()> {
        Budget::take(&mut self.listed, &mut self.used, n, "inputs listed")
    }

    /// Takes `n` search steps, or says which limit they are past.
    fn step(&mut self, n: i64) -> Result<()> {
        Budget::take(&mut self.steps, &mut self.used, n, "search steps")
    }

    fn take([left, limit]: &mut [i64; 2], used: &mut u64, n: i64, what: &str) -> Result<()> {
        if n > *left {
            return Err(LayoutError::Undecided {
                reason: format!(
                    "reading the layout backwards needs {n} more {what}, {left} left of the limit {limit}"
                ),
            });
        }
        *left -= n;
        *used += n as u64;
        Ok(())
    }
}

/// A layout read backwards, prepared to find the inputs holding a cell (module doc).
#[derive(Clone, Debug)]
pub enum Preimages<'l> {
    /// A TV layout's flat modes, largest stride first.
    Tv(TvSearch<'l>),
    /// A linear layout's checked elimination.
    Linear(Echelon<'l>),
}

impl<'l> Preimages<'l> {
    /// Prepares the search (for a linear layout: the elimination and its checks).
    pub fn new(inputs: &Inputs<'l>) -> Result<Preimages<'l>> {
        Ok(match inputs {
            Inputs::Tv(t, _, _) => Preimages::Tv(TvSearch::new(t)?),
            Inputs::Linear(f, _) => Preimages::Linear(Echelon::new(f)?),
        })
    }

    /// Every input holding `cell`, each as its components (TV `[thread, value]`, linear one
    /// value per in-dim), each evaluated forwards and holding `cell`. Past `budget`,
    /// [`LayoutError::Undecided`].
    pub fn holding(&self, cell: &[i64], budget: &mut Budget) -> Result<Vec<Vec<i64>>> {
        match self {
            Preimages::Tv(s) => s.holding(cell, budget),
            Preimages::Linear(e) => e.holding(cell, budget),
        }
    }
}

/// A failed run-time check of a search: no answer (the module doc's checks never fail unless
/// this module is wrong).
fn unchecked(what: String) -> LayoutError {
    LayoutError::Undecided {
        reason: format!("the preimage search failed its own check: {what}"),
    }
}

/// The greatest set bit of an F2 vector held as integers, as `(component, bit)`: the last
/// non-zero component and its highest bit. `None` for the zero vector.
/// Example: `top(&[5, 2, 0]) == Some((1, 1))`.
pub fn top(v: &[i64]) -> Option<(usize, u32)> {
    let (i, x) = v.iter().enumerate().rev().find(|(_, x)| **x != 0)?;
    Some((i, 63 - x.leading_zeros()))
}

/// `v ^= w`, component by component.
fn xor_into(v: &mut [i64], w: &[i64]) {
    v.iter_mut().zip(w).for_each(|(a, b)| *a ^= b);
}

/// A linear layout's elimination (module doc): pivots by the top bit of their image, and the
/// kernel, each with the input it was carried from.
#[derive(Clone, Debug)]
pub struct Echelon<'l> {
    f: &'l LinearLayout,
    /// `(image, input)` with `image = f(input)`, distinct top bits of the images.
    pivots: Vec<(Vec<i64>, Vec<i64>)>,
    /// Inputs mapped to 0, distinct top bits.
    kernel: Vec<Vec<i64>>,
}

impl<'l> Echelon<'l> {
    /// Eliminates the unit inputs in the order `(d, k)`, then checks the result (module doc).
    pub fn new(f: &'l LinearLayout) -> Result<Echelon<'l>> {
        let mut e = Echelon {
            f,
            pivots: Vec::new(),
            kernel: Vec::new(),
        };
        for (d, dim) in f.ins().iter().enumerate() {
            for k in 0..dim.bases.len() {
                let mut input = vec![0i64; f.ins().len()];
                input[d] = 1 << k;
                let mut image = f.apply(&input)?;
                while let Some(p) = top(&image).and_then(|t| e.pivot(t)) {
                    xor_into(&mut image, &p.0);
                    xor_into(&mut input, &p.1);
                }
                match top(&image) {
                    Some(_) => e.pivots.push((image, input)),
                    None => e.kernel.push(input),
                }
            }
        }
        e.check()?;
        Ok(e)
    }

    /// The pivot whose image's top bit is `t`.
    fn pivot(&self, t: (usize, u32)) -> Option<&(Vec<i64>, Vec<i64>)> {
        self.pivots.iter().find(|(image, _)| top(image) == Some(t))
    }

    /// The module doc's three checks, by forward evaluation.
    fn check(&self) -> Result<()> {
        let distinct = |tops: Vec<Option<(usize, u32)>>| {
            let set: std::collections::BTreeSet<_> = tops.iter().collect();
            set.len() == tops.len() && !set.contains(&None)
        };
        for (image, input) in &self.pivots {
            if &self.f.apply(input)? != image {
                return Err(unchecked(format!("pivot input {input:?} is not {image:?}")));
            }
        }
        for input in &self.kernel {
            if self.f.apply(input)?.iter().any(|&v| v != 0) {
                return Err(unchecked(format!("kernel input {input:?} is not 0")));
            }
        }
        let images = self.pivots.iter().map(|(i, _)| top(i)).collect();
        let kernel = self.kernel.iter().map(|x| top(x)).collect();
        if !distinct(images) || !distinct(kernel) {
            return Err(unchecked("top bits repeat".into()));
        }
        if self.pivots.len() + self.kernel.len() != self.f.total_in_bits() {
            return Err(unchecked(format!(
                "rank {} + kernel {} is not {} input bits",
                self.pivots.len(),
                self.kernel.len(),
                self.f.total_in_bits()
            )));
        }
        Ok(())
    }

    /// The inputs holding `cell`: `x0 + ker`, or none (module doc).
    fn holding(&self, cell: &[i64], budget: &mut Budget) -> Result<Vec<Vec<i64>>> {
        // Out-dim values of any input lie in [0, size): another cell is held by none.
        let outs = self.f.outs();
        if cell.len() != outs.len() || cell.iter().zip(outs).any(|(&c, o)| c < 0 || c >= o.size()) {
            return Ok(Vec::new());
        }
        let mut rest = cell.to_vec();
        let mut x0 = vec![0i64; self.f.ins().len()];
        while let Some(t) = top(&rest) {
            let Some(p) = self.pivot(t) else {
                return Ok(Vec::new());
            };
            xor_into(&mut rest, &p.0);
            xor_into(&mut x0, &p.1);
        }
        let k = self.kernel.len() as u32;
        let count = 1i64
            .checked_shl(k)
            .filter(|&n| n > 0 && k < 63)
            .ok_or_else(|| LayoutError::Undecided {
                reason: format!("2^{k} inputs hold each cell it holds"),
            })?;
        budget.list(count)?;
        let mut out = Vec::with_capacity(count as usize);
        for m in 0..count {
            let mut x = x0.clone();
            for (j, v) in self.kernel.iter().enumerate() {
                if m >> j & 1 == 1 {
                    xor_into(&mut x, v);
                }
            }
            if self.f.apply(&x)? != cell {
                return Err(unchecked(format!("input {x:?} does not hold {cell:?}")));
            }
            out.push(x);
        }
        Ok(out)
    }
}

/// One flat mode of a TV layout for the search: extent, stride, whether it is a thread mode,
/// and its place value within its top mode's (colexicographic) index.
#[derive(Clone, Copy, Debug)]
struct Digit {
    extent: i64,
    stride: i64,
    thread: bool,
    place: i64,
}

/// A TV layout's search (module doc): flat modes largest stride first, and what the modes from
/// each position on can add.
#[derive(Clone, Debug)]
pub struct TvSearch<'l> {
    tv: &'l TvLayout,
    digits: Vec<Digit>,
    /// `reach[i] = sum_{j >= i} (e_j - 1) s_j`; `reach[len] = 0`.
    reach: Vec<i64>,
}

impl<'l> TvSearch<'l> {
    /// The flat modes of the thread and value modes, sorted by stride, largest first. A
    /// negative stride (which `TvLayout::new` refuses) breaks the search's premise: an error.
    pub fn new(tv: &'l TvLayout) -> Result<TvSearch<'l>> {
        let mut digits = Vec::new();
        for (m, mode) in tv.layout().modes().iter().enumerate() {
            let mut place = 1i64;
            // An empty mode `()` (size 1) is the one digit 0.
            let mut flat = mode.flat_modes();
            if flat.is_empty() {
                flat.push((1, 0));
            }
            for (extent, stride) in flat {
                if stride < 0 {
                    return Err(unchecked(format!("stride {stride} is negative")));
                }
                digits.push(Digit {
                    extent,
                    stride,
                    thread: m == 0,
                    place,
                });
                // Below the mode's size, which fits in i64 (CuteLayout::new).
                place *= extent;
            }
        }
        digits.sort_by_key(|d| std::cmp::Reverse(d.stride));
        // Below the cosize, which fits in i64 (CuteLayout::new, TvLayout::new).
        let mut reach = vec![0i64; digits.len() + 1];
        for i in (0..digits.len()).rev() {
            reach[i] = reach[i + 1] + (digits[i].extent - 1) * digits[i].stride;
        }
        Ok(TvSearch { tv, digits, reach })
    }

    /// The inputs `[thread, value]` holding `cell`.
    fn holding(&self, cell: &[i64], budget: &mut Budget) -> Result<Vec<Vec<i64>>> {
        // Every input holds a cell of the tile (TvLayout::eval); another cell is held by none.
        let Ok(index) = shape::flatten_col_major(self.tv.tile(), cell) else {
            return Ok(Vec::new());
        };
        let mut found = Vec::new();
        self.search(0, index, [0, 0], &mut found, budget)?;
        for input in &found {
            if self.tv.eval(input[0], input[1])? != cell {
                return Err(unchecked(format!("input {input:?} does not hold {cell:?}")));
            }
        }
        Ok(found)
    }

    /// Visits every digit of mode `level` that leaves `rest` reachable (module doc), `at` the
    /// thread and value indices so far.
    fn search(
        &self,
        level: usize,
        rest: i64,
        at: [i64; 2],
        found: &mut Vec<Vec<i64>>,
        budget: &mut Budget,
    ) -> Result<()> {
        let Some(m) = self.digits.get(level) else {
            // reach[len] = 0: every digit was chosen with nothing left over.
            if rest != 0 {
                return Err(unchecked(format!("a search ended {rest} short")));
            }
            found.push(at.to_vec());
            return Ok(());
        };
        let Some((lo, hi)) = self.digits_at(m, rest, self.reach[level + 1])? else {
            return Ok(());
        };
        // One step a digit, taken before the visits; at the last mode each digit is an input
        // listed (a broadcast stops here, not after listing).
        budget.step(hi - lo + 1)?;
        if level + 1 == self.digits.len() {
            budget.list(hi - lo + 1)?;
        }
        for d in lo..=hi {
            let mut next = at;
            next[usize::from(!m.thread)] += d * m.place;
            self.search(level + 1, rest - d * m.stride, next, found, budget)?;
        }
        Ok(())
    }

    /// The digits `d` in `[0, e)` with `0 <= rest - d s <= after`, as an interval, its ends
    /// checked (module doc); `None` when there are none.
    fn digits_at(&self, m: &Digit, rest: i64, after: i64) -> Result<Option<(i64, i64)>> {
        let (r, s, after) = (rest as i128, m.stride as i128, after as i128);
        let holds = |d: i128| (0..=after).contains(&(r - d * s));
        let (a, b) = if s == 0 {
            if !holds(0) {
                return Ok(None);
            }
            (0, m.extent as i128 - 1)
        } else {
            // d >= a  iff  r - d s <= after;  d <= b  iff  r - d s >= 0.
            let (a, b) = ((r - after + s - 1).div_euclid(s), r.div_euclid(s));
            let ends = r - a * s <= after
                && r - (a - 1) * s > after
                && r - b * s >= 0
                && r - (b + 1) * s < 0;
            if !ends {
                return Err(unchecked(format!(
                    "digits [{a}, {b}] for rest {r}, stride {s}, reach {after}"
                )));
            }
            (a.max(0), b.min(m.extent as i128 - 1))
        };
        Ok((a <= b).then_some((a as i64, b as i64)))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use proptest::prelude::*;

    use super::*;
    use crate::cute::{CuteLayout, IntTuple};
    use crate::layout::Layout;
    use crate::linear::{InDim, OutDim};

    /// Every cell's inputs by reading every input: the brute force the searches must match.
    fn brute_force(inputs: &Inputs) -> BTreeMap<Vec<i64>, BTreeSet<Vec<i64>>> {
        let mut out: BTreeMap<Vec<i64>, BTreeSet<Vec<i64>>> = BTreeMap::new();
        for i in 0..inputs.count().unwrap() {
            out.entry(inputs.cell(i).unwrap())
                .or_default()
                .insert(inputs.components(i).unwrap());
        }
        out
    }

    /// The search's inputs at every cell of `cells` (and a few cells no input holds) equal the
    /// brute force's; the counts add up to the number of inputs.
    fn matches_brute_force(l: &Layout, cells: &[Vec<i64>]) -> std::result::Result<(), String> {
        let inputs = Inputs::of(l).unwrap();
        let want = brute_force(&inputs);
        let search = Preimages::new(&inputs).map_err(|e| e.to_string())?;
        let mut budget = Budget::default();
        let mut total = 0usize;
        for c in cells {
            let got = search.holding(c, &mut budget).map_err(|e| e.to_string())?;
            let set: BTreeSet<Vec<i64>> = got.iter().cloned().collect();
            if set.len() != got.len() {
                return Err(format!("{}: {c:?} listed an input twice", l.print()));
            }
            if set != want.get(c).cloned().unwrap_or_default() {
                return Err(format!(
                    "{}: at {c:?} the search gives {set:?}, the brute force {:?}",
                    l.print(),
                    want.get(c)
                ));
            }
            total += got.len();
        }
        if total as i64 != inputs.count().unwrap() {
            return Err(format!("{}: {total} inputs listed", l.print()));
        }
        Ok(())
    }

    /// Every coordinate of `dims`, row-major.
    fn every_cell(dims: &[i64]) -> Vec<Vec<i64>> {
        let n = shape::size_of(dims).unwrap();
        (0..n)
            .map(|x| shape::unflatten_row_major(dims, x).unwrap())
            .collect()
    }

    fn tv(thread: &[(i64, i64)], value: &[(i64, i64)], tile: Vec<i64>) -> Result<Layout> {
        let mode = |m: &[(i64, i64)]| {
            let (s, d): (Vec<i64>, Vec<i64>) = m.iter().copied().unzip();
            (IntTuple::flat(&s), IntTuple::flat(&d))
        };
        let ((ts, td), (vs, vd)) = (mode(thread), mode(value));
        let l = CuteLayout::new(IntTuple::Tuple(vec![ts, vs]), IntTuple::Tuple(vec![td, vd]))?;
        Ok(Layout::Tv(TvLayout::new(l, tile)?))
    }

    #[test]
    fn worked_examples_hold() {
        // The module doc's linear example: register = [[1], [1]] into (2).
        let l = Layout::parse("#ttg.linear<{register=[[1], [1]]}>", Some(&[2])).unwrap();
        let inputs = Inputs::of(&l).unwrap();
        let s = Preimages::new(&inputs).unwrap();
        let mut b = Budget::default();
        assert_eq!(s.holding(&[1], &mut b).unwrap(), [vec![1], vec![2]]);
        assert_eq!(s.holding(&[0], &mut b).unwrap(), [vec![0], vec![3]]);
        assert!(s.holding(&[2], &mut b).unwrap().is_empty());
        // The TV example: (4,2):(2,1) -> (8,), cell (5) is input (2, 1) alone.
        let t = Layout::parse("(4,2):(2,1) -> (8,)", None).unwrap();
        let inputs = Inputs::of(&t).unwrap();
        let s = Preimages::new(&inputs).unwrap();
        assert_eq!(s.holding(&[5], &mut b).unwrap(), [vec![2, 1]]);
        assert!(s.holding(&[8], &mut b).unwrap().is_empty());
        assert!(s.holding(&[1, 0], &mut b).unwrap().is_empty());
        assert_eq!(top(&[5, 2, 0]), Some((1, 1)));
        assert_eq!(top(&[0, 0]), None);
    }

    #[test]
    fn a_kernel_tile_needs_a_few_steps_per_cell() {
        // 2^25 inputs; each cell is one input found in two steps plus its listing.
        let t = Layout::parse("(4096,8192):(1,4096) -> (4096,8192)", None).unwrap();
        let inputs = Inputs::of(&t).unwrap();
        let s = Preimages::new(&inputs).unwrap();
        let mut b = Budget::default();
        for c in [[0, 0], [4095, 8191], [17, 5000]] {
            assert_eq!(s.holding(&c, &mut b).unwrap(), [c.to_vec()]);
        }
        assert_eq!(b.used(), 3 * 3);
        // The same tile as a linear layout of 25 register bits.
        let bits: Vec<String> = (0..12)
            .map(|k| format!("[{}, 0]", 1 << k))
            .chain((0..13).map(|k| format!("[0, {}]", 1 << k)))
            .collect();
        let text = format!("#ttg.linear<{{register=[{}]}}>", bits.join(", "));
        let f = Layout::parse(&text, Some(&[4096, 8192])).unwrap();
        let inputs = Inputs::of(&f).unwrap();
        let s = Preimages::new(&inputs).unwrap();
        assert_eq!(
            s.holding(&[17, 5000], &mut b).unwrap(),
            [vec![17 + 4096 * 5000]]
        );
    }

    #[test]
    fn past_the_budget_is_undecided() {
        // 65536 threads hold every cell: 2^16 inputs per cell, listed after 2^16 + 1 steps.
        let t = Layout::parse("(65536,128):(0,1) -> (128,)", None).unwrap();
        let inputs = Inputs::of(&t).unwrap();
        let s = Preimages::new(&inputs).unwrap();
        let mut b = Budget::new((1 << 17) - 1, MAX_STEPS);
        assert_eq!(s.holding(&[3], &mut b).unwrap().len(), 1 << 16);
        assert_eq!(b.used(), 1 + 2 * (1 << 16));
        let e = s.holding(&[4], &mut b).map(|found| found.len());
        assert!(
            matches!(&e, Err(LayoutError::Undecided { reason }) if reason.contains("needs 65536 more inputs listed, 65535 left of the limit 131071")),
            "{e:?}"
        );
        // Dead ends count too: strides 3 and 5 leave gaps the search visits and abandons.
        let t = tv(&[(40, 5)], &[(40, 3)], vec![400]).unwrap();
        let inputs = Inputs::of(&t).unwrap();
        let s = Preimages::new(&inputs).unwrap();
        let mut b = Budget::new(MAX_LISTED, 4);
        let e = s.holding(&[200], &mut b).map(|found| found.len());
        assert!(
            matches!(&e, Err(LayoutError::Undecided { reason }) if reason.contains("search steps")),
            "{e:?}"
        );
    }

    #[test]
    fn a_wrong_elimination_fails_its_check() {
        // Dropping a kernel vector would make the listed coset too small: the count check says so.
        let l = Layout::parse("#ttg.linear<{register=[[1], [1], [0]]}>", Some(&[2])).unwrap();
        let Layout::Linear(f) = &l else {
            unreachable!()
        };
        let mut e = Echelon::new(f).unwrap();
        assert_eq!(e.kernel.len(), 2);
        e.kernel.pop();
        assert!(matches!(e.check(), Err(LayoutError::Undecided { .. })));
        let mut e = Echelon::new(f).unwrap();
        e.kernel[0] = vec![1];
        assert!(matches!(e.check(), Err(LayoutError::Undecided { .. })));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn tv_search_is_the_brute_force(
            thread in prop::collection::vec((1i64..6, 0i64..13), 1..4),
            value in prop::collection::vec((1i64..6, 0i64..13), 1..3),
            rows in 1i64..5,
        ) {
            // Non-power-of-two extents, stride 0 (broadcast) and repeated strides (replicas);
            // a TV layout has no negative stride (TvLayout::new refuses one).
            let cosize = 1 + thread.iter().chain(&value).map(|(e, s)| (e - 1) * s).sum::<i64>();
            let tile = vec![rows, (cosize + rows - 1) / rows];
            let l = tv(&thread, &value, tile.clone()).unwrap();
            let mut cells = every_cell(&tile);
            cells.extend([vec![rows, 0], vec![0], vec![-1, 0]]);
            prop_assert_eq!(matches_brute_force(&l, &cells), Ok(()));
        }

        #[test]
        fn digits_at_are_every_digit_keeping_the_rest_reachable(
            rest in 0i64..200,
            extent in 1i64..40,
            stride in 0i64..20,
            after in 0i64..60,
        ) {
            let t = Layout::parse("(4,2):(2,1) -> (8,)", None).unwrap();
            let Layout::Tv(tv) = &t else { unreachable!() };
            let m = Digit { extent, stride, thread: true, place: 1 };
            let got = TvSearch::new(tv).unwrap().digits_at(&m, rest, after).unwrap();
            let want: Vec<i64> =
                (0..extent).filter(|d| (0..=after).contains(&(rest - d * stride))).collect();
            let listed: Vec<i64> = got.map_or(vec![], |(lo, hi)| (lo..=hi).collect());
            prop_assert_eq!(listed, want);
        }

        #[test]
        fn linear_search_is_the_brute_force(
            ins in prop::collection::vec(prop::collection::vec(prop::collection::vec(0i64..8, 2), 0..4), 1..4),
            out_bits in (0u32..4, 0u32..4),
        ) {
            // Zero bases (broadcast), repeated bases (replicas), dependent bases.
            let outs = vec![
                OutDim { name: "dim0".into(), log2_size: out_bits.0 },
                OutDim { name: "dim1".into(), log2_size: out_bits.1 },
            ];
            let names = ["register", "lane", "warp"];
            let ins: Vec<InDim> = ins
                .into_iter()
                .enumerate()
                .map(|(d, bases)| InDim {
                    name: names[d].into(),
                    bases: bases
                        .into_iter()
                        .map(|b| vec![b[0] % (1 << out_bits.0), b[1] % (1 << out_bits.1)])
                        .collect(),
                })
                .collect();
            let l = Layout::Linear(LinearLayout::new(ins, outs).unwrap());
            let dims = [1i64 << out_bits.0, 1 << out_bits.1];
            let mut cells = every_cell(&dims);
            cells.extend([vec![dims[0], 0], vec![0], vec![0, -1]]);
            prop_assert_eq!(matches_brute_force(&l, &cells), Ok(()));
        }
    }
}
