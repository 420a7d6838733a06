//! The ranges of a scan are read by tasks of their own (`scan::scan_pages_read`): on a runtime of two threads,
//! every page of every range comes once, each range's in its order; a reader that panics is the scan's panic,
//! not a scan that ends early with what it had; each page's next is requested before the page is read.

use super::{entities, filled, keys_of, service, Recorder};
use futures::{FutureExt as _, TryStreamExt as _};
use std::collections::BTreeSet;
use std::num::NonZeroUsize;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};
use table_model::{Entity, Query, ResponseError};
use table_model_transfer::scan::{plan, scan_pages, scan_pages_read, Page, RangeStart, Shard};

fn n(n: usize) -> NonZeroUsize {
    NonZeroUsize::new(n).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ranges_read_by_tasks_give_every_page_once_and_a_panic_is_not_an_end() {
    let recorder = Arc::new(Recorder::default());
    let Some(service) = service(&recorder) else { return };
    let all = entities(40, 100);
    let table = filled(&service, "TransferScanTasks", &all).await;
    let expected = keys_of(&table).await;
    let query = Query::new();
    let scan = plan(&table, &query, n(4), Shard::ALL).await.unwrap();
    assert_eq!(scan.mine.len(), 4);
    let starts = || -> Vec<RangeStart> {
        scan.mine
            .iter()
            .enumerate()
            .map(|(index, range)| RangeStart { index, range: range.clone(), from: None, read: None })
            .collect()
    };

    // Two at once over four ranges: a task takes the next range when it is done with one.
    let pages: Vec<Page> = scan_pages(&table, &query, starts(), n(2), None).try_collect().await.unwrap();
    let key = |e: &Entity| format!("{}|{}", e.partition_key(), e.row_key());
    let mut seen = BTreeSet::new();
    for range in 0..4 {
        let mut last: Option<(table_model::PartitionKey, table_model::RowKey)> = None;
        let of_range: Vec<&Page> = pages.iter().filter(|p| p.range == range).collect();
        assert!(!of_range.is_empty(), "range {range}");
        assert!(
            of_range[..of_range.len() - 1].iter().all(|p| p.next.is_some()) && of_range.last().unwrap().next.is_none()
        );
        for entity in of_range.iter().flat_map(|p| &p.entities) {
            let keys = (entity.partition_key().clone(), entity.row_key().clone());
            assert!(last.as_ref().is_none_or(|l| *l < keys), "range {range}: out of order at {}", key(entity));
            last = Some(keys);
            assert!(seen.insert(key(entity)), "{} twice", key(entity));
        }
    }
    assert_eq!(seen, expected);

    // A reader's panic reaches the consumer.
    fn broken(_: &http::Response<bytes::Bytes>) -> Result<usize, ResponseError> {
        panic!("a reader's bug")
    }
    let starts: Vec<RangeStart<usize>> =
        starts().into_iter().map(|s| RangeStart { index: s.index, range: s.range, from: None, read: None }).collect();
    let scanned = AssertUnwindSafe(scan_pages_read(&table, &query, starts, n(4), None, broken).try_collect::<Vec<_>>())
        .catch_unwind()
        .await;
    let panic = scanned.expect_err("the scan panics");
    assert_eq!(panic.downcast_ref::<&str>(), Some(&"a reader's bug"));
    table.delete_table(None).await.unwrap();
}

/// The client's tries, for [`next_requested`] (a reader is a `fn`, and cannot hold the test's recorder).
static TRIES: OnceLock<Arc<Recorder>> = OnceLock::new();
/// The pages [`next_requested`] was given.
static READ: AtomicUsize = AtomicUsize::new(0);

/// Reads a page once the client has sent a try more than the pages read so far (the request of the next), or
/// after 10 s: whether it had, or the page was the last. The thread is held meanwhile, as a long read holds it.
fn next_requested(answer: &http::Response<bytes::Bytes>) -> Result<bool, ResponseError> {
    let tries = TRIES.get().expect("the test sets the recorder");
    let read = READ.fetch_add(1, Ordering::SeqCst) + 1;
    let last = answer.headers().get("x-ms-continuation-nextpartitionkey").is_none();
    let deadline = Instant::now() + Duration::from_secs(10);
    let sent = || tries.sent.lock().unwrap().len();
    while !last && sent() <= read && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    Ok(last || sent() > read)
}

/// A range's next page is requested before the page is read: under the service's latency its round trips
/// follow each other, rather than each waiting for the reading of the page before (`scan::scan_pages_read`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_next_page_is_requested_before_a_page_is_read() {
    let recorder = TRIES.get_or_init(|| Arc::new(Recorder::default())).clone();
    let Some(service) = service(&recorder) else { return };
    let table = filled(&service, "TransferScanAhead", &entities(1, 35)).await;
    recorder.take();
    // Pages of 10: four of them, one range.
    let query = Query::new().top(10);
    let start = RangeStart { index: 0, range: table_model::filter::KeyRange::all(), from: None, read: None };
    let pages: Vec<Page<bool>> =
        scan_pages_read(&table, &query, vec![start], n(1), None, next_requested).try_collect().await.unwrap();
    assert_eq!(pages.len(), 4);
    assert!(pages.iter().all(|page| page.entities), "the next page was not requested before a page was read");
    assert_eq!(recorder.take().len(), 4, "a request per page, none more");
    table.delete_table(None).await.unwrap();
}
