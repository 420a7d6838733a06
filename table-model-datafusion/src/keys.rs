//! The scan of a key `IN` list split into point queries: [`AzureKeysExec`], each value of the list its own query
//! (the scan's `$filter` and `key eq 'value'`), the queries shared among the partitions in key order.

use crate::exec::AzureScanExec;
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

/// The scan of an [`AzureTable`](crate::AzureTable) whose filters hold a long `IN` list on a key (see
/// [`pushdown`](crate::pushdown)): a query per value, partition `i` reading the `i`-th share of the values one
/// after the other, each query a batch per page as [`AzureScanExec`] reads a range.
#[derive(Debug)]
pub struct AzureKeysExec {
    /// The scan of the other filters, projection and limit, whose query each value's query extends.
    scan: AzureScanExec,
    list: KeyList,
    /// The values of each partition: ranges of `list.values`.
    shares: Vec<std::ops::Range<usize>>,
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
        let properties =
            Arc::new(scan.properties().as_ref().clone().with_partitioning(Partitioning::UnknownPartitioning(n)));
        AzureKeysExec { scan, list, shares, properties }
    }

    /// The key (`PartitionKey` or `RowKey`) and its values, one query each, in the service's key order.
    pub fn keys(&self) -> (&str, &[String]) {
        (self.list.key, &self.list.values)
    }
}

impl DisplayAs for AzureKeysExec {
    fn fmt_as(&self, t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "AzureKeysExec: {} in {} values, partitions={}; ",
            self.list.key,
            self.list.values.len(),
            self.shares.len()
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
            return Err(DataFusionError::Internal("AzureKeysExec has no children".to_owned()));
        }
        Ok(self)
    }

    fn execute(&self, partition: usize, _context: Arc<TaskContext>) -> Result<SendableRecordBatchStream> {
        let share = self.shares.get(partition).ok_or_else(|| {
            DataFusionError::Internal(format!(
                "AzureKeysExec has {} partitions, asked for partition {partition}",
                self.shares.len()
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
        let batches = futures::stream::iter(streams).flatten();
        let schema = self.properties.eq_properties.schema().clone();
        Ok(Box::pin(RecordBatchStreamAdapter::new(schema, batches.boxed())))
    }
}
