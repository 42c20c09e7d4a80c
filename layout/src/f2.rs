//! Linear algebra over F2 on bit-vectors of at most 128 bits: rank, solving, kernels.
//!
//! A matrix is given by its COLUMNS (the image of each input bit), as in Triton's bases.
//! [`Echelon`] keeps a reduced basis of the column space together with, for every basis vector,
//! which input columns XOR to it; solving `A x = y` then reads off `x`, with free variables 0
//! (columns dependent on earlier ones are not used; not always the `x` of fewest set bits:
//! columns `[1, 2, 3]` solve `y = 3` with `x = 0b011`, not `0b100`).
//! Example: columns `[0b01, 0b11]` solve `y = 0b10` with `x = 0b11` (both columns).

/// A reduced column basis with the input combination behind every vector.
#[derive(Clone, Debug, Default)]
pub struct Echelon {
    /// `(pivot bit, vector, combination of input columns)`.
    rows: Vec<(u32, u128, u128)>,
    /// Input combinations that map to zero (a kernel basis), in insertion order.
    kernel: Vec<u128>,
}

impl Echelon {
    /// Eliminates all columns of a matrix (column `i` is input bit `i`). Combinations are
    /// tracked for the first 128 columns; the rank counts all of them.
    pub fn of_columns(cols: &[u128]) -> Echelon {
        let mut e = Echelon::default();
        for (i, &c) in cols.iter().enumerate() {
            e.insert(c, 1u128.checked_shl(i as u32).unwrap_or(0));
        }
        e
    }

    /// Adds one more column (with the input combination it stands for); returns whether it was
    /// independent of the columns before it.
    pub fn insert(&mut self, mut v: u128, mut combo: u128) -> bool {
        for &(p, rv, rc) in &self.rows {
            if v >> p & 1 == 1 {
                v ^= rv;
                combo ^= rc;
            }
        }
        if v == 0 {
            self.kernel.push(combo);
            return false;
        }
        let p = v.trailing_zeros();
        for row in &mut self.rows {
            if row.1 >> p & 1 == 1 {
                row.1 ^= v;
                row.2 ^= combo;
            }
        }
        self.rows.push((p, v, combo));
        true
    }

    /// Rank of the matrix.
    pub fn rank(&self) -> usize {
        self.rows.len()
    }

    /// A basis of the kernel, as input combinations.
    pub fn kernel(&self) -> &[u128] {
        &self.kernel
    }

    /// `y` with the column space's pivots eliminated: 0 exactly when `y` is in the span.
    pub fn reduce(&self, mut y: u128) -> u128 {
        for &(p, v, _) in &self.rows {
            if y >> p & 1 == 1 {
                y ^= v;
            }
        }
        y
    }

    /// Some `x` with `A x = y` (free variables 0), or `None` when `y` is outside the image.
    pub fn solve(&self, mut y: u128) -> Option<u128> {
        let mut x = 0u128;
        for &(p, v, c) in &self.rows {
            if y >> p & 1 == 1 {
                y ^= v;
                x ^= c;
            }
        }
        (y == 0).then_some(x)
    }
}

impl Echelon {
    /// True when `y` lies in the column space.
    pub fn contains(&self, y: u128) -> bool {
        self.solve(y).is_some()
    }
}

/// Dimension of the span of `vectors`.
pub fn rank(vectors: &[u128]) -> usize {
    Echelon::of_columns(vectors).rank()
}

/// `dim(span(u) ∩ span(w))`, by `dim U + dim W - dim(U + W)`.
pub fn intersection_dim(u: &[u128], w: &[u128]) -> usize {
    let both: Vec<u128> = u.iter().chain(w).copied().collect();
    rank(u) + rank(w) - rank(&both)
}

/// A basis of `span(u) ∩ span(w)`: the kernel of `u`'s basis reduced modulo `span(w)`.
/// Example: `u = [0b01, 0b10]`, `w = [0b11]` gives `[0b11]`.
pub fn intersection(u: &[u128], w: &[u128]) -> Vec<u128> {
    let u = extend(&[], u.iter().copied());
    let w = Echelon::of_columns(w);
    let residues: Vec<u128> = u.iter().map(|&x| w.reduce(x)).collect();
    let mut basis = Vec::new();
    let mut seen = Echelon::default();
    for &k in Echelon::of_columns(&residues).kernel() {
        let v = apply(&u, k);
        if seen.insert(v, 0) {
            basis.push(v);
        }
    }
    basis
}

/// Vectors from `candidates`, in order, that extend `basis` independently (greedy completion).
pub fn extend(basis: &[u128], candidates: impl IntoIterator<Item = u128>) -> Vec<u128> {
    let mut ech = Echelon::of_columns(basis);
    candidates
        .into_iter()
        .filter(|&c| ech.insert(c, 0))
        .collect()
}

/// Unit vectors `1 << i` (`i < d`), in order, completing `span(basis)` to all of `F2^d`.
pub fn complete(basis: &[u128], d: u32) -> Vec<u128> {
    extend(basis, (0..d).map(|i| 1u128 << i))
}

/// The image of input `x` under the matrix with these columns.
pub fn apply(cols: &[u128], x: u128) -> u128 {
    cols.iter()
        .enumerate()
        .filter(|(i, _)| x >> i & 1 == 1)
        .fold(0, |acc, (_, c)| acc ^ c)
}
