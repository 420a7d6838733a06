//! The one place where table-model's entities meet Apache Arrow and Parquet: the EDM to Arrow [`mapping`], never
//! silently lossy; schema [`infer`]ence from a sample of entities; entities to record [`batch`]es and back, with
//! an overflow column for whatever does not fit its column; and streaming [`parquet`] files of entities.
//!
//! `tablectl`'s Parquet format and schema command are built on it, and so is a SQL provider: every rule of the
//! mapping (which Arrow type each EDM type gets, how a DateTime keeps its 100 ns from 1601 to 9999, where a value
//! of another type goes) lives here, once.
//!
//! ```
//! use std::sync::Arc;
//! use table_model::{Entity, PartitionKey, RowKey};
//! use table_model_arrow::{batch, infer::Inference};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let entities = vec![
//!     Entity::new(PartitionKey::new("eu")?, RowKey::new("1")?).with("Age".parse()?, 36)?,
//!     Entity::new(PartitionKey::new("eu")?, RowKey::new("2")?).with("Name".parse()?, "Bob")?,
//! ];
//! let mut inference = Inference::new();
//! entities.iter().for_each(|e| inference.observe(e));
//! let schema = Arc::new(batch::EntitySchema::new(Arc::new(inference.to_schema()?))?);
//! let mut builder = batch::BatchBuilder::new(schema.clone());
//! for entity in &entities {
//!     builder.push(entity)?;
//! }
//! let records = builder.finish()?;
//! assert_eq!(records.schema().field(2).metadata()["table_model.edm"], "Edm.Int32");
//! assert_eq!(batch::entities(&records, &schema)?, entities);
//! # Ok(())
//! # }
//! ```
#![deny(missing_docs, missing_debug_implementations)]

pub mod batch;
mod error;
pub mod infer;
pub mod mapping;
pub mod parquet;

pub use error::{Error, ErrorKind};
