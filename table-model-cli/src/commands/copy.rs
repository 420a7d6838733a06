//! `tablectl copy`: not built yet (issue 15).

use super::Context;
use crate::error::{CliError, Outcome};
use std::io::Write;

/// `tablectl copy`.
#[derive(clap::Args, Debug)]
pub struct CopyArgs {
    /// What to read
    pub input: String,
}

/// Runs `tablectl copy`.
///
/// # Errors
/// Always, for now.
pub async fn run(_ctx: &Context, _args: &CopyArgs, _out: &mut impl Write) -> Result<Outcome, CliError> {
    Err(CliError::invalid("`tablectl copy` is not built yet"))
}
