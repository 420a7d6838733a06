//! `tablectl export TABLE -o FILE|DIR|- [--filter F] [--select A,B] [--format F] [--parallel N] [--shard K/N]
//! [--split-size SIZE] [--max-rate N]`: [`table_model_transfer::export`], its summary on stderr (and with
//! `--json`, on stdout).

use super::Context;
use crate::cli::ExportArgs;
use crate::error::{CliError, Outcome};
use std::io::Write;
use table_model_transfer::export::{export, schema_for, ExportOptions, ExportSummary, ExportTarget};
use table_model_transfer::progress::Operation;

/// The engine's options of the arguments (the `--schema` file read).
///
/// # Errors
/// A schema file that cannot be read, or given for a format other than Parquet.
pub fn options(args: &ExportArgs) -> Result<ExportOptions, CliError> {
    let (format, compression) = args.file_format();
    let mut options = ExportOptions::default().format(format).compress(compression).force(args.force);
    options = options.parallel(args.parallel).select(args.select.iter().cloned());
    options.filter = args.filter.clone();
    options.shard = args.shard;
    options.split_size = args.split_size;
    options.max_rate = args.max_rate;
    options.schema = args.schema.as_deref().map(|path| schema_for(format, path)).transpose()?;
    Ok(options)
}

/// Exports the entities.
///
/// # Errors
/// As [`export`].
pub async fn run(ctx: &Context, args: &ExportArgs, out: &mut impl Write) -> Result<Outcome, CliError> {
    let options = options(args)?;
    let table = ctx.service.table_client(args.table.clone());
    let control = ctx.control(Operation::Export);
    let to_stdout = args.output.as_os_str() == "-";
    let summary = if to_stdout {
        export(&table, ExportTarget::Writer { name: "stdout", out: &mut *out }, &options, &control).await?
    } else {
        export(&table, ExportTarget::path(&args.output), &options, &control).await?
    };
    let ExportSummary { entities, bytes, .. } = summary;
    let target = match (&summary.path, summary.files.as_slice()) {
        (None, _) => "stdout".to_owned(),
        (Some(dir), [one]) if dir.is_dir() => format!("`{}`", dir.join(&one.path).display()),
        (Some(dir), files) if dir.is_dir() => format!("{} files in `{}`", files.len(), dir.display()),
        (Some(file), _) => format!("`{}`", file.display()),
    };
    eprintln!("tablectl: exported {entities} entities ({bytes} bytes) of {} to {target}", args.table);
    if ctx.json && !to_stdout {
        let dir = summary.path.as_ref().filter(|p| p.is_dir());
        let path = match (dir, summary.files.as_slice()) {
            (Some(dir), [one]) => dir.join(&one.path),
            _ => summary.path.clone().unwrap_or_default(),
        };
        let mut json = serde_json::json!({
            "table": args.table.as_str(),
            "entities": entities,
            "bytes": bytes,
            "sha256": summary.sha256,
            "path": path.display().to_string(),
        });
        if dir.is_some() {
            json["files"] = summary.files.len().into();
        }
        writeln!(out, "{json}").map_err(CliError::stdout)?;
    }
    Ok(Outcome::Done)
}
