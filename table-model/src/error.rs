//! Every public error of the crate. Messages are lowercase, without a trailing period, and say what was
//! wrong, where (property, key, index) and what the rule is.

use crate::edm::EdmType;
use std::fmt;

pub use table_model_rules::{
    KeyError, KeyErrorKind, KeyKind, PropertyNameError, PropertyNameErrorKind, TableNameError, TableNameErrorKind,
    UnknownEdmType,
};

/// Why a property value was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ValueErrorKind {
    /// An `Edm.String` longer than 32,768 UTF-16 code units.
    StringTooLong {
        /// The length found, in UTF-16 code units.
        utf16_len: usize,
    },
    /// An `Edm.Binary` larger than 65,536 bytes.
    BinaryTooLarge {
        /// The size found, in bytes.
        len: usize,
    },
    /// An `Edm.DateTime` before 1601-01-01T00:00:00Z or after 9999-12-31T23:59:59.9999999Z.
    DateTimeOutOfRange {
        /// The instant, as text (ISO 8601 when it can be written so).
        value: String,
    },
    /// Text that is not an ISO 8601 UTC date and time.
    DateTimeSyntax {
        /// The text found.
        value: String,
    },
    /// A value of another EDM type than the one asked for.
    TypeMismatch {
        /// The type asked for.
        expected: EdmType,
        /// The type found.
        found: EdmType,
    },
    /// A number that does not fit the Rust type asked for.
    OutOfRange {
        /// The value found, as text.
        value: String,
        /// The Rust type asked for.
        target: &'static str,
    },
    /// Any other refusal, described by its message (for conversions written outside this crate).
    Custom {
        /// What was wrong and what the rule is.
        message: String,
    },
}

/// The error for a property value that breaks an EDM limit or has the wrong type.
///
/// It names the property when the value was being stored in or read from one.
///
/// ```
/// use table_model::{EdmString, ValueErrorKind};
/// let err = EdmString::new("x".repeat(40_000)).unwrap_err();
/// assert_eq!(err.kind(), &ValueErrorKind::StringTooLong { utf16_len: 40_000 });
/// assert_eq!(err.to_string(), "invalid Edm.String: must be at most 32768 UTF-16 code units, found 40000");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValueError {
    kind: ValueErrorKind,
    property: Option<String>,
}

impl ValueError {
    /// A new error of this kind, not yet tied to a property.
    pub fn new(kind: ValueErrorKind) -> Self {
        ValueError { kind, property: None }
    }

    /// An error with a free-form message, for conversions written outside this crate.
    pub fn custom(message: impl fmt::Display) -> Self {
        ValueError::new(ValueErrorKind::Custom { message: message.to_string() })
    }

    /// Ties the error to a property name, which the message then names.
    #[must_use]
    pub fn in_property(mut self, property: impl Into<String>) -> Self {
        self.property = Some(property.into());
        self
    }

    /// Which rule the value broke.
    pub fn kind(&self) -> &ValueErrorKind {
        &self.kind
    }

    /// The property the value was for, when known.
    pub fn property(&self) -> Option<&str> {
        self.property.as_deref()
    }
}

impl fmt::Display for ValueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(p) = &self.property {
            write!(f, "property `{p}`: ")?;
        }
        match &self.kind {
            ValueErrorKind::StringTooLong { utf16_len } => write!(
                f,
                "invalid Edm.String: must be at most {} UTF-16 code units, found {utf16_len}",
                crate::limits::STRING_MAX_UTF16
            ),
            ValueErrorKind::BinaryTooLarge { len } => {
                write!(f, "invalid Edm.Binary: must be at most {} bytes, found {len}", crate::limits::BINARY_MAX_BYTES)
            }
            ValueErrorKind::DateTimeOutOfRange { value } => write!(
                f,
                "invalid Edm.DateTime: must be from 1601-01-01T00:00:00Z to 9999-12-31T23:59:59.9999999Z, found {value}"
            ),
            ValueErrorKind::DateTimeSyntax { value } => write!(
                f,
                "invalid Edm.DateTime: expected ISO 8601 UTC such as `2024-01-02T03:04:05.0000000Z`, found `{value}`"
            ),
            ValueErrorKind::TypeMismatch { expected, found } => write!(f, "expected {expected}, found {found}"),
            ValueErrorKind::OutOfRange { value, target } => write!(f, "value {value} does not fit in `{target}`"),
            ValueErrorKind::Custom { message } => f.write_str(message),
        }
    }
}

impl std::error::Error for ValueError {}

/// Why an entity was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum EntityErrorKind {
    /// More than 252 custom properties.
    TooManyProperties {
        /// The number the entity would have.
        count: usize,
    },
    /// Over 1 MiB by the size formula of SPEC.md section 4.
    TooLarge {
        /// The size the entity would have, in bytes.
        size: usize,
    },
    /// A property that is not there.
    MissingProperty {
        /// Its name.
        property: String,
    },
    /// A property value that was refused.
    Value(ValueError),
}

/// The error for an entity that breaks a limit, or a typed read that fails.
///
/// ```
/// use table_model::{Entity, EntityErrorKind, PartitionKey, PropertyName, RowKey};
/// let mut e = Entity::new(PartitionKey::empty(), RowKey::empty());
/// for i in 0..252 {
///     e.insert(PropertyName::new(format!("P{i}"))?, i)?;
/// }
/// let err = e.insert("P252".parse()?, 0).unwrap_err();
/// assert_eq!(err.kind(), &EntityErrorKind::TooManyProperties { count: 253 });
/// assert_eq!(err.to_string(), "invalid entity: at most 252 custom properties are allowed, found 253 (adding `P252`)");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntityError {
    kind: EntityErrorKind,
    property: Option<String>,
}

impl EntityError {
    pub(crate) fn new(kind: EntityErrorKind, property: Option<&str>) -> Self {
        EntityError { kind, property: property.map(str::to_owned) }
    }

    /// Which rule was broken.
    pub fn kind(&self) -> &EntityErrorKind {
        &self.kind
    }

    /// The property being added or read, when there was one.
    pub fn property(&self) -> Option<&str> {
        self.property.as_deref()
    }
}

impl From<ValueError> for EntityError {
    fn from(e: ValueError) -> Self {
        let property = e.property.clone();
        EntityError { kind: EntityErrorKind::Value(e), property }
    }
}

impl fmt::Display for EntityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let adding = |f: &mut fmt::Formatter<'_>| match &self.property {
            Some(p) => write!(f, " (adding `{p}`)"),
            None => Ok(()),
        };
        match &self.kind {
            EntityErrorKind::TooManyProperties { count } => {
                write!(
                    f,
                    "invalid entity: at most {} custom properties are allowed, found {count}",
                    crate::limits::MAX_CUSTOM_PROPERTIES
                )?;
                adding(f)
            }
            EntityErrorKind::TooLarge { size } => {
                write!(f, "invalid entity: must be at most {} bytes, found {size}", crate::limits::ENTITY_MAX_BYTES)?;
                adding(f)
            }
            EntityErrorKind::MissingProperty { property } => write!(f, "missing property `{property}`"),
            EntityErrorKind::Value(e) => fmt::Display::fmt(e, f),
        }
    }
}

impl std::error::Error for EntityError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            EntityErrorKind::Value(e) => Some(e),
            _ => None,
        }
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
