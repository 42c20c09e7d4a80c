//! Checked i64 arithmetic: an overflow is an error value naming the operation.

use crate::error::{LayoutError, Result};

/// `a + b`, or an overflow error naming `op`.
pub fn add(a: i64, b: i64, op: &'static str) -> Result<i64> {
    a.checked_add(b).ok_or(LayoutError::Overflow { op })
}

/// `a - b`, or an overflow error naming `op`.
pub fn sub(a: i64, b: i64, op: &'static str) -> Result<i64> {
    a.checked_sub(b).ok_or(LayoutError::Overflow { op })
}

/// `a * b`, or an overflow error naming `op`.
pub fn mul(a: i64, b: i64, op: &'static str) -> Result<i64> {
    a.checked_mul(b).ok_or(LayoutError::Overflow { op })
}

/// Product of all values, or an overflow error naming `op`.
pub fn product(values: impl IntoIterator<Item = i64>, op: &'static str) -> Result<i64> {
    values.into_iter().try_fold(1i64, |acc, v| mul(acc, v, op))
}

/// True when `n` is a positive power of two.
pub fn is_pow2(n: i64) -> bool {
    n > 0 && n & (n - 1) == 0
}

/// `log2(n)` for a positive power of two.
pub fn log2(n: i64) -> Option<u32> {
    is_pow2(n).then(|| n.trailing_zeros())
}
