//! The codec's own nodes on the wire: the protobuf messages of an [`AzureScanExec`], an [`AzureKeysExec`] and an
//! [`AzureTable`], the tag each starts with, and how a plan becomes its message and its message the plan again
//! (every field checked as the type it becomes checks it, an error a [`CodecError`]).

use super::{AzureCodec, CodecError, CodecErrorKind};
use crate::pushdown::KeyList;
use crate::{AzureKeysExec, AzureScanExec};
use datafusion::arrow::datatypes::{Schema, SchemaRef};
use datafusion::common::{DataFusionError, Result};
use datafusion::physical_plan::ExecutionPlan;
use datafusion_proto::protobuf;
use prost::Message as _;
use std::sync::Arc;
use table_model::client::TableClient;
use table_model::filter::{Filter, KeyPosition, KeyRange};
use table_model::{PartitionKey, Query, RowKey, TableName};
use table_model_arrow::mapping::{PARTITION_KEY, ROW_KEY};

// The first bytes of the codec's own nodes. A protobuf message never starts with a zero byte (field number 0 is
// invalid), so no node of a wrapped codec is mistaken for one of these.
pub(super) const SCAN_TAG: &[u8] = b"\0table-model/AzureScanExec/1\0";
pub(super) const TABLE_TAG: &[u8] = b"\0table-model/AzureTable/1\0";
pub(super) const KEYS_TAG: &[u8] = b"\0table-model/AzureKeysExec/1\0";
pub(super) const SCAN: &str = "AzureScanExec";
pub(super) const KEYS: &str = "AzureKeysExec";
pub(super) const TABLE: &str = "AzureTable";

/// An [`AzureScanExec`] on the wire.
#[derive(Clone, PartialEq, prost::Message)]
pub(super) struct ScanNode {
    #[prost(message, optional, tag = "1")]
    pub(super) table: Option<TableNode>,
    /// `$filter`, as the service reads it.
    #[prost(string, optional, tag = "2")]
    pub(super) filter: Option<String>,
    /// `$select`'s names (empty: every property).
    #[prost(string, repeated, tag = "3")]
    pub(super) select: Vec<String>,
    #[prost(uint64, optional, tag = "4")]
    pub(super) top: Option<u64>,
    #[prost(message, repeated, tag = "5")]
    pub(super) ranges: Vec<RangeNode>,
    /// The schema the entities are read into.
    #[prost(message, optional, tag = "6")]
    pub(super) read: Option<protobuf::Schema>,
    /// The schema the scan returns.
    #[prost(message, optional, tag = "7")]
    pub(super) projected: Option<protobuf::Schema>,
    #[prost(uint64, optional, tag = "8")]
    pub(super) limit: Option<u64>,
}

/// An [`AzureKeysExec`] on the wire: its scan, and the key and values of its `IN` list.
#[derive(Clone, PartialEq, prost::Message)]
pub(super) struct KeysNode {
    #[prost(message, optional, tag = "1")]
    pub(super) scan: Option<ScanNode>,
    /// `PartitionKey` or `RowKey`.
    #[prost(string, tag = "2")]
    pub(super) key: String,
    /// The distinct values, in the service's key order.
    #[prost(string, repeated, tag = "3")]
    pub(super) values: Vec<String>,
    /// How many shares the values are dealt into.
    #[prost(uint64, tag = "4")]
    pub(super) shares: u64,
}

/// An [`AzureTable`] on the wire: where it is and its schema (no credential).
#[derive(Clone, PartialEq, prost::Message)]
pub(super) struct TableNode {
    /// The account's endpoint URL.
    #[prost(string, tag = "1")]
    pub(super) endpoint: String,
    #[prost(string, tag = "2")]
    pub(super) name: String,
    #[prost(message, optional, tag = "3")]
    pub(super) schema: Option<protobuf::Schema>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub(super) struct RangeNode {
    #[prost(message, optional, tag = "1")]
    pub(super) start: Option<PositionNode>,
    #[prost(message, optional, tag = "2")]
    pub(super) end: Option<PositionNode>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub(super) struct PositionNode {
    #[prost(string, tag = "1")]
    pub(super) partition_key: String,
    #[prost(string, tag = "2")]
    pub(super) row_key: String,
}

pub(super) fn encode_schema(schema: &Schema) -> Result<protobuf::Schema> {
    protobuf::Schema::try_from(schema).map_err(|e| DataFusionError::Internal(format!("schema of a scan: {e}")))
}

pub(super) fn decode_schema(
    node: &'static str,
    field: &'static str,
    schema: Option<&protobuf::Schema>,
) -> Result<SchemaRef> {
    let schema = schema.ok_or_else(|| CodecError::error(node, CodecErrorKind::Missing(field)))?;
    Ok(Arc::new(Schema::try_from(schema).map_err(|e| CodecError::invalid(node, field, e))?))
}

pub(super) fn encode_table(table: &TableClient, schema: &Schema) -> Result<TableNode> {
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
    pub(super) fn encode_scan(scan: &AzureScanExec, buf: &mut Vec<u8>) -> Result<()> {
        let node = AzureCodec::scan_node(scan)?;
        buf.extend_from_slice(SCAN_TAG);
        node.encode(buf).map_err(|e| DataFusionError::Internal(format!("encoding a scan: {e}")))
    }

    /// The bytes of a key `IN` list's node: [`KEYS_TAG`], then its [`KeysNode`].
    pub(super) fn encode_keys(keys: &AzureKeysExec, buf: &mut Vec<u8>) -> Result<()> {
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

    pub(super) fn decode_keys(&self, bytes: &[u8]) -> Result<AzureKeysExec> {
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
    pub(super) fn scan_node(scan: &AzureScanExec) -> Result<ScanNode> {
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

    pub(super) fn decode_scan(&self, bytes: &[u8]) -> Result<AzureScanExec> {
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

    pub(super) fn client(&self, node: &'static str, table: &TableNode) -> Result<TableClient> {
        let name = TableName::new(table.name.clone()).map_err(|e| CodecError::invalid(node, "table", e))?;
        self.connector.table_client(&table.endpoint, &name)
    }
}
