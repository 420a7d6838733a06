//! The client of a Table service account: tables, and the [`TableClient`] of each.

use super::core::Core;
use super::credential::TableCredential;
use super::error::Error;
use super::options::{ListTablesOptions, RequestOptions, TableServiceClientOptions};
use super::pager::{Fetch, TablePager};
use super::table::TableClient;
use super::trace::Operation;
use crate::connection::error::{ConnectionError, ConnectionErrorKind, Given};
use crate::connection::{redact_signature, ConnectionString, Endpoint, SasToken, ServiceKind};
use crate::name::TableName;
use crate::query::Query;
use crate::request::TableService;
use crate::response::{self, TableContinuation, TablesPage};
use crate::service_properties::{ServiceProperties, ServiceStats};
use crate::table_entity::NamedTable;
use azure_core::http::Context;
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
    /// // Azurite's port without the account: the message names the URL and says what to add.
    /// let err = TableServiceClient::new("http://127.0.0.1:10002", AccountKey::development(), None).unwrap_err();
    /// assert!(err.to_string().starts_with("invalid endpoint URL \"http://127.0.0.1:10002\": cannot tell the account"));
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
                    let conflict = ConnectionErrorKind::Conflict { key: "SharedAccessSignature", other: "credential" };
                    let given = Given::Endpoint(redact_signature(url).into_owned());
                    return Err(ConnectionError::given(conflict, given).into());
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
    ///
    /// Every method here takes the table as `impl Into<TableName>`: a `TableName`, or a `&TableName` (cloned).
    pub fn table_client(&self, table: impl Into<TableName>) -> TableClient {
        TableClient::new(self.core.clone(), table.into())
    }

    /// The client of the table a derived struct names with `#[table(name = "...")]`. Nothing is sent: the
    /// table may not exist yet. A struct without a name does not compile here ([`NamedTable`]).
    ///
    /// ```
    /// use table_model::client::TableServiceClient;
    /// use table_model::TableEntity;
    ///
    /// #[derive(TableEntity)]
    /// #[table(name = "Orders")]
    /// struct Order {
    ///     #[table(partition_key)]
    ///     customer: String,
    ///     #[table(row_key)]
    ///     number: u32,
    /// }
    ///
    /// let service = TableServiceClient::from_connection_string("UseDevelopmentStorage=true", None)?;
    /// let orders = service.table_for::<Order>();
    /// assert_eq!(orders.table(), "Orders");
    /// # Ok::<(), table_model::client::Error>(())
    /// ```
    pub fn table_for<T: NamedTable>(&self) -> TableClient {
        self.table_client(T::TABLE_NAME)
    }

    /// Starts the span of a call of the service named `TableServiceClient.method` (when tracing).
    fn operation<'a>(&self, name: &'static str, ctx: &'a Context<'a>) -> Operation<'a> {
        Operation::start(self.core.tracing.as_ref(), name, ctx, None)
    }

    /// Creates a table and returns its client.
    ///
    /// # Errors
    /// `409` [`TableAlreadyExists`](crate::ErrorCode::TableAlreadyExists) when it exists (see
    /// [`create_table_if_not_exists`](Self::create_table_if_not_exists)), a read-only analytics table, and any
    /// failure to send.
    pub async fn create_table(
        &self,
        table: impl Into<TableName>,
        options: Option<RequestOptions<'_>>,
    ) -> Result<TableClient, Error> {
        let client = self.table_client(table);
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
        table: impl Into<TableName>,
        options: Option<RequestOptions<'_>>,
    ) -> Result<TableClient, Error> {
        let client = self.table_client(table);
        client.create_table_if_not_exists(options).await?;
        Ok(client)
    }

    /// Creates the table a derived struct names with `#[table(name = "...")]` unless it exists, and returns
    /// its client either way: [`create_table_if_not_exists`](Self::create_table_if_not_exists) with
    /// [`NamedTable::TABLE_NAME`].
    ///
    /// # Errors
    /// As [`create_table_if_not_exists`](Self::create_table_if_not_exists).
    pub async fn create_table_if_not_exists_for<T: NamedTable>(
        &self,
        options: Option<RequestOptions<'_>>,
    ) -> Result<TableClient, Error> {
        self.create_table_if_not_exists(T::TABLE_NAME, options).await
    }

    /// Deletes a table and every entity in it.
    ///
    /// # Errors
    /// `404` when there is no such table, and any failure to send.
    pub async fn delete_table(
        &self,
        table: impl Into<TableName>,
        options: Option<RequestOptions<'_>>,
    ) -> Result<(), Error> {
        self.table_client(table).delete_table(options).await
    }

    /// Deletes a table if it exists; `true` when it did.
    ///
    /// # Errors
    /// Any failure but `404`.
    pub async fn delete_table_if_exists(
        &self,
        table: impl Into<TableName>,
        options: Option<RequestOptions<'_>>,
    ) -> Result<bool, Error> {
        self.table_client(table).delete_table_if_exists(options).await
    }

    /// The service's Storage Analytics logging, hour and minute metrics and CORS rules. A part the service's
    /// answer does not carry is `None`.
    ///
    /// ```no_run
    /// use table_model::client::TableServiceClient;
    /// # async fn run() -> Result<(), table_model::client::Error> {
    /// let service = TableServiceClient::from_connection_string("UseDevelopmentStorage=true", None)?;
    /// let properties = service.get_service_properties(None).await?;
    /// for rule in properties.cors.unwrap_or_default() {
    ///     println!("{:?} may {:?}", rule.allowed_origins, rule.allowed_methods);
    /// }
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// [`RequestErrorKind::NotSupported`](crate::RequestErrorKind::NotSupported) for the Cosmos DB Table API,
    /// which does not serve service properties (nothing is sent); an answer that is not a properties document,
    /// and any failure to send.
    pub async fn get_service_properties(
        &self,
        options: Option<RequestOptions<'_>>,
    ) -> Result<ServiceProperties, Error> {
        let options = options.unwrap_or_default();
        let mut op = self.operation("TableServiceClient.get_service_properties", &options.method_options.context);
        let request = self.core.requests.get_service_properties();
        op.end(self.core.call(request, op.ctx(), response::service_properties).await)
    }

    /// Sets the parts of the service's properties that are given (logging, hour metrics, minute metrics, CORS
    /// rules) and leaves the others as they are.
    ///
    /// ```no_run
    /// use table_model::client::TableServiceClient;
    /// use table_model::service_properties::{CorsRule, ServiceProperties};
    /// # async fn run() -> Result<(), table_model::client::Error> {
    /// let service = TableServiceClient::from_connection_string("UseDevelopmentStorage=true", None)?;
    /// let cors = CorsRule::new(["https://contoso.com"], ["GET", "MERGE"]).with_max_age(600);
    /// service.set_service_properties(&ServiceProperties::new().with_cors(vec![cors]), None).await?;
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// Properties that break a rule ([`ServiceProperties::check`]) and the Cosmos DB Table API, which does not
    /// serve them (nothing is sent either way); any failure to send.
    pub async fn set_service_properties(
        &self,
        properties: &ServiceProperties,
        options: Option<RequestOptions<'_>>,
    ) -> Result<(), Error> {
        let options = options.unwrap_or_default();
        let mut op = self.operation("TableServiceClient.set_service_properties", &options.method_options.context);
        let request = self.core.requests.set_service_properties(properties);
        op.end(self.core.call(request, op.ctx(), response::accepted).await)
    }

    /// The geo-replication statistics of the account's secondary location, asked of the secondary
    /// ([`TableService::get_service_stats`](crate::TableService::get_service_stats) says where that is). Only
    /// an account with read-access geo-redundant replication answers; Azurite answers on its
    /// `<account>-secondary` path, always `live`.
    ///
    /// ```no_run
    /// use table_model::client::TableServiceClient;
    /// # async fn run() -> Result<(), table_model::client::Error> {
    /// let service = TableServiceClient::from_connection_string("UseDevelopmentStorage=true", None)?;
    /// if let Some(geo) = service.get_service_stats(None).await?.geo_replication {
    ///     println!("{} as of {:?}", geo.status.as_str(), geo.last_sync_time);
    /// }
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// [`RequestErrorKind::NotSupported`](crate::RequestErrorKind::NotSupported) for the Cosmos DB Table API
    /// (nothing is sent); a service error for an account without a readable secondary; any failure to send.
    pub async fn get_service_stats(&self, options: Option<RequestOptions<'_>>) -> Result<ServiceStats, Error> {
        let options = options.unwrap_or_default();
        let mut op = self.operation("TableServiceClient.get_service_stats", &options.method_options.context);
        let request = self.core.requests.get_service_stats();
        op.end(self.core.call(request, op.ctx(), response::service_stats).await)
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
                // A span per page, as for a query of entities.
                let mut op = Operation::start(core.tracing.as_ref(), "TableServiceClient.list_tables", &ctx, None);
                let request = |at: &TableService| at.list_tables(&query, continuation.as_ref());
                op.end(core.call_read(request, op.ctx(), response::tables).await)
            })
        });
        Ok(TablePager::new(fetch, options.continuation))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::ErrorKind;
    use crate::request::error::RequestErrorKind;
    use crate::AccountKey;
    use async_trait::async_trait;
    use azure_core::http::policies::{Policy, PolicyResult};
    use azure_core::http::{Context, Request};
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn a_url_carrying_a_sas_and_another_credential_is_named_without_its_signature() {
        let url = "https://acme.table.core.windows.net/?sv=2019-02-02&sig=c2VjcmV0";
        let err = TableServiceClient::new(url, AccountKey::development(), None).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid endpoint URL \"https://acme.table.core.windows.net/?sv=2019-02-02&sig=REDACTED\": a URL that \
             carries a `SharedAccessSignature` takes no other credential; pass `TableCredential::Anonymous`"
        );
    }

    /// A transport that counts what reaches it and answers nothing.
    #[derive(Debug, Default)]
    struct Counting {
        tries: AtomicUsize,
    }

    #[async_trait]
    impl Policy for Counting {
        async fn send(&self, _: &Context, _: &mut Request, _: &[Arc<dyn Policy>]) -> PolicyResult {
            self.tries.fetch_add(1, Ordering::SeqCst);
            Err(azure_core::Error::with_message(azure_core::error::ErrorKind::Io, "no server in this test"))
        }
    }

    /// A client of the Cosmos DB Table API refuses service properties, statistics and stored access policies
    /// before anything is sent, with the request layer's typed error.
    #[tokio::test]
    async fn a_cosmos_client_refuses_what_cosmos_does_not_serve_and_sends_nothing() {
        let transport = Arc::new(Counting::default());
        let options = TableServiceClientOptions::unretried(transport.clone());
        let client = TableServiceClient::new(
            "https://acme.table.cosmos.azure.com:443/",
            AccountKey::development(),
            Some(options),
        )
        .unwrap();
        assert_eq!(client.kind(), ServiceKind::CosmosDb);
        let table = client.table_client(TableName::from_static("Audit"));
        let refusals = [
            ("get service properties", client.get_service_properties(None).await.map(drop)),
            ("set service properties", client.set_service_properties(&ServiceProperties::new(), None).await),
            ("get service stats", client.get_service_stats(None).await.map(drop)),
            ("get access policy", table.get_access_policy(None).await.map(drop)),
            ("set access policy", table.set_access_policy(&[], None).await),
        ];
        for (name, result) in refusals {
            let err = result.unwrap_err();
            let ErrorKind::Request(e) = err.kind() else { panic!("{name}: not a request error: {err}") };
            assert_eq!(
                e.kind(),
                &RequestErrorKind::NotSupported { operation: name, service: ServiceKind::CosmosDb },
                "{name}"
            );
            assert_eq!(e.to_string(), format!("{name} is not served by Cosmos DB for Table"));
            // A table client's refusal names its table too.
            let table = if name.contains("access policy") { "table `Audit`: " } else { "" };
            assert_eq!(err.to_string(), format!("{table}{e}"));
        }
        assert_eq!(transport.tries.load(Ordering::SeqCst), 0);
        // The same client still sends what Cosmos DB serves.
        assert!(client.delete_table(&TableName::from_static("Audit"), None).await.is_err());
        assert_eq!(transport.tries.load(Ordering::SeqCst), 1);
    }

    /// A transport that keeps the URL and body of what reaches it and answers nothing.
    #[derive(Debug, Default)]
    struct Recording {
        sent: std::sync::Mutex<Vec<(String, String)>>,
    }

    #[async_trait]
    impl Policy for Recording {
        async fn send(&self, _: &Context, request: &mut Request, _: &[Arc<dyn Policy>]) -> PolicyResult {
            let body = match request.body() {
                azure_core::http::Body::Bytes(bytes) => String::from_utf8_lossy(bytes).into_owned(),
                azure_core::http::Body::SeekableStream(_) => String::new(),
            };
            self.sent.lock().unwrap().push((request.url().path().to_owned(), body));
            Err(azure_core::Error::with_message(azure_core::error::ErrorKind::Io, "no server in this test"))
        }
    }

    /// The table a derived struct names is the one its client addresses; the methods take a table name by
    /// value and by reference alike.
    #[cfg(feature = "derive")]
    #[tokio::test]
    async fn a_derived_struct_opens_the_table_it_names() {
        #[derive(crate::TableEntity)]
        #[table(name = "Orders")]
        struct Order {
            #[table(partition_key)]
            customer: String,
            #[table(row_key)]
            number: u32,
        }

        let transport = Arc::new(Recording::default());
        let options = TableServiceClientOptions::unretried(transport.clone());
        let client = TableServiceClient::from_connection_string("UseDevelopmentStorage=true", Some(options)).unwrap();
        assert_eq!(client.table_for::<Order>().table(), "Orders");
        assert!(client.create_table_if_not_exists_for::<Order>(None).await.is_err());
        let audit = TableName::from_static("Audit");
        assert_eq!(client.table_client(&audit).table(), client.table_client(audit.clone()).table());
        assert!(client.create_table(&audit, None).await.is_err());
        assert!(client.delete_table(audit.clone(), None).await.is_err());
        assert!(client.delete_table_if_exists(&audit, None).await.is_err());
        let sent = transport.sent.lock().unwrap().clone();
        let path = |(path, _): &(String, String)| path.clone();
        assert_eq!(
            sent.iter().map(path).collect::<Vec<_>>(),
            [
                "/devstoreaccount1/Tables",
                "/devstoreaccount1/Tables",
                "/devstoreaccount1/Tables('Audit')",
                "/devstoreaccount1/Tables('Audit')"
            ]
        );
        assert_eq!(sent[0].1, r#"{"TableName":"Orders"}"#);
        assert_eq!(sent[1].1, r#"{"TableName":"Audit"}"#);
    }
}
