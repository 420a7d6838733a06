//! Deleting or updating every entity a query selects, in key ranges side by side:
//! [`TableClient::delete_matching`] and [`TableClient::write_matching`], the engine of SQL's `DELETE` and
//! `UPDATE` (table-model-datafusion) and of `tablectl delete`.
//!
//! Each range is read page by page (keys only, for a delete, unless the query selects more); each page's
//! entities are written with the bulk writer under the ETag they were read with (`If-Match`), so an entity
//! changed or deleted since it was read is refused by the service, reported in [`MatchReport::changed`], and
//! left as it is: never overwritten, never deleted in its new version. The entities of a transaction rolled back
//! because another one was refused are sent again (still under their own ETags), so one changed entity costs
//! its transaction nothing else. A refusal is checked against the stored entity before it is reported: after a
//! lost reply, the write refused may be this engine's own, applied by the first try (the entity holds what was
//! written, or is gone for a delete), and is then counted as written. The refusals of one answer are checked side
//! by side, as many at once as the bulk writer sends transactions ([`BulkOptions::concurrency`]): a page that
//! another writer changed throughout costs a round trip's time, not one per entity.
//!
//! **Resuming.** After each page, [`MatchOptions::on_page`] says where its range resumes
//! ([`PageDone::next`]); a range that stops on an error is in [`MatchReport::stopped`] with the continuation of
//! the page that failed. Give those back as [`RangeCursor`]s to carry on: a page is read again only when it was
//! not finished, and an entity already deleted no longer matches (one already updated matches again, and is
//! written again with the same values: an update is idempotent).

use super::bulk::{BulkFailure, BulkOperation, BulkOptions, FailureCause};
use super::error::{Error, ErrorKind};
use super::options::QueryOptions;
use super::table::TableClient;
use super::trace::{self, Operation};
use crate::filter::KeyRange;
use crate::key::{PartitionKey, RowKey};
use crate::query::Query;
use crate::request::UpdateMode;
use crate::response::Continuation;
use crate::{ETag, Entity};
use futures::{StreamExt as _, TryStreamExt as _};
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

/// A key range to work through, and where in it to start: its start (`None`), or a continuation a page left
/// ([`PageDone::next`], [`RangeStop::cursor`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RangeCursor {
    /// The range.
    pub range: KeyRange,
    /// Where in it to start; `None`: at its start.
    pub continuation: Option<Continuation>,
}

impl RangeCursor {
    /// A range from its start.
    pub fn new(range: KeyRange) -> Self {
        RangeCursor { range, continuation: None }
    }
}

/// What [`TableClient::write_matching`] does to the entities its `decide` function keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum MatchWrite {
    /// Delete each, under the ETag it was read with.
    Delete,
    /// Update each (merge or replace), under the ETag it was read with.
    Update(UpdateMode),
}

impl MatchWrite {
    fn bulk(self) -> BulkOperation {
        match self {
            MatchWrite::Delete => BulkOperation::Delete,
            MatchWrite::Update(mode) => BulkOperation::Update(mode),
        }
    }
}

/// One page of one range done: what it matched and wrote, and where the range resumes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PageDone {
    /// The range's index in the cursors given.
    pub range: usize,
    /// Entities the page's query selected.
    pub read: u64,
    /// Entities `decide` kept (all of them, for a delete).
    pub matched: u64,
    /// Entities deleted or updated.
    pub written: u64,
    /// Entities changed or deleted since they were read: left as they are.
    pub changed: u64,
    /// Entities not written for another reason (a rule, a refusal, no answer after the retries).
    pub failed: u64,
    /// Where the range resumes after this page; `None`: the range is done.
    pub next: Option<Continuation>,
}

/// A callback after each page (see [`PageDone`]): progress, and a checkpoint to resume from.
pub type PageFn = Arc<dyn Fn(&PageDone) + Send + Sync>;

/// The options of [`TableClient::write_matching`] and [`TableClient::delete_matching`].
#[derive(Clone, Default)]
pub struct MatchOptions<'a> {
    /// Ranges read and written at once; `0` for the default, 4.
    pub ranges_in_flight: usize,
    /// The bulk writer's options, for each page's writes.
    pub bulk: BulkOptions<'a>,
    /// Called after each page.
    pub on_page: Option<PageFn>,
}

impl fmt::Debug for MatchOptions<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MatchOptions")
            .field("ranges_in_flight", &self.ranges_in_flight)
            .field("bulk", &self.bulk)
            .field("on_page", &self.on_page.as_ref().map(|_| "Fn"))
            .finish()
    }
}

/// The error a `decide` function returns: it stops its range (see [`RangeStop`]).
pub type DecideError = Box<dyn std::error::Error + Send + Sync>;

/// A range that stopped before its end, and why: a page that could not be read, or a `decide` that failed.
#[derive(Debug)]
#[non_exhaustive]
pub struct RangeStop {
    /// The range's index in the cursors given.
    pub range: usize,
    /// Where to resume it: the start of the page that failed.
    pub cursor: RangeCursor,
    /// Why it stopped.
    pub error: DecideError,
}

/// What [`TableClient::write_matching`] did: every entity `decide` kept is counted in `written`, listed in
/// `changed`, or listed in `failures`.
#[derive(Debug, Default)]
#[non_exhaustive]
#[must_use = "entities may be left unwritten: read `changed`, `failures` and `stopped`"]
pub struct MatchReport {
    /// Entities the queries selected.
    pub read: u64,
    /// Entities `decide` kept.
    pub matched: u64,
    /// Entities deleted or updated.
    pub written: u64,
    /// The keys of the entities changed or deleted since they were read (the service refused their ETag, or
    /// found no entity): left as they are.
    pub changed: Vec<(PartitionKey, RowKey)>,
    /// Entities not written for another reason, with it (the entity itself is not kept).
    pub failures: Vec<BulkFailure<()>>,
    /// The ranges that did not reach their end, with where to resume each.
    pub stopped: Vec<RangeStop>,
}

impl MatchReport {
    /// Whether every range reached its end and every entity kept was written.
    pub fn is_complete(&self) -> bool {
        self.changed.is_empty() && self.failures.is_empty() && self.stopped.is_empty()
    }

    fn absorb(&mut self, other: MatchReport) {
        self.read += other.read;
        self.matched += other.matched;
        self.written += other.written;
        self.changed.extend(other.changed);
        self.failures.extend(other.failures);
        self.stopped.extend(other.stopped);
    }
}

impl TableClient {
    /// Deletes every entity `query` selects (its `$filter`; its `$select` is replaced by the keys), in each of
    /// `ranges` (see [`TableClient::plan_ranges`] for ranges of a table, or [`KeyRange::all`]), under the ETag
    /// each was read with. An entity changed since it was read is not deleted: it is in
    /// [`MatchReport::changed`].
    ///
    /// ```no_run
    /// use table_model::client::{RangeCursor, TableServiceClient};
    /// use table_model::filter::{Filter, KeyRange};
    /// use table_model::{Query, TableName};
    /// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// let service = TableServiceClient::from_connection_string("UseDevelopmentStorage=true", None)?;
    /// let orders = service.table_client(TableName::from_static("Orders"));
    /// let query = Query::new().filter(Filter::property("Status").eq("cancelled"));
    /// let report = orders.delete_matching(&query, vec![RangeCursor::new(KeyRange::all())], None).await;
    /// println!("{} deleted, {} changed meanwhile", report.written, report.changed.len());
    /// # Ok(())
    /// # }
    /// ```
    pub async fn delete_matching(
        &self,
        query: &Query,
        ranges: Vec<RangeCursor>,
        options: Option<MatchOptions<'_>>,
    ) -> MatchReport {
        let keys = query.clone().select(["PartitionKey", "RowKey"]);
        self.matching("TableClient.delete_matching", MatchWrite::Delete, &keys, ranges, &Ok, options).await
    }

    /// Reads what `query` selects in each range, page by page, hands each page's entities (with their ETags)
    /// to `decide`, and deletes or updates those it returns, under the ETags they were read with.
    ///
    /// `decide` keeps the entities to write (a filter the service could not apply, say) and, for an update,
    /// returns each with its new properties. It must keep their keys (an entity whose keys were not in the page
    /// stops the range), and each is written under the ETag its keys were read with, whatever ETag it carries. An error from `decide` stops its range ([`MatchReport::stopped`])
    /// before anything of the page is sent. Ranges are worked [`MatchOptions::ranges_in_flight`] at a time.
    pub async fn write_matching<F>(
        &self,
        write: MatchWrite,
        query: &Query,
        ranges: Vec<RangeCursor>,
        decide: F,
        options: Option<MatchOptions<'_>>,
    ) -> MatchReport
    where
        F: Fn(Vec<Entity>) -> Result<Vec<Entity>, DecideError> + Send + Sync,
    {
        self.matching("TableClient.write_matching", write, query, ranges, &decide, options).await
    }

    /// [`write_matching`](Self::write_matching) as the call `name`: its span, when tracing, is the parent of
    /// each page's query and bulk write (`table_model::client::trace`).
    async fn matching<F>(
        &self,
        name: &'static str,
        write: MatchWrite,
        query: &Query,
        ranges: Vec<RangeCursor>,
        decide: &F,
        options: Option<MatchOptions<'_>>,
    ) -> MatchReport
    where
        F: Fn(Vec<Entity>) -> Result<Vec<Entity>, DecideError> + Send + Sync,
    {
        let given = options.unwrap_or_default();
        let mut op = Operation::start_parent(
            self.core().tracing.as_ref(),
            name,
            &given.bulk.method_options.context,
            Some(self.table()),
        );
        let mut options = MatchOptions { bulk: given.bulk.clone(), ..given };
        options.bulk.method_options.context = op.ctx().clone();
        let in_flight = if options.ranges_in_flight == 0 { 4 } else { options.ranges_in_flight };
        let options = &options;
        let reports: Vec<MatchReport> = futures::stream::iter(ranges.into_iter().enumerate())
            .map(|(index, cursor)| self.write_range(write, query, index, cursor, decide, options))
            .buffer_unordered(in_flight)
            .collect()
            .await;
        let mut report = MatchReport::default();
        reports.into_iter().for_each(|r| report.absorb(r));
        report.stopped.sort_by_key(|s| s.range);
        op.set(trace::WRITTEN, || i64::try_from(report.written).unwrap_or(i64::MAX).into());
        op.set(trace::FAILED, || i64::try_from(report.failures.len()).unwrap_or(i64::MAX).into());
        let _ = op.end(Ok(()));
        report
    }

    /// One range, page by page.
    async fn write_range<F>(
        &self,
        write: MatchWrite,
        query: &Query,
        index: usize,
        cursor: RangeCursor,
        decide: &F,
        options: &MatchOptions<'_>,
    ) -> MatchReport
    where
        F: Fn(Vec<Entity>) -> Result<Vec<Entity>, DecideError> + Send + Sync,
    {
        let mut report = MatchReport::default();
        let stop = |report: &mut MatchReport, continuation: Option<Continuation>, error: DecideError| {
            let cursor = RangeCursor { range: cursor.range.clone(), continuation };
            report.stopped.push(RangeStop { range: index, cursor, error });
        };
        let mut ranged = query.clone();
        if let Some(filter) = cursor.range.filter_with(query.filter_ref().cloned()) {
            ranged = ranged.filter(filter);
        }
        let query_options = QueryOptions {
            continuation: cursor.continuation.clone(),
            metadata: None,
            method_options: options.bulk.method_options.clone(),
        };
        let mut pages = match self.query::<Entity>(&ranged, Some(query_options)) {
            Ok(pager) => pager.into_pages(),
            Err(e) => {
                stop(&mut report, cursor.continuation.clone(), Box::new(e));
                return report;
            }
        };
        loop {
            let from = pages.continuation().cloned();
            let page = match pages.try_next().await {
                Ok(Some(page)) => page,
                Ok(None) => return report,
                Err(e) => {
                    stop(&mut report, from, Box::new(e));
                    return report;
                }
            };
            let read = page.entities.len() as u64;
            let read_entities: ReadEntities = page
                .entities
                .iter()
                .map(|e| ((e.partition_key().to_string(), e.row_key().to_string()), e.clone()))
                .collect();
            let kept = decide(page.entities).and_then(|kept| under_read_etags(kept, &read_entities));
            let kept = match kept {
                Ok(kept) => kept,
                Err(e) => {
                    stop(&mut report, from, e);
                    return report;
                }
            };
            let mut done = self.write_page(write, kept, &read_entities, &options.bulk).await;
            done.read = read;
            let next = pages.continuation().cloned();
            if let Some(on_page) = &options.on_page {
                on_page(&PageDone {
                    range: index,
                    read,
                    matched: done.matched,
                    written: done.written,
                    changed: done.changed.len() as u64,
                    failed: done.failures.len() as u64,
                    next: next.clone(),
                });
            }
            report.absorb(done);
            if next.is_none() {
                return report;
            }
        }
    }

    /// Writes a page's kept entities; the entities of a transaction rolled back for another's refusal are sent
    /// again until none is.
    async fn write_page(
        &self,
        write: MatchWrite,
        mut pending: Vec<Entity>,
        read: &ReadEntities,
        bulk: &BulkOptions<'_>,
    ) -> MatchReport {
        let mut report = MatchReport { matched: pending.len() as u64, ..MatchReport::default() };
        // How many times each entity was found with its properties as read but another ETag.
        let mut renewed: HashMap<(String, String), u32> = HashMap::new();
        while !pending.is_empty() {
            let answer = self.bulk_write(write.bulk(), std::mem::take(&mut pending), Some(bulk.clone())).await;
            report.written += answer.written;
            let mut refused = Vec::new();
            for failure in answer.failures {
                let unknown = matches!(failure.error.kind(), ErrorKind::OutcomeUnknown(_));
                match failure.cause {
                    FailureCause::RolledBack { .. } => pending.push(failure.entity),
                    FailureCause::Failed
                        if failure.error.is_precondition_failed() || failure.error.is_not_found() || unknown =>
                    {
                        refused.push((failure, unknown))
                    }
                    _ => report.failures.push(failure.without_entity()),
                }
            }
            // Refused under the ETag read: changed by someone else, or (a reply lost, a transaction applied and
            // sent again) by this very write. The stored entity tells which; the refusals of one answer are
            // checked side by side, as many at once as transactions are sent.
            let checked: Vec<_> = futures::stream::iter(refused)
                .map(|(failure, unknown)| async move {
                    let keys = (failure.entity.partition_key().to_string(), failure.entity.row_key().to_string());
                    let left = self.left_as_written(write, &failure.entity, read.get(&keys)).await;
                    (failure, unknown, keys, left)
                })
                .buffered(bulk.in_flight())
                .collect()
                .await;
            for (failure, unknown, keys_text, left) in checked {
                let keys = || (failure.entity.partition_key().clone(), failure.entity.row_key().clone());
                match left {
                    Ok(Left::Written) => report.written += 1,
                    Ok(Left::AsRead(etag)) => {
                        let times = renewed.entry(keys_text).or_default();
                        if *times < 3 {
                            // Its properties are as read and only its ETag moved (an emulator's rolled-back
                            // transaction does that): written again under the new one.
                            *times += 1;
                            let mut entity = failure.entity;
                            let timestamp = entity.timestamp();
                            entity.set_server_metadata(timestamp, etag);
                            pending.push(entity);
                        } else {
                            report.changed.push(keys());
                        }
                    }
                    Ok(Left::Changed) => report.changed.push(keys()),
                    Err(_) if !unknown => report.changed.push(keys()),
                    Err(_) => report.failures.push(failure.without_entity()),
                }
            }
        }
        report
    }
}

/// What the stored entity says of a write refused under the ETag read.
enum Left {
    /// It is as the write leaves it (the write was applied: a lost reply, a retry refused).
    Written,
    /// Its properties are those read, under another ETag (given).
    AsRead(Option<ETag>),
    /// It was changed (or deleted) by someone else.
    Changed,
}

impl TableClient {
    /// What the stored entity says of `write` of `entity`, refused under the ETag `read` was read with.
    async fn left_as_written(&self, write: MatchWrite, entity: &Entity, read: Option<&Entity>) -> Result<Left, Error> {
        let stored: Option<Entity> = self.try_get(entity.partition_key(), entity.row_key(), None).await?;
        let holds = |stored: &Entity, sent: &Entity, exact: bool| {
            sent.iter().all(|(name, value)| stored.value(name.as_str()) == Some(value))
                && (!exact || stored.len() == sent.len())
        };
        Ok(match (write, stored) {
            (MatchWrite::Delete, None) => Left::Written,
            (MatchWrite::Update(_), None) => Left::Changed,
            (MatchWrite::Update(mode), Some(stored)) if holds(&stored, entity, mode == UpdateMode::Replace) => {
                Left::Written
            }
            (_, Some(stored)) => match read {
                Some(read) if holds(&stored, read, true) => Left::AsRead(stored.etag().cloned()),
                _ => Left::Changed,
            },
        })
    }
}

/// The entities read (keys only for a delete), by keys, with their ETags.
type ReadEntities = HashMap<(String, String), Entity>;

/// The entities `decide` kept, each under the ETag its keys were read with.
///
/// # Errors
/// An entity whose keys were not read (nothing of the page is sent then).
fn under_read_etags(kept: Vec<Entity>, read: &ReadEntities) -> Result<Vec<Entity>, DecideError> {
    kept.into_iter()
        .map(|mut entity| {
            let keys = (entity.partition_key().to_string(), entity.row_key().to_string());
            let Some(etag) = read.get(&keys).map(Entity::etag) else {
                return Err(format!(
                    "entity (PartitionKey `{}`, RowKey `{}`) was not read by the query: an update keeps the keys",
                    keys.0, keys.1
                )
                .into());
            };
            let timestamp = entity.timestamp();
            entity.set_server_metadata(timestamp, etag.cloned());
            Ok(entity)
        })
        .collect()
}
