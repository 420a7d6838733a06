//! Copy: the entities of a table into another, on the same endpoint or any other (Storage, Cosmos DB, Azurite,
//! either way), streamed.
//!
//! The source is read by key ranges side by side ([`crate::scan`]); the pages are written in chunks by the bulk
//! writer, which checks every entity against the target's rules before its transaction is sent
//! ([`crate::write`]), two chunks at once (`side_by_side`), the next read meanwhile; an entity not written goes to
//! the reject file as in an import. After each chunk is settled, in order, a checkpoint
//! (`TARGET.copy-checkpoint.json`) keeps each range's continuation, so the same copy run again after a stop goes on
//! from there. The checkpoint is bound to the tables, the filter, the mode and
//! `parallel`, not to the endpoints: a renewed SAS, or another route to the same accounts, resumes.
//!
//! Layer: operations.

use crate::checkpoint::{self, Invocation};
use crate::error::{ErrorKind, TransferError};
use crate::format::ToWrite;
use crate::progress::{Control, Event, Operation};
use crate::rate::{limit_for, partition_limit_for, Pace};
use crate::rejects::RejectFile;
use crate::scan::{self, RangeStart};
use crate::side_by_side::{SideBySide, SIDE_BY_SIDE};
use crate::write::{Line, Settled, WriteMode};
use futures::StreamExt as _;
use serde::{Deserialize, Serialize};
use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::sync::Arc;
use table_model::client::TableClient;
use table_model::filter::KeyRange;
use table_model::json::EncodedPage;
use table_model::response::Continuation;
use table_model::{ResponseError, TableName};

/// How to copy. Each option is named as its `tablectl copy` flag, and messages name them that way.
///
/// ```
/// use std::num::NonZeroUsize;
/// use table_model_transfer::copy::CopyOptions;
/// let options = CopyOptions::default().filter("Status eq 'open'").parallel(NonZeroUsize::new(8).unwrap());
/// assert_eq!(options.parallel.get(), 8);
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct CopyOptions {
    /// An OData filter on the source (checked before any request).
    pub filter: Option<String>,
    /// What to do with an entity whose keys exist in the target.
    pub mode: WriteMode,
    /// Key ranges of the source read side by side.
    pub parallel: NonZeroUsize,
    /// At most this many entities per second (`Some(0)`: no limit; `None`: the stricter documented target of
    /// the two sides).
    pub max_rate: Option<u64>,
    /// Where to write the entities that are not copied [default: `TARGET.rejects.jsonl`, written only if any].
    pub reject: Option<PathBuf>,
    /// The checkpoint an interrupted copy resumes from [default: `TARGET.copy-checkpoint.json`; removed when
    /// the copy ends].
    pub checkpoint: Option<PathBuf>,
    /// Start over instead of resuming the unfinished copy of the checkpoint.
    pub force: bool,
    /// Transactions in flight at once [default: `None`, the bulk writer's 8]. More keep more of a partitioned
    /// target busy where each transaction's round trip, not the client, sets the pace; memory stays bounded by
    /// the chunk (`docs/tablectl.md`, "Transactions in flight").
    pub in_flight: Option<NonZeroUsize>,
}

impl Default for CopyOptions {
    fn default() -> Self {
        CopyOptions {
            filter: None,
            mode: WriteMode::Insert,
            parallel: NonZeroUsize::MIN,
            max_rate: None,
            reject: None,
            checkpoint: None,
            force: false,
            in_flight: None,
        }
    }
}

setters!(CopyOptions {
    filter: into String,
    mode: value WriteMode,
    parallel: value NonZeroUsize,
    max_rate: some u64,
    checkpoint: into PathBuf,
    force: value bool,
    in_flight: some NonZeroUsize,
});

/// What a copy did.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct CopySummary {
    /// The source table.
    pub source: TableName,
    /// The target table.
    pub target: TableName,
    /// Entities in the target from the source: written by this run or by the runs it resumed.
    pub copied: u64,
    /// Entities skipped ([`WriteMode::InsertOrSkip`], their keys exist).
    pub skipped: u64,
    /// Entities not copied, each a line of [`rejects`](Self::rejects).
    pub rejected: u64,
    /// The reject file, when there are rejects.
    pub rejects: Option<PathBuf>,
    /// Whether this run resumed an unfinished copy.
    pub resumed: bool,
}

/// The value of [`CopyCheckpoint::format`].
const CHECKPOINT_FORMAT: &str = "tablectl-copy-checkpoint/1";

/// The next chunk: pages until they hold `size` entities, or the source ends (no page: the end).
///
/// # Errors
/// A page's, or [`ErrorKind::Cancelled`].
async fn read_chunk(
    pages: &mut (impl futures::Stream<Item = Result<scan::Page<Vec<ToWrite>>, TransferError>> + Unpin),
    size: usize,
    control: &Control,
) -> Result<Vec<scan::Page<Vec<ToWrite>>>, TransferError> {
    let mut chunk = Vec::new();
    let mut entities = 0;
    while entities < size {
        let Some(page) = control.unless_cancelled(pages.next()).await else {
            return Err(TransferError::new(ErrorKind::Cancelled, "the copy was cancelled"));
        };
        match page {
            Some(page) => {
                let page = page?;
                entities += page.entities.len();
                chunk.push(page);
            }
            None => break,
        }
    }
    Ok(chunk)
}

/// How far a copy got: per range, the continuation after the last entities settled in the target.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct CopyCheckpoint {
    format: String,
    command: Invocation,
    ranges: Vec<RangeState>,
    /// Entities read and settled, which numbers them in the reject file.
    read: u64,
    written: u64,
    skipped: u64,
    already: u64,
    reject_bytes: u64,
    rejects: u64,
}

/// How far one range got.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct RangeState {
    range: KeyRange,
    next: Option<String>,
    done: bool,
}

/// Entities per chunk: the pages read are written together once they hold this many (or the source ends).
const CHUNK: usize = 5_000;

/// What settling a written chunk needs besides what the writer came to: each page's range and the continuation
/// after it, and the entities read once it is settled.
type Written = (Vec<(usize, Option<Continuation>)>, u64);

/// Copies the entities of `from` selected by `options` into `to`, created if it does not exist.
///
/// ```no_run
/// use table_model::client::TableServiceClient;
/// use table_model::TableName;
/// use table_model_transfer::copy::{copy, CopyOptions};
/// use table_model_transfer::progress::Control;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let service = TableServiceClient::from_connection_string("UseDevelopmentStorage=true", None)?;
/// let from = service.table_client(TableName::from_static("Orders"));
/// let to = service.table_client(TableName::from_static("OrdersCopy"));
/// let summary = copy(&from, &to, &CopyOptions::default(), &Control::new()).await?;
/// println!("{} copied", summary.copied);
/// # Ok(())
/// # }
/// ```
///
/// # Errors
/// [`TransferError`]: an invalid filter or an unfinished copy of other options ([`ErrorKind::InvalidInput`],
/// before any request), a failed request, a file that cannot be written, [`ErrorKind::Cancelled`]. Entities
/// that are not written are not errors: the summary counts them.
pub async fn copy(
    from: &TableClient,
    to: &TableClient,
    options: &CopyOptions,
    control: &Control,
) -> Result<CopySummary, TransferError> {
    let result = run(from, to, options, control).await;
    control.report(Event::Finished);
    result
}

async fn run(
    from: &TableClient,
    to: &TableClient,
    options: &CopyOptions,
    control: &Control,
) -> Result<CopySummary, TransferError> {
    let query = scan::filtered(options.filter.as_deref())?;
    let (source, target) = (from.table(), to.table());
    let checkpoint_path =
        options.checkpoint.clone().unwrap_or_else(|| PathBuf::from(format!("{target}.copy-checkpoint.json")));
    let command = Invocation::new("copy")
        .with("source", source.as_str())
        .with("target", target.as_str())
        .with("--filter", &options.filter)
        .with("--mode", format!("{:?}", options.mode))
        .with("--parallel", options.parallel.get());
    if options.force {
        checkpoint::remove(&checkpoint_path)?;
    }
    let saved = checkpoint::read_for::<CopyCheckpoint>(&checkpoint_path, CHECKPOINT_FORMAT, &command)?;
    if let Some(saved) = &saved {
        let ranges = Some((saved.ranges.iter().filter(|r| r.done).count(), saved.ranges.len()));
        control.report(Event::Resuming { checkpoint: &checkpoint_path, settled: saved.read, ranges });
    }
    let resumed = saved.is_some();
    to.create_table_if_not_exists(None).await?;
    let mut first = None;
    let mut state = match saved {
        Some(saved) => saved,
        None => {
            let planned = scan::plan_reading_read(from, &query, options.parallel, None, read_to_write).await?;
            first = planned.first;
            let ranges =
                planned.plan.mine.into_iter().map(|range| RangeState { range, next: None, done: false }).collect();
            let state = CopyCheckpoint {
                format: CHECKPOINT_FORMAT.to_owned(),
                command,
                ranges,
                read: 0,
                written: 0,
                skipped: 0,
                already: 0,
                reject_bytes: 0,
                rejects: 0,
            };
            checkpoint::write_atomic(&checkpoint_path, &state)?;
            state
        }
    };

    let reject_path = options.reject.clone().unwrap_or_else(|| PathBuf::from(format!("{target}.rejects.jsonl")));
    let mut rejects = if resumed {
        RejectFile::resume(reject_path, state.reject_bytes, state.rejects)?
    } else {
        RejectFile::new(reject_path)
    };
    // Either side's documented target bounds the rate: reading Storage counts as much as writing it.
    let limit = match (limit_for(options.max_rate, from.kind()), limit_for(options.max_rate, to.kind())) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    let mut pace = Pace::new(limit);
    let size = limit.map_or(CHUNK, |rate| (rate / 10).clamp(100, CHUNK as u64) as usize);

    let mut starts = Vec::new();
    for (index, range) in state.ranges.iter().enumerate().filter(|(_, r)| !r.done) {
        let from = range.next.as_deref().map(|token| scan::continuation(token, &checkpoint_path)).transpose()?;
        let read = if index == 0 && from.is_none() { first.take() } else { None };
        starts.push(RangeStart { index, range: range.range.clone(), from, read });
    }
    let source_name: Arc<str> = format!("table:{source}").into();
    control.report(Event::Started { operation: Operation::Copy, total_bytes: None });
    let mut chunks: SideBySide<Written> =
        SideBySide::new(to, control, options.mode, partition_limit_for(options.max_rate, to.kind()), options.in_flight);
    // A resumed run's entities within two chunks' size of their range's checkpoint may have been written by the
    // run it resumes (its chunks in flight, of pages of any range): a chunk holding any is settled before it is
    // written.
    let mut read_per_range = vec![0_u64; state.ranges.len()];
    let mut pages = scan::scan_pages_read(from, &query, starts, options.parallel, None, read_to_write);
    let chunks_tally = chunks.tally().clone();
    let mut read = state.read;
    let mut settle = |settled: Settled, (ends, read): Written| -> Result<(), TransferError> {
        // Written and found written are counted as they come; the rest once the chunk is settled.
        chunks_tally.add(settled.skipped + settled.rejects.len() as u64);
        for (_, reject) in &settled.rejects {
            rejects.write(reject)?;
        }
        for (range, next) in ends {
            state.ranges[range].done = next.is_none();
            state.ranges[range].next = next.as_ref().map(ToString::to_string);
        }
        state.read = read;
        state.written += settled.written;
        state.skipped += settled.skipped;
        state.already += settled.already;
        state.reject_bytes = rejects.sync()?;
        state.rejects = rejects.count();
        checkpoint::write_atomic(&checkpoint_path, &state)
    };
    let result: Result<(), TransferError> = async {
        loop {
            // The chunks being written go on while the next is read.
            let chunk = match read_chunk(&mut pages, size, control).await {
                Ok(chunk) if !chunk.is_empty() && !control.is_cancelled() => chunk,
                // The end, a stop or a failure to read: the chunk being written is settled first.
                end => {
                    if let Some((settled, written)) = chunks.finish().await? {
                        settle(settled, written)?;
                    }
                    return match end {
                        Ok(chunk) if chunk.is_empty() => Ok(()),
                        Ok(_) => Err(TransferError::new(ErrorKind::Cancelled, "the copy was cancelled")),
                        Err(e) => Err(e),
                    };
                }
            };
            let mut lines = Vec::with_capacity(chunk.iter().map(|page| page.entities.len()).sum());
            let mut ends = Vec::new();
            let mut in_flight = false;
            for page in chunk {
                in_flight |= resumed && read_per_range[page.range] < (SIDE_BY_SIDE * size) as u64;
                read_per_range[page.range] += page.entities.len() as u64;
                for entity in page.entities {
                    read += 1;
                    lines.push(Line { file: 0, source: source_name.clone(), number: read, entity });
                }
                ends.push((page.range, page.next));
            }
            pace.take(lines.len() as u64).await;
            if let Some((settled, written)) = chunks.push(lines, 0, in_flight, (ends, read)).await?
                && let Err(e) = settle(settled, written)
            {
                chunks.abort().await;
                return Err(e);
            }
        }
    }
    .await;
    drop(pages);
    rejects.finish()?;
    if let Err(e) = result {
        let done = state.written + state.already;
        return Err(
            e.then(format_args!("the copy stopped after {done} entities, run the same command again to resume"))
        );
    }
    checkpoint::remove(&checkpoint_path)?;
    Ok(CopySummary {
        source: source.clone(),
        target: target.clone(),
        copied: state.written + state.already,
        skipped: state.skipped,
        rejected: rejects.count(),
        rejects: (rejects.count() > 0).then(|| rejects.path().to_owned()),
        resumed,
    })
}

/// Reads a page of the source for the target: each entity's keys and the JSON the service wrote for it, copied
/// where [`EncodedPage`] takes the page (checked as the decoder checks it, the encoder's body), else decoded as
/// [`TableClient::query`] decodes it; without the server's `Timestamp` and ETag either way.
fn read_to_write(answer: &http::Response<bytes::Bytes>) -> Result<Vec<ToWrite>, ResponseError> {
    let read = |body: &[u8]| {
        let mut encoded = EncodedPage::new();
        encoded.read(body).then(|| encoded.iter().map(|entity| ToWrite::Encoded(entity.into())).collect())
    };
    scan::read_or_decode(answer, read, |entities| entities.into_iter().map(ToWrite::decoded).collect())
}

/// The entities of a page a copy reads, to be written.
impl scan::PageEntities for Vec<ToWrite> {
    fn count(&self) -> usize {
        self.len()
    }

    fn keys(&self, index: usize) -> Option<(&str, &str)> {
        self.get(index).map(|entity| (entity.partition_key(), entity.row_key()))
    }

    fn truncate(&mut self, len: usize) {
        Vec::truncate(self, len);
    }
}
