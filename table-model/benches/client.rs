//! The client's overhead: a point read and a 1,000-entity query page through [`TableClient`] against the same
//! request sent with a bare `reqwest` call, both against one loopback server that answers a recorded body.
//!
//! - Baseline: the `http::Request` built and signed (Shared Key, the development key) by [`TableService`],
//!   converted with `reqwest::Request::try_from`, sent with a bare `reqwest::Client`, the body collected and
//!   read with [`response::entity_as`] / [`response::query_as`] into a `#[derive(TableEntity)]` struct.
//! - Client: [`TableClient::get`] and the first page of [`TableClient::query`] (`into_pages`), through the
//!   `azure_core` pipeline (Shared Key policy, user agent, request id, retry, logging) and the client's default
//!   transport (a `reqwest::Client` set up as `azure_core`'s default: 20 s connect and 60 s read timeouts, no
//!   redirects; the baseline's client is set up the same way), on the same single-threaded tokio runtime.
//!
//! The difference is what the client adds: its request and response conversions and `azure_core`'s policies.
//! Both sides build the same request with [`TableService`] (with the `timeout` parameter the client sends for its
//! default per-try timeout) and read it with the same `response` function.
//!
//! The server is this binary, started again as a child process (`CLIENT_BENCH_SERVER=1`) so that its work
//! is not counted in the client's instructions under callgrind: hyper, HTTP/1.1 with keep-alive, on
//! 127.0.0.1 only. It answers every entity address with one entity of 12 properties of every EDM type (plus
//! keys, `odata.etag` and `Timestamp`; minimal metadata; `ETag` header) and every query with a page of 1,000
//! such entities with `x-ms-continuation-*` headers, both encoded once with the project's own JSON encoder.
//! It exits when this process closes its standard input (or after an hour: `table_model_test_utils::loopback`).
//!
//! Modes (`cargo bench -p table-model --bench client --no-run` prints the binary's path):
//!
//! - `cargo bench -p table-model --bench client`: interleaved minima and ratios (200 rounds), then criterion;
//! - `CLIENT_BENCH_COMPARE=<rounds> <binary>`: interleaved minima and ratios only: each round times a batch
//!   of each operation, baseline and client alternating, and each operation keeps its fastest batch;
//! - `CLIENT_BENCH_LOOP=<operation>:<count> valgrind --tool=callgrind <binary>`: runs one operation `count`
//!   times and exits, for instruction counts (the server child runs outside valgrind);
//!   `scripts/bench-client-instructions.sh` gives the cost of one operation of each and the ratios;
//!   `get/traced` is the client's point read with a tracer provider set (two spans: the call's and the try's).

mod support;

use criterion::{black_box, Criterion};
use futures::TryStreamExt as _;
use std::sync::Arc;
use std::time::{Duration, Instant};
use table_model::client::{TableClient, TableServiceClient, TableServiceClientOptions};
use table_model::response::{self, QueryPage};
use table_model::{
    AccountKey, Credential, ETag, Endpoint, PartitionKey, Query, RowKey, TableEntity, TableName, TableService,
};
use table_model_test_utils::loopback::{self, Bare, Bytes, ChildServer, Request, Response};
use tokio::runtime::Runtime;

/// The entity: every EDM type (three strings, one with escapes; Int32, Int64, two Doubles, Boolean, Guid,
/// DateTime, 32 bytes of Binary), as in the `json` benchmark.
#[derive(TableEntity, Debug, Clone, PartialEq)]
#[table(rename_all = "PascalCase")]
struct Customer {
    #[table(partition_key)]
    tenant: String,
    #[table(row_key)]
    id_key: String,
    name: String,
    email: String,
    age: i32,
    visits: i64,
    score: f64,
    balance: f64,
    active: bool,
    id: uuid::Uuid,
    created: chrono::DateTime<chrono::Utc>,
    avatar: Vec<u8>,
    notes: String,
    rating: i32,
    #[table(etag)]
    etag: Option<ETag>,
}

const PAGE: usize = 1000;
const ETAG: &str = "W/\"datetime'2024-05-06T07%3A08%3A10.7654321Z'\"";
const TIMESTAMP: &str = "2024-05-06T07:08:10.7654321Z";
const ACCOUNT: &str = "devstoreaccount1";

fn customer(row: usize) -> Customer {
    Customer {
        tenant: "tenant-0042".into(),
        id_key: format!("2518977465384567432-{row:06}"),
        name: "Ada Lovelace".into(),
        email: "ada@example.com".into(),
        age: 36,
        visits: 1_234_567_890_123,
        score: 98.6,
        balance: -1234.5,
        active: true,
        id: uuid::Uuid::from_u128(0xc9da6455_213d_42c9_9a79_3e9149a57833),
        created: chrono::DateTime::from_timestamp(1_714_979_289, 123_456_700).unwrap(),
        avatar: (0u8..32).collect(),
        notes: "Prefers \"analytical engine\" over difference engine; follow up in Q3 about the notes on Bernoulli numbers."
            .into(),
        rating: 5,
        etag: None,
    }
}

/// One entity as a minimal-metadata response carries it: the project's encoder's body with `odata.etag` and
/// `Timestamp` added.
fn entity_json(row: usize) -> Vec<u8> {
    let body = customer(row).to_json().unwrap().into_bytes();
    let escaped_etag = ETAG.replace('"', "\\\"");
    let mut out = format!(r#"{{"odata.etag":"{escaped_etag}","Timestamp":"{TIMESTAMP}","#).into_bytes();
    out.extend_from_slice(&body[1..]);
    out
}

/// The two recorded bodies.
fn bodies(port: u16) -> (Bytes, Bytes) {
    let base = format!("http://127.0.0.1:{port}/{ACCOUNT}/$metadata#Customers");
    let mut point = format!(r#"{{"odata.metadata":"{base}/@Element","#).into_bytes();
    point.extend_from_slice(&entity_json(0)[1..]);
    let mut page = format!(r#"{{"odata.metadata":"{base}","value":["#).into_bytes();
    for row in 0..PAGE {
        if row > 0 {
            page.push(b',');
        }
        page.extend_from_slice(&entity_json(row));
    }
    page.extend_from_slice(b"]}");
    (Bytes::from(point), Bytes::from(page))
}

// ------------------------------------------------------------------------------------------------------------
// The server (a child process)

const CONTENT_TYPE: &str = "application/json;odata=minimalmetadata;streaming=true;charset=utf-8";

fn answer(request: &Request, point: &Bytes, page: &Bytes) -> Response {
    let path = request.path();
    let mut headers =
        vec![("content-type", CONTENT_TYPE), ("date", "Mon, 06 May 2024 07:08:10 GMT"), ("cache-control", "no-cache")];
    if path.contains("(PartitionKey=") {
        headers.push(("etag", ETAG));
        loopback::reply(200, &headers, point.clone())
    } else if path.ends_with("()") {
        headers.push(("x-ms-continuation-NextPartitionKey", "1!16!dGVuYW50LTAwNDM-"));
        headers.push(("x-ms-continuation-NextRowKey", "1!36!MjUxODk3NzQ2NTM4NDU2NzQzMi0wMDEwMDA-"));
        loopback::reply(200, &headers, page.clone())
    } else {
        headers.push(("x-ms-error-code", "ResourceNotFound"));
        loopback::reply(404, &headers, Bytes::new())
    }
}

// ------------------------------------------------------------------------------------------------------------
// The two sides

struct Fixture {
    runtime: Runtime,
    /// Builds and signs the baseline's requests.
    requests: TableService,
    http: Bare,
    client: TableClient,
    /// The same client with a tracer provider set: OpenTelemetry's SDK through `azure_core_opentelemetry`,
    /// sampling every span and exporting none (what a span costs the client, not what an exporter does).
    traced: TableClient,
    table: TableName,
    partition_key: PartitionKey,
    row_key: RowKey,
    query: Query,
    _server: ChildServer,
}

impl Fixture {
    fn new() -> Fixture {
        let server = ChildServer::start("CLIENT_BENCH_SERVER", "1", &["CLIENT_BENCH_LOOP", "CLIENT_BENCH_COMPARE"]);
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let url = format!("http://127.0.0.1:{}/{ACCOUNT}", server.port());
        // As azure_core's `new_reqwest_client` sets it up (decompression is on by default with its features).
        let http = Bare::new();
        let requests =
            TableService::new(Endpoint::parse(&url).unwrap(), Credential::SharedKey(AccountKey::development()))
                // The request the client sends: its default per-try timeout is sent as the `timeout` parameter.
                .with_server_timeout(TableServiceClientOptions::default().try_timeout.unwrap());
        let service = TableServiceClient::new(&url, AccountKey::development(), None).unwrap();
        let provider = Arc::new(opentelemetry_sdk::trace::SdkTracerProvider::builder().build());
        let mut traced_options = TableServiceClientOptions::default();
        traced_options.client_options.instrumentation.tracer_provider =
            Some(azure_core_opentelemetry::OpenTelemetryTracerProvider::new(provider));
        let traced = TableServiceClient::new(&url, AccountKey::development(), Some(traced_options)).unwrap();
        let table = TableName::from_static("Customers");
        let first = customer(0);
        let fixture = Fixture {
            runtime,
            requests,
            http,
            client: service.table_client(table.clone()),
            traced: traced.table_client(table.clone()),
            table,
            partition_key: PartitionKey::new(first.tenant.as_str()).unwrap(),
            row_key: RowKey::new(first.id_key.as_str()).unwrap(),
            query: Query::new().top(PAGE),
            _server: server,
        };
        fixture.check();
        fixture
    }

    /// Both sides read the same values.
    fn check(&self) {
        let expected = Customer { etag: Some(ETag::new(ETAG)), ..customer(0) };
        self.runtime.block_on(async {
            assert_eq!(self.baseline_get().await, expected);
            assert_eq!(self.client_get().await, expected);
            assert_eq!(self.traced.get::<Customer>(&self.partition_key, &self.row_key, None).await.unwrap(), expected);
            let (a, b) = (self.baseline_page().await, self.client_page().await);
            assert_eq!(a.entities.len(), PAGE);
            assert_eq!(a.entities[PAGE - 1].id_key, customer(PAGE - 1).id_key);
            assert_eq!(a.entities[7].etag.as_ref().map(ETag::as_str), Some(ETAG));
            assert!(a.continuation.is_some());
            assert_eq!(a, b);
        });
    }

    /// Sends a request built by [`TableService`] with the bare `reqwest` client; the answer as an
    /// `http::Response` with the body collected.
    async fn send_bare(&self, request: http::Request<Vec<u8>>) -> http::Response<Bytes> {
        self.http.send(request).await
    }

    async fn baseline_get(&self) -> Customer {
        let request = self.requests.get(&self.table, &self.partition_key, &self.row_key).unwrap();
        response::entity_as(&self.send_bare(request).await).unwrap()
    }

    async fn client_get(&self) -> Customer {
        self.client.get(&self.partition_key, &self.row_key, None).await.unwrap()
    }

    async fn baseline_page(&self) -> QueryPage<Customer> {
        let request = self.requests.query(&self.table, &self.query, None).unwrap();
        response::query_as(&self.send_bare(request).await).unwrap()
    }

    async fn client_page(&self) -> QueryPage<Customer> {
        let mut pages = self.client.query::<Customer>(&self.query, None).unwrap().into_pages();
        pages.try_next().await.unwrap().unwrap()
    }

    /// Runs one named operation once.
    fn run(&self, op: &str) {
        self.runtime.block_on(async {
            match op {
                "get/baseline" => drop(black_box(self.baseline_get().await)),
                "get/client" => drop(black_box(self.client_get().await)),
                "get/traced" => drop(black_box(
                    self.traced.get::<Customer>(&self.partition_key, &self.row_key, None).await.unwrap(),
                )),
                "page/baseline" => drop(black_box(self.baseline_page().await)),
                "page/client" => drop(black_box(self.client_page().await)),
                _ => panic!("unknown operation `{op}`"),
            }
        });
    }
}

const OPERATIONS: [&str; 4] = ["get/baseline", "get/client", "page/baseline", "page/client"];

/// Interleaves the operations in short batches (10 point reads, 1 page) and keeps each one's fastest batch,
/// and its median batch.
fn compare(fixture: &Fixture, rounds: usize) {
    let batch = |op: &str| if op.starts_with("get") { 10 } else { 1 };
    let mut samples = vec![Vec::with_capacity(rounds); OPERATIONS.len()];
    for _ in 0..rounds {
        for (op, samples) in OPERATIONS.iter().zip(&mut samples) {
            let n = batch(op);
            let start = Instant::now();
            for _ in 0..n {
                fixture.run(op);
            }
            samples.push(start.elapsed().as_secs_f64() * 1e6 / f64::from(n));
        }
    }
    for samples in &mut samples {
        samples.sort_by(f64::total_cmp);
    }
    let (min, median) = (|i: usize| samples[i][0], |i: usize| samples[i][samples[i].len() / 2]);
    println!("interleaved, {rounds} rounds (10 point reads or 1 page per batch, per operation):");
    println!(
        "{:<16} {:>10} {:>12} {:>12} {:>14}",
        "operation", "min (µs)", "median (µs)", "ratio (min)", "ratio (median)"
    );
    for (i, op) in OPERATIONS.iter().enumerate() {
        let (by_min, by_median) = if op.ends_with("client") {
            (format!("{:.3}x", min(i) / min(i - 1)), format!("{:.3}x", median(i) / median(i - 1)))
        } else {
            ("-".to_owned(), "-".to_owned())
        };
        println!("{op:<16} {:>10.1} {:>12.1} {by_min:>12} {by_median:>14}", min(i), median(i));
    }
}

fn main() {
    if std::env::var_os("CLIENT_BENCH_SERVER").is_some() {
        loopback::serve_child(|port| {
            let (point, page) = bodies(port);
            move |request: &Request| answer(request, &point, &page)
        });
    }
    let fixture = Fixture::new();
    if support::loop_mode("CLIENT_BENCH_LOOP", |op| fixture.run(op)) {
        return;
    }
    if let Ok(rounds) = std::env::var("CLIENT_BENCH_COMPARE") {
        compare(&fixture, rounds.parse().expect("a number of rounds"));
        return;
    }
    compare(&fixture, 200);
    let mut c = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    support::bench_operations(&mut c, &OPERATIONS, |op| fixture.run(op));
    c.final_summary();
}
