//! The SDK against the Azurite emulator, end to end: a derived struct, reverse-chronological keys, the latest
//! entry, an update under its ETag, a typed filter.
//!
//! ```text
//! eval "$(scripts/azurite.sh start)"
//! cargo run --example azurite
//! scripts/azurite.sh stop
//! ```
//!
//! `table-model` builds and reads `http::Request`/`http::Response` values; any HTTP client sends them. This
//! example uses `ureq`, a small blocking client.

use std::io::Read;
use table_model::filter;
use table_model::response;
use table_model::{
    AccountKey, Batch, Credential, DateTime, ETag, Endpoint, IfMatch, PartitionKey, Query, TableEntity, TableName,
    TableService, UpdateMode,
};

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

/// Sends a request with `ureq` and hands back an `http::Response`, whatever its status.
fn send(request: http::Request<Vec<u8>>) -> Result<http::Response<Vec<u8>>, Error> {
    let mut call = ureq::request(request.method().as_str(), &request.uri().to_string());
    for (name, value) in request.headers() {
        call = call.set(name.as_str(), value.to_str()?);
    }
    let result = if request.body().is_empty() { call.call() } else { call.send_bytes(request.body()) };
    let reply = match result {
        Ok(reply) | Err(ureq::Error::Status(_, reply)) => reply,
        Err(e) => return Err(format!("cannot reach Azurite ({e}); start it with `scripts/azurite.sh start`").into()),
    };
    let mut builder = http::Response::builder().status(reply.status());
    for name in reply.headers_names() {
        for value in reply.all(&name) {
            builder = builder.header(name.as_str(), value);
        }
    }
    let mut body = Vec::new();
    reply.into_reader().read_to_end(&mut body)?;
    Ok(builder.body(body)?)
}

fn main() -> Result<(), Error> {
    let endpoint = match std::env::var("TABLE_MODEL_AZURITE_ENDPOINT") {
        Ok(url) => Endpoint::parse(&url)?,
        Err(_) => Endpoint::development(),
    };
    println!("Azurite at {endpoint} (account {})", endpoint.account());
    let service = TableService::new(endpoint, Credential::SharedKey(AccountKey::development()));
    let table = TableName::new("Readings")?;

    // A fresh table.
    let _ = send(service.delete_table(&table)?)?;
    response::empty(&send(service.create_table(&table)?)?)?;
    println!("created table {table}");

    // Five readings of one sensor, written in one entity group transaction.
    let start: DateTime = "2024-05-01T12:00:00Z".parse()?;
    let mut batch = Batch::new(table.clone(), PartitionKey::new("greenhouse")?);
    for (minute, celsius) in [(0, 19.5), (10, 21.0), (20, 22.75), (30, 21.5), (40, 23.0)] {
        let at = DateTime::from_ticks(start.ticks() + minute * 60 * 10_000_000)?;
        let reading = Reading { sensor: "greenhouse".into(), at, celsius, note: None, etag: None };
        batch.insert(&reading)?;
    }
    response::batch(&send(service.batch(&batch)?)?, batch.len())?;
    println!("inserted {} readings in one batch", batch.len());

    // The latest reading is the first row of the partition: reverse-chronological keys sort newest first.
    let latest_query = Query::new().filter(filter::PARTITION_KEY.eq("greenhouse")).top(1);
    let page = response::query_as::<Reading, _>(&send(service.query(&table, &latest_query, None)?)?)?;
    let latest = page.entities.into_iter().next().ok_or("no reading")?;
    println!("latest: {} at {} ({:.2}°C)", latest.sensor, latest.at, latest.celsius);

    // Update it under its ETag: optimistic concurrency.
    let etag = latest.etag.clone().ok_or("a read entity has an ETag")?;
    let noted = Reading { note: Some("checked".into()), ..latest.clone() };
    let new_etag =
        response::written(&send(service.update(&table, &noted, UpdateMode::Merge, IfMatch::ETag(etag.clone()))?)?)?;
    println!("updated the latest reading: ETag {etag} -> {new_etag}");

    // The old ETag is stale now: the service refuses the update, and nothing is lost.
    let stale = service.update(&table, &noted, UpdateMode::Merge, IfMatch::ETag(etag))?;
    match response::written(&send(stale)?) {
        Err(e) if e.service().is_some_and(|s| s.is_precondition_failed()) => {
            println!("a second update with the old ETag was refused: {e}")
        }
        other => return Err(format!("expected 412 Precondition Failed, got {other:?}").into()),
    }

    // A typed filter: the warm readings, newest first. `celsius` is an f64 property, so comparing it with a
    // string would not compile.
    let warm = Query::new().filter(filter::PARTITION_KEY.eq("greenhouse") & Reading::PROPERTIES.celsius.gt(21.0));
    println!("query: $filter={}", warm.filter_ref().ok_or("a filter")?.render()?);
    let page = response::query_as::<Reading, _>(&send(service.query(&table, &warm, None)?)?)?;
    for r in page.entities {
        println!("  {} {:>6.2}°C {}", r.at, r.celsius, r.note.as_deref().unwrap_or(""));
    }

    response::empty(&send(service.delete_table(&table)?)?)?;
    println!("deleted table {table}");
    Ok(())
}
