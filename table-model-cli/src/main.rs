//! `tablectl`: see `docs/tablectl.md`. The logic is the `table_model_cli` library's.

fn main() -> std::process::ExitCode {
    // For the resume tests only (`table_model_cli::ABORT_AFTER_VAR`): abort once a run has done this many
    // entities, as a kill would.
    let abort_after = std::env::var(table_model_cli::ABORT_AFTER_VAR).ok().and_then(|n| n.parse().ok());
    table_model_cli::main(abort_after)
}
