//! The engine's operations from Rust code against Azurite (`bash scripts/azurite.sh run cargo test`): an export
//! and a copy cancelled half-way through their [`Control`] and resumed end as the same operations run once; a
//! resumed import settles the chunk a stopped run had written in part with a few range reads, not a read per
//! entity; a scan by ranges plans while it reads its first range (`plan`) and reads its ranges in tasks of their
//! own (`scan`); backups (`backup`).
//!
//! The suite is compiled into the library's own test binary (`src/lib.rs`), beside the unit tests; it uses the
//! crate by its name, as an integration test does.

mod backup;
mod plan;
mod scan;

use async_trait::async_trait;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use table_model::client::azure_core::http::policies::{Policy, PolicyResult};
use table_model::client::azure_core::http::{ClientOptions, Context, Method, Request};
use table_model::client::{BulkOperation, TableClient, TableServiceClient, TableServiceClientOptions};
use table_model::{AccountKey, Entity, PartitionKey, RowKey, TableName};
use table_model_transfer::copy::{copy, CopyOptions};
use table_model_transfer::error::ErrorKind;
use table_model_transfer::export::{export, ExportOptions, ExportTarget};
use table_model_transfer::format::jsonl;
use table_model_transfer::import::{import, ImportOptions};
use table_model_transfer::progress::{Control, Event, Progress};
use table_model_transfer::CancellationToken;

/// Every try's method and path, and how many there were.
#[derive(Debug, Default)]
struct Recorder {
    sent: Mutex<Vec<(Method, String)>>,
    /// Every try's query string (empty without one).
    queries: Mutex<Vec<String>>,
    /// Tries of entity group transactions (`POST .../$batch`) under way, and the most there were at once.
    batches: AtomicU64,
    most_batches: AtomicU64,
    /// Transactions whose body holds this text are held this long before they are sent.
    hold: Mutex<Option<(String, std::time::Duration)>>,
}

impl Recorder {
    fn take(&self) -> Vec<(Method, String)> {
        std::mem::take(&mut *self.sent.lock().unwrap())
    }

    fn take_queries(&self) -> Vec<String> {
        std::mem::take(&mut *self.queries.lock().unwrap())
    }

    /// The most transactions in flight at once since the last call.
    fn take_most_batches(&self) -> u64 {
        self.most_batches.swap(0, Ordering::SeqCst)
    }
}

/// Counts a transaction's try as under way until it is dropped (answered, failed or abandoned).
struct UnderWay<'a>(&'a AtomicU64);

impl Drop for UnderWay<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

#[async_trait]
impl Policy for Recorder {
    async fn send(&self, ctx: &Context, request: &mut Request, next: &[Arc<dyn Policy>]) -> PolicyResult {
        self.sent.lock().unwrap().push((request.method(), request.url().path().to_owned()));
        self.queries.lock().unwrap().push(request.url().query().unwrap_or_default().to_owned());
        let batch = request.method() == Method::Post && request.url().path().ends_with("$batch");
        let _under_way = batch.then(|| {
            let now = self.batches.fetch_add(1, Ordering::SeqCst) + 1;
            self.most_batches.fetch_max(now, Ordering::SeqCst);
            UnderWay(&self.batches)
        });
        let hold = self.hold.lock().unwrap().clone();
        if let (true, Some((text, delay))) = (batch, hold) {
            let body: table_model::client::azure_core::Bytes = request.body().into();
            if body.windows(text.len()).any(|w| w == text.as_bytes()) {
                tokio::time::sleep(delay).await;
            }
        }
        next[0].send(ctx, request, &next[1..]).await
    }
}

/// The emulator's client, recording its tries; `None` (the suite skipped) without Azurite.
fn service(recorder: &Arc<Recorder>) -> Option<TableServiceClient> {
    let url = table_model_test_utils::azurite::endpoint_or_skip(
        "transfer engine's Azurite tests",
        "bash scripts/azurite.sh run cargo test -p table-model-transfer",
    )?;
    let options = TableServiceClientOptions {
        client_options: ClientOptions { per_try_policies: vec![recorder.clone()], ..Default::default() },
        ..Default::default()
    };
    Some(TableServiceClient::new(&url, AccountKey::development(), Some(options)).unwrap())
}

/// Fires `token` once an operation has done `after` entities.
struct CancelAfter {
    after: u64,
    token: CancellationToken,
    seen: AtomicU64,
}

impl Progress for CancelAfter {
    fn event(&self, event: Event<'_>) {
        if let Event::Entities(n) = event {
            self.seen.fetch_max(n, Ordering::SeqCst);
            if n >= self.after {
                self.token.cancel();
            }
        }
    }
}

fn cancelling_after(after: u64) -> (Control, Arc<CancelAfter>) {
    let token = CancellationToken::new();
    let progress = Arc::new(CancelAfter { after, token: token.clone(), seen: AtomicU64::new(0) });
    (Control::new().with_progress(progress.clone()).with_cancel(token), progress)
}

fn entities(partitions: u32, per_partition: u32) -> Vec<Entity> {
    let mut all = Vec::new();
    for p in 0..partitions {
        for r in 0..per_partition {
            let entity =
                Entity::new(PartitionKey::new(format!("p{p:03}")).unwrap(), RowKey::new(format!("r{r:05}")).unwrap())
                    .with("N".parse().unwrap(), i64::from(p * per_partition + r))
                    .unwrap()
                    .with("Text".parse().unwrap(), format!("entity {p}/{r}"))
                    .unwrap();
            all.push(entity);
        }
    }
    all
}

async fn filled(service: &TableServiceClient, name: &str, all: &[Entity]) -> TableClient {
    let table = service.table_client(TableName::new(name).unwrap());
    table.delete_table_if_exists(None).await.unwrap();
    table.create_table(None).await.unwrap();
    table.bulk_write(BulkOperation::Insert, all, None).await.into_result().unwrap();
    table
}

/// The keys of every entity in a table, checking none is there twice.
async fn keys_of(table: &TableClient) -> BTreeSet<String> {
    use futures::TryStreamExt as _;
    let read: Vec<Entity> = table.query(&table_model::Query::new(), None).unwrap().try_collect().await.unwrap();
    let keys: BTreeSet<String> = read.iter().map(|e| format!("{}|{}", e.partition_key(), e.row_key())).collect();
    assert_eq!(keys.len(), read.len());
    keys
}

/// The entities of an export directory's files, in the files' order.
fn exported(dir: &Path) -> Vec<String> {
    let manifest = table_model_transfer::manifest::Manifest::read(dir).unwrap();
    manifest.verify(dir).unwrap();
    let mut lines = Vec::new();
    for file in &manifest.files {
        for line in std::fs::read_to_string(dir.join(&file.path)).unwrap().lines() {
            let entity = jsonl::read_entity(line.as_bytes()).unwrap();
            lines.push(format!("{}|{}", entity.partition_key(), entity.row_key()));
        }
    }
    lines
}

/// `dir/in.jsonl` (the directory made), the entities as JSON lines.
fn input_file(dir: &Path, all: &[Entity]) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let mut text = Vec::new();
    for entity in all {
        jsonl::write_entity(entity, &mut text).unwrap();
        text.push(b'\n');
    }
    std::fs::write(dir.join("in.jsonl"), &text).unwrap();
    dir.join("in.jsonl")
}

/// Runs the import of `input` with `options` stopped before anything is sent (its cancel fired first), as a run
/// killed in its first chunks leaves its checkpoint: kept, no chunk settled.
async fn import_stopped_at_once(table: &TableClient, input: &Path, options: &ImportOptions) {
    let (control, _) = cancelling_after(u64::MAX);
    control.token().cancel();
    let err = import(table, &[input.to_owned()], options, &control).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Cancelled, "{err}");
}

/// How many entity group transactions `sent` holds.
fn transactions(sent: &[(Method, String)]) -> usize {
    sent.iter().filter(|(method, path)| *method == Method::Post && path.ends_with("$batch")).count()
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("transfer-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[tokio::test]
async fn an_export_cancelled_half_way_resumes_to_the_same_entities() {
    let recorder = Arc::new(Recorder::default());
    let Some(service) = service(&recorder) else { return };
    let all = entities(20, 150);
    let table = filled(&service, "TransferExportCancel", &all).await;
    let dir = temp_dir("export-cancel");
    let options = ExportOptions::default().parallel(std::num::NonZeroUsize::new(4).unwrap());

    let (control, seen) = cancelling_after(1_000);
    let err = export(&table, ExportTarget::Dir(dir.clone()), &options, &control).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Cancelled, "{err}");
    assert!(err.to_string().contains("run the same command again to resume"), "{err}");
    let cancelled_at = seen.seen.load(Ordering::SeqCst);
    assert!((1_000..all.len() as u64).contains(&cancelled_at), "cancelled after {cancelled_at}");
    assert!(dir.join("checkpoint.json").is_file());
    assert!(!dir.join("manifest.json").exists());

    let summary = export(&table, ExportTarget::Dir(dir.clone()), &options, &Control::new()).await.unwrap();
    assert!(summary.resumed);
    assert_eq!(summary.entities, all.len() as u64);
    let lines = exported(&dir);
    let unique: BTreeSet<&String> = lines.iter().collect();
    assert_eq!((lines.len(), unique.len()), (all.len(), all.len()), "every entity exactly once");
    assert_eq!(unique.into_iter().cloned().collect::<BTreeSet<_>>(), keys_of(&table).await);
    assert!(!dir.join("checkpoint.json").exists());
    std::fs::remove_dir_all(&dir).unwrap();
    table.delete_table(None).await.unwrap();
}

#[tokio::test]
async fn an_export_of_a_missing_table_leaves_nothing_behind() {
    let recorder = Arc::new(Recorder::default());
    let Some(service) = service(&recorder) else { return };
    let missing = service.table_client(TableName::new("TransferNoSuchTable").unwrap());
    missing.delete_table_if_exists(None).await.unwrap();
    let dir = temp_dir("export-missing");
    let err =
        export(&missing, ExportTarget::Dir(dir.clone()), &ExportOptions::default(), &Control::new()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Failed, "{err}");
    assert!(!dir.exists(), "the directory this run created is gone");
    let file = temp_dir("export-missing-file").with_extension("parquet");
    let options = ExportOptions::default().format(table_model_transfer::format::FileFormat::Parquet);
    let err = export(&missing, ExportTarget::File(file.clone()), &options, &Control::new()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Failed, "{err}");
    let leftovers: Vec<_> = std::fs::read_dir(file.parent().unwrap())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains("export-missing-file"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[tokio::test]
async fn a_copy_cancelled_half_way_resumes_to_each_entity_once() {
    let recorder = Arc::new(Recorder::default());
    let Some(service) = service(&recorder) else { return };
    let all = entities(10, 300);
    let from = filled(&service, "TransferCopyFrom", &all).await;
    let to = service.table_client(TableName::new("TransferCopyTo").unwrap());
    to.delete_table_if_exists(None).await.unwrap();
    let checkpoint = temp_dir("copy-checkpoint").with_extension("json");
    // 10,000 entities a second: chunks of 1,000 (a tenth of a second's worth), so the cancel lands in the middle.
    let options = CopyOptions::default()
        .parallel(std::num::NonZeroUsize::new(3).unwrap())
        .checkpoint(&checkpoint)
        .max_rate(10_000);

    let (control, _) = cancelling_after(1);
    let err = copy(&from, &to, &options, &control).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Cancelled, "{err}");
    assert!(checkpoint.is_file());
    let partial = keys_of(&to).await.len();
    assert!(partial > 0 && partial < all.len(), "{partial} copied before the cancel");

    let summary = copy(&from, &to, &options, &Control::new()).await.unwrap();
    assert!(summary.resumed);
    assert_eq!((summary.copied, summary.rejected), (all.len() as u64, 0));
    assert_eq!(keys_of(&to).await, keys_of(&from).await);
    assert!(!checkpoint.exists());
    from.delete_table(None).await.unwrap();
    to.delete_table(None).await.unwrap();
}

/// `in_flight` is how many transactions an import, a copy, a restore's import and a delete send at once: 40
/// partitions of 100 entities are 40 transactions ready together, so each keeps exactly as many under way as it is
/// given (8 when it is not), and writes (or deletes) every entity.
#[tokio::test]
async fn imports_copies_and_deletes_keep_as_many_transactions_in_flight_as_they_are_given() {
    use std::num::NonZeroUsize;
    use table_model_transfer::write::WriteMode;
    let recorder = Arc::new(Recorder::default());
    let Some(service) = service(&recorder) else { return };
    let all = entities(40, 100);
    let dir = temp_dir("in-flight");
    let input = input_file(&dir, &all);
    let table = service.table_client(TableName::new("TransferInFlight").unwrap());
    table.delete_table_if_exists(None).await.unwrap();
    table.create_table(None).await.unwrap();
    for (in_flight, most) in [(None, 8), (NonZeroUsize::new(3), 3), (NonZeroUsize::new(20), 20)] {
        let mut options = ImportOptions::default()
            .mode(WriteMode::Replace)
            .checkpoint(dir.join("import-checkpoint.json"))
            .reject(dir.join("rejects.jsonl"));
        options.in_flight = in_flight;
        recorder.take_most_batches();
        let summary = import(&table, std::slice::from_ref(&input), &options, &Control::new()).await.unwrap();
        assert_eq!((summary.imported, summary.rejected), (all.len() as u64, 0));
        assert_eq!(recorder.take_most_batches(), most, "import, in flight {in_flight:?}");
    }
    assert_eq!(keys_of(&table).await.len(), all.len());

    let to = service.table_client(TableName::new("TransferInFlightTo").unwrap());
    to.delete_table_if_exists(None).await.unwrap();
    let options = CopyOptions::default()
        .parallel(NonZeroUsize::new(2).unwrap())
        .in_flight(NonZeroUsize::new(5).unwrap())
        .checkpoint(dir.join("copy-checkpoint.json"));
    recorder.take_most_batches();
    let summary = copy(&table, &to, &options, &Control::new()).await.unwrap();
    assert_eq!((summary.copied, summary.rejected), (all.len() as u64, 0));
    assert_eq!(recorder.take_most_batches(), 5, "copy, 5 in flight");
    assert_eq!(keys_of(&to).await, keys_of(&table).await);

    // A delete by 2 ranges side by side: 3 in flight between them, not 3 each.
    let options = table_model_transfer::delete::DeleteOptions::all()
        .parallel(NonZeroUsize::new(2).unwrap())
        .in_flight(NonZeroUsize::new(3).unwrap())
        .checkpoint(dir.join("delete-checkpoint.json"));
    recorder.take_most_batches();
    let summary = table_model_transfer::delete::delete(&to, &options, &Control::new()).await.unwrap();
    assert_eq!(summary.deleted, all.len() as u64);
    assert_eq!(recorder.take_most_batches(), 3, "delete, 3 in flight across 2 ranges");
    assert!(keys_of(&to).await.is_empty());
    std::fs::remove_dir_all(&dir).unwrap();
    table.delete_table(None).await.unwrap();
    to.delete_table(None).await.unwrap();
}

#[tokio::test]
async fn a_resumed_import_settles_the_chunk_in_flight_with_range_reads() {
    let recorder = Arc::new(Recorder::default());
    let Some(service) = service(&recorder) else { return };
    // 4,000 entities in 40 partitions; the stopped run wrote the first 2,500 of its first chunk.
    let all = entities(40, 100);
    let dir = temp_dir("import-resume");
    let input = input_file(&dir, &all);
    let table = filled(&service, "TransferImportResume", &all[..2_500]).await;
    let checkpoint = dir.join("import-checkpoint.json");
    let options = ImportOptions::default().checkpoint(&checkpoint).reject(dir.join("rejects.jsonl"));
    // A checkpoint as the stopped run left it: kept before anything was sent, no chunk settled.
    import_stopped_at_once(&table, &input, &options).await;
    assert!(checkpoint.is_file());
    recorder.take();

    let summary = import(&table, std::slice::from_ref(&input), &options, &Control::new()).await.unwrap();
    assert!(summary.resumed);
    assert_eq!((summary.imported, summary.rejected), (all.len() as u64, 0));
    let sent = recorder.take();
    let reads = sent.iter().filter(|(method, _)| *method == Method::Get).count();
    let batches = transactions(&sent);
    // The chunk's span read once (2,500 stored: 3 pages), no read per entity; the 1,500 entities left are 15
    // transactions of 100. (The run before this one read nothing: a read per entity would be 2,500 reads.)
    assert_eq!(reads, 3, "{sent:?}");
    assert_eq!(batches, 15, "{sent:?}");
    assert_eq!(keys_of(&table).await.len(), all.len());
    std::fs::remove_dir_all(&dir).unwrap();
    table.delete_table(None).await.unwrap();
}

/// An import writes two chunks at once: a run stopped then may have written part of both. With `--max-rate
/// 10000` a chunk is 1,000 records (a tenth of a second's worth), 10 partitions of 100 here; the stopped run
/// wrote 600 of the first chunk and 300 of the second. The resumed run finds all 900 written (none rejected as
/// existing, as the second chunk's would be if only the first were read back) and writes the 2,100 left.
#[tokio::test]
async fn a_resumed_import_settles_both_chunks_that_were_in_flight() {
    let recorder = Arc::new(Recorder::default());
    let Some(service) = service(&recorder) else { return };
    let all = entities(30, 100);
    let dir = temp_dir("import-resume-two");
    let input = input_file(&dir, &all);
    let stored: Vec<Entity> = all[..600].iter().chain(&all[1_000..1_300]).cloned().collect();
    let table = filled(&service, "TransferImportResumeTwo", &stored).await;
    let checkpoint = dir.join("import-checkpoint.json");
    let options = ImportOptions::default().checkpoint(&checkpoint).reject(dir.join("rejects.jsonl")).max_rate(10_000);
    import_stopped_at_once(&table, &input, &options).await;
    recorder.take();

    let summary = import(&table, std::slice::from_ref(&input), &options, &Control::new()).await.unwrap();
    assert!(summary.resumed);
    assert_eq!((summary.imported, summary.rejected), (all.len() as u64, 0), "{summary:?}");
    let sent = recorder.take();
    let batches = transactions(&sent);
    // The 2,100 left: the 21 partitions the stopped run did not touch, a transaction each.
    assert_eq!(batches, 21, "{sent:?}");
    assert_eq!(keys_of(&table).await.len(), all.len());
    std::fs::remove_dir_all(&dir).unwrap();
    table.delete_table(None).await.unwrap();
}

/// Two chunks written side by side keep each partition's writes in input order: the second chunk replaces the
/// 50 entities of partition `held` that the first chunk wrote, and the first chunk's transaction of them is held
/// half a second on its way. The second chunk's other partitions go at once, its `held` entities only once the
/// first chunk is written, so the table ends with the second chunk's version.
#[tokio::test]
async fn chunks_side_by_side_keep_a_partitions_writes_in_input_order() {
    let recorder = Arc::new(Recorder::default());
    let Some(service) = service(&recorder) else { return };
    let version = |partition: &str, row: u32, version: i32| {
        Entity::new(PartitionKey::new(partition).unwrap(), RowKey::new(format!("r{row:05}")).unwrap())
            .with("Version".parse().unwrap(), version)
            .unwrap()
    };
    // `--max-rate 10000`: chunks of 1,000 records, the first a tenth of that. The first: `held` version 1 and 50
    // of `a`; the second: `held` version 2 and 950 in `b0` to `b9`.
    let mut all: Vec<Entity> = (0..50).map(|r| version("held", r, 1)).collect();
    all.extend((0..50).map(|r| version("a", r, 1)));
    all.extend((0..50).map(|r| version("held", r, 2)));
    all.extend((0..950).map(|i| version(&format!("b{}", i / 95), i % 95, 2)));
    let dir = temp_dir("import-order");
    let input = input_file(&dir, &all);
    let table = service.table_client(TableName::new("TransferImportOrder").unwrap());
    table.delete_table_if_exists(None).await.unwrap();
    let options = ImportOptions::default()
        .mode(table_model_transfer::write::WriteMode::Replace)
        .checkpoint(dir.join("import-checkpoint.json"))
        .reject(dir.join("rejects.jsonl"))
        .max_rate(10_000);
    *recorder.hold.lock().unwrap() = Some(("\"Version\":1".to_owned(), std::time::Duration::from_millis(500)));
    let summary = import(&table, std::slice::from_ref(&input), &options, &Control::new()).await.unwrap();
    *recorder.hold.lock().unwrap() = None;
    assert_eq!((summary.imported, summary.rejected), (all.len() as u64, 0), "{summary:?}");
    use futures::TryStreamExt as _;
    let stored: Vec<Entity> = table.query(&table_model::Query::new(), None).unwrap().try_collect().await.unwrap();
    assert_eq!(stored.len(), 1_050);
    for entity in stored.iter().filter(|e| e.partition_key().as_str() == "held") {
        assert_eq!(entity.get::<i32>("Version").unwrap(), 2, "{}: the first chunk's write came last", entity.row_key());
    }
    std::fs::remove_dir_all(&dir).unwrap();
    table.delete_table(None).await.unwrap();
}

#[tokio::test]
async fn a_resumed_import_among_many_other_entities_reads_its_keys_by_partition() {
    let recorder = Arc::new(Recorder::default());
    let Some(service) = service(&recorder) else { return };
    // 1,000 entities to import in 10 partitions; the target holds 4,000 others in the same partitions, sorting
    // before them, and the 500 the stopped run wrote.
    let all = entities(10, 100);
    let others: Vec<Entity> = entities(10, 400)
        .into_iter()
        .map(|e| {
            let row = RowKey::new(format!("a{}", e.row_key())).unwrap();
            Entity::new(e.partition_key().clone(), row).with("Other".parse().unwrap(), true).unwrap()
        })
        .collect();
    let table = filled(&service, "TransferImportSparse", &others).await;
    let written: Vec<&Entity> = all.iter().step_by(2).collect();
    table.bulk_write(BulkOperation::Insert, written, None).await.into_result().unwrap();
    let dir = temp_dir("import-sparse");
    let input = input_file(&dir, &all);
    let checkpoint = dir.join("import-checkpoint.json");
    let options = ImportOptions::default().checkpoint(&checkpoint).reject(dir.join("rejects.jsonl"));
    import_stopped_at_once(&table, &input, &options).await;
    recorder.take();

    let summary = import(&table, std::slice::from_ref(&input), &options, &Control::new()).await.unwrap();
    assert_eq!((summary.imported, summary.rejected), (1_000, 0));
    let reads = recorder.take().iter().filter(|(method, _)| *method == Method::Get).count();
    // The span's first page is mostly others: the keys are then read by partition (100 keys each: a range read
    // of the partition's least to greatest key, one or two pages), not one read per entity.
    assert!((2..=30).contains(&reads), "{reads} reads");
    assert_eq!(keys_of(&table).await.len(), 5_000);
    std::fs::remove_dir_all(&dir).unwrap();
    table.delete_table(None).await.unwrap();
}
