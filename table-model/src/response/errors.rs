//! The errors of responses: what the service refused, and a response that cannot be read. (The module is
//! `errors` because `response::error` is the function that reads a service error.)

use crate::entity::error::EntityError;
use crate::json::error::DecodeError;
use std::fmt;

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
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceError {
    pub(crate) status: u16,
    pub(crate) code: Option<String>,
    pub(crate) message: String,
    pub(crate) operation_index: Option<usize>,
    pub(crate) request_id: Option<String>,
}

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

impl std::error::Error for ServiceError {}

/// Why a response could not be read.
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
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResponseError {
    kind: ResponseErrorKind,
}

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

impl From<ServiceError> for ResponseError {
    fn from(e: ServiceError) -> Self {
        ResponseError::new(ResponseErrorKind::Service(e))
    }
}

impl From<DecodeError> for ResponseError {
    fn from(e: DecodeError) -> Self {
        ResponseError::new(ResponseErrorKind::Decode(e))
    }
}

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
