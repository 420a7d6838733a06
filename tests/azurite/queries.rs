//! Queries: pages through the client's continuations, reverse-chronological keys, prefix and time ranges,
//! `$select`, tables.

use crate::support::{azurite, Table};
use futures::TryStreamExt as _;
use table_model::client::{TableClient, TablePager};
use table_model::filter::{self, Filter};
use table_model::response::QueryPage;
use table_model::{key, DateTime, Entity, PartitionKey, Query, RowKey, TableEntity};

async fn insert(table: &TableClient, e: &Entity) {
    table.insert(e, None).await.unwrap_or_else(|err| panic!("insert {:?}: {err}", e.row_key()));
}

/// Every entity of a query, page by page through the client; also returns the number of pages.
async fn query_all(table: &TableClient, query: &Query) -> (Vec<Entity>, usize) {
    let pages: Vec<QueryPage<Entity>> = table.query(query, None).unwrap().into_pages().try_collect().await.unwrap();
    if let Some(top) = query.top_value() {
        for page in &pages {
            assert!(page.entities.len() <= top, "a page of {} for $top={top}", page.entities.len());
        }
    }
    let count = pages.len();
    (pages.into_iter().flat_map(|p| p.entities).collect(), count)
}

#[tokio::test]
async fn a_query_spans_pages_through_continuations() {
    let azurite = azurite!();
    let table = azurite.table("Pages").await;
    let mut expected = Vec::new();
    for p in ["p1", "p2"] {
        for i in 0..13 {
            let e = Entity::new(PartitionKey::new(p).unwrap(), RowKey::new(format!("{i:02}")).unwrap())
                .with("I".parse().unwrap(), i)
                .unwrap();
            insert(&table, &e).await;
            expected.push(format!("{p}/{i:02}"));
        }
    }
    let (all, pages) = query_all(&table, &Query::new().top(4)).await;
    let got: Vec<String> = all.iter().map(|e| format!("{}/{}", e.partition_key(), e.row_key())).collect();
    assert_eq!(got, expected, "every entity once, in key order");
    assert!(pages >= 7, "26 entities in pages of 4 took {pages} pages");

    // With a filter, the continuation keeps the filter: only p2's odd rows, across pages.
    let odd = Query::new().filter(filter::PARTITION_KEY.eq("p2") & Filter::property("I").ge(5)).top(3);
    let (all, pages) = query_all(&table, &odd).await;
    let got: Vec<i32> = all.iter().map(|e| e.get("I").unwrap()).collect();
    assert_eq!(got, (5..13).collect::<Vec<_>>());
    assert!(pages >= 3);
}

/// A log entry keyed newest first, the "log tail" pattern of `docs/rules.md` §6.2.
#[derive(TableEntity, Debug, Clone, PartialEq)]
#[table(rename_all = "PascalCase")]
struct LogEntry {
    #[table(partition_key)]
    source: String,
    #[table(row_key, reverse_chronological)]
    at: DateTime,
    message: String,
}

#[tokio::test]
async fn reverse_chronological_keys_return_newest_first() {
    let azurite = azurite!();
    let table = azurite.table("LogTail").await;
    let base: DateTime = "2024-05-01T00:00:00Z".parse().unwrap();
    let minutes = [7i64, 0, 42, 3, 59, 15, 1, 30];
    for m in minutes {
        let at = DateTime::from_ticks(base.ticks() + m * 60 * 10_000_000).unwrap();
        let entry = LogEntry { source: "web".into(), at, message: format!("minute {m}") };
        table.insert(&entry, None).await.unwrap();
    }
    let (all, _) = query_all(&table, &Query::new().filter(filter::PARTITION_KEY.eq("web"))).await;
    let entries: Vec<LogEntry> = all.into_iter().map(|e| LogEntry::from_entity(e).unwrap()).collect();
    let mut newest_first = minutes;
    newest_first.sort_by(|a, b| b.cmp(a));
    let got: Vec<String> = entries.iter().map(|e| e.message.clone()).collect();
    assert_eq!(got, newest_first.map(|m| format!("minute {m}")));
    assert!(entries.windows(2).all(|w| w[0].at > w[1].at));

    // The latest entry is the first row: `$top=1`.
    let latest: Vec<LogEntry> = table.query_first(&Query::new(), 1, None).await.unwrap();
    assert_eq!(latest.len(), 1);
    assert_eq!(latest[0].message, "minute 59");

    // A time range over reverse-chronological keys: minutes [3, 30), newest first.
    let at = |m: i64| DateTime::from_ticks(base.ticks() + m * 60 * 10_000_000).unwrap();
    let range = filter::ROW_KEY.reverse_chronological_range(at(3), at(30));
    let (all, _) = query_all(&table, &Query::new().filter(filter::PARTITION_KEY.eq("web") & range)).await;
    let got: Vec<String> = all.into_iter().map(|e| LogEntry::from_entity(e).unwrap().message).collect();
    assert_eq!(got, ["minute 15", "minute 7", "minute 3"]);
}

#[tokio::test]
async fn chronological_time_ranges() {
    let azurite = azurite!();
    let table = azurite.table("Chrono").await;
    let base: DateTime = "2024-05-01T00:00:00Z".parse().unwrap();
    let at = |s: i64| DateTime::from_ticks(base.ticks() + s * 10_000_000).unwrap();
    for (s, tie) in [(0, 0), (10, 0), (10, 1), (20, 0), (30, 0)] {
        let rk: RowKey = key::chronological_unique(at(s), tie);
        insert(&table, &Entity::new(PartitionKey::new("p").unwrap(), rk)).await;
    }
    let q = Query::new().filter(filter::ROW_KEY.chronological_range(at(10), at(30)));
    let (all, _) = query_all(&table, &q).await;
    let got: Vec<(DateTime, u32)> = all.iter().map(|e| key::parse_chronological_unique(e.row_key()).unwrap()).collect();
    assert_eq!(got, [(at(10), 0), (at(10), 1), (at(20), 0)]);
}

#[tokio::test]
async fn prefix_ranges_are_exact_at_utf16_edges() {
    let azurite = azurite!();
    let table = azurite.table("Prefixes").await;
    let keys = [
        "",
        "a",
        "ab",
        "ab ",
        "ab\u{7F}x",
        "abc",
        "ab\u{FFFF}",
        "ab\u{FFFF}z",
        "ac",
        "b",
        "a\u{D7FF}",
        "a\u{D7FF}z",
        "a\u{E000}",
        "a\u{10000}",
        "a😀",
        "a😀x",
        "a😁",
        "a\u{10FFFF}",
        "a\u{10FFFF}q",
        "a\u{FFFF}",
        "O'",
        "O''",
        "O'B",
        "%",
        "%2",
        "%25",
    ];
    for k in keys {
        // `\u{7F}` is a control character keys may not hold: it stays out.
        let Ok(rk) = RowKey::new(k) else { continue };
        insert(&table, &Entity::new(PartitionKey::new("p").unwrap(), rk)).await;
    }
    for prefix in ["", "a", "ab", "ab\u{FFFF}", "a\u{D7FF}", "a😀", "a\u{10FFFF}", "a\u{FFFF}", "O'", "%", "%2"] {
        let q = Query::new().filter(filter::ROW_KEY.starts_with(prefix));
        let (all, _) = query_all(&table, &q).await;
        let mut got: Vec<&str> = all.iter().map(|e| e.row_key().as_str()).collect();
        let mut expected: Vec<&str> =
            keys.iter().copied().filter(|k| k.starts_with(prefix) && RowKey::new(*k).is_ok()).collect();
        got.sort_unstable();
        expected.sort_unstable();
        assert_eq!(got, expected, "prefix {prefix:?}");
    }
}

#[tokio::test]
async fn select_returns_the_selected_properties() {
    let azurite = azurite!();
    let table = azurite.table("Select").await;
    let e = LogEntry { source: "s".into(), at: DateTime::UNIX_EPOCH, message: "m".into() }.to_entity().unwrap();
    let e = e.with("Extra".parse().unwrap(), 1).unwrap();
    insert(&table, &e).await;
    let q = Query::new().select_schema(&LogEntry::SCHEMA);
    let (all, _) = query_all(&table, &q).await;
    assert_eq!(all.len(), 1);
    assert_eq!(all[0].value("Extra"), None, "not selected");
    let read = LogEntry::from_entity(all[0].clone()).unwrap();
    assert_eq!((read.message.as_str(), read.at), ("m", DateTime::UNIX_EPOCH));
    let (all, _) = query_all(&table, &Query::new().select(["Extra"])).await;
    assert_eq!((all[0].get::<i32>("Extra").unwrap(), all[0].value("Message")), (1, None));
}

#[tokio::test]
async fn tables_are_listed_across_pages() {
    let azurite = azurite!();
    let mut tables: Vec<Table> = Vec::new();
    for _ in 0..3 {
        tables.push(azurite.table("Listed").await);
    }
    // Only this run's tables: a prefix range on the TableName property, in pages of one.
    let prefix = tables[0].table().as_str().rsplit_once('x').unwrap().0;
    let q = Query::new().filter(Filter::property("TableName").starts_with(prefix)).top(1);
    let mut pager: TablePager = azurite.service.list_tables(&q, None).unwrap();
    let mut names = Vec::new();
    let mut continued = 0;
    while let Some(name) = pager.try_next().await.unwrap() {
        names.push(name.to_string());
        // A page of one is over after its table: the pager stands at the next page.
        continued += usize::from(pager.continuation().is_some());
    }
    let mut expected: Vec<String> = tables.iter().map(|t| t.table().to_string()).collect();
    expected.sort();
    names.sort();
    assert_eq!(names, expected);
    assert!(continued >= 2, "3 tables in pages of 1 continued {continued} times");
}
