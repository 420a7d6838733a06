//! The engine of filtered writes (`TableClient::write_matching`, `delete_matching`) against Azurite: a range
//! that stops resumes from its cursor and every selected entity is deleted exactly once; the page callback
//! says where each range resumes; an update keeps the keys it read.

use crate::support::azurite;
use futures::TryStreamExt as _;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use table_model::client::{BulkOperation, DecideError, MatchOptions, MatchWrite, PageDone, RangeCursor, TableClient};
use table_model::filter::{Filter, KeyRange};
use table_model::{Entity, PartitionKey, Query, RowKey, UpdateMode};

fn entity(i: usize) -> Entity {
    Entity::new(PartitionKey::new(format!("p{}", i % 3)).unwrap(), RowKey::new(format!("{i:04}")).unwrap())
        .with("N".parse().unwrap(), i as i32)
        .unwrap()
}

#[tokio::test]
async fn a_stopped_range_resumes_from_its_cursor_and_each_entity_goes_once() {
    let azurite = azurite!();
    let guard = azurite.table("Match").await;
    let table: &TableClient = &guard;
    assert!(table.bulk_write(BulkOperation::Insert, (0..300).map(entity), None).await.is_complete());
    // The entities with N >= 60, 240 of them, in pages of 50.
    let query = Query::new().filter(Filter::property("N").ge(60)).top(50);
    let pages = Arc::new(AtomicUsize::new(0));
    let seen = pages.clone();
    // The third page fails: its range stops there, two pages (100 entities) deleted.
    let decide = move |page: Vec<Entity>| -> Result<Vec<Entity>, DecideError> {
        if seen.fetch_add(1, Ordering::SeqCst) == 2 {
            return Err("the third page fails".into());
        }
        Ok(page)
    };
    let done: Arc<Mutex<Vec<PageDone>>> = Arc::default();
    let record = done.clone();
    let options =
        MatchOptions { on_page: Some(Arc::new(move |p| record.lock().unwrap().push(p.clone()))), ..Default::default() };
    let report = table
        .write_matching(MatchWrite::Delete, &query, vec![RangeCursor::new(KeyRange::all())], decide, Some(options))
        .await;
    assert_eq!((report.written, report.stopped.len()), (100, 1));
    let stop = &report.stopped[0];
    assert_eq!(stop.error.to_string(), "the third page fails");
    let done = done.lock().unwrap().clone();
    assert_eq!(done.len(), 2);
    assert_eq!(done[1].next, stop.cursor.continuation, "the callback's checkpoint is where the range resumes");
    let left: Vec<Entity> = table.query(&Query::new(), None).unwrap().try_collect().await.unwrap();
    assert_eq!(left.len(), 200);

    // Resumed: the rest of the selected entities, each once; the others untouched.
    let report = table.delete_matching(&query, vec![stop.cursor.clone()], None).await;
    assert!(report.is_complete(), "{:?}", report.stopped.first().map(|s| s.error.to_string()));
    assert_eq!(report.written, 140);
    let left: Vec<Entity> = table.query(&Query::new(), None).unwrap().try_collect().await.unwrap();
    let mut n: Vec<i32> = left.iter().map(|e| e.get::<i32>("N").unwrap()).collect();
    n.sort();
    assert_eq!(n, (0..60).collect::<Vec<i32>>());
}

#[tokio::test]
async fn an_update_must_keep_the_keys_it_read() {
    let azurite = azurite!();
    let guard = azurite.table("MatchKeys").await;
    let table: &TableClient = &guard;
    assert!(table.bulk_write(BulkOperation::Insert, (0..10).map(entity), None).await.is_complete());
    let rekey = |page: Vec<Entity>| -> Result<Vec<Entity>, DecideError> {
        Ok(page.into_iter().map(|e| Entity::new(e.partition_key().clone(), RowKey::new("new").unwrap())).collect())
    };
    let write = MatchWrite::Update(UpdateMode::Merge);
    let report = table.write_matching(write, &Query::new(), vec![RangeCursor::new(KeyRange::all())], rekey, None).await;
    assert_eq!((report.written, report.stopped.len()), (0, 1));
    let error = report.stopped[0].error.to_string();
    assert!(error.contains("was not read by the query: an update keeps the keys"), "{error}");
    let all: Vec<Entity> = table.query(&Query::new(), None).unwrap().try_collect().await.unwrap();
    assert_eq!(all.len(), 10);
}
