//! The client of one table: its entities, typed or dynamic, its queries and its transactions.

use super::core::Core;
use super::error::Error;
use super::location::Location;
use super::options::{QueryOptions, RequestOptions, UpdateOptions};
use super::pager::{Fetch, QueryPager, RawPages};
use super::read_back::{outcome_unknown, ReadBack};
use super::trace::{self, Operation};
use crate::batch::Batch;
use crate::connection::{Endpoint, ServiceKind};
use crate::entity::ETag;
use crate::key::{PartitionKey, RowKey};
use crate::name::TableName;
use crate::query::Query;
use crate::request::error::RequestError;
use crate::request::{IfMatch, TableService, UpdateMode, WriteEntity};
use crate::response::errors::ResponseError;
use crate::response::{self, BatchOutcome, Continuation, ReadEntity};
use crate::sas::SignedIdentifier;
use crate::{Entity, ErrorCode};
use azure_core::http::Context;
use azure_core::Bytes;
use futures::TryStreamExt as _;
use std::collections::HashMap;
use std::sync::Arc;

/// The client of one table, from [`TableServiceClient::table_client`](super::TableServiceClient::table_client):
/// inserts, upserts, updates, deletes and gets entities, runs queries as streams and sends transactions.
///
/// Every write takes a dynamic [`Entity`](crate::Entity) or a `#[derive(TableEntity)]` struct, checked and
/// encoded before anything is sent; every read gives either (see [`ReadEntity`]). Updates and deletes of an
/// entity read earlier use its ETag (a `#[table(etag)]` field) as their precondition.
///
/// ```no_run
/// use futures::TryStreamExt as _;
/// use table_model::client::TableServiceClient;
/// use table_model::{filter, ErrorCode, ETag, Query, TableEntity, TableName, UpdateMode};
///
/// #[derive(TableEntity, Debug)]
/// struct Event {
///     #[table(partition_key)]
///     tenant: String,
///     #[table(row_key, reverse_chronological)]
///     at: chrono::DateTime<chrono::Utc>,
///     action: String,
///     #[table(etag)]
///     etag: Option<ETag>,
/// }
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let service = TableServiceClient::from_connection_string("UseDevelopmentStorage=true", None)?;
/// let audit = service.create_table_if_not_exists(&TableName::from_static("Audit"), None).await?;
/// audit.insert(&Event { tenant: "acme".into(), at: chrono::Utc::now(), action: "login".into(), etag: None }, None).await?;
///
/// // The newest ten events of a tenant: keys sort newest first.
/// let newest: Vec<Event> =
///     audit.query_first(&Query::new().filter(filter::PARTITION_KEY.eq("acme")), 10, None).await?;
///
/// // An update under the ETag it was read with; a concurrent change is one match arm.
/// let mut event = audit.reload(&newest[0], None).await?;
/// event.action = "login (verified)".into();
/// match audit.update(&event, UpdateMode::Merge, None).await {
///     Err(e) if e.error_code() == Some(ErrorCode::UpdateConditionNotSatisfied) => { /* read again, retry */ }
///     other => { other?; }
/// }
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct TableClient {
    core: Arc<Core>,
    table: TableName,
}

impl TableClient {
    pub(crate) fn new(core: Arc<Core>, table: TableName) -> Self {
        TableClient { core, table }
    }

    pub(crate) fn core(&self) -> &Core {
        &self.core
    }

    /// The read-back of this table's writes whose reply was lost.
    fn read_back(&self) -> ReadBack<'_> {
        ReadBack::new(&self.core, &self.table)
    }

    /// The table.
    pub fn table(&self) -> &TableName {
        &self.table
    }

    /// The endpoint of the account the table is in.
    pub fn endpoint(&self) -> &Endpoint {
        self.core.requests.endpoint()
    }

    /// Which implementation of the service this client talks to.
    pub fn kind(&self) -> ServiceKind {
        self.core.kind
    }

    /// Starts the span of a call of this table named `TableClient.method` (when tracing).
    fn operation<'a>(&self, name: &'static str, ctx: &'a Context<'a>) -> Operation<'a> {
        Operation::start(self.core.tracing.as_ref(), name, ctx, Some(&self.table))
    }

    /// The error of a call on this table: it names the table.
    fn named(&self, e: Error) -> Error {
        e.in_table(&self.table)
    }

    /// The error of a call on one entity: it names the table and the entity's keys (when they are valid).
    fn named_entity(&self, e: Error, entity: &impl WriteEntity) -> Error {
        e.in_table(&self.table).for_entity(entity.keys().ok())
    }

    /// The error of a call on the entity with these keys: it names the table and the keys.
    fn named_keys(&self, e: Error, partition_key: &PartitionKey, row_key: &RowKey) -> Error {
        e.in_table(&self.table).for_entity(Some((partition_key.clone(), row_key.clone())))
    }

    /// Creates the table.
    ///
    /// # Errors
    /// `409` [`TableAlreadyExists`](ErrorCode::TableAlreadyExists) when it exists, a read-only analytics
    /// table, and any failure to send.
    pub async fn create_table(&self, options: Option<RequestOptions<'_>>) -> Result<(), Error> {
        let options = options.unwrap_or_default();
        let mut op = self.operation("TableClient.create_table", &options.method_options.context);
        op.end(self.create_table_with(op.ctx()).await)
    }

    async fn create_table_with(&self, ctx: &Context<'_>) -> Result<(), Error> {
        let request = self.core.requests.create_table(&self.table);
        let result = match self.core.call_tracked(request, ctx, response::empty).await {
            // A retry after a lost reply finds the table the first try created: it exists, as asked.
            (Err(e), true) if e.error_code() == Some(ErrorCode::TableAlreadyExists) => Ok(()),
            (result, _) => result,
        };
        result.map_err(|e| self.named(e))
    }

    /// Creates the table unless it exists; `true` when it was created.
    ///
    /// # Errors
    /// As [`create_table`](Self::create_table), except that an existing table is not one.
    pub async fn create_table_if_not_exists(&self, options: Option<RequestOptions<'_>>) -> Result<bool, Error> {
        let options = options.unwrap_or_default();
        let mut op = self.operation("TableClient.create_table_if_not_exists", &options.method_options.context);
        let result = match self.create_table_with(op.ctx()).await {
            Ok(()) => Ok(true),
            Err(e) if e.error_code() == Some(ErrorCode::TableAlreadyExists) => Ok(false),
            Err(e) => Err(e),
        };
        op.end(result)
    }

    /// Deletes the table and every entity in it.
    ///
    /// # Errors
    /// `404` when there is no such table, and any failure to send.
    pub async fn delete_table(&self, options: Option<RequestOptions<'_>>) -> Result<(), Error> {
        let options = options.unwrap_or_default();
        let mut op = self.operation("TableClient.delete_table", &options.method_options.context);
        op.end(self.delete_table_with(op.ctx()).await)
    }

    async fn delete_table_with(&self, ctx: &Context<'_>) -> Result<(), Error> {
        let request = self.core.requests.delete_table(&self.table);
        let result = match self.core.call_tracked(request, ctx, response::empty).await {
            // A retry after a lost reply finds the table gone: the first try deleted it, as asked.
            (Err(e), true) if e.is_not_found() => Ok(()),
            (result, _) => result,
        };
        result.map_err(|e| self.named(e))
    }

    /// Deletes the table if it exists; `true` when it did.
    ///
    /// # Errors
    /// Any failure but `404`.
    pub async fn delete_table_if_exists(&self, options: Option<RequestOptions<'_>>) -> Result<bool, Error> {
        let options = options.unwrap_or_default();
        let mut op = self.operation("TableClient.delete_table_if_exists", &options.method_options.context);
        let result = match self.delete_table_with(op.ctx()).await {
            Ok(()) => Ok(true),
            Err(e) if e.is_not_found() => Ok(false),
            Err(e) => Err(e),
        };
        op.end(result)
    }

    /// Inserts an entity that must not exist yet; returns its ETag.
    ///
    /// # Errors
    /// `409` [`EntityAlreadyExists`](ErrorCode::EntityAlreadyExists), an entity that breaks a rule (nothing
    /// is sent), and any failure to send.
    pub async fn insert(&self, entity: &impl WriteEntity, options: Option<RequestOptions<'_>>) -> Result<ETag, Error> {
        let options = options.unwrap_or_default();
        let mut op = self.operation("TableClient.insert", &options.method_options.context);
        let ctx = op.ctx();
        // Encoded once: the body sent is kept (a clone of `Bytes` shares it) for the read-back below.
        let request = match self.core.requests.insert(&self.table, entity) {
            Ok(request) => request.map(Bytes::from),
            Err(e) => return op.end(Err(self.named_entity(e.into(), entity))),
        };
        let sent = request.body().clone();
        let result = match self.core.call_tracked(Ok(request), ctx, response::written).await {
            (Err(e), true) if e.error_code() == Some(ErrorCode::EntityAlreadyExists) => {
                self.read_back().write("insert", e, entity, (&sent, true), ctx).await
            }
            (result, _) => result,
        };
        op.end(result.map_err(|e| self.named_entity(e, entity)))
    }

    /// Inserts the entity, or updates it whatever its version: [`UpdateMode::Merge`] keeps the stored
    /// properties the entity does not have, [`UpdateMode::Replace`] drops them. Returns the new ETag.
    ///
    /// # Errors
    /// An entity that breaks a rule (nothing is sent), and any failure to send.
    pub async fn upsert(
        &self,
        entity: &impl WriteEntity,
        mode: UpdateMode,
        options: Option<RequestOptions<'_>>,
    ) -> Result<ETag, Error> {
        let options = options.unwrap_or_default();
        let mut op = self.operation("TableClient.upsert", &options.method_options.context);
        let request = self.core.requests.upsert(&self.table, entity, mode);
        let result = self.core.call(request, op.ctx(), response::written).await;
        op.end(result.map_err(|e| self.named_entity(e, entity)))
    }

    /// Updates an existing entity ([`UpdateMode::Merge`] or [`UpdateMode::Replace`]) under a precondition:
    /// [`UpdateOptions::if_match`], else the ETag the entity was read with, else [`IfMatch::Any`]. Returns the
    /// new ETag.
    ///
    /// # Errors
    /// `412` [`UpdateConditionNotSatisfied`](ErrorCode::UpdateConditionNotSatisfied) when the entity changed
    /// since its ETag was read, `404` when it does not exist, an entity that breaks a rule, and any failure to
    /// send.
    pub async fn update(
        &self,
        entity: &impl WriteEntity,
        mode: UpdateMode,
        options: Option<UpdateOptions<'_>>,
    ) -> Result<ETag, Error> {
        let options = options.unwrap_or_default();
        let mut op = self.operation("TableClient.update", &options.method_options.context);
        let ctx = op.ctx();
        let if_match = precondition(options.if_match, entity);
        let request = self.core.requests.update(&self.table, entity, mode, if_match);
        let request = match request {
            Ok(request) => request.map(Bytes::from),
            Err(e) => return op.end(Err(self.named_entity(e.into(), entity))),
        };
        let sent = request.body().clone();
        let result = match self.core.call_tracked(Ok(request), ctx, response::written).await {
            (Err(e), true) if e.is_precondition_failed() => {
                self.read_back().write("update", e, entity, (&sent, mode == UpdateMode::Replace), ctx).await
            }
            (result, _) => result,
        };
        op.end(result.map_err(|e| self.named_entity(e, entity)))
    }

    /// Deletes an entity, addressed by its keys, under a precondition as [`update`](Self::update) takes it.
    ///
    /// # Errors
    /// `412` when it changed since its ETag was read, `404` when it does not exist, and any failure to send.
    pub async fn delete(&self, entity: &impl WriteEntity, options: Option<UpdateOptions<'_>>) -> Result<(), Error> {
        let options = options.unwrap_or_default();
        let mut op = self.operation("TableClient.delete", &options.method_options.context);
        let (partition_key, row_key) = match entity.keys() {
            Ok(keys) => keys,
            Err(e) => return op.end(Err(self.named(RequestError::from(e).into()))),
        };
        let if_match = precondition(options.if_match, entity);
        op.end(self.delete_with(&partition_key, &row_key, if_match, op.ctx()).await)
    }

    /// Deletes the entity with these keys, under [`UpdateOptions::if_match`] (by default [`IfMatch::Any`]).
    ///
    /// # Errors
    /// `404` when it does not exist, `412` when an ETag was given and it changed, and any failure to send.
    pub async fn delete_by_keys(
        &self,
        partition_key: &PartitionKey,
        row_key: &RowKey,
        options: Option<UpdateOptions<'_>>,
    ) -> Result<(), Error> {
        let options = options.unwrap_or_default();
        let mut op = self.operation("TableClient.delete_by_keys", &options.method_options.context);
        let if_match = options.if_match.unwrap_or(IfMatch::Any);
        op.end(self.delete_with(partition_key, row_key, if_match, op.ctx()).await)
    }

    async fn delete_with(
        &self,
        partition_key: &PartitionKey,
        row_key: &RowKey,
        if_match: IfMatch,
        ctx: &Context<'_>,
    ) -> Result<(), Error> {
        let request = self.core.requests.delete(&self.table, partition_key, row_key, if_match);
        let result = match self.core.call_tracked(request, ctx, response::empty).await {
            // A retry after a lost reply finds the entity gone: the first try deleted it.
            (Err(e), true) if e.is_not_found() && e.error_code() != Some(ErrorCode::TableNotFound) => Ok(()),
            (Err(e), true) if e.is_precondition_failed() => {
                let reason = "the entity was written again since the first try".to_owned();
                Err(outcome_unknown("delete", e, reason))
            }
            (result, _) => result,
        };
        result.map_err(|e| self.named_keys(e, partition_key, row_key))
    }

    /// The entity with these keys, as a dynamic [`Entity`](crate::Entity) or a derived struct, with its ETag.
    ///
    /// # Errors
    /// `404` when it does not exist (see [`try_get`](Self::try_get)), an entity that does not fit `T`, and any
    /// failure to send.
    pub async fn get<T: ReadEntity>(
        &self,
        partition_key: &PartitionKey,
        row_key: &RowKey,
        options: Option<RequestOptions<'_>>,
    ) -> Result<T, Error> {
        let options = options.unwrap_or_default();
        let mut op = self.operation("TableClient.get", &options.method_options.context);
        op.end(self.get_with(partition_key, row_key, op.ctx()).await.map(|(entity, _)| entity))
    }

    /// As [`get`](Self::get), and which location of the account served it: under a
    /// [`LocationMode`](super::LocationMode) other than the primary only, a read served by the secondary may
    /// lag the primary.
    ///
    /// ```no_run
    /// use table_model::client::{Location, LocationMode, RequestOptions, TableServiceClient};
    /// use table_model::{Entity, PartitionKey, RowKey, TableName};
    /// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// let service = TableServiceClient::from_connection_string("UseDevelopmentStorage=true", None)?;
    /// let people = service.table_client(TableName::from_static("People"));
    /// let options = RequestOptions::default().with_location_mode(LocationMode::PrimaryThenSecondary);
    /// let (ada, location) =
    ///     people.get_located::<Entity>(&PartitionKey::new("eu")?, &RowKey::new("ada")?, Some(options)).await?;
    /// if location == Location::Secondary {
    ///     println!("{} (from the secondary: it may be a few minutes old)", ada.row_key());
    /// }
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// As [`get`](Self::get); after both locations, the secondary's error naming the primary's
    /// ([`Error::primary_error`](super::Error::primary_error)).
    pub async fn get_located<T: ReadEntity>(
        &self,
        partition_key: &PartitionKey,
        row_key: &RowKey,
        options: Option<RequestOptions<'_>>,
    ) -> Result<(T, Location), Error> {
        let options = options.unwrap_or_default();
        let mut op = self.operation("TableClient.get_located", &options.method_options.context);
        op.end(self.get_with(partition_key, row_key, op.ctx()).await)
    }

    async fn get_with<T: ReadEntity>(
        &self,
        partition_key: &PartitionKey,
        row_key: &RowKey,
        ctx: &Context<'_>,
    ) -> Result<(T, Location), Error> {
        let request = |at: &TableService| at.get(&self.table, partition_key, row_key);
        let result = self.core.call_read(request, ctx, T::read_entity).await;
        result.map_err(|e| self.named_keys(e, partition_key, row_key))
    }

    /// The entity with these keys, or `None` when there is none.
    ///
    /// # Errors
    /// As [`get`](Self::get), except that a missing entity is not one; a missing table is.
    pub async fn try_get<T: ReadEntity>(
        &self,
        partition_key: &PartitionKey,
        row_key: &RowKey,
        options: Option<RequestOptions<'_>>,
    ) -> Result<Option<T>, Error> {
        let options = options.unwrap_or_default();
        let mut op = self.operation("TableClient.try_get", &options.method_options.context);
        let result = match self.get_with(partition_key, row_key, op.ctx()).await {
            Ok((entity, _)) => Ok(Some(entity)),
            Err(e) if e.is_not_found() && e.error_code() != Some(ErrorCode::TableNotFound) => Ok(None),
            Err(e) => Err(e),
        };
        op.end(result)
    }

    /// The stored entities of one partition with these RowKeys, those that exist, keyed by RowKey: in as few
    /// requests as the keys allow, as the bulk writer reads back a transaction whose reply was lost
    /// (`docs/rules.md` §12): up to 14 keys are one query; more are first read as the range from the least to
    /// the greatest (one page when the range holds little else), the keys not found then 14 to a query.
    ///
    /// ```no_run
    /// # use table_model::client::TableClient;
    /// # use table_model::PartitionKey;
    /// # async fn run(table: &TableClient) -> Result<(), Box<dyn std::error::Error>> {
    /// let eu = PartitionKey::new("eu")?;
    /// let found = table.get_many(&eu, &["ada", "alan", "grace"], None).await?;
    /// println!("{} of 3 exist", found.len());
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// A failed request.
    pub async fn get_many(
        &self,
        partition_key: &PartitionKey,
        row_keys: &[&str],
        options: Option<RequestOptions<'_>>,
    ) -> Result<HashMap<String, Entity>, Error> {
        let options = options.unwrap_or_default();
        let mut op = self.operation("TableClient.get_many", &options.method_options.context);
        op.end(self.read_back().entities(partition_key, row_keys.to_vec(), &[], op.ctx()).await)
    }

    /// The stored version of an entity, addressed by the keys of the one given (a struct written earlier, or
    /// read with a stale ETag).
    ///
    /// # Errors
    /// As [`get`](Self::get), and a key field that is not a valid key.
    pub async fn reload<T: ReadEntity + WriteEntity>(
        &self,
        entity: &T,
        options: Option<RequestOptions<'_>>,
    ) -> Result<T, Error> {
        let options = options.unwrap_or_default();
        let mut op = self.operation("TableClient.reload", &options.method_options.context);
        let result = match entity.keys() {
            Ok((partition_key, row_key)) => self.get_with(&partition_key, &row_key, op.ctx()).await.map(|(e, _)| e),
            Err(e) => Err(self.named(RequestError::from(e).into())),
        };
        op.end(result)
    }

    /// The entities a query selects, as a stream that follows continuations by itself. The query's `$top` is
    /// the size of each page (at most 1,000); to stop after `n` entities use [`query_first`](Self::query_first)
    /// or the stream's `take(n)`.
    ///
    /// # Errors
    /// A query that breaks a rule, checked before anything is sent. Failures of each page come from the
    /// stream.
    pub fn query<T: ReadEntity + Send + 'static>(
        &self,
        query: &Query,
        options: Option<QueryOptions<'_>>,
    ) -> Result<QueryPager<T>, Error> {
        let (fetch, start) = self.page_fetch(query, options, T::read_page)?;
        Ok(QueryPager::new(fetch, start))
    }

    /// The pages a query selects as the service sent them, not decoded ([`response::RawPage`]): for a reader
    /// that decodes them itself, with [`decode_query_with`](crate::json::decode_query_with) and a visitor of
    /// its own (`table-model-arrow` appends the entities straight to Arrow columns). The pages are requested,
    /// retried and followed exactly as [`query`](Self::query)'s.
    ///
    /// ```no_run
    /// use futures::TryStreamExt as _;
    /// use table_model::client::TableServiceClient;
    /// use table_model::json::decode_query;
    /// use table_model::{Query, TableName};
    /// # async fn run(service: TableServiceClient) -> Result<(), Box<dyn std::error::Error>> {
    /// let orders = service.table_client(TableName::new("orders")?);
    /// let mut pages = orders.query_raw(&Query::new(), None)?;
    /// while let Some(page) = pages.try_next().await? {
    ///     println!("{} entities", decode_query(&page.body, None)?.len());
    /// }
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// As [`query`](Self::query).
    pub fn query_raw(&self, query: &Query, options: Option<QueryOptions<'_>>) -> Result<RawPages, Error> {
        let (fetch, start) = self.page_fetch(query, options, response::raw_query)?;
        Ok(RawPages::new(fetch, start))
    }

    /// The pages a query selects, each read by `read` from the service's answer (its status, headers and body)
    /// as [`query`](Self::query) reads them into entities, with the continuation of the next: for a reader with
    /// a form of its own (`tablectl export` copies the JSON of a page into its lines when it can, and reads it
    /// with [`response::query`] when not). An error `read` returns is the page's error, naming the table (and
    /// the location) as `query`'s do. The pages are requested, retried and followed exactly as `query`'s.
    ///
    /// ```no_run
    /// use futures::TryStreamExt as _;
    /// use table_model::client::TableServiceClient;
    /// use table_model::{response, Query, TableName};
    /// # async fn run(service: TableServiceClient) -> Result<(), Box<dyn std::error::Error>> {
    /// let orders = service.table_client(TableName::new("orders")?);
    /// let count = |answer: &http::Response<azure_core::Bytes>| response::query(answer, None).map(|p| p.entities.len());
    /// let mut pages = orders.query_read(&Query::new(), None, count)?;
    /// while let Some(page) = pages.try_next().await? {
    ///     println!("{} entities", page.body);
    /// }
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// As [`query`](Self::query).
    pub fn query_read<B: Send + 'static>(
        &self,
        query: &Query,
        options: Option<QueryOptions<'_>>,
        read: fn(&http::Response<Bytes>) -> Result<B, ResponseError>,
    ) -> Result<RawPages<B>, Error> {
        let read = move |answer: &http::Response<Bytes>| {
            Ok(response::RawPage { body: read(answer)?, continuation: Continuation::from_headers(answer.headers()) })
        };
        let (fetch, start) = self.page_fetch(query, options, read)?;
        Ok(RawPages::new(fetch, start))
    }

    /// The fetch of one page of a query, from a continuation, each page read by `read`, and where the first page
    /// starts; the query is checked first.
    fn page_fetch<P: 'static>(
        &self,
        query: &Query,
        options: Option<QueryOptions<'_>>,
        read: impl Fn(&http::Response<Bytes>) -> Result<P, ResponseError> + Copy + Send + Sync + 'static,
    ) -> Result<(Fetch<P, Continuation>, Option<Continuation>), Error> {
        let options = options.unwrap_or_default();
        let checked = self.core.requests.query(&self.table, query, options.continuation.as_ref());
        checked.map_err(|e| self.named(e.into()))?;
        let (core, table, query) = (self.core.clone(), self.table.clone(), query.clone());
        let ctx = options.method_options.context.into_owned();
        let metadata = options.metadata;
        let fetch: Fetch<P, Continuation> = Box::new(move |continuation| {
            let (core, table, query, ctx) = (core.clone(), table.clone(), query.clone(), ctx.clone());
            Box::pin(async move {
                // A span per page: the pager has no call of its own that lasts while the pages are read.
                let mut op = Operation::start(core.tracing.as_ref(), "TableClient.query", &ctx, Some(&table));
                let request = |at: &TableService| match metadata {
                    Some(level) => at.clone().with_metadata(level).query(&table, &query, continuation.as_ref()),
                    None => at.query(&table, &query, continuation.as_ref()),
                };
                op.end(core.call_read(request, op.ctx(), read).await.map_err(|e| e.in_table(&table)))
            })
        });
        Ok((fetch, options.continuation))
    }

    /// The first `n` entities a query selects: pages of at most `n` (unless the query sets `$top`), and no
    /// page read after the `n`-th entity.
    ///
    /// # Errors
    /// As [`query`](Self::query), and the failure of any page read.
    pub async fn query_first<T: ReadEntity + Send + 'static>(
        &self,
        query: &Query,
        n: usize,
        options: Option<QueryOptions<'_>>,
    ) -> Result<Vec<T>, Error> {
        if n == 0 {
            return Ok(Vec::new());
        }
        let sized;
        let query = match query.top_value() {
            Some(_) => query,
            None => {
                sized = query.clone().top(n.min(crate::limits::QUERY_MAX_TOP));
                &sized
            }
        };
        let mut pager = self.query::<T>(query, options)?;
        let mut out = Vec::with_capacity(n.min(crate::limits::QUERY_MAX_TOP));
        while out.len() < n {
            match pager.try_next().await? {
                Some(entity) => out.push(entity),
                None => break,
            }
        }
        Ok(out)
    }

    /// The service's clock: the `Date` of its answer to a one-entity query of the table (whole seconds, never
    /// ahead of the service). A time to compare with the `Timestamp`s the service writes, which the local clock
    /// may be minutes away from: `tablectl backup` takes its watermarks here.
    ///
    /// ```no_run
    /// use table_model::client::TableServiceClient;
    /// use table_model::TableName;
    /// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// let service = TableServiceClient::from_connection_string("UseDevelopmentStorage=true", None)?;
    /// let now = service.table_client(TableName::from_static("Orders")).service_time(None).await?;
    /// println!("the service says it is {now}");
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// `404` when there is no such table, any failure to send, and an answer without a `Date` header.
    pub async fn service_time(
        &self,
        options: Option<RequestOptions<'_>>,
    ) -> Result<chrono::DateTime<chrono::Utc>, Error> {
        let options = options.unwrap_or_default();
        let mut op = self.operation("TableClient.service_time", &options.method_options.context);
        let probe = Query::new().top(1).select(["PartitionKey"]);
        let request = self.core.requests.query(&self.table, &probe, None);
        let result = self.core.call(request, op.ctx(), response::query_date).await;
        op.end(result.map_err(|e| self.named(e)))
    }

    /// The table's stored access policies (at most 5), which a SAS names with
    /// [`TableSas::policy`](crate::sas::TableSas::policy).
    ///
    /// ```no_run
    /// use table_model::client::TableServiceClient;
    /// use table_model::TableName;
    /// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// let service = TableServiceClient::from_connection_string("UseDevelopmentStorage=true", None)?;
    /// for stored in service.table_client("AuditLog".parse::<TableName>()?).get_access_policy(None).await? {
    ///     println!("{}: {} until {:?}", stored.id, stored.policy.permissions, stored.policy.expiry);
    /// }
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// `404` when there is no such table, and any failure to send; the Cosmos DB Table API does not serve
    /// stored access policies, and a client of it refuses with
    /// [`RequestErrorKind::NotSupported`](crate::RequestErrorKind::NotSupported) (nothing is sent).
    pub async fn get_access_policy(&self, options: Option<RequestOptions<'_>>) -> Result<Vec<SignedIdentifier>, Error> {
        let options = options.unwrap_or_default();
        let mut op = self.operation("TableClient.get_access_policy", &options.method_options.context);
        let request = self.core.requests.get_access_policy(&self.table);
        let result = self.core.call(request, op.ctx(), response::access_policies).await;
        op.end(result.map_err(|e| self.named(e)))
    }

    /// Replaces the table's stored access policies with these; an empty list removes them all, and with them
    /// every SAS that names one.
    ///
    /// ```no_run
    /// use table_model::client::TableServiceClient;
    /// use table_model::sas::{AccessPolicy, SignedIdentifier, TableSasPermissions};
    /// use table_model::TableName;
    /// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// let service = TableServiceClient::from_connection_string("UseDevelopmentStorage=true", None)?;
    /// let readers = AccessPolicy::new(TableSasPermissions::READ).with_expiry(chrono::Utc::now() + chrono::Duration::days(7));
    /// let table = service.table_client("AuditLog".parse::<TableName>()?);
    /// table.set_access_policy(&[SignedIdentifier::new("readers".parse()?, readers)], None).await?;
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// More than 5 policies, an identifier given twice, a time outside the years 1 to 9999, or a client of the
    /// Cosmos DB Table API, which does not serve stored access policies (nothing is sent); `404` when there is
    /// no such table, and any failure to send.
    pub async fn set_access_policy(
        &self,
        policies: &[SignedIdentifier],
        options: Option<RequestOptions<'_>>,
    ) -> Result<(), Error> {
        let options = options.unwrap_or_default();
        let mut op = self.operation("TableClient.set_access_policy", &options.method_options.context);
        let request = self.core.requests.set_access_policy(&self.table, policies);
        let result = self.core.call(request, op.ctx(), response::empty).await;
        op.end(result.map_err(|e| self.named(e)))
    }

    /// A new, empty transaction on this table and a PartitionKey, whose operations are checked against the rules
    /// of the client's service as they are added ([`Batch::with_rules`], `docs/rules.md` §13.1).
    pub fn batch(&self, partition_key: PartitionKey) -> Batch {
        Batch::new(self.table.clone(), partition_key).with_rules(self.core().requests.service_kind().rules())
    }

    /// Sends a transaction: every operation applies, or none. Returns each operation's new ETag.
    ///
    /// # Errors
    /// A failed operation, as a service error whose [`operation_index`](crate::ServiceError::operation_index)
    /// names it (none of the batch was applied); a batch of another table or over its limits (nothing is
    /// sent); and any failure to send.
    pub async fn submit_transaction(
        &self,
        batch: &Batch,
        options: Option<RequestOptions<'_>>,
    ) -> Result<BatchOutcome, Error> {
        let options = options.unwrap_or_default();
        let mut op = self.operation("TableClient.submit_transaction", &options.method_options.context);
        op.set(trace::OPERATIONS, || i64::try_from(batch.len()).unwrap_or(i64::MAX).into());
        let result = self.submit_transaction_with(batch, op.ctx()).await;
        op.end_transaction(result)
    }

    /// [`submit_transaction`](Self::submit_transaction) in the context of a call (a bulk write's transaction
    /// has its span already).
    pub(crate) async fn submit_transaction_with(
        &self,
        batch: &Batch,
        ctx: &Context<'_>,
    ) -> Result<BatchOutcome, Error> {
        // Cosmos DB compares table names with case, Storage without (`docs/rules.md` §13.2): on Cosmos, a batch
        // for `orders` given to the client of `Orders` would write to another table.
        let same_table = match self.core.requests.service_kind() {
            crate::ServiceKind::CosmosDb => batch.table().as_str() == self.table.as_str(),
            _ => batch.table() == &self.table,
        };
        if !same_table {
            let mismatch = crate::RequestErrorKind::TableMismatch {
                batch: batch.table().to_string(),
                client: self.table.to_string(),
            };
            return Err(self.named(RequestError::new(mismatch).into()));
        }
        let request = self.core.requests.batch(batch);
        let operations = batch.len();
        let result = match self.core.call_tracked(request, ctx, |r| response::batch(r, operations)).await {
            (Err(e), true) if e.service().is_some_and(|s| s.operation_index().is_some()) => {
                self.read_back().transaction(batch, e, ctx).await
            }
            (result, _) => result,
        };
        result.map_err(|e| self.named(e))
    }
}

/// The precondition of an update or delete: the one asked for, else the entity's ETag, else any version.
pub(crate) fn precondition(asked: Option<IfMatch>, entity: &impl WriteEntity) -> IfMatch {
    asked.unwrap_or_else(|| entity.etag().map_or(IfMatch::Any, |etag| IfMatch::ETag(etag.clone())))
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::client::{TableServiceClient, TableServiceClientOptions};
    use crate::connection::AccountKey;
    use crate::request::EncodedEntity;
    use crate::{EncodeError, EntityError};
    use async_trait::async_trait;
    use azure_core::error::ErrorKind as CoreErrorKind;
    use azure_core::http::headers::Headers;
    use azure_core::http::policies::{Policy, PolicyResult};
    use azure_core::http::{AsyncRawResponse, Request};
    use std::collections::VecDeque;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;

    /// An entity that counts how often it is encoded.
    struct Counted {
        entity: Entity,
        encodes: AtomicUsize,
    }

    impl WriteEntity for Counted {
        fn encode(&self) -> Result<EncodedEntity, EncodeError> {
            self.encodes.fetch_add(1, Ordering::Relaxed);
            self.entity.encode()
        }

        fn keys(&self) -> Result<(PartitionKey, RowKey), EntityError> {
            self.entity.keys()
        }

        fn etag(&self) -> Option<&ETag> {
            self.entity.etag()
        }
    }

    /// What the fake transport does with one try: lose it (no answer), or answer.
    pub(in crate::client) enum Answer {
        Lost,
        Status(u16, Vec<(&'static str, String)>, String),
    }

    /// A transport that answers each try from a script, and records each try's method and URL.
    #[derive(Default)]
    pub(in crate::client) struct Scripted {
        answers: Mutex<VecDeque<Answer>>,
        pub(in crate::client) methods: Mutex<Vec<String>>,
        pub(in crate::client) urls: Mutex<Vec<azure_core::http::Url>>,
    }

    impl std::fmt::Debug for Scripted {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("Scripted")
        }
    }

    #[async_trait]
    impl Policy for Scripted {
        async fn send(&self, _: &Context, request: &mut Request, _: &[Arc<dyn Policy>]) -> PolicyResult {
            self.methods.lock().unwrap().push(request.method().to_string());
            self.urls.lock().unwrap().push(request.url().clone());
            match self.answers.lock().unwrap().pop_front().expect("an answer for each try") {
                Answer::Lost => Err(azure_core::Error::with_message(CoreErrorKind::Io, "connection reset")),
                Answer::Status(status, headers, body) => {
                    let mut map = Headers::new();
                    for (name, value) in headers {
                        map.insert(name, value);
                    }
                    Ok(AsyncRawResponse::from_bytes(status.into(), map, body))
                }
            }
        }
    }

    pub(in crate::client) fn client(script: Vec<Answer>) -> (TableClient, Arc<Scripted>) {
        let transport = Arc::new(Scripted { answers: Mutex::new(script.into()), ..Default::default() });
        let options = TableServiceClientOptions::scripted(transport.clone());
        let service =
            TableServiceClient::new("https://acct.table.core.windows.net", AccountKey::development(), Some(options))
                .expect("a valid endpoint");
        (service.table_client(TableName::from_static("Readings")), transport)
    }

    fn reading() -> Counted {
        let entity = Entity::new(PartitionKey::new("p").unwrap(), RowKey::new("r").unwrap())
            .with("N".parse().unwrap(), 7_i64)
            .unwrap()
            .with("Note".parse().unwrap(), "é")
            .unwrap();
        Counted { entity, encodes: AtomicUsize::new(0) }
    }

    fn created() -> Answer {
        Answer::Status(204, vec![("etag", "W/\"1\"".to_owned())], String::new())
    }

    #[tokio::test]
    async fn an_insert_encodes_its_entity_once() {
        let (table, _) = client(vec![created()]);
        let entity = reading();
        assert_eq!(table.insert(&entity, None).await.unwrap(), ETag::new("W/\"1\""));
        assert_eq!(entity.encodes.load(Ordering::Relaxed), 1);
    }

    #[tokio::test]
    async fn an_insert_whose_reply_is_lost_is_settled_from_its_one_encoding() {
        let entity = reading();
        // The stored entity: the body sent, with the ETag the service gave it.
        let body = crate::json::encode_entity(&entity.entity).unwrap();
        let stored = body.as_str().replacen('{', "{\"odata.etag\":\"W/\\\"2\\\"\",", 1);
        let conflict = r#"{"odata.error":{"code":"EntityAlreadyExists","message":{"value":"The specified entity already exists."}}}"#;
        let json = || ("content-type", "application/json;odata=minimalmetadata".to_owned());
        let (table, transport) = client(vec![
            Answer::Lost,
            Answer::Status(409, vec![json(), ("x-ms-error-code", "EntityAlreadyExists".to_owned())], conflict.into()),
            Answer::Status(200, vec![json()], stored),
        ]);
        assert_eq!(table.insert(&entity, None).await.unwrap(), ETag::new("W/\"2\""));
        assert_eq!(*transport.methods.lock().unwrap(), ["POST", "POST", "GET"]);
        assert_eq!(entity.encodes.load(Ordering::Relaxed), 1);
    }

    #[tokio::test]
    async fn an_update_encodes_its_entity_once_also_when_its_reply_is_lost() {
        let entity = reading();
        let body = crate::json::encode_entity(&entity.entity).unwrap();
        let stored = body.as_str().replacen('{', "{\"odata.etag\":\"W/\\\"3\\\"\",", 1);
        let stale = r#"{"odata.error":{"code":"UpdateConditionNotSatisfied","message":{"value":"The update condition specified in the request was not satisfied."}}}"#;
        let json = || ("content-type", "application/json;odata=minimalmetadata".to_owned());
        let (table, transport) = client(vec![
            Answer::Lost,
            Answer::Status(412, vec![json()], stale.into()),
            Answer::Status(200, vec![json()], stored),
        ]);
        let options = UpdateOptions { if_match: Some(IfMatch::ETag(ETag::new("W/\"1\""))), ..Default::default() };
        assert_eq!(table.update(&entity, UpdateMode::Replace, Some(options)).await.unwrap(), ETag::new("W/\"3\""));
        assert_eq!(*transport.methods.lock().unwrap(), ["PUT", "PUT", "GET"]);
        assert_eq!(entity.encodes.load(Ordering::Relaxed), 1);
    }
}
