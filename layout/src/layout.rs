//! [`Layout`]: a layout in any notation, with one evaluation entry point.
//!
//! Direction is a property of the notation: Axe, CuTe and swizzled layouts map a logical
//! coordinate to physical coordinates; TV and linear layouts map hardware coordinates (thread,
//! value; register, lane, warp) to logical ones. [`Layout::eval`] evaluates in the notation's
//! own direction and names every output component (`m`, `laneid`, `dim0`, ...).

use std::collections::BTreeSet;

use crate::axe::AxeLayout;
use crate::axis::{Axis, Point};
use crate::cute::{CuteLayout, TvLayout};
use crate::error::{LayoutError, Result};
use crate::linear::LinearLayout;
use crate::notation::{self, Notation};
use crate::swizzle::SwizzledLayout;
use crate::triton;

/// A layout in one of the supported formalisms.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Layout {
    /// Axe `(D, R, O)`.
    Axe(AxeLayout),
    /// CuTe `shape:stride`.
    Cute(CuteLayout),
    /// `Sw<B,M,S> o shape:stride`.
    Swizzled(SwizzledLayout),
    /// CuTe thread-value layout with its tile.
    Tv(TvLayout),
    /// F2 linear layout.
    Linear(LinearLayout),
}

impl Layout {
    /// Parses text in any notation. Triton attributes other than `#ttg.linear` need `shape` (the
    /// tensor shape) and import to a linear layout; `#ttg.linear` takes its out-dim sizes from it.
    /// A CuTe layout with ScaledBasis strides reads as an Axe layout over `shape` (default: its
    /// flat index), see [`notation::cute::parse_basis`]. A TTGIR tensor type
    /// `tensor<128x64xf16, #ttg.blocked<{..}>>` is its encoding on its own shape (a different
    /// `shape` is an error).
    pub fn parse(text: &str, shape: Option<&[i64]>) -> Result<Layout> {
        // A TVM index map, with the buffers declared around it (Python text: its `#` lines are
        // comments, not Triton aliases).
        if notation::tvm::is_index_map(text) {
            return Ok(Layout::Axe(notation::tvm::parse_layout(text, shape)?));
        }
        if notation::tvm_layout::is_data_layout(text) {
            return Ok(Layout::Axe(notation::tvm_layout::parse_layout(
                text, shape,
            )?));
        }
        // Alias definitions pasted before what uses them (`#shared = #ttg..<..>` lines, then
        // `!ttg.memdesc<.., #shared, #smem>`): read with the aliases replaced.
        if let Some(expanded) = triton::aliases::Aliases::expand_pasted(text)? {
            return Layout::parse(&expanded, shape).map_err(|e| match e {
                LayoutError::Parse(p) => LayoutError::invalid(
                    "the pasted text with its aliases replaced",
                    format!(
                        "{p} (there: {:?})",
                        expanded
                            .get(p.span.start..)
                            .unwrap_or("")
                            .chars()
                            .take(60)
                            .collect::<String>()
                    ),
                ),
                other => other,
            });
        }
        // The CuTe DSL's print of a tensor: its layout, past the pointer.
        if let Some(inner) = notation::cute::dsl_tensor(text)? {
            return Layout::parse(&inner, shape);
        }
        // A TTGIR tensor type gives its encoding and the shape it is laid out on.
        if let Some((encoding, own)) = triton::tensor_type(text)? {
            if shape.is_some_and(|s| s != own) {
                return Err(LayoutError::Shape {
                    shape: shape.unwrap_or_default().to_vec(),
                    why: format!("the tensor type gives the shape {own:?}"),
                });
            }
            if encoding.trim_start().starts_with("tensor<") {
                return Err(LayoutError::invalid(
                    "TTGIR tensor type",
                    "its encoding is another tensor type, not a layout attribute",
                ));
            }
            return Layout::parse(&encoding, Some(&own));
        }
        // A TTGIR memory descriptor type: its encoding on the last dims of its allocation.
        if let Some(desc) = triton::memdesc::memdesc_type(text)? {
            let own = desc.layout_shape();
            if shape.is_some_and(|s| s != own) {
                return Err(LayoutError::Shape {
                    shape: shape.unwrap_or_default().to_vec(),
                    why: format!(
                        "the memdesc type lays its encoding out on {own:?} (the last {} dims of \
                         its allocation shape {:?})",
                        desc.shape.len(),
                        desc.alloc_shape
                    ),
                });
            }
            if triton::tmem::is_tmem(&desc.encoding) {
                let tmem = triton::tmem::parse(&desc.encoding)?;
                if let Some(bits) = desc.element_bits() {
                    tmem.check_element_bits(bits)?;
                }
                return Ok(Layout::Linear(tmem.to_linear(own)?));
            }
            return Layout::parse(&desc.encoding, Some(own)).map_err(|e| {
                // A multi-buffer allocation `3x128x64` with a rank-2 encoding: Triton 3.9 has
                // no layout for it as a whole (its conversion aborts), only for one buffer.
                let one = Layout::parse(&desc.encoding, Some(&own[1..]));
                if own.len() > 1 && one.is_ok() {
                    LayoutError::invalid(
                        "TTGIR memdesc type",
                        format!(
                            "its encoding has rank {} and it has rank {}: {} buffers of {:?}, \
                             for which Triton 3.9 gives no layout as a whole (its conversion \
                             aborts); the layout of one buffer is that of \
                             !ttg.memdesc<{}x{}, .., {}> (what memdesc_index gives)",
                            own.len() - 1,
                            own.len(),
                            own[0],
                            &own[1..],
                            own[1..]
                                .iter()
                                .map(i64::to_string)
                                .collect::<Vec<_>>()
                                .join("x"),
                            desc.element,
                            desc.alloc_shape
                                .iter()
                                .map(i64::to_string)
                                .collect::<Vec<_>>()
                                .join("x"),
                        ),
                    )
                } else {
                    e
                }
            });
        }
        Ok(match Notation::detect(text) {
            Notation::Axe => Layout::Axe(notation::axe::parse(text)?),
            Notation::Cute => Layout::Cute(notation::cute::parse_layout(text)?),
            Notation::CuteBasis => Layout::Axe(notation::cute::parse_basis(text, shape)?),
            Notation::Swizzled => Layout::Swizzled(notation::cute::parse_swizzled(text)?),
            Notation::Tv => Layout::Tv(notation::cute::parse_tv(text)?),
            Notation::LinearAttr => Layout::Linear(notation::linear::parse_attr(text, shape)?),
            Notation::LinearText => Layout::Linear(notation::linear::parse_to_string(text)?),
            Notation::NkiAp => Layout::Axe(notation::nki::parse_layout(text)?),
            Notation::TvmIndexMap => Layout::Axe(notation::tvm::parse_layout(text, shape)?),
            Notation::TvmDataLayout => {
                Layout::Axe(notation::tvm_layout::parse_layout(text, shape)?)
            }
            Notation::TritonAttr if !text.trim_start().starts_with('#') => {
                let (mlir, own) = triton::gluon::to_mlir(text)?;
                return Layout::parse(&mlir, shape.or(own.as_deref()));
            }
            Notation::TritonAttr if triton::tmem::is_tmem(text) => {
                let shape = shape.ok_or_else(|| {
                    LayoutError::invalid(
                        "TMEM encoding",
                        "it describes a layout only for a tensor shape: give one (--shape \
                         128,128), or paste the whole !ttg.memdesc<..> type",
                    )
                })?;
                Layout::Linear(triton::tmem::parse(text)?.to_linear(shape)?)
            }
            Notation::TritonAttr => {
                let attr = triton::parse_attr(text)?;
                let own = attr.own_shape();
                let shape = shape.or(own.as_deref()).ok_or_else(|| {
                    LayoutError::invalid(
                        "Triton attribute",
                        "it describes a layout only for a tensor shape: give one (--shape 128,128)",
                    )
                })?;
                attr.to_layout(shape)?
            }
        })
    }

    /// The notation this value prints in.
    pub fn notation(&self) -> Notation {
        match self {
            Layout::Axe(_) => Notation::Axe,
            Layout::Cute(_) => Notation::Cute,
            Layout::Swizzled(_) => Notation::Swizzled,
            Layout::Tv(_) => Notation::Tv,
            Layout::Linear(_) => Notation::LinearAttr,
        }
    }

    /// Prints in the value's own notation (linear layouts as `toString()` text, which keeps
    /// out-dim names and sizes).
    pub fn print(&self) -> String {
        match self {
            Layout::Axe(l) => notation::axe::print(l),
            Layout::Cute(l) => l.to_string(),
            Layout::Swizzled(l) => l.to_string(),
            Layout::Tv(l) => l.to_string(),
            Layout::Linear(l) => notation::linear::print_to_string(l),
        }
    }

    /// Number of points of the domain.
    pub fn domain_size(&self) -> i64 {
        match self {
            Layout::Axe(l) => l.size(),
            Layout::Cute(l) => l.size(),
            Layout::Swizzled(l) => l.layout().size(),
            Layout::Tv(l) => l.layout().size(),
            Layout::Linear(l) => 1i64 << l.total_in_bits(),
        }
    }

    /// The natural domain shape: Axe `[size]`, CuTe its top-level mode sizes, TV
    /// `[threads, values]`, linear the in-dim sizes.
    pub fn default_shape(&self) -> Vec<i64> {
        match self {
            Layout::Axe(l) => vec![l.size()],
            Layout::Cute(l) => l.top_shape(),
            Layout::Swizzled(l) => l.layout().top_shape(),
            Layout::Tv(l) => vec![l.threads(), l.values()],
            Layout::Linear(l) => l.ins().iter().map(|d| 1i64 << d.bases.len()).collect(),
        }
    }

    /// Evaluates at a coordinate of `shape` (default: [`Layout::default_shape`]). Axe flattens
    /// row-major, CuTe column-major; TV and linear layouts take one component per domain dim.
    /// Points are raw, per axis name as written (Axe adds iters on one name); the physical
    /// point in the common vocabulary is [`crate::relation::normalize`] of it. TV and linear
    /// layouts give their LOGICAL cell, one component per out-dim (names distinct by
    /// construction), not a physical point.
    pub fn eval(&self, shape: Option<&[i64]>, coord: &[i64]) -> Result<BTreeSet<Point>> {
        let default = self.default_shape();
        let shape = shape.unwrap_or(&default);
        let on =
            |name: &str, v: i64| -> Point { [(Axis::new(name).expect("identifier"), v)].into() };
        match self {
            Layout::Axe(l) => l.eval(shape, coord),
            Layout::Cute(l) => Ok([on("m", l.eval(shape, coord)?)].into()),
            Layout::Swizzled(l) => Ok([on("m", l.eval(shape, coord)?)].into()),
            Layout::Tv(l) => {
                check_fixed_shape(shape, &default, "a TV layout's domain is (threads, values)")?;
                crate::shape::flatten_row_major(&default, coord)?;
                let cell = l.eval(coord[0], coord[1])?;
                Ok([cell
                    .iter()
                    .enumerate()
                    .map(|(i, &v)| (dim_axis(i), v))
                    .collect()]
                .into())
            }
            Layout::Linear(l) => {
                check_fixed_shape(shape, &default, "a linear layout's domain is its in-dims")?;
                let out = l.apply(coord)?;
                Ok([l
                    .outs()
                    .iter()
                    .zip(out)
                    .map(|(o, v)| (Axis::new(&o.name).expect("identifier"), v))
                    .collect()]
                .into())
            }
        }
    }
}

/// The axis naming logical dimension `i`: `dim0`, `dim1`, ...
pub fn dim_axis(i: usize) -> Axis {
    Axis::new(&format!("dim{i}")).expect("identifier")
}

fn check_fixed_shape(shape: &[i64], domain: &[i64], why: &str) -> Result<()> {
    if shape != domain {
        return Err(LayoutError::Shape {
            shape: shape.to_vec(),
            why: format!("{why}: {domain:?}"),
        });
    }
    Ok(())
}
