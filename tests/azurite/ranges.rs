//! Planning a parallel scan against Azurite (`docs/rules.md` §10.1): the ranges of `plan_ranges`, scanned one
//! by one, give every entity exactly once, with and without a user's filter, in a bounded number of requests.

use crate::support::azurite;
use futures::TryStreamExt as _;
use std::num::NonZeroUsize;
use table_model::client::{PlanOptions, TableClient};
use table_model::filter::{shard, Filter, KeyPosition, KeyRange};
use table_model::{AccountKey, Entity, PartitionKey, Query, RowKey};

/// The entities of the test table: 60 partitions of 20 entities, and one hot partition of 2,000 that sorts
/// first; `Value` is the entity's number in its partition.
const PARTITIONS: usize = 60;
const PER_PARTITION: usize = 20;
const HOT: usize = 2000;

async fn fill(table: &TableClient) -> usize {
    let mut batches = Vec::new();
    let partitions = (0..PARTITIONS).map(|p| (format!("p{p:02}"), PER_PARTITION));
    for (pk, count) in std::iter::once(("hot".to_owned(), HOT)).chain(partitions) {
        for chunk in (0..count).collect::<Vec<_>>().chunks(100) {
            let mut batch = table.batch(PartitionKey::new(pk.as_str()).unwrap());
            for &i in chunk {
                let entity =
                    Entity::new(PartitionKey::new(pk.as_str()).unwrap(), RowKey::new(format!("{i:05}")).unwrap())
                        .with("Value".parse().unwrap(), i as i32)
                        .unwrap();
                batch.insert(&entity).unwrap();
            }
            batches.push(batch);
        }
    }
    crate::support::submit_all(table, &batches).await
}

fn keys(entities: &[Entity]) -> Vec<(String, String)> {
    entities.iter().map(|e| (e.partition_key().to_string(), e.row_key().to_string())).collect()
}

async fn scan(table: &TableClient, filter: Option<Filter>) -> Vec<Entity> {
    let query = filter.map_or_else(Query::new, |f| Query::new().filter(f));
    table.query::<Entity>(&query, None).unwrap().try_collect().await.unwrap()
}

/// Scans each range with the user's filter and checks that each entity is in its range; returns the keys of
/// every scan together, sorted, and the size of each scan.
async fn scan_ranges(
    table: &TableClient,
    ranges: &[KeyRange],
    filter: Option<&Filter>,
) -> (Vec<(String, String)>, Vec<usize>) {
    let mut all = Vec::new();
    let mut sizes = Vec::new();
    for range in ranges {
        let part = scan(table, range.filter_with(filter.cloned())).await;
        for e in &part {
            assert!(
                range.contains(e.partition_key(), e.row_key()),
                "{}/{} is outside {range}",
                e.partition_key(),
                e.row_key()
            );
        }
        sizes.push(part.len());
        all.extend(keys(&part));
    }
    all.sort();
    (all, sizes)
}

/// The ranges tile the key space: from the first key to the last, each starting where the one before ends.
fn assert_tiles(ranges: &[KeyRange]) {
    assert_eq!(ranges.first().unwrap().start(), None);
    assert_eq!(ranges.last().unwrap().end(), None);
    assert!(shard(ranges, 0, 1).is_ok(), "not contiguous: {ranges:?}");
}

fn n(n: usize) -> NonZeroUsize {
    NonZeroUsize::new(n).unwrap()
}

#[tokio::test]
async fn ranges_scanned_one_by_one_give_each_entity_once() {
    let azurite = azurite!();
    let guard = azurite.table("Ranges").await;
    let total = fill(&guard).await;
    assert_eq!(total, HOT + PARTITIONS * PER_PARTITION);
    let (service, recorder) = azurite.client_with(AccountKey::development());
    let table = service.table_client(guard.table().clone());
    let mut full = keys(&scan(&table, None).await);
    full.sort();
    assert_eq!(full.len(), total);

    for parts in [1, 2, 4, 7] {
        let before = recorder.sent().len();
        let ranges = table.plan_ranges(n(parts), None, None).await.unwrap();
        // The table is read to its end in 4 pages of keys (within the default budget of 32): exact quantiles.
        assert_eq!(recorder.sent().len() - before, 4, "requests for n = {parts}");
        assert_eq!(ranges.len(), parts);
        assert_tiles(&ranges);
        let (union, sizes) = scan_ranges(&table, &ranges, None).await;
        assert_eq!(union, full, "n = {parts}");
        for size in &sizes {
            assert!(size.abs_diff(total / parts) <= 1, "n = {parts}: sizes {sizes:?}");
        }
        if parts > 1 {
            // The hot partition is cut by RowKey.
            let cut_in_hot =
                ranges.iter().filter_map(KeyRange::end).any(|b| b.partition_key == "hot" && !b.row_key.is_empty());
            assert!(cut_in_hot, "{ranges:?}");
        }
    }
}

#[tokio::test]
async fn a_small_budget_bounds_the_requests_and_still_tiles() {
    let azurite = azurite!();
    let guard = azurite.table("RangesBudget").await;
    fill(&guard).await;
    let (service, recorder) = azurite.client_with(AccountKey::development());
    let table = service.table_client(guard.table().clone());
    let mut full = keys(&scan(&table, None).await);
    full.sort();

    for budget in [0, 1, 4, 7] {
        for parts in [1, 2, 4, 7] {
            let before = recorder.sent().len();
            let options = PlanOptions { max_requests: budget, ..Default::default() };
            let ranges = table.plan_ranges(n(parts), None, Some(options)).await.unwrap();
            // The table is read to its end in 4 pages: a budget of 7 or more sends 4.
            assert_eq!(recorder.sent().len() - before, budget.min(4), "budget {budget}, n = {parts}");
            assert!(ranges.len() <= parts);
            assert_tiles(&ranges);
            let (union, _) = scan_ranges(&table, &ranges, None).await;
            assert_eq!(union, full, "budget {budget}, n = {parts}: {ranges:?}");
        }
    }
    // With 4 requests: 2 pages of keys (the hot partition), a probe above them that finds p00, and one at the
    // middle of p00 and the end of the key space that framed (`zzzz`: the digits and letters of `hot` and
    // `p00`) that finds nothing. The keys read span no reading, so the rest is taken to hold as many again:
    // the cuts are at the middle of the hot partition, its last key and p00, and the last range is open.
    let options = PlanOptions { max_requests: 4, ..Default::default() };
    let ranges = table.plan_ranges(n(4), None, Some(options)).await.unwrap();
    let shown: Vec<String> = ranges.iter().map(ToString::to_string).collect();
    assert_eq!(
        shown,
        ["[.., 'hot'/'01000')", "['hot'/'01000', 'hot'/'01999')", "['hot'/'01999', 'p00'/'')", "['p00'/'', ..)"]
    );
}

#[tokio::test]
async fn a_user_filter_is_planned_and_scanned_with_each_range() {
    let azurite = azurite!();
    let guard = azurite.table("RangesFilter").await;
    fill(&guard).await;
    let table: &TableClient = &guard;
    let user = Filter::property("Value").lt(15) & Filter::property("Value").ne(3);
    let mut full = keys(&scan(table, Some(user.clone())).await);
    full.sort();
    assert_eq!(full.len(), 14 * (PARTITIONS + 1));
    for parts in [1, 2, 4, 7] {
        let ranges = table.plan_ranges(n(parts), Some(&user), None).await.unwrap();
        assert_tiles(&ranges);
        let (union, sizes) = scan_ranges(table, &ranges, Some(&user)).await;
        assert_eq!(union, full, "n = {parts}");
        for size in &sizes {
            assert!(size.abs_diff(full.len() / parts) <= 1, "n = {parts}: sizes {sizes:?}");
        }
    }
    // A filter that leaves no room for a range's comparisons is refused before any range is scanned.
    let crowded = Filter::all((0..12).map(|i| Filter::property("Value").ne(100 + i))).unwrap();
    let err = table.plan_ranges(n(7), Some(&crowded), None).await.unwrap_err();
    assert!(err.to_string().contains("at most 15 comparisons are allowed, found 18"), "{err}");
}

#[tokio::test]
async fn an_empty_table_is_one_range() {
    let azurite = azurite!();
    let guard = azurite.table("RangesEmpty").await;
    let (service, recorder) = azurite.client_with(AccountKey::development());
    let table = service.table_client(guard.table().clone());
    for parts in [1, 7] {
        let before = recorder.sent().len();
        assert_eq!(table.plan_ranges(n(parts), None, None).await.unwrap(), [KeyRange::all()]);
        assert_eq!(recorder.sent().len() - before, 1);
    }
}

/// Fills a table with `partitions` partitions of `per` entities each, the partition keys given by `key`.
async fn fill_partitions(table: &TableClient, partitions: usize, per: usize, key: impl Fn(usize) -> String) -> usize {
    let batches: Vec<_> = (0..partitions)
        .map(|p| {
            let pk = PartitionKey::new(key(p)).unwrap();
            let mut batch = table.batch(pk.clone());
            for i in 0..per {
                batch.insert(&Entity::new(pk.clone(), RowKey::new(format!("{i:03}")).unwrap())).unwrap();
            }
            batch
        })
        .collect();
    crate::support::submit_all(table, &batches).await
}

/// A table of 1,000 partitions of 50 entities, keyed `p0000` to `p0999` or by 16 hex digits: with a budget
/// of 16 requests the first 8 pages of keys hold 16% of it, and a walk over the partitions after them
/// (before the probes were spread over the key space) saw 8 more and left 83% in the last range. Now the
/// probes reach over the whole key space and no range of 4 holds more than half.
#[tokio::test]
async fn many_partitions_are_cut_over_the_whole_key_space() {
    let hex = |p: usize| format!("{:016x}", (p as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    // The two tables side by side: Azurite answers one request at a time, and the client's work on one table's
    // pages goes on while it answers the other's.
    tokio::join!(many_partitions_cut("RangesMany", |p| format!("p{p:04}")), many_partitions_cut("RangesHex", hex));
}

/// [`many_partitions_are_cut_over_the_whole_key_space`] on one table, its partitions keyed by `key`.
async fn many_partitions_cut(name: &str, key: impl Fn(usize) -> String) {
    const PARTITIONS: usize = 1000;
    const PER: usize = 50;
    let azurite = azurite!();
    let guard = azurite.table(name).await;
    assert_eq!(fill_partitions(&guard, PARTITIONS, PER, key).await, PARTITIONS * PER);
    let (service, recorder) = azurite.client_with(AccountKey::development());
    let table = service.table_client(guard.table().clone());
    let mut full = keys(&scan(&table, None).await);
    full.sort();
    assert_eq!(full.len(), PARTITIONS * PER);
    for budget in [8, 16, 32] {
        let before = recorder.sent().len();
        let options = PlanOptions { max_requests: budget, ..Default::default() };
        let ranges = table.plan_ranges(n(4), None, Some(options)).await.unwrap();
        assert!(recorder.sent().len() - before <= budget, "{name}: budget {budget}");
        assert_tiles(&ranges);
        let (union, sizes) = scan_ranges(&table, &ranges, None).await;
        assert_eq!(union, full, "{name}, budget {budget}: {ranges:?}");
        // Measured: at most 39% with 8 requests, 30% with 16, 26% with 32.
        let most = if budget == 32 { full.len() * 3 / 10 } else { full.len() / 2 };
        assert!(sizes.iter().all(|&s| s <= most), "{name}, budget {budget}: sizes {sizes:?}");
    }
    // Side by side: the probes in rounds after the first page of keys, while up to 3 more are read. The
    // estimate has fewer keys read and as many probes; the ranges are as even.
    for (parts, budget) in [(4, 32), (16, 32), (16, 64)] {
        let before = recorder.sent().len();
        let options = PlanOptions { max_requests: budget, concurrency: 16, ..Default::default() };
        let ranges = table.plan_ranges(n(parts), None, Some(options)).await.unwrap();
        let sent = &recorder.sent()[before..];
        assert!(sent.len() <= budget, "{name}: budget {budget}: {} requests", sent.len());
        let dense = sent.iter().filter(|s| s.url.query().is_some_and(|q| q.contains("$top=1000"))).count();
        assert!((1..=4).contains(&dense), "{name}: {dense} pages of keys");
        assert_tiles(&ranges);
        let (union, sizes) = scan_ranges(&table, &ranges, None).await;
        assert_eq!(union, full, "{name}, {parts} side by side: {ranges:?}");
        // Measured: at most 29.9% for 4 ranges (25% is even); for 16, at most 9.6% (budget 32) and 7.4% (64)
        // (6.25% is even).
        let most = if parts == 4 { full.len() * 32 / 100 } else { full.len() * 11 / 100 };
        assert!(sizes.iter().all(|&s| s <= most), "{name}, {parts} side by side, budget {budget}: sizes {sizes:?}");
    }
}

/// `plan_ranges_after` plans after the keys of a scan's first page, read by the caller: it reads no keys
/// itself, and its ranges tile the table whatever the keys given (the first page, or only its first key).
#[tokio::test]
async fn a_plan_after_a_first_page_reads_no_keys_and_tiles() {
    let azurite = azurite!();
    let guard = azurite.table("RangesAfter").await;
    assert_eq!(fill_partitions(&guard, 300, 20, |p| format!("p{p:04}")).await, 6000);
    let (service, recorder) = azurite.client_with(AccountKey::development());
    let table = service.table_client(guard.table().clone());
    let mut full = keys(&scan(&table, None).await);
    full.sort();
    let mut pages = table.query::<Entity>(&Query::new(), None).unwrap().into_pages();
    let first: Vec<KeyPosition> = pages
        .try_next()
        .await
        .unwrap()
        .unwrap()
        .entities
        .iter()
        .map(|e| KeyPosition::new(e.partition_key().clone(), e.row_key().clone()))
        .collect();
    assert_eq!(first.len(), 1000);
    for given in [&first[..], &first[..1]] {
        for concurrency in [1, 8] {
            let before = recorder.sent().len();
            let options = PlanOptions { max_requests: 16, concurrency, ..Default::default() };
            let ranges = table.plan_ranges_after(n(8), None, given.to_vec(), Some(options)).await.unwrap();
            let sent = &recorder.sent()[before..];
            assert!(sent.len() <= 16 && !sent.is_empty(), "{} requests", sent.len());
            assert!(sent.iter().all(|s| s.url.query().is_some_and(|q| q.contains("$top=1&"))), "probes only");
            assert_tiles(&ranges);
            assert!(ranges.len() > 1, "{ranges:?}");
            let (union, sizes) = scan_ranges(&table, &ranges, None).await;
            assert_eq!(union, full, "{} keys given, concurrency {concurrency}: {ranges:?}", given.len());
            if given.len() == 1000 {
                // Measured: at most 16.7% (one after another) and 15.4% (side by side) of the table.
                assert!(sizes.iter().all(|&s| s <= full.len() / 4), "concurrency {concurrency}: {sizes:?}");
            }
        }
    }
    // No key given: the plan reads its own.
    let ranges = table.plan_ranges_after(n(4), None, Vec::new(), None).await.unwrap();
    assert_eq!(ranges, table.plan_ranges(n(4), None, None).await.unwrap());
}
