//! `tablectl backup`, `restore`, `backup verify` and `backup prune` as a user runs them, against Azurite: three
//! generations of a table of every EDM type (the second killed twice midway and run again, the third stopped by
//! transport faults and run again), each restored into a new table equal to the table as captured then; a
//! restore killed midway and run again (and, in a table of fewer partitions, one stopped by transport faults);
//! `--exact` into the live table; a spoiled backup refused (status 2)
//! before anything is written; prune keeping the newest generation; `--all` against an emulator of its own.

use crate::scale::{abort_after, filled, run, run_failing_after};
use crate::support::{all, assert_same, mixed_entities, temp_dir, text, unique_table};
use serde_json::Value;
use table_model::client::BulkOperation;
use table_model::{Entity, UpdateMode};

fn json_line(stdout: &[u8]) -> Value {
    let text = text(stdout);
    serde_json::from_str(text.lines().last().unwrap_or_default()).unwrap_or_else(|e| panic!("{e}: {text}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn generations_restore_exactly_after_kills_and_faults() {
    let azurite = azurite!();
    let cs = &azurite.connection_string;
    let dir = temp_dir("backup");
    let name = unique_table("Bak");
    let table = azurite.service.create_table(&name, None).await.unwrap();
    let source = mixed_entities(26, 3000);
    table.bulk_write(BulkOperation::Insert, &source, None).await.into_result().unwrap();
    // The load is in a second before the first watermark's.
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    let backup: Vec<&str> = vec![
        "--json",
        "backup",
        name.as_str(),
        "-o",
        "bak",
        "--parallel",
        "4",
        "--margin",
        "0",
        "--max-rate",
        "0",
        "--compress",
        "gzip",
    ];

    let first = run(cs, &dir, &backup, &[]).await;
    assert!(first.status.success(), "{}", text(&first.stderr));
    let summary = json_line(&first.stdout);
    assert_eq!((summary["generation"].as_u64(), summary["kind"].as_str()), (Some(1), Some("full")));
    assert_eq!(summary["entities"], 3000);
    let mut captures = vec![all(&table).await];

    // Changes: every 100th entity deleted, every 150th replaced by one of other properties, 40 new ones.
    let mut changed = 0;
    for (i, entity) in source.iter().enumerate() {
        if i % 100 == 0 {
            table.delete_by_keys(entity.partition_key(), entity.row_key(), None).await.unwrap();
        } else if i % 150 == 0 {
            let other = Entity::new(entity.partition_key().clone(), entity.row_key().clone())
                .with("Changed".parse().unwrap(), i as i64)
                .unwrap();
            table.upsert(&other, UpdateMode::Replace, None).await.unwrap();
            changed += 1;
        }
    }
    let added = mixed_entities(27, 40)
        .into_iter()
        .map(|e| {
            let row = format!("new-{}", e.row_key());
            let mut moved = Entity::new(e.partition_key().clone(), row.parse().unwrap());
            for (name, value) in e.iter() {
                moved.insert(name.clone(), value.clone()).unwrap();
            }
            moved
        })
        .collect::<Vec<_>>();
    table.bulk_write(BulkOperation::Insert, &added, None).await.into_result().unwrap();

    // The second generation killed after the first page of its changes, again in its scan of the keys (past
    // the 70 changes), then run again.
    for after in [1, 500] {
        let killed = run(cs, &dir, &backup, &abort_after(after)).await;
        assert!(!killed.status.success(), "{}", text(&killed.stderr));
        assert!(text(&killed.stderr).contains("aborting after"), "{}", text(&killed.stderr));
    }
    let second = run(cs, &dir, &backup, &[]).await;
    assert!(second.status.success(), "{}", text(&second.stderr));
    let summary = json_line(&second.stdout);
    assert_eq!((summary["generation"].as_u64(), summary["resumed"].as_bool()), (Some(2), Some(true)));
    assert_eq!(summary["deleted"], 30, "{summary}");
    assert_eq!(summary["entities"].as_u64(), Some(changed + 40), "only what changed: {summary}");
    captures.push(all(&table).await);

    // The third generation stopped by the transport after a few requests, then run again.
    for entity in added.iter().take(10) {
        table.delete_by_keys(entity.partition_key(), entity.row_key(), None).await.unwrap();
    }
    table.upsert(&source[1], UpdateMode::Merge, None).await.unwrap();
    let stopped = run_failing_after(&azurite, 3, &dir, &backup, None).await;
    assert!(!stopped.status.success(), "{}", text(&stopped.stderr));
    let third = run(cs, &dir, &backup, &[]).await;
    assert!(third.status.success(), "{}", text(&third.stderr));
    assert_eq!(json_line(&third.stdout)["deleted"], 10);
    captures.push(all(&table).await);

    let verified = run(cs, &dir, &["--json", "backup", "verify", "bak"], &[]).await;
    assert!(verified.status.success(), "{}", text(&verified.stderr));
    assert_eq!(json_line(&verified.stdout)["generations"], serde_json::json!([1, 2, 3]));

    for (index, expected) in captures.iter().enumerate() {
        let target = unique_table("Res");
        let generation = (index + 1).to_string();
        let args = [
            "restore",
            "bak",
            target.as_str(),
            "--from",
            name.as_str(),
            "--generation",
            &generation,
            "--max-rate",
            "0",
        ];
        let restored = run(cs, &dir, &args, &[]).await;
        assert!(restored.status.success(), "{}", text(&restored.stderr));
        assert_same(expected, &all(&azurite.service.table_client(target)).await);
    }

    // A restore killed midway goes on when run again.
    let target = unique_table("Res");
    let args = ["restore", "bak", target.as_str(), "--from", name.as_str(), "--max-rate", "0"];
    let killed = run(cs, &dir, &args, &abort_after(1000)).await;
    assert!(!killed.status.success(), "{}", text(&killed.stderr));
    let again = run(cs, &dir, &["--json", args[0], args[1], args[2], args[3], args[4], args[5], args[6]], &[]).await;
    assert!(again.status.success(), "{}", text(&again.stderr));
    assert_eq!(json_line(&again.stdout)["resumed"], true);
    assert_same(&captures[2], &all(&azurite.service.table_client(target)).await);

    // `--exact` makes the live table what it was at the first generation (two transactions in flight).
    let exact = run(
        cs,
        &dir,
        &["restore", "bak", name.as_str(), "--generation", "1", "--exact", "--max-rate", "0", "--in-flight", "2"],
        &[],
    )
    .await;
    assert!(exact.status.success(), "{}", text(&exact.stderr));
    assert_same(&captures[0], &all(&table).await);

    // Prune keeps the newest generation, which restores the same.
    let pruned = run(cs, &dir, &["backup", "prune", "bak", "--keep", "1"], &[]).await;
    assert!(pruned.status.success(), "{}", text(&pruned.stderr));
    let verified = run(cs, &dir, &["--json", "backup", "verify", "bak"], &[]).await;
    assert_eq!(json_line(&verified.stdout)["generations"], serde_json::json!([3]));
    let target = unique_table("Res");
    let restored = run(cs, &dir, &["restore", "bak", target.as_str(), "--from", name.as_str()], &[]).await;
    assert!(restored.status.success(), "{}", text(&restored.stderr));
    assert_same(&captures[2], &all(&azurite.service.table_client(target)).await);

    // A truncated file: verify and restore refuse with status 2, naming it, and nothing is written.
    let generation = dir.join("bak").join(name.as_str()).join("gen-000003");
    let manifest: Value = serde_json::from_slice(&std::fs::read(generation.join("generation.json")).unwrap()).unwrap();
    let largest = manifest["files"].as_array().unwrap().iter().max_by_key(|f| f["bytes"].as_u64()).unwrap();
    let path = largest["path"].as_str().unwrap();
    let bytes = std::fs::read(generation.join(path)).unwrap();
    std::fs::write(generation.join(path), &bytes[..bytes.len() - 1]).unwrap();
    let file_name = path.rsplit('/').next().unwrap();
    let refused = run(cs, &dir, &["backup", "verify", "bak"], &[]).await;
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused.stderr));
    assert!(text(&refused.stderr).contains(file_name), "{}", text(&refused.stderr));
    let target = unique_table("Res");
    let refused = run(cs, &dir, &["restore", "bak", target.as_str(), "--from", name.as_str()], &[]).await;
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused.stderr));
    assert!(text(&refused.stderr).contains("does not match generation 3's manifest"), "{}", text(&refused.stderr));
    let missing = azurite.service.table_client(target).query_first::<Entity>(&table_model::Query::new(), 1, None).await;
    assert!(missing.is_err_and(|e| e.is_not_found()), "the target was not created");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restore_stopped_by_the_transport_goes_on_when_run_again() {
    let azurite = azurite!();
    let cs = &azurite.connection_string;
    let dir = temp_dir("restore-faults");
    let table = filled(&azurite, "BakF", 3000).await;
    let name = table.table().clone();
    let backup = run(cs, &dir, &["backup", name.as_str(), "-o", "bak"], &[]).await;
    assert!(backup.status.success(), "{}", text(&backup.stderr));
    // The emptiness check, the table's creation and 10 transactions go through, then the transport fails.
    let target = unique_table("ResF");
    let args = ["restore", "bak", target.as_str(), "--from", name.as_str(), "--max-rate", "0"];
    let stopped = run_failing_after(&azurite, 12, &dir, &args, None).await;
    assert_eq!(stopped.status.code(), Some(3), "{}", text(&stopped.stderr));
    assert!(text(&stopped.stderr).contains("run the same command again"), "{}", text(&stopped.stderr));
    let again = run(cs, &dir, &["--json", args[0], args[1], args[2], args[3], args[4], args[5], args[6]], &[]).await;
    assert!(again.status.success(), "{}", text(&again.stderr));
    assert_eq!(json_line(&again.stdout)["resumed"], true);
    assert_same(&all(&table).await, &all(&azurite.service.table_client(target)).await);
}

/// `--all` backs up every table of the account: run against an emulator of its own (`scripts/azurite.sh run`),
/// whose account holds the test's tables only.
#[test]
fn backup_all_takes_every_table_of_an_account_of_its_own() {
    if crate::support::azurite().is_none() {
        return; // the suites' emulator is not there: npm may not be either
    }
    let dir = temp_dir("backup-all");
    let script = r#"set -e
printf '{"PartitionKey":"p","RowKey":"1","N":1}\n{"PartitionKey":"q","RowKey":"2","N":2}\n' > two.jsonl
"$TABLECTL" import two.jsonl Alpha 2>/dev/null
"$TABLECTL" import two.jsonl Beta 2>/dev/null
"$TABLECTL" --json backup --all -o all
"$TABLECTL" --json backup verify all
"#;
    let azurite_sh = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/azurite.sh");
    let out = std::process::Command::new("bash")
        .args([azurite_sh, "run", "bash", "-c", script])
        .env("TABLECTL", env!("CARGO_BIN_EXE_tablectl"))
        .current_dir(&dir)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let lines: Vec<Value> = text(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let backed_up: Vec<(&str, u64)> =
        lines[..2].iter().map(|l| (l["table"].as_str().unwrap(), l["entities"].as_u64().unwrap())).collect();
    assert_eq!(backed_up, [("Alpha", 2), ("Beta", 2)]);
    let verified: Vec<&str> = lines[2..].iter().map(|l| l["table"].as_str().unwrap()).collect();
    assert_eq!(verified, ["Alpha", "Beta"]);
}
