//! Import: the records of files in any format ([`crate::format`]) into a table, streamed through the client's
//! bulk writer (transactions per PartitionKey, bounded memory).
//!
//! Before anything is sent, the inputs are checked ([`crate::inputs`]): an export directory's files against its
//! [`Manifest`](crate::manifest::Manifest) (so is a file named by a `manifest.json` beside it), and the format of
//! each file, told by its name or its content; an input of no format the engine reads is refused. Each record
//! is then read with Storage's rules; a record that does not read is rejected, and the bulk writer checks each
//! entity against the target service's rules (`docs/rules.md` §13.1) before its transaction is sent, reporting
//! one that breaks them as not sent without failing its neighbours. Every entity not written goes to the reject
//! file, one JSON object per line with its source file, line number, keys, property and rule, and its line as
//! `text`. An import whose every record is rejected as unreadable, with nothing written, is invalid input, not
//! a partial import.
//!
//! Two chunks of records are written at once (`side_by_side`: the transactions in flight shared between them,
//! the next chunk's transactions filling the places of the last ones of the chunk before, each partition's writes
//! in the input's order). After each chunk is settled, in input order, a checkpoint says how
//! far the import got; run again after a stop, the same import goes on from there, settling the chunks that were
//! in flight with a few range reads ([`crate::write`]).
//!
//! Layer: operations.

use crate::check::judged_for;
use crate::checkpoint::{self, Invocation};
use crate::error::{ErrorKind, TransferError};
use crate::format::{self, Compression, EntityReader, FileFormat};
use crate::inputs::inputs;
use crate::progress::{Control, Event, Operation};
use crate::rate::{limit_for, partition_limit_for, Pace};
use crate::rejects::{Reject, RejectFile};
use crate::side_by_side::{SideBySide, SIDE_BY_SIDE};
use crate::write::{Line, Settled, WriteMode};
use serde::{Deserialize, Serialize};
use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use table_model::client::TableClient;
use table_model::{RuleSet, TableName};

/// How to import. Each option is named as its `tablectl import` flag, and messages name them that way.
///
/// ```
/// use table_model_transfer::import::ImportOptions;
/// use table_model_transfer::write::WriteMode;
/// let options = ImportOptions::default().mode(WriteMode::Merge).checkpoint("orders.checkpoint.json");
/// assert_eq!(options.mode, WriteMode::Merge);
/// ```
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct ImportOptions {
    /// What to do with an entity whose keys exist in the table.
    pub mode: WriteMode,
    /// Where to write the entities that are not imported [default: `TABLE.rejects.jsonl`, written only if any].
    pub reject: Option<PathBuf>,
    /// The inputs' format and compression; when `None`, each file's name tells, else its content.
    pub format: Option<(FileFormat, Compression)>,
    /// At most this many entities per second (`Some(0)`: no limit; `None`: the service's documented target).
    pub max_rate: Option<u64>,
    /// The checkpoint an interrupted import resumes from [default: `TABLE.import-checkpoint.json`; removed when
    /// the import ends].
    pub checkpoint: Option<PathBuf>,
    /// Start over instead of resuming the unfinished import of the checkpoint.
    pub force: bool,
    /// Transactions in flight at once [default: `None`, the bulk writer's 8]. More keep more of a partitioned
    /// target busy where each transaction's round trip, not the client, sets the pace; memory stays bounded by
    /// the chunk (`docs/tablectl.md`, "Transactions in flight").
    pub in_flight: Option<NonZeroUsize>,
}

setters!(ImportOptions {
    mode: value WriteMode,
    reject: into PathBuf,
    max_rate: some u64,
    checkpoint: into PathBuf,
    force: value bool,
    in_flight: some NonZeroUsize,
});

impl ImportOptions {
    /// Sets [`format`](Self::format).
    #[must_use]
    pub fn format(mut self, format: FileFormat, compression: Compression) -> Self {
        self.format = Some((format, compression));
        self
    }
}

/// What an import did.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ImportSummary {
    /// The table.
    pub table: TableName,
    /// Entities in the table from the inputs: written by this run or by the runs it resumed.
    pub imported: u64,
    /// Entities skipped ([`WriteMode::InsertOrSkip`], their keys exist).
    pub skipped: u64,
    /// Records not imported, each a line of [`rejects`](Self::rejects).
    pub rejected: u64,
    /// The reject file, when there are rejects.
    pub rejects: Option<PathBuf>,
    /// Whether this run resumed an unfinished import.
    pub resumed: bool,
}

/// One record of the inputs, in order: an entity, or a line that is not one.
enum Item {
    Entity(Line),
    Reject { file: usize, reject: Reject },
}

impl Item {
    /// The record's place: its file's index and its line.
    fn position(&self) -> (usize, u64) {
        match self {
            Item::Entity(line) => (line.file, line.number),
            Item::Reject { file, reject } => (*file, reject.line),
        }
    }
}

/// Reads the inputs record by record (each file through [`format::open_reader`]), skipping those at or before
/// a checkpoint's position. Stops at the first read error, which it keeps.
struct Reader {
    files: std::iter::Enumerate<std::vec::IntoIter<PathBuf>>,
    format: Option<(FileFormat, Compression)>,
    open_reader: OpenReader,
    open: Option<(usize, Box<dyn EntityReader>)>,
    /// Records at or before this place were settled by the run resumed.
    after: Option<(usize, u64)>,
    /// Bytes of the files finished.
    done_bytes: u64,
    error: Option<TransferError>,
    control: Control,
    /// The target's rules, which a rejection of a record cites ([`judged_for`]).
    rules: RuleSet,
}

/// Records read ahead of the writer: a chunk's worth, so that the next chunk is read while one is written.
const READ_AHEAD: usize = CHUNK;

/// Records of a file handed to the writer at once. One at a time, each hand-off woke the other side (two
/// futex calls a record); stdin's records go one by one, so that a slow producer's record waits for no other.
const BATCH: usize = 256;

impl Reader {
    /// Reads on a thread of its own (a blocking read, of stdin above all, never holds up the transactions in
    /// flight), sending the records in batches of up to [`BATCH`] into a channel of [`READ_AHEAD`] records;
    /// the thread gives back the error that stopped it, if any.
    fn spawn(self, stdin: bool) -> (Records, std::thread::JoinHandle<Option<TransferError>>) {
        let batch = if stdin { 1 } else { BATCH };
        let (sender, receiver) = tokio::sync::mpsc::channel(READ_AHEAD.div_ceil(batch));
        let mut reader = self;
        let thread = std::thread::spawn(move || {
            let mut items = Vec::with_capacity(batch);
            while let Some(item) = reader.next_item() {
                if reader.after.is_some_and(|after| item.position() <= after) {
                    continue;
                }
                items.push(item);
                // A full batch goes, and the next starts with room for a batch (not empty, grown by doubling).
                if items.len() == batch
                    && sender.blocking_send(std::mem::replace(&mut items, Vec::with_capacity(batch))).is_err()
                {
                    return reader.error;
                }
            }
            if !items.is_empty() {
                let _ = sender.blocking_send(items);
            }
            reader.error
        });
        (Records { receiver, batch: Vec::new().into_iter() }, thread)
    }

    fn next_item(&mut self) -> Option<Item> {
        while self.error.is_none() {
            let Some((index, open)) = &mut self.open else {
                let (index, path) = self.files.next()?;
                if self.after.is_some_and(|(file, _)| index < file) {
                    continue; // settled by the run resumed
                }
                match (self.open_reader)(&path, self.format) {
                    Ok(reader) => self.open = Some((index, reader)),
                    Err(e) => self.error = Some(e),
                }
                continue;
            };
            let record = match open.next_to_write() {
                Ok(Some(record)) => record,
                Ok(None) => {
                    self.done_bytes += open.bytes_read();
                    self.open = None;
                    continue;
                }
                Err(e) => {
                    self.error = Some(e);
                    return None;
                }
            };
            self.control.report(Event::Bytes(self.done_bytes + open.bytes_read()));
            return Some(match record.entity {
                // Without the server's `Timestamp` and ETag: the service sets both on write.
                Ok(entity) => Item::Entity(Line {
                    file: *index,
                    source: record.position.source,
                    number: record.position.line,
                    entity,
                }),
                Err(rejected) => {
                    let rejected = judged_for(self.rules, rejected);
                    Item::Reject { file: *index, reject: Reject::of(&record.position, rejected) }
                }
            });
        }
        None
    }
}

/// Records per chunk: each chunk is written, its entities settled, then the checkpoint moves past it.
const CHUNK: usize = 10_000;

/// A chunk is sent once it is full, or this long after its first record came (a slow stdin).
const CHUNK_WAIT: Duration = Duration::from_millis(500);

/// The value of [`ImportCheckpoint::format`].
const CHECKPOINT_FORMAT: &str = "tablectl-import-checkpoint/1";

/// How far an import got: every record up to `position` is settled.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct ImportCheckpoint {
    format: String,
    command: Invocation,
    /// The last record settled: its input's index and its line.
    position: Option<(usize, u64)>,
    written: u64,
    skipped: u64,
    already: u64,
    /// The reject file's length and rejects at the checkpoint.
    reject_bytes: u64,
    rejects: u64,
}

/// The records the reading thread sent, in order.
struct Records {
    receiver: tokio::sync::mpsc::Receiver<Vec<Item>>,
    /// What is left of the last batch received.
    batch: std::vec::IntoIter<Item>,
}

impl Records {
    /// Takes the next chunk of records: at least one (waiting for it), then what comes within [`CHUNK_WAIT`],
    /// at most `size`. Empty at the end of the input.
    async fn next_chunk(&mut self, size: usize) -> Vec<Item> {
        // Room for the whole chunk at once: grown by doubling from a batch, it was copied at each step.
        let mut chunk: Vec<Item> = Vec::with_capacity(size);
        chunk.extend(self.batch.by_ref().take(size));
        if chunk.is_empty() {
            let Some(batch) = self.receiver.recv().await else { return chunk };
            self.batch = batch.into_iter();
            chunk.extend(self.batch.by_ref().take(size));
        }
        let deadline = tokio::time::Instant::now() + CHUNK_WAIT;
        while chunk.len() < size {
            match tokio::time::timeout_at(deadline, self.receiver.recv()).await {
                Ok(Some(batch)) => {
                    self.batch = batch.into_iter();
                    chunk.extend(self.batch.by_ref().take(size - chunk.len()));
                }
                Ok(None) | Err(_) => break,
            }
        }
        // The record after the chunk, when it comes within the wait: where the chunk may end.
        if self.batch.as_slice().is_empty()
            && let Ok(Some(batch)) = tokio::time::timeout_at(deadline, self.receiver.recv()).await
        {
            self.batch = batch.into_iter();
        }
        self.end_at_a_partition(&mut chunk);
        chunk
    }

    /// Where the record after `chunk` is known (read within the wait) and continues the partition of the chunk's
    /// last entity, which began within the chunk, hands that partition's records back to the next chunk: an input
    /// in key order (an export's file) then has no partition in two chunks, and none of the next chunk's entities
    /// waits for the chunk before it to end ([`SIDE_BY_SIDE`]).
    fn end_at_a_partition(&mut self, chunk: &mut Vec<Item>) {
        let partition_of = |item: &Item| match item {
            Item::Entity(line) => Some(line.entity.partition_key().to_owned()),
            Item::Reject { .. } => None,
        };
        let (Some(next), Some(last)) =
            (self.batch.as_slice().first().and_then(partition_of), chunk.iter().rev().find_map(partition_of))
        else {
            return;
        };
        if next != last {
            return;
        }
        // The records of the last partition at the chunk's end (a record that does not read goes with them).
        let start = chunk
            .iter()
            .rposition(|item| matches!(item, Item::Entity(line) if line.entity.partition_key() != last))
            .map_or(0, |i| i + 1);
        if start == 0 {
            return; // the chunk is one partition's
        }
        let handed_back = chunk.split_off(start);
        let rest: Vec<Item> = handed_back.into_iter().chain(self.batch.by_ref()).collect();
        self.batch = rest.into_iter();
    }
}

/// Imports the records of `input` (files, export directories, or `-` for stdin) into `table`, created if it
/// does not exist.
///
/// ```no_run
/// use table_model::client::TableServiceClient;
/// use table_model::{RuleSet, TableName};
/// use table_model_transfer::import::{import, ImportOptions};
/// use table_model_transfer::progress::Control;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let service = TableServiceClient::from_connection_string("UseDevelopmentStorage=true", None)?;
/// let orders = service.table_client(TableName::from_static("Orders"));
/// let summary = import(&orders, &["backup/orders".into()], &ImportOptions::default(), &Control::new()).await?;
/// println!("{} imported, {} rejected", summary.imported, summary.rejected);
/// # Ok(())
/// # }
/// ```
///
/// # Errors
/// [`TransferError`]: an input that does not match its manifest or of no format the engine reads, or an
/// unfinished import of other options ([`ErrorKind::InvalidInput`], before any request); every record rejected
/// as unreadable ([`ErrorKind::InvalidInput`]); a failed request or a file that cannot be read or written;
/// [`ErrorKind::Cancelled`]. Entities that are not written are not errors: the summary counts them.
pub async fn import(
    table: &TableClient,
    input: &[PathBuf],
    options: &ImportOptions,
    control: &Control,
) -> Result<ImportSummary, TransferError> {
    let result = import_through(table, input, options, None, control).await;
    control.report(Event::Finished);
    result
}

/// Opens an input's records: [`format::open_reader`] for [`import`]; a restore reads the file its merge is still
/// writing through a reader that waits at its end for the rest (`backup::restore`).
pub(crate) type OpenReader =
    Arc<dyn Fn(&Path, Option<(FileFormat, Compression)>) -> Result<Box<dyn EntityReader>, TransferError> + Send + Sync>;

/// [`import`] without its [`Event::Finished`] (an operation that imports as one of its steps reports its own),
/// each input opened by `open_reader` where given: files still being written, whose sizes are not known (the
/// progress counts entities rather than bytes).
pub(crate) async fn import_through(
    table: &TableClient,
    input: &[PathBuf],
    options: &ImportOptions,
    open_reader: Option<OpenReader>,
    control: &Control,
) -> Result<ImportSummary, TransferError> {
    let mut inputs = inputs(input)?;
    if open_reader.is_some() {
        inputs.total_bytes = None;
    }
    let open_reader = open_reader.unwrap_or_else(|| Arc::new(format::open_reader));
    // Each file's format is told (by its name or its content) before anything is sent.
    for file in inputs.files.iter().filter(|f| f.as_os_str() != "-") {
        format::format_of(file, options.format)?;
    }
    for notice in &inputs.notices {
        control.report(Event::Notice(notice));
    }
    let mut run = ImportRun::open(table, &inputs.files, options, control).await?;
    let stdin = inputs.files.iter().any(|f| f.as_os_str() == "-");
    let reader = Reader {
        files: inputs.files.into_iter().enumerate(),
        format: options.format,
        open_reader,
        open: None,
        after: run.state.position,
        done_bytes: 0,
        error: None,
        control: control.clone(),
        rules: table.kind().rules(),
    };
    control.report(Event::Started { operation: Operation::Import, total_bytes: inputs.total_bytes });
    let (mut records, thread) = reader.spawn(stdin);
    // The first chunk is a tenth of the others: the first transactions go once it is read, and the next chunk
    // is read while they are written.
    let mut size = run.chunk_size.div_ceil(10);
    let outcome = loop {
        let chunk = records.next_chunk(std::mem::replace(&mut size, run.chunk_size));
        let Some(chunk) = control.unless_cancelled(chunk).await else {
            // The chunk being written is settled first: the checkpoint then holds all that was written.
            let cancelled = TransferError::new(ErrorKind::Cancelled, "the import was cancelled");
            break run.settle_pending().await.and(Err(cancelled));
        };
        if chunk.is_empty() {
            break run.settle_pending().await;
        }
        if let Err(e) = run.take(chunk).await {
            break Err(e);
        }
    };
    drop(records);
    let read_error = thread.join().map_err(|_| TransferError::failed("the thread reading the input panicked"))?;
    run.finish(outcome, read_error)
}

/// An import under way: its checkpoint (none for stdin, which cannot be read again), its reject file, and what
/// this run has settled.
struct ImportRun<'a> {
    table: &'a TableClient,
    /// Where the checkpoint is kept; `None` for stdin.
    checkpoint: Option<PathBuf>,
    state: ImportCheckpoint,
    rejects: RejectFile,
    resumed: bool,
    pace: Pace,
    /// Records per chunk: [`CHUNK`], or a tenth of a second's worth under a rate.
    chunk_size: usize,
    /// The chunks being written, side by side; what this run has settled, for progress.
    chunks: SideBySide<Unwritten>,
    /// Records read by this run: a resumed run's records within [`SIDE_BY_SIDE`] chunks' size of the checkpoint
    /// may have been written by the run it resumes (its chunks in flight), and are settled before they are
    /// written.
    read: u64,
    /// Whether every record so far was rejected as unreadable, and the first such rule.
    unreadable: (bool, Option<String>),
}

/// What settling a written chunk of records needs besides what the writer came to: its records that did not read,
/// with their input's index, and its last record's place.
type Unwritten = (Vec<(usize, Reject)>, Option<(usize, u64)>);

impl<'a> ImportRun<'a> {
    /// Reads the checkpoint of an unfinished import of the same inputs and options (or starts one), creates the
    /// table if it does not exist, and opens the reject file.
    async fn open(
        table: &'a TableClient,
        files: &[PathBuf],
        options: &'a ImportOptions,
        control: &'a Control,
    ) -> Result<ImportRun<'a>, TransferError> {
        let name = table.table();
        let stdin = files.iter().any(|f| f.as_os_str() == "-");
        let checkpoint = (!stdin).then(|| {
            options.checkpoint.clone().unwrap_or_else(|| PathBuf::from(format!("{name}.import-checkpoint.json")))
        });
        let absolute: Vec<String> =
            files.iter().map(|f| std::path::absolute(f).unwrap_or_else(|_| f.clone()).display().to_string()).collect();
        let command = Invocation::new("import")
            .with("inputs", &absolute)
            .with("table", name.as_str())
            .with("--mode", format!("{:?}", options.mode))
            .with("--format", options.format.map(|(f, _)| f.extension()))
            .with("--compress", options.format.map(|(_, c)| c.suffix()));
        let saved = match &checkpoint {
            Some(path) if options.force => {
                checkpoint::remove(path)?;
                None
            }
            Some(path) => checkpoint::read_for::<ImportCheckpoint>(path, CHECKPOINT_FORMAT, &command)?,
            None => None,
        };
        if let (Some(saved), Some(path)) = (&saved, &checkpoint) {
            let settled = saved.written + saved.skipped + saved.already + saved.rejects;
            control.report(Event::Resuming { checkpoint: path, settled, ranges: None });
        }
        let resumed = saved.is_some();
        let state =
            saved.unwrap_or(ImportCheckpoint { format: CHECKPOINT_FORMAT.to_owned(), command, ..Default::default() });
        table.create_table_if_not_exists(None).await?;
        if let (Some(path), false) = (&checkpoint, resumed) {
            // Kept before anything is sent: a run stopped in its first chunk is resumed as one.
            checkpoint::write_atomic(path, &state)?;
        }
        let reject_path = options.reject.clone().unwrap_or_else(|| PathBuf::from(format!("{name}.rejects.jsonl")));
        let rejects = if resumed {
            RejectFile::resume(reject_path, state.reject_bytes, state.rejects)?
        } else {
            RejectFile::new(reject_path)
        };
        // With a rate, a chunk is a tenth of a second's worth, so that a chunk written at full speed is a short
        // burst.
        let limit = limit_for(options.max_rate, table.kind());
        let chunk_size = limit.map_or(CHUNK, |rate| (rate / 10).clamp(100, CHUNK as u64) as usize);
        Ok(ImportRun {
            table,
            checkpoint,
            state,
            rejects,
            resumed,
            pace: Pace::new(limit),
            chunk_size,
            chunks: SideBySide::new(
                table,
                control,
                options.mode,
                partition_limit_for(options.max_rate, table.kind()),
                options.in_flight,
            ),
            read: 0,
            unreadable: (true, None),
        })
    }

    /// Starts writing a chunk of records beside the chunk being written ([`SideBySide`]), then settles the chunk
    /// before it.
    async fn take(&mut self, chunk: Vec<Item>) -> Result<(), TransferError> {
        let last = chunk.last().map(Item::position);
        let mut lines = Vec::with_capacity(chunk.len());
        let mut read_rejects = Vec::new();
        for item in chunk {
            match item {
                Item::Entity(line) => lines.push(line),
                Item::Reject { file, reject } => read_rejects.push((file, reject)),
            }
        }
        let in_flight = self.resumed && self.read < (SIDE_BY_SIDE * self.chunk_size) as u64;
        self.read += (lines.len() + read_rejects.len()) as u64;
        self.unreadable.0 &= lines.is_empty();
        if self.unreadable.1.is_none() {
            self.unreadable.1 = read_rejects.first().map(|(_, r)| r.rule.clone());
        }
        self.pace.take(lines.len() as u64).await;
        let others = read_rejects.len() as u64;
        if let Some((settled, (read_rejects, last))) =
            self.chunks.push(lines, others, in_flight, (read_rejects, last)).await?
            && let Err(e) = self.settle(settled, read_rejects, last)
        {
            self.chunks.abort().await;
            return Err(e);
        }
        Ok(())
    }

    /// Waits for the chunk being written, if any, and settles it.
    async fn settle_pending(&mut self) -> Result<(), TransferError> {
        match self.chunks.finish().await? {
            Some((settled, (read_rejects, last))) => self.settle(settled, read_rejects, last),
            None => Ok(()),
        }
    }

    /// Settles a written chunk: each of its entities written, skipped, or in the reject file (in input order),
    /// and the checkpoint moved past it.
    fn settle(
        &mut self,
        settled: Settled,
        read_rejects: Vec<(usize, Reject)>,
        last: Option<(usize, u64)>,
    ) -> Result<(), TransferError> {
        // Written and found written are counted as they come; the rest now.
        self.chunks.tally().add(settled.skipped + (read_rejects.len() + settled.rejects.len()) as u64);
        // The rejects of the chunk in input order: the records that do not read, and the entities not written.
        let mut all: Vec<(usize, Reject)> = read_rejects;
        all.extend(settled.rejects);
        all.sort_by_key(|(file, r)| (*file, r.line));
        for (_, reject) in &all {
            self.rejects.write(reject)?;
        }
        let state = &mut self.state;
        state.written += settled.written;
        state.skipped += settled.skipped;
        state.already += settled.already;
        state.position = last;
        state.reject_bytes = self.rejects.sync()?;
        state.rejects = self.rejects.count();
        match &self.checkpoint {
            Some(path) => checkpoint::write_atomic(path, state),
            None => Ok(()),
        }
    }

    /// Ends the run: the error that stopped it (saying how to resume), or the summary once the checkpoint is
    /// removed; an input whose every record was unreadable is invalid input.
    fn finish(
        mut self,
        outcome: Result<(), TransferError>,
        read_error: Option<TransferError>,
    ) -> Result<ImportSummary, TransferError> {
        self.rejects.finish()?;
        let imported = self.state.written + self.state.already;
        if let Err(e) = outcome {
            let resume = match self.checkpoint {
                Some(_) => "run the same command again to resume",
                None => "stdin cannot be read again",
            };
            return Err(e.then(format_args!("the import stopped after {imported} entities, {resume}")));
        }
        if let Some(error) = read_error {
            return Err(error);
        }
        if let Some(path) = &self.checkpoint {
            checkpoint::remove(path)?;
        }
        let rejected = self.rejects.count();
        if let (true, Some(rule)) = (self.unreadable.0 && !self.resumed, self.unreadable.1) {
            return Err(TransferError::invalid(format!(
                "no record of the input could be read as an entity ({rejected} rejected, see `{}`); the first: {rule}",
                self.rejects.path().display()
            )));
        }
        Ok(ImportSummary {
            table: self.table.table().clone(),
            imported,
            skipped: self.state.skipped,
            rejected,
            rejects: (rejected > 0).then(|| self.rejects.path().to_owned()),
            resumed: self.resumed,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::ToWrite;
    use table_model::{Entity, PartitionKey, RowKey};

    fn entity(partition: &str, number: u64) -> Item {
        let keys = (PartitionKey::new(partition).unwrap(), RowKey::new(format!("{number:05}")).unwrap());
        Item::Entity(Line {
            file: 0,
            source: "in.jsonl".into(),
            number,
            entity: ToWrite::Decoded(Entity::new(keys.0, keys.1)),
        })
    }

    fn unreadable(number: u64) -> Item {
        let reject = Reject {
            source: "in.jsonl".into(),
            line: number,
            partition_key: None,
            row_key: None,
            property: None,
            rule: "not JSON".into(),
            text: "{".into(),
        };
        Item::Reject { file: 0, reject }
    }

    /// The records of `partitions` (each letter a record of that partition, `!` one that does not read), sent
    /// in batches of 3 as the reading thread sends them.
    fn records(partitions: &str) -> Records {
        let items: Vec<Item> = partitions
            .chars()
            .enumerate()
            .map(|(i, c)| if c == '!' { unreadable(i as u64 + 1) } else { entity(&c.to_string(), i as u64 + 1) })
            .collect();
        let (sender, receiver) = tokio::sync::mpsc::channel(items.len().max(1));
        let mut items = items.into_iter().peekable();
        while items.peek().is_some() {
            sender.try_send(items.by_ref().take(3).collect()).unwrap();
        }
        Records { receiver, batch: Vec::new().into_iter() }
    }

    /// The chunks of `size` that `records` gives, each as its records' partitions.
    async fn chunks(mut records: Records, size: usize) -> Vec<String> {
        let mut chunks = Vec::new();
        loop {
            let chunk = records.next_chunk(size).await;
            if chunk.is_empty() {
                return chunks;
            }
            let text = chunk.iter().map(|item| match item {
                Item::Entity(line) => line.entity.partition_key().to_owned(),
                Item::Reject { .. } => "!".to_owned(),
            });
            chunks.push(text.collect());
        }
    }

    #[tokio::test]
    async fn a_chunk_ends_before_the_partition_that_the_next_record_goes_on_with() {
        // In key order: each chunk ends where its last partition does, so no partition is in two chunks.
        assert_eq!(chunks(records("aaaabbbbcccc"), 6).await, ["aaaa", "bbbb", "cccc"]);
        // Full at a partition's end: nothing handed back.
        assert_eq!(chunks(records("aaabbbccc"), 3).await, ["aaa", "bbb", "ccc"]);
        // A chunk of one partition is cut where it is full.
        assert_eq!(chunks(records("aaaaaaaaaa"), 4).await, ["aaaa", "aaaa", "aa"]);
        // A record that does not read goes with the partition around it.
        assert_eq!(chunks(records("aab!bbcc"), 5).await, ["aa", "b!bb", "cc"]);
        // Not in key order: partitions are in several chunks (which then go one after the other), and a chunk
        // ends where it is full unless the next record goes on with its last partition.
        assert_eq!(chunks(records("abababab"), 3).await, ["aba", "bab", "ab"]);
        assert_eq!(chunks(records("abbbaab"), 3).await, ["a", "bbb", "aab"]);
    }
}
