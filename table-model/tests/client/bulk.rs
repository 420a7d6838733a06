//! Bulk writes without a server: a fake transport answers every transaction, so the splitting, the
//! concurrency, the ordering within a partition and the memory bound can be checked exactly.
#![cfg(all(feature = "client", feature = "derive"))]

use async_trait::async_trait;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use table_model::client::azure_core::http::headers::{Headers, CLIENT_REQUEST_ID};
use table_model::client::azure_core::http::policies::{Policy, PolicyResult};
use table_model::client::azure_core::http::{AsyncRawResponse, ClientOptions, Context, Request, StatusCode, Transport};
use table_model::client::{
    BulkError, BulkOperation, BulkOptions, BulkSlots, FailureCause, TableServiceClient, TableServiceClientOptions,
};
use table_model::limits::{BATCH_MAX_BODY_BYTES, BATCH_MAX_OPERATIONS};
use table_model::{AccountKey, TableEntity, TableName};

/// How many readings exist at once, and the most that ever did.
#[derive(Debug, Default)]
struct Live {
    now: AtomicUsize,
    peak: AtomicUsize,
}

/// Counts the readings alive in a [`Live`]: made by the generator, dropped once written (or handed back in
/// the report). The default counts nothing (for the readings of the other tests).
#[derive(Debug, Default)]
struct Alive(Option<Arc<Live>>);

impl Alive {
    fn counted(live: &Arc<Live>) -> Self {
        let now = live.now.fetch_add(1, Ordering::Relaxed) + 1;
        live.peak.fetch_max(now, Ordering::Relaxed);
        Alive(Some(live.clone()))
    }
}

impl Drop for Alive {
    fn drop(&mut self) {
        if let Some(live) = &self.0 {
            live.now.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

#[derive(TableEntity, Debug)]
struct Reading {
    #[table(partition_key)]
    sensor: u32,
    #[table(row_key)]
    n: u64,
    value: f64,
    note: String,
    /// Never read: it counts the reading's life by being dropped with it.
    #[table(skip)]
    #[allow(dead_code)]
    alive: Alive,
}

/// What the fake service saw: per partition, the RowKeys of each transaction in the order received, and the
/// `x-ms-client-request-id` of each.
#[derive(Debug, Default)]
struct Seen {
    transactions: Vec<(String, Vec<String>, usize)>,
    request_ids: Vec<(String, Vec<String>)>,
    in_flight: usize,
    max_in_flight: usize,
    /// Each transaction's partition, size and arrival (on tokio's clock, paused in the rate's test).
    arrivals: Vec<(String, usize, tokio::time::Instant)>,
    /// Entities the input has given so far, when the test counts them.
    read: usize,
    /// [`Seen::read`] at each transaction's arrival.
    read_at_arrival: Vec<usize>,
}

/// Answers every `$batch` with `202` and one `204` per operation; refuses the RowKeys listed in `refuse`
/// with `409` at that operation's index.
#[derive(Debug)]
struct FakeService {
    seen: Arc<Mutex<Seen>>,
    refuse: Vec<String>,
    /// How long each answer takes (on tokio's clock); none: the service only yields.
    latency: std::time::Duration,
}

#[async_trait]
impl Policy for FakeService {
    async fn send(&self, _ctx: &Context, request: &mut Request, _next: &[Arc<dyn Policy>]) -> PolicyResult {
        let body: Vec<u8> = bytes_of(request);
        let text = String::from_utf8(body.clone()).expect("a UTF-8 body");
        let row_keys: Vec<String> =
            text.split("\"RowKey\":\"").skip(1).map(|s| s.split('"').next().unwrap().to_owned()).collect();
        let partition = text.split("\"PartitionKey\":\"").nth(1).unwrap().split('"').next().unwrap().to_owned();
        let request_id = request.headers().get_optional_str(&CLIENT_REQUEST_ID).unwrap_or_default().to_owned();
        {
            let mut seen = self.seen.lock().unwrap();
            seen.request_ids.push((request_id, row_keys.clone()));
            seen.in_flight += 1;
            seen.max_in_flight = seen.max_in_flight.max(seen.in_flight);
            seen.arrivals.push((partition.clone(), row_keys.len(), tokio::time::Instant::now()));
            seen.transactions.push((partition, row_keys.clone(), body.len()));
            let read = seen.read;
            seen.read_at_arrival.push(read);
        }
        if self.latency.is_zero() {
            tokio::task::yield_now().await;
        } else {
            tokio::time::sleep(self.latency).await;
        }
        self.seen.lock().unwrap().in_flight -= 1;
        let mut headers = Headers::new();
        headers.insert("content-type", "multipart/mixed; boundary=batchresponse_1");
        if let Some(i) = row_keys.iter().position(|rk| self.refuse.contains(rk)) {
            let error = format!(
                "--batchresponse_1\r\nContent-Type: multipart/mixed; boundary=changesetresponse_1\r\n\r\n\
                 --changesetresponse_1\r\nContent-Type: application/http\r\n\r\n\
                 HTTP/1.1 409 Conflict\r\nContent-Type: application/json\r\n\r\n\
                 {{\"odata.error\":{{\"code\":\"EntityAlreadyExists\",\"message\":{{\"lang\":\"en-US\",\
                 \"value\":\"{i}:The specified entity already exists.\"}}}}}}\r\n\
                 --changesetresponse_1--\r\n--batchresponse_1--\r\n"
            );
            return Ok(AsyncRawResponse::from_bytes(StatusCode::Accepted, headers, error));
        }
        let mut reply =
            String::from("--batchresponse_1\r\nContent-Type: multipart/mixed; boundary=changesetresponse_1\r\n\r\n");
        for _ in &row_keys {
            reply.push_str(
                "--changesetresponse_1\r\nContent-Type: application/http\r\n\r\n\
                 HTTP/1.1 204 No Content\r\nETag: W/\"1\"\r\n\r\n\r\n",
            );
        }
        reply.push_str("--changesetresponse_1--\r\n--batchresponse_1--\r\n");
        Ok(AsyncRawResponse::from_bytes(StatusCode::Accepted, headers, reply))
    }
}

fn bytes_of(request: &Request) -> Vec<u8> {
    let bytes: table_model::client::azure_core::Bytes = request.body().into();
    bytes.to_vec()
}

fn client(seen: Arc<Mutex<Seen>>, refuse: Vec<String>) -> table_model::client::TableClient {
    client_answering_after(seen, refuse, std::time::Duration::ZERO)
}

fn client_answering_after(
    seen: Arc<Mutex<Seen>>,
    refuse: Vec<String>,
    latency: std::time::Duration,
) -> table_model::client::TableClient {
    let transport = Transport::with_policy(Arc::new(FakeService { seen, refuse, latency }));
    let options = TableServiceClientOptions {
        client_options: ClientOptions { transport: Some(transport), ..Default::default() },
        ..Default::default()
    };
    let service =
        TableServiceClient::new("https://acct.table.core.windows.net", AccountKey::development(), Some(options))
            .expect("a valid endpoint");
    service.table_client(TableName::from_static("Readings"))
}

fn reading(n: u64, sensors: u64, note: &str) -> Reading {
    Reading { sensor: (n % sensors) as u32, n, value: n as f64 / 3.0, note: note.to_owned(), alive: Alive(None) }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_million_entities_from_an_iterator_are_written_holding_only_a_bounded_number() {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let table = client(seen.clone(), Vec::new());
    // A million in an optimised build; the bound does not depend on the count, and a debug build is ten times
    // slower, so the test suite checks it on 200,000.
    const N: u64 = if cfg!(debug_assertions) { 200_000 } else { 1_000_000 };
    let live = Arc::new(Live::default());
    let (concurrency, max_buffered) = (4, 1_000);
    let options = BulkOptions { concurrency, max_buffered, ..Default::default() };
    let generate = |n| Reading { alive: Alive::counted(&live), ..reading(n, 10, "") };
    let report = table.bulk_write(BulkOperation::Insert, (0..N).map(generate), Some(options)).await;
    assert!(report.is_complete(), "{:?}", report.failures.first());
    assert_eq!(report.written, N);
    assert_eq!(live.now.load(Ordering::Relaxed), 0, "every entity is dropped once written");
    // At most max_buffered entities wait (those in flight included), plus the one being added, whatever the
    // input's length.
    let peak = live.peak.load(Ordering::Relaxed);
    assert!(peak <= max_buffered + 1, "{peak} entities were alive at once");
    let seen = seen.lock().unwrap();
    assert!(seen.max_in_flight <= concurrency, "{} transactions in flight", seen.max_in_flight);
    assert_eq!(seen.transactions.iter().map(|(_, rks, _)| rks.len() as u64).sum::<u64>(), N);
    assert!(seen.transactions.iter().all(|(_, rks, _)| rks.len() <= BATCH_MAX_OPERATIONS));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transactions_split_at_100_and_at_the_body_limit_and_keep_partition_order() {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let table = client(seen.clone(), Vec::new());
    // 3 partitions; in partition 0, notes of 30,000 `é` (60,000 bytes of UTF-8 each), so that about 69 fit
    // under 4 MiB: the body limit splits them; the small ones of the other partitions split at 100.
    let heavy = "é".repeat(30_000);
    let big: Vec<Reading> = (0..900).map(|n| reading(n, 3, if n % 3 == 0 { &heavy } else { "small" })).collect();
    let report = table.bulk_write(BulkOperation::Upsert(table_model::UpdateMode::Replace), big, None).await;
    assert!(report.is_complete());
    assert_eq!(report.written, 900);
    let seen = seen.lock().unwrap();
    let mut last_by_partition: HashMap<&str, u64> = HashMap::new();
    for (partition, rks, size) in &seen.transactions {
        assert!(rks.len() <= BATCH_MAX_OPERATIONS);
        assert!(*size < BATCH_MAX_BODY_BYTES, "a body of {size} bytes");
        // Within a partition, transactions arrive in input order.
        let first: u64 = rks[0].parse().unwrap();
        if let Some(last) = last_by_partition.insert(partition, rks.last().unwrap().parse().unwrap()) {
            assert!(first > last, "partition {partition}: {first} after {last}");
        }
    }
    // Partition 0's entities are 60 KB each in the body: the body limit splits them well before 100.
    let zero: Vec<usize> =
        seen.transactions.iter().filter(|(p, _, _)| p == "0000000000").map(|(_, r, _)| r.len()).collect();
    assert!(zero.iter().all(|&n| n < 100) && zero.len() > 3, "{zero:?}");
    // The others fill transactions of exactly 100 but for the last.
    let one: Vec<usize> =
        seen.transactions.iter().filter(|(p, _, _)| p == "0000000001").map(|(_, r, _)| r.len()).collect();
    assert_eq!(one, vec![100, 100, 100]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_operation_fails_and_the_rest_of_its_transaction_is_rolled_back() {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let table = client(seen.clone(), vec!["00000000000000000042".to_owned()]);
    let readings: Vec<Reading> = (0..250).map(|n| reading(n, 1, "note")).collect();
    let report = table.bulk_write(BulkOperation::Insert, readings, None).await;
    // Entities 0..100 are one transaction and 42 is refused in it: 100 failures, 150 written.
    assert_eq!(report.written, 150);
    assert_eq!(report.failures.len(), 100);
    for failure in &report.failures {
        let n = failure.entity.n;
        assert!(n < 100);
        match &failure.cause {
            FailureCause::Failed => assert_eq!(n, 42),
            FailureCause::RolledBack { failed_index, failed_row_key } => {
                assert_eq!((*failed_index, failed_row_key.as_str()), (42, "00000000000000000042"));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(failure.error.error_code(), Some(table_model::ErrorCode::EntityAlreadyExists));
    }
    // The failed entities are handed back, to send again.
    let again = report.into_failed_entities();
    assert_eq!(again.iter().map(|r| r.n).sum::<u64>(), (0..100u64).sum::<u64>());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_entities_are_reported_not_sent_and_the_rest_is_written() {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let table = client(seen.clone(), Vec::new());
    let mut readings: Vec<Reading> = (0..10).map(|n| reading(n, 2, "note")).collect();
    readings[3].note = "x".repeat(40_000); // over 32,768 UTF-16 units
    readings[7].value = 1.0;
    let report = table.bulk_write(BulkOperation::Insert, readings, None).await;
    assert_eq!(report.written, 9);
    assert_eq!(report.failures.len(), 1);
    let failure = &report.failures[0];
    assert_eq!((failure.entity.n, &failure.cause), (3, &FailureCause::NotSent));
    assert!(failure.error.to_string().contains("must be at most 32768 UTF-16 code units"), "{}", failure.error);
    // Refused before sending, it names its table and keys as every error of a table's client does.
    assert_eq!(failure.error.table().map(|t| t.as_str()), Some(table.table().as_str()));
    assert_eq!(failure.error.keys(), failure.keys.as_ref().map(|(pk, rk)| (pk, rk)));
    let seen = seen.lock().unwrap();
    assert!(seen.transactions.iter().all(|(_, rks, _)| !rks.contains(&"00000000000000000003".to_owned())));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_report_with_failures_becomes_an_error_that_names_the_first_few() {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let table = client(seen.clone(), vec!["00000000000000000042".to_owned()]);
    let options = BulkOptions::default().with_client_request_id("import-7");
    let readings = (0..250).map(|n| reading(n, 1, "note"));
    let err: BulkError =
        table.bulk_write(BulkOperation::Insert, readings, Some(options)).await.into_result().unwrap_err();
    assert_eq!((err.written(), err.failures().len()), (150, 100));
    // The entity refused first, with its error; then the first two rolled back with it; then how many more.
    let refused = err.failures().iter().find(|f| f.cause == FailureCause::Failed).unwrap();
    let transaction = "(transaction 0, request id `import-7-0`)";
    let rolled_back = |n: u32| {
        format!(
            "PartitionKey `0000000000`, RowKey `{n:020}` {transaction}: rolled back with its transaction, \
                          whose operation 42 (RowKey `00000000000000000042`) was refused"
        )
    };
    let expected = format!(
        "100 of 250 entities were not written: PartitionKey `0000000000`, RowKey `00000000000000000042` \
         {transaction}: {}; {}; {}; and 97 more",
        refused.error,
        rolled_back(0),
        rolled_back(1),
    );
    assert_eq!(err.to_string(), expected);
    assert!(refused.error.to_string().contains("EntityAlreadyExists"), "{}", refused.error);
    let source = std::error::Error::source(&err).expect("the refused entity's error");
    assert_eq!(source.to_string(), refused.error.to_string());

    // `?` in a function that returns a boxed error.
    async fn write_all(
        table: &table_model::client::TableClient,
    ) -> Result<u64, Box<dyn std::error::Error + Send + Sync>> {
        Ok(table.bulk_write(BulkOperation::Insert, (300..310).map(|n| reading(n, 1, "")), None).await.into_result()?)
    }
    assert_eq!(write_all(&table).await.unwrap(), 10);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn entities_are_written_by_reference_and_handed_back_as_given() {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let table = client(seen.clone(), vec!["00000000000000000007".to_owned()]);
    // `Reading` is not `Clone`: the vector is written as it is, and the report hands back references into it.
    let readings: Vec<Reading> = (0..150).map(|n| reading(n, 1, "note")).collect();
    let report = table.bulk_write(BulkOperation::Insert, &readings, None).await;
    assert_eq!((report.written, report.failures.len()), (50, 100));
    assert!(report.failures.iter().all(|f| std::ptr::eq(f.entity, &readings[f.entity.n as usize])));
    // An iterator of references, and a stream of them.
    let report =
        table.bulk_write(BulkOperation::Upsert(table_model::UpdateMode::Merge), readings.iter().skip(100), None).await;
    assert_eq!(report.into_result().unwrap(), 50);
    let stream = futures::stream::iter(&readings[100..]);
    assert_eq!(
        table
            .bulk_write_stream(BulkOperation::Upsert(table_model::UpdateMode::Replace), stream, None)
            .await
            .into_result()
            .unwrap(),
        50
    );
    let sent: u64 = seen.lock().unwrap().transactions.iter().map(|(_, rks, _)| rks.len() as u64).sum();
    assert_eq!(sent, 250);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_transaction_carries_a_request_id_of_its_own() {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let table = client(seen.clone(), vec!["00000000000000000200".to_owned()]);
    // 550 entities in 3 partitions: two transactions or more each, two in flight at a time.
    let options = BulkOptions { concurrency: 2, ..Default::default() }.with_client_request_id("import-7");
    let readings = (0..550).map(|n| reading(n, 3, ""));
    let report = table.bulk_write(BulkOperation::Insert, readings, Some(options)).await;
    assert_eq!(report.client_request_id, "import-7");
    let seen_ids = std::mem::take(&mut seen.lock().unwrap().request_ids);
    let mut ids: Vec<&str> = seen_ids.iter().map(|(id, _)| id.as_str()).collect();
    ids.sort_by_key(|id| id.rsplit('-').next().unwrap().parse::<u64>().unwrap());
    let expected: Vec<String> = (0..report.transactions).map(|n| format!("import-7-{n}")).collect();
    assert_eq!(ids, expected, "one id per transaction, numbered in the order sent");
    // The failed transaction's entities name the id its request carried.
    let (refused_id, refused_keys) = seen_ids.iter().find(|(_, rks)| rks.contains(&format!("{:020}", 200))).unwrap();
    assert_eq!(report.failures.len(), refused_keys.len());
    for failure in &report.failures {
        let transaction = failure.transaction.as_ref().expect("sent");
        assert_eq!(&*transaction.client_request_id, refused_id);
        assert_eq!(transaction.client_request_id.as_ref(), format!("import-7-{}", transaction.index));
        assert!(refused_keys.contains(&format!("{:020}", failure.entity.n)));
    }

    // Without an id, the bulk write makes one (a UUID), and numbers its transactions the same way.
    let report = table.bulk_write(BulkOperation::Insert, (0..250).map(|n| reading(n, 2, "")), None).await;
    let base: uuid::Uuid = report.client_request_id.parse().expect("a UUID");
    let mut ids: Vec<String> = seen.lock().unwrap().request_ids.iter().map(|(id, _)| id.clone()).collect();
    ids.sort();
    let mut expected: Vec<String> = (0..report.transactions).map(|n| format!("{base}-{n}")).collect();
    expected.sort();
    assert_eq!(ids, expected);
}

#[tokio::test(start_paused = true)]
async fn a_partition_rate_spaces_each_partitions_transactions_and_leaves_the_others_alone() {
    let rate = std::num::NonZeroU32::new(100).unwrap();
    let write = |partition_rate| async move {
        let seen = Arc::new(Mutex::new(Seen::default()));
        let table = client(seen.clone(), Vec::new());
        // Sensor 0 gets 450 readings (5 transactions), sensors 1 and 2 get 50 each (one transaction).
        let readings = (0..550).map(|n| reading(n, 1, "")).map(|mut r| {
            r.sensor = match r.n {
                0..450 => 0,
                450..500 => 1,
                _ => 2,
            };
            r
        });
        let options = BulkOptions { partition_rate, ..Default::default() };
        let started = tokio::time::Instant::now();
        let report = table.bulk_write(BulkOperation::Insert, readings, Some(options)).await;
        assert!(report.is_complete(), "{:?}", report.failures.first());
        assert_eq!(report.written, 550);
        let arrivals = seen.lock().unwrap().arrivals.clone();
        (started, arrivals)
    };

    // Paced at 100 entities per second: each transaction of sensor 0 starts once the ones before it fit the
    // rate (100 entities: a second later), the small partitions at once.
    let (started, arrivals) = write(Some(rate)).await;
    let at = |partition: &str| -> Vec<(usize, f64)> {
        arrivals
            .iter()
            .filter(|(p, _, _)| p == partition)
            .map(|(_, n, t)| (*n, t.duration_since(started).as_secs_f64()))
            .collect()
    };
    let hot = at("0000000000");
    assert_eq!(hot.iter().map(|(n, _)| *n).collect::<Vec<_>>(), [100, 100, 100, 100, 50]);
    for (i, (_, t)) in hot.iter().enumerate() {
        assert!((t - i as f64).abs() < 0.01, "transaction {i} of the hot partition at {t} s: {hot:?}");
    }
    for cold in ["0000000001", "0000000002"] {
        let cold = at(cold);
        assert_eq!(cold.len(), 1);
        assert!(cold[0].1 < 0.01, "a cold partition waited: {cold:?}");
    }

    // Without a rate, nothing waits.
    let (started, arrivals) = write(None).await;
    assert!(arrivals.iter().all(|(_, _, t)| t.duration_since(started).as_secs_f64() < 0.01), "{arrivals:?}");
}

/// 20 partitions of 500 entities in key order (an export's file), all in memory, 8 transactions in flight and
/// each answered 15 ms after it is sent: the partition with the most transactions waiting goes first, so that
/// the places in flight stay full to the end, 13 round trips (100 transactions / 8), where taking the first
/// waiting took 15 (the last 4 partitions alone for their 5 transactions). And the first transaction is sent as
/// soon as it is full, not once the whole input is read.
#[tokio::test(start_paused = true)]
async fn the_partitions_with_the_most_waiting_go_first_and_the_first_transaction_goes_at_once() {
    let latency = std::time::Duration::from_millis(15);
    let seen = Arc::new(Mutex::new(Seen::default()));
    let table = client_answering_after(seen.clone(), Vec::new(), latency);
    let counted = seen.clone();
    let readings = (0..10_000u64).map(move |n| {
        counted.lock().unwrap().read += 1;
        Reading { sensor: (n / 500) as u32, ..reading(n, 1, "") }
    });
    let options = BulkOptions { concurrency: 8, max_buffered: 10_000, ..Default::default() };
    let started = tokio::time::Instant::now();
    let report = table.bulk_write(BulkOperation::Insert, readings, Some(options)).await;
    assert!(report.is_complete(), "{:?}", report.failures.first());
    assert_eq!((report.written, report.transactions), (10_000, 100));
    let seen = seen.lock().unwrap();
    let rounds = started.elapsed().as_secs_f64() / latency.as_secs_f64();
    assert!((rounds - 13.0).abs() < 0.01, "{rounds} round trips");
    assert!(seen.max_in_flight <= 8, "{} in flight", seen.max_in_flight);
    assert_eq!(seen.read_at_arrival[0], 100, "the first transaction waited for the input: {:?}", seen.read_at_arrival);
    // Each partition's transactions in input order.
    let mut next: HashMap<&str, u64> = HashMap::new();
    for (partition, row_keys, _) in &seen.transactions {
        let first: u64 = row_keys[0].parse().unwrap();
        let expected = next.entry(partition).or_insert(first - first % 500);
        assert_eq!(first, *expected, "partition {partition} out of order");
        *expected += row_keys.len() as u64;
    }
}

/// An input that is always ready (entities in memory) does not hold the writer's thread: the writer gives the
/// other tasks of its thread their turn while it reads, where it read up to `max_buffered` entities (the whole
/// input here) in one go. A task that counts its turns beside it, on the same thread, is seen to run every few
/// hundred entities read at most (tokio's cooperative budget is 128 operations a turn).
#[tokio::test]
async fn an_input_that_is_always_ready_leaves_the_other_tasks_of_its_thread_their_turn() {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let table = client_answering_after(seen, Vec::new(), std::time::Duration::ZERO);
    let turns = Arc::new(AtomicUsize::new(0));
    let writing = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let counter = {
        let (turns, writing) = (turns.clone(), writing.clone());
        tokio::spawn(async move {
            while writing.load(Ordering::SeqCst) {
                turns.fetch_add(1, Ordering::SeqCst);
                tokio::task::yield_now().await;
            }
        })
    };
    // The other task's turns when each entity is read.
    let at_read = Arc::new(Mutex::new(Vec::new()));
    let readings = {
        let (turns, at_read) = (turns.clone(), at_read.clone());
        (0..10_000u64).map(move |n| {
            at_read.lock().unwrap().push(turns.load(Ordering::SeqCst));
            Reading { sensor: (n / 500) as u32, ..reading(n, 1, "") }
        })
    };
    let options = BulkOptions { concurrency: 8, max_buffered: 10_000, ..Default::default() };
    let report = table.bulk_write(BulkOperation::Insert, readings, Some(options)).await;
    writing.store(false, Ordering::SeqCst);
    counter.await.unwrap();
    assert!(report.is_complete(), "{:?}", report.failures.first());
    let at_read = at_read.lock().unwrap();
    let longest = at_read.chunk_by(|a, b| a == b).map(<[usize]>::len).max().unwrap();
    assert!(longest <= 256, "{longest} entities read in one turn of the thread");
}

/// Refuses every connection, counting the tries.
#[derive(Debug, Default)]
struct Down {
    tries: AtomicUsize,
}

#[async_trait]
impl Policy for Down {
    async fn send(&self, _ctx: &Context, _request: &mut Request, _next: &[Arc<dyn Policy>]) -> PolicyResult {
        self.tries.fetch_add(1, Ordering::SeqCst);
        tokio::task::yield_now().await;
        Err(table_model::client::azure_core::Error::with_message(
            table_model::client::azure_core::error::ErrorKind::Io,
            "connection refused",
        ))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endpoint_that_does_not_answer_stops_the_write_at_the_first_transaction_that_gave_up() {
    let down = Arc::new(Down::default());
    let options = TableServiceClientOptions {
        client_options: ClientOptions {
            transport: Some(Transport::with_policy(down.clone())),
            retry: table_model::client::azure_core::http::RetryOptions::none(),
            ..Default::default()
        },
        ..Default::default()
    };
    let service =
        TableServiceClient::new("https://acct.table.core.windows.net", AccountKey::development(), Some(options))
            .unwrap();
    let table = service.table_client(TableName::from_static("Readings"));
    // 400 partitions of 5: 400 transactions, 8 in flight at a time.
    let readings: Vec<Reading> = (0..2_000).map(|n| reading(n, 400, "note")).collect();
    let report = table.bulk_write(BulkOperation::Insert, readings, None).await;
    assert_eq!(report.written, 0);
    assert_eq!(report.failures.len(), 2_000, "every entity is reported");
    let sent = report.failures.iter().filter(|f| f.cause != FailureCause::Abandoned).count();
    let abandoned = report.failures.iter().filter(|f| f.cause == FailureCause::Abandoned).count();
    // Only the transactions in flight when the first gave up were sent (each try of each is one connection).
    assert!(sent <= 8 * 5, "{sent} entities were sent");
    assert_eq!(sent + abandoned, 2_000);
    assert!(down.tries.load(Ordering::SeqCst) < 400, "{} tries", down.tries.load(Ordering::SeqCst));
    let first = report.failures.iter().find(|f| f.cause == FailureCause::Abandoned).unwrap();
    assert!(first.transaction.is_none());
    assert!(first.to_string().contains("not sent: an earlier transaction got no answer after the retries"), "{first}");
    assert!(matches!(first.error.kind(), table_model::client::ErrorKind::Transport(_)), "{}", first.error);
}

/// Two bulk writes of different partitions side by side, each of 8 in flight, given the same 8 places
/// ([`BulkSlots`]): 8 transactions in flight between them, never more, and the places full from the first round
/// trip to the last: the 200 transactions take 25 round trips, where one write after the other takes 26 (13
/// each, the last of each half empty) and the two without shared places send 16 at once.
#[tokio::test(start_paused = true)]
async fn writes_that_share_their_places_keep_that_many_in_flight_together() {
    let latency = std::time::Duration::from_millis(15);
    let readings = |first: u64| {
        (first..first + 10_000).map(|n| Reading { sensor: (n / 500) as u32, ..reading(n, 1, "") }).collect::<Vec<_>>()
    };
    let run = |slots: Option<BulkSlots>| {
        let seen = Arc::new(Mutex::new(Seen::default()));
        let table = client_answering_after(seen.clone(), Vec::new(), latency);
        async move {
            let options =
                || BulkOptions { concurrency: 8, max_buffered: 10_000, slots: slots.clone(), ..Default::default() };
            let started = tokio::time::Instant::now();
            let (a, b) = tokio::join!(
                table.bulk_write(BulkOperation::Insert, readings(0), Some(options())),
                table.bulk_write(BulkOperation::Insert, readings(10_000), Some(options())),
            );
            assert!(a.is_complete() && b.is_complete());
            assert_eq!(a.written + b.written, 20_000);
            let rounds = started.elapsed().as_secs_f64() / latency.as_secs_f64();
            let most = seen.lock().unwrap().max_in_flight;
            (rounds, most)
        }
    };
    let eight = BulkSlots::new(std::num::NonZeroUsize::new(8).unwrap());
    let (rounds, most) = run(Some(eight.clone())).await;
    assert_eq!(most, 8, "transactions in flight with 8 shared places");
    assert!((rounds - 25.0).abs() < 0.01, "{rounds} round trips");
    assert_eq!(eight.available(), 8, "every place is given back");
    let (_, most) = run(None).await;
    assert_eq!(most, 16, "without shared places each write keeps its own 8");
}
