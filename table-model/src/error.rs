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

/// Why a `$filter` was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum FilterErrorKind {
    /// More than 15 discrete comparisons (SPEC.md section 7).
    TooManyComparisons {
        /// The number of comparisons found.
        count: usize,
    },
    /// A property name that is neither a valid property name nor a system property.
    InvalidProperty {
        /// The name found.
        name: String,
        /// The rule it broke.
        error: PropertyNameError,
    },
    /// A NaN or infinite Double, which has no filter literal.
    NonFiniteDouble {
        /// The property compared.
        property: String,
        /// `NaN`, `Infinity` or `-Infinity`.
        value: String,
    },
    /// A value that broke its EDM type's limit when it was converted (it names the property).
    InvalidValue(ValueError),
}

/// The error for a `$filter` that breaks a rule of the service, reported by
/// [`Filter::render`](crate::filter::Filter::render).
///
/// ```
/// use table_model::filter::Filter;
/// use table_model::FilterErrorKind;
/// let err = Filter::property("Score").lt(f64::INFINITY).render().unwrap_err();
/// assert!(matches!(err.kind(), FilterErrorKind::NonFiniteDouble { .. }));
/// assert_eq!(
///     err.to_string(),
///     "invalid filter: property `Score`: Edm.Double Infinity has no filter literal; compare with a finite value"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilterError {
    kind: FilterErrorKind,
}

impl FilterError {
    pub(crate) fn new(kind: FilterErrorKind) -> Self {
        FilterError { kind }
    }

    /// Which rule was broken.
    pub fn kind(&self) -> &FilterErrorKind {
        &self.kind
    }
}

impl fmt::Display for FilterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("invalid filter: ")?;
        match &self.kind {
            FilterErrorKind::TooManyComparisons { count } => {
                write!(f, "at most {} comparisons are allowed, found {count}", crate::limits::FILTER_MAX_COMPARISONS)
            }
            FilterErrorKind::InvalidProperty { name, error } => write!(f, "property `{name}`: {error}"),
            FilterErrorKind::NonFiniteDouble { property, value } => write!(
                f,
                "property `{property}`: Edm.Double {value} has no filter literal; compare with a finite value"
            ),
            FilterErrorKind::InvalidValue(e) => fmt::Display::fmt(e, f),
        }
    }
}

impl std::error::Error for FilterError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            FilterErrorKind::InvalidProperty { error, .. } => Some(error),
            FilterErrorKind::InvalidValue(e) => Some(e),
            _ => None,
        }
    }
}

/// Why query options (`$filter`, `$select`, `$top`) were refused.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum QueryErrorKind {
    /// The filter was refused.
    Filter(FilterError),
    /// `$top` outside 1 to 1000 (SPEC.md section 7).
    TopOutOfRange {
        /// The value found.
        top: usize,
    },
    /// A `$select` name that is neither a valid property name nor a system property.
    InvalidSelect {
        /// The name found.
        name: String,
        /// The rule it broke.
        error: PropertyNameError,
    },
}

/// The error for query options that break a rule of the service, reported when they are rendered.
///
/// ```
/// use table_model::{Query, QueryErrorKind};
/// let err = Query::new().top(1001).render().unwrap_err();
/// assert_eq!(err.kind(), &QueryErrorKind::TopOutOfRange { top: 1001 });
/// assert_eq!(err.to_string(), "invalid query: $top must be from 1 to 1000, found 1001");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryError {
    kind: QueryErrorKind,
}

impl QueryError {
    pub(crate) fn new(kind: QueryErrorKind) -> Self {
        QueryError { kind }
    }

    /// Which rule was broken.
    pub fn kind(&self) -> &QueryErrorKind {
        &self.kind
    }
}

impl From<FilterError> for QueryError {
    fn from(e: FilterError) -> Self {
        QueryError::new(QueryErrorKind::Filter(e))
    }
}

impl fmt::Display for QueryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            QueryErrorKind::Filter(e) => fmt::Display::fmt(e, f),
            QueryErrorKind::TopOutOfRange { top } => {
                write!(f, "invalid query: $top must be from 1 to {}, found {top}", crate::limits::QUERY_MAX_TOP)
            }
            QueryErrorKind::InvalidSelect { name, error } => write!(f, "invalid query: $select `{name}`: {error}"),
        }
    }
}

impl std::error::Error for QueryError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            QueryErrorKind::Filter(e) => Some(e),
            QueryErrorKind::InvalidSelect { error, .. } => Some(error),
            QueryErrorKind::TopOutOfRange { .. } => None,
        }
    }
}
