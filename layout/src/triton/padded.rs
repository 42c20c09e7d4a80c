//! `padded_shared<[interval:+padding, ...] {order = [..], shape = [..]}>` (or `{offset = [[..]],
//! block = []}`): a shared-memory layout whose offsets walk the tensor by linear bases, with
//! `padding` unused elements inserted after every `interval` elements (the paddings of several
//! intervals add up). The address of offset `o` is `o + sum_k (o >> log2 interval_k) *
//! padding_k`, which is linear over the integers in the bits of `o`: offset bit `i` moves the
//! address by `2^i + sum_{k: 2^i >= interval_k} 2^i / interval_k * padding_k`. When every offset
//! basis moves one tensor dim by one power of two (a permutation of the tensor's bits, as the
//! `order` form and Triton's AMD lowering produce), the layout is a strided CuTe layout from
//! tensor coordinates to addresses, one hierarchical mode per tensor dim.
//!
//! Example (Gluon's docstring): `[8:+1]` with offsets `[0,1], [0,2], [2,0], [4,0], [1,0]` on
//! 8x4 puts `x1y0` at address 18 (offset 16 plus two paddings), and gives
//! `((2, 2, 2), 4):((18, 4, 9), 1)`.

use super::{AttrValue, TritonAttr};
use crate::arith::log2;
use crate::cute::{CuteLayout, IntTuple};
use crate::error::{LayoutError, Result};

impl TritonAttr {
    /// The shape the attribute names itself (`padded_shared`'s `shape = [..]`; the shape a
    /// `shared_linear`'s bases fix).
    pub fn own_shape(&self) -> Option<Vec<i64>> {
        match (self.raw.kind.as_str(), self.value("shape")) {
            ("padded_shared", Some(AttrValue::List(s))) => Some(s.clone()),
            ("shared_linear", _) => self
                .shared_linear()
                .ok()
                .map(|l| l.outs().iter().map(|o| o.size()).collect()),
            _ => None,
        }
    }

    /// Offset bases of a padded layout: given, or the identity walking dims in `order`.
    fn padded_offsets(&self, shape: &[i64], shape_log: &[u32]) -> Result<Vec<Vec<i64>>> {
        let rank = shape.len();
        if let Some(v) = self.value("block") {
            if !matches!(v, AttrValue::List(xs) if xs.is_empty()) {
                return Err(self.err("block", "multi-CTA padded layouts are not imported"));
            }
        }
        match (self.value("offset"), self.value("order")) {
            (Some(_), Some(_)) => Err(self.err("order", "give either offset or order, not both")),
            (Some(AttrValue::Lists(b)), None) => Ok(b.clone()),
            (Some(AttrValue::List(b)), None) if b.is_empty() => Ok(Vec::new()),
            (Some(_), None) => Err(self.err("offset", "expected a list of bases such as [[0, 1]]")),
            (None, Some(_)) => {
                let order = super::check_order(&self.list("order")?)
                    .map_err(|why| self.err("order", why))?;
                if order.len() != rank {
                    return Err(self.err(
                        "order",
                        format!("has {} entries but the tensor has rank {rank}", order.len()),
                    ));
                }
                if let Some(own) = self.own_shape() {
                    if own != shape {
                        return Err(self.err(
                            "shape",
                            format!("is {own:?} but the tensor has shape {shape:?}"),
                        ));
                    }
                }
                let mut bases = Vec::new();
                for &d in &order {
                    for j in 0..shape_log[d] {
                        let mut b = vec![0; rank];
                        b[d] = 1i64 << j;
                        bases.push(b);
                    }
                }
                Ok(bases)
            }
            (None, None) => Err(self.err("offset", "missing (or give order and shape)")),
        }
    }

    pub(super) fn padded_to_cute(&self, shape: &[i64]) -> Result<CuteLayout> {
        let rank = shape.len();
        let shape_log: Vec<u32> = shape
            .iter()
            .map(|&s| log2(s))
            .collect::<Option<_>>()
            .ok_or_else(|| LayoutError::Shape {
                shape: shape.to_vec(),
                why: "a padded shared layout tiles power-of-two dims".into(),
            })?;
        let pairs: Vec<(u32, i64)> = self
            .raw
            .intervals
            .iter()
            .map(|&(i, p)| match (log2(i), log2(p)) {
                (Some(li), Some(_)) if li <= 40 && p <= 1 << 20 => Ok((li, p)),
                _ => Err(self.err(
                    "intervals",
                    format!("{i}:+{p}: interval and padding are powers of two (up to 2^40, 2^20)"),
                )),
            })
            .collect::<Result<_>>()?;
        let bases = self.padded_offsets(shape, &shape_log)?;
        // Element bit (dim, j) -> the offset bit that reaches it.
        let mut bit_of: Vec<Vec<Option<u32>>> =
            shape_log.iter().map(|&l| vec![None; l as usize]).collect();
        for (i, b) in bases.iter().enumerate() {
            let slot = match (b.len() == rank, crate::linear::single_entry(b)) {
                (true, Some((d, v))) => log2(v)
                    .filter(|&j| j < shape_log[d])
                    .map(|j| (d, j as usize)),
                _ => None,
            };
            let Some((d, j)) = slot.filter(|&(d, j)| bit_of[d][j].is_none()) else {
                return Err(self.err(
                    "offset",
                    format!(
                        "basis {i} {b:?}: only offsets that permute the bits of the tensor \
                         {shape:?} are imported (each basis one power of two of one dim, each once)"
                    ),
                ));
            };
            bit_of[d][j] = Some(i as u32);
        }
        let mut modes = Vec::new();
        let mut strides = Vec::new();
        for (d, bits) in bit_of.iter().enumerate() {
            let mut sub: Vec<(i64, i64)> = Vec::new();
            for (j, bit) in bits.iter().enumerate() {
                let Some(i) = bit else {
                    return Err(self.err(
                        "offset",
                        format!("no offset basis reaches dim{d} bit {j} of the tensor {shape:?}"),
                    ));
                };
                let stride = pairs.iter().try_fold(1i64 << i, |acc, &(li, p)| {
                    if *i >= li {
                        crate::arith::add(
                            acc,
                            crate::arith::mul(1i64 << (i - li), p, "padding")?,
                            "padding",
                        )
                    } else {
                        Ok(acc)
                    }
                })?;
                match sub.last_mut() {
                    Some((n, s)) if s.checked_mul(*n) == Some(stride) => *n *= 2,
                    _ => sub.push((2, stride)),
                }
            }
            let (m, s) = match sub.as_slice() {
                [] => (IntTuple::Int(1), IntTuple::Int(0)),
                [(n, st)] => (IntTuple::Int(*n), IntTuple::Int(*st)),
                _ => (
                    IntTuple::flat(&sub.iter().map(|x| x.0).collect::<Vec<_>>()),
                    IntTuple::flat(&sub.iter().map(|x| x.1).collect::<Vec<_>>()),
                ),
            };
            modes.push(m);
            strides.push(s);
        }
        CuteLayout::new(IntTuple::Tuple(modes), IntTuple::Tuple(strides))
    }
}

#[cfg(test)]
mod tests {
    use super::super::parse_attr;

    fn cute(text: &str, shape: &[i64]) -> String {
        parse_attr(text)
            .unwrap()
            .padded_to_cute(shape)
            .unwrap()
            .to_string()
    }

    #[test]
    fn gluon_docstring_examples_give_their_addresses() {
        // [x0, x2, p0, p1, x1, x3]
        let a = "#ttg.padded_shared<[2:+2] {offset = [[2], [1]], block = []}>";
        let l = parse_attr(a).unwrap().padded_to_cute(&[4]).unwrap();
        let addr: Vec<i64> = (0..4).map(|x| l.eval(&[4], &[x]).unwrap()).collect();
        assert_eq!(addr, vec![0, 4, 1, 5]);
        let b = "#ttg.padded_shared<[8:+1] {offset = [[0, 1], [0, 2], [2, 0], [4, 0], [1, 0]], block = []}>";
        assert_eq!(cute(b, &[8, 4]), "((2, 2, 2), 4):((18, 4, 9), 1)");
        let l = parse_attr(b).unwrap().padded_to_cute(&[8, 4]).unwrap();
        assert_eq!(l.eval(&[8, 4], &[1, 0]).unwrap(), 18);
        assert_eq!(l.eval(&[8, 4], &[7, 3]).unwrap(), 18 + 4 + 9 + 3);
        // [e0, e1, p0, e2, e3, p1, p2, p3, e4, ..]: intervals 2 and 4 add their paddings.
        let c = "#ttg.padded_shared<[2:+1, 4:+2] {order = [0], shape = [8]}>";
        let l = parse_attr(c).unwrap().padded_to_cute(&[8]).unwrap();
        let addr: Vec<i64> = (0..8).map(|x| l.eval(&[8], &[x]).unwrap()).collect();
        assert_eq!(addr, vec![0, 1, 3, 4, 8, 9, 11, 12]);
    }

    #[test]
    fn padded_text_prints_back() {
        let t = "#ttg.padded_shared<[32:+4, 64:+8] {order = [1, 0], shape = [64, 64]}>";
        assert_eq!(parse_attr(t).unwrap().to_string(), t);
    }

    #[test]
    fn xor_offsets_and_wrong_shapes_are_refused_by_name() {
        let e = |t: &str, s: &[i64]| {
            parse_attr(t)
                .unwrap()
                .padded_to_cute(s)
                .unwrap_err()
                .to_string()
        };
        let x = "#ttg.padded_shared<[4:+1] {offset = [[0, 1], [1, 1]], block = []}>";
        assert!(e(x, &[2, 2]).contains("permute"), "{}", e(x, &[2, 2]));
        let s = "#ttg.padded_shared<[4:+1] {order = [1, 0], shape = [4, 4]}>";
        assert!(e(s, &[8, 4]).contains("shape"));
        let p = "#ttg.padded_shared<[3:+1] {order = [1, 0], shape = [4, 4]}>";
        assert!(e(p, &[4, 4]).contains("3:+1"));
        let gap = "#ttg.padded_shared<[4:+1] {offset = [[0, 1]], block = []}>";
        assert!(e(gap, &[2, 4]).contains("bit"));
    }
}
