//! Tables larger than one process, end to end with the built binary against Azurite: `--parallel` and
//! `--shard` exports equal the plain one as sets; export, import and copy stopped at chosen points (the
//! test-only abort after N entities, which stops the process as a kill does, and faults injected at the
//! transport by the project's fault proxy) and run again end with every entity exactly once; a copy through the
//! proxy at 10% faults ends exact.

use crate::support::*;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;
use table_model::client::{BulkOperation, TableClient};
use table_model::{Entity, DEVELOPMENT_ACCOUNT_KEY};
use table_model_cli::ABORT_AFTER_VAR;
use table_model_test_utils::proxy::{Fault, Proxy};
use table_model_transfer::format::jsonl;
use table_model_transfer::manifest::Manifest;

/// The binary with the connection string and `env` in its environment, in `dir`; run on a blocking thread so
/// that a proxy on the test's runtime keeps serving.
pub(crate) async fn run(connection_string: &str, dir: &Path, args: &[&str], env: &[(&str, String)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tablectl"));
    command
        .args(args)
        .env("AZURE_STORAGE_CONNECTION_STRING", connection_string)
        .env_remove(ABORT_AFTER_VAR)
        .current_dir(dir)
        .stdin(Stdio::null());
    for (name, value) in env {
        command.env(name, value);
    }
    tokio::task::spawn_blocking(move || command.output().expect("tablectl runs")).await.unwrap()
}

pub(crate) fn abort_after(n: u64) -> Vec<(&'static str, String)> {
    vec![(ABORT_AFTER_VAR, n.to_string())]
}

/// `n` entities: a hot partition of a third of them (cut by RowKey), the rest over 30 partitions, with a few
/// property types.
fn entities(n: u32) -> Vec<Entity> {
    (0..n)
        .map(|i| {
            let pk = if i % 3 == 0 { "hot".to_owned() } else { format!("p{:02}", i % 30) };
            let (p, r) = keys(&pk, &format!("{i:06}"));
            Entity::new(p, r)
                .with("N".parse().unwrap(), i64::from(i) * 1_000_000_007)
                .unwrap()
                .with("Text".parse().unwrap(), format!("entity {i}: é \"q\"\n"))
                .unwrap()
                .with("Ratio".parse().unwrap(), 1.0 / f64::from(i + 3))
                .unwrap()
        })
        .collect()
}

pub(crate) async fn filled(azurite: &Azurite, tag: &str, n: u32) -> TableClient {
    let name = unique_table(tag);
    let table = azurite.service.create_table(&name, None).await.unwrap();
    let report = table.bulk_write(BulkOperation::Insert, entities(n), None).await;
    assert!(report.is_complete(), "{:?}", report.failures.first().map(|f| f.error.to_string()));
    table
}

/// Every line of an export directory, after checking its manifest; sorted.
fn export_lines(dir: &Path) -> Vec<String> {
    let manifest = Manifest::read(dir).unwrap();
    manifest.verify(dir).unwrap();
    let mut lines: Vec<String> = manifest
        .files
        .iter()
        .flat_map(|f| text(&std::fs::read(dir.join(&f.path)).unwrap()).lines().map(str::to_owned).collect::<Vec<_>>())
        .collect();
    lines.sort();
    lines
}

/// No key twice among the lines.
fn assert_no_key_twice(lines: &[String]) {
    let keys: BTreeSet<(String, String)> = lines
        .iter()
        .map(|l| {
            let e = jsonl::read_entity(l.as_bytes()).unwrap();
            (e.partition_key().to_string(), e.row_key().to_string())
        })
        .collect();
    assert_eq!(keys.len(), lines.len(), "an entity twice");
}

/// The table holds exactly `expected` (properties compared bit for bit), each entity once.
async fn assert_holds(table: &TableClient, expected: &[Entity]) {
    let mut expected = expected.to_vec();
    expected.sort_by(|a, b| (a.partition_key(), a.row_key()).cmp(&(b.partition_key(), b.row_key())));
    assert_same(&expected, &all(table).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parallel_and_sharded_exports_each_equal_the_plain_export() {
    let azurite = azurite!();
    let dir = temp_dir("shards");
    let table = filled(&azurite, "Shd", 3_000).await;
    let name = table.table().to_string();
    let cs = &azurite.connection_string;

    let out = run(cs, &dir, &["export", &name, "-o", "plain/"], &[]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let plain = export_lines(&dir.join("plain"));
    assert_eq!(plain.len(), 3_000);
    assert_no_key_twice(&plain);

    // --parallel 4: the first range is what the first two pages read while the rest was planned, less the last
    // key read (where the next range starts); then up to 4 more ranges after it. A file each, the ranges in the
    // manifest.
    let out = run(cs, &dir, &["export", &name, "-o", "par/", "--parallel", "4"], &[]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let manifest = Manifest::read(&dir.join("par")).unwrap();
    let ranges = manifest.ranges.as_ref().map_or(0, Vec::len);
    assert!((2..=5).contains(&ranges), "{:?}", manifest.ranges);
    assert_eq!(manifest.files.len(), ranges);
    let first = manifest
        .files
        .iter()
        .find(|f| f.first.as_ref().is_some_and(|k| k.partition_key == "hot" && k.row_key == "000000"));
    assert_eq!(first.map(|f| f.entities), Some(1_999), "{:?}", manifest.files);
    assert_eq!(export_lines(&dir.join("par")), plain);

    // --shard K/3: each worker a share of one plan; together the plain export, no entity twice.
    let mut union = Vec::new();
    for k in 1..=3 {
        let (shard, out_dir) = (format!("{k}/3"), format!("shard{k}/"));
        let out = run(cs, &dir, &["export", &name, "-o", &out_dir, "--shard", &shard, "--parallel", "2"], &[]).await;
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let manifest = Manifest::read(&dir.join(format!("shard{k}"))).unwrap();
        assert_eq!(manifest.shard.map(|s| (s.k, s.n)), Some((k, 3)));
        assert_eq!(manifest.plan.as_ref().map(Vec::len), Some(6));
        union.extend(export_lines(&dir.join(format!("shard{k}"))));
    }
    union.sort();
    assert_eq!(union, plain);

    // --split-size: more files, each in the manifest, the same entities.
    // Files are cut at the end of a page (of 1,000 entities, some 400 KB here): one file per page.
    let out = run(cs, &dir, &["export", &name, "-o", "split/", "--split-size", "64K"], &[]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let manifest = Manifest::read(&dir.join("split")).unwrap();
    let sizes: Vec<u64> = manifest.files.iter().map(|f| f.entities).collect();
    assert_eq!(sizes, [1_000, 1_000, 1_000]);
    assert_eq!(export_lines(&dir.join("split")), plain);

    // --max-rate paces the pages: 3,000 entities at 1,000 a second take at least 2 s (a lower bound, which
    // load cannot break), and the export is the same.
    let start = std::time::Instant::now();
    let out = run(cs, &dir, &["export", &name, "-o", "paced/", "--max-rate", "1000"], &[]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(start.elapsed() >= Duration::from_secs(2), "{:?}", start.elapsed());
    assert_eq!(export_lines(&dir.join("paced")), plain);

    // count --parallel 4 counts each entity once.
    let out = run(cs, &dir, &["count", &name, "--parallel", "4", "--json"], &[]).await;
    assert_eq!(text(&out.stdout), format!("{{\"count\":3000,\"table\":\"{name}\"}}\n"));

    // import takes the three shards together; one shard twice is refused before anything is sent.
    let target = unique_table("ShdIn");
    let out = run(cs, &dir, &["import", "shard1", "shard1", target.as_str()], &[]).await;
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("hold the same shard 1/3 of one export"), "{}", text(&out.stderr));
    let out = run(cs, &dir, &["import", "shard1", "shard3", target.as_str()], &[]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("note: shards 2/3 of the export are not among the inputs"));
    let out = run(cs, &dir, &["import", "shard2", target.as_str()], &[]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_holds(&azurite.service.table_client(target), &entities(3_000)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_export_killed_anywhere_resumes_to_the_same_entities() {
    let azurite = azurite!();
    let dir = temp_dir("export-resume");
    let table = filled(&azurite, "ExR", 5_000).await;
    let name = table.table().to_string();
    let cs = &azurite.connection_string;
    let out = run(cs, &dir, &["export", &name, "-o", "plain/"], &[]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let plain = export_lines(&dir.join("plain"));

    // Stopped at the first entity, inside a page, at a page's end, near the end; one range or three; files cut.
    let cases: [(&str, u64, &[&str]); 5] = [
        ("a", 1, &[]),
        ("b", 2_345, &[]),
        ("c", 1_000, &["--parallel", "3"]),
        ("d", 4_999, &["--parallel", "3"]),
        ("e", 2_500, &["--parallel", "2", "--split-size", "100K"]),
    ];
    for (tag, at, extra) in cases {
        let out_dir = format!("{tag}/");
        let mut args = vec!["export", name.as_str(), "-o", out_dir.as_str()];
        args.extend_from_slice(extra);
        let out = run(cs, &dir, &args, &abort_after(at)).await;
        assert_eq!(out.status.code(), None, "killed at {at}: {}", text(&out.stderr));
        assert!(dir.join(tag).join("checkpoint.json").exists() && !dir.join(tag).join("manifest.json").exists());

        let out = run(cs, &dir, &args, &[]).await;
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        assert!(text(&out.stderr).contains("resuming the unfinished export in"), "{}", text(&out.stderr));
        assert!(!dir.join(tag).join("checkpoint.json").exists());
        let lines = export_lines(&dir.join(tag));
        assert_eq!(lines.len(), plain.len(), "case {tag}");
        assert_eq!(lines, plain, "case {tag}");
    }

    // A finished export is not run again without --force.
    let out = run(cs, &dir, &["export", &name, "-o", "a/"], &[]).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("already holds an export; give --force"), "{}", text(&out.stderr));

    // Another command line against an unfinished export is refused, naming what changed; --force starts over.
    let out = run(cs, &dir, &["export", &name, "-o", "f/"], &abort_after(10)).await;
    assert_eq!(out.status.code(), None);
    let args = ["export", &name, "-o", "f/", "--filter", "PartitionKey ge 'p'"];
    let out = run(cs, &dir, &args, &[]).await;
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains(
            "belongs to an unfinished run of another command line (--filter was null, is now \"PartitionKey ge 'p'\")"
        ),
        "{}",
        text(&out.stderr)
    );
    let out = run(cs, &dir, &[&args[..], &["--force"]].concat(), &[]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(export_lines(&dir.join("f")).len(), 3_333);
}

/// A connection string whose table endpoint is `addr`.
fn through(addr: std::net::SocketAddr) -> String {
    format!(
        "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey={DEVELOPMENT_ACCOUNT_KEY};\
         TableEndpoint=http://{addr}/devstoreaccount1;"
    )
}

/// The address `azurite` listens on.
fn socket_of(azurite: &Azurite) -> std::net::SocketAddr {
    table_model_test_utils::faults::socket_of(&azurite.url)
}

/// Runs the binary with its target through a proxy that forwards `ok` requests, then fails the transport: it
/// closes each connection at its next request (nothing reaches Azurite) and, once `ok` requests went through,
/// stops listening, so the client's retries meet a refused connection and give up at once.
pub(crate) async fn run_failing_after(
    azurite: &Azurite,
    ok: usize,
    dir: &Path,
    args: &[&str],
    target_option: Option<&str>,
) -> Output {
    let script = [vec![Fault::None; ok], vec![Fault::CloseBeforeForwarding; 100_000]].concat();
    let proxy = Proxy::scripted(socket_of(azurite), script, 1, 0, Duration::ZERO).await;
    let cs = through(proxy.addr);
    let args: Vec<&str> = match target_option {
        Some(option) => [args, &[option, cs.as_str()]].concat(),
        None => args.to_vec(),
    };
    let global = if target_option.is_some() { azurite.connection_string.clone() } else { cs.clone() };
    let finished = std::sync::atomic::AtomicBool::new(false);
    let command = async {
        let out = run(&global, dir, &args, &[]).await;
        finished.store(true, std::sync::atomic::Ordering::SeqCst);
        out
    };
    let finished = &finished;
    let watcher = async move {
        while !finished.load(std::sync::atomic::Ordering::SeqCst) && proxy.lines().len() < ok {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        drop(proxy);
    };
    tokio::join!(command, watcher).0
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_import_stopped_anywhere_resumes_to_each_entity_once() {
    let azurite = azurite!();
    let dir = temp_dir("import-resume");
    let source = entities(12_000);
    let mut input = Vec::new();
    for (i, entity) in source.iter().enumerate() {
        if i == 4 || i == 10_999 {
            input.extend_from_slice(b"{not an entity\n"); // lines 5 and 11,001
        }
        jsonl::write_entity(entity, &mut input).unwrap();
    }
    std::fs::write(dir.join("in.jsonl"), input).unwrap();
    let cs = &azurite.connection_string;

    // Killed in the first chunk (nothing checkpointed yet) and in the second; stopped by the transport.
    for (tag, stop) in [("first", Some(3_000)), ("second", Some(11_000)), ("transport", None)] {
        let name = unique_table("ImR");
        let args = ["import", "in.jsonl", name.as_str(), "--reject", "rejects.jsonl"];
        let _ = std::fs::remove_file(dir.join("rejects.jsonl"));
        let out = match stop {
            Some(at) => {
                let out = run(cs, &dir, &args, &abort_after(at)).await;
                assert_eq!(out.status.code(), None, "{tag}: {}", text(&out.stderr));
                out
            }
            None => {
                // The table's creation and 40 transactions go through, then the transport fails.
                let out = run_failing_after(&azurite, 41, &dir, &args, None).await;
                assert_eq!(out.status.code(), Some(3), "{tag}: {}", text(&out.stderr));
                assert!(text(&out.stderr).contains("run the same command again to resume"), "{}", text(&out.stderr));
                out
            }
        };
        let _ = out;
        let checkpoint = dir.join(format!("{name}.import-checkpoint.json"));
        assert!(checkpoint.exists(), "{tag}");

        let out = run(cs, &dir, &[&args[..], &["--json"]].concat(), &[]).await;
        assert_eq!(out.status.code(), Some(1), "{tag}: {}", text(&out.stderr));
        assert!(text(&out.stderr).contains("resuming the unfinished import"), "{}", text(&out.stderr));
        let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!((&summary["imported"], &summary["rejected"]), (&12_000.into(), &2.into()), "{tag}");
        assert!(!checkpoint.exists());
        // Each bad line once in the reject file, though the stopped run may have read past them.
        let rejects = text(&std::fs::read(dir.join("rejects.jsonl")).unwrap());
        let lines: Vec<u64> = rejects
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["line"].as_u64().unwrap())
            .collect();
        assert_eq!(lines, [5, 11_001], "{tag}");
        assert_holds(&azurite.service.table_client(name), &source).await;
    }

    // A 409 past the checkpoint for an entity that differs from the line is a conflict, not the stopped run's.
    let name = unique_table("ImC");
    let args = ["import", "in.jsonl", name.as_str(), "--reject", "conflicts.jsonl"];
    let out = run(cs, &dir, &args, &abort_after(500)).await;
    assert_eq!(out.status.code(), None);
    let table = azurite.service.table_client(name.clone());
    let mut changed = source[1].clone();
    changed.insert("Text".parse().unwrap(), "changed meanwhile").unwrap();
    table.upsert(&changed, table_model::UpdateMode::Replace, None).await.unwrap();
    let out = run(cs, &dir, &args, &[]).await;
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let rejects = text(&std::fs::read(dir.join("conflicts.jsonl")).unwrap());
    assert_eq!(rejects.lines().count(), 3, "{rejects}");
    assert!(rejects.lines().next().unwrap().contains("EntityAlreadyExists"), "{rejects}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_copy_stopped_anywhere_resumes_to_each_entity_once() {
    let azurite = azurite!();
    let dir = temp_dir("copy-resume");
    let source = filled(&azurite, "CpS", 8_000).await;
    let name = source.table().to_string();
    let expected = entities(8_000);
    let cs = &azurite.connection_string;

    for (tag, stop, parallel) in [("kill", Some(2_500), "2"), ("kill-late", Some(7_900), "3"), ("transport", None, "2")]
    {
        let target = unique_table("CpD");
        let args = ["copy", name.as_str(), target.as_str(), "--parallel", parallel];
        match stop {
            Some(at) => {
                let out = run(cs, &dir, &args, &abort_after(at)).await;
                assert_eq!(out.status.code(), None, "{tag}: {}", text(&out.stderr));
            }
            None => {
                // The target through a proxy whose transport fails after 30 requests.
                let out = run_failing_after(&azurite, 30, &dir, &args, Some("--to-connection-string")).await;
                assert_eq!(out.status.code(), Some(3), "{tag}: {}", text(&out.stderr));
                assert!(text(&out.stderr).contains("run the same command again to resume"), "{}", text(&out.stderr));
            }
        }
        assert!(dir.join(format!("{target}.copy-checkpoint.json")).exists(), "{tag}");
        let out = run(cs, &dir, &[&args[..], &["--json"]].concat(), &[]).await;
        assert_eq!(out.status.code(), Some(0), "{tag}: {}", text(&out.stderr));
        assert!(text(&out.stderr).contains("resuming the unfinished copy"), "{}", text(&out.stderr));
        let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(summary["copied"], 8_000, "{tag}");
        assert_holds(&azurite.service.table_client(target), &expected).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_copy_through_ten_percent_faults_ends_exact() {
    let azurite = azurite!();
    let dir = temp_dir("copy-faults");
    let source = filled(&azurite, "CpF", 10_000).await;
    let name = source.table().to_string();
    let target = unique_table("CpFD");
    // Both sides through the proxy: the plan's probes, the pages and the transactions (16 in flight) all meet
    // faults.
    let proxy = Proxy::start(socket_of(&azurite), 15, 100, Duration::from_millis(100)).await;
    let out =
        run(&through(proxy.addr), &dir, &["copy", &name, target.as_str(), "--parallel", "3", "--in-flight", "16"], &[])
            .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let faults: u64 = proxy.counts().iter().filter(|(f, _)| **f != Fault::None).map(|(_, n)| n).sum();
    assert!(faults >= 5, "{:?}", proxy.counts());
    assert_holds(&azurite.service.table_client(target), &entities(10_000)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copy_takes_an_endpoint_on_each_side_and_checks_its_options() {
    let azurite = azurite!();
    let dir = temp_dir("copy-sides");
    let source = filled(&azurite, "CpE", 300).await;
    let name = source.table().to_string();
    let target = unique_table("CpED");
    // No global endpoint: each side's own.
    let cs = azurite.connection_string.as_str();
    let args = ["copy", &name, target.as_str(), "--from-connection-string", cs, "--to-connection-string", cs, "--json"];
    let out = run("", &dir, &args, &[]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        summary,
        serde_json::json!({"source": name, "target": target.as_str(), "copied": 300, "skipped": 0, "rejected": 0, "rejects": null})
    );
    assert_holds(&azurite.service.table_client(target.clone()), &entities(300)).await;

    // Again, insert: every entity exists (rejected); insert-or-skip skips them all.
    let out = run(cs, &dir, &["copy", &name, target.as_str(), "--mode", "insert-or-skip", "--json"], &[]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((&summary["copied"], &summary["skipped"]), (&0.into(), &300.into()));

    // A bad endpoint names its own option; no endpoint at all is an error of the side that lacks one.
    let out = run("", &dir, &["copy", &name, "Nowhere", "--from-url", "ftp://nowhere"], &[]).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).starts_with("tablectl: invalid --from-url: "), "{}", text(&out.stderr));
    let out = run("", &dir, &["copy", &name, "Nowhere", "--from-connection-string", cs], &[]).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).starts_with("tablectl: no endpoint: "), "{}", text(&out.stderr));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_copy_to_a_cosmos_kind_target_rejects_a_long_row_key_before_sending() {
    let azurite = azurite!();
    let dir = temp_dir("copy-cosmos");
    let source = filled(&azurite, "CpC", 50).await;
    // Azurite takes a RowKey of 256 bytes; Cosmos DB refuses one over 255 (`docs/rules.md` §13.1).
    let long_row_key = "r".repeat(256);
    let (p, r) = keys("hot", &long_row_key);
    let long = Entity::new(p, r).with("N".parse().unwrap(), 1_i64).unwrap();
    source.insert(&long, None).await.unwrap();
    let name = source.table().to_string();
    let target = unique_table("CpCD");

    // Azurite plays the Cosmos DB target: the kind chooses the rules checked before sending.
    let args = ["--service-kind", "cosmos", "copy", &name, target.as_str(), "--reject", "rejects.jsonl", "--json"];
    let out = run(&azurite.connection_string, &dir, &args, &[]).await;
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((&summary["copied"], &summary["rejected"]), (&50.into(), &1.into()), "{summary}");
    let rejects = std::fs::read_to_string(dir.join("rejects.jsonl")).unwrap();
    let lines: Vec<serde_json::Value> = rejects.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 1, "{rejects}");
    assert_eq!(lines[0]["row_key"], long_row_key.as_str());
    assert_eq!(lines[0]["property"], "RowKey");
    // The rule alone: the table, the keys and the entity's place in a transaction are the reject's own fields.
    assert_eq!(
        lines[0]["rule"].as_str().unwrap(),
        format!(
            "invalid row key \"{}\"... for Cosmos DB for Table: 256 bytes of UTF-8, at most 255 allowed",
            &long_row_key[..64]
        ),
        "{rejects}"
    );
    // Never sent: the target (which would have taken it) holds the 50 others only.
    assert_holds(&azurite.service.table_client(target), &entities(50)).await;
}

/// Ctrl-C (SIGINT) stops an export at its next checkpoint, saying so, with status 130; the same command then
/// resumes and ends with every entity once.
#[tokio::test]
async fn ctrl_c_stops_an_export_at_a_checkpoint_and_the_same_command_resumes() {
    let azurite = azurite!();
    let dir = temp_dir("sigint");
    let table = filled(&azurite, "SigInt", 6_000).await;
    let name = table.table().to_string();
    // 1,000 entities a second: six pages over five seconds after the first, so the signal lands in the middle
    // even on a loaded machine (the pace catches up at most one second of a slow start, `rate.rs`).
    let args = ["export", name.as_str(), "-o", "out/", "--max-rate", "1000"];
    let child = Command::new(env!("CARGO_BIN_EXE_tablectl"))
        .args(args)
        .env("AZURE_STORAGE_CONNECTION_STRING", &azurite.connection_string)
        .env_remove(ABORT_AFTER_VAR)
        .current_dir(&dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Once the checkpoint holds the first page, the export is under way.
    let checkpoint = dir.join("out/checkpoint.json");
    for _ in 0..600 {
        let started = std::fs::read_to_string(&checkpoint).is_ok_and(|text| text.contains("\"next\": \""));
        if started {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let pid = child.id().to_string();
    assert!(Command::new("kill").args(["-INT", &pid]).status().unwrap().success());
    let out = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap()).await.unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("tablectl: stopping the export at its next checkpoint"), "{stderr}");
    assert!(stderr.contains("run the same command again to resume"), "{stderr}");
    assert!(checkpoint.is_file() && !dir.join("out/manifest.json").exists());

    let out = run(&azurite.connection_string, &dir, &args[..4], &[]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("resuming the unfinished export in"), "{}", text(&out.stderr));
    let lines = export_lines(&dir.join("out"));
    assert_eq!(lines.len(), 6_000);
    assert_no_key_twice(&lines);
}
