//! The physical scan: [`AzureScanExec`], one partition per key range, each a query of its own following its own
//! continuations, one record batch per page.

use datafusion::arrow::datatypes::{Schema, SchemaRef};
use datafusion::arrow::record_batch::{RecordBatch, RecordBatchOptions};
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{DataFusionError, Result};
use datafusion::execution::TaskContext;
use datafusion::physical_expr::{EquivalenceProperties, PhysicalExpr};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, Partitioning, PlanProperties, SendableRecordBatchStream,
};
use futures::{Stream, StreamExt as _, TryStreamExt as _};
use std::fmt;
use std::sync::Arc;
use table_model::client::TableClient;
use table_model::filter::KeyRange;
use table_model::{Entity, Query};
use table_model_arrow::batch::{BatchBuilder, EntitySchema};
use table_model_arrow::mapping::{OVERFLOW_KEY, PARTITION_KEY, ROW_KEY};

/// The scan of an [`AzureTable`](crate::AzureTable): partition `i` reads key range `i` with the scan's query (its
/// pushed `$filter`, `$select` and `$top`), a record batch per page of the service (at most 1,000 entities,
/// `docs/rules.md` §10), so a partition holds one page at a time, never the table. With a `LIMIT`, each
/// partition stops once it has read that many rows.
#[derive(Debug)]
pub struct AzureScanExec {
    table: TableClient,
    /// The query of every range, before the range's own comparisons are joined to its filter.
    query: Query,
    ranges: Vec<KeyRange>,
    /// The schema the entities are read into: the keys, the projected columns and the overflow.
    read: Arc<EntitySchema>,
    /// The columns of `read` the scan returns, in the projection's order.
    output: Vec<usize>,
    limit: Option<usize>,
    properties: Arc<PlanProperties>,
}

impl AzureScanExec {
    /// A scan of `ranges` (which must tile the entities `query` selects) into batches of `projected`, the
    /// provider's `schema` projected; `limit`: each partition stops after that many rows.
    pub(crate) fn new(
        table: TableClient,
        query: Query,
        ranges: Vec<KeyRange>,
        schema: &SchemaRef,
        projected: SchemaRef,
        limit: Option<usize>,
    ) -> Result<Self> {
        // The entities are read into the keys, the projected columns and the overflow (where a value that does
        // not fit its column goes, and is dropped when the overflow is not projected). When the overflow is
        // projected, every column is read, so that it holds only what fits none.
        let overflow_projected = projected.fields().iter().any(|f| f.metadata().contains_key(OVERFLOW_KEY));
        let read: Schema = if overflow_projected {
            schema.as_ref().clone()
        } else {
            let keep = |name: &str| name == PARTITION_KEY || name == ROW_KEY || projected.field_with_name(name).is_ok();
            let fields = schema
                .fields()
                .iter()
                .filter(|f| keep(f.name()) || f.metadata().contains_key(OVERFLOW_KEY))
                .cloned()
                .collect::<Vec<_>>();
            Schema::new(fields)
        };
        let output =
            projected.fields().iter().map(|f| read.index_of(f.name())).collect::<std::result::Result<Vec<_>, _>>()?;
        let read = Arc::new(EntitySchema::new(Arc::new(read)).map_err(external)?);
        let properties = Arc::new(PlanProperties::new(
            EquivalenceProperties::new(projected),
            Partitioning::UnknownPartitioning(ranges.len()),
            EmissionType::Incremental,
            Boundedness::Bounded,
        ));
        Ok(AzureScanExec { table, query, ranges, read, output, limit, properties })
    }

    /// The key ranges, one per partition, in key order.
    pub fn ranges(&self) -> &[KeyRange] {
        &self.ranges
    }

    /// The query of every range (before its range's comparisons): the pushed `$filter`, `$select` and `$top`.
    pub fn query(&self) -> &Query {
        &self.query
    }

    /// The record batches of one query (the scan's, with a range's or a key's comparisons joined to its
    /// filter), a batch per page, stopping at the scan's limit.
    pub(crate) fn read(&self, query: &Query) -> Result<impl Stream<Item = Result<RecordBatch>> + Send + 'static> {
        let pages = self.table.query::<Entity>(query, None).map_err(external)?.into_pages().boxed();
        let builder = BatchBuilder::new(self.read.clone());
        let output: Arc<[usize]> = self.output.clone().into();
        let projected = self.properties.eq_properties.schema().clone();
        let remaining = self.limit.unwrap_or(usize::MAX);
        let batches = futures::stream::unfold(Some((pages, builder, remaining)), move |state| {
            let (output, projected) = (output.clone(), projected.clone());
            async move {
                let (mut pages, mut builder, mut remaining) = state?;
                // A partition with a limit asks for no page once it has its rows.
                if remaining == 0 {
                    return None;
                }
                let page = match pages.try_next().await {
                    Ok(Some(page)) => page,
                    Ok(None) => return None,
                    Err(e) => return Some((Err(external(e)), None)),
                };
                let take = page.entities.len().min(remaining);
                remaining -= take;
                let batch = page.entities[..take]
                    .iter()
                    .try_for_each(|entity| builder.push(entity))
                    .and_then(|()| builder.finish())
                    .map_err(external)
                    .and_then(|batch| Ok(batch.project(&output)?))
                    // The read schema's projection has the projected schema's fields; a batch of no column
                    // (`count(*)`) keeps its row count.
                    .and_then(|batch| {
                        let options = RecordBatchOptions::new().with_row_count(Some(take));
                        Ok(RecordBatch::try_new_with_options(projected, batch.columns().to_vec(), &options)?)
                    });
                match batch {
                    Ok(batch) => Some((Ok(batch), Some((pages, builder, remaining)))),
                    Err(e) => Some((Err(e), None)),
                }
            }
        });
        Ok(batches)
    }
}

impl DisplayAs for AzureScanExec {
    fn fmt_as(&self, _: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let table = self.table.table();
        write!(f, "AzureScanExec: table={table}, partitions={}", self.ranges.len())?;
        if let Ok(params) = self.query.render() {
            for (name, value) in params {
                write!(f, ", {name}={value}")?;
            }
        }
        if let Some(limit) = self.limit {
            write!(f, ", limit={limit}")?;
        }
        Ok(())
    }
}

impl ExecutionPlan for AzureScanExec {
    fn name(&self) -> &str {
        "AzureScanExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        Vec::new()
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn with_new_children(self: Arc<Self>, children: Vec<Arc<dyn ExecutionPlan>>) -> Result<Arc<dyn ExecutionPlan>> {
        if !children.is_empty() {
            return Err(DataFusionError::Internal("AzureScanExec has no children".to_owned()));
        }
        Ok(self)
    }

    fn execute(&self, partition: usize, _context: Arc<TaskContext>) -> Result<SendableRecordBatchStream> {
        let range = self.ranges.get(partition).ok_or_else(|| {
            DataFusionError::Internal(format!(
                "AzureScanExec has {} partitions, asked for partition {partition}",
                self.ranges.len()
            ))
        })?;
        let mut query = self.query.clone();
        if let Some(filter) = range.filter_with(self.query.filter_ref().cloned()) {
            query = query.filter(filter);
        }
        let batches = self.read(&query)?;
        let schema = self.properties.eq_properties.schema().clone();
        Ok(Box::pin(RecordBatchStreamAdapter::new(schema, batches.boxed())))
    }
}

fn external(e: impl std::error::Error + Send + Sync + 'static) -> DataFusionError {
    DataFusionError::External(Box::new(e))
}
