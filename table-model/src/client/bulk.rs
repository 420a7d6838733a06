//! Bulk writes: any number of entities, grouped by PartitionKey into transactions of at most 100 operations
//! and under the body limit (measured on the encoded body), sent with bounded concurrency, and reported so
//! that nothing is lost.

use super::error::Error;
use super::options::RequestOptions;
use super::table::{precondition, TableClient};
use crate::batch::Batch;
use crate::key::{PartitionKey, RowKey};
use crate::limits::BATCH_MAX_OPERATIONS;
use crate::request::error::{BatchError, BatchErrorKind, RequestError};
use crate::request::{UpdateMode, WriteEntity};
use azure_core::http::ClientMethodOptions;
use futures::future::Either;
use futures::stream::FuturesUnordered;
use futures::{Stream, StreamExt};
use std::collections::{HashMap, HashSet, VecDeque};
use std::fmt;
use std::sync::Arc;

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
#[derive(Clone, Default)]
pub struct BulkOptions<'a> {
    /// Transactions in flight at once; `0` for the default, 8. A partition's transactions are sent one after
    /// the other, in input order.
    pub concurrency: usize,
    /// How many entities may wait in transactions not yet answered; `0` for the default, 200 per unit of
    /// concurrency. Memory is bounded by this, not by the input: with many partitions, transactions are sent
    /// before they are full.
    pub max_buffered: usize,
    /// Called after each transaction is answered.
    pub progress: Option<ProgressFn>,
    /// `azure_core`'s per-call options, for every transaction.
    pub method_options: ClientMethodOptions<'a>,
}

impl fmt::Debug for BulkOptions<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BulkOptions")
            .field("concurrency", &self.concurrency)
            .field("max_buffered", &self.max_buffered)
            .field("progress", &self.progress.as_ref().map(|_| "Fn"))
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
    /// Another operation of its transaction was refused, so none of the transaction was written; this entity
    /// itself may be fine to send again.
    RolledBack {
        /// The index, in the transaction, of the operation that was refused.
        failed_index: usize,
        /// The RowKey of the entity whose operation was refused.
        failed_row_key: RowKey,
    },
}

/// An entity a bulk write did not write, and why. The entity is handed back, so that exactly the failed ones
/// can be sent again.
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
}

/// What a bulk write did: every entity of the input is either counted in `written` or listed in `failures`.
#[derive(Debug)]
#[non_exhaustive]
pub struct BulkReport<E> {
    /// Entities written.
    pub written: u64,
    /// Transactions answered.
    pub transactions: u64,
    /// Request body bytes sent in those transactions.
    pub bytes: u64,
    /// Every entity not written, with the reason.
    pub failures: Vec<BulkFailure<E>>,
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

/// The state of one bulk write.
struct Writer<'c, E> {
    client: &'c TableClient,
    operation: BulkOperation,
    open: HashMap<String, Open<E>>,
    ready: VecDeque<Sealed<E>>,
    busy: HashSet<String>,
    buffered: usize,
    report: BulkReport<E>,
    progress: BulkProgress,
}

impl<'c, E: WriteEntity> Writer<'c, E> {
    /// Adds an entity to its partition's open transaction, sealing transactions that are full.
    fn add(&mut self, entity: E) {
        let keys = match entity.keys() {
            Ok(keys) => keys,
            Err(e) => return self.not_sent(entity, None, RequestError::from(e).into()),
        };
        let partition = keys.0.as_str().to_owned();
        for attempt in 0..2 {
            let open = self.open.entry(partition.clone()).or_insert_with(|| Open {
                batch: self.client.batch(keys.0.clone()),
                entities: Vec::new(),
                size: Batch::envelope_size(),
            });
            match add_operation(&mut open.batch, self.operation, &entity) {
                Ok(()) => {
                    let requests = &self.client.core().requests;
                    let size = open.size + open.batch.last_part_size(requests);
                    let (rules, max) = (open.batch.rules(), open.batch.rules().batch_max_body_bytes());
                    if size <= max {
                        open.size = size;
                        open.entities.push(entity);
                        self.buffered += 1;
                        if open.batch.len() == BATCH_MAX_OPERATIONS {
                            self.seal(&partition);
                        }
                        return;
                    }
                    open.batch.pop();
                    if open.batch.is_empty() || attempt == 1 {
                        let error = BatchError::new(0, BatchErrorKind::BodyTooLarge { size, max, rules });
                        return self.not_sent(entity, Some(keys), RequestError::from(error).into());
                    }
                }
                // Full, or this RowKey is in it already (the same entity twice in the input: the second write
                // goes in the next transaction, after the first).
                Err(e) if attempt == 0 && is_full(&e) && !open.batch.is_empty() => {}
                Err(e) => return self.not_sent(entity, Some(keys), RequestError::from(e).into()),
            }
            self.seal(&partition);
        }
    }

    fn not_sent(&mut self, entity: E, keys: Option<(PartitionKey, RowKey)>, error: Error) {
        self.progress.failed += 1;
        let error = Arc::new(error);
        self.report.failures.push(BulkFailure { entity, keys, error, cause: FailureCause::NotSent });
    }

    /// Moves a partition's open transaction to the queue of transactions to send.
    fn seal(&mut self, partition: &str) {
        if let Some(open) = self.open.remove(partition) {
            if open.batch.is_empty() {
                return;
            }
            let Open { batch, entities, size } = open;
            self.ready.push_back(Sealed { partition: partition.to_owned(), batch, entities, size });
        }
    }

    /// Seals the fullest open transaction (to free memory when too many entities wait).
    fn seal_fullest(&mut self) {
        let fullest = self.open.iter().max_by_key(|(_, open)| open.batch.len()).map(|(p, _)| p.clone());
        if let Some(partition) = fullest {
            self.seal(&partition);
        }
    }

    /// The next transaction whose partition has none in flight.
    fn next_ready(&mut self) -> Option<Sealed<E>> {
        let index = self.ready.iter().position(|s| !self.busy.contains(&s.partition))?;
        let sealed = self.ready.remove(index)?;
        self.busy.insert(sealed.partition.clone());
        Some(sealed)
    }

    /// Records a transaction's answer.
    fn finish(&mut self, sealed: Sealed<E>, result: Result<(), Error>) {
        self.busy.remove(&sealed.partition);
        self.buffered -= sealed.entities.len();
        self.progress.transactions += 1;
        self.progress.bytes += sealed.size as u64;
        match result {
            Ok(()) => self.progress.written += sealed.entities.len() as u64,
            Err(error) => {
                self.progress.failed += sealed.entities.len() as u64;
                let failed = error.service().and_then(|s| s.operation_index()).filter(|&i| i < sealed.entities.len());
                let error = Arc::new(error);
                let keys: Vec<Option<(PartitionKey, RowKey)>> = sealed.entities.iter().map(|e| e.keys().ok()).collect();
                let failed_row_key = failed.and_then(|i| keys[i].as_ref().map(|(_, rk)| rk.clone()));
                for (i, (entity, keys)) in sealed.entities.into_iter().zip(keys).enumerate() {
                    let cause = match (failed, &failed_row_key) {
                        (Some(f), Some(rk)) if f != i => {
                            FailureCause::RolledBack { failed_index: f, failed_row_key: rk.clone() }
                        }
                        _ => FailureCause::Failed,
                    };
                    self.report.failures.push(BulkFailure { entity, keys, error: error.clone(), cause });
                }
            }
        }
    }
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
    /// Writes any number of entities (typed or dynamic) from an iterator: grouped by PartitionKey into
    /// transactions of at most 100 operations whose encoded body stays under the limit, sent with bounded
    /// concurrency (a partition's transactions one after the other, in input order), holding at most
    /// [`BulkOptions::max_buffered`] entities at a time.
    ///
    /// Never fails as a whole: the report counts every entity written and hands back every one that was not,
    /// with its error and whether it failed itself or was rolled back with its transaction. Retries follow the
    /// client's rules (see [`outcome`](super::outcome)): a transaction whose reply was lost is read back, not
    /// reported twice.
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
    pub async fn bulk_write<E, I>(
        &self,
        operation: BulkOperation,
        entities: I,
        options: Option<BulkOptions<'_>>,
    ) -> BulkReport<E>
    where
        E: WriteEntity,
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
    pub async fn bulk_write_stream<E, S>(
        &self,
        operation: BulkOperation,
        entities: S,
        options: Option<BulkOptions<'_>>,
    ) -> BulkReport<E>
    where
        E: WriteEntity,
        S: Stream<Item = E>,
    {
        self.bulk_write_stream_sized(operation, entities, None, options).await
    }

    async fn bulk_write_stream_sized<E, S>(
        &self,
        operation: BulkOperation,
        entities: S,
        total: Option<u64>,
        options: Option<BulkOptions<'_>>,
    ) -> BulkReport<E>
    where
        E: WriteEntity,
        S: Stream<Item = E>,
    {
        let options = options.unwrap_or_default();
        let concurrency = if options.concurrency == 0 { 8 } else { options.concurrency };
        let max_buffered = if options.max_buffered == 0 { 200 * concurrency } else { options.max_buffered };
        let mut writer = Writer {
            client: self,
            operation,
            open: HashMap::new(),
            ready: VecDeque::new(),
            busy: HashSet::new(),
            buffered: 0,
            report: BulkReport { written: 0, transactions: 0, bytes: 0, failures: Vec::new() },
            progress: BulkProgress { total, ..BulkProgress::default() },
        };
        let send = |sealed: Sealed<E>| {
            let method_options = options.method_options.clone();
            async move {
                let result = self.submit_transaction(&sealed.batch, Some(RequestOptions { method_options })).await;
                (sealed, result.map(drop))
            }
        };
        let mut input = std::pin::pin!(entities.fuse());
        let mut input_done = false;
        let mut in_flight = FuturesUnordered::new();
        loop {
            while in_flight.len() < concurrency {
                match writer.next_ready() {
                    Some(sealed) => in_flight.push(send(sealed)),
                    None => break,
                }
            }
            let may_read = !input_done && writer.buffered < max_buffered;
            let answered = if may_read && in_flight.is_empty() {
                Either::Left(input.next().await)
            } else if may_read {
                match futures::future::select(input.next(), in_flight.next()).await {
                    Either::Left((entity, _)) => Either::Left(entity),
                    Either::Right((answer, _)) => Either::Right(answer),
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
                Either::Left(Some(entity)) => writer.add(entity),
                Either::Left(None) => {
                    input_done = true;
                    let partitions: Vec<String> = writer.open.keys().cloned().collect();
                    partitions.iter().for_each(|p| writer.seal(p));
                }
                Either::Right(Some((sealed, result))) => {
                    writer.finish(sealed, result);
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
        BulkReport { written, transactions, bytes, ..writer.report }
    }
}
