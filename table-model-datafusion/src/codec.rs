//! Plans that read Azure Tables, through DataFusion's extension codecs (feature `codec`): [`AzureCodec`]
//! encodes an [`AzureTable`] in a logical plan and an [`AzureScanExec`] (or, for a long key `IN` list, an
//! [`AzureKeysExec`]) in a physical plan, so that a Ballista
//! cluster (its scheduler and executors built with the codec) runs them, each executor reading the key ranges
//! of the tasks it is given.
//!
//! **No secret travels in a plan.** A plan names the account's endpoint URL and the table, and carries the query
//! (`$filter`, `$select`, `$top`), the key ranges, the schemas and the limit. The process that decodes it reaches
//! the table with its own credentials, through the [`Connector`] its codec was built with: a
//! [`TableServiceClient`] (from a connection string, a key, a SAS or a token credential of that process), or a
//! closure.
//!
//! An `AzureCodec` handles its own nodes and hands every other one to the codecs it wraps: DataFusion's default
//! ones, or Ballista's (which encode Ballista's shuffle nodes), given with [`AzureCodec::with_fallback`].
//!
//! ```
//! use std::sync::Arc;
//! use datafusion::prelude::SessionContext;
//! use datafusion_proto::bytes::{physical_plan_from_bytes_with_extension_codec, physical_plan_to_bytes_with_extension_codec};
//! use table_model::client::TableServiceClient;
//! use table_model::TableName;
//! use table_model_datafusion::codec::AzureCodec;
//! use table_model_datafusion::AzureTable;
//! # use datafusion::arrow::datatypes::Schema;
//! # use table_model_arrow::mapping::ColumnKind;
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let service = TableServiceClient::from_connection_string("UseDevelopmentStorage=true", None)?;
//! # let schema = Arc::new(Schema::new(vec![
//! #     ColumnKind::String.field("PartitionKey", false),
//! #     ColumnKind::String.field("RowKey", false),
//! # ]));
//! let orders = AzureTable::new(service.table_client(TableName::from_static("Orders")), schema)?;
//! let ctx = SessionContext::new();
//! ctx.register_table("orders", Arc::new(orders))?;
//! // A point read plans no ranges, so nothing is sent here.
//! let plan = ctx
//!     .sql("SELECT * FROM orders WHERE \"PartitionKey\" = 'eu' AND \"RowKey\" = '42'")
//!     .await?
//!     .create_physical_plan()
//!     .await?;
//!
//! // The codec of another process, with that process's own way to reach the account.
//! let codec = AzureCodec::new(service.clone());
//! let bytes = physical_plan_to_bytes_with_extension_codec(plan.clone(), &codec)?;
//! let decoded = physical_plan_from_bytes_with_extension_codec(&bytes, &ctx.task_ctx(), &codec)?;
//! assert_eq!(
//!     datafusion::physical_plan::displayable(decoded.as_ref()).indent(true).to_string(),
//!     datafusion::physical_plan::displayable(plan.as_ref()).indent(true).to_string(),
//! );
//! # Ok(())
//! # }
//! ```
//!
//! Layer: codec.

use crate::pushdown::KeyList;
use crate::{AzureKeysExec, AzureScanExec, AzureTable};
use datafusion::arrow::datatypes::{Schema, SchemaRef};
use datafusion::catalog::TableProvider;
use datafusion::common::{DataFusionError, Result, TableReference};
use datafusion::datasource::file_format::FileFormatFactory;
use datafusion::execution::TaskContext;
use datafusion::logical_expr::{AggregateUDF, Extension, LogicalPlan, ScalarUDF, WindowUDF};
use datafusion::physical_plan::ExecutionPlan;
use datafusion_proto::logical_plan::{DefaultLogicalExtensionCodec, LogicalExtensionCodec};
use datafusion_proto::physical_plan::{
    DefaultPhysicalExtensionCodec, PhysicalExtensionCodec, PhysicalProtoConverterExtension,
};
use datafusion_proto::protobuf;
use prost::Message as _;
use std::fmt;
use std::sync::Arc;
use table_model::client::{TableClient, TableServiceClient};
use table_model::filter::{Filter, KeyPosition, KeyRange};
use table_model::{PartitionKey, Query, RowKey, TableName};
use table_model_arrow::mapping::{PARTITION_KEY, ROW_KEY};

/// How a process reaches a table that a plan names: with its own credentials, never any from the plan.
///
/// Implemented by [`TableServiceClient`] (the tables of its one account) and by closures
/// `Fn(&str, &TableName) -> Result<TableClient>`.
///
/// ```
/// use table_model::client::{TableClient, TableServiceClient};
/// use table_model::TableName;
/// use table_model_datafusion::codec::Connector;
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// // One client per account this process reads, each with this process's own credential.
/// let dev = TableServiceClient::from_connection_string("UseDevelopmentStorage=true", None)?;
/// let connector = move |endpoint: &str, table: &TableName| -> datafusion::common::Result<TableClient> {
///     Connector::table_client(&dev, endpoint, table)
/// };
/// let client = connector.table_client("http://127.0.0.1:10002/devstoreaccount1", &TableName::from_static("Orders"))?;
/// assert_eq!(client.table().as_str(), "Orders");
/// assert!(connector.table_client("https://other.table.core.windows.net", client.table()).is_err());
/// # Ok(())
/// # }
/// ```
pub trait Connector: Send + Sync {
    /// The client of `table` in the account whose endpoint URL ([`Endpoint::url`]) is `endpoint`.
    ///
    /// # Errors
    /// An account this process cannot reach.
    ///
    /// [`Endpoint::url`]: table_model::Endpoint::url
    fn table_client(&self, endpoint: &str, table: &TableName) -> Result<TableClient>;
}

impl Connector for TableServiceClient {
    /// The client of `table` when `endpoint` is this client's endpoint URL.
    ///
    /// # Errors
    /// [`DataFusionError::Plan`] when `endpoint` names another account.
    fn table_client(&self, endpoint: &str, table: &TableName) -> Result<TableClient> {
        let own = self.endpoint().url();
        if endpoint != own {
            return Err(DataFusionError::Plan(format!(
                "the plan reads table {table} at {endpoint}, but this process reaches {own} only: give its codec \
                 a connector for that account"
            )));
        }
        Ok(TableServiceClient::table_client(self, table))
    }
}

impl<F> Connector for F
where
    F: Fn(&str, &TableName) -> Result<TableClient> + Send + Sync,
{
    fn table_client(&self, endpoint: &str, table: &TableName) -> Result<TableClient> {
        self(endpoint, table)
    }
}

/// The logical and physical extension codec of plans that read Azure Tables; see the [module](self).
#[derive(Clone)]
pub struct AzureCodec {
    connector: Arc<dyn Connector>,
    logical: Arc<dyn LogicalExtensionCodec>,
    physical: Arc<dyn PhysicalExtensionCodec>,
}

impl fmt::Debug for AzureCodec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AzureCodec")
            .field("logical", &self.logical)
            .field("physical", &self.physical)
            .finish_non_exhaustive()
    }
}

impl AzureCodec {
    /// A codec that reaches the tables plans name through `connector`, and hands other nodes to DataFusion's
    /// default codecs.
    pub fn new(connector: impl Connector + 'static) -> Self {
        AzureCodec {
            connector: Arc::new(connector),
            logical: Arc::new(DefaultLogicalExtensionCodec {}),
            physical: Arc::new(DefaultPhysicalExtensionCodec {}),
        }
    }

    /// The codec, handing the nodes that are not its own to `logical` and `physical`: for Ballista,
    /// `BallistaLogicalExtensionCodec::default()` and `BallistaPhysicalExtensionCodec::default()`, which encode
    /// its shuffle and cache nodes (Ballista uses the codec given to it in their place, not beside them).
    #[must_use]
    pub fn with_fallback(
        mut self,
        logical: Arc<dyn LogicalExtensionCodec>,
        physical: Arc<dyn PhysicalExtensionCodec>,
    ) -> Self {
        self.logical = logical;
        self.physical = physical;
        self
    }
}

/// Why a plan's bytes could not be read back: always a [`DataFusionError::External`] holding this, never a panic.
#[derive(Debug)]
pub struct CodecError {
    node: &'static str,
    kind: CodecErrorKind,
}

/// What was wrong with a node's bytes.
#[derive(Debug)]
#[non_exhaustive]
pub enum CodecErrorKind {
    /// Not a protobuf message of the node.
    Malformed(prost::DecodeError),
    /// A field the node needs is absent.
    Missing(&'static str),
    /// A field holds a value its type refuses (a table name, a key, a range, a `$filter`, a schema, a number).
    Invalid {
        /// The field.
        field: &'static str,
        /// Why, in the words of the type that refused it.
        reason: String,
    },
}

impl CodecError {
    /// What was wrong.
    pub fn kind(&self) -> &CodecErrorKind {
        &self.kind
    }

    fn error(node: &'static str, kind: CodecErrorKind) -> DataFusionError {
        DataFusionError::External(Box::new(CodecError { node, kind }))
    }

    fn invalid(node: &'static str, field: &'static str, reason: impl fmt::Display) -> DataFusionError {
        CodecError::error(node, CodecErrorKind::Invalid { field, reason: reason.to_string() })
    }
}

impl fmt::Display for CodecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let node = self.node;
        match &self.kind {
            CodecErrorKind::Malformed(e) => write!(f, "malformed {node} in a plan: {e}"),
            CodecErrorKind::Missing(field) => write!(f, "malformed {node} in a plan: `{field}` is missing"),
            CodecErrorKind::Invalid { field, reason } => {
                write!(f, "malformed {node} in a plan: `{field}` is invalid: {reason}")
            }
        }
    }
}

impl std::error::Error for CodecError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            CodecErrorKind::Malformed(e) => Some(e),
            _ => None,
        }
    }
}

// The first bytes of the codec's own nodes. A protobuf message never starts with a zero byte (field number 0 is
// invalid), so no node of a wrapped codec is mistaken for one of these.
const SCAN_TAG: &[u8] = b"\0table-model/AzureScanExec/1\0";
const TABLE_TAG: &[u8] = b"\0table-model/AzureTable/1\0";
const KEYS_TAG: &[u8] = b"\0table-model/AzureKeysExec/1\0";
const SCAN: &str = "AzureScanExec";
const KEYS: &str = "AzureKeysExec";
const TABLE: &str = "AzureTable";

/// An [`AzureScanExec`] on the wire.
#[derive(Clone, PartialEq, prost::Message)]
struct ScanNode {
    #[prost(message, optional, tag = "1")]
    table: Option<TableNode>,
    /// `$filter`, as the service reads it.
    #[prost(string, optional, tag = "2")]
    filter: Option<String>,
    /// `$select`'s names (empty: every property).
    #[prost(string, repeated, tag = "3")]
    select: Vec<String>,
    #[prost(uint64, optional, tag = "4")]
    top: Option<u64>,
    #[prost(message, repeated, tag = "5")]
    ranges: Vec<RangeNode>,
    /// The schema the entities are read into.
    #[prost(message, optional, tag = "6")]
    read: Option<protobuf::Schema>,
    /// The schema the scan returns.
    #[prost(message, optional, tag = "7")]
    projected: Option<protobuf::Schema>,
    #[prost(uint64, optional, tag = "8")]
    limit: Option<u64>,
}

/// An [`AzureKeysExec`] on the wire: its scan, and the key and values of its `IN` list.
#[derive(Clone, PartialEq, prost::Message)]
struct KeysNode {
    #[prost(message, optional, tag = "1")]
    scan: Option<ScanNode>,
    /// `PartitionKey` or `RowKey`.
    #[prost(string, tag = "2")]
    key: String,
    /// The distinct values, in the service's key order.
    #[prost(string, repeated, tag = "3")]
    values: Vec<String>,
    /// How many shares the values are dealt into.
    #[prost(uint64, tag = "4")]
    shares: u64,
}

/// An [`AzureTable`] on the wire: where it is and its schema (no credential).
#[derive(Clone, PartialEq, prost::Message)]
struct TableNode {
    /// The account's endpoint URL.
    #[prost(string, tag = "1")]
    endpoint: String,
    #[prost(string, tag = "2")]
    name: String,
    #[prost(message, optional, tag = "3")]
    schema: Option<protobuf::Schema>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct RangeNode {
    #[prost(message, optional, tag = "1")]
    start: Option<PositionNode>,
    #[prost(message, optional, tag = "2")]
    end: Option<PositionNode>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct PositionNode {
    #[prost(string, tag = "1")]
    partition_key: String,
    #[prost(string, tag = "2")]
    row_key: String,
}

fn encode_schema(schema: &Schema) -> Result<protobuf::Schema> {
    protobuf::Schema::try_from(schema).map_err(|e| DataFusionError::Internal(format!("schema of a scan: {e}")))
}

fn decode_schema(node: &'static str, field: &'static str, schema: Option<&protobuf::Schema>) -> Result<SchemaRef> {
    let schema = schema.ok_or_else(|| CodecError::error(node, CodecErrorKind::Missing(field)))?;
    Ok(Arc::new(Schema::try_from(schema).map_err(|e| CodecError::invalid(node, field, e))?))
}

fn encode_table(table: &TableClient, schema: &Schema) -> Result<TableNode> {
    Ok(TableNode {
        endpoint: table.endpoint().url().to_owned(),
        name: table.table().as_str().to_owned(),
        schema: Some(encode_schema(schema)?),
    })
}

fn encode_position(position: &KeyPosition) -> PositionNode {
    PositionNode {
        partition_key: position.partition_key.as_str().to_owned(),
        row_key: position.row_key.as_str().to_owned(),
    }
}

fn decode_position(position: &PositionNode) -> Result<KeyPosition> {
    let partition_key = PartitionKey::new(position.partition_key.clone())
        .map_err(|e| CodecError::invalid(SCAN, "ranges.partition_key", e))?;
    let row_key = RowKey::new(position.row_key.clone()).map_err(|e| CodecError::invalid(SCAN, "ranges.row_key", e))?;
    Ok(KeyPosition::new(partition_key, row_key))
}

fn to_u64(n: usize) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}

fn to_usize(node: &'static str, field: &'static str, n: u64) -> Result<usize> {
    usize::try_from(n).map_err(|e| CodecError::invalid(node, field, e))
}

impl AzureCodec {
    /// The bytes of a scan: [`SCAN_TAG`], then its [`ScanNode`].
    fn encode_scan(scan: &AzureScanExec, buf: &mut Vec<u8>) -> Result<()> {
        let node = AzureCodec::scan_node(scan)?;
        buf.extend_from_slice(SCAN_TAG);
        node.encode(buf).map_err(|e| DataFusionError::Internal(format!("encoding a scan: {e}")))
    }

    /// The bytes of a key `IN` list's node: [`KEYS_TAG`], then its [`KeysNode`].
    fn encode_keys(keys: &AzureKeysExec, buf: &mut Vec<u8>) -> Result<()> {
        let (key, values) = keys.keys();
        let node = KeysNode {
            scan: Some(AzureCodec::scan_node(keys.scan())?),
            key: key.to_owned(),
            values: values.to_vec(),
            shares: to_u64(keys.shares()),
        };
        buf.extend_from_slice(KEYS_TAG);
        node.encode(buf).map_err(|e| DataFusionError::Internal(format!("encoding a key list: {e}")))
    }

    fn decode_keys(&self, bytes: &[u8]) -> Result<AzureKeysExec> {
        let node = KeysNode::decode(bytes).map_err(|e| CodecError::error(KEYS, CodecErrorKind::Malformed(e)))?;
        let scan = node.scan.as_ref().ok_or_else(|| CodecError::error(KEYS, CodecErrorKind::Missing("scan")))?;
        let scan = self.scan_from_node(scan)?;
        let key = [PARTITION_KEY, ROW_KEY].into_iter().find(|k| *k == node.key).ok_or_else(|| {
            CodecError::invalid(KEYS, "key", format!("`{}` is neither PartitionKey nor RowKey", node.key))
        })?;
        let list = KeyList { key, values: node.values };
        if list.values.is_empty() {
            return Err(CodecError::error(KEYS, CodecErrorKind::Missing("values")));
        }
        for pair in list.values.windows(2) {
            if table_model::key::service_order(&pair[0], &pair[1]) != std::cmp::Ordering::Less {
                let reason =
                    format!("`{}` is not before `{}`, as the list's distinct values must be", pair[0], pair[1]);
                return Err(CodecError::invalid(KEYS, "values", reason));
            }
        }
        for value in &list.values {
            table_model::EdmString::new(value.as_str()).map_err(|e| CodecError::invalid(KEYS, "values", e))?;
        }
        let shares = to_usize(KEYS, "shares", node.shares)?;
        if shares == 0 {
            return Err(CodecError::invalid(KEYS, "shares", "a key list is dealt into one share at least"));
        }
        let keys = AzureKeysExec::new(scan, list, shares);
        if keys.shares() != shares {
            let reason = format!("{shares} shares for {} values", keys.keys().1.len());
            return Err(CodecError::invalid(KEYS, "shares", reason));
        }
        Ok(keys)
    }

    /// A scan as its [`ScanNode`].
    fn scan_node(scan: &AzureScanExec) -> Result<ScanNode> {
        let params = scan.query().render().map_err(|e| DataFusionError::Internal(format!("query of a scan: {e}")))?;
        let param = |name: &str| params.iter().find(|(n, _)| *n == name).map(|(_, v)| v.clone());
        let node = ScanNode {
            // The read schema stands for the table's: the scan rebuilds itself from it alone.
            table: Some(TableNode {
                endpoint: scan.table().endpoint().url().to_owned(),
                name: scan.table().table().as_str().to_owned(),
                schema: None,
            }),
            filter: param("$filter"),
            select: param("$select").map(|s| s.split(',').map(str::to_owned).collect()).unwrap_or_default(),
            top: scan.query().top_value().map(to_u64),
            ranges: scan
                .ranges()
                .iter()
                .map(|r| RangeNode { start: r.start().map(encode_position), end: r.end().map(encode_position) })
                .collect(),
            read: Some(encode_schema(scan.read_schema())?),
            projected: Some(encode_schema(&scan.schema())?),
            limit: scan.limit().map(to_u64),
        };
        Ok(node)
    }

    fn decode_scan(&self, bytes: &[u8]) -> Result<AzureScanExec> {
        let node = ScanNode::decode(bytes).map_err(|e| CodecError::error(SCAN, CodecErrorKind::Malformed(e)))?;
        self.scan_from_node(&node)
    }

    fn scan_from_node(&self, node: &ScanNode) -> Result<AzureScanExec> {
        let table = node.table.as_ref().ok_or_else(|| CodecError::error(SCAN, CodecErrorKind::Missing("table")))?;
        let client = self.client(SCAN, table)?;
        let mut query = Query::new();
        if let Some(filter) = &node.filter {
            query = query.filter(Filter::parse(filter).map_err(|e| CodecError::invalid(SCAN, "filter", e))?);
        }
        query = query.select(node.select.iter().cloned());
        if let Some(top) = node.top {
            query = query.top(to_usize(SCAN, "top", top)?);
        }
        // What the service would refuse is refused here, before any request.
        query.render().map_err(|e| CodecError::invalid(SCAN, "query", e))?;
        let ranges = node
            .ranges
            .iter()
            .map(|r| {
                let start = r.start.as_ref().map(decode_position).transpose()?;
                let end = r.end.as_ref().map(decode_position).transpose()?;
                KeyRange::new(start, end).map_err(|e| CodecError::invalid(SCAN, "ranges", e))
            })
            .collect::<Result<Vec<_>>>()?;
        if ranges.is_empty() {
            return Err(CodecError::error(SCAN, CodecErrorKind::Missing("ranges")));
        }
        // A scan's ranges are in key order and apart, as the planner cuts them: no entity is read twice.
        for pair in ranges.windows(2) {
            let in_order = matches!((pair[0].end(), pair[1].start()), (Some(end), Some(start)) if end <= start);
            if !in_order {
                let reason = format!("range {} is not before range {}, as a scan's ranges must be", pair[0], pair[1]);
                return Err(CodecError::invalid(SCAN, "ranges", reason));
            }
        }
        let read = decode_schema(SCAN, "read", node.read.as_ref())?;
        let projected = decode_schema(SCAN, "projected", node.projected.as_ref())?;
        let limit = node.limit.map(|l| to_usize(SCAN, "limit", l)).transpose()?;
        AzureScanExec::new(client, query, ranges, &read, projected, limit)
            .map_err(|e| CodecError::invalid(SCAN, "schemas", e))
    }

    fn client(&self, node: &'static str, table: &TableNode) -> Result<TableClient> {
        let name = TableName::new(table.name.clone()).map_err(|e| CodecError::invalid(node, "table", e))?;
        self.connector.table_client(&table.endpoint, &name)
    }
}

impl PhysicalExtensionCodec for AzureCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[Arc<dyn ExecutionPlan>],
        ctx: &TaskContext,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        if let Some(bytes) = buf.strip_prefix(KEYS_TAG) {
            let keys = self.decode_keys(bytes)?;
            return match inputs {
                [] => Ok(Arc::new(keys)),
                [source] => {
                    Ok(Arc::new(keys.with_source(source.clone()).map_err(|e| CodecError::invalid(KEYS, "inputs", e))?))
                }
                _ => Err(CodecError::invalid(
                    KEYS,
                    "inputs",
                    format!("a key list has at most one input, its index source, not {}", inputs.len()),
                )),
            };
        }
        let Some(bytes) = buf.strip_prefix(SCAN_TAG) else {
            return self.physical.try_decode(buf, inputs, ctx, proto_converter);
        };
        let scan = self.decode_scan(bytes)?;
        match inputs {
            [] => Ok(Arc::new(scan)),
            [source] => {
                Ok(Arc::new(scan.with_source(source.clone()).map_err(|e| CodecError::invalid(SCAN, "inputs", e))?))
            }
            _ => Err(CodecError::invalid(
                SCAN,
                "inputs",
                format!("a scan has at most one input, its range source, not {}", inputs.len()),
            )),
        }
    }

    fn try_encode(
        &self,
        node: Arc<dyn ExecutionPlan>,
        buf: &mut Vec<u8>,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<()> {
        if let Some(scan) = node.downcast_ref::<AzureScanExec>() {
            return AzureCodec::encode_scan(scan, buf);
        }
        match node.downcast_ref::<AzureKeysExec>() {
            Some(keys) => AzureCodec::encode_keys(keys, buf),
            None => self.physical.try_encode(node, buf, proto_converter),
        }
    }

    fn try_decode_udf(&self, name: &str, buf: &[u8]) -> Result<Arc<ScalarUDF>> {
        self.physical.try_decode_udf(name, buf)
    }

    fn try_encode_udf(&self, node: &ScalarUDF, buf: &mut Vec<u8>) -> Result<()> {
        self.physical.try_encode_udf(node, buf)
    }

    fn try_decode_udaf(&self, name: &str, buf: &[u8]) -> Result<Arc<AggregateUDF>> {
        self.physical.try_decode_udaf(name, buf)
    }

    fn try_encode_udaf(&self, node: &AggregateUDF, buf: &mut Vec<u8>) -> Result<()> {
        self.physical.try_encode_udaf(node, buf)
    }

    fn try_decode_udwf(&self, name: &str, buf: &[u8]) -> Result<Arc<WindowUDF>> {
        self.physical.try_decode_udwf(name, buf)
    }

    fn try_encode_udwf(&self, node: &WindowUDF, buf: &mut Vec<u8>) -> Result<()> {
        self.physical.try_encode_udwf(node, buf)
    }
}

impl LogicalExtensionCodec for AzureCodec {
    fn try_decode(&self, buf: &[u8], inputs: &[LogicalPlan], ctx: &TaskContext) -> Result<Extension> {
        self.logical.try_decode(buf, inputs, ctx)
    }

    fn try_encode(&self, node: &Extension, buf: &mut Vec<u8>) -> Result<()> {
        self.logical.try_encode(node, buf)
    }

    fn try_decode_table_provider(
        &self,
        buf: &[u8],
        table_ref: &TableReference,
        schema: SchemaRef,
        ctx: &TaskContext,
    ) -> Result<Arc<dyn TableProvider>> {
        let Some(bytes) = buf.strip_prefix(TABLE_TAG) else {
            return self.logical.try_decode_table_provider(buf, table_ref, schema, ctx);
        };
        let node = TableNode::decode(bytes).map_err(|e| CodecError::error(TABLE, CodecErrorKind::Malformed(e)))?;
        let client = self.client(TABLE, &node)?;
        let schema = decode_schema(TABLE, "schema", node.schema.as_ref())?;
        let table = AzureTable::new(client, schema).map_err(|e| CodecError::invalid(TABLE, "schema", e))?;
        // A decoded table is on a cluster: its scans give each task its own ranges.
        Ok(Arc::new(table.with_range_source()))
    }

    fn try_encode_table_provider(
        &self,
        table_ref: &TableReference,
        node: Arc<dyn TableProvider>,
        buf: &mut Vec<u8>,
    ) -> Result<()> {
        let Some(table) = node.downcast_ref::<AzureTable>() else {
            return self.logical.try_encode_table_provider(table_ref, node, buf);
        };
        let message = encode_table(table.client(), table.entity_schema().arrow())?;
        buf.extend_from_slice(TABLE_TAG);
        message.encode(buf).map_err(|e| DataFusionError::Internal(format!("encoding a table: {e}")))
    }

    fn try_decode_file_format(&self, buf: &[u8], ctx: &TaskContext) -> Result<Arc<dyn FileFormatFactory>> {
        self.logical.try_decode_file_format(buf, ctx)
    }

    fn try_encode_file_format(&self, buf: &mut Vec<u8>, node: Arc<dyn FileFormatFactory>) -> Result<()> {
        self.logical.try_encode_file_format(buf, node)
    }

    fn try_decode_udf(&self, name: &str, buf: &[u8]) -> Result<Arc<ScalarUDF>> {
        self.logical.try_decode_udf(name, buf)
    }

    fn try_encode_udf(&self, node: &ScalarUDF, buf: &mut Vec<u8>) -> Result<()> {
        self.logical.try_encode_udf(node, buf)
    }

    fn try_decode_udaf(&self, name: &str, buf: &[u8]) -> Result<Arc<AggregateUDF>> {
        self.logical.try_decode_udaf(name, buf)
    }

    fn try_encode_udaf(&self, node: &AggregateUDF, buf: &mut Vec<u8>) -> Result<()> {
        self.logical.try_encode_udaf(node, buf)
    }

    fn try_decode_udwf(&self, name: &str, buf: &[u8]) -> Result<Arc<WindowUDF>> {
        self.logical.try_decode_udwf(name, buf)
    }

    fn try_encode_udwf(&self, node: &WindowUDF, buf: &mut Vec<u8>) -> Result<()> {
        self.logical.try_encode_udwf(node, buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::datatypes::Field;
    use datafusion::datasource::memory::MemorySourceConfig;
    use datafusion::datasource::source::DataSourceExec;
    use datafusion::physical_plan::execution_plan::replace_children_if_necessary;
    use datafusion_proto::bytes::{
        logical_plan_from_bytes_with_extension_codec, logical_plan_to_bytes_with_extension_codec,
        physical_plan_from_bytes_with_extension_codec, physical_plan_to_bytes_with_extension_codec,
    };
    use datafusion_proto::physical_plan::DefaultPhysicalProtoConverter;
    use table_model::EdmType;
    use table_model_arrow::infer::overflow_field;
    use table_model_arrow::mapping::ColumnKind;

    const ENDPOINT: &str = "https://acct.table.core.windows.net";

    fn service() -> TableServiceClient {
        let cs = "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=c2VjcmV0;EndpointSuffix=core.windows.net";
        TableServiceClient::from_connection_string(cs, None).unwrap()
    }

    /// Every EDM type, with its metadata, and the overflow column.
    fn schema() -> SchemaRef {
        let mut fields: Vec<Field> =
            vec![ColumnKind::String.field("PartitionKey", false), ColumnKind::String.field("RowKey", false)];
        for (name, edm) in [
            ("S", EdmType::String),
            ("I", EdmType::Int32),
            ("L", EdmType::Int64),
            ("D", EdmType::Double),
            ("B", EdmType::Boolean),
            ("T", EdmType::DateTime),
            ("G", EdmType::Guid),
            ("X", EdmType::Binary),
        ] {
            fields.push(ColumnKind::for_edm(edm).field(name, true));
        }
        fields.push(overflow_field());
        Arc::new(Schema::new(fields))
    }

    /// A scan with a filter of every literal type, a `$select`, a `$top`, ranges with quotes, non-ASCII and
    /// open ends, and a limit.
    fn scan() -> AzureScanExec {
        let filter = Filter::parse(
            "S eq 'o''k é' and I ge -5 and L lt 9000000000L and D le 2.5 and B eq true and \
             T gt datetime'2024-01-02T03:04:05.1234567Z' and G eq guid'9e3779b9-7f4a-7c15-0000-000000000001' \
             and X eq X'00ff'",
        )
        .unwrap();
        let query = Query::new().filter(filter).select(["S", "I", "T"]).top(500);
        let at = |pk: &str, rk: &str| KeyPosition::new(PartitionKey::new(pk).unwrap(), RowKey::new(rk).unwrap());
        let ranges = vec![
            KeyRange::new(None, Some(at("o'k", ""))).unwrap(),
            KeyRange::new(Some(at("o'k", "")), Some(at("é\u{1F600}", "r'1"))).unwrap(),
            KeyRange::new(Some(at("é\u{1F600}", "r'1")), None).unwrap(),
        ];
        let schema = schema();
        let projected = Arc::new(schema.project(&[0, 2, 3, 7]).unwrap());
        let table = service().table_client(TableName::from_static("Orders"));
        AzureScanExec::new(table, query, ranges, &schema, projected, Some(42)).unwrap()
    }

    /// One codec for every test (a client builds its HTTP transport once).
    fn codec() -> &'static AzureCodec {
        static CODEC: std::sync::LazyLock<AzureCodec> = std::sync::LazyLock::new(|| AzureCodec::new(service()));
        &CODEC
    }

    fn decode(buf: &[u8]) -> Result<Arc<dyn ExecutionPlan>> {
        PhysicalExtensionCodec::try_decode(
            codec(),
            buf,
            &[],
            &TaskContext::default(),
            &DefaultPhysicalProtoConverter {},
        )
    }

    fn encoded_scan() -> Vec<u8> {
        let mut buf = Vec::new();
        PhysicalExtensionCodec::try_encode(codec(), Arc::new(scan()), &mut buf, &DefaultPhysicalProtoConverter {})
            .unwrap();
        buf
    }

    fn codec_error(e: DataFusionError) -> CodecError {
        match e {
            DataFusionError::External(e) => *e.downcast::<CodecError>().unwrap(),
            other => panic!("not a codec error: {other}"),
        }
    }

    #[test]
    fn a_scan_decodes_to_the_scan_encoded() {
        let original = scan();
        let bytes = physical_plan_to_bytes_with_extension_codec(Arc::new(scan()), codec()).unwrap();
        let decoded = physical_plan_from_bytes_with_extension_codec(&bytes, &TaskContext::default(), codec()).unwrap();
        let decoded = decoded.downcast_ref::<AzureScanExec>().expect("an AzureScanExec");
        assert_eq!(decoded.ranges(), original.ranges());
        assert_eq!(decoded.query().render().unwrap(), original.query().render().unwrap());
        assert_eq!(decoded.query().top_value(), Some(500));
        assert_eq!(decoded.read_schema(), original.read_schema());
        assert_eq!(decoded.schema(), original.schema());
        assert_eq!(decoded.limit(), Some(42));
        assert_eq!(decoded.table().table().as_str(), "Orders");
        assert_eq!(decoded.table().endpoint().url(), ENDPOINT);
        assert_eq!(decoded.properties().partitioning.partition_count(), 3);
    }

    /// The scan of a task on a Ballista cluster: the scheduler keeps the partitions of the task in the range
    /// source (as it slices any in-memory source), and the scan decoded reads those ranges only.
    #[test]
    fn a_scan_restricted_to_a_task_reads_its_ranges_only() {
        let scan = scan().with_range_source().unwrap();
        assert_eq!(scan.properties().partitioning.partition_count(), 3);
        let source = scan.children()[0].clone();
        let config = (source.downcast_ref::<DataSourceExec>().unwrap().data_source().as_ref() as &dyn std::any::Any)
            .downcast_ref::<MemorySourceConfig>()
            .unwrap()
            .clone();
        let task = MemorySourceConfig::try_new_exec(&[config.partitions()[2].clone()], source.schema(), None).unwrap();
        let restricted = replace_children_if_necessary(Arc::new(scan), vec![task]).unwrap();
        let bytes = physical_plan_to_bytes_with_extension_codec(restricted, codec()).unwrap();
        let decoded = physical_plan_from_bytes_with_extension_codec(&bytes, &TaskContext::default(), codec()).unwrap();
        let decoded = decoded.downcast_ref::<AzureScanExec>().unwrap();
        assert_eq!(decoded.properties().partitioning.partition_count(), 1);
        assert_eq!(decoded.partition_range(0), Some(&scan_ranges()[2]));
        assert_eq!(decoded.partition_range(1), None);
        assert_eq!(decoded.ranges(), scan_ranges());

        // Any other child is refused.
        let other = Arc::new(datafusion::physical_plan::empty::EmptyExec::new(source.schema()));
        let e = replace_children_if_necessary(Arc::new(decoded.clone()), vec![other]).unwrap_err();
        assert_eq!(
            e.strip_backtrace(),
            "Error during planning: the child of an AzureScanExec must be its in-memory source of indices, not \
             EmptyExec"
        );
    }

    fn scan_ranges() -> Vec<KeyRange> {
        scan().ranges().to_vec()
    }

    fn keys(values: &[&str], shares: usize) -> AzureKeysExec {
        let list = KeyList { key: PARTITION_KEY, values: values.iter().map(|v| (*v).to_owned()).collect() };
        AzureKeysExec::new(scan(), list, shares)
    }

    fn encode_keys_node(node: &KeysNode) -> Vec<u8> {
        let mut buf = KEYS_TAG.to_vec();
        node.encode(&mut buf).unwrap();
        buf
    }

    #[test]
    fn a_key_list_decodes_to_the_list_encoded_and_a_task_reads_its_shares_only() {
        // In the service's order: by UTF-16 unit, so the emoji (a surrogate pair) before U+FF61.
        let values = ["a", "o'k", "z", "é", "😀", "\u{FF61}"];
        let original = keys(&values, 4);
        let bytes = physical_plan_to_bytes_with_extension_codec(Arc::new(original.clone()), codec()).unwrap();
        let decoded = physical_plan_from_bytes_with_extension_codec(&bytes, &TaskContext::default(), codec()).unwrap();
        let decoded = decoded.downcast_ref::<AzureKeysExec>().expect("an AzureKeysExec");
        assert_eq!(decoded.keys(), original.keys());
        assert_eq!(decoded.shares(), 4);
        assert_eq!(decoded.scan().query().render().unwrap(), original.scan().query().render().unwrap());
        assert_eq!(decoded.schema(), original.schema());

        // With its index source, a slice of the source (what Ballista gives a task) restricts the partitions.
        let sourced = original.clone().with_index_source().unwrap();
        assert_eq!(sourced.properties().partitioning.partition_count(), 4);
        let source = sourced.children()[0].clone();
        let config = source.downcast_ref::<DataSourceExec>().unwrap().data_source().as_ref() as &dyn std::any::Any;
        let config = config.downcast_ref::<MemorySourceConfig>().unwrap();
        let slice = MemorySourceConfig::try_new_exec(&config.partitions()[3..], source.schema(), None).unwrap();
        // A node without a source takes no child.
        #[allow(deprecated)] // What `replace_children` calls after its own count check.
        let e = Arc::new(original.clone()).with_new_children(vec![slice.clone()]).unwrap_err();
        assert!(e.strip_backtrace().starts_with("Internal error: AzureKeysExec has 0 children, given 1"), "{e}");
        let restricted = replace_children_if_necessary(Arc::new(sourced), vec![slice]).unwrap();
        let bytes = physical_plan_to_bytes_with_extension_codec(restricted, codec()).unwrap();
        let decoded = physical_plan_from_bytes_with_extension_codec(&bytes, &TaskContext::default(), codec()).unwrap();
        assert_eq!(decoded.properties().partitioning.partition_count(), 1);
        assert_eq!(decoded.children().len(), 1);
    }

    #[test]
    fn a_key_list_that_no_planner_makes_is_refused() {
        let node = |key: &str, values: &[&str], shares: u64| KeysNode {
            scan: Some(AzureCodec::scan_node(&scan()).unwrap()),
            key: key.to_owned(),
            values: values.iter().map(|v| (*v).to_owned()).collect(),
            shares,
        };
        let message = |n: KeysNode| codec_error(decode(&encode_keys_node(&n)).unwrap_err()).to_string();
        assert_eq!(
            message(node("Name", &["a"], 1)),
            "malformed AzureKeysExec in a plan: `key` is invalid: `Name` is neither PartitionKey nor RowKey"
        );
        assert_eq!(
            message(node(PARTITION_KEY, &["b", "a"], 1)),
            "malformed AzureKeysExec in a plan: `values` is invalid: `b` is not before `a`, as the list's distinct \
             values must be"
        );
        assert_eq!(
            message(node(PARTITION_KEY, &["a", "a"], 1)),
            "malformed AzureKeysExec in a plan: `values` is invalid: `a` is not before `a`, as the list's distinct \
             values must be"
        );
        assert_eq!(message(node(PARTITION_KEY, &[], 1)), "malformed AzureKeysExec in a plan: `values` is missing");
        assert_eq!(
            message(node(PARTITION_KEY, &["a", "b"], 0)),
            "malformed AzureKeysExec in a plan: `shares` is invalid: a key list is dealt into one share at least"
        );
        assert_eq!(
            message(node(PARTITION_KEY, &["a", "b"], 3)),
            "malformed AzureKeysExec in a plan: `shares` is invalid: 3 shares for 2 values"
        );
        // Every truncation is an error, never a panic.
        let bytes = encode_keys_node(&node(PARTITION_KEY, &["a", "b"], 2));
        for end in KEYS_TAG.len()..bytes.len() {
            let _ = decode(&bytes[..end]);
        }
    }

    #[test]
    fn a_plan_carries_no_secret() {
        let bytes = encoded_scan();
        let text = String::from_utf8_lossy(&bytes);
        assert!(text.contains(ENDPOINT) && text.contains("Orders"));
        assert!(!text.contains("c2VjcmV0") && !text.contains("AccountKey"), "{text}");
    }

    #[test]
    fn a_table_decodes_to_the_table_encoded() {
        let table = AzureTable::new(service().table_client(TableName::from_static("Orders")), schema()).unwrap();
        let mut buf = Vec::new();
        let reference = TableReference::bare("orders");
        LogicalExtensionCodec::try_encode_table_provider(codec(), &reference, Arc::new(table), &mut buf).unwrap();
        let decoded = codec().try_decode_table_provider(&buf, &reference, schema(), &TaskContext::default()).unwrap();
        let decoded = decoded.downcast_ref::<AzureTable>().expect("an AzureTable");
        assert_eq!(decoded.entity_schema().arrow(), &schema());
        assert_eq!(decoded.client().table().as_str(), "Orders");
        assert_eq!(decoded.client().endpoint().url(), ENDPOINT);
        assert!(!String::from_utf8_lossy(&buf).contains("c2VjcmV0"));
    }

    #[tokio::test]
    async fn a_logical_plan_with_a_table_round_trips() {
        let ctx = datafusion::prelude::SessionContext::new();
        let table = AzureTable::new(service().table_client(TableName::from_static("Orders")), schema()).unwrap();
        ctx.register_table("orders", Arc::new(table)).unwrap();
        let plan = ctx
            .sql("SELECT \"PartitionKey\", count(*) FROM orders WHERE \"I\" > 3 GROUP BY 1")
            .await
            .unwrap()
            .into_unoptimized_plan();
        let bytes = logical_plan_to_bytes_with_extension_codec(&plan, codec()).unwrap();
        let decoded = logical_plan_from_bytes_with_extension_codec(&bytes, &ctx.task_ctx(), codec()).unwrap();
        assert_eq!(decoded, plan);
    }

    #[test]
    fn every_truncation_of_a_scan_is_an_error_never_a_panic() {
        let bytes = encoded_scan();
        // The limit is the message's last field (2 bytes): protobuf has no end marker, so the message without
        // it is a scan without a limit. Every other truncation lacks a field the scan needs, or cuts one.
        let without_limit = bytes.len() - 2;
        for end in 0..bytes.len() {
            match decode(&bytes[..end]) {
                Ok(plan) if end == without_limit => {
                    assert_eq!(plan.downcast_ref::<AzureScanExec>().unwrap().limit(), None);
                }
                Ok(_) => panic!("{end} of {} bytes decoded", bytes.len()),
                Err(_) => {}
            }
        }
        let mut flipped = bytes.clone();
        for i in SCAN_TAG.len()..bytes.len() {
            flipped[i] ^= 0xff;
            let _ = decode(&flipped);
            flipped[i] ^= 0xff;
        }
    }

    #[test]
    fn a_malformed_scan_is_a_typed_error() {
        let mut buf = SCAN_TAG.to_vec();
        buf.extend_from_slice(&[0xff, 0xff, 0xff]);
        let e = codec_error(decode(&buf).unwrap_err());
        assert!(matches!(e.kind(), CodecErrorKind::Malformed(_)), "{e}");
        assert!(e.to_string().starts_with("malformed AzureScanExec in a plan: "), "{e}");

        let node = ScanNode::decode(&encoded_scan()[SCAN_TAG.len()..]).unwrap();
        let broken = |change: &dyn Fn(&mut ScanNode)| {
            let mut node = node.clone();
            change(&mut node);
            let mut buf = SCAN_TAG.to_vec();
            node.encode(&mut buf).unwrap();
            codec_error(decode(&buf).unwrap_err()).to_string()
        };
        assert_eq!(broken(&|n| n.ranges.clear()), "malformed AzureScanExec in a plan: `ranges` is missing");
        assert_eq!(broken(&|n| n.table = None), "malformed AzureScanExec in a plan: `table` is missing");
        assert_eq!(broken(&|n| n.read = None), "malformed AzureScanExec in a plan: `read` is missing");
        let message = broken(&|n| n.ranges[0].end.as_mut().unwrap().partition_key = "a/b".to_owned());
        assert!(
            message.starts_with("malformed AzureScanExec in a plan: `ranges.partition_key` is invalid: "),
            "{message}"
        );
        let message = broken(&|n| n.ranges.swap(0, 1));
        assert!(message.starts_with("malformed AzureScanExec in a plan: `ranges` is invalid: "), "{message}");
        let message = broken(&|n| n.filter = Some("S eq".to_owned()));
        assert!(message.starts_with("malformed AzureScanExec in a plan: `filter` is invalid: "), "{message}");
        let message = broken(&|n| n.top = Some(5000));
        assert!(message.starts_with("malformed AzureScanExec in a plan: `query` is invalid: "), "{message}");
        let message = broken(&|n| n.table.as_mut().unwrap().name = "no-dashes".to_owned());
        assert!(message.starts_with("malformed AzureScanExec in a plan: `table` is invalid: "), "{message}");
        let nope = encode_schema(&Schema::new(vec![ColumnKind::String.field("Nope", true)])).unwrap();
        let message = broken(&|n| n.projected = Some(nope.clone()));
        assert!(message.starts_with("malformed AzureScanExec in a plan: `schemas` is invalid: "), "{message}");
    }

    #[test]
    fn a_scan_of_another_account_is_refused_by_the_connector() {
        let node = ScanNode::decode(&encoded_scan()[SCAN_TAG.len()..]).unwrap();
        let mut other = node.clone();
        other.table.as_mut().unwrap().endpoint = "https://other.table.core.windows.net".to_owned();
        let mut buf = SCAN_TAG.to_vec();
        other.encode(&mut buf).unwrap();
        let e = decode(&buf).unwrap_err();
        assert_eq!(
            e.strip_backtrace(),
            "Error during planning: the plan reads table Orders at https://other.table.core.windows.net, but this \
             process reaches https://acct.table.core.windows.net only: give its codec a connector for that account"
        );
    }

    #[test]
    fn other_nodes_go_to_the_fallback_codec() {
        // DataFusion's default codec knows no extension node: its error, not this codec's.
        let e = decode(b"\x0a\x00").unwrap_err();
        assert!(matches!(e, DataFusionError::NotImplemented(_)), "{e}");
        let e = decode(&[]).unwrap_err();
        assert!(matches!(e, DataFusionError::NotImplemented(_)), "{e}");
    }
}
