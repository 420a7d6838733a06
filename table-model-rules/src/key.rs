//! PartitionKey and RowKey values (`docs/rules.md` §2): no `/ \ # ?`, no control characters U+0000 to U+001F
//! and U+007F to U+009F, at most 512 UTF-16 code units; the empty key is valid.
//!
//! Layer: rules.

use crate::display::{DisplayChar, Message, WithValue};
use crate::limits::KEY_MAX_UTF16;
use crate::utf8;
use core::fmt;

/// Which of the two keys a value is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeyKind {
    /// The `PartitionKey`.
    Partition,
    /// The `RowKey`.
    Row,
}

impl KeyKind {
    /// `partition key` or `row key`, as error messages say it.
    pub const fn describe(self) -> &'static str {
        match self {
            KeyKind::Partition => "partition key",
            KeyKind::Row => "row key",
        }
    }

    /// The system property name: `PartitionKey` or `RowKey`.
    pub const fn property_name(self) -> &'static str {
        match self {
            KeyKind::Partition => "PartitionKey",
            KeyKind::Row => "RowKey",
        }
    }
}

/// Why a key was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum KeyErrorKind {
    /// A forbidden character: `/`, `\`, `#`, `?` or a control character.
    ForbiddenChar {
        /// The character found.
        ch: char,
        /// Its byte index in the key.
        index: usize,
    },
    /// Longer than 512 UTF-16 code units.
    TooLong {
        /// The length found, in UTF-16 code units.
        utf16_len: usize,
    },
}

/// The error for an invalid PartitionKey or RowKey.
///
/// ```
/// use table_model_rules::{key, KeyKind};
/// let err = key::check(KeyKind::Row, "2024#05").unwrap_err();
/// assert_eq!(err.to_string(), "invalid row key: character `#` at index 4 is not allowed");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyError {
    key: KeyKind,
    kind: KeyErrorKind,
}

impl KeyError {
    /// Which key was refused.
    pub const fn key(&self) -> KeyKind {
        self.key
    }

    /// Which rule the key broke.
    pub const fn kind(&self) -> KeyErrorKind {
        self.kind
    }

    /// The broken rule as a static message, `invalid row key: <rule>` without the details of the input
    /// (for `const` panics, which cannot format).
    pub const fn rule(&self) -> &'static str {
        match (self.key, self.kind) {
            (KeyKind::Partition, KeyErrorKind::ForbiddenChar { .. }) => {
                "invalid partition key: must not contain `/`, `\\`, `#`, `?` or control characters"
            }
            (KeyKind::Row, KeyErrorKind::ForbiddenChar { .. }) => {
                "invalid row key: must not contain `/`, `\\`, `#`, `?` or control characters"
            }
            (KeyKind::Partition, KeyErrorKind::TooLong { .. }) => {
                "invalid partition key: must be at most 512 UTF-16 code units"
            }
            (KeyKind::Row, KeyErrorKind::TooLong { .. }) => "invalid row key: must be at most 512 UTF-16 code units",
        }
    }
}

impl KeyError {
    /// The message naming the refused key, quoted as `{:?}` quotes a string (so that control characters show)
    /// and cut to its first 64 characters with `...` when longer: `invalid row key "2024#05": character ...`.
    ///
    /// ```
    /// use table_model_rules::{key, KeyKind};
    /// let err = key::check(KeyKind::Partition, "tab\there").unwrap_err();
    /// assert_eq!(
    ///     err.with_value("tab\there").to_string(),
    ///     "invalid partition key \"tab\\there\": character U+0009 at index 3 is not allowed"
    /// );
    /// ```
    pub fn with_value<'a>(&'a self, key: &'a str) -> impl fmt::Display + 'a {
        WithValue(self, key)
    }
}

impl fmt::Display for KeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write(None, f)
    }
}

impl Message for KeyError {
    fn subject(&self) -> &'static str {
        self.key.describe()
    }

    fn detail(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            KeyErrorKind::ForbiddenChar { ch, index } => {
                write!(f, "character {} at index {index} is not allowed", DisplayChar(ch))
            }
            KeyErrorKind::TooLong { utf16_len } => {
                write!(f, "must be at most {KEY_MAX_UTF16} UTF-16 code units, found {utf16_len}")
            }
        }
    }
}

impl std::error::Error for KeyError {}

/// Whether the single byte `b` is a forbidden character: the ASCII controls 0x00-0x1F and 0x7F, and `#` `/`
/// `?` `\`. The C1 controls U+0080-U+009F are the two-byte sequences `C2 80`..`C2 9F`, checked separately.
const fn is_forbidden_byte(b: u8) -> bool {
    (b < 0x20) | (b == 0x7F) | (b == b'#') | (b == b'/') | (b == b'?') | (b == b'\\')
}

/// Bytes the ASCII fast path tests at once.
const BLOCK: usize = 16;

/// Whether every byte of the block is an allowed ASCII character. There are no branches and no early exit, so
/// the compiler turns the loop into a few vector instructions. When a block fails, `check_bytes` goes back to
/// the byte loop to find and report the first offending character.
#[inline(always)]
const fn is_plain_ascii(block: &[u8; BLOCK]) -> bool {
    let mut bad = 0u8;
    let mut j = 0;
    while j < BLOCK {
        bad |= forbidden_or_non_ascii(block[j]);
        j += 1;
    }
    bad == 0
}

/// `0x80` when the byte is forbidden or not ASCII, else `0`: the same rule as [`is_forbidden_byte`], written
/// with additions that cannot carry out of the byte instead of comparisons, so that it vectorizes.
#[inline(always)]
const fn forbidden_or_non_ascii(b: u8) -> u8 {
    let y = b & 0x7F;
    // Bit 7 of each term is set when `y` passes one test: at least 0x20, not `#`, not `/` or `?` (they differ
    // in bit 4 only), not `\`. Each sum is at most 0xFE.
    let passes = (y + 0x60) & ((y ^ b'#') + 0x7F) & (((y | 0x10) ^ b'?') + 0x7F) & ((y ^ b'\\') + 0x7F);
    // Bit 7 of `b` is set for non-ASCII; bit 7 of `y + 1` for DEL.
    (b | (y + 1) | !passes) & 0x80
}

/// Whether every byte is an allowed ASCII character, tested a block at a time.
#[inline(always)]
const fn is_plain_ascii_str(bytes: &[u8]) -> bool {
    let len = bytes.len();
    let mut block = [b'a'; BLOCK];
    if len < BLOCK {
        // Two overlapping halves when there are 8 bytes or more, else each byte, padded with an allowed `a`.
        let half = BLOCK / 2;
        let mut j = 0;
        if len >= half {
            while j < half {
                block[j] = bytes[j];
                block[half + j] = bytes[len - half + j];
                j += 1;
            }
        } else {
            while j < len {
                block[j] = bytes[j];
                j += 1;
            }
        }
        return is_plain_ascii(&block);
    }
    let mut start = 0;
    loop {
        // The last block ends at the end of the key, overlapping the one before it rather than leaving a tail.
        if start + BLOCK > len {
            start = len - BLOCK;
        }
        match bytes.split_at(start).1.first_chunk::<BLOCK>() {
            Some(block) if is_plain_ascii(block) => {}
            _ => return false,
        }
        start += BLOCK;
        if start >= len {
            return true;
        }
    }
}

/// Checks a PartitionKey or RowKey value. Runs in `const` context and allocates nothing.
///
/// # Errors
/// The first forbidden character with its byte index, or the measured length against the 512-unit limit.
pub const fn check(key: KeyKind, value: &str) -> Result<(), KeyError> {
    match check_bytes(value.as_bytes()) {
        Ok(()) => Ok(()),
        Err(kind) => Err(KeyError { key, kind }),
    }
}

const fn check_bytes(bytes: &[u8]) -> Result<(), KeyErrorKind> {
    // Fast path: a key of allowed ASCII characters, one UTF-16 unit each.
    if is_plain_ascii_str(bytes) {
        if bytes.len() > KEY_MAX_UTF16 {
            return Err(KeyErrorKind::TooLong { utf16_len: bytes.len() });
        }
        return Ok(());
    }
    // Anything else, byte by byte: non-ASCII text, or an error to find and report.
    // Fast reject: the UTF-16 length is at most the UTF-8 length.
    let short = bytes.len() <= KEY_MAX_UTF16;
    let mut utf16 = 0;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b < 0x80 {
            if is_forbidden_byte(b) {
                return Err(KeyErrorKind::ForbiddenChar { ch: b as char, index: i });
            }
            utf16 += 1;
        } else if b & 0xC0 != 0x80 {
            // A lead byte: C2 80..C2 9F are the C1 controls U+0080..U+009F.
            if b == 0xC2 && bytes[i + 1] <= 0x9F {
                let (ch, _) = utf8::decode(bytes, i);
                return Err(KeyErrorKind::ForbiddenChar { ch, index: i });
            }
            utf16 += if b >= 0xF0 { 2 } else { 1 };
        }
        i += 1;
    }
    if !short && utf16 > KEY_MAX_UTF16 {
        return Err(KeyErrorKind::TooLong { utf16_len: utf16 });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(s: &str) -> Option<KeyErrorKind> {
        check(KeyKind::Partition, s).err().map(|e| e.kind())
    }

    #[test]
    fn empty_and_lengths() {
        assert_eq!(kind(""), None);
        assert_eq!(kind(&"a".repeat(511)), None);
        assert_eq!(kind(&"a".repeat(512)), None);
        assert_eq!(kind(&"a".repeat(513)), Some(KeyErrorKind::TooLong { utf16_len: 513 }));
        // 'é' is 2 UTF-8 bytes but 1 UTF-16 unit: 512 of them are fine.
        assert_eq!(kind(&"é".repeat(512)), None);
        assert_eq!(kind(&"é".repeat(513)), Some(KeyErrorKind::TooLong { utf16_len: 513 }));
        // An emoji is 2 UTF-16 units.
        assert_eq!(kind(&"😀".repeat(256)), None);
        assert_eq!(kind(&format!("{}a", "😀".repeat(256))), Some(KeyErrorKind::TooLong { utf16_len: 513 }));
    }

    #[test]
    fn every_forbidden_character() {
        let forbidden: Vec<char> =
            ['/', '\\', '#', '?'].into_iter().chain('\u{0}'..='\u{1F}').chain('\u{7F}'..='\u{9F}').collect();
        for c in '\u{0}'..='\u{FF}' {
            let s = format!("ab{c}");
            let expected = forbidden.contains(&c).then_some(KeyErrorKind::ForbiddenChar { ch: c, index: 2 });
            assert_eq!(kind(&s), expected, "{:?}", c);
        }
        for c in ['\u{A0}', '\u{100}', '\u{2028}', '😀', '\u{FFFF}', '\''] {
            assert_eq!(kind(&format!("x{c}")), None);
        }
    }

    #[test]
    fn first_error_wins_and_messages() {
        assert_eq!(kind("a/b#"), Some(KeyErrorKind::ForbiddenChar { ch: '/', index: 1 }));
        let err = check(KeyKind::Row, "2024#05").unwrap_err();
        assert_eq!(err.to_string(), "invalid row key: character `#` at index 4 is not allowed");
        let err = check(KeyKind::Partition, "a\tb").unwrap_err();
        assert_eq!(err.to_string(), "invalid partition key: character U+0009 at index 1 is not allowed");
        let err = check(KeyKind::Partition, "é\u{85}").unwrap_err();
        assert_eq!(err.to_string(), "invalid partition key: character U+0085 at index 2 is not allowed");
        let err = check(KeyKind::Row, &"x".repeat(600)).unwrap_err();
        assert_eq!(err.to_string(), "invalid row key: must be at most 512 UTF-16 code units, found 600");
    }

    /// The rule of `docs/rules.md` §2.1 character by character: the oracle for the block fast path.
    fn oracle(s: &str) -> Option<KeyErrorKind> {
        let bad = |c: char| matches!(c, '/' | '\\' | '#' | '?' | '\u{0}'..='\u{1F}' | '\u{7F}'..='\u{9F}');
        if let Some((index, ch)) = s.char_indices().find(|&(_, c)| bad(c)) {
            return Some(KeyErrorKind::ForbiddenChar { ch, index });
        }
        let utf16_len = s.encode_utf16().count();
        (utf16_len > KEY_MAX_UTF16).then_some(KeyErrorKind::TooLong { utf16_len })
    }

    #[test]
    fn block_rule_is_the_byte_rule() {
        for b in 0..=u8::MAX {
            assert_eq!(forbidden_or_non_ascii(b) != 0, is_forbidden_byte(b) || b >= 0x80, "{b:#04X}");
        }
    }

    #[test]
    fn forbidden_character_at_every_index_around_blocks() {
        for len in (1..=3 * BLOCK + 1).chain([511, 512, 513, 600]) {
            for at in 0..len {
                for (c, filler) in [('#', 'x'), ('\u{85}', 'x'), ('\u{1F}', 'é'), ('?', '😀')] {
                    let s: String = (0..len).map(|i| if i == at { c } else { filler }).collect();
                    assert_eq!(kind(&s), oracle(&s), "{len} {at} {c:?} {filler:?}");
                }
            }
            let plain = "k".repeat(len);
            assert_eq!(kind(&plain), oracle(&plain), "{len}");
        }
    }

    proptest::proptest! {
        #[test]
        fn agrees_with_the_oracle(s in "[a-z0-9 #/?\\\\\t\u{7F}\u{80}\u{85}\u{9F}\u{A0}é😀]{0,80}|\\PC{0,600}|[a-z]{500,530}") {
            proptest::prop_assert_eq!(kind(&s), oracle(&s));
        }
    }
}
