//! Linear algebra over F2 on bit-vectors of at most 128 bits: rank, solving, kernels.
//!
//! A matrix is given by its COLUMNS (the image of each input bit), as in Triton's bases.
//! [`Echelon`] keeps a reduced basis of the column space together with, for every basis vector,
//! which input columns XOR to it; solving `A x = y` then reads off `x`, with free variables 0
//! (the minimal-Hamming-weight choice the Linear Layouts paper uses for right inverses).
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
    /// Eliminates all columns of a matrix (column `i` is input bit `i`).
    pub fn of_columns(cols: &[u128]) -> Echelon {
        let mut e = Echelon::default();
        for (i, &c) in cols.iter().enumerate() {
            e.insert(c, 1u128 << i);
        }
        e
    }

    fn insert(&mut self, mut v: u128, mut combo: u128) {
        for &(p, rv, rc) in &self.rows {
            if v >> p & 1 == 1 {
                v ^= rv;
                combo ^= rc;
            }
        }
        if v == 0 {
            self.kernel.push(combo);
            return;
        }
        let p = v.trailing_zeros();
        for row in &mut self.rows {
            if row.1 >> p & 1 == 1 {
                row.1 ^= v;
                row.2 ^= combo;
            }
        }
        self.rows.push((p, v, combo));
    }

    /// Rank of the matrix.
    pub fn rank(&self) -> usize {
        self.rows.len()
    }

    /// A basis of the kernel, as input combinations.
    pub fn kernel(&self) -> &[u128] {
        &self.kernel
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

/// The image of input `x` under the matrix with these columns.
pub fn apply(cols: &[u128], x: u128) -> u128 {
    cols.iter()
        .enumerate()
        .filter(|(i, _)| x >> i & 1 == 1)
        .fold(0, |acc, (_, c)| acc ^ c)
}
