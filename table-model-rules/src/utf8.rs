//! `const` helpers over UTF-8 bytes that the validators share.
//!
//! Layer: base.

/// Decodes the scalar value starting at `bytes[i]` of a valid UTF-8 sequence; returns it and its length.
///
/// The caller guarantees `bytes` is valid UTF-8 (it came from a `&str`) and `i` is a char boundary.
pub(crate) const fn decode(bytes: &[u8], i: usize) -> (char, usize) {
    let b0 = bytes[i] as u32;
    let (scalar, len) = if b0 < 0x80 {
        (b0, 1)
    } else if b0 < 0xE0 {
        (((b0 & 0x1F) << 6) | (bytes[i + 1] as u32 & 0x3F), 2)
    } else if b0 < 0xF0 {
        (((b0 & 0x0F) << 12) | ((bytes[i + 1] as u32 & 0x3F) << 6) | (bytes[i + 2] as u32 & 0x3F), 3)
    } else {
        (
            ((b0 & 0x07) << 18)
                | ((bytes[i + 1] as u32 & 0x3F) << 12)
                | ((bytes[i + 2] as u32 & 0x3F) << 6)
                | (bytes[i + 3] as u32 & 0x3F),
            4,
        )
    };
    match char::from_u32(scalar) {
        Some(c) => (c, len),
        None => (char::REPLACEMENT_CHARACTER, len),
    }
}

/// Length of a UTF-8 string in UTF-16 code units: one per scalar, two for scalars above U+FFFF.
///
/// That is the number of bytes, less the continuation bytes (`10xxxxxx`), plus one for each 4-byte lead
/// (`11110xxx`), counted eight bytes at a time.
pub const fn utf16_len(bytes: &[u8]) -> usize {
    // ASCII, the common case, is one unit per byte; `is_ascii` checks a word at a time.
    if bytes.is_ascii() {
        return bytes.len();
    }
    non_ascii_utf16_len(bytes)
}

/// [`utf16_len`] of a string with a non-ASCII byte: out of line, so that the ASCII case stays a few
/// instructions wherever it is inlined.
#[inline(never)]
const fn non_ascii_utf16_len(bytes: &[u8]) -> usize {
    const LOW: u64 = 0x0101_0101_0101_0101;
    let mut continuation = 0;
    let mut four_byte_leads = 0;
    // Slice patterns, not indices: no bounds check per byte.
    let mut rest = bytes;
    while rest.len() >= 8 {
        // One counter per byte lane, each at most 255 after 255 words: no popcount (not in baseline x86-64).
        let (mut lanes_c, mut lanes_f, mut words) = (0u64, 0u64, 0);
        while let [b0, b1, b2, b3, b4, b5, b6, b7, tail @ ..] = rest {
            let w = u64::from_le_bytes([*b0, *b1, *b2, *b3, *b4, *b5, *b6, *b7]);
            // Bit 7 of each byte, and (shifted into its place) bit 6, 5 and 4 of the same byte.
            lanes_c += ((w & !(w << 1)) >> 7) & LOW;
            lanes_f += ((w & (w << 1) & (w << 2) & (w << 3)) >> 7) & LOW;
            rest = tail;
            words += 1;
            if words == 255 {
                break;
            }
        }
        continuation += sum_lanes(lanes_c);
        four_byte_leads += sum_lanes(lanes_f);
    }
    while let [b, tail @ ..] = rest {
        continuation += (*b & 0xC0 == 0x80) as usize;
        four_byte_leads += (*b >= 0xF0) as usize;
        rest = tail;
    }
    bytes.len() - continuation + four_byte_leads
}

/// The sum of the eight byte lanes of `lanes`.
const fn sum_lanes(lanes: u64) -> usize {
    const EVEN: u64 = 0x00FF_00FF_00FF_00FF;
    // Four 16-bit lanes of at most 510, then their sum (at most 2040) in the top 16 bits.
    let pairs = (lanes & EVEN) + ((lanes >> 8) & EVEN);
    (pairs.wrapping_mul(0x0001_0001_0001_0001) >> 48) as usize
}

/// `<[u8]>::eq_ignore_ascii_case`, usable in `const` context on the supported Rust versions.
pub(crate) const fn eq_ignore_ascii_case(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if !a[i].eq_ignore_ascii_case(&b[i]) {
            return false;
        }
        i += 1;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_len_matches_std() {
        for s in ["", "abc", "é", "日本", "😀", "a😀b", "\u{10FFFF}", "\u{FFFF}"] {
            assert_eq!(utf16_len(s.as_bytes()), s.encode_utf16().count(), "{s:?}");
        }
        // Every width at every offset of the eight-byte words and the tail.
        for c in ['a', '\u{7F}', '\u{80}', 'é', '\u{7FF}', '\u{800}', '日', '\u{FFFF}', '\u{10000}', '😀', '\u{10FFFF}']
        {
            for before in 0..9 {
                for count in 0..11 {
                    let s = format!("{}{}{}", "x".repeat(before), c.to_string().repeat(count), "é");
                    assert_eq!(utf16_len(s.as_bytes()), s.encode_utf16().count(), "{s:?}");
                }
            }
        }
        // Past the 255 words a lane counts before it is summed.
        for c in ['é', '😀', '日'] {
            for count in [255 * 8 - 1, 255 * 8, 255 * 8 + 1, 4000, 32_768] {
                let s = c.to_string().repeat(count);
                assert_eq!(utf16_len(s.as_bytes()), s.encode_utf16().count(), "{c} x {count}");
            }
        }
    }

    #[test]
    fn decode_matches_std() {
        let s = "aé日😀";
        let mut i = 0;
        for c in s.chars() {
            let (d, len) = decode(s.as_bytes(), i);
            assert_eq!(d, c);
            assert_eq!(len, c.len_utf8());
            i += len;
        }
    }
}
