//! Delete: every entity a filter selects (or every entity of the table, which stays with its access policies),
//! key ranges side by side, each entity deleted under the ETag it was read with, through the client's engine of
//! filtered writes ([`TableClient::delete_matching`], the one SQL's `DELETE` runs on). An entity changed since it
//! was read is left as it is and reported.
//!
//! After each page a checkpoint (`TABLE.delete-checkpoint.json`) keeps each range's continuation, so the same
//! delete run again after a stop goes on from there: what the stopped run deleted is no longer read.
//!
//! Layer: operations.

use crate::checkpoint::{self, Invocation};
use crate::error::{ErrorKind, TransferError};
use crate::progress::{Control, Event, Operation};
use crate::scan::{self, Shard};
use serde::{Deserialize, Serialize};
use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use table_model::client::{BulkOptions, BulkSlots, MatchOptions, PageDone, RangeCursor, TableClient};
use table_model::filter::KeyRange;
use table_model::TableName;

/// What to delete. Each option is named as its `tablectl delete` flag, and messages name them that way.
///
/// ```
/// use table_model_transfer::delete::DeleteOptions;
/// let options = DeleteOptions::matching("Status eq 'cancelled'");
/// assert_eq!(options.filter.as_deref(), Some("Status eq 'cancelled'"));
/// assert!(DeleteOptions::all().filter.is_none());
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct DeleteOptions {
    /// The OData filter of the entities to delete; `None` deletes every entity (`--all`).
    pub filter: Option<String>,
    /// Key ranges read and deleted side by side.
    pub parallel: NonZeroUsize,
    /// The checkpoint an interrupted delete resumes from [default: `TABLE.delete-checkpoint.json`; removed when
    /// the delete ends].
    pub checkpoint: Option<PathBuf>,
    /// Start over instead of resuming the unfinished delete of the checkpoint.
    pub force: bool,
    /// Transactions in flight at once across the key ranges [default: `None`, the bulk writer's 8 per range].
    pub in_flight: Option<NonZeroUsize>,
}

impl DeleteOptions {
    /// The entities `filter` selects.
    pub fn matching(filter: impl Into<String>) -> Self {
        DeleteOptions { filter: Some(filter.into()), ..Self::all() }
    }

    /// Every entity of the table (the table itself stays, with its access policies).
    pub fn all() -> Self {
        DeleteOptions { filter: None, parallel: NonZeroUsize::MIN, checkpoint: None, force: false, in_flight: None }
    }
}

setters!(DeleteOptions {
    parallel: value NonZeroUsize,
    checkpoint: into PathBuf,
    force: value bool,
    in_flight: some NonZeroUsize,
});

/// What a delete did.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct DeleteSummary {
    /// The table.
    pub table: TableName,
    /// Entities deleted by this run (an entity someone else deleted meanwhile counts as deleted).
    pub deleted: u64,
    /// Entities changed since they were read, left as they are: their PartitionKey and RowKey.
    pub changed: Vec<(String, String)>,
    /// Whether this run resumed an unfinished delete.
    pub resumed: bool,
}

/// The value of [`DeleteCheckpoint::format`].
const CHECKPOINT_FORMAT: &str = "tablectl-delete-checkpoint/1";

/// How far a delete got: per range, the continuation after the last page done.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct DeleteCheckpoint {
    format: String,
    command: Invocation,
    ranges: Vec<RangeState>,
    deleted: u64,
}

/// How far one range got.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct RangeState {
    range: KeyRange,
    next: Option<String>,
    done: bool,
}

/// Deletes the entities `options` selects in `table`.
///
/// ```no_run
/// use table_model::client::TableServiceClient;
/// use table_model::TableName;
/// use table_model_transfer::delete::{delete, DeleteOptions};
/// use table_model_transfer::progress::Control;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let service = TableServiceClient::from_connection_string("UseDevelopmentStorage=true", None)?;
/// let orders = service.table_client(TableName::from_static("Orders"));
/// let summary = delete(&orders, &DeleteOptions::matching("Status eq 'cancelled'"), &Control::new()).await?;
/// println!("{} deleted, {} changed meanwhile and kept", summary.deleted, summary.changed.len());
/// # Ok(())
/// # }
/// ```
///
/// # Errors
/// [`TransferError`]: an invalid filter or an unfinished delete of other options ([`ErrorKind::InvalidInput`],
/// before any request), a failed request (what was deleted before it stays deleted; the checkpoint says where to
/// resume), a checkpoint that cannot be written, [`ErrorKind::Cancelled`].
pub async fn delete(
    table: &TableClient,
    options: &DeleteOptions,
    control: &Control,
) -> Result<DeleteSummary, TransferError> {
    let result = run(table, options, control).await;
    control.report(Event::Finished);
    result
}

async fn run(table: &TableClient, options: &DeleteOptions, control: &Control) -> Result<DeleteSummary, TransferError> {
    let query = scan::filtered(options.filter.as_deref())?;
    let name = table.table();
    let path = options.checkpoint.clone().unwrap_or_else(|| PathBuf::from(format!("{name}.delete-checkpoint.json")));
    let command = Invocation::new("delete")
        .with("table", name.as_str())
        .with("--filter", &options.filter)
        .with("--parallel", options.parallel.get());
    if options.force {
        checkpoint::remove(&path)?;
    }
    let saved = checkpoint::read_for::<DeleteCheckpoint>(&path, CHECKPOINT_FORMAT, &command)?;
    let resumed = saved.is_some();
    let state = match saved {
        Some(saved) => {
            let ranges = Some((saved.ranges.iter().filter(|r| r.done).count(), saved.ranges.len()));
            control.report(Event::Resuming { checkpoint: &path, settled: saved.deleted, ranges });
            saved
        }
        None => {
            let plan = scan::plan(table, &query, options.parallel, Shard::ALL).await?;
            let ranges = plan.mine.into_iter().map(|range| RangeState { range, next: None, done: false }).collect();
            let state = DeleteCheckpoint { format: CHECKPOINT_FORMAT.to_owned(), command, ranges, deleted: 0 };
            checkpoint::write_atomic(&path, &state)?;
            state
        }
    };
    // The ranges not done, each from its continuation; `indexes[i]` is the checkpoint's range of cursor `i`.
    let mut cursors = Vec::new();
    let mut indexes = Vec::new();
    for (index, range) in state.ranges.iter().enumerate().filter(|(_, r)| !r.done) {
        let mut cursor = RangeCursor::new(range.range.clone());
        cursor.continuation = range.next.as_deref().map(|token| scan::continuation(token, &path)).transpose()?;
        cursors.push(cursor);
        indexes.push(index);
    }
    let before = state.deleted;
    let shared = Arc::new(Mutex::new((state, None::<TransferError>)));
    let on_page = page_checkpoint(shared.clone(), indexes, path.clone(), control.clone(), before);
    // `in_flight` is the most under way across the ranges: their bulk writes share as many places.
    let bulk = match options.in_flight {
        Some(n) => BulkOptions { concurrency: n.get(), slots: Some(BulkSlots::new(n)), ..Default::default() },
        None => BulkOptions::default(),
    };
    let match_options = MatchOptions { ranges_in_flight: options.parallel.get(), on_page: Some(on_page), bulk };
    control.report(Event::Started { operation: Operation::Delete, total_bytes: None });
    let report = control.unless_cancelled(table.delete_matching(&query, cursors, Some(match_options))).await;
    let (state, write_error) = {
        let mut guard = shared.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        (guard.0.clone(), guard.1.take())
    };
    let deleted = state.deleted - before;
    let resume = format!("the delete stopped after {deleted} entities, run the same command again to resume");
    let Some(report) = report else {
        return Err(TransferError::new(ErrorKind::Cancelled, "the delete was cancelled").then(resume));
    };
    if let Some(error) = write_error {
        return Err(error.then(resume));
    }
    if let Some(stop) = report.stopped.first() {
        return Err(TransferError::failed(stop.error.to_string()).then(resume));
    }
    if let Some(failure) = report.failures.first() {
        let kind = crate::error::client_error_kind(&failure.error);
        return Err(TransferError::new(kind, failure.error.to_string()).then(resume));
    }
    checkpoint::remove(&path)?;
    Ok(DeleteSummary {
        table: name.clone(),
        deleted: report.written,
        changed: report.changed.iter().map(|(p, r)| (p.to_string(), r.to_string())).collect(),
        resumed,
    })
}

/// After each page: the range's continuation into the checkpoint, written atomically, and the entities deleted
/// so far to the progress. A checkpoint that cannot be written is kept for the run's end (the callback cannot
/// stop the engine); the pages after it are done again by a resumed run, which deletes nothing twice.
fn page_checkpoint(
    shared: Arc<Mutex<(DeleteCheckpoint, Option<TransferError>)>>,
    indexes: Vec<usize>,
    path: PathBuf,
    control: Control,
    before: u64,
) -> table_model::client::PageFn {
    Arc::new(move |page: &PageDone| {
        let mut guard = shared.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let (state, error) = &mut *guard;
        let range = &mut state.ranges[indexes[page.range]];
        range.next = page.next.as_ref().map(ToString::to_string);
        range.done = page.next.is_none();
        state.deleted += page.written;
        if error.is_none() {
            *error = checkpoint::write_atomic(&path, state).err();
        }
        control.report(Event::Entities(state.deleted - before));
    })
}
