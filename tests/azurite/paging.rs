//! Paging against Azurite: thousands of entities through automatic continuations, `$top` as the page size,
//! resuming from a token that was printed and parsed back, and tampered tokens.

use crate::support::azurite;
use futures::TryStreamExt as _;
use table_model::client::{QueryOptions, TableClient};
use table_model::response::{Continuation, ContinuationErrorKind, QueryPage, TableContinuation};
use table_model::{Entity, PartitionKey, Query, TableEntity};

/// A reading keyed by sensor and sequence number.
#[derive(TableEntity, Debug, Clone, PartialEq)]
#[table(rename_all = "PascalCase")]
struct Reading {
    #[table(partition_key)]
    sensor: String,
    #[table(row_key)]
    seq: String,
    value: i32,
}

/// Inserts `per_partition` readings in each of `partitions` partitions, with transactions of 100, eight at a
/// time; returns their keys in key order.
async fn fill(table: &TableClient, partitions: usize, per_partition: usize) -> Vec<(String, String)> {
    let mut batches = Vec::new();
    let mut keys = Vec::new();
    for p in 0..partitions {
        let sensor = format!("sensor{p:02}");
        for chunk in (0..per_partition).collect::<Vec<_>>().chunks(100) {
            let mut batch = table.batch(PartitionKey::new(sensor.as_str()).unwrap());
            for &i in chunk {
                let reading = Reading { sensor: sensor.clone(), seq: format!("{i:05}"), value: i as i32 };
                batch.insert(&reading).unwrap();
                keys.push((sensor.clone(), reading.seq));
            }
            batches.push(batch);
        }
    }
    assert_eq!(crate::support::submit_all(table, &batches).await, keys.len());
    keys.sort();
    keys
}

fn keys_of(readings: &[Reading]) -> Vec<(String, String)> {
    readings.iter().map(|r| (r.sensor.clone(), r.seq.clone())).collect()
}

#[tokio::test]
async fn more_than_3000_entities_through_automatic_paging() {
    let azurite = azurite!();
    let table = azurite.table("Thousands").await;
    // 3,250 readings: 33 transactions, the last of each partition not full.
    let expected = fill(&table, 5, 650).await;
    assert_eq!(expected.len(), 3250);

    // Every entity exactly once, in key order: the list is the sorted, duplicate-free list of keys.
    let all: Vec<Reading> = table.query(&Query::new(), None).unwrap().try_collect().await.unwrap();
    assert_eq!(all.len(), expected.len());
    assert!(keys_of(&all) == expected, "every entity once, in key order");
    assert!(all.iter().all(|r| r.value == r.seq.parse::<i32>().unwrap()));

    // The same query in pages: at most 1,000 each, so at least four, each but the last continued.
    let pages: Vec<QueryPage<Entity>> =
        table.query(&Query::new(), None).unwrap().into_pages().try_collect().await.unwrap();
    assert!(pages.len() >= 4, "{} pages", pages.len());
    assert!(pages.iter().all(|p| p.entities.len() <= 1000));
    assert!(pages[..pages.len() - 1].iter().all(|p| p.continuation.is_some()));
    assert!(pages.last().unwrap().continuation.is_none());
    assert_eq!(pages.iter().map(|p| p.entities.len()).sum::<usize>(), 3250);
}

#[tokio::test]
async fn top_is_the_page_size() {
    let azurite = azurite!();
    let table = azurite.table("TopPages").await;
    let expected = fill(&table, 1, 25).await;
    let mut pages = table.query::<Reading>(&Query::new().top(7), None).unwrap().into_pages();
    let mut sizes = Vec::new();
    let mut all = Vec::new();
    while let Some(page) = pages.try_next().await.unwrap() {
        sizes.push(page.entities.len());
        assert_eq!(page.continuation.as_ref(), pages.continuation(), "the pager stands where the page says");
        all.extend(page.entities);
    }
    assert_eq!(sizes, [7, 7, 7, 4]);
    assert_eq!(keys_of(&all), expected);
    assert!(pages.continuation().is_none());

    // query_first: pages of `$top`, and no page read past the n-th entity.
    let first: Vec<Reading> = table.query_first(&Query::new().top(4), 10, None).await.unwrap();
    assert_eq!(keys_of(&first), expected[..10]);
    let first: Vec<Reading> = table.query_first(&Query::new(), 5, None).await.unwrap();
    assert_eq!(keys_of(&first), expected[..5]);
    let none: Vec<Reading> = table.query_first(&Query::new(), 0, None).await.unwrap();
    assert!(none.is_empty());
}

#[tokio::test]
async fn resume_from_a_printed_token() {
    let azurite = azurite!();
    let table = azurite.table("Resume").await;
    let expected = fill(&table, 3, 10).await;
    let query = Query::new().top(10);

    // Read the first page whole: the pager stands at the second page, and its token says so.
    let mut pager = table.query::<Reading>(&query, None).unwrap();
    assert!(pager.continuation().is_none(), "at the start");
    let mut seen = Vec::new();
    for _ in 0..10 {
        seen.push(pager.try_next().await.unwrap().unwrap());
    }
    let token = pager.continuation().expect("a page boundary").to_string();
    drop(pager);
    println!("resume token: {token}");

    // Later, elsewhere: the token parsed back gives exactly the remaining entities.
    let resume_from: Continuation = token.parse().unwrap();
    let options = QueryOptions { continuation: Some(resume_from), ..Default::default() };
    let rest: Vec<Reading> = table.query(&query, Some(options)).unwrap().try_collect().await.unwrap();
    assert_eq!(keys_of(&seen), expected[..10]);
    assert_eq!(keys_of(&rest), expected[10..]);

    // Mid-page, the token points at the start of the current page: its entities come again, none is lost.
    let mut pager = table.query::<Reading>(&query, None).unwrap();
    for _ in 0..15 {
        pager.try_next().await.unwrap().unwrap();
    }
    let token = pager.continuation().unwrap().to_string();
    let options = QueryOptions { continuation: Some(token.parse().unwrap()), ..Default::default() };
    let again: Vec<Reading> = table.query(&query, Some(options)).unwrap().try_collect().await.unwrap();
    assert_eq!(keys_of(&again), expected[10..]);

    // Pages: the token after a page resumes exactly after it.
    let mut pages = table.query::<Reading>(&query, None).unwrap().into_pages();
    let page = pages.try_next().await.unwrap().unwrap();
    assert_eq!(keys_of(&page.entities), expected[..10]);
    let token = pages.continuation().unwrap().to_string();
    let options = QueryOptions { continuation: Some(token.parse().unwrap()), ..Default::default() };
    let rest: Vec<Reading> = table.query(&query, Some(options)).unwrap().try_collect().await.unwrap();
    assert_eq!(keys_of(&rest), expected[10..]);

    // The last page leaves no token.
    let mut pager = table.query::<Reading>(&query, None).unwrap();
    while pager.try_next().await.unwrap().is_some() {}
    assert!(pager.continuation().is_none());
}

#[tokio::test]
async fn a_tampered_token_is_a_typed_error() {
    let azurite = azurite!();
    let table = azurite.table("Tampered").await;
    fill(&table, 1, 12).await;
    let mut pages = table.query::<Reading>(&Query::new().top(5), None).unwrap().into_pages();
    pages.try_next().await.unwrap().unwrap();
    let token = pages.continuation().unwrap().to_string();

    // One character changed: the checksum catches it.
    let mut edited = token.clone().into_bytes();
    let at = edited.len() / 2;
    edited[at] = if edited[at] == b'A' { b'B' } else { b'A' };
    let err = String::from_utf8(edited).unwrap().parse::<Continuation>().unwrap_err();
    assert_eq!(err.kind(), &ContinuationErrorKind::Checksum);
    assert!(err.to_string().starts_with("invalid continuation token: "));
    // Cut short, not base64, or a table listing's token.
    assert!(token[..token.len() - 3].parse::<Continuation>().is_err());
    assert_eq!("1!8!cA--".parse::<Continuation>().unwrap_err().kind(), &ContinuationErrorKind::NotBase64);
    let tables = TableContinuation::new("1!8!VGFibGU-").to_string();
    assert_eq!(tables.parse::<Continuation>().unwrap_err().kind(), &ContinuationErrorKind::WrongKind);
    // The intact token still works.
    let options = QueryOptions { continuation: Some(token.parse().unwrap()), ..Default::default() };
    let rest: Vec<Reading> = table.query(&Query::new().top(5), Some(options)).unwrap().try_collect().await.unwrap();
    assert_eq!(rest.len(), 7);
}
