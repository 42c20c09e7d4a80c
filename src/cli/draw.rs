//! `laycert draw L [--shape S] [--banks BYTES [--access row|col]] -o file.svg`: a picture of a
//! layout (see [`crate::report::picture`]): TV, Triton and Axe thread layouts as `T V` grids
//! coloured by thread, memory layouts as offset grids, and with `--banks` a shared-memory bank
//! map with conflicts marked. First stdout line: `wrote FILE (ROWSxCOLS cells)`.

use serde_json::json;

use super::{input, BadInput, Report};
use crate::report::picture::{bank_map, picture, Access};
use crate::report::svg::render;

/// What `draw` was asked to do.
pub struct Options<'a> {
    /// The layout text.
    pub layout: &'a str,
    /// Logical shape (tensor shape of a Triton attribute).
    pub shape: Option<&'a str>,
    /// Element size in bytes: draw the bank map.
    pub banks: Option<i64>,
    /// Which cells one access reads (`row` or `col`).
    pub access: &'a str,
    /// The SVG file to write.
    pub output: &'a str,
    /// One JSON object instead of text.
    pub json: bool,
}

/// Runs `draw`.
pub fn run(o: &Options) -> Result<Report, BadInput> {
    let shape = input::shape(o.shape)?;
    let l = input::layout(o.layout, shape.as_deref())?;
    let logical = shape
        .as_deref()
        .filter(|_| !matches!(l, layout::Layout::Tv(_) | layout::Layout::Linear(_)));
    let grid = match o.banks {
        None => picture(&l, logical, o.layout),
        Some(bytes) => {
            let access =
                Access::parse(o.access).map_err(|e| input::render(&e, "--access", o.access))?;
            bank_map(&l, logical, bytes, access, o.layout)
        }
    }
    .map_err(|e| input::render(&e, "the picture", o.layout))?;
    std::fs::write(o.output, render(&grid)).map_err(|e| BadInput {
        message: format!("error: -o {:?}: cannot write: {e}", o.output),
    })?;
    let summary = format!("wrote {} ({}x{} cells)", o.output, grid.rows, grid.cols);
    if o.json {
        return Ok(Report::json(json!({
            "wrote": o.output,
            "rows": grid.rows,
            "cols": grid.cols,
            "notes": grid.notes,
        })));
    }
    let mut lines = vec![summary];
    lines.extend(grid.notes);
    Ok(Report::ok(lines))
}
