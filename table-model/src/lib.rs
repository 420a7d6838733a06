//! # table-model
//!
//! The Azure Table service data model for Rust, checked before anything is sent. Table names, property
//! names, PartitionKeys and RowKeys are validated newtypes; property values are [`EdmValue`]s whose limits are
//! part of their types; an [`Entity`] refuses a 253rd property or a byte past 1 MiB. The rules are those of
//! Azure Table Storage, the Cosmos DB Table API and the Azurite emulator, as the project's `SPEC.md` states them.
//!
//! No other SDK checks these rules on the client: their users learn them from `400 Bad Request` in
//! production. With `table-model`, an invalid name or key is an error where it is made, naming the rule,
//! the character and its position.
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
//! assert_eq!(err.to_string(), "invalid row key: character `#` at index 4 is not allowed");
//! # Ok(())
//! # }
//! ```
//!
//! ## Features
//! - `serde` (default): `Serialize`/`Deserialize` for the validated newtypes. Deserializing validates, so it
//!   cannot build an invalid value.
//! - `derive` (default): `#[derive(TableEntity)]`, re-exported from `table-model-derive`.
#![deny(missing_docs, missing_debug_implementations)]

extern crate self as table_model;

#[cfg(feature = "http")]
pub mod auth;
#[cfg(feature = "http")]
mod batch;
#[cfg(feature = "http")]
mod connection;
mod datetime;
mod edm;
mod entity;
mod error;
pub mod filter;
pub mod json;
pub mod key;
pub mod limits;
mod name;
mod property;
mod query;
#[cfg(feature = "http")]
mod request;
#[cfg(feature = "http")]
pub mod response;
mod validated;

#[cfg(feature = "http")]
pub use batch::Batch;
#[cfg(feature = "http")]
pub use connection::{
    AccountKey, ConnectionString, Credential, Endpoint, SasToken, DEVELOPMENT_ACCOUNT, DEVELOPMENT_ACCOUNT_KEY,
    DEVELOPMENT_TABLE_ENDPOINT,
};
pub use datetime::DateTime;
pub use edm::{EdmBinary, EdmString, EdmType, EdmValue, FromEdm, IntoEdm};
pub use entity::{ETag, Entity};
#[cfg(feature = "http")]
pub use error::{
    BatchError, BatchErrorKind, RequestError, RequestErrorKind, ResponseError, ResponseErrorKind, ServiceError,
};
pub use error::{ConnectionError, ConnectionErrorKind, FilterError, FilterErrorKind, QueryError, QueryErrorKind};
pub use error::{
    DecodeError, DecodeErrorKind, EncodeError, EncodeErrorKind, EntityError, EntityErrorKind, KeyError, KeyErrorKind,
    KeyKind, PropertyNameError, PropertyNameErrorKind, TableNameError, TableNameErrorKind, UnknownEdmType, ValueError,
    ValueErrorKind,
};
pub use json::{decode_entity, decode_query, encode_entity, MetadataLevel, TypeHints};
pub use key::{PartitionKey, RowKey};
pub use name::{PropertyName, TableName};
pub use property::Property;
pub use query::Query;
#[cfg(feature = "http")]
pub use request::{
    IfMatch, TableService, UpdateMode, DATA_SERVICE_VERSION, JSON_CONTENT_TYPE, MAX_DATA_SERVICE_VERSION, X_MS_VERSION,
};
