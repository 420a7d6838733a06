//! The client's spans, as a user sees them: a tracer provider from `azure_core_opentelemetry` over
//! OpenTelemetry's SDK with its in-memory exporter, set in the client's `ClientOptions`, against a real Azurite
//! (and, for the bulk write, the fault-injecting proxy in front of it).
//!
//! Run with `bash scripts/azurite.sh run cargo test --test tracing`; without `TABLE_MODEL_AZURITE_ENDPOINT`
//! the tests are skipped (and fail when `CI` is set).

use azure_core_opentelemetry::OpenTelemetryTracerProvider;
use chrono::{Duration, Utc};
use futures::TryStreamExt as _;
use opentelemetry::trace::{SpanId, SpanKind, Status};
use opentelemetry::Value;
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use std::collections::HashMap;
use std::sync::Arc;
use table_model::client::azure_core;
use table_model::client::azure_core::http::{
    ClientOptions, ExponentialRetryOptions, InstrumentationOptions, RetryOptions,
};
use table_model::client::trace as attr;
use table_model::client::{BulkOperation, BulkOptions, TableCredential, TableServiceClient, TableServiceClientOptions};
use table_model::sas::{TableSas, TableSasPermissions};
use table_model::{AccountKey, Endpoint, Entity, PartitionKey, Query, RowKey, TableName};
use table_model_test_utils::faults::{client, fresh_table, socket_of, DELAY, TRY_TIMEOUT};
use table_model_test_utils::proxy::{Fault, Proxy};

/// The Azurite development account's key: no attribute may hold it.
const DEV_KEY: &str = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

fn endpoint() -> Option<String> {
    table_model_test_utils::azurite::endpoint_or_skip(
        "tracing tests",
        "scripts/azurite.sh run cargo test -p table-model-suite --test tracing",
    )
}

/// A recording tracer provider and what it exported.
struct Recorder {
    exporter: InMemorySpanExporter,
    provider: SdkTracerProvider,
}

impl Recorder {
    fn new() -> Self {
        let exporter = InMemorySpanExporter::default();
        let provider = SdkTracerProvider::builder().with_simple_exporter(exporter.clone()).build();
        Recorder { exporter, provider }
    }

    /// Client options that trace into this recorder, with the fault suite's fast retries.
    fn options(&self) -> TableServiceClientOptions {
        let retry = ExponentialRetryOptions {
            initial_delay: azure_core::time::Duration::milliseconds(20),
            max_retries: 12,
            max_total_elapsed: azure_core::time::Duration::seconds(120),
            max_delay: azure_core::time::Duration::seconds(1),
        };
        TableServiceClientOptions {
            client_options: ClientOptions {
                retry: RetryOptions::exponential(retry),
                instrumentation: InstrumentationOptions {
                    tracer_provider: Some(OpenTelemetryTracerProvider::new(Arc::new(self.provider.clone()))),
                },
                ..Default::default()
            },
            try_timeout: Some(TRY_TIMEOUT),
            ..Default::default()
        }
    }

    fn client(&self, url: &str, credential: impl Into<TableCredential>) -> TableServiceClient {
        TableServiceClient::new(url, credential, Some(self.options())).expect("a valid endpoint")
    }

    /// The spans ended so far, in the order they ended, and forgets them.
    fn take(&self) -> Vec<SpanData> {
        let spans = self.exporter.get_finished_spans().expect("the exporter is up");
        self.exporter.reset();
        spans
    }
}

fn attribute<'a>(span: &'a SpanData, key: &str) -> Option<&'a Value> {
    span.attributes.iter().find(|kv| kv.key.as_str() == key).map(|kv| &kv.value)
}

fn string(span: &SpanData, key: &str) -> Option<String> {
    attribute(span, key).map(|v| v.as_str().into_owned())
}

fn int(span: &SpanData, key: &str) -> Option<i64> {
    match attribute(span, key) {
        Some(Value::I64(i)) => Some(*i),
        _ => None,
    }
}

fn children<'a>(spans: &'a [SpanData], parent: &SpanData) -> Vec<&'a SpanData> {
    let id = parent.span_context.span_id();
    spans
        .iter()
        .filter(|s| s.parent_span_id == id && s.span_context.trace_id() == parent.span_context.trace_id())
        .collect()
}

fn named<'a>(spans: &'a [SpanData], name: &str) -> Vec<&'a SpanData> {
    spans.iter().filter(|s| s.name == name).collect()
}

/// The attributes every call span carries.
fn assert_call_span(span: &SpanData, url: &str, table: Option<&TableName>) {
    assert_eq!(span.span_kind, SpanKind::Internal, "{}", span.name);
    assert_eq!(span.parent_span_id, SpanId::INVALID, "{} is a root span", span.name);
    assert_eq!(string(span, attr::AZ_NAMESPACE).as_deref(), Some("Microsoft.Storage"), "{}", span.name);
    let addr = socket_of(url);
    assert_eq!(string(span, "server.address"), Some(addr.ip().to_string()), "{}", span.name);
    assert_eq!(int(span, "server.port"), Some(i64::from(addr.port())), "{}", span.name);
    assert_eq!(string(span, attr::TABLE).as_deref(), table.map(TableName::as_str), "{}", span.name);
}

/// The attributes every try's span carries, and its status.
fn assert_request_span(span: &SpanData, method: &str, status: u16) {
    assert_eq!(span.span_kind, SpanKind::Client);
    assert_eq!(span.name, method);
    assert_eq!(string(span, "http.request.method").as_deref(), Some(method));
    assert_eq!(string(span, attr::AZ_NAMESPACE).as_deref(), Some("Microsoft.Storage"));
    assert_eq!(int(span, attr::HTTP_STATUS), Some(i64::from(status)), "{span:?}");
    let request_id = string(span, attr::AZ_SERVICE_REQUEST_ID).expect("the service's request id");
    assert!(!request_id.is_empty());
    assert!(string(span, attr::AZ_CLIENT_REQUEST_ID).is_some_and(|id| !id.is_empty()));
    assert!(string(span, "url.full").is_some_and(|u| u.starts_with("http://127.0.0.1:")));
}

fn entity(pk: &str, rk: &str) -> Entity {
    let e = Entity::new(PartitionKey::new(pk).expect("valid"), RowKey::new(rk).expect("valid"));
    e.with("Note".parse().unwrap(), format!("{pk}/{rk} é")).unwrap()
}

#[tokio::test]
async fn a_point_read_is_a_call_span_over_one_request_span() {
    let Some(url) = endpoint() else { return };
    let recorder = Recorder::new();
    let direct = client(&url);
    let name = fresh_table(&direct, "TraceGet").await;
    direct.table_client(name.clone()).insert(&entity("p", "r"), None).await.unwrap();

    let table = recorder.client(&url, AccountKey::development()).table_client(name.clone());
    let read: Entity = table.get(&"p".parse().unwrap(), &"r".parse().unwrap(), None).await.unwrap();
    assert_eq!(read.row_key().as_str(), "r");

    let spans = recorder.take();
    assert_eq!(spans.len(), 2, "{spans:#?}");
    let call = named(&spans, "Storage.Tables.TableClient.get");
    assert_eq!(call.len(), 1);
    let call = call[0];
    assert_call_span(call, &url, Some(&name));
    assert_eq!(call.status, Status::Unset);
    assert_eq!(string(call, attr::ERROR_TYPE), None);
    assert_eq!(int(call, attr::TRIES), Some(1));
    let requests = children(&spans, call);
    assert_eq!(requests.len(), 1, "the request span is the call span's child");
    assert_request_span(requests[0], "GET", 200);
    assert_eq!(int(requests[0], attr::HTTP_RESEND_COUNT), None, "one try");
    assert!(string(requests[0], "url.full").unwrap().contains(&format!("/{name}(PartitionKey='p',RowKey='r')")));
    direct.delete_table(&name, None).await.unwrap();
}

#[tokio::test]
async fn a_read_refused_with_404_says_so_on_both_spans() {
    let Some(url) = endpoint() else { return };
    let recorder = Recorder::new();
    let direct = client(&url);
    let name = fresh_table(&direct, "Trace404").await;

    let table = recorder.client(&url, AccountKey::development()).table_client(name.clone());
    let err = table.get::<Entity>(&"p".parse().unwrap(), &"missing".parse().unwrap(), None).await.unwrap_err();
    assert!(err.is_not_found());
    // `try_get` turns the 404 into `None`: its span is not a failure, its request's is.
    assert!(table.try_get::<Entity>(&"p".parse().unwrap(), &"missing".parse().unwrap(), None).await.unwrap().is_none());

    let spans = recorder.take();
    assert_eq!(spans.len(), 4, "{spans:#?}");
    let call = named(&spans, "Storage.Tables.TableClient.get")[0];
    assert_call_span(call, &url, Some(&name));
    assert_eq!(string(call, attr::ERROR_TYPE).as_deref(), Some("404"));
    // As azure_core's own call spans: a client error is not the span's error status, a server error would be.
    assert_eq!(call.status, Status::Unset);
    let request = children(&spans, call);
    assert_eq!(request.len(), 1);
    assert_request_span(request[0], "GET", 404);
    assert_eq!(string(request[0], attr::ERROR_TYPE).as_deref(), Some("404"));
    assert!(matches!(request[0].status, Status::Error { .. }));

    let quiet = named(&spans, "Storage.Tables.TableClient.try_get")[0];
    assert_eq!(string(quiet, attr::ERROR_TYPE), None);
    let request = children(&spans, quiet);
    assert_eq!(request.len(), 1);
    assert_request_span(request[0], "GET", 404);
    direct.delete_table(&name, None).await.unwrap();
}

#[tokio::test]
async fn a_paged_query_has_a_span_per_page() {
    let Some(url) = endpoint() else { return };
    let recorder = Recorder::new();
    let direct = client(&url);
    let name = fresh_table(&direct, "TracePages").await;
    for rk in ["a", "b", "c", "d", "e"] {
        direct.table_client(name.clone()).insert(&entity("p", rk), None).await.unwrap();
    }

    let table = recorder.client(&url, AccountKey::development()).table_client(name.clone());
    let all: Vec<Entity> = table.query(&Query::new().top(2), None).unwrap().try_collect().await.unwrap();
    assert_eq!(all.len(), 5);

    let spans = recorder.take();
    let pages = named(&spans, "Storage.Tables.TableClient.query");
    assert_eq!(pages.len(), 3, "pages of 2, 2 and 1: {spans:#?}");
    assert_eq!(spans.len(), 6, "a page span and its request span per page");
    for page in &pages {
        assert_call_span(page, &url, Some(&name));
        let requests = children(&spans, page);
        assert_eq!(requests.len(), 1);
        assert_request_span(requests[0], "GET", 200);
        // The query's parameters are not shown: the filter may hold data.
        assert!(string(requests[0], "url.full").unwrap().contains("%24top=REDACTED"), "{:?}", requests[0]);
    }
    let traces: std::collections::HashSet<_> = pages.iter().map(|p| p.span_context.trace_id()).collect();
    assert_eq!(traces.len(), 3, "each page is a call of its own");

    // A table listing: a span per page too, of the service client.
    let service = recorder.client(&url, AccountKey::development());
    let _: Vec<TableName> = service.list_tables(&Query::new().top(1), None).unwrap().try_collect().await.unwrap();
    let spans = recorder.take();
    let pages = named(&spans, "Storage.Tables.TableServiceClient.list_tables");
    assert!(pages.len() >= 2, "{spans:#?}");
    for page in &pages {
        assert_call_span(page, &url, None);
        assert_eq!(children(&spans, page).len(), 1);
    }
    direct.delete_table(&name, None).await.unwrap();
}

#[tokio::test]
async fn a_transaction_says_its_operations_and_outcome() {
    let Some(url) = endpoint() else { return };
    let recorder = Recorder::new();
    let direct = client(&url);
    let name = fresh_table(&direct, "TraceTx").await;

    let table = recorder.client(&url, AccountKey::development()).table_client(name.clone());
    let mut batch = table.batch(PartitionKey::new("p").unwrap());
    for rk in ["a", "b", "c"] {
        batch.insert(&entity("p", rk)).unwrap();
    }
    table.submit_transaction(&batch, None).await.unwrap();
    // The same again: refused (409 at operation 0), and said so.
    let err = table.submit_transaction(&batch, None).await.unwrap_err();
    assert_eq!(err.status(), Some(409));

    let spans = recorder.take();
    let calls = named(&spans, "Storage.Tables.TableClient.submit_transaction");
    assert_eq!(calls.len(), 2, "{spans:#?}");
    for (call, (outcome, error)) in calls.iter().zip([("committed", None), ("failed", Some("409"))]) {
        assert_call_span(call, &url, Some(&name));
        assert_eq!(int(call, attr::OPERATIONS), Some(3));
        assert_eq!(string(call, attr::OUTCOME).as_deref(), Some(outcome));
        assert_eq!(string(call, attr::ERROR_TYPE).as_deref(), error);
        let requests = children(&spans, call);
        assert_eq!(requests.len(), 1);
        // A batch is answered `202 Accepted` whatever its operations' statuses.
        assert_request_span(requests[0], "POST", 202);
        assert!(string(requests[0], "url.full").unwrap().contains("/$batch"));
    }
    direct.delete_table(&name, None).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bulk_write_has_a_child_per_transaction_with_its_tries_and_settling_reads() {
    let Some(url) = endpoint() else { return };
    let recorder = Recorder::new();
    let direct = client(&url);
    let name = fresh_table(&direct, "TraceBulk").await;
    // The first transaction is throttled once, then its reply is lost: its retry is refused (the first try
    // landed) and one read settles it. The others go through.
    let script = vec![Fault::ServerBusy, Fault::CloseAfterForwarding];
    let proxy = Proxy::scripted(socket_of(&url), script, 0, 0, DELAY).await;
    let account = url.rsplit('/').next().unwrap();
    let faulty = recorder.client(&format!("http://{}/{account}", proxy.addr), AccountKey::development());
    let table = faulty.table_client(name.clone());
    let entities: Vec<Entity> =
        (0..250).map(|i| entity(if i < 150 { "p0" } else { "p1" }, &format!("{i:04}"))).collect();
    let options = BulkOptions { concurrency: 1, ..Default::default() }.with_client_request_id("bulk-trace");
    let report = table.bulk_write(BulkOperation::Insert, &entities, Some(options)).await;
    assert!(report.is_complete(), "{} failures", report.failures.len());
    assert_eq!(report.written, 250);

    let spans = recorder.take();
    let bulk = named(&spans, "Storage.Tables.TableClient.bulk_write");
    assert_eq!(bulk.len(), 1, "{spans:#?}");
    let bulk = bulk[0];
    assert_eq!(int(bulk, "server.port"), Some(i64::from(proxy.addr.port())));
    assert_eq!(string(bulk, attr::TABLE).as_deref(), Some(name.as_str()));
    assert_eq!(int(bulk, attr::WRITTEN), Some(250));
    assert_eq!(int(bulk, attr::FAILED), Some(0));
    let transactions = children(&spans, bulk);
    assert_eq!(transactions.len() as u64, report.transactions, "a child per transaction: {transactions:#?}");
    assert_eq!(int(bulk, attr::TRANSACTIONS), Some(transactions.len() as i64));
    let mut per_partition: HashMap<String, i64> = HashMap::new();
    for transaction in &transactions {
        assert_eq!(transaction.name, "Storage.Tables.TableClient.submit_transaction");
        let partition = string(transaction, attr::PARTITION_KEY).expect("its partition");
        *per_partition.entry(partition).or_default() += int(transaction, attr::OPERATIONS).expect("its size");
    }
    assert_eq!(per_partition, HashMap::from([("p0".to_owned(), 150), ("p1".to_owned(), 100)]));

    // The first transaction sent: throttled, lost, refused, then settled by a read.
    let first = transactions.iter().min_by_key(|t| t.start_time).unwrap();
    assert_eq!(string(first, attr::OUTCOME).as_deref(), Some("settled"));
    let tries = children(&spans, first);
    let posts: Vec<_> = tries.iter().filter(|s| s.name == "POST").collect();
    assert_eq!(posts.len(), 3, "{tries:#?}");
    let resends: Vec<_> = posts.iter().map(|p| int(p, attr::HTTP_RESEND_COUNT)).collect();
    assert!(resends.contains(&None) && resends.contains(&Some(1)) && resends.contains(&Some(2)), "{resends:?}");
    assert!(posts.iter().any(|p| int(p, attr::HTTP_STATUS) == Some(503)), "the throttled try");
    let settle = tries.iter().find(|s| s.name == "Storage.Tables.TableClient.settle").expect("a settle span");
    let reads = children(&spans, settle);
    assert!(!reads.is_empty() && reads.iter().all(|r| r.name == "GET"), "{reads:#?}");
    // Three POSTs; the settling reads are counted on their own span.
    assert_eq!(int(first, attr::TRIES), Some(3));
    assert_eq!(int(settle, attr::TRIES), Some(reads.len() as i64));
    let ids: Vec<String> = posts.iter().filter_map(|p| string(p, attr::AZ_CLIENT_REQUEST_ID)).collect();
    assert!(ids.iter().all(|id| id == "bulk-trace-0"), "each try of the first transaction carries its id: {ids:?}");
    for other in transactions.iter().filter(|t| t.span_context.span_id() != first.span_context.span_id()) {
        assert_eq!(string(other, attr::OUTCOME).as_deref(), Some("committed"));
        assert_eq!(int(other, attr::TRIES), Some(1));
    }
    direct.delete_table(&name, None).await.unwrap();
}

/// Every attribute value of every span, as text.
fn all_values(spans: &[SpanData]) -> Vec<String> {
    spans.iter().flat_map(|s| s.attributes.iter().map(|kv| format!("{}={}", kv.key, kv.value))).collect()
}

#[tokio::test]
async fn no_attribute_holds_a_key_a_signature_or_a_token() {
    let Some(url) = endpoint() else { return };
    let recorder = Recorder::new();
    let direct = client(&url);
    let name = fresh_table(&direct, "TraceSecrets").await;
    let endpoint = Endpoint::parse(&url).unwrap();

    // Shared Key: the key signs each request (the Authorization header is not traced).
    let keyed = recorder.client(&url, AccountKey::development()).table_client(name.clone());
    keyed.upsert(&entity("p", "k"), table_model::UpdateMode::Merge, None).await.unwrap();
    // A SAS in the credential: its signature is in every URL.
    let now = Utc::now();
    let sas = TableSas::new(name.clone())
        .permissions(TableSasPermissions::READ | TableSasPermissions::ADD)
        .start(now - Duration::hours(1))
        .expiry(now + Duration::hours(1))
        .sign(endpoint.account(), &AccountKey::development())
        .unwrap();
    let signature = sas.as_str().split('&').find_map(|p| p.strip_prefix("sig=")).expect("a signature").to_owned();
    let shared = recorder.client(&url, sas).table_client(name.clone());
    shared.insert(&entity("p", "s"), None).await.unwrap();
    let _: Entity = shared.get(&"p".parse().unwrap(), &"s".parse().unwrap(), None).await.unwrap();
    let _: Vec<Entity> = shared.query(&Query::new(), None).unwrap().try_collect().await.unwrap();
    // A refused write through the SAS (no delete permission).
    assert!(shared.delete_by_keys(&"p".parse().unwrap(), &"s".parse().unwrap(), None).await.is_err());

    let spans = recorder.take();
    assert!(spans.len() >= 10, "{spans:#?}");
    let values = all_values(&spans);
    let decoded_signature = percent_decode(&signature);
    for value in &values {
        assert!(!value.contains(DEV_KEY), "the account key in {value}");
        assert!(!value.contains(&signature) && !value.contains(&decoded_signature), "the SAS signature in {value}");
        assert!(!value.to_ascii_lowercase().contains("bearer"), "a token in {value}");
        assert!(!value.contains("SharedKey"), "an authorization in {value}");
    }
    let urls: Vec<&String> = values.iter().filter(|v| v.starts_with("url.full=")).collect();
    let with_sig: Vec<_> = urls.iter().filter(|u| u.contains("sig=")).collect();
    assert!(!with_sig.is_empty(), "the SAS requests are traced: {urls:?}");
    assert!(with_sig.iter().all(|u| u.contains("sig=REDACTED")), "{with_sig:?}");
    direct.delete_table(&name, None).await.unwrap();
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let Ok(b) = u8::from_str_radix(&s[i + 1..i + 3], 16)
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_span_hook_sees_retries_throttling_and_settled_transactions_with_their_request_ids() {
    use std::sync::Mutex;
    use table_model::client::trace::SpanHook;
    let Some(url) = endpoint() else { return };
    let direct = client(&url);
    let name = fresh_table(&direct, "TraceHook").await;
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let log = seen.clone();
    // What a `--verbose` flag would print, one line per event.
    let hook = SpanHook::new(move |span| {
        let id = span.str(attr::AZ_SERVICE_REQUEST_ID).unwrap_or("-").to_owned();
        let mut log = log.lock().unwrap();
        if span.is_request() {
            if let Some(n) = span.int(attr::HTTP_RESEND_COUNT) {
                log.push(format!("retry {n} of {} id={id}", span.parent().unwrap_or("?")));
            }
            if matches!(span.int(attr::HTTP_STATUS), Some(429 | 503)) {
                log.push(format!("throttled {} id={id}", span.parent().unwrap_or("?")));
            }
        } else if let Some(outcome) = span.str(attr::OUTCOME) {
            log.push(format!("{outcome} {} ops={:?}", span.name(), span.int(attr::OPERATIONS)));
        }
    });
    let mut options = Recorder::new().options();
    options.client_options.instrumentation.tracer_provider = Some(hook);
    let script = vec![Fault::ServerBusy, Fault::CloseAfterForwarding];
    let proxy = Proxy::scripted(socket_of(&url), script, 0, 0, DELAY).await;
    let account = url.rsplit('/').next().unwrap();
    let service =
        TableServiceClient::new(format!("http://{}/{account}", proxy.addr), AccountKey::development(), Some(options))
            .unwrap();
    let entities: Vec<Entity> = (0..150).map(|i| entity("p", &format!("{i:04}"))).collect();
    let options = BulkOptions { concurrency: 1, ..Default::default() };
    let report = service.table_client(name.clone()).bulk_write(BulkOperation::Insert, &entities, Some(options)).await;
    assert_eq!(report.written, 150);

    let seen = seen.lock().unwrap().clone();
    let transaction = "Storage.Tables.TableClient.submit_transaction";
    // The throttled first try answered by the proxy carries no service request id; its retries do.
    assert_eq!(seen.iter().filter(|l| l.starts_with(&format!("throttled {transaction}"))).count(), 1, "{seen:?}");
    let retries: Vec<&String> = seen.iter().filter(|l| l.starts_with("retry ")).collect();
    assert_eq!(retries.len(), 2, "{seen:?}");
    assert!(retries.iter().all(|l| l.contains(transaction)), "{seen:?}");
    assert!(
        retries.iter().any(|l| !l.ends_with("id=-")),
        "a retry answered by the service has its request id: {seen:?}"
    );
    assert!(seen.contains(&format!("settled {transaction} ops=Some(100)")), "{seen:?}");
    assert!(seen.contains(&format!("committed {transaction} ops=Some(50)")), "{seen:?}");
    direct.delete_table(&name, None).await.unwrap();
}

/// A filtered delete is one call: its span is the parent of each page's query and of each page's bulk write,
/// whose transactions are under it, all in one trace.
#[tokio::test]
async fn a_filtered_delete_is_one_call_over_its_pages_and_their_writes() {
    let Some(url) = endpoint() else { return };
    let recorder = Recorder::new();
    let direct = client(&url);
    let name = fresh_table(&direct, "TraceMatching").await;
    for (pk, rk, n) in [("p", "a", 1), ("p", "b", 2), ("p", "c", 3), ("q", "a", 4), ("q", "b", 0)] {
        let e = entity(pk, rk).with("N".parse().unwrap(), n).unwrap();
        direct.table_client(name.clone()).insert(&e, None).await.unwrap();
    }

    let table = recorder.client(&url, AccountKey::development()).table_client(name.clone());
    let query = Query::new().filter(table_model::filter::Filter::property("N").ge(2)).top(2);
    let cursors = vec![table_model::client::RangeCursor::new(table_model::filter::KeyRange::all())];
    let report = table.delete_matching(&query, cursors, None).await;
    assert_eq!((report.written, report.failures.len(), report.stopped.len()), (3, 0, 0), "{report:?}");

    let spans = recorder.take();
    let calls = named(&spans, "Storage.Tables.TableClient.delete_matching");
    assert_eq!(calls.len(), 1, "{spans:#?}");
    let call = calls[0];
    assert_call_span(call, &url, Some(&name));
    assert_eq!((int(call, attr::WRITTEN), int(call, attr::FAILED)), (Some(3), Some(0)));
    assert!(spans.iter().all(|s| s.span_context.trace_id() == call.span_context.trace_id()), "one trace");
    let under: Vec<&str> = children(&spans, call).iter().map(|s| s.name.as_ref()).collect();
    let pages = under.iter().filter(|n| **n == "Storage.Tables.TableClient.query").count();
    let writes: Vec<&SpanData> =
        children(&spans, call).into_iter().filter(|s| s.name == "Storage.Tables.TableClient.bulk_write").collect();
    assert!(pages >= 2, "pages of 2: {under:?}");
    assert!(!writes.is_empty(), "{under:?}");
    assert_eq!(pages + writes.len(), under.len(), "nothing else directly under the call: {under:?}");
    let mut transactions = 0;
    for write in writes {
        for transaction in children(&spans, write) {
            assert_eq!(transaction.name, "Storage.Tables.TableClient.submit_transaction");
            assert!(string(transaction, attr::PARTITION_KEY).is_some());
            assert_eq!(children(&spans, transaction).len(), 1, "one try each");
            transactions += 1;
        }
    }
    assert!(transactions >= 2, "the partitions p and q are transactions of their own");
    direct.delete_table(&name, None).await.unwrap();
}
