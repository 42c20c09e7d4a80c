//! Worked vectors of the specs: a layout text, the spans it must have and points it must
//! evaluate to. `laycert verify` parses, prints, re-parses and evaluates each.
//!
//! ```toml
//! [[vector]]
//! name = "axe.md 4, span"
//! source = "spec axe.md section 4"
//! layout = "S[(8,8,8):(64@F,1@P,1@F)]"
//! spans = { F = 456, P = 8 }
//! eval = [{ shape = [8, 8, 8], coord = [1, 0, 0], points = "{{F:64, P:0}}" }]
//! ```

use crate::entry::Entry;
use crate::error::CorpusError;

/// One expected evaluation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Evaluation {
    /// Logical shape (None: the layout's own).
    pub shape: Option<Vec<i64>>,
    /// The coordinate.
    pub coord: Vec<i64>,
    /// The expected point set, as `laycert eval` prints it.
    pub points: String,
}

/// A worked vector.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Vector {
    /// Where in the spec.
    pub name: String,
    /// The file it is in.
    pub file: String,
    /// The spec section.
    pub source: String,
    /// The layout text as the spec writes it.
    pub layout: String,
    /// The tensor shape Triton attributes need.
    pub tensor_shape: Option<Vec<i64>>,
    /// Expected spans per axis (Axe layouts).
    pub spans: Vec<(String, i64)>,
    /// Expected evaluations.
    pub evals: Vec<Evaluation>,
}

impl Vector {
    /// Reads a `[[vector]]` entry.
    pub fn read(e: &mut Entry) -> Result<Vector, CorpusError> {
        let name = e.str("name")?;
        let source = e.str("source")?;
        let layout = e.str("layout")?;
        let tensor_shape = e.opt_ints("shape")?;
        e.check_layout("layout", &layout, tensor_shape.as_deref())?;
        let spans = e.opt_int_map("spans")?;
        let mut evals = Vec::new();
        for (i, t) in e.opt_tables("eval")?.into_iter().enumerate() {
            let mut sub = Entry::new(e.file(), &format!("vector {name:?} eval"), i + 1, t);
            evals.push(Evaluation {
                shape: sub.opt_ints("shape")?,
                coord: sub
                    .opt_ints("coord")?
                    .ok_or_else(|| sub.error("coord", "missing"))?,
                points: sub.str("points")?,
            });
            sub.finish_with(&[])?;
        }
        e.finish_with(&[])?;
        Ok(Vector {
            name,
            file: e.file().to_string(),
            source,
            layout,
            tensor_shape,
            spans,
            evals,
        })
    }
}
