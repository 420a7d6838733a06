//! A job that exports a table and copies it, from Rust code, each stopped half-way by its cancellation token and
//! resumed: what a nightly backup or a migration step does with the transfer engine, no command line involved.
//!
//! ```sh
//! bash scripts/azurite.sh run cargo run -p table-model-transfer --example resumable
//! ```
//!
//! The account is `AZURE_STORAGE_CONNECTION_STRING`'s (scripts/azurite.sh sets it to the emulator it starts),
//! else Azurite on its default port.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use table_model::client::{BulkOperation, TableServiceClient};
use table_model::{Entity, PartitionKey, RowKey, TableName};
use table_model_transfer::copy::{copy, CopyOptions};
use table_model_transfer::error::ErrorKind;
use table_model_transfer::export::{export, ExportOptions, ExportTarget};
use table_model_transfer::progress::{Control, Event, Progress};
use table_model_transfer::CancellationToken;

/// Logs progress, and fires the job's token once `stop_after` entities are done (as a shutdown signal would).
struct StopHalfWay {
    stop_after: u64,
    token: CancellationToken,
    done: AtomicU64,
}

impl Progress for StopHalfWay {
    fn event(&self, event: Event<'_>) {
        match event {
            Event::Entities(n) => {
                self.done.store(n, Ordering::Relaxed);
                if n >= self.stop_after && !self.token.is_cancelled() {
                    println!("  {n} entities done: stopping");
                    self.token.cancel();
                }
            }
            Event::Resuming { checkpoint, settled, .. } => {
                println!("  resuming from `{}` ({settled} entities settled before)", checkpoint.display())
            }
            _ => {}
        }
    }
}

fn stopping_after(n: u64) -> Control {
    let token = CancellationToken::new();
    let progress = StopHalfWay { stop_after: n, token: token.clone(), done: AtomicU64::new(0) };
    Control::new().with_progress(Arc::new(progress)).with_cancel(token)
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let connection = std::env::var("AZURE_STORAGE_CONNECTION_STRING");
    let service = TableServiceClient::from_connection_string(
        connection.as_deref().unwrap_or("UseDevelopmentStorage=true"),
        None,
    )?;
    let orders = service.table_client(TableName::new("ResumableOrders")?);
    orders.delete_table_if_exists(None).await?;
    orders.create_table(None).await?;
    let entities: Vec<Entity> = (0..4_000)
        .map(|i| {
            let keys = (PartitionKey::new(format!("store{:02}", i % 40))?, RowKey::new(format!("{i:06}"))?);
            Ok(Entity::new(keys.0, keys.1).with("Amount".parse()?, f64::from(i) / 4.0)?)
        })
        .collect::<Result<_, Box<dyn std::error::Error>>>()?;
    orders.bulk_write(BulkOperation::Insert, &entities, None).await.into_result()?;
    println!("wrote {} orders", entities.len());

    // The export: into a directory, 4 key ranges side by side, stopped after 1,500 entities, then resumed.
    let dir = std::env::temp_dir().join(format!("resumable-orders-{}", std::process::id()));
    let options = ExportOptions::default().parallel(std::num::NonZeroUsize::new(4).unwrap());
    println!("export into `{}`", dir.display());
    let stopped = export(&orders, ExportTarget::Dir(dir.clone()), &options, &stopping_after(1_500)).await;
    let err = stopped.expect_err("the token stops the export");
    assert_eq!(err.kind(), ErrorKind::Cancelled);
    println!("  stopped: {err}");
    let summary = export(&orders, ExportTarget::Dir(dir.clone()), &options, &stopping_after(u64::MAX)).await?;
    assert!(summary.resumed);
    assert_eq!(summary.entities, entities.len() as u64);
    println!("  exported {} entities in {} files ({} bytes)", summary.entities, summary.files.len(), summary.bytes);

    // The copy: stopped after its first chunk (at most 10,000 entities a second: chunks of 1,000), then resumed;
    // every entity once.
    let archive = service.table_client(TableName::new("ResumableArchive")?);
    archive.delete_table_if_exists(None).await?;
    let checkpoint = dir.join("copy-checkpoint.json");
    let options = CopyOptions::default()
        .parallel(std::num::NonZeroUsize::new(2).unwrap())
        .checkpoint(&checkpoint)
        .max_rate(10_000);
    println!("copy into {}", archive.table());
    let err = copy(&orders, &archive, &options, &stopping_after(1)).await.expect_err("the token stops the copy");
    assert_eq!(err.kind(), ErrorKind::Cancelled);
    println!("  stopped: {err}");
    let summary = copy(&orders, &archive, &options, &stopping_after(u64::MAX)).await?;
    assert!(summary.resumed);
    assert_eq!((summary.copied, summary.rejected), (entities.len() as u64, 0));
    println!("  copied {} entities", summary.copied);

    std::fs::remove_dir_all(&dir)?;
    orders.delete_table(None).await?;
    archive.delete_table(None).await?;
    Ok(())
}
