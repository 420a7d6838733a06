//! The options of clients and of each call, in the official SDK's shape: a struct with public fields and
//! `Default`, passed as `Option<...>` (`None` for the defaults).

use super::location::{LocationMode, ReadLocation};
use crate::connection::ServiceKind;
use crate::json::MetadataLevel;
use crate::request::IfMatch;
use crate::response::{Continuation, TableContinuation};
use azure_core::http::headers::Header as _;
use azure_core::http::request::options::ClientRequestId;
use azure_core::http::{ClientMethodOptions, ClientOptions, Context};
use std::time::Duration;

/// The options of a [`TableServiceClient`](super::TableServiceClient), shared by its
/// [`TableClient`](super::TableClient)s.
///
/// `client_options` is `azure_core`'s, as every official Azure SDK client takes it: retry (exponential with
/// jitter by default, honouring `Retry-After` and `x-ms-retry-after-ms`), transport, per-call and per-try
/// policies, user agent and logging. A connection that cannot be made (refused, a host name that does not
/// resolve, a failed TLS handshake) ends the call after
/// [`UNREACHABLE_TRIES`](super::outcome::UNREACHABLE_TRIES) tries whatever the retry options allow.
///
/// `try_timeout` and `deadline` bound the time of each try and of each call (all its tries); the per-try
/// timeout also sets the service's own `timeout` URI parameter (at most 30 seconds), so that the service gives
/// up first.
///
/// ```
/// use std::time::Duration;
/// use azure_core::http::{ClientOptions, ExponentialRetryOptions, RetryOptions};
/// use table_model::client::{LocationMode, TableServiceClientOptions};
/// use table_model::{MetadataLevel, ServiceKind};
/// let options = TableServiceClientOptions {
///     client_options: ClientOptions {
///         retry: RetryOptions::exponential(ExponentialRetryOptions { max_retries: 3, ..Default::default() }),
///         ..Default::default()
///     },
///     service_kind: Some(ServiceKind::CosmosDb), // a proxy in front of a Cosmos DB account
///     metadata: MetadataLevel::None,
///     try_timeout: Some(Duration::from_secs(10)),
///     deadline: Some(Duration::from_secs(60)),
///     location_mode: LocationMode::PrimaryThenSecondary, // a read-access geo-redundant account
/// };
/// # let _ = options;
/// ```
#[derive(Clone, Debug)]
pub struct TableServiceClientOptions {
    /// `azure_core`'s client options.
    pub client_options: ClientOptions,
    /// Which implementation the endpoint is, when its URL does not tell ([`Endpoint::kind`] guesses from the
    /// host: a proxy or a custom domain hides it). It chooses the Entra scope and the merge verb.
    ///
    /// [`Endpoint::kind`]: crate::Endpoint::kind
    pub service_kind: Option<ServiceKind>,
    /// The metadata level responses are asked for ([`MetadataLevel::Minimal`] by default). Derived structs
    /// read typed at every level; dynamic entities read Int64, Guid, DateTime and Binary values as strings
    /// under [`MetadataLevel::None`].
    pub metadata: MetadataLevel,
    /// How long one try may wait for its answer before it counts as lost and is retried (default 60 s;
    /// `None`: no limit). Also sent as the `timeout` URI parameter, capped at 30 s.
    pub try_timeout: Option<Duration>,
    /// How long one call may take, all its tries together (default: no limit beyond the retry options').
    /// A write that runs out of time may have been applied: its error says so.
    pub deadline: Option<Duration>,
    /// Where reads go ([`LocationMode::PrimaryOnly`] by default): for a read-access geo-redundant account,
    /// the secondary location, or the secondary when the primary fails. A call's options may say otherwise
    /// (`with_location_mode`); writes always go to the primary. See [`Location`](super::Location).
    pub location_mode: LocationMode,
}

impl Default for TableServiceClientOptions {
    fn default() -> Self {
        TableServiceClientOptions {
            client_options: ClientOptions::default(),
            service_kind: None,
            metadata: MetadataLevel::default(),
            try_timeout: Some(Duration::from_secs(60)),
            deadline: None,
            location_mode: LocationMode::PrimaryOnly,
        }
    }
}

#[cfg(test)]
impl TableServiceClientOptions {
    /// The options of the client unit tests that count what is sent: every request goes to `transport`, once.
    pub(crate) fn unretried(transport: std::sync::Arc<dyn azure_core::http::policies::Policy>) -> Self {
        use azure_core::http::{RetryOptions, Transport};
        TableServiceClientOptions {
            client_options: ClientOptions {
                transport: Some(Transport::with_policy(transport)),
                retry: RetryOptions::none(),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    /// The options of the client unit tests: every request goes to `transport`, and a retry waits 1 ms (2 at
    /// most).
    pub(crate) fn scripted(transport: std::sync::Arc<dyn azure_core::http::policies::Policy>) -> Self {
        use azure_core::http::{FixedRetryOptions, RetryOptions, Transport};
        TableServiceClientOptions {
            client_options: ClientOptions {
                transport: Some(Transport::with_policy(transport)),
                retry: RetryOptions::fixed(FixedRetryOptions {
                    delay: azure_core::time::Duration::milliseconds(1),
                    max_retries: 2,
                    ..Default::default()
                }),
                ..Default::default()
            },
            ..Default::default()
        }
    }
}

/// The options of a call that takes nothing else: the `azure_core` context (for example a tracing span or a
/// cancellation the transport honours), and the call's request id.
///
/// Every request carries an `x-ms-client-request-id`, which the service logs with it (its analytics logs, and
/// the diagnostics Microsoft support reads). It is a new random UUID unless the call is given one:
/// [`with_client_request_id`](Self::with_client_request_id), on these options and on those of every other call.
/// Each try of a call carries the same id.
///
/// ```no_run
/// use table_model::client::{RequestOptions, TableServiceClient};
/// use table_model::{Entity, PartitionKey, RowKey, TableName};
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let service = TableServiceClient::from_connection_string("UseDevelopmentStorage=true", None)?;
/// let orders = service.table_client(TableName::new("Orders")?);
/// let order = Entity::new(PartitionKey::new("eu")?, RowKey::new("42")?);
/// orders.insert(&order, Some(RequestOptions::default().with_client_request_id("checkout-42"))).await?;
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Debug, Default)]
pub struct RequestOptions<'a> {
    /// `azure_core`'s per-call options.
    pub method_options: ClientMethodOptions<'a>,
}

/// The options of an update or delete: its precondition, and (as [`RequestOptions`]) the `azure_core` context
/// and the call's request id.
///
/// Without `if_match`, the precondition is the ETag the entity carries (a `#[table(etag)]` field or
/// [`Entity::etag`](crate::Entity::etag)), and [`IfMatch::Any`] (the entity must exist) when it carries none.
#[derive(Clone, Debug, Default)]
pub struct UpdateOptions<'a> {
    /// The precondition, instead of the entity's own ETag.
    pub if_match: Option<IfMatch>,
    /// `azure_core`'s per-call options.
    pub method_options: ClientMethodOptions<'a>,
}

/// The options of a query of entities: where to resume, and (as [`RequestOptions`]) the `azure_core` context
/// and the request id, which every page's request carries.
#[derive(Clone, Debug, Default)]
pub struct QueryOptions<'a> {
    /// Where to resume: a continuation kept from an earlier page ([`QueryPager::continuation`]), for example
    /// parsed from the token a browser sent back.
    ///
    /// [`QueryPager::continuation`]: super::QueryPager::continuation
    pub continuation: Option<Continuation>,
    /// The metadata level of this query's pages, instead of the client's
    /// ([`TableServiceClientOptions::metadata`]): [`MetadataLevel::None`] makes a keys-only scan's pages about half
    /// as large (no `odata.etag` per entity; values of types JSON does not carry come untyped, `docs/rules.md`
    /// §6).
    pub metadata: Option<MetadataLevel>,
    /// `azure_core`'s per-call options, used for every page.
    pub method_options: ClientMethodOptions<'a>,
}

/// The options of a table listing: where to resume, and (as [`RequestOptions`]) the `azure_core` context and
/// the request id, which every page's request carries.
#[derive(Clone, Debug, Default)]
pub struct ListTablesOptions<'a> {
    /// Where to resume: a continuation kept from an earlier page.
    pub continuation: Option<TableContinuation>,
    /// `azure_core`'s per-call options, used for every page.
    pub method_options: ClientMethodOptions<'a>,
}

/// The per-call options types' request id: a [`ClientRequestId`] in the context, where `azure_core`'s own
/// policy and the client read it.
macro_rules! impl_client_request_id {
    ($($options:ident),* $(,)?) => {$(
        impl<'a> $options<'a> {
            /// Sends this `x-ms-client-request-id` instead of a random one, so that the call's requests can be
            /// found in the service's logs: a value of visible ASCII characters, at most 1,024 of them (a header
            /// that cannot be sent fails the call, and nothing is sent). A retry sends the same id.
            ///
            /// The same as inserting an `azure_core` `ClientRequestId` into `method_options.context`.
            #[must_use]
            pub fn with_client_request_id(mut self, id: impl Into<String>) -> Self {
                self.method_options.context.insert(ClientRequestId::new(id.into()));
                self
            }

            /// The request id given with [`with_client_request_id`](Self::with_client_request_id), if any.
            ///
            /// ```
            #[doc = concat!("use table_model::client::", stringify!($options), ";")]
            #[doc = concat!("let options = ", stringify!($options), "::default().with_client_request_id(\"import-7\");")]
            /// assert_eq!(options.client_request_id().as_deref(), Some("import-7"));
            #[doc = concat!("assert_eq!(", stringify!($options), "::default().client_request_id(), None);")]
            /// ```
            pub fn client_request_id(&self) -> Option<String> {
                client_request_id(&self.method_options.context)
            }
        }
    )*};
}
impl_client_request_id!(RequestOptions, UpdateOptions, QueryOptions, ListTablesOptions);

/// The read options types' location mode: a [`ReadLocation`] in the context, where the client reads it.
macro_rules! impl_location_mode {
    ($($options:ident),* $(,)?) => {$(
        impl<'a> $options<'a> {
            /// Where this read goes, instead of the client's
            /// [`location_mode`](TableServiceClientOptions::location_mode): see
            /// [`LocationMode`]. Writes ignore it (they always go to the primary).
            #[must_use]
            pub fn with_location_mode(mut self, mode: LocationMode) -> Self {
                self.method_options.context.insert(ReadLocation(mode));
                self
            }

            /// The location mode given with [`with_location_mode`](Self::with_location_mode), if any.
            pub fn location_mode(&self) -> Option<LocationMode> {
                self.method_options.context.value::<ReadLocation>().map(|mode| mode.0)
            }
        }
    )*};
}
impl_location_mode!(RequestOptions, QueryOptions, ListTablesOptions);

/// The request id a context carries, if any.
pub(crate) fn client_request_id(ctx: &Context<'_>) -> Option<String> {
    ctx.value::<ClientRequestId>().map(|id| id.value().as_str().to_owned())
}
