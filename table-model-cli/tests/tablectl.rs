//! `tablectl` end to end, as a user runs it: the built binary, its exit status, stdout and stderr, against
//! Azurite (`scripts/azurite.sh run cargo test -p table-model-cli`). Without `TABLE_MODEL_AZURITE_ENDPOINT`
//! the Azurite tests are skipped with a notice, unless `CI` is set, where they fail; the tests that need no
//! service always run.

use futures::TryStreamExt as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};
use table_model::client::{BulkOperation, TableClient, TableServiceClient};
use table_model::{
    AccountKey, DateTime, EdmBinary, Entity, PartitionKey, Query, RowKey, TableName, DEVELOPMENT_ACCOUNT_KEY,
};

const ENDPOINT_VAR: &str = "TABLE_MODEL_AZURITE_ENDPOINT";

/// The Azurite of `TABLE_MODEL_AZURITE_ENDPOINT`: its connection string and a client.
struct Azurite {
    connection_string: String,
    service: TableServiceClient,
}

fn azurite() -> Option<Azurite> {
    let Ok(url) = std::env::var(ENDPOINT_VAR) else {
        if std::env::var_os("CI").is_some() {
            panic!("{ENDPOINT_VAR} is not set but CI is: start Azurite with `scripts/azurite.sh start`");
        }
        static NOTICE: std::sync::Once = std::sync::Once::new();
        NOTICE.call_once(|| {
            let _ = writeln!(
                std::io::stderr(),
                "note: the tablectl Azurite tests are skipped: {ENDPOINT_VAR} is not set; \
                 run them with `scripts/azurite.sh run cargo test -p table-model-cli`"
            );
        });
        return None;
    };
    let connection_string = format!(
        "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey={DEVELOPMENT_ACCOUNT_KEY};\
         TableEndpoint={url};"
    );
    let service = TableServiceClient::new(&url, AccountKey::development(), None).expect("the Azurite endpoint");
    Some(Azurite { connection_string, service })
}

macro_rules! azurite {
    () => {
        match azurite() {
            Some(a) => a,
            None => return,
        }
    };
}

/// A table name no other test (or run) uses.
fn unique_table(tag: &str) -> TableName {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    TableName::new(format!("Ctl{tag}{}x{n}", std::process::id())).unwrap()
}

/// An empty directory of the test's own.
fn temp_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tablectl-test-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The binary with the connection string in its environment, in `dir`, stdin closed.
fn tablectl(connection_string: &str, dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tablectl"))
        .args(args)
        .env("AZURE_STORAGE_CONNECTION_STRING", connection_string)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .expect("tablectl runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).unwrap()
}

fn keys(p: &str, r: &str) -> (PartitionKey, RowKey) {
    (PartitionKey::new(p).unwrap(), RowKey::new(r).unwrap())
}

/// Every entity of a table, in key order.
async fn all(table: &TableClient) -> Vec<Entity> {
    table.query::<Entity>(&Query::new(), None).unwrap().try_collect().await.unwrap()
}

/// Entities with every EDM type at its boundaries, and enough of them for several transactions.
fn boundary_entities() -> Vec<Entity> {
    let (p, r) = keys("edge", "values");
    let edge = Entity::new(p, r)
        .with("NaN".parse().unwrap(), f64::NAN)
        .unwrap()
        .with("NegZero".parse().unwrap(), -0.0_f64)
        .unwrap()
        .with("Inf".parse().unwrap(), f64::INFINITY)
        .unwrap()
        .with("NegInf".parse().unwrap(), f64::NEG_INFINITY)
        .unwrap()
        .with("Subnormal".parse().unwrap(), f64::from_bits(1))
        .unwrap()
        .with("Tenth".parse().unwrap(), 0.1_f64)
        .unwrap()
        .with("Int64Min".parse().unwrap(), i64::MIN)
        .unwrap()
        .with("Int64Max".parse().unwrap(), i64::MAX)
        .unwrap()
        .with("Int32Min".parse().unwrap(), i32::MIN)
        .unwrap()
        .with("Int32Max".parse().unwrap(), i32::MAX)
        .unwrap()
        .with("First".parse().unwrap(), "1601-01-01T00:00:00.0000000Z".parse::<DateTime>().unwrap())
        .unwrap()
        .with("Last".parse().unwrap(), "9999-12-31T23:59:59.9999999Z".parse::<DateTime>().unwrap())
        .unwrap()
        .with(
            "Binary".parse().unwrap(),
            EdmBinary::new((0..65_536).map(|i| (i % 251) as u8).collect::<Vec<_>>()).unwrap(),
        )
        .unwrap()
        .with("EmptyBinary".parse().unwrap(), EdmBinary::new(Vec::new()).unwrap())
        .unwrap()
        .with("Guid".parse().unwrap(), uuid_value())
        .unwrap()
        .with("Yes".parse().unwrap(), true)
        .unwrap()
        .with("Text".parse().unwrap(), "héllo 世界 🎉 \"quoted\"\n\ttab")
        .unwrap()
        .with("Empty".parse().unwrap(), "")
        .unwrap();
    let (p, r) = keys("ünïcode 日本", "ключ 🎉");
    let unicode = Entity::new(p, r).with("Only".parse().unwrap(), "").unwrap();
    let mut entities = vec![edge, unicode];
    for i in 0..250 {
        let (p, r) = keys(&format!("bulk-{}", i % 3), &format!("{i:04}"));
        entities.push(Entity::new(p, r).with("N".parse().unwrap(), i64::from(i)).unwrap());
    }
    entities
}

fn uuid_value() -> table_model::EdmValue {
    table_model::EdmValue::Guid("5b5e3a84-3c4c-4f6e-9b8a-0c1d2e3f4a5b".parse().unwrap())
}

/// Two tables hold the same entities, property by property (Doubles compared by their bits).
fn assert_same(expected: &[Entity], got: &[Entity]) {
    assert_eq!(expected.len(), got.len(), "entity count");
    for (e, g) in expected.iter().zip(got) {
        assert_eq!((e.partition_key(), e.row_key()), (g.partition_key(), g.row_key()));
        let e_props: Vec<_> = e.iter().collect();
        let mut g_props: Vec<_> = g.iter().collect();
        assert_eq!(e_props.len(), g_props.len(), "properties of {}/{}", e.partition_key(), e.row_key());
        for (name, value) in e_props {
            let i = g_props.iter().position(|(n, _)| *n == name).unwrap_or_else(|| panic!("{name} lost"));
            let (_, got) = g_props.remove(i);
            assert_eq!(value, got, "{name} of {}/{}", e.partition_key(), e.row_key());
        }
    }
}

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

    let out = tablectl(&azurite.connection_string, &dir, &["import", "backup", target.as_str()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("imported 252 entities"), "{}", text(&out.stderr));
    assert!(!dir.join(format!("{target}.rejects.jsonl")).exists(), "no reject file without rejects");

    // The file holds what the service gave, bit for bit, and the copy what the file holds.
    let exported: Vec<Entity> =
        data.split_inclusive(|&b| b == b'\n').map(|line| table_model_cli::jsonl::read_entity(line).unwrap()).collect();
    assert_same(&original, &exported);
    let copied = all(&azurite.service.table_client(target.clone())).await;
    assert_same(&exported, &copied);
    assert!(copied[0].timestamp() != original[0].timestamp() || copied[0].etag() != original[0].etag());
    let _ = std::fs::remove_dir_all(&dir);
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
    let read: Vec<Entity> = lines.iter().map(|l| table_model_cli::jsonl::read_entity(l).unwrap()).collect();
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
    let rows: Vec<Entity> =
        text(&out.stdout).lines().map(|l| table_model_cli::jsonl::read_entity(l.as_bytes()).unwrap()).collect();
    assert_eq!(rows.len(), 3);
    assert!(rows.iter().all(|e| e.partition_key().as_str() == "bulk-1" && e.len() == 1 && e.value("N").is_some()));
    assert_eq!(text(&out.stderr), "");

    // `count` and `tables` with --json.
    let out = tablectl(&azurite.connection_string, &dir, &["count", name.as_str(), "--json"]);
    assert_eq!(text(&out.stdout), format!("{{\"count\":12,\"table\":\"{name}\"}}\n"));
    let out = tablectl(&azurite.connection_string, &dir, &["--json", "tables"]);
    assert!(text(&out.stdout).lines().any(|l| l == format!("{{\"table\":\"{name}\"}}")), "{}", text(&out.stdout));
    let _ = std::fs::remove_dir_all(&dir);
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
    let _ = std::fs::remove_dir_all(&dir);
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
    let _ = std::fs::remove_dir_all(&dir);
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
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn import_reads_stdin() {
    let azurite = azurite!();
    let dir = temp_dir("stdin");
    let name = unique_table("In");
    let mut child = Command::new(env!("CARGO_BIN_EXE_tablectl"))
        .args(["import", "-", name.as_str(), "--reject", "r.jsonl"])
        .env("AZURE_STORAGE_CONNECTION_STRING", &azurite.connection_string)
        .current_dir(&dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
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
    let _ = std::fs::remove_dir_all(&dir);
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
    let _ = std::fs::remove_dir_all(&dir);
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
    ] {
        let out = tablectl("UseDevelopmentStorage=true", &dir, args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out.stderr));
        assert_eq!(text(&out.stdout), "", "{args:?}");
    }
    let out = Command::new(env!("CARGO_BIN_EXE_tablectl"))
        .arg("tables")
        .env_remove("AZURE_STORAGE_CONNECTION_STRING")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).starts_with("tablectl: no endpoint: "), "{}", text(&out.stderr));
    let _ = std::fs::remove_dir_all(&dir);
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
    let _ = std::fs::remove_dir_all(&dir);
}

// ------------------------------------------------------------------------------------------------------------
// validate, and import to a Cosmos-kind target: a file with errors planted at known lines

/// What one planted line is expected to produce: its line, keys, property, a piece of its rule, and whether
/// Storage refuses it too (else Cosmos DB alone does).
struct Planted {
    line: u64,
    partition_key: Option<&'static str>,
    row_key: Option<String>,
    property: Option<&'static str>,
    rule: &'static str,
    storage: bool,
}

/// A JSON lines file with an error planted at known lines, valid lines between them (lines 1, 3 and 13) and a
/// blank line (7), and what `validate` must report for each planted line.
fn planted_file() -> (Vec<u8>, Vec<Planted>) {
    let big: Vec<String> = (0..17).map(|i| format!("\"S{i:02}\":\"{}\"", "x".repeat(32_768))).collect();
    let many: Vec<String> = (0..253).map(|i| format!("\"P{i}\":{i}")).collect();
    let long_row_key = "k".repeat(256);
    let lines: Vec<Vec<u8>> = vec![
        br#"{"PartitionKey":"p","RowKey":"r01","N":1}"#.to_vec(),
        br#"{"PartitionKey":"p","RowKey":"r02",}"#.to_vec(),
        r#"{"PartitionKey":"p","RowKey":"r03","Text":"héllo 世界"}"#.as_bytes().to_vec(),
        br#"{"PartitionKey":"p","RowKey":"r04","N":1"#.to_vec(),
        b"{\"PartitionKey\":\"p\",\"RowKey\":\"r05\",\"S\":\"\xff\"}".to_vec(),
        br#"{"PartitionKey":"p","RowKey":"a/b"}"#.to_vec(),
        Vec::new(),
        format!(r#"{{"PartitionKey":"p","RowKey":"{long_row_key}"}}"#).into_bytes(),
        br#"{"PartitionKey":"p","RowKey":"r09","ResourceId":1}"#.to_vec(),
        br#"{"PartitionKey":"p","RowKey":"r10","N":2147483648}"#.to_vec(),
        format!(r#"{{"PartitionKey":"p","RowKey":"r11",{}}}"#, big.join(",")).into_bytes(),
        format!(r#"{{"PartitionKey":"p","RowKey":"r12",{}}}"#, many.join(",")).into_bytes(),
        br#"{"PartitionKey":"p","RowKey":"r13","D@odata.type":"Edm.DateTime","D":"2024-01-01T00:00:00.0000000Z"}"#
            .to_vec(),
    ];
    let file = lines.join(&b'\n').into_iter().chain([b'\n']).collect();
    let p = Some("p");
    let planted = |line, partition_key, row_key: Option<&str>, property, rule, storage| Planted {
        line,
        partition_key,
        row_key: row_key.map(str::to_owned),
        property,
        rule,
        storage,
    };
    let expected = vec![
        planted(2, None, None, None, "invalid JSON at line 1 column 36: trailing comma", true),
        planted(4, None, None, None, "invalid JSON at line 1 column 40: EOF while parsing an object", true),
        planted(5, p, Some("r05"), None, "invalid JSON at line 1 column 41: invalid unicode code point", true),
        planted(6, p, Some("a/b"), Some("RowKey"), "character `/` at index 1 is not allowed", true),
        planted(8, p, Some(&long_row_key), Some("RowKey"), "256 bytes of UTF-8, at most 255 allowed", false),
        planted(9, p, Some("r09"), Some("ResourceId"), "matches the reserved name `ResourceId`", false),
        planted(10, p, Some("r10"), Some("N"), "`2147483648` without a type annotation must fit Edm.Int32", true),
        planted(11, p, Some("r11"), Some("S15"), "must be at most 1048576 bytes, found 1048876", true),
        planted(12, p, Some("r12"), None, "at most 252 custom properties are allowed, found 253", true),
    ];
    (file, expected)
}

/// Checks JSON reports (validate's findings, import's rejects) against the planted lines, in order.
fn assert_planted(reports: &[serde_json::Value], expected: &[&Planted], source: &str) {
    let lines: Vec<_> = reports.iter().map(|r| r["line"].as_u64().unwrap()).collect();
    assert_eq!(lines, expected.iter().map(|p| p.line).collect::<Vec<_>>());
    for (report, planted) in reports.iter().zip(expected) {
        let line = planted.line;
        assert_eq!(report["source"], source, "line {line}");
        assert_eq!(report["partition_key"].as_str(), planted.partition_key, "line {line}");
        assert_eq!(report["row_key"].as_str(), planted.row_key.as_deref(), "line {line}");
        assert_eq!(report["property"].as_str(), planted.property, "line {line}");
        let rule = report["rule"].as_str().unwrap();
        assert!(rule.contains(planted.rule), "line {line}: {rule}");
    }
}

fn json_lines(bytes: &[u8]) -> Vec<serde_json::Value> {
    text(bytes).lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[test]
fn validate_reports_each_planted_error_with_its_line_key_property_and_rule() {
    let dir = temp_dir("validate-planted");
    let (file, expected) = planted_file();
    std::fs::write(dir.join("planted.jsonl"), file).unwrap();
    for (service, storage_only) in [("storage", true), ("cosmos", false), ("portable", false)] {
        // No endpoint: a file is checked without one, and nothing is sent.
        let out = Command::new(env!("CARGO_BIN_EXE_tablectl"))
            .args(["validate", "planted.jsonl", "--service", service, "--json"])
            .env_remove("AZURE_STORAGE_CONNECTION_STRING")
            .current_dir(&dir)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{service}: {}", text(&out.stderr));
        let mut reports = json_lines(&out.stdout);
        let summary = reports.pop().unwrap();
        let expected: Vec<&Planted> = expected.iter().filter(|p| p.storage || !storage_only).collect();
        assert_planted(&reports, &expected, "planted.jsonl");
        let n = expected.len();
        assert_eq!(
            summary,
            serde_json::json!({"service": service, "entities": 12, "valid": 12 - n, "invalid": n, "findings": n})
        );
        let stderr = text(&out.stderr);
        assert!(stderr.contains("12 entities of `planted.jsonl` checked for "), "{stderr}");
        assert!(stderr.contains(&format!("{} valid, {n} invalid ({n} findings)", 12 - n)), "{stderr}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn validate_exits_0_when_all_is_valid_and_2_for_bad_input() {
    let dir = temp_dir("validate-status");
    std::fs::write(dir.join("good.jsonl"), "{\"PartitionKey\":\"p\",\"RowKey\":\"1\",\"Id\":1}\n\n").unwrap();
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_tablectl"))
            .args(args)
            .env_remove("AZURE_STORAGE_CONNECTION_STRING")
            .current_dir(&dir)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let out = run(&["validate", "good.jsonl", "--service", "storage"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "", "no finding, and no summary on stdout without --json");
    let out = run(&["validate", "good.jsonl", "--service", "cosmos"]);
    assert_eq!(out.status.code(), Some(1), "`Id` is reserved on Cosmos DB");
    let out = run(&["validate", "missing.jsonl", "--service", "storage"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(text(&out.stderr), "tablectl: no file or directory `missing.jsonl` (a table is read as `table:NAME`)\n");
    let out = run(&["validate", "good.jsonl", "--service", "mongo"]);
    assert_eq!(out.status.code(), Some(2), "a usage error");
    // A table needs an endpoint; there is none here.
    let out = run(&["validate", "table:People", "--service", "storage"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).starts_with("tablectl: no endpoint"), "{}", text(&out.stderr));
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn import_writes_nothing_for_a_planted_error_and_everything_else() {
    let azurite = azurite!();
    let dir = temp_dir("import-planted");
    let (file, expected) = planted_file();
    std::fs::write(dir.join("planted.jsonl"), file).unwrap();
    // As Cosmos DB, Azurite gets neither the 256-byte RowKey nor `ResourceId`: the client refuses them before
    // sending. As itself, it takes both (Storage's rules).
    for (kind, cosmos) in [("cosmos", true), ("azurite", false)] {
        let name = unique_table("Plant");
        let args = ["--service-kind", kind, "import", "planted.jsonl", name.as_str(), "--reject", "rejects.jsonl"];
        let out = tablectl(&azurite.connection_string, &dir, &args);
        assert_eq!(out.status.code(), Some(1), "{kind}: {}", text(&out.stderr));
        let mut rejects = json_lines(&std::fs::read(dir.join("rejects.jsonl")).unwrap());
        // Lines that do not read are rejected as they are read, those the client refuses after.
        rejects.sort_by_key(|r| r["line"].as_u64());
        let expected: Vec<&Planted> = expected.iter().filter(|p| p.storage || cosmos).collect();
        assert_planted(&rejects, &expected, "planted.jsonl");

        let stored = all(&azurite.service.table_client(name.clone())).await;
        let mut stored: Vec<String> = stored.iter().map(|e| e.row_key().to_string()).collect();
        let mut written: Vec<String> = ["r01", "r03", "r13"].map(String::from).to_vec();
        if !cosmos {
            written.extend(["r09".to_owned(), "k".repeat(256)]);
        }
        stored.sort();
        written.sort();
        assert_eq!(stored, written, "{kind}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn validate_reads_a_table_and_tells_whether_it_can_move_to_cosmos() {
    let azurite = azurite!();
    let dir = temp_dir("validate-table");
    let name = unique_table("Val");
    let table = azurite.service.create_table(&name, None).await.unwrap();
    let long = "é".repeat(128);
    let entities = vec![
        Entity::new(PartitionKey::new("a").unwrap(), RowKey::new("1").unwrap()),
        Entity::new(PartitionKey::new("a").unwrap(), RowKey::new(long.clone()).unwrap()),
        Entity::new(PartitionKey::new("b").unwrap(), RowKey::new("3").unwrap())
            .with("rid".parse().unwrap(), 1)
            .unwrap(),
    ];
    assert!(table.bulk_write(BulkOperation::Insert, entities, None).await.is_complete());

    let out = tablectl(&azurite.connection_string, &dir, &["validate", name.as_str(), "--service", "storage"]);
    assert_eq!(out.status.code(), Some(0), "a bare table name: {}", text(&out.stderr));
    let arg = format!("table:{name}");
    let out = tablectl(&azurite.connection_string, &dir, &["--json", "validate", &arg, "--service", "cosmos"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let reports = json_lines(&out.stdout);
    let source = format!("table:{name}");
    assert_eq!(
        reports[..2],
        [
            serde_json::json!({"source": source, "entity": 2, "partition_key": "a", "row_key": long, "property": "RowKey",
                "rule": "invalid row key for Cosmos DB for Table: 256 bytes of UTF-8, at most 255 allowed"}),
            serde_json::json!({"source": source, "entity": 3, "partition_key": "b", "row_key": "3", "property": "rid",
                "rule": "invalid property name for Cosmos DB for Table: matches the reserved name `rid` (Cosmos DB for \
                         Table reserves ID, rid, etag and ResourceId, in any case)"}),
        ]
    );
    assert_eq!(
        reports[2],
        serde_json::json!({"service": "cosmos", "entities": 3, "valid": 1, "invalid": 2, "findings": 2})
    );
    let _ = std::fs::remove_dir_all(&dir);
}
