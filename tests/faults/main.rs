//! The client under faults: bulk writes and every single operation through a fault-injecting proxy in front of a
//! real Azurite, checked against what Azurite stores (read directly, not through the proxy).
//!
//! Run with `bash scripts/azurite.sh run cargo test --test faults`; without `TABLE_MODEL_AZURITE_ENDPOINT`
//! the tests are skipped (and fail when `CI` is set). Every failure message carries the seed of the fault
//! schedule, which replays it (`TABLE_MODEL_FAULT_SEED` overrides the fixed seeds).

mod secondary;

use futures::TryStreamExt as _;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;
use table_model::client::{BulkOperation, BulkOptions, ErrorKind, PlanOptions, TableClient, TableServiceClient};
use table_model::filter::KeyPosition;
use table_model::sas::{AccessPolicy, PolicyId, SignedIdentifier, TableSasPermissions};
use table_model::service_properties::{AnalyticsLogging, GeoReplicationStatus, RetentionPolicy, ServiceProperties};
use table_model::{DateTime, Entity, IfMatch, PartitionKey, Query, RowKey, TableName, UpdateMode};
use table_model_test_utils::azurite::endpoint_or_skip;
use table_model_test_utils::faults::{client, fresh_table, socket_of, through, unique_table_name, DELAY};
use table_model_test_utils::proxy::{Fault, Proxy};

/// The Azurite endpoint, or `None` (the test is skipped) when it is not set outside CI.
fn endpoint() -> Option<String> {
    endpoint_or_skip("fault tests", "scripts/azurite.sh run cargo test -p table-model-suite --test faults")
}

fn seed(default: u64) -> u64 {
    std::env::var("TABLE_MODEL_FAULT_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(default)
}

/// An entity of 12 properties of every EDM type, a function of `i` and a version.
fn entity(i: u32, version: i32) -> Entity {
    let pk = PartitionKey::new(format!("p{}", i % 10)).expect("valid");
    let rk = RowKey::new(format!("{i:06}")).expect("valid");
    let at = DateTime::from_ticks(638_000_000_000_000_000 + i64::from(i) * 10_000_000).expect("in range");
    let mut e = Entity::new(pk, rk);
    let p = |s: &str| s.parse().expect("valid name");
    e.insert(p("Version"), version).unwrap();
    e.insert(p("Index"), i64::from(i) << 33).unwrap();
    e.insert(p("Ratio"), f64::from(i) / 7.0).unwrap();
    e.insert(p("Flag"), i.is_multiple_of(2)).unwrap();
    e.insert(p("At"), at).unwrap();
    e.insert(p("Id"), uuid::Uuid::from_u128(u128::from(i) * 0x1_0001)).unwrap();
    e.insert(p("Bytes"), vec![(i % 251) as u8; 16]).unwrap();
    e.insert(p("Name"), format!("entity {i} é😀")).unwrap();
    e.insert(p("Small"), (i % 1000) as i32).unwrap();
    e.insert(p("Text"), "x".repeat(64)).unwrap();
    e.insert(p("Whole"), 5.0).unwrap();
    e.insert(p("Neg"), -(i as i32)).unwrap();
    e
}

/// Every entity of a table, read without the proxy, by keys.
async fn stored(table: &TableClient) -> BTreeMap<(String, String), Entity> {
    let all: Vec<Entity> = table.query(&Query::new(), None).unwrap().try_collect().await.expect("read the table");
    let count = all.len();
    let map: BTreeMap<_, _> =
        all.into_iter().map(|e| ((e.partition_key().to_string(), e.row_key().to_string()), e)).collect();
    assert_eq!(map.len(), count, "an entity came back twice");
    map
}

fn same_properties(a: &Entity, b: &Entity) -> bool {
    a.len() == b.len() && a.iter().all(|(name, value)| b.value(name.as_str()) == Some(value))
}

fn keys(e: &Entity) -> (String, String) {
    (e.partition_key().to_string(), e.row_key().to_string())
}

/// The keys of the entities of raw pages, in order: each body decoded.
fn keys_of_pages<B: AsRef<[u8]>>(pages: &[table_model::response::RawPage<B>]) -> Vec<(String, String)> {
    let decoded = pages.iter().map(|page| table_model::json::decode_query(page.body.as_ref(), None).unwrap());
    decoded.flat_map(|entities| entities.iter().map(keys).collect::<Vec<_>>()).collect()
}

/// The keys of the entities each range of a plan selects, read directly, all together and sorted: the table's
/// keys, each once, when the plan tiles the key space.
async fn keys_in_ranges(table: &TableClient, plan: &[table_model::filter::KeyRange]) -> Vec<(String, String)> {
    let mut scanned = Vec::new();
    for range in plan {
        let query = range.filter().map_or_else(Query::new, |f| Query::new().filter(f));
        let part: Vec<Entity> = table.query(&query, None).unwrap().try_collect().await.unwrap();
        scanned.extend(part.iter().map(keys));
    }
    scanned.sort();
    scanned
}

/// The requests of each method a proxy saw since `before`, and the time since `start`: printed, for the record
/// of what a phase cost (`--nocapture` shows it), and returned.
fn phase(proxy: &Proxy, name: &str, start: Instant, before: &mut BTreeMap<String, u64>) -> BTreeMap<String, u64> {
    let now = proxy.methods();
    let delta: BTreeMap<String, u64> =
        now.iter().map(|(m, n)| (m.clone(), n - before.get(m).copied().unwrap_or(0))).filter(|(_, n)| *n > 0).collect();
    eprintln!("{name}: {delta:?} requests in {:.1} s", start.elapsed().as_secs_f64());
    *before = now;
    delta
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bulk_writes_under_ten_percent_faults_store_everything_exactly_once() {
    let Some(url) = endpoint() else { return };
    let seed = seed(0x5EED_0001);
    let direct = client(&url);
    let name = fresh_table(&direct, "Faults").await;
    let proxy = Proxy::start(socket_of(&url), seed, 100, DELAY).await;
    let faulty = through(&proxy, &url).table_client(name.clone());
    let table = direct.table_client(name.clone());
    const N: u32 = 10_000;
    let progress_calls = Arc::new(AtomicU64::new(0));
    let calls = progress_calls.clone();
    let options = BulkOptions {
        concurrency: 8,
        progress: Some(Arc::new(move |p| {
            calls.fetch_add(1, Ordering::Relaxed);
            assert!(p.written + p.failed <= u64::from(N));
        })),
        ..Default::default()
    };

    // Insert: every entity is stored once, equal to what was sent, and the report says so.
    let mut seen = BTreeMap::new();
    let start = Instant::now();
    let report = faulty.bulk_write(BulkOperation::Insert, (0..N).map(|i| entity(i, 1)), Some(options.clone())).await;
    phase(&proxy, "bulk insert", start, &mut seen);
    let contents = stored(&table).await;
    assert_eq!(report.written as usize + report.failures.len(), N as usize, "seed {seed}: the report lost entities");
    assert!(
        report.is_complete(),
        "seed {seed}: {:?}",
        report.failures.iter().map(|f| f.error.to_string()).collect::<Vec<_>>()
    );
    assert_eq!(contents.len(), N as usize, "seed {seed}");
    for i in 0..N {
        let sent = entity(i, 1);
        let got = contents.get(&keys(&sent)).unwrap_or_else(|| panic!("seed {seed}: entity {i} missing"));
        assert!(same_properties(&sent, got), "seed {seed}: entity {i} differs: {got:?}");
    }
    assert!(progress_calls.load(Ordering::Relaxed) >= 100, "one progress call per transaction");

    // Upsert (replace) a new version of every entity.
    let start = Instant::now();
    let report = faulty
        .bulk_write(BulkOperation::Upsert(UpdateMode::Replace), (0..N).map(|i| entity(i, 2)), Some(options.clone()))
        .await;
    phase(&proxy, "bulk upsert", start, &mut seen);
    assert!(report.is_complete(), "seed {seed}: {:?}", report.failures.first().map(|f| f.error.to_string()));
    let contents = stored(&table).await;
    assert_eq!(contents.len(), N as usize);
    assert!(contents.values().all(|e| e.get::<i32>("Version").unwrap() == 2), "seed {seed}: an old version remains");

    // Delete everything.
    let doomed: Vec<Entity> = contents.into_values().collect();
    let start = Instant::now();
    let report = faulty.bulk_write(BulkOperation::Delete, doomed, Some(options)).await;
    phase(&proxy, "bulk delete", start, &mut seen);
    assert!(report.is_complete(), "seed {seed}: {:?}", report.failures.first().map(|f| f.error.to_string()));
    assert_eq!(report.written, u64::from(N));
    assert!(stored(&table).await.is_empty(), "seed {seed}: entities survived the delete");

    // The run met every kind of fault.
    let counts = proxy.counts();
    for fault in [
        Fault::CloseBeforeForwarding,
        Fault::CloseAfterForwarding,
        Fault::ServerBusy,
        Fault::OperationTimedOut,
        Fault::Delay,
    ] {
        assert!(counts.get(&fault).copied().unwrap_or(0) > 0, "seed {seed}: no {fault:?} in {counts:?}");
    }
    direct.delete_table(&name, None).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transaction_whose_reply_is_lost_is_read_back_and_reported_written() {
    let Some(url) = endpoint() else { return };
    let direct = client(&url);
    let name = fresh_table(&direct, "LostTx").await;
    let table = direct.table_client(name.clone());
    for lost in [Fault::CloseAfterForwarding, Fault::OperationTimedOut, Fault::Delay] {
        let proxy = Proxy::scripted(socket_of(&url), vec![lost], 0, 0, DELAY).await;
        let faulty = through(&proxy, &url).table_client(name.clone());
        let base = match lost {
            Fault::CloseAfterForwarding => 0,
            Fault::OperationTimedOut => 100,
            _ => 200,
        };
        let mut batch = faulty.batch(PartitionKey::new("p0").unwrap());
        for i in base..base + 3 {
            batch.insert(&entity(i * 10, 1)).unwrap();
        }
        let outcome = faulty.submit_transaction(&batch, None).await.unwrap_or_else(|e| panic!("{lost:?}: {e}"));
        assert_eq!(outcome.etags.len(), 3, "{lost:?}");
        assert!(outcome.etags.iter().all(Option::is_some), "{lost:?}: the ETags read back");
        assert_eq!(proxy.counts().get(&lost), Some(&1));
        // The first try landed; the retry was refused (409 at operation 0) and settled by one read of the three.
        let methods = proxy.methods();
        assert_eq!((methods.get("POST"), methods.get("GET")), (Some(&2), Some(&1)), "{lost:?}: {methods:?}");
    }
    let contents = stored(&table).await;
    assert_eq!(contents.len(), 9);

    // A single insert whose reply is lost: success, with the ETag of the stored entity.
    let proxy = Proxy::scripted(socket_of(&url), vec![Fault::CloseAfterForwarding], 0, 0, DELAY).await;
    let faulty = through(&proxy, &url).table_client(name.clone());
    let etag = faulty.insert(&entity(7, 1), None).await.expect("resolved by reading back");
    let read: Entity = table.get(&"p7".parse().unwrap(), &"000007".parse().unwrap(), None).await.unwrap();
    assert_eq!(read.etag(), Some(&etag));

    // An update under an ETag whose reply is lost: the retry's 412 is resolved by reading back.
    let proxy = Proxy::scripted(socket_of(&url), vec![Fault::OperationTimedOut], 0, 0, DELAY).await;
    let faulty = through(&proxy, &url).table_client(name.clone());
    let changed = read.clone().with("Version".parse().unwrap(), 9).unwrap();
    let new_etag = faulty.update(&changed, UpdateMode::Merge, None).await.expect("resolved by reading back");
    assert_ne!(Some(&new_etag), read.etag());

    // A delete whose reply is lost: the retry's 404 means the first try deleted it.
    let proxy = Proxy::scripted(socket_of(&url), vec![Fault::CloseAfterForwarding], 0, 0, DELAY).await;
    let faulty = through(&proxy, &url).table_client(name.clone());
    faulty.delete_by_keys(&"p7".parse().unwrap(), &"000007".parse().unwrap(), None).await.expect("deleted");
    assert!(table.try_get::<Entity>(&"p7".parse().unwrap(), &"000007".parse().unwrap(), None).await.unwrap().is_none());
    direct.delete_table(&name, None).await.unwrap();
}

/// An entity of partition `pk` with RowKey `rk`, a function of `version`.
fn keyed(pk: &str, rk: &str, version: i32) -> Entity {
    let e = Entity::new(PartitionKey::new(pk).expect("valid"), RowKey::new(rk).expect("valid"));
    e.with("Version".parse().unwrap(), version).unwrap().with("Note".parse().unwrap(), format!("{rk} é")).unwrap()
}

/// The GET request lines a proxy saw, with the percent-encoding of the characters a filter holds undone.
fn gets(proxy: &Proxy) -> Vec<String> {
    let decode = |l: &str| {
        [("%20", " "), ("%27", "'"), ("%24", "$"), ("%2C", ","), ("%28", "("), ("%29", ")")]
            .iter()
            .fold(l.to_owned(), |l, (encoded, c)| l.replace(encoded, c))
    };
    proxy.lines().iter().filter(|l| l.starts_with("GET ")).map(|l| decode(l)).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_transaction_is_settled_by_one_query_whatever_it_does() {
    let Some(url) = endpoint() else { return };
    let direct = client(&url);
    let name = fresh_table(&direct, "Settle").await;
    let table = direct.table_client(name.clone());
    let pk = PartitionKey::new("dense").unwrap();
    let rk = |i: u32| format!("{i:05}");
    // Other entities on both sides of the transaction's keys, which the range leaves out.
    let outside: Vec<Entity> = [0, 1, 998, 999].iter().map(|&i| keyed("dense", &rk(i), 0)).collect();
    direct.table_client(name.clone()).bulk_write(BulkOperation::Insert, &outside, None).await.into_result().unwrap();

    // 100 inserts whose reply is lost: the first try landed, the retry is refused at operation 0.
    let proxy = Proxy::scripted(socket_of(&url), vec![Fault::CloseAfterForwarding], 0, 0, DELAY).await;
    let faulty = through(&proxy, &url).table_client(name.clone());
    let mut batch = faulty.batch(pk.clone());
    for i in 100..200 {
        batch.insert(&keyed("dense", &rk(i), 1)).unwrap();
    }
    let outcome = faulty.submit_transaction(&batch, None).await.expect("settled as written");
    assert!(outcome.etags.len() == 100 && outcome.etags.iter().all(Option::is_some));
    let methods = proxy.methods();
    assert_eq!((methods.get("POST"), methods.get("GET")), (Some(&2), Some(&1)), "{methods:?}");
    let read = &gets(&proxy)[0];
    assert!(read.contains("$filter=PartitionKey eq 'dense' and RowKey ge '00100' and RowKey le '00199'"), "{read}");
    assert!(!read.contains("$select"), "an insert is compared whole: {read}");
    let stored: Entity = table.get(&pk, &RowKey::new(rk(150)).unwrap(), None).await.unwrap();
    assert_eq!(outcome.etags[50].as_ref(), stored.etag());

    // 100 merges under the ETags just read, whose reply is lost: the retry's 412 is settled by one query of the
    // keys and the properties merged, and the ETags are those of the stored entities.
    let proxy = Proxy::scripted(socket_of(&url), vec![Fault::OperationTimedOut], 0, 0, DELAY).await;
    let faulty = through(&proxy, &url).table_client(name.clone());
    let mut batch = faulty.batch(pk.clone());
    for (i, etag) in (100..200).zip(&outcome.etags) {
        let merge = Entity::new(pk.clone(), RowKey::new(rk(i)).unwrap()).with("Merged".parse().unwrap(), true).unwrap();
        batch.update(&merge, UpdateMode::Merge, IfMatch::ETag(etag.clone().unwrap())).unwrap();
    }
    let merged = faulty.submit_transaction(&batch, None).await.expect("settled as written");
    let methods = proxy.methods();
    assert_eq!((methods.get("POST"), methods.get("GET")), (Some(&2), Some(&1)), "{methods:?}");
    let read = &gets(&proxy)[0];
    assert!(read.contains("$select=PartitionKey,RowKey,Merged&"), "{read}");
    let stored: Entity = table.get(&pk, &RowKey::new(rk(150)).unwrap(), None).await.unwrap();
    assert_eq!((stored.get::<bool>("Merged").unwrap(), stored.get::<i32>("Version").unwrap()), (true, 1));
    assert_eq!(merged.etags[50].as_ref(), stored.etag(), "the ETag read back with $select");

    // 100 deletes whose reply is lost: the retry's 404 is settled by one query of the keys alone.
    let proxy = Proxy::scripted(socket_of(&url), vec![Fault::CloseAfterForwarding], 0, 0, DELAY).await;
    let faulty = through(&proxy, &url).table_client(name.clone());
    let mut batch = faulty.batch(pk.clone());
    for i in 100..200 {
        batch.delete(&RowKey::new(rk(i)).unwrap(), IfMatch::Any).unwrap();
    }
    let deleted = faulty.submit_transaction(&batch, None).await.expect("settled as written");
    assert!(deleted.etags.iter().all(Option::is_none));
    let methods = proxy.methods();
    assert_eq!((methods.get("POST"), methods.get("GET")), (Some(&2), Some(&1)), "{methods:?}");
    assert!(gets(&proxy)[0].contains("$select=PartitionKey,RowKey"), "{}", gets(&proxy)[0]);
    let left: Vec<_> = stored_keys(&table).await;
    assert_eq!(left, ["00000", "00001", "00998", "00999"]);
    direct.delete_table(&name, None).await.unwrap();
}

/// The RowKeys of a table, read without the proxy.
async fn stored_keys(table: &TableClient) -> Vec<String> {
    stored(table).await.into_keys().map(|(_, rk)| rk).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_transaction_of_sparse_keys_is_settled_by_a_few_queries() {
    let Some(url) = endpoint() else { return };
    let direct = client(&url);
    let name = fresh_table(&direct, "Sparse").await;
    let table = direct.table_client(name.clone());
    // 30 keys, one in every 100 of a partition of 3,000: the range of the 30 holds 2,871 other entities.
    let rk = |i: u32| format!("{i:05}");
    let others: Vec<Entity> = (0..3000).filter(|i| i % 100 != 0).map(|i| keyed("wide", &rk(i), 0)).collect();
    table.bulk_write(BulkOperation::Insert, &others, None).await.into_result().unwrap();
    let proxy = Proxy::scripted(socket_of(&url), vec![Fault::CloseAfterForwarding], 0, 0, DELAY).await;
    let faulty = through(&proxy, &url).table_client(name.clone());
    let mut batch = faulty.batch(PartitionKey::new("wide").unwrap());
    for i in (0..3000).step_by(100) {
        batch.insert(&keyed("wide", &rk(i), 1)).unwrap();
    }
    let outcome = faulty.submit_transaction(&batch, None).await.expect("settled as written");
    assert!(outcome.etags.len() == 30 && outcome.etags.iter().all(Option::is_some));
    // One page of the range finds 10 of the 30 among 1,000 entities: the other 20 are read 14 to a query.
    let gets = gets(&proxy);
    assert_eq!(gets.len(), 3, "{gets:#?}");
    assert!(gets[0].contains("RowKey ge '00000' and RowKey le '02900'"), "{}", gets[0]);
    assert!(gets[1].contains("(RowKey eq '01000' or RowKey eq '01100' or "), "{}", gets[1]);
    assert_eq!(gets[1].matches("RowKey eq").count(), 14);
    assert_eq!(gets[2].matches("RowKey eq").count(), 6);
    assert_eq!(stored(&table).await.len(), 3000);
    direct.delete_table(&name, None).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transaction_refused_after_a_lost_try_is_never_a_plain_conflict_or_a_silent_success() {
    let Some(url) = endpoint() else { return };
    let direct = client(&url);
    let name = fresh_table(&direct, "TxUnknown").await;
    let table = direct.table_client(name.clone());
    // Another writer's entity holds one of the keys; our first try never reaches the service.
    table.insert(&keyed("p", "00005", 9), None).await.unwrap();
    let proxy = Proxy::scripted(socket_of(&url), vec![Fault::CloseBeforeForwarding], 0, 0, DELAY).await;
    let faulty = through(&proxy, &url).table_client(name.clone());
    let mut batch = faulty.batch(PartitionKey::new("p").unwrap());
    for i in 0..20 {
        batch.insert(&keyed("p", &format!("{i:05}"), 1)).unwrap();
    }
    let err = faulty.submit_transaction(&batch, None).await.unwrap_err();
    let ErrorKind::OutcomeUnknown(unknown) = err.kind() else { panic!("expected OutcomeUnknown, got {err}") };
    assert_eq!((unknown.operation(), unknown.answer().status()), ("transaction", 409));
    assert_eq!(unknown.reason(), "the entity with RowKey \"00000\" read back is not as the transaction leaves it");
    assert_eq!(proxy.methods().get("GET"), Some(&1));
    assert_eq!(stored_keys(&table).await, ["00005"]);
    direct.delete_table(&name, None).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_insert_refused_after_a_lost_try_is_never_a_plain_conflict_or_a_silent_success() {
    let Some(url) = endpoint() else { return };
    let direct = client(&url);
    let name = fresh_table(&direct, "Unknown").await;
    let table = direct.table_client(name.clone());
    // Another writer's entity is there; our first try never reaches the service, but the client cannot know.
    table.insert(&entity(1, 1), None).await.unwrap();
    let proxy = Proxy::scripted(socket_of(&url), vec![Fault::CloseBeforeForwarding], 0, 0, DELAY).await;
    let faulty = through(&proxy, &url).table_client(name.clone());
    let err = faulty.insert(&entity(1, 5), None).await.unwrap_err();
    let ErrorKind::OutcomeUnknown(unknown) = err.kind() else { panic!("expected OutcomeUnknown, got {err}") };
    assert_eq!(unknown.operation(), "insert");
    assert_eq!(unknown.answer().status(), 409);
    let expected =
        format!("table `{name}`, PartitionKey \"p1\", RowKey \"000001\": the outcome of the insert is unknown");
    assert!(err.to_string().starts_with(&expected), "{err}");

    // Without a lost try, the same insert is a plain conflict.
    let err = table.insert(&entity(1, 5), None).await.unwrap_err();
    assert_eq!(err.error_code(), Some(table_model::ErrorCode::EntityAlreadyExists));
    direct.delete_table(&name, None).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn busy_answers_are_retried_and_other_client_errors_are_not() {
    let Some(url) = endpoint() else { return };
    let direct = client(&url);
    let name = fresh_table(&direct, "Busy").await;
    let proxy = Proxy::scripted(socket_of(&url), vec![Fault::ServerBusy, Fault::ServerBusy], 0, 0, DELAY).await;
    let faulty = through(&proxy, &url).table_client(name.clone());
    faulty.insert(&entity(3, 1), None).await.expect("retried after the two 503s");
    assert_eq!(proxy.counts().get(&Fault::ServerBusy), Some(&2));
    // A 409 is not retried: one request.
    let before = proxy.counts().get(&Fault::None).copied().unwrap_or(0);
    let err = faulty.insert(&entity(3, 1), None).await.unwrap_err();
    assert_eq!(err.status(), Some(409));
    assert_eq!(proxy.counts().get(&Fault::None).copied().unwrap_or(0), before + 1, "a 4xx was retried");
    direct.delete_table(&name, None).await.unwrap();
}

/// A proxy in front of Azurite at `url` whose requests meet `script`, one fault each, in turn.
async fn scripted(url: &str, script: Vec<Fault>) -> Proxy {
    Proxy::scripted(socket_of(url), script, 0, 0, DELAY).await
}

/// A table of its own for one group of a fault run, made directly: the client, the table's name, its client.
async fn own_table(url: &str, prefix: &str) -> (TableServiceClient, TableName, TableClient) {
    let direct = client(url);
    let name = fresh_table(&direct, prefix).await;
    let table = direct.table_client(name.clone());
    (direct, name, table)
}

/// One of each operation the bulk and write tests above do not cover, each meeting `fault` on its first try (or,
/// for paging, on every second page), and each checked against what Azurite holds: the table's life and the
/// account's settings. Each group of [`every_operation_meets_every_fault`] has a table of its own, so the groups
/// of a fault run side by side (a `Delay` holds each operation past the per-try timeout: one after another, the
/// operations of one fault took 46 s).
async fn table_and_account_operations_survive(url: String, fault: Fault) {
    let url = url.as_str();
    let direct = client(url);
    let name = unique_table_name("Each");

    // Create the table: a retry after a lost reply finds it made, which is what was asked.
    let proxy = scripted(url, vec![fault]).await;
    through(&proxy, url).create_table(&name, None).await.unwrap_or_else(|e| panic!("{fault:?}: create: {e}"));
    assert_eq!(proxy.counts().get(&fault), Some(&1), "{fault:?}: the fault was met");
    assert!(!direct.table_client(name.clone()).create_table_if_not_exists(None).await.unwrap(), "{fault:?}");

    // Between the create and the delete, four checks that do not depend on one another, side by side (one after
    // another, a `Delay` held them 12 s).
    let name = &name;
    // Listing tables, filtered to this one.
    let list = async {
        let proxy = scripted(url, vec![fault]).await;
        let only = Query::new().filter(table_model::filter::Filter::property("TableName").eq(name.as_str()));
        let tables: Vec<TableName> =
            through(&proxy, url).list_tables(&only, None).unwrap().try_collect().await.unwrap();
        assert_eq!(tables, std::slice::from_ref(name), "{fault:?}: list_tables");
    };
    // The table's stored access policies: a PUT that replaces them all, then a GET, each through a fault.
    let policies = async {
        let hour = chrono::Duration::hours(1);
        let at = chrono::DateTime::from_timestamp(chrono::Utc::now().timestamp(), 0).expect("now is in range");
        let policies = [SignedIdentifier::new(
            PolicyId::new("faults").unwrap(),
            AccessPolicy::new(TableSasPermissions::READ).with_start(at - hour).with_expiry(at + hour),
        )];
        let proxy = scripted(url, vec![fault]).await;
        through(&proxy, url).table_client(name.clone()).set_access_policy(&policies, None).await.unwrap();
        assert_eq!(proxy.counts().get(&fault), Some(&1), "{fault:?}: set_access_policy met the fault");
        let proxy = scripted(url, vec![fault]).await;
        let read = through(&proxy, url).table_client(name.clone()).get_access_policy(None).await.unwrap();
        assert_eq!(read, policies, "{fault:?}: get_access_policy");
    };
    // The account's service properties (the same value from every run, so concurrent runs agree).
    let properties = async {
        let logging =
            ServiceProperties::new().with_logging(AnalyticsLogging::new(RetentionPolicy::Days(3)).with_read(true));
        let proxy = scripted(url, vec![fault]).await;
        through(&proxy, url).set_service_properties(&logging, None).await.unwrap();
        assert_eq!(proxy.counts().get(&fault), Some(&1), "{fault:?}: set_service_properties met the fault");
        let proxy = scripted(url, vec![fault]).await;
        let read = through(&proxy, url).get_service_properties(None).await.unwrap();
        assert_eq!(read.logging, logging.logging, "{fault:?}: get_service_properties");
    };
    // The secondary's statistics.
    let stats = async {
        let proxy = scripted(url, vec![fault]).await;
        let stats = through(&proxy, url).get_service_stats(None).await.unwrap();
        assert_eq!(stats.geo_replication.map(|g| g.status), Some(GeoReplicationStatus::Live), "{fault:?}: stats");
    };
    tokio::join!(list, policies, properties, stats);

    // Delete the table: a retry after a lost reply finds it gone, which is what was asked.
    let proxy = scripted(url, vec![fault]).await;
    through(&proxy, url).delete_table(name, None).await.unwrap_or_else(|e| panic!("{fault:?}: delete: {e}"));
    assert_eq!(proxy.counts().get(&fault), Some(&1));
    assert!(!direct.delete_table_if_exists(name, None).await.unwrap(), "{fault:?}: the table survived");
}

/// Point reads (an entity, a missing one, a reload) and an upsert, each meeting `fault` on its first try.
async fn point_operations_survive(url: String, fault: Fault) {
    let url = url.as_str();
    let (direct, name, table) = own_table(url, "Point").await;

    let first = entity(1, 1);
    table.insert(&first, None).await.unwrap();
    let (pk, rk) = (first.partition_key().clone(), first.row_key().clone());
    let proxy = scripted(url, vec![fault]).await;
    let got: Entity = through(&proxy, url).table_client(name.clone()).get(&pk, &rk, None).await.unwrap();
    assert!(same_properties(&got, &first), "{fault:?}: get read {got:?}");
    let proxy = scripted(url, vec![fault]).await;
    let faulty = through(&proxy, url).table_client(name.clone());
    let missing = faulty.try_get::<Entity>(&pk, &"none".parse().unwrap(), None).await.unwrap();
    assert!(missing.is_none(), "{fault:?}: try_get");
    let proxy = scripted(url, vec![fault]).await;
    let reloaded = through(&proxy, url).table_client(name.clone()).reload(&got, None).await.unwrap();
    assert_eq!(reloaded.etag(), got.etag(), "{fault:?}: reload");

    // An upsert: idempotent, so a retry leaves what one write leaves.
    let proxy = scripted(url, vec![fault]).await;
    let newer = entity(1, 7);
    through(&proxy, url).table_client(name.clone()).upsert(&newer, UpdateMode::Replace, None).await.unwrap();
    let stored_now: Entity = table.get(&pk, &rk, None).await.unwrap();
    assert!(same_properties(&stored_now, &newer), "{fault:?}: upsert stored {stored_now:?}");
    direct.delete_table(&name, None).await.unwrap();
}

/// Paging, decoded and raw, with `fault` on every second page, and a scan plan whose probes meet it. The four
/// reads only read, each through a proxy of its own: they go side by side (one after another, a `Delay` held
/// them 26 s, the critical path of [`every_operation_meets_every_fault`]).
async fn paging_and_planning_survive(url: String, fault: Fault) {
    let url = url.as_str();
    let (direct, name, table) = own_table(url, "Pages").await;

    // 23 entities in pages of 5, a fault on each page after the first; every entity once, in order. The script
    // holds the 4 faults and no more: a try that outlives the per-try timeout on a loaded machine takes a
    // scripted answer of its own, and a fifth fault at the script's end would then be met by the last retry.
    table.insert(&entity(1, 7), None).await.unwrap();
    let mut batch = table.batch(PartitionKey::new("p0").unwrap());
    for i in 1..=22 {
        batch.insert(&entity(i * 10, 1)).unwrap();
    }
    table.submit_transaction(&batch, None).await.unwrap();
    let expected: Vec<_> = stored(&table).await.into_keys().collect();
    assert_eq!(expected.len(), 23);
    let expected = &expected;
    let name = &name;
    let decoded = async {
        let proxy = scripted(url, [Fault::None, fault].repeat(4)).await;
        let faulty = through(&proxy, url).table_client(name.clone());
        let read: Vec<Entity> = faulty.query(&Query::new().top(5), None).unwrap().try_collect().await.unwrap();
        let read: Vec<_> = read.iter().map(keys).collect();
        assert_eq!(&read, expected, "{fault:?}: paging lost or repeated entities");
        assert_eq!(proxy.counts().get(&fault), Some(&4), "{fault:?}: a fault on each of pages 2 to 5");
    };
    // The same pages undecoded (`query_raw`, what the SQL scan reads): each body decodes to its page's entities.
    let raw = async {
        let proxy = scripted(url, [Fault::None, fault].repeat(4)).await;
        let faulty = through(&proxy, url).table_client(name.clone());
        let pages: Vec<_> = faulty.query_raw(&Query::new().top(5), None).unwrap().try_collect().await.unwrap();
        let read = keys_of_pages(&pages);
        assert_eq!(&read, expected, "{fault:?}: raw paging lost or repeated entities");
        assert_eq!(proxy.counts().get(&fault), Some(&4), "{fault:?}: a fault on each raw page 2 to 5");
    };
    // And read ahead (`RawPages::read_ahead`, what the transfer's ranges and the SQL scan read): each next page's
    // request, on a task of its own, meets the fault and is retried there.
    let ahead = async {
        let proxy = scripted(url, [Fault::None, fault].repeat(4)).await;
        let faulty = through(&proxy, url).table_client(name.clone());
        let pages: Vec<_> =
            faulty.query_raw(&Query::new().top(5), None).unwrap().read_ahead().try_collect().await.unwrap();
        let read = keys_of_pages(&pages);
        assert_eq!(&read, expected, "{fault:?}: pages read ahead lost or repeated entities");
        assert_eq!(proxy.counts().get(&fault), Some(&4), "{fault:?}: a fault on each page read ahead, 2 to 5");
    };
    // A scan plan: its keys-only probes meet the fault, and the planned ranges still cover every entity once.
    let plan = async {
        let proxy = scripted(url, vec![fault]).await;
        let two = std::num::NonZeroUsize::new(2).expect("not zero");
        let plan = through(&proxy, url).table_client(name.clone()).plan_ranges(two, None, None).await.unwrap();
        assert_eq!(proxy.counts().get(&fault), Some(&1), "{fault:?}: plan_ranges met the fault");
        let scanned = keys_in_ranges(&table, &plan).await;
        assert_eq!(&scanned, expected, "{fault:?}: the ranges of {plan:?} lost or repeated entities");
    };
    tokio::join!(decoded, raw, ahead, plan);
    direct.delete_table(name, None).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_operation_meets_every_fault() {
    let Some(url) = endpoint() else { return };
    let faults = [
        Fault::CloseBeforeForwarding,
        Fault::CloseAfterForwarding,
        Fault::ServerBusy,
        Fault::OperationTimedOut,
        Fault::Delay,
    ];
    let mut runs = Vec::new();
    for fault in faults {
        runs.push(tokio::spawn(table_and_account_operations_survive(url.clone(), fault)));
        runs.push(tokio::spawn(point_operations_survive(url.clone(), fault)));
        runs.push(tokio::spawn(paging_and_planning_survive(url.clone(), fault)));
    }
    for run in runs {
        run.await.expect("no fault run panicked");
    }
}

/// The range planner past what it reads page by page: with a budget of 6 requests it reads 3 pages of keys
/// (3,000) of a table of 4,000, then probes the rest of the key space. Every probe (and the pages before them)
/// meets a fault first; the plan is the one made without faults, and its ranges hold every entity once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_planner_s_probes_under_faults_plan_what_they_plan_without() {
    let Some(url) = endpoint() else { return };
    let seed = seed(0x5EED_0003);
    let direct = client(&url);
    let name = fresh_table(&direct, "Probes").await;
    let table = direct.table_client(name.clone());
    const N: u32 = 4_000;
    let report = table.bulk_write(BulkOperation::Insert, (0..N).map(|i| entity(i, 1)), None).await;
    assert_eq!(report.into_result().unwrap(), u64::from(N));
    let expected: Vec<_> = stored(&table).await.into_keys().collect();

    let four = std::num::NonZeroUsize::new(4).expect("not zero");
    let options = || Some(PlanOptions { max_requests: 6, ..Default::default() });
    let expected = &expected;
    // One after another, then side by side: two plans of the same table, read only, each through a proxy of its
    // own, so they go at once (one after the other, the proxies' `Delay`s held them 18 s).
    let one_after_another = async {
        let without = table.plan_ranges(four, None, options()).await.unwrap();
        // Each request fails once, one kind of fault after the other, then is answered (and the seed's 10% after).
        let script: Vec<Fault> = [
            Fault::CloseBeforeForwarding,
            Fault::ServerBusy,
            Fault::CloseAfterForwarding,
            Fault::OperationTimedOut,
            Fault::Delay,
        ]
        .into_iter()
        .cycle()
        .take(12)
        .flat_map(|fault| [fault, Fault::None])
        .collect();
        let proxy = Proxy::scripted(socket_of(&url), script, seed, 100, DELAY).await;
        let faulty = through(&proxy, &url).table_client(name.clone());
        let with = faulty.plan_ranges(four, None, options()).await.unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        assert_eq!(with, without, "seed {seed}: the faults changed the plan");
        let probes = proxy.lines().iter().filter(|l| l.contains("%24top=1&") || l.contains("$top=1&")).count();
        assert!(probes >= 2, "seed {seed}: no probe was sent: {:?}", proxy.lines());
        let faults: u64 = proxy.counts().iter().filter(|(f, _)| **f != Fault::None).map(|(_, n)| n).sum();
        assert!(faults >= 5, "seed {seed}: {:?}", proxy.counts());

        let scanned = keys_in_ranges(&table, &with).await;
        assert_eq!(&scanned, expected, "seed {seed}: the ranges of {with:?} lost or repeated entities");
    };
    let side_by_side_after_a_page = async {
        // Side by side, after the first page's keys (as a scan plans after its first page): the probes go 4 at
        // once, in rounds, through the same faults, and plan what they plan without.
        let first: Vec<KeyPosition> = expected
            .iter()
            .take(1_000)
            .map(|(pk, rk)| {
                KeyPosition::new(PartitionKey::new(pk.as_str()).unwrap(), RowKey::new(rk.as_str()).unwrap())
            })
            .collect();
        let side_by_side = || Some(PlanOptions::side_by_side(four));
        let without = table.plan_ranges_after(four, None, first.clone(), side_by_side()).await.unwrap();
        let script: Vec<Fault> =
            [Fault::CloseBeforeForwarding, Fault::ServerBusy, Fault::CloseAfterForwarding, Fault::Delay]
                .into_iter()
                .cycle()
                .take(16)
                .collect();
        let proxy = Proxy::scripted(socket_of(&url), script, seed, 100, DELAY).await;
        let faulty = through(&proxy, &url).table_client(name.clone());
        let with = faulty
            .plan_ranges_after(four, None, first, side_by_side())
            .await
            .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        assert_eq!(with, without, "seed {seed}: the faults changed the plan side by side");
        assert_eq!(with.len(), 4, "seed {seed}: {with:?}");
        let faults: u64 = proxy.counts().iter().filter(|(f, _)| **f != Fault::None).map(|(_, n)| n).sum();
        assert!(faults >= 8, "seed {seed}: {:?}", proxy.counts());
        let scanned = keys_in_ranges(&table, &with).await;
        assert_eq!(&scanned, expected, "seed {seed}: the ranges of {with:?} lost or repeated entities");
    };
    tokio::join!(one_after_another, side_by_side_after_a_page);
}

/// The keys of entity `i`.
fn keys_of(i: u32) -> (String, String) {
    keys(&entity(i, 1))
}

/// The engine of filtered writes (SQL's `DELETE` and `UPDATE`, `tablectl delete`) under 10% faults, in key
/// ranges side by side: every entity the filter selects is updated, or deleted, exactly once; an entity changed
/// by someone else between the engine's read and its write is reported and left as that one wrote it; no other
/// entity is touched. The updates and the deletes go on two tables at once, each through a proxy of its own, so
/// that the waits of their faults overlap.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filtered_updates_and_deletes_under_faults_touch_each_selected_entity_once() {
    let Some(url) = endpoint() else { return };
    let seed = seed(0x5EED_0DE1);
    let updates = tokio::spawn(filtered_updates_under_faults(url.clone(), seed));
    let deletes = tokio::spawn(filtered_deletes_under_faults(url, seed.wrapping_add(1)));
    for part in [updates.await, deletes.await] {
        part.unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()));
    }
}

/// Entities of the filtered writes' tables.
const MATCHED: u32 = 1_200;

/// Every 25th entity is changed behind the engine's back, after its read.
fn meddled(i: u32) -> bool {
    i.is_multiple_of(25)
}

/// A table of [`MATCHED`] entities, a proxy of 10% faults in front of it, the table through the proxy, and 4 key
/// ranges planned through it.
async fn matched_table(
    url: &str,
    name: &str,
    seed: u64,
) -> (TableServiceClient, TableName, Proxy, TableClient, Vec<table_model::client::RangeCursor>) {
    let direct = client(url);
    let name = fresh_table(&direct, name).await;
    let table = direct.table_client(name.clone());
    let report = table.bulk_write(BulkOperation::Insert, (0..MATCHED).map(|i| entity(i, 1)), None).await;
    assert!(report.is_complete());
    let proxy = Proxy::start(socket_of(url), seed, 100, DELAY).await;
    let faulty = through(&proxy, url).table_client(name.clone());
    let ranges = faulty
        .plan_ranges(std::num::NonZeroUsize::new(4).unwrap(), None, None)
        .await
        .expect("plan")
        .into_iter()
        .map(table_model::client::RangeCursor::new)
        .collect();
    (direct, name, proxy, faulty, ranges)
}

/// Changes `entity` in `table` (directly) if it is one of those [`meddled`] with.
fn meddle(table: &TableClient, entity: &Entity) {
    let i: u32 = entity.row_key().as_str().parse().expect("a number");
    if meddled(i) {
        let mut changed = entity.clone();
        changed.insert("Version".parse().unwrap(), 99).unwrap();
        tokio::task::block_in_place(|| {
            tokio::runtime::Handle::current()
                .block_on(async { table.upsert(&changed, UpdateMode::Replace, None).await.expect("meddle") })
        });
    }
}

/// The keys of the entities a filtered write reported changed by someone else, sorted.
fn changed_keys(report: &table_model::client::MatchReport) -> Vec<(String, String)> {
    let mut changed: Vec<(String, String)> =
        report.changed.iter().map(|(p, r)| (p.to_string(), r.to_string())).collect();
    changed.sort();
    changed
}

/// The even entities (Flag = true) updated to version 2, some changed by another writer meanwhile.
async fn filtered_updates_under_faults(url: String, seed: u64) {
    use table_model::client::{DecideError, MatchWrite};
    use table_model::filter::Filter;
    let (direct, name, proxy, faulty, ranges) = matched_table(&url, "MatchUpdate", seed).await;
    let table = direct.table_client(name.clone());
    let start = Instant::now();
    let even = Query::new().filter(Filter::property("Flag").eq(true));
    let bump = |page: Vec<Entity>| -> Result<Vec<Entity>, DecideError> {
        Ok(page
            .into_iter()
            .map(|mut e| {
                meddle(&table, &e);
                e.insert("Version".parse().unwrap(), 2).unwrap();
                e
            })
            .collect())
    };
    let report = faulty.write_matching(MatchWrite::Update(UpdateMode::Replace), &even, ranges, bump, None).await;
    phase(&proxy, "update matching", start, &mut BTreeMap::new());
    let mut expected: Vec<(String, String)> = (0..MATCHED).filter(|i| i % 2 == 0 && meddled(*i)).map(keys_of).collect();
    expected.sort();
    assert!(
        report.failures.is_empty() && report.stopped.is_empty(),
        "seed {seed}: {:?}",
        report.failures.first().map(|f| f.to_string())
    );
    assert_eq!((report.read, report.matched), (u64::from(MATCHED / 2), u64::from(MATCHED / 2)), "seed {seed}");
    let changed = changed_keys(&report);
    assert_eq!(changed, expected, "seed {seed}: the entities changed meanwhile");
    assert_eq!(report.written as usize + changed.len(), MATCHED as usize / 2, "seed {seed}");
    let contents = stored(&table).await;
    assert_eq!(contents.len(), MATCHED as usize);
    for i in 0..MATCHED {
        let got = &contents[&keys_of(i)];
        let version = match (i % 2 == 0, meddled(i)) {
            (true, true) => 99,
            (true, false) => 2,
            (false, _) => 1,
        };
        assert_eq!(got.get::<i32>("Version").unwrap(), version, "seed {seed}: entity {i}");
        assert!(same_properties(&entity(i, version), got), "seed {seed}: entity {i} differs: {got:?}");
    }
    direct.delete_table(&name, None).await.unwrap();
}

/// The odd entities (Flag = false) deleted, some changed by another writer meanwhile; then, on the keys-only
/// path, every entity left.
async fn filtered_deletes_under_faults(url: String, seed: u64) {
    use table_model::client::{DecideError, MatchWrite};
    use table_model::filter::Filter;
    let (direct, name, proxy, faulty, ranges) = matched_table(&url, "MatchDelete", seed).await;
    let table = direct.table_client(name.clone());
    let mut seen = BTreeMap::new();
    let start = Instant::now();
    let odd = Query::new().filter(Filter::property("Flag").eq(false));
    let keep_and_meddle = |page: Vec<Entity>| -> Result<Vec<Entity>, DecideError> {
        page.iter().for_each(|e| meddle(&table, e));
        Ok(page)
    };
    let report = faulty.write_matching(MatchWrite::Delete, &odd, ranges.clone(), keep_and_meddle, None).await;
    phase(&proxy, "delete matching", start, &mut seen);
    assert!(report.failures.is_empty() && report.stopped.is_empty(), "seed {seed}");
    let mut meddled_odd: Vec<(String, String)> =
        (0..MATCHED).filter(|i| i % 2 == 1 && meddled(*i)).map(keys_of).collect();
    meddled_odd.sort();
    assert_eq!(changed_keys(&report), meddled_odd, "seed {seed}: the entities meddled with are left");
    assert_eq!(report.written as usize, MATCHED as usize / 2 - meddled_odd.len(), "seed {seed}");
    let contents = stored(&table).await;
    assert_eq!(
        contents.len(),
        MATCHED as usize / 2 + meddled_odd.len(),
        "seed {seed}: exactly the odd entities are gone"
    );
    for (k, e) in &contents {
        let i: u32 = k.1.parse().unwrap();
        let version = e.get::<i32>("Version").unwrap();
        assert!(
            (i.is_multiple_of(2) && version == 1) || (meddled(i) && version == 99),
            "seed {seed}: entity {i}, version {version}"
        );
    }

    // The keys-only path: every entity left goes, each once.
    let start = Instant::now();
    let report = faulty.delete_matching(&Query::new(), ranges, None).await;
    phase(&proxy, "delete all", start, &mut seen);
    assert!(report.is_complete(), "seed {seed}: {:?}", report.failures.first().map(|f| f.to_string()));
    assert_eq!(report.written as usize, contents.len(), "seed {seed}");
    assert!(stored(&table).await.is_empty(), "seed {seed}");
    direct.delete_table(&name, None).await.unwrap();
}
