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

/// Counts the point reads in flight at once, each held 30 ms.
#[derive(Debug, Default)]
struct PointReads {
    now: AtomicUsize,
    most: AtomicUsize,
    total: AtomicUsize,
}

#[async_trait::async_trait]
impl azure_core::http::policies::Policy for PointReads {
    async fn send(
        &self,
        ctx: &azure_core::http::Context,
        request: &mut azure_core::http::Request,
        next: &[Arc<dyn azure_core::http::policies::Policy>],
    ) -> azure_core::http::policies::PolicyResult {
        let point_read =
            request.method() == azure_core::http::Method::Get && request.url().path().contains("(PartitionKey=");
        if !point_read {
            return next[0].send(ctx, request, &next[1..]).await;
        }
        let now = self.now.fetch_add(1, Ordering::SeqCst) + 1;
        self.most.fetch_max(now, Ordering::SeqCst);
        self.total.fetch_add(1, Ordering::SeqCst);
        tokio::time::sleep(std::time::Duration::from_millis(30)).await;
        let answer = next[0].send(ctx, request, &next[1..]).await;
        self.now.fetch_sub(1, Ordering::SeqCst);
        answer
    }
}

/// Every entity of a page changed behind the engine's back: each refusal is checked against the stored entity
/// (a point read), side by side, at most as many at once as transactions are sent, and each is reported changed
/// and left as the other writer left it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_refusals_of_a_page_are_checked_side_by_side() {
    use table_model::client::{BulkOptions, TableServiceClient, TableServiceClientOptions};
    let azurite = azurite!();
    let guard = azurite.table("MatchSide").await;
    assert!(guard.bulk_write(BulkOperation::Insert, (0..60).map(entity), None).await.is_complete());
    let reads = Arc::new(PointReads::default());
    let options = TableServiceClientOptions {
        client_options: azure_core::http::ClientOptions { per_try_policies: vec![reads.clone()], ..Default::default() },
        ..Default::default()
    };
    let service = TableServiceClient::new(&azurite.url, table_model::AccountKey::development(), Some(options)).unwrap();
    let table = service.table_client(guard.table().clone());
    let other = guard.table().clone();
    let meddle = |page: Vec<Entity>| -> Result<Vec<Entity>, DecideError> {
        let other = azurite.service.table_client(other.clone());
        tokio::task::block_in_place(|| {
            tokio::runtime::Handle::current().block_on(async {
                for e in &page {
                    let changed = e.clone().with("N".parse().unwrap(), -1).unwrap();
                    other.upsert(&changed, UpdateMode::Replace, None).await.unwrap();
                }
            })
        });
        Ok(page)
    };
    let options = MatchOptions { bulk: BulkOptions { concurrency: 4, ..Default::default() }, ..Default::default() };
    let report = table
        .write_matching(
            MatchWrite::Delete,
            &Query::new(),
            vec![RangeCursor::new(KeyRange::all())],
            meddle,
            Some(options),
        )
        .await;
    assert_eq!((report.written, report.changed.len()), (0, 60), "{:?}", report.failures.first().map(|f| f.to_string()));
    assert_eq!(reads.total.load(Ordering::SeqCst), 60, "one point read a refusal");
    let most = reads.most.load(Ordering::SeqCst);
    assert!((2..=4).contains(&most), "{most} point reads at once, with 4 transactions at once");
    let left: Vec<Entity> = table.query(&Query::new(), None).unwrap().try_collect().await.unwrap();
    assert_eq!(left.len(), 60);
    assert!(left.iter().all(|e| e.get::<i32>("N").unwrap() == -1), "left as the other writer left them");
}
