//! `INSERT INTO` an `AzureTable` in Azurite: from a Parquet file (written with table-model-arrow's writer, read
//! by the `parquet` crate's own Arrow reader into a `MemTable`) and from another table, read back bit-exact; a row
//! that breaks a rule is an error naming it, and nothing of it is on the server.
//!
//! Skipped with a notice without `TABLE_MODEL_AZURITE_ENDPOINT`, unless `CI` is set, where that fails; run with
//! `bash scripts/azurite.sh run cargo test -p table-model-datafusion`.

use datafusion::arrow::array::{ArrayRef, StringArray};
use datafusion::arrow::datatypes::{Schema, SchemaRef};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::datasource::MemTable;
use datafusion::prelude::{SessionConfig, SessionContext};
use futures::TryStreamExt as _;
use std::sync::Arc;
use table_model::client::{TableClient, TableServiceClient};
use table_model::{AccountKey, DateTime, EdmBinary, EdmValue, Entity, PartitionKey, Query, RowKey, TableName};
use table_model_arrow::infer::{overflow_field, Inference};
use table_model_arrow::mapping::ColumnKind;
use table_model_arrow::parquet::ParquetEntityWriter;
use table_model_datafusion::{AzureTable, InsertError};

use super::{canonical, rows};
use table_model_test_utils::azurite::endpoint_or_skip;

const ENTITIES: usize = 360;

fn endpoint() -> Option<String> {
    endpoint_or_skip("DataFusion Azurite tests", "bash scripts/azurite.sh run cargo test -p table-model-datafusion")
}

async fn table(tag: &str) -> Option<TableClient> {
    let url = endpoint()?;
    let service = TableServiceClient::new(&url, AccountKey::development(), None).unwrap();
    let name = TableName::new(format!("Ins{tag}{}", std::process::id())).unwrap();
    Some(service.create_table_if_not_exists(&name, None).await.unwrap())
}

/// Entity `i`: every EDM type with its extremes (Int32 and Int64 bounds, Double NaN, -0.0 and both infinities,
/// Binary of 0 and many bytes, DateTime at 100 ns from 1601 to 9999), each property absent on some entities,
/// quotes and non-ASCII in keys.
pub(crate) fn entity(i: usize) -> Entity {
    let pk = ["p0", "o'k", "é\u{1F600}"][i % 3];
    let mut e = Entity::new(PartitionKey::new(pk).unwrap(), RowKey::new(format!("r{i:04}\"")).unwrap());
    let mut set = |name: &str, value: EdmValue| {
        e.insert(name.parse().unwrap(), value).unwrap();
    };
    if !i.is_multiple_of(7) {
        set("I32", EdmValue::Int32([i32::MIN, i32::MAX, 0, -1][i % 4].wrapping_add(i as i32 % 2)));
    }
    if !i.is_multiple_of(5) {
        set("I64", EdmValue::Int64([i64::MIN, i64::MAX, i as i64 * -1_000_000_007][i % 3]));
    }
    if !i.is_multiple_of(6) {
        let d = [f64::NAN, -0.0, 0.0, f64::INFINITY, f64::NEG_INFINITY, f64::MIN_POSITIVE, i as f64 / 3.0][i % 7];
        set("Dbl", EdmValue::Double(d));
    }
    if i.is_multiple_of(2) {
        set("Flag", EdmValue::Boolean(i.is_multiple_of(4)));
    }
    if !i.is_multiple_of(11) {
        set("Str", EdmValue::String(format!("s'{i}\"%_é\u{1F600}").try_into().unwrap()));
    }
    if i.is_multiple_of(3) {
        let bytes: Vec<u8> = (0..(i % 50)).map(|b| (b * 7 + i) as u8).collect();
        set("Bin", EdmValue::Binary(EdmBinary::new(bytes).unwrap()));
    }
    if !i.is_multiple_of(4) {
        set("Gid", EdmValue::Guid(uuid::Uuid::from_u128((i as u128) << 64 | 0xFFFF_0000_1234)));
    }
    // Ticks 504,911,232,000,000,000 is 1601-01-01; 3,155,378,975,999,999,999 is 9999-12-31T23:59:59.9999999:
    // outside a nanosecond timestamp, within the microsecond column (the 100 ns digit in the overflow).
    if !i.is_multiple_of(9) {
        let ticks = match i % 4 {
            0 => 504_911_232_000_000_000,
            1 => 3_155_378_975_999_999_999,
            _ => 638_400_000_000_000_001 + i as i64 * 1_234_567,
        };
        set("When", EdmValue::DateTime(DateTime::from_ticks(ticks).unwrap()));
    }
    // At an odd tick: the 100 ns digit in the overflow.
    if !i.is_multiple_of(8) {
        set("Recent", EdmValue::DateTime(DateTime::from_ticks(638_400_000_000_000_003 + i as i64).unwrap()));
    }
    e
}

pub(crate) async fn stored(table: &TableClient) -> Vec<String> {
    let all: Vec<Entity> = table.query::<Entity>(&Query::new(), None).unwrap().try_collect().await.unwrap();
    let mut all: Vec<String> = all.iter().map(canonical).collect();
    all.sort();
    all
}

/// The same entities, with the first that differs in the message.
pub(crate) fn same(got: &[String], expected: &[String]) {
    let first = got.iter().zip(expected).find(|(g, e)| g != e);
    assert!(first.is_none(), "got {:?}, expected {:?}", first.unwrap().0, first.unwrap().1);
    assert_eq!(got.len(), expected.len());
}

/// The error of a statement that must fail, as text, and its [`InsertError`] when it is one.
async fn fails(ctx: &SessionContext, sql: &str) -> String {
    let result = match ctx.sql(sql).await {
        Ok(frame) => frame.collect().await,
        Err(e) => Err(e),
    };
    let error = result.err().unwrap_or_else(|| panic!("{sql}: succeeded"));
    if let datafusion::error::DataFusionError::External(e) = error.find_root() {
        assert!(e.downcast_ref::<InsertError>().is_some(), "{sql}: {e:?}");
    }
    error.to_string()
}

#[tokio::test]
async fn insert_from_parquet_and_from_another_table_reads_back_bit_exact() {
    let Some(from_parquet) = table("Pq").await else { return };
    let Some(copy) = table("Copy").await else { return };
    let entities: Vec<Entity> = (0..ENTITIES).map(entity).collect();

    // A Parquet file of the entities, with the schema inferred from all of them.
    let mut inference = Inference::new();
    entities.iter().for_each(|e| inference.observe(e));
    let schema: SchemaRef = Arc::new(inference.to_schema().unwrap());
    assert_eq!(schema.field_with_name("When").unwrap().data_type(), &ColumnKind::DateTime.data_type());
    assert_eq!(schema.field_with_name("Recent").unwrap().data_type(), &ColumnKind::DateTime.data_type());
    let mut writer = ParquetEntityWriter::new(Vec::new(), Some(schema.clone()), Default::default()).unwrap();
    entities.iter().cloned().for_each(|e| writer.write(e).unwrap());
    let file = bytes::Bytes::from(writer.finish().unwrap());

    // Read by the parquet crate's Arrow reader (not the entity mapping): what DataFusion reads from a file.
    let reader =
        parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file).unwrap().with_batch_size(100);
    let file_schema = reader.schema().clone();
    let batches: Vec<RecordBatch> = reader.build().unwrap().collect::<Result<_, _>>().unwrap();
    assert!(batches.len() > 1);
    let ctx = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(3));
    ctx.register_table("orders_parquet", Arc::new(MemTable::try_new(file_schema.clone(), vec![batches]).unwrap()))
        .unwrap();

    let target = AzureTable::new(from_parquet.clone(), file_schema.clone()).unwrap();
    ctx.register_table("orders", Arc::new(target)).unwrap();
    let count = rows(&ctx, "INSERT INTO orders SELECT * FROM orders_parquet").await;
    assert_eq!(count, [ENTITIES.to_string()]);
    // Azurite writes `-0.0` back as `0.0` (`docs/rules.md` §5.7); every other bit comes back.
    let mut expected: Vec<String> = entities.iter().map(canonical).collect::<Vec<_>>();
    expected.iter_mut().for_each(|e| *e = e.replace("Dbl=Double(0x8000000000000000)", "Dbl=Double(0x0)"));
    expected.sort();
    assert!(expected.iter().any(|e| e.contains("Double(0x7ff8000000000000)")));
    same(&stored(&from_parquet).await, &expected);

    // From another table of the service, through the provider's scan (in 3 partitions) and back.
    ctx.register_table("orders_copy", Arc::new(AzureTable::new(copy.clone(), file_schema).unwrap())).unwrap();
    let count = rows(&ctx, "INSERT INTO orders_copy SELECT * FROM orders").await;
    assert_eq!(count, [ENTITIES.to_string()]);
    same(&stored(&copy).await, &expected);

    // A filtered copy inserts what the SELECT selects: here keys already there, which `INSERT` refuses (a key is
    // unique), naming them; `REPLACE INTO` replaces them whole.
    let error = fails(&ctx, "INSERT INTO orders_copy SELECT * FROM orders WHERE \"RowKey\" = 'r0003\"'").await;
    assert!(error.contains("1 of 1 entities were not written"), "{error}");
    assert!(error.contains("PartitionKey `p0`, RowKey `r0003\"`"), "{error}");
    assert!(error.contains("EntityAlreadyExists"), "{error}");
    let count = rows(
        &ctx,
        "REPLACE INTO orders_copy (\"PartitionKey\", \"RowKey\", \"I32\") \
         SELECT \"PartitionKey\", \"RowKey\", 5 FROM orders WHERE \"PartitionKey\" = 'o''k' AND \"RowKey\" < 'r0010'",
    )
    .await;
    assert_eq!(count, ["3"]);
    let (pk, rk) = (PartitionKey::new("o'k").unwrap(), RowKey::new("r0001\"").unwrap());
    let replaced = copy.get::<Entity>(&pk, &rk, None).await.unwrap();
    assert_eq!(canonical(&replaced), "o'k|r0001\"|I32=Int32(5)");
    assert_eq!(stored(&copy).await.len(), ENTITIES);
}

/// A table of keys and one string column, with its overflow column.
fn small_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        ColumnKind::String.field("PartitionKey", false),
        ColumnKind::String.field("RowKey", false),
        ColumnKind::String.field("Str", true),
        overflow_field(),
    ]))
}

#[tokio::test]
async fn a_row_that_breaks_a_rule_is_named_and_nothing_of_it_is_written() {
    let Some(table) = table("Bad").await else { return };
    let ctx = SessionContext::new();
    ctx.register_table("t", Arc::new(AzureTable::new(table.clone(), small_schema()).unwrap())).unwrap();
    let insert = "INSERT INTO t (\"PartitionKey\", \"RowKey\", \"Str\") VALUES";

    // A key with '/': the statement's one batch is refused whole.
    let error = fails(&ctx, &format!("{insert} ('p', '0', 'ok'), ('a/b', '1', 'x')")).await;
    assert!(error.contains("insert into `"), "{error}");
    assert!(error.contains("row 1 (PartitionKey `a/b`, RowKey `1`): "), "{error}");
    assert!(error.contains("'/'") || error.contains("`/`"), "{error}");
    assert!(error.ends_with("; nothing was written"), "{error}");
    // A string over 32,768 UTF-16 units.
    let error = fails(&ctx, &format!("{insert} ('p', '2', repeat('x', 32769))")).await;
    assert!(error.contains("row 0 (PartitionKey `p`, RowKey `2`): property `Str`: "), "{error}");
    assert!(error.contains("32768") || error.contains("32,768"), "{error}");
    // A property name that is not one (through the overflow column, the only column that can name it).
    let error = fails(
        &ctx,
        "INSERT INTO t (\"PartitionKey\", \"RowKey\", \"@overflow\") VALUES ('p', '3', '{\"bad name\":1}')",
    )
    .await;
    assert!(error.contains("row 0 (PartitionKey `p`, RowKey `3`): "), "{error}");
    assert!(error.contains("bad name"), "{error}");
    assert_eq!(stored(&table).await, Vec::<String>::new());

    // Over several batches: the batches before the bad row's are written, the error says which rows.
    let batch = |keys: &[&str]| {
        let column = |values: Vec<Option<&str>>| Arc::new(StringArray::from(values)) as ArrayRef;
        let columns = vec![
            column(keys.iter().map(|_| Some("q")).collect()),
            column(keys.iter().map(|k| Some(*k)).collect()),
            column(keys.iter().map(|_| Some("v")).collect()),
            column(keys.iter().map(|_| None).collect()),
        ];
        RecordBatch::try_new(small_schema(), columns).unwrap()
    };
    let source = MemTable::try_new(small_schema(), vec![vec![batch(&["0", "1"]), batch(&["2", "3\u{7}"])]]).unwrap();
    ctx.register_table("source", Arc::new(source)).unwrap();
    let error = fails(&ctx, "INSERT INTO t SELECT * FROM source").await;
    assert!(error.contains("row 3 (PartitionKey `q`, RowKey `3\u{7}`): "), "{error}");
    assert!(error.ends_with("; rows 0 to 1 were written, none from row 2 on"), "{error}");
    assert_eq!(stored(&table).await, ["q|0|Str=String(\"v\")", "q|1|Str=String(\"v\")"]);

    // The same key twice in one statement: the first is written, the second refused as a duplicate key.
    let error = fails(&ctx, &format!("{insert} ('d', '1', 'first'), ('d', '1', 'second')")).await;
    assert!(error.contains("1 of 2 entities were not written: PartitionKey `d`, RowKey `1`"), "{error}");
    assert!(error.contains("EntityAlreadyExists"), "{error}");
    let (pk, rk) = (PartitionKey::new("d").unwrap(), RowKey::new("1").unwrap());
    assert_eq!(canonical(&table.get::<Entity>(&pk, &rk, None).await.unwrap()), "d|1|Str=String(\"first\")");
    // INSERT OVERWRITE would empty the table first, which the service cannot do in one step: refused.
    let error = fails(&ctx, "INSERT OVERWRITE TABLE t SELECT * FROM source").await;
    assert!(error.contains("is not supported"), "{error}");
    assert_eq!(stored(&table).await.len(), 3);
}
