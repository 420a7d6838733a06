//! `tablectl validate`, and `import` into a Cosmos-kind target, end to end: the built binary on a file with an
//! error planted at known lines, and on a table in Azurite (`scripts/azurite.sh run cargo test -p
//! table-model-cli`; the Azurite tests are skipped without `TABLE_MODEL_AZURITE_ENDPOINT`, as in `tablectl.rs`).

use crate::support::*;
use std::process::{Command, Stdio};
use table_model::client::BulkOperation;
use table_model::{Entity, PartitionKey, RowKey};

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
    // Key ranges side by side are a table's; a file is read by every core already.
    let out = run(&["validate", "good.jsonl", "--service", "storage", "--parallel", "4"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        "tablectl: --parallel is for a table: a file is checked by as many threads as there are cores\n"
    );
    // A table needs an endpoint; there is none here.
    let out = run(&["validate", "table:People", "--service", "storage"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).starts_with("tablectl: no endpoint"), "{}", text(&out.stderr));
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

    // Read in key ranges side by side (three partitions' worth of cuts): the same findings, in the order read.
    let out = tablectl(
        &azurite.connection_string,
        &dir,
        &["--json", "validate", &arg, "--service", "cosmos", "--parallel", "3"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let mut parallel: Vec<serde_json::Value> = json_lines(&out.stdout);
    let summary = parallel.pop().unwrap();
    assert_eq!(summary, reports[2]);
    let without_place = |r: &serde_json::Value| {
        let mut r = r.clone();
        r.as_object_mut().unwrap().remove("entity");
        r.to_string()
    };
    let mut got: Vec<String> = parallel.iter().map(without_place).collect();
    let mut expected: Vec<String> = reports[..2].iter().map(without_place).collect();
    got.sort();
    expected.sort();
    assert_eq!(got, expected);

    // The same entities exported as Parquet and JSON lines: each file read through its format's reader, the
    // same findings at the same rows (the export is in key order, as the table was read).
    for (file, format) in [("people.parquet", "parquet"), ("people.jsonl", "jsonl")] {
        let out =
            tablectl(&azurite.connection_string, &dir, &["export", name.as_str(), "-o", file, "--format", format]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let out = tablectl(&azurite.connection_string, &dir, &["--json", "validate", file, "--service", "cosmos"]);
        assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
        let from_file = json_lines(&out.stdout);
        assert_eq!(from_file.len(), 3, "{from_file:?}");
        for (from_file, from_table) in from_file.iter().zip(&reports).take(2) {
            let mut expected = from_table.clone();
            let position = expected.as_object_mut().unwrap().remove("entity").unwrap();
            expected["source"] = file.into();
            expected["line"] = position;
            assert_eq!(*from_file, expected);
        }
        assert_eq!(from_file[2], reports[2]);
    }
}

#[test]
fn validate_reads_stdin() {
    let dir = temp_dir("validate-stdin");
    let mut child = spawn_piped(None, &dir, &["validate", "-", "--service", "portable", "--json"]);
    let input = "{\"PartitionKey\":\"p\",\"RowKey\":\"1\"}\n\n{\"PartitionKey\":\"p\",\"RowKey\":\"2\",\"ETag\":1}";
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), input.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let reports = json_lines(&out.stdout);
    assert_eq!(
        (&reports[0]["source"], &reports[0]["line"], &reports[0]["property"]),
        (&"-".into(), &3.into(), &"ETag".into())
    );
    assert_eq!(reports[1]["entities"], 2);
}

/// `tablectl validate big.jsonl | head`: the reader and the checking threads stop when stdout closes.
#[test]
fn a_closed_stdout_ends_the_run() {
    let dir = temp_dir("validate-pipe");
    let lines: String =
        (0..200_000).map(|i| format!("{{\"PartitionKey\":\"p\",\"RowKey\":\"{i}\",\"Id\":{i}}}\n")).collect();
    std::fs::write(dir.join("ids.jsonl"), lines).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_tablectl"))
        .args(["validate", "ids.jsonl", "--service", "cosmos"])
        .current_dir(&dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    std::io::BufRead::read_line(&mut stdout, &mut first).unwrap();
    assert!(first.contains("\"line\":1,"), "{first}");
    drop(stdout);
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > std::time::Duration::from_secs(20) {
            let _ = child.kill();
            panic!("validate did not end after its stdout closed");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(0), "a closed stdout ends the run quietly, as for query");
}
