//! What every client shares: the request builder, the `azure_core` pipeline, and the one function that sends
//! a built request through it.

use super::credential::{AuthNote, SharedKeyPolicy, TableCredential};
use super::error::{Attempt, Error, ErrorKind};
use super::location::{Location, LocationMode, ReadLocation};
use super::options::TableServiceClientOptions;
use super::outcome::{TryLog, TryPolicy, Unreachable, TRY_LOG};
use super::trace::{self, ServiceRequestIdPolicy, Tracing};
use super::transport::{default_http_client, find_header, known};
use crate::auth::{SharedKeyScheme, X_MS_DATE};
use crate::connection::{Credential, Endpoint, ServiceKind};
use crate::json::MetadataLevel;
use crate::request::error::RequestError;
use crate::request::{
    MergeVerb, TableService, DATA_SERVICE_VERSION, JSON_CONTENT_TYPE, MAX_DATA_SERVICE_VERSION, RETURN_NO_CONTENT,
    X_MS_VERSION,
};
use crate::response::errors::ResponseError;
use crate::response::HEADERS_READ;
use async_trait::async_trait;
use azure_core::error::ErrorKind as CoreErrorKind;
use azure_core::http::headers::{Header as _, HeaderName, HeaderValue, Headers, CLIENT_REQUEST_ID, CONTENT_LENGTH};
use azure_core::http::policies::auth::BearerTokenAuthorizationPolicy;
use azure_core::http::policies::{Policy, PolicyResult};
use azure_core::http::request::options::ClientRequestId;
use azure_core::http::{
    AsyncRawResponse, AsyncResponseBody, Context, Method, Pipeline, PipelineStreamOptions, Request, Transport, Url,
};
use azure_core::{Bytes, Uuid};
use futures::TryStreamExt as _;
use std::cell::Cell;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The request builder and the pipeline of one service client and all of its table clients.
#[derive(Debug)]
pub(crate) struct Core {
    /// Builds every request: method, URL, headers, body. Its credential is the SAS, when there is one;
    /// Shared Key and Entra authorization are per-try policies of the pipeline.
    pub(crate) requests: TableService,
    pub(crate) kind: ServiceKind,
    /// The endpoint's URL, parsed once: each request's URL is this one with the request's path and query.
    base_url: Option<Url>,
    pipeline: Pipeline,
    deadline: Option<Duration>,
    /// The account a Shared Key (or Shared Key Lite) credential signs for; `None` under any other credential.
    /// A `403` names it.
    shared_key_account: Option<String>,
    /// The tracer of the calls' spans, when `ClientOptions::instrumentation` has a tracer provider.
    pub(crate) tracing: Option<Tracing>,
    /// The request builder at the account's secondary location, when the endpoint names the account.
    secondary: Option<TableService>,
    /// Where reads go unless a call says otherwise.
    location_mode: LocationMode,
}

impl Core {
    pub(crate) fn new(
        endpoint: Endpoint,
        credential: TableCredential,
        options: TableServiceClientOptions,
    ) -> Result<Self, Error> {
        let kind = options.service_kind.unwrap_or_else(|| endpoint.kind());
        let account = endpoint.account().to_owned();
        // First of the per-try policies, so that its timeout covers signing, the token and the transport.
        let mut per_try: Vec<Arc<dyn Policy>> = vec![Arc::new(TryPolicy { try_timeout: options.try_timeout })];
        let signed_per_try = matches!(credential, TableCredential::SharedKey(_) | TableCredential::SharedKeyLite(_));
        let shared_key_account = signed_per_try.then(|| account.clone());
        let request_credential = match credential {
            TableCredential::SharedKey(key) => {
                per_try.push(Arc::new(SharedKeyPolicy { account, key, scheme: SharedKeyScheme::Full }));
                Credential::Anonymous
            }
            TableCredential::SharedKeyLite(key) => {
                per_try.push(Arc::new(SharedKeyPolicy { account, key, scheme: SharedKeyScheme::Lite }));
                Credential::Anonymous
            }
            TableCredential::Entra(credential) => {
                per_try.push(Arc::new(BearerTokenAuthorizationPolicy::new(credential, [kind.entra_scope()])));
                Credential::Anonymous
            }
            TableCredential::Sas(sas) => Credential::Sas(sas),
            TableCredential::Anonymous => Credential::Anonymous,
        };
        // azure_core's `Method` has no MERGE: Storage and Azurite take PATCH, Cosmos DB needs the POST tunnel.
        let merge_verb = match kind.merge_verb() {
            MergeVerb::Merge => MergeVerb::Patch,
            verb => verb,
        };
        // Bodies are read whole inside the retry loop (a body that fails half-way is retried) and before the
        // user's per-try policies see them, as with azure_core's buffering: by the client's own transport, or
        // for a transport of the user's, by a last per-try policy.
        let mut client_options = options.client_options;
        let base_url = Url::parse(endpoint.url()).ok();
        let tracing = Tracing::new(client_options.instrumentation.tracer_provider.as_ref(), kind, base_url.as_ref());
        if tracing.is_some() {
            // After azure_core's request instrumentation (the last of the client's own per-try policies), where
            // the try's span is in the context.
            client_options.per_try_policies.insert(0, Arc::new(ServiceRequestIdPolicy));
        }
        match client_options.transport {
            None => client_options.transport = Some(Transport::new(default_http_client()?)),
            Some(_) => client_options.per_try_policies.push(Arc::new(ReadBodyPolicy)),
        }
        let mut requests = TableService::new(endpoint, request_credential)
            .with_service_kind(kind)
            .with_metadata(options.metadata)
            .with_merge_verb(merge_verb);
        if let Some(limit) = options.try_timeout {
            requests = requests.with_server_timeout(limit);
        }
        if signed_per_try {
            requests = requests.with_signing_per_try();
        }
        let pipeline = Pipeline::new(
            Some(env!("CARGO_PKG_NAME")),
            Some(env!("CARGO_PKG_VERSION")),
            client_options,
            Vec::new(),
            per_try,
            None,
        );
        let secondary = requests.at_secondary();
        Ok(Core {
            requests,
            kind,
            base_url,
            pipeline,
            deadline: options.deadline,
            shared_key_account,
            tracing,
            secondary,
            location_mode: options.location_mode,
        })
    }

    /// Sends a request built by [`TableService`] and reads the answer with a function of the response layer.
    pub(crate) async fn call<R>(
        &self,
        request: Result<http::Request<Vec<u8>>, RequestError>,
        ctx: &Context<'_>,
        read: impl FnOnce(&http::Response<Bytes>) -> Result<R, ResponseError>,
    ) -> Result<R, Error> {
        let request = request?.map(Bytes::from);
        TRY_LOG
            .scope(TryLog::default(), async move {
                let sent = self.send(request, ctx).await;
                if self.tracing.is_some() {
                    trace::count_tries(ctx, TRY_LOG.try_with(TryLog::tries).unwrap_or(1));
                }
                let (response, auth) = sent?;
                read(&response).map_err(|e| Error::from(e).with_auth(auth))
            })
            .await
    }

    /// Sends a read to the location(s) its [`LocationMode`] says (the call's, else the client's): `build` makes
    /// the request from the request builder of a location. Returns the answer and the location that gave it.
    pub(crate) async fn call_read<R>(
        &self,
        build: impl Fn(&TableService) -> Result<http::Request<Vec<u8>>, RequestError>,
        ctx: &Context<'_>,
        read: impl Fn(&http::Response<Bytes>) -> Result<R, ResponseError>,
    ) -> Result<(R, Location), Error> {
        // An empty context (a call without options) is not hashed into.
        let given = if ctx.is_empty() { None } else { ctx.value::<ReadLocation>() };
        let mode = given.map_or(self.location_mode, |mode| mode.0);
        if mode == LocationMode::PrimaryOnly {
            return self.call(build(&self.requests), ctx, read).await.map(|r| (r, Location::Primary));
        }
        // Boxed, so that the other modes do not make every read's future larger (moving it costs).
        Box::pin(self.call_located(mode, build, ctx, read)).await
    }

    /// [`call_read`](Self::call_read) under [`LocationMode::SecondaryOnly`] or
    /// [`LocationMode::PrimaryThenSecondary`].
    async fn call_located<R>(
        &self,
        mode: LocationMode,
        build: impl Fn(&TableService) -> Result<http::Request<Vec<u8>>, RequestError>,
        ctx: &Context<'_>,
        read: impl Fn(&http::Response<Bytes>) -> Result<R, ResponseError>,
    ) -> Result<(R, Location), Error> {
        let primary_url = self.requests.endpoint().url();
        let Some(secondary) = &self.secondary else {
            let endpoint = primary_url.to_owned();
            return Err(Error::new(ErrorKind::NoSecondary { endpoint }));
        };
        let at_secondary = |primary: Option<Error>| async {
            let result = self.call(build(secondary), ctx, &read).await;
            if self.tracing.is_some() {
                trace::note_location(ctx, Location::Secondary);
            }
            result.map(|r| (r, Location::Secondary)).map_err(|e| {
                let e = e.at_location(Location::Secondary, secondary.endpoint().url());
                match primary {
                    Some(primary) => e.after_primary(primary),
                    None => e,
                }
            })
        };
        if mode == LocationMode::SecondaryOnly {
            return at_secondary(None).await;
        }
        let e = match self.call(build(&self.requests), ctx, &read).await {
            Ok(r) => return Ok((r, Location::Primary)),
            Err(e) => e.at_location(Location::Primary, primary_url),
        };
        if !falls_over(&e) {
            return Err(e);
        }
        at_secondary(Some(e)).await
    }

    /// As [`call`](Self::call), and whether some try ended with its outcome unknown: a write that was retried
    /// after that may see its own first try's effect (see [`outcome`](super::outcome)). The body may be `Bytes`,
    /// so that a caller can keep what it sent (a clone shares the buffer) to compare with what it reads back.
    pub(crate) async fn call_tracked<R, B: Into<Bytes>>(
        &self,
        request: Result<http::Request<B>, RequestError>,
        ctx: &Context<'_>,
        read: impl FnOnce(&http::Response<Bytes>) -> Result<R, ResponseError>,
    ) -> (Result<R, Error>, bool) {
        TRY_LOG
            .scope(TryLog::default(), async move {
                let result = match request {
                    Ok(request) => match self.send(request.map(Into::into), ctx).await {
                        Ok((response, auth)) => read(&response).map_err(|e| Error::from(e).with_auth(auth)),
                        Err(e) => Err(e),
                    },
                    Err(e) => Err(e.into()),
                };
                let retried_after_unknown =
                    TRY_LOG.try_with(|log| log.outcome_was_unknown() && log.tries() > 1).unwrap_or(false);
                if self.tracing.is_some() {
                    trace::count_tries(ctx, TRY_LOG.try_with(TryLog::tries).unwrap_or(1));
                }
                (result, retried_after_unknown)
            })
            .await
    }

    /// Sends a request built by [`TableService`] and returns the answer whatever its status, for the response
    /// layer to read, and for a `403` under Shared Key what the client knows of its likely causes.
    ///
    /// A request that gets no answer is an error naming the request, the cause, and how many tries took how
    /// long: the tries are counted in the call's [`TRY_LOG`], which the caller sets.
    async fn send(
        &self,
        request: http::Request<Bytes>,
        ctx: &Context<'_>,
    ) -> Result<(http::Response<Bytes>, Option<AuthNote>), Error> {
        let started = Instant::now();
        let mut request = self.to_core_request(request, ctx)?;
        // `stream`, not `send`: `send` has the transport buffer the body and then copies it once more; the body
        // was read into one buffer already, by the client's transport or by `ReadBodyPolicy`.
        let options = PipelineStreamOptions { skip_checks: true, ..Default::default() };
        let stream = self.pipeline.stream(ctx, &mut request, Some(options));
        let result = match self.deadline {
            None => stream.await,
            Some(limit) => tokio::time::timeout(limit, stream).await.unwrap_or_else(|_| {
                let message = format!("no answer within the deadline of {limit:?}; a write may have been applied");
                Err(azure_core::Error::with_message(CoreErrorKind::Io, message))
            }),
        };
        let response = result.map_err(|e| {
            let tries = TRY_LOG.try_with(TryLog::tries).unwrap_or(1);
            let attempt = Attempt::new(&request, tries, started.elapsed());
            Error::from(Unreachable::take(e)).with_attempt(attempt)
        })?;
        let (status, headers, body) = response.deconstruct();
        let auth = match (&self.shared_key_account, u16::from(status)) {
            (Some(account), 403) => {
                let sent = find_header(request.headers(), &const { HeaderName::from_static(X_MS_DATE) });
                let answered = find_header(&headers, &const { HeaderName::from_static("date") });
                Some(AuthNote::new(account, sent, answered))
            }
            _ => None,
        };
        let mut reply = http::Response::new(read_body(body, || 0).await?);
        *reply.status_mut() = http::StatusCode::from_u16(u16::from(status))
            .map_err(|e| azure_core::Error::new(CoreErrorKind::DataConversion, e))?;
        // The response layer reads a few headers (`HEADERS_READ`); converting the others would be wasted.
        let map = reply.headers_mut();
        for (name, value) in headers {
            // Every name read is a known one (a test checks).
            if !HEADERS_READ.contains(&name.as_str()) {
                continue;
            }
            let Some(known) = known(name.as_str()) else { continue };
            if let Ok(value) = http::HeaderValue::from_str(value.as_str()) {
                map.append(known.http, value);
            }
        }
        Ok((reply, auth))
    }

    /// The same request in `azure_core`'s types.
    fn to_core_request(&self, request: http::Request<Bytes>, ctx: &Context<'_>) -> Result<Request, Error> {
        let (parts, body) = request.into_parts();
        let url = match &self.base_url {
            // Every request the builder makes is on the endpoint: only the path and query change, and parsing
            // them alone is half the work of parsing the whole URL.
            Some(base) if same_origin(base, &parts.uri) => {
                let mut url = base.clone();
                url.set_path(parts.uri.path());
                url.set_query(parts.uri.query());
                url
            }
            _ => Url::parse(&parts.uri.to_string())
                .map_err(|e| azure_core::Error::new(CoreErrorKind::DataConversion, e))?,
        };
        let method = match parts.method {
            http::Method::GET => Method::Get,
            http::Method::POST => Method::Post,
            http::Method::PUT => Method::Put,
            http::Method::DELETE => Method::Delete,
            http::Method::PATCH => Method::Patch,
            http::Method::HEAD => Method::Head,
            other => {
                // The client's request builder sends merges as PATCH or POST; no other verb is built.
                let message = format!("method {other} cannot be sent through azure_core");
                return Err(azure_core::Error::with_message(CoreErrorKind::Other, message).into());
            }
        };
        let mut core = Request::new(url, method);
        // Room for the headers the pipeline adds (request id, user agent, date, authorization, length).
        let mut headers = HashMap::with_capacity(parts.headers.len() + 6);
        for (name, value) in &parts.headers {
            if let Ok(value) = value.to_str() {
                headers.insert(header_name(name), header_value(value));
            }
        }
        // The `x-ms-client-request-id` azure_core's ClientRequestIdPolicy would add, from the context as it
        // would take it: the policy checks for it with `Headers::get_optional_str`, which builds an error for
        // an absent header (and captures a backtrace when `RUST_BACKTRACE` is set: about 110,000 instructions,
        // a quarter of a point read's). Present, the policy leaves it.
        let given = if ctx.is_empty() { None } else { ctx.value::<ClientRequestId>() };
        let id: String = match given {
            Some(id) => id.value().as_str().to_owned(),
            None => new_request_id().into(),
        };
        headers.insert(CLIENT_REQUEST_ID, HeaderValue::from(id));
        *core.headers_mut() = Headers::from(headers);
        if !body.is_empty() {
            core.set_body(body);
        }
        Ok(core)
    }
}

/// A new random (version 4) UUID for `x-ms-client-request-id`, as azure_core's policy would make, from a
/// per-thread generator seeded once by the operating system: a request id must be unique, not secret, and
/// `Uuid::new_v4` makes a system call for each.
pub(crate) fn new_request_id() -> Uuid {
    thread_local! {
        static STATE: Cell<u64> = Cell::new(Uuid::new_v4().as_u64_pair().0);
    }
    // SplitMix64: a bijection of a counter, so no output repeats within 2^64 steps of one thread.
    let next = |state: &Cell<u64>| {
        let mut z = state.get().wrapping_add(0x9E37_79B9_7F4A_7C15);
        state.set(z);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    let (high, low) = STATE.with(|state| (next(state), next(state)));
    uuid::Builder::from_random_bytes(((u128::from(high) << 64) | u128::from(low)).to_le_bytes()).into_uuid()
}

/// Whether a request's URI has the scheme, host and port of the endpoint's URL (and no user information).
fn same_origin(base: &Url, uri: &http::Uri) -> bool {
    let Some(authority) = uri.authority() else { return false };
    uri.scheme_str() == Some(base.scheme())
        && !authority.as_str().contains('@')
        && Some(authority.host()) == base.host_str()
        && authority.port_u16() == base.port()
}

/// The name in `azure_core`'s type: a constant for the headers the protocol uses, without the copy and the
/// lowercasing of an owned name.
fn header_name(name: &http::HeaderName) -> HeaderName {
    match known(name.as_str()) {
        Some(known) => known.core,
        None => HeaderName::from(name.as_str().to_owned()),
    }
}

/// The value in `azure_core`'s type: one of the request builder's constants without a copy.
fn header_value(value: &str) -> HeaderValue {
    const CONSTANTS: [&str; 8] = [
        X_MS_VERSION,
        DATA_SERVICE_VERSION,
        MAX_DATA_SERVICE_VERSION,
        JSON_CONTENT_TYPE,
        MetadataLevel::None.accept_header(),
        MetadataLevel::Minimal.accept_header(),
        MetadataLevel::Full.accept_header(),
        RETURN_NO_CONTENT,
    ];
    match CONSTANTS.iter().find(|constant| **constant == value) {
        Some(constant) => HeaderValue::from(*constant),
        None => HeaderValue::from(value.to_owned()),
    }
}

/// Reads each try's response body into one buffer, inside the retry loop (a connection that drops half-way
/// through a body is retried): the job of azure_core's buffering, with one copy instead of two and none for a
/// body that arrives in one piece.
#[derive(Debug)]
struct ReadBodyPolicy;

#[async_trait]
impl Policy for ReadBodyPolicy {
    async fn send(&self, ctx: &Context, request: &mut Request, next: &[Arc<dyn Policy>]) -> PolicyResult {
        let response = next[0].send(ctx, request, &next[1..]).await?;
        let (status, headers, body) = response.deconstruct();
        // Looked up only for a body in pieces (the client's transport reads it whole).
        let length = || find_header(&headers, &CONTENT_LENGTH).and_then(|v| v.parse().ok()).unwrap_or(0);
        let body = read_body(body, length).await?;
        Ok(AsyncRawResponse::from_bytes(status, headers, body))
    }
}

/// The whole body: the first chunk as it is when it is the only one, else all of them in one buffer of
/// `length()` (the `Content-Length`, when known; at most 16 MiB reserved ahead).
async fn read_body(mut body: AsyncResponseBody, length: impl FnOnce() -> usize) -> azure_core::Result<Bytes> {
    let Some(first) = body.try_next().await? else { return Ok(Bytes::new()) };
    let Some(second) = body.try_next().await? else { return Ok(first) };
    let mut buffer = Vec::with_capacity(length().min(16 << 20).max(first.len() + second.len()));
    buffer.extend_from_slice(&first);
    buffer.extend_from_slice(&second);
    while let Some(chunk) = body.try_next().await? {
        buffer.extend_from_slice(&chunk);
    }
    Ok(Bytes::from(buffer))
}

/// Whether the primary's failure is one a retry would retry, after which the secondary is tried: no answer,
/// or a status `azure_core`'s retry policy retries (`408`, `429`, `500`, `502`, `503`, `504`).
fn falls_over(error: &Error) -> bool {
    match error.kind() {
        ErrorKind::Transport(_) => true,
        ErrorKind::Service(e) => matches!(e.status(), 408 | 429 | 500 | 502 | 503 | 504),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::connection::{AccountKey, SasToken};
    use crate::query::Query;
    use crate::response::Continuation;
    use crate::{filter, Entity, PartitionKey, RowKey, TableName};

    fn core(url: &str, credential: TableCredential) -> Core {
        Core::new(Endpoint::parse(url).unwrap(), credential, TableServiceClientOptions::default()).unwrap()
    }

    /// The URL built from the endpoint's parsed URL is the one a parse of the whole request URI gives, and the
    /// headers are carried over with their values.
    #[test]
    fn requests_convert_as_a_whole_parse_would() {
        let cores = [
            core("http://127.0.0.1:10002/devstoreaccount1", AccountKey::development().into()),
            core("https://acme.table.core.windows.net", AccountKey::development().into()),
            core("https://acme.table.cosmos.azure.com:443/", TableCredential::Anonymous),
            core("http://[::1]:10002/devstoreaccount1", TableCredential::Anonymous),
            core(
                "https://acme.table.core.windows.net",
                SasToken::new("sv=2019-02-02&tn=audit&sp=raud&sig=a%2Bb%3D%27c").unwrap().into(),
            ),
        ];
        let table = TableName::new("People").unwrap();
        let keys = ["plain", "O'Brien 50%", "a b+c&d=e[f]", "é😀 ~!*()", "'", "%2F", "..", "semi;colon,comma"];
        let next = Continuation::new("1!8!é &=?#", Some("1!4!Mw--".to_owned()));
        let query = Query::new().filter(filter::Filter::property("Age").ge(18)).top(7);
        for core in &cores {
            let mut requests = Vec::new();
            for key in keys {
                let (pk, rk) = (PartitionKey::new(key).unwrap(), RowKey::new(key).unwrap());
                requests.push(core.requests.get(&table, &pk, &rk).unwrap());
                requests.push(core.requests.insert(&table, &Entity::new(pk, rk)).unwrap());
            }
            requests.push(core.requests.query(&table, &query, Some(&next)).unwrap());
            requests.push(core.requests.list_tables(&Query::new(), None).unwrap());
            for request in requests {
                let expected = Url::parse(&request.uri().to_string()).unwrap();
                let headers = request.headers().clone();
                let converted = core.to_core_request(request.map(Bytes::from), &Context::default()).unwrap();
                assert_eq!(converted.url(), &expected);
                for (name, value) in &headers {
                    let got = converted.headers().get_optional_str(&HeaderName::from(name.as_str().to_owned()));
                    assert_eq!(got, Some(value.to_str().unwrap()), "{name}");
                }
                assert!(converted.headers().get_optional_str(&CLIENT_REQUEST_ID).is_some());
            }
        }
    }

    #[test]
    fn another_origin_is_parsed_whole() {
        let base = Url::parse("http://127.0.0.1:10002/devstoreaccount1").unwrap();
        let same = |uri: &str| same_origin(&base, &uri.parse().unwrap());
        assert!(same("http://127.0.0.1:10002/devstoreaccount1/T()"));
        assert!(!same("https://127.0.0.1:10002/x"));
        assert!(!same("http://127.0.0.1:10003/x"));
        assert!(!same("http://127.0.0.1/x"));
        assert!(!same("http://user@127.0.0.1:10002/x"));
        let default_port = Url::parse("https://acme.table.core.windows.net").unwrap();
        assert!(same_origin(&default_port, &"https://acme.table.core.windows.net/T()".parse().unwrap()));
        assert!(!same_origin(&default_port, &"https://acme.table.core.windows.net:443/T()".parse().unwrap()));
    }

    #[test]
    fn every_header_the_response_layer_reads_is_converted() {
        assert!(HEADERS_READ.iter().all(|name| known(name).is_some()));
    }

    #[test]
    fn request_ids_are_distinct_version_4_uuids() {
        let ids: std::collections::HashSet<Uuid> = (0..10_000).map(|_| new_request_id()).collect();
        assert_eq!(ids.len(), 10_000);
        assert!(ids.iter().all(|id| id.get_version() == Some(uuid::Version::Random)));
        let other_thread = std::thread::spawn(new_request_id).join().unwrap();
        assert!(!ids.contains(&other_thread));
    }

    #[test]
    fn the_context_request_id_is_the_one_sent() {
        let core = core("http://127.0.0.1:10002/devstoreaccount1", TableCredential::Anonymous);
        let request = core.requests.list_tables(&Query::new(), None).unwrap();
        let mut ctx = Context::default();
        ctx.insert(ClientRequestId::new("my-request-id".to_owned()));
        let converted = core.to_core_request(request.map(Bytes::from), &ctx).unwrap();
        assert_eq!(converted.headers().get_optional_str(&CLIENT_REQUEST_ID), Some("my-request-id"));
    }

    fn body(chunks: &[&'static [u8]]) -> AsyncResponseBody {
        let stream = futures::stream::iter(chunks.iter().map(|c| Ok(Bytes::from_static(c))).collect::<Vec<_>>());
        AsyncRawResponse::new(200.into(), Headers::new(), Box::pin(stream)).deconstruct().2
    }

    #[tokio::test]
    async fn bodies_are_read_whole() {
        assert_eq!(read_body(body(&[]), || 0).await.unwrap(), Bytes::new());
        let one: &'static [u8] = b"{\"value\":[]}";
        let read = read_body(body(&[one]), || one.len()).await.unwrap();
        assert_eq!((read.as_ptr(), read.len()), (one.as_ptr(), one.len()), "one chunk is not copied");
        assert_eq!(read_body(body(&[b"ab", b"cd", b"e"]), || 5).await.unwrap(), Bytes::from_static(b"abcde"));
        // A wrong Content-Length only sizes the buffer.
        assert_eq!(read_body(body(&[b"ab", b"cd", b"e"]), || 1).await.unwrap(), Bytes::from_static(b"abcde"));
        assert_eq!(read_body(body(&[b"ab", b"", b"e"]), || usize::MAX).await.unwrap(), Bytes::from_static(b"abe"));
    }

    /// A transport whose first answer breaks off in the middle of its body.
    #[derive(Debug, Default)]
    struct BreaksOnce {
        tries: std::sync::atomic::AtomicUsize,
    }

    #[async_trait]
    impl Policy for BreaksOnce {
        async fn send(&self, _: &Context, _: &mut Request, _: &[Arc<dyn Policy>]) -> PolicyResult {
            let first = self.tries.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0;
            let tail = if first {
                Err(azure_core::Error::with_message(CoreErrorKind::Io, "connection reset"))
            } else {
                Ok(Bytes::from_static(b"\"TableName\":\"People\"}]}"))
            };
            let chunks = vec![Ok(Bytes::from_static(b"{\"value\":[{")), tail];
            let mut headers = Headers::new();
            headers.insert("content-type", "application/json");
            Ok(AsyncRawResponse::new(200.into(), headers, Box::pin(futures::stream::iter(chunks))))
        }
    }

    #[tokio::test]
    async fn a_body_that_breaks_off_is_retried() {
        let transport = Arc::new(BreaksOnce::default());
        let options = TableServiceClientOptions::scripted(transport.clone());
        let core = Core::new(
            Endpoint::parse("http://127.0.0.1:10002/devstoreaccount1").unwrap(),
            TableCredential::Anonymous,
            options,
        )
        .unwrap();
        let request = core.requests.list_tables(&Query::new(), None);
        let page = core.call(request, &Context::default(), crate::response::tables).await.unwrap();
        assert_eq!(page.tables, [TableName::new("People").unwrap()]);
        assert_eq!(transport.tries.load(std::sync::atomic::Ordering::SeqCst), 2);
    }
}
