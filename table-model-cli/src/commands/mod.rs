//! The commands, one module each: each reads its arguments ([`crate::cli`]), runs its operation (the transfer
//! engine's, [`table_model_transfer`], or the client's), and renders the result on stdout and stderr. No command
//! uses another.
//!
//! Layer: commands.

pub mod backup;
pub mod completions;
pub mod copy;
pub mod count;
pub mod delete;
pub mod export;
pub mod import;
pub mod query;
pub mod restore;
pub mod schema;
#[cfg(feature = "sql")]
pub mod sql;
pub mod tables;
pub mod validate;

use crate::output::Style;
use crate::progress::Rendered;
use std::sync::Arc;
use table_model::client::TableServiceClient;
use table_model_transfer::progress::{Control, Operation};
use table_model_transfer::CancellationToken;

/// What every command gets: the client of the endpoint, the output format, and how its operation is steered.
#[derive(Debug)]
pub struct Context {
    /// The service.
    pub service: TableServiceClient,
    /// How results are written on stdout.
    pub format: Style,
    /// Whether `--json` was given: `export` and `import` then write their summary on stdout as JSON (else only
    /// on stderr, as text).
    pub json: bool,
    /// Fired by Ctrl-C: the operation stops at its next checkpoint.
    pub cancel: CancellationToken,
    /// For the resume tests only: abort after this many entities ([`crate::progress::ABORT_AFTER_VAR`]).
    pub abort_after: Option<u64>,
}

impl Context {
    /// The control of an engine operation: its progress rendered on stderr, stopped by Ctrl-C.
    pub fn control(&self, operation: Operation) -> Control {
        control(operation, &self.cancel, self.abort_after)
    }
}

/// The control of an engine operation: its progress rendered on stderr ([`Rendered`]), stopped by `cancel`.
pub fn control(operation: Operation, cancel: &CancellationToken, abort_after: Option<u64>) -> Control {
    Control::new().with_progress(Arc::new(Rendered::new(operation, abort_after))).with_cancel(cancel.clone())
}
