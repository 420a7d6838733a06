//! `tablectl` end to end, as a user runs it: the built binary, its exit status, stdout and stderr, against
//! Azurite (`scripts/azurite.sh run cargo test -p table-model-cli`). Without `TABLE_MODEL_AZURITE_ENDPOINT`
//! the Azurite tests are skipped with a notice, unless `CI` is set, where they fail; the tests that need no
//! service always run.

use crate::support::*;
use futures::TryStreamExt as _;
use std::io::Write as _;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use table_model::client::BulkOperation;
use table_model::{Entity, Query, DEVELOPMENT_ACCOUNT_KEY};

#[tokio::test]
async fn export_then_import_gives_back_every_entity_bit_for_bit() {
    let azurite = azurite!();
    let dir = temp_dir("roundtrip");
    let (source, target) = (unique_table("Src"), unique_table("Dst"));
    let source_table = azurite.service.create_table(&source, None).await.unwrap();
    let written = source_table.bulk_write(BulkOperation::Insert, boundary_entities(), None).await;
    assert!(written.is_complete(), "{:?}", written.failures);
    let original = all(&source_table).await;
    assert_eq!(original.len(), 252);
    // What Azurite gives back is what was written, bit for bit, but for -0.0: Azurite (JavaScript, whose JSON
    // writes -0 as 0) stores it as 0.0. The jsonl format keeps -0.0 (the unit tests of `jsonl`).
    let mut written = boundary_entities();
    written.sort_by(|a, b| (a.partition_key(), a.row_key()).cmp(&(b.partition_key(), b.row_key())));
    let edge = written.iter().position(|e| e.partition_key().as_str() == "edge").unwrap();
    assert_eq!(original[edge].get::<f64>("NegZero").unwrap(), 0.0);
    written[edge].insert("NegZero".parse().unwrap(), original[edge].get::<f64>("NegZero").unwrap()).unwrap();
    assert_same(&written, &original);

    let export_dir = format!("{}/", dir.join("backup").display());
    let out = tablectl(&azurite.connection_string, &dir, &["export", source.as_str(), "-o", &export_dir]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "", "data and summaries stay off stdout unless asked");
    assert!(text(&out.stderr).contains("exported 252 entities"), "{}", text(&out.stderr));

    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("backup/manifest.json")).unwrap()).unwrap();
    let file = &manifest["files"][0];
    let data = std::fs::read(dir.join("backup").join(file["path"].as_str().unwrap())).unwrap();
    assert_eq!(file["entities"], 252);
    assert_eq!(file["bytes"], data.len() as u64);
    assert_eq!(data.iter().filter(|&&b| b == b'\n').count(), 252);
    assert_eq!(manifest["tool"], concat!("tablectl ", env!("CARGO_PKG_VERSION")));
    assert_eq!(manifest["table"], source.as_str());

    // Three transactions at once (the engine's suite checks that no more and no fewer are under way).
    let out = tablectl(&azurite.connection_string, &dir, &["import", "backup", target.as_str(), "--in-flight", "3"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("imported 252 entities"), "{}", text(&out.stderr));
    assert!(!dir.join(format!("{target}.rejects.jsonl")).exists(), "no reject file without rejects");

    // The file holds what the service gave, bit for bit, and the copy what the file holds.
    let exported: Vec<Entity> = data
        .split_inclusive(|&b| b == b'\n')
        .map(|line| table_model_transfer::format::jsonl::read_entity(line).unwrap())
        .collect();
    assert_same(&original, &exported);
    let copied = all(&azurite.service.table_client(target.clone())).await;
    assert_same(&exported, &copied);
    assert!(copied[0].timestamp() != original[0].timestamp() || copied[0].etag() != original[0].etag());
}

#[tokio::test]
async fn export_to_stdout_is_the_data_alone_and_query_pipes_json_lines() {
    let azurite = azurite!();
    let dir = temp_dir("stdout");
    let name = unique_table("Out");
    let table = azurite.service.create_table(&name, None).await.unwrap();
    let entities = boundary_entities();
    let report = table.bulk_write(BulkOperation::Insert, &entities[..12], None).await;
    assert!(report.is_complete());

    let out = tablectl(&azurite.connection_string, &dir, &["export", name.as_str(), "-o", "-"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let lines: Vec<&[u8]> = out.stdout.split_inclusive(|&b| b == b'\n').collect();
    assert_eq!(lines.len(), 12);
    let read: Vec<Entity> =
        lines.iter().map(|l| table_model_transfer::format::jsonl::read_entity(l).unwrap()).collect();
    assert_same(&all(&table).await, &read);
    assert_eq!(
        text(&out.stderr).trim_end(),
        format!("tablectl: exported 12 entities ({} bytes) of {name} to stdout", out.stdout.len())
    );

    // Piped, `query` writes JSON lines; --top and --select bound them.
    let out = tablectl(
        &azurite.connection_string,
        &dir,
        &["query", name.as_str(), "--filter", "PartitionKey eq 'bulk-1'", "--select", "N", "--top", "3"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let rows: Vec<Entity> = text(&out.stdout)
        .lines()
        .map(|l| table_model_transfer::format::jsonl::read_entity(l.as_bytes()).unwrap())
        .collect();
    assert_eq!(rows.len(), 3);
    assert!(rows.iter().all(|e| e.partition_key().as_str() == "bulk-1" && e.len() == 1 && e.value("N").is_some()));
    assert_eq!(text(&out.stderr), "");

    // `count` and `tables` with --json.
    let out = tablectl(&azurite.connection_string, &dir, &["count", name.as_str(), "--json"]);
    assert_eq!(text(&out.stdout), format!("{{\"count\":12,\"table\":\"{name}\"}}\n"));
    let out = tablectl(&azurite.connection_string, &dir, &["--json", "tables"]);
    assert!(text(&out.stdout).lines().any(|l| l == format!("{{\"table\":\"{name}\"}}")), "{}", text(&out.stdout));
}

#[tokio::test]
async fn bad_lines_are_rejected_with_their_line_numbers_and_nothing_else_is_lost() {
    let azurite = azurite!();
    let dir = temp_dir("rejects");
    let name = unique_table("Rej");
    let input = [
        r#"{"PartitionKey":"p","RowKey":"1","N":1}"#,
        r#"{not json"#,
        r#"{"PartitionKey":"a#b","RowKey":"3"}"#,
        "",
        r#"{"PartitionKey":"p","RowKey":"5","N@odata.type":"Edm.Int64","N":"twelve"}"#,
        r#"{"PartitionKey":"p","RowKey":"6","N":6}"#,
        r#"{"PartitionKey":"q","RowKey":"7"}"#,
    ];
    std::fs::write(dir.join("in.jsonl"), input.join("\n") + "\n").unwrap();

    let out = tablectl(
        &azurite.connection_string,
        &dir,
        &["import", "in.jsonl", name.as_str(), "--reject", "bad.jsonl", "--json"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        summary,
        serde_json::json!({"table": name.as_str(), "imported": 3, "skipped": 0, "rejected": 3, "rejects": "bad.jsonl"})
    );
    assert!(text(&out.stderr).contains("3 rejected, see `bad.jsonl`"), "{}", text(&out.stderr));

    let rejects: Vec<serde_json::Value> = text(&std::fs::read(dir.join("bad.jsonl")).unwrap())
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let lines: Vec<u64> = rejects.iter().map(|r| r["line"].as_u64().unwrap()).collect();
    assert_eq!(lines, [2, 3, 5]);
    assert_eq!(rejects[0]["text"], "{not json");
    assert_eq!((&rejects[1]["partition_key"], &rejects[1]["row_key"]), (&"a#b".into(), &"3".into()));
    assert!(rejects[1]["rule"].as_str().unwrap().contains('#'), "{}", rejects[1]);
    assert_eq!(rejects[2]["property"], "N");
    assert!(rejects.iter().all(|r| r["source"] == "in.jsonl"));

    let stored = all(&azurite.service.table_client(name.clone())).await;
    let stored: Vec<String> = stored.iter().map(|e| format!("{}/{}", e.partition_key(), e.row_key())).collect();
    assert_eq!(stored, ["p/1", "p/6", "q/7"]);
}

#[tokio::test]
async fn an_existing_entity_is_rejected_alone_not_with_its_transaction() {
    let azurite = azurite!();
    let dir = temp_dir("existing");
    let name = unique_table("Dup");
    let table = azurite.service.create_table(&name, None).await.unwrap();
    let (p, r) = keys("p", "2");
    table.insert(&Entity::new(p, r).with("Old".parse().unwrap(), true).unwrap(), None).await.unwrap();
    let input: String = (1..=5).map(|i| format!("{{\"PartitionKey\":\"p\",\"RowKey\":\"{i}\"}}\n")).collect();
    std::fs::write(dir.join("in.jsonl"), input).unwrap();

    let out = tablectl(&azurite.connection_string, &dir, &["import", "in.jsonl", name.as_str()]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let rejects = text(&std::fs::read(dir.join(format!("{name}.rejects.jsonl"))).unwrap());
    let rejects: Vec<serde_json::Value> = rejects.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(rejects.len(), 1, "{rejects:?}");
    assert_eq!(rejects[0]["line"], 2);
    assert!(rejects[0]["rule"].as_str().unwrap().contains("EntityAlreadyExists"), "{}", rejects[0]);
    let stored = all(&table).await;
    assert_eq!(stored.len(), 5);
    assert!(stored[1].get::<bool>("Old").unwrap(), "the existing entity is kept");

    // --mode insert-or-skip keeps the stored entities and counts them as skipped, not rejected.
    let args = ["import", "in.jsonl", name.as_str(), "--mode", "insert-or-skip", "--reject", "skip.jsonl", "--json"];
    let out = tablectl(&azurite.connection_string, &dir, &args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((&summary["imported"], &summary["skipped"], &summary["rejected"]), (&0.into(), &5.into(), &0.into()));
    assert!(!dir.join("skip.jsonl").exists());

    // --mode merge writes over them, and a property the line lacks stays.
    let out = tablectl(&azurite.connection_string, &dir, &["import", "in.jsonl", name.as_str(), "--mode", "merge"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(all(&table).await[1].get::<bool>("Old").unwrap());
    // --mode replace drops it.
    let out = tablectl(&azurite.connection_string, &dir, &["import", "in.jsonl", name.as_str(), "--mode", "replace"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(all(&table).await[1].value("Old").is_none());
}

#[tokio::test]
async fn a_changed_export_is_refused_before_anything_is_sent() {
    let azurite = azurite!();
    let dir = temp_dir("tampered");
    let (source, target) = (unique_table("Tam"), unique_table("Tgt"));
    let table = azurite.service.create_table(&source, None).await.unwrap();
    let (p, r) = keys("p", "1");
    table.insert(&Entity::new(p, r).with("N".parse().unwrap(), 1).unwrap(), None).await.unwrap();
    let out = tablectl(&azurite.connection_string, &dir, &["export", source.as_str(), "-o", "backup/"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));

    let data = dir.join("backup").join(format!("{source}.jsonl"));
    let changed = text(&std::fs::read(&data).unwrap()).replace("\"N\":1", "\"N\":2");
    std::fs::write(&data, changed).unwrap();
    for input in ["backup", &format!("backup/{source}.jsonl")] {
        let out = tablectl(&azurite.connection_string, &dir, &["import", input, target.as_str()]);
        assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
        assert!(text(&out.stderr).contains("does not match the manifest: SHA-256"), "{}", text(&out.stderr));
    }
    let exists =
        azurite.service.table_client(target.clone()).query::<Entity>(&Query::new(), None).unwrap().try_next().await;
    assert!(exists.unwrap_err().is_not_found(), "the target table was never created");

    // Exporting again into the same directory is refused without --force.
    let out = tablectl(&azurite.connection_string, &dir, &["export", source.as_str(), "-o", "backup"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("already holds an export; give --force"), "{}", text(&out.stderr));
    // With --force it is replaced, and the new manifest matches the new file.
    let out = tablectl(&azurite.connection_string, &dir, &["export", source.as_str(), "-o", "backup", "--force"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let out = tablectl(&azurite.connection_string, &dir, &["import", "backup", target.as_str()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

#[tokio::test]
async fn import_reads_stdin() {
    let azurite = azurite!();
    let dir = temp_dir("stdin");
    let name = unique_table("In");
    let args = ["import", "-", name.as_str(), "--reject", "r.jsonl"];
    let mut child = spawn_piped(Some(&azurite.connection_string), &dir, &args);
    let mut stdin = child.stdin.take().unwrap();
    for i in 0..250 {
        writeln!(stdin, "{{\"PartitionKey\":\"p{}\",\"RowKey\":\"{i:03}\"}}", i % 2).unwrap();
    }
    writeln!(stdin, "[1]").unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert_eq!(all(&azurite.service.table_client(name)).await.len(), 250);
    let reject: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("r.jsonl")).unwrap()).unwrap();
    assert_eq!((&reject["source"], &reject["line"], &reject["text"]), (&"-".into(), &251.into(), &"[1]".into()));
}

/// A producer that writes a few lines and keeps its pipe open: what it wrote is imported without waiting for
/// more (a file's records go to the writer in batches, stdin's one by one).
#[tokio::test]
async fn import_from_a_slow_stdin_writes_what_came_without_waiting_for_more() {
    let azurite = azurite!();
    let dir = temp_dir("slow-stdin");
    let name = unique_table("Slow");
    let mut child = spawn_piped(Some(&azurite.connection_string), &dir, &["import", "-", name.as_str()]);
    let mut stdin = child.stdin.take().unwrap();
    for i in 0..5 {
        writeln!(stdin, "{{\"PartitionKey\":\"p\",\"RowKey\":\"{i}\"}}").unwrap();
    }
    stdin.flush().unwrap();
    // The pipe stays open: the five entities must arrive all the same (a bound of a minute, not a timing).
    let table = azurite.service.table_client(name);
    let mut written = 0;
    for _ in 0..600 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        written = match table.query::<Entity>(&Query::new(), None) {
            Ok(query) => query.try_collect::<Vec<_>>().await.map_or(0, |entities| entities.len()),
            Err(_) => 0, // not created yet
        };
        if written == 5 {
            break;
        }
    }
    assert_eq!(written, 5, "the records written to an open stdin were held back");
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

#[test]
fn a_bad_filter_exits_2_with_its_position_before_any_request() {
    let dir = temp_dir("filter");
    // Nothing listens at the development endpoint's port in the test; no request is made anyway.
    let out = tablectl("UseDevelopmentStorage=true", &dir, &["count", "People", "--filter", "Age gt"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(text(&out.stdout), "");
    let stderr = text(&out.stderr);
    assert!(stderr.starts_with("tablectl: invalid --filter `Age gt`: invalid filter at position 6: "), "{stderr}");
}

#[test]
fn usage_errors_exit_2() {
    let dir = temp_dir("usage");
    for args in [
        &["count"][..],
        &["count", "bad#name"],
        &["frobnicate"],
        &["--connection-string", "UseDevelopmentStorage=true", "--url", "http://x/y", "tables"],
        &["import", "in.jsonl", "T1", "--mode", "upsert"],
        &["import", "in.jsonl", "Tab1", "--in-flight", "0"],
        &["copy", "Src1", "Dst1", "--in-flight", "many"],
        &["restore", "bak", "Tab1", "--in-flight", "1.5"],
        &["delete", "Tab1", "--all", "--yes", "--in-flight", "0"],
    ] {
        let out = tablectl("UseDevelopmentStorage=true", &dir, args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out.stderr));
        assert_eq!(text(&out.stdout), "", "{args:?}");
        if args.contains(&"--in-flight") {
            assert!(
                text(&out.stderr).contains("invalid value") && text(&out.stderr).contains("--in-flight <N>"),
                "{}",
                text(&out.stderr)
            );
        }
    }
    let out = Command::new(env!("CARGO_BIN_EXE_tablectl"))
        .arg("tables")
        .env_remove("AZURE_STORAGE_CONNECTION_STRING")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).starts_with("tablectl: no endpoint: "), "{}", text(&out.stderr));
}

#[test]
fn completions_need_no_endpoint() {
    let out = Command::new(env!("CARGO_BIN_EXE_tablectl"))
        .args(["completions", "bash"])
        .env_remove("AZURE_STORAGE_CONNECTION_STRING")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("insert-or-skip"), "the modes complete too");
}

#[test]
fn nothing_listening_exits_3_fast() {
    let dir = temp_dir("unreachable");
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let connection_string = format!(
        "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey={DEVELOPMENT_ACCOUNT_KEY};\
         TableEndpoint=http://127.0.0.1:{port}/devstoreaccount1;"
    );
    let start = Instant::now();
    let out = tablectl(&connection_string, &dir, &["tables"]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    assert!(start.elapsed() < Duration::from_secs(20), "took {:?}", start.elapsed());
    assert!(text(&out.stderr).starts_with("tablectl: "), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "");
}

#[tokio::test]
async fn an_output_file_name_tells_the_format_and_compression() {
    let azurite = azurite!();
    let dir = temp_dir("named-format");
    let source = unique_table("Named");
    let table = azurite.service.create_table(&source, None).await.unwrap();
    let written = table.bulk_write(BulkOperation::Insert, boundary_entities(), None).await;
    assert!(written.is_complete(), "{:?}", written.failures);
    let original = all(&table).await;
    for (name, magic) in
        [("t.parquet", &b"PAR1"[..]), ("t.csv.gz", &[0x1f, 0x8b][..]), ("t.jsonl.zst", &[0x28, 0xb5][..])]
    {
        let out = tablectl(&azurite.connection_string, &dir, &["export", source.as_str(), "-o", name]);
        assert_eq!(out.status.code(), Some(0), "{name}: {}", text(&out.stderr));
        let data = std::fs::read(dir.join(name)).unwrap();
        assert!(data.starts_with(magic), "{name} starts with {:?}", &data[..4]);
        let target = unique_table("NamedT");
        let out = tablectl(&azurite.connection_string, &dir, &["import", name, target.as_str()]);
        assert_eq!(out.status.code(), Some(0), "{name}: {}", text(&out.stderr));
        let target = azurite.service.table_client(target);
        assert_same(&original, &all(&target).await);
        target.delete_table(None).await.unwrap();
    }
    table.delete_table(None).await.unwrap();
}

/// What an operator met: `export -o out --format csv` then `import out T` read every line as JSON and rejected
/// it. The format is told by the content now (csv, gzip-compressed csv, Parquet), and content of no format is
/// refused before any request.
#[tokio::test]
async fn import_tells_the_format_of_a_file_by_its_content_or_refuses_it() {
    let azurite = azurite!();
    let dir = temp_dir("sniff");
    let source = unique_table("Sniff");
    let table = azurite.service.create_table(&source, None).await.unwrap();
    let written = table.bulk_write(BulkOperation::Insert, boundary_entities(), None).await;
    assert!(written.is_complete(), "{:?}", written.failures);
    let original = all(&table).await;
    for (name, format) in [
        ("as-csv", &["--format", "csv"][..]),
        ("as-csv-gz", &["--format", "csv", "--compress", "gzip"]),
        ("as-parquet", &["--format", "parquet"]),
    ] {
        let mut args = vec!["export", source.as_str(), "-o", name];
        args.extend_from_slice(format);
        let out = tablectl(&azurite.connection_string, &dir, &args);
        assert_eq!(out.status.code(), Some(0), "{name}: {}", text(&out.stderr));
        let target = unique_table("Told");
        let out = tablectl(&azurite.connection_string, &dir, &["import", name, target.as_str()]);
        assert_eq!(out.status.code(), Some(0), "{name}: {}", text(&out.stderr));
        assert!(text(&out.stderr).contains(&format!("imported {} entities", original.len())), "{}", text(&out.stderr));
        let imported = all(&azurite.service.table_client(target)).await;
        assert_eq!(imported.len(), original.len(), "{name}");
    }
    std::fs::write(dir.join("notes"), "hello, world\nthis is not a table\n").unwrap();
    let target = unique_table("Never");
    let out = tablectl(&azurite.connection_string, &dir, &["import", "notes", target.as_str()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).starts_with("tablectl: cannot tell the format of `notes`: "), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("give --format"), "{}", text(&out.stderr));
    let exists =
        azurite.service.table_client(target).try_get::<Entity>(&keys("p", "r").0, &keys("p", "r").1, None).await;
    assert!(exists.is_err_and(|e| e.is_not_found()), "nothing was sent: the table was not even created");
    // Lines that are all unreadable are invalid input, not a partial import.
    std::fs::write(
        dir.join("bad.jsonl"),
        "{\"PartitionKey\":\"a/b\",\"RowKey\":\"1\"}\n{\"PartitionKey\":\"a/b\",\"RowKey\":\"2\"}\n",
    )
    .unwrap();
    let out = tablectl(&azurite.connection_string, &dir, &["import", "bad.jsonl", unique_table("Bad").as_str()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("no record of the input could be read as an entity (2 rejected"),
        "{}",
        text(&out.stderr)
    );
}

/// A typo in the table name (a 404) left an empty file, or a directory whose checkpoint named the wrong table, and
/// the corrected command was refused. A command that fails before it wrote any entity leaves nothing.
#[tokio::test]
async fn a_failed_export_leaves_nothing_that_blocks_the_corrected_command() {
    let azurite = azurite!();
    let dir = temp_dir("typo");
    let name = unique_table("Typo");
    let table = azurite.service.create_table(&name, None).await.unwrap();
    table.bulk_write(BulkOperation::Insert, boundary_entities(), None).await.into_result().unwrap();
    let typo = unique_table("Nope");
    for target in ["t.jsonl", "t.parquet", "backup/"] {
        let out = tablectl(&azurite.connection_string, &dir, &["export", typo.as_str(), "-o", target]);
        assert_eq!(out.status.code(), Some(4), "{}", text(&out.stderr));
        let left: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert!(left.is_empty(), "{target}: {left:?}");
        let out = tablectl(&azurite.connection_string, &dir, &["export", name.as_str(), "-o", target]);
        assert_eq!(out.status.code(), Some(0), "{target}: {}", text(&out.stderr));
        let written = dir.join(target);
        if written.is_dir() {
            std::fs::remove_dir_all(written).unwrap();
        } else {
            std::fs::remove_file(written).unwrap();
        }
    }
}

/// `n=$(tablectl count T)` gets the number: JSON only with `--json`, as ripgrep does.
#[tokio::test]
async fn count_prints_the_number_alone_unless_json_is_asked() {
    let azurite = azurite!();
    let dir = temp_dir("count-plain");
    let name = unique_table("Count");
    let table = azurite.service.create_table(&name, None).await.unwrap();
    table.bulk_write(BulkOperation::Insert, boundary_entities(), None).await.into_result().unwrap();
    let out = tablectl(&azurite.connection_string, &dir, &["count", name.as_str()]);
    assert_eq!((out.status.code(), text(&out.stdout)), (Some(0), "252\n".to_owned()), "{}", text(&out.stderr));
}

/// An endpoint that takes the connection and never answers: each try that times out is said on stderr, even
/// when stderr is not a terminal, so a log shows why the run waits (no emulator needed).
#[test]
fn a_try_without_an_answer_is_said_on_stderr() {
    use std::io::BufRead as _;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    // Accepts and holds every connection, answering nothing.
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            held.push(stream);
        }
    });
    let connection_string = format!(
        "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey={DEVELOPMENT_ACCOUNT_KEY};\
         TableEndpoint=http://127.0.0.1:{port}/devstoreaccount1"
    );
    let mut child = Command::new(env!("CARGO_BIN_EXE_tablectl"))
        .args(["count", "Silent", "--try-timeout", "1"])
        .env("AZURE_STORAGE_CONNECTION_STRING", connection_string)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let (lines, got) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in stderr.lines().map_while(Result::ok) {
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    let line = got.recv_timeout(Duration::from_secs(60)).expect("a notice within the first tries");
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        line.starts_with("tablectl: Storage.Tables.TableClient.query: try 1 (GET) got no answer after 1."),
        "{line}"
    );
    assert!(line.ends_with("another follows unless the retries are spent"), "{line}");
}
