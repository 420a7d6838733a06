//! `tablectl tables`: the account's tables, one name per line (`{"table":"..."}` lines with `--json`).

use super::Context;
use crate::error::{CliError, Outcome};
use crate::output::Style;
use futures::TryStreamExt as _;
use std::io::Write;
use table_model::Query;

/// Lists the tables.
///
/// # Errors
/// A failed request, or stdout closed.
pub async fn run(ctx: &Context, out: &mut impl Write) -> Result<Outcome, CliError> {
    let mut tables = ctx.service.list_tables(&Query::new(), None)?;
    while let Some(name) = tables.try_next().await? {
        match ctx.format {
            Style::Human => writeln!(out, "{name}"),
            Style::Json => writeln!(out, "{}", serde_json::json!({ "table": name.as_str() })),
        }
        .map_err(CliError::stdout)?;
    }
    Ok(Outcome::Done)
}
