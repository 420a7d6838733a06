//! Writing entities into the target table, for `import` and `copy`: a chunk at a time through the client's bulk
//! writer ([`write_chunk`]), each entity settled (written, skipped, or rejected with its source, keys, property
//! and rule) before the chunk's checkpoint is written, so a resumed run starts after the last chunk settled.
//!
//! A run stopped in the middle of a chunk may have written some of its entities (an import and a copy write two
//! chunks at once). What a resumed run reads within the chunks that were in flight is therefore settled before
//! it is written ([`ChunkWriter::resumed`]): the stored
//! entities with its keys
//! are read, as the span of their PartitionKeys (one page per 1,000 of them stored) or, where that span holds
//! mostly other entities, partition by partition with the range reads the bulk writer uses for a transaction
//! whose reply was lost ([`TableClient::get_many`]): a few queries, not one read per entity. One that holds the same
//! properties ([`same_entity`]) counts as written by the stopped run and is not sent again; the others are
//! written as in a run that was never stopped (an insert of keys that exist is rejected, or skipped with
//! [`WriteMode::InsertOrSkip`]). Upserts (`merge`, `replace`) write the same entity twice to the same effect,
//! and are not read first.
//!
//! Layer: service.

use crate::checkpoint::same_entity;
use crate::error::{client_error_kind, ErrorKind, TransferError};
use crate::format::{jsonl, ToWrite};
use crate::progress::{Control, Event};
use crate::rejects::Reject;
use futures::TryStreamExt as _;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use table_model::client::{
    BulkFailure, BulkOperation, BulkOptions, BulkSlots, Error as ClientError, ErrorKind as ClientErrorKind,
    FailureCause, TableClient,
};
use table_model::filter;
use table_model::key::service_order;
use table_model::{
    BatchErrorKind, ETag, EncodeError, EncodedEntity, Entity, EntityError, ErrorCode, KeyKind, PartitionKey, Query,
    RequestError, RequestErrorKind, RowKey, RuleSetErrorKind, UpdateMode, WriteEntity,
};

/// How `import` and `copy` write each entity.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum WriteMode {
    /// Insert; an entity whose keys exist is rejected (alone: the others of its transaction are written).
    #[default]
    Insert,
    /// Insert; an entity whose keys exist is skipped, and the stored one kept.
    InsertOrSkip,
    /// Insert, or merge its properties into the existing entity.
    Merge,
    /// Insert, or replace the existing entity.
    Replace,
}

impl WriteMode {
    /// The bulk operation of the mode.
    ///
    /// ```
    /// use table_model::client::BulkOperation;
    /// use table_model_transfer::write::WriteMode;
    /// assert_eq!(WriteMode::InsertOrSkip.operation(), BulkOperation::Insert);
    /// ```
    pub fn operation(self) -> BulkOperation {
        match self {
            WriteMode::Insert | WriteMode::InsertOrSkip => BulkOperation::Insert,
            WriteMode::Merge => BulkOperation::Upsert(UpdateMode::Merge),
            WriteMode::Replace => BulkOperation::Upsert(UpdateMode::Replace),
        }
    }
}

/// An entity with the place it was read from.
#[derive(Debug)]
pub struct Line {
    /// The input's index (a file of an import), for the order of the reject file.
    pub file: usize,
    /// The input's name in the reject file.
    pub source: Arc<str>,
    /// Its line or row in the input (for `copy`: its number in the order read).
    pub number: u64,
    /// The entity, without the server's `Timestamp` and ETag: decoded, or its keys and body as read from its
    /// line.
    pub entity: ToWrite,
}

impl WriteEntity for Line {
    fn encode(&self) -> Result<EncodedEntity, EncodeError> {
        self.entity.encode()
    }

    fn keys(&self) -> Result<(PartitionKey, RowKey), EntityError> {
        self.entity.keys()
    }

    fn etag(&self) -> Option<&ETag> {
        None
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

impl Settled {
    /// Adds what another part of the same chunk came to; the rejects stay in no particular order.
    pub fn add(&mut self, other: Settled) {
        self.written += other.written;
        self.skipped += other.skipped;
        self.already += other.already;
        self.rejects.extend(other.rejects);
    }
}

/// How [`write_chunk`] writes.
#[derive(Debug)]
pub struct ChunkWriter<'a> {
    /// The target.
    pub table: &'a TableClient,
    /// The mode.
    pub mode: WriteMode,
    /// Whether a stopped run may have written part of this chunk (a resumed run's entities within the chunks' size
    /// of the checkpoint): its entities are then read from the target before it is written (see the module's
    /// documentation).
    pub resumed: bool,
    /// Where progress goes: [`Event::Entities`], the run's [`Tally`].
    pub control: &'a Control,
    /// The entities the run has settled, which this chunk's add to as they are written.
    pub tally: Tally,
    /// The bulk writer's pace per partition ([`crate::rate::partition_limit_for`]).
    pub partition_rate: Option<std::num::NonZeroU32>,
    /// Transactions in flight at once (`None`: the bulk writer's default, 8).
    pub in_flight: Option<std::num::NonZeroUsize>,
    /// Places in flight shared with the chunks written beside this one ([`BulkOptions::slots`]); `None`: the
    /// chunk is written alone.
    pub slots: Option<BulkSlots>,
}

/// The entities a run has settled (written, found written, skipped or rejected), which its progress reports
/// ([`Event::Entities`]): chunks written side by side add to the same count, so that it only grows. Clones
/// share the count.
///
/// ```
/// use table_model_transfer::write::Tally;
/// let tally = Tally::new(10);
/// assert_eq!(tally.clone().add(5), 15);
/// assert_eq!(tally.get(), 15);
/// ```
#[derive(Clone, Debug, Default)]
pub struct Tally(Arc<TallyInner>);

#[derive(Debug, Default)]
struct TallyInner {
    count: AtomicU64,
    /// Woken at each addition, for [`Tally::reaches`].
    added: tokio::sync::Notify,
}

impl Tally {
    /// A count starting at `settled` (what a resumed run's checkpoint says was settled).
    pub fn new(settled: u64) -> Self {
        Tally(Arc::new(TallyInner { count: AtomicU64::new(settled), added: tokio::sync::Notify::new() }))
    }

    /// Adds `n`; the count after it.
    pub fn add(&self, n: u64) -> u64 {
        let count = self.0.count.fetch_add(n, Ordering::Relaxed) + n;
        self.0.added.notify_waiters();
        count
    }

    /// The count.
    pub fn get(&self) -> u64 {
        self.0.count.load(Ordering::Relaxed)
    }

    /// Waits until the count is at least `n`.
    pub async fn reaches(&self, n: u64) {
        loop {
            // Registered before the count is read, so that an addition in between still wakes it.
            let added = self.0.added.notified();
            let mut added = std::pin::pin!(added);
            added.as_mut().enable();
            if self.get() >= n {
                return;
            }
            added.await;
        }
    }
}

/// Writes a chunk and settles each of its entities: written, skipped, counted as written by a stopped run, or
/// rejected with its rule.
///
/// # Errors
/// [`TransferError`] when the target could not be reached for some of them, or answered a transient status
/// (`503`, `500`...) past the retries: the chunk is not settled, and the checkpoint must stay before it, so
/// that a resumed run writes it again.
pub async fn write_chunk(writer: &ChunkWriter<'_>, lines: Vec<Line>) -> Result<Settled, TransferError> {
    let mut settled = Settled::default();
    let lines = if writer.resumed && writer.mode.operation() == BulkOperation::Insert {
        let (already, rest) = settle_stored(writer.table, lines).await?;
        settled.already = already;
        writer.tally.add(already);
        rest
    } else {
        lines
    };
    let (written, failed) = write_all(writer, lines).await;
    if let Some(failure) = failed.iter().find(|f| stops_the_run(&f.error)) {
        return Err(TransferError::new(client_error_kind(&failure.error), failure.error.to_string()));
    }
    settled.written = written;
    for failure in failed {
        let exists = failure.error.error_code() == Some(ErrorCode::EntityAlreadyExists);
        if writer.mode == WriteMode::InsertOrSkip && exists {
            settled.skipped += 1;
            continue;
        }
        settled.rejects.push((failure.entity.file, reject_of(&failure)));
    }
    Ok(settled)
}

/// Reads the stored entities with the keys of `lines` ([`read_stored`]) and takes out the lines a stopped run
/// wrote: those stored with the same properties. Returns how many were, and the lines still to write, in their
/// order.
async fn settle_stored(table: &TableClient, lines: Vec<Line>) -> Result<(u64, Vec<Line>), TransferError> {
    let stored = read_stored(table, &lines).await?;
    let before = lines.len();
    let rest: Vec<Line> = lines
        .into_iter()
        .filter(|line| {
            // A body the encoder wrote always decodes: one that did not would be written again, as unmatched.
            let same = |stored: &Entity| line.entity.to_entity().is_ok_and(|entity| same_entity(stored, &entity));
            !stored.get(&line_keys(line)).is_some_and(same)
        })
        .collect();
    Ok(((before - rest.len()) as u64, rest))
}

/// An entity's keys, owned.
fn keys_of(entity: &Entity) -> (String, String) {
    (entity.partition_key().to_string(), entity.row_key().to_string())
}

/// A line's keys, owned.
fn line_keys(line: &Line) -> (String, String) {
    (line.entity.partition_key().to_owned(), line.entity.row_key().to_owned())
}

/// The stored entities with the keys of `lines`, by keys. The span of their PartitionKeys is read first, page by
/// page, while at least half of each page is theirs (a chunk of an export's file is a run of consecutive keys:
/// one page per 1,000 of them stored); the keys not found once the span reads sparse are read partition by
/// partition with [`TableClient::get_many`], the bulk writer's read of a transaction whose reply was lost.
async fn read_stored(table: &TableClient, lines: &[Line]) -> Result<HashMap<(String, String), Entity>, TransferError> {
    let wanted: HashSet<(String, String)> = lines.iter().map(line_keys).collect();
    let mut found = HashMap::new();
    let partitions = lines.iter().map(|l| l.entity.partition_key());
    let least = partitions.clone().min_by(|a, b| service_order(a, b));
    let greatest = partitions.max_by(|a, b| service_order(a, b));
    let (Some(least), Some(greatest)) = (least, greatest) else { return Ok(found) };
    let span = filter::PARTITION_KEY.ge(least) & filter::PARTITION_KEY.le(greatest);
    let mut pages = table.query::<Entity>(&Query::new().filter(span), None)?.into_pages();
    while let Some(page) = pages.try_next().await? {
        let read = page.entities.len();
        let mut ours = 0;
        for entity in page.entities {
            let keys = keys_of(&entity);
            if wanted.contains(&keys) {
                ours += 1;
                found.insert(keys, entity);
            }
        }
        if page.continuation.is_none() {
            // The whole span was read: the keys not found are not stored.
            return Ok(found);
        }
        if 2 * ours < read {
            break;
        }
    }
    drop(pages);
    let mut missing: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (partition, row) in wanted.iter().filter(|keys| !found.contains_key(*keys)) {
        missing.entry(partition.as_str()).or_default().push(row.as_str());
    }
    let mut more = Vec::new();
    for (partition, row_keys) in missing {
        let partition_key = PartitionKey::new(partition).expect("the key of an entity read is valid");
        more.extend(table.get_many(&partition_key, &row_keys, None).await?.into_values());
    }
    found.extend(more.into_iter().map(|entity| (keys_of(&entity), entity)));
    Ok(found)
}

/// The reject of an entity the target did not take: the rule is the service's or the library's own words,
/// without the table and keys the reject names apart.
fn reject_of(failure: &BulkFailure<Line>) -> Reject {
    let rule = match &failure.cause {
        FailureCause::RolledBack { failed_index, failed_row_key } => format!(
            "rolled back with its transaction, whose operation {failed_index} (RowKey `{failed_row_key}`) was refused"
        ),
        _ => rule_of(&failure.error),
    };
    let line = &failure.entity;
    let mut text = Vec::new();
    // An entity the encoder refuses has no line to show but its keys; a body is its line.
    match &line.entity {
        ToWrite::Decoded(entity) => drop(jsonl::write_entity(entity, &mut text)),
        ToWrite::Encoded(encoded) => text.extend_from_slice(encoded.body().as_bytes()),
    }
    Reject {
        source: line.source.to_string(),
        line: line.number,
        partition_key: Some(line.entity.partition_key().to_string()),
        row_key: Some(line.entity.row_key().to_string()),
        property: property_of(&failure.error),
        rule,
        text: String::from_utf8_lossy(jsonl::trim_line_end(&text)).into_owned(),
    }
}

/// The statuses that `azure_core`'s retry policy retries (`docs/rules.md` §12): still failing after the
/// retries, they say the service is unwell, not that the entity is wrong.
const TRANSIENT: [u16; 6] = [408, 429, 500, 502, 503, 504];

/// Whether a failure stops the run instead of rejecting its entity: no answer, a refused credential, or a
/// transient status the retries did not outlast. A resumed run writes the chunk again.
fn stops_the_run(error: &ClientError) -> bool {
    client_error_kind(error) == ErrorKind::Unreachable || error.status().is_some_and(|s| TRANSIENT.contains(&s))
}

/// The rule an entity broke, in the service's or the library's words, without the table and keys that the
/// client's message starts with (a reject names them apart) nor the place of the entity in a transaction (a
/// bulk write's own arrangement).
fn rule_of(error: &ClientError) -> String {
    match error.kind() {
        ClientErrorKind::Service(e) => e.to_string(),
        ClientErrorKind::Request(e) => request_rule(e),
        ClientErrorKind::Response(e) => e.to_string(),
        ClientErrorKind::Connection(e) => e.to_string(),
        ClientErrorKind::OutcomeUnknown(e) => e.to_string(),
        _ => error.to_string(),
    }
}

/// A request error's rule: an operation of a transaction refused before sending is its own error's.
fn request_rule(error: &RequestError) -> String {
    match error.kind() {
        RequestErrorKind::Batch(e) => match e.kind() {
            BatchErrorKind::Request(e) => request_rule(e),
            _ => e.to_string(),
        },
        _ => error.to_string(),
    }
}

/// The property or key a refused entity's error names, if any.
fn property_of(error: &ClientError) -> Option<String> {
    let ClientErrorKind::Request(e) = error.kind() else { return None };
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
///
/// The chunk is in memory already: the bulk writer may hold all of it in transactions not yet answered, so that
/// a chunk of many partitions in key order (an export's file) keeps every transaction in flight, where its
/// default bound of entities held kept three or four partitions of 500, one transaction each.
async fn write_all(writer: &ChunkWriter<'_>, lines: Vec<Line>) -> (u64, Vec<BulkFailure<Line>>) {
    let max_buffered = lines.len();
    let options = || {
        let control = writer.control.clone();
        let tally = writer.tally.clone();
        // What this round's bulk write has reported written so far, which the tally holds already.
        let counted = AtomicU64::new(0);
        BulkOptions {
            progress: Some(Arc::new(move |p| {
                let new = p.written.saturating_sub(counted.swap(p.written, Ordering::Relaxed));
                control.report(Event::Entities(tally.add(new)));
            })),
            partition_rate: writer.partition_rate,
            concurrency: writer.in_flight.map_or(0, std::num::NonZeroUsize::get),
            max_buffered,
            slots: writer.slots.clone(),
            ..Default::default()
        }
    };
    let operation = writer.mode.operation();
    let report = writer.table.bulk_write(operation, lines, Some(options())).await;
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
        let report = writer.table.bulk_write(operation, lines, Some(options())).await;
        written += report.written;
        pending = report.failures;
    }
    failed.sort_by_key(|f| (f.entity.file, f.entity.number));
    (written, failed)
}
