//! Reading a table by key ranges side by side: the plan ([`plan`]: the library's
//! [`TableClient::plan_ranges`], then a worker's [`Shard`] of it) and the scan ([`scan_pages`]: each range its
//! own query, following its own continuations, at most `parallel` of them at once). `export`, `count`, `copy`
//! and `validate` are consumers of the pages; none of them looks inside a range.
//!
//! Memory is bounded: each range holds at most one page (the service sends at most 1,000 entities in one,
//! `docs/rules.md` §10) until the consumer takes it, so a scan holds at most `parallel` pages.
//!
//! Layer: service.

use crate::error::TransferError;
pub use crate::shard::Shard;
use futures::{Stream, StreamExt as _, TryStreamExt as _};
use std::num::NonZeroUsize;
use table_model::client::{QueryOptions, TableClient};
use table_model::filter::Filter;
use table_model::filter::{shard, KeyRange};
use table_model::response::{Continuation, ReadEntity as _};
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
/// [`shard`]. Without a shard and with `parallel` 1 nothing is sent: the plan is [`KeyRange::all`].
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
        Some(n) if n.get() > 1 => table.plan_ranges(n, query.filter_ref(), None).await?,
        _ => vec![KeyRange::all()],
    };
    let mine = shard(&all, shard_of.k - 1, shard_of.n)
        .map_err(|e| TransferError::failed(format!("cannot share the plan among the workers: {e}")))?;
    Ok(Plan { all, mine })
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
pub struct RangeStart {
    /// The caller's index of the range.
    pub index: usize,
    /// The range.
    pub range: KeyRange,
    /// Where to resume in it: a continuation kept from an earlier page of the same range and query.
    pub from: Option<Continuation>,
}

/// One page of one range: its entities decoded ([`scan_pages`]), or as a reader of the caller's made them
/// ([`scan_pages_read`]).
#[derive(Debug)]
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
/// let starts = plan.mine.into_iter().enumerate().map(|(index, range)| RangeStart { index, range, from: None });
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
    scan_pages_read(table, query, ranges, parallel, metadata, |answer| Entity::read_page(answer).map(|p| p.entities))
}

/// As [`scan_pages`], each page read by `read` from the service's answer ([`TableClient::query_read`]) instead
/// of decoded into entities: `export` in JSON lines copies the entities' JSON when it can
/// ([`table_model::json::EncodedPage`]). An error of `read` is the page's, as a decoding error is
/// [`scan_pages`]'s.
///
/// # Errors
/// As [`scan_pages`].
pub fn scan_pages_read<'a, E: Send + 'static>(
    table: &'a TableClient,
    query: &'a Query,
    ranges: Vec<RangeStart>,
    parallel: NonZeroUsize,
    metadata: Option<MetadataLevel>,
    read: fn(&http::Response<bytes::Bytes>) -> Result<E, ResponseError>,
) -> impl Stream<Item = Result<Page<E>, TransferError>> + 'a {
    futures::stream::iter(ranges)
        .map(move |start| range_pages(table, query, start, metadata, read))
        .flatten_unordered(parallel.get())
}

/// The pages of one range, as [`scan_pages_read`] yields them.
fn range_pages<'a, E: Send + 'static>(
    table: &'a TableClient,
    query: &Query,
    start: RangeStart,
    metadata: Option<MetadataLevel>,
    read: fn(&http::Response<bytes::Bytes>) -> Result<E, ResponseError>,
) -> futures::stream::BoxStream<'a, Result<Page<E>, TransferError>> {
    let mut ranged = query.clone();
    if let Some(filter) = start.range.filter_with(query.filter_ref().cloned()) {
        ranged = ranged.filter(filter);
    }
    let index = start.index;
    let options = QueryOptions { continuation: start.from, metadata, ..Default::default() };
    match table.query_read(&ranged, Some(options), read) {
        Ok(pages) => pages
            .map_ok(move |page| Page { range: index, entities: page.body, next: page.continuation })
            .map_err(TransferError::from)
            .boxed(),
        Err(e) => futures::stream::once(async move { Err(TransferError::from(e)) }).boxed(),
    }
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
