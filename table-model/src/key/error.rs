//! The errors of keys: a PartitionKey or RowKey that breaks the key rules, and a key that does not decode as
//! the value it encodes.

use crate::validated::value_error;
use std::fmt;

pub use table_model_rules::{KeyErrorKind, KeyKind};

value_error!(
    /// The error for an invalid PartitionKey or RowKey: the rule it broke and the key, which the message quotes
    /// escaped (control characters show) and cut to its first 64 characters.
    ///
    /// ```
    /// use table_model::{KeyErrorKind, KeyKind, PartitionKey, RowKey};
    /// let err = RowKey::new("2024#05").unwrap_err();
    /// assert_eq!((err.key(), err.kind()), (KeyKind::Row, KeyErrorKind::ForbiddenChar { ch: '#', index: 4 }));
    /// assert_eq!(err.to_string(), "invalid row key \"2024#05\": character `#` at index 4 is not allowed");
    /// let err = PartitionKey::new("line\nbreak").unwrap_err();
    /// assert_eq!(err.to_string(), "invalid partition key \"line\\nbreak\": character U+000A at index 4 is not allowed");
    /// let err = RowKey::new("k".repeat(600)).unwrap_err();
    /// assert_eq!(
    ///     err.to_string(),
    ///     format!("invalid row key \"{}\"...: must be at most 512 UTF-16 code units, found 600", "k".repeat(64))
    /// );
    /// assert_eq!(err.value().len(), 600);
    /// ```
    KeyError,
    table_model_rules::KeyError,
    KeyErrorKind
);

impl KeyError {
    /// Which key was refused.
    pub fn key(&self) -> KeyKind {
        self.error.key()
    }
}

/// Why a key could not be read back as the value it encodes (see [`SortableKey`](crate::key::SortableKey),
/// the time helpers of [`key`](crate::key) and [`split_composite`](crate::key::split_composite)).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum KeyDecodeErrorKind {
    /// The key does not have the fixed length of its format.
    Length {
        /// The length of every key of the format.
        expected: usize,
        /// The length found, in characters.
        found: usize,
    },
    /// A character that the format does not allow at that place, such as a letter where a digit belongs.
    UnexpectedChar {
        /// The character found.
        ch: char,
        /// Its byte index in the key.
        index: usize,
        /// What the format allows there, as the message says it (`a digit`, `` `-` ``).
        expected: &'static str,
    },
    /// A well-formed number outside the values the format encodes: an instant before 1601 or after 9999, or
    /// an integer too large for its type.
    OutOfRange,
    /// In a composite key, an escape character that is not followed by the two uppercase hexadecimal digits
    /// of a character that needs escaping.
    InvalidEscape {
        /// The byte index of the escape character.
        index: usize,
    },
}

/// The values a key format encodes, as an out-of-range message states them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EncodedRange {
    /// Every value that parses (composite keys).
    Any,
    /// A number from zero to this maximum.
    AtMost(u128),
    /// The instants of `Edm.DateTime`.
    Instant,
    /// The instants of `Edm.DateTime` and a `u32` tie-breaker.
    InstantAndTieBreaker,
}

/// A key format, as error messages name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct KeyFormat {
    /// `chronological`, `u32`, `uuid`, `composite`: the word before "key" in messages.
    pub(crate) name: &'static str,
    /// What a length counts: `digits` or `characters`.
    pub(crate) unit: &'static str,
    /// What an out-of-range message says.
    pub(crate) range: EncodedRange,
}

/// The error for a key that does not decode: it names the key format, the key (partition or row, when known),
/// the key text and what was wrong. Decoding never panics.
///
/// ```
/// use table_model::key::{self, SortableKey};
/// use table_model::{KeyDecodeErrorKind, RowKey};
/// let err = key::parse_chronological(&RowKey::new("123")?).unwrap_err();
/// assert_eq!(err.kind(), &KeyDecodeErrorKind::Length { expected: 19, found: 3 });
/// assert_eq!(err.to_string(), "invalid chronological row key `123`: must be 19 digits, found 3");
///
/// let err = u8::from_key_str("300").unwrap_err();
/// assert_eq!(err.to_string(), "invalid u8 key `300`: must be at most 255");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyDecodeError {
    format: &'static KeyFormat,
    key_kind: Option<KeyKind>,
    key: String,
    kind: KeyDecodeErrorKind,
}

/// Longest key text an error keeps, in characters (keys are at most 512 UTF-16 code units; decoders also take
/// arbitrary text).
const KEY_TEXT_MAX_CHARS: usize = 64;

impl KeyDecodeError {
    pub(crate) fn new(format: &'static KeyFormat, key: &str, kind: KeyDecodeErrorKind) -> Self {
        let key = match key.char_indices().nth(KEY_TEXT_MAX_CHARS) {
            Some((end, _)) => format!("{}...", &key[..end]),
            None => key.to_owned(),
        };
        KeyDecodeError { format, key_kind: None, key, kind }
    }

    /// Ties the error to the partition key or the row key, which the message then names.
    #[must_use]
    pub fn in_key(mut self, key: KeyKind) -> Self {
        self.key_kind = Some(key);
        self
    }

    /// What was wrong.
    pub fn kind(&self) -> &KeyDecodeErrorKind {
        &self.kind
    }

    /// The key format that was expected, as the message names it: `chronological`, `reverse-chronological`,
    /// `unique chronological`, `u32`, `reverse i64`, `uuid`, `composite`, ...
    pub fn format(&self) -> &'static str {
        self.format.name
    }

    /// Whether the text was a partition key or a row key, when known.
    pub fn key_kind(&self) -> Option<KeyKind> {
        self.key_kind
    }

    /// The key text, cut to its first 64 characters and `...` when longer.
    pub fn key(&self) -> &str {
        &self.key
    }
}

impl fmt::Display for KeyDecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let which = self.key_kind.map_or("key", KeyKind::describe);
        write!(f, "invalid {} {which} `{}`: ", self.format.name, self.key)?;
        match &self.kind {
            KeyDecodeErrorKind::Length { expected, found } => {
                write!(f, "must be {expected} {}, found {found}", self.format.unit)
            }
            KeyDecodeErrorKind::UnexpectedChar { ch, index, expected } => write!(
                f,
                "character {} at index {index} is not allowed; expected {expected}",
                table_model_rules::DisplayChar(*ch)
            ),
            KeyDecodeErrorKind::OutOfRange => match self.format.range {
                EncodedRange::AtMost(max) => write!(f, "must be at most {max}"),
                EncodedRange::Instant => {
                    write!(f, "must encode an instant from {} to {}", crate::DateTime::MIN, crate::DateTime::MAX)
                }
                EncodedRange::InstantAndTieBreaker => write!(
                    f,
                    "must encode an instant from {} to {} and a tie-breaker of at most {}",
                    crate::DateTime::MIN,
                    crate::DateTime::MAX,
                    u32::MAX
                ),
                EncodedRange::Any => f.write_str("out of range"),
            },
            KeyDecodeErrorKind::InvalidEscape { index } => write!(
                f,
                "escape at index {index} must be `{}` and the two uppercase hexadecimal digits of a character that \
                 needs escaping",
                crate::key::COMPOSITE_ESCAPE
            ),
        }
    }
}

impl std::error::Error for KeyDecodeError {}
