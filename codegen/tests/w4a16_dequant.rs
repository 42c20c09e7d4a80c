//! The W4A16 kernel's in-register dequantization (`lc_dq` in `codegen/src/gemm/w4a16_body.cu`)
//! replayed bit for bit on the CPU from the constants the body defines: for every byte of every
//! word position, `prmt` + `lop3` + `sub.f16x2` must give the two signed nibbles exactly (the
//! low nibble in the low half), so that the scale's `mul.f16x2` is the only rounding.

use codegen::gemm::w4a16::BODY;

/// `#define NAME 0x...u` in the body.
fn constant(name: &str) -> u32 {
    let line = BODY
        .lines()
        .find(|l| l.starts_with(&format!("#define {name} ")))
        .unwrap_or_else(|| panic!("the body defines {name}"));
    let v = line.split_whitespace().nth(2).unwrap();
    u32::from_str_radix(v.trim_start_matches("0x").trim_end_matches('u'), 16).unwrap()
}

/// CUDA's `__byte_perm(x, y, s)`: byte i of the result is byte (nibble i of s) & 7 of {y, x}.
fn byte_perm(x: u32, y: u32, s: u32) -> u32 {
    let src = ((y as u64) << 32) | x as u64;
    (0..4).fold(0, |r, i| {
        let sel = (s >> (4 * i)) & 7;
        r | ((((src >> (8 * sel)) & 0xff) as u32) << (8 * i))
    })
}

/// An IEEE half of normal or zero exponent, exactly.
fn f16(bits: u32) -> f64 {
    let (sign, exp, man) = ((bits >> 15) & 1, (bits >> 10) & 31, bits & 1023);
    assert!(exp < 31, "not finite: {bits:#x}");
    let v = if exp == 0 {
        man as f64 * 2f64.powi(-24)
    } else {
        (1024 + man) as f64 * 2f64.powi(exp as i32 - 25)
    };
    if sign == 1 {
        -v
    } else {
        v
    }
}

fn nibble_value(n: u32) -> f64 {
    (if n >= 8 { n as i32 - 16 } else { n as i32 }) as f64
}

#[test]
fn every_byte_of_every_word_position_dequantizes_exactly() {
    let (sel, step) = (constant("LC_DQ_SEL"), constant("LC_DQ_SEL_STEP"));
    let (mask, bias, sub) = (
        constant("LC_DQ_MASK"),
        constant("LC_DQ_BIAS"),
        constant("LC_DQ_SUB"),
    );
    let mut checked = 0;
    for b in 0..4u32 {
        for byte in 0..256u32 {
            // The other bytes vary too: only byte b may matter.
            for other in [0u32, 0xffff_ffff, 0x5a3c_96e1] {
                let word = (other & !(0xff << (8 * b))) | (byte << (8 * b));
                let d = byte_perm(word, word >> 4, sel + step * b);
                let x = (d & mask) ^ bias;
                for (half, nib) in [(x & 0xffff, byte & 15), (x >> 16, byte >> 4)] {
                    // sub.f16x2 of two halves whose exact difference is a small integer is exact.
                    let got = f16(half) - f16(sub & 0xffff);
                    assert_eq!(
                        got,
                        nibble_value(nib),
                        "byte {byte:#04x} at position {b} (word {word:#010x}): half {half:#06x}"
                    );
                    assert_eq!(sub & 0xffff, sub >> 16, "the same 1032 in both halves");
                    checked += 1;
                }
            }
        }
    }
    assert_eq!(checked, 4 * 256 * 3 * 2);
}

#[test]
fn the_lop3_truth_table_is_mask_then_xor() {
    // lop3's immediate is f(0xF0, 0xCC, 0xAA) for inputs (d, mask, bias); the replay above
    // computes (d & mask) ^ bias.
    let line = BODY
        .lines()
        .find(|l| l.contains("lop3.b32") && l.contains("LC_DQ_MASK"))
        .expect("lc_dq's lop3");
    let lut = line
        .split([' ', ';', '"'])
        .find(|w| w.starts_with("0x"))
        .expect("an immediate");
    let lut = u32::from_str_radix(lut.trim_start_matches("0x"), 16).unwrap();
    assert_eq!(lut, (0xF0 & 0xCC) ^ 0xAA);
}

#[test]
fn a_wrong_selector_is_caught() {
    // The replay is a real check: the previous byte's selector misplaces the nibbles.
    let word = 0x0000_7100u32; // byte 1 = 0x71: nibbles 1 (low) and 7 (high)
                               // Byte 0's selector on a word whose data is in byte 1.
    let d = byte_perm(word, word >> 4, constant("LC_DQ_SEL"));
    let x = (d & constant("LC_DQ_MASK")) ^ constant("LC_DQ_BIAS");
    assert_ne!(f16(x & 0xffff) - 1032.0, 1.0);
}
