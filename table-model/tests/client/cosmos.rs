//! The client against a loopback server that plays Cosmos DB for Table (`docs/rules.md` §13): a plain HTTP
//! server on 127.0.0.1 (`table_model_test_utils::loopback`) that records every request (method, path, query,
//! headers, body) and answers the responses scripted by each test, in the shapes Cosmos DB answers with (its 429 body, DateTimes with fewer
//! than 7 fraction digits, pages that are not sorted and hold more than 1,000 entities). The tests check each
//! request's shape, what the client makes of the answers, and that what Cosmos DB refuses is never sent.
#![cfg(all(feature = "client", feature = "derive"))]

use futures::TryStreamExt as _;
use std::collections::{HashSet, VecDeque};
use std::sync::Mutex;
use table_model::client::azure_core::http::{ClientOptions, FixedRetryOptions, RetryOptions};
use table_model::client::{
    BulkOperation, ErrorKind, QueryOptions, TableClient, TableServiceClient, TableServiceClientOptions,
};
use table_model::response::Continuation;
use table_model::{
    AccountKey, BatchErrorKind, DateTime, Endpoint, Entity, IfMatch, PartitionKey, Query, RequestErrorKind, RowKey,
    RuleSet, RuleSetErrorKind, ServiceKind, TableEntity, TableName, UpdateMode,
};
use table_model_test_utils::loopback;

/// One request as the server received it.
#[derive(Clone, Debug)]
struct Seen {
    method: String,
    path: String,
    query: Option<String>,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Seen {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// A scripted answer.
#[derive(Clone, Debug)]
struct Answer {
    status: u16,
    headers: Vec<(&'static str, String)>,
    body: Vec<u8>,
}

impl Answer {
    fn new(status: u16, headers: &[(&'static str, &str)], body: impl Into<Vec<u8>>) -> Self {
        Answer { status, headers: headers.iter().map(|(n, v)| (*n, (*v).to_owned())).collect(), body: body.into() }
    }
}

/// How the server answers: the scripted answers in order, then `rest` for every request after them.
type Rest = fn(&Seen) -> Answer;

struct Script {
    answers: VecDeque<Answer>,
    rest: Option<Rest>,
}

/// The loopback server: stops when dropped, at the end of the test.
struct Server {
    server: loopback::Server,
    port: u16,
}

impl Server {
    async fn start(answers: impl IntoIterator<Item = Answer>, rest: Option<Rest>) -> Self {
        let script = Mutex::new(Script { answers: answers.into_iter().collect(), rest });
        let server = loopback::Server::http(move |request: &loopback::Request| answer(&seen(request), &script)).await;
        Server { port: server.port(), server }
    }

    fn seen(&self) -> Vec<Seen> {
        self.server.seen().iter().map(seen).collect()
    }

    /// A client of this server as a Cosmos DB for Table account, with short fixed retry delays.
    fn client(&self) -> TableClient {
        let endpoint = Endpoint::with_account(&format!("http://127.0.0.1:{}", self.port), "acct").unwrap();
        assert_eq!(endpoint.kind(), ServiceKind::Storage, "only the options make it Cosmos");
        let retry = RetryOptions::fixed(FixedRetryOptions {
            delay: table_model::client::azure_core::time::Duration::milliseconds(5),
            max_retries: 3,
            ..Default::default()
        });
        let options = TableServiceClientOptions {
            client_options: ClientOptions { retry, ..Default::default() },
            service_kind: Some(ServiceKind::CosmosDb),
            try_timeout: None,
            ..Default::default()
        };
        let service = TableServiceClient::with_endpoint(endpoint, AccountKey::development(), Some(options)).unwrap();
        service.table_client(TableName::from_static("Items"))
    }
}

/// A request as [`Seen`] records it.
fn seen(request: &loopback::Request) -> Seen {
    let headers = request.headers.iter();
    Seen {
        method: request.method.to_string(),
        path: request.path().to_owned(),
        query: request.target.split_once('?').map(|(_, query)| query.to_owned()),
        headers: headers.map(|(n, v)| (n.as_str().to_owned(), v.to_str().unwrap().to_owned())).collect(),
        body: request.body.to_vec(),
    }
}

/// The next scripted answer, or `rest`'s answer to the request once the script is done.
fn answer(request: &Seen, script: &Mutex<Script>) -> loopback::Response {
    let answer = {
        let mut script = script.lock().unwrap();
        match (script.answers.pop_front(), script.rest) {
            (Some(answer), _) => answer,
            (None, Some(rest)) => rest(request),
            (None, None) => Answer::new(599, &[], "no answer scripted"),
        }
    };
    let mut response = http::Response::builder()
        .status(answer.status)
        .header("x-ms-request-id", "3f2c8f4e-0000-0000-0000-000000000000")
        .header("x-ms-version", "2019-02-02");
    for (name, value) in answer.headers {
        response = response.header(name, value);
    }
    response.body(answer.body.into()).unwrap()
}

const JSON: &str = "application/json;odata=minimalmetadata";
/// A Cosmos DB ETag, as its Table API sends it.
const ETAG: &str = "W/\"datetime'2026-11-23T03%3A04%3A05.1200000Z'\"";

/// Cosmos DB's answer to a request over the provisioned throughput (the body the Table API sends).
const TOO_MANY_REQUESTS: &str = r#"{"odata.error":{"code":"TooManyRequests","message":{"lang":"en-us","value":"Message: {\"Errors\":[\"Request rate is large\"]}\r\nActivityId: 5c1f5a2e-0000-0000-0000-000000000000, Request URI: /apps/x/services/y/partitions/z/replicas/1p/, RequestStats: , SDK: Microsoft.Azure.Documents.Common/2.14.0"}}}"#;

fn entity_json(pk: &str, rk: &str) -> String {
    format!(
        r#"{{"odata.etag":"W/\"datetime'2026-11-23T03%3A04%3A05.12Z'\"","PartitionKey":"{pk}","RowKey":"{rk}","Timestamp":"2026-11-23T03:04:05.12Z","N":1}}"#
    )
}

/// An entity of about `kb` KB of JSON, in string properties of 30,000 characters (a string holds at most 32,768).
fn big(pk: &str, rk: &str, kb: usize) -> Entity {
    let mut e = Entity::new(PartitionKey::new(pk).unwrap(), RowKey::new(rk).unwrap());
    for p in 0..kb / 30 {
        e.insert(format!("S{p}").parse().unwrap(), "x".repeat(30_000)).unwrap();
    }
    e
}

fn entity(pk: &str, rk: &str) -> Entity {
    Entity::new(PartitionKey::new(pk).unwrap(), RowKey::new(rk).unwrap()).with("N".parse().unwrap(), 1).unwrap()
}

#[tokio::test]
async fn merges_are_sent_as_post_with_x_http_method_merge() {
    let written = || Answer::new(204, &[("etag", ETAG)], "");
    let server = Server::start([written(), written(), written()], None).await;
    let table = server.client();
    let e = entity("p", "r").with("Name".parse().unwrap(), "Ada").unwrap();
    let etag = table.upsert(&e, UpdateMode::Merge, None).await.unwrap();
    assert_eq!(etag.as_str(), ETAG);
    let options = table_model::client::UpdateOptions { if_match: Some(IfMatch::Any), ..Default::default() };
    table.update(&e, UpdateMode::Merge, Some(options)).await.unwrap();
    // A replace keeps its own verb.
    table.upsert(&e, UpdateMode::Replace, None).await.unwrap();

    let seen = server.seen();
    assert_eq!(seen.len(), 3);
    for s in &seen[..2] {
        assert_eq!((s.method.as_str(), s.path.as_str()), ("POST", "/Items(PartitionKey='p',RowKey='r')"));
        assert_eq!(s.header("x-http-method"), Some("MERGE"));
        assert_eq!(s.header("content-type"), Some("application/json"));
        assert_eq!(s.body, br#"{"PartitionKey":"p","RowKey":"r","N":1,"Name":"Ada"}"#);
        assert!(s.header("authorization").is_some_and(|a| a.starts_with("SharedKey acct:")), "{s:?}");
    }
    assert_eq!(seen[0].header("if-match"), None);
    assert_eq!(seen[1].header("if-match"), Some("*"));
    assert_eq!((seen[2].method.as_str(), seen[2].header("x-http-method")), ("PUT", None));
}

#[tokio::test]
async fn a_429_is_retried_with_and_without_a_retry_hint() {
    let throttled_with_hint = Answer::new(
        429,
        &[("content-type", "application/json"), ("x-ms-retry-after-ms", "7"), ("x-ms-substatus", "3200")],
        TOO_MANY_REQUESTS,
    );
    let throttled_bare = Answer::new(429, &[("content-type", "application/json")], TOO_MANY_REQUESTS);
    let ok = |rk: &str| Answer::new(200, &[("content-type", JSON), ("etag", ETAG)], entity_json("p", rk));
    let server = Server::start([throttled_with_hint, ok("a"), throttled_bare, ok("b")], None).await;
    let table = server.client();
    let pk = PartitionKey::new("p").unwrap();
    let a: Entity = table.get(&pk, &RowKey::new("a").unwrap(), None).await.unwrap();
    let b: Entity = table.get(&pk, &RowKey::new("b").unwrap(), None).await.unwrap();
    assert_eq!((a.row_key().as_str(), b.row_key().as_str()), ("a", "b"));
    assert_eq!(a.get::<i32>("N").unwrap(), 1);
    assert_eq!(a.etag().map(|e| e.as_str()), Some(ETAG));

    let seen = server.seen();
    let paths: Vec<(&str, &str)> = seen.iter().map(|s| (s.method.as_str(), s.path.as_str())).collect();
    assert_eq!(
        paths,
        [
            ("GET", "/Items(PartitionKey='p',RowKey='a')"),
            ("GET", "/Items(PartitionKey='p',RowKey='a')"),
            ("GET", "/Items(PartitionKey='p',RowKey='b')"),
            ("GET", "/Items(PartitionKey='p',RowKey='b')"),
        ]
    );

    // Without retries, the 429 is a typed service error that keeps Cosmos DB's code and message.
    let server =
        Server::start([Answer::new(429, &[("content-type", "application/json")], TOO_MANY_REQUESTS)], None).await;
    let endpoint = Endpoint::with_account(&format!("http://127.0.0.1:{}", server.port), "acct").unwrap();
    let options = TableServiceClientOptions {
        client_options: ClientOptions { retry: RetryOptions::none(), ..Default::default() },
        service_kind: Some(ServiceKind::CosmosDb),
        ..Default::default()
    };
    let table = TableServiceClient::with_endpoint(endpoint, AccountKey::development(), Some(options))
        .unwrap()
        .table_client(TableName::from_static("Items"));
    let err = table.get::<Entity>(&pk, &RowKey::new("a").unwrap(), None).await.unwrap_err();
    let service = err.service().expect("a service error");
    assert_eq!(service.status(), 429);
    assert_eq!(service.code(), Some("TooManyRequests"));
    assert!(
        service.message().starts_with("Message: {\"Errors\":[\"Request rate is large\"]}"),
        "{}",
        service.message()
    );
    assert_eq!(service.request_id(), Some("3f2c8f4e-0000-0000-0000-000000000000"));
    assert_eq!(server.seen().len(), 1);
}

/// A page of entities in the order given, with the continuation headers of the next page.
fn page(keys: &[(String, String)], next: Option<(&str, &str)>) -> Answer {
    let values: Vec<String> = keys.iter().map(|(pk, rk)| entity_json(pk, rk)).collect();
    let mut headers = vec![("content-type", JSON)];
    if let Some((pk, rk)) = next {
        headers.push(("x-ms-continuation-NextPartitionKey", pk));
        headers.push(("x-ms-continuation-NextRowKey", rk));
    }
    Answer::new(200, &headers, format!(r#"{{"odata.metadata":"m","value":[{}]}}"#, values.join(",")))
}

#[tokio::test]
async fn unsorted_pages_of_more_than_1000_are_read_whole_following_continuations() {
    // 1,500 entities in an order that is not by key (Cosmos DB does not sort), then 3 more, also unsorted.
    let first: Vec<(String, String)> =
        (0..1_500u32).map(|i| (format!("p{}", (i * 7) % 5), format!("r{:04}", (i * 733) % 1_500))).collect();
    let second: Vec<(String, String)> =
        [("p9", "z"), ("p0", "a"), ("p4", "m")].iter().map(|(p, r)| ((*p).to_owned(), (*r).to_owned())).collect();
    // Cosmos DB's continuation tokens are opaque: sent back exactly as received.
    let (next_pk, next_rk) = ("+RID:~AbCdEA==#RT:1#TRC:1500#ISV:2#IEO:65567", "0!16!cm93LTE1MDA-");
    let server = Server::start([page(&first, Some((next_pk, next_rk))), page(&second, None)], None).await;
    let table = server.client();
    let all: Vec<Entity> = table.query(&Query::new(), None).unwrap().try_collect().await.unwrap();
    let got: Vec<(String, String)> =
        all.iter().map(|e| (e.partition_key().as_str().to_owned(), e.row_key().as_str().to_owned())).collect();
    let expected: Vec<(String, String)> = first.iter().chain(&second).cloned().collect();
    assert_eq!(got.len(), 1_503);
    assert_eq!(got, expected, "every entity, in the order served");

    let seen = server.seen();
    assert_eq!(seen.len(), 2);
    assert!(seen.iter().all(|s| s.method == "GET" && s.path == "/Items()"));
    assert_eq!(seen[0].query, None);
    let sent: Vec<(String, String)> = url_pairs(seen[1].query.as_deref().unwrap());
    assert_eq!(
        sent,
        [("NextPartitionKey".to_owned(), next_pk.to_owned()), ("NextRowKey".to_owned(), next_rk.to_owned())]
    );

    // Resuming from the continuation of the first page asks for exactly the second.
    let server = Server::start([page(&second, None)], None).await;
    let options =
        QueryOptions { continuation: Some(Continuation::new(next_pk, Some(next_rk.to_owned()))), ..Default::default() };
    let rest: Vec<Entity> = server.client().query(&Query::new(), Some(options)).unwrap().try_collect().await.unwrap();
    assert_eq!(rest.len(), 3);
    assert_eq!(url_pairs(server.seen()[0].query.as_deref().unwrap()), sent);
}

/// A query string's pairs, percent-decoded.
fn url_pairs(query: &str) -> Vec<(String, String)> {
    let decode = |s: &str| percent_encoding::percent_decode_str(s).decode_utf8().unwrap().into_owned();
    query
        .split('&')
        .map(|pair| {
            let (n, v) = pair.split_once('=').unwrap();
            (decode(n), decode(v))
        })
        .collect()
}

#[tokio::test]
async fn datetimes_with_fewer_than_7_fraction_digits_are_read_exactly() {
    let body = r#"{"odata.etag":"W/\"datetime'2026-11-23T03%3A04%3A05.12Z'\"","PartitionKey":"p","RowKey":"r","Timestamp":"2026-11-23T03:04:05.12Z","Two@odata.type":"Edm.DateTime","Two":"2026-11-23T03:04:05.12Z","Seven@odata.type":"Edm.DateTime","Seven":"2026-11-23T03:04:05.1234567Z","One@odata.type":"Edm.DateTime","One":"2026-11-23T03:04:05.1Z"}"#;
    let server = Server::start([Answer::new(200, &[("content-type", JSON), ("etag", ETAG)], body)], None).await;
    let e: Entity =
        server.client().get(&PartitionKey::new("p").unwrap(), &RowKey::new("r").unwrap(), None).await.unwrap();
    let at = |text: &str| DateTime::parse(text).unwrap();
    assert_eq!(e.timestamp(), Some(at("2026-11-23T03:04:05.1200000Z")));
    assert_eq!(e.get::<DateTime>("Two").unwrap(), at("2026-11-23T03:04:05.1200000Z"));
    assert_eq!(e.get::<DateTime>("Seven").unwrap(), at("2026-11-23T03:04:05.1234567Z"));
    assert_eq!(e.get::<DateTime>("One").unwrap(), at("2026-11-23T03:04:05.1000000Z"));
    let mut written = String::new();
    e.get::<DateTime>("Two").unwrap().write_to(&mut written);
    assert_eq!(written, "2026-11-23T03:04:05.1200000Z");
    assert_eq!(server.seen().len(), 1);

    // Read into a derived struct as well.
    #[derive(TableEntity, Debug)]
    struct Timed {
        #[table(partition_key)]
        pk: String,
        #[table(row_key)]
        rk: String,
        #[table(rename = "Two")]
        two: DateTime,
        #[table(rename = "One")]
        one: DateTime,
    }
    let server = Server::start([Answer::new(200, &[("content-type", JSON), ("etag", ETAG)], body)], None).await;
    let t: Timed =
        server.client().get(&PartitionKey::new("p").unwrap(), &RowKey::new("r").unwrap(), None).await.unwrap();
    assert_eq!((t.pk.as_str(), t.rk.as_str()), ("p", "r"));
    assert_eq!((t.two, t.one), (at("2026-11-23T03:04:05.12Z"), at("2026-11-23T03:04:05.1Z")));
}

/// The service-rule refusal an error carries: the rule and the value refused.
fn refusal(err: &table_model::client::Error) -> (RuleSetErrorKind, String) {
    let ErrorKind::Request(e) = err.kind() else { panic!("{err}") };
    let e = match e.kind() {
        RequestErrorKind::Batch(b) => match b.kind() {
            BatchErrorKind::Request(e) => &**e,
            _ => panic!("{err}"),
        },
        _ => e,
    };
    let RequestErrorKind::ServiceRule { error, value } = e.kind() else { panic!("{err}") };
    assert_eq!(error.rules(), RuleSet::CosmosDb);
    (error.kind(), value.clone())
}

#[tokio::test]
async fn what_cosmos_db_refuses_is_never_sent() {
    let server = Server::start([], None).await;
    let table = server.client();

    let rk = "é".repeat(128);
    let err = table.insert(&entity("p", &rk), None).await.unwrap_err();
    let row_too_long = RuleSetErrorKind::KeyTooLong { key: table_model::KeyKind::Row, utf8_len: 256, max: 255 };
    assert_eq!(refusal(&err), (row_too_long, rk.clone()));
    assert!(err.to_string().ends_with("for Cosmos DB for Table: 256 bytes of UTF-8, at most 255 allowed"), "{err}");
    let err = table.get::<Entity>(&PartitionKey::new("p").unwrap(), &RowKey::new(&rk).unwrap(), None).await;
    assert_eq!(refusal(&err.unwrap_err()).0, row_too_long);

    let pk = format!("{}é", "€".repeat(341)); // 1,025 bytes of UTF-8, 342 UTF-16 code units
    let partition_too_long =
        RuleSetErrorKind::KeyTooLong { key: table_model::KeyKind::Partition, utf8_len: 1025, max: 1024 };
    let err = table.upsert(&entity(&pk, "r"), UpdateMode::Merge, None).await.unwrap_err();
    assert_eq!(refusal(&err), (partition_too_long, pk.clone()));
    let err = table.delete_by_keys(&PartitionKey::new(&pk).unwrap(), &RowKey::new("r").unwrap(), None).await;
    assert_eq!(refusal(&err.unwrap_err()).0, partition_too_long);

    let named = |name: &str| entity("p", "r").with(name.parse().unwrap(), "v").unwrap();
    let err = table.upsert(&named("ResourceId"), UpdateMode::Replace, None).await.unwrap_err();
    assert_eq!(refusal(&err), (RuleSetErrorKind::ReservedPropertyName { reserved: "ResourceId" }, "ResourceId".into()));
    let err = table.insert(&named("id"), None).await.unwrap_err();
    assert_eq!(refusal(&err), (RuleSetErrorKind::ReservedPropertyName { reserved: "ID" }, "id".into()));

    // A derived struct whose field is renamed to a reserved name.
    #[derive(TableEntity)]
    struct Doc {
        #[table(partition_key)]
        pk: String,
        #[table(row_key)]
        rk: String,
        #[table(rename = "ResourceId")]
        resource: String,
    }
    let doc = Doc { pk: "p".into(), rk: "r".into(), resource: "x".into() };
    let err = table.insert(&doc, None).await.unwrap_err();
    assert_eq!(refusal(&err).1, "ResourceId");

    // A batch over 2,000,000 bytes (but under Storage's 4 MiB), built without the service's rules: refused
    // when the request is built.
    let p = PartitionKey::new("p").unwrap();
    let mut batch = table_model::Batch::new(TableName::from_static("Items"), p.clone());
    for i in 0..5 {
        batch.insert(&big("p", &format!("{i}"), 450)).unwrap();
    }
    let err = table.submit_transaction(&batch, None).await.unwrap_err();
    let ErrorKind::Request(e) = err.kind() else { panic!("{err}") };
    let RequestErrorKind::Batch(b) = e.kind() else { panic!("{err}") };
    let BatchErrorKind::BodyTooLarge { size, max, rules } = *b.kind() else { panic!("{err}") };
    assert_eq!((max, rules), (2_000_000, RuleSet::CosmosDb));
    assert!(size > 2_000_000 && size < 4 * 1024 * 1024, "{size}");
    assert!(err.to_string().ends_with("Cosmos DB for Table takes at most 2000000 bytes in a batch"), "{err}");
    // The client's own batches refuse the operation that does not fit as it is added.
    let mut own = table.batch(p.clone());
    assert_eq!(own.rules(), RuleSet::CosmosDb);
    let added = (0..5).take_while(|i| own.insert(&big("p", &format!("{i}"), 450)).is_ok()).count();
    assert_eq!(added, 4);
    // Cosmos DB compares table names with case: a batch for `items` is not one for the client's `Items`.
    let mut other_case = table_model::Batch::new(TableName::from_static("items"), p.clone());
    other_case.insert(&entity("p", "r")).unwrap();
    let err = table.submit_transaction(&other_case, None).await.unwrap_err();
    let ErrorKind::Request(e) = err.kind() else { panic!("{err}") };
    assert!(
        matches!(e.kind(), RequestErrorKind::TableMismatch { batch, client } if batch == "items" && client == "Items")
    );

    assert!(server.seen().is_empty(), "nothing reached the server: {:?}", server.seen().first().map(|s| &s.path));
}

/// Answers a `$batch` with `202` and one `204` per operation of its body.
fn batch_accepted(seen: &Seen) -> Answer {
    let operations = String::from_utf8_lossy(&seen.body).matches("Content-Type: application/http").count();
    let mut reply =
        String::from("--batchresponse_1\r\nContent-Type: multipart/mixed; boundary=changesetresponse_1\r\n\r\n");
    for _ in 0..operations {
        reply.push_str(
            "--changesetresponse_1\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n\
             HTTP/1.1 204 No Content\r\nETag: W/\"datetime'2026-11-23T03%3A04%3A05.12Z'\"\r\n\r\n\r\n",
        );
    }
    reply.push_str("--changesetresponse_1--\r\n--batchresponse_1--\r\n");
    Answer::new(202, &[("content-type", "multipart/mixed; boundary=batchresponse_1")], reply)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bulk_writes_split_transactions_at_2_mb() {
    let server = Server::start([], Some(batch_accepted)).await;
    let table = server.client();
    // 60 entities of about 150 KB each in one partition: about 9 MB in all, which fits in 3 transactions of
    // Storage's 4 MiB but needs at least 5 of Cosmos DB's 2 MB.
    let entities: Vec<Entity> = (0..60).map(|i| big("p", &format!("{i:03}"), 150)).collect();
    let report = table.bulk_write(BulkOperation::Upsert(UpdateMode::Replace), entities, None).await;
    assert!(report.is_complete(), "{:?}", report.failures.first().map(|f| f.error.to_string()));
    assert_eq!(report.written, 60);

    let seen = server.seen();
    assert!(seen.len() >= 5, "{} transactions", seen.len());
    assert_eq!(report.transactions, seen.len() as u64);
    let mut row_keys = Vec::new();
    for s in &seen {
        assert_eq!((s.method.as_str(), s.path.as_str()), ("POST", "/$batch"));
        assert!(s.body.len() <= 2_000_000, "a body of {} bytes", s.body.len());
        let text = String::from_utf8(s.body.clone()).unwrap();
        row_keys.extend(text.split("\"RowKey\":\"").skip(1).map(|r| r.split('"').next().unwrap().to_owned()));
    }
    assert_eq!(report.bytes, seen.iter().map(|s| s.body.len() as u64).sum::<u64>());
    // Nothing lost, nothing twice, in input order (one partition's transactions go one after the other).
    let expected: Vec<String> = (0..60).map(|i| format!("{i:03}")).collect();
    assert_eq!(row_keys, expected);
    assert_eq!(row_keys.iter().collect::<HashSet<_>>().len(), 60);

    // An entity Cosmos DB refuses is reported not sent, and the rest is written.
    let server = Server::start([], Some(batch_accepted)).await;
    let mut entities: Vec<Entity> = (0..5).map(|i| entity("p", &format!("{i}"))).collect();
    entities[2] = entities[2].clone().with("ETag".parse().unwrap(), "x").unwrap();
    let report = server.client().bulk_write(BulkOperation::Insert, entities, None).await;
    assert_eq!(report.written, 4);
    assert_eq!(report.failures.len(), 1);
    let failure = &report.failures[0];
    assert_eq!(failure.entity.row_key().as_str(), "2");
    assert_eq!(failure.cause, table_model::client::FailureCause::NotSent);
    assert!(
        failure.error.to_string().contains("invalid property name \"ETag\" for Cosmos DB for Table"),
        "{}",
        failure.error
    );
    assert_eq!(server.seen().len(), 1);
    assert!(!String::from_utf8_lossy(&server.seen()[0].body).contains("\"RowKey\":\"2\""));
}
