//! The round trip of every format, against Azurite (`scripts/azurite.sh run cargo test -p table-model-cli`):
//! 20,000 entities of mixed schemas with every EDM type at its boundaries ([`support::mixed_entities`]) are
//! inserted once, then exported in each format by the built binary, read back from the file, and imported into a
//! new table; the file and the new table hold the source's entities, compared property by property (Doubles by
//! their bits).
//!
//! Each format is a test of its own, so that a failure names its format and the formats run side by side where
//! there are cores for them; the source is inserted by the first of them and shared ([`source`]).

use crate::support::*;
use table_model::client::BulkOperation;
use table_model::{EdmValue, Entity, TableName};

const ENTITIES: usize = 20_000;

fn by_keys(a: &Entity, b: &Entity) -> std::cmp::Ordering {
    (a.partition_key(), a.row_key()).cmp(&(b.partition_key(), b.row_key()))
}

/// The table every format's round trip exports, and its entities as Azurite gives them back.
struct Source {
    table: TableName,
    original: Vec<Entity>,
}

/// The source, inserted by the first test that asks for it; the others wait for it (a `tokio` cell: each test
/// has a runtime of its own, and the cell's waiting works in any).
async fn source(azurite: &Azurite) -> &'static Source {
    static SOURCE: tokio::sync::OnceCell<Source> = tokio::sync::OnceCell::const_new();
    SOURCE
        .get_or_init(|| async {
            let name = unique_table("Rt");
            let table = azurite.service.create_table(&name, None).await.unwrap();
            let mut generated = mixed_entities(15, ENTITIES);
            let report = table.bulk_write(BulkOperation::Insert, generated.iter(), None).await;
            assert!(report.is_complete(), "{:?}", report.failures.first().map(|f| &f.error));
            let original = all(&table).await;
            // Azurite keeps every value but -0.0, which it stores as 0.0 (docs/tablectl.md); the formats keep -0.0
            // (their unit tests), so the source is what Azurite gives back.
            generated.sort_by(by_keys);
            for entity in &mut generated {
                if entity.value("Edge") == Some(&EdmValue::Double(-0.0)) {
                    entity.insert("Edge".parse().unwrap(), 0.0).unwrap();
                }
            }
            assert_same(&generated, &original);
            Source { table: name, original }
        })
        .await
}

/// Exports the source with `--format format --compress compress`, reads the file back, imports it into a new
/// table: the file and the table hold the source's entities, bit for bit.
async fn round_trip(format: &str, compress: &str) {
    let azurite = azurite!();
    let Source { table: source, original } = source(&azurite).await;
    let dir = temp_dir(&format!("roundtrip-{format}-{compress}"));
    let name = format!("{format}-{compress}");
    let out = tablectl(
        &azurite.connection_string,
        &dir,
        &["export", source.as_str(), "-o", &format!("{name}/"), "--format", format, "--compress", compress],
    );
    assert_eq!(out.status.code(), Some(0), "{name}: {}", text(&out.stderr));
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join(&name).join("manifest.json")).unwrap()).unwrap();
    let file = &manifest["files"][0];
    assert_eq!(file["entities"], ENTITIES as u64, "{name}");
    let path = dir.join(&name).join(file["path"].as_str().unwrap());
    assert_eq!(file["bytes"], std::fs::metadata(&path).unwrap().len(), "{name}");

    // The file holds the source's entities, bit for bit.
    let mut reader = table_model_transfer::format::open_reader(&path, None).unwrap();
    let mut exported = Vec::with_capacity(ENTITIES);
    while let Some(record) = reader.next_record().unwrap() {
        exported.push(record.entity.unwrap_or_else(|e| panic!("{name} line {}: {}", record.position.line, e.rule)));
    }
    assert_same(original, &exported);
    drop(exported);

    // And so does the table it is imported into.
    let target = unique_table("Rt");
    let out = tablectl(&azurite.connection_string, &dir, &["import", &name, target.as_str()]);
    assert_eq!(out.status.code(), Some(0), "{name}: {}", text(&out.stderr));
    assert!(text(&out.stderr).contains(&format!("imported {ENTITIES} entities")), "{}", text(&out.stderr));
    let target_table = azurite.service.table_client(target);
    assert_same(original, &all(&target_table).await);
    target_table.delete_table(None).await.unwrap();
}

/// One test per format: `--format` and `--compress`. A new format is one more line.
macro_rules! formats {
    ($($test:ident: $format:literal, $compress:literal;)*) => {
        $(
            #[tokio::test]
            async fn $test() {
                round_trip($format, $compress).await;
            }
        )*
    };
}

/// Twenty thousand entities of mixed schemas round trip exactly in each format.
mod twenty_thousand_mixed_entities_round_trip_exactly_in {
    use super::round_trip;

    formats! {
        jsonl: "jsonl", "none";
        jsonl_gzip: "jsonl", "gzip";
        jsonl_zstd: "jsonl", "zstd";
        csv: "csv", "none";
        csv_gzip: "csv", "gzip";
        csv_zstd: "csv", "zstd";
        parquet: "parquet", "none";
    }
}
