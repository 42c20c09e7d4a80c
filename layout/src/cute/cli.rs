//! The text-in, text-out entry the `laycert cute ...` subcommands call: operands in CuTe
//! notation (a left operand of `compose` and `recast` may be swizzled, `Sw<B,M,S> o L`), the
//! result printed exactly as pycute prints it.
//!
//! | op | arguments |
//! |----|-----------|
//! | `coalesce` | `L [PROFILE]` |
//! | `compose` | `A B` (B a layout or a tiler: `(2, 4)`, `(4:2, 8:1)`) |
//! | `complement` | `A M` (M a size, a shape `(4, 8)` or a layout) |
//! | `divide` | `A TILER [logical\|zipped\|tiled\|flat]` |
//! | `product` | `A TILER [logical\|zipped\|tiled\|blocked\|raked]` |
//!
//! A TILER is a layout or a tuple of tilers applied mode by mode (`(2:1, 3:2)`, `(4, _)`; see
//! [`super::tiler`]).
//! | `left-inverse`, `right-inverse`, `nullspace` | `L` |
//! | `recast` | `L FROM_BITS TO_BITS` |
//!
//! Example: `cli_op("compose", ["(10,2):(16,4)", "4:5"]) = "(2, 2):(80, 4)"`.

use super::tiler::{
    composition_by, flat_divide_by, logical_divide_by, logical_product_by, parse_tiler,
    tiled_divide_by, tiled_product_by, zipped_divide_by, zipped_product_by, Tiler,
};
use super::{
    blocked_product, coalesce, coalesce_by_mode, complement, complement_shape, composition,
    composition_swizzled, flat_divide, left_inverse, logical_divide, logical_product, nullspace,
    raked_product, recast, recast_swizzled, right_inverse, tiled_divide, tiled_product,
    zipped_divide, zipped_product,
};
use crate::error::{LayoutError, Result};
use crate::notation::cute::{parse_int_tuple, parse_layout, parse_swizzled};

/// Runs one algebra operation on text operands and returns the result's text.
/// `cli_op("coalesce", &["(4,5):(1,4)".into()]) = Ok("20:1")`.
pub fn cli_op(op: &str, args: &[String]) -> Result<String> {
    let arg = |i: usize, name: &str| -> Result<&str> {
        args.get(i).map(String::as_str).ok_or_else(|| {
            LayoutError::invalid(
                format!("cute {op}"),
                format!("missing argument {} ({name})", i + 1),
            )
        })
    };
    let max_args = match op {
        "coalesce" | "divide" | "product" => 3,
        "recast" => 3,
        "compose" | "complement" => 2,
        "left-inverse" | "right-inverse" | "nullspace" => 1,
        _ => {
            return Err(LayoutError::invalid(
                format!("cute {op}"),
                "unknown operation; expected coalesce, compose, complement, divide, product, left-inverse, right-inverse, nullspace or recast",
            ))
        }
    };
    if args.len() > max_args {
        return Err(LayoutError::invalid(
            format!("cute {op}"),
            format!("at most {max_args} arguments, got {}", args.len()),
        ));
    }
    let out = match op {
        "coalesce" => {
            let l = parse_layout(arg(0, "layout")?)?;
            match args.get(1) {
                Some(p) => coalesce_by_mode(&l, &parse_int_tuple(p)?)?,
                None => coalesce(&l),
            }
            .to_string()
        }
        "compose" => {
            let (a, b) = (
                arg(0, "left layout")?,
                parse_tiler(arg(1, "right layout or tiler")?)?,
            );
            match b {
                Tiler::Layout(b) if is_swizzled(a) => {
                    composition_swizzled(&parse_swizzled(a)?, &b)?.to_string()
                }
                Tiler::Layout(b) => composition(&parse_layout(a)?, &b)?.to_string(),
                t => composition_by(&parse_layout(a)?, &t)?.to_string(),
            }
        }
        "complement" => {
            let a = parse_layout(arg(0, "layout")?)?;
            let m = arg(1, "cotarget: a size, a shape or a layout")?;
            if let Ok(n) = m.trim().parse::<i64>() {
                complement(&a, n)?.to_string()
            } else {
                // A shape `(4, 8)` or a layout (its shape) as CUTLASS's cotarget.
                let shape = match parse_layout(m) {
                    Ok(l) => l.shape().leaves(),
                    Err(_) => parse_int_tuple(m)
                        .map_err(|_| {
                            LayoutError::invalid(
                                format!("cute complement cotarget '{m}'"),
                                "not an integer, a shape such as (4, 8) or a layout",
                            )
                        })?
                        .leaves(),
                };
                complement_shape(&a, &shape)?.to_string()
            }
        }
        "divide" | "product" => {
            let a = parse_layout(arg(0, "layout")?)?;
            let kind = args.get(2).map(String::as_str).unwrap_or("logical");
            let b = match parse_tiler(arg(1, "tiler")?)? {
                Tiler::Layout(b) => b,
                t => {
                    return Ok(match (op, kind) {
                        ("divide", "logical") => logical_divide_by(&a, &t)?,
                        ("divide", "zipped") => zipped_divide_by(&a, &t)?,
                        ("divide", "tiled") => tiled_divide_by(&a, &t)?,
                        ("divide", "flat") => flat_divide_by(&a, &t)?,
                        ("product", "logical") => logical_product_by(&a, &t)?,
                        ("product", "zipped") => zipped_product_by(&a, &t)?,
                        ("product", "tiled") => tiled_product_by(&a, &t)?,
                        _ => {
                            return Err(LayoutError::invalid(
                                format!("cute {op} kind '{kind}' with the tiler {t}"),
                                "blocked and raked products take a layout, not a tuple tiler",
                            ))
                        }
                    }
                    .to_string());
                }
            };
            match (op, kind) {
                ("divide", "logical") => logical_divide(&a, &b)?,
                ("divide", "zipped") => zipped_divide(&a, &b)?,
                ("divide", "tiled") => tiled_divide(&a, &b)?,
                ("divide", "flat") => flat_divide(&a, &b)?,
                ("product", "logical") => logical_product(&a, &b)?,
                ("product", "zipped") => zipped_product(&a, &b)?,
                ("product", "tiled") => tiled_product(&a, &b)?,
                ("product", "blocked") => blocked_product(&a, &b)?,
                ("product", "raked") => raked_product(&a, &b)?,
                _ => {
                    return Err(LayoutError::invalid(
                        format!("cute {op} kind '{kind}'"),
                        "unknown kind",
                    ))
                }
            }
            .to_string()
        }
        "left-inverse" => left_inverse(&parse_layout(arg(0, "layout")?)?)?.to_string(),
        "right-inverse" => right_inverse(&parse_layout(arg(0, "layout")?)?)?.to_string(),
        "nullspace" => nullspace(&parse_layout(arg(0, "layout")?)?)?.to_string(),
        _ => {
            let l = arg(0, "layout")?;
            let width = |i: usize, name: &str| -> Result<i64> {
                let t = arg(i, name)?;
                t.trim().parse::<i64>().map_err(|_| {
                    LayoutError::invalid(format!("cute recast {name} '{t}'"), "not an integer")
                })
            };
            let (from, to) = (width(1, "from bits")?, width(2, "to bits")?);
            if is_swizzled(l) {
                recast_swizzled(&parse_swizzled(l)?, from, to)?.to_string()
            } else {
                recast(&parse_layout(l)?, from, to)?.to_string()
            }
        }
    };
    Ok(out)
}

/// Whether an operand is a swizzled layout (`Sw<3,3,3> o L`, the DSL's `S<3,3,3> o 0 o L`, or
/// either inside a DSL type or after a tensor's pointer).
fn is_swizzled(text: &str) -> bool {
    crate::notation::Notation::detect(text) == crate::notation::Notation::Swizzled
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(op: &str, args: &[&str]) -> Result<String> {
        cli_op(op, &args.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn cli_op_prints_pycute_text_for_each_operation() {
        assert_eq!(run("coalesce", &["(4,5):(1,4)"]).unwrap(), "20:1");
        assert_eq!(
            run("coalesce", &["((2,2),(3,1)):((1,2),(4,0))", "(1,1)"]).unwrap(),
            "(4, 3):(1, 4)"
        );
        assert_eq!(
            run("compose", &["(10,2):(16,4)", "4:5"]).unwrap(),
            "(2, 2):(80, 4)"
        );
        assert_eq!(
            run("compose", &["Sw<3,3,3> o (8,64):(64,1)", "(8,8):(1,8)"]).unwrap(),
            "Sw<3,3,3> o (8, 8):(64, 1)"
        );
        assert_eq!(
            run("compose", &["S<3,3,3> o 0 o (8,64):(64,1)", "(8,8):(1,8)"]).unwrap(),
            "Sw<3,3,3> o (8, 8):(64, 1)"
        );
        assert_eq!(run("complement", &["4:2", "24"]).unwrap(), "(2, 3):(1, 8)");
        assert_eq!(
            run("complement", &["3:2", "(8, 8)"]).unwrap(),
            "(2, 16):(1, 6)"
        );
        assert_eq!(
            run("complement", &["4:2", "16:1"]).unwrap(),
            "(2, 2):(1, 8)"
        );
        assert_eq!(
            run("compose", &["(4,8):(8,1)", "(2, 4)"]).unwrap(),
            "(2, 4):(8, 1)"
        );
        assert_eq!(
            run(
                "compose",
                &["(4,(6,3,6),(1,1)):(108,(6,36,1),(6,36))", "(3, 1)"]
            )
            .unwrap(),
            "(3, 1):(108, 0)"
        );
        assert_eq!(run("compose", &["8:1", "(5:1,)"]).unwrap(), "(5,):(1,)");
        assert_eq!(run("left-inverse", &["4:2"]).unwrap(), "(2, 4):(0, 1)");
        assert_eq!(
            run("left-inverse", &["(3,2):(2,18)"]).unwrap(),
            "(2, 9, 2):(0, 1, 3)"
        );
        assert_eq!(
            run("divide", &["(4,2,3):(2,1,8)", "4:2"]).unwrap(),
            "((2, 2), (2, 3)):((4, 1), (2, 8))"
        );
        assert_eq!(
            run("product", &["(3,4):(4,1)", "(2,5):(1,2)", "blocked"]).unwrap(),
            "((3, 2), (4, 5)):((4, 12), (1, 24))"
        );
        assert_eq!(
            run("left-inverse", &["(4,3):(3,1)"]).unwrap(),
            "(3, 4):(4, 1)"
        );
        assert_eq!(
            run("right-inverse", &["(4,3):(3,1)"]).unwrap(),
            "(3, 4):(4, 1)"
        );
        assert_eq!(
            run("recast", &["Sw<3,7,3> o (8,1024):(1024,1)", "1", "16"]).unwrap(),
            "Sw<3,3,3> o (8, 64):(64, 1)"
        );
    }

    #[test]
    fn cli_op_errors_name_the_problem() {
        assert!(run("compose", &["(4,8):(8,1)", "4:3"])
            .unwrap_err()
            .to_string()
            .contains("stride divisibility"));
        assert!(run("frobnicate", &[]).is_err());
        assert!(run("complement", &["4:2"])
            .unwrap_err()
            .to_string()
            .contains("missing argument 2"));
        assert!(run("complement", &["4:2", "x"]).is_err());
        assert!(run("divide", &["8:1", "2:1", "sideways"]).is_err());
        assert!(run("left-inverse", &["8:1", "2:1"]).is_err());
    }
}
