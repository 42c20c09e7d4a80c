//! [`Dtype`]: the element types a copy kernel moves. A copy moves bits, so only the width
//! matters to the plan; the name is kept for reports.

use std::fmt;

use crate::error::PlanError;

/// Element type of the tensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Dtype {
    /// 32-bit float.
    F32,
    /// IEEE half.
    F16,
    /// bfloat16.
    Bf16,
    /// 8-bit float (e4m3 or e5m2: the same width).
    F8,
    /// 8-bit integer.
    I8,
}

impl Dtype {
    /// Parses `f32`, `f16`, `bf16`, `f8` or `i8`.
    ///
    /// ```
    /// use solver::Dtype;
    /// assert_eq!(Dtype::parse("bf16")?.bytes(), 2);
    /// assert!(Dtype::parse("f64").is_err());
    /// # Ok::<(), solver::PlanError>(())
    /// ```
    pub fn parse(s: &str) -> Result<Dtype, PlanError> {
        match s {
            "f32" => Ok(Dtype::F32),
            "f16" => Ok(Dtype::F16),
            "bf16" => Ok(Dtype::Bf16),
            "f8" => Ok(Dtype::F8),
            "i8" => Ok(Dtype::I8),
            other => Err(PlanError::Dtype(other.to_string())),
        }
    }

    /// Width in bytes.
    pub fn bytes(self) -> i64 {
        match self {
            Dtype::F32 => 4,
            Dtype::F16 | Dtype::Bf16 => 2,
            Dtype::F8 | Dtype::I8 => 1,
        }
    }

    /// The name `parse` reads.
    pub fn name(self) -> &'static str {
        match self {
            Dtype::F32 => "f32",
            Dtype::F16 => "f16",
            Dtype::Bf16 => "bf16",
            Dtype::F8 => "f8",
            Dtype::I8 => "i8",
        }
    }
}

impl fmt::Display for Dtype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
