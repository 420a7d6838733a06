//! What an export costs the client, per entity, beside decoding the same pages: a loopback server answers every
//! query with one recorded page of 1,000 entities of every EDM type (the page of `table-model/benches/client.rs`,
//! read here as dynamic entities), with a continuation while pages remain.
//!
//! Operations, each one page of 1,000 entities:
//!
//! - `decode/query_as`: the recorded response read with `response::query_as` into a `#[derive(TableEntity)]`
//!   struct, in process (no HTTP): the cost of decoding the page;
//! - `decode/query`: the same with `response::query` into dynamic `Entity`s, as `tablectl` reads them;
//! - `page/query_as`: the page fetched with a bare `reqwest` call and read with `response::query_as` (the client
//!   benchmark's baseline);
//! - `page/export-jsonl`, `page/export-csv`: what `tablectl export` does for one page: `TableClient::query` into
//!   `Entity`s, each written by the format's writer (into `io::sink()`; csv through its spool file, finished).
//!
//! Modes (`cargo bench -p table-model-cli --bench export --no-run` prints the binary's path):
//!
//! - `EXPORT_BENCH_LOOP=<operation>:<count> valgrind --tool=callgrind <binary>`: runs one operation `count` times,
//!   for instruction counts (the server is a child process, outside valgrind);
//!   `scripts/bench-export.sh` gives the cost of one entity of each and the ratios;
//! - `EXPORT_BENCH_SERVE=<pages> <binary>`: only the server, answering `pages` pages per query then no
//!   continuation (so `tablectl export` ends after `pages` × 1,000 entities); prints its port, and runs until its
//!   standard input closes. `scripts/bench-export.sh` measures `tablectl export`'s peak memory with it.

use futures::TryStreamExt as _;
use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use std::convert::Infallible;
use std::hint::black_box;
use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;
use table_model::client::{TableClient, TableServiceClient, TableServiceClientOptions};
use table_model::response;
use table_model::{AccountKey, Credential, Endpoint, Entity, Query, TableEntity, TableName, TableService};
use table_model_transfer::format::{self, Compression, FileFormat, Sink, WriteOptions};

/// The entity: every EDM type, as in the client and json benchmarks.
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
    }
}

/// The recorded page: minimal metadata, each entity with its `odata.etag` and `Timestamp`.
fn page_body(port: u16) -> Bytes {
    let escaped_etag = ETAG.replace('"', "\\\"");
    let mut page =
        format!(r#"{{"odata.metadata":"http://127.0.0.1:{port}/{ACCOUNT}/$metadata#Customers","value":["#).into_bytes();
    for row in 0..PAGE {
        if row > 0 {
            page.push(b',');
        }
        let body = customer(row).to_json().unwrap().into_bytes();
        page.extend_from_slice(format!(r#"{{"odata.etag":"{escaped_etag}","Timestamp":"{TIMESTAMP}","#).as_bytes());
        page.extend_from_slice(&body[1..]);
    }
    page.extend_from_slice(b"]}");
    Bytes::from(page)
}

// ------------------------------------------------------------------------------------------------------------
// The server (a child process, or on its own for `tablectl`)

fn serve(pages: u64) -> ! {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let page = Arc::new(page_body(port));
        println!("{port}");
        std::io::stdout().flush().unwrap();
        let accept = async {
            loop {
                let Ok((stream, _)) = listener.accept().await else { return };
                let page = page.clone();
                tokio::spawn(async move {
                    let service = service_fn(move |request| answer(request, page.clone(), pages));
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        };
        let parent_gone = tokio::task::spawn_blocking(|| {
            let mut buf = [0u8; 64];
            while std::io::stdin().read(&mut buf).is_ok_and(|n| n > 0) {}
        });
        tokio::select! {
            () = accept => {}
            _ = parent_gone => {}
            () = tokio::time::sleep(Duration::from_secs(60 * 60)) => {}
        }
    });
    std::process::exit(0)
}

/// Every query gets the page; its continuation's `NextRowKey` is the number of the next page.
async fn answer(
    request: hyper::Request<Incoming>,
    page: Arc<Bytes>,
    pages: u64,
) -> Result<hyper::Response<Full<Bytes>>, Infallible> {
    let this: u64 = request
        .uri()
        .query()
        .and_then(|q| q.split('&').find_map(|kv| kv.strip_prefix("NextRowKey=")))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    let mut response = hyper::Response::builder()
        .status(200)
        .header("content-type", "application/json;odata=minimalmetadata;streaming=true;charset=utf-8")
        .header("x-ms-version", "2019-02-02")
        .header("x-ms-request-id", "8c2d6a3e-0002-0036-4b3e-9f8a26000000")
        .header("date", "Mon, 06 May 2024 07:08:10 GMT");
    if this + 1 < pages {
        response = response
            .header("x-ms-continuation-NextPartitionKey", "tenant-0042")
            .header("x-ms-continuation-NextRowKey", (this + 1).to_string());
    }
    Ok(response.body(Full::new((*page).clone())).unwrap())
}

/// The server child; killed and reaped when dropped.
struct ServerProcess {
    child: Child,
    port: u16,
}

impl ServerProcess {
    fn start() -> ServerProcess {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .env("EXPORT_BENCH_SERVE", u64::MAX.to_string())
            .env_remove("EXPORT_BENCH_LOOP")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let port = line.trim().parse().unwrap_or_else(|_| panic!("the server said {line:?}"));
        ServerProcess { child, port }
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

// ------------------------------------------------------------------------------------------------------------
// The operations

struct Fixture {
    runtime: tokio::runtime::Runtime,
    requests: TableService,
    http: reqwest::Client,
    client: TableClient,
    table: TableName,
    query: Query,
    /// The recorded response, for the in-process decodes.
    recorded: http::Response<Bytes>,
    _server: ServerProcess,
}

impl Fixture {
    fn new() -> Fixture {
        let server = ServerProcess::start();
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let url = format!("http://127.0.0.1:{}/{ACCOUNT}", server.port);
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(20))
            .read_timeout(Duration::from_secs(60))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap();
        let requests =
            TableService::new(Endpoint::parse(&url).unwrap(), Credential::SharedKey(AccountKey::development()))
                .with_server_timeout(TableServiceClientOptions::default().try_timeout.unwrap());
        let service = TableServiceClient::new(&url, AccountKey::development(), None).unwrap();
        let table = TableName::from_static("Customers");
        let mut recorded = http::Response::new(page_body(server.port));
        recorded.headers_mut().insert("content-type", "application/json;odata=minimalmetadata".parse().unwrap());
        let fixture = Fixture {
            runtime,
            requests,
            http,
            client: service.table_client(table.clone()),
            table,
            query: Query::new(),
            recorded,
            _server: server,
        };
        fixture.check();
        fixture
    }

    /// Every operation reads the 1,000 entities.
    fn check(&self) {
        assert_eq!(response::query_as::<Customer, _>(&self.recorded).unwrap().entities[999], customer(999));
        let entities = response::query(&self.recorded, None).unwrap().entities;
        assert_eq!(entities.len(), PAGE);
        assert_eq!(Customer::from_entity(entities[999].clone()).unwrap(), customer(999));
        self.runtime.block_on(async {
            assert_eq!(self.page_query_as().await, PAGE);
            assert_eq!(self.export(FileFormat::Jsonl).await, PAGE);
            assert_eq!(self.export(FileFormat::Csv).await, PAGE);
        });
    }

    async fn page_query_as(&self) -> usize {
        let request = self.requests.query(&self.table, &self.query, None).unwrap();
        let request = reqwest::Request::try_from(request).unwrap();
        let mut reply = self.http.execute(request).await.unwrap();
        let status = reply.status();
        let headers = std::mem::take(reply.headers_mut());
        let mut response = http::Response::new(reply.bytes().await.unwrap());
        *response.status_mut() = status;
        *response.headers_mut() = headers;
        black_box(response::query_as::<Customer, _>(&response).unwrap()).entities.len()
    }

    /// One page of `tablectl export`: the client's query into entities, each written.
    async fn export(&self, format: FileFormat) -> usize {
        let options = WriteOptions { format, compression: Compression::None, ..Default::default() };
        let mut writer = format::create_writer(Sink::stream("bench", std::io::sink()), &options).unwrap();
        let mut pages = self.client.query::<Entity>(&self.query, None).unwrap().into_pages();
        let page = pages.try_next().await.unwrap().unwrap();
        for entity in &page.entities {
            writer.write(entity).unwrap();
        }
        black_box(writer.finish().unwrap()).entities as usize
    }

    fn run(&self, op: &str) {
        match op {
            "decode/query_as" => drop(black_box(response::query_as::<Customer, _>(&self.recorded).unwrap())),
            "decode/query" => drop(black_box(response::query(&self.recorded, None).unwrap())),
            "page/query_as" => drop(self.runtime.block_on(self.page_query_as())),
            "page/export-jsonl" => drop(self.runtime.block_on(self.export(FileFormat::Jsonl))),
            "page/export-csv" => drop(self.runtime.block_on(self.export(FileFormat::Csv))),
            _ => panic!("unknown operation `{op}`"),
        }
    }
}

fn main() {
    if let Ok(pages) = std::env::var("EXPORT_BENCH_SERVE") {
        serve(pages.parse().expect("a number of pages"));
    }
    let spec = std::env::var("EXPORT_BENCH_LOOP")
        .expect("EXPORT_BENCH_LOOP=<operation>:<count> (see the module docs; scripts/bench-export.sh)");
    let (op, count) = spec.rsplit_once(':').expect("EXPORT_BENCH_LOOP=<operation>:<count>");
    let fixture = Fixture::new();
    for _ in 0..count.parse::<usize>().expect("a count") {
        fixture.run(op);
    }
}
