//! `tablectl export TABLE -o FILE|DIR|- [--filter F] [--select A,B] [--format F]`: the entities in a file format
//! ([`crate::format`]), streamed page by page. To a directory, the data goes to `TABLE.jsonl` (or the format's
//! extension) and a
//! [`Manifest`] beside it is written last, once every entity is written: a directory without a manifest holds an
//! export that did not finish.

use super::Context;
use crate::cli::ExportArgs;
use crate::error::{CliError, Outcome};
use crate::format::{self, Sink, WriteOptions};
use crate::manifest::{Manifest, ManifestFile, FORMAT};
use crate::progress::Progress;
use futures::TryStreamExt as _;
use std::io::Write;
use std::path::{Path, PathBuf};
use table_model::Entity;

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

/// Exports the entities.
///
/// # Errors
/// An invalid filter or a file that exists (before any request), a failed request, or a write that failed.
pub async fn run(ctx: &Context, args: &ExportArgs, out: &mut impl Write) -> Result<Outcome, CliError> {
    let query = super::filtered(args.filter.as_deref())?;
    let query = super::selecting(query, &["PartitionKey", "RowKey"], &args.select);
    let schema = match (&args.schema, args.format) {
        (Some(path), format::FileFormat::Parquet) => Some(format::parquet::read_schema(path)?),
        (Some(_), _) => return Err(CliError::invalid("--schema is for --format parquet")),
        (None, _) => None,
    };
    let destination = Destination::of(&args.output);
    let file_name = args.format.file_name(args.table.as_str(), None, args.compress);
    let data_path = match &destination {
        Destination::Stdout => None,
        Destination::File(path) => Some(path.clone()),
        Destination::Dir(dir) => {
            std::fs::create_dir_all(dir).map_err(|e| CliError::io("create", dir, e))?;
            let manifest = dir.join(crate::manifest::FILE_NAME);
            if manifest.exists() {
                if !args.force {
                    return Err(CliError::invalid(format!(
                        "`{}` already holds an export; give --force to replace it",
                        dir.display()
                    )));
                }
                // The old manifest goes first: an export that fails midway leaves no manifest, as documented.
                std::fs::remove_file(&manifest).map_err(|e| CliError::io("remove", &manifest, e))?;
            }
            Some(dir.join(&file_name))
        }
    };
    let started = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let sink = match &data_path {
        Some(path) => Sink::create(path, args.force)?,
        None => Sink::stream("stdout", &mut *out),
    };
    let options = WriteOptions { format: args.format, compression: args.compress, schema };
    let mut writer = format::create_writer(sink, &options)?;

    let table = ctx.service.table_client(args.table.clone());
    let mut entities = table.query::<Entity>(&query, None)?;
    let progress = Progress::entities("export");
    let mut count = 0_u64;
    while let Some(entity) = entities.try_next().await? {
        writer.write(&entity)?;
        count += 1;
        if count.is_multiple_of(100) {
            progress.set_entities(count);
            progress.set_bytes(writer.bytes());
        }
    }
    let written = writer.finish()?;
    progress.finish();
    let (bytes, sha256) = (written.bytes, written.sha256.clone());

    if let Destination::Dir(dir) = &destination {
        let manifest = Manifest {
            format: FORMAT.to_owned(),
            tool: crate::TOOL.to_owned(),
            table: args.table.to_string(),
            filter: args.filter.clone(),
            select: (!args.select.is_empty()).then(|| args.select.clone()),
            started,
            files: vec![ManifestFile {
                path: file_name,
                entities: written.entities,
                bytes,
                sha256: sha256.clone(),
                first: written.first,
                last: written.last,
            }],
        };
        manifest.write(dir)?;
    }
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
