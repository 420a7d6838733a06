//! `tablectl count TABLE [--filter F] [--parallel N]`: the number of entities, reading their keys only, key
//! ranges side by side ([`crate::scan`]).

use super::Context;
use crate::cli::CountArgs;
use crate::error::{CliError, Outcome};
use crate::output::Format;
use crate::progress::Progress;
use crate::scan::{self, RangeStart, Shard};
use futures::TryStreamExt as _;
use std::io::Write;

/// Counts the entities.
///
/// # Errors
/// An invalid filter (before any request), a failed request, or stdout closed.
pub async fn run(ctx: &Context, args: &CountArgs, out: &mut impl Write) -> Result<Outcome, CliError> {
    let query = super::filtered(args.filter.as_deref())?.select(["PartitionKey", "RowKey"]);
    let table = ctx.service.table_client(args.table.clone());
    let plan = scan::plan(&table, &query, args.parallel, Shard::ALL).await?;
    let starts = plan.mine.into_iter().enumerate().map(|(index, range)| RangeStart { index, range, from: None });
    let progress = Progress::entities("count");
    let mut count = 0_u64;
    scan::scan_pages(&table, &query, starts.collect(), args.parallel)
        .try_for_each(|page| {
            count += page.entities.len() as u64;
            progress.set_entities(count);
            async { Ok(()) }
        })
        .await?;
    progress.finish();
    match ctx.format {
        Format::Human => writeln!(out, "{count}"),
        Format::Json => writeln!(out, "{}", serde_json::json!({ "table": args.table.as_str(), "count": count })),
    }
    .map_err(CliError::stdout)?;
    Ok(Outcome::Done)
}
