//! Bulk writes: any number of entities, grouped by PartitionKey into transactions of at most 100 operations
//! and under the body limit (measured on the encoded body), sent with bounded concurrency, and reported so
//! that nothing is lost.

use super::core::new_request_id;
use super::error::{Error, ErrorKind};
use super::options::client_request_id;
use super::table::{precondition, TableClient};
use super::trace::{self, Operation};
use crate::batch::Batch;
use crate::key::{PartitionKey, RowKey};
use crate::limits::BATCH_MAX_OPERATIONS;
use crate::request::error::{BatchError, BatchErrorKind, RequestError};
use crate::request::{UpdateMode, WriteEntity};
use azure_core::http::request::options::ClientRequestId;
use azure_core::http::ClientMethodOptions;
use futures::future::Either;
use futures::stream::FuturesUnordered;
use futures::{Stream, StreamExt};
use std::collections::{HashMap, HashSet, VecDeque};
use std::fmt;
use std::marker::PhantomData;
use std::num::{NonZeroU32, NonZeroUsize};
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

/// What a bulk write does to each entity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum BulkOperation {
    /// Insert: the entity must not exist.
    Insert,
    /// Insert, or update whatever the stored version (merge or replace).
    Upsert(UpdateMode),
    /// Update an existing entity under its own ETag (or any version when it carries none).
    Update(UpdateMode),
    /// Delete the entity with the keys of the one given, under its own ETag (or any version).
    Delete,
}

/// What [`TableClient::bulk_write`] takes: an entity it can write (a dynamic [`Entity`](crate::Entity) or a
/// `#[derive(TableEntity)]` struct, see [`WriteEntity`]), by value or by reference, so that a `Vec` of entities
/// can be written without a copy: `bulk_write(op, &entities, None)`. The report hands each failed entity back as
/// it was given.
///
/// `M` is [`ByValue`] or [`ByRef`]; the compiler infers it. Implemented for every [`WriteEntity`] and every
/// reference to one, and by nothing else (the trait is sealed).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an entity a bulk write can take",
    label = "not an entity",
    note = "a bulk write takes dynamic `Entity`s or `#[derive(TableEntity)]` structs, or references to them"
)]
pub trait BulkEntity<M>: sealed::Sealed<M> {
    /// The entity written.
    type Entity: WriteEntity;

    /// The entity, borrowed.
    fn entity(&self) -> &Self::Entity;
}

/// The [`BulkEntity`] marker of an entity given by value.
#[derive(Debug)]
pub enum ByValue {}

/// The [`BulkEntity`] marker of an entity given by reference.
#[derive(Debug)]
pub enum ByRef {}

impl<T: WriteEntity> BulkEntity<ByValue> for T {
    type Entity = T;

    fn entity(&self) -> &T {
        self
    }
}

impl<T: WriteEntity> BulkEntity<ByRef> for &T {
    type Entity = T;

    fn entity(&self) -> &T {
        self
    }
}

mod sealed {
    use crate::request::WriteEntity;

    pub trait Sealed<M> {}
    impl<T: WriteEntity> Sealed<super::ByValue> for T {}
    impl<T: WriteEntity> Sealed<super::ByRef> for &T {}
}

/// How far a bulk write is, given to [`BulkOptions::progress`] after each transaction.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct BulkProgress {
    /// Entities written so far.
    pub written: u64,
    /// Entities that will not be written (see [`BulkReport::failures`]).
    pub failed: u64,
    /// The number of entities of the input, when it is known in advance (an iterator with an exact size).
    pub total: Option<u64>,
    /// Transactions answered.
    pub transactions: u64,
    /// Request body bytes of the transactions answered.
    pub bytes: u64,
}

/// A progress callback.
pub type ProgressFn = Arc<dyn Fn(&BulkProgress) + Send + Sync>;

/// The options of a bulk write.
///
/// Each transaction's requests carry an `x-ms-client-request-id` of their own, so that the service's logs tell
/// them apart: the bulk write's id (from [`with_client_request_id`](Self::with_client_request_id), else a new
/// random UUID), a `-` and the transaction's index in the order sent, `import-7-0`, `import-7-1`, and so on.
/// The report gives the id ([`BulkReport::client_request_id`]) and each failure's transaction
/// ([`BulkFailure::transaction`]).
#[derive(Clone, Default)]
pub struct BulkOptions<'a> {
    /// Transactions in flight at once; `0` for the default, [`DEFAULT_CONCURRENCY`]. A partition's transactions
    /// are sent one after the other, in input order; of the partitions with none in flight, the one with the most
    /// transactions waiting goes first, so that the places in flight stay full to the end.
    pub concurrency: usize,
    /// How many entities may wait in transactions not yet answered; `0` for the default, 200 per unit of
    /// concurrency. Memory is bounded by this, not by the input: with many partitions, transactions are sent
    /// before they are full.
    pub max_buffered: usize,
    /// Called after each transaction is answered.
    pub progress: Option<ProgressFn>,
    /// At most this many entities per second into any one partition (`None`: no bound). A partition's next
    /// transaction waits, holding its place among the `concurrency`, until its partition's transactions so far
    /// in this call fit the rate (the pace is not carried from one call to the next). Azure Table Storage's documented target for one partition is 2,000 entities per second
    /// ([`PARTITION_TARGET`], `docs/rules.md` §12); past it the service answers `503 ServerBusy`.
    pub partition_rate: Option<NonZeroU32>,
    /// Places in flight shared with other bulk writes (`None`: this write's `concurrency` alone): each
    /// transaction takes one of them for as long as it is under way, its retries included, so that writes
    /// given the same [`BulkSlots`] keep at most its count of transactions in flight together, each still at
    /// most its own `concurrency`.
    pub slots: Option<BulkSlots>,
    /// `azure_core`'s per-call options, for every transaction.
    pub method_options: ClientMethodOptions<'a>,
}

/// Places in flight that bulk writes share ([`BulkOptions::slots`]): two writes of different partitions side
/// by side (the next chunk of an import started while the last transactions of the one before are answered)
/// keep the places full without sending more transactions at once than the service is given. The places are
/// taken in the order transactions ask for them. Clones share the same places.
///
/// ```
/// use std::num::NonZeroUsize;
/// use table_model::client::{BulkOptions, BulkSlots};
/// let slots = BulkSlots::new(NonZeroUsize::new(8).expect("not zero"));
/// let first = BulkOptions { concurrency: 8, slots: Some(slots.clone()), ..Default::default() };
/// let second = BulkOptions { concurrency: 8, slots: Some(slots.clone()), ..Default::default() };
/// // Given to two `bulk_write`s run together: 8 transactions in flight between them, not 16.
/// assert_eq!((slots.places(), slots.available()), (8, 8));
/// # drop((first, second));
/// ```
#[derive(Clone)]
pub struct BulkSlots {
    semaphore: Arc<tokio::sync::Semaphore>,
    places: usize,
}

impl BulkSlots {
    /// `places` places in flight, all free.
    pub fn new(places: NonZeroUsize) -> Self {
        BulkSlots { semaphore: Arc::new(tokio::sync::Semaphore::new(places.get())), places: places.get() }
    }

    /// How many places there are.
    pub fn places(&self) -> usize {
        self.places
    }

    /// How many places are free now.
    pub fn available(&self) -> usize {
        self.semaphore.available_permits()
    }

    /// Waits for a free place and holds it until the guard is dropped. The semaphore is never closed, so a
    /// place always comes.
    async fn take(&self) -> Option<tokio::sync::SemaphorePermit<'_>> {
        self.semaphore.acquire().await.ok()
    }
}

impl fmt::Debug for BulkSlots {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BulkSlots").field("places", &self.places).field("available", &self.available()).finish()
    }
}

/// Transactions a bulk write keeps in flight when [`BulkOptions::concurrency`] is `0`.
pub const DEFAULT_CONCURRENCY: NonZeroUsize = NonZeroUsize::new(8).expect("not zero");

/// Azure Table Storage's documented scalability target for one partition: 2,000 entities (of 1 KiB) per second.
pub const PARTITION_TARGET: NonZeroU32 = NonZeroU32::new(2_000).expect("not zero");

impl BulkOptions<'_> {
    /// The id the transactions' `x-ms-client-request-id`s start with (each adds `-` and its index): visible
    /// ASCII characters, at most 1,024 of them with the index (a header that cannot be sent fails the
    /// transactions, and nothing is sent).
    ///
    /// ```
    /// use table_model::client::BulkOptions;
    /// let options = BulkOptions { concurrency: 4, ..Default::default() }.with_client_request_id("import-7");
    /// assert_eq!(options.client_request_id().as_deref(), Some("import-7"));
    /// ```
    #[must_use]
    pub fn with_client_request_id(mut self, id: impl Into<String>) -> Self {
        self.method_options.context.insert(ClientRequestId::new(id.into()));
        self
    }

    /// The id given with [`with_client_request_id`](Self::with_client_request_id), if any.
    pub fn client_request_id(&self) -> Option<String> {
        client_request_id(&self.method_options.context)
    }

    /// Transactions in flight at once: [`concurrency`](Self::concurrency), or [`DEFAULT_CONCURRENCY`] for `0`.
    pub(crate) fn in_flight(&self) -> usize {
        if self.concurrency == 0 {
            DEFAULT_CONCURRENCY.get()
        } else {
            self.concurrency
        }
    }
}

impl fmt::Debug for BulkOptions<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BulkOptions")
            .field("concurrency", &self.concurrency)
            .field("max_buffered", &self.max_buffered)
            .field("progress", &self.progress.as_ref().map(|_| "Fn"))
            .field("partition_rate", &self.partition_rate)
            .field("slots", &self.slots)
            .finish_non_exhaustive()
    }
}

/// Why an entity of a bulk write was not written.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FailureCause {
    /// The entity broke a rule and was never sent (its error says which).
    NotSent,
    /// Its operation was refused, or its transaction got no answer after the retries.
    Failed,
    /// Never sent: an earlier transaction of the bulk write got no answer after the client's retries (its error,
    /// a transport error, is this entity's), so the endpoint is taken to be unreachable and nothing more is
    /// sent. The entity may be fine to send again.
    Abandoned,
    /// Another operation of its transaction was refused, so none of the transaction was written; this entity
    /// itself may be fine to send again.
    RolledBack {
        /// The index, in the transaction, of the operation that was refused.
        failed_index: usize,
        /// The RowKey of the entity whose operation was refused.
        failed_row_key: RowKey,
    },
}

/// One transaction of a bulk write: its index, in the order the transactions were sent, and the
/// `x-ms-client-request-id` its requests carried (the bulk write's id, `-`, the index).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct BulkTransaction {
    /// The index, from 0, in the order sent.
    pub index: u64,
    /// The `x-ms-client-request-id` of its requests (each try, and the reads that settle a lost reply).
    pub client_request_id: Arc<str>,
}

/// An entity a bulk write did not write, and why. The entity is handed back, so that exactly the failed ones
/// can be sent again; its `Display` names its keys, its transaction and the reason.
#[derive(Debug)]
#[non_exhaustive]
pub struct BulkFailure<E> {
    /// The entity, as given.
    pub entity: E,
    /// Its keys, unless they are what was invalid.
    pub keys: Option<(PartitionKey, RowKey)>,
    /// The error, shared by the entities of one transaction.
    pub error: Arc<Error>,
    /// Whether the entity itself failed, or only its transaction.
    pub cause: FailureCause,
    /// The transaction it travelled in (the entities of one failed together); `None` when it was not sent.
    pub transaction: Option<BulkTransaction>,
}

impl<E> BulkFailure<E> {
    /// The failure without its entity.
    pub(crate) fn without_entity(self) -> BulkFailure<()> {
        let BulkFailure { entity: _, keys, error, cause, transaction } = self;
        BulkFailure { entity: (), keys, error, cause, transaction }
    }
}

impl<E> fmt::Display for BulkFailure<E> {
    /// The keys, the transaction and the reason: ``PartitionKey `p`, RowKey `r` (transaction 3, request id
    /// `import-7-3`): ...``.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.keys {
            Some((partition_key, row_key)) => write!(f, "PartitionKey `{partition_key}`, RowKey `{row_key}`")?,
            None => f.write_str("an entity without valid keys")?,
        }
        if let Some(t) = &self.transaction {
            write!(f, " (transaction {}, request id `{}`)", t.index, t.client_request_id)?;
        }
        match &self.cause {
            FailureCause::NotSent => write!(f, ": not sent: {}", self.error),
            FailureCause::Failed => write!(f, ": {}", self.error),
            FailureCause::Abandoned => {
                write!(f, ": not sent: an earlier transaction got no answer after the retries: {}", self.error)
            }
            FailureCause::RolledBack { failed_index, failed_row_key } => write!(
                f,
                ": rolled back with its transaction, whose operation {failed_index} (RowKey `{failed_row_key}`) \
                 was refused"
            ),
        }
    }
}

/// What a bulk write did: every entity of the input is either counted in `written` or listed in `failures`.
///
/// A bulk write never fails as a whole, so a report with failures is easy to drop unread: the compiler warns
/// when it is, and [`into_result`](Self::into_result) makes the failures an error for `?`.
///
/// ```no_run
/// # use table_model::client::{BulkOperation, TableClient};
/// # use table_model::Entity;
/// async fn save(table: &TableClient, entities: &[Entity]) -> Result<(), Box<dyn std::error::Error>> {
///     table.bulk_write(BulkOperation::Insert, entities, None).await.into_result()?;
///     Ok(())
/// }
/// ```
///
/// The same call with its report dropped does not build under `deny(unused_must_use)`:
///
/// ```compile_fail
/// #![deny(unused_must_use)]
/// # use table_model::client::{BulkOperation, TableClient};
/// # use table_model::Entity;
/// async fn save(table: &TableClient, entities: &[Entity]) -> Result<(), Box<dyn std::error::Error>> {
///     table.bulk_write(BulkOperation::Insert, entities, None).await;
///     Ok(())
/// }
/// ```
#[derive(Debug)]
#[non_exhaustive]
#[must_use = "a bulk write may leave entities unwritten: read `failures`, or call `into_result()?`"]
pub struct BulkReport<E> {
    /// Entities written.
    pub written: u64,
    /// Transactions answered.
    pub transactions: u64,
    /// Request body bytes sent in those transactions.
    pub bytes: u64,
    /// Every entity not written, with the reason.
    pub failures: Vec<BulkFailure<E>>,
    /// The id each transaction's `x-ms-client-request-id` starts with (see [`BulkOptions`]).
    pub client_request_id: String,
}

impl<E> BulkReport<E> {
    /// Whether every entity was written.
    pub fn is_complete(&self) -> bool {
        self.failures.is_empty()
    }

    /// The entities not written, to send again.
    pub fn into_failed_entities(self) -> Vec<E> {
        self.failures.into_iter().map(|f| f.entity).collect()
    }

    /// The number of entities written when every one was; else a [`BulkError`] that says how many were not, and
    /// names the first few with their keys and reason (the entities themselves are dropped: to send the failed
    /// ones again, read [`failures`](Self::failures) instead).
    ///
    /// ```no_run
    /// use table_model::client::{BulkOperation, TableServiceClient};
    /// use table_model::{Entity, PartitionKey, RowKey, TableName};
    /// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// let service = TableServiceClient::from_connection_string("UseDevelopmentStorage=true", None)?;
    /// let table = service.create_table_if_not_exists(&TableName::from_static("Readings"), None).await?;
    /// let partition = PartitionKey::new("sensor-1")?;
    /// let readings: Vec<Entity> =
    ///     (0..250).map(|i| Entity::new(partition.clone(), RowKey::new(format!("{i:04}")).unwrap())).collect();
    /// let written = table.bulk_write(BulkOperation::Insert, &readings, None).await.into_result()?;
    /// assert_eq!(written, 250);
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// [`BulkError`] when an entity was not written.
    pub fn into_result(self) -> Result<u64, BulkError> {
        if self.failures.is_empty() {
            return Ok(self.written);
        }
        let failures = self.failures.into_iter().map(BulkFailure::without_entity).collect();
        Err(BulkError { written: self.written, failures })
    }
}

/// A bulk write that left entities unwritten, as an error (from [`BulkReport::into_result`]): how many, and the
/// first few with their keys, transaction and reason; the failures that name their own error come first.
///
/// ```
/// use table_model::client::BulkError;
/// fn is_std_error<E: std::error::Error + Send + Sync + 'static>() {}
/// is_std_error::<BulkError>(); // `?` turns it into a `Box<dyn Error + Send + Sync>`
/// ```
#[derive(Debug)]
pub struct BulkError {
    written: u64,
    failures: Vec<BulkFailure<()>>,
}

/// How many failures a [`BulkError`]'s message names.
const SHOWN: usize = 3;

impl BulkError {
    /// Entities written.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Every entity not written (without the entity), in the report's order.
    pub fn failures(&self) -> &[BulkFailure<()>] {
        &self.failures
    }

    /// The failures the message names: those that failed for their own reason first, then those rolled back.
    fn shown(&self) -> impl Iterator<Item = &BulkFailure<()>> {
        let rolled_back = |f: &&BulkFailure<()>| matches!(f.cause, FailureCause::RolledBack { .. });
        let own = self.failures.iter().filter(move |f| !rolled_back(f));
        own.chain(self.failures.iter().filter(rolled_back)).take(SHOWN)
    }
}

impl fmt::Display for BulkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let failed = self.failures.len();
        let total = self.written + failed as u64;
        write!(f, "{failed} of {total} entities were not written: ")?;
        for (i, failure) in self.shown().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            failure.fmt(f)?;
        }
        if failed > SHOWN {
            write!(f, "; and {} more", failed - SHOWN)?;
        }
        Ok(())
    }
}

impl std::error::Error for BulkError {
    /// The error of the first failure the message names.
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.shown().next().map(|f| &*f.error as &(dyn std::error::Error + 'static))
    }
}

/// A transaction being filled, and the entities it holds.
struct Open<E> {
    batch: Batch,
    entities: Vec<E>,
    /// The exact size of its request body.
    size: usize,
}

/// A full (or flushed) transaction, waiting for its partition to be free and a place in flight.
struct Sealed<E> {
    partition: String,
    batch: Batch,
    entities: Vec<E>,
    size: usize,
}

/// The state of one bulk write, of entities `E` given as `M` (see [`BulkEntity`]).
struct Writer<'c, E, M> {
    client: &'c TableClient,
    operation: BulkOperation,
    open: HashMap<String, Open<E>>,
    ready: VecDeque<Sealed<E>>,
    /// How many transactions of each partition wait in `ready`.
    waiting: HashMap<String, usize>,
    busy: HashSet<String>,
    /// Whether [`next_ready`](Self::next_ready) found nothing, and no transaction has been sealed nor answered
    /// since: it then answers `None` at once, where it would look through every transaction waiting again (for
    /// each entity read while the places in flight outnumber the partitions not busy).
    nothing_to_send: bool,
    buffered: usize,
    report: BulkReport<E>,
    progress: BulkProgress,
    /// Transactions sent so far: the index of the next one.
    sent: u64,
    /// [`BulkOptions::partition_rate`].
    partition_rate: Option<NonZeroU32>,
    /// Under a partition rate: when each partition's next transaction may start.
    partition_next: HashMap<String, Instant>,
    /// The transport error of a transaction that got no answer after the retries: once set, nothing more is
    /// sent ([`FailureCause::Abandoned`]).
    gave_up: Option<Arc<Error>>,
    marker: PhantomData<fn() -> M>,
}

impl<'c, E: BulkEntity<M>, M> Writer<'c, E, M> {
    /// Adds an entity to its partition's open transaction, sealing transactions that are full.
    fn add(&mut self, item: E) {
        let keys = match item.entity().keys() {
            Ok(keys) => keys,
            Err(e) => return self.not_sent(item, None, RequestError::from(e).into()),
        };
        let partition = keys.0.as_str().to_owned();
        for attempt in 0..2 {
            let open = self.open.entry(partition.clone()).or_insert_with(|| Open {
                batch: self.client.batch(keys.0.clone()),
                entities: Vec::new(),
                size: Batch::envelope_size(),
            });
            match add_operation(&mut open.batch, self.operation, item.entity()) {
                Ok(()) => {
                    let requests = &self.client.core().requests;
                    let size = open.size + open.batch.last_part_size(requests);
                    let (rules, max) = (open.batch.rules(), open.batch.rules().batch_max_body_bytes());
                    if size <= max {
                        open.size = size;
                        open.entities.push(item);
                        self.buffered += 1;
                        if open.batch.len() == BATCH_MAX_OPERATIONS {
                            self.seal(&partition);
                        }
                        return;
                    }
                    open.batch.pop();
                    if open.batch.is_empty() || attempt == 1 {
                        let error = BatchError::new(0, BatchErrorKind::BodyTooLarge { size, max, rules });
                        return self.not_sent(item, Some(keys), RequestError::from(error).into());
                    }
                }
                // Full, or this RowKey is in it already (the same entity twice in the input: the second write
                // goes in the next transaction, after the first).
                Err(e) if attempt == 0 && is_full(&e) && !open.batch.is_empty() => {}
                Err(e) => return self.not_sent(item, Some(keys), RequestError::from(e).into()),
            }
            self.seal(&partition);
        }
    }

    fn not_sent(&mut self, entity: E, keys: Option<(PartitionKey, RowKey)>, error: Error) {
        self.progress.failed += 1;
        let error = Arc::new(error.in_table(self.client.table()).for_entity(keys.clone()));
        let cause = FailureCause::NotSent;
        self.report.failures.push(BulkFailure { entity, keys, error, cause, transaction: None });
    }

    /// Reports an entity that is not sent because the endpoint is taken to be unreachable.
    fn abandon(&mut self, entity: E, error: &Arc<Error>) {
        self.progress.failed += 1;
        let keys = entity.entity().keys().ok();
        let (error, cause) = (error.clone(), FailureCause::Abandoned);
        self.report.failures.push(BulkFailure { entity, keys, error, cause, transaction: None });
    }

    /// Once the endpoint is taken to be unreachable: every entity waiting in a transaction is reported, not sent.
    fn abandon_waiting(&mut self) {
        let Some(error) = self.gave_up.clone() else { return };
        let sealed = std::mem::take(&mut self.ready).into_iter().map(|s| s.entities);
        self.waiting.clear();
        let open: Vec<Vec<E>> = self.open.drain().map(|(_, open)| open.entities).collect();
        for entities in sealed.chain(open).collect::<Vec<_>>() {
            self.buffered -= entities.len();
            for entity in entities {
                self.abandon(entity, &error);
            }
        }
    }

    /// Moves a partition's open transaction to the queue of transactions to send.
    fn seal(&mut self, partition: &str) {
        if let Some(open) = self.open.remove(partition) {
            if open.batch.is_empty() {
                return;
            }
            let Open { batch, entities, size } = open;
            *self.waiting.entry(partition.to_owned()).or_default() += 1;
            self.ready.push_back(Sealed { partition: partition.to_owned(), batch, entities, size });
            self.nothing_to_send = false;
        }
    }

    /// Seals the fullest open transaction (to free memory when too many entities wait).
    fn seal_fullest(&mut self) {
        let fullest = self.open.iter().max_by_key(|(_, open)| open.batch.len()).map(|(p, _)| p.clone());
        if let Some(partition) = fullest {
            self.seal(&partition);
        }
    }

    /// The next transaction to send, with its index and request id, and when it may be sent (under a partition
    /// rate): the first waiting of the partition with the most transactions waiting, among those with none in
    /// flight (the earliest such partition on a tie). A partition's transactions go one after the other, so one
    /// of many transactions started last would end the write alone, the others idle: longest first, the places
    /// in flight stay full to the end (a chunk of 20 partitions of 5 transactions, 8 in flight, takes 13 round
    /// trips instead of 15).
    fn next_ready(&mut self) -> Option<(Sealed<E>, BulkTransaction, Option<Instant>)> {
        if self.nothing_to_send {
            return None;
        }
        let mut next: Option<(usize, usize)> = None;
        for (index, sealed) in self.ready.iter().enumerate() {
            let waiting = self.waiting.get(&sealed.partition).copied().unwrap_or(0);
            if next.is_none_or(|(_, most)| waiting > most) && !self.busy.contains(&sealed.partition) {
                next = Some((index, waiting));
            }
        }
        let Some((index, _)) = next else {
            self.nothing_to_send = true;
            return None;
        };
        let sealed = self.ready.remove(index)?;
        match self.waiting.get_mut(&sealed.partition) {
            Some(1) | None => drop(self.waiting.remove(&sealed.partition)),
            Some(waiting) => *waiting -= 1,
        }
        self.busy.insert(sealed.partition.clone());
        let index = self.sent;
        self.sent += 1;
        let client_request_id = transaction_request_id(&self.report.client_request_id, index).into();
        let not_before = self.partition_rate.map(|rate| self.schedule(&sealed.partition, sealed.entities.len(), rate));
        Some((sealed, BulkTransaction { index, client_request_id }, not_before))
    }

    /// When a transaction of `entities` into `partition` may start under `rate` entities per second: when the
    /// partition's earlier transactions fit the rate (now, if they do); the next one's start moves past it.
    fn schedule(&mut self, partition: &str, entities: usize, rate: NonZeroU32) -> Instant {
        let now = Instant::now();
        if self.partition_next.len() > 4 * BATCH_MAX_OPERATIONS {
            // Partitions whose time has come need no entry: memory stays bounded by the busy ones.
            self.partition_next.retain(|_, next| *next > now);
        }
        let start = self.partition_next.get(partition).copied().filter(|next| *next > now).unwrap_or(now);
        let span = Duration::from_secs_f64(entities as f64 / f64::from(rate.get()));
        self.partition_next.insert(partition.to_owned(), start + span);
        start
    }

    /// Records a transaction's answer.
    fn finish(&mut self, sealed: Sealed<E>, transaction: BulkTransaction, result: Result<(), Error>) {
        self.busy.remove(&sealed.partition);
        self.nothing_to_send = false;
        self.buffered -= sealed.entities.len();
        self.progress.transactions += 1;
        self.progress.bytes += sealed.size as u64;
        match result {
            Ok(()) => self.progress.written += sealed.entities.len() as u64,
            Err(error) => {
                self.progress.failed += sealed.entities.len() as u64;
                let failed = error.service().and_then(|s| s.operation_index()).filter(|&i| i < sealed.entities.len());
                let error = Arc::new(error);
                if matches!(error.kind(), ErrorKind::Transport(_)) && self.gave_up.is_none() {
                    self.gave_up = Some(error.clone());
                }
                let keys: Vec<Option<(PartitionKey, RowKey)>> =
                    sealed.entities.iter().map(|e| e.entity().keys().ok()).collect();
                let failed_row_key = failed.and_then(|i| keys[i].as_ref().map(|(_, rk)| rk.clone()));
                for (i, (entity, keys)) in sealed.entities.into_iter().zip(keys).enumerate() {
                    let cause = match (failed, &failed_row_key) {
                        (Some(f), Some(rk)) if f != i => {
                            FailureCause::RolledBack { failed_index: f, failed_row_key: rk.clone() }
                        }
                        _ => FailureCause::Failed,
                    };
                    let (error, transaction) = (error.clone(), Some(transaction.clone()));
                    self.report.failures.push(BulkFailure { entity, keys, error, cause, transaction });
                }
            }
        }
    }
}

/// The `x-ms-client-request-id` of a bulk write's transaction: the bulk write's, `-`, the transaction's index.
fn transaction_request_id(bulk: &str, index: u64) -> String {
    format!("{bulk}-{index}")
}

/// Whether a batch refused an operation only because the batch is full or already has its RowKey.
fn is_full(e: &BatchError) -> bool {
    matches!(
        e.kind(),
        BatchErrorKind::TooManyOperations
            | BatchErrorKind::BodyTooLarge { .. }
            | BatchErrorKind::DuplicateRowKey { .. }
    )
}

fn add_operation(batch: &mut Batch, operation: BulkOperation, entity: &impl WriteEntity) -> Result<(), BatchError> {
    match operation {
        BulkOperation::Insert => batch.insert(entity).map(drop),
        BulkOperation::Upsert(mode) => batch.upsert(entity, mode).map(drop),
        BulkOperation::Update(mode) => batch.update(entity, mode, precondition(None, entity)).map(drop),
        BulkOperation::Delete => {
            let (_, row_key) = entity
                .keys()
                .map_err(|e| BatchError::new(batch.len(), BatchErrorKind::Request(Box::new(RequestError::from(e)))))?;
            batch.delete(&row_key, precondition(None, entity)).map(drop)
        }
    }
}

impl TableClient {
    /// Writes any number of entities (typed or dynamic, by value or by reference: see [`BulkEntity`]) from an
    /// iterator: grouped by PartitionKey into transactions of at most 100 operations whose encoded body stays
    /// under the limit, sent with bounded concurrency (a partition's transactions one after the other, in input
    /// order), holding at most [`BulkOptions::max_buffered`] entities at a time. An iterator is read on the
    /// calling task, which gives the other tasks of its thread their turn every hundred entities or so (tokio's
    /// cooperative budget), however quickly the iterator gives them.
    ///
    /// Never fails as a whole: the report counts every entity written and hands back every one that was not,
    /// with its error, its transaction, and whether it failed itself or was rolled back with its transaction;
    /// [`BulkReport::into_result`] makes failures an error for `?`. Retries follow the client's rules (see
    /// [`outcome`](super::outcome)): a transaction whose reply was lost is read back, not reported twice. A
    /// transaction that gets no answer at all after the retries (the endpoint down, its connections refused)
    /// stops the write: nothing more is sent, and every entity not sent yet is reported
    /// [`FailureCause::Abandoned`] with that transaction's error, at once rather than after each transaction's
    /// own retries.
    ///
    /// ```no_run
    /// use table_model::client::{BulkOperation, TableServiceClient};
    /// use table_model::{Entity, PartitionKey, RowKey, TableName};
    /// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// let service = TableServiceClient::from_connection_string("UseDevelopmentStorage=true", None)?;
    /// let table = service.create_table_if_not_exists(&TableName::from_static("Readings"), None).await?;
    /// let readings = (0..1_000_000).map(|i| {
    ///     let partition = PartitionKey::new(format!("sensor-{}", i % 10)).expect("valid");
    ///     Entity::new(partition, RowKey::new(format!("{i:08}")).expect("valid")).with("N".parse().unwrap(), i)
    /// });
    /// let report = table.bulk_write(BulkOperation::Insert, readings.map(Result::unwrap), None).await;
    /// println!("{} written, {} failed", report.written, report.failures.len());
    /// let retry = report.into_failed_entities();
    /// # let _ = retry;
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// Anything but entities and references to them is refused at compile time ("`{integer}` is not an entity
    /// a bulk write can take"):
    ///
    /// ```compile_fail
    /// # use table_model::client::{BulkOperation, TableClient};
    /// async fn numbers(table: &TableClient) {
    ///     let _ = table.bulk_write(BulkOperation::Insert, vec![1, 2, 3], None).await;
    /// }
    /// ```
    pub async fn bulk_write<E, M, I>(
        &self,
        operation: BulkOperation,
        entities: I,
        options: Option<BulkOptions<'_>>,
    ) -> BulkReport<E>
    where
        E: BulkEntity<M>,
        I: IntoIterator<Item = E>,
    {
        let entities = entities.into_iter();
        let total = match entities.size_hint() {
            (lower, Some(upper)) if lower == upper => Some(lower as u64),
            _ => None,
        };
        self.bulk_write_stream_sized(operation, futures::stream::iter(entities), total, options).await
    }

    /// [`bulk_write`](Self::bulk_write) from a stream of entities.
    pub async fn bulk_write_stream<E, M, S>(
        &self,
        operation: BulkOperation,
        entities: S,
        options: Option<BulkOptions<'_>>,
    ) -> BulkReport<E>
    where
        E: BulkEntity<M>,
        S: Stream<Item = E>,
    {
        self.bulk_write_stream_sized(operation, entities, None, options).await
    }

    async fn bulk_write_stream_sized<E, M, S>(
        &self,
        operation: BulkOperation,
        entities: S,
        total: Option<u64>,
        options: Option<BulkOptions<'_>>,
    ) -> BulkReport<E>
    where
        E: BulkEntity<M>,
        S: Stream<Item = E>,
    {
        let options = options.unwrap_or_default();
        let (tracing, table) = (self.core().tracing.as_ref(), Some(self.table()));
        let concurrency = options.in_flight();
        let max_buffered = if options.max_buffered == 0 { 200 * concurrency } else { options.max_buffered };
        let client_request_id = options.client_request_id().unwrap_or_else(|| new_request_id().to_string());
        let mut writer = Writer {
            client: self,
            operation,
            open: HashMap::new(),
            ready: VecDeque::new(),
            waiting: HashMap::new(),
            busy: HashSet::new(),
            nothing_to_send: false,
            buffered: 0,
            report: BulkReport { written: 0, transactions: 0, bytes: 0, failures: Vec::new(), client_request_id },
            progress: BulkProgress { total, ..BulkProgress::default() },
            sent: 0,
            partition_rate: options.partition_rate,
            partition_next: HashMap::new(),
            gave_up: None,
            marker: PhantomData,
        };
        let mut bulk =
            Operation::start_parent(tracing, "TableClient.bulk_write", &options.method_options.context, table);
        let bulk_ctx = bulk.ctx();
        let slots = options.slots.as_ref();
        let send = |(sealed, transaction, not_before): (Sealed<E>, BulkTransaction, Option<Instant>)| {
            let mut ctx = bulk_ctx.to_borrowed();
            ctx.insert(ClientRequestId::new(transaction.client_request_id.to_string()));
            async move {
                if let Some(at) = not_before {
                    tokio::time::sleep_until(at).await;
                }
                // A place shared with other writes, held until the answer (or the last retry's failure).
                let _place = match slots {
                    Some(slots) => slots.take().await,
                    None => None,
                };
                let batch = &sealed.batch;
                let partition = batch.partition_key().as_str();
                let mut op = Operation::start_transaction(tracing, &ctx, self.table(), partition, batch.len());
                let result = op.end_transaction(self.submit_transaction_with(batch, op.ctx()).await);
                (sealed, transaction, result.map(drop))
            }
        };
        let mut input = std::pin::pin!(entities.fuse());
        let mut input_done = false;
        let mut in_flight = FuturesUnordered::new();
        loop {
            if writer.gave_up.is_some() {
                writer.abandon_waiting();
            }
            while writer.gave_up.is_none() && in_flight.len() < concurrency {
                match writer.next_ready() {
                    Some(next) => in_flight.push(send(next)),
                    None => break,
                }
            }
            let may_read = !input_done && writer.buffered < max_buffered;
            let answered = if may_read && in_flight.is_empty() {
                Either::Left(input.next().await)
            } else if may_read {
                // The transactions in flight first: one just pushed starts only when polled, and an input that
                // is always ready (entities in memory) would otherwise hold it back until the input is read.
                match futures::future::select(in_flight.next(), input.next()).await {
                    Either::Left((answer, _)) => Either::Right(answer),
                    Either::Right((entity, _)) => Either::Left(entity),
                }
            } else if !in_flight.is_empty() {
                Either::Right(in_flight.next().await)
            } else if !writer.open.is_empty() {
                // Nothing in flight and nothing ready: send what waits, fullest first.
                writer.seal_fullest();
                continue;
            } else {
                break;
            };
            match answered {
                Either::Left(Some(entity)) => {
                    match writer.gave_up.clone() {
                        Some(error) => writer.abandon(entity, &error),
                        None => writer.add(entity),
                    }
                    // An input always ready (entities in memory) would hold the thread until `max_buffered`
                    // entities are read and encoded, tens of milliseconds in which the other tasks of this
                    // thread (another write's transactions, the connections' own tasks) wait: tokio's
                    // cooperative budget gives them their turn every 128 entities or so.
                    tokio::task::consume_budget().await;
                }
                Either::Left(None) => {
                    input_done = true;
                    let partitions: Vec<String> = writer.open.keys().cloned().collect();
                    partitions.iter().for_each(|p| writer.seal(p));
                }
                Either::Right(Some((sealed, transaction, result))) => {
                    writer.finish(sealed, transaction, result);
                    if let Some(progress) = &options.progress {
                        progress(&writer.progress);
                    }
                }
                Either::Right(None) => {}
            }
            if writer.ready.is_empty() && writer.buffered >= max_buffered && in_flight.len() < concurrency {
                writer.seal_fullest();
            }
        }
        let BulkProgress { written, transactions, bytes, .. } = writer.progress;
        bulk.set(trace::TRANSACTIONS, || i64::try_from(transactions).unwrap_or(i64::MAX).into());
        bulk.set(trace::WRITTEN, || i64::try_from(written).unwrap_or(i64::MAX).into());
        bulk.set(trace::FAILED, || i64::try_from(writer.report.failures.len()).unwrap_or(i64::MAX).into());
        drop(in_flight);
        let _ = bulk.end(Ok(()));
        BulkReport { written, transactions, bytes, ..writer.report }
    }
}
