//! Validate: every entity of a file or a table that a service would refuse, with what [`crate::check`] finds;
//! nothing is sent.
//!
//! Files are read in every format [`crate::format`] reads ([`format::open_reader`]), the format told by each
//! file's name or content, or given. Uncompressed `jsonl`, the format of large exports, is read by one thread
//! and checked by one per core, in blocks of whole lines, each line read as [`format::jsonl::read_line`] reads
//! it. Each invalid entity goes to the caller's [`Findings`] in the order of the input, with its [`Place`];
//! the [`Summary`] counts every entity.
//!
//! Layer: operations.

use crate::check::{check, check_entity, check_line, Checked};
use crate::error::{ErrorKind, TransferError};
use crate::format::{self, jsonl, Compression, FileFormat, MAX_RECORD_BYTES, SHOWN_BYTES};
use crate::inputs::inputs;
use crate::progress::{Control, Event, Operation};
use futures::TryStreamExt as _;
use std::io::Read;
use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use table_model::client::TableClient;
use table_model::{Query, RuleSet, TableName};

/// How to validate.
///
/// ```
/// use table_model::RuleSet;
/// use table_model_transfer::validate::ValidateOptions;
/// assert_eq!(ValidateOptions::new(RuleSet::CosmosDb).rules, RuleSet::CosmosDb);
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ValidateOptions {
    /// The service whose rules every entity is checked against.
    pub rules: RuleSet,
    /// The input's format and compression; when `None`, each file's name tells, else its content.
    pub format: Option<(FileFormat, Compression)>,
    /// For a table: key ranges read side by side (reports then come in the order read). A file is checked by as
    /// many threads as there are cores.
    pub parallel: NonZeroUsize,
}

impl ValidateOptions {
    /// Checks against `rules`, one key range at a time, each file in the format its name tells.
    pub fn new(rules: RuleSet) -> Self {
        ValidateOptions { rules, format: None, parallel: NonZeroUsize::MIN }
    }

    /// Sets [`format`](Self::format).
    #[must_use]
    pub fn format(mut self, format: FileFormat, compression: Compression) -> Self {
        self.format = Some((format, compression));
        self
    }

    /// Sets [`parallel`](Self::parallel).
    #[must_use]
    pub fn parallel(mut self, parallel: NonZeroUsize) -> Self {
        self.parallel = parallel;
        self
    }
}

/// Where an entity is in its input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// A file's line (or, for a format of rows, its row), from 1.
    Line(u64),
    /// A table's entity, in the order read, from 1.
    Entity(u64),
}

/// Receives each invalid entity, in the order of the input: its source (a path, `-`, or `table:NAME`), its
/// place, and what is wrong with it.
pub trait Findings {
    /// One invalid entity.
    ///
    /// # Errors
    /// What stops the run (a closed output, say).
    fn invalid(&mut self, source: &str, place: Place, checked: &Checked) -> Result<(), TransferError>;
}

/// Counts the entities and hands the invalid ones to the caller's [`Findings`].
struct Report<'a> {
    findings: &'a mut dyn Findings,
    summary: Summary,
}

impl Report<'_> {
    /// Counts one entity, and reports it if it has findings.
    fn entity(&mut self, source: &str, place: Place, checked: &Checked) -> Result<(), TransferError> {
        self.summary.entities += 1;
        if checked.findings.is_empty() {
            return Ok(());
        }
        self.summary.invalid += 1;
        self.summary.findings += checked.findings.len() as u64;
        self.findings.invalid(source, place, checked)
    }
}

/// What `validate` reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Input {
    /// A file, an export directory, or `-` for stdin.
    Path(PathBuf),
    /// A table, read through the client.
    Table(TableName),
}

/// The prefix that makes an argument a table whatever paths exist: `table:People`.
pub const TABLE_PREFIX: &str = "table:";

impl Input {
    /// Reads the argument: `table:NAME` is a table; an existing path (or `-`) a path; else a valid table name a
    /// table; anything else a path that does not exist, which is an error when it is read.
    ///
    /// ```
    /// use table_model_transfer::validate::Input;
    /// assert!(matches!(Input::parse("table:People")?, Input::Table(_)));
    /// assert!(matches!(Input::parse("People")?, Input::Table(_)));
    /// assert!(matches!(Input::parse("-")?, Input::Path(_)));
    /// assert!(matches!(Input::parse("people.jsonl")?, Input::Path(_)));
    /// assert!(Input::parse("table:no_such").is_err());
    /// # Ok::<(), table_model_transfer::error::TransferError>(())
    /// ```
    ///
    /// # Errors
    /// [`TransferError`] ([`InvalidInput`](crate::error::ErrorKind::InvalidInput)) for `table:` followed by an invalid
    /// table name.
    pub fn parse(arg: &str) -> Result<Input, TransferError> {
        if let Some(name) = arg.strip_prefix(TABLE_PREFIX) {
            return TableName::new(name)
                .map(Input::Table)
                .map_err(|e| TransferError::invalid(format!("invalid table `{name}`: {e}")));
        }
        let path = Path::new(arg);
        if arg == "-" || path.exists() {
            return Ok(Input::Path(path.to_owned()));
        }
        Ok(TableName::new(arg).map_or_else(|_| Input::Path(path.to_owned()), Input::Table))
    }
}

/// The counts of a run.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Summary {
    /// Entities read (for a file: its lines that are not blank, entities or not).
    pub entities: u64,
    /// Entities with at least one finding.
    pub invalid: u64,
    /// Findings, one per rule broken.
    pub findings: u64,
}

/// Lines read at once by the reading thread, and checked together by one worker.
const BLOCK_BYTES: usize = 1 << 20;

/// A block of whole lines of one input.
struct Block {
    /// Its place in the order read, from 0.
    seq: u64,
    /// The number of its first line.
    first_line: u64,
    data: Vec<u8>,
    /// `Some(bytes)` when the block is one line over [`MAX_RECORD_BYTES`]: `data` holds its first bytes only.
    too_long: Option<u64>,
}

/// What a worker found in a block: its invalid lines, with their numbers, and how many entities it read.
struct BlockResult {
    seq: u64,
    entities: u64,
    bytes: u64,
    invalid: Vec<(u64, Checked)>,
    /// The block's buffer, back to the reading thread for reuse.
    data: Vec<u8>,
}

/// Reads a file (`-`: stdin) in blocks of whole lines into `blocks`, numbering them; a line longer than a block
/// makes the block as long as the line, up to [`MAX_RECORD_BYTES`]: a longer line is read through and sent alone,
/// as its first bytes (memory stays bounded whatever the input). Buffers come back through `free` to be reused. Ends at the end of the
/// input, when `blocks` is closed, or at the first read error, which it returns; else gives the number of blocks
/// sent.
fn read_blocks(
    path: &Path,
    blocks: mpsc::SyncSender<Block>,
    free: mpsc::Receiver<Vec<u8>>,
) -> Result<u64, TransferError> {
    let mut seq = 0;
    let mut reader: Box<dyn Read> = if path.as_os_str() == "-" {
        Box::new(std::io::stdin().lock())
    } else {
        Box::new(std::fs::File::open(path).map_err(|e| TransferError::io("read", path, e))?)
    };
    let mut first_line = 1;
    // The bytes after the last line end of the previous block.
    let mut carry: Vec<u8> = Vec::new();
    let mut eof = false;
    while !eof {
        let mut data = free.try_recv().unwrap_or_default();
        data.clear();
        data.extend_from_slice(&carry);
        carry.clear();
        // Fill to a block; past it only while no line end has been read.
        let mut filled = data.len();
        data.resize(filled.max(BLOCK_BYTES), 0);
        let mut too_long = None;
        loop {
            if filled == data.len() {
                if data[..filled].contains(&b'\n') {
                    break;
                }
                if filled >= MAX_RECORD_BYTES {
                    // `data` is one line, with no end yet, over the limit: read through its end.
                    let (skipped, ended) =
                        skip_line(&mut reader, &mut carry).map_err(|e| TransferError::io("read", path, e))?;
                    too_long = Some((filled as u64) + skipped);
                    eof = !ended;
                    data.truncate(SHOWN_BYTES);
                    filled = data.len();
                    break;
                }
                data.resize(data.len() * 2, 0);
            }
            match reader.read(&mut data[filled..]) {
                Ok(0) => {
                    eof = true;
                    break;
                }
                Ok(n) => filled += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(TransferError::io("read", path, e)),
            }
        }
        data.truncate(filled);
        if !eof
            && too_long.is_none()
            && let Some(end) = data.iter().rposition(|&b| b == b'\n')
        {
            carry.extend_from_slice(&data[end + 1..]);
            data.truncate(end + 1);
        }
        if data.is_empty() {
            continue;
        }
        let lines = match too_long {
            Some(_) => 1,
            None => data.iter().filter(|&&b| b == b'\n').count() as u64,
        };
        let block = Block { seq, first_line, data, too_long };
        seq += 1;
        first_line += lines;
        if blocks.send(block).is_err() {
            return Ok(seq);
        }
    }
    Ok(seq)
}

/// Reads through the end of a line (its `\n`), keeping nothing of it but what follows the `\n` in the last read,
/// which goes into `after`: the bytes read through the `\n`, and whether there was one (else the input ended).
fn skip_line(reader: &mut dyn Read, after: &mut Vec<u8>) -> std::io::Result<(u64, bool)> {
    let mut buf = vec![0; 64 * 1024];
    let mut skipped = 0;
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) => return Ok((skipped, false)),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        match buf[..n].iter().position(|&b| b == b'\n') {
            Some(end) => {
                after.extend_from_slice(&buf[end + 1..n]);
                return Ok((skipped + end as u64 + 1, true));
            }
            None => skipped += n as u64,
        }
    }
}

/// Checks each line of each block that comes, until `blocks` ends.
fn check_blocks(rules: RuleSet, blocks: &Mutex<mpsc::Receiver<Block>>, results: &mpsc::Sender<BlockResult>) {
    loop {
        let block = match blocks.lock() {
            Ok(receiver) => receiver.recv(),
            Err(_) => return,
        };
        let Ok(block) = block else { return };
        let mut checked = BlockResult {
            seq: block.seq,
            entities: 0,
            bytes: block.data.len() as u64,
            invalid: Vec::new(),
            data: Vec::new(),
        };
        if let Some(bytes) = block.too_long {
            checked.entities = 1;
            checked.bytes = bytes;
            checked.invalid.push((block.first_line, check(rules, Err(jsonl::line_too_long(bytes, &block.data)))));
            checked.data = block.data;
            if results.send(checked).is_err() {
                return;
            }
            continue;
        }
        for (number, line) in (block.first_line..).zip(block.data.split_inclusive(|&b| b == b'\n')) {
            if let Some(found) = check_line(rules, line) {
                checked.entities += 1;
                if !found.findings.is_empty() {
                    checked.invalid.push((number, found));
                }
            }
        }
        checked.data = block.data;
        if results.send(checked).is_err() {
            return;
        }
    }
}

/// Checks a file of JSON lines with one reading thread and `workers` checking threads, reporting in input order.
/// `done_bytes`: the bytes of the files checked before, for progress.
fn check_jsonl(
    (path, source): &(PathBuf, Arc<str>),
    rules: RuleSet,
    workers: usize,
    report: &mut Report<'_>,
    (control, done_bytes): (&Control, u64),
) -> Result<(), TransferError> {
    let (block_sender, block_receiver) = mpsc::sync_channel::<Block>(2 * workers);
    let (free_sender, free_receiver) = mpsc::channel::<Vec<u8>>();
    let (result_sender, result_receiver) = mpsc::channel::<BlockResult>();
    // Shared by the workers alone: when they have all ended, the reader's next send fails and it ends too.
    let block_receiver = Arc::new(Mutex::new(block_receiver));
    std::thread::scope(|scope| {
        let reader = scope.spawn(move || read_blocks(path, block_sender, free_receiver));
        for _ in 0..workers {
            let (results, blocks) = (result_sender.clone(), block_receiver.clone());
            scope.spawn(move || check_blocks(rules, &blocks, &results));
        }
        drop((result_sender, block_receiver));
        // Results come in any order; they are reported in the order of the blocks.
        let mut pending = std::collections::BTreeMap::new();
        let mut next = 0;
        let mut bytes = done_bytes;
        let mut failed = None;
        for checked in result_receiver {
            pending.insert(checked.seq, checked);
            while let Some(checked) = pending.remove(&next) {
                next += 1;
                bytes += checked.bytes;
                control.report(Event::Bytes(bytes));
                if failed.is_none() {
                    for (line, found) in &checked.invalid {
                        if let Err(e) = report.entity(source, Place::Line(*line), found) {
                            failed = Some(e);
                            break;
                        }
                    }
                    // Valid entities are only counted.
                    let valid = checked.entities - checked.invalid.len() as u64;
                    report.summary.entities += valid;
                }
                let _ = free_sender.send(checked.data);
            }
            if failed.is_some() {
                // Closing the results ends each worker at its next block, and then the reader.
                break;
            }
        }
        let read =
            reader.join().unwrap_or_else(|_| Err(TransferError::failed("the thread reading the input panicked")));
        match (failed, read) {
            (Some(e), _) | (None, Err(e)) => Err(e),
            // Every block read was reported, unless a worker ended without giving back its block.
            (None, Ok(blocks)) if blocks != next => Err(TransferError::failed("a thread checking the input panicked")),
            (None, Ok(_)) => Ok(()),
        }
    })
}

/// The files to read: an export directory's (checked against its manifest first), or the one file, or stdin.
fn files(path: &Path) -> Result<Vec<(PathBuf, Arc<str>)>, TransferError> {
    if path.as_os_str() != "-" && !path.exists() {
        return Err(TransferError::invalid(format!(
            "no file or directory `{}` (a table is read as `{TABLE_PREFIX}NAME`)",
            path.display()
        )));
    }
    let files = inputs(&[path.to_owned()])?.files;
    Ok(files
        .into_iter()
        .map(|file| {
            let source: Arc<str> = file.display().to_string().into();
            (file, source)
        })
        .collect())
}

/// Checks one file of any format, record by record, through [`format::open_reader`].
fn check_file(
    (path, _): &(PathBuf, Arc<str>),
    format: Option<(FileFormat, Compression)>,
    rules: RuleSet,
    report: &mut Report<'_>,
    (control, done_bytes): (&Control, u64),
) -> Result<(), TransferError> {
    let mut reader = format::open_reader(path, format)?;
    while let Some(record) = reader.next_record()? {
        let source = record.position.source;
        report.entity(&source, Place::Line(record.position.line), &check(rules, record.entity))?;
        control.report(Event::Bytes(done_bytes + reader.bytes_read()));
    }
    Ok(())
}

/// Checks a table's entities as they are read.
async fn check_table(
    table: &TableClient,
    (rules, parallel): (RuleSet, NonZeroUsize),
    report: &mut Report<'_>,
    control: &Control,
) -> Result<(), TransferError> {
    let source = format!("{TABLE_PREFIX}{}", table.table());
    let query = Query::new();
    let starts = crate::scan::plan_reading(table, &query, parallel, None).await?.into_starts();
    control.report(Event::Started { operation: Operation::Validate, total_bytes: None });
    let mut pages = crate::scan::scan_pages(table, &query, starts, parallel, None);
    let mut position = 0;
    let mut checked = Checked::default();
    loop {
        let Some(page) = control.unless_cancelled(pages.try_next()).await else {
            return Err(TransferError::new(ErrorKind::Cancelled, "the validation was cancelled"));
        };
        let Some(page) = page? else { return Ok(()) };
        for entity in page.entities {
            position += 1;
            checked.findings.clear();
            check_entity(rules, &entity, &mut checked.findings);
            if !checked.findings.is_empty() {
                checked.partition_key = Some(entity.partition_key().as_str().to_owned());
                checked.row_key = Some(entity.row_key().as_str().to_owned());
            }
            report.entity(&source, Place::Entity(position), &checked)?;
        }
        control.report(Event::Entities(position));
    }
}

/// Validates a file, an export directory (its manifest checked first) or `-` (stdin), reporting each invalid
/// entity to `findings`. Blocking: it reads on threads of its own.
///
/// ```
/// use table_model::RuleSet;
/// use table_model_transfer::check::Checked;
/// use table_model_transfer::error::TransferError;
/// use table_model_transfer::progress::Control;
/// use table_model_transfer::validate::{validate_path, Findings, Place, ValidateOptions};
///
/// struct Lines(Vec<u64>);
/// impl Findings for Lines {
///     fn invalid(&mut self, _: &str, place: Place, _: &Checked) -> Result<(), TransferError> {
///         if let Place::Line(n) = place { self.0.push(n) }
///         Ok(())
///     }
/// }
/// let path = std::env::temp_dir().join(format!("validate-doc-{}.jsonl", std::process::id()));
/// std::fs::write(&path, "{\"PartitionKey\":\"p\",\"RowKey\":\"a\"}\n{\"PartitionKey\":\"p\",\"RowKey\":\"b\",\"ID\":1}\n")?;
/// let mut lines = Lines(Vec::new());
/// let summary = validate_path(&path, &ValidateOptions::new(RuleSet::CosmosDb), &mut lines, &Control::new())?;
/// assert_eq!((summary.entities, summary.invalid, lines.0), (2, 1, vec![2]));
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// [`TransferError`]: an input that cannot be read, of no format the engine reads or that does not match its
/// manifest ([`ErrorKind::InvalidInput`]), a findings receiver that fails, [`ErrorKind::Cancelled`]. Invalid
/// entities are not errors: the summary counts them.
pub fn validate_path(
    path: &Path,
    options: &ValidateOptions,
    findings: &mut dyn Findings,
    control: &Control,
) -> Result<Summary, TransferError> {
    if options.parallel.get() > 1 {
        return Err(TransferError::invalid(
            "--parallel is for a table: a file is checked by as many threads as there are cores",
        ));
    }
    let files = files(path)?;
    let formats = files
        .iter()
        .map(|(path, _)| {
            if path.as_os_str() == "-" {
                Ok(options.format)
            } else {
                format::format_of(path, options.format).map(Some)
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    let total = files
        .iter()
        .filter(|(path, _)| path.as_os_str() != "-")
        .map(|(path, _)| std::fs::metadata(path).map_or(0, |m| m.len()))
        .sum();
    control.report(Event::Started { operation: Operation::Validate, total_bytes: Some(total) });
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get()).min(MAX_WORKERS);
    let mut report = Report { findings, summary: Summary::default() };
    let mut done_bytes = 0;
    let mut result = Ok(());
    for (file, format) in files.iter().zip(formats) {
        if control.is_cancelled() {
            result = Err(TransferError::new(ErrorKind::Cancelled, "the validation was cancelled"));
            break;
        }
        let path = &file.0;
        let stdin_jsonl = path.as_os_str() == "-" && format.is_none();
        result = match format {
            Some((FileFormat::Jsonl, Compression::None)) => {
                check_jsonl(file, options.rules, workers, &mut report, (control, done_bytes))
            }
            _ if stdin_jsonl => check_jsonl(file, options.rules, workers, &mut report, (control, done_bytes)),
            other => check_file(file, other, options.rules, &mut report, (control, done_bytes)),
        };
        if result.is_err() {
            break;
        }
        done_bytes += std::fs::metadata(path).map_or(0, |m| m.len());
    }
    control.report(Event::Finished);
    result.map(|()| report.summary)
}

/// Validates the entities of a table as they are read, reporting each invalid one to `findings` (its source
/// `table:NAME`, its place the order read).
///
/// # Errors
/// [`TransferError`]: a failed request, a findings receiver that fails, [`ErrorKind::Cancelled`]. Invalid
/// entities are not errors: the summary counts them.
pub async fn validate_table(
    table: &TableClient,
    options: &ValidateOptions,
    findings: &mut dyn Findings,
    control: &Control,
) -> Result<Summary, TransferError> {
    let mut report = Report { findings, summary: Summary::default() };
    let result = check_table(table, (options.rules, options.parallel), &mut report, control).await;
    control.report(Event::Finished);
    result.map(|()| report.summary)
}

/// The most checking threads: reading a block is far cheaper than checking it, so more cores than this would
/// wait on the one reading thread.
const MAX_WORKERS: usize = 8;

#[cfg(test)]
mod tests {
    use super::*;

    /// Every invalid entity reported, as a line of text.
    #[derive(Default)]
    struct Recorded(Vec<String>);

    impl Findings for Recorded {
        fn invalid(&mut self, source: &str, place: Place, checked: &Checked) -> Result<(), TransferError> {
            self.0.push(format!("{source} {place:?} {checked:?}"));
            Ok(())
        }
    }

    /// Runs `check` on a fresh report; gives back what it reported and its summary.
    fn reported(check: impl FnOnce(&mut Report<'_>) -> Result<(), TransferError>) -> (String, Summary) {
        let mut recorded = Recorded::default();
        let mut report = Report { findings: &mut recorded, summary: Summary::default() };
        check(&mut report).unwrap();
        let summary = report.summary;
        (recorded.0.join("\n"), summary)
    }

    /// A file of several blocks: invalid lines spread over all of them, blank lines, CRLF, a line longer than a
    /// block and a last line without its line end.
    fn spread_file(dir: &Path) -> PathBuf {
        let mut data = Vec::new();
        let mut n = 0;
        while data.len() < 3 * BLOCK_BYTES {
            n += 1;
            let line = match n % 997 {
                0 => format!(r#"{{"PartitionKey":"p","RowKey":"{n}","Id":{n}}}"#),
                1 => format!(r#"{{"PartitionKey":"p","RowKey":"{n}/x"}}"#),
                2 => String::new(),
                3 => format!("{{\"PartitionKey\":\"p\",\"RowKey\":\"{n}\"}}\r"),
                _ => format!(r#"{{"PartitionKey":"p","RowKey":"{n}","Pad":"{}"}}"#, "x".repeat(n % 200)),
            };
            data.extend_from_slice(line.as_bytes());
            data.push(b'\n');
            if n == 2000 {
                // Over the limit of a line: rejected by both paths, read through, the next line read on.
                data.extend_from_slice(
                    format!(
                        "{{\"PartitionKey\":\"p\",\"RowKey\":\"huge\",\"S\":\"{}\"}}\n",
                        "z".repeat(MAX_RECORD_BYTES + 10)
                    )
                    .as_bytes(),
                );
            }
            if n == 3000 {
                let long: Vec<String> = (0..40).map(|i| format!("\"S{i}\":\"{}\"", "y".repeat(32_000))).collect();
                data.extend_from_slice(
                    format!("{{\"PartitionKey\":\"p\",\"RowKey\":\"long\",{}}}\n", long.join(",")).as_bytes(),
                );
            }
        }
        data.extend_from_slice(br#"{"PartitionKey":"p","RowKey":"last","rid":1}"#);
        let path = dir.join("spread.jsonl");
        std::fs::write(&path, data).unwrap();
        path
    }

    #[test]
    fn the_parallel_path_reports_what_the_reader_does_in_the_same_order() {
        let dir = std::env::temp_dir().join(format!("tablectl-validate-unit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = (spread_file(&dir), Arc::<str>::from("spread.jsonl"));
        let control = Control::new();
        for rules in RuleSet::ALL {
            let (expected, expected_summary) = reported(|report| {
                check_file(&file, Some((FileFormat::Jsonl, Compression::None)), rules, report, (&control, 0))
            });
            for workers in [1, 3] {
                let (got, summary) = reported(|report| check_jsonl(&file, rules, workers, report, (&control, 0)));
                assert_eq!(summary, expected_summary, "{rules:?}, {workers} workers");
                // The reader names its source by path; the parallel path by the name it is given.
                assert_eq!(got, expected.replace(&file.0.display().to_string(), "spread.jsonl"), "{rules:?}");
            }
            assert!(expected_summary.invalid > 3, "{expected_summary:?}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_last_line_over_the_limit_without_its_end_is_rejected_by_both_paths() {
        let dir = std::env::temp_dir().join(format!("tablectl-validate-long-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("long.jsonl");
        let mut data = b"{\"PartitionKey\":\"p\",\"RowKey\":\"a\"}\n".to_vec();
        data.extend(std::iter::repeat_n(b'[', 3 * MAX_RECORD_BYTES / 2));
        std::fs::write(&path, &data).unwrap();
        let file = (path, Arc::<str>::from("long.jsonl"));
        let control = Control::new();
        let (expected, expected_summary) = reported(|report| {
            check_file(&file, Some((FileFormat::Jsonl, Compression::None)), RuleSet::Storage, report, (&control, 0))
        });
        let (got, summary) = reported(|report| check_jsonl(&file, RuleSet::Storage, 2, report, (&control, 0)));
        assert_eq!(summary, expected_summary);
        assert_eq!(got, expected.replace(&file.0.display().to_string(), "long.jsonl"));
        assert_eq!(summary.invalid, 1, "{got}");
        assert!(got.contains(&format!("the line has {} bytes, over the", 3 * MAX_RECORD_BYTES / 2)), "{got}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
