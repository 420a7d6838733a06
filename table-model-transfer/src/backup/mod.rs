//! Backups that restore a table as it was: a chain of generations in a directory, the first holding every entity,
//! each later one what changed since the one before, each checked offline against its manifest and linked to
//! the one before by the digest of that generation's manifest.
//!
//! A table's backup directory (`DIR/TABLE/` for `tablectl backup TABLE -o DIR/`) holds `gen-000001/`,
//! `gen-000002/`, ...; a generation's directory holds:
//!
//! | file | what |
//! |---|---|
//! | `entities/` | an export directory ([`crate::export`]): every entity (a full generation), or those whose `Timestamp` is at or after the previous generation's watermark less the margin (an incremental one) |
//! | `keys/` | (incremental) an export of every entity's keys (`$select=PartitionKey,RowKey`) |
//! | `deleted.jsonl` | (after the first) the keys of the previous generation's key set and of this one's entities that this one's key set does not have |
//! | `generation.json` | the [`GenerationManifest`], written last: files, counts, digests, watermark, the link to the previous generation |
//!
//! Every file is in the service's key order, so the keys deleted between two generations and the table as of a
//! generation are merges of sorted files, and memory does not grow with the table (the module `merge`).
//!
//! The watermark is the service's clock (the `Date` of its answer, [`TableClient::service_time`]), taken before the
//! generation's first scan: the service writes each entity's `Timestamp` on its own clock, which the local one
//! may be minutes away from. The margin ([`BackupOptions::margin`]) covers the skew between the service's
//! machines. An entity changed while a generation's scan runs is in that generation or the next (its
//! `Timestamp` is after the watermark); a version that two generations hold comes once in a restore.
//!
//! A generation stopped midway (killed, failed, cancelled) is unfinished: its directory has no
//! `generation.json`, and the same backup run again goes on with it (each scan is an export, which resumes from
//! its checkpoint). [`restore`](restore::restore), [`verify`](verify::verify) and [`prune`](prune::prune) read
//! the finished generations only. An incremental generation's two scans, its entities and its keys, run side by
//! side (the module `sides`).
//!
//! Layer: operations (on [`crate::export`] and [`crate::import`]); [`chain`], `merge`, `sides` and `staging` are
//! its files.

pub mod chain;
pub(crate) mod merge;
pub mod prune;
pub mod restore;
mod sides;
mod staging;
mod tail;
pub mod verify;

pub use chain::{generation_dir_name, Chain, Generation, GenerationKind, GenerationManifest, Link};

use crate::checkpoint::{self, Invocation};
use crate::error::TransferError;
use crate::export::{export, ExportOptions, ExportTarget};
use crate::format::{self, Compression, FileFormat, Sink, WriteOptions};
use crate::manifest::{self, Manifest};
use crate::progress::Control;
use crate::scan::{self, Shard};
use chain::{time_text, GenerationFile, Part};
use merge::{deleted_keys, Sorted};
use serde::{Deserialize, Serialize};
use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::time::Duration;
use table_model::client::TableClient;
use table_model::filter::KeyRange;
use table_model::{Query, TableName};

/// The directory of `table`'s backup under the directory of a backup of several tables: `DIR/TABLE`.
///
/// ```
/// use std::path::Path;
/// use table_model::TableName;
/// use table_model_transfer::backup::table_dir;
/// assert_eq!(table_dir(Path::new("nightly"), &TableName::from_static("Orders")), Path::new("nightly/Orders"));
/// ```
pub fn table_dir(root: &Path, table: &TableName) -> PathBuf {
    root.join(table.as_str())
}

/// How to back up. Each option is named as its `tablectl backup` flag.
///
/// ```
/// use std::time::Duration;
/// use table_model_transfer::backup::BackupOptions;
/// use table_model_transfer::format::{Compression, FileFormat};
/// let options = BackupOptions::default().compress(Compression::Gzip).margin(Duration::from_secs(120));
/// assert_eq!((options.format, options.compress), (FileFormat::Jsonl, Compression::Gzip));
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct BackupOptions {
    /// The format of the entities' files (the keys' files are JSON lines).
    pub format: FileFormat,
    /// The compression of `jsonl` and `csv` files.
    pub compress: Compression,
    /// Key ranges scanned side by side. The first generation plans the ranges; later ones scan the same ranges
    /// (the chain's plan), this many at once.
    pub parallel: NonZeroUsize,
    /// Be worker K of N: back up a fixed share of the chain's key ranges (each worker into a directory of its
    /// own).
    pub shard: Option<Shard>,
    /// At most this many entities per second (`Some(0)`: no limit; `None`: the service's documented target).
    pub max_rate: Option<u64>,
    /// How far before the previous watermark an incremental generation selects entities, for the skew between
    /// the clocks of the service's machines [default: 60 s].
    pub margin: Duration,
    /// Write a full generation even when there is a previous one.
    pub full: bool,
    /// Start an unfinished generation over instead of going on with it.
    pub force: bool,
}

impl Default for BackupOptions {
    fn default() -> Self {
        BackupOptions {
            format: FileFormat::Jsonl,
            compress: Compression::None,
            parallel: NonZeroUsize::MIN,
            shard: None,
            max_rate: None,
            margin: Duration::from_secs(60),
            full: false,
            force: false,
        }
    }
}

setters!(BackupOptions {
    format: value FileFormat,
    compress: value Compression,
    parallel: value NonZeroUsize,
    shard: some Shard,
    max_rate: some u64,
    margin: value Duration,
    full: value bool,
    force: value bool,
});

/// What a backup wrote: one generation.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct BackupSummary {
    /// The table.
    pub table: TableName,
    /// The generation's directory.
    pub dir: PathBuf,
    /// Its number.
    pub generation: u32,
    /// Full or incremental.
    pub kind: GenerationKind,
    /// Entities in it (for an incremental generation, those changed).
    pub entities: u64,
    /// Keys deleted since the previous generation.
    pub deleted: u64,
    /// Keys in the table when it was taken.
    pub keys: u64,
    /// Bytes of its files.
    pub bytes: u64,
    /// Its watermark, on the service's clock (RFC 3339).
    pub watermark: String,
    /// Whether this run went on with an unfinished generation.
    pub resumed: bool,
}

/// The checkpoint of an unfinished generation, in its directory.
const CHECKPOINT: &str = "backup-checkpoint.json";

/// The value of [`BackupCheckpoint::format`].
const CHECKPOINT_FORMAT: &str = "tablectl-backup-checkpoint/1";

/// An unfinished generation: what its scans are, fixed when it started.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct BackupCheckpoint {
    format: String,
    command: Invocation,
    number: u32,
    kind: GenerationKind,
    watermark: String,
    since: Option<String>,
    started: String,
    plan: Vec<KeyRange>,
    shard: Option<Shard>,
}

/// Writes the next generation of `table`'s backup in `dir` (its own directory, see [`table_dir`]): the first is
/// full, each later one incremental ([`BackupOptions::full`] to write a full one); an unfinished generation is
/// gone on with.
///
/// ```no_run
/// use table_model::client::TableServiceClient;
/// use table_model::TableName;
/// use table_model_transfer::backup::{backup, BackupOptions};
/// use table_model_transfer::progress::Control;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let service = TableServiceClient::from_connection_string("UseDevelopmentStorage=true", None)?;
/// let orders = service.table_client(TableName::from_static("Orders"));
/// let summary = backup(&orders, "backups/Orders".as_ref(), &BackupOptions::default(), &Control::new()).await?;
/// println!("generation {}: {} entities changed, {} deleted", summary.generation, summary.entities, summary.deleted);
/// # Ok(())
/// # }
/// ```
///
/// # Errors
/// [`TransferError`]: a broken chain in `dir`, a backup of another table there, an unfinished generation of
/// other options ([`ErrorKind::InvalidInput`](crate::error::ErrorKind::InvalidInput), before any request); a failed
/// request or a file that cannot be written; [`ErrorKind::Cancelled`](crate::error::ErrorKind::Cancelled) (run it
/// again to go on).
pub async fn backup(
    table: &TableClient,
    dir: &Path,
    options: &BackupOptions,
    control: &Control,
) -> Result<BackupSummary, TransferError> {
    let result = run(table, dir, options, control).await;
    control.report(crate::progress::Event::Finished);
    result
}

async fn run(
    table: &TableClient,
    dir: &Path,
    options: &BackupOptions,
    control: &Control,
) -> Result<BackupSummary, TransferError> {
    let chain = Chain::open(dir)?;
    let name = table.table().as_str();
    if let Some(first) = chain.generations.first()
        && first.manifest.table != name
    {
        return Err(TransferError::invalid(format!(
            "`{}` holds a backup of table `{}`, not `{name}`",
            dir.display(),
            first.manifest.table
        )));
    }
    let previous = chain.last();
    if let Some(previous) = previous
        && previous.manifest.shard != options.shard
    {
        let shown = |s: Option<Shard>| s.map_or_else(|| "none".to_owned(), |s| s.to_string());
        return Err(TransferError::invalid(format!(
            "the backup in `{}` was taken with --shard {}, not {}: a chain keeps its share of the key ranges",
            dir.display(),
            shown(previous.manifest.shard),
            shown(options.shard)
        )));
    }
    // The previous generation's keys are read to find the deleted ones: its files are checked first.
    if let Some(previous) = previous {
        Chain::verify_files(std::slice::from_ref(previous))?;
    }
    let command = Invocation::new("backup")
        .with("table", name)
        .with("--format", options.format.extension())
        .with("--compress", options.compress.suffix())
        .with("--shard", options.shard.map(|s| s.to_string()))
        .with("--full", options.full);
    let resumed = match chain.unfinished {
        Some(number) => {
            let gen_dir = dir.join(generation_dir_name(number));
            let path = gen_dir.join(CHECKPOINT);
            let saved = if options.force {
                None
            } else {
                checkpoint::read_for::<BackupCheckpoint>(&path, CHECKPOINT_FORMAT, &command)?
            };
            if saved.is_none() {
                std::fs::remove_dir_all(&gen_dir).map_err(|e| TransferError::io("remove", &gen_dir, e))?;
            }
            saved
        }
        None => None,
    };
    let is_resumed = resumed.is_some();
    let state = match resumed {
        Some(state) => state,
        None => start(table, dir, previous, options, command).await?,
    };
    let gen_dir = dir.join(generation_dir_name(state.number));
    let entities_dir = gen_dir.join(Part::Entities.dir());
    let keys_dir = gen_dir.join(Part::Keys.dir());
    let mut changes = scan_options(&state, options).format(options.format).compress(options.compress);
    changes.filter = state.since.as_ref().map(|since| format!("Timestamp ge datetime'{since}'"));
    let mut keys_only =
        scan_options(&state, options).select(["PartitionKey", "RowKey"]).compress(match options.format {
            FileFormat::Parquet => Compression::None,
            _ => options.compress,
        });
    // Nothing typed is read: the pages without metadata are about half as large.
    keys_only.metadata = Some(table_model::MetadataLevel::None);
    let export_into = |options: ExportOptions, dir: PathBuf| {
        move |control: Control| async move { export(table, ExportTarget::Dir(dir), &options, &control).await.map(drop) }
    };
    let changes_due = !entities_dir.join(manifest::FILE_NAME).exists();
    let keys_due = state.kind == GenerationKind::Incremental && !keys_dir.join(manifest::FILE_NAME).exists();
    match (changes_due, keys_due) {
        // Side by side: the generation takes the time of the keys' scan alone.
        (true, true) => {
            let (changes, keys) =
                (export_into(changes, entities_dir.clone()), export_into(keys_only, keys_dir.clone()));
            sides::side_by_side(control, changes, keys).await?
        }
        (true, false) => export_into(changes, entities_dir.clone())(control.clone()).await?,
        (false, true) => export_into(keys_only, keys_dir.clone())(control.clone()).await?,
        (false, false) => {}
    }
    let mut files = part_files(&entities_dir, Part::Entities)?;
    if state.kind == GenerationKind::Incremental {
        files.extend(part_files(&keys_dir, Part::Keys)?);
    }
    let key_part = if state.kind == GenerationKind::Incremental { Part::Keys } else { Part::Entities };
    let count = |part: Part| files.iter().filter(|f| f.part == part).map(|f| f.entities).sum::<u64>();
    let (entities, keys) = (count(Part::Entities), count(key_part));
    // The service's clock at the scans' end is asked for before the deleted keys are merged, and read after.
    let mut ended = std::pin::pin!(table.service_time(None));
    let early = scan::send_early(&mut ended).await;
    let file = previous.map(|previous| write_deleted(&gen_dir, previous, &files, key_part)).transpose()?;
    let deleted = file.as_ref().map_or(0, |file| file.entities);
    files.extend(file);
    let ended = match early {
        std::task::Poll::Ready(ended) => ended,
        std::task::Poll::Pending => ended.await,
    }?;
    let mut manifest = GenerationManifest {
        format: chain::FORMAT.to_owned(),
        tool: crate::TOOL.to_owned(),
        table: name.to_owned(),
        number: state.number,
        kind: state.kind,
        watermark: state.watermark.clone(),
        since: state.since.clone(),
        started: state.started.clone(),
        ended: time_text(ended),
        previous: previous.map(|p| p.link.clone()),
        replaces: None,
        plan: state.plan.clone(),
        shard: state.shard,
        files,
        entities,
        deleted,
        keys,
        // Every entity of a page is read with Storage's rules (the export's `jsonl` copies a line only so).
        checked: (options.format == FileFormat::Jsonl).then(|| chain::CHECKED_STORAGE.to_owned()),
        digest: String::new(),
    };
    let bytes = manifest.files.iter().map(|f| f.bytes).sum();
    manifest.write(&gen_dir)?;
    checkpoint::remove(&gen_dir.join(CHECKPOINT))?;
    Ok(BackupSummary {
        table: table.table().clone(),
        dir: gen_dir,
        generation: state.number,
        kind: state.kind,
        entities,
        deleted,
        keys,
        bytes,
        watermark: state.watermark,
        resumed: is_resumed,
    })
}

/// Starts a generation: its number, kind, watermark (the service's clock now) and plan, kept in its checkpoint
/// before the first scan.
async fn start(
    table: &TableClient,
    dir: &Path,
    previous: Option<&Generation>,
    options: &BackupOptions,
    command: Invocation,
) -> Result<BackupCheckpoint, TransferError> {
    let number = previous.map_or(1, |p| p.link.number + 1);
    let kind = match previous {
        Some(_) if !options.full => GenerationKind::Incremental,
        _ => GenerationKind::Full,
    };
    let watermark = table.service_time(None).await?;
    let since = match (kind, previous) {
        (GenerationKind::Incremental, Some(previous)) => {
            let margin = chrono::Duration::from_std(options.margin)
                .map_err(|_| TransferError::invalid("--margin is too long"))?;
            Some(time_text(previous.manifest.watermark()? - margin))
        }
        _ => None,
    };
    let plan = match previous {
        Some(previous) => previous.manifest.plan.clone(),
        None => scan::plan(table, &Query::new(), options.parallel, options.shard.unwrap_or(Shard::ALL)).await?.all,
    };
    let state = BackupCheckpoint {
        format: CHECKPOINT_FORMAT.to_owned(),
        command,
        number,
        kind,
        watermark: time_text(watermark),
        since,
        started: time_text(chrono::Utc::now()),
        plan,
        shard: options.shard,
    };
    let gen_dir = dir.join(generation_dir_name(number));
    std::fs::create_dir_all(&gen_dir).map_err(|e| TransferError::io("create", &gen_dir, e))?;
    checkpoint::write_atomic(&gen_dir.join(CHECKPOINT), &state)?;
    Ok(state)
}

/// The export options of a generation's scans: the chain's plan and shard, the rate.
fn scan_options(state: &BackupCheckpoint, options: &BackupOptions) -> ExportOptions {
    let mut scan = ExportOptions::default().parallel(options.parallel);
    scan.plan = Some(state.plan.clone());
    scan.shard = state.shard;
    scan.max_rate = options.max_rate;
    scan
}

/// The files of a finished export in a generation, as its manifest lists them.
fn part_files(export_dir: &Path, part: Part) -> Result<Vec<GenerationFile>, TransferError> {
    let manifest = Manifest::read(export_dir)?;
    Ok(manifest
        .files
        .into_iter()
        .map(|f| GenerationFile {
            part,
            path: format!("{}/{}", part.dir(), f.path),
            entities: f.entities,
            bytes: f.bytes,
            sha256: f.sha256,
        })
        .collect())
}

/// The deleted keys of a generation ([`merge::deleted_keys`]): the previous generation's key set and this one's
/// entities merged against this one's key set (the files of `key_part`), into `deleted.jsonl` (written beside
/// it, then renamed).
fn write_deleted(
    dir: &Path,
    previous: &Generation,
    files: &[GenerationFile],
    key_part: Part,
) -> Result<GenerationFile, TransferError> {
    const NAME: &str = "deleted.jsonl";
    let path = dir.join(NAME);
    let partial = dir.join(format!(".{NAME}.partial"));
    let of = |part: Part| files.iter().filter(|f| f.part == part).map(|f| dir.join(&f.path)).collect();
    let before = Sorted::open_keys(previous.paths(previous.manifest.key_part()))?;
    let (changed, now) = (Sorted::open_keys(of(Part::Entities))?, Sorted::open_keys(of(key_part))?);
    let options = WriteOptions { format: FileFormat::Jsonl, compression: Compression::None, schema: None };
    let mut writer = format::create_writer(Sink::create(&partial, true)?, &options)?;
    deleted_keys(before, changed, now, |keys| writer.write(&keys))?;
    let written = writer.finish()?;
    std::fs::rename(&partial, &path).map_err(|e| TransferError::io("write", &path, e))?;
    Ok(GenerationFile {
        part: Part::Deleted,
        path: NAME.to_owned(),
        entities: written.entities,
        bytes: written.bytes,
        sha256: written.sha256,
    })
}
