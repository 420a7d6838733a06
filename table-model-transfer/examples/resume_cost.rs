//! What a resumed import costs against a fresh import of what was left, requests counted in the client's
//! pipeline (every try), for BENCHMARKS.md:
//!
//! ```sh
//! bash scripts/azurite.sh run cargo run --release -p table-model-transfer --example resume_cost
//! ```
//!
//! 30,000 entities in 300 partitions of 100, imported from a file; the run is stopped once 10,000 are settled (at
//! the end of the chunk then written, which its checkpoint names), and the next 5,000 are written as the stopped
//! run's chunks in flight would have been. The resumed run then settles them and writes what is left; a fresh
//! import writes the same entities left into an empty table.

use async_trait::async_trait;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;
use table_model::client::azure_core::http::policies::{Policy, PolicyResult};
use table_model::client::azure_core::http::{ClientOptions, Context, Request};
use table_model::client::{BulkOperation, TableServiceClient, TableServiceClientOptions};
use table_model::{AccountKey, Entity, PartitionKey, RowKey, TableName};
use table_model_transfer::format::jsonl;
use table_model_transfer::import::{import, ImportOptions};
use table_model_transfer::progress::{Control, Event, Progress};
use table_model_transfer::CancellationToken;

/// Counts every try.
#[derive(Debug, Default)]
struct Count(AtomicU64);

#[async_trait]
impl Policy for Count {
    async fn send(&self, ctx: &Context, request: &mut Request, next: &[Arc<dyn Policy>]) -> PolicyResult {
        self.0.fetch_add(1, Ordering::Relaxed);
        next[0].send(ctx, request, &next[1..]).await
    }
}

/// Stops the run once a chunk is settled.
struct StopAfterFirstChunk(CancellationToken);

impl Progress for StopAfterFirstChunk {
    fn event(&self, event: Event<'_>) {
        if let Event::Entities(n) = event
            && n >= 10_000
        {
            self.0.cancel();
        }
    }
}

fn entities(range: std::ops::Range<u32>) -> Vec<Entity> {
    range
        .map(|i| {
            let keys =
                (PartitionKey::new(format!("p{:03}", i / 100)).unwrap(), RowKey::new(format!("{i:06}")).unwrap());
            Entity::new(keys.0, keys.1).with("Text".parse().unwrap(), "x".repeat(200)).unwrap()
        })
        .collect()
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::var("TABLE_MODEL_AZURITE_ENDPOINT").expect("run it under scripts/azurite.sh");
    let count = Arc::new(Count::default());
    let options = TableServiceClientOptions {
        client_options: ClientOptions { per_try_policies: vec![count.clone()], ..Default::default() },
        ..Default::default()
    };
    let service = TableServiceClient::new(&url, AccountKey::development(), Some(options))?;
    let dir = std::env::temp_dir().join(format!("resume-cost-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let write_file = |name: &str, all: &[Entity]| -> std::io::Result<std::path::PathBuf> {
        let mut text = Vec::new();
        for entity in all {
            jsonl::write_entity(entity, &mut text).map_err(std::io::Error::other)?;
            text.push(b'\n');
        }
        std::fs::write(dir.join(name), text)?;
        Ok(dir.join(name))
    };
    let whole = write_file("all.jsonl", &entities(0..30_000))?;

    // The stopped run: its first chunk settled, 5,000 of its second written.
    let resumed = service.table_client(TableName::new("ResumeCostResumed")?);
    resumed.delete_table_if_exists(None).await?;
    let checkpoint = dir.join("checkpoint.json");
    let import_options = ImportOptions::default().checkpoint(&checkpoint).reject(dir.join("rejects.jsonl"));
    let token = CancellationToken::new();
    let stop = Control::new().with_progress(Arc::new(StopAfterFirstChunk(token.clone()))).with_cancel(token);
    let stopped = import(&resumed, std::slice::from_ref(&whole), &import_options, &stop).await;
    assert!(stopped.is_err(), "the first run stops after its first chunks");
    // What the checkpoint says was settled: the first `settled` entities of the file, all written.
    let saved: serde_json::Value = serde_json::from_slice(&std::fs::read(&checkpoint)?)?;
    let settled = saved["written"].as_u64().expect("a count of entities written") as u32;
    let in_flight = settled..settled + 5_000;
    resumed.bulk_write(BulkOperation::Insert, entities(in_flight.clone()), None).await.into_result()?;
    let left = write_file("left.jsonl", &entities(in_flight.end..30_000))?;
    println!("stopped after {settled} entities settled; {} written past the checkpoint", in_flight.len());

    count.0.store(0, Ordering::Relaxed);
    let start = Instant::now();
    let summary = import(&resumed, std::slice::from_ref(&whole), &import_options, &Control::new()).await?;
    let (resumed_tries, resumed_time) = (count.0.load(Ordering::Relaxed), start.elapsed());
    assert_eq!((summary.imported, summary.rejected), (30_000, 0));

    let fresh = service.table_client(TableName::new("ResumeCostFresh")?);
    fresh.delete_table_if_exists(None).await?;
    count.0.store(0, Ordering::Relaxed);
    let start = Instant::now();
    let fresh_options =
        ImportOptions::default().checkpoint(dir.join("fresh.json")).reject(dir.join("fresh-rejects.jsonl"));
    let summary = import(&fresh, std::slice::from_ref(&left), &fresh_options, &Control::new()).await?;
    let (fresh_tries, fresh_time) = (count.0.load(Ordering::Relaxed), start.elapsed());
    assert_eq!((summary.imported, summary.rejected), (u64::from(30_000 - in_flight.end), 0));

    println!("resumed import: {resumed_tries} requests, {resumed_time:.2?}");
    println!("fresh import of what was left: {fresh_tries} requests, {fresh_time:.2?}");
    println!(
        "ratio: {:.2}x requests, {:.2}x time",
        resumed_tries as f64 / fresh_tries as f64,
        resumed_time.as_secs_f64() / fresh_time.as_secs_f64()
    );
    resumed.delete_table(None).await?;
    fresh.delete_table(None).await?;
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}
