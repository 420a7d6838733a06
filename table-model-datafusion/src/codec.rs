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

mod messages;

use crate::{AzureKeysExec, AzureScanExec, AzureTable};
use datafusion::arrow::datatypes::SchemaRef;
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
use messages::{decode_schema, encode_table, TableNode, KEYS, KEYS_TAG, SCAN, SCAN_TAG, TABLE, TABLE_TAG};
use prost::Message as _;
use std::fmt;
use std::sync::Arc;
use table_model::client::{TableClient, TableServiceClient};
use table_model::TableName;

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
mod tests;
