//! Queries: continuation across pages, reverse-chronological keys, prefix and time ranges, `$select`, tables.

use crate::support::{azurite, Azurite, Table};
use table_model::filter::{self, Filter};
use table_model::response::{self, Continuation, TableContinuation};
use table_model::{key, DateTime, Entity, PartitionKey, Query, RowKey, TableEntity, TableName};

fn insert(azurite: &Azurite, table: &Table<'_>, e: &Entity) {
    let reply = azurite.send(azurite.service.insert(&table.name, e).unwrap());
    response::written(&reply).unwrap_or_else(|err| panic!("insert {:?}: {err}", e.row_key()));
}

/// Every entity of a query, following continuations; also returns the number of pages.
fn query_all(azurite: &Azurite, table: &TableName, query: &Query) -> (Vec<Entity>, usize) {
    let mut all = Vec::new();
    let mut continuation: Option<Continuation> = None;
    let mut pages = 0;
    loop {
        let reply = azurite.send(azurite.service.query(table, query, continuation.as_ref()).unwrap());
        let page = response::query(&reply, None).unwrap();
        pages += 1;
        if let Some(top) = query.top_value() {
            assert!(page.entities.len() <= top, "a page of {} for $top={top}", page.entities.len());
        }
        all.extend(page.entities);
        match page.continuation {
            Some(c) => continuation = Some(c),
            None => return (all, pages),
        }
        assert!(pages < 1000, "no end to the continuations");
    }
}

#[test]
fn a_query_spans_pages_through_continuations() {
    let azurite = azurite!();
    let table = azurite.table("Pages");
    let mut expected = Vec::new();
    for p in ["p1", "p2"] {
        for i in 0..13 {
            let e = Entity::new(PartitionKey::new(p).unwrap(), RowKey::new(format!("{i:02}")).unwrap())
                .with("I".parse().unwrap(), i)
                .unwrap();
            insert(&azurite, &table, &e);
            expected.push(format!("{p}/{i:02}"));
        }
    }
    let (all, pages) = query_all(&azurite, &table.name, &Query::new().top(4));
    let got: Vec<String> = all.iter().map(|e| format!("{}/{}", e.partition_key(), e.row_key())).collect();
    assert_eq!(got, expected, "every entity once, in key order");
    assert!(pages >= 7, "26 entities in pages of 4 took {pages} pages");

    // With a filter, the continuation keeps the filter: only p2's odd rows, across pages.
    let odd = Query::new().filter(filter::PARTITION_KEY.eq("p2") & Filter::property("I").ge(5)).top(3);
    let (all, pages) = query_all(&azurite, &table.name, &odd);
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

#[test]
fn reverse_chronological_keys_return_newest_first() {
    let azurite = azurite!();
    let table = azurite.table("LogTail");
    let base: DateTime = "2024-05-01T00:00:00Z".parse().unwrap();
    let minutes = [7i64, 0, 42, 3, 59, 15, 1, 30];
    for m in minutes {
        let at = DateTime::from_ticks(base.ticks() + m * 60 * 10_000_000).unwrap();
        let entry = LogEntry { source: "web".into(), at, message: format!("minute {m}") };
        response::written(&azurite.send(azurite.service.insert(&table.name, &entry).unwrap())).unwrap();
    }
    let (all, _) = query_all(&azurite, &table.name, &Query::new().filter(filter::PARTITION_KEY.eq("web")));
    let entries: Vec<LogEntry> = all.into_iter().map(|e| LogEntry::from_entity(e).unwrap()).collect();
    let mut newest_first = minutes;
    newest_first.sort_by(|a, b| b.cmp(a));
    let got: Vec<String> = entries.iter().map(|e| e.message.clone()).collect();
    assert_eq!(got, newest_first.map(|m| format!("minute {m}")));
    assert!(entries.windows(2).all(|w| w[0].at > w[1].at));

    // The latest entry is the first row: `$top=1`.
    let reply = azurite.send(azurite.service.query(&table.name, &Query::new().top(1), None).unwrap());
    let latest = response::query_as::<LogEntry, _>(&reply).unwrap().entities.remove(0);
    assert_eq!(latest.message, "minute 59");

    // A time range over reverse-chronological keys: minutes [3, 30), newest first.
    let at = |m: i64| DateTime::from_ticks(base.ticks() + m * 60 * 10_000_000).unwrap();
    let range = filter::ROW_KEY.reverse_chronological_range(at(3), at(30));
    let (all, _) = query_all(&azurite, &table.name, &Query::new().filter(filter::PARTITION_KEY.eq("web") & range));
    let got: Vec<String> = all.into_iter().map(|e| LogEntry::from_entity(e).unwrap().message).collect();
    assert_eq!(got, ["minute 15", "minute 7", "minute 3"]);
}

#[test]
fn chronological_time_ranges() {
    let azurite = azurite!();
    let table = azurite.table("Chrono");
    let base: DateTime = "2024-05-01T00:00:00Z".parse().unwrap();
    let at = |s: i64| DateTime::from_ticks(base.ticks() + s * 10_000_000).unwrap();
    for (s, tie) in [(0, 0), (10, 0), (10, 1), (20, 0), (30, 0)] {
        let rk: RowKey = key::chronological_unique(at(s), tie);
        insert(&azurite, &table, &Entity::new(PartitionKey::new("p").unwrap(), rk));
    }
    let q = Query::new().filter(filter::ROW_KEY.chronological_range(at(10), at(30)));
    let (all, _) = query_all(&azurite, &table.name, &q);
    let got: Vec<(DateTime, u32)> = all.iter().map(|e| key::parse_chronological_unique(e.row_key()).unwrap()).collect();
    assert_eq!(got, [(at(10), 0), (at(10), 1), (at(20), 0)]);
}

#[test]
fn prefix_ranges_are_exact_at_utf16_edges() {
    let azurite = azurite!();
    let table = azurite.table("Prefixes");
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
        insert(&azurite, &table, &Entity::new(PartitionKey::new("p").unwrap(), rk));
    }
    for prefix in ["", "a", "ab", "ab\u{FFFF}", "a\u{D7FF}", "a😀", "a\u{10FFFF}", "a\u{FFFF}", "O'", "%", "%2"] {
        let q = Query::new().filter(filter::ROW_KEY.starts_with(prefix));
        let (all, _) = query_all(&azurite, &table.name, &q);
        let mut got: Vec<&str> = all.iter().map(|e| e.row_key().as_str()).collect();
        let mut expected: Vec<&str> =
            keys.iter().copied().filter(|k| k.starts_with(prefix) && RowKey::new(*k).is_ok()).collect();
        got.sort_unstable();
        expected.sort_unstable();
        assert_eq!(got, expected, "prefix {prefix:?}");
    }
}

#[test]
fn select_returns_the_selected_properties() {
    let azurite = azurite!();
    let table = azurite.table("Select");
    let e = LogEntry { source: "s".into(), at: DateTime::UNIX_EPOCH, message: "m".into() }.to_entity().unwrap();
    let e = e.with("Extra".parse().unwrap(), 1).unwrap();
    insert(&azurite, &table, &e);
    let q = Query::new().select_schema(&LogEntry::SCHEMA);
    let (all, _) = query_all(&azurite, &table.name, &q);
    assert_eq!(all.len(), 1);
    assert_eq!(all[0].value("Extra"), None, "not selected");
    let read = LogEntry::from_entity(all[0].clone()).unwrap();
    assert_eq!((read.message.as_str(), read.at), ("m", DateTime::UNIX_EPOCH));
    let (all, _) = query_all(&azurite, &table.name, &Query::new().select(["Extra"]));
    assert_eq!((all[0].get::<i32>("Extra").unwrap(), all[0].value("Message")), (1, None));
}

#[test]
fn tables_are_listed_across_pages() {
    let azurite = azurite!();
    let tables: Vec<Table<'_>> = (0..3).map(|_| azurite.table("Listed")).collect();
    // Only this run's tables: a prefix range on the TableName property.
    let prefix = tables[0].name.as_str().rsplit_once('x').unwrap().0;
    let q = Query::new().filter(Filter::property("TableName").starts_with(prefix)).top(1);
    let mut names = Vec::new();
    let mut continuation: Option<TableContinuation> = None;
    loop {
        let reply = azurite.send(azurite.service.list_tables(&q, continuation.as_ref()).unwrap());
        let page = response::tables(&reply).unwrap();
        assert!(page.tables.len() <= 1);
        names.extend(page.tables.into_iter().map(|t| t.to_string()));
        continuation = page.continuation;
        if continuation.is_none() {
            break;
        }
    }
    let mut expected: Vec<String> = tables.iter().map(|t| t.name.to_string()).collect();
    expected.sort();
    names.sort();
    assert_eq!(names, expected);
}
