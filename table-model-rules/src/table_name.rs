//! Table names (`docs/rules.md` §1.1): `^[A-Za-z][A-Za-z0-9]{2,62}$`, `tables` reserved, plus the read-only
//! Storage Analytics tables (`$MetricsHourPrimaryTransactionsBlob`, ...).
//!
//! Layer: rules.

use crate::display::{DisplayChar, Message, WithValue};
use crate::limits::{TABLE_NAME_MAX_LEN, TABLE_NAME_MIN_LEN};
use crate::utf8;
use core::fmt;

/// Why a table name was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TableNameErrorKind {
    /// Fewer than 3 or more than 63 characters; `len` counts characters.
    Length {
        /// The number of characters found.
        len: usize,
    },
    /// The first character is not an ASCII letter.
    FirstChar {
        /// The character found.
        ch: char,
    },
    /// A character other than an ASCII letter or digit.
    Char {
        /// The character found.
        ch: char,
        /// Its byte index in the name.
        index: usize,
    },
    /// The reserved name `tables`, in any case.
    Reserved,
    /// An analytics table name that does not start with `$Metrics` followed by ASCII letters.
    NotAnalytics,
}

/// The error for an invalid table name.
///
/// ```
/// use table_model_rules::table_name;
/// let err = table_name::check("ab").unwrap_err();
/// assert_eq!(err.to_string(), "invalid table name: must be 3 to 63 characters, found 2");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableNameError {
    kind: TableNameErrorKind,
}

impl TableNameError {
    /// Which rule the name broke.
    pub const fn kind(&self) -> TableNameErrorKind {
        self.kind
    }

    /// The broken rule as a static message, `invalid table name: <rule>` without the details of the input
    /// (for `const` panics, which cannot format).
    pub const fn rule(&self) -> &'static str {
        match self.kind {
            TableNameErrorKind::Length { .. } => "invalid table name: must be 3 to 63 characters",
            TableNameErrorKind::FirstChar { .. } => "invalid table name: must start with an ASCII letter",
            TableNameErrorKind::Char { .. } => "invalid table name: must contain only ASCII letters and digits",
            TableNameErrorKind::Reserved => "invalid table name: `tables` is a reserved name",
            TableNameErrorKind::NotAnalytics => {
                "invalid table name: an analytics table name is `$Metrics` followed by ASCII letters"
            }
        }
    }
}

impl TableNameError {
    /// The message naming the refused name, quoted as `{:?}` quotes a string and cut to its first 64
    /// characters with `...` when longer: `invalid table name "audit-log": character ...`.
    ///
    /// ```
    /// use table_model_rules::table_name;
    /// let err = table_name::check("audit-log").unwrap_err();
    /// assert_eq!(
    ///     err.with_value("audit-log").to_string(),
    ///     "invalid table name \"audit-log\": character `-` at index 5 is not allowed; use ASCII letters and digits only"
    /// );
    /// ```
    pub fn with_value<'a>(&'a self, name: &'a str) -> impl fmt::Display + 'a {
        WithValue(self, name)
    }
}

impl fmt::Display for TableNameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write(None, f)
    }
}

impl Message for TableNameError {
    fn subject(&self) -> &'static str {
        "table name"
    }

    fn detail(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            TableNameErrorKind::Length { len } => write!(f, "must be 3 to 63 characters, found {len}"),
            TableNameErrorKind::FirstChar { ch } => {
                write!(f, "must start with an ASCII letter, found {}", DisplayChar(ch))
            }
            TableNameErrorKind::Char { ch, index } => write!(
                f,
                "character {} at index {index} is not allowed; use ASCII letters and digits only",
                DisplayChar(ch)
            ),
            TableNameErrorKind::Reserved => f.write_str("`tables` is reserved"),
            TableNameErrorKind::NotAnalytics => {
                f.write_str("an analytics table name is `$Metrics` followed by ASCII letters")
            }
        }
    }
}

impl std::error::Error for TableNameError {}

const fn err(kind: TableNameErrorKind) -> Result<(), TableNameError> {
    Err(TableNameError { kind })
}

/// Checks a table name that can be created: 3 to 63 ASCII letters and digits, starting with a letter, and not
/// `tables` in any case.
///
/// # Errors
/// The first rule the name breaks, with the offending character and its byte index.
pub const fn check(name: &str) -> Result<(), TableNameError> {
    check_bytes(name.as_bytes())
}

const fn check_bytes(bytes: &[u8]) -> Result<(), TableNameError> {
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if !b.is_ascii_alphanumeric() {
            let (ch, _) = utf8::decode(bytes, i);
            return err(TableNameErrorKind::Char { ch, index: i });
        }
        i += 1;
    }
    // Only ASCII from here on, so bytes are characters.
    if bytes.len() < TABLE_NAME_MIN_LEN || bytes.len() > TABLE_NAME_MAX_LEN {
        return err(TableNameErrorKind::Length { len: bytes.len() });
    }
    if !bytes[0].is_ascii_alphabetic() {
        return err(TableNameErrorKind::FirstChar { ch: bytes[0] as char });
    }
    if is_reserved(bytes) {
        return err(TableNameErrorKind::Reserved);
    }
    Ok(())
}

const fn is_reserved(bytes: &[u8]) -> bool {
    utf8::eq_ignore_ascii_case(bytes, b"tables")
}

/// Checks the name of a Storage Analytics table, which can be read but not created: `$Metrics` followed by
/// ASCII letters, such as `$MetricsHourPrimaryTransactionsBlob` or `$MetricsCapacityBlob`, at most 63
/// characters after the `$`.
///
/// # Errors
/// [`TableNameErrorKind::NotAnalytics`] or the length rule.
pub const fn check_analytics(name: &str) -> Result<(), TableNameError> {
    let bytes = name.as_bytes();
    let prefix = b"$Metrics";
    if bytes.len() <= prefix.len() {
        return err(TableNameErrorKind::NotAnalytics);
    }
    let mut i = 0;
    while i < bytes.len() {
        let ok = if i < prefix.len() { bytes[i] == prefix[i] } else { bytes[i].is_ascii_alphabetic() };
        if !ok {
            return err(TableNameErrorKind::NotAnalytics);
        }
        i += 1;
    }
    if bytes.len() - 1 > TABLE_NAME_MAX_LEN {
        return err(TableNameErrorKind::Length { len: bytes.len() });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(s: &str) -> Option<TableNameErrorKind> {
        check(s).err().map(|e| e.kind())
    }

    #[test]
    fn lengths() {
        assert_eq!(kind(""), Some(TableNameErrorKind::Length { len: 0 }));
        assert_eq!(kind("ab"), Some(TableNameErrorKind::Length { len: 2 }));
        assert_eq!(kind("abc"), None);
        assert_eq!(kind(&"a".repeat(63)), None);
        assert_eq!(kind(&"a".repeat(64)), Some(TableNameErrorKind::Length { len: 64 }));
    }

    #[test]
    fn characters() {
        assert_eq!(kind("1abc"), Some(TableNameErrorKind::FirstChar { ch: '1' }));
        assert_eq!(kind("ab-c"), Some(TableNameErrorKind::Char { ch: '-', index: 2 }));
        assert_eq!(kind("abcé"), Some(TableNameErrorKind::Char { ch: 'é', index: 3 }));
        assert_eq!(kind("ab_c"), Some(TableNameErrorKind::Char { ch: '_', index: 2 }));
        assert_eq!(kind("a😀c"), Some(TableNameErrorKind::Char { ch: '😀', index: 1 }));
        assert_eq!(kind("A12"), None);
        for b in 0u8..=127 {
            let s = format!("ab{}", b as char);
            assert_eq!(check(&s).is_ok(), b.is_ascii_alphanumeric(), "{b}");
        }
    }

    #[test]
    fn reserved_in_any_case() {
        for s in ["tables", "Tables", "TABLES", "tAbLeS"] {
            assert_eq!(kind(s), Some(TableNameErrorKind::Reserved));
        }
        assert_eq!(kind("tables1"), None);
        assert_eq!(kind("table"), None);
    }

    #[test]
    fn messages() {
        assert_eq!(
            check("1abc").unwrap_err().to_string(),
            "invalid table name: must start with an ASCII letter, found `1`"
        );
        assert_eq!(
            check("ab c").unwrap_err().to_string(),
            "invalid table name: character U+0020 at index 2 is not allowed; use ASCII letters and digits only"
        );
        assert_eq!(check("Tables").unwrap_err().to_string(), "invalid table name: `tables` is reserved");
    }

    #[test]
    fn analytics() {
        assert!(check_analytics("$MetricsHourPrimaryTransactionsBlob").is_ok());
        assert!(check_analytics("$MetricsCapacityBlob").is_ok());
        assert!(check_analytics("$Metrics").is_err());
        assert!(check_analytics("$metricsCapacityBlob").is_err());
        assert!(check_analytics("$MetricsCapacity1").is_err());
        assert!(check_analytics("MetricsCapacityBlob").is_err());
        assert!(check("$MetricsCapacityBlob").is_err());
    }
}
