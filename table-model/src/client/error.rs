//! The client's error: what the service refused, what was refused before sending, what could not be read,
//! and what never got an answer.

use super::credential::AuthNote;
use super::location::Location;
use crate::connection::error::ConnectionError;
use crate::connection::redact_signature;
use crate::key::{PartitionKey, RowKey};
use crate::name::TableName;
use crate::request::error::RequestError;
use crate::response::errors::{ResponseError, ResponseErrorKind, ServiceError};
use crate::ErrorCode;
use azure_core::http::{Method, Request, Url};
use std::borrow::Cow;
use std::fmt;
use std::time::Duration;
use table_model_rules::display::QuotedValue;

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
    /// A read asked of the secondary location ([`LocationMode`](super::LocationMode)) of an endpoint whose URL
    /// does not name the account (a custom domain, a proxy), so that its secondary is not known; nothing was
    /// sent.
    NoSecondary {
        /// The endpoint's URL.
        endpoint: String,
    },
}

/// The error of every [`TableClient`](super::TableClient) and [`TableServiceClient`](super::TableServiceClient)
/// call.
///
/// Besides what went wrong ([`kind`](Error::kind)), it says where: the error of a table client's call names the
/// table ([`table`](Error::table)), and of a call on one entity its keys ([`keys`](Error::keys)); a request
/// that got no answer names its method and URL (with a SAS signature redacted), the cause, and how many tries
/// took how long; a `403` under Shared Key names the account the key was given for, and the clock skew when the
/// request's date was more than the service allows off its own.
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
    inner: Box<Inner>,
}

/// What went wrong, and where.
#[derive(Debug)]
struct Inner {
    kind: ErrorKind,
    table: Option<TableName>,
    keys: Option<(PartitionKey, RowKey)>,
    /// For a request that got no answer: what was sent, and how long it was tried.
    attempt: Option<Attempt>,
    /// For a `403` under Shared Key: what the client knows of the likely causes.
    auth: Option<AuthNote>,
    /// For a read under a [`LocationMode`](super::LocationMode) other than the primary only: the location that
    /// gave this error and its endpoint's URL.
    location: Option<(Location, String)>,
    /// For a read that went to the secondary after the primary failed: the primary's error.
    primary: Option<Error>,
}

impl Error {
    pub(crate) fn new(kind: ErrorKind) -> Self {
        Error {
            inner: Box::new(Inner {
                kind,
                table: None,
                keys: None,
                attempt: None,
                auth: None,
                location: None,
                primary: None,
            }),
        }
    }

    /// The same error, naming `table` (unless it names one already), as the client's own errors name the table of
    /// their call: for the error of a page that the caller reads itself, from an answer it asked the client for.
    ///
    /// ```
    /// use table_model::client::Error;
    /// use table_model::{ResponseError, TableName};
    /// let read = table_model::response::query(&http::Response::new(&b"{"[..]), None).unwrap_err();
    /// let error = Error::from(read).in_table(&TableName::from_static("Orders"));
    /// assert!(error.to_string().starts_with("table `Orders`: "), "{error}");
    /// # let _: Option<ResponseError> = None;
    /// ```
    pub fn in_table(mut self, table: &TableName) -> Self {
        if self.inner.table.is_none() {
            self.inner.table = Some(table.clone());
        }
        self
    }

    /// The same error, naming the entity of the call (unless it names one already); `None` for keys that are
    /// not valid (the error is then about them).
    pub(crate) fn for_entity(mut self, keys: Option<(PartitionKey, RowKey)>) -> Self {
        if self.inner.keys.is_none() {
            self.inner.keys = keys;
        }
        self
    }

    /// The same error, with what was sent, for a request that got no answer.
    pub(crate) fn with_attempt(mut self, attempt: Attempt) -> Self {
        if matches!(self.inner.kind, ErrorKind::Transport(_)) {
            self.inner.attempt = Some(attempt);
        }
        self
    }

    /// The same error, with what the client knows of a refused authorization, when it is a `403`.
    pub(crate) fn with_auth(mut self, note: Option<AuthNote>) -> Self {
        if self.status() == Some(403) {
            self.inner.auth = note;
        }
        self
    }

    /// The same error, naming the location (and its endpoint) that gave it.
    pub(crate) fn at_location(mut self, location: Location, endpoint: &str) -> Self {
        self.inner.location = Some((location, endpoint.to_owned()));
        self
    }

    /// The secondary's error, with the primary's before it.
    pub(crate) fn after_primary(mut self, primary: Error) -> Self {
        self.inner.primary = Some(primary);
        self
    }

    /// The location that gave this error, for a read that was not for the primary only
    /// ([`LocationMode`](super::LocationMode)); `None` otherwise.
    pub fn location(&self) -> Option<Location> {
        self.inner.location.as_ref().map(|(location, _)| *location)
    }

    /// For a read that went to the secondary after the primary failed (and failed there too): the primary's
    /// error. This error is the secondary's.
    pub fn primary_error(&self) -> Option<&Error> {
        self.inner.primary.as_ref()
    }

    /// What went wrong.
    pub fn kind(&self) -> &ErrorKind {
        &self.inner.kind
    }

    /// The error, by value.
    pub fn into_kind(self) -> ErrorKind {
        self.inner.kind
    }

    /// The table of the call: every error of a [`TableClient`](super::TableClient) call names it.
    ///
    /// ```no_run
    /// use table_model::client::TableServiceClient;
    /// use table_model::{Entity, PartitionKey, RowKey, TableName};
    /// # async fn run() -> Result<(), table_model::client::Error> {
    /// let service = TableServiceClient::from_connection_string("UseDevelopmentStorage=true", None)?;
    /// let table = service.table_client(TableName::from_static("Missing"));
    /// let (pk, rk) = (PartitionKey::from_static("p"), RowKey::from_static("r"));
    /// let err = table.get::<Entity>(&pk, &rk, None).await.unwrap_err();
    /// assert_eq!(err.table().map(TableName::as_str), Some("Missing"));
    /// assert_eq!(err.keys(), Some((&pk, &rk)));
    /// // table `Missing`, PartitionKey "p", RowKey "r": the service refused the request: 404 TableNotFound: ...
    /// println!("{err}");
    /// # Ok(())
    /// # }
    /// ```
    pub fn table(&self) -> Option<&TableName> {
        self.inner.table.as_ref()
    }

    /// The keys of the entity, for an error of a call on one entity (get, insert, upsert, update, delete)
    /// whose keys are valid.
    pub fn keys(&self) -> Option<(&PartitionKey, &RowKey)> {
        self.inner.keys.as_ref().map(|(pk, rk)| (pk, rk))
    }

    /// The service's error, when it answered with an error status.
    pub fn service(&self) -> Option<&ServiceError> {
        match &self.inner.kind {
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
        let inner = &*self.inner;
        if f.alternate() {
            return f
                .debug_struct("Error")
                .field("kind", &inner.kind)
                .field("table", &inner.table)
                .field("keys", &inner.keys)
                .field("attempt", &inner.attempt)
                .field("auth", &inner.auth)
                .finish();
        }
        write!(f, "{self} ({:?})", inner.kind)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let inner = &*self.inner;
        if let Some(table) = &inner.table {
            write!(f, "table `{table}`")?;
            if let Some((pk, rk)) = &inner.keys {
                write!(f, ", PartitionKey {}, RowKey {}", QuotedValue(pk.as_str()), QuotedValue(rk.as_str()))?;
            }
            f.write_str(": ")?;
        }
        self.describe_failure(f)
    }
}

impl Error {
    /// What went wrong, without the table and keys: the failure, the authorization note, the location.
    fn describe_failure(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let inner = &*self.inner;
        match (&inner.kind, &inner.attempt) {
            (ErrorKind::Service(e), _) => fmt::Display::fmt(e, f)?,
            (ErrorKind::Request(e), _) => fmt::Display::fmt(e, f)?,
            (ErrorKind::Response(e), _) => fmt::Display::fmt(e, f)?,
            (ErrorKind::Connection(e), _) => fmt::Display::fmt(e, f)?,
            (ErrorKind::OutcomeUnknown(e), _) => fmt::Display::fmt(e, f)?,
            (ErrorKind::Transport(e), Some(attempt)) => attempt.describe(e, f)?,
            (ErrorKind::Transport(e), None) => write!(f, "the request got no answer: {e}")?,
            (ErrorKind::NoSecondary { endpoint }, _) => write!(
                f,
                "the secondary location of endpoint `{endpoint}` is not known: its URL does not name the account \
                 (reads may go to the secondary of `https://<account>.table.core.windows.net` or of a path-style \
                 `http://host:port/<account>` only)"
            )?,
        }
        if let Some(note) = &inner.auth {
            write!(f, " ({note})")?;
        }
        if let Some((location, endpoint)) = &inner.location {
            write!(f, " (at the {location} location, {endpoint}")?;
            if let Some(primary) = &inner.primary {
                // The primary's error without its table and keys, which this one names already.
                write!(f, ", after the primary failed: ")?;
                primary.describe_failure(f)?;
            }
            f.write_str(")")?;
        }
        Ok(())
    }
}

/// What a request that got no answer was, and how long it was tried.
#[derive(Debug)]
pub(crate) struct Attempt {
    method: Method,
    /// The URL, with a SAS signature redacted.
    url: Url,
    /// How many tries were sent (`0` when the request was refused before the first).
    tries: u32,
    /// From the call's start to its end.
    elapsed: Duration,
}

impl Attempt {
    pub(crate) fn new(request: &Request, tries: u32, elapsed: Duration) -> Self {
        let url = match redact_signature(request.url().as_str()) {
            Cow::Owned(redacted) => Url::parse(&redacted).unwrap_or_else(|_| request.url().clone()),
            Cow::Borrowed(_) => request.url().clone(),
        };
        Attempt { method: request.method(), url, tries, elapsed }
    }

    /// `GET <url>: <cause>; <n> tries in <time>`.
    fn describe(&self, error: &azure_core::Error, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}: ", self.method, self.url)?;
        let host = self.url.host_str().unwrap_or("");
        let port = self.url.port_or_known_default().unwrap_or(0);
        match Failure::of(error) {
            Failure::Refused(io) => {
                write!(f, "connection refused: nothing listens at {host}:{port}")?;
                if let Some(code) = io.raw_os_error() {
                    write!(f, " (os error {code})")?;
                }
            }
            Failure::NameNotResolved(cause) => write!(f, "the host name `{host}` does not resolve: {cause}")?,
            Failure::Tls(e) => {
                write!(f, "the TLS handshake with {host}:{port} failed: {e}")?;
                if matches!(e, rustls::Error::InvalidMessage(rustls::InvalidMessage::InvalidContentType)) {
                    f.write_str("; the server does not speak TLS (is the endpoint http?)")?;
                }
            }
            Failure::Other(cause) => write!(f, "{cause}")?,
        }
        match self.tries {
            0 => Ok(()),
            1 => write!(f, "; 1 try in {:.1?}", self.elapsed),
            n => write!(f, "; {n} tries in {:.1?}", self.elapsed),
        }
    }
}

/// Why a try got no answer, as far as the error's sources tell, whatever the transport: `reqwest`'s (the
/// client's own and `azure_core`'s) and any that keeps the `std::io::Error` of a refused connection.
pub(crate) enum Failure<'a> {
    /// The connection was refused: nothing listens at the address.
    Refused(&'a std::io::Error),
    /// The host name does not resolve (with the resolver's innermost error).
    NameNotResolved(&'a (dyn std::error::Error + 'static)),
    /// The TLS handshake failed.
    Tls(&'a rustls::Error),
    /// Anything else, as its innermost error says.
    Other(&'a (dyn std::error::Error + 'static)),
}

impl<'a> Failure<'a> {
    pub(crate) fn of(error: &'a azure_core::Error) -> Self {
        let mut innermost: &(dyn std::error::Error + 'static) = error;
        let mut dns = false;
        let mut next = Some(innermost);
        while let Some(e) = next {
            innermost = e;
            dns |= e.downcast_ref::<reqwest::Error>().is_some_and(reqwest::Error::is_dns);
            // An `io::Error`'s `source` skips the error it wraps: look into it.
            let mut wrapped = Some(e);
            while let Some(w) = wrapped {
                if let Some(tls) = w.downcast_ref::<rustls::Error>() {
                    return Failure::Tls(tls);
                }
                let Some(io) = w.downcast_ref::<std::io::Error>() else { break };
                if io.kind() == std::io::ErrorKind::ConnectionRefused {
                    return Failure::Refused(io);
                }
                wrapped = io.get_ref().map(|inner| inner as &(dyn std::error::Error + 'static));
            }
            next = e.source();
        }
        if dns {
            Failure::NameNotResolved(innermost)
        } else {
            Failure::Other(innermost)
        }
    }

    /// Whether no connection could be made to the address: refused, a host name that does not resolve, or a
    /// failed TLS handshake. A retry a second later rarely fares better (`docs/rules.md` §12).
    pub(crate) fn is_unreachable(&self) -> bool {
        !matches!(self, Failure::Other(_))
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.inner.kind {
            ErrorKind::Service(e) => Some(e),
            ErrorKind::Request(e) => Some(e),
            ErrorKind::Response(e) => Some(e),
            ErrorKind::Connection(e) => Some(e),
            ErrorKind::OutcomeUnknown(e) => Some(e),
            ErrorKind::Transport(e) => Some(e),
            ErrorKind::NoSecondary { .. } => None,
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
        match e.inner.kind {
            ErrorKind::Transport(core) => core,
            ErrorKind::Service(ref service) => {
                let status = azure_core::http::StatusCode::from(service.status());
                let error_code = service.code().map(str::to_owned);
                azure_core::Error::new(Core::HttpResponse { status, error_code, raw_response: None }, e)
            }
            ErrorKind::Request(_)
            | ErrorKind::Connection(_)
            | ErrorKind::OutcomeUnknown(_)
            | ErrorKind::NoSecondary { .. } => azure_core::Error::new(Core::Other, e),
            ErrorKind::Response(_) => azure_core::Error::new(Core::DataConversion, e),
        }
    }
}
