//! `tablectl import FILE|DIR|- TABLE [--mode insert|insert-or-skip|merge|replace] [--reject FILE]`: the records
//! of files in any format ([`crate::format`]) into a table, streamed through the client's bulk writer (transactions per PartitionKey,
//! bounded memory).
//!
//! Before anything is sent, an export directory's files are checked against its [`Manifest`] (so is a file
//! named by a `manifest.json` beside it). Each line is then read with Storage's rules; a line that does not read
//! is rejected, and the bulk writer checks each entity against the target service's rules (`docs/rules.md`
//! §13.1) before its transaction is sent, reporting one that breaks them as not sent without failing its
//! neighbours. Every entity not written goes to the reject file, one JSON object per line with its source file,
//! line number, keys, property and rule, and its line as `text`.

use super::Context;
use crate::checkpoint::{self, AbortAfter, Command};
use crate::cli::ImportArgs;
use crate::error::{CliError, Outcome};
use crate::format::{self, Compression, EntityReader, FileFormat};
use crate::manifest::{self, Manifest};
use crate::progress::Progress;
use crate::rate::{limit_for, Pace};
use crate::rejects::{Reject, RejectFile};
use crate::write::{write_chunk, ChunkWriter, Line};
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The files to read, in order, with their total size when known (not for stdin). An export directory's files,
/// or a file with a manifest beside it, are checked against the manifest here; several export directories must
/// be different shards of one export, or unrelated exports.
pub(crate) fn inputs(inputs: &[PathBuf]) -> Result<(Vec<PathBuf>, Option<u64>), CliError> {
    if inputs.iter().any(|i| i.as_os_str() == "-") {
        if inputs.len() > 1 {
            return Err(CliError::invalid("stdin (`-`) is read alone: give it as the only input"));
        }
        return Ok((inputs.to_vec(), None));
    }
    let mut files = Vec::new();
    let mut shards: Vec<(&Path, Manifest)> = Vec::new();
    for input in inputs {
        let metadata = std::fs::metadata(input).map_err(|e| CliError::io("read", input, e))?;
        if metadata.is_dir() {
            let manifest = Manifest::read(input)?;
            manifest.verify(input)?;
            files.extend(manifest.files.iter().map(|f| input.join(&f.path)));
            shards.push((input, manifest));
        } else {
            let dir = input.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
            if dir.join(manifest::FILE_NAME).is_file() {
                let mut manifest = Manifest::read(dir)?;
                let name = input.file_name().map(|n| n.to_string_lossy().into_owned());
                manifest.files.retain(|f| Some(&f.path) == name.as_ref());
                manifest.verify(dir)?;
            }
            files.push(input.to_owned());
        }
    }
    check_shards(&shards)?;
    let mut total = 0;
    for file in &files {
        total += std::fs::metadata(file).map_err(|e| CliError::io("read", file, e))?.len();
    }
    Ok((files, Some(total)))
}

/// Export directories given together: the same export twice, or one shard twice, would import its entities
/// twice; shards of one export must come from one plan. A shard missing is said on stderr.
fn check_shards(dirs: &[(&Path, Manifest)]) -> Result<(), CliError> {
    for (i, (a, ma)) in dirs.iter().enumerate() {
        for (b, mb) in &dirs[..i] {
            let same_export = ma.started == mb.started && ma.table == mb.table && ma.shard.is_none();
            if let Some(shard) = ma.shard.filter(|_| ma.shard == mb.shard && ma.plan == mb.plan) {
                return Err(CliError::invalid(format!(
                    "`{}` and `{}` hold the same shard {shard} of one export: its entities would be imported twice",
                    b.display(),
                    a.display(),
                )));
            }
            if same_export && ma.files == mb.files {
                return Err(CliError::invalid(format!(
                    "`{}` and `{}` hold the same export: its entities would be imported twice",
                    b.display(),
                    a.display()
                )));
            }
            let (Some(sa), Some(sb)) = (ma.shard, mb.shard) else { continue };
            if ma.table == mb.table && sa.n == sb.n && ma.filter == mb.filter && ma.plan != mb.plan {
                return Err(CliError::invalid(format!(
                    "`{}` (shard {sb}) and `{}` (shard {sa}) were planned differently (the table changed between \
                     the workers' starts?): their key ranges may overlap or leave gaps",
                    b.display(),
                    a.display()
                )));
            }
        }
    }
    if let Some((first, n)) = dirs.iter().find_map(|(_, m)| m.shard.map(|s| (m, s.n))) {
        let given: Vec<usize> =
            dirs.iter().filter(|(_, m)| m.plan == first.plan).filter_map(|(_, m)| m.shard.map(|s| s.k)).collect();
        let missing: Vec<String> = (1..=n).filter(|k| !given.contains(k)).map(|k| format!("{k}/{n}")).collect();
        if !missing.is_empty() {
            eprintln!("tablectl: note: shards {} of the export are not among the inputs", missing.join(", "));
        }
    }
    Ok(())
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
    open: Option<(usize, Box<dyn EntityReader>)>,
    /// Records at or before this place were settled by the run resumed.
    after: Option<(usize, u64)>,
    /// Bytes of the files finished.
    done_bytes: u64,
    error: Option<CliError>,
    progress: Progress,
}

/// Records read but not yet taken by the writer.
const READ_AHEAD: usize = 1000;

impl Reader {
    /// Reads on a thread of its own (a blocking read, of stdin above all, never holds up the transactions in
    /// flight), sending the records into a channel of [`READ_AHEAD`]; the thread gives back the error that
    /// stopped it, if any.
    fn spawn(self) -> (tokio::sync::mpsc::Receiver<Item>, std::thread::JoinHandle<Option<CliError>>) {
        let (sender, receiver) = tokio::sync::mpsc::channel(READ_AHEAD);
        let mut reader = self;
        let thread = std::thread::spawn(move || {
            while let Some(item) = reader.next_item() {
                if reader.after.is_some_and(|after| item.position() <= after) {
                    continue;
                }
                if sender.blocking_send(item).is_err() {
                    break;
                }
            }
            reader.error
        });
        (receiver, thread)
    }

    fn next_item(&mut self) -> Option<Item> {
        while self.error.is_none() {
            let Some((index, open)) = &mut self.open else {
                let (index, path) = self.files.next()?;
                if self.after.is_some_and(|(file, _)| index < file) {
                    continue; // settled by the run resumed
                }
                match format::open_reader(&path, self.format) {
                    Ok(reader) => self.open = Some((index, reader)),
                    Err(e) => self.error = Some(e),
                }
                continue;
            };
            let record = match open.next_record() {
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
            self.progress.set_bytes(self.done_bytes + open.bytes_read());
            return Some(match record.entity {
                Ok(mut entity) => {
                    // The service sets both on write; an import never sends them.
                    entity.set_server_metadata(None, None);
                    Item::Entity(Line {
                        file: *index,
                        source: record.position.source,
                        number: record.position.line,
                        entity,
                    })
                }
                Err(rejected) => Item::Reject { file: *index, reject: Reject::of(&record.position, rejected) },
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
    command: Command,
    /// The last record settled: its input's index and its line.
    position: Option<(usize, u64)>,
    written: u64,
    skipped: u64,
    already: u64,
    /// The reject file's length and rejects at the checkpoint.
    reject_bytes: u64,
    rejects: u64,
}

/// Takes the next chunk of records: at least one (waiting for it), then what comes within [`CHUNK_WAIT`], at
/// most `size`. Empty at the end of the input.
async fn next_chunk(receiver: &mut tokio::sync::mpsc::Receiver<Item>, size: usize) -> Vec<Item> {
    let Some(first) = receiver.recv().await else { return Vec::new() };
    let deadline = tokio::time::Instant::now() + CHUNK_WAIT;
    let mut chunk = vec![first];
    while chunk.len() < size {
        match tokio::time::timeout_at(deadline, receiver.recv()).await {
            Ok(Some(item)) => chunk.push(item),
            Ok(None) | Err(_) => break,
        }
    }
    chunk
}

/// Imports the entities.
///
/// # Errors
/// An input that does not match its manifest, or an unfinished import of another command line (before any
/// request), a failed request, or a file that cannot be read or written. Entities that are not written are not
/// errors: they make the outcome [`Outcome::Partial`].
pub async fn run(ctx: &Context, args: &ImportArgs, out: &mut impl Write) -> Result<Outcome, CliError> {
    let (files, total) = inputs(&args.input)?;
    let stdin = total.is_none();
    let checkpoint_path =
        args.checkpoint.clone().unwrap_or_else(|| PathBuf::from(format!("{}.import-checkpoint.json", args.table)));
    let inputs: Vec<String> =
        files.iter().map(|f| std::path::absolute(f).unwrap_or_else(|_| f.clone()).display().to_string()).collect();
    let command = Command::new("import")
        .with("inputs", &inputs)
        .with("table", args.table.as_str())
        .with("--mode", format!("{:?}", args.mode))
        .with("--format", args.format.map(|f| f.extension()))
        .with("--compress", args.compress.map(|c| c.suffix()));
    if args.force {
        checkpoint::remove(&checkpoint_path)?;
    }
    // stdin cannot be read again: an import from it never resumes, and keeps no checkpoint.
    let saved = if stdin {
        None
    } else {
        checkpoint::read_for::<ImportCheckpoint>(&checkpoint_path, CHECKPOINT_FORMAT, &command)?
    };
    if let Some(saved) = &saved {
        eprintln!(
            "tablectl: resuming the unfinished import of `{}` ({} entities settled)",
            checkpoint_path.display(),
            saved.written + saved.skipped + saved.already + saved.rejects
        );
    }
    let resumed = saved.is_some();
    let state =
        saved.unwrap_or(ImportCheckpoint { format: CHECKPOINT_FORMAT.to_owned(), command, ..Default::default() });
    if !stdin && !resumed {
        // Kept before anything is sent: a run stopped in its first chunk is resumed as one.
        checkpoint::write_atomic(&checkpoint_path, &state)?;
    }
    let mut state = state;

    let table = ctx.service.table_client(args.table.clone());
    table.create_table_if_not_exists(None).await?;
    let mut pace = Pace::new(limit_for(args.max_rate, table.kind()));

    let path = args.reject.clone().unwrap_or_else(|| PathBuf::from(format!("{}.rejects.jsonl", args.table)));
    let mut rejects =
        if resumed { RejectFile::resume(path, state.reject_bytes, state.rejects)? } else { RejectFile::new(path) };
    let progress = match total {
        Some(total) => Progress::bytes("import", total),
        None => Progress::entities("import"),
    };
    let format = args.format.map(|format| (format, args.compress.unwrap_or_default()));
    let reader = Reader {
        files: files.into_iter().enumerate(),
        format,
        open: None,
        after: state.position,
        done_bytes: 0,
        error: None,
        progress: progress.clone(),
    };
    let (mut receiver, thread) = reader.spawn();
    // With a rate, a chunk is a tenth of a second's worth, so that a chunk written at full speed is a short burst.
    let limit = limit_for(args.max_rate, table.kind());
    let size = limit.map_or(CHUNK, |rate| (rate / 10).clamp(100, CHUNK as u64) as usize);
    let abort = AbortAfter::from_env();
    let mut this_run = 0_u64;
    let outcome = loop {
        let chunk = next_chunk(&mut receiver, size).await;
        let Some(last) = chunk.last().map(Item::position) else { break Ok(()) };
        let mut lines = Vec::new();
        let mut read_rejects = Vec::new();
        for item in chunk {
            match item {
                Item::Entity(line) => lines.push(line),
                Item::Reject { file, reject } => read_rejects.push((file, reject)),
            }
        }
        pace.take(lines.len() as u64).await;
        let writer = ChunkWriter {
            table: &table,
            mode: args.mode,
            resumed,
            progress: &progress,
            done: this_run,
            abort,
            partition_rate: crate::rate::partition_limit_for(args.max_rate, table.kind()),
        };
        let settled = match write_chunk(&writer, lines).await {
            Ok(settled) => settled,
            Err(e) => break Err(e),
        };
        this_run += settled.written;
        // The rejects of the chunk in input order: the lines that do not read, and the entities not written.
        let mut all: Vec<(usize, Reject)> = read_rejects;
        all.extend(settled.rejects);
        all.sort_by_key(|(file, r)| (*file, r.line));
        for (_, reject) in &all {
            rejects.write(reject)?;
        }
        state.written += settled.written;
        state.skipped += settled.skipped;
        state.already += settled.already;
        state.position = Some(last);
        state.reject_bytes = rejects.sync()?;
        state.rejects = rejects.count();
        if !stdin {
            checkpoint::write_atomic(&checkpoint_path, &state)?;
        }
    };
    drop(receiver);
    let read_error = thread.join().map_err(|_| CliError::failed("the thread reading the input panicked"))?;
    progress.finish();
    rejects.finish()?;
    if let Err(e) = outcome {
        let e = CliError::new(
            e.outcome(),
            format!(
                "{e}; the import stopped after {} entities, run the same command again to resume",
                state.written + state.already
            ),
        );
        return Err(e);
    }
    if let Some(error) = read_error {
        return Err(error);
    }
    if !stdin {
        checkpoint::remove(&checkpoint_path)?;
    }
    let outcome = if rejects.count() > 0 { Outcome::Partial } else { Outcome::Done };

    let written = state.written + state.already;
    let skipped = state.skipped;
    let skipped_text = match skipped {
        0 => String::new(),
        n => format!("; {n} skipped (their keys exist)"),
    };
    let rejected = match rejects.count() {
        0 => String::new(),
        n => format!("; {n} rejected, see `{}`", rejects.path().display()),
    };
    eprintln!("tablectl: imported {written} entities into {}{skipped_text}{rejected}", args.table);
    if ctx.json {
        let summary = serde_json::json!({
            "table": args.table.as_str(),
            "imported": written,
            "skipped": skipped,
            "rejected": rejects.count(),
            "rejects": (rejects.count() > 0).then(|| rejects.path().display().to_string()),
        });
        writeln!(out, "{summary}").map_err(CliError::stdout)?;
    }
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::Shard;
    use table_model::filter::{KeyPosition, KeyRange};
    use table_model::PartitionKey;

    fn worker(k: usize, cut: &'static str) -> Manifest {
        let plan = KeyRange::all().split([KeyPosition::partition(PartitionKey::from_static(cut))]);
        Manifest {
            format: crate::manifest::FORMAT.into(),
            tool: "tablectl test".into(),
            table: "T".into(),
            filter: None,
            select: None,
            started: format!("2026-01-01T00:00:0{k}Z"),
            files: Vec::new(),
            ranges: Some(vec![plan[k - 1].clone()]),
            plan: Some(plan),
            shard: Some(Shard { k, n: 2 }),
        }
    }

    #[test]
    fn shards_of_one_plan_go_together_and_others_are_refused() {
        let (a, b) = (Path::new("a"), Path::new("b"));
        check_shards(&[(a, worker(1, "m")), (b, worker(2, "m"))]).unwrap();
        let err = check_shards(&[(a, worker(1, "m")), (b, worker(1, "m"))]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "`a` and `b` hold the same shard 1/2 of one export: its entities would be imported twice"
        );
        let err = check_shards(&[(a, worker(1, "m")), (b, worker(2, "n"))]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "`a` (shard 1/2) and `b` (shard 2/2) were planned differently (the table changed between the workers' \
             starts?): their key ranges may overlap or leave gaps"
        );
    }
}
