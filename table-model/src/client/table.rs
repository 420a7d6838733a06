//! The client of one table: its entities, typed or dynamic, its queries and its transactions.

use super::core::Core;
use super::error::{Error, ErrorKind, OutcomeUnknown};
use super::options::{QueryOptions, RequestOptions, UpdateOptions};
use super::pager::{Fetch, QueryPager};
use crate::batch::Batch;
use crate::connection::ServiceKind;
use crate::entity::ETag;
use crate::error::ResponseError;
use crate::json::{decode_entity, MetadataLevel};
use crate::key::{PartitionKey, RowKey};
use crate::name::TableName;
use crate::query::Query;
use crate::request::{IfMatch, UpdateMode, WriteEntity};
use crate::response::{self, BatchOutcome, Continuation, QueryPage, ReadEntity};
use crate::sas::SignedIdentifier;
use crate::{Entity, ErrorCode};
use azure_core::http::Context;
use futures::TryStreamExt as _;
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

    /// The table.
    pub fn table(&self) -> &TableName {
        &self.table
    }

    /// Which implementation of the service this client talks to.
    pub fn kind(&self) -> ServiceKind {
        self.core.kind
    }

    /// Creates the table.
    ///
    /// # Errors
    /// `409` [`TableAlreadyExists`](ErrorCode::TableAlreadyExists) when it exists, a read-only analytics
    /// table, and any failure to send.
    pub async fn create_table(&self, options: Option<RequestOptions<'_>>) -> Result<(), Error> {
        let options = options.unwrap_or_default();
        let request = self.core.requests.create_table(&self.table);
        match self.core.call_tracked(request, &options.method_options.context, response::empty).await {
            // A retry after a lost reply finds the table the first try created: it exists, as asked.
            (Err(e), true) if e.error_code() == Some(ErrorCode::TableAlreadyExists) => Ok(()),
            (result, _) => result,
        }
    }

    /// Creates the table unless it exists; `true` when it was created.
    ///
    /// # Errors
    /// As [`create_table`](Self::create_table), except that an existing table is not one.
    pub async fn create_table_if_not_exists(&self, options: Option<RequestOptions<'_>>) -> Result<bool, Error> {
        match self.create_table(options).await {
            Ok(()) => Ok(true),
            Err(e) if e.error_code() == Some(ErrorCode::TableAlreadyExists) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Deletes the table and every entity in it.
    ///
    /// # Errors
    /// `404` when there is no such table, and any failure to send.
    pub async fn delete_table(&self, options: Option<RequestOptions<'_>>) -> Result<(), Error> {
        let options = options.unwrap_or_default();
        let request = self.core.requests.delete_table(&self.table);
        match self.core.call_tracked(request, &options.method_options.context, response::empty).await {
            // A retry after a lost reply finds the table gone: the first try deleted it, as asked.
            (Err(e), true) if e.is_not_found() => Ok(()),
            (result, _) => result,
        }
    }

    /// Deletes the table if it exists; `true` when it did.
    ///
    /// # Errors
    /// Any failure but `404`.
    pub async fn delete_table_if_exists(&self, options: Option<RequestOptions<'_>>) -> Result<bool, Error> {
        match self.delete_table(options).await {
            Ok(()) => Ok(true),
            Err(e) if e.is_not_found() => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Inserts an entity that must not exist yet; returns its ETag.
    ///
    /// # Errors
    /// `409` [`EntityAlreadyExists`](ErrorCode::EntityAlreadyExists), an entity that breaks a rule (nothing
    /// is sent), and any failure to send.
    pub async fn insert(&self, entity: &impl WriteEntity, options: Option<RequestOptions<'_>>) -> Result<ETag, Error> {
        let options = options.unwrap_or_default();
        let ctx = &options.method_options.context;
        let encoded = entity.encode().map_err(crate::error::RequestError::from)?;
        let request = self.core.requests.insert(&self.table, entity);
        match self.core.call_tracked(request, ctx, response::written).await {
            (Err(e), true) if e.error_code() == Some(ErrorCode::EntityAlreadyExists) => {
                let expected = Some((encoded.body().as_bytes(), true));
                self.resolve("insert", e, encoded.partition_key(), encoded.row_key(), expected, ctx).await
            }
            (result, _) => result,
        }
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
        let request = self.core.requests.upsert(&self.table, entity, mode);
        self.core.call(request, &options.method_options.context, response::written).await
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
        let ctx = &options.method_options.context;
        let if_match = precondition(options.if_match, entity);
        let request = self.core.requests.update(&self.table, entity, mode, if_match);
        match self.core.call_tracked(request, ctx, response::written).await {
            (Err(e), true) if e.is_precondition_failed() => {
                let encoded = entity.encode().map_err(crate::error::RequestError::from)?;
                let expected = Some((encoded.body().as_bytes(), mode == UpdateMode::Replace));
                self.resolve("update", e, encoded.partition_key(), encoded.row_key(), expected, ctx).await
            }
            (result, _) => result,
        }
    }

    /// Deletes an entity, addressed by its keys, under a precondition as [`update`](Self::update) takes it.
    ///
    /// # Errors
    /// `412` when it changed since its ETag was read, `404` when it does not exist, and any failure to send.
    pub async fn delete(&self, entity: &impl WriteEntity, options: Option<UpdateOptions<'_>>) -> Result<(), Error> {
        let (partition_key, row_key) = entity.keys().map_err(crate::error::RequestError::from)?;
        let options = options.unwrap_or_default();
        let if_match = precondition(options.if_match, entity);
        self.delete_with(&partition_key, &row_key, if_match, &options.method_options.context).await
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
        let if_match = options.if_match.unwrap_or(IfMatch::Any);
        self.delete_with(partition_key, row_key, if_match, &options.method_options.context).await
    }

    async fn delete_with(
        &self,
        partition_key: &PartitionKey,
        row_key: &RowKey,
        if_match: IfMatch,
        ctx: &Context<'_>,
    ) -> Result<(), Error> {
        let request = self.core.requests.delete(&self.table, partition_key, row_key, if_match);
        match self.core.call_tracked(request, ctx, response::empty).await {
            // A retry after a lost reply finds the entity gone: the first try deleted it.
            (Err(e), true) if e.is_not_found() && e.error_code() != Some(ErrorCode::TableNotFound) => Ok(()),
            (Err(e), true) if e.is_precondition_failed() => {
                let reason = "the entity was written again since the first try".to_owned();
                Err(outcome_unknown("delete", e, reason))
            }
            (result, _) => result,
        }
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
        let request = self.core.requests.get(&self.table, partition_key, row_key);
        self.core.call(request, &options.method_options.context, T::read_entity).await
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
        match self.get(partition_key, row_key, options).await {
            Ok(entity) => Ok(Some(entity)),
            Err(e) if e.is_not_found() && e.error_code() != Some(ErrorCode::TableNotFound) => Ok(None),
            Err(e) => Err(e),
        }
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
        let (partition_key, row_key) = entity.keys().map_err(crate::error::RequestError::from)?;
        self.get(&partition_key, &row_key, options).await
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
        let options = options.unwrap_or_default();
        self.core.requests.query(&self.table, query, options.continuation.as_ref())?;
        let (core, table, query) = (self.core.clone(), self.table.clone(), query.clone());
        let ctx = options.method_options.context.into_owned();
        let fetch: Fetch<QueryPage<T>, Continuation> = Box::new(move |continuation| {
            let (core, table, query, ctx) = (core.clone(), table.clone(), query.clone(), ctx.clone());
            Box::pin(async move {
                let request = core.requests.query(&table, &query, continuation.as_ref());
                core.call(request, &ctx, T::read_page).await
            })
        });
        Ok(QueryPager::new(fetch, options.continuation))
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
        let request = self.core.requests.get_access_policy(&self.table);
        self.core.call(request, &options.method_options.context, response::access_policies).await
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
        let request = self.core.requests.set_access_policy(&self.table, policies);
        self.core.call(request, &options.method_options.context, response::empty).await
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
        // Cosmos DB compares table names with case, Storage without (`docs/rules.md` §13.2): on Cosmos, a batch
        // for `orders` given to the client of `Orders` would write to another table.
        let same_table = match self.core.requests.service_kind() {
            crate::ServiceKind::CosmosDb => batch.table().as_str() == self.table.as_str(),
            _ => batch.table() == &self.table,
        };
        if !same_table {
            return Err(crate::error::RequestError::new(crate::error::RequestErrorKind::TableMismatch {
                batch: batch.table().to_string(),
                client: self.table.to_string(),
            })
            .into());
        }
        let options = options.unwrap_or_default();
        let ctx = &options.method_options.context;
        let request = self.core.requests.batch(batch);
        let operations = batch.len();
        match self.core.call_tracked(request, ctx, |r| response::batch(r, operations)).await {
            (Err(e), true) if e.service().is_some_and(|s| s.operation_index().is_some()) => {
                self.resolve_transaction(batch, e, ctx).await
            }
            (result, _) => result,
        }
    }

    /// After a lost reply and a refused retry: whether the stored entity is what the write left (`expected`:
    /// the body, and whether the entity is exactly it), in which case the write landed and its ETag is the
    /// entity's; else the outcome is unknown.
    async fn resolve(
        &self,
        operation: &'static str,
        refusal: Error,
        partition_key: &str,
        row_key: &str,
        expected: Option<(&[u8], bool)>,
        ctx: &Context<'_>,
    ) -> Result<ETag, Error> {
        match self.stored_as_written(partition_key, row_key, expected, ctx).await? {
            Some(Some(etag)) => Ok(etag),
            _ => Err(outcome_unknown(operation, refusal, "the entity read back differs from the one sent".to_owned())),
        }
    }

    /// Reads every entity of a transaction back after a lost reply and a refused retry: when each is as the
    /// transaction leaves it, the first try was applied (all or nothing) and the transaction succeeded.
    async fn resolve_transaction(
        &self,
        batch: &Batch,
        refusal: Error,
        ctx: &Context<'_>,
    ) -> Result<BatchOutcome, Error> {
        let mut etags = Vec::with_capacity(batch.len());
        for (row_key, expected) in batch.effects() {
            match self.stored_as_written(batch.partition_key().as_str(), &row_key, expected, ctx).await? {
                Some(etag) => etags.push(etag),
                None => {
                    let reason =
                        format!("the entity with RowKey {row_key:?} read back is not as the transaction leaves it");
                    return Err(outcome_unknown("transaction", refusal, reason));
                }
            }
        }
        Ok(BatchOutcome { etags })
    }

    /// `Some(etag)` when the stored entity is as a write left it (`None` as the ETag for an expected absence),
    /// `None` when it is not.
    async fn stored_as_written(
        &self,
        partition_key: &str,
        row_key: &str,
        expected: Option<(&[u8], bool)>,
        ctx: &Context<'_>,
    ) -> Result<Option<Option<ETag>>, Error> {
        let (pk, rk) = (PartitionKey::new(partition_key), RowKey::new(row_key));
        let (Ok(pk), Ok(rk)) = (pk, rk) else { return Ok(None) };
        // Typed values need annotations to compare: read at minimal metadata whatever the client's level.
        let read = self.core.requests.clone().with_metadata(MetadataLevel::Minimal).get(&self.table, &pk, &rk);
        let stored = match self.core.call(read, ctx, Entity::read_entity).await {
            Ok(entity) => Some(entity),
            Err(e) if e.is_not_found() && e.error_code() != Some(ErrorCode::TableNotFound) => None,
            Err(e) => return Err(e),
        };
        Ok(match (expected, stored) {
            (None, None) => Some(None),
            (Some((body, exact)), Some(stored)) => {
                let sent = decode_entity(body, None).map_err(ResponseError::from)?;
                let holds = sent.iter().all(|(name, value)| stored.value(name.as_str()) == Some(value));
                (holds && (!exact || stored.len() == sent.len())).then(|| stored.etag().cloned())
            }
            _ => None,
        })
    }
}

fn outcome_unknown(operation: &'static str, refusal: Error, reason: String) -> Error {
    match refusal.into_kind() {
        ErrorKind::Service(answer) => {
            Error::new(ErrorKind::OutcomeUnknown(OutcomeUnknown { operation, answer, reason }))
        }
        other => Error::new(other),
    }
}

/// The precondition of an update or delete: the one asked for, else the entity's ETag, else any version.
pub(crate) fn precondition(asked: Option<IfMatch>, entity: &impl WriteEntity) -> IfMatch {
    asked.unwrap_or_else(|| entity.etag().map_or(IfMatch::Any, |etag| IfMatch::ETag(etag.clone())))
}
