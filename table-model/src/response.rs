//! Reading the service's responses, from any HTTP client that can hand over an `http::Response` with the
//! body as bytes: entities with their ETag, query pages with their continuation, and service errors as a
//! typed [`ServiceError`].
//!
//! Each function checks the status first: an error status becomes [`ResponseErrorKind::Service`] with the
//! service's code and message, whatever the operation.
//!
//! Layer: requests.

pub(crate) mod batch_response;
pub(crate) mod errors;

use crate::edm::{EdmType, EdmValue};
use crate::entity::{ETag, Entity};
use crate::json::error::DecodeError;
use crate::json::{
    decode_entity, decode_entity_with, decode_query, decode_query_with, EntityVisitor, SystemProperties, TypeHints,
};
use crate::limits::BATCH_MAX_OPERATIONS;
use crate::name::TableName;
use crate::sas::SignedIdentifier;
use crate::service_properties::{ServiceProperties, ServiceStats};
use crate::table_entity::TableEntity;
use errors::{ResponseError, ResponseErrorKind, ServiceError};
use http::{HeaderMap, Response};
use std::cell::Cell;

pub use crate::continuation::{Continuation, ContinuationError, ContinuationErrorKind, TableContinuation};
pub use batch_response::{read_batch as batch, BatchOutcome};

/// One page of a query: dynamic [`Entity`]s ([`query`]) or derived structs ([`query_as`]).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct QueryPage<T = Entity> {
    /// The entities of the page, each with its ETag when the metadata level carries one.
    pub entities: Vec<T>,
    /// Where the next page starts; `None` on the last page. A page may be empty and still continue.
    pub continuation: Option<Continuation>,
}

/// One page of a query as the service sent it ([`raw_query`]): the JSON body, not decoded, and the continuation.
/// For a reader that decodes the entities itself, with [`decode_query_with`] and a visitor of its own (as
/// `table-model-arrow` appends them straight to Arrow columns).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct RawPage<B> {
    /// The body: `{"value": [...]}` at the metadata level the query asked for.
    pub body: B,
    /// Where the next page starts; `None` on the last page. A page may be empty and still continue.
    pub continuation: Option<Continuation>,
}

/// One page of a table listing.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct TablesPage {
    /// The tables of the page.
    pub tables: Vec<TableName>,
    /// Where the next page starts; `None` on the last page.
    pub continuation: Option<TableContinuation>,
}

/// Every response header this module reads, by its lowercase name: an HTTP client that hands over only these
/// loses nothing.
///
/// ```
/// assert!(table_model::response::HEADERS_READ.contains(&"etag"));
/// ```
pub const HEADERS_READ: [&str; 8] = [
    "content-type",
    "date",
    "etag",
    "x-ms-continuation-nextpartitionkey",
    "x-ms-continuation-nextrowkey",
    "x-ms-continuation-nexttablename",
    "x-ms-error-code",
    "x-ms-request-id",
];

/// A header's value, when it is visible ASCII. Every header read goes through here, and must be one of
/// [`HEADERS_READ`].
pub(crate) fn header<'a>(headers: &'a HeaderMap, name: &'static str) -> Option<&'a str> {
    debug_assert!(HEADERS_READ.contains(&name), "`{name}` is read but not listed in HEADERS_READ");
    headers.get(name).and_then(|v| v.to_str().ok())
}

// The continuation headers are read here, with every other header of a response.
impl Continuation {
    /// The continuation of a response, if it has one.
    pub fn from_headers(headers: &HeaderMap) -> Option<Self> {
        let pk = header(headers, "x-ms-continuation-nextpartitionkey")?;
        Some(Continuation {
            next_partition_key: pk.to_owned(),
            next_row_key: header(headers, "x-ms-continuation-nextrowkey").map(str::to_owned),
        })
    }
}

impl TableContinuation {
    /// The continuation of a response, if it has one.
    pub fn from_headers(headers: &HeaderMap) -> Option<Self> {
        header(headers, "x-ms-continuation-nexttablename").map(TableContinuation::new)
    }
}

/// The service error of a response with a status of 300 or more; `None` for a success.
///
/// The code is the `x-ms-error-code` header, else the `odata.error` (JSON) or `<Code>` (XML, which
/// authentication failures use) of the body; the message is the body's. A message starting with `N:`, as
/// in the failed operation of a batch (`docs/rules.md` §8.2), gives the
/// [`operation_index`](ServiceError::operation_index) when `N` is below 100, the most operations a batch can
/// hold. This function does not know the batch the response answers, so it cannot tell whether `N` is inside
/// it: read a batch's answer with [`batch`], which refuses an index outside the batch with
/// [`ResponseErrorKind::OperationIndexOutOfRange`].
///
/// ```
/// use table_model::response;
/// let reply = |message: &str| {
///     let body = format!(r#"{{"odata.error":{{"code":"EntityAlreadyExists","message":{{"value":"{message}"}}}}}}"#);
///     http::Response::builder().status(409).body(body.into_bytes()).unwrap()
/// };
/// assert_eq!(response::error(&reply("2:The specified entity already exists.")).unwrap().operation_index(), Some(2));
/// // No batch has an operation 100 or above.
/// assert_eq!(response::error(&reply("999:The specified entity already exists.")).unwrap().operation_index(), None);
/// ```
pub fn error<B: AsRef<[u8]>>(response: &Response<B>) -> Option<ServiceError> {
    let status = response.status().as_u16();
    if status < 300 {
        return None;
    }
    Some(service_error(status, response.headers(), response.body().as_ref()))
}

pub(crate) fn service_error(status: u16, headers: &HeaderMap, body: &[u8]) -> ServiceError {
    let (body_code, message) = error_body(body);
    let code = header(headers, "x-ms-error-code").map(str::to_owned).or(body_code);
    let operation_index = named_operation(&message)
        .and_then(|digits| digits.parse::<usize>().ok())
        .filter(|&index| index < BATCH_MAX_OPERATIONS);
    let request_id = header(headers, "x-ms-request-id").map(str::to_owned);
    ServiceError { status, code, message, operation_index, request_id }
}

/// The code and message of an error body: `{"odata.error":{"code":..,"message":{"value":..}}}`, or XML
/// `<Code>..</Code><Message>..</Message>`.
fn error_body(body: &[u8]) -> (Option<String>, String) {
    if let Ok(json) = serde_json::from_slice::<serde_json::Value>(body) {
        let error = &json["odata.error"];
        let code = error["code"].as_str().map(str::to_owned);
        let message = error["message"]["value"].as_str().or_else(|| error["message"].as_str()).unwrap_or("");
        return (code, message.to_owned());
    }
    let text = String::from_utf8_lossy(body);
    let tag = |name: &str| {
        let open = format!("<{name}>");
        let start = text.find(&open)? + open.len();
        let end = text[start..].find(&format!("</{name}>"))? + start;
        Some(text[start..end].to_owned())
    };
    (tag("Code"), tag("Message").unwrap_or_default())
}

/// The digits `N` of a message `N:...`, the operation a batch's error names (`docs/rules.md` §8.2): ASCII
/// digits, leading zeros allowed (`007` is 7, as any integer parser reads it), however many. `None` when the
/// message does not start with digits and `:`.
pub(crate) fn named_operation(message: &str) -> Option<&str> {
    let end = message.bytes().position(|b| !b.is_ascii_digit())?;
    (end > 0 && message.as_bytes()[end] == b':').then(|| &message[..end])
}

fn expect<B: AsRef<[u8]>>(response: &Response<B>, ok: &[u16], expected: &'static str) -> Result<(), ResponseError> {
    if let Some(e) = error(response) {
        return Err(e.into());
    }
    let status = response.status().as_u16();
    if ok.contains(&status) {
        Ok(())
    } else {
        Err(ResponseError::new(ResponseErrorKind::UnexpectedStatus { status, expected }))
    }
}

/// The `ETag` header of a response.
pub fn etag_header(headers: &HeaderMap) -> Option<ETag> {
    header(headers, "etag").map(ETag::new)
}

/// Reads the answer to a get: `200 OK` with the entity, whose ETag is the `ETag` header.
///
/// With [`MetadataLevel::None`](crate::MetadataLevel::None), pass hints to read Int64, Guid, DateTime and
/// Binary properties typed (they arrive as plain strings).
///
/// # Errors
/// A service error (`404` when there is no such entity), another status, or a body that does not decode.
pub fn entity<B: AsRef<[u8]>>(response: &Response<B>, hints: Option<&dyn TypeHints>) -> Result<Entity, ResponseError> {
    expect(response, &[200], "200")?;
    let mut entity = decode_entity(response.body().as_ref(), hints)?;
    if let Some(etag) = etag_header(response.headers()) {
        let timestamp = entity.timestamp();
        entity.set_server_metadata(timestamp, Some(etag));
    }
    Ok(entity)
}

/// Reads the answer to an insert, upsert or update: `204 No Content` (or `201 Created`) with the entity's
/// new `ETag`, which the next conditional update needs.
///
/// # Errors
/// A service error (`409` for an insert of an existing entity, `412` for a stale ETag, `404` for an update
/// of a missing entity), another status, or no `ETag` header.
pub fn written<B: AsRef<[u8]>>(response: &Response<B>) -> Result<ETag, ResponseError> {
    expect(response, &[201, 204], "201 or 204")?;
    etag_header(response.headers()).ok_or_else(|| ResponseError::new(ResponseErrorKind::MissingETag))
}

/// Reads the answer to a delete, a table creation or a table deletion: `204 No Content` (or `201 Created`).
///
/// # Errors
/// A service error or another status.
pub fn empty<B: AsRef<[u8]>>(response: &Response<B>) -> Result<(), ResponseError> {
    expect(response, &[201, 204], "201 or 204")
}

/// Reads a page of a query of entities: `200 OK` with `{"value": [...]}` and the continuation headers.
///
/// # Errors
/// A service error, another status, or a body that does not decode.
pub fn query<B: AsRef<[u8]>>(
    response: &Response<B>,
    hints: Option<&dyn TypeHints>,
) -> Result<QueryPage, ResponseError> {
    expect(response, &[200], "200")?;
    let entities = decode_query(response.body().as_ref(), hints)?;
    Ok(QueryPage { entities, continuation: Continuation::from_headers(response.headers()) })
}

/// Reads a page of a query of entities without decoding it: `200 OK`, the body as it came (a clone of it: for
/// `Bytes`, a reference count) and the continuation headers. The body's entities are checked only when it is
/// decoded ([`decode_query_with`]).
///
/// ```
/// use table_model::response;
/// let body = r#"{"value":[{"PartitionKey":"p","RowKey":"r"}]}"#;
/// let reply = http::Response::builder()
///     .status(200)
///     .header("x-ms-continuation-nextpartitionkey", "1!4!cQ--")
///     .body(body)
///     .unwrap();
/// let page = response::raw_query(&reply)?;
/// assert_eq!(page.body, body);
/// assert_eq!(page.continuation.unwrap().next_partition_key(), "1!4!cQ--");
/// # Ok::<(), table_model::ResponseError>(())
/// ```
///
/// # Errors
/// A service error or another status.
pub fn raw_query<B: AsRef<[u8]> + Clone>(response: &Response<B>) -> Result<RawPage<B>, ResponseError> {
    expect(response, &[200], "200")?;
    Ok(RawPage { body: response.body().clone(), continuation: Continuation::from_headers(response.headers()) })
}

/// The service's clock when it answered a query: its `Date` header (RFC 1123, whole seconds). A watermark taken
/// on the service's clock, rather than the local one, compares with the `Timestamp` the service writes
/// (`tablectl backup`'s incremental generations).
///
/// ```
/// use table_model::response::query_date;
/// let answer = http::Response::builder()
///     .status(200)
///     .header("date", "Sat, 28 Nov 2026 04:30:07 GMT")
///     .body(br#"{"value":[]}"#.to_vec())?;
/// assert_eq!(query_date(&answer)?.to_rfc3339(), "2026-11-28T04:30:07+00:00");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// A service error or another status; an answer without a `Date` header in RFC 1123's form
/// ([`ResponseErrorKind::Malformed`]).
pub fn query_date<B: AsRef<[u8]>>(response: &Response<B>) -> Result<chrono::DateTime<chrono::Utc>, ResponseError> {
    expect(response, &[200], "200")?;
    let date = header(response.headers(), "date")
        .and_then(|text| chrono::DateTime::parse_from_rfc2822(text).ok())
        .ok_or_else(|| {
            let reason = "the answer has no `Date` header in RFC 1123's form (such as `Sat, 28 Nov 2026 04:30:07 GMT`)";
            ResponseError::new(ResponseErrorKind::Malformed { reason: reason.to_owned() })
        })?;
    Ok(date.with_timezone(&chrono::Utc))
}

/// Reads the answer to a get into a `#[derive(TableEntity)]` struct: as [`entity`], with the struct's schema
/// as the type hints (so `nometadata` responses read typed too), its `#[table(etag)]` field set from the
/// `ETag` header. The body is decoded straight into the struct ([`TableEntity::from_json`]); no [`Entity`] is
/// built.
///
/// # Errors
/// As [`entity`], and [`ResponseErrorKind::Entity`] when the entity does not fit the struct.
pub fn entity_as<T: TableEntity, B: AsRef<[u8]>>(response: &Response<B>) -> Result<T, ResponseError> {
    expect(response, &[200], "200")?;
    let misfit = Cell::new(false);
    let visitor =
        StructVisitor::<T> { inner: T::__Visitor::default(), etag: etag_header(response.headers()), misfit: &misfit };
    decode_entity_with(response.body().as_ref(), visitor).map_err(|e| read_error(e, misfit.get()))
}

/// Reads a page of a query into `#[derive(TableEntity)]` structs, typed by the struct's schema at any
/// metadata level. The page is decoded straight into the structs ([`TableEntity::from_json_query`]); no
/// [`Entity`] is built.
///
/// # Errors
/// As [`query`], and [`ResponseErrorKind::Entity`] when an entity does not fit the struct.
pub fn query_as<T: TableEntity, B: AsRef<[u8]>>(response: &Response<B>) -> Result<QueryPage<T>, ResponseError> {
    expect(response, &[200], "200")?;
    let misfit = Cell::new(false);
    let visitor = || StructVisitor::<T> { inner: T::__Visitor::default(), etag: None, misfit: &misfit };
    let entities = decode_query_with(response.body().as_ref(), visitor).map_err(|e| read_error(e, misfit.get()))?;
    Ok(QueryPage { entities, continuation: Continuation::from_headers(response.headers()) })
}

/// The error of reading a struct: [`ResponseErrorKind::Entity`] when the struct refused the entity (`misfit`)
/// as [`TableEntity::from_entity`] would, [`ResponseErrorKind::Decode`] for a body that breaks the rules.
fn read_error(e: DecodeError, misfit: bool) -> ResponseError {
    if !misfit {
        return e.into();
    }
    match e.into_misfit() {
        Ok(e) => ResponseError::new(ResponseErrorKind::Entity(e)),
        Err(e) => e.into(),
    }
}

/// The derive's decoder of `T` as [`entity_as`] and [`query_as`] run it: the `ETag` header, when given, takes
/// the place of the body's `odata.etag`, and an error of the struct's own is recorded in `misfit`.
struct StructVisitor<'a, T: TableEntity> {
    inner: T::__Visitor,
    etag: Option<ETag>,
    misfit: &'a Cell<bool>,
}

impl<T: TableEntity> StructVisitor<'_, T> {
    fn misfit(&self, e: DecodeError) -> DecodeError {
        self.misfit.set(true);
        e
    }
}

impl<T: TableEntity> EntityVisitor for StructVisitor<'_, T> {
    type Value = T;

    fn edm_type(&self, property: &str) -> Option<EdmType> {
        self.inner.edm_type(property)
    }

    fn is_known_property(&self, property: &str) -> bool {
        self.inner.is_known_property(property)
    }

    fn begin(&mut self, mut system: SystemProperties) -> Result<(), DecodeError> {
        if let Some(etag) = self.etag.take() {
            system.etag = Some(etag);
        }
        self.inner.begin(system).map_err(|e| self.misfit(e))
    }

    fn property(&mut self, name: &str, value: EdmValue) -> Result<(), DecodeError> {
        self.inner.property(name, value).map_err(|e| self.misfit(e))
    }

    fn end(self) -> Result<T, DecodeError> {
        let misfit = self.misfit;
        self.inner.end().inspect_err(|_| misfit.set(true))
    }
}

/// What a get or a query reads into: the dynamic [`Entity`], or any `#[derive(TableEntity)]` struct (typed
/// by its schema at every metadata level).
///
/// ```
/// use table_model::response::ReadEntity;
/// use table_model::Entity;
/// let reply = http::Response::builder()
///     .status(200)
///     .header("ETag", "W/\"1\"")
///     .body(br#"{"PartitionKey":"p","RowKey":"r","N":1}"#.to_vec())?;
/// let entity = Entity::read_entity(&reply)?;
/// assert_eq!((entity.get::<i32>("N")?, entity.etag().map(|e| e.as_str())), (1, Some("W/\"1\"")));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait ReadEntity: Sized {
    /// Reads the answer to a get (see [`entity`] and [`entity_as`]).
    ///
    /// # Errors
    /// A service error, another status, or a body that does not decode into `Self`.
    fn read_entity<B: AsRef<[u8]>>(response: &Response<B>) -> Result<Self, ResponseError>;

    /// Reads a page of a query (see [`query`] and [`query_as`]).
    ///
    /// # Errors
    /// A service error, another status, or a body that does not decode into `Self`s.
    fn read_page<B: AsRef<[u8]>>(response: &Response<B>) -> Result<QueryPage<Self>, ResponseError>;
}

impl ReadEntity for Entity {
    fn read_entity<B: AsRef<[u8]>>(response: &Response<B>) -> Result<Self, ResponseError> {
        entity(response, None)
    }

    fn read_page<B: AsRef<[u8]>>(response: &Response<B>) -> Result<QueryPage<Self>, ResponseError> {
        query(response, None)
    }
}

impl<T: TableEntity> ReadEntity for T {
    fn read_entity<B: AsRef<[u8]>>(response: &Response<B>) -> Result<Self, ResponseError> {
        entity_as(response)
    }

    fn read_page<B: AsRef<[u8]>>(response: &Response<B>) -> Result<QueryPage<Self>, ResponseError> {
        query_as(response)
    }
}

/// Reads the answer to [`get_access_policy`](crate::TableService::get_access_policy): `200 OK` with the
/// table's stored access policies as a `SignedIdentifiers` XML document.
///
/// ```
/// use table_model::response;
/// use table_model::sas::TableSasPermissions;
/// let body = "<?xml version=\"1.0\" encoding=\"utf-8\"?><SignedIdentifiers><SignedIdentifier><Id>readers</Id>\
///             <AccessPolicy><Expiry>2026-11-23T00:00:00.0000000Z</Expiry><Permission>r</Permission>\
///             </AccessPolicy></SignedIdentifier></SignedIdentifiers>";
/// let reply = http::Response::builder().status(200).body(body.as_bytes())?;
/// let policies = response::access_policies(&reply)?;
/// assert_eq!(policies[0].id.as_str(), "readers");
/// assert_eq!(policies[0].policy.permissions, TableSasPermissions::READ);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// A service error, another status, or a body that is not such a document.
pub fn access_policies<B: AsRef<[u8]>>(response: &Response<B>) -> Result<Vec<SignedIdentifier>, ResponseError> {
    expect(response, &[200], "200")?;
    crate::sas::decode_signed_identifiers(response.body().as_ref())
        .map_err(|reason| ResponseError::new(ResponseErrorKind::Malformed { reason }))
}

/// Reads the answer to [`get_service_properties`](crate::TableService::get_service_properties): `200 OK` with
/// the service's logging, metrics and CORS rules as a `StorageServiceProperties` XML document. A part the
/// document does not carry is `None`; elements this crate does not know are skipped.
///
/// ```
/// use table_model::response;
/// use table_model::service_properties::RetentionPolicy;
/// let body = "<?xml version=\"1.0\" encoding=\"utf-8\"?><StorageServiceProperties><HourMetrics>\
///             <Version>1.0</Version><Enabled>true</Enabled><IncludeAPIs>false</IncludeAPIs><RetentionPolicy>\
///             <Enabled>true</Enabled><Days>3</Days></RetentionPolicy></HourMetrics><Cors/></StorageServiceProperties>";
/// let reply = http::Response::builder().status(200).body(body.as_bytes())?;
/// let properties = response::service_properties(&reply)?;
/// let hourly = properties.hour_metrics.unwrap();
/// assert_eq!((hourly.include_apis, hourly.retention_policy), (Some(false), RetentionPolicy::Days(3)));
/// assert_eq!((properties.logging, properties.cors), (None, Some(Vec::new())));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// A service error, another status, or a body that is not such a document (its error says what is wrong).
pub fn service_properties<B: AsRef<[u8]>>(response: &Response<B>) -> Result<ServiceProperties, ResponseError> {
    expect(response, &[200], "200")?;
    crate::service_properties::decode_service_properties(response.body().as_ref())
        .map_err(|reason| ResponseError::new(ResponseErrorKind::Malformed { reason }))
}

/// Reads the answer to [`set_service_properties`](crate::TableService::set_service_properties): `202 Accepted`.
///
/// ```
/// let reply = http::Response::builder().status(202).body(Vec::new())?;
/// assert!(table_model::response::accepted(&reply).is_ok());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// A service error or another status.
pub fn accepted<B: AsRef<[u8]>>(response: &Response<B>) -> Result<(), ResponseError> {
    expect(response, &[202], "202")
}

/// Reads the answer to [`get_service_stats`](crate::TableService::get_service_stats): `200 OK` with the
/// secondary's geo-replication as a `StorageServiceStats` XML document. A status this crate does not know is
/// kept ([`GeoReplicationStatus::Other`](crate::service_properties::GeoReplicationStatus::Other)); an empty
/// `LastSyncTime` is `None`.
///
/// ```
/// use table_model::response;
/// use table_model::service_properties::GeoReplicationStatus;
/// let body = "<?xml version=\"1.0\" encoding=\"utf-8\"?><StorageServiceStats><GeoReplication>\
///             <Status>live</Status><LastSyncTime>Mon, 23 Nov 2026 03:04:05 GMT</LastSyncTime>\
///             </GeoReplication></StorageServiceStats>";
/// let reply = http::Response::builder().status(200).body(body.as_bytes())?;
/// let geo = response::service_stats(&reply)?.geo_replication.unwrap();
/// assert_eq!(geo.status, GeoReplicationStatus::Live);
/// assert_eq!(geo.last_sync_time.unwrap().to_rfc3339(), "2026-11-23T03:04:05+00:00");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// A service error (`400` on a primary location), another status, or a body that is not such a document.
pub fn service_stats<B: AsRef<[u8]>>(response: &Response<B>) -> Result<ServiceStats, ResponseError> {
    expect(response, &[200], "200")?;
    crate::service_properties::decode_service_stats(response.body().as_ref())
        .map_err(|reason| ResponseError::new(ResponseErrorKind::Malformed { reason }))
}

/// Reads a page of a table listing: `200 OK` with `{"value": [{"TableName": ...}, ...]}` and the
/// continuation header.
///
/// # Errors
/// A service error, another status, or a body that is not such a list of valid table names.
pub fn tables<B: AsRef<[u8]>>(response: &Response<B>) -> Result<TablesPage, ResponseError> {
    expect(response, &[200], "200")?;
    let malformed = |reason: String| ResponseError::new(ResponseErrorKind::Malformed { reason });
    let json: serde_json::Value =
        serde_json::from_slice(response.body().as_ref()).map_err(|e| malformed(format!("not JSON: {e}")))?;
    let values = json["value"].as_array().ok_or_else(|| malformed("no `value` array".to_owned()))?;
    let mut tables = Vec::with_capacity(values.len());
    for (i, v) in values.iter().enumerate() {
        let name = v["TableName"].as_str().ok_or_else(|| malformed(format!("table {i} has no `TableName`")))?;
        let parsed = if name.starts_with('$') { TableName::analytics(name) } else { TableName::new(name) };
        tables.push(parsed.map_err(|e| malformed(format!("table {i}: {e}")))?);
    }
    Ok(TablesPage { tables, continuation: TableContinuation::from_headers(response.headers()) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::response::errors::ResponseErrorKind;

    fn reply(status: u16, headers: &[(&str, &str)], body: &str) -> Response<Vec<u8>> {
        let mut b = Response::builder().status(status);
        for (k, v) in headers {
            b = b.header(*k, *v);
        }
        b.body(body.as_bytes().to_vec()).unwrap()
    }

    #[test]
    fn the_service_date_is_read_in_rfc_1123_form_and_anything_else_is_malformed() {
        let date = |value: Option<&str>| {
            let headers: Vec<(&str, &str)> = value.map(|v| ("date", v)).into_iter().collect();
            query_date(&reply(200, &headers, r#"{"value":[]}"#))
        };
        let read = date(Some("Sun, 06 Nov 1994 08:49:37 GMT")).unwrap();
        assert_eq!(read.to_rfc3339(), "1994-11-06T08:49:37+00:00");
        for bad in [None, Some("1994-11-06T08:49:37Z"), Some("Sun, 06 Nov 1994 25:49:37 GMT"), Some("")] {
            let err = date(bad).unwrap_err();
            assert!(matches!(err.kind(), ResponseErrorKind::Malformed { .. }), "{bad:?}: {err}");
            assert!(err.to_string().contains("no `Date` header in RFC 1123's form"), "{err}");
        }
        // A refusal is the service's error, not a missing date.
        let refused = reply(404, &[("date", "Sun, 06 Nov 1994 08:49:37 GMT")], "");
        assert!(query_date(&refused).unwrap_err().service().is_some());
    }

    #[test]
    fn json_errors() {
        let r = reply(
            409,
            &[],
            r#"{"odata.error":{"code":"EntityAlreadyExists","message":{"lang":"en-US","value":"The specified entity already exists.\nRequestId:abc\nTime:2024"}}}"#,
        );
        let e = error(&r).unwrap();
        assert_eq!((e.status(), e.code()), (409, Some("EntityAlreadyExists")));
        assert!(e.message().starts_with("The specified entity already exists.\nRequestId:abc"));
        assert_eq!(e.operation_index(), None);
        assert!(e.is_conflict() && !e.is_not_found());
        assert_eq!(
            e.to_string(),
            "the service refused the request: 409 EntityAlreadyExists: The specified entity already exists."
        );
    }

    #[test]
    fn header_code_wins_and_xml_bodies_are_read() {
        let r = reply(
            403,
            &[("x-ms-error-code", "AuthorizationFailure")],
            "<?xml version=\"1.0\"?><Error><Code>Other</Code><Message>Server failed to authenticate the request.</Message></Error>",
        );
        let e = error(&r).unwrap();
        assert_eq!(e.code(), Some("AuthorizationFailure"));
        assert_eq!(e.message(), "Server failed to authenticate the request.");
        let r = reply(500, &[], "not json");
        let e = error(&r).unwrap();
        assert_eq!((e.code(), e.message()), (None, ""));
        assert_eq!(e.to_string(), "the service refused the request: 500");
        assert!(error(&reply(204, &[], "")).is_none());
    }

    #[test]
    fn batch_indices() {
        let index = |message: &str| {
            let body = serde_json::json!({"odata.error": {"code": "InvalidInput", "message": {"value": message}}});
            error(&reply(400, &[], &body.to_string())).unwrap().operation_index()
        };
        assert_eq!(named_operation("3:The specified entity already exists."), Some("3"));
        assert_eq!(index("3:The specified entity already exists."), Some(3));
        assert_eq!(index("0:x"), Some(0));
        assert_eq!(index("99:x"), Some(99));
        assert_eq!(index("007:x"), Some(7));
        // No batch holds an operation 100 or above; the batch reader refuses such an index (`batch/tests.rs`).
        assert_eq!(named_operation("999:x"), Some("999"));
        assert_eq!(index("100:x"), None);
        assert_eq!(index("999:x"), None);
        assert_eq!(index("12345:x"), None);
        assert_eq!(index(&format!("{}:x", "9".repeat(40))), None);
        for no_prefix in ["The batch: failed", ":x", "3", "3 :x", " 3:x", "-3:x", "+3:x", "3x:y", "", "٣:x"] {
            assert_eq!(named_operation(no_prefix), None, "{no_prefix:?}");
            assert_eq!(index(no_prefix), None, "{no_prefix:?}");
        }
        let r = reply(
            400,
            &[],
            r#"{"odata.error":{"code":"InvalidInput","message":{"lang":"en-US","value":"1:Bad Request - Error in query syntax."}}}"#,
        );
        let e = error(&r).unwrap();
        assert_eq!(e.operation_index(), Some(1));
        assert_eq!(
            e.to_string(),
            "the service refused the request: 400 InvalidInput (batch operation 1): 1:Bad Request - Error in query syntax."
        );
    }

    #[test]
    fn entity_takes_the_etag_header() {
        let body = r#"{"odata.metadata":"x","odata.etag":"W/\"old\"","PartitionKey":"p","RowKey":"r","Timestamp":"2024-01-02T03:04:05.1234567Z","N":1}"#;
        let r = reply(200, &[("ETag", "W/\"new\"")], body);
        let e = entity(&r, None).unwrap();
        assert_eq!(e.etag().unwrap().as_str(), "W/\"new\"");
        assert_eq!(e.get::<i32>("N").unwrap(), 1);
        assert_eq!(e.timestamp().unwrap().to_string(), "2024-01-02T03:04:05.1234567Z");
        let r = reply(200, &[], body);
        assert_eq!(entity(&r, None).unwrap().etag().unwrap().as_str(), "W/\"old\"");
        let r = reply(404, &[("x-ms-error-code", "ResourceNotFound")], "");
        assert!(entity(&r, None).unwrap_err().service().unwrap().is_not_found());
        let r = reply(200, &[], "{");
        assert!(matches!(entity(&r, None).unwrap_err().kind(), ResponseErrorKind::Decode(_)));
    }

    #[test]
    fn writes_need_an_etag() {
        assert_eq!(written(&reply(204, &[("etag", "W/\"1\"")], "")).unwrap().as_str(), "W/\"1\"");
        assert_eq!(written(&reply(204, &[], "")).unwrap_err().kind(), &ResponseErrorKind::MissingETag);
        assert_eq!(
            written(&reply(200, &[("etag", "x")], "")).unwrap_err().to_string(),
            "unexpected response: status 200, expected 201 or 204"
        );
        assert!(empty(&reply(204, &[], "")).is_ok());
        assert!(written(&reply(412, &[], "")).unwrap_err().service().unwrap().is_precondition_failed());
    }

    #[test]
    fn query_pages_and_continuations() {
        let body =
            r#"{"odata.metadata":"m","value":[{"PartitionKey":"p","RowKey":"1"},{"PartitionKey":"p","RowKey":"2"}]}"#;
        let r = reply(
            200,
            &[("x-ms-continuation-NextPartitionKey", "1!4!cA--"), ("x-ms-continuation-NextRowKey", "1!4!Mw--")],
            body,
        );
        let page = query(&r, None).unwrap();
        assert_eq!(page.entities.len(), 2);
        assert_eq!(page.entities[1].row_key(), "2");
        assert_eq!(page.continuation, Some(Continuation::new("1!4!cA--", Some("1!4!Mw--".to_owned()))));
        let r = reply(200, &[("x-ms-continuation-NextPartitionKey", "1!4!cA--")], r#"{"value":[]}"#);
        let page = query(&r, None).unwrap();
        assert!(page.entities.is_empty());
        assert_eq!(page.continuation.unwrap().next_row_key(), None);
        assert_eq!(query(&reply(200, &[], r#"{"value":[]}"#), None).unwrap().continuation, None);
    }

    #[cfg(feature = "derive")]
    #[derive(crate::TableEntity, Debug, PartialEq)]
    #[table(rename_all = "PascalCase")]
    struct Row {
        #[table(partition_key)]
        pk: String,
        #[table(row_key)]
        rk: String,
        big: i64,
        #[table(etag)]
        etag: Option<ETag>,
    }

    #[cfg(feature = "derive")]
    #[test]
    fn typed_reads_use_the_schema_and_the_etag_header() {
        // nometadata: the Int64 is a bare string; the schema types it.
        let body = r#"{"PartitionKey":"p","RowKey":"r","Big":"9007199254740993"}"#;
        let r = reply(200, &[("ETag", "W/\"7\"")], body);
        let row: Row = entity_as(&r).unwrap();
        assert_eq!(
            row,
            Row { pk: "p".into(), rk: "r".into(), big: 9_007_199_254_740_993, etag: Some(ETag::new("W/\"7\"")) }
        );
        let r = reply(200, &[("x-ms-continuation-NextPartitionKey", "x")], &format!(r#"{{"value":[{body}]}}"#));
        let page: QueryPage<Row> = query_as(&r).unwrap();
        assert_eq!((page.entities[0].big, page.continuation.is_some()), (9_007_199_254_740_993, true));
        let r = reply(200, &[], r#"{"PartitionKey":"p","RowKey":"r"}"#);
        let err = entity_as::<Row, _>(&r).unwrap_err();
        assert!(matches!(err.kind(), ResponseErrorKind::Entity(_)), "{err}");
        assert_eq!(err.to_string(), "the entity read does not fit: missing property `Big`");
    }

    /// The struct is decoded straight from the body: the `ETag` header wins over `odata.etag`, the struct's own
    /// refusals are [`ResponseErrorKind::Entity`] as through an `Entity`, and a body that breaks the rules is
    /// [`ResponseErrorKind::Decode`].
    #[cfg(feature = "derive")]
    #[test]
    fn typed_reads_decode_straight_from_the_body() {
        let body =
            r#"{"odata.etag":"W/\"body\"","PartitionKey":"p","RowKey":"r","Big@odata.type":"Edm.Int64","Big":"5"}"#;
        let row: Row = entity_as(&reply(200, &[("ETag", "W/\"header\"")], body)).unwrap();
        assert_eq!(row.etag, Some(ETag::new("W/\"header\"")));
        let row: Row = entity_as(&reply(200, &[], body)).unwrap();
        assert_eq!((row.big, row.etag), (5, Some(ETag::new("W/\"body\""))));
        let page: QueryPage<Row> = query_as(&reply(200, &[], &format!(r#"{{"value":[{body},{body}]}}"#))).unwrap();
        assert_eq!(
            page.entities.iter().map(|r| r.etag.as_ref().unwrap().as_str()).collect::<Vec<_>>(),
            ["W/\"body\""; 2]
        );

        // The struct's refusals: the errors `from_entity` gives for the same entity.
        #[derive(crate::TableEntity, Debug)]
        struct Small {
            #[table(partition_key)]
            pk: String,
            #[table(row_key)]
            rk: String,
            tiny: u8,
        }
        for body in [r#"{"PartitionKey":"p","RowKey":"r","tiny":300}"#, r#"{"PartitionKey":"p","RowKey":"r"}"#] {
            let r = reply(200, &[], body);
            let err = entity_as::<Small, _>(&r).unwrap_err();
            let through_entity = Small::from_entity(entity(&r, Some(&Small::SCHEMA)).unwrap()).unwrap_err();
            assert_eq!(err.kind(), &ResponseErrorKind::Entity(through_entity), "{body}");
        }
        let err =
            entity_as::<Small, _>(&reply(200, &[], r#"{"PartitionKey":"p","RowKey":"r","tiny":300}"#)).unwrap_err();
        assert_eq!(err.to_string(), "the entity read does not fit: property `tiny`: value 300 does not fit in `u8`");
        let r = reply(
            200,
            &[],
            r#"{"value":[{"PartitionKey":"p","RowKey":"r","Big":"1"},{"PartitionKey":"p","RowKey":"s"}]}"#,
        );
        let err = query_as::<Row, _>(&r).unwrap_err();
        assert_eq!(err.to_string(), "the entity read does not fit: missing property `Big`");
        // A body that breaks the rules is a decode error, with the entity's index.
        let r = reply(200, &[], r#"{"value":[{"PartitionKey":"p","RowKey":"r","Big":"1","Big":"2"}]}"#);
        let err = query_as::<Row, _>(&r).unwrap_err();
        assert!(matches!(err.kind(), ResponseErrorKind::Decode(e) if e.entity_index() == Some(0)), "{err}");
        let err = entity_as::<Row, _>(&reply(200, &[], "{")).unwrap_err();
        assert!(matches!(err.kind(), ResponseErrorKind::Decode(_)), "{err}");
    }

    #[test]
    fn table_pages() {
        let r = reply(
            200,
            &[("x-ms-continuation-NextTableName", "1!8!VGFibGU-")],
            r#"{"odata.metadata":"m","value":[{"TableName":"Orders"},{"odata.type":"x","TableName":"$MetricsCapacityBlob"}]}"#,
        );
        let page = tables(&r).unwrap();
        assert_eq!(page.tables[0].as_str(), "Orders");
        assert!(page.tables[1].is_analytics());
        assert_eq!(page.continuation.unwrap().next_table_name(), "1!8!VGFibGU-");
        let r = reply(200, &[], r#"{"value":[{"TableName":"a-b"}]}"#);
        assert!(tables(&r).unwrap_err().to_string().starts_with("invalid response body: table 0: invalid table name"));
    }
}
