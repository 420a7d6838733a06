//! `tablectl`: see `docs/tablectl.md`. The logic is the `table_model_cli` library's.

fn main() -> std::process::ExitCode {
    table_model_cli::main()
}
