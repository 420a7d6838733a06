//! The scan of a key `IN` list split into point queries: [`AzureKeysExec`], each value of the list its own query
//! (the scan's `$filter` and `key eq 'value'`), the queries shared among the partitions in key order.
//!
//! Layer: plans.

use crate::exec::{index_source, source_indices, with_new_source, AzureScanExec, IndexSourced};
use crate::pushdown::KeyList;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{DataFusionError, Result};
use datafusion::execution::TaskContext;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, Partitioning, PlanProperties, SendableRecordBatchStream,
};
use futures::StreamExt as _;
use std::fmt;
use std::sync::Arc;
use table_model::filter::Filter;

/// How many of a partition's point queries are read at a time: a point query is one round trip (a value of
/// PartitionKey alone may be a partition of many pages), and each holds one page while it is read.
const READS_IN_FLIGHT: usize = 8;

/// The scan of an [`AzureTable`](crate::AzureTable) whose filters hold a long `IN` list on a key (see
/// [`pushdown`](crate::pushdown)): a query per value, partition `i` reading the `i`-th share of the values, up
/// to 8 of its queries at a time, each query a batch per page as [`AzureScanExec`] reads a
/// range. The batches come as the queries answer, in no order (the node declares none).
///
/// On a Ballista cluster it has a child, as [`AzureScanExec`] has: an in-memory source whose partitions hold the
/// index of their share, so that each task reads the shares of its own partitions only.
#[derive(Clone, Debug)]
pub struct AzureKeysExec {
    /// The scan of the other filters, projection and limit, whose query each value's query extends.
    scan: AzureScanExec,
    list: KeyList,
    /// The values of each share: ranges of `list.values`.
    shares: Vec<std::ops::Range<usize>>,
    /// The index in `shares` of the share each partition reads: every share, in order, unless a source selects
    /// some.
    selected: Vec<usize>,
    /// The index source, when the node has one.
    source: Option<Arc<dyn ExecutionPlan>>,
    properties: Arc<PlanProperties>,
}

impl AzureKeysExec {
    /// The queries of `list` over `scan`'s, in up to `partitions` partitions.
    pub(crate) fn new(scan: AzureScanExec, list: KeyList, partitions: usize) -> Self {
        let n = partitions.clamp(1, list.values.len().max(1));
        let (each, extra) = (list.values.len() / n, list.values.len() % n);
        let mut start = 0;
        let shares = (0..n)
            .map(|i| {
                let end = start + each + usize::from(i < extra);
                let share = start..end;
                start = end;
                share
            })
            .collect();
        let properties = partitioned(&scan, n);
        AzureKeysExec { scan, list, shares, selected: (0..n).collect(), source: None, properties }
    }

    /// The key (`PartitionKey` or `RowKey`) and its values, one query each, in the service's key order.
    pub fn keys(&self) -> (&str, &[String]) {
        (self.list.key, &self.list.values)
    }

    /// The scan whose query each value's query extends (its ranges are not read).
    pub fn scan(&self) -> &AzureScanExec {
        &self.scan
    }

    /// How many shares the values are dealt into (the partitions of the node without a source).
    pub fn shares(&self) -> usize {
        self.shares.len()
    }

    /// The node with an index source as its child: one partition per share (see the type's documentation).
    pub(crate) fn with_index_source(self) -> Result<Self> {
        let source = index_source(self.shares.len())?;
        self.with_source(source)
    }

    /// The node reading the shares `source` names, partition by partition.
    pub(crate) fn with_source(self, source: Arc<dyn ExecutionPlan>) -> Result<Self> {
        let selected = source_indices(&source, "AzureKeysExec", "shares", self.shares.len())?;
        let properties = partitioned(&self.scan, selected.len());
        Ok(AzureKeysExec { selected, source: Some(source), properties, ..self })
    }
}

impl IndexSourced for AzureKeysExec {
    fn source(&self) -> Option<&Arc<dyn ExecutionPlan>> {
        self.source.as_ref()
    }

    fn sourced(self, source: Arc<dyn ExecutionPlan>) -> Result<Self> {
        self.with_source(source)
    }
}

fn partitioned(scan: &AzureScanExec, partitions: usize) -> Arc<PlanProperties> {
    Arc::new(scan.properties().as_ref().clone().with_partitioning(Partitioning::UnknownPartitioning(partitions)))
}

impl DisplayAs for AzureKeysExec {
    fn fmt_as(&self, t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "AzureKeysExec: {} in {} values, partitions={}; ",
            self.list.key,
            self.list.values.len(),
            self.selected.len()
        )?;
        self.scan.fmt_as(t, f)
    }
}

impl ExecutionPlan for AzureKeysExec {
    fn name(&self) -> &str {
        "AzureKeysExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        self.source.iter().collect()
    }

    /// The index source is not data: repartitioning it would only break the index of its partitions.
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
        let share = self.selected.get(partition).map(|&i| &self.shares[i]).ok_or_else(|| {
            DataFusionError::Internal(format!(
                "AzureKeysExec has {} partitions, asked for partition {partition}",
                self.selected.len()
            ))
        })?;
        let streams = self.list.values[share.clone()]
            .iter()
            .map(|value| {
                let key = self.list.filter(value);
                let filter = Filter::all(self.scan.query().filter_ref().cloned().into_iter().chain([key]));
                let query = self.scan.query().clone().filter(filter.expect("one filter at least"));
                self.scan.read(&query)
            })
            .collect::<Result<Vec<_>>>()?;
        let batches = futures::stream::iter(streams.into_iter().map(|s| s.boxed())).flatten_unordered(READS_IN_FLIGHT);
        let schema = self.properties.eq_properties.schema().clone();
        Ok(Box::pin(RecordBatchStreamAdapter::new(schema, batches.boxed())))
    }
}
