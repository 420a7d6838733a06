//! Requests for every Table service operation as `http::Request<Vec<u8>>` values, independent of any HTTP
//! client: [`TableService`] builds and signs them; any client sends them.
//!
//! Layer: requests.

mod acl;
mod address;
pub(crate) mod error;
mod rules;
mod service_properties;
mod write;

use crate::auth;
use crate::connection::error::ConnectionError;
use crate::connection::{ConnectionString, Credential, Endpoint, ServiceKind};
use crate::continuation::{Continuation, TableContinuation};
use crate::entity::ETag;
use crate::json::MetadataLevel;
use crate::key::{PartitionKey, RowKey};
use crate::name::TableName;
use crate::percent::encode_component;
use crate::query::Query;
use error::{RequestError, RequestErrorKind};
use http::header::{HeaderName, HeaderValue, ACCEPT, CONTENT_TYPE, IF_MATCH};
use http::{Method, Request};
use std::time::SystemTime;

pub(crate) use address::{entity_path, entity_path_pieces};
pub(crate) use rules::{check_entity, check_key, check_keys};
pub use write::{EncodedEntity, WriteEntity};

/// The service version this crate speaks, sent as `x-ms-version`: the version of the Table REST API's
/// published specification (JSON payloads need 2013-08-15 or later).
pub const X_MS_VERSION: &str = "2019-02-02";
/// The OData version of request and response payloads, sent as `DataServiceVersion`.
pub const DATA_SERVICE_VERSION: &str = "3.0";
/// The highest OData version accepted, sent as `MaxDataServiceVersion`.
pub const MAX_DATA_SERVICE_VERSION: &str = "3.0;NetFx";
/// The `Content-Type` of entity and table bodies.
pub const JSON_CONTENT_TYPE: &str = "application/json";
/// The `Prefer` value of inserts: the service answers `204` with the ETag and no body.
pub(crate) const RETURN_NO_CONTENT: &str = "return-no-content";

/// The method of a merge (update or upsert that keeps the properties not sent).
pub(crate) fn merge_method() -> Method {
    Method::from_bytes(b"MERGE").expect("MERGE is a valid method token")
}

/// The precondition of an update or delete: the entity must still have the ETag read earlier, or any (the
/// entity must exist, whatever its version).
///
/// There is deliberately no "none": an update without `If-Match` is an upsert, which is
/// [`TableService::upsert`], a different operation with a different name.
///
/// ```
/// use table_model::{ETag, IfMatch};
/// let read = ETag::new("W/\"datetime'2024-01-02T03%3A04%3A05.1234567Z'\"");
/// assert_eq!(IfMatch::from(read.clone()).header_value(), read.as_str());
/// assert_eq!(IfMatch::Any.header_value(), "*");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IfMatch {
    /// Only if the entity still has this ETag (optimistic concurrency): otherwise `412 Precondition Failed`.
    ETag(ETag),
    /// If the entity exists, whatever its ETag: otherwise `404 Not Found`.
    Any,
}

impl IfMatch {
    /// The `If-Match` header value.
    pub fn header_value(&self) -> &str {
        match self {
            IfMatch::ETag(etag) => etag.as_str(),
            IfMatch::Any => "*",
        }
    }
}

impl From<ETag> for IfMatch {
    fn from(etag: ETag) -> Self {
        IfMatch::ETag(etag)
    }
}

impl From<&ETag> for IfMatch {
    fn from(etag: &ETag) -> Self {
        IfMatch::ETag(etag.clone())
    }
}

/// How an update or upsert treats the properties the stored entity has and the request does not.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UpdateMode {
    /// Keep them (`MERGE`).
    Merge,
    /// Drop them: the entity becomes exactly what is sent (`PUT`).
    Replace,
}

impl UpdateMode {
    pub(crate) fn method(self) -> Method {
        match self {
            UpdateMode::Merge => merge_method(),
            UpdateMode::Replace => Method::PUT,
        }
    }
}

/// How a merge (an update or upsert in [`UpdateMode::Merge`]) is sent: the REST API names the verb `MERGE`,
/// which not every HTTP stack can send; the service also takes `PATCH`, and the Cosmos DB Table API needs
/// `POST` with `X-HTTP-Method: MERGE` (`docs/rules.md` §9).
///
/// ```
/// use table_model::{Entity, MergeVerb, PartitionKey, RowKey, TableService, UpdateMode};
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let entity = Entity::new(PartitionKey::new("p")?, RowKey::new("r")?);
/// let service = TableService::from_connection_string("UseDevelopmentStorage=true")?;
/// let table = "Items".parse()?;
/// assert_eq!(service.upsert(&table, &entity, UpdateMode::Merge)?.method(), "MERGE");
/// let tunneled = service.with_merge_verb(MergeVerb::PostTunnel).upsert(&table, &entity, UpdateMode::Merge)?;
/// assert_eq!((tunneled.method().as_str(), tunneled.headers()["x-http-method"].to_str()?), ("POST", "MERGE"));
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum MergeVerb {
    /// `MERGE`, the verb of the REST API's reference (the default).
    #[default]
    Merge,
    /// `PATCH`, which Azure Table Storage and Azurite take for a merge.
    Patch,
    /// `POST` with `X-HTTP-Method: MERGE`, which every implementation takes (the Cosmos DB Table API needs it).
    PostTunnel,
}

// How each kind of service takes a merge is said here, beside the verbs: the connection module, which defines
// `ServiceKind`, is below the requests and does not know them.
impl ServiceKind {
    /// How this service takes a merge (`docs/rules.md` §13.2): `MERGE` on Storage and Azurite, `POST` with
    /// `X-HTTP-Method: MERGE` on the Cosmos DB Table API.
    ///
    /// ```
    /// use table_model::{MergeVerb, ServiceKind};
    /// assert_eq!(ServiceKind::CosmosDb.merge_verb(), MergeVerb::PostTunnel);
    /// ```
    pub fn merge_verb(self) -> MergeVerb {
        match self {
            ServiceKind::Storage | ServiceKind::Azurite => MergeVerb::Merge,
            ServiceKind::CosmosDb => MergeVerb::PostTunnel,
        }
    }
}

/// A Table service endpoint and the credential to use with it: builds a signed `http::Request<Vec<u8>>` for
/// every operation and sends nothing. Send the requests with any HTTP client, then read the responses with
/// [`response`](crate::response).
///
/// Every request carries `x-ms-version` ([`X_MS_VERSION`]), `x-ms-date`, `DataServiceVersion: 3.0`,
/// `MaxDataServiceVersion: 3.0;NetFx` and the `Accept` of the chosen [`MetadataLevel`] (minimal by
/// default); requests with a body add `Content-Type: application/json`; inserts add
/// `Prefer: return-no-content`. Every rule the SDK knows is checked before a request is made.
///
/// Write operations take a dynamic [`Entity`](crate::Entity) or a `#[derive(TableEntity)]` struct (see
/// [`WriteEntity`]); read the answers into either with [`response::entity`](crate::response::entity) and
/// [`response::entity_as`](crate::response::entity_as).
///
/// ```
/// use table_model::{Entity, IfMatch, PartitionKey, RowKey, TableName, TableService, UpdateMode};
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let service = TableService::from_connection_string("UseDevelopmentStorage=true")?;
/// let table: TableName = "People".parse()?;
/// let ada = Entity::new(PartitionKey::new("eu")?, RowKey::new("O'Brien")?).with("Age".parse()?, 36)?;
///
/// let insert = service.insert(&table, &ada)?;
/// assert_eq!(insert.method(), "POST");
/// assert_eq!(insert.uri(), "http://127.0.0.1:10002/devstoreaccount1/People");
/// assert_eq!(insert.headers()["prefer"], "return-no-content");
/// assert!(insert.headers()["authorization"].to_str()?.starts_with("SharedKey devstoreaccount1:"));
///
/// let update = service.update(&table, &ada, UpdateMode::Merge, IfMatch::Any)?;
/// assert_eq!(update.method(), "MERGE");
/// assert_eq!(
///     update.uri(),
///     "http://127.0.0.1:10002/devstoreaccount1/People(PartitionKey='eu',RowKey='O%27%27Brien')"
/// );
/// assert_eq!(update.headers()["if-match"], "*");
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct TableService {
    endpoint: Endpoint,
    credential: Credential,
    metadata: MetadataLevel,
    kind: ServiceKind,
    merge_verb: MergeVerb,
    server_timeout: Option<u32>,
    time: Option<SystemTime>,
    /// The client dates and signs each try itself (Shared Key): its requests leave here undated and unsigned.
    #[cfg(feature = "client")]
    signed_per_try: bool,
}

impl TableService {
    /// A service at this endpoint, authorized with this credential. The endpoint's [`ServiceKind`] (see
    /// [`Endpoint::kind`]) chooses the rules requests are checked against and the merge verb;
    /// [`with_service_kind`](Self::with_service_kind) overrides it.
    pub fn new(endpoint: Endpoint, credential: Credential) -> Self {
        let kind = endpoint.kind();
        TableService {
            endpoint,
            credential,
            metadata: MetadataLevel::default(),
            kind,
            merge_verb: kind.merge_verb(),
            server_timeout: None,
            time: None,
            #[cfg(feature = "client")]
            signed_per_try: false,
        }
    }

    /// A service from a connection string (see [`ConnectionString`]), for the kind of service it is for
    /// ([`ConnectionString::kind`]).
    ///
    /// # Errors
    /// An invalid connection string.
    pub fn from_connection_string(connection_string: &str) -> Result<Self, ConnectionError> {
        let parsed = ConnectionString::parse(connection_string)?;
        let kind = parsed.kind();
        let (endpoint, credential) = parsed.into_parts();
        Ok(TableService::new(endpoint, credential).with_service_kind(kind))
    }

    /// Asks for responses at this metadata level (the `Accept` header). With [`MetadataLevel::None`], pass
    /// type hints when reading entities.
    #[must_use]
    pub fn with_metadata(mut self, metadata: MetadataLevel) -> Self {
        self.metadata = metadata;
        self
    }

    /// Treats the endpoint as this kind of service, whatever its URL says (a proxy or a custom domain hides
    /// it): the kind's rules are checked before each request is made, and merges are sent with its verb
    /// ([`ServiceKind::merge_verb`]; [`with_merge_verb`](Self::with_merge_verb) afterwards overrides that).
    ///
    /// ```
    /// use table_model::{Entity, PartitionKey, RowKey, ServiceKind, TableService, UpdateMode};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let service = TableService::from_connection_string("UseDevelopmentStorage=true")?;
    /// assert_eq!(service.service_kind(), ServiceKind::Azurite);
    /// let cosmos = service.with_service_kind(ServiceKind::CosmosDb);
    /// let entity = Entity::new(PartitionKey::new("p")?, RowKey::new("r")?);
    /// assert_eq!(cosmos.upsert(&"Items".parse()?, &entity, UpdateMode::Merge)?.method(), "POST");
    /// # Ok(())
    /// # }
    /// ```
    #[must_use]
    pub fn with_service_kind(mut self, kind: ServiceKind) -> Self {
        self.kind = kind;
        self.merge_verb = kind.merge_verb();
        self
    }

    /// The kind of service requests are made for.
    pub fn service_kind(&self) -> ServiceKind {
        self.kind
    }

    /// Sends merges with this verb (see [`MergeVerb`]).
    #[must_use]
    pub fn with_merge_verb(mut self, verb: MergeVerb) -> Self {
        self.merge_verb = verb;
        self
    }

    /// Asks the service to give up on each request after this long: the `timeout` URI parameter, in whole
    /// seconds, capped at the service's maximum of 30 (`docs/rules.md` §12). A shorter timeout than the
    /// client's own per-try timeout lets the service, not the connection, end a slow request.
    ///
    /// ```
    /// use std::time::Duration;
    /// use table_model::{TableName, TableService};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let service = TableService::from_connection_string("UseDevelopmentStorage=true")?
    ///     .with_server_timeout(Duration::from_millis(7_500));
    /// let request = service.get(&"Tbl".parse()?, &"p".parse()?, &"r".parse()?)?;
    /// assert_eq!(request.uri().query(), Some("timeout=8"));
    /// let capped = service.with_server_timeout(Duration::from_secs(600)).delete_table(&"Tbl".parse()?)?;
    /// assert_eq!(capped.uri().query(), Some("timeout=30"));
    /// # Ok(())
    /// # }
    /// ```
    #[must_use]
    pub fn with_server_timeout(mut self, timeout: std::time::Duration) -> Self {
        let seconds = timeout.as_secs() + u64::from(timeout.subsec_nanos() > 0);
        self.server_timeout = Some(seconds.clamp(1, crate::limits::SERVER_TIMEOUT_MAX_SECONDS) as u32);
        self
    }

    /// The credential requests are signed with.
    pub fn credential(&self) -> &Credential {
        &self.credential
    }

    /// Signs every request as of this instant instead of the current time (for reproducible requests).
    #[must_use]
    pub fn at_time(mut self, time: SystemTime) -> Self {
        self.time = Some(time);
        self
    }

    /// The endpoint.
    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// The same service at the account's secondary location ([`Endpoint::secondary`]), where a read-access
    /// geo-redundant account answers reads; `None` when the endpoint's URL does not name the account.
    ///
    /// ```
    /// use table_model::{AccountKey, Credential, Endpoint, PartitionKey, RowKey, TableName, TableService};
    /// let service = TableService::new(Endpoint::parse("https://acme.table.core.windows.net")?, Credential::Anonymous);
    /// let secondary = service.at_secondary().unwrap();
    /// let read = secondary.get(&TableName::from_static("People"), &PartitionKey::from_static("eu"), &RowKey::from_static("ada"))?;
    /// assert_eq!(read.uri().host(), Some("acme-secondary.table.core.windows.net"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn at_secondary(&self) -> Option<TableService> {
        Some(TableService { endpoint: self.endpoint.secondary()?, ..self.clone() })
    }

    /// The metadata level asked for.
    pub fn metadata(&self) -> MetadataLevel {
        self.metadata
    }

    /// `POST /Tables`: creates a table. Success is `204 No Content`; `409 TableAlreadyExists` if it exists.
    ///
    /// # Errors
    /// [`RequestErrorKind::ReadOnlyTable`] for a Storage Analytics table, which cannot be created.
    pub fn create_table(&self, table: &TableName) -> Result<Request<Vec<u8>>, RequestError> {
        if table.is_analytics() {
            return Err(RequestError::new(RequestErrorKind::ReadOnlyTable { table: table.to_string() }));
        }
        let body = serde_json::to_vec(&serde_json::json!({ "TableName": table.as_str() }))
            .expect("a JSON object of one string serializes");
        let mut request = self.request(Method::POST, "/Tables", &[], Some(body))?;
        request.headers_mut().insert("prefer", HeaderValue::from_static(RETURN_NO_CONTENT));
        Ok(self.signed(request))
    }

    /// `DELETE /Tables('<table>')`: deletes a table and every entity in it. Success is `204 No Content`.
    ///
    /// # Errors
    /// None today; the `Result` keeps the signature of every other builder.
    pub fn delete_table(&self, table: &TableName) -> Result<Request<Vec<u8>>, RequestError> {
        let request = self.request(Method::DELETE, &format!("/Tables('{}')", table.as_str()), &[], None)?;
        Ok(self.signed(request))
    }

    /// `GET /Tables`: one page of the table list, filtered on the `TableName` property if the query says so.
    /// Pass the continuation of the previous page to get the next.
    ///
    /// # Errors
    /// [`RequestErrorKind::Query`] when the query options break a rule.
    pub fn list_tables(
        &self,
        query: &Query,
        continuation: Option<&TableContinuation>,
    ) -> Result<Request<Vec<u8>>, RequestError> {
        let mut params = query.render()?;
        if let Some(c) = continuation {
            params.push(("NextTableName", c.next_table_name().to_owned()));
        }
        let request = self.request(Method::GET, "/Tables", &params, None)?;
        Ok(self.signed(request))
    }

    /// `POST /<table>`: inserts an entity, which must not exist yet (`409 EntityAlreadyExists` if it does).
    /// Success is `204 No Content` with the new `ETag`.
    ///
    /// ```
    /// use table_model::{Entity, PartitionKey, RequestErrorKind, RowKey, ServiceKind, TableService};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let storage = TableService::from_connection_string("UseDevelopmentStorage=true")?;
    /// let cosmos = storage.clone().with_service_kind(ServiceKind::CosmosDb);
    /// let long = Entity::new(PartitionKey::new("p")?, RowKey::new("r".repeat(256))?);
    /// assert!(storage.insert(&"Items".parse()?, &long).is_ok());
    /// let err = cosmos.insert(&"Items".parse()?, &long).unwrap_err();
    /// assert!(matches!(err.kind(), RequestErrorKind::ServiceRule { .. }));
    /// assert!(err.to_string().ends_with("for Cosmos DB for Table: 256 bytes of UTF-8, at most 255 allowed"));
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// [`RequestErrorKind::Encode`] when the JSON body is over 1 MiB; [`RequestErrorKind::ServiceRule`] for a key
    /// or property name the service's kind refuses (`docs/rules.md` §13.1).
    pub fn insert(&self, table: &TableName, entity: &impl WriteEntity) -> Result<Request<Vec<u8>>, RequestError> {
        let body = self.entity_body(self.encode(entity)?.into_body())?;
        let mut request = self.request(Method::POST, &format!("/{}", table.as_str()), &[], Some(body))?;
        request.headers_mut().insert("prefer", HeaderValue::from_static(RETURN_NO_CONTENT));
        Ok(self.signed(request))
    }

    /// Insert or merge (`MERGE`) / insert or replace (`PUT`), without `If-Match`: creates the entity, or
    /// updates it whatever its version. Success is `204 No Content` with the new `ETag`.
    ///
    /// # Errors
    /// [`RequestErrorKind::Encode`] when the JSON body is over 1 MiB; [`RequestErrorKind::ServiceRule`] for a key
    /// or property name the service's kind refuses (`docs/rules.md` §13.1).
    pub fn upsert(
        &self,
        table: &TableName,
        entity: &impl WriteEntity,
        mode: UpdateMode,
    ) -> Result<Request<Vec<u8>>, RequestError> {
        let encoded = self.encode(entity)?;
        let path = entity_path(table, encoded.partition_key(), encoded.row_key());
        let body = self.entity_body(encoded.into_body())?;
        let request = self.write_request(mode, &path, body)?;
        Ok(self.signed(request))
    }

    /// Merge (`MERGE`) or replace (`PUT`) an existing entity, under a precondition: `412 Precondition Failed`
    /// when its ETag is no longer the one given, `404 Not Found` when it does not exist. Success is
    /// `204 No Content` with the new `ETag`.
    ///
    /// # Errors
    /// [`RequestErrorKind::Encode`] when the JSON body is over 1 MiB; [`RequestErrorKind::InvalidETag`] for an
    /// ETag that cannot be a header value; [`RequestErrorKind::ServiceRule`] for a key or property name the
    /// service's kind refuses (`docs/rules.md` §13.1).
    pub fn update(
        &self,
        table: &TableName,
        entity: &impl WriteEntity,
        mode: UpdateMode,
        if_match: IfMatch,
    ) -> Result<Request<Vec<u8>>, RequestError> {
        let encoded = self.encode(entity)?;
        let path = entity_path(table, encoded.partition_key(), encoded.row_key());
        let body = self.entity_body(encoded.into_body())?;
        let mut request = self.write_request(mode, &path, body)?;
        request.headers_mut().insert(IF_MATCH, if_match_header(&if_match)?);
        Ok(self.signed(request))
    }

    /// `DELETE /<table>(PartitionKey='..',RowKey='..')` under a precondition (see [`IfMatch`]). Success is
    /// `204 No Content`.
    ///
    /// # Errors
    /// [`RequestErrorKind::InvalidETag`] for an ETag that cannot be a header value; [`RequestErrorKind::ServiceRule`]
    /// for a key the service's kind refuses (`docs/rules.md` §13.1).
    pub fn delete(
        &self,
        table: &TableName,
        partition_key: &PartitionKey,
        row_key: &RowKey,
        if_match: IfMatch,
    ) -> Result<Request<Vec<u8>>, RequestError> {
        check_keys(self.kind.rules(), partition_key, row_key)?;
        let path = entity_path(table, partition_key, row_key);
        let mut request = self.request(Method::DELETE, &path, &[], None)?;
        request.headers_mut().insert(IF_MATCH, if_match_header(&if_match)?);
        Ok(self.signed(request))
    }

    /// `GET /<table>(PartitionKey='..',RowKey='..')`: one entity, `200 OK` with its ETag, or `404 Not Found`.
    ///
    /// # Errors
    /// [`RequestErrorKind::ServiceRule`] for a key the service's kind refuses (`docs/rules.md` §13.1).
    pub fn get(
        &self,
        table: &TableName,
        partition_key: &PartitionKey,
        row_key: &RowKey,
    ) -> Result<Request<Vec<u8>>, RequestError> {
        check_keys(self.kind.rules(), partition_key, row_key)?;
        let request = self.request(Method::GET, &entity_path(table, partition_key, row_key), &[], None)?;
        Ok(self.signed(request))
    }

    /// `GET /<table>()?$filter=..&$select=..&$top=..`: one page of entities. Pass the continuation of the
    /// previous page to get the next; a page may be empty and still have a continuation.
    ///
    /// # Errors
    /// [`RequestErrorKind::Query`] when the query options break a rule.
    pub fn query(
        &self,
        table: &TableName,
        query: &Query,
        continuation: Option<&Continuation>,
    ) -> Result<Request<Vec<u8>>, RequestError> {
        let mut params = query.render()?;
        if let Some(c) = continuation {
            params.push(("NextPartitionKey", c.next_partition_key().to_owned()));
            if let Some(rk) = c.next_row_key() {
                params.push(("NextRowKey", rk.to_owned()));
            }
        }
        let request = self.request(Method::GET, &format!("/{}()", table.as_str()), &params, None)?;
        Ok(self.signed(request))
    }

    /// Signs a request again (sets `x-ms-date` and `Authorization`, or appends the SAS), for example before a
    /// retry: the service refuses a date more than 15 minutes old.
    ///
    /// A request built by this service is already signed; re-signing a SAS request would append the token twice.
    pub fn sign<B>(&self, request: &mut Request<B>) {
        auth::authorize(request, self.endpoint.account(), &self.credential, self.time.unwrap_or_else(SystemTime::now));
    }

    fn signed(&self, mut request: Request<Vec<u8>>) -> Request<Vec<u8>> {
        #[cfg(feature = "client")]
        if self.signed_per_try {
            return request;
        }
        self.sign(&mut request);
        request
    }

    /// Leaves requests undated and unsigned, for the client, whose per-try policy dates and signs each try.
    #[cfg(feature = "client")]
    pub(crate) fn with_signing_per_try(mut self) -> Self {
        self.signed_per_try = true;
        self
    }

    /// The absolute URL of a resource path (which starts with `/`), with query parameters encoded.
    pub(crate) fn url(&self, path: &str, params: &[(&str, String)]) -> String {
        let mut url = format!("{}{path}", self.endpoint.url());
        for (i, (name, value)) in params.iter().enumerate() {
            url.push(if i == 0 { '?' } else { '&' });
            url.push_str(name);
            url.push('=');
            url.push_str(&encode_component(value));
        }
        if let Some(seconds) = self.server_timeout {
            url.push(if params.is_empty() { '?' } else { '&' });
            url.push_str("timeout=");
            url.push_str(&seconds.to_string());
        }
        url
    }

    /// Encodes an entity and checks it against the rules of the service's kind (`docs/rules.md` §13.1).
    fn encode(&self, entity: &impl WriteEntity) -> Result<EncodedEntity, RequestError> {
        let encoded = entity.encode()?;
        check_entity(self.kind.rules(), encoded.partition_key(), encoded.row_key(), encoded.body().as_bytes())?;
        Ok(encoded)
    }

    /// The bytes an entity body is sent as: in ASCII for a service that needs it ([`ServiceKind::ascii_json`]).
    fn entity_body(&self, body: crate::json::EntityBody) -> Result<Vec<u8>, RequestError> {
        let body = if self.kind.ascii_json() { body.into_ascii()? } else { body };
        Ok(body.into_bytes())
    }

    /// An update or upsert request in this mode, with the merge verb chosen, unsigned.
    fn write_request(&self, mode: UpdateMode, path: &str, body: Vec<u8>) -> Result<Request<Vec<u8>>, RequestError> {
        let method = match (mode, self.merge_verb) {
            (UpdateMode::Replace, _) => Method::PUT,
            (UpdateMode::Merge, MergeVerb::Merge) => merge_method(),
            (UpdateMode::Merge, MergeVerb::Patch) => Method::PATCH,
            (UpdateMode::Merge, MergeVerb::PostTunnel) => Method::POST,
        };
        let mut request = self.request(method, path, &[], Some(body))?;
        if mode == UpdateMode::Merge && self.merge_verb == MergeVerb::PostTunnel {
            request.headers_mut().insert(HeaderName::from_static("x-http-method"), HeaderValue::from_static("MERGE"));
        }
        Ok(request)
    }

    /// A request with the headers every operation carries, unsigned.
    pub(crate) fn request(
        &self,
        method: Method,
        path: &str,
        params: &[(&str, String)],
        body: Option<Vec<u8>>,
    ) -> Result<Request<Vec<u8>>, RequestError> {
        let has_body = body.is_some();
        // Every part is percent-encoded or a validated name, so the URI is valid.
        let mut request = Request::builder()
            .method(method)
            .uri(self.url(path, params))
            .body(body.unwrap_or_default())
            .expect("a valid request");
        let headers = request.headers_mut();
        headers.insert(HeaderName::from_static("x-ms-version"), HeaderValue::from_static(X_MS_VERSION));
        headers.insert(HeaderName::from_static("dataserviceversion"), HeaderValue::from_static(DATA_SERVICE_VERSION));
        headers.insert(
            HeaderName::from_static("maxdataserviceversion"),
            HeaderValue::from_static(MAX_DATA_SERVICE_VERSION),
        );
        headers.insert(ACCEPT, HeaderValue::from_static(self.metadata.accept_header()));
        if has_body {
            headers.insert(CONTENT_TYPE, HeaderValue::from_static(JSON_CONTENT_TYPE));
        }
        Ok(request)
    }
}

pub(crate) fn if_match_header(if_match: &IfMatch) -> Result<HeaderValue, RequestError> {
    HeaderValue::from_str(if_match.header_value())
        .map_err(|_| RequestError::new(RequestErrorKind::InvalidETag { etag: if_match.header_value().to_owned() }))
}

#[cfg(test)]
mod tests;
