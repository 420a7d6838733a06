//! What the DataFusion provider costs, against a loopback server answering recorded pages of a keyed table: the
//! benchmarks' entity (`table_model_test_utils::entity`, as tablectl's export benchmark: 12 properties of every EDM
//! type, `odata.etag` and `Timestamp`, ~700 bytes of JSON), `entities` of them spread evenly over `partitions`
//! partitions (`tenant-00`, `tenant-01`, ...; RowKeys `000000`, `000001`, ...).
//!
//! The server answers as the service does for what the provider sends: `$filter` over `PartitionKey` and `RowKey`
//! (comparisons joined by `and`, `or`, `not`: the key ranges of `TableClient::plan_ranges`, its probes and a
//! pushed key filter; any other property is refused with a 400), `$select` (keys, `odata.etag` and the selected
//! properties of the recorded entity), `$top`, pages of at most 1,000 entities and continuations by key. It
//! counts the entities it sends (`GET /stats`).
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
//! - `DF_BENCH_SQL=<entities>:<partitions>:<rounds> <binary>`: wall time of the SQL queries of
//!   `scripts/bench-datafusion.sh time` against a server of that table, interleaved, the minimum of `rounds`;
//!   prints the entities each query made the server send.
//! - `DF_BENCH_QUERY=<case> DF_BENCH_PORT=<port> <binary>`: runs one case once against a server already running
//!   (for `/usr/bin/time -v`: the peak memory of the client alone).
//! - `DF_BENCH_SERVE=<entities>:<partitions> <binary>`: only the server; prints its port, and runs until its
//!   standard input closes.

use datafusion::catalog::TableProvider as _;
use datafusion::prelude::{SessionConfig, SessionContext};
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use table_model::client::{TableClient, TableServiceClient};
use table_model::{response, AccountKey, Query, TableEntity, TableName};
use table_model_arrow::batch::BatchBuilder;
use table_model_datafusion::AzureTable;
use table_model_test_utils::entity::{metadata, Customer, ACCOUNT, ETAG, PAGE, TABLE, TIMESTAMP};
use table_model_test_utils::loopback::{self, Bytes, ChildServer, Request, Response};

// ------------------------------------------------------------------------------------------------------------
// The table and its pages

/// The keys of the table, in key order, and the recorded entity's properties as JSON members.
struct Table {
    keys: Vec<(String, String)>,
    /// `(property, "Name":value[,"Name@odata.type":"Edm.X"])` for each property of the recorded entity.
    members: Vec<(String, String)>,
}

impl Table {
    fn new(entities: usize, partitions: usize) -> Table {
        let per = entities.div_ceil(partitions.max(1));
        let keys = (0..entities).map(|i| (format!("tenant-{:02}", i / per), format!("{:06}", i % per))).collect();
        let json = Customer::sample("p", "r").to_json().unwrap().into_bytes();
        let object: serde_json::Map<String, serde_json::Value> = serde_json::from_slice(&json).unwrap();
        let mut members: Vec<(String, String)> = Vec::new();
        for (name, value) in &object {
            if name == "PartitionKey" || name == "RowKey" {
                continue;
            }
            let property = name.split_once('@').map_or(name.as_str(), |(p, _)| p).to_owned();
            let member = format!("{}:{}", serde_json::to_string(name).unwrap(), value);
            match members.iter_mut().find(|(p, _)| *p == property) {
                Some((_, text)) => {
                    text.push(',');
                    text.push_str(&member);
                }
                None => members.push((property, member)),
            }
        }
        Table { keys, members }
    }

    /// One response body: the entities at `rows`, with the members `select` names (all without one).
    fn page(&self, port: u16, rows: &[usize], select: Option<&[&str]>) -> Vec<u8> {
        let escaped_etag = ETAG.replace('"', "\\\"");
        let selected: Vec<&str> = self
            .members
            .iter()
            .filter(|(p, _)| select.is_none_or(|s| s.contains(&p.as_str())))
            .map(|(_, m)| m.as_str())
            .collect();
        let timestamp = select.is_none_or(|s| s.contains(&"Timestamp"));
        let mut page = format!(r#"{{"odata.metadata":"{}","value":["#, metadata(port)).into_bytes();
        for (i, &row) in rows.iter().enumerate() {
            if i > 0 {
                page.push(b',');
            }
            let (pk, rk) = &self.keys[row];
            page.extend_from_slice(format!(r#"{{"odata.etag":"{escaped_etag}","#).as_bytes());
            if timestamp {
                page.extend_from_slice(format!(r#""Timestamp":"{TIMESTAMP}","#).as_bytes());
            }
            page.extend_from_slice(format!(r#""PartitionKey":"{pk}","RowKey":"{rk}""#).as_bytes());
            for member in &selected {
                page.push(b',');
                page.extend_from_slice(member.as_bytes());
            }
            page.push(b'}');
        }
        page.extend_from_slice(b"]}");
        page
    }
}

/// A `$filter` over the keys: comparisons with string literals joined by `and`, `or` and `not`.
#[derive(Debug)]
enum KeyFilter {
    Compare { row_key: bool, op: &'static str, value: String },
    And(Vec<KeyFilter>),
    Or(Vec<KeyFilter>),
    Not(Box<KeyFilter>),
}

impl KeyFilter {
    fn parse(text: &str) -> Result<KeyFilter, String> {
        let mut tokens = Tokens { text, at: 0 };
        let filter = tokens.or()?;
        match tokens.next()? {
            None => Ok(filter),
            Some(t) => Err(format!("unexpected `{t}` at {}", tokens.at)),
        }
    }

    fn matches(&self, pk: &str, rk: &str) -> bool {
        match self {
            KeyFilter::Compare { row_key, op, value } => {
                let key = if *row_key { rk } else { pk };
                // The table's keys are ASCII: byte order is the service's UTF-16 order.
                let order = key.cmp(value.as_str());
                match *op {
                    "eq" => order.is_eq(),
                    "ne" => order.is_ne(),
                    "gt" => order.is_gt(),
                    "ge" => order.is_ge(),
                    "lt" => order.is_lt(),
                    _ => order.is_le(),
                }
            }
            KeyFilter::And(all) => all.iter().all(|f| f.matches(pk, rk)),
            KeyFilter::Or(any) => any.iter().any(|f| f.matches(pk, rk)),
            KeyFilter::Not(f) => !f.matches(pk, rk),
        }
    }

    /// The least PartitionKey the filter can select (a bound, not exact), so that a page is found by
    /// binary search rather than by a scan of the table.
    fn lowest(&self) -> Option<&str> {
        match self {
            KeyFilter::Compare { row_key: false, op: "eq" | "gt" | "ge", value } => Some(value),
            KeyFilter::And(all) => all.iter().filter_map(KeyFilter::lowest).max(),
            KeyFilter::Or(any) => any.iter().map(KeyFilter::lowest).collect::<Option<Vec<_>>>()?.into_iter().min(),
            _ => None,
        }
    }

    /// The greatest PartitionKey the filter can select (a bound, not exact).
    fn highest(&self) -> Option<&str> {
        match self {
            KeyFilter::Compare { row_key: false, op: "eq" | "lt" | "le", value } => Some(value),
            KeyFilter::And(all) => all.iter().filter_map(KeyFilter::highest).min(),
            KeyFilter::Or(any) => any.iter().map(KeyFilter::highest).collect::<Option<Vec<_>>>()?.into_iter().max(),
            _ => None,
        }
    }
}

struct Tokens<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Tokens<'a> {
    /// The next token: `(`, `)`, a word, or a string literal with its quotes (`''` inside).
    fn next(&mut self) -> Result<Option<&'a str>, String> {
        let rest = &self.text[self.at..];
        let trimmed = rest.trim_start();
        self.at += rest.len() - trimmed.len();
        let len = match trimmed.as_bytes().first() {
            None => return Ok(None),
            Some(b'(' | b')') => 1,
            Some(b'\'') => {
                let mut i = 1;
                loop {
                    match trimmed[i..].find('\'') {
                        None => return Err(format!("unclosed string at {}", self.at)),
                        Some(j) if trimmed[i + j + 1..].starts_with('\'') => i += j + 2,
                        Some(j) => break i + j + 1,
                    }
                }
            }
            Some(_) => trimmed.find([' ', '(', ')']).unwrap_or(trimmed.len()),
        };
        self.at += len;
        Ok(Some(&trimmed[..len]))
    }

    fn peek(&mut self) -> Result<Option<&'a str>, String> {
        let at = self.at;
        let token = self.next();
        self.at = at;
        token
    }

    fn or(&mut self) -> Result<KeyFilter, String> {
        let mut any = vec![self.and()?];
        while self.peek()? == Some("or") {
            self.next()?;
            any.push(self.and()?);
        }
        Ok(if any.len() == 1 { any.pop().unwrap() } else { KeyFilter::Or(any) })
    }

    fn and(&mut self) -> Result<KeyFilter, String> {
        let mut all = vec![self.factor()?];
        while self.peek()? == Some("and") {
            self.next()?;
            all.push(self.factor()?);
        }
        Ok(if all.len() == 1 { all.pop().unwrap() } else { KeyFilter::And(all) })
    }

    fn factor(&mut self) -> Result<KeyFilter, String> {
        match self.next()? {
            Some("not") => Ok(KeyFilter::Not(Box::new(self.factor()?))),
            Some("(") => {
                let inner = self.or()?;
                match self.next()? {
                    Some(")") => Ok(inner),
                    other => Err(format!("expected `)`, found {other:?}")),
                }
            }
            Some(name @ ("PartitionKey" | "RowKey")) => {
                let op = match self.next()? {
                    Some("eq") => "eq",
                    Some("ne") => "ne",
                    Some("gt") => "gt",
                    Some("ge") => "ge",
                    Some("lt") => "lt",
                    Some("le") => "le",
                    other => return Err(format!("expected an operator, found {other:?}")),
                };
                let literal = self.next()?.filter(|l| l.starts_with('\'')).ok_or("expected a string literal")?;
                let value = literal[1..literal.len() - 1].replace("''", "'");
                Ok(KeyFilter::Compare { row_key: name == "RowKey", op, value })
            }
            other => Err(format!("the bench server filters on the keys only, found {other:?}")),
        }
    }
}

// ------------------------------------------------------------------------------------------------------------
// The server (a child process)

struct Server {
    table: Table,
    port: u16,
    /// Entities sent so far.
    sent: AtomicU64,
}

impl Server {
    fn answer(&self, request: &Request) -> Response {
        if request.path() == "/stats" {
            return Response::new(Bytes::from(self.sent.load(Ordering::Relaxed).to_string()));
        }
        match self.query(request.query()) {
            Ok((body, next)) => {
                let mut headers = vec![
                    ("content-type", "application/json;odata=minimalmetadata;streaming=true;charset=utf-8"),
                    ("date", "Mon, 06 May 2024 07:08:10 GMT"),
                ];
                if let Some((pk, rk)) = &next {
                    headers
                        .extend([("x-ms-continuation-NextPartitionKey", &**pk), ("x-ms-continuation-NextRowKey", rk)]);
                }
                loopback::reply(200, &headers, body)
            }
            Err(message) => {
                eprintln!("bench server: {message}");
                loopback::reply(400, &[], message)
            }
        }
    }

    /// The page a query asks for, and the continuation to the next.
    #[allow(clippy::type_complexity)]
    fn query(&self, query: &str) -> Result<(Vec<u8>, Option<(String, String)>), String> {
        let mut filter = None;
        let mut select = None;
        let mut top = PAGE;
        let mut from = (String::new(), String::new());
        for pair in query.split('&') {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            let value = percent_encoding::percent_decode_str(value).decode_utf8().map_err(|e| e.to_string())?;
            match name {
                "$filter" => filter = Some(KeyFilter::parse(&value)?),
                "$select" => select = Some(value.into_owned()),
                "$top" => top = value.parse::<usize>().map_err(|e| e.to_string())?.min(PAGE),
                "NextPartitionKey" => from.0 = value.into_owned(),
                "NextRowKey" => from.1 = value.into_owned(),
                _ => {}
            }
        }
        let keys = &self.table.keys;
        let lowest = filter.as_ref().and_then(KeyFilter::lowest).unwrap_or("");
        let start = keys
            .partition_point(|(pk, rk)| (pk.as_str(), rk.as_str()) < (from.0.as_str(), from.1.as_str()))
            .max(keys.partition_point(|(pk, _)| pk.as_str() < lowest));
        let end = match filter.as_ref().and_then(KeyFilter::highest) {
            Some(highest) => keys.partition_point(|(pk, _)| pk.as_str() <= highest),
            None => keys.len(),
        };
        let mut rows = Vec::new();
        let mut at = start;
        while at < end && rows.len() < top {
            let (pk, rk) = &keys[at];
            if filter.as_ref().is_none_or(|f| f.matches(pk, rk)) {
                rows.push(at);
            }
            at += 1;
        }
        let next = (at < end).then(|| keys[at].clone());
        let select: Option<Vec<&str>> = select.as_deref().map(|s| s.split(',').collect());
        self.sent.fetch_add(rows.len() as u64, Ordering::Relaxed);
        Ok((self.table.page(self.port, &rows, select.as_deref()), next))
    }
}

/// The server in a child process: this binary with `DF_BENCH_SERVE`.
fn start_server(entities: usize, partitions: usize) -> ChildServer {
    let spec = format!("{entities}:{partitions}");
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
    runtime.block_on(async {
        let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
        stream.write_all(b"GET /stats HTTP/1.1\r\nhost: bench\r\nconnection: close\r\n\r\n").await.unwrap();
        let mut reply = String::new();
        stream.read_to_string(&mut reply).await.unwrap();
        reply.rsplit("\r\n\r\n").next().unwrap().trim().parse().unwrap()
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
        let server = start_server(PAGE, 1);
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let client = table_client(server.port());
        let provider = AzureTable::for_entity::<Customer>(client.clone()).unwrap();
        let ctx = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(1));
        // The page the server sends for the whole table (no `$select`).
        let table = Table::new(PAGE, 1);
        let rows: Vec<usize> = (0..PAGE).collect();
        let mut recorded = http::Response::new(Bytes::from(table.page(server.port(), &rows, None)));
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

const CASES: [Case; 4] = [
    Case { name: "aggregate/1", sql: AGGREGATE, partitions: 1, pushdown: true },
    Case { name: "aggregate/4", sql: AGGREGATE, partitions: 4, pushdown: true },
    Case { name: "selective/pushdown", sql: SELECTIVE, partitions: 1, pushdown: true },
    Case { name: "selective/no-pushdown", sql: SELECTIVE, partitions: 1, pushdown: false },
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
fn compare(entities: usize, partitions: usize, rounds: usize) {
    let server = start_server(entities, partitions);
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(4).enable_all().build().unwrap();
    let mut best = [Duration::MAX; CASES.len()];
    let mut sent_by = [0u64; CASES.len()];
    for round in 0..rounds {
        for (i, case) in CASES.iter().enumerate() {
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
    println!("{entities} entities in {partitions} partitions, minimum of {rounds} interleaved rounds:");
    for (i, case) in CASES.iter().enumerate() {
        println!("  {:<22} {:>9.1} ms  {:>8} entities sent", case.name, best[i].as_secs_f64() * 1e3, sent_by[i]);
    }
    let ratio = |a: usize, b: usize| best[a].as_secs_f64() / best[b].as_secs_f64();
    println!("  aggregate speed-up, 4 partitions against 1: {:.2}x", ratio(0, 1));
    println!("  selective, without pushdown against with: {:.2}x", ratio(3, 2));
}

fn numbers(spec: &str) -> Vec<usize> {
    spec.split(':').map(|n| n.parse().expect("a number")).collect()
}

fn main() {
    if let Ok(spec) = std::env::var("DF_BENCH_SERVE") {
        let n = numbers(&spec);
        let table = Table::new(n[0], n[1]);
        loopback::serve_child(move |port| {
            let server = Server { table, port, sent: AtomicU64::new(0) };
            move |request: &Request| server.answer(request)
        });
    }
    if let Ok(spec) = std::env::var("DF_BENCH_SQL") {
        let n = numbers(&spec);
        return compare(n[0], n[1], n[2]);
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
