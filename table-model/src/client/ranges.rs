//! Planning a parallel scan: [`TableClient::plan_ranges`] cuts a table into [`KeyRange`]s with keys-only
//! probes, bounded in requests (`docs/rules.md` §10.1).

use super::error::Error;
use super::options::QueryOptions;
use super::pager::QueryPages;
use super::table::TableClient;
use crate::entity::Entity;
use crate::filter::{Filter, KeyPosition, KeyRange, PARTITION_KEY};
use crate::key::PartitionKey;
use crate::limits::QUERY_MAX_TOP;
use crate::query::Query;
use azure_core::http::ClientMethodOptions;
use futures::future::Either;
use futures::{StreamExt as _, TryStreamExt as _};
use std::num::NonZeroUsize;

mod points;

/// The options of [`TableClient::plan_ranges`]: how many requests the probes may send, and `azure_core`'s
/// per-call options.
///
/// ```
/// use table_model::client::PlanOptions;
/// let options = PlanOptions { max_requests: 8, ..Default::default() };
/// assert_eq!(PlanOptions::default().max_requests, 32);
/// # let _ = options;
/// ```
#[derive(Clone, Debug)]
pub struct PlanOptions<'a> {
    /// The most requests the plan may send (32 by default). Half of them read the table's first keys page by
    /// page, the rest probe the key space after those; a table that is not read to its end within the budget
    /// leaves its last range open, covering what was not seen.
    pub max_requests: usize,
    /// How many probes may be in flight at once: 1 by default, one after another, each placed by what the
    /// ones before found. More send the probes side by side, in three rounds (one round trip each) after the
    /// first page of keys, while up to 3 more pages of keys are read (a table read to its end by then is cut
    /// exactly, and the probes under way dropped): what a scan under the service's latency wants, where a plan
    /// of 32 requests one after another costs 32 round trips before any range starts.
    pub concurrency: usize,
    /// `azure_core`'s per-call options, used for every request.
    pub method_options: ClientMethodOptions<'a>,
}

impl PlanOptions<'_> {
    /// The options of a plan of `n` ranges for scans under the service's latency: its probes side by side, `n`
    /// at once, with a budget of 32 requests or 4 per range, whichever is more (more probes cut more evenly,
    /// and side by side they cost no more round trips).
    ///
    /// ```
    /// use std::num::NonZeroUsize;
    /// use table_model::client::PlanOptions;
    /// let options = PlanOptions::side_by_side(NonZeroUsize::new(16).unwrap());
    /// assert_eq!((options.concurrency, options.max_requests), (16, 64));
    /// assert_eq!(PlanOptions::side_by_side(NonZeroUsize::new(2).unwrap()).max_requests, 32);
    /// ```
    pub fn side_by_side(n: NonZeroUsize) -> Self {
        PlanOptions { concurrency: n.get(), max_requests: n.get().saturating_mul(4).max(32), ..Default::default() }
    }
}

impl Default for PlanOptions<'_> {
    fn default() -> Self {
        PlanOptions { max_requests: 32, concurrency: 1, method_options: ClientMethodOptions::default() }
    }
}

impl TableClient {
    /// Cuts the entities that `filter` selects (all of them without one) into at most `n` key ranges that
    /// tile the whole key space, for `n` scans side by side: each range's query is the user's filter joined
    /// to [`KeyRange::filter_with`], and the ranges' results together are the filter's results, each entity
    /// exactly once. The ranges are in key order and serialize, for a plan that [`shard`](crate::filter::shard)
    /// shares among workers (`docs/rules.md` §10.1).
    ///
    /// The boundaries come from keys-only queries (`$select=PartitionKey,RowKey`), at most
    /// [`PlanOptions::max_requests`] of them:
    ///
    /// 1. The first pages of keys (1,000 each), for up to half the budget. A table read to its end this way
    ///    is cut at exact quantiles: each range holds `1/n` of the entities, give or take one, and a hot
    ///    partition is cut by RowKey.
    /// 2. Otherwise, probes with the rest of the budget, each the first partition at or above a point
    ///    (`PartitionKey ge '<point>'`, `$top=1`), spread over the key space rather than stepping from one
    ///    partition to the next. A point is a string: the prefix the keys share, then up to 7 characters read
    ///    as the digits of a number, the digits being the characters the keys read hold after that prefix
    ///    (BMP characters a key takes, so the service's order of points is their numbers' order). A third of
    ///    this budget (at most 8 requests) looks for the end of the table: first whether anything is above
    ///    the greatest string those digits make, then a bisection; the rest probes points evenly spaced
    ///    between the last key read and that end.
    ///
    ///    The cuts are then quantiles of an estimate: each key read counts one, and the rest of the table is
    ///    taken to hold as many entities per unit of that number as the keys read, spread evenly up to the
    ///    end. Each cut snaps to the key read or the partition found nearest to its quantile; a partition
    ///    found this way is not cut by RowKey. The estimate is good for keys spread evenly over their
    ///    characters (counters, hex, GUIDs) and poor for skewed ones (a hot partition after the keys read,
    ///    a table whose first keys are denser than the rest); it never loses or repeats an entity. When the
    ///    budget runs out before the end is found, the last range is open and takes in the rest.
    ///
    /// Fewer than `n` ranges come back when there are fewer entities or places to cut; an empty table is one
    /// range, [`KeyRange::all`].
    ///
    /// ```no_run
    /// use futures::TryStreamExt as _;
    /// use std::num::NonZeroUsize;
    /// use table_model::client::TableServiceClient;
    /// use table_model::{Entity, Query, TableName};
    ///
    /// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// let service = TableServiceClient::from_connection_string("UseDevelopmentStorage=true", None)?;
    /// let table = service.table_client(TableName::from_static("Orders"));
    /// let ranges = table.plan_ranges(NonZeroUsize::new(4).unwrap(), None, None).await?;
    /// let scans = ranges.iter().map(|range| {
    ///     let query = match range.filter() {
    ///         Some(f) => Query::new().filter(f),
    ///         None => Query::new(),
    ///     };
    ///     let table = table.clone();
    ///     async move { table.query::<Entity>(&query, None)?.try_collect::<Vec<_>>().await }
    /// });
    /// let parts = futures::future::try_join_all(scans).await?;
    /// println!("{} entities", parts.iter().map(Vec::len).sum::<usize>());
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// A filter that breaks a rule once a probe's bound is joined to it (a probe adds one comparison, a
    /// range up to six: keep a user's filter to nine), checked before anything is sent; the failure of any
    /// request.
    pub async fn plan_ranges(
        &self,
        n: NonZeroUsize,
        filter: Option<&Filter>,
        options: Option<PlanOptions<'_>>,
    ) -> Result<Vec<KeyRange>, Error> {
        let options = options.unwrap_or_default();
        // 1. Dense: the first pages of keys, one after another: half the budget; side by side, the first page,
        // then up to 3 more while the probes go.
        let side_by_side = options.concurrency > 1;
        let dense_budget = if side_by_side { options.max_requests.min(4) } else { options.max_requests.div_ceil(2) };
        let mut pages = self
            .query::<Entity>(&keys_only(filter.cloned(), QUERY_MAX_TOP), Some(query_options(&options)))?
            .into_pages();
        let first_pages = if side_by_side { dense_budget.min(1) } else { dense_budget };
        let (mut keys, requests, read_to_end) = read_keys(&mut pages, first_pages).await?;
        if read_to_end {
            return self.exact(n, &keys, filter);
        }
        if !side_by_side || keys.is_empty() || requests == dense_budget {
            let probe = Probe { table: self, filter, options: &options, requests };
            return self.probe_after(n, keys, probe).await;
        }
        // 2. Side by side: the probes after the first page's keys (with what the dense read leaves of the budget)
        // while the dense read goes on. A table read to its end meanwhile is cut exactly, the probes under way
        // dropped.
        let probe = Probe { table: self, filter, options: &options, requests: dense_budget };
        let first = keys.clone();
        let mut probing = Box::pin(async move { probe.run(&first).await });
        let reading = Box::pin(read_keys(&mut pages, dense_budget - requests));
        let (probed, (mut more, _, read_to_end)) = match futures::future::select(reading, &mut probing).await {
            Either::Left((read, _)) => {
                let read = read?;
                if read.2 {
                    (None, read)
                } else {
                    (Some(probing.await?), read)
                }
            }
            Either::Right((probed, reading)) => (Some(probed?), reading.await?),
        };
        keys.append(&mut more);
        match probed {
            Some(probed) if !read_to_end => self.estimate(n, &keys, probed, filter),
            _ => self.exact(n, &keys, filter),
        }
    }

    /// Plans as [`plan_ranges`](TableClient::plan_ranges) does, after the first keys that `filter` selects,
    /// read by the caller: `first`, in key order (the keys of a scan's first page, say; the table goes on
    /// after them). No keys are read again: the whole budget of requests probes the key space after the last
    /// of them, side by side when [`PlanOptions::concurrency`] allows. Without any key given, this is
    /// [`plan_ranges`](TableClient::plan_ranges).
    ///
    /// A scan that reads its first page before it knows whether the table is worth cutting (a table of one
    /// page is read whole by then) plans the rest this way, while it reads on: the plan costs one round trip
    /// more, not one per page of keys.
    ///
    /// ```no_run
    /// use futures::TryStreamExt as _;
    /// use std::num::NonZeroUsize;
    /// use table_model::client::{PlanOptions, TableServiceClient};
    /// use table_model::filter::KeyPosition;
    /// use table_model::{Entity, Query, TableName};
    ///
    /// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// let service = TableServiceClient::from_connection_string("UseDevelopmentStorage=true", None)?;
    /// let table = service.table_client(TableName::from_static("Orders"));
    /// let mut pages = table.query::<Entity>(&Query::new(), None)?.into_pages();
    /// let first = pages.try_next().await?.map(|page| page.entities).unwrap_or_default();
    /// if pages.continuation().is_some() {
    ///     let keys = first.iter().map(|e| KeyPosition::new(e.partition_key().clone(), e.row_key().clone()));
    ///     let options = PlanOptions { concurrency: 16, ..Default::default() };
    ///     let n = NonZeroUsize::new(16).unwrap();
    ///     let ranges = table.plan_ranges_after(n, None, keys.collect(), Some(options)).await?;
    ///     println!("{} ranges", ranges.len());
    /// }
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// As [`plan_ranges`](TableClient::plan_ranges).
    pub async fn plan_ranges_after(
        &self,
        n: NonZeroUsize,
        filter: Option<&Filter>,
        first: Vec<KeyPosition>,
        options: Option<PlanOptions<'_>>,
    ) -> Result<Vec<KeyRange>, Error> {
        if first.is_empty() {
            return self.plan_ranges(n, filter, options).await;
        }
        let options = options.unwrap_or_default();
        let probe = Probe { table: self, filter, options: &options, requests: 0 };
        self.probe_after(n, first, probe).await
    }

    /// The sparse part of a plan: probes spread over the key space after the keys read, each the first
    /// partition at or above a point (`PartitionKey ge '<point>'`, `$top=1`); then the cuts at the quantiles of
    /// the estimate.
    async fn probe_after(
        &self,
        n: NonZeroUsize,
        keys: Vec<KeyPosition>,
        probe: Probe<'_, '_>,
    ) -> Result<Vec<KeyRange>, Error> {
        if keys.is_empty() {
            // Nothing read, the budget spent: one range.
            return self.checked(vec![KeyRange::all()], probe.filter);
        }
        let filter = probe.filter;
        let probed = probe.run(&keys).await?;
        self.estimate(n, &keys, probed, filter)
    }

    /// A table read to its end, cut at exact quantiles of its keys.
    fn exact(&self, n: NonZeroUsize, keys: &[KeyPosition], filter: Option<&Filter>) -> Result<Vec<KeyRange>, Error> {
        let total = keys.len();
        let cuts: Vec<KeyPosition> = match total {
            0 => Vec::new(),
            _ => (1..n.get()).map(|i| keys[i * total / n.get()].clone()).collect(),
        };
        self.checked(KeyRange::all().split(cuts), filter)
    }

    /// The cuts at the quantiles of the estimate: the keys read (at least one) count one each; the rest of the
    /// table is taken to hold as many entities per unit of reading as the keys read, spread evenly over the
    /// readings from the last key read up to the end the probes found. A partition found weighs what the
    /// estimate puts below it; those not above the last key read are not places. Among the keys read a cut is
    /// at the key nearest its quantile; past them, at the point between the two partitions found around it
    /// where the estimate puts the quantile (the nearest place when no point lies between, or when the
    /// quantile is past every partition found).
    fn estimate(
        &self,
        n: NonZeroUsize,
        keys: &[KeyPosition],
        (digits, hi, found): Probed,
        filter: Option<&Filter>,
    ) -> Result<Vec<KeyRange>, Error> {
        let (first, last) = (keys[0].partition_key.as_str(), &keys[keys.len() - 1].partition_key);
        let mut found: Vec<PartitionKey> = found.into_iter().filter(|pk| pk > last).collect();
        found.sort();
        found.dedup();
        let dense = keys.len() as f64;
        let sparse = match digits.fraction(first, last.as_str(), &hi) {
            Some(f) if f > 0.0 => dense * (1.0 - f) / f,
            _ => dense,
        };
        let places: Vec<(KeyPosition, f64)> = (1..keys.len())
            .map(|j| (keys[j].clone(), j as f64))
            .chain(found.iter().enumerate().map(|(k, pk)| {
                let share = digits
                    .fraction(last.as_str(), pk.as_str(), &hi)
                    .unwrap_or((k + 1) as f64 / (found.len() + 1) as f64);
                (KeyPosition::partition(pk.clone()), dense + sparse * share)
            }))
            .collect();
        let total = dense + sparse;
        // Past the keys read, a cut falls between two partitions known to hold keys (the last key read, then
        // each found), at the point of the reading where the estimate puts its quantile. Not past the greatest
        // found: the end is not always known to be near (a budget spent before a probe found nothing), and
        // ranges up to it could hold nothing.
        let between: Vec<(&str, f64)> = std::iter::once((last.as_str(), dense))
            .chain(places[keys.len() - 1..].iter().map(|(p, w)| (p.partition_key.as_str(), *w)))
            .collect();
        let cuts = (1..n.get()).filter_map(|i| {
            let target = total * i as f64 / n.get() as f64;
            let k = between.partition_point(|(_, w)| *w <= target);
            let interpolated = (target > dense && k > 0 && k < between.len())
                .then(|| {
                    let ((lo, w0), (hi, w1)) = (between[k - 1], between[k]);
                    digits.at(lo, hi, (target - w0) / (w1 - w0))
                })
                .flatten()
                .and_then(|point| PartitionKey::new(point).ok());
            interpolated.map(KeyPosition::partition).or_else(|| {
                places
                    .iter()
                    .min_by(|a, b| (a.1 - target).abs().total_cmp(&(b.1 - target).abs()))
                    .map(|(position, _)| position.clone())
            })
        });
        self.checked(KeyRange::all().split(cuts.collect::<Vec<_>>()), filter)
    }

    /// The plan, once each range's query is known to be one the service takes: the user's filter with the
    /// range's comparisons may break the limit of 15 (nothing is sent to check it).
    fn checked(&self, plan: Vec<KeyRange>, filter: Option<&Filter>) -> Result<Vec<KeyRange>, Error> {
        for range in &plan {
            if let Some(f) = range.filter_with(filter.cloned()) {
                self.query::<Entity>(&Query::new().filter(f), None)?;
            }
        }
        Ok(plan)
    }
}

/// A keys-only query: `$select=PartitionKey,RowKey` (the service always sends RowKey with PartitionKey) and
/// `$top`.
fn keys_only(filter: Option<Filter>, top: usize) -> Query {
    let query = Query::new().select_property(PARTITION_KEY).top(top);
    match filter {
        Some(f) => query.filter(f),
        None => query,
    }
}

/// Reads up to `most` more pages of keys from `pages`: the keys, the requests sent, and whether the table was
/// read to its end.
async fn read_keys(pages: &mut QueryPages<Entity>, most: usize) -> Result<(Vec<KeyPosition>, usize, bool), Error> {
    let mut keys = Vec::new();
    for requests in 1..=most {
        let Some(page) = pages.try_next().await? else { return Ok((keys, requests, true)) };
        keys.extend(page.entities.iter().map(|e| KeyPosition::new(e.partition_key().clone(), e.row_key().clone())));
        if pages.continuation().is_none() {
            return Ok((keys, requests, true));
        }
    }
    Ok((keys, most, false))
}

/// The options of each query of a plan.
fn query_options<'a>(options: &PlanOptions<'a>) -> QueryOptions<'a> {
    QueryOptions { continuation: None, metadata: None, method_options: options.method_options.clone() }
}

/// What a probe found.
enum Found {
    /// The first partition at or above the point.
    Key(PartitionKey),
    /// No partition at or above the point.
    Nothing,
}

/// The probes of a plan, counting their requests.
struct Probe<'p, 'a> {
    table: &'p TableClient,
    filter: Option<&'p Filter>,
    options: &'p PlanOptions<'a>,
    requests: usize,
}

/// What the probes found: the digits and end of the key space they framed, and the partitions they found.
type Probed = (points::Digits, String, Vec<PartitionKey>);

impl Probe<'_, '_> {
    /// The probes after `keys` (at least one), one after another or side by side as the options say.
    async fn run(mut self, keys: &[KeyPosition]) -> Result<Probed, Error> {
        if self.options.concurrency > 1 {
            self.side_by_side(keys).await
        } else {
            self.one_after_another(keys).await
        }
    }

    /// The requests the budget has left.
    fn left(&self) -> usize {
        self.options.max_requests.saturating_sub(self.requests)
    }

    /// The probes one after another: whether anything is above the end the keys read frame (and if so, the
    /// frame again with it), a bisection towards the end with a third of the budget (at most 8 requests), then
    /// points evenly spaced from the last key read to the end, each spread over what the budget has left.
    async fn one_after_another(&mut self, keys: &[KeyPosition]) -> Result<Probed, Error> {
        let read = || keys.iter().map(|k| k.partition_key.as_str());
        let (first, last) = (&keys[0].partition_key, &keys[keys.len() - 1].partition_key);
        let (mut digits, mut hi) = points::frame(first.as_str(), last.as_str(), read());
        let mut found: Vec<PartitionKey> = Vec::new();
        // The end: nothing is at or above `hi`, or it is taken so; `lo` is the greatest partition found.
        let end_budget = self.requests + self.left().div_ceil(3).min(8);
        let mut lo = last.clone();
        if let Some(Found::Key(pk)) = self.next_at_or_above(&hi).await? {
            (digits, hi) = points::frame(
                first.as_str(),
                pk.as_str(),
                keys.iter().map(|k| k.partition_key.as_str()).chain([pk.as_str()]),
            );
            lo = pk.clone();
            found.push(pk);
        }
        while self.requests < end_budget {
            let Some(mid) = digits.between(lo.as_str(), &hi, 1).pop() else { break };
            match self.next_at_or_above(&mid).await? {
                Some(Found::Key(pk)) => {
                    lo = pk.clone();
                    found.push(pk);
                }
                Some(Found::Nothing) => hi = mid,
                None => break,
            }
        }
        // Between the last key read and `hi`: each probe spreads the budget left over what is left above the
        // key it found, or below the point that found nothing.
        let mut above = last.clone();
        let mut upper = hi.clone();
        while let Some(next) = digits.between(above.as_str(), &upper, self.left()).into_iter().next() {
            match self.next_at_or_above(&next).await? {
                Some(Found::Key(pk)) => {
                    above = pk.clone();
                    found.push(pk);
                }
                Some(Found::Nothing) => upper = next,
                None => break,
            }
        }
        Ok((digits, hi, found))
    }

    /// The probes side by side, in three rounds of up to [`PlanOptions::concurrency`] requests at once (one
    /// round trip each). First the ends: a probe at the string above the keys read of each [`points::frames`]
    /// (the prefix the keys share cut shorter and shorter, at most a third of the budget and 8 requests); the
    /// nearest that finds nothing frames the key space (when even the farthest finds a partition, it is framed
    /// again with the greatest found). Then twice points evenly spaced from the last key read to the end, with
    /// half the rest of the budget and then all of it; the least point that finds nothing is the end from then
    /// on.
    async fn side_by_side(&mut self, keys: &[KeyPosition]) -> Result<Probed, Error> {
        let read = || keys.iter().map(|k| k.partition_key.as_str());
        let (first, last) = (&keys[0].partition_key, &keys[keys.len() - 1].partition_key);
        let most = self.left().div_ceil(3).min(8).min(self.options.concurrency);
        let frames = points::frames(first.as_str(), last.as_str(), read(), most);
        let ends: Vec<String> = frames.iter().map(|(_, above)| above.clone()).collect();
        let mut found: Vec<PartitionKey> = Vec::new();
        let mut framed = None;
        for ((digits, above), result) in frames.into_iter().zip(self.round(&ends, ends.len()).await?) {
            match result {
                Some(Found::Key(pk)) => found.push(pk),
                Some(Found::Nothing) if framed.is_none() => framed = Some((digits, above)),
                _ => {}
            }
        }
        let (digits, mut hi) = match (framed, found.iter().max()) {
            (Some(frame), _) => frame,
            (None, Some(greatest)) => points::frame(
                first.as_str(),
                greatest.as_str(),
                keys.iter().map(|k| k.partition_key.as_str()).chain([greatest.as_str()]),
            ),
            // The budget ran out: one place, the last key read.
            (None, None) => points::frame(first.as_str(), last.as_str(), read()),
        };
        // Half of what is left finds the end to within one spacing; the rest spreads over what that leaves. A
        // round is one round trip: no more probes than go at once.
        for last_round in [false, true] {
            let share = if last_round { self.left() } else { self.left().div_ceil(2) };
            let share = share.min(self.options.concurrency);
            let spread = digits.between(last.as_str(), &hi, share);
            let mut nothing_from = None;
            for (point, result) in spread.iter().zip(self.round(&spread, share).await?) {
                match result {
                    Some(Found::Key(pk)) => found.push(pk),
                    Some(Found::Nothing) if nothing_from.is_none() => nothing_from = Some(point),
                    _ => {}
                }
            }
            if let Some(point) = nothing_from {
                hi = point.clone();
            }
        }
        Ok((digits, hi, found))
    }

    /// One round of probes at `points`, at most [`PlanOptions::concurrency`] at once, sharing `budget` requests
    /// evenly (a probe that meets empty pages that continue may take its share); each result in the order of
    /// `points`, `None` for a probe whose share ran out.
    async fn round(&mut self, points: &[String], budget: usize) -> Result<Vec<Option<Found>>, Error> {
        let share = budget / points.len().max(1);
        let (table, filter, options) = (self.table, self.filter, self.options);
        // Owned points: a future borrowing the slice's items would not be `Send` for every lifetime.
        let probes = points
            .iter()
            .cloned()
            .map(move |point| async move { first_at_or_above(table, filter, options, &point, share).await });
        let answers: Vec<(Option<Found>, usize)> =
            futures::stream::iter(probes).buffered(options.concurrency.max(1)).try_collect().await?;
        self.requests += answers.iter().map(|(_, used)| used).sum::<usize>();
        Ok(answers.into_iter().map(|(found, _)| found).collect())
    }

    /// The next probe of a plan made one request after another, with what the budget has left.
    async fn next_at_or_above(&mut self, point: &str) -> Result<Option<Found>, Error> {
        let (found, used) = first_at_or_above(self.table, self.filter, self.options, point, self.left()).await?;
        self.requests += used;
        Ok(found)
    }
}

/// The first partition at or above `point` that the user's filter selects (`PartitionKey ge '<point>'`,
/// `$top=1`), within `allowance` requests, and the requests sent; `None` when the allowance runs out first. A
/// page may be empty and still continue (`docs/rules.md` §10): each page is a request.
async fn first_at_or_above(
    table: &TableClient,
    filter: Option<&Filter>,
    options: &PlanOptions<'_>,
    point: &str,
    allowance: usize,
) -> Result<(Option<Found>, usize), Error> {
    let query = keys_only(Filter::all(std::iter::once(PARTITION_KEY.ge(point)).chain(filter.cloned())), 1);
    let mut pages = table.query::<Entity>(&query, Some(query_options(options)))?.into_pages();
    let mut used = 0;
    while used < allowance {
        used += 1;
        let Some(page) = pages.try_next().await? else { return Ok((Some(Found::Nothing), used)) };
        if let Some(entity) = page.entities.into_iter().next() {
            return Ok((Some(Found::Key(entity.partition_key().clone())), used));
        }
        if pages.continuation().is_none() {
            return Ok((Some(Found::Nothing), used));
        }
    }
    Ok((None, used))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::table::tests::{client, Answer};

    /// A page of query results: the entities' keys, and the continuation's NextPartitionKey if any.
    fn page(keys: &[(&str, &str)], next: Option<&str>) -> Answer {
        let entities: Vec<String> =
            keys.iter().map(|(pk, rk)| format!(r#"{{"PartitionKey":"{pk}","RowKey":"{rk}"}}"#)).collect();
        let mut headers = vec![("content-type", "application/json;odata=minimalmetadata".to_owned())];
        headers.extend(next.map(|pk| ("x-ms-continuation-nextpartitionkey", pk.to_owned())));
        Answer::Status(200, headers, format!(r#"{{"value":[{}]}}"#, entities.join(",")))
    }

    /// Empty pages that continue are followed, in the dense read and in a probe, and each counts against the
    /// budget: the plan stops after exactly `max_requests` requests (the script has no answer for another).
    /// After the dense read, a probe looks for what is above the keys read, then one probes a point between
    /// the last key read and the end.
    #[tokio::test]
    async fn empty_pages_are_followed_and_counted() {
        let (table, transport) = client(vec![
            // 1 to 3: the dense read, half of a budget of 6; the second page is empty but continues.
            page(&[("a", "1")], Some("a")),
            page(&[], Some("b")),
            page(&[("b", "1")], Some("b")),
            // 4: the probe at `ff`, above every key made of the digits the keys read suggest (`a` and `b` are
            // hex digits: `a` to `f`), finds `c`; the frame taken again with it has the same end. No budget is
            // left for a bisection.
            page(&[("c", "1")], Some("c")),
            // 5 and 6: the probe at a point between `c` and `ff` crosses a partition boundary before it finds
            // `ca`; the budget is spent.
            page(&[], Some("ca")),
            page(&[("ca", "1")], Some("ca")),
        ]);
        let options = PlanOptions { max_requests: 6, ..Default::default() };
        let plan = table.plan_ranges(NonZeroUsize::new(5).unwrap(), None, Some(options)).await.unwrap();
        // The estimate: the 2 keys read span a sixth of the readings from `a` to `ff` (keys of one length:
        // `a` reads 0, `f` 5, a missing unit as `a`), so the rest is taken to hold about 10 entities spread
        // evenly up to `ff`; `c` and `ca` (which reads as `c`) weigh 4 of the 11.7. The first cut (at 2.3)
        // falls between `b` and `c`, at the point where the estimate puts it; the others are past the
        // greatest partition found, whose end is not known: they snap to `c`, and make one cut.
        let shown: Vec<String> = plan.iter().map(ToString::to_string).collect();
        assert_eq!(shown, ["[.., 'bafffff'/'')", "['bafffff'/'', 'c'/'')", "['c'/'', ..)"]);

        let queries: Vec<String> =
            transport.urls.lock().unwrap().iter().map(|u| u.query().unwrap().to_owned()).collect();
        assert_eq!(queries.len(), 6);
        for q in &queries[..3] {
            assert!(q.contains("$select=PartitionKey%2CRowKey") && q.contains("$top=1000"), "{q}");
        }
        assert!(queries[3].contains("$filter=PartitionKey%20ge%20%27ff%27") && queries[3].contains("$top=1&"));
        let point = "$filter=PartitionKey%20ge%20%27";
        assert!(queries[4].contains(point) && queries[4].contains("$top=1&"), "{}", queries[4]);
        assert_eq!(
            queries[4].split('&').find(|p| p.starts_with("$filter")),
            queries[5].split('&').find(|p| p.starts_with("$filter"))
        );
        assert!(queries[5].contains("NextPartitionKey=ca"), "{}", queries[5]);
    }
}
