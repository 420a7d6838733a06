//! # table-model
//!
//! The Azure Table service data model for Rust, checked before anything is sent. Table names, property
//! names, PartitionKeys and RowKeys are validated newtypes; property values are [`EdmValue`]s whose limits are
//! part of their types; an [`Entity`] refuses a 253rd property or a byte past 1 MiB. The rules are those of
//! Azure Table Storage, the Cosmos DB Table API and the Azurite emulator, as `docs/rules.md` states them.
//!
//! No other SDK checks these rules on the client: their users learn them from `400 Bad Request` in
//! production. With `table-model`, an invalid name or key is an error where it is made, naming the value,
//! the rule, the character and its position.
//!
//! ## Getting started
//!
//! ```
//! use table_model::{Entity, PartitionKey, RowKey, TableName};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let table: TableName = "Orders".parse()?;
//! let mut order = Entity::new(PartitionKey::new("customer-42")?, RowKey::new("0001")?);
//! order.insert("Total".parse()?, 99.5)?;
//! order.insert("Quantity".parse()?, 3)?;
//! assert_eq!(order.get::<f64>("Total")?, 99.5);
//! assert_eq!(table, "orders".parse::<TableName>()?); // table names ignore case
//!
//! // Invalid input never gets as far as a request:
//! let err = RowKey::new("2024#05").unwrap_err();
//! assert_eq!(err.to_string(), "invalid row key \"2024#05\": character `#` at index 4 is not allowed");
//! # Ok(())
//! # }
//! ```
//!
//! ## From a struct to the service and back
//!
//! Derive [`TableEntity`](trait@TableEntity) for a struct: its names, keys and types are checked when it
//! compiles. The [`client`] (feature `client`, on by default) stores it and queries it back, on `azure_core`
//! 1.x, the core of the official Rust Azure SDK, against Azure Table Storage, the Cosmos DB Table API or Azurite.
//!
#![cfg_attr(
    all(feature = "client", feature = "derive"),
    doc = r#"
```no_run
use futures::TryStreamExt as _;
use table_model::client::TableServiceClient;
use table_model::{filter, ETag, ErrorCode, Query, TableEntity, TableName, UpdateMode};

// 1. A struct: PartitionKey from `tenant`, RowKey from `at` written so the newest event sorts first.
#[derive(TableEntity, Debug)]
#[table(rename_all = "PascalCase")]
struct Event {
    #[table(partition_key)]
    tenant: String,
    #[table(row_key, reverse_chronological)]
    at: chrono::DateTime<chrono::Utc>,
    action: String,
    #[table(etag)]
    etag: Option<ETag>, // set when read; the precondition of an update
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // 2. A client: a connection string, or `TableServiceClient::new(url, credential, options)` with an
    //    AccountKey, a SasToken or an azure_identity credential (Microsoft Entra ID).
    let service = TableServiceClient::from_connection_string("UseDevelopmentStorage=true", None)?;
    let log = service.create_table_if_not_exists(&TableName::new("AuditLog")?, None).await?;

    // 3. Stored: encoded straight from the fields, every limit checked before sending.
    let event = Event { tenant: "acme".into(), at: chrono::Utc::now(), action: "login".into(), etag: None };
    log.insert(&event, None).await?;

    // 4. Queried back: the newest ten with one request, or every page as a stream.
    let acme = Query::new().filter(filter::PARTITION_KEY.eq("acme"));
    let mut newest: Vec<Event> = log.query_first(&acme, 10, None).await?;
    let all: Vec<Event> = log.query(&acme, None)?.try_collect().await?;

    // 5. Updated under the ETag it was read with; a concurrent change is one match arm.
    newest[0].action = "login (verified)".into();
    match log.update(&newest[0], UpdateMode::Merge, None).await {
        Err(e) if e.error_code() == Some(ErrorCode::UpdateConditionNotSatisfied) => println!("changed meanwhile"),
        other => { other?; }
    }
    println!("{} events", all.len());
    Ok(())
}
```
"#
)]
//!
//! ## Talking to the service without the client
//!
//! [`TableService`] builds a signed `http::Request` for every operation and [`response`] reads the
//! `http::Response`; send them with any HTTP client. Queries use typed [`filter`]s, and batches are checked
//! as they are built ([`Batch`]).
//!
//! ```
//! use table_model::filter;
//! use table_model::{response, Entity, IfMatch, PartitionKey, Query, RowKey, TableName, TableService, UpdateMode};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let service = TableService::from_connection_string("UseDevelopmentStorage=true")?;
//! let table = TableName::new("Orders")?;
//! let order = Entity::new(PartitionKey::new("customer-42")?, RowKey::new("O'Brien")?).with("Total".parse()?, 99.5)?;
//!
//! let insert = service.insert(&table, &order)?; // POST http://127.0.0.1:10002/devstoreaccount1/Orders
//! let query = service.query(&table, &Query::new().filter(filter::PARTITION_KEY.eq("customer-42")).top(10), None)?;
//! assert_eq!(query.uri().query(), Some("$filter=PartitionKey%20eq%20%27customer-42%27&$top=10"));
//!
//! // ... send `insert` with any client; its answer carries the new ETag:
//! let reply = http::Response::builder().status(204).header("ETag", "W/\"1\"").body(Vec::new())?;
//! let etag = response::written(&reply)?;
//! // An update states its precondition: this ETag, or IfMatch::Any. Without one it is an upsert, by name.
//! let update = service.update(&table, &order, UpdateMode::Merge, IfMatch::ETag(etag))?;
//! assert_eq!(update.headers()["if-match"], "W/\"1\"");
//! # let _ = (insert, update);
//! # Ok(())
//! # }
//! ```
//!
//! ## Sharing access
//!
//! The account owner hands out shared access signatures made by [`sas::TableSas`] (some operations on one
//! table, optionally within a range of keys, or under a stored access policy of the table) and
//! [`sas::AccountSas`] (the account's tables and entities). Each signs a [`SasToken`] with the account key and
//! gives a URL that the client's `TableServiceClient::new` takes as it is. A table's stored access policies are
//! read and replaced with [`TableService::get_access_policy`] and [`TableService::set_access_policy`] (or the
//! client's methods of the same names).
//!
//! ```
//! use table_model::sas::{TableSas, TableSasPermissions};
//! use table_model::{AccountKey, Endpoint};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let expiry = chrono::Utc::now() + chrono::Duration::hours(1);
//! let sas = TableSas::new("AuditLog".parse()?).permissions(TableSasPermissions::READ).expiry(expiry);
//! let endpoint = Endpoint::parse("https://acme.table.core.windows.net")?;
//! let url = sas.url(&endpoint, &AccountKey::from_base64("a2V5")?)?;
//! assert!(url.starts_with("https://acme.table.core.windows.net?se="));
//! # Ok(())
//! # }
//! ```
//!
//! ## Service properties
//!
//! The account's Storage Analytics logging, metrics and CORS rules are read and set, in part or whole, with
//! [`TableService::get_service_properties`] and [`TableService::set_service_properties`] (the types are in
//! [`service_properties`]); [`TableService::get_service_stats`] asks the secondary location for its
//! geo-replication status. The Cosmos DB Table API serves none of them: requests for it are refused with
//! [`RequestErrorKind::NotSupported`].
//!
//! ## Features
//! - `serde` (default): `Serialize`/`Deserialize` for the validated newtypes. Deserializing validates, so it
//!   cannot build an invalid value.
//! - `derive` (default): `#[derive(TableEntity)]`, re-exported from `table-model-derive`.
//! - `client` (default): the async [`client`] on `azure_core` 1.x (reqwest with rustls, tokio). Implies `http`.
//! - `http` (default): the protocol layer: [`TableService`], [`Endpoint`]s and [`ConnectionString`]s,
//!   Shared Key signing ([`auth`]), shared access signatures ([`sas`]), [`Batch`]es and [`response`]
//!   parsing, on the `http` crate's types. The [`filter`] builder and [`Query`] do not need it.
// On docs.rs (`--cfg docsrs`, nightly): each feature-gated item says which feature it needs (`doc_cfg`, which
// took in `doc_auto_cfg`: the `#[cfg(feature = ..)]` of an item is shown without a `#[doc(cfg(..))]` of its own).
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(missing_docs, missing_debug_implementations)]
// The docs link the client, the derive and the protocol layer wherever they are named; built with some of those
// features off (docs.rs and CI build the defaults), the links to the missing ones have nothing to point at.
#![cfg_attr(not(all(feature = "client", feature = "derive", feature = "http")), allow(rustdoc::broken_intra_doc_links))]

extern crate self as table_model;

// The modules read bottom up, in five layers; each says its own in its header (`Layer: ...`), and
// `tests/test_module_graph.rs` checks that no module uses a layer above its own and that no modules import each
// other in a circle.
// - rules: the service's limits (the rules themselves are the `table-model-rules` crate);
// - model: the values that cannot be invalid: names, keys, EDM values, entities, typed property handles;
// - wire: the service's formats and vocabularies: JSON bodies, `$filter` and query options, XML and the service
//   properties it carries, percent-encoding, continuation tokens, error codes, and the `TableEntity` traits
//   (with `__private`, what the derive's generated code calls);
// - requests (feature `http`): endpoints and credentials, signing, shared access signatures, the request
//   builders, batches and the response readers;
// - client (feature `client`): the async client on `azure_core`.
#[cfg(feature = "http")]
pub mod auth;
#[cfg(feature = "http")]
mod batch;
#[cfg(feature = "client")]
pub mod client;
#[cfg(feature = "http")]
mod connection;
// Without `http`, the connection module is its error alone, which the crate exports in every build.
#[cfg(not(feature = "http"))]
mod connection {
    pub(crate) mod error;
}
#[cfg(feature = "http")]
mod continuation;
mod edm;
mod entity;
#[cfg(feature = "http")]
mod error_code;
pub mod filter;
pub mod json;
pub mod key;
pub mod limits;
mod name;
#[cfg(feature = "http")]
mod percent;
mod property;
mod query;
#[cfg(feature = "http")]
mod request;
#[cfg(feature = "http")]
pub mod response;
#[cfg(feature = "http")]
pub mod sas;
#[cfg(feature = "http")]
pub mod service_properties;
mod table_entity;
mod validated;
#[cfg(feature = "http")]
mod xml;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;

#[cfg(feature = "http")]
pub use batch::Batch;
pub use connection::error::{ConnectionError, ConnectionErrorKind};
#[cfg(feature = "http")]
pub use connection::{
    AccountKey, ConnectionString, Credential, Endpoint, SasToken, ServiceKind, COSMOS_EMULATOR_ACCOUNT_KEY,
    DEVELOPMENT_ACCOUNT, DEVELOPMENT_ACCOUNT_KEY, DEVELOPMENT_TABLE_ENDPOINT,
};
pub use edm::datetime::{DateTime, IntoDateTime};
pub use edm::error::{UnknownEdmType, ValueError, ValueErrorKind};
pub use edm::{EdmBinary, EdmString, EdmType, EdmValue, FromEdm, IntoEdm};
pub use entity::error::{EntityError, EntityErrorKind};
pub use entity::{ETag, Entity};
#[cfg(feature = "http")]
pub use error_code::ErrorCode;
pub use filter::error::{FilterError, FilterErrorKind, FilterParseError, FilterParseErrorKind};
pub use json::error::{DecodeError, DecodeErrorKind, EncodeError, EncodeErrorKind};
pub use json::{decode_entity, decode_query, encode_entity, MetadataLevel, TypeHints};
pub use key::error::{KeyDecodeError, KeyDecodeErrorKind, KeyError, KeyErrorKind, KeyKind};
pub use key::{PartitionKey, RowKey};
pub use name::error::{PropertyNameError, PropertyNameErrorKind, TableNameError, TableNameErrorKind};
pub use name::{PropertyName, TableName};
pub use property::Property;
pub use query::error::{QueryError, QueryErrorKind};
pub use query::Query;
#[cfg(feature = "http")]
pub use request::error::{BatchError, BatchErrorKind, RequestError, RequestErrorKind};
#[cfg(feature = "http")]
pub use request::{
    EncodedEntity, IfMatch, MergeVerb, TableService, UpdateMode, WriteEntity, DATA_SERVICE_VERSION, JSON_CONTENT_TYPE,
    MAX_DATA_SERVICE_VERSION, X_MS_VERSION,
};
#[cfg(feature = "http")]
pub use response::errors::{ResponseError, ResponseErrorKind, ServiceError};
#[cfg(feature = "http")]
pub use sas::error::{SasError, SasErrorKind};
#[cfg(feature = "http")]
pub use service_properties::error::{ServicePropertiesError, ServicePropertiesErrorKind};
pub use table_entity::{
    ETagField, EdmField, FieldSchema, KeyEncoding, KeyField, KeySchema, KeySource, NamedTable, PropertySchema,
    ReverseChronologicalKey, Schema, SchemaProperty, TableEntity, TableEnum, TableProperties, TimestampField,
    UniqueTimeKey,
};
/// Derives [`TableEntity`](trait@TableEntity) for a struct with named fields.
///
/// ```
/// use table_model::{TableEntity, TableEnum, TableProperties};
///
/// #[derive(TableEnum, Debug, PartialEq)]
/// enum Status { Pending, Shipped }
///
/// #[derive(TableProperties, Debug, PartialEq)]
/// #[table(rename_all = "PascalCase")]
/// struct Address { city: String, zip: String }
///
/// #[derive(TableEntity, Debug, PartialEq)]
/// #[table(name = "Orders", rename_all = "PascalCase")]
/// struct Order {
///     #[table(partition_key)]
///     customer: String,
///     #[table(row_key, reverse_chronological)]
///     placed: chrono::DateTime<chrono::Utc>,
///     total: f64,
///     #[table(rename = "Qty")]
///     quantity: i32,
///     note: Option<String>,
///     status: Status,
///     #[table(flatten, prefix = "Ship")]
///     shipping: Address,
///     #[table(json)]
///     tags: Vec<String>,
///     #[table(default)]
///     added_later: i64,
///     #[table(edm = "Int64")]
///     small_but_int64: i32,
///     #[table(timestamp)]
///     ts: Option<table_model::DateTime>,
///     #[table(etag)]
///     etag: Option<table_model::ETag>,
///     #[table(skip)]
///     cache: Vec<u8>,
/// }
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let order = Order {
/// #     customer: "c1".into(), placed: chrono::DateTime::from_timestamp(1_700_000_000, 0).unwrap(), total: 1.5,
/// #     quantity: 2, note: None, status: Status::Shipped,
/// #     shipping: Address { city: "Oslo".into(), zip: "0150".into() }, tags: vec!["a".into()], added_later: 0,
/// #     small_but_int64: 7, ts: None, etag: None, cache: vec![],
/// # };
/// # let entity = order.to_entity()?;
/// # assert_eq!(entity.get::<String>("ShipCity")?, "Oslo");
/// # assert_eq!(entity.value("SmallButInt64"), Some(&table_model::EdmValue::Int64(7)));
/// # assert_eq!(Order::from_entity(entity)?, order);
/// # Ok(())
/// # }
/// ```
///
/// # Struct attributes
/// - `#[table(name = "Orders")]`: the table, checked as a table name at compile time; in [`Schema::table_name`]
///   and [`NamedTable::TABLE_NAME`], which the client's `table_for::<Order>()` opens.
/// - `#[table(rename_all = "...")]`: property names from field names by serde's rules: `"lowercase"`,
///   `"UPPERCASE"`, `"PascalCase"`, `"camelCase"`, `"snake_case"`, `"SCREAMING_SNAKE_CASE"`, `"kebab-case"`,
///   `"SCREAMING-KEBAB-CASE"` (the kebab forms give names with `-`, which the service refuses: a compile error).
/// - `#[table(partition_key = "...")]`, `#[table(row_key = "...")]`: a constant key instead of a key field,
///   checked at compile time; reading an entity with another key is an error.
/// - `#[table(deny_unknown_properties)]`: reading an entity with a property the struct does not have is an
///   error (by default such properties are ignored).
/// - `#[table(service = "...")]`: which service's rules the property names are checked against at compile
///   time (see [Services](#services)): `"storage"` (the default), `"cosmos"` or `"portable"`; in
///   [`Schema::rules`].
/// - `#[table(crate = "path")]`: where `table_model` is, for crates that re-export it.
///
/// # Field attributes
/// - `#[table(partition_key)]`, `#[table(row_key)]`: the key fields; exactly one of each (or a constant). The
///   field type implements [`KeyField`]: `String`, [`PartitionKey`], [`RowKey`], integers (zero-padded so that
///   keys sort as numbers), `uuid::Uuid`, [`DateTime`] or `chrono::DateTime<Utc>` (oldest first), an enum
///   deriving [`TableEnum`](trait@TableEnum). Reading parses the key back into the field type.
/// - `#[table(reverse_chronological)]` with `row_key`: an instant written so that the newest sorts first.
/// - `#[table(unique)]` with `row_key` (and `reverse_chronological` or not) or `partition_key`, on a
///   [`DateTime`] or `chrono::DateTime<Utc>` field: the key gets a tie-breaker, `{ticks:019}-{n:010}`, so that
///   events of the same 100 ns tick get different keys (see [Unique time keys](#unique-time-keys)).
/// - `#[table(tie_breaker)]` on a `u32` field, with a `unique` key: the key's tie-breaker, written into the key
///   and read back from it (not a property).
/// - `#[table(rename = "Name")]`: the property name, checked at compile time.
/// - `#[table(skip)]`: not stored; read as `Default::default()` (or `default = "path"`).
/// - `#[table(default)]` or `#[table(default = "path::to::fn")]`: an absent property reads as the default
///   instead of being an error (for properties added after rows were written).
/// - `#[table(json)]`: any `serde` type, stored as a JSON string property. A value that serializes to JSON
///   `null` (`None`) is not stored, and an absent property reads as `None` for a type that accepts `null`.
/// - `#[table(flatten)]`, `#[table(flatten, prefix = "Ship")]`: the fields of a struct deriving
///   [`TableProperties`](trait@TableProperties) stored as properties of this entity, each name prefixed (by
///   default, with the field name in PascalCase). The joined names are checked at compile time too.
/// - `#[table(edm = "Int64")]`: store a field as a wider EDM type (an `Edm.Int32` type as `Int64` or `Double`).
/// - `#[table(timestamp)]`: an `Option<DateTime>` (or `Option<chrono::DateTime<Utc>>`) that receives the
///   server-set `Timestamp` of an entity that was read; never written.
/// - `#[table(etag)]`: an `Option<ETag>` that receives the entity's ETag; never written.
///
/// # Services
/// Every struct is checked against Azure Table Storage's rules (Azurite's too). Cosmos DB for Table adds its
/// own (`docs/rules.md` §13): it reserves the property names `ID`, `rid`, `etag` and `ResourceId` in any case.
/// `#[table(service = "cosmos")]` checks the names for Cosmos DB as well, and `#[table(service = "portable")]`
/// for both services at once (the intersection of their rules: today the same checks as `"cosmos"`). The name
/// checked is the one stored, after `rename` and `rename_all`, flattened names included, with
/// [`RuleSet::check_property_name`], the function that checks names at run time too; the 252-property limit
/// of Azure Table Storage applies to all three. Keys are values, checked when a request is made.
///
/// ```compile_fail
/// #[derive(table_model::TableEntity)]
/// #[table(service = "cosmos", rename_all = "PascalCase")]
/// struct Device {
///     #[table(partition_key)]
///     site: String,
///     #[table(row_key)]
///     serial: String,
///     id: u32, // invalid property name for Cosmos DB for Table: matches the reserved name `ID` (...)
/// }
/// ```
///
/// # Unique time keys
/// A time key alone collides when two entities of a partition share a tick. With `#[table(unique)]` the key is
/// [`key::chronological_unique`] (oldest first) or, with `reverse_chronological`,
/// [`key::reverse_chronological_unique`] (newest first): the instant, then a `u32` tie-breaker. Keys sort by
/// instant, then by tie-breaker, and [`key::chronological_range`] / [`key::reverse_chronological_range`]
/// bound them by time. Reading parses the instant back and ignores the tie-breaker; a key in another form
/// (such as a plain 19-digit one) is an error naming the key.
///
/// The key of a struct value never changes: `to_entity`, `to_json` and every request of the same value give
/// the same key, so a struct that was inserted can be read, updated or deleted by the same struct. A number
/// drawn at each write could not do that, so the tie-breaker comes from the value itself:
/// - by default, a 32-bit hash of the stored properties (their JSON as written, fixed across processes and
///   releases). Values with different properties get different keys but for a chance of 1 in 2<sup>32</sup>
///   per pair of one tick; values with equal properties share the key (a retried insert gets `409 Conflict`
///   rather than storing a duplicate); and changing a property changes the key, so this suits entities that
///   are written once (logs): an update of a changed value would address another entity. A `#[table(json)]`
///   field must then serialize the same way each time (a `BTreeMap`, not a `HashMap`);
/// - with a `#[table(tie_breaker)] seq: u32` field, that field: fill it from [`key::next_tie_breaker`], a
///   process-wide counter that never repeats within a process (2<sup>32</sup> values) and starts at a random
///   point, or from a sequence of your own. The key then survives changes to the properties (use this form for
///   entities that are updated), and equal values with different tie-breakers are different entities.
///
/// ```
/// use table_model::{key, DateTime, RowKey, TableEntity};
///
/// #[derive(TableEntity, Debug, PartialEq)]
/// struct Event {
///     #[table(partition_key)]
///     source: String,
///     #[table(row_key, reverse_chronological, unique)]
///     at: chrono::DateTime<chrono::Utc>,
///     message: String,
/// }
///
/// #[derive(TableEntity, Debug, PartialEq)]
/// struct Audit {
///     #[table(partition_key)]
///     user: String,
///     #[table(row_key, reverse_chronological, unique)]
///     at: DateTime,
///     #[table(tie_breaker)]
///     seq: u32,
///     action: String,
/// }
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let at = chrono::DateTime::from_timestamp(1_700_000_000, 0).unwrap();
/// let started = Event { source: "api".into(), at, message: "started".into() };
/// let stopped = Event { source: "api".into(), at, message: "stopped".into() };
/// let (a, b) = (started.to_entity()?, stopped.to_entity()?);
/// assert_ne!(a.row_key(), b.row_key()); // the same tick, two keys
/// assert_eq!(a.row_key(), started.to_entity()?.row_key()); // one key per value
/// assert!(a.row_key().starts_with("2517023007999999999-"));
/// assert_eq!(Event::from_entity(a)?, started);
///
/// let audit = Audit { user: "u1".into(), at: DateTime::UNIX_EPOCH, seq: key::next_tie_breaker(), action: "login".into() };
/// let entity = audit.to_entity()?;
/// assert_eq!(*entity.row_key(), key::reverse_chronological_unique::<RowKey, _>(DateTime::UNIX_EPOCH, audit.seq));
/// assert_eq!(Audit::from_entity(entity)?, audit);
/// # Ok(())
/// # }
/// ```
///
/// # Field types
/// As `docs/rules.md` §3.1: `i32`, `i16`, `i8`, `u16`, `u8` as `Edm.Int32`; `i64`, `u32` as `Edm.Int64`; `f64`,
/// `f32` as `Edm.Double`; `bool`; `String`; `Vec<u8>`; `uuid::Uuid`; `chrono::DateTime<Utc>`; [`DateTime`];
/// [`EdmValue`] for a property of any type; enums deriving [`TableEnum`](trait@TableEnum); `Option` of these
/// (`None` is not stored; an absent property reads as `None`). Anything else, such as `u64`, `usize`, `i128` or
/// a map, is a compile error on the field's type that suggests `#[table(json)]` or `#[table(flatten)]`.
///
/// # Compile-time checks
/// Every property name after renaming (the C# identifier and XML rules, 255 UTF-16 units, no system name in
/// any case, and no name the struct's service reserves), no two alike, at most 252 properties, flattened ones included; exactly one partition key and one
/// row key; the table name and constant keys; `unique` only on a key field, `tie_breaker` only with a `unique`
/// key; unknown attributes (with a suggestion), duplicate or conflicting ones. The names joined from flattened
/// groups and the `edm` overrides are checked by `const` evaluation where the struct is defined, so `cargo check`
/// reports them too; in a generic struct, a check that depends on a parameter (a flattened group of type
/// `Part<T>`, an override on a field of type `T`) is made for each instantiation a build compiles. All errors of
/// a struct are reported in one build, with the messages the runtime checks give:
///
/// ```compile_fail
/// #[derive(table_model::TableEntity)]
/// #[table(rename_all = "kebab-case")]
/// struct Order {
///     #[table(partition_key)]
///     customer: String,
///     #[table(row_key)]
///     id: u32,
///     unit_price: f64, // invalid property name: character `-` at index 4 is not allowed; ...
/// }
/// ```
#[cfg(feature = "derive")]
pub use table_model_derive::TableEntity;
/// Derives [`TableEnum`](trait@TableEnum) for a fieldless enum, stored as its variant names: `rename_all` on the
/// enum and `rename` on a variant choose them.
#[cfg(feature = "derive")]
pub use table_model_derive::TableEnum;
/// Derives [`TableProperties`](trait@TableProperties): a struct whose fields a [`TableEntity`](trait@TableEntity)
/// embeds with `#[table(flatten)]`. Takes the field attributes of `#[derive(TableEntity)]` except the keys,
/// `timestamp` and `etag`, and the struct attribute `rename_all`.
#[cfg(feature = "derive")]
pub use table_model_derive::TableProperties;
/// Which service's rules are checked: re-exported from the rules crate (`docs/rules.md` §13.1).
pub use table_model_rules::{RuleSet, RuleSetError, RuleSetErrorKind};

// The README's code, compiled as doc tests (the "Example" block run, "Use it" built, the compile error checked),
// so that it cannot drift from the crate. Its "Use it" block runs against Azurite in the workspace's Azurite
// suite (`tests/azurite/readme.rs`). `table-model/README.md` is a link to the workspace's README, which the
// published crate carries as its own.
#[cfg(all(doctest, feature = "client", feature = "derive"))]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
