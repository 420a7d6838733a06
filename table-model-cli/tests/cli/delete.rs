//! `tablectl delete` end to end against Azurite: counts first, refuses to delete without asking when stdin is
//! not a terminal, `--dry-run` deletes nothing, a filtered delete touches exactly what the filter selects, `--all`
//! keeps the table, and a delete stopped half-way (the test-only abort, as a kill) resumes to the same end.

use crate::support::*;
use std::process::{Command, Stdio};
use table_model::client::{BulkOperation, TableClient};
use table_model::Entity;
use table_model_cli::ABORT_AFTER_VAR;

async fn numbered(azurite: &Azurite, tag: &str, n: i64) -> TableClient {
    let name = unique_table(tag);
    let table = azurite.service.create_table(&name, None).await.unwrap();
    let entities: Vec<Entity> = (0..n)
        .map(|i| {
            let (p, r) = keys(&format!("p{}", i % 7), &format!("{i:05}"));
            Entity::new(p, r).with("N".parse().unwrap(), i).unwrap()
        })
        .collect();
    table.bulk_write(BulkOperation::Insert, entities, None).await.into_result().unwrap();
    table
}

async fn numbers(table: &TableClient) -> Vec<i64> {
    let mut n: Vec<i64> = all(table).await.iter().map(|e| e.get::<i64>("N").unwrap()).collect();
    n.sort_unstable();
    n
}

#[tokio::test]
async fn delete_counts_asks_and_deletes_exactly_what_the_filter_selects() {
    let azurite = azurite!();
    let dir = temp_dir("delete");
    let table = numbered(&azurite, "Del", 600).await;
    let name = table.table().to_string();

    let out = tablectl(&azurite.connection_string, &dir, &["delete", &name, "--filter", "N ge 400"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("200 entities of"), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("give --yes to delete without asking"), "{}", text(&out.stderr));
    let out =
        tablectl(&azurite.connection_string, &dir, &["delete", &name, "--filter", "N ge 400", "--dry-run", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary, serde_json::json!({ "table": name, "matched": 200, "deleted": 0 }));
    assert_eq!(numbers(&table).await.len(), 600, "nothing deleted yet");
    let out = tablectl(
        &azurite.connection_string,
        &dir,
        &["delete", &name, "--filter", "N ge 400", "--yes", "--parallel", "3", "--in-flight", "2"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains(&format!("deleted 200 entities of {name}")), "{}", text(&out.stderr));
    assert_eq!(numbers(&table).await, (0..400).collect::<Vec<_>>());

    let out = tablectl(&azurite.connection_string, &dir, &["delete", &name, "--all", "--yes"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(numbers(&table).await.is_empty());
    let out = tablectl(&azurite.connection_string, &dir, &["count", &name]);
    assert_eq!(text(&out.stdout), "0\n", "the table stays: {}", text(&out.stderr));
    let out = tablectl(&azurite.connection_string, &dir, &["delete", &name]);
    assert_eq!(out.status.code(), Some(2), "--filter or --all is required");
}

#[tokio::test]
async fn a_delete_stopped_half_way_resumes_to_the_same_end() {
    let azurite = azurite!();
    let dir = temp_dir("delete-resume");
    let table = numbered(&azurite, "DelResume", 3_000).await;
    let name = table.table().to_string();
    let args = ["delete", name.as_str(), "--filter", "N lt 2500", "--yes", "--parallel", "2"];
    let stopped = Command::new(env!("CARGO_BIN_EXE_tablectl"))
        .args(args)
        .env("AZURE_STORAGE_CONNECTION_STRING", &azurite.connection_string)
        .env(ABORT_AFTER_VAR, "1000")
        .current_dir(&dir)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_ne!(stopped.status.code(), Some(0), "{}", text(&stopped.stderr));
    let left = numbers(&table).await.len();
    assert!((500..3_000).contains(&left), "{left} left after the stop");
    assert!(dir.join(format!("{name}.delete-checkpoint.json")).is_file());

    let out = tablectl(&azurite.connection_string, &dir, &args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("resuming the unfinished delete of"), "{}", text(&out.stderr));
    assert_eq!(numbers(&table).await, (2_500..3_000).collect::<Vec<_>>());
    assert!(!dir.join(format!("{name}.delete-checkpoint.json")).exists());
}
