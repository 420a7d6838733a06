//! The error of a `$filter` that breaks a rule of the service.

use crate::edm::error::ValueError;
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
