//! The async client (feature `client`, on by default): [`TableServiceClient`] and [`TableClient`] send the
//! requests of the [`TableService`](crate::TableService) builders through the official Azure SDK's core,
//! `azure_core` 1.x: its pipeline, retry options, transport (reqwest with rustls, on tokio), logging and
//! credentials, so the options and credentials a user passes to the official blob, queue or Cosmos crates work
//! here too.
//!
//! The default transport is reqwest set up as `azure_core`'s own default (the same timeouts, no redirects,
//! gzip and deflate), with direct conversions between the two crates' types; a transport given in
//! `ClientOptions::transport` is used as it is. See `BENCHMARKS.md` for what the client costs over a bare
//! reqwest call.
//!
//! The shape is the official SDK's: `TableServiceClient::new(url, credential, options)`, a child client per
//! table, `async fn`s that take an optional options struct. What the official SDK does not have, this one
//! adds: Shared Key and Shared Key Lite (so Azurite works over plain HTTP), SAS, typed entities, queries as
//! streams that follow continuations with a resumable token, transactions, and errors with a typed
//! [`ErrorCode`](crate::ErrorCode).
//!
//! ```no_run
//! use futures::TryStreamExt as _;
//! use table_model::client::TableServiceClient;
//! use table_model::filter::Filter;
//! use table_model::{Entity, PartitionKey, Query, RowKey, TableName};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let service = TableServiceClient::from_connection_string("UseDevelopmentStorage=true", None)?;
//! let people = service.create_table_if_not_exists(&TableName::from_static("People"), None).await?;
//! people.insert(&Entity::new(PartitionKey::new("eu")?, RowKey::new("ada")?).with("Age".parse()?, 36)?, None).await?;
//!
//! let mut adults = people.query::<Entity>(&Query::new().filter(Filter::property("Age").ge(18)), None)?;
//! while let Some(person) = adults.try_next().await? {
//!     println!("{} is {}", person.row_key(), person.get::<i32>("Age")?);
//! }
//! # Ok(())
//! # }
//! ```
//!
//! Retries are `azure_core`'s: exponential back-off with jitter on 408, 429, 500, 502, 503 and 504 and on
//! connection errors, honouring `Retry-After` and `x-ms-retry-after-ms`; set them in
//! [`TableServiceClientOptions::client_options`].
//!
//! Layer: client.

mod bulk;
mod core;
mod credential;
mod error;
mod location;
mod matching;
mod options;
pub mod outcome;
mod pager;
mod ranges;
mod read_ahead;
mod read_back;
mod service;
mod table;
pub mod trace;
mod transport;

/// The `azure_core` this client is built on, for its options, credentials and errors, whatever version a
/// dependent crate names.
pub use azure_core;
pub use bulk::{
    BulkEntity, BulkError, BulkFailure, BulkOperation, BulkOptions, BulkProgress, BulkReport, BulkSlots,
    BulkTransaction, ByRef, ByValue, FailureCause, ProgressFn, DEFAULT_CONCURRENCY, PARTITION_TARGET,
};
pub use credential::TableCredential;
pub use error::{Error, ErrorKind, OutcomeUnknown};
pub use location::{Location, LocationMode};
pub use matching::{DecideError, MatchOptions, MatchReport, MatchWrite, PageDone, PageFn, RangeCursor, RangeStop};
pub use options::{ListTablesOptions, QueryOptions, RequestOptions, TableServiceClientOptions, UpdateOptions};
pub use pager::{QueryPager, QueryPages, RawPages, TablePager};
pub use ranges::PlanOptions;
pub use read_ahead::ReadAhead;
pub use service::TableServiceClient;
pub use table::TableClient;
pub use transport::{default_http_client, tls_config};
