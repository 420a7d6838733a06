//! A realistic app on the client: an audit log of 2,500 events in 3 tenants. It reads the newest 10 events of
//! a tenant, a whole partition, a time range, updates an event under its ETag, and deletes a tenant.
//!
//! ```text
//! bash scripts/azurite.sh run cargo run --example audit_log
//! ```
use futures::TryStreamExt;
use table_model::client::{BulkOperation, TableServiceClient};
use table_model::UpdateMode;
use table_model::{filter, key, AccountKey, DateTime, ETag, Entity, Query, TableEntity, TableName};

#[derive(TableEntity, Debug, Clone)]
#[table(rename_all = "PascalCase")]
struct Event {
    #[table(partition_key)]
    tenant: String,
    #[table(row_key, reverse_chronological, unique)] // newest first; events in the same tick do not collide
    at: DateTime,
    #[table(tie_breaker)] // the unique key's tie-breaker: the key stays the same when the event is updated
    seq: u32,
    actor: String,
    action: String,
    #[table(etag)]
    etag: Option<ETag>,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::var("TABLE_MODEL_AZURITE_ENDPOINT")?;
    let service = TableServiceClient::new(url, AccountKey::development(), None)?;
    let log = service.create_table_if_not_exists(&TableName::new("AuditLog")?, None).await?;

    // 2,500 events in 3 tenants, one a second: bulk_write groups them by tenant into transactions of at most
    // 100 and sends them concurrently.
    let start: DateTime = "2026-11-01T00:00:00Z".parse()?;
    let events: Vec<Event> = (0..2500)
        .map(|i| Event {
            tenant: format!("tenant-{}", i % 3),
            at: DateTime::from_ticks(start.ticks() + i * 10_000_000).expect("in range"),
            seq: key::next_tie_breaker(),
            actor: format!("user-{}", i % 17),
            action: ["login", "read", "write", "logout"][i as usize % 4].to_owned(),
            etag: None,
        })
        .collect();
    // `&events`: written by reference, no copy. `into_result()?` makes any entity not written an error.
    let written = log.bulk_write(BulkOperation::Insert, &events, None).await.into_result()?;
    println!("wrote {written} events");

    // The newest 10 events of a tenant, and the whole partition.
    let tenant = Query::new().filter(filter::PARTITION_KEY.eq("tenant-1"));
    let newest: Vec<Event> = log.query_first(&tenant, 10, None).await?;
    let partition: Vec<Event> = log.query(&tenant, None)?.try_collect().await?;
    println!("newest: {} at {}; tenant-1 has {} events", newest[0].action, newest[0].at, partition.len());

    // A time range: the first ten minutes of the log, for one tenant (a RowKey range, so the service seeks).
    let (from, to): (DateTime, DateTime) = (start, "2026-11-01T00:10:00Z".parse()?);
    let range = filter::PARTITION_KEY.eq("tenant-1") & filter::ROW_KEY.reverse_chronological_range(from, to);
    let hour: Vec<Event> = log.query(&Query::new().filter(range), None)?.try_collect().await?;
    println!("first ten minutes of tenant-1: {} events", hour.len());

    // An update under the ETag the event was read with.
    let mut event = newest[0].clone();
    event.action = "login (verified)".into();
    let etag = log.update(&event, UpdateMode::Merge, None).await?;
    println!("updated {} -> {etag}", event.etag.as_ref().ok_or("read with an ETag")?);

    // Delete a tenant: read its keys only, delete them in bulk.
    let keys = Query::new().filter(filter::PARTITION_KEY.eq("tenant-2")).select(["PartitionKey", "RowKey"]);
    let doomed: Vec<Entity> = log.query(&keys, None)?.try_collect().await?;
    let deleted = log.bulk_write(BulkOperation::Delete, &doomed, None).await.into_result()?;
    println!("deleted tenant-2 ({deleted} events)");
    log.delete_table(None).await?;
    Ok(())
}
