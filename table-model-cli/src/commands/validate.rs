//! `tablectl validate`: not built yet (issue 15).

use super::Context;
use crate::error::{CliError, Outcome};
use std::io::Write;

/// `tablectl validate`.
#[derive(clap::Args, Debug)]
pub struct ValidateArgs {
    /// What to read
    pub input: String,
}

/// Runs `tablectl validate`.
///
/// # Errors
/// Always, for now.
pub async fn run(_ctx: &Context, _args: &ValidateArgs, _out: &mut impl Write) -> Result<Outcome, CliError> {
    Err(CliError::invalid("`tablectl validate` is not built yet"))
}
