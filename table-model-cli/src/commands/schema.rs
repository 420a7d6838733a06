//! `tablectl schema`: not built yet (issue 15).

use super::Context;
use crate::error::{CliError, Outcome};
use std::io::Write;

/// `tablectl schema`.
#[derive(clap::Args, Debug)]
pub struct SchemaArgs {
    /// What to read
    pub input: String,
}

/// Runs `tablectl schema`.
///
/// # Errors
/// Always, for now.
pub async fn run(_ctx: &Context, _args: &SchemaArgs, _out: &mut impl Write) -> Result<Outcome, CliError> {
    Err(CliError::invalid("`tablectl schema` is not built yet"))
}
