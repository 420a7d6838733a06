//! `tablectl import FILE|DIR|- TABLE [--mode insert|insert-or-skip|merge|replace] [--reject FILE]`:
//! [`table_model_transfer::import`], its summary on stderr (and with `--json`, on stdout). Entities not imported
//! make the outcome [`Outcome::Partial`].

use super::Context;
use crate::cli::{given_format, ImportArgs};
use crate::error::{CliError, Outcome};
use std::io::Write;
use table_model_transfer::import::{import, ImportOptions};
use table_model_transfer::progress::Operation;

/// The engine's options of the arguments.
pub fn options(args: &ImportArgs) -> ImportOptions {
    let mut options = ImportOptions::default().mode(args.mode.into()).force(args.force);
    options.reject = args.reject.clone();
    options.format = given_format(args.format, args.compress);
    options.max_rate = args.max_rate;
    options.in_flight = args.in_flight;
    options.checkpoint = args.checkpoint.clone();
    options
}

/// Imports the entities.
///
/// # Errors
/// As [`import`].
pub async fn run(ctx: &Context, args: &ImportArgs, out: &mut impl Write) -> Result<Outcome, CliError> {
    let table = ctx.service.table_client(args.table.clone());
    let control = ctx.control(Operation::Import);
    let summary = import(&table, &args.input, &options(args), &control).await?;
    let skipped = match summary.skipped {
        0 => String::new(),
        n => format!("; {n} skipped (their keys exist)"),
    };
    let rejected = match &summary.rejects {
        Some(path) => format!("; {} rejected, see `{}`", summary.rejected, path.display()),
        None => String::new(),
    };
    eprintln!("tablectl: imported {} entities into {}{skipped}{rejected}", summary.imported, args.table);
    if ctx.json {
        let json = serde_json::json!({
            "table": args.table.as_str(),
            "imported": summary.imported,
            "skipped": summary.skipped,
            "rejected": summary.rejected,
            "rejects": summary.rejects.as_ref().map(|p| p.display().to_string()),
        });
        writeln!(out, "{json}").map_err(CliError::stdout)?;
    }
    Ok(if summary.rejected > 0 { Outcome::Partial } else { Outcome::Done })
}
