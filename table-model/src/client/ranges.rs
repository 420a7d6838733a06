//! Planning a parallel scan: [`TableClient::plan_ranges`] cuts a table into [`KeyRange`]s with keys-only
//! probes, bounded in requests (`docs/rules.md` §10.1).

use super::error::Error;
use super::options::QueryOptions;
use super::table::TableClient;
use crate::entity::Entity;
use crate::filter::{Filter, KeyPosition, KeyRange, PARTITION_KEY};
use crate::key::PartitionKey;
use crate::limits::QUERY_MAX_TOP;
use crate::query::Query;
use azure_core::http::ClientMethodOptions;
use futures::TryStreamExt as _;
use std::num::NonZeroUsize;

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
    /// page, the rest step over the partitions after those; a table that is not read to its end within the
    /// budget leaves its last range open, covering what was not seen.
    pub max_requests: usize,
    /// `azure_core`'s per-call options, used for every request.
    pub method_options: ClientMethodOptions<'a>,
}

impl Default for PlanOptions<'_> {
    fn default() -> Self {
        PlanOptions { max_requests: 32, method_options: ClientMethodOptions::default() }
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
    /// 2. Otherwise, one probe per partition after those (`PartitionKey gt '<last>'`, `$top=1`) with the rest
    ///    of the budget; the cuts are then spread evenly over the pages read and the partitions found, as
    ///    if each weighed the same. A partition found this way is not cut by RowKey. When the budget runs
    ///    out first, the last range is open and takes in the rest of the table.
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
        let query_options = || QueryOptions { continuation: None, method_options: options.method_options.clone() };
        let keys_only = |filter: Option<Filter>, top: usize| {
            let query = Query::new().select_property(PARTITION_KEY).top(top);
            match filter {
                Some(f) => query.filter(f),
                None => query,
            }
        };
        let mut requests = 0;

        // 1. Dense: the first pages of keys.
        let dense_budget = options.max_requests.div_ceil(2);
        let mut pages =
            self.query::<Entity>(&keys_only(filter.cloned(), QUERY_MAX_TOP), Some(query_options()))?.into_pages();
        let mut keys: Vec<KeyPosition> = Vec::new();
        let mut page_starts: Vec<KeyPosition> = Vec::new();
        let mut read_to_end = false;
        while requests < dense_budget {
            requests += 1;
            let Some(page) = pages.try_next().await? else {
                read_to_end = true;
                break;
            };
            let first = keys.len();
            keys.extend(page.entities.iter().map(|e| KeyPosition::new(e.partition_key().clone(), e.row_key().clone())));
            if first > 0 && keys.len() > first {
                page_starts.push(keys[first].clone());
            }
            if pages.continuation().is_none() {
                read_to_end = true;
                break;
            }
        }
        if read_to_end {
            let total = keys.len();
            let cuts: Vec<KeyPosition> = match total {
                0 => Vec::new(),
                _ => (1..n.get()).map(|i| keys[i * total / n.get()].clone()).collect(),
            };
            return self.checked(KeyRange::all().split(cuts), filter);
        }

        // 2. Sparse: one probe per partition after the keys read, each the first key above the last partition.
        let mut partitions: Vec<KeyPosition> = Vec::new();
        let mut last: Option<PartitionKey> = keys.last().map(|k| k.partition_key.clone());
        'walk: while requests < options.max_requests {
            let above = last.as_ref().map(|pk| PARTITION_KEY.gt(pk.as_str()));
            let probe = keys_only(Filter::all(above.into_iter().chain(filter.cloned())), 1);
            let mut pages = self.query::<Entity>(&probe, Some(query_options()))?.into_pages();
            // A page may be empty and still continue (`docs/rules.md` §10): each page is a request.
            loop {
                if requests >= options.max_requests {
                    break 'walk;
                }
                requests += 1;
                match pages.try_next().await? {
                    Some(page) => {
                        if let Some(entity) = page.entities.into_iter().next() {
                            let pk = entity.partition_key().clone();
                            partitions.push(KeyPosition::partition(pk.clone()));
                            last = Some(pk);
                            break;
                        }
                        if pages.continuation().is_none() {
                            break 'walk; // no partition above the last one
                        }
                    }
                    None => break 'walk,
                }
            }
        }

        // The places to cut, each taken to weigh the same: the starts of the pages read after the first, and
        // the starts of the partitions found after them. `c` places make `c + 1` parts; cut `n` ways among them.
        let places: Vec<KeyPosition> = page_starts.into_iter().chain(partitions).collect();
        let parts = places.len() + 1;
        let cuts = (1..n.get()).filter_map(|i| (i * parts / n.get()).checked_sub(1).map(|j| places[j].clone()));
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
    #[tokio::test]
    async fn empty_pages_are_followed_and_counted() {
        let (table, transport) = client(vec![
            // 1 to 3: the dense read, half of a budget of 6; the second page is empty but continues.
            page(&[("a", "1")], Some("a")),
            page(&[], Some("b")),
            page(&[("b", "1")], Some("b")),
            // 4 and 5: the probe above `b` crosses a partition boundary before it finds `c`.
            page(&[], Some("c")),
            page(&[("c", "1")], Some("c")),
            // 6: the probe above `c` gets an empty page; the budget is spent.
            page(&[], Some("d")),
        ]);
        let options = PlanOptions { max_requests: 6, ..Default::default() };
        let plan = table.plan_ranges(NonZeroUsize::new(3).unwrap(), None, Some(options)).await.unwrap();
        let shown: Vec<String> = plan.iter().map(ToString::to_string).collect();
        assert_eq!(shown, ["[.., 'b'/'1')", "['b'/'1', 'c'/'')", "['c'/'', ..)"]);

        let queries: Vec<String> =
            transport.urls.lock().unwrap().iter().map(|u| u.query().unwrap().to_owned()).collect();
        assert_eq!(queries.len(), 6);
        for q in &queries[..3] {
            assert!(q.contains("$select=PartitionKey%2CRowKey") && q.contains("$top=1000"), "{q}");
        }
        for (q, above) in [(&queries[3], "b"), (&queries[4], "b"), (&queries[5], "c")] {
            assert!(q.contains(&format!("$filter=PartitionKey%20gt%20%27{above}%27")) && q.contains("$top=1&"), "{q}");
        }
        assert!(queries[4].contains("NextPartitionKey=c"), "{}", queries[4]);
    }
}
