//! What the DataFusion provider costs, against the workspace's in-memory Table service on loopback
//! (`table_model_test_utils::service`, answering at once, throttling nothing) holding a table of the benchmarks'
//! entity (`table_model_test_utils::entity`, as tablectl's export benchmark: 12 properties of every EDM type,
//! `odata.etag` and `Timestamp`, ~700 bytes of JSON), `entities` of them spread evenly over `partitions`
//! partitions (`tenant-00`, `tenant-01`, ...; RowKeys `000000`, `000001`, ...: `service::Seed`).
//!
//! The service answers as the real one does for what the provider sends: `$filter` (the key ranges of
//! `TableClient::plan_ranges`, its probes and pushed filters), `$select`, `$top`, pages of at most 1,000 entities
//! and continuations; it counts the entities it sends (`GET /stats`).
//!
//! Modes (`cargo bench -p table-model-datafusion --bench scan --no-run` prints the binary's path):
//!
//! - `DF_BENCH_LOOP=<operation>:<count> valgrind --tool=callgrind <binary>`: runs one operation `count` times over
//!   a table of one partition of 1,000 entities (one page), for instruction counts (the server is a child
//!   process, outside valgrind); `scripts/bench-datafusion.sh` gives the cost of one entity of each:
//!   - `decode/query_as`: the page the server sends read with `response::query_as` into a derived struct, in
//!     process (no HTTP): the issue's baseline;
//!   - `decode/batch`: the same page's JSON appended to a `BatchBuilder` of the provider's schema
//!     (`AzureTable::for_entity`) with `BatchBuilder::push_page`, in process: what the scan does with a page;
//!   - `decode/entities`: the same page read with `response::query` into `Entity`s, each pushed into such a
//!     `BatchBuilder` (`BatchBuilder::push`), in process;
//!   - `page/query_as`: the page fetched by `TableClient::query::<Customer>`;
//!   - `scan/batches`: the provider's scan of the table (`AzureTable::scan`, every column, one partition)
//!     executed and its record batches collected (`AzureScanExec`).
//! - `DF_BENCH_SQL=<entities>:<partitions>:<rounds>[:<latency>] <binary>`: wall time of the SQL queries of
//!   `scripts/bench-datafusion.sh time` against a server of that table, interleaved, the minimum of `rounds`;
//!   prints the entities each query made the server send. With a latency (milliseconds a page, as the service
//!   answers: `scripts/bench-datafusion.sh latency`), the aggregate with 1, 4 and 16 partitions only.
//! - `DF_BENCH_QUERY=<case> DF_BENCH_PORT=<port> <binary>`: runs one case once against a server already running
//!   (for `/usr/bin/time -v`: the peak memory of the client alone).
//! - `DF_BENCH_SERVE=<entities>:<partitions>[:<latency>] <binary>`: only the server; prints its port, and runs
//!   until its standard input closes (what `table-server --seed Customers:<entities>:<partitions>
//!   --latency-query <latency>` serves too).

use datafusion::catalog::TableProvider as _;
use datafusion::prelude::{SessionConfig, SessionContext};
use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};
use table_model::client::{TableClient, TableServiceClient};
use table_model::{response, AccountKey, Query, TableEntity, TableName};
use table_model_arrow::batch::BatchBuilder;
use table_model_datafusion::AzureTable;
use table_model_test_utils::entity::{Customer, ACCOUNT, PAGE, TABLE};
use table_model_test_utils::loopback::{self, Bytes, ChildServer, Request};
use table_model_test_utils::service::{self, Options, Seed, Service};

// ------------------------------------------------------------------------------------------------------------
// The server (a child process)

/// The server in a child process: this binary with `DF_BENCH_SERVE`.
fn start_server(entities: usize, partitions: usize, latency: usize) -> ChildServer {
    let spec = format!("{entities}:{partitions}:{latency}");
    ChildServer::start("DF_BENCH_SERVE", &spec, &["DF_BENCH_LOOP", "DF_BENCH_SQL", "DF_BENCH_QUERY"])
}

// ------------------------------------------------------------------------------------------------------------
// The client side

fn url(port: u16) -> String {
    format!("http://127.0.0.1:{port}/{ACCOUNT}")
}

fn table_client(port: u16) -> TableClient {
    let service = TableServiceClient::new(url(port), AccountKey::development(), None).unwrap();
    service.table_client(TableName::from_static(TABLE))
}

/// The entities the server has sent since it started.
fn sent(runtime: &tokio::runtime::Runtime, port: u16) -> u64 {
    runtime.block_on(service::stats_of(port)).entities_sent
}

/// The body of the server's answer to `GET <target>` at the minimal metadata level, as the client asks for it.
fn fetch(runtime: &tokio::runtime::Runtime, port: u16, target: &str) -> Vec<u8> {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    runtime.block_on(async {
        let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        let request = format!(
            "GET {target} HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\naccept: application/json;odata=minimalmetadata\r\n\
             connection: close\r\n\r\n"
        );
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut reply = Vec::new();
        stream.read_to_end(&mut reply).await.unwrap();
        let body = reply.windows(4).position(|w| w == b"\r\n\r\n").expect("a response head") + 4;
        reply.split_off(body)
    })
}

/// The instruction-count operations over one page of 1,000 entities.
struct Fixture {
    runtime: tokio::runtime::Runtime,
    client: TableClient,
    provider: AzureTable,
    ctx: SessionContext,
    recorded: http::Response<Bytes>,
    _server: ChildServer,
}

impl Fixture {
    fn new() -> Fixture {
        let server = start_server(PAGE, 1, 0);
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let client = table_client(server.port());
        let provider = AzureTable::for_entity::<Customer>(client.clone()).unwrap();
        let ctx = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(1));
        // The page the server sends for the whole table (no `$select`).
        let page = fetch(&runtime, server.port(), &format!("/{ACCOUNT}/{TABLE}()"));
        let mut recorded = http::Response::new(Bytes::from(page));
        recorded.headers_mut().insert("content-type", "application/json;odata=minimalmetadata".parse().unwrap());
        let fixture = Fixture { runtime, client, provider, ctx, recorded, _server: server };
        fixture.check();
        fixture
    }

    /// Every operation reads the 1,000 entities, the same values.
    fn check(&self) {
        let last = Customer::sample("tenant-00", "000999");
        assert_eq!(response::query_as::<Customer, _>(&self.recorded).unwrap().entities[PAGE - 1], last);
        assert_eq!(self.decode_batch(), PAGE);
        assert_eq!(self.decode_entities_batch(), PAGE);
        self.runtime.block_on(async {
            assert_eq!(self.page_query_as().await, PAGE);
            let batches = self.scan().await;
            assert_eq!(batches.iter().map(|b| b.num_rows()).sum::<usize>(), PAGE);
            let entities = table_model_arrow::batch::entities(&batches[0], self.provider.entity_schema()).unwrap();
            assert_eq!(Customer::from_entity(entities[PAGE - 1].clone()).unwrap(), last);
        });
    }

    fn decode_batch(&self) -> usize {
        let page = response::raw_query(&self.recorded).unwrap();
        let mut builder = BatchBuilder::new(self.provider.entity_schema().clone());
        builder.push_page(page.body.as_ref()).unwrap();
        black_box(builder.finish().unwrap()).num_rows()
    }

    fn decode_entities_batch(&self) -> usize {
        let page = response::query(&self.recorded, None).unwrap();
        let mut builder = BatchBuilder::new(self.provider.entity_schema().clone());
        for entity in &page.entities {
            builder.push(entity).unwrap();
        }
        black_box(builder.finish().unwrap()).num_rows()
    }

    async fn page_query_as(&self) -> usize {
        use futures::TryStreamExt as _;
        let mut pages = self.client.query::<Customer>(&Query::new(), None).unwrap().into_pages();
        black_box(pages.try_next().await.unwrap().unwrap()).entities.len()
    }

    async fn scan(&self) -> Vec<datafusion::arrow::record_batch::RecordBatch> {
        let state = self.ctx.state();
        let plan = self.provider.scan(&state, None, &[], None).await.unwrap();
        datafusion::physical_plan::collect(plan, self.ctx.task_ctx()).await.unwrap()
    }

    fn run(&self, op: &str) {
        match op {
            "decode/query_as" => drop(black_box(response::query_as::<Customer, _>(&self.recorded).unwrap())),
            "decode/batch" => drop(self.decode_batch()),
            "decode/entities" => drop(self.decode_entities_batch()),
            "page/query_as" => drop(self.runtime.block_on(self.page_query_as())),
            "scan/batches" => drop(black_box(self.runtime.block_on(self.scan()))),
            _ => panic!("unknown operation `{op}`"),
        }
    }
}

/// A SQL case of the wall-time and memory runs: a query, DataFusion's `target_partitions`, and whether filters
/// are pushed.
struct Case {
    name: &'static str,
    sql: &'static str,
    partitions: usize,
    pushdown: bool,
}

const AGGREGATE: &str = r#"SELECT "PartitionKey", count(*), sum("Visits") FROM customers GROUP BY 1"#;
const SELECTIVE: &str = r#"SELECT count(*), sum("Visits") FROM customers WHERE "PartitionKey" = 'tenant-07'"#;

const CASES: [Case; 5] = [
    Case { name: "aggregate/1", sql: AGGREGATE, partitions: 1, pushdown: true },
    Case { name: "aggregate/4", sql: AGGREGATE, partitions: 4, pushdown: true },
    Case { name: "selective/pushdown", sql: SELECTIVE, partitions: 1, pushdown: true },
    Case { name: "selective/no-pushdown", sql: SELECTIVE, partitions: 1, pushdown: false },
    Case { name: "aggregate/16", sql: AGGREGATE, partitions: 16, pushdown: true },
];

fn case(name: &str) -> &'static Case {
    CASES.iter().find(|c| c.name == name).unwrap_or_else(|| panic!("unknown case `{name}`"))
}

/// Runs a case once: the rows of its answer.
async fn run_case(port: u16, case: &Case) -> usize {
    let provider = AzureTable::for_entity::<Customer>(table_client(port)).unwrap().with_filter_pushdown(case.pushdown);
    let ctx = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(case.partitions));
    ctx.register_table("customers", Arc::new(provider)).unwrap();
    let batches = ctx.sql(case.sql).await.unwrap().collect().await.unwrap();
    batches.iter().map(|b| b.num_rows()).sum()
}

/// Wall time of each case, interleaved, the minimum of `rounds`; the entities each run made the server send.
/// Under a latency, the aggregates only (the order of the cases turning each round).
fn compare(entities: usize, partitions: usize, rounds: usize, latency: usize) {
    let server = start_server(entities, partitions, latency);
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(4).enable_all().build().unwrap();
    let mut best = [Duration::MAX; CASES.len()];
    let mut sent_by = [0u64; CASES.len()];
    let cases: Vec<usize> = if latency > 0 { vec![0, 1, 4] } else { vec![0, 1, 2, 3] };
    for round in 0..rounds {
        for k in 0..cases.len() {
            let i = cases[(k + round) % cases.len()];
            let case = &CASES[i];
            let before = sent(&runtime, server.port());
            let started = Instant::now();
            let rows = runtime.block_on(run_case(server.port(), case));
            best[i] = best[i].min(started.elapsed());
            let after = sent(&runtime, server.port());
            let expected = if case.name.starts_with("aggregate") { partitions } else { 1 };
            assert_eq!(rows, expected, "{}", case.name);
            if round == 0 {
                sent_by[i] = after - before;
            }
        }
    }
    println!(
        "{entities} entities in {partitions} partitions, {latency} ms a page, minimum of {rounds} interleaved rounds:"
    );
    for &i in &cases {
        let case = &CASES[i];
        println!("  {:<22} {:>9.1} ms  {:>8} entities sent", case.name, best[i].as_secs_f64() * 1e3, sent_by[i]);
    }
    let ratio = |a: usize, b: usize| best[a].as_secs_f64() / best[b].as_secs_f64();
    println!("  aggregate speed-up, 4 partitions against 1: {:.2}x", ratio(0, 1));
    if latency > 0 {
        println!("  aggregate speed-up, 16 partitions against 1: {:.2}x (goal under 30 ms a page: 8x)", ratio(0, 4));
    } else {
        println!("  selective, without pushdown against with: {:.2}x", ratio(3, 2));
    }
}

fn numbers(spec: &str) -> Vec<usize> {
    spec.split(':').map(|n| n.parse().expect("a number")).collect()
}

fn main() {
    if let Ok(spec) = std::env::var("DF_BENCH_SERVE") {
        let n = numbers(&spec);
        let seed = Seed { table: TABLE.to_owned(), entities: n[0], partitions: n[1] };
        let latency_query = Duration::from_millis(n.get(2).copied().unwrap_or(0) as u64);
        let service = Service::new(Options { seed: vec![seed], latency_query, ..Options::default() });
        loopback::serve_child(move |_port| move |request: &Request| service.answer(request));
    }
    if let Ok(spec) = std::env::var("DF_BENCH_SQL") {
        let n = numbers(&spec);
        return compare(n[0], n[1], n[2], n.get(3).copied().unwrap_or(0));
    }
    if let Ok(name) = std::env::var("DF_BENCH_QUERY") {
        let port = std::env::var("DF_BENCH_PORT").expect("DF_BENCH_PORT").parse().expect("a port");
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(4).enable_all().build().unwrap();
        let rows = runtime.block_on(run_case(port, case(&name)));
        return println!("{name}: {rows} rows");
    }
    let spec = std::env::var("DF_BENCH_LOOP")
        .expect("DF_BENCH_LOOP=<operation>:<count>, DF_BENCH_SQL or DF_BENCH_SERVE (see the module docs)");
    let (op, count) = spec.rsplit_once(':').expect("DF_BENCH_LOOP=<operation>:<count>");
    let fixture = Fixture::new();
    for _ in 0..count.parse::<usize>().expect("a count") {
        fixture.run(op);
    }
}
