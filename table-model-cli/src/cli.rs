//! The command line, declared with clap's derive API: global endpoint options and `--json`, one subcommand per
//! operation, each with its arguments here; the commands read them, nothing here reads the commands.
//!
//! Layer: arguments.

use crate::endpoint::EndpointArgs;
use clap::{Parser, Subcommand, ValueEnum};
use std::num::NonZeroUsize;
use std::path::PathBuf;
use table_model::{RuleSet, TableName};
use table_model_transfer::export::ExportTarget;
use table_model_transfer::format::{Compression, FileFormat};
use table_model_transfer::write::WriteMode;

/// Export, import, copy, validate and query Azure Table service tables of any size (Azure Table Storage, Cosmos
/// DB for Table, Azurite). Data goes to stdout, progress and diagnostics to stderr.
#[derive(Parser, Debug)]
#[command(name = "tablectl", version, max_term_width = 110)]
pub struct Cli {
    /// The endpoint.
    #[command(flatten)]
    pub endpoint: EndpointArgs,
    /// Write results as JSON lines, even on a terminal
    #[arg(long, global = true)]
    pub json: bool,
    /// Say on stderr every retry, throttled try and settled transaction, with the service's request id
    #[arg(short, long, global = true)]
    pub verbose: bool,
    /// Give up a try that has no answer after this many seconds (another follows while retries remain)
    #[arg(long, global = true, value_name = "SECONDS", default_value = "60", value_parser = clap::value_parser!(u64).range(1..))]
    pub try_timeout: u64,
    /// Send the client's spans (a span per call, per try, per transaction) to this OpenTelemetry collector over
    /// OTLP/HTTP, such as http://localhost:4318; headers from OTEL_EXPORTER_OTLP_HEADERS
    #[cfg(feature = "otlp")]
    #[arg(long, global = true, value_name = "URL")]
    pub otlp_endpoint: Option<String>,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// A subcommand.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// List the account's tables
    Tables,
    /// Count a table's entities (reads their keys only)
    Count(CountArgs),
    /// Show a table's entities: an aligned table on a terminal, JSON lines when piped
    Query(QueryArgs),
    /// Export a table's entities (JSON lines, typed CSV or Parquet) to a file, a directory (with a manifest) or
    /// stdout; resumable, in key ranges side by side
    Export(ExportArgs),
    /// Import entities (JSON lines, typed CSV or Parquet) from files, export directories or stdin into a table;
    /// resumable
    Import(ImportArgs),
    /// Copy a table's entities into another table, on the same endpoint or another
    Copy(CopyArgs),
    /// Report every entity of a file or table that a service would refuse; sends nothing
    Validate(ValidateArgs),
    /// Delete the entities a filter selects, or every entity (the table stays); counts first and asks on a
    /// terminal; resumable, in key ranges side by side
    Delete(DeleteArgs),
    /// Back up tables into a directory: the first run a full generation, each later run what changed since
    /// (entities and deleted keys); `backup verify DIR` and `backup prune DIR --keep N` work offline
    Backup(BackupArgs),
    /// Restore a table as of a generation of its backup, into a new table or (with --exact) an existing one
    Restore(RestoreArgs),
    /// Show the properties of a table or file: their EDM types, how many entities carry each, conflicts
    Schema(SchemaArgs),
    /// Run a SQL statement over the tables (Apache DataFusion): an aligned table on a terminal, JSON lines when
    /// piped, CSV or Parquet
    #[cfg(feature = "sql")]
    Sql(SqlArgs),
    /// Print the completion script of a shell (`tablectl completions bash > /etc/bash_completion.d/tablectl`)
    Completions {
        /// The shell
        shell: clap_complete::Shell,
    },
}

/// `tablectl count`.
#[derive(clap::Args, Debug)]
pub struct CountArgs {
    /// The table
    pub table: TableName,
    /// An OData filter, such as `PartitionKey eq 'eu' and Age ge 18`
    #[arg(long)]
    pub filter: Option<String>,
    /// Scan this many key ranges side by side
    #[arg(long, value_name = "N", default_value = "1")]
    pub parallel: NonZeroUsize,
}

/// `tablectl query`.
#[derive(clap::Args, Debug)]
pub struct QueryArgs {
    /// The table
    pub table: TableName,
    /// An OData filter, such as `PartitionKey eq 'eu' and Age ge 18`
    #[arg(long)]
    pub filter: Option<String>,
    /// The properties to show, comma-separated (the keys and Timestamp always come)
    #[arg(long, value_delimiter = ',')]
    pub select: Vec<String>,
    /// At most this many entities
    #[arg(long, value_name = "N")]
    pub top: Option<u64>,
}

/// `tablectl backup`.
#[derive(clap::Args, Debug)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct BackupArgs {
    /// `verify` or `prune` (offline); none: take the next generation of each table's backup
    #[command(subcommand)]
    pub action: Option<BackupAction>,
    /// The tables (each into `DIR/TABLE/`)
    #[arg(required_unless_present = "all")]
    pub tables: Vec<TableName>,
    /// Back up every table of the account
    #[arg(long, conflicts_with = "tables")]
    pub all: bool,
    /// The backup's directory: each table's generations go into `DIR/TABLE/gen-NNNNNN/`
    #[arg(short, long, value_name = "DIR", required = true)]
    pub output: Option<PathBuf>,
    /// The format of the entities' files (the keys' files are JSON lines)
    #[arg(long, value_enum, default_value = "jsonl")]
    pub format: FormatArg,
    /// Compress `jsonl` and `csv` files
    #[arg(long, value_enum)]
    pub compress: Option<CompressArg>,
    /// Scan this many key ranges side by side (the first generation plans them; later ones scan the same)
    #[arg(long, value_name = "N", default_value = "1")]
    pub parallel: NonZeroUsize,
    /// Be worker K of N (from 1): back up a fixed share of the key ranges, into a directory of its own
    #[arg(long, value_name = "K/N")]
    pub shard: Option<table_model_transfer::shard::Shard>,
    /// At most this many entities per second (0: no limit) [default: 20000 for Azure Storage, no limit otherwise]
    #[arg(long, value_name = "N")]
    pub max_rate: Option<u64>,
    /// Seconds before the previous watermark that an incremental generation reads from, for the skew between
    /// the service's clocks
    #[arg(long, value_name = "SECONDS", default_value = "60")]
    pub margin: u64,
    /// Write a full generation even when there is a previous one
    #[arg(long)]
    pub full: bool,
    /// Start an unfinished generation over instead of going on with it
    #[arg(long)]
    pub force: bool,
}

/// What `tablectl backup` does besides taking a generation.
#[derive(Subcommand, Debug)]
pub enum BackupAction {
    /// Check a backup offline: every generation's files against its manifest, and the chain's links; a file
    /// missing, truncated or altered is named (status 2)
    Verify {
        /// The backup's directory (as given to `backup -o`), or one table's
        dir: PathBuf,
    },
    /// Fold the oldest generations into a base, offline, keeping the newest N; the fold is checked before
    /// anything is removed
    Prune {
        /// The backup's directory (as given to `backup -o`), or one table's
        dir: PathBuf,
        /// How many generations to keep
        #[arg(long, value_name = "N")]
        keep: std::num::NonZeroU32,
    },
}

/// `tablectl restore`.
#[derive(clap::Args, Debug)]
pub struct RestoreArgs {
    /// The backup's directory (as given to `backup -o`), or one table's
    pub dir: PathBuf,
    /// The table to restore into (created if needed)
    pub table: TableName,
    /// The table of the backup to restore [default: TABLE]
    #[arg(long, value_name = "TABLE")]
    pub from: Option<TableName>,
    /// The generation [default: the last]
    #[arg(long, value_name = "N", conflicts_with = "at")]
    pub generation: Option<u32>,
    /// The newest generation whose scans ended at or before this time (RFC 3339, such as
    /// `2026-11-24T06:00:00Z`)
    #[arg(long, value_name = "TIME", value_parser = parse_time)]
    pub at: Option<chrono::DateTime<chrono::Utc>>,
    /// Make an existing table equal to the backup: its entities that the backup does not have are deleted
    #[arg(long)]
    pub exact: bool,
    /// Keep each entity's original Timestamp (the service writes its own) in a DateTime property of this name
    #[arg(long, value_name = "NAME")]
    pub timestamp_as: Option<String>,
    /// At most this many entities per second (0: no limit) [default: 20000 for Azure Storage, no limit otherwise]
    #[arg(long, value_name = "N")]
    pub max_rate: Option<u64>,
    /// Send at most this many transactions (of up to 100 entities of a partition) at once [default: 8]
    #[arg(long, value_name = "N")]
    pub in_flight: Option<NonZeroUsize>,
    /// Start an unfinished restore over instead of going on with it
    #[arg(long)]
    pub force: bool,
}

/// An RFC 3339 time.
fn parse_time(text: &str) -> Result<chrono::DateTime<chrono::Utc>, String> {
    chrono::DateTime::parse_from_rfc3339(text)
        .map(|t| t.with_timezone(&chrono::Utc))
        .map_err(|e| format!("not an RFC 3339 time such as `2026-11-24T06:00:00Z`: {e}"))
}

/// `tablectl export`.
#[derive(clap::Args, Debug)]
pub struct ExportArgs {
    /// The table
    pub table: TableName,
    /// Where to: a file, a directory (an existing one, or a path ending with `/`: it gets `TABLE.jsonl` and
    /// `manifest.json`), or `-` for stdout
    #[arg(short, long, value_name = "FILE|DIR|-")]
    pub output: PathBuf,
    /// An OData filter, such as `PartitionKey eq 'eu' and Age ge 18`
    #[arg(long)]
    pub filter: Option<String>,
    /// The properties to export, comma-separated (the keys always come)
    #[arg(long, value_delimiter = ',')]
    pub select: Vec<String>,
    /// The file format [default: told by the output file's name (`.jsonl`, `.csv.gz`, `.parquet`...), else jsonl]
    #[arg(long, value_enum)]
    pub format: Option<FormatArg>,
    /// Compress `jsonl` and `csv` files [default: told by the output file's name, else none]
    #[arg(long, value_enum)]
    pub compress: Option<CompressArg>,
    /// The columns of `--format parquet`: a schema file, as `tablectl schema TABLE --json` prints it [default:
    /// inferred from the first 1000 entities]
    #[arg(long, value_name = "FILE")]
    pub schema: Option<PathBuf>,
    /// Replace files that already exist; start over instead of resuming an unfinished export in the directory
    #[arg(long)]
    pub force: bool,
    /// Scan this many key ranges side by side (to a directory: one file per range)
    #[arg(long, value_name = "N", default_value = "1")]
    pub parallel: NonZeroUsize,
    /// Be worker K of N (from 1): export a fixed share of the key ranges, into a directory of its own
    #[arg(long, value_name = "K/N")]
    pub shard: Option<table_model_transfer::shard::Shard>,
    /// Start a new numbered file once a file is past this size (bytes; `K`, `M`, `G` suffixes are powers of
    /// 1,024), at the end of a page
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub split_size: Option<u64>,
    /// At most this many entities per second (0: no limit) [default: 20000 for Azure Storage, no limit otherwise]
    #[arg(long, value_name = "N")]
    pub max_rate: Option<u64>,
}

impl ExportArgs {
    /// The format and compression to write: `--format` and `--compress` when given, else what the output file's
    /// name tells ([`FileFormat::of_path`]), else uncompressed jsonl (a directory's files, stdout).
    ///
    /// ```
    /// use clap::Parser as _;
    /// use table_model_cli::cli::{Cli, Command};
    /// use table_model_transfer::format::{Compression, FileFormat};
    /// let of = |args: &[&str]| match Cli::try_parse_from(args).unwrap().command {
    ///     Command::Export(args) => args.file_format(),
    ///     _ => unreachable!(),
    /// };
    /// assert_eq!(of(&["tablectl", "export", "People", "-o", "t.parquet"]), (FileFormat::Parquet, Compression::None));
    /// assert_eq!(of(&["tablectl", "export", "People", "-o", "t.csv.gz"]), (FileFormat::Csv, Compression::Gzip));
    /// assert_eq!(of(&["tablectl", "export", "People", "-o", "backup/"]), (FileFormat::Jsonl, Compression::None));
    /// let given = ["tablectl", "export", "People", "-o", "backup/", "--format", "csv", "--compress", "zstd"];
    /// assert_eq!(of(&given), (FileFormat::Csv, Compression::Zstd));
    /// ```
    pub fn file_format(&self) -> (FileFormat, Compression) {
        let named = match self.output.as_os_str() == "-" {
            true => None,
            false => match ExportTarget::path(&self.output) {
                ExportTarget::File(path) => FileFormat::of_path(&path),
                _ => None,
            },
        };
        let (format, compression) = named.unwrap_or_default();
        (self.format.map_or(format, Into::into), self.compress.map_or(compression, Into::into))
    }
}

/// Reads a size: bytes, or with a `K`, `M`, `G` (or `KiB`, `MiB`, `GiB`) suffix, powers of 1,024.
///
/// ```
/// use table_model_cli::cli::parse_size;
/// assert_eq!(parse_size("512"), Ok(512));
/// assert_eq!(parse_size("64K"), Ok(65_536));
/// assert_eq!(parse_size("2GiB"), Ok(2 << 30));
/// assert_eq!(parse_size("0").unwrap_err(), "the size must be at least 1 byte");
/// assert!(parse_size("1.5M").is_err());
/// ```
///
/// # Errors
/// What is wrong, for clap to show.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let digits = text.trim().trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let unit = &text.trim()[digits.len()..];
    let shift = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kib" => 10,
        "m" | "mib" => 20,
        "g" | "gib" => 30,
        _ => return Err(format!("unknown unit `{unit}`: give bytes, or K, M or G (powers of 1,024)")),
    };
    let n: u64 = digits.parse().map_err(|_| format!("`{text}` is not a whole number of bytes with K, M or G"))?;
    if n == 0 {
        return Err("the size must be at least 1 byte".to_owned());
    }
    n.checked_mul(1 << shift).ok_or_else(|| format!("`{text}` is too large"))
}

/// `tablectl import`.
#[derive(clap::Args, Debug)]
pub struct ImportArgs {
    /// A file (`.jsonl`, `.csv`, optionally `.gz` or `.zst`, `.parquet`), an export directory (its manifest is
    /// checked first), or `-` for stdin; several export directories (the shards of one export) are imported one
    /// after the other
    #[arg(value_name = "FILE|DIR|-", num_args = 1.., required = true)]
    pub input: Vec<PathBuf>,
    /// The table (created if it does not exist)
    pub table: TableName,
    /// What to do with an entity whose keys exist in the table
    #[arg(long, value_enum, default_value_t = ModeArg::Insert)]
    pub mode: ModeArg,
    /// Where to write the entities that are not imported [default: TABLE.rejects.jsonl, written only if any]
    #[arg(long, value_name = "FILE")]
    pub reject: Option<PathBuf>,
    /// The input's format [default: told by each file's name (`.jsonl`, `.csv.gz`, `.parquet`...), else by its
    /// content]
    #[arg(long, value_enum)]
    pub format: Option<FormatArg>,
    /// The input's compression, with `--format` [default: told by the file name or content]
    #[arg(long, value_enum, requires = "format")]
    pub compress: Option<CompressArg>,
    /// At most this many entities per second (0: no limit) [default: 20000 for Azure Storage, no limit otherwise]
    #[arg(long, value_name = "N")]
    pub max_rate: Option<u64>,
    /// Send at most this many transactions (of up to 100 entities of a partition) at once [default: 8]
    #[arg(long, value_name = "N")]
    pub in_flight: Option<NonZeroUsize>,
    /// The checkpoint an interrupted import resumes from [default: TABLE.import-checkpoint.json; removed when the
    /// import ends]
    #[arg(long, value_name = "FILE")]
    pub checkpoint: Option<PathBuf>,
    /// Start over instead of resuming the unfinished import of the checkpoint
    #[arg(long)]
    pub force: bool,
}

/// How `import` and `copy` write each entity: [`WriteMode`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ModeArg {
    /// Insert; an entity whose keys exist is rejected (alone: the others of its transaction are written)
    Insert,
    /// Insert; an entity whose keys exist is skipped, and the stored one kept
    InsertOrSkip,
    /// Insert, or merge its properties into the existing entity
    Merge,
    /// Insert, or replace the existing entity
    Replace,
}

impl From<ModeArg> for WriteMode {
    fn from(mode: ModeArg) -> WriteMode {
        match mode {
            ModeArg::Insert => WriteMode::Insert,
            ModeArg::InsertOrSkip => WriteMode::InsertOrSkip,
            ModeArg::Merge => WriteMode::Merge,
            ModeArg::Replace => WriteMode::Replace,
        }
    }
}

/// A file format: [`FileFormat`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    /// One entity per line in the service's own JSON: lossless
    Jsonl,
    /// Azure Storage Explorer's typed CSV: a `<Prop>@type` column after each property
    Csv,
    /// Apache Parquet: one typed column per property
    Parquet,
}

impl From<FormatArg> for FileFormat {
    fn from(format: FormatArg) -> FileFormat {
        match format {
            FormatArg::Jsonl => FileFormat::Jsonl,
            FormatArg::Csv => FileFormat::Csv,
            FormatArg::Parquet => FileFormat::Parquet,
        }
    }
}

/// How a `jsonl` or `csv` file is compressed: [`Compression`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CompressArg {
    /// Not compressed
    None,
    /// gzip (`.gz`)
    Gzip,
    /// Zstandard (`.zst`)
    Zstd,
}

impl From<CompressArg> for Compression {
    fn from(compression: CompressArg) -> Compression {
        match compression {
            CompressArg::None => Compression::None,
            CompressArg::Gzip => Compression::Gzip,
            CompressArg::Zstd => Compression::Zstd,
        }
    }
}

/// The format and compression given (`--format`, `--compress`), if any.
pub fn given_format(format: Option<FormatArg>, compress: Option<CompressArg>) -> Option<(FileFormat, Compression)> {
    format.map(|format| (format.into(), compress.map_or(Compression::None, Into::into)))
}

/// `tablectl copy`.
#[derive(clap::Args, Debug)]
pub struct CopyArgs {
    /// The table to read
    pub source: TableName,
    /// The table to write (created if it does not exist)
    pub target: TableName,
    /// The source's connection string [default: the global endpoint]
    #[arg(long, value_name = "STRING", conflicts_with = "from_url")]
    pub from_connection_string: Option<String>,
    /// The source's URL, with a SAS token as its query [default: the global endpoint]
    #[arg(long, value_name = "URL")]
    pub from_url: Option<String>,
    /// The target's connection string [default: the global endpoint]
    #[arg(long, value_name = "STRING", conflicts_with = "to_url")]
    pub to_connection_string: Option<String>,
    /// The target's URL, with a SAS token as its query [default: the global endpoint]
    #[arg(long, value_name = "URL")]
    pub to_url: Option<String>,
    /// An OData filter on the source, such as `PartitionKey eq 'eu' and Age ge 18`
    #[arg(long)]
    pub filter: Option<String>,
    /// What to do with an entity whose keys exist in the target
    #[arg(long, value_enum, default_value_t = ModeArg::Insert)]
    pub mode: ModeArg,
    /// Read this many key ranges of the source side by side
    #[arg(long, value_name = "N", default_value = "1")]
    pub parallel: NonZeroUsize,
    /// At most this many entities per second (0: no limit) [default: 20000 when either side is Azure Storage,
    /// no limit otherwise]
    #[arg(long, value_name = "N")]
    pub max_rate: Option<u64>,
    /// Send at most this many transactions (of up to 100 entities of a partition) at once [default: 8]
    #[arg(long, value_name = "N")]
    pub in_flight: Option<NonZeroUsize>,
    /// Where to write the entities that are not copied [default: TARGET.rejects.jsonl, written only if any]
    #[arg(long, value_name = "FILE")]
    pub reject: Option<PathBuf>,
    /// The checkpoint an interrupted copy resumes from [default: TARGET.copy-checkpoint.json; removed when the
    /// copy ends]
    #[arg(long, value_name = "FILE")]
    pub checkpoint: Option<PathBuf>,
    /// Start over instead of resuming the unfinished copy of the checkpoint
    #[arg(long)]
    pub force: bool,
}

/// `tablectl delete`.
#[derive(clap::Args, Debug)]
#[command(group(clap::ArgGroup::new("what").required(true).args(["filter", "all"])))]
pub struct DeleteArgs {
    /// The table
    pub table: TableName,
    /// An OData filter of the entities to delete, such as `PartitionKey eq 'eu' and Status eq 'cancelled'`
    #[arg(long)]
    pub filter: Option<String>,
    /// Delete every entity (the table stays, with its access policies)
    #[arg(long)]
    pub all: bool,
    /// Count the entities that would be deleted, and delete nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Delete without asking (needed when stdin is not a terminal)
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Read and delete this many key ranges side by side
    #[arg(long, value_name = "N", default_value = "1")]
    pub parallel: NonZeroUsize,
    /// Send at most this many transactions (of up to 100 deletes of a partition) at once, across the key ranges
    /// [default: 8 per key range]
    #[arg(long, value_name = "N")]
    pub in_flight: Option<NonZeroUsize>,
    /// The checkpoint an interrupted delete resumes from [default: TABLE.delete-checkpoint.json; removed when the
    /// delete ends]
    #[arg(long, value_name = "FILE")]
    pub checkpoint: Option<PathBuf>,
    /// Start over instead of resuming the unfinished delete of the checkpoint
    #[arg(long)]
    pub force: bool,
}

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
    /// The input's format [default: told by each file's name (`.jsonl`, `.csv.gz`, `.parquet`...), else by its
    /// content]
    #[arg(long, value_enum)]
    pub format: Option<FormatArg>,
    /// The input's compression, with `--format` [default: told by the file name or content]
    #[arg(long, value_enum, requires = "format")]
    pub compress: Option<CompressArg>,
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
    /// use table_model_cli::cli::ServiceRules;
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

/// `tablectl schema`.
#[derive(clap::Args, Debug)]
pub struct SchemaArgs {
    /// A table, or a file (JSON lines or Parquet): a value with a `.` or a `/` is a file (`./people` for one
    /// without either)
    #[arg(value_name = "TABLE|FILE")]
    pub source: String,
    /// Read at most this many entities
    #[arg(long, value_name = "N", default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..))]
    pub sample: u64,
    /// Print a `#[derive(TableEntity)]` struct that reads these entities, instead of the properties
    #[arg(long)]
    pub rust: bool,
}

/// `tablectl sql`.
#[cfg(feature = "sql")]
#[derive(clap::Args, Debug)]
pub struct SqlArgs {
    /// The statement, such as `SELECT "PartitionKey", count(*) FROM orders GROUP BY 1` (property names are
    /// case-sensitive: quote them; table names are not)
    pub statement: String,
    /// Write the rows to a file (its name tells the format: `.jsonl`, `.csv`, `.parquet`, optionally `.gz` or
    /// `.zst`), or `-` for stdout
    #[arg(short, long, value_name = "FILE|-")]
    pub output: Option<PathBuf>,
    /// The rows' format [default: told by the output file's name, else jsonl; on stdout, table on a terminal, jsonl
    /// otherwise or with --json]
    #[arg(long, value_enum)]
    pub format: Option<crate::rows::RowFormat>,
    /// Compress jsonl and csv [default: told by the output file's name, else none]
    #[arg(long, value_enum)]
    pub compress: Option<CompressArg>,
    /// Replace the output file if it exists
    #[arg(long)]
    pub force: bool,
    /// Infer each table's columns from its first N entities
    #[arg(long, value_name = "N", default_value = "1000")]
    pub sample: NonZeroUsize,
    /// Read up to N key ranges of a table side by side (DataFusion's `target_partitions`) [default: the number of
    /// CPU cores]
    #[arg(long, value_name = "N")]
    pub partitions: Option<NonZeroUsize>,
    /// Register only these tables, comma-separated or repeated, without listing the account's tables (for a SAS
    /// that cannot list them)
    #[arg(long = "table", value_name = "NAME", value_delimiter = ',')]
    pub tables: Vec<TableName>,
}
