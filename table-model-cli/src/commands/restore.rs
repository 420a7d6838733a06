//! `tablectl restore DIR TABLE [--from SOURCE] [--generation N | --at TIME] [--exact] [--timestamp-as NAME]`:
//! [`table_model_transfer::backup::restore`], its summary on stderr (and with `--json`, on stdout).

use super::Context;
use crate::cli::RestoreArgs;
use crate::error::{CliError, Outcome};
use std::io::Write;
use table_model_transfer::backup::restore::{restore, RestoreOptions};
use table_model_transfer::backup::table_dir;
use table_model_transfer::backup::verify::table_dirs;
use table_model_transfer::progress::Operation;

/// The engine's options of the arguments.
pub fn options(args: &RestoreArgs) -> RestoreOptions {
    let mut options = RestoreOptions::default().exact(args.exact).force(args.force);
    options.generation = args.generation;
    options.at = args.at;
    options.timestamp_as = args.timestamp_as.clone();
    options.max_rate = args.max_rate;
    options.in_flight = args.in_flight;
    options
}

/// Restores the table.
///
/// # Errors
/// As [`restore`]; a directory that holds no backup of the table.
pub async fn run(ctx: &Context, args: &RestoreArgs, out: &mut impl Write) -> Result<Outcome, CliError> {
    let source = args.from.as_ref().unwrap_or(&args.table);
    // The directory is one table's backup, or a backup of several tables (`backup -o DIR`).
    let holds_one = args.dir.is_dir() && table_dirs(&args.dir)?.first() == Some(&args.dir);
    let dir = if holds_one { args.dir.clone() } else { table_dir(&args.dir, source) };
    if !dir.is_dir() {
        return Err(CliError::invalid(format!(
            "`{}` holds no backup of table {source}: give the directory of `backup -o`, or one table's",
            args.dir.display()
        )));
    }
    let table = ctx.service.table_client(args.table.clone());
    let summary = restore(&dir, &table, &options(args), &ctx.control(Operation::Restore)).await?;
    let deleted = match summary.deleted {
        0 => String::new(),
        n => format!("; {n} entities not in the backup deleted"),
    };
    eprintln!(
        "tablectl: restored {} entities into {} as of generation {} ({}){deleted}",
        summary.restored, args.table, summary.generation, summary.as_of
    );
    if ctx.json {
        let json = serde_json::json!({
            "table": args.table.as_str(),
            "generation": summary.generation,
            "as_of": summary.as_of,
            "restored": summary.restored,
            "deleted": summary.deleted,
            "resumed": summary.resumed,
        });
        writeln!(out, "{json}").map_err(CliError::stdout)?;
    }
    Ok(Outcome::Done)
}
