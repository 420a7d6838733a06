//! [`AzureTable`], the provider: a table of the service as a DataFusion [`TableProvider`], its schema, and the
//! plans of its scans, inserts, deletes and updates ([`pushdown`](crate::pushdown) for its filters, the plans
//! of the modules below for the rest).
//!
//! Layer: provider.

use crate::dml::{AzureDmlExec, Dml};
use crate::exec::AzureScanExec;
use crate::keys::AzureKeysExec;
use crate::pushdown;
use crate::sink::AzureSink;
use async_trait::async_trait;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::{Session, TableProvider};
use datafusion::common::SchemaExt as _;
use datafusion::common::{not_impl_err, plan_err, DFSchema, DataFusionError, Result};
use datafusion::datasource::sink::DataSinkExec;
use datafusion::logical_expr::dml::InsertOp;
use datafusion::logical_expr::{Expr, TableProviderFilterPushDown, TableType};
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_plan::ExecutionPlan;
use futures::TryStreamExt as _;
use std::num::NonZeroUsize;
use std::sync::Arc;
use table_model::client::{BulkOperation, PlanOptions, TableClient};
use table_model::filter::KeyRange;
use table_model::limits::QUERY_MAX_TOP;
use table_model::{Entity, Query, TableEntity, UpdateMode};
use table_model_arrow::batch::EntitySchema;
use table_model_arrow::infer::Inference;
use table_model_arrow::mapping::{OVERFLOW_KEY, PARTITION_KEY, ROW_KEY, TIMESTAMP};

/// A table of the service as a DataFusion table: register it with
/// [`SessionContext::register_table`](datafusion::prelude::SessionContext::register_table).
#[derive(Clone, Debug)]
pub struct AzureTable {
    table: TableClient,
    schema: Arc<EntitySchema>,
    /// Whether its scans have a range source ([`AzureScanExec`]): a table a Ballista scheduler decoded.
    range_source: bool,
    /// Whether filters become the `$filter` ([`AzureTable::with_filter_pushdown`]).
    filter_pushdown: bool,
}

impl AzureTable {
    /// A table with a schema declared by hand: `PartitionKey` and `RowKey` `Utf8` columns, a column per property
    /// (its EDM type in its metadata, or read from its Arrow type, as [`EntitySchema::new`] says), and the
    /// overflow column ([`table_model_arrow::infer::overflow_field`]) where a value that fits no column goes.
    /// Without an overflow column, reading an entity with such a value is an error.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use datafusion::arrow::datatypes::Schema;
    /// use table_model::client::TableServiceClient;
    /// use table_model::{EdmType, TableName};
    /// use table_model_arrow::infer::overflow_field;
    /// use table_model_arrow::mapping::ColumnKind;
    /// use table_model_datafusion::AzureTable;
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let service = TableServiceClient::from_connection_string("UseDevelopmentStorage=true", None)?;
    /// let schema = Schema::new(vec![
    ///     ColumnKind::String.field("PartitionKey", false),
    ///     ColumnKind::String.field("RowKey", false),
    ///     ColumnKind::for_edm(EdmType::Int64).field("Total", true),
    ///     overflow_field(),
    /// ]);
    /// let orders = AzureTable::new(service.table_client(TableName::from_static("Orders")), Arc::new(schema))?;
    /// assert_eq!(orders.entity_schema().arrow().fields().len(), 4);
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// The schema is not one of entities: a key column missing or not `Utf8`, a column that is not a property
    /// name or has no EDM type.
    pub fn new(table: TableClient, schema: SchemaRef) -> Result<Self> {
        let schema = EntitySchema::new(schema).map_err(external)?;
        Ok(AzureTable { table, schema: Arc::new(schema), range_source: false, filter_pushdown: true })
    }

    /// The table, its scans with a range source (see [`AzureScanExec`]).
    #[cfg_attr(not(feature = "codec"), allow(dead_code))]
    pub(crate) fn with_range_source(self) -> Self {
        AzureTable { range_source: true, ..self }
    }

    /// A table read as a `#[derive(TableEntity)]` struct declares it: its static [`Schema`](table_model::Schema)'s
    /// exact types ([`table_model_arrow::infer::declared_schema`]), the server's `Timestamp`, and the overflow
    /// column for properties the struct does not type.
    ///
    /// ```
    /// use datafusion::catalog::TableProvider as _;
    /// use table_model::client::TableServiceClient;
    /// use table_model::{TableEntity, TableName};
    /// use table_model_datafusion::AzureTable;
    /// #[derive(TableEntity)]
    /// struct Order {
    ///     #[table(partition_key)]
    ///     customer: String,
    ///     #[table(row_key)]
    ///     id: String,
    ///     #[table(rename = "Total")]
    ///     total: i64,
    /// }
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let service = TableServiceClient::from_connection_string("UseDevelopmentStorage=true", None)?;
    /// let orders = AzureTable::for_entity::<Order>(service.table_client(TableName::from_static("Orders")))?;
    /// let columns: Vec<String> = orders.schema().fields().iter().map(|f| f.name().clone()).collect();
    /// assert_eq!(columns, ["PartitionKey", "RowKey", "Timestamp", "Total", "@overflow"]);
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// Never for a schema the derive built (kept for a schema that is no entity's).
    pub fn for_entity<T: TableEntity>(table: TableClient) -> Result<Self> {
        AzureTable::new(table, Arc::new(table_model_arrow::infer::declared_schema(&T::SCHEMA)))
    }

    /// A table whose schema is inferred from its first `sample` entities (at least one is read), as `tablectl
    /// schema` infers it ([`Inference`]): a column per property seen, of its most frequent EDM type, and the
    /// overflow column. A property not in the sample is read into the overflow column.
    ///
    /// # Errors
    /// The failure of a request, or (never for entities the service sends) an inference that is no schema.
    pub async fn infer(table: TableClient, sample: usize) -> Result<Self> {
        let sample = sample.max(1);
        let query = Query::new().top(sample.min(QUERY_MAX_TOP));
        let mut entities = table.query::<Entity>(&query, None).map_err(external)?;
        let mut inference = Inference::new();
        let mut seen = 0;
        while seen < sample {
            let Some(entity) = entities.try_next().await.map_err(external)? else { break };
            inference.observe(&entity);
            seen += 1;
        }
        let schema = inference.to_schema().map_err(external)?;
        AzureTable::new(table, Arc::new(schema))
    }

    /// The table with filter pushdown on (the default) or off. Off, every filter is reported
    /// [`Unsupported`](TableProviderFilterPushDown::Unsupported) and no `$filter` is sent: the scan reads every
    /// entity (of its projection) and DataFusion applies the filters itself, as a baseline to measure pushdown
    /// against. The projection, `LIMIT` and the key ranges of the scan are unchanged.
    ///
    /// ```
    /// use datafusion::catalog::TableProvider as _;
    /// use datafusion::logical_expr::TableProviderFilterPushDown;
    /// use datafusion::prelude::{ident, lit};
    /// use table_model::client::TableServiceClient;
    /// use table_model::{TableEntity, TableName};
    /// use table_model_datafusion::AzureTable;
    /// #[derive(TableEntity)]
    /// struct Order {
    ///     #[table(partition_key)]
    ///     customer: String,
    ///     #[table(row_key)]
    ///     id: String,
    /// }
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let service = TableServiceClient::from_connection_string("UseDevelopmentStorage=true", None)?;
    /// let orders = AzureTable::for_entity::<Order>(service.table_client(TableName::from_static("Orders")))?;
    /// let by_customer = ident("PartitionKey").eq(lit("c-7"));
    /// assert_eq!(orders.supports_filters_pushdown(&[&by_customer])?, [TableProviderFilterPushDown::Exact]);
    /// let orders = orders.with_filter_pushdown(false);
    /// assert_eq!(orders.supports_filters_pushdown(&[&by_customer])?, [TableProviderFilterPushDown::Unsupported]);
    /// # Ok(())
    /// # }
    /// ```
    #[must_use]
    pub fn with_filter_pushdown(mut self, pushdown: bool) -> Self {
        self.filter_pushdown = pushdown;
        self
    }

    /// The schema as entities: which column holds what.
    pub fn entity_schema(&self) -> &Arc<EntitySchema> {
        &self.schema
    }

    /// The client of the table.
    pub fn client(&self) -> &TableClient {
        &self.table
    }
}

#[async_trait]
impl TableProvider for AzureTable {
    fn schema(&self) -> SchemaRef {
        self.schema.arrow().clone()
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    fn supports_filters_pushdown(&self, filters: &[&Expr]) -> Result<Vec<TableProviderFilterPushDown>> {
        if !self.filter_pushdown {
            return Ok(vec![TableProviderFilterPushDown::Unsupported; filters.len()]);
        }
        Ok(pushdown::push(self.schema.arrow(), filters).decisions)
    }

    /// Plans the scan: the filters DataFusion hands down (those [`supports_filters_pushdown`] accepted) become
    /// the `$filter`; the projected properties the `$select` (the keys alone for a projection of no column,
    /// every property when the overflow column is projected); a `limit` the `$top` (when at most 1,000) and
    /// each partition's early stop. The key space is cut into up to `target_partitions` ranges by
    /// [`TableClient::plan_ranges`] (which sends its probes now); with a `limit`, or for a point (both keys
    /// compared by `=`), one range, read in key order until the limit.
    ///
    /// [`supports_filters_pushdown`]: TableProvider::supports_filters_pushdown
    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let schema = self.schema.arrow();
        let projected = match projection {
            Some(columns) => Arc::new(schema.project(columns)?),
            None => schema.clone(),
        };
        // Without pushdown DataFusion hands down no filter (each was `Unsupported`); none is pushed regardless.
        let filters: Vec<&Expr> = filters.iter().filter(|_| self.filter_pushdown).collect();
        let pushed = pushdown::push(schema, &filters);
        let mut query = Query::new();
        if let Some(filter) = pushed.filter.clone() {
            query = query.filter(filter);
        }
        if !projected.fields().iter().any(|f| f.metadata().contains_key(OVERFLOW_KEY)) {
            let names = projected.fields().iter().map(|f| f.name().clone()).filter(|n| n != ROW_KEY);
            // `PartitionKey` alone still selects both keys: a projection of no column reads the keys only.
            query = query.select(std::iter::once(PARTITION_KEY.to_owned()).chain(names));
        }
        if let Some(limit) = limit.filter(|&l| (1..=QUERY_MAX_TOP).contains(&l)) {
            query = query.top(limit);
        }
        if let Some(list) = pushed.split {
            // A long key `IN` list: a query per value instead of ranges (see `pushdown`).
            let scan = AzureScanExec::new(self.table.clone(), query, vec![KeyRange::all()], schema, projected, limit)?;
            let exec = AzureKeysExec::new(scan, list, state.config().target_partitions());
            let exec = if self.range_source { exec.with_index_source()? } else { exec };
            return Ok(Arc::new(exec));
        }
        let ranges = match (limit, NonZeroUsize::new(state.config().target_partitions())) {
            (None, Some(n)) if n.get() > 1 && !pushed.point => self
                .table
                .plan_ranges(n, pushed.filter.as_ref(), Some(PlanOptions::side_by_side(n)))
                .await
                .map_err(external)?,
            _ => vec![KeyRange::all()],
        };
        let exec = AzureScanExec::new(self.table.clone(), query, ranges, schema, projected, limit)?;
        let exec = if self.range_source { exec.with_range_source()? } else { exec };
        Ok(Arc::new(exec))
    }

    /// Plans `INSERT INTO` (an insert of each row) and `REPLACE INTO` (an upsert replacing the entity): a
    /// [`DataSinkExec`] whose [`AzureSink`] checks each row's rules and writes with the bulk writer (see
    /// [`sink`](crate::sink) for what a row that breaks a rule writes). `INSERT OVERWRITE` is not supported.
    async fn insert_into(
        &self,
        _state: &dyn Session,
        input: Arc<dyn ExecutionPlan>,
        insert_op: InsertOp,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        self.schema().logically_equivalent_names_and_types(&input.schema())?;
        let operation = match insert_op {
            InsertOp::Append => BulkOperation::Insert,
            InsertOp::Replace => BulkOperation::Upsert(UpdateMode::Replace),
            InsertOp::Overwrite => {
                return not_impl_err!(
                    "insert overwrite into `{}` is not supported: the service cannot empty a table in one step",
                    self.table.table()
                );
            }
        };
        let sink = AzureSink::new(self.table.clone(), self.schema.clone(), operation);
        Ok(Arc::new(DataSinkExec::new(input, Arc::new(sink), None)))
    }

    /// Plans `DELETE FROM t WHERE ...` (every entity without `WHERE`): an [`AzureDmlExec`] (see [`dml`](crate::dml)).
    async fn delete_from(&self, state: &dyn Session, filters: Vec<Expr>) -> Result<Arc<dyn ExecutionPlan>> {
        let (filter, residual) = self.dml_filters(state, &filters)?;
        let partitions = state.config().target_partitions();
        let exec =
            AzureDmlExec::new(self.table.clone(), self.schema.clone(), Dml::Delete, filter, residual, partitions);
        Ok(Arc::new(exec))
    }

    /// Plans `UPDATE t SET ... WHERE ...`: an [`AzureDmlExec`] (see [`dml`](crate::dml)). The keys, `Timestamp` and
    /// `@overflow` cannot be set.
    async fn update(
        &self,
        state: &dyn Session,
        assignments: Vec<(String, Expr)>,
        filters: Vec<Expr>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let schema = self.schema.arrow();
        let df_schema = DFSchema::try_from(schema.as_ref().clone())?;
        let mut set = Vec::with_capacity(assignments.len());
        for (name, expr) in assignments {
            let Ok(i) = schema.index_of(&name) else {
                return plan_err!("update `{}`: there is no column `{name}`", self.table.table());
            };
            let field = schema.field(i);
            if [PARTITION_KEY, ROW_KEY, TIMESTAMP].contains(&name.as_str())
                || field.metadata().contains_key(OVERFLOW_KEY)
            {
                return plan_err!(
                    "update `{}`: `{name}` cannot be set (an update keeps an entity's keys; Timestamp is the \
                     server's; @overflow is made from the other columns)",
                    self.table.table()
                );
            }
            set.push((i, state.create_physical_expr(expr, &df_schema)?));
        }
        let (filter, residual) = self.dml_filters(state, &filters)?;
        let partitions = state.config().target_partitions();
        let exec =
            AzureDmlExec::new(self.table.clone(), self.schema.clone(), Dml::Update(set), filter, residual, partitions);
        Ok(Arc::new(exec))
    }
}

/// The filters of a `DELETE` or an `UPDATE` applied to each page read.
type Residual = Vec<Arc<dyn PhysicalExpr>>;

impl AzureTable {
    /// The `$filter` of a `DELETE`'s or `UPDATE`'s filters, and those to apply to each page read (all but
    /// the ones pushed exactly; with a key list split into point queries, all of them).
    fn dml_filters(
        &self,
        state: &dyn Session,
        filters: &[Expr],
    ) -> Result<(Option<table_model::filter::Filter>, Residual)> {
        let schema = self.schema.arrow();
        let refs: Vec<&Expr> = filters.iter().filter(|_| self.filter_pushdown).collect();
        let pushed = pushdown::push(schema, &refs);
        let df_schema = DFSchema::try_from(schema.as_ref().clone())?;
        let mut residual = Vec::new();
        for (i, expr) in filters.iter().enumerate() {
            let exact = pushed.split.is_none()
                && pushed.decisions.get(i).is_some_and(|d| *d == TableProviderFilterPushDown::Exact);
            if !exact {
                residual.push(state.create_physical_expr(expr.clone(), &df_schema)?);
            }
        }
        Ok((pushed.filter, residual))
    }
}

fn external(e: impl std::error::Error + Send + Sync + 'static) -> DataFusionError {
    DataFusionError::External(Box::new(e))
}
