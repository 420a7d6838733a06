//! The client of a Table service account: tables, and the [`TableClient`] of each.

use super::core::Core;
use super::credential::TableCredential;
use super::error::Error;
use super::options::{ListTablesOptions, RequestOptions, TableServiceClientOptions};
use super::pager::{Fetch, TablePager};
use super::table::TableClient;
use crate::connection::{ConnectionString, Endpoint, SasToken, ServiceKind};
use crate::error::{ConnectionError, ConnectionErrorKind};
use crate::name::TableName;
use crate::query::Query;
use crate::response::{self, TableContinuation, TablesPage};
use std::sync::Arc;

/// The client of a Table service account (Azure Table Storage, the Cosmos DB Table API or Azurite): lists,
/// creates and deletes tables, and gives a [`TableClient`] for each table. Cheap to clone; every clone and
/// every table client shares one `azure_core` pipeline.
///
/// ```no_run
/// use table_model::client::TableServiceClient;
/// use table_model::TableName;
/// # async fn run() -> Result<(), table_model::client::Error> {
/// let service = TableServiceClient::from_connection_string("UseDevelopmentStorage=true", None)?;
/// let audit = service.create_table_if_not_exists(&TableName::from_static("Audit"), None).await?;
/// # let _ = audit;
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct TableServiceClient {
    core: Arc<Core>,
}

impl TableServiceClient {
    /// A client of the service at `url` (`https://<account>.table.core.windows.net`, a Cosmos DB Table API
    /// endpoint, or Azurite's `http://127.0.0.1:10002/devstoreaccount1`), authorized with `credential`: an
    /// [`AccountKey`](crate::AccountKey) (Shared Key), a [`SasToken`], an `Arc` of any `azure_core`
    /// `TokenCredential`, or anything else [`TableCredential`] converts from. A URL that carries a SAS
    /// (`...?sv=...&sig=...`) authorizes with it; pass `TableCredential::Anonymous` (or `None`) then.
    ///
    /// ```
    /// use table_model::client::{TableCredential, TableServiceClient};
    /// use table_model::{AccountKey, ServiceKind};
    /// let azurite = TableServiceClient::new("http://127.0.0.1:10002/devstoreaccount1", AccountKey::development(), None)?;
    /// assert_eq!(azurite.kind(), ServiceKind::Azurite);
    /// let shared = TableServiceClient::new(
    ///     "https://acme.table.core.windows.net/?sv=2019-02-02&ss=t&srt=sco&sp=rl&sig=abc%3D",
    ///     TableCredential::Anonymous,
    ///     None,
    /// )?;
    /// assert_eq!(shared.endpoint().account(), "acme");
    /// let err = TableServiceClient::new("https://acme.table.core.windows.net/?sig=<x>", TableCredential::Anonymous, None)
    ///     .unwrap_err();
    /// assert!(err.to_string().contains("character `<` at index 4 cannot be in a URL"));
    /// # Ok::<(), table_model::client::Error>(())
    /// ```
    ///
    /// # Errors
    /// A URL that is not an `http(s)` endpoint naming an account ([`Endpoint::parse`]), a SAS in the URL that
    /// a URL cannot carry, or a SAS in the URL together with another credential.
    pub fn new(
        url: impl AsRef<str>,
        credential: impl Into<TableCredential>,
        options: Option<TableServiceClientOptions>,
    ) -> Result<Self, Error> {
        let url = url.as_ref();
        let mut credential = credential.into();
        let endpoint = match url.split_once('?') {
            Some((base, query)) if !query.is_empty() => {
                if !matches!(credential, TableCredential::Anonymous) {
                    return Err(ConnectionError::new(ConnectionErrorKind::Conflict {
                        key: "SharedAccessSignature",
                        other: "credential",
                    })
                    .into());
                }
                credential = TableCredential::Sas(SasToken::new(query)?);
                Endpoint::parse(base)?
            }
            Some((base, _)) => Endpoint::parse(base)?,
            None => Endpoint::parse(url)?,
        };
        Self::with_endpoint(endpoint, credential, options)
    }

    /// A client from an [`Endpoint`] already parsed (for example with an explicit account name).
    ///
    /// # Errors
    /// None today; the `Result` keeps the shape of the other constructors.
    pub fn with_endpoint(
        endpoint: Endpoint,
        credential: impl Into<TableCredential>,
        options: Option<TableServiceClientOptions>,
    ) -> Result<Self, Error> {
        let core = Core::new(endpoint, credential.into(), options.unwrap_or_default())?;
        Ok(TableServiceClient { core: Arc::new(core) })
    }

    /// A client from a storage connection string: every form [`ConnectionString`] reads, including
    /// `UseDevelopmentStorage=true` (Azurite on its default port) and the Cosmos DB emulator's. The service's
    /// kind is the connection string's ([`ConnectionString::kind`]) unless the options name one.
    ///
    /// ```
    /// use table_model::client::TableServiceClient;
    /// let service = TableServiceClient::from_connection_string(
    ///     "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=a2V5;EndpointSuffix=core.windows.net",
    ///     None,
    /// )?;
    /// assert_eq!(service.endpoint().url(), "https://acme.table.core.windows.net");
    /// # Ok::<(), table_model::client::Error>(())
    /// ```
    ///
    /// # Errors
    /// An invalid connection string.
    pub fn from_connection_string(
        connection_string: &str,
        options: Option<TableServiceClientOptions>,
    ) -> Result<Self, Error> {
        let parsed = ConnectionString::parse(connection_string)?;
        let mut options = options.unwrap_or_default();
        options.service_kind = options.service_kind.or(Some(parsed.kind()));
        let (endpoint, credential) = parsed.into_parts();
        Self::with_endpoint(endpoint, credential, Some(options))
    }

    /// The endpoint.
    pub fn endpoint(&self) -> &Endpoint {
        self.core.requests.endpoint()
    }

    /// Which implementation of the service this client talks to (from the URL, or the options).
    pub fn kind(&self) -> ServiceKind {
        self.core.kind
    }

    /// The client of one table. Nothing is sent: the table may not exist yet.
    pub fn table_client(&self, table: TableName) -> TableClient {
        TableClient::new(self.core.clone(), table)
    }

    /// Creates a table and returns its client.
    ///
    /// # Errors
    /// `409` [`TableAlreadyExists`](crate::ErrorCode::TableAlreadyExists) when it exists (see
    /// [`create_table_if_not_exists`](Self::create_table_if_not_exists)), a read-only analytics table, and any
    /// failure to send.
    pub async fn create_table(
        &self,
        table: &TableName,
        options: Option<RequestOptions<'_>>,
    ) -> Result<TableClient, Error> {
        let client = self.table_client(table.clone());
        client.create_table(options).await?;
        Ok(client)
    }

    /// Creates a table unless it exists, and returns its client either way.
    ///
    /// # Errors
    /// As [`create_table`](Self::create_table), except that an existing table is not one;
    /// [`TableBeingDeleted`](crate::ErrorCode::TableBeingDeleted) is (the name is free again later).
    pub async fn create_table_if_not_exists(
        &self,
        table: &TableName,
        options: Option<RequestOptions<'_>>,
    ) -> Result<TableClient, Error> {
        let client = self.table_client(table.clone());
        client.create_table_if_not_exists(options).await?;
        Ok(client)
    }

    /// Deletes a table and every entity in it.
    ///
    /// # Errors
    /// `404` when there is no such table, and any failure to send.
    pub async fn delete_table(&self, table: &TableName, options: Option<RequestOptions<'_>>) -> Result<(), Error> {
        self.table_client(table.clone()).delete_table(options).await
    }

    /// Deletes a table if it exists; `true` when it did.
    ///
    /// # Errors
    /// Any failure but `404`.
    pub async fn delete_table_if_exists(
        &self,
        table: &TableName,
        options: Option<RequestOptions<'_>>,
    ) -> Result<bool, Error> {
        self.table_client(table.clone()).delete_table_if_exists(options).await
    }

    /// The tables of the account, as a stream that follows continuations; `query` may filter on `TableName`
    /// (for example a prefix with [`filter`](crate::filter)) and set the page size.
    ///
    /// # Errors
    /// A query that breaks a rule (checked before anything is sent). Failures of each page come from the
    /// stream.
    pub fn list_tables(&self, query: &Query, options: Option<ListTablesOptions<'_>>) -> Result<TablePager, Error> {
        let options = options.unwrap_or_default();
        self.core.requests.list_tables(query, options.continuation.as_ref())?;
        let core = self.core.clone();
        let query = query.clone();
        let ctx = options.method_options.context.into_owned();
        let fetch: Fetch<TablesPage, TableContinuation> = Box::new(move |continuation| {
            let (core, query, ctx) = (core.clone(), query.clone(), ctx.clone());
            Box::pin(async move {
                let request = core.requests.list_tables(&query, continuation.as_ref());
                core.call(request, &ctx, response::tables).await
            })
        });
        Ok(TablePager::new(fetch, options.continuation))
    }
}
