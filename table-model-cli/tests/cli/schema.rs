//! `tablectl schema` end to end: the properties of a file or table, and the `#[derive(TableEntity)]` struct of
//! `--rust`, compiled here and reading the table it came from (Azurite, as in `tablectl.rs`).

use crate::support::*;
use futures::TryStreamExt as _;
use table_model::client::BulkOperation;
use table_model::{DateTime, Entity, Query};

/// The struct `tablectl schema tests/fixtures/mixed.jsonl --rust` prints (checked below), compiled here.
mod mixed_entity {
    include!("../fixtures/mixed_entity.rs");
}

const MIXED_FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/mixed.jsonl");
const MIXED_GOLDEN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/mixed_entity.rs");

fn mixed_fixture() -> Vec<Entity> {
    let data = std::fs::read(MIXED_FIXTURE).unwrap();
    data.split_inclusive(|&b| b == b'\n')
        .map(|line| table_model_transfer::format::jsonl::read_entity(line).unwrap())
        .collect()
}

#[test]
fn schema_rust_of_the_mixed_fixture_is_the_checked_in_struct() {
    let dir = temp_dir("golden");
    let out = tablectl("", &dir, &["schema", MIXED_FIXTURE, "--rust"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        std::fs::read_to_string(MIXED_GOLDEN).unwrap(),
        "regenerate with `cargo run -p table-model-cli -- schema tests/fixtures/mixed.jsonl --rust > \
         tests/fixtures/mixed_entity.rs` (from table-model-cli/) and review the difference"
    );
}

#[test]
fn schema_of_a_file_lists_types_counts_and_conflicts_without_an_endpoint() {
    let dir = temp_dir("schema-file");
    let out = tablectl("", &dir, &["schema", MIXED_FIXTURE, "--sample", "2"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["entities"], 2);
    let mixed = json["properties"].as_array().unwrap().iter().find(|p| p["name"] == "Mixed").unwrap();
    assert_eq!(
        mixed,
        &serde_json::json!({"name": "Mixed", "count": 2, "column": "Text",
            "types": [{"type": "Edm.Int32", "count": 1}, {"type": "Edm.String", "count": 1}]})
    );
    let joined = json["properties"].as_array().unwrap().iter().find(|p| p["name"] == "Joined").unwrap();
    assert_eq!(joined["column"], "Timestamp", "1601 and 9999 are microsecond timestamps, never ticks");

    // A line that is not an entity: its line number; a value that is neither a file nor a table.
    std::fs::write(dir.join("bad.jsonl"), "{\"PartitionKey\":\"p\",\"RowKey\":\"r\"}\n{\"PartitionKey\":\"p\"}\n")
        .unwrap();
    let out = tablectl("", &dir, &["schema", "bad.jsonl"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).starts_with("tablectl: `bad.jsonl` line 2: "), "{}", text(&out.stderr));
    let out = tablectl("", &dir, &["schema", "missing.parquet"]);
    assert!(text(&out.stderr).starts_with("tablectl: cannot read `missing.parquet`: "), "{}", text(&out.stderr));
}

#[tokio::test]
async fn the_schema_rust_struct_reads_the_table_it_was_made_from() {
    let azurite = azurite!();
    let dir = temp_dir("schema-rust");
    let name = unique_table("Mixed");
    let table = azurite.service.create_table(&name, None).await.unwrap();
    let mut fixture = mixed_fixture();
    let report = table.bulk_write(BulkOperation::Insert, fixture.clone(), None).await;
    assert!(report.is_complete(), "{:?}", report.failures);

    // Read back with the generated struct: every property, an absent one as `None`, the conflict as EdmValue.
    let read: Vec<mixed_entity::Mixed> =
        table.query::<mixed_entity::Mixed>(&Query::new(), None).unwrap().try_collect().await.unwrap();
    assert_eq!(read.len(), 3);
    assert_eq!(read[1].avatar, None);
    assert_eq!(read[2].note.as_deref(), Some("only here"));
    assert_eq!(read[1].mixed, table_model::EdmValue::try_from("two").unwrap());
    assert_eq!(read[0].joined, "1601-01-01T00:00:00.0000000Z".parse::<DateTime>().unwrap());
    // Azurite stores -0.0 as 0.0 (docs/rules.md §5.7).
    fixture[1].insert("Score".parse().unwrap(), 0.0_f64).unwrap();
    let entities: Vec<Entity> = read.iter().map(|m| table_model::TableEntity::to_entity(m).unwrap()).collect();
    assert_same(&fixture, &entities);

    // From the table, the same struct with the table's name and its Timestamp.
    let out = tablectl(&azurite.connection_string, &dir, &["schema", name.as_str(), "--rust"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let code = text(&out.stdout);
    assert!(code.contains(&format!("#[table(name = \"{name}\")]\npub struct {name} {{\n")), "{code}");
    assert!(code.contains("    #[table(timestamp)]\n    pub timestamp: Option<table_model::DateTime>,\n"), "{code}");
    let golden = std::fs::read_to_string(MIXED_GOLDEN).unwrap();
    let fields =
        |code: &str| code.lines().skip_while(|l| !l.contains("rename = \"FirstName\"")).collect::<Vec<_>>().join("\n");
    assert_eq!(fields(&code), fields(&golden));
    let out = tablectl(&azurite.connection_string, &dir, &["schema", name.as_str(), "--json", "--sample", "2"]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["entities"], 2);
    assert_eq!(json["properties"][2]["name"], "Timestamp");
}
