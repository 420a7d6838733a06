//! The command line, declared with clap's derive API: global endpoint options and `--json`, one subcommand per
//! operation.

use crate::endpoint::EndpointArgs;
use crate::format::{Compression, FileFormat};
use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;
use table_model::TableName;

/// List, count, query, export and import Azure Table service tables (Azure Table Storage, Cosmos DB for Table,
/// Azurite). Data goes to stdout, progress and diagnostics to stderr.
#[derive(Parser, Debug)]
#[command(name = "tablectl", version, max_term_width = 110)]
pub struct Cli {
    /// The endpoint.
    #[command(flatten)]
    pub endpoint: EndpointArgs,
    /// Write results as JSON lines, even on a terminal
    #[arg(long, global = true)]
    pub json: bool,
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
    /// Export a table's entities as JSON lines, to a file, a directory (with a manifest) or stdout
    Export(ExportArgs),
    /// Import JSON lines from a file, an export directory or stdin into a table
    Import(ImportArgs),
    /// Copy a table's entities into another table, on the same endpoint or another
    Copy(crate::commands::copy::CopyArgs),
    /// Report every entity of a file or table that a service would refuse; sends nothing
    Validate(crate::commands::validate::ValidateArgs),
    /// Show the properties of a table or file: their EDM types, how many entities carry each, conflicts
    Schema(crate::commands::schema::SchemaArgs),
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
    /// The file format
    #[arg(long, value_enum, default_value_t = FileFormat::Jsonl)]
    pub format: FileFormat,
    /// Compress `jsonl` and `csv` files
    #[arg(long, value_enum, default_value_t = Compression::None)]
    pub compress: Compression,
    /// The columns of `--format parquet`: a schema file, as `tablectl schema TABLE --json` prints it [default:
    /// inferred from the first 1000 entities]
    #[arg(long, value_name = "FILE")]
    pub schema: Option<PathBuf>,
    /// Replace files that already exist
    #[arg(long)]
    pub force: bool,
}

/// `tablectl import`.
#[derive(clap::Args, Debug)]
pub struct ImportArgs {
    /// A JSON lines file, an export directory (its manifest is checked first), or `-` for stdin
    #[arg(value_name = "FILE|DIR|-")]
    pub input: PathBuf,
    /// The table (created if it does not exist)
    pub table: TableName,
    /// What to do with an entity whose keys exist in the table
    #[arg(long, value_enum, default_value_t = ImportMode::Insert)]
    pub mode: ImportMode,
    /// Where to write the entities that are not imported [default: TABLE.rejects.jsonl, written only if any]
    #[arg(long, value_name = "FILE")]
    pub reject: Option<PathBuf>,
    /// The input's format [default: told by each file's name (`.jsonl`, `.csv.gz`, `.parquet`...); `jsonl` for
    /// stdin]
    #[arg(long, value_enum)]
    pub format: Option<FileFormat>,
    /// The input's compression, with `--format` [default: told by the file name; none for stdin]
    #[arg(long, value_enum, requires = "format")]
    pub compress: Option<Compression>,
}

/// How `import` writes each entity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ImportMode {
    /// Insert; an entity whose keys exist is rejected (alone: the others of its transaction are written)
    Insert,
    /// Insert; an entity whose keys exist is skipped, and the stored one kept
    InsertOrSkip,
    /// Insert, or merge its properties into the existing entity
    Merge,
    /// Insert, or replace the existing entity
    Replace,
}
