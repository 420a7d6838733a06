//! What an export costs the client, per entity, beside decoding the same pages: a loopback server answers every
//! query with one recorded page of 1,000 entities of every EDM type (`table_model_test_utils::entity`, the page of
//! `table-model/benches/client.rs`, read here as dynamic entities), with a continuation while pages remain.
//!
//! Operations, each one page of 1,000 entities:
//!
//! - `decode/query_as`: the recorded response read with `response::query_as` into a `#[derive(TableEntity)]`
//!   struct, in process (no HTTP): the cost of decoding the page;
//! - `decode/query`: the same with `response::query` into dynamic `Entity`s, as `tablectl` reads them;
//! - `page/query_as`: the page fetched with a bare `reqwest` call and read with `response::query_as` (the client
//!   benchmark's baseline);
//! - `page/export-jsonl`, `page/export-csv`, `page/export-parquet`: what `tablectl export` did for one page
//!   before it copied the JSON, and still does in csv and Parquet: `TableClient::query` into `Entity`s, each
//!   written by the format's writer (into `io::sink()`; csv through its spool file, Parquet with the page's
//!   columns given, as `--schema` gives them, so that the entities are written as after the first 1,000 of a
//!   table, which the writer holds to infer the columns from);
//! - `page/export-csv-rows`: what `tablectl export` does for one page in csv: `TableClient::query_read` with the
//!   page read straight into the fields of its rows by `CsvRows` (no `Entity` built), each row written by the
//!   writer (`write_csv_row`);
//! - `page/export-parquet-values`: what `tablectl export` does for one page in Parquet: `TableClient::query_read`
//!   with the page read into its entities' keys and typed values by `ValuesPage` (no `Entity` built), each
//!   written by the writer (`write_values`), the columns given as for `page/export-parquet`;
//! - `page/export-jsonl-copy`: what `tablectl export` does for one page in jsonl: `TableClient::query_read`
//!   with the page read by `EncodedPage`, each entity's JSON written by the writer (`write_encoded`);
//! - `digest/sha256`: the SHA-256 of the page's JSON lines (the file's bytes, which the writer hashes for the
//!   manifest), alone.
//!
//! An export operation writes every page of its loop into one file, finished after the loop, as `tablectl
//! export` writes a table's pages into one file: a Parquet file's row groups (8,192 rows, each column chunk with
//! its zstd contexts) and footer, and the csv spool, cost what they cost a whole export, not once a page.
//!
//! Modes (`cargo bench -p table-model-cli --bench export --no-run` prints the binary's path):
//!
//! - `EXPORT_BENCH_LOOP=<operation>:<count> valgrind --tool=callgrind <binary>`: runs one operation `count` times,
//!   for instruction counts (the server is a child process, outside valgrind);
//!   `scripts/bench-export.sh` gives the cost of one entity of each and the ratios (with and without the
//!   SHA-256 of the export's writer, which callgrind leaves out with `--toggle-collect`);
//! - the same without valgrind prints the loop's user time (this process's, not the server's) in nanoseconds on
//!   standard error, `user_ns=<n>`: the cost with the CPU's SHA extensions, which valgrind hides;
//! - `EXPORT_BENCH_SERVE=<pages> <binary>`: only the server, answering `pages` pages per query then no
//!   continuation (so `tablectl export` ends after `pages` × 1,000 entities); prints its port, and runs until its
//!   standard input closes. `scripts/bench-export.sh` measures `tablectl export`'s peak memory with it.

use futures::TryStreamExt as _;
use std::hint::black_box;
use table_model::client::{TableClient, TableServiceClient, TableServiceClientOptions};
use table_model::json::EncodedPage;
use table_model::response;
use table_model::{AccountKey, Credential, Endpoint, Entity, Query, TableEntity, TableName, TableService};
use table_model_arrow::infer::Inference;
use table_model_test_utils::entity::{self, Customer, ACCOUNT, PAGE};
use table_model_test_utils::loopback::{self, Bare, Bytes, ChildServer, Request, Response};
use table_model_transfer::format::csv::CsvRows;
use table_model_transfer::format::parquet::ValuesPage;
use table_model_transfer::format::{self, Compression, EntityWriter, FileFormat, Sink, WriteOptions};

/// The operations that export, each into a file of its own ([`Fixture::file`]).
const EXPORTS: [&str; 6] = [
    "page/export-jsonl",
    "page/export-jsonl-copy",
    "page/export-csv",
    "page/export-csv-rows",
    "page/export-parquet",
    "page/export-parquet-values",
];

/// The recorded page: [`PAGE`] entities of every EDM type.
fn page_body(port: u16) -> Bytes {
    let entities: Vec<Customer> = (0..PAGE).map(Customer::row).collect();
    Bytes::from(entity::page(port, &entities))
}

// ------------------------------------------------------------------------------------------------------------
// The server (a child process, or on its own for `tablectl`)

/// Every query gets the page; its continuation's `NextRowKey` is the number of the next page.
fn answer(request: &Request, page: &Bytes, pages: u64) -> Response {
    let this: u64 = request
        .query()
        .split('&')
        .find_map(|kv| kv.strip_prefix("NextRowKey="))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    let next = (this + 1).to_string();
    let mut headers = vec![
        ("content-type", "application/json;odata=minimalmetadata;streaming=true;charset=utf-8"),
        ("date", "Mon, 06 May 2024 07:08:10 GMT"),
    ];
    if this + 1 < pages {
        headers
            .extend([("x-ms-continuation-NextPartitionKey", "tenant-0042"), ("x-ms-continuation-NextRowKey", &next)]);
    }
    loopback::reply(200, &headers, page.clone())
}

// ------------------------------------------------------------------------------------------------------------
// The operations

struct Fixture {
    runtime: tokio::runtime::Runtime,
    requests: TableService,
    http: Bare,
    client: TableClient,
    table: TableName,
    query: Query,
    /// The recorded response, for the in-process decodes.
    recorded: http::Response<Bytes>,
    /// The page's JSON lines, as the export writes them.
    lines: Vec<u8>,
    /// The page's Parquet columns.
    schema: Inference,
    _server: ChildServer,
}

impl Fixture {
    fn new() -> Fixture {
        let server = ChildServer::start("EXPORT_BENCH_SERVE", &u64::MAX.to_string(), &["EXPORT_BENCH_LOOP"]);
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let url = format!("http://127.0.0.1:{}/{ACCOUNT}", server.port());
        let http = Bare::new();
        let requests =
            TableService::new(Endpoint::parse(&url).unwrap(), Credential::SharedKey(AccountKey::development()))
                .with_server_timeout(TableServiceClientOptions::default().try_timeout.unwrap());
        let service = TableServiceClient::new(&url, AccountKey::development(), None).unwrap();
        let table = TableName::from_static("Customers");
        let mut recorded = http::Response::new(page_body(server.port()));
        recorded.headers_mut().insert("content-type", "application/json;odata=minimalmetadata".parse().unwrap());
        let mut lines = Vec::new();
        let mut schema = Inference::new();
        for entity in response::query(&recorded, None).unwrap().entities {
            format::jsonl::write_entity(&entity, &mut lines).unwrap();
            schema.observe(&entity);
        }
        let fixture = Fixture {
            runtime,
            requests,
            http,
            client: service.table_client(table.clone()),
            table,
            query: Query::new(),
            recorded,
            lines,
            schema,
            _server: server,
        };
        fixture.check();
        fixture
    }

    /// Every operation reads the 1,000 entities.
    fn check(&self) {
        assert_eq!(response::query_as::<Customer, _>(&self.recorded).unwrap().entities[999], Customer::row(999));
        let entities = response::query(&self.recorded, None).unwrap().entities;
        assert_eq!(entities.len(), PAGE);
        assert_eq!(Customer::from_entity(entities[999].clone()).unwrap(), Customer::row(999));
        assert_eq!(self.runtime.block_on(self.page_query_as()), PAGE);
        // Each export writes two pages into its file, which then holds both.
        for op in EXPORTS {
            let mut file = self.file(op).expect("an export's file");
            for _ in 0..2 {
                self.run(op, Some(file.as_mut()));
            }
            assert_eq!(file.finish().unwrap().entities, 2 * PAGE as u64, "{op}");
        }
    }

    async fn page_query_as(&self) -> usize {
        let request = self.requests.query(&self.table, &self.query, None).unwrap();
        let response = self.http.send(request).await;
        black_box(response::query_as::<Customer, _>(&response).unwrap()).entities.len()
    }

    /// The file an export operation writes its pages into: `tablectl export` writes a table's pages one after
    /// another into one file, so its per-file costs (the Parquet writer's column chunks and their zstd contexts
    /// once a row group, the footer; the csv spool) are paid at a file's rate, not a page's.
    fn file(&self, op: &str) -> Option<Box<dyn EntityWriter + 'static>> {
        let (format, schema) = match op {
            "page/export-jsonl" | "page/export-jsonl-copy" => (FileFormat::Jsonl, None),
            "page/export-csv" | "page/export-csv-rows" => (FileFormat::Csv, None),
            "page/export-parquet" | "page/export-parquet-values" => (FileFormat::Parquet, Some(self.schema.clone())),
            _ => return None,
        };
        let options = WriteOptions { format, compression: Compression::None, schema };
        Some(format::create_writer(Sink::stream("bench", std::io::sink()), &options).unwrap())
    }

    /// One page of `tablectl export` before it read pages straight into its formats: the client's query into
    /// entities, each written.
    async fn export(&self, writer: &mut dyn EntityWriter) -> usize {
        let mut pages = self.client.query::<Entity>(&self.query, None).unwrap().into_pages();
        let page = pages.try_next().await.unwrap().unwrap();
        for entity in &page.entities {
            writer.write(entity).unwrap();
        }
        page.entities.len()
    }

    /// One page of `tablectl export` in jsonl: the page's JSON read with `EncodedPage`, each entity's line
    /// copied from it.
    async fn export_copy(&self, writer: &mut dyn EntityWriter) -> usize {
        let read = |answer: &http::Response<Bytes>| {
            let mut page = EncodedPage::new();
            let read = page.read(answer.body());
            assert!(read, "the page is in the service's forms");
            Ok(page)
        };
        let mut pages = self.client.query_read(&self.query, None, read).unwrap();
        let page = pages.try_next().await.unwrap().unwrap().body;
        for entity in page.iter() {
            writer.write_encoded(&entity).unwrap();
        }
        page.len()
    }

    /// One page of `tablectl export` in csv: the page read straight into the fields of its entities' rows, each
    /// row written.
    async fn export_rows(&self, writer: &mut dyn EntityWriter) -> usize {
        let read = |answer: &http::Response<Bytes>| {
            let mut rows = CsvRows::new();
            rows.read_page(answer.body())?;
            Ok(rows)
        };
        let mut pages = self.client.query_read(&self.query, None, read).unwrap();
        let rows = pages.try_next().await.unwrap().unwrap().body;
        for row in rows.iter() {
            writer.write_csv_row(&row).unwrap();
        }
        rows.len()
    }

    /// One page of `tablectl export` in Parquet: the page read into its entities' keys and typed values, each
    /// entity written.
    async fn export_values(&self, writer: &mut dyn EntityWriter) -> usize {
        let read = |answer: &http::Response<Bytes>| {
            let mut values = ValuesPage::new();
            values.read_page(answer.body())?;
            Ok(values)
        };
        let mut pages = self.client.query_read(&self.query, None, read).unwrap();
        let values = pages.try_next().await.unwrap().unwrap().body;
        for entity in values.iter() {
            writer.write_values(&entity).unwrap();
        }
        values.len()
    }

    /// Runs `op` once: one page, written into `file` for the exports ([`Fixture::file`]).
    fn run(&self, op: &str, file: Option<&mut (dyn EntityWriter + 'static)>) {
        let written = |export: &dyn Fn(&mut dyn EntityWriter) -> usize| {
            black_box(export(file.expect("an export's file")));
        };
        match op {
            "decode/query_as" => drop(black_box(response::query_as::<Customer, _>(&self.recorded).unwrap())),
            "decode/query" => drop(black_box(response::query(&self.recorded, None).unwrap())),
            "page/query_as" => drop(self.runtime.block_on(self.page_query_as())),
            "page/export-jsonl" | "page/export-csv" | "page/export-parquet" => {
                written(&|w| self.runtime.block_on(self.export(w)))
            }
            "page/export-csv-rows" => written(&|w| self.runtime.block_on(self.export_rows(w))),
            "page/export-parquet-values" => written(&|w| self.runtime.block_on(self.export_values(w))),
            "page/export-jsonl-copy" => written(&|w| self.runtime.block_on(self.export_copy(w))),
            "digest/sha256" => drop(black_box(table_model_transfer::digest::sha256_hex(black_box(&self.lines)))),
            _ => panic!("unknown operation `{op}`"),
        }
    }
}

fn main() {
    if let Ok(pages) = std::env::var("EXPORT_BENCH_SERVE") {
        let pages: u64 = pages.parse().expect("a number of pages");
        loopback::serve_child(|port| {
            let page = page_body(port);
            move |request: &Request| answer(request, &page, pages)
        });
    }
    let spec = std::env::var("EXPORT_BENCH_LOOP")
        .expect("EXPORT_BENCH_LOOP=<operation>:<count> (see the module docs; scripts/bench-export.sh)");
    let (op, count) = spec.rsplit_once(':').expect("EXPORT_BENCH_LOOP=<operation>:<count>");
    let fixture = Fixture::new();
    let start = user_ns();
    let mut file = fixture.file(op);
    for _ in 0..count.parse::<usize>().expect("a count") {
        fixture.run(op, file.as_deref_mut());
    }
    if let Some(file) = file {
        black_box(file.finish().unwrap());
    }
    eprintln!("user_ns={}", user_ns() - start);
}

/// This process's user time so far, in nanoseconds (`utime` of `/proc/self/stat`, in clock ticks of 10 ms: the
/// script runs loops of seconds).
fn user_ns() -> u64 {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("/proc/self/stat");
    // The fields after the command's `(name)`, which may hold spaces: utime is the 14th field, the 12th after it.
    let after = &stat[stat.rfind(')').expect("(comm)") + 2..];
    let ticks: u64 = after.split(' ').nth(11).and_then(|t| t.parse().ok()).expect("utime");
    ticks * 10_000_000
}
