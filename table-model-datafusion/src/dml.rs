//! `DELETE FROM t WHERE ...` and `UPDATE t SET ... WHERE ...` on an [`AzureTable`](crate::AzureTable):
//! [`AzureDmlExec`], whose one partition runs the client's engine of filtered writes
//! ([`TableClient::write_matching`], the same as `tablectl delete`'s) and answers one row, `count`: the entities
//! deleted or updated.
//!
//! - **Pushdown, as in scans.** The `WHERE` clause's filters become the `$filter` ([`crate::pushdown`]), and the
//!   table is read in up to `target_partitions` key ranges ([`TableClient::plan_ranges`]) side by side. When
//!   every filter is [`Exact`](datafusion::logical_expr::TableProviderFilterPushDown::Exact) (the keys), a
//!   `DELETE` reads the keys only; otherwise each page is read whole, made a record batch
//!   ([`table_model_arrow::batch`], the one mapping), and the filters DataFusion would apply are applied to it
//!   (a row whose filter is `NULL` is not touched, as in SQL).
//! - **Under the ETag read.** Each entity is deleted or replaced under the ETag it was read with: one changed
//!   or deleted since is refused by the service, left as it is, and reported; the statement then fails with
//!   [`DmlError`], which says how many were written and names those left.
//! - **Rules first.** `UPDATE` evaluates its `SET` expressions on each page and turns each row back into an
//!   entity, which checks the model's rules (`docs/rules.md` §1 to §4), before any entity of the page is sent;
//!   a row that breaks one stops its range ([`DmlError`] names it; the pages before it were written). The keys
//!   cannot be set (an update keeps its entity's keys), nor `Timestamp` (the server's) nor `@overflow`. A
//!   column that is set loses the exact value `@overflow` kept for it (a 100 ns digit, a value of another type):
//!   its new value is the column's.
//!
//! Layer: plans.

use datafusion::arrow::array::{Array as _, ArrayRef, BooleanArray, RecordBatch, UInt64Array};
use datafusion::arrow::compute::{and, cast};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{DataFusionError, Result};
use datafusion::execution::TaskContext;
use datafusion::physical_expr::{EquivalenceProperties, PhysicalExpr};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, Partitioning, PlanProperties, SendableRecordBatchStream,
};
use std::fmt;
use std::num::NonZeroUsize;
use std::sync::Arc;
use table_model::client::{DecideError, MatchReport, MatchWrite, PlanOptions, RangeCursor, TableClient};
use table_model::filter::{Filter, KeyRange};
use table_model::{Entity, Query, UpdateMode};
use table_model_arrow::batch::{BatchBuilder, EntitySchema, Rows};

/// `DELETE` or `UPDATE`: what is written to each entity the filters select.
#[derive(Clone, Debug)]
pub(crate) enum Dml {
    Delete,
    /// The columns set (their index in the table's schema) and their values, over the table's columns.
    Update(Vec<(usize, Arc<dyn PhysicalExpr>)>),
}

/// The plan of a `DELETE` or an `UPDATE` of an [`AzureTable`](crate::AzureTable) (see the [module](self)): one
/// partition, which does the writes when executed and answers one row of one column, `count` (`UInt64`).
#[derive(Clone, Debug)]
pub struct AzureDmlExec {
    table: TableClient,
    schema: Arc<EntitySchema>,
    dml: Dml,
    /// The pushed `$filter`.
    filter: Option<Filter>,
    /// The filters applied to each page (those not pushed exactly); none when the service's answer is exact.
    residual: Vec<Arc<dyn PhysicalExpr>>,
    /// Key ranges read side by side.
    partitions: usize,
    properties: Arc<PlanProperties>,
}

impl AzureDmlExec {
    pub(crate) fn new(
        table: TableClient,
        schema: Arc<EntitySchema>,
        dml: Dml,
        filter: Option<Filter>,
        residual: Vec<Arc<dyn PhysicalExpr>>,
        partitions: usize,
    ) -> Self {
        let count = Arc::new(Schema::new(vec![Field::new("count", DataType::UInt64, false)]));
        let properties = Arc::new(PlanProperties::new(
            EquivalenceProperties::new(count),
            Partitioning::UnknownPartitioning(1),
            EmissionType::Final,
            Boundedness::Bounded,
        ));
        AzureDmlExec { table, schema, dml, filter, residual, partitions, properties }
    }

    /// Whether this is a `DELETE` (else an `UPDATE`).
    pub fn is_delete(&self) -> bool {
        matches!(self.dml, Dml::Delete)
    }

    /// The `$filter` sent with each range's query, if any.
    pub fn filter(&self) -> Option<&Filter> {
        self.filter.as_ref()
    }

    /// Runs the statement: plans the ranges, then deletes or updates.
    async fn run(self) -> Result<u64> {
        let ranges = match NonZeroUsize::new(self.partitions).filter(|n| n.get() > 1) {
            Some(n) => self
                .table
                .plan_ranges(n, self.filter.as_ref(), Some(PlanOptions::side_by_side(n)))
                .await
                .map_err(external)?,
            None => vec![KeyRange::all()],
        };
        let cursors: Vec<RangeCursor> = ranges.into_iter().map(RangeCursor::new).collect();
        let mut query = Query::new();
        if let Some(filter) = &self.filter {
            query = query.filter(filter.clone());
        }
        let report = match (&self.dml, self.residual.is_empty()) {
            (Dml::Delete, true) => self.table.delete_matching(&query, cursors, None).await,
            (Dml::Delete, false) => {
                let decide = |page: Vec<Entity>| self.selected(page).map(|(entities, _)| entities);
                self.table.write_matching(MatchWrite::Delete, &query, cursors, decide, None).await
            }
            (Dml::Update(set), _) => {
                let decide = |page: Vec<Entity>| self.updated(page, set);
                let write = MatchWrite::Update(UpdateMode::Replace);
                self.table.write_matching(write, &query, cursors, decide, None).await
            }
        };
        let what = if self.is_delete() { "delete from" } else { "update" };
        DmlError::check(what, self.table.table().as_str(), report)
    }

    /// The entities of a page the residual filters select, and their batch (of those rows).
    fn selected(&self, page: Vec<Entity>) -> Result<(Vec<Entity>, RecordBatch), DecideError> {
        let batch = self.batch(&page)?;
        let mut mask: Option<BooleanArray> = None;
        for filter in &self.residual {
            let values = filter.evaluate(&batch)?.into_array(batch.num_rows())?;
            let values = values
                .as_any()
                .downcast_ref::<BooleanArray>()
                .ok_or_else(|| DataFusionError::Internal("a filter is not a boolean".into()))?
                .clone();
            mask = Some(match mask {
                Some(m) => and(&m, &values)?,
                None => values,
            });
        }
        let Some(mask) = mask else { return Ok((page, batch)) };
        // SQL keeps a row whose filter is true: not false, not NULL.
        let keep: BooleanArray = mask.iter().map(|v| Some(v == Some(true))).collect();
        let batch = datafusion::arrow::compute::filter_record_batch(&batch, &keep)?;
        let entities = page.into_iter().zip(keep.iter()).filter(|(_, k)| *k == Some(true)).map(|(e, _)| e).collect();
        Ok((entities, batch))
    }

    /// The entities of a page the filters select, each with the `SET` columns' new values.
    fn updated(&self, page: Vec<Entity>, set: &[(usize, Arc<dyn PhysicalExpr>)]) -> Result<Vec<Entity>, DecideError> {
        let (_, batch) = self.selected(page)?;
        let arrow = self.schema.arrow();
        let mut columns = batch.columns().to_vec();
        for (i, expr) in set {
            let values = expr.evaluate(&batch)?.into_array(batch.num_rows())?;
            let field = arrow.field(*i);
            columns[*i] = cast_to(values, field.data_type())?;
        }
        let updated = RecordBatch::try_new(arrow.clone(), columns)?;
        // The set columns alone, without `@overflow`: their values are the columns', not the overflow's.
        let set_only: Vec<usize> = self.key_columns().into_iter().chain(set.iter().map(|(i, _)| *i)).collect();
        let set_schema = EntitySchema::new(Arc::new(arrow.project(&set_only)?))?;
        let set_batch = updated.project(&set_only)?;
        let (rows, set_rows) = (Rows::new(&updated, &self.schema)?, Rows::new(&set_batch, &set_schema)?);
        (0..updated.num_rows())
            .map(|row| {
                let mut entity = rows.entity(row).map_err(|e| DataFusionError::External(Box::new(e)))?;
                let set_values = set_rows.entity(row).map_err(|e| DataFusionError::External(Box::new(e)))?;
                for (i, _) in set {
                    let name = arrow.field(*i).name();
                    entity.remove(name);
                    if let Some(value) = set_values.value(name) {
                        let name = name.parse().map_err(|e| DataFusionError::External(Box::new(e)))?;
                        entity.insert(name, value.clone()).map_err(|e| DataFusionError::External(Box::new(e)))?;
                    }
                }
                Ok(entity)
            })
            .collect::<Result<Vec<Entity>>>()
            .map_err(Into::into)
    }

    /// The indices of `PartitionKey` and `RowKey`.
    fn key_columns(&self) -> Vec<usize> {
        let arrow = self.schema.arrow();
        [table_model_arrow::mapping::PARTITION_KEY, table_model_arrow::mapping::ROW_KEY]
            .iter()
            .filter_map(|k| arrow.index_of(k).ok())
            .collect()
    }

    /// The record batch of a page's entities.
    fn batch(&self, page: &[Entity]) -> Result<RecordBatch, DecideError> {
        let mut builder = BatchBuilder::new(self.schema.clone());
        for entity in page {
            builder.push(entity)?;
        }
        Ok(builder.finish()?)
    }
}

/// A `SET` value as its column's type (DataFusion has coerced it already; a literal `NULL` is typeless).
fn cast_to(values: ArrayRef, to: &DataType) -> Result<ArrayRef> {
    if values.data_type() == to {
        return Ok(values);
    }
    Ok(cast(&values, to)?)
}

impl DisplayAs for AzureDmlExec {
    fn fmt_as(&self, _: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = if self.is_delete() { "delete" } else { "update" };
        write!(f, "AzureDmlExec: {what}, table={}, partitions={}", self.table.table(), self.partitions)?;
        if let Some(Ok(filter)) = self.filter.as_ref().map(Filter::render) {
            write!(f, ", $filter={filter}")?;
        }
        if !self.residual.is_empty() {
            write!(f, ", residual filters={}", self.residual.len())?;
        }
        Ok(())
    }
}

impl ExecutionPlan for AzureDmlExec {
    fn name(&self) -> &str {
        "AzureDmlExec"
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
        if children.is_empty() {
            Ok(self)
        } else {
            Err(DataFusionError::Internal(format!("AzureDmlExec has no children, given {}", children.len())))
        }
    }

    fn execute(&self, partition: usize, _context: Arc<TaskContext>) -> Result<SendableRecordBatchStream> {
        if partition != 0 {
            return Err(DataFusionError::Internal(format!("AzureDmlExec has 1 partition, asked for {partition}")));
        }
        let schema: SchemaRef = self.properties.eq_properties.schema().clone();
        let this = self.clone();
        let out = schema.clone();
        let batch = futures::stream::once(async move {
            let count = this.run().await?;
            Ok(RecordBatch::try_new(out, vec![Arc::new(UInt64Array::from(vec![count]))])?)
        });
        Ok(Box::pin(RecordBatchStreamAdapter::new(schema, batch)))
    }
}

/// A `DELETE` or `UPDATE` that left entities as they were: changed since they were read, refused, or in a range
/// that stopped (a page that could not be read, a row that breaks a rule). Says how many were written.
#[derive(Debug)]
pub struct DmlError {
    message: String,
    written: u64,
    changed: usize,
}

impl DmlError {
    /// The count, when the report is complete; the error otherwise.
    fn check(what: &str, table: &str, report: MatchReport) -> Result<u64> {
        if report.is_complete() {
            return Ok(report.written);
        }
        let mut parts = Vec::new();
        if !report.changed.is_empty() {
            let shown: Vec<String> = report.changed.iter().take(3).map(|(p, r)| format!("(`{p}`, `{r}`)")).collect();
            let more = report.changed.len().saturating_sub(3);
            let more = if more > 0 { format!(" and {more} more") } else { String::new() };
            parts.push(format!(
                "{} changed or deleted since they were read, left as they are: {}{more}",
                report.changed.len(),
                shown.join(", ")
            ));
        }
        if let Some(first) = report.failures.first() {
            parts.push(format!("{} not written: {first}", report.failures.len()));
        }
        if let Some(stop) = report.stopped.first() {
            parts.push(format!("{} key ranges stopped: {}", report.stopped.len(), stop.error));
        }
        let message = format!("{what} `{table}`: {} written; {}", report.written, parts.join("; "));
        Err(DataFusionError::External(Box::new(DmlError {
            message,
            written: report.written,
            changed: report.changed.len(),
        })))
    }

    /// Entities deleted or updated.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Entities changed or deleted since they were read, left as they are.
    pub fn changed(&self) -> usize {
        self.changed
    }
}

impl fmt::Display for DmlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for DmlError {}

fn external(e: impl std::error::Error + Send + Sync + 'static) -> DataFusionError {
    DataFusionError::External(Box::new(e))
}
