//! `tablectl import FILE|DIR|- TABLE [--mode insert|insert-or-skip|merge|replace] [--reject FILE]`: JSON lines
//! ([`crate::jsonl`]) into a table, streamed through the client's bulk writer (transactions per PartitionKey,
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
use crate::jsonl;
use crate::manifest::{self, Manifest};
use crate::progress::Progress;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
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

/// One entity not imported, as a line of the reject file.
#[derive(Debug, serde::Serialize)]
pub struct Reject {
    /// The input file (`-` for stdin).
    pub source: String,
    /// Its line number, from 1.
    pub line: u64,
    /// The PartitionKey as written, when there is one.
    pub partition_key: Option<String>,
    /// The RowKey as written, when there is one.
    pub row_key: Option<String>,
    /// The property (or key) at fault, when one is.
    pub property: Option<String>,
    /// What was wrong: the rule broken, or the service's refusal.
    pub rule: String,
    /// The line, to fix and import again.
    pub text: String,
}

/// The reject file, created when the first entity is rejected.
#[derive(Debug)]
struct Rejects {
    path: PathBuf,
    file: Option<BufWriter<File>>,
    count: u64,
}

impl Rejects {
    fn write(&mut self, reject: &Reject) -> Result<(), CliError> {
        if self.file.is_none() {
            let file = File::create(&self.path).map_err(|e| CliError::io("create", &self.path, e))?;
            self.file = Some(BufWriter::new(file));
        }
        let file = self.file.as_mut().expect("created above");
        let mut json = serde_json::to_vec(reject).expect("a reject is always JSON");
        json.push(b'\n');
        file.write_all(&json).map_err(|e| CliError::io("write", &self.path, e))?;
        self.count += 1;
        Ok(())
    }

    fn finish(&mut self) -> Result<(), CliError> {
        match &mut self.file {
            Some(file) => file.flush().map_err(|e| CliError::io("write", &self.path, e)),
            None => Ok(()),
        }
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

/// An input file being read.
struct Open {
    index: usize,
    path: PathBuf,
    source: Arc<str>,
    reader: Box<dyn BufRead + Send>,
    line: u64,
}

/// Reads the inputs line by line into entities; a line that does not read goes to the reject file. Stops at the
/// first read or write error, which it keeps.
struct Reader {
    files: std::iter::Enumerate<std::vec::IntoIter<PathBuf>>,
    open: Option<Open>,
    buf: Vec<u8>,
    bytes: u64,
    rejects: Rejects,
    error: Option<CliError>,
    progress: Progress,
}

/// Entities read but not yet taken by the bulk writer.
const READ_AHEAD: usize = 1000;

impl Reader {
    /// Reads on a thread of its own (a blocking read, of stdin above all, never holds up the transactions in
    /// flight), sending the entities into a channel of [`READ_AHEAD`]; the thread gives back the reject file
    /// and the error that stopped it, if any.
    fn spawn(self) -> (tokio::sync::mpsc::Receiver<Line>, std::thread::JoinHandle<(Rejects, Option<CliError>)>) {
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
            let Some(open) = &mut self.open else {
                let (index, path) = self.files.next()?;
                let (source, reader): (Arc<str>, Box<dyn BufRead + Send>) = if path.as_os_str() == "-" {
                    ("-".into(), Box::new(BufReader::with_capacity(256 * 1024, std::io::stdin())))
                } else {
                    match File::open(&path) {
                        Ok(file) => {
                            (path.display().to_string().into(), Box::new(BufReader::with_capacity(256 * 1024, file)))
                        }
                        Err(e) => {
                            self.error = Some(CliError::io("read", &path, e));
                            return None;
                        }
                    }
                };
                self.open = Some(Open { index, path, source, reader, line: 0 });
                continue;
            };
            self.buf.clear();
            match open.reader.read_until(b'\n', &mut self.buf) {
                Ok(0) => self.open = None,
                Ok(n) => {
                    open.line += 1;
                    self.bytes += n as u64;
                    self.progress.set_bytes(self.bytes);
                    if self.buf.trim_ascii().is_empty() {
                        continue;
                    }
                    match jsonl::read_entity(&self.buf) {
                        Ok(mut entity) => {
                            // The service sets both on write; an import never sends them.
                            entity.set_server_metadata(None, None);
                            return Some(Line {
                                file: open.index,
                                source: open.source.clone(),
                                number: open.line,
                                entity,
                            });
                        }
                        Err(e) => {
                            let (partition_key, row_key) = jsonl::raw_keys(&self.buf);
                            let reject = Reject {
                                source: open.source.to_string(),
                                line: open.line,
                                partition_key,
                                row_key,
                                property: e.property().map(str::to_owned),
                                rule: e.to_string(),
                                text: String::from_utf8_lossy(jsonl::trim_line_end(&self.buf)).into_owned(),
                            };
                            if let Err(e) = self.rejects.write(&reject) {
                                self.error = Some(e);
                            }
                        }
                    }
                }
                Err(e) => self.error = Some(CliError::io("read", &open.path, e)),
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
    let rejects = Rejects { path, file: None, count: 0 };
    let progress = match total {
        Some(total) => Progress::bytes("import", total),
        None => Progress::entities("import"),
    };
    let operation = match args.mode {
        ImportMode::Insert | ImportMode::InsertOrSkip => BulkOperation::Insert,
        ImportMode::Merge => BulkOperation::Upsert(UpdateMode::Merge),
        ImportMode::Replace => BulkOperation::Upsert(UpdateMode::Replace),
    };

    let reader = Reader {
        files: files.into_iter().enumerate(),
        open: None,
        buf: Vec::new(),
        bytes: 0,
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
    if rejects.count > 0 && outcome == Outcome::Done {
        outcome = Outcome::Partial;
    }

    let skipped_text = match skipped {
        0 => String::new(),
        n => format!("; {n} skipped (their keys exist)"),
    };
    let rejected = match rejects.count {
        0 => String::new(),
        n => format!("; {n} rejected, see `{}`", rejects.path.display()),
    };
    eprintln!("tablectl: imported {written} entities into {}{skipped_text}{rejected}", args.table);
    if ctx.json {
        let summary = serde_json::json!({
            "table": args.table.as_str(),
            "imported": written,
            "skipped": skipped,
            "rejected": rejects.count,
            "rejects": (rejects.count > 0).then(|| rejects.path.display().to_string()),
        });
        writeln!(out, "{summary}").map_err(CliError::stdout)?;
    }
    Ok(outcome)
}
