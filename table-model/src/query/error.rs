//! The error of query options that break a rule of the service.

use crate::filter::error::FilterError;
use crate::name::error::PropertyNameError;
use std::fmt;

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
