//! `tablectl copy SOURCE TARGET [--from-connection-string S | --from-url U] [--to-connection-string S | --to-url
//! U] [--filter F] [--mode M] [--parallel N] [--max-rate N]`: the entities of a table into another, on the same
//! endpoint or any other (Storage, Cosmos DB, Azurite, either way), streamed.
//!
//! Each side's endpoint is its `--from-...` or `--to-...` option, else the global one (`--connection-string`,
//! `--url`, the environment). The source is read by key ranges side by side ([`crate::scan`]); the pages are
//! written in chunks by the bulk writer, which checks every entity against the target's rules before its
//! transaction is sent ([`crate::write`]); an entity not written goes to the reject file as in `import`. After
//! each chunk is settled, a checkpoint (`TARGET.copy-checkpoint.json`) keeps each range's continuation, so the
//! same command run again after a stop goes on from there. The checkpoint is bound to the tables, the filter, the
//! mode and `--parallel`, not to the endpoints: a renewed SAS, or another route to the same accounts, resumes.

use super::Context;
use crate::checkpoint::{self, AbortAfter, Command};
use crate::cli::ImportMode;
use crate::endpoint::{self, EndpointArgs};
use crate::error::{CliError, Outcome};
use crate::progress::Progress;
use crate::rate::{limit_for, Pace};
use crate::rejects::RejectFile;
use crate::scan::{self, RangeStart, Shard};
use crate::write::{write_chunk, ChunkWriter, Line};
use futures::StreamExt as _;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::sync::Arc;
use table_model::client::TableServiceClient;
use table_model::filter::KeyRange;
use table_model::ServiceKind;
use table_model::TableName;

/// `tablectl copy`.
#[derive(clap::Args, Debug)]
pub struct CopyArgs {
    /// The table to read
    pub source: TableName,
    /// The table to write (created if it does not exist)
    pub target: TableName,
    /// The source's connection string [default: the global endpoint]
    #[arg(long, value_name = "STRING", conflicts_with = "from_url")]
    pub from_connection_string: Option<String>,
    /// The source's URL, with a SAS token as its query [default: the global endpoint]
    #[arg(long, value_name = "URL")]
    pub from_url: Option<String>,
    /// The target's connection string [default: the global endpoint]
    #[arg(long, value_name = "STRING", conflicts_with = "to_url")]
    pub to_connection_string: Option<String>,
    /// The target's URL, with a SAS token as its query [default: the global endpoint]
    #[arg(long, value_name = "URL")]
    pub to_url: Option<String>,
    /// An OData filter on the source, such as `PartitionKey eq 'eu' and Age ge 18`
    #[arg(long)]
    pub filter: Option<String>,
    /// What to do with an entity whose keys exist in the target
    #[arg(long, value_enum, default_value_t = ImportMode::Insert)]
    pub mode: ImportMode,
    /// Read this many key ranges of the source side by side
    #[arg(long, value_name = "N", default_value = "1")]
    pub parallel: NonZeroUsize,
    /// At most this many entities per second (0: no limit) [default: 20000 when either side is Azure Storage,
    /// no limit otherwise]
    #[arg(long, value_name = "N")]
    pub max_rate: Option<u64>,
    /// Where to write the entities that are not copied [default: TARGET.rejects.jsonl, written only if any]
    #[arg(long, value_name = "FILE")]
    pub reject: Option<PathBuf>,
    /// The checkpoint an interrupted copy resumes from [default: TARGET.copy-checkpoint.json; removed when the
    /// copy ends]
    #[arg(long, value_name = "FILE")]
    pub checkpoint: Option<PathBuf>,
    /// Start over instead of resuming the unfinished copy of the checkpoint
    #[arg(long)]
    pub force: bool,
}

/// The source and target services: each side's own options, else the global endpoint (`global`, which is an
/// error only when a side needs it); `kind` (`--service-kind`) applies to both sides.
///
/// # Errors
/// [`CliError`] ([`InvalidInput`](Outcome::InvalidInput)) for an endpoint that is not valid, naming its option,
/// or a side with no endpoint.
pub fn endpoints(
    args: &CopyArgs,
    global: Result<TableServiceClient, CliError>,
    kind: Option<ServiceKind>,
) -> Result<(TableServiceClient, TableServiceClient), CliError> {
    let side = |prefix: &str, connection_string: &Option<String>, url: &Option<String>| {
        if connection_string.is_none() && url.is_none() {
            return None;
        }
        let args =
            EndpointArgs { connection_string: connection_string.clone(), url: url.clone(), ..Default::default() };
        let client = endpoint::resolve(&args, None).and_then(|source| endpoint::connect_as(&source, kind));
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

/// The value of [`CopyCheckpoint::format`].
const CHECKPOINT_FORMAT: &str = "tablectl-copy-checkpoint/1";

/// How far a copy got: per range, the continuation after the last entities settled in the target.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct CopyCheckpoint {
    format: String,
    command: Command,
    ranges: Vec<RangeState>,
    /// Entities read and settled, which numbers them in the reject file.
    read: u64,
    written: u64,
    skipped: u64,
    already: u64,
    reject_bytes: u64,
    rejects: u64,
}

/// How far one range got.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct RangeState {
    range: KeyRange,
    next: Option<String>,
    done: bool,
}

/// Entities per chunk: the pages read are written together once they hold this many (or the source ends).
const CHUNK: usize = 5_000;

/// Copies the entities.
///
/// # Errors
/// An invalid filter or an unfinished copy of another command line (before any request), a failed request,
/// or a file that cannot be written. Entities that are not written are not errors: they make the outcome
/// [`Outcome::Partial`].
pub async fn run(
    ctx: &Context,
    source: &TableServiceClient,
    args: &CopyArgs,
    out: &mut impl Write,
) -> Result<Outcome, CliError> {
    let query = super::filtered(args.filter.as_deref())?;
    let from = source.table_client(args.source.clone());
    let to = ctx.service.table_client(args.target.clone());
    let checkpoint_path =
        args.checkpoint.clone().unwrap_or_else(|| PathBuf::from(format!("{}.copy-checkpoint.json", args.target)));
    let command = Command::new("copy")
        .with("source", args.source.as_str())
        .with("target", args.target.as_str())
        .with("--filter", &args.filter)
        .with("--mode", format!("{:?}", args.mode))
        .with("--parallel", args.parallel.get());
    if args.force {
        checkpoint::remove(&checkpoint_path)?;
    }
    let saved = checkpoint::read_for::<CopyCheckpoint>(&checkpoint_path, CHECKPOINT_FORMAT, &command)?;
    if let Some(saved) = &saved {
        eprintln!(
            "tablectl: resuming the unfinished copy of `{}` ({} of {} key ranges done, {} entities settled)",
            checkpoint_path.display(),
            saved.ranges.iter().filter(|r| r.done).count(),
            saved.ranges.len(),
            saved.read
        );
    }
    let resumed = saved.is_some();
    to.create_table_if_not_exists(None).await?;
    let mut state = match saved {
        Some(saved) => saved,
        None => {
            let plan = scan::plan(&from, &query, args.parallel, Shard::ALL).await?;
            let ranges = plan.mine.into_iter().map(|range| RangeState { range, next: None, done: false }).collect();
            let state = CopyCheckpoint {
                format: CHECKPOINT_FORMAT.to_owned(),
                command,
                ranges,
                read: 0,
                written: 0,
                skipped: 0,
                already: 0,
                reject_bytes: 0,
                rejects: 0,
            };
            checkpoint::write_atomic(&checkpoint_path, &state)?;
            state
        }
    };

    let reject_path = args.reject.clone().unwrap_or_else(|| PathBuf::from(format!("{}.rejects.jsonl", args.target)));
    let mut rejects = if resumed {
        RejectFile::resume(reject_path, state.reject_bytes, state.rejects)?
    } else {
        RejectFile::new(reject_path)
    };
    // Either side's documented target bounds the rate: reading Storage counts as much as writing it.
    let limit = match (limit_for(args.max_rate, from.kind()), limit_for(args.max_rate, to.kind())) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    let mut pace = Pace::new(limit);
    let size = limit.map_or(CHUNK, |rate| (rate / 10).clamp(100, CHUNK as u64) as usize);

    let mut starts = Vec::new();
    for (index, range) in state.ranges.iter().enumerate().filter(|(_, r)| !r.done) {
        let from = range.next.as_deref().map(|token| scan::continuation(token, &checkpoint_path)).transpose()?;
        starts.push(RangeStart { index, range: range.range.clone(), from });
    }
    let source_name: Arc<str> = format!("table:{}", args.source).into();
    let progress = Progress::entities("copy");
    let abort = AbortAfter::from_env();
    let mut this_run = 0_u64;
    let mut pages = scan::scan_pages(&from, &query, starts, args.parallel);
    let result: Result<(), CliError> = async {
        loop {
            // The next chunk: pages until they hold `size` entities, or the source ends.
            let mut chunk = Vec::new();
            let mut entities = 0;
            while entities < size {
                match pages.next().await {
                    Some(page) => {
                        let page = page?;
                        entities += page.entities.len();
                        chunk.push(page);
                    }
                    None => break,
                }
            }
            if chunk.is_empty() {
                return Ok(());
            }
            let mut lines = Vec::with_capacity(entities);
            let mut ends = Vec::new();
            for page in chunk {
                for mut entity in page.entities {
                    entity.set_server_metadata(None, None);
                    state.read += 1;
                    lines.push(Line { file: 0, source: source_name.clone(), number: state.read, entity });
                }
                ends.push((page.range, page.next));
            }
            pace.take(lines.len() as u64).await;
            let writer = ChunkWriter {
                table: &to,
                mode: args.mode,
                resumed,
                progress: &progress,
                done: this_run,
                abort,
                partition_rate: crate::rate::partition_limit_for(args.max_rate, to.kind()),
            };
            let settled = write_chunk(&writer, lines).await?;
            this_run += settled.written;
            for (_, reject) in &settled.rejects {
                rejects.write(reject)?;
            }
            for (range, next) in ends {
                state.ranges[range].done = next.is_none();
                state.ranges[range].next = next.as_ref().map(ToString::to_string);
            }
            state.written += settled.written;
            state.skipped += settled.skipped;
            state.already += settled.already;
            state.reject_bytes = rejects.sync()?;
            state.rejects = rejects.count();
            checkpoint::write_atomic(&checkpoint_path, &state)?;
        }
    }
    .await;
    drop(pages);
    progress.finish();
    rejects.finish()?;
    if let Err(e) = result {
        return Err(CliError::new(
            e.outcome(),
            format!(
                "{e}; the copy stopped after {} entities, run the same command again to resume",
                state.written + state.already
            ),
        ));
    }
    checkpoint::remove(&checkpoint_path)?;

    let copied = state.written + state.already;
    let skipped_text = match state.skipped {
        0 => String::new(),
        n => format!("; {n} skipped (their keys exist)"),
    };
    let rejected = match rejects.count() {
        0 => String::new(),
        n => format!("; {n} rejected, see `{}`", rejects.path().display()),
    };
    eprintln!("tablectl: copied {copied} entities from {} into {}{skipped_text}{rejected}", args.source, args.target);
    if ctx.json {
        let summary = serde_json::json!({
            "source": args.source.as_str(),
            "target": args.target.as_str(),
            "copied": copied,
            "skipped": state.skipped,
            "rejected": rejects.count(),
            "rejects": (rejects.count() > 0).then(|| rejects.path().display().to_string()),
        });
        writeln!(out, "{summary}").map_err(CliError::stdout)?;
    }
    Ok(if rejects.count() > 0 { Outcome::Partial } else { Outcome::Done })
}
