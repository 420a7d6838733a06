//! `tablectl copy SOURCE TARGET [--from-connection-string S | --from-url U] [--to-connection-string S | --to-url
//! U] [--filter F] [--mode M] [--parallel N] [--max-rate N]`: [`table_model_transfer::copy`], each side's
//! endpoint its `--from-...` or `--to-...` option, else the global one (`--connection-string`, `--url`, the
//! environment). Entities not copied make the outcome [`Outcome::Partial`].

use super::Context;
use crate::cli::CopyArgs;
use crate::endpoint::{self, EndpointArgs};
use crate::error::{CliError, Outcome};
use std::io::Write;
use table_model::client::{TableServiceClient, TableServiceClientOptions};
use table_model_transfer::copy::{copy, CopyOptions};
use table_model_transfer::progress::Operation;

/// The source and target services: each side's own options, else the global endpoint (`global`, which is an
/// error only when a side needs it); `options` (`--service-kind`, the tracer, the try timeout) apply to both sides.
///
/// # Errors
/// [`CliError`] ([`InvalidInput`](Outcome::InvalidInput)) for an endpoint that is not valid, naming its option,
/// or a side with no endpoint.
pub fn endpoints(
    args: &CopyArgs,
    global: Result<TableServiceClient, CliError>,
    options: &TableServiceClientOptions,
) -> Result<(TableServiceClient, TableServiceClient), CliError> {
    let side = |prefix: &str, connection_string: &Option<String>, url: &Option<String>| {
        if connection_string.is_none() && url.is_none() {
            return None;
        }
        let args =
            EndpointArgs { connection_string: connection_string.clone(), url: url.clone(), ..Default::default() };
        let client = endpoint::resolve(&args, None).and_then(|source| endpoint::connect_with(&source, options.clone()));
        Some(client.map_err(|e| {
            // The message names the global option; this side's is `--from-...` or `--to-...`.
            let message = e.to_string();
            let named = message.strip_prefix("invalid --").map(|rest| format!("invalid --{prefix}-{rest}"));
            CliError::new(e.outcome(), named.unwrap_or(message))
        }))
    };
    let from = side("from", &args.from_connection_string, &args.from_url).transpose()?;
    let to = side("to", &args.to_connection_string, &args.to_url).transpose()?;
    Ok(match (from, to) {
        (Some(from), Some(to)) => (from, to),
        (from, to) => {
            let global = global?;
            (from.unwrap_or_else(|| global.clone()), to.unwrap_or(global))
        }
    })
}

/// The engine's options of the arguments.
pub fn options(args: &CopyArgs) -> CopyOptions {
    let mut options = CopyOptions::default().mode(args.mode.into()).parallel(args.parallel).force(args.force);
    options.filter = args.filter.clone();
    options.max_rate = args.max_rate;
    options.in_flight = args.in_flight;
    options.reject = args.reject.clone();
    options.checkpoint = args.checkpoint.clone();
    options
}

/// Copies the entities from `source` into the context's service.
///
/// # Errors
/// As [`copy`].
pub async fn run(
    ctx: &Context,
    source: &TableServiceClient,
    args: &CopyArgs,
    out: &mut impl Write,
) -> Result<Outcome, CliError> {
    let from = source.table_client(args.source.clone());
    let to = ctx.service.table_client(args.target.clone());
    let control = ctx.control(Operation::Copy);
    let summary = copy(&from, &to, &options(args), &control).await?;
    let skipped = match summary.skipped {
        0 => String::new(),
        n => format!("; {n} skipped (their keys exist)"),
    };
    let rejected = match &summary.rejects {
        Some(path) => format!("; {} rejected, see `{}`", summary.rejected, path.display()),
        None => String::new(),
    };
    eprintln!(
        "tablectl: copied {} entities from {} into {}{skipped}{rejected}",
        summary.copied, args.source, args.target
    );
    if ctx.json {
        let json = serde_json::json!({
            "source": args.source.as_str(),
            "target": args.target.as_str(),
            "copied": summary.copied,
            "skipped": summary.skipped,
            "rejected": summary.rejected,
            "rejects": summary.rejects.as_ref().map(|p| p.display().to_string()),
        });
        writeln!(out, "{json}").map_err(CliError::stdout)?;
    }
    Ok(if summary.rejected > 0 { Outcome::Partial } else { Outcome::Done })
}
