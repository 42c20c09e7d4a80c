//! Triton's pre-3.2 shared attribute, `#triton_gpu.shared<{vec, perPhase, maxPhase, order,
//! hasLeadingOffset}>` (with the old CTA fields), read as the attribute Triton split it into:
//!
//! - without `hasLeadingOffset` (or `= false`): `swizzled_shared<{vec, perPhase, maxPhase,
//!   order}>`, the same fields and the same offset bases;
//! - with `hasLeadingOffset = true` (the wgmma operand layout): `nvmma_shared<{
//!   swizzlingByteWidth, transposed, elementBitWidth}>` of rank 2, where (perPhase, maxPhase)
//!   = (4, 2), (2, 4), (1, 8) give 32, 64, 128 bytes (Triton refused every other pair),
//!   `transposed` is `order = [0, 1]`, and the element width is `128 / vec` bits: Triton built
//!   these attributes with `vec` = one 16-byte vector of the element type, and Triton 3.2
//!   rewrote them that way (`tritongpu_to_llvm_hopper.mlir`'s `vec = 16, perPhase = 4,
//!   maxPhase = 2, order = [0, 1]` on f8 became `swizzlingByteWidth = 32, transposed = true,
//!   elementBitWidth = 8`).
//!
//! Example: `#triton_gpu.shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0],
//! hasLeadingOffset = true}>` reads as `#ttg.nvmma_shared<{swizzlingByteWidth = 128,
//! transposed = false, elementBitWidth = 16}>`.

use super::{AttrValue, RawAttr, TritonAttr};
use crate::error::Result;

impl TritonAttr {
    /// The Triton 3.2+ attribute a pre-3.2 `shared` attribute denotes.
    pub(super) fn legacy_shared(&self) -> Result<TritonAttr> {
        let leading = match self.value("hasLeadingOffset") {
            None | Some(AttrValue::Bool(false)) => false,
            Some(AttrValue::Bool(true)) => true,
            Some(_) => return Err(self.err("hasLeadingOffset", "expected true or false")),
        };
        let cga = self
            .raw
            .fields
            .iter()
            .filter(|(k, _)| super::CGA_FIELDS.contains(&k.as_str()))
            .cloned();
        let fields: Vec<(String, AttrValue)> = if leading {
            let swizzle = match (self.int("perPhase")?, self.int("maxPhase")?) {
                (4, 2) => 32,
                (2, 4) => 64,
                (1, 8) => 128,
                (p, m) => {
                    return Err(self.err(
                        "maxPhase",
                        format!(
                            "perPhase = {p}, maxPhase = {m} with hasLeadingOffset: Triton \
                             accepted only (4, 2), (2, 4) and (1, 8) (32, 64, 128-byte swizzles)"
                        ),
                    ))
                }
            };
            let vec = self.int("vec")?;
            let bits = match vec {
                4 | 8 | 16 => 128 / vec,
                v => {
                    return Err(self.err(
                        "vec",
                        format!(
                            "{v} with hasLeadingOffset: a 16-byte vector of 32-, 16- or 8-bit \
                             elements (4, 8 or 16) gives the element width"
                        ),
                    ))
                }
            };
            let transposed = match self.list("order")?.as_slice() {
                [1, 0] => false,
                [0, 1] => true,
                other => {
                    return Err(self.err(
                        "order",
                        format!(
                            "{other:?} with hasLeadingOffset: only rank-2 orders [1, 0] and \
                             [0, 1] are read"
                        ),
                    ))
                }
            };
            vec![
                ("swizzlingByteWidth".into(), AttrValue::Int(swizzle)),
                ("transposed".into(), AttrValue::Bool(transposed)),
                ("elementBitWidth".into(), AttrValue::Int(bits)),
            ]
        } else {
            ["vec", "perPhase", "maxPhase"]
                .iter()
                .map(|k| Ok((k.to_string(), AttrValue::Int(self.int(k)?))))
                .chain(std::iter::once(Ok((
                    "order".to_string(),
                    AttrValue::List(self.list("order")?),
                ))))
                .collect::<Result<_>>()?
        };
        Ok(TritonAttr {
            raw: RawAttr {
                dialect: "ttg".into(),
                kind: if leading {
                    "nvmma_shared"
                } else {
                    "swizzled_shared"
                }
                .into(),
                fields: fields.into_iter().chain(cga).collect(),
                span: self.raw.span,
                intervals: Vec::new(),
                params: Vec::new(),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::triton::parse_attr;

    fn read(text: &str) -> String {
        parse_attr(text)
            .unwrap()
            .legacy_shared()
            .unwrap()
            .to_string()
    }

    #[test]
    fn leading_offset_reads_as_the_nvmma_attribute_triton_rewrote_it_to() {
        // tritongpu_to_llvm_hopper.mlir before and after Triton 3.2 (dot_high_precision_acc).
        let old = "#triton_gpu.shared<{vec = 16, perPhase = 4, maxPhase = 2, order = [0, 1], \
                   CTAsPerCGA = [1, 1], CTASplitNum = [1, 1], CTAOrder = [0, 1], \
                   hasLeadingOffset = true}>";
        assert_eq!(
            read(old),
            "#ttg.nvmma_shared<{swizzlingByteWidth = 32, transposed = true, elementBitWidth = 8, \
             CTAsPerCGA = [1, 1], CTASplitNum = [1, 1], CTAOrder = [0, 1]}>"
        );
        let f16 = "#triton_gpu.shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0], \
                   hasLeadingOffset = true}>";
        let new = "#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, \
                   elementBitWidth = 16}>";
        assert_eq!(read(f16), new);
        for shape in [[64, 64], [128, 64], [64, 256]] {
            assert_eq!(
                parse_attr(f16).unwrap().to_linear(&shape).unwrap(),
                parse_attr(new).unwrap().to_linear(&shape).unwrap()
            );
        }
    }

    #[test]
    fn without_leading_offset_it_is_the_swizzled_attribute() {
        let old = "#triton_gpu.shared<{vec = 2, perPhase = 1, maxPhase = 4, order = [1, 0], \
                   hasLeadingOffset = false}>";
        let new = "#ttg.swizzled_shared<{vec = 2, perPhase = 1, maxPhase = 4, order = [1, 0]}>";
        assert_eq!(read(old), new);
        let l = parse_attr(old).unwrap().to_linear(&[8, 8]).unwrap();
        assert_eq!(l, parse_attr(new).unwrap().to_linear(&[8, 8]).unwrap());
        assert!(parse_attr(old).unwrap().is_shared());
    }

    #[test]
    fn leading_offset_outside_triton_s_rule_is_refused_naming_the_field() {
        for (text, field) in [
            (
                "#triton_gpu.shared<{vec = 8, perPhase = 1, maxPhase = 1, order = [1, 0], hasLeadingOffset = true}>",
                "maxPhase",
            ),
            (
                "#triton_gpu.shared<{vec = 2, perPhase = 1, maxPhase = 8, order = [1, 0], hasLeadingOffset = true}>",
                "vec",
            ),
            (
                "#triton_gpu.shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [2, 1, 0], hasLeadingOffset = true}>",
                "order",
            ),
        ] {
            let e = parse_attr(text)
                .unwrap()
                .to_linear(&[64, 64, 2])
                .unwrap_err()
                .to_string();
            assert!(e.contains(&format!("field {field}")), "{e}");
        }
    }
}
