//! The transfer engine of `tablectl` as a library: export, import, copy, validate, count, delete, back up and restore in tables
//! of Azure Table Storage, Cosmos DB for Table and Azurite, of any size, from Rust code. It knows nothing of command lines or
//! terminals: each operation takes its options (a struct with defaults and builder methods), a
//! [`Control`](progress::Control) (a [`Progress`](progress::Progress) receiver, silent by default, and a
//! [`CancellationToken`]) and returns a typed summary or a [`TransferError`](error::TransferError) whose
//! [`ErrorKind`](error::ErrorKind) says what to do next. `tablectl` is argument parsing and rendering around it.
//!
//! Export, import and copy are resumable: a checkpoint says how far a run got, and the same operation run again
//! (after a kill, a failure or a cancellation) goes on from there. `docs/tablectl.md` says what each operation
//! writes and reads, and how.
//!
//! The operations run on a Tokio runtime: they pace with its timers and read key ranges in tasks of their own
//! ([`scan::scan_pages_read`]). On a runtime of several threads, pages are read on every core.
//!
//! An import reads its records on a thread of its own, and the runtime frees them once they are written. `tablectl`
//! allocates with mimalloc, which takes frees across threads without the locks of glibc's arenas (4% of the
//! benchmark import's time, `BENCHMARKS.md`); an application that imports much may set the same global allocator.
//!
//! The modules, bottom up (each uses only its own layer and those below):
//!
//! | layer | modules |
//! |---|---|
//! | base | [`error`], [`progress`], [`shard`], [`digest`] |
//! | files | [`format`](mod@format), [`check`], [`rejects`], [`manifest`], [`checkpoint`], [`inputs`] |
//! | service | [`rate`], [`scan`], [`write`](mod@write) |
//! | operations | [`export`](mod@export), [`import`](mod@import), [`copy`](mod@copy), [`validate`], [`count`](mod@count), [`delete`](mod@delete) |
//! | operations on operations | [`backup`] (on export and import) |
//!
//! ```no_run
//! use std::sync::Arc;
//! use table_model::client::TableServiceClient;
//! use table_model::TableName;
//! use table_model_transfer::export::{export, ExportOptions, ExportTarget};
//! use table_model_transfer::progress::{Control, Event, Progress};
//! use table_model_transfer::CancellationToken;
//!
//! struct Log;
//! impl Progress for Log {
//!     fn event(&self, event: Event<'_>) {
//!         if let Event::Entities(n) = event {
//!             eprintln!("{n} entities");
//!         }
//!     }
//! }
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let service = TableServiceClient::from_connection_string("UseDevelopmentStorage=true", None)?;
//! let orders = service.table_client(TableName::from_static("Orders"));
//! let stop = CancellationToken::new(); // fire it from a signal handler to stop at a checkpoint
//! let control = Control::new().with_progress(Arc::new(Log)).with_cancel(stop.clone());
//! let summary = export(&orders, ExportTarget::Dir("backup/".into()), &ExportOptions::default(), &control).await?;
//! println!("{} entities, {} bytes", summary.entities, summary.bytes);
//! # Ok(())
//! # }
//! ```
#![deny(missing_docs, missing_debug_implementations)]

/// Builder methods of an options struct: `field(value)` sets `field` to the value (`value T`), to `Some` of it
/// (`some T`), or to `Some` of anything that converts into it (`into T`: a `&str` for a `String`, a `&Path` for a
/// `PathBuf`).
macro_rules! setters {
    ($options:ty { $($field:ident: $kind:ident $ty:ty),* $(,)? }) => {
        impl $options {
            $( setters!(@one $field $kind $ty); )*
        }
    };
    (@one $field:ident value $ty:ty) => {
        #[doc = concat!("Sets [`", stringify!($field), "`](Self::", stringify!($field), ").")]
        #[must_use]
        pub fn $field(mut self, $field: $ty) -> Self {
            self.$field = $field;
            self
        }
    };
    (@one $field:ident some $ty:ty) => {
        #[doc = concat!("Sets [`", stringify!($field), "`](Self::", stringify!($field), ").")]
        #[must_use]
        pub fn $field(mut self, $field: $ty) -> Self {
            self.$field = Some($field);
            self
        }
    };
    (@one $field:ident into $ty:ty) => {
        #[doc = concat!("Sets [`", stringify!($field), "`](Self::", stringify!($field), ").")]
        #[must_use]
        pub fn $field(mut self, $field: impl Into<$ty>) -> Self {
            self.$field = Some($field.into());
            self
        }
    };
}

pub mod backup;
pub mod check;
pub mod checkpoint;
pub mod copy;
pub mod count;
pub mod delete;
pub mod digest;
pub mod error;
pub mod export;
pub mod format;
pub mod import;
pub mod inputs;
pub mod manifest;
pub mod progress;
pub mod rate;
pub mod rejects;
pub mod scan;
pub mod shard;
mod side_by_side;
pub mod validate;
pub mod write;

/// The token that cancels an operation: tokio-util's, re-exported.
pub use tokio_util::sync::CancellationToken;

/// The writer a manifest names: `tablectl` and the version of its engine, whichever program runs it.
pub const TOOL: &str = concat!("tablectl ", env!("CARGO_PKG_VERSION"));

// The unit tests and the operations' suite against Azurite (`tests/operations/`) in one test binary: a second one
// linked the client stack again (about 75 MB in a debug build) and compiled this crate again for its harness.
// The suite uses the crate by its name, as an integration test does; `build.rs` leaves it out of the published
// package's tests, which do not carry it.
#[cfg(test)]
extern crate self as table_model_transfer;
#[cfg(test)]
#[cfg(workspace_suite)]
#[path = "../tests/operations/main.rs"]
mod operations;
