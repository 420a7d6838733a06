//! The codec's tests: plans and tables through bytes and back, and every malformed node refused with an error.

use super::messages::{encode_schema, KeysNode, ScanNode};
use super::*;
use crate::pushdown::KeyList;
use datafusion::arrow::datatypes::Field;
use datafusion::arrow::datatypes::Schema;
use datafusion::datasource::memory::MemorySourceConfig;
use datafusion::datasource::source::DataSourceExec;
use datafusion::physical_plan::execution_plan::replace_children_if_necessary;
use datafusion_proto::bytes::{
    logical_plan_from_bytes_with_extension_codec, logical_plan_to_bytes_with_extension_codec,
    physical_plan_from_bytes_with_extension_codec, physical_plan_to_bytes_with_extension_codec,
};
use datafusion_proto::physical_plan::DefaultPhysicalProtoConverter;
use table_model::filter::{Filter, KeyPosition, KeyRange};
use table_model::EdmType;
use table_model::{PartitionKey, Query, RowKey};
use table_model_arrow::infer::overflow_field;
use table_model_arrow::mapping::ColumnKind;
use table_model_arrow::mapping::PARTITION_KEY;

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
    PhysicalExtensionCodec::try_decode(codec(), buf, &[], &TaskContext::default(), &DefaultPhysicalProtoConverter {})
}

fn encoded_scan() -> Vec<u8> {
    let mut buf = Vec::new();
    PhysicalExtensionCodec::try_encode(codec(), Arc::new(scan()), &mut buf, &DefaultPhysicalProtoConverter {}).unwrap();
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
    assert!(message.starts_with("malformed AzureScanExec in a plan: `ranges.partition_key` is invalid: "), "{message}");
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
