//! `restore`: a table as of a generation of its backup, into a new table, or into an existing one made equal to
//! it ([`RestoreOptions::exact`]).
//!
//! Before anything is sent, the generations are checked against their manifests. The table as of the generation
//! is merged (the modules `merge` and `staging`: on the entities' keys, their lines passed on as they are) into
//! one file of JSON lines in a work directory, each entity checked against the target service's rules
//! (`docs/rules.md` §13.1) on the way, on every core: an entity the target would refuse stops the restore there,
//! naming its keys, property and rule. An entity that the backup read with those rules
//! ([`GenerationManifest::checked_with`](super::GenerationManifest::checked_with)), in a file found as its
//! manifest has it, is not read again unless its line is long enough for its body to reach 1 MiB. The file is
//! imported ([`crate::import`]'s engine: inserted into a new table, or inserted or replaced with `exact`;
//! resumable from its checkpoint in the work directory):
//! - after the merge, where an entity could be refused: so a backup the target refuses leaves it untouched;
//! - beside the merge, read as it is written (the module `tail`), where none can: every generation read with the
//!   target's rules, every line of its entities short enough (the verification of the files measures them), and
//!   no `--timestamp-as` to write them again. The restore then takes the import's time, not the merge's as well.
//!
//! With `exact`, the target's keys are then read (`$select=PartitionKey,RowKey`) and merged against the file's,
//! and every entity that is not in the backup is deleted. The work directory is removed at the end; a restore
//! stopped midway goes on from it when run again (a merge stopped before its end is written again, the same).
//!
//! Layer: operations.

use super::chain::{Chain, Generation, Part};
use super::merge::{key_order, keys_only, GenerationFiles, Sorted, State};
use super::staging::{self, Target};
use super::tail::{Tail, Writing};
use crate::checkpoint;
use crate::error::{ErrorKind, TransferError};
use crate::format::compress::Output;
use crate::format::jsonl::JsonlReader;
use crate::format::{Compression, EntityReader, Sink, FILE_BUFFER};
use crate::import::{import_through, ImportOptions, ImportSummary, OpenReader};
use crate::progress::{Control, Event};
use crate::scan;
use crate::write::WriteMode;
use chrono::{DateTime, Utc};
use futures::TryStreamExt as _;
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;
use std::io::BufReader;
use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Arc};
use std::time::Duration;
use table_model::client::{BulkOperation, BulkOptions, QueryOptions, TableClient};
use table_model::filter::KeyRange;
use table_model::{Entity, MetadataLevel, PropertyName, Query, RuleSet, TableName};

/// How to restore. Each option is named as its `tablectl restore` flag.
///
/// ```
/// use table_model_transfer::backup::restore::RestoreOptions;
/// let options = RestoreOptions::default().generation(3).exact(true).timestamp_as("BackedUpTimestamp");
/// assert_eq!((options.generation, options.exact), (Some(3), true));
/// ```
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct RestoreOptions {
    /// The generation [default: the last, or the one [`at`](Self::at) names].
    pub generation: Option<u32>,
    /// The newest generation whose scans ended at or before this time (the service's clock).
    pub at: Option<DateTime<Utc>>,
    /// Make an existing table equal to the backup: entities not in it are deleted. Without it the target must be
    /// new or empty.
    pub exact: bool,
    /// Keep each entity's original `Timestamp` (which the service rewrites on every write) in a DateTime
    /// property of this name.
    pub timestamp_as: Option<String>,
    /// At most this many entities per second (`Some(0)`: no limit; `None`: the service's documented target).
    pub max_rate: Option<u64>,
    /// The work directory [default: `.restore-TABLE` in the backup's directory].
    pub work_dir: Option<PathBuf>,
    /// Start an unfinished restore over instead of going on with it.
    pub force: bool,
    /// Transactions in flight at once [default: `None`, the bulk writer's 8]. More keep more of a partitioned
    /// target busy where each transaction's round trip, not the client, sets the pace; memory stays bounded by
    /// the chunk (`docs/tablectl.md`, "Transactions in flight").
    pub in_flight: Option<NonZeroUsize>,
}

setters!(RestoreOptions {
    generation: some u32,
    at: some DateTime<Utc>,
    exact: value bool,
    timestamp_as: into String,
    max_rate: some u64,
    work_dir: into PathBuf,
    force: value bool,
    in_flight: some NonZeroUsize,
});

/// What a restore did.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RestoreSummary {
    /// The target table.
    pub table: TableName,
    /// The generation restored.
    pub generation: u32,
    /// When that generation's scans ended (the service's clock, RFC 3339).
    pub as_of: String,
    /// Entities in the table as of the generation, all written (by this run or the one it went on with).
    pub restored: u64,
    /// Entities of the target deleted because the backup does not have them (`exact`).
    pub deleted: u64,
    /// Whether this run went on with an unfinished restore.
    pub resumed: bool,
}

/// The work directory's record of the merged file, written once it is complete.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Staged {
    format: String,
    backup: PathBuf,
    generation: u32,
    link: String,
    timestamp_as: Option<String>,
    entities: u64,
    /// The merged file's SHA-256; empty where the file is not kept as it is: a restore that imports the file beside
    /// the merge writing it (into a new table, the file removed once it is read), which a run that goes on with it
    /// merges again.
    sha256: String,
    /// Whether the file was imported (what is left is `exact`'s deletes).
    imported: bool,
}

const STAGED: &str = "staged.json";
const STAGED_FORMAT: &str = "tablectl-restore/1";
const ENTITIES: &str = "entities.jsonl";

/// Restores `table` as of a generation of the backup in `dir` (one table's backup directory).
///
/// ```no_run
/// use table_model::client::TableServiceClient;
/// use table_model::TableName;
/// use table_model_transfer::backup::restore::{restore, RestoreOptions};
/// use table_model_transfer::progress::Control;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let service = TableServiceClient::from_connection_string("UseDevelopmentStorage=true", None)?;
/// let target = service.table_client(TableName::from_static("OrdersRestored"));
/// let options = RestoreOptions::default().generation(2);
/// let summary = restore("backups/Orders".as_ref(), &target, &options, &Control::new()).await?;
/// println!("{} entities as of {}", summary.restored, summary.as_of);
/// # Ok(())
/// # }
/// ```
///
/// # Errors
/// [`TransferError`]: a broken chain, a file that does not match its manifest, no such generation, an entity the
/// target's rules refuse, a target that has entities without `exact`, an unfinished restore of other options
/// ([`ErrorKind::InvalidInput`], before anything is written); a failed request; entities the service refused
/// ([`ErrorKind::Failed`], the reject file kept in the work directory); [`ErrorKind::Cancelled`].
pub async fn restore(
    dir: &Path,
    table: &TableClient,
    options: &RestoreOptions,
    control: &Control,
) -> Result<RestoreSummary, TransferError> {
    let result = run(dir, table, options, control).await;
    control.report(Event::Finished);
    result
}

async fn run(
    dir: &Path,
    table: &TableClient,
    options: &RestoreOptions,
    control: &Control,
) -> Result<RestoreSummary, TransferError> {
    let chain = Chain::open(dir)?;
    let Some(last) = chain.last() else {
        return Err(TransferError::invalid(format!("`{}` holds no finished backup generation", dir.display())));
    };
    let number = match (options.generation, options.at) {
        (Some(_), Some(_)) => return Err(TransferError::invalid("give --generation or --at, not both")),
        (Some(number), None) => number,
        (None, Some(at)) => chain.at(at)?,
        (None, None) => last.link.number,
    };
    let generations = chain.up_to(number)?;
    let generation = generations.last().expect("up_to holds the generation");
    let timestamp_as = options
        .timestamp_as
        .as_deref()
        .map(|name| {
            name.parse::<PropertyName>()
                .map_err(|e| TransferError::invalid(format!("invalid --timestamp-as `{name}`: {e}")))
        })
        .transpose()?;
    let work = options.work_dir.clone().unwrap_or_else(|| dir.join(format!(".restore-{}", table.table())));
    let wanted = Staged {
        format: STAGED_FORMAT.to_owned(),
        backup: std::path::absolute(dir).unwrap_or_else(|_| dir.to_owned()),
        generation: number,
        link: generation.link.sha256.clone(),
        timestamp_as: options.timestamp_as.clone(),
        entities: 0,
        sha256: String::new(),
        imported: false,
    };
    let saved = if options.force { None } else { checkpoint::read::<Staged>(&work.join(STAGED))? };
    let staged = match saved {
        Some(saved) if Staged { entities: 0, sha256: String::new(), imported: false, ..saved.clone() } == wanted => {
            // A file kept with its digest (`exact` reads its keys after the import) must be as it was merged.
            if !saved.sha256.is_empty() {
                let file = crate::digest::digest(&work.join(ENTITIES))?;
                if file.hex() != saved.sha256 {
                    return Err(TransferError::invalid(format!(
                        "`{}` was changed since this restore merged it; give --force to start over",
                        work.join(ENTITIES).display()
                    )));
                }
            }
            let place = work.display();
            let notice = if saved.imported {
                format!("going on with the restore of generation {number} in `{place}`, its entities all written")
            } else if saved.sha256.is_empty() {
                // Imported beside its merge: merged again, imported from the import's checkpoint.
                format!("going on with the restore of generation {number} in `{place}`, its merge written again")
            } else {
                format!(
                    "going on with the restore of generation {number} merged in `{place}` ({} entities)",
                    saved.entities
                )
            };
            control.report(Event::Notice(&notice));
            Some(saved)
        }
        Some(saved) => {
            return Err(TransferError::invalid(format!(
                "`{}` holds an unfinished restore of generation {} of `{}`: run it as it was to go on, or give \
                 --force to start over",
                work.display(),
                saved.generation,
                saved.backup.display()
            )));
        }
        None => None,
    };
    let resumed = staged.is_some();
    // Into a new or empty table (share), an insert; `exact` replaces what the target has.
    let mode = if options.exact { WriteMode::Replace } else { WriteMode::Insert };
    let mut import_options = ImportOptions::default()
        .mode(mode)
        .checkpoint(work.join("import-checkpoint.json"))
        .reject(work.join("rejects.jsonl"));
    import_options.max_rate = options.max_rate;
    import_options.in_flight = options.in_flight;
    let rules = table.kind().rules();
    let mut staged = match staged {
        // What is left is `exact`'s deletes (from the file, kept with its digest), or the work directory's removal.
        Some(staged) if staged.imported => staged,
        Some(staged) if staged.sha256.is_empty() => {
            Chain::verify_files(generations)?;
            merge_beside_import(generations, &work, staged, table, &import_options, options.exact, control).await?
        }
        Some(staged) => staged,
        None => {
            // Nothing of an earlier run is kept: the target is checked, then the state merged anew.
            if work.exists() {
                std::fs::remove_dir_all(&work).map_err(|e| TransferError::io("remove", &work, e))?;
            }
            let verified = Chain::verify_files(generations)?;
            if !options.exact {
                refuse_if_not_empty(table, &covered(generation)?).await?;
            }
            // No entity can be refused where every one was read with the target's rules on its way into the
            // backup, its line short enough for its body to stay under 1 MiB, and none is written again: the
            // import then goes beside the merge.
            let refusable = !all_checked_with(generations, rules)
                || timestamp_as.is_some()
                || verified.longest_entity_line.is_none_or(|longest| !staging::goes_on_unread(longest));
            if refusable {
                stage(generations, &work, wanted, timestamp_as.as_ref(), table, control)?
            } else {
                std::fs::create_dir_all(&work).map_err(|e| TransferError::io("create", &work, e))?;
                checkpoint::write_atomic(&work.join(STAGED), &wanted)?;
                merge_beside_import(generations, &work, wanted, table, &import_options, options.exact, control).await?
            }
        }
    };
    if !staged.imported {
        let imported = import_through(table, &[work.join(ENTITIES)], &import_options, None, control).await?;
        staged = imported_all(&work, staged, &imported)?;
    }
    let deleted = if options.exact {
        delete_others(table, &work.join(ENTITIES), &covered(generation)?, options.in_flight, control).await?
    } else {
        0
    };
    std::fs::remove_dir_all(&work).map_err(|e| TransferError::io("remove", &work, e))?;
    Ok(RestoreSummary {
        table: table.table().clone(),
        generation: number,
        as_of: generation.manifest.ended.clone(),
        restored: staged.entities,
        deleted,
        resumed,
    })
}

/// The key ranges of the target a backup stands for: all of them, or a sharded chain's share (its worker's
/// ranges of the chain's plan), which a restore checks and, with `exact`, makes equal; the other workers' ranges
/// are left as they are.
fn covered(generation: &Generation) -> Result<Vec<KeyRange>, TransferError> {
    match generation.manifest.shard {
        None => Ok(vec![KeyRange::all()]),
        Some(shard) => Ok(scan::given(generation.manifest.plan.clone(), shard)?.mine),
    }
}

/// The query of the keys in a range.
fn keys_in(range: &KeyRange, select: &[&'static str]) -> Query {
    let query = Query::new().select(select.iter().copied());
    match range.filter() {
        Some(filter) => query.filter(filter),
        None => query,
    }
}

/// Refuses a target that has entities in `ranges` (a missing table is created by the import).
async fn refuse_if_not_empty(table: &TableClient, ranges: &[KeyRange]) -> Result<(), TransferError> {
    for range in ranges {
        match table.query_first::<Entity>(&keys_in(range, &["PartitionKey"]), 1, None).await {
            Ok(found) if found.is_empty() => {}
            Ok(_) => {
                let share = if ranges.len() == 1 && *range == KeyRange::all() {
                    String::new()
                } else {
                    " in the backup's share of the key ranges".to_owned()
                };
                return Err(TransferError::invalid(format!(
                    "table `{}` has entities{share}: restore into a new or empty table, or give --exact to make it \
                     equal to the backup (deleting what the backup does not have)",
                    table.table()
                )));
            }
            Err(e) if e.is_not_found() => return Ok(()),
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// Whether every one of `generations` was read with `rules` on its way into the backup
/// ([`GenerationManifest::checked_with`](super::GenerationManifest::checked_with)).
fn all_checked_with(generations: &[Generation], rules: RuleSet) -> bool {
    generations.iter().all(|g| g.manifest.checked_with(rules))
}

/// Records that every entity of the merged file was written, or fails with the count of those the service refused.
fn imported_all(work: &Path, mut staged: Staged, imported: &ImportSummary) -> Result<Staged, TransferError> {
    if imported.rejected > 0 {
        return Err(TransferError::failed(format!(
            "{} of {} entities were not written (see `{}`); run the same command again to retry them",
            imported.rejected,
            staged.entities,
            work.join("rejects.jsonl").display()
        )));
    }
    staged.imported = true;
    checkpoint::write_atomic(&work.join(STAGED), &staged)?;
    Ok(staged)
}

/// Merges the table as of the last of `generations` into the work directory's file, each entity checked against
/// the target's rules (with its original `Timestamp` in `timestamp_as`), and records it (the module `staging`)
/// once the file is on disk.
fn stage(
    generations: &[Generation],
    work: &Path,
    mut staged: Staged,
    timestamp_as: Option<&PropertyName>,
    table: &TableClient,
    control: &Control,
) -> Result<Staged, TransferError> {
    std::fs::create_dir_all(work).map_err(|e| TransferError::io("create", work, e))?;
    let out = Output::new(Sink::create(&work.join(ENTITIES), true)?, Compression::None);
    let rules = table.kind().rules();
    // `Chain::verify_files` has found every file as its manifest has it.
    let target = Target { rules, table: table.table(), timestamp_as, checked: all_checked_with(generations, rules) };
    (staged.entities, staged.sha256) = merge_into(generations, Some(&work.join(ENTITIES)), out, target, control)?;
    checkpoint::write_atomic(&work.join(STAGED), &staged)?;
    Ok(staged)
}

/// Merges the table as of the last of `generations`, none of whose entities the target can refuse (checked, short
/// lines, none written again), into the work directory's file on a thread of its own, while the file is imported
/// as it is written ([`Tail`]); records the import once it is done. Where the file is kept (`keep`: `exact` reads
/// its keys afterwards), its digest is recorded once it is whole, even where the import then failed, so that the
/// next run goes on with the file; otherwise the file is removed once the import has read it, and a run that goes
/// on with the restore writes the merge again, the same, and the import goes on from its checkpoint.
async fn merge_beside_import(
    generations: &[Generation],
    work: &Path,
    mut staged: Staged,
    table: &TableClient,
    import_options: &ImportOptions,
    keep: bool,
    control: &Control,
) -> Result<Staged, TransferError> {
    let path = work.join(ENTITIES);
    // Emptied before the import opens it: what an earlier run wrote is not read again.
    std::fs::File::create(&path).map_err(|e| TransferError::io("create", &path, e))?;
    let writing = Writing::new();
    let (sender, merged) = tokio::sync::oneshot::channel();
    let merging = {
        let (generations, path, name) = (generations.to_vec(), path.clone(), table.table().clone());
        let (rules, writing, control) = (table.kind().rules(), writing.clone(), control.clone());
        // Read with the target's rules (as the caller found) unless a run gone on with has another target.
        let checked = all_checked_with(&generations, rules);
        move || {
            let target = Target { rules, table: &name, timestamp_as: None, checked };
            // A file not kept is not synced: it is read, then removed, and a run that goes on merges again.
            let synced = keep.then_some(path.as_path());
            let merged = Sink::create(&path, true).and_then(|sink| {
                merge_into(&generations, synced, Output::new(sink, Compression::None), target, &control)
            });
            writing.finish(merged.is_ok());
            let _ = sender.send(merged);
        }
    };
    std::thread::Builder::new()
        .name("restore-merge".to_owned())
        .spawn(merging)
        .map_err(|e| TransferError::failed(format!("cannot start the thread merging the backup: {e}")))?;
    let open_reader: OpenReader = Arc::new(move |path: &Path, _| {
        let file = std::fs::File::open(path).map_err(|e| TransferError::io("read", path, e))?;
        let tail = Tail::new(file, writing.clone());
        // Read whole, a file that is not kept goes then, on the reading thread, rather than at the restore's end.
        let tail = BufReader::with_capacity(FILE_BUFFER, if keep { tail } else { tail.removing_at_end(path) });
        Ok(Box::new(JsonlReader::new(path.display().to_string(), Box::new(tail))) as Box<dyn EntityReader>)
    });
    let imported = import_through(table, std::slice::from_ref(&path), import_options, Some(open_reader), control).await;
    let merged = merged.await.unwrap_or_else(|_| Err(TransferError::failed("the thread merging the backup panicked")));
    // The merge's error first: the import's, where the merge failed, is that its file ended early.
    let (entities, sha256) = merged?;
    staged.entities = entities;
    if keep {
        staged.sha256 = sha256;
        checkpoint::write_atomic(&work.join(STAGED), &staged)?;
    }
    imported_all(work, staged, &imported?)
}

/// Merges the generations into `out`, each entity checked against `target` (the module `staging`); `out`'s file,
/// at `synced`, synced while it is written (a file to keep); the entities written and the file's SHA-256.
fn merge_into(
    generations: &[Generation],
    synced: Option<&Path>,
    mut out: Output<'_>,
    target: Target<'_>,
    control: &Control,
) -> Result<(u64, String), TransferError> {
    let files = generations
        .iter()
        .map(|g| GenerationFiles { entities: g.paths(Part::Entities), deleted: g.paths(Part::Deleted) })
        .collect();
    let state = State::open_lines(files)?;
    let (written, stop) = mpsc::channel::<()>();
    std::thread::scope(|scope| {
        let syncing = synced.map(|path| scope.spawn(move || sync_while_written(path, &stop)));
        let merged = staging::stage(state, &mut out, target, control)
            .and_then(|entities| Ok((entities, out.finish_unsynced()?.1)));
        drop(written);
        let synced = syncing.map_or(Ok(()), |syncing| {
            syncing.join().unwrap_or_else(|_| Err(TransferError::failed("the thread syncing the merged file panicked")))
        });
        merged.and_then(|merged| synced.map(|()| merged))
    })
}

/// How often the merged file is synced while it is written.
const SYNC_EVERY: Duration = Duration::from_millis(50);

/// Syncs the file at `path` to disk every [`SYNC_EVERY`] until `written` ends, then once more. The disk writes the
/// file while it is merged (its 150 MB took 0.3 s to sync after the merge, as long as the merge itself), and
/// the last sync has only the tail left: on ext4, any later sync, even of a small file, waits for it.
fn sync_while_written(path: &Path, written: &mpsc::Receiver<()>) -> Result<(), TransferError> {
    let sync = |file: &std::fs::File| file.sync_data().map_err(|e| TransferError::io("sync", path, e));
    let file = std::fs::OpenOptions::new().write(true).open(path).map_err(|e| TransferError::io("open", path, e))?;
    while let Err(mpsc::RecvTimeoutError::Timeout) = written.recv_timeout(SYNC_EVERY) {
        sync(&file)?;
    }
    sync(&file)
}

/// Deletes the target's entities in `ranges` whose keys the merged file does not have: the target's keys read in
/// key order (without metadata) and merged against the file's, deleted a transaction's worth at a time (a key
/// already gone is fine).
async fn delete_others(
    table: &TableClient,
    merged: &Path,
    ranges: &[KeyRange],
    in_flight: Option<NonZeroUsize>,
    control: &Control,
) -> Result<u64, TransferError> {
    const BATCH: usize = 1000;
    let mut wanted = Sorted::open_keys(vec![merged.to_owned()])?;
    let mut doomed: Vec<Entity> = Vec::new();
    let mut deleted = 0;
    for range in ranges {
        let options = QueryOptions { metadata: Some(MetadataLevel::None), ..Default::default() };
        let mut stored = table.query::<Entity>(&keys_in(range, &["PartitionKey", "RowKey"]), Some(options))?;
        loop {
            let Some(next) = control.unless_cancelled(stored.try_next()).await else {
                return Err(TransferError::new(
                    ErrorKind::Cancelled,
                    "the restore was cancelled; run it again to go on",
                ));
            };
            let Some(entity) = next? else { break };
            while wanted.peek().is_some_and(|w| key_order(w, &entity) == Ordering::Less) {
                wanted.take()?;
            }
            if wanted.peek().is_none_or(|w| key_order(w, &entity) != Ordering::Equal) {
                doomed.push(keys_only(&entity));
            }
            if doomed.len() >= BATCH {
                deleted += delete_keys(table, std::mem::take(&mut doomed), in_flight).await?;
            }
        }
    }
    deleted += delete_keys(table, doomed, in_flight).await?;
    Ok(deleted)
}

/// Deletes entities by their keys, any version, `in_flight` transactions at once; one already gone counts as
/// deleted.
async fn delete_keys(
    table: &TableClient,
    doomed: Vec<Entity>,
    in_flight: Option<NonZeroUsize>,
) -> Result<u64, TransferError> {
    if doomed.is_empty() {
        return Ok(0);
    }
    let total = doomed.len() as u64;
    let options = BulkOptions { concurrency: in_flight.map_or(0, NonZeroUsize::get), ..Default::default() };
    let report = table.bulk_write(BulkOperation::Delete, doomed, Some(options)).await;
    if let Some(failure) = report.failures.iter().find(|f| !f.error.is_not_found()) {
        let keys =
            failure.keys.as_ref().map_or_else(String::new, |(p, r)| format!(" (PartitionKey `{p}`, RowKey `{r}`)"));
        return Err(TransferError::failed(format!(
            "{} entities not in the backup could not be deleted{keys}: {}; run the same command again to go on",
            report.failures.len(),
            failure.error
        )));
    }
    Ok(total)
}
