//! The client's error: what the service refused, what was refused before sending, what could not be read,
//! and what never got an answer.

use crate::connection::error::ConnectionError;
use crate::request::error::RequestError;
use crate::response::errors::{ResponseError, ResponseErrorKind, ServiceError};
use crate::ErrorCode;
use std::fmt;

/// Why a client call failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The service answered with an error status: its code, message and request id. Match
    /// [`Error::error_code`] for one arm per case.
    Service(ServiceError),
    /// The input broke a rule of the service, and nothing was sent: an entity that does not encode, a query
    /// over the filter limits, a batch over its limits.
    Request(RequestError),
    /// The service answered with something the protocol does not allow: an unexpected status, a body that
    /// does not decode, an entity that does not fit the struct it is read into.
    Response(ResponseError),
    /// An endpoint URL, connection string or SAS token that is not valid.
    Connection(ConnectionError),
    /// A write whose first try got no answer (or a `500`), was sent again, and whose retry was refused in a
    /// way its own first try could have caused; the entity read back does not settle it. Read the entity and
    /// decide (see [`outcome`](super::outcome)).
    OutcomeUnknown(OutcomeUnknown),
    /// No answer: the connection failed, the retries ran out, the credential could not get a token, or the
    /// pipeline refused the request (`azure_core`'s error, as it is).
    Transport(azure_core::Error),
}

/// The error of every [`TableClient`](super::TableClient) and [`TableServiceClient`](super::TableServiceClient)
/// call.
///
/// ```
/// use table_model::client::{Error, ErrorKind};
/// use table_model::ErrorCode;
/// fn is_stale(err: &Error) -> bool {
///     matches!(err.error_code(), Some(ErrorCode::UpdateConditionNotSatisfied))
/// }
/// fn describe(err: &Error) -> String {
///     match err.kind() {
///         ErrorKind::Service(e) => format!("refused with {}", e.status()),
///         ErrorKind::Request(e) => format!("not sent: {e}"),
///         _ => err.to_string(),
///     }
/// }
/// ```
pub struct Error {
    /// Boxed, so that a `Result<T, Error>` stays small.
    kind: Box<ErrorKind>,
}

impl Error {
    pub(crate) fn new(kind: ErrorKind) -> Self {
        Error { kind: Box::new(kind) }
    }

    /// What went wrong.
    pub fn kind(&self) -> &ErrorKind {
        &self.kind
    }

    /// The error, by value.
    pub fn into_kind(self) -> ErrorKind {
        *self.kind
    }

    /// The service's error, when it answered with an error status.
    pub fn service(&self) -> Option<&ServiceError> {
        match &*self.kind {
            ErrorKind::Service(e) => Some(e),
            _ => None,
        }
    }

    /// The service's error code, when it answered with one.
    pub fn error_code(&self) -> Option<ErrorCode> {
        self.service().and_then(ServiceError::error_code)
    }

    /// The HTTP status of the service's answer, when it answered with an error status.
    pub fn status(&self) -> Option<u16> {
        self.service().map(ServiceError::status)
    }

    /// Whether the entity or table was not found (`404`).
    pub fn is_not_found(&self) -> bool {
        self.service().is_some_and(ServiceError::is_not_found)
    }

    /// Whether the entity or table already exists, or the table is being deleted (`409`).
    pub fn is_conflict(&self) -> bool {
        self.service().is_some_and(ServiceError::is_conflict)
    }

    /// Whether an `If-Match` precondition failed: the entity changed since it was read (`412`).
    pub fn is_precondition_failed(&self) -> bool {
        self.service().is_some_and(ServiceError::is_precondition_failed)
    }
}

/// The details of [`ErrorKind::OutcomeUnknown`].
#[derive(Debug)]
pub struct OutcomeUnknown {
    pub(crate) operation: &'static str,
    pub(crate) answer: ServiceError,
    pub(crate) reason: String,
}

impl OutcomeUnknown {
    /// The operation: `insert`, `update`, `delete`, `transaction`.
    pub fn operation(&self) -> &'static str {
        self.operation
    }

    /// The service's answer to the last try.
    pub fn answer(&self) -> &ServiceError {
        &self.answer
    }

    /// What the read-back found.
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

impl fmt::Display for OutcomeUnknown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the outcome of the {} is unknown: a try got no answer, and the retry was refused ({}); {}",
            self.operation, self.answer, self.reason
        )
    }
}

impl std::error::Error for OutcomeUnknown {}

impl fmt::Debug for Error {
    /// The message, then the structure: `main` returning this error prints what went wrong first.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if f.alternate() {
            return f.debug_struct("Error").field("kind", &self.kind).finish();
        }
        write!(f, "{self} ({:?})", self.kind)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &*self.kind {
            ErrorKind::Service(e) => e.fmt(f),
            ErrorKind::Request(e) => e.fmt(f),
            ErrorKind::Response(e) => e.fmt(f),
            ErrorKind::Connection(e) => e.fmt(f),
            ErrorKind::OutcomeUnknown(e) => e.fmt(f),
            ErrorKind::Transport(e) => write!(f, "the request got no answer: {e}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &*self.kind {
            ErrorKind::Service(e) => Some(e),
            ErrorKind::Request(e) => Some(e),
            ErrorKind::Response(e) => Some(e),
            ErrorKind::Connection(e) => Some(e),
            ErrorKind::OutcomeUnknown(e) => Some(e),
            ErrorKind::Transport(e) => Some(e),
        }
    }
}

impl From<RequestError> for Error {
    fn from(e: RequestError) -> Self {
        Error::new(ErrorKind::Request(e))
    }
}

impl From<ResponseError> for Error {
    /// A service error inside a response error becomes [`ErrorKind::Service`].
    fn from(e: ResponseError) -> Self {
        match e.kind() {
            ResponseErrorKind::Service(service) => Error::new(ErrorKind::Service(service.clone())),
            _ => Error::new(ErrorKind::Response(e)),
        }
    }
}

impl From<ServiceError> for Error {
    fn from(e: ServiceError) -> Self {
        Error::new(ErrorKind::Service(e))
    }
}

impl From<ConnectionError> for Error {
    fn from(e: ConnectionError) -> Self {
        Error::new(ErrorKind::Connection(e))
    }
}

impl From<azure_core::Error> for Error {
    fn from(e: azure_core::Error) -> Self {
        Error::new(ErrorKind::Transport(e))
    }
}

impl From<Error> for azure_core::Error {
    /// For code that mixes this client with the official SDK's clients and returns `azure_core::Result`: the
    /// transport error as it was, anything else wrapped with its message.
    fn from(e: Error) -> Self {
        use azure_core::error::ErrorKind as Core;
        match *e.kind {
            ErrorKind::Transport(core) => core,
            ErrorKind::Service(ref service) => {
                let status = azure_core::http::StatusCode::from(service.status());
                let error_code = service.code().map(str::to_owned);
                azure_core::Error::new(Core::HttpResponse { status, error_code, raw_response: None }, e)
            }
            ErrorKind::Request(_) | ErrorKind::Connection(_) | ErrorKind::OutcomeUnknown(_) => {
                azure_core::Error::new(Core::Other, e)
            }
            ErrorKind::Response(_) => azure_core::Error::new(Core::DataConversion, e),
        }
    }
}
