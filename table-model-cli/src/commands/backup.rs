//! `tablectl backup TABLE... -o DIR [--all]`: [`table_model_transfer::backup`], each table's next generation
//! into `DIR/TABLE/`; `tablectl backup verify DIR` and `tablectl backup prune DIR --keep N`, offline. Summaries
//! on stderr (and with `--json`, one JSON object per table on stdout); `verify` writes its report on stdout.

use super::Context;
use crate::cli::{BackupAction, BackupArgs};
use crate::error::{CliError, Outcome};
use crate::output::Style;
use futures::TryStreamExt as _;
use std::io::Write;
use std::path::Path;
use std::time::Duration;
use table_model::Query;
use table_model_transfer::backup::prune::prune;
use table_model_transfer::backup::verify::{table_dirs, verify};
use table_model_transfer::backup::{backup, table_dir, BackupOptions};
use table_model_transfer::format::Compression;
use table_model_transfer::progress::Operation;

/// The engine's options of the arguments.
pub fn options(args: &BackupArgs) -> BackupOptions {
    let mut options = BackupOptions::default()
        .format(args.format.into())
        .compress(args.compress.map_or(Compression::None, Into::into))
        .parallel(args.parallel)
        .margin(Duration::from_secs(args.margin))
        .full(args.full)
        .force(args.force);
    options.shard = args.shard;
    options.max_rate = args.max_rate;
    options
}

/// Takes the next generation of each table's backup, one table after another.
///
/// # Errors
/// As [`backup`]; the first table that fails stops the run (the tables before it are backed up).
pub async fn run(ctx: &Context, args: &BackupArgs, out: &mut impl Write) -> Result<Outcome, CliError> {
    let root = args.output.as_deref().ok_or_else(|| CliError::invalid("give the backup's directory: -o DIR"))?;
    let mut tables = args.tables.clone();
    if args.all {
        let mut listed = ctx.service.list_tables(&Query::new(), None)?;
        while let Some(name) = listed.try_next().await? {
            tables.push(name);
        }
    }
    let options = options(args);
    for name in &tables {
        let table = ctx.service.table_client(name.clone());
        let summary = backup(&table, &table_dir(root, name), &options, &ctx.control(Operation::Backup)).await?;
        let kind = format!("{:?}", summary.kind).to_lowercase();
        eprintln!(
            "tablectl: backed up {name}: generation {} ({kind}), {} entities, {} deleted, {} keys, {} bytes in `{}`",
            summary.generation,
            summary.entities,
            summary.deleted,
            summary.keys,
            summary.bytes,
            summary.dir.display()
        );
        if ctx.json {
            let json = serde_json::json!({
                "table": name.as_str(),
                "generation": summary.generation,
                "kind": kind,
                "entities": summary.entities,
                "deleted": summary.deleted,
                "keys": summary.keys,
                "bytes": summary.bytes,
                "watermark": summary.watermark,
                "resumed": summary.resumed,
                "path": summary.dir.display().to_string(),
            });
            writeln!(out, "{json}").map_err(CliError::stdout)?;
        }
    }
    Ok(Outcome::Done)
}

/// `backup verify` and `backup prune`: offline, no endpoint.
///
/// # Errors
/// As [`verify`] and [`prune`]; a directory that holds no backup.
pub fn run_offline(action: &BackupAction, style: Style, out: &mut impl Write) -> Result<Outcome, CliError> {
    let dir = match action {
        BackupAction::Verify { dir } | BackupAction::Prune { dir, .. } => dir,
    };
    let dirs = backups_in(dir)?;
    for table_dir in &dirs {
        match action {
            BackupAction::Verify { .. } => {
                let summary = verify(table_dir)?;
                let generations = summary.generations.iter().map(ToString::to_string).collect::<Vec<_>>();
                let unfinished =
                    summary.unfinished.map_or_else(String::new, |n| format!(" (generation {n} unfinished)"));
                match style {
                    Style::Human => writeln!(
                        out,
                        "{}: table {}, generations {}, {} files, {} bytes: ok{unfinished}",
                        table_dir.display(),
                        summary.table,
                        generations.join(" "),
                        summary.files,
                        summary.bytes
                    ),
                    Style::Json => writeln!(
                        out,
                        "{}",
                        serde_json::json!({
                            "path": table_dir.display().to_string(),
                            "table": summary.table,
                            "generations": summary.generations,
                            "files": summary.files,
                            "bytes": summary.bytes,
                            "unfinished": summary.unfinished,
                        })
                    ),
                }
                .map_err(CliError::stdout)?;
            }
            BackupAction::Prune { keep, .. } => {
                let summary = prune(table_dir, *keep)?;
                match summary.base {
                    Some(base) => eprintln!(
                        "tablectl: pruned `{}`: generation {base} is the base ({} entities), removed {:?}",
                        table_dir.display(),
                        summary.entities,
                        summary.removed
                    ),
                    None => {
                        eprintln!("tablectl: `{}` has at most {keep} generations: nothing to fold", table_dir.display())
                    }
                }
                if style == Style::Json {
                    let json = serde_json::json!({
                        "path": table_dir.display().to_string(),
                        "base": summary.base,
                        "removed": summary.removed,
                        "entities": summary.entities,
                    });
                    writeln!(out, "{json}").map_err(CliError::stdout)?;
                }
            }
        }
    }
    Ok(Outcome::Done)
}

/// The tables' backup directories in `dir` (it, or its subdirectories); none is invalid input.
fn backups_in(dir: &Path) -> Result<Vec<std::path::PathBuf>, CliError> {
    if !dir.is_dir() {
        return Err(CliError::invalid(format!("`{}` is not a directory", dir.display())));
    }
    let dirs = table_dirs(dir)?;
    if dirs.is_empty() {
        return Err(CliError::invalid(format!(
            "`{}` holds no backup: no finished generation in it or in a directory of it",
            dir.display()
        )));
    }
    Ok(dirs)
}
