//! The csv format and compression end to end, and hostile inputs, as a user meets them: the built binary against
//! Azurite (`scripts/azurite.sh run cargo test -p table-model-cli`). Storage Explorer's shapes come from the files
//! in `tests/fixtures/`, byte for byte (a BOM, CRLF, both spellings of the types, quoted line breaks).

use crate::support::*;
use table_model::client::BulkOperation;
use table_model::{DateTime, EdmBinary, EdmString, EdmValue, Entity};

fn fixture(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

fn entity(p: &str, r: &str, properties: &[(&str, EdmValue)]) -> Entity {
    let (p, r) = keys(p, r);
    let mut entity = Entity::new(p, r);
    for (name, value) in properties {
        entity.insert(name.parse().unwrap(), value.clone()).unwrap();
    }
    entity
}

fn string(s: &str) -> EdmValue {
    EdmValue::String(EdmString::new(s).unwrap())
}

fn datetime(s: &str) -> EdmValue {
    EdmValue::DateTime(s.parse::<DateTime>().unwrap())
}

fn rejects(dir: &std::path::Path, name: &str) -> Vec<serde_json::Value> {
    text(&std::fs::read(dir.join(name)).unwrap()).lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[tokio::test]
async fn storage_explorer_csv_files_import_with_their_types() {
    let azurite = azurite!();
    let dir = temp_dir("fixtures");
    let name = unique_table("Se");
    let out = tablectl(
        &azurite.connection_string,
        &dir,
        &["import", fixture("storage-explorer-edm.typed.csv").to_str().unwrap(), name.as_str()],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let expected = [
        entity(
            "eu",
            "ada",
            &[
                ("Age", EdmValue::Int32(36)),
                ("Balance", EdmValue::Double(-0.0)),
                ("Big", EdmValue::Int64(i64::MIN)),
                ("Born", datetime("1815-12-10T00:00:00Z")),
                ("Id", EdmValue::Guid("5b5e3a84-3c4c-4f6e-9b8a-0c1d2e3f4a5b".parse().unwrap())),
                ("Photo", EdmValue::Binary(EdmBinary::new(vec![1, 2, 3, 255]).unwrap())),
                ("Active", EdmValue::Boolean(true)),
                ("Notes", string("first line\r\nsecond, with \"quotes\"")),
            ],
        ),
        entity(
            "eu",
            "alan",
            &[
                ("Age", EdmValue::Int32(41)),
                ("Balance", EdmValue::Double(f64::NAN)),
                ("Big", EdmValue::Int64(i64::MAX)),
                ("Born", EdmValue::DateTime(DateTime::MIN)),
                ("Active", EdmValue::Boolean(false)),
                ("Notes", string("")),
            ],
        ),
        entity(
            "us",
            "grace",
            &[
                ("Balance", EdmValue::Double(1e300)),
                ("Born", EdmValue::DateTime(DateTime::MAX)),
                ("Photo", EdmValue::Binary(EdmBinary::new(Vec::new()).unwrap())),
                ("Notes", string("日本 🎉")),
            ],
        ),
    ];
    let mut stored = all(&azurite.service.table_client(name.clone())).await;
    // Azurite stores -0.0 as 0.0 (docs/tablectl.md); the file's -0.0 was read as -0.0 (the csv unit tests).
    assert_eq!(stored[0].value("Balance"), Some(&EdmValue::Double(0.0)));
    stored[0].insert("Balance".parse().unwrap(), -0.0).unwrap();
    assert_same(&expected, &stored);

    // Storage Explorer 1.40's shape: bare type names, LF, a blank line, types on the first row only (#8772):
    // an untyped value is a String, never guessed; an Int32 type over an empty cell is no property (#1855).
    let name = unique_table("Se");
    let out = tablectl(
        &azurite.connection_string,
        &dir,
        &["import", fixture("storage-explorer-short.typed.csv").to_str().unwrap(), name.as_str()],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let expected = [
        entity(
            "1979671",
            "1000",
            &[
                ("aggType", EdmValue::Int32(2)),
                ("alarmStatus", string("")),
                ("date", datetime("2025-09-22T09:45:35.2743359Z")),
            ],
        ),
        entity("1979671", "11", &[("aggType", string("4"))]),
        entity("1979671", "155", &[("alarmStatus", string("ACK"))]),
    ];
    assert_same(&expected, &all(&azurite.service.table_client(name)).await);
}

#[tokio::test]
async fn hostile_lines_are_rejected_with_their_position_and_the_rest_is_imported() {
    let azurite = azurite!();
    let dir = temp_dir("hostile-lines");
    let good = |r: u32| format!("{{\"PartitionKey\":\"p\",\"RowKey\":\"{r}\"}}\n").into_bytes();
    let mut jsonl = good(1);
    jsonl.extend(vec![b'x'; 10 << 20]); // line 2: 10 MB
    jsonl.push(b'\n');
    jsonl.extend_from_slice(b"{\"PartitionKey\":\"p\",\"RowKey\":\"\xff\xfe\"}\n"); // line 3: not UTF-8
    jsonl.extend(good(4));
    jsonl.extend_from_slice(b"{\"PartitionKey\":\"p\",\"RowKey\":\"5\",\"N\":"); // line 5: cut short
    std::fs::write(dir.join("in.jsonl"), &jsonl).unwrap();

    let mut csv = b"PartitionKey,RowKey,N,N@type\r\np,1,1,Int32\r\n".to_vec();
    csv.extend_from_slice(b"p,2,\""); // line 3: a 10 MB field
    csv.extend(vec![b'y'; 10 << 20]);
    csv.extend_from_slice(b"\",String\r\np,3,\xc3\x28,String\r\n"); // line 4: not UTF-8
    csv.extend_from_slice(b"p,4,4,Int64\r\np,5,\"cut"); // line 6: the file ends inside quotes
    std::fs::write(dir.join("in.csv"), &csv).unwrap();

    for (file, bad_lines) in [("in.jsonl", [2, 3, 5]), ("in.csv", [3, 4, 6])] {
        let name = unique_table("Bad");
        let out = tablectl(
            &azurite.connection_string,
            &dir,
            &["import", file, name.as_str(), "--reject", "r.jsonl", "--json"],
        );
        assert_eq!(out.status.code(), Some(1), "{file}: {}", text(&out.stderr));
        let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!((&summary["imported"], &summary["rejected"]), (&2.into(), &3.into()), "{file}");
        let rejects = rejects(&dir, "r.jsonl");
        let lines: Vec<u64> = rejects.iter().map(|r| r["line"].as_u64().unwrap()).collect();
        assert_eq!(lines, bad_lines, "{file}: {rejects:?}");
        assert!(rejects.iter().all(|r| r["source"] == file));
        let over = rejects[0]["rule"].as_str().unwrap();
        assert!(over.contains("over the 8388608"), "{file}: {over}");
        let stored: Vec<String> =
            all(&azurite.service.table_client(name)).await.iter().map(|e| e.row_key().to_string()).collect();
        assert_eq!(stored, ["1", "4"], "{file}");
    }

    // A header of 10 million columns is refused with its position before a column is allocated.
    let mut wide = b"PartitionKey,RowKey".to_vec();
    wide.extend_from_slice(&b",a".repeat(10_000_000));
    wide.extend_from_slice(b"\np,1\n");
    std::fs::write(dir.join("wide.csv"), &wide).unwrap();
    let name = unique_table("Wide");
    let out = tablectl(&azurite.connection_string, &dir, &["import", "wide.csv", name.as_str()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stderr),
        "tablectl: invalid csv header in `wide.csv` line 1: over 16384 columns (an entity has at most 252 properties)\n"
    );
    assert!(all(&azurite.service.table_client(name)).await.is_empty());
}

#[tokio::test]
async fn a_corrupt_compressed_file_stops_with_its_position_and_keeps_what_was_read() {
    let azurite = azurite!();
    let dir = temp_dir("corrupt");
    let source = unique_table("Cor");
    let table = azurite.service.create_table(&source, None).await.unwrap();
    let entities = mixed_entities(3, 2_000);
    assert!(table.bulk_write(BulkOperation::Insert, entities.iter(), None).await.is_complete());
    let original = all(&table).await;

    for (format, compress, file) in [("jsonl", "gzip", "t.jsonl.gz"), ("csv", "zstd", "t.csv.zst")] {
        let out = tablectl(
            &azurite.connection_string,
            &dir,
            &["export", source.as_str(), "-o", file, "--format", format, "--compress", compress],
        );
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let mut bytes = std::fs::read(dir.join(file)).unwrap();
        bytes.truncate(bytes.len() * 2 / 3);
        std::fs::write(dir.join(file), &bytes).unwrap();

        let target = unique_table("Cor");
        let out = tablectl(&azurite.connection_string, &dir, &["import", file, target.as_str()]);
        assert_eq!(out.status.code(), Some(4), "{file}: {}", text(&out.stderr));
        let stderr = text(&out.stderr);
        assert!(stderr.starts_with(&format!("tablectl: cannot read `{file}` after line ")), "{file}: {stderr}");
        // What was read before the cut is imported, exactly.
        let copied = all(&azurite.service.table_client(target)).await;
        assert!(copied.len() > 500 && copied.len() < original.len(), "{file}: {} imported", copied.len());
        let read: Vec<Entity> =
            original.iter().filter(|e| copied.iter().any(|c| c.row_key() == e.row_key())).cloned().collect();
        assert_same(&read, &copied);
    }

    // A compressed export checked against its manifest: one changed byte is refused before anything is sent.
    let out = tablectl(
        &azurite.connection_string,
        &dir,
        &["export", source.as_str(), "-o", "backup/", "--format", "csv", "--compress", "gzip"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let path = dir.join("backup").join(format!("{source}.csv.gz"));
    let target = unique_table("Cor");
    let out = tablectl(&azurite.connection_string, &dir, &["import", "backup", target.as_str()]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "an untouched compressed csv export matches its manifest: {}",
        text(&out.stderr)
    );
    let mut bytes = std::fs::read(&path).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 1;
    std::fs::write(&path, &bytes).unwrap();
    let target = unique_table("Cor");
    let out = tablectl(&azurite.connection_string, &dir, &["import", "backup", target.as_str()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("does not match the manifest: SHA-256"), "{}", text(&out.stderr));
}
