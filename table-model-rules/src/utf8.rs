//! `const` helpers over UTF-8 bytes that the validators share.

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
pub const fn utf16_len(bytes: &[u8]) -> usize {
    // ASCII, the common case, is one unit per byte; `is_ascii` checks a word at a time.
    if bytes.is_ascii() {
        return bytes.len();
    }
    let mut n = 0;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        // Every byte that is not a continuation byte starts a scalar; a 4-byte lead needs a surrogate pair.
        if b & 0xC0 != 0x80 {
            n += if b >= 0xF0 { 2 } else { 1 };
        }
        i += 1;
    }
    n
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
