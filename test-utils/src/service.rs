//! An in-memory Table service on loopback, for one account at a time on a path-style endpoint
//! (`http://127.0.0.1:PORT/devstoreaccount1`, as Azurite serves it: what the SDK, `tablectl` and
//! `azure-data-tables` reach with `TableEndpoint=http://127.0.0.1:PORT/devstoreaccount1`), answering as the
//! service answers, with the service's pace: each answer after a delay ([`Options::latency_query`] a page,
//! [`Options::latency_write`] a write or transaction) and writes throttled per partition
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
mod store;
mod time;

use crate::entity::Customer;
pub use crate::loopback::Request;
use crate::loopback::{self, Bytes, Response};
use filter::{Filter, Record, Value};
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};
use store::{Key, Property, Row, Stored, Table};
use table_model::TableEntity as _;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

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
    /// The entities in a partition: the last one may have fewer.
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
}

const STAT_NAMES: [&str; 6] = ["requests", "pages", "entities_sent", "transactions", "entities_written", "throttled"];

impl Stats {
    fn fields(&self) -> [u64; 6] {
        [self.requests, self.pages, self.entities_sent, self.transactions, self.entities_written, self.throttled]
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
        })
    }
}

/// The running counts.
#[derive(Debug, Default)]
struct Counters([AtomicU64; 6]);

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
        }
    }
}

const REQUESTS: usize = 0;
const PAGES: usize = 1;
const SENT: usize = 2;
const TRANSACTIONS: usize = 3;
const WRITTEN: usize = 4;
const THROTTLED: usize = 5;

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
    /// The last write's time, in ticks: each write gets a later one, so that ETags differ.
    last_write: i64,
}

impl State {
    fn tick(&mut self) -> i64 {
        self.last_write = time::now().max(self.last_write + 1);
        self.last_write
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

/// A write of one entity, resolved from a request or a batch's operation.
#[derive(Debug)]
enum Write {
    Insert { properties: Vec<Property>, echo: bool },
    Update { properties: Vec<Property>, merge: bool, if_match: Option<String> },
    Delete { if_match: Option<String> },
}

/// What a write does, before it is applied: the entity's new state (`None`: deleted), the status and ETag.
#[derive(Debug)]
struct Change {
    key: Key,
    entity: Option<Stored>,
    status: u16,
    /// An insert answered `201` with the entity (without `Prefer: return-no-content`).
    echo: bool,
    /// An insert.
    inserted: bool,
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

/// A table's name, as its filter reads it.
struct TableRecord<'a>(&'a str);

impl Record for TableRecord<'_> {
    fn value(&self, property: &str) -> Option<Value<'_>> {
        (property == "TableName").then(|| Value::String(self.0.into()))
    }
}

impl Service {
    /// A service with `options`, its seeded tables made.
    pub fn new(options: Options) -> Service {
        let mut state = State::default();
        let ticks = state.tick();
        for seed in &options.seed {
            let json = Customer::sample("p", "r").to_json().expect("the sample entity is valid");
            let (properties, _, _) = store::read_body(json.as_bytes()).expect("the encoder writes a JSON object");
            let entity = Stored::new(&properties, ticks);
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
                let (properties, partition, row) = store::read_body(&request.body).map_err(invalid)?;
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
                let (properties, _, _) = store::read_body(&request.body).map_err(invalid)?;
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
            time::format(time::now())
        );
        let message = serde_json::to_string(&message).expect("JSON");
        format!(r#"{{"odata.error":{{"code":"{}","message":{{"lang":"en-US","value":{message}}}}}}}"#, failure.code)
    }

    fn error(&self, failure: &Failure, index: Option<usize>) -> Response {
        let body = self.error_body(failure, index);
        let headers = [("content-type", Metadata::Minimal.content_type()), ("x-ms-error-code", failure.code)];
        self.respond(failure.status, &headers, body)
    }

    // --------------------------------------------------------------------------------------------------------
    // Tables

    fn list_tables(
        &self,
        params: &HashMap<String, String>,
        metadata: Metadata,
        host: &str,
    ) -> Result<Response, Failure> {
        let filter = params.get("$filter").map(|f| Filter::parse(f)).transpose().map_err(invalid)?;
        let top = top(params)?;
        let after = params.get("NextTableName").map(|n| n.to_ascii_lowercase());
        let state = self.lock();
        let mut names: Vec<(&String, &str)> = state.tables.iter().map(|(k, t)| (k, t.name.as_str())).collect();
        names.sort();
        let mut chosen = names
            .into_iter()
            .filter(|(k, _)| after.as_ref().is_none_or(|a| *k >= a))
            .filter(|(_, name)| filter.as_ref().is_none_or(|f| f.matches(&TableRecord(name))));
        let page: Vec<&str> = chosen.by_ref().take(top).map(|(_, name)| name).collect();
        let next = chosen.next().map(|(k, _)| k.clone());
        let value: Vec<String> =
            page.iter().map(|n| format!("{{\"TableName\":{}}}", serde_json::to_string(n).expect("JSON"))).collect();
        let mut body = String::from("{");
        if metadata != Metadata::None {
            let _ = write!(body, "\"odata.metadata\":\"http://{host}/{ACCOUNT}/$metadata#Tables\",");
        }
        let _ = write!(body, "\"value\":[{}]}}", value.join(","));
        let mut headers = vec![("content-type", metadata.content_type())];
        if let Some(next) = &next {
            headers.push(("x-ms-continuation-NextTableName", next));
        }
        self.counters.add(PAGES, 1);
        Ok(self.respond(200, &headers, body))
    }

    fn create_table(&self, body: &[u8], metadata: Metadata, host: &str, no_content: bool) -> Result<Response, Failure> {
        let json: serde_json::Value =
            serde_json::from_slice(body).map_err(|e| invalid(format!("the body is not JSON: {e}")))?;
        let name = json["TableName"].as_str().ok_or_else(|| invalid("no `TableName` in the body"))?;
        if !valid_table_name(name) {
            return Err(failure(400, "InvalidResourceName", "The specifed resource name contains invalid characters."));
        }
        {
            let mut state = self.lock();
            let entry = state.tables.entry(name.to_ascii_lowercase());
            if matches!(entry, std::collections::hash_map::Entry::Occupied(_)) {
                return Err(failure(409, "TableAlreadyExists", "The table specified already exists."));
            }
            entry.or_insert(Table { name: name.to_owned(), entities: BTreeMap::new() });
        }
        if no_content {
            return Ok(self.respond(204, &[("preference-applied", "return-no-content")], ""));
        }
        let mut body = String::from("{");
        if metadata != Metadata::None {
            let _ = write!(body, "\"odata.metadata\":\"http://{host}/{ACCOUNT}/$metadata#Tables/@Element\",");
        }
        let _ = write!(body, "\"TableName\":{}}}", serde_json::to_string(name).expect("JSON"));
        Ok(self.respond(201, &[("content-type", metadata.content_type())], body))
    }

    // --------------------------------------------------------------------------------------------------------
    // Reads

    fn query(
        &self,
        table: &str,
        params: &HashMap<String, String>,
        metadata: Metadata,
        host: &str,
    ) -> Result<Response, Failure> {
        let filter = params.get("$filter").map(|f| Filter::parse(f)).transpose().map_err(invalid)?;
        let top = top(params)?;
        let select = select(params);
        let state = self.lock();
        let table = state.tables.get(&table.to_ascii_lowercase()).ok_or_else(table_not_found)?;
        let resume = match (params.get("NextPartitionKey"), params.get("NextRowKey")) {
            (Some(partition), row) => {
                let row = row.map_or(Ok(String::new()), |r| untoken(r));
                Some(Key { partition: untoken(partition)?, row: row? })
            }
            (None, _) => None,
        };
        let lowest =
            filter.as_ref().and_then(Filter::lowest).map(|p| Key { partition: p.to_owned(), row: String::new() });
        let start = match (resume, lowest) {
            (Some(a), Some(b)) => a.max(b),
            (a, b) => a.or(b).unwrap_or(Key { partition: String::new(), row: String::new() }),
        };
        let highest = filter.as_ref().and_then(Filter::highest);
        let mut range = table
            .entities
            .range(start..)
            .take_while(|(k, _)| highest.is_none_or(|h| filter::utf16_cmp(&k.partition, h).is_le()))
            .peekable();
        let mut body = Vec::with_capacity(1024);
        body.push(b'{');
        if metadata != Metadata::None {
            body.extend_from_slice(
                format!("\"odata.metadata\":\"http://{host}/{ACCOUNT}/$metadata#{}\",", table.name).as_bytes(),
            );
        }
        body.extend_from_slice(b"\"value\":[");
        let mut sent = 0;
        while sent < top {
            let Some((key, entity)) = range.next() else { break };
            if filter.as_ref().is_some_and(|f| !f.matches(&Row(key, entity))) {
                continue;
            }
            if sent > 0 {
                body.push(b',');
            }
            entity.write(key, metadata != Metadata::None, select.as_deref(), &mut body);
            sent += 1;
        }
        body.extend_from_slice(b"]}");
        let next = range.peek().map(|(k, _)| (*k).clone());
        drop(state);
        let tokens = next.map(|next| (token(&next.partition), token(&next.row)));
        let mut headers = vec![("content-type", metadata.content_type())];
        if let Some((partition, row)) = &tokens {
            headers.push(("x-ms-continuation-NextPartitionKey", partition));
            headers.push(("x-ms-continuation-NextRowKey", row));
        }
        self.counters.add(PAGES, 1);
        self.counters.add(SENT, sent as u64);
        Ok(self.respond(200, &headers, body))
    }

    fn get(&self, table: &str, key: &Key, metadata: Metadata, host: &str) -> Result<Response, Failure> {
        let state = self.lock();
        let table = state.tables.get(&table.to_ascii_lowercase()).ok_or_else(table_not_found)?;
        let entity = table.entities.get(key).ok_or_else(not_found)?;
        let body = element(&table.name, key, entity, metadata, host);
        let etag = time::etag(entity.ticks);
        drop(state);
        self.counters.add(PAGES, 1);
        self.counters.add(SENT, 1);
        Ok(self.respond(200, &[("content-type", metadata.content_type()), ("etag", &etag)], body))
    }

    // --------------------------------------------------------------------------------------------------------
    // Writes

    /// Takes `n` entities from the bucket of `table`'s `partition`: whether the throttle lets the write in.
    fn admit(&self, state: &mut State, table: &str, partition: &str, n: usize) -> bool {
        let Some(rate) = self.options.throttle else { return true };
        let rate = f64::from(rate);
        let now = Instant::now();
        let bucket =
            state.buckets.entry((table.to_owned(), partition.to_owned())).or_insert(Bucket { tokens: rate, at: now });
        bucket.tokens = (bucket.tokens + now.duration_since(bucket.at).as_secs_f64() * rate).min(rate);
        bucket.at = now;
        let n = n as f64;
        if bucket.tokens < n.min(rate) {
            self.counters.add(THROTTLED, 1);
            return false;
        }
        bucket.tokens -= n;
        true
    }

    fn server_busy() -> Failure {
        failure(503, "ServerBusy", "The server is busy.")
    }

    /// What `write` does to the entity at `key` of `entities`, or why it cannot.
    fn plan(entities: &BTreeMap<Key, Stored>, key: Key, write: Write, ticks: i64) -> Result<Change, Failure> {
        let current = entities.get(&key);
        let matches = |if_match: &Option<String>| -> Result<(), Failure> {
            match (if_match.as_deref(), current) {
                (None, _) => Ok(()),
                (Some(_), None) => Err(not_found()),
                (Some("*"), Some(_)) => Ok(()),
                (Some(etag), Some(c)) if etag == time::etag(c.ticks) => Ok(()),
                (Some(_), Some(_)) => Err(failure(
                    412,
                    "UpdateConditionNotSatisfied",
                    "The update condition specified in the request was not satisfied.",
                )),
            }
        };
        Ok(match write {
            Write::Insert { properties, echo } => {
                if current.is_some() {
                    return Err(failure(409, "EntityAlreadyExists", "The specified entity already exists."));
                }
                Change {
                    key,
                    entity: Some(Stored::new(&properties, ticks)),
                    status: if echo { 201 } else { 204 },
                    echo,
                    inserted: true,
                }
            }
            Write::Update { properties, merge, if_match } => {
                matches(&if_match)?;
                let properties = match (merge, current) {
                    (true, Some(current)) => {
                        let mut merged = current.properties();
                        for p in properties {
                            match merged.iter_mut().find(|m| m.name == p.name) {
                                Some(m) => *m = p,
                                None => merged.push(p),
                            }
                        }
                        merged
                    }
                    _ => properties,
                };
                Change { key, entity: Some(Stored::new(&properties, ticks)), status: 204, echo: false, inserted: false }
            }
            Write::Delete { if_match } => {
                matches(&if_match.or(Some("*".to_owned())))?;
                Change { key, entity: None, status: 204, echo: false, inserted: false }
            }
        })
    }

    /// Applies planned changes.
    fn apply(&self, entities: &mut BTreeMap<Key, Stored>, changes: &[Change]) {
        for change in changes {
            match &change.entity {
                Some(entity) => entities.insert(change.key.clone(), entity.clone()),
                None => entities.remove(&change.key),
            };
        }
        self.counters.add(TRANSACTIONS, 1);
        self.counters.add(WRITTEN, changes.len() as u64);
    }

    fn write_one(
        &self,
        table: &str,
        key: Key,
        write: Write,
        metadata: Metadata,
        host: &str,
    ) -> Result<Response, Failure> {
        let mut state = self.lock();
        let ticks = state.tick();
        let lower = table.to_ascii_lowercase();
        if !state.tables.contains_key(&lower) {
            return Err(table_not_found());
        }
        if !self.admit(&mut state, &lower, &key.partition, 1) {
            return Err(Self::server_busy());
        }
        let table = state.tables.get_mut(&lower).expect("checked");
        let change = Self::plan(&table.entities, key, write, ticks)?;
        self.apply(&mut table.entities, std::slice::from_ref(&change));
        let etag = change.entity.as_ref().map(|e| time::etag(e.ticks));
        let body = match (&change.entity, change.echo) {
            (Some(entity), true) => element(&table.name, &change.key, entity, metadata, host),
            _ => String::new(),
        };
        drop(state);
        let mut headers = Vec::new();
        if let Some(etag) = &etag {
            headers.push(("etag", etag.as_str()));
        }
        match change.status {
            201 => headers.push(("content-type", metadata.content_type())),
            _ if change.inserted => headers.push(("preference-applied", "return-no-content")),
            _ => {}
        }
        Ok(self.respond(change.status, &headers, body))
    }

    /// `POST /$batch`: one change set, applied whole or not at all.
    fn batch(&self, request: &Request, host: &str) -> Result<Response, Failure> {
        let body = std::str::from_utf8(&request.body).map_err(|e| invalid(format!("the batch is not UTF-8: {e}")))?;
        let content_type = request.header("content-type").unwrap_or("");
        let operations = batch::read(content_type, body).map_err(invalid)?;
        if operations.is_empty() || operations.len() > TRANSACTION {
            return Err(invalid(format!(
                "a change set holds 1 to {TRANSACTION} operations, this one {}",
                operations.len()
            )));
        }
        // Each operation resolved to its table, key and write; the first that cannot be is the batch's error.
        let mut writes = Vec::with_capacity(operations.len());
        for (index, op) in operations.iter().enumerate() {
            let answer = |f: Failure| self.batch_failure(&f, index);
            let path =
                op.target.split_once("://").map_or(op.target, |(_, rest)| rest.find('/').map_or("", |i| &rest[i..]));
            let Some(resource) =
                path.strip_prefix('/').and_then(|p| p.split_once('/')).and_then(|(_, p)| Resource::parse(p))
            else {
                return Ok(answer(invalid(format!("the operation's URL `{}` is not an entity's", op.target))));
            };
            let method = op.header("x-http-method").unwrap_or(op.method);
            let properties = || store::read_body(op.body.as_bytes()).map_err(invalid);
            let if_match = op.header("if-match").map(str::to_owned);
            let (table, key, write) = match (method, resource) {
                ("POST", Resource::Entities(table)) => {
                    let (properties, partition, row) = match properties() {
                        Ok(p) => p,
                        Err(f) => return Ok(answer(f)),
                    };
                    let (Some(partition), Some(row)) = (partition, row) else {
                        return Ok(answer(failure(
                            400,
                            "PropertiesNeedValue",
                            "The values are not specified for all properties in the entity.",
                        )));
                    };
                    let echo = op.header("prefer") != Some("return-no-content");
                    (table, Key { partition, row }, Write::Insert { properties, echo })
                }
                (method @ ("PUT" | "MERGE" | "PATCH"), Resource::Entity(table, key)) => match properties() {
                    Ok((properties, _, _)) => {
                        (table, key, Write::Update { properties, merge: method != "PUT", if_match })
                    }
                    Err(f) => return Ok(answer(f)),
                },
                ("DELETE", Resource::Entity(table, key)) => (table, key, Write::Delete { if_match }),
                (method, _) => {
                    return Ok(answer(invalid(format!("a change set does not hold `{method} {}`", op.target))))
                }
            };
            writes.push((table.to_ascii_lowercase(), key, write, op.header("accept").map(str::to_owned)));
        }
        let mut state = self.lock();
        let ticks = state.tick();
        let (lower, partition) = (writes[0].0.clone(), writes[0].1.partition.clone());
        for (index, (table, key, _, _)) in writes.iter().enumerate() {
            let refusal = if *table != lower || !state.tables.contains_key(table) {
                Some(if state.tables.contains_key(table) {
                    invalid("every operation of a change set targets one table")
                } else {
                    table_not_found()
                })
            } else if key.partition != partition {
                Some(failure(
                    400,
                    "CommandsInBatchActOnDifferentPartitions",
                    "All commands in a batch must operate on same entity group.",
                ))
            } else if writes[..index].iter().any(|(_, k, _, _)| k.row == key.row) {
                Some(failure(400, "InvalidDuplicateRow", "The batch request contains multiple changes with same row key. An entity can appear only once in a batch request."))
            } else {
                None
            };
            if let Some(refusal) = refusal {
                return Ok(self.batch_failure(&refusal, index));
            }
        }
        if !self.admit(&mut state, &lower, &partition, writes.len()) {
            return Err(Self::server_busy());
        }
        let table = state.tables.get_mut(&lower).expect("checked");
        let mut changes = Vec::with_capacity(writes.len());
        let mut accepts = Vec::with_capacity(writes.len());
        for (index, (_, key, write, accept)) in writes.into_iter().enumerate() {
            match Self::plan(&table.entities, key, write, ticks) {
                Ok(change) => changes.push(change),
                Err(f) => return Ok(self.batch_failure(&f, index)),
            }
            accepts.push(accept);
        }
        self.apply(&mut table.entities, &changes);
        let parts: Vec<batch::Part> = changes
            .iter()
            .zip(accepts)
            .map(|(change, accept)| {
                let mut headers = Vec::new();
                let mut body = String::new();
                if let Some(entity) = &change.entity {
                    if change.echo {
                        let metadata = Metadata::of(accept.as_deref());
                        body = element(&table.name, &change.key, entity, metadata, host);
                        headers.push(("Content-Type", metadata.content_type().to_owned()));
                    } else if change.inserted {
                        headers.push(("Preference-Applied", "return-no-content".to_owned()));
                    }
                    headers.push(("ETag", time::etag(entity.ticks)));
                }
                batch::Part { status: change.status, headers, body }
            })
            .collect();
        drop(state);
        let id = format!("{:032x}", self.request_ids.load(Ordering::Relaxed));
        let (body, content_type) = batch::write(&parts, &id);
        Ok(self.respond(202, &[("content-type", &content_type)], body))
    }

    /// A batch's answer when operation `index` failed: `202` with that operation's error alone.
    fn batch_failure(&self, failure: &Failure, index: usize) -> Response {
        let part = batch::Part {
            status: failure.status,
            headers: vec![("Content-Type", Metadata::Minimal.content_type().to_owned())],
            body: self.error_body(failure, Some(index)),
        };
        let id = format!("{:032x}", self.request_ids.load(Ordering::Relaxed));
        let (body, content_type) = batch::write(&[part], &id);
        self.respond(202, &[("content-type", &content_type)], body)
    }
}

/// A continuation token as the service writes one (opaque to clients, ASCII whatever the key): `1!`, the
/// length of the key's base64, `!`, the base64 (`1!12!dGVuYW50LTAx` for `tenant-01`).
fn token(key: &str) -> String {
    use base64::Engine as _;
    let encoded = base64::engine::general_purpose::STANDARD.encode(key);
    format!("1!{}!{encoded}", encoded.len())
}

/// The key of a continuation token ([`token`]).
fn untoken(token: &str) -> Result<String, Failure> {
    use base64::Engine as _;
    let refused = || invalid(format!("`{token}` is not a continuation token of the loopback service"));
    let mut parts = token.splitn(3, '!');
    let (Some("1"), Some(len), Some(encoded)) = (parts.next(), parts.next(), parts.next()) else {
        return Err(refused());
    };
    if len.parse::<usize>().ok() != Some(encoded.len()) {
        return Err(refused());
    }
    let bytes = base64::engine::general_purpose::STANDARD.decode(encoded).map_err(|_| refused())?;
    String::from_utf8(bytes).map_err(|_| refused())
}

/// `$top`: 1 to 1,000, the page's size without it.
fn top(params: &HashMap<String, String>) -> Result<usize, Failure> {
    match params.get("$top") {
        None => Ok(PAGE),
        Some(top) => match top.parse::<usize>() {
            Ok(n @ 1..=PAGE) => Ok(n),
            _ => Err(invalid(format!("`$top={top}` is not 1 to {PAGE}"))),
        },
    }
}

/// `$select`'s names, each as a JSON string; `None` without one (or `*`).
fn select(params: &HashMap<String, String>) -> Option<Vec<String>> {
    let text = params.get("$select").filter(|s| !s.trim().is_empty() && s.trim() != "*")?;
    Some(text.split(',').map(|n| serde_json::to_string(n.trim()).expect("JSON")).collect())
}

/// One entity's answer: the entity with `odata.metadata` (`#Table/@Element`) first.
fn element(table: &str, key: &Key, entity: &Stored, metadata: Metadata, host: &str) -> String {
    let mut out = Vec::new();
    entity.write(key, metadata != Metadata::None, None, &mut out);
    let object = String::from_utf8(out).expect("the entity is UTF-8");
    if metadata == Metadata::None {
        return object;
    }
    let separator = if object.len() > 2 { "," } else { "" };
    format!("{{\"odata.metadata\":\"http://{host}/{ACCOUNT}/$metadata#{table}/@Element\"{separator}{}", &object[1..])
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
