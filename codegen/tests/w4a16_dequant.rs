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

/// The pair scheme's constants (`#if LC_DQ_PAIRS` in the body) replayed: nibbles p and p + 4
/// of a word (p = 0..3; pieces 2 and 3 are pieces 0 and 1 of the word shifted right by
/// LC_DQ_SHIFT) become the two halves exactly, by lop3 (mask then xor) and an exact sub.f16x2
/// (even p) or fma.f16x2 (odd p), for every value of both nibbles under three backgrounds.
#[test]
fn every_nibble_pair_of_every_word_position_dequantizes_exactly() {
    let shift = BODY
        .lines()
        .filter(|l| l.starts_with("#define LC_DQ_SHIFT "))
        .map(|l| l.split_whitespace().nth(2).unwrap().parse::<u32>().unwrap())
        .collect::<Vec<_>>();
    // The byte scheme shifts by 4, the pair scheme by 8 (in that order in the body).
    assert_eq!(shift, vec![8, 4]);
    let (me, be, se) = (
        constant("LC_DQP_MASK_EVEN"),
        constant("LC_DQP_BIAS_EVEN"),
        constant("LC_DQP_SUB_EVEN"),
    );
    let (mo, bo, mul, add) = (
        constant("LC_DQP_MASK_ODD"),
        constant("LC_DQP_BIAS_ODD"),
        constant("LC_DQP_MUL_ODD"),
        constant("LC_DQP_ADD_ODD"),
    );
    for c in [se, mul, add] {
        assert_eq!(
            c & 0xffff,
            c >> 16,
            "the same constant in both halves: {c:#x}"
        );
    }
    let mut checked = 0;
    for p in 0..4u32 {
        for lo in 0..16u32 {
            for hi in 0..16u32 {
                for other in [0u32, 0xffff_ffff, 0x5a3c_96e1] {
                    let keep = !((0xf << (4 * p)) | (0xf << (4 * (p + 4))));
                    let word = (other & keep) | (lo << (4 * p)) | (hi << (4 * (p + 4)));
                    let w = if p < 2 { word } else { word >> shift[0] };
                    let x = if p % 2 == 0 {
                        (w & me) ^ be
                    } else {
                        (w & mo) ^ bo
                    };
                    for (half, nib) in [(x & 0xffff, lo), (x >> 16, hi)] {
                        // Both results are small integers, exactly representable, so the
                        // f16 operations (x - 1032, or x * 2^-4 + (-72)) are exact.
                        let got = if p % 2 == 0 {
                            f16(half) - f16(se & 0xffff)
                        } else {
                            f16(half) * f16(mul & 0xffff) + f16(add & 0xffff)
                        };
                        assert_eq!(
                            got,
                            nibble_value(nib),
                            "pair {p} of word {word:#010x}: half {half:#06x}"
                        );
                        checked += 1;
                    }
                }
            }
        }
    }
    assert_eq!(checked, 4 * 16 * 16 * 3 * 2);
    // x * 2^-4 is exact and x / 16 - 72 lies in -8..=7: the fma's single rounding is exact.
    assert_eq!(f16(mul & 0xffff), 1.0 / 16.0);
    assert_eq!(f16(add & 0xffff), -72.0);
}

/// A's interleave (`lc_a_prmt` with LC_A_PRMT_LO / LC_A_PRMT_HI) is what the validation
/// models: word i of the chunk at k takes the low halves of word i of the chunks at k and
/// k + 16, word i of the chunk at k + 16 their high halves.
#[test]
fn the_a_interleave_selectors_take_low_then_high_halves() {
    let (lo_sel, hi_sel) = (constant("LC_A_PRMT_LO"), constant("LC_A_PRMT_HI"));
    for (x, y) in [
        (0x1111_2222u32, 0x3333_4444u32),
        (0xdead_beef, 0x0123_4567),
        (0, 0xffff_ffff),
    ] {
        assert_eq!(byte_perm(x, y, lo_sel), (x & 0xffff) | (y << 16));
        assert_eq!(byte_perm(x, y, hi_sel), (x >> 16) | (y & 0xffff_0000));
    }
    // The selector is a real check: swapping them breaks it.
    assert_ne!(byte_perm(1, 2, hi_sel), byte_perm(1, 2, lo_sel));
}
