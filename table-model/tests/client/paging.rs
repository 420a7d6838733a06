//! The client's paging, retries and error mapping against a fake transport: an `azure_core` policy at the end of
//! the client's pipeline that records every request it receives and answers canned responses. No server.

#![cfg(feature = "client")]

use async_trait::async_trait;
use azure_core::http::headers::Headers;
use azure_core::http::policies::{Policy, PolicyResult};
use azure_core::http::{
    AsyncRawResponse, ClientOptions, Context, FixedRetryOptions, Request, RetryOptions, StatusCode, Transport,
};
use futures::TryStreamExt as _;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};
use table_model::client::{ErrorKind, QueryOptions, TableClient, TableServiceClient, TableServiceClientOptions};
use table_model::response::Continuation;
use table_model::{auth, AccountKey, Entity, ErrorCode, PartitionKey, Query, RowKey, TableName};

const ENDPOINT: &str = "http://127.0.0.1:10002/devstoreaccount1";

/// One request as the transport received it.
#[derive(Clone, Debug)]
struct Sent {
    method: String,
    path: String,
    query: Option<String>,
    headers: Vec<(String, String)>,
}

impl Sent {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// A canned response.
struct Answer {
    status: u16,
    headers: Vec<(&'static str, String)>,
    body: String,
    /// Before answering, wait until the wall clock is in another second than the request's `x-ms-date`.
    next_second: bool,
}

/// A page of entities `(PartitionKey, RowKey)` and the continuation headers of the next page.
fn page(entities: &[(&str, &str)], next: Option<(&str, Option<&str>)>) -> Answer {
    let values: Vec<String> =
        entities.iter().map(|(pk, rk)| format!(r#"{{"PartitionKey":"{pk}","RowKey":"{rk}"}}"#)).collect();
    let mut headers = vec![("content-type", "application/json;odata=minimalmetadata".to_owned())];
    if let Some((pk, rk)) = next {
        headers.push(("x-ms-continuation-NextPartitionKey", pk.to_owned()));
        if let Some(rk) = rk {
            headers.push(("x-ms-continuation-NextRowKey", rk.to_owned()));
        }
    }
    Answer {
        status: 200,
        headers,
        body: format!(r#"{{"odata.metadata":"m","value":[{}]}}"#, values.join(",")),
        next_second: false,
    }
}

/// A service error.
fn error(status: u16, code: &str) -> Answer {
    Answer {
        status,
        headers: vec![("x-ms-error-code", code.to_owned()), ("x-ms-request-id", "req-1".to_owned())],
        body: format!(r#"{{"odata.error":{{"code":"{code}","message":{{"lang":"en-US","value":"canned {code}"}}}}}}"#),
        next_second: false,
    }
}

/// The transport: records each request, answers the next canned response.
#[derive(Debug, Default)]
struct Fake {
    answers: Mutex<VecDeque<Answer>>,
    sent: Mutex<Vec<Sent>>,
}

impl std::fmt::Debug for Answer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Answer({})", self.status)
    }
}

impl Fake {
    fn new(answers: impl IntoIterator<Item = Answer>) -> Arc<Self> {
        Arc::new(Fake { answers: Mutex::new(answers.into_iter().collect()), sent: Mutex::default() })
    }

    fn sent(&self) -> Vec<Sent> {
        self.sent.lock().unwrap().clone()
    }

    fn queries(&self) -> Vec<Option<String>> {
        self.sent().into_iter().map(|s| s.query).collect()
    }

    fn left(&self) -> usize {
        self.answers.lock().unwrap().len()
    }
}

#[async_trait]
impl Policy for Fake {
    async fn send(&self, _ctx: &Context, request: &mut Request, next: &[Arc<dyn Policy>]) -> PolicyResult {
        assert!(next.is_empty(), "the transport is the last policy");
        let sent = Sent {
            method: request.method().to_string(),
            path: request.url().path().to_owned(),
            query: request.url().query().map(str::to_owned),
            headers: request.headers().iter().map(|(n, v)| (n.as_str().to_owned(), v.as_str().to_owned())).collect(),
        };
        let date = sent.header("x-ms-date").map(str::to_owned);
        self.sent.lock().unwrap().push(sent);
        let answer = self.answers.lock().unwrap().pop_front().expect("a canned answer for every request");
        if answer.next_second {
            let date = date.expect("a dated request");
            while auth::rfc1123(SystemTime::now()) == date {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
        let mut headers = Headers::new();
        for (name, value) in answer.headers {
            headers.insert(name.to_owned(), value);
        }
        Ok(AsyncRawResponse::from_bytes(StatusCode::from(answer.status), headers, answer.body.into_bytes()))
    }
}

/// A client of the fake service. No per-try timeout, so that requests carry no `timeout` parameter and the
/// queries below are exactly the paging parameters (`the_per_try_timeout_is_sent_as_the_service_timeout`
/// checks the default).
fn client_with(fake: &Arc<Fake>, retry: RetryOptions) -> TableClient {
    let options = TableServiceClientOptions {
        client_options: ClientOptions {
            transport: Some(Transport::with_policy(fake.clone())),
            retry,
            ..Default::default()
        },
        try_timeout: None,
        ..Default::default()
    };
    let service = TableServiceClient::new(ENDPOINT, AccountKey::development(), Some(options)).unwrap();
    service.table_client(TableName::from_static("Items"))
}

/// A client without retries.
fn client(fake: &Arc<Fake>) -> TableClient {
    client_with(fake, RetryOptions::none())
}

fn rows(entities: &[Entity]) -> Vec<&str> {
    entities.iter().map(|e| e.row_key().as_str()).collect()
}

/// Every request of a query: a GET of `/<account>/Items()` with the protocol's headers.
#[track_caller]
fn assert_query_requests(fake: &Fake) {
    for s in fake.sent() {
        assert_eq!((s.method.as_str(), s.path.as_str()), ("GET", "/devstoreaccount1/Items()"));
        assert_eq!(s.header("x-ms-version"), Some(table_model::X_MS_VERSION));
        assert_eq!(s.header("accept"), Some("application/json;odata=minimalmetadata"));
        assert_eq!(s.header("dataserviceversion"), Some("3.0"));
        assert!(s.header("authorization").is_some_and(|a| a.starts_with("SharedKey devstoreaccount1:")));
    }
}

#[tokio::test]
async fn an_empty_page_that_continues_goes_on() {
    let fake = Fake::new([
        page(&[("p", "a")], Some(("p1", Some("b")))),
        page(&[], Some(("p2", Some("c")))),
        page(&[], Some(("p3", Some("d")))),
        page(&[("p", "d"), ("p", "e")], None),
    ]);
    let all: Vec<Entity> = client(&fake).query(&Query::new(), None).unwrap().try_collect().await.unwrap();
    assert_eq!(rows(&all), ["a", "d", "e"]);
    assert_eq!(
        fake.queries(),
        [
            None,
            Some("NextPartitionKey=p1&NextRowKey=b".to_owned()),
            Some("NextPartitionKey=p2&NextRowKey=c".to_owned()),
            Some("NextPartitionKey=p3&NextRowKey=d".to_owned()),
        ]
    );
    assert_query_requests(&fake);

    // Pages: the empty ones are yielded too, each with its continuation.
    let fake = Fake::new([page(&[], Some(("p1", None))), page(&[("p", "a")], None)]);
    let pages: Vec<_> =
        client(&fake).query::<Entity>(&Query::new(), None).unwrap().into_pages().try_collect().await.unwrap();
    let sizes: Vec<usize> = pages.iter().map(|p| p.entities.len()).collect();
    assert_eq!(sizes, [0, 1]);
    assert_eq!(pages[0].continuation, Some(Continuation::new("p1", None)));
}

#[tokio::test]
async fn a_next_partition_key_alone_is_sent_alone() {
    let fake = Fake::new([page(&[("p1", "a")], Some(("1!8!cDI-", None))), page(&[("p2", "a")], None)]);
    let query = Query::new().top(1);
    let all: Vec<Entity> = client(&fake).query(&query, None).unwrap().try_collect().await.unwrap();
    assert_eq!(all.len(), 2);
    // The value is percent-encoded as any query value (`!` is), and no `NextRowKey` is made up.
    assert_eq!(fake.queries(), [Some("$top=1".to_owned()), Some("$top=1&NextPartitionKey=1%218%21cDI-".to_owned())]);
    assert_query_requests(&fake);
}

#[tokio::test]
async fn after_an_error_the_continuation_points_at_the_failed_page() {
    let fake = Fake::new([
        page(&[("p", "a"), ("p", "b")], Some(("p", Some("c")))),
        error(503, "ServerBusy"),
        // The resumed query.
        page(&[("p", "c")], None),
    ]);
    let table = client(&fake);
    let mut pager = table.query::<Entity>(&Query::new(), None).unwrap();
    assert_eq!(pager.try_next().await.unwrap().unwrap().row_key(), "a");
    assert_eq!(pager.try_next().await.unwrap().unwrap().row_key(), "b");
    let err = pager.try_next().await.unwrap_err();
    assert_eq!(err.error_code(), Some(ErrorCode::ServerBusy));
    let failed_at = Continuation::new("p", Some("c".to_owned()));
    assert_eq!(pager.continuation(), Some(&failed_at));
    assert!(pager.try_next().await.unwrap().is_none(), "the stream ends after an error");
    assert_eq!(fake.sent().len(), 2, "and asks for nothing more");

    // Resuming from it asks for that page again.
    let options = QueryOptions { continuation: Some(failed_at), ..Default::default() };
    let rest: Vec<Entity> = table.query(&Query::new(), Some(options)).unwrap().try_collect().await.unwrap();
    assert_eq!(rows(&rest), ["c"]);
    let failed_page = Some("NextPartitionKey=p&NextRowKey=c".to_owned());
    assert_eq!(fake.queries()[1..], [failed_page.clone(), failed_page]);

    // The same for pages.
    let fake = Fake::new([page(&[("p", "a")], Some(("p", Some("b")))), error(500, "InternalError")]);
    let mut pages = client(&fake).query::<Entity>(&Query::new(), None).unwrap().into_pages();
    pages.try_next().await.unwrap().unwrap();
    assert_eq!(pages.try_next().await.unwrap_err().error_code(), Some(ErrorCode::InternalError));
    assert_eq!(pages.continuation(), Some(&Continuation::new("p", Some("b".to_owned()))));
    assert!(pages.try_next().await.unwrap().is_none());
}

#[tokio::test]
async fn mid_page_the_continuation_points_at_the_start_of_the_current_page() {
    let c1 = Continuation::new("p", Some("c".to_owned()));
    let c2 = Continuation::new("p", Some("e".to_owned()));
    let fake = Fake::new([
        page(&[("p", "a"), ("p", "b")], Some(("p", Some("c")))),
        page(&[("p", "c"), ("p", "d")], Some(("p", Some("e")))),
        page(&[("p", "e")], None),
    ]);
    let table = client(&fake);
    let mut pager = table.query::<Entity>(&Query::new(), None).unwrap();
    let mut at = Vec::new();
    while let Some(e) = pager.try_next().await.unwrap() {
        at.push((e.row_key().to_string(), pager.continuation().cloned()));
    }
    assert_eq!(
        at,
        [
            ("a".to_owned(), None),             // page 1 has more: its start, the query's start
            ("b".to_owned(), Some(c1.clone())), // page 1 done: page 2's start
            ("c".to_owned(), Some(c1.clone())), // page 2 has more: its start
            ("d".to_owned(), Some(c2.clone())),
            ("e".to_owned(), None), // the last page done: nothing left
        ]
    );

    // `into_pages` mid-page starts again at the current page's start: nothing is skipped.
    let fake = Fake::new([
        page(&[("p", "a"), ("p", "b")], Some(("p", Some("c")))),
        page(&[("p", "c"), ("p", "d")], Some(("p", Some("e")))),
        page(&[("p", "c"), ("p", "d")], Some(("p", Some("e")))),
        page(&[("p", "e")], None),
    ]);
    let mut pager = client(&fake).query::<Entity>(&Query::new(), None).unwrap();
    for _ in 0..3 {
        pager.try_next().await.unwrap().unwrap();
    }
    let pages: Vec<_> = pager.into_pages().try_collect().await.unwrap();
    let got: Vec<Vec<&str>> = pages.iter().map(|p| rows(&p.entities)).collect();
    assert_eq!(got, [vec!["c", "d"], vec!["e"]]);
    assert_eq!(
        fake.queries(),
        [
            None,
            Some("NextPartitionKey=p&NextRowKey=c".to_owned()),
            Some("NextPartitionKey=p&NextRowKey=c".to_owned()),
            Some("NextPartitionKey=p&NextRowKey=e".to_owned()),
        ]
    );
}

#[tokio::test]
async fn raw_pages_are_the_bodies_as_sent_followed_and_resumed_as_the_decoded_ones() {
    let answers = || {
        [
            page(&[("p", "a"), ("p", "b")], Some(("p", Some("c")))),
            page(&[], Some(("q", None))),
            page(&[("q", "c")], None),
        ]
    };
    let bodies: Vec<String> = answers().into_iter().map(|a| a.body).collect();
    let fake = Fake::new(answers());
    let query = Query::new().top(2);
    let pages: Vec<_> = client(&fake).query_raw(&query, None).unwrap().try_collect().await.unwrap();
    assert_eq!(
        pages.iter().map(|p| p.body.as_ref()).collect::<Vec<&[u8]>>(),
        bodies.iter().map(|b| b.as_bytes()).collect::<Vec<_>>()
    );
    let continuations: Vec<_> = pages.iter().map(|p| p.continuation.clone()).collect();
    assert_eq!(
        continuations,
        [Some(Continuation::new("p", Some("c".to_owned()))), Some(Continuation::new("q", None)), None]
    );
    // The same requests as the decoded pages'.
    let raw_queries = fake.queries();
    let fake = Fake::new(answers());
    let decoded: Vec<_> =
        client(&fake).query::<Entity>(&query, None).unwrap().into_pages().try_collect().await.unwrap();
    assert_eq!(decoded.len(), 3);
    assert_eq!(fake.queries(), raw_queries);
    assert_query_requests(&fake);

    // A service error ends them, and says where to resume; a body is not decoded, so one that is not JSON is
    // handed over as it came.
    let fake = Fake::new([
        Answer {
            status: 200,
            headers: vec![("x-ms-continuation-NextPartitionKey", "n".to_owned())],
            body: "{".into(),
            next_second: false,
        },
        error(503, "ServerBusy"),
    ]);
    let mut pages = client(&fake).query_raw(&Query::new(), None).unwrap();
    assert_eq!(pages.try_next().await.unwrap().unwrap().body.as_ref(), b"{");
    assert_eq!(pages.try_next().await.unwrap_err().error_code(), Some(ErrorCode::ServerBusy));
    assert_eq!(pages.continuation(), Some(&Continuation::new("n", None)));
    assert!(pages.try_next().await.unwrap().is_none());
    assert_eq!(fake.sent().len(), 2);

    // A query that breaks a rule is refused before anything is sent.
    let fake = Fake::new([]);
    assert!(client(&fake).query_raw(&Query::new().top(1001), None).is_err());
    assert!(fake.sent().is_empty());
}

#[tokio::test]
async fn query_first_sends_top_and_stops_after_n() {
    let fake = Fake::new([
        page(&[("p", "a"), ("p", "b")], Some(("p", Some("c")))),
        page(&[("p", "c"), ("p", "d"), ("p", "e")], Some(("p", Some("f")))),
        page(&[("p", "f")], None),
    ]);
    let table = client(&fake);
    let filter = table_model::filter::Filter::property("N").ge(1);
    let first: Vec<Entity> = table.query_first(&Query::new().filter(filter), 3, None).await.unwrap();
    assert_eq!(rows(&first), ["a", "b", "c"]);
    assert_eq!(
        fake.queries(),
        [
            Some("$filter=N%20ge%201&$top=3".to_owned()),
            Some("$filter=N%20ge%201&$top=3&NextPartitionKey=p&NextRowKey=c".to_owned()),
        ]
    );
    assert_eq!(fake.left(), 1, "the third page was never asked for");

    // A `$top` of the query's own is kept; n = 0 sends nothing; n over 1,000 asks for pages of 1,000.
    let fake = Fake::new([page(&[("p", "a"), ("p", "b")], Some(("p", Some("c")))), page(&[("p", "c")], None)]);
    let table = client(&fake);
    let all: Vec<Entity> = table.query_first(&Query::new().top(2), 10, None).await.unwrap();
    assert_eq!(rows(&all), ["a", "b", "c"]);
    assert_eq!(fake.queries()[0].as_deref(), Some("$top=2"));
    assert!(table.query_first::<Entity>(&Query::new(), 0, None).await.unwrap().is_empty());
    assert_eq!(fake.sent().len(), 2);
    let fake = Fake::new([page(&[("p", "a")], None)]);
    client(&fake).query_first::<Entity>(&Query::new(), 5000, None).await.unwrap();
    assert_eq!(fake.queries(), [Some("$top=1000".to_owned())]);
}

#[tokio::test]
async fn a_service_error_ends_the_stream_with_a_typed_error() {
    let fake = Fake::new([error(404, "TableNotFound")]);
    let mut pager = client(&fake).query::<Entity>(&Query::new(), None).unwrap();
    let err = pager.try_next().await.unwrap_err();
    assert_eq!(err.error_code(), Some(ErrorCode::TableNotFound));
    assert_eq!(err.status(), Some(404));
    assert!(err.is_not_found());
    let ErrorKind::Service(service) = err.kind() else { panic!("{err:?}") };
    assert_eq!((service.code(), service.request_id()), (Some("TableNotFound"), Some("req-1")));
    assert!(service.message().starts_with("canned TableNotFound"));
    assert!(pager.try_next().await.unwrap().is_none());
    assert!(pager.continuation().is_none(), "the failed page was the first: resume from the start");
    assert_eq!(fake.sent().len(), 1);

    // An unknown code keeps its text; a body that is not a page is a response error.
    let fake = Fake::new([
        error(400, "SomethingNew"),
        Answer { status: 200, headers: vec![], body: "{".into(), next_second: false },
    ]);
    let table = client(&fake);
    let err = table.query_first::<Entity>(&Query::new(), 1, None).await.unwrap_err();
    assert_eq!(err.error_code(), Some(ErrorCode::Other("SomethingNew".into())));
    let err = table.query_first::<Entity>(&Query::new(), 1, None).await.unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::Response(_)), "{err:?}");
}

#[tokio::test]
async fn each_try_is_dated_and_signed_again() {
    let retry = RetryOptions::fixed(FixedRetryOptions {
        delay: azure_core::time::Duration::milliseconds(5),
        max_retries: 3,
        ..Default::default()
    });
    let mut busy = error(503, "ServerBusy");
    busy.next_second = true;
    let written =
        Answer { status: 204, headers: vec![("etag", "W/\"1\"".to_owned())], body: String::new(), next_second: false };
    let fake = Fake::new([busy, written]);
    let table = client_with(&fake, retry);
    let e = Entity::new(PartitionKey::new("p").unwrap(), RowKey::new("O'Brien").unwrap());
    let etag = table.insert(&e, None).await.unwrap();
    assert_eq!(etag.as_str(), "W/\"1\"");

    let sent = fake.sent();
    assert_eq!(sent.len(), 2, "one retry");
    let dates: Vec<&str> = sent.iter().map(|s| s.header("x-ms-date").unwrap()).collect();
    assert_ne!(dates[0], dates[1], "the retry has a date of its own");
    for s in &sent {
        assert_eq!((s.method.as_str(), s.path.as_str()), ("POST", "/devstoreaccount1/Items"));
        // The signature of this try's own date, recomputed from what the transport received.
        let mut signed = http::Request::post(format!("{ENDPOINT}/Items")).body(()).unwrap();
        signed.headers_mut().insert("content-type", s.header("content-type").unwrap().parse().unwrap());
        signed.headers_mut().insert("x-ms-date", s.header("x-ms-date").unwrap().parse().unwrap());
        let expected = format!(
            "SharedKey devstoreaccount1:{}",
            auth::signature(&AccountKey::development(), &auth::string_to_sign(&signed, "devstoreaccount1"))
        );
        assert_eq!(s.header("authorization"), Some(expected.as_str()), "try dated {}", s.header("x-ms-date").unwrap());
    }
    assert_ne!(sent[0].header("authorization"), sent[1].header("authorization"));
}

#[tokio::test]
async fn table_listings_follow_next_table_name() {
    let tables = |names: &[&str], next: Option<&str>| Answer {
        status: 200,
        headers: next.map(|n| vec![("x-ms-continuation-NextTableName", n.to_owned())]).unwrap_or_default(),
        body: format!(
            r#"{{"value":[{}]}}"#,
            names.iter().map(|n| format!(r#"{{"TableName":"{n}"}}"#)).collect::<Vec<_>>().join(",")
        ),
        next_second: false,
    };
    let fake = Fake::new([tables(&["Aaa"], Some("1!8!QmJi")), tables(&[], Some("1!8!Q2Nj")), tables(&["Ccc"], None)]);
    let options = TableServiceClientOptions {
        client_options: ClientOptions {
            transport: Some(Transport::with_policy(fake.clone())),
            retry: RetryOptions::none(),
            ..Default::default()
        },
        try_timeout: None,
        ..Default::default()
    };
    let service = TableServiceClient::new(ENDPOINT, AccountKey::development(), Some(options)).unwrap();
    let names: Vec<TableName> = service.list_tables(&Query::new().top(1), None).unwrap().try_collect().await.unwrap();
    assert_eq!(names, [TableName::from_static("Aaa"), TableName::from_static("Ccc")]);
    let queries = fake.queries();
    assert_eq!(
        queries,
        [
            Some("$top=1".to_owned()),
            Some("$top=1&NextTableName=1%218%21QmJi".to_owned()),
            Some("$top=1&NextTableName=1%218%21Q2Nj".to_owned()),
        ]
    );
    assert!(fake.sent().iter().all(|s| s.method == "GET" && s.path == "/devstoreaccount1/Tables"));
}

#[tokio::test]
async fn the_per_try_timeout_is_sent_as_the_service_timeout() {
    for (try_timeout, expected) in [
        (TableServiceClientOptions::default().try_timeout, Some("timeout=30")),
        (Some(Duration::from_millis(7_500)), Some("timeout=8")),
        (None, None),
    ] {
        let fake = Fake::new([page(&[("p", "a")], None)]);
        let options = TableServiceClientOptions {
            client_options: ClientOptions {
                transport: Some(Transport::with_policy(fake.clone())),
                ..Default::default()
            },
            try_timeout,
            ..Default::default()
        };
        let service = TableServiceClient::new(ENDPOINT, AccountKey::development(), Some(options)).unwrap();
        let table = service.table_client(TableName::from_static("Items"));
        let all: Vec<Entity> = table.query(&Query::new(), None).unwrap().try_collect().await.unwrap();
        assert_eq!(rows(&all), ["a"]);
        assert_eq!(fake.queries(), [expected.map(str::to_owned)], "{try_timeout:?}");
    }
}
