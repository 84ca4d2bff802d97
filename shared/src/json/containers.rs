//! Finding the end of an object or array, 64 bytes at a time.
//!
//! Skipping containers is most of what a policy does with a request: to
//! reach `spec.oidc` it passes `metadata` and every `spec` member before
//! it, and to reach `oldObject` it passes all of `object`. Counting
//! brackets byte by byte cost 3–4 ns a byte inside wasmtime (measured:
//! 40 % of oidc-config's evaluation), so this works as simdjson does:
//! classify a 64-byte block into bitmasks (quotes, backslashes, opening and
//! closing brackets), find the bytes inside strings with a prefix XOR over
//! the quote mask, and count only the brackets outside them. A block whose
//! closing brackets cannot bring the depth to zero is passed with two
//! population counts.
//!
//! On wasm the classification uses 128-bit SIMD (part of WebAssembly 2.0
//! and enabled in every wasmtime Kubewarden ships); elsewhere (the host,
//! unit tests) a portable loop computes the same masks.

use super::{JsonError, UNEXPECTED_END};

const BLOCK: usize = 64;

/// One block's bytes of interest, bit `i` standing for byte `i`.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Masks {
    quotes: u64,
    backslashes: u64,
    opens: u64,
    closes: u64,
}

/// Classifies 64 bytes with wasm SIMD: 16 bytes per comparison. `[`/`{`
/// and `]`/`}` differ only in bit 5, so one OR folds each pair together.
#[cfg(target_arch = "wasm32")]
#[target_feature(enable = "simd128")]
#[inline]
fn classify(block: &[u8; BLOCK]) -> Masks {
    use core::arch::wasm32::{u8x16_bitmask, u8x16_eq, u8x16_splat, u64x2, v128_or};

    let mut masks = Masks::default();
    for (lane, chunk) in block.chunks_exact(16).enumerate() {
        // Two word loads: a vector built from sixteen bytes would be
        // sixteen lane loads.
        let (Some(low), Some(high)) = (word(chunk, 0), word(chunk, 8)) else {
            continue;
        };
        let v = u64x2(low, high);
        let folded = v128_or(v, u8x16_splat(0x20));
        let shift = 16 * lane;
        let bits = |found| u64::from(u8x16_bitmask(found)) << shift;
        masks.quotes |= bits(u8x16_eq(v, u8x16_splat(b'"')));
        masks.backslashes |= bits(u8x16_eq(v, u8x16_splat(b'\\')));
        masks.opens |= bits(u8x16_eq(folded, u8x16_splat(b'{')));
        masks.closes |= bits(u8x16_eq(folded, u8x16_splat(b'}')));
    }
    masks
}

#[cfg(target_arch = "wasm32")]
fn word(bytes: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(*bytes.get(at..)?.first_chunk::<8>()?))
}

/// The same classification, byte by byte.
#[cfg(not(target_arch = "wasm32"))]
fn classify(block: &[u8; BLOCK]) -> Masks {
    let mut masks = Masks::default();
    for (i, byte) in block.iter().enumerate() {
        let bit = 1u64 << i;
        match byte {
            b'"' => masks.quotes |= bit,
            b'\\' => masks.backslashes |= bit,
            b'{' | b'[' => masks.opens |= bit,
            b'}' | b']' => masks.closes |= bit,
            _ => {}
        }
    }
    masks
}

/// Bits of the bytes escaped by a backslash, and whether the block's last
/// byte is a backslash that escapes the next block's first. `carry` says
/// the previous block ended so. Backslashes are rare in Kubernetes
/// objects, so walking them one by one is cheap.
fn escaped(backslashes: u64, carry: bool) -> (u64, bool) {
    let mut escaped = u64::from(carry);
    let mut carry_out = false;
    let mut rest = backslashes;
    while rest != 0 {
        let at = rest.trailing_zeros();
        rest &= rest - 1;
        let bit = 1u64 << at;
        if escaped & bit != 0 {
            continue;
        }
        match bit.checked_shl(1).filter(|next| *next != 0) {
            Some(next) => escaped |= next,
            None => carry_out = true,
        }
    }
    (escaped, carry_out)
}

/// Bit `i` is the XOR of bits `0..=i`: given the unescaped quotes, the
/// bytes from each opening quote up to (not including) its closing quote.
fn prefix_xor(mut bits: u64) -> u64 {
    for shift in [1, 2, 4, 8, 16, 32] {
        bits ^= bits << shift;
    }
    bits
}

/// The masks of the 64 bytes from `offset`, classified in place; only
/// the last, partial block is copied and zero-padded (zero bytes are never
/// structural).
#[cfg_attr(target_arch = "wasm32", target_feature(enable = "simd128"))]
#[inline]
fn masks_at(bytes: &[u8], offset: usize) -> Option<Masks> {
    let rest = bytes.get(offset..).filter(|rest| !rest.is_empty())?;
    match rest.first_chunk::<BLOCK>() {
        Some(block) => Some(classify(block)),
        None => {
            let mut block = [0; BLOCK];
            block.get_mut(..rest.len())?.copy_from_slice(rest);
            Some(classify(&block))
        }
    }
}

/// Index just past the object or array that starts at `at`.
#[cfg_attr(target_arch = "wasm32", target_feature(enable = "simd128"))]
pub(super) fn container_end(bytes: &[u8], at: usize) -> Result<usize, JsonError> {
    let mut depth: u64 = 0;
    // All ones while the previous block ended inside a string.
    let mut in_string: u64 = 0;
    let mut escape_carry = false;
    let mut offset = at;
    while let Some(masks) = masks_at(bytes, offset) {
        let quotes = if masks.backslashes == 0 && !escape_carry {
            masks.quotes
        } else {
            let (escaped, carry) = escaped(masks.backslashes, escape_carry);
            escape_carry = carry;
            masks.quotes & !escaped
        };
        let inside = prefix_xor(quotes) ^ in_string;
        in_string = 0u64.wrapping_sub(inside >> 63);
        let opens = masks.opens & !inside;
        let closes = masks.closes & !inside;
        if u64::from(closes.count_ones()) < depth {
            depth = depth + u64::from(opens.count_ones()) - u64::from(closes.count_ones());
        } else {
            let mut brackets = opens | closes;
            while brackets != 0 {
                let at_bit = brackets.trailing_zeros();
                brackets &= brackets - 1;
                if opens & (1u64 << at_bit) != 0 {
                    depth += 1;
                } else {
                    depth = depth
                        .checked_sub(1)
                        .ok_or(JsonError("unbalanced brackets"))?;
                    if depth == 0 {
                        return Ok(offset + usize::try_from(at_bit).unwrap_or(BLOCK) + 1);
                    }
                }
            }
        }
        offset += BLOCK;
    }
    Err(UNEXPECTED_END)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference: count brackets byte by byte, jumping over strings.
    fn byte_by_byte(bytes: &[u8], at: usize) -> Option<usize> {
        let mut depth = 0usize;
        let mut i = at;
        let mut in_string = false;
        while let Some(byte) = bytes.get(i) {
            match (in_string, byte) {
                (true, b'\\') => i += 1,
                (true, b'"') => in_string = false,
                (true, _) => {}
                (false, b'"') => in_string = true,
                (false, b'{' | b'[') => depth += 1,
                (false, b'}' | b']') => {
                    depth = depth.checked_sub(1)?;
                    if depth == 0 {
                        return Some(i + 1);
                    }
                }
                (false, _) => {}
            }
            i += 1;
        }
        None
    }

    #[test]
    fn ends_agree_with_counting_byte_by_byte_at_every_block_boundary() {
        let pieces = [
            r#"{"a":[1,2,{"b":"}]"}]}"#,
            r#"{"k\"}":"\\","x":["\\\"]"]}"#,
            r#"[{"s":"\\\\\\\""},"{[","]}"]"#,
            r#"{"empty":{},"list":[],"deep":[[[[{}]]]]}"#,
        ];
        for piece in pieces {
            // Shift the container across the 64-byte boundaries, and cut
            // it short, so every carry (string, escape, depth) is crossed.
            for pad in 0..130 {
                let text = format!("{}{piece}   ", " ".repeat(pad));
                let bytes = text.as_bytes();
                assert_eq!(
                    container_end(bytes, pad).ok(),
                    byte_by_byte(bytes, pad),
                    "{text:?}"
                );
                for cut in pad..text.len() {
                    let short = bytes.get(..cut).unwrap();
                    assert_eq!(
                        container_end(short, pad).ok(),
                        byte_by_byte(short, pad),
                        "{:?}",
                        String::from_utf8_lossy(short)
                    );
                }
            }
        }
    }

    #[test]
    fn backslash_runs_escape_alternately() {
        assert_eq!(escaped(0b0000_0001, false), (0b0000_0010, false));
        assert_eq!(escaped(0b0000_0011, false), (0b0000_0010, false));
        assert_eq!(escaped(0b0000_0111, false), (0b0000_1010, false));
        assert_eq!(escaped(0b0000_0001, true), (0b0000_0001, false));
        assert_eq!(escaped(1 << 63, false), (0, true));
        assert_eq!(escaped(0b11 << 62, false), (1 << 63, false));
    }

    #[test]
    fn prefix_xor_marks_string_interiors() {
        assert_eq!(prefix_xor(0b1001), 0b0111);
        assert_eq!(prefix_xor(0b1001_0010), !0u64 << 7 | 0b1110);
    }

    #[test]
    fn classification_marks_every_structural_byte() {
        let mut block = [b'a'; BLOCK];
        for (i, byte) in [
            (0, b'"'),
            (5, b'\\'),
            (17, b'{'),
            (33, b'['),
            (48, b'}'),
            (63, b']'),
        ] {
            *block.get_mut(i).unwrap() = byte;
        }
        let masks = classify(&block);
        assert_eq!(masks.quotes, 1);
        assert_eq!(masks.backslashes, 1 << 5);
        assert_eq!(masks.opens, 1 << 17 | 1 << 33);
        assert_eq!(masks.closes, 1 << 48 | 1 << 63);
    }
}
