//! Microsoft Entra ID through the client, end to end, against a loopback HTTPS server this test starts itself.
//!
//! `azure_core` sends bearer tokens over TLS only, so the server is real HTTPS (`table_model_test_utils::loopback`:
//! a certificate made for the run, TLS by `tokio-rustls`, HTTP/1.1 by `hyper`), and the client's transport is a
//! `reqwest` client (azure_core's own, same version and TLS backend) that trusts that certificate and nothing
//! else. The credential is a fake `TokenCredential` that records the scopes it is asked for. The server checks
//! every request's `Authorization: Bearer <token>`, records its request line, and answers as the service does: an
//! entity with its ETag, query pages with `x-ms-continuation-*` headers, `204` with an ETag for writes, and `403
//! AuthorizationFailure` for any other token.
//!
//! The server listens on 127.0.0.1 only, serves a bounded number of connections, each with a time limit, and
//! stops when it is dropped (at the end of each test).

use async_trait::async_trait;
use azure_core::credentials::{AccessToken, TokenCredential, TokenRequestOptions};
use azure_core::http::{ClientOptions, RetryOptions, Transport};
use azure_core::time::{Duration, OffsetDateTime};
use futures::TryStreamExt as _;
use std::sync::{Arc, Mutex};
use table_model::client::{ErrorKind, TableClient, TableCredential, TableServiceClient, TableServiceClientOptions};
use table_model::{Endpoint, Entity, ErrorCode, PartitionKey, Query, RowKey, ServiceKind, TableName, UpdateMode};
use table_model_test_utils::loopback::{self, reply, Bytes, Request, Response};

/// The token the server accepts.
const TOKEN: &str = "eyJ0eXAiOiJKV1QiLCJhbGciOiJub25lIn0.test-token";
const STORAGE_SCOPE: &str = "https://storage.azure.com/.default";
const COSMOS_SCOPE: &str = "https://cosmos.azure.com/.default";

// ------------------------------------------------------------------------------------------------------------
// The credential

/// A `TokenCredential` that hands out one fixed token, valid for a day, and records every call's scopes.
#[derive(Debug)]
struct FakeCredential {
    token: &'static str,
    calls: Mutex<Vec<Vec<String>>>,
}

impl FakeCredential {
    fn new(token: &'static str) -> Arc<Self> {
        Arc::new(FakeCredential { token, calls: Mutex::new(Vec::new()) })
    }

    /// The scopes of each call so far.
    fn calls(&self) -> Vec<Vec<String>> {
        self.calls.lock().unwrap().clone()
    }
}

#[async_trait]
impl TokenCredential for FakeCredential {
    async fn get_token(
        &self,
        scopes: &[&str],
        _options: Option<TokenRequestOptions<'_>>,
    ) -> azure_core::Result<AccessToken> {
        self.calls.lock().unwrap().push(scopes.iter().map(|s| (*s).to_owned()).collect());
        Ok(AccessToken::new(self.token, OffsetDateTime::now_utc() + Duration::days(1)))
    }
}

// ------------------------------------------------------------------------------------------------------------
// The server

/// One request as the server received it.
#[derive(Clone, Debug)]
struct Seen {
    method: String,
    /// Path and query, as sent.
    target: String,
    authorization: Option<String>,
    x_http_method: Option<String>,
}

/// A loopback HTTPS server answering as the Table service does ([`answer`]). Dropping it stops it and every
/// connection.
struct Server {
    server: loopback::Server,
    port: u16,
}

impl Server {
    async fn start() -> Server {
        let server = loopback::Server::https(answer).await;
        Server { port: server.port(), server }
    }

    fn https(&self) -> String {
        format!("{}/acct", self.server.origin())
    }

    fn seen(&self) -> Vec<Seen> {
        let seen = self.server.seen().into_iter();
        seen.map(|r| Seen {
            method: r.method.as_str().to_owned(),
            target: r.target.clone(),
            authorization: r.header("authorization").map(str::to_owned),
            x_http_method: r.header("x-http-method").map(str::to_owned),
        })
        .collect()
    }

    /// `azure_core` options whose transport is a `reqwest` client trusting this server's certificate only.
    fn client_options(&self) -> ClientOptions {
        let certificate = self.server.certificate().expect("an HTTPS server");
        let certificate = reqwest::Certificate::from_der(certificate.der()).unwrap();
        // reqwest has no crypto provider of its own here (the workspace leaves aws-lc-rs out): *ring*.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .tls_certs_only([certificate])
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap();
        ClientOptions {
            transport: Some(Transport::new(Arc::new(client))),
            // A failure is the answer under test: do not wait through back-offs.
            retry: RetryOptions::none(),
            ..Default::default()
        }
    }

    /// A client of this server's account, with the options' transport.
    fn client(&self, url: &str, credential: TableCredential, kind: ServiceKind) -> TableServiceClient {
        let options = TableServiceClientOptions {
            client_options: self.client_options(),
            service_kind: Some(kind),
            // No `timeout` query parameter: the requests below are checked to the letter.
            try_timeout: None,
            ..Default::default()
        };
        TableServiceClient::new(url, credential, Some(options)).unwrap()
    }
}

const JSON: &str = "application/json;odata=minimalmetadata;streaming=true;charset=utf-8";
const ETAG: &str = "W/\"datetime'2024-05-06T07%3A08%3A09.1234567Z'\"";

fn entity_json(row_key: &str) -> String {
    format!(
        r#"{{"odata.etag":"W/\"datetime'2024-05-06T07%3A08%3A09.1234567Z'\"","PartitionKey":"eu","RowKey":"{row_key}","Timestamp":"2024-05-06T07:08:09.1234567Z","Age":36,"Visits@odata.type":"Edm.Int64","Visits":"9007199254740993"}}"#
    )
}

/// Answers one request as the service would, after checking its bearer token.
fn answer(request: &Request) -> Response {
    if request.header("authorization") != Some(&format!("Bearer {TOKEN}")) {
        let body = r#"{"odata.error":{"code":"AuthorizationFailure","message":{"lang":"en-US","value":"This request is not authorized to perform this operation.\nRequestId:00000000-0000-0000-0000-000000000001\nTime:2024-05-06T07:08:09.0000000Z"}}}"#;
        return reply(403, &[("content-type", JSON), ("x-ms-error-code", "AuthorizationFailure")], body);
    }
    let path = request.path();
    match request.method.as_str() {
        // A query: two pages, the first with a continuation, the second (asked with it) without.
        "GET" if path.ends_with("/People()") => {
            if request.query().contains("NextPartitionKey=") {
                reply(200, &[("content-type", JSON)], format!(r#"{{"value":[{}]}}"#, entity_json("bob")))
            } else {
                let headers = [
                    ("content-type", JSON),
                    ("x-ms-continuation-NextPartitionKey", "1!4!ZXU-"),
                    ("x-ms-continuation-NextRowKey", "1!4!Ym9i"),
                ];
                reply(200, &headers, format!(r#"{{"value":[{}]}}"#, entity_json("ada")))
            }
        }
        "GET" if path.contains("/People(PartitionKey=") => {
            reply(200, &[("content-type", JSON), ("etag", ETAG)], entity_json("ada"))
        }
        // Insert (POST /People), update, merge (PATCH, or POST with X-HTTP-Method: MERGE), replace (PUT).
        "POST" | "PATCH" | "PUT" if path.contains("/People") => reply(204, &[("etag", ETAG)], Bytes::new()),
        _ => reply(404, &[("x-ms-error-code", "ResourceNotFound")], Bytes::new()),
    }
}

// ------------------------------------------------------------------------------------------------------------
// Helpers

fn people(service: &TableServiceClient) -> TableClient {
    service.table_client(TableName::from_static("People"))
}

fn ada() -> Entity {
    Entity::new(PartitionKey::new("eu").unwrap(), RowKey::new("ada").unwrap()).with("Age".parse().unwrap(), 36).unwrap()
}

fn keys() -> (PartitionKey, RowKey) {
    (PartitionKey::new("eu").unwrap(), RowKey::new("ada").unwrap())
}

// ------------------------------------------------------------------------------------------------------------
// Tests

#[tokio::test]
async fn storage_asks_for_the_storage_scope_and_sends_the_token() {
    let server = Server::start().await;
    let credential = FakeCredential::new(TOKEN);
    // 127.0.0.1 is path-style, which `Endpoint::kind` takes for Azurite: say it is Storage.
    let service = server.client(&server.https(), credential.clone().into(), ServiceKind::Storage);
    assert_eq!(service.kind(), ServiceKind::Storage);
    let table = people(&service);

    let (pk, rk) = keys();
    let read: Entity = table.get(&pk, &rk, None).await.unwrap();
    assert_eq!(read.get::<i32>("Age").unwrap(), 36);
    assert_eq!(read.get::<i64>("Visits").unwrap(), 9_007_199_254_740_993);
    assert_eq!(read.etag().unwrap().as_str(), ETAG);

    assert_eq!(table.insert(&ada(), None).await.unwrap().as_str(), ETAG);

    // Two pages, the second asked for with the first page's continuation.
    let all: Vec<Entity> = table.query::<Entity>(&Query::new(), None).unwrap().try_collect().await.unwrap();
    assert_eq!(all.iter().map(|e| e.row_key().as_str()).collect::<Vec<_>>(), ["ada", "bob"]);

    // The credential was asked for the Storage scope, and only for it.
    let calls = credential.calls();
    assert!(!calls.is_empty());
    assert!(calls.iter().all(|scopes| scopes == &[STORAGE_SCOPE]), "{calls:?}");

    // Every request carried the token, over TLS.
    let seen = server.seen();
    let lines: Vec<String> = seen.iter().map(|s| format!("{} {}", s.method, s.target)).collect();
    assert_eq!(seen.len(), 4, "{lines:?}");
    assert!(seen.iter().all(|s| s.authorization.as_deref() == Some(&format!("Bearer {TOKEN}")[..])), "{seen:?}");
    assert_eq!(lines[0], "GET /acct/People(PartitionKey='eu',RowKey='ada')");
    assert_eq!(lines[1], "POST /acct/People");
    assert_eq!(lines[2], "GET /acct/People()");
    assert_eq!(lines[3], "GET /acct/People()?NextPartitionKey=1%214%21ZXU-&NextRowKey=1%214%21Ym9i");
}

#[tokio::test]
async fn cosmos_asks_for_the_cosmos_scope() {
    // The host of a Cosmos DB Table API account says which it is ...
    assert_eq!(Endpoint::parse("https://acct.table.cosmos.azure.com").unwrap().kind(), ServiceKind::CosmosDb);
    assert_eq!(ServiceKind::CosmosDb.entra_scope(), COSMOS_SCOPE);

    // ... and a loopback address does not, so the options say it.
    let server = Server::start().await;
    let credential = FakeCredential::new(TOKEN);
    let service = server.client(&server.https(), credential.clone().into(), ServiceKind::CosmosDb);
    assert_eq!(service.kind(), ServiceKind::CosmosDb);
    let (pk, rk) = keys();
    let read: Entity = people(&service).get(&pk, &rk, None).await.unwrap();
    assert_eq!(read.row_key().as_str(), "ada");

    let calls = credential.calls();
    assert!(!calls.is_empty());
    assert!(calls.iter().all(|scopes| scopes == &[COSMOS_SCOPE]), "{calls:?}");
    assert_eq!(server.seen()[0].authorization.as_deref(), Some(&format!("Bearer {TOKEN}")[..]));
}

#[tokio::test]
async fn an_arc_of_a_credential_converts_without_naming_the_variant() {
    let server = Server::start().await;
    let credential = FakeCredential::new(TOKEN);
    let options = TableServiceClientOptions { client_options: server.client_options(), ..Default::default() };
    // `Arc<FakeCredential>` straight in, as `azure_identity`'s constructors return them; path-style URL, so the
    // kind is Azurite's, which takes Storage tokens.
    let service = TableServiceClient::new(server.https(), credential.clone(), Some(options)).unwrap();
    assert_eq!(service.kind(), ServiceKind::Azurite);
    let (pk, rk) = keys();
    people(&service).get::<Entity>(&pk, &rk, None).await.unwrap();
    assert!(credential.calls().iter().all(|scopes| scopes == &[STORAGE_SCOPE]));
    assert!(!credential.calls().is_empty());
}

#[tokio::test]
async fn plain_http_is_refused_before_the_token_is_asked_for_or_sent() {
    let server = Server::start().await;
    let credential = FakeCredential::new(TOKEN);
    // The same listener, over plain HTTP: were anything sent, the server would count the connection.
    let url = format!("http://127.0.0.1:{}/acct", server.port);
    let service = server.client(&url, credential.clone().into(), ServiceKind::Storage);
    let (pk, rk) = keys();
    let err = people(&service).get::<Entity>(&pk, &rk, None).await.unwrap_err();

    let ErrorKind::Transport(core) = err.kind() else { panic!("expected a transport error, got {err:?}") };
    assert_eq!(core.kind(), &azure_core::error::ErrorKind::Other);
    assert!(core.to_string().contains("not permitted for non-TLS protected endpoints"), "{core}");
    let request = format!("GET {url}/People(PartitionKey='eu',RowKey='ada'): ");
    assert!(err.to_string().contains(&format!("{request}authorized requests are not permitted for non-TLS")), "{err}");
    assert_eq!(err.error_code(), None);

    assert!(credential.calls().is_empty(), "the token was asked for: {:?}", credential.calls());
    assert_eq!(server.server.connections(), 0, "something was sent");
    assert!(server.seen().is_empty());
}

#[tokio::test]
async fn a_refused_token_is_a_typed_authorization_failure() {
    let server = Server::start().await;
    let credential = FakeCredential::new("a-token-the-service-does-not-accept");
    let service = server.client(&server.https(), credential.clone().into(), ServiceKind::Storage);
    let (pk, rk) = keys();
    let err = people(&service).get::<Entity>(&pk, &rk, None).await.unwrap_err();

    assert_eq!(err.error_code(), Some(ErrorCode::AuthorizationFailure), "{err:?}");
    assert_eq!(err.status(), Some(403));
    let service_error = err.service().unwrap();
    assert!(service_error.message().starts_with("This request is not authorized"), "{service_error}");
    assert_eq!(service_error.request_id(), Some("00000000-0000-0000-0000-000000000001"));
    assert!(matches!(err.kind(), ErrorKind::Service(_)));

    // The token was sent (and refused): one request, with the credential's token.
    let seen = server.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].authorization.as_deref(), Some("Bearer a-token-the-service-does-not-accept"));
    assert!(credential.calls().iter().all(|scopes| scopes == &[STORAGE_SCOPE]));
}

#[tokio::test]
async fn merges_are_tunnelled_through_post_on_cosmos_and_patch_on_storage() {
    let server = Server::start().await;
    let credential = FakeCredential::new(TOKEN);
    let entity = ada();
    for kind in [ServiceKind::CosmosDb, ServiceKind::Storage] {
        let table = people(&server.client(&server.https(), credential.clone().into(), kind));
        table.upsert(&entity, UpdateMode::Merge, None).await.unwrap();
        table.update(&entity, UpdateMode::Merge, None).await.unwrap();
        table.update(&entity, UpdateMode::Replace, None).await.unwrap();
    }
    let seen = server.seen();
    let lines: Vec<(String, String, Option<String>)> =
        seen.iter().map(|s| (s.method.clone(), s.target.clone(), s.x_http_method.clone())).collect();
    let address = "/acct/People(PartitionKey='eu',RowKey='ada')".to_owned();
    let merge = Some("MERGE".to_owned());
    assert_eq!(
        lines,
        [
            // Cosmos DB: POST with X-HTTP-Method: MERGE, for the upsert and the update alike.
            ("POST".to_owned(), address.clone(), merge.clone()),
            ("POST".to_owned(), address.clone(), merge),
            ("PUT".to_owned(), address.clone(), None),
            // Storage: PATCH.
            ("PATCH".to_owned(), address.clone(), None),
            ("PATCH".to_owned(), address.clone(), None),
            ("PUT".to_owned(), address, None),
        ]
    );
    assert!(seen.iter().all(|s| s.authorization.as_deref() == Some(&format!("Bearer {TOKEN}")[..])));
    // One credential per client: each client asked for its own kind's scope.
    let calls = credential.calls();
    assert!(calls.contains(&vec![COSMOS_SCOPE.to_owned()]) && calls.contains(&vec![STORAGE_SCOPE.to_owned()]));
}

#[tokio::test]
async fn a_transport_without_the_certificate_does_not_connect() {
    // The TLS is real: azure_core's default transport does not trust the test's certificate.
    let server = Server::start().await;
    let credential = FakeCredential::new(TOKEN);
    let options = TableServiceClientOptions {
        client_options: ClientOptions { retry: RetryOptions::none(), ..Default::default() },
        service_kind: Some(ServiceKind::Storage),
        ..Default::default()
    };
    let service = TableServiceClient::new(server.https(), credential.clone(), Some(options)).unwrap();
    let (pk, rk) = keys();
    let err = people(&service).get::<Entity>(&pk, &rk, None).await.unwrap_err();
    let ErrorKind::Transport(core) = err.kind() else { panic!("expected a transport error, got {err:?}") };
    assert_eq!(core.kind(), &azure_core::error::ErrorKind::Connection, "{core:?}");
    let cause = format!("the TLS handshake with 127.0.0.1:{} failed: invalid peer certificate: ", server.port);
    assert!(err.to_string().contains(&cause), "{err}");
    assert!(server.seen().is_empty(), "a request got through: {:?}", server.seen());
}
