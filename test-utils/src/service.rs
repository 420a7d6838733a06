//! An in-memory Table service on loopback, for one account at a time on a path-style endpoint
//! (`http://127.0.0.1:PORT/devstoreaccount1`, as Azurite serves it: what the SDK, `tablectl` and
//! `azure-data-tables` reach with `TableEndpoint=http://127.0.0.1:PORT/devstoreaccount1`), answering as the
//! service answers, with the service's pace: each answer a delay after its request arrived, the service's own
//! work included ([`Options::latency_query`] a page, [`Options::latency_write`] a write or transaction; only
//! work that takes longer makes an answer later), and writes throttled per partition
//! ([`Options::throttle`]). The benchmarks' server, where the service rather than an emulator's CPU sets the
//! pace; Azurite stays the correctness server.
//!
//! What it serves:
//!
//! - Tables: create (`POST /Tables`; `409 TableAlreadyExists`), list (`GET /Tables`, with a `$filter` on
//!   `TableName`), delete (`DELETE /Tables('name')`); an operation on a table that does not exist is
//!   `404 TableNotFound`. Table names are compared without case, as the service compares them.
//! - Queries (`GET /Table()`): `$filter` (comparisons of any property with a string or `datetime'...'`
//!   literal joined by `and`, `or`, `not`; anything else is `400 InvalidInput` rather than a wrong answer),
//!   `$select`, `$top` (at most 1,000), pages of at most 1,000 entities with the continuation headers
//!   `x-ms-continuation-NextPartitionKey` and `-NextRowKey` and the query parameters that resume them, in key
//!   order (PartitionKey then RowKey, by UTF-16 code unit, `docs/rules.md` §2.3), at the `Accept` header's
//!   metadata level (`nometadata`: no `odata.etag` nor annotations). One entity: `GET /Table(PartitionKey='a',RowKey='b')`.
//! - Writes: insert (`POST /Table`: `201` with the entity, or `204` with `Prefer: return-no-content`;
//!   `409 EntityAlreadyExists`), replace (`PUT`) and merge (`MERGE`, `PATCH`, or `POST` with
//!   `X-HTTP-Method: MERGE`) with `If-Match` (without it, an upsert), delete, and entity group transactions
//!   (`POST /$batch`, `docs/rules.md` §8): atomic, answered `202` with one part per operation, or with the
//!   failed operation's error, its message prefixed with the operation's index, and nothing changed. Each
//!   write sets the entity's `Timestamp` and ETag.
//! - `GET /stats`: what it did, as JSON ([`Stats`]).
//!
//! The throttle is a token bucket per partition (table and PartitionKey) of [`Options::throttle`] entities a
//! second, holding up to a second of them: a write or transaction of `n` entities that finds fewer than `n`
//! (or, past a second's worth, fewer than a second's worth) is `503 ServerBusy`, changing nothing, as the
//! service answers past its target of 2,000 entities a second per partition. Reads are not throttled.
//!
//! It checks no signature, keeps nothing on disk, and stores the table service's properties, access policies
//! and CORS nowhere: those requests are `400`.
//!
//! Layer: harness.
//!
//! ```no_run
//! # async fn demo() {
//! use std::time::Duration;
//! use table_model_test_utils::service::{Options, Seed, Service};
//! let options = Options {
//!     latency_query: Duration::from_millis(30),
//!     throttle: Some(2_000),
//!     seed: vec![Seed { table: "Customers".into(), entities: 10_000, partitions: 40 }],
//!     ..Options::default()
//! };
//! let server = Service::new(options).start().await;
//! println!("TableEndpoint={}", server.endpoint());
//! # }
//! ```

mod batch;
mod filter;
mod reads;
mod store;
mod time;
mod writes;

use crate::entity::Customer;
pub use crate::loopback::Request;
use crate::loopback::{self, Bytes, Response};

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};
use store::{Key, Stored, Table};
use table_model::{DateTime, TableEntity as _};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use writes::Write;

/// The account of the endpoint's path (any first path segment is served as this one account).
pub const ACCOUNT: &str = "devstoreaccount1";
/// The most entities a page holds, and the largest `$top`.
pub const PAGE: usize = 1000;
/// The most operations a transaction holds (`docs/rules.md` §8.1).
pub const TRANSACTION: usize = 100;

/// How the service behaves. The default answers at once and throttles nothing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// How long each answer to a read takes: a page of a query, one entity, the table list.
    pub latency_query: Duration,
    /// How long each answer to a write takes: one entity's write, one transaction, a table's creation.
    pub latency_write: Duration,
    /// Entities a second each partition takes in writes (the service's target is 2,000); `None` for no limit.
    pub throttle: Option<u32>,
    /// Tables made before the first request.
    pub seed: Vec<Seed>,
}

/// A table made at the start: `entities` of the benchmarks' entity ([`Customer::sample`]) spread evenly over
/// `partitions` partitions, PartitionKeys `tenant-00`, `tenant-01`, ... and RowKeys `000000`, `000001`, ...
/// within each, zero-padded to the widest number so that keys sort as numbers do ([`Seed::keys`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seed {
    /// The table's name.
    pub table: String,
    /// How many entities.
    pub entities: usize,
    /// Over how many partitions (at least one).
    pub partitions: usize,
}

impl Seed {
    /// The entities in a partition: the last partition may have fewer, and the last ones none when the entities
    /// do not fill them all (250 entities in 120 partitions fill 84 partitions of 3).
    pub fn per_partition(&self) -> usize {
        self.entities.div_ceil(self.partitions.max(1)).max(1)
    }

    /// The keys of entity `i`, `0 <= i < entities`: `(tenant-<i / per partition>, <i % per partition>)`, at
    /// least 2 and 6 digits.
    ///
    /// ```
    /// # use table_model_test_utils::service::Seed;
    /// let seed = Seed { table: "T".into(), entities: 250, partitions: 120 };
    /// assert_eq!(seed.keys(0), ("tenant-000".to_owned(), "000000".to_owned()));
    /// assert_eq!(seed.keys(249), ("tenant-083".to_owned(), "000000".to_owned()));
    /// ```
    pub fn keys(&self, i: usize) -> (String, String) {
        let per = self.per_partition();
        let digits = |n: usize| n.checked_ilog10().map_or(1, |d| d as usize + 1);
        let (pw, rw) = (digits(self.partitions.max(1) - 1).max(2), digits(per - 1).max(6));
        (format!("tenant-{:0pw$}", i / per), format!("{:0rw$}", i % per))
    }
}

impl FromStr for Seed {
    type Err = String;

    /// `TABLE:ENTITIES:PARTITIONS`, as `table-server --seed` takes it.
    fn from_str(text: &str) -> Result<Seed, String> {
        let mut parts = text.split(':');
        let (Some(table), Some(entities), Some(partitions), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(format!("`{text}` is not TABLE:ENTITIES:PARTITIONS"));
        };
        let number = |s: &str, what| s.parse::<usize>().map_err(|e| format!("{what} `{s}` in `{text}`: {e}"));
        let seed = Seed {
            table: table.to_owned(),
            entities: number(entities, "entities")?,
            partitions: number(partitions, "partitions")?,
        };
        if seed.partitions == 0 || !valid_table_name(table) {
            return Err(format!("`{text}`: a table name of 3 to 63 letters and digits and at least one partition"));
        }
        Ok(seed)
    }
}

/// What the service did since it started: every count of `GET /stats`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stats {
    /// Requests answered (not counting `/stats`).
    pub requests: u64,
    /// Pages answered: each query page and each entity read.
    pub pages: u64,
    /// Entities sent in pages.
    pub entities_sent: u64,
    /// Writes that succeeded: single-entity writes and transactions.
    pub transactions: u64,
    /// Entities those writes inserted, changed or deleted.
    pub entities_written: u64,
    /// Writes refused with `503 ServerBusy` by the throttle.
    pub throttled: u64,
    /// Bytes of the bodies of every answer: what a client received, less the status lines and headers.
    pub bytes_sent: u64,
}

const STAT_NAMES: [&str; 7] =
    ["requests", "pages", "entities_sent", "transactions", "entities_written", "throttled", "bytes_sent"];

impl Stats {
    fn fields(&self) -> [u64; 7] {
        [
            self.requests,
            self.pages,
            self.entities_sent,
            self.transactions,
            self.entities_written,
            self.throttled,
            self.bytes_sent,
        ]
    }

    /// The counts as the JSON object `GET /stats` answers with.
    pub fn to_json(&self) -> String {
        let members: Vec<String> = STAT_NAMES.iter().zip(self.fields()).map(|(n, v)| format!("\"{n}\":{v}")).collect();
        format!("{{{}}}", members.join(","))
    }

    /// Reads [`Stats::to_json`]'s object back; `None` for anything else.
    pub fn from_json(text: &str) -> Option<Stats> {
        let json: serde_json::Value = serde_json::from_str(text).ok()?;
        let get = |name: &str| json.get(name)?.as_u64();
        Some(Stats {
            requests: get("requests")?,
            pages: get("pages")?,
            entities_sent: get("entities_sent")?,
            transactions: get("transactions")?,
            entities_written: get("entities_written")?,
            throttled: get("throttled")?,
            bytes_sent: get("bytes_sent")?,
        })
    }
}

/// The running counts.
#[derive(Debug, Default)]
struct Counters([AtomicU64; 7]);

impl Counters {
    fn add(&self, which: usize, n: u64) {
        self.0[which].fetch_add(n, Ordering::Relaxed);
    }

    fn read(&self) -> Stats {
        let v = |i: usize| self.0[i].load(Ordering::Relaxed);
        Stats {
            requests: v(0),
            pages: v(1),
            entities_sent: v(2),
            transactions: v(3),
            entities_written: v(4),
            throttled: v(5),
            bytes_sent: v(6),
        }
    }
}

const REQUESTS: usize = 0;
const PAGES: usize = 1;
const SENT: usize = 2;
const TRANSACTIONS: usize = 3;
const WRITTEN: usize = 4;
const THROTTLED: usize = 5;
const BYTES: usize = 6;

/// A partition's token bucket.
#[derive(Debug)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

/// The tables and the throttle's buckets.
#[derive(Debug, Default)]
struct State {
    /// By lowercase name.
    tables: HashMap<String, Table>,
    /// By lowercase table name and PartitionKey.
    buckets: HashMap<(String, String), Bucket>,
    /// The last write's time: each write gets a later one, so that ETags differ.
    last_write: Option<DateTime>,
}

impl State {
    /// The time of a write: now, or a tick past the last write's time when the clock has not moved on.
    fn tick(&mut self) -> DateTime {
        let after_last = self.last_write.and_then(|last| DateTime::from_ticks(last.ticks() + 1).ok());
        let at = after_last.map_or_else(time::now, |after| after.max(time::now()));
        self.last_write = Some(at);
        at
    }
}

/// The in-memory service: [`Service::answer`] answers one request; [`Service::start`] serves them on a
/// loopback port of the current runtime.
#[derive(Debug)]
pub struct Service {
    options: Options,
    state: Mutex<State>,
    counters: Counters,
    request_ids: AtomicU64,
}

/// An error as the service writes it.
#[derive(Debug)]
struct Failure {
    status: u16,
    code: &'static str,
    message: String,
}

fn failure(status: u16, code: &'static str, message: impl Into<String>) -> Failure {
    Failure { status, code, message: message.into() }
}

fn table_not_found() -> Failure {
    failure(404, "TableNotFound", "The table specified does not exist.")
}

fn not_found() -> Failure {
    failure(404, "ResourceNotFound", "The specified resource does not exist.")
}

fn invalid(message: impl std::fmt::Display) -> Failure {
    failure(400, "InvalidInput", format!("One of the request inputs is not valid: {message}"))
}

/// The metadata level of an `Accept` header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Metadata {
    None,
    Minimal,
    Full,
}

impl Metadata {
    fn of(accept: Option<&str>) -> Metadata {
        match accept {
            Some(a) if a.contains("odata=nometadata") => Metadata::None,
            Some(a) if a.contains("odata=fullmetadata") => Metadata::Full,
            _ => Metadata::Minimal,
        }
    }

    fn content_type(self) -> &'static str {
        match self {
            Metadata::None => "application/json;odata=nometadata;streaming=true;charset=utf-8",
            Metadata::Minimal => "application/json;odata=minimalmetadata;streaming=true;charset=utf-8",
            Metadata::Full => "application/json;odata=fullmetadata;streaming=true;charset=utf-8",
        }
    }
}

/// A resource of the account: what follows `/<account>/` in a path, decoded.
#[derive(Debug, PartialEq, Eq)]
enum Resource {
    Tables,
    Table(String),
    Batch,
    Entities(String),
    Entity(String, Key),
}

impl Resource {
    /// Reads a resource; `None` for a path the service does not serve.
    fn parse(path: &str) -> Option<Resource> {
        let decoded = percent_encoding::percent_decode_str(path).decode_utf8().ok()?;
        let path = decoded.as_ref();
        Some(match path {
            "Tables" | "Tables()" => Resource::Tables,
            "$batch" => Resource::Batch,
            _ if path.starts_with("Tables('") && path.ends_with("')") => {
                Resource::Table(path["Tables('".len()..path.len() - 2].to_owned())
            }
            _ => match path.split_once('(') {
                None => Resource::Entities(path.to_owned()),
                Some((table, ")")) => Resource::Entities(table.to_owned()),
                Some((table, rest)) => {
                    let rest = rest.strip_prefix("PartitionKey=")?;
                    let (partition, rest) = quoted(rest)?;
                    let rest = rest.strip_prefix(",RowKey=")?;
                    let (row, rest) = quoted(rest)?;
                    (rest == ")").then_some(())?;
                    Resource::Entity(table.to_owned(), Key { partition, row })
                }
            },
        })
    }
}

/// A quoted key (`'O''Brien'`) at the start of `text`: its value and what follows.
fn quoted(text: &str) -> Option<(String, &str)> {
    let mut rest = text.strip_prefix('\'')?;
    let mut value = String::new();
    loop {
        let at = rest.find('\'')?;
        value.push_str(&rest[..at]);
        rest = &rest[at + 1..];
        match rest.strip_prefix('\'') {
            Some(after) => {
                value.push('\'');
                rest = after;
            }
            None => return Some((value, rest)),
        }
    }
}

/// A table name the service accepts: 3 to 63 ASCII letters and digits, starting with a letter.
fn valid_table_name(name: &str) -> bool {
    (3..=63).contains(&name.len())
        && name.starts_with(|c: char| c.is_ascii_alphabetic())
        && name.bytes().all(|b| b.is_ascii_alphanumeric())
}

/// The query parameters, names and values percent-decoded.
fn parameters(query: &str) -> Result<HashMap<String, String>, Failure> {
    let decode = |s: &str| {
        percent_encoding::percent_decode_str(s)
            .decode_utf8()
            .map(|s| s.into_owned())
            .map_err(|e| invalid(format!("the query parameter `{s}` is not UTF-8 once decoded: {e}")))
    };
    let mut out = HashMap::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        out.insert(decode(name)?, decode(value)?);
    }
    Ok(out)
}

impl Service {
    /// A service with `options`, its seeded tables made.
    pub fn new(options: Options) -> Service {
        let mut state = State::default();
        let at = state.tick();
        for seed in &options.seed {
            let json = Customer::sample("p", "r").to_json().expect("the sample entity is valid");
            let body = store::read_body(json.as_bytes()).expect("the encoder writes a JSON object");
            let entity = Stored::new(&body.properties, at);
            let entities: BTreeMap<Key, Stored> = (0..seed.entities)
                .map(|i| {
                    let (partition, row) = seed.keys(i);
                    (Key { partition, row }, entity.clone())
                })
                .collect();
            state.tables.insert(seed.table.to_ascii_lowercase(), Table { name: seed.table.clone(), entities });
        }
        Service { options, state: Mutex::new(state), counters: Counters::default(), request_ids: AtomicU64::new(0) }
    }

    /// Serves the service on a loopback port of the current runtime until the [`Running`] server is dropped.
    ///
    /// # Panics
    /// When no loopback port can be bound.
    pub async fn start(self) -> Running {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("a loopback port");
        let port = listener.local_addr().expect("bound").port();
        let service = Arc::new(self);
        let serving = service.clone();
        let task = tokio::spawn(loopback::serve(listener, move |r: &Request| serving.answer(r)));
        Running { port, service, task }
    }

    /// What it did so far.
    pub fn stats(&self) -> Stats {
        self.counters.read()
    }

    /// The answer to `request` and the delay before it is sent: the latency of a read or a write.
    pub fn answer(&self, request: &Request) -> (Response, Duration) {
        if request.path() == "/stats" {
            let response = self.respond(200, &[("content-type", "application/json")], self.stats().to_json());
            return (response, Duration::ZERO);
        }
        self.counters.add(REQUESTS, 1);
        let write = request.method != http::Method::GET;
        let delay = if write { self.options.latency_write } else { self.options.latency_query };
        let response = self.route(request).unwrap_or_else(|f| self.error(&f, None));
        self.counters.add(BYTES, response.body().len() as u64);
        (response, delay)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn route(&self, request: &Request) -> Result<Response, Failure> {
        let resource = request
            .path()
            .strip_prefix('/')
            .and_then(|p| p.split_once('/'))
            .and_then(|(_, path)| Resource::parse(path))
            .ok_or_else(|| invalid(format!("the loopback service serves no `{}`", request.path())))?;
        let params = parameters(request.query())?;
        if params.contains_key("comp") {
            return Err(invalid("the loopback service keeps no service properties, statistics nor access policies"));
        }
        let metadata = Metadata::of(request.header("accept"));
        let host = request.header("host").unwrap_or("127.0.0.1");
        let method = request.header("x-http-method").unwrap_or(request.method.as_str());
        let no_content = request.header("prefer") == Some("return-no-content");
        match (method, resource) {
            ("GET", Resource::Tables) => self.list_tables(&params, metadata, host),
            ("POST", Resource::Tables) => self.create_table(&request.body, metadata, host, no_content),
            ("DELETE", Resource::Table(name)) => {
                self.lock().tables.remove(&name.to_ascii_lowercase()).ok_or_else(table_not_found)?;
                Ok(self.respond(204, &[], ""))
            }
            ("POST", Resource::Batch) => self.batch(request, host),
            ("GET", Resource::Entities(table)) => self.query(&table, &params, metadata, host),
            ("GET", Resource::Entity(table, key)) => self.get(&table, &key, metadata, host),
            ("POST", Resource::Entities(table)) => {
                let store::Body { properties, partition, row } = store::read_body(&request.body).map_err(invalid)?;
                let (Some(partition), Some(row)) = (partition, row) else {
                    return Err(failure(
                        400,
                        "PropertiesNeedValue",
                        "The values are not specified for all properties in the entity.",
                    ));
                };
                let write = Write::Insert { properties, echo: !no_content };
                self.write_one(&table, Key { partition, row }, write, metadata, host)
            }
            (method @ ("PUT" | "MERGE" | "PATCH"), Resource::Entity(table, key)) => {
                let properties = store::read_body(&request.body).map_err(invalid)?.properties;
                let if_match = request.header("if-match").map(str::to_owned);
                let write = Write::Update { properties, merge: method != "PUT", if_match };
                self.write_one(&table, key, write, metadata, host)
            }
            ("DELETE", Resource::Entity(table, key)) => {
                let write = Write::Delete { if_match: request.header("if-match").map(str::to_owned) };
                self.write_one(&table, key, write, metadata, host)
            }
            (method, _) => Err(invalid(format!("the loopback service does not serve {method} {}", request.path()))),
        }
    }

    // --------------------------------------------------------------------------------------------------------
    // Responses

    fn respond(&self, status: u16, headers: &[(&str, &str)], body: impl Into<Bytes>) -> Response {
        let id = self.request_ids.fetch_add(1, Ordering::Relaxed);
        let mut response = http::Response::builder()
            .status(status)
            .header("x-ms-version", "2019-02-02")
            .header("x-ms-request-id", format!("00000000-0000-0000-0000-{id:012x}"))
            .header("date", time::http_date(time::now()));
        for (name, value) in headers {
            response = response.header(*name, *value);
        }
        response.body(body.into()).expect("valid headers")
    }

    /// The service's JSON error body, its message prefixed with a batch operation's `index`.
    fn error_body(&self, failure: &Failure, index: Option<usize>) -> String {
        let mut message = String::new();
        if let Some(index) = index {
            let _ = write!(message, "{index}:");
        }
        let _ = write!(
            message,
            "{}\nRequestId:{}\nTime:{}",
            failure.message,
            self.request_ids.load(Ordering::Relaxed),
            time::now()
        );
        let message = serde_json::to_string(&message).expect("JSON");
        format!(r#"{{"odata.error":{{"code":"{}","message":{{"lang":"en-US","value":{message}}}}}}}"#, failure.code)
    }

    fn error(&self, failure: &Failure, index: Option<usize>) -> Response {
        let body = self.error_body(failure, index);
        let headers = [("content-type", Metadata::Minimal.content_type()), ("x-ms-error-code", failure.code)];
        self.respond(failure.status, &headers, body)
    }
}

/// The service running on a loopback port ([`Service::start`]); stops when dropped.
#[derive(Debug)]
pub struct Running {
    port: u16,
    service: Arc<Service>,
    task: JoinHandle<()>,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Running {
    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `http://127.0.0.1:<port>/devstoreaccount1`: the account's endpoint.
    pub fn endpoint(&self) -> String {
        endpoint(self.port)
    }

    /// What it did so far.
    pub fn stats(&self) -> Stats {
        self.service.stats()
    }
}

/// `http://127.0.0.1:<port>/devstoreaccount1`: the endpoint of a service on `port`.
pub fn endpoint(port: u16) -> String {
    format!("http://127.0.0.1:{port}/{ACCOUNT}")
}

/// The connection string of a service on `port` (the development account's key: the service checks none).
pub fn connection_string(port: u16) -> String {
    format!(
        "DefaultEndpointsProtocol=http;AccountName={ACCOUNT};AccountKey={};TableEndpoint={}",
        DEVELOPMENT_KEY,
        endpoint(port)
    )
}

/// The development account's key, which Azurite and every SDK know.
pub const DEVELOPMENT_KEY: &str =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

/// The [`Stats`] of a service on `port` (one in another process: `table-server`, a benchmark's child), read
/// with `GET /stats`.
///
/// # Panics
/// When nothing answers on `port` or the answer is not the service's stats.
pub async fn stats_of(port: u16) -> Stats {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.expect("the service");
    stream.write_all(b"GET /stats HTTP/1.1\r\nhost: stats\r\nconnection: close\r\n\r\n").await.expect("sent");
    let mut reply = String::new();
    stream.read_to_string(&mut reply).await.expect("an answer");
    let body = reply.split_once("\r\n\r\n").map_or("", |(_, body)| body);
    Stats::from_json(body.trim()).unwrap_or_else(|| panic!("not the service's stats: {reply}"))
}
