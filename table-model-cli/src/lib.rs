//! `tablectl`, the command-line tool of [`table_model`]: export, import, copy, validate, inspect and query tables
//! of Azure Table Storage, Cosmos DB for Table and Azurite. The transfer operations are the
//! [`table_model_transfer`] engine's; this crate parses the command line ([`cli`], [`endpoint`]), runs the
//! command ([`commands`]) and renders what it gives ([`output`], [`progress`]). The binary (`src/main.rs`) only
//! calls [`main`]. See `docs/tablectl.md` for the commands, endpoints, exit codes, formats, resume and sharding.
//!
//! Data goes to stdout, progress and diagnostics to stderr, and the exit status tells the [`Outcome`] apart.
//!
//! The default cargo feature `sql` adds `tablectl sql` (the modules `catalog`, `rows` and `commands::sql`),
//! SQL through Apache DataFusion and table-model-datafusion, which need Rust 1.94; without it
//! (`--no-default-features`) the tool builds without DataFusion on the workspace's Rust.
//!
//! ```
//! use clap::Parser as _;
//! use table_model_cli::cli::{Cli, Command};
//! let cli = Cli::try_parse_from(["tablectl", "count", "People", "--filter", "Age ge 18"])?;
//! assert!(matches!(cli.command, Command::Count(_)));
//! # Ok::<(), clap::Error>(())
//! ```
#![deny(missing_docs, missing_debug_implementations)]

#[cfg(feature = "sql")]
pub mod catalog;
pub mod cli;
pub mod commands;
pub mod diagnostics;
pub mod endpoint;
pub mod error;
pub mod output;
pub mod progress;
#[cfg(feature = "sql")]
pub mod rows;
pub mod rust_struct;
#[cfg(feature = "otlp")]
pub mod telemetry;

use clap::Parser as _;
use cli::{Cli, Command};
use commands::Context;
use error::{CliError, Outcome};
use std::io::{IsTerminal as _, Write as _};
use std::sync::Arc;
use table_model::client::azure_core::tracing::TracerProvider;
use table_model_transfer::progress::Operation;
use table_model_transfer::CancellationToken;

/// The tool and its version, as the manifest records it: `tablectl 0.1.0`.
pub const TOOL: &str = table_model_transfer::TOOL;

pub use progress::ABORT_AFTER_VAR;

/// Runs `tablectl` with the process's arguments and environment: what the binary does. A usage error, `--help`
/// and `--version` end the process as clap does (status 2 for an error, 0 otherwise). `abort_after`: see
/// [`ABORT_AFTER_VAR`].
pub fn main(abort_after: Option<u64>) -> std::process::ExitCode {
    let cli = Cli::try_parse().unwrap_or_else(|e| e.exit());
    run(cli, std::env::var(endpoint::CONNECTION_STRING_VAR).ok(), abort_after).into()
}

/// Runs a parsed command line, given the value of [`endpoint::CONNECTION_STRING_VAR`]; an error is printed on
/// stderr as `tablectl: <message>`.
pub fn run(cli: Cli, connection_string_var: Option<String>, abort_after: Option<u64>) -> Outcome {
    #[cfg(feature = "otlp")]
    let collector = match cli.otlp_endpoint.as_deref().map(telemetry::Collector::start).transpose() {
        Ok(collector) => collector,
        Err(e) => {
            eprintln!("tablectl: {e}");
            return e.outcome();
        }
    };
    #[cfg(feature = "otlp")]
    let export = collector.as_ref().map(telemetry::Collector::tracer_provider);
    #[cfg(not(feature = "otlp"))]
    let export = None;
    // A thread for each core: a scan's ranges read (decode, check) their pages on every core
    // (`scan::scan_pages_read`), and SQL's partitions, aggregates and joins are work for every core too.
    let mut runtime = tokio::runtime::Builder::new_multi_thread();
    let result = runtime
        .enable_all()
        .build()
        .map_err(|e| CliError::failed(format!("cannot start the async runtime: {e}")))
        .and_then(|runtime| runtime.block_on(execute(&cli, export, connection_string_var, abort_after)));
    // Spans still batched go to the collector now; one that did not take them is said, the outcome unchanged.
    #[cfg(feature = "otlp")]
    if let Some(warning) = collector.and_then(telemetry::Collector::finish) {
        eprintln!("tablectl: {warning}");
    }
    match result {
        Ok(outcome) => outcome,
        Err(e) => {
            if !e.to_string().is_empty() {
                eprintln!("tablectl: {e}");
            }
            e.outcome()
        }
    }
}

/// The client's options of a run: the service kind (`--service-kind`), the per-try timeout (`--try-timeout`), and
/// the tracer provider that says on stderr what the calls meet ([`diagnostics`], more with `--verbose`) and sends
/// the spans to `export` if given (`--otlp-endpoint`).
fn client_options(
    cli: &Cli,
    kind: Option<table_model::ServiceKind>,
    export: Option<Arc<dyn TracerProvider>>,
) -> table_model::client::TableServiceClientOptions {
    use table_model::client::azure_core::http::{ClientOptions, InstrumentationOptions};
    let try_timeout = std::time::Duration::from_secs(cli.try_timeout);
    let instrumentation =
        InstrumentationOptions { tracer_provider: Some(diagnostics::tracer(cli.verbose, try_timeout, export)) };
    table_model::client::TableServiceClientOptions {
        service_kind: kind,
        try_timeout: Some(try_timeout),
        client_options: ClientOptions { instrumentation, ..Default::default() },
        ..Default::default()
    }
}

/// The engine operation a command runs, if any: Ctrl-C stops it at its next checkpoint.
fn operation(command: &Command) -> Option<Operation> {
    Some(match command {
        Command::Count(_) => Operation::Count,
        Command::Export(_) => Operation::Export,
        Command::Import(_) => Operation::Import,
        Command::Copy(_) => Operation::Copy,
        Command::Validate(_) => Operation::Validate,
        Command::Delete(_) => Operation::Delete,
        Command::Backup(args) if args.action.is_none() => Operation::Backup,
        Command::Restore(_) => Operation::Restore,
        _ => return None,
    })
}

/// Fires `cancel` on the first Ctrl-C (SIGINT), saying so; a second ends the process at once (status 130).
fn stop_on_ctrl_c(operation: Operation, cancel: CancellationToken) {
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_err() {
            return;
        }
        eprintln!("tablectl: stopping the {} at its next checkpoint (Ctrl-C again to stop at once)", operation.name());
        cancel.cancel();
        if tokio::signal::ctrl_c().await.is_ok() {
            std::process::exit(i32::from(Outcome::Cancelled.code()));
        }
    });
}

async fn execute(
    cli: &Cli,
    export: Option<Arc<dyn TracerProvider>>,
    connection_string_var: Option<String>,
    abort_after: Option<u64>,
) -> Result<Outcome, CliError> {
    let cancel = CancellationToken::new();
    if let Some(operation) = operation(&cli.command) {
        stop_on_ctrl_c(operation, cancel.clone());
    }
    if let Command::Completions { shell } = &cli.command {
        let mut out = std::io::stdout().lock();
        return commands::completions::run(*shell, &mut out);
    }
    if let Command::Schema(args) = &cli.command
        && let commands::schema::Source::File(path) = commands::schema::Source::of(&args.source)?
    {
        let format = output::Style::choose(cli.json, std::io::stdout().is_terminal());
        let mut out = std::io::BufWriter::new(std::io::stdout().lock());
        let outcome = commands::schema::run_file(&path, args, format, &mut out)?;
        out.flush().map_err(CliError::stdout)?;
        return Ok(outcome);
    }
    let stdout = std::io::stdout();
    let format = output::Style::choose(cli.json, stdout.is_terminal());
    if let Command::Backup(args) = &cli.command
        && let Some(action) = &args.action
    {
        // `backup verify` and `backup prune` read and write files only.
        let mut out = std::io::BufWriter::new(stdout.lock());
        let outcome = commands::backup::run_offline(action, format, &mut out)?;
        out.flush().map_err(CliError::stdout)?;
        return Ok(outcome);
    }
    let kind = cli.endpoint.service_kind.map(endpoint::Kind::service_kind);
    if let Command::Validate(args) = &cli.command {
        // A file is checked without an endpoint; only a table needs one.
        let connect = || {
            let source = endpoint::resolve(&cli.endpoint, connection_string_var)?;
            let service = endpoint::connect_with(&source, client_options(cli, kind, export.clone()))?;
            Ok(Context { service, format, json: cli.json, cancel: cancel.clone(), abort_after })
        };
        let control = commands::control(Operation::Validate, &cancel, abort_after);
        let mut out = std::io::BufWriter::new(stdout.lock());
        let outcome = commands::validate::run(args, format, cli.json, connect, &control, &mut out).await?;
        out.flush().map_err(CliError::stdout)?;
        return Ok(outcome);
    }
    let global = endpoint::resolve(&cli.endpoint, connection_string_var)
        .and_then(|source| endpoint::connect_with(&source, client_options(cli, kind, export.clone())));
    // `copy` has an endpoint on each side, each the global one unless given.
    let (service, copy_source) = match &cli.command {
        Command::Copy(args) => {
            let (from, to) = commands::copy::endpoints(args, global, &client_options(cli, kind, export.clone()))?;
            (to, Some(from))
        }
        _ => (global?, None),
    };
    let ctx = Context { service, format, json: cli.json, cancel, abort_after };
    let mut out = std::io::BufWriter::new(stdout.lock());
    let outcome = match &cli.command {
        Command::Tables => commands::tables::run(&ctx, &mut out).await,
        Command::Count(args) => commands::count::run(&ctx, args, &mut out).await,
        Command::Delete(args) => commands::delete::run(&ctx, args, &mut out).await,
        Command::Query(args) => commands::query::run(&ctx, args, &mut out).await,
        Command::Export(args) => commands::export::run(&ctx, args, &mut out).await,
        Command::Import(args) => commands::import::run(&ctx, args, &mut out).await,
        Command::Backup(args) => commands::backup::run(&ctx, args, &mut out).await,
        Command::Restore(args) => commands::restore::run(&ctx, args, &mut out).await,
        Command::Copy(args) => match &copy_source {
            Some(source) => commands::copy::run(&ctx, source, args, &mut out).await,
            None => Err(CliError::failed("copy has no source endpoint")),
        },
        Command::Schema(args) => commands::schema::run(&ctx, args, &mut out).await,
        #[cfg(feature = "sql")]
        Command::Sql(args) => commands::sql::run(&ctx, args, stdout.is_terminal(), &mut out).await,
        Command::Completions { .. } | Command::Validate(_) => unreachable!("answered before connecting"),
    }?;
    out.flush().map_err(CliError::stdout)?;
    Ok(outcome)
}
