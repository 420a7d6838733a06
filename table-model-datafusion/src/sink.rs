//! `INSERT INTO` an [`AzureTable`](crate::AzureTable): [`AzureSink`], the [`DataSink`] of DataFusion's
//! [`DataSinkExec`](datafusion::datasource::sink::DataSinkExec), which turns each record batch back into entities
//! ([`table_model_arrow::batch::Rows`], the one mapping) and writes them with the client's bulk writer
//! ([`TableClient::bulk_write_stream`]).
//!
//! - **Rules first.** Every row of a record batch becomes an entity, which checks the model's rules (keys,
//!   property names, counts, sizes, value ranges: `docs/rules.md` §1 to §4), before any row of that batch is
//!   given to the writer; the writer's request layer then checks the service's own rules (Cosmos DB's,
//!   `docs/rules.md` §13.1) and reports an entity it refuses as not sent.
//! - **What a bad row writes.** Nothing of its record batch (up to `datafusion.execution.batch_size` rows, 8,192
//!   by default) and nothing after it: a statement whose input is one batch, as `INSERT ... VALUES` and most
//!   small `SELECT`s are, writes nothing at all. The rows of the batches before it were given to the writer,
//!   which writes them (the service has no transaction across partitions to take them back); the error
//!   ([`InsertError`]) names the bad row (its number in the statement, from 0, and its keys), the property and the
//!   rule, and says which rows were written: those before the batch's first row, less any the writer reports.
//! - **Write mode.** `INSERT INTO` inserts: a row whose keys are already in the table is refused
//!   (`EntityAlreadyExists`), as a primary key refuses a duplicate in SQL, and not written, with the other rows
//!   of its transaction (the writer's transactions are atomic, `docs/rules.md` §8.2); the error names them.
//!   `REPLACE INTO` (DataFusion's `InsertOp::Replace`) upserts, replacing an existing entity whole, as SQLite's
//!   and MySQL's `REPLACE` replace the row. `INSERT OVERWRITE` is refused before anything is read: the service
//!   cannot empty a table in one step.
//! - **Count.** The statement's answer is the number of entities written (DataFusion's `count` column).
//!
//! ```no_run
//! use std::sync::Arc;
//! use datafusion::prelude::SessionContext;
//! use table_model::client::TableServiceClient;
//! use table_model::TableName;
//! use table_model_datafusion::AzureTable;
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let service = TableServiceClient::from_connection_string("UseDevelopmentStorage=true", None)?;
//! let ctx = SessionContext::new();
//! let orders = AzureTable::infer(service.table_client(TableName::from_static("Orders")), 1000).await?;
//! let schema = orders.entity_schema().arrow().clone();
//! let archive = AzureTable::new(service.table_client(TableName::from_static("Archive")), schema)?;
//! ctx.register_table("orders", Arc::new(orders))?;
//! ctx.register_table("archive", Arc::new(archive))?;
//! // The answer is one row of one column, `count`: the entities written.
//! ctx.sql("INSERT INTO archive SELECT * FROM orders WHERE \"PartitionKey\" < '2024'").await?.show().await?;
//! # Ok(())
//! # }
//! ```
//!
//! Layer: plans.

use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::common::{DataFusionError, Result};
use datafusion::datasource::sink::DataSink;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_plan::{DisplayAs, DisplayFormatType};
use futures::StreamExt as _;
use std::fmt;
use std::sync::{Arc, Mutex};
use table_model::client::{BulkError, BulkOperation, TableClient};
use table_model::{Entity, UpdateMode};
use table_model_arrow::batch::{EntitySchema, Rows};

/// The sink of `INSERT INTO` an [`AzureTable`](crate::AzureTable) (see the [module](self) for what it writes
/// and when it stops). Made by [`TableProvider::insert_into`](datafusion::catalog::TableProvider::insert_into).
#[derive(Debug)]
pub struct AzureSink {
    table: TableClient,
    schema: Arc<EntitySchema>,
    operation: BulkOperation,
}

impl AzureSink {
    /// A sink writing rows of `schema` into `table` with `operation`.
    pub(crate) fn new(table: TableClient, schema: Arc<EntitySchema>, operation: BulkOperation) -> Self {
        AzureSink { table, schema, operation }
    }

    /// What each row is written with: [`BulkOperation::Insert`] for `INSERT INTO`,
    /// [`BulkOperation::Upsert`] with [`UpdateMode::Replace`] for `REPLACE INTO`.
    pub fn operation(&self) -> BulkOperation {
        self.operation
    }
}

impl DisplayAs for AzureSink {
    fn fmt_as(&self, _: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mode = match self.operation {
            BulkOperation::Upsert(UpdateMode::Replace) => "replace",
            _ => "insert",
        };
        write!(f, "AzureSink: table={}, mode={mode}", self.table.table())
    }
}

/// The first bad row of a statement, and where its batch starts.
struct BadRow {
    /// The row, in the statement, from 0.
    row: u64,
    /// The first row of its record batch: the rows before it were given to the writer.
    batch_start: u64,
    error: table_model_arrow::Error,
}

/// What stopped the input: a bad row, or the failure of the plan that produces the rows.
enum Stop {
    BadRow(BadRow),
    Input(DataFusionError),
}

#[async_trait::async_trait]
impl DataSink for AzureSink {
    fn schema(&self) -> &SchemaRef {
        self.schema.arrow()
    }

    async fn write_all(&self, data: SendableRecordBatchStream, _context: &Arc<TaskContext>) -> Result<u64> {
        let stop: Mutex<Option<Stop>> = Mutex::new(None);
        let schema = &self.schema;
        let stop_ref = &stop;
        let entities = data
            .scan(0u64, move |start, batch| {
                let next = match batch.map(|batch| (entities(&batch, schema, *start), batch.num_rows())) {
                    Ok((Ok(entities), rows)) => {
                        *start += rows as u64;
                        Some(futures::stream::iter(entities))
                    }
                    Ok((Err(bad), _)) => {
                        *stop_ref.lock().expect("not poisoned") = Some(Stop::BadRow(bad));
                        None
                    }
                    Err(e) => {
                        *stop_ref.lock().expect("not poisoned") = Some(Stop::Input(e));
                        None
                    }
                };
                futures::future::ready(next)
            })
            .flatten();
        let report = self.table.bulk_write_stream(self.operation, entities, None).await;
        let stop = stop.into_inner().expect("not poisoned");
        let written = report.written;
        let bulk = report.into_result().err();
        let (bad_row, input): (Option<BadRow>, Option<DataFusionError>) = match stop {
            None if bulk.is_none() => return Ok(written),
            None => (None, None),
            Some(Stop::BadRow(bad)) => (Some(bad), None),
            Some(Stop::Input(e)) => (None, Some(e)),
        };
        let table = self.table.table().to_string();
        if let Some(e) = input {
            // The plan's own error, with what was written in its context.
            let failures = bulk.map(|b| format!("; {b}")).unwrap_or_default();
            let context =
                format!("insert into `{table}`: {written} rows were written before its input failed{failures}");
            return Err(e.context(context));
        }
        Err(DataFusionError::External(Box::new(InsertError { table, written, bad_row, bulk })))
    }
}

/// The entities of a batch whose first row is row `start` of the statement; the first bad row's error.
fn entities(batch: &RecordBatch, schema: &EntitySchema, start: u64) -> std::result::Result<Vec<Entity>, BadRow> {
    let bad = |row: usize, error| BadRow { row: start + row as u64, batch_start: start, error };
    let rows = Rows::new(batch, schema).map_err(|e| bad(0, e))?;
    (0..batch.num_rows()).map(|row| rows.entity(row).map_err(|e| bad(row, e))).collect()
}

/// An `INSERT INTO` an [`AzureTable`](crate::AzureTable) that did not write every row: a row broke a rule (its
/// number in the statement, from 0, its keys, the property and the rule), or the service refused rows (the
/// bulk writer's [`BulkError`], naming them); either way, which rows were written.
///
/// Reaches the caller as [`DataFusionError::External`]; the message reads
/// ``insert into `Orders`: row 3 (PartitionKey `a/b`, RowKey `1`): invalid partition key ...; nothing was
/// written``.
#[derive(Debug)]
pub struct InsertError {
    table: String,
    written: u64,
    bad_row: Option<BadRow>,
    bulk: Option<BulkError>,
}

impl fmt::Debug for BadRow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BadRow").field("row", &self.row).field("error", &self.error).finish_non_exhaustive()
    }
}

impl InsertError {
    /// The entities written by the statement.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// The row (in the statement, from 0) that broke a rule, and the rule it broke (its keys and property with
    /// [`keys`](table_model_arrow::Error::keys) and [`property`](table_model_arrow::Error::property)); `None`
    /// when every row kept the rules.
    pub fn bad_row(&self) -> Option<(u64, &table_model_arrow::Error)> {
        self.bad_row.as_ref().map(|b| (b.row, &b.error))
    }

    /// The rows the writer did not write, with their keys and reasons (a row the service refused, and those rolled
    /// back with it); `None` when it wrote every row it was given.
    pub fn bulk(&self) -> Option<&BulkError> {
        self.bulk.as_ref()
    }
}

impl fmt::Display for InsertError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "insert into `{}`: ", self.table)?;
        if let Some(bad) = &self.bad_row {
            write!(f, "row {}", bad.row)?;
            if let Some((partition_key, row_key)) = bad.error.keys() {
                write!(f, " (PartitionKey `{partition_key}`, RowKey `{row_key}`)")?;
            }
            write!(f, ": {}; ", bad.error)?;
            match (bad.batch_start, &self.bulk) {
                (0, _) => f.write_str("nothing was written")?,
                (start, None) => write!(f, "rows 0 to {} were written, none from row {start} on", start - 1)?,
                (start, Some(_)) => {
                    write!(f, "of rows 0 to {}, {} were written, none from row {start} on", start - 1, self.written)?
                }
            }
            if self.bulk.is_some() {
                f.write_str("; ")?;
            }
        }
        if let Some(bulk) = &self.bulk {
            write!(f, "{bulk}")?;
        }
        Ok(())
    }
}

impl std::error::Error for InsertError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match (&self.bad_row, &self.bulk) {
            (Some(bad), _) => Some(&bad.error),
            (None, Some(bulk)) => Some(bulk),
            (None, None) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{ArrayRef, StringArray};
    use table_model_arrow::mapping::ColumnKind;

    fn schema() -> Arc<EntitySchema> {
        let fields = vec![
            ColumnKind::String.field("PartitionKey", false),
            ColumnKind::String.field("RowKey", false),
            ColumnKind::String.field("S", true),
        ];
        Arc::new(EntitySchema::new(Arc::new(datafusion::arrow::datatypes::Schema::new(fields))).unwrap())
    }

    fn batch(rows: &[(&str, &str)]) -> RecordBatch {
        let column = |values: Vec<&str>| Arc::new(StringArray::from(values)) as ArrayRef;
        let (pks, rks) = (rows.iter().map(|r| r.0).collect(), rows.iter().map(|r| r.1).collect());
        let s = Arc::new(StringArray::from(vec![Some("v"); rows.len()])) as ArrayRef;
        RecordBatch::try_new(schema().arrow().clone(), vec![column(pks), column(rks), s]).unwrap()
    }

    #[test]
    fn a_bad_row_is_numbered_in_the_statement() {
        let schema = schema();
        assert_eq!(entities(&batch(&[("p", "1"), ("p", "2")]), &schema, 10).unwrap().len(), 2);
        let bad = entities(&batch(&[("p", "1"), ("p", "a#b")]), &schema, 10).unwrap_err();
        assert_eq!((bad.row, bad.batch_start), (11, 10));
        assert_eq!(bad.error.keys(), Some(("p", "a#b")));
    }

    #[test]
    fn the_error_says_which_rows_were_written() {
        let error = |start| {
            let bad = entities(&batch(&[("p", "1"), ("p", "a#b")]), &schema(), start).unwrap_err();
            InsertError { table: "Orders".to_owned(), written: start, bad_row: Some(bad), bulk: None }.to_string()
        };
        let first = error(0);
        assert!(first.starts_with("insert into `Orders`: row 1 (PartitionKey `p`, RowKey `a#b`): "), "{first}");
        assert!(first.ends_with("; nothing was written"), "{first}");
        let later = error(8192);
        assert!(later.starts_with("insert into `Orders`: row 8193 (PartitionKey `p`, RowKey `a#b`): "), "{later}");
        assert!(later.ends_with("; rows 0 to 8191 were written, none from row 8192 on"), "{later}");
    }
}
