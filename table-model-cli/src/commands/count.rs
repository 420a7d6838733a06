//! `tablectl count TABLE [--filter F]`: the number of entities, reading their keys only.

use super::Context;
use crate::cli::CountArgs;
use crate::error::{CliError, Outcome};
use crate::output::Format;
use crate::progress::Progress;
use futures::TryStreamExt as _;
use std::io::Write;
use table_model::Entity;

/// Counts the entities.
///
/// # Errors
/// An invalid filter (before any request), a failed request, or stdout closed.
pub async fn run(ctx: &Context, args: &CountArgs, out: &mut impl Write) -> Result<Outcome, CliError> {
    let query = super::filtered(args.filter.as_deref())?.select(["PartitionKey", "RowKey"]);
    let table = ctx.service.table_client(args.table.clone());
    let mut entities = table.query::<Entity>(&query, None)?;
    let progress = Progress::entities("count");
    let mut count = 0_u64;
    while entities.try_next().await?.is_some() {
        count += 1;
        if count.is_multiple_of(1000) {
            progress.set_entities(count);
        }
    }
    progress.finish();
    match ctx.format {
        Format::Human => writeln!(out, "{count}"),
        Format::Json => writeln!(out, "{}", serde_json::json!({ "table": args.table.as_str(), "count": count })),
    }
    .map_err(CliError::stdout)?;
    Ok(Outcome::Done)
}
