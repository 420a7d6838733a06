//! Every public error of the crate. Messages are lowercase, without a trailing period, and say what was
//! wrong, where (property, key, index) and what the rule is.

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

/// Why a `$filter` was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum FilterErrorKind {
    /// More than 15 discrete comparisons (`docs/rules.md` §7.1).
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
            FilterErrorKind::InvalidProperty { name, error } => {
                write!(f, "property `{name}`: {}", error.without_value())
            }
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
    /// `$top` outside 1 to 1000 (`docs/rules.md` §7.3).
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
            QueryErrorKind::InvalidSelect { name, error } => {
                write!(f, "invalid query: $select `{name}`: {}", error.without_value())
            }
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

/// Why a connection string, endpoint or credential was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConnectionErrorKind {
    /// A segment that is not `Key=Value` (shown cut short: it may hold a secret).
    Syntax {
        /// The start of the segment.
        segment: String,
    },
    /// A key given twice.
    Duplicate {
        /// The key.
        key: &'static str,
    },
    /// A required key that is absent.
    Missing {
        /// The key.
        key: &'static str,
    },
    /// A key whose value is not one of those allowed.
    InvalidValue {
        /// The key.
        key: &'static str,
        /// What the value may be.
        expected: &'static str,
    },
    /// Two keys that exclude each other.
    Conflict {
        /// The first key.
        key: &'static str,
        /// The key it cannot be combined with.
        other: &'static str,
    },
    /// An endpoint that is not an `http`/`https` URL without query or fragment.
    InvalidUrl {
        /// The URL found.
        url: String,
    },
    /// An endpoint whose account name cannot be told from the URL (an IP address or `localhost` without path).
    NoAccount {
        /// The URL found.
        url: String,
    },
    /// An account name that is not ASCII letters, digits and `-`.
    InvalidAccountName {
        /// The name found.
        account: String,
    },
    /// An account key that is not standard base64 (not shown: it is a secret).
    InvalidAccountKey,
    /// A shared access signature that is not a URL query string (not shown: it is a secret): empty, or with
    /// this character at this byte index, which a URL cannot carry.
    InvalidSas {
        /// The first character a URL query cannot carry and its byte index; `None` for an empty token.
        invalid: Option<(char, usize)>,
    },
}

/// The error for an invalid connection string, endpoint URL, account name or key.
///
/// ```
/// use table_model::{ConnectionString, ConnectionErrorKind};
/// let err = "AccountKey=a2V5".parse::<ConnectionString>().unwrap_err();
/// assert_eq!(err.kind(), &ConnectionErrorKind::Missing { key: "AccountName" });
/// assert_eq!(err.to_string(), "invalid connection string: `AccountName` is missing");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectionError {
    kind: ConnectionErrorKind,
}

impl ConnectionError {
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn new(kind: ConnectionErrorKind) -> Self {
        ConnectionError { kind }
    }

    /// Which rule was broken.
    pub fn kind(&self) -> &ConnectionErrorKind {
        &self.kind
    }
}

impl fmt::Display for ConnectionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("invalid connection string: ")?;
        match &self.kind {
            ConnectionErrorKind::Syntax { segment } => write!(f, "segment `{segment}` is not `Key=Value`"),
            ConnectionErrorKind::Duplicate { key } => write!(f, "`{key}` is given twice"),
            ConnectionErrorKind::Missing { key } => write!(f, "`{key}` is missing"),
            ConnectionErrorKind::InvalidValue { key, expected } => write!(f, "`{key}` must be {expected}"),
            ConnectionErrorKind::Conflict { key, other } => write!(f, "`{key}` cannot be combined with `{other}`"),
            ConnectionErrorKind::InvalidUrl { url } => {
                write!(f, "endpoint `{url}` must be an http or https URL without query or fragment")
            }
            ConnectionErrorKind::NoAccount { url } => {
                write!(f, "cannot tell the account name from endpoint `{url}`; set `AccountName`")
            }
            ConnectionErrorKind::InvalidAccountName { account } => {
                write!(f, "account name `{account}` must be ASCII letters, digits and `-`")
            }
            ConnectionErrorKind::InvalidAccountKey => f.write_str("`AccountKey` is not valid base64"),
            ConnectionErrorKind::InvalidSas { invalid: None } => {
                f.write_str("`SharedAccessSignature` must be a URL query string (it is empty)")
            }
            ConnectionErrorKind::InvalidSas { invalid: Some((ch, index)) } => {
                let shown = table_model_rules::DisplayChar(*ch);
                write!(
                    f,
                    "`SharedAccessSignature` must be a URL query string (character {shown} at index {index} cannot \
                     be in a URL)"
                )
            }
        }
    }
}

impl std::error::Error for ConnectionError {}

/// Why a request could not be built.
#[cfg(feature = "http")]
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RequestErrorKind {
    /// The entity cannot be written as a JSON body.
    Encode(EncodeError),
    /// The query options break a rule.
    Query(QueryError),
    /// An ETag that cannot be sent as an `If-Match` header (a control character in it).
    InvalidETag {
        /// The ETag found.
        etag: String,
    },
    /// A Storage Analytics table (`$Metrics...`), which can be read but not created.
    ReadOnlyTable {
        /// The table name.
        table: String,
    },
    /// A batch that breaks a rule (checked again when the request is built).
    Batch(BatchError),
    /// An entity whose keys cannot be written (a key field that is not a valid key).
    Entity(EntityError),
    /// A batch sent through the client of another table.
    TableMismatch {
        /// The batch's table.
        batch: String,
        /// The client's table.
        client: String,
    },
    /// Stored access policies that break a rule (`docs/rules.md` §9.3).
    AccessPolicy(SasError),
    /// Service properties that break a rule (`docs/rules.md` §9.5).
    ServiceProperties(ServicePropertiesError),
    /// An operation the kind of service the requests are made for does not serve: the Cosmos DB Table API
    /// serves neither service properties and statistics nor stored access policies (`docs/rules.md` §9.5).
    NotSupported {
        /// The operation, as the error names it (`get service properties`).
        operation: &'static str,
        /// The service that does not serve it.
        service: crate::ServiceKind,
    },
    /// A key or property name that Azure Table Storage takes but the service the request is for refuses
    /// (Cosmos DB for Table's shorter keys and reserved names, `docs/rules.md` §13.1).
    ServiceRule {
        /// The rule broken, and the rule set it belongs to.
        error: crate::RuleSetError,
        /// The key or property name refused.
        value: String,
    },
}

/// The error for a request that cannot be built: nothing is sent.
///
/// ```
/// use table_model::{Query, RequestErrorKind, TableName, TableService};
/// let service = TableService::from_connection_string("UseDevelopmentStorage=true")?;
/// let err = service.query(&"People".parse::<TableName>()?, &Query::new().top(5000), None).unwrap_err();
/// assert!(matches!(err.kind(), RequestErrorKind::Query(_)));
/// assert_eq!(err.to_string(), "invalid query: $top must be from 1 to 1000, found 5000");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[cfg(feature = "http")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestError {
    kind: RequestErrorKind,
}

#[cfg(feature = "http")]
impl RequestError {
    pub(crate) fn new(kind: RequestErrorKind) -> Self {
        RequestError { kind }
    }

    /// What was wrong.
    pub fn kind(&self) -> &RequestErrorKind {
        &self.kind
    }
}

#[cfg(feature = "http")]
impl From<EncodeError> for RequestError {
    fn from(e: EncodeError) -> Self {
        RequestError::new(RequestErrorKind::Encode(e))
    }
}

#[cfg(feature = "http")]
impl From<QueryError> for RequestError {
    fn from(e: QueryError) -> Self {
        RequestError::new(RequestErrorKind::Query(e))
    }
}

#[cfg(feature = "http")]
impl From<BatchError> for RequestError {
    fn from(e: BatchError) -> Self {
        RequestError::new(RequestErrorKind::Batch(e))
    }
}

#[cfg(feature = "http")]
impl fmt::Display for RequestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            RequestErrorKind::Encode(e) => fmt::Display::fmt(e, f),
            RequestErrorKind::Query(e) => fmt::Display::fmt(e, f),
            RequestErrorKind::InvalidETag { etag } => {
                write!(f, "invalid ETag {etag:?}: cannot be sent as an If-Match header")
            }
            RequestErrorKind::ReadOnlyTable { table } => {
                write!(f, "invalid table name: `{table}` is a Storage Analytics table, which cannot be created")
            }
            RequestErrorKind::Batch(e) => fmt::Display::fmt(e, f),
            RequestErrorKind::Entity(e) => fmt::Display::fmt(e, f),
            RequestErrorKind::TableMismatch { batch, client } => {
                write!(f, "invalid batch: its table is `{batch}`, but it was given to the client of table `{client}`")
            }
            RequestErrorKind::AccessPolicy(e) => fmt::Display::fmt(e, f),
            RequestErrorKind::ServiceProperties(e) => fmt::Display::fmt(e, f),
            RequestErrorKind::NotSupported { operation, service } => {
                let service = match service {
                    crate::ServiceKind::CosmosDb => "Cosmos DB for Table",
                    crate::ServiceKind::Storage => "Azure Table Storage",
                    crate::ServiceKind::Azurite => "Azurite",
                };
                write!(f, "{operation} is not served by {service}")
            }
            RequestErrorKind::ServiceRule { error, value } => fmt::Display::fmt(&error.with_value(value), f),
        }
    }
}

#[cfg(feature = "http")]
impl From<EntityError> for RequestError {
    fn from(e: EntityError) -> Self {
        RequestError::new(RequestErrorKind::Entity(e))
    }
}

#[cfg(feature = "http")]
impl std::error::Error for RequestError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            RequestErrorKind::Encode(e) => Some(e),
            RequestErrorKind::Query(e) => Some(e),
            RequestErrorKind::Batch(e) => Some(e),
            RequestErrorKind::Entity(e) => Some(e),
            RequestErrorKind::AccessPolicy(e) => Some(e),
            RequestErrorKind::ServiceProperties(e) => Some(e),
            RequestErrorKind::ServiceRule { error, .. } => Some(error),
            _ => None,
        }
    }
}

#[cfg(feature = "http")]
impl From<SasError> for RequestError {
    fn from(e: SasError) -> Self {
        RequestError::new(RequestErrorKind::AccessPolicy(e))
    }
}

/// Why a shared access signature or a stored access policy breaks a rule (`docs/rules.md` §9.3).
#[cfg(feature = "http")]
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SasErrorKind {
    /// No permission, and no stored access policy named that could hold them.
    NoPermission,
    /// No expiry, and no stored access policy named that could hold it.
    NoExpiry,
    /// An expiry that is not after the start.
    ExpiryNotAfterStart {
        /// The start, as signed.
        start: String,
        /// The expiry, as signed.
        expiry: String,
    },
    /// A time that cannot be written as `YYYY-MM-DDThh:mm:ssZ`: outside the years 1 to 9999.
    TimeOutOfRange {
        /// Which time: `st`, `se`, or a stored policy's `Start` or `Expiry`.
        field: &'static str,
        /// The year found.
        year: i32,
    },
    /// A RowKey bound without the PartitionKey bound of its pair (`srk` without `spk`, `erk` without `epk`).
    RowKeyWithoutPartitionKey {
        /// The RowKey bound's parameter.
        row: &'static str,
        /// The PartitionKey bound's parameter it needs.
        partition: &'static str,
    },
    /// A key range whose start (`spk`, `srk`) comes after its end (`epk`, `erk`) in the service's key order:
    /// it reaches no entity.
    EmptyKeyRange {
        /// The start, `spk` or `spk`/`srk`.
        start: String,
        /// The end, `epk` or `epk`/`erk`.
        end: String,
    },
    /// An IP range whose first address comes after its last.
    InvalidIpRange {
        /// The first address.
        start: std::net::Ipv4Addr,
        /// The last address.
        end: std::net::Ipv4Addr,
    },
    /// An account SAS without a resource type.
    NoResourceType,
    /// A stored access policy identifier that is empty or longer than 64 characters.
    PolicyIdLength {
        /// Its length, in characters.
        chars: usize,
    },
    /// A stored access policy identifier with a control character, which the policies' XML cannot carry.
    PolicyIdCharacter {
        /// The character.
        ch: char,
        /// Its byte index.
        index: usize,
    },
    /// More than 5 stored access policies for one table.
    TooManyPolicies {
        /// How many were given.
        found: usize,
    },
    /// Two stored access policies with one identifier.
    DuplicatePolicyId {
        /// The identifier.
        id: String,
    },
}

/// The error for a shared access signature or stored access policy that breaks a rule: nothing is signed or
/// sent.
///
/// ```
/// use table_model::sas::{TableSas, TableSasPermissions};
/// use table_model::{AccountKey, SasErrorKind};
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let expiry = chrono::DateTime::parse_from_rfc3339("2026-11-23T00:00:00Z")?.to_utc();
/// let err = TableSas::new("AuditLog".parse()?)
///     .expiry(expiry)
///     .sign("devstoreaccount1", &AccountKey::development())
///     .unwrap_err();
/// assert_eq!(err.kind(), &SasErrorKind::NoPermission);
/// assert_eq!(
///     err.to_string(),
///     "invalid shared access signature: `sp` (permissions) is empty; give at least one permission, \
///      or name a stored access policy that holds them"
/// );
/// # let _ = TableSasPermissions::READ;
/// # Ok(())
/// # }
/// ```
#[cfg(feature = "http")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SasError {
    kind: SasErrorKind,
}

#[cfg(feature = "http")]
impl SasError {
    pub(crate) fn new(kind: SasErrorKind) -> Self {
        SasError { kind }
    }

    /// What was wrong.
    pub fn kind(&self) -> &SasErrorKind {
        &self.kind
    }
}

#[cfg(feature = "http")]
impl fmt::Display for SasError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const SAS: &str = "invalid shared access signature";
        const POLICY: &str = "invalid stored access policy";
        match &self.kind {
            SasErrorKind::NoPermission => write!(
                f,
                "{SAS}: `sp` (permissions) is empty; give at least one permission, or name a stored access policy \
                 that holds them"
            ),
            SasErrorKind::NoExpiry => {
                write!(f, "{SAS}: `se` (expiry) is missing; give one, or name a stored access policy that holds it")
            }
            SasErrorKind::ExpiryNotAfterStart { start, expiry } => {
                write!(f, "{SAS}: `se` (expiry) {expiry} must be after `st` (start) {start}")
            }
            SasErrorKind::TimeOutOfRange { field, year } => {
                write!(f, "invalid shared access time: `{field}` must be in the years 1 to 9999, found {year}")
            }
            SasErrorKind::RowKeyWithoutPartitionKey { row, partition } => write!(
                f,
                "{SAS}: `{row}` (a RowKey bound) needs `{partition}` (the PartitionKey bound of its pair); a RowKey \
                 bound applies within a PartitionKey"
            ),
            SasErrorKind::EmptyKeyRange { start, end } => write!(
                f,
                "{SAS}: the key range starts at {start} after it ends at {end}, so it reaches no entity; keys are \
                 ordered by PartitionKey, then RowKey, by UTF-16 code unit"
            ),
            SasErrorKind::InvalidIpRange { start, end } => {
                write!(f, "{SAS}: `sip` (IP range) must not start after its end, found {start}-{end}")
            }
            SasErrorKind::NoResourceType => {
                write!(f, "{SAS}: `srt` (resource types) is empty; give at least one of service, container and object")
            }
            SasErrorKind::PolicyIdLength { chars } => write!(
                f,
                "{POLICY} identifier: must be 1 to {} characters, found {chars}",
                crate::limits::ACCESS_POLICY_ID_MAX_CHARS
            ),
            SasErrorKind::PolicyIdCharacter { ch, index } => {
                let shown = table_model_rules::DisplayChar(*ch);
                write!(
                    f,
                    "{POLICY} identifier: character {shown} at index {index} is not allowed (a control character)"
                )
            }
            SasErrorKind::TooManyPolicies { found } => write!(
                f,
                "{POLICY} list: a table has at most {} stored access policies, found {found}",
                crate::limits::ACCESS_POLICIES_MAX
            ),
            SasErrorKind::DuplicatePolicyId { id } => {
                write!(f, "{POLICY} list: identifier `{id}` is given more than once")
            }
        }
    }
}

#[cfg(feature = "http")]
impl std::error::Error for SasError {}

#[cfg(feature = "http")]
impl From<ServicePropertiesError> for RequestError {
    fn from(e: ServicePropertiesError) -> Self {
        RequestError::new(RequestErrorKind::ServiceProperties(e))
    }
}

/// Why service properties break a rule (`docs/rules.md` §9.5). Fields are named as the XML document names
/// them (`HourMetrics.RetentionPolicy.Days`); CORS rules by their index in the list, from 0.
#[cfg(feature = "http")]
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ServicePropertiesErrorKind {
    /// A retention outside 1 to 365 days.
    RetentionDays {
        /// Whose retention: `Logging`, `HourMetrics` or `MinuteMetrics`.
        field: &'static str,
        /// The days found.
        days: u32,
    },
    /// `IncludeAPIs` missing for enabled metrics (`enabled`), or given for disabled ones.
    IncludeApis {
        /// `HourMetrics` or `MinuteMetrics`.
        field: &'static str,
        /// Whether the metrics are enabled.
        enabled: bool,
    },
    /// A Storage Analytics version that is empty or holds whitespace or a control character.
    Version {
        /// Whose version: `Logging`, `HourMetrics` or `MinuteMetrics`.
        field: &'static str,
        /// The version found.
        version: String,
    },
    /// More than 5 CORS rules.
    TooManyCorsRules {
        /// How many were given.
        found: usize,
    },
    /// A CORS rule without origins or without methods.
    CorsEmpty {
        /// The rule's index.
        rule: usize,
        /// `AllowedOrigins` or `AllowedMethods`.
        field: &'static str,
    },
    /// More than 64 origins, or more than 64 headers named in full.
    CorsCount {
        /// The rule's index.
        rule: usize,
        /// `AllowedOrigins`, `AllowedHeaders` or `ExposedHeaders`.
        field: &'static str,
        /// How many were given.
        found: usize,
        /// The most the service takes.
        max: usize,
    },
    /// More than 2 prefixed headers (`x-ms-meta-*`).
    CorsPrefixedHeaders {
        /// The rule's index.
        rule: usize,
        /// `AllowedHeaders` or `ExposedHeaders`.
        field: &'static str,
        /// How many were given.
        found: usize,
    },
    /// An empty origin, method or header, or one over 256 characters.
    CorsValueLength {
        /// The rule's index.
        rule: usize,
        /// The list it is in.
        field: &'static str,
        /// Its index in the list.
        index: usize,
        /// Its length, in characters.
        chars: usize,
    },
    /// An origin, method or header with a character the comma-separated list cannot carry: `,`, whitespace or
    /// a control character.
    CorsValueCharacter {
        /// The rule's index.
        rule: usize,
        /// The list it is in.
        field: &'static str,
        /// Its index in the list.
        index: usize,
        /// The character.
        ch: char,
    },
    /// A method the service does not take in a CORS rule.
    CorsMethod {
        /// The rule's index.
        rule: usize,
        /// The method found.
        method: String,
    },
    /// CORS rules over 2 KiB in all, without the XML tags.
    CorsTooLarge {
        /// Their size, in bytes.
        bytes: usize,
    },
}

/// The error for service properties that break a rule: nothing is sent.
///
/// ```
/// use table_model::service_properties::{CorsRule, ServiceProperties};
/// use table_model::ServicePropertiesErrorKind;
/// let rule = CorsRule::new(["https://contoso.com"], ["GET"]).with_allowed_headers(["a*", "b*", "c*"]);
/// let err = ServiceProperties::new().with_cors(vec![rule]).check().unwrap_err();
/// assert!(matches!(err.kind(), ServicePropertiesErrorKind::CorsPrefixedHeaders { rule: 0, found: 3, .. }));
/// assert_eq!(
///     err.to_string(),
///     "invalid service properties: CORS rule 0: `AllowedHeaders` has 3 prefixed headers, at most 2"
/// );
/// ```
#[cfg(feature = "http")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServicePropertiesError {
    kind: ServicePropertiesErrorKind,
}

#[cfg(feature = "http")]
impl ServicePropertiesError {
    pub(crate) fn new(kind: ServicePropertiesErrorKind) -> Self {
        ServicePropertiesError { kind }
    }

    /// What was wrong.
    pub fn kind(&self) -> &ServicePropertiesErrorKind {
        &self.kind
    }
}

#[cfg(feature = "http")]
impl fmt::Display for ServicePropertiesError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use crate::limits::{
            CORS_PREFIXED_HEADERS_MAX, CORS_RULES_MAX, CORS_RULES_MAX_BYTES, CORS_VALUE_MAX_CHARS, RETENTION_DAYS_MAX,
            RETENTION_DAYS_MIN,
        };
        f.write_str("invalid service properties: ")?;
        match &self.kind {
            ServicePropertiesErrorKind::RetentionDays { field, days } => write!(
                f,
                "`{field}.RetentionPolicy.Days` must be {RETENTION_DAYS_MIN} to {RETENTION_DAYS_MAX}, found {days}"
            ),
            ServicePropertiesErrorKind::IncludeApis { field, enabled: true } => {
                write!(f, "`{field}.IncludeAPIs` is required when `{field}.Enabled` is true")
            }
            ServicePropertiesErrorKind::IncludeApis { field, enabled: false } => {
                write!(
                    f,
                    "`{field}.IncludeAPIs` is given while `{field}.Enabled` is false; give it only for enabled \
                     metrics"
                )
            }
            ServicePropertiesErrorKind::Version { field, version } => write!(
                f,
                "`{field}.Version` must be a Storage Analytics version such as `1.0` (not empty, no whitespace or control \
                 character), found {version:?}"
            ),
            ServicePropertiesErrorKind::TooManyCorsRules { found } => {
                write!(f, "`Cors` has {found} rules, at most {CORS_RULES_MAX}")
            }
            ServicePropertiesErrorKind::CorsEmpty { rule, field } => {
                write!(f, "CORS rule {rule}: `{field}` is empty; give at least one")
            }
            ServicePropertiesErrorKind::CorsCount { rule, field, found, max } => {
                let what = if *field == "AllowedOrigins" { "origins" } else { "headers named in full" };
                write!(f, "CORS rule {rule}: `{field}` has {found} {what}, at most {max}")
            }
            ServicePropertiesErrorKind::CorsPrefixedHeaders { rule, field, found } => write!(
                f,
                "CORS rule {rule}: `{field}` has {found} prefixed headers, at most {CORS_PREFIXED_HEADERS_MAX}"
            ),
            ServicePropertiesErrorKind::CorsValueLength { rule, field, index, chars } => write!(
                f,
                "CORS rule {rule}: `{field}` value {index} must be 1 to {CORS_VALUE_MAX_CHARS} characters, found {chars}"
            ),
            ServicePropertiesErrorKind::CorsValueCharacter { rule, field, index, ch } => {
                let shown = table_model_rules::DisplayChar(*ch);
                write!(
                    f,
                    "CORS rule {rule}: `{field}` value {index} has character {shown}, which a comma-separated list \
                     cannot carry"
                )
            }
            ServicePropertiesErrorKind::CorsMethod { rule, method } => write!(
                f,
                "CORS rule {rule}: `AllowedMethods` has `{method}`; the service takes DELETE, GET, HEAD, MERGE, POST, \
                 OPTIONS and PUT"
            ),
            ServicePropertiesErrorKind::CorsTooLarge { bytes } => write!(
                f,
                "`Cors` rules must be at most {CORS_RULES_MAX_BYTES} bytes in all without the XML tags, found {bytes}"
            ),
        }
    }
}

#[cfg(feature = "http")]
impl std::error::Error for ServicePropertiesError {}

/// An error the service returned: its HTTP status, its error code (`x-ms-error-code` or the `odata.error`
/// body) and its message; for a batch, the index of the operation that failed.
///
/// ```
/// use table_model::response;
/// let reply = http::Response::builder()
///     .status(412)
///     .header("x-ms-error-code", "UpdateConditionNotSatisfied")
///     .body(br#"{"odata.error":{"code":"UpdateConditionNotSatisfied","message":{"lang":"en-US","value":"The update condition specified in the request was not satisfied.\nRequestId:1"}}}"#.to_vec())?;
/// let err = response::empty(&reply).unwrap_err();
/// let service = err.service().unwrap();
/// assert_eq!(service.status(), 412);
/// assert_eq!(service.code(), Some("UpdateConditionNotSatisfied"));
/// assert!(service.is_precondition_failed());
/// assert_eq!(
///     err.to_string(),
///     "the service refused the request: 412 UpdateConditionNotSatisfied: The update condition specified in the request was not satisfied."
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[cfg(feature = "http")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceError {
    pub(crate) status: u16,
    pub(crate) code: Option<String>,
    pub(crate) message: String,
    pub(crate) operation_index: Option<usize>,
    pub(crate) request_id: Option<String>,
}

#[cfg(feature = "http")]
impl ServiceError {
    /// The error code as an [`ErrorCode`](crate::ErrorCode), for one `match` arm per case; `None` when the
    /// service sent no code.
    ///
    /// ```
    /// use table_model::{response, ErrorCode};
    /// let reply = http::Response::builder()
    ///     .status(412)
    ///     .header("x-ms-error-code", "UpdateConditionNotSatisfied")
    ///     .body(Vec::new())?;
    /// match response::error(&reply).and_then(|e| e.error_code()) {
    ///     Some(ErrorCode::UpdateConditionNotSatisfied) => { /* read it again, merge, retry */ }
    ///     other => panic!("unexpected {other:?}"),
    /// }
    /// # Ok::<(), http::Error>(())
    /// ```
    pub fn error_code(&self) -> Option<crate::ErrorCode> {
        self.code.as_deref().map(crate::ErrorCode::from)
    }

    /// The service's `x-ms-request-id` for this request, which Azure support asks for.
    pub fn request_id(&self) -> Option<&str> {
        self.request_id.as_deref()
    }

    /// The HTTP status code.
    pub fn status(&self) -> u16 {
        self.status
    }

    /// The service's error code, such as `EntityAlreadyExists`, when it sent one.
    pub fn code(&self) -> Option<&str> {
        self.code.as_deref()
    }

    /// The service's message, whole (it may span lines: request id and time follow the text).
    pub fn message(&self) -> &str {
        &self.message
    }

    /// For a batch, the index of the operation that failed, from the `N:` prefix of the message
    /// (`docs/rules.md` §8.2).
    ///
    /// From [`response::batch`](crate::response::batch), which knows the batch, it is always inside the
    /// batch: an `N` outside it is [`ResponseErrorKind::OperationIndexOutOfRange`] instead. From
    /// [`response::error`](crate::response::error), which does not know the batch, it is any `N` below 100
    /// (the most operations a batch holds), and checking it against the batch sent is the caller's part.
    pub fn operation_index(&self) -> Option<usize> {
        self.operation_index
    }

    /// `404 Not Found`: no such table or entity (or the entity of an `If-Match: *` update is gone).
    pub fn is_not_found(&self) -> bool {
        self.status == 404
    }

    /// `409 Conflict`: the entity or table already exists, or the table is being deleted.
    pub fn is_conflict(&self) -> bool {
        self.status == 409
    }

    /// `412 Precondition Failed`: the entity changed since its ETag was read.
    pub fn is_precondition_failed(&self) -> bool {
        self.status == 412
    }
}

#[cfg(feature = "http")]
impl fmt::Display for ServiceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the service refused the request: {}", self.status)?;
        if let Some(code) = &self.code {
            write!(f, " {code}")?;
        }
        if let Some(i) = self.operation_index {
            write!(f, " (batch operation {i})")?;
        }
        let first_line = self.message.lines().next().unwrap_or("").trim();
        if !first_line.is_empty() {
            write!(f, ": {first_line}")?;
        }
        Ok(())
    }
}

#[cfg(feature = "http")]
impl std::error::Error for ServiceError {}

/// Why a response could not be read.
#[cfg(feature = "http")]
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ResponseErrorKind {
    /// The service answered with an error status.
    Service(ServiceError),
    /// A success status other than the operation's.
    UnexpectedStatus {
        /// The status received.
        status: u16,
        /// The statuses the operation answers with.
        expected: &'static str,
    },
    /// A body that is not what the protocol says.
    Decode(DecodeError),
    /// An entity that does not fit the struct it is read into.
    Entity(EntityError),
    /// A body that is not the JSON or multipart document expected.
    Malformed {
        /// What was wrong.
        reason: String,
    },
    /// A write answered without the `ETag` header.
    MissingETag,
    /// A batch's failed operation names, with the `N:` prefix of its message (`docs/rules.md` §8.2), an
    /// operation the batch does not have. Which operation failed is unknown; none was applied.
    OperationIndexOutOfRange {
        /// The operation number as the message writes it (it may be too large for any integer type).
        index: String,
        /// How many operations the batch has.
        operations: usize,
        /// The service's error, without an operation index.
        error: Box<ServiceError>,
    },
}

/// The error for a response that is a service error or cannot be read.
#[cfg(feature = "http")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResponseError {
    kind: ResponseErrorKind,
}

#[cfg(feature = "http")]
impl ResponseError {
    pub(crate) fn new(kind: ResponseErrorKind) -> Self {
        ResponseError { kind }
    }

    /// What was wrong.
    pub fn kind(&self) -> &ResponseErrorKind {
        &self.kind
    }

    /// The service's error, when the service refused the request.
    pub fn service(&self) -> Option<&ServiceError> {
        match &self.kind {
            ResponseErrorKind::Service(e) => Some(e),
            _ => None,
        }
    }
}

#[cfg(feature = "http")]
impl From<ServiceError> for ResponseError {
    fn from(e: ServiceError) -> Self {
        ResponseError::new(ResponseErrorKind::Service(e))
    }
}

#[cfg(feature = "http")]
impl From<DecodeError> for ResponseError {
    fn from(e: DecodeError) -> Self {
        ResponseError::new(ResponseErrorKind::Decode(e))
    }
}

#[cfg(feature = "http")]
impl fmt::Display for ResponseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ResponseErrorKind::Service(e) => fmt::Display::fmt(e, f),
            ResponseErrorKind::UnexpectedStatus { status, expected } => {
                write!(f, "unexpected response: status {status}, expected {expected}")
            }
            ResponseErrorKind::Decode(e) => write!(f, "invalid response body: {e}"),
            ResponseErrorKind::Entity(e) => write!(f, "the entity read does not fit: {e}"),
            ResponseErrorKind::Malformed { reason } => write!(f, "invalid response body: {reason}"),
            ResponseErrorKind::MissingETag => f.write_str("invalid response: a write was answered without an ETag"),
            ResponseErrorKind::OperationIndexOutOfRange { index, operations, error } => write!(
                f,
                "invalid batch response: the error names operation {index}, but the batch has {operations} \
                 operation{} ({error})",
                if *operations == 1 { "" } else { "s" }
            ),
        }
    }
}

#[cfg(feature = "http")]
impl std::error::Error for ResponseError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            ResponseErrorKind::Service(e) => Some(e),
            ResponseErrorKind::Decode(e) => Some(e),
            ResponseErrorKind::Entity(e) => Some(e),
            ResponseErrorKind::OperationIndexOutOfRange { error, .. } => Some(&**error),
            _ => None,
        }
    }
}

/// Why a batch operation was refused before sending (`docs/rules.md` §8.1).
#[cfg(feature = "http")]
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum BatchErrorKind {
    /// An entity of another PartitionKey than the batch's.
    PartitionKeyMismatch {
        /// The batch's PartitionKey.
        expected: String,
        /// The entity's.
        found: String,
    },
    /// A RowKey that an earlier operation of the batch already has.
    DuplicateRowKey {
        /// The RowKey.
        row_key: String,
        /// The index of the earlier operation.
        first: usize,
    },
    /// A 101st operation.
    TooManyOperations,
    /// A request body over the service's limit: under 4 MiB on Azure Table Storage, 2 MB on Cosmos DB for
    /// Table (`docs/rules.md` §8.1 and §13.1).
    BodyTooLarge {
        /// The size the body would have, in bytes.
        size: usize,
        /// The largest body the service takes, in bytes
        /// ([`RuleSet::batch_max_body_bytes`](crate::RuleSet::batch_max_body_bytes)).
        max: usize,
        /// The rules of the service the batch is for.
        rules: crate::RuleSet,
    },
    /// A batch with no operation.
    Empty,
    /// The operation's request cannot be built (its entity cannot be encoded, or its ETag sent).
    Request(Box<RequestError>),
}

/// The error for a batch operation that breaks a batch rule; it names the operation's index (the position it
/// would have had), and nothing is added to the batch.
///
/// ```
/// use table_model::{Batch, BatchErrorKind, Entity, PartitionKey, RowKey, TableName};
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let mut batch = Batch::new("People".parse()?, PartitionKey::new("eu")?);
/// batch.insert(&Entity::new(PartitionKey::new("eu")?, RowKey::new("a")?))?;
/// let err = batch.insert(&Entity::new(PartitionKey::new("us")?, RowKey::new("b")?)).unwrap_err();
/// assert_eq!(err.index(), 1);
/// assert_eq!(
///     err.to_string(),
///     "invalid batch operation 1: PartitionKey `us` differs from the batch's `eu`; a batch has one PartitionKey"
/// );
/// # Ok(())
/// # }
/// ```
#[cfg(feature = "http")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchError {
    index: usize,
    kind: BatchErrorKind,
}

#[cfg(feature = "http")]
impl BatchError {
    pub(crate) fn new(index: usize, kind: BatchErrorKind) -> Self {
        BatchError { index, kind }
    }

    /// The index of the operation refused.
    pub fn index(&self) -> usize {
        self.index
    }

    /// Which rule was broken.
    pub fn kind(&self) -> &BatchErrorKind {
        &self.kind
    }
}

#[cfg(feature = "http")]
impl fmt::Display for BatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if matches!(self.kind, BatchErrorKind::Empty) {
            return f.write_str("invalid batch: a batch needs at least one operation");
        }
        write!(f, "invalid batch operation {}: ", self.index)?;
        match &self.kind {
            BatchErrorKind::PartitionKeyMismatch { expected, found } => {
                write!(f, "PartitionKey `{found}` differs from the batch's `{expected}`; a batch has one PartitionKey")
            }
            BatchErrorKind::DuplicateRowKey { row_key, first } => {
                write!(f, "RowKey `{row_key}` is already in operation {first}; each entity appears once per batch")
            }
            BatchErrorKind::TooManyOperations => {
                write!(f, "a batch holds at most {} operations", crate::limits::BATCH_MAX_OPERATIONS)
            }
            BatchErrorKind::BodyTooLarge { size, max, rules } => {
                write!(f, "the request body would be {size} bytes; {rules} takes at most {max} bytes in a batch")
            }
            BatchErrorKind::Request(e) => fmt::Display::fmt(e, f),
            BatchErrorKind::Empty => Ok(()),
        }
    }
}

#[cfg(feature = "http")]
impl std::error::Error for BatchError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            BatchErrorKind::Request(e) => Some(&**e),
            _ => None,
        }
    }
}
