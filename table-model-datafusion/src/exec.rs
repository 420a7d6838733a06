//! The physical scan: [`AzureScanExec`], one partition per key range, each a query of its own following its own
//! continuations, one record batch per page.
//!
//! Layer: plans.

use datafusion::arrow::array::{Array as _, ArrayRef, UInt32Array};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::arrow::record_batch::{RecordBatch, RecordBatchOptions};
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{DataFusionError, Result};
use datafusion::datasource::memory::MemorySourceConfig;
use datafusion::datasource::source::DataSourceExec;
use datafusion::execution::TaskContext;
use datafusion::physical_expr::{EquivalenceProperties, PhysicalExpr};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, Partitioning, PlanProperties, SendableRecordBatchStream,
};
use futures::{Stream, StreamExt as _, TryStreamExt as _};
use std::any::Any;
use std::fmt;
use std::sync::Arc;
use table_model::client::TableClient;
use table_model::filter::KeyRange;
use table_model::Query;
use table_model_arrow::batch::{BatchBuilder, EntitySchema};
use table_model_arrow::mapping::{OVERFLOW_KEY, PARTITION_KEY, ROW_KEY};

/// The scan of an [`AzureTable`](crate::AzureTable): partition `i` reads key range `i` with the scan's query (its
/// pushed `$filter`, `$select` and `$top`), a record batch per page of the service (at most 1,000 entities,
/// `docs/rules.md` §10), so a partition holds one page at a time, never the table. With a `LIMIT`, each
/// partition stops once it has read that many rows.
///
/// On a Ballista cluster (a table decoded by `codec::AzureCodec`, feature `codec`), the scan has a child: an
/// in-memory source of one row per partition, the index of its range. Ballista's scheduler gives each task the
/// partitions of its own by slicing the leaves it knows (in-memory and file sources), and leaves any other leaf
/// whole, so that every task of a plain scan would read every range; through this child, the scan of a task
/// holds the ranges of its task only.
#[derive(Clone, Debug)]
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
    /// The index in `ranges` of the range each partition reads: every range, in order, unless a range source
    /// selects some.
    selected: Vec<usize>,
    /// The range source (see the type's documentation), when the scan has one.
    source: Option<Arc<dyn ExecutionPlan>>,
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
        let selected: Vec<usize> = (0..ranges.len()).collect();
        let properties = properties(projected, selected.len());
        Ok(AzureScanExec { table, query, ranges, read, output, limit, selected, source: None, properties })
    }

    /// The scan with a range source as its child: one partition per range, each holding one row, its range's
    /// index (see the type's documentation).
    pub(crate) fn with_range_source(self) -> Result<Self> {
        let source = index_source(self.ranges.len())?;
        self.with_source(source)
    }

    /// The scan reading the ranges `source` names, partition by partition: `source` must be an in-memory source
    /// whose every partition holds one row, a range's index.
    pub(crate) fn with_source(self, source: Arc<dyn ExecutionPlan>) -> Result<Self> {
        let selected = source_indices(&source, "AzureScanExec", "ranges", self.ranges.len())?;
        let properties = properties(self.properties.eq_properties.schema().clone(), selected.len());
        Ok(AzureScanExec { selected, source: Some(source), properties, ..self })
    }

    /// The key ranges, in key order: partition `i` reads range `i` (or, with a range source, the range its
    /// source names).
    pub fn ranges(&self) -> &[KeyRange] {
        &self.ranges
    }

    /// The key range partition `partition` reads; `None` past the last partition.
    pub fn partition_range(&self, partition: usize) -> Option<&KeyRange> {
        self.selected.get(partition).map(|&i| &self.ranges[i])
    }

    /// The query of every range (before its range's comparisons): the pushed `$filter`, `$select` and `$top`.
    pub fn query(&self) -> &Query {
        &self.query
    }

    /// The record batches of one query (the scan's, with a range's or a key's comparisons joined to its
    /// filter), a batch per page, stopping at the scan's limit. Each page's JSON is decoded straight into the
    /// batch's columns ([`BatchBuilder::push_page`]), the next page on its way meanwhile when there is no limit
    /// ([`RawPages::read_ahead`](table_model::client::RawPages::read_ahead)).
    pub(crate) fn read(&self, query: &Query) -> Result<impl Stream<Item = Result<RecordBatch>> + Send + use<>> {
        let pages = self.table.query_raw(query, None).map_err(external)?;
        // Without a limit every page is read: each next one is asked for while this one is decoded. With one, the
        // partition may stop before its last page, and asks for no page it does not need.
        let pages = match self.limit {
            None => futures::future::Either::Left(pages.read_ahead()),
            Some(_) => futures::future::Either::Right(pages),
        };
        let builder = BatchBuilder::new(self.read.clone());
        let output: Arc<[usize]> = self.output.clone().into();
        let projected = self.properties.eq_properties.schema().clone();
        let remaining = self.limit.unwrap_or(usize::MAX);
        let table: Arc<str> = format!("table `{}`", self.table.table()).into();
        let batches = futures::stream::unfold(Some((pages, builder, remaining)), move |state| {
            let (output, projected, table) = (output.clone(), projected.clone(), table.clone());
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
                let batch = builder
                    .push_page(&page.body)
                    .and_then(|_| builder.finish())
                    // The client's errors name the table; a page that does not decode is named here.
                    .map_err(|e| DataFusionError::External(format!("{table}: {e}").into()))
                    .and_then(|batch| {
                        let take = batch.num_rows().min(remaining);
                        remaining -= take;
                        // The read schema's projection has the projected schema's fields; a batch of no column
                        // (`count(*)`) keeps its row count.
                        let columns = batch.project(&output)?.slice(0, take).columns().to_vec();
                        let options = RecordBatchOptions::new().with_row_count(Some(take));
                        Ok(RecordBatch::try_new_with_options(projected, columns, &options)?)
                    });
                match batch {
                    Ok(batch) => Some((Ok(batch), Some((pages, builder, remaining)))),
                    Err(e) => Some((Err(e), None)),
                }
            }
        });
        Ok(batches)
    }

    /// The client of the table read.
    pub fn table(&self) -> &TableClient {
        &self.table
    }

    /// Each partition's limit: it stops after that many rows.
    pub fn limit(&self) -> Option<usize> {
        self.limit
    }

    /// The schema the entities are read into (the keys, the projected columns and the overflow), which
    /// [`AzureScanExec::new`] rebuilds itself from.
    #[cfg_attr(not(feature = "codec"), allow(dead_code))]
    pub(crate) fn read_schema(&self) -> &SchemaRef {
        self.read.arrow()
    }
}

impl DisplayAs for AzureScanExec {
    fn fmt_as(&self, _: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let table = self.table.table();
        write!(f, "AzureScanExec: table={table}, partitions={}", self.selected.len())?;
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
        self.source.iter().collect()
    }

    /// The range source is not data: repartitioning it would only break the index of its partitions.
    fn benefits_from_input_partitioning(&self) -> Vec<bool> {
        vec![false; self.source.iter().len()]
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn with_new_children(self: Arc<Self>, children: Vec<Arc<dyn ExecutionPlan>>) -> Result<Arc<dyn ExecutionPlan>> {
        with_new_source(self, children)
    }

    fn execute(&self, partition: usize, _context: Arc<TaskContext>) -> Result<SendableRecordBatchStream> {
        let range = self.partition_range(partition).ok_or_else(|| {
            DataFusionError::Internal(format!(
                "AzureScanExec has {} partitions, asked for partition {partition}",
                self.selected.len()
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

/// A node of this crate whose one possible child is its index source ([`index_source`]).
pub(crate) trait IndexSourced: ExecutionPlan + Clone + Sized + 'static {
    /// The index source, when the node has one.
    fn source(&self) -> Option<&Arc<dyn ExecutionPlan>>;

    /// The node reading the parts `source` names.
    fn sourced(self, source: Arc<dyn ExecutionPlan>) -> Result<Self>;
}

impl IndexSourced for AzureScanExec {
    fn source(&self) -> Option<&Arc<dyn ExecutionPlan>> {
        self.source.as_ref()
    }

    fn sourced(self, source: Arc<dyn ExecutionPlan>) -> Result<Self> {
        self.with_source(source)
    }
}

/// [`ExecutionPlan::with_new_children`] of an [`IndexSourced`] node: its index source replaced (by a slice of it,
/// as Ballista's scheduler gives a task), or no child for a node without one.
pub(crate) fn with_new_source<T: IndexSourced>(
    node: Arc<T>,
    children: Vec<Arc<dyn ExecutionPlan>>,
) -> Result<Arc<dyn ExecutionPlan>> {
    let has = node.source().iter().len();
    match (children.len(), has) {
        (0, 0) => Ok(node),
        (1, 1) => {
            let source = children.into_iter().next().expect("one child");
            Ok(Arc::new(Arc::unwrap_or_clone(node).sourced(source)?))
        }
        (n, _) => Err(DataFusionError::Internal(format!("{} has {has} children, given {n}", node.name()))),
    }
}

/// The column of an index source: the index of a range in a scan's ranges, or of a share of an `IN` list.
const RANGE_INDEX: &str = "range";

/// An index source of `n` partitions: an in-memory source whose partition `i` holds one row, `i`. As a child of
/// a scan whose partitions are not data (key ranges, shares of an `IN` list), it lets Ballista's scheduler give
/// each task its partitions (see [`AzureScanExec`]'s documentation).
pub(crate) fn index_source(n: usize) -> Result<Arc<dyn ExecutionPlan>> {
    let schema = Arc::new(Schema::new(vec![Field::new(RANGE_INDEX, DataType::UInt32, false)]));
    let partitions = (0..n)
        .map(|i| {
            let index = u32::try_from(i).map_err(|e| DataFusionError::External(Box::new(e)))?;
            let column: ArrayRef = Arc::new(UInt32Array::from(vec![index]));
            Ok(vec![RecordBatch::try_new(schema.clone(), vec![column])?])
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(MemorySourceConfig::try_new_exec(&partitions, schema, None)?)
}

/// The index each partition of `source` (an [`index_source`], or a slice of one) holds, each below `n`: the
/// parts (`what`, e.g. `ranges`) of the node `node` its partitions read.
pub(crate) fn source_indices(source: &Arc<dyn ExecutionPlan>, node: &str, what: &str, n: usize) -> Result<Vec<usize>> {
    let config = source
        .downcast_ref::<DataSourceExec>()
        .and_then(|exec| (exec.data_source().as_ref() as &dyn Any).downcast_ref::<MemorySourceConfig>())
        .ok_or_else(|| {
            DataFusionError::Plan(format!(
                "the child of an {node} must be its in-memory source of indices, not {}",
                source.name()
            ))
        })?;
    let mut selected = Vec::with_capacity(config.partitions().len());
    for (partition, batches) in config.partitions().iter().enumerate() {
        let indices: Vec<Option<u32>> = batches
            .iter()
            .filter_map(|b| b.column_by_name(RANGE_INDEX))
            .filter_map(|c| c.as_any().downcast_ref::<UInt32Array>())
            .flat_map(|a| a.iter())
            .collect();
        let index = match indices.as_slice() {
            [Some(index)] => usize::try_from(*index).ok().filter(|&i| i < n),
            _ => None,
        };
        let index = index.ok_or_else(|| {
            DataFusionError::Plan(format!(
                "partition {partition} of the index source of an {node} does not hold one index below its {n} {what}"
            ))
        })?;
        selected.push(index);
    }
    Ok(selected)
}

fn properties(schema: SchemaRef, partitions: usize) -> Arc<PlanProperties> {
    Arc::new(PlanProperties::new(
        EquivalenceProperties::new(schema),
        Partitioning::UnknownPartitioning(partitions),
        EmissionType::Incremental,
        Boundedness::Bounded,
    ))
}

fn external(e: impl std::error::Error + Send + Sync + 'static) -> DataFusionError {
    DataFusionError::External(Box::new(e))
}
