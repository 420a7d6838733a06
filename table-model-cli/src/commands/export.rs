//! `tablectl export TABLE -o FILE|DIR|- [--filter F] [--select A,B]`: the entities as JSON lines
//! ([`crate::jsonl`]), streamed page by page. To a directory, the data goes to `TABLE.jsonl` and a
//! [`Manifest`] beside it is written last, once every entity is written: a directory without a manifest holds an
//! export that did not finish.

use super::Context;
use crate::cli::ExportArgs;
use crate::error::{CliError, Outcome};
use crate::jsonl;
use crate::manifest::{Hashing, Keys, Manifest, ManifestFile, FORMAT};
use crate::progress::Progress;
use futures::TryStreamExt as _;
use std::fs::OpenOptions;
use std::io::{BufWriter, Write};
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

/// Creates a file, refusing one that exists unless `force`.
fn create(path: &Path, force: bool) -> Result<std::fs::File, CliError> {
    let mut options = OpenOptions::new();
    options.write(true);
    if force {
        options.create(true).truncate(true);
    } else {
        options.create_new(true);
    }
    options.open(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::AlreadyExists => {
            CliError::invalid(format!("`{}` already exists; give --force to replace it", path.display()))
        }
        _ => CliError::io("create", path, e),
    })
}

/// Exports the entities.
///
/// # Errors
/// An invalid filter or a file that exists (before any request), a failed request, or a write that failed.
pub async fn run(ctx: &Context, args: &ExportArgs, out: &mut impl Write) -> Result<Outcome, CliError> {
    let query = super::filtered(args.filter.as_deref())?;
    let query = super::selecting(query, &["PartitionKey", "RowKey"], &args.select);
    let destination = Destination::of(&args.output);
    let file_name = format!("{}.jsonl", args.table);
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
    let sink: Box<dyn Write + '_> = match &data_path {
        Some(path) => Box::new(BufWriter::with_capacity(256 * 1024, create(path, args.force)?)),
        None => Box::new(&mut *out),
    };
    let mut sink = Hashing::new(sink);
    let write_error = |e: std::io::Error| match &data_path {
        Some(path) => CliError::io("write", path, e),
        None => CliError::stdout(e),
    };

    let table = ctx.service.table_client(args.table.clone());
    let mut entities = table.query::<Entity>(&query, None)?;
    let progress = Progress::entities("export");
    let (mut count, mut first, mut last) = (0_u64, None, None);
    let mut line = Vec::new();
    while let Some(entity) = entities.try_next().await? {
        line.clear();
        jsonl::write_entity(&entity, &mut line)
            .map_err(|e| CliError::failed(format!("cannot write entity {}: {e}", crate::output::keys(&entity))))?;
        sink.write_all(&line).map_err(write_error)?;
        let keys = Keys { partition_key: entity.partition_key().to_string(), row_key: entity.row_key().to_string() };
        if first.is_none() {
            first = Some(keys.clone());
        }
        last = Some(keys);
        count += 1;
        if count.is_multiple_of(100) {
            progress.set_entities(count);
            progress.set_bytes(sink.bytes);
        }
    }
    sink.flush().map_err(write_error)?;
    progress.finish();
    let (bytes, sha256) = (sink.bytes, sink.hex());
    drop(sink);

    if let Destination::Dir(dir) = &destination {
        let manifest = Manifest {
            format: FORMAT.to_owned(),
            tool: crate::TOOL.to_owned(),
            table: args.table.to_string(),
            filter: args.filter.clone(),
            select: (!args.select.is_empty()).then(|| args.select.clone()),
            started,
            files: vec![ManifestFile { path: file_name, entities: count, bytes, sha256: sha256.clone(), first, last }],
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
