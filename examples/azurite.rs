//! The main example: table-model's client against a real Table service (the Azurite emulator), end to end.
//!
//! ```text
//! bash scripts/azurite.sh run cargo run --example azurite
//! ```
//!
//! The script installs and starts Azurite on a free loopback port and passes its endpoint in
//! `TABLE_MODEL_AZURITE_ENDPOINT`; without it, the example uses `UseDevelopmentStorage=true` (Azurite on its
//! default port). It shows a derived struct, inserts in transactions, a newest-first query, paging with a
//! resumable token, an update under an ETag and the conflict a stale one gets, and the errors bad input gets
//! before anything is sent.

use futures::TryStreamExt as _;
use table_model::client::{QueryOptions, TableServiceClient, UpdateOptions};
use table_model::response::Continuation;
use table_model::{filter, AccountKey, DateTime, ETag, Entity, ErrorCode, PartitionKey, Query, RowKey, TableEntity};
use table_model::{IfMatch, PropertyName, TableName, UpdateMode};

/// A temperature reading. Its RowKey is the instant, written so that the newest reading sorts first.
#[derive(TableEntity, Debug, Clone)]
#[table(rename_all = "PascalCase")]
struct Reading {
    #[table(partition_key)]
    sensor: String,
    #[table(row_key, reverse_chronological)]
    at: DateTime,
    celsius: f64,
    note: Option<String>,
    #[table(etag)]
    etag: Option<ETag>,
}

type Error = Box<dyn std::error::Error>;

/// An instant the service cannot store: Edm.DateTime starts at 1601.
fn chrono_1599() -> chrono::DateTime<chrono::Utc> {
    "1599-03-30T08:00:00Z".parse().expect("a valid RFC 3339 instant")
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let service = match std::env::var("TABLE_MODEL_AZURITE_ENDPOINT") {
        Ok(url) => TableServiceClient::new(url, AccountKey::development(), None)?,
        Err(_) => TableServiceClient::from_connection_string("UseDevelopmentStorage=true", None)?,
    };
    println!("{:?} at {}", service.kind(), service.endpoint());

    // A fresh table.
    let table = TableName::new("Readings")?;
    service.delete_table_if_exists(&table, None).await?;
    let readings = service.create_table_if_not_exists(&table, None).await?;
    println!("created table {table}");

    // 250 readings of one sensor, one a minute, in transactions of 100 (all or nothing each).
    let start: DateTime = "2024-05-01T00:00:00Z".parse()?;
    let sensor = PartitionKey::new("greenhouse")?;
    let all: Vec<Reading> = (0..250)
        .map(|minute| Reading {
            sensor: sensor.to_string(),
            at: DateTime::from_ticks(start.ticks() + minute * 60 * 10_000_000).expect("in range"),
            celsius: 18.0 + (minute % 40) as f64 / 4.0,
            note: None,
            etag: None,
        })
        .collect();
    for chunk in all.chunks(100) {
        let mut batch = readings.batch(sensor.clone());
        for reading in chunk {
            batch.insert(reading)?;
        }
        readings.submit_transaction(&batch, None).await?;
    }
    println!("inserted {} readings in {} transactions", all.len(), all.len().div_ceil(100));

    // The newest three: reverse-chronological keys sort newest first, so they are the partition's first rows.
    let in_greenhouse = Query::new().filter(filter::PARTITION_KEY.eq(sensor.as_str()));
    for r in readings.query_first::<Reading>(&in_greenhouse, 3, None).await? {
        println!("  newest: {} {:.2}°C", r.at, r.celsius);
    }

    // Paging: pages of 100 ($top is the page size). Keep the token of the second page and resume from it
    // later, as a web app would after handing the token to a browser.
    let mut pages = readings.query::<Reading>(&in_greenhouse.clone().top(100), None)?.into_pages();
    let first = pages.try_next().await?.ok_or("a first page")?;
    let token = pages.continuation().ok_or("more pages")?.to_string();
    println!("page 1: {} readings; resume token {token}", first.entities.len());
    let resumed = QueryOptions { continuation: Some(token.parse::<Continuation>()?), ..Default::default() };
    let rest: Vec<Reading> = readings.query(&in_greenhouse.clone().top(100), Some(resumed))?.try_collect().await?;
    println!("resumed from the token: {} more readings", rest.len());

    // A typed filter: `celsius` is an f64 property, so comparing it with a string would not compile.
    let warm = Query::new().filter(filter::PARTITION_KEY.eq("greenhouse") & Reading::PROPERTIES.celsius.ge(27.5));
    let warm: Vec<Reading> = readings.query(&warm, None)?.try_collect().await?;
    println!("{} readings at 27.5°C or more", warm.len());

    // Optimistic concurrency: an update carries the ETag the reading was read with ...
    let latest = readings.query_first::<Reading>(&in_greenhouse, 1, None).await?.remove(0);
    let noted = Reading { note: Some("checked".into()), ..latest.clone() };
    let new_etag = readings.update(&noted, UpdateMode::Merge, None).await?;
    println!("updated the newest reading: ETag {} -> {new_etag}", latest.etag.as_ref().ok_or("read with an ETag")?);

    // ... so a second update with the old one is refused, and nothing is lost.
    match readings.update(&noted, UpdateMode::Merge, None).await {
        Err(e) if e.error_code() == Some(ErrorCode::UpdateConditionNotSatisfied) => {
            println!("the stale update was refused: {e}")
        }
        other => return Err(format!("expected UpdateConditionNotSatisfied, got {other:?}").into()),
    }
    let fresh = readings.reload(&noted, None).await?;
    println!("read again: note {:?}, ETag {}", fresh.note, fresh.etag.as_ref().ok_or("an ETag")?);
    readings.delete(&fresh, Some(UpdateOptions { if_match: Some(IfMatch::Any), ..Default::default() })).await?;

    // Bad input gets a typed error that says what, where and which rule, and nothing is sent.
    println!("errors bad input gets:");
    println!("  {}", TableName::new("audit-log").unwrap_err());
    println!("  {}", RowKey::new("2024/05/01").unwrap_err());
    println!("  {}", "Unit Price".parse::<PropertyName>().unwrap_err());
    let before_1601 = Entity::new(sensor.clone(), RowKey::new("x")?).with("At".parse()?, chrono_1599());
    println!("  {}", before_1601.unwrap_err());
    let huge = Reading { note: Some("x".repeat(40_000)), ..latest };
    println!("  {}", readings.insert(&huge, None).await.unwrap_err());

    service.delete_table(&table, None).await?;
    println!("deleted table {table}");
    Ok(())
}
