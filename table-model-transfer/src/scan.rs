//! Reading a table by key ranges side by side: the plan ([`plan`]: the library's
//! [`TableClient::plan_ranges`], then a worker's [`Shard`] of it; or, for one worker, [`plan_reading`], which plans
//! while it reads the first range) and the scan ([`scan_pages`]: each range its own query, following its own
//! continuations, at most `parallel` of them at once). `export`, `count`, `copy` and `validate` are consumers of
//! the pages; none of them looks inside a range.
//!
//! Memory is bounded: each of the `parallel` tasks reading ranges holds at most two pages (the one it reads and
//! the next, requested before it reads that one; the service sends at most 1,000 entities in a page,
//! `docs/rules.md` §10) and the channel to the consumer one more each, so a scan holds at most `3 × parallel`
//! pages, and [`plan_reading`] two more.
//!
//! Layer: service.

use crate::error::TransferError;
pub use crate::shard::Shard;
use futures::future::Either;
use futures::{Stream, TryStreamExt as _};
use std::collections::VecDeque;
use std::future::Future;
use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::Poll;
use table_model::client::{PlanOptions, QueryOptions, TableClient};
use table_model::filter::Filter;
use table_model::filter::{shard, KeyPosition, KeyRange};
use table_model::response::{Continuation, RawPage, ReadEntity as _};
use table_model::ResponseError;
use table_model::{Entity, MetadataLevel, Query};

/// The plan of a scan and this worker's share of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// The ranges of every worker, tiling the key space, in key order.
    pub all: Vec<KeyRange>,
    /// This worker's ranges: [`shard`] of `all`.
    pub mine: Vec<KeyRange>,
}

/// Plans a scan of `table` (the entities `query`'s filter selects) for `parallel` ranges per worker and
/// `shard.n` workers: [`TableClient::plan_ranges`] for `parallel × n` ranges, of which this worker takes its
/// [`shard`]. Without a shard and with `parallel` 1 nothing is sent: the plan is [`KeyRange::all`]. The probes go
/// side by side ([`PlanOptions::side_by_side`]).
///
/// Workers on different machines agree on the plan only if they read the same keys: the table must not change
/// between the workers' starts (a backup's source, say). Each export's manifest records the whole plan, and
/// `import` refuses manifests whose plans differ.
///
/// # Errors
/// A filter too long to take a range's comparisons, or a failed request.
pub async fn plan(
    table: &TableClient,
    query: &Query,
    parallel: NonZeroUsize,
    shard_of: Shard,
) -> Result<Plan, TransferError> {
    let ranges = parallel.get().saturating_mul(shard_of.n);
    let all = match NonZeroUsize::new(ranges) {
        Some(n) if n.get() > 1 => table.plan_ranges(n, query.filter_ref(), Some(PlanOptions::side_by_side(n))).await?,
        _ => vec![KeyRange::all()],
    };
    let mine = shard(&all, shard_of.k - 1, shard_of.n)
        .map_err(|e| TransferError::failed(format!("cannot share the plan among the workers: {e}")))?;
    Ok(Plan { all, mine })
}

/// A plan of one worker's scan, made while its first range is read: the pages of that range, when they were
/// read.
#[derive(Debug)]
pub struct Planned<E = Vec<Entity>> {
    /// The plan.
    pub plan: Plan,
    /// The pages of the plan's first range, read whole while planning, in key order, the last with `next: None`:
    /// that range needs no request more ([`RangeStart::read`]). `None` when nothing was read (one range,
    /// `parallel` 1).
    pub first: Option<Vec<Page<E>>>,
}

impl<E> Planned<E> {
    /// A start for each of the worker's ranges, at its beginning; the first with its pages, when they were read.
    pub fn into_starts(self) -> Vec<RangeStart<E>> {
        let mut first = self.first;
        let ranges = self.plan.mine.into_iter().enumerate();
        ranges.map(|(index, range)| RangeStart { index, range, from: None, read: first.take() }).collect()
    }
}

/// The entities of a page as a scan's reader made them ([`scan_pages_read`]): what [`plan_reading_read`] needs
/// of them to plan while it reads.
pub trait PageEntities: Send + 'static {
    /// How many entities the page holds.
    fn count(&self) -> usize;
    /// The keys of entity `index` (`PartitionKey`, `RowKey`); `None` past the last.
    fn keys(&self, index: usize) -> Option<(&str, &str)>;
    /// Keeps the first `len` entities (all of them, when there are fewer).
    fn truncate(&mut self, len: usize);
}

/// Decoded entities ([`scan_pages`]).
impl PageEntities for Vec<Entity> {
    fn count(&self) -> usize {
        self.len()
    }

    fn keys(&self, index: usize) -> Option<(&str, &str)> {
        self.get(index).map(|e| (e.partition_key().as_str(), e.row_key().as_str()))
    }

    fn truncate(&mut self, len: usize) {
        Vec::truncate(self, len);
    }
}

/// Plans a scan of `table` by `parallel` ranges as a scan of one range would start: its first page of `query`
/// (with `metadata`, as the scan's pages). A table of one page is then read whole, and no plan is needed. Else
/// the second page is read while [`TableClient::plan_ranges_after`] probes the key space after the first one's
/// keys, side by side; a table of two pages is then read whole too. Else the first range ends at the last key
/// read (which its successor reads again), and the plan's cuts after it cut the rest.
///
/// So a small table costs what a scan of one range costs (one or two round trips), and a large one starts its
/// ranges one round trip after its second page, where [`plan`] spends the plan's round trips before any. It is
/// for one worker (no shard): workers must share a plan made once. The pages read are decoded into entities, as
/// [`scan_pages`]'s are.
///
/// # Errors
/// A failed request; a filter too long to take a range's comparisons.
pub async fn plan_reading(
    table: &TableClient,
    query: &Query,
    parallel: NonZeroUsize,
    metadata: Option<MetadataLevel>,
) -> Result<Planned, TransferError> {
    plan_reading_read(table, query, parallel, metadata, read_entities).await
}

/// As [`plan_reading`], each page read by `read` as [`scan_pages_read`] reads the scan's (an export's pages are
/// written through its format's reader, whichever range they belong to).
///
/// # Errors
/// As [`plan_reading`]; the error of `read`, as the page's; a key of a page the rules refuse.
pub async fn plan_reading_read<E: PageEntities>(
    table: &TableClient,
    query: &Query,
    parallel: NonZeroUsize,
    metadata: Option<MetadataLevel>,
    read: fn(&http::Response<bytes::Bytes>) -> Result<E, ResponseError>,
) -> Result<Planned<E>, TransferError> {
    let whole = |first| Ok(Planned { plan: Plan { all: vec![KeyRange::all()], mine: vec![KeyRange::all()] }, first });
    if parallel.get() == 1 {
        return whole(None);
    }
    let options = QueryOptions { metadata, ..Default::default() };
    let read_page = |answer: RawPage<http::Response<bytes::Bytes>>| -> Result<Page<E>, TransferError> {
        let entities = read(&answer.body).map_err(|e| page_error(table, e))?;
        Ok(Page { range: 0, entities, next: answer.continuation })
    };
    let mut pages = table.query_read(query, Some(options), checked)?;
    // A stream of pages yields one before it ends; should it not, the scan reads the table as one range.
    let Some(first) = pages.try_next().await? else { return whole(None) };
    if pages.continuation().is_none() {
        return whole(Some(vec![read_page(first)?]));
    }
    // The second page is asked for before the first is read.
    let mut second = Box::pin(pages.try_next());
    let early = send_early(&mut second).await;
    let first = read_page(first)?;
    let keys =
        (0..first.entities.count()).map(|index| key_position(&first.entities, index)).collect::<Result<Vec<_>, _>>()?;
    let mut planning = Box::pin(table.plan_ranges_after(
        parallel,
        query.filter_ref(),
        keys,
        Some(PlanOptions::side_by_side(parallel)),
    ));
    let (second, planned) = match early {
        Poll::Ready(answered) => {
            drop(second);
            (answered, None)
        }
        Poll::Pending => match futures::future::select(second, &mut planning).await {
            Either::Left((second, _)) => (second, None),
            Either::Right((planned, second)) => (second.await, Some(planned)),
        },
    };
    let mut read = vec![first];
    read.extend(second?.map(read_page).transpose()?);
    if pages.continuation().is_none() {
        // The table is read: the plan's probes still under way are dropped.
        if let Some(end) = read.last_mut() {
            end.next = None;
        }
        return whole(Some(read));
    }
    let planned = match planned {
        Some(planned) => planned?,
        None => planning.await?,
    };
    // The first range ends at the last key read, which its successor reads again.
    let Some(last) = read.iter_mut().rev().find(|page| page.entities.count() > 0) else {
        // Two empty pages that continue: nothing to start the first range with.
        return Ok(Planned { plan: Plan { all: planned.clone(), mine: planned }, first: None });
    };
    let kept = last.entities.count() - 1;
    let boundary = key_position(&last.entities, kept)?;
    last.entities.truncate(kept);
    if let Some(end) = read.last_mut() {
        end.next = None;
    }
    let after = planned.iter().filter_map(KeyRange::start).filter(|start| **start > boundary).cloned();
    let all = KeyRange::all().split(std::iter::once(boundary.clone()).chain(after));
    Ok(Planned { plan: Plan { all: all.clone(), mine: all }, first: Some(read) })
}

/// Polls `request` once, so that the request it makes is handed to the connection's task, then gives up a turn
/// so that the task sends it (woken from this worker, it waits in the worker's LIFO slot, which the other
/// workers do not take), for the caller to work while the answer is on its way: `Ready` when it is done already.
pub(crate) async fn send_early<F: Future + Unpin>(request: &mut F) -> Poll<F::Output> {
    let early = futures::poll!(request);
    if early.is_pending() {
        tokio::task::yield_now().await;
    }
    early
}

/// The position of entity `index` of a page read.
fn key_position(entities: &impl PageEntities, index: usize) -> Result<KeyPosition, TransferError> {
    let refused =
        |e: table_model::KeyError| TransferError::failed(format!("the service sent a key the rules refuse: {e}"));
    let (partition_key, row_key) =
        entities.keys(index).ok_or_else(|| TransferError::failed(format!("the page has no entity {index}")))?;
    Ok(KeyPosition::new(
        table_model::PartitionKey::new(partition_key).map_err(refused)?,
        table_model::RowKey::new(row_key).map_err(refused)?,
    ))
}

/// Reads a page into entities, as [`TableClient::query`] does: [`scan_pages`]'s reader.
fn read_entities(answer: &http::Response<bytes::Bytes>) -> Result<Vec<Entity>, ResponseError> {
    Entity::read_page(answer).map(|page| page.entities)
}

/// Reads a page's body with a reader of its own, `read` (the export's formats, the copy's JSON); a page it does
/// not take is decoded into entities exactly as [`scan_pages`] decodes them, then made into the page's type by
/// `decoded` (a page that breaks a rule is refused there, with the decoder's error).
pub(crate) fn read_or_decode<E>(
    answer: &http::Response<bytes::Bytes>,
    read: impl FnOnce(&[u8]) -> Option<E>,
    decoded: impl FnOnce(Vec<Entity>) -> E,
) -> Result<E, ResponseError> {
    let page = table_model::response::raw_query(answer)?;
    match read(&page.body) {
        Some(entities) => Ok(entities),
        None => read_entities(answer).map(decoded),
    }
}

/// A plan made before (a backup's first generation's, kept in its manifest): every range of `all`, of which this
/// worker takes its [`shard`]. Nothing is sent.
///
/// ```
/// use table_model::filter::{KeyPosition, KeyRange};
/// use table_model::PartitionKey;
/// use table_model_transfer::scan::{given, Shard};
/// let all = KeyRange::all().split([KeyPosition::partition(PartitionKey::from_static("m"))]);
/// let second = given(all.clone(), "2/2".parse::<Shard>()?)?;
/// assert_eq!((second.all, second.mine), (all.clone(), vec![all[1].clone()]));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// A plan that cannot be shared among the shard's workers (fewer ranges than workers).
pub fn given(all: Vec<KeyRange>, shard_of: Shard) -> Result<Plan, TransferError> {
    let mine = shard(&all, shard_of.k - 1, shard_of.n)
        .map_err(|e| TransferError::invalid(format!("cannot share the plan among the workers: {e}")))?;
    Ok(Plan { all, mine })
}

/// Where a range's scan starts: its index (in the caller's numbering, handed back with each [`Page`]), the
/// range, and the continuation to resume from (`None`: the range's start).
#[derive(Clone, Debug)]
pub struct RangeStart<E = Vec<Entity>> {
    /// The caller's index of the range.
    pub index: usize,
    /// The range.
    pub range: KeyRange,
    /// Where to resume in it: a continuation kept from an earlier page of the same range and query.
    pub from: Option<Continuation>,
    /// The range's pages, read already and whole ([`Planned::first`]), the last with `next: None`: the range
    /// yields them, and sends nothing.
    pub read: Option<Vec<Page<E>>>,
}

/// One page of one range: its entities decoded ([`scan_pages`]), or as a reader of the caller's made them
/// ([`scan_pages_read`]).
#[derive(Clone, Debug)]
pub struct Page<E = Vec<Entity>> {
    /// The range's index, as in its [`RangeStart`].
    pub range: usize,
    /// The entities, in the order the service sent them (possibly none: a page may be empty and continue).
    pub entities: E,
    /// Where the range goes on after this page; `None` when this was its last page.
    pub next: Option<Continuation>,
}

/// Scans `ranges` of `table` side by side, at most `parallel` at once (a range starts when another ends): each
/// range's query is `query` with its filter restricted to the range ([`KeyRange::filter_with`]), following its
/// own continuations from its [`RangeStart::from`]. The pages of different ranges come in the order they
/// arrive; those of one range in its order, the last with `next: None`. Each range yields at least one page,
/// so a consumer sees every range end. `metadata`, when given, is the pages' metadata level instead of the
/// client's: [`MetadataLevel::None`] for a scan that reads keys only (half the bytes: no `odata.etag`).
///
/// ```no_run
/// use futures::TryStreamExt as _;
/// use std::num::NonZeroUsize;
/// use table_model::client::TableServiceClient;
/// use table_model::{MetadataLevel, Query, TableName};
/// use table_model_transfer::scan::{plan, scan_pages, RangeStart, Shard};
///
/// # async fn run() -> Result<(), table_model_transfer::error::TransferError> {
/// let service = TableServiceClient::from_connection_string("UseDevelopmentStorage=true", None)?;
/// let table = service.table_client(TableName::from_static("Orders"));
/// let query = Query::new().select(["PartitionKey", "RowKey"]);
/// let parallel = NonZeroUsize::new(4).unwrap();
/// let plan = plan(&table, &query, parallel, Shard::ALL).await?;
/// let starts =
///     plan.mine.into_iter().enumerate().map(|(index, range)| RangeStart { index, range, from: None, read: None });
/// let mut count = 0;
/// scan_pages(&table, &query, starts.collect(), parallel, Some(MetadataLevel::None))
///     .try_for_each(|page| {
///         count += page.entities.len();
///         async { Ok(()) }
///     })
///     .await?;
/// println!("{count} entities");
/// # Ok(())
/// # }
/// ```
///
/// # Errors
/// Each item: the failure of a page's request (after the client's retries), or a range's query that cannot be
/// made (a filter too long with the range's comparisons).
pub fn scan_pages<'a>(
    table: &'a TableClient,
    query: &'a Query,
    ranges: Vec<RangeStart>,
    parallel: NonZeroUsize,
    metadata: Option<MetadataLevel>,
) -> impl Stream<Item = Result<Page, TransferError>> + 'a {
    scan_pages_read(table, query, ranges, parallel, metadata, read_entities)
}

/// As [`scan_pages`], each page read by `read` from the service's answer ([`TableClient::query_read`]) instead
/// of decoded into entities: `export` in JSON lines copies the entities' JSON when it can
/// ([`table_model::json::EncodedPage`]). An error of `read` is the page's, as a decoding error is
/// [`scan_pages`]'s.
///
/// The ranges are read by `parallel` tasks of their own (`tokio::spawn`), each taking the next range not
/// started when it is done with one: on a runtime of several threads, the pages are read (decoded, or checked)
/// on every core, not only on the consumer's. The tasks start at once, each a page ahead of the consumer at most,
/// and stop when the stream is dropped.
///
/// # Errors
/// As [`scan_pages`].
///
/// # Panics
/// Outside a Tokio runtime (the tasks are spawned on the current one); and with the panic of a task, should
/// `read` panic.
pub fn scan_pages_read<'a, E: Send + 'static>(
    table: &'a TableClient,
    query: &'a Query,
    ranges: Vec<RangeStart<E>>,
    parallel: NonZeroUsize,
    metadata: Option<MetadataLevel>,
    read: fn(&http::Response<bytes::Bytes>) -> Result<E, ResponseError>,
) -> impl Stream<Item = Result<Page<E>, TransferError>> + 'a {
    let workers = parallel.get().min(ranges.len());
    let queue = Arc::new(Mutex::new(VecDeque::from(ranges)));
    // A page per worker in the channel and one in each worker's hands: memory stays that of `parallel` pages.
    let (sender, receiver) = tokio::sync::mpsc::channel(workers.max(1));
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..workers {
        let (table, query, queue, sender) = (table.clone(), query.clone(), queue.clone(), sender.clone());
        tasks.spawn(async move {
            loop {
                let next = queue.lock().unwrap_or_else(PoisonError::into_inner).pop_front();
                let Some(start) = next else { return };
                // The consumer gone or the range failed: nothing more to read.
                if !send_range(&table, &query, start, metadata, read, &sender).await {
                    return;
                }
            }
        });
    }
    // The tasks are aborted when the stream (which owns them) is dropped. The channel ends when every task has:
    // the stream ends once each has been joined, and a task that panicked is the scan's panic, never its end.
    let mut receiver = receiver;
    futures::stream::poll_fn(move |cx| match receiver.poll_recv(cx) {
        Poll::Ready(None) => loop {
            match tasks.poll_join_next(cx) {
                Poll::Ready(Some(Err(ended))) if ended.is_panic() => std::panic::resume_unwind(ended.into_panic()),
                Poll::Ready(Some(_)) => {}
                Poll::Ready(None) => return Poll::Ready(None),
                Poll::Pending => return Poll::Pending,
            }
        },
        page => page,
    })
}

/// Sends the pages of one range into `sender`, in order, each read by `read`. Each page's next is requested
/// before the page is read ([`RawPages::read_ahead`](table_model::client::RawPages::read_ahead)): the range's
/// requests follow each other at the service's pace, where they would otherwise wait for the reading of their
/// pages, which queue for the cores when the pages of many ranges come at once. Whether the scan goes on: `false`
/// once the consumer is gone or the range failed (its error sent).
async fn send_range<E: Send + 'static>(
    table: &TableClient,
    query: &Query,
    start: RangeStart<E>,
    metadata: Option<MetadataLevel>,
    read: fn(&http::Response<bytes::Bytes>) -> Result<E, ResponseError>,
    sender: &tokio::sync::mpsc::Sender<Result<Page<E>, TransferError>>,
) -> bool {
    let index = start.index;
    if let Some(pages) = start.read {
        for page in pages {
            if sender.send(Ok(Page { range: index, ..page })).await.is_err() {
                return false;
            }
        }
        return true;
    }
    let mut ranged = query.clone();
    if let Some(filter) = start.range.filter_with(query.filter_ref().cloned()) {
        ranged = ranged.filter(filter);
    }
    let options = QueryOptions { continuation: start.from, metadata, ..Default::default() };
    let answers = table.query_read(&ranged, Some(options), checked).map(|pages| pages.read_ahead());
    let mut answers = match answers {
        Ok(answers) => answers,
        Err(e) => {
            let _ = sender.send(Err(e.into())).await;
            return false;
        }
    };
    loop {
        let answer = match answers.try_next().await {
            Ok(Some(answer)) => answer,
            // After a last page, which ends the loop below.
            Ok(None) => return true,
            Err(e) => {
                let _ = sender.send(Err(e.into())).await;
                return false;
            }
        };
        let next = answer.continuation;
        let page = read(&answer.body)
            .map(|entities| Page { range: index, entities, next: next.clone() })
            .map_err(|e| page_error(table, e));
        let failed = page.is_err();
        if sender.send(page).await.is_err() || failed {
            return false;
        }
        if next.is_none() {
            return true;
        }
    }
}

/// The error of a page the scan read itself (after [`checked`]), naming the table as the client's errors do.
fn page_error(table: &TableClient, error: ResponseError) -> TransferError {
    TransferError::from(table_model::client::Error::from(error).in_table(table.table()))
}

/// A copy of the service's answer to a page's request, once its status is a page's (`200`): a service error is
/// the request's, retried or failed over to the secondary as the client's reads are; the page is read after.
fn checked(answer: &http::Response<bytes::Bytes>) -> Result<http::Response<bytes::Bytes>, ResponseError> {
    table_model::response::raw_query(answer)?;
    let mut copy = http::Response::new(answer.body().clone());
    *copy.status_mut() = answer.status();
    *copy.version_mut() = answer.version();
    *copy.headers_mut() = answer.headers().clone();
    Ok(copy)
}

/// Parses a continuation kept in a checkpoint (its `Display` token).
///
/// # Errors
/// [`TransferError`] ([`InvalidInput`](crate::error::ErrorKind::InvalidInput)) naming `what` holds it.
pub fn continuation(token: &str, what: &std::path::Path) -> Result<Continuation, TransferError> {
    token.parse().map_err(|e| TransferError::invalid(format!("invalid checkpoint `{}`: {e}", what.display())))
}

/// Parses a filter with [`Filter::parse`], so a mistake is an error with its position before any request.
///
/// ```
/// use table_model_transfer::error::ErrorKind;
/// let err = table_model_transfer::scan::parse_filter("Age gt").unwrap_err();
/// assert_eq!(err.kind(), ErrorKind::InvalidInput);
/// assert!(err.to_string().starts_with("invalid --filter `Age gt`: invalid filter at position 6: "), "{err}");
/// ```
///
/// # Errors
/// [`TransferError`] ([`InvalidInput`](crate::error::ErrorKind::InvalidInput)) with the parser's message.
pub fn parse_filter(text: &str) -> Result<Filter, TransferError> {
    Filter::parse(text).map_err(|e| TransferError::invalid(format!("invalid --filter `{text}`: {e}")))
}

/// A query with the filter, if any.
///
/// # Errors
/// As [`parse_filter`].
pub fn filtered(filter: Option<&str>) -> Result<Query, TransferError> {
    Ok(match filter {
        Some(text) => Query::new().filter(parse_filter(text)?),
        None => Query::new(),
    })
}

/// Adds `$select` to a query when properties are given: the `always` ones (the keys, say), then the given ones not
/// among them.
///
/// ```
/// use table_model::Query;
/// use table_model_transfer::scan::selecting;
/// let query = selecting(Query::new(), &["PartitionKey", "RowKey"], &["Age".into(), "RowKey".into()]);
/// let select = query.render()?.into_iter().find(|(name, _)| *name == "$select").map(|(_, value)| value);
/// assert_eq!(select.as_deref(), Some("PartitionKey,RowKey,Age"));
/// # Ok::<(), table_model::QueryError>(())
/// ```
pub fn selecting(query: Query, always: &[&'static str], given: &[String]) -> Query {
    if given.is_empty() {
        return query;
    }
    let rest: Vec<String> = given.iter().filter(|name| !always.contains(&name.as_str())).cloned().collect();
    query.select(always.iter().copied()).select(rest)
}
