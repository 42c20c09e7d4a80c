//! `laycert._laycert`: the native module of the Python package. A thin face over the crates,
//! like the CLI in `src/`: it reads Python arguments into library values, calls the same crate
//! functions the CLI calls, and turns results into Python objects. No layout logic lives here.
//!
//! The public Python API is `laycert/__init__.py`, which re-exports these names; the types are
//! in `laycert/_laycert.pyi`.

#![warn(missing_docs)]

mod algebra;
mod equiv;
mod errors;
mod gen;
mod layout_py;
mod rules;

// Pictures of layouts, shared with the CLI's `draw`: the grid computed from the semantics
// and its SVG rendering, compiled from the binary's sources (src/report), not copied.
#[allow(dead_code, missing_docs)]
#[path = "../../src/report/picture.rs"]
mod picture;
#[allow(dead_code, missing_docs)]
#[path = "../../src/report/svg.rs"]
mod svg;

use pyo3::prelude::*;

/// The native module.
#[pymodule]
fn _laycert(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::register(m)?;
    m.add_class::<layout_py::Layout>()?;
    m.add_class::<equiv::Report>()?;
    m.add_class::<equiv::Counterexample>()?;
    m.add_class::<equiv::Decider>()?;
    m.add_class::<equiv::Certificate>()?;
    m.add_class::<equiv::CheckResult>()?;
    m.add_class::<equiv::PropertyReport>()?;
    m.add_class::<rules::RuleReport>()?;
    m.add_class::<rules::RulesReport>()?;
    m.add_class::<gen::CopyKernel>()?;
    m.add_class::<gen::SynthPlan>()?;
    m.add_class::<gen::GemmKernel>()?;
    m.add_function(wrap_pyfunction!(equiv::equiv, m)?)?;
    m.add_function(wrap_pyfunction!(equiv::check, m)?)?;
    m.add_function(wrap_pyfunction!(equiv::prove_property, m)?)?;
    m.add_function(wrap_pyfunction!(algebra::cute_op, m)?)?;
    m.add_function(wrap_pyfunction!(algebra::canonicalize, m)?)?;
    m.add_function(wrap_pyfunction!(algebra::group, m)?)?;
    m.add_function(wrap_pyfunction!(algebra::tile, m)?)?;
    m.add_function(wrap_pyfunction!(algebra::tile_of, m)?)?;
    m.add_function(wrap_pyfunction!(algebra::slice, m)?)?;
    m.add_function(wrap_pyfunction!(algebra::direct_sum, m)?)?;
    m.add_function(wrap_pyfunction!(rules::prove_text, m)?)?;
    m.add_function(wrap_pyfunction!(rules::validate_text, m)?)?;
    m.add_function(wrap_pyfunction!(gen::gen_copy, m)?)?;
    m.add_function(wrap_pyfunction!(gen::synth, m)?)?;
    m.add_function(wrap_pyfunction!(gen::gen_gemm, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
