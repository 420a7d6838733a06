//! `tablectl completions SHELL`: the shell's completion script, from the same clap definition as the parser.

use crate::cli::Cli;
use crate::error::{CliError, Outcome};
use clap::CommandFactory as _;
use std::io::Write;

/// Writes the completion script.
///
/// ```
/// let mut script = Vec::new();
/// table_model_cli::commands::completions::run(clap_complete::Shell::Bash, &mut script)?;
/// assert!(String::from_utf8(script)?.contains("tablectl"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// stdout closed.
pub fn run(shell: clap_complete::Shell, out: &mut impl Write) -> Result<Outcome, CliError> {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "tablectl", &mut script);
    out.write_all(&script).map_err(CliError::stdout)?;
    Ok(Outcome::Done)
}
