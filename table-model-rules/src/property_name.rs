//! Property names (`docs/rules.md` §1.2): C# identifier rules intersected with XML 1.0 (fifth edition) name rules,
//! at most 255 UTF-16 code units, and not a system property name in any case.
//!
//! ASCII names, the overwhelming majority, are checked by a `const fn` with one table lookup per byte. Other
//! characters are checked against the Unicode general categories of the `regex` crate and the XML name ranges
//! below.
//!
//! Layer: rules.

use crate::display::{DisplayChar, Message, WithValue};
use crate::limits::{PROPERTY_NAME_MAX_UTF16, SYSTEM_PROPERTIES};
use crate::utf8;
use core::fmt;
use regex::Regex;
use std::sync::LazyLock;

/// Why a property name was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum PropertyNameErrorKind {
    /// The empty name.
    Empty,
    /// Longer than 255 UTF-16 code units.
    TooLong {
        /// The length found, in UTF-16 code units.
        utf16_len: usize,
    },
    /// The first character is not a letter or `_` (C# identifier rule).
    InvalidStart {
        /// The character found.
        ch: char,
    },
    /// A character that C# identifiers do not allow, such as `-`, `.`, a space or `@`.
    InvalidChar {
        /// The character found.
        ch: char,
        /// Its byte index in the name.
        index: usize,
    },
    /// A character that C# identifiers allow but XML names do not, such as U+200B.
    NotXmlNameChar {
        /// The character found.
        ch: char,
        /// Its byte index in the name.
        index: usize,
    },
    /// One of the system property names `PartitionKey`, `RowKey`, `Timestamp`, in any case.
    Reserved {
        /// The system property name it matches.
        system: &'static str,
    },
    /// Accepted by the service, but [`check_const`] cannot check non-ASCII characters in `const` context.
    NonAsciiInConst {
        /// Byte index of the first non-ASCII character.
        index: usize,
    },
}

/// The error for an invalid property name.
///
/// ```
/// use table_model_rules::property_name;
/// let err = property_name::check("unit-price").unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "invalid property name: character `-` at index 4 is not allowed; names follow C# identifier rules (letters, digits, `_`)"
/// );
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PropertyNameError {
    kind: PropertyNameErrorKind,
}

impl PropertyNameError {
    /// Which rule the name broke.
    pub const fn kind(&self) -> PropertyNameErrorKind {
        self.kind
    }

    /// The broken rule as a static message, `invalid property name: <rule>` without the details of the input
    /// (for `const` panics, which cannot format).
    pub const fn rule(&self) -> &'static str {
        match self.kind {
            PropertyNameErrorKind::Empty => "invalid property name: must not be empty",
            PropertyNameErrorKind::TooLong { .. } => "invalid property name: must be at most 255 UTF-16 code units",
            PropertyNameErrorKind::InvalidStart { .. } => {
                "invalid property name: must start with a letter or `_` (C# identifier rule)"
            }
            PropertyNameErrorKind::InvalidChar { .. } => {
                "invalid property name: must follow C# identifier rules (letters, digits, `_`)"
            }
            PropertyNameErrorKind::NotXmlNameChar { .. } => "invalid property name: must be a valid XML name",
            PropertyNameErrorKind::Reserved { .. } => "invalid property name: must not be a system property name",
            PropertyNameErrorKind::NonAsciiInConst { .. } => {
                "invalid property name: must be ASCII to be checked in const context"
            }
        }
    }
}

impl PropertyNameError {
    /// The message naming the refused name, quoted as `{:?}` quotes a string and cut to its first 64
    /// characters with `...` when longer: `invalid property name "unit-price": character ...`.
    ///
    /// ```
    /// use table_model_rules::property_name;
    /// let err = property_name::check("unit price").unwrap_err();
    /// assert_eq!(
    ///     err.with_value("unit price").to_string(),
    ///     "invalid property name \"unit price\": character U+0020 at index 4 is not allowed; names follow C# \
    ///      identifier rules (letters, digits, `_`)"
    /// );
    /// ```
    pub fn with_value<'a>(&'a self, name: &'a str) -> impl fmt::Display + 'a {
        WithValue(self, name)
    }
}

impl fmt::Display for PropertyNameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write(None, f)
    }
}

impl Message for PropertyNameError {
    fn subject(&self) -> &'static str {
        "property name"
    }

    fn detail(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            PropertyNameErrorKind::Empty => f.write_str("must not be empty"),
            PropertyNameErrorKind::TooLong { utf16_len } => {
                write!(f, "must be at most {PROPERTY_NAME_MAX_UTF16} UTF-16 code units, found {utf16_len}")
            }
            PropertyNameErrorKind::InvalidStart { ch } => {
                write!(f, "must start with a letter or `_` (C# identifier rule), found {}", DisplayChar(ch))
            }
            PropertyNameErrorKind::InvalidChar { ch, index } => write!(
                f,
                "character {} at index {index} is not allowed; names follow C# identifier rules (letters, digits, `_`)",
                DisplayChar(ch)
            ),
            PropertyNameErrorKind::NotXmlNameChar { ch, index } => write!(
                f,
                "character {} at index {index} is not allowed; names must also be valid XML names",
                DisplayChar(ch)
            ),
            PropertyNameErrorKind::Reserved { system } => {
                write!(f, "`{system}` is a system property; a custom property cannot take that name in any case")
            }
            PropertyNameErrorKind::NonAsciiInConst { index } => write!(
                f,
                "non-ASCII character at index {index} cannot be checked in const context; use `PropertyName::new`"
            ),
        }
    }
}

impl std::error::Error for PropertyNameError {}

const fn err<T>(kind: PropertyNameErrorKind) -> Result<T, PropertyNameError> {
    Err(PropertyNameError { kind })
}

/// Checks a property name.
///
/// # Errors
/// The first rule the name breaks, with the offending character and its byte index.
#[inline]
pub fn check(name: &str) -> Result<(), PropertyNameError> {
    // ASCII names, the common case, need one pass; the first non-ASCII byte sends the name to the Unicode
    // rules below, which check it again from the start (the ASCII prefix passed the same rules).
    match check_const(name) {
        Err(PropertyNameError { kind: PropertyNameErrorKind::NonAsciiInConst { .. } }) => check_unicode(name),
        result => result,
    }
}

/// [`check`] for a name with a non-ASCII character.
#[cold]
#[inline(never)]
fn check_unicode(name: &str) -> Result<(), PropertyNameError> {
    for (index, ch) in name.char_indices() {
        check_char(ch, index)?;
    }
    check_length_and_reserved(name.as_bytes())
}

/// Classes of the bytes of an ASCII name, one lookup per byte: [`START`] for letters and `_`, [`PART`] for
/// those and digits. Non-ASCII bytes and every other ASCII character have no class.
const CLASSES: [u8; 256] = {
    let mut classes = [0u8; 256];
    let mut b = 0;
    while b < 128 {
        let ch = b as u8;
        if ch.is_ascii_alphabetic() || ch == b'_' {
            classes[b] = START | PART;
        } else if ch.is_ascii_digit() {
            classes[b] = PART;
        }
        b += 1;
    }
    classes
};
/// May start a name: an ASCII letter or `_`.
const START: u8 = 1;
/// May follow the first character: an ASCII letter, digit or `_`.
const PART: u8 = 2;

/// Whether two property names are the same name: byte for byte, as the service compares them (case counts).
/// Names are short and compared for each property of each row (the Arrow batch builder checks the column it
/// guessed for a name): those of 4 to 16 bytes are compared as two overlapping words, shorter ones byte by byte,
/// longer ones by `memcmp`.
///
/// ```
/// use table_model_rules::property_name::same;
/// assert!(same(b"Balance", b"Balance"));
/// assert!(!same(b"Balance", b"balance"));
/// assert!(!same(b"Id", b"Ids"));
/// assert!(same(b"PrefersAnalytical", b"PrefersAnalytical"));
/// ```
#[inline]
pub fn same(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    match n {
        0 => true,
        // The first, middle and last bytes are every byte.
        1..=3 => a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1],
        4..=7 => word::<4>(a, 0) == word::<4>(b, 0) && word::<4>(a, n - 4) == word::<4>(b, n - 4),
        8..=16 => word::<8>(a, 0) == word::<8>(b, 0) && word::<8>(a, n - 8) == word::<8>(b, n - 8),
        _ => a == b,
    }
}

/// The `N` bytes of `s` at `at` (within it), as an array to compare at once.
#[inline]
fn word<const N: usize>(s: &[u8], at: usize) -> [u8; N] {
    let mut w = [0; N];
    w.copy_from_slice(&s[at..at + N]);
    w
}

/// Checks an ASCII property name in `const` context, for `PropertyName::from_static`.
///
/// # Errors
/// As [`check`], plus [`PropertyNameErrorKind::NonAsciiInConst`] for any non-ASCII character.
pub const fn check_const(name: &str) -> Result<(), PropertyNameError> {
    let bytes = name.as_bytes();
    if bytes.is_empty() {
        return err(PropertyNameErrorKind::Empty);
    }
    if CLASSES[bytes[0] as usize] & START == 0 {
        return refused(bytes[0], 0);
    }
    let mut i = 1;
    while i < bytes.len() {
        if CLASSES[bytes[i] as usize] & PART == 0 {
            return refused(bytes[i], i);
        }
        i += 1;
    }
    // Every byte is ASCII: one UTF-16 code unit each.
    if bytes.len() > PROPERTY_NAME_MAX_UTF16 {
        return err(PropertyNameErrorKind::TooLong { utf16_len: bytes.len() });
    }
    check_reserved(bytes)
}

/// The error for a byte of a name that the table refused, off the hot path.
#[cold]
const fn refused(b: u8, index: usize) -> Result<(), PropertyNameError> {
    if !b.is_ascii() {
        return err(PropertyNameErrorKind::NonAsciiInConst { index });
    }
    check_ascii_char(b, index)
}

const fn check_ascii_char(b: u8, index: usize) -> Result<(), PropertyNameError> {
    let ch = b as char;
    if index == 0 {
        if !(b.is_ascii_alphabetic() || b == b'_') {
            return err(PropertyNameErrorKind::InvalidStart { ch });
        }
    } else if !(b.is_ascii_alphanumeric() || b == b'_') {
        return err(PropertyNameErrorKind::InvalidChar { ch, index });
    }
    Ok(())
}

const fn check_length_and_reserved(bytes: &[u8]) -> Result<(), PropertyNameError> {
    let utf16_len = utf8::utf16_len(bytes);
    if utf16_len > PROPERTY_NAME_MAX_UTF16 {
        return err(PropertyNameErrorKind::TooLong { utf16_len });
    }
    check_reserved(bytes)
}

const fn check_reserved(bytes: &[u8]) -> Result<(), PropertyNameError> {
    let mut i = 0;
    while i < SYSTEM_PROPERTIES.len() {
        if utf8::eq_ignore_ascii_case(bytes, SYSTEM_PROPERTIES[i].as_bytes()) {
            return err(PropertyNameErrorKind::Reserved { system: SYSTEM_PROPERTIES[i] });
        }
        i += 1;
    }
    Ok(())
}

/// C# identifier-start characters: letters (Lu Ll Lt Lm Lo), letter numbers (Nl) and `_`.
static CSHARP_START: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[\p{Lu}\p{Ll}\p{Lt}\p{Lm}\p{Lo}\p{Nl}_]$").expect("valid pattern"));
/// C# identifier-part characters: the start characters plus Nd, Pc, Mn, Mc and Cf.
static CSHARP_PART: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^[\p{Lu}\p{Ll}\p{Lt}\p{Lm}\p{Lo}\p{Nl}\p{Nd}\p{Pc}\p{Mn}\p{Mc}\p{Cf}_]$").expect("valid pattern")
});

/// XML 1.0 fifth edition `NameStartChar` ranges, without `:` (never a C# identifier character).
const XML_NAME_START: [(u32, u32); 15] = [
    (0x41, 0x5A),
    (0x5F, 0x5F),
    (0x61, 0x7A),
    (0xC0, 0xD6),
    (0xD8, 0xF6),
    (0xF8, 0x2FF),
    (0x370, 0x37D),
    (0x37F, 0x1FFF),
    (0x200C, 0x200D),
    (0x2070, 0x218F),
    (0x2C00, 0x2FEF),
    (0x3001, 0xD7FF),
    (0xF900, 0xFDCF),
    (0xFDF0, 0xFFFD),
    (0x10000, 0xEFFFF),
];
/// The ranges XML 1.0 fifth edition `NameChar` adds to `NameStartChar`.
const XML_NAME_EXTRA: [(u32, u32); 6] =
    [(0x2D, 0x2D), (0x2E, 0x2E), (0x30, 0x39), (0xB7, 0xB7), (0x300, 0x36F), (0x203F, 0x2040)];

fn in_ranges(ranges: &[(u32, u32)], ch: char) -> bool {
    let c = ch as u32;
    ranges.iter().any(|&(lo, hi)| lo <= c && c <= hi)
}

fn check_char(ch: char, index: usize) -> Result<(), PropertyNameError> {
    if ch.is_ascii() {
        return check_ascii_char(ch as u8, index);
    }
    let mut buf = [0u8; 4];
    let s = ch.encode_utf8(&mut buf);
    let first = index == 0;
    let csharp = if first { &CSHARP_START } else { &CSHARP_PART };
    if !csharp.is_match(s) {
        return if first {
            err(PropertyNameErrorKind::InvalidStart { ch })
        } else {
            err(PropertyNameErrorKind::InvalidChar { ch, index })
        };
    }
    let xml = in_ranges(&XML_NAME_START, ch) || (!first && in_ranges(&XML_NAME_EXTRA, ch));
    if !xml {
        return err(PropertyNameErrorKind::NotXmlNameChar { ch, index });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(s: &str) -> Option<PropertyNameErrorKind> {
        check(s).err().map(|e| e.kind())
    }

    #[test]
    fn ascii_rules() {
        assert_eq!(kind(""), Some(PropertyNameErrorKind::Empty));
        assert_eq!(kind("a"), None);
        assert_eq!(kind("_"), None);
        assert_eq!(kind("_1"), None);
        assert_eq!(kind("Price2"), None);
        assert_eq!(kind("1a"), Some(PropertyNameErrorKind::InvalidStart { ch: '1' }));
        for (s, ch, index) in [("a-b", '-', 1), ("a.b", '.', 1), ("a b", ' ', 1), ("a@b", '@', 1), ("ab$", '$', 2)] {
            assert_eq!(kind(s), Some(PropertyNameErrorKind::InvalidChar { ch, index }), "{s}");
        }
        for b in 0u8..=127 {
            let s = format!("a{}", b as char);
            assert_eq!(check(&s).is_ok(), b.is_ascii_alphanumeric() || b == b'_', "{b}");
        }
    }

    #[test]
    fn lengths_in_utf16() {
        assert_eq!(kind(&"a".repeat(255)), None);
        assert_eq!(kind(&"a".repeat(256)), Some(PropertyNameErrorKind::TooLong { utf16_len: 256 }));
        assert_eq!(kind(&"é".repeat(255)), None);
        assert_eq!(kind(&"é".repeat(256)), Some(PropertyNameErrorKind::TooLong { utf16_len: 256 }));
        // U+10400 DESERET CAPITAL LETTER LONG I is Lu and outside the BMP: 2 UTF-16 units each.
        assert_eq!(kind(&format!("a{}", "\u{10400}".repeat(127))), None);
        assert_eq!(kind(&"\u{10400}".repeat(128)), Some(PropertyNameErrorKind::TooLong { utf16_len: 256 }));
    }

    #[test]
    fn unicode_rules() {
        assert_eq!(kind("Größe"), None);
        assert_eq!(kind("名前"), None);
        assert_eq!(kind("Ⅻ"), None); // Nl
        assert_eq!(kind("a\u{0301}"), None); // Mn after a letter
        assert_eq!(kind("a\u{0660}"), None); // Nd (Arabic-Indic zero)
        assert_eq!(kind("a\u{203F}"), None); // Pc, also an XML NameChar
        assert_eq!(kind("\u{0301}a"), Some(PropertyNameErrorKind::InvalidStart { ch: '\u{0301}' }));
        assert_eq!(kind("\u{0660}"), Some(PropertyNameErrorKind::InvalidStart { ch: '\u{0660}' }));
        assert_eq!(kind("😀"), Some(PropertyNameErrorKind::InvalidStart { ch: '😀' }));
        assert_eq!(kind("a😀"), Some(PropertyNameErrorKind::InvalidChar { ch: '😀', index: 1 }));
        assert_eq!(kind("a\u{E000}"), Some(PropertyNameErrorKind::InvalidChar { ch: '\u{E000}', index: 1 }));
        assert_eq!(kind("a\u{85}"), Some(PropertyNameErrorKind::InvalidChar { ch: '\u{85}', index: 1 }));
        // Cf characters are C# identifier parts, but U+200B, U+200E, U+2060 and U+00AD are not XML NameChars.
        for ch in ['\u{200B}', '\u{200E}', '\u{2060}', '\u{00AD}'] {
            assert_eq!(kind(&format!("ab{ch}")), Some(PropertyNameErrorKind::NotXmlNameChar { ch, index: 2 }));
        }
        // U+200C ZERO WIDTH NON-JOINER is Cf and an XML NameStartChar, so it is fine after the first character.
        assert_eq!(kind("a\u{200C}b"), None);
        // A letter outside the XML ranges: U+00D7 is Sm (not a letter); U+037E is Po. Letters beyond U+EFFFF
        // do not exist, so the XML rule bites only on Cf and marks.
        assert_eq!(kind("a\u{00D7}"), Some(PropertyNameErrorKind::InvalidChar { ch: '\u{D7}', index: 1 }));
    }

    #[test]
    fn reserved_in_any_case() {
        for (s, system) in
            [("PartitionKey", "PartitionKey"), ("rowkey", "RowKey"), ("TIMESTAMP", "Timestamp"), ("rowKey", "RowKey")]
        {
            assert_eq!(kind(s), Some(PropertyNameErrorKind::Reserved { system }), "{s}");
        }
        assert_eq!(kind("RowKey2"), None);
        assert_eq!(kind("Time_stamp"), None);
        assert_eq!(
            check("rowkey").unwrap_err().to_string(),
            "invalid property name: `RowKey` is a system property; a custom property cannot take that name in any case"
        );
    }

    #[test]
    fn ascii_start_characters() {
        for b in 0u8..=127 {
            let s = format!("{}a", b as char);
            let allowed = b.is_ascii_alphabetic() || b == b'_';
            assert_eq!(check(&s).is_ok(), allowed, "{b}");
            assert_eq!(check_const(&s).is_ok(), allowed, "{b}");
            if !allowed {
                assert_eq!(kind(&s), Some(PropertyNameErrorKind::InvalidStart { ch: b as char }), "{b}");
            }
        }
    }

    #[test]
    fn first_error_in_order_across_ascii_and_unicode() {
        assert_eq!(kind("-é"), Some(PropertyNameErrorKind::InvalidStart { ch: '-' }));
        assert_eq!(kind("a-é"), Some(PropertyNameErrorKind::InvalidChar { ch: '-', index: 1 }));
        assert_eq!(kind("aé-"), Some(PropertyNameErrorKind::InvalidChar { ch: '-', index: 3 }));
        assert_eq!(kind("é-"), Some(PropertyNameErrorKind::InvalidChar { ch: '-', index: 2 }));
        assert_eq!(kind("rowkeyé"), None);
        assert_eq!(check_const("a-é").unwrap_err().kind(), PropertyNameErrorKind::InvalidChar { ch: '-', index: 1 });
        assert_eq!(check_const("aé-").unwrap_err().kind(), PropertyNameErrorKind::NonAsciiInConst { index: 1 });
    }

    #[test]
    fn const_check() {
        assert!(check_const("Price").is_ok());
        assert_eq!(check_const("Größe").unwrap_err().kind(), PropertyNameErrorKind::NonAsciiInConst { index: 2 });
        assert_eq!(check_const("a-b").unwrap_err().kind(), PropertyNameErrorKind::InvalidChar { ch: '-', index: 1 });
    }
}
