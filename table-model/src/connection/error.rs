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
    /// An empty account key (or one of whitespace only).
    EmptyAccountKey,
    /// A shared access signature that is not a URL query string (not shown: it is a secret): empty, or with
    /// this character at this byte index, which a URL cannot carry.
    InvalidSas {
        /// The first character a URL query cannot carry and its byte index; `None` for an empty token.
        invalid: Option<(char, usize)>,
    },
}

/// The error for an invalid connection string, endpoint URL, account name or key. Its message names what was
/// given: a value from a connection string is named as the connection string's (`` `AccountKey` is not valid
/// base64``), a value given alone as itself.
///
/// ```
/// use table_model::{AccountKey, ConnectionErrorKind, ConnectionString, Endpoint};
/// let err = "AccountKey=a2V5".parse::<ConnectionString>().unwrap_err();
/// assert_eq!(err.kind(), &ConnectionErrorKind::Missing { key: "AccountName" });
/// assert_eq!(err.to_string(), "invalid connection string: `AccountName` is missing");
///
/// let err = Endpoint::parse("http://127.0.0.1:10002").unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "invalid endpoint URL \"http://127.0.0.1:10002\": cannot tell the account name from it; name the account \
///      in the path (`http://127.0.0.1:10002/<account>`) or give it with `Endpoint::with_account`"
/// );
/// assert_eq!(AccountKey::from_base64("").unwrap_err().to_string(), "invalid account key: empty");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectionError {
    kind: ConnectionErrorKind,
    given: Given,
}

/// What the refused value was given as, which the message names.
#[derive(Debug, Clone, PartialEq, Eq)]
// Without `http`, only connection strings' errors are made (the parsers of the others need it).
#[cfg_attr(not(feature = "http"), allow(dead_code))]
pub(crate) enum Given {
    /// A value of a connection string.
    ConnectionString,
    /// An endpoint URL given alone (shown with the signature of a SAS it carries redacted).
    Endpoint(String),
    /// An account name given alone.
    AccountName,
    /// An account key given alone.
    AccountKey,
    /// A shared access signature given alone.
    Sas,
}

impl ConnectionError {
    /// An error in a connection string.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn new(kind: ConnectionErrorKind) -> Self {
        ConnectionError { kind, given: Given::ConnectionString }
    }

    /// An error in a value given as `given`.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn given(kind: ConnectionErrorKind, given: Given) -> Self {
        ConnectionError { kind, given }
    }

    /// The same error, for a value given as `given` (a value of a connection string checked by the
    /// constructor of an endpoint or key, for example).
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn given_as(self, given: Given) -> Self {
        ConnectionError { given, ..self }
    }

    /// Which rule was broken.
    pub fn kind(&self) -> &ConnectionErrorKind {
        &self.kind
    }
}

impl fmt::Display for ConnectionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const ACCOUNT_NAME_RULE: &str = "must be ASCII letters, digits and `-`";
        match (&self.given, &self.kind) {
            (Given::Endpoint(url), kind) => {
                write!(f, "invalid endpoint URL {url:?}: ")?;
                match kind {
                    ConnectionErrorKind::InvalidUrl { .. } => {
                        f.write_str("must be an http or https URL without query, fragment or user name")
                    }
                    ConnectionErrorKind::NoAccount { .. } => {
                        let base = url.trim_end_matches('/');
                        write!(
                            f,
                            "cannot tell the account name from it; name the account in the path \
                             (`{base}/<account>`) or give it with `Endpoint::with_account`"
                        )
                    }
                    ConnectionErrorKind::InvalidAccountName { account } => {
                        write!(f, "account name {account:?} {ACCOUNT_NAME_RULE}")
                    }
                    ConnectionErrorKind::Conflict { .. } => f.write_str(
                        "a URL that carries a `SharedAccessSignature` takes no other credential; pass \
                         `TableCredential::Anonymous`",
                    ),
                    _ => self.write_in_connection_string(f),
                }
            }
            (Given::AccountName, ConnectionErrorKind::InvalidAccountName { account }) => {
                write!(f, "invalid account name {account:?}: {ACCOUNT_NAME_RULE}")
            }
            (Given::AccountKey, ConnectionErrorKind::InvalidAccountKey) => {
                f.write_str("invalid account key: not valid base64 (it is the base64 text the portal shows)")
            }
            (Given::AccountKey, ConnectionErrorKind::EmptyAccountKey) => f.write_str("invalid account key: empty"),
            (Given::Sas, ConnectionErrorKind::InvalidSas { invalid }) => {
                f.write_str("invalid shared access signature: ")?;
                write_sas_rule(*invalid, f)
            }
            _ => {
                f.write_str("invalid connection string: ")?;
                self.write_in_connection_string(f)
            }
        }
    }
}

impl ConnectionError {
    /// The message of the error in a connection string, after `invalid connection string: `.
    fn write_in_connection_string(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
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
            ConnectionErrorKind::EmptyAccountKey => f.write_str("`AccountKey` is empty"),
            ConnectionErrorKind::InvalidSas { invalid } => {
                f.write_str("`SharedAccessSignature` ")?;
                write_sas_rule(*invalid, f)
            }
        }
    }
}

/// What is wrong with a SAS token that is not a URL query string.
fn write_sas_rule(invalid: Option<(char, usize)>, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    match invalid {
        None => f.write_str("must be a URL query string (it is empty)"),
        Some((ch, index)) => {
            let shown = table_model_rules::DisplayChar(ch);
            write!(f, "must be a URL query string (character {shown} at index {index} cannot be in a URL)")
        }
    }
}

impl std::error::Error for ConnectionError {}
