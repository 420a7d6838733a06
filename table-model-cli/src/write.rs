//! Writing entities into the target table, for `import` and `copy`: a chunk at a time through the client's bulk
//! writer ([`write_chunk`]), each entity settled (written, skipped, or rejected with its source, keys, property
//! and rule) before the chunk's checkpoint is written, so a resumed run starts after the last chunk settled.
//!
//! A run stopped in the middle of a chunk may have written some of its entities. Resumed, an insert of one of
//! them meets `409 EntityAlreadyExists`: the stored entity is then read, and if it holds the same properties
//! ([`same_entity`]) it counts as imported by the stopped run; if not, it is an entity that was there before,
//! rejected (or skipped with `insert-or-skip`) as in a run that was never stopped. Upserts (`merge`, `replace`)
//! write the same entity twice to the same effect.

use crate::checkpoint::{same_entity, AbortAfter};
use crate::cli::ImportMode;
use crate::error::{client_outcome, CliError, Outcome};
use crate::format::jsonl;
use crate::progress::Progress;
use crate::rejects::Reject;
use std::sync::Arc;
use table_model::client::{
    BulkFailure, BulkOperation, BulkOptions, Error as ClientError, ErrorKind, FailureCause, TableClient,
};
use table_model::{
    BatchErrorKind, ETag, EncodeError, EncodedEntity, Entity, EntityError, ErrorCode, KeyKind, PartitionKey,
    RequestError, RequestErrorKind, RowKey, RuleSetErrorKind, UpdateMode, WriteEntity,
};

/// An entity with the place it was read from.
#[derive(Debug)]
pub struct Line {
    /// The input's index (a file of an import), for the order of the reject file.
    pub file: usize,
    /// The input's name in the reject file.
    pub source: Arc<str>,
    /// Its line or row in the input (for `copy`: its number in the order read).
    pub number: u64,
    /// The entity, without the server's `Timestamp` and ETag.
    pub entity: Entity,
}

impl WriteEntity for Line {
    fn encode(&self) -> Result<EncodedEntity, EncodeError> {
        self.entity.encode()
    }

    fn keys(&self) -> Result<(PartitionKey, RowKey), EntityError> {
        WriteEntity::keys(&self.entity)
    }

    fn etag(&self) -> Option<&ETag> {
        None
    }
}

/// The bulk operation of a mode.
pub fn operation(mode: ImportMode) -> BulkOperation {
    match mode {
        ImportMode::Insert | ImportMode::InsertOrSkip => BulkOperation::Insert,
        ImportMode::Merge => BulkOperation::Upsert(UpdateMode::Merge),
        ImportMode::Replace => BulkOperation::Upsert(UpdateMode::Replace),
    }
}

/// What a chunk came to.
#[derive(Debug, Default)]
pub struct Settled {
    /// Entities written by this run.
    pub written: u64,
    /// Entities skipped (`insert-or-skip`, their keys exist).
    pub skipped: u64,
    /// Entities a stopped run had written (a resumed insert met them, the same, in the table).
    pub already: u64,
    /// Entities not written, in input order, each with its input's index.
    pub rejects: Vec<(usize, Reject)>,
}

/// How [`write_chunk`] writes.
pub struct ChunkWriter<'a> {
    /// The target.
    pub table: &'a TableClient,
    /// The mode.
    pub mode: ImportMode,
    /// Whether this run resumes a stopped one: a `409` is then checked against the stored entity.
    pub resumed: bool,
    /// Progress, counted from `done` entities.
    pub progress: &'a Progress,
    /// Entities written before this chunk, for progress and the test-only abort.
    pub done: u64,
    /// The test-only abort (counting entities written).
    pub abort: AbortAfter,
    /// The bulk writer's pace per partition ([`crate::rate::partition_limit_for`]).
    pub partition_rate: Option<std::num::NonZeroU32>,
}

/// Writes a chunk and settles each of its entities: written, skipped, counted as written by a stopped run, or
/// rejected with its rule.
///
/// # Errors
/// [`CliError`] when the target could not be reached for some of them, or answered a transient status
/// (`503`, `500`...) past the retries: the chunk is not settled, and the checkpoint must stay before it, so
/// that a resumed run writes it again.
pub async fn write_chunk(writer: &ChunkWriter<'_>, lines: Vec<Line>) -> Result<Settled, CliError> {
    let (written, failed) = write_all(writer, lines).await;
    if let Some(failure) = failed.iter().find(|f| stops_the_run(&f.error)) {
        return Err(CliError::new(client_outcome(&failure.error), failure.error.to_string()));
    }
    let mut settled = Settled { written, ..Settled::default() };
    for failure in failed {
        let exists = failure.error.error_code() == Some(ErrorCode::EntityAlreadyExists);
        if exists && writer.resumed {
            let (pk, rk) = (failure.entity.entity.partition_key(), failure.entity.entity.row_key());
            let stored: Option<Entity> = writer.table.try_get(pk, rk, None).await?;
            if stored.is_some_and(|stored| same_entity(&stored, &failure.entity.entity)) {
                settled.already += 1;
                continue;
            }
        }
        if writer.mode == ImportMode::InsertOrSkip && exists {
            settled.skipped += 1;
            continue;
        }
        let rule = match &failure.cause {
            FailureCause::RolledBack { failed_index, failed_row_key } => format!(
                "rolled back with its transaction, whose operation {failed_index} (RowKey `{failed_row_key}`) was refused"
            ),
            _ => failure.error.to_string(),
        };
        let line = &failure.entity;
        let mut text = Vec::new();
        // An entity the encoder refuses has no line to show but its keys.
        let _ = jsonl::write_entity(&line.entity, &mut text);
        settled.rejects.push((
            line.file,
            Reject {
                source: line.source.to_string(),
                line: line.number,
                partition_key: Some(line.entity.partition_key().to_string()),
                row_key: Some(line.entity.row_key().to_string()),
                property: property_of(&failure.error),
                rule,
                text: String::from_utf8_lossy(jsonl::trim_line_end(&text)).into_owned(),
            },
        ));
    }
    Ok(settled)
}

/// The statuses that `azure_core`'s retry policy retries (`docs/rules.md` §12): still failing after the
/// retries, they say the service is unwell, not that the entity is wrong.
const TRANSIENT: [u16; 6] = [408, 429, 500, 502, 503, 504];

/// Whether a failure stops the run instead of rejecting its entity: no answer, a refused credential, or a
/// transient status the retries did not outlast. A resumed run writes the chunk again.
fn stops_the_run(error: &ClientError) -> bool {
    client_outcome(error) == Outcome::Unreachable || error.status().is_some_and(|s| TRANSIENT.contains(&s))
}

/// The property or key a refused entity's error names, if any.
fn property_of(error: &ClientError) -> Option<String> {
    let ErrorKind::Request(e) = error.kind() else { return None };
    request_property(e)
}

/// The property or key a request error names: a rule of the target's service, an entity that does not encode,
/// or either of these as the operation of a transaction (how the bulk writer refuses an entity).
fn request_property(error: &RequestError) -> Option<String> {
    match error.kind() {
        RequestErrorKind::ServiceRule { error, value } => match error.kind() {
            RuleSetErrorKind::KeyTooLong { key: KeyKind::Partition, .. } => Some("PartitionKey".to_owned()),
            RuleSetErrorKind::KeyTooLong { key: KeyKind::Row, .. } => Some("RowKey".to_owned()),
            RuleSetErrorKind::ReservedPropertyName { .. } => Some(value.clone()),
            _ => None,
        },
        RequestErrorKind::Encode(e) => e.property().map(str::to_owned),
        RequestErrorKind::Batch(e) => match e.kind() {
            BatchErrorKind::Request(e) => request_property(e),
            _ => None,
        },
        _ => None,
    }
}

/// Writes the entities with one bulk write, then again those only rolled back with a transaction another
/// entity failed, until none is; the failed ones are returned, in input order.
async fn write_all(writer: &ChunkWriter<'_>, lines: Vec<Line>) -> (u64, Vec<BulkFailure<Line>>) {
    let options = |already: u64| {
        let progress = writer.progress.clone();
        let (done, abort) = (writer.done, writer.abort.limit());
        BulkOptions {
            progress: Some(Arc::new(move |p| {
                progress.set_entities(done + already + p.written);
                AbortAfter::check(abort, done + already + p.written);
            })),
            partition_rate: writer.partition_rate,
            ..Default::default()
        }
    };
    let operation = operation(writer.mode);
    let report = writer.table.bulk_write(operation, lines, Some(options(0))).await;
    let mut written = report.written;
    let mut failed = Vec::new();
    let mut pending = report.failures;
    loop {
        let (again, done): (Vec<_>, Vec<_>) =
            pending.into_iter().partition(|f| matches!(f.cause, FailureCause::RolledBack { .. }));
        failed.extend(done);
        if again.is_empty() {
            break;
        }
        // Each round drops at least the failed entity of every transaction rolled back, so this ends.
        let lines = again.into_iter().map(|f| f.entity);
        let report = writer.table.bulk_write(operation, lines, Some(options(written))).await;
        written += report.written;
        pending = report.failures;
    }
    failed.sort_by_key(|f| (f.entity.file, f.entity.number));
    (written, failed)
}
