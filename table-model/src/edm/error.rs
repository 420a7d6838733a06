//! The error of a property value that breaks an EDM limit or has the wrong type, and of an unknown EDM type
//! name.

use crate::edm::EdmType;
use std::fmt;

pub use table_model_rules::UnknownEdmType;

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
    pub(crate) property: Option<String>,
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
