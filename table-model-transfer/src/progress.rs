//! What an operation tells its caller while it runs, and how the caller steers it: the [`Progress`] trait (the
//! library is silent unless given one; `tablectl` renders it on a terminal), and the [`Control`] of a run, its
//! progress and its [`CancellationToken`].
//!
//! Layer: base.

use std::path::Path;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// The operations of the engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Operation {
    /// [`export`](crate::export::export).
    Export,
    /// [`import`](crate::import::import).
    Import,
    /// [`copy`](crate::copy::copy).
    Copy,
    /// [`validate_path`](crate::validate::validate_path) and [`validate_table`](crate::validate::validate_table).
    Validate,
    /// [`count`](crate::count::count).
    Count,
    /// [`delete`](crate::delete::delete).
    Delete,
    /// [`backup`](crate::backup::backup).
    Backup,
    /// [`restore`](crate::backup::restore::restore).
    Restore,
}

impl Operation {
    /// Its name, in lowercase: `export`, `import`, ...
    pub const fn name(self) -> &'static str {
        match self {
            Operation::Export => "export",
            Operation::Import => "import",
            Operation::Copy => "copy",
            Operation::Validate => "validate",
            Operation::Count => "count",
            Operation::Delete => "delete",
            Operation::Backup => "backup",
            Operation::Restore => "restore",
        }
    }
}

/// Something an operation reports while it runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Event<'a> {
    /// The operation starts its work (its checks done, its plan made): the bytes it will read when they are
    /// known (an import of files), for an ETA.
    Started {
        /// The operation.
        operation: Operation,
        /// The size of the input, when known.
        total_bytes: Option<u64>,
    },
    /// The operation goes on from the checkpoint an unfinished run left.
    Resuming {
        /// The checkpoint (for an export, the directory's).
        checkpoint: &'a Path,
        /// Entities the unfinished run settled.
        settled: u64,
        /// Key ranges done, of all, when the run reads key ranges.
        ranges: Option<(usize, usize)>,
    },
    /// Entities done so far in this run: read (export, count, validate) or settled in the target (import, copy).
    Entities(u64),
    /// Bytes done so far: of the input read (import, validate) or of the files written (export).
    Bytes(u64),
    /// Something to know that does not stop the run, in a sentence (shards of an export not among the inputs).
    Notice(&'a str),
    /// The operation ended, done or not.
    Finished,
}

/// Receives an operation's [`Event`]s. Called from the operation's task and from its reading thread, so it is
/// `Send + Sync`; it should return quickly (render, count, or fire a [`CancellationToken`]).
///
/// ```
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use table_model_transfer::progress::{Event, Progress};
/// #[derive(Default)]
/// struct Counter(AtomicU64);
/// impl Progress for Counter {
///     fn event(&self, event: Event<'_>) {
///         if let Event::Entities(n) = event {
///             self.0.store(n, Ordering::Relaxed);
///         }
///     }
/// }
/// let counter = Counter::default();
/// counter.event(Event::Entities(12));
/// assert_eq!(counter.0.load(Ordering::Relaxed), 12);
/// ```
pub trait Progress: Send + Sync {
    /// One event.
    fn event(&self, event: Event<'_>);
}

/// A [`Progress`] that ignores every event: the default.
#[derive(Clone, Copy, Debug, Default)]
pub struct Silent;

impl Progress for Silent {
    fn event(&self, _: Event<'_>) {}
}

/// What the caller sees and steers of a run: where its [`Event`]s go, and the token that stops it.
///
/// A fired token stops the operation at its next consistent point (after the page or chunk in hand is written
/// and checkpointed) with [`ErrorKind::Cancelled`](crate::error::ErrorKind::Cancelled); run again with the same
/// options, it resumes there.
///
/// ```
/// use std::sync::Arc;
/// use table_model_transfer::progress::{Control, Silent};
/// use table_model_transfer::CancellationToken;
/// let token = CancellationToken::new();
/// let control = Control::new().with_progress(Arc::new(Silent)).with_cancel(token.clone());
/// assert!(!control.is_cancelled());
/// token.cancel();
/// assert!(control.is_cancelled());
/// ```
#[derive(Clone)]
pub struct Control {
    progress: Arc<dyn Progress>,
    cancel: CancellationToken,
}

impl Default for Control {
    fn default() -> Self {
        Control { progress: Arc::new(Silent), cancel: CancellationToken::new() }
    }
}

impl std::fmt::Debug for Control {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Control").field("cancelled", &self.is_cancelled()).finish_non_exhaustive()
    }
}

impl Control {
    /// Silent, with a token of its own that nobody fires.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sends the events to `progress`.
    #[must_use]
    pub fn with_progress(self, progress: Arc<dyn Progress>) -> Self {
        Control { progress, ..self }
    }

    /// Stops the run when `token` is fired.
    #[must_use]
    pub fn with_cancel(self, token: CancellationToken) -> Self {
        Control { cancel: token, ..self }
    }

    /// Reports an event.
    pub fn report(&self, event: Event<'_>) {
        self.progress.event(event);
    }

    /// The progress receiver, to hand to a thread.
    pub fn progress(&self) -> &Arc<dyn Progress> {
        &self.progress
    }

    /// The cancellation token.
    pub fn token(&self) -> &CancellationToken {
        &self.cancel
    }

    /// Runs `future` unless the run is cancelled first: `None` when it was (the future is dropped).
    pub async fn unless_cancelled<F: std::future::Future>(&self, future: F) -> Option<F::Output> {
        self.cancel.run_until_cancelled(future).await
    }

    /// Whether the run was cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }
}
