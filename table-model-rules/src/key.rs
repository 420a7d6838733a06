//! PartitionKey and RowKey values (SPEC.md section 2): no `/ \ # ?`, no control characters U+0000 to U+001F
//! and U+007F to U+009F, at most 512 UTF-16 code units; the empty key is valid.

use crate::display::DisplayChar;
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

impl fmt::Display for KeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid {}: ", self.key.describe())?;
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

/// `FORBIDDEN[b]` is true when the single byte `b` starts a forbidden character: the ASCII controls
/// 0x00-0x1F and 0x7F, and `#` `/` `?` `\`. The C1 controls U+0080-U+009F are the two-byte sequences
/// `C2 80`..`C2 9F`, checked separately. Bytes 0x80 and above map to false.
#[rustfmt::skip]
const FORBIDDEN: [bool; 256] = {
    const T: bool = true;
    const F: bool = false;
    [
    //  0  1  2  3  4  5  6  7  8  9  A  B  C  D  E  F
        T, T, T, T, T, T, T, T, T, T, T, T, T, T, T, T, // 0x00 controls
        T, T, T, T, T, T, T, T, T, T, T, T, T, T, T, T, // 0x10 controls
        F, F, F, T, F, F, F, F, F, F, F, F, F, F, F, T, // 0x20 `#` at 0x23, `/` at 0x2F
        F, F, F, F, F, F, F, F, F, F, F, F, F, F, F, T, // 0x30 `?` at 0x3F
        F, F, F, F, F, F, F, F, F, F, F, F, F, F, F, F, // 0x40
        F, F, F, F, F, F, F, F, F, F, F, F, T, F, F, F, // 0x50 `\` at 0x5C
        F, F, F, F, F, F, F, F, F, F, F, F, F, F, F, F, // 0x60
        F, F, F, F, F, F, F, F, F, F, F, F, F, F, F, T, // 0x70 DEL at 0x7F
        F, F, F, F, F, F, F, F, F, F, F, F, F, F, F, F, // 0x80.. continuation and lead bytes
        F, F, F, F, F, F, F, F, F, F, F, F, F, F, F, F,
        F, F, F, F, F, F, F, F, F, F, F, F, F, F, F, F,
        F, F, F, F, F, F, F, F, F, F, F, F, F, F, F, F,
        F, F, F, F, F, F, F, F, F, F, F, F, F, F, F, F,
        F, F, F, F, F, F, F, F, F, F, F, F, F, F, F, F,
        F, F, F, F, F, F, F, F, F, F, F, F, F, F, F, F,
        F, F, F, F, F, F, F, F, F, F, F, F, F, F, F, F,
    ]
};

/// Checks a PartitionKey or RowKey value. Runs in `const` context, allocates nothing, and reads each byte once.
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
    // Fast reject: the UTF-16 length is at most the UTF-8 length.
    let short = bytes.len() <= KEY_MAX_UTF16;
    let mut utf16 = 0;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b < 0x80 {
            if FORBIDDEN[b as usize] {
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
}
