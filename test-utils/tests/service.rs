//! The in-memory Table service (`table_model_test_utils::service`) through the SDK's own client: what a
//! benchmark relies on it to answer as the service does. `cargo test -p table-model-test-utils --features service`.

use futures::TryStreamExt as _;
use std::collections::BTreeSet;
use std::num::NonZeroU32;
use std::time::Duration;
use table_model::client::azure_core;
use table_model::client::azure_core::http::{ClientOptions, ExponentialRetryOptions, RetryOptions};
use table_model::client::{
    BulkOperation, BulkOptions, QueryOptions, TableClient, TableServiceClient, TableServiceClientOptions,
};
use table_model::filter::Filter;
use table_model::filter::{PARTITION_KEY, ROW_KEY, TIMESTAMP};
use table_model::{AccountKey, Entity, MetadataLevel, PartitionKey, Query, RowKey, TableEntity, TableName};
use table_model_test_utils::service::{self, Options, Running, Seed, Service};

/// An entity with a string and a number.
#[derive(TableEntity, Debug, Clone, PartialEq)]
#[table(rename_all = "PascalCase")]
struct Item {
    #[table(partition_key)]
    group: String,
    #[table(row_key)]
    id: String,
    name: String,
    n: i32,
}

fn item(group: &str, id: &str, n: i32) -> Item {
    Item { group: group.into(), id: id.into(), name: format!("item {n}"), n }
}

/// A client of the service with fast retries (20 ms, at most 1 s apart), so that throttled writes retry soon.
fn client(server: &Running) -> TableServiceClient {
    let retry = ExponentialRetryOptions {
        initial_delay: azure_core::time::Duration::milliseconds(20),
        max_retries: 30,
        max_total_elapsed: azure_core::time::Duration::seconds(120),
        max_delay: azure_core::time::Duration::seconds(1),
    };
    let options = TableServiceClientOptions {
        client_options: ClientOptions { retry: RetryOptions::exponential(retry), ..Default::default() },
        ..Default::default()
    };
    TableServiceClient::new(server.endpoint(), AccountKey::development(), Some(options)).unwrap()
}

async fn table(server: &Running, name: &'static str) -> TableClient {
    client(server).create_table(TableName::from_static(name), None).await.unwrap()
}

/// Keys whose UTF-8 and UTF-16 orders differ: U+FF5E is after U+1F600 in UTF-16 and before it in UTF-8.
const KEYS: [&str; 4] = ["a", "b\u{1f600}", "b\u{ff5e}", "c"];

/// `per` entities in each partition of `partitions`, written with the bulk writer (transactions of 100).
async fn fill(table: &TableClient, partitions: &[&str], per: usize) -> Vec<Item> {
    let items: Vec<Item> = partitions
        .iter()
        .flat_map(|p| (0..per).map(move |i| item(p, &format!("{}{i:04}", KEYS[i % KEYS.len()]), i as i32)))
        .collect();
    let report = table.bulk_write(BulkOperation::Insert, items.clone(), None).await;
    assert_eq!(report.written, items.len() as u64, "{:?}", report.failures.first());
    items
}

/// `items` in the service's order: PartitionKey then RowKey, each by UTF-16 code unit.
fn service_order(mut items: Vec<Item>) -> Vec<Item> {
    let utf16 = |s: &str| s.encode_utf16().collect::<Vec<u16>>();
    items.sort_by_key(|i| (utf16(&i.group), utf16(&i.id)));
    items
}

async fn all<T: table_model::response::ReadEntity + Send + 'static>(table: &TableClient, query: &Query) -> Vec<T> {
    table.query::<T>(query, None).unwrap().try_collect().await.unwrap()
}

#[tokio::test]
async fn what_a_bulk_insert_wrote_reads_back_in_utf16_key_order() {
    let server = Service::new(Options::default()).start().await;
    let table = table(&server, "Items").await;
    let partitions = ["p\u{ff5e}", "p\u{1f600}", "p"];
    let items = fill(&table, &partitions, 230).await;
    let expected = service_order(items);
    assert_ne!(expected[0].group, "p\u{ff5e}", "UTF-8 order would put U+FF5E first");
    let read: Vec<Item> = all(&table, &Query::new()).await;
    assert!(read == expected, "every entity once, in the service's key order");
    let stats = server.stats();
    assert_eq!(stats.entities_written, 690);
    // 3 partitions of 230: 3 transactions each.
    assert_eq!(stats.transactions, 9);
    assert_eq!(stats.entities_sent, 690);
    // The bytes of the bodies answered: a page read raw is counted at its length.
    fn body(answer: &http::Response<azure_core::Bytes>) -> Result<u64, table_model::ResponseError> {
        Ok(answer.body().len() as u64)
    }
    let pages: Vec<_> = table.query_read(&Query::new(), None, body).unwrap().try_collect().await.unwrap();
    assert_eq!(pages.len(), 1);
    assert!(pages[0].body > 690 * 30, "{} bytes", pages[0].body);
    assert_eq!(server.stats().bytes_sent - stats.bytes_sent, pages[0].body);

    // A second table of the same name is refused, as is a query of one that does not exist.
    let err = client(&server).create_table(TableName::from_static("items"), None).await.unwrap_err();
    assert_eq!(err.service().and_then(|s| s.code()), Some("TableAlreadyExists"));
    let missing = client(&server).table_client(TableName::from_static("Missing"));
    let err = missing.query::<Item>(&Query::new(), None).unwrap().try_collect::<Vec<_>>().await.unwrap_err();
    let service = err.service().unwrap();
    assert_eq!((service.status(), service.code()), (404, Some("TableNotFound")));
}

#[tokio::test]
async fn pages_hold_at_most_top_and_1000_and_continue_where_they_stopped() {
    let seed = Seed { table: "Customers".into(), entities: 2_500, partitions: 3 };
    let server = Service::new(Options { seed: vec![seed.clone()], ..Options::default() }).start().await;
    let table = client(&server).table_client(TableName::from_static("Customers"));
    let pages = |query: Query| {
        let pages = table.query::<Entity>(&query, None).unwrap().into_pages();
        async move { pages.map_ok(|p| p.entities.len()).try_collect::<Vec<usize>>().await.unwrap() }
    };
    assert_eq!(pages(Query::new()).await, [1000, 1000, 500]);
    assert_eq!(pages(Query::new().top(700)).await, [700, 700, 700, 400]);
    // A partition of 834 within a range: its own pages, the last one's continuation at the next partition.
    let (first, _) = seed.keys(0);
    assert_eq!(pages(Query::new().filter(PARTITION_KEY.eq(first.as_str())).top(500)).await, [500, 334]);
    // A range that ends before a partition ends where it does: no page past it.
    let (second, _) = seed.keys(834);
    let range = PARTITION_KEY.ge(first.as_str()).and(PARTITION_KEY.lt(second.as_str()));
    assert_eq!(pages(Query::new().filter(range)).await, [834]);
    // Resuming from a page's continuation gives the rest.
    let mut pager = table.query::<Entity>(&Query::new().top(600), None).unwrap().into_pages();
    let page = pager.try_next().await.unwrap().unwrap();
    let options = QueryOptions { continuation: page.continuation.clone(), ..Default::default() };
    let rest: Vec<Entity> = table.query(&Query::new(), Some(options)).unwrap().try_collect().await.unwrap();
    assert_eq!(rest.len(), 1_900);
    assert_eq!(rest[0].row_key().as_str(), seed.keys(600).1);
    assert!(rest.iter().all(|e| e.get::<String>("Name").unwrap() == "Ada Lovelace"));
}

#[tokio::test]
async fn key_ranges_timestamps_and_select() {
    let server = Service::new(Options::default()).start().await;
    let table = table(&server, "Ranges").await;
    let before = fill(&table, &["x", "y\u{ff5e}", "y\u{1f600}", "z"], 40).await;
    let newest = all::<Entity>(&table, &Query::new()).await.iter().filter_map(|e| e.timestamp()).max().unwrap();
    let after = fill(&table, &["w"], 10).await;

    // A key range in UTF-16 order: from `y😀` (inclusive) to `y～` (exclusive) is the partition of `y😀` only.
    let range = PARTITION_KEY.ge("y\u{1f600}").and(PARTITION_KEY.lt("y\u{ff5e}")).and(ROW_KEY.ge("b"));
    let read: Vec<Item> = all(&table, &Query::new().filter(range)).await;
    let expected: Vec<Item> =
        service_order(before.iter().filter(|i| i.group == "y\u{1f600}" && i.id.as_str() >= "b").cloned().collect());
    assert_eq!(read, expected);
    assert_eq!(read.len(), 30);

    // `Timestamp gt` the newest of the first writes: exactly the later ones.
    let later: Vec<Item> = all(&table, &Query::new().filter(TIMESTAMP.gt(newest))).await;
    assert_eq!(later, service_order(after.clone()));
    let string = Filter::parse("Name eq 'item 3' and PartitionKey ge 'x'").unwrap();
    let named: Vec<Item> = all(&table, &Query::new().filter(string)).await;
    assert_eq!(named.iter().map(|i| i.group.as_str()).collect::<BTreeSet<_>>().len(), 4);
    assert!(named.iter().all(|i| i.n == 3));

    // `$select`: the named properties only, without metadata no `odata.etag`.
    let options = QueryOptions { metadata: Some(MetadataLevel::None), ..Default::default() };
    let query = Query::new().select(["RowKey", "N"]).filter(PARTITION_KEY.eq("w"));
    let selected: Vec<Entity> = table.query(&query, Some(options)).unwrap().try_collect().await.unwrap();
    assert_eq!(selected.len(), 10);
    for entity in &selected {
        assert!(entity.etag().is_none() && entity.timestamp().is_none());
        assert!(entity.get::<String>("Name").is_err());
        let row = entity.row_key().as_str();
        assert_eq!(entity.get::<i32>("N").unwrap(), row[row.len() - 4..].parse::<i32>().unwrap());
    }
    let minimal: Vec<Entity> = all(&table, &Query::new().filter(PARTITION_KEY.eq("w"))).await;
    assert!(minimal.iter().all(|e| e.etag().is_some() && e.timestamp().is_some()));
}

#[tokio::test]
async fn a_filter_it_cannot_evaluate_is_400_with_the_service_error() {
    let server = Service::new(Options::default()).start().await;
    let table = table(&server, "Filters").await;
    fill(&table, &["p"], 3).await;
    let query = Query::new().filter(Filter::parse("N gt 1").unwrap());
    let err = table.query::<Item>(&query, None).unwrap().try_collect::<Vec<_>>().await.unwrap_err();
    let service = err.service().unwrap();
    assert_eq!((service.status(), service.code()), (400, Some("InvalidInput")));
    assert!(
        service.message().contains("unsupported literal of type Edm.Int32 in the comparison `N gt`"),
        "{}",
        service.message()
    );
}

#[tokio::test]
async fn a_failed_operation_fails_its_whole_transaction_and_is_named_by_index() {
    let server = Service::new(Options::default()).start().await;
    let table = table(&server, "Atomic").await;
    table.insert(&item("p", "b", 1), None).await.unwrap();
    let mut batch = table.batch(PartitionKey::new("p").unwrap());
    batch.insert(&item("p", "a", 0)).unwrap().insert(&item("p", "b", 1)).unwrap().insert(&item("p", "c", 2)).unwrap();
    let err = table.submit_transaction(&batch, None).await.unwrap_err();
    let service = err.service().unwrap();
    assert_eq!(
        (service.status(), service.code(), service.operation_index()),
        (409, Some("EntityAlreadyExists"), Some(1))
    );
    let read: Vec<Item> = all(&table, &Query::new()).await;
    assert_eq!(read, [item("p", "b", 1)], "nothing of the failed transaction applied");

    // Updates with If-Match, merges and deletes, through a transaction and one by one.
    let mut batch = table.batch(PartitionKey::new("p").unwrap());
    batch.insert(&item("p", "a", 0)).unwrap().upsert(&item("p", "b", 10), table_model::UpdateMode::Merge).unwrap();
    let outcome = table.submit_transaction(&batch, None).await.unwrap();
    assert_eq!(outcome.etags.len(), 2);
    assert!(outcome.etags.iter().all(Option::is_some));
    let b: Item = table.get(&PartitionKey::new("p").unwrap(), &RowKey::new("b").unwrap(), None).await.unwrap();
    assert_eq!(b, item("p", "b", 10));
    table.delete_by_keys(&PartitionKey::new("p").unwrap(), &RowKey::new("a").unwrap(), None).await.unwrap();
    let read: Vec<Item> = all(&table, &Query::new()).await;
    assert_eq!(read, [item("p", "b", 10)]);
}

#[tokio::test]
async fn a_throttled_partition_gets_503_and_retries_land_every_entity_once() {
    let options = Options { throttle: Some(300), latency_write: Duration::from_millis(5), ..Options::default() };
    let server = Service::new(options).start().await;
    let table = table(&server, "Throttled").await;
    let items: Vec<Item> =
        ["p", "q"].iter().flat_map(|p| (0..1_000).map(move |i| item(p, &format!("{i:04}"), i))).collect();
    let options = BulkOptions { partition_rate: None, concurrency: 4, ..Default::default() };
    let report = table.bulk_write(BulkOperation::Insert, items.clone(), Some(options)).await;
    assert_eq!(report.written, 2_000, "{:?}", report.failures.first());
    let stats = server.stats();
    assert!(stats.throttled > 0, "past 300 entities a second, some transactions were refused: {stats:?}");
    // Each entity written once: no retry of a transaction the service had applied.
    assert_eq!((stats.entities_written, stats.transactions), (2_000, 20));
    let read: Vec<Item> = all(&table, &Query::new()).await;
    assert!(read == service_order(items));
    // The same counts over HTTP.
    assert_eq!(service::stats_of(server.port()).await.throttled, stats.throttled);

    // The SDK's own pace (a partition rate under the throttle) gets no 503.
    let before = server.stats().throttled;
    let paced = BulkOptions { partition_rate: NonZeroU32::new(250), ..Default::default() };
    let more: Vec<Item> = (0..300).map(|i| item("r", &format!("{i:04}"), i)).collect();
    assert_eq!(table.bulk_write(BulkOperation::Insert, more, Some(paced)).await.written, 300);
    assert_eq!(server.stats().throttled, before);
}

/// Each answer goes its latency after its request arrived, no sooner: a page 200 ms after it was asked for,
/// a write 100 ms (lower bounds of the service's pace, not timings of this machine).
#[tokio::test]
async fn answers_wait_their_latency() {
    let (query, write) = (Duration::from_millis(200), Duration::from_millis(100));
    let server =
        Service::new(Options { latency_query: query, latency_write: write, ..Options::default() }).start().await;
    let table = table(&server, "Slow").await;
    let started = std::time::Instant::now();
    table.insert(&item("p", "a", 1), None).await.unwrap();
    assert!(started.elapsed() >= write, "a write answered after {:?}", started.elapsed());
    let started = std::time::Instant::now();
    let read: Vec<Item> = all(&table, &Query::new()).await;
    assert!(started.elapsed() >= query, "a page answered after {:?}", started.elapsed());
    assert_eq!(read, [item("p", "a", 1)]);
}
