//! SQL over Azure Tables: [`AzureTable`], an Apache DataFusion [`TableProvider`] for a table of the Azure Table
//! service (Azure Storage, Cosmos DB's Table API, Azurite), with its filters, projection and `LIMIT` pushed to
//! the service and its scan read side by side in key ranges.
//!
//! - **Schema.** Inferred from a sample of entities ([`AzureTable::infer`], the inference of `tablectl schema`,
//!   [`table_model_arrow::infer`]), from a derived struct ([`AzureTable::for_entity`]) or declared by hand
//!   ([`AzureTable::new`]); the EDM to Arrow mapping is
//!   [`table_model_arrow::mapping`]'s, with the overflow column for values that fit no column.
//! - **Pushdown.** Comparisons become the typed `$filter`, `Exact` only where the service means what SQL means
//!   (see [`pushdown`] for each decision); the projection becomes `$select`; a `LIMIT` becomes `$top` and an
//!   early stop.
//! - **Writes.** `INSERT INTO t SELECT ...` (from another table, a Parquet file, `VALUES`) turns each row back
//!   into an entity ([`table_model_arrow::batch::Rows`]), checks its rules and writes it with the client's bulk
//!   writer; `REPLACE INTO` upserts. See [`sink`] for the write mode and what a row that breaks a rule writes.
//! - **Deletes and updates.** `DELETE FROM t WHERE ...` and `UPDATE t SET ... WHERE ...` push their filters as a
//!   scan does and write each entity selected with the bulk writer under the ETag it was read with, through the
//!   client's engine of filtered writes ([`TableClient::write_matching`]); an entity changed meanwhile is
//!   reported, never overwritten. See [`dml`].
//! - **Partitions.** [`TableClient::plan_ranges`] cuts the entities the pushed filter selects into up to
//!   DataFusion's `target_partitions` key ranges, each a partition of the scan ([`AzureScanExec`]) following its
//!   own continuations, one record batch per page.
//! - **`IN` lists.** An `IN` list on `PartitionKey` (or on `RowKey` within one partition) too long for one
//!   `$filter` (the service's 15 comparisons) is read as a query per value, shared among the partitions
//!   ([`AzureKeysExec`]), up to [`pushdown::IN_SPLIT_MAX`] values; a longer one is left to DataFusion.
//! - **Past one machine.** With the feature `codec`, `codec::AzureCodec` carries the table and its scan through
//!   DataFusion's extension codecs (never a credential), so a Ballista cluster runs the same plans, each executor
//!   reading its key ranges with its own client: see `docs/ballista.md`.
//!
//! ```no_run
//! use std::sync::Arc;
//! use datafusion::prelude::SessionContext;
//! use table_model::client::TableServiceClient;
//! use table_model::TableName;
//! use table_model_datafusion::AzureTable;
//!
//! # async fn run() -> datafusion::error::Result<()> {
//! let service = TableServiceClient::from_connection_string("UseDevelopmentStorage=true", None)
//!     .map_err(|e| datafusion::error::DataFusionError::External(Box::new(e)))?;
//! let orders = AzureTable::infer(service.table_client(TableName::from_static("Orders")), 1000).await?;
//! let ctx = SessionContext::new();
//! ctx.register_table("orders", Arc::new(orders))?;
//! ctx.sql("SELECT \"PartitionKey\", count(*) FROM orders GROUP BY 1").await?.show().await?;
//! # Ok(())
//! # }
//! ```
//!
//! [`TableProvider`]: datafusion::catalog::TableProvider
//! [`TableClient::write_matching`]: table_model::client::TableClient::write_matching
//! [`TableClient::plan_ranges`]: table_model::client::TableClient::plan_ranges
// On docs.rs (`--cfg docsrs`, nightly): each feature-gated item says which feature it needs (`doc_cfg`, which
// took in `doc_auto_cfg`: the `#[cfg(feature = ..)]` of an item is shown without a `#[doc(cfg(..))]` of its own).
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(missing_docs, missing_debug_implementations)]

#[cfg(feature = "codec")]
pub mod codec;
pub mod dml;
mod exec;
mod keys;
pub mod pushdown;
pub mod sink;
mod table;

pub use dml::{AzureDmlExec, DmlError};
pub use exec::AzureScanExec;
pub use keys::AzureKeysExec;
pub use sink::{AzureSink, InsertError};
pub use table::AzureTable;

// The unit tests and the provider's suites (`tests/suite/`) in one test binary. Each binary that links
// DataFusion is over 250 MB in a debug build, and a second one compiled this crate again for its harness; the
// suites use the crate by its name, as an integration test does; `build.rs` leaves them out of the published
// package's tests, which do not carry them.
#[cfg(test)]
extern crate self as table_model_datafusion;
#[cfg(test)]
#[cfg(workspace_suite)]
#[path = "../tests/suite/main.rs"]
mod suite;
