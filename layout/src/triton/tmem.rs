//! Blackwell tensor memory (TMEM) encodings, `#ttng.tensor_memory_encoding<blockM = 128,
//! blockN = 64, colStride = 1>` and `#ttng.tensor_memory_scales_encoding<>`, as Triton 3.9
//! converts them (`toLinearLayout`, which Gluon exposes as `to_linear_layout`): a map
//! `(row, col) -> (dim0, dim1)` from a TMEM address (row = lane of the 128-lane memory, col =
//! 32-bit column) to the element of a rank-2 tensor `[M, N]` stored there.
//!
//! `tensor_memory_encoding<blockM, blockN, colStride[, fp4Padded]>`, with `n = min(blockN, N)`:
//!
//! 1. Columns first hold `log2(colStride)` zero bases (an element takes `colStride` columns;
//!    one more zero base with `fp4Padded`, whose 4-bit elements each take a byte), then dim1
//!    from 1 up to `n`.
//! 2. Rows: with `blockM = 128`, dim0 from 1 to 64 (a 128 x n tile). With `blockM = 64`, dim0
//!    1 to 8, then one row bit that holds dim0 64 when `M > 64`, else dim1 `n` when `N > n`
//!    (two blocks side by side in the 16-row halves), else nothing (zero), then dim0 16 and 32:
//!    a 128 x n or 64 x 2n tile, or 64 x n with half the rows unused.
//! 3. The tile repeats along further columns, dim0 first, then dim1, to the shape.
//!
//! The shape must be at least the tile (Triton refuses a smaller one) and both dims powers of
//! two. Example (checked against Triton 3.9): `blockM = 64, blockN = 64, colStride = 1` on
//! 128x128 gives row bases `[1,0],[2,0],[4,0],[8,0],[64,0],[16,0],[32,0]` and col bases
//! `[0,1],[0,2],..,[0,32],[0,64]`.
//!
//! `tensor_memory_scales_encoding<>` (the scale factors of a scaled MMA, 8-bit): rows hold dim0
//! 1 to 16 then two zero bases (rows 32 to 127 repeat rows 0 to 31); columns hold dim1 1 and 2,
//! then dim0 from 32 up to `M` (at least one such column, dim0 32), then dim1 from 4 up to `N`.
//! A basis past the shape is zero.
//! Example: on 128x8, cols `[0,1],[0,2],[32,0],[64,0],[0,4]`.
//!
//! Refused: `CGALayout` and `twoCTAs` (a layout over several CTAs; Triton 3.9's CPU conversion
//! gives only one CTA's `row`/`col` bases, so there is no oracle of the whole map), and the
//! older `unpacked` / `CTASplitM` / `CTASplitN` fields (Triton 3.9 writes `colStride`, and
//! `unpacked = true` depends on the element type).

use crate::error::{LayoutError, Result};
use crate::linear::{InDim, LinearLayout, OutDim};
use crate::notation::cursor::Cursor;

const WHAT: &str = "TMEM encoding";

/// Whether `text` is a tensor-memory encoding.
pub fn is_tmem(text: &str) -> bool {
    let t = text.trim_start();
    t.starts_with("#ttng.tensor_memory_encoding") || t.starts_with("#ttng.tensor_memory_scales")
}

/// A parsed TMEM encoding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Tmem {
    /// `tensor_memory_encoding<..>`.
    Encoding {
        /// Rows of one block: 64 or 128.
        block_m: i64,
        /// Columns of one block (elements).
        block_n: i64,
        /// 32-bit columns per element: 1, 2 or 4.
        col_stride: i64,
        /// Byte-backed FP4 operand: a zero column basis more.
        fp4_padded: bool,
    },
    /// `tensor_memory_scales_encoding<>`.
    Scales,
}

/// Parses a TMEM encoding (spaces around it allowed).
pub fn parse(text: &str) -> Result<Tmem> {
    let mut c = Cursor::new(text, WHAT);
    c.expect("#ttng.")?;
    let at = c.pos();
    let kind = c.ident("tensor_memory_encoding or tensor_memory_scales_encoding")?;
    let scales = match kind {
        "tensor_memory_encoding" => false,
        "tensor_memory_scales_encoding" => true,
        _ => {
            return Err(c
                .error_at(
                    at,
                    c.pos(),
                    "tensor_memory_encoding or tensor_memory_scales_encoding",
                )
                .into())
        }
    };
    c.expect("<")?;
    let mut fields: Vec<(String, i64)> = Vec::new();
    if !c.eat(">") {
        loop {
            let kat = c.pos();
            let key = c.ident("a parameter name (blockM, blockN, colStride)")?;
            let kend = c.pos();
            c.expect("=")?;
            if matches!(key, "CGALayout" | "twoCTAs" | "CTASplitM" | "CTASplitN") {
                return Err(c
                    .error_at(
                        kat,
                        kend,
                        format!(
                            "one CTA's encoding: {key} spreads it over several CTAs, which \
                             laycert does not read (Triton 3.9's CPU conversion gives one CTA's \
                             row/col bases only, so there is no oracle of the whole map)"
                        ),
                    )
                    .into());
            }
            let allowed: &[&str] = if scales {
                &[]
            } else {
                &["blockM", "blockN", "colStride", "fp4Padded"]
            };
            if key == "unpacked" && !scales {
                return Err(c
                    .error_at(
                        kat,
                        kend,
                        "colStride (Triton 3.9's field; the older `unpacked = true` is \
                         colStride = 32 / element bits, which the encoding alone does not give)",
                    )
                    .into());
            }
            if !allowed.contains(&key) {
                return Err(c
                    .error_at(
                        kat,
                        kend,
                        if scales {
                            "'>' (tensor_memory_scales_encoding has no parameters but CGALayout)"
                                .to_string()
                        } else {
                            format!(
                                "a parameter of tensor_memory_encoding ({})",
                                allowed.join(", ")
                            )
                        },
                    )
                    .into());
            }
            if fields.iter().any(|(k, _)| k == key) {
                return Err(c
                    .error_at(kat, kend, format!("a new parameter ({key} appears twice)"))
                    .into());
            }
            let value = if key == "fp4Padded" {
                if c.eat("true") {
                    1
                } else if c.eat("false") {
                    0
                } else {
                    return Err(c.error("true or false").into());
                }
            } else {
                let vat = c.pos();
                let v = c.int(false)?;
                let ok = match key {
                    "blockM" => v == 64 || v == 128,
                    "blockN" => (1..=512).contains(&v) && v & (v - 1) == 0,
                    _ => v == 1 || v == 2 || v == 4,
                };
                if !ok {
                    let want = match key {
                        "blockM" => "64 or 128",
                        "blockN" => "a power of two up to 512",
                        _ => "1, 2 or 4",
                    };
                    return Err(c.error_at(vat, c.pos(), format!("{key} = {want}")).into());
                }
                v
            };
            fields.push((key.to_string(), value));
            if c.eat(">") {
                break;
            }
            c.expect(",").map_err(|_| c.error("',' or '>'"))?;
        }
    }
    c.expect_end("end of the TMEM encoding")?;
    if scales {
        return Ok(Tmem::Scales);
    }
    let get = |k: &str| fields.iter().find(|(n, _)| n == k).map(|&(_, v)| v);
    let missing = |k: &str| {
        LayoutError::invalid(
            "#ttng.tensor_memory_encoding",
            format!("{k} is missing (Triton prints blockM, blockN and colStride)"),
        )
    };
    let col_stride = get("colStride").ok_or_else(|| missing("colStride"))?;
    let fp4_padded = get("fp4Padded") == Some(1);
    if fp4_padded && col_stride != 1 {
        return Err(LayoutError::invalid(
            "#ttng.tensor_memory_encoding",
            format!("fp4Padded requires colStride = 1, not {col_stride} (Triton refuses it)"),
        ));
    }
    Ok(Tmem::Encoding {
        block_m: get("blockM").ok_or_else(|| missing("blockM"))?,
        block_n: get("blockN").ok_or_else(|| missing("blockN"))?,
        col_stride,
        fp4_padded,
    })
}

/// `log2(x)` of a power of two.
fn lg(x: i64) -> u32 {
    x.trailing_zeros()
}

/// The unit basis `v` on dim `d` of a rank-2 tensor, or zero where `v` is past `size`.
fn unit(d: usize, v: i64, shape: &[i64]) -> Vec<i64> {
    let mut b = vec![0, 0];
    if v < shape[d] {
        b[d] = v;
    }
    b
}

impl Tmem {
    /// Bits of an element's 8-bit-or-wider type this encoding allows: Triton requires
    /// `bits * colStride <= 32` and 8-bit scales. `Err` says why `bits` is refused.
    pub fn check_element_bits(&self, bits: i64) -> Result<()> {
        let why = match *self {
            Tmem::Encoding { col_stride, .. } if bits * col_stride > 32 => format!(
                "an element of {bits} bits with colStride = {col_stride} takes more than one \
                 32-bit column (Triton requires bits * colStride <= 32)"
            ),
            Tmem::Scales if bits != 8 => {
                format!("scales are 8-bit, not {bits}-bit (Triton requires i8)")
            }
            _ => return Ok(()),
        };
        Err(LayoutError::invalid("TMEM memdesc element type", why))
    }

    /// The map `(row, col) -> (dim0, dim1)` on a tensor of `shape`.
    pub fn to_linear(&self, shape: &[i64]) -> Result<LinearLayout> {
        let bad = |why: String| LayoutError::Shape {
            shape: shape.to_vec(),
            why,
        };
        if shape.len() != 2 {
            return Err(bad("a TMEM encoding lays out a rank-2 tensor".into()));
        }
        if shape.iter().any(|&d| d < 1 || d & (d - 1) != 0) {
            return Err(bad(
                "TMEM dims must be powers of two (Triton requires it)".into()
            ));
        }
        let (m, n) = (shape[0], shape[1]);
        let (rows, cols) = match *self {
            Tmem::Encoding {
                block_m,
                block_n,
                col_stride,
                fp4_padded,
            } => {
                let bn = block_n.min(n);
                let zeros = lg(col_stride) as usize + usize::from(fp4_padded);
                let mut cols: Vec<Vec<i64>> = vec![vec![0, 0]; zeros];
                cols.extend((0..lg(bn)).map(|k| vec![0, 1 << k]));
                let (rows, tile) = if block_m == 128 {
                    (
                        (0..7).map(|k| vec![1 << k, 0]).collect::<Vec<_>>(),
                        [128, bn],
                    )
                } else {
                    let mut rows: Vec<Vec<i64>> = (0..4).map(|k| vec![1 << k, 0]).collect();
                    let (extra, tile) = if m > 64 {
                        (vec![64, 0], [128, bn])
                    } else if n > bn {
                        (vec![0, bn], [64, 2 * bn])
                    } else {
                        (vec![0, 0], [64, bn])
                    };
                    rows.push(extra);
                    rows.extend([vec![16, 0], vec![32, 0]]);
                    (rows, tile)
                };
                if m < tile[0] || n < bn {
                    return Err(bad(format!(
                        "the TMEM tile is {}x{bn}: the shape must be at least that (Triton \
                         refuses a smaller one)",
                        tile[0]
                    )));
                }
                cols.extend((lg(tile[0])..lg(m)).map(|k| vec![1 << k, 0]));
                cols.extend((lg(tile[1])..lg(n)).map(|k| vec![0, 1 << k]));
                (rows, cols)
            }
            Tmem::Scales => {
                let mut rows: Vec<Vec<i64>> = (0..5).map(|k| unit(0, 1 << k, shape)).collect();
                rows.extend([vec![0, 0], vec![0, 0]]);
                let mut cols: Vec<Vec<i64>> = (0..2).map(|k| unit(1, 1 << k, shape)).collect();
                cols.extend((5..lg(m).max(6)).map(|k| unit(0, 1 << k, shape)));
                cols.extend((2..lg(n)).map(|k| vec![0, 1 << k]));
                (rows, cols)
            }
        };
        LinearLayout::new(
            vec![
                InDim {
                    name: "row".into(),
                    bases: rows,
                },
                InDim {
                    name: "col".into(),
                    bases: cols,
                },
            ],
            vec![
                OutDim {
                    name: "dim0".into(),
                    log2_size: lg(m),
                },
                OutDim {
                    name: "dim1".into(),
                    log2_size: lg(n),
                },
            ],
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bases(text: &str, shape: &[i64]) -> (Vec<Vec<i64>>, Vec<Vec<i64>>) {
        let l = parse(text).unwrap().to_linear(shape).unwrap();
        (
            l.in_dim("row").unwrap().bases.clone(),
            l.in_dim("col").unwrap().bases.clone(),
        )
    }

    #[test]
    fn block_m_64_stacks_the_second_row_half_on_dim0_when_m_is_128() {
        let (rows, cols) = bases(
            "#ttng.tensor_memory_encoding<blockM = 64, blockN = 64, colStride = 1>",
            &[128, 128],
        );
        assert_eq!(
            rows,
            [[1, 0], [2, 0], [4, 0], [8, 0], [64, 0], [16, 0], [32, 0]]
        );
        assert_eq!(
            cols,
            [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [0, 32], [0, 64]]
        );
    }

    #[test]
    fn col_stride_and_fp4_padding_are_leading_zero_columns() {
        let (_, cols) = bases(
            "#ttng.tensor_memory_encoding<blockM = 128, blockN = 64, colStride = 4>",
            &[128, 64],
        );
        assert_eq!(&cols[..3], [[0, 0], [0, 0], [0, 1]]);
        let (_, cols) = bases(
            "#ttng.tensor_memory_encoding<blockM = 128, blockN = 64, colStride = 1, \
             fp4Padded = true>",
            &[128, 64],
        );
        assert_eq!(&cols[..2], [[0, 0], [0, 1]]);
    }

    #[test]
    fn scales_repeat_32_rows_and_walk_dim0_in_columns() {
        let (rows, cols) = bases("#ttng.tensor_memory_scales_encoding<>", &[128, 8]);
        assert_eq!(
            rows,
            [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0], [0, 0], [0, 0]]
        );
        assert_eq!(cols, [[0, 1], [0, 2], [32, 0], [64, 0], [0, 4]]);
    }

    #[test]
    fn multi_cta_and_old_fields_are_refused_by_name() {
        for (text, word) in [
            (
                "#ttng.tensor_memory_encoding<blockM = 128, blockN = 64, colStride = 1, \
                 CGALayout = [[1, 0]]>",
                "CGALayout",
            ),
            (
                "#ttng.tensor_memory_encoding<blockM = 128, blockN = 64, unpacked = true>",
                "colStride",
            ),
            (
                "#ttng.tensor_memory_encoding<blockM = 96, blockN = 64, colStride = 1>",
                "64 or 128",
            ),
        ] {
            let e = parse(text).unwrap_err().to_string();
            assert!(e.contains(word), "{text}: {e}");
        }
        let small = parse("#ttng.tensor_memory_encoding<blockM = 128, blockN = 64, colStride = 1>")
            .unwrap()
            .to_linear(&[64, 64])
            .unwrap_err();
        assert!(small.to_string().contains("128x64"), "{small}");
    }
}
