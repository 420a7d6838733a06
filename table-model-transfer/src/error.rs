//! How an operation fails: a [`TransferError`] with its [`ErrorKind`], which tells a caller what to do next
//! (fix the input, check the endpoint or the credential, look at the service, or run again to resume).
//!
//! Layer: base.

use std::fmt;
use table_model::client::{Error as ClientError, ErrorKind as ClientErrorKind};

/// What kind of failure ended an operation.
///
/// ```
/// use table_model_transfer::error::{ErrorKind, TransferError};
/// let err = TransferError::invalid("no table named `x`");
/// assert_eq!(err.kind(), ErrorKind::InvalidInput);
/// assert_eq!(err.to_string(), "no table named `x`");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The options or the input are wrong (a filter that does not parse, a file of no format the engine reads,
    /// a checkpoint of another run); nothing was changed.
    InvalidInput,
    /// The endpoint cannot be reached, or refuses the credential (401, 403).
    Unreachable,
    /// Anything else: the service refused a request, a file could not be read or written.
    Failed,
    /// The writer the caller gave (stdout, say) was closed by its reader: `tablectl query T | head` ends
    /// quietly on it.
    OutputClosed,
    /// The caller fired the operation's [`CancellationToken`](crate::CancellationToken): what was done is in
    /// the checkpoint, and the same operation run again resumes from there.
    Cancelled,
}

/// An error that ended an operation: its kind and its message (what was wrong, where, and what the rule is).
#[derive(Debug)]
pub struct TransferError {
    kind: ErrorKind,
    message: String,
}

impl TransferError {
    /// An error of the given kind.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        TransferError { kind, message: message.into() }
    }

    /// Invalid input: [`ErrorKind::InvalidInput`].
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidInput, message)
    }

    /// Any other failure: [`ErrorKind::Failed`].
    pub fn failed(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Failed, message)
    }

    /// A file that could not be read or written, naming it.
    ///
    /// ```
    /// use table_model_transfer::error::{ErrorKind, TransferError};
    /// let gone = std::io::Error::from(std::io::ErrorKind::NotFound);
    /// let err = TransferError::io("read", "in.jsonl".as_ref(), gone);
    /// assert_eq!((err.kind(), err.to_string()), (ErrorKind::Failed, "cannot read `in.jsonl`: entity not found".to_owned()));
    /// ```
    pub fn io(action: &str, path: &std::path::Path, error: std::io::Error) -> Self {
        Self::failed(format!("cannot {action} `{}`: {error}", path.display()))
    }

    /// An error writing into the caller's writer: a closed pipe is [`ErrorKind::OutputClosed`], anything else
    /// [`ErrorKind::Failed`], naming `what` was written into.
    ///
    /// ```
    /// use table_model_transfer::error::{ErrorKind, TransferError};
    /// let closed = TransferError::output_closed_or("stdout", std::io::ErrorKind::BrokenPipe.into());
    /// assert_eq!(closed.kind(), ErrorKind::OutputClosed);
    /// let full = TransferError::output_closed_or("stdout", std::io::ErrorKind::StorageFull.into());
    /// assert_eq!((full.kind(), full.to_string()), (ErrorKind::Failed, "cannot write to stdout: no storage space".to_owned()));
    /// ```
    pub fn output_closed_or(what: &str, error: std::io::Error) -> Self {
        if error.kind() == std::io::ErrorKind::BrokenPipe {
            Self::new(ErrorKind::OutputClosed, format!("{what} was closed"))
        } else {
            Self::failed(format!("cannot write to {what}: {error}"))
        }
    }

    /// The kind of failure.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The same error with more said after its message (`; run it again to resume`, say).
    #[must_use]
    pub fn then(self, more: impl fmt::Display) -> Self {
        TransferError { message: format!("{}; {more}", self.message), ..self }
    }
}

impl fmt::Display for TransferError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for TransferError {}

/// The kind of a client error: no answer or a refused credential is [`ErrorKind::Unreachable`]; input the
/// library refused before sending (a request over a limit, a connection string) is
/// [`ErrorKind::InvalidInput`]; anything else [`ErrorKind::Failed`].
pub fn client_error_kind(error: &ClientError) -> ErrorKind {
    match error.kind() {
        ClientErrorKind::Transport(_) => ErrorKind::Unreachable,
        ClientErrorKind::Service(e) if matches!(e.status(), 401 | 403) => ErrorKind::Unreachable,
        ClientErrorKind::Request(_) | ClientErrorKind::Connection(_) => ErrorKind::InvalidInput,
        _ => ErrorKind::Failed,
    }
}

impl From<ClientError> for TransferError {
    fn from(error: ClientError) -> Self {
        TransferError::new(client_error_kind(&error), error.to_string())
    }
}
