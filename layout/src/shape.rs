//! Logical shapes and the two flattening orders.
//!
//! Axe flattens ROW-MAJOR (last dimension fastest); CuTe flattens COLUMN-MAJOR (first mode
//! fastest). Example: in shape (8,16), coordinate (2,9) is row-major index `2*16 + 9 = 41` and
//! column-major index `2 + 8*9 = 74`.

use crate::arith;
use crate::error::{LayoutError, Result};

/// Checks a logical shape (every extent >= 1, product fits in i64) and returns its size.
pub fn size_of(shape: &[i64]) -> Result<i64> {
    if let Some(d) = shape.iter().position(|&e| e < 1) {
        return Err(LayoutError::Shape {
            shape: shape.to_vec(),
            why: format!("extent {} of dimension {d} is below 1", shape[d]),
        });
    }
    arith::product(shape.iter().copied(), "shape size")
}

fn check_coord(shape: &[i64], coord: &[i64]) -> Result<()> {
    if shape.len() != coord.len() {
        return Err(LayoutError::Coordinate {
            coord: coord.to_vec(),
            why: format!(
                "it has {} components but the shape {shape:?} has {}",
                coord.len(),
                shape.len()
            ),
        });
    }
    for (d, (&c, &e)) in coord.iter().zip(shape).enumerate() {
        if c < 0 || c >= e {
            return Err(LayoutError::Coordinate {
                coord: coord.to_vec(),
                why: format!("component {d} is {c}, outside [0, {e})"),
            });
        }
    }
    Ok(())
}

/// Row-major flat index of `coord` in `shape` (Axe's order).
pub fn flatten_row_major(shape: &[i64], coord: &[i64]) -> Result<i64> {
    size_of(shape)?;
    check_coord(shape, coord)?;
    Ok(coord
        .iter()
        .zip(shape)
        .fold(0i64, |acc, (&c, &e)| acc * e + c))
}

/// Column-major flat index of `coord` in `shape` (CuTe's order).
pub fn flatten_col_major(shape: &[i64], coord: &[i64]) -> Result<i64> {
    size_of(shape)?;
    check_coord(shape, coord)?;
    Ok(coord
        .iter()
        .zip(shape)
        .rev()
        .fold(0i64, |acc, (&c, &e)| acc * e + c))
}

/// The coordinate of row-major index `x` in `shape`.
pub fn unflatten_row_major(shape: &[i64], x: i64) -> Result<Vec<i64>> {
    let size = size_of(shape)?;
    check_index(x, size)?;
    let mut out = vec![0; shape.len()];
    let mut rest = x;
    for (d, &e) in shape.iter().enumerate().rev() {
        out[d] = rest % e;
        rest /= e;
    }
    Ok(out)
}

/// The coordinate of column-major index `x` in `shape`.
pub fn unflatten_col_major(shape: &[i64], x: i64) -> Result<Vec<i64>> {
    let size = size_of(shape)?;
    check_index(x, size)?;
    let mut rest = x;
    Ok(shape
        .iter()
        .map(|&e| {
            let c = rest % e;
            rest /= e;
            c
        })
        .collect())
}

/// Checks that `shape` is admitted by a layout of `size` points (`prod(shape) == size`).
pub fn check_admits(shape: &[i64], size: i64) -> Result<()> {
    let n = size_of(shape)?;
    if n != size {
        return Err(LayoutError::Shape {
            shape: shape.to_vec(),
            why: format!("its size {n} differs from the layout's size {size}"),
        });
    }
    Ok(())
}

/// Checks `0 <= x < size`.
pub fn check_index(x: i64, size: i64) -> Result<()> {
    if x < 0 || x >= size {
        return Err(LayoutError::Coordinate {
            coord: vec![x],
            why: format!("flat index {x} is outside [0, {size})"),
        });
    }
    Ok(())
}

/// Parses `8,16` or `(8,16)` or `8x16` into a shape. Errors name the bad component.
pub fn parse_list(text: &str) -> Result<Vec<i64>> {
    let t = text.trim().trim_start_matches('(').trim_end_matches(')');
    if t.trim().is_empty() {
        return Err(LayoutError::invalid(
            format!("list {text:?}"),
            "it is empty",
        ));
    }
    t.split([',', 'x'])
        .enumerate()
        .map(|(i, p)| {
            p.trim().parse::<i64>().map_err(|_| {
                LayoutError::invalid(
                    format!("list {text:?}"),
                    format!("component {i} ({:?}) is not a 64-bit integer", p.trim()),
                )
            })
        })
        .collect()
}
