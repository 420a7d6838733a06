//! `tablectl query TABLE [--filter F] [--select A,B] [--top N]`: entities as an aligned table on a terminal
//! (blocks of [`BLOCK`](crate::output::BLOCK) rows, each aligned on its own, so memory stays bounded), JSON lines
//! ([`table_model_transfer::format::jsonl`]) when piped or with `--json`.

use super::Context;
use crate::cli::QueryArgs;
use crate::error::{CliError, Outcome};
use crate::output::{self, Style};
use futures::{StreamExt as _, TryStreamExt as _};
use std::io::Write;
use table_model::Entity;
use table_model_transfer::format::jsonl;

/// The most entities one page may hold.
const PAGE_MAX: u64 = 1000;

/// Shows the entities.
///
/// # Errors
/// An invalid filter (before any request), a failed request, or stdout closed.
pub async fn run(ctx: &Context, args: &QueryArgs, out: &mut impl Write) -> Result<Outcome, CliError> {
    let query = table_model_transfer::scan::filtered(args.filter.as_deref())?;
    let mut query =
        table_model_transfer::scan::selecting(query, &["PartitionKey", "RowKey", "Timestamp"], &args.select);
    if let Some(top) = args.top {
        // Pages no larger than needed; the stream stops after `top`.
        query = query.top(top.clamp(1, PAGE_MAX) as usize);
    }
    let table = ctx.service.table_client(args.table.clone());
    let entities = table.query::<Entity>(&query, None)?;
    let mut entities = entities.take(args.top.map_or(usize::MAX, |n| usize::try_from(n).unwrap_or(usize::MAX)));
    let mut block = Vec::new();
    let mut line = Vec::new();
    while let Some(entity) = entities.try_next().await? {
        match ctx.format {
            Style::Human => {
                block.push(entity);
                if block.len() == crate::output::BLOCK {
                    out.write_all(output::table(&block).as_bytes()).map_err(CliError::stdout)?;
                    block.clear();
                }
            }
            Style::Json => {
                line.clear();
                jsonl::write_entity(&entity, &mut line)
                    .map_err(|e| CliError::failed(format!("cannot write entity {}: {e}", output::keys(&entity))))?;
                out.write_all(&line).map_err(CliError::stdout)?;
            }
        }
    }
    if !block.is_empty() {
        out.write_all(output::table(&block).as_bytes()).map_err(CliError::stdout)?;
    }
    Ok(Outcome::Done)
}
