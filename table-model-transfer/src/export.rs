//! Export: a table's entities in a file format ([`crate::format`]), streamed page by page, key ranges side by
//! side ([`crate::scan`]), into a writer, a file or a directory ([`ExportTarget`]).
//!
//! Into a directory, each key range goes into files of its own (`TABLE.jsonl` when there is one range and no
//! `split_size`, else `TABLE.00001.jsonl`, ...), and `checkpoint.json` says, at most once a second, how far each
//! range got: the continuation after the last entities synced to disk and each file's length then. Run again (after a
//! kill, a failure or a cancellation), the same export goes on from there (files cut back to their checkpointed
//! length); the [`Manifest`] is written last, once every entity is, and the checkpoint removed. A directory
//! without a manifest holds an export that did not finish.
//!
//! Into one file, the entities go into a temporary file beside it (`.NAME.partial`), renamed over the file once
//! every entity is written: an export that fails or is cancelled leaves the file as it was (or none).
//!
//! An export that fails before it wrote any entity leaves nothing behind: no file, no checkpoint, no directory
//! it created, so the corrected command starts clean.
//!
//! Layer: operations.

use crate::checkpoint::{self, Invocation};
use crate::error::{ErrorKind, TransferError};
use crate::format::csv::CsvRows;
use crate::format::parquet::ValuesPage;
use crate::format::{self, parquet, Compression, EntityWriter, FileFormat, Keys, Sink, WriteOptions, WrittenFile};
use crate::manifest::{self, Manifest, ManifestFile, FORMAT};
use crate::progress::{Control, Event, Operation};
use crate::rate::{limit_for, Pace};
use crate::scan::{self, Page, RangeStart, Shard};
use futures::TryStreamExt as _;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use table_model::client::TableClient;
use table_model::filter::KeyRange;
use table_model::json::EncodedPage;
use table_model::{Entity, Query, ResponseError, TableName};

/// Where an export goes.
pub enum ExportTarget<'a> {
    /// A stream the caller owns (stdout), named for messages; no checkpoint, no manifest.
    Writer {
        /// Its name: `stdout`.
        name: &'static str,
        /// The stream.
        out: &'a mut dyn Write,
    },
    /// One file, no manifest.
    File(PathBuf),
    /// A directory: its files, `manifest.json`, and `checkpoint.json` while the export is unfinished.
    Dir(PathBuf),
}

impl std::fmt::Debug for ExportTarget<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExportTarget::Writer { name, .. } => f.debug_tuple("Writer").field(name).finish(),
            ExportTarget::File(path) => f.debug_tuple("File").field(path).finish(),
            ExportTarget::Dir(path) => f.debug_tuple("Dir").field(path).finish(),
        }
    }
}

impl ExportTarget<'_> {
    /// A path as `tablectl export -o` reads it: an existing directory, or a path ending with a separator, is a
    /// directory (created if needed); anything else a file. (`-`, stdout, is the caller's
    /// [`ExportTarget::Writer`].)
    ///
    /// ```
    /// use std::path::Path;
    /// use table_model_transfer::export::ExportTarget;
    /// assert!(matches!(ExportTarget::path(Path::new("backup/")), ExportTarget::Dir(_)));
    /// assert!(matches!(ExportTarget::path(Path::new("people.jsonl")), ExportTarget::File(_)));
    /// ```
    pub fn path(path: &Path) -> ExportTarget<'static> {
        let text = path.as_os_str().to_string_lossy();
        if path.is_dir() || text.ends_with(std::path::MAIN_SEPARATOR) || text.ends_with('/') {
            ExportTarget::Dir(path.to_owned())
        } else {
            ExportTarget::File(path.to_owned())
        }
    }
}

/// How to export. Each option is named as its `tablectl export` flag, and messages name them that way.
///
/// ```
/// use std::num::NonZeroUsize;
/// use table_model_transfer::export::ExportOptions;
/// use table_model_transfer::format::FileFormat;
/// let options = ExportOptions::default().filter("Age ge 18").format(FileFormat::Csv).parallel(NonZeroUsize::new(4).unwrap());
/// assert_eq!(options.filter.as_deref(), Some("Age ge 18"));
/// assert_eq!(options.parallel.get(), 4);
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ExportOptions {
    /// An OData filter, such as `PartitionKey eq 'eu' and Age ge 18` (checked before any request).
    pub filter: Option<String>,
    /// The properties to export (the keys always come); all when empty.
    pub select: Vec<String>,
    /// The file format.
    pub format: FileFormat,
    /// The compression of `jsonl` and `csv`.
    pub compress: Compression,
    /// The columns of `parquet` (as [`parquet::read_schema`] reads a schema file); inferred from the first
    /// entities when `None`.
    pub schema: Option<table_model_arrow::infer::Inference>,
    /// Replace files that exist; start over instead of resuming an unfinished export in the directory.
    pub force: bool,
    /// Key ranges scanned side by side (into a directory: one file per range).
    pub parallel: NonZeroUsize,
    /// Be worker K of N: export a fixed share of the key ranges (into a directory).
    pub shard: Option<Shard>,
    /// Start a new numbered file once a file is past this many bytes, at the end of a page (into a directory).
    pub split_size: Option<u64>,
    /// At most this many entities per second (`Some(0)`: no limit; `None`: the service's documented target,
    /// [`limit_for`]).
    pub max_rate: Option<u64>,
    /// The key ranges to scan, as a plan made before ([`scan::given`]; a backup's chain keeps its first
    /// generation's), instead of planning anew; [`parallel`](Self::parallel) is then how many run at once.
    pub plan: Option<Vec<KeyRange>>,
    /// The pages' metadata level instead of the client's: a backup's keys-only scan asks for none.
    pub(crate) metadata: Option<table_model::MetadataLevel>,
}

impl Default for ExportOptions {
    fn default() -> Self {
        ExportOptions {
            filter: None,
            select: Vec::new(),
            format: FileFormat::Jsonl,
            compress: Compression::None,
            schema: None,
            force: false,
            parallel: NonZeroUsize::MIN,
            shard: None,
            split_size: None,
            max_rate: None,
            plan: None,
            metadata: None,
        }
    }
}

setters!(ExportOptions {
    filter: into String,
    format: value FileFormat,
    compress: value Compression,
    force: value bool,
    parallel: value NonZeroUsize,
    shard: some Shard,
    split_size: some u64,
    max_rate: some u64,
});

impl ExportOptions {
    /// Sets [`select`](Self::select).
    #[must_use]
    pub fn select(mut self, names: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.select = names.into_iter().map(Into::into).collect();
        self
    }

    fn write_options(&self) -> WriteOptions {
        WriteOptions { format: self.format, compression: self.compress, schema: self.schema.clone() }
    }
}

/// What an export wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ExportSummary {
    /// The table.
    pub table: TableName,
    /// Entities exported.
    pub entities: u64,
    /// Bytes written.
    pub bytes: u64,
    /// The file written, or the directory; `None` for a writer.
    pub path: Option<PathBuf>,
    /// The files of a directory, as its manifest lists them (one for a file, none for a writer).
    pub files: Vec<ManifestFile>,
    /// The SHA-256 of the one file written (a file, or a directory of one file).
    pub sha256: Option<String>,
    /// Whether this run resumed an unfinished export.
    pub resumed: bool,
}

/// Exports the entities of `table` selected by `options` into `target`.
///
/// ```no_run
/// use table_model::client::TableServiceClient;
/// use table_model::TableName;
/// use table_model_transfer::export::{export, ExportOptions, ExportTarget};
/// use table_model_transfer::progress::Control;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let service = TableServiceClient::from_connection_string("UseDevelopmentStorage=true", None)?;
/// let orders = service.table_client(TableName::from_static("Orders"));
/// let target = ExportTarget::Dir("backup/orders".into());
/// let summary = export(&orders, target, &ExportOptions::default(), &Control::new()).await?;
/// println!("{} entities in {} files", summary.entities, summary.files.len());
/// # Ok(())
/// # }
/// ```
///
/// # Errors
/// [`TransferError`]: an invalid filter, a file that exists, or an unfinished export of other options in the
/// directory ([`ErrorKind::InvalidInput`], before any request); a failed request; a file that cannot be written;
/// [`ErrorKind::Cancelled`] when `control`'s token was fired (the directory's checkpoint then says how far it
/// got).
pub async fn export(
    table: &TableClient,
    target: ExportTarget<'_>,
    options: &ExportOptions,
    control: &Control,
) -> Result<ExportSummary, TransferError> {
    let query = scan::filtered(options.filter.as_deref())?;
    let query = scan::selecting(query, &["PartitionKey", "RowKey"], &options.select);
    let directory_only = options.shard.is_some() || options.split_size.is_some();
    let result = match target {
        ExportTarget::Dir(dir) => to_directory(table, &query, &dir, options, control).await,
        _ if directory_only => {
            Err(TransferError::invalid("--shard and --split-size export into a directory: give -o DIR/"))
        }
        ExportTarget::File(path) => to_file(table, &query, &path, options, control).await,
        ExportTarget::Writer { name, out } => {
            to_stream(table, &query, Sink::stream(name, out), None, options, control).await
        }
    };
    control.report(Event::Finished);
    result
}

/// The checkpoint file of an export directory.
pub const CHECKPOINT: &str = "checkpoint.json";

/// The value of [`ExportCheckpoint::format`].
const CHECKPOINT_FORMAT: &str = "tablectl-export-checkpoint/1";

/// How far an export into a directory got.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct ExportCheckpoint {
    format: String,
    command: Invocation,
    started: String,
    plan: Vec<KeyRange>,
    shard: Option<Shard>,
    ranges: Vec<RangeState>,
    /// The number of the next file to create.
    next_file: u32,
}

/// How far one range got.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct RangeState {
    range: KeyRange,
    /// The continuation after the entities counted here (finished files and the open file's checkpointed
    /// length); `None` at the range's start.
    next: Option<String>,
    done: bool,
    /// Its finished files, in order.
    files: Vec<ManifestFile>,
    /// The file being written, as of the checkpoint.
    open: Option<OpenFile>,
}

/// A file being written, as of a checkpoint.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct OpenFile {
    path: String,
    /// Its length at the checkpoint, when its format can be continued there (else it is written again from the
    /// range's `next`, which is then its start).
    length: Option<u64>,
    entities: u64,
    first: Option<Keys>,
    last: Option<Keys>,
}

/// A range's file being written in this run: what the checkpoint counted before this run, and the writer.
struct Live {
    writer: Box<dyn EntityWriter>,
    /// Bytes, entities and first keys written before this run (a file resumed after its checkpoint).
    base: OpenFile,
}

/// An export into a directory: the plan (or the checkpoint's), then the scan, each page written into its
/// range's file and checkpointed, then the manifest.
async fn to_directory(
    table: &TableClient,
    query: &Query,
    dir: &Path,
    options: &ExportOptions,
    control: &Control,
) -> Result<ExportSummary, TransferError> {
    let created_dir = !dir.exists();
    std::fs::create_dir_all(dir).map_err(|e| TransferError::io("create", dir, e))?;
    let mut export = DirExport::open(table, query, dir, options, control).await;
    let result = match &mut export {
        Ok(export) => export.run(control).await,
        Err(_) => Ok(()),
    };
    let export = match (export, result) {
        (Ok(export), Ok(())) => export,
        (Ok(export), Err(e)) => {
            if !export.resumed && export.entities == 0 && e.kind() != ErrorKind::Cancelled {
                export.remove_all(created_dir);
            }
            return Err(e);
        }
        (Err(e), _) => {
            if created_dir {
                let _ = std::fs::remove_dir(dir);
            }
            return Err(e);
        }
    };
    export.finish(table.table(), options)
}

/// An export into a directory under way.
struct DirExport<'a> {
    table: &'a TableClient,
    query: &'a Query,
    dir: &'a Path,
    options: &'a ExportOptions,
    checkpoint_path: PathBuf,
    state: ExportCheckpoint,
    /// Each range's file being written in this run.
    live: Vec<Option<Live>>,
    /// Whether the files are numbered (several ranges, or a split size).
    numbered: bool,
    resumed: bool,
    /// Per range, the continuation after the pages written since the last save, if any.
    unsaved: Vec<Option<Option<String>>>,
    /// When the checkpoint was last saved.
    saved: Instant,
    /// The first range's pages, read while planning (`scan::plan_reading_read`).
    first: Option<Vec<Page<Entities>>>,
    /// Entities written by this run.
    entities: u64,
    /// Files this run created, to remove when it fails before writing any entity.
    created: Vec<PathBuf>,
}

impl<'a> DirExport<'a> {
    /// Reads the checkpoint of an unfinished export of the same options, or plans a new one.
    async fn open(
        table: &'a TableClient,
        query: &'a Query,
        dir: &'a Path,
        options: &'a ExportOptions,
        control: &Control,
    ) -> Result<DirExport<'a>, TransferError> {
        let manifest_path = dir.join(manifest::FILE_NAME);
        let checkpoint_path = dir.join(CHECKPOINT);
        if manifest_path.exists() {
            if !options.force {
                return Err(TransferError::invalid(format!(
                    "`{}` already holds an export; give --force to replace it",
                    dir.display()
                )));
            }
            // The old manifest goes first: an export that fails midway leaves no manifest, as documented.
            std::fs::remove_file(&manifest_path).map_err(|e| TransferError::io("remove", &manifest_path, e))?;
        }
        if options.force {
            checkpoint::remove(&checkpoint_path)?;
        }
        let command = Invocation::new("export")
            .with("table", table.table().as_str())
            .with("--filter", &options.filter)
            .with("--select", &options.select)
            .with("--format", options.format.extension())
            .with("--compress", options.compress.suffix())
            .with("--parallel", options.parallel.get())
            .with("--shard", options.shard.map(|s| s.to_string()))
            .with("--split-size", options.split_size);
        let saved = checkpoint::read_for::<ExportCheckpoint>(&checkpoint_path, CHECKPOINT_FORMAT, &command)?;
        let resumed = saved.is_some();
        let mut first = None;
        let state = match saved {
            Some(saved) => {
                let done = saved.ranges.iter().filter(|r| r.done).count();
                let settled = saved.ranges.iter().flat_map(|r| &r.files).map(|f| f.entities).sum::<u64>()
                    + saved.ranges.iter().filter_map(|r| r.open.as_ref()).map(|o| o.entities).sum::<u64>();
                let ranges = Some((done, saved.ranges.len()));
                control.report(Event::Resuming { checkpoint: &checkpoint_path, settled, ranges });
                saved
            }
            None => {
                let shard = options.shard.unwrap_or(Shard::ALL);
                let plan = match &options.plan {
                    Some(all) => scan::given(all.clone(), shard)?,
                    // One worker plans while it reads its first range.
                    None if shard.n == 1 => {
                        let planned = plan_reading(table, query, options).await?;
                        first = planned.first;
                        planned.plan
                    }
                    None => scan::plan(table, query, options.parallel, shard).await?,
                };
                let ranges = plan
                    .mine
                    .into_iter()
                    .map(|range| RangeState { range, next: None, done: false, files: Vec::new(), open: None })
                    .collect();
                let started = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
                ExportCheckpoint {
                    format: CHECKPOINT_FORMAT.to_owned(),
                    command,
                    started,
                    plan: plan.all,
                    shard: options.shard,
                    ranges,
                    next_file: 1,
                }
            }
        };
        let numbered = state.plan.len() > 1 || options.split_size.is_some();
        let mut export = DirExport {
            table,
            query,
            dir,
            options,
            checkpoint_path,
            live: state.ranges.iter().map(|_| None).collect(),
            unsaved: state.ranges.iter().map(|_| None).collect(),
            saved: Instant::now(),
            state,
            numbered,
            resumed,
            first,
            entities: 0,
            created: Vec::new(),
        };
        if !resumed {
            // The plan is kept before the first page: a run stopped early resumes the same ranges.
            export.save()?;
        }
        // Files that a checkpoint left open go on where it says (or are written again).
        let write_options = options.write_options();
        for index in 0..export.state.ranges.len() {
            let range = &export.state.ranges[index];
            if let (false, Some(open)) = (range.done, &range.open) {
                let live = open_file(dir, open.clone(), &write_options)?;
                export.state.ranges[index].open = Some(live.base.clone());
                export.live[index] = Some(live);
            }
        }
        Ok(export)
    }

    /// Scans the ranges not done, writing each page, and checkpointing at most every [`SAVE_EVERY`] (and when
    /// it stops).
    async fn run(&mut self, control: &Control) -> Result<(), TransferError> {
        let mut starts = Vec::new();
        for (index, range) in self.state.ranges.iter().enumerate().filter(|(_, r)| !r.done) {
            let from =
                range.next.as_deref().map(|token| scan::continuation(token, &self.checkpoint_path)).transpose()?;
            let read = if index == 0 && from.is_none() { self.first.take() } else { None };
            starts.push(RangeStart { index, range: range.range.clone(), from, read });
        }
        let (table, query) = (self.table, self.query);
        let mut pace = Pace::new(limit_for(self.options.max_rate, table.kind()));
        control.report(Event::Started { operation: Operation::Export, total_bytes: None });
        let mut pages = pages(table, query, starts, self.options);
        loop {
            let Some(page) = control.unless_cancelled(pages.try_next()).await else {
                self.save()?;
                return Err(cancelled(self.entities, true));
            };
            let page = match page {
                Ok(Some(page)) => page,
                Ok(None) => return self.save(),
                Err(e) => {
                    // What was written before the failure is kept for the next run; the failure is the error.
                    let _ = self.save();
                    return Err(e);
                }
            };
            pace.take(page.entities.len() as u64).await;
            self.write_page(page)?;
            control.report(Event::Entities(self.entities));
            if self.saved.elapsed() >= SAVE_EVERY {
                self.save()?;
            }
        }
    }

    /// Writes a page into its range's file (opening one when needed, ending it at the range's end or past the
    /// split size) and moves the range's checkpoint past it.
    fn write_page(&mut self, page: Page<Entities>) -> Result<(), TransferError> {
        let Page { range: index, entities, next } = page;
        let has_files = !self.state.ranges[index].files.is_empty() || self.live[index].is_some();
        if self.live[index].is_none() && (!entities.is_empty() || (next.is_none() && !has_files)) {
            self.open_next_file(index)?;
        }
        let next_token = next.as_ref().map(ToString::to_string);
        let range = &mut self.state.ranges[index];
        range.done = next.is_none();
        let Some(file) = &mut self.live[index] else {
            range.next = next_token;
            return Ok(());
        };
        entities.write(&mut *file.writer)?;
        self.entities += entities.len() as u64;
        let split =
            self.options.split_size.is_some_and(|size| file.base.length.unwrap_or(0) + file.writer.bytes() >= size);
        if next.is_none() || split {
            let file = self.live[index].take().expect("the range's file is open");
            range.files.push(finish(self.dir, file)?);
            range.open = None;
            range.next = next_token;
            self.unsaved[index] = None;
            return Ok(());
        }
        let open = range.open.as_mut().expect("a live file is in the checkpoint");
        open.entities += entities.len() as u64;
        if open.first.is_none() {
            open.first = entities.owned_keys(0);
        }
        if let Some(last) = entities.len().checked_sub(1).and_then(|i| entities.owned_keys(i)) {
            open.last = Some(last);
        }
        // The file's checkpoint, and the range's `next` with it, moves at the next `save`.
        self.unsaved[index] = Some(next_token);
        Ok(())
    }

    /// Checkpoints the files written since the last save (each synced, and its range's `next` moved past what
    /// it holds), then writes the export's checkpoint: what is saved is always what the files hold.
    fn save(&mut self) -> Result<(), TransferError> {
        for index in 0..self.unsaved.len() {
            let (Some(next), Some(file)) = (self.unsaved[index].take(), self.live[index].as_mut()) else { continue };
            let range = &mut self.state.ranges[index];
            let open = range.open.as_mut().expect("a live file is in the checkpoint");
            match file.writer.checkpoint()? {
                Some(length) => {
                    open.length = Some(file.base.length.unwrap_or(0) + length);
                    range.next = next;
                }
                // The format cannot be continued: a resumed run writes the file again from its start, where the
                // range's `next` stays.
                None => open.length = None,
            }
        }
        self.saved = Instant::now();
        checkpoint::write_atomic(&self.checkpoint_path, &self.state)
    }

    /// Opens the next numbered file for range `index`, its name kept in the checkpoint before the file is made
    /// (so a resumed run finds, or makes, the same file).
    fn open_next_file(&mut self, index: usize) -> Result<(), TransferError> {
        let n = self.state.next_file;
        self.state.next_file += 1;
        let options = self.options;
        let name = options.format.file_name(self.table.table().as_str(), self.numbered.then_some(n), options.compress);
        let open = OpenFile { path: name, length: Some(0), entities: 0, first: None, last: None };
        self.state.ranges[index].open = Some(open.clone());
        self.save()?;
        let path = self.dir.join(&open.path);
        if !options.force && path.exists() {
            return Err(TransferError::invalid(format!(
                "`{}` already exists; give --force to replace it",
                path.display()
            )));
        }
        self.live[index] = Some(open_file(self.dir, open, &options.write_options())?);
        self.created.push(path);
        Ok(())
    }

    /// Removes what this run made (it wrote no entity): its files, the checkpoint, and the directory when the
    /// run created it.
    fn remove_all(self, created_dir: bool) {
        drop(self.live);
        for path in &self.created {
            let _ = std::fs::remove_file(path);
        }
        let _ = checkpoint::remove(&self.checkpoint_path);
        if created_dir {
            let _ = std::fs::remove_dir(self.dir);
        }
    }

    /// Writes the manifest (every range done) and removes the checkpoint.
    fn finish(self, table: &TableName, options: &ExportOptions) -> Result<ExportSummary, TransferError> {
        let state = self.state;
        let files: Vec<ManifestFile> = state.ranges.iter().flat_map(|r| r.files.iter().cloned()).collect();
        let several = state.plan.len() > 1 || state.shard.is_some();
        let manifest = Manifest {
            format: FORMAT.to_owned(),
            tool: crate::TOOL.to_owned(),
            table: table.to_string(),
            filter: options.filter.clone(),
            select: (!options.select.is_empty()).then(|| options.select.clone()),
            started: state.started.clone(),
            plan: several.then(|| state.plan.clone()),
            ranges: several.then(|| state.ranges.iter().map(|r| r.range.clone()).collect()),
            shard: state.shard,
            files,
        };
        manifest.write(self.dir)?;
        checkpoint::remove(&self.checkpoint_path)?;
        let single = manifest.files.len() == 1;
        Ok(ExportSummary {
            table: table.clone(),
            entities: manifest.files.iter().map(|f| f.entities).sum(),
            bytes: manifest.files.iter().map(|f| f.bytes).sum(),
            path: Some(self.dir.to_owned()),
            sha256: single.then(|| manifest.files[0].sha256.clone()),
            files: manifest.files,
            resumed: self.resumed,
        })
    }
}

/// The pages of the ranges, each read for the export's writer: in JSON lines, the JSON of the page's entities
/// when [`EncodedPage`] takes the page (the lines are the same byte for byte, and the page is neither decoded nor
/// encoded again); in CSV, the fields of the entities' rows, decoded straight from the JSON ([`CsvRows`], no
/// `Entity` built); in Parquet, their keys and typed values ([`ValuesPage`], no `Entity` built either).
fn pages<'a>(
    table: &'a TableClient,
    query: &'a Query,
    starts: Vec<RangeStart<Entities>>,
    options: &ExportOptions,
) -> impl futures::Stream<Item = Result<Page<Entities>, TransferError>> + 'a {
    scan::scan_pages_read(table, query, starts, options.parallel, options.metadata, reader(options.format))
}

/// Plans the export's scan while it reads its first range, whose pages are read as the scan's
/// ([`scan::plan_reading_read`]).
async fn plan_reading(
    table: &TableClient,
    query: &Query,
    options: &ExportOptions,
) -> Result<scan::Planned<Entities>, TransferError> {
    scan::plan_reading_read(table, query, options.parallel, options.metadata, reader(options.format)).await
}

/// How the export reads a page for `format`'s writer.
fn reader(format: FileFormat) -> fn(&http::Response<bytes::Bytes>) -> Result<Entities, ResponseError> {
    match format {
        FileFormat::Jsonl => read_encoded,
        FileFormat::Csv => read_rows,
        FileFormat::Parquet => read_values,
    }
}

/// A page's entities, as the export writes them.
#[derive(Debug)]
enum Entities {
    /// Decoded.
    Decoded(Vec<Entity>),
    /// As the wire format's JSON, for a writer of JSON lines.
    Encoded(EncodedPage),
    /// As the fields of their rows, for a writer of CSV.
    Rows(CsvRows),
    /// As their keys and typed values, for a writer of Parquet.
    Values(ValuesPage),
}

impl scan::PageEntities for Entities {
    fn count(&self) -> usize {
        self.len()
    }

    fn keys(&self, index: usize) -> Option<(&str, &str)> {
        match self {
            Entities::Decoded(entities) => scan::PageEntities::keys(entities, index),
            Entities::Encoded(page) => page.get(index).map(|e| (e.partition_key, e.row_key)),
            Entities::Rows(rows) => rows.get(index).map(|r| (r.partition_key(), r.row_key())),
            Entities::Values(page) => page.get(index).map(|e| (e.partition_key, e.row_key)),
        }
    }

    fn truncate(&mut self, len: usize) {
        match self {
            Entities::Decoded(entities) => entities.truncate(len),
            Entities::Encoded(page) => page.truncate(len),
            Entities::Rows(rows) => rows.truncate(len),
            Entities::Values(page) => page.truncate(len),
        }
    }
}

impl Entities {
    fn len(&self) -> usize {
        match self {
            Entities::Decoded(entities) => entities.len(),
            Entities::Encoded(page) => page.len(),
            Entities::Rows(rows) => rows.len(),
            Entities::Values(page) => page.len(),
        }
    }

    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The keys of entity `index`, owned.
    fn owned_keys(&self, index: usize) -> Option<Keys> {
        let (partition_key, row_key) = scan::PageEntities::keys(self, index)?;
        Some(Keys { partition_key: partition_key.to_owned(), row_key: row_key.to_owned() })
    }

    /// Writes every entity, in order.
    fn write(&self, writer: &mut dyn EntityWriter) -> Result<(), TransferError> {
        match self {
            Entities::Decoded(entities) => entities.iter().try_for_each(|entity| writer.write(entity)),
            Entities::Encoded(page) => page.iter().try_for_each(|entity| writer.write_encoded(&entity)),
            Entities::Rows(rows) => rows.iter().try_for_each(|row| writer.write_csv_row(&row)),
            Entities::Values(page) => page.iter().try_for_each(|entity| writer.write_values(&entity)),
        }
    }
}

/// Reads a page for a writer of JSON lines: its entities' JSON when [`EncodedPage`] takes the page.
fn read_encoded(answer: &http::Response<bytes::Bytes>) -> Result<Entities, ResponseError> {
    read_or_decode(answer, |body| {
        let mut encoded = EncodedPage::new();
        encoded.read(body).then_some(Entities::Encoded(encoded))
    })
}

/// Reads a page for a writer of CSV: its entities' rows, decoded straight into their fields ([`CsvRows`]).
fn read_rows(answer: &http::Response<bytes::Bytes>) -> Result<Entities, ResponseError> {
    read_or_decode(answer, |body| {
        let mut rows = CsvRows::new();
        rows.read_page(body).is_ok().then_some(Entities::Rows(rows))
    })
}

/// Reads a page for a writer of Parquet: its entities' keys and typed values ([`ValuesPage`], no `Entity` built).
fn read_values(answer: &http::Response<bytes::Bytes>) -> Result<Entities, ResponseError> {
    read_or_decode(answer, |body| {
        let mut values = ValuesPage::new();
        values.read_page(body).is_ok().then_some(Entities::Values(values))
    })
}

/// Reads a page's body with a format's own reader, `read`; a page it does not take is decoded into entities
/// ([`scan::read_or_decode`]).
fn read_or_decode(
    answer: &http::Response<bytes::Bytes>,
    read: impl FnOnce(&[u8]) -> Option<Entities>,
) -> Result<Entities, ResponseError> {
    scan::read_or_decode(answer, read, Entities::Decoded)
}

/// How often an export into a directory saves its checkpoint, at most (each save syncs the files written since
/// the last one and the checkpoint: two `fsync`s a page were most of the time of an export by 16 ranges under the
/// service's latency). An export stopped between two saves resumes from the last: at most this much is read
/// again. A cancelled or failed export saves before it returns.
const SAVE_EVERY: Duration = Duration::from_secs(1);

/// The error of a cancelled export.
fn cancelled(entities: u64, resumable: bool) -> TransferError {
    let then = if resumable { "run the same command again to resume" } else { "nothing was kept" };
    TransferError::new(ErrorKind::Cancelled, format!("the export was cancelled after {entities} entities; {then}"))
}

/// Opens a range's file where its checkpoint left it: continued after its checkpointed length, or made anew.
fn open_file(dir: &Path, open: OpenFile, options: &WriteOptions) -> Result<Live, TransferError> {
    let path = dir.join(&open.path);
    let (sink, base) = match open.length {
        Some(length) if length > 0 => (Sink::resume(&path, length)?, open),
        _ => (Sink::create(&path, true)?, OpenFile { length: Some(0), entities: 0, first: None, last: None, ..open }),
    };
    Ok(Live { writer: format::create_writer(sink, options)?, base })
}

/// Ends a range's file: its manifest entry, the whole file's (a resumed file is hashed again from disk).
fn finish(dir: &Path, file: Live) -> Result<ManifestFile, TransferError> {
    let Live { writer, base } = file;
    let WrittenFile { entities, bytes, sha256, first, last } = writer.finish()?;
    let resumed = base.length.unwrap_or(0);
    let sha256 = if resumed > 0 { crate::digest::digest(&dir.join(&base.path))?.hex() } else { sha256 };
    Ok(ManifestFile {
        path: base.path,
        entities: base.entities + entities,
        bytes: resumed + bytes,
        sha256,
        first: base.first.or(first),
        last: last.or(base.last),
    })
}

/// An export into one file: into `.NAME.partial` beside it, renamed over it once every entity is written; on
/// failure the partial file is removed and the file is as it was.
async fn to_file(
    table: &TableClient,
    query: &Query,
    path: &Path,
    options: &ExportOptions,
    control: &Control,
) -> Result<ExportSummary, TransferError> {
    if path.exists() && !options.force {
        return Err(TransferError::invalid(format!("`{}` already exists; give --force to replace it", path.display())));
    }
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let partial = path.with_file_name(format!(".{name}.partial"));
    let sink = Sink::create(&partial, true)?;
    let result = to_stream(table, query, sink, Some(path), options, control).await;
    match result {
        Ok(summary) => {
            std::fs::rename(&partial, path).map_err(|e| TransferError::io("write", path, e))?;
            Ok(summary)
        }
        Err(e) => {
            let _ = std::fs::remove_file(&partial);
            Err(e)
        }
    }
}

/// An export into one stream: the pages of every range into one writer, no checkpoint.
async fn to_stream(
    table: &TableClient,
    query: &Query,
    sink: Sink<'_>,
    path: Option<&Path>,
    options: &ExportOptions,
    control: &Control,
) -> Result<ExportSummary, TransferError> {
    let mut writer = format::create_writer(sink, &options.write_options())?;
    let planned = match &options.plan {
        Some(all) => scan::Planned { plan: scan::given(all.clone(), Shard::ALL)?, first: None },
        None => plan_reading(table, query, options).await?,
    };
    let mut pages = pages(table, query, planned.into_starts(), options);
    let mut pace = Pace::new(limit_for(options.max_rate, table.kind()));
    control.report(Event::Started { operation: Operation::Export, total_bytes: None });
    let mut count = 0_u64;
    loop {
        let Some(page) = control.unless_cancelled(pages.try_next()).await else {
            return Err(cancelled(count, false));
        };
        let Some(page) = page? else { break };
        pace.take(page.entities.len() as u64).await;
        page.entities.write(&mut *writer)?;
        count += page.entities.len() as u64;
        control.report(Event::Entities(count));
        control.report(Event::Bytes(writer.bytes()));
    }
    drop(pages);
    let written = writer.finish()?;
    let file = path.map(|path| ManifestFile {
        path: path.display().to_string(),
        entities: written.entities,
        bytes: written.bytes,
        sha256: written.sha256.clone(),
        first: written.first.clone(),
        last: written.last.clone(),
    });
    Ok(ExportSummary {
        table: table.table().clone(),
        entities: count,
        bytes: written.bytes,
        path: path.map(Path::to_owned),
        sha256: path.map(|_| written.sha256),
        files: file.into_iter().collect(),
        resumed: false,
    })
}

/// Reads the columns of a Parquet export from a schema file, as `tablectl schema TABLE --json` prints it: for
/// [`ExportOptions::schema`].
///
/// # Errors
/// As [`parquet::read_schema`]; a schema for a format other than Parquet ([`ErrorKind::InvalidInput`]).
pub fn schema_for(format: FileFormat, path: &Path) -> Result<table_model_arrow::infer::Inference, TransferError> {
    match format {
        FileFormat::Parquet => parquet::read_schema(path),
        _ => Err(TransferError::invalid("--schema is for --format parquet")),
    }
}
