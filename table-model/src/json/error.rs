//! The errors of the JSON wire format: an entity that cannot be written as a request body, and a response
//! that cannot be decoded into entities.

use crate::edm::error::{UnknownEdmType, ValueError};
use crate::edm::EdmType;
use crate::entity::error::EntityError;
#[cfg(feature = "http")]
use crate::entity::error::EntityErrorKind;
use crate::key::error::{KeyError, KeyKind};
use crate::name::error::PropertyNameError;
use std::fmt;

/// Why an entity could not be encoded as a JSON request body (see [`crate::json`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum EncodeErrorKind {
    /// A `PartitionKey` or `RowKey` that breaks the key rules.
    InvalidKey(KeyError),
    /// A property name that breaks the naming rules.
    InvalidPropertyName(PropertyNameError),
    /// The same property written twice.
    DuplicateProperty,
    /// More than 252 custom properties.
    TooManyProperties {
        /// The number the body would have.
        count: usize,
    },
    /// A property value over its EDM limit, or a conversion that failed.
    Value(ValueError),
    /// Over 1 MiB by the size formula of `docs/rules.md` §4.2.
    EntityTooLarge {
        /// The size by the formula, in bytes.
        size: usize,
    },
    /// An encoded body over 1 MiB of UTF-8 JSON (the check the emulator makes, `docs/rules.md` §4.2).
    BodyTooLarge {
        /// The encoded size, in bytes.
        size: usize,
    },
}

/// The error for an entity that cannot be written as a JSON request body.
///
/// ```
/// use table_model::json::BodyWriter;
/// use table_model::EncodeErrorKind;
/// let mut w = BodyWriter::new("p", "r");
/// w.property_i32("Unit-Price", 5);
/// let err = w.finish().unwrap_err();
/// assert!(matches!(err.kind(), EncodeErrorKind::InvalidPropertyName(_)));
/// assert_eq!(err.property(), Some("Unit-Price"));
/// assert_eq!(
///     err.to_string(),
///     "property `Unit-Price`: invalid property name: character `-` at index 4 is not allowed; names follow C# identifier rules (letters, digits, `_`)"
/// );
/// ```
///
/// The error is one pointer wide, so that the `Result`s of the writer stay small.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncodeError(Box<EncodeErrorInner>);

#[derive(Debug, Clone, PartialEq, Eq)]
struct EncodeErrorInner {
    kind: EncodeErrorKind,
    property: Option<String>,
}

impl EncodeError {
    pub(crate) fn new(kind: EncodeErrorKind, property: Option<&str>) -> Self {
        EncodeError(Box::new(EncodeErrorInner { kind, property: property.map(str::to_owned) }))
    }

    /// Which rule was broken.
    pub fn kind(&self) -> &EncodeErrorKind {
        &self.0.kind
    }

    /// The property being written, when there was one.
    pub fn property(&self) -> Option<&str> {
        self.0.property.as_deref()
    }
}

impl From<ValueError> for EncodeError {
    fn from(e: ValueError) -> Self {
        let property = e.property.clone();
        EncodeError(Box::new(EncodeErrorInner { kind: EncodeErrorKind::Value(e), property }))
    }
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let max = crate::limits::ENTITY_MAX_BYTES;
        let EncodeErrorInner { kind, property } = &*self.0;
        match kind {
            // A `ValueError` names its property itself.
            EncodeErrorKind::Value(e) => return fmt::Display::fmt(e, f),
            EncodeErrorKind::InvalidKey(e) => return fmt::Display::fmt(e, f),
            _ => {}
        }
        if let Some(p) = property {
            write!(f, "property `{p}`: ")?;
        }
        match kind {
            // The property, named above, is the refused name.
            EncodeErrorKind::InvalidPropertyName(e) => fmt::Display::fmt(e.without_value(), f),
            EncodeErrorKind::DuplicateProperty => f.write_str("written twice; each property may appear once"),
            EncodeErrorKind::TooManyProperties { count } => write!(
                f,
                "invalid entity: at most {} custom properties are allowed, found {count}",
                crate::limits::MAX_CUSTOM_PROPERTIES
            ),
            EncodeErrorKind::EntityTooLarge { size } => {
                write!(f, "invalid entity: must be at most {max} bytes by the size formula, found {size}")
            }
            EncodeErrorKind::BodyTooLarge { size } => {
                write!(f, "invalid entity: the JSON body must be at most {max} bytes, found {size}")
            }
            EncodeErrorKind::Value(_) | EncodeErrorKind::InvalidKey(_) => Ok(()),
        }
    }
}

impl std::error::Error for EncodeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self.kind() {
            EncodeErrorKind::InvalidKey(e) => Some(e),
            EncodeErrorKind::InvalidPropertyName(e) => Some(e),
            EncodeErrorKind::Value(e) => Some(e),
            _ => None,
        }
    }
}

/// Why a JSON response could not be decoded into entities (see [`crate::json`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DecodeErrorKind {
    /// Not well-formed JSON, or JSON of the wrong shape (an array where an entity object belongs).
    InvalidJson {
        /// The line of the error, from 1.
        line: usize,
        /// The column of the error, from 1, as `serde_json` reports it (0 before the first character of a line).
        column: usize,
        /// What `serde_json` reported, without its position.
        message: String,
    },
    /// A query response without its `value` array.
    MissingValueArray,
    /// A member of a query response other than `value` and `odata.*`.
    UnknownMember {
        /// The member name.
        name: String,
    },
    /// The same member (property, annotation, key or `value`) twice in one object.
    DuplicateMember {
        /// The member name, as in the JSON.
        name: String,
    },
    /// A member name that is not a valid property name.
    InvalidPropertyName(PropertyNameError),
    /// A `PartitionKey` or `RowKey` that breaks the key rules.
    InvalidKey(KeyError),
    /// An entity without its `PartitionKey` or `RowKey`.
    MissingKey(KeyKind),
    /// A property the caller requires that is not in the entity (for [`EntityVisitor`](crate::json::EntityVisitor)s).
    MissingProperty,
    /// An `@odata.type` annotation whose value is not a JSON string.
    InvalidAnnotation {
        /// The JSON found, described.
        found: String,
    },
    /// An `@odata.type` annotation naming no EDM type, such as `Edm.Decimal`.
    UnknownEdmType(UnknownEdmType),
    /// A property annotation other than `@odata.type`, such as `Price@odata.mediaEditLink`.
    UnsupportedAnnotation {
        /// The member name.
        name: String,
    },
    /// An `@odata.type` annotation for a property that is not in the object.
    OrphanAnnotation,
    /// An annotation on a system property that does not give its type (`Edm.String` for the keys,
    /// `Edm.DateTime` for `Timestamp`).
    SystemAnnotation {
        /// The type it gives.
        found: EdmType,
    },
    /// A JSON object or array as a property value: values are strings, numbers, booleans or null.
    NestedValue {
        /// `object` or `array`.
        found: &'static str,
    },
    /// A JSON value that is not a valid value of the EDM type its annotation or the type hints give.
    InvalidValue {
        /// The EDM type expected.
        expected: EdmType,
        /// The JSON found, described (`JSON string `abc``).
        found: String,
    },
    /// A JSON integer without an annotation that does not fit `Edm.Int32`, the type the service infers.
    IntegerOutOfRange {
        /// The integer, as text.
        value: String,
    },
    /// An annotation that disagrees with the type hints.
    HintMismatch {
        /// The type the annotation gives.
        annotated: EdmType,
        /// The type the hints expect.
        expected: EdmType,
    },
    /// More than 252 custom properties.
    TooManyProperties {
        /// The number found.
        count: usize,
    },
    /// A value over its EDM limit, a date out of range, or a conversion a visitor refused.
    Value(ValueError),
    /// An entity over a limit when it was built.
    Entity(EntityError),
    /// Any other refusal by an [`EntityVisitor`](crate::json::EntityVisitor), described by its message.
    Custom {
        /// What was wrong.
        message: String,
    },
}

/// The error for a JSON response that cannot be decoded into entities. It names the property and, in a
/// query response, the index of the entity in `value`.
///
/// ```
/// use table_model::json::decode_entity;
/// use table_model::{DecodeErrorKind, EdmType};
/// let err = decode_entity(br#"{"PartitionKey":"p","RowKey":"r","Price@odata.type":"Edm.Double","Price":"abc"}"#, None)
///     .unwrap_err();
/// assert_eq!(err.property(), Some("Price"));
/// assert!(matches!(err.kind(), DecodeErrorKind::InvalidValue { expected: EdmType::Double, .. }));
/// assert_eq!(err.to_string(), "property `Price`: expected Edm.Double, found JSON string `abc`");
/// ```
///
/// The error is one pointer wide, so that the `Result`s of decoding stay small.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError(Box<DecodeErrorInner>);

#[derive(Debug, Clone, PartialEq, Eq)]
struct DecodeErrorInner {
    kind: DecodeErrorKind,
    property: Option<String>,
    entity: Option<usize>,
}

impl DecodeError {
    pub(crate) fn new(kind: DecodeErrorKind) -> Self {
        DecodeError(Box::new(DecodeErrorInner { kind, property: None, entity: None }))
    }

    /// An error with a free-form message, for [`EntityVisitor`](crate::json::EntityVisitor) implementations.
    pub fn custom(message: impl fmt::Display) -> Self {
        DecodeError::new(DecodeErrorKind::Custom { message: message.to_string() })
    }

    /// The error for a property an [`EntityVisitor`](crate::json::EntityVisitor) requires but did not receive.
    pub fn missing_property(property: impl Into<String>) -> Self {
        DecodeError::new(DecodeErrorKind::MissingProperty).in_property(property)
    }

    /// The error for an entity without its `PartitionKey` or `RowKey`.
    pub fn missing_key(key: KeyKind) -> Self {
        DecodeError::new(DecodeErrorKind::MissingKey(key))
    }

    /// Ties the error to a property name, which the message then names. A name already set is kept.
    #[must_use]
    pub fn in_property(mut self, property: impl Into<String>) -> Self {
        if self.0.property.is_none() {
            self.0.property = Some(property.into());
        }
        self
    }

    /// Ties the error to the index of the entity in a query response's `value` array.
    #[must_use]
    pub(crate) fn in_entity(mut self, index: usize) -> Self {
        self.0.entity = Some(index);
        self
    }

    /// Which rule was broken.
    pub fn kind(&self) -> &DecodeErrorKind {
        &self.0.kind
    }

    /// The property being decoded, when there was one.
    pub fn property(&self) -> Option<&str> {
        self.0.property.as_deref()
    }

    /// The index of the entity in a query response's `value` array, when decoding one.
    pub fn entity_index(&self) -> Option<usize> {
        self.0.entity
    }

    /// The error as a struct's refusal of the entity, [`EntityError`], when it is one of the kinds a struct
    /// refuses with (a missing property, a value its field does not take, an entity error); otherwise itself.
    /// The error [`TableEntity::from_entity`](crate::TableEntity::from_entity) gives for the same entity.
    #[cfg(feature = "http")]
    pub(crate) fn into_misfit(self) -> Result<EntityError, DecodeError> {
        let DecodeErrorInner { kind, property, entity } = *self.0;
        match (kind, property) {
            (DecodeErrorKind::MissingProperty, Some(property)) => {
                Ok(EntityError::new(EntityErrorKind::MissingProperty { property: property.clone() }, Some(&property)))
            }
            (DecodeErrorKind::Value(e), Some(property)) if e.property().is_none() => Ok(e.in_property(property).into()),
            (DecodeErrorKind::Value(e), _) => Ok(e.into()),
            (DecodeErrorKind::Entity(e), _) => Ok(e),
            (kind, property) => Err(DecodeError(Box::new(DecodeErrorInner { kind, property, entity }))),
        }
    }
}

impl From<ValueError> for DecodeError {
    fn from(e: ValueError) -> Self {
        let property = e.property.clone();
        DecodeError(Box::new(DecodeErrorInner { kind: DecodeErrorKind::Value(e), property, entity: None }))
    }
}

impl From<EntityError> for DecodeError {
    fn from(e: EntityError) -> Self {
        let property = e.property.clone();
        DecodeError(Box::new(DecodeErrorInner { kind: DecodeErrorKind::Entity(e), property, entity: None }))
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let DecodeErrorInner { kind, property, entity } = &*self.0;
        if let Some(i) = entity {
            write!(f, "entity {i}: ")?;
        }
        match kind {
            // These name their property themselves.
            DecodeErrorKind::Value(e) if e.property().is_some() => return fmt::Display::fmt(e, f),
            DecodeErrorKind::Entity(e) => return fmt::Display::fmt(e, f),
            _ => {}
        }
        match property {
            Some(p) if matches!(kind, DecodeErrorKind::MissingProperty) => {
                return write!(f, "missing property `{p}`");
            }
            Some(p) => write!(f, "property `{p}`: ")?,
            None => {}
        }
        match kind {
            DecodeErrorKind::InvalidJson { line, column, message } => {
                write!(f, "invalid JSON at line {line} column {column}: {message}")
            }
            DecodeErrorKind::MissingValueArray => f.write_str("invalid query response: missing the `value` array"),
            DecodeErrorKind::UnknownMember { name } => {
                write!(f, "invalid query response: unknown member `{name}`; expected `value` or `odata.*`")
            }
            DecodeErrorKind::DuplicateMember { name } => {
                write!(f, "duplicate member `{name}`; each member may appear once")
            }
            // The property, named above, is the refused name.
            DecodeErrorKind::InvalidPropertyName(e) => fmt::Display::fmt(e.without_value(), f),
            DecodeErrorKind::InvalidKey(e) => fmt::Display::fmt(e, f),
            DecodeErrorKind::MissingKey(k) => write!(f, "missing `{}`; every entity has both keys", k.property_name()),
            DecodeErrorKind::MissingProperty => f.write_str("missing property"),
            DecodeErrorKind::InvalidAnnotation { found } => {
                write!(f, "invalid type annotation: expected a JSON string such as `Edm.Int64`, found {found}")
            }
            DecodeErrorKind::UnknownEdmType(e) => fmt::Display::fmt(e, f),
            DecodeErrorKind::UnsupportedAnnotation { name } => {
                write!(f, "unsupported annotation `{name}`; only `@odata.type` annotations are understood")
            }
            DecodeErrorKind::OrphanAnnotation => {
                f.write_str("type annotation without its property; an annotation must sit next to a value")
            }
            DecodeErrorKind::SystemAnnotation { found } => {
                write!(f, "invalid system property annotation: found {found}")
            }
            DecodeErrorKind::NestedValue { found } => write!(
                f,
                "a JSON {found} is not a property value; values are strings, numbers, booleans or null"
            ),
            DecodeErrorKind::InvalidValue { expected, found } => write!(f, "expected {expected}, found {found}"),
            DecodeErrorKind::IntegerOutOfRange { value } => write!(
                f,
                "JSON integer `{value}` without a type annotation must fit Edm.Int32; an Int64 is sent as a string annotated `Edm.Int64`"
            ),
            DecodeErrorKind::HintMismatch { annotated, expected } => {
                write!(f, "annotated {annotated}, but the type hints expect {expected}")
            }
            DecodeErrorKind::TooManyProperties { count } => write!(
                f,
                "invalid entity: at most {} custom properties are allowed, found {count}",
                crate::limits::MAX_CUSTOM_PROPERTIES
            ),
            DecodeErrorKind::Value(e) => fmt::Display::fmt(e, f),
            DecodeErrorKind::Entity(e) => fmt::Display::fmt(e, f),
            DecodeErrorKind::Custom { message } => f.write_str(message),
        }
    }
}

impl std::error::Error for DecodeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self.kind() {
            DecodeErrorKind::InvalidPropertyName(e) => Some(e),
            DecodeErrorKind::InvalidKey(e) => Some(e),
            DecodeErrorKind::UnknownEdmType(e) => Some(e),
            DecodeErrorKind::Value(e) => Some(e),
            DecodeErrorKind::Entity(e) => Some(e),
            _ => None,
        }
    }
}
