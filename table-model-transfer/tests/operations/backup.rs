//! Backups against Azurite: a table mutated between generations (inserts, merges, replaces, deletes, a key deleted
//! and inserted again, updates in the second of a watermark, many partitions and a hot one), its content
//! captured by a query after each generation; the restore of every generation into a new table equals its
//! capture, entity by entity, types included, and so does `exact` into the live table. A backup and a restore
//! cancelled midway and run again end the same; hostile backups are refused before anything is written; prune
//! folds the oldest generations and the rest restores the same.

use super::{cancelling_after, filled, service, temp_dir, Recorder};
use std::collections::BTreeMap;
use std::num::{NonZeroU32, NonZeroUsize};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use table_model::client::{TableClient, TableServiceClient};
use table_model::{EdmValue, Entity, PartitionKey, RowKey, TableName, UpdateMode};
use table_model_transfer::backup::chain::CHECKED_STORAGE;
use table_model_transfer::backup::prune::prune;
use table_model_transfer::backup::restore::{restore, RestoreOptions};
use table_model_transfer::backup::verify::verify;
use table_model_transfer::backup::{backup, BackupOptions, Chain, GenerationKind};
use table_model_transfer::error::ErrorKind;
use table_model_transfer::format::FileFormat;
use table_model_transfer::progress::Control;

/// A table's content: each entity's properties by its keys, without the service's `Timestamp` and ETag.
type Content = BTreeMap<(String, String), Vec<(String, EdmValue)>>;

async fn capture(table: &TableClient) -> Content {
    use futures::TryStreamExt as _;
    let read: Vec<Entity> = table.query(&table_model::Query::new(), None).unwrap().try_collect().await.unwrap();
    read.iter().map(|e| (keys(e), properties(e))).collect()
}

fn keys(e: &Entity) -> (String, String) {
    (e.partition_key().to_string(), e.row_key().to_string())
}

fn properties(e: &Entity) -> Vec<(String, EdmValue)> {
    let mut all: Vec<(String, EdmValue)> = e.iter().map(|(n, v)| (n.to_string(), v.clone())).collect();
    all.sort_by(|a, b| a.0.cmp(&b.0));
    all
}

fn entity(pk: &str, rk: &str, n: i64) -> Entity {
    Entity::new(PartitionKey::new(pk).unwrap(), RowKey::new(rk).unwrap())
        .with("N".parse().unwrap(), n)
        .unwrap()
        .with("Text".parse().unwrap(), format!("{pk}/{rk} #{n}"))
        .unwrap()
        .with("Ratio".parse().unwrap(), n as f64 / 7.0)
        .unwrap()
        .with("Flag".parse().unwrap(), n % 2 == 0)
        .unwrap()
        .with("Id".parse().unwrap(), uuid::Uuid::from_u128(n as u128))
        .unwrap()
        .with("Bytes".parse().unwrap(), vec![n as u8; 3])
        .unwrap()
}

/// 20 partitions of 10 and a hot partition of 300.
fn initial() -> Vec<Entity> {
    let mut all = Vec::new();
    for p in 0..20 {
        for r in 0..10 {
            all.push(entity(&format!("p{p:02}"), &format!("r{r:03}"), p * 100 + r));
        }
    }
    for r in 0..300 {
        all.push(entity("hot", &format!("r{r:04}"), 10_000 + r));
    }
    all
}

/// A new table of [`initial`], loaded in a second before the first watermark's (which has whole seconds).
async fn loaded(service: &TableServiceClient, name: &str) -> TableClient {
    let table = filled(service, name, &initial()).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    table
}

fn options() -> BackupOptions {
    // No margin: the second of the watermark is what is tested.
    BackupOptions::default().parallel(NonZeroUsize::new(4).unwrap()).margin(Duration::ZERO).max_rate(0)
}

/// Restores `dir` into a new table and returns its content.
async fn restored(service: &TableServiceClient, dir: &Path, name: &str, restore_options: RestoreOptions) -> Content {
    restored_reporting(service, dir, name, restore_options).await.0
}

#[tokio::test]
async fn every_generation_restores_to_the_table_as_it_was() {
    let recorder = Arc::new(Recorder::default());
    let Some(service) = service(&recorder) else { return };
    let table = loaded(&service, "BackupLive").await;
    let dir = temp_dir("backup-chain");
    let mut captures = Vec::new();

    let first = backup(&table, &dir, &options(), &Control::new()).await.unwrap();
    assert_eq!((first.generation, first.kind, first.entities, first.deleted), (1, GenerationKind::Full, 500, 0));
    captures.push(capture(&table).await);
    let p00 = (PartitionKey::new("p00").unwrap(), RowKey::new("r000").unwrap());
    let original = table.get::<Entity>(&p00.0, &p00.1, None).await.unwrap().timestamp().unwrap();
    // Right after the watermark's second: updates, inserts in new and hot partitions, deletes.
    table.upsert(&entity("p00", "r000", -1), UpdateMode::Replace, None).await.unwrap();
    let merge = Entity::new(PartitionKey::new("p01").unwrap(), RowKey::new("r001").unwrap())
        .with("Added".parse().unwrap(), "merged")
        .unwrap();
    table.upsert(&merge, UpdateMode::Merge, None).await.unwrap();
    let replace = Entity::new(PartitionKey::new("hot").unwrap(), RowKey::new("r0005").unwrap())
        .with("Only".parse().unwrap(), 1.5)
        .unwrap();
    table.upsert(&replace, UpdateMode::Replace, None).await.unwrap();
    for r in 0..5 {
        table
            .delete_by_keys(&PartitionKey::new("p02").unwrap(), &RowKey::new(format!("r{r:03}")).unwrap(), None)
            .await
            .unwrap();
    }
    table.insert(&entity("new", "a", 1), None).await.unwrap();
    table.insert(&entity("hot", "r9999", 2), None).await.unwrap();
    // A key deleted and inserted again, with other properties.
    table.delete_by_keys(&PartitionKey::new("p03").unwrap(), &RowKey::new("r003").unwrap(), None).await.unwrap();
    let again = Entity::new(PartitionKey::new("p03").unwrap(), RowKey::new("r003").unwrap())
        .with("Reborn".parse().unwrap(), true)
        .unwrap();
    table.insert(&again, None).await.unwrap();

    let second = backup(&table, &dir, &options(), &Control::new()).await.unwrap();
    assert_eq!((second.generation, second.kind), (2, GenerationKind::Incremental));
    assert_eq!(second.deleted, 5, "the five deleted keys of p02 (p03/r003 is back)");
    assert_eq!(second.keys, 500 - 5 + 2);
    assert!(second.entities >= 6 && second.entities < 50, "only what changed: {}", second.entities);
    captures.push(capture(&table).await);
    // The keys' scan asked for no metadata: its lines are the keys alone, no ETag.
    let keys_dir = second.dir.join("keys");
    let manifest = table_model_transfer::manifest::Manifest::read(&keys_dir).unwrap();
    let with_keys = manifest.files.iter().find(|f| f.entities > 0).unwrap();
    let line = std::fs::read_to_string(keys_dir.join(&with_keys.path)).unwrap();
    let line = line.lines().next().unwrap().to_owned();
    assert!(line.starts_with("{\"PartitionKey\":") && !line.contains("odata"), "{line}");
    // In the second of the second generation's end, and again before the third: the same entity twice.
    table.upsert(&entity("p00", "r000", -2), UpdateMode::Replace, None).await.unwrap();
    table.delete_by_keys(&PartitionKey::new("new").unwrap(), &RowKey::new("a").unwrap(), None).await.unwrap();
    table.delete_by_keys(&PartitionKey::new("hot").unwrap(), &RowKey::new("r0010").unwrap(), None).await.unwrap();
    table.upsert(&entity("p00", "r000", -3), UpdateMode::Replace, None).await.unwrap();
    table.insert(&entity("new", "a", 3), None).await.unwrap();

    // The third generation is cancelled midway through its scans and run again.
    let (control, _) = cancelling_after(1);
    let err = backup(&table, &dir, &options(), &control).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Cancelled, "{err}");
    let third = backup(&table, &dir, &options(), &Control::new()).await.unwrap();
    assert_eq!((third.generation, third.resumed), (3, true));
    assert_eq!(third.deleted, 1, "hot/r0010 (new/a was inserted again)");
    captures.push(capture(&table).await);

    let verified = verify(&dir).unwrap();
    assert_eq!((verified.generations, verified.unfinished), (vec![1, 2, 3], None));
    // Each generation's entities were read with Storage's rules on their way into its JSON lines: the restores
    // below (into Azurite, of Storage's rules) take those lines as checked.
    let chain = Chain::open(&dir).unwrap();
    assert!(chain.generations.iter().all(|g| g.manifest.checked.as_deref() == Some(CHECKED_STORAGE)));

    for (index, expected) in captures.iter().enumerate() {
        let number = index as u32 + 1;
        let content =
            restored(&service, &dir, &format!("BackupGen{number}"), RestoreOptions::default().generation(number)).await;
        assert_eq!(&content, expected, "generation {number}");
    }
    assert_ne!(captures[0], captures[1]);
    assert_ne!(captures[1], captures[2]);

    // `exact` into the live table, changed since: it is made equal to generation 2.
    table.insert(&entity("stray", "x", 0), None).await.unwrap();
    table.upsert(&entity("hot", "r0001", -9), UpdateMode::Replace, None).await.unwrap();
    // Two transactions at once (21 partitions are ready together at the end of the file): no more, no fewer.
    let two = std::num::NonZeroUsize::new(2).unwrap();
    let exact = RestoreOptions::default().generation(2).exact(true).max_rate(0).in_flight(two);
    recorder.take_most_batches();
    let summary = restore(&dir, &table, &exact, &Control::new()).await.unwrap();
    assert_eq!(recorder.take_most_batches(), 2, "restore, 2 in flight");
    assert_eq!(summary.deleted, 1, "stray/x: {summary:?}");
    assert_eq!(capture(&table).await, captures[1]);

    // The original Timestamp kept in a property of its own.
    let target = service.table_client(TableName::new("BackupStamped").unwrap());
    target.delete_table_if_exists(None).await.unwrap();
    let stamped = RestoreOptions::default().generation(1).timestamp_as("BackedUpAt").max_rate(0);
    restore(&dir, &target, &stamped, &Control::new()).await.unwrap();
    let one = target.get::<Entity>(&p00.0, &p00.1, None).await.unwrap();
    assert_eq!(one.value("BackedUpAt"), Some(&EdmValue::DateTime(original)), "{one:?}");
    assert_ne!(one.timestamp(), Some(original), "the service wrote a Timestamp of its own");

    // A restore cancelled midway goes on from its work directory and ends the same.
    let target = service.table_client(TableName::new("BackupResumed").unwrap());
    target.delete_table_if_exists(None).await.unwrap();
    let (control, _) = cancelling_after(100);
    let small_chunks = RestoreOptions::default().generation(3).max_rate(200);
    let err = restore(&dir, &target, &small_chunks, &control).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Cancelled, "{err}");
    let again = restore(&dir, &target, &RestoreOptions::default().generation(3).max_rate(0), &Control::new()).await;
    assert!(again.as_ref().unwrap().resumed, "{again:?}");
    assert_eq!(capture(&target).await, captures[2]);

    // Prune keeps the two newest generations: the second becomes the base, and restores the same.
    let pruned = prune(&dir, NonZeroU32::new(2).unwrap()).unwrap();
    assert_eq!((pruned.base, pruned.removed.as_slice()), (Some(2), &[1][..]));
    assert_eq!(verify(&dir).unwrap().generations, vec![2, 3]);
    for number in [2, 3] {
        let content =
            restored(&service, &dir, &format!("BackupPruned{number}"), RestoreOptions::default().generation(number))
                .await;
        assert_eq!(content, captures[number as usize - 1], "generation {number} after prune");
    }
    let target = service.table_client(TableName::new("BackupFolded").unwrap());
    let err = restore(&dir, &target, &RestoreOptions::default().generation(1), &Control::new()).await.unwrap_err();
    assert!(err.to_string().contains("has no generation 1") && err.to_string().contains("folded"), "{err}");
    // A fourth generation follows the base.
    let fourth = backup(&table, &dir, &options(), &Control::new()).await.unwrap();
    assert_eq!((fourth.generation, fourth.kind), (4, GenerationKind::Incremental));
    assert_eq!(verify(&dir).unwrap().generations, vec![2, 3, 4]);
    // With the default margin of a minute, a fifth generation reads again every entity changed in the minute
    // before the fourth's watermark (all of them: `exact` rewrote them), the same versions the fourth holds.
    // A restore inserts each key once (a second insert would be refused, and the restore with it).
    let fifth = backup(&table, &dir, &options().margin(Duration::from_secs(60)), &Control::new()).await.unwrap();
    assert_eq!((fifth.generation, fifth.entities, fifth.deleted), (5, fourth.keys, 0));
    let content = restored(&service, &dir, "BackupMargin", RestoreOptions::default()).await;
    assert_eq!(content, capture(&table).await);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A way to spoil a backup: its name, what it does to the directory, what the refusal says.
type Spoil<'a> = (&'a str, &'a dyn Fn(&Path), &'a str);

/// Copies a directory tree.
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

#[tokio::test]
async fn hostile_backups_are_refused_before_anything_is_written() {
    let recorder = Arc::new(Recorder::default());
    let Some(service) = service(&recorder) else { return };
    let table = loaded(&service, "BackupHostile").await;
    let dir = temp_dir("backup-hostile");
    for n in 0..3 {
        table.upsert(&entity("p05", "r005", n), UpdateMode::Replace, None).await.unwrap();
        backup(&table, &dir, &options(), &Control::new()).await.unwrap();
    }
    let target = service.table_client(TableName::new("BackupHostileTarget").unwrap());
    let generation = |n: u32| format!("gen-{n:06}");
    let cases: [Spoil; 4] = [
        (
            "missing",
            &|d| std::fs::remove_dir_all(d.join(generation(2))).unwrap(),
            "generation 2 is missing (between 1 and 3)",
        ),
        (
            "truncated",
            &|d| {
                // The largest file of the last generation (the one a backup reads too).
                let manifest: serde_json::Value =
                    serde_json::from_slice(&std::fs::read(d.join(generation(3)).join("generation.json")).unwrap())
                        .unwrap();
                let files = manifest["files"].as_array().unwrap();
                let largest = files.iter().max_by_key(|f| f["bytes"].as_u64().unwrap()).unwrap();
                let file = d.join(generation(3)).join(largest["path"].as_str().unwrap());
                let bytes = std::fs::read(&file).unwrap();
                std::fs::write(&file, &bytes[..bytes.len() / 2]).unwrap();
            },
            "does not match generation 3's manifest: size",
        ),
        (
            "edited",
            &|d| {
                let file = d.join(generation(2)).join("generation.json");
                let text = std::fs::read_to_string(&file).unwrap().replace("\"deleted\": 0", "\"deleted\": 1");
                std::fs::write(&file, text).unwrap();
            },
            "it was edited after it was written",
        ),
        (
            "out of order",
            &|d| {
                std::fs::rename(d.join(generation(2)), d.join("swap")).unwrap();
                std::fs::rename(d.join(generation(3)), d.join(generation(2))).unwrap();
                std::fs::rename(d.join("swap"), d.join(generation(3))).unwrap();
            },
            "holds generation 3: the chain is out of order",
        ),
    ];
    for (name, spoil, expected) in cases {
        let spoiled = temp_dir(&format!("backup-hostile-{}", name.replace(' ', "-")));
        copy_dir(&dir, &spoiled);
        spoil(&spoiled);
        let err = verify(&spoiled).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput, "{name}: {err}");
        assert!(err.to_string().contains(expected), "{name}: {err}");
        target.delete_table_if_exists(None).await.unwrap();
        recorder.take();
        let err = restore(&spoiled, &target, &RestoreOptions::default(), &Control::new()).await.unwrap_err();
        assert!(err.to_string().contains(expected), "{name}: {err}");
        assert!(recorder.take().is_empty(), "{name}: nothing is sent");
        let err = backup(&table, &spoiled, &options(), &Control::new()).await.unwrap_err();
        assert!(err.to_string().contains(expected), "{name}: {err}");
        std::fs::remove_dir_all(&spoiled).unwrap();
    }
    // Two files spoiled: the first in the chain's order is named, whichever is hashed first (files are hashed
    // side by side).
    let spoiled = temp_dir("backup-hostile-two");
    copy_dir(&dir, &spoiled);
    let first_file = |n: u32| {
        let manifest: serde_json::Value =
            serde_json::from_slice(&std::fs::read(spoiled.join(generation(n)).join("generation.json")).unwrap())
                .unwrap();
        spoiled.join(generation(n)).join(manifest["files"][0]["path"].as_str().unwrap())
    };
    let (first, last) = (first_file(1), first_file(3));
    std::fs::write(&last, b"").unwrap();
    std::fs::remove_file(&first).unwrap();
    let expected = format!("`{}` of generation 1 is missing", first.display());
    for _ in 0..3 {
        assert!(verify(&spoiled).unwrap_err().to_string().contains(&expected));
    }
    let err = restore(&spoiled, &target, &RestoreOptions::default(), &Control::new()).await.unwrap_err();
    assert!(err.to_string().contains(&expected), "{err}");
    assert!(recorder.take().is_empty(), "nothing is sent");
    std::fs::remove_dir_all(&spoiled).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn sharded_parquet_backups_restore_their_shares_into_one_table() {
    let recorder = Arc::new(Recorder::default());
    let Some(service) = service(&recorder) else { return };
    let table = loaded(&service, "BackupSharded").await;
    let dirs = [temp_dir("backup-shard-1"), temp_dir("backup-shard-2")];
    let sharded = |k: usize| {
        options()
            .format(FileFormat::Parquet)
            .parallel(NonZeroUsize::new(2).unwrap())
            .shard(format!("{k}/2").parse().unwrap())
    };
    for (k, dir) in dirs.iter().enumerate() {
        backup(&table, dir, &sharded(k + 1), &Control::new()).await.unwrap();
    }
    for r in 0..10 {
        table.upsert(&entity("hot", &format!("r{r:04}"), -r), UpdateMode::Replace, None).await.unwrap();
        table
            .delete_by_keys(&PartitionKey::new(format!("p{:02}", r * 2)).unwrap(), &RowKey::new("r001").unwrap(), None)
            .await
            .unwrap();
    }
    table.insert(&entity("zz", "last", 7), None).await.unwrap();
    let mut deleted = 0;
    for (k, dir) in dirs.iter().enumerate() {
        let summary = backup(&table, dir, &sharded(k + 1), &Control::new()).await.unwrap();
        assert_eq!(summary.generation, 2);
        deleted += summary.deleted;
    }
    assert_eq!(deleted, 10, "each share saw its own deletes");
    // Parquet's entities are read again, and checked, by the restore.
    assert!(Chain::open(&dirs[0]).unwrap().generations.iter().all(|g| g.manifest.checked.is_none()));
    let err = backup(&table, &dirs[0], &options().format(FileFormat::Parquet), &Control::new()).await.unwrap_err();
    assert!(err.to_string().contains("was taken with --shard 1/2, not none"), "{err}");

    // Both shares into one table: the second is refused nowhere, since its ranges are empty.
    let target = service.table_client(TableName::new("BackupShardedRestored").unwrap());
    target.delete_table_if_exists(None).await.unwrap();
    for dir in &dirs {
        restore(dir, &target, &RestoreOptions::default().max_rate(0), &Control::new()).await.unwrap();
    }
    let live = capture(&table).await;
    assert_eq!(capture(&target).await, live);
    // `exact` with one share deletes nothing of the other's.
    let exact = RestoreOptions::default().exact(true).max_rate(0);
    let summary = restore(&dirs[0], &target, &exact, &Control::new()).await.unwrap();
    assert_eq!(summary.deleted, 0);
    assert_eq!(capture(&target).await, live);
    // Without `exact`, a share that has entities is refused.
    let err = restore(&dirs[1], &target, &RestoreOptions::default(), &Control::new()).await.unwrap_err();
    assert!(err.to_string().contains("has entities in the backup's share of the key ranges"), "{err}");
    for dir in &dirs {
        std::fs::remove_dir_all(dir).unwrap();
    }
}

/// What a restore reported: the byte total its import started with (none where it reads its merge as it is
/// written), and its notices.
#[derive(Default)]
struct Reported {
    totals: std::sync::Mutex<Vec<Option<u64>>>,
    notices: std::sync::Mutex<Vec<String>>,
}

impl table_model_transfer::progress::Progress for Reported {
    fn event(&self, event: table_model_transfer::progress::Event<'_>) {
        use table_model_transfer::progress::Event;
        match event {
            Event::Started { total_bytes, .. } => self.totals.lock().unwrap().push(total_bytes),
            Event::Notice(notice) => self.notices.lock().unwrap().push(notice.to_owned()),
            _ => {}
        }
    }
}

/// Restores `dir` into a new table `name`, reporting to a [`Reported`]; its content and what it reported.
async fn restored_reporting(
    service: &TableServiceClient,
    dir: &Path,
    name: &str,
    options: RestoreOptions,
) -> (Content, Arc<Reported>) {
    let target = service.table_client(TableName::new(name).unwrap());
    target.delete_table_if_exists(None).await.unwrap();
    let reported = Arc::new(Reported::default());
    let control = Control::new().with_progress(reported.clone());
    restore(dir, &target, &options.max_rate(0), &control).await.unwrap();
    (capture(&target).await, reported)
}

#[tokio::test]
async fn a_restore_imports_beside_its_merge_only_where_no_entity_can_be_refused() {
    let recorder = Arc::new(Recorder::default());
    let Some(service) = service(&recorder) else { return };
    let table = loaded(&service, "BackupBeside").await;
    let dir = temp_dir("backup-beside");
    let work = dir.join("work");
    backup(&table, &dir, &options(), &Control::new()).await.unwrap();
    let first = capture(&table).await;

    // Checked lines, all short: the import reads the merged file as it is written (its size unknown at its start).
    let (content, reported) =
        restored_reporting(&service, &dir, "BackupBeside1", RestoreOptions::default().work_dir(&work)).await;
    assert_eq!(content, first);
    assert_eq!(*reported.totals.lock().unwrap(), [None]);

    // Stopped midway: the run after merges again and goes on from the import's checkpoint. Into a new table, the
    // merged file is not kept (removed once read, no digest recorded), so whatever stands in its place is not read.
    let target = service.table_client(TableName::new("BackupBeside2").unwrap());
    target.delete_table_if_exists(None).await.unwrap();
    let (control, _) = cancelling_after(100);
    let slow = RestoreOptions::default().max_rate(200).work_dir(&work);
    let err = restore(&dir, &target, &slow, &control).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Cancelled, "{err}");
    let staged: serde_json::Value = serde_json::from_slice(&std::fs::read(work.join("staged.json")).unwrap()).unwrap();
    assert_eq!((&staged["sha256"], &staged["imported"]), (&"".into(), &false.into()), "{staged}");
    assert!(!work.join("entities.jsonl").exists(), "read whole (500 lines), the merged file went");
    std::fs::write(work.join("entities.jsonl"), b"{\"PartitionKey\":\"cut short").unwrap();
    let reported = Arc::new(Reported::default());
    let control = Control::new().with_progress(reported.clone());
    let summary = restore(&dir, &target, &RestoreOptions::default().max_rate(0).work_dir(&work), &control).await;
    let summary = summary.unwrap();
    assert_eq!((summary.resumed, summary.restored), (true, 500), "{summary:?}");
    let notices = reported.notices.lock().unwrap().clone();
    assert!(notices.iter().any(|n| n.ends_with("its merge written again")), "{notices:?}");
    assert_eq!(capture(&target).await, first);
    assert!(!work.exists(), "the work directory is removed at the end");

    // A line long enough for its body to reach 1 MiB is read and checked before anything is written, as is every
    // entity where the original Timestamp is written into each: the import follows the merge.
    let long = (0..3).fold(entity("long", "a", 7), |long, n| {
        long.with(format!("Blob{n}").parse().unwrap(), vec![n as u8; 60 * 1024]).unwrap()
    });
    table.insert(&long, None).await.unwrap();
    backup(&table, &dir, &options(), &Control::new()).await.unwrap();
    let second = capture(&table).await;
    let stamped = RestoreOptions::default().generation(1).timestamp_as("BackedUpAt");
    for (name, options, expected) in
        [("BackupBesideLong", RestoreOptions::default(), &second), ("BackupBesideStamped", stamped, &first)]
    {
        let (mut content, reported) = restored_reporting(&service, &dir, name, options.work_dir(&work)).await;
        let totals = reported.totals.lock().unwrap().clone();
        assert!(matches!(totals[..], [Some(bytes)] if bytes > 0), "{name}: {totals:?}");
        content.values_mut().for_each(|properties| properties.retain(|(p, _)| p != "BackedUpAt"));
        assert_eq!(&content, expected, "{name}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
