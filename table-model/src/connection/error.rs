//! The error of an invalid connection string, endpoint URL, account name or key. Public in every build, with
//! or without the feature `http` that the rest of the connection module needs.

use std::fmt;

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
