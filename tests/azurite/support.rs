//! What every Azurite test needs: the endpoint from the environment, the SDK's async client of it, and a table
//! of its own that is deleted afterwards, also when the test fails.

use async_trait::async_trait;
use azure_core::http::headers::HeaderName;
use azure_core::http::policies::{Policy, PolicyResult};
use azure_core::http::{AsyncRawResponse, ClientOptions, Context, Method, Request, Url};
use futures::TryStreamExt as _;
use std::ops::Deref;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use table_model::client::{Error, TableClient, TableCredential, TableServiceClient, TableServiceClientOptions};
use table_model::{AccountKey, Credential, Endpoint, Entity, PartitionKey, RowKey, TableName, TableService};

pub use table_model_test_utils::azurite::ENDPOINT_VAR;

/// A running Azurite and the client that talks to it.
pub struct Azurite {
    /// `http://127.0.0.1:<port>/devstoreaccount1`.
    pub url: String,
    /// The client, with Shared Key.
    pub service: TableServiceClient,
}

/// The endpoint of `TABLE_MODEL_AZURITE_ENDPOINT`, or `None` (with a notice) when it is not set. When `CI` is
/// set, a missing endpoint fails the test instead: in CI these tests must run.
pub fn endpoint() -> Option<String> {
    table_model_test_utils::azurite::endpoint_or_skip("Azurite tests", "scripts/azurite.sh run cargo test --workspace")
}

/// The Azurite of `TABLE_MODEL_AZURITE_ENDPOINT`, or `None` when the tests are skipped (see [`endpoint`]).
pub fn connect() -> Option<Azurite> {
    let url = endpoint()?;
    let service = TableServiceClient::new(&url, AccountKey::development(), None)
        .unwrap_or_else(|e| panic!("{ENDPOINT_VAR}={url}: {e}"));
    Some(Azurite { url, service })
}

/// Starts a test: the Azurite, or returns from the test when it is skipped.
macro_rules! azurite {
    () => {
        match crate::support::connect() {
            Some(a) => a,
            None => return,
        }
    };
}
pub(crate) use azurite;

/// A table name no other test of this run or of another run uses: the prefix, the process id, a counter.
pub fn unique_name(prefix: &str) -> TableName {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let name = format!("{prefix}{}x{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
    TableName::new(name).expect("a valid table name")
}

impl Azurite {
    /// A new table with a unique name, deleted when the guard is dropped.
    pub async fn table(&self, prefix: &str) -> Table {
        let name = unique_name(prefix);
        let client = self.service.create_table(&name, None).await.unwrap_or_else(|e| panic!("create {name}: {e}"));
        Table { client, url: self.url.clone() }
    }

    /// Deletes a table made by another client when the guard is dropped.
    pub fn guard(&self, client: TableClient) -> Table {
        Table { client, url: self.url.clone() }
    }

    /// Another client of the same endpoint, with another credential, and what each try of its requests carried.
    pub fn client_with(&self, credential: impl Into<TableCredential>) -> (TableServiceClient, Arc<Recorder>) {
        Self::client_at(&self.url, credential)
    }

    /// A client of `url` (which may carry a SAS), and what each try of its requests carried.
    pub fn client_at(url: &str, credential: impl Into<TableCredential>) -> (TableServiceClient, Arc<Recorder>) {
        let recorder = Arc::new(Recorder::default());
        let options = TableServiceClientOptions {
            client_options: ClientOptions { per_try_policies: vec![recorder.clone()], ..Default::default() },
            ..Default::default()
        };
        (TableServiceClient::new(url, credential, Some(options)).expect("a client"), recorder)
    }

    /// A request builder of the same endpoint, for requests the client does not make (see [`Raw`]). Its
    /// requests are not signed: the client's pipeline signs them.
    pub fn requests(&self) -> TableService {
        TableService::new(Endpoint::parse(&self.url).expect("the endpoint"), Credential::Anonymous)
    }

    /// A client that sends requests built by hand (see [`Raw`]).
    pub fn raw(&self) -> RawClient {
        let policy = Arc::new(Raw::default());
        let options = TableServiceClientOptions {
            client_options: ClientOptions { per_call_policies: vec![policy.clone()], ..Default::default() },
            ..Default::default()
        };
        let service = TableServiceClient::new(&self.url, AccountKey::development(), Some(options)).expect("a client");
        RawClient { service, policy }
    }
}

/// A table that exists for the duration of a test: derefs to its [`TableClient`].
pub struct Table {
    client: TableClient,
    url: String,
}

impl Deref for Table {
    type Target = TableClient;
    fn deref(&self) -> &TableClient {
        &self.client
    }
}

impl Drop for Table {
    /// Deletes the table, also while a failed test unwinds. A destructor cannot await, and blocking the test's
    /// runtime on its own client could wait on connection tasks of that runtime: a thread of its own, with
    /// its own runtime and client, deletes it.
    fn drop(&mut self) {
        let (url, name) = (self.url.clone(), self.client.table().clone());
        let _ = std::thread::spawn(move || {
            let Ok(runtime) = tokio::runtime::Builder::new_current_thread().enable_all().build() else { return };
            runtime.block_on(async {
                if let Ok(service) = TableServiceClient::new(&url, AccountKey::development(), None) {
                    let _ = service.delete_table_if_exists(&name, None).await;
                }
            });
        })
        .join();
    }
}

/// Every entity of a table, through the client's paging, in key order.
/// Sends the transactions, eight at a time, and returns how many entities they wrote (every one must succeed).
pub async fn submit_all(table: &TableClient, batches: &[table_model::Batch]) -> usize {
    use futures::StreamExt as _;
    let sent: Vec<usize> = futures::stream::iter(batches.iter().map(|b| table.submit_transaction(b, None)))
        .buffer_unordered(8)
        .map_ok(|outcome| outcome.etags.len())
        .try_collect()
        .await
        .unwrap();
    sent.iter().sum()
}

pub async fn all_entities(table: &TableClient) -> Vec<Entity> {
    table.query::<Entity>(&table_model::Query::new(), None).unwrap().try_collect().await.unwrap()
}

/// One try of a request, as it left the client's pipeline, and the request id its answer echoed.
#[derive(Clone, Debug)]
pub struct Sent {
    pub method: String,
    pub url: Url,
    pub authorization: Option<String>,
    pub client_request_id: Option<String>,
    /// The answer's `x-ms-client-request-id`; `None` when there was no answer.
    pub echoed_request_id: Option<String>,
}

/// A per-try policy, after the client's own: records what each try carried.
#[derive(Debug, Default)]
pub struct Recorder {
    sent: Mutex<Vec<Sent>>,
}

impl Recorder {
    /// Every try so far, in order.
    pub fn sent(&self) -> Vec<Sent> {
        self.sent.lock().unwrap().clone()
    }
}

#[async_trait]
impl Policy for Recorder {
    async fn send(&self, ctx: &Context, request: &mut Request, next: &[Arc<dyn Policy>]) -> PolicyResult {
        let header = |name: &'static str| request.headers().get_optional_str(&HeaderName::from_static(name));
        let mut sent = Sent {
            method: request.method().to_string(),
            url: request.url().clone(),
            authorization: header("authorization").map(str::to_owned),
            client_request_id: header("x-ms-client-request-id").map(str::to_owned),
            echoed_request_id: None,
        };
        let result = next[0].send(ctx, request, &next[1..]).await;
        if let Ok(response) = &result {
            let echoed = response.headers().get_optional_str(&HeaderName::from_static("x-ms-client-request-id"));
            sent.echoed_request_id = echoed.map(str::to_owned);
        }
        self.sent.lock().unwrap().push(sent);
        result
    }
}

/// A per-call policy of the client's pipeline that replaces the next request by one built by hand: for the
/// few tests that show Azurite accepting a request the SDK refuses to build. The client cannot send such a
/// request (that is the point), so it sends one of its own, and this policy swaps it on the way out; the
/// rest of the pipeline (Shared Key signing per try, retry, transport) is the client's own. The answer is
/// kept whole for the test to read.
#[derive(Debug, Default)]
pub struct Raw {
    next: Mutex<Option<http::Request<Vec<u8>>>>,
    answer: Mutex<Option<http::Response<Vec<u8>>>>,
}

#[async_trait]
impl Policy for Raw {
    async fn send(&self, ctx: &Context, request: &mut Request, next: &[Arc<dyn Policy>]) -> PolicyResult {
        let Some(raw) = self.next.lock().unwrap().take() else {
            return next[0].send(ctx, request, &next[1..]).await;
        };
        let (parts, body) = raw.into_parts();
        let method = match parts.method {
            http::Method::GET => Method::Get,
            http::Method::POST => Method::Post,
            http::Method::PUT => Method::Put,
            http::Method::DELETE => Method::Delete,
            http::Method::PATCH => Method::Patch,
            other => panic!("no such method in azure_core: {other}"),
        };
        let mut replaced = Request::new(Url::parse(&parts.uri.to_string()).expect("a URL"), method);
        for (name, value) in &parts.headers {
            // The client's Shared Key policy dates and signs every try.
            if name != "authorization" && name != "x-ms-date" {
                replaced.insert_header(name.as_str().to_owned(), value.to_str().expect("ASCII").to_owned());
            }
        }
        if !body.is_empty() {
            replaced.set_body(body);
        }
        *request = replaced;
        let (status, headers, body) = next[0].send(ctx, request, &next[1..]).await?.deconstruct();
        let bytes = body.collect().await?;
        let mut answer = http::Response::builder().status(u16::from(status));
        for (name, value) in headers.iter() {
            answer = answer.header(name.as_str(), value.as_str());
        }
        *self.answer.lock().unwrap() = Some(answer.body(bytes.to_vec()).expect("a response"));
        Ok(AsyncRawResponse::from_bytes(status, headers, bytes))
    }
}

/// A client whose next request can be one built by hand.
pub struct RawClient {
    service: TableServiceClient,
    policy: Arc<Raw>,
}

impl RawClient {
    /// Sends a request built by hand through the client's pipeline and returns the answer, whatever its
    /// status.
    pub async fn send(&self, request: http::Request<Vec<u8>>) -> http::Response<Vec<u8>> {
        self.carry(request).await.0
    }

    /// Sends a request built by hand that the service refuses, and returns the client's error for the
    /// answer: how the client reads that refusal whatever the operation.
    pub async fn refused(&self, request: http::Request<Vec<u8>>) -> Error {
        let (answer, result) = self.carry(request).await;
        result.expect_err(&format!("refused, but the answer is {}", answer.status()))
    }

    /// Any call of the client carries the request: the policy replaces it on the way out. `get` reads any
    /// status but 200 as an error, the same way every operation does.
    async fn carry(&self, request: http::Request<Vec<u8>>) -> (http::Response<Vec<u8>>, Result<Entity, Error>) {
        *self.policy.next.lock().unwrap() = Some(request);
        let carrier = self.service.table_client(TableName::from_static("Carrier"));
        let result = carrier.get::<Entity>(&PartitionKey::new("").unwrap(), &RowKey::new("").unwrap(), None).await;
        (self.policy.answer.lock().unwrap().take().expect("the request was sent"), result)
    }
}
