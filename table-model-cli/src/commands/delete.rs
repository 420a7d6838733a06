//! `tablectl delete TABLE (--filter F | --all) [--dry-run] [--yes] [--parallel N] [--in-flight N]`: counts the
//! entities first ([`table_model_transfer::count`]), asks on a terminal unless `--yes`, then deletes them
//! ([`table_model_transfer::delete`], the engine SQL's `DELETE` runs on): each under the ETag it was read with, an
//! entity changed meanwhile left as it is and listed (status 1). Resumable.

use super::Context;
use crate::cli::DeleteArgs;
use crate::error::{CliError, Outcome};
use std::io::{BufRead as _, IsTerminal as _, Write};
use table_model_transfer::delete::{delete, DeleteOptions};
use table_model_transfer::progress::Operation;

/// Counts, asks, deletes.
///
/// # Errors
/// An invalid filter (before any request), stdin that is no terminal without `--yes`, a failed request, a
/// checkpoint that cannot be written.
pub async fn run(ctx: &Context, args: &DeleteArgs, out: &mut impl Write) -> Result<Outcome, CliError> {
    let table = ctx.service.table_client(args.table.clone());
    let what = match &args.filter {
        Some(filter) => format!("matching `{filter}`"),
        None => "(all)".to_owned(),
    };
    // The count is not the operation the test-only abort is for: it counts the entities deleted.
    let count_control = super::control(Operation::Count, &ctx.cancel, None);
    let count =
        table_model_transfer::count::count(&table, args.filter.as_deref(), args.parallel, &count_control).await?;
    if args.dry_run || count == 0 {
        eprintln!("tablectl: {count} entities of {} {what}; nothing deleted", args.table);
        if ctx.json {
            let json = serde_json::json!({ "table": args.table.as_str(), "matched": count, "deleted": 0 });
            writeln!(out, "{json}").map_err(CliError::stdout)?;
        }
        return Ok(Outcome::Done);
    }
    if !args.yes {
        if !std::io::stdin().is_terminal() {
            return Err(CliError::invalid(format!(
                "{count} entities of {} {what} would be deleted: give --yes to delete without asking (stdin is not a \
                 terminal), or --dry-run to count only",
                args.table
            )));
        }
        eprint!("tablectl: delete {count} entities of {} {what}? [y/N] ", args.table);
        let mut answer = String::new();
        std::io::stdin()
            .lock()
            .read_line(&mut answer)
            .map_err(|e| CliError::failed(format!("cannot read stdin: {e}")))?;
        if !matches!(answer.trim(), "y" | "Y" | "yes") {
            eprintln!("tablectl: nothing deleted");
            return Ok(Outcome::Done);
        }
    }
    let mut options = match &args.filter {
        Some(filter) => DeleteOptions::matching(filter.clone()),
        None => DeleteOptions::all(),
    };
    options = options.parallel(args.parallel).force(args.force);
    options.checkpoint = args.checkpoint.clone();
    options.in_flight = args.in_flight;
    let summary = delete(&table, &options, &ctx.control(Operation::Delete)).await?;
    let changed = match summary.changed.len() {
        0 => String::new(),
        n => format!("; {n} changed since they were read, kept"),
    };
    eprintln!("tablectl: deleted {} entities of {}{changed}", summary.deleted, args.table);
    for (partition_key, row_key) in &summary.changed {
        eprintln!("tablectl: kept (changed meanwhile): PartitionKey `{partition_key}`, RowKey `{row_key}`");
    }
    if ctx.json {
        let changed: Vec<serde_json::Value> =
            summary.changed.iter().map(|(p, r)| serde_json::json!({ "partition_key": p, "row_key": r })).collect();
        let json = serde_json::json!({
            "table": args.table.as_str(),
            "matched": count,
            "deleted": summary.deleted,
            "changed": changed,
        });
        writeln!(out, "{json}").map_err(CliError::stdout)?;
    }
    Ok(if summary.changed.is_empty() { Outcome::Done } else { Outcome::Partial })
}
