//! `tablectl validate FILE|DIR|-|TABLE --service storage|cosmos|portable`: every entity the service would refuse,
//! with what [`crate::validate`] finds; nothing is sent.
//!
//! The argument is read as a path when one exists (`-` is stdin), else as a table: `table:NAME`, or a bare NAME
//! that is a valid table name and no path. Only a table needs an endpoint.
//!
//! Files are read in every format [`crate::format`] reads ([`format::open_reader`]), the format told by each
//! file's name or given with `--format`. Uncompressed `jsonl`, the format of large exports, is read by one thread
//! and checked by one per core, in blocks of whole lines, each line read as [`format::jsonl::read_line`] reads it; the
//! findings are written in the order of the input. Each invalid entity gets one line per rule it breaks: on a terminal
//! `FILE:LINE: PartitionKey `p`, RowKey `r`: property `ID`: RULE`, else (or with `--json`) a JSON object with
//! `source`, `line` (or `entity`, for a table: its place in the order read, from 1), `partition_key`, `row_key`,
//! `property` and `rule`. A summary goes to stderr, and with `--json` to stdout as the last line.

use super::Context;
use crate::error::{CliError, Outcome};
use crate::format::{self, jsonl, Compression, FileFormat, MAX_RECORD_BYTES, SHOWN_BYTES};
use crate::output::Format;
use crate::progress::Progress;
use crate::validate::{check, check_entity, check_line, Checked};
use clap::ValueEnum;
use futures::TryStreamExt as _;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use table_model::client::TableServiceClient;
use table_model::{Query, RuleSet, TableName};

/// `tablectl validate`.
#[derive(clap::Args, Debug)]
pub struct ValidateArgs {
    /// A file, an export directory (its manifest is checked first), `-` for stdin, or a table: `table:NAME`, or a
    /// NAME that is no path
    #[arg(value_name = "FILE|DIR|-|TABLE")]
    pub input: String,
    /// The service whose rules every entity is checked against
    #[arg(long, value_enum)]
    pub service: ServiceRules,
    /// The input's format [default: told by each file's name (`.jsonl`, `.csv.gz`, `.parquet`...); `jsonl` for
    /// stdin]
    #[arg(long, value_enum)]
    pub format: Option<FileFormat>,
    /// The input's compression, with `--format` [default: told by the file name; none for stdin]
    #[arg(long, value_enum, requires = "format")]
    pub compress: Option<Compression>,
    /// For a table: read this many key ranges side by side (reports then come in the order read); refused for a
    /// file, which is checked by as many threads as there are cores
    #[arg(long, value_name = "N", default_value = "1")]
    pub parallel: std::num::NonZeroUsize,
}

/// The rules `validate` checks: a service's, or both services' at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ServiceRules {
    /// Azure Table Storage (and Azurite)
    Storage,
    /// Cosmos DB for Table (RowKeys of at most 255 bytes, reserved names, ...)
    Cosmos,
    /// Both: data that can move between Storage and Cosmos DB
    Portable,
}

impl ServiceRules {
    /// The library's rule set.
    ///
    /// ```
    /// use table_model_cli::commands::validate::ServiceRules;
    /// assert_eq!(ServiceRules::Cosmos.rules(), table_model::RuleSet::CosmosDb);
    /// ```
    pub fn rules(self) -> RuleSet {
        match self {
            ServiceRules::Storage => RuleSet::Storage,
            ServiceRules::Cosmos => RuleSet::CosmosDb,
            ServiceRules::Portable => RuleSet::Portable,
        }
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
    /// use table_model_cli::commands::validate::Input;
    /// assert!(matches!(Input::parse("table:People")?, Input::Table(_)));
    /// assert!(matches!(Input::parse("People")?, Input::Table(_)));
    /// assert!(matches!(Input::parse("-")?, Input::Path(_)));
    /// assert!(matches!(Input::parse("people.jsonl")?, Input::Path(_)));
    /// assert!(Input::parse("table:no_such").is_err());
    /// # Ok::<(), table_model_cli::error::CliError>(())
    /// ```
    ///
    /// # Errors
    /// [`CliError`] ([`InvalidInput`](crate::error::Outcome::InvalidInput)) for `table:` followed by an invalid
    /// table name.
    pub fn parse(arg: &str) -> Result<Input, CliError> {
        if let Some(name) = arg.strip_prefix(TABLE_PREFIX) {
            return TableName::new(name)
                .map(Input::Table)
                .map_err(|e| CliError::invalid(format!("invalid table `{name}`: {e}")));
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

/// Where an entity is in its input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    /// A file's line (or, for a format of rows, its row), from 1.
    Line(u64),
    /// A table's entity, in the order read, from 1.
    Entity(u64),
}

/// A finding as a JSON line.
#[derive(serde::Serialize)]
struct Finding<'a> {
    source: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    line: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    entity: Option<u64>,
    partition_key: Option<&'a str>,
    row_key: Option<&'a str>,
    property: Option<&'a str>,
    rule: &'a str,
}

/// Writes the findings of each invalid entity, in the format of the run, and counts.
struct Report<'a, W: Write> {
    out: &'a mut W,
    format: Format,
    summary: Summary,
    line: Vec<u8>,
}

impl<W: Write> Report<'_, W> {
    /// Counts one entity, and writes its findings if it has any.
    fn entity(&mut self, source: &str, place: Place, checked: &Checked) -> Result<(), CliError> {
        self.summary.entities += 1;
        if checked.findings.is_empty() {
            return Ok(());
        }
        self.summary.invalid += 1;
        for finding in &checked.findings {
            self.summary.findings += 1;
            self.line.clear();
            match self.format {
                Format::Json => {
                    let (line, entity) = match place {
                        Place::Line(n) => (Some(n), None),
                        Place::Entity(n) => (None, Some(n)),
                    };
                    let finding = Finding {
                        source,
                        line,
                        entity,
                        partition_key: checked.partition_key.as_deref(),
                        row_key: checked.row_key.as_deref(),
                        property: finding.property.as_deref(),
                        rule: &finding.rule,
                    };
                    serde_json::to_writer(&mut self.line, &finding).expect("writing to a Vec cannot fail");
                    self.line.push(b'\n');
                }
                Format::Human => {
                    let place = match place {
                        Place::Line(n) => format!("{source}:{n}"),
                        Place::Entity(n) => format!("{source}, entity {n}"),
                    };
                    let key = |name: &str, value: &Option<String>| match value {
                        Some(v) => format!("{name} `{v}`"),
                        None => format!("no {name}"),
                    };
                    let property = match &finding.property {
                        Some(p) => format!(": property `{p}`"),
                        None => String::new(),
                    };
                    let text = format!(
                        "{place}: {}, {}{property}: {}\n",
                        key("PartitionKey", &checked.partition_key),
                        key("RowKey", &checked.row_key),
                        finding.rule
                    );
                    self.line.extend_from_slice(text.as_bytes());
                }
            }
            self.out.write_all(&self.line).map_err(CliError::stdout)?;
        }
        Ok(())
    }
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
fn read_blocks(path: &Path, blocks: mpsc::SyncSender<Block>, free: mpsc::Receiver<Vec<u8>>) -> Result<u64, CliError> {
    let mut seq = 0;
    let mut reader: Box<dyn Read> = if path.as_os_str() == "-" {
        Box::new(std::io::stdin().lock())
    } else {
        Box::new(std::fs::File::open(path).map_err(|e| CliError::io("read", path, e))?)
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
                        skip_line(&mut reader, &mut carry).map_err(|e| CliError::io("read", path, e))?;
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
                Err(e) => return Err(CliError::io("read", path, e)),
            }
        }
        data.truncate(filled);
        if !eof && too_long.is_none() {
            if let Some(end) = data.iter().rposition(|&b| b == b'\n') {
                carry.extend_from_slice(&data[end + 1..]);
                data.truncate(end + 1);
            }
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
fn check_jsonl<W: Write>(
    (path, source): &(PathBuf, Arc<str>),
    rules: RuleSet,
    workers: usize,
    report: &mut Report<'_, W>,
    (progress, done_bytes): (&Progress, u64),
) -> Result<(), CliError> {
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
                progress.set_bytes(bytes);
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
        let read = reader.join().unwrap_or_else(|_| Err(CliError::failed("the thread reading the input panicked")));
        match (failed, read) {
            (Some(e), _) | (None, Err(e)) => Err(e),
            // Every block read was reported, unless a worker ended without giving back its block.
            (None, Ok(blocks)) if blocks != next => Err(CliError::failed("a thread checking the input panicked")),
            (None, Ok(_)) => Ok(()),
        }
    })
}

/// The files to read: an export directory's (checked against its manifest first), or the one file, or stdin.
fn files(path: &Path) -> Result<Vec<(PathBuf, Arc<str>)>, CliError> {
    if path.as_os_str() != "-" && !path.exists() {
        return Err(CliError::invalid(format!(
            "no file or directory `{}` (a table is read as `{TABLE_PREFIX}NAME`)",
            path.display()
        )));
    }
    let (files, _) = super::import::inputs(&[path.to_owned()])?;
    Ok(files
        .into_iter()
        .map(|file| {
            let source: Arc<str> = file.display().to_string().into();
            (file, source)
        })
        .collect())
}

/// Checks one file of any format, record by record, through [`format::open_reader`].
fn check_file<W: Write>(
    (path, _): &(PathBuf, Arc<str>),
    format: Option<(FileFormat, Compression)>,
    rules: RuleSet,
    report: &mut Report<'_, W>,
    (progress, done_bytes): (&Progress, u64),
) -> Result<(), CliError> {
    let mut reader = format::open_reader(path, format)?;
    while let Some(record) = reader.next_record()? {
        let source = record.position.source;
        report.entity(&source, Place::Line(record.position.line), &check(rules, record.entity))?;
        progress.set_bytes(done_bytes + reader.bytes_read());
    }
    Ok(())
}

/// Checks a table's entities as they are read.
async fn check_table<W: Write>(
    service: &TableServiceClient,
    table: &TableName,
    (rules, parallel): (RuleSet, std::num::NonZeroUsize),
    report: &mut Report<'_, W>,
    progress: &Progress,
) -> Result<(), CliError> {
    let source = format!("{TABLE_PREFIX}{table}");
    let client = service.table_client(table.clone());
    let query = Query::new();
    let plan = crate::scan::plan(&client, &query, parallel, crate::scan::Shard::ALL).await?;
    let starts =
        plan.mine.into_iter().enumerate().map(|(index, range)| crate::scan::RangeStart { index, range, from: None });
    let mut pages = crate::scan::scan_pages(&client, &query, starts.collect(), parallel);
    let mut position = 0;
    let mut checked = Checked::default();
    while let Some(page) = pages.try_next().await? {
        for entity in page.entities {
            position += 1;
            checked.findings.clear();
            check_entity(rules, &entity, &mut checked.findings);
            if !checked.findings.is_empty() {
                checked.partition_key = Some(entity.partition_key().as_str().to_owned());
                checked.row_key = Some(entity.row_key().as_str().to_owned());
            }
            report.entity(&source, Place::Entity(position), &checked)?;
            progress.set_entities(position);
        }
    }
    Ok(())
}

/// Validates the input. `connect` gives the client of the endpoint, called only for a table.
///
/// # Errors
/// An input that cannot be read or does not match its manifest ([`Outcome::InvalidInput`]), a failed request,
/// or stdout closed. Invalid entities are not errors: they make the outcome [`Outcome::Partial`].
pub async fn run(
    args: &ValidateArgs,
    format: Format,
    json: bool,
    connect: impl FnOnce() -> Result<Context, CliError>,
    out: &mut impl Write,
) -> Result<Outcome, CliError> {
    let rules = args.service.rules();
    let input = Input::parse(&args.input)?;
    let mut report = Report { out, format, summary: Summary::default(), line: Vec::new() };
    let source = match &input {
        Input::Path(path) => {
            if args.parallel.get() > 1 {
                return Err(CliError::invalid(
                    "--parallel is for a table: a file is checked by as many threads as there are cores",
                ));
            }
            let files = files(path)?;
            let total = files
                .iter()
                .filter(|(path, _)| path.as_os_str() != "-")
                .map(|(path, _)| std::fs::metadata(path).map_or(0, |m| m.len()))
                .sum();
            let progress = Progress::bytes("validate", total);
            let workers = std::thread::available_parallelism().map_or(1, |n| n.get()).min(MAX_WORKERS);
            let given = args.format.map(|f| (f, args.compress.unwrap_or_default()));
            let mut done_bytes = 0;
            let mut result = Ok(());
            for file in &files {
                let path = &file.0;
                result = match format::format_of(path, given) {
                    (FileFormat::Jsonl, Compression::None) => {
                        check_jsonl(file, rules, workers, &mut report, (&progress, done_bytes))
                    }
                    other => check_file(file, Some(other), rules, &mut report, (&progress, done_bytes)),
                };
                if result.is_err() {
                    break;
                }
                done_bytes += std::fs::metadata(path).map_or(0, |m| m.len());
            }
            progress.finish();
            result?;
            format!("`{}`", path.display())
        }
        Input::Table(table) => {
            let ctx = connect()?;
            let progress = Progress::entities("validate");
            let result = check_table(&ctx.service, table, (rules, args.parallel), &mut report, &progress).await;
            progress.finish();
            result?;
            format!("table {table}")
        }
    };
    let Summary { entities, invalid, findings } = report.summary;
    eprintln!(
        "tablectl: {entities} entities of {source} checked for {rules}: {} valid, {invalid} invalid ({findings} findings)",
        entities - invalid
    );
    if json {
        let summary = serde_json::json!({
            "service": rules.keyword(),
            "entities": entities,
            "valid": entities - invalid,
            "invalid": invalid,
            "findings": findings,
        });
        writeln!(report.out, "{summary}").map_err(CliError::stdout)?;
    }
    Ok(if invalid > 0 { Outcome::Partial } else { Outcome::Done })
}

/// The most checking threads: reading a block is far cheaper than checking it, so more cores than this would
/// wait on the one reading thread.
const MAX_WORKERS: usize = 8;

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `check` on a fresh report in `format`; gives back what it wrote and its summary.
    fn reported(
        format: Format,
        check: impl FnOnce(&mut Report<'_, Vec<u8>>) -> Result<(), CliError>,
    ) -> (String, Summary) {
        let mut out = Vec::new();
        let mut report = Report { out: &mut out, format, summary: Summary::default(), line: Vec::new() };
        check(&mut report).unwrap();
        let summary = report.summary;
        (String::from_utf8(out).unwrap(), summary)
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
        let progress = Progress::entities("test");
        for rules in RuleSet::ALL {
            let (expected, expected_summary) = reported(Format::Json, |report| {
                check_file(&file, Some((FileFormat::Jsonl, Compression::None)), rules, report, (&progress, 0))
            });
            for workers in [1, 3] {
                let (got, summary) =
                    reported(Format::Json, |report| check_jsonl(&file, rules, workers, report, (&progress, 0)));
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
        let progress = Progress::entities("test");
        let (expected, expected_summary) = reported(Format::Json, |report| {
            check_file(&file, Some((FileFormat::Jsonl, Compression::None)), RuleSet::Storage, report, (&progress, 0))
        });
        let (got, summary) =
            reported(Format::Json, |report| check_jsonl(&file, RuleSet::Storage, 2, report, (&progress, 0)));
        assert_eq!(summary, expected_summary);
        assert_eq!(got, expected.replace(&file.0.display().to_string(), "long.jsonl"));
        assert_eq!(summary.invalid, 1, "{got}");
        assert!(got.contains(&format!("the line has {} bytes, over the", 3 * MAX_RECORD_BYTES / 2)), "{got}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn text_names_the_place_the_keys_the_property_and_the_rule() {
        let checked = Checked {
            partition_key: Some("p".into()),
            row_key: None,
            findings: vec![
                crate::validate::Finding { property: Some("ID".into()), rule: "reserved".into() },
                crate::validate::Finding { property: None, rule: "bad JSON".into() },
            ],
        };
        let (text, summary) = reported(Format::Human, |report| {
            report.entity("a.jsonl", Place::Line(7), &checked)?;
            report.entity("table:People", Place::Entity(3), &Checked::default())?;
            report.entity("table:People", Place::Entity(4), &checked)
        });
        assert_eq!(
            text,
            "a.jsonl:7: PartitionKey `p`, no RowKey: property `ID`: reserved\n\
             a.jsonl:7: PartitionKey `p`, no RowKey: bad JSON\n\
             table:People, entity 4: PartitionKey `p`, no RowKey: property `ID`: reserved\n\
             table:People, entity 4: PartitionKey `p`, no RowKey: bad JSON\n"
        );
        assert_eq!(summary, Summary { entities: 3, invalid: 2, findings: 4 });
    }
}
