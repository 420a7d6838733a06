//! Distributed tracing through `azure_core`'s instrumentation, as the official Rust clients emit it: a span per
//! public call, with the pipeline's request spans (one per try) under it.
//!
//! Set a tracer provider in `ClientOptions::instrumentation` (for OpenTelemetry, `azure_core_opentelemetry`'s
//! `OpenTelemetryTracerProvider`) and every call of a [`TableServiceClient`](super::TableServiceClient) or
//! [`TableClient`](super::TableClient) is traced:
//!
//! - the call's span, of kind internal, named `Storage.Tables.<client>.<method>` (for example
//!   `Storage.Tables.TableClient.get`, `Storage.Tables.TableServiceClient.list_tables`), with
//!   [`AZ_NAMESPACE`] (`Microsoft.Storage`, or `Microsoft.DocumentDB` for a Cosmos DB account), `server.address`,
//!   `server.port`, the table (`db.collection.name`) for a table's call, and on failure `error.type` (the HTTP
//!   status of a refusal, else the kind of failure) with an error status for anything but a `4xx`;
//! - under it, a span per try from `azure_core`'s pipeline, of kind client, named after the HTTP method, with
//!   `url.full` (every query value but `api-version` replaced by `REDACTED`, so no SAS signature), the status,
//!   `az.client_request_id`, `http.request.resend_count` from the second try on, and (added by this client)
//!   [`AZ_SERVICE_REQUEST_ID`] from the answer;
//! - a query pager's or table pager's span per page; [`TableClient::bulk_write`]'s span with a child per
//!   transaction ([`PARTITION_KEY`], [`OPERATIONS`], [`OUTCOME`], [`TRIES`]) and, under a transaction whose
//!   reply was lost, a `settle` span per read that settles it.
//! - [`TableClient::write_matching`]'s and [`TableClient::delete_matching`]'s span ([`WRITTEN`], [`FAILED`]),
//!   the parent of each page's query span and each page's bulk write.
//!
//! `TableServiceClient::create_table`, `delete_table` and their `_if_*` forms are their table client's calls
//! (`Storage.Tables.TableClient.create_table`, ...); `query_first` and `plan_ranges` read query pages, a span
//! each.
//!
//! With no tracer provider set nothing of this runs (BENCHMARKS.md, "Tracing"). No attribute holds a key, a
//! SAS signature or a token; no attribute holds an entity's properties.
//!
//! To watch retries, throttling and settled transactions without OpenTelemetry (a `-v` flag, a log line per
//! event), set a [`SpanHook`] as the tracer provider and read these attributes as each span ends: a try's span
//! with [`HTTP_RESEND_COUNT`] is a retry, one with a `429` or `503` status ([`HTTP_STATUS`]) was throttled, a
//! transaction's [`OUTCOME`] says whether a lost reply was settled, and [`AZ_SERVICE_REQUEST_ID`] is the
//! service's id of each try.
//!
//! [`TableClient::bulk_write`]: super::TableClient::bulk_write
//! [`TableClient::write_matching`]: super::TableClient::write_matching
//! [`TableClient::delete_matching`]: super::TableClient::delete_matching

use super::error::{Error, ErrorKind};
use super::transport::find_header;
use crate::connection::ServiceKind;
use crate::name::TableName;
use async_trait::async_trait;
use azure_core::http::headers::HeaderName;
use azure_core::http::policies::{Policy, PolicyResult};
use azure_core::http::{Context, Request, Url};
use azure_core::tracing::{Attribute, AttributeValue, Span, SpanKind, SpanStatus, Tracer, TracerProvider};
use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;

/// The Azure resource provider the account belongs to (`Microsoft.Storage`, `Microsoft.DocumentDB`), on every
/// span the client emits.
pub const AZ_NAMESPACE: &str = "az.namespace";
/// The `x-ms-request-id` the service answered a try with, on the try's span: what Microsoft support asks for.
pub const AZ_SERVICE_REQUEST_ID: &str = "az.service_request.id";
/// The `x-ms-client-request-id` a try carried, on the try's span (`azure_core`'s).
pub const AZ_CLIENT_REQUEST_ID: &str = "az.client_request_id";
/// On a try's span from the second try on: how many tries came before it (`azure_core`'s).
pub const HTTP_RESEND_COUNT: &str = "http.request.resend_count";
/// On a try's span: the status of its answer (`azure_core`'s).
pub const HTTP_STATUS: &str = "http.response.status_code";
/// On a failed call's or try's span: the HTTP status of a refusal (`"404"`), else the kind of failure
/// (`"transport"`, `"request"`, `"response"`, `"connection"`, `"outcome_unknown"`).
pub const ERROR_TYPE: &str = "error.type";
/// The `error.type` a [`SpanHook`] gives a span dropped before it ended: a try that got no answer within its
/// time, or a call its caller dropped.
pub const ABANDONED: &str = "abandoned";

/// On a table's call: the table.
pub const TABLE: &str = "db.collection.name";
/// On a transaction's span: its PartitionKey.
pub const PARTITION_KEY: &str = "table_model.partition_key";
/// On a transaction's span: how many operations it holds.
pub const OPERATIONS: &str = "table_model.operations";
/// On a transaction's span: `committed`, `settled` (its reply was lost, and the entities read back show it
/// was applied), `failed`, or `unknown` (the read-back could not tell).
pub const OUTCOME: &str = "table_model.outcome";
/// On a bulk write's span: how many transactions were answered.
pub const TRANSACTIONS: &str = "table_model.transactions";
/// On a bulk write's span: how many entities were written.
pub const WRITTEN: &str = "table_model.written";
/// On a bulk write's span: how many entities were not written (each is in the report).
pub const FAILED: &str = "table_model.failed";
/// On a call's span: how many requests (tries) it sent; the reads that settle a lost reply count on their own
/// `settle` span.
pub const TRIES: &str = "table_model.tries";
/// On a read's span when the account's secondary location served it (`secondary`): the answer may lag the
/// primary ([`LocationMode`](super::LocationMode)).
pub const LOCATION: &str = "table_model.location";

/// The prefix of every span name.
const PREFIX: &str = "Storage.Tables.";

/// The client's tracer (with its namespace) and what its spans say of the server; `None` when no tracer
/// provider is set, and then nothing here costs more than that check.
#[derive(Debug)]
pub(crate) struct Tracing {
    tracer: Arc<dyn Tracer>,
    server: Option<(String, u16)>,
}

impl Tracing {
    pub(crate) fn new(
        provider: Option<&Arc<dyn TracerProvider>>,
        kind: ServiceKind,
        url: Option<&Url>,
    ) -> Option<Self> {
        let namespace = match kind {
            ServiceKind::Storage | ServiceKind::Azurite => "Microsoft.Storage",
            ServiceKind::CosmosDb => "Microsoft.DocumentDB",
        };
        let tracer = provider?.get_tracer(Some(namespace), env!("CARGO_PKG_NAME"), Some(env!("CARGO_PKG_VERSION")));
        let server = url.and_then(|url| Some((url.host_str()?.to_owned(), url.port_or_known_default()?)));
        Some(Tracing { tracer, server })
    }
}

/// The span of the call a context belongs to, when it is one of this client's: the requests of the call add
/// their tries to it.
pub(crate) struct CallSpan {
    span: Arc<dyn Span>,
    tries: AtomicU32,
    settled: AtomicBool,
    /// Whether the calls made inside this one get spans of their own under it (a bulk write's transactions);
    /// otherwise they are part of it, as `azure_core` treats nested calls.
    parent: bool,
}

impl std::fmt::Debug for CallSpan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallSpan").field("tries", &self.tries).field("parent", &self.parent).finish_non_exhaustive()
    }
}

/// One public call: its context (with the call's span and the tracer, when tracing) and its span.
pub(crate) struct Operation<'a> {
    ctx: Cow<'a, Context<'a>>,
    call: Option<Arc<CallSpan>>,
}

impl<'a> Operation<'a> {
    /// Starts the span of a call named `client.method`, unless no tracer is set or the call is made inside
    /// another (the outer call's span covers it, as `azure_core` does it), in which case `ctx` is used as it is.
    pub(crate) fn start(
        tracing: Option<&Tracing>,
        name: &'static str,
        ctx: &'a Context<'a>,
        table: Option<&TableName>,
    ) -> Self {
        let Some(tracing) = tracing else { return Operation { ctx: Cow::Borrowed(ctx), call: None } };
        Self::start_traced(tracing, name, ctx, table, Vec::new(), false)
    }

    #[cold]
    fn start_traced(
        tracing: &Tracing,
        name: &'static str,
        ctx: &'a Context<'a>,
        table: Option<&TableName>,
        extra: Vec<Attribute>,
        parent: bool,
    ) -> Self {
        let outer = ctx.value::<Arc<CallSpan>>();
        let nested = match outer {
            Some(outer) => !outer.parent,
            None => ctx.value::<Arc<dyn Span>>().is_some(),
        };
        if nested {
            return Operation { ctx: Cow::Borrowed(ctx), call: None };
        }
        let mut attributes = extra;
        attributes.reserve(4);
        if let Some(namespace) = tracing.tracer.namespace() {
            attributes.push(Attribute { key: AZ_NAMESPACE.into(), value: namespace.into() });
        }
        if let Some((host, port)) = &tracing.server {
            attributes.push(Attribute { key: "server.address".into(), value: host.as_str().into() });
            attributes.push(Attribute { key: "server.port".into(), value: i64::from(*port).into() });
        }
        if let Some(table) = table {
            attributes.push(Attribute { key: TABLE.into(), value: table.as_str().into() });
        }
        let name = Cow::Owned(format!("{PREFIX}{name}"));
        let span = match outer {
            Some(outer) => {
                tracing.tracer.start_span_with_parent(name, SpanKind::Internal, attributes, outer.span.clone())
            }
            None => tracing.tracer.start_span(name, SpanKind::Internal, attributes),
        };
        let call = Arc::new(CallSpan {
            span: span.clone(),
            tries: AtomicU32::new(0),
            settled: AtomicBool::new(false),
            parent,
        });
        let ctx = ctx.clone().with_value(span).with_value(call.clone()).with_value(tracing.tracer.clone());
        Operation { ctx: Cow::Owned(ctx), call: Some(call) }
    }

    /// As [`start`](Self::start), for a call whose inner calls get spans of their own under its span.
    pub(crate) fn start_parent(
        tracing: Option<&Tracing>,
        name: &'static str,
        ctx: &'a Context<'a>,
        table: Option<&TableName>,
    ) -> Self {
        let Some(tracing) = tracing else { return Operation { ctx: Cow::Borrowed(ctx), call: None } };
        Self::start_traced(tracing, name, ctx, table, Vec::new(), true)
    }

    /// As [`start`](Self::start), for one transaction of a bulk write (a child of the bulk write's span).
    pub(crate) fn start_transaction(
        tracing: Option<&Tracing>,
        ctx: &'a Context<'a>,
        table: &TableName,
        partition_key: &str,
        operations: usize,
    ) -> Self {
        let Some(tracing) = tracing else { return Operation { ctx: Cow::Borrowed(ctx), call: None } };
        let extra = vec![
            Attribute { key: PARTITION_KEY.into(), value: partition_key.into() },
            Attribute { key: OPERATIONS.into(), value: i64::try_from(operations).unwrap_or(i64::MAX).into() },
        ];
        Self::start_traced(tracing, "TableClient.submit_transaction", ctx, Some(table), extra, false)
    }

    /// The context the call's requests are sent with.
    pub(crate) fn ctx(&self) -> &Context<'a> {
        &self.ctx
    }

    /// Sets an attribute of the call's span (when tracing).
    pub(crate) fn set(&self, key: &'static str, value: impl FnOnce() -> AttributeValue) {
        if let Some(call) = &self.call {
            call.span.set_attribute(key, value());
        }
    }

    /// Ends the call's span with what the call returns, and returns it.
    pub(crate) fn end<T>(&mut self, result: Result<T, Error>) -> Result<T, Error> {
        if let Some(call) = self.call.take() {
            finish(&call, result.as_ref().err(), None);
        }
        result
    }

    /// As [`end`](Self::end), for a transaction: its outcome too.
    pub(crate) fn end_transaction<T>(&mut self, result: Result<T, Error>) -> Result<T, Error> {
        if let Some(call) = self.call.take() {
            let outcome = match &result {
                Ok(_) if call.settled.load(Ordering::Relaxed) => "settled",
                Ok(_) => "committed",
                Err(e) if matches!(e.kind(), ErrorKind::OutcomeUnknown(_)) => "unknown",
                Err(_) => "failed",
            };
            finish(&call, result.as_ref().err(), Some(outcome));
        }
        result
    }
}

impl Drop for Operation<'_> {
    /// A call dropped before it ended (its future cancelled) still ends its span.
    fn drop(&mut self) {
        if let Some(call) = self.call.take() {
            call.span.set_attribute(ERROR_TYPE, "cancelled".into());
            finish(&call, None, None);
        }
    }
}

#[cold]
fn finish(call: &CallSpan, error: Option<&Error>, outcome: Option<&'static str>) {
    let span = &call.span;
    if span.is_recording() {
        span.set_attribute(TRIES, i64::from(call.tries.load(Ordering::Relaxed)).into());
        if let Some(outcome) = outcome {
            span.set_attribute(OUTCOME, outcome.into());
        }
        if let Some(error) = error {
            // As azure_core's public API spans: a refusal's status is the error type, and only a server's
            // error (or no answer) makes the span's status an error.
            match error.status() {
                Some(status) => {
                    span.set_attribute(ERROR_TYPE, status.to_string().into());
                    if status >= 500 {
                        span.set_status(SpanStatus::Error { description: String::new() });
                    }
                }
                None => {
                    let kind = error_type(error.kind());
                    span.set_attribute(ERROR_TYPE, kind.into());
                    span.set_status(SpanStatus::Error { description: kind.to_owned() });
                }
            }
        }
    }
    span.end();
}

/// The `error.type` of a failure without an HTTP status: never its message, which may hold data.
fn error_type(kind: &ErrorKind) -> &'static str {
    match kind {
        ErrorKind::Service(_) => "service",
        ErrorKind::Request(_) => "request",
        ErrorKind::Response(_) => "response",
        ErrorKind::Connection(_) => "connection",
        ErrorKind::OutcomeUnknown(_) => "outcome_unknown",
        ErrorKind::Transport(_) => "transport",
        ErrorKind::NoSecondary { .. } => "no_secondary",
    }
}

/// Adds a request's tries to the span of the call its context belongs to.
pub(crate) fn count_tries(ctx: &Context<'_>, tries: u32) {
    if let Some(call) = ctx.value::<Arc<CallSpan>>() {
        call.tries.fetch_add(tries, Ordering::Relaxed);
    }
}

/// Notes on the span of the call a context belongs to which location served it.
pub(crate) fn note_location(ctx: &Context<'_>, location: super::location::Location) {
    if let Some(call) = ctx.value::<Arc<CallSpan>>() {
        call.span.set_attribute(LOCATION, location.as_str().into());
    }
}

/// Starts a `settle` span under the call's span, for the reads that settle a write whose reply was lost, and
/// marks the call as settled-by-reading (its outcome is `settled` if it then succeeds).
pub(crate) fn settling<'a>(tracing: Option<&Tracing>, ctx: &'a Context<'a>) -> Operation<'a> {
    let Some(tracing) = tracing else { return Operation { ctx: Cow::Borrowed(ctx), call: None } };
    let Some(outer) = ctx.value::<Arc<CallSpan>>() else { return Operation { ctx: Cow::Borrowed(ctx), call: None } };
    outer.settled.store(true, Ordering::Relaxed);
    let span = tracing.tracer.start_span_with_parent(
        Cow::Borrowed("Storage.Tables.TableClient.settle"),
        SpanKind::Internal,
        tracing
            .tracer
            .namespace()
            .map(|ns| Attribute { key: AZ_NAMESPACE.into(), value: ns.into() })
            .into_iter()
            .collect(),
        outer.span.clone(),
    );
    let call = Arc::new(CallSpan {
        span: span.clone(),
        tries: AtomicU32::new(0),
        settled: AtomicBool::new(false),
        parent: false,
    });
    let ctx = ctx.clone().with_value(span).with_value(call.clone());
    Operation { ctx: Cow::Owned(ctx), call: Some(call) }
}

/// Puts the service's request id (`x-ms-request-id`) of each try's answer on the try's span, which
/// `azure_core`'s request instrumentation (a per-try policy before this one) has put in the context. In the
/// pipeline only when a tracer provider is set.
#[derive(Debug)]
pub(crate) struct ServiceRequestIdPolicy;

#[async_trait]
impl Policy for ServiceRequestIdPolicy {
    async fn send(&self, ctx: &Context, request: &mut Request, next: &[Arc<dyn Policy>]) -> PolicyResult {
        let response = next[0].send(ctx, request, &next[1..]).await?;
        if let Some(span) = ctx.value::<Arc<dyn Span>>() {
            const REQUEST_ID: HeaderName = HeaderName::from_static("x-ms-request-id");
            if let Some(id) = find_header(response.headers(), &REQUEST_ID)
                && span.is_recording()
            {
                span.set_attribute(AZ_SERVICE_REQUEST_ID, id.to_owned().into());
            }
        }
        Ok(response)
    }
}

/// A tracer provider that hands each span to a function when it ends, with no OpenTelemetry: the hook for a
/// `--verbose` flag or a log line per retry, throttled try or settled transaction.
///
/// Set it where a tracer provider goes, `ClientOptions::instrumentation`; the function runs on the task that
/// ends the span, after the try or the call it describes, so it should be quick (print, count, send to a
/// channel).
///
/// ```no_run
/// use table_model::client::azure_core::http::{ClientOptions, InstrumentationOptions};
/// use table_model::client::trace::{self, SpanHook};
/// use table_model::client::{TableServiceClient, TableServiceClientOptions};
/// # fn run() -> Result<(), table_model::client::Error> {
/// let hook = SpanHook::new(|span| {
///     let id = span.str(trace::AZ_SERVICE_REQUEST_ID).unwrap_or("-");
///     if let Some(resend) = span.int(trace::HTTP_RESEND_COUNT) {
///         eprintln!("retry {resend} of {} (request id {id})", span.parent().unwrap_or("a call"));
///     }
///     if matches!(span.int(trace::HTTP_STATUS), Some(429 | 503)) {
///         eprintln!("throttled: {} (request id {id})", span.parent().unwrap_or("a call"));
///     }
///     if span.str(trace::OUTCOME) == Some("settled") {
///         eprintln!("transaction of {:?} settled by reading it back", span.str(trace::PARTITION_KEY));
///     }
/// });
/// let options = TableServiceClientOptions {
///     client_options: ClientOptions {
///         instrumentation: InstrumentationOptions { tracer_provider: Some(hook) },
///         ..Default::default()
///     },
///     ..Default::default()
/// };
/// let service = TableServiceClient::from_connection_string("UseDevelopmentStorage=true", Some(options))?;
/// # Ok(())
/// # }
/// ```
pub struct SpanHook {
    on_end: Arc<dyn Fn(&EndedSpan<'_>) + Send + Sync>,
    inner: Option<Arc<dyn TracerProvider>>,
}

impl SpanHook {
    /// A tracer provider calling `on_end` with each span that ends.
    // The return type is what `InstrumentationOptions::tracer_provider` takes.
    #[allow(clippy::new_ret_no_self)]
    pub fn new(on_end: impl Fn(&EndedSpan<'_>) + Send + Sync + 'static) -> Arc<dyn TracerProvider> {
        Arc::new(SpanHook { on_end: Arc::new(on_end), inner: None })
    }

    /// A tracer provider calling `on_end` with each span that ends, every span also recorded by `inner` (an
    /// OpenTelemetry bridge such as `azure_core_opentelemetry`'s, say), with the same name, kind, attributes,
    /// status and parent, and its trace context sent in each request's headers as `inner` sends it: a tool's
    /// `--verbose` lines and its export to a collector from one client.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use std::sync::Arc;
    /// use table_model::client::trace::SpanHook;
    ///
    /// let recorded = Arc::new(AtomicUsize::new(0));
    /// let counter = recorded.clone();
    /// // Here `inner` is a second hook; in a service, the OpenTelemetry bridge.
    /// let inner = SpanHook::new(move |_| {
    ///     counter.fetch_add(1, Ordering::Relaxed);
    /// });
    /// let provider = SpanHook::around(inner, |span| eprintln!("{} ended", span.name()));
    /// let tracer = provider.get_tracer(Some("Microsoft.Storage"), "table-model", None);
    /// let span = tracer.start_span("Storage.Tables.TableClient.get".into(), Default::default(), Vec::new());
    /// span.end();
    /// assert_eq!(recorded.load(Ordering::Relaxed), 1);
    /// ```
    pub fn around(
        inner: Arc<dyn TracerProvider>,
        on_end: impl Fn(&EndedSpan<'_>) + Send + Sync + 'static,
    ) -> Arc<dyn TracerProvider> {
        Arc::new(SpanHook { on_end: Arc::new(on_end), inner: Some(inner) })
    }
}

impl std::fmt::Debug for SpanHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SpanHook").finish_non_exhaustive()
    }
}

impl TracerProvider for SpanHook {
    fn get_tracer(
        &self,
        namespace: Option<&'static str>,
        crate_name: &'static str,
        crate_version: Option<&'static str>,
    ) -> Arc<dyn Tracer> {
        let inner = self.inner.as_ref().map(|inner| inner.get_tracer(namespace, crate_name, crate_version));
        Arc::new(HookTracer { namespace, on_end: self.on_end.clone(), inner })
    }
}

/// A span as it ended, given to a [`SpanHook`]'s function.
#[derive(Debug)]
pub struct EndedSpan<'a> {
    name: &'a str,
    parent: Option<&'a str>,
    request: bool,
    attributes: &'a [Attribute],
    failed: bool,
    elapsed: std::time::Duration,
}

impl EndedSpan<'_> {
    /// The span's name: `Storage.Tables.TableClient.get` for a call, the HTTP method (`GET`) for a try.
    pub fn name(&self) -> &str {
        self.name
    }

    /// The name of the span it is under (a try's call, a transaction's bulk write), if any.
    pub fn parent(&self) -> Option<&str> {
        self.parent
    }

    /// Whether it is a try's span (`azure_core`'s, of kind client), not a call's.
    pub fn is_request(&self) -> bool {
        self.request
    }

    /// Whether its status is an error (a try answered `4xx` or `5xx`, a call that failed without a `4xx`).
    pub fn failed(&self) -> bool {
        self.failed
    }

    /// How long it lasted.
    pub fn elapsed(&self) -> std::time::Duration {
        self.elapsed
    }

    /// Its attributes, as they were set (the constants of this module name them).
    pub fn attributes(&self) -> &[Attribute] {
        self.attributes
    }

    /// The value of an attribute, if set.
    pub fn attribute(&self, key: &str) -> Option<&AttributeValue> {
        self.attributes.iter().rev().find(|a| a.key == key).map(|a| &a.value)
    }

    /// The value of a text attribute, if set.
    pub fn str(&self, key: &str) -> Option<&str> {
        match self.attribute(key)? {
            AttributeValue::String(s) => Some(s),
            _ => None,
        }
    }

    /// The value of an integer attribute, if set.
    pub fn int(&self, key: &str) -> Option<i64> {
        match self.attribute(key)? {
            AttributeValue::I64(i) => Some(*i),
            _ => None,
        }
    }
}

struct HookTracer {
    namespace: Option<&'static str>,
    on_end: Arc<dyn Fn(&EndedSpan<'_>) + Send + Sync>,
    /// The tracer of the provider this hook is around, if any: each span is its span too.
    inner: Option<Arc<dyn Tracer>>,
}

impl std::fmt::Debug for HookTracer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HookTracer").field("namespace", &self.namespace).finish_non_exhaustive()
    }
}

impl HookTracer {
    fn span(
        &self,
        name: Cow<'static, str>,
        kind: SpanKind,
        attributes: Vec<Attribute>,
        parent: Option<Cow<'static, str>>,
        inner: Option<Arc<dyn Span>>,
    ) -> Arc<dyn Span> {
        static IDS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        Arc::new(HookSpan {
            id: IDS.fetch_add(1, Ordering::Relaxed),
            name,
            parent,
            request: kind == SpanKind::Client,
            state: std::sync::Mutex::new((attributes, false)),
            ended: AtomicBool::new(false),
            started: std::time::Instant::now(),
            on_end: self.on_end.clone(),
            inner,
        })
    }
}

impl Tracer for HookTracer {
    fn start_span(&self, name: Cow<'static, str>, kind: SpanKind, attributes: Vec<Attribute>) -> Arc<dyn Span> {
        let inner =
            self.inner.as_ref().map(|inner| inner.start_span(name.clone(), same_kind(&kind), attributes.clone()));
        self.span(name, kind, attributes, None, inner)
    }

    fn start_span_with_parent(
        &self,
        name: Cow<'static, str>,
        kind: SpanKind,
        attributes: Vec<Attribute>,
        parent: Arc<dyn Span>,
    ) -> Arc<dyn Span> {
        let parent = parent.as_any().downcast_ref::<HookSpan>();
        let inner = match (&self.inner, parent.and_then(|p| p.inner.clone())) {
            (Some(tracer), Some(of)) => {
                Some(tracer.start_span_with_parent(name.clone(), same_kind(&kind), attributes.clone(), of))
            }
            (Some(tracer), None) => Some(tracer.start_span(name.clone(), same_kind(&kind), attributes.clone())),
            (None, _) => None,
        };
        self.span(name, kind, attributes, parent.map(|p| p.name.clone()), inner)
    }

    fn namespace(&self) -> Option<&'static str> {
        self.namespace
    }
}

struct HookSpan {
    id: u64,
    name: Cow<'static, str>,
    parent: Option<Cow<'static, str>>,
    request: bool,
    /// The attributes, and whether the status is an error.
    state: std::sync::Mutex<(Vec<Attribute>, bool)>,
    ended: AtomicBool,
    started: std::time::Instant,
    on_end: Arc<dyn Fn(&EndedSpan<'_>) + Send + Sync>,
    /// The same span in the provider this hook is around, if any: told everything this one is.
    inner: Option<Arc<dyn Span>>,
}

/// A span dropped before it was ended is one whose work was abandoned: a try that got no answer within its time
/// (the per-try timeout drops it) or a call its caller dropped. It is handed to the hook then, failed, with
/// `error.type` [`ABANDONED`], so that a try without an answer is seen as it happens.
impl Drop for HookSpan {
    fn drop(&mut self) {
        if self.ended.load(Ordering::Relaxed) {
            return;
        }
        {
            let mut state = self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            state.1 = true;
            if !state.0.iter().any(|a| a.key == ERROR_TYPE) {
                state.0.push(Attribute { key: ERROR_TYPE.into(), value: AttributeValue::from(ABANDONED) });
                if let Some(inner) = &self.inner {
                    inner.set_attribute(ERROR_TYPE, AttributeValue::from(ABANDONED));
                }
            }
        }
        if let Some(inner) = &self.inner {
            inner.set_status(SpanStatus::Error { description: ABANDONED.to_owned() });
        }
        self.end();
    }
}

impl azure_core::tracing::AsAny for HookSpan {
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl Span for HookSpan {
    fn is_recording(&self) -> bool {
        true
    }

    fn span_id(&self) -> [u8; 8] {
        self.id.to_be_bytes()
    }

    fn end(&self) {
        if self.ended.swap(true, Ordering::Relaxed) {
            return;
        }
        if let Some(inner) = &self.inner {
            inner.end();
        }
        let state = self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        (self.on_end)(&EndedSpan {
            name: &self.name,
            parent: self.parent.as_deref(),
            request: self.request,
            attributes: &state.0,
            failed: state.1,
            elapsed: self.started.elapsed(),
        });
    }

    fn set_status(&self, status: SpanStatus) {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner).1 =
            matches!(status, SpanStatus::Error { .. });
        if let Some(inner) = &self.inner {
            inner.set_status(status);
        }
    }

    fn set_attribute(&self, key: &'static str, value: AttributeValue) {
        if let Some(inner) = &self.inner {
            inner.set_attribute(key, value.clone());
        }
        let mut state = self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        match state.0.iter_mut().find(|a| a.key == key) {
            Some(attribute) => attribute.value = value,
            None => state.0.push(Attribute { key: key.into(), value }),
        }
    }

    fn record_error(&self, error: &dyn std::error::Error) {
        if let Some(inner) = &self.inner {
            inner.record_error(error);
        }
    }

    fn set_current(&self, context: &Context) -> Box<dyn azure_core::tracing::SpanGuard> {
        match &self.inner {
            Some(inner) => inner.set_current(context),
            None => Box::new(NoGuard),
        }
    }

    fn propagate_headers(&self, request: &mut Request) {
        if let Some(inner) = &self.inner {
            inner.propagate_headers(request);
        }
    }
}

/// A copy of a span's kind, for the span of the provider a hook is around (`SpanKind` is not `Clone`).
fn same_kind(kind: &SpanKind) -> SpanKind {
    match kind {
        SpanKind::Client => SpanKind::Client,
        SpanKind::Server => SpanKind::Server,
        SpanKind::Producer => SpanKind::Producer,
        SpanKind::Consumer => SpanKind::Consumer,
        _ => SpanKind::Internal,
    }
}

struct NoGuard;

impl azure_core::tracing::SpanGuard for NoGuard {
    fn end(self) {}
}
