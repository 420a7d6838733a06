//! `tablectl export TABLE -o FILE|DIR|- [--filter F] [--select A,B] [--format F] [--parallel N] [--shard K/N]
//! [--split-size SIZE] [--max-rate N]`: the entities in a file format ([`crate::format`]), streamed page by page,
//! key ranges side by side ([`crate::scan`]).
//!
//! To a directory, each key range goes into files of its own (`TABLE.jsonl` when there is one range and no
//! `--split-size`, else `TABLE.00001.jsonl`, ...), and `checkpoint.json` says after each page how far each range
//! got: the continuation after the last entities synced to disk and each file's length then. Run again, the
//! same command goes on from there (files cut back to their checkpointed length); the [`Manifest`] is written
//! last, once every entity is, and the checkpoint removed. A directory without a manifest holds an export that
//! did not finish.

use super::Context;
use crate::checkpoint::{self, AbortAfter, Command};
use crate::cli::ExportArgs;
use crate::error::{CliError, Outcome};
use crate::format::{self, EntityWriter, Sink, WriteOptions, WrittenFile};
use crate::manifest::{self, Keys, Manifest, ManifestFile, FORMAT};
use crate::progress::Progress;
use crate::rate::{limit_for, Pace};
use crate::scan::{self, Page, RangeStart, Shard};
use futures::TryStreamExt as _;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};
use table_model::filter::KeyRange;

/// Where an export goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Destination {
    /// stdout (`-o -`).
    Stdout,
    /// One file, no manifest.
    File(PathBuf),
    /// A directory: `TABLE.jsonl` and `manifest.json`.
    Dir(PathBuf),
}

impl Destination {
    /// `-` is stdout; an existing directory, or a path ending with a separator, is a directory (created if
    /// needed); anything else a file.
    ///
    /// ```
    /// use std::path::Path;
    /// use table_model_cli::commands::export::Destination;
    /// assert_eq!(Destination::of(Path::new("-")), Destination::Stdout);
    /// assert_eq!(Destination::of(Path::new("backup/")), Destination::Dir("backup/".into()));
    /// assert_eq!(Destination::of(Path::new("people.jsonl")), Destination::File("people.jsonl".into()));
    /// ```
    pub fn of(path: &Path) -> Destination {
        let text = path.as_os_str().to_string_lossy();
        if text == "-" {
            Destination::Stdout
        } else if path.is_dir() || text.ends_with(std::path::MAIN_SEPARATOR) || text.ends_with('/') {
            Destination::Dir(path.to_owned())
        } else {
            Destination::File(path.to_owned())
        }
    }
}

/// The checkpoint file of an export directory.
pub const CHECKPOINT: &str = "checkpoint.json";

/// The value of [`ExportCheckpoint::format`].
const CHECKPOINT_FORMAT: &str = "tablectl-export-checkpoint/1";

/// How far an export into a directory got.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct ExportCheckpoint {
    format: String,
    command: Command,
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

/// Exports the entities.
///
/// # Errors
/// An invalid filter, a file that exists or an unfinished export of another command line (before any
/// request), a failed request, or a write that failed.
pub async fn run(ctx: &Context, args: &ExportArgs, out: &mut impl Write) -> Result<Outcome, CliError> {
    let query = super::filtered(args.filter.as_deref())?;
    let query = super::selecting(query, &["PartitionKey", "RowKey"], &args.select);
    let options = write_options(args)?;
    let table = ctx.service.table_client(args.table.clone());
    let mut pace = Pace::new(limit_for(args.max_rate, table.kind()));
    let destination = Destination::of(&args.output);
    let Destination::Dir(dir) = &destination else {
        if args.shard.is_some() || args.split_size.is_some() {
            return Err(CliError::invalid("--shard and --split-size export into a directory: give -o DIR/"));
        }
        return to_one_file(ctx, args, &options, &query, &destination, &mut pace, out).await;
    };

    std::fs::create_dir_all(dir).map_err(|e| CliError::io("create", dir, e))?;
    let manifest_path = dir.join(manifest::FILE_NAME);
    let checkpoint_path = dir.join(CHECKPOINT);
    if manifest_path.exists() {
        if !args.force {
            return Err(CliError::invalid(format!(
                "`{}` already holds an export; give --force to replace it",
                dir.display()
            )));
        }
        // The old manifest goes first: an export that fails midway leaves no manifest, as documented.
        std::fs::remove_file(&manifest_path).map_err(|e| CliError::io("remove", &manifest_path, e))?;
    }
    if args.force {
        checkpoint::remove(&checkpoint_path)?;
    }
    let command = Command::new("export")
        .with("table", args.table.as_str())
        .with("--filter", &args.filter)
        .with("--select", &args.select)
        .with("--format", args.file_format().0.extension())
        .with("--compress", args.file_format().1.suffix())
        .with("--parallel", args.parallel.get())
        .with("--shard", args.shard.map(|s| s.to_string()))
        .with("--split-size", args.split_size);
    let mut state = match checkpoint::read_for::<ExportCheckpoint>(&checkpoint_path, CHECKPOINT_FORMAT, &command)? {
        Some(saved) => {
            let done = saved.ranges.iter().filter(|r| r.done).count();
            eprintln!(
                "tablectl: resuming the unfinished export in `{}` ({done} of {} key ranges done)",
                dir.display(),
                saved.ranges.len()
            );
            saved
        }
        None => {
            let plan = scan::plan(&table, &query, args.parallel, args.shard.unwrap_or(Shard::ALL)).await?;
            let ranges = plan
                .mine
                .into_iter()
                .map(|range| RangeState { range, next: None, done: false, files: Vec::new(), open: None })
                .collect();
            let started = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
            let state = ExportCheckpoint {
                format: CHECKPOINT_FORMAT.to_owned(),
                command,
                started,
                plan: plan.all,
                shard: args.shard,
                ranges,
                next_file: 1,
            };
            // The plan is kept before the first page: a run stopped early resumes the same ranges.
            checkpoint::write_atomic(&checkpoint_path, &state)?;
            state
        }
    };
    let numbered = state.plan.len() > 1 || args.split_size.is_some();

    let mut starts = Vec::new();
    for (index, range) in state.ranges.iter().enumerate().filter(|(_, r)| !r.done) {
        let from = range.next.as_deref().map(|token| scan::continuation(token, &checkpoint_path)).transpose()?;
        starts.push(RangeStart { index, range: range.range.clone(), from });
    }
    let mut live: Vec<Option<Live>> = state.ranges.iter().map(|_| None).collect();
    // Files that a checkpoint left open go on where it says (or are written again).
    for (index, range) in state.ranges.iter().enumerate() {
        if let (false, Some(open)) = (range.done, &range.open) {
            live[index] = Some(open_file(dir, open.clone(), &options)?);
        }
    }
    for (range, file) in state.ranges.iter_mut().zip(&live) {
        if let Some(file) = file {
            range.open = Some(file.base.clone());
        }
    }

    let progress = Progress::entities("export");
    let mut abort = AbortAfter::from_env();
    let mut count = 0_u64;
    let mut pages = scan::scan_pages(&table, &query, starts, args.parallel);
    while let Some(page) = pages.try_next().await? {
        pace.take(page.entities.len() as u64).await;
        let Page { range: index, entities, next } = page;
        let has_files = !state.ranges[index].files.is_empty() || live[index].is_some();
        if live[index].is_none() && (!entities.is_empty() || (next.is_none() && !has_files)) {
            let n = state.next_file;
            state.next_file += 1;
            let (format, compression) = args.file_format();
            let name = format.file_name(args.table.as_str(), numbered.then_some(n), compression);
            let open = OpenFile { path: name, length: Some(0), entities: 0, first: None, last: None };
            state.ranges[index].open = Some(open.clone());
            // The name is kept before the file is made, so a resumed run finds (or makes) the same file.
            checkpoint::write_atomic(&checkpoint_path, &state)?;
            if !args.force && dir.join(&open.path).exists() {
                return Err(CliError::invalid(format!(
                    "`{}` already exists; give --force to replace it",
                    dir.join(&open.path).display()
                )));
            }
            live[index] = Some(open_file(dir, open, &options)?);
        }
        let range = &mut state.ranges[index];
        if let Some(file) = &mut live[index] {
            for entity in &entities {
                file.writer.write(entity)?;
                abort.count(1);
            }
            count += entities.len() as u64;
            progress.set_entities(count);
            let split = args.split_size.is_some_and(|size| file.base.length.unwrap_or(0) + file.writer.bytes() >= size);
            if next.is_none() || split {
                let file = live[index].take().expect("open");
                range.files.push(finish(dir, file)?);
                range.open = None;
                range.next = next.as_ref().map(ToString::to_string);
            } else {
                let open = range.open.as_mut().expect("a live file is in the checkpoint");
                open.entities += entities.len() as u64;
                if open.first.is_none() {
                    open.first = entities.first().map(keys_of);
                }
                if let Some(last) = entities.last() {
                    open.last = Some(keys_of(last));
                }
                match file.writer.checkpoint()? {
                    Some(length) => {
                        open.length = Some(file.base.length.unwrap_or(0) + length);
                        range.next = next.as_ref().map(ToString::to_string);
                    }
                    // The format cannot be continued: a resumed run writes the file again from its start,
                    // where the range's `next` stays.
                    None => open.length = None,
                }
            }
        } else {
            range.next = next.as_ref().map(ToString::to_string);
        }
        range.done = next.is_none();
        checkpoint::write_atomic(&checkpoint_path, &state)?;
    }
    drop(pages);
    progress.finish();

    let files: Vec<ManifestFile> = state.ranges.iter().flat_map(|r| r.files.iter().cloned()).collect();
    let bytes: u64 = files.iter().map(|f| f.bytes).sum();
    let entities: u64 = files.iter().map(|f| f.entities).sum();
    let several = state.plan.len() > 1 || state.shard.is_some();
    let manifest = Manifest {
        format: FORMAT.to_owned(),
        tool: crate::TOOL.to_owned(),
        table: args.table.to_string(),
        filter: args.filter.clone(),
        select: (!args.select.is_empty()).then(|| args.select.clone()),
        started: state.started.clone(),
        plan: several.then(|| state.plan.clone()),
        ranges: several.then(|| state.ranges.iter().map(|r| r.range.clone()).collect()),
        shard: state.shard,
        files,
    };
    manifest.write(dir)?;
    checkpoint::remove(&checkpoint_path)?;
    let single = (manifest.files.len() == 1).then(|| dir.join(&manifest.files[0].path));
    let target = match &single {
        Some(path) => format!("`{}`", path.display()),
        None => format!("{} files in `{}`", manifest.files.len(), dir.display()),
    };
    eprintln!("tablectl: exported {entities} entities ({bytes} bytes) of {} to {target}", args.table);
    if ctx.json {
        let summary = serde_json::json!({
            "table": args.table.as_str(),
            "entities": entities,
            "bytes": bytes,
            "sha256": single.as_ref().map(|_| manifest.files[0].sha256.clone()),
            "path": single.as_ref().unwrap_or(dir).display().to_string(),
            "files": manifest.files.len(),
        });
        writeln!(out, "{summary}").map_err(CliError::stdout)?;
    }
    Ok(Outcome::Done)
}

/// An entity's keys, for the manifest.
fn keys_of(entity: &table_model::Entity) -> Keys {
    Keys { partition_key: entity.partition_key().to_string(), row_key: entity.row_key().to_string() }
}

/// Opens a range's file where its checkpoint left it: continued after its checkpointed length, or made anew.
fn open_file(dir: &Path, open: OpenFile, options: &WriteOptions) -> Result<Live, CliError> {
    let path = dir.join(&open.path);
    let (sink, base) = match open.length {
        Some(length) if length > 0 => (Sink::resume(&path, length)?, open),
        _ => (Sink::create(&path, true)?, OpenFile { length: Some(0), entities: 0, first: None, last: None, ..open }),
    };
    Ok(Live { writer: format::create_writer(sink, options)?, base })
}

/// Ends a range's file: its manifest entry, the whole file's (a resumed file is hashed again from disk).
fn finish(dir: &Path, file: Live) -> Result<ManifestFile, CliError> {
    let Live { writer, base } = file;
    let WrittenFile { entities, bytes, sha256, first, last } = writer.finish()?;
    let resumed = base.length.unwrap_or(0);
    let sha256 = if resumed > 0 { manifest::digest(&dir.join(&base.path))?.hex() } else { sha256 };
    Ok(ManifestFile {
        path: base.path,
        entities: base.entities + entities,
        bytes: resumed + bytes,
        sha256,
        first: base.first.or(first),
        last: last.or(base.last),
    })
}

/// An export to stdout or one file: the pages of every range into one writer, no checkpoint.
/// The writers' options: the format, its compression, and the columns of `--schema` (read before any request).
fn write_options(args: &ExportArgs) -> Result<WriteOptions, CliError> {
    let (format, compression) = args.file_format();
    let schema = match (&args.schema, format) {
        (Some(path), format::FileFormat::Parquet) => Some(format::parquet::read_schema(path)?),
        (Some(_), _) => return Err(CliError::invalid("--schema is for --format parquet")),
        (None, _) => None,
    };
    Ok(WriteOptions { format, compression, schema })
}

async fn to_one_file(
    ctx: &Context,
    args: &ExportArgs,
    options: &WriteOptions,
    query: &table_model::Query,
    destination: &Destination,
    pace: &mut Pace,
    out: &mut impl Write,
) -> Result<Outcome, CliError> {
    let table = ctx.service.table_client(args.table.clone());
    let data_path = match destination {
        Destination::File(path) => Some(path.clone()),
        _ => None,
    };
    let sink = match &data_path {
        Some(path) => Sink::create(path, args.force)?,
        None => Sink::stream("stdout", &mut *out),
    };
    let mut writer = format::create_writer(sink, options)?;
    let plan = scan::plan(&table, query, args.parallel, Shard::ALL).await?;
    let starts = plan.mine.into_iter().enumerate().map(|(index, range)| RangeStart { index, range, from: None });
    let mut pages = scan::scan_pages(&table, query, starts.collect(), args.parallel);
    let progress = Progress::entities("export");
    let mut abort = AbortAfter::from_env();
    let mut count = 0_u64;
    while let Some(page) = pages.try_next().await? {
        pace.take(page.entities.len() as u64).await;
        for entity in &page.entities {
            writer.write(entity)?;
            abort.count(1);
        }
        count += page.entities.len() as u64;
        progress.set_entities(count);
        progress.set_bytes(writer.bytes());
    }
    drop(pages);
    let written = writer.finish()?;
    progress.finish();
    let (bytes, sha256) = (written.bytes, written.sha256.clone());
    let target = data_path.as_ref().map_or_else(|| "stdout".to_owned(), |p| format!("`{}`", p.display()));
    eprintln!("tablectl: exported {count} entities ({bytes} bytes) of {} to {target}", args.table);
    if ctx.json && data_path.is_some() {
        let summary = serde_json::json!({
            "table": args.table.as_str(),
            "entities": count,
            "bytes": bytes,
            "sha256": sha256,
            "path": data_path.as_ref().map(|p| p.display().to_string()),
        });
        writeln!(out, "{summary}").map_err(CliError::stdout)?;
    }
    Ok(Outcome::Done)
}
