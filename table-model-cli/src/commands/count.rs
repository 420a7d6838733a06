//! `tablectl count TABLE [--filter F] [--parallel N]`: the number of entities, reading their keys only
//! ([`table_model_transfer::count`]). The number alone on stdout; `{"table":...,"count":...}` with `--json`.

use super::Context;
use crate::cli::CountArgs;
use crate::error::{CliError, Outcome};
use std::io::Write;
use table_model_transfer::progress::Operation;

/// Counts the entities.
///
/// # Errors
/// An invalid filter (before any request), a failed request, or stdout closed.
pub async fn run(ctx: &Context, args: &CountArgs, out: &mut impl Write) -> Result<Outcome, CliError> {
    let table = ctx.service.table_client(args.table.clone());
    let control = ctx.control(Operation::Count);
    let count = table_model_transfer::count::count(&table, args.filter.as_deref(), args.parallel, &control).await?;
    if ctx.json {
        writeln!(out, "{}", serde_json::json!({ "table": args.table.as_str(), "count": count }))
    } else {
        writeln!(out, "{count}")
    }
    .map_err(CliError::stdout)?;
    Ok(Outcome::Done)
}
