//! The `parquet` format end to end against Azurite: export, import into a new table, compare entity by entity,
//! bit for bit; with a schema that leaves properties and types out, they survive in the overflow column.

use crate::support::*;
use table_model::client::BulkOperation;
use table_model::{EdmString, Entity};
use table_model_arrow::parquet::{ParquetEntityReader, ReaderOptions};

/// The boundary entities, plus a 32K-unit non-ASCII string and a type conflict (N as a string once).
fn entities() -> Vec<Entity> {
    let mut entities = boundary_entities();
    let (p, r) = keys("long", "text");
    entities
        .push(Entity::new(p, r).with("Text".parse().unwrap(), EdmString::new("日".repeat(32_768)).unwrap()).unwrap());
    let (p, r) = keys("bulk-0", "conflict");
    entities.push(Entity::new(p, r).with("N".parse().unwrap(), "not a number").unwrap());
    entities
}

fn read_parquet(path: &std::path::Path) -> (Vec<String>, Vec<Entity>) {
    let reader = ParquetEntityReader::new(std::fs::File::open(path).unwrap(), ReaderOptions::default()).unwrap();
    let columns = reader.schema().arrow().fields().iter().map(|f| f.name().clone()).collect();
    (columns, reader.collect::<Result<_, _>>().unwrap())
}

#[tokio::test]
async fn a_parquet_export_imports_back_bit_for_bit() {
    let azurite = azurite!();
    let dir = temp_dir("parquet");
    let (source, target) = (unique_table("PqSrc"), unique_table("PqDst"));
    let source_table = azurite.service.create_table(&source, None).await.unwrap();
    let report = source_table.bulk_write(BulkOperation::Insert, entities(), None).await;
    assert!(report.is_complete(), "{:?}", report.failures);
    let original = all(&source_table).await;
    assert_eq!(original.len(), 254);

    let out = tablectl(
        &azurite.connection_string,
        &dir,
        &["export", source.as_str(), "-o", "backup/", "--format", "parquet"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("exported 254 entities"), "{}", text(&out.stderr));
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("backup/manifest.json")).unwrap()).unwrap();
    let file = &manifest["files"][0];
    assert_eq!(file["path"], format!("{source}.parquet"));
    assert_eq!(file["entities"], 254);
    let path = dir.join("backup").join(file["path"].as_str().unwrap());
    assert_eq!(file["bytes"], std::fs::metadata(&path).unwrap().len());

    // The file holds what the service gave, Timestamp included, bit for bit: 1601 and 9999 in microsecond
    // columns, each 100 ns digit in the overflow.
    let (columns, exported) = read_parquet(&path);
    assert_eq!(&columns[..3], ["PartitionKey", "RowKey", "Timestamp"]);
    assert_eq!(columns.last().unwrap(), "@overflow");
    assert_same(&original, &exported);
    assert!(original.iter().zip(&exported).all(|(o, e)| o.timestamp() == e.timestamp()));

    let out = tablectl(&azurite.connection_string, &dir, &["import", "backup", target.as_str()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("imported 254 entities"), "{}", text(&out.stderr));
    assert_same(&original, &all(&azurite.service.table_client(target)).await);
}

#[tokio::test]
async fn values_outside_a_given_schema_survive_in_the_overflow_column() {
    let azurite = azurite!();
    let dir = temp_dir("parquet-schema");
    let (source, target) = (unique_table("PqSch"), unique_table("PqSchDst"));
    let source_table = azurite.service.create_table(&source, None).await.unwrap();
    let report = source_table.bulk_write(BulkOperation::Insert, entities(), None).await;
    assert!(report.is_complete(), "{:?}", report.failures);
    let original = all(&source_table).await;

    // Two columns, N as an Int32 (it is an Int64, and once a String), no Timestamp: the rest overflows.
    let schema =
        r#"{"properties":[{"name":"N","types":[{"type":"Int32"}]},{"name":"Text","types":[{"type":"Edm.String"}]}]}"#;
    std::fs::write(dir.join("schema.json"), schema).unwrap();
    let args = ["export", source.as_str(), "-o", "out.parquet", "--format", "parquet", "--schema", "schema.json"];
    let out = tablectl(&azurite.connection_string, &dir, &args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let (columns, exported) = read_parquet(&dir.join("out.parquet"));
    assert_eq!(columns, ["PartitionKey", "RowKey", "N", "Text", "@overflow"]);
    assert_same(&original, &exported);
    assert!(original.iter().zip(&exported).all(|(o, e)| o.timestamp() == e.timestamp()));

    let out = tablectl(&azurite.connection_string, &dir, &["import", "out.parquet", target.as_str()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_same(&original, &all(&azurite.service.table_client(target)).await);

    // A schema file that is not one is refused before any request; so is --schema with another format.
    std::fs::write(dir.join("bad.json"), r#"{"properties":[{"name":"N","types":[{"type":"Int128"}]}]}"#).unwrap();
    let out = tablectl(
        &azurite.connection_string,
        &dir,
        &["export", source.as_str(), "-o", "x.parquet", "--format", "parquet", "--schema", "bad.json"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).starts_with("tablectl: invalid schema file `bad.json`: unknown EDM type `Int128`"),
        "{}",
        text(&out.stderr)
    );
    let out = tablectl(
        &azurite.connection_string,
        &dir,
        &["export", source.as_str(), "-o", "x.jsonl", "--schema", "schema.json"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(!dir.join("x.parquet").exists() && !dir.join("x.jsonl").exists());
}

#[test]
fn a_file_that_is_not_parquet_is_an_error_naming_it() {
    let dir = temp_dir("parquet-hostile");
    std::fs::write(dir.join("bad.parquet"), b"PAR1 but nothing else").unwrap();
    let out = tablectl("", &dir, &["schema", "bad.parquet"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(stderr.starts_with("tablectl: cannot read `bad.parquet`: invalid parquet: "), "{stderr}");
}

#[tokio::test]
async fn a_parquet_row_that_is_not_an_entity_is_rejected_with_its_row_and_the_others_are_imported() {
    use arrow_array::{Int32Array, RecordBatch, StringArray};
    use std::sync::Arc;
    let azurite = azurite!();
    let dir = temp_dir("parquet-rejects");
    let target = unique_table("PqRej");

    // A file as table-model-arrow writes it (its schema, with the overflow column), with a RowKey the service
    // refuses on row 2 and a String over 32,768 UTF-16 units in the overflow of row 4.
    let mut inference = table_model_arrow::infer::Inference::new();
    let (p, r) = keys("p", "r");
    inference.observe(&Entity::new(p, r).with("N".parse().unwrap(), 1).unwrap());
    let schema = Arc::new(inference.to_schema().unwrap());
    let long = format!(r#"{{"Long":"{}"}}"#, "x".repeat(32_769));
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(StringArray::from(vec!["p", "p", "p", "p"])),
            Arc::new(StringArray::from(vec!["1", "bad/key", "3", "4"])),
            Arc::new(Int32Array::from(vec![1, 2, 3, 4])),
            Arc::new(StringArray::from(vec![None, None, None, Some(long.as_str())])),
        ],
    )
    .unwrap();
    let file = std::fs::File::create(dir.join("in.parquet")).unwrap();
    let mut writer = parquet::arrow::ArrowWriter::try_new(file, schema, None).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();

    let out = tablectl(&azurite.connection_string, &dir, &["import", "in.parquet", target.as_str()]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let stored = all(&azurite.service.table_client(target.clone())).await;
    let stored: Vec<&str> = stored.iter().map(|e| e.row_key().as_str()).collect();
    assert_eq!(stored, ["1", "3"]);
    let rejects = text(&std::fs::read(dir.join(format!("{target}.rejects.jsonl"))).unwrap());
    let rejects: Vec<serde_json::Value> = rejects.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(rejects.len(), 2, "{rejects:?}");
    assert_eq!((&rejects[0]["line"], &rejects[0]["row_key"]), (&serde_json::json!(2), &serde_json::json!("bad/key")));
    assert!(rejects[0]["rule"].as_str().unwrap().starts_with("invalid row key \"bad/key\""), "{rejects:?}");
    assert_eq!((&rejects[1]["line"], &rejects[1]["row_key"]), (&serde_json::json!(4), &serde_json::json!("4")));
    assert!(rejects[1]["rule"].as_str().unwrap().starts_with("invalid @overflow column: "), "{rejects:?}");
}
