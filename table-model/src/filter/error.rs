//! The errors of a `$filter` that breaks a rule of the service, and of `$filter` text that does not parse.

use crate::edm::error::ValueError;
use crate::edm::EdmType;
use crate::name::error::PropertyNameError;
use std::fmt;

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

/// What the parser of `$filter` text needed where it stopped (the `expected` of
/// [`FilterParseErrorKind::Expected`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Expected {
    /// The start of a comparison: a property name, `not` or `(`.
    Comparison,
    /// One of `eq`, `ne`, `gt`, `ge`, `lt`, `le`.
    ComparisonOperator,
    /// A literal: a string, a number, `true`, `false`, `datetime'...'`, `guid'...'`, `X'...'`, `binary'...'`.
    Literal,
    /// `and`, `or` or the end of the filter, after a complete comparison at the top level.
    AndOrEnd,
    /// `and`, `or` or `)`, after a complete comparison inside parentheses.
    AndOrClose,
}

impl fmt::Display for Expected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Expected::Comparison => "a property name, \"not\" or \"(\"",
            Expected::ComparisonOperator => "a comparison operator (eq, ne, gt, ge, lt, le)",
            Expected::Literal => {
                "a literal (a string, a number, true, false, datetime'...', guid'...', X'...' or binary'...')"
            }
            Expected::AndOrEnd => "\"and\", \"or\" or the end of the filter",
            Expected::AndOrClose => "\"and\", \"or\" or \")\"",
        })
    }
}

/// Why `$filter` text was refused by [`Filter::parse`](crate::filter::Filter::parse).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum FilterParseErrorKind {
    /// The text is empty or only spaces and tabs.
    Empty,
    /// Something other than what the grammar needs at this position.
    Expected {
        /// What the grammar needs.
        expected: Expected,
        /// The text found (at most 32 characters of it), or `None` at the end of the filter.
        found: Option<String>,
    },
    /// A `'` that opens a literal and is never closed.
    UnterminatedLiteral,
    /// A property name that is neither a valid property name nor a system property (`docs/rules.md` §1.2).
    InvalidProperty {
        /// The name found.
        name: String,
        /// The rule it broke.
        error: PropertyNameError,
    },
    /// A literal that is not well formed for its type (`docs/rules.md` §7.2).
    MalformedLiteral {
        /// The literal's type.
        edm_type: EdmType,
        /// The literal found (at most 32 characters of it).
        text: String,
    },
    /// An integer without the `L` suffix beyond the range of `Edm.Int32`, which the service refuses
    /// (`docs/rules.md` §7.2).
    Int32OutOfRange {
        /// The integer found.
        text: String,
    },
    /// A well-formed literal whose value breaks its EDM type's limit: a DateTime outside 1601 to 9999, a
    /// String longer than 32,768 UTF-16 code units, a Binary larger than 64 KiB.
    InvalidValue(ValueError),
    /// A 16th comparison (`docs/rules.md` §7.1); the position is where it starts.
    TooManyComparisons,
    /// More nested parentheses and `not` operators than [`FILTER_MAX_NESTING`](crate::limits::FILTER_MAX_NESTING).
    TooDeep,
}

/// The error for `$filter` text that is not a filter the service accepts, from
/// [`Filter::parse`](crate::filter::Filter::parse): what was wrong and where.
///
/// [`position`](Self::position) is the byte offset in the text where the problem starts, counted from 0;
/// [`column`](Self::column) is the same place counted in characters, which the message adds when the text
/// before it is not all ASCII.
///
/// ```
/// use table_model::filter::Filter;
/// use table_model::FilterParseErrorKind;
/// let err = Filter::parse("Größe gt 5 and Größe == 9").unwrap_err();
/// assert_eq!((err.position(), err.column()), (25, 21));
/// assert!(matches!(err.kind(), FilterParseErrorKind::Expected { .. }));
/// assert_eq!(
///     err.to_string(),
///     "invalid filter at position 25 (character 21): expected a comparison operator (eq, ne, gt, ge, lt, le), \
///      found \"==\""
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilterParseError {
    kind: FilterParseErrorKind,
    position: usize,
    column: usize,
}

impl FilterParseError {
    /// An error at byte `position` of `text`.
    pub(crate) fn new(kind: FilterParseErrorKind, text: &str, position: usize) -> Self {
        let column = text.get(..position).map_or(position, |before| before.chars().count());
        FilterParseError { kind, position, column }
    }

    /// What was wrong.
    pub fn kind(&self) -> &FilterParseErrorKind {
        &self.kind
    }

    /// The byte offset in the text where the problem starts, from 0.
    pub fn position(&self) -> usize {
        self.position
    }

    /// The character offset in the text where the problem starts, from 0.
    pub fn column(&self) -> usize {
        self.column
    }
}

impl fmt::Display for FilterParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid filter at position {}", self.position)?;
        if self.column != self.position {
            write!(f, " (character {})", self.column)?;
        }
        f.write_str(": ")?;
        match &self.kind {
            FilterParseErrorKind::Empty => f.write_str("the filter is empty; it needs at least one comparison"),
            FilterParseErrorKind::Expected { expected, found: Some(found) } => {
                write!(f, "expected {expected}, found {found:?}")
            }
            FilterParseErrorKind::Expected { expected, found: None } => {
                write!(f, "expected {expected}, found the end of the filter")
            }
            FilterParseErrorKind::UnterminatedLiteral => {
                f.write_str("the literal has no closing quote (a quote inside a string is written '')")
            }
            FilterParseErrorKind::InvalidProperty { error, .. } => fmt::Display::fmt(error, f),
            FilterParseErrorKind::MalformedLiteral { edm_type, text } => {
                write!(f, "invalid {edm_type} literal {text:?}: {}", literal_rule(*edm_type))
            }
            FilterParseErrorKind::Int32OutOfRange { text } => write!(
                f,
                "{text} is outside the Edm.Int32 range ({} to {}); write {text}L for an Edm.Int64",
                i32::MIN,
                i32::MAX
            ),
            FilterParseErrorKind::InvalidValue(e) => fmt::Display::fmt(e, f),
            FilterParseErrorKind::TooManyComparisons => {
                write!(f, "at most {} comparisons are allowed, this is one more", crate::limits::FILTER_MAX_COMPARISONS)
            }
            FilterParseErrorKind::TooDeep => {
                write!(f, "more than {} nested parentheses and not operators", crate::limits::FILTER_MAX_NESTING)
            }
        }
    }
}

/// The literal form of a type, for [`FilterParseErrorKind::MalformedLiteral`] (`docs/rules.md` §7.2).
fn literal_rule(edm_type: EdmType) -> &'static str {
    match edm_type {
        EdmType::Int32 => "an Edm.Int32 is written as decimal digits with an optional leading -",
        EdmType::Int64 => {
            "an Edm.Int64 is written as decimal digits with an optional leading - and the suffix L, \
                           from -9223372036854775808L to 9223372036854775807L"
        }
        EdmType::Double => {
            "an Edm.Double is written as decimal digits with a fraction (4.5) or an exponent (1e10), \
                            and must be finite"
        }
        EdmType::DateTime => "an Edm.DateTime is written as datetime'2024-01-02T03:04:05.0000000Z'",
        EdmType::Guid => "an Edm.Guid is written as guid'' and 32 hexadecimal digits in groups of 8-4-4-4-12",
        EdmType::Binary => "an Edm.Binary is written as X'' or binary'' around an even number of hexadecimal digits",
        EdmType::String => "an Edm.String is written between quotes, a quote inside doubled",
        EdmType::Boolean => "an Edm.Boolean is written as true or false",
    }
}

impl std::error::Error for FilterParseError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            FilterParseErrorKind::InvalidProperty { error, .. } => Some(error),
            FilterParseErrorKind::InvalidValue(e) => Some(e),
            _ => None,
        }
    }
}
