//! What the client's errors name: the request, the cause and the tries of a call that got no answer (against
//! loopback sockets: a refused port, a server that never answers, a host name that does not resolve, TLS to a
//! plain-HTTP listener), the table and the entity of a table client's call, and the likely causes of a `403`
//! under Shared Key (against a fake transport: an `azure_core` policy at the end of the pipeline).

#![cfg(feature = "client")]

use async_trait::async_trait;
use azure_core::error::ErrorKind as CoreErrorKind;
use azure_core::http::headers::{HeaderName, Headers};
use azure_core::http::policies::{Policy, PolicyResult};
use azure_core::http::{
    AsyncRawResponse, ClientOptions, Context, FixedRetryOptions, Request, RetryOptions, StatusCode, Transport,
};
use futures::TryStreamExt as _;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};
use table_model::client::outcome::UNREACHABLE_TRIES;
use table_model::client::{ErrorKind, TableClient, TableCredential, TableServiceClient, TableServiceClientOptions};
use table_model::{auth, AccountKey, Endpoint, Entity, ErrorCode, PartitionKey, Query, RowKey, SasToken, TableName};

/// A SAS whose signature must never show in a message.
const SECRET: &str = "c2VjcmV0LXNpZ25hdHVyZQ";

fn keys() -> (PartitionKey, RowKey) {
    (PartitionKey::from_static("eu"), RowKey::from_static("O'Brien"))
}

/// A port on 127.0.0.1 where nothing listens (bound, then released).
fn refused_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// The `People` table of a client of `url` (account `acct`), with the default options but these.
fn people(url: &str, credential: impl Into<TableCredential>, options: TableServiceClientOptions) -> TableClient {
    let endpoint = Endpoint::with_account(url, "acct").unwrap();
    let service = TableServiceClient::with_endpoint(endpoint, credential, Some(options)).unwrap();
    service.table_client(TableName::from_static("People"))
}

/// Fast retries: `retries` of them, 10 ms apart.
fn fixed(retries: u32) -> RetryOptions {
    RetryOptions::fixed(FixedRetryOptions {
        delay: azure_core::time::Duration::milliseconds(10),
        max_retries: retries,
        ..Default::default()
    })
}

/// A point read that fails, and how long it took.
async fn failed_get(table: &TableClient) -> (table_model::client::Error, Duration) {
    let (pk, rk) = keys();
    let started = Instant::now();
    let err = table.get::<Entity>(&pk, &rk, None).await.unwrap_err();
    (err, started.elapsed())
}

/// The address of the point read of [`keys`] in `People`.
fn get_url(base: &str) -> String {
    format!("GET {base}/People(PartitionKey='eu',RowKey='O%27%27Brien')")
}

#[tokio::test]
async fn a_refused_connection_fails_within_seconds_naming_the_request_and_the_cause() {
    let port = refused_port();
    let base = format!("http://127.0.0.1:{port}");
    let sas = SasToken::new(&format!("sv=2019-02-02&tn=People&sp=r&sig={SECRET}")).unwrap();
    // The default options: exponential back-off, eight retries over about 80 seconds for other failures.
    let table = people(&base, sas, TableServiceClientOptions::default());
    let (err, took) = failed_get(&table).await;
    assert!(took < Duration::from_secs(20), "a refused connection took {took:?}");

    let ErrorKind::Transport(core) = err.kind() else { panic!("{err:?}") };
    assert_eq!(core.kind(), &CoreErrorKind::Connection, "the kind stays azure_core's");
    let message = err.to_string();
    let expected = format!(
        "table `People`, PartitionKey \"eu\", RowKey \"O'Brien\": {}?timeout=30&sv=2019-02-02&tn=People&sp=r\
         &sig=REDACTED: connection refused: nothing listens at 127.0.0.1:{port} (os error ",
        get_url(&base)
    );
    assert!(message.starts_with(&expected), "{message}\n{expected}");
    assert!(message.contains(&format!("; {UNREACHABLE_TRIES} tries in ")), "{message}");
    assert!(!format!("{err:?}").contains(SECRET), "the signature shows in {err:?}");
}

#[tokio::test]
async fn a_refused_connection_gets_a_few_tries_and_a_lost_one_all_of_them() {
    /// A transport whose every try fails with this error, counting the tries.
    #[derive(Debug)]
    struct Failing {
        tries: AtomicU32,
        error: fn() -> azure_core::Error,
    }

    #[async_trait]
    impl Policy for Failing {
        async fn send(&self, _: &Context, _: &mut Request, _: &[Arc<dyn Policy>]) -> PolicyResult {
            self.tries.fetch_add(1, Ordering::SeqCst);
            Err((self.error)())
        }
    }

    let refused = || {
        let io = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        azure_core::Error::with_error(CoreErrorKind::Connection, io, "tcp connect error")
    };
    let reset = || azure_core::Error::with_message(CoreErrorKind::Io, "connection reset by peer");
    for (error, tries, kind) in [
        (refused as fn() -> azure_core::Error, UNREACHABLE_TRIES, CoreErrorKind::Connection),
        (reset, 9, CoreErrorKind::Io),
    ] {
        let transport = Arc::new(Failing { tries: AtomicU32::new(0), error });
        let options = TableServiceClientOptions {
            client_options: ClientOptions {
                transport: Some(Transport::with_policy(transport.clone())),
                retry: fixed(8),
                ..Default::default()
            },
            ..Default::default()
        };
        let (err, _) = failed_get(&people("http://127.0.0.1:10002", AccountKey::development(), options)).await;
        assert_eq!(transport.tries.load(Ordering::SeqCst), tries, "{err}");
        let ErrorKind::Transport(core) = err.kind() else { panic!("{err:?}") };
        assert_eq!(core.kind(), &kind);
        assert!(err.to_string().contains(&format!("; {tries} tries in ")), "{err}");
    }
}

#[tokio::test]
async fn a_server_that_never_answers_is_a_timeout() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((stream, _)) = listener.accept().await {
            open.push(stream);
        }
    });
    let base = format!("http://127.0.0.1:{port}");
    let options = TableServiceClientOptions {
        client_options: ClientOptions { retry: fixed(1), ..Default::default() },
        try_timeout: Some(Duration::from_millis(300)),
        ..Default::default()
    };
    let (err, _) = failed_get(&people(&base, AccountKey::development(), options)).await;
    let message = err.to_string();
    let expected = format!("{}?timeout=1: no answer within the per-try timeout of 300ms; 2 tries in ", get_url(&base));
    assert!(message.contains(&expected), "{message}\n{expected}");
}

#[tokio::test]
async fn a_host_name_that_does_not_resolve_is_named() {
    // `.invalid` never resolves (RFC 6761).
    let base = "http://no-such-account.invalid";
    let (err, took) = failed_get(&people(base, AccountKey::development(), Default::default())).await;
    assert!(took < Duration::from_secs(20), "a name that does not resolve took {took:?}");
    let message = err.to_string();
    let expected = format!("{}?timeout=30: the host name `no-such-account.invalid` does not resolve: ", get_url(base));
    assert!(message.contains(&expected), "{message}\n{expected}");
    assert!(message.contains(&format!("; {UNREACHABLE_TRIES} tries in ")), "{message}");
}

#[tokio::test]
async fn tls_to_a_plain_http_listener_is_a_failed_handshake() {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut hello = [0; 1024];
                let _ = stream.read(&mut hello).await;
                let _ = stream.write_all(b"HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n").await;
            });
        }
    });
    let base = format!("https://127.0.0.1:{port}");
    let (err, took) = failed_get(&people(&base, AccountKey::development(), Default::default())).await;
    assert!(took < Duration::from_secs(20), "a failed handshake took {took:?}");
    let message = err.to_string();
    let expected = format!(
        "{}?timeout=30: the TLS handshake with 127.0.0.1:{port} failed: received corrupt message of type \
         InvalidContentType; the server does not speak TLS (is the endpoint http?); {UNREACHABLE_TRIES} tries in ",
        get_url(&base)
    );
    assert!(message.contains(&expected), "{message}\n{expected}");
}

/// A transport that answers every try with one status, `x-ms-error-code` and `Date`.
#[derive(Debug)]
struct Answers {
    status: u16,
    code: &'static str,
    /// The `Date` header: the service's clock this far from the request's `x-ms-date`, in seconds.
    clock: Option<i64>,
}

#[async_trait]
impl Policy for Answers {
    async fn send(&self, _: &Context, request: &mut Request, _: &[Arc<dyn Policy>]) -> PolicyResult {
        let mut headers = Headers::new();
        headers.insert("x-ms-error-code", self.code);
        headers.insert("content-type", "application/json;odata=minimalmetadata;streaming=true;charset=utf-8");
        if let Some(offset) = self.clock {
            let sent = request.headers().get_optional_str(&HeaderName::from_static("x-ms-date")).map(str::to_owned);
            let sent = sent.map_or_else(SystemTime::now, |d| {
                let t = chrono::DateTime::parse_from_rfc2822(&d).unwrap();
                SystemTime::UNIX_EPOCH + Duration::from_secs(t.timestamp() as u64)
            });
            let date = match offset {
                o if o >= 0 => sent + Duration::from_secs(o as u64),
                o => sent - Duration::from_secs(o.unsigned_abs()),
            };
            headers.insert("date", auth::rfc1123(date));
        }
        let body = format!(
            r#"{{"odata.error":{{"code":"{}","message":{{"lang":"en-US","value":"The {} message."}}}}}}"#,
            self.code, self.code
        );
        Ok(AsyncRawResponse::from_bytes(StatusCode::from(self.status), headers, body.into_bytes()))
    }
}

fn answering(answers: Answers, credential: impl Into<TableCredential>) -> TableClient {
    let options = TableServiceClientOptions {
        client_options: ClientOptions {
            transport: Some(Transport::with_policy(Arc::new(answers))),
            retry: RetryOptions::none(),
            ..Default::default()
        },
        ..Default::default()
    };
    people("http://127.0.0.1:10002", credential, options)
}

#[tokio::test]
async fn every_error_of_a_table_client_names_its_table_and_an_entity_its_keys() {
    let (pk, rk) = keys();
    let missing_table =
        answering(Answers { status: 404, code: "TableNotFound", clock: None }, AccountKey::development());
    let (err, _) = failed_get(&missing_table).await;
    assert_eq!(err.error_code(), Some(ErrorCode::TableNotFound));
    assert!(matches!(err.kind(), ErrorKind::Service(_)));
    assert_eq!(err.table(), Some(&TableName::from_static("People")));
    assert_eq!(err.keys(), Some((&pk, &rk)));
    assert_eq!(
        err.to_string(),
        "table `People`, PartitionKey \"eu\", RowKey \"O'Brien\": the service refused the request: 404 \
         TableNotFound: The TableNotFound message."
    );

    // A query's page names the table; a table operation too.
    let err = missing_table.query::<Entity>(&Query::new(), None).unwrap().try_next().await.unwrap_err();
    assert_eq!((err.table().map(TableName::as_str), err.keys()), (Some("People"), None));
    assert!(err.to_string().starts_with("table `People`: the service refused the request: 404 TableNotFound"));
    let err = missing_table.delete_table(None).await.unwrap_err();
    assert!(err.to_string().starts_with("table `People`: the service refused the request: 404"), "{err}");

    let missing_entity =
        answering(Answers { status: 404, code: "ResourceNotFound", clock: None }, AccountKey::development());
    for err in [
        missing_entity.delete_by_keys(&pk, &rk, None).await.unwrap_err(),
        missing_entity
            .update(&Entity::new(pk.clone(), rk.clone()), table_model::UpdateMode::Merge, None)
            .await
            .unwrap_err(),
        failed_get(&missing_entity).await.0,
    ] {
        assert_eq!(err.error_code(), Some(ErrorCode::ResourceNotFound));
        assert!(err.is_not_found());
        assert!(
            err.to_string().starts_with(
                "table `People`, PartitionKey \"eu\", RowKey \"O'Brien\": the service refused the request: 404 \
                 ResourceNotFound"
            ),
            "{err}"
        );
    }
    // A long key is shown cut short; the accessor has it whole.
    let long = RowKey::new("k".repeat(300)).unwrap();
    let err = missing_entity.get::<Entity>(&pk, &long, None).await.unwrap_err();
    assert!(err.to_string().contains(&format!("RowKey \"{}\"...: ", "k".repeat(64))), "{err}");
    assert_eq!(err.keys().map(|(_, rk)| rk), Some(&long));
}

#[tokio::test]
async fn a_refused_shared_key_names_the_account_and_the_clock_skew() {
    let (pk, rk) = keys();
    // The service's clock an hour behind the client's, then in step with it.
    let skewed =
        answering(Answers { status: 403, code: "AuthenticationFailed", clock: Some(-3600) }, AccountKey::development());
    let err = skewed.get::<Entity>(&pk, &rk, None).await.unwrap_err();
    assert_eq!(err.error_code(), Some(ErrorCode::AuthenticationFailed));
    assert_eq!(
        err.to_string(),
        "table `People`, PartitionKey \"eu\", RowKey \"O'Brien\": the service refused the request: 403 \
         AuthenticationFailed: The AuthenticationFailed message. (signed with the Shared Key of account `acct`; the \
         request's x-ms-date is 60 minutes ahead of the service's clock, and the service refuses a date more than \
         15 minutes off: set the client's clock right)"
    );
    let late = answering(
        Answers { status: 403, code: "AuthorizationFailure", clock: Some(16 * 60) },
        AccountKey::development(),
    );
    let err = late.get::<Entity>(&pk, &rk, None).await.unwrap_err();
    assert!(err.to_string().contains("x-ms-date is 16 minutes behind the service's clock"), "{err}");

    for clock in [Some(0), Some(14 * 60), None] {
        let in_step =
            answering(Answers { status: 403, code: "AuthorizationFailure", clock }, AccountKey::development());
        let err = in_step.get::<Entity>(&pk, &rk, None).await.unwrap_err();
        assert!(
            err.to_string().ends_with(
                "403 AuthorizationFailure: The AuthorizationFailure message. (signed with the Shared Key of account \
                 `acct`: check that the key is this account's)"
            ),
            "{err}"
        );
    }

    // Under a SAS there is no key to name; another status says nothing of keys.
    let sas = SasToken::new("sv=2019-02-02&sig=x").unwrap();
    let err = answering(Answers { status: 403, code: "AuthorizationFailure", clock: Some(-3600) }, sas)
        .get::<Entity>(&pk, &rk, None)
        .await
        .unwrap_err();
    assert!(err.to_string().ends_with("403 AuthorizationFailure: The AuthorizationFailure message."), "{err}");
    let err =
        answering(Answers { status: 409, code: "EntityAlreadyExists", clock: Some(-3600) }, AccountKey::development())
            .insert(&Entity::new(pk, rk), None)
            .await
            .unwrap_err();
    assert!(err.to_string().ends_with("409 EntityAlreadyExists: The EntityAlreadyExists message."), "{err}");
}
