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
use crate::cli::{ImportArgs, ImportMode};
use crate::error::{client_outcome, CliError, Outcome};
use crate::format::{self, jsonl, Compression, EntityReader, FileFormat};
use crate::manifest::{self, Manifest};
use crate::progress::Progress;
use crate::rejects::{Reject, RejectFile};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use table_model::client::{
    BulkFailure, BulkOperation, BulkOptions, BulkReport, Error as ClientError, ErrorKind, FailureCause, TableClient,
};
use table_model::{
    BatchErrorKind, ETag, EncodeError, EncodedEntity, Entity, EntityError, ErrorCode, KeyKind, PartitionKey,
    RequestError, RequestErrorKind, RowKey, RuleSetErrorKind, UpdateMode, WriteEntity,
};

/// An entity with the place of its line.
#[derive(Debug)]
struct Line {
    /// The input file's index, for the order of the reject file.
    file: usize,
    source: Arc<str>,
    number: u64,
    entity: Entity,
}

impl WriteEntity for Line {
    fn encode(&self) -> Result<EncodedEntity, EncodeError> {
        self.entity.encode()
    }

    fn keys(&self) -> Result<(PartitionKey, RowKey), EntityError> {
        WriteEntity::keys(&self.entity)
    }

    fn etag(&self) -> Option<&ETag> {
        None
    }
}

/// The files to read, in order, with their total size when known (not for stdin). An export directory's files,
/// or a file with a manifest beside it, are checked against the manifest here.
pub(crate) fn inputs(input: &Path) -> Result<(Vec<PathBuf>, Option<u64>), CliError> {
    if input.as_os_str() == "-" {
        return Ok((vec![input.to_owned()], None));
    }
    let metadata = std::fs::metadata(input).map_err(|e| CliError::io("read", input, e))?;
    let files = if metadata.is_dir() {
        let manifest = Manifest::read(input)?;
        manifest.verify(input)?;
        manifest.files.iter().map(|f| input.join(&f.path)).collect()
    } else {
        let dir = input.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        if dir.join(manifest::FILE_NAME).is_file() {
            let mut manifest = Manifest::read(dir)?;
            let name = input.file_name().map(|n| n.to_string_lossy().into_owned());
            manifest.files.retain(|f| Some(&f.path) == name.as_ref());
            manifest.verify(dir)?;
        }
        vec![input.to_owned()]
    };
    let mut total = 0;
    for file in &files {
        total += std::fs::metadata(file).map_err(|e| CliError::io("read", file, e))?.len();
    }
    Ok((files, Some(total)))
}

/// Reads the inputs record by record (each file through [`format::open_reader`]); a record that is not an entity
/// goes to the reject file. Stops at the first read or write error, which it keeps.
struct Reader {
    files: std::iter::Enumerate<std::vec::IntoIter<PathBuf>>,
    format: Option<(FileFormat, Compression)>,
    open: Option<(usize, Box<dyn EntityReader>)>,
    /// Bytes of the files finished.
    done_bytes: u64,
    rejects: RejectFile,
    error: Option<CliError>,
    progress: Progress,
}

/// Entities read but not yet taken by the bulk writer.
const READ_AHEAD: usize = 1000;

impl Reader {
    /// Reads on a thread of its own (a blocking read, of stdin above all, never holds up the transactions in
    /// flight), sending the entities into a channel of [`READ_AHEAD`]; the thread gives back the reject file
    /// and the error that stopped it, if any.
    fn spawn(self) -> (tokio::sync::mpsc::Receiver<Line>, std::thread::JoinHandle<(RejectFile, Option<CliError>)>) {
        let (sender, receiver) = tokio::sync::mpsc::channel(READ_AHEAD);
        let mut reader = self;
        let thread = std::thread::spawn(move || {
            while let Some(line) = reader.next_line() {
                if sender.blocking_send(line).is_err() {
                    break;
                }
            }
            (reader.rejects, reader.error)
        });
        (receiver, thread)
    }

    fn next_line(&mut self) -> Option<Line> {
        while self.error.is_none() {
            let Some((index, open)) = &mut self.open else {
                let (index, path) = self.files.next()?;
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
            match record.entity {
                Ok(mut entity) => {
                    // The service sets both on write; an import never sends them.
                    entity.set_server_metadata(None, None);
                    return Some(Line {
                        file: *index,
                        source: record.position.source,
                        number: record.position.line,
                        entity,
                    });
                }
                Err(rejected) => {
                    if let Err(e) = self.rejects.write(&Reject::of(&record.position, rejected)) {
                        self.error = Some(e);
                    }
                }
            }
        }
        None
    }
}

/// The property or key a refused entity's error names, if any.
fn property_of(error: &ClientError) -> Option<String> {
    let ErrorKind::Request(e) = error.kind() else { return None };
    request_property(e)
}

/// The property or key a request error names: a rule of the target's service, an entity that does not encode,
/// or either of these as the operation of a transaction (how the bulk writer refuses an entity).
fn request_property(error: &RequestError) -> Option<String> {
    match error.kind() {
        RequestErrorKind::ServiceRule { error, value } => match error.kind() {
            RuleSetErrorKind::KeyTooLong { key: KeyKind::Partition, .. } => Some("PartitionKey".to_owned()),
            RuleSetErrorKind::KeyTooLong { key: KeyKind::Row, .. } => Some("RowKey".to_owned()),
            RuleSetErrorKind::ReservedPropertyName { .. } => Some(value.clone()),
            _ => None,
        },
        RequestErrorKind::Encode(e) => e.property().map(str::to_owned),
        RequestErrorKind::Batch(e) => match e.kind() {
            BatchErrorKind::Request(e) => request_property(e),
            _ => None,
        },
        _ => None,
    }
}

/// Writes the entities of `lines` with one bulk write, then again those only rolled back with a transaction
/// another entity failed, until none is; the failed ones are returned, in input order.
async fn write_all(
    table: &TableClient,
    operation: BulkOperation,
    lines: impl futures::Stream<Item = Line>,
    progress: &Progress,
) -> (u64, Vec<BulkFailure<Line>>) {
    let options = |already: u64| {
        let progress = progress.clone();
        BulkOptions {
            progress: Some(Arc::new(move |p| progress.set_entities(already + p.written))),
            ..Default::default()
        }
    };
    let report: BulkReport<Line> = table.bulk_write_stream(operation, lines, Some(options(0))).await;
    let mut written = report.written;
    let mut failed = Vec::new();
    let mut pending = report.failures;
    loop {
        let (again, done): (Vec<_>, Vec<_>) =
            pending.into_iter().partition(|f| matches!(f.cause, FailureCause::RolledBack { .. }));
        failed.extend(done);
        if again.is_empty() {
            break;
        }
        // Each round drops at least the failed entity of every transaction rolled back, so this ends.
        let lines = again.into_iter().map(|f| f.entity);
        let report = table.bulk_write(operation, lines, Some(options(written))).await;
        written += report.written;
        pending = report.failures;
    }
    failed.sort_by_key(|f| (f.entity.file, f.entity.number));
    (written, failed)
}

/// Imports the entities.
///
/// # Errors
/// An input that does not match its manifest (before any request), a failed request, or a file that cannot
/// be read or written. Entities that are not written are not errors: they make the outcome
/// [`Outcome::Partial`].
pub async fn run(ctx: &Context, args: &ImportArgs, out: &mut impl Write) -> Result<Outcome, CliError> {
    let (files, total) = inputs(&args.input)?;
    let table = ctx.service.table_client(args.table.clone());
    table.create_table_if_not_exists(None).await?;

    let path = args.reject.clone().unwrap_or_else(|| PathBuf::from(format!("{}.rejects.jsonl", args.table)));
    let rejects = RejectFile::new(path);
    let progress = match total {
        Some(total) => Progress::bytes("import", total),
        None => Progress::entities("import"),
    };
    let operation = match args.mode {
        ImportMode::Insert | ImportMode::InsertOrSkip => BulkOperation::Insert,
        ImportMode::Merge => BulkOperation::Upsert(UpdateMode::Merge),
        ImportMode::Replace => BulkOperation::Upsert(UpdateMode::Replace),
    };

    let format = args.format.map(|format| (format, args.compress.unwrap_or_default()));
    let reader = Reader {
        files: files.into_iter().enumerate(),
        format,
        open: None,
        done_bytes: 0,
        rejects,
        error: None,
        progress: progress.clone(),
    };
    let (receiver, thread) = reader.spawn();
    let lines =
        futures::stream::unfold(
            receiver,
            |mut receiver| async move { receiver.recv().await.map(|line| (line, receiver)) },
        );
    let (written, failed) = write_all(&table, operation, lines, &progress).await;
    // The bulk writer reads its input to the end, so the thread has ended or is about to.
    let (mut rejects, read_error) =
        thread.join().map_err(|_| CliError::failed("the thread reading the input panicked"))?;
    progress.finish();

    let mut outcome = Outcome::Done;
    let mut skipped = 0_u64;
    for failure in failed {
        let exists = failure.error.error_code() == Some(ErrorCode::EntityAlreadyExists);
        if args.mode == ImportMode::InsertOrSkip && exists {
            skipped += 1;
            continue;
        }
        if client_outcome(&failure.error) == Outcome::Unreachable {
            outcome = Outcome::Unreachable;
        }
        let rule = match &failure.cause {
            FailureCause::RolledBack { failed_index, failed_row_key } => format!(
                "rolled back with its transaction, whose operation {failed_index} (RowKey `{failed_row_key}`) was refused"
            ),
            _ => failure.error.to_string(),
        };
        let line = &failure.entity;
        let mut text = Vec::new();
        // An entity the encoder refuses has no line to show but its keys.
        let _ = jsonl::write_entity(&line.entity, &mut text);
        rejects.write(&Reject {
            source: line.source.to_string(),
            line: line.number,
            partition_key: Some(line.entity.partition_key().to_string()),
            row_key: Some(line.entity.row_key().to_string()),
            property: property_of(&failure.error),
            rule,
            text: String::from_utf8_lossy(jsonl::trim_line_end(&text)).into_owned(),
        })?;
    }
    rejects.finish()?;
    if let Some(error) = read_error {
        return Err(error);
    }
    if rejects.count() > 0 && outcome == Outcome::Done {
        outcome = Outcome::Partial;
    }

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
