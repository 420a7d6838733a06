//! How a run ends: the [`Outcome`] a script reads from the exit status, and the [`CliError`] that ends a run
//! early with a message for stderr.
//!
//! Layer: parts.

use std::fmt;
use table_model::client::Error as ClientError;
use table_model_transfer::error::{client_error_kind, ErrorKind, TransferError};

/// The outcome of a run, as its exit status (`docs/tablectl.md`, "Exit codes").
///
/// ```
/// use table_model_cli::error::Outcome;
/// assert_eq!(Outcome::Done.code(), 0);
/// assert_eq!(Outcome::Partial.code(), 1);
/// assert_eq!(Outcome::InvalidInput.code(), 2);
/// assert_eq!(Outcome::Unreachable.code(), 3);
/// assert_eq!(Outcome::Failed.code(), 4);
/// assert_eq!(Outcome::Cancelled.code(), 130);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// Everything asked for was done.
    Done,
    /// Done, except for some entities, each listed in the reject report.
    Partial,
    /// The command line or the input is wrong (clap's usage errors have this status too); nothing was changed.
    InvalidInput,
    /// The endpoint cannot be reached, or refuses the credential (401, 403).
    Unreachable,
    /// Anything else: the service refused a request, a file could not be written.
    Failed,
    /// Stopped by Ctrl-C (SIGINT) at a checkpoint: the same command run again resumes. 130, as a shell reports a
    /// process ended by SIGINT.
    Cancelled,
}

impl Outcome {
    /// The exit status.
    pub const fn code(self) -> u8 {
        match self {
            Outcome::Done => 0,
            Outcome::Partial => 1,
            Outcome::InvalidInput => 2,
            Outcome::Unreachable => 3,
            Outcome::Failed => 4,
            Outcome::Cancelled => 130,
        }
    }
}

impl From<Outcome> for std::process::ExitCode {
    fn from(outcome: Outcome) -> Self {
        std::process::ExitCode::from(outcome.code())
    }
}

/// An error that ends a run: its message (printed on stderr as `tablectl: <message>`, unless it is empty) and its
/// [`Outcome`].
///
/// ```
/// use table_model_cli::error::{CliError, Outcome};
/// let err = CliError::invalid("no table named `x`");
/// assert_eq!(err.outcome(), Outcome::InvalidInput);
/// assert_eq!(err.to_string(), "no table named `x`");
/// ```
#[derive(Debug)]
pub struct CliError {
    outcome: Outcome,
    message: String,
}

impl CliError {
    /// An error with the given outcome.
    pub fn new(outcome: Outcome, message: impl Into<String>) -> Self {
        CliError { outcome, message: message.into() }
    }

    /// Invalid input: [`Outcome::InvalidInput`].
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(Outcome::InvalidInput, message)
    }

    /// Any other failure: [`Outcome::Failed`].
    pub fn failed(message: impl Into<String>) -> Self {
        Self::new(Outcome::Failed, message)
    }

    /// A file that could not be read or written, naming it.
    pub fn io(action: &str, path: &std::path::Path, error: std::io::Error) -> Self {
        Self::failed(format!("cannot {action} `{}`: {error}", path.display()))
    }

    /// An error writing to stdout: a closed pipe (`tablectl query T | head`) ends the run quietly as
    /// [`Outcome::Done`]; any other error is [`Outcome::Failed`].
    pub fn stdout(error: std::io::Error) -> Self {
        if error.kind() == std::io::ErrorKind::BrokenPipe {
            Self::new(Outcome::Done, String::new())
        } else {
            Self::failed(format!("cannot write to stdout: {error}"))
        }
    }

    /// The outcome the run ends with.
    pub fn outcome(&self) -> Outcome {
        self.outcome
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CliError {}

/// The outcome of an engine error's kind.
///
/// ```
/// use table_model_cli::error::{outcome_of, Outcome};
/// use table_model_transfer::error::ErrorKind;
/// assert_eq!(outcome_of(ErrorKind::Unreachable), Outcome::Unreachable);
/// assert_eq!(outcome_of(ErrorKind::OutputClosed), Outcome::Done);
/// ```
pub fn outcome_of(kind: ErrorKind) -> Outcome {
    match kind {
        ErrorKind::InvalidInput => Outcome::InvalidInput,
        ErrorKind::Unreachable => Outcome::Unreachable,
        ErrorKind::Cancelled => Outcome::Cancelled,
        // A closed pipe (`tablectl query T | head`) ends the run quietly.
        ErrorKind::OutputClosed => Outcome::Done,
        _ => Outcome::Failed,
    }
}

/// The outcome of a client error: no answer or a refused credential is [`Outcome::Unreachable`]; input the
/// library refused before sending (a request over a limit, a connection string) is [`Outcome::InvalidInput`];
/// anything else [`Outcome::Failed`].
pub fn client_outcome(error: &ClientError) -> Outcome {
    outcome_of(client_error_kind(error))
}

impl From<TransferError> for CliError {
    fn from(error: TransferError) -> Self {
        match error.kind() {
            ErrorKind::OutputClosed => CliError::new(Outcome::Done, String::new()),
            kind => CliError::new(outcome_of(kind), error.to_string()),
        }
    }
}

impl From<ClientError> for CliError {
    fn from(error: ClientError) -> Self {
        CliError::new(client_outcome(&error), error.to_string())
    }
}

/// A DataFusion error of `tablectl sql`: a client error inside it (a request that failed while a table was
/// sampled or scanned) keeps its own outcome and message; a statement DataFusion cannot parse or plan (a syntax
/// error, a table or column it does not know, something it does not support) is [`Outcome::InvalidInput`];
/// anything else [`Outcome::Failed`]. The message says what kind of error it is, in the tool's words, then
/// DataFusion's detail (its first word lowercase unless it is an acronym, no trailing period, no backtrace).
///
/// ```
/// use datafusion::error::DataFusionError;
/// use datafusion::sql::sqlparser::parser::ParserError;
/// use table_model_cli::error::{CliError, Outcome};
/// let err = CliError::from(DataFusionError::Plan("table 'datafusion.public.nosuch' not found".into()));
/// assert_eq!(err.outcome(), Outcome::InvalidInput);
/// assert_eq!(err.to_string(), "cannot plan the statement: table 'datafusion.public.nosuch' not found");
/// let syntax = ParserError::ParserError("Expected: an SQL statement, found: SELEC".into());
/// assert_eq!(CliError::from(DataFusionError::from(syntax)).to_string(), "invalid SQL: expected: an SQL statement, found: SELEC");
/// let err = CliError::from(DataFusionError::Execution("Out of memory.".into()));
/// assert_eq!((err.outcome(), err.to_string()), (Outcome::Failed, "the statement failed: out of memory".to_owned()));
/// ```
#[cfg(feature = "sql")]
impl From<datafusion::error::DataFusionError> for CliError {
    fn from(error: datafusion::error::DataFusionError) -> Self {
        use datafusion::error::DataFusionError as E;
        let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(&error);
        while let Some(e) = cause {
            // A row of an `INSERT` that breaks a rule is wrong input when nothing of the statement was written.
            if let Some(insert) = e.downcast_ref::<table_model_datafusion::InsertError>() {
                let outcome = match (insert.bad_row(), insert.written()) {
                    (Some(_), 0) if insert.bulk().is_none() => Outcome::InvalidInput,
                    _ => Outcome::Failed,
                };
                return CliError::new(outcome, insert.to_string());
            }
            if let Some(client) = e.downcast_ref::<ClientError>() {
                return CliError::new(client_outcome(client), client.to_string());
            }
            cause = e.source();
        }
        let outcome = match error.find_root() {
            E::SQL(..) | E::Plan(_) | E::SchemaError(..) | E::NotImplemented(_) | E::Configuration(_) => {
                Outcome::InvalidInput
            }
            _ => Outcome::Failed,
        };
        CliError::new(outcome, datafusion_message(&error))
    }
}

/// The message of a DataFusion error: what kind it is, then DataFusion's words as the tool writes its own.
/// DataFusion's own form (`SQL error: ParserError("Expected: ...")`, `Error during planning: ...`) is capitalized
/// and, for a syntax error, Rust's debug form.
#[cfg(feature = "sql")]
fn datafusion_message(error: &datafusion::error::DataFusionError) -> String {
    use datafusion::error::DataFusionError as E;
    use datafusion::sql::sqlparser::parser::ParserError;
    let root = error.find_root();
    let (what, detail) = match root {
        E::SQL(e, _) => match e.as_ref() {
            ParserError::TokenizerError(m) | ParserError::ParserError(m) => ("invalid SQL", m.clone()),
            ParserError::RecursionLimitExceeded => ("invalid SQL", "nested too deeply".to_owned()),
        },
        E::Plan(m) => ("cannot plan the statement", m.clone()),
        E::SchemaError(e, _) => ("cannot plan the statement", e.to_string()),
        E::NotImplemented(m) => ("not supported", m.clone()),
        E::Configuration(m) => ("invalid configuration", m.clone()),
        E::Execution(m) => ("the statement failed", m.clone()),
        E::ResourcesExhausted(m) => ("out of resources", m.clone()),
        // An error of the provider or the client (named in its own words), or one of Arrow, Parquet or I/O.
        _ => return sentence_case(&root.strip_backtrace()),
    };
    format!("{what}: {}", sentence_case(&detail))
}

/// A message as the tool writes one: its first word lowercase unless it is an acronym (`SQL`, `UTF-8`), without a
/// trailing period.
#[cfg(feature = "sql")]
fn sentence_case(message: &str) -> String {
    let message = message.trim_end().strip_suffix('.').unwrap_or(message.trim_end());
    let mut chars = message.chars();
    match (chars.next(), chars.next()) {
        (Some(first), Some(second)) if first.is_uppercase() && !second.is_uppercase() => {
            first.to_lowercase().chain(message[first.len_utf8()..].chars()).collect()
        }
        _ => message.to_owned(),
    }
}
