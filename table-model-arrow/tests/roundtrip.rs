//! Entities through record batches and through Parquet files, back bit for bit: every EDM type at its
//! boundaries, absent properties, mixed schemas, type conflicts, values outside the schema, random entities; and
//! hostile files, which are typed errors. Query pages decoded straight into batches (`BatchBuilder::push_page`)
//! make the batches their entities make, and a page that does not decode is an error naming its entity.

use arrow_array::cast::AsArray as _;
use arrow_array::Array as _;
use arrow_schema::{DataType, TimeUnit};
use proptest::prelude::*;
use std::sync::Arc;
use table_model::{DateTime, EdmBinary, EdmString, EdmType, EdmValue, Entity, PartitionKey, RowKey};
use table_model_arrow::batch::{entities, BatchBuilder, EntitySchema};
use table_model_arrow::infer::Inference;
use table_model_arrow::mapping::{ColumnKind, OVERFLOW_COLUMN};
use table_model_arrow::parquet::{ParquetEntityReader, ParquetEntityWriter, ReaderOptions, WriterOptions};
use table_model_arrow::ErrorKind;

fn entity(pk: &str, rk: &str) -> Entity {
    Entity::new(PartitionKey::new(pk).unwrap(), RowKey::new(rk).unwrap())
}

fn dt(text: &str) -> DateTime {
    text.parse().unwrap()
}

/// The entity's properties by name, so that two entities compare whatever their properties' order (a column
/// store keeps its columns' order, not each entity's); `EdmValue` compares Doubles by their bits.
fn canonical(e: &Entity) -> (String, String, Option<DateTime>, Vec<(String, EdmValue)>) {
    let mut properties: Vec<(String, EdmValue)> = e.iter().map(|(n, v)| (n.to_string(), v.clone())).collect();
    properties.sort_by(|a, b| a.0.cmp(&b.0));
    (e.partition_key().to_string(), e.row_key().to_string(), e.timestamp(), properties)
}

/// [`canonical`], every NaN one NaN: a Double of a column of several types reads back from `@overflow`, the
/// service's JSON, where a NaN is `"NaN"` whatever its payload (`docs/rules.md` §3). A Double column keeps the
/// payload's bits (`boundary_entities`, compared by [`canonical`]).
fn nan_as_one(e: &Entity) -> (String, String, Option<DateTime>, Vec<(String, EdmValue)>) {
    let (pk, rk, timestamp, mut properties) = canonical(e);
    for (_, value) in &mut properties {
        if matches!(value, EdmValue::Double(d) if d.is_nan()) {
            *value = EdmValue::Double(f64::NAN);
        }
    }
    (pk, rk, timestamp, properties)
}

fn assert_same(expected: &[Entity], got: &[Entity]) {
    assert_eq!(expected.len(), got.len(), "entity count");
    for (e, g) in expected.iter().zip(got) {
        assert_eq!(canonical(e), canonical(g));
    }
}

/// Every EDM type at its boundaries, absent properties, mixed schemas and conflicts.
fn boundary_entities() -> Vec<Entity> {
    let nan_payload = f64::from_bits(0x7ff8_dead_beef_0001);
    let negative_nan = f64::from_bits(0xfff0_0000_0000_0001); // a signalling NaN, sign bit set
    let mut edge = entity("edge", "values")
        .with("NaN".parse().unwrap(), f64::NAN)
        .unwrap()
        .with("NaNPayload".parse().unwrap(), nan_payload)
        .unwrap()
        .with("NaNNegative".parse().unwrap(), negative_nan)
        .unwrap()
        .with("NegZero".parse().unwrap(), -0.0_f64)
        .unwrap()
        .with("Inf".parse().unwrap(), f64::INFINITY)
        .unwrap()
        .with("NegInf".parse().unwrap(), f64::NEG_INFINITY)
        .unwrap()
        .with("Subnormal".parse().unwrap(), f64::from_bits(1))
        .unwrap()
        .with("Int64Min".parse().unwrap(), i64::MIN)
        .unwrap()
        .with("Int64Max".parse().unwrap(), i64::MAX)
        .unwrap()
        .with("Int32Min".parse().unwrap(), i32::MIN)
        .unwrap()
        .with("Int32Max".parse().unwrap(), i32::MAX)
        .unwrap()
        .with("First".parse().unwrap(), dt("1601-01-01T00:00:00.0000000Z"))
        .unwrap()
        .with("Last".parse().unwrap(), dt("9999-12-31T23:59:59.9999999Z"))
        .unwrap()
        .with("Recent".parse().unwrap(), dt("2026-11-25T02:12:00.1234567Z"))
        .unwrap()
        .with(
            "Binary".parse().unwrap(),
            EdmBinary::new((0..65_536).map(|i| (i % 251) as u8).collect::<Vec<_>>()).unwrap(),
        )
        .unwrap()
        .with("EmptyBinary".parse().unwrap(), EdmBinary::new(Vec::new()).unwrap())
        .unwrap()
        .with("Guid".parse().unwrap(), EdmValue::Guid("5b5e3a84-3c4c-4f6e-9b8a-0c1d2e3f4a5b".parse().unwrap()))
        .unwrap()
        .with("Yes".parse().unwrap(), true)
        .unwrap()
        .with("No".parse().unwrap(), false)
        .unwrap()
        .with("Long".parse().unwrap(), EdmString::new("é".repeat(32_768)).unwrap())
        .unwrap()
        .with("Text".parse().unwrap(), "héllo 世界 🎉 \"quoted\"\n\ttab")
        .unwrap()
        .with("Empty".parse().unwrap(), "")
        .unwrap();
    edge.set_server_metadata(Some(dt("2026-11-25T01:02:03.4567891Z")), None);
    // Another schema: nothing in common but the keys, and Empty absent.
    let other = entity("ünïcode 日本", "ключ 🎉").with("Only".parse().unwrap(), "").unwrap();
    // A conflict: Int64Max as a string here, NaN as an Int32, Recent as a 1601 date (no timestamp column holds it).
    let conflict = entity("edge", "zconflict")
        .with("Int64Max".parse().unwrap(), "not a number")
        .unwrap()
        .with("NaN".parse().unwrap(), 7)
        .unwrap()
        .with("Empty".parse().unwrap(), "")
        .unwrap();
    let mut entities = vec![edge, other, conflict];
    for i in 0..40 {
        let mut e = entity(&format!("bulk-{}", i % 3), &format!("{i:04}"))
            .with("N".parse().unwrap(), i64::from(i))
            .unwrap()
            .with("Recent".parse().unwrap(), dt("2020-01-01T00:00:00.0000001Z"))
            .unwrap();
        if i % 2 == 0 {
            e.insert("Empty".parse().unwrap(), "").unwrap();
        }
        entities.push(e);
    }
    entities
}

fn schema_of(sample: &[Entity]) -> Arc<EntitySchema> {
    let mut inference = Inference::new();
    sample.iter().for_each(|e| inference.observe(e));
    Arc::new(EntitySchema::new(Arc::new(inference.to_schema().unwrap())).unwrap())
}

fn through_batches(schema: &Arc<EntitySchema>, input: &[Entity], rows: usize) -> Vec<Entity> {
    let mut builder = BatchBuilder::new(schema.clone());
    let mut out = Vec::new();
    for chunk in input.chunks(rows) {
        for e in chunk {
            builder.push(e).unwrap();
        }
        let batch = builder.finish().unwrap();
        assert_eq!(batch.num_rows(), chunk.len());
        out.extend(entities(&batch, schema).unwrap());
    }
    out
}

fn through_parquet(input: &[Entity], schema: Option<&EntitySchema>, options: WriterOptions) -> Vec<Entity> {
    let mut writer = ParquetEntityWriter::new(Vec::new(), schema.map(|s| s.arrow().clone()), options).unwrap();
    for e in input {
        writer.write(e.clone()).unwrap();
    }
    let file = writer.finish().unwrap();
    let reader = ParquetEntityReader::new(bytes::Bytes::from(file), ReaderOptions { batch_rows: 7 }).unwrap();
    assert_eq!(reader.rows(), input.len() as u64);
    reader.collect::<Result<_, _>>().unwrap()
}

#[test]
fn boundary_values_round_trip_through_batches_bit_for_bit() {
    let input = boundary_entities();
    let schema = schema_of(&input);
    assert_same(&input, &through_batches(&schema, &input, 5));
    assert_same(&input, &through_batches(&schema, &input, 1_000));
}

#[test]
fn boundary_values_round_trip_through_parquet_bit_for_bit() {
    let input = boundary_entities();
    // Inferred from a sample of 2 (the rest never seen by inference: their properties go to the overflow), of
    // all, and given.
    for sample in [1, 2, 1_000] {
        let options = WriterOptions { sample, row_group_rows: 4, batch_rows: 3, ..WriterOptions::default() };
        assert_same(&input, &through_parquet(&input, None, options));
    }
    let schema = schema_of(&input[..1]);
    assert_same(&input, &through_parquet(&input, Some(&schema), WriterOptions::default()));
}

#[test]
fn the_schema_maps_each_type_and_puts_what_does_not_fit_in_the_overflow() {
    let input = boundary_entities();
    let schema = schema_of(&input);
    let arrow = schema.arrow();
    let column = |name: &str| arrow.field_with_name(name).unwrap();
    assert_eq!(column("NaNPayload").data_type(), &DataType::Float64);
    assert_eq!(column("Int32Min").data_type(), &DataType::Int32);
    assert_eq!(column("Int64Min").data_type(), &DataType::Int64);
    assert_eq!(column("Yes").data_type(), &DataType::Boolean);
    assert_eq!(column("Binary").data_type(), &DataType::Binary);
    assert_eq!(column("Long").data_type(), &DataType::Utf8);
    assert_eq!(column("Guid").data_type(), &DataType::FixedSizeBinary(16));
    assert_eq!(column("Guid").metadata()["ARROW:extension:name"], "arrow.uuid");
    // Every DateTime column is a microsecond timestamp, 1601 and 9999 too: never ticks.
    let timestamp = DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()));
    for name in ["First", "Last", "Recent", "Timestamp"] {
        assert_eq!(column(name).data_type(), &timestamp, "{name}");
        assert_eq!(column(name).metadata()["table_model.edm"], "Edm.DateTime");
    }
    // Conflicts: Double and Int32 as Float64, Int64 and String as the text of each.
    assert_eq!(column("NaN").data_type(), &DataType::Float64);
    assert_eq!(column("NaN").metadata()["table_model.mixed"], "Edm.Double,Edm.Int32");
    assert_eq!(column("Int64Max").data_type(), &DataType::Utf8);
    assert_eq!(column("Int64Max").metadata()["table_model.mixed"], "Edm.Int64,Edm.String");
    assert!(!column("PartitionKey").is_nullable() && column("N").is_nullable());
    assert_eq!(arrow.fields().last().unwrap().name(), OVERFLOW_COLUMN);

    // Each conflicting value shows in its column; the overflow keeps exactly what a column does not: the 100 ns
    // digits, and the values of another type than the column's (the string is the text column's own type).
    let mut builder = BatchBuilder::new(schema.clone());
    input.iter().for_each(|e| builder.push(e).unwrap());
    let batch = builder.finish().unwrap();
    let overflow = batch.column_by_name(OVERFLOW_COLUMN).unwrap().as_string::<i32>();
    assert_eq!(overflow.null_count(), 1, "only `other` has no 100 ns digit and no conflict");
    assert_eq!(
        overflow.value(0),
        r#"{"Int64Max@odata.type":"Edm.Int64","Int64Max":"9223372036854775807","Last@odata.type":"Edm.DateTime","Last":"9999-12-31T23:59:59.9999999Z","Recent@odata.type":"Edm.DateTime","Recent":"2026-11-25T02:12:00.1234567Z","Timestamp@odata.type":"Edm.DateTime","Timestamp":"2026-11-25T01:02:03.4567891Z"}"#
    );
    assert_eq!(overflow.value(2), r#"{"NaN":7}"#);
    let text = batch.column_by_name("Int64Max").unwrap().as_string::<i32>();
    assert_eq!((text.value(0), text.value(2)), ("9223372036854775807", "not a number"));
    let wide = batch.column_by_name("NaN").unwrap().as_primitive::<arrow_array::types::Float64Type>();
    assert_eq!(wide.value(2), 7.0);
}

#[test]
fn a_datetime_column_spans_1601_to_9999_and_keeps_the_100_ns_digit_in_the_overflow() {
    use arrow_array::types::TimestampMicrosecondType;
    let when = |rk: &str, text: &str| entity("p", rk).with("When".parse().unwrap(), dt(text)).unwrap();
    let input = [
        when("1", "1601-01-01T00:00:00.0000000Z"),
        when("2", "9999-12-31T23:59:59.9999999Z"),
        when("3", "1969-12-31T23:59:59.9999999Z"),
        when("4", "2020-01-01T00:00:00.1234560Z"),
    ];
    let schema = schema_of(&input);
    let mut builder = BatchBuilder::new(schema.clone());
    input.iter().for_each(|e| builder.push(e).unwrap());
    let batch = builder.finish().unwrap();
    let column = batch.column_by_name("When").unwrap().as_primitive::<TimestampMicrosecondType>();
    // Truncated towards the past, before 1970 too.
    let micros: Vec<i64> = column.values().to_vec();
    assert_eq!(micros, [-11_644_473_600_000_000, 253_402_300_799_999_999, -1, 1_577_836_800_123_456]);
    let overflow = batch.column_by_name(OVERFLOW_COLUMN).unwrap().as_string::<i32>();
    assert!(overflow.is_null(0) && overflow.is_null(3), "no 100 ns digit, nothing in the overflow");
    assert_eq!(overflow.value(2), r#"{"When@odata.type":"Edm.DateTime","When":"1969-12-31T23:59:59.9999999Z"}"#);
    assert_same(&input, &entities(&batch, &schema).unwrap());
    assert_same(&input, &through_parquet(&input, None, WriterOptions::default()));
}

#[test]
fn a_column_edited_alone_wins_over_its_stale_overflow() {
    use arrow_array::types::TimestampMicrosecondType;
    let input = [entity("p", "1").with("When".parse().unwrap(), dt("2020-01-01T00:00:00.0000007Z")).unwrap()];
    let schema = schema_of(&input);
    let mut builder = BatchBuilder::new(schema.clone());
    builder.push(&input[0]).unwrap();
    let batch = builder.finish().unwrap();
    // Another tool moves the column a second on, leaving the overflow as it was.
    let i = batch.schema().index_of("When").unwrap();
    let moved = batch
        .column(i)
        .as_primitive::<TimestampMicrosecondType>()
        .unary::<_, TimestampMicrosecondType>(|v| v + 1_000_000);
    let mut columns = batch.columns().to_vec();
    columns[i] = Arc::new(moved.with_timezone("UTC"));
    let edited = arrow_array::RecordBatch::try_new(batch.schema(), columns).unwrap();
    let read = entities(&edited, &schema).unwrap();
    assert_eq!(read[0].value("When"), Some(&EdmValue::DateTime(dt("2020-01-01T00:00:01.0000000Z"))));
}

#[test]
fn a_property_of_several_types_shows_every_value_and_reads_back_with_its_own_type() {
    let priority = |rk: &str, value: EdmValue| entity("p", rk).with("Priority".parse().unwrap(), value).unwrap();
    let input = [
        priority("1", EdmValue::Int32(1)),
        priority("2", EdmValue::Int32(2)),
        priority("3", EdmValue::String(EdmString::new("High").unwrap())),
        priority("4", EdmValue::String(EdmString::new("2").unwrap())),
        priority("5", EdmValue::Boolean(true)),
    ];
    let schema = schema_of(&input);
    let field = schema.arrow().field_with_name("Priority").unwrap();
    assert_eq!(ColumnKind::of_field(field).unwrap(), ColumnKind::Text);
    assert_eq!(ColumnKind::describe(field), "Edm.Int32,Edm.String,Edm.Boolean: the text of each value (several types)");
    let mut builder = BatchBuilder::new(schema.clone());
    input.iter().for_each(|e| builder.push(e).unwrap());
    let batch = builder.finish().unwrap();
    let text = batch.column_by_name("Priority").unwrap().as_string::<i32>();
    let shown: Vec<&str> = (0..5).map(|i| text.value(i)).collect();
    assert_eq!(shown, ["1", "2", "High", "2", "true"], "no value is null");
    // The Int32 2 and the String "2" show alike and read back apart.
    assert_same(&input, &entities(&batch, &schema).unwrap());
    assert_same(&input, &through_parquet(&input, None, WriterOptions::default()));

    // Int32 and Int64: an Int64 column; every Int32 reads back an Int32.
    let input = [priority("1", EdmValue::Int32(-5)), priority("2", EdmValue::Int64(i64::MAX))];
    let schema = schema_of(&input);
    let field = schema.arrow().field_with_name("Priority").unwrap();
    assert_eq!((field.data_type(), ColumnKind::of_field(field).unwrap()), (&DataType::Int64, ColumnKind::WideInt64));
    assert_same(&input, &through_batches(&schema, &input, 10));
}

#[test]
fn files_of_the_earlier_datetime_and_guid_layouts_read_back() {
    // Earlier versions wrote a nanosecond timestamp when every value fit it, ticks otherwise, and a Guid without
    // Parquet's UUID logical type: those fields, given as the schema, write that layout.
    let guid = EdmValue::Guid("5b5e3a84-3c4c-4f6e-9b8a-0c1d2e3f4a5b".parse().unwrap());
    let input = [entity("p", "1")
        .with("Recent".parse().unwrap(), dt("2020-01-01T00:00:00.0000001Z"))
        .unwrap()
        .with("Old".parse().unwrap(), dt("1601-01-01T00:00:00.0000001Z"))
        .unwrap()
        .with("Id".parse().unwrap(), guid)
        .unwrap()];
    let plain_guid = arrow_schema::Field::new("Id", DataType::FixedSizeBinary(16), true)
        .with_metadata([("table_model.edm".to_owned(), "Edm.Guid".to_owned())].into());
    let old = arrow_schema::Schema::new(vec![
        ColumnKind::String.field("PartitionKey", false),
        ColumnKind::String.field("RowKey", false),
        ColumnKind::DateTimeNanos.field("Recent", true),
        ColumnKind::DateTimeTicks.field("Old", true),
        plain_guid,
        table_model_arrow::infer::overflow_field(),
    ]);
    assert_eq!(old.field(2).data_type(), &DataType::Timestamp(TimeUnit::Nanosecond, Some("UTC".into())));
    let schema = EntitySchema::new(Arc::new(old)).unwrap();
    let mut writer =
        ParquetEntityWriter::new(Vec::new(), Some(schema.arrow().clone()), WriterOptions::default()).unwrap();
    writer.write(input[0].clone()).unwrap();
    let file = bytes::Bytes::from(writer.finish().unwrap());
    let reader = ParquetEntityReader::new(file.clone(), ReaderOptions::default()).unwrap();
    assert_eq!(
        reader.schema().arrow().field(2).data_type(),
        &DataType::Timestamp(TimeUnit::Nanosecond, Some("UTC".into()))
    );
    let read: Vec<Entity> = reader.collect::<Result<_, _>>().unwrap();
    assert_same(&input, &read);
    // No 100 ns digit needed the overflow: those columns keep it.
    let batch = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
        .unwrap()
        .build()
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    assert!(batch.column_by_name(OVERFLOW_COLUMN).unwrap().is_null(0));
}

#[test]
fn a_guid_column_has_parquets_uuid_logical_type() {
    let guid = EdmValue::Guid("5b5e3a84-3c4c-4f6e-9b8a-0c1d2e3f4a5b".parse().unwrap());
    let input = [entity("p", "1").with("Id".parse().unwrap(), guid).unwrap()];
    let mut writer = ParquetEntityWriter::new(Vec::new(), None, WriterOptions::default()).unwrap();
    writer.write(input[0].clone()).unwrap();
    let file = bytes::Bytes::from(writer.finish().unwrap());
    let metadata = parquet::file::reader::FileReader::metadata(
        &parquet::file::serialized_reader::SerializedFileReader::new(file.clone()).unwrap(),
    )
    .clone();
    let columns = metadata.file_metadata().schema_descr();
    let id = (0..columns.num_columns()).map(|i| columns.column(i)).find(|c| c.name() == "Id").unwrap();
    assert_eq!(id.logical_type_ref(), Some(&parquet::basic::LogicalType::Uuid));
    let read: Vec<Entity> =
        ParquetEntityReader::new(file, ReaderOptions::default()).unwrap().collect::<Result<_, _>>().unwrap();
    assert_same(&input, &read);
}

#[test]
fn a_datetime_outside_a_nanosecond_column_goes_to_the_overflow_exactly() {
    let recent = entity("p", "1").with("When".parse().unwrap(), dt("2000-01-01T00:00:00.0000001Z")).unwrap();
    let mut old = entity("p", "2").with("When".parse().unwrap(), dt("1601-01-01T00:00:00.0000000Z")).unwrap();
    old.set_server_metadata(Some(dt("9999-12-31T23:59:59.9999999Z")), None);
    let schema = Arc::new(
        EntitySchema::new(Arc::new(arrow_schema::Schema::new(vec![
            ColumnKind::String.field("PartitionKey", false),
            ColumnKind::String.field("RowKey", false),
            ColumnKind::DateTimeNanos.field("Timestamp", true),
            ColumnKind::DateTimeNanos.field("When", true),
            table_model_arrow::infer::overflow_field(),
        ])))
        .unwrap(),
    );
    let mut builder = BatchBuilder::new(schema.clone());
    builder.push(&recent).unwrap();
    builder.push(&old).unwrap();
    let batch = builder.finish().unwrap();
    let overflow = batch.column_by_name(OVERFLOW_COLUMN).unwrap().as_string::<i32>();
    assert_eq!(
        overflow.value(1),
        r#"{"When@odata.type":"Edm.DateTime","When":"1601-01-01T00:00:00.0000000Z","Timestamp@odata.type":"Edm.DateTime","Timestamp":"9999-12-31T23:59:59.9999999Z"}"#
    );
    assert_same(&[recent, old], &entities(&batch, &schema).unwrap());
}

#[test]
fn inference_counts_types_and_entities_in_first_seen_order() {
    let input = boundary_entities();
    let mut inference = Inference::new();
    input.iter().for_each(|e| inference.observe(e));
    assert_eq!(inference.entities(), 43);
    let names: Vec<&str> = inference.properties().iter().take(5).map(|p| p.name()).collect();
    assert_eq!(names, ["PartitionKey", "RowKey", "Timestamp", "NaN", "NaNPayload"]);
    let nan = inference.property("NaN").unwrap();
    assert_eq!(nan.count(), 2);
    let types: Vec<(EdmType, u64)> = nan.types().iter().map(|t| (t.edm_type, t.count)).collect();
    assert_eq!(types, [(EdmType::Double, 1), (EdmType::Int32, 1)]);
    let conflicts: Vec<&str> = inference.conflicts().map(|p| p.name()).collect();
    assert_eq!(conflicts, ["NaN", "Int64Max"]);
    assert_eq!(inference.property("Empty").unwrap().count(), 22);
    assert_eq!(inference.property("PartitionKey").unwrap().count(), 43);
    // The most frequent type leads, whatever came first.
    let mut inference = Inference::new();
    inference.observe(&entity("p", "1").with("X".parse().unwrap(), "s").unwrap());
    inference.observe(&entity("p", "2").with("X".parse().unwrap(), 1).unwrap());
    inference.observe(&entity("p", "3").with("X".parse().unwrap(), 2).unwrap());
    assert_eq!(inference.property("X").unwrap().types()[0].edm_type, EdmType::Int32);
    assert_eq!(inference.property("X").unwrap().column().unwrap(), ColumnKind::Text);
}

#[test]
fn a_schema_file_is_the_inference_as_json_and_may_choose_the_datetime_column() {
    let input = boundary_entities();
    let mut inference = Inference::new();
    input.iter().for_each(|e| inference.observe(e));
    let json = serde_json::to_string(&inference).unwrap();
    let read: Inference = serde_json::from_str(&json).unwrap();
    assert_eq!(read.to_schema().unwrap(), inference.to_schema().unwrap());

    let by_hand = r#"{"properties":[
        {"name":"When","types":[{"type":"DateTime"}]},
        {"name":"Seen","types":[{"type":"Edm.DateTime"}],"column":"Timestamp"},
        {"name":"N","types":[{"type":"Edm.Int64"}]}
    ]}"#;
    let schema = serde_json::from_str::<Inference>(by_hand).unwrap().to_schema().unwrap();
    let kinds: Vec<ColumnKind> = schema.fields()[2..5].iter().map(|f| ColumnKind::of_field(f).unwrap()).collect();
    assert_eq!(kinds, [ColumnKind::DateTime, ColumnKind::DateTime, ColumnKind::Int64]);
    let asked = r#"{"properties":[
        {"name":"When","types":[{"type":"DateTime"}],"column":"Ticks"},
        {"name":"Then","types":[{"type":"DateTime"}],"column":"TimestampNanos"},
        {"name":"P","types":[{"type":"Int32"},{"type":"String"}]},
        {"name":"Q","types":[{"type":"Int32"}],"column":"WideInt64"}
    ]}"#;
    let schema = serde_json::from_str::<Inference>(asked).unwrap().to_schema().unwrap();
    let kinds: Vec<ColumnKind> = schema.fields()[2..6].iter().map(|f| ColumnKind::of_field(f).unwrap()).collect();
    assert_eq!(kinds, [ColumnKind::DateTimeTicks, ColumnKind::DateTimeNanos, ColumnKind::Text, ColumnKind::WideInt64]);

    let wrong = r#"{"properties":[{"name":"N","types":[{"type":"Edm.Int64"}],"column":"Utf8"}]}"#;
    let err = serde_json::from_str::<Inference>(wrong).unwrap().to_schema().unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid schema: property `N` is Edm.Int64 but its column is Utf8, the column of Edm.String"
    );
    let bad_name = r#"{"properties":[{"name":"no-dash","types":[{"type":"Edm.Int64"}]}]}"#;
    let err = serde_json::from_str::<Inference>(bad_name).unwrap().to_schema().unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::Schema(_)), "{err}");
    let err =
        serde_json::from_str::<Inference>(r#"{"properties":[{"name":"N","types":[{"type":"Int128"}]}]}"#).unwrap_err();
    assert!(err.to_string().starts_with("unknown EDM type `Int128`"), "{err}");
}

#[test]
fn a_parquet_writer_bounds_its_row_groups() {
    let input: Vec<Entity> = (0..1_000)
        .map(|i| {
            entity("p", &format!("{i:05}"))
                .with("Blob".parse().unwrap(), EdmBinary::new(vec![i as u8; 4_096]).unwrap())
                .unwrap()
        })
        .collect();
    let options = WriterOptions { row_group_rows: 300, row_group_bytes: 512 * 1024, ..WriterOptions::default() };
    let mut writer = ParquetEntityWriter::new(Vec::new(), None, options).unwrap();
    input.iter().for_each(|e| writer.write(e.clone()).unwrap());
    let file = bytes::Bytes::from(writer.finish().unwrap());
    let metadata = parquet::file::metadata::ParquetMetaDataReader::new().parse_and_finish(&file).unwrap();
    let rows: Vec<i64> = metadata.row_groups().iter().map(|g| g.num_rows()).collect();
    assert!(rows.len() >= 4, "{rows:?}");
    assert!(rows.iter().all(|&r| r <= 300), "{rows:?}");
    // 4 KiB per row: 512 KiB is at most ~128 rows and a batch (the bound is checked after each batch).
    assert!(rows.iter().all(|&r| r <= 128 + 1_024), "{rows:?}");
    assert_eq!(rows.iter().sum::<i64>(), 1_000);
    let read: Vec<Entity> =
        ParquetEntityReader::new(file, ReaderOptions::default()).unwrap().collect::<Result<_, _>>().unwrap();
    assert_same(&input, &read);
}

#[test]
fn hostile_parquet_files_are_typed_errors() {
    let input = boundary_entities();
    let mut writer = ParquetEntityWriter::new(Vec::new(), None, WriterOptions::default()).unwrap();
    input.iter().for_each(|e| writer.write(e.clone()).unwrap());
    let file = writer.finish().unwrap();

    let open = |bytes: Vec<u8>| ParquetEntityReader::new(bytes::Bytes::from(bytes), ReaderOptions::default());
    for bytes in [Vec::new(), b"PAR1".to_vec(), b"not parquet at all".to_vec(), file[..file.len() / 2].to_vec()] {
        let err = open(bytes).unwrap_err();
        assert!(matches!(err.kind(), ErrorKind::Parquet(_)), "{err}");
        assert!(err.to_string().starts_with("invalid parquet: "), "{err}");
    }
    let mut bad_magic = file.clone();
    let n = bad_magic.len();
    bad_magic[n - 4..].copy_from_slice(b"PAR2");
    assert!(matches!(open(bad_magic).unwrap_err().kind(), ErrorKind::Parquet(_)));
    // Every truncation and every flipped byte: an error or entities, never a panic.
    for cut in (0..file.len()).step_by(997) {
        let _ = open(file[..cut].to_vec()).map(|r| r.count());
    }
    for at in (0..file.len()).step_by(499) {
        let mut corrupt = file.clone();
        corrupt[at] ^= 0x5a;
        let _ = open(corrupt).map(|r| r.collect::<Vec<_>>());
    }
}

#[test]
fn rows_that_are_not_entities_are_errors_with_their_row() {
    use arrow_array::{RecordBatch, StringArray};
    let schema = schema_of(&[entity("p", "r")]);
    let arrow = schema.arrow().clone();
    let batch = RecordBatch::try_new(
        arrow.clone(),
        vec![
            Arc::new(StringArray::from(vec!["p", "p", "p", "p"])),
            Arc::new(StringArray::from(vec!["ok", "bad/key", "ok2", "dup"])),
            Arc::new(StringArray::from(vec![None, None, Some("[1]"), Some(r#"{"A":1,"A":2}"#)])),
        ],
    )
    .unwrap();
    let rows = table_model_arrow::batch::Rows::new(&batch, &schema).unwrap();
    assert!(rows.entity(0).is_ok());
    let messages: Vec<String> = (1..4).map(|r| rows.entity(r).unwrap_err().to_string()).collect();
    assert!(messages[0].starts_with("invalid row key \"bad/key\""), "{}", messages[0]);
    assert_eq!(messages[1], "the @overflow column is not a JSON object");
    assert!(messages[2].starts_with("invalid @overflow column: "), "{}", messages[2]);
    let err = entities(&batch, &schema).unwrap_err();
    assert_eq!(err.row_number(), Some(1));
    assert!(err.to_string().starts_with("row 1: "), "{err}");
}

fn edm_value() -> impl Strategy<Value = EdmValue> {
    prop_oneof![
        any::<u64>().prop_map(|bits| EdmValue::Double(f64::from_bits(bits))),
        any::<i32>().prop_map(EdmValue::Int32),
        any::<i64>().prop_map(EdmValue::Int64),
        any::<bool>().prop_map(EdmValue::Boolean),
        any::<[u8; 16]>().prop_map(|b| EdmValue::Guid(uuid::Uuid::from_bytes(b))),
        (table_model::limits::DATETIME_MIN_TICKS..=table_model::limits::DATETIME_MAX_TICKS)
            .prop_map(|t| EdmValue::DateTime(DateTime::from_ticks(t).unwrap())),
        // 2023 to 2027 in ticks since the Unix epoch: what a timestamp column holds.
        (17_000_000_000_000_000_i64..18_000_000_000_000_000)
            .prop_map(|t| EdmValue::DateTime(DateTime::from_ticks(t + table_model::limits::UNIX_EPOCH_TICKS).unwrap())),
        proptest::collection::vec(any::<u8>(), 0..64).prop_map(|b| EdmValue::Binary(EdmBinary::new(b).unwrap())),
        "\\PC{0,20}".prop_map(|s| EdmValue::String(EdmString::new(s).unwrap())),
    ]
}

fn random_entity() -> impl Strategy<Value = Entity> {
    (
        "[a-z0-9 é]{0,8}",
        "[a-z0-9]{1,8}",
        proptest::collection::vec((prop::sample::select(vec!["A", "B", "C", "D", "E"]), edm_value()), 0..6),
        proptest::option::of(table_model::limits::DATETIME_MIN_TICKS..=table_model::limits::DATETIME_MAX_TICKS),
    )
        .prop_map(|(pk, rk, properties, timestamp)| {
            let mut e = entity(&pk, &rk);
            for (name, value) in properties {
                e.insert(name.parse().unwrap(), value).unwrap();
            }
            e.set_server_metadata(timestamp.map(|t| DateTime::from_ticks(t).unwrap()), None);
            e
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn random_entities_round_trip_through_batches_and_parquet(
        input in proptest::collection::vec(random_entity(), 1..40),
        sample in 1_usize..50,
    ) {
        let schema = schema_of(&input[..sample.min(input.len())]);
        let batches = through_batches(&schema, &input, 16);
        prop_assert_eq!(input.iter().map(nan_as_one).collect::<Vec<_>>(), batches.iter().map(nan_as_one).collect::<Vec<_>>());
        let options = WriterOptions { sample, batch_rows: 5, row_group_rows: 9, ..WriterOptions::default() };
        let file = through_parquet(&input, None, options);
        prop_assert_eq!(input.iter().map(nan_as_one).collect::<Vec<_>>(), file.iter().map(nan_as_one).collect::<Vec<_>>());
    }

    /// Entities written by reference (`write_ref`) make the file their owned copies make, byte for byte, while
    /// the writer samples and after.
    #[test]
    fn entities_written_by_reference_make_the_file_of_their_copies(
        input in proptest::collection::vec(random_entity(), 1..40),
        sample in 1_usize..50,
    ) {
        let options = || WriterOptions { sample, batch_rows: 5, row_group_rows: 9, ..WriterOptions::default() };
        let mut owned = ParquetEntityWriter::new(Vec::new(), None, options()).unwrap();
        let mut borrowed = ParquetEntityWriter::new(Vec::new(), None, options()).unwrap();
        for entity in &input {
            owned.write(entity.clone()).unwrap();
            borrowed.write_ref(entity).unwrap();
        }
        prop_assert_eq!(owned.entities(), borrowed.entities());
        let (owned, borrowed) = (owned.finish().unwrap(), borrowed.finish().unwrap());
        prop_assert!(owned == borrowed, "the files differ");
    }
}

#[test]
fn a_parquet_row_that_is_not_an_entity_is_an_error_with_its_row_keys_and_property_and_reading_goes_on() {
    use arrow_array::{Int32Array, RecordBatch, StringArray};
    let schema = schema_of(&[entity("p", "r").with("N".parse().unwrap(), 1).unwrap()]);
    let arrow = schema.arrow().clone();
    let too_long = "x".repeat(40_000);
    let batch = RecordBatch::try_new(
        arrow.clone(),
        vec![
            Arc::new(StringArray::from(vec!["p", "p", "p", "p"])),
            Arc::new(StringArray::from(vec!["1", "bad/key", "3", "4"])),
            Arc::new(Int32Array::from(vec![Some(1), Some(2), None, Some(4)])),
            Arc::new(StringArray::from(vec![None, None, Some(format!(r#"{{"Long":"{too_long}"}}"#)), None])),
        ],
    )
    .unwrap();
    let mut file = Vec::new();
    let mut writer = parquet::arrow::ArrowWriter::try_new(&mut file, arrow, None).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();

    let read: Vec<_> = ParquetEntityReader::new(bytes::Bytes::from(file), ReaderOptions::default()).unwrap().collect();
    assert_eq!(read.len(), 4, "a bad row does not stop the reading");
    assert_eq!(read[0].as_ref().unwrap().get::<i32>("N").unwrap(), 1);
    let bad_key = read[1].as_ref().unwrap_err();
    assert_eq!((bad_key.row_number(), bad_key.keys(), bad_key.property()), (Some(1), Some(("p", "bad/key")), None));
    let too_long = read[2].as_ref().unwrap_err();
    assert_eq!((too_long.row_number(), too_long.keys()), (Some(2), Some(("p", "3"))));
    assert!(too_long.to_string().starts_with("row 2: invalid @overflow column: "), "{too_long}");
    assert_eq!(read[3].as_ref().unwrap().row_key().as_str(), "4");
}

#[test]
fn a_value_over_its_limit_is_an_error_naming_its_property() {
    use arrow_array::{RecordBatch, StringArray};
    let schema = schema_of(&[entity("p", "r").with("S".parse().unwrap(), "s").unwrap()]);
    let batch = RecordBatch::try_new(
        schema.arrow().clone(),
        vec![
            Arc::new(StringArray::from(vec!["p"])),
            Arc::new(StringArray::from(vec!["r"])),
            Arc::new(StringArray::from(vec!["é".repeat(32_769)])),
            Arc::new(StringArray::from(vec![None::<&str>])),
        ],
    )
    .unwrap();
    let err = entities(&batch, &schema).unwrap_err();
    assert_eq!((err.row_number(), err.keys(), err.property()), (Some(0), Some(("p", "r")), Some("S")));
    assert!(err.to_string().starts_with("row 0: property `S`: "), "{err}");
}

/// A query page of the service (minimal metadata) holding the entities: each one's request body, with its
/// `Timestamp` and an ETag.
fn page_of(entities: &[Entity]) -> String {
    let mut page = String::from(r#"{"odata.metadata":"https://a.table.core.windows.net/$metadata#t","value":["#);
    for (i, e) in entities.iter().enumerate() {
        let body = table_model::json::encode_entity(e).unwrap();
        let members = body.as_str().strip_prefix('{').unwrap();
        page.push_str(if i == 0 { "{" } else { ",{" });
        page.push_str(&format!(r#""odata.etag":"W/\"datetime'{i}'\"","#));
        if let Some(timestamp) = e.timestamp() {
            page.push_str(&format!(r#""Timestamp@odata.type":"Edm.DateTime","Timestamp":"{timestamp}","#));
        }
        page.push_str(members);
    }
    page.push_str("]}");
    page
}

/// The batch of a page decoded into entities, each pushed: what `push_page` must make.
fn batch_through_entities(schema: &Arc<EntitySchema>, page: &str) -> arrow_array::RecordBatch {
    let mut builder = BatchBuilder::new(schema.clone());
    for e in table_model::json::decode_query(page.as_bytes(), None).unwrap() {
        builder.push(&e).unwrap();
    }
    builder.finish().unwrap()
}

#[test]
fn a_page_decoded_into_a_batch_is_the_batch_of_its_entities() {
    let input = boundary_entities();
    for sample in [1, 3, input.len()] {
        let schema = schema_of(&input[..sample]);
        let page = page_of(&input);
        let mut builder = BatchBuilder::new(schema.clone());
        assert_eq!(builder.push_page(page.as_bytes()).unwrap(), input.len());
        let batch = builder.finish().unwrap();
        assert_eq!(batch, batch_through_entities(&schema, &page), "schema of {sample} entities");
        // JSON has one NaN: the page's entities, not the input, are what the batch must hold.
        let decoded = table_model::json::decode_query(page.as_bytes(), None).unwrap();
        assert_same(&decoded, &entities(&batch, &schema).unwrap());
    }
}

#[test]
fn a_page_may_list_properties_in_any_order_and_leave_any_out() {
    let schema =
        schema_of(&[entity("p", "0").with("A".parse().unwrap(), 1).unwrap().with("B".parse().unwrap(), "b").unwrap()]);
    // The same names in other orders, one left out, one not in the schema, one of another type: each entity
    // breaks the guess the one before it left.
    let page = br#"{"value":[
        {"PartitionKey":"p","RowKey":"1","A":1,"B":"x"},
        {"PartitionKey":"p","RowKey":"2","B":"y","A":2},
        {"PartitionKey":"p","RowKey":"3","C":true,"A":3},
        {"PartitionKey":"p","RowKey":"4","A":"four","B":null},
        {"PartitionKey":"p","RowKey":"5"}
    ]}"#;
    let mut builder = BatchBuilder::new(schema.clone());
    assert_eq!(builder.push_page(page).unwrap(), 5);
    let batch = builder.finish().unwrap();
    assert_eq!(batch, batch_through_entities(&schema, std::str::from_utf8(page).unwrap()));
    let a = batch.column_by_name("A").unwrap().as_primitive::<arrow_array::types::Int32Type>();
    assert_eq!(
        (0..5).map(|i| a.is_valid(i).then(|| a.value(i))).collect::<Vec<_>>(),
        [Some(1), Some(2), Some(3), None, None]
    );
    let overflow = batch.column_by_name(OVERFLOW_COLUMN).unwrap().as_string::<i32>();
    assert_eq!(overflow.value(2), r#"{"C":true}"#);
    assert_eq!(overflow.value(3), r#"{"A":"four"}"#);
    assert!(overflow.is_null(0) && overflow.is_null(1) && overflow.is_null(4));
}

#[test]
fn a_page_that_does_not_decode_is_an_error_naming_its_entity_and_keeps_the_rows_before_it() {
    let schema = schema_of(&[entity("p", "0").with("A".parse().unwrap(), 1).unwrap()]);
    let cases: [(&str, &str); 4] = [
        (r#"{"PartitionKey":"p","RowKey":"bad/key","A":1}"#, "RowKey"),
        (r#"{"PartitionKey":"p","RowKey":"2","A@odata.type":"Edm.Int64","A":"x"}"#, "A"),
        (r#"{"PartitionKey":"p","RowKey":"2","A":1,"A":2}"#, ""),
        (r#"{"PartitionKey":"p","RowKey":"2","bad name":1}"#, "bad name"),
    ];
    for (bad, property) in cases {
        let page = format!(
            r#"{{"value":[{{"PartitionKey":"p","RowKey":"1","A":7}},{bad},{{"PartitionKey":"p","RowKey":"3"}}]}}"#
        );
        let mut builder = BatchBuilder::new(schema.clone());
        let err = builder.push_page(page.as_bytes()).unwrap_err();
        let ErrorKind::Decode(decode) = err.kind() else { panic!("{err:?}") };
        assert_eq!(decode.entity_index(), Some(1), "{bad}: {err}");
        if !property.is_empty() {
            assert_eq!(decode.property(), Some(property), "{bad}: {err}");
        }
        assert!(err.to_string().starts_with("invalid query page: "), "{err}");
        // The entity before the bad one is a row, the bad one and the one after it are not; the builder goes on.
        assert_eq!(builder.rows(), 1, "{bad}");
        assert_eq!(builder.push_page(br#"{"value":[{"PartitionKey":"q","RowKey":"9","A":9}]}"#).unwrap(), 1);
        let batch = builder.finish().unwrap();
        let keys = batch.column_by_name("RowKey").unwrap().as_string::<i32>();
        assert_eq!((keys.value(0), keys.value(1)), ("1", "9"));
        let a = batch.column_by_name("A").unwrap().as_primitive::<arrow_array::types::Int32Type>();
        assert_eq!((a.value(0), a.value(1)), (7, 9));
    }
    for truncated in [&br#"{"value":[{"PartitionKey":"p","RowKey":"1"},{"Partit"#[..], b"", b"[]", b"{\"value\":{}}"] {
        let err = BatchBuilder::new(schema.clone()).push_page(truncated).unwrap_err();
        assert!(matches!(err.kind(), ErrorKind::Decode(_)), "{err:?}");
    }
}

#[test]
fn an_entity_of_many_nulls_is_one_row_of_its_values() {
    let schema = schema_of(&[entity("p", "0").with("A".parse().unwrap(), 1).unwrap()]);
    // `null`s do not count towards the 252 properties: 10,000 of them around one value, twice.
    let nulls: String = (0..10_000).map(|i| format!(r#","N{i}":null"#)).collect();
    let page = format!(
        r#"{{"value":[{{"PartitionKey":"p","RowKey":"1"{nulls},"A":5}},{{"PartitionKey":"p","RowKey":"2","A":6{nulls}}}]}}"#
    );
    let mut builder = BatchBuilder::new(schema.clone());
    assert_eq!(builder.push_page(page.as_bytes()).unwrap(), 2);
    let batch = builder.finish().unwrap();
    assert_eq!(batch, batch_through_entities(&schema, &page));
    let a = batch.column_by_name("A").unwrap().as_primitive::<arrow_array::types::Int32Type>();
    assert_eq!((a.value(0), a.value(1)), (5, 6));
    assert!(batch.column_by_name(OVERFLOW_COLUMN).unwrap().is_null(0));
}

#[test]
fn a_page_value_that_fits_no_column_without_an_overflow_column_is_a_schema_error() {
    let arrow = arrow_schema::Schema::new(vec![
        arrow_schema::Field::new("PartitionKey", DataType::Utf8, false),
        arrow_schema::Field::new("RowKey", DataType::Utf8, false),
        arrow_schema::Field::new("A", DataType::Int32, true),
    ]);
    let schema = Arc::new(EntitySchema::new(Arc::new(arrow)).unwrap());
    let mut builder = BatchBuilder::new(schema);
    let page = br#"{"value":[{"PartitionKey":"p","RowKey":"1","A":1},{"PartitionKey":"p","RowKey":"2","A":"two"}]}"#;
    let err = builder.push_page(page).unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::Schema(_)), "{err:?}");
    assert_eq!(
        err.to_string(),
        "invalid schema: entity (p, 2) has values that fit no column, and the schema has no overflow column"
    );
    assert_eq!(builder.rows(), 1);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Random entities in a page, straight into a batch: the batch of the same entities pushed one by one.
    #[test]
    fn random_pages_decode_into_the_batch_of_their_entities(
        input in proptest::collection::vec(random_entity(), 0..40),
        sample in 1_usize..50,
    ) {
        let schema = schema_of(&input[..sample.min(input.len())]);
        let page = page_of(&input);
        let mut builder = BatchBuilder::new(schema.clone());
        prop_assert_eq!(builder.push_page(page.as_bytes()).unwrap(), input.len());
        prop_assert_eq!(builder.finish().unwrap(), batch_through_entities(&schema, &page));
    }

    /// A page with a byte changed, cut or put in: `push_page` fails exactly when `decode_query` does, at the same
    /// entity, and otherwise makes the same batch; it never panics.
    #[test]
    fn a_mangled_page_fails_as_the_decoder_does(
        input in proptest::collection::vec(random_entity(), 1..8),
        at in any::<prop::sample::Index>(),
        byte in any::<u8>(),
        how in 0..3_u8,
    ) {
        let schema = schema_of(&input);
        let mut page = page_of(&input).into_bytes();
        let i = at.index(page.len());
        match how {
            0 => page[i] = byte,
            1 => page.truncate(i),
            _ => page.insert(i, byte),
        }
        let expected = table_model::json::decode_query(&page, None);
        let mut builder = BatchBuilder::new(schema.clone());
        match (builder.push_page(&page), expected) {
            (Ok(rows), Ok(decoded)) => {
                prop_assert_eq!(rows, decoded.len());
                let mut by_entities = BatchBuilder::new(schema.clone());
                decoded.iter().for_each(|e| by_entities.push(e).unwrap());
                prop_assert_eq!(builder.finish().unwrap(), by_entities.finish().unwrap());
            }
            (Err(err), Err(expected)) => {
                let ErrorKind::Decode(decode) = err.kind() else { panic!("{err:?}") };
                prop_assert_eq!(decode.to_string(), expected.to_string());
            }
            (got, expected) => prop_assert!(false, "push_page: {got:?}, decode_query: {expected:?}"),
        }
    }
}
